//! The node search kube-scheduler and Volcano share: how many feasible nodes to look for
//! and the rotating scan that finds them, the resource score plugins, and the scan per
//! occupancy class with `selectHost`'s pick. Volcano's `predicates` and `nodeorder` plugins
//! call kube-scheduler's own code for these (`CalculateNumOfFeasibleNodesToFind`,
//! NodeResourcesFit's `LeastAllocated`/`MostAllocated`, `NodeResourcesBalancedAllocation`),
//! so both schedulers' folders use this one, below them.

use kueuesim_model::{NodeId, World};

use super::node_classes::BLOCK_WORDS;
use super::{
    KeyResources, NodeCapacity, PodNeeds, TIE_KEY_TOP, tie_key, tie_key_finish, tie_key_mixed,
};

/// How many feasible nodes the filter phase looks for among `n` (kube-scheduler
/// `numFeasibleNodesToFind` with the adaptive default percentage; Volcano's
/// `CalculateNumOfFeasibleNodesToFind` with its defaults is the same rule).
pub fn feasible_nodes_to_find(n: usize) -> usize {
    const MIN_FEASIBLE: usize = 100;
    if n <= MIN_FEASIBLE {
        return n;
    }
    let pct = 50usize.saturating_sub(n / 125).max(5);
    (n * pct / 100).max(MIN_FEASIBLE)
}

/// NodeResourcesFit's `LeastAllocated` score of `node` for one more `pod` (cpu and memory,
/// weight 1 each, integer arithmetic as upstream).
pub fn least_allocated(
    world: &World,
    cap: &NodeCapacity,
    res: KeyResources,
    node: NodeId,
    pod: &PodNeeds,
) -> i64 {
    let alloc = &world.node(node).allocatable;
    let mut sum = 0;
    let mut weights = 0;
    for r in [res.cpu, res.memory].into_iter().flatten() {
        let a = alloc.get(r).copied().unwrap_or(0);
        weights += 1;
        if a == 0 {
            continue;
        }
        let req =
            a - cap.free(node, r) + pod.requests.get(kueuesim_model::ResourceId::from_index(r));
        if req > a {
            continue;
        }
        sum += (a - req) * 100 / a;
    }
    if weights == 0 { 0 } else { sum / weights }
}

/// `MostAllocated` (Volcano nodeorder's `mostrequested`): cpu and memory, weight 1 each,
/// `min(requested, allocatable)·100/allocatable`.
pub fn most_allocated(
    world: &World,
    cap: &NodeCapacity,
    res: KeyResources,
    node: NodeId,
    pod: &PodNeeds,
) -> i64 {
    let alloc = &world.node(node).allocatable;
    let mut sum = 0;
    let mut weights = 0;
    for r in [res.cpu, res.memory].into_iter().flatten() {
        let a = alloc.get(r).copied().unwrap_or(0);
        weights += 1;
        if a == 0 {
            continue;
        }
        let req =
            a - cap.free(node, r) + pod.requests.get(kueuesim_model::ResourceId::from_index(r));
        sum += req.min(a) * 100 / a;
    }
    if weights == 0 { 0 } else { sum / weights }
}

/// `NodeResourcesBalancedAllocation`: 100 × (1 − the standard deviation of the requested
/// fractions), over cpu and memory, plus GPUs when `with_gpu` and the pod asks for them
/// (Volcano's resource list).
pub fn balanced_allocation(
    world: &World,
    cap: &NodeCapacity,
    res: KeyResources,
    node: NodeId,
    pod: &PodNeeds,
    with_gpu: bool,
) -> i64 {
    let alloc = &world.node(node).allocatable;
    let mut fractions = [0f64; 3];
    let mut k = 0;
    let gpu = res
        .gpu
        .filter(|&g| with_gpu && pod.requests.get(kueuesim_model::ResourceId::from_index(g)) > 0);
    for r in [res.cpu, res.memory, gpu].into_iter().flatten() {
        let a = alloc.get(r).copied().unwrap_or(0);
        if a == 0 {
            continue;
        }
        let req =
            a - cap.free(node, r) + pod.requests.get(kueuesim_model::ResourceId::from_index(r));
        fractions[k] = (req as f64 / a as f64).min(1.0);
        k += 1;
    }
    let f = &fractions[..k];
    let std = match k {
        0 | 1 => 0.0,
        2 => (f[0] - f[1]).abs() / 2.0,
        _ => {
            let mean = f.iter().sum::<f64>() / k as f64;
            (f.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / k as f64).sqrt()
        }
    };
    ((1.0 - std) * 100.0) as i64
}

