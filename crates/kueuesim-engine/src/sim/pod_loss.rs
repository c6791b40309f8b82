//! Pods that end before they finish (their node drained, removed or failed, their GPU failed),
//! and how the job and Kueue react: the job's controller replaces them (counted against a
//! Job's `backoffLimit`), recreates all its pods (a JobSet within `failurePolicy.maxRestarts`)
//! or fails; Kueue keeps the workload admitted while its pods are replaced (`PodsReady=False`,
//! `WaitForRecovery`, evicted after `waitForPodsReady.recoveryTimeout`); the work since the
//! last checkpoint is lost (`kueuesim.io/checkpoint-interval`).
//!
//! Also the accounting of work every run of a workload does (`end_run`): what it keeps, what
//! it loses, and its useful GPU time (`summary.goodput`, each workload's ETTR).

use std::cmp::Reverse;

use kueuesim_model::{NodeId, OnPodLoss, ProgressPolicy, SimDuration, WorkloadId};

use crate::outcome::{ConditionType, EventType, WorkloadState};

use super::{Ev, Simulation};

/// How pods ended early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Loss {
    /// `kubectl drain` evicted them.
    Evicted,
    /// Their Node object was deleted.
    NodeRemoved,
    /// Their node failed.
    NodeFailed,
    /// Their GPU failed: the pod failed in place (its node keeps its other GPUs).
    GpuFailed,
    /// KAI's `staleGangEviction` evicted them: their gang stayed below its minMember for
    /// the staleness grace period (`sim/kai_stale.rs` records KAI's own events for it).
    StaleGang,
    /// Volcano's `preempt` or `reclaim` action evicted them (`sim/volcano_evict.rs` records
    /// Volcano's `Evict` events for it).
    VolcanoEvicted,
    /// KAI's consolidation moved them to other nodes: deleted, and their replacements bind
    /// to the planned nodes (`sim/kai_consolidation.rs` records KAI's own events for it).
    Consolidation,
    /// KAI's reclaim or preempt evicted them from an elastic job above its minimum, which
    /// keeps its other pods (`sim/kai_actions.rs` records KAI's own events for it).
    KaiEvicted,
}

impl Loss {
    /// The event reason kueuesim records on the workload.
    fn reason(self) -> &'static str {
        match self {
            Loss::Evicted => "PodsEvicted",
            Loss::NodeRemoved => "NodeRemoved",
            Loss::NodeFailed => "NodeFailed",
            Loss::GpuFailed => "GPUFailed",
            Loss::StaleGang | Loss::VolcanoEvicted | Loss::Consolidation | Loss::KaiEvicted => {
                "Evict"
            }
        }
    }

    /// The event source: the Timeline's operations, or the failures.
    fn source(self) -> &'static str {
        match self {
            Loss::Evicted | Loss::NodeRemoved => TIMELINE_SOURCE,
            Loss::NodeFailed | Loss::GpuFailed => FAILURES_SOURCE,
            Loss::StaleGang | Loss::Consolidation | Loss::KaiEvicted => {
                kueuesim_model::SchedulerKind::Kai.event_source()
            }
            Loss::VolcanoEvicted => kueuesim_model::SchedulerKind::Volcano.event_source(),
        }
    }
}

/// The source of the events kueuesim records for the Timeline's node operations.
pub(super) const TIMELINE_SOURCE: &str = "kueuesim-timeline";
/// The source of the events kueuesim records for random failures.
pub(super) const FAILURES_SOURCE: &str = "kueuesim-failures";

