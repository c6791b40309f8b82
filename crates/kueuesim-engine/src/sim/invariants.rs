//! The engine's invariants (`Simulation::check_invariants`, for tests): quota usage and limits,
//! node capacity, gangs, UID labels and PodsReady tracking.

use kueuesim_model::quota::{Fr, NodeIdx, QuotaTree};
use kueuesim_model::{ClusterQueueId, NodeId, ResourceId, SchedulerKind, WorkloadId};

use crate::outcome::{ConditionType, WorkloadState};
use crate::placement::NodeCapacity;
use crate::preemption::AdmittedWorkloads;

use super::Simulation;

impl<'w> Simulation<'w> {
    /// Checks the engine's invariants against the current state; the message names the first
    /// broken one. Meant for tests, after every step:
    /// - a ClusterQueue's usage equals the sum of the usage its workloads hold, and it never
    ///   exceeds what its quota and the cohort tree allow: within its nominal quota plus
    ///   borrowingLimit, and no cohort above its subtree quota (lending limits respected);
    /// - no node has negative free capacity, and free capacity equals allocatable minus the
    ///   requests of the pods bound to it;
    /// - a gang-scheduled workload has all of its pods placed or none.
    pub fn check_invariants(&self) -> Result<(), String> {
        let world = self.world;
        if let Some(v) = self.rec.audit.as_ref().and_then(|a| a.first()) {
            return Err(v.clone());
        }
        self.check_uid_labels()?;
        let mut expected = QuotaTree::new(world);
        // Limits hold for the workloads that are not on their way out: like Kueue, the
        // scheduler counts a preempted workload as gone while its pods terminate, so a
        // ClusterQueue may briefly hold more than its quota.
        let mut live = QuotaTree::new(world);
        for (i, rt) in self.runtimes.iter() {
            let w = WorkloadId::from_index(i);
            if let Some(c) = self.kueue.admitted.candidate(w) {
                for &(fr, amount) in &rt.usage {
                    expected.add_usage(expected.cq_node(c.cq), fr, amount);
                    if !c.evicted {
                        live.add_usage(live.cq_node(c.cq), fr, amount);
                    }
                }
            } else if !rt.usage.is_empty() {
                return Err(format!(
                    "{} holds usage but is not admitted",
                    self.spec(w).name
                ));
            }
            let placed: usize = rt
                .record
                .placement
                .iter()
                .flatten()
                .filter(|n| n.is_some())
                .count();
            let total: usize = rt.record.placement.iter().map(Vec::len).sum();
            // A gang is bound up to its minMember in one statement or not at all (a KAI Job's
            // pods are PodGroups of one; pods already running at the start count).
            let wl = self.spec(w);
            let min_member = match self.scheduler_of(w) {
                SchedulerKind::Kube => 1,
                SchedulerKind::Kai
                    if wl.gang.pod_group_per_pod || !wl.gang.kai_subgroups.is_empty() =>
                {
                    1
                }
                _ => wl.gang.min_member.map_or(total, |m| m as usize).min(total),
            };
            let pre_bound = wl.gang.pre_bound().min(total);
            // A gang that lost pods keeps the others while its controller replaces them.
            if placed != 0 && placed < min_member && placed != pre_bound && !rt.replacing {
                return Err(format!(
                    "gang {} has {placed} of {total} pods placed, below its minMember {min_member}",
                    wl.name
                ));
            }
        }
        self.check_pods_ready_tracking()?;
        for fr in (0..self.kueue.tree.fr_count()).map(|f| Fr(f as u32)) {
            let (f, r) = self.kueue.tree.split(fr);
            let what = format!("{}/{}", world.flavor(f).name, world.resources.name(r));
            for (c, cq) in world.cluster_queues.iter().enumerate() {
                let n = self.kueue.tree.cq_node(ClusterQueueId::from_index(c));
                let used = self.kueue.tree.usage(n, fr);
                if used != expected.usage(n, fr) {
                    return Err(format!(
                        "ClusterQueue {} usage of {what} is {used}, its workloads hold {}",
                        cq.name,
                        expected.usage(n, fr)
                    ));
                }
                let limit = cq_limit(&self.kueue.tree, cq.cohort.is_some(), n, fr)
                    .saturating_add(self.kueue.over_quota_allowed(n, fr));
                let used = live.usage(n, fr);
                if used > limit {
                    return Err(format!(
                        "ClusterQueue {} uses {used} of {what}, above nominal + borrowingLimit {limit}",
                        cq.name
                    ));
                }
            }
            // A cohort uses at most what its subtree lends it plus what it may borrow: the
            // root nothing beyond its subtree quota (which counts only lendable quota), inner
            // cohorts up to their borrowingLimit.
            for (j, co) in world.cohorts.iter().enumerate() {
                let n = self
                    .kueue
                    .tree
                    .cohort_node(kueuesim_model::CohortId::from_index(j));
                let limit = cohort_limit(&self.kueue.tree, n, fr)
                    .map(|l| l + self.kueue.over_quota_allowed(n, fr));
                if let Some(limit) = limit
                    && live.usage(n, fr) > limit
                {
                    return Err(format!(
                        "cohort {} uses {} of {what}, more than it may ({limit})",
                        co.name,
                        live.usage(n, fr)
                    ));
                }
            }
        }
        let mut cap = NodeCapacity::new(world);
        for rt in self
            .runtimes
            .iter()
            .map(|(_, rt)| rt)
            .filter(|rt| rt.record.state != WorkloadState::Finished)
        {
            for (ps, slots) in rt.record.placement.iter().enumerate() {
                for n in slots.iter().flatten() {
                    cap.apply(*n, &rt.needs[ps].requests, 1);
                }
            }
        }
        // Nodes that changed: a closed node's block holds everything its pods leave, an open
        // one's its failed GPUs; no pod is on a node that is down; a workload whose lost pods
        // are being replaced waits for its scheduler (or is on its way out).
        if let Some(states) = &self.sched.nodes {
            for n in 0..world.nodes.len() {
                let id = NodeId::from_index(n);
                let block: Vec<(ResourceId, i64)> = (0..world.resources.len())
                    .map(|r| (ResourceId::from_index(r), states.blocked(id, r)))
                    .filter(|&(_, a)| a != 0)
                    .collect();
                cap.apply(id, &kueuesim_model::ResourceList::from_pairs(block), 1);
                cap.apply(
                    id,
                    &kueuesim_model::ResourceList::default(),
                    states.blocked_pods(id) - 1,
                );
                if states.closed(id) && self.sched.cluster.nodes.free_pods(id) != 0 {
                    return Err(format!(
                        "node {} is cordoned, removed or failed but has {} pod slots free",
                        world.nodes[n].name,
                        self.sched.cluster.nodes.free_pods(id)
                    ));
                }
                for r in 0..world.resources.len() {
                    let free = self.sched.cluster.nodes.free(id, r);
                    if states.closed(id) && free > 0 {
                        return Err(format!(
                            "node {} is cordoned, removed or failed but has {free} {} free",
                            world.nodes[n].name,
                            world.resources.name(ResourceId::from_index(r))
                        ));
                    }
                }
                // A failed GPU is held back as soon as no pod holds it.
                if let Some(g) = self.sched.cluster.res.gpu
                    && !states.closed(id)
                {
                    let failed = i64::from(states.failed_gpus[n]);
                    let blocked = states.blocked(id, g);
                    if blocked > failed
                        || (blocked < failed && self.sched.cluster.nodes.free(id, g) > 0)
                    {
                        return Err(format!(
                            "node {} has {failed} failed GPUs but {blocked} held back with {} free",
                            world.nodes[n].name,
                            self.sched.cluster.nodes.free(id, g)
                        ));
                    }
                }
            }
            for (i, rt) in self.runtimes.iter() {
                if rt.record.state == WorkloadState::Finished {
                    continue;
                }
                for n in rt.record.placement.iter().flatten().flatten() {
                    if states.down(*n) {
                        return Err(format!(
                            "{} has a pod on node {}, which is removed or failed",
                            rt.spec.name,
                            world.node(*n).name
                        ));
                    }
                }
                // Every lost pod is replaced before the workload runs again.
                if rt.record.state == WorkloadState::Running
                    && rt.record.placement.iter().flatten().any(Option::is_none)
                {
                    return Err(format!(
                        "{} is running with a pod that is not placed",
                        rt.spec.name
                    ));
                }
                let w = WorkloadId::from_index(i);
                let waiting = self
                    .sched
                    .awaiting_placement
                    .iter()
                    .any(|&(_, _, x)| x == w);
                if rt.replacing
                    && matches!(
                        rt.record.state,
                        WorkloadState::Admitted | WorkloadState::Pending
                    )
                    && rt.record.placement.iter().flatten().any(Option::is_none)
                    && !waiting
                {
                    return Err(format!(
                        "{} lost pods that are neither replaced nor waiting for their scheduler",
                        rt.spec.name
                    ));
                }
            }
        }
        // KAI's reservation pods: one GPU per device holding KAI shares.
        if let (Some(dev), Some(g)) = (&self.sched.cluster.devices, self.sched.cluster.res.gpu) {
            for (n, k) in dev.book.reservations() {
                let one =
                    kueuesim_model::ResourceList::from_pairs(vec![(ResourceId::from_index(g), k)]);
                cap.apply(n, &one, 1);
            }
        }
        for (n, node) in world.nodes.iter().enumerate() {
            let id = NodeId::from_index(n);
            for r in 0..world.resources.len() {
                let free = self.sched.cluster.nodes.free(id, r);
                let name = world.resources.name(ResourceId::from_index(r));
                if free < 0 {
                    return Err(format!(
                        "node {} is over its allocatable {name}: free {free}",
                        node.name
                    ));
                }
                if free != cap.free(id, r) {
                    return Err(format!(
                        "node {} free {name} is {free}, its pods leave {}",
                        node.name,
                        cap.free(id, r)
                    ));
                }
            }
        }
        if let Some(dev) = &self.sched.cluster.devices {
            // No device over 1000 milli or below 0, and every device's use is what the claims
            // of the bound pods hold (conservation on every bind and release).
            dev.book.check(
                self.runtimes
                    .iter()
                    .flat_map(|(_, rt)| rt.claims.iter().copied()),
            )?;
        }
        if let Some(book) = &self.sched.cluster.vgpu {
            // No vGPU device over its memory, cores or share count, and every device's use
            // is what the vGPU claims of the bound pods hold.
            book.check(
                self.runtimes
                    .iter()
                    .flat_map(|(_, rt)| rt.vgpu.iter().copied()),
            )?;
        }
        self.sched.cluster.check_indexes(world)
    }

