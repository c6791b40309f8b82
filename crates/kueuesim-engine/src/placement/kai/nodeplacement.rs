//! KAI's nodeplacement plugin inside `fill`: bin-pack or spread on GPUs (cpu for CPU-only
//! tasks), the topology plugin's preferred-subdomain score as the group score, ties by node
//! name; and the indexed bin-pack fill over every node for jobs without topology.

use kueuesim_model::{NodeId, PlacementStrategy, ResourceId, World};

use crate::placement::{Binding, Cluster, GangPods, NodeCapacity, PodNeeds, Scorer};

/// The nodeplacement plugin's score inside `fill`, plus the topology plugin's preferred
/// subdomain score (×10⁴) as the group score.
pub(super) struct KaiScorer<'a> {
    /// Per node: its preferred-level subdomain's score group (0: none).
    group_of: &'a [u32],
    group_scores: &'a [f64],
    /// GPU tasks are scored on GPUs, CPU-only tasks on cpu.
    resource: Option<usize>,
    strategy: PlacementStrategy,
    min_free: i64,
    max_free: i64,
    name_rank: &'a [u32],
    /// Every node passes the static filters for a pod without a node selector
    /// (`Cluster::plain_nodes`): `fill` then checks only capacity.
    plain_nodes: bool,
}

impl KaiScorer<'_> {
    /// The scorer, told whether every node is plain (`Cluster::plain_nodes`).
    pub(super) fn with_plain_nodes(mut self, plain: bool) -> Self {
        self.plain_nodes = plain;
        self
    }
}

impl Scorer for KaiScorer<'_> {
    fn group(&self, node: NodeId) -> usize {
        self.group_of.get(node.index()).map_or(0, |&g| g as usize)
    }
    fn group_score(&mut self, group: usize) -> f64 {
        self.group_scores[group]
    }
    fn node_score(&self, cap: &NodeCapacity, node: NodeId, _pod: &PodNeeds) -> f64 {
        let Some(r) = self.resource else { return 0.0 };
        // The node's allocatable, kept beside its free capacity.
        let alloc = cap.allocatable(node, r);
        if alloc == 0 {
            return 0.0;
        }
        let free = cap.free(node, r);
        match self.strategy {
            PlacementStrategy::Binpack => {
                if self.max_free == 0 {
                    0.0
                } else if self.max_free == self.min_free {
                    9.0
                } else {
                    9.0 * (1.0
                        - (free - self.min_free) as f64 / (self.max_free - self.min_free) as f64)
                }
            }
            PlacementStrategy::Spread => free as f64 / alloc as f64,
        }
    }
    fn tie(&self, node: NodeId) -> u64 {
        u64::MAX - u64::from(self.name_rank[node.index()])
    }
    fn bound(&mut self, _node: NodeId) {}
    fn statically_plain(&self, pod: &PodNeeds) -> bool {
        self.plain_nodes && pod.node_selector.is_empty()
    }
}

/// The resource the nodeplacement plugin scores a task on: GPUs for GPU tasks, else cpu.
pub(super) fn scored_resource(cluster: &Cluster, pods: &GangPods) -> Option<usize> {
    let gpu_task = cluster.res.gpu.is_some_and(|g| {
        pods.iter()
            .any(|(n, _)| n.requests.get(ResourceId::from_index(g)) > 0)
    });
    if gpu_task {
        cluster.res.gpu
    } else {
        cluster.res.cpu
    }
}

pub(super) fn scorer<'a>(
    world: &'a World,
    nodes: &NodeCapacity,
    resource: Option<usize>,
    name_rank: &'a [u32],
    candidates: &[NodeId],
    group_of: &'a [u32],
    group_scores: &'a [f64],
) -> KaiScorer<'a> {
    let (mut min_free, mut max_free) = (i64::MAX, 0);
    if let Some(r) = resource {
        for &n in candidates {
            if nodes.allocatable(n, r) == 0 {
                continue;
            }
            let f = nodes.free(n, r);
            min_free = min_free.min(f);
            max_free = max_free.max(f);
        }
    }
    KaiScorer {
        group_of,
        group_scores,
        resource,
        strategy: world.config.kai.placement_strategy,
        min_free: if min_free == i64::MAX { 0 } else { min_free },
        max_free,
        name_rank,
        plain_nodes: false,
    }
}

