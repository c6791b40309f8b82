//! Pod-based kinds: StatefulSet (one pod group), Deployment (a Workload per pod),
//! LeaderWorkerSet (a Workload per group), as written or scaling (`serving`); bare Pods are in
//! `bare_pods`.

use std::sync::Arc;

use kueuesim_model::{ServingKind, SimTime, Workload};

use super::JobKind;
use super::serving::scaled_replica;
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
            let t = &p.obj.spec.template;
            let kind = JobKind {
                kind: "StatefulSet",
                group: "apps",
                is_batch_job: false,
            };
            let spec_replicas = p.obj.spec.replicas.as_ref();
            let Some(scaling) =
                self.serving_scaling(src, meta, ServingKind::StatefulSet, spec_replicas)?
            else {
                // One pod group of `replicas` pods (Kueue's StatefulSet integration).
                let count = Self::replicas(src, "replicas", spec_replicas)?;
                let ps = self.pod_set(src, "main".into(), count, None, t)?;
                let w =
                    self.job_workload(src, meta, kind, &name, &namespace, vec![ps], &[t], None)?;
                out.push((src.order, w));
                continue;
            };
            // Kueue's StatefulSet webhook lets a managed StatefulSet scale only to zero and
            // back (`ValidateUpdate`: "Allow only scale down to zero and scale up from zero",
            // kueue#3279): each scale-up from zero brings its one pod group (the Workload
            // taken off hold, keeping its creation time) back.
            let object = self.world.serving.len() as u32;
            let mut prev = 0;
            for &(at, n) in &scaling.steps {
                if prev == 0 && n > 0 {
                    too_many_workloads(src, out.len() + 1)?;
                    let ps = self.pod_set(src, "main".into(), n, None, t)?;
                    let mut w = self.job_workload(
                        src,
                        meta,
                        kind,
                        &name,
                        &namespace,
                        vec![ps],
                        &[t],
                        None,
                    )?;
                    scaled_replica(&mut w, at, object, 0, n, true);
                    out.push((src.order, w));
                }
                prev = n;
            }
            self.world
                .serving
                .push(scaling.object(ServingKind::StatefulSet, &namespace, &name));
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
            let spec_replicas = p.obj.spec.replicas.as_ref();
            let scaling =
                self.serving_scaling(src, meta, ServingKind::Deployment, spec_replicas)?;
            let t = &p.obj.spec.template;
            let seed = meta
                .uid
                .clone()
                .unwrap_or_else(|| format!("{namespace}/{name}"));
            // Each pod a scale-up creates: (when, its creation number).
            let pods: Vec<(Option<SimTime>, u32)> = match &scaling {
                None => {
                    let count = Self::replicas(src, "replicas", spec_replicas)?;
                    (0..count).map(|i| (None, i)).collect()
                }
                Some(sc) => {
                    let mut pods = Vec::new();
                    let mut prev = 0;
                    for &(at, n) in &sc.steps {
                        for _ in prev..n {
                            pods.push((Some(at), pods.len() as u32));
                        }
                        prev = n;
                    }
                    pods
                }
            };
            too_many_workloads(src, out.len() + pods.len())?;
            let object = self.world.serving.len() as u32;
            for (at, i) in pods {
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
                if let (Some(at), Some(_)) = (at, &scaling) {
                    scaled_replica(&mut w, at, object, i, 1, false);
                }
                out.push((src.order, w));
            }
            if let Some(sc) = scaling {
                self.world
                    .serving
                    .push(sc.object(ServingKind::Deployment, &namespace, &name));
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
            let spec_replicas = p.obj.spec.replicas.as_ref();
            let scaling =
                self.serving_scaling(src, meta, ServingKind::LeaderWorkerSet, spec_replicas)?;
            // Each group a scale-up creates: (when, its index). The LeaderWorkerSet
            // integration keeps one Workload per group index below `replicas`
            // (`filterWorkloads`): a scale-down deletes the highest, a scale-up makes the
            // missing ones again, under the same names.
            let groups: Vec<(Option<SimTime>, u32)> = match &scaling {
                None => {
                    let n = Self::replicas(src, "replicas", spec_replicas)?;
                    (0..n).map(|g| (None, g)).collect()
                }
                Some(sc) => {
                    let mut groups = Vec::new();
                    let mut prev = 0;
                    for &(at, n) in &sc.steps {
                        groups.extend((prev..n).map(|g| (Some(at), g)));
                        prev = n;
                    }
                    groups
                }
            };
            let lwt = &p.obj.spec.leader_worker_template;
            let size = Self::replicas(src, "size", lwt.size.as_ref())?;
            too_many_workloads(src, out.len() + groups.len())?;
            let object = self.world.serving.len() as u32;
            for (at, g) in groups {
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
                let mut w = self.job_workload(
                    src,
                    meta,
                    kind,
                    &group_name,
                    &namespace,
                    pod_sets,
                    &templates,
                    None,
                )?;
                if let (Some(at), Some(_)) = (at, &scaling) {
                    scaled_replica(&mut w, at, object, g, 1, false);
                }
                out.push((src.order, w));
            }
            if let Some(sc) = scaling {
                self.world
                    .serving
                    .push(sc.object(ServingKind::LeaderWorkerSet, &namespace, &name));
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
