//! KAI Scheduler's allocate action for one job (a PodGroup): tasks to allocate are
//! `minMember − allocated` while below the minimum, then one per pass; with a topology
//! constraint the topology plugin's candidate domains (sorted tree, bottom-up candidate
//! levels, first fitting domain wins) and preferred-subdomain node scores, then the
//! nodeplacement plugin's bin-pack or spread; score ties go by node name (KAI's
//! `pkg/scheduler/actions/allocate`, `plugins/topology`, `plugins/nodeplacement`).
//!
//! Files by concern: this one the job types and the allocate loop; `topology` the topology
//! plugin (candidate domains, `checkJobDomainFit`); `nodeplacement` the node scores;
//! `subgroups` PodGroup subgroups; `messages` KAI's wording of failures; `reclaim` fair shares
//! and reclaim; `resources` the proportion plugin's per-resource shares and checks (GPU, CPU, memory); `queue_order` the order the session's actions take pending jobs in; `consolidation` the consolidation action's victims and search; `sharing` GPU sharing (`gpu-fraction`, `gpu-memory`). The indexes the
//! `Cluster` keeps in step for KAI on every bind and release are shared bookkeeping, in the
//! folder above: `placement::fit_counts` (per-domain `AllocatablePods` counts),
//! `placement::domain_order` (each domain's nodes in bin-pack order, which a dry run of alike
//! GPU pods reads) and `placement::commit` (an allocation's batched commit).

mod consolidation;
mod messages;
mod nodeplacement;
mod queue_order;
mod reclaim;
mod resources;
pub mod sharing;
mod subgroups;
mod topology;

use kueuesim_model::gpu::MILLI;
use kueuesim_model::{PlacementStrategy, ResourceId, World};

use super::{Cluster, GangPods, Placement, PodNeeds, fill, record_bindings, undo, with_bindings};
pub use consolidation::{ConsolidationPlan, MAX_CONSOLIDATION_PREEMPTEES, consolidation_plan};
use messages::{display_name, fit_errors};
use nodeplacement::{fill_binpack, scored_resource, scorer};
pub use queue_order::{JobsOrder, PendingJob};
pub use reclaim::{
    Piece, QueueState, Reclaimer, RunningJob, VictimPod, Victims, fair_shares, preempt_victims,
    protection_ends, reclaim_victims,
};
pub use resources::{Amounts, CpuMemory, CpuMemoryState, ResourceShares, divide as divide_shares};
pub use subgroups::{KaiTree, place_tree, place_tree_within};
use topology::topology_attempt;

/// A KAI topology constraint resolved against its Topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KaiConstraint {
    /// Index into `world.topologies`.
    pub topology: usize,
    /// Depth (1 = broadest level) of `requiredTopologyLevel`.
    pub required: Option<u32>,
    /// Depth of `preferredTopologyLevel`.
    pub preferred: Option<u32>,
}

/// A KAI job as the allocate action sees it.
pub struct KaiJob<'a> {
    /// Its pods.
    pub pods: &'a GangPods,
    /// PodGroup `minMember`.
    pub min_member: usize,
    /// Its topology constraint, if any.
    pub constraint: Option<KaiConstraint>,
    /// `<namespace>/<podgroup>` for messages.
    pub job_name: &'a str,
    /// `<namespace>/<pod>` of a pod, for messages.
    pub pod_name: &'a dyn Fn(usize, usize) -> String,
}

/// How many passes of KAI's allocate action a call makes for a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passes {
    /// Pass after pass until every task is bound or a pass fails: a job KAI's session does
    /// not order against others (placed when released or retried).
    All,
    /// The next pass only (the job's minimum while below it, else one more task): KAI's
    /// session pushes the job back into its `JobsOrderByQueues` after a pass that left
    /// tasks to allocate (`PushJob`), so the other jobs' passes come in between.
    One,
}

/// Allocates the job: `minMember − allocated` tasks while below the minimum, then one task
/// per pass, every pass at once ([`Passes::All`]). An attempt that succeeds leaves its
/// bindings on the node capacity (the dry run kept), committed to the per-domain indexes in
/// one batch; a failed one leaves nothing.
pub fn place(world: &World, cluster: &mut Cluster, job: &KaiJob<'_>) -> Placement {
    place_within(world, cluster, job, None, Passes::All)
}

/// The proportion plugin's capacity check as allocation calls it: `over(placed, request)`
/// gets what the job bound so far in this call and what the pass's tasks ask (GPUs in
/// milli-GPUs, as KAI's queues count GPU shares, CPU in millicores, memory in bytes), and
/// returns KAI's message when the queue would go over a limit (or a non-preemptible job over
/// its quota).
pub type CapacityCheck<'a> = Option<&'a dyn Fn(Amounts, Amounts) -> Option<String>>;

