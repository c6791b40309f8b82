//! Where pods go: node and topology-domain capacity bookkeeping, and the placement policies
//! of the three schedulers (kube-scheduler, Volcano, KAI), which return bindings as data.
//!
//! The filters mirror kube-scheduler's default plugins in their order (NodeUnschedulable,
//! TaintToleration, NodeAffinity, NodeResourcesFit) so a failure is explained with
//! kube-scheduler's own `FitError` wording; Volcano's `predicates` plugin and KAI reuse the
//! same filters. Each scheduler then scores the feasible nodes its own way (`kube`, `volcano`,
//! `kai` submodules) and the shared `fill` loop binds pod after pod to the best node.
//!
//! Speed: every topology keeps per-domain free capacity, updated on each bind and release by
//! walking the node's ancestor chain, so a domain that cannot hold a gang is rejected in
//! O(resources) without looking at its nodes; `fill` scores each candidate node once and keeps
//! one max-heap per scoring group (leaf or preferred subdomain), so a gang of p pods in a domain
//! of n nodes costs O(n + p·(groups + log n)).
//! KAI's topology plugin also gets, per task shape, each domain's count of task copies that
//! fit, kept in step the same way (`kai::counts`), instead of a pass over the nodes of the
//! lowest common domain per decision; and its bin-pack dry run of alike GPU pods reads each
//! domain's nodes in (free GPUs, name) order from per-domain bitsets (`kai::order`) instead
//! of scoring every node of the domain.

pub mod devices;
mod gpu_order;
pub mod gpu_share;
pub mod hooked;
pub mod kai;
pub mod kube;
mod node_classes;
mod noted;
mod tier_index;
pub mod volcano;
mod volcano_subjobs;
pub mod volcano_vgpu;

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};

use kueuesim_model::labels::tolerated;
use kueuesim_model::{
    DomainId, Labels, NodeId, ResourceId, ResourceList, Toleration, Topology, World,
};

/// The default `pods` capacity of a node that does not declare one (kubelet's maxPods).
pub const DEFAULT_MAX_PODS: i64 = 110;

/// Free capacity of every node, dense by (node, resource), plus free pod slots.
#[derive(Clone, Debug)]
pub struct NodeCapacity {
    n_resources: usize,
    free: Vec<i64>,
    free_pods: Vec<i64>,
    /// Allocatable, in the layout of `free` (fixed): the scorers read it next to `free`
    /// instead of chasing each node's `allocatable` list.
    alloc: Vec<i64>,
    /// Bumped on every change of `free`: results worked out on one version stay true while
    /// it holds.
    version: u64,
    /// Per resource, a bitset over nodes (64 to a word, `words` words): bit set while the node
    /// has some of the resource free. A pod asking for a positive amount cannot fit where the
    /// bit is clear, so a filter scan skips 64 such nodes at a time (`candidates`).
    has_free: Vec<u64>,
    /// The same for a free pod slot.
    has_pod_slot: Vec<u64>,
    words: usize,
    /// The nodes by occupancy class (kube-scheduler's scan), kept lazily.
    classes: node_classes::NodeClasses,
    /// No node is unschedulable or has a taint that blocks scheduling: a pod without a
    /// nodeSelector passes every static filter on every node (`statically_feasible`).
    plain: bool,
}

impl NodeCapacity {
    /// All nodes empty.
    pub fn new(world: &World) -> Self {
        let n_resources = world.resources.len();
        let pods = world.resources.lookup("pods");
        let mut free = Vec::with_capacity(world.nodes.len() * n_resources);
        let mut free_pods = Vec::with_capacity(world.nodes.len());
        for node in &world.nodes {
            free.extend((0..n_resources).map(|r| node.allocatable.get(r).copied().unwrap_or(0)));
            let max_pods = pods
                .and_then(|p| node.allocatable.get(p.index()).copied())
                .filter(|&p| p > 0)
                .unwrap_or(DEFAULT_MAX_PODS);
            free_pods.push(max_pods);
        }
        let words = world.nodes.len().div_ceil(64);
        let mut cap = NodeCapacity {
            n_resources,
            alloc: free.clone(),
            free,
            free_pods,
            version: 0,
            has_free: vec![0; n_resources * words],
            has_pod_slot: vec![0; words],
            words,
            classes: node_classes::NodeClasses::new(world.nodes.len(), n_resources),
            plain: world.nodes.iter().all(|n| {
                !n.unschedulable && n.taints.iter().all(|t| !t.effect.blocks_scheduling())
            }),
        };
        for node in 0..world.nodes.len() {
            for r in 0..n_resources {
                cap.mark(NodeId::from_index(node), r);
            }
            cap.mark_pods(NodeId::from_index(node));
        }
        cap
    }

    /// No nodes at all (the TAS view of a world without TAS flavors).
    pub fn empty() -> Self {
        NodeCapacity {
            n_resources: 0,
            free: Vec::new(),
            free_pods: Vec::new(),
            alloc: Vec::new(),
            version: 0,
            has_free: Vec::new(),
            has_pod_slot: Vec::new(),
            words: 0,
            classes: node_classes::NodeClasses::new(0, 0),
            plain: true,
        }
    }

    /// Brings `node`'s bit of `has_free` for resource `r` in line with its free amount.
    #[inline]
    fn mark(&mut self, node: NodeId, r: usize) {
        let (w, b) = (node.index() / 64, node.index() % 64);
        let word = &mut self.has_free[r * self.words + w];
        if self.free[node.index() * self.n_resources + r] > 0 {
            *word |= 1 << b;
        } else {
            *word &= !(1 << b);
        }
    }

