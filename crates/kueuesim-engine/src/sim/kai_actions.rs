//! KAI's reclaim and preempt actions for jobs Kueue does not manage (run over the pending
//! jobs by the session, `kai_session.rs`, after consolidation, `kai_consolidation.rs`): the
//! session's view of the queues and running jobs, the choice of victims (their eviction is
//! `kai_evict.rs`), and the retry when a min-runtime protection ends.

use std::cmp::Reverse;

use kueuesim_model::gpu::{GpuShare, MILLI};
use kueuesim_model::{NodeId, QueueRef, ResourceId, SchedulerKind, SimTime, WorkloadId};

use crate::outcome::WorkloadState;
use crate::placement::{self, Cluster, PodNeeds};

use super::kai::{gang_groups, kai_job_name};
use super::runtime::KaiVictim;
use super::{Ev, Simulation};

impl<'w> Simulation<'w> {
    /// After reclaim and preempt found nothing for `w`: when a min-runtime kept a victim
    /// from it, `w` tries again the instant the first such protection ends (upstream runs
    /// its actions every session, so a job waits no longer than that).
    pub(super) fn kai_retry_when_protection_ends(&mut self, w: WorkloadId, view: &KaiView) {
        let state = view.queue_state(self.now);
        let priority = self.spec(w).priority;
        let Some(ends) =
            placement::kai::protection_ends(&state, view.queue, priority, &view.running)
        else {
            return;
        };
        let at = kueuesim_model::SimTime::from_millis(ends);
        let rt = &mut self.runtimes[w.index()];
        if rt.kai_retry_at.is_some_and(|t| t <= at && t > self.now) {
            return;
        }
        rt.kai_retry_at = Some(at);
        self.events.push(at, Ev::KaiProtectionEnds(w));
    }

    /// `Ev::KaiProtectionEnds`: `w`, still waiting for KAI, tries again in the session of
    /// this instant (allocate, then the actions). Whether anything was done.
    pub(super) fn kai_protection_ends(&mut self, w: WorkloadId) -> bool {
        let rt = &mut self.runtimes[w.index()];
        if rt.kai_retry_at != Some(self.now) {
            return false;
        }
        rt.kai_retry_at = None;
        if rt.kai_is_pipelined()
            || !self
                .sched
                .awaiting_placement
                .iter()
                .any(|&(_, _, x)| x == w)
        {
            return false;
        }
        self.kai_session_for(w);
        true
    }

