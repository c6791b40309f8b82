//! One Volcano allocation of a job of 8 vGPU pods (one device of 4000 MiB each, binpack,
//! `deviceshare.ScheduleWeight` 1) on 1,024 nodes of 8 GPUs of 24000 MiB, about half their
//! devices partly used, through the deviceshare filter and score (`vgpu`), against the same
//! job on the same nodes without its vGPU request, on node-level counts alone (`node-level`):
//! what the per-device check costs a placement.

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use kueuesim_engine::placement::{Cluster, PodNeeds, volcano};
use kueuesim_model::gpu::{VGPU_CORES, VGPU_MEMORY, VGPU_NUMBER, VgpuMemory, VgpuRequest};
use kueuesim_model::{DeviceShareArgs, Node, NodeId, ResourceList, VgpuPolicy, World};

const NODES: usize = 1024;
const GPUS: i64 = 8;
const MIB: i64 = 24_000;

fn world() -> World {
    let mut w = World::default();
    let cpu = w.resources.intern("cpu");
    let number = w.resources.intern(VGPU_NUMBER);
    let memory = w.resources.intern(VGPU_MEMORY);
    let cores = w.resources.intern(VGPU_CORES);
    for i in 0..NODES {
        let mut alloc = vec![0; w.resources.len()];
        alloc[cpu.index()] = 96_000;
        alloc[number.index()] = GPUS * 10;
        alloc[memory.index()] = GPUS * MIB;
        alloc[cores.index()] = GPUS * 100;
        w.nodes.push(Node {
            name: format!("node-{i:04}"),
            labels: Default::default(),
            allocatable: alloc,
            taints: vec![],
            unschedulable: false,
        });
    }
    w.config.volcano.deviceshare = Some(DeviceShareArgs {
        policy: VgpuPolicy::Binpack,
        weight: 1,
    });
    w
}

fn request(mib: u32) -> VgpuRequest {
    VgpuRequest {
        number: 1,
        memory: VgpuMemory::Mib(mib),
        cores: 0,
    }
}

/// The pod: 1 cpu and its vGPU amounts as node-level requests.
fn pod(w: &World, mib: i64) -> PodNeeds {
    let r = |n: &str| w.resources.lookup(n).unwrap();
    PodNeeds {
        requests: ResourceList::from_pairs(vec![
            (r("cpu"), 1000),
            (r(VGPU_NUMBER), 1),
            (r(VGPU_MEMORY), mib),
        ]),
        node_selector: Default::default(),
        tolerations: Vec::new(),
    }
}

/// About half the devices partly used: on every other node, a pseudo-random number of pods
/// of 6000 MiB each.
fn half_used(w: &World) -> Cluster {
    let mut cluster = Cluster::new(w);
    let p = pod(w, 6000);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for n in (0..NODES).step_by(2) {
        let node = NodeId::from_index(n);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        for _ in 0..(x % 24) {
            let book = cluster.vgpu.as_ref().unwrap();
            let Ok((claim, _)) = book.fit(node, request(6000)) else {
                break;
            };
            cluster.apply(w, node, &p.requests, 1);
            cluster.vgpu.as_mut().unwrap().apply(node, claim, 1);
        }
    }
    cluster
}

fn allocate(c: &mut Criterion) {
    let w = world();
    let cluster = half_used(&w);
    let pods = vec![(pod(&w, 4000), vec![None; 8])];
    let name = |ps: usize, i: usize| format!("job-{ps}-{i}");
    let job = kueuesim_benches::flat_volcano_job(&pods, &name, 8);
    let reqs = [Some(request(4000))];
    // Sanity: both place the whole job.
    let out = volcano::vgpu::place(&w, &mut cluster.clone(), &job, &reqs);
    assert_eq!(
        (out.bound.len(), out.vgpu.len()),
        (8, 8),
        "{:?}",
        out.unplaced
    );
    let out = volcano::place(&w, &mut cluster.clone(), &job);
    assert_eq!(out.bound.len(), 8, "{:?}", out.unplaced);
    let mut g = c.benchmark_group("vgpu");
    g.bench_function(BenchmarkId::new("vgpu", NODES), |b| {
        b.iter_batched(
            || cluster.clone(),
            |mut c| {
                let p = volcano::vgpu::place(&w, &mut c, &job, &reqs);
                (c, p)
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function(BenchmarkId::new("node-level", NODES), |b| {
        b.iter_batched(
            || cluster.clone(),
            |mut c| {
                let p = volcano::place(&w, &mut c, &job);
                (c, p)
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, allocate);
criterion_main!(benches);
