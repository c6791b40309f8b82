//! KAI: placing a job's PodGroups, topology constraints and its queues' capacity policy
//! (the reclaim and preempt actions are `kai_actions.rs`'s).

use kueuesim_model::gpu::MILLI;
use kueuesim_model::{NodeId, WorkloadId, World};

use crate::outcome::WorkloadState;
use crate::placement::kai::Amounts;
use crate::placement::{self, PodNeeds};

use super::Simulation;

impl<'w> Simulation<'w> {
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
        // `namespace/pod`, built in place (`Workload::push_pod_name`): a failed placement
        // names its pod in the message, and `format!` of `format!` cost two strings.
        let pod_name = |ps: usize, idx: usize| namespaced_pod_name(&wl, ps, idx);
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
            let over = self.kai_capacity(w);
            return placement::kai::place_tree_within(
                world,
                &mut self.sched.cluster,
                &job,
                &tree,
                over.as_deref(),
                self.sched.kai_passes,
            );
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
            let over = self.kai_capacity(w);
            return placement::kai::place_within(
                world,
                &mut self.sched.cluster,
                &job,
                over.as_deref(),
                self.sched.kai_passes,
            );
        }
        let over = self.kai_capacity(w);
        // Each pod is its own PodGroup: the pods bound earlier in this pass count too.
        let earlier = &std::cell::Cell::new([0i64; 3]);
        let per_pod = over.as_deref().map(|f| {
            move |placed: Amounts, request: Amounts| {
                let mut before = earlier.get();
                placement::kai::add_amounts(&mut before, placed);
                f(before, request)
            }
        });
        let per_pod = per_pod
            .as_ref()
            .map(|f| f as &dyn Fn(Amounts, Amounts) -> Option<String>);
        each_pod_alone(&wl, pods, &pod_name, |job, ps| {
            let job = placement::kai::KaiJob { constraint, ..job };
            // Each PodGroup of one pod allocates it in one pass.
            let r = placement::kai::place_within(
                world,
                &mut self.sched.cluster,
                &job,
                per_pod,
                placement::kai::Passes::All,
            );
            let bound = placement::kai::amounts_of(
                &self.sched.cluster,
                r.bound.iter().map(|_| &pods[ps].0),
            );
            let mut sum = earlier.get();
            placement::kai::add_amounts(&mut sum, bound);
            earlier.set(sum);
            r
        })
    }

    /// The proportion plugin's capacity policy for a job of a KAI Queue
    /// (`IsJobOverQueueCapacity`): a pass whose GPUs, CPU or memory would take the queue, or a
    /// parent of it, over its `limit` of that resource is refused with `OverLimit`
    /// (`resultsOverLimit`); a non-preemptible job (its PodGroup's preemptibility, else
    /// priority 100 or more) whose request would take the queue's non-preemptible allocation
    /// of a resource over its deserved quota with `NonPreemptibleOverQuota`
    /// (`resultsWithNonPreemptibleOverQuota`). Each queue of the path, leaf first, is checked
    /// in upstream's resource order (CPU, memory, GPUs), a resource the pass does not ask
    /// skipped. None: nothing to check (no KAI Queue, no limit on its path, or a preemptible
    /// job). The closure takes what this job bound in this pass so far and what the next
    /// allocation asks ([`placement::kai::CapacityCheck`]).
    pub(super) fn kai_capacity(&self, w: WorkloadId) -> Option<Box<CapacityCheck<'w>>> {
        let world = self.world;
        let wl = self.spec(w);
        let queue = wl.gang.kai_queue?;
        let queues = &world.kai_queues;
        let mut path = vec![queue];
        while let Some(p) = queues[*path.last().expect("non-empty")].parent {
            path.push(p);
        }
        let preemptible = wl.kai_preemptible();
        // Per resource (GPU, CPU, memory): a queue's (deserved quota, limit), None unlimited;
        // GPUs in milli-GPUs.
        let bounds = |q: usize| -> [(Option<i64>, Option<i64>); 3] {
            let kq = &queues[q];
            [
                (kq.gpu_quota, kq.gpu_limit),
                (kq.cpu.quota, kq.cpu.limit),
                (kq.memory.quota, kq.memory.limit),
            ]
        };
        let limited = path
            .iter()
            .any(|&q| bounds(q).iter().any(|b| b.1.is_some()));
        let quota_bound = !preemptible
            && path
                .iter()
                .any(|&q| bounds(q).iter().any(|b| b.0.is_some()));
        if !limited && !quota_bound {
            return None;
        }
        // Without GPUs as a resource, only CPU and memory count.
        let g = self.gpu;
        // Each queue's allocation (subtree), and that of non-preemptible jobs.
        let mut allocated = vec![[0i64; 3]; queues.len()];
        let mut non_preemptible = vec![[0i64; 3]; queues.len()];
        for (i, rt) in self.runtimes.iter() {
            let x = self.spec(WorkloadId::from_index(i));
            let Some(xq) = x.gang.kai_queue else { continue };
            // A job whose nodes were given back holds nothing, also while its release is
            // under way: a job finishing now keeps its placement for the report and turns
            // `Finished` only after the release has retried the waiting jobs (it was counted
            // then, and a job its queue's limit held back never started).
            if rt.needs.is_empty()
                || rt.released
                || matches!(
                    rt.record.state,
                    WorkloadState::Evicted | WorkloadState::Finished | WorkloadState::Inactive
                )
            {
                continue;
            }
            // A pipelined job's resources are its queue's, except for the job itself: what it
            // asks now is those (`placed`, `request` below), counted once.
            // Milli-GPUs, a bound GPU share counting as its fraction (`kai_milli`).
            let itself = i == w.index();
            let mut held = if itself { 0 } else { rt.kai_pipelined };
            held += g.map_or(0, |g| self.kai_milli(i, g).0);
            // In a consolidation scenario, what the job holds there.
            if let Some(&(_, gpus)) = self.sched.kai_scenario_gpus.iter().find(|x| x.0 == i) {
                held = gpus;
            }
            let (mut bound, _) = self.kai_cpu_memory(i);
            if let Some(&(_, held)) = self.sched.kai_scenario_cpu_memory.iter().find(|x| x.0 == i) {
                bound = held;
            }
            let pipelined = if itself {
                [0, 0]
            } else {
                rt.kai_pipelined_cpu_memory
            };
            let held = [held, bound[0] + pipelined[0], bound[1] + pipelined[1]];
            let mut q = Some(xq);
            while let Some(c) = q {
                placement::kai::add_amounts(&mut allocated[c], held);
                if !x.kai_preemptible() {
                    placement::kai::add_amounts(&mut non_preemptible[c], held);
                }
                q = queues[c].parent;
            }
        }
        Some(Box::new(
            move |placed: Amounts, request: Amounts| -> Option<String> {
                if request.iter().all(|&r| r <= 0) {
                    return None;
                }
                // Upstream's resource order (`rs.AllResources`): CPU, memory, GPUs.
                const ORDER: [usize; 3] = [1, 2, 0];
                for &q in &path {
                    for r in ORDER {
                        if let Some(limit) = bounds(q)[r].1
                            && request[r] > 0
                            && limit < allocated[q][r] + placed[r] + request[r]
                        {
                            return Some(over_limit_message(
                                &queues[q].name,
                                r,
                                limit,
                                allocated[q][r] + placed[r],
                                request[r],
                            ));
                        }
                    }
                }
                if !preemptible {
                    for &q in &path {
                        for r in ORDER {
                            if let Some(deserved) = bounds(q)[r].0
                                && request[r] > 0
                                && deserved < non_preemptible[q][r] + placed[r] + request[r]
                            {
                                return Some(over_quota_message(
                                    &queues[q].name,
                                    r,
                                    deserved,
                                    non_preemptible[q][r] + placed[r],
                                    request[r],
                                ));
                            }
                        }
                    }
                }
                None
            },
        ))
    }
}

