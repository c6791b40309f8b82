//! A Timeline change's `set` and `patch`: the ClusterQueues and Cohorts take the specs of the
//! change's epoch (`World::epochs`), and Kueue reacts as it does to a ClusterQueue or Cohort
//! update. The scheduler's cache takes the new quota (`Cache.UpdateClusterQueue`,
//! `AddOrUpdateCohort`: the cohort tree's subtree quotas worked out again, the usage of the
//! admitted workloads kept, nobody evicted, even below the new quota); the queue manager
//! requeues the inadmissible workloads of each updated ClusterQueue's cohort tree after the
//! batch period (`Manager.UpdateClusterQueue` → `notifyRetryInadmissibleWithoutLock`).
//! The nodes the change adds or takes away are node operations (`nodes.rs`).

use kueuesim_model::ClusterQueueId;
use kueuesim_model::quota::QuotaTree;

use super::Simulation;

impl<'w> Simulation<'w> {
    /// The world of epoch `e` from now on; `updated` are the ClusterQueues whose spec (or a
    /// Cohort above them) changed.
    pub(super) fn enter_epoch(&mut self, e: usize, updated: &[ClusterQueueId]) {
        let world = &self.origin.epochs[e];
        self.world = world;
        // The new tree, with every ClusterQueue's usage added back: each cohort's usage is
        // what its children borrow beyond their private quota (`updateCohortResourceNode`).
        let old = std::mem::replace(&mut self.kueue.tree, QuotaTree::new(world));
        for c in 0..world.cluster_queues.len() {
            let cq = ClusterQueueId::from_index(c);
            let node = old.cq_node(cq);
            for fr in 0..old.fr_count() {
                let fr = kueuesim_model::quota::Fr(fr as u32);
                let usage = old.usage(node, fr);
                if usage != 0 {
                    self.kueue.tree.add_usage(node, fr, usage);
                }
            }
        }
        // Usage over the new limits stays (nobody is evicted for it): the invariants allow
        // what was over at this change, the higher of it and any earlier change's.
        let tree = &self.kueue.tree;
        let n_fr = tree.fr_count();
        let n_nodes = world.cluster_queues.len() + world.cohorts.len();
        self.kueue.over_quota.resize(n_nodes * n_fr, 0);
        for n in 0..n_nodes {
            let node = kueuesim_model::quota::NodeIdx(n as u32);
            for f in 0..n_fr {
                let fr = kueuesim_model::quota::Fr(f as u32);
                let limit = match tree.as_cq(node) {
                    Some(cq) => Some(super::invariants::cq_limit(
                        tree,
                        world.cluster_queue(cq).cohort.is_some(),
                        node,
                        fr,
                    )),
                    None => super::invariants::cohort_limit(tree, node, fr),
                };
                let over = limit.map_or(0, |l| (tree.usage(node, fr) - l).max(0));
                let slot = &mut self.kueue.over_quota[n * n_fr + f];
                *slot = (*slot).max(over);
            }
        }
        // A cache update moves the allocatable generation on: flavor-scan progress recorded
        // against the old quota is outdated.
        for g in &mut self.kueue.cq_generation {
            *g += 1;
        }
        for &cq in updated {
            self.notify_capacity_freed(cq);
        }
        // Heads still in a heap see the new quota at the next cycle.
        if self.kueue.queues.any_active() {
            self.request_cycle();
        }
    }
}
