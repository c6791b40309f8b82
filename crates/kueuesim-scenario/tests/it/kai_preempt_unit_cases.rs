//! KAI's preempt action: the cases of upstream's `pkg/scheduler/actions/preempt/`
//! unit tests (`preempt_test.go`, `preempt_subgroups_test.go`, `preemptGang_test.go`,
//! `preempt_elastic_test.go`) written from their tables (`kai_tables`) and run until the
//! cluster settles: upstream's `Releasing` task is a pod evicted when the pending job arrives
//! (1m), its `Pipelined` task one bound once the victims are gone (podTermination 30s, 1m30s).
//! kueuesim runs the whole session (allocate, consolidation, reclaim, then preempt), where
//! upstream's test runs the preempt action alone; no case here gives the other actions
//! anything to do.

use crate::kai_tables::{Case, Job, P, case, check, ends, evicted, job, on, q};

/// When the pending jobs arrive and the session preempts for them (s).
const AT: f64 = 60.0;
/// When a pipelined job binds: the victims are gone.
const BOUND: f64 = 90.0;
const PREEMPT: &str = "Preempt";

/// A 1-GPU train job running on node0 and a 1-GPU job of `pc` pending, in queue0 deserving
/// `deserved`, on node0 of 1 GPU.
fn one_for_one(running_pc: &'static str, pending_pc: &'static str, deserved: f64) -> Case {
    case(
        &[("node0", 1)],
        &[q("queue0", deserved)],
        vec![
            job("running-job0", "queue0", running_pc, 1, &[on("node0")]),
            job("pending-job0", "queue0", pending_pc, 1, &[P]),
        ],
    )
}

// ---- preempt_test.go ----

#[test]
fn two_trains_preempted_for_a_two_gpu_build() {
    // "2 train jobs running, 1 build job with 2 GPUs pending for the same queue - preempt"
    check(
        &case(
            &[("node0", 2)],
            &[q("queue0", 2.0)],
            vec![
                job("running-job0", "queue0", "train", 1, &[on("node0")]),
                job("running-job1", "queue0", "train", 1, &[on("node0")]),
                job("pending-job0", "queue0", "build", 2, &[P]),
            ],
        ),
        &[
            evicted("running-job0", &[0], PREEMPT, "pending-job0", &["-"]),
            evicted("running-job1", &[0], PREEMPT, "pending-job0", &["-"]),
            ends("pending-job0", &["node0"], BOUND),
        ],
        AT,
    );
}

#[test]
fn only_the_train_of_the_builds_queue_is_preempted() {
    // "2 train jobs running require 2 GPUs, 1 build job with 2 GPUs pending - preempt":
    // running-job1 is queue1's, so not a victim of preempt; queue0 would go over its fair
    // share of 2 with the build job, so reclaim does not take it either.
    check(
        &case(
            &[("node0", 4)],
            &[q("queue0", 2.0), q("queue1", 2.0)],
            vec![
                job("running-job0", "queue0", "train", 2, &[on("node0")]),
                job("running-job1", "queue1", "train", 2, &[on("node0")]),
                job("pending-job0", "queue0", "build", 2, &[P]),
            ],
        ),
        &[
            evicted("running-job0", &[0], PREEMPT, "pending-job0", &["-"]),
            ends("pending-job0", &["node0"], BOUND),
        ],
        AT,
    );
}

#[test]
fn a_one_gpu_train_preempted_beside_a_free_gpu() {
    // "1 train requires 1 GPU for queue0, 1 train that requires 2 GPU for queue1, 1 build job
    // with 2 GPUs pending - preempt"
    check(
        &case(
            &[("node0", 4)],
            &[q("queue0", 2.0), q("queue1", 2.0)],
            vec![
                job("running-job0", "queue0", "train", 1, &[on("node0")]),
                job("running-job1", "queue1", "train", 2, &[on("node0")]),
                job("pending-job0", "queue0", "build", 2, &[P]),
            ],
        ),
        &[
            evicted("running-job0", &[0], PREEMPT, "pending-job0", &["-"]),
            ends("pending-job0", &["node0"], BOUND),
        ],
        AT,
    );
}

