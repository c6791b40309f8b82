//! The HyperNodes of each tier indexed by free GPUs, so that Volcano's gradient search
//! (`topology_attempt`) reads only the HyperNodes with room for the gang's GPUs instead of
//! every HyperNode of the tier.
//!
//! On a large cluster the tier scan was the bulk of a Volcano decision: 640 leaf HyperNodes
//! and 80 spines checked against the gang's pending requests for every gang, each check
//! reading the HyperNode's record and its row of free capacity (a cache miss apiece), though
//! a busy cluster has room in few of them. Here each tier's free GPUs sit in one dense array
//! in the tier's order, so the first filter is a pass over a few kilobytes. The array is kept lazily, as the bin-pack order of nodes
//! is (`Cluster::sync_gpu_order`): a bind or release that moves a node's free GPUs notes the
//! HyperNodes above it in the kept tiers as `Cluster::apply` walks their rows, and a search
//! that reads a tier brings that tier's noted HyperNodes up to date, not the other tiers'
//! (each is recounted once at its own tier's next read, however many moves it saw).
//!
//! Beside the free GPUs, the index keeps for a few pod sizes (GPUs per pod) how many such pods
//! each HyperNode's nodes could host by GPUs (`Cluster::domain_gpu_pods`, read from the
//! per-domain GPU histogram). A gang of one pod size then reads only the HyperNodes whose
//! nodes can take its pods, the few that its dry run may place it on, instead of every
//! HyperNode with enough GPUs free in sum (on the million-workload cluster about 26 of 84).

use kueuesim_model::{DomainId, Topology};

/// Per tier of the HyperNode tree (`Topology::by_tier`), the free GPUs of its HyperNodes in
/// the tier's order.
#[derive(Clone, Debug, Default)]
pub(super) struct TierGpuIndex {
    /// Per HyperNode: its tier (index into `by_tier`) and position in that tier's list.
    place: Vec<Option<(u32, u32)>>,
    /// Per tier, per position in the tier's list: free GPUs, as of the last `sync` (tiers
    /// in `kept` only; the others as of when they were last worked out).
    free: Vec<Vec<i64>>,
    /// Per tier: whether `sync` keeps its entries (free GPUs and pod counts). A tier is kept
    /// from its first read on (`keep_tier` works its entries out afresh then): Volcano's
    /// gradient reads the tiers up to its jobs' `highestTier` only, so the HyperNodes above
    /// (the zones of the million-workload cluster, a third of the HyperNodes a bind's chain
    /// touches) are neither noted nor recounted for nothing.
    kept: Vec<bool>,
    /// Per HyperNode: `UNKEPT` (its tier is not kept, or it is in no tier: a move is not
    /// noted), `SYNCED` (its entries carry its current free GPUs and pod counts) or `NOTED`
    /// (a GPU move under it since its tier's last `sync`; it is in `noted[its tier]`).
    state: Vec<u8>,
    /// Per tier: its `NOTED` HyperNodes, in the order noted, until the tier's next `sync`.
    noted: Vec<Vec<u32>>,
    /// Per pod size asked about (GPUs per pod; the last `PODS_KEPT` asked, the least
    /// recently asked replaced first): per tier, per position in the tier's list, how many
    /// pods of that size the HyperNode could host by GPUs (saturated at `u32::MAX`), as of
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
    by_tier: Vec<Vec<u32>>,
    /// Per tier: `LEVELS` bitsets over the tier's positions, level c (from 1) holding the
    /// positions whose count is at least c.
    levels: Vec<Vec<u64>>,
}

/// `TierGpuIndex::state`: not kept, kept and up to date, kept and noted.
const UNKEPT: u8 = 0;
const SYNCED: u8 = 1;
const NOTED: u8 = 2;

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
                counts.set(ti, pos, saturate(pods(d, gpus)));
            }
        }
        counts
    }

    /// Moves the count at (`ti`, `pos`) to `count`, and its bits with it.
    fn set(&mut self, ti: usize, pos: usize, count: u32) {
        let was = std::mem::replace(&mut self.by_tier[ti][pos], count);
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
                if at_least <= LEVELS || counts[pos] >= at_least {
                    out.push(ds[pos]);
                }
            }
        }
    }
}

