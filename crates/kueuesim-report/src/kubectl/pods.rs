//! Pods: which pods exist at a time T and in what state, derived from the result document
//! (docs/kubectl.md), and `kubectl get pod` / `kubectl describe pod` over them.
//!
//! Which pods exist follows how Kueue holds a workload back (its job integrations): a
//! suspend-based job (batch/v1 Job, JobSet, RayJob, TrainJob, Volcano Job, ...) is created
//! with `spec.suspend: true`, so it has no pods until Kueue admits it and unsuspends it, and
//! none again after an eviction suspends it; a plain Pod, a pod group, and the pod-based
//! integrations (Deployment, StatefulSet, LeaderWorkerSet) create their pods at once with
//! Kueue's scheduling gate `kueue.x-k8s.io/admission` (`pkg/controller/jobs/pod/constants`),
//! removed at admission. A workload no queue manages has its pods from creation.

use std::borrow::Cow;

use kueuesim_model::{PodInfo, ResourceList, SchedulerKind, World};

use super::events::{RawEvent, event_lines};
use super::{age, rfc1123z, specs, tabwrite};
use crate::output::{PodSetOut, SimulationResult, WorkloadOut};

/// Kueue's scheduling gate for pods of an unadmitted workload.
pub(super) const ADMISSION_GATE: &str = "kueue.x-k8s.io/admission";

/// What kubectl's STATUS column reads for a pod (`printPod`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodStatus {
    /// `PodScheduled=False` with reason `SchedulingGated`: Kueue has not admitted it.
    SchedulingGated,
    /// Released to its scheduler, not bound (phase Pending, no container status).
    Pending,
    /// Bound; the kubelet is starting it (`spec.podStartup` not over).
    ContainerCreating,
    /// Running.
    Running,
    /// Its workload finished: the container terminated with reason `Completed`.
    Completed,
    /// Deleted (its workload was evicted or reclaimed), still within `spec.podTermination`.
    Terminating,
}

impl PodStatus {
    /// kubectl's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PodStatus::SchedulingGated => "SchedulingGated",
            PodStatus::Pending => "Pending",
            PodStatus::ContainerCreating => "ContainerCreating",
            PodStatus::Running => "Running",
            PodStatus::Completed => "Completed",
            PodStatus::Terminating => "Terminating",
        }
    }
}

/// One pod at time T.
#[derive(Clone, Debug)]
pub struct Pod<'a> {
    /// Its workload in the result document.
    pub workload: &'a WorkloadOut,
    /// Its pod set.
    pub pod_set: &'a PodSetOut,
    /// The pod set's index.
    pub pod_set_index: usize,
    /// Name (the result document's, `Workload::pod_name`).
    pub name: &'a str,
    /// The node it is bound to.
    pub node: Option<&'a str>,
    /// STATUS.
    pub status: PodStatus,
    /// When this incarnation of the pod was created (seconds from the start).
    pub created: f64,
    /// When it was bound.
    pub bound_at: Option<f64>,
    /// When its containers were running (bound + `podStartup`), if they were by T.
    pub started: Option<f64>,
    /// When it was deleted (Terminating).
    pub deleted_at: Option<f64>,
    /// Requests of one pod, in Kueue units (by resource id).
    pub requests: Option<&'a ResourceList>,
    /// The top-level object's kind (`Job`, `Pod`, ...), if any.
    pub owner: Option<(&'a str, &'a str)>,
    /// What the input says of the pod itself (a bare Pod's own labels, annotations and
    /// containers) or of its template, if it says it.
    pub info: Option<&'a PodInfo>,
    /// It ran on its node before the start (the input binds it there: `spec.nodeName`,
    /// `kueuesim.io/bound-nodes`): its scheduling is history, with no `Scheduled` event here.
    pub bound_before: bool,
}

impl Pod<'_> {
    /// kubectl's READY: ready containers / containers (one container per pod here).
    pub fn ready(&self) -> &'static str {
        let ready = match self.status {
            PodStatus::Running => true,
            PodStatus::Terminating => self.started.is_some(),
            _ => false,
        };
        if ready { "1/1" } else { "0/1" }
    }
}

/// Whether the job kind's pods wait behind Kueue's scheduling gate (rather than the job
/// being suspended): Kueue's pod integration serves plain Pods, pod groups and the pod-based
/// integrations (Deployment, StatefulSet, LeaderWorkerSet), and Grove's pods (a PodGang's),
/// which Kueue sees as plain Pods.
pub(super) fn gated_kind(owner: Option<&str>) -> bool {
    matches!(
        owner,
        Some("Pod" | "Deployment" | "StatefulSet" | "LeaderWorkerSet" | "PodGang")
    )
}

