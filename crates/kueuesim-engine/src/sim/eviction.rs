//! Eviction and requeueing: evicting a workload, releasing its quota and nodes once its pods are
//! gone, and putting workloads back in their queues (`QueueInadmissibleWorkloads`).

use kueuesim_model::quota::{NodeIdx, QuotaTree};
use kueuesim_model::{ClusterQueueId, QueueRef, SimDuration, StopPolicy, WorkloadId};

use crate::admission::{self, Head, NotAdmitted, ScanProgress};
use crate::outcome::{ConditionType, EventType, Eviction, WorkloadState};
use crate::queues::{QueueStatus, RequeueReason};

use super::record::{KUEUE_ADMISSION, KUEUE_WORKLOAD_CONTROLLER, evicted_event_reason};
use super::{Ev, Simulation};

/// `requeueBatchPeriod`: inadmissible workloads return to their heaps this long after the
/// capacity change that may let them in.
const REQUEUE_BATCH_PERIOD: SimDuration = SimDuration::from_secs(1);

impl<'w> Simulation<'w> {
    /// Puts a head back; returns whether it (or workloads parked with it) left the heap.
    pub(super) fn requeue(
        &mut self,
        head: Head,
        reason: RequeueReason,
        why: NotAdmitted,
        cycle: u64,
        scan: Option<ScanProgress>,
    ) -> bool {
        let strategy = self.world.cluster_queue(head.cq).queueing_strategy;
        // A head whose flavor scan stopped before the last flavor goes back to the heap
        // (`requeueIfNotPresent`: `LastAssignment.PendingFlavors()`), and its next attempt
        // tries other flavors. The progress stays with the workload, parked or not, as
        // upstream keeps its `Info`; whether the cycles that follow at once get anywhere is
        // the scan loop's question (`ScanLoop`), not this head's.
        let pending_flavors = scan.as_ref().is_some_and(ScanProgress::pending_flavors);
        self.set_last_assignment(head.key.workload, scan);
        self.bound_decided(head.key.workload, head.cq, &why.bound);
        let moved = self
            .kueue
            .queues
            .requeue(head.cq, strategy, head.key, reason, pending_flavors);
        let parked = !crate::queues::back_to_heap(strategy, reason, pending_flavors);
        debug_assert_eq!(
            parked,
            self.kueue.queues.status(head.cq, &head.key) == Some(QueueStatus::Inadmissible)
        );
        // Workloads parked with it get no condition: the workload controller writes one
        // only on its own reconcile (and `UnadmittedWorkloadsExplicitStatus` is off).
        self.record_event(
            head.key.workload,
            EventType::Warning,
            KUEUE_ADMISSION,
            why.reason,
            why.message.as_str(),
            Some(cycle),
        );
        // Only a modelled controller latency counts the patch; without one, skip the
        // comparison (it runs for every head that fails, thousands a second under overload).
        let changed = self.world.config.controller_latency.status_write > SimDuration::ZERO
            && self.runtimes[head.key.workload.index()]
                .record
                .conditions
                .iter()
                .find(|c| c.kind == ConditionType::QuotaReserved)
                .is_none_or(|c| c.status || c.reason != why.reason || c.message != why.message);
        if changed {
            self.status_write();
        }
        self.set_pending_condition(head.key.workload, why.reason, why.message);
        parked || moved > 0
    }

    /// `reconcileMaxExecutionTime`: the workload is deactivated and evicted.
    pub(super) fn max_execution_time_exceeded(&mut self, w: WorkloadId) {
        if !matches!(
            self.runtimes[w.index()].record.state,
            WorkloadState::Admitted | WorkloadState::Running
        ) {
            return;
        }
        let max = self
            .spec(w)
            .max_execution_time
            .expect("scheduled only with a maximum");
        self.record_event(
            w,
            EventType::Warning,
            KUEUE_WORKLOAD_CONTROLLER,
            "MaximumExecutionTimeExceeded",
            format!(
                "The maximum execution time ({}s) exceeded",
                max.millis() / 1000
            ),
            None,
        );
        self.runtimes[w.index()].deactivated = true;
        // Deactivation (`spec.active: false`) removes the workload from the scheduler's cache
        // at once: its quota is free before its pods are gone.
        self.release_quota(w);
        self.evict(
            w,
            "DeactivatedDueToMaximumExecutionTimeExceeded",
            None,
            None,
            "The workload is deactivated due to exceeding the maximum execution time".into(),
            None,
        );
    }

