//! The cases of upstream's `integration_tests/allocate/allocate_test.go`.

use super::*;

// integration_tests/allocate/allocate_test.go

/// Two pending train jobs of 2 GPUs in queue0 (of department-a) on node0 of 4 GPUs.
fn two_jobs_of_two_gpus(queues: Vec<Queue>) -> Case {
    case(
        vec![node("node0", 4)],
        queues,
        vec![
            whole("pending_job0", "queue0", TRAIN, 2).pending(1),
            whole("pending_job1", "queue0", TRAIN, 2).pending(1),
        ],
    )
}

#[test]
fn the_second_job_would_take_the_project_over_its_limit() {
    // allocate_test.go, "allocate job but does not allow to project to go over allowance".
    two_jobs_of_two_gpus(vec![
        queue("department-a", 2.0).weight(2.0),
        queue("queue0", 2.0)
            .weight(2.0)
            .limit(2.0)
            .parent("department-a"),
    ])
    .run()
    .runs("pending_job0", 60.0, &["node0"])
    .waits("pending_job1");
}

#[test]
fn the_second_job_would_take_the_department_over_its_limit() {
    // allocate_test.go, "allocate job but does not allow to department to go over allowance".
    two_jobs_of_two_gpus(vec![
        queue("department-a", 2.0).weight(2.0).limit(2.0),
        queue("queue0", 2.0).parent("department-a"),
    ])
    .run()
    .runs("pending_job0", 60.0, &["node0"])
    .waits("pending_job1");
}

#[test]
fn a_train_job_goes_over_quota_beside_a_build_job() {
    // allocate_test.go, "allocate pending jobs, allow over quota for train jobs (with
    // interactive jobs)": queue0 deserves 1 of node0's 2 GPUs.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 1.0), queue("queue1", 1.0)],
        vec![
            whole("pending_job0", "queue0", BUILD, 1).pending(1),
            whole("pending_job1", "queue0", TRAIN, 1).pending(1),
        ],
    );
    c.run()
        .runs("pending_job0", 60.0, &["node0"])
        .runs("pending_job1", 60.0, &["node0"]);
}

#[test]
fn a_build_job_over_its_queues_quota_waits() {
    // allocate_test.go, "don't allocate over quota build jobs": 2 GPUs against queue0's 1.
    let c = case(
        vec![node("node0", 4)],
        vec![queue("queue0", 1.0), queue("queue1", 1.0)],
        vec![whole("pending_job0", "queue0", BUILD, 2).pending(1)],
    );
    c.run().waits("pending_job0");
}

/// Two build jobs of 1 GPU, of queue0 and queue1, for node0's single GPU.
fn two_queues_one_gpu(queue0: Queue, queue1: Queue) -> Case {
    case(
        vec![node("node0", 1)],
        vec![queue0, queue1],
        vec![
            whole("pending_job0", "queue0", BUILD, 1).pending(1),
            whole("pending_job1", "queue1", BUILD, 1).pending(1),
        ],
    )
}

#[test]
fn equal_shares_allocate_the_older_job_first() {
    // allocate_test.go, "allocate according to creation time when share is equal" (the two
    // jobs arrive together, pending_job0 first in the input).
    two_queues_one_gpu(queue("queue0", 1.0), queue("queue1", 1.0))
        .run()
        .runs("pending_job0", 60.0, &["node0"])
        .waits("pending_job1");
}

#[test]
fn the_queue_of_higher_priority_allocates_first() {
    // allocate_test.go, "allocate according to priority": queue1's priority is 101.
    two_queues_one_gpu(queue("queue0", 1.0), queue("queue1", 1.0).priority(101))
        .run()
        .waits("pending_job0")
        .runs("pending_job1", 60.0, &["node0"]);
}

#[test]
fn the_queue_deserving_more_allocates_first() {
    // allocate_test.go, "1 build job pending for each queue with different share - allocate
    // the second": queue1 deserves 2, queue0 1.
    two_queues_one_gpu(queue("queue0", 1.0), queue("queue1", 2.0))
        .run()
        .waits("pending_job0")
        .runs("pending_job1", 60.0, &["node0"]);
}

