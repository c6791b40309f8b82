//! PodGroups: the gang schedulers' objects (Volcano's `scheduling.volcano.sh/v1beta1`, KAI's
//! `scheduling.run.ai/v2alpha2`), one per gang-scheduled workload, derived from the result
//! document at T; their printer columns and their objects.

use kueuesim_model::{SchedulerKind, Workload, World};
use serde_json::{Value, json};

use super::{age, rfc3339};
use crate::output::{SimulationResult, WorkloadOut};

/// One PodGroup at T.
pub(super) struct PodGroup<'a> {
    /// The workload it gangs.
    pub workload: &'a WorkloadOut,
    /// Its spec.
    pub spec: &'a Workload,
    /// Volcano or KAI.
    pub scheduler: SchedulerKind,
    /// Its name.
    pub name: String,
    /// `spec.minMember`.
    pub min_member: usize,
    /// `status.phase` (Volcano's).
    pub phase: &'static str,
    /// `status.running`.
    pub running: usize,
}

impl PodGroup<'_> {
    /// The API version of the group's CRD.
    pub(super) fn api_version(&self) -> &'static str {
        match self.scheduler {
            SchedulerKind::Kai => "scheduling.run.ai/v2alpha2",
            _ => "scheduling.volcano.sh/v1beta1",
        }
    }
}

/// The PodGroup's name: the input's PodGroup by its name; else the one its scheduler's
/// controller makes for the job: Volcano's `podgroup-<job>` (kueuesim's stand-in for the
/// owner's UID; a Deployment's pods have one each), KAI's `pg-<workload>` as kueuesim's KAI
/// messages name it.
pub(super) fn pod_group_name(spec: &Workload, scheduler: SchedulerKind) -> String {
    match (
        &spec.gang.pod_group,
        scheduler,
        super::objects::job_of(spec),
    ) {
        (Some(pg), _, _) => pg.clone(),
        (None, SchedulerKind::Kai, _) => format!("pg-{}", spec.name),
        (None, _, Some((_, n))) => format!("podgroup-{n}"),
        (None, _, None) => spec.name.clone(),
    }
}

/// Every PodGroup at `at`, in document order.
pub(super) fn pod_groups<'a>(
    world: &'a World,
    doc: &'a SimulationResult,
    at: f64,
) -> Vec<PodGroup<'a>> {
    let specs = super::specs(world);
    super::present(doc, at)
        .filter_map(|w| {
            let spec = *specs.get(&(w.namespace.as_str(), w.name.as_str()))?;
            let scheduler = world.config.scheduler(&spec.scheduler_name)?;
            if !scheduler.is_gang() {
                return None;
            }
            let total: usize = w.pod_sets.iter().map(|p| p.count as usize).sum();
            let placed: usize = w.pod_sets.iter().map(|p| p.nodes.len()).sum();
            let min_member = spec.gang.min_member.map_or(total, |m| m as usize);
            // The PodGroup phase (Volcano's getPodGroupPhase): Running once minMember pods
            // are scheduled, Completed when done; Inqueue once Kueue released the pods.
            // With Volcano's queues, a PodGroup the enqueue action holds back is Pending
            // until `inqueueAt` (its first Normal `Unschedulable` event is the enqueue vote's).
            let held = scheduler == SchedulerKind::Volcano
                && w.inqueue_at.is_none_or(|t| t > at)
                && w.events.iter().any(|e| {
                    e.source == "volcano"
                        && e.kind == "Normal"
                        && e.reason == "Unschedulable"
                        && e.at <= at
                });
            let phase = match w.state {
                "Finished" => "Completed",
                _ if placed >= min_member && placed > 0 => "Running",
                _ if held => "Pending",
                _ if w.inqueue_at.is_some_and(|t| t <= at) => "Inqueue",
                "Admitted" | "Running" => "Inqueue",
                _ => "Pending",
            };
            // Pods already running in the input run while the rest of the gang waits
            // (`status.running` counts running pods).
            let running = match w.state {
                "Running" => placed,
                "Finished" => 0,
                _ => spec.gang.pre_bound(),
            };
            Some(PodGroup {
                workload: w,
                spec,
                scheduler,
                name: pod_group_name(spec, scheduler),
                min_member,
                phase,
                running,
            })
        })
        .collect()
}