    /// Evicts a workload holding quota: `Evicted=True`, its job is stopped, and its pods
    /// terminate; quota and nodes are released when they are gone (`PodsGone`).
    pub(super) fn evict(
        &mut self,
        w: WorkloadId,
        reason: &'static str,
        preemption_reason: Option<&'static str>,
        preemptor: Option<String>,
        message: String,
        cycle: Option<u64>,
    ) {
        if let Some(cq) = self.kueue.admitted.mark_evicted(w) {
            // The cache takes in the evicted object: an update of an admitted workload.
            self.kueue.cq_generation[cq.index()] += 1;
        }
        self.sched.awaiting_placement.retain(|&(_, _, x)| x != w);
        self.close_idle_quota(w);
        // Evicted and backing off is waiting to run (`podsReady`); the pods of any other
        // eviction terminate first, and the workload waits again once requeued.
        if reason == "PodsReadyTimeout" {
            self.bound_own(w, crate::bound::Constraint::PodsReady);
        } else {
            self.bound_off(w);
        }
        let now = self.now;
        debug_assert!(
            crate::outcome::EVICTION_REASONS.contains(&reason),
            "{reason} is not in EVICTION_REASONS: the summary would not count it"
        );
        *self.rec.stats.evictions.entry(reason).or_default() += 1;
        if let Some(p) = preemption_reason {
            *self.rec.stats.preemptions.entry(p).or_default() += 1;
        }
        // The work done since the pods started running: kept up to the last checkpoint,
        // lost beyond it (`kueuesim.io/checkpoint-interval`, else the Simulation's
        // `spec.preemption.progress`).
        if self.runtimes[w.index()].record.state == WorkloadState::Running {
            self.progress.running -= 1;
            self.serving_ready(w, false);
            self.end_run(w, false);
        }

        let generation = {
            let rt = &mut self.runtimes[w.index()];
            if let Some(at) = rt.record.admitted_at {
                rt.past_execution += now - at;
            }
            rt.record.state = WorkloadState::Evicted;
            rt.record.evictions.push(Eviction {
                at: self.now,
                reason,
                preemption_reason,
                preemptor,
                preemptor_cluster_queue: None,
            });
            rt.generation += 1;
            rt.generation
        };
        self.set_condition(w, ConditionType::Evicted, true, reason, message.clone());
        // The job is stopped and its pods stop being ready while they terminate: the job
        // reconciler's generatePodsReadyCondition turns a True PodsReady into WaitForRecovery
        // (which keeps blockAdmission waiting) until the quota is released.
        let ready = self.runtimes[w.index()]
            .record
            .conditions
            .iter()
            .any(|c| c.kind == ConditionType::PodsReady && c.status);
        if ready {
            self.set_condition(
                w,
                ConditionType::PodsReady,
                false,
                "WaitForRecovery",
                "At least one pod has failed, waiting for recovery",
            );
        }
        self.record_event(
            w,
            EventType::Normal,
            KUEUE_ADMISSION,
            evicted_event_reason(reason),
            message,
            cycle,
        );
        self.progress.terminating += 1;
        self.events.push(
            self.now + self.world.config.pod_termination,
            Ev::PodsGone(w, generation),
        );
    }

    /// Controller latency: an evicted workload's quota is released no earlier than `at`, when
    /// Kueue's client has written its eviction: its `PodsGone` moves there if it was sooner
    /// (the earlier event becomes stale with the generation).
    pub(super) fn release_not_before(&mut self, w: WorkloadId, at: kueuesim_model::SimTime) {
        if at <= self.now + self.world.config.pod_termination {
            return;
        }
        let rt = &mut self.runtimes[w.index()];
        rt.generation += 1;
        let generation = rt.generation;
        self.events.push(at, Ev::PodsGone(w, generation));
    }

