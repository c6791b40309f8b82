//! Every object of the kubectl views as the API server would return it (`metadata`, `spec`,
//! `status`): what `get -o json|yaml|name|jsonpath|custom-columns`, `--sort-by` and `-l` read.
//! Each kind carries the fields kueuesim knows (docs/kubectl.md lists them); a field the
//! simulation does not model is absent rather than made up.

use kueuesim_model::{Node, ResourceFlavor, Taint, Toleration, TolerationOp, Workload, World};
use serde_json::{Map, Value, json};

use super::pods::{ADMISSION_GATE, Pod, PodStatus};
use super::queues::Usage;
use super::{condition, rfc3339};
use crate::output::WorkloadOut;

/// Kueue's label with the UID of the job a Workload was made for (`JobUIDLabel`).
const JOB_UID_LABEL: &str = "kueue.x-k8s.io/job-uid";

/// The API version and kind of a workload's top-level object, as its ownerReference names
/// it (kueuesim's `VolcanoJob` is Volcano's `batch.volcano.sh` Job).
pub(super) fn owner_type(kind: &str) -> (&'static str, &str) {
    let api = match kind {
        "Job" => "batch/v1",
        "JobSet" => "jobset.x-k8s.io/v1alpha2",
        "RayJob" | "RayCluster" => "ray.io/v1",
        "TrainJob" => "trainer.kubeflow.org/v1alpha1",
        "MPIJob" => "kubeflow.org/v2beta1",
        "PyTorchJob" | "TFJob" | "XGBoostJob" | "PaddleJob" | "JAXJob" => "kubeflow.org/v1",
        "VolcanoJob" => return ("batch.volcano.sh/v1alpha1", "Job"),
        "StatefulSet" | "Deployment" | "ReplicaSet" | "DaemonSet" => "apps/v1",
        "LeaderWorkerSet" => "leaderworkerset.x-k8s.io/v1",
        "AppWrapper" => "workload.codeflare.dev/v1beta2",
        "PodGang" => "scheduler.grove.io/v1alpha1",
        _ => "v1",
    };
    (api, kind)
}

/// The object Kueue made the Workload for (its owner): the workload's top-level object, but
/// a Deployment's pod for each of its Workloads (Kueue's pod integration serves Deployments
/// pod by pod).
pub(super) fn job_of(spec: &Workload) -> Option<(String, String)> {
    let (kind, name) = spec.owner.as_ref()?;
    Some(if kind == "Deployment" {
        ("Pod".to_string(), spec.pod_name(0, 0))
    } else {
        (kind.clone(), name.clone())
    })
}

fn owner_reference(kind: &str, name: &str, uid: Option<&str>) -> Value {
    let (api, kind) = owner_type(kind);
    let mut r = json!({
        "apiVersion": api,
        "kind": kind,
        "name": name,
        "controller": true,
        "blockOwnerDeletion": true,
    });
    if let Some(uid) = uid {
        r["uid"] = json!(uid);
    }
    r
}

