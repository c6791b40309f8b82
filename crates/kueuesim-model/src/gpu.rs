//! Physical GPUs shared by pods: what a pod asks of a node's devices (`GpuDemand`), the
//! placement policies for shared GPUs (`GpuPolicy`), the target workload fragmentation is
//! measured against (`TargetPod`, `target_workload`) and the fragmentation measure itself
//! (`node_fragmentation`), as Weng et al. define them ("Beware of Fragmentation: Scheduling
//! GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC 2023) and their
//! simulator (hkust-adsl/kubernetes-scheduler-simulator, `pkg/utils/frag.go`) computes them.
//!
//! A GPU is 1000 milli-GPUs. A pod asks for whole GPUs (each a device no other pod uses) or for
//! a share of one GPU (fewer than 1000 milli on a single device), never both.

/// The resource a pod requests to share a GPU, in thousandths of a GPU (a whole GPU: 1000).
/// With device bookkeeping on, a node offers 1000 per device and a request below 1000 is a
/// share of one device.
pub const GPU_MILLI: &str = "kueuesim.io/gpu-milli";

/// Milli-GPUs in one GPU.
pub const MILLI: i64 = 1000;

/// What one pod needs from a node's GPU devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GpuDemand {
    /// `n` devices, each wholly free (n ≥ 1).
    Whole(u32),
    /// `m` milli-GPUs (1 to 999) on one device.
    Share(u16),
}

impl GpuDemand {
    /// The demand of a pod requesting `gpus` of `nvidia.com/gpu` and `milli` of
    /// `kueuesim.io/gpu-milli` (None: no GPU). Whole GPUs win when both are set; a milli
    /// request of 1000 or more is that many whole GPUs, rounded up (a device is not shared
    /// between a pod's whole GPUs and its rest).
    pub fn of(gpus: i64, milli: i64) -> Option<GpuDemand> {
        if gpus > 0 {
            return Some(GpuDemand::Whole(gpus.min(u32::MAX as i64) as u32));
        }
        match milli {
            m if m <= 0 => None,
            m if m < MILLI => Some(GpuDemand::Share(m as u16)),
            m => Some(GpuDemand::Whole(
                ((m + MILLI - 1) / MILLI).min(u32::MAX as i64) as u32,
            )),
        }
    }

    /// Milli-GPUs per device it takes (1000 for whole GPUs).
    pub fn milli_per_device(self) -> i64 {
        match self {
            GpuDemand::Whole(_) => MILLI,
            GpuDemand::Share(m) => i64::from(m),
        }
    }

    /// Devices it takes.
    pub fn devices(self) -> u32 {
        match self {
            GpuDemand::Whole(n) => n,
            GpuDemand::Share(_) => 1,
        }
    }

    /// Milli-GPUs in all.
    pub fn total_milli(self) -> i64 {
        self.milli_per_device() * i64::from(self.devices())
    }
}

/// KAI Scheduler's pod annotation asking a share of one GPU's memory as a fraction ("0.5").
pub const KAI_GPU_FRACTION: &str = "gpu-fraction";

/// KAI Scheduler's pod annotation asking a share of one GPU by its memory, in MiB ("2000").
pub const KAI_GPU_MEMORY: &str = "gpu-memory";

/// KAI Scheduler's pod annotation asking its share on several devices (only 1 is modelled).
pub const KAI_GPU_FRACTION_DEVICES: &str = "gpu-fraction-num-devices";

/// The node label the GPU feature discovery sets to one GPU's memory (MiB), which KAI reads
/// (`GpuMemoryLabel`).
pub const NODE_GPU_MEMORY_LABEL: &str = "nvidia.com/gpu.memory";

/// KAI's GPU memory of a node without the label (`DefaultGpuMemory`, MiB).
pub const KAI_DEFAULT_GPU_MEMORY: i64 = 100;

/// A share of one GPU a KAI pod asks for with its annotations (KAI's GPU sharing): the pod
/// requests no `nvidia.com/gpu`; KAI puts it on one device and holds that device with a
/// reservation pod while any share is on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuShare {
    /// `gpu-fraction`, in milli-GPUs (1 to 999: the fraction to the nearest thousandth).
    Fraction(u16),
    /// `gpu-memory`, in MiB: a share of the device's memory (its node's
    /// `nvidia.com/gpu.memory`).
    Memory(i64),
}

