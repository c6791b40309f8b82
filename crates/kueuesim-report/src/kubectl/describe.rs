//! `kubectl describe workload`: the generic describer's layout of a Kueue Workload, with its
//! conditions and Kueue's events (folded); and the generic describer itself, for the CRDs
//! described from their objects (PodGroup, Cohort, ResourceFlavor).

use kueuesim_model::World;

use super::{condition, present, tabwrite};
use crate::output::SimulationResult;

/// `kubectl describe workload NAME -n NS` at time `at`.
pub fn describe_workload(
    world: &World,
    doc: &SimulationResult,
    namespace: &str,
    name: &str,
    at: f64,
) -> Result<String, String> {
    let w = present(doc, at)
        .find(|w| w.namespace == namespace && w.name == name)
        .ok_or_else(|| format!("workloads.kueue.x-k8s.io \"{name}\" not found"))?;
    let ts = |secs: f64| super::rfc3339(world, secs);
    let mut l: Vec<String> = Vec::new();
    let kv = |l: &mut Vec<String>, indent: usize, k: &str, v: &str| {
        l.push(format!("{}{k}:\t{v}", " ".repeat(indent)));
    };
    let head = |l: &mut Vec<String>, indent: usize, k: &str| {
        l.push(format!("{}{k}:", " ".repeat(indent)));
    };
    kv(&mut l, 0, "Name", &w.name);
    kv(&mut l, 0, "Namespace", &w.namespace);
    kv(&mut l, 0, "Labels", "<none>");
    kv(&mut l, 0, "Annotations", "<none>");
    kv(&mut l, 0, "API Version", "kueue.x-k8s.io/v1beta2");
    kv(&mut l, 0, "Kind", "Workload");
    head(&mut l, 0, "Metadata");
    kv(&mut l, 2, "Creation Timestamp", &ts(w.created_at));
    head(&mut l, 0, "Spec");
    kv(&mut l, 2, "Active", "true");
    head(&mut l, 2, "Pod Sets");
    for p in &w.pod_sets {
        kv(&mut l, 4, "Count", &p.count.to_string());
        kv(&mut l, 4, "Name", &p.name);
        head(&mut l, 4, "Template");
        head(&mut l, 6, "Spec");
        head(&mut l, 8, "Containers");
        head(&mut l, 10, "Resources");
        head(&mut l, 12, "Requests");
        for (r, q) in &p.requests {
            kv(&mut l, 14, r, q);
        }
    }
    kv(&mut l, 2, "Priority", &w.priority.to_string());
    if let Some(pc) = &w.priority_class {
        kv(&mut l, 2, "Priority Class Name", pc);
    }
    if let Some(q) = &w.local_queue {
        kv(&mut l, 2, "Queue Name", q);
    }
    head(&mut l, 0, "Status");
    let reserved = condition(w, "QuotaReserved").is_some_and(|c| c.status == "True");
    if let (Some(cq), true) = (&w.cluster_queue, reserved) {
        head(&mut l, 2, "Admission");
        kv(&mut l, 4, "Cluster Queue", cq);
        head(&mut l, 4, "Pod Set Assignments");
        for p in &w.pod_sets {
            if let Some(c) = p.admitted_count {
                kv(&mut l, 6, "Count", &c.to_string());
            }
            head(&mut l, 6, "Flavors");
            for (r, f) in &p.flavors {
                kv(&mut l, 8, r, f);
            }
            kv(&mut l, 6, "Name", &p.name);
        }
    }
    head(&mut l, 2, "Conditions");
    for c in &w.conditions {
        kv(&mut l, 4, "Last Transition Time", &ts(c.at));
        kv(&mut l, 4, "Message", &c.message);
        kv(&mut l, 4, "Observed Generation", "1");
        kv(&mut l, 4, "Reason", c.reason);
        kv(&mut l, 4, "Status", c.status);
        kv(&mut l, 4, "Type", c.kind);
    }
    let events = super::events::workload_events(w, at);
    l.extend(super::events::event_lines(events, at));
    Ok(tabwrite(&l))
}

