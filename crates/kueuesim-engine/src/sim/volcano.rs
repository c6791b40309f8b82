//! Volcano's own queues before a gang is placed: the enqueue action (PodGroup Pending →
//! Inqueue when the `overcommit` and queue plugins permit) and the allocate action's queue
//! checks (`proportion`'s overused and allocatable), with the events upstream records.

use kueuesim_model::{
    EnqueueVoter, MinResources, QueuePlugin, SchedulerKind, VolcanoAction, WorkloadId,
};

use crate::outcome::{EventType, WorkloadState};
use crate::placement::volcano::queues::{
    Capacity, Overcommit, Proportion, QueueView, Res, SessionJob, Units,
};

use super::Simulation;

impl<'w> Simulation<'w> {
    /// Whether Volcano's queues let workload `w`'s pods be placed now. Without a
    /// volcano-scheduler.conf, or without a queue, they always do (kueuesim's placer-only
    /// Volcano). Otherwise one session is opened over the jobs Volcano holds (released to it
    /// and not done): a Pending PodGroup must pass the enqueue vote first (when the conf
    /// lists `enqueue`; allocate lets it in itself otherwise), then its queue must not be
    /// overused and must have room within its deserved share for the pods the gang needs.
    /// None when the gang is held back; otherwise the pods (pod set, index) the queue
    /// refused, which the placer must leave pending (upstream's allocate skips them).
    pub(super) fn volcano_queue_gate(&mut self, w: WorkloadId) -> Option<Vec<(usize, usize)>> {
        self.volcano_queue_gate_until(w, false)
    }

    /// The enqueue action alone for workload `w` (a session's enqueue, which runs over
    /// every job before allocate): whether its PodGroup is let in (or already was).
    pub(super) fn volcano_enqueue(&mut self, w: WorkloadId) -> bool {
        self.volcano_queue_gate_until(w, true).is_some()
    }