    /// What KAI's eviction actions read for pending job `w` (the session's view): None
    /// when no action applies (no KAI Queue, a Kueue-managed job, or one already pipelined
    /// onto its victims' resources).
    pub(super) fn kai_view(&self, w: WorkloadId) -> Option<KaiView> {
        let world = self.world;
        let wl = self.spec(w);
        let (Some(queue), QueueRef::Unmanaged) = (wl.gang.kai_queue, &wl.queue) else {
            return None;
        };
        if self.runtimes[w.index()].kai_is_pipelined() {
            return None;
        }
        // GPUs count in milli-GPUs (none without the resource); CPU and memory as the
        // proportion plugin divides them too (`kai_cpu_memory`).
        let gpu = self.gpu;
        let gpus_of = |n: &PodNeeds| gpu.map_or(0, |g| n.requests.get(g));
        let mut cpu_memory = CpuMemoryBooks::new(world.kai_queues.len());
        let mut non_preemptible = 0i64;
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
            let (mut placed, unplaced) = gpu.map_or((0, 0), |g| self.kai_milli(i, g));
            let (mut placed_other, unplaced_other) = self.kai_cpu_memory(i);
            // Pods reclaim or preempt evicted are releasing: no longer its queue's.
            for &(ps, _) in &rt.kai_releasing {
                placed -= rt.needs.get(ps).map_or(0, gpus_of) * MILLI;
                let other = rt.needs.get(ps).map_or([0, 0], |n| self.cpu_memory_of(n));
                placed_other = [placed_other[0] - other[0], placed_other[1] - other[1]];
            }
            // Pods of an evicted job are releasing: no longer its queue's (nor those of a
            // finished one, whose placement is kept for the report). A pipelined job's GPUs
            // are already its queue's.
            // A job whose release is under way (it finished this instant: its placement is
            // kept for the report) holds nothing either.
            let gone = rt.released
                || matches!(
                    rt.record.state,
                    WorkloadState::Evicted | WorkloadState::Finished | WorkloadState::Inactive
                );
            if gone {
                placed = 0;
                placed_other = [0, 0];
            }
            allocated[xq] += placed;
            if xq == queue && !x.kai_preemptible() {
                non_preemptible += placed + rt.kai_pipelined;
            }
            allocated[xq] += rt.kai_pipelined;
            let is_waiting = waiting.contains(&WorkloadId::from_index(i));
            if is_waiting {
                pending[xq] += (unplaced - rt.kai_pipelined).max(0);
            }
            cpu_memory.add(
                xq,
                placed_other,
                rt.kai_pipelined_cpu_memory,
                is_waiting.then_some(unplaced_other),
                xq == queue && !x.kai_preemptible(),
            );
            // A job whose pods KAI's consolidation is moving, or whose pods reclaim or
            // preempt evicted, is nobody's victim while they terminate.
            if (placed > 0 || placed_other.iter().any(|&v| v > 0))
                && x.queue == QueueRef::Unmanaged
                && rt.kai_moves.is_empty()
                && rt.kai_releasing.is_empty()
            {
                let mut nodes: Vec<usize> = rt
                    .record
                    .placement
                    .iter()
                    .flat_map(|slots| slots.iter().flatten().map(|n| n.index()))
                    .collect();
                nodes.sort_unstable();
                nodes.dedup();
                let (pods, pieces, min_pods) =
                    victim_pieces(&x, &rt.record.placement, &rt.needs, gpu);
                // Its pods' CPU and memory, in the same (eviction) order.
                let pods_other: Vec<placement::kai::CpuMemory> = pods
                    .iter()
                    .map(|p| {
                        rt.needs
                            .get(p.pod_set)
                            .map_or([0, 0], |n| self.cpu_memory_of(n))
                    })
                    .collect();
                cpu_memory.pods.push((i, pods_other));
                let job = placement::kai::RunningJob {
                    key: i,
                    queue: xq,
                    gpus: placed,
                    priority: x.priority,
                    preemptible: x.kai_preemptible(),
                    elastic: elastic_rank(&x, &rt.record.placement),
                    created: x.created_at.millis(),
                    nodes,
                    started: rt.kai_last_start.map(|t| t.millis()),
                    pods,
                    pieces,
                    min_pods,
                };
                // A job with GPU shares is taken whole: its shares are counted per device,
                // not per pod.
                let shares = rt.claims.iter().any(|(_, c)| c.reserve);
                running.push(if shares { job.whole() } else { job });
            }
        }
        let total_of = |r: Option<usize>| -> i64 {
            r.map_or(0, |r| {
                world
                    .nodes
                    .iter()
                    .map(|n| n.allocatable.get(r).copied().unwrap_or(0))
                    .sum()
            })
        };
        let total = total_of(gpu.map(|g| g.index())) * MILLI;
        let requests: Vec<i64> = allocated.iter().zip(&pending).map(|(a, p)| a + p).collect();
        // The queues' quotas and limits are in milli-GPUs (as loaded), as every figure here.
        let queues: Vec<kueuesim_model::KaiQueue> = world.kai_queues.clone();
        let fair = placement::kai::fair_shares(&queues, total, &requests, MILLI);
        let res = self.sched.cluster.res;
        let mut cpu_memory =
            cpu_memory.into_state(&world.kai_queues, [total_of(res.cpu), total_of(res.memory)]);
        let pods = self.runtimes[w.index()].pods();
        let (bound, _) = placement::counts(&pods);
        // A task's GPUs: its whole GPUs, or its share (`pending_share_milli`: a
        // `gpu-memory` share against the smallest GPU memory of the GPU nodes); its CPU
        // and memory for the same tasks.
        let task_gpus = self.kai_task_gpus(&wl, &pods, gpu);
        cpu_memory.tasks = self.kai_task_cpu_memory(&wl, &pods);
        // Free GPUs: whole GPUs free, and what is free on the devices KAI's shares hold
        // (upstream's idle GPUs count a shared GPU group's free part).
        let cluster = &self.sched.cluster;
        let free_gpus: i64 = world
            .nodes
            .iter()
            .enumerate()
            .map(|(i, _)| {
                let node = NodeId::from_index(i);
                let shared: i64 = cluster.devices.as_ref().map_or(0, |d| {
                    (0..d.book.count(node))
                        .filter(|&k| d.book.is_shared(node, k))
                        .map(|k| i64::from(d.book.free(node)[k]))
                        .sum()
                });
                gpu.map_or(0, |g| cluster.nodes.free(node, g.index())) * MILLI + shared
            })
            .sum();
        // Victims are put back in the job order: higher priority, then older, first.
        let mut put_back_order: Vec<&placement::kai::RunningJob> = running.iter().collect();
        put_back_order.sort_by_key(|j| (Reverse(j.priority), j.elastic, j.created, j.key));
        let put_back_order: Vec<usize> = put_back_order.iter().map(|j| j.key).collect();
        Some(KaiView {
            queue,
            queues,
            running,
            allocated,
            fair,
            total,
            non_preemptible,
            pods,
            bound,
            task_gpus,
            free_gpus,
            put_back_order,
            cpu_memory,
        })
    }

    /// One eviction action for `w`; whether it evicted.
    pub(super) fn kai_evict_for(
        &mut self,
        w: WorkloadId,
        view: &KaiView,
        action: KaiAction,
    ) -> bool {
        let world = self.world;
        let wl = self.spec(w);
        let state = view.queue_state(self.now);
        let KaiView {
            queue,
            ref running,
            non_preemptible,
            ref pods,
            bound,
            ref task_gpus,
            free_gpus,
            ref put_back_order,
            ..
        } = *view;
        let want: i64 = task_gpus.iter().sum();
        let reclaimer = placement::kai::Reclaimer {
            queue,
            task_gpus,
            preemptible: wl.kai_preemptible(),
        };
        let job = |k: usize| running.iter().find(|j| j.key == k);
        let scenario =
            |tasks: usize, victims: &[(usize, usize)]| -> Option<placement::kai::Victims> {
                let scratch = self.cluster_without_victims(running, victims);
                let partial = partial_job(pods, tasks);
                let saved = std::mem::replace(&mut self.sched.cluster, scratch);
                // The victims' evicted pods are off their queues in the scenario (the statement
                // evicts them and the proportion plugin's deallocate handler takes them off), so
                // a limit the victims' queues share does not count them.
                self.kai_scenario_victims(running, victims);
                let r = self.place_kai(w, &partial, bound + tasks);
                let mut scratch = std::mem::replace(&mut self.sched.cluster, saved);
                if r.bound.len() < tasks {
                    self.sched.kai_scenario_gpus.clear();
                    self.sched.kai_scenario_cpu_memory.clear();
                    return None;
                }
                // The job's tasks hold their queue's share while the victims go back (a victim
                // goes back only within its queue's limits: upstream allocates it again, under
                // the capacity policy).
                let [cpu, memory] = view.cpu_memory.tasks_amount(tasks);
                let placed = [task_gpus[..tasks].iter().sum(), cpu, memory];
                self.kai_scenario_hold(w.index(), placed);
                // Victims that fit back on their own nodes stay (upstream unevicts a victim
                // it pipelines back to its node), piece by piece from the last taken (the
                // pods kept longest); the rest are the victims.
                let mut left_out = Vec::new();
                for &k in put_back_order {
                    let Some(&(_, count)) = victims.iter().find(|v| v.0 == k) else {
                        continue;
                    };
                    let Some(j) = job(k) else { continue };
                    if j.all(count) {
                        let (cpu_memory, _) = self.kai_cpu_memory(k);
                        let whole = [j.gpus, cpu_memory[0], cpu_memory[1]];
                        if !self.kai_limits_allow(k, whole)
                            || !put_back(world, &mut scratch, &self.runtimes[k])
                        {
                            left_out.push((k, count));
                        } else {
                            self.kai_scenario_hold(k, whole);
                        }
                        continue;
                    }
                    // Its pods' needs (cloned: the scenario's books change as pieces go back).
                    let needs = self.runtimes[k].needs.clone();
                    let mut kept = count;
                    for piece in j.pieces.iter().rev() {
                        if piece.upto > kept {
                            continue;
                        }
                        let from = j
                            .pieces
                            .iter()
                            .map(|p| p.upto)
                            .filter(|&u| u < piece.upto)
                            .max()
                            .unwrap_or(0);
                        let piece_pods = &j.pods[from..piece.upto];
                        let mut amounts = [piece_pods.iter().map(|p| p.gpus).sum::<i64>(), 0, 0];
                        for p in piece_pods {
                            let [cpu, memory] = self.cpu_memory_of(&needs[p.pod_set]);
                            amounts[1] += cpu;
                            amounts[2] += memory;
                        }
                        if !self.kai_limits_allow(k, amounts) {
                            break;
                        }
                        let mut applied = Vec::new();
                        for p in piece_pods {
                            let (n, req) = (NodeId::from_index(p.node), &needs[p.pod_set].requests);
                            if !scratch.nodes.fits(n, req) {
                                break;
                            }
                            scratch.apply(world, n, req, 1);
                            applied.push(n);
                        }
                        if applied.len() < piece.upto - from {
                            for (n, p) in applied.into_iter().zip(&j.pods[from..]) {
                                scratch.apply(world, n, &needs[p.pod_set].requests, -1);
                            }
                            break;
                        }
                        self.kai_scenario_hold(k, amounts);
                        kept = from;
                    }
                    if kept > 0 {
                        left_out.push((k, kept));
                    }
                }
                self.sched.kai_scenario_gpus.clear();
                self.sched.kai_scenario_cpu_memory.clear();
                Some(left_out)
            };
        let other = &view.cpu_memory;
        let victims = match action {
            KaiAction::Reclaim => placement::kai::reclaim_victims(
                &state, other, &reclaimer, running, free_gpus, scenario,
            ),
            KaiAction::Preempt => placement::kai::preempt_victims(
                &state,
                other,
                &reclaimer,
                wl.priority,
                non_preemptible,
                running,
                free_gpus,
                scenario,
            ),
        };
        let Some(victims) = victims else { return false };
        self.runtimes[w.index()].kai_pipelined = want;
        self.runtimes[w.index()].kai_pipelined_cpu_memory = other.tasks_total();
        let by = match action {
            KaiAction::Reclaim => format!("{}/{}", wl.namespace, wl.name),
            KaiAction::Preempt => kai_job_name(&wl),
        };
        self.runtimes[w.index()].record.preemptions_caused += victims.len() as u32;
        // With an elastic victim that keeps some pods, every victim's pods go at once and
        // the job is placed before any victim's replacements (upstream pipelines it onto the
        // releasing resources); without one, each victim goes as before.
        let partial = victims
            .iter()
            .any(|&(v, count)| job(v).is_some_and(|j| !j.all(count)));
        let queue_name = &world.kai_queues[queue].name;
        let mut gone = Vec::new();
        for (v, count) in victims {
            let Some(j) = job(v) else { continue };
            let vw = WorkloadId::from_index(v);
            if j.all(count) {
                let generation = self.kai_evict(vw, &by, queue_name, action, !partial);
                gone.push(KaiVictim {
                    job: vw,
                    pods: None,
                    generation,
                });
            } else {
                let pods: Vec<(usize, usize)> = j.pods[..count]
                    .iter()
                    .map(|p| (p.pod_set, p.index))
                    .collect();
                self.kai_evict_pods(vw, &pods, &by, queue_name, action);
                gone.push(KaiVictim {
                    job: vw,
                    pods: Some(pods),
                    generation: 0,
                });
            }
        }
        if partial {
            self.runtimes[w.index()].kai_victims = gone;
            self.events.push(
                self.now + world.config.pod_termination,
                Ev::KaiVictimPodsGone(w),
            );
        }
        true
    }

    /// Sets what each of `victims` (runtime index, how many of its pods in eviction order)
    /// still holds in a scenario, for the queue-limit check (`kai_capacity`).
    fn kai_scenario_victims(
        &mut self,
        running: &[placement::kai::RunningJob],
        victims: &[(usize, usize)],
    ) {
        for &(v, count) in victims {
            let Some(j) = running.iter().find(|j| j.key == v) else {
                continue;
            };
            let taken = &j.pods[..count.min(j.pods.len())];
            let gpus = if j.all(count) {
                0
            } else {
                j.gpus - taken.iter().map(|p| p.gpus).sum::<i64>()
            };
            let (mut held, _) = self.kai_cpu_memory(v);
            for p in taken {
                let needs = &self.runtimes[v].needs[p.pod_set];
                let [cpu, memory] = self.cpu_memory_of(needs);
                held = [held[0] - cpu, held[1] - memory];
            }
            self.sched.kai_scenario_gpus.push((v, gpus));
            self.sched.kai_scenario_cpu_memory.push((v, held));
        }
    }

    /// Whether the queue limits of runtime `v`'s queue and its parents allow it `amounts`
    /// more (GPUs in milli-GPUs, CPU, memory) in the scenario under way (`kai_capacity`).
    fn kai_limits_allow(&self, v: usize, amounts: placement::kai::Amounts) -> bool {
        self.kai_capacity(WorkloadId::from_index(v))
            .is_none_or(|over| over([0; 3], amounts).is_none())
    }

    /// Runtime `v` holds `amounts` more in the scenario under way: its figures for the
    /// queue-limit check (from its real ones when the scenario has none yet).
    fn kai_scenario_hold(&mut self, v: usize, amounts: placement::kai::Amounts) {
        let sched = &self.sched;
        let gpus = match sched.kai_scenario_gpus.iter().find(|x| x.0 == v) {
            Some(&(_, g)) => g,
            None => self.gpu.map_or(0, |g| self.kai_milli(v, g).0) + self.runtimes[v].kai_pipelined,
        };
        let other = match sched.kai_scenario_cpu_memory.iter().find(|x| x.0 == v) {
            Some(&(_, held)) => held,
            None => self.kai_cpu_memory(v).0,
        };
        let (gpus, other) = (
            gpus + amounts[0],
            [other[0] + amounts[1], other[1] + amounts[2]],
        );
        let sched = &mut self.sched;
        sched.kai_scenario_gpus.retain(|x| x.0 != v);
        sched.kai_scenario_gpus.push((v, gpus));
        sched.kai_scenario_cpu_memory.retain(|x| x.0 != v);
        sched.kai_scenario_cpu_memory.push((v, other));
    }

    /// A copy of the cluster with the pods of `victims` gone ((runtime index, how many of
    /// its pods in eviction order), `running` giving the pods): where a scenario of reclaim
    /// or preempt places the job. A victim taken whole leaves as in `cluster_without` (its
    /// GPU shares too).
    pub(super) fn cluster_without_victims(
        &self,
        running: &[placement::kai::RunningJob],
        victims: &[(usize, usize)],
    ) -> Cluster {
        let whole: Vec<usize> = victims
            .iter()
            .filter(|&&(v, count)| running.iter().any(|j| j.key == v && j.all(count)))
            .map(|v| v.0)
            .collect();
        let mut scratch = self.cluster_without(&whole);
        for &(v, count) in victims {
            let Some(j) = running.iter().find(|j| j.key == v && !j.all(count)) else {
                continue;
            };
            let vr = &self.runtimes[v];
            for p in j.pods.iter().take(count) {
                let n = NodeId::from_index(p.node);
                scratch.apply(self.world, n, &vr.needs[p.pod_set].requests, -1);
            }
        }
        scratch
    }

    /// A copy of the cluster with the pods of `victims` (runtime indices) gone: where a
    /// scenario of an eviction action places the job (`TryToVirtuallyAllocate…`).
    pub(super) fn cluster_without(&self, victims: &[usize]) -> Cluster {
        let mut scratch = self.sched.cluster.clone();
        for &v in victims {
            let vr = &self.runtimes[v];
            for (ps, slots) in vr.record.placement.iter().enumerate() {
                for n in slots.iter().flatten() {
                    scratch.apply(self.world, *n, &vr.needs[ps].requests, -1);
                }
            }
            // Its GPU shares leave their devices (the last share on a device takes KAI's
            // reservation pod with it, giving the node its GPU back).
            for &(n, c) in vr.claims.iter().filter(|(_, c)| c.reserve) {
                scratch.apply_claim(self.world, n, c, -1);
            }
        }
        scratch
    }
}

