//! Volcano's allocate action for a job with vGPU pods: the flat node search of the
//! deviceshare plugin with `deviceshare.VGPUEnable`, over the device book the `Cluster` keeps
//! (`placement::vgpu_book`: the devices, the plugin's predicate and score).

use kueuesim_model::gpu::VgpuRequest;
use kueuesim_model::{NodeId, World};

use super::{Failure, Scoring, VolcanoJob, fit_error_with, normal_pod_hypernode_score, unplaced};
use crate::placement::node_search::{feasible_nodes_to_find, sample_feasible};
use crate::placement::vgpu_book::{REASON, VgpuClaim};
use crate::placement::{Cluster, GangPods, Placement, PodNeeds, counts, tie_key};

/// Allocates a Volcano job some of whose pod sets ask vGPU devices (`reqs`, per pod set):
/// the gang (minMember) in one statement, then one pod per statement, as `volcano::place`
/// does without topology; each pod to the best of the sampled nodes that pass the
/// predicates and the deviceshare filter, scored by the node-order plugins plus the
/// deviceshare score. A job's network topology, subgroups and minTaskMember are not applied
/// to such jobs (docs/semantics.md). The claims stay taken in `cluster.vgpu` and are returned
/// beside the bindings.
pub fn place(
    world: &World,
    cluster: &mut Cluster,
    job: &VolcanoJob<'_>,
    reqs: &[Option<VgpuRequest>],
) -> Placement {
    let mut pods = job.pods.to_vec();
    let mut out = Placement::default();
    let total: usize = pods.iter().map(|(_, s)| s.len()).sum();
    loop {
        let (bound, pending) = counts(&pods);
        if pending == 0 {
            break;
        }
        let need = if bound < job.min_member {
            (job.min_member - bound).min(pending)
        } else {
            1
        };
        match attempt(world, cluster, &pods, need, reqs, job.seed) {
            Ok(b) => {
                for (ps, idx, node, claim) in b {
                    pods[ps].1[idx] = Some(node);
                    out.bound.push((ps, idx, node));
                    if claim.mask != 0 {
                        out.vgpu.push((ps, idx, claim));
                    }
                }
            }
            Err(f) => {
                let ready = bound >= job.min_member;
                out.unplaced = Some(unplaced(job, f, ready, bound, pending, total));
                break;
            }
        }
    }
    out
}

/// One statement: each of `need` pending pods to the best node, committed as it goes (so
/// later pods see its devices), all undone if one finds none.
fn attempt(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    need: usize,
    reqs: &[Option<VgpuRequest>],
    seed: u64,
) -> Result<Vec<(usize, usize, NodeId, VgpuClaim)>, Failure> {
    let all = cluster.all_nodes.clone();
    let scoring = Scoring::new(world, cluster.res);
    let mut bound: Vec<(usize, usize, NodeId, VgpuClaim)> = Vec::new();
    for (ps, (needs, slots)) in pods.iter().enumerate() {
        let req = reqs.get(ps).copied().flatten();
        for (idx, slot) in slots.iter().enumerate() {
            if bound.len() >= need {
                return Ok(bound);
            }
            if slot.is_some() {
                continue;
            }
            let best = best_node(world, cluster, &all, &scoring, needs, req, seed, ps, idx);
            match best {
                Some((node, claim)) => {
                    cluster.apply(world, node, &needs.requests, 1);
                    if let Some(book) = cluster.vgpu.as_mut() {
                        book.apply(node, claim, 1);
                    }
                    bound.push((ps, idx, node, claim));
                }
                None => {
                    let fit = why_not(world, cluster, &all, needs, req);
                    let schedulable = bound.len();
                    for &(ps, _, n, claim) in bound.iter().rev() {
                        if let Some(book) = cluster.vgpu.as_mut() {
                            book.apply(n, claim, -1);
                        }
                        cluster.apply(world, n, &pods[ps].0.requests, -1);
                    }
                    return Err(Failure {
                        pod: (ps, idx),
                        fit,
                        schedulable,
                    });
                }
            }
        }
    }
    Ok(bound)
}

/// The node for one pod: Volcano's feasible-node sampling from its rotating start, a node
/// counting as feasible when the predicates and the deviceshare filter pass; the best
/// node-order score plus the deviceshare score (and the network-topology-aware plugin's
/// normal-pod score), ties at random.
#[allow(clippy::too_many_arguments)]
fn best_node(
    world: &World,
    cluster: &mut Cluster,
    all: &[NodeId],
    scoring: &Scoring,
    needs: &PodNeeds,
    req: Option<VgpuRequest>,
    seed: u64,
    ps: usize,
    idx: usize,
) -> Option<(NodeId, VgpuClaim)> {
    let none = VgpuClaim {
        mask: 0,
        mib: 0,
        cores: 0,
    };
    let want = feasible_nodes_to_find(all.len());
    let start = cluster.next_start[1];
    let (found, processed) = match (req, cluster.vgpu.as_ref()) {
        (Some(req), Some(book)) => {
            let n = all.len();
            let mut found = Vec::new();
            let mut processed = 0;
            while processed < n && found.len() < want {
                let node = all[(start + processed) % n];
                processed += 1;
                if crate::placement::feasible(world, &cluster.nodes, node, needs)
                    && let Ok((claim, s)) = book.fit(node, req)
                {
                    found.push((node, claim, book.node_score(s)));
                }
            }
            (found, processed)
        }
        _ => {
            let (nodes, processed) =
                sample_feasible(world, &cluster.nodes, all, needs, start, want);
            (
                nodes.into_iter().map(|n| (n, none, 0.0)).collect(),
                processed,
            )
        }
    };
    if !all.is_empty() {
        cluster.next_start[1] = (start + processed) % all.len();
    }
    found
        .iter()
        .map(|&(n, claim, device)| {
            let s = scoring.node_order(world, &cluster.nodes, n, needs)
                + normal_pod_hypernode_score(world, cluster, scoring, n, needs)
                + device;
            (
                s,
                tie_key(seed ^ ((ps as u64) << 40) ^ idx as u64, n),
                n,
                claim,
            )
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
        .map(|(_, _, n, claim)| (n, claim))
}

/// Volcano's fit errors for a pod no node took: the predicates' reasons, and `REASON` for a
/// node that passed them but whose devices cannot take the request.
fn why_not(
    world: &World,
    cluster: &Cluster,
    all: &[NodeId],
    needs: &PodNeeds,
    req: Option<VgpuRequest>,
) -> String {
    let device = |n: NodeId| -> Option<&'static str> {
        let (req, book) = (req?, cluster.vgpu.as_ref()?);
        book.fit(n, req).is_err().then_some(REASON)
    };
    fit_error_with(world, &cluster.nodes, needs, all, &device)
}
