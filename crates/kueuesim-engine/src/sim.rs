//! The discrete-event loop: arrivals, Kueue scheduling cycles, pod placement, start-up and
//! completion, applied to the runtime state of every workload.
//!
//! Policies (the admission cycle, placement) return decisions as data; this module applies
//! them, keeps quota and node capacity in step, and records conditions and events.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use kueuesim_model::resources::GPU;
use kueuesim_model::{
    ClusterQueueId, Labels, NodeId, QueueRef, ResourceId, SchedulerKind, SimDuration, SimTime,
    WorkloadId, World,
};

use crate::admission::{self, Assignment, Head, NotAdmitted, QuotaUsage, Requeue};
use crate::event_queue::EventQueue;
use crate::outcome::{
    Admission, Condition, ConditionType, Event, EventType, Outcome, RunStats, WorkloadRecord,
    WorkloadState,
};
use crate::placement::{self, NodeCapacity, PodNeeds};
use crate::queues::{QueueKey, QueueManager};

/// The event source of Kueue's scheduler.
const KUEUE_ADMISSION: &str = "kueue-admission";

/// What happens at a point in simulated time.
#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A workload is created (or becomes visible at the start).
    Arrive(WorkloadId),
    /// A Kueue scheduling cycle.
    Cycle,
    /// All pods of a workload are running (after start-up); stale if the generation moved on.
    PodsRunning(WorkloadId, u32),
    /// A workload completes; stale if the generation moved on.
    Finish(WorkloadId, u32),
}

/// The runtime state of one workload.
#[derive(Debug)]
struct Runtime {
    arrived: bool,
    /// Bumped whenever scheduled PodsRunning/Finish events become stale.
    generation: u32,
    /// Per pod set, what one pod needs from a node (set when released to its scheduler).
    needs: Vec<PodNeeds>,
    /// Quota usage held, to give back on completion.
    usage: Vec<admission::FlavorResourceAmount>,
    record: WorkloadRecord,
}

/// A simulation of one world.
pub struct Simulation<'w> {
    world: &'w World,
    now: SimTime,
    events: EventQueue<Ev>,
    runtimes: Vec<Runtime>,
    queues: QueueManager,
    usage: QuotaUsage,
    nodes: NodeCapacity,
    /// Workloads released to a scheduler with pods still unplaced, in kube-scheduler's
    /// activeQ order: higher priority first, then earlier release.
    awaiting_placement: BTreeSet<(Reverse<i32>, SimTime, WorkloadId)>,
    cycle_scheduled: bool,
    uid_rank: Vec<u32>,
    gpu: Option<ResourceId>,
    gpus_in_use: i64,
    last_accounted: SimTime,
    stats: RunStats,
}