/// The GPUs (milli-GPUs, whole GPUs only), CPU and memory of `count` pods of `needs` each,
/// summed: what the capacity policy counts of tasks (`getRequiredQuota`).
pub fn amounts_of<'n>(cluster: &Cluster, needs: impl IntoIterator<Item = &'n PodNeeds>) -> Amounts {
    let of =
        |n: &PodNeeds, r: Option<usize>| r.map_or(0, |r| n.requests.get(ResourceId::from_index(r)));
    needs.into_iter().fold([0; 3], |a, n| {
        [
            a[0] + of(n, cluster.res.gpu) * MILLI,
            a[1] + of(n, cluster.res.cpu),
            a[2] + of(n, cluster.res.memory),
        ]
    })
}

/// Adds amount `b` to `a`.
pub fn add_amounts(a: &mut Amounts, b: Amounts) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// [`place`] under the proportion plugin's capacity policy (`IsJobOverQueueCapacity`, run
/// before every pass of `AllocateJob`), when given ([`CapacityCheck`]); the job stops where
/// it refuses a pass. With [`Passes::One`], the call stops after the first pass that
/// succeeds, its other tasks pending and no `unplaced` reason.
pub fn place_within(
    world: &World,
    cluster: &mut Cluster,
    job: &KaiJob<'_>,
    over: CapacityCheck<'_>,
    passes: Passes,
) -> Placement {
    let mut pods = job.pods.to_vec();
    let mut out = Placement::default();
    let mut placed = [0; 3];
    loop {
        let (bound, pending) = super::counts(&pods);
        if pending == 0 {
            break;
        }
        let need = if bound < job.min_member {
            (job.min_member - bound).min(pending)
        } else {
            1
        };
        if let Some(over) = over {
            let request = amounts_of(
                cluster,
                pods.iter()
                    .flat_map(|(n, slots)| slots.iter().filter(|x| x.is_none()).map(move |_| n))
                    .take(need),
            );
            if let Some(message) = over(placed, request) {
                let (ps, idx) = super::first_pending(&pods).unwrap_or((0, 0));
                out.unplaced = Some((ps, idx, message));
                break;
            }
        }
        let attempt = match job.constraint {
            Some(c) => topology_attempt(world, cluster, &pods, need, c, job.job_name),
            None => {
                let all = cluster.all_nodes.clone();
                let (group_of, scores) = (Vec::new(), vec![0.0]);
                let resource = scored_resource(cluster, &pods);
                let indexed = world.config.kai.placement_strategy == PlacementStrategy::Binpack
                    && resource.is_some()
                    && resource == cluster.res.gpu
                    && pods.iter().all(|(n, slots)| {
                        slots.iter().all(Option::is_some)
                            || resource
                                .is_some_and(|g| n.requests.get(ResourceId::from_index(g)) > 0)
                    });
                let filled = if indexed {
                    fill_binpack(world, cluster, &pods, need)
                } else {
                    let mut s = scorer(
                        world,
                        &cluster.nodes,
                        resource,
                        &cluster.name_rank,
                        &all,
                        &group_of,
                        &scores,
                    );
                    fill(world, &mut cluster.nodes, &all, &pods, need, &mut s)
                };
                // A success stays on the nodes (committed below); a failure is undone.
                filled.map_err(|(b, (ps, idx))| {
                    let failed = with_bindings(&pods, &b);
                    let why = fit_errors(world, &cluster.nodes, &failed[ps].0, &all);
                    undo(&mut cluster.nodes, &pods, &b);
                    if bound < job.min_member {
                        format!(
                            "Resources were found for {} pods while {} are required for gang scheduling. Additional pods cannot be scheduled due to: {why}",
                            bound + b.len(),
                            job.min_member
                        )
                    } else {
                        format!(
                            "Resources were not found for pod {} due to: {why}",
                            (job.pod_name)(ps, idx)
                        )
                    }
                })
            }
        };
        match attempt {
            Ok(b) => {
                // The attempt's bindings are on the nodes already (the winning dry run is
                // kept, as upstream commits its statement): bring the rest of the cluster in
                // step.
                cluster.commit_bound(world, &pods, &b);
                if over.is_some() {
                    add_amounts(
                        &mut placed,
                        amounts_of(cluster, b.iter().map(|&(ps, _, _)| &pods[ps].0)),
                    );
                }
                record_bindings(&mut pods, &b);
                if let Some(c) = job.constraint {
                    let t = &world.topologies[c.topology];
                    out.domain = pods
                        .iter()
                        .flat_map(|(_, s)| s.iter().flatten())
                        .filter_map(|&n| t.domain_of(n))
                        .reduce(|a, b| t.lca(a, b))
                        .map(|d| display_name(t, d));
                }
                out.bound.extend(b);
                if passes == Passes::One {
                    break;
                }
            }
            Err(message) => {
                let (ps, idx) = super::first_pending(&pods).unwrap_or((0, 0));
                out.unplaced = Some((ps, idx, message));
                break;
            }
        }
    }
    out
}
