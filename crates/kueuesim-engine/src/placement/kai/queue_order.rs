//! The order in which KAI's session actions take pending jobs (`JobsOrderByQueues` without
//! `VictimQueue`, `pkg/scheduler/actions/utils/job_order_by_queue.go`): at each level of the
//! queue tree the queue the proportion plugin's queue order puts first (`GetQueueOrderResult`,
//! judged with the best pending job of the queue's subtree, over GPUs, CPU and memory), down
//! to a leaf, then that leaf's next job by the job order; the queues' allocations follow what
//! each job gets. The queue order's comparison ([`QueueRank`]) serves the victims' order too.

use std::cmp::{Ordering, Reverse};

use kueuesim_model::KaiQueue;

use super::reclaim::QueueState;
use super::resources::{Amounts, CpuMemory, CpuMemoryState, Resources};

/// A pending job in the session's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingJob {
    /// The caller's id for it.
    pub key: usize,
    /// Its (leaf) queue.
    pub queue: usize,
    /// Milli-GPUs of the tasks it allocates now (`GetTasksToAllocateInitResource`).
    pub gpus: i64,
    /// CPU (millicores) and memory (bytes) of the same tasks.
    pub cpu_memory: CpuMemory,
    /// Its priority (the priority plugin's `JobOrderFn`).
    pub priority: i32,
    /// The elastic plugin's rank (`RunningJob::elastic`): a job below its minimum first.
    pub elastic: u8,
    /// Its creation time (ms): older first, then the lower key (upstream's UID).
    pub created: i64,
}

impl PendingJob {
    /// Its place in the job order of its queue (the default tiers' `JobOrderFn`).
    fn order(&self) -> (Reverse<i32>, u8, i64, usize) {
        (Reverse(self.priority), self.elastic, self.created, self.key)
    }

    /// GPUs, CPU and memory of the tasks it allocates now.
    fn amounts(&self) -> Amounts {
        [self.gpus, self.cpu_memory[0], self.cpu_memory[1]]
    }
}

/// The pending jobs of one action of a session, queue by queue.
pub struct JobsOrder<'a> {
    /// The KAI Queues.
    queues: &'a [KaiQueue],
    /// Every resource's quotas, fair shares and subtree allocations (GPUs, then CPU and
    /// memory when they take part), the allocations kept up to date by [`Self::account`].
    res: Resources,
    /// Each leaf queue's jobs, the next one last.
    jobs: Vec<Vec<PendingJob>>,
}

impl<'a> JobsOrder<'a> {
    /// The order of `jobs` over the queues of `state` (GPUs) and `other` (CPU and memory)
    /// as the session's action opens.
    pub fn new(state: &QueueState<'a>, other: &CpuMemoryState, jobs: &[PendingJob]) -> Self {
        let nq = state.queues.len();
        let mut by_queue: Vec<Vec<PendingJob>> = vec![Vec::new(); nq];
        for &j in jobs {
            if let Some(list) = by_queue.get_mut(j.queue) {
                list.push(j);
            }
        }
        for list in &mut by_queue {
            list.sort_by_key(|j| Reverse(j.order()));
        }
        JobsOrder {
            queues: state.queues,
            res: Resources::new(state, other),
            jobs: by_queue,
        }
    }

    /// What a job of `queue` got (milli-GPUs, millicores, bytes): its queue's shares move
    /// (the proportion plugin's allocate and pipeline event handlers), before the next pick.
    pub fn account(&mut self, queue: usize, got: &Amounts) {
        if queue < self.queues.len() {
            self.res.add(self.queues, queue, got);
        }
    }

    /// Puts `job` back among its queue's pending jobs by the job order, as it is now (its
    /// elastic rank and next tasks after a pass of KAI's allocate: `PushJob`).
    pub fn push(&mut self, job: PendingJob) {
        if let Some(list) = self.jobs.get_mut(job.queue) {
            let at = list.partition_point(|j| j.order() > job.order());
            list.insert(at, job);
        }
    }

