//! Volcano's scores: the node-order plugins (nodeorder's LeastAllocated, MostAllocated and
//! BalancedAllocation, binpack) resolved once (`Scoring`), the network-topology-aware
//! plugin's node score inside a HyperNode (`TopologyScorer`) and its HyperNode bin-packing
//! score (HyperNodeOrderFn), the preempt action's node order, and the HyperNodes a job's pods
//! are bound under (`volcano.sh/job-allocated-hypernode`).

use kueuesim_model::{DomainId, NodeId, Topology, World};

use super::super::node_search::{balanced_allocation, least_allocated, most_allocated};
use super::super::{Cluster, GangPods, NodeCapacity, PodNeeds, Scorer, tie_key};

/// The node-order plugins of the scheduler configuration, resolved to resource ids.
#[derive(Clone, Debug)]
pub(in crate::placement) struct Scoring {
    res: super::super::KeyResources,
    least: i64,
    most: i64,
    balanced: i64,
    /// `binpack`: (resource, weight) and the plugin weight.
    binpack: Option<(Vec<(usize, i64)>, i64)>,
    /// `network-topology-aware`: (weight, normal-pod bin-pack fading if enabled).
    pub(super) nta: Option<(f64, Option<f64>)>,
}

impl Scoring {
    pub(in crate::placement) fn new(world: &World, res: super::super::KeyResources) -> Scoring {
        let cfg = &world.config.volcano;
        let (least, most, balanced) = cfg.nodeorder.map_or((0, 0, 0), |w| {
            (w.least_requested, w.most_requested, w.balanced_resource)
        });
        Scoring {
            res,
            least,
            most,
            balanced,
            binpack: cfg.binpack.as_ref().map(|b| {
                let rs = b
                    .resources
                    .iter()
                    .filter_map(|(name, w)| world.resources.lookup(name).map(|r| (r.index(), *w)))
                    .collect();
                (rs, b.weight)
            }),
            nta: cfg
                .network_topology_aware
                .as_ref()
                .map(|n| (n.weight, n.normal_pod_binpack.then_some(n.fading))),
        }
    }

    /// The summed node-order score of one more `pod` on `node`: nodeorder's scorers and the
    /// binpack plugin (`BinPackingScore`).
    pub(in crate::placement) fn node_order(
        &self,
        world: &World,
        cap: &NodeCapacity,
        node: NodeId,
        pod: &PodNeeds,
    ) -> f64 {
        let mut s = 0;
        if self.least != 0 {
            s += self.least * least_allocated(world, cap, self.res, node, pod);
        }
        if self.most != 0 {
            s += self.most * most_allocated(world, cap, self.res, node, pod);
        }
        if self.balanced != 0 {
            s += self.balanced * balanced_allocation(world, cap, self.res, node, pod, true);
        }
        let mut total = s as f64;
        if let Some((resources, weight)) = &self.binpack {
            let alloc = &world.node(node).allocatable;
            let mut score = 0.0;
            let mut weights = 0;
            for (r, q) in pod.requests.iter() {
                if q == 0 {
                    continue;
                }
                let Some(&(_, w)) = resources.iter().find(|x| x.0 == r.index()) else {
                    continue;
                };
                let a = alloc.get(r.index()).copied().unwrap_or(0);
                if a != 0 && w != 0 {
                    let used = a - cap.free(node, r.index());
                    if used + q > a {
                        return total;
                    }
                    score += (used + q) as f64 * w as f64 / a as f64;
                }
                weights += w;
            }
            if weights > 0 {
                score /= weights as f64;
            }
            total += score * 100.0 * *weight as f64;
        }
        total
    }
}

