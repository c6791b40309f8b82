//! The cases of upstream's `reclaim_sub_group_test.go` (TestHandleReclaimSubGroups).

use super::*;

// reclaim_sub_group_test.go (TestHandleReclaimSubGroups). The queues leave
// `GPUOverQuotaWeight` out (0); a job's subgroups are KAI PodGroup subgroups, its tasks bare
// Pods labelled with theirs.

/// A task of subgroup `group`, running on `node` or pending.
const fn sg(node: Option<&'static str>, group: &'static str) -> Task {
    Task {
        node,
        subgroup: Some(group),
        unplaceable: false,
    }
}

/// A job of `tasks` in subgroups `groups` (name, minimum); its gang minimum is theirs summed.
fn grouped(
    name: &'static str,
    queue: &'static str,
    gpus: f64,
    groups: &'static [(&'static str, usize)],
    tasks: &[Task],
) -> Job {
    Job {
        min: Some(groups.iter().map(|(_, m)| m).sum()),
        subgroups: groups,
        ..job(name, queue, Pc::Train, gpus, tasks)
    }
}

const SUB_MIN_1: &[(&str, usize)] = &[("sub-0", 1), ("sub-1", 1)];

/// queue0 (deserving nothing) runs a gang of two 1-GPU tasks on node0 (2 GPUs); queue1
/// deserves 2.
fn subgroup_victim_cluster() -> ([(&'static str, u32); 1], [Queue; 2], Job) {
    (
        [("node0", 2)],
        [q("queue0", 0.0, 0.0), q("queue1", 2.0, 0.0)],
        job(
            "running-job",
            "queue0",
            Pc::Train,
            1.0,
            &[on("node0"), on("node0")],
        ),
    )
}

#[test]
fn subgroups_reclaim_resources_for_job_with_sub_groups() {
    // reclaim_sub_group_test.go "Reclaim resources for job with sub groups".
    let (nodes, queues, victim) = subgroup_victim_cluster();
    check(
        &nodes,
        &queues,
        &[
            victim,
            grouped(
                "pending-job",
                "queue1",
                1.0,
                SUB_MIN_1,
                &[sg(None, "sub-0"), sg(None, "sub-1")],
            ),
        ],
        &[
            ("running-job", reclaimed("pending-job", 60.0, 2)),
            ("pending-job", binds(90.0, &["node0", "node0"])),
        ],
    );
}

#[test]
fn subgroups_reclaim_for_a_partial_allocation_of_the_pending_job() {
    // reclaim_sub_group_test.go "Reclaim resources for job with sub groups - partial
    // allocation of the pending job" (two cases of that name; the second gives the pending
    // tasks a NodeName, which a pending task does not use): one task of each subgroup binds
    // (pending-job-0 and pending-job-2), the others wait.
    let (nodes, queues, victim) = subgroup_victim_cluster();
    check(
        &nodes,
        &queues,
        &[
            victim,
            grouped(
                "pending-job",
                "queue1",
                1.0,
                SUB_MIN_1,
                &[
                    sg(None, "sub-0"),
                    sg(None, "sub-0"),
                    sg(None, "sub-1"),
                    sg(None, "sub-1"),
                ],
            ),
        ],
        &[
            ("running-job", reclaimed("pending-job", 60.0, 2)),
            (
                "pending-job",
                Expect {
                    evictions: vec![],
                    pods: vec![Some(("node0", 90.0)), None, Some(("node0", 90.0)), None],
                },
            ),
        ],
    );
}

#[test]
fn subgroups_cannot_reclaim_when_a_sub_group_gang_cannot_be_satisfied() {
    // reclaim_sub_group_test.go "Job with sub groups cannot reclaim resources - cannot satisfy
    // sub group gang": two 2-GPU tasks, one per subgroup, on a node of 2 GPUs.
    let (nodes, queues, victim) = subgroup_victim_cluster();
    check(
        &nodes,
        &queues,
        &[
            victim,
            grouped(
                "pending-job",
                "queue1",
                2.0,
                SUB_MIN_1,
                &[sg(None, "sub-0"), sg(None, "sub-1")],
            ),
        ],
        &[],
    );
}

/// queue0's job of four 1-GPU tasks on node0 (4 GPUs), two per subgroup of minimum `min`,
/// and queue1's pending job of one 2-GPU task; both queues deserve 2.
fn subgroup_victim_of_four(groups: &'static [(&'static str, usize)]) -> [Job; 2] {
    [
        grouped(
            "running-job",
            "queue0",
            1.0,
            groups,
            &[
                sg(Some("node0"), "sub-0"),
                sg(Some("node0"), "sub-0"),
                sg(Some("node0"), "sub-1"),
                sg(Some("node0"), "sub-1"),
            ],
        ),
        pend1("pending-job", "queue1", Pc::Train, 2.0),
    ]
}

#[test]
fn subgroups_partial_eviction_of_a_job_with_sub_groups() {
    // reclaim_sub_group_test.go "Reclaim resources from job with sub groups - partial
    // eviction": each subgroup (minimum 1) gives its last task, running-job-1 and -3; the
    // others stay bound (kueuesim runs a job only with all its pods, so they wait there for
    // the replacements, which find no room).
    check(
        &[("node0", 4)],
        &[q("queue0", 2.0, 0.0), q("queue1", 2.0, 0.0)],
        &subgroup_victim_of_four(SUB_MIN_1),
        &[
            (
                "running-job",
                Expect {
                    evictions: vec![(60.0, "Reclaim", "pending-job")],
                    pods: vec![Some(("node0", 0.0)), None, Some(("node0", 0.0)), None],
                },
            ),
            ("pending-job", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn subgroups_complete_eviction_of_a_job_with_sub_groups() {
    // reclaim_sub_group_test.go "Reclaim resources from job with sub groups - complete
    // eviction": each subgroup needs both its tasks, so the whole job goes.
    check(
        &[("node0", 4)],
        &[q("queue0", 2.0, 0.0), q("queue1", 2.0, 0.0)],
        &subgroup_victim_of_four(&[("sub-0", 2), ("sub-1", 2)]),
        &[
            ("running-job", reclaimed("pending-job", 60.0, 4)),
            ("pending-job", binds(90.0, &["node0"])),
        ],
    );
}
