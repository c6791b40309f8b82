//! GPUs as physical devices (`spec.gpuPlacement`, openb `gpuSharing: device`): each node's
//! devices with their free milli-GPUs, the claims pods hold on them (whole devices, or a share
//! of one), the kinds of GPU pods each node runs (for the FGD simulator's clustering score),
//! and node fragmentation against the target workload, computed from per-demand tallies of a
//! node's devices so that moving one device's free milli updates it without a rescan, with
//! FGD's decision per pod shape and node kept while the node's state stays the same.
//!
//! The node-level resources (`NodeCapacity`) still count every request, as the kubelet's
//! allocatable does: a node offers `kueuesim.io/gpu-milli` 1000 per device, and a pod's share
//! is one request. The devices add what a GPU-sharing device plugin enforces on top (the
//! Alibaba gpushare scheduler extender the FGD simulator models as `Open-Gpu-Share`): whole
//! GPUs only on devices no one shares, a share within one device.
//!
//! KAI's GPU sharing (`gpu-fraction`, `gpu-memory`) differs in how the node sees a share:
//! the pod requests no GPU, and KAI's binder holds the shared device with a reservation pod
//! (namespace `kai-resource-reservation`) requesting one `nvidia.com/gpu`, from the first
//! share on the device to the last one leaving it. A KAI share's `Claim` is marked `reserve`;
//! the book counts them per device and tells the caller when a device's reservation begins
//! or ends (`apply`), and `Cluster::apply_claim` takes or gives back that one GPU.

use std::sync::Arc;

use kueuesim_model::gpu::{
    GPU_MILLI, GpuDemand, GpuShare, MILLI, NODE_GPU_MEMORY_LABEL, TargetPod,
};
use kueuesim_model::{NodeId, ResourceId, ResourceList, World};

/// Devices per node the book keeps (a claim is a bit mask).
pub const MAX_DEVICES: usize = 64;

/// GPU pod kinds per node: index 0 a share, k (1 to 8) k whole GPUs, 9 more than 8.
pub const KINDS: usize = 10;

/// The devices one pod holds on its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The devices, bit i for device i of the node.
    pub mask: u64,
    /// Milli-GPUs it holds on each of them (1000 for whole GPUs).
    pub milli: u16,
    /// A KAI share: its device is held by a reservation pod while any such share is on it.
    pub reserve: bool,
}

impl Claim {
    /// The GPU pod kind (`KINDS`).
    fn kind(self) -> usize {
        if i64::from(self.milli) < MILLI {
            0
        } else {
            (self.mask.count_ones() as usize).min(KINDS - 1)
        }
    }
}

/// Which device a share goes to among those it fits (the FGD simulator's `gpuSelMethod`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The fitting device with the least free milli (`best`), lowest index among equals.
    BestFit,
    /// Device `i`, chosen by the caller.
    Index(usize),
}

/// Every node's devices and the pods on them, and the fragmentation calculator (apart, so a
/// scorer can read the devices while it uses the calculator's scratch tallies).
#[derive(Clone, Debug)]
pub struct Devices {
    /// The devices and their claims.
    pub book: DeviceBook,
    /// Fragmentation against the target workload.
    pub frag: FragCalc,
}

/// Every node's devices and the GPU pods on them.
#[derive(Clone, Debug)]
pub struct DeviceBook {
    /// Per node, its first device in `free` (n + 1 entries).
    start: Vec<u32>,
    /// Free milli-GPUs per device.
    free: Vec<u16>,
    /// Per device, whether it failed (`spec.failures.gpus`): no milli free, no claim on it,
    /// not counted among the GPUs, until its repair.
    down: Vec<bool>,
    /// Per node, GPU pods by kind.
    kinds: Vec<[u16; KINDS]>,
    /// Per device, the KAI shares on it (a device with any is held by a reservation pod).
    reserved: Vec<u16>,
    /// Per node, one GPU's memory in MiB as KAI reads it (`nvidia.com/gpu.memory`).
    gpu_mib: Vec<i64>,
    /// The smallest GPU memory of the nodes with GPUs, MiB (KAI's `MinNodeGPUMemory`).
    min_gpu_mib: i64,
    /// `nvidia.com/gpu` and `kueuesim.io/gpu-milli`, if any object mentions them.
    gpu: Option<ResourceId>,
    milli: Option<ResourceId>,
}

