//! KubeRay: RayJob (the cluster plus a submitter pod) and RayCluster (head and worker groups).

use kueuesim_model::{PodSet, ResourceList, Workload};

use super::JobKind;
use crate::convert::core::{Builder, err_obj, name_of, namespace_of};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

impl Builder<'_> {
    /// RayJobs: their cluster's pod sets, plus the submitter in K8sJobMode.
    pub(super) fn build_ray_jobs(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let ray_jobs = std::mem::take(&mut self.ray_jobs);
        for p in &ray_jobs {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            let Some(cluster) = &p.obj.spec.ray_cluster_spec else {
                return Err(err_obj(
                    src,
                    format!(
                        "RayJob {namespace}/{name} has no spec.rayClusterSpec: expected the cluster it runs on"
                    ),
                ));
            };
            let (mut pod_sets, mut templates) = self.ray_pod_sets(src, cluster)?;
            // K8sJobMode (the default) runs a submitter pod: its template, or Kueue's default
            // of 500m cpu and 200Mi memory.
            let mode = p
                .obj
                .spec
                .submission_mode
                .as_deref()
                .unwrap_or("K8sJobMode");
            if mode == "K8sJobMode" {
                match &p.obj.spec.submitter_pod_template {
                    Some(t) => {
                        pod_sets.push(self.pod_set(src, "submitter".into(), 1, None, t)?);
                        templates.push(t);
                    }
                    None => {
                        let mut ps = self.pod_set(
                            src,
                            "submitter".into(),
                            1,
                            None,
                            &cluster.head_group_spec.template,
                        )?;
                        let cpu = self.world.resources.intern("cpu");
                        let mem = self.world.resources.intern("memory");
                        ps.requests =
                            ResourceList::from_pairs(vec![(cpu, 500), (mem, 200 * 1024 * 1024)]);
                        pod_sets.push(ps);
                        templates.push(&cluster.head_group_spec.template);
                    }
                }
            }
            let kind = JobKind {
                kind: "RayJob",
                group: "ray.io",
                is_batch_job: false,
            };
            let mut w = self.job_workload(
                src, meta, kind, &name, &namespace, pod_sets, &templates, None,
            )?;
            Self::keep_suspended(&mut w, p.obj.spec.suspend);
            out.push((src.order, w));
        }
        Ok(())
    }

    /// RayClusters.
    pub(super) fn build_ray_clusters(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let ray_clusters = std::mem::take(&mut self.ray_clusters);
        for p in &ray_clusters {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            let (pod_sets, templates) = self.ray_pod_sets(src, &p.obj.spec)?;
            let kind = JobKind {
                kind: "RayCluster",
                group: "ray.io",
                is_batch_job: false,
            };
            let mut w = self.job_workload(
                src, meta, kind, &name, &namespace, pod_sets, &templates, None,
            )?;
            Self::keep_suspended(&mut w, p.obj.spec.suspend);
            out.push((src.order, w));
        }
        Ok(())
    }

    /// RayCluster pod sets: `head` (1) and one per worker group, `replicas × numOfHosts`.
    #[allow(clippy::type_complexity)]
    fn ray_pod_sets<'t>(
        &mut self,
        src: &ObjectText<'_>,
        c: &'t wire::RayClusterSpec,
    ) -> Result<(Vec<PodSet>, Vec<&'t wire::PodTemplateSpec>), ScenarioError> {
        let mut pod_sets =
            vec![self.pod_set(src, "head".into(), 1, None, &c.head_group_spec.template)?];
        let mut templates = vec![&c.head_group_spec.template];
        for g in &c.worker_group_specs {
            let Some(gname) = g.group_name.as_ref().filter(|n| !n.value.is_empty()) else {
                return Err(err_obj(
                    src,
                    "a workerGroupSpec has no groupName: expected one",
                ));
            };
            let replicas = Self::replicas(src, "replicas", g.replicas.as_ref())?;
            let hosts = match &g.num_of_hosts {
                Some(h) if h.value > 1 => h.value as u32,
                _ => 1,
            };
            pod_sets.push(self.pod_set(
                src,
                gname.value.to_lowercase(),
                replicas.saturating_mul(hosts),
                None,
                &g.template,
            )?);
            templates.push(&g.template);
        }
        Ok((pod_sets, templates))
    }
}
