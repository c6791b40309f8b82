//! `kueuesim get` and `kueuesim describe`: the state at a time T printed as kubectl prints
//! the real objects (research/manifests.md §3): the CRDs' printer columns, kubectl's table
//! layout and ages, and `describe workload` with its conditions and events.

use kueuesim_model::{SchedulerKind, SimDuration, World};

use crate::output::{SimulationResult, WorkloadOut};

/// kubectl's `duration.HumanDuration` (k8s.io/apimachinery/pkg/util/duration).
fn human_duration(d: SimDuration) -> String {
    let secs = d.millis().max(0) / 1000;
    if secs < 60 * 2 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// kubectl's table: its tabwriter (minimum cell width 10, padding 3), the last column not
/// padded.
fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let n = headers.len();
    let mut widths = vec![0usize; n];
    for (i, h) in headers.iter().enumerate() {
        widths[i] = h.chars().count();
    }
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == n {
                l.push_str(c);
            } else {
                let w = (widths[i] + 3).max(10);
                l.push_str(c);
                l.extend(std::iter::repeat_n(' ', w - c.chars().count()));
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(headers.to_vec());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
    out
}

/// Which namespaces `get` shows: one, or all (`-A`, adding the NAMESPACE column).
#[derive(Clone, Debug)]
pub enum Namespaces {
    /// `-n NS` (default `default`).
    One(String),
    /// `-A`.
    All,
}

impl Namespaces {
    fn shows(&self, ns: &str) -> bool {
        match self {
            Namespaces::One(n) => n == ns,
            Namespaces::All => true,
        }
    }
}

fn condition<'a>(w: &'a WorkloadOut, kind: &str) -> Option<&'a crate::output::ConditionOut> {
    w.conditions.iter().find(|c| c.kind == kind)
}

/// Workloads that exist at `at` (seconds): arrived.
fn present(doc: &SimulationResult, at: f64) -> impl Iterator<Item = &WorkloadOut> {
    doc.workloads.iter().filter(move |w| w.created_at <= at)
}

fn age(at: f64, since: f64) -> String {
    human_duration(SimDuration::from_millis(
        ((at - since.max(0.0)) * 1000.0) as i64,
    ))
}

