//! Which policies differ between the two sides of `compare`: each side's `summary.policies`
//! (fair sharing, Admission Fair Sharing, waitForPodsReady, each ClusterQueue's cohort,
//! queueing strategy and preemption, the feature gates off their defaults) flattened into
//! settings, and the ones whose values differ, one change to several ClusterQueues folded.

use serde_json::Value;

/// Every setting of a `summary.policies` object as (path, value): mappings by `.`, lists of
/// named items by `[name]`, other lists as `[a, b]`; `null` and missing are `-`.
fn settings(v: &Value) -> Vec<(String, String)> {
    fn walk(v: &Value, path: &mut String, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                    walk(x, path, out);
                    path.truncate(len);
                }
                // A mapping that is empty (no feature gate off its default) is a setting too,
                // so that one side's gates are told from the other's none.
                if m.is_empty() {
                    out.push((path.clone(), "-".into()));
                }
            }
            Value::Array(items)
                if items.iter().all(|i| i.get("name").is_some()) && !items.is_empty() =>
            {
                for item in items {
                    let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                    let len = path.len();
                    path.push_str(&format!("[{name}]"));
                    if let Value::Object(m) = item {
                        for (k, x) in m.iter().filter(|(k, _)| *k != "name") {
                            let l = path.len();
                            path.push('.');
                            path.push_str(k);
                            walk(x, path, out);
                            path.truncate(l);
                        }
                    }
                    path.truncate(len);
                }
            }
            Value::Array(items) => {
                let list: Vec<String> = items.iter().map(scalar).collect();
                out.push((path.clone(), format!("[{}]", list.join(", "))));
            }
            other => out.push((path.clone(), scalar(other))),
        }
    }
    let mut out = Vec::new();
    walk(v, &mut String::new(), &mut out);
    out
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The line `compare` prints about the policies of `a` and `b` (each side's
/// `summary.policies`, None when its document has none: a sweep's variant, a summary written
/// before policies were recorded).
pub(crate) fn line(a: Option<&Value>, b: Option<&Value>) -> String {
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (None, None) => return "Policies: not recorded on either side".into(),
        (None, Some(_)) => return "Policies: not recorded in A".into(),
        (Some(_), None) => return "Policies: not recorded in B".into(),
    };
    let (sa, sb) = (settings(a), settings(b));
    let value = |s: &[(String, String)], k: &str| {
        s.iter()
            .find(|(p, _)| p == k)
            .map_or("-".to_string(), |(_, v)| v.clone())
    };
    let keys = sa.iter().map(|(k, _)| k).chain(
        sb.iter()
            .map(|(k, _)| k)
            .filter(|k| !sa.iter().any(|(p, _)| p == *k)),
    );
    // Per setting that differs: (path, A, B); a ClusterQueue's setting keyed by the rest of
    // its path, so that one change made to several is said once.
    let mut changes: Vec<(String, Vec<String>, String, String)> = Vec::new();
    for k in keys {
        let (va, vb) = (value(&sa, k), value(&sb, k));
        if va == vb {
            continue;
        }
        let (path, queue) = match k
            .strip_prefix("clusterQueues[")
            .and_then(|r| r.split_once("]."))
        {
            Some((q, rest)) => (format!("clusterQueues[*].{rest}"), Some(q.to_string())),
            None => (k.clone(), None),
        };
        match changes
            .iter_mut()
            .find(|c| queue.is_some() && c.0 == path && c.2 == va && c.3 == vb)
        {
            Some(c) => c.1.extend(queue),
            None => changes.push((path, queue.into_iter().collect(), va, vb)),
        }
    }
    if changes.is_empty() {
        return "Policies: the same on both sides".into();
    }
    let queues = |s: &[(String, String)]| -> usize {
        s.iter()
            .filter_map(|(k, _)| k.strip_prefix("clusterQueues[")?.split_once(']'))
            .map(|(q, _)| q)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    let all = queues(&sa).max(queues(&sb));
    let said: Vec<String> = changes
        .into_iter()
        .map(|(path, qs, va, vb)| {
            let path = match qs.len() {
                0 => path,
                n if n == all && n > 1 => path,
                _ => path.replacen('*', &qs.join(", "), 1),
            };
            format!("{path} {va} → {vb}")
        })
        .collect();
    format!("Policies that differ (A → B): {}", said.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(fair: bool, strategy_b: &str, cohort: Option<&str>) -> Value {
        let cohort = cohort.map_or(Value::Null, |c| Value::String(c.into()));
        serde_json::json!({
            "fairSharing": {"enabled": fair, "preemptionStrategies": if fair { vec!["LessThanOrEqualToFinalShare"] } else { vec![] }},
            "clusterQueues": [
                {"name": "a", "cohort": cohort, "queueingStrategy": "BestEffortFIFO"},
                {"name": "b", "cohort": cohort, "queueingStrategy": strategy_b},
            ],
            "featureGates": {},
        })
    }

    #[test]
    fn only_the_settings_that_differ_are_named_and_a_change_to_all_queues_once() {
        let a = doc(false, "BestEffortFIFO", None);
        assert_eq!(line(Some(&a), Some(&a)), "Policies: the same on both sides");
        let b = doc(true, "StrictFIFO", Some("org"));
        assert_eq!(
            line(Some(&a), Some(&b)),
            "Policies that differ (A → B): clusterQueues[*].cohort - → org; \
             clusterQueues[b].queueingStrategy BestEffortFIFO → StrictFIFO; \
             fairSharing.enabled false → true; \
             fairSharing.preemptionStrategies [] → [LessThanOrEqualToFinalShare]"
        );
        assert_eq!(line(Some(&a), None), "Policies: not recorded in B");
    }
}
