//! The cases of upstream's `integration_tests/preempt/` (`preempt_test.go`, `preemptGang_test.go`).

use super::*;

#[test]
fn preempt_3_train_job_running_1_build_job_pending_no_need_to_preempt_two_jobs() {
    // integration_tests/preempt/preempt_test.go: "3 train job running, 1 build job pending - no need to preempt two jobs".
    check(
        &[node("node0", 2)],
        &[queue("queue0", 2.0, 0.0)],
        &[
            share("running-job0", "queue0", "train", 0.5, "node0", "0"),
            on("running-job1", "queue0", "train", 1.0, "node0"),
            share("running-job2", "queue0", "train", 0.5, "node0", "0"),
            pending("pending-job0", "queue0", "build", 1.0),
        ],
        &[
            ("running-job1", preempted("pending-job0")),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    );
}

#[test]
fn preempt_1_train_job_running_1_build_job_pending_preempt() {
    // integration_tests/preempt/preempt_test.go: "1 train job running, 1 build job pending - preempt".
    check(
        &[node("node0", 2)],
        &[queue("queue0", 1.0, 0.0)],
        &[
            on("running-job0", "queue0", "train", 2.0, "node0"),
            pending("pending-job0", "queue0", "build", 1.0),
        ],
        &[
            ("running-job0", preempted("pending-job0")),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    );
}

#[test]
fn preempt_3_jobs_running_for_queue0_on_4_gpus_1_pending_build_job_for_queue0_des() {
    // integration_tests/preempt/preempt_test.go: "3 jobs running for queue0 on 4 GPUs, 1 pending build job for queue0, deserved of queue1 is 4 - preempt".
    check(
        &[node("node0", 4)],
        &[queue("queue0", 4.0, 0.0)],
        &[
            on("running-job0", "queue0", "train", 1.0, "node0"),
            on("running-job1", "queue0", "train", 2.0, "node0"),
            on("running-job2", "queue0", "train", 1.0, "node0"),
            pending("pending-job0", "queue0", "build", 4.0),
        ],
        &[
            ("running-job0", preempted("pending-job0")),
            ("running-job1", preempted("pending-job0")),
            ("running-job2", preempted("pending-job0")),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    );
}

#[test]
fn preempt_3_jobs_running_for_queue0_on_4_gpus_1_pending_build_job_for_queue0_no() {
    // integration_tests/preempt/preempt_test.go: "3 jobs running for queue0 on 4 GPUs, 1 pending build job for queue0, no node can contain build job - don't preempt".
    check(
        &[node("node0", 2), node("node1", 2)],
        &[queue("queue0", 4.0, 0.0)],
        &[
            on("running-job0", "queue0", "train", 1.0, "node0"),
            on("running-job1", "queue0", "train", 2.0, "node1"),
            on("running-job2", "queue0", "train", 1.0, "node0"),
            pending("pending-job0", "queue0", "build", 4.0),
        ],
        &[],
    );
}

#[test]
fn preempt_3_jobs_running_for_queue0_on_4_gpus_1_pending_build_job_for_queue0_des_2() {
    // integration_tests/preempt/preempt_test.go: "3 jobs running for queue0 on 4 GPUs, 1 pending build job for queue0, deserved of queue1 is 3 - don't preempt".
    check(
        &[node("node0", 4)],
        &[queue("queue0", 3.0, 0.0)],
        &[
            on("running-job0", "queue0", "train", 1.0, "node0"),
            on("running-job1", "queue0", "train", 2.0, "node0"),
            on("running-job2", "queue0", "train", 1.0, "node0"),
            pending("pending-job0", "queue0", "build", 4.0),
        ],
        &[],
    );
}

#[test]
fn preempt_no_jobs_pending_don_t_preempt() {
    // integration_tests/preempt/preempt_test.go: "No jobs pending - don't preempt".
    check(
        &[node("node0", 4)],
        &[queue("queue0", 3.0, 0.0)],
        &[
            on("running-job0", "queue0", "train", 1.0, "node0"),
            on("running-job1", "queue0", "build", 2.0, "node0"),
            on("running-job2", "queue0", "train", 1.0, "node0"),
        ],
        &[],
    );
}

#[test]
fn preempt_gang_classic_gang_preempt() {
    // integration_tests/preempt/preemptGang_test.go: "Classic gang preempt".
    check(
        &[node("node0", 2)],
        &[queue("queue0", 2.0, 0.0)],
        &[
            on("running-job0", "queue0", "train", 2.0, "node0"),
            job("pending-job0", "queue0", "build", 1.0, &[Pending, Pending]),
        ],
        &[
            ("running-job0", preempted("pending-job0")),
            ("pending-job0", Runs(90.0, &["node0", "node0"])),
        ],
    );
}

#[test]
fn preempt_gang_some_of_the_pods_are_running_and_some_are_pending_preempt_those_who_ar() {
    // integration_tests/preempt/preemptGang_test.go: "Some of the pods are running and some are pending- preempt those who are needed in order to allocate all the pods of gang job".
    check(
        &[node("node0", 3)],
        &[queue("queue0", 2.0, 0.0)],
        &[
            on("running-job0", "queue0", "train", 1.0, "node0"),
            on("running-job1", "queue0", "train", 1.0, "node0"),
            job(
                "pending-job0",
                "queue0",
                "build",
                1.0,
                &[On("node0"), Pending],
            ),
        ],
        &[
            ("running-job1", Evicted("Preempt", "pending-job0", 2.0)),
            ("pending-job0", Runs(32.0, &["node0", "node0"])),
        ],
    );
}

#[test]
fn preempt_gang_preempt_gang_job() {
    // integration_tests/preempt/preemptGang_test.go: "preempt gang job".
    check(
        &[node("node0", 2)],
        &[queue("queue0", 1.0, 0.0)],
        &[
            job(
                "running-gang-job0",
                "queue0",
                "train",
                1.0,
                &[On("node0"), On("node0")],
            ),
            pending("pending-job0", "queue0", "build", 1.0),
        ],
        &[
            ("running-gang-job0", preempted("pending-job0")),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    );
}
