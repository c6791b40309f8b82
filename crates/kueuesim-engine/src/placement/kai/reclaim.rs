//! KAI's fair share of GPUs per queue (the proportion plugin's `resource_division`; CPU and
//! memory divide alike, `resources`) and its reclaim of other queues' jobs for a job within
//! its fair share, and preempt within a queue.

use std::cmp::Ordering;

use super::queue_order::{QueueRank, cmp_queue_ranks};
use super::resources::{self, Amounts, CpuMemoryState, Resources};

/// KAI's fair share of GPUs per queue (`resource_division`): each queue first gets its
/// deserved quota (up to what it requests and its limit), then what is left goes out by
/// over-quota weight, highest queue priority first, in whole GPUs (a queue whose request
/// the slice covers gets its request, a fraction of a GPU included); a parent's share is
/// split among its children the same way. Quantities are in units of `unit` per GPU (the
/// simulation counts milli-GPUs, 1000, so that GPU shares count as their fractions; the
/// queues' quotas and limits are in the same units). `requests[q]`: GPUs allocated plus
/// pending in the queue's subtree.
pub fn fair_shares(
    queues: &[kueuesim_model::KaiQueue],
    total: i64,
    requests: &[i64],
    unit: i64,
) -> Vec<i64> {
    let quotas: Vec<kueuesim_model::KaiQueueResource> = queues
        .iter()
        .map(|q| kueuesim_model::KaiQueueResource {
            quota: q.gpu_quota,
            over_quota_weight: q.gpu_over_quota_weight,
            limit: q.gpu_limit,
        })
        .collect();
    super::resources::divide(queues, &quotas, total, requests, unit)
}

/// A running KAI job that reclaim may evict.
#[derive(Clone, Debug)]
pub struct RunningJob {
    /// The caller's id for it.
    pub key: usize,
    /// Its queue.
    pub queue: usize,
    /// GPUs it holds.
    pub gpus: i64,
    /// Its priority.
    pub priority: i32,
    /// Whether KAI may evict it (`IsPreemptibleJob`: its PodGroup's preemptibility, else
    /// priority below 100).
    pub preemptible: bool,
    /// The elastic plugin's job-order rank (`JobOrderFn`): 0 below its minimum (a subgroup
    /// below its minAvailable), 1 exactly at it, 2 above it. Among jobs of one priority, the
    /// job order puts lower ranks first, so victims are taken above-minimum first.
    pub elastic: u8,
    /// Creation time: younger jobs are evicted first.
    pub created: i64,
    /// The nodes its pods run on (ascending, distinct): upstream's by-node scenarios evict
    /// the potential victims of one node at a time.
    pub nodes: Vec<usize>,
    /// When it last started running (ms; `LastStartTimestamp`), for the min-runtimes.
    pub started: Option<i64>,
    /// Its running pods in upstream's eviction order (`GetTasksToEvict`: the task order
    /// reversed, the pods above their subgroup's minimum first).
    pub pods: Vec<VictimPod>,
    /// How the solver takes it, piece by piece (`GetTasksToEvict` per pop of the victims
    /// queue): each piece ends at `pods[..upto]`. An elastic job above its minimum gives one
    /// pod per piece, then the rest at once; any other job is one piece.
    pub pieces: Vec<Piece>,
    /// How many of its pods its minimum keeps (the sum of its subgroups' minAvailable): a
    /// victim's evicted pods beyond this many count one by one in `reclaimable` (the
    /// proportion plugin's `splitVictimTasks`: elastic tasks alone, core tasks together).
    pub min_pods: usize,
}

/// One running pod of a potential victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VictimPod {
    /// Its pod set.
    pub pod_set: usize,
    /// Its index in the pod set.
    pub index: usize,
    /// Its node.
    pub node: usize,
    /// Its GPUs.
    pub gpus: i64,
}

/// One piece of a victim job: what one pop of upstream's victims queue takes from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The job's pods taken once this piece is taken (`pods[..upto]`).
    pub upto: usize,
    /// The job's elastic rank before this piece is taken (`RunningJob::elastic` of what is
    /// left of it), for the victim order.
    pub rank: u8,
}

/// Victims of a scenario: (job key, how many of its pods, the first in eviction order).
pub type Victims = Vec<(usize, usize)>;

impl RunningJob {
    /// The job as one piece of all its pods (a job that is not elastic, or one the action
    /// takes whole).
    pub fn whole(mut self) -> Self {
        self.pieces = vec![Piece {
            upto: self.pods.len(),
            rank: self.elastic,
        }];
        self.min_pods = self.pods.len();
        self
    }

    /// GPUs of its first `count` pods; all of them: every GPU it holds (its GPU shares
    /// too, which are counted per device, not per pod).
    fn gpus_of(&self, count: usize) -> i64 {
        if self.all(count) {
            return self.gpus;
        }
        self.pods.iter().take(count).map(|p| p.gpus).sum()
    }

    /// The GPUs of its first `count` pods as the proportion plugin weighs them
    /// (`getVictimResources`): the pods beyond its minimum one by one, then the others
    /// together.
    fn victim_chunks(&self, count: usize) -> Vec<i64> {
        if count <= self.min_pods {
            return vec![self.gpus_of(count)];
        }
        let elastic = count - self.min_pods;
        let mut chunks: Vec<i64> = self.pods[..elastic].iter().map(|p| p.gpus).collect();
        chunks.push(self.gpus_of(count) - self.gpus_of(elastic));
        chunks
    }

    /// Whether all of its pods are taken once `count` are.
    pub fn all(&self, count: usize) -> bool {
        count >= self.pods.len()
    }
}

