//! One FGD decision (kube-scheduler with the `FGD` GPU policy scoring every node) on a cluster
//! shaped like openb's: 1,523 nodes in the node list's shapes (1,213 with 6,212 GPUs), about
//! half their milli-GPUs taken by shares and whole GPUs, against the same decision under
//! `BestFit` (one cheap score per node) to show what the fragmentation measure costs; what one
//! time-series sample of the device figures costs on that cluster (`figures`); and one KAI
//! decision for a GPU share (`gpu-fraction`) against one for a whole GPU on the same nodes
//! offering `nvidia.com/gpu`, half their devices shared or whole-used.

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use kueuesim_engine::placement::devices::DeviceChoice;
use kueuesim_engine::placement::{Cluster, PodNeeds, kai, kube};
use kueuesim_model::gpu::{
    GPU_MILLI, GpuDemand, GpuPolicy, GpuShare, NODE_GPU_MEMORY_LABEL, target_workload,
};
use kueuesim_model::{Node, NodeId, ResourceList, World};

/// openb's node shapes: (nodes, millicores, MiB, GPUs), from `openb_node_list_all_node.csv`.
const SHAPES: [(usize, i64, i64, i64); 27] = [
    (549, 96_000, 393_216, 8),
    (387, 104_000, 524_288, 2),
    (129, 32_000, 262_144, 0),
    (107, 16_000, 122_880, 2),
    (59, 96_000, 524_288, 0),
    (39, 128_000, 786_432, 8),
    (30, 96_000, 393_216, 0),
    (28, 32_000, 131_072, 4),
    (23, 32_000, 131_072, 0),
    (22, 64_000, 262_144, 2),
    (22, 64_000, 524_288, 0),
    (21, 96_000, 786_432, 8),
    (20, 104_000, 524_288, 0),
    (19, 8_000, 32_768, 1),
    (17, 96_000, 393_216, 4),
    (10, 32_000, 65_536, 0),
    (9, 48_000, 376_832, 4),
    (8, 64_000, 262_144, 0),
    (7, 64_000, 262_144, 8),
    (4, 64_000, 131_072, 0),
    (3, 104_000, 786_432, 0),
    (3, 8_000, 61_440, 1),
    (2, 8_000, 61_440, 2),
    (2, 128_000, 1_048_576, 1),
    (1, 82_000, 344_064, 8),
    (1, 104_000, 196_608, 0),
    (1, 96_000, 786_432, 0),
];

/// The openb-shaped world under `policy`, with a target workload like the trace's most
/// common shapes.
fn world(policy: GpuPolicy) -> World {
    let mut w = World::default();
    let cpu = w.resources.intern("cpu");
    let mem = w.resources.intern("memory");
    let milli = w.resources.intern(GPU_MILLI);
    for &(count, c, m, g) in &SHAPES {
        for _ in 0..count {
            let mut alloc = vec![0; w.resources.len()];
            alloc[cpu.index()] = c;
            alloc[mem.index()] = m << 20;
            alloc[milli.index()] = g * 1000;
            w.nodes.push(Node {
                name: format!("openb-node-{:04}", w.nodes.len()),
                labels: Default::default(),
                allocatable: alloc,
                taints: vec![],
                unschedulable: false,
            });
        }
    }
    let share = |m| Some(GpuDemand::Share(m));
    let shapes = [
        (3152, share(810), 1047),
        (11300, Some(GpuDemand::Whole(1)), 874),
        (11400, Some(GpuDemand::Whole(1)), 599),
        (3152, Some(GpuDemand::Whole(1)), 470),
        (11908, share(470), 388),
        (12500, None, 366),
        (8000, share(470), 360),
        (32000, None, 290),
        (18708, Some(GpuDemand::Whole(1)), 255),
        (11908, share(650), 237),
        (4000, share(320), 232),
        (16000, Some(GpuDemand::Whole(8)), 60),
    ];
    w.config.gpu.devices = true;
    w.config.gpu.policy = policy;
    w.config.gpu.target = target_workload(
        shapes
            .iter()
            .flat_map(|&(c, d, n)| std::iter::repeat_n((c, d), n)),
    );
    w
}

fn pod(w: &World, cpu: i64, milli: i64) -> PodNeeds {
    PodNeeds {
        requests: ResourceList::from_pairs(vec![
            (w.resources.lookup("cpu").unwrap(), cpu),
            (w.resources.lookup(GPU_MILLI).unwrap(), milli),
        ]),
        node_selector: Default::default(),
        tolerations: vec![],
    }
}

/// About half the GPUs taken: on every node with GPUs, device by device, a share or a whole
/// GPU in a fixed pattern, with some cpu.
fn half_full(w: &World) -> Cluster {
    let mut cluster = Cluster::new(w);
    let shares = [810, 1000, 470, 0, 320, 650, 1000, 0, 230];
    let mut k = 0;
    for n in 0..w.nodes.len() {
        let node = NodeId::from_index(n);
        let devices = cluster.devices.as_ref().unwrap().book.count(node);
        for d in 0..devices {
            k += 1;
            let m = shares[(n * 7 + d * 3 + k) % shares.len()];
            if m == 0 {
                continue;
            }
            let p = pod(w, 2000, m);
            let book = &mut cluster.devices.as_mut().unwrap().book;
            let demand = book.demand(&p.requests).unwrap();
            let Some(claim) = book.claim(node, demand, DeviceChoice::Index(d)) else {
                continue;
            };
            book.apply(node, claim, 1);
            cluster.apply(w, node, &p.requests, 1);
        }
    }
    cluster
}