impl<'w> Simulation<'w> {
    /// Prepares the simulation of `world`; nothing has happened yet.
    pub fn new(world: &'w World) -> Self {
        let mut by_uid: Vec<usize> = (0..world.workloads.len()).collect();
        by_uid.sort_by(|&a, &b| {
            world.workloads[a]
                .uid
                .cmp(&world.workloads[b].uid)
                .then(a.cmp(&b))
        });
        let mut uid_rank = vec![0u32; world.workloads.len()];
        for (rank, &i) in by_uid.iter().enumerate() {
            uid_rank[i] = rank as u32;
        }
        let mut events = EventQueue::default();
        let runtimes = world
            .workloads
            .iter()
            .enumerate()
            .map(|(i, w)| {
                events.push(w.arrival, Ev::Arrive(WorkloadId::from_index(i)));
                Runtime {
                    arrived: false,
                    generation: 0,
                    needs: Vec::new(),
                    usage: Vec::new(),
                    record: WorkloadRecord {
                        state: WorkloadState::Pending,
                        admitted_at: None,
                        running_at: None,
                        finished_at: None,
                        admission: None,
                        placement: w
                            .pod_sets
                            .iter()
                            .map(|p| vec![None; p.count as usize])
                            .collect(),
                        evictions: Vec::new(),
                        conditions: Vec::new(),
                        events: Vec::new(),
                    },
                }
            })
            .collect();
        let gpu = world.resources.lookup(GPU);
        let gpu_capacity = match gpu {
            None => 0,
            Some(g) if world.has_nodes() => world
                .nodes
                .iter()
                .map(|n| n.allocatable.get(g.index()).copied().unwrap_or(0))
                .sum(),
            Some(g) => world
                .cluster_queues
                .iter()
                .flat_map(|cq| &cq.resource_groups)
                .flat_map(|rg| &rg.flavors)
                .flat_map(|f| &f.resources)
                .filter(|q| q.resource == g)
                .map(|q| q.nominal)
                .sum(),
        };
        Simulation {
            world,
            now: SimTime::ZERO,
            events,
            runtimes,
            queues: QueueManager::new(world.cluster_queues.len()),
            usage: QuotaUsage::new(world),
            nodes: NodeCapacity::new(world),
            awaiting_placement: BTreeSet::new(),
            cycle_scheduled: false,
            uid_rank,
            gpu,
            gpus_in_use: 0,
            last_accounted: SimTime::ZERO,
            stats: RunStats {
                gpu_capacity,
                ..RunStats::default()
            },
        }
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Processes the next event if it is at or before `until`; returns false when none is.
    pub fn step(&mut self, until: Option<SimTime>) -> bool {
        let Some(at) = self.events.peek_time() else {
            return false;
        };
        if until.is_some_and(|u| at > u) {
            return false;
        }
        let Some((at, ev)) = self.events.pop() else {
            return false;
        };
        self.advance_to(at);
        self.stats.events_processed += 1;
        match ev {
            Ev::Arrive(w) => self.arrive(w),
            Ev::Cycle => self.cycle(),
            Ev::PodsRunning(w, g) if self.runtimes[w.index()].generation == g => {
                self.pods_running(w)
            }
            Ev::Finish(w, g) if self.runtimes[w.index()].generation == g => self.finish(w),
            Ev::PodsRunning(..) | Ev::Finish(..) => {}
        }
        true
    }

    /// Runs to the horizon (`until`, or the world's own), or until nothing more can happen,
    /// calling `progress` every so often with the current time.
    pub fn run_with_progress(mut self, mut progress: impl FnMut(SimTime, u64)) -> Outcome {
        let until = self.world.config.until;
        while self.step(until) {
            if self.stats.events_processed.is_multiple_of(65_536) {
                progress(self.now, self.stats.events_processed);
            }
        }
        let end = until.unwrap_or(self.now).max(self.now);
        self.advance_to(end);
        self.stats.end = end;
        Outcome {
            workloads: self
                .runtimes
                .into_iter()
                .map(|r| r.arrived.then_some(r.record))
                .collect(),
            stats: self.stats,
        }
    }

    /// Runs to the end (see `run_with_progress`).
    pub fn run(self) -> Outcome {
        self.run_with_progress(|_, _| {})
    }

    /// The state of workload `w` now, or `None` before it arrives.
    pub fn state_of(&self, w: WorkloadId) -> Option<WorkloadState> {
        let rt = &self.runtimes[w.index()];
        rt.arrived.then_some(rt.record.state)
    }

    /// Checks the engine's invariants against the current state; the message names the first
    /// broken one. Meant for tests, after every step:
    /// - no ClusterQueue uses more of a (flavor, resource) than its nominal quota (no cohorts
    ///   yet, so nominal is also the limit), and its usage equals the sum of its admitted
    ///   workloads' usage;
    /// - no node has negative free capacity, and free capacity equals allocatable minus the
    ///   requests of the pods bound to it;
    /// - a gang-scheduled workload has all of its pods placed or none.
    pub fn check_invariants(&self) -> Result<(), String> {
        let world = self.world;
        let mut expected = QuotaUsage::new(world);
        for (i, rt) in self.runtimes.iter().enumerate() {
            if let Some(a) = &rt.record.admission
                && !rt.usage.is_empty()
            {
                expected.add(a.cluster_queue, &rt.usage, 1);
            }
            let placed: usize = rt
                .record
                .placement
                .iter()
                .flatten()
                .filter(|n| n.is_some())
                .count();
            let total: usize = rt.record.placement.iter().map(Vec::len).sum();
            let w = WorkloadId::from_index(i);
            if self.scheduler_of(w).is_gang() && placed != 0 && placed != total {
                return Err(format!(
                    "gang {} has {placed} of {total} pods placed",
                    world.workload(w).name
                ));
            }
        }
        for (c, cq) in world.cluster_queues.iter().enumerate() {
            let cq_id = ClusterQueueId::from_index(c);
            for f in 0..world.flavors.len() {
                for r in 0..world.resources.len() {
                    let (f, r) = (
                        kueuesim_model::FlavorId::from_index(f),
                        ResourceId::from_index(r),
                    );
                    let used = self.usage.get(cq_id, f, r);
                    if used != expected.get(cq_id, f, r) {
                        return Err(format!(
                            "ClusterQueue {} usage of {}/{} is {used}, its workloads hold {}",
                            cq.name,
                            world.flavor(f).name,
                            world.resources.name(r),
                            expected.get(cq_id, f, r)
                        ));
                    }
                    let nominal = cq.quota(f, r).map_or(0, |q| q.nominal);
                    if used > nominal {
                        return Err(format!(
                            "ClusterQueue {} uses {used} of {}/{}, nominal {nominal}",
                            cq.name,
                            world.flavor(f).name,
                            world.resources.name(r)
                        ));
                    }
                }
            }
        }
        let mut cap = NodeCapacity::new(world);
        for rt in self
            .runtimes
            .iter()
            .filter(|rt| rt.record.state != WorkloadState::Finished)
        {
            for (ps, slots) in rt.record.placement.iter().enumerate() {
                for n in slots.iter().flatten() {
                    cap.apply(*n, &rt.needs[ps].requests, 1);
                }
            }
        }
        for (n, node) in world.nodes.iter().enumerate() {
            let id = NodeId::from_index(n);
            for r in 0..world.resources.len() {
                let free = self.nodes.free(id, r);
                if free < 0 {
                    return Err(format!(
                        "node {} is over its allocatable {}: free {free}",
                        node.name,
                        world.resources.name(ResourceId::from_index(r))
                    ));
                }
                if free != cap.free(id, r) {
                    return Err(format!(
                        "node {} free {} is {free}, its pods leave {}",
                        node.name,
                        world.resources.name(ResourceId::from_index(r)),
                        cap.free(id, r)
                    ));
                }
            }
        }
        Ok(())
    }

    fn advance_to(&mut self, at: SimTime) {
        debug_assert!(at >= self.now, "time never goes backwards");
        let dt = (at - self.last_accounted).millis();
        self.stats.gpu_busy_ms += i128::from(self.gpus_in_use) * i128::from(dt);
        self.last_accounted = at;
        self.now = at;
    }

    fn request_cycle(&mut self) {
        if !self.cycle_scheduled {
            self.cycle_scheduled = true;
            self.events.push(self.now, Ev::Cycle);
        }
    }

    fn queue_key(&self, w: WorkloadId) -> QueueKey {
        let wl = self.world.workload(w);
        QueueKey {
            priority: Reverse(wl.priority),
            timestamp: wl.created_at,
            uid_rank: self.uid_rank[w.index()],
            workload: w,
        }
    }

    fn arrive(&mut self, w: WorkloadId) {
        let world = self.world;
        let wl = world.workload(w);
        self.runtimes[w.index()].arrived = true;
        if let Some(blocked) = &wl.creation_blocked {
            // No Workload exists, so Kueue never queues it; the job controller retries and
            // reports the same Warning.
            let message = blocked.message.clone();
            self.record_event(
                w,
                EventType::Warning,
                "kueue-job-controller",
                blocked.reason,
                message,
                None,
            );
            return;
        }
        if let Some(init) = &wl.initial_admission {
            let assignment = Assignment {
                pod_sets: init
                    .pod_sets
                    .iter()
                    .map(|p| crate::outcome::PodSetAssignment {
                        flavors: p.flavors.clone(),
                        count: p.count,
                    })
                    .collect(),
                usage: admission::usage_of(world, init.cluster_queue, wl, &init.pod_sets),
            };
            // Reserved before (or, in a snapshot taken later than the start, at) time 0.
            let at = init.reserved_at.unwrap_or(self.now).min(self.now);
            self.admit(w, init.cluster_queue, assignment, None, at);
            return;
        }
        match &wl.queue {
            QueueRef::Unmanaged => self.release_to_scheduler(w),
            QueueRef::Missing(name) => {
                // Kueue's workload controller (getQueueBlocker): never queued, never admitted.
                let msg = format!("LocalQueue {name} doesn't exist");
                self.set_condition(
                    w,
                    ConditionType::QuotaReserved,
                    false,
                    admission::REASON_MISCONFIGURED,
                    msg,
                );
            }
            QueueRef::Local(lq) => {
                if !wl.active {
                    self.runtimes[w.index()].record.state = WorkloadState::Inactive;
                    return;
                }
                let cq = world.local_queue(*lq).cluster_queue;
                let key = self.queue_key(w);
                self.queues.push_active(cq, key);
                self.request_cycle();
            }
        }
    }

    fn cycle(&mut self) {
        self.cycle_scheduled = false;
        self.stats.cycles += 1;
        let cycle = self.stats.cycles;
        let heads: Vec<Head> = self
            .queues
            .pop_heads()
            .into_iter()
            .map(|(cq, key)| Head { cq, key })
            .collect();
        if heads.is_empty() {
            return;
        }
        let decisions = admission::run_cycle(self.world, &self.usage, &heads);
        let mut progress = !decisions.admit.is_empty();
        for (w, cq, assignment) in decisions.admit {
            self.admit(w, cq, assignment, Some(cycle), self.now);
        }
        for (cq, key, to, why) in decisions.requeue {
            match to {
                Requeue::Active => self.queues.push_active(cq, key),
                Requeue::Inadmissible => {
                    progress = true;
                    self.queues.push_inadmissible(cq, key)
                }
            }
            self.not_admitted(key.workload, why, cycle);
        }
        // Upstream loops without delay after a cycle that admitted something and backs off
        // after one that did not. A cycle that changed nothing would repeat the same decisions
        // until something else happens, so the next one waits for that event instead.
        if progress && self.queues.any_active() {
            self.request_cycle();
        }
    }

    fn not_admitted(&mut self, w: WorkloadId, why: NotAdmitted, cycle: u64) {
        self.record_event(
            w,
            EventType::Warning,
            KUEUE_ADMISSION,
            why.reason,
            why.message.clone(),
            Some(cycle),
        );
        self.set_condition(
            w,
            ConditionType::QuotaReserved,
            false,
            why.reason,
            why.message,
        );
    }

    fn admit(
        &mut self,
        w: WorkloadId,
        cq: ClusterQueueId,
        a: Assignment,
        cycle: Option<u64>,
        at: SimTime,
    ) {
        let world = self.world;
        let cq_name = &world.cluster_queue(cq).name;
        self.usage.add(cq, &a.usage, 1);
        self.stats.admissions += 1;
        let wl = world.workload(w);
        let waited = (at - wl.created_at).as_secs_f64();
        {
            let rt = &mut self.runtimes[w.index()];
            rt.usage = a.usage;
            rt.record.state = WorkloadState::Admitted;
            rt.record.admitted_at = Some(at);
            rt.record.admission = Some(Admission {
                cluster_queue: cq,
                pod_sets: a.pod_sets,
            });
        }
        if cycle.is_some() {
            self.record_event(
                w,
                EventType::Normal,
                KUEUE_ADMISSION,
                "QuotaReserved",
                format!("Quota reserved in ClusterQueue {cq_name}, wait time since queued was {waited:.0}s"),
                cycle,
            );
            self.record_event(
                w,
                EventType::Normal,
                KUEUE_ADMISSION,
                "Admitted",
                format!("Admitted by ClusterQueue {cq_name}, wait time since reservation was 0s"),
                cycle,
            );
        }
        self.set_condition_at(
            w,
            ConditionType::QuotaReserved,
            true,
            "QuotaReserved",
            format!("Quota reserved in ClusterQueue {cq_name}"),
            at,
        );
        self.set_condition_at(
            w,
            ConditionType::Admitted,
            true,
            "Admitted",
            "The workload is admitted".into(),
            at,
        );
        self.set_condition_at(
            w,
            ConditionType::PodsReady,
            false,
            "WaitForStart",
            "Not all pods are ready or succeeded".into(),
            at,
        );
        self.release_to_scheduler(w);
    }

    /// Hands the workload's pods to its scheduler: Kueue ungates/unsuspends them with the
    /// flavors' nodeLabels as nodeSelector and the flavors' tolerations added.
    fn release_to_scheduler(&mut self, w: WorkloadId) {
        let world = self.world;
        let wl = world.workload(w);
        let rt = &mut self.runtimes[w.index()];
        rt.needs = wl
            .pod_sets
            .iter()
            .enumerate()
            .map(|(i, ps)| {
                let mut selector: Vec<(String, String)> = ps
                    .node_selector
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                let mut tolerations = ps.tolerations.clone();
                if let Some(adm) = &rt.record.admission {
                    let mut flavors: Vec<_> =
                        adm.pod_sets[i].flavors.iter().map(|&(_, f)| f).collect();
                    flavors.sort();
                    flavors.dedup();
                    for f in flavors {
                        let flavor = world.flavor(f);
                        selector.extend(
                            flavor
                                .node_labels
                                .iter()
                                .map(|(k, v)| (k.to_string(), v.to_string())),
                        );
                        tolerations.extend(flavor.tolerations.iter().cloned());
                    }
                }
                PodNeeds {
                    requests: ps.requests.clone(),
                    node_selector: Labels::new(selector),
                    tolerations,
                }
            })
            .collect();
        // Partial admission lowers the pod count the scheduler sees.
        if let Some(adm) = &rt.record.admission {
            for (slots, ps) in rt.record.placement.iter_mut().zip(&adm.pod_sets) {
                slots.truncate(ps.count as usize);
            }
        }
        if !world.has_nodes() {
            // Quota-only: an admitted workload runs at once (after the pod start-up delay).
            // GPU use is measured against quota, so only Kueue-admitted GPUs count.
            let gpus = self.quota_only_gpus(w);
            self.gpus_in_use += gpus;
            self.schedule_running(w);
            return;
        }
        self.awaiting_placement
            .insert((Reverse(wl.priority), self.now, w));
        self.try_place(w);
    }

    fn quota_only_gpus(&self, w: WorkloadId) -> i64 {
        if self.runtimes[w.index()].record.admission.is_none() {
            return 0;
        }
        self.workload_gpus(w)
    }

    fn workload_gpus(&self, w: WorkloadId) -> i64 {
        let Some(g) = self.gpu else { return 0 };
        let rt = &self.runtimes[w.index()];
        rt.needs
            .iter()
            .zip(&rt.record.placement)
            .map(|(n, slots)| n.requests.get(g) * slots.len() as i64)
            .sum()
    }

    fn scheduler_of(&self, w: WorkloadId) -> SchedulerKind {
        let name = &self.world.workload(w).scheduler_name;
        self.world
            .config
            .scheduler(name)
            .unwrap_or(SchedulerKind::Kube)
    }

    /// One placement attempt; returns whether the workload is now fully placed.
    fn try_place(&mut self, w: WorkloadId) -> bool {
        let world = self.world;
        let kind = self.scheduler_of(w);
        let rt = &self.runtimes[w.index()];
        let pods: Vec<(PodNeeds, Vec<Option<NodeId>>)> = rt
            .needs
            .iter()
            .cloned()
            .zip(rt.record.placement.iter().cloned())
            .collect();
        let result = placement::first_fit(world, &self.nodes, &pods, kind.is_gang());
        let gpu = self.gpu;
        for &(ps, idx, node) in &result.bound {
            let rt = &mut self.runtimes[w.index()];
            rt.record.placement[ps][idx] = Some(node);
            self.nodes.apply(node, &rt.needs[ps].requests, 1);
            if let Some(g) = gpu {
                self.gpus_in_use += rt.needs[ps].requests.get(g);
            }
        }
        match result.unplaced {
            None => {
                let wl = world.workload(w);
                self.awaiting_placement.retain(|&(_, _, x)| x != w);
                let _ = wl;
                self.schedule_running(w);
                true
            }
            Some((ps, idx, why)) => {
                let pod = self.pod_name(w, ps, idx);
                let message = match kind {
                    SchedulerKind::Kube => why,
                    SchedulerKind::Volcano => {
                        let total: u32 = self.runtimes[w.index()]
                            .record
                            .placement
                            .iter()
                            .map(|s| s.len() as u32)
                            .sum();
                        format!(
                            "{total}/{total} tasks in gang unschedulable: pod group is not ready, {total} Pending, {total} minAvailable; Pending: {total} Unschedulable. Origin reason is {pod}: {}",
                            why.replace("nodes are available", "nodes are unavailable")
                        )
                    }
                    SchedulerKind::Kai => {
                        let total: usize = self.runtimes[w.index()]
                            .record
                            .placement
                            .iter()
                            .map(Vec::len)
                            .sum();
                        format!(
                            "Resources were found for 0 pods while {total} are required for gang scheduling. Additional pods cannot be scheduled due to: {why}"
                        )
                    }
                };
                let reason = match kind {
                    SchedulerKind::Kube => "FailedScheduling",
                    SchedulerKind::Volcano | SchedulerKind::Kai => "Unschedulable",
                };
                self.record_event(
                    w,
                    EventType::Warning,
                    kind.event_source(),
                    reason,
                    message,
                    None,
                );
                false
            }
        }
    }

    /// Retries every workload waiting for nodes, in scheduler queue order.
    fn retry_placements(&mut self) {
        let waiting: Vec<WorkloadId> = self.awaiting_placement.iter().map(|&(_, _, w)| w).collect();
        for w in waiting {
            self.try_place(w);
        }
    }

    /// A pod's name as its controller would name it: `<workload>-<podset>-<index>` for Kueue
    /// Workloads, `<object>-<index>` otherwise.
    pub fn pod_name(&self, w: WorkloadId, ps: usize, idx: usize) -> String {
        pod_name(self.world, w, ps, idx)
    }

    fn schedule_running(&mut self, w: WorkloadId) {
        let rt = &self.runtimes[w.index()];
        let at = self.now + self.world.config.pod_startup;
        self.events.push(at, Ev::PodsRunning(w, rt.generation));
    }

    fn pods_running(&mut self, w: WorkloadId) {
        let managed = self.runtimes[w.index()].record.admission.is_some();
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = WorkloadState::Running;
            rt.record.running_at = Some(self.now);
        }
        if managed {
            self.set_condition(
                w,
                ConditionType::PodsReady,
                true,
                "Started",
                "All pods reached readiness and the workload is running".into(),
            );
        }
        if let Some(d) = self.world.workload(w).duration {
            let g = self.runtimes[w.index()].generation;
            self.events
                .push(self.now + d.max(SimDuration::ZERO), Ev::Finish(w, g));
        }
    }

