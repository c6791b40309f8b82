//! Loading a live cluster's `kubectl get … -A -o yaml` dump: 2,000 objects (750 nodes, 20
//! ClusterQueues and LocalQueues, 1,208 Workloads, half admitted) with the status and
//! managedFields kubectl prints.

use criterion::{Criterion, criterion_group, criterion_main};
use kueuesim_scenario::synthetic::kubectl_dump;
use kueuesim_scenario::{LoadOptions, SourceFile, load};

fn load_dump(c: &mut Criterion) {
    let text = kubectl_dump(750, 20, 1208);
    let files = [SourceFile {
        name: "dump.yaml".into(),
        text,
    }];
    let mut g = c.benchmark_group("load");
    g.sample_size(10);
    g.bench_function("kubectl-dump-2000-objects", |b| {
        b.iter(|| load(&files, LoadOptions::default()).expect("loads"))
    });
    g.finish();
}

criterion_group!(benches, load_dump);
criterion_main!(benches);