/// A Kueue Workload (`kueue.x-k8s.io/v1beta1`, whose fields the loader reads back): spec
/// (queue, pod sets with their requests, priority), status (conditions with their transition
/// times and, while quota is reserved, the admission with flavors, counts and topology
/// assignment), the job-uid label and the owning job.
pub(super) fn workload_object(world: &World, w: &WorkloadOut, spec: Option<&Workload>) -> Value {
    let ts = |secs: f64| rfc3339(world, secs);
    let pod_sets: Vec<Value> = w
        .pod_sets
        .iter()
        .map(|p| {
            let mut ps = json!({
                "name": p.name,
                "count": p.count,
                "template": {"spec": {
                    "schedulerName": w.scheduler_name,
                    "containers": [{"name": "main", "resources": {"requests": p.requests}}]
                }}
            });
            if let Some(m) = p.min_count {
                ps["minCount"] = json!(m);
            }
            ps
        })
        .collect();
    let mut spec_map = Map::new();
    if let Some(q) = &w.local_queue {
        spec_map.insert("queueName".into(), json!(q));
    }
    spec_map.insert("podSets".into(), Value::Array(pod_sets));
    spec_map.insert("priority".into(), json!(w.priority));
    if let Some(pc) = &w.priority_class {
        spec_map.insert("priorityClassName".into(), json!(pc));
        spec_map.insert(
            "priorityClassSource".into(),
            json!("kueue.x-k8s.io/workloadpriorityclass"),
        );
    }
    spec_map.insert("active".into(), json!(w.state != "Inactive"));
    let conditions: Vec<Value> = w
        .conditions
        .iter()
        .map(|c| {
            json!({
                "type": c.kind,
                "status": c.status,
                "reason": c.reason,
                "message": c.message,
                "lastTransitionTime": ts(c.at),
                "observedGeneration": 1
            })
        })
        .collect();
    let mut status = Map::new();
    let reserved = condition(w, "QuotaReserved").is_some_and(|c| c.status == "True");
    if let (Some(cq), true) = (&w.cluster_queue, reserved) {
        let assignments: Vec<Value> = w
            .pod_sets
            .iter()
            .map(|p| {
                let mut a = json!({
                    "name": p.name,
                    "flavors": p.flavors,
                    "count": p.admitted_count.unwrap_or(p.count),
                });
                if let Some(t) = &p.topology_assignment {
                    a["topologyAssignment"] = json!({
                        "levels": t.levels,
                        "domains": t.domains.iter().map(|d| json!({"values": d.values, "count": d.count})).collect::<Vec<_>>()
                    });
                }
                a
            })
            .collect();
        status.insert(
            "admission".into(),
            json!({"clusterQueue": cq, "podSetAssignments": assignments}),
        );
    }
    status.insert("conditions".into(), Value::Array(conditions));
    let mut metadata = json!({
        "name": w.name,
        "namespace": w.namespace,
        "creationTimestamp": ts(w.created_at),
    });
    if let Some(s) = spec {
        if let Some(uid) = &s.job_uid {
            metadata["labels"] = json!({ JOB_UID_LABEL: uid });
        }
        if let Some((kind, name)) = job_of(s) {
            metadata["ownerReferences"] =
                json!([owner_reference(&kind, &name, s.job_uid.as_deref())]);
        }
    }
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": metadata,
        "spec": spec_map,
        "status": status,
    })
}

/// A `v1` `List` of objects, as kubectl prints several.
pub(super) fn list(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}})
}