/// Node fragmentation against the target workload (`node_fragmentation`), computed from
/// tallies per GPU demand of the target: the target has few distinct demands (openb's 35
/// shapes ask 13), and a shape's unusable milli depends on the node's devices only through
/// its demand's tally (devices with its per-device milli free, milli on the others). A
/// candidate placement moves one device (a share) or a few (whole GPUs), which changes each
/// tally by a step, so the fragmentation after it costs one pass over the target rather than
/// a scan of the devices per shape. The sum runs over the target in order with the same
/// terms as `node_fragmentation`, so the figure is the same to the last bit.
#[derive(Clone, Debug)]
pub struct FragCalc {
    /// The target workload (shared: a cloned cluster keeps pointing at it).
    pub target: Arc<[TargetPod]>,
    /// The target's distinct GPU demands: per-device milli and devices.
    demands: Arc<[(i64, usize)]>,
    /// Per target shape, the index of its demand in `demands` (`CPU_ONLY`: none).
    demand_of: Arc<[u8]>,
    /// The node last `load`ed.
    base: Tally,
    /// `base` with a candidate's device changes.
    moved: Tally,
    /// FGD's decisions per pod shape and node, by node state.
    scores: ScoreMemo,
}

/// FGD's score and share device per (pod shape, node), each with the node state it was
/// computed on. A node's state changes only when a pod binds to or leaves it, while the
/// same shapes come back pod after pod, so most nodes' decisions are answered from here. A
/// cache only: an entry is used only for the very state it was computed on, and what it
/// answers equals what the score computes.
#[derive(Clone, Debug, Default)]
struct ScoreMemo {
    /// Pod shapes seen (cpu, GPU demand); the index is the shape's id.
    shapes: Vec<(i64, Option<GpuDemand>)>,
    /// Per shape id then node, the last decision and the state it was made on.
    slots: Vec<Option<(NodeState, i64, DeviceChoice)>>,
}

/// A node's free cpu and devices as FGD reads them (nodes of at most `MEMO_DEVICES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct NodeState {
    cpu: i64,
    devices: u8,
    free: [u16; MEMO_DEVICES],
}

/// Nodes with more devices than this are scored without the memo.
const MEMO_DEVICES: usize = 8;

/// Pod shapes the memo keeps decisions for (a shape beyond them is scored without it).
const MEMO_SHAPES: usize = 256;

impl NodeState {
    fn of(cpu: i64, free: &[u16]) -> Option<NodeState> {
        let mut s = NodeState {
            cpu,
            devices: free.len() as u8,
            free: [0; MEMO_DEVICES],
        };
        s.free.get_mut(..free.len())?.copy_from_slice(free);
        Some(s)
    }
}

/// A target shape asking no GPU (`FragCalc::demand_of`).
const CPU_ONLY: u8 = u8::MAX;

/// One node's devices as the target's demands see them.
#[derive(Clone, Debug, Default)]
struct Tally {
    /// Free milli over all devices.
    total: i64,
    /// Per demand, devices with at least its per-device milli free.
    fitting: Vec<usize>,
    /// Per demand, free milli on the devices with less than its per-device milli free.
    below: Vec<i64>,
}

impl Tally {
    /// Device moving from `from` to `to` free milli.
    #[inline]
    fn shift(&mut self, demands: &[(i64, usize)], from: u16, to: u16) {
        let (from, to) = (i64::from(from), i64::from(to));
        self.total += to - from;
        for (g, &(per, _)) in demands.iter().enumerate() {
            self.fitting[g] = self.fitting[g] + usize::from(to >= per) - usize::from(from >= per);
            self.below[g] += if to < per { to } else { 0 } - if from < per { from } else { 0 };
        }
    }
}

