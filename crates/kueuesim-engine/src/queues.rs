//! Kueue's queue manager: per ClusterQueue, an active heap and an inadmissible set.
//!
//! Mirrors `pkg/cache/queue/cluster_queue.go`: workloads are ordered by the sticky preemptor
//! first (BestEffortFIFO), then higher priority, then earlier queue-order timestamp, then UID
//! (`baseCompareFunc`). A cycle pops at most one head per ClusterQueue. Where a head that was
//! not admitted goes depends on the queueing strategy and the reason (`RequeueIfNotPresent`).

use std::cmp::Reverse;
use std::collections::BTreeSet;

use kueuesim_model::{ClusterQueueId, QueueingStrategy, SimTime, WorkloadId};

mod sorted_keys;

use sorted_keys::SortedKeys;

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

/// The pending workloads of one scheduling shape in one ClusterQueue.
#[derive(Clone, Debug, Default)]
struct ShapeQueue {
    /// Its workloads that may be popped as heads.
    active: SortedKeys,
    /// Its workloads found inadmissible, waiting for a capacity change.
    inadmissible: SortedKeys,
    /// Whether the shape is in `ClusterQueueQueue::with_parked`.
    listed: bool,
    /// The `ClusterQueueQueue::park_epoch` in which the shape was found inadmissible; the
    /// shape is parked (`hashToBulkMoveReason`) while that epoch lasts.
    parked_in: u64,
}

/// The pending workloads of one ClusterQueue, kept per scheduling shape.
///
/// Kueue keeps one heap and one inadmissible map per ClusterQueue; the workloads are kept
/// here per shape (`SchedulingEquivalenceHashing`) because a head that does not fit parks
/// every workload of its shape: on an overloaded cluster that is thousands of workloads after
/// every release of quota. Per shape, parking the shape and moving it back are each one swap
/// of two sets, and the heap's order is the order of the shapes' first keys (`heads`), so
/// the head popped is the one Kueue's single heap gives.
#[derive(Clone, Debug)]
pub struct ClusterQueueQueue {
    /// The first active key of every shape with an active workload (but `unfilled`'s): the
    /// heap's candidates. A shape's sets and these are `SortedKeys`, so that the pop of a
    /// head, a shape's first key and the first of `heads`, takes it from the front of each.
    heads: SortedKeys,
    /// The slot of the shape whose first key was just taken out (a popped head) and whose
    /// next key is not yet in `heads`. A popped head that fails parks its whole shape at
    /// once, so filling its place at the pop would insert a key into `heads` only to remove
    /// it again; it is filled on the next change to the queue instead (`fill_popped`), unless
    /// the shape is parked first.
    unfilled: Option<u32>,
    /// The shapes seen in this ClusterQueue, dense by first appearance.
    shapes: Vec<ShapeQueue>,
    /// Each global shape id's index in `shapes` (`NO_SLOT`: none yet).
    slot: Vec<u32>,
    /// Workloads in the active sets.
    active_len: usize,
    /// Workloads in the inadmissible sets.
    inadmissible_len: usize,
    /// The preemptor pinned to the head while its victims terminate (BestEffortFIFO).
    sticky: Option<QueueKey>,
    /// Scheduling shapes found inadmissible since the last requeue of inadmissible workloads
    /// (`hashToBulkMoveReason`) are those whose `parked_in` is this epoch: new workloads of
    /// these shapes go straight to inadmissible. A requeue of inadmissible workloads starts a
    /// new epoch, which forgets them all at once. Starts at 1, so no shape is parked at first.
    park_epoch: u64,
    /// The slots of the shapes that may hold inadmissible workloads (each once, `listed`), so
    /// that moving them back visits those alone: on an overloaded cluster a ClusterQueue
    /// has seen hundreds of shapes and a release of quota moves them back every time.
    with_parked: Vec<u32>,
    /// Workloads parked in their PodsReady back-off window (`QueueManager::park`), kept apart
    /// from their shapes' sets: a requeue of inadmissible workloads passes over them
    /// (`backoffWaitingTimeExpired`) instead of taking each out and putting it back, and on
    /// an overloaded cluster thousands wait in back-off while every release requeues.
    /// Counted as inadmissible, as Kueue keeps them in its inadmissible map.
    held: BTreeSet<QueueKey>,
    /// Whether the queue is in `QueueManager::with_active`.
    listed_active: bool,
    /// Whether something was parked since the last requeue of inadmissible workloads (a
    /// workload, or a shape marked parked): the queue is in `QueueManager::with_parked`.
    /// Invariant: when false, no workload is inadmissible and no shape is parked in this
    /// epoch, so a requeue of inadmissible workloads would change nothing observable.
    may_requeue: bool,
}

