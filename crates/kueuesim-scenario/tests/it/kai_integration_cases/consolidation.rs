//! The cases of upstream's `integration_tests/consolidation/` and `consolidation_and_reclaim/`.

use super::*;

#[test]
fn consolidation_1_train_job_of_1_gpu_running_on_node0_1_train_job_of_1_gpu_running_on() {
    // integration_tests/consolidation/consolidation_test.go: "1 train job of 1 GPU running on node0, 1 train job of 1 GPU running on node 0, 1 pending job of 2 GPUs - consolidate".
    check(
        &[node("node0", 2), node("node1", 2)],
        &[queue("queue0", 1.0, 0.0)],
        &[
            on("running-job0", "queue0", "train", 1.0, "node0"),
            on("running-job1", "queue0", "train", 1.0, "node1"),
            pending("pending-job0", "queue0", "train", 2.0),
        ],
        &[
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node1"])),
        ],
    );
}

#[test]
fn consolidation_1_build_job_of_1_gpu_running_on_node0_1_build_job_of_1_gpu_running_on() {
    // integration_tests/consolidation/consolidation_test.go: "1 build job of 1 GPU running on node0, 1 build job of 1 GPU running on node 0, 1 pending job of 2 GPUs - don't consolidate".
    check(
        &[node("node0", 2), node("node1", 2)],
        &[queue("queue0", 1.0, 0.0)],
        &[
            on("running-job0", "queue0", "build", 1.0, "node0"),
            on("running-job1", "queue0", "build", 1.0, "node1"),
            pending("pending-job0", "queue0", "train", 2.0),
        ],
        &[],
    );
}

/// The nodes of upstream's topology cases: two zones of three racks, a node of 3 GPUs per
/// rack, named `<zone>-<rack>`.
const RACKS: [(&str, &str, &str); 6] = [
    ("zone1-rack1", "zone1", "rack1"),
    ("zone1-rack2", "zone1", "rack2"),
    ("zone1-rack3", "zone1", "rack3"),
    ("zone2-rack1", "zone2", "rack1"),
    ("zone2-rack2", "zone2", "rack2"),
    ("zone2-rack3", "zone2", "rack3"),
];

/// Upstream's topology consolidation: a 1-GPU train job runs on each rack's node
/// (`running-job-<node>`) and a gang of two 3-GPU pods required within one zone is pending;
/// zone2's last two racks are emptied onto zone1-rack1 for it. `first` is a node listed
/// before the racks.
fn consolidate_for_a_zone(first: Option<Node>) {
    const JOBS: [&str; 6] = [
        "running-job-zone1-rack1",
        "running-job-zone1-rack2",
        "running-job-zone1-rack3",
        "running-job-zone2-rack1",
        "running-job-zone2-rack2",
        "running-job-zone2-rack3",
    ];
    let mut nodes: Vec<Node> = first.into_iter().collect();
    nodes.extend(
        RACKS
            .iter()
            .map(|&(n, zone, rack)| racked(n, 3, zone, rack)),
    );
    let mut jobs: Vec<Job> = JOBS
        .iter()
        .zip(RACKS)
        .map(|(&name, (node, ..))| on(name, "queue0", "train", 1.0, node))
        .collect();
    jobs.push(job("pending-job0", "queue0", "train", 3.0, &[Pending, Pending]).required("zone"));
    check_topology(
        &["zone", "rack"],
        &nodes,
        &[queue("queue0", 1.0, 0.0)],
        &jobs,
        &[
            (
                "running-job-zone2-rack2",
                Moves("pending-job0", 60.0, &["zone1-rack1"]),
            ),
            (
                "running-job-zone2-rack3",
                Moves("pending-job0", 60.0, &["zone1-rack1"]),
            ),
            ("pending-job0", Runs(90.0, &["zone2-rack2", "zone2-rack3"])),
        ],
    );
}

#[test]
fn consolidation_topology_consolidation_with_required_simple() {
    // integration_tests/consolidation/consolidation_test.go: "topology consolidation with required - simple".
    consolidate_for_a_zone(None);
}

#[test]
fn consolidation_required_topology_consolidation_with_non_feasible_nodes() {
    // integration_tests/consolidation/consolidation_test.go: "required topology consolidation with non-feasible nodes":
    // a node of no GPUs in zone2-rack3's rack comes first.
    consolidate_for_a_zone(Some(racked("sneaky-node", 0, "zone2", "rack3")));
}

