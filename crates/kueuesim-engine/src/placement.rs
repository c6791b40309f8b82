//! Where pods go: node capacity bookkeeping and the first-fit placement of the foundation.
//!
//! The filters mirror kube-scheduler's default plugins in their order (NodeUnschedulable,
//! TaintToleration, NodeAffinity, NodeResourcesFit) so a failure is explained with
//! kube-scheduler's own `FitError` wording. Gang schedulers (KAI, Volcano) place all pods of a
//! workload or none; kube-scheduler places pods one by one.

use std::collections::BTreeMap;

use kueuesim_model::labels::tolerated;
use kueuesim_model::{Labels, NodeId, ResourceList, Toleration, World};

/// The default `pods` capacity of a node that does not declare one (kubelet's maxPods).
pub const DEFAULT_MAX_PODS: i64 = 110;

/// Free capacity of every node, dense by (node, resource), plus free pod slots.
#[derive(Clone, Debug)]
pub struct NodeCapacity {
    n_resources: usize,
    free: Vec<i64>,
    free_pods: Vec<i64>,
}

impl NodeCapacity {
    /// All nodes empty.
    pub fn new(world: &World) -> Self {
        let n_resources = world.resources.len();
        let pods = world.resources.lookup("pods");
        let mut free = Vec::with_capacity(world.nodes.len() * n_resources);
        let mut free_pods = Vec::with_capacity(world.nodes.len());
        for node in &world.nodes {
            free.extend((0..n_resources).map(|r| node.allocatable.get(r).copied().unwrap_or(0)));
            let max_pods = pods
                .and_then(|p| node.allocatable.get(p.index()).copied())
                .filter(|&p| p > 0)
                .unwrap_or(DEFAULT_MAX_PODS);
            free_pods.push(max_pods);
        }
        NodeCapacity {
            n_resources,
            free,
            free_pods,
        }
    }

    /// Free amount of resource index `r` on `node`.
    pub fn free(&self, node: NodeId, r: usize) -> i64 {
        self.free[node.index() * self.n_resources + r]
    }

    /// Binds (sign 1) or releases (sign -1) one pod with `requests` on `node`.
    pub fn apply(&mut self, node: NodeId, requests: &ResourceList, sign: i64) {
        let base = node.index() * self.n_resources;
        for (r, a) in requests.iter() {
            self.free[base + r.index()] -= sign * a;
        }
        self.free_pods[node.index()] -= sign;
    }

    fn fits(&self, node: NodeId, requests: &ResourceList) -> bool {
        self.free_pods[node.index()] >= 1
            && requests
                .iter()
                .all(|(r, a)| a <= self.free(node, r.index()))
    }
}

/// What a pod of one pod set needs from a node: its requests, the nodeSelector (its own plus
/// its flavors' nodeLabels, which Kueue injects), and its tolerations (plus the flavors').
#[derive(Clone, Debug)]
pub struct PodNeeds {
    /// Requests of one pod.
    pub requests: ResourceList,
    /// Required node labels.
    pub node_selector: Labels,
    /// Tolerations.
    pub tolerations: Vec<Toleration>,
}

/// Why a node cannot take a pod: kube-scheduler's filter reasons.
fn node_rejections(world: &World, cap: &NodeCapacity, node: NodeId, pod: &PodNeeds) -> Vec<String> {
    let n = world.node(node);
    if n.unschedulable {
        return vec!["node(s) were unschedulable".into()];
    }
    if let Some(t) = n
        .taints
        .iter()
        .find(|t| t.effect.blocks_scheduling() && !tolerated(t, &pod.tolerations, &[]))
    {
        return vec![format!("node(s) had untolerated taint {t}")];
    }
    if !n.labels.contains_all(&pod.node_selector) {
        return vec!["node(s) didn't match Pod's node affinity/selector".into()];
    }
    let mut out = Vec::new();
    if cap.free_pods[node.index()] < 1 {
        out.push("Too many pods".to_string());
    }
    for (r, a) in pod.requests.iter() {
        if a > cap.free(node, r.index()) {
            out.push(format!("Insufficient {}", world.resources.name(r)));
        }
    }
    out
}

fn feasible(world: &World, cap: &NodeCapacity, node: NodeId, pod: &PodNeeds) -> bool {
    let n = world.node(node);
    !n.unschedulable
        && n.taints
            .iter()
            .all(|t| !t.effect.blocks_scheduling() || tolerated(t, &pod.tolerations, &[]))
        && n.labels.contains_all(&pod.node_selector)
        && cap.fits(node, &pod.requests)
}

/// kube-scheduler's `FitError` message for a pod no node can take:
/// `0/N nodes are available: <count> <reason>, ... .` with the entries sorted as strings.
pub fn fit_error(world: &World, cap: &NodeCapacity, pod: &PodNeeds) -> String {
    let mut histogram: BTreeMap<String, usize> = BTreeMap::new();
    for i in 0..world.nodes.len() {
        for reason in node_rejections(world, cap, NodeId::from_index(i), pod) {
            *histogram.entry(reason).or_default() += 1;
        }
    }
    let mut parts: Vec<String> = histogram.iter().map(|(r, c)| format!("{c} {r}")).collect();
    parts.sort();
    format!(
        "0/{} nodes are available: {}.",
        world.nodes.len(),
        parts.join(", ")
    )
}

/// The result of one placement attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// New bindings: (pod set, pod index, node).
    pub bound: Vec<(usize, usize, NodeId)>,
    /// The first pod that could not be placed, with the scheduler's explanation.
    pub unplaced: Option<(usize, usize, String)>,
}

/// Places the unbound pods of `pods` (per pod set: needs and current bindings) first-fit in
/// node order. With `gang`, either every pod is placed or none is (and `bound` is empty).
pub fn first_fit(
    world: &World,
    cap: &NodeCapacity,
    pods: &[(PodNeeds, Vec<Option<NodeId>>)],
    gang: bool,
) -> Placement {
    let mut scratch = cap.clone();
    let mut bound = Vec::new();
    let mut unplaced = None;
    'pod_sets: for (ps, (needs, current)) in pods.iter().enumerate() {
        for (idx, slot) in current.iter().enumerate() {
            if slot.is_some() {
                continue;
            }
            let found = (0..world.nodes.len())
                .map(NodeId::from_index)
                .find(|&n| feasible(world, &scratch, n, needs));
            match found {
                Some(n) => {
                    scratch.apply(n, &needs.requests, 1);
                    bound.push((ps, idx, n));
                }
                None => {
                    let why = fit_error(world, &scratch, needs);
                    if gang {
                        bound.clear();
                        return Placement {
                            bound,
                            unplaced: Some((ps, idx, why)),
                        };
                    }
                    // kube-scheduler: the remaining identical pods of this pod set fail the
                    // same way; pods of later pod sets may still fit.
                    unplaced.get_or_insert((ps, idx, why));
                    continue 'pod_sets;
                }
            }
        }
    }
    Placement { bound, unplaced }
}
