//! Nodes that change during a run: cordoned (`spec.unschedulable`), drained, removed, failed
//! and repaired, and nodes with failed GPUs; the Timeline's node operations.
//!
//! A node that cannot take pods keeps its pods' capacity where it is and holds back the rest:
//! its free capacity and pod slots are taken by a *block* through `Cluster::apply`, so every
//! index the placements read (free capacity, occupancy classes, GPU orders, per-domain
//! histograms, KAI's counts, Kueue TAS's view) sees a full node, and no placement path needs
//! to know. A failed GPU is blocked the same way, one GPU at a time. A run without a
//! Timeline and without failures has no `NodeStates` at all, and pays nothing.
//!
//! Invariant: a node's block is what its status asks for, given its pods: while it is
//! cordoned, removed or failed, everything its pods do not hold (`free` is zero, pod slots
//! zero); otherwise exactly its failed GPUs. `release` re-blocks what a pod gives back on
//! a closed node (`reblock`).

use kueuesim_model::{NodeId, NodeOp, ResourceId, ResourceList, WorkloadId, World};

use crate::placement::Cluster;

use super::Simulation;
use super::pod_loss::Loss;

/// Kueue's `UpdatesBatchPeriod`: how long the TAS ResourceFlavor controller waits after a
/// node change before it reconciles.
const TAS_UPDATES_BATCH_PERIOD: kueuesim_model::SimDuration =
    kueuesim_model::SimDuration::from_secs(1);

/// What can happen to a node, and its state.
#[derive(Clone, Debug)]
pub(super) struct NodeStates {
    /// `spec.unschedulable` (cordoned or drained).
    pub(super) cordoned: Vec<bool>,
    /// The Node object is gone.
    pub(super) removed: Vec<bool>,
    /// Failed and not repaired yet.
    pub(super) failed: Vec<bool>,
    /// GPUs failed and not repaired yet, per node.
    pub(super) failed_gpus: Vec<u32>,
    /// Per (node, resource), what the block takes from the node's free capacity.
    blocked: Vec<i64>,
    /// Per node, the pod slots the block takes.
    blocked_pods: Vec<i64>,
    n_res: usize,
    gpu: Option<ResourceId>,
}

impl NodeStates {
    pub(super) fn new(world: &World) -> Self {
        let n = world.nodes.len();
        NodeStates {
            cordoned: world.nodes.iter().map(|_| false).collect(),
            removed: vec![false; n],
            failed: vec![false; n],
            failed_gpus: vec![0; n],
            blocked: vec![0; n * world.resources.len()],
            blocked_pods: vec![0; n],
            n_res: world.resources.len(),
            gpu: world.resources.lookup(kueuesim_model::resources::GPU),
        }
    }

    /// Whether `node` takes no new pods.
    #[inline]
    pub(super) fn closed(&self, node: NodeId) -> bool {
        let i = node.index();
        self.cordoned[i] || self.removed[i] || self.failed[i]
    }

    /// Whether `node` can hold no pods at all (removed, or failed).
    #[inline]
    pub(super) fn down(&self, node: NodeId) -> bool {
        let i = node.index();
        self.removed[i] || self.failed[i]
    }

    /// Whether no node is failed and no GPU is (removed nodes stay removed).
    pub(super) fn all_up(&self) -> bool {
        !self.failed.contains(&true) && self.failed_gpus.iter().all(|&g| g == 0)
    }

    /// What the block of `node` takes of resource `r`.
    pub(super) fn blocked(&self, node: NodeId, r: usize) -> i64 {
        self.blocked[node.index() * self.n_res + r]
    }

    /// The pod slots the block of `node` takes.
    pub(super) fn blocked_pods(&self, node: NodeId) -> i64 {
        self.blocked_pods[node.index()]
    }

    /// Brings the block of `node` in line with its status: a closed node's free capacity and
    /// pod slots all blocked; an open one's failed GPUs only (as many of them as are free:
    /// the caller first ends the pods on a failed GPU).
    pub(super) fn sync(&mut self, world: &World, cluster: &mut Cluster, node: NodeId) {
        let i = node.index();
        let base = i * self.n_res;
        let mut take: Vec<(ResourceId, i64)> = Vec::new();
        let mut give: Vec<(ResourceId, i64)> = Vec::new();
        let closed = self.closed(node);
        for r in 0..self.n_res {
            let free = cluster.nodes.free(node, r);
            let have = self.blocked[base + r];
            let want = if closed {
                have + free.max(0)
            } else if self.gpu.is_some_and(|g| g.index() == r) {
                // The failed GPUs: as many as the node has free now on top of the block.
                i64::from(self.failed_gpus[i]).min(have + free.max(0))
            } else {
                0
            };
            if want > have {
                take.push((ResourceId::from_index(r), want - have));
            } else if want < have {
                give.push((ResourceId::from_index(r), have - want));
            }
            self.blocked[base + r] = want;
        }
        let free_pods = cluster.nodes.free_pods(node);
        let have_pods = self.blocked_pods[i];
        let want_pods = if closed {
            have_pods + free_pods.max(0)
        } else {
            0
        };
        self.blocked_pods[i] = want_pods;
        // `Cluster::apply` takes one pod slot per call and sign: the resources go with one
        // slot, and the remaining difference in slots is applied with no resources.
        let mut slots = want_pods - have_pods;
        if !take.is_empty() {
            cluster.apply(world, node, &ResourceList::from_pairs(take), 1);
            slots -= 1;
        }
        if !give.is_empty() {
            cluster.apply(world, node, &ResourceList::from_pairs(give), -1);
            slots += 1;
        }
        if slots != 0 {
            cluster.apply(world, node, &ResourceList::default(), slots);
        }
    }
}

