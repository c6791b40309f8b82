//! The HyperNodes of each tier indexed by free GPUs, so that Volcano's gradient search
//! (`topology_attempt`) reads only the HyperNodes with room for the gang's GPUs instead of
//! every HyperNode of the tier.
//!
//! On a large cluster the tier scan was the bulk of a Volcano decision: 640 leaf HyperNodes
//! and 80 spines checked against the gang's pending requests for every gang, each check
//! reading the HyperNode's record and its row of free capacity (a cache miss apiece), though
//! a busy cluster has room in few of them. Here each tier's free GPUs sit in one dense array
//! in the tier's order, so the first filter is a pass over a few kilobytes. The array is kept lazily, as the bin-pack order of nodes
//! is (`Cluster::sync_gpu_order`): a bind or release only notes its node when the node's free
//! GPUs move, and the entries of the HyperNodes above the noted nodes are brought up to date
//! when a search reads the index.

use kueuesim_model::{DomainId, NodeId, Topology};

use super::noted::NotedNodes;

/// Per tier of the HyperNode tree (`Topology::by_tier`), the free GPUs of its HyperNodes in
/// the tier's order.
#[derive(Clone, Debug, Default)]
pub(super) struct TierGpuIndex {
    /// Per HyperNode: its tier (index into `by_tier`) and position in that tier's list.
    place: Vec<Option<(u32, u32)>>,
    /// Per tier, per position in the tier's list: free GPUs, as of the last `sync`.
    free: Vec<Vec<i64>>,
    /// The nodes whose free GPUs may have moved since the last `sync`.
    stale: NotedNodes,
    /// Per HyperNode: seen in the current `sync` (cleared before it returns).
    seen: Vec<bool>,
    /// The HyperNodes the current `sync` looks at (reused).
    touched: Vec<DomainId>,
}

impl TierGpuIndex {
    /// The index over `t` (the HyperNode tree) with each HyperNode's free GPUs `free(d)`;
    /// empty (never read) when the cluster has no GPUs or the tree no tiers.
    pub(super) fn new(t: &Topology, nodes: usize, free: impl Fn(DomainId) -> i64) -> Self {
        if t.by_tier.is_empty() {
            return Self::default();
        }
        let mut place = vec![None; t.domains.len()];
        let mut by_tier = Vec::with_capacity(t.by_tier.len());
        for (ti, (_, ds)) in t.by_tier.iter().enumerate() {
            for (pos, &d) in ds.iter().enumerate() {
                place[d.index()] = Some((ti as u32, pos as u32));
            }
            by_tier.push(ds.iter().map(|&d| free(d)).collect());
        }
        TierGpuIndex {
            seen: vec![false; place.len()],
            place,
            free: by_tier,
            stale: NotedNodes::new(nodes),
            touched: Vec::new(),
        }
    }

    /// Whether the index is kept (GPUs and HyperNode tiers exist).
    pub(super) fn enabled(&self) -> bool {
        !self.free.is_empty()
    }

    /// Notes that `node`'s free GPUs moved.
    #[inline]
    pub(super) fn note(&mut self, node: NodeId) {
        if self.enabled() {
            self.stale.note(node);
        }
    }

    /// Brings the entries of the HyperNodes above the noted nodes to `free(d)`.
    pub(super) fn sync(&mut self, t: &Topology, free: impl Fn(DomainId) -> i64) {
        let mut touched = std::mem::take(&mut self.touched);
        for n in self.stale.drain() {
            let mut cur = t.domain_of(n);
            while let Some(d) = cur {
                if self.seen[d.index()] {
                    // Its ancestors were seen with it.
                    break;
                }
                self.seen[d.index()] = true;
                touched.push(d);
                cur = t.domain(d).parent;
            }
        }
        for d in touched.drain(..) {
            self.seen[d.index()] = false;
            let Some((ti, pos)) = self.place[d.index()] else {
                continue;
            };
            self.free[ti as usize][pos as usize] = free(d);
        }
        self.touched = touched;
    }

    /// The HyperNodes of tier `ti` with at least `gpus` free GPUs, in the tier's order, into
    /// `out` (cleared first). Reads the index as of the last `sync`.
    pub(super) fn with_free(&self, t: &Topology, ti: usize, gpus: i64, out: &mut Vec<DomainId>) {
        debug_assert!(self.stale.is_empty(), "tier index read before sync");
        out.clear();
        let ds = &t.by_tier[ti].1;
        out.extend(
            self.free[ti]
                .iter()
                .zip(ds)
                .filter(|&(&f, _)| f >= gpus)
                .map(|(_, &d)| d),
        );
    }

    /// Whether every entry carries its HyperNode's `free(d)` (noted nodes aside: their
    /// HyperNodes may lag until the next `sync`).
    pub(super) fn check(&self, t: &Topology, free: impl Fn(DomainId) -> i64) -> Result<(), String> {
        if !self.enabled() {
            return Ok(());
        }
        let mut lagging = vec![false; t.domains.len()];
        for n in self.stale.iter() {
            let mut cur = t.domain_of(n);
            while let Some(d) = cur {
                lagging[d.index()] = true;
                cur = t.domain(d).parent;
            }
        }
        for (ti, (_, ds)) in t.by_tier.iter().enumerate() {
            for (pos, &d) in ds.iter().enumerate() {
                let keyed = self.free[ti][pos];
                if !lagging[d.index()] && keyed != free(d) {
                    return Err(format!(
                        "HyperNode {} has {} GPUs free but its tier index says {keyed}",
                        t.domain(d).name,
                        free(d)
                    ));
                }
            }
        }
        Ok(())
    }
}
