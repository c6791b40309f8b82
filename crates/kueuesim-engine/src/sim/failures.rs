//! Random failures (`Simulation` `spec.failures`): each node, and each GPU, fails after a
//! time drawn from its time-between-failures distribution and comes back after a repair
//! time, from a random stream of its own seeded by the run's seed (so the same seed fails the
//! same nodes at the same times, whatever else the run does).
//!
//! The next failure or repair of every node and GPU waits in one ordered set (`FailureClock`);
//! the event queue holds only the earliest (`Ev::Failure`), so thousands of nodes cost one
//! entry in the heap, not one each.

use std::collections::BTreeSet;

use kueuesim_model::{DurationDist, NodeId, SimDuration, SimTime, WorkloadId, World};

use super::pod_loss::Loss;
use super::{Ev, Simulation};

/// xoshiro256** (Blackman and Vigna), seeded through splitmix64: the failures' own stream.
#[derive(Clone, Debug)]
pub(super) struct Rng([u64; 4]);

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng([next(), next(), next(), next()])
    }

    fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [lo, hi].
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo) as u64 + 1;
        lo + ((u128::from(self.next_u64()) * u128::from(span)) >> 64) as i64
    }

    /// One draw of `d`, in whole milliseconds, at least 1 ms for a time between failures
    /// (`at_least`), and at most ten years.
    pub(super) fn draw(&mut self, d: &DurationDist, at_least: i64) -> SimDuration {
        let ms = match d {
            DurationDist::Exponential { mean_ms } => {
                (-mean_ms * (1.0 - self.unit()).ln()).round() as i64
            }
            DurationDist::Fixed(v) => *v,
            DurationDist::Uniform { min, max } => self.range(*min, *max),
            DurationDist::LogNormal {
                mu,
                sigma,
                min,
                max,
            } => {
                let u1 = 1.0 - self.unit();
                let u2 = self.unit();
                let n = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let v = (mu + sigma * n).exp().round();
                if v >= *max as f64 {
                    *max
                } else {
                    (v as i64).max(*min)
                }
            }
            DurationDist::Empirical(values) => {
                values[self.range(0, values.len() as i64 - 1) as usize]
            }
        };
        SimDuration::from_millis(ms.clamp(at_least, kueuesim_model::limits::MAX_DURATION.millis()))
    }
}

/// What happens to a node or a GPU next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Next {
    /// A node of set `set` fails.
    NodeFails { node: NodeId, set: u32 },
    /// A node of set `set` is repaired.
    NodeRepaired { node: NodeId, set: u32 },
    /// GPU `device` of a node of set `set` fails.
    GpuFails { node: NodeId, device: u32, set: u32 },
    /// GPU `device` is repaired.
    GpuRepaired { node: NodeId, device: u32, set: u32 },
}

/// The failures' state: the next failure or repair of everything that fails, its stream,
/// and which GPUs are down.
#[derive(Clone, Debug)]
pub(super) struct FailureClock {
    rng: Rng,
    /// (when, sequence, what): the sequence keeps equal times in the order they were drawn.
    due: BTreeSet<(SimTime, u64, Next)>,
    seq: u64,
    /// The time `Ev::Failure` is queued for, if one is.
    queued: Option<SimTime>,
    /// Per node, its failed GPUs' device numbers.
    pub(super) down_devices: Vec<Vec<u32>>,
}

impl FailureClock {
    /// Draws every node's and GPU's first failure, in node order then device order, from the
    /// run's seed.
    pub(super) fn new(world: &World) -> Self {
        let cfg = &world.config.failures;
        // The failures' own stream: the seed mixed with a constant of their own, so other
        // seeded streams (placement tie-breaks, generators) never share its draws.
        let mut clock = FailureClock {
            rng: Rng::new(world.config.seed ^ 0x6661_696c_7572_6573),
            due: BTreeSet::new(),
            seq: 0,
            queued: None,
            down_devices: vec![Vec::new(); world.nodes.len()],
        };
        let gpu = world.resources.lookup(kueuesim_model::resources::GPU);
        for (s, set) in cfg.nodes.iter().enumerate() {
            for &node in &set.nodes {
                let at = SimTime::ZERO + clock.rng.draw(&set.mtbf, 1);
                clock.add(
                    at,
                    Next::NodeFails {
                        node,
                        set: s as u32,
                    },
                );
            }
        }
        for (s, set) in cfg.gpus.iter().enumerate() {
            for &node in &set.nodes {
                let n = gpu.map_or(0, |g| {
                    world
                        .node(node)
                        .allocatable
                        .get(g.index())
                        .copied()
                        .unwrap_or(0)
                });
                for device in 0..n.max(0) as u32 {
                    let at = SimTime::ZERO + clock.rng.draw(&set.mtbf, 1);
                    clock.add(
                        at,
                        Next::GpuFails {
                            node,
                            device,
                            set: s as u32,
                        },
                    );
                }
            }
        }
        clock
    }