impl Devices {
    /// The devices of `world`'s nodes, all free, when device bookkeeping is on.
    pub fn new(world: &World) -> Option<Devices> {
        if !world.config.gpu.devices {
            return None;
        }
        let gpu = world.resources.lookup(kueuesim_model::resources::GPU);
        let milli = world.resources.lookup(GPU_MILLI);
        let mut start = Vec::with_capacity(world.nodes.len() + 1);
        let mut free = Vec::new();
        for node in &world.nodes {
            start.push(free.len() as u32);
            let of = |r: Option<ResourceId>| {
                r.and_then(|r| node.allocatable.get(r.index()).copied())
                    .unwrap_or(0)
            };
            let n = match of(gpu) {
                g if g > 0 => g,
                _ => of(milli) / MILLI,
            };
            free.extend(std::iter::repeat_n(
                MILLI as u16,
                (n.max(0) as usize).min(MAX_DEVICES),
            ));
        }
        start.push(free.len() as u32);
        let gpu_mib: Vec<i64> = world
            .nodes
            .iter()
            .map(|n| kueuesim_model::gpu::kai_gpu_memory(n.labels.get(NODE_GPU_MEMORY_LABEL)))
            .collect();
        let min_gpu_mib = (0..world.nodes.len())
            .filter(|&n| start[n + 1] > start[n])
            .map(|n| gpu_mib[n])
            .min()
            .unwrap_or(kueuesim_model::gpu::KAI_DEFAULT_GPU_MEMORY);
        let target: Arc<[TargetPod]> = world.config.gpu.target.clone().into();
        let mut demands: Vec<(i64, usize)> = Vec::new();
        let mut demand_of = Vec::with_capacity(target.len());
        for t in target.iter() {
            demand_of.push(match t.gpu {
                None => CPU_ONLY,
                Some(d) => {
                    let key = (d.milli_per_device(), d.devices() as usize);
                    match demands.iter().position(|&k| k == key) {
                        Some(g) => g as u8,
                        None => {
                            demands.push(key);
                            (demands.len() - 1) as u8
                        }
                    }
                }
            });
        }
        // A u8 names a demand; a target of more distinct demands would be a target of more
        // than 254 shapes asking different GPUs, which the popularity cut never gives.
        assert!(
            demands.len() < usize::from(CPU_ONLY),
            "the target workload has {} distinct GPU demands",
            demands.len()
        );
        let tally = Tally {
            total: 0,
            fitting: vec![0; demands.len()],
            below: vec![0; demands.len()],
        };
        Some(Devices {
            book: DeviceBook {
                kinds: vec![[0; KINDS]; world.nodes.len()],
                reserved: vec![0; free.len()],
                down: vec![false; free.len()],
                gpu_mib,
                min_gpu_mib,
                start,
                free,
                gpu,
                milli,
            },
            frag: FragCalc {
                target,
                demands: demands.into(),
                demand_of: demand_of.into(),
                base: tally.clone(),
                moved: tally,
                scores: ScoreMemo::default(),
            },
        })
    }
}

impl DeviceBook {
    /// What a pod with `requests` needs of the devices (None: no GPU).
    pub fn demand(&self, requests: &ResourceList) -> Option<GpuDemand> {
        let get = |r: Option<ResourceId>| r.map_or(0, |r| requests.get(r));
        GpuDemand::of(get(self.gpu), get(self.milli))
    }

