//! KAI's consolidation action for a pending job of a KAI Queue that Kueue does not manage:
//! running pods are moved to other nodes so the job fits, and the moved pods' replacements
//! bind to the nodes the action planned for them.

use std::cmp::Reverse;

use kueuesim_model::gpu::MILLI;
use kueuesim_model::{NodeId, SchedulerKind, WorkloadId};

use crate::outcome::{EventType, Eviction, WorkloadState};
use crate::placement::{self, PodNeeds};

use super::kai::kai_job_name;
use super::kai_actions::{KaiView, partial_job, share_fits};
use super::{Ev, Simulation};
use crate::placement::devices::Claim;

/// The reason kueuesim records for a job whose pods the consolidation moved (one per job, as
/// KAI's `Reclaim` and `Preempt`): upstream's action name (`framework.Consolidation`).
pub(super) const CONSOLIDATION_REASON: &str = "Consolidation";

impl Simulation<'_> {
    /// KAI's consolidation action for pending job `w` (`attemptToConsolidateForPreemptor`);
    /// whether it moved pods. GPU shares take part as their fractions (`KaiView`); a share
    /// placed again on another device of its node moves as a pod to another node does.
    pub(super) fn kai_consolidate(&mut self, w: WorkloadId, view: &KaiView) -> bool {
        let world = self.world;
        let wl = self.spec(w);
        let state = view.queue_state(self.now);
        let KaiView {
            queue,
            ref running,
            ref pods,
            bound,
            ref task_gpus,
            free_gpus,
            ..
        } = *view;
        let want: i64 = task_gpus.iter().sum();
        // `buildPreemptibleFilterFunc`: not the job itself; a job whose pods are being moved
        // already is not moved again.
        let running: Vec<placement::kai::RunningJob> = running
            .iter()
            .filter(|&j| j.key != w.index() && self.runtimes[j.key].kai_moves.is_empty())
            .cloned()
            .collect();
        let preemptor = placement::kai::Reclaimer {
            queue,
            task_gpus,
            preemptible: wl.kai_preemptible(),
        };
        // The job's place in the job order (below its minimum, as a pending job is): the
        // victims of its queue before it are placed again first (`consolidation_scenario`).
        let job_order = (Reverse(wl.priority), 0u8, wl.created_at.millis(), w.index());
        let scenario = |tasks: usize,
                        victims: &[(usize, usize)]|
         -> Option<placement::kai::ConsolidationPlan> {
            self.consolidation_scenario(w, pods, bound, tasks, victims, &running, job_order)
        };
        let Some(plan) = placement::kai::consolidation_plan(
            &state,
            &view.cpu_memory,
            &preemptor,
            &running,
            free_gpus,
            scenario,
        ) else {
            return false;
        };
        self.runtimes[w.index()].kai_pipelined = want;
        self.runtimes[w.index()].record.preemptions_caused += plan.moved.len() as u32;
        let by = kai_job_name(&wl);
        for &v in &plan.moved {
            let moves: Vec<(usize, usize, NodeId)> = plan
                .moves
                .iter()
                .filter(|m| m.0 == v)
                .map(|&(_, ps, idx, node)| (ps, idx, NodeId::from_index(node)))
                .collect();
            let claims: Vec<(usize, usize, Claim)> = plan
                .move_claims
                .iter()
                .filter(|m| m.0 == v)
                .map(|&(_, ps, idx, c)| (ps, idx, c))
                .collect();
            self.kai_move(WorkloadId::from_index(v), w, moves, claims, &by);
        }
        // The job is pipelined onto its planned nodes: what is idle there now is held for it
        // (upstream's allocate pipelines it onto the releasing resources in the next
        // sessions, ahead of the jobs after it), the rest is the moved pods' to give back.
        let mut holds = Vec::new();
        for &(ps, node) in &plan.preemptor {
            let node = NodeId::from_index(node);
            let free: Vec<(kueuesim_model::ResourceId, i64)> = self.runtimes[w.index()].needs[ps]
                .requests
                .iter()
                .map(|(r, a)| {
                    let idle = self.sched.cluster.nodes.free(node, r.index()).max(0);
                    (r, a.min(idle))
                })
                .collect();
            let hold = kueuesim_model::ResourceList::from_pairs(free);
            self.sched.cluster.apply(world, node, &hold, 1);
            holds.push((node, hold));
        }
        let rt = &mut self.runtimes[w.index()];
        rt.kai_holds = holds;
        rt.kai_movers = plan
            .moved
            .iter()
            .map(|&v| WorkloadId::from_index(v))
            .collect();
        self.events.push(
            self.now + world.config.pod_termination,
            Ev::KaiConsolidated(w),
        );
        true
    }

    /// One scenario of the consolidation (`TryToVirtuallyAllocatePreemptorAndGetVictims` on
    /// a copy of the cluster): the victims' taken pods gone (`victims`: job, how many of its
    /// pods in eviction order), then the victims and the job in job order (upstream pops
    /// them from one `JobsOrderByQueues`, on the jobs as the evictions left them): each
    /// victim of the job's queue before the job (`job_order`) placed again by KAI's
    /// allocation wherever it fits, the job's bound pods and first `tasks` pending ones
    /// placed by KAI's allocation, then the other victims (`AllocateJob` pipeline-only on
    /// every feasible node). A victim that lost all its pods is below its minimum as the
    /// job is, so the priority, then the creation time, decides; one that keeps its minimum
    /// (it gave up pods above it) comes after a job below its minimum (the elastic plugin).
    /// A victim's pods that land on the nodes they ran on stay (upstream unevicts a task it
    /// pipelines back to its node); the others move. None: the tasks do not fit.
    #[allow(clippy::too_many_arguments)]
    fn consolidation_scenario(
        &mut self,
        w: WorkloadId,
        pods: &[(PodNeeds, Vec<Option<NodeId>>)],
        bound: usize,
        tasks: usize,
        victims: &[(usize, usize)],
        running: &[placement::kai::RunningJob],
        job_order: JobOrder,
    ) -> Option<placement::kai::ConsolidationPlan> {
        let scratch = self.cluster_without_victims(running, victims);
        let partial = partial_job(pods, tasks);
        let queue = self.spec(w).gang.kai_queue;
        // The victims in job order, as the evictions leave them; whether each comes before
        // the job.
        let mut order: Vec<(JobOrder, &placement::kai::RunningJob, usize, bool)> = victims
            .iter()
            .filter_map(|&(k, count)| {
                let j = running.iter().find(|j| j.key == k)?;
                let key = (Reverse(j.priority), rank_after(j, count), j.created, j.key);
                Some((key, j, count, Some(j.queue) == queue && key < job_order))
            })
            .collect();
        order.sort_by_key(|x| x.0);
        // The victims hold only their kept pods until they are placed again.
        self.sched.kai_scenario_gpus = order
            .iter()
            .map(|&(_, j, count, _)| (j.key, kept_milli(j, count)))
            .collect();
        let saved = std::mem::replace(&mut self.sched.cluster, scratch);
        let mut plan = placement::kai::ConsolidationPlan::default();
        for &(_, j, count, _) in order.iter().filter(|x| x.3) {
            self.place_victim_again(j, count, &mut plan);
        }
        let r = self.place_kai(w, &partial, bound + tasks);
        if r.bound.len() < tasks {
            self.sched.cluster = saved;
            self.sched.kai_scenario_gpus.clear();
            return None;
        }
        // The job holds its bound pods and the tasks just placed.
        let rt = &self.runtimes[w.index()];
        let mut job_gpus: i64 = r
            .bound
            .iter()
            .map(|b| pod_milli_gpus(self.gpu, rt, b.0))
            .sum::<i64>()
            + claims_milli(&r.claims);
        if let Some(g) = self.gpu {
            job_gpus += self.kai_milli(w.index(), g).0;
        }
        self.sched.kai_scenario_gpus.push((w.index(), job_gpus));
        plan.preemptor = r.bound.iter().map(|b| (b.0, b.2.index())).collect();
        for &(_, j, count, _) in order.iter().filter(|x| !x.3) {
            self.place_victim_again(j, count, &mut plan);
        }
        self.sched.cluster = saved;
        self.sched.kai_scenario_gpus.clear();
        Some(plan)
    }

    /// The first `count` pods (in eviction order) of victim `j` of a consolidation scenario
    /// placed again (`AllocateJob` pipeline-only), its other pods staying bound: its moved
    /// pods and its lost state go into `plan`.
    fn place_victim_again(
        &mut self,
        j: &placement::kai::RunningJob,
        count: usize,
        plan: &mut placement::kai::ConsolidationPlan,
    ) {
        let gpu = self.gpu;
        let gpus_of = |rt: &super::runtime::Runtime<'_>, ps: usize| pod_milli_gpus(gpu, rt, ps);
        let v = j.key;
        let vw = WorkloadId::from_index(v);
        let old = self.runtimes[v].record.placement.clone();
        let taken = |ps: usize, idx: usize| {
            j.all(count)
                || j.pods[..count]
                    .iter()
                    .any(|p| (p.pod_set, p.index) == (ps, idx))
        };
        // Its running pods, per pod set in pod order: a taken one to place again, a kept one
        // bound where it runs. Allocate places up to `minMember` of them, then one per pass
        // (an elastic job), so passes go on while they bind.
        let mut again: Vec<(PodNeeds, Vec<Option<NodeId>>)> = Vec::new();
        // The pod index of each slot of `again`.
        let mut index_of: Vec<Vec<usize>> = Vec::new();
        for (ps, (n, slots)) in self.runtimes[v].pods().into_iter().enumerate() {
            let running: Vec<(usize, NodeId)> = slots
                .iter()
                .enumerate()
                .filter_map(|(idx, node)| node.map(|node| (idx, node)))
                .collect();
            again.push((
                n,
                running
                    .iter()
                    .map(|&(idx, node)| (!taken(ps, idx)).then_some(node))
                    .collect(),
            ));
            index_of.push(running.iter().map(|x| x.0).collect());
        }
        let total: usize = again.iter().map(|(_, s)| s.len()).sum();
        let to_place = again
            .iter()
            .map(|(_, s)| s.iter().filter(|x| x.is_none()).count())
            .sum::<usize>();
        let mut bound = 0;
        let mut again_claims: Vec<(usize, usize, Claim)> = Vec::new();
        while bound < to_place {
            let placed = self.place_kai(vw, &again, total);
            if placed.bound.is_empty() {
                break;
            }
            for &(ps, idx, node) in &placed.bound {
                again[ps].1[idx] = Some(node);
            }
            again_claims.extend(placed.claims.iter().copied());
            bound += placed.bound.len();
        }
        if bound < to_place {
            plan.lost.push(v);
            return;
        }
        let rt = &self.runtimes[v];
        let placed: i64 = again
            .iter()
            .enumerate()
            .map(|(ps, (_, slots))| gpus_of(rt, ps) * slots.iter().flatten().count() as i64)
            .sum::<i64>()
            + claims_milli(&again_claims);
        // The devices its shares hold now (node, device mask), each kept by one pod
        // placed again onto it.
        let mut old_claims: Vec<(NodeId, u64)> = rt
            .claims
            .iter()
            .filter(|(_, c)| c.reserve)
            .map(|(n, c)| (*n, c.mask))
            .collect();
        if let Some(x) = self.sched.kai_scenario_gpus.iter_mut().find(|x| x.0 == v) {
            x.1 = placed;
        }
        let mut moved = false;
        for (ps, slots) in old.iter().enumerate() {
            if self.spec(vw).pod_sets[ps].gpu_share.is_some() {
                // A job with shares is taken whole (`kai_view`). A share stays when placed
                // again on a device it holds on the same node; the others move, also to
                // another device of their node.
                let mut fresh: Vec<(NodeId, Claim)> = again_claims
                    .iter()
                    .filter(|c| c.0 == ps)
                    .filter_map(|&(_, idx, c)| again[ps].1[idx].map(|n| (n, c)))
                    .collect();
                let mut movers = Vec::new();
                for (idx, node) in slots.iter().enumerate() {
                    let Some(node) = node else { continue };
                    let keep = fresh
                        .iter()
                        .position(|(n, c)| n == node && old_claims.contains(&(*n, c.mask)));
                    match keep {
                        Some(k) => {
                            let (n, c) = fresh.remove(k);
                            if let Some(o) = old_claims.iter().position(|&x| x == (n, c.mask)) {
                                old_claims.remove(o);
                            }
                        }
                        None => movers.push(idx),
                    }
                }
                for (idx, (node, c)) in movers.into_iter().zip(fresh) {
                    plan.moves.push((v, ps, idx, node.index()));
                    plan.move_claims.push((v, ps, idx, c));
                    moved = true;
                }
                continue;
            }
            // Per pod set, pods are alike: a taken pod whose node is among the new ones
            // stays, the others take the new nodes left over.
            let mut fresh: Vec<NodeId> = index_of[ps]
                .iter()
                .zip(&again[ps].1)
                .filter(|&(&idx, _)| taken(ps, idx))
                .filter_map(|(_, n)| *n)
                .collect();
            let mut movers = Vec::new();
            for (idx, node) in slots.iter().enumerate() {
                let Some(node) = node else { continue };
                if !taken(ps, idx) {
                    continue;
                }
                match fresh.iter().position(|n| n == node) {
                    Some(k) => {
                        fresh.remove(k);
                    }
                    None => movers.push(idx),
                }
            }
            for (idx, node) in movers.into_iter().zip(fresh) {
                plan.moves.push((v, ps, idx, node.index()));
                moved = true;
            }
        }
        if moved {
            plan.moved.push(v);
        }
    }

    /// The consolidation evicts the pods of `v` it moves (`moves`: pod set, index, planned
    /// node) for job `w` (its PodGroup `by`): `Evict` (`GetConsolidateMessage`) and
    /// `Pipelined` events per pod; the pods terminate (`podTermination`), then are lost as
    /// any deleted pods and their controller's replacements bind to the planned nodes
    /// (`kai_consolidated`). Meanwhile the planned nodes hold the moved pods' requests:
    /// upstream's next sessions give the victim's new pods those nodes (its PodGroup is
    /// older than the pending jobs after it).
    fn kai_move(
        &mut self,
        v: WorkloadId,
        w: WorkloadId,
        moves: Vec<(usize, usize, NodeId)>,
        claims: Vec<(usize, usize, Claim)>,
        by: &str,
    ) {
        let now = self.now;
        let world = self.world;
        let spec = self.spec(v);
        for &(ps, idx, node) in &moves {
            let req = self.runtimes[v.index()].needs[ps].requests.clone();
            self.sched.cluster.apply(world, node, &req, 1);
            // A moved share also holds its planned device.
            if let Some(&(_, _, c)) = claims.iter().find(|c| (c.0, c.1) == (ps, idx)) {
                self.sched.cluster.apply_claim(world, node, c, 1);
            }
            let pod = format!("{}/{}", spec.namespace, spec.pod_name(ps, idx));
            self.record_event(
                v,
                EventType::Normal,
                SchedulerKind::Kai.event_source(),
                "Evict",
                format!(
                    "Pod {pod} was preempted and rescheduled due to bin packing (resource consolidation) procedure"
                ),
                None,
            );
            self.record_event(
                v,
                EventType::Normal,
                SchedulerKind::Kai.event_source(),
                "Pipelined",
                format!("Pod {pod} was pipelined to node {}", world.node(node).name),
                None,
            );
        }
        *self
            .rec
            .stats
            .evictions
            .entry(CONSOLIDATION_REASON)
            .or_default() += 1;
        let rt = &mut self.runtimes[v.index()];
        rt.record.evictions.push(Eviction {
            at: now,
            reason: CONSOLIDATION_REASON,
            preemption_reason: None,
            preemptor: Some(by.to_string()),
            preemptor_cluster_queue: None,
        });
        rt.kai_moves = moves;
        rt.kai_move_claims = claims;
        rt.kai_moved_for = Some((w, rt.generation));
    }

    /// The pods the consolidation for `w` moved are gone (`podTermination` after it): the
    /// holds on the planned nodes go; each victim still in the run it was moved in loses the
    /// pods as deleted pods are lost (`Loss::Consolidation`: its controller replaces them,
    /// or it fails without one) and each replacement binds to its planned node while it
    /// fits there (the others wait for KAI); then the waiting jobs are tried, `w` first
    /// (pipelined).
    pub(super) fn kai_consolidated(&mut self, w: WorkloadId) {
        let world = self.world;
        for (node, hold) in std::mem::take(&mut self.runtimes[w.index()].kai_holds) {
            self.sched.cluster.apply(world, node, &hold, -1);
        }
        for v in std::mem::take(&mut self.runtimes[w.index()].kai_movers) {
            let moves = std::mem::take(&mut self.runtimes[v.index()].kai_moves);
            let claims = std::mem::take(&mut self.runtimes[v.index()].kai_move_claims);
            let moved_for = self.runtimes[v.index()].kai_moved_for.take();
            for &(ps, idx, node) in &moves {
                let req = self.runtimes[v.index()].needs[ps].requests.clone();
                self.sched.cluster.apply(world, node, &req, -1);
                if let Some(&(_, _, c)) = claims.iter().find(|c| (c.0, c.1) == (ps, idx)) {
                    self.sched.cluster.apply_claim(world, node, c, -1);
                }
            }
            if moved_for != Some((w, self.runtimes[v.index()].generation)) {
                // The victim ended (or lost pods otherwise) meanwhile: only the holds go.
                continue;
            }
            let pods: Vec<(usize, usize)> = moves
                .iter()
                .filter(|&&(ps, idx, _)| {
                    self.runtimes[v.index()].record.placement[ps][idx].is_some()
                })
                .map(|&(ps, idx, _)| (ps, idx))
                .collect();
            self.lose_pods(v, &pods, super::pod_loss::Loss::Consolidation, None);
            if self.runtimes[v.index()].record.state != WorkloadState::Finished {
                self.bind_planned(v, &moves, &claims);
            }
        }
        self.retry_placements();
    }

    /// Binds replacement pods of `v` to their planned nodes (`moves`), a share to its
    /// planned device (`claims`), where they fit; a job then fully placed starts running.
    fn bind_planned(
        &mut self,
        v: WorkloadId,
        moves: &[(usize, usize, NodeId)],
        claims: &[(usize, usize, Claim)],
    ) {
        let world = self.world;
        let gpu = self.gpu;
        for &(ps, idx, node) in moves {
            let rt = &self.runtimes[v.index()];
            let req = rt.needs[ps].requests.clone();
            let share = claims.iter().find(|c| (c.0, c.1) == (ps, idx)).map(|c| c.2);
            if rt.record.placement[ps][idx].is_some()
                || !self.sched.cluster.nodes.fits(node, &req)
                || share.is_some_and(|c| !share_fits(&self.sched.cluster, node, c))
            {
                continue;
            }
            self.sched.cluster.apply(world, node, &req, 1);
            if let Some(c) = share {
                self.sched.cluster.apply_claim(world, node, c, 1);
                self.runtimes[v.index()].claims.push((node, c));
            }
            let rt = &mut self.runtimes[v.index()];
            rt.record.placement[ps][idx] = Some(node);
            if let Some(at) = rt.record.bound_at.get_mut(ps) {
                at[idx] = Some(self.now);
            }
            if let Some(g) = gpu {
                self.rec.gpu_change(rt, req.get(g), self.now);
            }
            // With GPU devices, the pod takes the best-fitting free devices, as KAI's
            // whole-GPU binds do.
            if share.is_none()
                && let Some(dev) = self.sched.cluster.devices.as_mut()
                && let Some(d @ kueuesim_model::gpu::GpuDemand::Whole(_)) = dev.book.demand(&req)
                && let Some(c) = dev
                    .book
                    .claim(node, d, placement::devices::DeviceChoice::BestFit)
            {
                dev.book.apply(node, c, 1);
                self.runtimes[v.index()].claims.push((node, c));
            }
        }
        let all_bound = self.runtimes[v.index()]
            .record
            .placement
            .iter()
            .all(|s| s.iter().all(Option::is_some));
        if all_bound && self.runtimes[v.index()].record.state == WorkloadState::Pending {
            self.sched.awaiting_placement.retain(|&(_, _, x)| x != v);
            self.bound_off(v);
            self.schedule_running(v);
        }
    }
}

