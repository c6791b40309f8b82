//! Pod-based kinds: StatefulSet (one pod group), Deployment (a Workload per pod),
//! LeaderWorkerSet (a Workload per group); bare Pods are in `bare_pods`.

use std::sync::Arc;

use kueuesim_model::Workload;

use super::JobKind;
use crate::convert::core::{Builder, err_obj, name_of, namespace_of};
use crate::error::ScenarioError;
use crate::source::ObjectText;

impl Builder<'_> {
    /// StatefulSets.
    pub(super) fn build_statefulsets(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let statefulsets = std::mem::take(&mut self.statefulsets);
        for p in &statefulsets {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            // One pod group of `replicas` pods (Kueue's StatefulSet integration).
            let count = Self::replicas(src, "replicas", p.obj.spec.replicas.as_ref())?;
            let t = &p.obj.spec.template;
            let ps = self.pod_set(src, "main".into(), count, None, t)?;
            let kind = JobKind {
                kind: "StatefulSet",
                group: "apps",
                is_batch_job: false,
            };
            let w = self.job_workload(src, meta, kind, &name, &namespace, vec![ps], &[t], None)?;
            out.push((src.order, w));
        }
        Ok(())
    }

    /// Deployments.
    pub(super) fn build_deployments(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let deployments = std::mem::take(&mut self.deployments);
        for p in &deployments {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            // Every pod is its own single-pod Workload (the pod integration), named after
            // the pod, which the ReplicaSet controller names
            // `<deployment>-<pod-template-hash>-<5 random characters>`.
            let count = Self::replicas(src, "replicas", p.obj.spec.replicas.as_ref())?;
            let t = &p.obj.spec.template;
            too_many_workloads(src, out.len() + count as usize)?;
            let seed = meta
                .uid
                .clone()
                .unwrap_or_else(|| format!("{namespace}/{name}"));
            for i in 0..count {
                let ps = self.pod_set(src, "main".into(), 1, None, t)?;
                let kind = JobKind {
                    kind: "Pod",
                    group: "",
                    is_batch_job: false,
                };
                let pod = kueuesim_model::replica_set_pod_name(&name, &seed, i as usize);
                let mut w =
                    self.job_workload(src, meta, kind, &pod, &namespace, vec![ps], &[t], None)?;
                w.owner = Some(("Deployment".into(), name.clone()));
                Arc::make_mut(&mut w.gang).pod_names = vec![vec![pod]];
                out.push((src.order, w));
            }
        }
        Ok(())
    }

    /// LeaderWorkerSets.
    pub(super) fn build_leader_worker_sets(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let lws = std::mem::take(&mut self.leader_worker_sets);
        for p in &lws {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            let groups = Self::replicas(src, "replicas", p.obj.spec.replicas.as_ref())?;
            let lwt = &p.obj.spec.leader_worker_template;
            let size = Self::replicas(src, "size", lwt.size.as_ref())?;
            too_many_workloads(src, out.len() + groups as usize)?;
            for g in 0..groups {
                let mut pod_sets = Vec::new();
                let mut templates = Vec::new();
                match &lwt.leader_template {
                    Some(leader) => {
                        pod_sets.push(self.pod_set(src, "leader".into(), 1, None, leader)?);
                        templates.push(leader);
                        if size > 1 {
                            pod_sets.push(self.pod_set(
                                src,
                                "worker".into(),
                                size - 1,
                                None,
                                &lwt.worker_template,
                            )?);
                            templates.push(&lwt.worker_template);
                        }
                    }
                    None => {
                        pod_sets.push(self.pod_set(
                            src,
                            "main".into(),
                            size,
                            None,
                            &lwt.worker_template,
                        )?);
                        templates.push(&lwt.worker_template);
                    }
                }
                let kind = JobKind {
                    kind: "LeaderWorkerSet",
                    group: "leaderworkerset.x-k8s.io",
                    is_batch_job: false,
                };
                let group_name = format!("{name}-{g}");
                let w = self.job_workload(
                    src,
                    meta,
                    kind,
                    &group_name,
                    &namespace,
                    pod_sets,
                    &templates,
                    None,
                )?;
                out.push((src.order, w));
            }
        }
        Ok(())
    }
}

/// Refuses an object that would take the input's workloads past
/// `limits::MAX_OBJECT_WORKLOADS` (`total`: with its own).
pub(super) fn too_many_workloads(src: &ObjectText<'_>, total: usize) -> Result<(), ScenarioError> {
    let max = kueuesim_model::limits::MAX_OBJECT_WORKLOADS;
    if total > max {
        return Err(err_obj(
            src,
            format!(
                "the input's objects make {total} workloads with this one: expected at most {max} (a trace or a WorkloadGenerator streams more)"
            ),
        ));
    }
    Ok(())
}
