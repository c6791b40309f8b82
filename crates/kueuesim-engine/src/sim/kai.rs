//! KAI: placing a job's PodGroups, topology constraints, its queues' capacity policy, and
//! the reclaim and preempt actions for jobs Kueue does not manage.

use std::cmp::Reverse;

use kueuesim_model::{NodeId, QueueRef, SchedulerKind, WorkloadId, World};

use crate::outcome::{EventType, Eviction, WorkloadState};
use crate::placement::{self, PodNeeds};

use super::{Ev, Simulation};

impl<'w> Simulation<'w> {
    /// KAI's consolidation action, then its reclaim action, then its preempt action (each only
    /// when the one before found nothing), for a pending job of a KAI Queue (jobs Kueue does
    /// not manage; Kueue-managed ones are Kueue's to preempt), in upstream's action order
    /// (`allocate, consolidation, reclaim, preempt`): move running jobs to other nodes so the
    /// job fits (`kai_consolidate`), else evict running jobs of queues above their fair
    /// share so the job fits (`kai::reclaim_victims`), else lower-priority running jobs of
    /// its own queue (`kai::preempt_victims`).
    pub(super) fn kai_reclaim(&mut self, w: WorkloadId) {
        if self.kai_consolidate(w) {
            return;
        }
        if !self.kai_evict_for(w, KaiAction::Reclaim) && !self.kai_evict_for(w, KaiAction::Preempt)
        {
            self.kai_retry_when_protection_ends(w);
        }
    }

    /// After reclaim and preempt found nothing for `w`: when a min-runtime kept a victim
    /// from it, `w` tries again the instant the first such protection ends (upstream runs
    /// its actions every session, so a job waits no longer than that).
    fn kai_retry_when_protection_ends(&mut self, w: WorkloadId) {
        let Some(view) = self.kai_view(w) else {
            return;
        };
        let state = placement::kai::QueueState {
            queues: &self.world.kai_queues,
            fair: &view.fair,
            allocated: &view.allocated,
            total: view.total,
            now: self.now.millis(),
        };
        let priority = self.spec(w).priority;
        let Some(ends) =
            placement::kai::protection_ends(&state, view.queue, priority, &view.running)
        else {
            return;
        };
        let at = kueuesim_model::SimTime::from_millis(ends);
        let rt = &mut self.runtimes[w.index()];
        if rt.kai_retry_at.is_some_and(|t| t <= at && t > self.now) {
            return;
        }
        rt.kai_retry_at = Some(at);
        self.events.push(at, Ev::KaiProtectionEnds(w));
    }

    /// `Ev::KaiProtectionEnds`: `w`, still waiting for KAI, tries again (allocate, then its
    /// actions). Whether anything was done.
    pub(super) fn kai_protection_ends(&mut self, w: WorkloadId) -> bool {
        let rt = &mut self.runtimes[w.index()];
        if rt.kai_retry_at != Some(self.now) {
            return false;
        }
        rt.kai_retry_at = None;
        if rt.kai_pipelined > 0
            || !self
                .sched
                .awaiting_placement
                .iter()
                .any(|&(_, _, x)| x == w)
        {
            return false;
        }
        self.try_place(w);
        true
    }

