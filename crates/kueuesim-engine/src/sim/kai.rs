//! KAI: placing a job's PodGroups, topology constraints, and the reclaim action for jobs Kueue
//! does not manage.

use std::cmp::Reverse;

use kueuesim_model::{NodeId, QueueRef, SchedulerKind, WorkloadId, World};

use crate::outcome::{EventType, Eviction, WorkloadState};
use crate::placement::{self, PodNeeds};

use super::{Ev, Simulation};

impl<'w> Simulation<'w> {
    /// KAI's reclaim action for a pending job of a KAI Queue (jobs Kueue does not manage;
    /// Kueue-managed ones are Kueue's to preempt): evict running jobs of queues above their
    /// fair share so the job fits, as `kai::reclaim_victims` picks them.
    pub(super) fn kai_reclaim(&mut self, w: WorkloadId) {
        let world = self.world;
        let wl = self.spec(w);
        let (Some(queue), Some(g), QueueRef::Unmanaged) = (wl.gang.kai_queue, self.gpu, &wl.queue)
        else {
            return;
        };
        if self.runtimes[w.index()].kai_pipelined > 0 {
            return;
        }
        let nq = world.kai_queues.len();
        let mut allocated = vec![0i64; nq];
        let mut pending = vec![0i64; nq];
        let mut running = Vec::new();
        let waiting: Vec<WorkloadId> = self
            .sched
            .awaiting_placement
            .iter()
            .map(|&(_, _, x)| x)
            .collect();
        for (i, rt) in self.runtimes.iter() {
            let x = self.spec(WorkloadId::from_index(i));
            let Some(xq) = x.gang.kai_queue else { continue };
            if rt.needs.is_empty()
                || self.scheduler_of(WorkloadId::from_index(i)) != SchedulerKind::Kai
            {
                continue;
            }
            let (mut placed, mut unplaced) = (0, 0);
            for (ps, slots) in rt.record.placement.iter().enumerate() {
                let per = rt.needs.get(ps).map_or(0, |n| n.requests.get(g));
                for s in slots {
                    match s {
                        Some(_) => placed += per,
                        None => unplaced += per,
                    }
                }
            }
            // Pods of an evicted job are releasing: no longer its queue's. A pipelined job's
            // GPUs are already its queue's.
            if rt.record.state != WorkloadState::Evicted {
                allocated[xq] += placed;
            }
            allocated[xq] += rt.kai_pipelined;
            if waiting.contains(&WorkloadId::from_index(i)) {
                pending[xq] += (unplaced - rt.kai_pipelined).max(0);
            }
            if placed > 0
                && rt.record.state != WorkloadState::Evicted
                && x.queue == QueueRef::Unmanaged
            {
                running.push(placement::kai::RunningJob {
                    key: i,
                    queue: xq,
                    gpus: placed,
                    priority: x.priority,
                    created: x.created_at.millis(),
                });
            }
        }
        let total: i64 = world
            .nodes
            .iter()
            .map(|n| n.allocatable.get(g.index()).copied().unwrap_or(0))
            .sum();
        let requests: Vec<i64> = allocated.iter().zip(&pending).map(|(a, p)| a + p).collect();
        let fair = placement::kai::fair_shares(&world.kai_queues, total, &requests);
        let rt = &self.runtimes[w.index()];
        let pods = rt.pods();
        let want: i64 = if wl.gang.pod_group_per_pod {
            placement::first_pending(&pods).map_or(0, |(ps, _)| pods[ps].0.requests.get(g))
        } else {
            pods.iter()
                .map(|(n, s)| n.requests.get(g) * s.iter().filter(|x| x.is_none()).count() as i64)
                .sum()
        };
        let total_pods: usize = pods.iter().map(|(_, s)| s.len()).sum();
        let victims = placement::kai::reclaim_victims(
            &world.kai_queues,
            &fair,
            &allocated,
            queue,
            want,
            &running,
            |victims| {
                let mut scratch = self.sched.cluster.clone();
                for &v in victims {
                    let vr = &self.runtimes[v];
                    for (ps, slots) in vr.record.placement.iter().enumerate() {
                        for n in slots.iter().flatten() {
                            scratch.apply(world, *n, &vr.needs[ps].requests, -1);
                        }
                    }
                }
                let saved = std::mem::replace(&mut self.sched.cluster, scratch);
                let r = self.place_kai(w, &pods, total_pods);
                self.sched.cluster = saved;
                !r.bound.is_empty()
            },
        );
        let Some(victims) = victims else { return };
        self.runtimes[w.index()].kai_pipelined = want;
        let by = format!("{}/{}", wl.namespace, wl.name);
        self.runtimes[w.index()].record.preemptions_caused += victims.len() as u32;
        for v in victims {
            self.kai_evict(
                WorkloadId::from_index(v),
                &by,
                &world.kai_queues[queue].name,
            );
        }
    }

