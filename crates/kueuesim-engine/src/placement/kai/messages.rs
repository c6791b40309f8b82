//! KAI's wording of a failed allocation: the nodes' fit errors (`TasksFitErrors`), domain
//! names, and the job's message (`JobFitErrorsToMessage`).

use std::collections::BTreeMap;

use kueuesim_model::{DomainId, NodeId, ResourceId, Topology, World};

use crate::placement::{NodeCapacity, PodNeeds};

/// KAI's wording of a resource in fit errors.
fn resource_word(name: &str) -> String {
    match name {
        kueuesim_model::resources::GPU => "GPUs".into(),
        "cpu" => "CPU".into(),
        other => other.into(),
    }
}

/// `TasksFitErrors`: "no nodes with enough resources were found: <n> <reason>. \n...".
pub(super) fn fit_errors(
    world: &World,
    cap: &NodeCapacity,
    pod: &PodNeeds,
    nodes: &[NodeId],
) -> String {
    fit_errors_with(world, cap, pod, nodes, &|_| None)
}

/// `fit_errors`, where a node that passes the node-level checks may still fail on its GPU
/// devices (`device_short`: KAI's words for it, e.g. a GPU share that fits no device).
pub(super) fn fit_errors_with(
    world: &World,
    cap: &NodeCapacity,
    pod: &PodNeeds,
    nodes: &[NodeId],
    device_short: &dyn Fn(NodeId) -> Option<&'static str>,
) -> String {
    let mut hist: BTreeMap<String, usize> = BTreeMap::new();
    // Nodes short of resources are counted by which of the pod's requests they are short of
    // (a bit set over `pod.requests`), without a string per node: this runs over every node
    // on every failed attempt. The words are made once per distinct set below.
    let requests: Vec<(ResourceId, i64)> = pod.requests.iter().collect();
    let mut short_sets: BTreeMap<u64, usize> = BTreeMap::new();
    for &n in nodes {
        if crate::placement::feasible(world, cap, n, pod) {
            if let Some(reason) = device_short(n) {
                *hist.entry(reason.to_string()).or_default() += 1;
            }
            continue;
        }
        if !crate::placement::statically_feasible(world, n, pod) {
            let reason = crate::placement::node_rejections(world, cap, n, pod)
                .into_iter()
                .next()
                .unwrap_or_default();
            *hist.entry(reason).or_default() += 1;
        } else {
            let set = requests
                .iter()
                .enumerate()
                .filter(|&(_, &(r, a))| a > cap.free(n, r.index()))
                .fold(0u64, |set, (i, _)| set | 1 << i.min(63));
            *short_sets.entry(set).or_default() += 1;
        }
    }
    for (set, count) in short_sets {
        let reason = if set == 0 {
            "Too many pods".to_string()
        } else {
            let short: Vec<String> = requests
                .iter()
                .enumerate()
                .filter(|&(i, _)| set & (1 << i.min(63)) != 0)
                .map(|(_, &(r, _))| resource_word(world.resources.name(r)))
                .collect();
            format!("node(s) didn't have enough resources: {}", short.join(", "))
        };
        *hist.entry(reason).or_default() += count;
    }
    let parts: Vec<String> = hist.iter().map(|(r, c)| format!("{c} {r}")).collect();
    format!(
        "no nodes with enough resources were found: {}.",
        parts.join(". \n")
    )
}

pub(super) fn display_name(t: &Topology, d: DomainId) -> String {
    if d == DomainId::ROOT {
        "root".into()
    } else {
        t.domain(d).value.clone()
    }
}

pub(super) fn level_label(t: &Topology, depth: u32) -> String {
    match &t.source {
        kueuesim_model::topology::TopologySource::Levels { labels } => {
            labels[depth as usize - 1].clone()
        }
        kueuesim_model::topology::TopologySource::HyperNodes { .. } => String::new(),
    }
}

/// `JobFitErrorsToMessage`: the single error, or "Unable to schedule podgroup: " with the
/// sorted messages joined by ". \n", ending with ".".
pub(super) fn job_message(mut errors: Vec<String>) -> String {
    if errors.len() == 1 {
        return format!("{}.", errors.remove(0));
    }
    errors.sort();
    let mut counted: Vec<String> = Vec::new();
    let mut i = 0;
    while i < errors.len() {
        let j = errors[i..]
            .iter()
            .position(|e| *e != errors[i])
            .map_or(errors.len(), |k| i + k);
        counted.push(if j - i > 1 {
            format!("{} {}", j - i, errors[i])
        } else {
            errors[i].clone()
        });
        i = j;
    }
    format!("Unable to schedule podgroup: {}.", counted.join(". \n"))
}
