//! One Kueue scheduling cycle at scale: 1,000 ClusterQueues in 100 cohorts with 50,000
//! pending workloads. Measured from a prepared state (all arrivals processed, the cycle
//! next): once with every head fitting its nominal quota, once with every ClusterQueue full so
//! each head runs the preemption oracle and the classical preemption search.

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use kueuesim_benches::cycle_world;
use kueuesim_engine::Simulation;

fn one_cycle(c: &mut Criterion) {
    let mut g = c.benchmark_group("admission-cycle");
    g.sample_size(20);
    for (label, contended) in [
        ("1000cq-100cohorts-50k-pending/fits", false),
        ("1000cq-100cohorts-50k-pending/preempts", true),
    ] {
        let world = cycle_world(100, 10, 50, contended);
        let mut prepared = Simulation::new(&world);
        assert!(prepared.run_until_next_cycle(), "a cycle is due");
        g.bench_with_input(
            BenchmarkId::from_parameter(label),
            &prepared,
            |b, prepared| {
                b.iter_batched(
                    || prepared.clone(),
                    |mut s| s.step(None),
                    BatchSize::LargeInput,
                )
            },
        );
    }
    g.finish();
}

criterion_group!(benches, one_cycle);
criterion_main!(benches);