impl GpuShare {
    /// Milli-GPUs it takes of a device with `device_mib` of memory: a fraction as asked, a
    /// memory request rounded up to the next milli (KAI compares MiB; the rounding can refuse
    /// a device by at most one milli per share). None if it exceeds one device.
    pub fn milli_on(self, device_mib: i64) -> Option<u16> {
        let m = match self {
            GpuShare::Fraction(m) => i64::from(m),
            GpuShare::Memory(mib) => (mib * MILLI + device_mib.max(1) - 1) / device_mib.max(1),
        };
        (1..=MILLI).contains(&m).then_some(m as u16)
    }
}

/// Volcano vGPU (the deviceshare plugin with `deviceshare.VGPUEnable`, HAMi-core mode): the
/// devices a pod asks for (`vgpu-number`; `vgpu-memory` alone asks one).
pub const VGPU_NUMBER: &str = "volcano.sh/vgpu-number";
/// Volcano vGPU: GPU memory per device, MiB.
pub const VGPU_MEMORY: &str = "volcano.sh/vgpu-memory";
/// Volcano vGPU: GPU memory per device as a percentage of the device's (wins over
/// `vgpu-memory`, as upstream's `MemPercentagereq`).
pub const VGPU_MEMORY_PERCENTAGE: &str = "volcano.sh/vgpu-memory-percentage";
/// Volcano vGPU: percent of each device's cores (100: the device exclusively).
pub const VGPU_CORES: &str = "volcano.sh/vgpu-cores";
/// Volcano vGPU: the pod annotation naming the sharing mode it needs (`hami-core`, `mig`).
pub const VGPU_MODE: &str = "volcano.sh/vgpu-mode";

/// How much of each device's memory a vGPU pod asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VgpuMemory {
    /// MiB per device (`volcano.sh/vgpu-memory`).
    Mib(u32),
    /// Percent of each device's memory (`volcano.sh/vgpu-memory-percentage`, or 100 when
    /// neither is given: upstream's `ExtractResourceRequest` default).
    Percent(u8),
}

/// What one pod asks of Volcano's vGPU devices (upstream's `ContainerDeviceRequest` of its
/// one container asking for them): `number` devices, each with `memory` and `cores` percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VgpuRequest {
    /// Devices (`Nums`), at least 1.
    pub number: u32,
    /// Memory per device (`Memreq` / `MemPercentagereq`).
    pub memory: VgpuMemory,
    /// Percent of each device's cores (`Coresreq`), 0 to 100.
    pub cores: u8,
}

impl VgpuRequest {
    /// MiB it takes of a device of `device_mib` (upstream's `memreqForCard`: a percentage
    /// of the device's memory, truncated, else the MiB asked).
    pub fn mib_on(self, device_mib: u32) -> u32 {
        match self.memory {
            VgpuMemory::Mib(m) => m,
            VgpuMemory::Percent(p) => (u64::from(device_mib) * u64::from(p) / 100) as u32,
        }
    }
}

/// A node's GPU memory as KAI reads it (`getNodeGpuMemory`): the label's MiB (a value of a
/// TiB or more is taken as bytes), floored to a multiple of 100; 100 without a valid label.
pub fn kai_gpu_memory(label: Option<&str>) -> i64 {
    const TIB_IN_MIB: i64 = 1024 * 1024;
    match label.and_then(|v| v.trim().parse::<i64>().ok()) {
        Some(v) => {
            let mib = if v < TIB_IN_MIB { v } else { v / (1024 * 1024) };
            mib - mib % 100
        }
        None => KAI_DEFAULT_GPU_MEMORY,
    }
}

/// How kube-scheduler scores nodes for GPU pods and picks their devices
/// (`spec.gpuPlacement.policy`). `Default` is kube-scheduler's own scoring (LeastAllocated and
/// BalancedAllocation over cpu and memory); the others are the score plugins of the FGD
/// simulator, each run alone over every feasible node as its experiments do
/// (`percentageOfNodesToScore: 100`), ties at random (`selectHost`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GpuPolicy {
    /// kube-scheduler's default score plugins; shares go to the best-fitting device.
    #[default]
    Default,
    /// `RandomScore`: a feasible node at random; shares on a random device that fits.
    Random,
    /// `DotProductScore` (merged GPU dimension, normalised by the largest node): the node
    /// whose free (cpu, GPU) vector is least aligned with the pod's; shares best-fit.
    DotProduct,
    /// `GpuClusteringScore`: nodes already running pods of the same GPU kind first.
    Clustering,
    /// `GpuPackingScore`: partly used GPUs first, then partly used nodes, then idle ones.
    Packing,
    /// `BestFitScore`: the least free cpu and GPU left after the pod (weights ½ each).
    BestFit,
    /// `FGDScore`: Fragmentation Gradient Descent, the least growth of the node's
    /// fragmentation against the target workload; shares on the device that grows it least.
    Fgd,
}