/// A piece of a job in the victim order.
#[derive(Clone, Copy, Debug)]
pub(super) struct PieceRef<'a> {
    /// The job.
    pub(super) job: &'a RunningJob,
    /// The piece's index in `job.pieces`.
    pub(super) piece: usize,
}

impl PieceRef<'_> {
    /// The first pod of the piece.
    fn from(&self) -> usize {
        match self.piece {
            0 => 0,
            p => self.job.pieces[p - 1].upto,
        }
    }

    /// The job's pods taken with the piece.
    fn upto(&self) -> usize {
        self.job.pieces[self.piece].upto
    }

    /// GPUs of the piece.
    fn gpus(&self) -> i64 {
        self.job.gpus_of(self.upto()) - self.job.gpus_of(self.from())
    }

    /// GPUs, CPU and memory of the piece (what the victims' queue order takes away from
    /// its queue's allocation).
    fn amounts(&self, other: &CpuMemoryState) -> Amounts {
        let [cpu, memory] = other.pods_amount(self.job.key, self.from(), self.upto());
        [self.gpus(), cpu, memory]
    }

    /// The job's elastic rank before the piece.
    fn rank(&self) -> u8 {
        self.job.pieces[self.piece].rank
    }

    /// The next piece of the same job, if any.
    fn next(&self) -> Option<Self> {
        (self.piece + 1 < self.job.pieces.len()).then_some(PieceRef {
            job: self.job,
            piece: self.piece + 1,
        })
    }
}

/// The job reclaim runs for.
pub struct Reclaimer<'a> {
    /// Its queue.
    pub queue: usize,
    /// GPUs of each task it allocates now, in task order (`GetTasksToAllocate`).
    pub task_gpus: &'a [i64],
    /// Whether it is preemptible itself (`IsPreemptibleJob`); a non-preemptible preemptor is
    /// bound by its queue's deserved quota.
    pub preemptible: bool,
}

/// The queues' state reclaim reads: the proportion plugin's view at the start of the job's
/// solution (`OnJobSolutionStart`).
pub struct QueueState<'a> {
    /// The KAI Queues.
    pub queues: &'a [kueuesim_model::KaiQueue],
    /// Fair share of every queue (parents too), from [`fair_shares`].
    pub fair: &'a [i64],
    /// GPUs allocated to each queue's own jobs (leaf queues hold the jobs).
    pub allocated: &'a [i64],
    /// The cluster's GPUs (an unlimited share counts against them).
    pub total: i64,
    /// The time of the cycle (ms), for the min-runtimes.
    pub now: i64,
}

impl QueueState<'_> {
    /// The queue and its ancestors, root first (`getHierarchyPath`).
    pub(super) fn path(&self, q: usize) -> Vec<usize> {
        let mut path = vec![q];
        let mut p = self.queues[q].parent;
        while let Some(x) = p {
            path.push(x);
            p = self.queues[x].parent;
        }
        path.reverse();
        path
    }
}

/// KAI's reclaim for one pending job (`reclaim.attemptToReclaimForSpecificJob`): allowed
/// while the job's queue stays within its fair share with it (`CanReclaimResources`); the
/// victims are the preemptible running jobs of other queues that `reclaimMinRuntime` does not
/// protect (a protected elastic job only above its minimum, [`unprotected_part`]), in victim
/// order ([`victim_order`]), and a solution must pass the proportion plugin's
/// `reclaimableFn` ([`reclaimable`]). The search is [`solve`]'s; the victims are (job, how
/// many of its pods in eviction order). None: no reclaim.
pub fn reclaim_victims(
    state: &QueueState<'_>,
    other: &CpuMemoryState,
    reclaimer: &Reclaimer<'_>,
    running: &[RunningJob],
    free_gpus: i64,
    scenario: impl FnMut(usize, &[(usize, usize)]) -> Option<Victims>,
) -> Option<Victims> {
    let queue = reclaimer.queue;
    let res = Resources::new(state, other);
    let want = request(reclaimer, other, reclaimer.task_gpus.len());
    if want.iter().all(|&x| x <= 0) || !resources::within_fair_share(&res, queue, &want) {
        return None;
    }
    // `getOrderedVictimsQueue`: other queues' preemptible running jobs (`ReclaimVictimFilter`:
    // the minruntime plugin's protection). A queue of unlimited deserved quota is reclaimed
    // from only above its `limit`: its allocatable share is the limit (`GetAllocatableShare`
    // returns MaxAllowed), and without one `reclaimable` never accepts it.
    let candidates: Vec<RunningJob> = running
        .iter()
        .filter(|j| j.queue != queue && j.preemptible)
        .filter_map(|j| unprotected_part(state, j, reclaim_min_runtime(state, queue, j.queue)))
        .collect();
    let candidates: Vec<&RunningJob> = candidates.iter().collect();
    let order = victim_order(state, other, &candidates);
    // The validator weighs the tasks of the scenario it checks: the solver's scenario is
    // simulated (with its task count) right before its victims are validated.
    let tasks_now = std::cell::Cell::new(0);
    let mut scenario = scenario;
    solve(
        &order,
        reclaimer.task_gpus,
        free_gpus,
        |tasks, victims| {
            tasks_now.set(tasks);
            scenario(tasks, victims)
        },
        |_, left| {
            let by_queue: Vec<(usize, Amounts)> = left
                .iter()
                .filter_map(|&(k, count)| {
                    candidates.iter().find(|j| j.key == k).map(|j| (j, count))
                })
                .flat_map(|(j, count)| {
                    victim_chunks(j, count, other)
                        .into_iter()
                        .map(move |amounts| (j.queue, amounts))
                })
                .collect();
            let need = request(reclaimer, other, tasks_now.get());
            resources::reclaimable(state, &res, queue, &need, &by_queue)
        },
    )
}

