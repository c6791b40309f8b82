//! The workloads holding quota, per ClusterQueue, as preemption candidates.

use kueuesim_model::quota::Fr;
use kueuesim_model::{ClusterQueueId, WorkloadId};

use crate::preemption::{AdmittedWorkloads, Candidate, OwnKey, QuotaByPriority, own_key};
use crate::window::Window;

/// Workloads holding quota, per ClusterQueue, with O(1) insertion and removal.
#[derive(Clone, Debug)]
pub struct AdmittedIndex {
    per_cq: Vec<Vec<Candidate>>,
    /// Per ClusterQueue, the same-queue order key of each workload (`own_key`: not evicted,
    /// priority, most recent reservation first, UID label), at the same positions as
    /// `per_cq`. Invariant (`check_priorities` checks it): `keys[cq][i] ==
    /// own_key(&per_cq[cq][i])`. The own-queue preemption search (`OwnQueueOrder`) scans
    /// these dense keys for its chunk instead of the candidates, and reads a candidate only
    /// when its key would enter the chunk.
    keys: Vec<Vec<OwnKey>>,
    /// Per ClusterQueue, how many of its workloads carry an Admission Fair Sharing usage
    /// (`lq_fs_usage`): the keys give `CandidatesOrdering` only when none does.
    with_fs_usage: Vec<u32>,
    /// The workloads changed through `get_mut` since `refresh_keys`, whose keys (and their
    /// ClusterQueues' `with_fs_usage`) may be stale; `stale_cq` marks those ClusterQueues.
    /// An eviction is made outside the cycle's searches, which read the keys only of a
    /// ClusterQueue without stale ones.
    stale: Vec<WorkloadId>,
    stale_cq: Vec<bool>,
    /// Per ClusterQueue, its workloads by priority (lowest first): how many have each
    /// priority and the quota they hold together, so the lowest priority
    /// (`lowest_priority`) and the quota per priority (`priority_usage`) are read without
    /// reading the workloads.
    priorities: Vec<Vec<Band>>,
    /// Where each workload is: (ClusterQueue, position).
    pos: Window<(u32, u32)>,
}

