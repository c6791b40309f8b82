//! Volcano vGPU's device book: the deviceshare plugin with `deviceshare.VGPUEnable` in
//! HAMi-core mode (Volcano's `pkg/scheduler/plugins/deviceshare` and
//! `pkg/scheduler/api/devices/nvidia/vgpu`). Each node's GPUs as devices with their memory,
//! cores and share count; the plugin's predicate (`checkNodeGPUSharingPredicateAndScore`:
//! which devices a pod's request takes, in the `SchedulePolicy` order) and its node score
//! (`ScoreNode`, the score the filter cached). The `Cluster` keeps the book and a `Placement`
//! returns its claims, so it sits with the shared bookkeeping; the allocate action's flat node
//! search over it is Volcano's (`volcano::vgpu`).
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
