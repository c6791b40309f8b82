//! KAI's consolidation action: the cases of upstream's `consolidation_test.go`
//! (`scenarios/placement/K25`–`K36`, `K54`) and `consolidation_subgroups_test.go`
//! (`K46`–`K51`) as scenarios, batch Jobs (a PodGroup with bare Pods for a job with subgroups
//! or an MPI job) whose running pods start on the test's nodes through
//! `kueuesim.io/bound-nodes` or `spec.nodeName`, each under ten seeds: which pods moved
//! where, which pending job took the freed nodes, and KAI's events.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result};

use crate::util::{load_dir, wl};

/// Runs `check` on `scenarios/placement/<case>` under seeds 1 to 10, naming the seed of a
/// failure.
fn each(case: &str, check: impl Fn(&SimulationResult)) {
    let loaded = load_dir(&format!("placement/{case}"));
    for seed in 1..=10 {
        let mut world = loaded.world.clone();
        world.config.seed = seed;
        let r = result(&world, &Simulation::new(&world).run());
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| check(&r))) {
            eprintln!("{case}: failed under seed {seed}");
            resume_unwind(e);
        }
    }
}

/// The nodes of every pod set, flattened, in pod order.
fn nodes(w: &WorkloadOut) -> Vec<&str> {
    w.pod_sets
        .iter()
        .flat_map(|p| p.nodes.iter().map(String::as_str))
        .collect()
}

/// The job `name` of namespace `team`.
fn job<'a>(r: &'a SimulationResult, name: &str) -> &'a WorkloadOut {
    wl(r, "team", name)
}

/// `name` kept running where it was: no eviction, on `on`.
fn untouched(r: &SimulationResult, name: &str, on: &[&str]) {
    let w = job(r, name);
    assert!(w.evictions.is_empty(), "{name}: {:?}", w.evictions);
    assert_eq!(w.state, "Running", "{name}");
    assert_eq!(nodes(w), on, "{name}");
}

/// `name`'s pods were moved once by the consolidation for `by` (its PodGroup) at 1m, and its
/// replacements run on `on` since the moved pods were gone (1m30s).
fn moved(r: &SimulationResult, name: &str, by: &str, on: &[&str]) {
    let w = job(r, name);
    assert_eq!(w.evictions.len(), 1, "{name}: {:?}", w.evictions);
    assert_eq!(w.evictions[0].reason, "Consolidation");
    assert_eq!(w.evictions[0].at, 60.0);
    assert_eq!(w.evictions[0].preemptor.as_deref(), Some(by));
    assert_eq!(w.state, "Running", "{name}");
    assert_eq!(nodes(w), on, "{name}");
    assert_eq!(w.running_at, Some(90.0), "{name}");
}

/// `name` was pipelined by the consolidation and binds on `on` once the moved pods are gone
/// (podTermination 30s after 1m).
fn placed_after_consolidation(r: &SimulationResult, name: &str, on: &[&str]) {
    let w = job(r, name);
    assert!(w.evictions.is_empty(), "{name}: {:?}", w.evictions);
    assert_eq!(nodes(w), on, "{name}");
    assert_eq!(w.running_at, Some(90.0), "{name}");
}

/// `name` never ran.
fn still_pending(r: &SimulationResult, name: &str) {
    let w = job(r, name);
    assert_eq!(w.state, "Pending", "{name}");
    assert!(nodes(w).is_empty(), "{name}: {:?}", nodes(w));
}

