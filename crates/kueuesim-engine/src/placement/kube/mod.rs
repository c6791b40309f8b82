//! kube-scheduler (`default-scheduler`): pods one by one, no gang, no topology; the feasible
//! search samples `percentageOfNodesToScore` of the nodes from a rotating start, and the
//! default score plugins that matter for resource-only pods (NodeResourcesFit LeastAllocated
//! and NodeResourcesBalancedAllocation) pick the node, ties at random (`selectHost`).
//!
//! Files: this one the default scheduler; `gpu_share` the FGD simulator's score plugins over
//! GPU devices; `hooked` the caller's node scores in place of the built-in ones. The sampling,
//! score plugins and occupancy-class scan it shares with Volcano are in
//! `placement::node_search`.

pub mod gpu_share;
pub mod hooked;

use kueuesim_model::gpu::GpuPolicy;
use kueuesim_model::{NodeId, World};

use super::devices::DeviceChoice;
// kube-scheduler's own sampling and score plugins, which Volcano runs too (`node_search`).
use super::node_search::{Best, class_scan};
pub use super::node_search::{
    balanced_allocation, feasible_nodes_to_find, least_allocated, most_allocated, sample_feasible,
};
use super::{Cluster, GangPods, NodeCapacity, Placement};

/// `least_allocated + balanced_allocation(.., false)` in one pass, with the pod's cpu and
/// memory requests looked up once (`rq`) instead of per node: kube-scheduler scores every
/// sampled node for every pod, so this is its hot loop. Same integer and float arithmetic.
fn kube_score(cap: &NodeCapacity, node: NodeId, rq: [Option<(usize, i64)>; 2]) -> i64 {
    let (mut least, mut weights) = (0i64, 0i64);
    let mut fractions = [0f64; 2];
    let mut k = 0;
    for (r, q) in rq.into_iter().flatten() {
        let a = cap.allocatable(node, r);
        weights += 1;
        if a == 0 {
            continue;
        }
        let req = a - cap.free(node, r) + q;
        if req <= a {
            least += (a - req) * 100 / a;
        }
        fractions[k] = (req as f64 / a as f64).min(1.0);
        k += 1;
    }
    let least = if weights == 0 { 0 } else { least / weights };
    let std = if k == 2 {
        (fractions[0] - fractions[1]).abs() / 2.0
    } else {
        0.0
    };
    least + ((1.0 - std) * 100.0) as i64
}

/// `kube_score` depends on nothing but the node's allocatable and free cpu and memory (the
/// pod's requests being fixed): the nodes of a pool in a handful of occupancy states share
/// it, so a small direct-mapped memo per pod set skips most of the divisions. Exact: a hit
/// needs the whole key equal.
struct ScoreMemo {
    slots: [Option<([i64; 4], i64)>; 64],
}

impl ScoreMemo {
    fn new() -> Self {
        ScoreMemo { slots: [None; 64] }
    }