#[test]
fn the_younger_of_two_interactive_jobs_is_preempted() {
    // "2 preemptible interactive jobs running, 1 build job with 1 GPUs pending for the same
    // queue - preempt": running-job1 is the younger.
    check(
        &case(
            &[("node0", 2)],
            &[q("queue0", 2.0)],
            vec![
                job("running-job0", "queue0", "interactive", 1, &[on("node0")]),
                job("running-job1", "queue0", "interactive", 1, &[on("node0")]),
                job("pending-job0", "queue0", "build", 1, &[P]),
            ],
        ),
        &[
            evicted("running-job1", &[0], PREEMPT, "pending-job0", &["-"]),
            ends("pending-job0", &["node0"], BOUND),
        ],
        AT,
    );
}

#[test]
fn a_preemptible_interactive_job_preempts_a_train() {
    // "1 train job, 1 preemptible interactive job with 1 GPUs pending for the same queue -
    // preempt"
    check(
        &one_for_one("train", "interactive", 1.0),
        &[
            evicted("running-job0", &[0], PREEMPT, "pending-job0", &["-"]),
            ends("pending-job0", &["node0"], BOUND),
        ],
        AT,
    );
}

#[test]
fn inference_does_not_preempt_a_build_job() {
    // "Inference shouldn't preempt interactive" (the running job is a build job, priority
    // 100: not preemptible)
    check(&one_for_one("build", "inference", 10.0), &[], AT);
}

#[test]
fn a_build_job_does_not_preempt_inference() {
    // "Interactive shouldn't preempt inference" (the pending job is a build job)
    check(&one_for_one("inference", "build", 10.0), &[], AT);
}

#[test]
fn inference_preempts_a_train() {
    // "Inference should preempt train"
    check(
        &one_for_one("train", "inference", 10.0),
        &[
            evicted("running-job0", &[0], PREEMPT, "pending-job0", &["-"]),
            ends("pending-job0", &["node0"], BOUND),
        ],
        AT,
    );
}

// ---- preempt_subgroups_test.go ----

/// A train gang of two 1-GPU tasks on node0 (2 GPUs) and a pending build job with subgroups
/// sub-0 and sub-1 (minMember 1 each) of `per_sub` tasks of `gpus` GPUs each.
fn subgroup_preemptor(gpus: u32, per_sub: usize) -> Case {
    let mut tasks = vec![P.sub("sub-0"); per_sub];
    tasks.extend(vec![P.sub("sub-1"); per_sub]);
    case(
        &[("node0", 2)],
        &[q("queue0", 2.0)],
        vec![
            job(
                "running-job",
                "queue0",
                "train",
                1,
                &[on("node0"), on("node0")],
            ),
            job("pending-job", "queue0", "build", gpus, &tasks)
                .subgroups(&[("sub-0", 1), ("sub-1", 1)]),
        ],
    )
}

#[test]
fn a_job_with_subgroups_preempts_a_gang() {
    // "Job with sub groups preempts low priority job"
    check(
        &subgroup_preemptor(1, 1),
        &[
            evicted("running-job", &[0, 1], PREEMPT, "pending-job", &["-", "-"]),
            ends("pending-job", &["node0", "node0"], BOUND),
        ],
        AT,
    );
}

#[test]
fn a_job_with_subgroups_that_cannot_fit_preempts_nothing() {
    // "Job with sub groups cannot preempts low priority job - cannot satisfy sub group gang":
    // the two subgroups' minimums ask 4 GPUs of a 2-GPU node.
    check(&subgroup_preemptor(2, 1), &[], AT);
}

#[test]
fn a_job_with_subgroups_preempts_for_their_minimums() {
    // "Job with sub groups preempts low priority job - partial allocation of the pending job"
    // (the case appears twice, identical): the minimum of each subgroup is pipelined, the
    // other task of each waits.
    check(
        &subgroup_preemptor(1, 2),
        &[
            evicted("running-job", &[0, 1], PREEMPT, "pending-job", &["-", "-"]),
            ends("pending-job", &["node0", "-", "node0", "-"], BOUND),
        ],
        AT,
    );
}