    /// KAI evicts a job for reclaim: its pods terminate (`podTermination`), then its
    /// controller's new pods wait for KAI again.
    fn kai_evict(&mut self, v: WorkloadId, by: &str, queue: &str) {
        let now = self.now;
        if self.runtimes[v.index()].record.state == WorkloadState::Running {
            self.progress.running -= 1;
            self.serving_ready(v, false);
            let gpus = self.workload_gpus(v);
            let rt = &mut self.runtimes[v.index()];
            let lost =
                i128::from(gpus) * i128::from((now - rt.record.running_at.unwrap_or(now)).millis());
            rt.record.lost_gpu_ms += lost;
            self.rec.stats.lost_gpu_ms += lost;
        }
        self.sched.awaiting_placement.retain(|&(_, _, x)| x != v);
        let generation = {
            let rt = &mut self.runtimes[v.index()];
            rt.record.state = WorkloadState::Evicted;
            rt.record.evictions.push(Eviction {
                at: now,
                reason: "Reclaim",
                preemption_reason: None,
                preemptor: Some(by.to_string()),
                preemptor_cluster_queue: None,
            });
            rt.generation += 1;
            rt.generation
        };
        *self.rec.stats.evictions.entry("Reclaim").or_default() += 1;
        self.record_event(
            v,
            EventType::Normal,
            SchedulerKind::Kai.event_source(),
            "Evict",
            format!("Evicted to reclaim resources for {by} of queue {queue}, which is below its fair share"),
            None,
        );
        self.events.push(
            now + self.world.config.pod_termination,
            Ev::KaiPodsGone(v, generation),
        );
    }

    /// The reclaimed pods are gone: nodes released (the reclaimer, waiting, is placed), and
    /// the job's new pods wait for KAI.
    pub(super) fn kai_pods_gone(&mut self, v: WorkloadId) {
        self.release(v, false);
        {
            let rt = &mut self.runtimes[v.index()];
            rt.record.state = WorkloadState::Pending;
            rt.record.running_at = None;
        }
        let prio = self.spec(v).priority;
        self.sched
            .awaiting_placement
            .insert((Reverse(prio), self.now, v));
        self.try_place(v);
    }