/// `ClusterQueueQueue::slot` of a shape not seen in the ClusterQueue.
const NO_SLOT: u32 = u32::MAX;

impl Default for ClusterQueueQueue {
    fn default() -> Self {
        ClusterQueueQueue {
            heads: SortedKeys::default(),
            unfilled: None,
            shapes: Vec::new(),
            slot: Vec::new(),
            active_len: 0,
            inadmissible_len: 0,
            sticky: None,
            park_epoch: 1,
            with_parked: Vec::new(),
            held: BTreeSet::new(),
            listed_active: false,
            may_requeue: false,
        }
    }
}

impl ClusterQueueQueue {
    /// How many workloads may be popped as heads.
    pub fn active_len(&self) -> usize {
        self.active_len
    }

    /// How many workloads wait as inadmissible.
    pub fn inadmissible_len(&self) -> usize {
        self.inadmissible_len
    }

    /// The head the heap's order gives (the sticky preemptor aside).
    pub fn first_active(&self) -> Option<&QueueKey> {
        let unfilled = self
            .unfilled
            .and_then(|i| self.shapes[i as usize].active.first());
        match (self.heads.first(), unfilled) {
            (Some(h), Some(u)) => Some(h.min(u)),
            (h, u) => h.or(u),
        }
    }

    /// Puts the next key of the shape whose first key was taken out into `heads` (see
    /// `unfilled`).
    fn fill_popped(&mut self) {
        if let Some(i) = self.unfilled.take()
            && let Some(&next) = self.shapes[i as usize].active.first()
        {
            self.heads.insert(next);
        }
    }

    /// Every active workload, in no particular order.
    pub fn active_keys(&self) -> impl Iterator<Item = &QueueKey> {
        self.shapes.iter().flat_map(|s| s.active.iter())
    }

    /// Every inadmissible workload, in no particular order.
    pub fn inadmissible_keys(&self) -> impl Iterator<Item = &QueueKey> {
        self.shapes
            .iter()
            .flat_map(|s| s.inadmissible.iter())
            .chain(&self.held)
    }

    /// The queue of `shape`, created empty on first use.
    fn shape_mut(&mut self, shape: u32) -> &mut ShapeQueue {
        let i = self.slot_of(shape);
        &mut self.shapes[i]
    }

    /// The slot of `shape` in `shapes`, created empty on first use.
    fn slot_of(&mut self, shape: u32) -> usize {
        let s = shape as usize;
        if self.slot.len() <= s {
            self.slot.resize(s + 1, NO_SLOT);
        }
        if self.slot[s] == NO_SLOT {
            self.slot[s] = self.shapes.len() as u32;
            self.shapes.push(ShapeQueue::default());
        }
        self.slot[s] as usize
    }

    /// The queue of `shape` for adding inadmissible workloads: listed in `with_parked`.
    fn parking_shape(&mut self, shape: u32) -> &mut ShapeQueue {
        let i = self.slot_of(shape);
        let s = &mut self.shapes[i];
        if !s.listed {
            s.listed = true;
            self.with_parked.push(i as u32);
        }
        s
    }

    /// Whether `shape` was found inadmissible since the last requeue of inadmissible
    /// workloads (`hashToBulkMoveReason`).
    fn shape_parked(&self, shape: u32) -> bool {
        self.shape(shape)
            .is_some_and(|s| s.parked_in == self.park_epoch)
    }

    /// The queue of `shape`, if it was ever used here.
    fn shape(&self, shape: u32) -> Option<&ShapeQueue> {
        match self.slot.get(shape as usize) {
            Some(&i) if i != NO_SLOT => Some(&self.shapes[i as usize]),
            _ => None,
        }
    }

    fn is_active(&self, key: &QueueKey) -> bool {
        self.shape(key.shape)
            .is_some_and(|s| s.active.contains(key))
    }

    fn is_inadmissible(&self, key: &QueueKey) -> bool {
        self.held.contains(key)
            || self
                .shape(key.shape)
                .is_some_and(|s| s.inadmissible.contains(key))
    }

