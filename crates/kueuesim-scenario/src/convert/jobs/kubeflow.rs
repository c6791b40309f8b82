//! Kubeflow jobs (PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob, MPIJob: one pod set per
//! replica type in Kueue's order) and Kubeflow Trainer TrainJobs (the JobSet of their runtime).

use std::collections::BTreeMap;
use std::sync::Arc;

use kueuesim_model::{NetworkTopology, TierRef, Workload};

use super::JobKind;
use crate::convert::core::{Builder, count_in, err_at, err_obj, name_of, namespace_of, one_of};
use crate::error::ScenarioError;
use crate::wire;

impl Builder<'_> {
    /// Kubeflow training jobs and MPIJob.
    pub(super) fn build_kubeflow_jobs(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let kubeflow = std::mem::take(&mut self.kubeflow_jobs);
        for (kind, p) in &kubeflow {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            let spec = &p.obj.spec;
            // Kueue's replica-type order per kind.
            let (specs, order): (Option<&BTreeMap<String, wire::ReplicaSpec>>, &[&str]) =
                match *kind {
                    "PyTorchJob" => (spec.pytorch_replica_specs.as_ref(), &["Master", "Worker"]),
                    "TFJob" => (
                        spec.tf_replica_specs.as_ref(),
                        &["Chief", "Master", "PS", "Worker", "Evaluator"],
                    ),
                    "XGBoostJob" => (spec.xgb_replica_specs.as_ref(), &["Master", "Worker"]),
                    "PaddleJob" => (spec.paddle_replica_specs.as_ref(), &["Master", "Worker"]),
                    "JAXJob" => (spec.jax_replica_specs.as_ref(), &["Worker"]),
                    _ => (spec.mpi_replica_specs.as_ref(), &["Launcher", "Worker"]),
                };
            let Some(specs) = specs.filter(|m| !m.is_empty()) else {
                return Err(err_obj(
                    src,
                    format!(
                        "{kind} {namespace}/{name} has no replica specs: expected spec.{} with {}",
                        match *kind {
                            "PyTorchJob" => "pytorchReplicaSpecs",
                            "TFJob" => "tfReplicaSpecs",
                            "XGBoostJob" => "xgbReplicaSpecs",
                            "PaddleJob" => "paddleReplicaSpecs",
                            "JAXJob" => "jaxReplicaSpecs",
                            _ => "mpiReplicaSpecs",
                        },
                        order.join(" / ")
                    ),
                ));
            };
            if let Some(unknown) = specs.keys().find(|k| !order.contains(&k.as_str())) {
                return Err(err_obj(
                    src,
                    format!(
                        "{kind} {namespace}/{name} has replica type {unknown:?}: expected one of {}",
                        order.join(", ")
                    ),
                ));
            }
            let mut pod_sets = Vec::new();
            let mut templates = Vec::new();
            for rt in order.iter().filter_map(|t| specs.get(*t).map(|s| (t, s))) {
                let (t, rs) = rt;
                let count = Self::replicas(src, "replicas", rs.replicas.as_ref())?;
                pod_sets.push(self.pod_set(src, t.to_lowercase(), count, None, &rs.template)?);
                templates.push(&rs.template);
            }
            let policy = spec
                .run_policy
                .as_ref()
                .and_then(|r| r.scheduling_policy.as_ref());
            let group = "kubeflow.org";
            let jk = JobKind {
                kind,
                group,
                is_batch_job: false,
            };
            let mut w = self.job_workload(
                src,
                meta,
                jk,
                &name,
                &namespace,
                pod_sets,
                &templates,
                policy.and_then(|p| p.priority_class.as_ref()),
            )?;
            Self::keep_suspended(&mut w, spec.run_policy.as_ref().and_then(|r| r.suspend));
            // The training operator recreates a lost pod, up to `runPolicy.backoffLimit`;
            // a replica with `restartPolicy: Never` whose pod fails in place fails the job.
            let backoff_limit = match spec
                .run_policy
                .as_ref()
                .and_then(|r| r.backoff_limit.as_ref())
            {
                None => None,
                Some(b) => {
                    Some(count_in(src, b, "runPolicy.backoffLimit", 0, i64::from(i32::MAX))? as u32)
                }
            };
            // Pod set i is the i-th replica type present, in Kueue's order.
            let mut never_restarted = 0u32;
            for (i, rs) in order.iter().filter_map(|t| specs.get(*t)).enumerate() {
                if let Some(p) = &rs.restart_policy {
                    let never = one_of(
                        src,
                        p,
                        "restartPolicy",
                        &[
                            ("Always", false),
                            ("OnFailure", false),
                            ("ExitCode", false),
                            ("Never", true),
                        ],
                    )?;
                    if never {
                        never_restarted |= 1 << i;
                    }
                }
            }
            w.resilience.on_pod_loss = kueuesim_model::OnPodLoss::Replace {
                backoff_limit,
                never_restarted,
            };
            // Gang schedulers: runPolicy.schedulingPolicy.minAvailable, else every pod.
            if let Some(m) = policy.and_then(|p| p.min_available.as_ref()) {
                Arc::make_mut(&mut w.gang).min_member =
                    Some(u32::try_from(m.value.max(0)).unwrap_or(u32::MAX));
            }
            out.push((src.order, w));
        }
        Ok(())
    }

    /// TrainJobs, with the (Cluster)TrainingRuntime they name.
    pub(super) fn build_train_jobs(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let train_jobs = std::mem::take(&mut self.train_jobs);
        let runtimes = std::mem::take(&mut self.training_runtimes);
        for p in &train_jobs {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            let rr = &p.obj.spec.runtime_ref;
            let Some(rname) = rr.name.as_ref().filter(|n| !n.value.is_empty()) else {
                return Err(err_obj(
                    src,
                    format!(
                        "TrainJob {namespace}/{name} has no spec.runtimeRef.name: expected the runtime it runs"
                    ),
                ));
            };
            let cluster = rr
                .kind
                .as_ref()
                .is_none_or(|k| k.value == "ClusterTrainingRuntime");
            let Some((_, rt)) = runtimes.iter().find(|(c, r)| {
                *c == cluster
                    && r.obj
                        .metadata
                        .name
                        .as_ref()
                        .is_some_and(|n| n.value == rname.value)
                    && (cluster || namespace_of(&r.obj.metadata) == namespace)
            }) else {
                let what = if cluster {
                    "ClusterTrainingRuntime"
                } else {
                    "TrainingRuntime"
                };
                return Err(err_at(
                    src,
                    rname,
                    format!(
                        "TrainJob {namespace}/{name} names {what} {:?}, which is not in the input: expected a trainer.kubeflow.org {what}",
                        rname.value
                    ),
                ));
            };
            let rspec = &rt.obj.spec;
            let trainer = p.obj.spec.trainer.as_ref();
            let num_nodes = match trainer
                .and_then(|t| t.num_nodes.as_ref())
                .or(rspec.ml_policy.as_ref().and_then(|m| m.num_nodes.as_ref()))
            {
                None => 1,
                Some(n) => Self::replicas(src, "numNodes", Some(n))?,
            };
            if rspec.template.spec.replicated_jobs.is_empty() {
                return Err(err_obj(
                    rt.src,
                    "the runtime has no spec.template.spec.replicatedJobs: expected the JobSet it builds",
                ));
            }
            // The child JobSet the trainer builds: the trainer step (ancestor label `trainer`,
            // or the replicatedJob `node`) runs numNodes pods with resourcesPerNode.
            let mut pod_sets = Vec::new();
            let mut templates = Vec::new();
            for rj in &rspec.template.spec.replicated_jobs {
                let Some(rj_name) = rj.name.as_ref().filter(|n| !n.value.is_empty()) else {
                    return Err(err_obj(
                        rt.src,
                        "a replicatedJob has no name: expected spec.template.spec.replicatedJobs[].name",
                    ));
                };
                let is_trainer = rj
                    .template
                    .metadata
                    .labels
                    .get("trainer.kubeflow.org/trainjob-ancestor-step")
                    .is_some_and(|v| v == "trainer")
                    || rj_name.value == "node";
                let replicas = Self::replicas(rt.src, "replicas", rj.replicas.as_ref())?;
                let job = &rj.template.spec;
                let count = if is_trainer {
                    num_nodes
                } else {
                    let parallelism =
                        Self::replicas(rt.src, "parallelism", job.parallelism.as_ref())?;
                    replicas.saturating_mul(parallelism)
                };
                let mut ps = self.pod_set(
                    rt.src,
                    rj_name.value.to_lowercase(),
                    count,
                    None,
                    &job.template,
                )?;
                if is_trainer && let Some(res) = trainer.and_then(|t| t.resources_per_node.as_ref())
                {
                    let container = wire::Container {
                        name: None,
                        resources: wire::ResourceRequirements {
                            requests: res.requests.clone(),
                            limits: res.limits.clone(),
                        },
                        restart_policy: None,
                    };
                    let spec = wire::PodSpec {
                        containers: vec![container],
                        ..Default::default()
                    };
                    ps.requests = self.pod_requests(src, &spec)?;
                }
                pod_sets.push(ps);
                templates.push(&job.template);
            }
            let kind = JobKind {
                kind: "TrainJob",
                group: "trainer.kubeflow.org",
                is_batch_job: false,
            };
            let mut w = self.job_workload(
                src, meta, kind, &name, &namespace, pod_sets, &templates, None,
            )?;
            Self::keep_suspended(&mut w, p.obj.spec.suspend);
            // podGroupPolicy: Volcano's PodGroup gets every pod as minMember and the runtime's
            // networkTopology; coscheduling gangs every pod too.
            if let Some(pgp) = &rspec.pod_group_policy {
                Arc::make_mut(&mut w.gang).min_member = None;
                if let Some(nt) = pgp
                    .volcano
                    .as_ref()
                    .and_then(|v| v.network_topology.as_ref())
                {
                    let hard = match &nt.mode {
                        None => true,
                        Some(m) => one_of(
                            rt.src,
                            m,
                            "networkTopology mode",
                            &[("hard", true), ("soft", false)],
                        )?,
                    };
                    let highest_tier = match (&nt.highest_tier_allowed, &nt.highest_tier_name) {
                        (Some(t), _) => {
                            Some(TierRef::Number(i32::try_from(t.value).unwrap_or(i32::MAX)))
                        }
                        (None, Some(n)) => Some(TierRef::Name(n.clone())),
                        (None, None) => None,
                    };
                    Arc::make_mut(&mut w.gang).network_topology =
                        Some(NetworkTopology { hard, highest_tier });
                }
            }
            out.push((src.order, w));
        }
        Ok(())
    }
}