/// A job's place in KAI's job order (the default tiers): higher priority first, then the
/// elastic plugin's rank (below its minimum first), then older, then the lower key for
/// upstream's UID.
type JobOrder = (Reverse<i32>, u8, i64, usize);

/// The elastic rank of victim `j` once its first `count` pods are taken
/// (`RunningJob::elastic` of what is left): below its minimum when all are taken, else the
/// rank of the piece that comes next.
fn rank_after(j: &placement::kai::RunningJob, count: usize) -> u8 {
    if j.all(count) {
        return 0;
    }
    j.pieces
        .iter()
        .find(|p| p.upto > count)
        .map_or(0, |p| p.rank)
}

/// Milli-GPUs victim `j` keeps once its first `count` pods are taken.
fn kept_milli(j: &placement::kai::RunningJob, count: usize) -> i64 {
    if j.all(count) {
        return 0;
    }
    j.gpus - j.pods[..count].iter().map(|p| p.gpus).sum::<i64>()
}

/// Milli-GPUs of one pod of pod set `ps`, as the capacity check counts them (`kai_milli`):
/// whole GPUs here, the shares' claims added where they are placed.
fn pod_milli_gpus(
    gpu: Option<kueuesim_model::ResourceId>,
    rt: &super::runtime::Runtime<'_>,
    ps: usize,
) -> i64 {
    gpu.map_or(0, |g| rt.needs.get(ps).map_or(0, |n| n.requests.get(g))) * MILLI
}

/// Milli-GPUs of the device shares placed (`claims`: pod set, index, claim).
fn claims_milli(claims: &[(usize, usize, Claim)]) -> i64 {
    claims.iter().map(|c| i64::from(c.2.milli)).sum()
}
