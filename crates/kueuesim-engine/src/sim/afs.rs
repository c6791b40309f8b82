//! Admission Fair Sharing (`pkg/cache/queue/afs`): each LocalQueue's decayed consumed usage,
//! sampled by the LocalQueue controller and charged on admission.

use std::collections::{BTreeMap, BTreeSet};

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
    /// The LocalQueues of Admission Fair Sharing ClusterQueues that hold or remember some
    /// usage (a value of `consumed` or `admitted` other than +0.0). The periodic sample
    /// decays these alone: an idle LocalQueue's decay keeps its zeros and only moves its
    /// `last_update` to the sample's time, which `since` works out instead. A platform's
    /// thousands of idle LocalQueues cost nothing per sample.
    busy: BTreeSet<usize>,
    /// The time of the last periodic sample (`SimTime::ZERO` before the first).
    last_sample: SimTime,
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
                let mut afs = AfsState {
                    half_life_s: cfg.half_life.as_secs_f64(),
                    sampling_s: cfg.sampling_interval.as_secs_f64(),
                    weights,
                    enabled_cq,
                    consumed,
                    last_update: vec![SimTime::ZERO; world.local_queues.len()],
                    admitted: vec![vec![0.0; n_res]; world.local_queues.len()],
                    lq_name_id,
                    busy: BTreeSet::new(),
                    last_sample: SimTime::ZERO,
                };
                for (i, lq) in world.local_queues.iter().enumerate() {
                    if afs.enabled_cq[lq.cluster_queue.index()] {
                        afs.note(i);
                    }
                }
                Some(afs)
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

    /// Files LocalQueue `lq` (of an Admission Fair Sharing ClusterQueue) in `busy` or out
    /// of it, as its values now are.
    fn note(&mut self, lq: usize) {
        let zero = |v: &Vec<f64>| v.iter().all(|x| x.to_bits() == 0);
        if zero(&self.consumed[lq]) && zero(&self.admitted[lq]) {
            self.busy.remove(&lq);
        } else {
            self.busy.insert(lq);
        }
    }

    /// When `lq`'s usage was last brought up to date: its own `last_update`, or for an idle
    /// LocalQueue the last periodic sample after it, which would have decayed its zeros to
    /// zeros and moved `last_update` there.
    fn since(&self, lq: usize) -> SimTime {
        if self.busy.contains(&lq) {
            self.last_update[lq]
        } else {
            self.last_update[lq].max(self.last_sample)
        }
    }

    /// `CalculateDecayedConsumed` up to `now`.
    fn decay(&mut self, lq: usize, now: SimTime) {
        if self.half_life_s <= 0.0 {
            // `reconcileConsumedUsage` resets the stored usage when there is no half-life.
            self.consumed[lq].iter_mut().for_each(|c| *c = 0.0);
            self.last_update[lq] = now;
            self.note(lq);
            return;
        }
        let dt = (now - self.since(lq)).as_secs_f64().max(0.0);
        let a = self.alpha(dt);
        for (c, u) in self.consumed[lq].iter_mut().zip(&self.admitted[lq]) {
            *c = (1.0 - a) * *c + a * u;
        }
        self.last_update[lq] = now;
        self.note(lq);
    }

    /// `reconcileConsumedUsage` of every LocalQueue of an Admission Fair Sharing ClusterQueue
    /// at `now`: the busy ones decay; an idle one's decay changes only its time, which
    /// `since` reads from `last_sample`.
    fn sample(&mut self, now: SimTime) {
        let busy: Vec<usize> = self.busy.iter().copied().collect();
        for i in busy {
            self.decay(i, now);
        }
        self.last_sample = now;
    }

    /// LocalQueue `lq` is charged `add` (per resource, base units) at `now`: what it holds
    /// grows, its usage decays to `now` and takes the entry penalty.
    fn admit(&mut self, lq: usize, add: &[f64], now: SimTime) {
        for (a, x) in self.admitted[lq].iter_mut().zip(add) {
            *a += x;
        }
        // The decay reads its time as it was while idle (`since`), before it is filed as
        // busy.
        let alpha = self.alpha(self.sampling_s);
        self.decay(lq, now);
        for (c, x) in self.consumed[lq].iter_mut().zip(add) {
            *c += x * alpha;
        }
    }

    /// LocalQueue `lq` holds `sub` less.
    fn release(&mut self, lq: usize, sub: &[f64]) {
        for (a, x) in self.admitted[lq].iter_mut().zip(sub) {
            *a = (*a - x).max(0.0);
        }
        self.note(lq);
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
        debug_assert!(
            afs.busy
                .iter()
                .all(|&i| afs.enabled_cq[world.local_queues[i].cluster_queue.index()])
        );
        afs.sample(now);
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
        afs.admit(lq, &add, now);
    }

    /// The quota of `w` is released: its LocalQueue holds less.
    pub(super) fn afs_release(&mut self, w: WorkloadId, usage: &[(Fr, i64)]) {
        let Some(lq) = self.afs_lq(w) else { return };
        let sub = usage_by_resource(self.world, &self.kueue.tree, usage);
        let afs = self.kueue.afs.as_mut().expect("afs_lq implies afs");
        afs.release(lq, &sub);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Admission Fair Sharing as it was kept before idle LocalQueues were left out of the
    /// periodic sample: every LocalQueue decayed at every sample.
    struct EveryQueue {
        half_life_s: f64,
        sampling_s: f64,
        consumed: Vec<Vec<f64>>,
        last_update: Vec<SimTime>,
        admitted: Vec<Vec<f64>>,
    }

    impl EveryQueue {
        fn alpha(&self, dt_s: f64) -> f64 {
            if self.half_life_s <= 0.0 {
                0.0
            } else {
                1.0 - 0.5f64.powf(dt_s / self.half_life_s)
            }
        }

        fn decay(&mut self, lq: usize, now: SimTime) {
            if self.half_life_s <= 0.0 {
                self.consumed[lq].iter_mut().for_each(|c| *c = 0.0);
                self.last_update[lq] = now;
                return;
            }
            let a = self.alpha((now - self.last_update[lq]).as_secs_f64().max(0.0));
            for (c, u) in self.consumed[lq].iter_mut().zip(&self.admitted[lq]) {
                *c = (1.0 - a) * *c + a * u;
            }
            self.last_update[lq] = now;
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Admit(usize, u8),
        Release(usize, u8),
        Sample,
        Wait(u32),
    }

    fn op(queues: usize) -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            2 => (0..queues, 1u8..8).prop_map(|(q, a)| Op::Admit(q, a)),
            2 => (0..queues, 1u8..8).prop_map(|(q, a)| Op::Release(q, a)),
            2 => Just(Op::Sample),
            3 => (1u32..10_000_000).prop_map(Op::Wait),
        ]
    }

    proptest::proptest! {
        /// Sampling only the busy LocalQueues leaves every LocalQueue's usage, to the bit,
        /// where sampling all of them does: an idle one's zeros stay zeros, and its time is
        /// the last sample's (`AfsState::since`). Half-lives of 0 (no memory), a minute (a
        /// LocalQueue decays back to exact zeros after long waits) and an hour.
        #[test]
        fn sampling_the_busy_queues_is_sampling_them_all(
            half_life_s in proptest::sample::select(vec![0.0, 60.0, 3600.0]),
            ops in proptest::collection::vec(op(6), 1..80),
        ) {
            let (n, resources) = (6, 2);
            let mut consumed = vec![vec![0.0; resources]; n];
            consumed[4] = vec![3.0, 0.5];
            let mut busy = AfsState {
                half_life_s,
                sampling_s: 300.0,
                weights: vec![1.0; resources],
                enabled_cq: vec![true],
                consumed: consumed.clone(),
                last_update: vec![SimTime::ZERO; n],
                admitted: vec![vec![0.0; resources]; n],
                lq_name_id: (0..n as u32).collect(),
                busy: BTreeSet::new(),
                last_sample: SimTime::ZERO,
            };
            for i in 0..n {
                busy.note(i);
            }
            let mut all = EveryQueue {
                half_life_s,
                sampling_s: 300.0,
                consumed,
                last_update: vec![SimTime::ZERO; n],
                admitted: vec![vec![0.0; resources]; n],
            };
            let mut now = SimTime::ZERO;
            for op in ops {
                match op {
                    Op::Admit(q, a) => {
                        let add = [f64::from(a), f64::from(a) / 4.0];
                        busy.admit(q, &add, now);
                        for (x, y) in all.admitted[q].iter_mut().zip(&add) {
                            *x += y;
                        }
                        let alpha = all.alpha(all.sampling_s);
                        all.decay(q, now);
                        for (c, y) in all.consumed[q].iter_mut().zip(&add) {
                            *c += y * alpha;
                        }
                    }
                    Op::Release(q, a) => {
                        let sub = [f64::from(a), f64::from(a) / 4.0];
                        busy.release(q, &sub);
                        for (x, y) in all.admitted[q].iter_mut().zip(&sub) {
                            *x = (*x - y).max(0.0);
                        }
                    }
                    Op::Sample => {
                        busy.sample(now);
                        for q in 0..n {
                            all.decay(q, now);
                        }
                    }
                    Op::Wait(ms) => now += SimDuration::from_millis(i64::from(ms)),
                }
                for q in 0..n {
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    proptest::prop_assert_eq!(bits(&busy.consumed[q]), bits(&all.consumed[q]));
                    proptest::prop_assert_eq!(
                        busy.usage(q, 1000).to_bits(),
                        all.consumed[q].iter().sum::<f64>().to_bits()
                    );
                }
            }
        }
    }
}
