//! Whole-run benchmarks: the same synthetic load, quota-only and on nodes, at two sizes, so a
//! run reports how cost grows with the number of workloads and with placement.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kueuesim_benches::{scale_world, synthetic_world};
use kueuesim_engine::Simulation;

fn end_to_end(c: &mut Criterion) {
    let mut g = c.benchmark_group("run");
    g.sample_size(10);
    for &n in &[1_000usize, 10_000] {
        let quota_only = synthetic_world(10, 0, n);
        g.bench_with_input(BenchmarkId::new("quota-only", n), &quota_only, |b, w| {
            b.iter(|| Simulation::new(w).run())
        });
        // The same load with Admission Fair Sharing on every ClusterQueue.
        let mut afs = quota_only.clone();
        afs.config.kueue.admission_fair_sharing =
            Some(kueuesim_model::world::AdmissionFairSharing {
                half_life: kueuesim_model::SimDuration::from_secs(3600),
                sampling_interval: kueuesim_model::SimDuration::from_secs(300),
                resource_weights_milli: Vec::new(),
            });
        for cq in &mut afs.cluster_queues {
            cq.admission_fair_sharing = true;
        }
        g.bench_with_input(BenchmarkId::new("quota-only-afs", n), &afs, |b, w| {
            b.iter(|| Simulation::new(w).run())
        });
        let on_nodes = synthetic_world(10, 64, n);
        g.bench_with_input(
            BenchmarkId::new("first-fit-64-nodes", n),
            &on_nodes,
            |b, w| b.iter(|| Simulation::new(w).run()),
        );
    }
    // Overload (docs/performance.md, "Overload"): 10 ClusterQueues in a cohort offered five
    // times their quota; the cost of the requeue storms after every release.
    let overload = kueuesim_benches::overloaded_world(10, 5_000);
    g.bench_with_input(
        BenchmarkId::new("overload-cohort", 5_000),
        &overload,
        |b, w| b.iter(|| Simulation::new(w).run()),
    );
    // The scale path (docs/performance.md): 10,240 nodes in 10 zones, 3,000 mixed Volcano /
    // KAI / kube-scheduler workloads offering 75% of the GPUs, admission with preemption.
    let scale = scale_world(10, 3_000, 0.75);
    g.bench_with_input(
        BenchmarkId::new("scale-10240-nodes", 3_000),
        &scale,
        |b, w| b.iter(|| Simulation::new(w).run()),
    );
    g.finish();
}

criterion_group!(benches, end_to_end);
criterion_main!(benches);
