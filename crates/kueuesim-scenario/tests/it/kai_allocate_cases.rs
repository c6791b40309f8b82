//! KAI's allocate action: the cases of upstream's `pkg/scheduler/actions/allocate/` unit
//! tests (`allocate_test.go`, `allocateElastic_test.go`, `allocateGang_test.go`,
//! `allocate_subgroups_test.go`) written from their tables (`kai_tables`) and run until the
//! cluster settles. Upstream's `Binding` task is a pod bound when its job arrives (1m; a job
//! with a task running from the start is in the first session, 0s), its `Pending` task one
//! that never binds. kueuesim runs the whole session (allocate, then consolidation, reclaim
//! and preempt) and the sessions after it, where upstream's test runs one allocate action:
//! each case's comment says why the later actions change nothing.

use crate::kai_tables::{Case, Job, P, Queue, case, check, ends, job, on, q, run};

/// When the pending jobs arrive and are allocated (s).
const AT: f64 = 60.0;

// ---- allocate_test.go ----

#[test]
fn pending_jobs_are_allocated_by_their_queues_shares() {
    // "1 job running on node0 from queue0, 3 pending jobs from queue1 and 1 pending job from
    // queue0 - allocate them according to their the queue shares": the queues take turns by
    // share; queue1's third job finds no GPU, and no queue is under its fair share (1 each:
    // upstream's queues have no over-quota weight) to reclaim.
    check(
        &case(
            &[("node0", 2), ("node1", 2)],
            &[q("queue0", 1.0), q("queue1", 1.0)],
            vec![
                job("running-job0", "queue0", "train", 1, &[on("node0")]),
                job("pending-job0", "queue0", "train", 1, &[P]),
                job("pending-job1", "queue1", "train", 1, &[P]),
                job("pending-job2", "queue1", "train", 1, &[P]),
                job("pending-job3", "queue1", "train", 1, &[P]),
            ],
        ),
        &[
            ends("pending-job0", &["node1"], AT),
            ends("pending-job1", &["node0"], AT),
            ends("pending-job2", &["node1"], AT),
        ],
        AT,
    );
}

