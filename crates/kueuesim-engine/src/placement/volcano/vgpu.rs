//! Volcano vGPU: the deviceshare plugin with `deviceshare.VGPUEnable` in HAMi-core mode
//! (Volcano's `pkg/scheduler/plugins/deviceshare` and `pkg/scheduler/api/devices/nvidia/vgpu`).
//! Each node's GPUs as devices with their memory, cores and share count; the plugin's
//! predicate (`checkNodeGPUSharingPredicateAndScore`: which devices a pod's request takes, in
//! the `SchedulePolicy` order), its node score (`ScoreNode`, the score the filter cached) and
//! the allocate action's flat node search for a job with vGPU pods.
//!
//! The devices come from what the volcano-vgpu-device-plugin registers on the node: 100
//! `volcano.sh/vgpu-cores` per GPU, `volcano.sh/vgpu-number` the GPUs times the split count
//! (`deviceSplitCount`, 10 by default: a device's "Number", the pods that may share it), and
//! `volcano.sh/vgpu-memory` the GPUs' memory in MiB. A node lacking any of the three has no
//! vGPU devices (upstream's `NewGPUDevices` returns none), and its pods are checked on
//! node-level counts only. Those counts still apply to every node: the pod's `vgpu-*`
//! requests are extended resources the kubelet counts per node, and the devices add the
//! per-GPU check on top.

use kueuesim_model::gpu::{VGPU_CORES, VGPU_MEMORY, VGPU_NUMBER, VgpuRequest};
use kueuesim_model::{NodeId, VgpuPolicy, World};

use super::{Failure, Scoring, VolcanoJob, fit_error_with, normal_pod_hypernode_score, unplaced};
use crate::placement::node_search::{feasible_nodes_to_find, sample_feasible};
use crate::placement::{Cluster, GangPods, Placement, PodNeeds, counts, tie_key};

/// Devices per node the book keeps (a claim is a bit mask).
pub const MAX_DEVICES: usize = 64;

/// The reason a node whose devices cannot take the pod gives (the status deviceshare's
/// predicate returns from `FilterNode`, which Volcano's `FitErrors` counts per node).
pub const REASON: &str = "hami-vgpuDeviceSharing error";

/// The devices one vGPU pod holds on its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VgpuClaim {
    /// The devices, bit i for device i of the node.
    pub mask: u64,
    /// MiB it holds on each of them.
    pub mib: u32,
    /// Percent of the cores it holds on each of them.
    pub cores: u8,
}

/// Every node's vGPU devices and what the pods on them use (upstream's `GPUDevice`:
/// `Memory`, `Number`, `UsedMem`, `UsedCore`, `UsedNum`).
#[derive(Clone, Debug)]
pub struct VgpuBook {
    /// Per node, its first device (n + 1 entries).
    start: Vec<u32>,
    /// Per device: memory (MiB) and the share count.
    memory: Vec<u32>,
    number: Vec<u32>,
    /// Per device: MiB, core percent and pods in use.
    used_mem: Vec<u32>,
    used_core: Vec<u32>,
    used_num: Vec<u32>,
    /// `deviceshare.SchedulePolicy` and `deviceshare.ScheduleWeight`.
    policy: VgpuPolicy,
    weight: i64,
}

/// Why a node's devices cannot take a request (upstream's error texts; the node's reason in
/// the fit errors is `REASON` either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoFit {
    /// More devices asked than the node has ("no enough gpu cards on node").
    Cards,
    /// Not enough devices pass the checks ("not enough gpu fitted on this node").
    Fitted,
}

impl VgpuBook {
    /// The vGPU devices of `world`'s nodes, all free, when Volcano's deviceshare plugin has
    /// vGPU enabled.
    pub fn new(world: &World) -> Option<VgpuBook> {
        let args = world.config.volcano.deviceshare?;
        let of = |node: &kueuesim_model::Node, name: &str| {
            world
                .resources
                .lookup(name)
                .and_then(|r| node.allocatable.get(r.index()).copied())
                .unwrap_or(0)
        };
        let mut book = VgpuBook {
            start: Vec::with_capacity(world.nodes.len() + 1),
            memory: Vec::new(),
            number: Vec::new(),
            used_mem: Vec::new(),
            used_core: Vec::new(),
            used_num: Vec::new(),
            policy: args.policy,
            weight: args.weight,
        };
        for node in &world.nodes {
            book.start.push(book.memory.len() as u32);
            let (cores, number, mib) = (
                of(node, VGPU_CORES),
                of(node, VGPU_NUMBER),
                of(node, VGPU_MEMORY),
            );
            let gpus = (cores / 100).clamp(0, MAX_DEVICES as i64);
            if gpus == 0 || number <= 0 || mib <= 0 {
                continue;
            }
            let per = |total: i64| (total / gpus).min(i64::from(u32::MAX)) as u32;
            book.memory
                .extend(std::iter::repeat_n(per(mib), gpus as usize));
            book.number
                .extend(std::iter::repeat_n(per(number), gpus as usize));
        }
        book.start.push(book.memory.len() as u32);
        let n = book.memory.len();
        book.used_mem = vec![0; n];
        book.used_core = vec![0; n];
        book.used_num = vec![0; n];
        Some(book)
    }

