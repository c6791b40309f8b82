//! Ordering workloads by UID, the last tie-break of Kueue's queue order (`baseCompareFunc`)
//! and of preemption candidates, without knowing every UID up front (a streamed trace does
//! not give them).
//!
//! Each live workload holds a numeric label, unique and increasing in UID order, so keys
//! compare as plain integers. A label goes into the gap between the UID's neighbours among
//! the live workloads: far after the last one (a new region of UIDs), a small step after its
//! predecessor otherwise (UIDs of one namespace or generator mostly arrive in increasing
//! order), half the gap when that is smaller. When a gap is used up every live workload is
//! labelled afresh, evenly spaced (`UidLabels::respace`), and the engine rewrites the labels
//! it keeps (queue keys, preemption candidates): relabelling keeps the order, so no heap or
//! set is reordered.

use std::cmp::Ordering;
use std::rc::Rc;

use kueuesim_model::WorkloadId;

/// Room left after the last label for a UID beyond every live one.
const APPEND_STEP: u64 = 1 << 40;
/// Room left after a predecessor inside a gap.
const INSERT_STEP: u64 = 1 << 20;
/// The most entries a run holds before it is split in two: a run's entries after the place
/// are moved on every insertion into it and every removal from it (half a run of 64-byte
/// entries on average), so it is kept to about two kilobytes. On the million 32 and 64 cost
/// about the same: 32 spares the removals' moves what it adds in splits and a search step.
const RUN_MAX: usize = 32;
/// The bytes of a UID a key holds inline.
const INLINE: usize = 32;

/// A UID's first `INLINE` bytes, zero-padded, as four big-endian words: the words order as
/// the bytes do, so comparing heads is four integer comparisons.
type Head = [u64; 4];

/// The words of `a` and `b` compared in order (the bytes' lexicographic order).
#[inline]
fn head_cmp(a: &Head, b: &Head) -> Ordering {
    a[0].cmp(&b[0])
        .then(a[1].cmp(&b[1]))
        .then(a[2].cmp(&b[2]))
        .then(a[3].cmp(&b[3]))
}

/// A UID as a search key: its first 32 bytes inline (zero-padded, so they order as the
/// strings do, coarsely), the whole string only for a tie there. Finding a new UID's
/// neighbours then rarely leaves the runs' own memory (a cache miss per string otherwise).
///
/// A UID of at most 32 bytes is held whole by its head and length, so it needs no copy of
/// its own: only a longer one keeps the whole string (`long`). Keys order as (UID bytes,
/// workload), the order of (`String`, `WorkloadId`).
#[derive(Clone, Debug)]
struct UidSortKey {
    head: Head,
    /// The whole UID when longer than `INLINE` bytes (the head holds it all otherwise).
    long: Option<Rc<str>>,
    len: u32,
    workload: WorkloadId,
}

impl UidSortKey {
    fn new(uid: &str, workload: WorkloadId) -> Self {
        let mut bytes = [0u8; INLINE];
        let n = uid.len().min(INLINE);
        bytes[..n].copy_from_slice(&uid.as_bytes()[..n]);
        let word = |i: usize| u64::from_be_bytes(bytes[i * 8..][..8].try_into().expect("8 bytes"));
        UidSortKey {
            head: [word(0), word(1), word(2), word(3)],
            long: (uid.len() > INLINE).then(|| uid.into()),
            len: u32::try_from(uid.len()).unwrap_or(u32::MAX),
            workload,
        }
    }

    /// The UID's bytes compared with `o`'s, their heads being equal (a short UID's bytes are
    /// its head's first `len`).
    #[cold]
    fn cmp_whole(&self, o: &UidSortKey) -> Ordering {
        let inline = |k: &UidSortKey| {
            let mut bytes = [0u8; INLINE];
            for (i, w) in k.head.iter().enumerate() {
                bytes[i * 8..][..8].copy_from_slice(&w.to_be_bytes());
            }
            bytes
        };
        fn whole<'a>(k: &'a UidSortKey, inline: &'a [u8; INLINE]) -> &'a [u8] {
            match &k.long {
                Some(u) => u.as_bytes(),
                None => &inline[..k.len as usize],
            }
        }
        let (a, b) = (inline(self), inline(o));
        whole(self, &a).cmp(whole(o, &b))
    }
}