#[test]
fn four_queues_share_two_gpus_one_job_each() {
    // allocate_test.go, "Over provisioning with over quota, many queues to few GPUs - verify
    // queue share is updated during the same allocation round": four queues deserving 1 GPU
    // each, node0 of 2; queue0's and queue1's first jobs run, nothing else, and no queue at
    // its deserved share is reclaimed from.
    let c = case(
        vec![node("node0", 2)],
        vec![
            queue("queue0", 1.0),
            queue("queue1", 1.0),
            queue("queue2", 1.0),
            queue("queue3", 1.0),
        ],
        vec![
            whole("pending_job0", "queue0", TRAIN, 1).pending(1),
            whole("pending_job1", "queue1", TRAIN, 1).pending(1),
            whole("pending_job2", "queue2", TRAIN, 1).pending(1),
            whole("pending_job3", "queue3", TRAIN, 1).pending(1),
            whole("pending_job4", "queue0", TRAIN, 1).pending(1),
            whole("pending_job5", "queue1", TRAIN, 1).pending(1),
        ],
    );
    c.run()
        .runs("pending_job0", 60.0, &["node0"])
        .runs("pending_job1", 60.0, &["node0"])
        .waits("pending_job2")
        .waits("pending_job3")
        .waits("pending_job4")
        .waits("pending_job5");
}

#[test]
fn the_department_of_the_smaller_ratio_allocates_first() {
    // allocate_test.go, "Allocate Departments with smaller ratio 1st": d1 deserves 1 (queue0
    // 3, queue1 2), d2 deserves 2 (queue2 1); node0 has 1 GPU.
    let c = case(
        vec![node("node0", 1)],
        vec![
            queue("d1", 1.0).weight(1.0),
            queue("d2", 2.0).weight(2.0),
            queue("queue0", 3.0).parent("d1"),
            queue("queue1", 2.0).parent("d1"),
            queue("queue2", 1.0).parent("d2"),
        ],
        vec![
            whole("pending_job0", "queue0", TRAIN, 1).pending(1),
            whole("pending_job1", "queue1", TRAIN, 1).pending(1),
            whole("pending_job2", "queue2", TRAIN, 1).pending(1),
        ],
    );
    c.run()
        .waits("pending_job0")
        .waits("pending_job1")
        .runs("pending_job2", 60.0, &["node0"]);
}

#[test]
fn a_build_job_over_its_departments_quota_waits() {
    // allocate_test.go, "Don't allow allocation of interactive jobs above the department's
    // deserved GPUs": queue0 deserves 2, its department d1 only 1.
    let c = case(
        vec![node("node0", 4)],
        vec![
            queue("d1", 1.0).weight(1.0),
            queue("d2", 1.0).weight(1.0),
            queue("queue0", 2.0).parent("d1"),
            queue("queue1", 2.0).parent("d2"),
        ],
        vec![whole("pending_job0", "queue0", BUILD, 2).pending(1)],
    );
    c.run().waits("pending_job0");
}

#[test]
fn a_build_job_preempts_a_train_job_at_the_queues_limit() {
    // allocate_test.go, "try to allocate interactive after train when over-quota - train
    // should be preempted for interactive to run": queue0 deserves 1 GPU with a limit of 1;
    // the train job is preempted at 1m and the build job binds once it is gone (1m30s).
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 1.0).weight(1.0).limit(1.0)],
        vec![
            whole("running_job_train", "queue0", TRAIN, 1).on("node0"),
            whole("pending_job_interactive", "queue0", BUILD, 1).pending(1),
        ],
    );
    c.run()
        .evicted(
            "running_job_train",
            "Preempt",
            "pending_job_interactive",
            60.0,
        )
        .runs("pending_job_interactive", 90.0, &["node0"]);
}

