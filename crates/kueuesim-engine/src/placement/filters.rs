//! kube-scheduler's filters (NodeUnschedulable, TaintToleration, NodeAffinity,
//! NodeResourcesFit) over nodes, and the `FitError` message that explains a pod fitting none.

use std::collections::BTreeMap;

use kueuesim_model::labels::tolerated;
use kueuesim_model::{NodeId, ResourceList, World};

use super::{Cluster, NodeCapacity, PodNeeds, devices, nodes_matching};

/// The resources `requests` asks a positive amount of, as indices (what
/// `NodeCapacity::candidates` takes).
pub fn positive_requests(requests: &ResourceList) -> Vec<usize> {
    requests
        .iter()
        .filter(|&(_, a)| a > 0)
        .map(|(r, _)| r.index())
        .collect()
}

/// The filter phase's walk over nodes `0..n` from `start`, wrapping (kube-scheduler's
/// `findNodesThatPassFilters` from `nextStartNodeIndex`), handing `visit` only the nodes
/// `cap.candidates` leaves in for a pod asking for `positive`: the others fail NodeResourcesFit
/// whatever else holds, so skipping them changes nothing but the time spent. Stops at the
/// first node for which `visit` returns true and returns it; None when the walk went round.
pub fn scan_candidates(
    cap: &NodeCapacity,
    n: usize,
    start: usize,
    positive: &[usize],
    mut visit: impl FnMut(NodeId) -> bool,
) -> Option<NodeId> {
    for (lo, hi) in [(start, n), (0, start.min(n))] {
        if lo >= hi {
            continue;
        }
        for word in lo / 64..=(hi - 1) / 64 {
            let mut mask = cap.candidates(word, positive);
            let base = word * 64;
            if base < lo {
                mask &= u64::MAX << (lo - base);
            }
            if hi - base < 64 {
                mask &= (1u64 << (hi - base)) - 1;
            }
            while mask != 0 {
                let node = NodeId::from_index(base + mask.trailing_zeros() as usize);
                mask &= mask - 1;
                if visit(node) {
                    return Some(node);
                }
            }
        }
    }
    None
}

/// Why a node cannot take a pod: kube-scheduler's filter reasons.
pub(super) fn node_rejections(
    world: &World,
    cap: &NodeCapacity,
    node: NodeId,
    pod: &PodNeeds,
) -> Vec<String> {
    let n = world.node(node);
    if n.unschedulable {
        return vec!["node(s) were unschedulable".into()];
    }
    if let Some(t) = n
        .taints
        .iter()
        .find(|t| t.effect.blocks_scheduling() && !tolerated(t, &pod.tolerations, &[]))
    {
        return vec![format!("node(s) had untolerated taint {t}")];
    }
    if !n.labels.contains_all(&pod.node_selector) {
        return vec!["node(s) didn't match Pod's node affinity/selector".into()];
    }
    let mut out = Vec::new();
    if cap.free_pods[node.index()] < 1 {
        out.push("Too many pods".to_string());
    }
    for (r, a) in pod.requests.iter() {
        if a > cap.free(node, r.index()) {
            out.push(format!("Insufficient {}", world.resources.name(r)));
        }
    }
    out
}

/// The filters that do not depend on free capacity: unschedulable, taints, node selector.
#[inline]
pub fn statically_feasible(world: &World, node: NodeId, pod: &PodNeeds) -> bool {
    let n = world.node(node);
    !n.unschedulable
        && n.taints
            .iter()
            .all(|t| !t.effect.blocks_scheduling() || tolerated(t, &pod.tolerations, &[]))
        && n.labels.contains_all(&pod.node_selector)
}

/// Every filter.
#[inline]
pub fn feasible(world: &World, cap: &NodeCapacity, node: NodeId, pod: &PodNeeds) -> bool {
    cap.fits(node, &pod.requests) && statically_feasible(world, node, pod)
}

/// Why a node turned a pod down, as kube-scheduler's FitError counts it.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Cause {
    Unschedulable,
    Taint(NodeId, usize),
    Selector,
    TooManyPods,
    Insufficient(usize),
    Devices,
}