impl Ord for UidSortKey {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        match head_cmp(&self.head, &o.head) {
            Ordering::Equal => self.cmp_whole(o).then(self.workload.cmp(&o.workload)),
            unequal => unequal,
        }
    }
}

impl PartialOrd for UidSortKey {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for UidSortKey {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for UidSortKey {}

/// The labels of the live workloads, by UID: a sorted sequence cut into runs of at most
/// `RUN_MAX` entries, each run non-empty and sorted, the runs in order. Finding a UID is a
/// binary search over the runs' first keys and one within a run, and its neighbours are the
/// entries beside where it goes, so an arrival costs one search (an ordered map searched
/// three times: the predecessor, the successor, the insertion).
#[derive(Clone, Debug, Default)]
pub struct UidLabels {
    runs: Vec<Vec<(UidSortKey, u64)>>,
    /// The head of each run's first key (`firsts[i] == runs[i][0].0.head`), side by side:
    /// the search over the runs reads this one array and follows a run's pointer only on a
    /// tie of heads (checked by `firsts_match` in debug builds).
    firsts: Vec<Head>,
    /// The label of each run's first entry (`first_labels[i] == runs[i][0].1`), side by side
    /// as `firsts`: letting a workload go searches the runs by label in this one array
    /// (checked by `firsts_match` too).
    first_labels: Vec<u64>,
    /// Respacings so far; each uses other values than the last, so that a label kept from
    /// before one can never pass for a current one (the engine's invariant check sees it).
    epochs: u64,
}

impl UidLabels {
    /// Where `key` is or would go: the run (the last whose first key is not above it, else
    /// the first) and the position in it.
    fn locate(&self, key: &UidSortKey) -> (usize, usize) {
        // `partition_point` over the runs by `runs[i][0].0 <= key`, read from `firsts`.
        let (mut lo, mut hi) = (0, self.firsts.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let first_not_above = match head_cmp(&self.firsts[mid], &key.head) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => self.runs[mid][0].0 <= *key,
            };
            if first_not_above {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let run = lo.saturating_sub(1);
        let at = self
            .runs
            .get(run)
            .map_or(0, |r| r.partition_point(|e| e.0 < *key));
        (run, at)
    }

    /// Whether `firsts` and `first_labels` hold each run's first head and label (the
    /// mirrors `locate` and `remove` read).
    fn firsts_match(&self) -> bool {
        self.firsts.len() == self.runs.len()
            && self.first_labels.len() == self.runs.len()
            && self
                .runs
                .iter()
                .zip(self.firsts.iter().zip(&self.first_labels))
                .all(|(r, (f, l))| r[0].0.head == *f && r[0].1 == *l)
    }

    /// Labels arriving workload `w` with UID `uid`; `None` when its gap is used up (the
    /// workload is registered all the same: `respace` then labels it with the others).
    pub fn insert(&mut self, uid: &str, w: WorkloadId) -> Option<u64> {
        let key = UidSortKey::new(uid, w);
        if self.runs.is_empty() {
            let label = u64::MAX / 2;
            let mut run = Vec::with_capacity(RUN_MAX + 1);
            self.firsts.push(key.head);
            self.first_labels.push(label);
            run.push((key, label));
            self.runs.push(run);
            return Some(label);
        }
        let (run, at) = self.locate(&key);
        // The neighbours: beside the position, or across a run boundary (`locate` puts a key
        // below every run's first at the start of the first run, so only the successor can
        // be in the next run). A new key equals none kept (its workload is new).
        let before = at.checked_sub(1).map(|i| self.runs[run][i].1);
        let after = self.runs[run]
            .get(at)
            .or_else(|| self.runs.get(run + 1).map(|r| &r[0]))
            .map(|e| e.1);
        let label = match (before, after) {
            (None, None) => Some(u64::MAX / 2),
            (Some(p), None) => p.checked_add(APPEND_STEP),
            (None, Some(s)) => s.checked_sub(APPEND_STEP),
            (Some(p), Some(s)) => Some(p + INSERT_STEP.min((s - p) / 2)).filter(|&l| l > p),
        };
        let entries = &mut self.runs[run];
        if at == 0 {
            self.firsts[run] = key.head;
            self.first_labels[run] = label.unwrap_or(0);
        }
        entries.insert(at, (key, label.unwrap_or(0)));
        if entries.len() > RUN_MAX {
            let mut upper = Vec::with_capacity(RUN_MAX + 1);
            upper.extend(entries.drain(RUN_MAX / 2..));
            self.firsts.insert(run + 1, upper[0].0.head);
            self.first_labels.insert(run + 1, upper[0].1);
            self.runs.insert(run + 1, upper);
        }
        debug_assert!(self.firsts_match());
        label
    }

    /// Forgets workload `w`, whose UID is `uid` and label `label` (let go of).
    ///
    /// Found by its label first: the labels increase along the runs as the UIDs do (between
    /// respacings every one is in its gap), so two integer searches find it without
    /// comparing UIDs. The UID's search is the fallback should the label not lead to `w`.
    pub fn remove(&mut self, uid: &str, w: WorkloadId, label: u64) {
        let run = self
            .first_labels
            .partition_point(|&l| l <= label)
            .saturating_sub(1);
        if let Some(entries) = self.runs.get(run) {
            let at = entries.partition_point(|e| e.1 < label);
            if entries
                .get(at)
                .is_some_and(|e| e.1 == label && e.0.workload == w)
            {
                self.remove_at(run, at);
                return;
            }
        }
        let key = UidSortKey::new(uid, w);
        let (run, at) = self.locate(&key);
        let Some(entries) = self.runs.get(run) else {
            return;
        };
        if entries.get(at).is_none_or(|e| e.0 != key) {
            return;
        }
        self.remove_at(run, at);
    }

    /// Removes entry `at` of run `run`.
    fn remove_at(&mut self, run: usize, at: usize) {
        let entries = &mut self.runs[run];
        entries.remove(at);
        let left = entries.len();
        if left == 0 {
            self.runs.remove(run);
            self.firsts.remove(run);
            self.first_labels.remove(run);
        } else {
            if at == 0 {
                self.firsts[run] = entries[0].0.head;
                self.first_labels[run] = entries[0].1;
            }
            if left < RUN_MAX / 8
                && let Some(next) = self.runs.get(run + 1)
                && left + next.len() <= RUN_MAX / 2
            {
                // A run left nearly empty joins the next, so that churn leaves no trail of
                // tiny runs (their count is what the first search walks).
                let next = self.runs.remove(run + 1);
                self.firsts.remove(run + 1);
                self.first_labels.remove(run + 1);
                self.runs[run].extend(next);
            }
        }
        debug_assert!(self.firsts_match());
    }

    /// Labels every live workload afresh, evenly spaced in UID order; returns the new labels.
    pub fn respace(&mut self) -> Vec<(WorkloadId, u64)> {
        self.epochs += 1;
        let n = self.runs.iter().map(Vec::len).sum::<usize>() as u64 + 1;
        // Alternate halves of the range, so no label survives a respacing by coincidence.
        let (start, span) = if self.epochs % 2 == 1 {
            (0, u64::MAX / 2)
        } else {
            (u64::MAX / 2 + 1, u64::MAX / 2)
        };
        let step = span / n;
        let fresh = self
            .runs
            .iter_mut()
            .flatten()
            .enumerate()
            .map(|(i, (key, label))| {
                *label = start + step * (i as u64 + 1);
                (key.workload, *label)
            })
            .collect();
        for (first, run) in self.first_labels.iter_mut().zip(&self.runs) {
            *first = run[0].1;
        }
        debug_assert!(self.firsts_match());
        fresh
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Any order of arrivals: labels order exactly as their UIDs do, respacing when a gap is
    /// used up.
    #[test]
    fn labels_order_as_their_uids() {
        let mut labels = UidLabels::default();
        let mut current: BTreeMap<WorkloadId, (String, u64)> = BTreeMap::new();
        // Interleaved namespaces with unpadded counters (job-10 sorts before job-2), a
        // descending run inside one gap, and a repeated UID.
        let mut uids: Vec<String> = Vec::new();
        for i in 0..300 {
            for ns in ["b", "a", "c"] {
                uids.push(format!("{ns}/job-{i}"));
            }
            uids.push(format!("m/down-{:04}", 1000 - i));
        }
        uids.push("a/job-7".into());
        // Past the inline 32 bytes, and zero bytes against padding.
        for t in [
            "z/a-very-long-namespace-name-here/x2",
            "z/a-very-long-namespace-name-here/x1",
        ] {
            uids.push(t.into());
        }
        uids.extend(["y/ab".into(), "y/ab\0".into(), "y/ab\0\0c".into()]);
        let mut respaced = 0;
        for (i, u) in uids.iter().enumerate() {
            let w = WorkloadId::from_index(i);
            match labels.insert(u, w) {
                Some(l) => {
                    current.insert(w, (u.clone(), l));
                }
                None => {
                    respaced += 1;
                    current.insert(w, (u.clone(), 0));
                    for (x, l) in labels.respace() {
                        current.get_mut(&x).expect("live").1 = l;
                    }
                }
            }
            if i % 7 == 3 {
                // Now and then by a label that is not its own: found by its UID then.
                let label = current[&w].1 + u64::from(i % 2 == 0);
                labels.remove(u, w, label);
                current.remove(&w);
            }
        }
        assert!(respaced > 0, "the test reaches used-up gaps");
        let all: Vec<_> = current.iter().collect();
        for (wa, (ua, la)) in &all {
            for (wb, (ub, lb)) in &all {
                assert_eq!(la.cmp(lb), (ua, wa).cmp(&(ub, wb)), "{ua} vs {ub}");
            }
        }
    }

    /// Long churn (arrivals in several increasing streams, most of them let go soon after):
    /// runs split, empty and join, and the labels still order as the UIDs, as an ordered
    /// map of the same entries orders them.
    #[test]
    fn labels_survive_churn_across_runs() {
        let mut labels = UidLabels::default();
        let mut current: BTreeMap<(String, WorkloadId), u64> = BTreeMap::new();
        let mut order: Vec<(String, WorkloadId)> = Vec::new();
        for i in 0..6000usize {
            let u = format!("ns-{}/gen-{}", i % 5, i / 5);
            let w = WorkloadId::from_index(i);
            match labels.insert(&u, w) {
                Some(l) => {
                    current.insert((u.clone(), w), l);
                }
                None => {
                    current.insert((u.clone(), w), 0);
                    let fresh: BTreeMap<WorkloadId, u64> = labels.respace().into_iter().collect();
                    for ((_, x), l) in current.iter_mut() {
                        *l = fresh[x];
                    }
                }
            }
            order.push((u, w));
            // Let go of all but every ninth, a few hundred arrivals later.
            if i >= 300 && (i - 300) % 9 != 0 {
                let (u, w) = order[i - 300].clone();
                let label = current[&(u.clone(), w)];
                labels.remove(&u, w, label);
                current.remove(&(u, w));
            }
        }
        let live: usize = labels.runs.iter().map(Vec::len).sum();
        assert_eq!(live, current.len());
        assert!(
            labels
                .runs
                .iter()
                .all(|r| !r.is_empty() && r.len() <= RUN_MAX)
        );
        let in_uid_order: Vec<u64> = current.values().copied().collect();
        assert!(
            in_uid_order.windows(2).all(|p| p[0] < p[1]),
            "labels follow UID order"
        );
    }

    proptest::proptest! {
        /// Keys order as (UID, workload) do, whether the UIDs fit the inline head or not
        /// (zero bytes against the padding, long UIDs sharing their first 32 bytes).
        #[test]
        fn keys_order_as_their_uids(
            common in "[ab\\x00]{0,36}",
            sa in "[ab\\x00]{0,4}",
            sb in "[ab\\x00]{0,4}",
            wa in 0usize..3,
            wb in 0usize..3,
        ) {
            let (a, b) = (format!("{common}{sa}"), format!("{common}{sb}"));
            let (wa, wb) = (WorkloadId::from_index(wa), WorkloadId::from_index(wb));
            let (ka, kb) = (UidSortKey::new(&a, wa), UidSortKey::new(&b, wb));
            proptest::prop_assert_eq!(ka.cmp(&kb), (&a, wa).cmp(&(&b, wb)));
            proptest::prop_assert_eq!(ka == kb, (&a, wa) == (&b, wb));
        }
    }
}