    /// What KAI's eviction actions read for pending job `w` (the session's view): None
    /// when no action applies (no KAI Queue or GPU resource, a Kueue-managed job, or one
    /// already pipelined onto its victims' resources).
    pub(super) fn kai_view(&self, w: WorkloadId) -> Option<KaiView> {
        let world = self.world;
        let wl = self.spec(w);
        let (Some(queue), Some(g), QueueRef::Unmanaged) = (wl.gang.kai_queue, self.gpu, &wl.queue)
        else {
            return None;
        };
        if self.runtimes[w.index()].kai_pipelined > 0 {
            return None;
        }
        let mut non_preemptible = 0i64;
        let nq = world.kai_queues.len();
        let mut allocated = vec![0i64; nq];
        let mut pending = vec![0i64; nq];
        let mut running = Vec::new();
        let waiting: Vec<WorkloadId> = self
            .sched
            .awaiting_placement
            .iter()
            .map(|&(_, _, x)| x)
            .collect();
        for (i, rt) in self.runtimes.iter() {
            let x = self.spec(WorkloadId::from_index(i));
            let Some(xq) = x.gang.kai_queue else { continue };
            if rt.needs.is_empty()
                || self.scheduler_of(WorkloadId::from_index(i)) != SchedulerKind::Kai
            {
                continue;
            }
            let (mut placed, mut unplaced) = (0, 0);
            for (ps, slots) in rt.record.placement.iter().enumerate() {
                let per = rt.needs.get(ps).map_or(0, |n| n.requests.get(g));
                for s in slots {
                    match s {
                        Some(_) => placed += per,
                        None => unplaced += per,
                    }
                }
            }
            // Pods of an evicted job are releasing: no longer its queue's (nor those of a
            // finished one, whose placement is kept for the report). A pipelined job's GPUs
            // are already its queue's.
            // A job whose release is under way (it finished this instant: its placement is
            // kept for the report) holds nothing either.
            let gone = rt.released
                || matches!(
                    rt.record.state,
                    WorkloadState::Evicted | WorkloadState::Finished | WorkloadState::Inactive
                );
            if gone {
                placed = 0;
            }
            allocated[xq] += placed;
            if xq == queue && !x.kai_preemptible() {
                non_preemptible += placed + rt.kai_pipelined;
            }
            allocated[xq] += rt.kai_pipelined;
            if waiting.contains(&WorkloadId::from_index(i)) {
                pending[xq] += (unplaced - rt.kai_pipelined).max(0);
            }
            // A job whose pods KAI's consolidation is moving is nobody's victim meanwhile.
            if placed > 0 && x.queue == QueueRef::Unmanaged && rt.kai_moves.is_empty() {
                let mut nodes: Vec<usize> = rt
                    .record
                    .placement
                    .iter()
                    .flat_map(|slots| slots.iter().flatten().map(|n| n.index()))
                    .collect();
                nodes.sort_unstable();
                nodes.dedup();
                running.push(placement::kai::RunningJob {
                    key: i,
                    queue: xq,
                    gpus: placed,
                    priority: x.priority,
                    preemptible: x.kai_preemptible(),
                    elastic: elastic_rank(&x, &rt.record.placement),
                    created: x.created_at.millis(),
                    nodes,
                    started: rt.kai_last_start.map(|t| t.millis()),
                });
            }
        }
        let total: i64 = world
            .nodes
            .iter()
            .map(|n| n.allocatable.get(g.index()).copied().unwrap_or(0))
            .sum();
        let requests: Vec<i64> = allocated.iter().zip(&pending).map(|(a, p)| a + p).collect();
        let fair = placement::kai::fair_shares(&world.kai_queues, total, &requests);
        let pods = self.runtimes[w.index()].pods();
        // The tasks KAI allocates now (`GetTasksToAllocate`): `minMember − allocated` while
        // below the minimum, else one; a batch Job's PodGroup per pod: its next pod.
        let (bound, _) = placement::counts(&pods);
        let total_pods: usize = pods.iter().map(|(_, s)| s.len()).sum();
        let min_member = wl
            .gang
            .min_member
            .map_or(total_pods, |m| (m as usize).min(total_pods));
        let count = if wl.gang.pod_group_per_pod || bound >= min_member {
            1
        } else {
            min_member - bound
        };
        let task_gpus: Vec<i64> = pods
            .iter()
            .flat_map(|(n, slots)| {
                slots
                    .iter()
                    .filter(|x| x.is_none())
                    .map(|_| n.requests.get(g))
            })
            .take(count)
            .collect();
        let free_gpus: i64 = world
            .nodes
            .iter()
            .enumerate()
            .map(|(i, _)| {
                self.sched
                    .cluster
                    .nodes
                    .free(NodeId::from_index(i), g.index())
            })
            .sum();
        // Victims are put back in the job order: higher priority, then older, first.
        let mut put_back_order: Vec<&placement::kai::RunningJob> = running.iter().collect();
        put_back_order.sort_by_key(|j| (Reverse(j.priority), j.elastic, j.created, j.key));
        let put_back_order: Vec<usize> = put_back_order.iter().map(|j| j.key).collect();
        Some(KaiView {
            queue,
            running,
            allocated,
            fair,
            total,
            non_preemptible,
            pods,
            bound,
            task_gpus,
            free_gpus,
            put_back_order,
        })
    }

