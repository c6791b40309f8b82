//! `-l`/`--selector`: kubectl's label selector syntax (apimachinery's `labels.Parse`) read
//! into the model's `LabelSelector`, whose matching is Kubernetes' own.

use kueuesim_model::labels::{LabelSelector, Labels, SelectorOp, SelectorRequirement};

/// Parses a selector such as `app=web,tier!=db,env in (a,b),!canary,gpu`: requirements
/// separated by commas, each `key`, `!key`, `key=value`, `key==value`, `key!=value`,
/// `key in (v,…)` or `key notin (v,…)`. The empty string selects everything.
pub fn parse_selector(text: &str) -> Result<LabelSelector, String> {
    let mut expressions = Vec::new();
    for req in split_requirements(text)? {
        let req = req.trim();
        if req.is_empty() {
            if text.trim().is_empty() {
                continue;
            }
            return Err(format!(
                "-l {text:?}: an empty requirement: expected key, !key, key=value, key!=value, key in (v1,v2) or key notin (v1,v2) separated by commas"
            ));
        }
        expressions.push(requirement(text, req)?);
    }
    Ok(LabelSelector {
        match_labels: Labels::default(),
        match_expressions: expressions,
    })
}

/// Splits at commas outside parentheses.
fn split_requirements(text: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(format!("-l {text:?}: unbalanced parentheses"));
        }
    }
    if depth != 0 {
        return Err(format!("-l {text:?}: unbalanced parentheses"));
    }
    out.push(&text[start..]);
    Ok(out)
}

fn requirement(text: &str, req: &str) -> Result<SelectorRequirement, String> {
    let make = |key: &str, op, values: Vec<String>| -> Result<SelectorRequirement, String> {
        check_key(text, key)?;
        for v in &values {
            check_value(text, key, v)?;
        }
        Ok(SelectorRequirement {
            key: key.to_string(),
            op,
            values,
        })
    };
    if let Some(key) = req.strip_prefix('!') {
        return make(key.trim(), SelectorOp::DoesNotExist, Vec::new());
    }
    for (op, sel) in [
        ("!=", SelectorOp::NotIn),
        ("==", SelectorOp::In),
        ("=", SelectorOp::In),
    ] {
        if let Some((k, v)) = req.split_once(op) {
            return make(k.trim(), sel, vec![v.trim().to_string()]);
        }
    }
    if req.contains(['<', '>']) {
        return Err(format!(
            "-l {text:?}: {req:?}: the numeric comparisons < and > are not supported: expected =, ==, !=, in, notin, key or !key"
        ));
    }
    let words: Vec<&str> = req.splitn(2, [' ', '\t']).collect();
    if let [key, rest] = words.as_slice() {
        let rest = rest.trim_start();
        for (word, sel) in [("notin", SelectorOp::NotIn), ("in", SelectorOp::In)] {
            if let Some(set) = rest.strip_prefix(word) {
                let set = set.trim();
                let Some(inner) = set.strip_prefix('(').and_then(|s| s.strip_suffix(')')) else {
                    return Err(format!(
                        "-l {text:?}: {req:?}: expected the values in parentheses: {key} {word} (v1,v2)"
                    ));
                };
                let values: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).collect();
                return make(key, sel, values);
            }
        }
        return Err(format!(
            "-l {text:?}: {req:?}: expected key, !key, key=value, key!=value, key in (v1,v2) or key notin (v1,v2)"
        ));
    }
    make(req, SelectorOp::Exists, Vec::new())
}

/// A label key as `validation.IsQualifiedName` accepts it: an optional DNS subdomain prefix and
/// `/`, then a name of at most 63 characters, alphanumeric at both ends, `-`, `_`, `.` inside.
fn check_key(text: &str, key: &str) -> Result<(), String> {
    let name = key.rsplit_once('/').map_or(
        key,
        |(prefix, name)| {
            if prefix.is_empty() { "" } else { name }
        },
    );
    let ok_prefix = key.rsplit_once('/').is_none_or(|(p, _)| {
        !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|l| {
                !l.is_empty()
                    && l.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && !l.starts_with('-')
                    && !l.ends_with('-')
            })
    });
    if ok_prefix && !name.is_empty() && name_ok(name) {
        Ok(())
    } else {
        Err(format!(
            "-l {text:?}: {key:?} is not a valid label key: expected an optional DNS subdomain prefix and '/', then a name of at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
        ))
    }
}

fn name_ok(s: &str) -> bool {
    s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && s.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric())
}

/// A label value as `validation.IsValidLabelValue` accepts it (empty is allowed).
fn check_value(text: &str, key: &str, v: &str) -> Result<(), String> {
    if v.is_empty() || name_ok(v) {
        Ok(())
    } else {
        Err(format!(
            "-l {text:?}: {v:?} (for {key}) is not a valid label value: expected at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
        ))
    }
}

/// Labels from a kubectl-like object's `metadata.labels`.
pub(super) fn object_labels(object: &serde_json::Value) -> Labels {
    Labels::new(
        object["metadata"]["labels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        Labels::new(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn kubectl_selector_syntax_matches_as_kubernetes_does() {
        let l = labels(&[
            ("app", "web"),
            ("tier", "front"),
            ("kubernetes.io/os", "linux"),
        ]);
        for (sel, want) in [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app!=db", true),
            ("missing!=x", true),
            ("app in (db, web)", true),
            ("app notin (db,web)", false),
            ("tier,app=web", true),
            ("!canary", true),
            ("!app", false),
            ("canary", false),
            ("kubernetes.io/os=linux,tier in (front)", true),
            ("", true),
        ] {
            let s = parse_selector(sel).expect(sel);
            assert_eq!(s.matches(&l), want, "{sel}");
        }
    }

    #[test]
    fn malformed_selectors_say_what_was_expected() {
        for (sel, says) in [
            ("app in web", "parentheses"),
            ("gpu>2", "not supported"),
            ("a=b,,c", "empty requirement"),
            ("-bad=x", "not a valid label key"),
            ("app=we b", "not a valid label value"),
            ("app in (a,b", "unbalanced"),
            ("app is web", "expected key"),
        ] {
            let e = parse_selector(sel).expect_err(sel);
            assert!(e.contains(says), "{sel}: {e}");
        }
    }
}
