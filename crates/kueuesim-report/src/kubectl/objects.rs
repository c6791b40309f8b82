//! `kubectl get workload -o json|yaml`: Kueue Workload objects as the API server returns them.

use kueuesim_model::World;

use super::{Namespaces, condition, present};
use crate::output::SimulationResult;

/// `kubectl get workload -o json|yaml` at time `at`: a `List` of Kueue Workload objects
/// (`kueue.x-k8s.io/v1beta1`, whose fields the loader reads back) with their status —
/// conditions with their transition times and, while quota is reserved, the admission with
/// its flavors, counts and topology assignment.
pub fn workload_objects(
    world: &World,
    doc: &SimulationResult,
    ns: &Namespaces,
    at: f64,
) -> serde_json::Value {
    use serde_json::{Map, Value, json};
    let start = world.config.start_unix_ms;
    let ts = |secs: f64| kueuesim_model::time::format_rfc3339(start + (secs * 1000.0) as i64);
    let items: Vec<Value> = present(doc, at)
        .filter(|w| w.kind == "Workload" && ns.shows(&w.namespace))
        .map(|w| {
            let pod_sets: Vec<Value> = w
                .pod_sets
                .iter()
                .map(|p| {
                    let mut ps = json!({
                        "name": p.name,
                        "count": p.count,
                        "template": {"spec": {
                            "schedulerName": w.scheduler_name,
                            "containers": [{"name": "main", "resources": {"requests": p.requests}}]
                        }}
                    });
                    if let Some(m) = p.min_count {
                        ps["minCount"] = json!(m);
                    }
                    ps
                })
                .collect();
            let mut spec = Map::new();
            if let Some(q) = &w.local_queue {
                spec.insert("queueName".into(), json!(q));
            }
            spec.insert("podSets".into(), Value::Array(pod_sets));
            spec.insert("priority".into(), json!(w.priority));
            if let Some(pc) = &w.priority_class {
                spec.insert("priorityClassName".into(), json!(pc));
                spec.insert(
                    "priorityClassSource".into(),
                    json!("kueue.x-k8s.io/workloadpriorityclass"),
                );
            }
            spec.insert("active".into(), json!(w.state != "Inactive"));
            let conditions: Vec<Value> = w
                .conditions
                .iter()
                .map(|c| {
                    json!({
                        "type": c.kind,
                        "status": c.status,
                        "reason": c.reason,
                        "message": c.message,
                        "lastTransitionTime": ts(c.at),
                        "observedGeneration": 1
                    })
                })
                .collect();
            let mut status = Map::new();
            let reserved = condition(w, "QuotaReserved").is_some_and(|c| c.status == "True");
            if let (Some(cq), true) = (&w.cluster_queue, reserved) {
                let assignments: Vec<Value> = w
                    .pod_sets
                    .iter()
                    .map(|p| {
                        let mut a = json!({
                            "name": p.name,
                            "flavors": p.flavors,
                            "count": p.admitted_count.unwrap_or(p.count),
                        });
                        if let Some(t) = &p.topology_assignment {
                            a["topologyAssignment"] = json!({
                                "levels": t.levels,
                                "domains": t.domains.iter().map(|d| json!({"values": d.values, "count": d.count})).collect::<Vec<_>>()
                            });
                        }
                        a
                    })
                    .collect();
                status.insert(
                    "admission".into(),
                    json!({"clusterQueue": cq, "podSetAssignments": assignments}),
                );
            }
            status.insert("conditions".into(), Value::Array(conditions));
            json!({
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "Workload",
                "metadata": {
                    "name": w.name,
                    "namespace": w.namespace,
                    "creationTimestamp": ts(w.created_at),
                },
                "spec": spec,
                "status": status,
            })
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

/// A JSON value as kubectl's `-o json` text.
pub fn json_text(v: &serde_json::Value) -> String {
    let mut t = serde_json::to_string_pretty(v).expect("a JSON value serializes");
    t.push('\n');
    t
}

/// A JSON value as `-o yaml` text.
pub fn yaml_text(v: &serde_json::Value) -> String {
    serde_saphyr::to_string(v).expect("a JSON value serializes")
}
