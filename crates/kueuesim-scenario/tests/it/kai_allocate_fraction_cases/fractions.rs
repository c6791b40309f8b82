//! The cases of upstream's `allocate/allocateFractionalGpu_test.go`.

use super::*;

// allocate/allocateFractionalGpu_test.go

/// A department `department-a` deserving 1 GPU with a limit of 1, and queue0 in it.
fn department_of_one_gpu(queue0: Queue) -> Vec<Queue> {
    vec![
        queue("department-a", 1.0).weight(1.0).limit(1.0),
        queue0.parent("department-a"),
    ]
}

#[test]
fn fractions_over_the_projects_limit_are_not_allocated() {
    // allocateFractionalGpu_test.go, "allocate job with multiple pods but does not allow it
    // because project goes over allowance": 3 × 0.5 GPU against queue0's limit of 1.
    let c = case(
        vec![node("node0", 4)],
        department_of_one_gpu(queue("queue0", 1.0).weight(1.0).limit(1.0)),
        vec![frac("pending_job0", "queue0", TRAIN, 0.5).pending(3)],
    );
    c.run().waits("pending_job0");
}

#[test]
fn fractions_over_the_departments_limit_are_not_allocated() {
    // allocateFractionalGpu_test.go, "allocate job with multiple pods but does not allow it
    // because department to go over allowance": 3 × 0.5 GPU against department-a's limit of 1.
    let c = case(
        vec![node("node0", 4)],
        department_of_one_gpu(queue("queue0", 1.0).weight(1.0)),
        vec![frac("pending_job0", "queue0", TRAIN, 0.5).pending(3)],
    );
    c.run().waits("pending_job0");
}

#[test]
fn a_share_goes_to_the_shared_gpu_it_fits() {
    // allocateFractionalGpu_test.go, "1 shared gpu job running, 1 pending interactive shared
    // gpu job, allocate to same gpu": one device ends up held by both halves.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            frac("running_shared_gpu_job0", "queue0", BUILD, 0.5).on_group("node0", "1"),
            frac("pending_shared_gpu_job1", "queue0", BUILD, 0.5).pending(1),
        ],
    );
    c.run()
        .stays("running_shared_gpu_job0", &["node0"])
        .runs("pending_shared_gpu_job1", 60.0, &["node0"])
        .devices_held(1);
}

#[test]
fn a_share_goes_to_the_node_of_the_shared_gpu_it_fits() {
    // allocateFractionalGpu_test.go, "1 shared gpu job running, 1 pending interactive shared
    // gpu job, allocate to same gpu - even if multiple nodes, to check gpusharingorder
    // plugin" (queue0 deserves 2), and integration_tests/allocate/allocateFractionalGpu_test.go,
    // "test gpuSharingOrder - one node empty and one node with already running frac job -
    // allocate to the node with already running job" (3): node1's shared device wins over
    // node0's idle ones.
    for deserved in [2.0, 3.0] {
        let c = case(
            vec![node("node0", 2), node("node1", 2)],
            vec![queue("queue0", deserved)],
            vec![
                frac("running_shared_gpu_job0", "queue0", BUILD, 0.5).on_group("node1", "1"),
                frac("pending_shared_gpu_job1", "queue0", BUILD, 0.5).pending(1),
            ],
        );
        c.run()
            .stays("running_shared_gpu_job0", &["node1"])
            .runs("pending_shared_gpu_job1", 60.0, &["node1"])
            .devices_held(1);
    }
}

/// 0.6 of a GPU running on node0 (2 GPUs) and 0.5 pending, queue0 deserving `deserved`.
fn six_tenths_and_a_half(deserved: f64) -> Case {
    case(
        vec![node("node0", 2)],
        vec![queue("queue0", deserved)],
        vec![
            frac("running_shared_gpu_job0", "queue0", BUILD, 0.6).on_group("node0", "0"),
            frac("pending_shared_gpu_job1", "queue0", BUILD, 0.5).pending(1),
        ],
    )
}