    /// Devices of `node`.
    #[inline]
    pub fn count(&self, node: NodeId) -> usize {
        let i = node.index();
        (self.start[i + 1] - self.start[i]) as usize
    }

    /// Device `i` of `node`: (memory, number, used memory, used cores, used number).
    pub fn device(&self, node: NodeId, i: usize) -> (u32, u32, u32, u32, u32) {
        let d = self.start[node.index()] as usize + i;
        (
            self.memory[d],
            self.number[d],
            self.used_mem[d],
            self.used_core[d],
            self.used_num[d],
        )
    }

    /// The devices `req` takes on `node` and the summed device score, as
    /// `checkNodeGPUSharingPredicateAndScore` finds them: the node's devices in the policy's
    /// order (binpack: most memory used first; spread: fewest pods first; none: highest index
    /// first; equal ones by index), each taken if it has a share left (`UsedNum < Number`),
    /// the memory, and the cores (at most 100 in all; 100 asks an unused device, and a
    /// device whose cores are all taken takes no pod asking none), until `number` are found.
    /// Each device taken adds `GPUScore` of the device with the pod on it: binpack
    /// 100 × used/total memory; spread 100 for an unused device, which a device holding the
    /// pod never is (upstream scores after `TryAddPod` counted it), so spread scores 0.
    /// A node without vGPU devices takes the pod with score 0 (the plugin has no device
    /// entry for it and skips the node).
    pub fn fit(&self, node: NodeId, req: VgpuRequest) -> Result<(VgpuClaim, f64), NoFit> {
        let n = self.count(node);
        if n == 0 {
            return Ok((
                VgpuClaim {
                    mask: 0,
                    mib: 0,
                    cores: 0,
                },
                0.0,
            ));
        }
        if req.number as usize > n {
            return Err(NoFit::Cards);
        }
        let base = self.start[node.index()] as usize;
        let mut order: Vec<usize> = (0..n).collect();
        match self.policy {
            VgpuPolicy::Binpack => {
                order.sort_by_key(|&i| (std::cmp::Reverse(self.used_mem[base + i]), i));
            }
            VgpuPolicy::Spread => order.sort_by_key(|&i| (self.used_num[base + i], i)),
            VgpuPolicy::None => order.reverse(),
        }
        let cores = u32::from(req.cores);
        let mut mask = 0u64;
        let mut left = req.number;
        let mut score = 0.0;
        // The node's devices have one memory size, so the per-device MiB is one number.
        let mib = req.mib_on(self.memory[base]);
        for i in order {
            let d = base + i;
            if self.number[d] <= self.used_num[d]
                || self.memory[d].saturating_sub(self.used_mem[d]) < mib
                || self.used_core[d] + cores > 100
                || (cores == 100 && self.used_num[d] > 0)
                || (self.used_core[d] == 100 && cores == 0)
            {
                continue;
            }
            mask |= 1 << i;
            left -= 1;
            score += match self.policy {
                VgpuPolicy::Binpack => {
                    100.0 * f64::from(self.used_mem[d] + mib) / f64::from(self.memory[d])
                }
                VgpuPolicy::Spread | VgpuPolicy::None => 0.0,
            };
            if left == 0 {
                return Ok((
                    VgpuClaim {
                        mask,
                        mib,
                        cores: req.cores,
                    },
                    score,
                ));
            }
        }
        Err(NoFit::Fitted)
    }

    /// The deviceshare plugin's node-order score from a device score: rounded
    /// (`math.Floor(s + 0.5)`) times `deviceshare.ScheduleWeight`; 0 with no weight.
    pub fn node_score(&self, device_score: f64) -> f64 {
        if self.weight > 0 {
            (device_score + 0.5).floor() * self.weight as f64
        } else {
            0.0
        }
    }

