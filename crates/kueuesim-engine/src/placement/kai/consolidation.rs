//! KAI's consolidation action for one pending job (`consolidation.attemptToConsolidatePreemptor`):
//! which running jobs it may move, in which order, and the search for a set of moves that
//! frees room for the job while every moved pod finds a new node (`allPodsReallocated`).

use super::reclaim::{QueueState, Reclaimer, RunningJob, solve_with, victim_order};
use super::resources::CpuMemoryState;

/// KAI's default `--max-consolidation-preemptees` (`defaultMaxConsolidationPreemptees`,
/// 16): `buildPreemptibleFilterFunc` stops accepting potential victims once it counted more
/// than this many, so at most 17 jobs are considered.
pub const MAX_CONSOLIDATION_PREEMPTEES: usize = 16;

/// What one simulated scenario of the consolidation did with its potential victims.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsolidationPlan {
    /// Victims with at least one pod on a new node (upstream's pipelined victims).
    pub moved: Vec<usize>,
    /// Victims with a pod that found no node (left `Releasing`: the scenario is refused).
    pub lost: Vec<usize>,
    /// Every moved pod: (victim, pod set, pod index, its new node).
    pub moves: Vec<(usize, usize, usize, usize)>,
    /// The device share of every moved GPU-share pod: (victim, pod set, pod index, claim on
    /// its new node); a share moves also between the devices of one node.
    pub move_claims: Vec<(usize, usize, usize, crate::placement::devices::Claim)>,
    /// The pending job's tasks placed: (pod set, node).
    pub preemptor: Vec<(usize, usize)>,
    /// The potential victims of the scenario: (job, how many of its pods in eviction order).
    pub taken: Vec<(usize, usize)>,
}

