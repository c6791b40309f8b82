//! KAI's consolidation action for one pending job (`consolidation.attemptToConsolidatePreemptor`):
//! which running jobs it may move, in which order, and the search for a set of moves that
//! frees room for the job while every moved pod finds a new node (`allPodsReallocated`).

use super::reclaim::{QueueState, Reclaimer, RunningJob, solve_with, victim_order};

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
    /// The pending job's tasks placed: (pod set, node).
    pub preemptor: Vec<(usize, usize)>,
}

/// KAI's consolidation for one pending job: allowed for a preemptible job only (the action's
/// `FilterNonPreemptible`) whose tasks' GPUs the cluster's free GPUs cover
/// (`IsEnoughGPUsAllocatableForJob`, `free_gpus`: idle plus releasing); the potential
/// victims are the preemptible running jobs of every queue but the job itself, no more than
/// [`MAX_CONSOLIDATION_PREEMPTEES`] + 1 of them (`buildPreemptibleFilterFunc`; unlike
/// reclaim and preempt no min-runtime protects them), in the victims' queue order
/// (`GetVictimsQueue`, as reclaim's); the search is the `JobSolver`'s, and a scenario is a
/// solution only when every potential victim it evicted was placed again
/// (`allPodsReallocated`). `scenario(tasks, victims)`: the plan of that simulation, None when
/// the job's first `tasks` tasks do not fit. None: no consolidation.
pub fn consolidation_plan(
    state: &QueueState<'_>,
    preemptor: &Reclaimer<'_>,
    running: &[RunningJob],
    free_gpus: i64,
    scenario: impl FnMut(usize, &[usize]) -> Option<ConsolidationPlan>,
) -> Option<ConsolidationPlan> {
    let want: i64 = preemptor.task_gpus.iter().sum();
    if want <= 0 || !preemptor.preemptible || free_gpus < want {
        return None;
    }
    let candidates: Vec<&RunningJob> = running.iter().filter(|j| j.preemptible).collect();
    let mut order = victim_order(state, &candidates);
    order.truncate(MAX_CONSOLIDATION_PREEMPTEES + 1);
    solve_with(
        &order,
        preemptor.task_gpus,
        free_gpus,
        scenario,
        |_, plan| plan.lost.is_empty(),
        |plan| plan.moved.clone(),
    )
    .filter(|plan| !plan.moved.is_empty())
}