    /// Takes the next job: from the roots down, the queue the queue order puts first among
    /// those with pending jobs in their subtree, then its leaf's next job (`PopNextJob`).
    pub fn pop(&mut self) -> Option<PendingJob> {
        let nq = self.queues.len();
        let has_jobs =
            |q: usize| (0..nq).any(|l| !self.jobs[l].is_empty() && in_subtree(self.queues, l, q));
        let children = |q: Option<usize>| -> Vec<usize> {
            (0..nq)
                .filter(|&c| self.queues[c].parent == q && has_jobs(c))
                .collect()
        };
        // The leaf whose next job stands for queue `q` in a comparison (`getBestJobFromNode`).
        let best_leaf = |q: usize| -> usize {
            let mut cur = q;
            loop {
                let kids = children(Some(cur));
                if kids.is_empty() {
                    return cur;
                }
                cur = self.first(&kids, &|k| k);
            }
        };
        let mut level = children(None);
        if level.is_empty() {
            return None;
        }
        let leaf = loop {
            let chosen = self.first(&level, &best_leaf);
            let kids = children(Some(chosen));
            if kids.is_empty() {
                break chosen;
            }
            level = kids;
        };
        self.jobs[leaf].pop()
    }

    /// The queue of `members` the queue order puts first; `leaf_of` names the leaf whose
    /// next job is a member's best pending job.
    fn first(&self, members: &[usize], leaf_of: &dyn Fn(usize) -> usize) -> usize {
        let rank = |q: usize| -> QueueRank {
            let job = self.jobs[leaf_of(q)]
                .last()
                .map_or([0; 3], PendingJob::amounts);
            QueueRank::new(self.queues, &self.res, q, &job, &[0; 3])
        };
        let mut best = members[0];
        let mut best_rank = rank(best);
        for &q in &members[1..] {
            let r = rank(q);
            if cmp_queue_ranks(&r, &best_rank) == Ordering::Less {
                best = q;
                best_rank = r;
            }
        }
        best
    }
}

/// Whether queue `l` is `q` or one of its descendants.
fn in_subtree(queues: &[KaiQueue], l: usize, q: usize) -> bool {
    let mut cur = Some(l);
    while let Some(x) = cur {
        if x == q {
            return true;
        }
        cur = queues[x].parent;
    }
    false
}

/// Per resource (GPU, CPU, memory), what turns our amounts into upstream's units for the
/// zero-allocatable penalty of the dominant share: GPUs count in milli-GPUs here and in
/// GPUs upstream; CPU (millicores) and memory (bytes) are upstream's units.
const UPSTREAM_UNIT: [f64; 3] = [1000.0, 1.0, 1.0];

/// `noFairShareDrfMultiplier`: a resource with no allocatable share weighs its allocation
/// this many times in the dominant share.
const NO_FAIR_SHARE_DRF_MULTIPLIER: f64 = 1000.0;

/// A queue's figures in the proportion plugin's queue order (`GetQueueOrderResult`), one
/// per test in the order they are tried, over every resource taking part (GPUs, and CPU
/// and memory when the view has them).
#[derive(Clone, Debug)]
pub(super) struct QueueRank {
    /// `prioritizeUnderUtilized`: its allocation above its fair share in every resource
    /// (`FairShare.Less(Allocated)`); such a queue comes last.
    over_fair: bool,
    /// `prioritizeUnderQuotaWithJob`: with its job, above its deserved quota in some
    /// resource (not `LessEqual` in all; an unlimited quota keeps every job within it).
    over_deserved: bool,
    /// `prioritizePrioritized`: the higher queue priority first.
    priority: i32,
    /// `penalizeZeroShareWithJob`: with its job, using a resource of which it has no
    /// allocatable share; such a queue comes last.
    zero_share: bool,
    /// `prioritizeSmallerResourceShare`: its dominant share with its job added (or its
    /// victims taken away).
    share_with: f64,
    /// `prioritizeSmallerResourceShareWithoutTask`: its dominant share as it is.
    share_without: f64,
    /// `prioritizeBasedOnAllocatableShare`: its allocatable share per resource (None:
    /// unlimited); the queue smaller in one resource and not larger in any first.
    allocatable: Vec<Option<i64>>,
    /// `prioritizeBasedOnCreationTime`: its position in the input (the queue created first).
    position: usize,
}

