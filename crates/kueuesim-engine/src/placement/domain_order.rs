//! Per domain of every KAI Topology, its nodes in KAI's bin-pack order (free GPUs ascending,
//! then name), kept beside the cluster so that a dry run reads a domain's best nodes in order
//! instead of filtering and scoring every node of the domain and selecting among them.
//!
//! KAI's nodeplacement plugin with the `binpack` strategy scores a GPU task's nodes by how
//! few GPUs they have free (scaled over the candidates' range), and the allocate action breaks
//! equal scores by node name, so a dry run of alike GPU pods takes the nodes that fit in
//! (free GPUs, name) order. Here each domain keeps, per count of free GPUs, a bitset of its
//! nodes in name order: reading the bitsets from the task's GPU count up visits the nodes in
//! exactly that order, a word of 64 nodes at a time where none has that many free.
//!
//! A bind or release only notes its node (once); the bits move when a dry run next reads the
//! order (`DomainOrder::sync`), so a node bound and released again in between costs nothing,
//! and once the order exists, placements that never read it (Volcano, kube-scheduler, KAI
//! without a topology) pay one note per node whose free GPUs change. The order is built on
//! its first read (`Cluster::kai_binpack_in`), from the nodes as they are then; a cluster
//! that never reads it has none.

use std::sync::Arc;

use kueuesim_model::{DomainId, NodeId, PlacementStrategy, ResourceId, Topology, World};

use crate::placement::noted::NotedNodes;
use crate::placement::{Binding, Cluster, GangPods, NodeCapacity, undo};

/// The fixed part of one topology's order: where each domain's bitsets are and which node
/// each bit stands for. The bitsets lie count by count (all domains' bitsets of 1 free GPU,
/// then of 2, ...), so that a node's bits in every count are at one fixed offset from each
/// other and a move is a few XORs at positions worked out once.
#[derive(Debug)]
struct Layout {
    /// Depths of the tree (the deepest domain's depth + 1).
    levels: usize,
    /// Per domain: its first word in the bitsets of one count. Nodes with no GPU free have
    /// no bitset: no GPU task fits them.
    base: Vec<u32>,
    /// Per domain: words per bitset (its node count ÷ 64, rounded up).
    words: Vec<u32>,
    /// Per depth, `node_order`'s positions with each domain of that depth's nodes sorted by
    /// name: bit i of domain d's bitsets is `by_name[depth][d.nodes.start + i]`.
    by_name: Vec<Vec<NodeId>>,
    /// Per (node, depth), at `node * levels + depth`: the node's bit in the bitsets of 1
    /// free GPU of its domain of that depth, as word × 64 + bit (`u32::MAX`: no such domain).
    slot: Vec<u32>,
    /// Words of the bitsets of one count, every domain's.
    per_count: usize,
}

impl Layout {
    fn new(t: &Topology, n_nodes: usize, name_rank: &[u32]) -> Self {
        let levels = t
            .domains
            .iter()
            .map(|d| d.depth as usize + 1)
            .max()
            .unwrap_or(1);
        let mut by_name = vec![t.node_order.clone(); levels];
        let mut slot = vec![u32::MAX; n_nodes * levels];
        let mut base = Vec::with_capacity(t.domains.len());
        let mut words = Vec::with_capacity(t.domains.len());
        let mut total = 0usize;
        for d in &t.domains {
            let depth = d.depth as usize;
            let range = d.nodes.start as usize..d.nodes.end as usize;
            let slice = &mut by_name[depth][range];
            slice.sort_by_key(|n| name_rank[n.index()]);
            for (i, n) in slice.iter().enumerate() {
                let at = (total + i / 64) * 64 + i % 64;
                slot[n.index() * levels + depth] =
                    u32::try_from(at).expect("KAI order: too many bitset words");
            }
            let w = slice.len().div_ceil(64);
            base.push(total as u32);
            words.push(w as u32);
            total += w;
        }
        Layout {
            levels,
            base,
            words,
            by_name,
            slot,
            per_count: total,
        }
    }

    /// Toggles node `n`'s bit in the bitset of `b` free GPUs of each of its domains
    /// (nothing for 0).
    #[inline]
    fn flip(&self, bits: &mut [u64], n: NodeId, b: u16) {
        if b == 0 {
            return;
        }
        let offset = (usize::from(b) - 1) * self.per_count;
        for &s in &self.slot[n.index() * self.levels..][..self.levels] {
            if s != u32::MAX {
                bits[offset + (s / 64) as usize] ^= 1 << (s % 64);
            }
        }
    }
}