/// Adds to `counts` why each of `nodes` cannot take `pod` (the first failing static filter,
/// else every short resource). Taints are told apart by their text: `taint_of` remembers one
/// node carrying each. `static_ok`: the caller knows every node passes the static filters.
/// `devices`: the pod's GPU demand on the devices, when they are bookkept.
#[allow(clippy::too_many_arguments)]
pub(super) fn count_causes(
    world: &World,
    cap: &NodeCapacity,
    pod: &PodNeeds,
    nodes: &[NodeId],
    static_ok: bool,
    counts: &mut BTreeMap<Cause, usize>,
    taint_of: &mut Vec<(String, NodeId, usize)>,
    devices: Option<(&devices::DeviceBook, kueuesim_model::gpu::GpuDemand)>,
) {
    let mut no_device = 0usize;
    let mut capacity = CapacityCauses::new(pod);
    for &n in nodes {
        if !static_ok {
            let node = world.node(n);
            if node.unschedulable {
                *counts.entry(Cause::Unschedulable).or_default() += 1;
                continue;
            }
            if let Some((ti, t)) =
                node.taints.iter().enumerate().find(|(_, t)| {
                    t.effect.blocks_scheduling() && !tolerated(t, &pod.tolerations, &[])
                })
            {
                let text = t.to_string();
                let key = match taint_of.iter().find(|x| x.0 == text) {
                    Some(&(_, kn, kt)) => Cause::Taint(kn, kt),
                    None => {
                        taint_of.push((text, n, ti));
                        Cause::Taint(n, ti)
                    }
                };
                *counts.entry(key).or_default() += 1;
                continue;
            }
            if !node.labels.contains_all(&pod.node_selector) {
                *counts.entry(Cause::Selector).or_default() += 1;
                continue;
            }
        }
        let fits = capacity.add(cap, n, 1);
        // The GPU-share filter (`Open-Gpu-Share`) runs after NodeResourcesFit.
        if fits && devices.is_some_and(|(book, d)| !book.fits(n, d)) {
            no_device += 1;
        }
    }
    if no_device > 0 {
        *counts.entry(Cause::Devices).or_default() += no_device;
    }
    capacity.fold_into(counts);
}

/// NodeResourcesFit's causes (`Too many pods`, `Insufficient <resource>`, each counted on its
/// own), the common ones on a busy cluster: tallied in plain integers node by node (or class
/// by class) and folded into the cause counts once at the end.
struct CapacityCauses {
    too_many_pods: usize,
    /// Per requested resource: (resource, amount, nodes short of it).
    short: Vec<(usize, i64, usize)>,
}

impl CapacityCauses {
    fn new(pod: &PodNeeds) -> Self {
        CapacityCauses {
            too_many_pods: 0,
            short: pod
                .requests
                .iter()
                .map(|(r, a)| (r.index(), a, 0usize))
                .collect(),
        }
    }

    /// Counts `node`'s causes `times` times (a class's nodes at once); whether it fits.
    fn add(&mut self, cap: &NodeCapacity, node: NodeId, times: usize) -> bool {
        let mut fits = true;
        if cap.free_pods[node.index()] < 1 {
            self.too_many_pods += times;
            fits = false;
        }
        for (r, a, c) in self.short.iter_mut() {
            if *a > cap.free(node, *r) {
                *c += times;
                fits = false;
            }
        }
        fits
    }

    fn fold_into(self, counts: &mut BTreeMap<Cause, usize>) {
        if self.too_many_pods > 0 {
            *counts.entry(Cause::TooManyPods).or_default() += self.too_many_pods;
        }
        for (r, _, c) in self.short {
            if c > 0 {
                *counts.entry(Cause::Insufficient(r)).or_default() += c;
            }
        }
    }
}

/// `count_causes` for a pod whose static filters pass on every node counted (plain nodes:
/// none unschedulable or tainted, and the nodeSelector's nodes alone, `nodes`; None: every
/// node), read from the occupancy classes (which must be up to date): a class's nodes are
/// short of the same resources and pod slots, so one member answers for all of them. The
/// nodes are counted per class (one read each), not checked resource by resource.
pub(super) fn count_causes_by_class(
    cap: &NodeCapacity,
    pod: &PodNeeds,
    nodes: Option<&[NodeId]>,
    counts: &mut BTreeMap<Cause, usize>,
) {
    let classes = cap.classes();
    let mut per_class = vec![0usize; classes.len()];
    match nodes {
        Some(list) => {
            for &n in list {
                per_class[classes.class_of(n)] += 1;
            }
        }
        None => {
            for (k, m) in per_class.iter_mut().enumerate() {
                *m = classes.count(k) as usize;
            }
        }
    }
    let mut capacity = CapacityCauses::new(pod);
    for (k, &m) in per_class.iter().enumerate() {
        if m > 0 {
            capacity.add(cap, classes.some_member(k), m);
        }
    }
    capacity.fold_into(counts);
}

