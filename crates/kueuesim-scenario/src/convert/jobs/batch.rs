//! batch/v1 Job (one pod set `main`) and JobSet (one pod set per replicatedJob).

use kueuesim_model::limits::MAX_PODS_PER_WORKLOAD;
use kueuesim_model::{OnPodLoss, Workload};

use super::JobKind;
use crate::convert::core::{Builder, count_in, err_at, err_obj, name_of, namespace_of};
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
            // The Job controller replaces a lost pod and counts it against `backoffLimit`
            // (a pod deleted before it succeeded counts as failed).
            w.resilience.on_pod_loss = OnPodLoss::Replace {
                backoff_limit: Some(backoff_limit(src, spec.backoff_limit.as_ref())?),
                never_restarted: 0,
            };
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
            // A child Job fails past its `backoffLimit`; the JobSet then recreates all its
            // Jobs, at most `failurePolicy.maxRestarts` times (the tightest child limit
            // stands for all of them).
            let mut limit = u32::MAX;
            for rj in &p.obj.spec.replicated_jobs {
                limit = limit.min(backoff_limit(src, rj.template.spec.backoff_limit.as_ref())?);
            }
            let max_restarts = match p
                .obj
                .spec
                .failure_policy
                .as_ref()
                .and_then(|f| f.max_restarts.as_ref())
            {
                None => 0,
                Some(m) => {
                    count_in(src, m, "failurePolicy.maxRestarts", 0, i64::from(i32::MAX))? as u32
                }
            };
            w.resilience.on_pod_loss = OnPodLoss::RestartAll {
                backoff_limit: limit,
                max_restarts,
            };
            out.push((src.order, w));
        }
        Ok(())
    }
}

/// A Job's `backoffLimit` (default 6, as the Job API defaults it).
fn backoff_limit(
    src: &crate::source::ObjectText<'_>,
    v: Option<&serde_saphyr::Spanned<i64>>,
) -> Result<u32, ScenarioError> {
    match v {
        None => Ok(6),
        Some(b) => Ok(count_in(src, b, "backoffLimit", 0, i64::from(i32::MAX))? as u32),
    }
}