    /// Brings `node`'s bit of `has_pod_slot` in line with its free pod slots.
    #[inline]
    fn mark_pods(&mut self, node: NodeId) {
        let (w, b) = (node.index() / 64, node.index() % 64);
        if self.free_pods[node.index()] >= 1 {
            self.has_pod_slot[w] |= 1 << b;
        } else {
            self.has_pod_slot[w] &= !(1 << b);
        }
    }

    /// Nodes `64·word ..` that may fit one more pod asking for `positive` (the resources
    /// it requests a positive amount of), as bits: a clear bit is a node where `fits` is
    /// false (no pod slot, or none of one of those resources free); a set bit still needs
    /// `fits`.
    #[inline]
    pub fn candidates(&self, word: usize, positive: &[usize]) -> u64 {
        positive.iter().fold(self.has_pod_slot[word], |m, &r| {
            m & self.has_free[r * self.words + word]
        })
    }

    /// Free amount of resource index `r` on `node`.
    #[inline]
    pub fn free(&self, node: NodeId, r: usize) -> i64 {
        self.free[node.index() * self.n_resources + r]
    }

    /// The version of the free capacity (changes on every bind and release).
    #[inline]
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Allocatable amount of resource index `r` on `node`.
    #[inline]
    pub fn allocatable(&self, node: NodeId, r: usize) -> i64 {
        self.alloc[node.index() * self.n_resources + r]
    }

    /// Free pod slots on `node`.
    #[inline]
    pub fn free_pods(&self, node: NodeId) -> i64 {
        self.free_pods[node.index()]
    }

    /// Binds (sign 1) or releases (sign -1) one pod with `requests` on `node`.
    pub fn apply(&mut self, node: NodeId, requests: &ResourceList, sign: i64) {
        self.version += 1;
        self.classes.note(node);
        let base = node.index() * self.n_resources;
        // A bit changes only when its amount crosses zero (one): the bitsets' words are
        // touched only then, not on every bind and release of the dry runs.
        for (r, a) in requests.iter() {
            let free = &mut self.free[base + r.index()];
            let had = *free > 0;
            *free -= sign * a;
            if had != (*free > 0) {
                self.mark(node, r.index());
            }
        }
        let pods = &mut self.free_pods[node.index()];
        let had = *pods >= 1;
        *pods -= sign;
        if had != (*pods >= 1) {
            self.mark_pods(node);
        }
    }

    /// Whether `pod` passes the static filters (unschedulable, taints, node selector) on every
    /// node, so that only `fits` can turn it down.
    #[inline]
    pub fn statically_plain(&self, pod: &PodNeeds) -> bool {
        self.plain && pod.node_selector.is_empty()
    }

    /// Whether one more pod with `requests` fits on `node` (NodeResourcesFit).
    #[inline]
    pub fn fits(&self, node: NodeId, requests: &ResourceList) -> bool {
        self.free_pods[node.index()] >= 1
            && requests
                .iter()
                .all(|(r, a)| a <= self.free(node, r.index()))
    }
}

/// Per-domain GPU histograms are kept for nodes of at most this many GPUs.
const MAX_GPU_BUCKETS: usize = 257;

/// Node capacity plus, for every topology, the free capacity of each domain (the sum over its
/// nodes), kept in step on every bind and release.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// Per node.
    pub nodes: NodeCapacity,
    /// Per topology (0: the Volcano HyperNode tree, 1 + i: `world.topologies[i]`), per
    /// (domain, resource): free capacity.
    domain_free: Vec<Vec<i64>>,
    /// The same layout: allocatable capacity (fixed).
    domain_alloc: Vec<Vec<i64>>,
    /// Per topology, per entry of its `by_tier`: the largest allocatable of any domain of
    /// that tier, per resource (fixed), to skip whole tiers a gang cannot fit in.
    tier_max_alloc: Vec<Vec<Vec<i64>>>,
    /// Per topology, per (domain, free GPUs): how many nodes of the domain have exactly that
    /// many GPUs free (`gpu_buckets` buckets per domain; empty when there are no GPUs or a
    /// node has more than `MAX_GPU_BUCKETS - 1`). How many pods of k GPUs a domain could host
    /// at most follows without looking at its nodes, which rules out most domains of a
    /// fragmented cluster before any dry run.
    gpu_hist: Vec<Vec<u32>>,
    /// Buckets per domain in `gpu_hist` (largest node GPU count + 1), 0 when disabled.
    gpu_buckets: usize,
    /// The nodes with GPUs, ordered by (free GPUs, name rank): KAI's bin-pack order, so its
    /// best node for a pod is the first feasible one from the pod's GPU count up
    /// (`kai::fill_binpack`), without scoring every node. Kept for committed bindings only,
    /// and brought up to date lazily (`sync_gpu_order`): a bind only notes its node in
    /// `gpu_stale`, so the placements that never read the order (KAI with a topology,
    /// Volcano, kube-scheduler) do not pay two B-tree updates per bind.
    gpu_order: gpu_order::GpuOrder,
    /// Per node: the free GPUs its `gpu_order` entry carries (nodes with GPUs).
    gpu_keyed: Vec<i64>,
    /// The nodes whose free GPUs may have moved since their `gpu_order` entry was made.
    gpu_stale: noted::NotedNodes,
    /// The HyperNodes of each tier by free GPUs, for Volcano's gradient search; kept lazily
    /// like `gpu_order` (`sync_tier_index`).
    tier_gpu: tier_index::TierGpuIndex,
    /// Each node's rank in node-name order (KAI breaks score ties by name).
    pub name_rank: Vec<u32>,
    /// The ids of `cpu`, `memory` and `nvidia.com/gpu`, if any object mentions them.
    pub res: KeyResources,
    /// Where kube-scheduler's and Volcano's feasible-node search starts next
    /// (`nextStartNodeIndex` / `lastProcessedNodeIndex`), per scheduler.
    pub next_start: [usize; 2],
    /// Every node schedulable and without a scheduling-blocking taint: for a pod without a
    /// node selector the static filters then pass everywhere, and the hot loops skip them
    /// (and the read of each node's labels and taints).
    pub plain_nodes: bool,
    /// Every node id in order (shared, so that cloning a `Cluster` stays cheap): the
    /// candidate list of placements without topology.
    pub all_nodes: std::sync::Arc<[NodeId]>,
    /// Node label key → value → the nodes carrying it, in id order (shared): the nodes a
    /// nodeSelector can match, without reading every node's labels.
    pub label_index: std::sync::Arc<LabelIndex>,
    /// kube-scheduler pods found to fit no node, with their FitError, at capacity version
    /// `.0`: an identical pod fails the same way while the capacity is unchanged (its
    /// rotating start comes back where it was), so it is not scanned again. Sound because
    /// versions are only compared within one `Cluster`: `nodes` is never replaced on its own
    /// (a whole-cluster swap, as KAI's reclaim check does, carries the memo along).
    pub unplaceable: (u64, Vec<(PodNeeds, String)>),
    /// GPUs as devices (`spec.gpuPlacement`, openb `gpuSharing: device`); None: GPUs are a
    /// node-level count only.
    pub devices: Option<devices::Devices>,
    /// Volcano vGPU devices (the deviceshare plugin with `deviceshare.VGPUEnable`); None
    /// without it.
    pub vgpu: Option<volcano_vgpu::VgpuBook>,
    /// Per task shape KAI's topology plugin asked about, per domain of every Topology: how
    /// many copies of the task fit (`AllocatablePods`), kept in step on every bind and release
    /// so that `checkJobDomainFit` is a lookup, not a pass over the domain's nodes.
    kai_counts: kai::counts::TaskFitCounts,
    /// The buffers of KAI's batched commit (`commit_bound`), reused from one to the next.
    kai_scratch: kai::bind::CommitScratch,
    /// Per domain of every Topology, its nodes in KAI's bin-pack order (free GPUs, name),
    /// built on the first read (`kai_binpack_in`) and from then on noted on every bind and
    /// release that moves a node's free GPUs, brought up to date when read.
    kai_order: Option<kai::order::DomainOrder>,
}