/// GPUs, CPU and memory of the first `tasks` tasks of the job reclaim or preempt runs for.
fn request(reclaimer: &Reclaimer<'_>, other: &CpuMemoryState, tasks: usize) -> Amounts {
    let [cpu, memory] = other.tasks_amount(tasks);
    [reclaimer.task_gpus.iter().take(tasks).sum(), cpu, memory]
}

/// [`RunningJob::victim_chunks`] with CPU and memory: the amounts of its first `count` pods
/// as the proportion plugin weighs them (`getVictimResources`).
fn victim_chunks(job: &RunningJob, count: usize, other: &CpuMemoryState) -> Vec<Amounts> {
    let gpus = job.victim_chunks(count);
    let bounds: Vec<(usize, usize)> = if count <= job.min_pods {
        vec![(0, count)]
    } else {
        let elastic = count - job.min_pods;
        (0..elastic)
            .map(|i| (i, i + 1))
            .chain(std::iter::once((elastic, count)))
            .collect()
    };
    gpus.into_iter()
        .zip(bounds)
        .map(|(g, (from, upto))| {
            let [cpu, memory] = other.pods_amount(job.key, from, upto);
            [g, cpu, memory]
        })
        .collect()
}

/// KAI's preempt for one pending job of `queue` at `priority`
/// (`preempt.attemptToPreemptForPreemptor`): a non-preemptible job (`preemptible` false)
/// whose tasks would take its queue's non-preemptible allocation over the deserved quota
/// does not preempt (`IsNonPreemptibleJobOverQueueQuota`); the victims are the preemptible
/// running jobs of the same queue at a lower priority that `preemptMinRuntime` does not
/// protect (`buildFilterFuncForPreempt`; a protected elastic job only above its minimum,
/// [`unprotected_part`]), lowest priority, then above its minimum (the elastic plugin),
/// then youngest first (the job order reversed), an elastic job's pieces put back in that
/// order as upstream pushes what is left of a victim back into its queue; every solution is
/// valid (the minruntime plugin's validator only refuses a protected elastic job below its
/// minimum, which [`unprotected_part`] leaves out). The search is [`solve`]'s. None: no
/// preemption.
#[allow(clippy::too_many_arguments)]
pub fn preempt_victims(
    state: &QueueState<'_>,
    other: &CpuMemoryState,
    preemptor: &Reclaimer<'_>,
    priority: i32,
    non_preemptible_allocated: i64,
    running: &[RunningJob],
    free_gpus: i64,
    scenario: impl FnMut(usize, &[(usize, usize)]) -> Option<Victims>,
) -> Option<Victims> {
    let queue = preemptor.queue;
    let want: i64 = preemptor.task_gpus.iter().sum();
    let want_other = other.tasks_amount(preemptor.task_gpus.len());
    if want <= 0 && want_other.iter().all(|&x| x <= 0) {
        return None;
    }
    if !preemptor.preemptible {
        let over_gpus = want > 0
            && state.queues[queue]
                .gpu_quota
                .is_some_and(|deserved| deserved < non_preemptible_allocated + want);
        if over_gpus || resources::non_preemptible_over_quota(other, queue, &want_other) {
            return None;
        }
    }
    let candidates: Vec<RunningJob> = running
        .iter()
        .filter(|j| j.queue == queue && j.preemptible && j.priority < priority)
        .filter_map(|j| unprotected_part(state, j, preempt_min_runtime(state, j.queue)))
        .collect();
    // The job order reversed, one piece at a time: after a piece, what is left of its job
    // goes back among the others with its new elastic rank.
    let key = |p: &PieceRef<'_>| {
        (
            p.job.priority,
            std::cmp::Reverse(p.rank()),
            std::cmp::Reverse(p.job.created),
            std::cmp::Reverse(p.job.key),
        )
    };
    let mut heads: Vec<PieceRef<'_>> = candidates
        .iter()
        .filter(|j| !j.pieces.is_empty())
        .map(|job| PieceRef { job, piece: 0 })
        .collect();
    let mut order = Vec::new();
    while let Some(i) = (0..heads.len()).min_by_key(|&i| key(&heads[i])) {
        let p = heads[i];
        order.push(p);
        match p.next() {
            Some(n) => heads[i] = n,
            None => {
                heads.remove(i);
            }
        }
    }
    solve(&order, preemptor.task_gpus, free_gpus, scenario, |_, _| {
        true
    })
}

/// A potential victim as the minruntime plugin lets it through: an unprotected job as it
/// is; a protected one only while it is elastic above its minimum, and then only its pieces
/// above the minimum (upstream's filters, `reclaimFilterFn` and `preemptFilterFn`, let a
/// protected elastic job through, and its scenario validator refuses only a solution taking
/// the job below its minAvailable). None: no victim.
fn unprotected_part(
    state: &QueueState<'_>,
    job: &RunningJob,
    min_runtime: i64,
) -> Option<RunningJob> {
    if !protected(state, job, min_runtime) {
        return Some(job.clone());
    }
    if job.pieces.len() < 2 {
        return None;
    }
    let mut part = job.clone();
    part.pieces.pop();
    Some(part)
}

