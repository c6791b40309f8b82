//! Kueue's queue manager: per ClusterQueue, an active heap and an inadmissible set.
//!
//! Mirrors `pkg/cache/queue/cluster_queue.go`: workloads are ordered by the sticky preemptor
//! first (BestEffortFIFO), then higher priority, then earlier queue-order timestamp, then UID
//! (`baseCompareFunc`). A cycle pops at most one head per ClusterQueue. Where a head that was
//! not admitted goes depends on the queueing strategy and the reason (`RequeueIfNotPresent`).

use std::cmp::Reverse;
use std::collections::BTreeSet;

use kueuesim_model::{ClusterQueueId, QueueingStrategy, SimTime, WorkloadId};

/// The position of a workload in a ClusterQueue: the ordering key of `baseCompareFunc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct QueueKey {
    /// Higher effective priority first.
    pub priority: Reverse<i32>,
    /// The caller's queue-order key (`hooks::Hooks::queue_order`, as `hooks::order_key`),
    /// lower first; 0 for every workload without one, so Kueue's order stands.
    pub policy: i64,
    /// Earlier queue-order timestamp first (creation time, or eviction time after some
    /// evictions).
    pub timestamp: SimTime,
    /// The label of the workload's UID (`uid_order`): the last tie-break.
    pub uid_rank: u64,
    /// The workload (unique, so keys never collide: the shape below never decides).
    pub workload: WorkloadId,
    /// The workload's scheduling shape (`SchedulingEquivalenceHashing`).
    pub shape: u32,
}

impl QueueKey {
    /// The least key of `priority`: where its band of the heap starts.
    fn first_of(priority: Reverse<i32>) -> QueueKey {
        QueueKey {
            priority,
            policy: i64::MIN,
            timestamp: SimTime(i64::MIN),
            uid_rank: 0,
            workload: WorkloadId(0),
            shape: 0,
        }
    }

    /// The greatest key of `priority`: where its band of the heap ends.
    fn last_of(priority: Reverse<i32>) -> QueueKey {
        QueueKey {
            priority,
            policy: i64::MAX,
            timestamp: SimTime(i64::MAX),
            uid_rank: u64::MAX,
            workload: WorkloadId(u32::MAX),
            shape: u32::MAX,
        }
    }
}

/// Why a head goes back to its queue (`RequeueReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequeueReason {
    /// Nothing specific.
    Generic,
    /// Nominated, then not admitted (skipped: no longer fits, overlapping targets).
    FailedAfterNomination,
    /// No flavor fits.
    NoFit,
    /// Preemption would be needed but there are no candidates.
    PreemptionNoCandidates,
    /// The namespace does not match the ClusterQueue's selector.
    NamespaceMismatch,
    /// Preemptions were issued for it.
    PendingPreemption,
}

/// Where a workload is in its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueStatus {
    /// In the heap: a head candidate.
    Active,
    /// Parked until capacity may have been freed.
    Inadmissible,
}

impl QueueStatus {
    /// Kueue's label value (`pending_workloads{status=…}`).
    pub fn as_str(self) -> &'static str {
        match self {
            QueueStatus::Active => "active",
            QueueStatus::Inadmissible => "inadmissible",
        }
    }
}

/// The pending workloads of one ClusterQueue.
#[derive(Clone, Debug, Default)]
pub struct ClusterQueueQueue {
    /// Workloads that may be popped as heads.
    pub active: BTreeSet<QueueKey>,
    /// Workloads found inadmissible, waiting for a capacity change.
    pub inadmissible: BTreeSet<QueueKey>,
    /// The preemptor pinned to the head while its victims terminate (BestEffortFIFO).
    sticky: Option<QueueKey>,
    /// Scheduling shapes found inadmissible since the last requeue of inadmissible workloads
    /// (`hashToBulkMoveReason`): new workloads of these shapes go straight to inadmissible.
    parked_shapes: BTreeSet<u32>,
    /// How many workloads of each scheduling shape (dense class ids) are in `active`: parking
    /// a shape scans the heap only when some workload of that shape is there.
    active_shapes: Vec<u32>,
    /// The same count for `inadmissible`, so that moving every parked workload back costs
    /// the number of shapes, not of workloads.
    inadmissible_shapes: Vec<u32>,
}

