//! Volcano's `preempt` and `reclaim` actions (volcano `pkg/scheduler/actions/preempt` and
//! `reclaim`) for a starving job Kueue does not manage: one statement per job, task by task,
//! node by node, victims voted by the plugins (`Session.Preemptable`, `Session.Reclaimable`),
//! evicted pod by pod (`Statement.Evict`) and committed only when the job is pipelined.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use kueuesim_model::{
    EvictVoter, NodeId, QueuePlugin, QueueRef, ResourceList, SchedulerKind, VolcanoAction,
    VolcanoQueue, WorkloadId,
};

use crate::outcome::{EventType, WorkloadState};
use crate::placement::volcano::queues::{
    Capacity, Proportion, QueueView, Reclaimer, Res, Units, less_equal,
};

use super::pod_loss::Loss;
use super::{Ev, Simulation};

/// `scheduling.SystemClusterCritical` and `SystemNodeCritical`: conformance never evicts them.
const CRITICAL_CLASSES: [&str; 2] = ["system-cluster-critical", "system-node-critical"];

/// `v1beta1.PodPreemptable`.
const PREEMPTABLE: &str = "volcano.sh/preemptable";

/// A running pod of the session the actions may evict.
#[derive(Clone, Debug)]
struct Task {
    w: WorkloadId,
    ps: usize,
    i: usize,
    node: NodeId,
    requests: ResourceList,
    /// Its requests in upstream units.
    req: Res,
    queue: usize,
    /// Its job's priority (`JobInfo.Priority`, the PodGroup's), which the plugins compare
    /// across jobs.
    priority: i32,
    /// Its own priority (`TaskInfo.Priority`: its pod set's PriorityClass, else its job's),
    /// which orders the victims of one job.
    pod_priority: i32,
    /// `TaskInfo.Preemptable` (`GetPodPreemptable`).
    preemptable: bool,
    /// A critical pod or one in kube-system (conformance).
    critical: bool,
    /// Its job's creation time and pod name, for the victims' order.
    created: i64,
    name: String,
}

/// The preemptor as the priority plugin's `PreemptableFn` reads it.
#[derive(Clone, Copy, Debug)]
struct Preemptor {
    job: WorkloadId,
    /// Its job's priority, compared with other jobs'.
    priority: i32,
    /// The pending task's own priority, compared with its job's other tasks'.
    task_priority: i32,
}

/// Which loop of an action a statement belongs to (`preempt.go` Execute has two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Between jobs: preempt's first loop (other jobs of the queue) or reclaim's (other
    /// queues); the job's statement commits only when the job is pipelined.
    Jobs,
    /// preempt's second loop ("Preemption between Task within Job"): each pending task
    /// against its own job's running tasks, its statement committed when the task is
    /// pipelined; the job's first task that is not ends the loop.
    WithinJob,
}

/// `Session.JobStarving` for a job with `ready` ready and pipelined tasks: the first tier
/// with a `JobStarvingFn` decides, every one in it agreeing (gang: below minAvailable;
/// priority: below the job's task count); with none a job never starves.
pub(super) fn job_starving(
    tiers: &[Vec<EvictVoter>],
    ready: usize,
    min: usize,
    total: usize,
) -> bool {
    for tier in tiers {
        let mut found = false;
        for v in tier {
            let ok = match v {
                EvictVoter::Gang => ready < min,
                EvictVoter::Priority => ready < total,
                _ => continue,
            };
            found = true;
            if !ok {
                return false;
            }
        }
        if found {
            return true;
        }
    }
    false
}

/// Which action runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Preempt,
    Reclaim,
}

impl Action {
    /// The reason `Statement.Evict` passes, which the cache records as the event message.
    fn reason(self) -> &'static str {
        match self {
            Action::Preempt => "preempt",
            Action::Reclaim => "reclaim",
        }
    }

    /// kueuesim's `summary.evictions` reason.
    fn counted_as(self) -> &'static str {
        match self {
            Action::Preempt => "Preempt",
            Action::Reclaim => "Reclaim",
        }
    }
}

/// `GetPodPreemptable`: the pod's `volcano.sh/preemptable` annotation, else its label, read
/// as a Go bool (an unreadable value is false); true when neither is set.
fn pod_preemptable(info: Option<&kueuesim_model::PodInfo>) -> bool {
    let Some(info) = info else { return true };
    let value = info
        .annotations
        .iter()
        .chain(&info.labels)
        .find(|(k, _)| k == PREEMPTABLE)
        .map(|(_, v)| v.as_str());
    match value {
        None => true,
        Some(v) => matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True"),
    }
}

