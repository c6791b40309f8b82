//! The cluster's capacity as the placements read it: per-node capacity plus per-domain free
//! capacity of every topology, the label index, and the lazily kept orders (KAI's bin-pack
//! order, Volcano's tier index), all kept in step on every bind and release.

use std::collections::BTreeMap;

use kueuesim_model::{DomainId, NodeId, ResourceId, ResourceList, World};

use super::{
    GangPods, NodeCapacity, PodNeeds, all_nodes, ancestors, commit, devices, domain_order,
    fit_counts, gpu_order, noted, tier_index, topologies, vgpu_book,
};

mod checks;

/// Per-domain GPU histograms are kept for nodes of at most this many GPUs.
pub(super) const MAX_GPU_BUCKETS: usize = 257;

/// Node capacity plus, for every topology, the free capacity of each domain (the sum over its
/// nodes), kept in step on every bind and release.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// Per node.
    pub nodes: NodeCapacity,
    /// Per topology (0: the Volcano HyperNode tree, 1 + i: `world.topologies[i]`), per
    /// (domain, resource): free capacity.
    pub(super) domain_free: Vec<Vec<i64>>,
    /// The same layout: allocatable capacity (fixed).
    pub(super) domain_alloc: Vec<Vec<i64>>,
    /// Counts the committed binds and releases (`apply`, and one per `commit_bound`), the
    /// changes that move `domain_free`: a dry run on `nodes` alone, undone before anything
    /// reads a domain row again, does not count.
    pub(super) rows_version: u64,
    /// Per HyperNode (domain of topology 0): the `rows_version` of the last committed bind or
    /// release on one of its nodes (0: none), set for the node's whole chain, so a HyperNode's
    /// is at least each child's. Invariant: while a HyperNode's entry is at most `v`, its free
    /// row and its nodes' free capacity and pod slots are what they were at `rows_version`
    /// `v` (`check_indexes` checks what the entries can say of themselves; Volcano's tier
    /// memos compare the rows in debug builds). Volcano's failure path reads this instead of
    /// comparing every HyperNode's row or every node of one (`volcano/last_tier.rs`,
    /// `volcano/explain.rs`).
    pub(super) hypernode_changed: Vec<u64>,
    /// Per node, the domains `apply` changes (its domain and the ancestors, every topology):
    /// fixed, shared between clones.
    pub(super) ancestors: std::sync::Arc<ancestors::AncestorChains>,
    /// Per topology, per entry of its `by_tier`: the largest allocatable of any domain of
    /// that tier, per resource (fixed), to skip whole tiers a gang cannot fit in.
    pub(super) tier_max_alloc: Vec<Vec<Vec<i64>>>,
    /// Per topology, per (domain, free GPUs): how many nodes of the domain have exactly that
    /// many GPUs free (`gpu_buckets` buckets per domain; empty when there are no GPUs or a
    /// node has more than `MAX_GPU_BUCKETS - 1`). How many pods of k GPUs a domain could host
    /// at most follows without looking at its nodes, which rules out most domains of a
    /// fragmented cluster before any dry run.
    pub(super) gpu_hist: Vec<Vec<u32>>,
    /// Buckets per domain in `gpu_hist` (largest node GPU count + 1), 0 when disabled.
    pub(super) gpu_buckets: usize,
    /// The nodes with GPUs, ordered by (free GPUs, name rank): KAI's bin-pack order, so its
    /// best node for a pod is the first feasible one from the pod's GPU count up
    /// (`kai::fill_binpack`), without scoring every node. Kept for committed bindings only,
    /// and brought up to date lazily (`sync_gpu_order`): a bind only notes its node in
    /// `gpu_stale`, so the placements that never read the order (KAI with a topology,
    /// Volcano, kube-scheduler) do not pay two B-tree updates per bind.
    pub(super) gpu_order: gpu_order::GpuOrder,
    /// Per node: the free GPUs its `gpu_order` entry carries (nodes with GPUs).
    pub(super) gpu_keyed: Vec<i64>,
    /// The nodes whose free GPUs may have moved since their `gpu_order` entry was made.
    pub(super) gpu_stale: noted::NotedNodes,
    /// The HyperNodes of each tier by free GPUs, for Volcano's gradient search; kept lazily
    /// like `gpu_order` (`sync_tier_index`).
    pub(super) tier_gpu: tier_index::TierGpuIndex,
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
    pub vgpu: Option<vgpu_book::VgpuBook>,
    /// Buffers Volcano's gradient search refills on every attempt (no meaning between
    /// attempts): kept here so a million attempts do not allocate them afresh.
    pub(super) volcano_scratch: super::scratch::GradientScratch,
    /// Per task shape KAI's topology plugin asked about, per domain of every Topology: how
    /// many copies of the task fit (`AllocatablePods`), kept in step on every bind and release
    /// so that `checkJobDomainFit` is a lookup, not a pass over the domain's nodes.
    pub(super) kai_counts: fit_counts::TaskFitCounts,
    /// The buffers of KAI's batched commit (`commit_bound`), reused from one to the next.
    pub(super) kai_scratch: commit::CommitScratch,
    /// Per domain of every Topology, its nodes in KAI's bin-pack order (free GPUs, name),
    /// built on the first read (`kai_binpack_in`) and from then on noted on every bind and
    /// release that moves a node's free GPUs, brought up to date when read.
    pub(super) kai_order: Option<domain_order::DomainOrder>,
}

