//! GPUs as physical devices (`spec.gpuPlacement`, openb `gpuSharing: device`): each node's
//! devices with their free milli-GPUs, the claims pods hold on them (whole devices, or a share
//! of one), the kinds of GPU pods each node runs (for the FGD simulator's clustering score),
//! and a memo of node fragmentation against the target workload.
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
    GPU_MILLI, GpuDemand, GpuShare, MILLI, NODE_GPU_MEMORY_LABEL, TargetPod, node_fragmentation,
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

/// Every node's devices and the pods on them, and the fragmentation memo (apart, so a
/// scorer can read the devices while it fills the memo).
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
    /// Per node, GPU pods by kind.
    kinds: Vec<[u16; KINDS]>,
    /// Per device, the KAI shares on it (a device with any is held by a reservation pod).
    reserved: Vec<u16>,
    /// Per node, one GPU's memory in MiB as KAI reads it (`nvidia.com/gpu.memory`).
    gpu_mib: Vec<i64>,
    /// `nvidia.com/gpu` and `kueuesim.io/gpu-milli`, if any object mentions them.
    gpu: Option<ResourceId>,
    milli: Option<ResourceId>,
}

/// Node fragmentation against the target workload, memoised by node state.
#[derive(Clone, Debug)]
pub struct FragCalc {
    /// The target workload (shared: a cloned cluster keeps pointing at it).
    pub target: Arc<[TargetPod]>,
    /// The target's distinct cpu requests, ascending: a node's free cpu matters to the
    /// fragmentation only through how many of them it covers.
    target_cpus: Arc<[i64]>,
    /// Fragmentation by node state (`frag_key`), an open-addressing table.
    memo: FragMemo,
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
        let gpu_mib = world
            .nodes
            .iter()
            .map(|n| kueuesim_model::gpu::kai_gpu_memory(n.labels.get(NODE_GPU_MEMORY_LABEL)))
            .collect();
        let target: Arc<[TargetPod]> = world.config.gpu.target.clone().into();
        let mut cpus: Vec<i64> = target.iter().map(|t| t.cpu_milli).collect();
        cpus.sort_unstable();
        cpus.dedup();
        Some(Devices {
            book: DeviceBook {
                kinds: vec![[0; KINDS]; world.nodes.len()],
                reserved: vec![0; free.len()],
                gpu_mib,
                start,
                free,
                gpu,
                milli,
            },
            frag: FragCalc {
                target,
                target_cpus: cpus.into(),
                memo: FragMemo::default(),
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

    /// Milli-GPUs a KAI share takes on a device of `node` (None: more than one device).
    pub fn share_milli(&self, node: NodeId, share: GpuShare) -> Option<u16> {
        share.milli_on(self.gpu_mib[node.index()])
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
    /// target workload (`node_fragmentation`), through the memo.
    pub fn fragmentation(&mut self, cpu_free: i64, free: &[u16]) -> f64 {
        if self.target.is_empty() {
            return 0.0;
        }
        let Some(key) = frag_key(&self.target_cpus, cpu_free, free) else {
            return node_fragmentation(cpu_free, free, &self.target);
        };
        if let Some(v) = self.memo.get(key) {
            return v;
        }
        let v = node_fragmentation(cpu_free, free, &self.target);
        self.memo.insert(key, v);
        v
    }
}

impl Devices {
    /// Allocation and fragmentation of every device now; `cpu_free` gives a node's free
    /// millicores.
    pub fn figures(
        &mut self,
        cpu_free: impl Fn(NodeId) -> i64,
    ) -> crate::outcome::GpuSharingFigures {
        let book = &self.book;
        let mut f = crate::outcome::GpuSharingFigures {
            gpus: book.free.len() as i64,
            ..Default::default()
        };
        let mut frag = 0.0;
        for n in 0..book.kinds.len() {
            let node = NodeId::from_index(n);
            let free = book.free(node);
            for &d in free {
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

/// A node state as far as its fragmentation goes: how many of the target's cpu requests its
/// free cpu covers, its device count and its devices' free milli sorted (fragmentation does
/// not depend on device order), packed in 128 bits. None for more than 8 devices.
fn frag_key(target_cpus: &[i64], cpu_free: i64, free: &[u16]) -> Option<u128> {
    if free.len() > 8 {
        return None;
    }
    let covered = target_cpus.partition_point(|&c| c <= cpu_free) as u128;
    let mut sorted = [0u16; 8];
    sorted[..free.len()].copy_from_slice(free);
    sorted[..free.len()].sort_unstable();
    let mut key = (covered << 4) | free.len() as u128;
    for &f in &sorted[..free.len()] {
        key = (key << 11) | u128::from(f);
    }
    Some(key)
}

/// An open-addressing table from node state to fragmentation. A cache only: what it answers
/// equals what `node_fragmentation` computes, so no decision depends on its layout.
#[derive(Clone, Debug, Default)]
struct FragMemo {
    slots: Vec<Option<(u128, f64)>>,
    len: usize,
}

impl FragMemo {
    fn slot(&self, key: u128) -> usize {
        let h = (key as u64 ^ (key >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> 20) as usize & (self.slots.len() - 1)
    }

    fn get(&self, key: u128) -> Option<f64> {
        if self.slots.is_empty() {
            return None;
        }
        let mut i = self.slot(key);
        loop {
            match self.slots[i] {
                None => return None,
                Some((k, v)) if k == key => return Some(v),
                Some(_) => i = (i + 1) & (self.slots.len() - 1),
            }
        }
    }

    fn insert(&mut self, key: u128, v: f64) {
        if (self.len + 1) * 2 > self.slots.len() {
            let old = std::mem::take(&mut self.slots);
            self.slots = vec![None; (old.len() * 2).max(1024)];
            self.len = 0;
            for (k, v) in old.into_iter().flatten() {
                self.insert(k, v);
            }
        }
        let mut i = self.slot(key);
        while let Some((k, _)) = self.slots[i] {
            if k == key {
                return;
            }
            i = (i + 1) & (self.slots.len() - 1);
        }
        self.slots[i] = Some((key, v));
        self.len += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memo_answers_what_it_was_given() {
        let mut m = FragMemo::default();
        for k in 0..5000u128 {
            m.insert(k * 7919, k as f64);
        }
        for k in 0..5000u128 {
            assert_eq!(m.get(k * 7919), Some(k as f64));
        }
        assert_eq!(m.get(3), None);
    }

    #[test]
    fn frag_key_ignores_device_order() {
        let cpus = [1000, 4000];
        assert_eq!(
            frag_key(&cpus, 2000, &[300, 1000, 0]),
            frag_key(&cpus, 3999, &[0, 300, 1000])
        );
        assert_ne!(
            frag_key(&cpus, 2000, &[300, 1000, 0]),
            frag_key(&cpus, 4000, &[0, 300, 1000])
        );
        assert_eq!(frag_key(&cpus, 0, &[1000; 9]), None);
    }
}