/// Scans `nodes` from `start` (wrapping) for up to `want` nodes that can take `pod`, returns
/// them and how many nodes were looked at.
pub fn sample_feasible(
    world: &World,
    cap: &NodeCapacity,
    nodes: &[NodeId],
    pod: &PodNeeds,
    start: usize,
    want: usize,
) -> (Vec<NodeId>, usize) {
    let n = nodes.len();
    let mut found = Vec::new();
    let mut processed = 0;
    while processed < n && found.len() < want {
        let node = nodes[(start + processed) % n];
        processed += 1;
        if super::feasible(world, cap, node, pod) {
            found.push(node);
        }
    }
    (found, processed)
}

/// A float score as an `i64` ordered as `f64::total_cmp` orders the floats (the sign bit
/// flips the rest of a negative number's bits), so that Volcano's float node scores go
/// through `class_scan` and `Best` exactly as they compare in Volcano's `SelectBestNode`
/// (here: `max_by` with `total_cmp`). Only NaNs map to the two lowest keys, which
/// `class_scan`'s table keeps for itself; no score is NaN.
pub(super) fn float_order(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

/// `by_class` entries: not worked out yet, and "NodeResourcesFit fails" (scores are 0..=200).
const CLASS_UNKNOWN: i64 = i64::MIN;
const CLASS_NO_FIT: i64 = i64::MIN + 1;

/// The best (score, tie key, node) so far of `selectHost`: the highest score, ties by a
/// seeded key, the last of equal keys winning (`max_by_key`). The tie key is only worked out
/// when a node scores equal to the best.
#[derive(Default)]
pub(super) struct Best(pub(super) Option<(i64, Option<u64>, NodeId)>);

impl Best {
    /// The node picked, if any was offered.
    pub(super) fn node(&self) -> Option<NodeId> {
        self.0.map(|(_, _, node)| node)
    }

    #[inline(always)]
    pub(super) fn offer(&mut self, score: i64, node: NodeId, tie_seed: u64) {
        match &mut self.0 {
            Some((b, _, _)) if score < *b => {}
            Some((b, bt, bn)) if score == *b => {
                let mine = tie_key(tie_seed, node);
                let theirs = *bt.get_or_insert_with(|| tie_key(tie_seed, *bn));
                if mine >= theirs {
                    self.0 = Some((score, Some(mine), node));
                }
            }
            _ => self.0 = Some((score, None, node)),
        }
    }
}

/// kube-scheduler's filter-and-score scan for one pod (`findNodesThatPassFilters` from
/// `nextStartNodeIndex` for `want` feasible nodes, then `selectHost` over them), worked out
/// per occupancy class (`node_classes`; the capacity's classes must be up to date): a class
/// either fits the pod or not and has one score, so the feasible nodes of a word of 64 are
/// the union of the feasible classes' member words, the scan's end is found by counting
/// bits, and the best node is among the members of the best-scoring class(es) with a node
/// in the scanned range, ties broken node by node in scan order as `Best::offer` does.
/// `by_class` caches each class's answer for these requests (score, or `CLASS_NO_FIT`) for
/// one class generation. `score` is the scheduler's node score, which must depend on the node's
/// capacity state alone (higher is better; Volcano's float scores come as `float_order`
/// keys). `mask`: the nodes the pod's static filters pass, one bit per node (a nodeSelector
/// on otherwise plain nodes); None when every node passes them. Returns the pick and how many
/// nodes the scan passed, as the node-by-node scan would.
#[allow(clippy::too_many_arguments)]
pub(super) fn class_scan(
    cap: &NodeCapacity,
    by_class: &mut (u32, Vec<i64>),
    feasible: &mut Vec<(i64, usize)>,
    needs: &PodNeeds,
    score: impl Fn(NodeId) -> i64,
    mask: Option<&[u64]>,
    (start, want): (usize, usize),
    tie_seed: u64,
) -> (Best, usize) {
    let classes = cap.classes();
    let n = cap.free_pods.len();
    if by_class.0 != classes.generation() {
        *by_class = (classes.generation(), Vec::new());
    }
    let table = &mut by_class.1;
    table.resize(classes.len(), CLASS_UNKNOWN);
    feasible.clear();
    // Zipped with the counts (as many as classes): most classes of the registry have no node
    // at a time, and each costs a load and a test here, no index check.
    for (k, (answer, &count)) in table.iter_mut().zip(classes.counts()).enumerate() {
        if count == 0 {
            continue;
        }
        // The class's answer: NodeResourcesFit, then the score, on any of its nodes.
        let work_out = |k: usize| {
            let node = classes.some_member(k);
            if cap.fits(node, &needs.requests) {
                let s = score(node);
                debug_assert!(
                    s > CLASS_NO_FIT,
                    "a score collides with the table's markers"
                );
                s
            } else {
                CLASS_NO_FIT
            }
        };
        if *answer == CLASS_UNKNOWN {
            *answer = work_out(k);
        } else {
            // A table kept from an earlier scan (kube-scheduler keeps one per request list
            // and generation, `NodeClasses::answers`) answers as a fresh one would.
            debug_assert_eq!(*answer, work_out(k), "a kept class answer is out of date");
        }
        if *answer != CLASS_NO_FIT {
            feasible.push((*answer, k));
        }
    }
    let mut best = Best::default();
    if feasible.is_empty() || n == 0 {
        return (best, n);
    }
    let union = |w: usize, of: &[(i64, usize)]| {
        of.iter().fold(0u64, |m, &(_, k)| m | classes.word(k, w)) & mask.map_or(u64::MAX, |m| m[w])
    };
    // A whole block of `BLOCK_WORDS` words inside `lo..hi` starting at word `w`, without a
    // selector's mask: its feasible nodes are counted per class (`NodeClasses::block`), and
    // its words are ORed over the classes a block at a time (`block_union`).
    let whole_block = |w: usize, lo: usize, hi: usize| {
        mask.is_none()
            && w.is_multiple_of(BLOCK_WORDS)
            && w * 64 >= lo
            && (w + BLOCK_WORDS) * 64 <= hi
    };
    let block_count = |w: usize, of: &[(i64, usize)]| -> usize {
        of.iter()
            .map(|&(_, k)| classes.block(k, w / BLOCK_WORDS) as usize)
            .sum()
    };
    // The member words of the whole block from word `w`, ORed over the classes `of`: the
    // same words `union` gives one at a time, as fixed-size arrays the compiler ORs in
    // vector registers.
    let block_union = |w: usize, of: &[(i64, usize)]| -> [u64; BLOCK_WORDS] {
        let mut acc = [0u64; BLOCK_WORDS];
        for &(_, k) in of {
            if let Some(chunk) = classes.row(k)[w..].first_chunk::<BLOCK_WORDS>() {
                for (a, x) in acc.iter_mut().zip(chunk) {
                    *a |= x;
                }
            }
        }
        acc
    };
    // The scan's end: the `want`-th feasible node from `start`, wrapping; all nodes if fewer.
    // Without a mask the classes' counts say at once whether there are fewer: then the walk
    // would count every feasible node without reaching `want`, and is skipped.
    let total: usize = feasible
        .iter()
        .map(|&(_, k)| classes.count(k) as usize)
        .sum();
    let walk = if mask.is_none() && total < want {
        [(0, 0), (0, 0)]
    } else {
        [(start, n), (0, start)]
    };
    let mut found = 0;
    let mut end = None;
    'walk: for (lo, hi) in walk {
        if lo >= hi {
            continue;
        }
        let mut w = lo / 64;
        while w <= (hi - 1) / 64 {
            if whole_block(w, lo, hi) {
                let count = block_count(w, feasible);
                if found + count < want {
                    found += count;
                    w += BLOCK_WORDS;
                    continue;
                }
                // The end is in this block: its words, a block's union at once.
                let acc = block_union(w, feasible);
                // Index loops over the array: an array iterator costs more than the work.
                #[allow(clippy::needless_range_loop)]
                for j in 0..BLOCK_WORDS {
                    let bits = acc[j];
                    let count = bits.count_ones() as usize;
                    if found + count < want {
                        found += count;
                        continue;
                    }
                    end = Some((w + j) * 64 + nth_set_bit(bits, want - found - 1));
                    break 'walk;
                }
                w += BLOCK_WORDS;
                continue;
            }
            let bits = union(w, feasible) & range_mask(w, lo, hi);
            w += 1;
            let count = bits.count_ones() as usize;
            if found + count < want {
                found += count;
                continue;
            }
            end = Some((w - 1) * 64 + nth_set_bit(bits, want - found - 1));
            break 'walk;
        }
    }
    let processed = end.map_or(n, |e| (e + n - start) % n + 1);
    // The scanned range, as up to two runs of node indexes in scan order.
    let runs: [(usize, usize); 2] = match end {
        Some(e) if e >= start => [(start, e + 1), (0, 0)],
        Some(e) => [(start, n), (0, e + 1)],
        None => [(start, n), (0, start)],
    };
    // Best score first; the classes of the best score with a node in the range hold the pick.
    // All nodes of a level score the same, so `Best::offer` comes down to the highest tie
    // key, the last of equal keys winning; every node offered has its key's first steps
    // worked out, the last step only when it may win (`TiePick::offer_bits`).
    feasible.sort_unstable_by_key(|a| std::cmp::Reverse(a.0));
    for level in feasible.chunk_by(|a, b| a.0 == b.0) {
        let mut pick = TiePick::default();
        for (lo, hi) in runs {
            if lo >= hi {
                continue;
            }
            let mut w = lo / 64;
            while w <= (hi - 1) / 64 {
                if whole_block(w, lo, hi) {
                    if block_count(w, level) > 0 {
                        pick.offer_block(w, &block_union(w, level), tie_seed);
                    }
                    w += BLOCK_WORDS;
                    continue;
                }
                pick.offer_word(w, union(w, level) & range_mask(w, lo, hi), tie_seed);
                w += 1;
            }
        }
        if let Some(at) = pick.picked() {
            // The winner's full key, as `Best::offer` would have worked out had another node
            // been offered after it (the callers read only the node).
            best.0 = Some((level[0].0, Some(pick.key), NodeId::from_index(at)));
            break;
        }
    }
    (best, processed)
}

