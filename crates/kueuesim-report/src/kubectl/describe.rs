//! `kubectl describe workload`: the generic describer's layout of a Kueue Workload, with its
//! conditions and folded events.

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
    let events = w
        .events
        .iter()
        .filter(|e| e.at <= at)
        .map(|e| super::events::RawEvent {
            at: e.at,
            kind: e.kind,
            reason: e.reason,
            source: e.source,
            message: std::borrow::Cow::Borrowed(e.message.as_str()),
        })
        .collect();
    l.extend(super::events::event_lines(events, at));
    Ok(tabwrite(&l))
}