    /// Takes (sign 1) or gives back (sign -1) `claim` on `node`. Panics (an invariant) if a
    /// device would go over its memory, 100 % of its cores or its share count, or below 0.
    pub fn apply(&mut self, node: NodeId, claim: VgpuClaim, sign: i64) {
        let base = self.start[node.index()] as usize;
        let mut mask = claim.mask;
        while mask != 0 {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let d = base + i;
            let step = |v: u32, by: u32, max: u32, what: &str| -> u32 {
                let after = i64::from(v) + sign * i64::from(by);
                assert!(
                    (0..=i64::from(max)).contains(&after),
                    "vGPU device {i} of node {} would have {after} {what} used of {max}",
                    node.index()
                );
                after as u32
            };
            self.used_mem[d] = step(self.used_mem[d], claim.mib, self.memory[d], "MiB");
            self.used_core[d] = step(self.used_core[d], u32::from(claim.cores), 100, "% cores");
            self.used_num[d] = step(self.used_num[d], 1, self.number[d], "shares");
        }
    }

    /// Checks every device is within its memory, cores and share count, and that the claims
    /// given hold exactly what the devices have in use (conservation on bind and release).
    pub fn check(&self, claims: impl Iterator<Item = (NodeId, VgpuClaim)>) -> Result<(), String> {
        let n = self.memory.len();
        let (mut mem, mut core, mut num) = (vec![0u64; n], vec![0u64; n], vec![0u64; n]);
        for (node, c) in claims {
            if self.count(node) < MAX_DEVICES && c.mask >> self.count(node) != 0 {
                return Err(format!(
                    "a vGPU claim on node {} names a device it lacks",
                    node.index()
                ));
            }
            let base = self.start[node.index()] as usize;
            let mut mask = c.mask;
            while mask != 0 {
                let d = base + mask.trailing_zeros() as usize;
                mask &= mask - 1;
                mem[d] += u64::from(c.mib);
                core[d] += u64::from(c.cores);
                num[d] += 1;
            }
        }
        for d in 0..n {
            let held = (mem[d], core[d], num[d]);
            let used = (
                u64::from(self.used_mem[d]),
                u64::from(self.used_core[d]),
                u64::from(self.used_num[d]),
            );
            if held != used {
                return Err(format!(
                    "vGPU device {d} has (MiB, cores, pods) {used:?} in use while its claims hold {held:?}"
                ));
            }
            if used.0 > u64::from(self.memory[d])
                || used.1 > 100
                || used.2 > u64::from(self.number[d])
            {
                return Err(format!(
                    "vGPU device {d} is over its memory {}, 100 % cores or {} shares: {used:?}",
                    self.memory[d], self.number[d]
                ));
            }
        }
        Ok(())
    }
}

/// Allocates a Volcano job some of whose pod sets ask vGPU devices (`reqs`, per pod set):
/// the gang (minMember) in one statement, then one pod per statement, as `volcano::place`
/// does without topology; each pod to the best of the sampled nodes that pass the
/// predicates and the deviceshare filter, scored by the node-order plugins plus the
/// deviceshare score. A job's network topology, subgroups and minTaskMember are not applied
/// to such jobs (docs/semantics.md). The claims stay taken in `cluster.vgpu` and are returned
/// beside the bindings.
pub fn place(
    world: &World,
    cluster: &mut Cluster,
    job: &VolcanoJob<'_>,
    reqs: &[Option<VgpuRequest>],
) -> Placement {
    let mut pods = job.pods.to_vec();
    let mut out = Placement::default();
    let total: usize = pods.iter().map(|(_, s)| s.len()).sum();
    loop {
        let (bound, pending) = counts(&pods);
        if pending == 0 {
            break;
        }
        let need = if bound < job.min_member {
            (job.min_member - bound).min(pending)
        } else {
            1
        };
        match attempt(world, cluster, &pods, need, reqs, job.seed) {
            Ok(b) => {
                for (ps, idx, node, claim) in b {
                    pods[ps].1[idx] = Some(node);
                    out.bound.push((ps, idx, node));
                    if claim.mask != 0 {
                        out.vgpu.push((ps, idx, claim));
                    }
                }
            }
            Err(f) => {
                let ready = bound >= job.min_member;
                out.unplaced = Some(unplaced(job, f, ready, bound, pending, total));
                break;
            }
        }
    }
    out
}