/// kube-scheduler's `FitError` message for a pod none of `nodes` can take:
/// `0/N nodes are available: <count> <reason>, ... .` with the entries sorted as strings.
pub fn fit_error(world: &World, cap: &NodeCapacity, pod: &PodNeeds, nodes: &[NodeId]) -> String {
    // Counted by cause without building strings per node (this runs on every failed attempt):
    // the words are made once per distinct cause at the end.
    let mut counts: BTreeMap<Cause, usize> = BTreeMap::new();
    count_causes(
        world,
        cap,
        pod,
        nodes,
        false,
        &mut counts,
        &mut Vec::new(),
        None,
    );
    format_fit_error(world, counts, nodes.len())
}

/// `fit_error` over every node of the cluster. On a cluster of plain nodes (no unschedulable
/// node, no blocking taint) only capacity is checked per node; with a nodeSelector, every
/// node the selector does not match counts as "didn't match Pod's node affinity/selector"
/// without reading its labels, and only the matching nodes (label index) are looked at, by
/// occupancy class when the classes are few (`count_causes_by_class`). Same message.
pub fn fit_error_all(world: &World, cluster: &mut Cluster, pod: &PodNeeds) -> String {
    // With GPU devices every node is looked at (a device's free share is no plain count);
    // without, a pod whose only constraints are amounts takes the plain path.
    let on_devices = cluster
        .devices
        .as_ref()
        .is_some_and(|d| d.book.demand(&pod.requests).is_some());
    if !on_devices && cluster.plain_nodes && cluster.nodes.node_classes_if_few() {
        // Plain nodes, no devices: every node the selector matches (all of them without
        // one) passes the static filters, and capacity is the whole story.
        let labels = cluster.label_index.clone();
        let matching =
            (!pod.node_selector.is_empty()).then(|| nodes_matching(&labels, &pod.node_selector));
        let mut counts: BTreeMap<Cause, usize> = BTreeMap::new();
        count_causes_by_class(&cluster.nodes, pod, matching.as_deref(), &mut counts);
        let others = world.nodes.len() - matching.as_ref().map_or(world.nodes.len(), |m| m.len());
        if others > 0 {
            *counts.entry(Cause::Selector).or_default() += others;
        }
        return format_fit_error(world, counts, world.nodes.len());
    }
    let devices = cluster
        .devices
        .as_ref()
        .and_then(|d| d.book.demand(&pod.requests).map(|g| (&d.book, g)));
    if devices.is_some() || cluster.statically_plain(pod) {
        let mut counts: BTreeMap<Cause, usize> = BTreeMap::new();
        let all = &cluster.all_nodes;
        count_causes(
            world,
            &cluster.nodes,
            pod,
            all,
            devices.is_none(),
            &mut counts,
            &mut Vec::new(),
            devices,
        );
        return format_fit_error(world, counts, all.len());
    }
    if cluster.plain_nodes {
        let matching = nodes_matching(&cluster.label_index, &pod.node_selector);
        let mut counts: BTreeMap<Cause, usize> = BTreeMap::new();
        let cap = &cluster.nodes;
        count_causes(
            world,
            cap,
            pod,
            &matching,
            true,
            &mut counts,
            &mut Vec::new(),
            None,
        );
        let others = world.nodes.len() - matching.len();
        if others > 0 {
            *counts.entry(Cause::Selector).or_default() += others;
        }
        return format_fit_error(world, counts, world.nodes.len());
    }
    fit_error(world, &cluster.nodes, pod, &cluster.all_nodes)
}

/// The FitError text from the per-cause counts over `total` nodes.
pub(super) fn format_fit_error(
    world: &World,
    counts: BTreeMap<Cause, usize>,
    total: usize,
) -> String {
    let histogram: BTreeMap<String, usize> = counts
        .into_iter()
        .map(|(cause, c)| {
            let text = match cause {
                Cause::Unschedulable => "node(s) were unschedulable".to_string(),
                Cause::Taint(n, t) => {
                    format!("node(s) had untolerated taint {}", world.node(n).taints[t])
                }
                Cause::Selector => "node(s) didn't match Pod's node affinity/selector".to_string(),
                Cause::TooManyPods => "Too many pods".to_string(),
                Cause::Devices => "node(s) had no GPU device free enough for the pod".to_string(),
                Cause::Insufficient(r) => format!(
                    "Insufficient {}",
                    world
                        .resources
                        .name(kueuesim_model::ResourceId::from_index(r))
                ),
            };
            (text, c)
        })
        .collect();
    let mut parts: Vec<String> = histogram.iter().map(|(r, c)| format!("{c} {r}")).collect();
    parts.sort();
    format!("0/{} nodes are available: {}.", total, parts.join(", "))
}

/// Every node of the cluster, in id order.
pub fn all_nodes(world: &World) -> Vec<NodeId> {
    (0..world.nodes.len()).map(NodeId::from_index).collect()
}
