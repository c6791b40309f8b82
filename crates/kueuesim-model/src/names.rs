//! Names as the Kubernetes API server checks them: the syntax rules of apimachinery's
//! `k8s.io/apimachinery/pkg/util/validation` (`IsDNS1123Label`, `IsDNS1123Subdomain`,
//! `IsQualifiedName`, `IsValidLabelValue`) and the annotation size limit of
//! `ValidateAnnotationsSize`, as pure functions the loader calls on every name it reads.
//!
//! Each check returns what is wrong and what was expected, in words the loader puts after
//! the field's name. Since a name the API server refuses is refused here too, no name that
//! reaches an output (a CSV cell, a summary line, an emitted manifest) starts with `=`, `+`,
//! `-` or `@`, holds a control character, a space or a quote, or is longer than 253 bytes.

/// The longest DNS-1123 label (RFC 1123): apimachinery's `DNS1123LabelMaxLength`.
pub const DNS1123_LABEL_MAX: usize = 63;
/// The longest DNS-1123 subdomain: apimachinery's `DNS1123SubdomainMaxLength`.
pub const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// The longest label value: apimachinery's `LabelValueMaxLength`.
pub const LABEL_VALUE_MAX: usize = 63;
/// The longest name part of a qualified name (a label key after its optional prefix).
pub const QUALIFIED_NAME_MAX: usize = 63;
/// The most bytes of all of an object's annotations, keys and values together:
/// apimachinery's `TotalAnnotationSizeLimitB` (256 KiB).
pub const ANNOTATIONS_SIZE_MAX: usize = 256 * 1024;

/// Which rule a name follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// `IsDNS1123Label`: lower-case letters, digits and `-`, starting and ending with a letter
    /// or digit, at most 63 characters (Namespace names).
    Dns1123Label,
    /// `IsDNS1123Subdomain`: DNS-1123 labels joined by `.`, at most 253 characters (the
    /// names of most kinds, and Kueue's references to its objects).
    Dns1123Subdomain,
}

impl NameRule {
    /// Checks `value` against the rule.
    pub fn check(self, value: &str) -> Result<(), String> {
        match self {
            NameRule::Dns1123Label => dns1123_label(value),
            NameRule::Dns1123Subdomain => dns1123_subdomain(value),
        }
    }
}

/// What a DNS-1123 label is, for messages.
const LABEL_EXPECTED: &str = "expected a DNS-1123 label: lower-case letters, digits and '-', \
     starting and ending with a letter or digit, at most 63 characters, e.g. \"my-name\" \
     (Kubernetes' IsDNS1123Label)";
/// What a DNS-1123 subdomain is, for messages.
const SUBDOMAIN_EXPECTED: &str = "expected a DNS-1123 subdomain: lower-case letters, digits, \
     '-' and '.', starting and ending with a letter or digit, at most 253 characters, e.g. \
     \"example.com\" (Kubernetes' IsDNS1123Subdomain)";
/// What a qualified name is, for messages.
const QUALIFIED_EXPECTED: &str = "expected a qualified name: an optional DNS-1123 subdomain \
     prefix and '/', then at most 63 letters, digits, '-', '_' and '.', starting and ending \
     with a letter or digit, e.g. \"example.com/my-name\" (Kubernetes' IsQualifiedName)";
/// What a label value is, for messages.
const LABEL_VALUE_EXPECTED: &str = "expected a label value: empty, or at most 63 letters, \
     digits, '-', '_' and '.', starting and ending with a letter or digit (Kubernetes' \
     IsValidLabelValue)";

/// `value` for a message: quoted with Rust's escapes (a control character, a line or
/// paragraph separator, a quote show as escapes, never raw), and cut after 64 characters
/// with the full length stated, so that a hostile name neither reaches the terminal as is
/// nor fills it.
pub fn shown(value: &str) -> String {
    const MAX: usize = 64;
    let n = value.chars().count();
    if n <= MAX {
        return format!("{value:?}");
    }
    let head: String = value.chars().take(MAX).collect();
    format!("{head:?}… ({n} characters)")
}