/// A KAI capacity check: what a job bound in this pass so far and what it asks next →
/// KAI's message when the queue refuses them.
type CapacityCheck<'w> = dyn Fn(Amounts, Amounts) -> Option<String> + 'w;

/// KAI's `OverLimit` message for resource `r` (0 GPUs, 1 CPU, 2 memory) of `queue`
/// (`GetJobOverMaxAllowedMessageForQueue`), amounts in milli-GPUs, millicores or bytes.
fn over_limit_message(queue: &str, r: usize, limit: i64, used: i64, requested: i64) -> String {
    let (what, unit) = match r {
        0 => ("GPUs", "GPUs"),
        1 => ("CPU cores", "cores"),
        _ => ("memory", "GB"),
    };
    let h = |v: i64| humanize(r, v);
    format!(
        "OverLimit: {queue} quota has reached the allowable limit of {what}. Limit is {} {unit}, currently {} {unit} allocated and workload requested {} {unit}.",
        h(limit),
        h(used),
        h(requested)
    )
}

/// KAI's `NonPreemptibleOverQuota` message for resource `r` of `queue`
/// (`GetBuildOverCapacityMessageForQueue`).
fn over_quota_message(queue: &str, r: usize, deserved: i64, used: i64, requested: i64) -> String {
    let h = |v: i64| humanize(r, v);
    let details = match r {
        0 => format!(
            "Workload requested {} GPUs, but {queue} quota is {} GPUs, while {} GPUs are already allocated for non-preemptible pods.",
            h(requested),
            h(deserved),
            h(used)
        ),
        1 => format!(
            "Workload requested {} CPU cores, but {queue} quota is {} cores, while {} cores are already allocated for non-preemptible pods.",
            h(requested),
            h(deserved),
            h(used)
        ),
        _ => format!(
            "Workload requested {} GB memory, but {queue} quota is {} GB, while {} GB are already allocated for non-preemptible pods.",
            h(requested),
            h(deserved),
            h(used)
        ),
    };
    format!(
        "NonPreemptibleOverQuota: Non-preemptible workload is over quota. {details} Use a preemptible workload to go over quota.."
    )
}