/// `kubectl get <kind>` at time `at` (seconds since the start).
pub fn get(
    world: &World,
    doc: &SimulationResult,
    kind: &str,
    ns: &Namespaces,
    at: f64,
    wide: bool,
) -> Result<String, String> {
    let all = matches!(ns, Namespaces::All);
    let with_ns = |mut headers: Vec<&'static str>, rows: Vec<(String, Vec<String>)>| {
        if all {
            headers.insert(0, "NAMESPACE");
        }
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|(n, mut r)| {
                if all {
                    r.insert(0, n);
                }
                r
            })
            .collect();
        (headers, rows)
    };
    let (headers, rows): (Vec<&str>, Vec<Vec<String>>) = match kind {
        "clusterqueue" | "clusterqueues" | "cq" => {
            let mut rows = Vec::new();
            for cq in &world.cluster_queues {
                let mine =
                    present(doc, at).filter(|w| w.cluster_queue.as_deref() == Some(&cq.name));
                let (mut pending, mut admitted) = (0, 0);
                for w in mine {
                    match w.state {
                        "Pending" => pending += 1,
                        "Admitted" | "Running" => admitted += 1,
                        _ => {}
                    }
                }
                let cohort = cq
                    .cohort
                    .map(|c| world.cohorts[c.index()].name.clone())
                    .unwrap_or_default();
                let mut r = vec![cq.name.clone(), cohort];
                if wide {
                    r.push(cq.queueing_strategy.as_str().to_string());
                }
                r.push(pending.to_string());
                if wide {
                    r.push(admitted.to_string());
                }
                rows.push(r);
            }
            let headers = if wide {
                vec![
                    "NAME",
                    "COHORT",
                    "STRATEGY",
                    "PENDING WORKLOADS",
                    "ADMITTED WORKLOADS",
                ]
            } else {
                vec!["NAME", "COHORT", "PENDING WORKLOADS"]
            };
            (headers, rows)
        }
        "localqueue" | "localqueues" | "lq" | "queue" | "queues" => {
            let mut rows = Vec::new();
            for lq in world.local_queues.iter().filter(|l| ns.shows(&l.namespace)) {
                let mine = present(doc, at).filter(|w| {
                    w.namespace == lq.namespace && w.local_queue.as_deref() == Some(&lq.name)
                });
                let (mut pending, mut admitted) = (0, 0);
                for w in mine {
                    match w.state {
                        "Pending" => pending += 1,
                        "Admitted" | "Running" => admitted += 1,
                        _ => {}
                    }
                }
                rows.push((
                    lq.namespace.clone(),
                    vec![
                        lq.name.clone(),
                        world.cluster_queue(lq.cluster_queue).name.clone(),
                        pending.to_string(),
                        admitted.to_string(),
                    ],
                ));
            }
            with_ns(
                vec![
                    "NAME",
                    "CLUSTERQUEUE",
                    "PENDING WORKLOADS",
                    "ADMITTED WORKLOADS",
                ],
                rows,
            )
        }
        "cohort" | "cohorts" | "co" => {
            let rows = world
                .cohorts
                .iter()
                .map(|c| vec![c.name.clone(), age(at, 0.0)])
                .collect();
            (vec!["NAME", "AGE"], rows)
        }
        "workload" | "workloads" | "kwl" | "wl" => {
            let rows = present(doc, at)
                .filter(|w| w.kind == "Workload" && ns.shows(&w.namespace))
                .map(|w| {
                    let status =
                        |k: &str| condition(w, k).map_or(String::new(), |c| c.status.to_string());
                    (
                        w.namespace.clone(),
                        vec![
                            w.name.clone(),
                            w.local_queue.clone().unwrap_or_default(),
                            w.admitted_at
                                .and(w.cluster_queue.clone())
                                .filter(|_| {
                                    condition(w, "QuotaReserved")
                                        .is_some_and(|c| c.status == "True")
                                })
                                .unwrap_or_default(),
                            status("Admitted"),
                            status("Finished"),
                            age(at, w.created_at),
                        ],
                    )
                })
                .collect();
            with_ns(
                vec![
                    "NAME",
                    "QUEUE",
                    "RESERVED IN",
                    "ADMITTED",
                    "FINISHED",
                    "AGE",
                ],
                rows,
            )
        }
        "podgroup" | "podgroups" | "pg" => {
            let rows = present(doc, at)
                .filter(|w| ns.shows(&w.namespace))
                .filter_map(|w| {
                    let wl = world
                        .workloads
                        .iter()
                        .find(|x| x.namespace == w.namespace && x.name == w.name)?;
                    if world.config.scheduler(&wl.scheduler_name) != Some(SchedulerKind::Volcano) {
                        return None;
                    }
                    let total: usize = w.pod_sets.iter().map(|p| p.count as usize).sum();
                    let placed: usize = w.pod_sets.iter().map(|p| p.nodes.len()).sum();
                    let min_member = wl.gang.min_member.map_or(total, |m| m as usize);
                    // The PodGroup phase (getPodGroupPhase): Running once minMember pods are
                    // scheduled, Completed when done; Inqueue once Kueue released the pods.
                    let phase = match w.state {
                        "Finished" => "Completed",
                        _ if placed >= min_member && placed > 0 => "Running",
                        "Admitted" | "Running" => "Inqueue",
                        _ => "Pending",
                    };
                    let running = if w.state == "Running" { placed } else { 0 };
                    let name = wl
                        .owner
                        .as_ref()
                        .map_or_else(|| w.name.clone(), |(_, n)| format!("podgroup-{n}"));
                    let mut r = vec![
                        name,
                        phase.to_string(),
                        min_member.to_string(),
                        running.to_string(),
                        age(at, w.created_at),
                    ];
                    if wide {
                        r.push("default".into());
                    }
                    Some((w.namespace.clone(), r))
                })
                .collect();
            let headers = if wide {
                vec!["NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE", "QUEUE"]
            } else {
                vec!["NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE"]
            };
            with_ns(headers, rows)
        }
        "node" | "nodes" | "no" => {
            let rows = world
                .nodes
                .iter()
                .map(|n| {
                    vec![
                        n.name.clone(),
                        if n.unschedulable {
                            "Ready,SchedulingDisabled".into()
                        } else {
                            "Ready".into()
                        },
                        "<none>".into(),
                        age(at, 0.0),
                        "<unknown>".into(),
                    ]
                })
                .collect();
            (vec!["NAME", "STATUS", "ROLES", "AGE", "VERSION"], rows)
        }
        other => {
            return Err(format!(
                "the server doesn't have a resource type \"{other}\": expected localqueue, clusterqueue, cohort, workload, podgroup or node"
            ));
        }
    };
    if rows.is_empty() {
        return Ok(match ns {
            Namespaces::One(n)
                if !matches!(
                    kind,
                    "clusterqueue"
                        | "clusterqueues"
                        | "cq"
                        | "cohort"
                        | "cohorts"
                        | "co"
                        | "node"
                        | "nodes"
                        | "no"
                ) =>
            {
                format!("No resources found in {n} namespace.\n")
            }
            _ => "No resources found\n".to_string(),
        });
    }
    Ok(table(&headers, &rows))
}