/// The index of the `i`-th (from 0) set bit of `bits`, which has more than `i`.
#[inline]
fn nth_set_bit(mut bits: u64, i: usize) -> usize {
    for _ in 0..i {
        bits &= bits - 1;
    }
    bits.trailing_zeros() as usize
}

/// `selectHost` over the nodes of one score level, offered in scan order: the highest tie
/// key, the last of equal keys winning.
struct TiePick {
    key: u64,
    /// The node picked; `usize::MAX` while none was offered (the first node offered takes
    /// the pick whatever its key).
    at: usize,
    /// `key & TIE_KEY_TOP`: a node whose key can reach `key` has its splitmix64 value
    /// before the last step (`tie_key_mixed`) at least this (see `offer_bits`).
    floor: u64,
}

impl Default for TiePick {
    fn default() -> Self {
        TiePick {
            key: 0,
            at: usize::MAX,
            floor: 0,
        }
    }
}

impl TiePick {
    /// The node picked, if any was offered.
    fn picked(&self) -> Option<usize> {
        (self.at != usize::MAX).then_some(self.at)
    }

    /// Offers the nodes of word `w` whose bits are set, lowest first.
    #[inline(always)]
    fn offer_word(&mut self, w: usize, bits: u64, tie_seed: u64) {
        self.offer_bits(w * 64, bits, tie_seed);
    }

