//! Gang placement on a spine/leaf topology: a 32-pod × 8-GPU gang under a hard spine
//! constraint (Volcano `highestTierAllowed: 2`, KAI `requiredTopologyLevel: spine`) on 3-tier
//! clusters of 4,096 and 16,384 nodes with half the GPUs busy (some spines can hold it, some
//! cannot), against a naive placer that scans every node for every pod.
//!
//! KAI keeps, per task shape it has been asked about, each domain's count of task copies
//! that fit, in step with every bind and release for the rest of the run. The simulator's
//! cluster lives for the whole run, so `kai-required-spine` measures a decision after the
//! first one for the shape (the steady state), on one cluster whose gang is released after
//! each decision, untimed; `kai-required-spine-first` one on a fresh copy of a cluster that
//! has not seen the shape yet (the counts are built over every node first).
//!
//! `volcano-flat`: the same gang without topology on the same nodes, Volcano's flat node
//! search (the Philly trace's placement).

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use std::time::{Duration, Instant};

use kueuesim_benches::{
    busy_cluster, flat_volcano_job, gang_pods, naive_hard_topology, release, spine_kai_job,
    spine_volcano_job, topology_world,
};
use kueuesim_engine::placement::{kai, volcano};

// `iter_custom` times the KAI steady-state decisions itself (a criterion bench measures wall
// time by design; the simulator's own code never reads the clock).
#[allow(clippy::disallowed_methods)]
fn gang_under_a_spine(c: &mut Criterion) {
    let mut g = c.benchmark_group("placement");
    for zones in [4usize, 16] {
        let world = topology_world(zones);
        let nodes = world.nodes.len();
        let cluster = busy_cluster(&world);
        let pods = gang_pods(&world, 32);
        let name = |_: usize, i: usize| format!("p-{i}");
        // Sanity: both placers find a spine.
        {
            let mut c2 = cluster.clone();
            let job = spine_volcano_job(&pods, &name, 1);
            let p = volcano::place(&world, &mut c2, &job);
            assert_eq!(p.bound.len(), 32, "{:?}", p.unplaced);
            assert!(naive_hard_topology(&world, &cluster, &pods, 2).is_some());
        }
        g.bench_with_input(
            BenchmarkId::new("volcano-hard-spine", nodes),
            &cluster,
            |b, cluster| {
                b.iter_batched(
                    || cluster.clone(),
                    |mut c| {
                        let job = spine_volcano_job(&pods, &name, 1);
                        let p = volcano::place(&world, &mut c, &job);
                        // Returned, so the cluster is dropped outside the timing.
                        (c, p)
                    },
                    BatchSize::LargeInput,
                )
            },
        );
        let kai_job = || spine_kai_job(&pods, &name);
        // One decision for the gang's shape, then its pods released: the same free capacity,
        // with the shape's per-domain counts now kept.
        let mut seen = cluster.clone();
        let first = kai::place(&world, &mut seen, &kai_job());
        assert_eq!(first.bound.len(), 32, "{:?}", first.unplaced);
        release(&world, &mut seen, &pods, &first);
        // One cluster for every decision, as in a run: each placement's pods are released
        // after it, untimed, so each starts from the same free capacity with what the
        // cluster keeps between decisions (the shape's counts, the commit buffers) in place.
        g.bench_function(BenchmarkId::new("kai-required-spine", nodes), |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let p = kai::place(&world, &mut seen, &kai_job());
                    spent += start.elapsed();
                    assert_eq!(p.bound.len(), 32);
                    release(&world, &mut seen, &pods, &p);
                }
                spent
            })
        });
        g.bench_with_input(
            BenchmarkId::new("kai-required-spine-first", nodes),
            &cluster,
            |b, cluster| {
                b.iter_batched(
                    || cluster.clone(),
                    |mut c| {
                        let p = kai::place(&world, &mut c, &kai_job());
                        (c, p)
                    },
                    BatchSize::LargeInput,
                )
            },
        );
        g.sample_size(10);
        g.bench_with_input(
            BenchmarkId::new("naive-scan-every-node", nodes),
            &cluster,
            |b, cluster| b.iter(|| naive_hard_topology(&world, cluster, &pods, 2)),
        );
        g.sample_size(100);
    }
    g.finish();
}

/// Volcano's flat search (no `networkTopology` and no HyperNodes, as on the Philly trace): the
/// same 32-pod gang on the same busy nodes, each pod's predicate-and-score pass over the
/// sampled nodes (`CalculateNumOfFeasibleNodesToFind`: 5 % of 16,384, 18 % of 4,096). One
/// cluster for every decision, as in a run (its occupancy classes are kept between
/// decisions): each placement's pods are released after it, untimed.
#[allow(clippy::disallowed_methods)]
fn flat_gang(c: &mut Criterion) {
    let mut g = c.benchmark_group("placement");
    for zones in [4usize, 16] {
        let mut world = topology_world(zones);
        world.hypernodes = kueuesim_model::Topology::from_hypernodes(&[], world.nodes.len())
            .expect("no HyperNodes is a tree");
        let nodes = world.nodes.len();
        let mut cluster = busy_cluster(&world);
        let pods = gang_pods(&world, 32);
        let name = |_: usize, i: usize| format!("p-{i}");
        let job = flat_volcano_job(&pods, &name, 32);
        g.bench_function(BenchmarkId::new("volcano-flat", nodes), |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let p = volcano::place(&world, &mut cluster, &job);
                    spent += start.elapsed();
                    assert_eq!(p.bound.len(), 32, "{:?}", p.unplaced);
                    release(&world, &mut cluster, &pods, &p);
                }
                spent
            })
        });
    }
    g.finish();
}

criterion_group!(benches, gang_under_a_spine, flat_gang);
criterion_main!(benches);