/// Every pod that exists at `at` (the document describes the state at `at`), in document
/// order. The engine starts a pod `spec.podStartup` after it binds (the workload is
/// `Running` once all its pods are), deletes an evicted workload's pods and releases them
/// `spec.podTermination` later, and keeps the placement of a finished one (its pods
/// `Completed`).
pub fn pods_at<'a>(world: &'a World, doc: &'a SimulationResult, at: f64) -> Vec<Pod<'a>> {
    let specs = specs(world);
    let startup = world.config.pod_startup.as_secs_f64();
    let termination = world.config.pod_termination.as_secs_f64();
    // A quota-only run (no Node objects) places no pod: an admitted workload's pods count as
    // bound nowhere (NODE `<none>`) and follow its state.
    let quota_only = !world.has_nodes();
    let mut out = Vec::new();
    // A serving replica deleted by a scale-down has no pods left.
    for w in doc
        .workloads
        .iter()
        .filter(|w| w.created_at <= at && !w.scaled_down)
    {
        let spec = specs.get(&(w.namespace.as_str(), w.name.as_str())).copied();
        let owner = spec
            .and_then(|s| s.owner.as_ref())
            .map(|(k, n)| (k.as_str(), n.as_str()));
        let managed = w.local_queue.is_some();
        let gated = managed && gated_kind(owner.map(|o| o.0));
        // Pods recreated after an eviction (by their owner, or a gated kind's controller)
        // are new pods: their age counts from the end of the last eviction over by T.
        let recreated = w
            .evictions
            .iter()
            .map(|e| e.at + termination)
            .filter(|&t| t <= at)
            .fold(None, |_, t| Some(t));
        let created = if managed && !gated {
            // A suspended job's pods are created when Kueue unsuspends it (admission).
            w.admitted_at.unwrap_or(w.created_at)
        } else {
            recreated.unwrap_or(w.created_at).max(w.created_at)
        };
        // A suspended job Kueue does not manage has no pods, ever.
        let suspended = spec.is_some_and(|s| s.suspended);
        let released = (!managed && !suspended)
            || matches!(w.state, "Admitted" | "Running" | "Evicted" | "Finished");
        for (psi, ps) in w.pod_sets.iter().enumerate() {
            let requests = spec.and_then(|s| s.pod_sets.get(psi)).map(|p| &p.requests);
            for (idx, pod) in ps.pods.iter().enumerate() {
                let info = spec.and_then(|s| {
                    s.gang
                        .pod_info
                        .get(psi)
                        .and_then(|v| v.get(idx))
                        .or_else(|| s.pod_sets.get(psi).and_then(|p| p.info.as_ref()))
                        .map(|i| &**i)
                });
                let node = pod.node.as_deref();
                let placed = node.is_some() || quota_only;
                let status = if !released {
                    if !gated {
                        continue; // a suspended job has no pods
                    }
                    PodStatus::SchedulingGated
                } else {
                    match (w.state, placed) {
                        ("Finished", true) => PodStatus::Completed,
                        ("Finished", false) => continue,
                        // An unbound pod is deleted at once: only bound ones terminate.
                        ("Evicted", true) => PodStatus::Terminating,
                        ("Evicted", false) => continue,
                        (_, false) => PodStatus::Pending,
                        ("Running", true) => PodStatus::Running,
                        (_, true) => {
                            if pod.bound_at.is_some_and(|b| b + startup <= at) {
                                PodStatus::Running
                            } else {
                                PodStatus::ContainerCreating
                            }
                        }
                    }
                };
                let bound_before = pod.bound_at == Some(0.0)
                    && w.evictions.is_empty()
                    && spec.is_some_and(|s| {
                        s.gang.bound_nodes.get(psi).is_some_and(|b| idx < b.len())
                    });
                let deleted_at = (status == PodStatus::Terminating)
                    .then(|| w.evictions.last().map(|e| e.at))
                    .flatten();
                // Containers run podStartup after the bind (a workload is Running at its
                // last bind + podStartup, so each of its pods ran by then).
                let started = match status {
                    PodStatus::Running | PodStatus::Completed => pod.bound_at.map(|b| b + startup),
                    PodStatus::Terminating => pod
                        .bound_at
                        .map(|b| b + startup)
                        .filter(|&s| deleted_at.is_some_and(|d| s <= d)),
                    _ => None,
                };
                out.push(Pod {
                    workload: w,
                    pod_set: ps,
                    pod_set_index: psi,
                    name: pod.name.as_str(),
                    node,
                    status,
                    created,
                    bound_at: pod.bound_at.filter(|_| node.is_some()),
                    started,
                    deleted_at,
                    requests,
                    owner,
                    info,
                    bound_before,
                });
            }
        }
    }
    out
}