/// `value` for a message where it stands unquoted (a key, a kind): every character that
/// could act on a terminal or reorder the line (a control character, a line or paragraph
/// separator, a bidirectional override or isolate) written as a `\u{…}` escape, and cut
/// after 128 characters with the full length stated. Other text is left as it is.
pub fn escaped(value: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 128;
    let unsafe_char = |c: char| {
        c.is_control()
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    let n = value.chars().count();
    if n <= MAX && !value.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(value);
    }
    let mut out = String::new();
    for c in value.chars().take(MAX) {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    if n > MAX {
        out.push_str(&format!("… ({n} characters)"));
    }
    std::borrow::Cow::Owned(out)
}

/// Why `value` is not a DNS-1123 label, else Ok.
pub fn dns1123_label(value: &str) -> Result<(), String> {
    label_problem(value, DNS1123_LABEL_MAX)
        .map_or(Ok(()), |p| Err(format!("{p}: {LABEL_EXPECTED}")))
}

/// Why `value` is not a DNS-1123 subdomain, else Ok.
pub fn dns1123_subdomain(value: &str) -> Result<(), String> {
    subdomain_problem(value).map_or(Ok(()), |p| Err(format!("{p}: {SUBDOMAIN_EXPECTED}")))
}

/// Why `value` is not a qualified name (a label key, an annotation key, a resource name),
/// else Ok.
pub fn qualified_name(value: &str) -> Result<(), String> {
    let problem = match value.split('/').collect::<Vec<_>>()[..] {
        [name] => name_part_problem(name),
        [prefix, name] => match subdomain_problem(prefix) {
            Some(p) => Some(format!("its prefix {}: {p}", shown(prefix))),
            None => name_part_problem(name),
        },
        _ => Some("it has more than one '/'".to_string()),
    };
    problem.map_or(Ok(()), |p| Err(format!("{p}: {QUALIFIED_EXPECTED}")))
}

/// Why `value` is not a label value, else Ok.
pub fn label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    name_part_problem(value).map_or(Ok(()), |p| Err(format!("{p}: {LABEL_VALUE_EXPECTED}")))
}

/// Whether `value` is a DNS-1123 subdomain.
pub fn is_dns1123_subdomain(value: &str) -> bool {
    subdomain_problem(value).is_none()
}

/// Whether `value` is a DNS-1123 label.
pub fn is_dns1123_label(value: &str) -> bool {
    label_problem(value, DNS1123_LABEL_MAX).is_none()
}

/// Why annotations of `total` bytes (keys and values) are too many, else Ok
/// (`ValidateAnnotationsSize`).
pub fn annotations_size(total: usize) -> Result<(), String> {
    if total <= ANNOTATIONS_SIZE_MAX {
        return Ok(());
    }
    Err(format!(
        "the annotations have {total} bytes: expected at most {ANNOTATIONS_SIZE_MAX} (256 KiB) \
         of keys and values together (Kubernetes' ValidateAnnotationsSize)"
    ))
}

/// The bytes of the hash suffix `from_trace` adds: `-` and 8 hex digits.
pub const TRACE_HASH_SUFFIX: usize = 9;

