//! Kueue Topology-Aware Scheduling: where in a TAS flavor's topology a pod set's pods go,
//! decided at admission (`findTopologyAssignment`, pkg/cache/scheduler/tas_flavor_snapshot.go).
//!
//! Input: the flavor's topology tree and, per node, how many pods of the pod set still fit
//! (its free capacity after the pods bound there and the TAS pods already assigned to it).
//! Output: per lowest-level domain, a pod count, or Kueue's reason why not.

use std::sync::{Arc, Mutex};

use kueuesim_model::labels::{Labels, Toleration, tolerated};
use kueuesim_model::{DomainId, FlavorId, NodeId, PodSet, ResourceList, Topology, World};

use crate::placement::NodeCapacity;

/// A pod set's place in its flavor's topology, decided at admission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyAssignment {
    /// Index into `world.topologies`.
    pub topology: usize,
    /// Per lowest-level domain, in tree order: the pods it gets.
    pub domains: Vec<(DomainId, u32)>,
}

/// Per leaf domain, the pods that fit; the number of leaves in the snapshot; and, per reason,
/// how many leaves were excluded (Kueue's "excluded" histogram).
pub type LeafCapacity = (Vec<(DomainId, u32)>, usize, Vec<(String, usize)>);

/// What Kueue's TAS cache sees of the nodes: free capacity after the pods bound there and
/// the TAS pods assigned there but not bound yet.
#[derive(Clone, Debug)]
pub struct TasCapacity {
    /// Per node.
    pub nodes: NodeCapacity,
    /// Per flavor, per node: whether the node is in the flavor's TAS snapshot (schedulable,
    /// with the flavor's node labels). Fixed for a run, worked out once and shared.
    pub in_flavor: Arc<Vec<Vec<bool>>>,
    /// The same books on the empty cluster (`WithSimulateEmpty`), shared; None when the
    /// world has no TAS flavor.
    pub empty: Option<Arc<TasCapacity>>,
    /// Per `world.topologies` entry: its leaf domains (the lowest level), depth-first.
    pub leaves: Arc<Vec<Vec<DomainId>>>,
    /// Hostname-leaf topologies: per (topology, flavor, pod nodeSelector, pod tolerations), the
    /// node of each leaf in the snapshot and why the pod cannot go there (taint, selector).
    /// Nodes, their labels and taints are fixed for a run, so this is worked out once per
    /// kind of pod set and shared by every cycle's view.
    pub exclusions: Arc<Mutex<ExclusionMemo>>,
    /// Per `world.topologies` entry: its domains by depth and by name (`DomainOrder`).
    pub orders: Arc<Vec<DomainOrder>>,
}

/// A topology's domains as `find_assignment_in` walks them, fixed for a run: per depth, the
/// domains there in tree order, and each domain's rank by name (Kueue breaks count ties by
/// the level values, i.e. the name), so sorting compares integers, not strings.
#[derive(Clone, Debug)]
pub struct DomainOrder {
    by_depth: Vec<Vec<DomainId>>,
    name_rank: Vec<u32>,
}

impl DomainOrder {
    /// Works out the order of `t`.
    pub fn new(t: &Topology) -> Self {
        let depths = t
            .domains
            .iter()
            .map(|d| d.depth)
            .max()
            .map_or(0, |d| d as usize + 1);
        let mut by_depth = vec![Vec::new(); depths];
        for d in t.dfs() {
            by_depth[t.domain(d).depth as usize].push(d);
        }
        let mut by_name: Vec<usize> = (0..t.domains.len()).collect();
        by_name.sort_by(|&a, &b| t.domains[a].name.cmp(&t.domains[b].name).then(a.cmp(&b)));
        let mut name_rank = vec![0u32; t.domains.len()];
        let mut rank = 0;
        for (i, &d) in by_name.iter().enumerate() {
            // Equal names share a rank, so ties stay ties (the sort is stable).
            if i > 0 && t.domains[by_name[i - 1]].name != t.domains[d].name {
                rank += 1;
            }
            name_rank[d] = rank;
        }
        DomainOrder {
            by_depth,
            name_rank,
        }
    }

    fn at_depth(&self, depth: u32) -> Vec<DomainId> {
        self.by_depth
            .get(depth as usize)
            .cloned()
            .unwrap_or_default()
    }

    fn name_cmp(&self, a: DomainId, b: DomainId) -> std::cmp::Ordering {
        self.name_rank[a.index()].cmp(&self.name_rank[b.index()])
    }
}

/// The key of one `TasCapacity::exclusions` entry.
type ExclusionKey = (usize, FlavorId, Labels, Vec<Toleration>);

/// Per leaf (in `leaves` order): its node in the flavor's snapshot, if any, and the first
/// filter the pod fails there.
type LeafExclusions = Arc<Vec<Option<(NodeId, Option<String>)>>>;