    /// One eviction action for `w`; whether it evicted.
    fn kai_evict_for(&mut self, w: WorkloadId, action: KaiAction) -> bool {
        let world = self.world;
        let wl = self.spec(w);
        let Some(view) = self.kai_view(w) else {
            return false;
        };
        let KaiView {
            queue,
            running,
            allocated,
            fair,
            total,
            non_preemptible,
            pods,
            bound,
            task_gpus,
            free_gpus,
            put_back_order,
        } = view;
        let want: i64 = task_gpus.iter().sum();
        let state = placement::kai::QueueState {
            queues: &world.kai_queues,
            fair: &fair,
            allocated: &allocated,
            total,
            now: self.now.millis(),
        };
        let reclaimer = placement::kai::Reclaimer {
            queue,
            task_gpus: &task_gpus,
            preemptible: wl.kai_preemptible(),
        };
        let scenario = |tasks: usize, victims: &[usize]| -> Option<Vec<usize>> {
            let mut scratch = self.sched.cluster.clone();
            for &v in victims {
                let vr = &self.runtimes[v];
                for (ps, slots) in vr.record.placement.iter().enumerate() {
                    for n in slots.iter().flatten() {
                        scratch.apply(world, *n, &vr.needs[ps].requests, -1);
                    }
                }
            }
            // The partial job: its bound pods and its first `tasks` pending ones.
            let mut left = tasks;
            let partial: Vec<(PodNeeds, Vec<Option<NodeId>>)> = pods
                .iter()
                .map(|(n, slots)| {
                    let kept = slots
                        .iter()
                        .copied()
                        .filter(|x| {
                            x.is_some()
                                || (left > 0 && {
                                    left -= 1;
                                    true
                                })
                        })
                        .collect();
                    (n.clone(), kept)
                })
                .collect();
            let saved = std::mem::replace(&mut self.sched.cluster, scratch);
            let r = self.place_kai(w, &partial, bound + tasks);
            let mut scratch = std::mem::replace(&mut self.sched.cluster, saved);
            if r.bound.len() < tasks {
                return None;
            }
            // Victims that fit back on their own nodes stay (upstream unevicts a victim
            // it pipelines back to its node); the rest are the victims.
            let mut left_out = Vec::new();
            for &v in put_back_order.iter().filter(|k| victims.contains(k)) {
                let vr = &self.runtimes[v];
                let mut applied = Vec::new();
                let mut fits = true;
                for (ps, slots) in vr.record.placement.iter().enumerate() {
                    for n in slots.iter().flatten() {
                        if !scratch.nodes.fits(*n, &vr.needs[ps].requests) {
                            fits = false;
                            break;
                        }
                        scratch.apply(world, *n, &vr.needs[ps].requests, 1);
                        applied.push((*n, ps));
                    }
                    if !fits {
                        break;
                    }
                }
                if !fits {
                    for (n, ps) in applied {
                        scratch.apply(world, n, &vr.needs[ps].requests, -1);
                    }
                    left_out.push(v);
                }
            }
            Some(left_out)
        };
        let victims = match action {
            KaiAction::Reclaim => {
                placement::kai::reclaim_victims(&state, &reclaimer, &running, free_gpus, scenario)
            }
            KaiAction::Preempt => placement::kai::preempt_victims(
                &state,
                &reclaimer,
                wl.priority,
                non_preemptible,
                &running,
                free_gpus,
                scenario,
            ),
        };
        let Some(victims) = victims else { return false };
        self.runtimes[w.index()].kai_pipelined = want;
        let by = match action {
            KaiAction::Reclaim => format!("{}/{}", wl.namespace, wl.name),
            KaiAction::Preempt => kai_job_name(&wl),
        };
        self.runtimes[w.index()].record.preemptions_caused += victims.len() as u32;
        for v in victims {
            self.kai_evict(
                WorkloadId::from_index(v),
                &by,
                &world.kai_queues[queue].name,
                action,
            );
        }
        true
    }

