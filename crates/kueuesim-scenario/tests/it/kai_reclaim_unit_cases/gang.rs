//! The cases of upstream's `reclaimGang_test.go` (TestHandleGangReclaim).

use super::*;

// reclaimGang_test.go (TestHandleGangReclaim).

#[test]
fn gang_reclaim_other_job_and_pipeline_all_tasks_of_job() {
    // reclaimGang_test.go "Reclaim other job and pipeline all tasks of job".
    check(
        &[("node0", 2)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 2.0)],
        &[
            job("running-job0", "queue0", Pc::Train, 1.0, &[on("node0")]),
            job("pending-job0", "queue1", Pc::Build, 1.0, &[P, P]),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0", "node0"])),
        ],
    );
}

#[test]
fn gang_if_cant_allocate_all_tasks_dont_reclaim() {
    // reclaimGang_test.go "If can't allocate all tasks, dont' reclaim": the gang of two
    // 1-GPU tasks does not fit node0's one GPU even with running-job0 gone.
    check(
        &[("node0", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 2.0)],
        &[
            job("running-job0", "queue0", Pc::Train, 1.0, &[on("node0")]),
            job("pending-job0", "queue1", Pc::Build, 1.0, &[P, P]),
        ],
        &[],
    );
}

#[test]
fn gang_dont_reclaim_if_will_go_over_quota() {
    // reclaimGang_test.go "dont reclaim if will go over quota": the build job's 4 GPUs take
    // queue1 over its deserved 2 (a non-preemptible job stays within it).
    check(
        &[("node0", 10)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 2.0)],
        &[
            job("running-job0", "queue0", Pc::Train, 10.0, &[on("node0")]),
            job("pending-job0", "queue1", Pc::Build, 2.0, &[P, P]),
        ],
        &[],
    );
}

#[test]
fn gang_reclaim_mpi_job() {
    // reclaimGang_test.go "reclaim mpi job": both tasks of the running gang go.
    check(
        &[("node0", 2)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 2.0)],
        &[
            job(
                "running-job0",
                "queue0",
                Pc::Train,
                1.0,
                &[on("node0"), on("node0")],
            ),
            job("pending-job0", "queue1", Pc::Build, 2.0, &[P]),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 2)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn gang_job_reclaims_from_job_on_two_nodes() {
    // reclaimGang_test.go "job reclaims from job on two nodes": queue0's gang of two tasks
    // (node0, node1) is above its deserved 1; both tasks go (the gang keeps none), and the
    // pending task takes one of the nodes (upstream does not say which).
    check(
        &[("node0", 1), ("node1", 1)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            job(
                "running-job0",
                "queue0",
                Pc::Train,
                1.0,
                &[on("node0"), on("node1")],
            ),
            job("pending-job", "queue1", Pc::Train, 1.0, &[P]),
        ],
        &[
            ("running-job0", reclaimed("pending-job", 60.0, 2)),
            ("pending-job", binds(90.0, &["node0"])),
        ],
    );
}