/// Every KAI Topology's per-domain bin-pack order (see the module comment).
#[derive(Clone, Debug)]
pub(crate) struct DomainOrder {
    /// Per topology (`world.topologies` index), shared between clones of the cluster.
    layouts: Arc<[Layout]>,
    /// Per topology: the bitsets, laid out by its `Layout`.
    bits: Vec<Vec<u64>>,
    /// Free GPU counts told apart (the cluster's `gpu_buckets`): free GPUs clamped to
    /// `0..buckets`; a node's free GPUs never exceed its allocatable, which is below it.
    buckets: usize,
    /// Per node: the count of free GPUs its bits stand at.
    keyed: Vec<u16>,
    /// The nodes whose free GPUs may have moved since their bits were set.
    stale: NotedNodes,
}

impl DomainOrder {
    /// The order of every topology, from the nodes' free GPUs (`gpu`) now; `buckets` as the
    /// cluster's GPU histograms (at least 2, at most `u16::MAX`).
    pub(crate) fn new(
        world: &World,
        nodes: &NodeCapacity,
        gpu: usize,
        buckets: usize,
        name_rank: &[u32],
    ) -> Self {
        debug_assert!((2..=usize::from(u16::MAX)).contains(&buckets));
        let n_nodes = world.nodes.len();
        let layouts: Arc<[Layout]> = world
            .topologies
            .iter()
            .map(|t| Layout::new(t, n_nodes, name_rank))
            .collect();
        let keyed: Vec<u16> = (0..n_nodes)
            .map(|n| bucket(nodes.free(NodeId::from_index(n), gpu), buckets))
            .collect();
        let mut bits: Vec<Vec<u64>> = layouts
            .iter()
            .map(|l| vec![0; l.per_count * (buckets - 1)])
            .collect();
        for ((t, lay), bits) in world.topologies.iter().zip(layouts.iter()).zip(&mut bits) {
            for &n in &t.node_order {
                lay.flip(bits, n, keyed[n.index()]);
            }
        }
        DomainOrder {
            layouts,
            bits,
            buckets,
            keyed,
            stale: NotedNodes::new(n_nodes),
        }
    }

    /// `node`'s free GPUs may have changed (a bind or release): its bits move at the next
    /// `sync`.
    #[inline]
    pub(crate) fn note(&mut self, node: NodeId) {
        self.stale.note(node);
    }

    /// Moves the noted nodes' bits to their free GPUs now. `nodes` must carry committed
    /// bindings only (no dry run in progress): a dry run's own binds are undone without a
    /// note.
    pub(crate) fn sync(&mut self, nodes: &NodeCapacity, gpu: usize) {
        for n in self.stale.drain() {
            let (was, now) = (
                self.keyed[n.index()],
                bucket(nodes.free(n, gpu), self.buckets),
            );
            if was == now {
                continue;
            }
            for (lay, bits) in self.layouts.iter().zip(&mut self.bits) {
                // Out of the old bitset, into the new one (a count of 0 has none).
                lay.flip(bits, n, was);
                lay.flip(bits, n, now);
            }
            self.keyed[n.index()] = now;
        }
    }