impl Simulation<'_> {
    /// After allocate left Volcano job `w` short, outside a session (a job Volcano does not
    /// take queue by queue, or one retried alone): the conf's `reclaim` and `preempt`
    /// actions in the conf's order for this job alone. The first action that pipelines the
    /// job ends it. In a session the actions run over all its jobs after allocate
    /// (`volcano_session_actions`).
    pub(super) fn volcano_evict_for(&mut self, w: WorkloadId) {
        let world = self.world;
        let Some(conf) = &world.config.volcano.queues else {
            return;
        };
        if self.sched.volcano_in_session || !self.volcano_may_evict(w) {
            return;
        }
        for &action in &conf.actions {
            let done = match action {
                VolcanoAction::Preempt => {
                    let starving = self.volcano_starving(w);
                    let pipelined = self.volcano_preempt_between(w);
                    if starving {
                        self.volcano_preempt_within(w, &pipelined);
                    }
                    !pipelined.is_empty()
                }
                VolcanoAction::Reclaim => self.volcano_reclaim_for(w),
                _ => false,
            };
            if done {
                return;
            }
        }
    }

    /// Whether job `w` may take part in `preempt` and `reclaim` at all: the conf lists one of
    /// them, Kueue does not manage the job (Kueue's own preemption owns the jobs it admits),
    /// it is past enqueue, has a Volcano Queue and pods, and is not already pipelined onto
    /// pods still terminating.
    pub(super) fn volcano_may_evict(&self, w: WorkloadId) -> bool {
        let Some(conf) = &self.world.config.volcano.queues else {
            return false;
        };
        if !(conf.has(VolcanoAction::Preempt) || conf.has(VolcanoAction::Reclaim)) {
            return false;
        }
        let spec = self.spec(w);
        let rt = &self.runtimes[w.index()];
        spec.queue == QueueRef::Unmanaged
            && spec.gang.volcano_queue.is_some()
            && rt.volcano_inqueue
            && rt.volcano_pipelined.is_none_or(|t| self.now > t)
            && !rt.needs.is_empty()
    }

    /// `JobStarving` for job `w` as it stands (nothing pipelined in this statement).
    pub(super) fn volcano_starving(&self, w: WorkloadId) -> bool {
        let Some(conf) = &self.world.config.volcano.queues else {
            return false;
        };
        let rt = &self.runtimes[w.index()];
        let ready = rt
            .record
            .placed_pods()
            .filter(|&(ps, i)| !rt.volcano_releasing.iter().any(|r| (r.1, r.2) == (ps, i)))
            .count();
        let total: usize = rt.record.placement.iter().map(Vec::len).sum();
        let min = self
            .spec(w)
            .gang
            .min_member
            .map_or(total, |m| (m as usize).min(total));
        job_starving(&conf.starving_tiers, ready, min, total)
    }

    /// preempt's first loop for job `w` ("Preemption between Jobs within Queue"): one
    /// statement over its pending tasks against the other jobs of its queue. The tasks it
    /// pipelined when it committed (none otherwise).
    pub(super) fn volcano_preempt_between(&mut self, w: WorkloadId) -> Vec<(usize, usize)> {
        self.volcano_statement(w, Action::Preempt, Phase::Jobs, &[])
    }

    /// preempt's second loop for job `w` ("Preemption between Task within Job"): its pending
    /// tasks (less `pipelined`, those the first loop pipelined) in task order, each against
    /// the job's own running tasks.
    pub(super) fn volcano_preempt_within(&mut self, w: WorkloadId, pipelined: &[(usize, usize)]) {
        self.volcano_statement(w, Action::Preempt, Phase::WithinJob, pipelined);
    }

    /// reclaim for job `w`: one statement over its pending tasks against other queues'
    /// running tasks; whether it committed.
    pub(super) fn volcano_reclaim_for(&mut self, w: WorkloadId) -> bool {
        !self
            .volcano_statement(w, Action::Reclaim, Phase::Jobs, &[])
            .is_empty()
    }

    /// Task priority (`TaskInfo.Priority`) of job `x`'s pods of pod set `ps`: its pod set's
    /// PriorityClass, else its job's.
    fn volcano_pod_priority(&self, x: WorkloadId, ps: usize) -> i32 {
        let spec = self.spec(x);
        spec.pod_sets
            .get(ps)
            .and_then(|p| p.priority_class_name.as_deref())
            .and_then(|name| {
                self.world
                    .priority_classes
                    .iter()
                    .find(|c| c.is_pod_priority_class && c.name == name)
            })
            .map_or(spec.priority, |c| c.value)
    }

    /// The statements of `action` for job `w` in `phase`: between jobs one statement,
    /// committed when the job is pipelined; within the job one per task, committed when the
    /// task is pipelined, until a task cannot be. The tasks pipelined by what was committed.
    fn volcano_statement(
        &mut self,
        w: WorkloadId,
        action: Action,
        phase: Phase,
        skip: &[(usize, usize)],
    ) -> Vec<(usize, usize)> {
        let world = self.world;
        let Some(conf) = &world.config.volcano.queues else {
            return Vec::new();
        };
        let spec = self.spec(w);
        let Some(qi) = spec.gang.volcano_queue else {
            return Vec::new();
        };
        // Upstream's preempt skips jobs with a networkTopology (volcano issue 4374).
        if action == Action::Preempt && spec.gang.network_topology.is_some() {
            return Vec::new();
        }
        let units = Units::new(&world.resources);
        let jobs = self.volcano_session_jobs(&units);
        let (total, _) = self.volcano_totals(&units);
        let session: Vec<_> = jobs.iter().map(|(_, j)| j.clone()).collect();
        let queues = &world.volcano_queues;
        let mut view = conf.plugin.map(|plugin| match plugin {
            QueuePlugin::Proportion => {
                QueueView::Proportion(Proportion::open(queues, &units, &total, &session))
            }
            QueuePlugin::Capacity { hierarchy } => {
                QueueView::Capacity(Capacity::open(queues, &units, &total, &session, hierarchy))
            }
        });
        let queue = &queues[qi];
        // reclaim: an overused queue reclaims nothing (`ssn.Overused`).
        if action == Action::Reclaim
            && conf.overused
            && view.as_ref().is_some_and(|v| v.overused(qi))
        {
            return Vec::new();
        }
        let vote_tiers = match action {
            Action::Preempt => &conf.preempt_tiers,
            Action::Reclaim => &conf.reclaim_tiers,
        };
        let hierarchy = matches!(conf.plugin, Some(QueuePlugin::Capacity { hierarchy: true }));
        // The candidates: the running pods, not already terminating, of the session's other
        // jobs Kueue does not manage (within the job: of job `w` itself); and every job's
        // ready pods (`ReadyTaskNum`).
        let mut tasks: Vec<Task> = Vec::new();
        let mut ready: BTreeMap<WorkloadId, usize> = BTreeMap::new();
        let mut min_member: BTreeMap<WorkloadId, usize> = BTreeMap::new();
        // drf's `jobAttrs`: each job's allocated tasks (`AllocatedStatus`: not releasing),
        // kept up to date through the statement as its event handlers do.
        let mut drf_alloc: BTreeMap<WorkloadId, Res> = BTreeMap::new();
        for &(x, ref job) in &jobs {
            let xs = self.spec(x);
            let rt = &self.runtimes[x.index()];
            let total_pods: usize = rt.record.placement.iter().map(Vec::len).sum();
            min_member.insert(
                x,
                xs.gang
                    .min_member
                    .map_or(total_pods, |m| (m as usize).min(total_pods)),
            );
            let mut n = 0;
            let alloc = drf_alloc.entry(x).or_insert_with(|| vec![0.0; units.len()]);
            for (ps, i) in rt.record.placed_pods() {
                if rt.volcano_releasing.iter().any(|r| (r.1, r.2) == (ps, i)) {
                    continue;
                }
                n += 1;
                units.add_list(alloc, &rt.needs[ps].requests, 1.0);
                if (x == w) != (phase == Phase::WithinJob) || xs.queue != QueueRef::Unmanaged {
                    continue;
                }
                let Some(node) = rt.record.placement[ps][i] else {
                    continue;
                };
                let info = xs.gang.pod_info.get(ps).and_then(|p| p.get(i));
                let critical = xs.namespace == "kube-system"
                    || xs
                        .priority_class
                        .as_deref()
                        .is_some_and(|c| CRITICAL_CLASSES.contains(&c));
                tasks.push(Task {
                    w: x,
                    ps,
                    i,
                    node,
                    requests: rt.needs[ps].requests.clone(),
                    req: units.dense(&rt.needs[ps].requests),
                    queue: job.queue,
                    priority: xs.priority,
                    pod_priority: self.volcano_pod_priority(x, ps),
                    preemptable: pod_preemptable(info.map(|a| &**a)),
                    critical,
                    created: xs.created_at.millis(),
                    name: xs.pod_name(ps, i),
                });
            }
            ready.insert(x, n);
        }
        // The candidates by node (`node.Tasks`), in session order.
        let mut on_node: Vec<Vec<usize>> = vec![Vec::new(); world.nodes.len()];
        for (k, t) in tasks.iter().enumerate() {
            on_node[t.node.index()].push(k);
        }
        let my_min = min_member.get(&w).copied().unwrap_or(0);
        let my_total: usize = self.runtimes[w.index()]
            .record
            .placement
            .iter()
            .map(Vec::len)
            .sum();
        let my_ready = ready.get(&w).copied().unwrap_or(0);
        // `JobStarving` with the statement's pipelined tasks; the loop within the job does
        // not ask it (its jobs starved as the action began).
        let starving = |pipelined: usize| -> bool {
            phase == Phase::WithinJob
                || job_starving(&conf.starving_tiers, my_ready + pipelined, my_min, my_total)
        };
        if !starving(0) {
            return Vec::new();
        }
        // The preemptor's pending tasks, in task order (`TaskOrderFn`: the priority
        // plugin's higher task priority first, then pod order).
        let rt = &self.runtimes[w.index()];
        let mut pending: Vec<(usize, usize)> = rt
            .record
            .placement
            .iter()
            .enumerate()
            .flat_map(|(ps, slots)| {
                slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.is_none())
                    .map(move |(i, _)| (ps, i))
            })
            .filter(|t| !skip.contains(t))
            .collect();
        let task_priority: Vec<i32> = (0..rt.needs.len())
            .map(|ps| self.volcano_pod_priority(w, ps))
            .collect();
        pending.sort_by_key(|&(ps, _)| Reverse(task_priority[ps]));
        let needs = rt.needs.clone();
        // `preemptionPolicy: Never` by pod set.
        let never: Vec<bool> = spec.pod_sets.iter().map(|p| p.preempt_never).collect();
        let mut scratch = self.sched.cluster.clone();
        // The session's nodes as preempt's node scores read them: the statement's
        // pipelined tasks added, its victims still there (releasing pods stay in
        // upstream's `NodeInfo.Tasks`).
        let mut session_nodes = (action == Action::Preempt).then(|| scratch.nodes.clone());
        let mut evicted: Vec<usize> = Vec::new();
        let mut pipelined: Vec<(usize, usize, NodeId)> = Vec::new();
        for (ps, i) in pending {
            if !starving(pipelined.len()) {
                break;
            }
            // A task whose `preemptionPolicy` is `Never` evicts nothing (preempt's
            // `taskEligibleToPreempt`, reclaim's check before `Preemptive`); the job's other
            // tasks still may, except within the job, where a task not pipelined ends it.
            if never.get(ps).copied().unwrap_or(false) {
                if phase == Phase::WithinJob {
                    break;
                }
                continue;
            }
            let pod = &needs[ps];
            let req = units.dense(&pod.requests);
            let best_effort = units.requests_nothing(&req);
            let masked: Res = req.iter().map(|&r| if r > 0.0 { r } else { 0.0 }).collect();
            // Allocatable (preempt's `preemptorFitsOnNode`) and Preemptive (reclaim):
            // proportion's `queueAllocatable` for the one task; capacity's own
            // `PreemptiveFn`. `Session.Allocatable` skips a plugin whose
            // `enabledAllocatable` is false (then any queue is allocatable); `Preemptive`
            // reads `enablePreemptive` instead, which kueuesim does not read (on).
            let queue_room = |view: &Option<QueueView>| {
                view.as_ref()
                    .is_none_or(|v| v.allocatable(queue, qi, &masked))
            };
            let allocatable = |view: &Option<QueueView>| !conf.allocatable || queue_room(view);
            let preemptive = match view.as_ref() {
                Some(QueueView::Capacity(c)) => c.preemptive(
                    queues,
                    &units,
                    qi,
                    &masked,
                    hierarchy,
                    conf.ancestor_reclaim_level,
                ),
                _ => queue_room(&view),
            };
            if action == Action::Reclaim && !preemptive {
                continue;
            }
            let reclaimer = Reclaimer {
                queue: qi,
                req: &masked,
                hierarchy,
                level: conf.ancestor_reclaim_level,
            };
            // The predicate nodes; preempt tries them by node score (`PrioritizeNodes`,
            // `SortNodes`), reclaim in their order.
            let mut nodes: Vec<NodeId> = (0..world.nodes.len())
                .map(NodeId::from_index)
                .filter(|&node| crate::placement::statically_feasible(world, node, pod))
                .collect();
            if let Some(cap) = &session_nodes {
                crate::placement::volcano::preempt_node_order(
                    world, &scratch, cap, pod, &mut nodes,
                );
            }
            let mut assigned = false;
            for node in nodes {
                // The candidates on the node (`node.Tasks` through the action's filter).
                let candidates: Vec<usize> = on_node[node.index()]
                    .iter()
                    .copied()
                    .filter(|&k| {
                        let t = &tasks[k];
                        !evicted.contains(&k)
                            && t.preemptable
                            && match action {
                                // "BestEffort pod is not supported to preempt unBestEffort
                                // pod" (preempt's filter only).
                                Action::Preempt => {
                                    t.queue == qi
                                        && (!best_effort || units.requests_nothing(&t.req))
                                }
                                Action::Reclaim => t.queue != qi && queues[t.queue].reclaimable,
                            }
                    })
                    .collect();
                if action == Action::Reclaim && candidates.is_empty() {
                    continue;
                }
                // drf's share of the preemptor's job with this task (`lalloc`).
                let mut with_task = drf_alloc
                    .get(&w)
                    .cloned()
                    .unwrap_or_else(|| vec![0.0; units.len()]);
                for (a, r) in with_task.iter_mut().zip(&req) {
                    *a += r;
                }
                let drf = Drf {
                    allocated: &drf_alloc,
                    total: &total,
                    units: &units,
                    preemptor_share: units.dominant_share(&with_task, &total),
                };
                let mut victims = vote(
                    action,
                    vote_tiers,
                    &candidates,
                    &tasks,
                    &ready,
                    &min_member,
                    Preemptor {
                        job: w,
                        priority: spec.priority,
                        task_priority: task_priority[ps],
                    },
                    view.as_ref(),
                    Some((queues, &units, reclaimer)),
                    &drf,
                );
                // `ValidateVictims`: the node's future idle with every victim gone fits the
                // task.
                let fits_with = |gone: &[usize], scratch: &crate::placement::Cluster| {
                    let nodes = &scratch.nodes;
                    nodes.free_pods(node) + gone.len() as i64 >= 1
                        && pod.requests.iter().all(|(r, a)| {
                            let freed: i64 = gone.iter().map(|&k| tasks[k].requests.get(r)).sum();
                            a <= nodes.free(node, r.index()) + freed
                        })
                };
                if !fits_with(&victims, &scratch) {
                    continue;
                }
                victims.sort_by(|&a, &b| victim_order(&tasks[a], &tasks[b], queues, view.as_ref()));
                let mut here: Vec<usize> = Vec::new();
                let fits_now = |scratch: &crate::placement::Cluster, view: &Option<QueueView>| {
                    scratch.nodes.fits(node, &pod.requests)
                        && (action == Action::Reclaim || allocatable(view))
                };
                let mut fits = fits_now(&scratch, &view);
                for &k in &victims {
                    if fits {
                        break;
                    }
                    let t = &tasks[k];
                    scratch.apply(world, t.node, &t.requests, -1);
                    if let Some(v) = view.as_mut() {
                        v.account(t.queue, &t.req, -1.0);
                    }
                    *ready.entry(t.w).or_default() -= 1;
                    if let Some(a) = drf_alloc.get_mut(&t.w) {
                        for (a, r) in a.iter_mut().zip(&t.req) {
                            *a -= r;
                        }
                    }
                    here.push(k);
                    fits = fits_now(&scratch, &view);
                }
                if !fits {
                    // Discard: the node's evictions are undone.
                    for &k in &here {
                        let t = &tasks[k];
                        scratch.apply(world, t.node, &t.requests, 1);
                        if let Some(v) = view.as_mut() {
                            v.account(t.queue, &t.req, 1.0);
                        }
                        *ready.entry(t.w).or_default() += 1;
                        if let Some(a) = drf_alloc.get_mut(&t.w) {
                            for (a, r) in a.iter_mut().zip(&t.req) {
                                *a += r;
                            }
                        }
                    }
                    continue;
                }
                // Pipeline the task on the node; the node's evictions join the statement.
                scratch.apply(world, node, &pod.requests, 1);
                if let Some(cap) = session_nodes.as_mut() {
                    cap.apply(node, &pod.requests, 1);
                }
                if let Some(v) = view.as_mut() {
                    v.account(qi, &req, 1.0);
                }
                let mine = drf_alloc.entry(w).or_insert_with(|| vec![0.0; units.len()]);
                for (a, r) in mine.iter_mut().zip(&req) {
                    *a += r;
                }
                pipelined.push((ps, i, node));
                evicted.extend(here);
                assigned = true;
                break;
            }
            // Within the job, the first task not pipelined discards its statement and ends
            // the job's loop (the tasks before it stay committed).
            if !assigned && phase == Phase::WithinJob {
                break;
            }
        }
        // Between jobs, `JobPipelined` (gang: ready + pipelined reach minAvailable) commits
        // the statement; otherwise it is discarded. Within the job each pipelined task's
        // statement was committed: one commit of them all is the same.
        let is_pipelined = phase == Phase::WithinJob
            || !conf.gang_pipelined
            || my_ready + pipelined.len() >= my_min;
        if !is_pipelined || evicted.is_empty() {
            return Vec::new();
        }
        self.volcano_commit(w, action, &evicted, &tasks);
        pipelined.iter().map(|&(ps, i, _)| (ps, i)).collect()
    }

    /// Commits a statement: every victim pod is evicted (`SchedulerCache.Evict`: the
    /// PodGroup's Normal `Evict` event with the action's reason) and terminates for
    /// `podTermination`; the preemptor waits, pipelined, for their resources.
    fn volcano_commit(&mut self, w: WorkloadId, action: Action, evicted: &[usize], tasks: &[Task]) {
        let gone_at = self.now + self.world.config.pod_termination;
        let mut victims: Vec<WorkloadId> = Vec::new();
        for &k in evicted {
            let t = &tasks[k];
            self.record_event(
                t.w,
                EventType::Normal,
                SchedulerKind::Volcano.event_source(),
                "Evict",
                action.reason().to_string(),
                None,
            );
            self.runtimes[t.w.index()].volcano_releasing.push((
                gone_at,
                t.ps,
                t.i,
                action == Action::Reclaim,
            ));
            *self
                .rec
                .stats
                .evictions
                .entry(action.counted_as())
                .or_default() += 1;
            if !victims.contains(&t.w) {
                victims.push(t.w);
            }
        }
        for v in victims {
            self.events.push(gone_at, Ev::VolcanoPodsGone(v));
        }
        let rt = &mut self.runtimes[w.index()];
        rt.volcano_pipelined = Some(gone_at);
        rt.record.preemptions_caused += evicted.len() as u32;
    }

    /// The pods `preempt` or `reclaim` evicted from `v` that are due now are gone: their
    /// nodes are free and the job's controller replaces them as it does any lost pod; the
    /// jobs waiting are tried again, the pipelined preemptor first. Whether any was.
    pub(super) fn volcano_pods_gone(&mut self, v: WorkloadId) -> bool {
        let now = self.now;
        let Some(rt) = self.runtimes.get_mut(v.index()) else {
            return false;
        };
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut rt.volcano_releasing)
            .into_iter()
            .partition(|r| r.0 <= now);
        rt.volcano_releasing = later;
        let pods: Vec<(usize, usize)> = due
            .iter()
            .filter(|r| rt.record.placement[r.1][r.2].is_some())
            .map(|r| (r.1, r.2))
            .collect();
        if pods.is_empty() {
            return false;
        }
        let done = matches!(
            rt.record.state,
            WorkloadState::Finished | WorkloadState::Evicted
        );
        if done {
            self.release_pods(v, &pods);
        } else {
            self.lose_pods(v, &pods, Loss::VolcanoEvicted, None);
        }
        self.retry_placements();
        true
    }
}