/// When the first victim that a min-runtime keeps from a job of `queue` at `priority` now
/// stops being protected (ms): a preemptible running job of another queue under its
/// `reclaimMinRuntime`, or of the same queue at a lower priority under its
/// `preemptMinRuntime`. Upstream tries its actions again every session, so the job tries
/// again then; None when no min-runtime protects a candidate now.
pub fn protection_ends(
    state: &QueueState<'_>,
    queue: usize,
    priority: i32,
    running: &[RunningJob],
) -> Option<i64> {
    running
        .iter()
        .filter(|j| j.preemptible)
        .filter_map(|j| {
            let min_runtime = if j.queue != queue {
                reclaim_min_runtime(state, queue, j.queue)
            } else if j.priority < priority {
                preempt_min_runtime(state, j.queue)
            } else {
                return None;
            };
            protected(state, j, min_runtime).then(|| j.started.map(|s| s + min_runtime))?
        })
        .min()
}

/// Whether `job` started less than `min_runtime` ago (the minruntime plugin).
fn protected(state: &QueueState<'_>, job: &RunningJob, min_runtime: i64) -> bool {
    min_runtime > 0 && job.started.is_some_and(|s| state.now < s + min_runtime)
}

/// `preemptMinRuntime` for a victim of `queue`: the queue's, else the nearest ancestor's,
/// else 0 (`resolvePreemptMinRuntime`), in ms.
fn preempt_min_runtime(state: &QueueState<'_>, queue: usize) -> i64 {
    state
        .path(queue)
        .iter()
        .rev()
        .find_map(|&q| state.queues[q].preempt_min_runtime)
        .map_or(0, |d| d.millis())
}

/// `reclaimMinRuntime` for a reclaimer of `reclaimer` and a victim of `victim`: from the
/// child of their lowest common ancestor on the victim's side (the victim's top queue when
/// the two trees differ) up to the root, the first set, else 0
/// (`resolveReclaimMinRuntimeLCA`), in ms.
fn reclaim_min_runtime(state: &QueueState<'_>, reclaimer: usize, victim: usize) -> i64 {
    let (a, b) = (state.path(reclaimer), state.path(victim));
    let split = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()).min(b.len() - 1));
    b[..=split]
        .iter()
        .rev()
        .find_map(|&q| state.queues[q].reclaim_min_runtime)
        .map_or(0, |d| d.millis())
}

