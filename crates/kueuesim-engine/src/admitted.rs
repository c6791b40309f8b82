//! The workloads holding quota, per ClusterQueue, as preemption candidates.

use std::cmp::Reverse;

use kueuesim_model::quota::Fr;
use kueuesim_model::{ClusterQueueId, SimTime, WorkloadId};

use crate::preemption::{AdmittedWorkloads, Candidate, QuotaByPriority};
use crate::window::Window;

/// Workloads holding quota, per ClusterQueue, with O(1) insertion and removal.
#[derive(Clone, Debug)]
pub struct AdmittedIndex {
    per_cq: Vec<Vec<Candidate>>,
    /// Per ClusterQueue, its workloads by priority (lowest first): how many have each
    /// priority and the quota they hold together, so the lowest priority
    /// (`lowest_priority`) and the quota per priority (`priority_usage`) are read without
    /// reading the workloads.
    priorities: Vec<Vec<Band>>,
    /// Per ClusterQueue, its evicted workloads still holding quota (any order): the first in
    /// `CandidatesOrdering`, whatever their priority (`mark_evicted`).
    evicted: Vec<Vec<WorkloadId>>,
    /// Whether any candidate ever had an Admission Fair Sharing usage (`lq_fs_usage`): the
    /// own-queue order (`own_order`) is then not given, as `CandidatesOrdering` compares
    /// those usages first.
    fs_usage_seen: bool,
    /// Where each workload is: (ClusterQueue, position).
    pos: Window<(u32, u32)>,
}

/// The workloads of one priority in one ClusterQueue.
#[derive(Clone, Debug)]
pub struct Band {
    priority: i32,
    count: u32,
    /// The quota they hold, per `Fr` (in first-seen order; amounts may fall to zero).
    usage: Vec<(Fr, i64)>,
    /// Its workloads in the order of their reservations, oldest first, the UID label
    /// descending among equal times (`member_key` ascending): read from the back, the
    /// order `CandidatesOrdering` gives workloads of one ClusterQueue and priority that
    /// are not evicted (most recently reserved first, then UID). Admissions come in time
    /// order, so an insertion is nearly always a push; a removal marks its member `DEAD`
    /// (found by binary search) rather than shifting the rest, and the dead are swept out
    /// once they are as many as the living.
    members: Vec<Member>,
    /// How many of `members` are `DEAD`.
    dead: u32,
}

/// A workload of a band (`Band::members`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// `member_key` of its reservation time and UID label.
    key: u128,
    /// The workload's index, or `DEAD` once it released its quota.
    workload: u32,
}

/// A removed member's `workload`.
const DEAD: u32 = u32::MAX;

/// The order of `Band::members`, packed into one integer that compares as
/// `(reserved_at, Reverse(uid_rank))` does: the time with its sign bit flipped above the
/// label with every bit flipped (a removal's binary search compares it some ten times).
fn member_key(reserved_at: SimTime, uid_rank: u64) -> u128 {
    (u128::from((reserved_at.0 as u64) ^ (1 << 63)) << 64) | u128::from(!uid_rank)
}

/// `member_key` with the UID label replaced (`AdmittedIndex::relabel`).
fn relabelled(key: u128, uid_rank: u64) -> u128 {
    (key & !u128::from(u64::MAX)) | u128::from(!uid_rank)
}

impl Band {
    /// Its priority.
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// How many members it has, the dead included: read from `member(len - 1)` down to
    /// `member(0)`, most recently reserved first.
    pub fn members_len(&self) -> usize {
        self.members.len()
    }

    /// Its `i`-th member's workload, None if dead.
    #[inline]
    pub fn member(&self, i: usize) -> Option<WorkloadId> {
        let w = self.members[i].workload;
        (w != DEAD).then(|| WorkloadId::from_index(w as usize))
    }

    /// Files workload `c` among the members.
    fn add_member(&mut self, c: &Candidate) {
        let m = Member {
            key: member_key(c.reserved_at, c.uid_rank),
            workload: c.workload.index() as u32,
        };
        if self.members.last().is_none_or(|l| l.key <= m.key) {
            self.members.push(m);
        } else {
            let at = self.members.partition_point(|x| x.key <= m.key);
            self.members.insert(at, m);
        }
    }

