//! kube-scheduler with a shared-GPU score plugin (`spec.gpuPlacement.policy` other than
//! `Default`): the placement policies the FGD simulator (hkust-adsl/
//! kubernetes-scheduler-simulator, `pkg/simulator/plugin/`) compares, each the only score
//! plugin, over every feasible node (`percentageOfNodesToScore: 100`), the best integer score
//! winning and ties going to the first node in one random order of the nodes drawn per run
//! (the simulator's kube-scheduler fork takes the smallest node name, and its node names
//! start with a random rank; `RandomScore` draws per pod). Filters are kube-scheduler's
//! plus the GPU-share filter (`Open-Gpu-Share`: whole GPUs on free devices, a share within one
//! device). The device a share takes is the policy's (`gpuSelMethod`): the FGD device for FGD,
//! a random fitting device for Random, the best-fitting device otherwise; whole GPUs take the
//! lowest-indexed free devices (`AllocateExclusiveGpuId`).

use kueuesim_model::gpu::{GpuDemand, GpuPolicy, MILLI};
use kueuesim_model::{NodeId, ResourceId, World};

use crate::placement::devices::{self, DeviceBook, DeviceChoice, FragCalc};
use crate::placement::{Cluster, GangPods, Placement, PodNeeds, tie_key};

/// kube-scheduler's `MaxNodeScore`.
const MAX_SCORE: i64 = 100;
/// The largest node of the FGD simulator's clusters, for normalising (`MaxSpecCpu`,
/// `MaxSpecGpu`: 128 cores, 8 GPUs).
const MAX_SPEC_CPU: f64 = 128_000.0;
const MAX_SPEC_GPU: i64 = 8000;

/// One pod as the scores see it.
#[derive(Clone, Copy, Debug)]
pub struct PodShape {
    /// Millicores requested.
    pub cpu: i64,
    /// GPU demand (None: a CPU-only pod).
    pub gpu: Option<GpuDemand>,
}

/// A node as the scores see it.
#[derive(Clone, Copy, Debug)]
pub struct NodeView<'a> {
    /// Free millicores.
    pub cpu_free: i64,
    /// Free milli-GPUs per device.
    pub free: &'a [u16],
    /// GPU pods per kind (`Devices::kinds`).
    pub kinds: &'a [u16; devices::KINDS],
}

/// The score of `node` for `pod` under `policy` and, for a share, the device the policy
/// would give it (the node is feasible). `devices` serves FGD's fragmentation memo;
/// `draw` is the seeded random key of a device (Random's device choice).
pub fn score(
    policy: GpuPolicy,
    frag: &mut FragCalc,
    node: NodeView<'_>,
    pod: PodShape,
    draw: impl Fn(usize) -> u64,
) -> (i64, DeviceChoice) {
    let left: i64 = node.free.iter().map(|&f| i64::from(f)).sum();
    let best_fit = DeviceChoice::BestFit;
    match policy {
        // Random and Default never reach here with a score that matters: the caller draws
        // the node (Random) or scores with kube-scheduler's plugins (Default).
        GpuPolicy::Default => (0, best_fit),
        GpuPolicy::Random => {
            let choice = match pod.gpu {
                Some(GpuDemand::Share(m)) => node
                    .free
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| **f >= m)
                    .max_by_key(|&(i, _)| draw(i))
                    .map_or(best_fit, |(i, _)| DeviceChoice::Index(i)),
                _ => best_fit,
            };
            (0, choice)
        }
        GpuPolicy::DotProduct => {
            // `DotProductScore` with the merged GPU dimension, normalised by the largest
            // node: 1 − (free · request)/2 over (cpu, milli-GPU).
            let req = pod.gpu.map_or(0, GpuDemand::total_milli);
            let dot = (node.cpu_free as f64 / MAX_SPEC_CPU) * (pod.cpu as f64 / MAX_SPEC_CPU)
                + (left as f64 / MAX_SPEC_GPU as f64) * (req as f64 / MAX_SPEC_GPU as f64);
            (((1.0 - dot / 2.0) * MAX_SCORE as f64) as i64, best_fit)
        }
        GpuPolicy::BestFit => {
            // `BestFitScore`: what is left of (cpu, milli-GPU) after the pod, normalised by
            // the largest node, weights ½; less left scores higher.
            let req = pod.gpu.map_or(0, GpuDemand::total_milli);
            let rest = (node.cpu_free - pod.cpu) as f64 / MAX_SPEC_CPU * 0.5
                + (left - req) as f64 / MAX_SPEC_GPU as f64 * 0.5;
            (((1.0 - rest) * MAX_SCORE as f64) as i64, best_fit)
        }
        GpuPolicy::Clustering => {
            // `GpuClusteringScore`: by the GPU kinds the node runs, then by how little GPU it
            // has free (integer arithmetic as upstream).
            let Some(d) = pod.gpu else {
                return (0, best_fit);
            };
            let mine = node.kinds[DeviceBook::kind_of(d)] > 0;
            let present = node.kinds.iter().filter(|&&k| k > 0).count();
            let band = match (mine, present) {
                (true, 1) => 3,
                (true, _) => 2,
                (false, 0) => 1,
                (false, _) => 0,
            };
            (
                MAX_SCORE / 4 * (MAX_SPEC_GPU - left) / MAX_SPEC_GPU + MAX_SCORE * band / 4,
                best_fit,
            )
        }
        GpuPolicy::Packing => (packing(node.free, pod.gpu), best_fit),
        GpuPolicy::Fgd => fgd(frag, node, pod),
    }
}

