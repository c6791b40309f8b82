//! `reclaim_test.go` cases checked on the solver alone, run over the whole cluster too.

use super::*;

// reclaim_test.go cases validation.md already names as checked on the solver alone, run here
// over the whole cluster too.

#[test]
fn reclaim_for_a_job_with_multiple_tasks_from_four_jobs() {
    // reclaim_test.go "queue0 is over fair share, queue1 is under fair share - reclaim for job
    // with multiple tasks": the four running jobs are all queue0's (upstream's "q1_job0" too),
    // which deserves nothing; q1-job1's four tasks take all four nodes.
    check(
        &[("node0", 1), ("node1", 1), ("node2", 1), ("node3", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 1.0)],
        &[
            run1("q0-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("q0-job1", "queue0", Pc::Train, 1.0, "node1"),
            run1("q0-job2", "queue0", Pc::Train, 1.0, "node2"),
            run1("q1-job0", "queue0", Pc::Train, 1.0, "node3"),
            job("q1-job1", "queue1", Pc::Train, 1.0, &[P, P, P, P]),
        ],
        &[
            ("q0-job0", reclaimed("q1-job1", 60.0, 1)),
            ("q0-job1", reclaimed("q1-job1", 60.0, 1)),
            ("q0-job2", reclaimed("q1-job1", 60.0, 1)),
            ("q1-job0", reclaimed("q1-job1", 60.0, 1)),
            (
                "q1-job1",
                binds(90.0, &["node0", "node1", "node2", "node3"]),
            ),
        ],
    );
}

#[test]
fn dont_reclaim_one_job_of_each_queue() {
    // reclaim_test.go "1 job from queue0 and 1 job from queue1 running on node0 - don't
    // reclaim" (the same table as "Don't reclaim when there's fairness between the queues").
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &two_fair_queues(),
        &[],
    );
}

#[test]
fn reclaim_the_train_job_not_the_build_job() {
    // reclaim_test.go "2 jobs from queue0 running on node0 (1 train, 1 build)- 2 pending jobs
    // from queue1 - reclaim train": the build job is not preemptible. pending-job1 waits
    // (queue1 at its fair share of 1).
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue0", Pc::Build, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
            pend1("pending-job1", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}