impl QueueRank {
    /// Queue `q` as `res` sees it, with `job` (its best pending job's tasks; none in the
    /// victims' order) added and `victims` (in the victims' order, those taken from it and
    /// its next one) taken from its allocation for the dominant share.
    pub(super) fn new(
        queues: &[KaiQueue],
        res: &Resources,
        q: usize,
        job: &Amounts,
        victims: &Amounts,
    ) -> Self {
        let n = res.len();
        let alloc = |r: usize| res.allocated(r, q);
        QueueRank {
            over_fair: (0..n).all(|r| res.fair(r, q) < alloc(r)),
            over_deserved: (0..n)
                .any(|r| res.deserved(r, q).is_some_and(|d| alloc(r) + job[r] > d)),
            priority: queues[q].priority,
            zero_share: (0..n).any(|r| res.allocatable(r, q) == Some(0) && alloc(r) + job[r] > 0),
            share_with: dominant_share(res, q, |r| alloc(r) + job[r] - victims[r]),
            share_without: dominant_share(res, q, alloc),
            allocatable: (0..n).map(|r| res.allocatable(r, q)).collect(),
            position: q,
        }
    }
}

/// `GetDominantResourceShare`: the largest of queue `q`'s shares `amount(r)` ÷ its
/// allocatable share of resource `r` (the cluster's amount when unlimited; a zero
/// allocatable share weighs the amount [`NO_FAIR_SHARE_DRF_MULTIPLIER`] times), at least 0.
fn dominant_share(res: &Resources, q: usize, amount: impl Fn(usize) -> i64) -> f64 {
    (0..res.len()).fold(0.0, |dominant: f64, r| {
        let allocatable = res.allocatable(r, q).unwrap_or_else(|| res.total(r));
        let a = amount(r) as f64;
        let share = if allocatable == 0 {
            a / UPSTREAM_UNIT[r] * NO_FAIR_SHARE_DRF_MULTIPLIER
        } else {
            a / allocatable as f64
        };
        dominant.max(share)
    })
}

/// Whether allocatable shares `a` are at most `b` in every resource (`LessEqual`, an
/// unlimited share above any other).
fn allocatable_within(a: &[Option<i64>], b: &[Option<i64>]) -> bool {
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(x), Some(y)) => x <= y,
    })
}

