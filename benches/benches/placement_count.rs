//! The placement driver of the instruction-count guard (`scripts/instructions.sh`,
//! docs/performance.md): places the criterion bench's 32-pod × 8-GPU gang under a hard spine
//! constraint (Volcano `highestTierAllowed: 2` or KAI `requiredTopologyLevel: spine`) on the
//! bench's half-busy 4,096-node spine/leaf cluster, a fixed number of times.
//!
//! `placement_count volcano|kai [ITERATIONS [ZONES]]` (ZONES of 1,024 nodes, 4 by default:
//! the guard's 4,096 nodes; 16 gives the criterion bench's 16,384). Only `measured` is counted: the guard runs
//! this under callgrind with `--toggle-collect` on it, so building the world and releasing
//! each placement's pods after it are left out of the count, and so is a first placement
//! whose pods are released before the counted ones (see `main`). One cluster serves every
//! placement, as a run's cluster does: what it keeps between decisions (KAI's task-copy
//! counts and commit buffers) is there for each, and no copy of 4,096 nodes evicts the
//! caches before it. A bench target (so that
//! `cargo bench --no-run`, which CI runs anyway, builds it) but not a criterion bench: run by
//! `cargo bench` (which passes `--bench`), it does nothing.

use std::process::ExitCode;

use kueuesim_benches::{
    busy_cluster, gang_pods, release, spine_kai_job, spine_volcano_job, topology_world,
};
use kueuesim_engine::placement::{Cluster, Placement, PodNeeds, kai, volcano};
use kueuesim_model::{NodeId, World};

type Pods = Vec<(PodNeeds, Vec<Option<NodeId>>)>;

#[derive(Clone, Copy)]
enum Placer {
    Volcano,
    Kai,
}

/// One counted placement of the gang on `cluster`. Never inlined: the guard counts the
/// instructions under this symbol by name.
#[inline(never)]
fn measured(
    placer: Placer,
    world: &World,
    cluster: &mut Cluster,
    pods: &Pods,
    seed: u64,
) -> Placement {
    place(placer, world, cluster, pods, seed)
}

/// One placement of the gang on `cluster`.
fn place(
    placer: Placer,
    world: &World,
    cluster: &mut Cluster,
    pods: &Pods,
    seed: u64,
) -> Placement {
    let name = |_: usize, i: usize| format!("p-{i}");
    match placer {
        Placer::Volcano => volcano::place(world, cluster, &spine_volcano_job(pods, &name, seed)),
        Placer::Kai => kai::place(world, cluster, &spine_kai_job(pods, &name)),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let placer = match args.first().map(String::as_str) {
        Some("volcano") => Placer::Volcano,
        Some("kai") => Placer::Kai,
        // `cargo bench` runs every bench target with `--bench` (and a filter, if any).
        Some("--bench") => return ExitCode::SUCCESS,
        _ => {
            eprintln!("usage: placement_count volcano|kai [ITERATIONS [ZONES]]");
            return ExitCode::from(2);
        }
    };
    let iterations = match args.get(1).map(|s| s.parse::<u64>()) {
        None => 100,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("placement_count: ITERATIONS: {e}");
            return ExitCode::from(2);
        }
    };
    let zones = match args.get(2).map(|s| s.parse::<usize>()) {
        None => 4,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("placement_count: ZONES: expected a positive integer");
            return ExitCode::from(2);
        }
    };
    let world = topology_world(zones);
    let mut busy = busy_cluster(&world);
    let pods = gang_pods(&world, 32);
    // One decision for the gang's shape, not counted, then its pods released: the same free
    // capacity, but KAI now keeps the shape's per-domain task-copy counts, as the simulator's
    // cluster does after the first gang of a shape (the steady state the criterion bench's
    // `kai-required-spine` measures).
    let first = place(placer, &world, &mut busy, &pods, 0);
    release(&world, &mut busy, &pods, &first);
    for seed in 0..iterations {
        // The gang's pods are released after each placement, so that every one starts from
        // the same free capacity. The seed orders Volcano's equal-score HyperNodes, so the
        // iterations take different paths through the search.
        let placement = measured(placer, &world, &mut busy, &pods, seed);
        release(&world, &mut busy, &pods, &placement);
        let bound = placement.bound.len();
        if bound != 32 {
            // The world is built so that some spines hold the gang; anything else means the
            // driver no longer measures a successful placement.
            eprintln!("placement_count: {bound} of 32 pods bound (seed {seed})");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
