//! The workloads holding quota, per ClusterQueue, as preemption candidates.

use kueuesim_model::quota::Fr;
use kueuesim_model::{ClusterQueueId, WorkloadId};

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
        for c in self.per_cq.iter_mut().flatten() {
            c.lq_fs_usage = usage(c.workload);
        }
    }

    /// Rewrites every candidate's UID label (`uid_order::UidLabels::respace`).
    pub fn relabel(&mut self, label: impl Fn(WorkloadId) -> u64) {
        for c in self.per_cq.iter_mut().flatten() {
            c.uid_rank = label(c.workload);
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

    /// The candidate record of `w`, mutable.
    pub fn get_mut(&mut self, w: WorkloadId) -> Option<&mut Candidate> {
        let &(cq, i) = self.pos.get(w.index())?;
        self.per_cq[cq as usize].get_mut(i as usize)
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
}

/// Whether two per-`Fr` lists hold the same amounts, an `Fr` missing from one counting as
/// zero (a band keeps the `Fr`s its departed workloads held, at zero).
fn same_amounts(a: &[(Fr, i64)], b: &[(Fr, i64)]) -> bool {
    let amount = |l: &[(Fr, i64)], fr: Fr| l.iter().filter(|u| u.0 == fr).map(|u| u.1).sum::<i64>();
    a.iter()
        .chain(b)
        .all(|&(fr, _)| amount(a, fr) == amount(b, fr))
}