    fn add(&mut self, at: SimTime, next: Next) {
        self.seq += 1;
        self.due.insert((at, self.seq, next));
    }

    /// The time of the earliest failure or repair, if any.
    fn earliest(&self) -> Option<SimTime> {
        self.due.first().map(|&(at, _, _)| at)
    }
}

impl<'w> Simulation<'w> {
    /// Queues `Ev::Failure` for the earliest failure or repair, unless it is queued already.
    ///
    /// Without a horizon, failures stop once nothing else is left to happen and every node and
    /// GPU is up: more failures could only take capacity from a cluster where nothing waits
    /// for it, and the run would never end.
    pub(super) fn queue_failure_event(&mut self, first: bool) {
        if !first
            && self.world.config.until.is_none()
            && self.events.is_empty()
            && self.sched.nodes.as_ref().is_none_or(|s| s.all_up())
        {
            return;
        }
        let Some(clock) = self.sched.failures.as_mut() else {
            return;
        };
        let Some(at) = clock.earliest() else { return };
        if clock.queued.is_some_and(|q| q <= at) {
            return;
        }
        clock.queued = Some(at);
        self.events.push(at, Ev::Failure);
    }

    /// Every failure and repair due now, in the order they were drawn.
    pub(super) fn failures_due(&mut self) {
        if let Some(clock) = self.sched.failures.as_mut() {
            clock.queued = None;
        }
        let lost = self.rec.stats.failures.pods_lost;
        self.sched.nodes_changing = true;
        loop {
            let now = self.now;
            let Some(clock) = self.sched.failures.as_mut() else {
                break;
            };
            let Some(&(at, seq, next)) = clock.due.first() else {
                break;
            };
            if at > now {
                break;
            }
            clock.due.remove(&(at, seq, next));
            self.failure(next);
        }
        self.after_node_change(lost);
        self.queue_failure_event(false);
    }

    /// The node states; they exist whenever failures are configured.
    fn failing_nodes(&self) -> &super::nodes::NodeStates {
        self.sched
            .nodes
            .as_ref()
            .expect("node states with failures")
    }

    /// Changes a node's state with `change`, then brings the capacity held back from the
    /// schedulers in line with it (`NodeStates::sync`).
    fn change_node(&mut self, node: NodeId, change: impl FnOnce(&mut super::nodes::NodeStates)) {
        let world = self.world;
        let states = self
            .sched
            .nodes
            .as_mut()
            .expect("node states with failures");
        change(states);
        states.sync(world, &mut self.sched.cluster, node);
    }

    /// Schedules `next` after a draw of `dist` (at least `at_least` ms).
    fn draw_next(&mut self, dist: &DurationDist, at_least: i64, next: Next) {
        let now = self.now;
        let clock = self.sched.failures.as_mut().expect("failure clock");
        let gap = clock.rng.draw(dist, at_least);
        clock.add(now + gap, next);
    }

    /// A failure for the report's failures panel (its lost work is added as pods end).
    fn mark_failure(&mut self, what: crate::outcome::FailureCause) {
        let at = self.now;
        self.rec
            .stats
            .failures
            .marks
            .push(crate::outcome::FailureMark {
                at,
                what,
                lost_gpu_ms: 0,
            });
    }

