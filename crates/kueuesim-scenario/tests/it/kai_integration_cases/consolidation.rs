//! The cases of upstream's `integration_tests/consolidation/` and `consolidation_and_reclaim/`.

use super::*;

#[test]
fn consolidation_1_train_job_of_1_gpu_running_on_node0_1_train_job_of_1_gpu_running_on() {
    // integration_tests/consolidation/consolidation_test.go: "1 train job of 1 GPU running on node0, 1 train job of 1 GPU running on node 0, 1 pending job of 2 GPUs - consolidate".
    check(&Case {
        nodes: &[node("node0", 2), node("node1", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 1.0, &[On("node1")]),
            job("pending-job0", "queue0", "train", 2.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node1"])),
        ],
    });
}

#[test]
fn consolidation_1_build_job_of_1_gpu_running_on_node0_1_build_job_of_1_gpu_running_on() {
    // integration_tests/consolidation/consolidation_test.go: "1 build job of 1 GPU running on node0, 1 build job of 1 GPU running on node 0, 1 pending job of 2 GPUs - don't consolidate".
    check(&Case {
        nodes: &[node("node0", 2), node("node1", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "build", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "build", 1.0, &[On("node1")]),
            job("pending-job0", "queue0", "train", 2.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn consolidation_topology_consolidation_with_required_simple() {
    // integration_tests/consolidation/consolidation_test.go: "topology consolidation with required - simple".
    check(&Case {
        nodes: &[
            Node {
                name: "zone1-rack1",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack1")],
            },
            Node {
                name: "zone1-rack2",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack2")],
            },
            Node {
                name: "zone1-rack3",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack3")],
            },
            Node {
                name: "zone2-rack1",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack1")],
            },
            Node {
                name: "zone2-rack2",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack2")],
            },
            Node {
                name: "zone2-rack3",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack3")],
            },
        ],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job-zone1-rack1",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack1")],
            ),
            job(
                "running-job-zone1-rack2",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack2")],
            ),
            job(
                "running-job-zone1-rack3",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack3")],
            ),
            job(
                "running-job-zone2-rack1",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack1")],
            ),
            job(
                "running-job-zone2-rack2",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack2")],
            ),
            job(
                "running-job-zone2-rack3",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack3")],
            ),
            Job {
                required_level: Some("zone"),
                ..job("pending-job0", "queue0", "train", 3.0, &[Pending, Pending])
            },
        ],
        topology: &["zone", "rack"],
        want: &[
            ("running-job-zone1-rack1", Stays),
            ("running-job-zone1-rack2", Stays),
            ("running-job-zone1-rack3", Stays),
            ("running-job-zone2-rack1", Stays),
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
    });
}

#[test]
fn consolidation_required_topology_consolidation_with_non_feasible_nodes() {
    // integration_tests/consolidation/consolidation_test.go: "required topology consolidation with non-feasible nodes".
    check(&Case {
        nodes: &[
            Node {
                name: "sneaky-node",
                gpus: 0,
                labels: &[("zone", "zone2"), ("rack", "rack3")],
            },
            Node {
                name: "zone1-rack1",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack1")],
            },
            Node {
                name: "zone1-rack2",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack2")],
            },
            Node {
                name: "zone1-rack3",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack3")],
            },
            Node {
                name: "zone2-rack1",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack1")],
            },
            Node {
                name: "zone2-rack2",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack2")],
            },
            Node {
                name: "zone2-rack3",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack3")],
            },
        ],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job-zone1-rack1",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack1")],
            ),
            job(
                "running-job-zone1-rack2",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack2")],
            ),
            job(
                "running-job-zone1-rack3",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack3")],
            ),
            job(
                "running-job-zone2-rack1",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack1")],
            ),
            job(
                "running-job-zone2-rack2",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack2")],
            ),
            job(
                "running-job-zone2-rack3",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack3")],
            ),
            Job {
                required_level: Some("zone"),
                ..job("pending-job0", "queue0", "train", 3.0, &[Pending, Pending])
            },
        ],
        topology: &["zone", "rack"],
        want: &[
            ("running-job-zone1-rack1", Stays),
            ("running-job-zone1-rack2", Stays),
            ("running-job-zone1-rack3", Stays),
            ("running-job-zone2-rack1", Stays),
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
    });
}

#[test]
fn consolidation_fractional_consolidate_a_memory_job_for_a_memory_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "consolidate job that requested memory and insert another job that required memory".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            memory_job(
                "running-job0",
                "queue0",
                "train",
                20,
                &[Share("node0", "0")],
            ),
            memory_job(
                "running-job1",
                "queue0",
                "train",
                20,
                &[Share("node0", "1")],
            ),
            memory_job("pending-job0", "queue0", "train", 90, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn consolidation_fractional_consolidate_fractional_gpus_and_insert_a_fractional_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "consolidate fractional GPUs and insert a fractional train job".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "0")],
            ),
            job(
                "running-job1",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "1")],
            ),
            job("pending-job0", "queue0", "train", 0.7, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn consolidation_fractional_consolidate_fractional_gpus_and_insert_a_whole_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "consolidate fractional GPUs and insert a whole train job".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "0")],
            ),
            job(
                "running-job1",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "1")],
            ),
            job("pending-job0", "queue0", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn consolidation_fractional_can_t_consolidate_fractional_gpus_and_insert_a_whole_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "can't consolidate fractional GPUs and insert a whole train job".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "0")],
            ),
            job(
                "running-job1",
                "queue0",
                "train",
                0.6,
                &[Share("node0", "1")],
            ),
            job("pending-job0", "queue0", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn consolidation_fractional_can_t_consolidate_fractional_gpus_and_insert_a_fractional_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "can't consolidate fractional GPUs and insert a fractional train job".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "0")],
            ),
            job(
                "running-job1",
                "queue0",
                "train",
                0.6,
                &[Share("node0", "1")],
            ),
            job("pending-job0", "queue0", "train", 0.8, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn consolidation_gang_consolidate_gang_job_to_be_able_to_allocate_pending_job() {
    // integration_tests/consolidation/consolidationGang_test.go: "consolidate gang job to be able to allocate pending job".
    check(&Case {
        nodes: &[node("node0", 3), node("node1", 3)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                1.0,
                &[On("node0"), On("node0"), On("node1")],
            ),
            job("pending-job0", "queue0", "train", 3.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            (
                "running-job0",
                Moves("pending-job0", 60.0, &["node0", "node0", "node0"]),
            ),
            ("pending-job0", Runs(90.0, &["node1"])),
        ],
    });
}

#[test]
fn consolidation_and_reclaim_consolidate_then_reclaim() {
    // integration_tests/consolidation_and_reclaim/consolidation_and_reclaim_test.go: "4 jobs of queue0 - 3 running 1 pending will consolidate, 1 pending job from queue1 - reclaim".
    check(&Case {
        nodes: &[node("node0", 4), node("node1", 4)],
        queues: &[queue("queue0", 4.0, 0.0), queue("queue1", 4.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 2.0, &[On("node1")]),
            job("running-job2", "queue0", "train", 1.0, &[On("node1")]),
            job("pending-job0", "queue0", "train", 3.0, &[Pending]),
            job("pending-job1", "queue1", "train", 4.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("running-job2", Evicted("Reclaim", "pending-job1", 90.0)),
            ("pending-job0", Evicted("Reclaim", "pending-job1", 90.0)),
            ("pending-job1", Runs(120.0, &["node1"])),
        ],
    });
}