/// The name a value read from a trace stands for (a cell of a column that names a
/// workload, its owner, a namespace, a LocalQueue, a node): the value itself when it already
/// follows `rule` in at most `max` bytes; otherwise it is lower-cased, every character other
/// than `a`-`z`, `0`-`9` and `-` becomes `-`, `-` is trimmed from both ends, the rest cut to
/// `max - 9` bytes (and trimmed again), and `-` and 8 hex digits of a hash of the original
/// value are appended (32 bits of its 64-bit FNV-1a, folded), so that two values the mapping
/// would otherwise merge (`user_a` and `user-a`) keep different names, and the same value
/// always has the same name. A value with nothing left is the hash alone. The result follows
/// `rule` in at most `max` bytes for any `max` from 9 up to the rule's own limit.
pub fn from_trace(raw: &str, rule: NameRule, max: usize) -> std::borrow::Cow<'_, str> {
    if raw.len() <= max && rule.check(raw).is_ok() {
        return std::borrow::Cow::Borrowed(raw);
    }
    let h = raw.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let hash = format!("{:08x}", (h ^ (h >> 32)) as u32);
    let cleaned: String = raw
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9') => c,
            _ => '-',
        })
        .collect();
    let room = max.saturating_sub(TRACE_HASH_SUFFIX);
    let mut stem = cleaned.trim_matches('-');
    // ASCII only by now, so any byte index is a character boundary.
    stem = stem[..stem.len().min(room)].trim_end_matches('-');
    if stem.is_empty() {
        return std::borrow::Cow::Owned(hash);
    }
    std::borrow::Cow::Owned(format!("{stem}-{hash}"))
}

/// The first character of `value` outside `allowed`, with its 1-based position.
fn first_bad(value: &str, allowed: impl Fn(char) -> bool) -> Option<String> {
    value
        .chars()
        .enumerate()
        .find(|&(_, c)| !allowed(c))
        .map(|(i, c)| format!("character {} is {c:?}", i + 1))
}

/// A DNS-1123 label's problem: empty, too long, a character other than `[a-z0-9-]`, or a
/// `-` at either end (`[a-z0-9]([-a-z0-9]*[a-z0-9])?`).
fn label_problem(value: &str, max: usize) -> Option<String> {
    if value.is_empty() {
        return Some("it is empty".into());
    }
    if value.len() > max {
        return Some(format!("it has {} bytes", value.len()));
    }
    if let Some(bad) = first_bad(value, |c| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
    }) {
        return Some(bad);
    }
    if value.starts_with('-') || value.ends_with('-') {
        return Some("it starts or ends with '-'".into());
    }
    None
}

/// A DNS-1123 subdomain's problem: too long, or a `.`-separated part that is not a label.
fn subdomain_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return Some("it is empty".into());
    }
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        return Some(format!("it has {} bytes", value.len()));
    }
    if let Some(bad) = first_bad(value, |c| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.'
    }) {
        return Some(bad);
    }
    if value
        .split('.')
        .any(|part| label_problem(part, usize::MAX).is_some())
    {
        return Some("a '.'-separated part is empty or starts or ends with '-'".into());
    }
    None
}

