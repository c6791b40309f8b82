//! Admission Fair Sharing (`pkg/cache/queue/afs`): each LocalQueue's decayed consumed usage,
//! sampled by the LocalQueue controller and charged on admission.

use std::collections::BTreeMap;

use kueuesim_model::quota::{Fr, QuotaTree};
use kueuesim_model::{QueueRef, ResourceId, SimDuration, SimTime, WorkloadId, World};

use crate::event_queue::EventQueue;

use super::{Ev, Simulation};

/// Admission Fair Sharing state (`pkg/cache/queue/afs`): per LocalQueue a decayed consumed
/// usage, in base units (cores, bytes, GPUs), and the usage its admitted workloads hold now.
#[derive(Clone, Debug)]
pub(super) struct AfsState {
    half_life_s: f64,
    sampling_s: f64,
    /// `resourceWeights` per resource (1 when not configured).
    weights: Vec<f64>,
    /// Whether each ClusterQueue uses it (`admissionScope`).
    pub(super) enabled_cq: Vec<bool>,
    consumed: Vec<Vec<f64>>,
    last_update: Vec<SimTime>,
    admitted: Vec<Vec<f64>>,
    /// Per LocalQueue, an id of its name: preemption compares LocalQueues by
    /// `spec.queueName` alone.
    pub(super) lq_name_id: Vec<u32>,
}

impl AfsState {
    /// The state at the start of the run, when some ClusterQueue uses Admission Fair Sharing;
    /// queues its first `usageSamplingInterval` sample.
    pub(super) fn new(world: &World, events: &mut EventQueue<Ev>) -> Option<Self> {
        world
            .config
            .kueue
            .admission_fair_sharing
            .as_ref()
            .and_then(|cfg| {
                let enabled_cq: Vec<bool> = world
                    .cluster_queues
                    .iter()
                    .map(|cq| cq.admission_fair_sharing)
                    .collect();
                if !enabled_cq.iter().any(|e| *e) {
                    return None;
                }
                let n_res = world.resources.len();
                let mut weights = vec![1.0; n_res];
                for &(r, w) in &cfg.resource_weights_milli {
                    weights[r.index()] = w as f64 / 1000.0;
                }
                let consumed = world
                    .local_queues
                    .iter()
                    .map(|lq| {
                        let mut c = vec![0.0; n_res];
                        for &(r, a) in &lq.afs_consumed {
                            c[r.index()] = base_units(world, r, a);
                        }
                        c
                    })
                    .collect();
                events.push(SimTime::ZERO + cfg.sampling_interval, Ev::AfsSample);
                let mut names: BTreeMap<&str, u32> = BTreeMap::new();
                let lq_name_id = world
                    .local_queues
                    .iter()
                    .map(|lq| {
                        let next = names.len() as u32;
                        *names.entry(lq.name.as_str()).or_insert(next)
                    })
                    .collect();
                Some(AfsState {
                    half_life_s: cfg.half_life.as_secs_f64(),
                    sampling_s: cfg.sampling_interval.as_secs_f64(),
                    weights,
                    enabled_cq,
                    consumed,
                    last_update: vec![SimTime::ZERO; world.local_queues.len()],
                    admitted: vec![vec![0.0; n_res]; world.local_queues.len()],
                    lq_name_id,
                })
            })
    }

    /// `α(Δt) = 1 − 0.5^(Δt / halfLife)`; with no half-life usage is replaced at once.
    fn alpha(&self, dt_s: f64) -> f64 {
        // `calculateAlphaRate`: no half-life, no memory (and no entry penalty).
        if self.half_life_s <= 0.0 {
            0.0
        } else {
            1.0 - 0.5f64.powf(dt_s / self.half_life_s)
        }
    }

    /// `CalculateDecayedConsumed` up to `now`.
    fn decay(&mut self, lq: usize, now: SimTime) {
        if self.half_life_s <= 0.0 {
            // `reconcileConsumedUsage` resets the stored usage when there is no half-life.
            self.consumed[lq].iter_mut().for_each(|c| *c = 0.0);
            self.last_update[lq] = now;
            return;
        }
        let dt = (now - self.last_update[lq]).as_secs_f64().max(0.0);
        let a = self.alpha(dt);
        for (c, u) in self.consumed[lq].iter_mut().zip(&self.admitted[lq]) {
            *c = (1.0 - a) * *c + a * u;
        }
        self.last_update[lq] = now;
    }

