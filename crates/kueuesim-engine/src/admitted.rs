//! The workloads holding quota, per ClusterQueue, as preemption candidates.

use kueuesim_model::{ClusterQueueId, WorkloadId};

use crate::preemption::{AdmittedWorkloads, Candidate};
use crate::window::Window;

/// Workloads holding quota, per ClusterQueue, with O(1) insertion and removal.
#[derive(Clone, Debug)]
pub struct AdmittedIndex {
    per_cq: Vec<Vec<Candidate>>,
    /// Per ClusterQueue, (priority, how many of its workloads have it), by priority: the
    /// lowest priority without reading the workloads (`lowest_priority`).
    priorities: Vec<Vec<(i32, u32)>>,
    /// Where each workload is: (ClusterQueue, position).
    pos: Window<(u32, u32)>,
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
        let counts = &mut self.priorities[c.cq.index()];
        match counts.binary_search_by_key(&c.priority, |&(p, _)| p) {
            Ok(i) => counts[i].1 += 1,
            Err(i) => counts.insert(i, (c.priority, 1)),
        }
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
        let counts = &mut self.priorities[cq as usize];
        let at = counts
            .binary_search_by_key(&c.priority, |&(p, _)| p)
            .expect("an admitted workload's priority is counted");
        counts[at].1 -= 1;
        if counts[at].1 == 0 {
            counts.remove(at);
        }
        Some(c)
    }

    /// Whether each ClusterQueue's priority counts are those of its workloads (an invariant
    /// `Simulation::check_invariants` states).
    pub fn check_priorities(&self) -> Result<(), String> {
        for (cq, list) in self.per_cq.iter().enumerate() {
            let mut counts: Vec<(i32, u32)> = Vec::new();
            let mut prios: Vec<i32> = list.iter().map(|c| c.priority).collect();
            prios.sort_unstable();
            for p in prios {
                match counts.last_mut() {
                    Some((q, n)) if *q == p => *n += 1,
                    _ => counts.push((p, 1)),
                }
            }
            if counts != self.priorities[cq] {
                return Err(format!(
                    "ClusterQueue {cq}: priority counts {:?}, its workloads have {counts:?}",
                    self.priorities[cq]
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
        self.priorities[cq.index()].first().map(|&(p, _)| p)
    }

    fn candidate(&self, w: WorkloadId) -> Option<&Candidate> {
        let &(cq, i) = self.pos.get(w.index())?;
        self.per_cq[cq as usize].get(i as usize)
    }
}