#[test]
fn a_train_job_waits_at_the_queues_limit() {
    // allocate_test.go, "try to allocate train after interactive when over-quota - train
    // should not run".
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 1.0).weight(1.0).limit(1.0)],
        vec![
            whole("pending_job_interactive0", "queue0", BUILD, 1).on("node0"),
            whole("pending_job_train1", "queue0", TRAIN, 1).pending(1),
        ],
    );
    c.run()
        .stays("pending_job_interactive0", &["node0"])
        .waits("pending_job_train1");
}

/// Two train jobs of 1 GPU and 2000 cores (upstream's fake reads `RequiredCPUsPerTask` as
/// cores) on node0 of 4 GPUs and 5000 cores; `queues` bound CPU to 2500 cores.
fn two_jobs_of_2000_cores(queues: Vec<Queue>) -> Case {
    case(
        vec![node("node0", 4).cpu_millis(5_000_000)],
        queues,
        vec![
            whole("pending_job0", "queue0", TRAIN, 1)
                .cpu(2_000_000, 0)
                .pending(1),
            whole("pending_job1", "queue0", TRAIN, 1)
                .cpu(2_000_000, 0)
                .pending(1),
        ],
    )
}

#[test]
fn the_second_job_would_take_the_queue_over_its_cpu_limit() {
    // allocate_test.go, "don't allow job over QUEUE deserved CPU" (queue0's CPU limit
    // 2500 × 1000 millicores).
    two_jobs_of_2000_cores(vec![
        queue("department-a", 2.0).weight(2.0),
        queue("queue0", 2.0)
            .weight(2.0)
            .limit(2.0)
            .cpu(-1.0, 2_500_000.0)
            .parent("department-a"),
    ])
    .run()
    .runs("pending_job0", 60.0, &["node0"])
    .waits("pending_job1");
}

#[test]
fn the_second_job_would_take_the_department_over_its_cpu_limit() {
    // allocate_test.go, "don't allow job over DEPARTMENT deserved CPU".
    two_jobs_of_2000_cores(vec![
        queue("department-a", 2.0)
            .weight(2.0)
            .cpu(-1.0, 2_500_000.0),
        queue("queue0", 2.0)
            .weight(2.0)
            .limit(2.0)
            .parent("department-a"),
    ])
    .run()
    .runs("pending_job0", 60.0, &["node0"])
    .waits("pending_job1");
}

#[test]
fn a_job_of_a_single_level_queue_runs() {
    // allocate_test.go, "single level queue hierarchy - allocate job"
    // (`DisableDefaultDepartment`).
    let c = case(
        vec![node("node0", 2)],
        vec![queue("root-queue", 2.0)],
        vec![whole("pending_job0", "root-queue", TRAIN, 1).pending(1)],
    );
    c.run().runs("pending_job0", 60.0, &["node0"]);
}

#[test]
fn jobs_of_two_teams_of_a_three_level_hierarchy_run() {
    // allocate_test.go, "three level queue hierarchy - allocate jobs across teams".
    let c = case(
        vec![node("node0", 4)],
        vec![
            queue("org", 4.0),
            queue("dept1", 2.0).parent("org"),
            queue("team1", 1.0).parent("dept1"),
            queue("team2", 1.0).parent("dept1"),
        ],
        vec![
            whole("job_team1", "team1", TRAIN, 1).pending(1),
            whole("job_team2", "team2", TRAIN, 1).pending(1),
        ],
    );
    c.run()
        .runs("job_team1", 60.0, &["node0"])
        .runs("job_team2", 60.0, &["node0"]);
}

#[test]
fn a_job_at_the_fourth_level_runs() {
    // allocate_test.go, "four level queue hierarchy - allocate job at deepest level".
    let c = case(
        vec![node("node0", 4)],
        vec![
            queue("company", 10.0),
            queue("division", 5.0).parent("company"),
            queue("department", 3.0).parent("division"),
            queue("project", 2.0).parent("department"),
        ],
        vec![whole("deep_job", "project", TRAIN, 2).pending(1)],
    );
    c.run().runs("deep_job", 60.0, &["node0"]);
}