/// The problem of a qualified name's name part, or of a label value:
/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63 characters.
fn name_part_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return Some("its name part is empty".into());
    }
    if value.len() > QUALIFIED_NAME_MAX {
        return Some(format!("it has {} bytes", value.len()));
    }
    if let Some(bad) = first_bad(value, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
    }) {
        return Some(bad);
    }
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !alnum(value.chars().next()) || !alnum(value.chars().last()) {
        return Some("it does not start and end with a letter or digit".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_subdomains_as_apimachinery() {
        for ok in ["a", "0", "my-name", "123-abc", &"a".repeat(63)] {
            assert_eq!(dns1123_label(ok), Ok(()), "{ok}");
            assert_eq!(dns1123_subdomain(ok), Ok(()), "{ok}");
        }
        for ok in [
            "example.com",
            "a.b-c.d",
            &format!("{}.{}", "a".repeat(63), "b".repeat(189)),
        ] {
            assert_eq!(dns1123_subdomain(ok), Ok(()), "{ok}");
            assert!(dns1123_label(ok).is_err(), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "A",
            "a_b",
            "a b",
            "=x",
            "+x",
            "@x",
            "a\u{1b}[31m",
            "é",
            &"a".repeat(64),
        ] {
            assert!(dns1123_label(bad).is_err(), "{bad:?}");
        }
        for bad in [
            "",
            ".a",
            "a.",
            "a..b",
            "a.-b",
            "a-.b",
            "=cmd",
            "-x",
            "<b>",
            "a\nb",
            "a\u{2028}",
            &"a".repeat(254),
        ] {
            assert!(dns1123_subdomain(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn qualified_names_and_label_values_as_apimachinery() {
        for ok in [
            "a",
            "MyName",
            "my.name",
            "123-abc",
            "a_b",
            "example.com/MyName",
            "nvidia.com/gpu",
            "kueue.x-k8s.io/queue-name",
            &"a".repeat(63),
        ] {
            assert_eq!(qualified_name(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "/a",
            "a/",
            "a/b/c",
            "-a",
            "a-",
            "_a",
            "Ex.com/a",
            "a b",
            "=a",
            "a/=b",
            &"a".repeat(64),
            &format!("{}/a", "a".repeat(254)),
        ] {
            assert!(qualified_name(bad).is_err(), "{bad:?}");
        }
        for ok in [
            "",
            "v",
            "MyValue",
            "my_value",
            "12345",
            "1.2.3",
            &"a".repeat(63),
        ] {
            assert_eq!(label_value(ok), Ok(()), "{ok}");
        }
        for bad in ["-v", "v-", "a/b", "a b", "=1+1", "\u{7}", &"a".repeat(64)] {
            assert!(label_value(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn trace_values_map_to_names_without_merging() {
        use NameRule::*;
        // Valid names stay as they are.
        assert_eq!(
            from_trace("openb-pod-0001", Dns1123Subdomain, 253),
            "openb-pod-0001"
        );
        assert_eq!(from_trace("11cb48", Dns1123Label, 63), "11cb48");
        assert_eq!(from_trace("a.b", Dns1123Subdomain, 253), "a.b");
        // Others are cleaned and suffixed with a hash of the original.
        let a = from_trace("instance_0", Dns1123Subdomain, 253);
        let b = from_trace("instance-0-x", Dns1123Subdomain, 253);
        assert!(
            a.starts_with("instance-0-") && a.len() == "instance-0".len() + 9,
            "{a}"
        );
        assert_ne!(
            from_trace("user_a", Dns1123Label, 63),
            from_trace("user.a", Dns1123Label, 63)
        );
        assert_ne!(a, b);
        assert_eq!(a, from_trace("instance_0", Dns1123Subdomain, 253), "stable");
        for raw in [
            "=HYPERLINK(\"x\")",
            "-rm -rf",
            "@SUM(1)",
            "+1",
            "a\u{1b}[31mred",
            "\u{2028}",
            "__",
            "<script>",
            "A.B",
            &"x".repeat(2_000_000),
            "é",
            "a\tb",
            "",
        ] {
            for (rule, max) in [
                (Dns1123Subdomain, 253),
                (Dns1123Label, 63),
                (Dns1123Subdomain, 20),
            ] {
                let n = from_trace(raw, rule, max);
                assert!(rule.check(&n).is_ok() && n.len() <= max, "{raw:?} -> {n:?}");
            }
        }
    }

    #[test]
    fn messages_say_what_and_show_the_value_escaped_and_short() {
        let e = dns1123_subdomain("ab\u{1b}[2J").unwrap_err();
        assert!(
            e.starts_with("character 3 is '\\u{1b}': expected a DNS-1123 subdomain"),
            "{e}"
        );
        assert_eq!(shown("a\u{2028}\"\n"), "\"a\\u{2028}\\\"\\n\"");
        let long = "x".repeat(2_000_000);
        let s = shown(&long);
        assert!(
            s.len() < 100 && s.ends_with("… (2000000 characters)"),
            "{s}"
        );
        assert_eq!(escaped("Job (batch/v1)"), "Job (batch/v1)");
        assert_eq!(
            escaped("a\u{1b}[2Jb\u{2028}\u{202e}"),
            "a\\u{1b}[2Jb\\u{2028}\\u{202e}"
        );
        assert!(escaped(&"k".repeat(1000)).ends_with("… (1000 characters)"));
        assert!(annotations_size(ANNOTATIONS_SIZE_MAX).is_ok());
        assert!(annotations_size(ANNOTATIONS_SIZE_MAX + 1).is_err());
    }
}