    /// Adds `key` to the active heap; `total` counts the workloads of every heap.
    fn activate(&mut self, key: QueueKey, total: &mut usize) {
        self.fill_popped();
        let s = self.shape_mut(key.shape);
        let old_first = s.active.first().copied();
        if !s.active.insert(key) {
            return;
        }
        if old_first.is_none_or(|f| key < f) {
            if let Some(f) = old_first {
                self.heads.remove(&f);
            }
            self.heads.insert(key);
        }
        self.active_len += 1;
        *total += 1;
    }

    /// Removes `key` from the active heap, if there.
    fn deactivate(&mut self, key: &QueueKey, total: &mut usize) {
        self.fill_popped();
        let Some(&i) = self.slot.get(key.shape as usize).filter(|&&i| i != NO_SLOT) else {
            return;
        };
        let s = &mut self.shapes[i as usize];
        // A popped head is the first key of its shape's set and, but for a sticky preemptor
        // or Admission Fair Sharing, of `heads` too: taken from the front without searching.
        let shape_first = s.active.first() == Some(key);
        if shape_first {
            s.active.pop_first();
        } else if !s.active.remove(key) {
            return;
        }
        // Only a shape's first key is in `heads`; the shape's next key goes in at the
        // queue's next change (`unfilled`).
        if shape_first {
            if self.heads.first() == Some(key) {
                self.heads.pop_first();
            } else {
                self.heads.remove(key);
            }
            self.unfilled = Some(i);
        }
        self.active_len -= 1;
        *total -= 1;
    }

    /// Adds `key` to the inadmissible set.
    fn park_key(&mut self, key: QueueKey) {
        self.may_requeue = true;
        if self.parking_shape(key.shape).inadmissible.insert(key) {
            self.inadmissible_len += 1;
        }
    }

    /// Removes `key` from the inadmissible set (its shape's, or the held back-offs), if there.
    fn unpark_key(&mut self, key: &QueueKey) {
        if !self.held.is_empty() && self.held.remove(key) {
            self.inadmissible_len -= 1;
            return;
        }
        if let Some(&i) = self.slot.get(key.shape as usize).filter(|&&i| i != NO_SLOT)
            && self.shapes[i as usize].inadmissible.remove(key)
        {
            self.inadmissible_len -= 1;
        }
    }

    /// Parks every active workload of `shape`; returns how many.
    fn park_shape(&mut self, shape: u32, total: &mut usize) -> usize {
        // The shape of the head just popped (the usual case: a head that does not fit parks
        // its shape) has its next key out of `heads` already.
        let popped = self
            .unfilled
            .is_some_and(|i| self.slot.get(shape as usize) == Some(&i));
        if popped {
            self.unfilled = None;
        } else {
            self.fill_popped();
        }
        self.may_requeue = true;
        let s = self.parking_shape(shape);
        let Some(&first) = s.active.first() else {
            return 0;
        };
        let n = s.active.len();
        s.inadmissible.append(&mut s.active);
        if !popped {
            self.heads.remove(&first);
        }
        self.active_len -= n;
        self.inadmissible_len += n;
        *total -= n;
        n
    }

    /// Moves every inadmissible workload back to the heap; returns how many.
    fn unpark_all(&mut self, total: &mut usize) -> usize {
        self.fill_popped();
        let mut moved = 0;
        for i in self.with_parked.drain(..) {
            let s = &mut self.shapes[i as usize];
            s.listed = false;
            if s.inadmissible.is_empty() {
                continue;
            }
            let old_first = s.active.first().copied();
            moved += s.inadmissible.len();
            // Keys are unique per workload and a workload is in one set only, so the merge
            // keeps every key.
            s.active.append(&mut s.inadmissible);
            let first = *s.active.first().expect("just filled");
            if old_first != Some(first) {
                if let Some(f) = old_first {
                    self.heads.remove(&f);
                }
                self.heads.insert(first);
            }
        }
        self.active_len += moved;
        self.inadmissible_len -= moved;
        *total += moved;
        moved
    }
}

/// Whether `QueueManager::requeue` puts a head back in the heap (else it parks it as
/// inadmissible): StrictFIFO always but on a namespace mismatch; BestEffortFIFO for the
/// transient reasons, or while the head's flavor scan has flavors left (`requeueIfNotPresent`).
pub fn back_to_heap(
    strategy: QueueingStrategy,
    reason: RequeueReason,
    pending_flavors: bool,
) -> bool {
    pending_flavors
        || match strategy {
            QueueingStrategy::StrictFIFO => reason != RequeueReason::NamespaceMismatch,
            QueueingStrategy::BestEffortFIFO => matches!(
                reason,
                RequeueReason::FailedAfterNomination | RequeueReason::PendingPreemption
            ),
        }
}