    /// KAI: one PodGroup for the workload, or (a batch Job: KAI's job grouper) one PodGroup
    /// per pod, each placed on its own.
    pub(super) fn place_kai(
        &mut self,
        w: WorkloadId,
        pods: &[(PodNeeds, Vec<Option<NodeId>>)],
        total: usize,
    ) -> placement::Placement {
        let world = self.world;
        let wl = self.spec(w);
        let pod_name = |ps: usize, idx: usize| format!("{}/{}", wl.namespace, wl.pod_name(ps, idx));
        let constraint = match kai_constraint(world, &wl) {
            Ok(c) => c,
            Err(message) => {
                let (ps, idx) = placement::first_pending(pods).unwrap_or((0, 0));
                return placement::Placement {
                    unplaced: Some((ps, idx, message)),
                    ..Default::default()
                };
            }
        };
        // KAI GPU sharing: with device bookkeeping, a job with shares goes through the
        // sharing allocation (no topology constraint or subgroup applied).
        let shares: Vec<_> = wl.pod_sets.iter().map(|ps| ps.gpu_share).collect();
        if self.sched.cluster.devices.is_some() && shares.iter().any(Option::is_some) {
            return self.place_kai_shared(w, pods, total, &shares);
        }
        if !wl.gang.kai_subgroups.is_empty() {
            let mut constraints = Vec::new();
            for g in &wl.gang.kai_subgroups {
                match g
                    .constraint
                    .as_ref()
                    .map(|c| resolve_kai(world, c, &format!("sub-group {}", g.name)))
                {
                    None => constraints.push(None),
                    Some(Ok(c)) => constraints.push(c),
                    Some(Err(message)) => {
                        let (ps, idx) = placement::first_pending(pods).unwrap_or((0, 0));
                        return placement::Placement {
                            unplaced: Some((ps, idx, message)),
                            ..Default::default()
                        };
                    }
                }
            }
            let tree = placement::kai::KaiTree {
                subgroups: &wl.gang.kai_subgroups,
                constraints,
                pod_set_subgroup: &wl.gang.pod_set_subgroup,
            };
            let job_name = kai_job_name(&wl);
            let job = placement::kai::KaiJob {
                pods,
                min_member: wl
                    .gang
                    .min_member
                    .map_or(total, |m| (m as usize).min(total)),
                constraint,
                job_name: &job_name,
                pod_name: &pod_name,
            };
            return placement::kai::place_tree(world, &mut self.sched.cluster, &job, &tree);
        }
        if !wl.gang.pod_group_per_pod {
            let job_name = kai_job_name(&wl);
            let min_member = wl
                .gang
                .min_member
                .map_or(total, |m| (m as usize).min(total));
            let job = placement::kai::KaiJob {
                pods,
                min_member,
                constraint,
                job_name: &job_name,
                pod_name: &pod_name,
            };
            return placement::kai::place(world, &mut self.sched.cluster, &job);
        }
        each_pod_alone(&wl, pods, &pod_name, |job, _| {
            let job = placement::kai::KaiJob { constraint, ..job };
            placement::kai::place(world, &mut self.sched.cluster, &job)
        })
    }
}

impl Simulation<'_> {
    /// KAI's allocation of a job with GPU shares: one job of `minMember`, or with a PodGroup
    /// per pod (bare pods, batch/v1 Jobs) each pod alone.
    fn place_kai_shared(
        &mut self,
        w: WorkloadId,
        pods: &[(PodNeeds, Vec<Option<NodeId>>)],
        total: usize,
        shares: &[Option<kueuesim_model::gpu::GpuShare>],
    ) -> placement::Placement {
        let world = self.world;
        let wl = self.spec(w);
        let pod_name = |ps: usize, idx: usize| format!("{}/{}", wl.namespace, wl.pod_name(ps, idx));
        let job_name = kai_job_name(&wl);
        if !wl.gang.pod_group_per_pod {
            let job = placement::kai::KaiJob {
                pods,
                min_member: wl
                    .gang
                    .min_member
                    .map_or(total, |m| (m as usize).min(total)),
                constraint: None,
                job_name: &job_name,
                pod_name: &pod_name,
            };
            return placement::kai::sharing::place(world, &mut self.sched.cluster, &job, shares);
        }
        each_pod_alone(&wl, pods, &pod_name, |job, ps| {
            let share = [shares[ps]];
            placement::kai::sharing::place(world, &mut self.sched.cluster, &job, &share)
        })
    }
}