fn quota_lists(world: &World, groups: &[kueuesim_model::ResourceGroup]) -> Vec<Value> {
    groups
        .iter()
        .map(|g| {
            json!({
                "coveredResources": g.covered.iter().map(|r| world.resources.name(*r)).collect::<Vec<_>>(),
                "flavors": g.flavors.iter().map(|f| json!({
                    "name": world.flavor(f.flavor).name,
                    "resources": f.resources.iter().map(|q| {
                        let r = world.resources.name(q.resource);
                        let mut v = json!({"name": r, "nominalQuota": kueuesim_model::format_amount(r, q.nominal)});
                        if let Some(b) = q.borrowing_limit {
                            v["borrowingLimit"] = json!(kueuesim_model::format_amount(r, b));
                        }
                        if let Some(l) = q.lending_limit {
                            v["lendingLimit"] = json!(kueuesim_model::format_amount(r, l));
                        }
                        v
                    }).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// Kueue's `status.flavorsReservation` / `flavorsUsage` lists from the queue's usage.
fn flavor_totals(
    cells: &[(String, Vec<(String, i64)>)],
    amounts: &std::collections::BTreeMap<(String, String), i64>,
) -> Vec<Value> {
    cells
        .iter()
        .map(|(flavor, resources)| {
            json!({
                "name": flavor,
                "resources": resources.iter().map(|(r, _)| {
                    let total = amounts.get(&(flavor.clone(), r.clone())).copied().unwrap_or(0);
                    json!({"name": r, "total": kueuesim_model::format_amount(r, total)})
                }).collect::<Vec<_>>(),
            })
        })
        .collect()
}

fn active_condition(world: &World, active: bool, ready: &str, stopped: &str) -> Value {
    json!([{
        "type": "Active",
        "status": if active { "True" } else { "False" },
        "reason": if active { "Ready" } else { "Stopped" },
        "message": if active { ready } else { stopped },
        "lastTransitionTime": rfc3339(world, 0.0),
        "observedGeneration": 1,
    }])
}

/// A ClusterQueue with its spec and the status Kueue's controller writes at T.
pub(super) fn cluster_queue_object(
    world: &World,
    cq: &kueuesim_model::ClusterQueue,
    u: &Usage,
) -> Value {
    let cells = super::queues::cells(world, cq);
    let mut spec = json!({
        "queueingStrategy": cq.queueing_strategy.as_str(),
        "resourceGroups": quota_lists(world, &cq.resource_groups),
        "stopPolicy": format!("{:?}", cq.stop_policy),
        "preemption": {
            "withinClusterQueue": format!("{:?}", cq.preemption.within_cluster_queue),
            "reclaimWithinCohort": format!("{:?}", cq.preemption.reclaim_within_cohort),
            "borrowWithinCohort": {"policy": format!("{:?}", cq.preemption.borrow_within_cohort)},
        },
        "flavorFungibility": {
            "whenCanBorrow": format!("{:?}", cq.flavor_fungibility.when_can_borrow),
            "whenCanPreempt": format!("{:?}", cq.flavor_fungibility.when_can_preempt),
        },
    });
    if let Some(c) = cq.cohort {
        spec["cohortName"] = json!(world.cohorts[c.index()].name);
    }
    let active = cq.stop_policy == kueuesim_model::StopPolicy::None;
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": cq.name, "creationTimestamp": rfc3339(world, 0.0)},
        "spec": spec,
        "status": {
            "pendingWorkloads": u.pending,
            "reservingWorkloads": u.reserving,
            "admittedWorkloads": u.admitted_count,
            "conditions": active_condition(world, active, "Can admit new workloads", "Can't admit new workloads: is stopped."),
            "flavorsReservation": flavor_totals(&cells, &u.reserved),
            "flavorsUsage": flavor_totals(&cells, &u.admitted),
        },
    })
}

/// A LocalQueue with its spec and the status Kueue's controller writes at T.
pub(super) fn local_queue_object(
    world: &World,
    lq: &kueuesim_model::LocalQueue,
    u: &Usage,
) -> Value {
    let cq = world.cluster_queue(lq.cluster_queue);
    let cells = super::queues::cells(world, cq);
    let active = lq.stop_policy == kueuesim_model::StopPolicy::None;
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": lq.name, "namespace": lq.namespace, "creationTimestamp": rfc3339(world, 0.0)},
        "spec": {"clusterQueue": cq.name, "stopPolicy": format!("{:?}", lq.stop_policy)},
        "status": {
            "pendingWorkloads": u.pending,
            "reservingWorkloads": u.reserving,
            "admittedWorkloads": u.admitted_count,
            "conditions": active_condition(world, active, "Can submit new workloads to localQueue", "LocalQueue is stopped"),
            "flavorsReservation": flavor_totals(&cells, &u.reserved),
            "flavorsUsage": flavor_totals(&cells, &u.admitted),
        },
    })
}

/// A Kueue Cohort: its parent, its own quotas and fair-sharing weight.
pub(super) fn cohort_object(world: &World, c: &kueuesim_model::Cohort) -> Value {
    let mut spec = Map::new();
    if let Some(p) = c.parent {
        spec.insert("parentName".into(), json!(world.cohorts[p.index()].name));
    }
    if !c.resource_groups.is_empty() {
        spec.insert(
            "resourceGroups".into(),
            Value::Array(quota_lists(world, &c.resource_groups)),
        );
    }
    if c.fair_sharing_weight_milli != 1000 {
        spec.insert(
            "fairSharing".into(),
            json!({"weight": kueuesim_model::format_amount("cpu", c.fair_sharing_weight_milli)}),
        );
    }
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Cohort",
        "metadata": {"name": c.name, "creationTimestamp": rfc3339(world, 0.0)},
        "spec": spec,
    })
}

fn taint_value(t: &Taint) -> Value {
    let mut v = json!({"key": t.key, "effect": t.effect.as_str()});
    if !t.value.is_empty() {
        v["value"] = json!(t.value);
    }
    v
}

fn toleration_value(t: &Toleration) -> Value {
    let mut v = Map::new();
    if !t.key.is_empty() {
        v.insert("key".into(), json!(t.key));
    }
    v.insert(
        "operator".into(),
        json!(match t.op {
            TolerationOp::Equal => "Equal",
            TolerationOp::Exists => "Exists",
        }),
    );
    if !t.value.is_empty() {
        v.insert("value".into(), json!(t.value));
    }
    if let Some(e) = t.effect {
        v.insert("effect".into(), json!(e.as_str()));
    }
    Value::Object(v)
}

/// A Kueue ResourceFlavor: node labels, taints, tolerations and topology.
pub(super) fn resource_flavor_object(world: &World, f: &ResourceFlavor) -> Value {
    let mut spec = Map::new();
    if !f.node_labels.is_empty() {
        let labels: Map<String, Value> = f
            .node_labels
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        spec.insert("nodeLabels".into(), Value::Object(labels));
    }
    if !f.node_taints.is_empty() {
        spec.insert(
            "nodeTaints".into(),
            f.node_taints.iter().map(taint_value).collect(),
        );
    }
    if !f.tolerations.is_empty() {
        spec.insert(
            "tolerations".into(),
            f.tolerations.iter().map(toleration_value).collect(),
        );
    }
    if let Some(t) = &f.topology_name {
        spec.insert("topologyName".into(), json!(t));
    }
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": f.name, "creationTimestamp": rfc3339(world, 0.0)},
        "spec": spec,
    })
}