    /// KAI evicts a job for reclaim or preempt: its pods terminate (`podTermination`), then
    /// its controller's new pods wait for KAI again.
    fn kai_evict(&mut self, v: WorkloadId, by: &str, queue: &str, action: KaiAction) {
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
            rt.record.evictions.push(Eviction {
                at: now,
                reason: action.reason(),
                preemption_reason: None,
                preemptor: Some(by.to_string()),
                preemptor_cluster_queue: None,
            });
            rt.generation += 1;
            rt.generation
        };
        debug_assert!(crate::outcome::EVICTION_REASONS.contains(&action.reason()));
        *self.rec.stats.evictions.entry(action.reason()).or_default() += 1;
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
                // `GetPreemptMessage`, once per pod of the victim.
                let spec = self.spec(v);
                let pods: Vec<String> = self.runtimes[v.index()]
                    .record
                    .placed_pods()
                    .map(|(ps, i)| format!("{}/{}", spec.namespace, spec.pod_name(ps, i)))
                    .collect();
                for pod in pods {
                    self.record_event(
                        v,
                        EventType::Normal,
                        SchedulerKind::Kai.event_source(),
                        "Evict",
                        format!("Pod {pod} was preempted by higher priority workload {by}"),
                        None,
                    );
                }
            }
        }
        self.events.push(
            now + self.world.config.pod_termination,
            Ev::KaiPodsGone(v, generation),
        );
    }

    /// The reclaimed pods are gone: nodes released (the reclaimer, waiting, is placed), and
    /// the job's new pods wait for KAI.
    pub(super) fn kai_pods_gone(&mut self, v: WorkloadId) {
        self.release(v, false);
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
        self.try_place(v);
    }

    /// KAI: one PodGroup for the workload, or (a batch Job: KAI's job grouper) one PodGroup
    /// per pod, each placed on its own.
    pub(super) fn place_kai(
        &mut self,
        w: WorkloadId,
        pods: &[(PodNeeds, Vec<Option<NodeId>>)],
        total: usize,
    ) -> placement::Placement {
        let world = self.world;
        let wl = self.spec(w);
        let pod_name = |ps: usize, idx: usize| format!("{}/{}", wl.namespace, wl.pod_name(ps, idx));
        let constraint = match kai_constraint(world, &wl) {
            Ok(c) => c,
            Err(message) => {
                let (ps, idx) = placement::first_pending(pods).unwrap_or((0, 0));
                return placement::Placement {
                    unplaced: Some((ps, idx, message)),
                    ..Default::default()
                };
            }
        };
        // KAI GPU sharing: with device bookkeeping, a job with shares goes through the
        // sharing allocation (no topology constraint or subgroup applied).
        let shares: Vec<_> = wl.pod_sets.iter().map(|ps| ps.gpu_share).collect();
        if self.sched.cluster.devices.is_some() && shares.iter().any(Option::is_some) {
            return self.place_kai_shared(w, pods, total, &shares);
        }
        if !wl.gang.kai_subgroups.is_empty() {
            let mut constraints = Vec::new();
            for g in &wl.gang.kai_subgroups {
                match g
                    .constraint
                    .as_ref()
                    .map(|c| resolve_kai(world, c, &format!("sub-group {}", g.name)))
                {
                    None => constraints.push(None),
                    Some(Ok(c)) => constraints.push(c),
                    Some(Err(message)) => {
                        let (ps, idx) = placement::first_pending(pods).unwrap_or((0, 0));
                        return placement::Placement {
                            unplaced: Some((ps, idx, message)),
                            ..Default::default()
                        };
                    }
                }
            }
            let tree = placement::kai::KaiTree {
                subgroups: &wl.gang.kai_subgroups,
                constraints,
                pod_set_subgroup: &wl.gang.pod_set_subgroup,
            };
            let job_name = kai_job_name(&wl);
            let job = placement::kai::KaiJob {
                pods,
                min_member: wl
                    .gang
                    .min_member
                    .map_or(total, |m| (m as usize).min(total)),
                constraint,
                job_name: &job_name,
                pod_name: &pod_name,
            };
            let over = self.kai_capacity(w);
            return placement::kai::place_tree_within(
                world,
                &mut self.sched.cluster,
                &job,
                &tree,
                over.as_deref(),
            );
        }
        if !wl.gang.pod_group_per_pod {
            let job_name = kai_job_name(&wl);
            let min_member = wl
                .gang
                .min_member
                .map_or(total, |m| (m as usize).min(total));
            let job = placement::kai::KaiJob {
                pods,
                min_member,
                constraint,
                job_name: &job_name,
                pod_name: &pod_name,
            };
            let over = self.kai_capacity(w);
            return placement::kai::place_within(
                world,
                &mut self.sched.cluster,
                &job,
                over.as_deref(),
            );
        }
        let over = self.kai_capacity(w);
        // Each pod is its own PodGroup: the pods bound earlier in this pass count too.
        let earlier = &std::cell::Cell::new(0i64);
        let gpu = self.gpu;
        let per_pod = over
            .as_deref()
            .map(|f| move |placed: i64, request: i64| f(earlier.get() + placed, request));
        let per_pod = per_pod
            .as_ref()
            .map(|f| f as &dyn Fn(i64, i64) -> Option<String>);
        each_pod_alone(&wl, pods, &pod_name, |job, ps| {
            let job = placement::kai::KaiJob { constraint, ..job };
            let r = placement::kai::place_within(world, &mut self.sched.cluster, &job, per_pod);
            if let Some(g) = gpu {
                earlier.set(earlier.get() + r.bound.len() as i64 * pods[ps].0.requests.get(g));
            }
            r
        })
    }

    /// The proportion plugin's capacity policy for a job of a KAI Queue
    /// (`IsJobOverQueueCapacity`): a pass whose GPUs would take the queue, or a parent of it,
    /// over its `limit` is refused with `OverLimit` (`resultsOverLimit`); a non-preemptible
    /// job (its PodGroup's preemptibility, else priority 100 or more) whose GPUs would take the queue's non-preemptible
    /// allocation over its deserved quota with `NonPreemptibleOverQuota`
    /// (`resultsWithNonPreemptibleOverQuota`). None: nothing to check (no KAI Queue, no
    /// limit on its path, or a preemptible job). The closure takes the GPUs this job bound in
    /// this pass so far and the GPUs the next allocation asks.
    fn kai_capacity(&self, w: WorkloadId) -> Option<Box<CapacityCheck<'w>>> {
        let world = self.world;
        let wl = self.spec(w);
        let (Some(queue), Some(g)) = (wl.gang.kai_queue, self.gpu) else {
            return None;
        };
        let queues = &world.kai_queues;
        let mut path = vec![queue];
        while let Some(p) = queues[*path.last().expect("non-empty")].parent {
            path.push(p);
        }
        let preemptible = wl.kai_preemptible();
        let limited = path.iter().any(|&q| queues[q].gpu_limit.is_some());
        let quota_bound = !preemptible && path.iter().any(|&q| queues[q].gpu_quota.is_some());
        if !limited && !quota_bound {
            return None;
        }
        // Each queue's allocated GPUs (subtree), and those of non-preemptible jobs.
        let mut allocated = vec![0i64; queues.len()];
        let mut non_preemptible = vec![0i64; queues.len()];
        for (i, rt) in self.runtimes.iter() {
            let x = self.spec(WorkloadId::from_index(i));
            let Some(xq) = x.gang.kai_queue else { continue };
            // A job whose nodes were given back holds nothing, also while its release is
            // under way: a job finishing now keeps its placement for the report and turns
            // `Finished` only after the release has retried the waiting jobs (it was counted
            // then, and a job its queue's limit held back never started).
            if rt.needs.is_empty()
                || rt.released
                || matches!(
                    rt.record.state,
                    WorkloadState::Evicted | WorkloadState::Finished | WorkloadState::Inactive
                )
            {
                continue;
            }
            // A pipelined job's GPUs are its queue's, except for the job itself: what it asks
            // now is those GPUs (`placed`, `request` below), counted once.
            let mut held = if i == w.index() { 0 } else { rt.kai_pipelined };
            for (ps, slots) in rt.record.placement.iter().enumerate() {
                let per = rt.needs.get(ps).map_or(0, |n| n.requests.get(g));
                held += per * slots.iter().flatten().count() as i64;
            }
            // In a consolidation scenario, what the job holds there.
            if let Some(&(_, gpus)) = self.sched.kai_scenario_gpus.iter().find(|x| x.0 == i) {
                held = gpus;
            }
            let mut q = Some(xq);
            while let Some(c) = q {
                allocated[c] += held;
                if !x.kai_preemptible() {
                    non_preemptible[c] += held;
                }
                q = queues[c].parent;
            }
        }
        Some(Box::new(
            move |placed: i64, request: i64| -> Option<String> {
                if request <= 0 {
                    return None;
                }
                for &q in &path {
                    if let Some(limit) = queues[q].gpu_limit
                        && limit < allocated[q] + placed + request
                    {
                        return Some(format!(
                            "OverLimit: {} quota has reached the allowable limit of GPUs. Limit is {limit} GPUs, currently {} GPUs allocated and workload requested {request} GPUs.",
                            queues[q].name,
                            allocated[q] + placed
                        ));
                    }
                }
                if !preemptible {
                    for &q in &path {
                        if let Some(deserved) = queues[q].gpu_quota
                            && deserved < non_preemptible[q] + placed + request
                        {
                            return Some(format!(
                                "NonPreemptibleOverQuota: Non-preemptible workload is over quota. Workload requested {request} GPUs, but {} quota is {deserved} GPUs, while {} GPUs are already allocated for non-preemptible pods. Use a preemptible workload to go over quota..",
                                queues[q].name,
                                non_preemptible[q] + placed
                            ));
                        }
                    }
                }
                None
            },
        ))
    }
}

