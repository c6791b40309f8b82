//! The pod lifecycle after placement: pods running, the workload finishing, and the GPU time its
//! pods account.

use kueuesim_model::{SimDuration, SimTime, WorkloadId};

use crate::outcome::{ConditionType, WorkloadState};

use super::arrival::Feed;
use super::runtime::{Runtime, Spec};
use super::{Ev, Recorder, Simulation};

impl<'w> Simulation<'w> {
    pub(super) fn schedule_running(&mut self, w: WorkloadId) {
        let rt = &self.runtimes[w.index()];
        let at = self.now.max(rt.starts_after) + self.world.config.pod_startup;
        self.events.push(at, Ev::PodsRunning(w, rt.generation));
    }

    pub(super) fn pods_running(&mut self, w: WorkloadId) {
        let managed = self.runtimes[w.index()].record.admission.is_some();
        if managed && !self.world.has_nodes() {
            // Quota-only: GPU use is measured against quota, so only admitted GPUs count.
            let gpus = self.workload_gpus(w);
            self.rec
                .gpu_change(&mut self.runtimes[w.index()], gpus, self.now);
        }
        self.close_idle_quota(w);
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = WorkloadState::Running;
            rt.record.running_at = Some(self.now);
            rt.record.first_running_at.get_or_insert(self.now);
            rt.runs += 1;
            rt.replacing = false;
        }
        self.progress.running += 1;
        self.progress.last_progress = self.now;
        self.serving_ready(w, true);
        if managed {
            // Ready again after a pod failed: `Recovered` (the job reconciler's
            // generatePodsReadyCondition), else `Started`.
            let recovered = self.runtimes[w.index()]
                .record
                .conditions
                .iter()
                .any(|c| c.kind == ConditionType::PodsReady && c.reason == "WaitForRecovery");
            self.set_condition(
                w,
                ConditionType::PodsReady,
                true,
                if recovered { "Recovered" } else { "Started" },
                "All pods reached readiness and the workload is running",
            );
        }
        if let Some(d) = self.spec(w).duration {
            let rt = &self.runtimes[w.index()];
            let remaining = (d - rt.progress_saved).max(SimDuration::ZERO);
            // A restart first spends its restart cost (`kueuesim.io/restart-cost`).
            let cost = if rt.runs > 1 {
                rt.spec.resilience.restart_cost
            } else {
                SimDuration::ZERO
            };
            let g = rt.generation;
            self.events
                .push(self.now + cost + remaining, Ev::Finish(w, g));
        }
    }

    pub(super) fn finish(&mut self, w: WorkloadId) {
        self.progress.last_done = self.now;
        self.progress.running -= 1;
        self.serving_ready(w, false);
        self.progress.last_progress = self.now;
        let managed = self.runtimes[w.index()].record.admission.is_some();
        self.end_run(w, true);
        self.release(w, true);
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = WorkloadState::Finished;
            rt.record.finished_at = Some(self.now);
            rt.generation += 1;
        }
        if managed {
            self.set_condition(
                w,
                ConditionType::Finished,
                true,
                "Succeeded",
                "Reached expected number of succeeded pods",
            );
        }
        self.let_go_if_lean(w);
    }

    /// A lean run lets go of a workload that is done: folded into its tally, and handed to
    /// the sink, if any.
    pub(super) fn let_go_if_lean(&mut self, w: WorkloadId) {
        if let Some(tally) = &mut self.rec.tally {
            let mut rt = self.runtimes.remove(w.index()).expect("finishing workload");
            self.kueue.uid_labels.remove(&rt.spec.uid, w, rt.uid_label);
            // Its queues' counts go to its queue pair's bucket, settled once at the end.
            tally.fold(self.world, &rt.spec, &rt.record, self.now);
            // A sink streams the record out before it goes (`run_with_sink`); else a streamed
            // spec goes back to its feed, which writes a later arrival over it
            // (`WorkloadFeed::recycle`).
            if let Some(out) = &mut self.outbox {
                let rt = *rt;
                out.push_finished(w, rt.spec, rt.record);
            } else {
                // Its record's vectors serve a later arrival (`SpareVecs`).
                self.spare_vecs.keep(&mut rt);
                if let (Spec::Streamed(spec), Feed::Stream { rest, .. }) = (rt.spec, &mut self.feed)
                {
                    rest.recycle(spec);
                }
            }
        }
    }

    /// GPU quota held while the pods are not all running (`WorkloadRecord::idle_quota_gpu_ms`),
    /// from the latest admission to now: called when the pods all run, the workload is
    /// evicted before they did, or the run ends with it admitted. Once per admission.
    pub(super) fn close_idle_quota(&mut self, w: WorkloadId) {
        self.close_idle_quota_at(w, self.now);
    }

    pub(super) fn close_idle_quota_at(&mut self, w: WorkloadId, until: SimTime) {
        let Some(g) = self.gpu else { return };
        let rt = &mut self.runtimes[w.index()];
        if !matches!(
            rt.record.state,
            WorkloadState::Admitted | WorkloadState::QuotaReserved
        ) {
            return;
        }
        let (Some(adm), Some(at)) = (&rt.record.admission, rt.record.admitted_at) else {
            return;
        };
        let gpus: i64 = adm
            .pod_sets
            .iter()
            .zip(&rt.spec.pod_sets)
            .map(|(a, p)| p.requests.get(g) * i64::from(a.count))
            .sum();
        // After lost pods, from the loss: the time before it ran.
        let from = rt.lost_at.map_or(at, |l| l.max(at));
        let held = (until - from).max(SimDuration::ZERO);
        rt.record.idle_quota_gpu_ms += i128::from(gpus) * i128::from(held.millis());
    }

    pub(super) fn workload_gpus(&self, w: WorkloadId) -> i64 {
        let Some(g) = self.gpu else { return 0 };
        let rt = &self.runtimes[w.index()];
        rt.needs
            .iter()
            .zip(&rt.record.placement)
            .map(|(n, slots)| n.requests.get(g) * slots.len() as i64)
            .sum()
    }
}

/// GPU accounting: run-wide GPU time and each workload's and ClusterQueue's own.
impl Recorder {
    /// Run-wide GPU time up to `at` (`RunStats::gpu_busy_ms`): what is in use now has been
    /// since the last event.
    pub(super) fn gpu_busy_until(&mut self, at: SimTime) {
        let dt = (at - self.last_accounted).millis();
        self.stats.gpu_busy_ms += i128::from(self.gpus_in_use) * i128::from(dt);
        self.last_accounted = at;
    }

    /// GPUs taken (`delta` > 0) or given back by a workload (`rt`): the run-wide and the workload's own
    /// GPU time.
    pub(super) fn gpu_change(&mut self, rt: &mut Runtime<'_>, delta: i64, now: SimTime) {
        self.account_cq_gpus(rt, now);
        rt.record.gpu_ms += i128::from(rt.gpus_held) * i128::from((now - rt.gpus_since).millis());
        rt.gpus_held += delta;
        rt.gpus_since = now;
        self.gpus_in_use += delta;
    }

    /// Adds the GPU time a workload held since its last change, up to `until`, to its
    /// ClusterQueue's hourly series.
    pub(super) fn account_cq_gpus(&mut self, rt: &Runtime<'_>, until: SimTime) {
        let (Some(adm), gpus) = (&rt.record.admission, rt.gpus_held) else {
            return;
        };
        if gpus == 0 || until <= rt.gpus_since {
            return;
        }
        self.stats.cq_gpu_seconds_by_hour[adm.cluster_queue.index()].add_gpu_time(
            rt.gpus_since.millis(),
            until.millis(),
            gpus,
        );
    }
}