/// `kubectl get pod [-o wide]`: NAME READY STATUS RESTARTS AGE, and with `wide` IP, NODE,
/// NOMINATED NODE, READINESS GATES (`<none>` for what kueuesim does not model: pod IPs,
/// nominations and readiness gates).
pub(super) fn pod_cells(p: &Pod<'_>, at: f64, wide: bool) -> Vec<String> {
    let mut r = vec![
        p.name.to_string(),
        p.ready().to_string(),
        p.status.as_str().to_string(),
        "0".to_string(),
        age(at, p.created),
    ];
    if wide {
        r.push("<none>".into());
        r.push(p.node.unwrap_or("<none>").to_string());
        r.push("<none>".into());
        r.push("<none>".into());
    }
    r
}

/// The headers of `pod_cells`.
pub(super) fn pod_headers(wide: bool) -> Vec<&'static str> {
    let mut headers = vec!["NAME", "READY", "STATUS", "RESTARTS", "AGE"];
    if wide {
        headers.extend(["IP", "NODE", "NOMINATED NODE", "READINESS GATES"]);
    }
    headers
}

/// Whether the pod's scheduler has reported it unschedulable by `at` (its `PodScheduled`
/// condition is then False).
pub(super) fn failed_scheduling(world: &World, pod: &Pod<'_>, at: f64) -> bool {
    pod_events(world, pod, at)
        .iter()
        .any(|e| e.kind == "Warning")
}

/// A Deployment pod's `pod-template-hash` (the middle of `<deployment>-<hash>-<suffix>`).
pub(super) fn pod_template_hash<'a>(pod: &Pod<'a>) -> Option<&'a str> {
    let (kind, deployment) = pod.owner?;
    if kind != "Deployment" {
        return None;
    }
    let rest = pod.name.strip_prefix(deployment)?.strip_prefix('-')?;
    rest.rsplit_once('-').map(|(hash, _)| hash)
}

/// A LeaderWorkerSet pod's set name, group index and worker index (the leader is worker 0),
/// from LeaderWorkerSet's names: the group's leader `<lws>-<group>`, its workers
/// `<lws>-<group>-<worker>`.
pub(super) fn lws_indices<'a>(pod: &Pod<'a>) -> Option<(&'a str, &'a str, u32)> {
    let (kind, group_name) = pod.owner?;
    if kind != "LeaderWorkerSet" {
        return None;
    }
    let (lws, group) = group_name.rsplit_once('-')?;
    let worker = match pod.name.strip_prefix(group_name)?.strip_prefix('-') {
        Some(w) => w.parse().ok()?,
        None => 0,
    };
    Some((lws, group, worker))
}

/// The pod's controller (`metadata.ownerReferences`, describe's `Controlled By`): a Job's
/// pods the Job; a StatefulSet's the StatefulSet; a Deployment's its ReplicaSet
/// (`<deployment>-<pod-template-hash>`); a LeaderWorkerSet group's leader the leader
/// StatefulSet `<lws>`, its workers the group's StatefulSet `<lws>-<group>`.
pub(super) fn controller_of(pod: &Pod<'_>) -> Option<(String, String)> {
    let (kind, name) = pod.owner?;
    match kind {
        "Job" | "VolcanoJob" => Some((kind.to_string(), name.to_string())),
        "StatefulSet" | "DaemonSet" => Some((kind.to_string(), name.to_string())),
        "Deployment" => {
            pod_template_hash(pod).map(|h| ("ReplicaSet".into(), format!("{name}-{h}")))
        }
        "LeaderWorkerSet" => {
            let (lws, _, worker) = lws_indices(pod)?;
            Some((
                "StatefulSet".into(),
                if worker == 0 {
                    lws.to_string()
                } else {
                    name.to_string()
                },
            ))
        }
        _ => None,
    }
}

/// The scheduler that places the pod's workload.
fn scheduler(world: &World, w: &WorkloadOut) -> SchedulerKind {
    world
        .config
        .scheduler(&w.scheduler_name)
        .unwrap_or(SchedulerKind::Kube)
}