    fn finish(&mut self, w: WorkloadId) {
        let gpus = if self.world.has_nodes() {
            0
        } else {
            self.workload_gpus(w)
        };
        self.gpus_in_use -= gpus;
        let cq = self.runtimes[w.index()]
            .record
            .admission
            .as_ref()
            .map(|a| a.cluster_queue);
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = WorkloadState::Finished;
            rt.record.finished_at = Some(self.now);
            rt.generation += 1;
        }
        // Release nodes.
        let released: Vec<(usize, NodeId)> = self.runtimes[w.index()]
            .record
            .placement
            .iter()
            .enumerate()
            .flat_map(|(ps, slots)| slots.iter().flatten().map(move |&n| (ps, n)))
            .collect();
        for (ps, node) in &released {
            let req = self.runtimes[w.index()].needs[*ps].requests.clone();
            self.nodes.apply(*node, &req, -1);
            if let Some(g) = self.gpu {
                self.gpus_in_use -= req.get(g);
            }
        }
        if cq.is_some() {
            self.set_condition(
                w,
                ConditionType::Finished,
                true,
                "Succeeded",
                "Reached expected number of succeeded pods".into(),
            );
        }
        // Release quota: a capacity change, so the ClusterQueue's inadmissible workloads
        // return to its heap (QueueInadmissibleWorkloads).
        if let Some(cq) = cq {
            let usage = std::mem::take(&mut self.runtimes[w.index()].usage);
            self.usage.add(cq, &usage, -1);
            self.queues.requeue_inadmissible(cq);
            if self.queues.any_active() {
                self.request_cycle();
            }
        }
        if !released.is_empty() {
            self.retry_placements();
        }
    }

    fn set_condition(
        &mut self,
        w: WorkloadId,
        kind: ConditionType,
        status: bool,
        reason: &'static str,
        message: String,
    ) {
        self.set_condition_at(w, kind, status, reason, message, self.now);
    }

    /// Sets a condition the way `apimeta.SetStatusCondition` does: lastTransitionTime moves
    /// only when the status changes.
    fn set_condition_at(
        &mut self,
        w: WorkloadId,
        kind: ConditionType,
        status: bool,
        reason: &'static str,
        message: String,
        at: SimTime,
    ) {
        let conds = &mut self.runtimes[w.index()].record.conditions;
        match conds.iter_mut().find(|c| c.kind == kind) {
            Some(c) => {
                if c.status != status {
                    c.at = at;
                }
                c.status = status;
                c.reason = reason;
                c.message = message;
            }
            None => conds.push(Condition {
                kind,
                status,
                reason,
                message,
                at,
            }),
        }
    }

    /// Records an event, folding an exact repeat of the workload's previous event into it (as
    /// the event recorder aggregates repeats into a count).
    fn record_event(
        &mut self,
        w: WorkloadId,
        kind: EventType,
        source: &'static str,
        reason: &'static str,
        message: String,
        cycle: Option<u64>,
    ) {
        let events = &mut self.runtimes[w.index()].record.events;
        if let Some(last) = events.iter().rev().find(|e| e.source == source)
            && last.kind == kind
            && last.reason == reason
            && last.message == message
        {
            return;
        }
        events.push(Event {
            at: self.now,
            kind,
            source,
            reason,
            message,
            cycle,
        });
    }
}

/// A pod's name as its controller would name it (see `Workload::pod_name`).
pub fn pod_name(world: &World, w: WorkloadId, ps: usize, idx: usize) -> String {
    world.workload(w).pod_name(ps, idx)
}
