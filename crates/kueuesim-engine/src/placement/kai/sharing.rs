//! KAI Scheduler's GPU sharing for jobs whose pods carry `gpu-fraction` or `gpu-memory`:
//! which nodes can take a share, how the nodeplacement and gpusharingorder plugins score
//! them, and which device the gpupack or gpuspread plugin gives the share (KAI's
//! `pkg/scheduler/gpu_sharing`, `framework.FittingGPUs`, `plugins/gpusharingorder`,
//! `plugins/gpupack`, `plugins/gpuspread`).
//!
//! A device holding KAI shares is a "GPU group" upstream: the first share on an idle device
//! opens it, and KAI's binder holds it with a reservation pod of one `nvidia.com/gpu`
//! (`Cluster::apply_claim`), so whole-GPU pods see one GPU fewer on the node until the last
//! share leaves. A share never spans devices (`gpu-fraction-num-devices` above 1 is refused
//! at load).

use kueuesim_model::gpu::{GpuShare, MILLI};
use kueuesim_model::{NodeId, PlacementStrategy, ResourceId, World};

use super::KaiJob;
use super::messages::fit_errors_with;
use crate::placement::devices::Claim;
use crate::placement::{Cluster, Placement, PodNeeds, feasible, first_pending};

/// GPU memory, where a share asks more than a device has; GPUs otherwise (KAI's
/// `pod_errors.go` short messages).
const SHORT_GPUS: &str = "node(s) didn't have enough resources: GPUs";
const SHORT_GPU_MEMORY: &str = "node(s) didn't have enough resources: GPU memory";

/// Allocates a job some of whose pod sets ask GPU shares (`shares`, per pod set): KAI's
/// allocate loop as in `place` (`minMember − allocated` tasks while below the minimum, then
/// one per pass, a failed batch undone), each task to the best node of its own ordering.
/// Topology constraints and subgroups are not applied to such jobs (docs/semantics.md).
/// `over` is the proportion plugin's capacity policy as for `place_within`; a task's GPUs are
/// its whole GPUs, or its `gpu-fraction`; a `gpu-memory` share counts 0 in the job's check
/// (`GetGpusQuota`) and its fraction of the chosen node's device in the per-node check.
pub fn place(
    world: &World,
    cluster: &mut Cluster,
    job: &KaiJob<'_>,
    shares: &[Option<GpuShare>],
    over: super::CapacityCheck<'_>,
) -> Placement {
    let mut pods = job.pods.to_vec();
    let mut out = Placement::default();
    let gpu = cluster.res.gpu;
    let milli_of = |ps: usize| -> i64 {
        let whole = gpu.map_or(0, |g| pods_gpus(job, ps, ResourceId::from_index(g)));
        match shares.get(ps).copied().flatten() {
            Some(GpuShare::Fraction(m)) => whole + i64::from(m),
            _ => whole,
        }
    };
    let mut placed = [0; 3];
    loop {
        let (bound, pending) = crate::placement::counts(&pods);
        if pending == 0 {
            break;
        }
        let need = if bound < job.min_member {
            (job.min_member - bound).min(pending)
        } else {
            1
        };
        let todo: Vec<(usize, usize)> = super::super::pending_pods(&pods)
            .map(|(ps, i, _)| (ps, i))
            .take(need)
            .collect();
        let mut request = super::amounts_of(cluster, todo.iter().map(|&(ps, _)| &pods[ps].0));
        request[0] = todo.iter().map(|&(ps, _)| milli_of(ps)).sum();
        if let Some(message) = over.and_then(|over| over(placed, request)) {
            let (ps, idx) = first_pending(&pods).unwrap_or(todo[0]);
            out.unplaced = Some((ps, idx, message));
            break;
        }
        // The batch is committed task by task (KAI's statement), so each task is scored on
        // the nodes and devices the earlier ones left.
        let mut batch: Vec<(usize, usize, NodeId, Option<Claim>)> = Vec::new();
        let mut failed = None;
        // Milli-GPUs of the batch's tasks placed so far, and of its `gpu-memory` shares.
        let mut batch_milli = 0;
        let mut memory_milli = 0;
        for (ps, idx) in todo {
            let share = shares.get(ps).copied().flatten();
            let chosen = choose(world, cluster, &pods[ps].0, share);
            // The predicates plugin's per-node capacity check
            // (`IsTaskAllocationOnNodeOverCapacity`): a `gpu-memory` share counts there as
            // its fraction of the chosen node's device (`GetRequiredInitQuota`), with what
            // the job took in this pass before it. Nodes of other GPU memory are not tried.
            let refused = match (share, chosen, over) {
                (Some(GpuShare::Memory(_)), Some((_, Some(claim))), Some(over)) => {
                    let mut so_far = placed;
                    so_far[0] += batch_milli;
                    over(so_far, [i64::from(claim.milli), 0, 0])
                }
                _ => None,
            };
            if let Some(message) = refused {
                failed = Some((
                    ps,
                    idx,
                    share,
                    Some(format!(
                        "node does not have enough capacity. Reason: {message}"
                    )),
                ));
                break;
            }
            match chosen {
                Some((node, claim)) => {
                    let milli = match share {
                        Some(GpuShare::Memory(_)) => claim.map_or(0, |c| i64::from(c.milli)),
                        _ => milli_of(ps),
                    };
                    batch_milli += milli;
                    if matches!(share, Some(GpuShare::Memory(_))) {
                        memory_milli += milli;
                    }
                    cluster.apply(world, node, &pods[ps].0.requests, 1);
                    if let Some(c) = claim {
                        cluster.apply_claim(world, node, c, 1);
                    }
                    batch.push((ps, idx, node, claim));
                }
                None => {
                    failed = Some((ps, idx, share, None));
                    break;
                }
            }
        }
        match failed {
            None => {
                super::add_amounts(&mut placed, request);
                placed[0] += memory_milli;
                for (ps, idx, node, claim) in batch {
                    pods[ps].1[idx] = Some(node);
                    out.bound.push((ps, idx, node));
                    if let Some(c) = claim {
                        out.claims.push((ps, idx, c));
                    }
                }
            }
            Some((ps, idx, share, refused)) => {
                let why = refused.unwrap_or_else(|| why_not(world, cluster, &pods[ps].0, share));
                for &(ps, _, node, claim) in batch.iter().rev() {
                    if let Some(c) = claim {
                        cluster.apply_claim(world, node, c, -1);
                    }
                    cluster.apply(world, node, &pods[ps].0.requests, -1);
                }
                let message = if bound < job.min_member {
                    format!(
                        "Resources were found for {} pods while {} are required for gang scheduling. Additional pods cannot be scheduled due to: {why}",
                        bound + batch.len(),
                        job.min_member
                    )
                } else {
                    format!(
                        "Resources were not found for pod {} due to: {why}",
                        (job.pod_name)(ps, idx)
                    )
                };
                let (ps, idx) = first_pending(&pods).unwrap_or((ps, idx));
                out.unplaced = Some((ps, idx, message));
                break;
            }
        }
    }
    out
}