impl ClusterQueueQueue {
    /// Adds `key` to the active heap; `total` counts the workloads of every heap.
    fn activate(&mut self, key: QueueKey, total: &mut usize) {
        if self.active.insert(key) {
            self.count_active(key.shape, total);
        }
    }

    /// One more workload of `shape` is in the active heap.
    fn count_active(&mut self, shape: u32, total: &mut usize) {
        bump(&mut self.active_shapes, shape);
        *total += 1;
    }

    /// Adds `key` to the inadmissible set.
    fn park_key(&mut self, key: QueueKey) {
        if self.inadmissible.insert(key) {
            bump(&mut self.inadmissible_shapes, key.shape);
        }
    }

    /// Removes `key` from the inadmissible set, if there.
    fn unpark_key(&mut self, key: &QueueKey) {
        if self.inadmissible.remove(key) {
            self.inadmissible_shapes[key.shape as usize] -= 1;
        }
    }

    /// Removes `key` from the active heap, if there.
    fn deactivate(&mut self, key: &QueueKey, total: &mut usize) {
        if self.active.remove(key) {
            self.active_shapes[key.shape as usize] -= 1;
            *total -= 1;
        }
    }
}

/// One more of `shape` in a per-shape count.
fn bump(counts: &mut Vec<u32>, shape: u32) {
    let s = shape as usize;
    if counts.len() <= s {
        counts.resize(s + 1, 0);
    }
    counts[s] += 1;
}

/// All ClusterQueues' pending workloads.
#[derive(Clone, Debug)]
pub struct QueueManager {
    queues: Vec<ClusterQueueQueue>,
    /// Workloads in all active heaps together (so "is any head waiting" is O(1) with a
    /// thousand ClusterQueues).
    active_total: usize,
}

impl QueueManager {
    /// Empty queues for `n` ClusterQueues.
    pub fn new(n: usize) -> Self {
        QueueManager {
            queues: (0..n).map(|_| ClusterQueueQueue::default()).collect(),
            active_total: 0,
        }
    }

    /// Adds a newly arrived or requeued workload to the active heap (`AddFromLocalQueue`), or,
    /// under BestEffortFIFO, to the inadmissible set when an equivalent workload was just
    /// found inadmissible. Returns where it went.
    pub fn add(
        &mut self,
        cq: ClusterQueueId,
        strategy: QueueingStrategy,
        key: QueueKey,
    ) -> QueueStatus {
        let (q, total) = (&mut self.queues[cq.index()], &mut self.active_total);
        if strategy == QueueingStrategy::BestEffortFIFO && q.parked_shapes.contains(&key.shape) {
            q.deactivate(&key, total);
            q.park_key(key);
            return QueueStatus::Inadmissible;
        }
        q.unpark_key(&key);
        q.activate(key, total);
        QueueStatus::Active
    }

    /// Parks a workload as inadmissible (a requeued workload still in its back-off).
    pub fn park(&mut self, cq: ClusterQueueId, key: QueueKey) {
        let (q, total) = (&mut self.queues[cq.index()], &mut self.active_total);
        q.deactivate(&key, total);
        q.park_key(key);
    }

    /// Adds a workload to the active heap unconditionally.
    pub fn push_active(&mut self, cq: ClusterQueueId, key: QueueKey) {
        let (q, total) = (&mut self.queues[cq.index()], &mut self.active_total);
        q.unpark_key(&key);
        q.activate(key, total);
    }