/// A KAI capacity check: the GPUs a job bound in this pass so far and those it asks next →
/// KAI's message when the queue refuses them.
type CapacityCheck<'w> = dyn Fn(i64, i64) -> Option<String> + 'w;

impl Simulation<'_> {
    /// KAI's allocation of a job with GPU shares: one job of `minMember`, or with a PodGroup
    /// per pod (bare pods, batch/v1 Jobs) each pod alone.
    fn place_kai_shared(
        &mut self,
        w: WorkloadId,
        pods: &[(PodNeeds, Vec<Option<NodeId>>)],
        total: usize,
        shares: &[Option<kueuesim_model::gpu::GpuShare>],
    ) -> placement::Placement {
        let world = self.world;
        let wl = self.spec(w);
        let pod_name = |ps: usize, idx: usize| format!("{}/{}", wl.namespace, wl.pod_name(ps, idx));
        let job_name = kai_job_name(&wl);
        if !wl.gang.pod_group_per_pod {
            let job = placement::kai::KaiJob {
                pods,
                min_member: wl
                    .gang
                    .min_member
                    .map_or(total, |m| (m as usize).min(total)),
                constraint: None,
                job_name: &job_name,
                pod_name: &pod_name,
            };
            return placement::kai::sharing::place(world, &mut self.sched.cluster, &job, shares);
        }
        each_pod_alone(&wl, pods, &pod_name, |job, ps| {
            let share = [shares[ps]];
            placement::kai::sharing::place(world, &mut self.sched.cluster, &job, &share)
        })
    }
}