    /// Free milli-GPUs of each device of `node`.
    #[inline]
    pub fn free(&self, node: NodeId) -> &[u16] {
        let i = node.index();
        &self.free[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// Devices of `node`.
    #[inline]
    pub fn count(&self, node: NodeId) -> usize {
        let i = node.index();
        (self.start[i + 1] - self.start[i]) as usize
    }

    /// GPU pods of each kind on `node` (index 0 shares, k k-GPU pods, 9 more than 8 GPUs).
    pub fn kinds(&self, node: NodeId) -> &[u16; KINDS] {
        &self.kinds[node.index()]
    }

    /// The kind a demand's pods count as (`kinds`).
    pub fn kind_of(demand: GpuDemand) -> usize {
        match demand {
            GpuDemand::Share(_) => 0,
            GpuDemand::Whole(n) => (n as usize).min(KINDS - 1),
        }
    }

    /// Whether `node`'s devices can take `demand`.
    pub fn fits(&self, node: NodeId, demand: GpuDemand) -> bool {
        let free = self.free(node);
        match demand {
            GpuDemand::Whole(n) => {
                free.iter().filter(|&&f| i64::from(f) == MILLI).count() >= n as usize
            }
            GpuDemand::Share(m) => free.iter().any(|&f| f >= m),
        }
    }

    /// The devices `demand` would take on `node`: whole GPUs the lowest-indexed free devices
    /// (upstream's `AllocateExclusiveGpuId`), a share the device `choice` names. None if they
    /// do not fit.
    pub fn claim(&self, node: NodeId, demand: GpuDemand, choice: DeviceChoice) -> Option<Claim> {
        let free = self.free(node);
        match demand {
            GpuDemand::Whole(n) => {
                let mut mask = 0u64;
                let mut left = n;
                for (i, &f) in free.iter().enumerate() {
                    if left == 0 {
                        break;
                    }
                    if i64::from(f) == MILLI {
                        mask |= 1 << i;
                        left -= 1;
                    }
                }
                (left == 0).then_some(Claim {
                    mask,
                    milli: MILLI as u16,
                    reserve: false,
                })
            }
            GpuDemand::Share(m) => {
                let i = match choice {
                    DeviceChoice::Index(i) => (free.get(i).is_some_and(|&f| f >= m)).then_some(i),
                    DeviceChoice::BestFit => free
                        .iter()
                        .enumerate()
                        .filter(|(_, f)| **f >= m)
                        .min_by_key(|&(i, &f)| (f, i))
                        .map(|(i, _)| i),
                }?;
                Some(Claim {
                    mask: 1 << i,
                    milli: m,
                    reserve: false,
                })
            }
        }
    }

    /// Takes (sign 1) or gives back (sign -1) `claim` on `node`. Panics (an invariant) if a
    /// device would go below zero or above 1000 milli. Returns the change of reservation
    /// pods on the node: 1 when a KAI share is the first on its device, -1 when it was the
    /// last, else 0.
    pub fn apply(&mut self, node: NodeId, claim: Claim, sign: i64) -> i64 {
        let base = self.start[node.index()] as usize;
        let mut mask = claim.mask;
        while mask != 0 {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let f = i64::from(self.free[base + i]) - sign * i64::from(claim.milli);
            assert!(
                (0..=MILLI).contains(&f),
                "GPU device {i} of node {} would have {f} milli free",
                node.index()
            );
            self.free[base + i] = f as u16;
        }
        let k = &mut self.kinds[node.index()][claim.kind()];
        *k = (i64::from(*k) + sign) as u16;
        if !claim.reserve {
            return 0;
        }
        let i = base + claim.mask.trailing_zeros() as usize;
        let before = self.reserved[i];
        self.reserved[i] = (i64::from(before) + sign) as u16;
        match (before, self.reserved[i]) {
            (0, _) => 1,
            (_, 0) => -1,
            _ => 0,
        }
    }

    /// Device `i` of `node` fails (`down`: its claims were given back first, so it is wholly
    /// free) or comes back after its repair.
    pub fn set_down(&mut self, node: NodeId, i: usize, down: bool) {
        let d = self.start[node.index()] as usize + i;
        if d >= self.start[node.index() + 1] as usize || self.down[d] == down {
            return;
        }
        if down {
            assert_eq!(
                i64::from(self.free[d]),
                MILLI,
                "GPU device {i} of node {} fails with claims on it",
                node.index()
            );
        }
        self.down[d] = down;
        self.free[d] = if down { 0 } else { MILLI as u16 };
    }

    /// Whether device `i` of `node` is down (failed, not repaired).
    pub fn is_down(&self, node: NodeId, i: usize) -> bool {
        let d = self.start[node.index()] as usize + i;
        d < self.start[node.index() + 1] as usize && self.down[d]
    }

    /// Milli-GPUs a KAI share takes on a device of `node` (None: more than one device).
    pub fn share_milli(&self, node: NodeId, share: GpuShare) -> Option<u16> {
        share.milli_on(self.gpu_mib[node.index()])
    }

    /// Milli-GPUs a pending KAI share counts for KAI's queues and actions, before a node is
    /// chosen: a fraction as asked, a memory request against the smallest GPU memory of the
    /// GPU nodes (`GetTasksToAllocateInitResource` with `MinNodeGPUMemory`), rounded up to
    /// the next milli; above one device when it asks more than that GPU has.
    pub fn pending_share_milli(&self, share: GpuShare) -> i64 {
        match share {
            GpuShare::Fraction(m) => i64::from(m),
            GpuShare::Memory(mib) => {
                let per = self.min_gpu_mib.max(1);
                (mib * MILLI + per - 1) / per
            }
        }
    }

    /// Whether device `i` of `node` holds KAI shares (KAI's `UsedSharedGPUsMemory` entry).
    #[inline]
    pub fn is_shared(&self, node: NodeId, i: usize) -> bool {
        self.reserved[self.start[node.index()] as usize + i] > 0
    }

    /// Reservation pods per node (devices holding KAI shares), nodes without any left out.
    pub fn reservations(&self) -> impl Iterator<Item = (NodeId, i64)> + '_ {
        (0..self.kinds.len()).filter_map(|n| {
            let (a, b) = (self.start[n] as usize, self.start[n + 1] as usize);
            let k = self.reserved[a..b].iter().filter(|&&r| r > 0).count() as i64;
            (k > 0).then_some((NodeId::from_index(n), k))
        })
    }

    /// Checks every device is within 0 to 1000 milli free and that the claims given hold
    /// what the devices miss (conservation on every bind and release).
    pub fn check(&self, claims: impl Iterator<Item = (NodeId, Claim)>) -> Result<(), String> {
        let mut used = vec![0i64; self.free.len()];
        let mut reserved = vec![0u16; self.free.len()];
        let mut kinds = vec![[0u16; KINDS]; self.kinds.len()];
        for (node, c) in claims {
            let base = self.start[node.index()] as usize;
            let mut mask = c.mask;
            if self.count(node) < MAX_DEVICES && c.mask >> self.count(node) != 0 {
                return Err(format!(
                    "a claim on node {} names a device it lacks",
                    node.index()
                ));
            }
            while mask != 0 {
                let i = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                used[base + i] += i64::from(c.milli);
            }
            kinds[node.index()][c.kind()] += 1;
            if c.reserve {
                if c.mask.count_ones() != 1 {
                    return Err("a KAI share claims other than one device".into());
                }
                reserved[base + c.mask.trailing_zeros() as usize] += 1;
            }
        }
        if reserved != self.reserved {
            return Err("the KAI shares per device are stale".into());
        }
        for (d, (&f, &u)) in self.free.iter().zip(&used).enumerate() {
            if self.down[d] {
                if f != 0 || u != 0 {
                    return Err(format!(
                        "failed GPU device {d} has {f} milli free and claims holding {u}"
                    ));
                }
                continue;
            }
            if !(0..=MILLI).contains(&i64::from(f)) || i64::from(f) + u != MILLI {
                return Err(format!(
                    "GPU device {d} has {f} milli free while its claims hold {u}"
                ));
            }
        }
        if kinds != self.kinds {
            return Err("the GPU pod kinds per node are stale".into());
        }
        Ok(())
    }
}

impl FragCalc {
    /// The fragmentation of a node with `cpu_free` millicores and devices `free`, against the
    /// target workload (`node_fragmentation`). The node becomes the base of `moved`.
    pub fn fragmentation(&mut self, cpu_free: i64, free: &[u16]) -> f64 {
        self.load(free);
        self.sum(cpu_free, &self.base)
    }