/// An amount of resource `r` as KAI's messages print it (`HumanizeResource`): GPUs from
/// milli-GPUs, cores from millicores, GB (10^9 bytes) from bytes.
fn humanize(r: usize, v: i64) -> String {
    match r {
        0 | 1 => gpus(v),
        _ => decimal(v, 1_000_000_000),
    }
}

/// Milli-GPUs as KAI's messages print GPUs (`HumanizeResource`: up to three decimals, no
/// trailing zeros): 2000 → "2", 500 → "0.5", 1250 → "1.25".
fn gpus(milli: i64) -> String {
    decimal(milli, MILLI)
}

/// `v ÷ per` with up to three decimals, the rest cut off, no trailing zeros
/// (`humanize.FtoaWithDigits(v, 3)`).
fn decimal(v: i64, per: i64) -> String {
    let whole = v / per;
    let frac = ((v % per).abs() as i128 * 1000 / per as i128) as i64;
    if frac == 0 {
        return whole.to_string();
    }
    let sign = if v < 0 && whole == 0 { "-" } else { "" };
    let digits = format!("{frac:03}");
    format!("{sign}{whole}.{}", digits.trim_end_matches('0'))
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
        let pod_name = |ps: usize, idx: usize| namespaced_pod_name(&wl, ps, idx);
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
            let over = self.kai_capacity(w);
            return placement::kai::sharing::place_passes(
                world,
                &mut self.sched.cluster,
                &job,
                shares,
                over.as_deref(),
                self.sched.kai_passes,
            );
        }
        // Each pod is its own PodGroup: the pods bound earlier in this pass count too.
        let over = self.kai_capacity(w);
        let earlier = &std::cell::Cell::new([0i64; 3]);
        let per_pod = over.as_deref().map(|f| {
            move |placed: Amounts, request: Amounts| {
                let mut before = earlier.get();
                placement::kai::add_amounts(&mut before, placed);
                f(before, request)
            }
        });
        let per_pod = per_pod
            .as_ref()
            .map(|f| f as &dyn Fn(Amounts, Amounts) -> Option<String>);
        each_pod_alone(&wl, pods, &pod_name, |job, ps| {
            let share = [shares[ps]];
            let r = placement::kai::sharing::place(
                world,
                &mut self.sched.cluster,
                &job,
                &share,
                per_pod,
            );
            let fraction = match shares[ps] {
                Some(kueuesim_model::gpu::GpuShare::Fraction(m)) => i64::from(m),
                _ => 0,
            };
            let mut bound = placement::kai::amounts_of(
                &self.sched.cluster,
                r.bound.iter().map(|_| &pods[ps].0),
            );
            bound[0] += r.bound.len() as i64 * fraction;
            let mut sum = earlier.get();
            placement::kai::add_amounts(&mut sum, bound);
            earlier.set(sum);
            r
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
///
/// Every KAI placement makes it (its messages borrow it), so it is pushed together rather
/// than formatted: `format!` cost about 900 instructions a placement, most of it the
/// formatting machinery for two plain strings.
pub(super) fn kai_job_name(wl: &kueuesim_model::Workload) -> String {
    let (prefix, name) = match &wl.gang.pod_group {
        Some(pg) => ("", pg.as_str()),
        None => ("pg-", wl.name.as_str()),
    };
    let mut job = String::with_capacity(wl.namespace.len() + 1 + prefix.len() + name.len());
    job.push_str(&wl.namespace);
    job.push('/');
    job.push_str(prefix);
    job.push_str(name);
    job
}

/// (bound pods, minMember) per KAI subgroup with pods; without subgroups the PodGroup is
/// one subgroup of minMember (at least 1).
pub(super) fn gang_groups(
    wl: &kueuesim_model::Workload,
    placement: &[Vec<Option<NodeId>>],
) -> Vec<(usize, usize)> {
    let bound = |ps: usize| placement.get(ps).map_or(0, |s| s.iter().flatten().count());
    if wl.gang.kai_subgroups.is_empty() {
        let total: usize = placement.iter().map(Vec::len).sum();
        let min = wl.gang.min_member.map_or(total, |m| m as usize).max(1);
        vec![((0..placement.len()).map(bound).sum(), min)]
    } else {
        let mut g = vec![(0, 0); wl.gang.kai_subgroups.len()];
        for (ps, sub) in wl.gang.pod_set_subgroup.iter().enumerate() {
            if let Some(sg) = *sub {
                g[sg].0 += bound(ps);
                g[sg].1 = wl.gang.kai_subgroups[sg].min_member as usize;
            }
        }
        g.into_iter().filter(|&(_, min)| min > 0).collect()
    }
}

/// `namespace/pod` of pod `idx` of pod set `ps` (KAI's task name in its messages), as
/// `format!("{}/{}", wl.namespace, wl.pod_name(ps, idx))` writes it, in one string.
fn namespaced_pod_name(wl: &kueuesim_model::Workload, ps: usize, idx: usize) -> String {
    let mut name =
        String::with_capacity(wl.namespace.len() + 1 + kueuesim_model::objects::POD_NAME_ROOM);
    name.push_str(&wl.namespace);
    name.push('/');
    wl.push_pod_name(&mut name, ps, idx);
    name
}

#[cfg(test)]
mod tests {
    use super::{gpus, humanize, over_limit_message, over_quota_message};

    #[test]
    fn gpus_print_as_kai_humanizes_them() {
        assert_eq!(gpus(2000), "2");
        assert_eq!(gpus(0), "0");
        assert_eq!(gpus(500), "0.5");
        assert_eq!(gpus(1250), "1.25");
        assert_eq!(gpus(1001), "1.001");
        assert_eq!(gpus(-500), "-0.5");
    }

    #[test]
    fn cpu_and_memory_print_as_kai_humanizes_them() {
        // Cores from millicores, GB (10^9 bytes) from bytes, three decimals cut off.
        assert_eq!(humanize(1, 4000), "4");
        assert_eq!(humanize(1, 1500), "1.5");
        assert_eq!(humanize(2, 7_500_000_000), "7.5");
        assert_eq!(humanize(2, 1_234_567_890), "1.234");
        assert_eq!(
            over_limit_message("q", 2, 3_000_000_000, 2_500_000_000, 1_000_000_000),
            "OverLimit: q quota has reached the allowable limit of memory. Limit is 3 GB, currently 2.5 GB allocated and workload requested 1 GB."
        );
        assert_eq!(
            over_quota_message("q", 1, 2000, 1500, 1000),
            "NonPreemptibleOverQuota: Non-preemptible workload is over quota. Workload requested 1 CPU cores, but q quota is 2 cores, while 1.5 cores are already allocated for non-preemptible pods. Use a preemptible workload to go over quota.."
        );
    }
}
