//! `WorkloadGenerator` (kueuesim.io/v1alpha1): seeded synthetic workloads — arrivals
//! (fixed interval, Poisson, or inter-arrival times from a CSV column), distributions of gang
//! size, per-pod requests and duration, and weighted mixes of LocalQueues, priorities,
//! schedulerNames and topology requests — produced lazily in arrival order.
//!
//! `resolve` checks a parsed generator against the loaded world once (every name becomes an
//! id, every value a number in Kueue units); `GeneratedWorkloads` then yields
//! `kueuesim_model::Workload`s one at a time, merging several generators (and the per-queue
//! copies of one) by arrival time, so the full list is never held here. Randomness is our own
//! xoshiro256** stream per copy, seeded from the Simulation seed and the generator's name: the
//! same seed gives the same workloads, `--seed` changes them.

mod resolve;
mod rng;
mod stream;

pub(crate) use self::resolve::{MAX_ARRIVAL_MS, duration_dist, resolve};
pub use self::rng::Rng;
pub(crate) use self::rng::fnv1a;
pub use self::stream::{GeneratedWorkloads, GeneratorStream};

use std::sync::Arc;

use kueuesim_model::{
    KaiTopologyConstraint, LocalQueueId, NetworkTopology, ResourceId, SchedulerKind, SimTime,
    TopologyRequest,
};

/// A distribution of an integer value (pods, Kueue resource units, milliseconds).
#[derive(Clone, Debug)]
pub enum Dist {
    /// Always this value.
    Fixed(i64),
    /// Uniform over the integers in [min, max].
    Uniform {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// exp(N(mu, sigma²)), rounded, clamped to [min, max].
    LogNormal {
        /// ln of the median.
        mu: f64,
        /// Standard deviation of the logarithm.
        sigma: f64,
        /// Lower clamp.
        min: i64,
        /// Upper clamp.
        max: i64,
    },
    /// A value of the column, each row equally likely.
    Empirical(Arc<[i64]>),
}

impl Dist {
    /// One draw.
    pub fn sample(&self, rng: &mut Rng) -> i64 {
        match self {
            Dist::Fixed(v) => *v,
            Dist::Uniform { min, max } => rng.range(*min, *max),
            Dist::LogNormal {
                mu,
                sigma,
                min,
                max,
            } => {
                let v = (mu + sigma * rng.normal()).exp().round();
                if v >= *max as f64 {
                    *max
                } else {
                    (v as i64).max(*min)
                }
            }
            Dist::Empirical(values) => values[rng.range(0, values.len() as i64 - 1) as usize],
        }
    }
}

/// How arrivals are spaced.
#[derive(Clone, Debug)]
pub enum Arrivals {
    /// One every `every` milliseconds, the first at `start`.
    Interval {
        /// Every so many milliseconds.
        every: i64,
    },
    /// A Poisson process: exponential gaps with this mean (ms), the first gap after `start`.
    Poisson {
        /// Mean gap in milliseconds.
        mean_gap_ms: f64,
    },
    /// The gaps of a CSV column in row order (the first row is the first arrival's offset
    /// from `start`); the generator stops at the column's end.
    Trace(Arc<[i64]>),
}

/// One topology request a generated workload can carry.
#[derive(Clone, Debug, Default)]
pub struct TopologyChoice {
    /// Kueue TAS pod-set request.
    pub kueue: Option<TopologyRequest>,
    /// Kueue TAS slice request (`sliceRequired` with `sliceSize`).
    pub kueue_slice: Option<kueuesim_model::TopologySlice>,
    /// Volcano `networkTopology` (applies to Volcano workloads).
    pub volcano: Option<NetworkTopology>,
    /// KAI `topologyConstraint` (applies to KAI workloads).
    pub kai: Option<KaiTopologyConstraint>,
}

/// A LocalQueue workloads go to.
#[derive(Clone, Debug)]
pub struct QueueChoice {
    /// The queue; None: not managed by Kueue.
    pub id: Option<LocalQueueId>,
    /// Its name.
    pub name: String,
    /// Its namespace (the workload's).
    pub namespace: String,
}

/// A weighted mix: items and their cumulative weights.
#[derive(Clone, Debug)]
pub struct Mix<T> {
    /// The items.
    pub items: Vec<T>,
    /// Running sums of the weights (last = total).
    pub cumulative: Vec<f64>,
}

impl<T> Mix<T> {
    /// A mix of one item.
    pub fn one(item: T) -> Self {
        Mix {
            items: vec![item],
            cumulative: vec![1.0],
        }
    }

    /// Index of a weighted draw; a mix of one draws nothing (so adding a setting with a
    /// single choice does not shift the other streams).
    pub fn pick(&self, rng: &mut Rng) -> usize {
        if self.items.len() == 1 {
            return 0;
        }
        let total = *self.cumulative.last().unwrap_or(&1.0);
        let x = rng.unit() * total;
        // The first running sum above `x`, by bisection: the sums never decrease, so this is
        // the first one a scan would find, and a mix of ten thousand LocalQueues costs 14
        // steps a draw instead of five thousand.
        let i = self.cumulative.partition_point(|&c| c <= x);
        i.min(self.items.len() - 1)
    }
}

/// Everything one generator needs, resolved against the world: owns no references into it.
#[derive(Clone, Debug)]
pub struct GeneratorSettings {
    /// `metadata.name`: workloads are `<name>-<index>`.
    pub name: String,
    /// The stream seed (Simulation seed mixed with the name).
    pub seed: u64,
    /// Offset of the first arrival.
    pub start: SimTime,
    /// Arrival spacing.
    pub arrivals: Arrivals,
    /// Workloads per copy; None: until `until` (or the trace's end).
    pub count: Option<u64>,
    /// No arrival after this.
    pub until: Option<SimTime>,
    /// Pods per workload (one pod set `main`).
    pub pods: Dist,
    /// Per-pod requests in Kueue units, sorted by resource.
    pub requests: Vec<(ResourceId, Dist)>,
    /// Run time once all pods run.
    pub duration: Dist,
    /// Queue mix.
    pub queues: Mix<QueueChoice>,
    /// One copy of the whole set per queue (Kueue's perf harness), instead of a mix.
    pub per_local_queue: bool,
    /// (class name, value) mix.
    pub priorities: Mix<(Option<String>, i32)>,
    /// (schedulerName, kind) mix.
    pub schedulers: Mix<(String, SchedulerKind)>,
    /// Topology request mix.
    pub topologies: Mix<TopologyChoice>,
    /// `checkpointInterval` and `restartCost`: the work a failure costs each workload.
    pub resilience: kueuesim_model::Resilience,
}