/// `fill` of alike pods over `candidates` with `scorer`, when the scorer has one group (no
/// preferred level) and every candidate passes the static filters (`Cluster::statically_plain`)
/// and no candidate can take two of the pods: then a bound node never fits again and no
/// other node's score moves (the bin-pack range is fixed when the scorer is made), so `fill`
/// binds the feasible candidates in descending (score, name tie, node) order, the order its
/// heap pops them, until `limit` pods are bound. Here that order comes from selecting the
/// first `limit` and sorting only those, instead of a heap of every feasible candidate.
/// Some(Ok): the bindings, applied to `cap` as `fill` leaves them; Some(Err): how many pods
/// `fill` would bind before running out, with nothing applied; None: the shortcut does not
/// apply (a candidate can take two, or several groups), and `fill` decides.
pub(super) fn fill_one_per_node(
    cap: &mut NodeCapacity,
    candidates: &[NodeId],
    pods: &GangPods,
    limit: usize,
    scorer: &KaiScorer<'_>,
) -> Option<Result<Vec<Binding>, usize>> {
    if !scorer.group_of.is_empty() || !scorer.plain_nodes {
        return None;
    }
    let mut pending = super::super::pending_pods(pods).take(limit).peekable();
    let Some(&(_, _, needs)) = pending.peek() else {
        return Some(Ok(Vec::new()));
    };
    if !needs.node_selector.is_empty() {
        return None;
    }
    let req = &needs.requests;
    // Each feasible candidate as one integer whose ascending order is the heap's pop order:
    // the score descending (its bits in `f64::total_cmp` order, inverted), then the name
    // tie descending (`tie` is u64::MAX − name rank, so ascending rank), then the node.
    let mut feasible: Vec<u128> = Vec::with_capacity(candidates.len());
    for &n in candidates {
        if !cap.fits(n, req) {
            continue;
        }
        // Room for a second copy: the node would be pushed back after its first bind.
        if cap.free_pods(n) >= 2 && req.iter().all(|(r, a)| 2 * a <= cap.free(n, r.index())) {
            return None;
        }
        let rank = !scorer.tie(n);
        debug_assert!(
            rank <= u64::from(u32::MAX),
            "KaiScorer::tie is u64::MAX − name rank"
        );
        feasible.push(
            (u128::from(!total_order_bits(scorer.node_score(cap, n, needs))) << 64)
                | (u128::from(rank) << 32)
                | u128::from(n.0),
        );
    }
    let want = pending.clone().count();
    if feasible.len() < want {
        return Some(Err(feasible.len()));
    }
    if want > 0 && feasible.len() > want {
        feasible.select_nth_unstable(want - 1);
        feasible.truncate(want);
    }
    // Keys are distinct (one per node), so the unstable sort has one outcome.
    feasible.sort_unstable();
    let mut bound = Vec::with_capacity(want);
    for ((ps, idx, needs), key) in pending.zip(feasible) {
        let n = NodeId(key as u32);
        cap.apply(n, &needs.requests, 1);
        bound.push((ps, idx, n));
    }
    Some(Ok(bound))
}