impl GpuPolicy {
    /// Every policy with its name in `spec.gpuPlacement.policy`.
    pub const NAMES: [(&'static str, GpuPolicy); 7] = [
        ("Default", GpuPolicy::Default),
        ("Random", GpuPolicy::Random),
        ("DotProduct", GpuPolicy::DotProduct),
        ("Clustering", GpuPolicy::Clustering),
        ("Packing", GpuPolicy::Packing),
        ("BestFit", GpuPolicy::BestFit),
        ("FGD", GpuPolicy::Fgd),
    ];

    /// Its name in `spec.gpuPlacement.policy`.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("Default", |(n, _)| n)
    }
}

/// One pod shape of the target workload with its share of the pods (the FGD simulator's
/// "typical pods").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TargetPod {
    /// Its cpu request, millicores.
    pub cpu_milli: i64,
    /// Its GPU demand (None: a CPU-only pod).
    pub gpu: Option<GpuDemand>,
    /// Its share of the target workload's pods (the shares sum to 1).
    pub freq: f64,
}

/// Device bookkeeping and shared-GPU placement settings (`SimConfig::gpu`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuSharingConfig {
    /// GPUs are bookkept per device: whole-GPU pods take free devices, a share stays on one
    /// device, and the run reports the fragmentation figures.
    pub devices: bool,
    /// kube-scheduler's scoring and device choice for GPU pods.
    pub policy: GpuPolicy,
    /// The workload fragmentation is measured against (FGD's target workload); empty: none
    /// known, and the fragmentation figures are not reported.
    pub target: Vec<TargetPod>,
}

/// The target workload of a pod list as the FGD simulator derives it (`GetTypicalPods`, with
/// the settings of its experiments: `podPopularityThreshold: 95`, `podIncreaseStep: 1`,
/// `isInvolvedCpuPods: true`): pods counted by shape (cpu, GPU demand), CPU-only pods
/// included; the most common shapes are taken one at a time until they cover at least 95 % of
/// the pods, and their shares are scaled to sum to 1. Shapes of equal counts are taken in
/// shape order (upstream leaves that order to Go's map iteration).
pub fn target_workload(pods: impl IntoIterator<Item = (i64, Option<GpuDemand>)>) -> Vec<TargetPod> {
    target_workload_with(pods, 95.0, 1)
}

/// `target_workload` with upstream's two settings: the share of pods the shapes must cover
/// (percent) and how many shapes are added at a time.
pub fn target_workload_with(
    pods: impl IntoIterator<Item = (i64, Option<GpuDemand>)>,
    popularity_percent: f64,
    step: usize,
) -> Vec<TargetPod> {
    let mut counts: std::collections::BTreeMap<(i64, Option<GpuDemand>), u64> =
        std::collections::BTreeMap::new();
    let mut total = 0u64;
    for shape in pods {
        *counts.entry(shape).or_default() += 1;
        total += 1;
    }
    if total == 0 {
        return Vec::new();
    }
    let mut shapes: Vec<((i64, Option<GpuDemand>), u64)> = counts.into_iter().collect();
    // Most common first; the sort is stable, so equal counts keep shape order.
    shapes.sort_by_key(|s| std::cmp::Reverse(s.1));
    let expected = popularity_percent * total as f64 / 100.0;
    let (mut taken, mut covered, mut upto) = (0usize, 0u64, 0usize);
    while (covered as f64) < expected && taken < shapes.len() {
        upto += step.max(1);
        while taken < upto && taken < shapes.len() {
            covered += shapes[taken].1;
            taken += 1;
        }
    }
    shapes.truncate(taken);
    shapes
        .into_iter()
        .map(|((cpu_milli, gpu), n)| TargetPod {
            cpu_milli,
            gpu,
            freq: n as f64 / covered as f64,
        })
        .collect()
}

