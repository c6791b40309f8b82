//! kube-scheduler (`default-scheduler`): pods one by one, no gang, no topology; the feasible
//! search samples `percentageOfNodesToScore` of the nodes from a rotating start, and the
//! default score plugins that matter for resource-only pods (NodeResourcesFit LeastAllocated
//! and NodeResourcesBalancedAllocation) pick the node, ties at random (`selectHost`).

use kueuesim_model::{NodeId, World};

use super::{
    Cluster, GangPods, KeyResources, NodeCapacity, Placement, PodNeeds, fit_error, tie_key,
};

/// How many feasible nodes the filter phase looks for among `n` (kube-scheduler
/// `numFeasibleNodesToFind` with the adaptive default percentage; Volcano's
/// `CalculateNumOfFeasibleNodesToFind` with its defaults is the same rule).
pub fn feasible_nodes_to_find(n: usize) -> usize {
    const MIN_FEASIBLE: usize = 100;
    if n <= MIN_FEASIBLE {
        return n;
    }
    let pct = 50usize.saturating_sub(n / 125).max(5);
    (n * pct / 100).max(MIN_FEASIBLE)
}

/// NodeResourcesFit's `LeastAllocated` score of `node` for one more `pod` (cpu and memory,
/// weight 1 each, integer arithmetic as upstream).
pub fn least_allocated(
    world: &World,
    cap: &NodeCapacity,
    res: KeyResources,
    node: NodeId,
    pod: &PodNeeds,
) -> i64 {
    let alloc = &world.node(node).allocatable;
    let mut sum = 0;
    let mut weights = 0;
    for r in [res.cpu, res.memory].into_iter().flatten() {
        let a = alloc.get(r).copied().unwrap_or(0);
        weights += 1;
        if a == 0 {
            continue;
        }
        let req =
            a - cap.free(node, r) + pod.requests.get(kueuesim_model::ResourceId::from_index(r));
        if req > a {
            continue;
        }
        sum += (a - req) * 100 / a;
    }
    if weights == 0 { 0 } else { sum / weights }
}

/// `MostAllocated` (Volcano nodeorder's `mostrequested`): cpu and memory, weight 1 each,
/// `min(requested, allocatable)·100/allocatable`.
pub fn most_allocated(
    world: &World,
    cap: &NodeCapacity,
    res: KeyResources,
    node: NodeId,
    pod: &PodNeeds,
) -> i64 {
    let alloc = &world.node(node).allocatable;
    let mut sum = 0;
    let mut weights = 0;
    for r in [res.cpu, res.memory].into_iter().flatten() {
        let a = alloc.get(r).copied().unwrap_or(0);
        weights += 1;
        if a == 0 {
            continue;
        }
        let req =
            a - cap.free(node, r) + pod.requests.get(kueuesim_model::ResourceId::from_index(r));
        sum += req.min(a) * 100 / a;
    }
    if weights == 0 { 0 } else { sum / weights }
}

/// `NodeResourcesBalancedAllocation`: 100 × (1 − the standard deviation of the requested
/// fractions), over cpu and memory, plus GPUs when `with_gpu` and the pod asks for them
/// (Volcano's resource list).
pub fn balanced_allocation(
    world: &World,
    cap: &NodeCapacity,
    res: KeyResources,
    node: NodeId,
    pod: &PodNeeds,
    with_gpu: bool,
) -> i64 {
    let alloc = &world.node(node).allocatable;
    let mut fractions = [0f64; 3];
    let mut k = 0;
    let gpu = res
        .gpu
        .filter(|&g| with_gpu && pod.requests.get(kueuesim_model::ResourceId::from_index(g)) > 0);
    for r in [res.cpu, res.memory, gpu].into_iter().flatten() {
        let a = alloc.get(r).copied().unwrap_or(0);
        if a == 0 {
            continue;
        }
        let req =
            a - cap.free(node, r) + pod.requests.get(kueuesim_model::ResourceId::from_index(r));
        fractions[k] = (req as f64 / a as f64).min(1.0);
        k += 1;
    }
    let f = &fractions[..k];
    let std = match k {
        0 | 1 => 0.0,
        2 => (f[0] - f[1]).abs() / 2.0,
        _ => {
            let mean = f.iter().sum::<f64>() / k as f64;
            (f.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / k as f64).sqrt()
        }
    };
    ((1.0 - std) * 100.0) as i64
}

/// Scans `nodes` from `start` (wrapping) for up to `want` nodes that can take `pod`, returns
/// them and how many nodes were looked at.
pub fn sample_feasible(
    world: &World,
    cap: &NodeCapacity,
    nodes: &[NodeId],
    pod: &PodNeeds,
    start: usize,
    want: usize,
) -> (Vec<NodeId>, usize) {
    let n = nodes.len();
    let mut found = Vec::new();
    let mut processed = 0;
    while processed < n && found.len() < want {
        let node = nodes[(start + processed) % n];
        processed += 1;
        if super::feasible(world, cap, node, pod) {
            found.push(node);
        }
    }
    (found, processed)
}

/// Places every pending pod of `pods` one by one; a pod that fits nowhere stays pending (and
/// so do the rest of its pod set, which are identical), later pod sets are still tried.
pub fn place(world: &World, cluster: &mut Cluster, pods: &GangPods, seed: u64) -> Placement {
    let all = super::all_nodes(world);
    let mut out = Placement::default();
    'sets: for (ps, (needs, slots)) in pods.iter().enumerate() {
        for (idx, slot) in slots.iter().enumerate() {
            if slot.is_some() {
                continue;
            }
            let want = feasible_nodes_to_find(all.len());
            let start = cluster.next_start[0];
            let (found, processed) =
                sample_feasible(world, &cluster.nodes, &all, needs, start, want);
            if !all.is_empty() {
                cluster.next_start[0] = (start + processed) % all.len();
            }
            let res = cluster.res;
            let best = found.iter().copied().max_by_key(|&n| {
                let score = least_allocated(world, &cluster.nodes, res, n, needs)
                    + balanced_allocation(world, &cluster.nodes, res, n, needs, false);
                (score, tie_key(seed ^ (idx as u64) << 32 ^ ps as u64, n))
            });
            match best {
                Some(node) => {
                    cluster.apply(world, node, &needs.requests, 1);
                    out.bound.push((ps, idx, node));
                }
                None => {
                    let why = fit_error(world, &cluster.nodes, needs, &all);
                    out.unplaced.get_or_insert((ps, idx, why));
                    continue 'sets;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feasible_node_count_follows_the_adaptive_percentage() {
        assert_eq!(feasible_nodes_to_find(50), 50);
        assert_eq!(feasible_nodes_to_find(100), 100);
        // 50 - 1000/125 = 42% of 1000.
        assert_eq!(feasible_nodes_to_find(1000), 420);
        // 50 - 80 < 5: the 5% floor; 500 nodes of 10,000.
        assert_eq!(feasible_nodes_to_find(10_000), 500);
        // Never fewer than 100.
        assert_eq!(feasible_nodes_to_find(150), 100);
    }
}