    /// Pops at most one head per ClusterQueue among `eligible` ones, in ClusterQueue id
    /// order (`heads`); the sticky preemptor first.
    pub fn pop_heads(
        &mut self,
        eligible: impl Fn(ClusterQueueId) -> bool,
    ) -> Vec<(ClusterQueueId, QueueKey)> {
        self.pop_heads_afs(eligible, |_| None)
    }

    /// `pop_heads` where, in ClusterQueues with Admission Fair Sharing (`afs_usage` of one of
    /// their workloads is `Some`), the workload of the LocalQueue with the lowest usage goes
    /// first, then the usual order (`queueOrderingFunc`).
    pub fn pop_heads_afs(
        &mut self,
        eligible: impl Fn(ClusterQueueId) -> bool,
        afs_usage: impl Fn(WorkloadId) -> Option<f64>,
    ) -> Vec<(ClusterQueueId, QueueKey)> {
        let mut heads = Vec::new();
        for (i, q) in self.queues.iter_mut().enumerate() {
            let cq = ClusterQueueId::from_index(i);
            if q.active.is_empty() || !eligible(cq) {
                continue;
            }
            let sticky = q.sticky.as_ref().filter(|k| q.active.contains(*k));
            let first = q.active.first().expect("non-empty");
            let key = *if afs_usage(first.workload).is_some() {
                // `queueOrderingFunc`: lowest LocalQueue usage first; within it the heap order,
                // sticky preemptor included.
                q.active
                    .iter()
                    .min_by(|a, b| {
                        let (ua, ub) = (
                            afs_usage(a.workload).unwrap_or(0.0),
                            afs_usage(b.workload).unwrap_or(0.0),
                        );
                        let (sa, sb) = (Some(*a) != sticky, Some(*b) != sticky);
                        ua.total_cmp(&ub).then(sa.cmp(&sb)).then(a.cmp(b))
                    })
                    .expect("non-empty")
            } else {
                sticky.unwrap_or(first)
            };
            q.deactivate(&key, &mut self.active_total);
            heads.push((cq, key));
        }
        heads
    }

    /// Puts back a head that was not admitted (`RequeueIfNotPresent`). StrictFIFO returns
    /// every head to the heap except on a namespace mismatch; BestEffortFIFO only for
    /// transient reasons or when its flavor scan has flavors left to try
    /// (`pending_flavors`: `LastAssignment.PendingFlavors()` in `requeueIfNotPresent`), else
    /// parks it as inadmissible and, for NoFit and PreemptionNoCandidates, parks every active
    /// workload of the same scheduling shape with it (`SchedulingEquivalenceHashing`).
    /// Returns the workloads parked along with it.
    pub fn requeue(
        &mut self,
        cq: ClusterQueueId,
        strategy: QueueingStrategy,
        key: QueueKey,
        reason: RequeueReason,
        pending_flavors: bool,
    ) -> Vec<QueueKey> {
        let (q, total) = (&mut self.queues[cq.index()], &mut self.active_total);
        // The preemptor is only ever set here; it stays first until it leaves the queue
        // (admitted or deleted) or another preemptor replaces it.
        if reason == RequeueReason::PendingPreemption
            && strategy == QueueingStrategy::BestEffortFIFO
        {
            q.sticky = Some(key);
        }
        let immediate = match strategy {
            QueueingStrategy::StrictFIFO => reason != RequeueReason::NamespaceMismatch,
            QueueingStrategy::BestEffortFIFO => matches!(
                reason,
                RequeueReason::FailedAfterNomination | RequeueReason::PendingPreemption
            ),
        };
        if immediate || pending_flavors {
            q.activate(key, total);
            return Vec::new();
        }
        let shape = key.shape;
        q.park_key(key);
        let mut moved = Vec::new();
        if strategy == QueueingStrategy::BestEffortFIFO
            && matches!(
                reason,
                RequeueReason::NoFit | RequeueReason::PreemptionNoCandidates
            )
        {
            q.parked_shapes.insert(shape);
            // The scan stops once it has seen every active workload of the shape.
            let n = q.active_shapes.get(shape as usize).copied().unwrap_or(0) as usize;
            if n > 0 {
                // Taken out as the scan passes them (no search from the root per key). A shape
                // class has one priority (`ShapeClasses` hashes it in), so the scan covers
                // only the heap's band of that priority.
                moved = Vec::with_capacity(n);
                let band = QueueKey::first_of(key.priority)..=QueueKey::last_of(key.priority);
                moved.extend(q.active.extract_if(band, |k| k.shape == shape).take(n));
                debug_assert_eq!(moved.len(), n, "a shape class spans one priority");
                q.active_shapes[shape as usize] -= moved.len() as u32;
                *total -= moved.len();
                for &k in &moved {
                    q.park_key(k);
                }
            }
        }
        moved
    }