/// Memo of `exclusion` per leaf, by kind of pod set.
#[derive(Debug, Default)]
pub struct ExclusionMemo(Vec<(ExclusionKey, LeafExclusions)>);

impl TasCapacity {
    /// Kueue's TAS view of `world` with no pod anywhere, `empty` pointing at a copy of itself
    /// (for `WithSimulateEmpty`).
    pub fn new(world: &World) -> Self {
        let in_flavor: Arc<Vec<Vec<bool>>> = Arc::new(
            world
                .flavors
                .iter()
                .map(|f| {
                    if f.topology_name.is_none() {
                        return Vec::new();
                    }
                    world
                        .nodes
                        .iter()
                        .map(|n| !n.unschedulable && n.labels.contains_all(&f.node_labels))
                        .collect()
                })
                .collect(),
        );
        let leaves = Arc::new(
            world
                .topologies
                .iter()
                .map(|t| {
                    let lowest = t.domains.iter().map(|d| d.depth).max().unwrap_or(0);
                    t.dfs()
                        .filter(|&d| t.domain(d).depth == lowest && d != DomainId::ROOT)
                        .collect()
                })
                .collect(),
        );
        let bare = TasCapacity {
            nodes: NodeCapacity::new(world),
            in_flavor,
            empty: None,
            leaves,
            exclusions: Arc::default(),
            orders: Arc::new(world.topologies.iter().map(DomainOrder::new).collect()),
        };
        TasCapacity {
            empty: Some(Arc::new(bare.clone())),
            ..bare
        }
    }

    /// No nodes at all (the TAS view of a world without TAS flavors).
    pub fn none() -> Self {
        TasCapacity {
            nodes: NodeCapacity::empty(),
            in_flavor: Arc::new(Vec::new()),
            empty: None,
            leaves: Arc::new(Vec::new()),
            exclusions: Arc::default(),
            orders: Arc::new(Vec::new()),
        }
    }
}

/// The first per-pod filter a node fails (only checked when the lowest level is the
/// hostname): taints not tolerated by the pod or the flavor, then the pod's nodeSelector.
fn exclusion(world: &World, flavor: FlavorId, ps: &PodSet, node: NodeId) -> Option<String> {
    let n = world.node(node);
    let f = world.flavor(flavor);
    if let Some(t) = n
        .taints
        .iter()
        .find(|t| t.effect.blocks_scheduling() && !tolerated(t, &ps.tolerations, &f.tolerations))
    {
        let value = if t.value.is_empty() {
            String::new()
        } else {
            format!("={}", t.value)
        };
        return Some(format!("taint \"{}{value}:{}\"", t.key, t.effect.as_str()));
    }
    if !n.labels.contains_all(&ps.node_selector) {
        return Some("nodeSelector".into());
    }
    None
}

/// A pod's requests as `leaf_pods` reads them: (resource index, amount, name), without
/// `pods` (counted on its own) and without zero amounts. Worked out once per pod set, not
/// once per leaf.
fn leaf_requests<'w>(world: &'w World, requests: &ResourceList) -> Vec<(usize, i64, &'w str)> {
    requests
        .iter()
        .map(|(r, a)| (r.index(), a, world.resources.name(r)))
        .filter(|&(_, a, name)| a > 0 && name != "pods")
        .collect()
}

/// Pods per leaf: the capacity of a leaf for pods of `requests` (`leaf_requests`; + one
/// `pods` slot each), and, if none fit, the most limiting resource (ties: the first name).
fn leaf_pods(
    free: impl Fn(usize) -> i64,
    free_pods: i64,
    requests: &[(usize, i64, &str)],
) -> (u32, Option<String>) {
    let mut fit = free_pods.max(0);
    let mut limiting: Option<(i64, &str)> = Some((fit, "pods"));
    for &(r, a, name) in requests {
        let k = free(r).max(0) / a;
        if limiting.is_none_or(|(lk, ln)| k < lk || (k == lk && name < ln)) {
            limiting = Some((k, name));
        }
        fit = fit.min(k);
    }
    let why = (fit == 0).then(|| format!("resource \"{}\"", limiting.map_or("pods", |l| l.1)));
    (u32::try_from(fit).unwrap_or(u32::MAX), why)
}