    /// Makes `free` the node `moved` starts from.
    pub fn load(&mut self, free: &[u16]) {
        let b = &mut self.base;
        b.total = free.iter().map(|&f| i64::from(f)).sum();
        for (g, &(per, _)) in self.demands.iter().enumerate() {
            let (mut fitting, mut below) = (0, 0);
            for &f in free {
                let f = i64::from(f);
                if f >= per {
                    fitting += 1;
                } else {
                    below += f;
                }
            }
            b.fitting[g] = fitting;
            b.below[g] = below;
        }
    }

    /// The fragmentation of the loaded node with `cpu_free` millicores and each device of
    /// `moves` changed from its first free milli to its second (the same as
    /// `fragmentation` of the changed devices).
    pub fn moved(&mut self, cpu_free: i64, moves: &[(u16, u16)]) -> f64 {
        let m = &mut self.moved;
        m.total = self.base.total;
        m.fitting.copy_from_slice(&self.base.fitting);
        m.below.copy_from_slice(&self.base.below);
        for &(from, to) in moves {
            m.shift(&self.demands, from, to);
        }
        self.sum(cpu_free, &self.moved)
    }

    /// The id of a pod shape (cpu, GPU demand) in the score memo, among `nodes` nodes; None
    /// when the memo keeps no more shapes.
    pub fn shape_id(&mut self, nodes: usize, shape: (i64, Option<GpuDemand>)) -> Option<usize> {
        let m = &mut self.scores;
        if let Some(i) = m.shapes.iter().position(|&s| s == shape) {
            return Some(i);
        }
        if m.shapes.len() >= MEMO_SHAPES {
            return None;
        }
        m.shapes.push(shape);
        m.slots.resize(m.shapes.len() * nodes, None);
        Some(m.shapes.len() - 1)
    }