/// The pod's conditions (type, status), in the order the kubelet lists them.
pub(super) fn conditions(
    pod: &Pod<'_>,
    failed_scheduling: bool,
) -> Vec<(&'static str, &'static str)> {
    let bound = |ready: bool| {
        let s = if ready { "True" } else { "False" };
        vec![
            ("PodReadyToStartContainers", s),
            ("Initialized", "True"),
            ("Ready", s),
            ("ContainersReady", s),
            ("PodScheduled", "True"),
        ]
    };
    match pod.status {
        PodStatus::SchedulingGated => vec![("PodScheduled", "False")],
        PodStatus::Pending if failed_scheduling => vec![("PodScheduled", "False")],
        PodStatus::Pending => Vec::new(),
        PodStatus::ContainerCreating | PodStatus::Completed => bound(false),
        PodStatus::Running => bound(true),
        PodStatus::Terminating => bound(pod.started.is_some()),
    }
}

/// The pod's events: its scheduler's, taken from the workload's recorded events while the pod
/// existed and was not bound (a gang's `Unschedulable` reaches each pending pod as
/// `FailedScheduling`, as Volcano's `taskUnschedulable` and kube-scheduler write it), and
/// `Scheduled` when it was bound (not for a pod the input has running: that was before).
pub(super) fn pod_events<'a>(world: &World, pod: &Pod<'a>, at: f64) -> Vec<RawEvent<'a>> {
    let kind = scheduler(world, pod.workload);
    let source = kind.event_source();
    let until = pod.bound_at.unwrap_or(at);
    let mut events: Vec<RawEvent<'a>> = pod
        .workload
        .events
        .iter()
        .filter(|e| e.source == source && e.at >= pod.created && e.at <= until.min(at))
        .filter(|e| e.kind == "Warning")
        .map(|e| RawEvent {
            at: e.at,
            kind: e.kind,
            // KAI's own reason is kept (kueuesim records it as KAI's pod-group event).
            reason: if kind == SchedulerKind::Kai {
                e.reason
            } else {
                "FailedScheduling"
            },
            source: e.source,
            message: Cow::Borrowed(e.message.as_str()),
        })
        .collect();
    // The engine records a repeat of a workload's event once: a pod created after the
    // scheduler's last message (re-created after an eviction) and still unbound met the same
    // failure at its first attempt, once Kueue released it.
    if events.is_empty() && pod.status == PodStatus::Pending {
        let first_try = pod
            .workload
            .admitted_at
            .unwrap_or(pod.created)
            .max(pod.created);
        if let Some(e) = pod
            .workload
            .events
            .iter()
            .rev()
            .find(|e| e.source == source && e.kind == "Warning" && e.at < pod.created)
            .filter(|_| first_try <= at)
        {
            events.push(RawEvent {
                at: first_try,
                kind: e.kind,
                reason: if kind == SchedulerKind::Kai {
                    e.reason
                } else {
                    "FailedScheduling"
                },
                source: e.source,
                message: Cow::Borrowed(e.message.as_str()),
            });
        }
    }
    if let (Some(b), Some(node)) = (pod.bound_at, pod.node)
        && b <= at
        && !pod.bound_before
    {
        events.push(RawEvent {
            at: b,
            kind: "Normal",
            reason: "Scheduled",
            source,
            message: Cow::Owned(format!(
                "Successfully assigned {}/{} to {node}",
                pod.workload.namespace, pod.name
            )),
        });
    }
    events
}