/// Whole GPUs of one pod of pod set `ps` of `job`, in milli-GPUs.
fn pods_gpus(job: &KaiJob<'_>, ps: usize, g: ResourceId) -> i64 {
    job.pods.get(ps).map_or(0, |(n, _)| n.requests.get(g)) * MILLI
}

/// The device a share takes on `node`, if any fits (`FittingGPUs` sorted by the GPU order
/// plugin, first entry): with bin-pack (gpupack) the fitting shared device most used
/// (score: its used portion), before any idle device (score 0); with spread (gpuspread) an
/// idle device (score 1) before the least used fitting shared device (1 − used). Upstream
/// breaks equal scores by Go map order; here the lower device index wins. An idle device is
/// only there while the node has a whole GPU free (`Idle.GPUs()`).
fn device_for(
    cluster: &Cluster,
    node: NodeId,
    milli: u16,
    strategy: PlacementStrategy,
) -> Option<Claim> {
    let book = &cluster.devices.as_ref()?.book;
    let free = book.free(node);
    let idle_gpus = cluster.res.gpu.map_or(0, |g| cluster.nodes.free(node, g));
    let idle = (idle_gpus > 0)
        .then(|| {
            free.iter()
                .enumerate()
                .position(|(i, &f)| f == 1000 && !book.is_shared(node, i))
        })
        .flatten();
    let shared = free
        .iter()
        .enumerate()
        .filter(|&(i, &f)| book.is_shared(node, i) && f >= milli);
    let pick = match strategy {
        PlacementStrategy::Binpack => shared
            .min_by_key(|&(i, &f)| (f, i))
            .map(|(i, _)| i)
            .or(idle),
        PlacementStrategy::Spread => idle.or_else(|| {
            shared
                .max_by_key(|&(i, &f)| (f, std::cmp::Reverse(i)))
                .map(|(i, _)| i)
        }),
    }?;
    Some(Claim {
        mask: 1 << pick,
        milli,
        reserve: true,
    })
}