/// KAI's job grouper for bare pods and batch/v1 Jobs: a PodGroup per pod. Each pending pod is
/// placed alone by `place` (given its PodGroup of minMember 1, named `pg-<pod>`, and its pod
/// set), and the results are merged into the workload's placement.
fn each_pod_alone(
    wl: &kueuesim_model::Workload,
    pods: &[(PodNeeds, Vec<Option<NodeId>>)],
    pod_name: &dyn Fn(usize, usize) -> String,
    mut place: impl FnMut(placement::kai::KaiJob<'_>, usize) -> placement::Placement,
) -> placement::Placement {
    let mut out = placement::Placement::default();
    for (ps, (_, slots)) in pods.iter().enumerate() {
        for (idx, slot) in slots.iter().enumerate() {
            if slot.is_some() {
                continue;
            }
            let single = [(pods[ps].0.clone(), vec![None])];
            let job_name = format!(
                "{}/pg-{}",
                wl.namespace,
                pod_name(ps, idx).rsplit('/').next().unwrap_or_default()
            );
            let this_pod = |_: usize, _: usize| pod_name(ps, idx);
            let r = place(
                placement::kai::KaiJob {
                    pods: &single,
                    min_member: 1,
                    constraint: None,
                    job_name: &job_name,
                    pod_name: &this_pod,
                },
                ps,
            );
            out.bound
                .extend(r.bound.iter().map(|&(_, _, n)| (ps, idx, n)));
            out.claims
                .extend(r.claims.iter().map(|&(_, _, c)| (ps, idx, c)));
            if r.domain.is_some() {
                out.domain = r.domain;
            }
            if out.unplaced.is_none() {
                out.unplaced = r.unplaced.map(|(_, _, m)| (ps, idx, m));
            }
        }
    }
    out
}

/// The workload's KAI topology constraint resolved against its Topology: its own
/// (`kai.scheduler/topology*` annotations or its PodGroup) or the platform default
/// (`spec.kai`). Errors are the scheduler's messages for a constraint it cannot use.
fn kai_constraint(
    world: &World,
    wl: &kueuesim_model::Workload,
) -> Result<Option<placement::kai::KaiConstraint>, String> {
    match (&wl.gang.kai_topology, &world.config.kai) {
        (Some(c), _) => resolve_kai(world, c, "workload"),
        (None, kai) => match (&kai.default_topology, &kai.default_preferred_level) {
            (Some(t), Some(level)) => resolve_kai(
                world,
                &kueuesim_model::KaiTopologyConstraint {
                    topology: t.clone(),
                    required: None,
                    preferred: Some(level.clone()),
                },
                "workload",
            ),
            _ => Ok(None),
        },
    }
}

/// One KAI `topologyConstraint` resolved to level depths of its Topology; `who` is
/// `workload` or `sub-group <name>` in KAI's messages.
fn resolve_kai(
    world: &World,
    c: &kueuesim_model::KaiTopologyConstraint,
    who: &str,
) -> Result<Option<placement::kai::KaiConstraint>, String> {
    let topology = &c.topology;
    if c.required.is_none() && c.preferred.is_none() {
        return Ok(None);
    }
    let Ok(index) = world
        .topologies
        .binary_search_by(|t| t.name.as_str().cmp(topology))
    else {
        return Err(format!("Requested topology {topology} does not exist"));
    };
    let t = &world.topologies[index];
    let not_found = |which: &str, label: &str| {
        format!(
            "Unable to schedule podgroup: topology constraint error: {who} specified '{label}' as the {which} topology constraint level, but the topology tree '{topology}' does not contain a level with this name."
        )
    };
    let depth = |which: &str, label: &Option<String>| -> Result<Option<u32>, String> {
        let Some(label) = label else { return Ok(None) };
        match t.tier_of_level(label) {
            Some(tier) => Ok(Some((t.root_tier() - tier) as u32)),
            None => Err(not_found(which, label)),
        }
    };
    let required = depth("required", &c.required)?;
    let preferred = depth("preferred", &c.preferred)?;
    if let (Some(r), Some(p)) = (required, preferred)
        && p < r
    {
        return Err(not_found(
            "preferred",
            c.preferred.as_deref().unwrap_or_default(),
        ));
    }
    Ok(Some(placement::kai::KaiConstraint {
        topology: index,
        required,
        preferred,
    }))
}

/// The PodGroup KAI's messages name (`<namespace/name>`): the input's PodGroup, else the one
/// KAI's pod grouper would create for the workload (`pg-<name>`).
pub(super) fn kai_job_name(wl: &kueuesim_model::Workload) -> String {
    match &wl.gang.pod_group {
        Some(pg) => format!("{}/{pg}", wl.namespace),
        None => format!("{}/pg-{}", wl.namespace, wl.name),
    }
}

/// What KAI's eviction actions read for one pending job (`Simulation::kai_view`).
pub(super) struct KaiView {
    /// The job's KAI Queue.
    pub(super) queue: usize,
    /// Running KAI jobs Kueue does not manage, the potential victims.
    pub(super) running: Vec<placement::kai::RunningJob>,
    /// GPUs allocated per queue (pipelined ones included).
    pub(super) allocated: Vec<i64>,
    /// Fair share per queue.
    pub(super) fair: Vec<i64>,
    /// The cluster's GPUs.
    pub(super) total: i64,
    /// GPUs of non-preemptible jobs of the job's queue.
    pub(super) non_preemptible: i64,
    /// The job's pods (needs, nodes of those bound).
    pub(super) pods: Vec<(PodNeeds, Vec<Option<NodeId>>)>,
    /// How many of its pods are bound.
    pub(super) bound: usize,
    /// GPUs of each task it allocates now (`GetTasksToAllocate`).
    pub(super) task_gpus: Vec<i64>,
    /// Free GPUs of the cluster.
    pub(super) free_gpus: i64,
    /// The running jobs' keys in job order (higher priority, then older, first): the order
    /// victims are placed again in a scenario.
    pub(super) put_back_order: Vec<usize>,
}

/// KAI's eviction actions that kueuesim runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KaiAction {
    /// `reclaim`: from other queues above their fair share.
    Reclaim,
    /// `preempt`: lower-priority jobs of the same queue.
    Preempt,
}

