//! Retrying the workloads waiting for nodes when capacity frees: the pipelined jobs of KAI's
//! and Volcano's actions first, Volcano's queue-ordered jobs and KAI's own deferred to their
//! sessions, and a request that just failed not tried again in the same pass.

use kueuesim_model::{NodeId, SchedulerKind, WorkloadId};

use crate::placement::PodNeeds;

use super::Simulation;
use super::runtime::Spec;

impl<'w> Simulation<'w> {
    /// Whether workload `w` is pipelined onto its victims' releasing resources: KAI's or
    /// Volcano's reclaim or preempt chose it; what they give back is its, ahead of every job
    /// that was waiting before (upstream binds it there in the next session; a job of the
    /// victims' queue, which the action took over its fair share, would otherwise take them
    /// back).
    pub(super) fn pipelined(&self, w: WorkloadId) -> bool {
        let rt = &self.runtimes[w.index()];
        rt.kai_is_pipelined() || rt.volcano_pipelined.is_some_and(|t| t >= self.now)
    }

    /// Retries every workload waiting for nodes, in scheduler queue order; the Volcano jobs
    /// that Volcano takes queue by queue (`volcano_order`), and the KAI jobs of KAI's
    /// session (`kai_session`), in their sessions at the end of this instant.
    ///
    /// Within one pass, a workload whose pods, bindings, gang and topology request are those
    /// of one that just failed is not tried again: nothing it could use changed in between
    /// (placements in the pass only take capacity), so it would fail the same way and its
    /// scheduler's event would repeat word for word (Kubernetes aggregates such events).
    /// This keeps a long queue of identical pods from costing a full node scan each per
    /// release.
    pub(super) fn retry_placements(&mut self) {
        // Kueue's second pass first: a TAS workload's failed node replaced (or the workload
        // evicted) before its pods are placed again.
        self.replace_failed_nodes();
        // Into the last pass's vector (a pass nested in this one finds it taken and makes
        // its own).
        let mut waiting = std::mem::take(&mut self.sched.waiting_scratch);
        waiting.clear();
        waiting.extend(self.sched.awaiting_placement.iter().map(|&(_, _, w)| w));
        if waiting.iter().any(|&w| self.pipelined(w)) {
            waiting.sort_by_key(|&w| !self.pipelined(w));
        }
        let mut failed = std::mem::take(&mut self.failed_keys);
        let mut to_volcano_session = false;
        for &w in &waiting {
            // Volcano takes these in its session of this instant, queue by queue, once
            // everything else of the instant is done (upstream's allocate sees the
            // cluster as its session opens).
            if self.volcano_queue_ordered(w) && !self.pipelined(w) {
                to_volcano_session = true;
                continue;
            }
            // So does KAI, for the jobs of its queues that Kueue does not manage.
            if self.kai_session_job(w) && !self.pipelined(w) {
                self.kai_session_for(w);
                continue;
            }
            self.retry_one(w, &mut failed);
        }
        // The pass is over: its keys serve the next pass's attempts.
        self.spare_keys.append(&mut failed);
        self.failed_keys = failed;
        self.sched.waiting_scratch = waiting;
        if to_volcano_session {
            self.defer_to_volcano_session();
        }
    }

    /// One attempt of `retry_placements`, skipped when a workload of the same request
    /// failed earlier in the pass (`failed`).
    pub(super) fn retry_one(&mut self, w: WorkloadId, failed: &mut Vec<Key<'w>>) {
        let rt = &self.runtimes[w.index()];
        let kind = self.scheduler_of(w);
        // Compared in place: the key is copied only for a workload that is tried.
        let same = |k: &Key<'w>| {
            k.0 == kind
                && k.1.len() == rt.needs.len().min(rt.record.placement.len())
                && k.1
                    .iter()
                    .zip(rt.needs.iter().zip(&rt.record.placement))
                    .all(|(a, (needs, placed))| a.0 == *needs && a.1 == *placed)
                && k.2.0.gang == rt.spec.gang
                && match (&k.3, &rt.record.admission) {
                    (None, None) => true,
                    (Some(t), Some(a)) => {
                        t.len() == a.pod_sets.len()
                            && t.iter().zip(&a.pod_sets).all(|(t, p)| *t == p.topology)
                    }
                    _ => false,
                }
        };
        if failed.iter().any(same) {
            self.scale_up_for_pending(w);
            return;
        }
        // The state before the attempt, which a failed attempt may have changed: written
        // over a spare key's vectors (a key of an attempt that succeeded, or of an earlier
        // pass), so that trying allocates nothing once keys of this shape have been made.
        let mut key = match self.spare_keys.pop() {
            Some(mut key) => {
                key.0 = kind;
                key.2 = GangOf(rt.spec.clone());
                key
            }
            None => (kind, Vec::new(), GangOf(rt.spec.clone()), None),
        };
        rt.pods_into(&mut key.1);
        match &rt.record.admission {
            None => key.3 = None,
            Some(a) => {
                let t = key.3.get_or_insert_with(Vec::new);
                t.clear();
                t.extend(a.pod_sets.iter().map(|p| p.topology.clone()));
            }
        }
        if self.try_place(w) {
            self.spare_keys.push(key);
        } else {
            failed.push(key);
            self.scale_up_for_pending(w);
        }
    }
}

/// A workload's gang request, compared by value.
#[derive(Clone)]
pub(super) struct GangOf<'w>(Spec<'w>);

impl PartialEq for GangOf<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.gang == other.0.gang
    }
}

/// What a failed attempt of `retry_placements` tried: the scheduler, each pod set's needs
/// and bindings, the gang request and the topology assignment.
pub(super) type Key<'k> = (
    SchedulerKind,
    Vec<(PodNeeds, Vec<Option<NodeId>>)>,
    GangOf<'k>,
    Option<Vec<Option<crate::tas::TopologyAssignment>>>,
);