    /// KAI's bin-pack dry run of the next `limit` pending pods of `pods` in domain `d` of
    /// `world.topologies[ti]`: the pending pods are all alike, ask for `gpus` (> 0) GPUs and
    /// pass the static filters on every node, and the nodeplacement plugin scores them on
    /// GPUs with the `binpack` strategy in one score group. Then `fill` binds them in (free
    /// GPUs, name) order of the nodes that fit, each node as many times as it still fits
    /// before the next: a node's bin-pack score only rises as it fills (fewer GPUs free) and
    /// no other node's moves, and when every candidate has the same free GPUs all scores are
    /// equal and name order alone decides, which is the same order. Ok: the bindings, left
    /// on `cap`; Err: how many pods it bound before running out, taken off again. The order
    /// must be synced (`sync`) with `cap`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fill(
        &self,
        world: &World,
        ti: usize,
        d: DomainId,
        cap: &mut NodeCapacity,
        pods: &GangPods,
        limit: usize,
        gpus: i64,
    ) -> Result<Vec<Binding>, usize> {
        debug_assert!(self.stale.is_empty(), "KAI order read before sync");
        let t = &world.topologies[ti];
        let lay = &self.layouts[ti];
        let bits = &self.bits[ti];
        let dom = t.domain(d);
        let words = lay.words[d.index()] as usize;
        let base = lay.base[d.index()] as usize;
        let names = &lay.by_name[dom.depth as usize][dom.nodes.start as usize..];
        let mut pending = crate::placement::pending_pods(pods).take(limit);
        let mut next = pending.next();
        let mut bound = Vec::with_capacity(limit);
        let first = usize::try_from(gpus).unwrap_or(usize::MAX).max(1);
        'buckets: for b in first..self.buckets {
            let row = &bits[(b - 1) * lay.per_count + base..][..words];
            for (w, &word) in row.iter().enumerate() {
                let mut m = word;
                while m != 0 {
                    let n = names[w * 64 + m.trailing_zeros() as usize];
                    m &= m - 1;
                    while let Some((ps, idx, needs)) = next
                        && cap.fits(n, &needs.requests)
                    {
                        cap.apply(n, &needs.requests, 1);
                        bound.push((ps, idx, n));
                        next = pending.next();
                    }
                    if next.is_none() {
                        break 'buckets;
                    }
                }
            }
        }
        if next.is_some() {
            undo(cap, pods, &bound);
            return Err(bound.len());
        }
        Ok(bound)
    }

    /// The nodes noted since the bits were last brought up to date (for comparisons in
    /// debug checks).
    #[cfg(debug_assertions)]
    pub(crate) fn noted(&self) -> &NotedNodes {
        &self.stale
    }

    /// Whether the bits agree with the nodes: every node not noted stale stands at its free
    /// GPUs now, and every bitset holds exactly the nodes of its domain standing at its count
    /// (an invariant `Cluster::check_indexes` states).
    pub(crate) fn check(
        &self,
        world: &World,
        nodes: &NodeCapacity,
        gpu: usize,
    ) -> Result<(), String> {
        for (i, &k) in self.keyed.iter().enumerate() {
            let n = NodeId::from_index(i);
            if !self.stale.contains(n) && k != bucket(nodes.free(n, gpu), self.buckets) {
                return Err(format!(
                    "KAI bin-pack order: node {} stands at {k} free GPUs, has {}, and is not noted stale",
                    world.node(n).name,
                    nodes.free(n, gpu)
                ));
            }
        }
        for (ti, ((t, lay), bits)) in world
            .topologies
            .iter()
            .zip(self.layouts.iter())
            .zip(&self.bits)
            .enumerate()
        {
            let mut expect = vec![0u64; bits.len()];
            for &n in &t.node_order {
                lay.flip(&mut expect, n, self.keyed[n.index()]);
            }
            if expect != *bits {
                return Err(format!("KAI bin-pack order of topology {ti} is stale"));
            }
        }
        Ok(())
    }

    /// The bits and the counts they stand at, for comparing with an order built afresh.
    #[cfg(test)]
    pub(crate) fn state(&self) -> (&[Vec<u64>], &[u16]) {
        (&self.bits, &self.keyed)
    }
}

/// A count of free GPUs as the bitsets tell them apart.
#[inline]
fn bucket(free: i64, buckets: usize) -> u16 {
    free.clamp(0, buckets as i64 - 1) as u16
}