/// Compares two queues by the proportion plugin's queue order (`GetQueueOrderResult`):
/// Less puts `a` first. The allocatable shares are ordered only when one is within the
/// other and smaller in some resource; the input order settles every tie.
pub(super) fn cmp_queue_ranks(a: &QueueRank, b: &QueueRank) -> Ordering {
    let by_allocatable = || {
        let (ab, ba) = (
            allocatable_within(&a.allocatable, &b.allocatable),
            allocatable_within(&b.allocatable, &a.allocatable),
        );
        match (ab, ba) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => Ordering::Equal,
        }
    };
    a.over_fair
        .cmp(&b.over_fair)
        .then(a.over_deserved.cmp(&b.over_deserved))
        .then(b.priority.cmp(&a.priority))
        .then(a.zero_share.cmp(&b.zero_share))
        .then(a.share_with.total_cmp(&b.share_with))
        .then(a.share_without.total_cmp(&b.share_without))
        .then_with(by_allocatable)
        .then(a.position.cmp(&b.position))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::KaiQueue;

    fn q(name: &str, quota: i64) -> KaiQueue {
        KaiQueue {
            name: name.into(),
            parent: None,
            gpu_quota: Some(quota * 1000),
            gpu_over_quota_weight: 1,
            gpu_limit: None,
            priority: 0,
            preempt_min_runtime: None,
            reclaim_min_runtime: None,
            cpu: kueuesim_model::KaiQueueResource::UNLIMITED,
            memory: kueuesim_model::KaiQueueResource::UNLIMITED,
        }
    }

    fn job(key: usize, queue: usize) -> PendingJob {
        PendingJob {
            key,
            queue,
            gpus: 1000,
            cpu_memory: [0, 0],
            priority: 50,
            elastic: 0,
            created: 0,
        }
    }

    /// Upstream's "6 pending train jobs - allocate the 1st 2 of each queue (verify the share
    /// is being updated during the allocation)": the queues take turns as their shares grow.
    #[test]
    fn queues_take_turns_as_their_shares_grow() {
        let queues = [q("queue0", 1), q("queue1", 1)];
        let fair = [2000, 2000];
        let allocated = [0, 0];
        let state = QueueState {
            queues: &queues,
            fair: &fair,
            allocated: &allocated,
            total: 4000,
            now: 0,
        };
        let jobs: Vec<PendingJob> = (0..6).map(|k| job(k, k / 3)).collect();
        let mut order = JobsOrder::new(&state, &CpuMemoryState::default(), &jobs);
        let mut got = Vec::new();
        while let Some(j) = order.pop() {
            order.account(j.queue, &j.amounts());
            got.push(j.key);
        }
        assert_eq!(got, vec![0, 3, 1, 4, 2, 5]);
    }

    /// With a hierarchy, the departments are ordered first (each judged by the next job of
    /// its subtree), then the queues inside the one chosen: a leaf within its own share
    /// waits while its department is over its fair share.
    #[test]
    fn departments_are_ordered_before_their_queues() {
        let mut queues = vec![q("d1", 2), q("d2", 2), q("a", 1), q("b", 1)];
        queues[2].parent = Some(0);
        queues[3].parent = Some(1);
        // d1's other leaf (not listed with jobs) holds 3 GPUs: d1 is over its fair share.
        let mut other = q("c", 0);
        other.parent = Some(0);
        queues.push(other);
        let fair = [2000, 2000, 1000, 1000, 0];
        let allocated = [0, 0, 0, 1000, 3000];
        let state = QueueState {
            queues: &queues,
            fair: &fair,
            allocated: &allocated,
            total: 4000,
            now: 0,
        };
        let mut order = JobsOrder::new(&state, &CpuMemoryState::default(), &[job(0, 2), job(1, 3)]);
        assert_eq!(order.pop().map(|j| j.key), Some(1));
        assert_eq!(order.pop().map(|j| j.key), Some(0));
    }

    /// Upstream's "Allocate 2 elastic jobs - both partial allocate" as the session orders
    /// it: a job pushed back after a pass goes behind the other job when the elastic rank
    /// it now has (at its minimum, then above it) comes after the other's.
    #[test]
    fn a_job_pushed_back_goes_by_its_new_elastic_rank() {
        let queues = [q("queue0", 5)];
        let fair = [5000];
        let allocated = [0];
        let state = QueueState {
            queues: &queues,
            fair: &fair,
            allocated: &allocated,
            total: 5000,
            now: 0,
        };
        let mut order = JobsOrder::new(&state, &CpuMemoryState::default(), &[job(0, 0), job(1, 0)]);
        // Each job has 4 tasks of minMember 1 (rank 0 below it, 1 at it, 2 above it); the
        // node's 5 GPUs take 5 passes of one task.
        let mut bound = [0u8; 2];
        let mut got = Vec::new();
        while got.len() < 5
            && let Some(mut j) = order.pop()
        {
            got.push(j.key);
            bound[j.key] += 1;
            j.elastic = bound[j.key].min(2);
            order.push(j);
        }
        assert_eq!(got, vec![0, 1, 0, 1, 0]);
    }

    /// A queue over its fair share comes after one within it, whatever the input order.
    #[test]
    fn a_queue_over_its_fair_share_comes_last() {
        let queues = [q("queue0", 2), q("queue1", 2)];
        let fair = [2000, 2000];
        let allocated = [3000, 0];
        let state = QueueState {
            queues: &queues,
            fair: &fair,
            allocated: &allocated,
            total: 4000,
            now: 0,
        };
        let mut order = JobsOrder::new(&state, &CpuMemoryState::default(), &[job(0, 0), job(1, 1)]);
        assert_eq!(order.pop().map(|j| j.key), Some(1));
        assert_eq!(order.pop().map(|j| j.key), Some(0));
        assert_eq!(order.pop(), None);
    }

    /// A view with CPU (unlimited quota and limit: the cluster's `total` counts) and no
    /// memory use, `cpu[q]` millicores allocated to queue `q`.
    fn cpu_state(n: usize, cpu: &[i64], total: i64) -> CpuMemoryState {
        let unlimited = kueuesim_model::KaiQueueResource::UNLIMITED;
        let share = |allocated: Vec<i64>, total: i64| super::super::resources::ResourceShares {
            quota: vec![unlimited; n],
            fair: allocated.clone(),
            allocated,
            total,
        };
        CpuMemoryState {
            shares: vec![share(cpu.to_vec(), total), share(vec![0; n], 0)],
            ..Default::default()
        }
    }

    /// `GetDominantResourceShare` takes the largest share over the resources: with equal
    /// GPU shares, the queue using less of the cluster's CPU goes first, whatever the input
    /// order.
    #[test]
    fn equal_gpu_shares_are_ordered_by_the_dominant_cpu_share() {
        let queues = [q("queue0", 2), q("queue1", 2)];
        let fair = [2000, 2000];
        let allocated = [1000, 1000];
        let state = QueueState {
            queues: &queues,
            fair: &fair,
            allocated: &allocated,
            total: 4000,
            now: 0,
        };
        // queue0 holds 3 of the cluster's 4 cores (0.75 over 0.5 of its GPUs).
        let other = cpu_state(2, &[3000, 1000], 4000);
        let mut order = JobsOrder::new(&state, &other, &[job(0, 0), job(1, 1)]);
        assert_eq!(order.pop().map(|j| j.key), Some(1));
        // GPUs alone tie, and the queue created first goes first.
        let mut order = JobsOrder::new(&state, &CpuMemoryState::default(), &[job(0, 0), job(1, 1)]);
        assert_eq!(order.pop().map(|j| j.key), Some(0));
    }

    /// `prioritizeUnderUtilized` asks `FairShare.Less(Allocated)`: a queue is over its fair
    /// share only above it in every resource, so a queue over its GPU share but within its
    /// CPU share is ordered by the later tests (here its higher priority puts it first).
    #[test]
    fn a_queue_over_its_gpu_share_only_is_not_over_utilized() {
        // queue0 deserves 4 GPUs but its fair share is 2: with its job it stays within
        // its deserved quota (`prioritizeUnderQuotaWithJob` ties).
        let mut queues = [q("queue0", 4), q("queue1", 2)];
        queues[0].priority = 1;
        let fair = [2000, 2000];
        let allocated = [3000, 0];
        let state = QueueState {
            queues: &queues,
            fair: &fair,
            allocated: &allocated,
            total: 4000,
            now: 0,
        };
        // CPU: fair share equal to the allocation (an unlimited quota's request).
        let other = cpu_state(2, &[1000, 0], 4000);
        let mut order = JobsOrder::new(&state, &other, &[job(0, 0), job(1, 1)]);
        assert_eq!(order.pop().map(|j| j.key), Some(0));
        // Over its fair share in GPUs only, and GPUs the only resource: last.
        let mut order = JobsOrder::new(&state, &CpuMemoryState::default(), &[job(0, 0), job(1, 1)]);
        assert_eq!(order.pop().map(|j| j.key), Some(1));
    }
}