/// The order in which Volcano's `preempt` action tries `nodes` for one task of a job without
/// a `networkTopology` (`normalPreempt`): `PrioritizeNodes` scores each node by the
/// node-order plugins (nodeorder's scorers and binpack, `Scoring::node_order`) on `cap`,
/// and `SortNodes` takes the scores highest first, the nodes of one score in the order
/// given (upstream's predicate order, which its parallel predicates leave unspecified;
/// kueuesim's is the canonical node order). `cap` is the session's state: pods releasing
/// in the statement still count as used, as they stay in upstream's `NodeInfo.Tasks`.
pub fn preempt_node_order(
    world: &World,
    cluster: &Cluster,
    cap: &NodeCapacity,
    pod: &PodNeeds,
    nodes: &mut [NodeId],
) {
    let scoring = Scoring::new(world, cluster.res);
    let mut scored: Vec<(f64, NodeId)> = nodes
        .iter()
        .map(|&n| (scoring.node_order(world, cap, n, pod), n))
        .collect();
    // Stable: equal scores keep the given order.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (slot, (_, n)) in nodes.iter_mut().zip(scored) {
        *slot = n;
    }
}

/// The node's own HyperNode as the plugin sees it (`FindHyperNodeForNode` looks only at the
/// globally lowest tier): its lowest domain if that has the lowest tier.
pub(in crate::placement) fn own_hypernode(
    t: &Topology,
    min_tier: i32,
    node: NodeId,
) -> Option<DomainId> {
    t.domain_of(node)
        .filter(|&d| d != DomainId::ROOT && t.domain(d).tier == min_tier)
}

/// The lowest tier of any HyperNode (the virtual root's when there is none). Read from
/// `by_tier` (tiers ascending): the first tier holding a domain other than the root. Every
/// Volcano attempt asks, and scanning every domain cost 1.3 % of the million-workload run.
pub(in crate::placement) fn min_real_tier(t: &Topology) -> i32 {
    let from_index = t
        .by_tier
        .iter()
        .find(|(_, ds)| ds.iter().any(|&d| d != DomainId::ROOT))
        .map(|(tier, _)| *tier);
    debug_assert_eq!(
        from_index,
        t.domains.iter().skip(1).map(|d| d.tier).min(),
        "by_tier lists every domain"
    );
    from_index.unwrap_or_else(|| t.root_tier())
}

/// The HyperNode tree the job's pods are bound under: the LCA of their own HyperNodes
/// (`volcano.sh/job-allocated-hypernode`).
pub fn allocated_hypernode(world: &World, pods: &GangPods) -> Option<DomainId> {
    let t = &world.hypernodes;
    pods.iter()
        .flat_map(|(_, s)| s.iter().flatten())
        .filter_map(|&n| t.domain_of(n))
        .reduce(|a, b| t.lca(a, b))
}

/// Node scoring inside a HyperNode: the plugin's LCA score ×100 (by leaf group) plus
/// nodeorder's LeastAllocated and BalancedAllocation.
#[derive(Clone)]
pub(in crate::placement) struct TopologyScorer<'a> {
    world: &'a World,
    scoring: &'a Scoring,
    min_tier: i32,
    max_tier: i32,
    /// The subjob's allocated HyperNode (`JobAllocatedHyperNode` of its tasks).
    pub(in crate::placement) allocated: Option<DomainId>,
    seed: u64,
    /// Group scores for the current `allocated`, filled on demand.
    cache: Vec<(usize, f64)>,
    /// The subjob's tasks already bound, per group (lowest-tier HyperNode): the
    /// `FindJobTaskNumOfHyperNode` counts of the task-count bonus.
    tasks: Vec<(usize, u32)>,
    /// `len(subJob.Tasks)`: every pod of the subjob, bound or not.
    tasks_total: u32,
}

