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

use std::collections::BTreeMap;
use std::rc::Rc;

use kueuesim_model::WorkloadId;

/// Room left after the last label for a UID beyond every live one.
const APPEND_STEP: u64 = 1 << 40;
/// Room left after a predecessor inside a gap.
const INSERT_STEP: u64 = 1 << 20;

/// A UID as a search key: its first 32 bytes inline (zero-padded, so they order as the
/// strings do, coarsely), the whole string only for a tie there. Finding a new UID's
/// neighbours then rarely leaves the tree's own nodes (a cache miss per string otherwise).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct UidSortKey {
    head: (u128, u128),
    uid: Rc<str>,
    workload: WorkloadId,
}

impl UidSortKey {
    fn new(uid: Rc<str>, workload: WorkloadId) -> Self {
        let mut bytes = [0u8; 32];
        let n = uid.len().min(32);
        bytes[..n].copy_from_slice(&uid.as_bytes()[..n]);
        let (a, b) = bytes.split_at(16);
        let half = |h: &[u8]| u128::from_be_bytes(h.try_into().expect("16 bytes"));
        UidSortKey {
            head: (half(a), half(b)),
            uid,
            workload,
        }
    }
}

/// The labels of the live workloads, by UID.
#[derive(Clone, Debug, Default)]
pub struct UidLabels {
    live: BTreeMap<UidSortKey, u64>,
    /// Respacings so far; each uses other values than the last, so that a label kept from
    /// before one can never pass for a current one (the engine's invariant check sees it).
    epochs: u64,
}

impl UidLabels {
    /// Labels arriving workload `w` with UID `uid`; `None` when its gap is used up (the
    /// workload is registered all the same: `respace` then labels it with the others).
    pub fn insert(&mut self, uid: Rc<str>, w: WorkloadId) -> Option<u64> {
        let at = UidSortKey::new(uid, w);
        let before = self.live.range(..&at).next_back().map(|(_, &l)| l);
        let after = self.live.range(&at..).next().map(|(_, &l)| l);
        let label = match (before, after) {
            (None, None) => Some(u64::MAX / 2),
            (Some(p), None) => p.checked_add(APPEND_STEP),
            (None, Some(s)) => s.checked_sub(APPEND_STEP),
            (Some(p), Some(s)) => Some(p + INSERT_STEP.min((s - p) / 2)).filter(|&l| l > p),
        };
        self.live.insert(at, label.unwrap_or(0));
        label
    }

    /// Forgets workload `w`, whose UID is `uid` (let go of).
    pub fn remove(&mut self, uid: &Rc<str>, w: WorkloadId) {
        self.live.remove(&UidSortKey::new(uid.clone(), w));
    }

    /// Labels every live workload afresh, evenly spaced in UID order; returns the new labels.
    pub fn respace(&mut self) -> Vec<(WorkloadId, u64)> {
        self.epochs += 1;
        let n = self.live.len() as u64 + 1;
        // Alternate halves of the range, so no label survives a respacing by coincidence.
        let (start, span) = if self.epochs % 2 == 1 {
            (0, u64::MAX / 2)
        } else {
            (u64::MAX / 2 + 1, u64::MAX / 2)
        };
        let step = span / n;
        self.live
            .iter_mut()
            .enumerate()
            .map(|(i, (key, label))| {
                *label = start + step * (i as u64 + 1);
                (key.workload, *label)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
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
            match labels.insert(u.as_str().into(), w) {
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
                labels.remove(&u.as_str().into(), w);
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
}
