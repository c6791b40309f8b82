//! What node and GPU failures cost the million-workload run (issue 51's bar: within 1.5x of
//! the same run without failures): `scenarios/scale/million.yaml` as `kueuesim run` runs it
//! for a summary (streamed, lean), without and with `spec.failures` at the defaults'
//! rates (Llama 3's 419 interruptions in 54 days on 16,384 H100s, docs/scenario-format.md
//! "Failures"), both cut at the same horizon so that criterion's ten samples fit in minutes.
//! One iteration is the run alone; loading is done before it, untimed.
//! docs/performance.md has the whole-process figures of the whole run.

/// The allocator the `kueuesim` binary runs with, so the runs cost what they cost there.
#[global_allocator]
static GLOBAL: kueuesim_alloc::Allocator = kueuesim_alloc::Allocator;

use std::path::Path;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use kueuesim_engine::Simulation;
use kueuesim_model::{SimDuration, SimTime};
use kueuesim_scenario::{LoadOptions, Loaded, SourceFile, load};

/// The simulated horizon of each run: the first two days, where the cluster fills up and
/// the teams start to queue at their limits (the whole run's 29 days take half a minute).
const HORIZON_HOURS: i64 = 48;

/// The defaults of `spec.failures`, written out: a node fails every 32,800 hours, a GPU
/// every 86,300 hours, each repaired in 24 hours.
const LLAMA3_FAILURES: &str =
    "simulation/million:spec.failures={nodes: {mtbf: 32800h}, gpus: {mtbf: 86300h}}";

fn million() -> Vec<SourceFile> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/scale/million.yaml");
    let text = std::fs::read_to_string(&path).expect("the scenario is checked in");
    vec![SourceFile {
        name: path.display().to_string(),
        text,
    }]
}

/// The scenario loaded as `kueuesim run --until 48h [--set …]` loads it.
fn load_stream(files: &[SourceFile], sets: &[&str]) -> Loaded {
    let mut loaded = load(
        files,
        LoadOptions {
            stream: true,
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..LoadOptions::default()
        },
    )
    .expect("the scenario loads");
    loaded.world.config.until = Some(SimTime::ZERO + SimDuration::from_secs(HORIZON_HOURS * 3600));
    loaded
}

/// Runs a loaded scenario as the summary run does; the events processed.
fn run(mut loaded: Loaded) -> u64 {
    let stream = loaded.stream.take().expect("a stream");
    let outcome = Simulation::new(&loaded.world)
        .with_stream(stream)
        .last_events_only()
        .run();
    outcome.stats.events_processed
}

fn failures(c: &mut Criterion) {
    let files = million();
    let mut g = c.benchmark_group("million-48h");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(60));
    for (name, sets) in [
        ("no-failures", &[][..]),
        ("llama3-failures", &[LLAMA3_FAILURES][..]),
    ] {
        g.bench_with_input(BenchmarkId::from_parameter(name), &sets, |b, sets| {
            b.iter_batched(|| load_stream(&files, sets), run, BatchSize::PerIteration)
        });
    }
    g.finish();
}

criterion_group!(benches, failures);
criterion_main!(benches);