impl Scorer for TopologyScorer<'_> {
    fn group(&self, node: NodeId) -> usize {
        let t = &self.world.hypernodes;
        own_hypernode(t, self.min_tier, node).map_or(0, DomainId::index)
    }
    fn group_score(&mut self, group: usize) -> f64 {
        if let Some(&(_, s)) = self.cache.iter().find(|c| c.0 == group) {
            return s;
        }
        let score = self.lca_score(group);
        self.cache.push((group, score));
        score
    }
    fn node_score(&self, cap: &NodeCapacity, node: NodeId, pod: &PodNeeds) -> f64 {
        self.scoring.node_order(self.world, cap, node, pod)
    }
    /// nodeorder's and binpack's scores read only the node's capacity (the HyperNode part
    /// is the group score).
    fn score_is_per_state(&self) -> bool {
        true
    }
    fn tie(&self, node: NodeId) -> u64 {
        tie_key(self.seed, node)
    }
    fn bound(&mut self, node: NodeId) {
        let g = self.group(node);
        self.bound_in(node, g);
    }
    /// `fill` passes the group it filed the node under (`group(node)`), so the node's own
    /// HyperNode is not looked up again per bind.
    fn bound_in(&mut self, node: NodeId, g: usize) {
        debug_assert_eq!(g, self.group(node), "fill's group is the node's");
        match self.tasks.iter_mut().find(|x| x.0 == g) {
            Some(x) => x.1 += 1,
            None => self.tasks.push((g, 1)),
        }
        let t = &self.world.hypernodes;
        if let Some(d) = t.domain_of(node) {
            let next = match self.allocated {
                None => d,
                Some(a) => t.lca(a, d),
            };
            if self.allocated != Some(next) {
                self.allocated = Some(next);
                self.cache.clear();
            }
        }
    }
    /// The LCA score (`lca_score`) of a group reads only the subjob's allocated HyperNode
    /// besides fixed configuration, so the allocated HyperNode is the version: `fill` asks
    /// again only after a bind moved it (up the tree, a few times a gang).
    fn group_scores_version(&self) -> Option<u64> {
        Some(self.allocated.map_or(u64::MAX, |d| u64::from(d.0)))
    }
    /// `batchNodeOrderFnForNetworkAwarePods` scores nodes only once the subjob has an
    /// allocated HyperNode, and adds the task-count bonus only then.
    fn has_tie_bonus(&self) -> bool {
        self.scoring.nta.is_some() && self.allocated.is_some() && self.tasks_total > 0
    }
    /// `scoreWithTaskNum` ×100×weight: the share of the subjob's tasks already on the
    /// node's lowest-tier HyperNode (none for a node outside every HyperNode).
    fn tie_bonus(&self, group: usize) -> f64 {
        let Some((weight, _)) = self.scoring.nta else {
            return 0.0;
        };
        if group == 0 {
            return 0.0;
        }
        let n = self.tasks.iter().find(|x| x.0 == group).map_or(0, |x| x.1);
        f64::from(n) / f64::from(self.tasks_total) * 100.0 * weight
    }
}

impl<'a> TopologyScorer<'a> {
    /// The scorer of a job whose pods' HyperNode is `allocated`, ties seeded by `seed`, with
    /// no subjob's counts yet (`for_subjob` adds them).
    pub(in crate::placement) fn new(
        world: &'a World,
        scoring: &'a Scoring,
        allocated: Option<DomainId>,
        seed: u64,
    ) -> Self {
        let t = &world.hypernodes;
        TopologyScorer {
            world,
            scoring,
            min_tier: min_real_tier(t),
            max_tier: t.root_tier(),
            allocated,
            seed,
            cache: Vec::new(),
            tasks: Vec::new(),
            tasks_total: 0,
        }
    }

    /// The scorer for one subjob: its own allocated HyperNode and task counts, from the
    /// pods of `pod_sets` (None: every pod set) already bound in `pods`.
    pub(in crate::placement) fn for_subjob(
        &self,
        pods: &GangPods,
        pod_sets: Option<&[usize]>,
    ) -> Self {
        let t = &self.world.hypernodes;
        let mut s = self.clone();
        s.cache.clear();
        s.tasks.clear();
        s.tasks_total = 0;
        s.allocated = None;
        for (ps, (_, slots)) in pods.iter().enumerate() {
            if pod_sets.is_some_and(|m| !m.contains(&ps)) {
                continue;
            }
            s.tasks_total += slots.len() as u32;
            for &n in slots.iter().flatten().filter(|&&n| n != super::OUTSIDE) {
                // Counted as `bound` would, without the allocated-HyperNode update.
                let g = s.group(n);
                match s.tasks.iter_mut().find(|x| x.0 == g) {
                    Some(x) => x.1 += 1,
                    None => s.tasks.push((g, 1)),
                }
                if let Some(d) = t.domain_of(n) {
                    s.allocated = Some(s.allocated.map_or(d, |a| t.lca(a, d)));
                }
            }
        }
        s
    }