/// A victim of a scenario put back where it ran, if all of it fits there again (upstream
/// unevicts a victim it pipelines back to its node): its pods' requests on their nodes and
/// its GPU shares on their devices (a device no share holds any more needs a whole GPU free
/// on the node again, for KAI's reservation pod). Whether it fit; if not, `scratch` is as
/// before.
fn put_back(
    world: &kueuesim_model::World,
    scratch: &mut Cluster,
    vr: &super::runtime::Runtime<'_>,
) -> bool {
    let mut applied = Vec::new();
    let mut fits = true;
    'pods: for (ps, slots) in vr.record.placement.iter().enumerate() {
        for n in slots.iter().flatten() {
            if !scratch.nodes.fits(*n, &vr.needs[ps].requests) {
                fits = false;
                break 'pods;
            }
            scratch.apply(world, *n, &vr.needs[ps].requests, 1);
            applied.push((*n, ps));
        }
    }
    let mut claimed = Vec::new();
    if fits {
        for &(n, c) in vr.claims.iter().filter(|(_, c)| c.reserve) {
            if !share_fits(scratch, n, c) {
                fits = false;
                break;
            }
            scratch.apply_claim(world, n, c, 1);
            claimed.push((n, c));
        }
    }
    if !fits {
        for (n, c) in claimed.into_iter().rev() {
            scratch.apply_claim(world, n, c, -1);
        }
        for (n, ps) in applied {
            scratch.apply(world, n, &vr.needs[ps].requests, -1);
        }
    }
    fits
}

