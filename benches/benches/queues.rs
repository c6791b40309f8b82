//! Cost against the number of queues (docs/performance.md): the same 100,000 one-GPU
//! workloads over 100 and over 10,000 LocalQueues of one ClusterQueue, and over 100 and
//! 10,000 ClusterQueues of one cohort (one LocalQueue each), each run as `kueuesim run`'s
//! summary runs it: loaded as a stream from the YAML `scripts/scale-queues.sh` writes, lean,
//! each workload keeping its newest event per source. Idle queues should cost nothing, so
//! the pairs should be close.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kueuesim_benches::queues_yaml;
use kueuesim_engine::Simulation;
use kueuesim_scenario::{LoadOptions, SourceFile, load};

/// Loads `text` as a stream and runs it to the end; the events processed.
fn load_and_run(text: &str) -> u64 {
    let files = [SourceFile {
        name: "scale.yaml".into(),
        text: text.to_string(),
    }];
    let mut loaded = load(
        &files,
        LoadOptions {
            stream: true,
            ..LoadOptions::default()
        },
    )
    .expect("the scenario loads");
    let stream = loaded.stream.take().expect("a stream");
    let outcome = Simulation::new(&loaded.world)
        .with_stream(stream)
        .last_events_only()
        .run();
    outcome.stats.events_processed
}

fn queues(c: &mut Criterion) {
    let mut g = c.benchmark_group("queues");
    g.sample_size(10);
    // (what varies, queues, LocalQueues, ClusterQueues, nodes): the ClusterQueue runs have
    // 10,000 GPUs so that every ClusterQueue holds at least one GPU of quota.
    for (what, n, lqs, cqs, nodes) in [
        ("localqueues-100k-workloads", 100, 100, 1, 100),
        ("localqueues-100k-workloads", 10_000, 10_000, 1, 100),
        ("clusterqueues-100k-workloads", 100, 100, 100, 1_250),
        ("clusterqueues-100k-workloads", 10_000, 10_000, 10_000, 1_250),
    ] {
        let text = queues_yaml(100_000, lqs, cqs, nodes, 80);
        g.bench_with_input(BenchmarkId::new(what, n), &text, |b, text| {
            b.iter(|| load_and_run(text))
        });
    }
    g.finish();
}

criterion_group!(benches, queues);
criterion_main!(benches);