/// The fragmentation of one node against the target workload, in milli-GPUs (FGD's
/// `NodeGpuShareFragAmountScore`): for each target pod shape, weighted by its share, the
/// node's free milli-GPUs that shape could not use. A shape that fits (enough devices with
/// its per-device milli free, and its cpu) cannot use the devices with less than its
/// per-device milli free; a shape that does not fit, and a CPU-only shape, cannot use any.
/// `free` holds each device's free milli-GPUs, `cpu_free` the node's free millicores.
pub fn node_fragmentation(cpu_free: i64, free: &[u16], target: &[TargetPod]) -> f64 {
    let total: i64 = free.iter().map(|&f| i64::from(f)).sum();
    if total == 0 {
        return 0.0;
    }
    let mut frag = 0.0;
    for t in target {
        let unusable = match t.gpu {
            None => total,
            Some(d) => {
                let per = d.milli_per_device();
                let fitting = free.iter().filter(|&&f| i64::from(f) >= per).count();
                if fitting >= d.devices() as usize && cpu_free >= t.cpu_milli {
                    free.iter()
                        .map(|&f| i64::from(f))
                        .filter(|&f| f < per)
                        .sum()
                } else {
                    total
                }
            }
        };
        frag += t.freq * unusable as f64;
    }
    frag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kai_share_in_milli() {
        assert_eq!(GpuShare::Fraction(500).milli_on(81920), Some(500));
        assert_eq!(GpuShare::Memory(40960).milli_on(81920), Some(500));
        assert_eq!(GpuShare::Memory(1000).milli_on(3000), Some(334));
        assert_eq!(GpuShare::Memory(2000).milli_on(100), None);
        assert_eq!(kai_gpu_memory(Some("81920")), 81900);
        assert_eq!(kai_gpu_memory(Some("85899345920")), 81900);
        assert_eq!(kai_gpu_memory(None), 100);
    }

    #[test]
    fn demand_of_requests() {
        assert_eq!(GpuDemand::of(0, 0), None);
        assert_eq!(GpuDemand::of(2, 0), Some(GpuDemand::Whole(2)));
        assert_eq!(GpuDemand::of(0, 500), Some(GpuDemand::Share(500)));
        assert_eq!(GpuDemand::of(0, 1000), Some(GpuDemand::Whole(1)));
        assert_eq!(GpuDemand::of(0, 2000), Some(GpuDemand::Whole(2)));
        assert_eq!(GpuDemand::of(0, 1500), Some(GpuDemand::Whole(2)));
        assert_eq!(GpuDemand::Share(300).total_milli(), 300);
        assert_eq!(GpuDemand::Whole(4).total_milli(), 4000);
    }

    #[test]
    fn target_takes_popular_shapes_ten_at_a_time() {
        // 12 shapes: shape 0 has 50 pods, the others 5 each (105 pods). 60 % is 63 pods:
        // the first ten shapes (95 pods) cover it, the last two are left out.
        let mut pods = vec![(1000, Some(GpuDemand::Share(500))); 50];
        for k in 1..12 {
            pods.extend(std::iter::repeat_n((1000 * k, None), 5));
        }
        let t = target_workload_with(pods.clone(), 60.0, 10);
        assert_eq!(t.len(), 10);
        assert_eq!(t[0].gpu, Some(GpuDemand::Share(500)));
        assert!((t[0].freq - 50.0 / 95.0).abs() < 1e-12);
        let sum: f64 = t.iter().map(|p| p.freq).sum();
        assert!((sum - 1.0).abs() < 1e-12);
        // The experiments' settings: one shape at a time up to 95 % (100 pods): 11 shapes.
        assert_eq!(target_workload(pods).len(), 11);
    }

    #[test]
    fn fragmentation_follows_the_paper_example() {
        // One shape: 1 CPU, half a GPU. Devices 1000, 300, 0: the 300 cannot hold it.
        let target = [TargetPod {
            cpu_milli: 1000,
            gpu: Some(GpuDemand::Share(500)),
            freq: 1.0,
        }];
        assert_eq!(node_fragmentation(4000, &[1000, 300, 0], &target), 300.0);
        // Without cpu nothing fits: all 1300 free milli are fragments.
        assert_eq!(node_fragmentation(500, &[1000, 300, 0], &target), 1300.0);
        // A two-GPU shape does not fit one free device: everything is a fragment.
        let two = [TargetPod {
            cpu_milli: 0,
            gpu: Some(GpuDemand::Whole(2)),
            freq: 1.0,
        }];
        assert_eq!(node_fragmentation(0, &[1000, 300], &two), 1300.0);
        assert_eq!(node_fragmentation(0, &[1000, 1000, 300], &two), 300.0);
        // CPU-only shapes count every free milli-GPU (upstream's XL/XR classes).
        let cpu = [TargetPod {
            cpu_milli: 1,
            gpu: None,
            freq: 0.5,
        }];
        assert_eq!(node_fragmentation(10, &[1000], &cpu), 500.0);
        assert_eq!(node_fragmentation(10, &[0, 0], &cpu), 0.0);
    }
}