/// What the job's controller does with lost pods.
enum Reaction {
    /// Replace the lost pods; the others keep their nodes.
    Replace,
    /// Recreate every pod of the job (a JobSet restart).
    RestartAll,
    /// The job fails, with the message Kueue copies into `Finished`.
    Fail(&'static str),
}

impl<'w> Simulation<'w> {
    /// Pods `pods` ((pod set, index)) of `w` ended early. A workload already on its way out
    /// (evicted, its pods terminating) only gives their nodes back sooner.
    pub(crate) fn lose_pods(
        &mut self,
        w: WorkloadId,
        pods: &[(usize, usize)],
        loss: Loss,
        gpu_node: Option<NodeId>,
    ) {
        let state = self.runtimes[w.index()].record.state;
        if matches!(
            state,
            WorkloadState::Evicted | WorkloadState::Finished | WorkloadState::Inactive
        ) {
            self.release_pods(w, pods);
            return;
        }
        // Quota held without running pods up to the loss is counted before the loss restarts
        // the count (`Runtime::lost_at`).
        if state == WorkloadState::Admitted {
            self.close_idle_quota(w);
        }
        // KAI: whether the gang was stale before this loss (its stale clock then runs on).
        let was_stale = self.kai_gang_stale(w);
        let wl = self.spec(w);
        // The event kueuesim records: which pods, on which nodes.
        let mut names: Vec<String> = Vec::new();
        let mut nodes: Vec<NodeId> = Vec::new();
        for &(ps, idx) in pods.iter().take(3) {
            names.push(wl.pod_name(ps, idx));
        }
        for &(ps, idx) in pods {
            if let Some(n) = self.runtimes[w.index()].record.placement[ps][idx]
                && !nodes.contains(&n)
            {
                nodes.push(n);
            }
        }
        let node_names: Vec<&str> = gpu_node
            .iter()
            .chain(&nodes)
            .take(1)
            .chain(nodes.iter().skip(1).take(2))
            .map(|&n| self.world.node(n).name.as_str())
            .collect();
        let more = if pods.len() > 3 {
            format!(" and {} more", pods.len() - 3)
        } else {
            String::new()
        };
        let message = match loss {
            Loss::Evicted => format!(
                "Pods {}{more} evicted from node {} (kubectl drain)",
                names.join(", "),
                node_names.join(", ")
            ),
            Loss::NodeRemoved => format!(
                "Node {} was deleted: pods {}{more} are gone",
                node_names.join(", "),
                names.join(", ")
            ),
            Loss::NodeFailed => format!(
                "Node {} failed: pods {}{more} are gone",
                node_names.join(", "),
                names.join(", ")
            ),
            Loss::GpuFailed => format!(
                "A GPU of node {} failed: pod {} failed",
                node_names.join(", "),
                names.join(", ")
            ),
            // KAI's and Volcano's events for it are recorded by their actions.
            Loss::StaleGang | Loss::VolcanoEvicted | Loss::Consolidation | Loss::KaiEvicted => {
                String::new()
            }
        };
        if !matches!(
            loss,
            Loss::StaleGang | Loss::VolcanoEvicted | Loss::Consolidation | Loss::KaiEvicted
        ) {
            self.record_event(
                w,
                EventType::Warning,
                loss.source(),
                loss.reason(),
                message,
                None,
            );
        }
        let reaction = self.reaction(w, pods, loss);
        let was_running = state == WorkloadState::Running;
        if was_running {
            self.progress.running -= 1;
            self.serving_ready(w, false);
            let lost = self.end_run(w, false);
            self.rec.stats.failures.lost_gpu_ms += lost;
            if lost > 0 {
                use crate::outcome::FailureCause;
                self.rec
                    .stats
                    .failures
                    .marks
                    .push(crate::outcome::FailureMark {
                        at: self.now,
                        what: match loss {
                            Loss::Evicted => FailureCause::LostToDrain,
                            Loss::NodeRemoved => FailureCause::LostToRemoval,
                            Loss::NodeFailed => FailureCause::LostToNodeFailure,
                            Loss::GpuFailed => FailureCause::LostToGpuFailure,
                            Loss::StaleGang => FailureCause::LostToStaleGangEviction,
                            Loss::VolcanoEvicted => FailureCause::LostToVolcanoEviction,
                            Loss::Consolidation => FailureCause::LostToConsolidation,
                            Loss::KaiEvicted => FailureCause::LostToKaiEviction,
                        },
                        lost_gpu_ms: lost,
                    });
            }
        }
        self.rec.stats.failures.pods_lost += pods.len() as u64;
        if let Reaction::Fail(message) = reaction {
            self.fail_job(w, message);
            return;
        }
        self.rec.stats.failures.restarts += 1;
        self.runtimes[w.index()].record.restarts += 1;
        match reaction {
            Reaction::RestartAll => {
                let all: Vec<(usize, usize)> = self.runtimes[w.index()]
                    .record
                    .placement
                    .iter()
                    .enumerate()
                    .flat_map(|(ps, slots)| (0..slots.len()).map(move |i| (ps, i)))
                    .collect();
                self.release_pods(w, &all);
                let rt = &mut self.runtimes[w.index()];
                rt.job_restarts += 1;
                rt.pods_lost_since_restart = 0;
            }
            _ => self.release_pods(w, pods),
        }
        self.await_replacements(w);
        // Kueue TAS: a failed node of its topology assignment is to be replaced.
        self.tas_nodes_failed(w, &nodes, loss);
        self.kai_watch_stale(w, was_stale);
    }