/// The queue the PodGroup names: KAI's `kai.scheduler/queue` Queue (else KAI's implicit
/// `default-queue`); Volcano's `default`.
fn queue(world: &World, pg: &PodGroup<'_>) -> String {
    match pg.scheduler {
        SchedulerKind::Kai => pg
            .spec
            .gang
            .kai_queue
            .and_then(|q| world.kai_queues.get(q))
            .map_or_else(|| "default-queue".to_string(), |q| q.name.clone()),
        _ => pg
            .spec
            .gang
            .volcano_queue
            .and_then(|q| world.volcano_queues.get(q))
            .map_or_else(|| "default".to_string(), |q| q.name.clone()),
    }
}

/// The printer columns: Volcano's `NAME STATUS MINMEMBER RUNNINGS AGE` (and `QUEUE` wide);
/// KAI's PodGroup CRD declares none, so `NAME AGE`.
pub(super) fn cells(world: &World, pg: &PodGroup<'_>, at: f64, wide: bool) -> Vec<String> {
    let age = age(at, pg.workload.created_at);
    if pg.scheduler == SchedulerKind::Kai {
        return vec![pg.name.clone(), age];
    }
    let mut r = vec![
        pg.name.clone(),
        pg.phase.to_string(),
        pg.min_member.to_string(),
        pg.running.to_string(),
        age,
    ];
    if wide {
        r.push(queue(world, pg));
    }
    r
}

/// The headers of `cells`.
pub(super) fn headers(scheduler: SchedulerKind, wide: bool) -> Vec<&'static str> {
    match (scheduler, wide) {
        (SchedulerKind::Kai, _) => vec!["NAME", "AGE"],
        (_, false) => vec!["NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE"],
        (_, true) => vec!["NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE", "QUEUE"],
    }
}

/// The PodGroup object: spec (minMember, queue, priority class) and, for Volcano, status
/// (phase, running, succeeded, and the `Unschedulable` condition the scheduler's last
/// message sets while the gang waits).
pub(super) fn object(world: &World, pg: &PodGroup<'_>, at: f64) -> Value {
    let w = pg.workload;
    let mut spec = json!({"minMember": pg.min_member, "queue": queue(world, pg)});
    if let Some(pc) = &w.priority_class {
        spec["priorityClassName"] = json!(pc);
    }
    let mut metadata = json!({
        "name": pg.name,
        "namespace": w.namespace,
        "creationTimestamp": rfc3339(world, w.created_at),
    });
    if let Some((kind, name)) = super::objects::job_of(pg.spec) {
        let (api, kind) = super::objects::owner_type(&kind);
        metadata["ownerReferences"] =
            json!([{"apiVersion": api, "kind": kind, "name": name, "controller": true}]);
    }
    let mut status = json!({});
    if pg.scheduler == SchedulerKind::Volcano {
        status = json!({"phase": pg.phase, "running": pg.running});
        if w.state == "Finished" {
            status["succeeded"] = json!(w.pod_sets.iter().map(|p| p.nodes.len()).sum::<usize>());
        }
        let source = pg.scheduler.event_source();
        let last = w
            .events
            .iter()
            .rev()
            .find(|e| e.source == source && e.at <= at);
        if let Some(e) = last.filter(|e| e.reason == "Unschedulable" && pg.phase != "Running") {
            status["conditions"] = json!([{
                "type": "Unschedulable",
                "status": "True",
                "reason": "NotEnoughResources",
                "message": e.message,
                "lastTransitionTime": rfc3339(world, e.at),
            }]);
        }
    }
    json!({
        "apiVersion": pg.api_version(),
        "kind": "PodGroup",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    })
}
