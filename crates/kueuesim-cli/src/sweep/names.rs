//! The names a sweep gives to things other tools read: its `metadata.name` (the default
//! `--out` directory, the emitted Kubernetes objects, the Slurm job) and `--queue`, checked
//! as the API server checks object names (apimachinery's `IsDNS1123Label` and
//! `IsDNS1123Subdomain`), so a name can neither leave a directory nor add a line, a label
//! or a document to an emitted artifact.

/// The longest object name the emitted Job, its pods' `batch.kubernetes.io/job-name` label
/// and a label value may carry (apimachinery's `DNS1123LabelMaxLength`).
pub(crate) const LABEL_MAX: usize = 63;

/// What the emit prepends to the Sweep's name (`sweep-NAME`: the ConfigMap and the Job).
pub(crate) const PREFIX: &str = "sweep-";

/// What it appends for the results' PersistentVolumeClaim (`sweep-NAME-results`).
pub(crate) const RESULTS_SUFFIX: &str = "-results";

/// The longest Sweep name: every emitted name (`sweep-NAME-results` the longest) stays
/// within 63 characters.
pub(crate) const SWEEP_NAME_MAX: usize = LABEL_MAX - PREFIX.len() - RESULTS_SUFFIX.len();

/// Why `s` is not a DNS-1123 label of at most `max` characters (lower-case letters, digits
/// and '-', starting and ending with a letter or digit), or None when it is one.
pub(crate) fn label_error(s: &str, max: usize) -> Option<String> {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if s.len() > max {
        return Some(format!(
            "it has {} characters, over {max}",
            s.chars().count()
        ));
    }
    if let Some(c) = s.chars().find(|&c| !alnum(c) && c != '-') {
        return Some(format!("{c:?} is not a lower-case letter, digit or '-'"));
    }
    if !s.starts_with(alnum) || !s.ends_with(alnum) {
        return Some("it does not start and end with a letter or digit".into());
    }
    None
}

/// Why `s` is not a DNS-1123 subdomain of at most `max` characters (DNS-1123 labels joined
/// by '.'), or None when it is one.
pub(crate) fn subdomain_error(s: &str, max: usize) -> Option<String> {
    if s.len() > max {
        return Some(format!(
            "it has {} characters, over {max}",
            s.chars().count()
        ));
    }
    s.split('.').find_map(|part| label_error(part, max))
}

/// `name` cut to 63 characters and to a valid end (no trailing '-' or '.'), as an object
/// name or label value must be. The names the emit makes are short enough already (the
/// Sweep's name is checked at load); this keeps that true of any name it may make later.
pub(crate) fn object_name(name: &str) -> String {
    let cut: String = name.chars().take(LABEL_MAX).collect();
    cut.trim_end_matches(['-', '.']).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_lower_case_alphanumerics_and_dashes_with_alphanumeric_ends() {
        assert_eq!(label_error("ml-team-1", 63), None);
        assert_eq!(label_error("a", 63), None);
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", "a/b", "..", "a\nb", "é"] {
            assert!(label_error(bad, 63).is_some(), "{bad:?}");
        }
        assert!(label_error(&"a".repeat(50), SWEEP_NAME_MAX).is_some());
        assert_eq!(label_error(&"a".repeat(49), SWEEP_NAME_MAX), None);
        assert_eq!(
            format!("{PREFIX}{}{RESULTS_SUFFIX}", "a".repeat(SWEEP_NAME_MAX)).len(),
            63
        );
    }

    #[test]
    fn subdomains_are_labels_joined_by_dots() {
        assert_eq!(subdomain_error("team.sweeps", 63), None);
        for bad in ["", "a..b", ".a", "a.", "a b", "a\nb: c"] {
            assert!(subdomain_error(bad, 63).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn object_names_are_cut_to_63_with_a_valid_end() {
        let long = format!("{}-{}", "a".repeat(62), "b".repeat(10));
        assert_eq!(object_name(&long), "a".repeat(62));
        assert_eq!(object_name("abc"), "abc");
    }
}