/// All ClusterQueues' pending workloads.
#[derive(Clone, Debug)]
pub struct QueueManager {
    queues: Vec<ClusterQueueQueue>,
    /// Workloads in all active heaps together (so "is any head waiting" is O(1) with a
    /// thousand ClusterQueues).
    active_total: usize,
    /// Gate `SchedulingEquivalenceHashing`: whether a NoFit or PreemptionNoCandidates head
    /// parks its whole scheduling shape (`handleInadmissibleHash`). Off, no shape is ever
    /// marked parked, so arrivals are not parked either.
    equivalence_hashing: bool,
    /// The ClusterQueues with an active workload (`ClusterQueueQueue::listed_active`): a
    /// cycle pops heads from these alone, so its cost follows the queues with work, not
    /// the thousands of idle ClusterQueues a platform may have.
    active_cqs: BTreeSet<ClusterQueueId>,
    /// The ClusterQueues with something parked since their last requeue of inadmissible
    /// workloads (`ClusterQueueQueue::may_requeue`): a release of quota requeues these
    /// alone instead of every ClusterQueue of its cohort.
    parked_cqs: BTreeSet<ClusterQueueId>,
    /// The ClusterQueues a cycle pops heads from (`active_cqs` as the cycle starts).
    cycle_cqs: Vec<ClusterQueueId>,
}

impl QueueManager {
    /// Files `cq` in `active_cqs` and `parked_cqs` as its queue now is; called after every
    /// change to it (a set changes only when the queue's state flips).
    fn note(&mut self, cq: ClusterQueueId) {
        let q = &mut self.queues[cq.index()];
        let active = q.active_len > 0;
        if active != q.listed_active {
            q.listed_active = active;
            if active {
                self.active_cqs.insert(cq);
            } else {
                self.active_cqs.remove(&cq);
            }
        }
        // Only a requeue takes a queue out (`requeued`): parking never clears it.
        if q.may_requeue {
            self.parked_cqs.insert(cq);
        }
    }

    /// After a requeue of inadmissible workloads in `cq` (its epoch advanced, nothing is
    /// parked in it): it stays in `parked_cqs` only while workloads remain inadmissible.
    fn requeued(&mut self, cq: ClusterQueueId) {
        let q = &mut self.queues[cq.index()];
        q.may_requeue = q.inadmissible_len > 0;
        if !q.may_requeue {
            self.parked_cqs.remove(&cq);
        }
        self.note(cq);
    }