    /// What the job's controller does when it lost `pods` ((pod set, index)) more.
    fn reaction(&mut self, w: WorkloadId, pods: &[(usize, usize)], loss: Loss) -> Reaction {
        let n = pods.len() as u32;
        let policy = self.spec(w).resilience.on_pod_loss;
        let rt = &mut self.runtimes[w.index()];
        rt.pods_lost += n;
        rt.pods_lost_since_restart += n;
        match policy {
            // A pod Volcano evicted (a bare Pod of a PodGroup, typically) leaves its gang
            // running: the job goes on, its pod pending again as if recreated (kueuesim
            // keeps a workload's pod count), rather than failing as a lost bare Pod does.
            OnPodLoss::Fail if matches!(loss, Loss::VolcanoEvicted | Loss::KaiEvicted) => {
                Reaction::Replace
            }
            OnPodLoss::Fail => Reaction::Fail("Pod failed: no controller replaces it"),
            OnPodLoss::Replace {
                never_restarted, ..
            } if loss == Loss::GpuFailed
                && pods
                    .iter()
                    .any(|&(ps, _)| ps < 32 && never_restarted & (1 << ps) != 0) =>
            {
                Reaction::Fail("A replica with restartPolicy Never failed")
            }
            OnPodLoss::Replace {
                backoff_limit: Some(limit),
                ..
            } if rt.pods_lost > limit => {
                Reaction::Fail("Job has reached the specified backoff limit")
            }
            OnPodLoss::Replace { .. } => Reaction::Replace,
            OnPodLoss::RestartAll {
                backoff_limit,
                max_restarts,
            } => {
                if rt.pods_lost_since_restart <= backoff_limit {
                    // The child Job replaces its pod.
                    Reaction::Replace
                } else if rt.job_restarts < max_restarts {
                    Reaction::RestartAll
                } else {
                    Reaction::Fail("jobset failed due to reaching max number of restarts")
                }
            }
        }
    }