impl<'w> Simulation<'w> {
    /// Applies Timeline change `i`: its node operations in order (`cordon`, `uncordon`, `drain`,
    /// `remove`).
    pub(super) fn apply_change(&mut self, i: usize) {
        let change = &self.origin.timeline[i];
        let lost = self.rec.stats.failures.pods_lost;
        self.sched.nodes_changing = true;
        if let Some(e) = change.epoch {
            self.enter_epoch(e, &change.updated);
        }
        for (op, nodes) in &change.nodes {
            self.node_op(*op, nodes);
        }
        self.after_node_change(lost);
    }

    /// After nodes changed: the workloads waiting for nodes try again, and Kueue looks at its
    /// queues. The change was idle (it does not move the end of a run without a horizon) when
    /// it ended no pod and nothing runs, waits for nodes or is still to arrive: it changed
    /// nothing any workload saw.
    pub(super) fn after_node_change(&mut self, pods_lost_before: u64) {
        self.sched.nodes_changing = false;
        let waiting = !self.sched.awaiting_placement.is_empty();
        self.retry_placements();
        // Kueue's TAS cache sees the nodes change, and its TAS ResourceFlavor controller
        // requeues the inadmissible workloads of every ClusterQueue after its batch period
        // (`rfReconciler.Reconcile` → `NotifyRetryInadmissible`, `UpdatesBatchPeriod` 1 s): a
        // topology that did not fit may fit now.
        if self.sched.tas_base.is_some() {
            for c in 0..self.world.cluster_queues.len() {
                self.notify_retry_inadmissible(
                    kueuesim_model::ClusterQueueId::from_index(c),
                    TAS_UPDATES_BATCH_PERIOD,
                );
            }
        }
        self.request_cycle();
        self.progress.idle = self.rec.stats.failures.pods_lost == pods_lost_before
            && !waiting
            && self.progress.running == 0
            && self.progress.terminating == 0
            && !self.arrivals_pending();
    }

    /// One node operation on `nodes`.
    pub(super) fn node_op(&mut self, op: NodeOp, nodes: &[NodeId]) {
        let world = self.world;
        let Some(states) = self.sched.nodes.as_mut() else {
            return;
        };
        // A removed node takes no further operation, but coming back (`Add`: a change
        // created it again).
        let nodes: Vec<NodeId> = nodes
            .iter()
            .copied()
            .filter(|&n| op == NodeOp::Add || !states.removed[n.index()])
            .collect();
        match op {
            NodeOp::Cordon | NodeOp::Uncordon => {
                for &n in &nodes {
                    states.cordoned[n.index()] = op == NodeOp::Cordon;
                    states.sync(world, &mut self.sched.cluster, n);
                }
            }
            NodeOp::Drain => {
                // `kubectl drain`: cordon, then evict every pod (no PodDisruptionBudget
                // is modelled, and DaemonSet pods are not simulated).
                for &n in &nodes {
                    states.cordoned[n.index()] = true;
                    states.sync(world, &mut self.sched.cluster, n);
                }
                self.end_pods_on(&nodes, Loss::Evicted);
            }
            NodeOp::Add => {
                // A new Node object: schedulable (its own `spec.unschedulable` aside).
                for &n in &nodes {
                    states.removed[n.index()] = false;
                    states.cordoned[n.index()] = false;
                    states.sync(world, &mut self.sched.cluster, n);
                }
            }
            NodeOp::Remove => {
                for &n in &nodes {
                    states.removed[n.index()] = true;
                    states.sync(world, &mut self.sched.cluster, n);
                }
                self.end_pods_on(&nodes, Loss::NodeRemoved);
                let states = self.sched.nodes.as_mut().expect("node states");
                for &n in &nodes {
                    states.sync(world, &mut self.sched.cluster, n);
                }
            }
        }
    }

    /// Ends every pod bound to one of `nodes` (`loss` says how), workload by workload in id
    /// order, and re-blocks the nodes that stay closed.
    pub(super) fn end_pods_on(&mut self, nodes: &[NodeId], loss: Loss) {
        if nodes.is_empty() {
            return;
        }
        let mut on = vec![false; self.world.nodes.len()];
        for n in nodes {
            on[n.index()] = true;
        }
        let mut lost: Vec<(WorkloadId, Vec<(usize, usize)>)> = Vec::new();
        for (i, rt) in self.runtimes.iter() {
            let mut pods = Vec::new();
            for (ps, slots) in rt.record.placement.iter().enumerate() {
                for (idx, s) in slots.iter().enumerate() {
                    if s.is_some_and(|n| on[n.index()]) {
                        pods.push((ps, idx));
                    }
                }
            }
            // A finished workload keeps its placement for the report: its pods are gone.
            if !pods.is_empty() && rt.record.state != crate::outcome::WorkloadState::Finished {
                lost.push((WorkloadId::from_index(i), pods));
            }
        }
        for (w, pods) in lost {
            self.lose_pods(w, &pods, loss, None);
        }
    }
}