/// Node label key → value → nodes with that label, in id order.
pub type LabelIndex = BTreeMap<String, BTreeMap<String, Vec<NodeId>>>;

/// The nodes whose labels include every pair of `selector` (non-empty), in id order.
pub fn nodes_matching<'a>(
    index: &'a LabelIndex,
    selector: &kueuesim_model::Labels,
) -> std::borrow::Cow<'a, [NodeId]> {
    use std::borrow::Cow;
    let mut lists: Vec<&[NodeId]> = Vec::new();
    for (k, v) in selector.iter() {
        match index.get(k).and_then(|vals| vals.get(v)) {
            Some(list) => lists.push(list),
            None => return Cow::Borrowed(&[]),
        }
    }
    lists.sort_by_key(|l| l.len());
    match lists.as_slice() {
        [] => Cow::Borrowed(&[]),
        // One label (a flavor's node label, a pool): the index's own list, not a copy of
        // its thousands of nodes for every pod set placed.
        [only] => Cow::Borrowed(only),
        [first, rest @ ..] => Cow::Owned(
            first
                .iter()
                .copied()
                .filter(|n| rest.iter().all(|l| l.binary_search(n).is_ok()))
                .collect(),
        ),
    }
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
            Some(g) => tier_index::TierGpuIndex::new(&world.hypernodes, |d| {
                domain_free[0][d.index() * n_res + g]
            }),
            None => tier_index::TierGpuIndex::default(),
        };
        Cluster {
            tier_gpu,
            devices: devices::Devices::new(world),
            vgpu: vgpu_book::VgpuBook::new(world),
            volcano_scratch: Default::default(),
            gpu_keyed,
            gpu_stale: noted::NotedNodes::new(world.nodes.len()),
            nodes,
            gpu_order,
            gpu_hist,
            gpu_buckets,
            tier_max_alloc,
            domain_alloc: domain_free.clone(),
            rows_version: 0,
            hypernode_changed: vec![0; world.hypernodes.domains.len()],
            ancestors: std::sync::Arc::new(ancestors::AncestorChains::new(world)),
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
            kai_counts: fit_counts::TaskFitCounts::default(),
            kai_scratch: commit::CommitScratch::default(),
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
        shape: &fit_counts::Shape,
        topology: usize,
        d: DomainId,
    ) -> fit_counts::FitCount {
        self.kai_counts.get(world, &self.nodes, shape, topology, d)
    }

    /// Keeps `shape`'s KAI counts (as `kai_fit_count`) and returns their slot for
    /// `kai_counts_of`: two steps, so that the counts can be read beside the rest of the
    /// cluster while the tree is walked, without a lookup of the shape per domain.
    pub fn kai_keep(&mut self, world: &World, shape: &fit_counts::Shape) -> usize {
        self.kai_counts.keep(world, &self.nodes, shape)
    }

    /// Every domain's counts of `world.topologies[topology]` for the shape in `slot` (from
    /// `kai_keep`, with no other shape asked about since), indexed by domain.
    pub fn kai_counts_of(&self, slot: usize, topology: usize) -> &[fit_counts::FitCount] {
        self.kai_counts.of(slot, topology)
    }

    /// The task shapes whose KAI counts are kept, least recently asked about first.
    pub fn kai_shapes(&self) -> Vec<&fit_counts::Shape> {
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
        // The change as one dense row of the world's resource count (usually four: cpu,
        // memory, GPUs, pods), summed once from the request's pairs, then added to the node's
        // row and to each domain's row as a fixed-size array: no per-pair index and bounds
        // check per row. Integer sums, so the rows end the same as with the pairs applied one
        // by one.
        match self.nodes.n_resources {
            1 => self.apply_delta::<1>(world, node, requests, sign),
            2 => self.apply_delta::<2>(world, node, requests, sign),
            3 => self.apply_delta::<3>(world, node, requests, sign),
            4 => self.apply_delta::<4>(world, node, requests, sign),
            5 => self.apply_delta::<5>(world, node, requests, sign),
            6 => self.apply_delta::<6>(world, node, requests, sign),
            7 => self.apply_delta::<7>(world, node, requests, sign),
            8 => self.apply_delta::<8>(world, node, requests, sign),
            _ => self.apply_pairs(world, node, requests, sign),
        }
    }

    /// `apply` for a world of exactly `N` resources (`NodeCapacity::apply_delta`).
    #[inline(always)]
    fn apply_delta<const N: usize>(
        &mut self,
        world: &World,
        node: NodeId,
        requests: &ResourceList,
        sign: i64,
    ) {
        let delta = super::capacity::dense_delta::<N>(requests, sign);
        let gpu_before = self.res.gpu.map(|g| self.nodes.free(node, g));
        self.nodes.apply_delta(node, &delta, sign);
        self.after_node_change(world, node, requests, sign, gpu_before, |free, d| {
            let row = free[d * N..]
                .first_chunk_mut::<N>()
                .expect("every domain has a row");
            for (f, x) in row.iter_mut().zip(&delta) {
                *f += x;
            }
        });
    }

    /// `apply` pair by pair, for a world of more resources than `apply_delta` is made for.
    fn apply_pairs(&mut self, world: &World, node: NodeId, requests: &ResourceList, sign: i64) {
        let n_res = self.nodes.n_resources;
        let gpu_before = self.res.gpu.map(|g| self.nodes.free(node, g));
        self.nodes.apply(node, requests, sign);
        self.after_node_change(world, node, requests, sign, gpu_before, |free, d| {
            let row = &mut free[d * n_res..][..n_res];
            for (r, q) in requests.iter() {
                row[r.index()] -= sign * q;
            }
        });
    }

    /// `apply(world, node, requests, 1)` of a bind a dry run already made on `nodes` alone and
    /// kept (Volcano's statement that holds): the rest of the cluster follows the node as
    /// `apply` would have after undoing the dry run's bind and making it again. Exact when no
    /// later bind of the same dry run is on `node` (the caller checks): the node is then in
    /// the state `apply` leaves it in, and its free GPUs before were those plus the request.
    pub(crate) fn apply_kept_bind(&mut self, world: &World, node: NodeId, requests: &ResourceList) {
        match self.nodes.n_resources {
            1 => self.kept_bind_delta::<1>(world, node, requests),
            2 => self.kept_bind_delta::<2>(world, node, requests),
            3 => self.kept_bind_delta::<3>(world, node, requests),
            4 => self.kept_bind_delta::<4>(world, node, requests),
            5 => self.kept_bind_delta::<5>(world, node, requests),
            6 => self.kept_bind_delta::<6>(world, node, requests),
            7 => self.kept_bind_delta::<7>(world, node, requests),
            8 => self.kept_bind_delta::<8>(world, node, requests),
            _ => {
                let n_res = self.nodes.n_resources;
                let gpu_before = self.kept_gpu_before(node, requests);
                self.after_node_change(world, node, requests, 1, gpu_before, |free, d| {
                    let row = &mut free[d * n_res..][..n_res];
                    for (r, q) in requests.iter() {
                        row[r.index()] -= q;
                    }
                });
            }
        }
    }

    /// `apply_kept_bind` for a world of exactly `N` resources: the domains get the bind's
    /// dense row, as `apply_delta` gives them.
    #[inline(always)]
    fn kept_bind_delta<const N: usize>(
        &mut self,
        world: &World,
        node: NodeId,
        requests: &ResourceList,
    ) {
        let delta = super::capacity::dense_delta::<N>(requests, 1);
        let gpu_before = self.kept_gpu_before(node, requests);
        self.after_node_change(world, node, requests, 1, gpu_before, |free, d| {
            let row = free[d * N..]
                .first_chunk_mut::<N>()
                .expect("every domain has a row");
            for (f, x) in row.iter_mut().zip(&delta) {
                *f += x;
            }
        });
    }

    /// The free GPUs `node` had before a kept bind of `requests` (already on the node).
    fn kept_gpu_before(&self, node: NodeId, requests: &ResourceList) -> Option<i64> {
        self.res
            .gpu
            .map(|g| self.nodes.free(node, g) + requests.get(ResourceId::from_index(g)))
    }

    /// What a bind or release changes past `node`'s own capacity (already changed): the
    /// kept shapes' task-copy counts, the GPU indexes' notes, and the node's domain and its
    /// ancestors in every topology (`add_row` changes one domain's free row). `gpu_before`:
    /// the node's free GPUs before the change (None: no GPU resource).
    #[inline(always)]
    fn after_node_change(
        &mut self,
        world: &World,
        node: NodeId,
        requests: &ResourceList,
        sign: i64,
        gpu_before: Option<i64>,
        add_row: impl FnMut(&mut [i64], usize),
    ) {
        // No KAI task shape kept (a run without KAI's topology plugin): nothing to count.
        if !self.kai_counts.is_empty() {
            self.kai_counts
                .changed(world, &self.nodes, node, requests, sign);
        }
        let buckets = self.gpu_buckets;
        let mut moved = None;
        let mut gpus_moved = false;
        if let (Some(g), Some(before)) = (self.res.gpu, gpu_before) {
            let after = self.nodes.free(node, g);
            self.note_gpu_move(node, g, before, after);
            gpus_moved = before != after;
            let bucket = |free: i64| free.clamp(0, buckets as i64 - 1) as usize;
            if buckets > 0 && bucket(before) != bucket(after) {
                moved = Some((buckets, bucket(before), bucket(after)));
            }
        }
        // The node's domain and its ancestors in every topology, from the fixed chains (this
        // runs for every pod bound or released, by every scheduler and dry run): the same
        // rows the parent links lead to, each changed once, so the sums are the same whatever
        // the order.
        let Cluster {
            ancestors,
            domain_free,
            gpu_hist,
            rows_version,
            hypernode_changed,
            tier_gpu,
            ..
        } = self;
        *rows_version += 1;
        let chains = Chains {
            ancestors,
            node,
            domain_free,
            gpu_hist,
            moved,
            stamp: (hypernode_changed, *rows_version),
            // The node's free GPUs moved: the tier index notes the HyperNodes of the chain as
            // the walk meets them (`note_gpu_move`'s note, taken here so that the chain is
            // walked once).
            tier_gpu: (gpus_moved && tier_gpu.enabled()).then_some(tier_gpu),
        };
        chains.add(add_row);
    }

    /// A committed bind or release moved `node`'s free GPUs (resource `g`) from `before` to
    /// `after` (`apply`, `commit_bound`): the lazily kept GPU indexes note the node, to move
    /// it when next read (the bin-pack order of nodes, and KAI's per-domain order when its
    /// GPU bucket changed). Volcano's per-tier index notes the HyperNodes above the node,
    /// which the caller does (`Chains::add`, `note_tier_chain`).
    #[inline(always)]
    pub(crate) fn note_gpu_move(&mut self, node: NodeId, g: usize, before: i64, after: i64) {
        if before == after {
            return;
        }
        if !self.gpu_stale.contains(node) && self.nodes.allocatable(node, g) > 0 {
            self.gpu_stale.note(node);
        }
        let bucket = |free: i64| free.clamp(0, self.gpu_buckets as i64 - 1);
        if self.gpu_buckets > 0
            && bucket(before) != bucket(after)
            && let Some(order) = &mut self.kai_order
        {
            order.note(node);
        }
    }

    /// Notes the HyperNodes above `node` in Volcano's tier index: `node`'s free GPUs moved
    /// (the note `Chains::add` takes for `apply`, for commits that walk the rows otherwise).
    pub(crate) fn note_tier_chain(&mut self, node: NodeId) {
        self.tier_gpu.note_chain(self.ancestors.of(node, 0));
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
        self.sync_tier_index(world, g, tier_index);
        let n_res = self.nodes.n_resources;
        let free = &self.domain_free[0];
        let (hist, buckets) = (&self.gpu_hist[0], self.gpu_buckets);
        self.tier_gpu.with_free(
            &world.hypernodes,
            (tier_index, gpus),
            (
                |d: DomainId| free[d.index() * n_res + g],
                |d: DomainId, k| gpu_pods_in(&hist[d.index() * buckets..][..buckets], k),
            ),
            out,
        );
        Some(())
    }

    /// The HyperNodes of the `tier_index`-th tier of the HyperNode tree whose nodes could host
    /// at least `at_least` pods of `gpus` GPUs each, counting GPUs only (`domain_gpu_pods`), in
    /// the tier's order, into `out`; None when that is not kept (no GPUs, no HyperNode tiers,
    /// no GPU histogram, or `gpus` not positive), and the caller looks at the HyperNodes
    /// another way.
    pub fn hypernodes_with_gpu_pods(
        &mut self,
        world: &World,
        tier_index: usize,
        (gpus, at_least): (i64, u64),
        out: &mut Vec<DomainId>,
    ) -> Option<()> {
        let g = self.res.gpu?;
        if !self.tier_gpu.enabled() || self.gpu_buckets == 0 || gpus <= 0 {
            return None;
        }
        self.sync_tier_index(world, g, tier_index);
        let n_res = self.nodes.n_resources;
        let free = &self.domain_free[0];
        let (hist, buckets) = (&self.gpu_hist[0], self.gpu_buckets);
        self.tier_gpu.with_pods(
            &world.hypernodes,
            tier_index,
            (gpus, at_least),
            (
                |d: DomainId| free[d.index() * n_res + g],
                |d: DomainId, k| gpu_pods_in(&hist[d.index() * buckets..][..buckets], k),
            ),
            out,
        );
        Some(())
    }

    /// Brings tier `ti` of Volcano's tier index up to date with the HyperNodes noted since
    /// that tier was last read (the other tiers wait for their own reads).
    fn sync_tier_index(&mut self, world: &World, g: usize, ti: usize) {
        debug_assert!(
            std::ptr::eq(
                &world.hypernodes,
                topologies(world).next().expect("the HyperNodes")
            ),
            "topology 0 is the HyperNode tree"
        );
        let n_res = self.nodes.n_resources;
        let free = &self.domain_free[0];
        let (hist, buckets) = (&self.gpu_hist[0], self.gpu_buckets);
        self.tier_gpu.sync(
            ti,
            |d| free[d.index() * n_res + g],
            |d, k| gpu_pods_in(&hist[d.index() * buckets..][..buckets], k),
        );
    }

    /// The nodes with GPUs by (free GPUs, name rank), as of the last `sync_gpu_order`.
    pub(crate) fn gpu_order(&self) -> &gpu_order::GpuOrder {
        debug_assert!(
            self.gpu_stale.is_empty(),
            "gpu_order read before sync_gpu_order"
        );
        &self.gpu_order
    }

    /// At most how many pods of `gpus` GPUs each domain `d` of topology `t` could host now,
    /// counting GPUs only (`None`: not tracked). A necessary condition, exact for GPUs.
    pub fn domain_gpu_pods(&self, t: usize, d: DomainId, gpus: i64) -> Option<u64> {
        if self.gpu_buckets == 0 || gpus <= 0 {
            return None;
        }
        let h = &self.gpu_hist[t][d.index() * self.gpu_buckets..][..self.gpu_buckets];
        Some(gpu_pods_in(h, gpus))
    }

    /// The GPUs per pod and the number of pending pods of each pod set of `pods` with pods
    /// pending, in order: what `domain_may_place` reads, worked out once per decision rather
    /// than once per domain. None when GPUs are not tracked per domain.
    pub fn pending_gpu_pods(&self, pods: &GangPods) -> Option<Vec<(i64, u64)>> {
        let mut sets = Vec::new();
        self.pending_gpu_pods_into(pods, &mut sets).then_some(sets)
    }

    /// `pending_gpu_pods` written into `sets` (its vector reused: Volcano's every attempt);
    /// false for None.
    pub fn pending_gpu_pods_into(&self, pods: &GangPods, sets: &mut Vec<(i64, u64)>) -> bool {
        sets.clear();
        let Some(g) = self.res.gpu.filter(|_| self.gpu_buckets > 0) else {
            return false;
        };
        sets.extend(
            pods.iter()
                .map(|(needs, slots)| {
                    let pending = slots.iter().filter(|s| s.is_none()).count() as u64;
                    (needs.requests.get(ResourceId::from_index(g)), pending)
                })
                .filter(|&(_, pending)| pending > 0),
        );
        true
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

/// What `Cluster::apply` changes above a node: the node's ancestor chains, the per-domain
/// free rows and GPU histograms of every topology, the GPU bucket move (buckets per domain,
/// from, to) if any, and the HyperNodes' change versions with the version to set.
struct Chains<'a> {
    ancestors: &'a ancestors::AncestorChains,
    node: NodeId,
    domain_free: &'a mut [Vec<i64>],
    gpu_hist: &'a mut [Vec<u32>],
    moved: Option<(usize, usize, usize)>,
    stamp: (&'a mut [u64], u64),
    /// Volcano's tier index when the node's free GPUs moved (None: they did not, or the
    /// index is not kept): it notes each HyperNode of the chain.
    tier_gpu: Option<&'a mut tier_index::TierGpuIndex>,
}

impl Chains<'_> {
    /// Topology by topology, the domains above the node (its own included, from the fixed
    /// chains), in one pass each: stamps each HyperNode with the version, moves the node
    /// between the GPU buckets of each domain's histogram, and changes each domain's free row
    /// by `add_row` (the topology's rows, the domain). One look-up of the chain per topology;
    /// each domain's row is changed once, so the sums are the same whatever the order.
    #[inline(always)]
    fn add(mut self, mut add_row: impl FnMut(&mut [i64], usize)) {
        let (changed, version) = self.stamp;
        for t in 0..self.domain_free.len() {
            let chain = self.ancestors.of(self.node, t);
            let (free, hist) = (&mut self.domain_free[t][..], &mut self.gpu_hist[t][..]);
            for &d in chain {
                if t == 0 {
                    if let Some(index) = &mut self.tier_gpu {
                        index.note(d);
                    }
                    changed[d as usize] = version;
                }
                let d = d as usize;
                if let Some((buckets, from, to)) = self.moved {
                    hist[d * buckets + from] -= 1;
                    hist[d * buckets + to] += 1;
                }
                add_row(free, d);
            }
        }
    }
}

/// How many pods of `gpus` GPUs (positive) the nodes of a GPU histogram row (nodes per count
/// of free GPUs) could host, counting GPUs only.
fn gpu_pods_in(hist: &[u32], gpus: i64) -> u64 {
    let k = gpus as usize;
    let Some(fitting) = hist.get(k..) else {
        return 0;
    };
    // A plain loop over the buckets from `k` up (the tier index's sync runs this for every
    // HyperNode it recounts): bucket `k + i` holds nodes of `(k + i) / k` pods each.
    let mut pods = 0;
    for (i, &count) in fitting.iter().enumerate() {
        pods += u64::from(count) * ((k + i) / k) as u64;
    }
    pods
}