    /// `volcano_queue_gate`, or with `enqueue_only` its enqueue action alone.
    fn volcano_queue_gate_until(
        &mut self,
        w: WorkloadId,
        enqueue_only: bool,
    ) -> Option<Vec<(usize, usize)>> {
        let world = self.world;
        let Some(conf) = &world.config.volcano.queues else {
            return Some(Vec::new());
        };
        let Some(qi) = self.spec(w).gang.volcano_queue else {
            return Some(Vec::new());
        };
        // Upstream units (a GPU is 1000 milli-GPUs), so its tolerances apply as upstream's.
        let units = Units::new(&world.resources);
        // BestEffort pods (`TaskInfo.BestEffort`: requests nothing) are not allocate's:
        // upstream's allocate skips them and the `backfill` action places them, without
        // the queue checks. Without backfill in the conf they stay pending.
        let backfill = conf.has(VolcanoAction::Backfill);
        let best_effort = |needs: &crate::placement::PodNeeds| {
            units.requests_nothing(&units.dense(&needs.requests))
        };
        // The pending BestEffort pods, which stay pending without backfill.
        let mut unplaced_best_effort: Vec<(usize, usize)> = Vec::new();
        if !backfill {
            let rt = &self.runtimes[w.index()];
            for (ps, slots) in rt.record.placement.iter().enumerate() {
                if best_effort(&rt.needs[ps]) {
                    unplaced_best_effort.extend(
                        (0..slots.len())
                            .filter(|&i| slots[i].is_none())
                            .map(|i| (ps, i)),
                    );
                }
            }
        }
        // A gang whose pods all run already (a dump's) has nothing to ask of its queue.
        if !self.runtimes[w.index()].has_unplaced() {
            self.runtimes[w.index()].volcano_inqueue = true;
            return Some(Vec::new());
        }
        // A job whose pending pods all request nothing is backfill's alone, which checks
        // no queue (a queue whose jobs request nothing deserves nothing and reads as
        // overused to allocate). Without backfill nothing places them and the job starves
        // (gang counts no pending BestEffort task as occupied), so preempt and reclaim act
        // for it; the gang plugin records nothing, as `JobInfo.IsReady` counts them.
        let rt = &self.runtimes[w.index()];
        let best_effort_only = rt
            .record
            .placement
            .iter()
            .enumerate()
            .all(|(ps, slots)| slots.iter().all(Option::is_some) || best_effort(&rt.needs[ps]));
        if best_effort_only {
            self.runtimes[w.index()].volcano_inqueue = true;
            return backfill.then_some(Vec::new());
        }
        // Without a queue plugin or overcommit nothing can hold a gang back.
        if conf.plugin.is_none() && conf.overcommit_factor.is_none() {
            self.runtimes[w.index()].volcano_inqueue = true;
            return Some(unplaced_best_effort);
        }
        let n = units.len();
        let jobs: Vec<(WorkloadId, SessionJob)> = self.volcano_session_jobs(&units);
        let Some(me) = jobs.iter().find(|(x, _)| *x == w).map(|(_, j)| j.clone()) else {
            return Some(Vec::new());
        };
        let jobs: Vec<SessionJob> = jobs.into_iter().map(|(_, j)| j).collect();
        let (total, used) = self.volcano_totals(&units);
        let queue = &world.volcano_queues[qi];
        let queues = &world.volcano_queues;
        let proportion = conf.plugin.map(|plugin| match plugin {
            QueuePlugin::Proportion => {
                QueueView::Proportion(Proportion::open(queues, &units, &total, &jobs))
            }
            QueuePlugin::Capacity { hierarchy } => {
                QueueView::Capacity(Capacity::open(queues, &units, &total, &jobs, hierarchy))
            }
        });
        let source = SchedulerKind::Volcano.event_source();
        // A PodGroup with pods running (a dump's) is past Pending.
        if me.allocated.iter().any(|&x| x > 0.0) {
            self.runtimes[w.index()].volcano_inqueue = true;
        }
        // The enqueue action, for a PodGroup still Pending.
        if !self.runtimes[w.index()].volcano_inqueue {
            if conf.has(VolcanoAction::Enqueue) {
                let min = me.min_resources.as_deref();
                let overcommit = conf
                    .overcommit_factor
                    .map(|f| Overcommit::open(f, &total, &used, &jobs));
                let mut rejected: Option<String> = None;
                'tiers: for tier in &conf.enqueue_tiers {
                    let mut permitted = false;
                    for voter in tier {
                        let verdict = match voter {
                            EnqueueVoter::Overcommit => match &overcommit {
                                None => continue,
                                Some(o) => o.enqueueable(min).map_err(|over| {
                                    Some(format_names(
                                        world,
                                        "resource in cluster is overused",
                                        "overused",
                                        &over,
                                    ))
                                }),
                            },
                            EnqueueVoter::Queue => match &proportion {
                                None => continue,
                                Some(p) => p.enqueueable(queue, qi, min).map_err(|over| {
                                    over.map(|over| {
                                        format_names(
                                            world,
                                            "queue resource quota insufficient",
                                            "insufficient",
                                            &over,
                                        )
                                    })
                                }),
                            },
                        };
                        match verdict {
                            Ok(()) => permitted = true,
                            Err(message) => {
                                rejected = Some(message.unwrap_or_default());
                                break 'tiers;
                            }
                        }
                    }
                    if permitted {
                        break;
                    }
                }
                if let Some(message) = rejected {
                    // At session close upstream's cache records, for every Pending or Inqueue
                    // PodGroup, the gang's Warning (`RecordJobStatusEvent`: no task was tried,
                    // so no origin reason), after the enqueue vote's Normal event; a closed
                    // queue rejects without an event of its own (upstream only logs it).
                    let rt = &self.runtimes[w.index()];
                    let placed = rt.record.placement.iter().flatten().flatten().count();
                    let total_pods: usize = rt.record.placement.iter().map(Vec::len).sum();
                    let min_member = self
                        .spec(w)
                        .gang
                        .min_member
                        .map_or(total_pods, |m| (m as usize).min(total_pods));
                    let warning = crate::placement::volcano::not_tried_message(
                        placed,
                        total_pods - placed,
                        min_member,
                        total_pods,
                    );
                    // Recorded once while the pair repeats (Kubernetes aggregates repeats).
                    let ours: Vec<&crate::outcome::Event> = rt
                        .record
                        .events
                        .iter()
                        .filter(|e| e.source == source)
                        .collect();
                    let repeated = match (message.is_empty(), ours.as_slice()) {
                        (true, [.., last]) => last.message == warning,
                        (false, [.., normal, last]) => {
                            normal.message == message && last.message == warning
                        }
                        _ => false,
                    };
                    if !repeated {
                        if !message.is_empty() {
                            self.record_event(
                                w,
                                EventType::Normal,
                                source,
                                "Unschedulable",
                                message,
                                None,
                            );
                        }
                        self.record_event(
                            w,
                            EventType::Warning,
                            source,
                            "Unschedulable",
                            warning,
                            None,
                        );
                    }
                    return None;
                }
                let rt = &mut self.runtimes[w.index()];
                if rt.record.events.iter().any(|e| e.source == source) {
                    rt.record.inqueue_at = Some(self.now);
                }
            }
            self.runtimes[w.index()].volcano_inqueue = true;
        }
        if enqueue_only {
            return Some(Vec::new());
        }
        // The allocate action (`allocateResourcesForTasks`): an overused queue is skipped;
        // otherwise the gang's pending pods are tried in order, each only while the queue's
        // allocated plus the pods taken stays within its deserved share; a pod the queue
        // refuses is skipped (`if !ssn.Allocatable(queue, task) { continue }`) and the
        // next one tried, until the gang has the pods it needs (JobReady).
        // A ready job with pods left goes back to its queue's jobs (`jobs.Push(job)`), and
        // the queue back to the queues, so each further pod is one more pop of the queue,
        // checked by `ssn.Allocatable` as the first ones were (a queue overused by the pods
        // taken, which upstream's `ssn.Overused` drops for the session, refuses any pod
        // that asks for something: allocated + request then exceeds the deserved share).
        let Some(p) = &proportion else {
            return Some(Vec::new());
        };
        let rt = &self.runtimes[w.index()];
        let spec = self.spec(w);
        let total_pods: usize = rt.record.placement.iter().map(Vec::len).sum();
        let placed: usize = rt
            .record
            .placement
            .iter()
            .map(|s| s.iter().flatten().count())
            .sum();
        let min_member = spec
            .gang
            .min_member
            .map_or(total_pods, |m| (m as usize).min(total_pods));
        let mut need = min_member.saturating_sub(placed).max(1);
        let open = !(conf.overused && p.overused(qi)) && (!conf.allocatable || queue.open);
        let mut refused = Vec::new();
        let mut taken: Res = vec![0.0; n];
        'pods: for (ps, slots) in rt.record.placement.iter().enumerate() {
            for (idx, _) in slots.iter().enumerate().filter(|(_, s)| s.is_none()) {
                if !open {
                    break 'pods;
                }
                // A pending BestEffort pod counts for the gang's readiness
                // (`PendingBestEffortTaskNum`) without asking the queue; it is backfill's
                // to place, or stays pending without it.
                if best_effort(&rt.needs[ps]) {
                    need = need.saturating_sub(1);
                    if !backfill {
                        refused.push((ps, idx));
                    }
                    continue;
                }
                let req = units.dense(&rt.needs[ps].requests);
                let mut with: Res = taken.clone();
                for (t, r) in with.iter_mut().zip(&req) {
                    *t += r;
                }
                // Allocatable checks allocated + this task within deserved in the
                // dimensions the task asks for; earlier tasks of the gang count as allocated.
                let masked: Res = with
                    .iter()
                    .zip(&req)
                    .map(|(&t, &r)| if r > 0.0 { t } else { 0.0 })
                    .collect();
                if !conf.allocatable || p.allocatable(queue, qi, &masked) {
                    taken = with;
                    need = need.saturating_sub(1);
                } else {
                    refused.push((ps, idx));
                }
            }
        }
        // A gang already at its minMember is ready whatever its further pods get: no gang
        // event for them.
        if open && (need == 0 || placed >= min_member) {
            return Some(refused);
        }
        // Skipped (its queue overused or closed) while already ready: the gang plugin marks
        // only a job that is not ready (`OnSessionClose`: `!job.IsReady()`), and the cache
        // records the PodGroup's Unschedulable event only before it runs.
        if placed >= min_member {
            return None;
        }
        let pending = total_pods - placed;
        let message =
            crate::placement::volcano::not_tried_message(placed, pending, min_member, total_pods);
        self.record_event(
            w,
            EventType::Warning,
            source,
            "Unschedulable",
            message,
            None,
        );
        None
    }
}