#[test]
fn consolidation_fractional_consolidate_a_memory_job_for_a_memory_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "consolidate job that requested memory and insert another job that required memory".
    check(
        &[node("node0", 2)],
        &[queue("queue0", 1.0, 0.0)],
        &[
            share("running-job0", "queue0", "train", 0.0, "node0", "0").memory(20),
            share("running-job1", "queue0", "train", 0.0, "node0", "1").memory(20),
            pending("pending-job0", "queue0", "train", 0.0).memory(90),
        ],
        &[
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    );
}

#[test]
fn consolidation_fractional_consolidate_fractional_gpus_and_insert_a_fractional_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "consolidate fractional GPUs and insert a fractional train job".
    check(
        &[node("node0", 2)],
        &[queue("queue0", 1.0, 0.0)],
        &[
            share("running-job0", "queue0", "train", 0.5, "node0", "0"),
            share("running-job1", "queue0", "train", 0.5, "node0", "1"),
            pending("pending-job0", "queue0", "train", 0.7),
        ],
        &[
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    );
}

#[test]
fn consolidation_fractional_consolidate_fractional_gpus_and_insert_a_whole_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "consolidate fractional GPUs and insert a whole train job".
    check(
        &[node("node0", 2)],
        &[queue("queue0", 1.0, 0.0)],
        &[
            share("running-job0", "queue0", "train", 0.5, "node0", "0"),
            share("running-job1", "queue0", "train", 0.5, "node0", "1"),
            pending("pending-job0", "queue0", "train", 1.0),
        ],
        &[
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    );
}

#[test]
fn consolidation_fractional_can_t_consolidate_fractional_gpus_and_insert_a_whole_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "can't consolidate fractional GPUs and insert a whole train job".
    check(
        &[node("node0", 2)],
        &[queue("queue0", 1.0, 0.0)],
        &[
            share("running-job0", "queue0", "train", 0.5, "node0", "0"),
            share("running-job1", "queue0", "train", 0.6, "node0", "1"),
            pending("pending-job0", "queue0", "train", 1.0),
        ],
        &[],
    );
}

#[test]
fn consolidation_fractional_can_t_consolidate_fractional_gpus_and_insert_a_fractional_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "can't consolidate fractional GPUs and insert a fractional train job".
    check(
        &[node("node0", 2)],
        &[queue("queue0", 1.0, 0.0)],
        &[
            share("running-job0", "queue0", "train", 0.5, "node0", "0"),
            share("running-job1", "queue0", "train", 0.6, "node0", "1"),
            pending("pending-job0", "queue0", "train", 0.8),
        ],
        &[],
    );
}

#[test]
fn consolidation_gang_consolidate_gang_job_to_be_able_to_allocate_pending_job() {
    // integration_tests/consolidation/consolidationGang_test.go: "consolidate gang job to be able to allocate pending job".
    check(
        &[node("node0", 3), node("node1", 3)],
        &[queue("queue0", 1.0, 0.0)],
        &[
            job(
                "running-job0",
                "queue0",
                "train",
                1.0,
                &[On("node0"), On("node0"), On("node1")],
            ),
            pending("pending-job0", "queue0", "train", 3.0),
        ],
        &[
            (
                "running-job0",
                Moves("pending-job0", 60.0, &["node0", "node0", "node0"]),
            ),
            ("pending-job0", Runs(90.0, &["node1"])),
        ],
    );
}

#[test]
fn consolidation_and_reclaim_consolidate_then_reclaim() {
    // integration_tests/consolidation_and_reclaim/consolidation_and_reclaim_test.go: "4 jobs of queue0 - 3 running 1 pending will consolidate, 1 pending job from queue1 - reclaim".
    check(
        &[node("node0", 4), node("node1", 4)],
        &[queue("queue0", 4.0, 0.0), queue("queue1", 4.0, 0.0)],
        &[
            on("running-job0", "queue0", "train", 2.0, "node0"),
            on("running-job1", "queue0", "train", 2.0, "node1"),
            on("running-job2", "queue0", "train", 1.0, "node1"),
            pending("pending-job0", "queue0", "train", 3.0),
            pending("pending-job1", "queue1", "train", 4.0),
        ],
        &[
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("running-job2", Evicted("Reclaim", "pending-job1", 90.0)),
            ("pending-job0", Evicted("Reclaim", "pending-job1", 90.0)),
            ("pending-job1", Runs(120.0, &["node1"])),
        ],
    );
}