/// One statement: each of `need` pending pods to the best node, committed as it goes (so
/// later pods see its devices), all undone if one finds none.
fn attempt(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    need: usize,
    reqs: &[Option<VgpuRequest>],
    seed: u64,
) -> Result<Vec<(usize, usize, NodeId, VgpuClaim)>, Failure> {
    let all = cluster.all_nodes.clone();
    let scoring = Scoring::new(world, cluster.res);
    let mut bound: Vec<(usize, usize, NodeId, VgpuClaim)> = Vec::new();
    for (ps, (needs, slots)) in pods.iter().enumerate() {
        let req = reqs.get(ps).copied().flatten();
        for (idx, slot) in slots.iter().enumerate() {
            if bound.len() >= need {
                return Ok(bound);
            }
            if slot.is_some() {
                continue;
            }
            let best = best_node(world, cluster, &all, &scoring, needs, req, seed, ps, idx);
            match best {
                Some((node, claim)) => {
                    cluster.apply(world, node, &needs.requests, 1);
                    if let Some(book) = cluster.vgpu.as_mut() {
                        book.apply(node, claim, 1);
                    }
                    bound.push((ps, idx, node, claim));
                }
                None => {
                    let fit = why_not(world, cluster, &all, needs, req);
                    let schedulable = bound.len();
                    for &(ps, _, n, claim) in bound.iter().rev() {
                        if let Some(book) = cluster.vgpu.as_mut() {
                            book.apply(n, claim, -1);
                        }
                        cluster.apply(world, n, &pods[ps].0.requests, -1);
                    }
                    return Err(Failure {
                        pod: (ps, idx),
                        fit,
                        schedulable,
                    });
                }
            }
        }
    }
    Ok(bound)
}