impl Simulation<'_> {
    /// The jobs of a Volcano session, as the queue plugins count them: every job Volcano
    /// holds (released to it and not done) that has a Volcano Queue.
    pub(super) fn volcano_session_jobs(&self, units: &Units) -> Vec<(WorkloadId, SessionJob)> {
        let n = units.len();
        let mut jobs = Vec::new();
        for (i, rt) in self.runtimes.iter() {
            let x = WorkloadId::from_index(i);
            if rt.needs.is_empty()
                || rt.released
                || matches!(
                    rt.record.state,
                    WorkloadState::Finished | WorkloadState::Evicted
                )
                || self.scheduler_of(x) != SchedulerKind::Volcano
            {
                continue;
            }
            let spec = self.spec(x);
            let Some(q) = spec.gang.volcano_queue else {
                continue;
            };
            let mut allocated = vec![0.0; n];
            let mut pending = vec![0.0; n];
            let mut placed = 0;
            let mut total = 0;
            for (ps, slots) in rt.record.placement.iter().enumerate() {
                for (i, s) in slots.iter().enumerate() {
                    total += 1;
                    // A pod preempt or reclaim evicted is Releasing until it is gone: no
                    // longer the queue's allocated (`AllocatedStatus`), nor pending.
                    if s.is_some() && rt.volcano_releasing.iter().any(|r| (r.1, r.2) == (ps, i)) {
                        continue;
                    }
                    let to = if s.is_some() {
                        placed += 1;
                        &mut allocated
                    } else {
                        &mut pending
                    };
                    units.add_list(to, &rt.needs[ps].requests, 1.0);
                }
            }
            let min_member = spec
                .gang
                .min_member
                .map_or(total, |m| (m as usize).min(total));
            let min_resources = match &spec.gang.volcano_min_resources {
                MinResources::Unset => None,
                MinResources::Given(l) => Some(units.dense(l)),
                MinResources::Counted(counts) => {
                    let mut m = vec![0.0; n];
                    for (need, &k) in rt.needs.iter().zip(counts) {
                        units.add_list(&mut m, &need.requests, f64::from(k));
                    }
                    Some(m)
                }
                // The controller's: the requests of the first minMember pods.
                MinResources::Derived => {
                    let mut m = vec![0.0; n];
                    let mut left = min_member;
                    for (ps, slots) in rt.record.placement.iter().enumerate() {
                        let k = slots.len().min(left);
                        left -= k;
                        units.add_list(&mut m, &rt.needs[ps].requests, k as f64);
                    }
                    Some(m)
                }
            };
            let job = SessionJob {
                queue: q,
                allocated,
                pending,
                min_resources,
                inqueue: rt.volcano_inqueue && placed < min_member,
                running_ready: placed >= min_member && placed > 0,
            };
            jobs.push((x, job));
        }
        jobs
    }

    /// The cluster's allocatable and used amounts, in upstream units.
    pub(super) fn volcano_totals(&self, units: &Units) -> (Res, Res) {
        let world = self.world;
        let n = units.len();
        let mut total: Res = vec![0.0; n];
        let mut used: Res = vec![0.0; n];
        let nodes = &self.sched.cluster.nodes;
        for node in 0..world.nodes.len() {
            let id = kueuesim_model::NodeId::from_index(node);
            for r in 0..n {
                let a = nodes.allocatable(id, r);
                total[r] += units.amount(r, a);
                used[r] += units.amount(r, a - nodes.free(id, r));
            }
        }
        (total, used)
    }
}

/// Upstream's `FormatResourceNames`: `<prefix>: <verb> cpu, <verb> memory, …` (cpu and
/// memory first, then the other resources by name).
fn format_names(world: &kueuesim_model::World, prefix: &str, verb: &str, over: &[usize]) -> String {
    let mut names: Vec<&str> = over
        .iter()
        .map(|&i| {
            world
                .resources
                .name(kueuesim_model::ResourceId::from_index(i))
        })
        .collect();
    names.sort_by_key(|n| (*n != "cpu", *n != "memory", *n));
    if names.is_empty() {
        return prefix.to_string();
    }
    let parts: Vec<String> = names.iter().map(|n| format!("{verb} {n}")).collect();
    format!("{prefix}: {}", parts.join(", "))
}