    /// The eight words of a whole block from word `w` (`block_union`), one after another.
    /// Not inlined: unrolled into the scan, the eight words' loops ran out of registers.
    #[inline(never)]
    fn offer_block(&mut self, w: usize, words: &[u64; BLOCK_WORDS], tie_seed: u64) {
        for (j, &bits) in words.iter().enumerate() {
            self.offer_bits((w + j) * 64, bits, tie_seed);
        }
    }

    /// The nodes `base + i` for each set bit `i` of `bits`, lowest first. A node's key is
    /// `tie_key_finish(z)` of `z = tie_key_mixed(..)`, whose top bits (`TIE_KEY_TOP`) are
    /// `z`'s: a key at least the best key has `z` at least `floor` (the best key's top
    /// bits, the rest zero), so a node below `floor` cannot win and its last step is not
    /// worked out. Exact: every node that could win (key ≥ best, the last of equal keys
    /// winning) is compared in full, in the same order.
    #[inline(always)]
    fn offer_bits(&mut self, base: usize, mut bits: u64, tie_seed: u64) {
        while bits != 0 {
            // `base` is a multiple of 64, so this is `base + trailing_zeros`.
            let at = base | bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let z = tie_key_mixed(tie_seed, at as u64);
            if z >= self.floor {
                // The first node offered takes the empty pick whatever its key (floor and
                // key 0).
                let key = tie_key_finish(z);
                if key >= self.key {
                    (self.key, self.at, self.floor) = (key, at, key & TIE_KEY_TOP);
                }
            }
        }
    }
}