/// Whether KAI share `c` fits its device on `node` again: the device has its milli free and
/// either holds other shares or is idle with a whole GPU free on the node for KAI's
/// reservation pod (a whole-GPU pod placed in the scenario counts on the node, not yet on
/// a device).
pub(super) fn share_fits(
    scratch: &Cluster,
    node: NodeId,
    c: crate::placement::devices::Claim,
) -> bool {
    let Some(dev) = scratch.devices.as_ref() else {
        return true;
    };
    let book = &dev.book;
    (0..book.count(node))
        .filter(|&k| c.mask & (1 << k) != 0)
        .all(|k| {
            book.free(node)[k] >= c.milli
                && (book.is_shared(node, k)
                    || scratch
                        .res
                        .gpu
                        .is_some_and(|g| scratch.nodes.free(node, g) > 0))
        })
}

/// The partial job a scenario places (upstream's job of `tasks` tasks): its bound pods and
/// its first `tasks` pending ones.
pub(super) fn partial_job(
    pods: &[(PodNeeds, Vec<Option<NodeId>>)],
    tasks: usize,
) -> Vec<(PodNeeds, Vec<Option<NodeId>>)> {
    let mut left = tasks;
    pods.iter()
        .map(|(n, slots)| {
            let kept = slots
                .iter()
                .copied()
                .filter(|x| {
                    x.is_some()
                        || (left > 0 && {
                            left -= 1;
                            true
                        })
                })
                .collect();
            (n.clone(), kept)
        })
        .collect()
}