#[test]
fn a_share_that_does_not_fit_the_shared_gpu_opens_a_new_one() {
    // allocateFractionalGpu_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // "1 shared gpu job running, 1 pending interactive shared gpu job - allocate to new gpu".
    six_tenths_and_a_half(2.0)
        .run()
        .stays("running_shared_gpu_job0", &["node0"])
        .runs("pending_shared_gpu_job1", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn a_non_preemptible_share_over_the_queues_quota_is_not_allocated() {
    // allocateFractionalGpu_test.go, both cases "1 shared gpu job running, 1 pending
    // interactive shared gpu job - queue will be overused, don't allocate" (they differ only in
    // the order of a task's fields): 0.6 + 0.5 of a build priority exceeds queue0's 1 GPU.
    six_tenths_and_a_half(1.0)
        .run()
        .stays("running_shared_gpu_job0", &["node0"])
        .waits("pending_shared_gpu_job1")
        .devices_held(1);
}

#[test]
fn a_share_beside_a_whole_gpu_job() {
    // allocateFractionalGpu_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // "1 whole gpu job running, 1 pending interactive shared gpu job - allocate".
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            whole("running_job0", "queue0", TRAIN, 1).on("node0"),
            frac("pending_shared_gpu_job1", "queue0", BUILD, 0.5).pending(1),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_shared_gpu_job1", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn a_whole_gpu_beside_a_share() {
    // allocateFractionalGpu_test.go, "1 shared gpu interactive job running, 1 pending whole
    // gpu job - allocate".
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            frac("running_shared_gpu_job0", "queue0", BUILD, 0.5).on_group("node0", "1"),
            whole("pending_whole_gpu_job1", "queue0", TRAIN, 1).pending(1),
        ],
    );
    c.run()
        .stays("running_shared_gpu_job0", &["node0"])
        .runs("pending_whole_gpu_job1", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn three_of_four_shares_fit_beside_a_running_share() {
    // allocateFractionalGpu_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // "1 interactive shared gpu job running, 4 pending interactive shared gpus pending -
    // allocate 3 of the shared GPUs jobs": 0.6 opens GPU 1, 0.5 fills GPU 0, the next 0.5 fits
    // nowhere, 0.3 joins GPU 1.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            frac("running_shared_gpu_job0", "queue0", BUILD, 0.5).on_group("node0", "0"),
            frac("pending_shared_gpu_job0", "queue0", BUILD, 0.6).pending(1),
            frac("pending_shared_gpu_job1", "queue0", BUILD, 0.5).pending(1),
            frac("pending_shared_gpu_job2", "queue0", BUILD, 0.5).pending(1),
            frac("pending_shared_gpu_job3", "queue0", BUILD, 0.3).pending(1),
        ],
    );
    c.run()
        .stays("running_shared_gpu_job0", &["node0"])
        .runs("pending_shared_gpu_job0", 60.0, &["node0"])
        .runs("pending_shared_gpu_job1", 60.0, &["node0"])
        .waits("pending_shared_gpu_job2")
        .runs("pending_shared_gpu_job3", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn a_share_counts_as_its_fraction_in_the_queues_gpus() {
    // allocateFractionalGpu_test.go, "Verify allocated fractional GPU jobs are counted in the
    // overall number of GPUs the default department will have": 0.5 + 1 of queue0's 2.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            frac("running_job0", "queue0", BUILD, 0.5).on_group("node0", "1"),
            whole("pending_job0", "queue0", BUILD, 1).pending(1),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn a_train_share_is_allocated_over_quota_beside_two_shares() {
    // allocateFractionalGpu_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // the first "Allow allocation of fractional training when over quota with fractional jobs":
    // two build halves fill GPU 0 (queue0 deserves 1); a train half, preemptible, may go over
    // quota and opens GPU 1.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 1.0)],
        vec![
            frac("running_job0", "queue0", BUILD, 0.5).on_group("node0", "0"),
            frac("running_job1", "queue0", BUILD, 0.5).on_group("node0", "0"),
            frac("pending_job0", "queue0", TRAIN, 0.5).pending(1),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .stays("running_job1", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn a_train_share_is_allocated_over_quota_beside_a_whole_gpu() {
    // allocateFractionalGpu_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // the second "Allow allocation of fractional training when over quota with fractional
    // jobs": a build job holds queue0's 1 deserved GPU whole.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 1.0)],
        vec![
            whole("running_job0", "queue0", BUILD, 1).on("node0"),
            frac("pending_job0", "queue0", TRAIN, 0.5).pending(1),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn spread_takes_the_node_without_a_share() {
    // allocateFractionalGpu_test.go, "Spread across nodes, when 1 node has shared GPU"
    // (nodeplacement spread for GPU and CPU, gpuspread: `placementStrategy: spread`).
    let c = case(
        vec![node("node0", 2), node("node1", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            frac("running_job0", "queue0", TRAIN, 0.5).on_group("node0", "0"),
            frac("pending_job0", "queue0", TRAIN, 0.2).pending(1),
        ],
    )
    .placement("spread");
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_job0", 60.0, &["node1"])
        .devices_held(2);
}

#[test]
fn binpack_puts_a_share_on_the_shared_gpu() {
    // allocateFractionalGpu_test.go, "Pack jobs on nodes" (the default configuration).
    let c = case(
        vec![node("node0", 2), node("node1", 2)],
        vec![queue("queue0", 4.0)],
        vec![
            frac("running_job0", "queue0", TRAIN, 0.5).on_group("node0", "0"),
            frac("pending_job0", "queue0", TRAIN, 0.2).pending(1),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .devices_held(1);
}

/// node0's GPU 1 holds 0.5 and GPU 0 0.7 (of `gpus` GPUs); a 0.2 share arrives at 1m, and at
/// 2m a probe of 0.5, which fits beside the other shares only if the 0.2 went to GPU 0 (0.9
/// used, GPU 1 0.5 free) and not to GPU 1 (0.7 used, 0.3 free on each): the output does not
/// name a pod's device, the probe tells which it was.
fn shares_of_a_half_and_seven_tenths(gpus: u32, strategy: &'static str) -> Case {
    case(
        vec![node("node0", gpus)],
        vec![queue("queue0", f64::from(gpus))],
        vec![
            frac("running_job0", "queue0", TRAIN, 0.5).on_group("node0", "1"),
            frac("running_job1", "queue0", TRAIN, 0.7).on_group("node0", "0"),
            frac("pending_job0", "queue0", TRAIN, 0.2).pending(1),
            frac("probe", "queue0", TRAIN, 0.5).pending(1).arrives("2m"),
        ],
    )
    .placement(strategy)
}

#[test]
fn gpupack_puts_a_share_on_the_most_used_gpu() {
    // allocateFractionalGpu_test.go, "Pack jobs on GPUs" (gpupack): the 0.2 joins GPU 0's 0.7.
    let r = shares_of_a_half_and_seven_tenths(2, "binpack").run();
    r.stays("running_job0", &["node0"])
        .stays("running_job1", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .runs("probe", 120.0, &["node0"])
        .devices_held(2);
}

#[test]
fn gpuspread_puts_a_share_on_the_least_used_gpu() {
    // allocateFractionalGpu_test.go, "Spread jobs across GPUs" (gpuspread; one node, so the
    // node strategy does not matter): the 0.2 joins GPU 1's 0.5, and the probe finds no room.
    let r = shares_of_a_half_and_seven_tenths(2, "spread").run();
    r.stays("running_job0", &["node0"])
        .stays("running_job1", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .waits("probe")
        .devices_held(2);
}

#[test]
fn gpuspread_opens_an_idle_gpu_before_a_shared_one() {
    // allocateFractionalGpu_test.go, "Spread jobs across free GPUs" (gpuspread, node0 of 8
    // GPUs): gpuspread's order scores an idle device 1 and a shared one 1 − its used portion,
    // so the 0.2 opens a third device and the probe's 0.5 finds room. Upstream's table names
    // group "1", but its `MatchExpectedAndRealTasks` compares groups only when the task's
    // groups equal the expected ones, so a new group passes there.
    let r = shares_of_a_half_and_seven_tenths(8, "spread").run();
    r.stays("running_job0", &["node0"])
        .stays("running_job1", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .runs("probe", 120.0, &["node0"])
        .devices_held(4);
}