    /// Marks workload `c`'s member dead, and sweeps the dead out once they are half.
    fn remove_member(&mut self, c: &Candidate) {
        let key = member_key(c.reserved_at, c.uid_rank);
        let w = c.workload.index() as u32;
        let from = self.members.partition_point(|x| x.key < key);
        let at = self.members[from..]
            .iter()
            .position(|x| x.workload == w)
            .map(|i| from + i)
            .expect("an admitted workload is a member of its band");
        debug_assert_eq!(self.members[at].key, key, "member found past its key");
        self.members[at].workload = DEAD;
        self.dead += 1;
        if self.dead as usize * 2 > self.members.len() {
            self.members.retain(|x| x.workload != DEAD);
            self.dead = 0;
        }
    }
}

/// The own-queue order of one ClusterQueue as the index keeps it (`AdmittedIndex::own_order`).
#[derive(Clone, Copy)]
pub struct OwnOrder<'a> {
    /// Its evicted workloads, any order.
    pub evicted: &'a [WorkloadId],
    /// Its priority bands, lowest first.
    pub bands: &'a [Band],
}

impl Band {
    fn add(&mut self, usage: &[(Fr, i64)], sign: i64) {
        for &(fr, amount) in usage {
            match self.usage.iter_mut().find(|u| u.0 == fr) {
                Some(u) => u.1 += sign * amount,
                None => self.usage.push((fr, sign * amount)),
            }
        }
    }
}

impl AdmittedIndex {
    /// Empty, for `cqs` ClusterQueues.
    pub fn new(cqs: usize) -> Self {
        AdmittedIndex {
            per_cq: vec![Vec::new(); cqs],
            priorities: vec![Vec::new(); cqs],
            evicted: vec![Vec::new(); cqs],
            fs_usage_seen: false,
            pos: Window::default(),
        }
    }

    /// Adds a workload that now holds quota.
    pub fn insert(&mut self, c: Candidate) {
        let w = c.workload.index();
        debug_assert!(self.pos.get(w).is_none(), "workload admitted twice");
        let list = &mut self.per_cq[c.cq.index()];
        self.pos.insert(w, (c.cq.0, list.len() as u32));
        let bands = &mut self.priorities[c.cq.index()];
        let at = match bands.binary_search_by_key(&c.priority, |b| b.priority) {
            Ok(i) => i,
            Err(i) => {
                let band = Band {
                    priority: c.priority,
                    count: 0,
                    usage: Vec::new(),
                    members: Vec::new(),
                    dead: 0,
                };
                bands.insert(i, band);
                i
            }
        };
        bands[at].count += 1;
        bands[at].add(&c.usage, 1);
        bands[at].add_member(&c);
        if c.evicted {
            self.evicted[c.cq.index()].push(c.workload);
        }
        self.fs_usage_seen |= c.lq_fs_usage.is_some();
        list.push(c);
    }

    /// Sets every candidate's `lq_fs_usage` (Admission Fair Sharing, once per cycle).
    pub fn set_lq_fs_usage(&mut self, usage: impl Fn(WorkloadId) -> Option<(u32, f64)>) {
        for c in self.per_cq.iter_mut().flatten() {
            c.lq_fs_usage = usage(c.workload);
            self.fs_usage_seen |= c.lq_fs_usage.is_some();
        }
    }

    /// Rewrites every candidate's UID label (`uid_order::UidLabels::respace`).
    pub fn relabel(&mut self, label: impl Fn(WorkloadId) -> u64) {
        for c in self.per_cq.iter_mut().flatten() {
            c.uid_rank = label(c.workload);
        }
        // The members' labels follow, and their order with them (rare: a respacing).
        for band in self.priorities.iter_mut().flatten() {
            band.members.retain(|m| m.workload != DEAD);
            band.dead = 0;
            for m in &mut band.members {
                m.key = relabelled(m.key, label(WorkloadId::from_index(m.workload as usize)));
            }
            band.members.sort_by_key(|m| m.key);
        }
    }

    /// Every candidate, for the engine's invariant check.
    pub fn all(&self) -> impl Iterator<Item = &Candidate> {
        self.per_cq.iter().flatten()
    }