impl TasCapacity {
    /// Per leaf domain of topology `t` (the lowest level): how many pods of pod set `ps` fit
    /// on `flavor`, as Kueue's TAS snapshot sees it. Only schedulable nodes with the flavor's
    /// node labels are in the snapshot; with the hostname as the lowest level each node is a
    /// leaf and the pod's taints and nodeSelector filter it, otherwise a leaf sums its nodes'
    /// free capacity. Also returns the number of leaves and the "excluded" histogram.
    pub fn pods_per_leaf(
        &self,
        world: &World,
        topology: usize,
        flavor: FlavorId,
        ps: &PodSet,
    ) -> LeafCapacity {
        let t = &world.topologies[topology];
        let f = world.flavor(flavor);
        let hostname_leaves = matches!(&t.source, kueuesim_model::topology::TopologySource::Levels { labels } if labels.last().is_some_and(|l| l == "kubernetes.io/hostname"));
        let mask = self.in_flavor.get(flavor.index()).filter(|m| !m.is_empty());
        let in_snapshot = |n: NodeId| match mask {
            Some(m) => m[n.index()],
            None => {
                let node = world.node(n);
                !node.unschedulable && node.labels.contains_all(&f.node_labels)
            }
        };
        let computed;
        let leaf_domains: &[DomainId] = match self.leaves.get(topology) {
            Some(l) => l,
            None => {
                let lowest = t.domains.iter().map(|d| d.depth).max().unwrap_or(0);
                computed = t
                    .dfs()
                    .filter(|&d| t.domain(d).depth == lowest && d != DomainId::ROOT)
                    .collect::<Vec<_>>();
                &computed
            }
        };
        let mut out = Vec::with_capacity(leaf_domains.len());
        let mut excluded: std::collections::BTreeMap<String, usize> = Default::default();
        let mut leaves = 0;
        let requests = leaf_requests(world, &ps.requests);
        if hostname_leaves {
            let memo = self.leaf_exclusions(world, topology, flavor, ps, leaf_domains, in_snapshot);
            for (&d, leaf) in leaf_domains.iter().zip(memo.iter()) {
                let Some((n, why)) = leaf else {
                    continue;
                };
                leaves += 1;
                if let Some(why) = why {
                    *excluded.entry(why.clone()).or_default() += 1;
                    out.push((d, 0));
                    continue;
                }
                let (k, why) = leaf_pods(
                    |r| self.nodes.free(*n, r),
                    self.nodes.free_pods(*n),
                    &requests,
                );
                if let Some(w) = why {
                    *excluded.entry(w).or_default() += 1;
                }
                out.push((d, k));
            }
            return (out, leaves, excluded.into_iter().collect());
        }
        for &d in leaf_domains {
            let members = || t.nodes_of(d).iter().copied().filter(|&n| in_snapshot(n));
            if members().next().is_none() {
                continue;
            }
            leaves += 1;
            let (k, _) = leaf_pods(
                |r| members().map(|n| self.nodes.free(n, r)).sum(),
                members().map(|n| self.nodes.free_pods(n)).sum(),
                &requests,
            );
            out.push((d, k));
        }
        (out, leaves, excluded.into_iter().collect())
    }

    /// The snapshot node of each hostname leaf and the first filter pod set `ps` fails there,
    /// from the memo (worked out on first use for this kind of pod set).
    fn leaf_exclusions(
        &self,
        world: &World,
        topology: usize,
        flavor: FlavorId,
        ps: &PodSet,
        leaf_domains: &[DomainId],
        in_snapshot: impl Fn(NodeId) -> bool,
    ) -> LeafExclusions {
        let t = &world.topologies[topology];
        let mut memo = self.exclusions.lock().unwrap_or_else(|e| e.into_inner());
        let found = memo.0.iter().find(|((tp, f, sel, tol), _)| {
            *tp == topology && *f == flavor && *sel == ps.node_selector && *tol == ps.tolerations
        });
        if let Some((_, leaves)) = found {
            return leaves.clone();
        }
        let leaves: LeafExclusions = Arc::new(
            leaf_domains
                .iter()
                .map(|&d| {
                    let n = t.nodes_of(d).iter().copied().find(|&n| in_snapshot(n))?;
                    Some((n, exclusion(world, flavor, ps, n)))
                })
                .collect(),
        );
        let key = (
            topology,
            flavor,
            ps.node_selector.clone(),
            ps.tolerations.clone(),
        );
        memo.0.push((key, leaves.clone()));
        leaves
    }

    /// Takes (sign 1) or gives back (sign -1) the capacity of an assignment: a hostname leaf
    /// is one node; a higher leaf spreads its pods over its nodes in order.
    pub fn apply(
        &mut self,
        world: &World,
        a: &TopologyAssignment,
        requests: &ResourceList,
        sign: i64,
    ) {
        let t = &world.topologies[a.topology];
        for &(d, k) in &a.domains {
            let mut left = i64::from(k);
            for &n in t.nodes_of(d) {
                if left == 0 {
                    break;
                }
                let fit = if sign > 0 {
                    requests
                        .iter()
                        .filter(|&(_, q)| q > 0)
                        .map(|(r, q)| self.nodes.free(n, r.index()).max(0) / q)
                        .min()
                        .unwrap_or(left)
                        .min(left)
                } else {
                    left
                };
                for _ in 0..fit {
                    self.nodes.apply(n, requests, sign);
                }
                left -= fit;
            }
        }
    }
}