/// The node for one pod: Volcano's feasible-node sampling from its rotating start, a node
/// counting as feasible when the predicates and the deviceshare filter pass; the best
/// node-order score plus the deviceshare score (and the network-topology-aware plugin's
/// normal-pod score), ties at random.
#[allow(clippy::too_many_arguments)]
fn best_node(
    world: &World,
    cluster: &mut Cluster,
    all: &[NodeId],
    scoring: &Scoring,
    needs: &PodNeeds,
    req: Option<VgpuRequest>,
    seed: u64,
    ps: usize,
    idx: usize,
) -> Option<(NodeId, VgpuClaim)> {
    let none = VgpuClaim {
        mask: 0,
        mib: 0,
        cores: 0,
    };
    let want = feasible_nodes_to_find(all.len());
    let start = cluster.next_start[1];
    let (found, processed) = match (req, cluster.vgpu.as_ref()) {
        (Some(req), Some(book)) => {
            let n = all.len();
            let mut found = Vec::new();
            let mut processed = 0;
            while processed < n && found.len() < want {
                let node = all[(start + processed) % n];
                processed += 1;
                if crate::placement::feasible(world, &cluster.nodes, node, needs)
                    && let Ok((claim, s)) = book.fit(node, req)
                {
                    found.push((node, claim, book.node_score(s)));
                }
            }
            (found, processed)
        }
        _ => {
            let (nodes, processed) =
                sample_feasible(world, &cluster.nodes, all, needs, start, want);
            (
                nodes.into_iter().map(|n| (n, none, 0.0)).collect(),
                processed,
            )
        }
    };
    if !all.is_empty() {
        cluster.next_start[1] = (start + processed) % all.len();
    }
    found
        .iter()
        .map(|&(n, claim, device)| {
            let s = scoring.node_order(world, &cluster.nodes, n, needs)
                + normal_pod_hypernode_score(world, cluster, scoring, n, needs)
                + device;
            (
                s,
                tie_key(seed ^ ((ps as u64) << 40) ^ idx as u64, n),
                n,
                claim,
            )
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
        .map(|(_, _, n, claim)| (n, claim))
}

/// Volcano's fit errors for a pod no node took: the predicates' reasons, and `REASON` for a
/// node that passed them but whose devices cannot take the request.
fn why_not(
    world: &World,
    cluster: &Cluster,
    all: &[NodeId],
    needs: &PodNeeds,
    req: Option<VgpuRequest>,
) -> String {
    let device = |n: NodeId| -> Option<&'static str> {
        let (req, book) = (req?, cluster.vgpu.as_ref()?);
        book.fit(n, req).is_err().then_some(REASON)
    };
    fit_error_with(world, &cluster.nodes, needs, all, &device)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::gpu::VgpuMemory;

    /// One node of `gpus` devices of 16000 MiB and 10 shares each.
    fn book(gpus: usize, policy: VgpuPolicy) -> VgpuBook {
        VgpuBook {
            start: vec![0, gpus as u32],
            memory: vec![16000; gpus],
            number: vec![10; gpus],
            used_mem: vec![0; gpus],
            used_core: vec![0; gpus],
            used_num: vec![0; gpus],
            policy,
            weight: 1,
        }
    }

    fn req(number: u32, memory: VgpuMemory, cores: u8) -> VgpuRequest {
        VgpuRequest {
            number,
            memory,
            cores,
        }
    }

    const N: NodeId = NodeId(0);

    /// Binpack takes the device with the most memory used, and scores
    /// 100 × used/total with the pod on it (`GPUScore` after `TryAddPod`).
    #[test]
    fn binpack_picks_the_fullest_device_and_scores_its_memory() {
        let mut b = book(2, VgpuPolicy::Binpack);
        b.apply(
            N,
            VgpuClaim {
                mask: 0b10,
                mib: 4000,
                cores: 0,
            },
            1,
        );
        let (c, s) = b.fit(N, req(1, VgpuMemory::Mib(4000), 0)).unwrap();
        assert_eq!(c.mask, 0b10);
        assert_eq!(s, 50.0);
        // Two devices: device 1 (used 4000) then device 0; 50 + 25.
        let (c, s) = b.fit(N, req(2, VgpuMemory::Mib(4000), 0)).unwrap();
        assert_eq!(c.mask, 0b11);
        assert_eq!(s, 75.0);
    }

    /// Spread takes the device with the fewest pods; its score is 0 (upstream scores the
    /// device after counting the pod on it, so `UsedNum == 0` never holds).
    #[test]
    fn spread_picks_the_least_shared_device_and_scores_nothing() {
        let mut b = book(3, VgpuPolicy::Spread);
        for mask in [0b001, 0b100] {
            b.apply(
                N,
                VgpuClaim {
                    mask,
                    mib: 1000,
                    cores: 10,
                },
                1,
            );
        }
        let (c, s) = b.fit(N, req(1, VgpuMemory::Mib(1000), 10)).unwrap();
        assert_eq!((c.mask, s), (0b010, 0.0));
        // No policy: from the highest index down.
        let mut b = book(3, VgpuPolicy::None);
        b.weight = 0;
        assert_eq!(
            b.fit(N, req(2, VgpuMemory::Mib(1), 0)).unwrap().0.mask,
            0b110
        );
        assert_eq!(b.node_score(80.0), 0.0);
    }

    /// cores = 100 asks a device no pod uses; a device whose cores are all taken takes no
    /// pod asking none; the share count bounds the pods per device.
    #[test]
    fn exclusive_cores_and_share_count() {
        let mut b = book(1, VgpuPolicy::Binpack);
        let small = req(1, VgpuMemory::Mib(100), 0);
        b.apply(N, b.fit(N, small).unwrap().0, 1);
        assert_eq!(
            b.fit(N, req(1, VgpuMemory::Mib(100), 100)),
            Err(NoFit::Fitted)
        );
        let mut b = book(1, VgpuPolicy::Binpack);
        let whole = req(1, VgpuMemory::Mib(100), 100);
        b.apply(N, b.fit(N, whole).unwrap().0, 1);
        assert_eq!(b.fit(N, small), Err(NoFit::Fitted));
        let mut b = book(1, VgpuPolicy::Binpack);
        for _ in 0..10 {
            b.apply(N, b.fit(N, small).unwrap().0, 1);
        }
        assert_eq!(b.fit(N, small), Err(NoFit::Fitted));
        assert_eq!(b.fit(N, req(2, VgpuMemory::Mib(1), 0)), Err(NoFit::Cards));
    }

    /// A percentage is of the device's memory, truncated; with neither memory request the
    /// pod asks the whole device's memory.
    #[test]
    fn memory_percentage() {
        let mut b = book(1, VgpuPolicy::Binpack);
        let (c, _) = b.fit(N, req(1, VgpuMemory::Percent(33), 0)).unwrap();
        assert_eq!(c.mib, 5280);
        b.apply(N, c, 1);
        assert_eq!(
            b.fit(N, req(1, VgpuMemory::Percent(100), 0)),
            Err(NoFit::Fitted)
        );
        assert!(b.fit(N, req(1, VgpuMemory::Percent(67), 0)).is_ok());
        assert!(b.fit(N, req(1, VgpuMemory::Percent(68), 0)).is_err());
        b.apply(N, c, -1);
        assert_eq!(b.check(std::iter::empty()), Ok(()));
    }

    /// The node score is the device score rounded, times the weight.
    #[test]
    fn node_score_rounds_and_weighs() {
        let mut b = book(1, VgpuPolicy::Binpack);
        b.weight = 3;
        assert_eq!(b.node_score(37.5), 114.0);
        assert_eq!(b.node_score(37.49), 111.0);
    }
}