    /// One failure or repair. A node that is away (removed, or not yet added by a Timeline)
    /// has nothing to fail, but its clock runs on: it fails again once it is back, and a
    /// repair due while it is away still clears its failed state, so it comes back whole.
    fn failure(&mut self, next: Next) {
        let world = self.world;
        let cfg = &world.config.failures;
        match next {
            Next::NodeFails { node, set } => {
                let (i, states) = (node.index(), self.failing_nodes());
                if states.removed[i] {
                    self.draw_next(&cfg.nodes[set as usize].mtbf, 1, next);
                    return;
                }
                if !states.failed[i] {
                    self.change_node(node, |s| s.failed[i] = true);
                    self.rec.stats.failures.node_failures += 1;
                    self.mark_failure(crate::outcome::FailureCause::NodeFailure);
                    self.end_pods_on(&[node], Loss::NodeFailed);
                }
                let repaired = Next::NodeRepaired { node, set };
                self.draw_next(&cfg.nodes[set as usize].repair, 0, repaired);
            }
            Next::NodeRepaired { node, set } => {
                // A removed node stays closed: `sync` reads its state.
                self.change_node(node, |s| s.failed[node.index()] = false);
                self.draw_next(
                    &cfg.nodes[set as usize].mtbf,
                    1,
                    Next::NodeFails { node, set },
                );
            }
            Next::GpuFails { node, device, set } => {
                let states = self.failing_nodes();
                if states.removed[node.index()] || states.failed[node.index()] {
                    // A node that is down or away has no GPU in use to fail: the next draw
                    // starts now.
                    self.draw_next(&cfg.gpus[set as usize].mtbf, 1, next);
                    return;
                }
                self.rec.stats.failures.gpu_failures += 1;
                self.mark_failure(crate::outcome::FailureCause::GpuFailure);
                if self.sched.cluster.devices.is_some() {
                    // GPUs as devices: every pod with a claim on the device fails (a whole
                    // GPU's pod, or each share on it), and the device is out until repaired.
                    for (w, pods) in self.device_holders(node, device) {
                        self.sched.failed_device = Some((node, device));
                        self.lose_pods(w, &pods, Loss::GpuFailed, Some(node));
                    }
                    self.sched.failed_device = None;
                    if let Some(d) = self.sched.cluster.devices.as_mut() {
                        d.book.set_down(node, device as usize, true);
                    }
                } else if let Some((w, pod)) = self.pod_on_device(node, device) {
                    // The pod holding the device, if any, fails; then the device is held back.
                    self.lose_pods(w, &[pod], Loss::GpuFailed, Some(node));
                }
                let clock = self.sched.failures.as_mut().expect("failure clock");
                clock.down_devices[node.index()].push(device);
                let repaired = Next::GpuRepaired { node, device, set };
                self.draw_next(&cfg.gpus[set as usize].repair, 0, repaired);
                self.change_node(node, |s| s.failed_gpus[node.index()] += 1);
            }
            Next::GpuRepaired { node, device, set } => {
                if let Some(d) = self.sched.cluster.devices.as_mut() {
                    d.book.set_down(node, device as usize, false);
                }
                let clock = self.sched.failures.as_mut().expect("failure clock");
                clock.down_devices[node.index()].retain(|&d| d != device);
                let fails = Next::GpuFails { node, device, set };
                self.draw_next(&cfg.gpus[set as usize].mtbf, 1, fails);
                self.change_node(node, |s| s.failed_gpus[node.index()] -= 1);
            }
        }
    }

