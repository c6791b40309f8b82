//! The HyperNodes of each tier indexed by free GPUs, so that Volcano's gradient search
//! (`topology_attempt`) reads only the HyperNodes with room for the gang's GPUs instead of
//! every HyperNode of the tier.
//!
//! On a large cluster the tier scan was the bulk of a Volcano decision: 640 leaf HyperNodes
//! and 80 spines checked against the gang's pending requests for every gang, each check
//! reading the HyperNode's record and its row of free capacity (a cache miss apiece), though
//! a busy cluster has room in few of them. Here each tier's free GPUs sit in one dense array
//! in the tier's order, so the first filter is a pass over a few kilobytes. The array is kept
//! lazily, as the bin-pack order of nodes is (`Cluster::sync_gpu_order`): a bind or release
//! only notes its node when the node's free GPUs move, and when a search reads the index the
//! entries of the HyperNodes above the noted nodes move by those nodes' moves since the last
//! read (a node bound and released in between moves nothing).
//!
//! Beside the free GPUs, the index keeps for a few pod sizes (GPUs per pod) how many such pods
//! each HyperNode's nodes could host by GPUs (`Cluster::domain_gpu_pods`, read from the
//! per-domain GPU histogram). A gang of one pod size then reads only the HyperNodes whose
//! nodes can take its pods, the few that its dry run may place it on, instead of every
//! HyperNode with enough GPUs free in sum (on the million-workload cluster about 26 of 84).

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
    /// Per node: its free GPUs as of the last `sync` (what the entries above it count).
    keyed: Vec<i64>,
    /// Per pod size asked about (GPUs per pod; the last `PODS_KEPT` asked, the least
    /// recently asked replaced first): per tier, per position in the tier's list, how many
    /// pods of that size the HyperNode could host by GPUs (its levels saturated at `u32::MAX`), as of
    /// the last `sync`.
    pods: Vec<PodCounts>,
    /// Asks so far, to find the least recently asked pod size.
    clock: u64,
}

/// How many pods of one size each HyperNode could host by GPUs, per tier, and per count
/// level the HyperNodes that reach it as bits (a read then visits only the words of its level
/// and the HyperNodes that pass, not the whole tier).
#[derive(Clone, Debug)]
struct PodCounts {
    gpus: i64,
    last_asked: u64,
    /// Per tier, per position: the count (exact; the levels saturate it at `u32::MAX`).
    by_tier: Vec<Vec<u64>>,
    /// Per tier: `LEVELS` bitsets over the tier's positions, level c (from 1) holding the
    /// positions whose count is at least c.
    levels: Vec<Vec<u64>>,
}

/// How many pod sizes the index keeps counts for.
const PODS_KEPT: usize = 4;

/// Count levels kept as bitsets; a read above the last filters the last level's HyperNodes by
/// their counts.
const LEVELS: u32 = 32;

impl PodCounts {
    /// Counts of `gpus`-GPU pods over `t`'s tiers, `pods(d, gpus)` each.
    fn new(t: &Topology, gpus: i64, pods: impl Fn(DomainId, i64) -> u64) -> Self {
        let mut counts = PodCounts {
            gpus,
            last_asked: 0,
            by_tier: t.by_tier.iter().map(|(_, ds)| vec![0; ds.len()]).collect(),
            levels: t
                .by_tier
                .iter()
                .map(|(_, ds)| vec![0; LEVELS as usize * ds.len().div_ceil(64)])
                .collect(),
        };
        for (ti, (_, ds)) in t.by_tier.iter().enumerate() {
            for (pos, &d) in ds.iter().enumerate() {
                counts.set(ti, pos, pods(d, gpus));
            }
        }
        counts
    }