    /// `CalculateUsage`: weighted consumed usage over the LocalQueue's weight; weight 0 is
    /// always last.
    pub(super) fn usage(&self, lq: usize, weight_milli: i64) -> f64 {
        if weight_milli <= 0 {
            return f64::INFINITY;
        }
        let total: f64 = self.consumed[lq]
            .iter()
            .zip(&self.weights)
            .map(|(c, w)| c * w)
            .sum();
        total / (weight_milli as f64 / 1000.0)
    }
}

/// An amount in Kueue units as Admission Fair Sharing counts it: base units, so cores for
/// cpu (Kueue keeps millicores) and the amount itself for everything else.
fn base_units(world: &World, r: ResourceId, amount: i64) -> f64 {
    if world.resources.name(r) == "cpu" {
        amount as f64 / 1000.0
    } else {
        amount as f64
    }
}

impl<'w> Simulation<'w> {
    /// The LocalQueue controller's periodic `reconcileConsumedUsage`: every LocalQueue of an
    /// Admission Fair Sharing ClusterQueue decays its consumed usage towards what it holds.
    /// Sampling goes on only while something else is still to happen.
    pub(super) fn afs_sample(&mut self) {
        self.progress.idle = true;
        let world = self.world;
        let now = self.now;
        let Some(afs) = &mut self.kueue.afs else {
            return;
        };
        for (i, lq) in world.local_queues.iter().enumerate() {
            if afs.enabled_cq[lq.cluster_queue.index()] {
                afs.decay(i, now);
            }
        }
        if !self.events.is_empty() {
            let next = now + SimDuration::from_millis((afs.sampling_s * 1000.0) as i64);
            self.events.push(next, Ev::AfsSample);
        }
    }

    /// Admission Fair Sharing at admission: the entry penalty (`requests × α(sampling
    /// interval)`, `CalculateEntryPenalty`) is pushed, and on `Admitted` folded into the
    /// decayed usage (`updateAfsConsumedUsage`).
    pub(super) fn afs_admit(&mut self, w: WorkloadId, usage: &[(Fr, i64)]) {
        let Some(lq) = self.afs_lq(w) else { return };
        let add = usage_by_resource(self.world, &self.kueue.tree, usage);
        let now = self.now;
        let afs = self.kueue.afs.as_mut().expect("afs_lq implies afs");
        for (a, x) in afs.admitted[lq].iter_mut().zip(&add) {
            *a += x;
        }
        let alpha = afs.alpha(afs.sampling_s);
        afs.decay(lq, now);
        for (c, x) in afs.consumed[lq].iter_mut().zip(&add) {
            *c += x * alpha;
        }
    }

    /// The quota of `w` is released: its LocalQueue holds less.
    pub(super) fn afs_release(&mut self, w: WorkloadId, usage: &[(Fr, i64)]) {
        let Some(lq) = self.afs_lq(w) else { return };
        let sub = usage_by_resource(self.world, &self.kueue.tree, usage);
        let afs = self.kueue.afs.as_mut().expect("afs_lq implies afs");
        for (a, x) in afs.admitted[lq].iter_mut().zip(&sub) {
            *a = (*a - x).max(0.0);
        }
    }

    fn afs_lq(&self, w: WorkloadId) -> Option<usize> {
        let afs = self.kueue.afs.as_ref()?;
        let QueueRef::Local(lq) = &self.spec(w).queue else {
            return None;
        };
        afs.enabled_cq[self.world.local_queue(*lq).cluster_queue.index()].then(|| lq.index())
    }
}

/// A workload's quota usage per resource in base units, flavors flattened.
fn usage_by_resource(world: &World, tree: &QuotaTree, usage: &[(Fr, i64)]) -> Vec<f64> {
    let mut out = vec![0.0; world.resources.len()];
    for &(fr, a) in usage {
        let (_, r) = tree.split(fr);
        out[r.index()] += base_units(world, r, a);
    }
    out
}