/// KAI's job grouper for bare pods and batch/v1 Jobs: a PodGroup per pod. Each pending pod is
/// placed alone by `place` (given its PodGroup of minMember 1, named `pg-<pod>`, and its pod
/// set), and the results are merged into the workload's placement.
fn each_pod_alone(
    wl: &kueuesim_model::Workload,
    pods: &[(PodNeeds, Vec<Option<NodeId>>)],
    pod_name: &dyn Fn(usize, usize) -> String,
    mut place: impl FnMut(placement::kai::KaiJob<'_>, usize) -> placement::Placement,
) -> placement::Placement {
    let mut out = placement::Placement::default();
    for (ps, (_, slots)) in pods.iter().enumerate() {
        for (idx, slot) in slots.iter().enumerate() {
            if slot.is_some() {
                continue;
            }
            let single = [(pods[ps].0.clone(), vec![None])];
            let job_name = format!(
                "{}/pg-{}",
                wl.namespace,
                pod_name(ps, idx).rsplit('/').next().unwrap_or_default()
            );
            let this_pod = |_: usize, _: usize| pod_name(ps, idx);
            let r = place(
                placement::kai::KaiJob {
                    pods: &single,
                    min_member: 1,
                    constraint: None,
                    job_name: &job_name,
                    pod_name: &this_pod,
                },
                ps,
            );
            out.bound
                .extend(r.bound.iter().map(|&(_, _, n)| (ps, idx, n)));
            out.claims
                .extend(r.claims.iter().map(|&(_, _, c)| (ps, idx, c)));
            if r.domain.is_some() {
                out.domain = r.domain;
            }
            if out.unplaced.is_none() {
                out.unplaced = r.unplaced.map(|(_, _, m)| (ps, idx, m));
            }
        }
    }
    out
}

/// The workload's KAI topology constraint resolved against its Topology: its own
/// (`kai.scheduler/topology*` annotations or its PodGroup) or the platform default
/// (`spec.kai`). Errors are the scheduler's messages for a constraint it cannot use.
fn kai_constraint(
    world: &World,
    wl: &kueuesim_model::Workload,
) -> Result<Option<placement::kai::KaiConstraint>, String> {
    match (&wl.gang.kai_topology, &world.config.kai) {
        (Some(c), _) => resolve_kai(world, c, "workload"),
        (None, kai) => match (&kai.default_topology, &kai.default_preferred_level) {
            (Some(t), Some(level)) => resolve_kai(
                world,
                &kueuesim_model::KaiTopologyConstraint {
                    topology: t.clone(),
                    required: None,
                    preferred: Some(level.clone()),
                },
                "workload",
            ),
            _ => Ok(None),
        },
    }
}

/// One KAI `topologyConstraint` resolved to level depths of its Topology; `who` is
/// `workload` or `sub-group <name>` in KAI's messages.
fn resolve_kai(
    world: &World,
    c: &kueuesim_model::KaiTopologyConstraint,
    who: &str,
) -> Result<Option<placement::kai::KaiConstraint>, String> {
    let topology = &c.topology;
    if c.required.is_none() && c.preferred.is_none() {
        return Ok(None);
    }
    let Ok(index) = world
        .topologies
        .binary_search_by(|t| t.name.as_str().cmp(topology))
    else {
        return Err(format!("Requested topology {topology} does not exist"));
    };
    let t = &world.topologies[index];
    let not_found = |which: &str, label: &str| {
        format!(
            "Unable to schedule podgroup: topology constraint error: {who} specified '{label}' as the {which} topology constraint level, but the topology tree '{topology}' does not contain a level with this name."
        )
    };
    let depth = |which: &str, label: &Option<String>| -> Result<Option<u32>, String> {
        let Some(label) = label else { return Ok(None) };
        match t.tier_of_level(label) {
            Some(tier) => Ok(Some((t.root_tier() - tier) as u32)),
            None => Err(not_found(which, label)),
        }
    };
    let required = depth("required", &c.required)?;
    let preferred = depth("preferred", &c.preferred)?;
    if let (Some(r), Some(p)) = (required, preferred)
        && p < r
    {
        return Err(not_found(
            "preferred",
            c.preferred.as_deref().unwrap_or_default(),
        ));
    }
    Ok(Some(placement::kai::KaiConstraint {
        topology: index,
        required,
        preferred,
    }))
}

/// The PodGroup KAI's messages name (`<namespace/name>`): the input's PodGroup, else the one
/// KAI's pod grouper would create for the workload (`pg-<name>`).
fn kai_job_name(wl: &kueuesim_model::Workload) -> String {
    match &wl.gang.pod_group {
        Some(pg) => format!("{}/{pg}", wl.namespace),
        None => format!("{}/pg-{}", wl.namespace, wl.name),
    }
}