    /// Forgets the sticky preemptor of `cq` if it is `w` (it was admitted).
    pub fn clear_sticky(&mut self, cq: ClusterQueueId, w: WorkloadId) {
        let q = &mut self.queues[cq.index()];
        if q.sticky.as_ref().is_some_and(|k| k.workload == w) {
            q.sticky = None;
        }
    }

    /// Moves every inadmissible workload of `cq` but those of `stay` back to its heap
    /// (`queueInadmissibleWorkloads` when no other has a reason to stay; `stay` may name
    /// workloads queued elsewhere). Returns how many moved.
    pub fn requeue_all_inadmissible(&mut self, cq: ClusterQueueId, stay: &[QueueKey]) -> usize {
        let (q, total) = (&mut self.queues[cq.index()], &mut self.active_total);
        q.parked_shapes.clear();
        let staying: Vec<QueueKey> = stay
            .iter()
            .filter(|k| q.inadmissible.contains(k))
            .copied()
            .collect();
        for k in &staying {
            q.unpark_key(k);
        }
        let mut back = std::mem::take(&mut q.inadmissible);
        let moved = back.len();
        // The per-shape counts move over whole (a storm of releases on an overloaded cluster
        // moves thousands of parked workloads back after every release).
        if q.active_shapes.len() < q.inadmissible_shapes.len() {
            q.active_shapes.resize(q.inadmissible_shapes.len(), 0);
        }
        for (a, i) in q.active_shapes.iter_mut().zip(&mut q.inadmissible_shapes) {
            *a += std::mem::take(i);
        }
        *total += moved;
        // Keys are unique per workload and a workload is in one set only, so the merge keeps
        // every key; into an empty heap (every head tried since the last requeue) it is a
        // swap.
        q.active.append(&mut back);
        for k in staying {
            q.park_key(k);
        }
        moved
    }

    /// Moves the inadmissible workloads of `cq` for which `may_return` holds back to its heap
    /// (`queueInadmissibleWorkloads`). Returns how many moved.
    pub fn requeue_inadmissible(
        &mut self,
        cq: ClusterQueueId,
        may_return: impl Fn(WorkloadId) -> bool,
    ) -> usize {
        let (q, total) = (&mut self.queues[cq.index()], &mut self.active_total);
        q.parked_shapes.clear();
        let back: Vec<QueueKey> = q
            .inadmissible
            .iter()
            .filter(|k| may_return(k.workload))
            .copied()
            .collect();
        let moved = back.len();
        for k in back {
            q.unpark_key(&k);
            q.activate(k, total);
        }
        moved
    }

    /// Whether any of `cqs` has an active workload.
    pub fn any_active(&self) -> bool {
        debug_assert_eq!(
            self.active_total,
            self.queues.iter().map(|q| q.active.len()).sum::<usize>()
        );
        self.active_total > 0
    }

    /// Removes a workload wherever it is queued in `cq`.
    pub fn remove(&mut self, cq: ClusterQueueId, key: &QueueKey) {
        let (q, total) = (&mut self.queues[cq.index()], &mut self.active_total);
        q.deactivate(key, total);
        q.unpark_key(key);
        if q.sticky.as_ref() == Some(key) {
            q.sticky = None;
        }
    }