impl Cluster {
    /// KAI's dry run of the next `need` pending pods of `pods` in domain `d` of
    /// `world.topologies[ti]` read from the kept bin-pack order (`DomainOrder::fill`, built on
    /// first use, synced here). The caller vouches that the pending pods are alike and pass
    /// the static filters everywhere, and that the nodeplacement plugin has one score group
    /// (no preferred level). None where the order does not decide: the `spread` strategy, pods
    /// asking for no GPU (scored on cpu), or no GPU histograms (no GPUs in the world, or a
    /// node of more than 256); `fill` decides then.
    pub(crate) fn kai_binpack_in(
        &mut self,
        world: &World,
        ti: usize,
        d: DomainId,
        pods: &GangPods,
        need: usize,
    ) -> Option<Result<Vec<Binding>, usize>> {
        let g = self.res.gpu?;
        if self.gpu_buckets == 0
            || world.config.kai.placement_strategy != PlacementStrategy::Binpack
        {
            return None;
        }
        let (needs, _) = pods.iter().find(|(_, s)| s.iter().any(Option::is_none))?;
        let gpus = needs.requests.get(ResourceId::from_index(g));
        if gpus <= 0 {
            return None;
        }
        let order = self.kai_order.get_or_insert_with(|| {
            DomainOrder::new(world, &self.nodes, g, self.gpu_buckets, &self.name_rank)
        });
        order.sync(&self.nodes, g);
        Some(order.fill(world, ti, d, &mut self.nodes, pods, need, gpus))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::PodNeeds;
    use kueuesim_model::{Labels, ResourceList};
    use proptest::prelude::*;

    /// Nodes of (GPUs, cpu, pod slots, zone, rack), names shuffled so that id order is not
    /// name order; the KAI Topology is zone/rack, with a second one of racks alone (another
    /// tree shape and node order over the same nodes).
    fn world(nodes: &[(i64, i64, i64, u8, u8)]) -> World {
        let mut w = crate::placement::test_nodes(nodes);
        w.topologies = vec![
            Topology::from_levels("t", &["zone".into(), "rack".into()], &w.nodes),
            Topology::from_levels("r", &["rack".into()], &w.nodes),
        ];
        w
    }

    fn requests(w: &World, g: i64, c: i64) -> ResourceList {
        let r = |n: &str| w.resources.lookup(n).unwrap();
        ResourceList::from_pairs(vec![(r(kueuesim_model::resources::GPU), g), (r("cpu"), c)])
    }

    fn node_strategy() -> impl Strategy<Value = Vec<(i64, i64, i64, u8, u8)>> {
        prop::collection::vec((0i64..=8, 1i64..=16, 1i64..=4, 0u8..3, 0u8..4), 1..30)
    }

    /// One change to the cluster: bind a pod (GPUs, cpu) on a node with `Cluster::apply`,
    /// release a bound one, bind a batch as a kept dry run does and commit it
    /// (`commit_bound`), or read the order (a sync).
    #[derive(Clone, Debug)]
    enum Step {
        Bind(usize, i64, i64),
        Release(usize),
        Commit(Vec<usize>, i64, i64),
        Read,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0usize..100, 0i64..=4, 0i64..=4).prop_map(|(n, g, c)| Step::Bind(n, g, c)),
            (0usize..100).prop_map(Step::Release),
            (prop::collection::vec(0usize..100, 1..8), 0i64..=4, 0i64..=4)
                .prop_map(|(ns, g, c)| Step::Commit(ns, g, c)),
            Just(Step::Read),
        ]
    }

    /// The cluster's order, synced.
    fn synced(cluster: &mut Cluster) -> DomainOrder {
        let g = cluster.res.gpu.unwrap();
        let order = cluster.kai_order.as_mut().unwrap();
        order.sync(&cluster.nodes, g);
        order.clone()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// After any sequence of binds and releases (one by one with `Cluster::apply`, or a
        /// batch committed with `commit_bound`) and reads in between, the kept order, once
        /// synced, is the order built afresh from the nodes; and before the sync,
        /// `check_indexes` accepts it (the nodes not noted stale stand where they are).
        #[test]
        fn kai_order_matches_a_rebuild(
            nodes in node_strategy(),
            steps in prop::collection::vec(step(), 0..40),
        ) {
            let w = world(&nodes);
            let g = w.resources.lookup(kueuesim_model::resources::GPU).unwrap().index();
            let mut cluster = Cluster::new(&w);
            prop_assume!(cluster.gpu_buckets > 0);
            cluster.kai_order = Some(DomainOrder::new(
                &w,
                &cluster.nodes,
                g,
                cluster.gpu_buckets,
                &cluster.name_rank,
            ));
            let mut bound: Vec<(NodeId, ResourceList)> = Vec::new();
            for s in steps {
                match s {
                    Step::Bind(n, gpus, c) => {
                        let node = NodeId::from_index(n % w.nodes.len());
                        let req = requests(&w, gpus, c);
                        if cluster.nodes.fits(node, &req) {
                            cluster.apply(&w, node, &req, 1);
                            bound.push((node, req));
                        }
                    }
                    Step::Release(i) if !bound.is_empty() => {
                        let (node, req) = bound.remove(i % bound.len());
                        cluster.apply(&w, node, &req, -1);
                    }
                    Step::Release(_) => {}
                    Step::Commit(ns, gpus, c) => {
                        let needs = PodNeeds {
                            requests: requests(&w, gpus, c),
                            node_selector: Labels::default(),
                            tolerations: vec![],
                        };
                        let pods = vec![(needs.clone(), vec![None; ns.len()])];
                        let mut batch: Vec<Binding> = Vec::new();
                        for (idx, &n) in ns.iter().enumerate() {
                            let node = NodeId::from_index(n % w.nodes.len());
                            if cluster.nodes.fits(node, &needs.requests) {
                                cluster.nodes.apply(node, &needs.requests, 1);
                                batch.push((0, idx, node));
                                bound.push((node, needs.requests.clone()));
                            }
                        }
                        cluster.commit_bound(&w, &pods, &batch);
                    }
                    Step::Read => {
                        synced(&mut cluster);
                    }
                }
                prop_assert_eq!(cluster.check_indexes(&w), Ok(()));
            }
            let kept = synced(&mut cluster);
            let fresh = DomainOrder::new(&w, &cluster.nodes, g, cluster.gpu_buckets, &cluster.name_rank);
            prop_assert_eq!(kept.state(), fresh.state());
        }
    }
}