    /// The decision memoised for shape `id` on `node` in the state (`cpu_free`, `free`).
    pub fn memoised(
        &self,
        id: usize,
        node: NodeId,
        cpu_free: i64,
        free: &[u16],
    ) -> Option<(i64, DeviceChoice)> {
        let state = NodeState::of(cpu_free, free)?;
        let nodes = self.scores.slots.len() / self.scores.shapes.len();
        match self.scores.slots[id * nodes + node.index()] {
            Some((s, score, choice)) if s == state => Some((score, choice)),
            _ => None,
        }
    }

    /// Keeps the decision for shape `id` on `node` in the state (`cpu_free`, `free`).
    pub fn memoise(
        &mut self,
        id: usize,
        node: NodeId,
        cpu_free: i64,
        free: &[u16],
        decision: (i64, DeviceChoice),
    ) {
        if let Some(state) = NodeState::of(cpu_free, free) {
            let nodes = self.scores.slots.len() / self.scores.shapes.len();
            self.scores.slots[id * nodes + node.index()] = Some((state, decision.0, decision.1));
        }
    }

    /// `node_fragmentation`'s sum, term by term in target order, from a tally.
    fn sum(&self, cpu_free: i64, t: &Tally) -> f64 {
        if t.total == 0 {
            return 0.0;
        }
        let mut frag = 0.0;
        for (pod, &g) in self.target.iter().zip(self.demand_of.iter()) {
            let unusable = if g == CPU_ONLY {
                t.total
            } else {
                let g = usize::from(g);
                if t.fitting[g] >= self.demands[g].1 && cpu_free >= pod.cpu_milli {
                    t.below[g]
                } else {
                    t.total
                }
            };
            frag += pod.freq * unusable as f64;
        }
        frag
    }
}

/// How the GPU devices are used at one instant: allocation and fragmentation as Weng et al.
/// (USENIX ATC 2023) define them and their simulator reports them (`ClusterAnalysis`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuSharingFigures {
    /// GPU devices in the cluster.
    pub gpus: i64,
    /// Devices some pod holds a share of, or all of.
    pub gpus_allocated: i64,
    /// Milli-GPUs held by pods.
    pub milli_allocated: i64,
    /// Milli-GPUs free.
    pub milli_idle: i64,
    /// Of the free milli-GPUs, those the target workload could not use (FGD's fragmented
    /// GPU milli: the sum over nodes of `node_fragmentation`); None without a target.
    pub milli_fragmented: Option<f64>,
}