#[test]
fn k25_consolidation_for_the_first_pending_job_only() {
    each("K25-consolidate-one-of-two", |r| {
        untouched(r, "running-job0", &["node0"]);
        moved(r, "running-job1", "team/pg-pending-job0", &["node0"]);
        placed_after_consolidation(r, "pending-job0", &["node1"]);
        still_pending(r, "pending-job1");
        assert_eq!(r.summary.evictions.get("Consolidation"), Some(&1));
        // KAI's events on the moved pod: the eviction (`GetConsolidateMessage`) and the
        // pipelining to its planned node.
        let events = &job(r, "running-job1").events;
        let pod = events
            .iter()
            .find(|e| e.reason == "Evict")
            .map(|e| e.message.clone())
            .unwrap_or_else(|| panic!("no Evict event: {events:?}"));
        assert!(
            pod.starts_with("Pod team/running-job1-")
                && pod.ends_with(
                    " was preempted and rescheduled due to bin packing (resource consolidation) procedure"
                ),
            "{pod}"
        );
        assert!(
            events.iter().any(|e| e.reason == "Pipelined"
                && e.source == "kai-scheduler"
                && e.message.starts_with("Pod team/running-job1-")
                && e.message.ends_with(" was pipelined to node node0")),
            "{events:?}"
        );
    });
}

#[test]
fn k26_no_consolidation_without_enough_free_gpus_then_for_the_next_job() {
    each("K26-consolidate-for-the-second-pending-job", |r| {
        untouched(r, "running-job0", &["node0"]);
        untouched(r, "running-job1", &["node1"]);
        moved(r, "running-job2", "team/pg-pending-job1", &["node0"]);
        still_pending(r, "pending-job0");
        placed_after_consolidation(r, "pending-job1", &["node1"]);
    });
}

#[test]
fn k27_a_job_bigger_than_the_free_gpus_is_skipped() {
    each("K27-consolidate-skips-a-job-too-big", |r| {
        untouched(r, "running-job0", &["node0"]);
        moved(r, "running-job1", "team/pg-pending-job1", &["node0"]);
        still_pending(r, "pending-job0");
        placed_after_consolidation(r, "pending-job1", &["node1"]);
    });
}

#[test]
fn k28_consolidation_for_part_of_an_elastic_job() {
    each("K28-consolidate-part-of-an-elastic-job", |r| {
        untouched(r, "running-job0", &["node0"]);
        moved(r, "running-job1", "team/pending-job1", &["node0"]);
        untouched(r, "running-job2", &["node1"]);
        still_pending(r, "pending-job0");
        // One pod of pending-job1 (minMember 1) on node1, the second finds no room.
        assert_eq!(nodes(job(r, "pending-job1")), ["node1"]);
    });
}

#[test]
fn k29_a_victim_that_fits_back_on_its_node_stays() {
    each("K29-consolidate-moves-only-what-it-must", |r| {
        untouched(r, "running-job0", &["node0"]);
        moved(r, "running-job1", "team/pg-pending-job0", &["node0"]);
        untouched(r, "running-job2", &["node1"]);
        placed_after_consolidation(r, "pending-job0", &["node1"]);
    });
}

#[test]
fn k30_consolidation_moves_another_queues_job_before_reclaim_runs() {
    each("K30-consolidate-across-queues", |r| {
        untouched(r, "running-job0", &["node0"]);
        moved(r, "running-job1", "team/pg-pending-job0", &["node1"]);
        untouched(r, "running-job2", &["node1"]);
        placed_after_consolidation(r, "pending-job0", &["node0"]);
        assert_eq!(r.summary.evictions.get("Reclaim"), Some(&0));
    });
}

#[test]
fn k31_the_lowest_priority_job_moves_first() {
    each("K31-consolidate-spares-the-interactive-job", |r| {
        moved(r, "running-job0", "team/pg-pending-job0", &["node1"]);
        untouched(r, "running-job1", &["node1"]);
        placed_after_consolidation(r, "pending-job0", &["node0"]);
    });
}

#[test]
fn k32_an_elastic_jobs_pod_moves_and_its_other_pod_stays() {
    each("K32-consolidate-an-elastic-job", |r| {
        moved(
            r,
            "running-job0",
            "team/pg-pending-job0",
            &["node0", "node0"],
        );
        // Only the pod of node1 was evicted.
        let evicts = job(r, "running-job0")
            .events
            .iter()
            .filter(|e| e.reason == "Evict")
            .count();
        assert_eq!(evicts, 1);
        placed_after_consolidation(r, "pending-job0", &["node1"]);
    });
}