/// What KAI's eviction actions read for one pending job (`Simulation::kai_view`).
pub(super) struct KaiView {
    /// The job's KAI Queue.
    pub(super) queue: usize,
    /// The KAI Queues, quotas and limits in milli-GPUs.
    pub(super) queues: Vec<kueuesim_model::KaiQueue>,
    /// Running KAI jobs Kueue does not manage, the potential victims.
    pub(super) running: Vec<placement::kai::RunningJob>,
    /// Milli-GPUs allocated per queue (pipelined ones included). Every GPU figure of the
    /// view is in milli-GPUs, so that KAI's GPU shares count as their fractions, as the
    /// proportion plugin counts them.
    pub(super) allocated: Vec<i64>,
    /// Fair share per queue.
    pub(super) fair: Vec<i64>,
    /// The cluster's GPUs.
    pub(super) total: i64,
    /// GPUs of non-preemptible jobs of the job's queue.
    pub(super) non_preemptible: i64,
    /// The job's pods (needs, nodes of those bound).
    pub(super) pods: Vec<(PodNeeds, Vec<Option<NodeId>>)>,
    /// How many of its pods are bound.
    pub(super) bound: usize,
    /// GPUs of each task it allocates now (`GetTasksToAllocate`).
    pub(super) task_gpus: Vec<i64>,
    /// Free GPUs of the cluster.
    pub(super) free_gpus: i64,
    /// The running jobs' keys in job order (higher priority, then older, first): the order
    /// victims are placed again in a scenario.
    pub(super) put_back_order: Vec<usize>,
    /// The queues' CPU and memory shares, the job's tasks' and the running jobs' pods'.
    pub(super) cpu_memory: placement::kai::CpuMemoryState,
}

