//! An ordered set of queue keys kept as a sorted ring buffer (`SortedKeys`), for the queue
//! manager's per-shape sets and its heads: the first key, the one a cycle pops, comes off in
//! O(1).
//!
//! Kueue's heap pops its head in O(log n); a `BTreeSet` did it in about 200 instructions
//! (walk to the leftmost leaf, remove, rebalance), twice per pop (the shape's set and the
//! heads), and a million-workload run pops 3.18 M heads. The keys of one scheduling shape
//! share a priority (`SchedulingEquivalenceHashing` hashes it), so a new arrival, the newest
//! queue-order timestamp, goes at the back, and a popped head that fails goes back to the
//! front of its shape's inadmissible set: the common moves are a push or a pop at an end.

use std::collections::VecDeque;

use super::QueueKey;

/// Distinct keys in ascending order (`Ord` of `QueueKey`), as a `BTreeSet<QueueKey>` holds
/// them; every method is the `BTreeSet` method of the same name.
///
/// Invariant: `keys` is strictly ascending (debug builds check it after every change that
/// is not a push or pop at an end of a checked position; a proptest compares every method
/// with `BTreeSet`'s).
#[derive(Clone, Debug, Default)]
pub(super) struct SortedKeys {
    keys: VecDeque<QueueKey>,
}

impl SortedKeys {
    /// The smallest key.
    #[inline]
    pub(super) fn first(&self) -> Option<&QueueKey> {
        self.keys.front()
    }