/// Upstream's `JobSolver` over potential victims in `order` (pieces of jobs, as the
/// victims queue pops them): the job's tasks (`task_gpus`, as `GetTasksToAllocate` gives
/// them) are taken one more at a time, and for each partial job it looks for victims: first
/// the victims recorded for the previous tasks alone, then, adding one potential victim
/// piece at a time (a piece of a job with recorded pods is skipped, as
/// `addNextPotentialVictims` jumps over recorded victims), for each node of the piece just
/// added the recorded victims plus every potential victim job with a taken pod on that node,
/// all its pieces taken so far (upstream's by-node scenario). `scenario(tasks, victims)`
/// simulates one: the victims' pods gone, the first `tasks` tasks placed, then the victims
/// put back where they fit; it returns the victims left out, None when the tasks do not fit.
/// A simulation that places the tasks is a solution when `valid(GPUs of the tasks, victims
/// left out)` (the action's scenario validator) accepts it; its victims are recorded for the
/// next task. The job's victims are those of its last task; None when a partial job has no
/// solution or no victim is left. A scenario without enough GPUs free once its victims are
/// gone is skipped (the idle-GPUs scenario filter).
pub(super) fn solve(
    order: &[PieceRef<'_>],
    task_gpus: &[i64],
    free_gpus: i64,
    scenario: impl FnMut(usize, &[(usize, usize)]) -> Option<Victims>,
    valid: impl Fn(i64, &Victims) -> bool,
) -> Option<Victims> {
    solve_with(order, task_gpus, free_gpus, scenario, valid, Victims::clone)
        .filter(|left| !left.is_empty())
}

/// [`solve`]'s search with any simulation result `V`: `recorded(v)` gives the victims a
/// solution records for the next task (reclaim and preempt: the victims left out; the
/// consolidation action: the victims its simulation moved). The last task's solution, None
/// when a partial job has none.
pub(super) fn solve_with<V>(
    order: &[PieceRef<'_>],
    task_gpus: &[i64],
    free_gpus: i64,
    mut scenario: impl FnMut(usize, &[(usize, usize)]) -> Option<V>,
    valid: impl Fn(i64, &V) -> bool,
    recorded_of: impl Fn(&V) -> Victims,
) -> Option<V> {
    let job_of = |k: usize| order.iter().find(|p| p.job.key == k).map(|p| p.job);
    let gpus_of = |victims: &[(usize, usize)]| -> i64 {
        victims
            .iter()
            .filter_map(|&(k, count)| Some(job_of(k)?.gpus_of(count)))
            .sum()
    };
    // Adds (job, count) to a victim set, keeping the larger count of a job already in it.
    let add = |set: &mut Victims, k: usize, count: usize| match set.iter_mut().find(|x| x.0 == k) {
        Some(x) => x.1 = x.1.max(count),
        None => set.push((k, count)),
    };
    let mut recorded: Victims = Vec::new();
    let mut last = None;
    for tasks in 1..=task_gpus.len() {
        let need: i64 = task_gpus[..tasks].iter().sum();
        let mut attempt = |victims: &[(usize, usize)]| -> Option<Option<V>> {
            if free_gpus + gpus_of(victims) < need {
                return None;
            }
            let result = scenario(tasks, victims)?;
            Some(valid(need, &result).then_some(result))
        };
        let mut solved = None;
        if !recorded.is_empty()
            && let Some(Some(v)) = attempt(&recorded)
        {
            solved = Some(v);
        }
        // The potential victims so far: (job, its pods taken).
        let mut potential: Victims = Vec::new();
        'pieces: for p in order {
            if solved.is_some() {
                break;
            }
            if recorded
                .iter()
                .any(|&(k, c)| k == p.job.key && c > p.from())
            {
                continue;
            }
            add(&mut potential, p.job.key, p.upto());
            let mut nodes: Vec<usize> = p.job.pods[p.from()..p.upto()]
                .iter()
                .map(|x| x.node)
                .collect();
            nodes.sort_unstable();
            nodes.dedup();
            for node in nodes {
                let mut set = recorded.clone();
                for &(k, count) in &potential {
                    let on_node =
                        job_of(k).is_some_and(|j| j.pods[..count].iter().any(|x| x.node == node));
                    if on_node {
                        add(&mut set, k, count);
                    }
                }
                match attempt(&set) {
                    Some(Some(v)) => {
                        solved = Some(v);
                        break 'pieces;
                    }
                    // A solution the validator refuses ends this scenario.
                    Some(None) => continue 'pieces,
                    None => {}
                }
            }
        }
        match solved {
            Some(v) => {
                recorded = recorded_of(&v);
                last = Some(v);
            }
            None => return None,
        }
    }
    last
}

/// The order potential victims are taken in (`JobsOrderByQueues` with `VictimQueue`): at
/// each level of the queue tree the queue the proportion plugin's queue order puts last
/// (`GetQueueOrderResult` reversed, over GPUs, CPU and memory, [`QueueRank`]: over its fair
/// share in every resource, then over its deserved quota in some resource, then the lower
/// priority, then a queue using a resource with no allocatable share, then the larger
/// dominant share once the victims already taken from it and its next one are gone, then the
/// larger dominant share, the larger allocatable share, the newer queue); within a queue the
/// job order of the default tiers reversed (the priority plugin: lowest priority; the
/// elastic plugin: above its minimum, then exactly at it, then below; then the youngest,
/// then the higher id first).
pub(super) fn victim_order<'a>(
    state: &QueueState<'_>,
    other: &CpuMemoryState,
    candidates: &[&'a RunningJob],
) -> Vec<PieceRef<'a>> {
    let nq = state.queues.len();
    let res = Resources::new(state, other);
    // Each leaf's jobs (their next pieces), next victim last; what is left of a job after a
    // piece goes back in its place by the job order (upstream's `PushJob` of the clone).
    let job_order = |p: &PieceRef<'_>| {
        (
            std::cmp::Reverse(p.job.priority),
            p.rank(),
            p.job.created,
            p.job.key,
        )
    };
    let mut jobs: Vec<Vec<PieceRef<'a>>> = vec![Vec::new(); nq];
    for &job in candidates.iter().filter(|j| !j.pieces.is_empty()) {
        jobs[job.queue].push(PieceRef { job, piece: 0 });
    }
    for list in &mut jobs {
        list.sort_by_key(job_order);
    }
    // GPUs, CPU and memory of the victims taken so far from each queue's subtree.
    let mut taken: Vec<Amounts> = vec![[0; 3]; nq];
    let has_jobs = |q: usize, jobs: &[Vec<PieceRef<'_>>]| -> bool {
        (0..nq).any(|l| !jobs[l].is_empty() && state.path(l).contains(&q))
    };
    let mut out = Vec::new();
    loop {
        let mut level: Vec<usize> = (0..nq)
            .filter(|&q| state.queues[q].parent.is_none() && has_jobs(q, &jobs))
            .collect();
        if level.is_empty() {
            break;
        }
        let leaf = loop {
            // The leaf each candidate would give its next victim from, for the share test.
            let best = |q: usize| -> usize {
                let mut cur = q;
                loop {
                    let kids: Vec<usize> = (0..nq)
                        .filter(|&c| state.queues[c].parent == Some(cur) && has_jobs(c, &jobs))
                        .collect();
                    if kids.is_empty() {
                        return cur;
                    }
                    cur = pick(state, other, &res, &taken, &jobs, &kids, &|k| k);
                }
            };
            let chosen = pick(state, other, &res, &taken, &jobs, &level, &best);
            let kids: Vec<usize> = (0..nq)
                .filter(|&c| state.queues[c].parent == Some(chosen) && has_jobs(c, &jobs))
                .collect();
            if kids.is_empty() {
                break chosen;
            }
            level = kids;
        };
        let Some(p) = jobs[leaf].pop() else { break };
        let amounts = p.amounts(other);
        for q in state.path(leaf) {
            for (t, a) in taken[q].iter_mut().zip(amounts) {
                *t += a;
            }
        }
        if let Some(next) = p.next() {
            let list = &mut jobs[leaf];
            let at = list.partition_point(|x| job_order(x) < job_order(&next));
            list.insert(at, next);
        }
        out.push(p);
    }
    out
}

