//! The order preemption takes candidates in: upstream's `CandidatesOrdering`, and the global
//! order of the classical search over its three candidate lists, worked out as far as read.

use std::cmp::Ordering;

use kueuesim_model::{ClusterQueueId, SimTime};

use super::{
    AdmittedWorkloads, Candidate, Ctx, Elem, Variant, policy_may_admit_some, policy_may_take,
    satisfies_policy,
};
use crate::admitted::OwnOrder;

/// `CandidatesOrdering`: evicted first, other ClusterQueues before the preemptor's own, then
/// (Admission Fair Sharing, both in one ClusterQueue under different LocalQueue names) the
/// higher LocalQueue usage first, lower priority first, most recently reserved first, then UID.
pub(super) fn candidates_ordering(a: &Candidate, b: &Candidate, own: ClusterQueueId) -> Ordering {
    b.evicted
        .cmp(&a.evicted)
        .then_with(|| (a.cq == own).cmp(&(b.cq == own)))
        .then_with(|| match (a.lq_fs_usage, b.lq_fs_usage) {
            // `resourceUsagePreemptionEnabled`: upstream compares `spec.queueName` only, so
            // same-named LocalQueues of different namespaces do not count as different.
            (Some((qa, ua)), Some((qb, ub))) if a.cq == b.cq && qa != qb && ua != ub => {
                ub.total_cmp(&ua)
            }
            _ => Ordering::Equal,
        })
        .then_with(|| a.priority.cmp(&b.priority))
        .then_with(|| b.reserved_at.cmp(&a.reserved_at))
        .then_with(|| a.uid_rank.cmp(&b.uid_rank))
}

/// Sorts `list` by `CandidatesOrdering` (the candidate of each item from `cand`), stably and
/// without assuming the ordering is total: with Admission Fair Sharing it compares LocalQueue
/// usages only between differently named queues, and same-named queues of two namespaces with
/// different usages make it cyclic, where the standard library's sorts may panic.
pub(super) fn sort_candidates<'c, T: Copy>(
    list: &mut [T],
    cand: impl Fn(&T) -> &'c Candidate + Copy,
    own: ClusterQueueId,
) {
    merge_sort(list, &|a, b| candidates_ordering(cand(a), cand(b), own));
}

/// The candidates in `classicalPreemptions`' global order: each list sorted by
/// `CandidatesOrdering`, then every list's evicted prefix (the ordering puts evicted workloads
/// first) before any non-evicted candidate, keeping hierarchy → priority → same-CQ within each
/// half. The removal loop usually stops after a few candidates of hundreds, so the order is
/// worked out as far as it is read, a chunk at a time (select the next smallest, sort those):
/// the same sequence as sorting everything, because the ordering is total (the UID breaks
/// every tie). With Admission Fair Sharing usages the ordering compares LocalQueue usages only
/// between some pairs, which is not a key of one candidate: then each list is sorted whole,
/// as before.
pub(super) struct GlobalOrder<'c> {
    /// `order[..sorted]` is final; the rest is not yet in order.
    order: Vec<(Key, Elem<'c>)>,
    sorted: usize,
}

/// A stable merge sort, which (unlike the standard library's sorts) accepts an ordering that
/// is not total and still returns a permutation, in O(n log n) comparisons: `CandidatesOrdering`
/// with Admission Fair Sharing compares LocalQueue usages only between differently named
/// queues, and same-named queues of two namespaces can make it cyclic.
fn merge_sort<T: Copy>(v: &mut [T], cmp: &impl Fn(&T, &T) -> Ordering) {
    if v.len() <= 1 {
        return;
    }
    let mid = v.len() / 2;
    merge_sort(&mut v[..mid], cmp);
    merge_sort(&mut v[mid..], cmp);
    let mut merged = Vec::with_capacity(v.len());
    let (mut i, mut j) = (0, mid);
    while i < mid && j < v.len() {
        // Ties keep the left run's element first: stable.
        if cmp(&v[j], &v[i]) == Ordering::Less {
            merged.push(v[j]);
            j += 1;
        } else {
            merged.push(v[i]);
            i += 1;
        }
    }
    merged.extend_from_slice(&v[i..mid]);
    merged.extend_from_slice(&v[j..]);
    v.copy_from_slice(&merged);
}