/// Go's tabwriter as kubectl describe uses it (padding 2): consecutive lines with the same
/// number of tab-separated cells form a block whose columns are aligned; the last cell of a
/// line is not padded.
fn tabwrite(lines: &[String]) -> String {
    let cells: Vec<Vec<&str>> = lines.iter().map(|l| l.split('\t').collect()).collect();
    let mut out = String::new();
    let mut i = 0;
    while i < cells.len() {
        let n = cells[i].len();
        let mut j = i;
        while j < cells.len() && cells[j].len() == n && n > 1 {
            j += 1;
        }
        if j == i {
            out.push_str(&lines[i]);
            out.push('\n');
            i += 1;
            continue;
        }
        let mut widths = vec![0usize; n];
        for row in &cells[i..j] {
            for (c, cell) in row.iter().enumerate() {
                widths[c] = widths[c].max(cell.chars().count());
            }
        }
        for row in &cells[i..j] {
            let mut l = String::new();
            for (c, cell) in row.iter().enumerate() {
                l.push_str(cell);
                if c + 1 < n {
                    l.extend(std::iter::repeat_n(
                        ' ',
                        widths[c] + 2 - cell.chars().count(),
                    ));
                }
            }
            out.push_str(l.trim_end());
            out.push('\n');
        }
        i = j;
    }
    out
}

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
    let start = world.config.start_unix_ms;
    let ts = |secs: f64| kueuesim_model::time::format_rfc3339(start + (secs * 1000.0) as i64);
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
    let events: Vec<&crate::output::EventOut> = w.events.iter().filter(|e| e.at <= at).collect();
    if events.is_empty() {
        l.push("Events:\t<none>".into());
    } else {
        l.push("Events:".into());
        l.push("  Type\tReason\tAge\tFrom\tMessage".into());
        l.push("  ----\t------\t----\t----\t-------".into());
        for e in events {
            l.push(format!(
                "  {}\t{}\t{}\t{}\t{}",
                e.kind,
                e.reason,
                age(at, e.at),
                e.source,
                e.message
            ));
        }
    }
    Ok(tabwrite(&l))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_as_kubectl_prints_them() {
        let s = |secs: i64| human_duration(SimDuration::from_secs(secs));
        assert_eq!(s(45), "45s");
        assert_eq!(s(119), "119s");
        assert_eq!(s(150), "2m30s");
        assert_eq!(s(600), "10m");
        assert_eq!(s(3 * 3600 + 120), "3h2m");
        assert_eq!(s(10 * 3600), "10h");
        assert_eq!(s(3 * 86400 + 3600), "3d1h");
        assert_eq!(s(30 * 86400), "30d");
    }

    #[test]
    fn tables_pad_to_kubectl_widths() {
        let t = table(
            &["NAME", "CLUSTERQUEUE", "PENDING WORKLOADS"],
            &[vec!["q".into(), "team-a".into(), "3".into()]],
        );
        assert_eq!(
            t,
            "NAME      CLUSTERQUEUE   PENDING WORKLOADS\nq         team-a         3\n"
        );
    }
}
