//! Kueue's queue manager: per ClusterQueue, an active heap and an inadmissible set.
//!
//! Mirrors `pkg/cache/queue/cluster_queue.go`: workloads are ordered by higher priority, then
//! earlier queue-order timestamp, then UID (`baseCompareFunc`). A cycle pops at most one head
//! per ClusterQueue. Under BestEffortFIFO an inadmissible head moves to the inadmissible set
//! and comes back only when capacity may have been freed; under StrictFIFO it stays the head.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use kueuesim_model::{ClusterQueueId, SimTime, WorkloadId};

/// The position of a workload in a ClusterQueue: the ordering key of `baseCompareFunc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct QueueKey {
    /// Higher effective priority first.
    pub priority: Reverse<i32>,
    /// Earlier queue-order timestamp first (creation time, or eviction time after some
    /// evictions).
    pub timestamp: SimTime,
    /// Rank of the workload's UID among all UIDs: the last tie-break.
    pub uid_rank: u32,
    /// The workload (unique, so keys never collide).
    pub workload: WorkloadId,
}

/// The pending workloads of one ClusterQueue.
#[derive(Debug, Default)]
pub struct ClusterQueueQueue {
    /// Workloads that may be popped as heads.
    pub active: BTreeSet<QueueKey>,
    /// Workloads that were found inadmissible and wait for a capacity change (BestEffortFIFO).
    pub inadmissible: BTreeSet<QueueKey>,
}

/// All ClusterQueues' pending workloads.
#[derive(Debug)]
pub struct QueueManager {
    queues: Vec<ClusterQueueQueue>,
}

impl QueueManager {
    /// Empty queues for `n` ClusterQueues.
    pub fn new(n: usize) -> Self {
        QueueManager {
            queues: (0..n).map(|_| ClusterQueueQueue::default()).collect(),
        }
    }

    /// Adds a newly arrived or requeued workload to the active heap (`AddFromLocalQueue`).
    pub fn push_active(&mut self, cq: ClusterQueueId, key: QueueKey) {
        self.queues[cq.index()].active.insert(key);
    }

    /// Parks a workload in the inadmissible set.
    pub fn push_inadmissible(&mut self, cq: ClusterQueueId, key: QueueKey) {
        self.queues[cq.index()].inadmissible.insert(key);
    }

    /// Pops at most one head per ClusterQueue, in ClusterQueue id order (`heads`).
    pub fn pop_heads(&mut self) -> Vec<(ClusterQueueId, QueueKey)> {
        let mut heads = Vec::new();
        for (i, q) in self.queues.iter_mut().enumerate() {
            if let Some(k) = q.active.pop_first() {
                heads.push((ClusterQueueId::from_index(i), k));
            }
        }
        heads
    }

    /// Moves every inadmissible workload of `cq` back to its active heap (a capacity change:
    /// `QueueInadmissibleWorkloads`). Returns how many moved.
    pub fn requeue_inadmissible(&mut self, cq: ClusterQueueId) -> usize {
        let q = &mut self.queues[cq.index()];
        let moved = q.inadmissible.len();
        q.active.append(&mut q.inadmissible);
        moved
    }

    /// Whether any ClusterQueue has an active workload.
    pub fn any_active(&self) -> bool {
        self.queues.iter().any(|q| !q.active.is_empty())
    }

    /// The queue of `cq`.
    pub fn queue(&self, cq: ClusterQueueId) -> &ClusterQueueQueue {
        &self.queues[cq.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(p: i32, t: i64, uid: u32) -> QueueKey {
        QueueKey {
            priority: Reverse(p),
            timestamp: SimTime(t),
            uid_rank: uid,
            workload: WorkloadId(uid),
        }
    }

    #[test]
    fn heads_are_priority_then_timestamp_then_uid() {
        let mut m = QueueManager::new(1);
        let cq = ClusterQueueId(0);
        m.push_active(cq, key(100, 0, 1));
        m.push_active(cq, key(500, 10, 2));
        m.push_active(cq, key(500, 10, 0));
        m.push_active(cq, key(500, 5, 3));
        let order: Vec<u32> = std::iter::from_fn(|| m.pop_heads().pop())
            .map(|(_, k)| k.workload.0)
            .collect();
        assert_eq!(order, [3, 0, 2, 1]);
    }

    #[test]
    fn one_head_per_cluster_queue_and_inadmissible_returns_on_requeue() {
        let mut m = QueueManager::new(2);
        m.push_active(ClusterQueueId(0), key(1, 0, 0));
        m.push_active(ClusterQueueId(0), key(1, 1, 1));
        m.push_active(ClusterQueueId(1), key(1, 2, 2));
        let heads = m.pop_heads();
        assert_eq!(heads.len(), 2);
        m.push_inadmissible(ClusterQueueId(0), heads[0].1);
        assert_eq!(m.pop_heads().len(), 1);
        assert!(!m.any_active());
        assert_eq!(m.requeue_inadmissible(ClusterQueueId(0)), 1);
        assert!(m.any_active());
    }
}