/// (not evicted, list, priority, most recent reservation first, UID label): the global order
/// of candidates without Admission Fair Sharing usages, as one key.
type Key = (bool, u8, i32, std::cmp::Reverse<SimTime>, u64);

/// The key of candidate `c` in list `list` (0 hierarchy, 1 priority, 2 same queue).
#[inline]
fn key(list: usize, c: &Candidate) -> Key {
    (
        !c.evicted,
        list as u8,
        c.priority,
        std::cmp::Reverse(c.reserved_at),
        c.uid_rank,
    )
}

impl<'c> GlobalOrder<'c> {
    /// Sorted a chunk at a time: the first chunk, then twice as many each time.
    const FIRST_CHUNK: usize = 8;

    pub(super) fn new(lists: [Vec<Elem<'c>>; 3], own: ClusterQueueId) -> Self {
        let key = |list: usize, e: &Elem<'c>| key(list, e.cand);
        let fair = lists.iter().flatten().any(|e| e.cand.lq_fs_usage.is_some());
        let total = lists.iter().map(|l| l.len()).sum();
        let mut order = Vec::with_capacity(total);
        if fair {
            // Sorted whole by the ordering itself; the key then only splits evicted from not.
            for (li, mut list) in lists.into_iter().enumerate() {
                sort_candidates(&mut list, |e| e.cand, own);
                order.extend(list.into_iter().map(|e| (key(li, &e), e)));
            }
            order.sort_by_key(|(k, _)| (k.0, k.1));
            let sorted = order.len();
            return GlobalOrder { order, sorted };
        }
        for (li, list) in lists.into_iter().enumerate() {
            order.extend(list.into_iter().map(|e| (key(li, &e), e)));
        }
        GlobalOrder { order, sorted: 0 }
    }

    /// The `i`-th candidate in order, if there are that many.
    pub(super) fn get(&mut self, i: usize) -> Option<Elem<'c>> {
        if i >= self.order.len() {
            return None;
        }
        if i >= self.sorted {
            let rest = &mut self.order[self.sorted..];
            let chunk = (self.sorted.max(Self::FIRST_CHUNK)).min(rest.len());
            let taken = if chunk < rest.len() {
                front_smallest(rest, chunk)
            } else {
                chunk
            };
            rest[..taken].sort_unstable_by_key(|(k, _)| *k);
            self.sorted += taken;
        }
        Some(self.order[i].1)
    }
}

/// `key` in the same-queue list, packed into integers that compare as the key does: (not
/// evicted, priority) above the reservation time, reversed (most recent first), in one
/// `u128`, then the UID label. A whole-key comparison of hundreds of workloads per search was
/// most of a chunk's pass; this is two integer comparisons, almost always one.
type Packed = (u128, u64);

#[inline]
fn packed(c: &Candidate) -> Packed {
    // Each part maps to unsigned integers in the same order: `false < true`, an `i32` with
    // its sign bit flipped, an `i64` with its sign bit flipped then every bit (reversed).
    let first = (u64::from(!c.evicted) << 32) | u64::from((c.priority as u32) ^ (1 << 31));
    let recent_first = !((c.reserved_at.0 as u64) ^ (1 << 63));
    (
        (u128::from(first) << 64) | u128::from(recent_first),
        c.uid_rank,
    )
}