/// A Node: its labels, taints, `unschedulable`, allocatable (and capacity, the same here)
/// and a Ready condition.
pub(super) fn node_object(world: &World, n: &Node) -> Value {
    let labels: Map<String, Value> = n
        .labels
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let allocatable: Map<String, Value> = n
        .allocatable
        .iter()
        .enumerate()
        .filter(|(_, a)| **a > 0)
        .map(|(i, a)| {
            let r = world
                .resources
                .name(kueuesim_model::ResourceId::from_index(i));
            (r.to_string(), json!(kueuesim_model::format_amount(r, *a)))
        })
        .collect();
    let mut spec = Map::new();
    if n.unschedulable {
        spec.insert("unschedulable".into(), json!(true));
    }
    if !n.taints.is_empty() {
        spec.insert("taints".into(), n.taints.iter().map(taint_value).collect());
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": n.name, "labels": labels, "creationTimestamp": rfc3339(world, 0.0)},
        "spec": spec,
        "status": {
            "allocatable": allocatable,
            "capacity": allocatable,
            "conditions": [super::node::ready_condition(n)],
        },
    })
}

/// The labels the controllers put on a pod (docs/kubectl.md): the Job controller's
/// `job-name` and `controller-uid`, the StatefulSet controller's `pod-name` and `pod-index`,
/// the ReplicaSet's `pod-template-hash`, LeaderWorkerSet's group and worker index, Kueue's
/// `managed` and `queue-name` on pods it gates and, once admitted, `podset`,
/// `local-queue-name` and `cluster-queue-name` (`AssignQueueLabelsForPods`).
pub(super) fn pod_labels(pod: &Pod<'_>, spec: Option<&Workload>) -> Map<String, Value> {
    let mut l = Map::new();
    // The labels the input gives the pod (a bare Pod's own, or its template's).
    for (k, v) in pod.info.iter().flat_map(|i| &i.labels) {
        l.insert(k.clone(), json!(v));
    }
    let mut put = |k: &str, v: &str| {
        l.insert(k.to_string(), json!(v));
    };
    let w = pod.workload;
    match pod.owner {
        Some(("Job", job)) => {
            put("batch.kubernetes.io/job-name", job);
            put("job-name", job);
            if let Some(uid) = spec.and_then(|s| s.job_uid.as_deref()) {
                put("batch.kubernetes.io/controller-uid", uid);
                put("controller-uid", uid);
            }
        }
        Some(("StatefulSet", _)) => {
            put("statefulset.kubernetes.io/pod-name", pod.name);
            if let Some(i) = pod.name.rsplit('-').next() {
                put("apps.kubernetes.io/pod-index", i);
            }
        }
        _ => {}
    }
    if let Some(hash) = super::pods::pod_template_hash(pod) {
        put("pod-template-hash", hash);
    }
    if let Some((lws, group, worker)) = super::pods::lws_indices(pod) {
        put("leaderworkerset.sigs.k8s.io/name", lws);
        put("leaderworkerset.sigs.k8s.io/group-index", group);
        put(
            "leaderworkerset.sigs.k8s.io/worker-index",
            &worker.to_string(),
        );
    }
    if let Some(lq) = &w.local_queue {
        if super::pods::gated_kind(pod.owner.map(|o| o.0)) {
            put("kueue.x-k8s.io/managed", "true");
            put("kueue.x-k8s.io/queue-name", lq);
        }
        if pod.status != PodStatus::SchedulingGated {
            put("kueue.x-k8s.io/podset", &pod.pod_set.name);
            put("kueue.x-k8s.io/local-queue-name", lq);
            if let Some(cq) = &w.cluster_queue {
                put("kueue.x-k8s.io/cluster-queue-name", cq);
            }
        }
    }
    l
}