impl TierGpuIndex {
    /// The index over `t` (the HyperNode tree) with each HyperNode's free GPUs `free(d)`;
    /// empty (never read) when the cluster has no GPUs or the tree no tiers.
    pub(super) fn new(t: &Topology, free: impl Fn(DomainId) -> i64) -> Self {
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
            state: vec![UNKEPT; place.len()],
            place,
            kept: vec![false; by_tier.len()],
            noted: vec![Vec::new(); by_tier.len()],
            free: by_tier,
            pods: Vec::new(),
            clock: 0,
        }
    }

    /// Per HyperNode whether it is noted (`state`; for comparisons in debug checks: the same
    /// HyperNodes noted, whatever the order).
    #[cfg(debug_assertions)]
    pub(super) fn noted(&self) -> &[u8] {
        &self.state
    }

    /// Whether the index is kept (GPUs and HyperNode tiers exist).
    pub(super) fn enabled(&self) -> bool {
        !self.free.is_empty()
    }

    /// Notes that the free GPUs of a node under HyperNode `d` (a domain index of the
    /// HyperNode tree) moved: `d`'s entries are recounted at its tier's next `sync` when the
    /// tier is kept. `Cluster::apply` calls it for each HyperNode of the node's chain as it
    /// walks them, `note_chain` for a whole chain.
    #[inline(always)]
    pub(super) fn note(&mut self, d: u32) {
        let state = &mut self.state[d as usize];
        if *state == SYNCED {
            *state = NOTED;
            if let Some((ti, _)) = self.place[d as usize] {
                self.noted[ti as usize].push(d);
            }
        }
    }

    /// `note` for every HyperNode of `chain` (a node's HyperNode and its ancestors).
    pub(super) fn note_chain(&mut self, chain: &[u32]) {
        if self.enabled() {
            for &d in chain {
                self.note(d);
            }
        }
    }

    /// Brings the entries of tier `ti`'s noted HyperNodes to `free(d)`, and their pod counts
    /// to `pods(d, gpus)`. Each entry is worked out afresh from the HyperNode's current rows
    /// (and a pod count's level bits flipped from the count it had to the new one), so the
    /// order of the notes and how many moves each HyperNode saw do not matter.
    pub(super) fn sync(
        &mut self,
        ti: usize,
        free: impl Fn(DomainId) -> i64,
        pods: impl Fn(DomainId, i64) -> u64,
    ) {
        let TierGpuIndex {
            place,
            free: kept_free,
            state,
            noted,
            pods: counts,
            ..
        } = self;
        let Some(noted) = noted.get_mut(ti) else {
            return;
        };
        for &d in noted.iter() {
            state[d as usize] = SYNCED;
            let Some((_, pos)) = place[d as usize] else {
                continue;
            };
            let pos = pos as usize;
            let d = DomainId::from_index(d as usize);
            kept_free[ti][pos] = free(d);
            for c in counts.iter_mut() {
                let count = saturate(pods(d, c.gpus));
                c.set(ti, pos, count);
            }
        }
        noted.clear();
    }

    /// Keeps tier `ti` from now on (see `kept`), its entries worked out afresh the first time:
    /// `free` and `pods` as `sync` takes them, the index synced.
    fn keep_tier(
        &mut self,
        t: &Topology,
        ti: usize,
        free: impl Fn(DomainId) -> i64,
        pods: impl Fn(DomainId, i64) -> u64,
    ) {
        if self.kept[ti] {
            return;
        }
        self.kept[ti] = true;
        for (pos, &d) in t.by_tier[ti].1.iter().enumerate() {
            self.state[d.index()] = SYNCED;
            self.free[ti][pos] = free(d);
            for c in &mut self.pods {
                c.set(ti, pos, saturate(pods(d, c.gpus)));
            }
        }
    }

    /// The HyperNodes of tier `ti` whose nodes could host at least `at_least` pods of `gpus`
    /// GPUs each by GPUs (`pods(d, gpus)`; `free` and `pods` must be what `sync` was given),
    /// in the tier's order, into `out` (cleared first). Reads the index as of the last
    /// `sync` of tier `ti`; the first ask of a pod size counts it for every HyperNode.
    pub(super) fn with_pods(
        &mut self,
        t: &Topology,
        ti: usize,
        (gpus, at_least): (i64, u64),
        (free, pods): (impl Fn(DomainId) -> i64, impl Fn(DomainId, i64) -> u64),
        out: &mut Vec<DomainId>,
    ) {
        debug_assert!(
            self.noted.get(ti).is_none_or(|n| n.is_empty()),
            "tier index read before sync"
        );
        self.keep_tier(t, ti, free, &pods);
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
        // A count is at most u32::MAX, so a larger ask matches nothing.
        let Ok(at_least) = u32::try_from(at_least) else {
            return;
        };
        counts.read(ti, at_least, &t.by_tier[ti].1, out);
    }

    /// The HyperNodes of tier `ti` with at least `gpus` free GPUs, in the tier's order, into
    /// `out` (cleared first). Reads the index as of tier `ti`'s last `sync` (`free` and `pods`
    /// as `sync` was given them).
    pub(super) fn with_free(
        &mut self,
        t: &Topology,
        (ti, gpus): (usize, i64),
        (free, pods): (impl Fn(DomainId) -> i64, impl Fn(DomainId, i64) -> u64),
        out: &mut Vec<DomainId>,
    ) {
        debug_assert!(
            self.noted.get(ti).is_none_or(|n| n.is_empty()),
            "tier index read before sync"
        );
        self.keep_tier(t, ti, free, pods);
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

    /// Whether every entry of a kept tier carries its HyperNode's `free(d)` and pod counts
    /// (noted HyperNodes aside: they may lag until their tier's next `sync`), every pod count
    /// its level bits, and the notes their states (a kept tier's HyperNodes `SYNCED` or
    /// `NOTED`, the noted ones listed once under their tier, the others `UNKEPT`).
    pub(super) fn check(
        &self,
        t: &Topology,
        free: impl Fn(DomainId) -> i64,
        pods: impl Fn(DomainId, i64) -> u64,
    ) -> Result<(), String> {
        if !self.enabled() {
            return Ok(());
        }
        let mut listed = vec![0usize; t.domains.len()];
        for (ti, noted) in self.noted.iter().enumerate() {
            for &d in noted {
                listed[d as usize] += 1;
                if self.place[d as usize].map(|p| p.0 as usize) != Some(ti) {
                    return Err(format!("HyperNode {d} noted under tier {ti}, not its own"));
                }
            }
        }
        for (d, &state) in self.state.iter().enumerate() {
            let kept = self.place[d].is_some_and(|(ti, _)| self.kept[ti as usize]);
            let want = match (kept, listed[d]) {
                (false, 0) => UNKEPT,
                (true, 0) => SYNCED,
                (true, 1) => NOTED,
                _ => u8::MAX,
            };
            if state != want {
                return Err(format!(
                    "HyperNode {} is in state {state}, listed {} times as noted, its tier kept: {kept}",
                    t.domain(DomainId::from_index(d)).name,
                    listed[d]
                ));
            }
        }
        for (ti, (_, ds)) in t.by_tier.iter().enumerate() {
            for (pos, &d) in ds.iter().enumerate() {
                // An unkept tier's entries are worked out afresh when it is first read.
                let lagging = self.state[d.index()] != SYNCED;
                let keyed = self.free[ti][pos];
                if !lagging && keyed != free(d) {
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
                        if (bit == 1) != (keyed >= c) {
                            return Err(format!(
                                "HyperNode {} is kept at {keyed} pods of {} GPUs but its level {c} bit is {bit}",
                                t.domain(d).name,
                                counts.gpus
                            ));
                        }
                    }
                    let want = saturate(pods(d, counts.gpus));
                    if !lagging && keyed != want {
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