impl KaiAction {
    /// The eviction's reason in the report.
    fn reason(self) -> &'static str {
        match self {
            KaiAction::Reclaim => "Reclaim",
            KaiAction::Preempt => "Preempt",
        }
    }
}

/// The elastic plugin's job-order rank of a running KAI job (`minAvailableState`): 0 when a
/// subgroup holding pods has fewer bound than its minMember, else 2 when one has more, else 1.
/// Without subgroups the PodGroup is one subgroup of minMember (at least 1); a batch Job's
/// PodGroup per pod is always exactly at its minimum of 1.
fn elastic_rank(wl: &kueuesim_model::Workload, placement: &[Vec<Option<NodeId>>]) -> u8 {
    if wl.gang.pod_group_per_pod {
        return 1;
    }
    let groups = gang_groups(wl, placement);
    if groups.iter().any(|&(b, min)| b < min) {
        0
    } else if groups.iter().any(|&(b, min)| b > min) {
        2
    } else {
        1
    }
}

/// (bound pods, minMember) per KAI subgroup with pods; without subgroups the PodGroup is
/// one subgroup of minMember (at least 1).
pub(super) fn gang_groups(
    wl: &kueuesim_model::Workload,
    placement: &[Vec<Option<NodeId>>],
) -> Vec<(usize, usize)> {
    let bound = |ps: usize| placement.get(ps).map_or(0, |s| s.iter().flatten().count());
    if wl.gang.kai_subgroups.is_empty() {
        let total: usize = placement.iter().map(Vec::len).sum();
        let min = wl.gang.min_member.map_or(total, |m| m as usize).max(1);
        vec![((0..placement.len()).map(bound).sum(), min)]
    } else {
        let mut g = vec![(0, 0); wl.gang.kai_subgroups.len()];
        for (ps, sub) in wl.gang.pod_set_subgroup.iter().enumerate() {
            if let Some(sg) = *sub {
                g[sg].0 += bound(ps);
                g[sg].1 = wl.gang.kai_subgroups[sg].min_member as usize;
            }
        }
        g.into_iter().filter(|&(_, min)| min > 0).collect()
    }
}
