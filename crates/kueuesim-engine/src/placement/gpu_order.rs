//! The nodes with GPUs ordered by (free GPUs, name rank): KAI's bin-pack order (its score
//! falls as free GPUs rise, ties to the lower name), as one bitset over name ranks per free
//! GPU count. Moving a node is two bit flips instead of a B-tree removal and insertion, and a
//! walk from a cursor visits the set bits in (free GPUs, rank) order, as a sorted set's range
//! would. Counts outside `0..buckets` (none on a cluster whose pods fit its nodes) keep to a
//! sorted set beside the bitsets, so the order is exact for every count.

use std::collections::BTreeSet;
use std::sync::Arc;

use kueuesim_model::NodeId;

/// An entry: (free GPUs, name rank, node).
pub(crate) type Entry = (i64, u32, NodeId);

#[derive(Clone, Debug, Default)]
pub(crate) struct GpuOrder {
    /// Free-GPU counts kept as bitsets: `0..buckets`.
    buckets: usize,
    /// Words per bitset (name ranks, 64 to a word).
    words: usize,
    /// `bits[count · words + rank / 64]` has bit `rank % 64` set when the node of that name
    /// rank has `count` GPUs free.
    bits: Vec<u64>,
    /// Name rank → node (shared: fixed for the run).
    by_rank: Arc<[NodeId]>,
    /// Entries whose count is outside `0..buckets`.
    other: BTreeSet<Entry>,
    len: usize,
}

impl GpuOrder {
    /// An empty order over nodes whose name ranks are `name_rank` (a permutation), for free
    /// counts up to `max_free` kept as bitsets.
    pub(crate) fn new(name_rank: &[u32], max_free: i64) -> Self {
        let mut by_rank = vec![NodeId(0); name_rank.len()];
        for (n, &r) in name_rank.iter().enumerate() {
            by_rank[r as usize] = NodeId::from_index(n);
        }
        let buckets = (max_free.clamp(0, 256) + 1) as usize;
        let words = name_rank.len().div_ceil(64);
        GpuOrder {
            buckets,
            words,
            bits: vec![0; buckets * words],
            by_rank: by_rank.into(),
            other: BTreeSet::new(),
            len: 0,
        }
    }

    fn slot(&self, (free, rank, _): Entry) -> Option<(usize, u64)> {
        (0..self.buckets as i64).contains(&free).then(|| {
            (
                free as usize * self.words + rank as usize / 64,
                1u64 << (rank % 64),
            )
        })
    }

    pub(crate) fn insert(&mut self, e: Entry) {
        let added = match self.slot(e) {
            Some((w, b)) => {
                let had = self.bits[w] & b != 0;
                self.bits[w] |= b;
                !had
            }
            None => self.other.insert(e),
        };
        self.len += usize::from(added);
    }

    pub(crate) fn remove(&mut self, e: Entry) {
        let removed = match self.slot(e) {
            Some((w, b)) => {
                let had = self.bits[w] & b != 0;
                self.bits[w] &= !b;
                had
            }
            None => self.other.remove(&e),
        };
        self.len -= usize::from(removed);
    }

    pub(crate) fn contains(&self, e: Entry) -> bool {
        match self.slot(e) {
            Some((w, b)) => self.bits[w] & b != 0 && self.by_rank[e.1 as usize] == e.2,
            None => self.other.contains(&e),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The entries `>= from`, in order (a sorted set's `range(from..)`).
    pub(crate) fn range_from(&self, from: Entry) -> impl Iterator<Item = Entry> + '_ {
        let zero = (0, 0, NodeId(0));
        let below = (from < zero)
            .then(|| self.other.range(from..zero))
            .into_iter()
            .flatten();
        let above = self
            .other
            .range(from.max((self.buckets as i64, 0, NodeId(0)))..);
        // The first rank of bucket `from.0` at or after the cursor: ranks are unique, so an
        // entry of the cursor's rank is at or after it only if its node is.
        let first_rank = |rank: u32| {
            let r = rank as usize;
            if r < self.by_rank.len() && self.by_rank[r] < from.2 {
                r + 1
            } else {
                r
            }
        };
        let start = if from.0 < 0 {
            (0, 0)
        } else if from.0 < self.buckets as i64 {
            (from.0 as usize, first_rank(from.1))
        } else {
            (self.buckets, 0)
        };
        let bits = BucketWalk {
            order: self,
            bucket: start.0,
            rank: start.1,
        };
        below.copied().chain(bits).chain(above.copied())
    }
}

/// The bitsets' entries from (bucket, rank) on.
struct BucketWalk<'a> {
    order: &'a GpuOrder,
    bucket: usize,
    rank: usize,
}

impl Iterator for BucketWalk<'_> {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        let o = self.order;
        while self.bucket < o.buckets {
            let row = &o.bits[self.bucket * o.words..(self.bucket + 1) * o.words];
            let mut w = self.rank / 64;
            if w < o.words {
                let mut word = row[w] & (u64::MAX << (self.rank % 64));
                loop {
                    if word != 0 {
                        let rank = w * 64 + word.trailing_zeros() as usize;
                        self.rank = rank + 1;
                        return Some((self.bucket as i64, rank as u32, o.by_rank[rank]));
                    }
                    w += 1;
                    if w == o.words {
                        break;
                    }
                    word = row[w];
                }
            }
            self.bucket += 1;
            self.rank = 0;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Any sequence of inserts and removes leaves the same entries as a sorted set, and
        /// every range from any cursor yields the same entries in the same order.
        #[test]
        fn follows_a_sorted_set(
            n in 1usize..200,
            ops in proptest::collection::vec((proptest::bool::ANY, 0usize..200, -2i64..12), 0..300),
            cursors in proptest::collection::vec((-3i64..14, 0u32..210, 0u32..210), 1..20),
        ) {
            // Name ranks: a fixed permutation of the nodes.
            let name_rank: Vec<u32> = (0..n as u32).map(|i| (i * 7919) % n as u32).collect();
            let mut seen = name_rank.clone();
            seen.sort_unstable();
            seen.dedup();
            proptest::prop_assume!(seen.len() == n);
            let mut order = GpuOrder::new(&name_rank, 8);
            let mut set: BTreeSet<Entry> = BTreeSet::new();
            for (insert, node, free) in ops {
                let node = node % n;
                let e = (free, name_rank[node], NodeId::from_index(node));
                if insert { order.insert(e); set.insert(e); } else { order.remove(e); set.remove(&e); }
                proptest::prop_assert_eq!(order.len(), set.len());
                proptest::prop_assert!(set.iter().all(|&e| order.contains(e)));
            }
            for (free, rank, node) in cursors {
                let from = (free, rank, NodeId(node));
                let got: Vec<Entry> = order.range_from(from).collect();
                let want: Vec<Entry> = set.range(from..).copied().collect();
                proptest::prop_assert_eq!(got, want);
            }
        }
    }
}