/// `GpuPackingScore`: a share on a partly used GPU scores 50 to 100 (the fuller the better),
/// pods that need free GPUs of a partly used node 33 to 50, an idle node at most 33.
fn packing(free: &[u16], gpu: Option<GpuDemand>) -> i64 {
    let Some(d) = gpu else { return 0 };
    let fully_free = free.iter().filter(|&&f| i64::from(f) == MILLI).count() as i64;
    if fully_free == free.len() as i64 {
        return (MAX_SCORE / 3 - fully_free).max(fully_free);
    }
    // Least free first (a stable sort: index order among equals).
    let mut order: Vec<usize> = (0..free.len()).collect();
    order.sort_by_key(|&i| free[i]);
    let per = d.milli_per_device();
    let mut want = d.devices();
    let (mut free_used, mut ratio) = (0i64, 0i64);
    for i in order {
        if want == 0 {
            break;
        }
        let f = i64::from(free[i]);
        if per <= f {
            want -= 1;
            if f == MILLI {
                free_used += 1;
            }
            ratio += f * 100 / MILLI;
        }
    }
    if want != 0 {
        return 0;
    }
    if free_used > 0 {
        return (MAX_SCORE / 2 - free_used).max(MAX_SCORE / 3);
    }
    (MAX_SCORE - ratio / 10).max(MAX_SCORE / 2)
}