impl KaiView {
    /// The proportion plugin's view of the queues at `now`, for the victim searches.
    pub(super) fn queue_state(&self, now: SimTime) -> placement::kai::QueueState<'_> {
        placement::kai::QueueState {
            queues: &self.queues,
            fair: &self.fair,
            allocated: &self.allocated,
            total: self.total,
            now: now.millis(),
        }
    }
}

/// KAI's eviction actions that kueuesim runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum KaiAction {
    /// `reclaim`: from other queues above their fair share.
    Reclaim,
    /// `preempt`: lower-priority jobs of the same queue.
    Preempt,
}

impl KaiAction {
    /// The eviction's reason in the report.
    pub(super) fn reason(self) -> &'static str {
        match self {
            KaiAction::Reclaim => "Reclaim",
            KaiAction::Preempt => "Preempt",
        }
    }
}

/// The elastic plugin's job-order rank of a running KAI job (`minAvailableState`): 0 when a
/// subgroup holding pods has fewer bound than its minMember, else 2 when one has more, else 1.
/// Without subgroups the PodGroup is one subgroup of minMember (at least 1); a batch Job's
/// PodGroup per pod is always exactly at its minimum of 1.
pub(super) fn elastic_rank(wl: &kueuesim_model::Workload, placement: &[Vec<Option<NodeId>>]) -> u8 {
    if wl.gang.pod_group_per_pod {
        return 1;
    }
    let groups = gang_groups(wl, placement);
    if groups.iter().any(|&(b, min)| b < min) {
        0
    } else if groups.iter().any(|&(b, min)| b > min) {
        2
    } else {
        1
    }
}

/// A running KAI job's pods in upstream's eviction order, and the pieces the victims queue
/// takes them in (`GetTasksToEvict` at each pop of the job): while a subgroup (without
/// subgroups, the PodGroup) has more pods bound than its minMember, one pod of it, the last
/// in pod order first (the task order reversed: the youngest pod, the larger name); then
/// the rest at once. A batch Job's PodGroup per pod is one piece (kueuesim keeps such a job
/// whole). Also how many pods the last piece holds (its minimum, `RunningJob::min_pods`).
fn victim_pieces(
    wl: &kueuesim_model::Workload,
    placement: &[Vec<Option<NodeId>>],
    needs: &[PodNeeds],
    g: Option<kueuesim_model::ResourceId>,
) -> (
    Vec<placement::kai::VictimPod>,
    Vec<placement::kai::Piece>,
    usize,
) {
    let mut left: Vec<placement::kai::VictimPod> = Vec::new();
    for (ps, slots) in placement.iter().enumerate().rev() {
        for (index, node) in slots.iter().enumerate().rev() {
            if let Some(node) = node {
                left.push(placement::kai::VictimPod {
                    pod_set: ps,
                    index,
                    node: node.index(),
                    gpus: needs
                        .get(ps)
                        .map_or(0, |n| g.map_or(0, |g| n.requests.get(g)))
                        * MILLI,
                });
            }
        }
    }
    let subgroups = &wl.gang.kai_subgroups;
    let total: usize = placement.iter().map(Vec::len).sum();
    let group_of = |ps: usize| -> Option<usize> {
        if subgroups.is_empty() {
            Some(0)
        } else {
            wl.gang.pod_set_subgroup.get(ps).copied().flatten()
        }
    };
    let min_of = |sg: usize| -> usize {
        if subgroups.is_empty() {
            wl.gang.min_member.map_or(total, |m| m as usize).max(1)
        } else {
            subgroups[sg].min_member as usize
        }
    };
    let mut bound = vec![0usize; subgroups.len().max(1)];
    for p in &left {
        if let Some(sg) = group_of(p.pod_set) {
            bound[sg] += 1;
        }
    }
    let mut current = placement.to_vec();
    let mut pods = Vec::new();
    let mut pieces = Vec::new();
    if !wl.gang.pod_group_per_pod {
        while let Some(k) = left
            .iter()
            .position(|p| group_of(p.pod_set).is_some_and(|sg| bound[sg] > min_of(sg)))
        {
            let p = left.remove(k);
            pieces.push(placement::kai::Piece {
                upto: pods.len() + 1,
                rank: elastic_rank(wl, &current),
            });
            if let Some(sg) = group_of(p.pod_set) {
                bound[sg] -= 1;
            }
            current[p.pod_set][p.index] = None;
            pods.push(p);
        }
    }
    let min_pods = left.len();
    if !left.is_empty() {
        pods.extend(left);
        pieces.push(placement::kai::Piece {
            upto: pods.len(),
            rank: elastic_rank(wl, &current),
        });
    }
    (pods, pieces, min_pods)
}

