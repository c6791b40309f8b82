//! Volcano `batch.volcano.sh` Jobs: one pod set per task (or per partition), gang rules from
//! the Job itself; not managed by Kueue.

use std::sync::Arc;

use kueuesim_model::{
    MinResources, NetworkTopology, QueueRef, SchedulerKind, TierRef, VolcanoSubGroup, Workload,
};

use super::JobKind;
use crate::convert::core::{Builder, count_in, err_at, err_obj, name_of, namespace_of, one_of};
use crate::error::ScenarioError;
use crate::wire;

impl Builder<'_> {
    /// Volcano Jobs.
    pub(super) fn build_volcano_jobs(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let volcano_jobs = std::mem::take(&mut self.volcano_jobs);
        for p in &volcano_jobs {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            let dup = (
                "batch.volcano.sh".to_string(),
                "VolcanoJob".to_string(),
                namespace.clone(),
                name.clone(),
            );
            if let Some(first) = self.seen.get(&dup) {
                return Err(err_obj(
                    src,
                    format!("duplicate Volcano Job {namespace}/{name}: first defined at {first}"),
                ));
            }
            self.seen.insert(dup, src.kind_pos.clone());
            let spec = &p.obj.spec;
            if spec.tasks.is_empty() {
                return Err(err_obj(
                    src,
                    format!(
                        "Volcano Job {namespace}/{name} has no spec.tasks: expected at least one task"
                    ),
                ));
            }
            // One pod set per task; a task with a partitionPolicy is split into its
            // partitions (`<task>-<i>`, partitionSize pods each), each a subgroup with the
            // policy's network topology.
            let mut pod_sets = Vec::new();
            let mut templates = Vec::new();
            // (pod set, network topology, policy, partitionSize) per partition.
            let mut partitions: Vec<(usize, Option<NetworkTopology>, usize, u32)> = Vec::new();
            // Per partitioned task (one PodGroup subGroupPolicy each): `minPartitions`.
            let mut min_partitions: Vec<u32> = Vec::new();
            let mut task_mins: Vec<(usize, u32)> = Vec::new();
            // The admission webhook's default job `minAvailable`: the sum of the tasks'
            // `minAvailable`, a task's own defaulting to minPartitions × partitionSize when
            // minPartitions is set, else to its replicas.
            let mut default_min: u64 = 0;
            // Per task, for its PodGroup's minResources: its pod sets, replicas, webhook-defaulted
            // minAvailable and PriorityClass value.
            let mut tasks: Vec<TaskCount> = Vec::new();
            let topology =
                |nt: &wire::VolcanoNetworkTopology| -> Result<NetworkTopology, ScenarioError> {
                    let hard = match &nt.mode {
                        None => true,
                        Some(m) => one_of(
                            src,
                            m,
                            "networkTopology mode",
                            &[("hard", true), ("soft", false)],
                        )?,
                    };
                    let highest_tier = match (&nt.highest_tier_allowed, &nt.highest_tier_name) {
                        (Some(_), Some(_)) => {
                            return Err(err_obj(
                                src,
                                "networkTopology has both highestTierAllowed and highestTierName: expected one of them",
                            ));
                        }
                        (Some(t), None) => {
                            Some(TierRef::Number(i32::try_from(t.value).unwrap_or(i32::MAX)))
                        }
                        (None, Some(n)) => Some(TierRef::Name(n.clone())),
                        (None, None) => None,
                    };
                    Ok(NetworkTopology { hard, highest_tier })
                };
            for t in &spec.tasks {
                let Some(tname) = t.name.as_ref().filter(|n| !n.value.is_empty()) else {
                    return Err(err_obj(
                        src,
                        "a task has no name: expected spec.tasks[].name",
                    ));
                };
                let replicas = Self::replicas(src, "replicas", t.replicas.as_ref())?;
                match &t.partition_policy {
                    Some(pp) => {
                        let total =
                            Self::replicas(src, "totalPartitions", pp.total_partitions.as_ref())?;
                        let size =
                            Self::replicas(src, "partitionSize", pp.partition_size.as_ref())?;
                        if total.saturating_mul(size) != replicas {
                            let at = pp.total_partitions.as_ref().or(pp.partition_size.as_ref());
                            let msg = format!(
                                "task {:?}: totalPartitions × partitionSize = {} but replicas = {replicas}: expected them equal",
                                tname.value,
                                u64::from(total) * u64::from(size)
                            );
                            return Err(match at {
                                Some(a) => err_at(src, a, msg),
                                None => err_obj(src, msg),
                            });
                        }
                        let nt = pp.network_topology.as_ref().map(topology).transpose()?;
                        let min_parts = match &pp.min_partitions {
                            None => 0,
                            Some(m) if (0..=i64::from(total)).contains(&m.value) => m.value as u32,
                            Some(m) => {
                                return Err(err_at(
                                    src,
                                    m,
                                    format!(
                                        "task {:?}: minPartitions {}: expected an integer from 0 to totalPartitions ({total})",
                                        tname.value, m.value
                                    ),
                                ));
                            }
                        };
                        // The job webhook's `validateTaskTemplate`: 0 to the task's replicas.
                        let task_min = match &t.min_available {
                            Some(m) => {
                                count_in(src, m, "task minAvailable", 0, i64::from(replicas))?
                                    as u64
                            }
                            None if min_parts > 0 => u64::from(min_parts) * u64::from(size),
                            None => u64::from(replicas),
                        };
                        default_min += task_min;
                        tasks.push(TaskCount {
                            pod_sets: pod_sets.len()..pod_sets.len() + total as usize,
                            replicas: u64::from(replicas),
                            min_available: task_min,
                            priority: self.task_priority(src, &t.template)?,
                        });
                        let policy = min_partitions.len();
                        min_partitions.push(min_parts);
                        for i in 0..total {
                            partitions.push((pod_sets.len(), nt.clone(), policy, size));
                            pod_sets.push(self.pod_set(
                                src,
                                format!("{}-{i}", tname.value),
                                size,
                                None,
                                &t.template,
                            )?);
                            templates.push(&t.template);
                        }
                    }
                    None => {
                        let task_min = match &t.min_available {
                            Some(m) => {
                                count_in(src, m, "task minAvailable", 0, i64::from(replicas))?
                                    as u64
                            }
                            None => u64::from(replicas),
                        };
                        default_min += task_min;
                        tasks.push(TaskCount {
                            pod_sets: pod_sets.len()..pod_sets.len() + 1,
                            replicas: u64::from(replicas),
                            min_available: task_min,
                            priority: self.task_priority(src, &t.template)?,
                        });
                        if let Some(m) = &t.min_available {
                            task_mins.push((
                                pod_sets.len(),
                                u32::try_from(m.value.max(0)).unwrap_or(u32::MAX),
                            ));
                        }
                        pod_sets.push(self.pod_set(
                            src,
                            tname.value.clone(),
                            replicas,
                            None,
                            &t.template,
                        )?);
                        templates.push(&t.template);
                    }
                }
            }
            let kind = JobKind {
                kind: "VolcanoJob",
                group: "batch.volcano.sh",
                is_batch_job: false,
            };
            let mut w = self.job_workload(
                src, meta, kind, &name, &namespace, pod_sets, &templates, None,
            )?;
            // Kueue does not manage Volcano Jobs: the Volcano job controller's PodGroup runs it.
            let scheduler = spec.scheduler_name.as_ref();
            w.scheduler_name = self.scheduler_name(src, scheduler)?;
            if scheduler.is_none() {
                w.scheduler_name = "volcano".into();
            }
            if self.world.config.scheduler(&w.scheduler_name) != Some(SchedulerKind::Volcano) {
                return Err(err_obj(
                    src,
                    format!(
                        "Volcano Job {namespace}/{name} runs on scheduler {:?}: expected a name mapped to volcano",
                        w.scheduler_name
                    ),
                ));
            }
            w.queue = QueueRef::Unmanaged;
            w.queue_name = None;
            w.kind = "VolcanoJob".into();
            w.name = name.clone();
            // An unset or 0 `minAvailable` is the webhook's default; the default of a job
            // whose tasks all need every pod stays None (every pod).
            let total_pods: u64 = w.pod_sets.iter().map(|p| u64::from(p.count)).sum();
            // The job webhook: 0 to the tasks' total replicas.
            if let Some(m) = spec.min_available.as_ref() {
                count_in(src, m, "minAvailable", 0, total_pods as i64)?;
            }
            Arc::make_mut(&mut w.gang).min_member = match spec.min_available.as_ref() {
                Some(m) if m.value > 0 => Some(u32::try_from(m.value).unwrap_or(u32::MAX)),
                _ if default_min == total_pods => None,
                _ => Some(u32::try_from(default_min).unwrap_or(u32::MAX)),
            };
            let job_min = match spec.min_available.as_ref() {
                Some(m) if m.value > 0 => m.value as u64,
                _ => default_min,
            };
            let per_task = min_resource_counts(&tasks, job_min, default_min);
            let mut counts = vec![0u32; w.pod_sets.len()];
            for (task, mut left) in tasks.iter().zip(per_task) {
                for ps in task.pod_sets.clone() {
                    let k = left.min(u64::from(w.pod_sets[ps].count));
                    counts[ps] = u32::try_from(k).unwrap_or(u32::MAX);
                    left -= k;
                }
            }
            Arc::make_mut(&mut w.gang).volcano_min_resources = MinResources::Counted(counts);
            Arc::make_mut(&mut w.gang).min_task_member = task_mins;
            Arc::make_mut(&mut w.gang).network_topology =
                spec.network_topology.as_ref().map(topology).transpose()?;
            Arc::make_mut(&mut w.gang).volcano_subgroups = partitions
                .into_iter()
                .map(|(ps, nt, policy, size)| VolcanoSubGroup {
                    name: w.pod_sets[ps].name.clone(),
                    pod_sets: vec![ps],
                    network_topology: nt,
                    policy,
                    min_available: size,
                })
                .collect();
            Arc::make_mut(&mut w.gang).volcano_min_sub_groups = min_partitions;
            // The job's `spec.queue` (default `default`) is its PodGroup's queue.
            if let Some(q) = &spec.queue {
                let queue = self.volcano_queue_named(src, Some(q), &q.value)?;
                Arc::make_mut(&mut w.gang).volcano_queue = Some(queue);
            }
            out.push((src.order, w));
        }
        Ok(())
    }

    /// A task's priority for Volcano's job controller (`calcPGMinResources`): its template's
    /// PriorityClass value; 0 without one (the controller does not read the global default).
    fn task_priority(
        &self,
        src: &crate::source::ObjectText<'_>,
        template: &wire::PodTemplateSpec,
    ) -> Result<i32, ScenarioError> {
        let Some(pc) = template.spec.priority_class_name.as_ref() else {
            return Ok(0);
        };
        match self.pod_pc(&pc.value) {
            Some(p) => Ok(p.value),
            None => Err(err_at(
                src,
                pc,
                format!(
                    "priorityClassName {:?} names no PriorityClass: expected a scheduling.k8s.io PriorityClass defined in the input (the API server rejects such pods)",
                    pc.value
                ),
            )),
        }
    }
}