/// `kubectl describe pod NAME -n NS` at time `at` (kubectl's `describePod` layout, with what
/// kueuesim knows: no images, IPs, volumes or limits).
pub(super) fn describe_pod(
    world: &World,
    doc: &SimulationResult,
    namespace: &str,
    name: &str,
    at: f64,
) -> Result<String, String> {
    let pods = pods_at(world, doc, at);
    let pod = pods
        .iter()
        .find(|p| p.workload.namespace == namespace && p.name == name)
        .ok_or_else(|| format!("pods \"{name}\" not found"))?;
    let w = pod.workload;
    let events = pod_events(world, pod, at);
    let failed = events.iter().any(|e| e.kind == "Warning");
    let mut l: Vec<String> = Vec::new();
    let mut kv = |k: &str, v: &str| l.push(format!("{k}:\t{v}"));
    kv("Name", pod.name);
    kv("Namespace", &w.namespace);
    kv("Priority", &w.priority.to_string());
    if let Some(pc) = &w.priority_class {
        kv("Priority Class Name", pc);
    }
    kv("Service Account", "default");
    kv("Node", pod.node.unwrap_or("<none>"));
    if let Some(b) = pod.bound_at {
        kv("Start Time", &rfc1123z(world, b));
    }
    let spec = specs(world)
        .get(&(w.namespace.as_str(), w.name.as_str()))
        .copied();
    // The pod's own labels (with those its controllers and Kueue add) and annotations, as
    // kubectl prints them (`printLabelsMultiline`, `printAnnotationsMultiline`).
    let labels: Vec<String> = super::objects::pod_labels(pod, spec)
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    super::multiline(&mut l, "Labels", &labels);
    let annotations: Vec<String> = pod
        .info
        .map(|i| {
            i.annotations
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect()
        })
        .unwrap_or_default();
    super::multiline(&mut l, "Annotations", &annotations);
    let mut kv = |k: &str, v: &str| l.push(format!("{k}:\t{v}"));
    match (pod.status, pod.deleted_at) {
        (PodStatus::Terminating, Some(d)) => {
            kv("Status", &format!("Terminating (lasts {})", age(at, d)));
            kv(
                "Termination Grace Period",
                &format!("{}s", world.config.pod_termination.as_secs_f64() as i64),
            );
        }
        _ => kv(
            "Status",
            match pod.status {
                PodStatus::Running => "Running",
                PodStatus::Completed => "Succeeded",
                _ => "Pending",
            },
        ),
    }
    kv("IP", "");
    kv("IPs", "<none>");
    if let Some((kind, name)) = controller_of(pod) {
        let (_, kind) = super::objects::owner_type(&kind);
        kv("Controlled By", &format!("{kind}/{name}"));
    }
    l.push("Containers:".into());
    // The pod's own containers (one state for all: kueuesim runs a pod as a whole), else
    // one named `main` with the pod's requests.
    let containers: Vec<(String, Vec<(String, String)>)> = match pod.info {
        Some(i) if !i.containers.is_empty() => i
            .containers
            .iter()
            .map(|c| {
                let name = if c.name.is_empty() { "main" } else { &c.name };
                (name.to_string(), c.requests.clone())
            })
            .collect(),
        _ => vec![(
            "main".to_string(),
            pod.pod_set
                .requests
                .iter()
                .map(|(r, q)| (r.clone(), q.clone()))
                .collect(),
        )],
    };
    for (name, requests) in containers {
        l.push(format!("  {name}:"));
        container_lines(world, pod, &mut l);
        if !requests.is_empty() {
            l.push("    Requests:".into());
            for (r, q) in &requests {
                l.push(format!("      {r}:\t{q}"));
            }
        }
    }
    let conds = conditions(pod, failed);
    if !conds.is_empty() {
        l.push("Conditions:".into());
        l.push("  Type\tStatus".into());
        for (t, s) in conds {
            l.push(format!("  {t}\t{s}"));
        }
    }
    if pod.status == PodStatus::SchedulingGated {
        l.push("Scheduling Gates:".into());
        l.push(format!("  {ADMISSION_GATE}"));
    }
    l.extend(event_lines(events, at));
    Ok(tabwrite(&l))
}

/// A container's state lines in `describe pod` (every container of a pod runs as the pod).
fn container_lines(world: &World, pod: &Pod<'_>, l: &mut Vec<String>) {
    let w = pod.workload;
    let bound = matches!(
        pod.status,
        PodStatus::ContainerCreating
            | PodStatus::Running
            | PodStatus::Completed
            | PodStatus::Terminating
    );
    if bound {
        match (pod.status, pod.started) {
            (PodStatus::Completed, Some(s)) => {
                l.push("    State:\tTerminated".into());
                l.push("      Reason:\tCompleted".into());
                l.push("      Exit Code:\t0".into());
                l.push(format!("      Started:\t{}", rfc1123z(world, s)));
                if let Some(f) = w.finished_at {
                    l.push(format!("      Finished:\t{}", rfc1123z(world, f)));
                }
            }
            (_, Some(s)) => {
                l.push("    State:\tRunning".into());
                l.push(format!("      Started:\t{}", rfc1123z(world, s)));
            }
            _ => {
                l.push("    State:\tWaiting".into());
                l.push("      Reason:\tContainerCreating".into());
            }
        }
        let ready = pod.status == PodStatus::Running
            || (pod.status == PodStatus::Terminating && pod.started.is_some());
        l.push(format!(
            "    Ready:\t{}",
            if ready { "True" } else { "False" }
        ));
        l.push("    Restart Count:\t0".into());
    }
}