fn one_decision(c: &mut Criterion) {
    let mut g = c.benchmark_group("gpu_share");
    for policy in [GpuPolicy::Fgd, GpuPolicy::BestFit] {
        let w = world(policy);
        let cluster = half_full(&w);
        for (what, cpu, milli) in [("share", 8000, 470), ("whole", 11300, 1000)] {
            let pods = vec![(pod(&w, cpu, milli), vec![None])];
            // Sanity: the decision binds the pod.
            let out = kube::place(&w, &mut cluster.clone(), &pods, 1);
            assert_eq!(out.bound.len(), 1, "{:?}", out.unplaced);
            g.bench_with_input(
                BenchmarkId::new(format!("{}-{what}", policy.name()), w.nodes.len()),
                &cluster,
                |b, cluster| {
                    b.iter_batched(
                        || cluster.clone(),
                        |mut c| {
                            let p = kube::place(&w, &mut c, &pods, 1);
                            (c, p)
                        },
                        BatchSize::LargeInput,
                    )
                },
            );
        }
    }
    g.finish();
}

/// The device figures of one time-series sample (allocation and fragmentation over every
/// node), on the half-full FGD cluster.
fn one_sample(c: &mut Criterion) {
    let w = world(GpuPolicy::Fgd);
    let cluster = half_full(&w);
    let cpu = w.resources.lookup("cpu").unwrap();
    let mut g = c.benchmark_group("gpu_share");
    g.bench_function(BenchmarkId::new("figures", w.nodes.len()), |b| {
        let mut c = cluster.clone();
        b.iter(|| {
            let nodes = c.nodes.clone();
            c.devices
                .as_mut()
                .unwrap()
                .figures(|n| nodes.free(n, cpu.index()))
        })
    });
    g.finish();
}

/// openb's node shapes offering `nvidia.com/gpu` (80 GiB GPUs), about half their devices
/// taken by KAI shares and whole GPUs.
fn kai_world() -> (World, Cluster) {
    let mut w = World::default();
    let cpu = w.resources.intern("cpu");
    let gpu = w.resources.intern(kueuesim_model::resources::GPU);
    for &(count, c, _, g) in &SHAPES {
        for _ in 0..count {
            let mut alloc = vec![0; w.resources.len()];
            alloc[cpu.index()] = c;
            alloc[gpu.index()] = g;
            w.nodes.push(Node {
                name: format!("openb-node-{:04}", w.nodes.len()),
                labels: kueuesim_model::Labels::new(vec![(
                    NODE_GPU_MEMORY_LABEL.into(),
                    "81920".into(),
                )]),
                allocatable: alloc,
                taints: vec![],
                unschedulable: false,
            });
        }
    }
    w.config.gpu.devices = true;
    let mut cluster = Cluster::new(&w);
    let name = |_: usize, _: usize| String::new();
    let fill = [Some(810), None, Some(470), Some(320), Some(650), None];
    for k in 0..4000 {
        let share = fill[k % fill.len()].map(GpuShare::Fraction);
        let requests = match share {
            Some(_) => vec![(cpu, 1000)],
            None => vec![(cpu, 1000), (gpu, 1)],
        };
        let pods = [(kai_pod(requests), vec![None])];
        kai::sharing::place(&w, &mut cluster, &kai_job(&pods, &name), &[share], None);
    }
    (w, cluster)
}

fn kai_pod(requests: Vec<(kueuesim_model::ResourceId, i64)>) -> PodNeeds {
    PodNeeds {
        requests: ResourceList::from_pairs(requests),
        node_selector: Default::default(),
        tolerations: vec![],
    }
}

fn kai_job<'a>(
    pods: &'a kueuesim_engine::placement::GangPods,
    name: &'a dyn Fn(usize, usize) -> String,
) -> kai::KaiJob<'a> {
    kai::KaiJob {
        pods,
        min_member: 1,
        constraint: None,
        job_name: "ns/pg",
        pod_name: name,
    }
}

/// One KAI decision: a 0.47 share (`sharing::place`) against a whole GPU (`kai::place`,
/// the indexed bin-pack) on the same half-full cluster.
fn kai_decision(c: &mut Criterion) {
    let (w, cluster) = kai_world();
    let cpu = w.resources.lookup("cpu").unwrap();
    let gpu = w.resources.lookup(kueuesim_model::resources::GPU).unwrap();
    let name = |_: usize, _: usize| String::new();
    let share_pods = [(kai_pod(vec![(cpu, 8000)]), vec![None])];
    let whole_pods = [(kai_pod(vec![(cpu, 8000), (gpu, 1)]), vec![None])];
    let share = [Some(GpuShare::Fraction(470))];
    let out = kai::sharing::place(
        &w,
        &mut cluster.clone(),
        &kai_job(&share_pods, &name),
        &share,
        None,
    );
    assert_eq!(out.bound.len(), 1, "{:?}", out.unplaced);
    let out = kai::place(&w, &mut cluster.clone(), &kai_job(&whole_pods, &name));
    assert_eq!(out.bound.len(), 1, "{:?}", out.unplaced);
    let mut g = c.benchmark_group("gpu_share");
    g.bench_function(BenchmarkId::new("kai-share", w.nodes.len()), |b| {
        b.iter_batched(
            || cluster.clone(),
            |mut c| {
                let p = kai::sharing::place(&w, &mut c, &kai_job(&share_pods, &name), &share, None);
                (c, p)
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function(BenchmarkId::new("kai-whole", w.nodes.len()), |b| {
        b.iter_batched(
            || cluster.clone(),
            |mut c| {
                let p = kai::place(&w, &mut c, &kai_job(&whole_pods, &name));
                (c, p)
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, one_decision, one_sample, kai_decision);
criterion_main!(benches);
