//! The order in which KAI's session actions take pending jobs (`JobsOrderByQueues` without
//! `VictimQueue`, `pkg/scheduler/actions/utils/job_order_by_queue.go`): at each level of the
//! queue tree the queue the proportion plugin's queue order puts first (`GetQueueOrderResult`,
//! judged with the best pending job of the queue's subtree), down to a leaf, then that leaf's
//! next job by the job order; the queues' allocated GPUs follow what each job gets.

use std::cmp::{Ordering, Reverse};

use super::reclaim::{QueueOrderKey, QueueState, cmp_queue_order_keys};

/// A pending job in the session's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingJob {
    /// The caller's id for it.
    pub key: usize,
    /// Its (leaf) queue.
    pub queue: usize,
    /// Milli-GPUs of the tasks it allocates now (`GetTasksToAllocateInitResource`).
    pub gpus: i64,
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
}

/// The pending jobs of one action of a session, queue by queue.
pub struct JobsOrder<'a> {
    /// The KAI Queues (milli-GPUs), their fair shares and the cluster's GPUs.
    queues: &'a [kueuesim_model::KaiQueue],
    fair: &'a [i64],
    total: i64,
    /// Milli-GPUs allocated to each queue's own jobs, kept up to date by [`Self::account`].
    allocated: Vec<i64>,
    /// Each leaf queue's jobs, the next one last.
    jobs: Vec<Vec<PendingJob>>,
}

impl<'a> JobsOrder<'a> {
    /// The order of `jobs` over the queues of `state` as the session's action opens.
    pub fn new(state: &QueueState<'a>, jobs: &[PendingJob]) -> Self {
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
            fair: state.fair,
            total: state.total,
            allocated: state.allocated.to_vec(),
            jobs: by_queue,
        }
    }

    /// What job `key` of `queue` got (milli-GPUs): its queue's share moves (the proportion
    /// plugin's allocate and pipeline event handlers), before the next pick.
    pub fn account(&mut self, queue: usize, gpus: i64) {
        if let Some(a) = self.allocated.get_mut(queue) {
            *a += gpus;
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
        let state = QueueState {
            queues: self.queues,
            fair: self.fair,
            allocated: &self.allocated,
            total: self.total,
            now: 0,
        };
        let sub = state.subtree_allocated();
        let nq = self.queues.len();
        let has_jobs =
            |q: usize| (0..nq).any(|l| !self.jobs[l].is_empty() && state.path(l).contains(&q));
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
                cur = self.first(&state, &sub, &kids, &|k| k);
            }
        };
        let mut level = children(None);
        if level.is_empty() {
            return None;
        }
        let leaf = loop {
            let chosen = self.first(&state, &sub, &level, &best_leaf);
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
    fn first(
        &self,
        state: &QueueState<'_>,
        sub: &[i64],
        members: &[usize],
        leaf_of: &dyn Fn(usize) -> usize,
    ) -> usize {
        let key = |q: usize| -> QueueOrderKey {
            let kq = &state.queues[q];
            let alloc = sub[q];
            let job = self.jobs[leaf_of(q)].last().map_or(0, |j| j.gpus);
            let allocatable = state.allocatable(q);
            let share = |a: i64| state.gpu_share(q, a);
            (
                // `prioritizeUnderUtilized`: a queue over its fair share last.
                alloc > state.fair[q],
                // `prioritizeUnderQuotaWithJob`: a queue its job keeps within its deserved
                // quota first (an unlimited quota keeps every job within it).
                kq.gpu_quota.is_some_and(|d| alloc + job > d),
                // `prioritizePrioritized`: the higher queue priority first.
                -i64::from(kq.priority),
                // `penalizeZeroShareWithJob`: a queue that would use GPUs with no
                // allocatable share last.
                allocatable == Some(0) && alloc + job > 0,
                // `prioritizeSmallerResourceShare`: the smaller dominant share with its job.
                share(alloc + job),
                // `prioritizeSmallerResourceShareWithoutTask`.
                share(alloc),
                // `prioritizeBasedOnAllocatableShare`: the smaller allocatable share first.
                allocatable.unwrap_or(i64::MAX),
                // `prioritizeBasedOnCreationTime`: the queue created first (input order).
                q,
            )
        };
        let mut best = members[0];
        for &q in &members[1..] {
            if cmp_queue_order_keys(&key(q), &key(best)) == Ordering::Less {
                best = q;
            }
        }
        best
    }
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
        let mut order = JobsOrder::new(&state, &jobs);
        let mut got = Vec::new();
        while let Some(j) = order.pop() {
            order.account(j.queue, j.gpus);
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
        let mut order = JobsOrder::new(&state, &[job(0, 2), job(1, 3)]);
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
        let mut order = JobsOrder::new(&state, &[job(0, 0), job(1, 0)]);
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
        let mut order = JobsOrder::new(&state, &[job(0, 0), job(1, 1)]);
        assert_eq!(order.pop().map(|j| j.key), Some(1));
        assert_eq!(order.pop().map(|j| j.key), Some(0));
        assert_eq!(order.pop(), None);
    }
}