    /// The pods of an evicted workload are gone: release its nodes and quota, and requeue it
    /// (`Requeued=True`) at its queue-order timestamp.
    pub(super) fn pods_gone(&mut self, w: WorkloadId) {
        self.progress.terminating -= 1;
        self.release(w, false);
        if self.runtimes[w.index()].scaled_down {
            self.end_deleted(w);
            return;
        }
        let (reason, message) = self.runtimes[w.index()]
            .record
            .conditions
            .iter()
            .find(|c| c.kind == ConditionType::Evicted && c.status)
            .map(|c| (c.reason, c.message.clone()))
            .unwrap_or(("Evicted", std::borrow::Cow::Borrowed("")));
        let deactivated = self.runtimes[w.index()].deactivated;
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = if deactivated {
                WorkloadState::Inactive
            } else {
                WorkloadState::Pending
            };
            rt.record.admission = None;
            rt.unhealthy_node = None;
            rt.record.running_at = None;
            // Back in its queue: time in queue runs again (back-off included).
            rt.record.pending_since = self.now;
        }
        // Only a preemption requeues at once (`setRequeued`); other evictions wait (back-off,
        // a stopped queue) or end (deactivation).
        self.set_condition(
            w,
            ConditionType::Requeued,
            reason == "Preempted",
            reason,
            message.clone(),
        );
        self.set_pending_condition(w, "PendingEvaluation", message);
        self.set_condition(
            w,
            ConditionType::PodsReady,
            false,
            "WaitForStart",
            "Not all pods are ready or succeeded",
        );
        if deactivated {
            return;
        }
        let world = self.world;
        if let QueueRef::Local(lq) = &self.spec(w).queue {
            let lq = world.local_queue(*lq);
            let cq = lq.cluster_queue;
            // The workload controller's getQueueBlocker: a stopped LocalQueue takes nothing
            // back; a stopped ClusterQueue keeps it without popping it.
            if lq.stop_policy != StopPolicy::None {
                let msg = format!("LocalQueue {} is inactive", lq.name);
                self.set_pending_condition(w, admission::REASON_SUSPENDED, msg);
                self.bound_queued(w);
                return;
            }
            let key = self.queue_key(w);
            self.runtimes[w.index()].key = Some(key);
            let strategy = world.cluster_queue(cq).queueing_strategy;
            match self.runtimes[w.index()].requeue_at {
                // In its back-off window a workload waits as inadmissible (and stays bound
                // by its PodsReady eviction).
                Some(at) if at > self.now => {
                    self.kueue.queues.park(cq, key);
                    let g = self.runtimes[w.index()].generation;
                    self.events.push(at, Ev::BackoffExpired(w, g));
                }
                _ => {
                    self.kueue.queues.add(cq, strategy, key);
                    self.bound_queued(w);
                }
            }
            if self.kueue.cq_stopped[cq.index()] || self.kueue.tree.in_cycle(cq) {
                let msg = format!("ClusterQueue {} is inactive", world.cluster_queue(cq).name);
                self.set_pending_condition(w, admission::REASON_SUSPENDED, msg);
            }
            self.request_cycle();
        }
    }

    /// Gives back a workload's nodes and quota, and notifies the queues of the freed capacity.
    /// A finished workload keeps its placement in its record (for the report); an evicted one
    /// starts over.
    pub(super) fn release(&mut self, w: WorkloadId, keep_placement: bool) {
        let managed_quota_only =
            !self.world.has_nodes() && self.runtimes[w.index()].record.admission.is_some();
        if managed_quota_only && self.runtimes[w.index()].record.running_at.is_some() {
            let gpus = self.workload_gpus(w);
            self.rec
                .gpu_change(&mut self.runtimes[w.index()], -gpus, self.now);
        }
        let claims = std::mem::take(&mut self.runtimes[w.index()].claims);
        for (node, claim) in claims {
            self.sched.cluster.apply_claim(self.world, node, claim, -1);
        }
        // Every vGPU share goes back (upstream's `SubResource` on the pod's devices).
        let vgpu = std::mem::take(&mut self.runtimes[w.index()].vgpu);
        if let Some(book) = self.sched.cluster.vgpu.as_mut() {
            for (node, claim) in vgpu {
                book.apply(node, claim, -1);
            }
        }
        // Each bound pod's requests go back to its node, read in place (a release happens for
        // every workload that ran).
        let mut released = 0usize;
        // The GPUs the pods held: given back in one `gpu_change` after the loop, which is
        // what one call per pod adds up to (at one instant only the first call accounts
        // time, and the nodes' bookkeeping in between reads no GPU time).
        let mut gpus_back = 0;
        // The nodes pods left, for the autoscaler's unneeded-node clock.
        let mut left: Vec<kueuesim_model::NodeId> = Vec::new();
        let world = self.world;
        let rt = &self.runtimes[w.index()];
        for (ps, slots) in rt.record.placement.iter().enumerate() {
            for &node in slots.iter().flatten() {
                released += 1;
                if self.autoscale.is_some() {
                    left.push(node);
                }
                let req = &rt.needs[ps].requests;
                self.sched.cluster.apply(world, node, req, -1);
                // A closed node takes what the pod gave back into its block.
                if let Some(states) = self.sched.nodes.as_mut()
                    && (states.closed(node) || states.failed_gpus[node.index()] > 0)
                {
                    states.sync(world, &mut self.sched.cluster, node);
                }
                if let Some(g) = self.gpu {
                    gpus_back += req.get(g);
                }
            }
        }
        if released > 0 && self.gpu.is_some() {
            self.rec
                .gpu_change(&mut self.runtimes[w.index()], -gpus_back, self.now);
        }
        if !keep_placement {
            // Every pod is gone: nothing is being replaced any more.
            self.runtimes[w.index()].replacing = false;
            for slots in &mut self.runtimes[w.index()].record.placement {
                slots.iter_mut().for_each(|s| *s = None);
            }
            for slots in &mut self.runtimes[w.index()].record.bound_at {
                slots.iter_mut().for_each(|s| *s = None);
            }
        }
        self.sched.awaiting_placement.retain(|&(_, _, x)| x != w);
        self.runtimes[w.index()].released = true;
        if !left.is_empty() {
            left.sort();
            left.dedup();
            self.autoscale_released(&left);
        }
        self.release_quota(w);
        // While nodes change (`Schedulers::nodes_changing`) the schedulers look once all of
        // the change has applied.
        if released > 0 && !self.sched.nodes_changing {
            self.retry_placements();
        }
    }

    /// Gives back the quota a workload holds (if it still does) and notifies the queues.
    pub(super) fn release_quota(&mut self, w: WorkloadId) {
        if let Some(c) = self.kueue.admitted.remove(w) {
            // Removing an admitted workload from the cache moves its ClusterQueue's
            // allocatable generation (`clusterQueue.deleteWorkload`).
            self.kueue.cq_generation[c.cq.index()] += 1;
            self.track_ready(w);
            let usage = std::mem::take(&mut self.runtimes[w.index()].usage);
            self.afs_release(w, &usage);
            let node = self.kueue.tree.cq_node(c.cq);
            for (fr, amount) in usage {
                self.kueue.tree.remove_usage(node, fr, amount);
            }
            self.notify_capacity_freed(c.cq);
            // Upstream's scheduler loop keeps cycling while heads are waiting, so heads still
            // in a heap (StrictFIFO, or not yet tried) see the freed quota at once.
            if self.kueue.queues.any_active() {
                self.request_cycle();
            }
        }
    }

    /// Quota was freed in `cq`: its inadmissible workloads, or those of its whole cohort tree,
    /// return to their heaps after the batch period (`NotifyRetryInadmissible`).
    pub(super) fn notify_capacity_freed(&mut self, cq: ClusterQueueId) {
        self.notify_retry_inadmissible(cq, SimDuration::ZERO);
    }

    /// `NotifyRetryInadmissible` for `cq` after `delay` (a controller's own batch period)
    /// and the requeuer's batch period; a requeue of its tree already pending stands for it.
    pub(super) fn notify_retry_inadmissible(&mut self, cq: ClusterQueueId, delay: SimDuration) {
        if self.kueue.tree.in_cycle(cq) {
            return;
        }
        let target = self.kueue.tree.root(self.kueue.tree.cq_node(cq));
        if !self.kueue.requeue_pending[target.0 as usize] {
            self.kueue.requeue_pending[target.0 as usize] = true;
            self.events.push(
                self.now + delay + REQUEUE_BATCH_PERIOD,
                Ev::RequeueInadmissible(target),
            );
        }
    }

    pub(super) fn requeue_inadmissible(&mut self, target: NodeIdx) {
        self.kueue.requeue_pending[target.0 as usize] = false;
        let mut moved = 0;
        let world = self.world;
        let now = self.now;
        // Only the ClusterQueues with something parked can change (`QueueManager::
        // with_parked`): a release in a cohort of thousands of idle ClusterQueues visits the
        // few with parked workloads, not all of them.
        let mut cqs = std::mem::take(&mut self.kueue.requeue_cqs);
        cqs.clear();
        cqs.extend(
            self.kueue
                .queues
                .with_parked()
                .filter(|&cq| under(&self.kueue.tree, cq, target)),
        );
        for &cq in &cqs {
            // Namespace-mismatched workloads stay parked (`queueInadmissibleWorkloads`).
            let selector = &world.cluster_queue(cq).namespace_selector;
            // With a selector that takes every namespace, every parked workload not in its
            // back-off returns: move them all at once.
            let takes_all = selector.as_ref().is_some_and(|s| s.selects_everything());
            if takes_all {
                // Tests (debug builds) check it against looking at each parked workload.
                #[cfg(debug_assertions)]
                let expected = {
                    let q = self.kueue.queues.queue(cq);
                    let rts = &self.runtimes;
                    q.inadmissible_keys()
                        .filter(|k| {
                            rts[k.workload.index()]
                                .requeue_at
                                .is_none_or(|at| at <= now)
                        })
                        .count()
                };
                // The workloads in their PodsReady back-off (`backoffWaitingTimeExpired`)
                // are held apart (`QueueManager::park`) and stay unless it has ended.
                let runtimes = &self.runtimes;
                let n = self.kueue.queues.requeue_all_inadmissible(cq, |w| {
                    runtimes[w.index()].requeue_at.is_none_or(|at| at <= now)
                });
                #[cfg(debug_assertions)]
                assert_eq!(
                    n, expected,
                    "a parked workload in back-off returned, or another stayed"
                );
                moved += n;
                continue;
            }
            let runtimes = &self.runtimes;
            moved += self.kueue.queues.requeue_inadmissible(cq, |w| {
                // Still in its PodsReady back-off (`backoffWaitingTimeExpired`).
                if runtimes[w.index()].requeue_at.is_some_and(|at| at > now) {
                    return false;
                }
                world.namespace_selected(selector.as_ref(), &runtimes[w.index()].spec.namespace)
            });
        }
        self.kueue.requeue_cqs = cqs;
        if moved > 0 {
            self.request_cycle();
        } else {
            self.progress.idle = true;
        }
    }
}

/// Whether ClusterQueue `cq` is in the subtree rooted at `n` (a ClusterQueue under a cohort
/// cycle is under no root: it is never reached from one).
fn under(tree: &QuotaTree, cq: ClusterQueueId, n: NodeIdx) -> bool {
    if tree.in_cycle(cq) {
        return false;
    }
    let mut at = tree.cq_node(cq);
    loop {
        if at == n {
            return true;
        }
        match tree.parent(at) {
            Some(p) => at = p,
            None => return false,
        }
    }
}