impl Devices {
    /// Allocation and fragmentation of every device now; `cpu_free` gives a node's free
    /// millicores.
    pub fn figures(&mut self, cpu_free: impl Fn(NodeId) -> i64) -> GpuSharingFigures {
        let book = &self.book;
        let mut f = GpuSharingFigures {
            gpus: book.down.iter().filter(|&&d| !d).count() as i64,
            ..Default::default()
        };
        let mut frag = 0.0;
        for n in 0..book.kinds.len() {
            let node = NodeId::from_index(n);
            let free = book.free(node);
            // A failed device is no GPU of the cluster until its repair.
            let base = book.start[n] as usize;
            for (i, &d) in free.iter().enumerate() {
                if book.down[base + i] {
                    continue;
                }
                let d = i64::from(d);
                f.milli_idle += d;
                f.milli_allocated += MILLI - d;
                f.gpus_allocated += i64::from(d < MILLI);
            }
            if !free.is_empty() {
                frag += self.frag.fragmentation(cpu_free(node), free);
            }
        }
        f.milli_fragmented = (!self.frag.target.is_empty()).then_some(frag);
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::gpu::node_fragmentation;

    /// A calculator for `target` (a world with one node, devices on, that target).
    fn calc(target: Vec<TargetPod>) -> FragCalc {
        let mut w = World::default();
        let milli = w.resources.intern(GPU_MILLI);
        let mut alloc = vec![0; w.resources.len()];
        alloc[milli.index()] = 1000;
        w.nodes.push(kueuesim_model::Node {
            name: "n".into(),
            labels: Default::default(),
            allocatable: alloc,
            taints: vec![],
            unschedulable: false,
        });
        w.config.gpu.devices = true;
        w.config.gpu.target = target;
        Devices::new(&w).unwrap().frag
    }

    #[test]
    fn a_pending_memory_share_counts_against_the_smallest_gpu_memory() {
        // Nodes of 80 GB and 40 GB GPUs and a CPU node (its default 100 MiB is no GPU's):
        // `MinNodeGPUMemory` is 40 GB, so 20 GB count half a GPU and 60 GB one and a half.
        let mut w = World::default();
        let gpu = w.resources.intern(kueuesim_model::resources::GPU);
        for (name, gpus, mib) in [
            ("a", 2, Some("80000")),
            ("b", 1, Some("40000")),
            ("c", 0, None),
        ] {
            let mut alloc = vec![0; w.resources.len()];
            alloc[gpu.index()] = gpus;
            let labels = mib
                .map(|m| (NODE_GPU_MEMORY_LABEL.to_string(), m.to_string()))
                .into_iter()
                .collect();
            w.nodes.push(kueuesim_model::Node {
                name: name.into(),
                labels: kueuesim_model::Labels::new(labels),
                allocatable: alloc,
                taints: vec![],
                unschedulable: false,
            });
        }
        w.config.gpu.devices = true;
        let book = Devices::new(&w).unwrap().book;
        assert_eq!(book.pending_share_milli(GpuShare::Memory(20000)), 500);
        assert_eq!(book.pending_share_milli(GpuShare::Memory(60000)), 1500);
        assert_eq!(book.pending_share_milli(GpuShare::Memory(1)), 1);
        assert_eq!(book.pending_share_milli(GpuShare::Fraction(300)), 300);
    }

    fn pod(cpu_milli: i64, gpu: Option<GpuDemand>, freq: f64) -> TargetPod {
        TargetPod {
            cpu_milli,
            gpu,
            freq,
        }
    }

    #[test]
    fn fragmentation_counts_what_each_shape_cannot_use() {
        // Devices 600, 300, 1000 free (1900), 4 cores free. A 500 share (weight ½) fits and
        // cannot use the 300; a whole GPU with 8 cores (¼) lacks cpu and cannot use any; a
        // CPU-only pod (¼) uses no GPU: ½·300 + ¼·1900 + ¼·1900 = 1100.
        let mut c = calc(vec![
            pod(1000, Some(GpuDemand::Share(500)), 0.5),
            pod(8000, Some(GpuDemand::Whole(1)), 0.25),
            pod(1000, None, 0.25),
        ]);
        assert_eq!(c.fragmentation(4000, &[600, 300, 1000]), 1100.0);
        // The share on the 600 device leaves 100, 300, 1000: ½·400 + ¼·1400 + ¼·1400 = 900.
        assert_eq!(c.moved(3000, &[(600, 100)]), 900.0);
        // The base is unchanged by a candidate: the share on the whole GPU instead leaves
        // 600, 300, 500: ½·300 + ¼·1400 + ¼·1400 = 850.
        assert_eq!(c.moved(3000, &[(1000, 500)]), 850.0);
        // With 8 cores the whole GPU fits too and cannot use 600 + 300: ½·300 + ¼·900 + ¼·1900.
        assert_eq!(c.fragmentation(8000, &[600, 300, 1000]), 850.0);
    }

    #[test]
    fn score_memo_answers_only_for_the_state_it_was_given() {
        let share = (1000, Some(GpuDemand::Share(500)));
        let mut c = calc(vec![pod(1000, share.1, 1.0)]);
        let id = c.shape_id(3, share).unwrap();
        let cpu_only = c.shape_id(3, (2000, None)).unwrap();
        assert_eq!(c.shape_id(3, share), Some(id));
        assert_ne!(id, cpu_only);
        let decision = (70, DeviceChoice::Index(0));
        c.memoise(id, NodeId(1), 4000, &[600, 1000], decision);
        assert_eq!(
            c.memoised(id, NodeId(1), 4000, &[600, 1000]),
            Some(decision)
        );
        // Another cpu, device order, node or shape is another decision.
        assert_eq!(c.memoised(id, NodeId(1), 3000, &[600, 1000]), None);
        assert_eq!(c.memoised(id, NodeId(1), 4000, &[1000, 600]), None);
        assert_eq!(c.memoised(id, NodeId(0), 4000, &[600, 1000]), None);
        assert_eq!(c.memoised(cpu_only, NodeId(1), 4000, &[600, 1000]), None);
        // Nodes of more than 8 devices are not memoised.
        c.memoise(id, NodeId(2), 4000, &[1000; 9], decision);
        assert_eq!(c.memoised(id, NodeId(2), 4000, &[1000; 9]), None);
    }

    #[test]
    fn tallies_give_node_fragmentation_to_the_bit() {
        let target = vec![
            pod(3152, Some(GpuDemand::Share(810)), 0.21),
            pod(11300, Some(GpuDemand::Whole(1)), 0.17),
            pod(8000, Some(GpuDemand::Share(470)), 0.13),
            pod(12500, None, 0.11),
            pod(11908, Some(GpuDemand::Share(470)), 0.09),
            pod(32000, Some(GpuDemand::Whole(2)), 0.07),
            pod(64000, Some(GpuDemand::Whole(8)), 0.05),
            pod(4000, Some(GpuDemand::Share(250)), 0.17),
        ];
        let mut c = calc(target.clone());
        let levels = [0u16, 190, 250, 470, 530, 810, 1000];
        let mut x = 12345u64;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = 1 + (x >> 60) as usize % 8;
            let free: Vec<u16> = (0..n)
                .map(|i| levels[(x >> (4 * i + 8)) as usize % levels.len()])
                .collect();
            let cpu = (x >> 40) as i64 % 70_000;
            let want = node_fragmentation(cpu, &free, &target);
            assert_eq!(c.fragmentation(cpu, &free).to_bits(), want.to_bits());
            // Every share a device can take, and whole GPUs on the free devices.
            for (i, &f) in free.iter().enumerate() {
                let mut after = free.clone();
                after[i] = f / 3;
                let want = node_fragmentation(cpu - 1000, &after, &target);
                assert_eq!(c.moved(cpu - 1000, &[(f, f / 3)]).to_bits(), want.to_bits());
            }
            let whole: Vec<(u16, u16)> = free
                .iter()
                .filter(|&&f| f == 1000)
                .map(|_| (1000, 0))
                .collect();
            let after: Vec<u16> = free
                .iter()
                .map(|&f| if f == 1000 { 0 } else { f })
                .collect();
            let want = node_fragmentation(cpu, &after, &target);
            assert_eq!(c.moved(cpu, &whole).to_bits(), want.to_bits());
        }
    }
}