/// queue1 (deserving `deserved`) runs a 2-GPU train on node0 (4 GPUs); pending: a 4-GPU
/// train, a 2-GPU train and a 2-GPU job of `last_pc`, on `list`.
fn three_pending(list: &[(&'static str, u32)], deserved: f64, last_pc: &'static str) -> Case {
    case(
        list,
        &[q("queue1", deserved)],
        vec![
            job("running-job0", "queue1", "train", 2, &[on("node0")]),
            job("pending-job0", "queue1", "train", 4, &[P]),
            job("pending-job1", "queue1", "train", 2, &[P]),
            job("pending-job2", "queue1", last_pc, 2, &[P]),
        ],
    )
}

#[test]
fn pending_jobs_are_allocated_in_their_order() {
    // "1 job running on node0, 3 pending jobs - allocate them according to their order"
    check(
        &three_pending(&[("node0", 4), ("node1", 4)], 2.0, "train"),
        &[
            ends("pending-job0", &["node1"], AT),
            ends("pending-job1", &["node0"], AT),
        ],
        AT,
    );
}

#[test]
fn the_build_job_is_allocated_first() {
    // "1 job running on node0, 3 pending jobs - only build job should be allocated": the
    // build job (priority 100) comes first and takes node0's free GPUs; the trains cannot
    // preempt the train of their own priority.
    check(
        &three_pending(&[("node0", 4)], 2.0, "build"),
        &[ends("pending-job2", &["node0"], AT)],
        AT,
    );
}

#[test]
fn a_build_job_over_its_deserved_gpus_leaves_them_to_a_train() {
    // "1 job running on node0, 3 pending jobs, not enough deserved GPUs for build job -
    // allocate train job": the build job's 2 GPUs are over queue1's deserved 1
    // (`NonPreemptibleOverQuota`).
    check(
        &three_pending(&[("node0", 4)], 1.0, "build"),
        &[ends("pending-job1", &["node0"], AT)],
        AT,
    );
}

#[test]
fn best_effort_jobs_are_allocated_on_a_full_node() {
    // "1 build job running on 2 GPU, assign pending jobs of best effort": jobs asking no GPU
    // (`IsBestEffortJob`) bind beside the build job.
    check(
        &case(
            &[("node0", 2)],
            &[q("queue1", 2.0)],
            vec![
                job("running-job0", "queue1", "build", 2, &[on("node0")]),
                job("pending-job0", "queue1", "train", 0, &[P]),
                job("pending-job1", "queue1", "train", 0, &[P]),
            ],
        ),
        &[
            ends("pending-job0", &["node0"], AT),
            ends("pending-job1", &["node0"], AT),
        ],
        AT,
    );
}

#[test]
fn the_queue_further_from_its_deserved_share_goes_first() {
    // "queue0 has deserved of 3, queue 1 has deserved of 2, they will both have a share of 1
    // if allocated their task, yet for fair convergence - queue1 should allocate the task":
    // queue0 then has no room and cannot reclaim (queue1 is at its deserved 2).
    check(
        &case(
            &[("node0", 4)],
            &[q("queue0", 3.0), q("queue1", 2.0)],
            vec![
                job("running-job0", "queue0", "train", 2, &[on("node0")]),
                job("pending-job0", "queue0", "train", 1, &[P]),
                job("pending-job1", "queue1", "train", 2, &[P]),
            ],
        ),
        &[ends("pending-job1", &["node0"], AT)],
        AT,
    );
}

#[test]
fn at_equal_shares_the_queue_with_the_smaller_job_goes_first() {
    // "Both queues has the same share, give the one with smaller job - allocate jobs queue1"
    check(
        &case(
            &[("node0", 5)],
            &[q("queue0", 4.0), q("queue1", 2.0)],
            vec![
                job("running-job0", "queue0", "train", 2, &[on("node0")]),
                job("running-job1", "queue1", "train", 1, &[on("node0")]),
                job("pending-job0", "queue0", "train", 2, &[P]),
                job("pending-job1", "queue1", "train", 1, &[P]),
            ],
        ),
        &[ends("pending-job1", &["node0"], AT)],
        AT,
    );
}

#[test]
fn at_exactly_equal_shares_the_older_queue_goes_first() {
    // "Both queues has exactly the same share - give priority to the created 1st (queue0)"
    check(
        &case(
            &[("node0", 5)],
            &[q("queue0", 2.0), q("queue1", 2.0)],
            vec![
                job("running-job0", "queue0", "train", 2, &[on("node0")]),
                job("running-job1", "queue1", "train", 2, &[on("node0")]),
                job("pending-job0", "queue0", "train", 1, &[P]),
                job("pending-job1", "queue1", "train", 1, &[P]),
            ],
        ),
        &[ends("pending-job0", &["node0"], AT)],
        AT,
    );
}

#[test]
fn the_queue_with_deserved_gpus_goes_first() {
    // "queue0 has no deserved GPUs, queue1 has deserved - allocate jobs queue1"
    check(
        &case(
            &[("node0", 1)],
            &[q("queue0", 0.0), q("queue1", 1.0)],
            vec![
                job("pending-job0", "queue0", "train", 1, &[P]),
                job("pending-job1", "queue1", "train", 1, &[P]),
            ],
        ),
        &[ends("pending-job1", &["node0"], AT)],
        AT,
    );
}

#[test]
fn no_jobs() {
    // "No jobs": a node and a queue, nothing to allocate, nothing happens.
    let (r, _) = run(&case(&[("node0", 1)], &[q("queue0", 0.0)], Vec::new()));
    assert!(r.workloads.is_empty());
    assert!(r.summary.evictions.values().all(|&n| n == 0));
}

#[test]
fn a_preemptible_job_is_allocated_over_its_quota() {
    // "2 running jobs and 1 pending, allocate preemptible interactive with over quota"
    check(
        &case(
            &[("node0", 5)],
            &[q("queue0", 2.0)],
            vec![
                job("running-job0", "queue0", "train", 2, &[on("node0")]),
                job("running-job1", "queue0", "interactive", 2, &[on("node0")]),
                job("pending-job0", "queue0", "interactive", 1, &[P]),
            ],
        ),
        &[ends("pending-job0", &["node0"], AT)],
        AT,
    );
}

#[test]
fn a_build_job_within_its_quota_is_allocated_beside_preemptible_ones() {
    // "1 running jobs and 1 build pending, allocate build interactive with over quota": the
    // queue's non-preemptible allocation (0) plus the build job's 2 GPUs is its deserved 2.
    check(
        &case(
            &[("node0", 5)],
            &[q("queue0", 2.0)],
            vec![
                job("running-job0", "queue0", "interactive", 2, &[on("node0")]),
                job("pending-job0", "queue0", "build", 2, &[P]),
            ],
        ),
        &[ends("pending-job0", &["node0"], AT)],
        AT,
    );
}

/// A train on node1 (of two 2-GPU nodes) and a pending 1-GPU train, under `placement`.
fn placement(strategy: Option<&'static str>) -> Case {
    Case {
        placement: strategy,
        ..case(
            &[("node0", 2), ("node1", 2)],
            &[q("queue0", 2.0)],
            vec![
                job("running-job0", "queue0", "train", 1, &[on("node1")]),
                job("pending-job0", "queue0", "train", 1, &[P]),
            ],
        )
    }
}

#[test]
fn binpack_places_on_the_node_with_the_fewest_free_gpus() {
    // "Allocate task according to nodepack - to the node with the least free GPUs"
    check(
        &placement(None),
        &[ends("pending-job0", &["node1"], AT)],
        AT,
    );
}

#[test]
fn spread_places_on_the_node_with_the_most_free_gpus() {
    // "Allocate task according to nodespread - to the node with the most free GPUs" (the
    // nodeplacement plugin's spread strategy, `spec.kai.placementStrategy: spread`)
    check(
        &placement(Some("spread")),
        &[ends("pending-job0", &["node0"], AT)],
        AT,
    );
}

/// Three pending 1-GPU jobs on one 1-GPU node, the middle one an inference job.
fn inference_between(pc: &'static str) -> Case {
    case(
        &[("node0", 1)],
        &[q("queue0", 1.0)],
        vec![
            job("pending-job0", "queue0", pc, 1, &[P]),
            job("pending-job1", "queue0", "inference", 1, &[P]),
            job("pending-job2", "queue0", pc, 1, &[P]),
        ],
    )
}

#[test]
fn inference_is_allocated_before_build() {
    // "Allocate inference before build": the build jobs cannot preempt the inference job
    // (not preemptible).
    check(
        &inference_between("build"),
        &[ends("pending-job1", &["node0"], AT)],
        AT,
    );
}

#[test]
fn inference_is_allocated_before_train() {
    // "Allocate inference before train"
    check(
        &inference_between("train"),
        &[ends("pending-job1", &["node0"], AT)],
        AT,
    );
}

#[test]
fn inference_is_not_allocated_over_its_quota() {
    // "Attempt to allocate inference over quota": queue0 deserves no GPU and inference is
    // not preemptible.
    check(
        &case(
            &[("node0", 1)],
            &[q("queue0", 0.0), q("queue1", 1.0)],
            vec![job("pending-job0", "queue0", "inference", 1, &[P])],
        ),
        &[],
        AT,
    );
}

/// Queues of upstream's DRF cases: 1500 millicores and 1500 MB deserved each (upstream's
/// mixed units: its node's "3000" CPU is 3000 cores and its tasks ask hundreds of cores).
fn drf_queues() -> [Queue; 2] {
    let mut q0 = q("queue0", 0.0);
    q0.cpu = Some(1500.0);
    q0.memory = Some(1500.0);
    let mut q1 = q0;
    q1.name = "queue1";
    [q0, q1]
}

/// Upstream's DRF node: 3000 cores, `3000 * 10e6` bytes, no GPU.
fn drf_case(jobs: Vec<Job>) -> Case {
    Case {
        nodes: vec![("node0", 0, 3000, 30_000_000_000)],
        departments: Vec::new(),
        queues: drf_queues().to_vec(),
        jobs,
        placement: None,
    }
}

const GB1: u64 = 1_000_000_000;

#[test]
fn drf_fills_the_node_before_the_jobs_over_quota() {
    // "DRF - over quota": the queue order compares the dominant share over GPUs, CPU and
    // memory (`GetQueueOrderResult`): queue0's first 900-core job goes first (queue0 stays
    // within its deserved quota with it, queue1's 9 GB job does not), then the queues take
    // turns as their dominant shares grow (CPU for queue0, memory for queue1), and the
    // three 900-core and three 9 GB jobs fill the node exactly. The small `oq` jobs, last in
    // their queues, find no room and may not reclaim: each would take its queue over its
    // fair share (queue0's CPU, queue1's memory). Upstream's `oq_job0` and `oq_job1` are
    // last in their queues' job order by creation time (its builder creates each job a
    // minute after the one listed before it); here every job is created at once and ties
    // go by name, so they are named to sort after the others.
    let cpu = |n, queue, cores, mem| job(n, queue, "train", 0, &[P]).cpu_memory(cores, mem);
    check(
        &drf_case(vec![
            cpu("pending-job0", "queue0", 900, GB1),
            cpu("pending-job1", "queue0", 900, GB1),
            cpu("pending-job2", "queue0", 900, GB1),
            cpu("pending-oq-job0", "queue0", 100, GB1),
            cpu("pending-job3", "queue1", 100, 9 * GB1),
            cpu("pending-job4", "queue1", 100, 9 * GB1),
            cpu("pending-job5", "queue1", 100, 9 * GB1),
            cpu("pending-oq-job1", "queue1", 100, GB1),
        ]),
        &[
            ends("pending-job0", &["node0"], AT),
            ends("pending-job1", &["node0"], AT),
            ends("pending-job2", &["node0"], AT),
            ends("pending-job3", &["node0"], AT),
            ends("pending-job4", &["node0"], AT),
            ends("pending-job5", &["node0"], AT),
        ],
        AT,
    );
}

#[test]
fn drf_orders_queues_by_their_dominant_share() {
    // "DRF - order": queue1's job goes first, its dominant share with the job (1500 of 1500
    // cores, 10 of 10 GB of fair share) below queue0's (1700 of 1500 cores); only one of the
    // 700-core jobs fits, and queue0's, over its fair share of CPU with it, does not reclaim.
    let cpu = |n, queue, cores, mem, t: &[crate::kai_tables::Task]| {
        job(n, queue, "train", 0, t).cpu_memory(cores, mem)
    };
    check(
        &drf_case(vec![
            cpu("running-job-a-0", "queue0", 1000, GB1, &[on("node0")]),
            cpu("pending-job-a-0", "queue0", 700, GB1, &[P]),
            cpu("running-job-b-0", "queue1", 800, 9 * GB1, &[on("node0")]),
            cpu("pending-job-b-0", "queue1", 700, GB1, &[P]),
        ]),
        &[ends("pending-job-b-0", &["node0"], AT)],
        AT,
    );
}

// ---- allocateElastic_test.go ----

/// One elastic job (minMember 1) of 1-GPU `tasks` in queue0 (deserving 1) on node0.
fn elastic(gpus: u32, name: &'static str, tasks: &[crate::kai_tables::Task]) -> Case {
    case(
        &[("node0", gpus)],
        &[q("queue0", 1.0)],
        vec![job(name, "queue0", "train", 1, tasks).min(1)],
    )
}

#[test]
fn an_elastic_job_is_allocated_whole() {
    // "Allocate elastic job - full allocate"
    check(
        &elastic(2, "pending-job0", &[P, P]),
        &[ends("pending-job0", &["node0", "node0"], AT)],
        AT,
    );
}

#[test]
fn an_elastic_job_is_allocated_in_part() {
    // "Allocate elastic job - partial allocate"
    check(
        &elastic(1, "pending-job0", &[P, P]),
        &[ends("pending-job0", &["node0", "-"], AT)],
        AT,
    );
}

#[test]
fn a_partly_running_elastic_job_gets_its_other_task() {
    // "Allocate elastic job - full allocate - partially running": in the first session.
    check(
        &elastic(2, "running-job0", &[on("node0"), P]),
        &[ends("running-job0", &["node0", "node0"], 0.0)],
        0.0,
    );
}

#[test]
fn a_partly_running_elastic_job_gets_what_fits() {
    // "Allocate elastic job - partial allocate - some pods already running" (upstream also
    // checks that the job's `LastStartTimestamp` stays: a start is set only when none of
    // its pods was bound, docs/semantics.md, "Min-runtimes")
    check(
        &elastic(2, "pending-job0", &[on("node0"), P, P]),
        &[ends("pending-job0", &["node0", "node0", "-"], 0.0)],
        0.0,
    );
}

/// Two elastic jobs of `tasks` 1-GPU tasks each in queue0 (deserving 5) on a 5-GPU node.
fn two_elastic(tasks: usize) -> Case {
    let t = vec![P; tasks];
    case(
        &[("node0", 5)],
        &[q("queue0", 5.0)],
        vec![
            job("pending-job0", "queue0", "train", 1, &t).min(1),
            job("pending-job1", "queue0", "train", 1, &t).min(1),
        ],
    )
}

#[test]
fn two_elastic_jobs_one_whole_one_in_part() {
    // "Allocate 2 elastic jobs - full and partial allocate"
    check(
        &two_elastic(3),
        &[
            ends("pending-job0", &["node0", "node0", "node0"], AT),
            ends("pending-job1", &["node0", "node0", "-"], AT),
        ],
        AT,
    );
}

#[test]
fn two_elastic_jobs_both_in_part() {
    // "Allocate 2 elastic jobs - both partial allocate": the session's allocate pushes a job
    // back into the order after each pass (`PushJob`), and the elastic plugin's job order
    // (below its minimum, then at it, then above it) makes the jobs take turns: 3 and 2 of
    // the 5 GPUs.
    check(
        &two_elastic(4),
        &[
            ends("pending-job0", &["node0", "node0", "node0", "-"], AT),
            ends("pending-job1", &["node0", "node0", "-", "-"], AT),
        ],
        AT,
    );
}

// ---- allocateGang_test.go ----

/// One pending gang of `pc` with two tasks of `gpus` GPUs, queue0 deserving `deserved`.
fn gang(list: &[(&'static str, u32)], deserved: f64, pc: &'static str, gpus: u32) -> Case {
    case(
        list,
        &[q("queue0", deserved)],
        vec![job("pending-job0", "queue0", pc, gpus, &[P, P])],
    )
}

#[test]
fn a_train_gang_is_allocated_over_its_quota() {
    // "Allocate train gang job"
    check(
        &gang(&[("node0", 2)], 1.0, "train", 1),
        &[ends("pending-job0", &["node0", "node0"], AT)],
        AT,
    );
}

#[test]
fn a_build_gang_is_allocated() {
    // "Allocate build gang job"
    check(
        &gang(&[("node0", 2)], 2.0, "build", 1),
        &[ends("pending-job0", &["node0", "node0"], AT)],
        AT,
    );
}

#[test]
fn a_build_gang_is_allocated_on_two_nodes() {
    // "Allocate build gang job on 2 nodes"
    check(
        &gang(&[("node0", 1), ("node1", 1)], 2.0, "build", 1),
        &[ends("pending-job0", &["node0", "node1"], AT)],
        AT,
    );
}

#[test]
fn a_gang_that_does_not_fit_is_not_allocated() {
    // "Don't allocate gang job if not all tasks are allocatable"
    check(&gang(&[("node0", 2)], 2.0, "build", 2), &[], AT);
}

#[test]
fn a_build_gang_over_its_quota_is_not_allocated() {
    // "Don't allocate gang interactive job if it will go over quota" (a build job: 4 GPUs
    // against a deserved 3)
    check(&gang(&[("node0", 10)], 3.0, "build", 2), &[], AT);
}

// ---- allocate_subgroups_test.go ----

/// A train job of queue0 (deserving 1) on node0 of `gpus` GPUs.
fn with_subgroups(gpus: u32, jobs: Vec<Job>) -> Case {
    case(&[("node0", gpus)], &[q("queue0", 1.0)], jobs)
}

/// Tasks 0 and 1 in sub0, 2 and 3 in sub1, pending.
fn two_by_two() -> [crate::kai_tables::Task; 4] {
    [P.sub("sub0"), P.sub("sub0"), P.sub("sub1"), P.sub("sub1")]
}

#[test]
fn a_job_with_subgroups_is_allocated_whole() {
    // "Allocate job with SubGroups - full allocate"
    check(
        &with_subgroups(
            2,
            vec![
                job(
                    "pending-job0",
                    "queue0",
                    "train",
                    1,
                    &[P.sub("sub0"), P.sub("sub1")],
                )
                .subgroups(&[("sub0", 1), ("sub1", 1)]),
            ],
        ),
        &[ends("pending-job0", &["node0", "node0"], AT)],
        AT,
    );
}

#[test]
fn a_job_with_subgroups_gets_one_task_of_each() {
    // "Allocate job with SubGroups - partial allocation"
    check(
        &with_subgroups(
            2,
            vec![
                job("pending-job0", "queue0", "train", 1, &two_by_two())
                    .subgroups(&[("sub0", 1), ("sub1", 1)]),
            ],
        ),
        &[ends("pending-job0", &["node0", "-", "node0", "-"], AT)],
        AT,
    );
}

#[test]
fn the_unsatisfied_subgroup_is_allocated_first() {
    // "Allocate job with SubGroups - allocate resource to unsatisfied sub group": sub0 runs
    // its minimum; sub1's two tasks (its minimum) take the node's last two GPUs.
    check(
        &with_subgroups(
            4,
            vec![
                job(
                    "job0",
                    "queue0",
                    "train",
                    1,
                    &[
                        on("node0").sub("sub0"),
                        on("node0").sub("sub0"),
                        P.sub("sub0"),
                        P.sub("sub1"),
                        P.sub("sub1"),
                    ],
                )
                .subgroups(&[("sub0", 2), ("sub1", 2)]),
            ],
        ),
        &[ends(
            "job0",
            &["node0", "node0", "-", "node0", "node0"],
            0.0,
        )],
        0.0,
    );
}

/// job0: sub0 (minMember 2) with a running task of `first` GPUs and four pending 1-GPU
/// tasks, sub1 (minMember 1) with two pending 1-GPU tasks, on a 4-GPU node.
fn min_available(first: u32) -> Case {
    let mut tasks = vec![on("node0").sub("sub0").gpus(first)];
    tasks.extend([P.sub("sub0"); 4]);
    tasks.extend([P.sub("sub1"); 2]);
    with_subgroups(
        4,
        vec![job("job0", "queue0", "train", 1, &tasks).subgroups(&[("sub0", 2), ("sub1", 1)])],
    )
}

#[test]
fn subgroups_are_allocated_up_to_their_minimums() {
    // "Allocate job with SubGroups - allocate resource up to MinAvailable": the running
    // 2-GPU task leaves two GPUs, for sub0's second task and sub1's first.
    check(
        &min_available(2),
        &[ends(
            "job0",
            &["node0", "node0", "-", "-", "-", "node0", "-"],
            0.0,
        )],
        0.0,
    );
}

#[test]
fn subgroups_are_allocated_beyond_their_minimums() {
    // "Allocate job with SubGroups - allocate resource beyond MinAvailable": three GPUs
    // left, the third to sub0 (the lowest allocated/minimum ratio, then by name).
    check(
        &min_available(1),
        &[ends(
            "job0",
            &["node0", "node0", "node0", "-", "-", "node0", "-"],
            0.0,
        )],
        0.0,
    );
}

#[test]
fn nested_subgroups_are_allocated_whole() {
    // "Allocate job with SubGroups - unbalanced hierarchy structure": sub-ab holds sub-a and
    // sub-b (minMember 2 each), sub-c (one 4-GPU task) is the root's; 8 GPUs hold them all.
    check(
        &with_subgroups(
            8,
            vec![
                job(
                    "job0",
                    "queue0",
                    "train",
                    1,
                    &[
                        P.sub("sub-a"),
                        P.sub("sub-a"),
                        P.sub("sub-b"),
                        P.sub("sub-b"),
                        P.sub("sub-c").gpus(4),
                    ],
                )
                .subgroups(&[("sub-ab", 2), ("sub-a", 2), ("sub-b", 2), ("sub-c", 1)])
                .parents(&[("sub-a", "sub-ab"), ("sub-b", "sub-ab")]),
            ],
        ),
        &[ends("job0", &["node0"; 5], AT)],
        AT,
    );
}

#[test]
fn a_subgroup_whose_minimum_does_not_fit_holds_the_job() {
    // "Allocate job with SubGroups - cannot satisfy sub group gang": sub0's minimum (a
    // 3-GPU task) and sub1's (two 1-GPU tasks) ask 5 GPUs of 4.
    check(
        &with_subgroups(
            4,
            vec![
                job(
                    "pending-job0",
                    "queue0",
                    "train",
                    1,
                    &[
                        P.sub("sub0").gpus(3),
                        P.sub("sub0").gpus(3),
                        P.sub("sub1"),
                        P.sub("sub1"),
                    ],
                )
                .subgroups(&[("sub0", 1), ("sub1", 2)]),
            ],
        ),
        &[],
        AT,
    );
}

#[test]
fn two_jobs_with_subgroups_get_one_task_of_each() {
    // "Allocate multiple jobs with SubGroups": each job gets the minimum of each subgroup
    // (the session's allocate pushes a job back after each pass, and a job below its
    // minimum comes before one at it), which takes the 4 GPUs.
    let j = |n| job(n, "queue0", "train", 1, &two_by_two()).subgroups(&[("sub0", 1), ("sub1", 1)]);
    check(
        &with_subgroups(4, vec![j("pending-job0"), j("pending-job1")]),
        &[
            ends("pending-job0", &["node0", "-", "node0", "-"], AT),
            ends("pending-job1", &["node0", "-", "node0", "-"], AT),
        ],
        AT,
    );
}
