//! `waitForPodsReady`: tracking the workloads holding quota without ready pods, blocking
//! admission, and the PodsReady timeout with its requeue back-off.

use kueuesim_model::{SimDuration, WorkloadId};

use crate::outcome::{ConditionType, WorkloadState};
use crate::preemption::AdmittedWorkloads;

use super::Simulation;

impl<'w> Simulation<'w> {
    /// `waitForPodsReady.blockAdmission` and some workload holding quota is not ready
    /// (`PodsReadyForAllAdmittedWorkloads` is false).
    pub(super) fn admission_blocked(&self) -> bool {
        self.kueue.not_ready > 0
            && self
                .world
                .config
                .kueue
                .wait_for_pods_ready
                .as_ref()
                .is_some_and(|c| c.block_admission)
    }

    /// Keeps `not_ready` in step with the cache's `WorkloadsNotReady`: a workload is in it
    /// while it holds quota without `PodsReady=True`.
    pub(super) fn track_ready(&mut self, w: WorkloadId) {
        let rt = &self.runtimes[w.index()];
        let want = self.kueue.admitted.candidate(w).is_some()
            && !rt
                .record
                .conditions
                .iter()
                .any(|c| c.kind == ConditionType::PodsReady && c.status);
        if want != rt.not_ready {
            // PodsReady changing on an admitted workload is an update in the cache, which
            // moves its ClusterQueue's allocatable generation.
            if let Some(c) = self.kueue.admitted.candidate(w) {
                self.kueue.cq_generation[c.cq.index()] += 1;
            }
            self.runtimes[w.index()].not_ready = want;
            if want {
                self.kueue.not_ready += 1;
            } else {
                self.kueue.not_ready -= 1;
            }
        }
    }

    /// `waitForPodsReady`: an admitted workload whose pods are not all running by the timeout
    /// is evicted (`PodsReadyTimeout`) and requeued after a back-off of
    /// `backoffBase·2^(n−1)` capped at `backoffMax` (no jitter), or deactivated once it was
    /// requeued `backoffLimitCount` times.
    pub(super) fn pods_ready_timeout(&mut self, w: WorkloadId) {
        if self.runtimes[w.index()].record.state != WorkloadState::Admitted {
            return;
        }
        let Some(cfg) = self.world.config.kueue.wait_for_pods_ready.clone() else {
            return;
        };
        let count = self.runtimes[w.index()].record.requeue_count;
        if cfg.backoff_limit.is_some_and(|limit| count + 1 > limit) {
            self.runtimes[w.index()].deactivated = true;
            self.release_quota(w);
            self.evict(
                w,
                "DeactivatedDueToRequeuingLimitExceeded",
                None,
                None,
                "The workload is deactivated due to exceeding the maximum number of re-queuing retries".into(),
                None,
            );
            return;
        }
        let n = count + 1;
        let backoff_ms = cfg
            .backoff_base
            .millis()
            .saturating_mul(1i64.checked_shl(n - 1).unwrap_or(i64::MAX))
            .min(cfg.backoff_max.millis());
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.requeue_count = n;
            let at = self.now + SimDuration::from_millis(backoff_ms);
            rt.requeue_at = Some(at);
        }
        let wl = self.spec(w);
        let message = format!(
            "Exceeded the PodsReady timeout {}/{}",
            wl.namespace, wl.name
        );
        self.evict(w, "PodsReadyTimeout", None, None, message, None);
    }

    /// The PodsReady back-off ended: `Requeued=True` (`BackoffFinished`) and back to the heap.
    pub(super) fn backoff_expired(&mut self, w: WorkloadId) {
        if self.runtimes[w.index()].record.state != WorkloadState::Pending {
            return;
        }
        self.runtimes[w.index()].requeue_at = None;
        self.set_condition(
            w,
            ConditionType::Requeued,
            true,
            "BackoffFinished",
            "The workload backoff was finished",
        );
        if let Some((cq, key)) = self.queued_at(w) {
            self.kueue.queues.push_active(cq, key);
            self.bound_queued(w);
            self.request_cycle();
        }
    }
}