    /// Removes a workload that released its quota.
    pub fn remove(&mut self, w: WorkloadId) -> Option<Candidate> {
        let (cq, i) = self.pos.remove(w.index())?;
        let list = &mut self.per_cq[cq as usize];
        let c = list.swap_remove(i as usize);
        if let Some(moved) = list.get(i as usize) {
            self.pos.insert(moved.workload.index(), (cq, i));
        }
        let bands = &mut self.priorities[cq as usize];
        let at = bands
            .binary_search_by_key(&c.priority, |b| b.priority)
            .expect("an admitted workload's priority is counted");
        bands[at].count -= 1;
        if bands[at].count == 0 {
            bands.remove(at);
        } else {
            bands[at].add(&c.usage, -1);
            bands[at].remove_member(&c);
        }
        if c.evicted {
            let evicted = &mut self.evicted[cq as usize];
            let i = evicted
                .iter()
                .position(|&x| x == c.workload)
                .expect("an evicted workload is listed");
            evicted.swap_remove(i);
        }
        Some(c)
    }

    /// Whether each ClusterQueue's counts and quota per priority are those of its workloads
    /// (an invariant `Simulation::check_invariants` states).
    pub fn check_priorities(&self) -> Result<(), String> {
        for (cq, list) in self.per_cq.iter().enumerate() {
            let mut bands: Vec<Band> = Vec::new();
            let mut by_priority: Vec<&Candidate> = list.iter().collect();
            by_priority.sort_by_key(|c| c.priority);
            for c in by_priority {
                if bands.last().is_none_or(|b| b.priority != c.priority) {
                    bands.push(Band {
                        priority: c.priority,
                        count: 0,
                        usage: Vec::new(),
                        members: Vec::new(),
                        dead: 0,
                    });
                }
                let band = bands.last_mut().expect("pushed");
                band.count += 1;
                band.add(&c.usage, 1);
            }
            let kept = &self.priorities[cq];
            let same = bands.len() == kept.len()
                && bands.iter().zip(kept).all(|(b, k)| {
                    b.priority == k.priority
                        && b.count == k.count
                        && same_amounts(&b.usage, &k.usage)
                });
            if !same {
                return Err(format!(
                    "ClusterQueue {cq}: quota by priority {kept:?}, its workloads have {bands:?}"
                ));
            }
            // Each band's members: its workloads, newest first as `CandidatesOrdering` reads
            // them, with as many dead as counted.
            for band in kept {
                let mut expected: Vec<&Candidate> = list
                    .iter()
                    .filter(|c| c.priority == band.priority)
                    .collect();
                expected.sort_by_key(|c| Reverse(member_key(c.reserved_at, c.uid_rank)));
                let members: Vec<Member> = band
                    .members
                    .iter()
                    .rev()
                    .filter(|m| m.workload != DEAD)
                    .copied()
                    .collect();
                let same = members.len() == expected.len()
                    && members.iter().zip(&expected).all(|(m, c)| {
                        m.workload as usize == c.workload.index()
                            && m.key == member_key(c.reserved_at, c.uid_rank)
                    })
                    && band.members.windows(2).all(|w| w[0].key <= w[1].key)
                    && band.members.iter().filter(|m| m.workload == DEAD).count()
                        == band.dead as usize;
                if !same {
                    return Err(format!(
                        "ClusterQueue {cq}, priority {}: members {:?}, its workloads are {:?}",
                        band.priority,
                        band.members,
                        expected.iter().map(|c| c.workload).collect::<Vec<_>>()
                    ));
                }
            }
            let mut evicted: Vec<WorkloadId> = list
                .iter()
                .filter(|c| c.evicted)
                .map(|c| c.workload)
                .collect();
            let mut listed = self.evicted[cq].clone();
            evicted.sort();
            listed.sort();
            if evicted != listed {
                return Err(format!(
                    "ClusterQueue {cq}: evicted {listed:?}, its workloads have {evicted:?}"
                ));
            }
            if !self.fs_usage_seen && list.iter().any(|c| c.lq_fs_usage.is_some()) {
                return Err(format!(
                    "ClusterQueue {cq}: a Fair Sharing usage the index has not seen"
                ));
            }
        }
        Ok(())
    }

    /// Every workload holding quota, by id.
    pub fn ids_sorted(&self) -> Vec<WorkloadId> {
        let mut ids: Vec<WorkloadId> = self.per_cq.iter().flatten().map(|c| c.workload).collect();
        ids.sort();
        ids
    }

    /// Marks `w` evicted (it holds quota until its pods are gone) and returns its
    /// ClusterQueue; None if it holds no quota.
    pub fn mark_evicted(&mut self, w: WorkloadId) -> Option<ClusterQueueId> {
        let &(cq, i) = self.pos.get(w.index())?;
        let c = &mut self.per_cq[cq as usize][i as usize];
        if !c.evicted {
            c.evicted = true;
            self.evicted[cq as usize].push(w);
        }
        Some(c.cq)
    }
}