impl Simulation<'_> {
    /// Milli-GPUs of each task KAI allocates now for job `wl` of pods `pods`
    /// (`GetTasksToAllocate`): `minMember − allocated` tasks while below the minimum, else
    /// one; a batch Job's PodGroup per pod: its next pod. A task's GPUs are its whole GPUs,
    /// or its share (`pending_share_milli`: a `gpu-memory` share against the smallest GPU
    /// memory of the GPU nodes).
    pub(super) fn kai_task_gpus(
        &self,
        wl: &kueuesim_model::Workload,
        pods: &[(PodNeeds, Vec<Option<NodeId>>)],
        gpu: Option<ResourceId>,
    ) -> Vec<i64> {
        pods.iter()
            .enumerate()
            .flat_map(|(ps, (n, slots))| {
                let whole = gpu.map_or(0, |g| n.requests.get(g));
                let per = whole * MILLI + self.pending_share_milli(wl, ps);
                slots.iter().filter(|x| x.is_none()).map(move |_| per)
            })
            .take(pending_task_count(wl, pods))
            .collect()
    }

    /// CPU and memory of each task `wl` allocates now, in the order of
    /// [`Self::kai_task_gpus`].
    pub(super) fn kai_task_cpu_memory(
        &self,
        wl: &kueuesim_model::Workload,
        pods: &[(PodNeeds, Vec<Option<NodeId>>)],
    ) -> Vec<placement::kai::CpuMemory> {
        pods.iter()
            .flat_map(|(n, slots)| {
                let per = self.cpu_memory_of(n);
                slots.iter().filter(|x| x.is_none()).map(move |_| per)
            })
            .take(pending_task_count(wl, pods))
            .collect()
    }

    /// The milli-GPUs of one pending pod's share of pod set `ps` of `wl`, as KAI's queues
    /// and actions count it before a node is chosen: its `gpu-fraction`, or its
    /// `gpu-memory` against the smallest GPU memory of the GPU nodes (the proportion
    /// plugin's and `GetTasksToAllocateInitResource`'s `MinNodeGPUMemory`); 0 without a
    /// share.
    fn pending_share_milli(&self, wl: &kueuesim_model::Workload, ps: usize) -> i64 {
        let share = wl.pod_sets.get(ps).and_then(|p| p.gpu_share);
        match (share, self.sched.cluster.devices.as_ref()) {
            (Some(GpuShare::Fraction(m)), _) => i64::from(m),
            (Some(share), Some(dev)) => dev.book.pending_share_milli(share),
            _ => 0,
        }
    }

    /// Runtime `i`'s GPUs as KAI's queues count them, in milli-GPUs: (bound, not bound).
    /// A whole GPU is 1000; a bound share is the part of its device it holds (its claim),
    /// a pending one its fraction (`pending_share_milli`).
    pub(super) fn kai_milli(&self, i: usize, g: ResourceId) -> (i64, i64) {
        let rt = &self.runtimes[i];
        let wl = self.spec(WorkloadId::from_index(i));
        let (mut placed, mut unplaced) = (0, 0);
        for (ps, slots) in rt.record.placement.iter().enumerate() {
            let whole = rt.needs.get(ps).map_or(0, |n| n.requests.get(g)) * MILLI;
            let share = self.pending_share_milli(&wl, ps);
            for s in slots {
                match s {
                    Some(_) => placed += whole,
                    None => unplaced += whole + share,
                }
            }
        }
        placed += rt
            .claims
            .iter()
            .filter(|(_, c)| c.reserve)
            .map(|(_, c)| i64::from(c.milli))
            .sum::<i64>();
        (placed, unplaced)
    }
}

