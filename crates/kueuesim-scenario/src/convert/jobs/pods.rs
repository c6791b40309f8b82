//! Pod-based kinds: StatefulSet (one pod group), Deployment (a Workload per pod),
//! LeaderWorkerSet (a Workload per group), and Pods, alone or in Kueue pod groups.

use std::collections::BTreeMap;
use std::sync::Arc;

use kueuesim_model::{NodeId, QueueRef, Workload};

use super::JobKind;
use crate::convert::core::{Builder, err_at, err_obj, name_of, namespace_of, spec_shape};
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
            // Every pod is its own single-pod Workload (the pod integration).
            let count = Self::replicas(src, "replicas", p.obj.spec.replicas.as_ref())?;
            let t = &p.obj.spec.template;
            too_many_workloads(src, out.len() + count as usize)?;
            for i in 0..count {
                let ps = self.pod_set(src, "main".into(), 1, None, t)?;
                let kind = JobKind {
                    kind: "Pod",
                    group: "",
                    is_batch_job: false,
                };
                let pod = format!("{name}-{i}");
                let w =
                    self.job_workload(src, meta, kind, &pod, &namespace, vec![ps], &[t], None)?;
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

    /// Pods, and pod groups.
    pub(super) fn build_pods(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let pods = std::mem::take(&mut self.pods);
        // Pod groups: pods sharing `kueue.x-k8s.io/pod-group-name` in a namespace are one
        // Workload named after the group, with one pod set per role (pods of one spec shape).
        let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
        for (i, p) in pods.iter().enumerate() {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            if let Some(g) = meta.labels.get("kueue.x-k8s.io/pod-group-name") {
                groups.entry((namespace, g.clone())).or_default().push(i);
                continue;
            }
            let pod = &p.obj;
            let ps = self.pod_set(src, "main".into(), 1, None, pod)?;
            let kind = JobKind {
                kind: "Pod",
                group: "",
                is_batch_job: false,
            };
            let mut w =
                self.job_workload(src, meta, kind, &name, &namespace, vec![ps], &[pod], None)?;
            // A Pod already bound (`spec.nodeName`) occupies its node from time 0.
            if let Some(node) = &pod.spec.node_name {
                let Some(&i) = self.index.nodes.get(&node.value) else {
                    return Err(err_at(
                        src,
                        node,
                        format!(
                            "spec.nodeName {:?} is not a node of the input: expected a Node or NodePool node",
                            node.value
                        ),
                    ));
                };
                if w.queue != QueueRef::Unmanaged {
                    return Err(err_at(
                        src,
                        node,
                        "a bound Pod managed by Kueue: expected its admitted Workload in the input instead (kueuesim continues Kueue's pods from their Workloads)",
                    ));
                }
                Arc::make_mut(&mut w.gang).bound_nodes = vec![NodeId::from_index(i)];
            }
            out.push((src.order, w));
        }
        for ((namespace, group), members) in groups {
            let first = &pods[members[0]];
            let src = first.src;
            let meta = &first.obj.metadata;
            let total = match meta.annotations.get("kueue.x-k8s.io/pod-group-total-count") {
                Some(t) => match t.value.trim().parse::<usize>() {
                    Ok(n)
                        if (1..=kueuesim_model::limits::MAX_PODS_PER_WORKLOAD as usize)
                            .contains(&n) =>
                    {
                        n
                    }
                    _ => {
                        return Err(err_at(
                            src,
                            t,
                            format!(
                                "pod-group-total-count {:?}: expected an integer from 1 to {}",
                                t.value,
                                kueuesim_model::limits::MAX_PODS_PER_WORKLOAD
                            ),
                        ));
                    }
                },
                None => {
                    return Err(err_obj(
                        src,
                        format!(
                            "pod group {namespace}/{group} has no kueue.x-k8s.io/pod-group-total-count annotation: expected the number of pods in the group"
                        ),
                    ));
                }
            };
            if members.len() != total {
                // Kueue waits for every pod of the group before it creates the Workload.
                self.warnings.push(format!(
                    "{}: pod group {namespace}/{group} has {} of its {total} pods in the input; Kueue waits for all of them, so it is not simulated",
                    src.kind_pos,
                    members.len()
                ));
                continue;
            }
            // Roles: pods of one spec shape, named by the shape's digest, sorted by name.
            let mut roles: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for &m in &members {
                let role = match pods[m]
                    .obj
                    .metadata
                    .annotations
                    .get("kueue.x-k8s.io/role-hash")
                {
                    Some(h) => h.value.clone(),
                    None => format!("{:08x}", spec_shape(&pods[m].obj.spec) as u32),
                };
                roles.entry(role).or_default().push(m);
            }
            let mut pod_sets = Vec::new();
            let mut templates = Vec::new();
            for (role, ms) in &roles {
                let t = &pods[ms[0]].obj;
                pod_sets.push(self.pod_set(src, role.clone(), ms.len() as u32, None, t)?);
                templates.push(t);
            }
            let kind = JobKind {
                kind: "Pod",
                group: "",
                is_batch_job: false,
            };
            let mut w = self.job_workload(
                src, meta, kind, &group, &namespace, pod_sets, &templates, None,
            )?;
            // A pod group's Workload is named after the group.
            w.name = group.clone();
            out.push((src.order, w));
        }
        Ok(())
    }
}

/// Refuses an object that would take the input's workloads past
/// `limits::MAX_OBJECT_WORKLOADS` (`total`: with its own).
fn too_many_workloads(src: &ObjectText<'_>, total: usize) -> Result<(), ScenarioError> {
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
