//! The cases of upstream's `reclaim_test.go` (TestHandleReclaim).

use super::*;

// reclaim_test.go (TestHandleReclaim).

#[test]
fn reclaim_jobs_according_to_queue_fair_share() {
    // reclaim_test.go "Reclaim jobs according to queue fair share": three queues of
    // department d1; the reclaimer's two tasks take the lowest-priority job of each of the
    // other queues.
    check(
        &[("node0", 6)],
        &[
            dept("d1", 1.0),
            qd("queue0", 1.0, 1.0, "d1"),
            qd("queue1", 1.0, 1.0, "d1"),
            qd("reclaimer-queue", 2.0, 0.0, "d1"),
        ],
        &[
            run1("q0-running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("q0-running-job1", "queue0", Pc::Train, 1.0, "node0"),
            run1("q0-running-job2", "queue0", Pc::TrainMinusOne, 1.0, "node0"),
            run1("q1-running-job0", "queue1", Pc::Train, 1.0, "node0"),
            run1("q1-running-job1", "queue1", Pc::Train, 1.0, "node0"),
            run1("q1-running-job2", "queue1", Pc::TrainMinusOne, 1.0, "node0"),
            job("reclaimer", "reclaimer-queue", Pc::Train, 1.0, &[P, P]),
        ],
        &[
            ("q0-running-job2", reclaimed("reclaimer", 60.0, 1)),
            ("q1-running-job2", reclaimed("reclaimer", 60.0, 1)),
            ("reclaimer", binds(90.0, &["node0", "node0"])),
        ],
    );
}

#[test]
fn reclaim_queue0_over_deserved_quota_will_go_below_quota() {
    // reclaim_test.go "queue1 is under deserved quota, queue0 is over deserved quota and will
    // go below quota - reclaim": queue0's gang of two 10-GPU tasks goes whole.
    check(
        &[("node0", 16), ("node1", 16)],
        &[q("queue0", 10.0, 1.0), q("queue1", 10.0, 1.0)],
        &[
            job(
                "q0-running-job",
                "queue0",
                Pc::Train,
                10.0,
                &[on("node0"), on("node1")],
            ),
            pend1("q1-pending-job", "queue1", Pc::Train, 10.0),
        ],
        &[
            ("q0-running-job", reclaimed("q1-pending-job", 60.0, 2)),
            ("q1-pending-job", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn reclaim_queue0_over_deserved_quota_but_under_fair_share() {
    // reclaim_test.go "queue1 is under deserved quota, queue0 is over deserved quota but
    // under fair share - reclaim": the youngest of queue0's jobs goes; its pending jobs wait.
    check(
        &[
            ("node0", 3),
            ("node1", 3),
            ("node2", 3),
            ("node3", 3),
            ("node4", 3),
            ("node5", 3),
        ],
        &[q("queue0", 2.0, 1.0), q("queue1", 2.0, 1.0)],
        &[
            run1("q0-running-job0", "queue0", Pc::Train, 2.0, "node0"),
            run1("q0-running-job1", "queue0", Pc::Train, 2.0, "node1"),
            run1("q0-running-job2", "queue0", Pc::Train, 2.0, "node2"),
            run1("q0-running-job3", "queue0", Pc::Train, 2.0, "node3"),
            run1("q0-running-job4", "queue0", Pc::Train, 2.0, "node4"),
            run1("q0-running-job5", "queue0", Pc::Train, 2.0, "node5"),
            pend1("q0-pending-job6", "queue0", Pc::Train, 2.0),
            pend1("q0-pending-job7", "queue0", Pc::Train, 2.0),
            pend1("q0-pending-job8", "queue0", Pc::Train, 2.0),
            pend1("q1-pending-job0", "queue1", Pc::Train, 2.0),
        ],
        &[
            ("q0-running-job5", reclaimed("q1-pending-job0", 60.0, 1)),
            ("q1-pending-job0", binds(90.0, &["node5"])),
        ],
    );
}

#[test]
fn reclaim_from_multiple_queues_on_multiple_nodes_for_a_job_with_multiple_tasks() {
    // reclaim_test.go "reclaim from multiple queues running on multiple nodes for a job with
    // multiple tasks": job0, job2 (queue0, deserving nothing) and job3 (queue1, above its 1)
    // go; job1 keeps queue1's deserved GPU.
    check(
        &[("node0", 2), ("node1", 2)],
        &[
            q("queue0", 0.0, 0.0),
            q("queue1", 1.0, 0.0),
            q("queue2", 3.0, 0.0),
        ],
        &[
            run1("job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("job1", "queue1", Pc::Train, 1.0, "node0"),
            run1("job2", "queue0", Pc::Train, 1.0, "node1"),
            run1("job3", "queue1", Pc::Train, 1.0, "node1"),
            job("pending-job", "queue2", Pc::Train, 1.0, &[P, P, P]),
        ],
        &[
            ("job0", reclaimed("pending-job", 60.0, 1)),
            ("job2", reclaimed("pending-job", 60.0, 1)),
            ("job3", reclaimed("pending-job", 60.0, 1)),
            ("pending-job", binds(90.0, &["node0", "node1", "node1"])),
        ],
    );
}

#[test]
fn dont_reclaim_when_theres_fairness_between_the_queues() {
    // reclaim_test.go "Don't reclaim when there's fairness between the queues".
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &two_fair_queues(),
        &[],
    );
}

#[test]
fn dont_reclaim_when_used_gpus_equal_the_deserved_gpus() {
    // reclaim_test.go "Queues are over provisioned, ratio between queues are equal, yet don't
    // reclaim since number of used GPUs is equal to the deserved GPUs": queue0 deserves 2 and
    // holds 2.
    check(
        &[("node0", 2)],
        &[q("queue0", 2.0, 2.0), q("queue1", 2.0, 2.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue0", Pc::Train, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
            pend1("pending-job1", "queue1", Pc::Train, 1.0),
        ],
        &[],
    );
}

#[test]
fn reclaim_a_2_gpu_train_job_for_the_first_of_two_pending_jobs() {
    // reclaim_test.go "1 train job of 2 GPUs from queue0 running on node0 with deserved of 1,
    // 2 pending jobs from queue1 - reclaim": pending-job0 reclaims running-job0 and is
    // pipelined; upstream's one session leaves pending-job1 pending, and here, the run going
    // on, it takes the GPU running-job0 left at 1m30s (upstream's next session would too:
    // running-job0's new pod asks 2 GPUs, one is free).
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 2.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
            pend1("pending-job1", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
            ("pending-job1", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn reclaim_a_2_gpu_train_job_for_the_build_job_first() {
    // reclaim_test.go "1 train job of 2 GPUs from queue0 running on node0 with deserved of 1,
    // 2 pending jobs (1 build) from queue1 - reclaim": the build job comes first in queue1's
    // job order and is the reclaimer; pending-job0 then takes the GPU left (as above).
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 2.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
            pend1("pending-job1", "queue1", Pc::Build, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job1", 60.0, 1)),
            ("pending-job1", binds(90.0, &["node0"])),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn dont_reclaim_for_a_build_job_above_its_deserved_quota() {
    // reclaim_test.go "2 train job of 1 GPUs from queue0 running on node0 with deserved of 1,
    // 1 pending build job of 2 GPUs from queue1 with deserved of 1 - don't reclaim" (the
    // running job is one of 2 GPUs, as upstream's table gives it).
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 2.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Build, 2.0),
        ],
        &[],
    );
}

#[test]
fn reclaim_the_train_job_before_the_preemptible_interactive_one() {
    // reclaim_test.go "1 train and 1 preemptible interactive are over quota - reclaim train".
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1(
                "running-job1",
                "queue0",
                Pc::InteractivePreemptible,
                1.0,
                "node0",
            ),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn reclaim_the_younger_of_two_preemptible_interactive_jobs() {
    // reclaim_test.go "2 preemptible interactive are over quota - reclaim".
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1(
                "running-job0",
                "queue0",
                Pc::InteractivePreemptible,
                1.0,
                "node0",
            ),
            run1(
                "running-job1",
                "queue0",
                Pc::InteractivePreemptible,
                1.0,
                "node0",
            ),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job1", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn never_reclaim_an_interactive_job() {
    // reclaim_test.go "1 interactive job is running with more GPUs than the quota, 1
    // interactive job form different project is pending - don't reclaim (never kill
    // interactive jobs)": upstream's interactive job is a build job (priority 100, not
    // preemptible).
    check(
        &[("node0", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Build, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Build, 1.0),
        ],
        &[],
    );
}

#[test]
fn interactive_jobs_use_the_deserved_gpus_not_the_reclaimable_share() {
    // reclaim_test.go "Interactive jobs should use the number of deserved GPUs, and not the
    // reclaimable deserved GPUs": queue0's build job holds its deserved GPU, so a second
    // build job of queue0 neither binds nor reclaims.
    check(
        &[("node0", 4)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Build, 1.0, "node0"),
            run1("running-job1", "queue1", Pc::Train, 3.0, "node0"),
            pend1("pending-job0", "queue0", Pc::Build, 1.0),
        ],
        &[],
    );
}

#[test]
fn inactive_queues_dont_affect_the_reclaimable_share() {
    // reclaim_test.go "Verify inactive queues don't affect the reclaimable deserved
    // calculation": queue2 has no job; queue0's youngest job goes.
    check(
        &[("node0", 4)],
        &[
            q("queue0", 1.0, 1.0),
            q("queue1", 1.0, 1.0),
            q("queue2", 1.0, 1.0),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job2", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job3", "queue1", Pc::Train, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job2", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn reclaim_from_a_job_above_its_queues_fair_share_no_remaining() {
    // reclaim_test.go "reclaim from job that allocated more resources than its' fairShare (no
    // remaining)" (the table has this case twice, identical): of node0's 10 GPUs queue0's
    // share is 4 and queue1's 6, so queue1's 6-GPU job reclaims queue0's 8.
    check(
        &[("node0", 10)],
        &[q("queue0", 2.0, 1.0), q("queue1", 2.0, 2.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 8.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 6.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn dont_reclaim_from_a_job_within_its_queues_fair_share() {
    // reclaim_test.go "don't reclaim from job that allocated resources within its' fairShare":
    // queue1's share is 6, its job asks 7.
    check(
        &[("node0", 10)],
        &[q("queue0", 2.0, 1.0), q("queue1", 2.0, 2.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 4.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 7.0),
        ],
        &[],
    );
}

#[test]
fn reclaim_when_the_remaining_gpu_went_to_the_lower_weight_queue() {
    // reclaim_test.go "reclaim from job that allocated more resources than its' fairShare
    // (remaining was given to queue with lower over quota weight)": node0 has 12 GPUs.
    check(
        &[("node0", 12)],
        &[q("queue0", 2.0, 1.0), q("queue1", 2.0, 2.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 10.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 7.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

/// Upstream's cases where queue0's 1-GPU job moves from node1 to node0 so that queue1's
/// 2-GPU job fits node1: node0 has 3 GPUs and runs queue0's 2-GPU q0-job0, node1 2 GPUs and
/// runs q0-job1; queue1's q1-job0 of 2 GPUs is pending (and `also_pending`, alike). q0-job1
/// is moved to node0 for q1-job0 and bound again at 1m30s, when q1-job0 binds on node1:
/// upstream's reclaim pipelines it there (its solver places a victim again where it fits),
/// and here the consolidation action, which the session runs before reclaim, moves it.
fn q0_job1_moves_for_q1_job0(queues: &[Queue], also_pending: &[&'static str]) {
    let mut jobs = vec![
        run1("q0-job0", "queue0", Pc::Train, 2.0, "node0"),
        run1("q0-job1", "queue0", Pc::Train, 1.0, "node1"),
        pend1("q1-job0", "queue1", Pc::Train, 2.0),
    ];
    for &name in also_pending {
        jobs.push(pend1(name, "queue1", Pc::Train, 2.0));
    }
    let moved = Expect {
        evictions: vec![(60.0, "Consolidation", "q1-job0")],
        pods: vec![Some(("node0", 90.0))],
    };
    check(
        &[("node0", 3), ("node1", 2)],
        queues,
        &jobs,
        &[("q0-job1", moved), ("q1-job0", binds(90.0, &["node1"]))],
    );
}

#[test]
fn reclaim_for_a_queue_under_deserved_quota_moves_a_job() {
    // reclaim_test.go "queue0 is under deserved quota, queue1 is over deserved quota but not
    // over fair share - reclaim": q0-job1 is pipelined to node0, q1-job0 to node1.
    q0_job1_moves_for_q1_job0(&[q("queue0", 2.0, 1.0), q("queue1", 2.0, 0.0)], &[]);
}

#[test]
fn reclaim_a_single_job_for_a_queue_under_deserved_quota() {
    // reclaim_test.go "queue0 is under deserved quota and submitted multiple jobs, queue1 is
    // over deserved quota but not over fair share - reclaim single job": as above; q1-job1
    // waits.
    q0_job1_moves_for_q1_job0(
        &[q("queue0", 2.0, 3.0), q("queue1", 2.0, 0.0)],
        &["q1-job1"],
    );
}

#[test]
fn a_queue_at_its_deserved_quota_is_consolidated_not_reclaimed() {
    // reclaim_test.go "queue1 is under deserved quota, queue0 has exactly deserved quota -
    // should consolidate q0 to node0 and pipeline q1 to node1".
    q0_job1_moves_for_q1_job0(&[q("queue0", 3.0, 0.0), q("queue1", 2.0, 0.0)], &[]);
}

#[test]
fn an_inference_job_is_not_reclaimed() {
    // reclaim_test.go "Attempt to reclaim from an inference workload": inference (priority
    // 125) is not preemptible.
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 0.0), q("queue1", 1.0, 0.0)],
        &[
            run1("q0-job0", "queue0", Pc::Inference, 1.0, "node0"),
            run1("q0-job1", "queue0", Pc::Inference, 1.0, "node0"),
            pend1("q1-job0", "queue1", Pc::Inference, 1.0),
        ],
        &[],
    );
}

#[test]
fn unlimited_gpu_quota_should_not_reclaim() {
    // reclaim_test.go "unlimited GPU quota, should not reclaim": queue0 deserves unlimited
    // GPUs (so it is never above its share), queue1 2.
    check(
        &[("node0", 4)],
        &[q("queue0", -1.0, 0.0), q("queue1", 2.0, 0.0)],
        &[
            run1("running-job0", "queue0", Pc::Inference, 4.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 2.0),
        ],
        &[],
    );
}

#[test]
fn unlimited_gpu_quota_first_one_already_running_should_not_reclaim() {
    // reclaim_test.go "unlimited GPU quota, first one is already running, should not
    // reclaim": both queues deserve unlimited GPUs; the running job is inference.
    check(
        &[("node0", 4)],
        &[q("queue0", -1.0, 0.0), q("queue1", -1.0, 0.0)],
        &[
            run1("running-job0", "queue0", Pc::Inference, 4.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 2.0),
        ],
        &[],
    );
}

#[test]
fn unlimited_gpu_quota_using_department_should_not_reclaim() {
    // reclaim_test.go "unlimited GPU quota using department, should not reclaim":
    // department0 deserves unlimited GPUs (upstream's builder gives it an over-quota weight
    // of its deserved -1; here 0).
    check(
        &[("node0", 4)],
        &[
            q("department0", -1.0, 0.0),
            dept("department1", 2.0),
            qd("queue0", -1.0, 0.0, "department0"),
            qd("queue1", 2.0, 0.0, "department1"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Inference, 4.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 2.0),
        ],
        &[],
    );
}

#[test]
fn reclaim_based_on_releasing_resources_with_consolidation() {
    // reclaim_test.go "Reclaim based on releasing resources with consolidation": two shares
    // of 0.5 on node0 and node1; running-job1's moves beside running-job0's, and pending-job
    // takes node1's whole GPU.
    check(
        &[("node0", 1), ("node1", 1)],
        &[
            q("queue0", 0.0, 0.0),
            q("queue1", 0.0, 0.0),
            q("queue2", 2.0, 0.0),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 0.5, "node0"),
            run1("running-job1", "queue1", Pc::Train, 0.5, "node1"),
            pend1("pending-job", "queue2", Pc::Train, 1.0),
        ],
        &[
            (
                "running-job1",
                Expect {
                    evictions: vec![(60.0, "Consolidation", "pending-job")],
                    pods: vec![Some(("node0", 90.0))],
                },
            ),
            ("pending-job", binds(90.0, &["node1"])),
        ],
    );
}

#[test]
fn reclaim_based_on_releasing_resources_without_consolidation() {
    // reclaim_test.go "Reclaim based on releasing resources without consolidation": shares of
    // 0.7 cannot share a GPU; queue1's (the newer queue) is reclaimed.
    check(
        &[("node0", 1), ("node1", 1)],
        &[
            q("queue0", 0.0, 0.0),
            q("queue1", 0.0, 0.0),
            q("queue2", 2.0, 0.0),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 0.7, "node0"),
            run1("running-job1", "queue1", Pc::Train, 0.7, "node1"),
            pend1("pending-job", "queue2", Pc::Train, 1.0),
        ],
        &[
            ("running-job1", reclaimed("pending-job", 60.0, 1)),
            ("pending-job", binds(90.0, &["node1"])),
        ],
    );
}

#[test]
fn reclaim_based_on_releasing_and_idle_resources() {
    // reclaim_test.go "Reclaim based on releasing and idle resources": one task of pending-job
    // takes idle node1, the other node0's GPU running-job's share releases; both bind once
    // the share is gone. Upstream pipelines the first task to node1 and the second to node0;
    // here the first pod binds to node0 and the second to node1 (the job's pods are alike).
    check(
        &[("node0", 1), ("node1", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 0.0)],
        &[
            run1("running-job", "queue0", Pc::Train, 0.7, "node0"),
            job("pending-job", "queue1", Pc::Train, 1.0, &[P, P]),
        ],
        &[
            ("running-job", reclaimed("pending-job", 60.0, 1)),
            ("pending-job", binds(90.0, &["node0", "node1"])),
        ],
    );
}

#[test]
fn reclaim_based_on_releasing_and_idle_resources_with_fractions() {
    // reclaim_test.go "Reclaim based on releasing and idle resources with fractions": the
    // pending job's two 0.7 shares go to node1 (beside running-job1's 0.3) and to node0,
    // whose 0.7 share running-job0 releases.
    check(
        &[("node0", 1), ("node1", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 0.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 0.7, "node0"),
            run1("running-job1", "queue1", Pc::Train, 0.3, "node1"),
            job("pending-job", "queue1", Pc::Train, 0.7, &[P, P]),
        ],
        &[
            ("running-job0", reclaimed("pending-job", 60.0, 1)),
            ("pending-job", binds(90.0, &["node1", "node0"])),
        ],
    );
}

#[test]
fn gang_job_fails_to_allocate_enough_pods() {
    // reclaim_test.go "gang job fails to allocate enough pods": q1-job0 needs 4 of its 5
    // tasks, and two of them ask a node label no node has.
    let unplaceable = Task {
        unplaceable: true,
        ..P
    };
    let mut gang = job(
        "q1-job0",
        "queue1",
        Pc::Train,
        1.0,
        &[P, P, P, unplaceable, unplaceable],
    );
    gang.min = Some(4);
    check(
        &[("node0", 1), ("node1", 1), ("node2", 1), ("node3", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 1.0)],
        &[
            run1("q0-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("q0-job1", "queue0", Pc::Train, 1.0, "node1"),
            run1("q0-job2", "queue0", Pc::Train, 1.0, "node2"),
            run1("q0-job3", "queue0", Pc::Train, 1.0, "node3"),
            gang,
        ],
        &[],
    );
}

#[test]
fn queue_in_deserved_share_is_not_reclaimed_for_multiple_tasks() {
    // reclaim_test.go "queue0 is in deserved share, queue1 is under fair share - do not
    // reclaim - multiple tasks": queue0 holds 16 GPUs where it deserves 12; queue1's gang of 5
    // would leave it 11, below its deserved quota.
    let mut jobs = Vec::new();
    const NAMES: [[&str; 4]; 4] = [
        ["q0-n0-job0", "q0-n0-job1", "q0-n0-job2", "q0-n0-job3"],
        ["q0-n1-job0", "q0-n1-job1", "q0-n1-job2", "q0-n1-job3"],
        ["q0-n2-job0", "q0-n2-job1", "q0-n2-job2", "q0-n2-job3"],
        ["q0-n3-job0", "q0-n3-job1", "q0-n3-job2", "q0-n3-job3"],
    ];
    const NODES: [&str; 4] = ["node0", "node1", "node2", "node3"];
    for (node, names) in NODES.iter().zip(NAMES) {
        for name in names {
            jobs.push(run1(name, "queue0", Pc::Train, 1.0, node));
        }
    }
    jobs.push(job("q1-job1", "queue1", Pc::Train, 1.0, &[P; 5]));
    check(
        &[("node0", 4), ("node1", 4), ("node2", 4), ("node3", 4)],
        &[q("queue0", 12.0, 0.0), q("queue1", 5.0, 1.0)],
        &jobs,
        &[],
    );
}