impl Simulation<'_> {
    /// One pod's CPU (millicores) and memory (bytes), as the proportion plugin counts them.
    fn cpu_memory_of(&self, needs: &PodNeeds) -> placement::kai::CpuMemory {
        let res = self.sched.cluster.res;
        let of = |r: Option<usize>| r.map_or(0, |r| needs.requests.get(ResourceId::from_index(r)));
        [of(res.cpu), of(res.memory)]
    }

    /// Runtime `i`'s CPU and memory: (its bound pods', its pods not bound).
    pub(super) fn kai_cpu_memory(
        &self,
        i: usize,
    ) -> (placement::kai::CpuMemory, placement::kai::CpuMemory) {
        let rt = &self.runtimes[i];
        let (mut placed, mut unplaced) = ([0, 0], [0, 0]);
        for (ps, slots) in rt.record.placement.iter().enumerate() {
            let per = rt.needs.get(ps).map_or([0, 0], |n| self.cpu_memory_of(n));
            for s in slots {
                let to = if s.is_some() {
                    &mut placed
                } else {
                    &mut unplaced
                };
                to[0] += per[0];
                to[1] += per[1];
            }
        }
        (placed, unplaced)
    }
}

/// CPU and memory per KAI Queue while `kai_view` scans the runtimes.
struct CpuMemoryBooks {
    /// Allocated (bound and pipelined), per queue: CPU, memory.
    allocated: [Vec<i64>; 2],
    /// Allocated plus pending of waiting jobs, per queue (the division's requests).
    requests: [Vec<i64>; 2],
    /// Non-preemptible allocation of the pending job's queue.
    non_preemptible: placement::kai::CpuMemory,
    /// Running jobs' pods' CPU and memory, in eviction order.
    pods: Vec<(usize, Vec<placement::kai::CpuMemory>)>,
}

impl CpuMemoryBooks {
    /// Empty books for `n` queues.
    fn new(n: usize) -> Self {
        Self {
            allocated: [vec![0; n], vec![0; n]],
            requests: [vec![0; n], vec![0; n]],
            non_preemptible: [0, 0],
            pods: Vec::new(),
        }
    }

    /// A job of `queue`: its bound pods' amounts, its pipelined amounts, its pending pods'
    /// when it waits (a pipelined job's pipelined part is allocated, not pending), and
    /// whether it is a non-preemptible job of the pending job's queue.
    fn add(
        &mut self,
        queue: usize,
        placed: placement::kai::CpuMemory,
        pipelined: placement::kai::CpuMemory,
        pending: Option<placement::kai::CpuMemory>,
        non_preemptible: bool,
    ) {
        for r in 0..2 {
            let held = placed[r] + pipelined[r];
            self.allocated[r][queue] += held;
            self.requests[r][queue] += held + pending.map_or(0, |p| (p[r] - pipelined[r]).max(0));
            if non_preemptible {
                self.non_preemptible[r] += held;
            }
        }
    }

    /// The state reclaim and preempt read: each resource divided among the queues
    /// (`resource_division`, per resource, in millicores and bytes) of the cluster's
    /// `totals` (CPU, memory).
    fn into_state(
        self,
        queues: &[kueuesim_model::KaiQueue],
        totals: placement::kai::CpuMemory,
    ) -> placement::kai::CpuMemoryState {
        let quotas = [
            queues.iter().map(|q| q.cpu).collect::<Vec<_>>(),
            queues.iter().map(|q| q.memory).collect::<Vec<_>>(),
        ];
        let [allocated_cpu, allocated_memory] = self.allocated;
        let shares = quotas
            .into_iter()
            .zip([allocated_cpu, allocated_memory])
            .zip(self.requests)
            .zip(totals)
            .map(|(((quota, allocated), requests), total)| {
                let fair = placement::kai::divide_shares(queues, &quota, total, &requests, 1);
                placement::kai::ResourceShares {
                    quota,
                    fair,
                    allocated,
                    total,
                }
            })
            .collect();
        placement::kai::CpuMemoryState {
            shares,
            tasks: Vec::new(),
            pods: self.pods,
            non_preemptible: self.non_preemptible,
        }
    }
}

/// How many of `wl`'s pending pods one task of KAI's actions stands for: one pod, or, for a
/// gang below its `minMember`, the pods it still needs to reach it (the pending tasks
/// upstream's `GetTasksToAllocate` hands the actions together).
fn pending_task_count(
    wl: &kueuesim_model::Workload,
    pods: &[(PodNeeds, Vec<Option<NodeId>>)],
) -> usize {
    let (bound, _) = placement::counts(pods);
    let total_pods: usize = pods.iter().map(|(_, s)| s.len()).sum();
    let min_member = wl
        .gang
        .min_member
        .map_or(total_pods, |m| (m as usize).min(total_pods));
    if wl.gang.pod_group_per_pod || bound >= min_member {
        1
    } else {
        min_member - bound
    }
}