    /// Moves the count at (`ti`, `pos`) to `count`, and its bits with it.
    fn set(&mut self, ti: usize, pos: usize, count: u64) {
        let was = saturate(std::mem::replace(&mut self.by_tier[ti][pos], count));
        let count = saturate(count);
        let words = self.by_tier[ti].len().div_ceil(64);
        let levels = &mut self.levels[ti];
        // The levels between the two counts flip: set going up, cleared going down.
        for c in was.min(count) + 1..=was.max(count).min(LEVELS) {
            levels[(c - 1) as usize * words + pos / 64] ^= 1 << (pos % 64);
        }
    }

    /// The positions of tier `ti` whose count is at least `at_least`, in order, mapped
    /// through `ds` into `out`.
    fn read(&self, ti: usize, at_least: u32, ds: &[DomainId], out: &mut Vec<DomainId>) {
        let counts = &self.by_tier[ti];
        if at_least == 0 {
            out.extend_from_slice(ds);
            return;
        }
        let words = counts.len().div_ceil(64);
        let level = at_least.min(LEVELS);
        let bits = &self.levels[ti][(level - 1) as usize * words..][..words];
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let pos = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                if at_least <= LEVELS || counts[pos] >= u64::from(at_least) {
                    out.push(ds[pos]);
                }
            }
        }
    }
}