    /// The lost pods' replacements wait for their scheduler; Kueue keeps the workload
    /// admitted (`PodsReady=False`, `WaitForRecovery`, and `recoveryTimeout` runs).
    fn await_replacements(&mut self, w: WorkloadId) {
        let managed = self.runtimes[w.index()].record.admission.is_some();
        let generation = {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = if managed {
                WorkloadState::Admitted
            } else {
                WorkloadState::Pending
            };
            rt.record.running_at = None;
            rt.replacing = true;
            rt.lost_at = Some(self.now);
            // What was scheduled for the pods that ran (their finish, PodsReady timeouts)
            // no longer holds.
            rt.generation += 1;
            rt.generation
        };
        let wl = self.spec(w);
        if managed {
            let ready = self.runtimes[w.index()]
                .record
                .conditions
                .iter()
                .any(|c| c.kind == ConditionType::PodsReady && c.status);
            let recovering = self.runtimes[w.index()]
                .record
                .conditions
                .iter()
                .any(|c| c.kind == ConditionType::PodsReady && c.reason == "WaitForRecovery");
            if ready || recovering {
                // The job reconciler's generatePodsReadyCondition: a True PodsReady turns
                // WaitForRecovery, and the recovery timeout counts from that transition.
                self.set_condition(
                    w,
                    ConditionType::PodsReady,
                    false,
                    "WaitForRecovery",
                    "At least one pod has failed, waiting for recovery",
                );
                let since = self.runtimes[w.index()]
                    .record
                    .conditions
                    .iter()
                    .find(|c| c.kind == ConditionType::PodsReady)
                    .map_or(self.now, |c| c.at);
                if let Some(t) = self
                    .world
                    .config
                    .kueue
                    .wait_for_pods_ready
                    .as_ref()
                    .and_then(|c| c.recovery_timeout)
                {
                    self.events.push(
                        (since + t).max(self.now),
                        Ev::PodsReadyTimeout(w, generation),
                    );
                }
            } else if let (Some(cfg), Some(at)) = (
                &self.world.config.kueue.wait_for_pods_ready,
                self.runtimes[w.index()].record.admitted_at,
            ) {
                // Never ready yet: the timeout from the admission still runs.
                self.events.push(
                    (at + cfg.timeout).max(self.now),
                    Ev::PodsReadyTimeout(w, generation),
                );
            }
            if let Some(max) = wl.max_execution_time
                && let Some(at) = self.runtimes[w.index()].record.admitted_at
            {
                let due = (at + max - self.runtimes[w.index()].past_execution).max(self.now);
                self.events.push(due, Ev::MaxExecutionTime(w, generation));
            }
        }
        // Back in its scheduler's queue, once (a workload with pods still unplaced was there).
        self.sched.awaiting_placement.retain(|&(_, _, x)| x != w);
        self.sched
            .awaiting_placement
            .insert((Reverse(wl.priority), self.now, w));
    }

    /// The job failed: its pods end, its quota goes back, and it is finished (Kueue's
    /// `Finished=True`, reason `Failed`).
    pub(super) fn fail_job(&mut self, w: WorkloadId, message: &'static str) {
        self.rec.stats.failures.jobs_failed += 1;
        self.progress.last_done = self.now;
        self.runtimes[w.index()].record.failed = true;
        let managed = self.runtimes[w.index()].record.admission.is_some();
        self.sched.awaiting_placement.retain(|&(_, _, x)| x != w);
        self.close_idle_quota(w);
        self.release(w, false);
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = WorkloadState::Finished;
            rt.record.finished_at = Some(self.now);
            rt.generation += 1;
        }
        self.progress.last_progress = self.now;
        if managed {
            self.set_condition(w, ConditionType::Finished, true, "Failed", message);
        }
        self.let_go_if_lean(w);
    }