/// `x`'s bits as an unsigned integer in the order of `f64::total_cmp` (what `Score`
/// compares by): the sign bit flipped for positives, every bit for negatives.
#[inline]
fn total_order_bits(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// `fill` with KAI's bin-pack node score on GPUs and no topology, over every node, using the
/// cluster's (free GPUs, name rank) order instead of scoring every node: the score falls as
/// free GPUs rise and ties go to the lower name rank, so the best feasible node is the first
/// feasible one in that order, or a node this call already bound to (it has fewer GPUs free
/// now than its place in the order says). Within a pod set nothing becomes feasible again, so
/// one forward scan per pod set serves all its pods. Same bindings as `fill`; leaves them
/// applied to the node capacity as `fill` does.
#[allow(clippy::type_complexity)]
pub(super) fn fill_binpack(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    limit: usize,
) -> Result<Vec<Binding>, (Vec<Binding>, (usize, usize))> {
    let Some(g) = cluster.res.gpu else {
        unreachable!("fill_binpack is only chosen for GPU tasks")
    };
    cluster.sync_gpu_order();
    let mut bound: Vec<Binding> = Vec::new();
    let mut touched: Vec<NodeId> = Vec::new();
    for (ps, (needs, slots)) in pods.iter().enumerate() {
        if bound.len() >= limit {
            break;
        }
        let pending: Vec<usize> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_none())
            .map(|(i, _)| i)
            .take(limit - bound.len())
            .collect();
        let k = needs.requests.get(ResourceId::from_index(g));
        let mut cursor = (k, 0u32, NodeId(0));
        for idx in pending {
            // The first feasible untouched node from the cursor on.
            let mut untouched = None;
            for (free, rank, n) in cluster.gpu_order().range_from(cursor) {
                cursor = (free, rank, n);
                if !touched.contains(&n)
                    && crate::placement::feasible(world, &cluster.nodes, n, needs)
                {
                    untouched = Some((free, rank, n));
                    break;
                }
            }
            if untouched.is_none() {
                cursor = (i64::MAX, u32::MAX, NodeId(u32::MAX));
            }
            let best_touched = touched
                .iter()
                .filter(|&&n| crate::placement::feasible(world, &cluster.nodes, n, needs))
                .map(|&n| (cluster.nodes.free(n, g), cluster.name_rank[n.index()], n))
                .min();
            let best = match (untouched, best_touched) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(x) => x,
                    None => return Err((bound, (ps, idx))),
                },
            };
            let node = best.2;
            cluster.nodes.apply(node, &needs.requests, 1);
            bound.push((ps, idx, node));
            if !touched.contains(&node) {
                touched.push(node);
            }
        }
    }
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{fill, undo};
    use kueuesim_model::{DomainId, Labels, ResourceList, Topology};

    use proptest::prelude::*;

    /// A world of nodes with (GPUs, cpu, GPUs busy, cpu busy) and shuffled names, plus the
    /// cluster with the busy part bound.
    fn binpack_world(nodes: &[(i64, i64, i64, i64, u32)]) -> (World, Cluster) {
        let mut w = World::default();
        let gpu = w.resources.intern(kueuesim_model::resources::GPU);
        let cpu = w.resources.intern("cpu");
        for (i, &(g, c, _, _, name)) in nodes.iter().enumerate() {
            let mut alloc = vec![0; 2];
            alloc[gpu.index()] = g;
            alloc[cpu.index()] = c;
            w.nodes.push(kueuesim_model::Node {
                name: format!("n-{name:03}-{i}"),
                labels: Default::default(),
                allocatable: alloc,
                taints: vec![],
                unschedulable: false,
            });
        }
        let mut cluster = Cluster::new(&w);
        for (i, &(g, c, bg, bc, _)) in nodes.iter().enumerate() {
            let busy =
                kueuesim_model::ResourceList::from_pairs(vec![(gpu, bg.min(g)), (cpu, bc.min(c))]);
            cluster.apply(&w, NodeId::from_index(i), &busy, 1);
        }
        (w, cluster)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The indexed bin-pack fill binds exactly what `fill` with KAI's bin-pack scorer
        /// binds, fails on the same pod, and leaves the same capacity.
        #[test]
        fn fill_binpack_matches_fill(
            nodes in prop::collection::vec((0i64..=8, 1i64..=16, 0i64..=8, 0i64..=16, 0u32..50), 1..30),
            sets in prop::collection::vec((1usize..6, 1i64..=4, 0i64..=4), 1..4),
            limit in 1usize..20,
        ) {
            let (w, mut fast) = binpack_world(&nodes);
            let mut slow = fast.clone();
            let gpu = w.resources.lookup(kueuesim_model::resources::GPU).unwrap();
            let cpu = w.resources.lookup("cpu").unwrap();
            let pods: Vec<(PodNeeds, Vec<Option<NodeId>>)> = sets
                .iter()
                .map(|&(count, g, c)| {
                    (
                        PodNeeds {
                            requests: kueuesim_model::ResourceList::from_pairs(vec![(gpu, g), (cpu, c)]),
                            node_selector: Default::default(),
                            tolerations: vec![],
                        },
                        vec![None; count],
                    )
                })
                .collect();
            let all = crate::placement::all_nodes(&w);
            let (group_of, scores) = (Vec::new(), vec![0.0]);
            let name_rank = slow.name_rank.clone();
            let mut s = scorer(&w, &slow.nodes, Some(gpu.index()), &name_rank, &all, &group_of, &scores);
            let expected = fill(&w, &mut slow.nodes, &all, &pods, limit, &mut s);
            let got = fill_binpack(&w, &mut fast, &pods, limit);
            prop_assert_eq!(&got, &expected);
            for n in &all {
                prop_assert_eq!(fast.nodes.free(*n, gpu.index()), slow.nodes.free(*n, gpu.index()));
            }
        }

        /// The one-pod-per-node shortcut binds exactly what `fill` with KAI's scorer binds
        /// (bin-pack or spread, GPU or cpu scoring), reports the same count when it runs out
        /// (leaving nothing bound, as the dry run's discard does), and declines whenever a
        /// candidate could take two of the pods.
        #[test]
        fn fill_one_per_node_matches_fill(
            nodes in prop::collection::vec((0i64..=8, 1i64..=16, 0i64..=8, 0i64..=16, 0u32..50), 1..30),
            (sets, g, c) in (prop::collection::vec(0usize..6, 1..3), 0i64..=8, 1i64..=16),
            limit in 1usize..20,
            (spread, on_cpu, subset) in (any::<bool>(), any::<bool>(), prop::collection::vec(any::<bool>(), 30)),
        ) {
            let (mut w, mut fast) = binpack_world(&nodes);
            if spread {
                w.config.kai.placement_strategy = PlacementStrategy::Spread;
            }
            let mut slow = fast.clone();
            let gpu = w.resources.lookup(kueuesim_model::resources::GPU).unwrap();
            let cpu = w.resources.lookup("cpu").unwrap();
            // Alike pods, in one or more pod sets (some empty).
            let pods: Vec<(PodNeeds, Vec<Option<NodeId>>)> = sets
                .iter()
                .map(|&count| {
                    (
                        PodNeeds {
                            requests: kueuesim_model::ResourceList::from_pairs(vec![(gpu, g), (cpu, c)]),
                            node_selector: Default::default(),
                            tolerations: vec![],
                        },
                        vec![None; count],
                    )
                })
                .collect();
            let candidates: Vec<NodeId> = crate::placement::all_nodes(&w)
                .into_iter()
                .filter(|n| subset[n.index() % subset.len()])
                .collect();
            let resource = Some(if on_cpu { cpu.index() } else { gpu.index() });
            let (group_of, scores) = (Vec::new(), vec![0.0]);
            let name_rank = slow.name_rank.clone();
            let mut s = scorer(&w, &slow.nodes, resource, &name_rank, &candidates, &group_of, &scores)
                .with_plain_nodes(true);
            let expected = fill(&w, &mut slow.nodes, &candidates, &pods, limit, &mut s);
            let two = candidates.iter().any(|&n| {
                let free = |r: ResourceId| fast.nodes.free(n, r.index());
                fast.nodes.free_pods(n) >= 2 && free(gpu) >= 2 * g && free(cpu) >= 2 * c
            });
            match fill_one_per_node(&mut fast.nodes, &candidates, &pods, limit, &s) {
                None => prop_assert!(two, "declined though no candidate takes two"),
                Some(got) => {
                    // Nothing pending binds nothing, whatever the candidates.
                    prop_assert!(!two || sets.iter().all(|&k| k == 0), "a candidate takes two pods");
                    match (&got, &expected) {
                        (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                        (Err(k), Err((b, _))) => {
                            prop_assert_eq!(*k, b.len());
                            crate::placement::undo(&mut slow.nodes, &pods, b);
                        }
                        _ => prop_assert!(false, "shortcut {:?}, fill {:?}", got, expected),
                    }
                    for n in crate::placement::all_nodes(&w) {
                        prop_assert_eq!(fast.nodes.free(n, gpu.index()), slow.nodes.free(n, gpu.index()));
                        prop_assert_eq!(fast.nodes.free(n, cpu.index()), slow.nodes.free(n, cpu.index()));
                    }
                }
            }
        }

        /// The integer order of `total_order_bits` is `f64::total_cmp`'s.
        #[test]
        fn total_order_bits_is_total_cmp(a in any::<f64>(), b in any::<f64>(), pick in 0usize..6) {
            // Corner values too: zeros of both signs, infinities, NaN.
            let special = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 9.0];
            let b = if pick < 6 && a.to_bits() % 2 == 0 { special[pick] } else { b };
            prop_assert_eq!(total_order_bits(a).cmp(&total_order_bits(b)), a.total_cmp(&b));
        }
    }

    /// Nodes of (GPUs, cpu, pod slots, zone, rack), names shuffled so that id order is not
    /// name order; the KAI Topology is zone/rack, with a second one of racks alone (another
    /// tree shape and node order over the same nodes).
    fn order_world(nodes: &[(i64, i64, i64, u8, u8)]) -> World {
        let mut w = crate::placement::test_nodes(nodes);
        w.topologies = vec![
            Topology::from_levels("t", &["zone".into(), "rack".into()], &w.nodes),
            Topology::from_levels("r", &["rack".into()], &w.nodes),
        ];
        w
    }

    fn requests(w: &World, g: i64, c: i64) -> ResourceList {
        let r = |n: &str| w.resources.lookup(n).unwrap();
        ResourceList::from_pairs(vec![(r(kueuesim_model::resources::GPU), g), (r("cpu"), c)])
    }

    fn node_strategy() -> impl Strategy<Value = Vec<(i64, i64, i64, u8, u8)>> {
        prop::collection::vec((0i64..=8, 1i64..=16, 1i64..=4, 0u8..3, 0u8..4), 1..30)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The dry run read from the order binds exactly what `fill` with KAI's bin-pack
        /// scorer binds over the domain's nodes (alike GPU pods in one or more pod sets,
        /// several to a node where they fit, pod slots and cpu short on some nodes, nodes
        /// without GPUs), reports the same count when the domain runs out (leaving nothing
        /// bound), and leaves the same capacity.
        #[test]
        fn binpack_order_fill_matches_fill(
            nodes in node_strategy(),
            busy in prop::collection::vec((0usize..100, 0i64..=8, 0i64..=8), 0..30),
            (sets, gpus, cpu) in (prop::collection::vec(0usize..6, 1..3), 1i64..=8, 0i64..=8),
            (limit, ti, pick) in (1usize..20, 0usize..2, 0usize..100),
        ) {
            let w = order_world(&nodes);
            let mut cluster = Cluster::new(&w);
            prop_assume!(cluster.gpu_buckets > 0);
            for &(n, g, c) in &busy {
                let node = NodeId::from_index(n % w.nodes.len());
                let req = requests(&w, g, c);
                if cluster.nodes.fits(node, &req) {
                    cluster.apply(&w, node, &req, 1);
                }
            }
            let needs = PodNeeds {
                requests: requests(&w, gpus, cpu),
                node_selector: Labels::default(),
                tolerations: vec![],
            };
            let pods: Vec<(PodNeeds, Vec<Option<NodeId>>)> =
                sets.iter().map(|&k| (needs.clone(), vec![None; k])).collect();
            let t = &w.topologies[ti];
            let d = DomainId::from_index(pick % t.domains.len());
            let candidates = t.nodes_of(d);
            let mut slow = cluster.clone();
            let gpu = slow.res.gpu.unwrap();
            let (group_of, scores) = (Vec::new(), vec![0.0]);
            let name_rank = slow.name_rank.clone();
            let mut s = scorer(&w, &slow.nodes, Some(gpu), &name_rank, candidates, &group_of, &scores)
                .with_plain_nodes(true);
            let expected = fill(&w, &mut slow.nodes, candidates, &pods, limit, &mut s);
            let got = cluster.kai_binpack_in(&w, ti, d, &pods, limit);
            match (&got, &expected) {
                (Some(Ok(a)), Ok(b)) => prop_assert_eq!(a, b),
                (Some(Err(k)), Err((b, _))) => {
                    prop_assert_eq!(*k, b.len());
                    undo(&mut slow.nodes, &pods, b);
                }
                // Nothing pending: `fill` decides (and binds nothing).
                (None, Ok(b)) if sets.iter().all(|&k| k == 0) => prop_assert!(b.is_empty()),
                _ => prop_assert!(false, "order {:?}, fill {:?}", got, expected),
            }
            for n in 0..w.nodes.len() {
                let n = NodeId::from_index(n);
                for r in 0..3 {
                    prop_assert_eq!(cluster.nodes.free(n, r), slow.nodes.free(n, r));
                }
                prop_assert_eq!(cluster.nodes.free_pods(n), slow.nodes.free_pods(n));
            }
        }
    }
}
