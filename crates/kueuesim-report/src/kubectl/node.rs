//! `kubectl describe node`: allocatable resources, the non-terminated pods on the node and
//! kubectl's "Allocated resources" table; and the requests per node that `get node` shows.

use kueuesim_model::{Node, World, format_amount};

use super::pods::{Pod, PodStatus, pods_at};
use super::{age, rfc3339, tabwrite};
use crate::output::SimulationResult;

/// Whether a pod counts on its node as kubectl's describe node counts it: bound and not in a
/// terminal phase (`Non-terminated Pods` excludes Succeeded and Failed; a Terminating pod
/// still holds its requests).
fn holds_node(p: &Pod<'_>) -> bool {
    p.node.is_some() && p.status != PodStatus::Completed
}

/// The requests of the non-terminated pods bound to `node`, dense by resource id.
pub(super) fn requested(world: &World, pods: &[Pod<'_>], node: &str) -> Vec<i64> {
    let mut sum = vec![0i64; world.resources.len()];
    for p in pods
        .iter()
        .filter(|p| holds_node(p) && p.node == Some(node))
    {
        if let Some(req) = p.requests {
            for (r, a) in req.iter() {
                sum[r.index()] += a;
            }
        }
    }
    sum
}

/// kubectl's `<quantity> (<percent>%)`: the integer percentage of allocatable, truncated
/// (`int64(float64(req) / float64(allocatable) * 100)`), 0 without allocatable.
fn with_percent(resource: &str, amount: i64, allocatable: i64) -> String {
    let pct = if allocatable > 0 {
        (amount as f64 / allocatable as f64 * 100.0) as i64
    } else {
        0
    };
    format!("{} ({pct}%)", format_amount(resource, amount))
}

/// Whether kubectl prints a percentage for the resource (cpu, memory, ephemeral storage;
/// extended resources such as GPUs are printed as plain quantities).
fn standard(resource: &str) -> bool {
    matches!(resource, "cpu" | "memory" | "ephemeral-storage")
}

fn find<'a>(world: &'a World, name: &str) -> Result<&'a Node, String> {
    world
        .nodes
        .iter()
        .find(|n| n.name == name)
        .ok_or_else(|| format!("nodes \"{name}\" not found"))
}

/// The key of the taint the node lifecycle controller gives a node that is not ready, if the
/// node has it: `node.kubernetes.io/not-ready` (`Ready` False) or
/// `node.kubernetes.io/unreachable` (`Ready` Unknown).
fn ready_taint(node: &kueuesim_model::Node) -> Option<&str> {
    node.taints.iter().map(|t| t.key.as_str()).find(|k| {
        matches!(
            *k,
            "node.kubernetes.io/not-ready" | "node.kubernetes.io/unreachable"
        )
    })
}

/// The node's `Ready` condition as the kubelet or the node lifecycle controller writes it,
/// from that taint.
pub(super) fn ready_condition(node: &kueuesim_model::Node) -> serde_json::Value {
    let (status, reason, message) = match ready_taint(node) {
        None => ("True", "KubeletReady", "kubelet is posting ready status"),
        Some("node.kubernetes.io/not-ready") => ("False", "KubeletNotReady", "node is not ready"),
        Some(_) => (
            "Unknown",
            "NodeStatusUnknown",
            "Kubelet stopped posting node status.",
        ),
    };
    serde_json::json!({"type": "Ready", "status": status, "reason": reason, "message": message})
}

/// `kubectl get node`'s STATUS: `Ready`, or `NotReady` for a node with the taint the node
/// lifecycle controller gives a node whose `Ready` condition is `False` or `Unknown`
/// (`node.kubernetes.io/not-ready`, `node.kubernetes.io/unreachable`), with
/// `,SchedulingDisabled` for a cordoned one.
pub(super) fn status(node: &kueuesim_model::Node) -> String {
    let mut s = if ready_taint(node).is_some() {
        "NotReady"
    } else {
        "Ready"
    }
    .to_string();
    if node.unschedulable {
        s.push_str(",SchedulingDisabled");
    }
    s
}