    /// Gives back the nodes of pods `pods` of `w` (and the GPU devices or vGPU shares they
    /// held there), leaving their slots to be placed again; the workload keeps its quota.
    pub(super) fn release_pods(&mut self, w: WorkloadId, pods: &[(usize, usize)]) {
        let world = self.world;
        let mut touched: Vec<NodeId> = Vec::new();
        for &(ps, idx) in pods {
            let Some(node) = self.runtimes[w.index()].record.placement[ps][idx] else {
                continue;
            };
            let req = self.runtimes[w.index()].needs[ps].requests.clone();
            // One device claim and one vGPU claim the workload holds on that node go with
            // the pod (the claims are kept per node, not per pod).
            // A pod failing with its GPU device gives back the claim on that device.
            let failed = self.sched.failed_device.filter(|&(n, _)| n == node);
            let claims = &self.runtimes[w.index()].claims;
            let on_failed = failed.and_then(|(_, d)| {
                claims
                    .iter()
                    .position(|(n, c)| *n == node && (c.mask >> d) & 1 == 1)
            });
            if let Some(k) = on_failed.or_else(|| claims.iter().position(|(n, _)| *n == node)) {
                let (_, claim) = self.runtimes[w.index()].claims.remove(k);
                self.sched.cluster.apply_claim(world, node, claim, -1);
            }
            if let Some(k) = self.runtimes[w.index()]
                .vgpu
                .iter()
                .position(|(n, _)| *n == node)
            {
                let (_, claim) = self.runtimes[w.index()].vgpu.remove(k);
                if let Some(book) = self.sched.cluster.vgpu.as_mut() {
                    book.apply(node, claim, -1);
                }
            }
            self.sched.cluster.apply(world, node, &req, -1);
            if let Some(g) = self.gpu {
                let gpus = req.get(g);
                self.rec
                    .gpu_change(&mut self.runtimes[w.index()], -gpus, self.now);
            }
            let rt = &mut self.runtimes[w.index()];
            rt.record.placement[ps][idx] = None;
            if let Some(at) = rt.record.bound_at.get_mut(ps) {
                at[idx] = None;
            }
            if !touched.contains(&node) {
                touched.push(node);
            }
        }
        for &node in &touched {
            self.reblock(node);
        }
        // A node these pods leave empty starts its scale-down clock now, as after any
        // release (`scaleDownUnneeded` counts from the last pod gone).
        touched.sort();
        self.autoscale_released(&touched);
    }

    /// A closed node (or one with failed GPUs) takes back into its block what its pods gave
    /// back (`NodeStates::sync`).
    #[inline]
    pub(super) fn reblock(&mut self, node: NodeId) {
        if let Some(states) = self.sched.nodes.as_mut()
            && (states.closed(node) || states.failed_gpus[node.index()] > 0)
        {
            states.sync(self.world, &mut self.sched.cluster, node);
        }
    }

    /// The current run of running workload `w` ends now: it finished (all of the rest of its
    /// work was done), or it was interrupted and keeps its work up to its last checkpoint
    /// (its `kueuesim.io/checkpoint-interval`, else the Simulation's `preemption.progress`).
    /// Its useful and lost GPU time are accounted.
    pub(super) fn end_run(&mut self, w: WorkloadId, finished: bool) -> i128 {
        let gpus = i128::from(self.workload_gpus(w));
        let policy = match self.spec(w).resilience.checkpoint_interval {
            Some(interval) => ProgressPolicy::Checkpoint { interval },
            None => self.world.config.progress,
        };
        let now = self.now;
        let rt = &mut self.runtimes[w.index()];
        let work = run_work(rt, now);
        let kept = if finished {
            work
        } else {
            match policy {
                ProgressPolicy::Restart => SimDuration::ZERO,
                ProgressPolicy::Checkpoint { interval } => {
                    SimDuration::from_millis(work.millis() / interval.millis() * interval.millis())
                }
            }
        };
        if !finished {
            rt.progress_saved += kept;
        }
        rt.record.useful_ms += i128::from(kept.millis());
        let lost = gpus * i128::from((work - kept).millis());
        rt.record.lost_gpu_ms += lost;
        self.rec.stats.lost_gpu_ms += lost;
        self.rec.stats.useful_gpu_ms += gpus * i128::from(kept.millis());
        lost
    }
}

/// The work of the current run of a running workload up to `now`: its running time less
/// the restart cost of a restart.
pub(super) fn run_work(
    rt: &super::runtime::Runtime<'_>,
    now: kueuesim_model::SimTime,
) -> SimDuration {
    let ran = now - rt.record.running_at.unwrap_or(now);
    let cost = if rt.runs > 1 {
        rt.spec.resilience.restart_cost
    } else {
        SimDuration::ZERO
    };
    (ran - cost).max(SimDuration::ZERO)
}