/// drf's `shareDelta`: shares this close are equal.
const DRF_SHARE_DELTA: f64 = 0.000_001;

/// What drf's preempt vote reads: each job's allocated requests (upstream units), the
/// cluster's total and the preemptor's job's dominant share with its task.
struct Drf<'a> {
    allocated: &'a BTreeMap<WorkloadId, Res>,
    total: &'a Res,
    units: &'a Units,
    preemptor_share: f64,
}

/// `BuildVictimsPriorityQueue`'s order: other queues by the victim queue order (lower
/// queue priority, then larger share, first), then lower job priority; within one job the
/// task order reversed (`!TaskOrderFn`: the priority plugin's lower task priority first);
/// then the task scheduled last.
fn victim_order(
    ta: &Task,
    tb: &Task,
    queues: &[VolcanoQueue],
    view: Option<&QueueView>,
) -> std::cmp::Ordering {
    let share = |q: usize| view.and_then(|v| v.attr(q)).map_or(0.0, |a| a.share);
    let by_queue = if ta.queue != tb.queue {
        queues[ta.queue]
            .priority
            .cmp(&queues[tb.queue].priority)
            .then(share(tb.queue).total_cmp(&share(ta.queue)))
            .then(tb.queue.cmp(&ta.queue))
    } else {
        std::cmp::Ordering::Equal
    };
    let by_priority = if ta.w == tb.w {
        ta.pod_priority.cmp(&tb.pod_priority)
    } else {
        ta.priority.cmp(&tb.priority)
    };
    by_queue
        .then(by_priority)
        .then(Reverse(ta.created).cmp(&Reverse(tb.created)))
        .then(Reverse(&ta.name).cmp(&Reverse(&tb.name)))
}