#[test]
fn k33_consolidation_for_the_pending_pod_of_a_running_elastic_job() {
    each("K33-consolidate-for-an-elastic-jobs-pod", |r| {
        let victim = job(r, "running-job0");
        assert_eq!(victim.evictions.len(), 1, "{:?}", victim.evictions);
        assert_eq!(victim.evictions[0].reason, "Consolidation");
        assert_eq!(
            victim.evictions[0].preemptor.as_deref(),
            Some("team/running-job1")
        );
        assert_eq!(nodes(victim), ["node0", "node0", "node0", "node0"]);
        assert_eq!(nodes(job(r, "running-job1")), ["node1", "node1"]);
    });
}

#[test]
fn k34_a_victim_that_finds_no_node_is_not_moved() {
    each("K34-consolidate-jumps-over-full-nodes", |r| {
        untouched(r, "running-job0", &["node0"]);
        untouched(r, "running-job1", &["node1"]);
        moved(r, "running-job2", "team/pg-pending-job0", &["node1"]);
        untouched(r, "running-job3", &["node3"]);
        placed_after_consolidation(r, "pending-job0", &["node2"]);
    });
}

#[test]
fn k35_a_gang_on_two_nodes_freed_by_two_moves() {
    each("K35-consolidate-two-nodes-for-a-gang", |r| {
        for (i, node) in ["node0", "node1", "node2", "node3", "node0", "node1"]
            .iter()
            .enumerate()
        {
            untouched(r, &format!("running-job{i}"), &[node]);
        }
        moved(r, "running-job6", "team/pending-job0", &["node0"]);
        moved(r, "running-job7", "team/pending-job0", &["node0"]);
        let mut gang = nodes(job(r, "pending-job0"));
        gang.sort_unstable();
        assert_eq!(gang, ["node2", "node3"]);
        assert_eq!(job(r, "pending-job0").running_at, Some(90.0));
        assert_eq!(r.summary.evictions.get("Consolidation"), Some(&2));
    });
}

#[test]
fn k36_a_rack_freed_for_a_gang_with_a_required_topology() {
    // queue0's limit of 4 is reached exactly once the gang binds: its pipelined GPUs are
    // counted once (they were counted twice before, and the limit refused the gang).
    each("K36-consolidate-for-a-rack", |r| {
        untouched(r, "running-job0", &["node0"]);
        moved(r, "running-job1", "team/pending-job0", &["node0"]);
        placed_after_consolidation(r, "pending-job0", &["node1", "node1"]);
    });
}

#[test]
fn k46_a_job_with_subgroups_consolidates_a_running_job() {
    // consolidation_subgroups_test "job with sub groups consolidates a running job":
    // running-job1 is older than the pending job, so the scenario places it again first (job
    // order): it takes node0's free 2 GPUs and both subgroups' pods take node1. Placing the
    // job first put sub-0's 1-GPU pod on node0 and left running-job1 no node.
    each("K46-consolidate-for-a-job-with-subgroups", |r| {
        untouched(r, "running-job0", &["node0"]);
        moved(r, "running-job1", "team/pending-job0", &["node0"]);
        placed_after_consolidation(r, "pending-job0", &["node1", "node1"]);
        assert_eq!(r.summary.evictions.get("Consolidation"), Some(&1));
    });
}

/// The pods of `name` that KAI's consolidation evicted (its `Evict` events' messages name
/// them), in event order.
fn evicted_pods(r: &SimulationResult, name: &str) -> Vec<String> {
    job(r, name)
        .events
        .iter()
        .filter(|e| e.reason == "Evict")
        .map(|e| e.message.split(' ').nth(1).unwrap_or_default().to_string())
        .collect()
}