/// KAI's consolidation for one pending job: allowed for a preemptible job only (the action's
/// `FilterNonPreemptible`) whose tasks' GPUs the cluster's free GPUs cover
/// (`IsEnoughGPUsAllocatableForJob`, `free_gpus`: idle plus releasing); the potential
/// victims are the preemptible running jobs of every queue but the job itself, no more than
/// [`MAX_CONSOLIDATION_PREEMPTEES`] + 1 of them (`buildPreemptibleFilterFunc`; unlike
/// reclaim and preempt no min-runtime protects them), in the victims' queue order
/// (`GetVictimsQueue`, as reclaim's), each taken piece by piece as reclaim takes it (an
/// elastic job above its minimum pod by pod, `GetTasksToEvict`); the search is the
/// `JobSolver`'s, and a scenario is a solution only when every pod it evicted was placed
/// again (`allPodsReallocated`). `scenario(tasks, victims)`: the plan of that simulation,
/// `victims` being (job, how many of its pods in eviction order); None when the job's first
/// `tasks` tasks do not fit. `other`: the queues' CPU and memory (and the running jobs'
/// pods'), for the victims' queue order. None: no consolidation.
pub fn consolidation_plan(
    state: &QueueState<'_>,
    other: &CpuMemoryState,
    preemptor: &Reclaimer<'_>,
    running: &[RunningJob],
    free_gpus: i64,
    scenario: impl FnMut(usize, &[(usize, usize)]) -> Option<ConsolidationPlan>,
) -> Option<ConsolidationPlan> {
    let want: i64 = preemptor.task_gpus.iter().sum();
    if want <= 0 || !preemptor.preemptible || free_gpus < want {
        return None;
    }
    let candidates: Vec<&RunningJob> = running.iter().filter(|j| j.preemptible).collect();
    let mut order = victim_order(state, other, &candidates);
    // The filter counts jobs, not pieces: the pieces of the first 17 jobs in victim order.
    let mut jobs: Vec<usize> = Vec::new();
    order.retain(|p| {
        if !jobs.contains(&p.job.key) {
            if jobs.len() > MAX_CONSOLIDATION_PREEMPTEES {
                return false;
            }
            jobs.push(p.job.key);
        }
        true
    });
    let mut scenario = scenario;
    solve_with(
        &order,
        preemptor.task_gpus,
        free_gpus,
        |tasks, victims| {
            let mut plan = scenario(tasks, victims)?;
            plan.taken = victims.to_vec();
            Some(plan)
        },
        |_, plan| plan.lost.is_empty(),
        // The victims recorded for the next task: the pods taken from the jobs that moved
        // (upstream records the pipelined victims' tasks).
        |plan| {
            plan.taken
                .iter()
                .copied()
                .filter(|(k, _)| plan.moved.contains(k))
                .collect()
        },
    )
    .filter(|plan| !plan.moved.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::KaiQueue;

    fn queue0() -> KaiQueue {
        KaiQueue {
            name: "queue0".into(),
            parent: None,
            gpu_quota: Some(2),
            gpu_over_quota_weight: 1,
            gpu_limit: None,
            priority: 100,
            preempt_min_runtime: None,
            reclaim_min_runtime: None,
            cpu: kueuesim_model::KaiQueueResource::UNLIMITED,
            memory: kueuesim_model::KaiQueueResource::UNLIMITED,
        }
    }

    /// A running 1-pod job of `gpus` GPUs on `node`, created at `created`.
    fn job(key: usize, gpus: i64, node: usize, created: i64, priority: i32) -> RunningJob {
        RunningJob {
            key,
            queue: 0,
            gpus,
            priority,
            preemptible: priority < 100,
            elastic: 1,
            created,
            nodes: vec![node],
            started: Some(0),
            pods: vec![super::super::reclaim::VictimPod {
                pod_set: 0,
                index: 0,
                node,
                gpus,
            }],
            pieces: Vec::new(),
            min_pods: 1,
        }
        .whole()
    }

    /// A toy cluster of nodes with `capacity` GPUs each: the victims leave, the tasks (all of
    /// `task` GPUs) take the fullest node they fit on, then each victim, older first, the
    /// fullest node it fits on (lower index on ties), as KAI's bin-packing does.
    fn toy<'a>(
        capacity: &[i64],
        running: &'a [RunningJob],
        task: i64,
    ) -> impl FnMut(usize, &[(usize, usize)]) -> Option<ConsolidationPlan> + 'a {
        let capacity = capacity.to_vec();
        move |tasks, victims| {
            let victims: Vec<usize> = victims.iter().map(|v| v.0).collect();
            let mut free = capacity.clone();
            for j in running.iter().filter(|j| !victims.contains(&j.key)) {
                free[j.nodes[0]] -= j.gpus;
            }
            let fullest = |free: &[i64], need: i64| {
                (0..free.len())
                    .filter(|&n| free[n] >= need)
                    .min_by_key(|&n| (free[n], n))
            };
            let mut plan = ConsolidationPlan::default();
            for _ in 0..tasks {
                let n = fullest(&free, task)?;
                free[n] -= task;
                plan.preemptor.push((0, n));
            }
            let mut back: Vec<&RunningJob> = running
                .iter()
                .filter(|j| victims.contains(&j.key))
                .collect();
            back.sort_by_key(|j| (j.created, j.key));
            for j in back {
                match fullest(&free, j.gpus) {
                    Some(n) => {
                        free[n] -= j.gpus;
                        if n != j.nodes[0] {
                            plan.moved.push(j.key);
                            plan.moves.push((j.key, 0, 0, n));
                        }
                    }
                    None => plan.lost.push(j.key),
                }
            }
            Some(plan)
        }
    }

    fn solve(
        capacity: &[i64],
        running: &[RunningJob],
        task_gpus: &[i64],
        preemptible: bool,
    ) -> Option<ConsolidationPlan> {
        let queues = [queue0()];
        let allocated = [running.iter().map(|j| j.gpus).sum::<i64>()];
        let total: i64 = capacity.iter().sum();
        let state = QueueState {
            queues: &queues,
            fair: &[total],
            allocated: &allocated,
            total,
            now: 0,
        };
        let preemptor = Reclaimer {
            queue: 0,
            task_gpus,
            preemptible,
        };
        let free = total - allocated[0];
        consolidation_plan(
            &state,
            &CpuMemoryState::default(),
            &preemptor,
            running,
            free,
            toy(capacity, running, task_gpus[0]),
        )
    }

    #[test]
    fn a_victim_that_finds_no_node_is_passed_over_for_one_that_does() {
        // consolidation_test "3 jobs are running on different GPUs, 1 job pending": node0
        // runs 3 GPUs, node1 runs 1 (older) and 2 (younger); a 2-GPU job. The younger job
        // alone finds no node again; with the older one too, only the older one moves.
        let running = [
            job(0, 3, 0, 0, 50),
            job(1, 1, 1, 1, 50),
            job(2, 2, 1, 2, 50),
        ];
        let plan = solve(&[4, 4], &running, &[2], true).expect("a consolidation");
        assert_eq!(plan.moved, [1]);
        assert_eq!(plan.moves, [(1, 0, 0, 0)]);
        assert_eq!(plan.preemptor, [(0, 1)]);
    }

    #[test]
    fn no_consolidation_for_a_non_preemptible_job_or_beyond_the_free_gpus() {
        let running = [job(0, 2, 0, 0, 50), job(1, 2, 1, 1, 50)];
        // "only first can be consolidated": a 3-GPU job moves job 1 to node0.
        assert_eq!(
            solve(&[4, 4], &running, &[3], true).map(|p| p.moved),
            Some(vec![1])
        );
        // A build job (non-preemptible) is left to reclaim and preempt.
        assert_eq!(solve(&[4, 4], &running, &[3], false), None);
        // 5 GPUs asked, 4 free (`IsEnoughGPUsAllocatableForJob`).
        assert_eq!(solve(&[4, 4], &running, &[5], true), None);
        // Non-preemptible running jobs are no victims ("2 build jobs … never consolidate").
        let builds = [job(0, 2, 0, 0, 100), job(1, 2, 1, 1, 100)];
        assert_eq!(solve(&[4, 4], &builds, &[3], true), None);
    }

    #[test]
    fn at_most_seventeen_potential_victims() {
        // 20 nodes of 2 GPUs, each running a 1-GPU job; a 2-GPU job. The victims are tried
        // youngest first, and the 17 youngest (keys 3..19) are the only candidates: a toy
        // where only the oldest jobs' nodes can take the pending job finds nothing.
        let running: Vec<RunningJob> = (0..20).map(|k| job(k, 1, k, k as i64, 50)).collect();
        let mut tried = Vec::new();
        let queues = [queue0()];
        let state = QueueState {
            queues: &queues,
            fair: &[40],
            allocated: &[20],
            total: 40,
            now: 0,
        };
        let preemptor = Reclaimer {
            queue: 0,
            task_gpus: &[2],
            preemptible: true,
        };
        let plan = consolidation_plan(
            &state,
            &CpuMemoryState::default(),
            &preemptor,
            &running,
            20,
            |_, victims| {
                tried.extend(victims.iter().map(|v| v.0));
                None
            },
        );
        assert_eq!(plan, None);
        tried.sort_unstable();
        tried.dedup();
        assert_eq!(tried, (3..20).collect::<Vec<_>>());
        assert_eq!(MAX_CONSOLIDATION_PREEMPTEES + 1, 17);
    }

    #[test]
    fn the_seventeen_potential_victims_are_jobs_not_pieces() {
        // As "at most seventeen", but the youngest job (19) runs 2 pods above its minimum of
        // 1, so the victims queue takes it in two pieces: still 17 jobs are candidates
        // (keys 3..19), not 17 pieces.
        let mut running: Vec<RunningJob> = (0..20).map(|k| job(k, 1, k, k as i64, 50)).collect();
        let pod = |index| super::super::reclaim::VictimPod {
            pod_set: 0,
            index,
            node: 19,
            gpus: 1,
        };
        running[19].pods = vec![pod(1), pod(0)];
        running[19].gpus = 2;
        running[19].elastic = 2;
        running[19].min_pods = 1;
        running[19].pieces = vec![
            super::super::reclaim::Piece { upto: 1, rank: 2 },
            super::super::reclaim::Piece { upto: 2, rank: 1 },
        ];
        let queues = [queue0()];
        let state = QueueState {
            queues: &queues,
            fair: &[40],
            allocated: &[21],
            total: 40,
            now: 0,
        };
        let preemptor = Reclaimer {
            queue: 0,
            task_gpus: &[2],
            preemptible: true,
        };
        let mut tried = Vec::new();
        let plan = consolidation_plan(
            &state,
            &CpuMemoryState::default(),
            &preemptor,
            &running,
            19,
            |_, victims| {
                tried.extend(victims.iter().map(|v| v.0));
                None
            },
        );
        assert_eq!(plan, None);
        tried.sort_unstable();
        tried.dedup();
        assert_eq!(tried, (3..20).collect::<Vec<_>>());
    }
}
