//! kube-scheduler with a caller's score plugin (`hooks::Hooks::node_scores`) in place of its
//! default ones: each pending pod is filtered against every node, the hook scores the
//! feasible ones, and the pod binds to the highest score (ties to the lower node id).

use kueuesim_model::{NodeId, SimTime, Workload, WorkloadId, World};

use crate::hooks::{Hooks, ScoreView};
use crate::placement::{Cluster, GangPods, Placement};

/// The workload being placed.
pub struct Pods<'a> {
    /// Its id.
    pub id: WorkloadId,
    /// The workload.
    pub workload: &'a Workload,
    /// Its pods and where each is bound.
    pub pods: &'a GangPods,
    /// The current simulated time.
    pub now: SimTime,
}

/// Places every pending pod of `w` as `kube::place` does, with the hook's scores. `None`: the
/// hook failed; every binding of this attempt is undone, so the caller can fall back to the
/// built-in placement on unchanged capacity.
pub fn place(
    world: &World,
    cluster: &mut Cluster,
    w: &Pods<'_>,
    hooks: &mut dyn Hooks,
) -> Option<Placement> {
    let mut out = Placement::default();
    let mut candidates: Vec<NodeId> = Vec::new();
    let mut scores: Vec<f64> = Vec::new();
    // The label index is shared and never changes: held apart from the cluster binds go to.
    let labels = cluster.label_index.clone();
    'sets: for (ps, (needs, slots)) in w.pods.iter().enumerate() {
        let selector_nodes = (!needs.node_selector.is_empty())
            .then(|| crate::placement::nodes_matching(&labels, &needs.node_selector));
        for (idx, slot) in slots.iter().enumerate() {
            if slot.is_some() {
                continue;
            }
            candidates.clear();
            let cap = &cluster.nodes;
            let ok = |&n: &NodeId| crate::placement::feasible(world, cap, n, needs);
            match &selector_nodes {
                Some(nodes) => candidates.extend(nodes.iter().copied().filter(ok)),
                None => {
                    candidates.extend(crate::placement::all_nodes(world).into_iter().filter(ok))
                }
            }
            if candidates.is_empty() {
                out.unplaced.get_or_insert((
                    ps,
                    idx,
                    crate::placement::fit_error_all(world, cluster, needs),
                ));
                continue 'sets;
            }
            scores.clear();
            let view = ScoreView {
                world,
                id: w.id,
                workload: w.workload,
                pod_set: ps,
                pod: idx,
                needs,
                candidates: &candidates,
                nodes: &cluster.nodes,
                now: w.now,
            };
            let valid = hooks.node_scores(&view, &mut scores).is_some()
                && scores.len() == candidates.len()
                && scores.iter().all(|s| !s.is_nan() && *s != f64::INFINITY);
            if !valid {
                for &(p, _, node) in &out.bound {
                    cluster.apply(world, node, &w.pods[p].0.requests, -1);
                }
                return None;
            }
            // The first of the highest scores: candidates are in node order.
            let mut best: Option<(f64, NodeId)> = None;
            for (&n, &s) in candidates.iter().zip(&scores) {
                if s > f64::NEG_INFINITY && best.is_none_or(|(b, _)| s > b) {
                    best = Some((s, n));
                }
            }
            match best {
                Some((_, node)) => {
                    cluster.apply(world, node, &needs.requests, 1);
                    out.bound.push((ps, idx, node));
                }
                None => {
                    let why = format!(
                        "0/{} nodes are available: {} node(s) were scored -inf by the \
                         nodeScore policy.",
                        world.nodes.len(),
                        candidates.len()
                    );
                    out.unplaced.get_or_insert((ps, idx, why));
                    continue 'sets;
                }
            }
        }
    }
    Some(out)
}