/// The global order of a search whose only list is the preemptor's own ClusterQueue's
/// (`collectSameQueueCandidates`; no hierarchy or priority candidates), read straight from
/// that ClusterQueue's workloads instead of from a list of them.
///
/// Where the admitted workloads keep the ClusterQueue's order (`AdmittedWorkloads::own_order`),
/// the candidates are read in it, one at a time as the search asks: the evicted ones that
/// pass the filter first (a few, sorted by key), then each priority band the policy may take
/// from, lowest first, its workloads most recently reserved first (the evicted skipped, as
/// read already). That is the key's order, `(not evicted, priority, most recent reservation
/// first, UID label)`, and the filter (`same_queue_candidates`': the policy, then the
/// contested resources) is applied to each workload read, so the sequence is the sorted
/// list's, `GlobalOrder`'s. A band the policy cannot take from holds no workload that
/// passes it (`policy_may_take` reads the priority alone, and every workload of a band has
/// its priority), nor does any band above it. A search usually stops after a few candidates
/// of hundreds, and reads only those.
///
/// Otherwise one pass over the ClusterQueue's workloads per chunk keeps the smallest keys
/// above the last one read (`after`), and the filter's second half (`WorkloadUsesResources`,
/// which reads the candidate's usage) runs only for a workload whose key would enter the
/// chunk: the keys are unique (the UID label breaks every tie), so the chunks are consecutive
/// runs of the one sorted order. A workload with an Admission Fair Sharing usage that passes
/// the policy makes `new` give up (None): `GlobalOrder` then sorts by `CandidatesOrdering`
/// itself, which is not this key's order (the index keeps no order then either).
pub(super) struct OwnQueueOrder<'a, 'p, 'u, 'c, A: AdmittedWorkloads> {
    ctx: &'a Ctx<'p, 'u>,
    admitted: &'c A,
    all: &'c [Candidate],
    /// The candidates read so far, in order, with their keys (read from the kept order: no
    /// key, as none is compared).
    read: Vec<(Packed, Elem<'c>)>,
    /// Whether `read` holds every candidate.
    done: bool,
    /// The kept order being read, if any: the band and how many of its members are left
    /// to read (from the back).
    kept: Option<(OwnOrder<'c>, usize, usize)>,
}

/// The chunk an `OwnQueueOrder` pass selects (the first two passes; a third sorts the rest
/// whole).
const OWN_CHUNK: usize = 8;

impl<'a, 'p, 'u, 'c, A: AdmittedWorkloads> OwnQueueOrder<'a, 'p, 'u, 'c, A> {
    /// The order of the workloads of the preemptor's ClusterQueue that
    /// `same_queue_candidates` keeps, with its first chunk read; None when one with an
    /// Admission Fair Sharing usage passes the policy.
    pub(super) fn new(ctx: &'a Ctx<'p, 'u>, admitted: &'c A, lowest: Option<i32>) -> Option<Self> {
        let all = admitted.admitted_in(ctx.p.cq);
        // A pass takes the keys strictly above the last one read, so two candidates with one
        // key would lose one of them where `GlobalOrder` keeps both. The UID label makes keys
        // unique (`UidLabels` labels live workloads apart); tests check it.
        debug_assert!(
            {
                let mut labels: Vec<u64> = all.iter().map(|c| c.uid_rank).collect();
                labels.sort_unstable();
                labels.windows(2).all(|w| w[0] != w[1])
            },
            "two admitted workloads of one ClusterQueue share a UID label"
        );
        let mut order = OwnQueueOrder {
            ctx,
            admitted,
            all,
            read: Vec::new(),
            done: false,
            kept: None,
        };
        let (p, policy) = (ctx.p, ctx.settings.within_cluster_queue);
        if !policy_may_admit_some(p, lowest, policy) {
            // `collectSameQueueCandidates` collects nothing.
            order.done = true;
            return Some(order);
        }
        if let Some(kept) = admitted.own_order(p.cq) {
            // The evicted first: in key order, as their keys come before every other.
            order.read.extend(
                kept.evicted
                    .iter()
                    .map(|&w| {
                        admitted
                            .candidate(w)
                            .expect("an evicted member holds quota")
                    })
                    .filter(|c| satisfies_policy(p, c, policy) && ctx.uses_contested(c))
                    .map(|c| (packed(c), own_elem(c))),
            );
            order.read.sort_unstable_by_key(|r| r.0);
            let left = kept.bands.first().map_or(0, |b| b.members_len());
            order.kept = Some((kept, 0, left));
            return Some(order);
        }
        order.next_chunk(true)?;
        Some(order)
    }

    /// The `i`-th candidate in order, if there are that many.
    pub(super) fn get(&mut self, i: usize) -> Option<Elem<'c>> {
        while i >= self.read.len() && !self.done {
            if self.kept.is_some() {
                self.next_kept();
            } else {
                self.next_chunk(false);
            }
        }
        self.read.get(i).map(|r| r.1)
    }

    /// Reads the next candidate of the kept order (`OwnOrder`'s bands), or marks the order
    /// done.
    fn next_kept(&mut self) {
        let (ctx, p) = (self.ctx, self.ctx.p);
        let policy = ctx.settings.within_cluster_queue;
        let Some((kept, band, left)) = &mut self.kept else {
            return;
        };
        loop {
            let Some(b) = kept.bands.get(*band) else {
                self.done = true;
                return;
            };
            // Bands are lowest first: none from here on holds a workload the policy takes.
            if !policy_may_take(p, b.priority(), policy) {
                self.done = true;
                return;
            }
            if *left == 0 {
                *band += 1;
                *left = kept.bands.get(*band).map_or(0, |b| b.members_len());
                continue;
            }
            *left -= 1;
            let Some(w) = b.member(*left) else {
                continue;
            };
            let c = self.admitted.candidate(w).expect("a member holds quota");
            // The evicted were read first.
            if c.evicted || !satisfies_policy(p, c, policy) || !ctx.uses_contested(c) {
                continue;
            }
            self.read.push(((0, 0), own_elem(c)));
            return;
        }
    }

    /// Reads the next chunk: the smallest keys above the last read. None (on the first pass
    /// only) when a workload passing the policy has an Admission Fair Sharing usage.
    fn next_chunk(&mut self, first: bool) -> Option<()> {
        let (ctx, p) = (self.ctx, self.ctx.p);
        let policy = ctx.settings.within_cluster_queue;
        let after = self.read.last().map(|r| r.0);
        let above = |k: &Packed| after.is_none_or(|a| *k > a);
        let elem = own_elem;
        if self.read.len() >= 2 * OWN_CHUNK {
            // Far into the list (rare): the rest, sorted whole.
            let start = self.read.len();
            self.read.extend(
                self.all
                    .iter()
                    .filter(|c| satisfies_policy(p, c, policy))
                    .map(|c| (packed(c), c))
                    .filter(|(k, c)| above(k) && ctx.uses_contested(c))
                    .map(|(k, c)| (k, elem(c))),
            );
            self.read[start..].sort_unstable_by_key(|r| r.0);
            self.done = true;
            return Some(());
        }
        // The chunk's keys so far, ascending, in `best[..len]`.
        let mut best: [(Packed, Option<&'c Candidate>); OWN_CHUNK] = [((0, 0), None); OWN_CHUNK];
        let mut len = 0;
        // Newest first: the ClusterQueue's workloads are mostly in admission order and the
        // most recently reserved come first in the order, so the chunk fills early and most
        // workloads are turned down by one comparison. (Any order selects the same keys.)
        for c in self.all.iter().rev() {
            if !satisfies_policy(p, c, policy) {
                continue;
            }
            if first && c.lq_fs_usage.is_some() {
                return None;
            }
            let k = packed(c);
            if (len == OWN_CHUNK && k >= best[len - 1].0) || !above(&k) || !ctx.uses_contested(c) {
                continue;
            }
            if len == OWN_CHUNK {
                len -= 1;
            }
            let mut at = len;
            while at > 0 && best[at - 1].0 > k {
                best[at] = best[at - 1];
                at -= 1;
            }
            best[at] = (k, Some(c));
            len += 1;
        }
        self.read.extend(
            best[..len]
                .iter()
                .map(|&(k, c)| (k, elem(c.expect("filled")))),
        );
        self.done = len < OWN_CHUNK;
        Some(())
    }
}

/// A candidate of the preemptor's own ClusterQueue as a list element (`WithinCQ`).
fn own_elem(c: &Candidate) -> Elem<'_> {
    Elem {
        cand: c,
        lca: None,
        variant: Variant::WithinCq,
    }
}

/// Moves the `k` smallest keys of `v` (`0 < k < v.len()`) to its front, in no particular
/// order, and returns how many went there (`k`; more only if keys tie with the `k`-th, which
/// the UID rules out). The first chunk of a search is a few candidates out of hundreds (a
/// ClusterQueue's low-priority work): one pass keeps the `k` smallest keys seen so far in a
/// small sorted list, and a second moves every key up to the `k`-th smallest to the front,
/// where `select_nth_unstable` swapped the whole list's elements around several times.
/// For larger chunks (a search that reads far) that selection is used as before.
fn front_smallest<T: Copy>(v: &mut [(Key, T)], k: usize) -> usize {
    const SMALL: usize = 16;
    if k > SMALL {
        v.select_nth_unstable_by_key(k - 1, |(key, _)| *key);
        return k;
    }
    // The `k` smallest keys so far, ascending, in `best[..len]`.
    let mut best: [Key; SMALL] = [v[0].0; SMALL];
    let mut len = 0;
    for &(key, _) in v.iter() {
        if len == k {
            if key >= best[k - 1] {
                continue;
            }
            len -= 1;
        }
        let mut at = len;
        while at > 0 && best[at - 1] > key {
            best[at] = best[at - 1];
            at -= 1;
        }
        best[at] = key;
        len += 1;
    }
    let threshold = best[k - 1];
    let mut front = 0;
    for j in 0..v.len() {
        if v[j].0 <= threshold {
            v.swap(front, j);
            front += 1;
        }
    }
    front
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A candidate of ClusterQueue 0 with the fields the order reads.
    fn candidate(evicted: bool, priority: i32, reserved_at: i64, uid_rank: u64) -> Candidate {
        Candidate {
            workload: kueuesim_model::WorkloadId::from_index(0),
            cq: ClusterQueueId::from_index(0),
            priority,
            timestamp: SimTime(0),
            reserved_at: SimTime(reserved_at),
            evicted,
            uid_rank,
            lq_fs_usage: None,
            usage: Vec::new(),
        }
    }

    proptest! {
        /// `packed` orders same-queue candidates as `key` does, extremes included (the
        /// priorities and times are drawn from narrow ranges around zero and the type's ends,
        /// so that ties and sign changes are common).
        #[test]
        fn packed_orders_as_the_key(
            a in (any::<bool>(), prop_oneof![-2i32..3, Just(i32::MIN), Just(i32::MAX)],
                  prop_oneof![-2i64..3, Just(i64::MIN), Just(i64::MAX)], 0u64..3),
            b in (any::<bool>(), prop_oneof![-2i32..3, Just(i32::MIN), Just(i32::MAX)],
                  prop_oneof![-2i64..3, Just(i64::MIN), Just(i64::MAX)], 0u64..3),
        ) {
            let (a, b) = (candidate(a.0, a.1, a.2, a.3), candidate(b.0, b.1, b.2, b.3));
            prop_assert_eq!(packed(&a).cmp(&packed(&b)), key(2, &a).cmp(&key(2, &b)));
        }

        /// `front_smallest` moves to the front exactly the elements a selection of the `k`
        /// smallest would (all of them, with every key tied to the `k`-th; the UID label makes
        /// keys unique in the engine, but ties are drawn here too), leaves the rest behind,
        /// and loses none: what `select_nth_unstable` then a sort gave before.
        #[test]
        fn front_smallest_is_the_k_smallest(
            raw in prop::collection::vec((any::<bool>(), 0u8..3, -2i32..3, 0i64..4, 0u64..6), 2..60),
            k_pick in any::<prop::sample::Index>(),
        ) {
            let mut v: Vec<(Key, usize)> = raw
                .iter()
                .enumerate()
                .map(|(i, &(e, l, p, t, u))| ((e, l, p, std::cmp::Reverse(SimTime(t)), u), i))
                .collect();
            let k = 1 + k_pick.index(v.len() - 1);
            let mut sorted: Vec<Key> = v.iter().map(|(key, _)| *key).collect();
            sorted.sort_unstable();
            let threshold = sorted[k - 1];
            let expected_front = sorted.iter().filter(|key| **key <= threshold).count();
            let before: Vec<(Key, usize)> = { let mut b = v.clone(); b.sort_unstable(); b };
            let taken = front_smallest(&mut v, k);
            prop_assert!(taken >= k);
            if k <= 16 {
                prop_assert_eq!(taken, expected_front);
                prop_assert!(v[..taken].iter().all(|(key, _)| *key <= threshold));
                prop_assert!(v[taken..].iter().all(|(key, _)| *key > threshold));
            } else {
                // The selection path: the k-th in place, the smaller before it.
                prop_assert_eq!(v[k - 1].0, threshold);
                prop_assert!(v[..k].iter().all(|(key, _)| *key <= threshold));
            }
            let mut after = v.clone();
            after.sort_unstable();
            prop_assert_eq!(after, before);
            // Sorting the front gives the first `taken` of the whole sort.
            let mut front: Vec<Key> = v[..taken].iter().map(|(key, _)| *key).collect();
            front.sort_unstable();
            prop_assert_eq!(&front[..], &sorted[..taken]);
        }
    }
}