/// The queue of `members` the reversed queue order takes first; `leaf_of` names the leaf
/// whose next victim counts for a member's dominant share.
fn pick(
    state: &QueueState<'_>,
    other: &CpuMemoryState,
    res: &Resources,
    taken: &[Amounts],
    jobs: &[Vec<PieceRef<'_>>],
    members: &[usize],
    leaf_of: &dyn Fn(usize) -> usize,
) -> usize {
    let rank = |q: usize| -> QueueRank {
        let next = jobs[leaf_of(q)].last().map_or([0; 3], |p| p.amounts(other));
        let victims: Amounts = std::array::from_fn(|r| taken[q][r] + next[r]);
        QueueRank::new(state.queues, res, q, &[0; 3], &victims)
    };
    let mut best = members[0];
    let mut best_rank = rank(best);
    for &q in &members[1..] {
        let r = rank(q);
        if cmp_queue_ranks(&r, &best_rank) == Ordering::Greater {
            best = q;
            best_rank = r;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::KaiQueue;

    fn q(name: &str, quota: Option<i64>, weight: i64, priority: i32) -> KaiQueue {
        KaiQueue {
            name: name.into(),
            parent: None,
            gpu_quota: quota,
            gpu_over_quota_weight: weight,
            gpu_limit: None,
            priority,
            preempt_min_runtime: None,
            reclaim_min_runtime: None,
            cpu: kueuesim_model::KaiQueueResource::UNLIMITED,
            memory: kueuesim_model::KaiQueueResource::UNLIMITED,
        }
    }

    /// No CPU or memory shares: GPUs alone decide, as before CPU and memory were divided.
    const NONE: CpuMemoryState = CpuMemoryState {
        shares: Vec::new(),
        tasks: Vec::new(),
        pods: Vec::new(),
        non_preemptible: [0, 0],
    };

    #[test]
    fn fair_share_deserved_first_then_weights_then_priority_bands() {
        // 10 GPUs: deserved 2 and 1; the 7 left by weight 3:1 (5.25 and 1.75, floored to 5
        // and 1); no queue asked less than its slice, so no second round
        // (`divideUpToFairShare`), and the unit left goes to the larger unmet fraction, b's .75
        // (`divideRemainingResource`).
        let qs = [q("a", Some(2), 3, 100), q("b", Some(1), 1, 100)];
        assert_eq!(fair_shares(&qs, 10, &[20, 20], 1), [7, 3]);
        // A queue asking for less gets exactly its request; the rest goes on.
        assert_eq!(fair_shares(&qs, 10, &[3, 20], 1), [3, 7]);
        // A higher-priority band takes the over-quota first.
        let qs = [q("hi", Some(0), 1, 200), q("lo", Some(0), 1, 100)];
        assert_eq!(fair_shares(&qs, 4, &[3, 4], 1), [3, 1]);
    }

    #[test]
    fn fair_share_in_milli_gpus_counts_fractions() {
        // Whole GPUs in milli-GPUs divide as in GPUs.
        let qs = [q("a", Some(2000), 3, 100), q("b", Some(1000), 1, 100)];
        assert_eq!(
            fair_shares(&qs, 10_000, &[20_000, 20_000], 1000),
            [7000, 3000]
        );
        // A queue asking 0.4 gets exactly that; the 0.6 left is below one GPU: floored to
        // nothing in the round, then given whole as the remainder (`divideRemainingResource`:
        // min(1, left)).
        let qs = [q("a", Some(1000), 1, 100), q("b", Some(1000), 1, 100)];
        assert_eq!(fair_shares(&qs, 2000, &[2000, 400], 1000), [1600, 400]);
        // reclaim_test.go "queue0 is under fair share, queue1 is over fair share": 4 GPUs,
        // deserved 1 and 2, weights 3 and 1, asking 2 and 2.5: the GPU left goes to queue0's
        // larger remainder (0.75 against 0.25).
        let qs = [q("q0", Some(1000), 3, 100), q("q1", Some(2000), 1, 100)];
        assert_eq!(fair_shares(&qs, 4000, &[2000, 2500], 1000), [2000, 2000]);
    }

    fn job(key: usize, queue: usize, priority: i32, created: i64, nodes: &[usize]) -> RunningJob {
        RunningJob {
            key,
            queue,
            gpus: nodes.len() as i64,
            priority,
            preemptible: priority < 100,
            elastic: 1,
            created,
            nodes: nodes.to_vec(),
            started: Some(0),
            pods: nodes
                .iter()
                .enumerate()
                .map(|(index, &node)| VictimPod {
                    pod_set: 0,
                    index,
                    node,
                    gpus: 1,
                })
                .collect(),
            pieces: Vec::new(),
            min_pods: nodes.len(),
        }
        .whole()
    }

    /// A toy cluster of 1-GPU nodes for the solver: the victims' nodes are freed, the
    /// tasks take free nodes in order, and a victim goes back when all its nodes are free.
    fn toy(
        nodes: usize,
        running: &[RunningJob],
    ) -> impl FnMut(usize, &[(usize, usize)]) -> Option<Victims> + '_ {
        move |tasks, victims| {
            let mut used = vec![false; nodes];
            for j in running {
                for &n in &j.nodes {
                    used[n] = true;
                }
            }
            for j in running
                .iter()
                .filter(|j| victims.iter().any(|v| v.0 == j.key))
            {
                for &n in &j.nodes {
                    used[n] = false;
                }
            }
            let free: Vec<usize> = (0..nodes).filter(|&n| !used[n]).collect();
            if free.len() < tasks {
                return None;
            }
            for &n in &free[..tasks] {
                used[n] = true;
            }
            let mut left = Vec::new();
            let mut back: Vec<&RunningJob> = running
                .iter()
                .filter(|j| victims.iter().any(|v| v.0 == j.key))
                .collect();
            back.sort_by_key(|j| (std::cmp::Reverse(j.priority), j.created, j.key));
            for j in back {
                if j.nodes.iter().all(|&n| !used[n]) {
                    for &n in &j.nodes {
                        used[n] = true;
                    }
                } else {
                    left.push((j.key, j.pods.len()));
                }
            }
            Some(left)
        }
    }

    #[test]
    fn reclaim_keeps_only_the_victims_that_do_not_fit_back() {
        // reclaim_test "... reclaim for job with multiple tasks from job with multiple
        // tasks": queue0 (deserved 1, weight 0) runs a 3-pod job on nodes 0-2 and a younger
        // 1-pod job on node 3; queue1 (deserved 2, weight 1) wants 3 tasks of 1 GPU. The
        // first task is solved by the younger job alone, the second needs the gang; with the
        // preemptor placed first on nodes 0-2, the younger job goes back on node 3.
        let qs = [q("queue0", Some(1), 0, 100), q("queue1", Some(2), 1, 100)];
        let fair = fair_shares(&qs, 4, &[4, 3], 1);
        assert_eq!(fair, [1, 3]);
        let running = [job(0, 0, 50, 0, &[0, 1, 2]), job(1, 0, 50, 60, &[3])];
        let state = QueueState {
            queues: &qs,
            fair: &fair,
            allocated: &[4, 0],
            total: 4,
            now: 120,
        };
        let reclaimer = Reclaimer {
            queue: 1,
            task_gpus: &[1, 1, 1],
            preemptible: false,
        };
        let victims = reclaim_victims(&state, &NONE, &reclaimer, &running, 0, toy(4, &running));
        assert_eq!(victims, Some(vec![(0, 3)]));
    }

    #[test]
    fn reclaim_respects_the_reclaim_min_runtime_of_the_victims_queue() {
        let mut qs = [q("queue0", Some(1), 0, 100), q("queue1", Some(2), 1, 100)];
        qs[0].reclaim_min_runtime = Some(kueuesim_model::SimDuration::from_secs(600));
        let fair = fair_shares(&qs, 4, &[4, 3], 1);
        let running = [job(0, 0, 50, 0, &[0, 1, 2]), job(1, 0, 50, 60, &[3])];
        let reclaimer = Reclaimer {
            queue: 1,
            task_gpus: &[1, 1, 1],
            preemptible: false,
        };
        // Both started at 0: protected until 10m.
        let state = QueueState {
            queues: &qs,
            fair: &fair,
            allocated: &[4, 0],
            total: 4,
            now: 120_000,
        };
        assert_eq!(
            reclaim_victims(&state, &NONE, &reclaimer, &running, 0, toy(4, &running)),
            None
        );
        let state = QueueState {
            now: 600_000,
            ..state
        };
        assert_eq!(
            reclaim_victims(&state, &NONE, &reclaimer, &running, 0, toy(4, &running)),
            Some(vec![(0, 3)])
        );
    }

    #[test]
    fn preempt_takes_lower_priorities_of_the_same_queue_only() {
        let qs = [q("queue0", Some(2), 1, 100), q("queue1", Some(2), 1, 100)];
        let fair = [2, 2];
        let state = QueueState {
            queues: &qs,
            fair: &fair,
            allocated: &[2, 0],
            total: 2,
            now: 0,
        };
        let one = Reclaimer {
            queue: 0,
            task_gpus: &[1],
            preemptible: false,
        };
        // preempt_test "1 train job running, 1 build job pending for the same queue - preempt".
        let running = [job(0, 0, 50, 0, &[0]), job(1, 0, 75, 10, &[1])];
        assert_eq!(
            preempt_victims(&state, &NONE, &one, 100, 0, &running, 0, toy(2, &running)),
            Some(vec![(0, 1)]),
            "the train job (50) before the younger interactive one (75)"
        );
        // "1 train job running, 1 train job pending for the same queue - don't preempt".
        let train = Reclaimer {
            queue: 0,
            task_gpus: &[1],
            preemptible: true,
        };
        assert_eq!(
            preempt_victims(&state, &NONE, &train, 50, 0, &running, 0, toy(2, &running)),
            None
        );
        // "1 train job running, 1 build job pending for the different queue - don't preempt".
        let other = Reclaimer {
            queue: 1,
            task_gpus: &[1],
            preemptible: false,
        };
        assert_eq!(
            preempt_victims(&state, &NONE, &other, 100, 0, &running, 0, toy(2, &running)),
            None
        );
        // A build job whose queue's non-preemptible GPUs would pass the deserved 2.
        assert_eq!(
            preempt_victims(&state, &NONE, &one, 100, 2, &running, 0, toy(2, &running)),
            None
        );
    }

    #[test]
    fn reclaim_test_cases_without_a_victim_or_with_one_preemptible() {
        let qs = [q("queue0", Some(1), 1, 100), q("queue1", Some(1), 1, 100)];
        let one = Reclaimer {
            queue: 1,
            task_gpus: &[1],
            preemptible: false,
        };
        // "1 job from queue0 and 1 job from queue1 running on node0 - don't reclaim": both at
        // their fair share of 1, queue1 would go to 2.
        let fair = fair_shares(&qs, 2, &[2, 2], 1);
        assert_eq!(fair, [1, 1]);
        let running = [job(0, 0, 50, 0, &[0]), job(1, 1, 50, 1, &[1])];
        let state = QueueState {
            queues: &qs,
            fair: &fair,
            allocated: &[1, 1],
            total: 2,
            now: 0,
        };
        assert_eq!(
            reclaim_victims(&state, &NONE, &one, &running, 0, toy(2, &running)),
            None
        );
        // "2 jobs from queue0 running on node0 (1 train, 1 build) - 2 pending jobs from
        // queue1 - reclaim train": the build job (priority 100) is no victim, though younger.
        let fair = fair_shares(&qs, 2, &[2, 2], 1);
        let running = [job(0, 0, 50, 0, &[0]), job(1, 0, 100, 1, &[1])];
        let state = QueueState {
            queues: &qs,
            fair: &fair,
            allocated: &[2, 0],
            total: 2,
            now: 0,
        };
        assert_eq!(
            reclaim_victims(&state, &NONE, &one, &running, 0, toy(2, &running)),
            Some(vec![(0, 1)])
        );
        // "unlimited GPU quota, should not reclaim": queue0 deserves -1 (its inference job,
        // priority 125, is not preemptible either).
        let qs = [q("queue0", None, 0, 100), q("queue1", Some(2), 0, 100)];
        let fair = fair_shares(&qs, 4, &[4, 2], 1);
        let running = [job(0, 0, 125, 0, &[0, 1, 2, 3])];
        let two = Reclaimer {
            queue: 1,
            task_gpus: &[1, 1],
            preemptible: false,
        };
        let state = QueueState {
            queues: &qs,
            fair: &fair,
            allocated: &[4, 0],
            total: 4,
            now: 0,
        };
        assert_eq!(
            reclaim_victims(&state, &NONE, &two, &running, 0, toy(4, &running)),
            None
        );
    }
    /// An elastic job of one 1-GPU pod per node of `nodes`, keeping `min` pods: one piece
    /// per pod above the minimum (the last pod first), then the rest.
    fn elastic(key: usize, queue: usize, nodes: &[usize], min: usize) -> RunningJob {
        let mut j = job(key, queue, 50, 0, nodes);
        j.pods.reverse();
        let n = nodes.len();
        j.pieces = (1..=n - min)
            .map(|upto| Piece { upto, rank: 2 })
            .chain(std::iter::once(Piece {
                upto: n,
                rank: if min == n { 1 } else { 2 },
            }))
            .collect();
        j.pieces[n - min].rank = 1;
        j.min_pods = min;
        j.elastic = 2;
        j
    }

    /// A toy cluster of 1-GPU nodes for elastic victims: a victim's first `count` pods
    /// leave their nodes, the tasks take free nodes in order, and every victim stays out
    /// (the nodes are full once the tasks are placed in these cases).
    fn toy_pods(
        nodes: usize,
        running: &[RunningJob],
    ) -> impl FnMut(usize, &[(usize, usize)]) -> Option<Victims> + '_ {
        move |tasks, victims| {
            let mut used = vec![false; nodes];
            for j in running {
                for p in &j.pods {
                    used[p.node] = true;
                }
            }
            for &(k, count) in victims {
                let j = running.iter().find(|j| j.key == k)?;
                for p in &j.pods[..count] {
                    used[p.node] = false;
                }
            }
            let free = used.iter().filter(|u| !**u).count();
            (free >= tasks).then(|| victims.to_vec())
        }
    }

    #[test]
    fn an_elastic_victim_gives_pods_above_its_minimum_one_at_a_time() {
        // reclaim_elastic_test "Reclaim several tasks from elastic job": queue0 (deserved 1,
        // weight 1) runs a 4-pod job of minimum 1; queue1 (deserved 1, weight 1) wants one
        // task of 2 GPUs: two pods go, the job keeps two.
        let qs = [q("queue0", Some(1), 1, 100), q("queue1", Some(1), 1, 100)];
        let fair = fair_shares(&qs, 4, &[4, 2], 1);
        assert_eq!(fair, [2, 2]);
        let running = [elastic(0, 0, &[0, 1, 2, 3], 1)];
        let state = QueueState {
            queues: &qs,
            fair: &fair,
            allocated: &[4, 0],
            total: 4,
            now: 0,
        };
        let two = Reclaimer {
            queue: 1,
            task_gpus: &[2],
            preemptible: false,
        };
        assert_eq!(
            reclaim_victims(&state, &NONE, &two, &running, 0, toy_pods(4, &running)),
            Some(vec![(0, 2)])
        );
        // "Don't reclaim elastic job which is in quota": with a minimum of 3 and queue0
        // deserving 3, the pod above the minimum is too little and the minimum's pods would
        // take queue0 below its deserved quota (weighed one by one above the minimum, then
        // together).
        let qs = [q("queue0", Some(3), 1, 100), q("queue1", Some(1), 1, 100)];
        let running = [elastic(0, 0, &[0, 1, 2, 3], 3)];
        let state = QueueState {
            queues: &qs,
            fair: &[3, 1],
            ..state
        };
        assert_eq!(
            reclaim_victims(&state, &NONE, &two, &running, 0, toy_pods(4, &running)),
            None
        );
    }

    #[test]
    fn a_protected_elastic_victim_gives_only_pods_above_its_minimum() {
        let mut qs = [q("queue0", Some(4), 1, 100)];
        qs[0].preempt_min_runtime = Some(kueuesim_model::SimDuration::from_secs(600));
        let fair = [4];
        let state = QueueState {
            queues: &qs,
            fair: &fair,
            allocated: &[4],
            total: 4,
            now: 60_000,
        };
        let want = |gpus: &'static [i64]| Reclaimer {
            queue: 0,
            task_gpus: gpus,
            preemptible: false,
        };
        // Minimum 2: two pods above it may go though the job started 1m ago.
        let running = [elastic(0, 0, &[0, 1, 2, 3], 2)];
        assert_eq!(
            preempt_victims(
                &state,
                &NONE,
                &want(&[2]),
                100,
                0,
                &running,
                0,
                toy_pods(4, &running)
            ),
            Some(vec![(0, 2)])
        );
        // Three would take it below its minimum: nothing while it is protected.
        assert_eq!(
            preempt_victims(
                &state,
                &NONE,
                &want(&[3]),
                100,
                0,
                &running,
                0,
                toy_pods(4, &running)
            ),
            None
        );
        // Unprotected, the whole job goes.
        let state = QueueState {
            now: 600_000,
            ..state
        };
        assert_eq!(
            preempt_victims(
                &state,
                &NONE,
                &want(&[3]),
                100,
                0,
                &running,
                0,
                toy_pods(4, &running)
            ),
            Some(vec![(0, 4)])
        );
    }
}