    /// The ClusterQueues a requeue of inadmissible workloads may change, in id order; every
    /// other one would move nothing (`ClusterQueueQueue::may_requeue`).
    pub fn with_parked(&self) -> impl Iterator<Item = ClusterQueueId> + '_ {
        self.parked_cqs.iter().copied()
    }

    /// Empty queues for `n` ClusterQueues, with `SchedulingEquivalenceHashing` on.
    pub fn new(n: usize) -> Self {
        QueueManager {
            queues: (0..n).map(|_| ClusterQueueQueue::default()).collect(),
            active_total: 0,
            equivalence_hashing: true,
            active_cqs: BTreeSet::new(),
            parked_cqs: BTreeSet::new(),
            cycle_cqs: Vec::new(),
        }
    }

    /// The same queues with gate `SchedulingEquivalenceHashing` set to `on`.
    pub fn with_equivalence_hashing(self, on: bool) -> Self {
        QueueManager {
            equivalence_hashing: on,
            ..self
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
        if strategy == QueueingStrategy::BestEffortFIFO && q.shape_parked(key.shape) {
            q.deactivate(&key, total);
            if q.held.remove(&key) {
                q.inadmissible_len -= 1;
            }
            q.park_key(key);
            self.note(cq);
            return QueueStatus::Inadmissible;
        }
        q.unpark_key(&key);
        q.activate(key, total);
        self.note(cq);
        QueueStatus::Active
    }

    /// Parks a workload as inadmissible while it is in its PodsReady back-off (a requeued
    /// workload whose `requeue_at` is still ahead): held apart from its shape's set until the
    /// back-off ends (`push_active`) or a requeue finds it ended.
    pub fn park(&mut self, cq: ClusterQueueId, key: QueueKey) {
        let (q, total) = (&mut self.queues[cq.index()], &mut self.active_total);
        q.deactivate(&key, total);
        q.unpark_key(&key);
        q.may_requeue = true;
        if q.held.insert(key) {
            q.inadmissible_len += 1;
        }
        self.note(cq);
    }

    /// Adds a workload to the active heap unconditionally.
    pub fn push_active(&mut self, cq: ClusterQueueId, key: QueueKey) {
        let (q, total) = (&mut self.queues[cq.index()], &mut self.active_total);
        q.unpark_key(&key);
        q.activate(key, total);
        self.note(cq);
    }

    /// Pops at most one head per ClusterQueue among `eligible` ones, in ClusterQueue id
    /// order (`heads`); the sticky preemptor first.
    pub fn pop_heads(
        &mut self,
        eligible: impl Fn(ClusterQueueId) -> bool,
    ) -> Vec<(ClusterQueueId, QueueKey)> {
        let mut heads = Vec::new();
        self.pop_heads_afs(eligible, |_| None, |cq, key| heads.push((cq, key)));
        heads
    }

    /// `pop_heads` where, in ClusterQueues with Admission Fair Sharing (`afs_usage` of one of
    /// their workloads is `Some`), the workload of the LocalQueue with the lowest usage goes
    /// first, then the usual order (`queueOrderingFunc`). Each head goes to `head` (the
    /// caller's buffer, kept from cycle to cycle).
    pub fn pop_heads_afs(
        &mut self,
        eligible: impl Fn(ClusterQueueId) -> bool,
        afs_usage: impl Fn(WorkloadId) -> Option<f64>,
        mut head: impl FnMut(ClusterQueueId, QueueKey),
    ) {
        // In ClusterQueue id order, as upstream's `heads` walks its map of queues. The set is
        // copied first (into a buffer kept from cycle to cycle): a queue's head leaving may
        // empty it.
        let mut cqs = std::mem::take(&mut self.cycle_cqs);
        cqs.clear();
        cqs.extend(self.active_cqs.iter().copied());
        for &cq in &cqs {
            if !eligible(cq) {
                continue;
            }
            let q = &mut self.queues[cq.index()];
            q.fill_popped();
            let sticky = q.sticky.as_ref().filter(|k| q.is_active(k));
            let first = q.heads.first().expect("non-empty");
            let key = *if afs_usage(first.workload).is_some() {
                // `queueOrderingFunc`: lowest LocalQueue usage first; within it the heap order,
                // sticky preemptor included.
                q.active_keys()
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
            self.note(cq);
            head(cq, key);
        }
        self.cycle_cqs = cqs;
    }

    /// Puts back a head that was not admitted (`RequeueIfNotPresent`). StrictFIFO returns
    /// every head to the heap except on a namespace mismatch; BestEffortFIFO only for
    /// transient reasons or when its flavor scan has flavors left to try
    /// (`pending_flavors`: `LastAssignment.PendingFlavors()` in `requeueIfNotPresent`), else
    /// parks it as inadmissible and, for NoFit and PreemptionNoCandidates, parks every active
    /// workload of the same scheduling shape with it (`SchedulingEquivalenceHashing`).
    /// Returns how many workloads were parked along with it.
    pub fn requeue(
        &mut self,
        cq: ClusterQueueId,
        strategy: QueueingStrategy,
        key: QueueKey,
        reason: RequeueReason,
        pending_flavors: bool,
    ) -> usize {
        let (q, total) = (&mut self.queues[cq.index()], &mut self.active_total);
        // A popped head is never a held back-off (`held`'s invariant).
        debug_assert!(
            !q.held.contains(&key),
            "a held back-off was requeued as a head"
        );
        // The preemptor is only ever set here; it stays first until it leaves the queue
        // (admitted or deleted) or another preemptor replaces it.
        if reason == RequeueReason::PendingPreemption
            && strategy == QueueingStrategy::BestEffortFIFO
        {
            q.sticky = Some(key);
        }
        if back_to_heap(strategy, reason, pending_flavors) {
            q.activate(key, total);
            self.note(cq);
            return 0;
        }
        let mut moved = 0;
        // `requeueIfNotPresent`: the bulk move needs the gate and a known hash (always known
        // here when the gate is on).
        if strategy == QueueingStrategy::BestEffortFIFO
            && self.equivalence_hashing
            && matches!(
                reason,
                RequeueReason::NoFit | RequeueReason::PreemptionNoCandidates
            )
        {
            let epoch = q.park_epoch;
            q.shape_mut(key.shape).parked_in = epoch;
            q.may_requeue = true;
            // The shape first: into an empty inadmissible set it is a swap.
            moved = q.park_shape(key.shape, total);
        }
        q.park_key(key);
        self.note(cq);
        moved
    }

    /// Forgets the sticky preemptor of `cq` if it is `w` (it was admitted).
    pub fn clear_sticky(&mut self, cq: ClusterQueueId, w: WorkloadId) {
        let q = &mut self.queues[cq.index()];
        if q.sticky.as_ref().is_some_and(|k| k.workload == w) {
            q.sticky = None;
        }
    }

    /// Moves every inadmissible workload of `cq` back to its heap but the held ones still in
    /// their back-off (`queueInadmissibleWorkloads` when no other has a reason to stay;
    /// `backoff_ended` says of a held workload whether its back-off is over). Returns how
    /// many moved.
    pub fn requeue_all_inadmissible(
        &mut self,
        cq: ClusterQueueId,
        backoff_ended: impl Fn(WorkloadId) -> bool,
    ) -> usize {
        let (q, total) = (&mut self.queues[cq.index()], &mut self.active_total);
        q.park_epoch += 1;
        // A held workload whose back-off has ended (its end not yet handled) returns with
        // the rest: into its shape's set, which moves below.
        if !q.held.is_empty() {
            let ended: Vec<QueueKey> = q
                .held
                .iter()
                .filter(|k| backoff_ended(k.workload))
                .copied()
                .collect();
            for k in ended {
                q.unpark_key(&k);
                q.park_key(k);
            }
        }
        // Per shape, a storm of releases on an overloaded cluster moves thousands of parked
        // workloads back after every release: each shape's set moves whole.
        let moved = q.unpark_all(total);
        self.requeued(cq);
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
        q.park_epoch += 1;
        let back: Vec<QueueKey> = q
            .inadmissible_keys()
            .filter(|k| may_return(k.workload))
            .copied()
            .collect();
        let moved = back.len();
        for k in back {
            q.unpark_key(&k);
            q.activate(k, total);
        }
        self.requeued(cq);
        moved
    }

    /// Whether any of `cqs` has an active workload.
    pub fn any_active(&self) -> bool {
        debug_assert_eq!(
            self.active_total,
            self.queues.iter().map(|q| q.active_len).sum::<usize>()
        );
        debug_assert!(
            self.queues
                .iter()
                .enumerate()
                .all(|(i, q)| (q.active_len > 0)
                    == self.active_cqs.contains(&ClusterQueueId::from_index(i))),
            "active_cqs lists exactly the queues with an active workload"
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
        self.note(cq);
    }

    /// Where `key` is queued in `cq`, if anywhere.
    pub fn status(&self, cq: ClusterQueueId, key: &QueueKey) -> Option<QueueStatus> {
        let q = &self.queues[cq.index()];
        if q.is_active(key) {
            Some(QueueStatus::Active)
        } else if q.is_inadmissible(key) {
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
            q.fill_popped();
            q.heads = q.heads.iter().map(fix).collect();
            for s in &mut q.shapes {
                s.active = s.active.iter().map(fix).collect();
                s.inadmissible = s.inadmissible.iter().map(fix).collect();
            }
            q.held = q.held.iter().map(fix).collect();
            q.sticky = q.sticky.as_ref().map(fix);
        }
    }

    /// Every key held, for the engine's invariant check.
    pub fn keys(&self) -> impl Iterator<Item = &QueueKey> {
        self.queues.iter().flat_map(|q| {
            q.active_keys()
                .chain(q.inadmissible_keys())
                .chain(&q.sticky)
        })
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
            assert_eq!(moved, 0);
            assert_eq!(m.status(cq, &k), Some(QueueStatus::Active), "{reason:?}");
            assert_eq!(m.status(cq, &twin), Some(QueueStatus::Active), "{reason:?}");
            m.remove(cq, &k);
        }
    }

    #[test]
    fn without_equivalence_hashing_a_head_parks_alone() {
        // Gate SchedulingEquivalenceHashing off: `requeueIfNotPresent` skips
        // `handleInadmissibleHash`, so a NoFit head's twin stays in the heap and a later
        // arrival of the same shape is queued, not parked.
        for (on, twin_after, moved_want) in [
            (true, QueueStatus::Inadmissible, 1),
            (false, QueueStatus::Active, 0),
        ] {
            let mut m = QueueManager::new(1).with_equivalence_hashing(on);
            let cq = ClusterQueueId(0);
            let twin = key(0, 9, 9);
            m.push_active(cq, twin);
            let k = key(0, 0, 0);
            let moved = m.requeue(
                cq,
                QueueingStrategy::BestEffortFIFO,
                k,
                RequeueReason::NoFit,
                false,
            );
            assert_eq!(moved, moved_want, "gate {on}");
            assert_eq!(m.status(cq, &k), Some(QueueStatus::Inadmissible));
            assert_eq!(m.status(cq, &twin), Some(twin_after), "gate {on}");
            let late = key(0, 20, 20);
            assert_eq!(
                m.add(cq, QueueingStrategy::BestEffortFIFO, late),
                twin_after,
                "gate {on}"
            );
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
        assert_eq!(moved, 1);
        let twin = QueueKey {
            shape: 1,
            ..key(0, 3, 3)
        };
        assert_eq!(m.status(cq, &twin), Some(QueueStatus::Inadmissible));
        assert_eq!(m.queue(cq).active_len(), 2);
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
        assert_eq!(bulk.requeue_all_inadmissible(cq, |_| true), 9);
        assert_eq!(one_by_one.requeue_inadmissible(cq, |_| true), 9);
        let (b, o) = (bulk.queue(cq), one_by_one.queue(cq));
        let sorted = |q: &ClusterQueueQueue| {
            let mut keys: Vec<QueueKey> = q.active_keys().copied().collect();
            keys.sort();
            keys
        };
        assert_eq!(sorted(b), sorted(o));
        assert_eq!(b.active_len(), 12);
        assert_eq!(b.first_active(), o.first_active());
        for q in [b, o] {
            assert_eq!(q.inadmissible_len(), 0, "none left parked");
            assert_eq!(q.inadmissible_keys().count(), 0);
            for s in &q.shapes {
                assert_eq!(s.active.len(), 4, "every workload kept by shape");
            }
        }
    }

    #[test]
    fn only_queues_with_work_are_visited() {
        // A platform of a thousand ClusterQueues, three with work: the cycle's heads come
        // from those, in id order, and a requeue lists only the one with a parked head.
        let mut m = QueueManager::new(1000);
        for (c, uid) in [(700, 1), (3, 2), (999, 3)] {
            m.push_active(ClusterQueueId(c), key(0, 0, uid));
        }
        let heads: Vec<u32> = m.pop_heads(all).iter().map(|(c, _)| c.0).collect();
        assert_eq!(heads, [3, 700, 999]);
        assert_eq!(m.with_parked().count(), 0, "nothing parked yet");
        m.requeue(
            ClusterQueueId(700),
            QueueingStrategy::BestEffortFIFO,
            key(0, 0, 1),
            RequeueReason::NoFit,
            false,
        );
        assert_eq!(m.with_parked().collect::<Vec<_>>(), [ClusterQueueId(700)]);
        assert!(m.pop_heads(all).is_empty(), "no head left active");
        assert_eq!(m.requeue_all_inadmissible(ClusterQueueId(700), |_| true), 1);
        assert_eq!(m.with_parked().count(), 0, "requeued: nothing parked");
        let heads: Vec<u32> = m.pop_heads(all).iter().map(|(c, _)| c.0).collect();
        assert_eq!(heads, [700]);
    }

    /// Kueue's own layout, one heap and one inadmissible set per ClusterQueue, as the
    /// reference the per-shape sets must agree with.
    #[derive(Default)]
    struct OneHeap {
        active: BTreeSet<QueueKey>,
        inadmissible: BTreeSet<QueueKey>,
        parked_shapes: BTreeSet<u32>,
        /// The inadmissible ones parked in their back-off (`park`).
        held: BTreeSet<QueueKey>,
    }

    impl OneHeap {
        fn status(&self, k: &QueueKey) -> Option<QueueStatus> {
            if self.active.contains(k) {
                Some(QueueStatus::Active)
            } else if self.inadmissible.contains(k) {
                Some(QueueStatus::Inadmissible)
            } else {
                None
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Add(u8),
        Park(u8),
        Pop,
        RequeueNoFit(u8),
        RequeueAll(u8),
        RequeueSome(u8),
        Remove(u8),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            3 => any::<u8>().prop_map(Op::Add),
            1 => any::<u8>().prop_map(Op::Park),
            3 => Just(Op::Pop),
            2 => any::<u8>().prop_map(Op::RequeueNoFit),
            1 => any::<u8>().prop_map(Op::RequeueAll),
            1 => any::<u8>().prop_map(Op::RequeueSome),
            1 => any::<u8>().prop_map(Op::Remove),
        ]
    }

    /// Workload `i` of 24: three priorities, two shapes per priority (a shape has one
    /// priority), timestamps that tie.
    fn nth(i: u8) -> QueueKey {
        let uid = u32::from(i % 24);
        let priority = (uid % 3) as i32;
        QueueKey {
            shape: (uid % 6),
            ..key(priority, i64::from(uid / 4), uid)
        }
    }

    proptest::proptest! {
        /// The heads popped, where each workload is and the counts are those of one heap and
        /// one inadmissible set under any sequence of queue operations.
        #[test]
        fn per_shape_sets_behave_as_one_heap(ops in proptest::collection::vec(op(), 1..120)) {
            let cq = ClusterQueueId(0);
            let best = QueueingStrategy::BestEffortFIFO;
            let mut m = QueueManager::new(1);
            let mut r = OneHeap::default();
            for op in ops {
                match op {
                    Op::Add(i) => {
                        let k = nth(i);
                        let got = m.add(cq, best, k);
                        r.held.remove(&k);
                        let want = if r.parked_shapes.contains(&k.shape) {
                            r.active.remove(&k);
                            r.inadmissible.insert(k);
                            QueueStatus::Inadmissible
                        } else {
                            r.inadmissible.remove(&k);
                            r.active.insert(k);
                            QueueStatus::Active
                        };
                        proptest::prop_assert_eq!(got, want);
                    }
                    Op::Park(i) => {
                        let k = nth(i);
                        m.park(cq, k);
                        r.active.remove(&k);
                        r.inadmissible.insert(k);
                        r.held.insert(k);
                    }
                    Op::Pop => {
                        let got = m.pop_heads(all).first().map(|&(_, k)| k);
                        let want = r.active.pop_first();
                        proptest::prop_assert_eq!(got, want);
                    }
                    Op::RequeueNoFit(i) => {
                        // Requeued as a popped head is: not in either set.
                        let k = nth(i);
                        if r.status(&k).is_some() {
                            continue;
                        }
                        let n = m.requeue(cq, best, k, RequeueReason::NoFit, false);
                        r.parked_shapes.insert(k.shape);
                        let same: Vec<QueueKey> =
                            r.active.iter().filter(|o| o.shape == k.shape).copied().collect();
                        proptest::prop_assert_eq!(n, same.len());
                        for o in same {
                            r.active.remove(&o);
                            r.inadmissible.insert(o);
                        }
                        r.inadmissible.insert(k);
                    }
                    Op::RequeueAll(i) => {
                        // One workload's back-off still runs: held, it stays; every other
                        // parked workload returns, held or not.
                        let stay = nth(i);
                        let n = m.requeue_all_inadmissible(cq, |w| w != stay.workload);
                        r.parked_shapes.clear();
                        let back: Vec<QueueKey> = r
                            .inadmissible
                            .iter()
                            .filter(|k| !(**k == stay && r.held.contains(k)))
                            .copied()
                            .collect();
                        proptest::prop_assert_eq!(n, back.len());
                        for k in back {
                            r.inadmissible.remove(&k);
                            r.held.remove(&k);
                            r.active.insert(k);
                        }
                    }
                    Op::RequeueSome(i) => {
                        let odd = |w: WorkloadId| (w.0 + u32::from(i)) % 2 == 1;
                        let n = m.requeue_inadmissible(cq, odd);
                        r.parked_shapes.clear();
                        let back: Vec<QueueKey> =
                            r.inadmissible.iter().filter(|k| odd(k.workload)).copied().collect();
                        proptest::prop_assert_eq!(n, back.len());
                        for k in back {
                            r.inadmissible.remove(&k);
                            r.held.remove(&k);
                            r.active.insert(k);
                        }
                    }
                    Op::Remove(i) => {
                        let k = nth(i);
                        m.remove(cq, &k);
                        r.active.remove(&k);
                        r.inadmissible.remove(&k);
                        r.held.remove(&k);
                    }
                }
                let q = m.queue(cq);
                // A queue left out of the requeues would have changed nothing in one.
                if m.with_parked().next().is_none() {
                    proptest::prop_assert!(r.inadmissible.is_empty() && r.parked_shapes.is_empty());
                }
                proptest::prop_assert_eq!(q.first_active(), r.active.first());
                proptest::prop_assert_eq!(q.active_len(), r.active.len());
                proptest::prop_assert_eq!(q.inadmissible_len(), r.inadmissible.len());
                proptest::prop_assert_eq!(m.any_active(), !r.active.is_empty());
                for i in 0..24 {
                    let k = nth(i);
                    proptest::prop_assert_eq!(m.status(cq, &k), r.status(&k));
                }
            }
        }
    }
}