impl TasCapacity {
    /// Gives back the capacity of assignment `a` on TAS flavor `flavor`, as Kueue's snapshot
    /// does when it removes a workload (`RemoveWorkload` takes out its TAS usage): each
    /// domain's pods go back to its first node in the flavor's snapshot, which a leaf's sum
    /// reads the same as any spread (a hostname leaf is that one node).
    pub fn give_back(
        &mut self,
        world: &World,
        flavor: FlavorId,
        a: &TopologyAssignment,
        requests: &ResourceList,
    ) {
        let t = &world.topologies[a.topology];
        let mask = self.in_flavor.get(flavor.index()).filter(|m| !m.is_empty());
        for &(d, k) in &a.domains {
            let nodes = t.nodes_of(d);
            let first = nodes
                .iter()
                .copied()
                .find(|n| mask.is_none_or(|m| m[n.index()]))
                .or_else(|| nodes.first().copied());
            if let Some(n) = first {
                for _ in 0..k {
                    self.nodes.apply(n, requests, -1);
                }
            }
        }
    }
}

/// The topology request of a pod set (`kueue.x-k8s.io/podset-*-topology` annotations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TasMode {
    /// All pods in one domain of the level at this depth (1 = broadest), else fail.
    Required(u32),
    /// Try the level at this depth, then each level above, then several top-level domains.
    Preferred(u32),
    /// Anywhere: the lowest level, fewest-free domains first (`LeastFreeCapacity`).
    Unconstrained,
}

/// A pod set's slice request (`podset-slice-required-topology`, `podset-slice-size`): every
/// `size` pods in one domain of the level at `depth` (1 = broadest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TasSlice {
    /// The slice level's depth.
    pub depth: u32,
    /// Pods per slice, at least 1.
    pub size: u32,
}

/// Per domain at or above `depth`: how many whole slices of `size` pods fit, counted at
/// `depth` (`pods / size` there) and summed upwards, as upstream's `fillInCounts` counts
/// `sliceCount`. Below `depth`: 0 (the descent there counts pods).
fn slice_counts(t: &Topology, pods: &[u32], depth: u32, size: u32) -> Vec<u32> {
    let mut units = vec![0u32; t.domains.len()];
    for (i, d) in t.domains.iter().enumerate() {
        if d.depth != depth {
            continue;
        }
        let k = pods[i] / size;
        for a in t.ancestors(DomainId::from_index(i)) {
            units[a.index()] = units[a.index()].saturating_add(k);
        }
    }
    units
}

/// Per domain of the topology: how many pods fit (the sum over its leaves).
fn domain_counts(t: &Topology, leaf_pods: &[(DomainId, u32)]) -> Vec<u32> {
    let mut counts = vec![0u32; t.domains.len()];
    for &(d, k) in leaf_pods {
        for a in t.ancestors(d) {
            counts[a.index()] = counts[a.index()].saturating_add(k);
        }
    }
    counts
}

/// Kueue's `sortedDomains`: BestFit puts the domains with the most free slices (`counts`;
/// pods when no slices are asked) first, LeastFreeCapacity the fewest; ties by the fewest
/// free pods (`pods`), then by the level values (the domain id).
fn sort_domains(
    order: &DomainOrder,
    counts: &[u32],
    pods: &[u32],
    domains: &mut [DomainId],
    best_fit: bool,
) {
    domains.sort_by(|&a, &b| {
        let (ca, cb) = (counts[a.index()], counts[b.index()]);
        let by_count = if best_fit { cb.cmp(&ca) } else { ca.cmp(&cb) };
        by_count
            .then_with(|| pods[a.index()].cmp(&pods[b.index()]))
            .then_with(|| order.name_cmp(a, b))
    });
}

/// Takes domains in order until `need` pods are placed; with `best_fit` the last one is the
/// smallest domain that holds the remainder. Returns (domain, pods) pairs, or how many pods
/// fit in all of them.
fn take_greedily(
    counts: &[u32],
    sorted: &[DomainId],
    mut need: u32,
    best_fit: bool,
) -> Result<Vec<(DomainId, u32)>, u32> {
    let total: u32 = sorted.iter().map(|d| counts[d.index()]).sum();
    if total < need {
        return Err(total);
    }
    let mut out = Vec::new();
    let mut used = vec![false; sorted.len()];
    while need > 0 {
        // The smallest domain that holds all that is left, if any; else the next in order.
        let last = sorted
            .iter()
            .enumerate()
            .filter(|&(i, d)| best_fit && !used[i] && counts[d.index()] >= need)
            .min_by_key(|&(i, d)| (counts[d.index()], i));
        let (i, d) = match last {
            Some(x) => x,
            None => sorted
                .iter()
                .enumerate()
                .find(|&(i, d)| !used[i] && counts[d.index()] > 0)
                .expect("enough capacity left"),
        };
        used[i] = true;
        let take = counts[d.index()].min(need);
        out.push((*d, take));
        need -= take;
    }
    Ok(out)
}

