//! Job kinds as Kueue's job integrations see them: each top-level job becomes one Workload
//! (or one per pod or group) whose pod sets Kueue derives from the job's pod templates. The
//! shared derivation is here (per-pod requests, a pod set, queue and priority resolution,
//! Kueue's Workload name); each kind's own rules are in the submodule of its API family.

mod bare_pods;
mod batch;
mod grove;
mod kubeflow;
mod pods;
mod ray;
mod serving;
mod vgpu;
mod volcano;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_saphyr::Spanned;

use kueuesim_model::OnPodLoss;
use kueuesim_model::gpu::{self, GpuShare};
use kueuesim_model::limits;
use kueuesim_model::time::SimDuration;
use kueuesim_model::{CreationBlocked, PodSet, QueueRef, ResourceList, TopologyRequest, Workload};

use crate::convert::core::{
    Builder, DEFAULT_LOCAL_QUEUE, PRIORITY_CLASS_LABEL, QUEUE_LABEL, SLICE_CONSTRAINTS_ANNOTATION,
    SLICE_LEVEL_ANNOTATION, SLICE_SIZE_ANNOTATION, err_at, err_obj, labels, pos_of, quantity,
    spec_shape, tolerations, topology_slice,
};
use crate::convert::names;
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

/// The longest maximum execution time, in seconds (`limits::MAX_DURATION`).
const MAX_SECONDS: i64 = limits::MAX_DURATION.millis() / 1000;

/// Which kind of top-level job a Workload stands for (for its name and gang rules).
#[derive(Clone, Copy)]
struct JobKind {
    /// The kind, as in the Workload name (`lower(kind)-…`).
    kind: &'static str,
    /// Its API group.
    group: &'static str,
    /// batch/v1 Job: KAI gives its pods one PodGroup each, Volcano's PodGroup controller
    /// minMember 1.
    is_batch_job: bool,
}