/// A Volcano Job task as its job controller counts it for the PodGroup's minResources.
struct TaskCount {
    /// Its pod sets (one, or one per partition), in order.
    pod_sets: std::ops::Range<usize>,
    replicas: u64,
    /// `minAvailable`, as the admission webhook defaults it.
    min_available: u64,
    /// Its template's PriorityClass value.
    priority: i32,
}

/// Per task, how many of its pods Volcano's job controller counts in the PodGroup's
/// minResources (`calcPGMinResources`), tasks taken by PriorityClass value, highest first:
/// - job minAvailable below the tasks' minAvailable sum (`CalcFirstCountResources`): the
///   first `job_min` pods, each task's replicas in turn;
/// - otherwise (`CalcPGMinResources`): each task's minAvailable, then the rest up to
///   `job_min` from the tasks' other replicas.
fn min_resource_counts(tasks: &[TaskCount], job_min: u64, min_sum: u64) -> Vec<u64> {
    // Upstream sorts with sort.Sort, which keeps the order of equal tasks at these sizes
    // (insertion sort below 12 elements); a stable sort keeps it at every size.
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(tasks[i].priority));
    let mut counts = vec![0u64; tasks.len()];
    if job_min < min_sum {
        let mut left = job_min;
        for &i in &order {
            let k = left.min(tasks[i].replicas);
            counts[i] = k;
            left -= k;
            if left == 0 {
                break;
            }
        }
        return counts;
    }
    let mut placed = 0;
    for &i in &order {
        let k = tasks[i].min_available.min(job_min - placed);
        counts[i] = k;
        placed += k;
        if placed >= job_min {
            return counts;
        }
    }
    let mut left = job_min - placed;
    for &i in &order {
        let k = left.min(tasks[i].replicas.saturating_sub(tasks[i].min_available));
        counts[i] += k;
        left -= k;
        if left == 0 {
            break;
        }
    }
    counts
}