/// A Pod: labels, owner, node, scheduler, priority, its one container's requests, Kueue's
/// scheduling gate while gated; phase, conditions, start time and container state.
pub(super) fn pod_object(world: &World, pod: &Pod<'_>, spec: Option<&Workload>, at: f64) -> Value {
    let w = pod.workload;
    let ts = |secs: f64| rfc3339(world, secs);
    let mut metadata = json!({
        "name": pod.name,
        "namespace": w.namespace,
        "creationTimestamp": ts(pod.created),
        "labels": pod_labels(pod, spec),
    });
    if let Some(r) = super::pods::controller_of(pod) {
        metadata["ownerReferences"] = json!([owner_reference(&r.0, &r.1, None)]);
    }
    if let Some(info) = pod.info.filter(|i| !i.annotations.is_empty()) {
        let annotations: Map<String, Value> = info
            .annotations
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        metadata["annotations"] = Value::Object(annotations);
    }
    if let Some(d) = pod.deleted_at {
        metadata["deletionTimestamp"] = json!(ts(d));
        metadata["deletionGracePeriodSeconds"] =
            json!(world.config.pod_termination.as_secs_f64() as i64);
    }
    // The pod's own containers, with their requests as written; else one `main` with the
    // pod's requests.
    let containers: Vec<Value> = match pod.info.filter(|i| !i.containers.is_empty()) {
        Some(info) => info
            .containers
            .iter()
            .map(|c| {
                let requests: Map<String, Value> = c
                    .requests
                    .iter()
                    .map(|(r, q)| (r.clone(), json!(q)))
                    .collect();
                let name = if c.name.is_empty() { "main" } else { &c.name };
                json!({"name": name, "resources": {"requests": requests}})
            })
            .collect(),
        None => vec![json!({"name": "main", "resources": {"requests": pod.pod_set.requests}})],
    };
    let mut pod_spec = json!({
        "schedulerName": w.scheduler_name,
        "priority": w.priority,
        "containers": containers,
    });
    if let Some(info) = pod.info.filter(|i| !i.node_selector.is_empty()) {
        let sel: Map<String, Value> = info
            .node_selector
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        pod_spec["nodeSelector"] = Value::Object(sel);
    }
    // The pod set's tolerations: a bare Pod's own (its pod set is the pod), else its
    // template's.
    let tolerations: Vec<Value> = spec
        .and_then(|s| s.pod_sets.get(pod.pod_set_index))
        .map_or(&[][..], |ps| ps.tolerations.as_slice())
        .iter()
        .map(|t| {
            let mut v = Map::new();
            if !t.key.is_empty() {
                v.insert("key".into(), json!(t.key));
            }
            v.insert(
                "operator".into(),
                json!(match t.op {
                    kueuesim_model::labels::TolerationOp::Equal => "Equal",
                    kueuesim_model::labels::TolerationOp::Exists => "Exists",
                }),
            );
            if !t.value.is_empty() {
                v.insert("value".into(), json!(t.value));
            }
            if let Some(e) = t.effect {
                v.insert("effect".into(), json!(e.as_str()));
            }
            Value::Object(v)
        })
        .collect();
    if !tolerations.is_empty() {
        pod_spec["tolerations"] = json!(tolerations);
    }
    if let Some(pc) = &w.priority_class {
        pod_spec["priorityClassName"] = json!(pc);
    }
    if let Some(n) = pod.node {
        pod_spec["nodeName"] = json!(n);
    }
    if pod.status == PodStatus::SchedulingGated {
        pod_spec["schedulingGates"] = json!([{"name": ADMISSION_GATE}]);
    }
    let phase = match pod.status {
        PodStatus::Running => "Running",
        PodStatus::Completed => "Succeeded",
        PodStatus::Terminating if pod.started.is_some() => "Running",
        _ => "Pending",
    };
    let failed = super::pods::failed_scheduling(world, pod, at);
    let conditions: Vec<Value> = super::pods::conditions(pod, failed)
        .into_iter()
        .map(|(t, s)| {
            let mut c = json!({"type": t, "status": s});
            if t == "PodScheduled" && s == "False" {
                c["reason"] = json!(if pod.status == PodStatus::SchedulingGated {
                    "SchedulingGated"
                } else {
                    "Unschedulable"
                });
            }
            c
        })
        .collect();
    let mut status = json!({"phase": phase, "conditions": conditions});
    if let Some(b) = pod.bound_at {
        status["startTime"] = json!(ts(b));
    }
    let state = match (pod.status, pod.started) {
        (PodStatus::Completed, Some(s)) => Some(json!({"terminated": {
            "reason": "Completed", "exitCode": 0, "startedAt": ts(s),
            "finishedAt": w.finished_at.map(ts),
        }})),
        (PodStatus::Running | PodStatus::Terminating, Some(s)) => {
            Some(json!({"running": {"startedAt": ts(s)}}))
        }
        (PodStatus::ContainerCreating | PodStatus::Terminating, None) => {
            Some(json!({"waiting": {"reason": "ContainerCreating"}}))
        }
        _ => None,
    };
    if let Some(state) = state {
        // One status per container, in the spec's order (kueuesim runs a pod as a whole).
        let statuses: Vec<Value> = containers
            .iter()
            .map(|c| {
                json!({
                    "name": c["name"],
                    "ready": pod.ready() == "1/1",
                    "restartCount": 0,
                    "started": pod.started.is_some() && pod.status != PodStatus::Completed,
                    "state": state,
                })
            })
            .collect();
        status["containerStatuses"] = json!(statuses);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": pod_spec,
        "status": status,
    })
}

/// A JSON value as kubectl's `-o json` text.
pub fn json_text(v: &Value) -> String {
    let mut t = serde_json::to_string_pretty(v).expect("a JSON value serializes");
    t.push('\n');
    t
}

/// A JSON value as `-o yaml` text.
pub fn yaml_text(v: &Value) -> String {
    serde_saphyr::to_string(v).expect("a JSON value serializes")
}