/// Node label key → value → nodes with that label, in id order.
pub type LabelIndex = BTreeMap<String, BTreeMap<String, Vec<NodeId>>>;

/// The nodes whose labels include every pair of `selector` (non-empty), in id order.
pub fn nodes_matching(index: &LabelIndex, selector: &kueuesim_model::Labels) -> Vec<NodeId> {
    let mut lists: Vec<&[NodeId]> = Vec::new();
    for (k, v) in selector.iter() {
        match index.get(k).and_then(|vals| vals.get(v)) {
            Some(list) => lists.push(list),
            None => return Vec::new(),
        }
    }
    lists.sort_by_key(|l| l.len());
    let Some((first, rest)) = lists.split_first() else {
        return Vec::new();
    };
    first
        .iter()
        .copied()
        .filter(|n| rest.iter().all(|l| l.binary_search(n).is_ok()))
        .collect()
}

/// The resources the scorers look at.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyResources {
    /// `cpu`.
    pub cpu: Option<usize>,
    /// `memory`.
    pub memory: Option<usize>,
    /// `nvidia.com/gpu`.
    pub gpu: Option<usize>,
}

impl Cluster {
    /// All nodes empty.
    pub fn new(world: &World) -> Self {
        let nodes = NodeCapacity::new(world);
        let plain_nodes = nodes.plain;
        let n_res = world.resources.len();
        let domain_free: Vec<Vec<i64>> = topologies(world)
            .map(|t| {
                let mut v = vec![0; t.domains.len() * n_res];
                for d in 0..t.domains.len() {
                    for &n in t.nodes_of(DomainId::from_index(d)) {
                        for r in 0..n_res {
                            v[d * n_res + r] += nodes.free(n, r);
                        }
                    }
                }
                v
            })
            .collect();
        let mut by_name: Vec<usize> = (0..world.nodes.len()).collect();
        by_name.sort_by(|&a, &b| world.nodes[a].name.cmp(&world.nodes[b].name));
        let mut name_rank = vec![0; world.nodes.len()];
        for (rank, &n) in by_name.iter().enumerate() {
            name_rank[n] = rank as u32;
        }
        let id = |name: &str| world.resources.lookup(name).map(|r| r.index());
        let tier_max_alloc = topologies(world)
            .zip(&domain_free)
            .map(|(t, alloc)| {
                t.by_tier
                    .iter()
                    .map(|(_, ds)| {
                        (0..n_res)
                            .map(|r| {
                                ds.iter()
                                    .map(|d| alloc[d.index() * n_res + r])
                                    .max()
                                    .unwrap_or(0)
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let gpu = id(kueuesim_model::resources::GPU);
        let max_gpu = gpu.map_or(0, |g| {
            (0..world.nodes.len())
                .map(|n| nodes.free(NodeId::from_index(n), g))
                .max()
                .unwrap_or(0)
        });
        let gpu_buckets = match gpu {
            Some(_) if (1..MAX_GPU_BUCKETS as i64).contains(&max_gpu) => max_gpu as usize + 1,
            _ => 0,
        };
        let gpu_hist = topologies(world)
            .map(|t| {
                let mut h = vec![0u32; t.domains.len() * gpu_buckets];
                if let Some(g) = gpu.filter(|_| gpu_buckets > 0) {
                    for d in 0..t.domains.len() {
                        for &n in t.nodes_of(DomainId::from_index(d)) {
                            h[d * gpu_buckets + nodes.free(n, g).max(0) as usize] += 1;
                        }
                    }
                }
                h
            })
            .collect();
        let gpu_order = gpu
            .map(|g| {
                let with_gpus = (0..world.nodes.len())
                    .map(NodeId::from_index)
                    .filter(|&n| world.node(n).allocatable.get(g).copied().unwrap_or(0) > 0);
                let most = with_gpus.clone().map(|n| nodes.allocatable(n, g)).max();
                let mut order = gpu_order::GpuOrder::new(&name_rank, most.unwrap_or(0));
                for n in with_gpus {
                    order.insert((nodes.free(n, g), name_rank[n.index()], n));
                }
                order
            })
            .unwrap_or_default();
        let gpu_keyed = (0..world.nodes.len())
            .map(|n| gpu.map_or(0, |g| nodes.free(NodeId::from_index(n), g)))
            .collect();
        let tier_gpu = match gpu {
            Some(g) => tier_index::TierGpuIndex::new(&world.hypernodes, world.nodes.len(), |d| {
                domain_free[0][d.index() * n_res + g]
            }),
            None => tier_index::TierGpuIndex::default(),
        };
        Cluster {
            tier_gpu,
            devices: devices::Devices::new(world),
            vgpu: volcano_vgpu::VgpuBook::new(world),
            gpu_keyed,
            gpu_stale: noted::NotedNodes::new(world.nodes.len()),
            nodes,
            gpu_order,
            gpu_hist,
            gpu_buckets,
            tier_max_alloc,
            domain_alloc: domain_free.clone(),
            domain_free,
            name_rank,
            res: KeyResources {
                cpu: id("cpu"),
                memory: id("memory"),
                gpu: id(kueuesim_model::resources::GPU),
            },
            next_start: [0; 2],
            all_nodes: all_nodes(world).into(),
            unplaceable: (u64::MAX, Vec::new()),
            label_index: {
                let mut index = LabelIndex::new();
                for (i, n) in world.nodes.iter().enumerate() {
                    for (k, v) in n.labels.iter() {
                        index
                            .entry(k.to_string())
                            .or_default()
                            .entry(v.to_string())
                            .or_default()
                            .push(NodeId::from_index(i));
                    }
                }
                std::sync::Arc::new(index)
            },
            plain_nodes,
            kai_counts: kai::counts::TaskFitCounts::default(),
            kai_scratch: kai::bind::CommitScratch::default(),
            kai_order: None,
        }
    }

    /// How many copies of a task of `shape` (per resource index, a positive amount) fit in
    /// domain `d` of `world.topologies[topology]` (KAI's `AllocatablePods`). The first question
    /// about a shape counts it over every node; from then on its counts are kept in step with
    /// every bind and release (a few shapes are kept, the least recently asked about makes
    /// room).
    pub fn kai_fit_count(
        &mut self,
        world: &World,
        shape: &kai::counts::Shape,
        topology: usize,
        d: DomainId,
    ) -> kai::counts::FitCount {
        self.kai_counts.get(world, &self.nodes, shape, topology, d)
    }

    /// Keeps `shape`'s KAI counts (as `kai_fit_count`) and returns their slot for
    /// `kai_counts_of`: two steps, so that the counts can be read beside the rest of the
    /// cluster while the tree is walked, without a lookup of the shape per domain.
    pub fn kai_keep(&mut self, world: &World, shape: &kai::counts::Shape) -> usize {
        self.kai_counts.keep(world, &self.nodes, shape)
    }

    /// Every domain's counts of `world.topologies[topology]` for the shape in `slot` (from
    /// `kai_keep`, with no other shape asked about since), indexed by domain.
    pub fn kai_counts_of(&self, slot: usize, topology: usize) -> &[kai::counts::FitCount] {
        self.kai_counts.of(slot, topology)
    }

    /// The task shapes whose KAI counts are kept, least recently asked about first.
    pub fn kai_shapes(&self) -> Vec<&kai::counts::Shape> {
        self.kai_counts.shapes()
    }

    /// Whether `pod` passes the static filters (`statically_feasible`) on every node.
    #[inline]
    pub fn statically_plain(&self, pod: &PodNeeds) -> bool {
        self.plain_nodes && pod.node_selector.is_empty()
    }

    /// Takes (sign 1) or gives back (sign -1) a device claim on `node`, and with it the one
    /// `nvidia.com/gpu` of KAI's reservation pod when the claim is the first KAI share on its
    /// device or the last to leave it (the reservation pod is a pod of the node like any
    /// other, so the node's GPU count and every index follow it).
    pub fn apply_claim(&mut self, world: &World, node: NodeId, claim: devices::Claim, sign: i64) {
        let Some(dev) = self.devices.as_mut() else {
            return;
        };
        let reservations = dev.book.apply(node, claim, sign);
        if reservations != 0
            && let Some(g) = self.res.gpu
        {
            let one = ResourceList::from_pairs(vec![(ResourceId::from_index(g), 1)]);
            self.apply(world, node, &one, reservations);
        }
    }

    /// Binds (sign 1) or releases (sign -1) one pod on `node`, in the node and in every
    /// domain above it.
    pub fn apply(&mut self, world: &World, node: NodeId, requests: &ResourceList, sign: i64) {
        let before = self.res.gpu.map(|g| self.nodes.free(node, g));
        self.nodes.apply(node, requests, sign);
        self.kai_counts
            .changed(world, &self.nodes, node, requests, sign);
        if let (Some(g), Some(b)) = (self.res.gpu, before) {
            self.note_gpu_move(node, g, b, self.nodes.free(node, g));
        }
        let gpu = self.res.gpu.filter(|_| self.gpu_buckets > 0);
        let bucket = |free: i64| free.clamp(0, self.gpu_buckets as i64 - 1) as usize;
        let moved = match (gpu, before) {
            (Some(g), Some(b)) => {
                let after = self.nodes.free(node, g);
                (bucket(b) != bucket(after)).then(|| (bucket(b), bucket(after)))
            }
            _ => None,
        };
        let n_res = self.nodes.n_resources;
        let buckets = self.gpu_buckets;
        for ((t, free), hist) in topologies(world)
            .zip(&mut self.domain_free)
            .zip(&mut self.gpu_hist)
        {
            let Some(mut a) = t.domain_of(node) else {
                continue;
            };
            // The node's domain and its ancestors, by parent links (a plain loop: this runs
            // per topology on every bind and release).
            loop {
                let row = &mut free[a.index() * n_res..][..n_res];
                for (r, q) in requests.iter() {
                    row[r.index()] -= sign * q;
                }
                if let Some((from, to)) = moved {
                    let h = &mut hist[a.index() * buckets..][..buckets];
                    h[from] -= 1;
                    h[to] += 1;
                }
                match t.domain(a).parent {
                    Some(p) => a = p,
                    None => break,
                }
            }
        }
    }

    /// A committed bind or release moved `node`'s free GPUs (resource `g`) from `before` to
    /// `after` (`apply`, `commit_bound`): the lazily kept GPU indexes note the node, to move
    /// it when next read (the bin-pack order of nodes, Volcano's per-tier free GPUs, and KAI's
    /// per-domain order when its GPU bucket changed).
    #[inline(always)]
    pub(crate) fn note_gpu_move(&mut self, node: NodeId, g: usize, before: i64, after: i64) {
        if before == after {
            return;
        }
        if !self.gpu_stale.contains(node) && self.nodes.allocatable(node, g) > 0 {
            self.gpu_stale.note(node);
        }
        self.tier_gpu.note(node);
        let bucket = |free: i64| free.clamp(0, self.gpu_buckets as i64 - 1);
        if self.gpu_buckets > 0
            && bucket(before) != bucket(after)
            && let Some(order) = &mut self.kai_order
        {
            order.note(node);
        }
    }

    /// Brings `gpu_order` up to date with the nodes' free GPUs: the entries of the nodes
    /// bound or released on since the last call move to their current count.
    pub fn sync_gpu_order(&mut self) {
        let Some(g) = self.res.gpu else { return };
        for n in self.gpu_stale.drain() {
            let (was, now) = (self.gpu_keyed[n.index()], self.nodes.free(n, g));
            if was != now {
                let rank = self.name_rank[n.index()];
                self.gpu_order.remove((was, rank, n));
                self.gpu_order.insert((now, rank, n));
                self.gpu_keyed[n.index()] = now;
            }
        }
    }

    /// The HyperNodes of the `tier_index`-th tier of the HyperNode tree with at least `gpus`
    /// GPUs free, in the tier's order, into `out`; None when the index is not kept (no GPUs
    /// or no HyperNode tiers), and the caller looks at every HyperNode of the tier.
    pub fn hypernodes_with_free_gpus(
        &mut self,
        world: &World,
        tier_index: usize,
        gpus: i64,
        out: &mut Vec<DomainId>,
    ) -> Option<()> {
        let g = self.res.gpu?;
        if !self.tier_gpu.enabled() {
            return None;
        }
        let n_res = self.nodes.n_resources;
        let free = &self.domain_free[0];
        self.tier_gpu
            .sync(&world.hypernodes, |d| free[d.index() * n_res + g]);
        self.tier_gpu
            .with_free(&world.hypernodes, tier_index, gpus, out);
        Some(())
    }

    /// The nodes with GPUs by (free GPUs, name rank), as of the last `sync_gpu_order`.
    pub(crate) fn gpu_order(&self) -> &gpu_order::GpuOrder {
        debug_assert!(
            self.gpu_stale.is_empty(),
            "gpu_order read before sync_gpu_order"
        );
        &self.gpu_order
    }

    /// Whether the GPU order, the per-domain GPU histograms, Volcano's per-tier free GPUs and
    /// KAI's kept counts and bin-pack order agree with the nodes' free capacity (an invariant
    /// `Simulation::check_invariants` states).
    pub fn check_indexes(&self, world: &World) -> Result<(), String> {
        self.kai_counts.check(world, &self.nodes)?;
        self.nodes.check_classes()?;
        let Some(g) = self.res.gpu else { return Ok(()) };
        if let Some(order) = &self.kai_order {
            order.check(world, &self.nodes, g)?;
        }
        let n_res = self.nodes.n_resources;
        self.tier_gpu.check(&world.hypernodes, |d| {
            self.domain_free[0][d.index() * n_res + g]
        })?;
        let with_gpus = (0..world.nodes.len())
            .map(NodeId::from_index)
            .filter(|&n| world.node(n).allocatable.get(g).copied().unwrap_or(0) > 0);
        let mut count = 0;
        for n in with_gpus {
            count += 1;
            // A node noted stale may sit under an older count until the next sync; every
            // other node's entry carries its current count.
            let keyed = self.gpu_keyed[n.index()];
            if !self.gpu_stale.contains(n) && keyed != self.nodes.free(n, g) {
                return Err(format!(
                    "node {} has {} GPUs free but the GPU order says {keyed} and it is not noted stale",
                    world.node(n).name,
                    self.nodes.free(n, g)
                ));
            }
            let key = (keyed, self.name_rank[n.index()], n);
            if !self.gpu_order.contains(key) {
                return Err(format!(
                    "node {} is not in the GPU order at {key:?}",
                    world.node(n).name
                ));
            }
        }
        if count != self.gpu_order.len() {
            return Err(format!(
                "the GPU order has {} nodes, not {count}",
                self.gpu_order.len()
            ));
        }
        if self.gpu_buckets == 0 {
            return Ok(());
        }
        for ((ti, t), hist) in topologies(world).enumerate().zip(&self.gpu_hist) {
            for d in 0..t.domains.len() {
                let mut expect = vec![0u32; self.gpu_buckets];
                for &n in t.nodes_of(DomainId::from_index(d)) {
                    expect[self.nodes.free(n, g).clamp(0, self.gpu_buckets as i64 - 1) as usize] +=
                        1;
                }
                if expect[..] != hist[d * self.gpu_buckets..][..self.gpu_buckets] {
                    return Err(format!(
                        "topology {ti} domain {} GPU histogram is stale",
                        t.domain(DomainId::from_index(d)).name
                    ));
                }
            }
        }
        Ok(())
    }

    /// At most how many pods of `gpus` GPUs each domain `d` of topology `t` could host now,
    /// counting GPUs only (`None`: not tracked). A necessary condition, exact for GPUs.
    pub fn domain_gpu_pods(&self, t: usize, d: DomainId, gpus: i64) -> Option<u64> {
        if self.gpu_buckets == 0 || gpus <= 0 {
            return None;
        }
        let h = &self.gpu_hist[t][d.index() * self.gpu_buckets..][..self.gpu_buckets];
        Some(
            h.iter()
                .enumerate()
                .skip(gpus as usize)
                .map(|(free, &count)| u64::from(count) * (free as u64 / gpus as u64))
                .sum(),
        )
    }

    /// The GPUs per pod and the number of pending pods of each pod set of `pods` with pods
    /// pending, in order: what `domain_may_place` reads, worked out once per decision rather
    /// than once per domain. None when GPUs are not tracked per domain.
    pub fn pending_gpu_pods(&self, pods: &GangPods) -> Option<Vec<(i64, u64)>> {
        let g = self.res.gpu.filter(|_| self.gpu_buckets > 0)?;
        Some(
            pods.iter()
                .map(|(needs, slots)| {
                    let pending = slots.iter().filter(|s| s.is_none()).count() as u64;
                    (needs.requests.get(ResourceId::from_index(g)), pending)
                })
                .filter(|&(_, pending)| pending > 0)
                .collect(),
        )
    }

    /// Whether domain `d` of topology `t` could host `need` of the pending pods by GPUs alone
    /// (pods of pod set after pod set, as `fill` takes them; `sets` from `pending_gpu_pods`,
    /// None: GPUs not tracked): a necessary condition for `fill` to place them there.
    pub fn domain_may_place(
        &self,
        t: usize,
        d: DomainId,
        sets: Option<&[(i64, u64)]>,
        need: usize,
    ) -> bool {
        let Some(sets) = sets else {
            return true;
        };
        let mut possible = 0u64;
        for &(k, pending) in sets {
            possible += match self.domain_gpu_pods(t, d, k) {
                Some(cap) => cap.min(pending),
                None => pending,
            };
            if possible >= need as u64 {
                return true;
            }
        }
        possible >= need as u64
    }

    /// Free amount of resource `r` in domain `d` of topology `t` (0: HyperNodes).
    #[inline]
    pub fn domain_free(&self, t: usize, d: DomainId, r: usize) -> i64 {
        self.domain_free[t][d.index() * self.nodes.n_resources + r]
    }

    /// Allocatable amount of resource `r` in domain `d` of topology `t`.
    #[inline]
    pub fn domain_alloc(&self, t: usize, d: DomainId, r: usize) -> i64 {
        self.domain_alloc[t][d.index() * self.nodes.n_resources + r]
    }

    /// Whether some domain of the `tier_index`-th tier of topology `t` is big enough for
    /// `total` (allocatable, not free: a necessary condition).
    pub fn tier_may_hold(&self, t: usize, tier_index: usize, total: &[(usize, i64)]) -> bool {
        let max = &self.tier_max_alloc[t][tier_index];
        total.iter().all(|&(r, q)| max[r] >= q)
    }

    /// Whether domain `d` has at least `total` free of every resource: a necessary condition
    /// for a gang needing `total` to fit there.
    pub fn domain_may_hold(&self, t: usize, d: DomainId, total: &[(usize, i64)]) -> bool {
        total.iter().all(|&(r, q)| self.domain_free(t, d, r) >= q)
    }
}

/// The topologies in `Cluster` index order: the HyperNode tree, then `world.topologies`.
pub fn topologies(world: &World) -> impl Iterator<Item = &Topology> {
    std::iter::once(&world.hypernodes).chain(world.topologies.iter())
}

/// What a pod of one pod set needs from a node: its requests, the nodeSelector (its own plus
/// its flavors' nodeLabels, which Kueue injects), and its tolerations (plus the flavors').
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodNeeds {
    /// Requests of one pod.
    pub requests: ResourceList,
    /// Required node labels.
    pub node_selector: Labels,
    /// Tolerations.
    pub tolerations: Vec<Toleration>,
}

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
fn node_rejections(world: &World, cap: &NodeCapacity, node: NodeId, pod: &PodNeeds) -> Vec<String> {
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
enum Cause {
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
fn count_causes(
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
    // The capacity causes are the common ones (every node of a busy cluster): counted in
    // plain integers, folded into `counts` once at the end.
    let mut too_many_pods = 0usize;
    let mut short: Vec<(usize, i64, usize)> = pod
        .requests
        .iter()
        .map(|(r, a)| (r.index(), a, 0usize))
        .collect();
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
        let mut fits = true;
        if cap.free_pods[n.index()] < 1 {
            too_many_pods += 1;
            fits = false;
        }
        for (r, a, c) in short.iter_mut() {
            if *a > cap.free(n, *r) {
                *c += 1;
                fits = false;
            }
        }
        // The GPU-share filter (`Open-Gpu-Share`) runs after NodeResourcesFit.
        if fits && devices.is_some_and(|(book, d)| !book.fits(n, d)) {
            no_device += 1;
        }
    }
    if no_device > 0 {
        *counts.entry(Cause::Devices).or_default() += no_device;
    }
    if too_many_pods > 0 {
        *counts.entry(Cause::TooManyPods).or_default() += too_many_pods;
    }
    for (r, _, c) in short {
        if c > 0 {
            *counts.entry(Cause::Insufficient(r)).or_default() += c;
        }
    }
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
/// without reading its labels, and only the matching nodes (label index) are looked at.
/// Same message.
pub fn fit_error_all(world: &World, cluster: &Cluster, pod: &PodNeeds) -> String {
    let devices = cluster
        .devices
        .as_ref()
        .and_then(|d| d.book.demand(&pod.requests).map(|g| (&d.book, g)));
    // With GPU devices every node is looked at (a device's free share is no plain count);
    // without, a pod whose only constraints are amounts takes the plain path.
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
fn format_fit_error(world: &World, counts: BTreeMap<Cause, usize>, total: usize) -> String {
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

/// The pods of one workload as its scheduler sees them: per pod set, what a pod needs and
/// where each pod is bound (None: pending).
pub type GangPods = [(PodNeeds, Vec<Option<NodeId>>)];

/// The result of one placement attempt.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Placement {
    /// New bindings: (pod set, pod index, node).
    pub bound: Vec<(usize, usize, NodeId)>,
    /// Why not every pending pod was bound (the first pod left pending and the scheduler's
    /// explanation, worded as that scheduler words it).
    pub unplaced: Option<(usize, usize, String)>,
    /// The topology domain the gang was placed in (Volcano's `job-allocated-hypernode`, KAI's
    /// chosen domain), if a topology constraint applied.
    pub domain: Option<String>,
    /// With GPU devices: the devices each new binding of a GPU pod holds, (pod set, pod
    /// index, claim).
    pub claims: Vec<(usize, usize, devices::Claim)>,
    /// With Volcano vGPU: the vGPU devices each new binding of a vGPU pod holds, (pod set,
    /// pod index, claim).
    pub vgpu: Vec<(usize, usize, volcano_vgpu::VgpuClaim)>,
}

/// A score as the schedulers compute it (a float sum of plugin scores), totally ordered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score(pub f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A per-attempt pseudo-random key of a node, for "pick at random among the best" where
/// upstream does (kube-scheduler's `selectHost`, Volcano's `SelectBestNode`): deterministic
/// in (seed, node), so runs repeat exactly.
#[inline]
pub fn tie_key(seed: u64, node: NodeId) -> u64 {
    // splitmix64 over the pair.
    let mut z = seed ^ (u64::from(node.0).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// How `fill` ranks nodes: a node's score is its group's score plus its own. Groups let a
/// policy express "stay in the same leaf" (Volcano) or "roomiest preferred subdomain first"
/// (KAI) without rescoring every node after every bind.
pub trait Scorer {
    /// The scoring group of `node` (a small dense index).
    fn group(&self, node: NodeId) -> usize;
    /// The group's score for the next pod.
    fn group_score(&mut self, group: usize) -> f64;
    /// The node's own score for one more pod of `pod` given its free capacity.
    fn node_score(&self, cap: &NodeCapacity, node: NodeId, pod: &PodNeeds) -> f64;
    /// Tie-break among equal totals: higher wins.
    fn tie(&self, node: NodeId) -> u64;
    /// Whether every candidate is known to pass the static filters for `pod` (none
    /// unschedulable or with a blocking taint, and `pod` has no node selector), so that
    /// `fill` checks only capacity; false (check everything) unless a scorer knows.
    fn statically_plain(&self, _pod: &PodNeeds) -> bool {
        false
    }
    /// A pod was bound to `node`.
    fn bound(&mut self, node: NodeId);
    /// Whether groups tied at the highest group score get `tie_bonus` for this pod (Volcano's
    /// network-topology-aware task-count bonus); false for every other scheduler.
    fn has_tie_bonus(&self) -> bool {
        false
    }
    /// The bonus of `group` when it is tied at the highest group score with more than one
    /// feasible node among the tied groups.
    fn tie_bonus(&self, _group: usize) -> f64 {
        0.0
    }
}

/// A pod binding: (pod set, pod index, node).
pub type Binding = (usize, usize, NodeId);

/// Binds up to `limit` pending pods of `pods`, pod set by pod set, each to the best-scoring
/// feasible node among `candidates`, updating `cap`. Stops at the first pod no candidate can
/// take and returns it as `Err((bound so far, (pod set, index)))`; the caller undoes or keeps
/// the partial bindings.
#[allow(clippy::type_complexity)]
pub fn fill<S: Scorer>(
    world: &World,
    cap: &mut NodeCapacity,
    candidates: &[NodeId],
    pods: &GangPods,
    limit: usize,
    scorer: &mut S,
) -> Result<Vec<Binding>, (Vec<Binding>, (usize, usize))> {
    let pending_total: usize = pods.iter().map(|(_, s)| s.len()).sum();
    let mut bound = Vec::with_capacity(limit.min(pending_total));
    // Group → slot in `heaps`, created on first use, so only groups with candidates are
    // looked at per pod. Candidates of one domain have groups in a narrow id range.
    let (lo, hi) = candidates
        .iter()
        .map(|&n| scorer.group(n))
        .fold((usize::MAX, 0), |(lo, hi), g| (lo.min(g), hi.max(g)));
    let lo = lo.min(hi);
    let mut slot_of: Vec<u32> = vec![u32::MAX; hi - lo + 1];
    type Entry = (Score, u64, NodeId);
    let mut heaps: Vec<(usize, BinaryHeap<Entry>)> = Vec::new();
    for (ps, (needs, slots)) in pods.iter().enumerate() {
        if bound.len() >= limit {
            break;
        }
        let mut pending = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_none())
            .map(|(i, _)| i)
            .take(limit - bound.len())
            .peekable();
        if pending.peek().is_none() {
            continue;
        }
        for (g, h) in &mut heaps {
            h.clear();
            slot_of[*g - lo] = u32::MAX;
        }
        heaps.clear();
        let plain = scorer.statically_plain(needs);
        for &n in candidates {
            let ok = if plain {
                cap.fits(n, &needs.requests)
            } else {
                feasible(world, cap, n, needs)
            };
            if ok {
                let g = scorer.group(n);
                if slot_of[g - lo] == u32::MAX {
                    slot_of[g - lo] = heaps.len() as u32;
                    // The first group's heap has room for every candidate: with one group
                    // (KAI without a preferred level) it never grows.
                    let heap = if heaps.is_empty() {
                        BinaryHeap::with_capacity(candidates.len())
                    } else {
                        BinaryHeap::new()
                    };
                    heaps.push((g, heap));
                }
                heaps[slot_of[g - lo] as usize].1.push((
                    Score(scorer.node_score(cap, n, needs)),
                    scorer.tie(n),
                    n,
                ));
            }
        }
        for idx in pending {
            // The highest group score among groups with a feasible node, when more than one
            // node shares it (the only case the tie bonus applies).
            let tied_max = if scorer.has_tie_bonus() {
                let mut max = f64::NEG_INFINITY;
                let mut nodes = 0;
                for (g, h) in &heaps {
                    if h.is_empty() {
                        continue;
                    }
                    let s = scorer.group_score(*g);
                    match s.total_cmp(&max) {
                        std::cmp::Ordering::Greater => (max, nodes) = (s, h.len()),
                        std::cmp::Ordering::Equal => nodes += h.len(),
                        std::cmp::Ordering::Less => {}
                    }
                }
                (nodes > 1).then_some(max)
            } else {
                None
            };
            // The best node of each group, then the best group total.
            let mut best: Option<(Score, u64, usize, NodeId)> = None;
            for (k, (g, h)) in heaps.iter().enumerate() {
                let Some(&(s, t, n)) = h.peek() else { continue };
                let group = scorer.group_score(*g);
                let bonus = match tied_max {
                    Some(m) if group.total_cmp(&m).is_eq() => scorer.tie_bonus(*g),
                    _ => 0.0,
                };
                let total = Score(group + bonus + s.0);
                if best.is_none_or(|b| (total, t) > (b.0, b.1)) {
                    best = Some((total, t, k, n));
                }
            }
            let Some((_, _, g, node)) = best else {
                return Err((bound, (ps, idx)));
            };
            heaps[g].1.pop();
            cap.apply(node, &needs.requests, 1);
            bound.push((ps, idx, node));
            scorer.bound(node);
            if cap.fits(node, &needs.requests) {
                heaps[g].1.push((
                    Score(scorer.node_score(cap, node, needs)),
                    scorer.tie(node),
                    node,
                ));
            }
        }
    }
    Ok(bound)
}

/// Gives back bindings made on `cap` (a discarded dry run).
pub fn undo(cap: &mut NodeCapacity, pods: &GangPods, bound: &[Binding]) {
    for &(ps, _, n) in bound {
        cap.apply(n, &pods[ps].0.requests, -1);
    }
}

/// `pods` with `bound` recorded as bound.
pub fn with_bindings(pods: &GangPods, bound: &[Binding]) -> Vec<(PodNeeds, Vec<Option<NodeId>>)> {
    let mut v = pods.to_vec();
    for &(ps, idx, n) in bound {
        v[ps].1[idx] = Some(n);
    }
    v
}

/// Σ over pending pods of their requests, by resource index: what a gang still needs.
pub fn pending_total(pods: &GangPods) -> Vec<(usize, i64)> {
    let mut total: BTreeMap<usize, i64> = BTreeMap::new();
    for (needs, slots) in pods {
        let pending = slots.iter().filter(|s| s.is_none()).count() as i64;
        for (r, a) in needs.requests.iter() {
            *total.entry(r.index()).or_default() += a * pending;
        }
    }
    total.into_iter().collect()
}

/// The number of pods already bound and the number pending.
pub fn counts(pods: &GangPods) -> (usize, usize) {
    let bound = pods
        .iter()
        .flat_map(|(_, s)| s)
        .filter(|s| s.is_some())
        .count();
    let total: usize = pods.iter().map(|(_, s)| s.len()).sum();
    (bound, total - bound)
}

/// The gang's pending pods in order: (pod set, pod index, what each pod of the set needs).
pub fn pending_pods(pods: &GangPods) -> impl Iterator<Item = (usize, usize, &PodNeeds)> + Clone {
    pods.iter().enumerate().flat_map(|(ps, (needs, slots))| {
        slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_none())
            .map(move |(idx, _)| (ps, idx, needs))
    })
}

/// The first pending pod of the gang.
pub fn first_pending(pods: &GangPods) -> Option<(usize, usize)> {
    pods.iter()
        .enumerate()
        .find_map(|(ps, (_, s))| s.iter().position(Option::is_none).map(|i| (ps, i)))
}
