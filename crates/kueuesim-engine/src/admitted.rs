//! The workloads holding quota, per ClusterQueue, as preemption candidates.

use kueuesim_model::{ClusterQueueId, WorkloadId};

use crate::preemption::{AdmittedWorkloads, Candidate};
use crate::window::Window;

/// Workloads holding quota, per ClusterQueue, with O(1) insertion and removal.
#[derive(Clone, Debug)]
pub struct AdmittedIndex {
    per_cq: Vec<Vec<Candidate>>,
    /// Where each workload is: (ClusterQueue, position).
    pos: Window<(u32, u32)>,
}

impl AdmittedIndex {
    /// Empty, for `cqs` ClusterQueues.
    pub fn new(cqs: usize) -> Self {
        AdmittedIndex {
            per_cq: vec![Vec::new(); cqs],
            pos: Window::default(),
        }
    }

    /// Adds a workload that now holds quota.
    pub fn insert(&mut self, c: Candidate) {
        let w = c.workload.index();
        debug_assert!(self.pos.get(w).is_none(), "workload admitted twice");
        let list = &mut self.per_cq[c.cq.index()];
        self.pos.insert(w, (c.cq.0, list.len() as u32));
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
        Some(c)
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

    fn candidate(&self, w: WorkloadId) -> Option<&Candidate> {
        let &(cq, i) = self.pos.get(w.index())?;
        self.per_cq[cq as usize].get(i as usize)
    }
}