/// A train job with subgroups sub-0 (tasks 0, 1) and sub-1 (tasks 2, 3), each of minMember
/// `min`, on node0 (4 GPUs), and a pending 2-GPU build job.
fn subgroup_victim(min: u32) -> Case {
    case(
        &[("node0", 4)],
        &[q("queue0", 2.0)],
        vec![
            job(
                "running-job",
                "queue0",
                "train",
                1,
                &[
                    on("node0").sub("sub-0"),
                    on("node0").sub("sub-0"),
                    on("node0").sub("sub-1"),
                    on("node0").sub("sub-1"),
                ],
            )
            .subgroups(&[("sub-0", min), ("sub-1", min)]),
            job("pending-job", "queue0", "build", 2, &[P]),
        ],
    )
}

#[test]
fn a_job_with_subgroups_loses_the_pods_above_their_minimums() {
    // "Preempt job with sub groups - partial eviction": the last pod of each subgroup.
    check(
        &subgroup_victim(1),
        &[
            evicted(
                "running-job",
                &[1, 3],
                PREEMPT,
                "pending-job",
                &["node0", "-", "node0", "-"],
            ),
            ends("pending-job", &["node0"], BOUND),
        ],
        AT,
    );
}

#[test]
fn a_job_with_subgroups_at_their_minimums_is_preempted_whole() {
    // "Preempt job with sub groups - complete eviction"
    check(
        &subgroup_victim(2),
        &[
            evicted(
                "running-job",
                &[0, 1, 2, 3],
                PREEMPT,
                "pending-job",
                &["-", "-", "-", "-"],
            ),
            ends("pending-job", &["node0"], BOUND),
        ],
        AT,
    );
}

// ---- preemptGang_test.go ----

#[test]
fn no_preemption_for_a_gang_that_cannot_fit() {
    // "Don't preempt if not all tasks can be allocated" (queue0's weight 2)
    let mut queue = q("queue0", 2.0);
    queue.weight = 2.0;
    check(
        &case(
            &[("node0", 1)],
            &[queue],
            vec![
                job("running-job0", "queue0", "train", 1, &[on("node0")]),
                job("pending-job0", "queue0", "build", 1, &[P, P]),
            ],
        ),
        &[],
        AT,
    );
}

#[test]
fn preemption_for_a_gang_that_fits() {
    // "Preempt if all tasks can be allocated"
    check(
        &case(
            &[("node0", 2)],
            &[q("queue0", 2.0)],
            vec![
                job("running-job0", "queue0", "train", 1, &[on("node0")]),
                job("pending-job0", "queue0", "build", 1, &[P, P]),
            ],
        ),
        &[
            evicted("running-job0", &[0], PREEMPT, "pending-job0", &["-"]),
            ends("pending-job0", &["node0", "node0"], BOUND),
        ],
        AT,
    );
}

#[test]
fn no_preemption_for_a_build_gang_over_its_quota() {
    // "don't preempt if will go over quota": 4 GPUs of a build job against a deserved 3.
    check(
        &case(
            &[("node0", 4)],
            &[q("queue0", 3.0)],
            vec![
                job("running-job0", "queue0", "train", 1, &[on("node0")]),
                job("pending-job0", "queue0", "build", 2, &[P, P]),
            ],
        ),
        &[],
        AT,
    );
}

#[test]
fn a_gang_is_preempted_whole() {
    // "preempt gang job": both pods of the running gang go for a 2-GPU build job.
    check(
        &case(
            &[("node0", 4)],
            &[q("queue0", 3.0)],
            vec![
                job(
                    "running-job0",
                    "queue0",
                    "train",
                    2,
                    &[on("node0"), on("node0")],
                ),
                job("pending-job0", "queue0", "build", 2, &[P]),
            ],
        ),
        &[
            evicted(
                "running-job0",
                &[0, 1],
                PREEMPT,
                "pending-job0",
                &["-", "-"],
            ),
            ends("pending-job0", &["node0"], BOUND),
        ],
        AT,
    );
}

