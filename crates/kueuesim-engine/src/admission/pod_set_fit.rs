//! What a pod set asks of a ClusterQueue before any flavor is chosen: its quota requests
//! (Kueue's `resources` exclusions and transformations applied), its topology request, and
//! whether a flavor may hold it at all (`checkFlavorForPodSets`, `checkPodSetAndFlavorMatchForTAS`).

use kueuesim_model::labels::tolerated;
use kueuesim_model::quota::Fr;
use kueuesim_model::{
    ClusterQueueId, FlavorId, ResourceId, ResourceList, TopologyRequest, Workload, World,
};

/// The topology request a pod set has on a ClusterQueue: its annotation, or, when every
/// flavor of the ClusterQueue is a TAS flavor, an implied unconstrained one.
pub(crate) fn tas_request(
    world: &World,
    cq: ClusterQueueId,
    ps: &kueuesim_model::PodSet,
) -> Option<TopologyRequest> {
    if let Some(r) = &ps.topology_request {
        return Some(r.clone());
    }
    let queue = world.cluster_queue(cq);
    let mut flavors = queue
        .resource_groups
        .iter()
        .flat_map(|g| &g.flavors)
        .peekable();
    let all_tas =
        flavors.peek().is_some() && flavors.all(|f| world.flavor(f.flavor).topology_name.is_some());
    all_tas.then_some(TopologyRequest::Unconstrained)
}

/// Why a flavor cannot serve a pod set's (lack of) topology request (`checkPodSetAndFlavorMatchForTAS`);
/// `request` is the pod set's `tas_request` on the ClusterQueue.
pub(super) fn tas_mismatch(
    world: &World,
    f: FlavorId,
    request: Option<&TopologyRequest>,
) -> Option<String> {
    let flavor = world.flavor(f);
    match (request, &flavor.topology_name) {
        (None, None) => None,
        (None, Some(_)) => Some(format!(
            "Flavor \"{}\" supports only TopologyAwareScheduling",
            flavor.name
        )),
        (Some(_), None) => Some(format!(
            "Flavor \"{}\" does not support TopologyAwareScheduling",
            flavor.name
        )),
        (Some(req), Some(topology)) => {
            let Some(t) = world.topology(topology) else {
                return Some(format!(
                    "Flavor \"{}\" information missing in TAS cache",
                    flavor.name
                ));
            };
            let level = match req {
                TopologyRequest::Required(l) | TopologyRequest::Preferred(l) => Some(l),
                TopologyRequest::Unconstrained => None,
            };
            match level {
                Some(l) if t.tier_of_level(l).is_none() => Some(format!(
                    "Flavor \"{}\" does not contain the requested level",
                    flavor.name
                )),
                _ => None,
            }
        }
    }
}

/// The requests of `count` pods as Kueue counts them against a ClusterQueue: the pod
/// template's requests times `count`, plus `pods: count` when the ClusterQueue covers the
/// `pods` resource. Scaled in the one copy (this runs for every head of every cycle).
///
/// Kueue's `resources` configuration applies first: resources with an excluded prefix are
/// dropped, and each transformation adds its outputs per unit of its input (keeping the input
/// with `Retain`, dropping it with `Replace`).
pub(super) fn quota_requests(
    world: &World,
    cq: ClusterQueueId,
    per_pod: &ResourceList,
    count: u32,
) -> ResourceList {
    let mut req = ResourceList::default();
    let pods = world.resources.lookup("pods");
    quota_requests_into(world, cq, per_pod, count, pods, &mut req);
    req
}

/// `quota_requests`, written into `req` (its vector reused: this runs for every head);
/// `pods` is the id of the `pods` resource, if the world has one.
pub(super) fn quota_requests_into(
    world: &World,
    cq: ClusterQueueId,
    per_pod: &ResourceList,
    count: u32,
    pods: Option<ResourceId>,
    req: &mut ResourceList,
) {
    let rc = &world.config.kueue.resources;
    let n = i64::from(count);
    if rc.exclude_prefixes.is_empty() && rc.transformations.is_empty() {
        per_pod.scale_into(n, req);
    } else {
        let mut pairs: Vec<(ResourceId, i64)> = Vec::new();
        for (r, a) in per_pod.iter() {
            let name = world.resources.name(r);
            if rc
                .exclude_prefixes
                .iter()
                .any(|p| name.starts_with(p.as_str()))
            {
                continue;
            }
            match rc.transformations.iter().find(|t| t.input == r) {
                Some(t) => {
                    // cpu is counted in millis: a per-unit output scales by cores.
                    let units = if name == "cpu" {
                        a as f64 / 1000.0
                    } else {
                        a as f64
                    };
                    for &(out, per) in &t.outputs {
                        pairs.push((out, (units * per as f64).ceil() as i64));
                    }
                    if t.retain {
                        pairs.push((r, a));
                    }
                }
                None => pairs.push((r, a)),
            }
        }
        *req = ResourceList::from_pairs(pairs).scaled(n);
    }
    debug_assert_eq!(pods, world.resources.lookup("pods"));
    if let Some(pods) = pods
        && world.cluster_queue(cq).group_of(pods).is_some()
    {
        req.set(pods, n);
    }
}

/// Whether flavor `f` may hold pod set `ps` at all (`checkFlavorForPodSets`): flavor taints
/// tolerated by the pod's and the flavor's tolerations, and the pod's nodeSelector agreeing
/// with the flavor's nodeLabels on the keys the flavor defines. Returns the reason if not.
pub(super) fn flavor_mismatch(
    world: &World,
    f: FlavorId,
    wl: &Workload,
    ps: usize,
) -> Option<String> {
    let flavor = world.flavor(f);
    let pod = &wl.pod_sets[ps];
    for taint in flavor
        .node_taints
        .iter()
        .filter(|t| t.effect.blocks_scheduling())
    {
        if !tolerated(taint, &pod.tolerations, &flavor.tolerations) {
            // Kueue formats the corev1.Taint struct with %s: `{key value Effect <nil>}`.
            return Some(format!(
                "untolerated taint {{{} {} {} <nil>}} in flavor {}",
                taint.key,
                taint.value,
                taint.effect.as_str(),
                flavor.name
            ));
        }
    }
    let mismatch = pod
        .node_selector
        .iter()
        .any(|(k, v)| flavor.node_labels.get(k).is_some_and(|fv| fv != v));
    if mismatch {
        return Some(format!(
            "flavor {} doesn't match node affinity",
            flavor.name
        ));
    }
    None
}

/// Sorts usage by `Fr` and sums the amounts of each, in place (it runs for every pod set of
/// every assignment, so it allocates nothing).
pub(super) fn merge_usage(mut v: Vec<(Fr, i64)>) -> Vec<(Fr, i64)> {
    kueuesim_model::resources::sum_by_key(&mut v);
    v
}
