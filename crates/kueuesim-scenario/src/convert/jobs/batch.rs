//! batch/v1 Job (one pod set `main`) and JobSet (one pod set per replicatedJob).

use kueuesim_model::Workload;
use kueuesim_model::limits::MAX_PODS_PER_WORKLOAD;

use super::JobKind;
use crate::convert::core::{Builder, err_at, err_obj, name_of, namespace_of};
use crate::error::ScenarioError;

impl Builder<'_> {
    /// batch/v1 Jobs.
    pub(super) fn build_batch_jobs(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let jobs = std::mem::take(&mut self.jobs);
        for p in &jobs {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let namespace = namespace_of(&p.obj.metadata);
            let meta = &p.obj.metadata;
            let spec = &p.obj.spec;
            self.remember(src, &namespace, &name)?;
            // batch/v1 Job: one pod set `main`, count = min(parallelism, completions).
            let parallelism = spec.parallelism.as_ref().map_or(1, |p| p.value);
            let completions = spec.completions.as_ref().map_or(parallelism, |c| c.value);
            let count = parallelism.min(completions);
            if !(1..=MAX_PODS_PER_WORKLOAD).contains(&count) {
                let at = spec.parallelism.as_ref().or(spec.completions.as_ref());
                let msg = format!(
                    "Job {namespace}/{name} runs {count} pods: expected min(parallelism, completions) from 1 to {MAX_PODS_PER_WORKLOAD}"
                );
                return Err(match at {
                    Some(s) => err_at(src, s, msg),
                    None => err_obj(src, msg),
                });
            }
            let min_count = match meta.annotations.get("kueue.x-k8s.io/job-min-parallelism") {
                None => None,
                Some(s) => Some(s.value.trim().parse::<u32>().ok().filter(|&m| m >= 1 && i64::from(m) <= count).ok_or_else(|| err_at(src, s, format!("invalid job-min-parallelism {:?}: expected an integer between 1 and the Job's parallelism", s.value)))?),
            };
            let template = &spec.template;
            let pod_set = self.pod_set(src, "main".into(), count as u32, min_count, template)?;
            let mut w = self.job_workload(
                src,
                meta,
                JobKind {
                    kind: "Job",
                    group: "batch",
                    is_batch_job: true,
                },
                &name,
                &namespace,
                vec![pod_set],
                &[template],
                None,
            )?;
            Self::keep_suspended(&mut w, spec.suspend);
            out.push((src.order, w));
        }
        Ok(())
    }

    /// JobSets: one pod set per replicatedJob, `replicas × min(parallelism, completions)` pods.
    pub(super) fn build_jobsets(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let jobsets = std::mem::take(&mut self.jobsets);
        for p in &jobsets {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            if p.obj.spec.replicated_jobs.is_empty() {
                return Err(err_obj(
                    src,
                    format!(
                        "JobSet {namespace}/{name} has no spec.replicatedJobs: expected at least one"
                    ),
                ));
            }
            let mut pod_sets = Vec::new();
            let mut templates = Vec::new();
            for rj in &p.obj.spec.replicated_jobs {
                let Some(rj_name) = rj.name.as_ref().filter(|n| !n.value.is_empty()) else {
                    return Err(err_obj(
                        src,
                        "a replicatedJob has no name: expected spec.replicatedJobs[].name",
                    ));
                };
                let replicas = Self::replicas(src, "replicas", rj.replicas.as_ref())?;
                let job = &rj.template.spec;
                let parallelism = Self::replicas(src, "parallelism", job.parallelism.as_ref())?;
                let completions = match &job.completions {
                    None => parallelism,
                    Some(_) => Self::replicas(src, "completions", job.completions.as_ref())?,
                };
                let count = replicas.saturating_mul(parallelism.min(completions));
                pod_sets.push(self.pod_set(
                    src,
                    rj_name.value.to_lowercase(),
                    count,
                    None,
                    &job.template,
                )?);
                templates.push(&job.template);
            }
            let kind = JobKind {
                kind: "JobSet",
                group: "jobset.x-k8s.io",
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
}