    /// Takes out the smallest key.
    #[inline]
    pub(super) fn pop_first(&mut self) -> Option<QueueKey> {
        self.keys.pop_front()
    }

    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Ascending.
    pub(super) fn iter(&self) -> std::collections::vec_deque::Iter<'_, QueueKey> {
        self.keys.iter()
    }

    pub(super) fn contains(&self, key: &QueueKey) -> bool {
        self.keys.binary_search(key).is_ok()
    }

    /// Adds `key`; false if it was there. A key past either end is pushed there; one in
    /// between moves the shorter side of the ring (`VecDeque::insert`).
    pub(super) fn insert(&mut self, key: QueueKey) -> bool {
        match self.keys.back() {
            None => {
                self.keys.push_back(key);
                return true;
            }
            Some(last) if *last < key => {
                self.keys.push_back(key);
                return true;
            }
            _ => {}
        }
        if self.keys.front().is_some_and(|first| key < *first) {
            self.keys.push_front(key);
            return true;
        }
        match self.keys.binary_search(&key) {
            Ok(_) => false,
            Err(i) => {
                self.keys.insert(i, key);
                true
            }
        }
    }

    /// Takes out `key`; false if it was not there.
    pub(super) fn remove(&mut self, key: &QueueKey) -> bool {
        if self.keys.front() == Some(key) {
            self.keys.pop_front();
            return true;
        }
        if self.keys.back() == Some(key) {
            self.keys.pop_back();
            return true;
        }
        match self.keys.binary_search(key) {
            Ok(i) => {
                self.keys.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Moves every key of `from` into `self`, leaving `from` empty (both keep their buffers,
    /// so parking a shape and moving it back allocate nothing). The usual cases are cheap:
    /// into an empty set it is a swap, and a run that goes wholly before or after the other
    /// is moved as a block; a few keys are inserted one by one, and only interleaved sets of
    /// similar sizes are merged into a new buffer.
    pub(super) fn append(&mut self, from: &mut SortedKeys) {
        let (Some(from_first), Some(from_last)) = (from.keys.front(), from.keys.back()) else {
            return;
        };
        match (self.keys.front(), self.keys.back()) {
            (None, _) | (_, None) => std::mem::swap(self, from),
            (_, Some(last)) if last < from_first => self.keys.append(&mut from.keys),
            (Some(first), _) if from_last < first => {
                // `from` goes first: prepend it (or append `self` to it, whichever moves less).
                if from.keys.len() >= self.keys.len() {
                    from.keys.append(&mut self.keys);
                    std::mem::swap(self, from);
                } else {
                    while let Some(k) = from.keys.pop_back() {
                        self.keys.push_front(k);
                    }
                }
            }
            _ if from.keys.len() * 16 <= self.keys.len() => {
                for k in from.keys.drain(..) {
                    self.insert(k);
                }
            }
            _ => {
                let mut merged = VecDeque::with_capacity(self.keys.len() + from.keys.len());
                let (mut a, mut b) = (self.keys.iter().peekable(), from.keys.iter().peekable());
                loop {
                    let next = match (a.peek(), b.peek()) {
                        (Some(x), Some(y)) => match x.cmp(y) {
                            std::cmp::Ordering::Less => a.next(),
                            std::cmp::Ordering::Greater => b.next(),
                            std::cmp::Ordering::Equal => {
                                b.next();
                                a.next()
                            }
                        },
                        (Some(_), None) => a.next(),
                        (None, Some(_)) => b.next(),
                        (None, None) => break,
                    };
                    merged.extend(next.copied());
                }
                self.keys = merged;
                from.keys.clear();
            }
        }
        debug_assert!(self.is_strictly_ascending(), "a merge broke the order");
        debug_assert!(from.keys.is_empty());
    }

    /// The invariant, for debug checks.
    fn is_strictly_ascending(&self) -> bool {
        self.keys
            .iter()
            .zip(self.keys.iter().skip(1))
            .all(|(a, b)| a < b)
    }
}

/// Collected keys in any order, repeats dropped (`BTreeSet::from_iter`).
impl FromIterator<QueueKey> for SortedKeys {
    fn from_iter<I: IntoIterator<Item = QueueKey>>(iter: I) -> Self {
        let mut keys: Vec<QueueKey> = iter.into_iter().collect();
        keys.sort_unstable();
        keys.dedup();
        SortedKeys { keys: keys.into() }
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BTreeSet;

    use kueuesim_model::{SimTime, WorkloadId};
    use proptest::prelude::*;

    use super::*;

    /// Key `i` of 40: two priorities, timestamps that tie, so every field orders some pair.
    fn nth(i: u8) -> QueueKey {
        let i = u32::from(i % 40);
        QueueKey {
            priority: Reverse((i % 2) as i32),
            policy: 0,
            timestamp: SimTime::from_millis(i64::from(i / 3)),
            uid_rank: u64::from(i.wrapping_mul(7) % 40),
            workload: WorkloadId(i),
            shape: i % 2,
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u8),
        Remove(u8),
        PopFirst,
        /// Appends a set of the keys picked by the mask bits (into the set, or the set into it).
        Append(u64, bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => any::<u8>().prop_map(Op::Insert),
            2 => any::<u8>().prop_map(Op::Remove),
            2 => Just(Op::PopFirst),
            1 => (any::<u64>(), any::<bool>()).prop_map(|(m, b)| Op::Append(m, b)),
        ]
    }

    proptest! {
        /// Every method answers as `BTreeSet`'s, and the keys stay in its order.
        #[test]
        fn sorted_keys_behave_as_a_btree_set(ops in proptest::collection::vec(op(), 1..150)) {
            let mut s = SortedKeys::default();
            let mut r: BTreeSet<QueueKey> = BTreeSet::new();
            for op in ops {
                match op {
                    Op::Insert(i) => prop_assert_eq!(s.insert(nth(i)), r.insert(nth(i))),
                    Op::Remove(i) => prop_assert_eq!(s.remove(&nth(i)), r.remove(&nth(i))),
                    Op::PopFirst => prop_assert_eq!(s.pop_first(), r.pop_first()),
                    Op::Append(mask, into_other) => {
                        let keys: Vec<QueueKey> =
                            (0..40u8).filter(|b| mask >> b & 1 == 1).map(nth).collect();
                        let mut other: SortedKeys = keys.iter().copied().collect();
                        if into_other {
                            other.append(&mut s);
                            prop_assert!(s.is_empty());
                            s = other;
                        } else {
                            s.append(&mut other);
                            prop_assert!(other.is_empty());
                        }
                        r.extend(keys);
                    }
                }
                prop_assert!(s.is_strictly_ascending());
                prop_assert_eq!(s.len(), r.len());
                prop_assert_eq!(s.first(), r.first());
                prop_assert!(s.iter().eq(r.iter()));
                for i in 0..40 {
                    prop_assert_eq!(s.contains(&nth(i)), r.contains(&nth(i)));
                }
            }
        }
    }
}