#[test]
fn k47_subgroups_consolidate_up_to_their_minimums() {
    // "Job with sub groups consolidates another job up to MinAvailable": the pass asks one pod
    // of each subgroup; the other four find no room.
    each("K47-consolidate-for-subgroups-up-to-their-minimum", |r| {
        untouched(r, "running-job0", &["node0"]);
        moved(r, "running-job1", "team/pending-job0", &["node0"]);
        let w = job(r, "pending-job0");
        assert_eq!(w.state, "Pending");
        let per_set: Vec<&[String]> = w.pod_sets.iter().map(|p| p.nodes.as_slice()).collect();
        assert_eq!(
            per_set,
            [&["node1".to_string()][..], &["node1".to_string()][..]]
        );
    });
}

#[test]
fn k48_no_consolidation_when_a_subgroup_cannot_be_satisfied() {
    // "… cannot satisfy sub group gang": 6 GPUs asked, 4 free.
    each("K48-no-consolidation-for-an-unsatisfiable-subgroup", |r| {
        untouched(r, "running-job0", &["node0"]);
        untouched(r, "running-job1", &["node1"]);
        still_pending(r, "pending-job0");
        assert_eq!(r.summary.evictions.get("Consolidation"), None);
    });
}

#[test]
fn k49_one_subgroup_of_a_running_job_moves() {
    // "job with sub groups consolidated by a pending job - partial eviction": the victim,
    // older, is placed again before the pending job; its sub-0 pod stays on node0 and only
    // its sub-1 pod moves there. Placing the pending job first put it on node0 and moved the
    // sub-0 pod to node1 instead.
    each("K49-consolidate-part-of-a-job-with-subgroups", |r| {
        moved(r, "running-job", "team/pg-pending-job", &["node0", "node0"]);
        assert_eq!(evicted_pods(r, "running-job"), ["team/running-job-b-0"]);
        placed_after_consolidation(r, "pending-job", &["node1"]);
    });
}

#[test]
fn k50_both_subgroups_of_a_running_job_move() {
    // "job with sub groups consolidated by a pending job - complete eviction".
    each("K50-consolidate-all-of-a-job-with-subgroups", |r| {
        untouched(r, "running-job0", &["node0"]);
        moved(r, "running-job1", "team/pending-job", &["node0", "node0"]);
        assert_eq!(evicted_pods(r, "running-job1").len(), 2);
        placed_after_consolidation(r, "pending-job", &["node1", "node2"]);
    });
}

#[test]
fn k51_only_the_pod_above_the_minimum_moves() {
    // "job with sub groups above minAvailable consolidated by a pending job - complete
    // eviction": running-job0's sub-0 (minAvailable 1) holds 2 pods, so the victims queue
    // takes one pod of it first, the last in pod order (node1's, `GetTasksToEvict`); what is
    // left of running-job0 is at its minimum, after the pending job in the job order: the
    // job takes the emptied node1 and the pod goes to node0. Taking running-job0 whole put
    // the job on node0 and moved node0's pod to node1.
    each("K51-consolidate-a-subgroup-above-its-minimum", |r| {
        moved(
            r,
            "running-job0",
            "team/pg-pending-job",
            &["node0", "node0"],
        );
        assert_eq!(evicted_pods(r, "running-job0"), ["team/running-job0-a-1"]);
        placed_after_consolidation(r, "pending-job", &["node1"]);
        assert_eq!(r.summary.evictions.get("Consolidation"), Some(&1));
    });
}

#[test]
fn k54_nothing_moves_for_an_mpi_job_above_its_queues_limit() {
    // A guard: upstream's "MPI jobs consolidation" leaves everything as it is, as does the
    // main branch before consolidation was simulated.
    each(
        "K54-no-consolidation-for-mpi-jobs-at-the-queue-limit",
        |r| {
            for name in ["running-job0", "running-job1", "running-job2"] {
                untouched(r, name, &["node1", "node0", "node0"]);
            }
            still_pending(r, "pending-job");
            let limit = job(r, "pending-job")
                .events
                .iter()
                .any(|e| e.reason == "Unschedulable" && e.message.starts_with("OverLimit: queue0"));
            assert!(limit, "{:?}", job(r, "pending-job").events);
        },
    );
}