    /// Where `key` is queued in `cq`, if anywhere.
    pub fn status(&self, cq: ClusterQueueId, key: &QueueKey) -> Option<QueueStatus> {
        let q = &self.queues[cq.index()];
        if q.active.contains(key) {
            Some(QueueStatus::Active)
        } else if q.inadmissible.contains(key) {
            Some(QueueStatus::Inadmissible)
        } else {
            None
        }
    }

    /// The queue of `cq`.
    pub fn queue(&self, cq: ClusterQueueId) -> &ClusterQueueQueue {
        &self.queues[cq.index()]
    }

    /// Rewrites every key's UID label (`uid_order::UidLabels::respace`); the new labels keep
    /// the order, so each set is rebuilt as it was.
    pub fn relabel(&mut self, label: impl Fn(WorkloadId) -> u64) {
        let fix = |k: &QueueKey| QueueKey {
            uid_rank: label(k.workload),
            ..*k
        };
        for q in &mut self.queues {
            q.active = q.active.iter().map(fix).collect();
            q.inadmissible = q.inadmissible.iter().map(fix).collect();
            q.sticky = q.sticky.as_ref().map(fix);
        }
    }

    /// Every key held, for the engine's invariant check.
    pub fn keys(&self) -> impl Iterator<Item = &QueueKey> {
        self.queues
            .iter()
            .flat_map(|q| q.active.iter().chain(&q.inadmissible).chain(&q.sticky))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(p: i32, t: i64, uid: u32) -> QueueKey {
        QueueKey {
            priority: Reverse(p),
            policy: 0,
            timestamp: SimTime(t),
            uid_rank: u64::from(uid),
            workload: WorkloadId(uid),
            shape: 0,
        }
    }

    fn all(_: ClusterQueueId) -> bool {
        true
    }

    #[test]
    fn heads_are_priority_then_timestamp_then_uid() {
        let mut m = QueueManager::new(1);
        let cq = ClusterQueueId(0);
        m.push_active(cq, key(100, 0, 1));
        m.push_active(cq, key(500, 10, 2));
        m.push_active(cq, key(500, 10, 0));
        m.push_active(cq, key(500, 5, 3));
        let order: Vec<u32> = std::iter::from_fn(|| m.pop_heads(all).pop())
            .map(|(_, k)| k.workload.0)
            .collect();
        assert_eq!(order, [3, 0, 2, 1]);
    }

    /// kueue-cases.md O-03 (`TestBestEffortFIFORequeueIfNotPresent`,
    /// `TestStrictFIFORequeueIfNotPresent`): where each requeue reason sends a head.
    #[test]
    fn requeue_destinations_by_strategy_and_reason() {
        use RequeueReason::*;
        let cases = [
            (
                FailedAfterNomination,
                QueueStatus::Active,
                QueueStatus::Active,
            ),
            (PendingPreemption, QueueStatus::Active, QueueStatus::Active),
            (
                NamespaceMismatch,
                QueueStatus::Inadmissible,
                QueueStatus::Inadmissible,
            ),
            (Generic, QueueStatus::Inadmissible, QueueStatus::Active),
            (NoFit, QueueStatus::Inadmissible, QueueStatus::Active),
            (
                PreemptionNoCandidates,
                QueueStatus::Inadmissible,
                QueueStatus::Active,
            ),
        ];
        for (reason, best_effort, strict) in cases {
            for (strategy, want) in [
                (QueueingStrategy::BestEffortFIFO, best_effort),
                (QueueingStrategy::StrictFIFO, strict),
            ] {
                let mut m = QueueManager::new(1);
                let k = key(0, 0, 0);
                m.requeue(ClusterQueueId(0), strategy, k, reason, false);
                assert_eq!(
                    m.status(ClusterQueueId(0), &k),
                    Some(want),
                    "{reason:?} {strategy:?}"
                );
            }
        }
    }

    #[test]
    fn a_best_effort_head_with_flavors_left_stays_active() {
        // `requeueIfNotPresent`: `LastAssignment.PendingFlavors()` keeps it in the heap, and
        // its shape is not parked, so an equivalent workload stays active too.
        let mut m = QueueManager::new(1);
        let cq = ClusterQueueId(0);
        let twin = key(0, 9, 9);
        m.push_active(cq, twin);
        let k = key(0, 0, 0);
        for reason in [RequeueReason::NoFit, RequeueReason::PreemptionNoCandidates] {
            let moved = m.requeue(cq, QueueingStrategy::BestEffortFIFO, k, reason, true);
            assert!(moved.is_empty());
            assert_eq!(m.status(cq, &k), Some(QueueStatus::Active), "{reason:?}");
            assert_eq!(m.status(cq, &twin), Some(QueueStatus::Active), "{reason:?}");
            m.remove(cq, &k);
        }
    }

    #[test]
    fn sticky_preemptor_stays_the_head_under_best_effort() {
        let mut m = QueueManager::new(1);
        let cq = ClusterQueueId(0);
        let low = key(1, 5, 1);
        m.push_active(cq, key(9, 0, 0));
        m.requeue(
            cq,
            QueueingStrategy::BestEffortFIFO,
            low,
            RequeueReason::PendingPreemption,
            false,
        );
        assert_eq!(m.pop_heads(all)[0].1, low);
        m.requeue(
            cq,
            QueueingStrategy::BestEffortFIFO,
            low,
            RequeueReason::PendingPreemption,
            false,
        );
        m.clear_sticky(cq, low.workload);
        assert_eq!(m.pop_heads(all)[0].1.workload, WorkloadId(0));
    }

    #[test]
    fn equivalent_workloads_are_parked_together() {
        let mut m = QueueManager::new(1);
        let cq = ClusterQueueId(0);
        // Shapes: workloads 1 and 3 are alike, 2 and 4 differ.
        for uid in 1..5 {
            let k = QueueKey {
                shape: uid % 2,
                ..key(0, uid as i64, uid)
            };
            m.push_active(cq, k);
        }
        let head = m.pop_heads(all)[0].1;
        let moved = m.requeue(
            cq,
            QueueingStrategy::BestEffortFIFO,
            head,
            RequeueReason::NoFit,
            false,
        );
        assert_eq!(moved.iter().map(|k| k.workload.0).collect::<Vec<_>>(), [3]);
        assert_eq!(m.queue(cq).active.len(), 2);
        assert_eq!(m.requeue_inadmissible(cq, |w| w.0 != 3), 1);
    }

    #[test]
    fn moving_every_parked_workload_at_once_is_moving_them_one_by_one() {
        let cq = ClusterQueueId(0);
        let [mut bulk, mut one_by_one] = [(); 2].map(|_| {
            let mut m = QueueManager::new(1);
            for uid in 0..12 {
                let k = QueueKey {
                    shape: uid % 3,
                    ..key(uid as i32 % 2, uid as i64, uid)
                };
                if uid % 4 == 0 {
                    m.push_active(cq, k);
                } else {
                    m.park(cq, k);
                }
            }
            m
        });
        assert_eq!(bulk.requeue_all_inadmissible(cq, &[]), 9);
        assert_eq!(one_by_one.requeue_inadmissible(cq, |_| true), 9);
        let (b, o) = (bulk.queue(cq), one_by_one.queue(cq));
        assert_eq!(b.active, o.active);
        assert!(b.inadmissible.is_empty() && o.inadmissible.is_empty());
        assert_eq!(b.active_shapes, o.active_shapes);
        assert_eq!(
            b.active_shapes,
            [4, 4, 4],
            "every workload counted by shape"
        );
        for q in [b, o] {
            assert!(
                q.inadmissible_shapes.iter().all(|&n| n == 0),
                "none left parked"
            );
        }
    }
}