    /// The plugin's `batchNodeOrderFn` score of a leaf group ×100×weight.
    fn lca_score(&self, group: usize) -> f64 {
        let t = &self.world.hypernodes;
        let Some((weight, _)) = self.scoring.nta else {
            return 0.0;
        };
        // Group 0 is "no lowest-tier HyperNode": the plugin scores it 0.
        let (Some(alloc), true) = (self.allocated, group != 0) else {
            return 0.0;
        };
        let h = DomainId::from_index(group);
        let score = if h == alloc || self.max_tier == self.min_tier {
            1.0
        } else {
            let lca = t.lca(h, alloc);
            f64::from(self.max_tier - t.domain(lca).tier) / f64::from(self.max_tier - self.min_tier)
        };
        score * 100.0 * weight
    }
}

/// The hypernode bin-packing score (HyperNodeOrderFn): how full the HyperNode would be with
/// the whole job in it, averaged over cpu and memory; 0 if the job would overflow it.
pub(in crate::placement) fn hypernode_binpack(
    cluster: &Cluster,
    d: DomainId,
    job_total: &[(usize, i64)],
) -> f64 {
    hypernode_binpack_for(cluster, d, &binpack_request(cluster, job_total))
}

/// The job's request of cpu and of memory (the resources the hypernode bin-pack reads), looked
/// up once per attempt rather than once per HyperNode scored.
pub(super) fn binpack_request(
    cluster: &Cluster,
    job_total: &[(usize, i64)],
) -> [Option<(usize, i64)>; 2] {
    [cluster.res.cpu, cluster.res.memory]
        .map(|r| r.map(|r| (r, job_total.iter().find(|x| x.0 == r).map_or(0, |x| x.1))))
}

/// `binpack_request` of `job_total(pods)`, read from the pods without the vector of every
/// resource (once per gradient search).
pub(super) fn job_binpack_request(cluster: &Cluster, pods: &GangPods) -> [Option<(usize, i64)>; 2] {
    [cluster.res.cpu, cluster.res.memory].map(|r| {
        r.map(|r| {
            let id = kueuesim_model::ResourceId::from_index(r);
            let total = pods
                .iter()
                .map(|(needs, slots)| needs.requests.get(id) * slots.len() as i64)
                .sum();
            (r, total)
        })
    })
}

/// `hypernode_binpack` with the request resolved (`binpack_request`).
pub(super) fn hypernode_binpack_for(
    cluster: &Cluster,
    d: DomainId,
    request: &[Option<(usize, i64)>; 2],
) -> f64 {
    // The HyperNode's rows sliced once (every candidate of every gradient search is scored).
    let n = cluster.nodes.n_resources;
    let (alloc_row, free_row) = (
        &cluster.domain_alloc[0][d.index() * n..][..n],
        &cluster.domain_free[0][d.index() * n..][..n],
    );
    let mut sum = 0.0;
    let mut weights = 0.0;
    for &(r, req) in request.iter().flatten() {
        let alloc = alloc_row[r];
        if alloc == 0 {
            continue;
        }
        let used = alloc - free_row[r];
        if used + req > alloc {
            return 0.0;
        }
        sum += (used + req) as f64 / alloc as f64;
        weights += 1.0;
    }
    if weights == 0.0 { 0.0 } else { sum / weights }
}

/// Σ requests over every pod of the job, bound or not (the plugin's subjob request).
pub(in crate::placement) fn job_total(pods: &GangPods) -> Vec<(usize, i64)> {
    let mut v: Vec<(usize, i64)> = Vec::new();
    for (needs, slots) in pods {
        for (r, a) in needs.requests.iter() {
            let add = a * slots.len() as i64;
            match v.iter_mut().find(|x| x.0 == r.index()) {
                Some(x) => x.1 += add,
                None => v.push((r.index(), add)),
            }
        }
    }
    v
}