impl TierGpuIndex {
    /// The index over `t` (the HyperNode tree) with each node's free GPUs `node_free(n)`
    /// (`nodes` nodes) and each HyperNode's `free(d)`, their sum; empty (never read) when the
    /// cluster has no GPUs or the tree no tiers.
    pub(super) fn new(
        t: &Topology,
        nodes: usize,
        node_free: impl Fn(NodeId) -> i64,
        free: impl Fn(DomainId) -> i64,
    ) -> Self {
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
            place,
            free: by_tier,
            stale: NotedNodes::new(nodes),
            keyed: (0..nodes).map(|n| node_free(NodeId::from_index(n))).collect(),
            pods: Vec::new(),
            clock: 0,
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

    /// Brings the entries of the HyperNodes above the noted nodes up to date with the nodes'
    /// free GPUs `node_free(n)`, the pod counts with those clamped to `0..buckets` as the
    /// per-domain GPU histograms file them (`Cluster::gpu_hist`).
    ///
    /// Invariant: each entry is the sum over the HyperNode's nodes of their `keyed` free GPUs,
    /// and each pod count the sum of their clamped `keyed` GPUs divided by the pod size (what
    /// `gpu_pods_in` reads from the histogram). A node not noted since the last sync has its
    /// `keyed` count free (every bind and release that moves a node's free GPUs notes it:
    /// `Cluster::note_gpu_move`), so adding each noted node's move to the HyperNodes above it
    /// makes every entry current: sums do not depend on the order, and a node bound and
    /// released in between moves nothing. The HyperNodes' own rows (`Cluster::domain_free`,
    /// the histograms) are not read here; `check` compares the entries with them. The nodes
    /// must not carry a dry run's binds when read (the searches undo theirs before reading).
    pub(super) fn sync(&mut self, t: &Topology, node_free: impl Fn(NodeId) -> i64, buckets: usize) {
        let TierGpuIndex {
            place,
            free,
            stale,
            keyed,
            pods,
            ..
        } = self;
        for n in stale.drain() {
            let now = node_free(n);
            let was = std::mem::replace(&mut keyed[n.index()], now);
            if was == now {
                continue;
            }
            // Pod counts are kept only with the histograms (`buckets > 0`).
            let bucket = |gpus: i64| gpus.clamp(0, buckets as i64 - 1);
            let (from, to) = if pods.is_empty() {
                (0, 0)
            } else {
                (bucket(was), bucket(now))
            };
            let mut cur = t.domain_of(n);
            while let Some(d) = cur {
                if let Some((ti, pos)) = place[d.index()] {
                    let (ti, pos) = (ti as usize, pos as usize);
                    free[ti][pos] += now - was;
                    for counts in pods.iter_mut() {
                        let k = counts.gpus;
                        let moved = to / k - from / k;
                        if moved != 0 {
                            let count = counts.by_tier[ti][pos].wrapping_add_signed(moved);
                            counts.set(ti, pos, count);
                        }
                    }
                }
                cur = t.domain(d).parent;
            }
        }
    }

    /// The HyperNodes of tier `ti` whose nodes could host at least `at_least` pods of `gpus`
    /// GPUs each by GPUs (`pods(d, gpus)`, which must be what `sync` was given), in the tier's
    /// order, into `out` (cleared first). Reads the index as of the last `sync`; the first
    /// ask of a pod size counts it for every HyperNode.
    pub(super) fn with_pods(
        &mut self,
        t: &Topology,
        ti: usize,
        (gpus, at_least): (i64, u64),
        pods: impl Fn(DomainId, i64) -> u64,
        out: &mut Vec<DomainId>,
    ) {
        debug_assert!(self.stale.is_empty(), "tier index read before sync");
        self.clock += 1;
        let slot = match self.pods.iter().position(|c| c.gpus == gpus) {
            Some(i) => i,
            None => {
                let counts = PodCounts::new(t, gpus, pods);
                if self.pods.len() < PODS_KEPT {
                    self.pods.push(counts);
                    self.pods.len() - 1
                } else {
                    let oldest = (0..self.pods.len())
                        .min_by_key(|&i| self.pods[i].last_asked)
                        .unwrap_or(0);
                    self.pods[oldest] = counts;
                    oldest
                }
            }
        };
        let counts = &mut self.pods[slot];
        counts.last_asked = self.clock;
        out.clear();
        // An ask beyond u32 matches nothing (the levels saturate at u32::MAX; no HyperNode of
        // fewer than 2^24 nodes holds that many pods, at most `MAX_GPU_BUCKETS - 1` a node).
        let Ok(at_least) = u32::try_from(at_least) else {
            return;
        };
        counts.read(ti, at_least, &t.by_tier[ti].1, out);
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

    /// Whether every entry carries its HyperNode's `free(d)` and pod counts `pods(d, k)`, and
    /// every node its `node_free(n)` (noted nodes aside: they and their HyperNodes may lag
    /// until the next `sync`).
    pub(super) fn check(
        &self,
        t: &Topology,
        node_free: impl Fn(NodeId) -> i64,
        free: impl Fn(DomainId) -> i64,
        pods: impl Fn(DomainId, i64) -> u64,
    ) -> Result<(), String> {
        if !self.enabled() {
            return Ok(());
        }
        for (n, &keyed) in self.keyed.iter().enumerate() {
            let n = NodeId::from_index(n);
            if !self.stale.contains(n) && keyed != node_free(n) {
                return Err(format!(
                    "node {} has {} GPUs free but the tier index keeps {keyed} and it is not noted",
                    n.index(),
                    node_free(n)
                ));
            }
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
                for counts in &self.pods {
                    let keyed = counts.by_tier[ti][pos];
                    let words = ds.len().div_ceil(64);
                    for c in 1..=LEVELS {
                        let bit = counts.levels[ti][(c - 1) as usize * words + pos / 64]
                            >> (pos % 64)
                            & 1;
                        if (bit == 1) != (saturate(keyed) >= c) {
                            return Err(format!(
                                "HyperNode {} is kept at {keyed} pods of {} GPUs but its level {c} bit is {bit}",
                                t.domain(d).name,
                                counts.gpus
                            ));
                        }
                    }
                    let want = pods(d, counts.gpus);
                    if !lagging[d.index()] && keyed != want {
                        return Err(format!(
                            "HyperNode {} could host {want} pods of {} GPUs but its tier index says {keyed}",
                            t.domain(d).name,
                            counts.gpus
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A pod count as the index keeps it.
fn saturate(pods: u64) -> u32 {
    u32::try_from(pods).unwrap_or(u32::MAX)
}