/// The workloads of one priority in one ClusterQueue.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Band {
    priority: i32,
    count: u32,
    /// The quota they hold, per `Fr` (in first-seen order; amounts may fall to zero).
    usage: Vec<(Fr, i64)>,
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
            keys: vec![Vec::new(); cqs],
            with_fs_usage: vec![0; cqs],
            stale: Vec::new(),
            stale_cq: vec![false; cqs],
            priorities: vec![Vec::new(); cqs],
            pos: Window::default(),
        }
    }

    /// Adds a workload that now holds quota.
    pub fn insert(&mut self, c: Candidate) {
        let w = c.workload.index();
        debug_assert!(self.pos.get(w).is_none(), "workload admitted twice");
        let list = &mut self.per_cq[c.cq.index()];
        self.pos.insert(w, (c.cq.0, list.len() as u32));
        self.keys[c.cq.index()].push(own_key(&c));
        self.with_fs_usage[c.cq.index()] += u32::from(c.lq_fs_usage.is_some());
        let bands = &mut self.priorities[c.cq.index()];
        let at = match bands.binary_search_by_key(&c.priority, |b| b.priority) {
            Ok(i) => i,
            Err(i) => {
                let band = Band {
                    priority: c.priority,
                    count: 0,
                    usage: Vec::new(),
                };
                bands.insert(i, band);
                i
            }
        };
        bands[at].count += 1;
        bands[at].add(&c.usage, 1);
        list.push(c);
    }

    /// Sets every candidate's `lq_fs_usage` (Admission Fair Sharing, once per cycle).
    pub fn set_lq_fs_usage(&mut self, usage: impl Fn(WorkloadId) -> Option<(u32, f64)>) {
        for (list, held) in self.per_cq.iter_mut().zip(&mut self.with_fs_usage) {
            *held = 0;
            for c in list {
                c.lq_fs_usage = usage(c.workload);
                *held += u32::from(c.lq_fs_usage.is_some());
            }
        }
    }

    /// Rewrites every candidate's UID label (`uid_order::UidLabels::respace`).
    pub fn relabel(&mut self, label: impl Fn(WorkloadId) -> u64) {
        for (list, keys) in self.per_cq.iter_mut().zip(&mut self.keys) {
            for (c, k) in list.iter_mut().zip(keys) {
                c.uid_rank = label(c.workload);
                *k = own_key(c);
            }
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
        self.keys[cq as usize].swap_remove(i as usize);
        // Saturating: a candidate changed through `get_mut` may have left its count stale,
        // which `refresh_keys` recomputes.
        let held = &mut self.with_fs_usage[cq as usize];
        *held = held.saturating_sub(u32::from(c.lq_fs_usage.is_some()));
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
        }
        Some(c)
    }

    /// Whether each ClusterQueue's counts and quota per priority are those of its workloads,
    /// and its same-queue order keys and Admission Fair Sharing count too (invariants
    /// `Simulation::check_invariants` states).
    pub fn check_priorities(&self) -> Result<(), String> {
        for (cq, list) in self.per_cq.iter().enumerate() {
            // A candidate changed through `get_mut` has its key refreshed, and its
            // ClusterQueue's count recomputed, before they are read again (`own_keys` gives
            // none until then).
            let stale = |c: &Candidate| self.stale_cq[cq] && self.stale.contains(&c.workload);
            if self.keys[cq].len() != list.len() {
                return Err(format!("ClusterQueue {cq}: keys not one per workload"));
            }
            for (c, k) in list.iter().zip(&self.keys[cq]) {
                if !stale(c) && *k != own_key(c) {
                    return Err(format!(
                        "ClusterQueue {cq}: same-queue order key {k:?} of {:?}, its candidate's is {:?}",
                        c.workload,
                        own_key(c)
                    ));
                }
            }
            let held = list.iter().filter(|c| c.lq_fs_usage.is_some()).count() as u32;
            if !self.stale_cq[cq] && held != self.with_fs_usage[cq] {
                return Err(format!(
                    "ClusterQueue {cq}: {} workloads counted with a fair-sharing usage, {held} have one",
                    self.with_fs_usage[cq]
                ));
            }
            let mut bands: Vec<Band> = Vec::new();
            let mut by_priority: Vec<&Candidate> = list.iter().collect();
            by_priority.sort_by_key(|c| c.priority);
            for c in by_priority {
                if bands.last().is_none_or(|b| b.priority != c.priority) {
                    bands.push(Band {
                        priority: c.priority,
                        count: 0,
                        usage: Vec::new(),
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
        }
        Ok(())
    }

    /// Every workload holding quota, by id.
    pub fn ids_sorted(&self) -> Vec<WorkloadId> {
        let mut ids: Vec<WorkloadId> = self.per_cq.iter().flatten().map(|c| c.workload).collect();
        ids.sort();
        ids
    }

    /// The candidate record of `w`, mutable (an eviction marks it `evicted`). Its order key
    /// may change with it: the ClusterQueue's keys are stale (`own_keys` gives none) until
    /// `refresh_keys`.
    pub fn get_mut(&mut self, w: WorkloadId) -> Option<&mut Candidate> {
        let &(cq, i) = self.pos.get(w.index())?;
        self.stale.push(w);
        self.stale_cq[cq as usize] = true;
        self.per_cq[cq as usize].get_mut(i as usize)
    }

    /// Recomputes the order keys of the candidates changed through `get_mut` since the last
    /// call (once per Kueue cycle, before its searches), and the Admission Fair Sharing
    /// counts of their ClusterQueues.
    pub fn refresh_keys(&mut self) {
        if self.stale.is_empty() {
            return;
        }
        for w in std::mem::take(&mut self.stale) {
            if let Some(&(cq, i)) = self.pos.get(w.index()) {
                let (cq, i) = (cq as usize, i as usize);
                self.keys[cq][i] = own_key(&self.per_cq[cq][i]);
            }
        }
        for (cq, stale) in self.stale_cq.iter_mut().enumerate() {
            if std::mem::take(stale) {
                self.with_fs_usage[cq] = self.per_cq[cq]
                    .iter()
                    .filter(|c| c.lq_fs_usage.is_some())
                    .count() as u32;
            }
        }
    }
}

impl AdmittedWorkloads for AdmittedIndex {
    fn admitted_in(&self, cq: ClusterQueueId) -> &[Candidate] {
        &self.per_cq[cq.index()]
    }

    fn own_keys(&self, cq: ClusterQueueId) -> Option<&[OwnKey]> {
        let cq = cq.index();
        (self.with_fs_usage[cq] == 0 && !self.stale_cq[cq]).then(|| &self.keys[cq][..])
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
}

/// Whether two per-`Fr` lists hold the same amounts, an `Fr` missing from one counting as
/// zero (a band keeps the `Fr`s its departed workloads held, at zero).
fn same_amounts(a: &[(Fr, i64)], b: &[(Fr, i64)]) -> bool {
    let amount = |l: &[(Fr, i64)], fr: Fr| l.iter().filter(|u| u.0 == fr).map(|u| u.1).sum::<i64>();
    a.iter()
        .chain(b)
        .all(|&(fr, _)| amount(a, fr) == amount(b, fr))
}