impl AdmittedWorkloads for AdmittedIndex {
    fn admitted_in(&self, cq: ClusterQueueId) -> &[Candidate] {
        &self.per_cq[cq.index()]
    }

    fn lowest_priority(&self, cq: ClusterQueueId) -> Option<i32> {
        self.priorities[cq.index()].first().map(|b| b.priority)
    }

    fn priority_usage(&self, cq: ClusterQueueId, f: &mut QuotaByPriority<'_>) {
        for b in &self.priorities[cq.index()] {
            f(b.priority, &b.usage);
        }
    }

    fn candidate(&self, w: WorkloadId) -> Option<&Candidate> {
        let &(cq, i) = self.pos.get(w.index())?;
        self.per_cq[cq as usize].get(i as usize)
    }

    fn own_order(&self, cq: ClusterQueueId) -> Option<OwnOrder<'_>> {
        (!self.fs_usage_seen).then(|| OwnOrder {
            evicted: &self.evicted[cq.index()],
            bands: &self.priorities[cq.index()],
        })
    }
}

/// Whether two per-`Fr` lists hold the same amounts, an `Fr` missing from one counting as
/// zero (a band keeps the `Fr`s its departed workloads held, at zero).
fn same_amounts(a: &[(Fr, i64)], b: &[(Fr, i64)]) -> bool {
    let amount = |l: &[(Fr, i64)], fr: Fr| l.iter().filter(|u| u.0 == fr).map(|u| u.1).sum::<i64>();
    a.iter()
        .chain(b)
        .all(|&(fr, _)| amount(a, fr) == amount(b, fr))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Workload `w` of ClusterQueue `w % 2`, holding one `Fr`, labelled `w` (labels unique).
    fn candidate(w: usize, priority: i32, reserved_at: i64) -> Candidate {
        Candidate {
            workload: WorkloadId::from_index(w),
            cq: ClusterQueueId::from_index(w % 2),
            priority,
            timestamp: SimTime(0),
            reserved_at: SimTime(reserved_at),
            evicted: false,
            uid_rank: w as u64,
            lq_fs_usage: None,
            usage: vec![(Fr(0), 1 + w as i64)],
        }
    }

    proptest! {
        /// `member_key` orders as `(reserved_at, Reverse(uid_rank))`, extremes included, and
        /// `relabelled` is the key of the new label.
        #[test]
        fn member_key_orders_as_the_tuple(
            a in (prop_oneof![-2i64..3, Just(i64::MIN), Just(i64::MAX)], prop_oneof![0u64..3, Just(u64::MAX)]),
            b in (prop_oneof![-2i64..3, Just(i64::MIN), Just(i64::MAX)], prop_oneof![0u64..3, Just(u64::MAX)]),
        ) {
            let key = |(t, u): (i64, u64)| member_key(SimTime(t), u);
            prop_assert_eq!(key(a).cmp(&key(b)), (SimTime(a.0), Reverse(a.1)).cmp(&(SimTime(b.0), Reverse(b.1))));
            prop_assert_eq!(relabelled(key(a), b.1), key((a.0, b.1)));
        }

        /// The bands' members (reservation order, the dead counted), the evicted lists and
        /// the quota per priority stay what a recomputation from the workloads gives
        /// (`check_priorities`) through admissions, evictions and releases in any order, with
        /// reservation times that tie and arrive out of order, and through a relabelling
        /// that reverses the UID order.
        #[test]
        fn kept_order_equals_a_recomputation(
            ops in prop::collection::vec((0u8..4, 0usize..24, 0i32..3, 0i64..6), 1..150),
        ) {
            let mut index = AdmittedIndex::new(2);
            for (op, w, priority, t) in ops {
                let id = WorkloadId::from_index(w);
                match op {
                    0 | 1 => {
                        if index.candidate(id).is_none() {
                            index.insert(candidate(w, priority, t));
                        }
                    }
                    2 => {
                        index.mark_evicted(id);
                    }
                    _ => {
                        index.remove(id);
                    }
                }
                prop_assert_eq!(index.check_priorities(), Ok(()));
            }
            index.relabel(|w| 1000 - w.index() as u64);
            prop_assert_eq!(index.check_priorities(), Ok(()));
            for w in index.ids_sorted() {
                index.remove(w);
                prop_assert_eq!(index.check_priorities(), Ok(()));
            }
        }
    }
}