#[test]
fn a_gang_pinned_to_two_nodes_preempts_their_jobs() {
    // "flaky scenario" (getTestsScatteredNodesForGangMetadata): four 1-GPU nodes, each full
    // with a train job; the interactive preemptor's two tasks are pinned to node1 and node3
    // (`NodeAffinityNames`). Upstream checks only the preemptor (pipelined, 2 GPUs).
    let mut queue = q("queue", 0.0);
    queue.weight = 1.0;
    let mut jobs: Vec<Job> = ["job-0-0", "job-1-0", "job-2-0", "job-3-0"]
        .iter()
        .zip(["node0", "node1", "node2", "node3"])
        .map(|(&n, node)| job(n, "queue", "train", 1, &[on(node)]))
        .collect();
    jobs.push(job(
        "preemptor",
        "queue",
        "interactive",
        1,
        &[P.pin("node1"), P.pin("node3")],
    ));
    check(
        &case(
            &[("node0", 1), ("node1", 1), ("node2", 1), ("node3", 1)],
            &[queue],
            jobs,
        ),
        &[
            evicted("job-1-0", &[0], PREEMPT, "preemptor", &["-"]),
            evicted("job-3-0", &[0], PREEMPT, "preemptor", &["-"]),
            ends("preemptor", &["node1", "node3"], BOUND),
        ],
        AT,
    );
}

// ---- preempt_elastic_test.go ----

#[test]
fn inference_preempts_several_jobs_one_of_them_elastic() {
    // "Inference job preempts several jobs (one of them is elastic)": all four pods go.
    check(
        &case(
            &[("node0", 4)],
            &[q("queue0", 4.0)],
            vec![
                job("running-job0", "queue0", "train", 1, &[on("node0")]),
                job(
                    "running-job1",
                    "queue0",
                    "train",
                    1,
                    &[on("node0"), on("node0")],
                )
                .min(1),
                job("running-job2", "queue0", "train", 1, &[on("node0")]),
                job("pending-job0", "queue0", "inference", 4, &[P]),
            ],
        ),
        &[
            evicted("running-job0", &[0], PREEMPT, "pending-job0", &["-"]),
            evicted(
                "running-job1",
                &[0, 1],
                PREEMPT,
                "pending-job0",
                &["-", "-"],
            ),
            evicted("running-job2", &[0], PREEMPT, "pending-job0", &["-"]),
            ends("pending-job0", &["node0"], BOUND),
        ],
        AT,
    );
}

#[test]
fn an_elastic_inference_job_preempts_a_train_job() {
    // "Elastic inference job preempts train job": upstream pipelines the elastic job's first
    // task (its minimum) and leaves the second pending for a later session; here the run
    // goes on and the second binds too, on the GPU the 2-GPU victim left.
    check(
        &case(
            &[("node0", 2)],
            &[q("queue0", 2.0)],
            vec![
                job("running-job0", "queue0", "train", 2, &[on("node0")]),
                job("pending-job0", "queue0", "inference", 1, &[P, P]).min(1),
            ],
        ),
        &[
            evicted("running-job0", &[0], PREEMPT, "pending-job0", &["-"]),
            ends("pending-job0", &["node0", "node0"], BOUND),
        ],
        AT,
    );
}

#[test]
fn an_elastic_inference_job_preempts_one_pod_for_its_second_task() {
    // "Elastic inference job preempts task from train job in favor of a single task":
    // pending-job0's first task runs from the start, so its second is tried in the first
    // session (0s) and binds once running-job0's second pod is gone (30s).
    check(
        &case(
            &[("node0", 3)],
            &[q("queue0", 3.0)],
            vec![
                job(
                    "running-job0",
                    "queue0",
                    "train",
                    1,
                    &[on("node0"), on("node0")],
                )
                .min(1),
                job("pending-job0", "queue0", "inference", 1, &[on("node0"), P]).min(1),
            ],
        ),
        &[
            evicted(
                "running-job0",
                &[1],
                PREEMPT,
                "pending-job0",
                &["node0", "-"],
            ),
            ends("pending-job0", &["node0", "node0"], 30.0),
        ],
        0.0,
    );
}

#[test]
fn inference_preempts_an_elastic_job_whose_minimum_moves() {
    // "Inference job preempts single task, moves one task from elastic train job": node1's
    // free GPU takes running-job0's first task, which upstream pipelines there.
    check(
        &case(
            &[("node0", 2), ("node1", 1)],
            &[q("queue0", 2.0)],
            vec![
                job(
                    "running-job0",
                    "queue0",
                    "train",
                    1,
                    &[on("node0"), on("node0")],
                )
                .min(1),
                job("pending-job0", "queue0", "inference", 2, &[P]),
            ],
        ),
        &[
            evicted(
                "running-job0",
                &[0, 1],
                PREEMPT,
                "pending-job0",
                &["node1", "-"],
            ),
            ends("pending-job0", &["node0"], BOUND),
        ],
        AT,
    );
}