    /// With GPUs as devices: the pods holding a claim on device `device` of `node`, per
    /// workload in id order. A workload's claims are kept per node, not per pod, so each
    /// claim on the device stands for the first of its pods there of the claim's shape
    /// (pods of one shape on one node are interchangeable), in (pod set, index) order.
    fn device_holders(&self, node: NodeId, device: u32) -> Vec<(WorkloadId, Vec<(usize, usize)>)> {
        let Some(devices) = self.sched.cluster.devices.as_ref() else {
            return Vec::new();
        };
        let Some(bit) = 1u64.checked_shl(device) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, rt) in self.runtimes.iter() {
            if rt.record.state == crate::outcome::WorkloadState::Finished {
                continue;
            }
            let mut pods: Vec<(usize, usize)> = Vec::new();
            for (_, claim) in rt
                .claims
                .iter()
                .filter(|(n, c)| *n == node && c.mask & bit != 0)
            {
                let fits = |ps: usize| {
                    rt.needs
                        .get(ps)
                        .and_then(|n| devices.book.demand(&n.requests))
                        .is_some_and(|d| match d {
                            kueuesim_model::gpu::GpuDemand::Whole(k) => {
                                i64::from(claim.milli) == 1000 && claim.mask.count_ones() == k
                            }
                            kueuesim_model::gpu::GpuDemand::Share(m) => claim.milli == m,
                        })
                };
                let pod = rt
                    .record
                    .placement
                    .iter()
                    .enumerate()
                    .find_map(|(ps, slots)| {
                        if !fits(ps) {
                            return None;
                        }
                        slots
                            .iter()
                            .enumerate()
                            .find(|&(idx, s)| *s == Some(node) && !pods.contains(&(ps, idx)))
                            .map(|(idx, _)| (ps, idx))
                    });
                if let Some(p) = pod {
                    pods.push(p);
                }
            }
            if !pods.is_empty() {
                pods.sort();
                out.push((WorkloadId::from_index(i), pods));
            }
        }
        out
    }

    /// The pod whose GPUs include healthy device `device` of `node`: the node's pods hold its
    /// healthy devices in order of (workload, pod set, pod index), each as many as it
    /// requests, so which pod a failure hits is a function of the state alone. None: the
    /// device is free (or the node is down).
    fn pod_on_device(&self, node: NodeId, device: u32) -> Option<(WorkloadId, (usize, usize))> {
        let g = self.gpu?;
        let clock = self.sched.failures.as_ref()?;
        let down = &clock.down_devices[node.index()];
        if down.contains(&device) {
            return None;
        }
        // The device's rank among the node's healthy devices.
        let rank = i64::from(device) - down.iter().filter(|&&d| d < device).count() as i64;
        let mut first = 0i64;
        for (i, rt) in self.runtimes.iter() {
            if rt.record.state == crate::outcome::WorkloadState::Finished {
                continue;
            }
            for (ps, slots) in rt.record.placement.iter().enumerate() {
                let gpus = rt.needs.get(ps).map_or(0, |n| n.requests.get(g));
                if gpus <= 0 {
                    continue;
                }
                for (idx, s) in slots.iter().enumerate() {
                    if *s == Some(node) {
                        if rank < first + gpus {
                            return Some((WorkloadId::from_index(i), (ps, idx)));
                        }
                        first += gpus;
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_their_distribution_and_their_bounds() {
        let mut rng = Rng::new(7);
        // An exponential of mean 1h: the mean of many draws is close to it.
        let mean = DurationDist::Exponential {
            mean_ms: 3_600_000.0,
        };
        let n = 20_000;
        let sum: i64 = (0..n).map(|_| rng.draw(&mean, 1).millis()).sum();
        let avg = sum as f64 / n as f64;
        assert!((avg / 3_600_000.0 - 1.0).abs() < 0.03, "{avg}");
        // Fixed, uniform within its bounds, a time between failures at least `at_least`.
        assert_eq!(rng.draw(&DurationDist::Fixed(5), 0).millis(), 5);
        assert_eq!(rng.draw(&DurationDist::Fixed(0), 1).millis(), 1);
        for _ in 0..1000 {
            let v = rng
                .draw(&DurationDist::Uniform { min: 10, max: 20 }, 0)
                .millis();
            assert!((10..=20).contains(&v), "{v}");
        }
        // Never beyond ten years.
        let huge = DurationDist::Fixed(i64::MAX);
        assert_eq!(rng.draw(&huge, 0), kueuesim_model::limits::MAX_DURATION);
    }

    #[test]
    fn the_same_seed_draws_the_same_times() {
        let d = DurationDist::Exponential { mean_ms: 1000.0 };
        let a: Vec<_> = {
            let mut r = Rng::new(42);
            (0..10).map(|_| r.draw(&d, 1)).collect()
        };
        let b: Vec<_> = {
            let mut r = Rng::new(42);
            (0..10).map(|_| r.draw(&d, 1)).collect()
        };
        let c: Vec<_> = {
            let mut r = Rng::new(43);
            (0..10).map(|_| r.draw(&d, 1)).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