    // Inlined into the filter scan: it runs for each of the 512 feasible nodes of every pod,
    // and a hit costs less than the call's prologue did (argument copies and register saves).
    #[inline(always)]
    fn score(&mut self, cap: &NodeCapacity, node: NodeId, rq: &[Option<(usize, i64)>; 2]) -> i64 {
        let part = |x: Option<(usize, i64)>| {
            x.map_or((i64::MIN, i64::MIN), |(r, _)| {
                (cap.allocatable(node, r), cap.free(node, r))
            })
        };
        let ((ac, fc), (am, fm)) = (part(rq[0]), part(rq[1]));
        let key = [ac, fc, am, fm];
        let h = (fc as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add((fm as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f))
            .wrapping_add(ac as u64 ^ (am as u64).rotate_left(17));
        let slot = &mut self.slots[(h >> 58) as usize];
        match slot {
            Some((k, v)) if *k == key => *v,
            _ => {
                let v = kube_score(cap, node, *rq);
                *slot = Some((key, v));
                v
            }
        }
    }
}

/// Places every pending pod of `pods` one by one; a pod that fits nowhere stays pending (and
/// so do the rest of its pod set, which are identical), later pod sets are still tried.
pub fn place(world: &World, cluster: &mut Cluster, pods: &GangPods, seed: u64) -> Placement {
    if cluster.devices.is_some() && world.config.gpu.policy != GpuPolicy::Default {
        return gpu_share::place(world, cluster, pods, seed);
    }
    let n = world.nodes.len();
    let mut out = Placement::default();
    // The label index is shared and never changes: held apart from the cluster binds go to.
    let labels = cluster.label_index.clone();
    for (ps, (needs, slots)) in pods.iter().enumerate() {
        let res = cluster.res;
        let rq = [res.cpu, res.memory].map(|r| {
            r.map(|r| {
                (
                    r,
                    needs
                        .requests
                        .get(kueuesim_model::ResourceId::from_index(r)),
                )
            })
        });
        let mut memo = ScoreMemo::new();
        // Per occupancy class of the nodes: this pod set's score there, or that it does not
        // fit (`CLASS_NO_FIT`), or not yet worked out; valid for one class generation. Kept
        // from the last scan of pods with the same requests (the class scan asks nothing
        // else of the pod), so each class is answered once per generation, not per attempt.
        let mut by_class = cluster.nodes.classes.take_answers(&needs.requests);
        let mut feasible_classes: Vec<(i64, usize)> = Vec::new();
        let positive = super::positive_requests(&needs.requests);
        // With GPU devices, the GPU-share filter after NodeResourcesFit.
        let demand = cluster
            .devices
            .as_ref()
            .and_then(|d| d.book.demand(&needs.requests));
        // The nodes a nodeSelector allows, once per pod set.
        let selector_nodes = (!needs.node_selector.is_empty())
            .then(|| super::nodes_matching(&labels, &needs.node_selector));
        'slots: for (idx, slot) in slots.iter().enumerate() {
            if slot.is_some() {
                continue;
            }
            let version = cluster.nodes.version();
            if cluster.unplaceable.0 == version
                && let Some((_, why)) = cluster.unplaceable.1.iter().find(|(p, _)| p == needs)
            {
                // Failed on this very capacity already: every node was looked at and the
                // rotating start went full circle, so the scan would end the same way.
                out.unplaced.get_or_insert((ps, idx, why.clone()));
                break 'slots;
            }
            let want = feasible_nodes_to_find(n);
            let start = cluster.next_start[0];
            // The filter phase from the rotating start, then the best score among the
            // feasible nodes found (`selectHost`: ties by a seeded key).
            let mut processed = 0;
            let mut found = 0;
            let mut best = Best::default();
            let tie_seed = seed ^ (idx as u64) << 32 ^ ps as u64;
            let plain = cluster.statically_plain(needs);
            if let (None, true, None) = (&selector_nodes, plain, demand)
                && cluster.nodes.node_classes_if_few()
            {
                // The common case (no nodeSelector, no taints, no GPU-sharing devices, nodes
                // in a few states): NodeResourcesFit and the scores depend on the node's
                // capacity state alone.
                let cap = &cluster.nodes;
                (best, processed) = class_scan(
                    cap,
                    &mut by_class,
                    &mut feasible_classes,
                    needs,
                    |node| kube_score(cap, node, rq),
                    None,
                    (start, want),
                    tie_seed,
                );
            } else {
                let cap = &cluster.nodes;
                let book = cluster.devices.as_ref().map(|d| &d.book);
                let devices_fit = |node: NodeId| match (book, demand) {
                    (Some(b), Some(d)) => b.fits(node, d),
                    _ => true,
                };
                // Looks at one node of the scan: counts it found and keeps the best score.
                let mut visit = |node: NodeId, found: &mut usize| {
                    *found += 1;
                    best.offer(memo.score(cap, node, &rq), node, tie_seed);
                };
                if let Some(matching) = selector_nodes.as_deref() {
                    // A nodeSelector (e.g. a TAS pod pinned to its domain): only the matching
                    // nodes can pass, so the scan from `start` visits them in its wrapping
                    // order and counts every node it passes over, as the full scan would.
                    let from = matching.partition_point(|n| n.index() < start);
                    for &node in matching[from..].iter().chain(&matching[..from]) {
                        if found >= want {
                            break;
                        }
                        // The selector matched already: on plain nodes nothing else can fail.
                        if cap.fits(node, &needs.requests)
                            && devices_fit(node)
                            && (cluster.plain_nodes
                                || super::statically_feasible(world, node, needs))
                        {
                            visit(node, &mut found);
                            if found >= want {
                                processed = (node.index() + n - start) % n + 1;
                            }
                        }
                    }
                    if found < want {
                        processed = n;
                    }
                } else {
                    // Node by node from `start`, skipping 64 at a time the nodes without a
                    // pod slot or without any of a requested resource free (they fail
                    // NodeResourcesFit); `processed` counts every node passed over either way.
                    let stop = super::scan_candidates(cap, n, start, &positive, |node| {
                        let ok = cap.fits(node, &needs.requests)
                            && devices_fit(node)
                            && (plain || super::statically_feasible(world, node, needs));
                        if ok {
                            visit(node, &mut found);
                        }
                        found >= want
                    });
                    processed = stop.map_or(n, |node| (node.index() + n - start) % n + 1);
                }
            }
            if n > 0 {
                cluster.next_start[0] = (start + processed) % n;
            }
            match best.0 {
                Some((_, _, node)) => {
                    cluster.apply(world, node, &needs.requests, 1);
                    if let (Some(d), Some(dev)) = (demand, cluster.devices.as_mut()) {
                        // A GPU-sharing device plugin's default: the best-fitting device.
                        let claim = dev
                            .book
                            .claim(node, d, DeviceChoice::BestFit)
                            .expect("the filter found room on this node");
                        dev.book.apply(node, claim, 1);
                        out.claims.push((ps, idx, claim));
                    }
                    out.bound.push((ps, idx, node));
                }
                None => {
                    let why = super::fit_error_all(world, cluster, needs);
                    if cluster.unplaceable.0 != version {
                        cluster.unplaceable = (version, Vec::new());
                    }
                    cluster.unplaceable.1.push((needs.clone(), why.clone()));
                    out.unplaced.get_or_insert((ps, idx, why));
                    break 'slots;
                }
            }
        }
        cluster
            .nodes
            .classes
            .keep_answers(&needs.requests, by_class);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{PodNeeds, tie_key};

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

    /// kube-scheduler's filter-and-score scan as upstream writes it, node by node from the
    /// rotating start: (the chosen node, how many nodes the scan looked at).
    fn reference_pick(
        w: &World,
        cluster: &Cluster,
        pod: &PodNeeds,
        start: usize,
        tie_seed: u64,
    ) -> (Option<NodeId>, usize) {
        let n = w.nodes.len();
        let want = feasible_nodes_to_find(n);
        let res = cluster.res;
        let rq = [res.cpu, res.memory].map(|r| {
            r.map(|r| {
                (
                    r,
                    pod.requests.get(kueuesim_model::ResourceId::from_index(r)),
                )
            })
        });
        let (mut processed, mut found) = (0, 0);
        let mut best: Option<((i64, u64), NodeId)> = None;
        while processed < n && found < want {
            let node = NodeId::from_index((start + processed) % n);
            processed += 1;
            if super::super::feasible(w, &cluster.nodes, node, pod) {
                found += 1;
                let key = (
                    kube_score(&cluster.nodes, node, rq),
                    tie_key(tie_seed, node),
                );
                if best.is_none_or(|(b, _)| key >= b) {
                    best = Some((key, node));
                }
            }
        }
        (best.map(|b| b.1), processed)
    }

    proptest::proptest! {
        /// With a nodeSelector the scan visits only the matching nodes (label index), yet
        /// picks the node and advances the rotating start exactly as the node-by-node scan.
        #[test]
        fn selector_scan_matches_the_full_scan(
            // Large enough that the matching nodes sometimes reach the feasible-node target
            // (the scan then stops early) and sometimes do not (it covers every node).
            racks in proptest::collection::vec(0u8..2, 1..4000),
            busy in proptest::collection::vec(0i64..9, 1..4000),
            want_rack in 0u8..3,
            pod_gpus in 1i64..5,
            start_at in 0usize..1000,
            seed in 0u64..1000,
            // A one-label selector reads the label index's own list; two intersect.
            one_label in proptest::bool::ANY,
        ) {
            let mut w = World::default();
            let cpu = w.resources.intern("cpu");
            let mem = w.resources.intern("memory");
            let gpu = w.resources.intern(kueuesim_model::resources::GPU);
            for (i, &r) in racks.iter().enumerate() {
                w.nodes.push(kueuesim_model::Node {
                    name: format!("n{i:03}"),
                    labels: kueuesim_model::Labels::new(vec![
                        ("rack".into(), format!("r{r}")),
                        ("pool".into(), "gpu".into()),
                    ]),
                    allocatable: vec![64_000, 512, 8],
                    taints: vec![],
                    unschedulable: false,
                });
            }
            let mut cluster = Cluster::new(&w);
            for (i, &b) in busy.iter().enumerate().take(racks.len()) {
                let used = kueuesim_model::ResourceList::from_pairs(vec![
                    (cpu, b * 4_000), (mem, b * 32), (gpu, b.min(8)),
                ]);
                cluster.apply(&w, NodeId::from_index(i), &used, 1);
            }
            let pod = PodNeeds {
                requests: kueuesim_model::ResourceList::from_pairs(vec![
                    (cpu, 2_000), (mem, 16), (gpu, pod_gpus),
                ]),
                node_selector: kueuesim_model::Labels::new(if one_label {
                    vec![("rack".into(), format!("r{want_rack}"))]
                } else {
                    vec![
                        ("rack".into(), format!("r{want_rack}")),
                        ("pool".into(), "gpu".into()),
                    ]
                }),
                tolerations: vec![],
            };
            let n = w.nodes.len();
            let start = start_at % n;
            cluster.next_start[0] = start;
            let (expect_node, expect_processed) = reference_pick(&w, &cluster, &pod, start, seed);
            // The FitError from the label index equals the node-by-node count.
            proptest::prop_assert_eq!(
                super::super::fit_error_all(&w, &mut cluster, &pod),
                super::super::fit_error(&w, &cluster.nodes, &pod, &cluster.all_nodes)
            );
            let pods = vec![(pod, vec![None])];
            let out = place(&w, &mut cluster, &pods, seed);
            proptest::prop_assert_eq!(out.bound.first().map(|b| b.2), expect_node);
            proptest::prop_assert_eq!(cluster.next_start[0], (start + expect_processed) % n);
            if out.unplaced.is_some() {
                // The same pod on the same capacity: answered from the unplaceable memo, with
                // the FitError of a full scan and the rotating start where it was.
                let before = cluster.next_start[0];
                let again = place(&w, &mut cluster, &pods, seed);
                proptest::prop_assert_eq!(&again, &out);
                proptest::prop_assert_eq!(cluster.next_start[0], before);
                proptest::prop_assert_eq!(cluster.unplaceable.0, cluster.nodes.version());
                let fresh = super::super::fit_error(&w, &cluster.nodes, &pods[0].0, &cluster.all_nodes);
                proptest::prop_assert_eq!(&again.unplaced.as_ref().map(|u| u.2.clone()), &Some(fresh));
            }
        }
    }

    proptest::proptest! {
        /// Without a nodeSelector the scan skips the nodes the capacity bitsets rule out 64
        /// at a time and answers each occupancy class once, yet picks the node and advances
        /// the rotating start exactly as the node-by-node scan; pod after pod, as the bitsets
        /// and classes follow every bind, and again after a release. Nodes of two sizes
        /// (a class is a whole capacity state, allocatable included); in tests the class
        /// registry starts over after 16 states, so its restarts are exercised too. A load
        /// from `full_from` up fills a node's GPUs: with few full nodes the scan finds its
        /// feasible nodes in a part of the cluster and stops past whole blocks of 512 nodes
        /// (counted per class, `NodeClasses::block`), with many it goes round them all.
        #[test]
        fn plain_scan_matches_the_full_scan(
            busy in proptest::collection::vec((0i64..9, proptest::bool::ANY), 1..3000),
            full_from in 4i64..10,
            pod_gpus in 1i64..5,
            pods in 1usize..6,
            start_at in 0usize..3000,
            seed in 0u64..1000,
        ) {
            let mut w = World::default();
            let cpu = w.resources.intern("cpu");
            let mem = w.resources.intern("memory");
            let gpu = w.resources.intern(kueuesim_model::resources::GPU);
            // The small nodes take one pod: their busy load fills them ("Too many pods").
            w.resources.intern("pods");
            for (i, &(_, small)) in busy.iter().enumerate() {
                w.nodes.push(kueuesim_model::Node {
                    name: format!("n{i:04}"),
                    labels: Default::default(),
                    allocatable: if small {
                        vec![48_000, 384, 8, 1]
                    } else {
                        vec![64_000, 512, 8, 110]
                    },
                    taints: vec![],
                    unschedulable: false,
                });
            }
            let mut cluster = Cluster::new(&w);
            for (i, &(b, _)) in busy.iter().enumerate() {
                // Mostly full nodes (8 GPUs busy), as behind a training gang.
                let used = kueuesim_model::ResourceList::from_pairs(vec![
                    (cpu, b * 4_000), (mem, b * 32), (gpu, if b >= full_from { 8 } else { b.min(8) }),
                ]);
                cluster.apply(&w, NodeId::from_index(i), &used, 1);
            }
            let pod = PodNeeds {
                requests: kueuesim_model::ResourceList::from_pairs(vec![
                    (cpu, 2_000), (mem, 16), (gpu, pod_gpus),
                ]),
                node_selector: Default::default(),
                tolerations: vec![],
            };
            let n = w.nodes.len();
            cluster.next_start[0] = start_at % n;
            let mut reference = cluster.clone();
            let pods = vec![(pod.clone(), vec![None; pods])];
            for round in 0..2 {
                // The FitError by occupancy class equals the node-by-node count (nodes that
                // fit give no cause, so any pod can be asked).
                proptest::prop_assert_eq!(
                    super::super::fit_error_all(&w, &mut cluster, &pod),
                    super::super::fit_error(&w, &cluster.nodes, &pod, &cluster.all_nodes)
                );
                let out = place(&w, &mut cluster, &pods, seed);
                // The reference: node by node, each pod on the capacity the pods before it left.
                for idx in 0..pods[0].1.len() {
                    let start = reference.next_start[0];
                    let tie_seed = seed ^ (idx as u64) << 32;
                    let (node, processed) = reference_pick(&w, &reference, &pod, start, tie_seed);
                    reference.next_start[0] = (start + processed) % n;
                    let Some(node) = node else {
                        proptest::prop_assert_eq!(out.unplaced.as_ref().map(|u| u.1), Some(idx));
                        break;
                    };
                    proptest::prop_assert_eq!(out.bound.get(idx).map(|b| b.2), Some(node), "round {}", round);
                    reference.apply(&w, node, &pod.requests, 1);
                }
                proptest::prop_assert_eq!(cluster.next_start[0], reference.next_start[0]);
                // Release the first pod bound and a busy node's load, then place again.
                if let Some(&(_, _, node)) = out.bound.first() {
                    cluster.apply(&w, node, &pod.requests, -1);
                    reference.apply(&w, node, &pod.requests, -1);
                }
                let (b, _) = busy[seed as usize % busy.len()];
                let freed = kueuesim_model::ResourceList::from_pairs(vec![(cpu, b * 4_000)]);
                let at = NodeId::from_index(seed as usize % busy.len());
                cluster.apply(&w, at, &freed, -1);
                reference.apply(&w, at, &freed, -1);
            }
        }
    }

    proptest::proptest! {
        /// The fused hot-loop score equals the two plugins' scores it stands for.
        #[test]
        fn kube_score_is_least_allocated_plus_balanced(
            alloc in proptest::collection::vec(0i64..200_000, 3),
            used in proptest::collection::vec(0i64..200_000, 3),
            req in proptest::collection::vec(0i64..50_000, 3),
        ) {
            let mut w = World::default();
            let ids: Vec<_> = ["cpu", "memory", kueuesim_model::resources::GPU]
                .iter()
                .map(|r| w.resources.intern(r))
                .collect();
            w.nodes.push(kueuesim_model::Node {
                name: "n".into(),
                labels: Default::default(),
                allocatable: alloc.clone(),
                taints: vec![],
                unschedulable: false,
            });
            let mut cluster = Cluster::new(&w);
            let busy = kueuesim_model::ResourceList::from_pairs(
                ids.iter().zip(&used).map(|(&r, &u)| (r, u.min(alloc[r.index()]))).collect(),
            );
            cluster.apply(&w, NodeId(0), &busy, 1);
            let pod = PodNeeds {
                requests: kueuesim_model::ResourceList::from_pairs(
                    ids.iter().zip(&req).map(|(&r, &q)| (r, q)).collect(),
                ),
                node_selector: Default::default(),
                tolerations: vec![],
            };
            let res = cluster.res;
            let rq = [res.cpu, res.memory].map(|r| {
                r.map(|r| (r, pod.requests.get(kueuesim_model::ResourceId::from_index(r))))
            });
            proptest::prop_assert_eq!(
                kube_score(&cluster.nodes, NodeId(0), rq),
                least_allocated(&w, &cluster.nodes, res, NodeId(0), &pod)
                    + balanced_allocation(&w, &cluster.nodes, res, NodeId(0), &pod, false)
            );
        }
    }
}