/// `find_assignment_in` with the topology's `DomainOrder` worked out here (tests).
#[cfg(test)]
fn find_assignment(
    t: &Topology,
    topology_name: &str,
    leaf_pods: &[(DomainId, u32)],
    count: u32,
    mode: TasMode,
) -> Result<Vec<(DomainId, u32)>, String> {
    find_assignment_in(
        t,
        &DomainOrder::new(t),
        topology_name,
        leaf_pods,
        count,
        mode,
        None,
    )
}

/// Finds the topology assignment of `count` pods given each leaf's capacity, walking `t` in
/// its `order` (worked out once per topology). With a `slice` request the pods go in slices
/// of `size`, each within one domain at the slice's depth (upstream's
/// `findTopologyAssignment` with `sliceSize` and `sliceLevelIdx`; without one a slice is a
/// pod at the lowest level). `Ok`: per lowest-level domain the pods it gets, in tree
/// (level-path) order.
pub fn find_assignment_in(
    t: &Topology,
    order: &DomainOrder,
    topology_name: &str,
    leaf_pods: &[(DomainId, u32)],
    count: u32,
    mode: TasMode,
    slice: Option<TasSlice>,
) -> Result<Vec<(DomainId, u32)>, String> {
    let pods = domain_counts(t, leaf_pods);
    let lowest = t.domains.iter().map(|d| d.depth).max().unwrap_or(0);
    let best_fit = !matches!(mode, TasMode::Unconstrained);
    let (slice_depth, size) = slice.map_or((lowest, 1), |s| (s.depth, s.size.max(1)));
    // Slices per domain at and above the slice level; without slices, pods.
    let units = if slice.is_some() {
        std::borrow::Cow::Owned(slice_counts(t, &pods, slice_depth, size))
    } else {
        std::borrow::Cow::Borrowed(&pods)
    };
    let level_label = |depth: u32| match &t.source {
        kueuesim_model::topology::TopologySource::Levels { labels } => labels
            .get((depth as usize).saturating_sub(1))
            .cloned()
            .unwrap_or_default(),
        kueuesim_model::topology::TopologySource::HyperNodes { .. } => String::new(),
    };
    let start = match mode {
        TasMode::Required(d) | TasMode::Preferred(d) => d,
        // A slice-only request searches from the top level (`levelKey`: `highestLevel` for
        // `isSliceTopologyOnlyRequest`), a plain unconstrained one at the lowest.
        TasMode::Unconstrained if slice.is_some() => 1,
        TasMode::Unconstrained => lowest,
    };
    if slice.is_some() && start > slice_depth {
        return Err(format!(
            "podset slice topology {} is above the podset topology {}",
            level_label(slice_depth),
            level_label(start)
        ));
    }
    if !count.is_multiple_of(size) {
        return Err(format!(
            "the pod set's {count} pods are not a whole number of slices of {size}"
        ));
    }
    let need = count / size;
    let unit = if size == 1 { "pod" } else { "slice" };
    let fail = |fit: u32| {
        if fit == 0 {
            format!("topology \"{topology_name}\" doesn't allow to fit any of {need} {unit}(s)")
        } else {
            format!("topology \"{topology_name}\" allows to fit only {fit} out of {need} {unit}(s)")
        }
    };
    // Phase 1: the level whose domains hold the slices, and the chosen domains there.
    let mut depth = start;
    let mut chosen: Vec<(DomainId, u32)>;
    loop {
        let mut domains = order.at_depth(depth);
        if domains.is_empty() {
            return Err(format!(
                "no topology domains at level: {}",
                level_label(depth)
            ));
        }
        sort_domains(order, &units, &pods, &mut domains, best_fit);
        let largest = domains.first().map_or(0, |d| units[d.index()]);
        if domains.iter().any(|d| units[d.index()] >= need) {
            // BestFit: the smallest domain that holds everything; LeastFreeCapacity: the
            // first (smallest) that does.
            let d = domains
                .iter()
                .filter(|d| units[d.index()] >= need)
                .min_by(|a, b| {
                    units[a.index()]
                        .cmp(&units[b.index()])
                        .then_with(|| pods[a.index()].cmp(&pods[b.index()]))
                        .then_with(|| order.name_cmp(**a, **b))
                })
                .copied()
                .expect("some domain fits");
            chosen = vec![(d, need)];
            break;
        }
        match mode {
            TasMode::Required(_) => {
                let best = if best_fit {
                    largest
                } else {
                    domains.iter().map(|d| units[d.index()]).max().unwrap_or(0)
                };
                return Err(fail(best));
            }
            TasMode::Preferred(_) if depth > 1 => {
                depth -= 1;
                continue;
            }
            _ => {
                // The top level (or unconstrained): several domains, greedily.
                match take_greedily(&units, &domains, need, best_fit) {
                    Ok(c) => {
                        chosen = c;
                        break;
                    }
                    Err(fit) => return Err(fail(fit)),
                }
            }
        }
    }
    // Phase 2: descend level by level down to the slice level: the children of all chosen
    // domains pooled, sorted and taken greedily (best fit for the last one), so few domains
    // are used at every level.
    while depth < slice_depth {
        let mut kids: Vec<DomainId> = chosen
            .iter()
            .flat_map(|&(d, _)| t.domain(d).children.iter().copied())
            .collect();
        sort_domains(order, &units, &pods, &mut kids, best_fit);
        match take_greedily(&units, &kids, need, best_fit) {
            Ok(c) => chosen = c,
            Err(fit) => return Err(fail(fit)),
        }
        depth += 1;
    }
    // Below the slice level each domain's pods stay within it: its own children take them,
    // domain by domain (upstream's second descent loop, one slice of a pod).
    let mut chosen: Vec<(DomainId, u32)> = chosen.into_iter().map(|(d, k)| (d, k * size)).collect();
    let no_slices = if depth < lowest {
        vec![0u32; pods.len()]
    } else {
        Vec::new()
    };

    while depth < lowest {
        let mut next = Vec::with_capacity(chosen.len());
        for &(d, k) in &chosen {
            let mut kids: Vec<DomainId> = t.domain(d).children.clone();
            // Upstream's `sortedDomains` there sees no free slices (`sliceCount` is set only
            // at and above the slice level), so it sorts by fewest free pods, then level
            // values, and `updateCountsToMinimumGeneric` takes them in that order.
            sort_domains(order, &no_slices, &pods, &mut kids, best_fit);
            match take_greedily(&pods, &kids, k, false) {
                Ok(c) => next.extend(c),
                // The slice level's count came from these children: they hold `k`.
                Err(fit) => return Err(fail(fit / size)),
            }
        }
        chosen = next;
        depth += 1;
    }
    chosen.sort_by_key(|&(d, _)| t.domain(d).nodes.start);
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::{Labels, Node};

    fn node(name: &str, labels: &[(&str, &str)]) -> Node {
        Node {
            name: name.into(),
            labels: Labels::new(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            allocatable: vec![],
            taints: vec![],
            unschedulable: false,
        }
    }

    /// Leaf capacities from per-node pod counts (each node's lowest domain).
    fn leaves_of(t: &Topology, node_pods: &[u32]) -> Vec<(DomainId, u32)> {
        let mut v: Vec<(DomainId, u32)> = Vec::new();
        for (i, &k) in node_pods.iter().enumerate() {
            let d = t.domain_of(NodeId::from_index(i)).unwrap();
            match v.iter_mut().find(|x| x.0 == d) {
                Some(x) => x.1 += k,
                None => v.push((d, k)),
            }
        }
        v
    }

    fn names(t: &Topology, a: &[(DomainId, u32)]) -> Vec<(String, u32)> {
        a.iter()
            .map(|&(d, k)| (t.domain(d).name.clone(), k))
            .collect()
    }

    /// T-05 (tas_cache_test.go "rack preferred; but only block can accommodate the workload;
    /// BestFit"): no rack holds 4, block b1 does; inside it the fullest rack first, then the
    /// smallest that holds the rest.
    #[test]
    fn t05_preferred_climbs_one_level() {
        let br = |b: &'static str, r: &'static str| [("block", b), ("rack", r)];
        let nodes = vec![
            node("x3", &br("b1", "r1")),
            node("x5", &br("b1", "r2")),
            node("x1", &br("b1", "r2")),
            node("x6", &br("b1", "r2")),
            node("x2", &br("b2", "r1")),
            node("x4", &br("b2", "r2")),
        ];
        let t = Topology::from_levels("default", &["block".into(), "rack".into()], &nodes);
        let pods = [1, 1, 1, 1, 1, 2];
        let leaves = leaves_of(&t, &pods);
        let a = find_assignment(&t, "default", &leaves, 4, TasMode::Preferred(2)).unwrap();
        assert_eq!(names(&t, &a), [("b1.r1".into(), 1), ("b1.r2".into(), 3)]);
    }

    /// T-07 ("block preferred; Pods fit in 2 blocks; BestFit"): the largest block, then the
    /// smallest that holds the remainder.
    #[test]
    fn t07_best_fit_for_the_last_domain() {
        let nodes = vec![
            node("a", &[("block", "b1")]),
            node("b", &[("block", "b2")]),
            node("c", &[("block", "b3")]),
        ];
        let t = Topology::from_levels("default", &["block".into()], &nodes);
        let leaves = leaves_of(&t, &[2, 1, 4]);
        let a = find_assignment(&t, "default", &leaves, 5, TasMode::Preferred(1)).unwrap();
        assert_eq!(names(&t, &a), [("b2".into(), 1), ("b3".into(), 4)]);
    }

    #[test]
    fn required_level_fails_with_the_largest_domain() {
        let nodes = vec![node("a", &[("rack", "r1")]), node("b", &[("rack", "r2")])];
        let t = Topology::from_levels("default", &["rack".into()], &nodes);
        assert_eq!(
            find_assignment(
                &t,
                "default",
                &leaves_of(&t, &[3, 2]),
                4,
                TasMode::Required(1)
            )
            .unwrap_err(),
            "topology \"default\" allows to fit only 3 out of 4 pod(s)"
        );
    }
}

#[cfg(test)]
mod more_tests {
    use super::*;
    use kueuesim_model::{Labels, Node};

    /// tas_cache_test.go "unconstrained; 6 pods fit into hosts scattered across the whole
    /// datacenter" (LeastFreeCapacity, the default for unconstrained): the fullest hosts
    /// first, no best-fit swap.
    #[test]
    fn unconstrained_least_free_capacity() {
        let mk = |name: &str, b: &str, r: &str| Node {
            name: name.into(),
            labels: Labels::new(vec![
                ("block".into(), b.into()),
                ("rack".into(), r.into()),
                ("kubernetes.io/hostname".into(), name.into()),
            ]),
            allocatable: vec![],
            taints: vec![],
            unschedulable: false,
        };
        let nodes = vec![
            mk("x3", "b1", "r1"),
            mk("x5", "b1", "r1"),
            mk("x1", "b1", "r1"),
            mk("x6", "b2", "r1"),
            mk("x2", "b2", "r1"),
        ];
        let t = Topology::from_levels(
            "default",
            &[
                "block".into(),
                "rack".into(),
                "kubernetes.io/hostname".into(),
            ],
            &nodes,
        );
        let caps = [4u32, 1, 1, 2, 1];
        let leaves: Vec<(DomainId, u32)> = caps
            .iter()
            .enumerate()
            .map(|(i, &k)| (t.domain_of(NodeId::from_index(i)).unwrap(), k))
            .collect();
        let a = find_assignment(&t, "default", &leaves, 6, TasMode::Unconstrained).unwrap();
        let got: Vec<(&str, u32)> = a
            .iter()
            .map(|&(d, k)| (t.domain(d).value.as_str(), k))
            .collect();
        assert_eq!(got, [("x1", 1), ("x3", 1), ("x5", 1), ("x2", 1), ("x6", 2)]);
    }

    /// Three-level topology [block, rack, hostname] from (node, block, rack) triples, and the
    /// leaves' capacities in pods, node by node.
    fn three_levels(
        nodes: &[(&str, &str, &str)],
        pods: &[u32],
    ) -> (Topology, Vec<(DomainId, u32)>) {
        let nodes: Vec<Node> = nodes
            .iter()
            .map(|&(name, b, r)| Node {
                name: name.into(),
                labels: Labels::new(vec![
                    ("block".into(), b.into()),
                    ("rack".into(), r.into()),
                    ("kubernetes.io/hostname".into(), name.into()),
                ]),
                allocatable: vec![],
                taints: vec![],
                unschedulable: false,
            })
            .collect();
        let t = Topology::from_levels(
            "default",
            &[
                "block".into(),
                "rack".into(),
                "kubernetes.io/hostname".into(),
            ],
            &nodes,
        );
        let leaves = pods
            .iter()
            .enumerate()
            .map(|(i, &k)| (t.domain_of(NodeId::from_index(i)).unwrap(), k))
            .collect();
        (t, leaves)
    }

    /// `find_assignment_in` on topology "default" with a slice request.
    fn sliced(
        t: &Topology,
        leaves: &[(DomainId, u32)],
        count: u32,
        mode: TasMode,
        slice: Option<TasSlice>,
    ) -> Result<Vec<(DomainId, u32)>, String> {
        find_assignment_in(
            t,
            &DomainOrder::new(t),
            "default",
            leaves,
            count,
            mode,
            slice,
        )
    }

    fn hosts(t: &Topology, a: &[(DomainId, u32)]) -> Vec<(String, u32)> {
        a.iter()
            .map(|&(d, k)| (t.domain(d).value.clone(), k))
            .collect()
    }

    /// tas_cache_test.go "block required for podset; rack required for slices; BestFit":
    /// b1's racks hold one slice of 2 each (r2 has 3 pods), b2's one: b1 takes both slices,
    /// each within its rack, 1 pod a host.
    #[test]
    fn slices_stay_within_their_rack() {
        let (t, leaves) = three_levels(
            &[
                ("x3", "b1", "r1"),
                ("x5", "b1", "r1"),
                ("x1", "b1", "r2"),
                ("x6", "b1", "r2"),
                ("x2", "b1", "r2"),
                ("x4", "b2", "r1"),
                ("x7", "b2", "r1"),
            ],
            &[1; 7],
        );
        let slice = Some(TasSlice { depth: 2, size: 2 });
        let a = find_assignment_in(
            &t,
            &DomainOrder::new(&t),
            "default",
            &leaves,
            4,
            TasMode::Required(1),
            slice,
        )
        .unwrap();
        let mut got = hosts(&t, &a);
        got.sort();
        assert_eq!(
            got,
            [
                ("x1".into(), 1),
                ("x2".into(), 1),
                ("x3".into(), 1),
                ("x5".into(), 1)
            ]
        );
    }

    /// Two racks of three one-pod hosts, 4 pods in slices of 2 at the rack: a slice per rack.
    /// Without slices the pooled descent fills the first rack (3) and puts 1 in the other.
    #[test]
    fn slices_split_pods_by_rack_where_pods_alone_would_not() {
        let (t, leaves) = three_levels(
            &[
                ("x1", "b1", "r1"),
                ("x2", "b1", "r1"),
                ("x3", "b1", "r1"),
                ("x4", "b1", "r2"),
                ("x5", "b1", "r2"),
                ("x6", "b1", "r2"),
            ],
            &[1; 6],
        );
        let per_rack = |a: &[(DomainId, u32)]| {
            let r1: u32 = a
                .iter()
                .filter(|&&(d, _)| t.domain(d).name.starts_with("b1.r1"))
                .map(|&(_, k)| k)
                .sum();
            let all: u32 = a.iter().map(|&(_, k)| k).sum();
            (r1, all - r1)
        };
        let sliced = sliced(
            &t,
            &leaves,
            4,
            TasMode::Required(1),
            Some(TasSlice { depth: 2, size: 2 }),
        )
        .unwrap();
        assert_eq!(per_rack(&sliced), (2, 2));
        let plain = find_assignment(&t, "default", &leaves, 4, TasMode::Required(1)).unwrap();
        assert_eq!(per_rack(&plain), (3, 1));
    }

    /// tas_cache_test.go "block required for podset; rack required for slices; podset fits in
    /// a block, but slices do not fit in racks": 6 pods fit in b1, but no rack holds a slice
    /// of 3.
    #[test]
    fn slices_that_fit_no_rack_fail_in_slices() {
        let (t, leaves) = three_levels(
            &[("x3", "b1", "r1"), ("x5", "b1", "r2"), ("x1", "b1", "r3")],
            &[2, 2, 2],
        );
        let e = sliced(
            &t,
            &leaves,
            6,
            TasMode::Required(1),
            Some(TasSlice { depth: 2, size: 3 }),
        )
        .unwrap_err();
        assert_eq!(
            e,
            "topology \"default\" doesn't allow to fit any of 2 slice(s)"
        );
        // Without slices the block holds the 6 pods, two per host.
        let plain = find_assignment(&t, "default", &leaves, 6, TasMode::Required(1)).unwrap();
        assert_eq!(plain.iter().map(|&(_, k)| k).sum::<u32>(), 6);
    }

    /// tas_cache_test.go "no topology for podset; host required for slices; BestFit": a
    /// slice-only request (unconstrained at the pod-set level) of 3 slices of 2, one per host
    /// of 3 pods.
    #[test]
    fn slice_only_request_places_whole_slices_per_host() {
        let (t, leaves) = three_levels(
            &[("x3", "b1", "r1"), ("x5", "b1", "r1"), ("x1", "b1", "r1")],
            &[3, 3, 3],
        );
        let a = sliced(
            &t,
            &leaves,
            6,
            TasMode::Unconstrained,
            Some(TasSlice { depth: 3, size: 2 }),
        )
        .unwrap();
        let mut got = hosts(&t, &a);
        got.sort();
        assert_eq!(got, [("x1".into(), 2), ("x3".into(), 2), ("x5".into(), 2)]);
        // A pod count that is not whole slices is refused.
        let e = sliced(
            &t,
            &leaves,
            5,
            TasMode::Unconstrained,
            Some(TasSlice { depth: 3, size: 2 }),
        )
        .unwrap_err();
        assert!(e.contains("not a whole number of slices of 2"), "{e}");
    }

    /// A topology without nodes has no domains: the request fails at its level, slices or not
    /// (a fuzzed input once got the slice-level error here without asking for slices).
    #[test]
    fn no_domains_fail_at_the_requested_level() {
        let t = Topology::from_levels("default", &["rack".into()], &[]);
        let e = find_assignment(&t, "default", &[], 2, TasMode::Required(1)).unwrap_err();
        assert_eq!(e, "no topology domains at level: rack");
    }

    /// Below the slice level the hosts go fewest free pods first (upstream's `sortedDomains`
    /// with no `sliceCount` there): 4 pods in a slice of 4 at the rack, hosts x1:3, x2:1,
    /// x3:2, go to x2, x3 and one of x1's.
    #[test]
    fn below_the_slice_level_fewest_free_first() {
        let (t, leaves) = three_levels(
            &[("x1", "b1", "r1"), ("x2", "b1", "r1"), ("x3", "b1", "r1")],
            &[3, 1, 2],
        );
        let a = sliced(
            &t,
            &leaves,
            4,
            TasMode::Required(1),
            Some(TasSlice { depth: 2, size: 4 }),
        )
        .unwrap();
        let mut got = hosts(&t, &a);
        got.sort();
        assert_eq!(got, [("x1".into(), 1), ("x2".into(), 1), ("x3".into(), 2)]);
    }
}
