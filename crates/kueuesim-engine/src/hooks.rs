//! Scheduling hooks a caller supplies in place of two built-in policies: the order of pending
//! workloads within a priority level (`queue_order`) and the scores of the feasible nodes for
//! a kube-scheduler pod (`node_scores`). Each is handed a read-only view and returns data;
//! the engine checks and applies it (docs/python.md).

use kueuesim_model::{ClusterQueueId, NodeId, SimTime, Workload, WorkloadId, World};

use crate::placement::{NodeCapacity, PodNeeds};

/// A policy set replacing built-in ones. With no hooks (`Simulation::with_hooks` never
/// called) the engine takes its built-in path without asking anything; with hooks, `orders`
/// and `scores` say which of the two are replaced.
///
/// A hook that cannot decide (the caller's code failed, or returned something the engine
/// cannot use) returns `None`: the engine then takes the built-in decision for that call, so
/// its state stays consistent, and stops the run after the step once `failed` says so.
pub trait Hooks {
    /// Whether `queue_order` replaces Kueue's order within a priority level.
    fn orders(&self) -> bool;
    /// Whether `node_scores` replaces kube-scheduler's score plugins.
    fn scores(&self) -> bool;
    /// The sort key of a workload entering its ClusterQueue's queue (on arrival and on every
    /// requeue after an eviction): lower first, within a priority level; Kueue's queue-order
    /// timestamp and UID break ties.
    fn queue_order(&mut self, view: &OrderView<'_>) -> Option<f64>;
    /// The score of each of `view.candidates` (into `scores`, cleared by the caller, one per
    /// candidate, finite or -inf for a node not to use): the pod goes to the highest.
    fn node_scores(&mut self, view: &ScoreView<'_>, scores: &mut Vec<f64>) -> Option<()>;
    /// Whether a hook has failed: the run stops after the current step.
    fn failed(&self) -> bool;
}

/// What the queue-order hook sees of a workload entering its queue.
pub struct OrderView<'a> {
    /// The scenario.
    pub world: &'a World,
    /// The workload's id (its index in the run's arrival order).
    pub id: WorkloadId,
    /// The workload.
    pub workload: &'a Workload,
    /// Its ClusterQueue.
    pub cluster_queue: ClusterQueueId,
    /// The current simulated time.
    pub now: SimTime,
    /// GPU time the workload has held so far, in GPU-milliseconds (Tiresias' attained
    /// service: it does not change while the workload waits).
    pub attained_gpu_ms: i64,
    /// Evictions so far.
    pub evictions: usize,
}

/// What the node-score hook sees of one pod to place.
pub struct ScoreView<'a> {
    /// The scenario.
    pub world: &'a World,
    /// The workload's id.
    pub id: WorkloadId,
    /// The workload.
    pub workload: &'a Workload,
    /// The pod set and the pod's index in it.
    pub pod_set: usize,
    /// The pod's index in its pod set.
    pub pod: usize,
    /// What the pod needs (requests, nodeSelector, tolerations).
    pub needs: &'a PodNeeds,
    /// The nodes passing every filter for this pod (kube-scheduler's filter phase over every
    /// node: `percentageOfNodesToScore` 100), in node order.
    pub candidates: &'a [NodeId],
    /// Every node's free and allocatable capacity.
    pub nodes: &'a NodeCapacity,
    /// The current simulated time.
    pub now: SimTime,
}

/// A float key as an integer of the same order (`f64::total_cmp`), so queue keys stay `Ord`.
pub fn order_key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ ((((b >> 63) as u64) >> 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::order_key;

    #[test]
    fn order_keys_follow_the_floats() {
        let xs = [
            f64::NEG_INFINITY,
            -3.5,
            -0.0,
            0.0,
            1e-300,
            2.0,
            1e300,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(order_key(w[0]) <= order_key(w[1]), "{} vs {}", w[0], w[1]);
        }
        assert!(order_key(-3.5) < order_key(2.0));
        assert_eq!(order_key(0.0), 0);
    }
}