impl Builder<'_> {
    /// Every job kind, kind by kind in this order, with Kueue's pod-set derivation
    /// (Kueue's `pkg/controller/jobs/*` integrations): batch/v1 Job, JobSet, Kubeflow jobs, MPIJob, RayJob,
    /// TrainJob, Volcano Job, RayCluster, StatefulSet (one pod group), Deployment (a Workload
    /// per pod), LeaderWorkerSet (a Workload per group) and Pods.
    pub(super) fn build_jobs(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        self.build_batch_jobs(out)?;
        self.build_jobsets(out)?;
        self.build_kubeflow_jobs(out)?;
        self.build_ray_jobs(out)?;
        self.build_train_jobs(out)?;
        self.build_volcano_jobs(out)?;
        self.build_ray_clusters(out)?;
        self.build_statefulsets(out)?;
        self.build_deployments(out)?;
        self.build_leader_worker_sets(out)?;
        self.build_pod_clique_sets(out)?;
        self.build_pods(out)
    }

    /// Per-pod requests as Kubernetes' `PodRequests` computes them: the sum of containers
    /// (limits standing in for missing requests) and restartable sidecars, the max against
    /// each init container, plus overhead.
    fn pod_requests(
        &mut self,
        src: &ObjectText<'_>,
        spec: &wire::PodSpec,
    ) -> Result<ResourceList, ScenarioError> {
        let mut container_requests =
            |c: &wire::Container| -> Result<Vec<(usize, i64)>, ScenarioError> {
                names::resource_names(src, &c.resources.requests)?;
                names::resource_names(src, &c.resources.limits)?;
                let mut out = Vec::new();
                for (r, q) in &c.resources.requests {
                    out.push((self.world.resources.intern(r).index(), quantity(src, r, q)?));
                }
                for (r, q) in &c.resources.limits {
                    if !c.resources.requests.contains_key(r) {
                        out.push((self.world.resources.intern(r).index(), quantity(src, r, q)?));
                    }
                }
                Ok(out)
            };
        let mut sum: BTreeMap<usize, i64> = BTreeMap::new();
        for c in &spec.containers {
            for (r, a) in container_requests(c)? {
                *sum.entry(r).or_default() += a;
            }
        }
        let mut sidecars: BTreeMap<usize, i64> = BTreeMap::new();
        let mut init_max: BTreeMap<usize, i64> = BTreeMap::new();
        for c in &spec.init_containers {
            let reqs = container_requests(c)?;
            if c.restart_policy.as_deref() == Some("Always") {
                for (r, a) in reqs {
                    *sidecars.entry(r).or_default() += a;
                    *sum.entry(r).or_default() += a;
                }
            } else {
                for (r, a) in reqs {
                    let need = a + sidecars.get(&r).copied().unwrap_or(0);
                    let e = init_max.entry(r).or_default();
                    *e = (*e).max(need);
                }
            }
        }
        for (r, a) in init_max {
            let e = sum.entry(r).or_default();
            *e = (*e).max(a);
        }
        names::resource_names(src, &spec.overhead)?;
        for (r, q) in &spec.overhead {
            let a = quantity(src, r, q)?;
            *sum.entry(self.world.resources.intern(r).index())
                .or_default() += a;
        }
        Ok(ResourceList::from_pairs(
            sum.into_iter()
                .map(|(r, a)| (kueuesim_model::ResourceId::from_index(r), a))
                .collect(),
        ))
    }

    pub(super) fn pod_set(
        &mut self,
        src: &ObjectText<'_>,
        name: String,
        count: u32,
        min_count: Option<u32>,
        t: &wire::PodTemplateSpec,
    ) -> Result<PodSet, ScenarioError> {
        self.pod_set_of(src, name, count, min_count, t, true)
    }

    /// [`Self::pod_set`], reading the template's TAS slice annotations or not.
    pub(super) fn pod_set_of(
        &mut self,
        src: &ObjectText<'_>,
        name: String,
        count: u32,
        min_count: Option<u32>,
        t: &wire::PodTemplateSpec,
        slice_annotations: bool,
    ) -> Result<PodSet, ScenarioError> {
        // Replicas times pods per replica may exceed what one workload may have.
        if i64::from(count) > limits::MAX_PODS_PER_WORKLOAD {
            return Err(err_obj(
                src,
                format!(
                    "pod set {name:?} has {count} pods: expected at most {} pods in a workload",
                    limits::MAX_PODS_PER_WORKLOAD
                ),
            ));
        }
        if t.spec.containers.is_empty() {
            return Err(err_obj(
                src,
                format!(
                    "pod set {name:?} has a pod template without containers: expected spec.containers with at least one container"
                ),
            ));
        }
        names::pod_template(src, t)?;
        let ann = &t.metadata.annotations;
        let topology_request = match (
            ann.get("kueue.x-k8s.io/podset-required-topology"),
            ann.get("kueue.x-k8s.io/podset-preferred-topology"),
            ann.get("kueue.x-k8s.io/podset-unconstrained-topology"),
        ) {
            (Some(r), _, _) => Some(TopologyRequest::Required(r.value.trim().to_string())),
            (None, Some(p), _) => Some(TopologyRequest::Preferred(p.value.trim().to_string())),
            (None, None, Some(u)) if u.value.trim() == "true" => {
                Some(TopologyRequest::Unconstrained)
            }
            _ => None,
        };
        // The slice annotations, which `jobframework`'s `podSetTopologyRequestBuilder` reads
        // only with both present (the webhook refuses one alone). A Workload's template
        // annotations are not read (`slice_annotations` false): its `topologyRequest` is.
        let topology_slice = if slice_annotations {
            topology_slice(
                src,
                ann.get(SLICE_LEVEL_ANNOTATION),
                ann.get(SLICE_SIZE_ANNOTATION)
                    .map(|s| (pos_of(src, s), s.value.trim().parse().ok(), s.value.clone())),
                (SLICE_LEVEL_ANNOTATION, SLICE_SIZE_ANNOTATION),
            )?
        } else {
            None
        };
        // The Job webhooks' `ValidateSliceSizeAnnotationUpperBound` (jobframework
        // `tas_validation.go`): a slice larger than the pod set is refused at creation. (A
        // slice is only read from the annotations, so the size annotation is there.)
        if let Some(slice) = &topology_slice
            && slice.size > count
            && let Some(size) = ann.get(SLICE_SIZE_ANNOTATION)
        {
            return Err(err_at(
                src,
                size,
                format!(
                    "{SLICE_SIZE_ANNOTATION} {} is greater than pod set {name:?}'s {count} pods: \
                     expected at most {count} (Kueue's webhook refuses it: must not be \
                     greater than pod set count {count})",
                    slice.size
                ),
            ));
        }
        if slice_annotations && let Some(c) = ann.get(SLICE_CONSTRAINTS_ANNOTATION) {
            self.slice_constraints_ignored
                .get_or_insert((0, pos_of(src, c)))
                .0 += 1;
        }
        // A slice-only request is TAS with an unconstrained pod set (`isSliceTopologyOnlyRequest`
        // in upstream's `isUnconstrained`).
        let topology_request = topology_request.or_else(|| {
            topology_slice
                .as_ref()
                .map(|_| TopologyRequest::Unconstrained)
        });
        let mut requests = self.pod_requests(src, &t.spec)?;
        let gpu_share = self.kai_gpu_share(src, ann, &mut requests)?;
        let vgpu = vgpu::request(src, &t.spec, ann)?;
        let mut node_selector = labels(&t.spec.node_selector);
        if let Some(pair) = self.node_affinity_label(src, &t.spec)? {
            let mut pairs: Vec<(String, String)> = node_selector
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            pairs.push(pair);
            node_selector = kueuesim_model::Labels::new(pairs);
        }
        // The pod's `preemptionPolicy`, else the one the API server's Priority admission
        // copies from its PriorityClass (the one it names, else the global default).
        let preempt_never =
            match super::kube::preempt_never(src, t.spec.preemption_policy.as_ref())? {
                Some(never) => never,
                None => {
                    match &t.spec.priority_class_name {
                        Some(pc) => self.pod_pc(&pc.value).is_some_and(|c| c.preempt_never),
                        // The lowest-valued global default, as the pods' priority takes it.
                        None => self
                            .world
                            .priority_classes
                            .iter()
                            .filter(|c| c.is_pod_priority_class && c.global_default)
                            .min_by_key(|c| c.value)
                            .is_some_and(|c| c.preempt_never),
                    }
                }
            };
        Ok(PodSet {
            name,
            count,
            min_count,
            requests,
            node_selector,
            tolerations: tolerations(src, &t.spec.tolerations)?,
            priority_class_name: t.spec.priority_class_name.as_ref().map(|s| s.value.clone()),
            preempt_never,
            spec_shape: spec_shape(&t.spec),
            topology_request,
            topology_slice,
            gpu_share,
            vgpu,
            info: Some(crate::convert::pod_spec::pod_info(t)),
        })
    }

    /// KAI GPU sharing: the pod template's `gpu-fraction` or `gpu-memory` annotation, checked
    /// as KAI's admission webhook checks it (`ValidateGpuRequests`, same wording), and charged
    /// to Kueue: Kueue sees only container requests, so the share is added to the pod's
    /// requests as `kueuesim.io/gpu-milli` (a fraction to the nearest thousandth; a memory
    /// request against the smallest GPU memory of the GPU nodes, at most 1000), the extended
    /// resource a platform's webhook adds for Kueue to count shares (docs/semantics.md,
    /// "Shared GPUs").
    fn kai_gpu_share(
        &mut self,
        src: &ObjectText<'_>,
        ann: &BTreeMap<String, Spanned<String>>,
        requests: &mut ResourceList,
    ) -> Result<Option<GpuShare>, ScenarioError> {
        let fraction = ann.get(gpu::KAI_GPU_FRACTION);
        let memory = ann.get(gpu::KAI_GPU_MEMORY);
        let (Some(first), whole) = (
            fraction.or(memory),
            self.world
                .resources
                .lookup(kueuesim_model::resources::GPU)
                .map_or(0, |g| requests.get(g)),
        ) else {
            return Ok(None);
        };
        if !self.world.config.gpu.devices {
            return Err(err_at(
                src,
                first,
                "a GPU-sharing request while GPU sharing is off: expected spec.gpuPlacement.devices: true in the Simulation (KAI's global.gpuSharing)",
            ));
        }
        if fraction.is_some() && whole > 0 {
            return Err(err_at(
                src,
                first,
                "cannot have both GPU fraction request and whole GPU resource request/limit",
            ));
        }
        if let Some(m) = memory
            && (fraction.is_some() || whole > 0)
        {
            return Err(err_at(src, m, "cannot request both GPU and GPU memory"));
        }
        if let Some(n) = ann.get(gpu::KAI_GPU_FRACTION_DEVICES)
            && n.value.trim() != "1"
        {
            return Err(err_at(
                src,
                n,
                "a share on several GPUs (gpu-fraction-num-devices above 1) is not modelled: expected \"1\" or no annotation",
            ));
        }
        let share = match (fraction, memory) {
            (Some(f), _) => {
                let v: f64 = f.value.trim().parse().unwrap_or(f64::NAN);
                if !(v > 0.0 && v < 1.0) {
                    return Err(err_at(
                        src,
                        f,
                        "gpu-fraction annotation value must be a positive number smaller than 1.0",
                    ));
                }
                GpuShare::Fraction(((v * 1000.0).round() as u16).clamp(1, 999))
            }
            (None, Some(m)) => match m.value.trim().parse::<u64>() {
                Ok(v) if v > 0 && v <= limits::MAX_QUANTITY as u64 => GpuShare::Memory(v as i64),
                _ => {
                    return Err(err_at(
                        src,
                        m,
                        "gpu-memory annotation value must be a positive integer greater than 0",
                    ));
                }
            },
            (None, None) => unreachable!("one annotation was found above"),
        };
        let smallest = self
            .world
            .resources
            .lookup(kueuesim_model::resources::GPU)
            .and_then(|g| {
                self.world
                    .nodes
                    .iter()
                    .filter(|n| n.allocatable.get(g.index()).is_some_and(|&a| a > 0))
                    .map(|n| gpu::kai_gpu_memory(n.labels.get(gpu::NODE_GPU_MEMORY_LABEL)))
                    .min()
            })
            .unwrap_or(gpu::KAI_DEFAULT_GPU_MEMORY);
        let milli = share.milli_on(smallest).map_or(gpu::MILLI, i64::from);
        let r = self.world.resources.intern(gpu::GPU_MILLI);
        let mut pairs: Vec<_> = requests.iter().filter(|&(id, _)| id != r).collect();
        pairs.push((r, milli));
        pairs.sort_by_key(|&(id, _)| id);
        *requests = ResourceList::from_pairs(pairs);
        Ok(Some(share))
    }

    /// Resolves the LocalQueue of a job: the queue-name label, else the namespace's `default`
    /// LocalQueue, else not managed by Kueue.
    fn job_queue(
        &self,
        namespace: &str,
        label: Option<&str>,
        kind: &str,
    ) -> (QueueRef, Option<String>, bool) {
        // Kueue's jobframework: the webhooks default the queue and suspend
        // (`ApplyDefaultLocalQueue`, `WorkloadShouldBeSuspended`), the reconciler manages
        // (`ReconcileGenericJob`), both under the Configuration's
        // `managedJobsNamespaceSelector` and `manageJobsWithoutQueueName`.
        let managed_ns = self.world.kueue_manages_namespace(namespace);
        // The pod-based integrations are exempt outright in a namespace not selected.
        let pod_based = matches!(
            kind,
            "Pod" | "Deployment" | "StatefulSet" | "LeaderWorkerSet"
        );
        let name = match label {
            // A queue-name label outside the selected namespaces: the webhook suspends the
            // job (a queue name is enough), the reconciler then ignores it, so it stays
            // suspended; a pod-based one is left alone.
            Some(_) if !managed_ns => return (QueueRef::Unmanaged, None, !pod_based),
            Some(n) => n.to_string(),
            None if !managed_ns => return (QueueRef::Unmanaged, None, false),
            None => match self.lq_id(namespace, DEFAULT_LOCAL_QUEUE) {
                Some(_) => DEFAULT_LOCAL_QUEUE.to_string(),
                // Managed without a queue: its Workload names no LocalQueue and waits.
                None if self.world.config.kueue.manage_jobs_without_queue_name => {
                    return (QueueRef::Missing(String::new()), Some(String::new()), false);
                }
                None => return (QueueRef::Unmanaged, None, false),
            },
        };
        match self.lq_id(namespace, &name) {
            Some(id) => (QueueRef::Local(id), Some(name), false),
            None => (QueueRef::Missing(name.clone()), Some(name), false),
        }
    }

    /// Kueue's `ExtractPriority` for a job: the WorkloadPriorityClass label (the `default`
    /// WorkloadPriorityClass when no label and it exists: WorkloadPriorityClassDefaulting),
    /// else the pod template's PriorityClass, else the lowest globalDefault PriorityClass,
    /// else 0. A missing WorkloadPriorityClass blocks the Workload's creation.
    fn job_priority(
        &self,
        label: Option<&str>,
        pod_pc: Option<&Spanned<String>>,
        src: &ObjectText<'_>,
    ) -> Result<(Option<String>, i32, Option<CreationBlocked>), ScenarioError> {
        let wpc_name = label
            .map(str::to_string)
            .or_else(|| self.wpc("default").map(|_| "default".to_string()));
        if let Some(n) = wpc_name {
            return Ok(match self.wpc(&n) {
                Some(p) => (Some(n), p.value, None),
                None => (
                    Some(n.clone()),
                    0,
                    Some(CreationBlocked {
                        reason: "WorkloadPriorityClassNotFound",
                        message: format!("WorkloadPriorityClass {n:?} not found"),
                    }),
                ),
            });
        }
        self.pod_priority(pod_pc, src)
    }

    /// The pod-level priority: the pod template's PriorityClass, else the lowest-valued
    /// `globalDefault` PriorityClass, else 0.
    fn pod_priority(
        &self,
        pod_pc: Option<&Spanned<String>>,
        src: &ObjectText<'_>,
    ) -> Result<(Option<String>, i32, Option<CreationBlocked>), ScenarioError> {
        if let Some(pc) = pod_pc {
            return match self.pod_pc(&pc.value) {
                Some(p) => Ok((Some(p.name.clone()), p.value, None)),
                None => Err(err_at(
                    src,
                    pc,
                    format!(
                        "priorityClassName {:?} names no PriorityClass: expected a scheduling.k8s.io PriorityClass defined in the input (the API server rejects such pods)",
                        pc.value
                    ),
                )),
            };
        }
        let global = self
            .world
            .priority_classes
            .iter()
            .filter(|p| p.is_pod_priority_class && p.global_default)
            .min_by_key(|p| p.value);
        Ok(match global {
            Some(p) => (Some(p.name.clone()), p.value, None),
            None => (None, 0, None),
        })
    }

    /// The Workload of a top-level job object (any kind with pod templates): queue and
    /// priority resolution, Kueue's Workload name, times, max execution time, scheduler and
    /// gang. `templates` are the pod sets' templates in pod-set order; `priority_class` the
    /// kind's own priority class (Kubeflow `runPolicy.schedulingPolicy.priorityClass`), else
    /// the first template's.
    #[allow(clippy::too_many_arguments)]
    fn job_workload(
        &mut self,
        src: &ObjectText<'_>,
        meta: &wire::ObjectMeta,
        kind: JobKind,
        name: &str,
        namespace: &str,
        pod_sets: Vec<PodSet>,
        templates: &[&wire::PodTemplateSpec],
        priority_class: Option<&wire::S>,
    ) -> Result<Workload, ScenarioError> {
        let pods: i64 = pod_sets.iter().map(|p| i64::from(p.count)).sum();
        if pods > limits::MAX_PODS_PER_WORKLOAD {
            return Err(err_obj(
                src,
                format!(
                    "{namespace}/{name} has {pods} pods in all: expected at most {} pods in a workload",
                    limits::MAX_PODS_PER_WORKLOAD
                ),
            ));
        }
        let template = templates[0];
        let (queue, queue_name, suspended) = self.job_queue(
            namespace,
            meta.labels
                .get(QUEUE_LABEL)
                .map(String::as_str)
                .filter(|q| !q.is_empty()),
            kind.kind,
        );
        if let QueueRef::Missing(q) = &queue {
            self.note_missing_queue(src, namespace, q);
        }
        let managed = queue != QueueRef::Unmanaged;
        let pod_pc = priority_class.or(template.spec.priority_class_name.as_ref());
        let (priority_class, priority, creation_blocked) = if managed {
            self.job_priority(
                meta.labels.get(PRIORITY_CLASS_LABEL).map(String::as_str),
                pod_pc,
                src,
            )?
        } else {
            // Not Kueue's: the pod's own priority class (or the global default) matters
            // only to its scheduler.
            self.pod_priority(pod_pc, src)?
        };
        let uid = meta
            .uid
            .clone()
            .unwrap_or_else(|| format!("{namespace}/{name}"));
        let (created_at, arrival) = self.times(src, meta)?;
        let job_max_exec = match meta.labels.get("kueue.x-k8s.io/max-exec-time-seconds") {
            None => None,
            Some(v) => match v.trim().parse::<i64>() {
                Ok(n) if n > 0 && n <= MAX_SECONDS => Some(SimDuration::from_secs(n)),
                _ => {
                    return Err(err_obj(
                        src,
                        format!(
                            "label kueue.x-k8s.io/max-exec-time-seconds {v:?}: expected an integer number of seconds from 1 to {MAX_SECONDS}"
                        ),
                    ));
                }
            },
        };
        let report_name = if managed {
            kueue_workload_name(kind.kind, kind.group, name, &uid)
        } else {
            name.to_string()
        };
        let scheduler_name = self.scheduler_name(src, template.spec.scheduler_name.as_ref())?;
        let metas: Vec<&wire::ObjectMeta> = templates.iter().map(|t| &t.metadata).collect();
        let gang = self.gang_spec(
            src,
            &scheduler_name,
            meta,
            &metas,
            &pod_sets,
            kind.is_batch_job,
        )?;
        self.ensure_namespace(namespace);
        Ok(Workload {
            namespace: namespace.to_string(),
            name: report_name,
            kind: if managed {
                "Workload".into()
            } else {
                kind.kind.into()
            },
            owner: Some((kind.kind.into(), name.to_string())),
            uid,
            queue,
            queue_name,
            priority_class,
            priority,
            scheduler_name,
            created_at,
            arrival,
            duration: self.workload_duration(src, meta, false)?,
            pod_sets,
            active: true,
            initial_admission: None,
            last_eviction: None,
            max_execution_time: job_max_exec,
            job_uid: meta.uid.clone(),
            creation_blocked,
            suspended,
            requeue_state: None,
            gang: Arc::new(gang),
            resilience: self.resilience(src, meta, OnPodLoss::default())?,
            serving: None,
        })
    }

    /// A job written with `spec.suspend: true` that Kueue does not manage stays suspended:
    /// only Kueue would unsuspend it (`suspend` is the object's own flag).
    pub(super) fn keep_suspended(w: &mut Workload, suspend: Option<bool>) {
        if w.queue == QueueRef::Unmanaged && suspend == Some(true) {
            w.suspended = true;
        }
    }

    /// A replica count (default 1) from 1 to `limits::MAX_REPLICAS`, as a pod count.
    fn replicas(
        src: &ObjectText<'_>,
        what: &str,
        v: Option<&Spanned<i64>>,
    ) -> Result<u32, ScenarioError> {
        match v {
            None => Ok(1),
            Some(r) if (1..=limits::MAX_REPLICAS).contains(&r.value) => Ok(r.value as u32),
            Some(r) => Err(err_at(
                src,
                r,
                format!(
                    "{what} {}: expected an integer from 1 to {} (a pod set of 0 pods is not admitted)",
                    r.value,
                    limits::MAX_REPLICAS
                ),
            )),
        }
    }
}

/// Kueue's Workload name for a job (`GetWorkloadNameForOwnerWithGVK`):
/// `<lower(kind)>-<owner name>-<first 5 hex of sha1(kind \n group \n name \n uid)>`, the prefix
/// truncated to 253 − 6 characters.
pub fn kueue_workload_name(kind: &str, group: &str, owner: &str, uid: &str) -> String {
    let mut h = sha1_smol::Sha1::new();
    h.update(format!("{kind}\n{group}\n{owner}\n{uid}").as_bytes());
    let hex = h.digest().to_string();
    let mut prefix = format!("{}-{owner}", kind.to_lowercase());
    prefix.truncate(253 - 1 - 5);
    format!("{prefix}-{}", &hex[..5])
}
