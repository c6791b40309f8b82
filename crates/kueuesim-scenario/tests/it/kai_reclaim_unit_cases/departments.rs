//! The cases of upstream's `reclaimDepartments_test.go` (TestHandleDepartmentsReclaim).

use super::*;

// reclaimDepartments_test.go (TestHandleDepartmentsReclaim). Upstream's queues there leave
// `GPUOverQuotaWeight` out (0) where the table does not give it.

#[test]
fn departments_classic_reclaim_for_train_jobs() {
    // reclaimDepartments_test.go "Classic reclaim for train jobs between departments".
    check(
        &[("node0", 2)],
        &[
            dept("d1", 1.0),
            dept("d2", 1.0),
            qd("queue0", 1.0, 0.0, "d1"),
            qd("queue1", 1.0, 0.0, "d2"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue0", Pc::Build, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn departments_classic_interactive_job_reclaims_a_train_job() {
    // reclaimDepartments_test.go "Classic interactive job reclaim train job from different
    // department": the reclaimer is a build job.
    check(
        &[("node0", 2)],
        &[
            dept("d1", 1.0),
            dept("d2", 1.0),
            qd("queue0", 1.0, 1.0, "d1"),
            qd("queue1", 1.0, 1.0, "d2"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue0", Pc::Build, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Build, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn departments_dont_reclaim_if_the_department_will_be_over_quota() {
    // reclaimDepartments_test.go "Don't reclaim if department will be overquota": d2 holds 1
    // of its 2 and the job asks 2 more.
    check(
        &[("node0", 4)],
        &[
            dept("d1", 2.0),
            dept("d2", 2.0),
            qd("queue0", 1.0, 1.0, "d1"),
            qd("queue1", 1.0, 1.0, "d2"),
            qd("queue2", 1.0, 1.0, "d2"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 3.0, "node0"),
            run1("running-job1", "queue1", Pc::Build, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 2.0),
        ],
        &[],
    );
}

#[test]
fn departments_reclaim_trains_according_to_deserved_quota() {
    // reclaimDepartments_test.go "Reclaim trains according to deserved quota": the 1-GPU job
    // is enough with node0's 3 free GPUs.
    check(
        &[("node0", 8)],
        &[
            dept("d1", 1.0),
            dept("d2", 1.0),
            qd("queue0", 1.0, 1.0, "d1"),
            qd("queue1", 1.0, 1.0, "d2"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 4.0, "node0"),
            run1("running-job1", "queue0", Pc::Train, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 4.0),
        ],
        &[
            ("running-job1", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn departments_reclaim_from_a_different_and_the_same_department() {
    // reclaimDepartments_test.go "Reclaim from different department and same department".
    check(
        &[("node0", 4)],
        &[
            dept("d1", 0.0),
            dept("d2", 4.0),
            qd("queue0", 1.0, 1.0, "d1"),
            qd("queue1", 0.0, 0.0, "d2"),
            qd("queue2", 4.0, 4.0, "d2"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 2.0, "node0"),
            run1("running-job1", "queue1", Pc::Train, 2.0, "node0"),
            pend1("pending-job0", "queue2", Pc::Train, 4.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("running-job1", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn departments_no_reclaim_between_departments_by_fairness() {
    // reclaimDepartments_test.go "Verify reclaim doesn't happen between department by
    // fairness": each department holds its fair share of node0.
    check(
        &[("node0", 4)],
        &[
            dept("d0", 1.0),
            dept("d1", 1.0),
            qd("queue0", 3.0, 3.0, "d0"),
            qd("queue1", 1.0, 1.0, "d1"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 2.0, "node0"),
            run1("running-job1", "queue1", Pc::Train, 2.0, "node0"),
            pend1("pending-job0", "queue0", Pc::Train, 1.0),
        ],
        &[],
    );
}

#[test]
fn departments_interactive_job_stays_within_the_department_quota() {
    // reclaimDepartments_test.go "Verify department interactive will not go over quota even if
    // department has enough reclaimable deserved": d0 deserves 1 and its build job holds it.
    check(
        &[("node0", 4)],
        &[
            dept("d0", 1.0),
            dept("d1", 1.0),
            qd("queue0", 3.0, 3.0, "d0"),
            qd("queue1", 3.0, 3.0, "d1"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Build, 1.0, "node0"),
            run1("running-job1", "queue1", Pc::Train, 3.0, "node0"),
            pend1("pending-job0", "queue0", Pc::Build, 1.0),
        ],
        &[],
    );
}

#[test]
fn departments_train_job_reclaims_within_the_department_fair_share() {
    // reclaimDepartments_test.go "Verify department train will not go over quota even if
    // department has enough reclaimable deserved": d1 holds 3 of node0's 4 GPUs where its
    // fair share is 2, so d0's train job reclaims running-job1.
    check(
        &[("node0", 4)],
        &[
            dept("d0", 1.0),
            dept("d1", 1.0),
            qd("queue0", 1.0, 1.0, "d0"),
            qd("queue1", 1.0, 1.0, "d1"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue1", Pc::Train, 3.0, "node0"),
            pend1("pending-job0", "queue0", Pc::Train, 1.0),
        ],
        &[
            ("running-job1", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn departments_reclaim_from_the_department_over_quota() {
    // reclaimDepartments_test.go "Reclaim from overquota department with multiple
    // departments": of four departments deserving 4 GPUs each of node0's 16, d2 holds 8; d1's
    // inference job reclaims d2's youngest job. Upstream checks only those two jobs; here
    // d4's 5-GPU job waits (d4's share is 4) and every other job runs on.
    let mut jobs = vec![pend1(
        "d1-p1-pending-job",
        "d1-project1",
        Pc::Inference,
        1.0,
    )];
    for name in ["d1-p2-job1", "d1-p2-job2", "d1-p2-job3", "d1-p2-job4"] {
        jobs.push(run1(name, "d1-project2", Pc::Train, 1.0, "node0"));
    }
    for name in [
        "d2-job1", "d2-job2", "d2-job3", "d2-job4", "d2-job5", "d2-job6", "d2-job7", "d2-job8",
    ] {
        jobs.push(run1(name, "d2-project1", Pc::Train, 1.0, "node0"));
    }
    for name in ["d3-job1", "d3-job2", "d3-job3", "d3-job4"] {
        jobs.push(run1(name, "d3-project1", Pc::Train, 1.0, "node0"));
    }
    jobs.push(pend1("d4-job1", "d4-project1", Pc::Train, 5.0));
    check(
        &[("node0", 16)],
        &[
            dept("d1", 4.0),
            dept("d2", 4.0),
            dept("d3", 4.0),
            dept("d4", 4.0),
            qd("d1-project1", 3.0, 3.0, "d1"),
            qd("d1-project2", 1.0, 1.0, "d1"),
            qd("d2-project1", 4.0, 4.0, "d2"),
            qd("d3-project1", 4.0, 4.0, "d3"),
            qd("d4-project1", 4.0, 4.0, "d4"),
        ],
        &jobs,
        &[
            ("d2-job8", reclaimed("d1-p1-pending-job", 60.0, 1)),
            ("d1-p1-pending-job", binds(90.0, &["node0"])),
        ],
    );
}
