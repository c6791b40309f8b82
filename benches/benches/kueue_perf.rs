//! Kueue's own scheduler performance scenarios (`scenarios/kueue-perf/`, docs/validation.md)
//! as `kueuesim run` does them for a summary: load the file, stream its workloads into a lean
//! run. One iteration is a whole scenario, loading included.
//!
//! This bench links the system allocator (the `kueuesim` binary links mimalloc), so it
//! measures the engine's own work; docs/validation.md has the whole-process figures.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use kueuesim_engine::Simulation;
use kueuesim_scenario::{LoadOptions, SourceFile, load};

fn scenario(name: &str) -> Vec<SourceFile> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/kueue-perf")
        .join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&path).expect("the scenario is checked in");
    vec![SourceFile {
        name: path.display().to_string(),
        text,
    }]
}

fn run(files: &[SourceFile]) -> u64 {
    let options = LoadOptions {
        stream: true,
        ..LoadOptions::default()
    };
    let mut loaded = load(files, options).expect("loads");
    let stream = loaded.stream.take().expect("a streamed load");
    let outcome = Simulation::new(&loaded.world).with_stream(stream).run();
    outcome.stats.cycles
}

fn kueue_perf(c: &mut Criterion) {
    let mut g = c.benchmark_group("kueue-perf");
    g.sample_size(10);
    for name in ["baseline", "large-scale", "tas"] {
        let files = scenario(name);
        g.bench_function(name, |b| b.iter(|| run(&files)));
    }
    g.finish();
}

criterion_group!(benches, kueue_perf);
criterion_main!(benches);
