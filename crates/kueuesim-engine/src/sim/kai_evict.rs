//! KAI's evictions for reclaim and preempt: what an evicted job or an elastic job's evicted
//! pods record, their termination, and what comes back once they are gone (the victims'
//! new pods, the pipelined job first).

use std::cmp::Reverse;

use kueuesim_model::{SchedulerKind, WorkloadId};

use crate::outcome::{EventType, Eviction, WorkloadState};

use super::kai_actions::KaiAction;
use super::runtime::KaiVictim;
use super::{Ev, Simulation};

impl Simulation<'_> {
    /// KAI evicts pods `pods` (pod set, index) of an elastic job above its minimum for
    /// reclaim or preempt (upstream's victim tasks); the job keeps its other pods. The
    /// events are those of a whole job's eviction, for these pods; the pods terminate
    /// (`podTermination`), then are lost pods replaced by the job's controller
    /// (`kai_victim_pods_gone`).
    pub(super) fn kai_evict_pods(
        &mut self,
        v: WorkloadId,
        pods: &[(usize, usize)],
        by: &str,
        queue: &str,
        action: KaiAction,
    ) {
        self.kai_record_eviction(v, pods, by, queue, action);
        self.runtimes[v.index()].kai_releasing = pods.to_vec();
    }

    /// `Ev::KaiVictimPodsGone`: the pods reclaim or preempt evicted for `w` are gone, an
    /// elastic victim's among them. Every victim's pods are released first and `w`, pipelined,
    /// is tried before anything else; then a whole victim's new pods wait for KAI, and an
    /// elastic victim's evicted pods are lost pods (`Loss::KaiEvicted`: its controller
    /// replaces them; a bare Pod of a PodGroup is pending again, as for Volcano's evictions).
    /// Whether there were victims.
    pub(super) fn kai_victim_pods_gone(&mut self, w: WorkloadId) -> bool {
        let victims = std::mem::take(&mut self.runtimes[w.index()].kai_victims);
        if victims.is_empty() {
            return false;
        }
        let mut lost = Vec::new();
        let mut whole = Vec::new();
        for KaiVictim {
            job: v,
            pods,
            generation,
        } in victims
        {
            match pods {
                None => {
                    if self.runtimes[v.index()].generation == generation {
                        self.release(v, false);
                        whole.push(v);
                    }
                }
                Some(pods) => {
                    let rt = &mut self.runtimes[v.index()];
                    rt.kai_releasing.clear();
                    let pods: Vec<(usize, usize)> = pods
                        .into_iter()
                        .filter(|&(ps, i)| rt.record.placement[ps][i].is_some())
                        .collect();
                    let done = matches!(
                        rt.record.state,
                        WorkloadState::Finished | WorkloadState::Evicted | WorkloadState::Inactive
                    );
                    self.release_pods(v, &pods);
                    if !done && !pods.is_empty() {
                        lost.push((v, pods));
                    }
                }
            }
        }
        self.retry_placements();
        for v in whole {
            self.kai_pods_gone_requeue(v);
        }
        for (v, pods) in lost {
            self.lose_pods(v, &pods, super::pod_loss::Loss::KaiEvicted, None);
        }
        self.retry_placements();
        true
    }

    /// KAI evicts a job for reclaim or preempt: its pods terminate (`podTermination`), then
    /// its controller's new pods wait for KAI again.
    /// Its generation after the eviction; `gone_event`: whether `Ev::KaiPodsGone` ends it
    /// (else the action's `Ev::KaiVictimPodsGone` does).
    pub(super) fn kai_evict(
        &mut self,
        v: WorkloadId,
        by: &str,
        queue: &str,
        action: KaiAction,
        gone_event: bool,
    ) -> u32 {
        let now = self.now;
        if self.runtimes[v.index()].record.state == WorkloadState::Running {
            self.progress.running -= 1;
            self.serving_ready(v, false);
            let gpus = self.workload_gpus(v);
            let rt = &mut self.runtimes[v.index()];
            let lost =
                i128::from(gpus) * i128::from((now - rt.record.running_at.unwrap_or(now)).millis());
            rt.record.lost_gpu_ms += lost;
            self.rec.stats.lost_gpu_ms += lost;
        }
        self.sched.awaiting_placement.retain(|&(_, _, x)| x != v);
        let generation = {
            let rt = &mut self.runtimes[v.index()];
            rt.record.state = WorkloadState::Evicted;
            rt.generation += 1;
            rt.generation
        };
        let pods: Vec<(usize, usize)> = self.runtimes[v.index()].record.placed_pods().collect();
        self.kai_record_eviction(v, &pods, by, queue, action);
        if gone_event {
            self.events.push(
                now + self.world.config.pod_termination,
                Ev::KaiPodsGone(v, generation),
            );
        }
        generation
    }

    /// The reclaimed pods are gone: nodes released (the reclaimer, waiting, is placed), and
    /// the job's new pods wait for KAI.
    pub(super) fn kai_pods_gone(&mut self, v: WorkloadId) {
        self.release(v, false);
        self.kai_pods_gone_requeue(v);
        // A job pipelined onto the victims' resources that still does not fit (other
        // victims of its action are still going, at this same instant) comes first: the
        // victim's new pods wait for the next retry rather than take back what this one
        // gave (upstream's next session allocates the pipelined job first).
        let pipelined_waiting = self
            .sched
            .awaiting_placement
            .iter()
            .any(|&(_, _, x)| x != v && self.runtimes[x.index()].kai_is_pipelined());
        if !pipelined_waiting {
            if self.kai_session_job(v) {
                self.kai_session_for(v);
            } else {
                self.try_place(v);
            }
        }
    }

    /// A whole victim's pods are gone and released: its new pods wait for KAI.
    fn kai_pods_gone_requeue(&mut self, v: WorkloadId) {
        {
            let rt = &mut self.runtimes[v.index()];
            // Its new pods are the scheduler's again, as when Kueue releases a workload: what
            // they bind counts for its queue.
            rt.released = false;
            rt.record.state = WorkloadState::Pending;
            rt.record.running_at = None;
        }
        let prio = self.spec(v).priority;
        self.sched
            .awaiting_placement
            .insert((Reverse(prio), self.now, v));
    }

    /// What every KAI eviction for reclaim or preempt records: the victim's eviction (its
    /// reason, the preemptor), its count in `summary.evictions`, and KAI's `Evict` events:
    /// one for a reclaimed job, one per evicted pod for a preempted one (`GetPreemptMessage`).
    fn kai_record_eviction(
        &mut self,
        v: WorkloadId,
        pods: &[(usize, usize)],
        by: &str,
        queue: &str,
        action: KaiAction,
    ) {
        let now = self.now;
        self.runtimes[v.index()].record.evictions.push(Eviction {
            at: now,
            reason: action.reason(),
            preemption_reason: None,
            preemptor: Some(by.to_string()),
            preemptor_cluster_queue: None,
        });
        debug_assert!(crate::outcome::EVICTION_REASONS.contains(&action.reason()));
        *self.rec.stats.evictions.entry(action.reason()).or_default() += 1;
        let spec = self.spec(v);
        match action {
            KaiAction::Reclaim => self.record_event(
                v,
                EventType::Normal,
                SchedulerKind::Kai.event_source(),
                "Evict",
                format!("Evicted to reclaim resources for {by} of queue {queue}, which is below its fair share"),
                None,
            ),
            KaiAction::Preempt => {
                for &(ps, i) in pods {
                    self.record_event(
                        v,
                        EventType::Normal,
                        SchedulerKind::Kai.event_source(),
                        "Evict",
                        format!(
                            "Pod {}/{} was preempted by higher priority workload {by}",
                            spec.namespace,
                            spec.pod_name(ps, i)
                        ),
                        None,
                    );
                }
            }
        }
    }
}