/// kubectl's generic describer (`genericDescriber`, used for every CRD without a describer
/// of its own): `Name`, `Namespace`, `Labels`, `Annotations`, then every other field of the
/// object in name order (`printUnstructuredContent`: maps as headings, lists of maps one
/// after another, scalars as `Key:\tvalue`; camelCase keys as words, `smartLabelFor`), then
/// the events.
pub(super) fn generic_describe(
    object: &serde_json::Value,
    events: Vec<super::events::RawEvent<'_>>,
    at: f64,
) -> String {
    use serde_json::Value;
    let meta = &object["metadata"];
    let mut l: Vec<String> = Vec::new();
    l.push(format!(
        "Name:\t{}",
        meta["name"].as_str().unwrap_or_default()
    ));
    l.push(format!(
        "Namespace:\t{}",
        meta["namespace"].as_str().unwrap_or_default()
    ));
    for key in ["labels", "annotations"] {
        let pairs: Vec<String> = meta[key]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default();
        let title = if key == "labels" {
            "Labels"
        } else {
            "Annotations"
        };
        super::multiline(&mut l, title, &pairs);
    }
    fn content(
        l: &mut Vec<String>,
        level: usize,
        map: &serde_json::Map<String, Value>,
        path: &str,
    ) {
        const SKIP: [&str; 5] = [
            ".metadata.managedFields",
            ".metadata.name",
            ".metadata.namespace",
            ".metadata.labels",
            ".metadata.annotations",
        ];
        let indent = "  ".repeat(level);
        for (field, value) in map {
            let here = format!("{path}.{field}");
            if SKIP.contains(&here.as_str()) {
                continue;
            }
            let label = smart_label(field);
            match value {
                Value::Object(m) => {
                    l.push(format!("{indent}{label}:"));
                    content(l, level + 1, m, &here);
                }
                Value::Array(items) => {
                    l.push(format!("{indent}{label}:"));
                    for item in items {
                        match item {
                            Value::Object(m) => content(l, level + 1, m, &here),
                            other => l.push(format!(
                                "{}{}",
                                "  ".repeat(level + 1),
                                super::jsonpath::go_sprint(other)
                            )),
                        }
                    }
                }
                other => l.push(format!(
                    "{indent}{label}:\t{}",
                    super::jsonpath::go_sprint(other)
                )),
            }
        }
    }
    if let Some(m) = object.as_object() {
        content(&mut l, 0, m, "");
    }
    l.extend(super::events::event_lines(events, at));
    tabwrite(&l)
}

/// kubectl's `smartLabelFor`: a camelCase field as Title Case words (`creationTimestamp` →
/// `Creation Timestamp`, `apiVersion` → `API Version`); a field with characters other than
/// letters and `-` as it is.
fn smart_label(field: &str) -> String {
    if field.chars().any(|c| !c.is_alphabetic() && c != '-') {
        return field.to_string();
    }
    let parts = camel_split(field);
    let mut merged: Vec<String> = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        let part = &parts[i];
        if let Some(next) = parts.get(i + 1) {
            let all_upper = part.chars().all(|c| !c.is_alphabetic() || c.is_uppercase());
            if part.chars().count() >= 2
                && all_upper
                && next.chars().next().is_some_and(char::is_uppercase)
            {
                merged.push(format!("{part}{next}"));
                i += 2;
                continue;
            }
        }
        merged.push(part.clone());
        i += 1;
    }
    merged
        .into_iter()
        .filter(|p| p != "_")
        .map(|p| {
            let upper = p.to_uppercase();
            if ["API", "URL", "UID", "GUID"].contains(&upper.as_str()) {
                upper
            } else if p.to_lowercase() == p {
                let mut c = p.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect())
                    .unwrap_or_default()
            } else {
                p
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `camelcase.Split` (fatih/camelcase): runs of lower-case, upper-case, digits and other
/// characters, the last upper-case letter of a run moved to a following lower-case run
/// (`HTTPServer` → `HTTP`, `Server`).
fn camel_split(s: &str) -> Vec<String> {
    fn class(c: char) -> u8 {
        if c.is_lowercase() {
            1
        } else if c.is_uppercase() {
            2
        } else if c.is_ascii_digit() {
            3
        } else {
            4
        }
    }
    let mut runs: Vec<Vec<char>> = Vec::new();
    let mut last = 0u8;
    for c in s.chars() {
        let k = class(c);
        if k == last {
            runs.last_mut().expect("a run").push(c);
        } else {
            runs.push(vec![c]);
        }
        last = k;
    }
    for i in 0..runs.len().saturating_sub(1) {
        if runs[i].first().is_some_and(|c| c.is_uppercase())
            && runs[i + 1].first().is_some_and(|c| c.is_lowercase())
        {
            let c = runs[i].pop().expect("non-empty");
            runs[i + 1].insert(0, c);
        }
    }
    runs.into_iter()
        .filter(|r| !r.is_empty())
        .map(|r| r.into_iter().collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_labels_as_kubectl_writes_them() {
        for (field, label) in [
            ("creationTimestamp", "Creation Timestamp"),
            ("apiVersion", "API Version"),
            ("minMember", "Min Member"),
            ("nodeLabels", "Node Labels"),
            ("lastTransitionTime", "Last Transition Time"),
            ("nvidia.com/gpu", "nvidia.com/gpu"),
            ("kind", "Kind"),
            ("podGroupUID", "Pod Group UID"),
        ] {
            assert_eq!(smart_label(field), label, "{field}");
        }
    }
}