/// The node and device for one task: every node passing the node-level checks (and, for a
/// share, with a device for it), scored by the nodeplacement plugin (bin-pack or spread on
/// whole GPUs free, `Idle + Releasing`; cpu for CPU-only tasks) plus, under bin-pack, the
/// gpusharingorder plugin's 1000 for a node with a shared device the task fits on; ties to
/// the lower node name.
fn choose(
    world: &World,
    cluster: &Cluster,
    pod: &PodNeeds,
    share: Option<GpuShare>,
) -> Option<(NodeId, Option<Claim>)> {
    let strategy = world.config.kai.placement_strategy;
    let book = &cluster.devices.as_ref()?.book;
    let gpu_task = share.is_some()
        || cluster
            .res
            .gpu
            .is_some_and(|g| pod.requests.get(ResourceId::from_index(g)) > 0);
    let resource = if gpu_task {
        cluster.res.gpu
    } else {
        cluster.res.cpu
    };
    // The fitting nodes, each with its device for a share and whether a shared device fits.
    let mut fitting: Vec<(NodeId, Option<Claim>, bool)> = Vec::new();
    for &n in cluster.all_nodes.iter() {
        if !feasible(world, &cluster.nodes, n, pod) {
            continue;
        }
        match share {
            None => fitting.push((n, None, false)),
            Some(s) => {
                let Some(milli) = book.share_milli(n, s) else {
                    continue;
                };
                let Some(claim) = device_for(cluster, n, milli, strategy) else {
                    continue;
                };
                let on_shared =
                    (0..book.count(n)).any(|i| book.is_shared(n, i) && book.free(n)[i] >= milli);
                fitting.push((n, Some(claim), on_shared));
            }
        }
    }
    let alloc = |n: NodeId, r: usize| world.node(n).allocatable.get(r).copied().unwrap_or(0);
    // Bin-pack's range over the fitting nodes that have the resource (`setBinpackPreOrder`).
    let (mut lo, mut hi) = (i64::MAX, 0);
    if let Some(r) = resource {
        for &(n, _, _) in &fitting {
            if alloc(n, r) > 0 {
                let f = cluster.nodes.free(n, r);
                lo = lo.min(f);
                hi = hi.max(f);
            }
        }
    }
    let score = |n: NodeId, on_shared: bool| -> f64 {
        let placement = match resource {
            Some(r) if alloc(n, r) > 0 => {
                let free = cluster.nodes.free(n, r);
                match strategy {
                    PlacementStrategy::Binpack if hi == 0 => 0.0,
                    PlacementStrategy::Binpack if hi == lo => 9.0,
                    PlacementStrategy::Binpack => {
                        9.0 * (1.0 - (free - lo) as f64 / (hi - lo) as f64)
                    }
                    PlacementStrategy::Spread => free as f64 / alloc(n, r) as f64,
                }
            }
            _ => 0.0,
        };
        let sharing = match strategy {
            PlacementStrategy::Binpack if on_shared => 1000.0,
            _ => 0.0,
        };
        placement + sharing
    };
    fitting
        .into_iter()
        .map(|(n, claim, on_shared)| (score(n, on_shared), n, claim))
        .max_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(cluster.name_rank[b.1.index()].cmp(&cluster.name_rank[a.1.index()]))
        })
        .map(|(_, n, claim)| (n, claim))
}

/// KAI's fit errors for a task no node took: the node-level reasons, and for a share the
/// nodes whose devices could not hold it.
fn why_not(world: &World, cluster: &Cluster, pod: &PodNeeds, share: Option<GpuShare>) -> String {
    let strategy = world.config.kai.placement_strategy;
    let device_short = |n: NodeId| -> Option<&'static str> {
        let s = share?;
        let book = &cluster.devices.as_ref()?.book;
        match book.share_milli(n, s) {
            None => Some(SHORT_GPU_MEMORY),
            Some(m) => device_for(cluster, n, m, strategy)
                .is_none()
                .then_some(SHORT_GPUS),
        }
    };
    fit_errors_with(
        world,
        &cluster.nodes,
        pod,
        &cluster.all_nodes,
        &device_short,
    )
}