    /// UID labels increase in UID order among the live workloads, and every label kept in a
    /// queue key or a preemption candidate is its workload's current one.
    fn check_uid_labels(&self) -> Result<(), String> {
        let mut live: Vec<(&str, usize, u64)> = self
            .runtimes
            .iter()
            .map(|(i, rt)| (rt.spec.uid.as_str(), i, rt.uid_label))
            .collect();
        live.sort();
        if let Some(w) = live.windows(2).find(|w| w[0].2 >= w[1].2) {
            return Err(format!("UID labels out of order: {w:?}"));
        }
        let label = |w: WorkloadId| self.runtimes[w.index()].uid_label;
        let keys = self
            .kueue
            .queues
            .keys()
            .chain(self.runtimes.iter().filter_map(|(_, rt)| rt.key.as_ref()));
        for k in keys {
            if k.uid_rank != label(k.workload) {
                return Err(format!(
                    "stale UID label in the queue key of {:?}",
                    k.workload
                ));
            }
        }
        for c in self.kueue.admitted.all() {
            if c.uid_rank != label(c.workload) {
                return Err(format!("stale UID label in the candidate {:?}", c.workload));
            }
        }
        self.kueue.admitted.check_priorities()
    }

    /// `not_ready` counts the workloads holding quota without `PodsReady=True`; a cycle is
    /// suspended only while one exists; and with `blockAdmission`, at most one workload that
    /// is not on its way out (and not admitted in the input) lacks ready pods: admissions
    /// are one at a time.
    fn check_pods_ready_tracking(&self) -> Result<(), String> {
        let world = self.world;
        let not_ready: Vec<WorkloadId> = self
            .runtimes
            .iter()
            .map(|(i, _)| WorkloadId::from_index(i))
            .filter(|&w| {
                self.kueue.admitted.candidate(w).is_some()
                    && !self.runtimes[w.index()]
                        .record
                        .conditions
                        .iter()
                        .any(|c| c.kind == ConditionType::PodsReady && c.status)
            })
            .collect();
        if not_ready.len() != self.kueue.not_ready {
            return Err(format!(
                "{} workloads hold quota without PodsReady, not_ready says {}",
                not_ready.len(),
                self.kueue.not_ready
            ));
        }
        if self.kueue.suspended.is_some() && !self.admission_blocked() {
            return Err("a cycle is suspended but nothing blocks admission".into());
        }
        let block = world
            .config
            .kueue
            .wait_for_pods_ready
            .as_ref()
            .is_some_and(|c| c.block_admission);
        let fresh: Vec<&str> = not_ready
            .iter()
            .filter(|&&w| {
                self.kueue.admitted.candidate(w).is_some_and(|c| !c.evicted)
                    && self.spec(w).initial_admission.is_none()
                    // Pods that failed after they were ready are a recovery, not an admission.
                    && !self.runtimes[w.index()].record.conditions.iter().any(|c| {
                        c.kind == ConditionType::PodsReady && c.reason == "WaitForRecovery"
                    })
            })
            .map(|&w| self.runtimes[w.index()].spec.name.as_str())
            .collect();
        if block && fresh.len() > 1 {
            return Err(format!(
                "blockAdmission, yet several admitted workloads wait for their pods: {fresh:?}"
            ));
        }
        Ok(())
    }
}

/// What a ClusterQueue may use of `fr` (its node `n`): its nominal quota, plus its
/// borrowingLimit in a cohort (no limit there without one).
pub(super) fn cq_limit(tree: &QuotaTree, in_cohort: bool, n: NodeIdx, fr: Fr) -> i64 {
    match (in_cohort, tree.borrowing_limit(n, fr)) {
        (false, _) => tree.nominal(n, fr),
        (true, Some(bl)) => tree.nominal(n, fr) + bl,
        (true, None) => i64::MAX,
    }
}

/// What a cohort may use of `fr`: the root nothing beyond its subtree quota, an inner cohort
/// up to its borrowingLimit above it (None: no limit).
pub(super) fn cohort_limit(tree: &QuotaTree, n: NodeIdx, fr: Fr) -> Option<i64> {
    match (tree.parent(n), tree.borrowing_limit(n, fr)) {
        (None, _) => Some(tree.subtree_quota(n, fr)),
        (Some(_), Some(bl)) => Some(tree.subtree_quota(n, fr) + bl),
        (Some(_), None) => None,
    }
}
