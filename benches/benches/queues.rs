//! Cost against the number of queues (docs/performance.md): the same 100,000 one-GPU
//! workloads over 100 and over 10,000 LocalQueues of one ClusterQueue, and over 100 and
//! 10,000 ClusterQueues of one cohort (one LocalQueue each), each run as `kueuesim run`'s
//! summary runs it: loaded as a stream from the YAML `scripts/scale-queues.sh` writes, lean,
//! each workload keeping its newest event per source. Timed twice: the run alone, where idle
//! queues should cost nothing, and loading and running, where reading each queue's object
//! costs its share.

/// The allocator the `kueuesim` binary runs with, so that the runs cost what they cost there
/// (with the system allocator, ten thousand queues' small lists cost more to grow and free).
#[global_allocator]
static GLOBAL: kueuesim_alloc::Allocator = kueuesim_alloc::Allocator;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use kueuesim_benches::queues_yaml;
use kueuesim_engine::Simulation;
use kueuesim_scenario::{LoadOptions, Loaded, SourceFile, load};

/// `text` loaded as a stream (what `kueuesim run` does before the run).
fn load_stream(text: &str) -> Loaded {
    let files = [SourceFile {
        name: "scale.yaml".into(),
        text: text.to_string(),
    }];
    load(
        &files,
        LoadOptions {
            stream: true,
            ..LoadOptions::default()
        },
    )
    .expect("the scenario loads")
}

/// Runs a loaded scenario to the end as the summary run does; the events processed.
fn run(mut loaded: Loaded) -> u64 {
    let stream = loaded.stream.take().expect("a stream");
    let outcome = Simulation::new(&loaded.world)
        .with_stream(stream)
        .last_events_only()
        .run();
    outcome.stats.events_processed
}

/// (what varies, queues, LocalQueues, ClusterQueues, nodes): the ClusterQueue runs have
/// 10,000 GPUs so that every ClusterQueue holds at least one GPU of quota.
const CASES: [(&str, usize, usize, usize, usize); 4] = [
    ("localqueues", 100, 100, 1, 100),
    ("localqueues", 10_000, 10_000, 1, 100),
    ("clusterqueues", 100, 100, 100, 1_250),
    ("clusterqueues", 10_000, 10_000, 10_000, 1_250),
];

fn queues(c: &mut Criterion) {
    // The run alone (the scenario loaded before each iteration, untimed): what the queues
    // cost the simulation.
    let mut g = c.benchmark_group("queues-run-100k-workloads");
    g.sample_size(10);
    for (what, n, lqs, cqs, nodes) in CASES {
        let text = queues_yaml(100_000, lqs, cqs, nodes, 80);
        g.bench_with_input(BenchmarkId::new(what, n), &text, |b, text| {
            b.iter_batched(|| load_stream(text), run, BatchSize::PerIteration)
        });
    }
    g.finish();
    // Loading and running, as `kueuesim run` does: reading ten thousand queue objects too.
    let mut g = c.benchmark_group("queues-load-and-run-100k-workloads");
    g.sample_size(10);
    for (what, n, lqs, cqs, nodes) in CASES {
        let text = queues_yaml(100_000, lqs, cqs, nodes, 80);
        g.bench_with_input(BenchmarkId::new(what, n), &text, |b, text| {
            b.iter(|| run(load_stream(text)))
        });
    }
    g.finish();
}

criterion_group!(benches, queues);
criterion_main!(benches);