/// `kubectl describe node NAME` at time `at`. kueuesim reads requests only: a pod's limits
/// for cpu and memory are unknown (`<unknown>`), an extended resource's limits equal its
/// requests (Kubernetes requires it).
pub(super) fn describe_node(
    world: &World,
    doc: &SimulationResult,
    name: &str,
    at: f64,
) -> Result<String, String> {
    let node = find(world, name)?;
    let pods = pods_at(world, doc, at);
    let mut l: Vec<String> = Vec::new();
    l.push(format!("Name:\t{}", node.name));
    l.push("Roles:\t<none>".into());
    let labels: Vec<String> = node
        .labels
        .iter()
        .filter(|(k, _)| !k.starts_with(kueuesim_model::labels::NODE_AFFINITY_LABEL_PREFIX))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    match labels.split_first() {
        None => l.push("Labels:\t<none>".into()),
        Some((first, rest)) => {
            l.push(format!("Labels:\t{first}"));
            for x in rest {
                l.push(format!("\t{x}"));
            }
        }
    }
    l.push("Annotations:\t<none>".into());
    l.push(format!("CreationTimestamp:\t{}", rfc3339(world, 0.0)));
    let taints: Vec<String> = node.taints.iter().map(ToString::to_string).collect();
    match taints.split_first() {
        None => l.push("Taints:\t<none>".into()),
        Some((first, rest)) => {
            l.push(format!("Taints:\t{first}"));
            for x in rest {
                l.push(format!("\t{x}"));
            }
        }
    }
    l.push(format!("Unschedulable:\t{}", node.unschedulable));
    // Every resource the node offers or its pods request, in name order (cpu and memory
    // always, as kubectl prints them).
    let req = requested(world, &pods, name);
    let mut resources: Vec<(String, usize)> = (0..world.resources.len())
        .filter_map(|i| {
            let r = kueuesim_model::ResourceId::from_index(i);
            let n = world.resources.name(r);
            let alloc = node.allocatable.get(i).copied().unwrap_or(0);
            (alloc > 0 || req[i] > 0 || n == "cpu" || n == "memory").then(|| (n.to_string(), i))
        })
        .collect();
    resources.sort();
    l.push("Allocatable:".into());
    for (n, i) in &resources {
        let alloc = node.allocatable.get(*i).copied().unwrap_or(0);
        if alloc > 0 {
            l.push(format!("  {n}:\t{}", format_amount(n, alloc)));
        }
    }
    let on_node: Vec<&Pod<'_>> = pods
        .iter()
        .filter(|p| holds_node(p) && p.node == Some(name))
        .collect();
    let alloc_of = |n: &str| {
        world
            .resources
            .lookup(n)
            .and_then(|r| node.allocatable.get(r.index()).copied())
            .unwrap_or(0)
    };
    let pod_req = |p: &Pod<'_>, n: &str| {
        world
            .resources
            .lookup(n)
            .zip(p.requests)
            .map_or(0, |(r, list)| list.get(r))
    };
    l.push(format!(
        "Non-terminated Pods:\t({} in total)",
        on_node.len()
    ));
    if !on_node.is_empty() {
        l.push(
            "  Namespace\tName\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge"
                .into(),
        );
        l.push(
            "  ---------\t----\t------------\t----------\t---------------\t-------------\t---"
                .into(),
        );
        for p in &on_node {
            l.push(format!(
                "  {}\t{}\t{}\t<unknown>\t{}\t<unknown>\t{}",
                p.workload.namespace,
                p.name,
                with_percent("cpu", pod_req(p, "cpu"), alloc_of("cpu")),
                with_percent("memory", pod_req(p, "memory"), alloc_of("memory")),
                age(at, p.created)
            ));
        }
    }
    l.push("Allocated resources:".into());
    l.push("  (Total limits may be over 100 percent, i.e., overcommitted.)".into());
    l.push("  Resource\tRequests\tLimits".into());
    l.push("  --------\t--------\t------".into());
    for (n, i) in &resources {
        let alloc = node.allocatable.get(*i).copied().unwrap_or(0);
        if n == "pods" {
            continue;
        }
        if standard(n) {
            l.push(format!(
                "  {n}\t{}\t<unknown>",
                with_percent(n, req[*i], alloc)
            ));
        } else {
            let q = format_amount(n, req[*i]);
            l.push(format!("  {n}\t{q}\t{q}"));
        }
    }
    l.push("Events:\t<none>".into());
    Ok(tabwrite(&l))
}