/// The plugins' vote on the victims among `candidates` (`Session.Preemptable` or
/// `Session.Reclaimable`): tier by tier, the intersection of the voters' lists; a voter with
/// none ends the tier without victims; the first tier with victims decides.
#[allow(clippy::too_many_arguments)]
fn vote(
    action: Action,
    tiers: &[Vec<EvictVoter>],
    candidates: &[usize],
    tasks: &[Task],
    ready: &BTreeMap<WorkloadId, usize>,
    min_member: &BTreeMap<WorkloadId, usize>,
    preemptor: Preemptor,
    view: Option<&QueueView>,
    reclaimer: Option<(&[VolcanoQueue], &Units, Reclaimer)>,
    drf: &Drf<'_>,
) -> Vec<usize> {
    for tier in tiers {
        let mut victims: Option<Vec<usize>> = None;
        for voter in tier {
            let list: Vec<usize> = match (voter, action) {
                (EvictVoter::Conformance, _) => candidates
                    .iter()
                    .copied()
                    .filter(|&k| !tasks[k].critical)
                    .collect(),
                // gang: a job gives pods only while it keeps more than minAvailable ready.
                (EvictVoter::Gang, _) => {
                    let mut occupied: BTreeMap<WorkloadId, usize> = BTreeMap::new();
                    let mut out = Vec::new();
                    for &k in candidates {
                        let x = tasks[k].w;
                        let n = occupied
                            .entry(x)
                            .or_insert_with(|| ready.get(&x).copied().unwrap_or(0));
                        if *n > min_member.get(&x).copied().unwrap_or(0) {
                            *n -= 1;
                            out.push(k);
                        }
                    }
                    out
                }
                // priority (preempt only): another job of lower priority; within the job, a
                // task of lower priority.
                (EvictVoter::Priority, Action::Preempt) => candidates
                    .iter()
                    .copied()
                    .filter(|&k| {
                        let t = &tasks[k];
                        if t.w == preemptor.job {
                            t.pod_priority < preemptor.task_priority
                        } else {
                            t.priority < preemptor.priority
                        }
                    })
                    .collect(),
                // drf (preempt only): a candidate whose job, less the candidates of the job
                // taken before it, keeps a dominant share at least the preemptor's job's
                // with the task (`ls < rs`, or equal within `shareDelta`).
                (EvictVoter::Drf, Action::Preempt) => {
                    let mut left: BTreeMap<WorkloadId, Res> = BTreeMap::new();
                    let mut out = Vec::new();
                    for &k in candidates {
                        let t = &tasks[k];
                        let Some(alloc) = drf.allocated.get(&t.w) else {
                            continue;
                        };
                        let alloc = left.entry(t.w).or_insert_with(|| alloc.clone());
                        for (a, r) in alloc.iter_mut().zip(&t.req) {
                            *a -= r;
                        }
                        let rs = drf.units.dominant_share(alloc, drf.total);
                        let ls = drf.preemptor_share;
                        if ls < rs || (ls - rs).abs() <= DRF_SHARE_DELTA {
                            out.push(k);
                        }
                    }
                    out
                }
                // capacity (reclaim only): its `ReclaimableFn`, over the candidates in the
                // victims' order.
                (EvictVoter::Queue, Action::Reclaim)
                    if matches!(view, Some(QueueView::Capacity(_))) =>
                {
                    let (Some(QueueView::Capacity(c)), Some((queues, units, r))) =
                        (view, reclaimer)
                    else {
                        continue;
                    };
                    let mut ordered = candidates.to_vec();
                    ordered.sort_by(|&a, &b| victim_order(&tasks[a], &tasks[b], queues, view));
                    let reclaimees: Vec<(usize, usize, &[f64])> = ordered
                        .iter()
                        .map(|&k| (k, tasks[k].queue, tasks[k].req.as_slice()))
                        .collect();
                    c.reclaimable(queues, units, r, &reclaimees)
                }
                // proportion (reclaim only): the victim's queue still above its deserved.
                (EvictVoter::Queue, Action::Reclaim) => {
                    let Some(view) = view else { continue };
                    let mut left: BTreeMap<usize, Res> = BTreeMap::new();
                    let mut out = Vec::new();
                    for &k in candidates {
                        let t = &tasks[k];
                        let Some(attr) = view.attr(t.queue) else {
                            continue;
                        };
                        let allocated = left
                            .entry(t.queue)
                            .or_insert_with(|| attr.allocated.clone());
                        if !less_equal(allocated, &attr.deserved) {
                            for (a, r) in allocated.iter_mut().zip(&t.req) {
                                *a -= r;
                            }
                            out.push(k);
                        }
                    }
                    out
                }
                _ => continue,
            };
            if list.is_empty() {
                victims = None;
                break;
            }
            victims = Some(match victims {
                None => list,
                Some(v) => v.into_iter().filter(|k| list.contains(k)).collect(),
            });
        }
        // An empty intersection is no decision (upstream's nil list): the next tier votes.
        if let Some(v) = victims.filter(|v| !v.is_empty()) {
            return v;
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(annotations: &[(&str, &str)], labels: &[(&str, &str)]) -> kueuesim_model::PodInfo {
        let own = |l: &[(&str, &str)]| {
            l.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        kueuesim_model::PodInfo {
            labels: own(labels),
            annotations: own(annotations),
            ..Default::default()
        }
    }

    /// `GetPodPreemptable`: the annotation first, then the label, a Go bool; unset is true,
    /// an unreadable value false.
    #[test]
    fn preemptable_reads_the_annotation_then_the_label() {
        assert!(pod_preemptable(None));
        assert!(pod_preemptable(Some(&info(&[], &[]))));
        assert!(!pod_preemptable(Some(&info(
            &[(PREEMPTABLE, "false")],
            &[]
        ))));
        assert!(!pod_preemptable(Some(&info(
            &[],
            &[(PREEMPTABLE, "false")]
        ))));
        assert!(pod_preemptable(Some(&info(
            &[(PREEMPTABLE, "true")],
            &[(PREEMPTABLE, "false")]
        ))));
        assert!(!pod_preemptable(Some(&info(&[(PREEMPTABLE, "yes")], &[]))));
        assert!(pod_preemptable(Some(&info(&[(PREEMPTABLE, "T")], &[]))));
    }

    /// A preemptor of job 99 (no candidate's) of `priority`.
    fn prio(priority: i32) -> Preemptor {
        Preemptor {
            job: WorkloadId(99),
            priority,
            task_priority: priority,
        }
    }

    fn task(w: u32, priority: i32, critical: bool) -> Task {
        Task {
            w: WorkloadId(w),
            ps: 0,
            i: 0,
            node: NodeId::from_index(0),
            requests: ResourceList::default(),
            req: Vec::new(),
            queue: 0,
            priority,
            pod_priority: priority,
            preemptable: true,
            critical,
            created: 0,
            name: String::new(),
        }
    }

    /// `Session.Preemptable`: a tier whose intersection is empty decides nothing and the
    /// next tier votes; within a tier the lists intersect; gang keeps each job at its
    /// minAvailable, counting the candidates in order.
    #[test]
    fn vote_intersects_within_a_tier_and_falls_through_an_empty_one() {
        let tasks = vec![task(1, 5, false), task(1, 5, false), task(2, 50, true)];
        let all = [0, 1, 2];
        let (allocated, total) = (BTreeMap::new(), Vec::new());
        let units = Units::new(&kueuesim_model::ResourceTable::default());
        let no_drf = Drf {
            allocated: &allocated,
            total: &total,
            units: &units,
            preemptor_share: 0.0,
        };
        let ready = BTreeMap::from([(WorkloadId(1), 2), (WorkloadId(2), 1)]);
        let min = BTreeMap::from([(WorkloadId(1), 1), (WorkloadId(2), 0)]);
        let one = vec![vec![
            EvictVoter::Conformance,
            EvictVoter::Gang,
            EvictVoter::Priority,
        ]];
        // Gang gives one pod of job 1 (2 ready, minAvailable 1) and job 2's pod; conformance
        // refuses the critical pod; priority takes the jobs below 10.
        assert_eq!(
            vote(
                Action::Preempt,
                &one,
                &all,
                &tasks,
                &ready,
                &min,
                prio(10),
                None,
                None,
                &no_drf
            ),
            [0]
        );
        // Every gang at its minimum: the first tier leaves none, the second decides.
        let at_min = BTreeMap::from([(WorkloadId(1), 2), (WorkloadId(2), 1)]);
        let two = vec![
            vec![EvictVoter::Gang],
            vec![EvictVoter::Priority, EvictVoter::Conformance],
        ];
        assert_eq!(
            vote(
                Action::Preempt,
                &two,
                &all,
                &tasks,
                &ready,
                &at_min,
                prio(100),
                None,
                None,
                &no_drf
            ),
            [0, 1]
        );
        // priority has no say in reclaim: conformance alone decides there.
        assert_eq!(
            vote(
                Action::Reclaim,
                &one,
                &all,
                &tasks,
                &ready,
                &min,
                prio(1),
                None,
                None,
                &no_drf
            ),
            [0]
        );
    }
    /// `JobStarving`: the first tier with gang or priority decides, all of it agreeing.
    #[test]
    fn job_starving_asks_the_first_tier_with_a_starving_voter() {
        use EvictVoter::{Conformance, Gang, Priority};
        let one = vec![vec![Priority, Gang, Conformance]];
        // 2 ready of 3 tasks, minMember 1: priority says yes, gang no.
        assert!(!job_starving(&one, 2, 1, 3));
        assert!(job_starving(&one, 0, 1, 3));
        // priority alone in the first tier decides; a tier without a voter is passed over.
        let split = vec![vec![Conformance], vec![Priority], vec![Gang]];
        assert!(job_starving(&split, 2, 1, 3));
        assert!(!job_starving(&split, 3, 1, 3));
        // With no voter a job never starves.
        assert!(!job_starving(&[vec![Conformance]], 0, 1, 3));
    }

    #[test]
    fn drf_takes_a_victim_while_its_job_keeps_at_least_the_preemptors_share() {
        // One resource of 10: job 1 holds 6 (two tasks of 3), job 2 holds 2; the preemptor's
        // job holds 1 and its task asks for 2, a share of 0.3. Job 1's first task leaves
        // it 0.3 (equal: a victim), its second 0.0 (below: not); job 2's task leaves 0.1.
        let mut tasks = vec![task(1, 5, false), task(1, 5, false), task(2, 5, false)];
        tasks[0].req = vec![3.0];
        tasks[1].req = vec![3.0];
        tasks[2].req = vec![1.0];
        let mut resources = kueuesim_model::ResourceTable::default();
        resources.intern("cpu");
        let units = Units::new(&resources);
        let allocated = BTreeMap::from([(WorkloadId(1), vec![6.0]), (WorkloadId(2), vec![2.0])]);
        let total = vec![10.0];
        let drf = Drf {
            allocated: &allocated,
            total: &total,
            units: &units,
            preemptor_share: units.dominant_share(&[3.0], &total),
        };
        let ready = BTreeMap::new();
        let tiers = vec![vec![EvictVoter::Drf]];
        let vote_on = |action| {
            vote(
                action,
                &tiers,
                &[0, 1, 2],
                &tasks,
                &ready,
                &ready,
                prio(0),
                None,
                None,
                &drf,
            )
        };
        assert_eq!(vote_on(Action::Preempt), [0]);
        // drf has no reclaim vote without enableHierarchy.
        assert!(vote_on(Action::Reclaim).is_empty());
    }
}