/// `FGDScore`: sigmoid of the node's fragmentation drop (milli-GPUs / 1000) × 100; for a
/// share, the device with the best score (the lowest index among equals). The node's devices
/// are tallied once; each candidate changes a device or a few (`FragCalc::moved`).
fn fgd(frag: &mut FragCalc, node: NodeView<'_>, pod: PodShape) -> (i64, DeviceChoice) {
    let before = frag.fragmentation(node.cpu_free, node.free);
    let cpu_after = node.cpu_free - pod.cpu;
    let score = |after: f64| ((sigmoid((before - after) / 1000.0)) * MAX_SCORE as f64) as i64;
    match pod.gpu {
        Some(GpuDemand::Share(m)) => {
            let mut best: Option<(i64, usize)> = None;
            for (i, &f) in node.free.iter().enumerate() {
                // Devices with equal free milli give equal states: the first stands for all.
                if f < m || node.free[..i].contains(&f) {
                    continue;
                }
                let s = score(frag.moved(cpu_after, &[(f, f - m)]));
                if best.is_none_or(|(b, _)| s > b) {
                    best = Some((s, i));
                }
            }
            best.map_or((0, DeviceChoice::BestFit), |(s, i)| {
                (s, DeviceChoice::Index(i))
            })
        }
        Some(GpuDemand::Whole(n)) => {
            // Which free devices does not change the fragmentation.
            let n = (n as usize).min(devices::MAX_DEVICES);
            let moves = [(MILLI as u16, 0u16); devices::MAX_DEVICES];
            (
                score(frag.moved(cpu_after, &moves[..n])),
                DeviceChoice::BestFit,
            )
        }
        None => (score(frag.moved(cpu_after, &[])), DeviceChoice::BestFit),
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Places every pending pod of `pods` one by one under the world's GPU policy; a pod that fits
/// nowhere stays pending (with the rest of its pod set), later pod sets are still tried.
pub fn place(world: &World, cluster: &mut Cluster, pods: &GangPods, seed: u64) -> Placement {
    let policy = world.config.gpu.policy;
    let cpu = cluster.res.cpu;
    let mut out = Placement::default();
    'sets: for (ps, (needs, slots)) in pods.iter().enumerate() {
        let Some(demand) = cluster
            .devices
            .as_ref()
            .map(|d| d.book.demand(&needs.requests))
        else {
            return out;
        };
        let shape = PodShape {
            cpu: cpu.map_or(0, |c| needs.requests.get(ResourceId::from_index(c))),
            gpu: demand,
        };
        for (idx, slot) in slots.iter().enumerate() {
            if slot.is_some() {
                continue;
            }
            let tie_seed = seed ^ (idx as u64) << 32 ^ ps as u64;
            let Some((node, choice)) = best_node(world, cluster, needs, shape, policy, tie_seed)
            else {
                let why = crate::placement::fit_error_all(world, cluster, needs);
                out.unplaced.get_or_insert((ps, idx, why));
                continue 'sets;
            };
            cluster.apply(world, node, &needs.requests, 1);
            if let Some(d) = demand {
                let book = &mut cluster.devices.as_mut().expect("device mode").book;
                let claim = book
                    .claim(node, d, choice)
                    .expect("the filter found room on this node");
                book.apply(node, claim, 1);
                out.claims.push((ps, idx, claim));
            }
            out.bound.push((ps, idx, node));
        }
    }
    out
}

/// The best feasible node for one pod and the device choice there, if any node is feasible.
fn best_node(
    world: &World,
    cluster: &mut Cluster,
    needs: &PodNeeds,
    shape: PodShape,
    policy: GpuPolicy,
    tie_seed: u64,
) -> Option<(NodeId, DeviceChoice)> {
    let plain = cluster.statically_plain(needs);
    let cpu = cluster.res.cpu;
    let run_seed = world.config.seed ^ 0x6e6f_6465_6f72_6472;
    let Cluster { nodes, devices, .. } = cluster;
    let devices = devices.as_mut().expect("device mode");
    let (book, frag) = (&devices.book, &mut devices.frag);
    // FGD's decisions are memoised per pod shape and node state (`FragCalc::memoised`).
    let shape_id = match policy {
        GpuPolicy::Fgd => frag.shape_id(world.nodes.len(), (shape.cpu, shape.gpu)),
        _ => None,
    };
    let mut best: Option<(i64, u64, NodeId, DeviceChoice)> = None;
    for n in 0..world.nodes.len() {
        let node = NodeId::from_index(n);
        if !nodes.fits(node, &needs.requests)
            || shape.gpu.is_some_and(|d| !book.fits(node, d))
            || !(plain || crate::placement::statically_feasible(world, node, needs))
        {
            continue;
        }
        let view = NodeView {
            cpu_free: cpu.map_or(0, |c| nodes.free(node, c)),
            free: book.free(node),
            kinds: book.kinds(node),
        };
        let memo = shape_id.and_then(|id| frag.memoised(id, node, view.cpu_free, view.free));
        let (s, choice) = match memo {
            Some(decision) => decision,
            None => {
                let decision = score(policy, frag, view, shape, |i| {
                    tie_key(tie_seed ^ 0x5bd1_e995, NodeId::from_index(i))
                });
                if let Some(id) = shape_id {
                    frag.memoise(id, node, view.cpu_free, view.free, decision);
                }
                decision
            }
        };
        let t = match policy {
            // `RandomScore` gives one node drawn per pod the only non-zero score; drawing
            // among the all-zero scores per pod is the same draw.
            GpuPolicy::Random => tie_key(tie_seed, node),
            // The simulator's kube-scheduler (its fork of v1.20.5) breaks equal scores by the
            // lexicographically smallest node name, not `selectHost`'s reservoir sampling,
            // and names every node `<rank>-<name>` with `rank` a random permutation drawn
            // once (`syncClusterResourceList`): one random order of the nodes for the whole
            // run. Here the order is a key per node from the run's seed, the smallest
            // winning, so pods that score the same nodes equally all go to the same first
            // one (an idle node is filled before the next is opened).
            _ => !tie_key(run_seed, node),
        };
        if best.is_none_or(|(bs, bt, _, _)| (s, t) > (bs, bt)) {
            best = Some((s, t, node, choice));
        }
    }
    best.map(|(_, _, n, c)| (n, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::gpu::{GPU_MILLI, TargetPod};
    use kueuesim_model::{Node, ResourceList};

    /// Two 2-GPU nodes with 32 cores; node 0's device 1 has `taken` milli in use.
    fn two_nodes(policy: GpuPolicy, taken: i64) -> (World, Cluster) {
        let (w, mut cluster) = idle_nodes(policy, 2);
        let milli = w.resources.lookup(GPU_MILLI).unwrap();
        let req = ResourceList::from_pairs(vec![(milli, taken)]);
        let book = &mut cluster.devices.as_mut().unwrap().book;
        let claim = book
            .claim(
                NodeId(0),
                GpuDemand::Share(taken as u16),
                DeviceChoice::Index(1),
            )
            .unwrap();
        book.apply(NodeId(0), claim, 1);
        cluster.apply(&w, NodeId(0), &req, 1);
        (w, cluster)
    }

    /// `n` idle 2-GPU nodes with 32 cores.
    fn idle_nodes(policy: GpuPolicy, n: usize) -> (World, Cluster) {
        let mut w = World::default();
        let cpu = w.resources.intern("cpu");
        let milli = w.resources.intern(GPU_MILLI);
        for i in 0..n {
            let mut alloc = vec![0; 2];
            alloc[cpu.index()] = 32_000;
            alloc[milli.index()] = 2000;
            w.nodes.push(Node {
                name: format!("n{i}"),
                labels: Default::default(),
                allocatable: alloc,
                taints: vec![],
                unschedulable: false,
            });
        }
        w.config.gpu.devices = true;
        w.config.gpu.policy = policy;
        w.config.gpu.target = vec![
            TargetPod {
                cpu_milli: 1000,
                gpu: Some(GpuDemand::Share(500)),
                freq: 0.5,
            },
            TargetPod {
                cpu_milli: 1000,
                gpu: Some(GpuDemand::Whole(1)),
                freq: 0.5,
            },
        ];
        let cluster = Cluster::new(&w);
        (w, cluster)
    }

    fn place_share(w: &World, cluster: &mut Cluster, m: i64, seed: u64) -> (NodeId, u64) {
        let milli = w.resources.lookup(GPU_MILLI).unwrap();
        let cpu = w.resources.lookup("cpu").unwrap();
        let pods = vec![(
            PodNeeds {
                requests: ResourceList::from_pairs(vec![(cpu, 1000), (milli, m)]),
                node_selector: Default::default(),
                tolerations: vec![],
            },
            vec![None],
        )];
        let out = place(w, cluster, &pods, seed);
        (out.bound[0].2, out.claims[0].2.mask)
    }

    #[test]
    fn fgd_fills_the_partly_used_gpu() {
        // Node 0's device 1 has 500 free: a 500 share there leaves no fragment, while on a
        // whole GPU it would leave 500 no whole-GPU pod can use.
        for seed in 0..20 {
            let (w, mut cluster) = two_nodes(GpuPolicy::Fgd, 500);
            assert_eq!(place_share(&w, &mut cluster, 500, seed), (NodeId(0), 0b10));
        }
    }

    #[test]
    fn packing_and_best_fit_prefer_the_partly_used_gpu() {
        for policy in [GpuPolicy::Packing, GpuPolicy::BestFit] {
            for seed in 0..20 {
                let (w, mut cluster) = two_nodes(policy, 300);
                assert_eq!(place_share(&w, &mut cluster, 400, seed), (NodeId(0), 0b10));
            }
        }
    }

    #[test]
    fn equal_scores_go_to_the_first_node_of_one_order_per_run() {
        // On identical idle nodes every node scores the same for a share, under each policy
        // that scores; the simulator's scheduler then takes the smallest node name, whose
        // random rank prefix is drawn once per run. So whatever the pod (its placement seed),
        // the same node wins; under `selectHost`'s reservoir sampling it would vary.
        for policy in [
            GpuPolicy::DotProduct,
            GpuPolicy::Clustering,
            GpuPolicy::Packing,
            GpuPolicy::BestFit,
            GpuPolicy::Fgd,
        ] {
            let chosen: Vec<NodeId> = (0..12)
                .map(|seed| {
                    let (w, mut cluster) = idle_nodes(policy, 6);
                    place_share(&w, &mut cluster, 300, seed).0
                })
                .collect();
            assert!(
                chosen.iter().all(|&n| n == chosen[0]),
                "{policy:?}: {chosen:?}"
            );
        }
    }

    #[test]
    fn equal_scores_fill_one_node_before_the_next() {
        // Packing scores a CPU-only pod 0 on every node: each such pod goes to the first node
        // of the run's order until its 32 cores are taken (16 pods of 2 cores), then to the
        // next one.
        let (w, mut cluster) = idle_nodes(GpuPolicy::Packing, 4);
        let cpu = w.resources.lookup("cpu").unwrap();
        let pods = vec![(
            PodNeeds {
                requests: ResourceList::from_pairs(vec![(cpu, 2000)]),
                node_selector: Default::default(),
                tolerations: vec![],
            },
            vec![None; 17],
        )];
        let out = place(&w, &mut cluster, &pods, 7);
        let nodes: Vec<NodeId> = out.bound.iter().map(|b| b.2).collect();
        assert!(nodes[..16].iter().all(|&n| n == nodes[0]), "{nodes:?}");
        assert_ne!(nodes[16], nodes[0]);
    }

    #[test]
    fn random_draws_a_node_per_pod() {
        // `RandomScore` draws the node per pod, so different pods land on different nodes.
        let chosen: std::collections::BTreeSet<NodeId> = (0..12)
            .map(|seed| {
                let (w, mut cluster) = idle_nodes(GpuPolicy::Random, 6);
                place_share(&w, &mut cluster, 300, seed).0
            })
            .collect();
        assert!(chosen.len() > 1, "{chosen:?}");
    }

    #[test]
    fn packing_scores_as_upstream() {
        // Idle 8-GPU node: max(33 − 8, 8).
        assert_eq!(packing(&[1000; 8], Some(GpuDemand::Share(500))), 25);
        // A share on a used GPU with 600 free: 100 − 60/10.
        assert_eq!(packing(&[1000, 600], Some(GpuDemand::Share(500))), 94);
        // A whole GPU on a partly used node: 50 − 1.
        assert_eq!(packing(&[1000, 600], Some(GpuDemand::Whole(1))), 49);
        assert_eq!(packing(&[1000, 600], None), 0);
    }
}