/// The bits of word `w` for nodes `lo..hi`.
#[inline]
fn range_mask(w: usize, lo: usize, hi: usize) -> u64 {
    let base = w * 64;
    let mut m = u64::MAX;
    if base < lo {
        m &= u64::MAX << (lo - base);
    }
    if hi - base < 64 {
        m &= (1u64 << (hi - base)) - 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::tie_key_at;
    use proptest::prelude::*;

    proptest::proptest! {
        /// `TiePick` over words and blocks picks what `selectHost`'s pick node by node does:
        /// the highest `tie_key_at`, the last of equal keys winning, or none when no node is
        /// offered; the floor's shortcut is taken on most nodes.
        #[test]
        fn tie_pick_matches_the_key_by_key_pick(
            words in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(0u64),
                    proptest::num::u64::ANY,
                    (0u32..64).prop_map(|b| 1u64 << b),
                ],
                BLOCK_WORDS..4 * BLOCK_WORDS,
            ),
            seed in proptest::num::u64::ANY,
            as_blocks in proptest::bool::ANY,
        ) {
            let mut pick = TiePick::default();
            let mut w = 0;
            while w < words.len() {
                if as_blocks && w + BLOCK_WORDS <= words.len() {
                    let block = words[w..].first_chunk::<BLOCK_WORDS>().unwrap();
                    pick.offer_block(w, block, seed);
                    w += BLOCK_WORDS;
                } else {
                    pick.offer_word(w, words[w], seed);
                    w += 1;
                }
            }
            let mut best: Option<(u64, usize)> = None;
            for (w, &bits) in words.iter().enumerate() {
                for b in 0..64 {
                    if bits >> b & 1 == 1 {
                        let at = w * 64 + b;
                        let key = tie_key_at(seed, at as u64);
                        if best.is_none_or(|(k, _)| key >= k) {
                            best = Some((key, at));
                        }
                    }
                }
            }
            prop_assert_eq!(pick.picked(), best.map(|b| b.1));
            if let Some((key, _)) = best {
                prop_assert_eq!(pick.key, key);
            }
        }

        /// splitmix64's last step leaves the top bits the floor compares.
        #[test]
        fn tie_key_finish_keeps_the_top_bits(z in proptest::num::u64::ANY) {
            proptest::prop_assert_eq!(tie_key_finish(z) & TIE_KEY_TOP, z & TIE_KEY_TOP);
        }
    }
}
