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

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::Arc;

use kueuesim_model::{
    GangSpec, KaiTopologyConstraint, LocalQueueId, NetworkTopology, PodSet, QueueRef, ResourceId,
    ResourceList, SchedulerKind, SimDuration, SimTime, TierRef, TopologyRequest, Workload, World,
};
use serde_saphyr::Spanned;

use crate::convert::core::{err_at, err_obj};
use crate::error::{Pos, ScenarioError};
use crate::source::ObjectText;
use crate::wire;

// ---- randomness ----------------------------------------------------------------------------

/// splitmix64: expands one seed into well-mixed state words.
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a name, so each generator gets its own stream from one Simulation seed.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// xoshiro256** (Blackman and Vigna): small, fast, and good enough for workload synthesis.
#[derive(Clone, Debug)]
pub struct Rng([u64; 4]);

impl Rng {
    /// A stream from a seed.
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        Rng([
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ])
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
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
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [lo, hi] (inclusive).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo) as u64 + 1;
        // Lemire's multiply-shift; the bias is below 2^-64 × span, irrelevant here.
        lo + ((u128::from(self.next_u64()) * u128::from(span)) >> 64) as i64
    }

    /// Standard normal (Box–Muller; the second value is dropped so draws stay one per call).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

// ---- resolved settings ---------------------------------------------------------------------

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
        self.cumulative
            .iter()
            .position(|&c| x < c)
            .unwrap_or(self.items.len() - 1)
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
}

// ---- the iterator --------------------------------------------------------------------------

/// One copy's stream state.
#[derive(Clone, Debug)]
struct CopyState {
    rng: Rng,
    /// The fixed queue of a per-LocalQueue copy.
    queue: Option<usize>,
    /// Workloads of this copy produced so far.
    produced: u64,
    /// Simulated time of the next arrival, as a real number of ms (Poisson keeps fractions).
    clock: f64,
    next: Option<SimTime>,
}

/// One generator's workloads in arrival order (its copies merged; ties by copy index).
#[derive(Clone, Debug)]
pub struct GeneratorStream {
    settings: Arc<GeneratorSettings>,
    /// Per topology choice, the gang of a workload of each `SchedulerKind` (`kind_index`):
    /// shared by every workload that draws them (`Workload::gang`).
    gangs: Arc<Vec<[Arc<GangSpec>; 3]>>,
    copies: Vec<CopyState>,
    heap: BinaryHeap<Reverse<(SimTime, usize)>>,
    /// Workloads yielded so far (the name index).
    index: u64,
}

impl GeneratorStream {
    /// The stream of `settings`.
    pub fn new(settings: GeneratorSettings) -> Self {
        let settings = Arc::new(settings);
        let n = if settings.per_local_queue {
            settings.queues.items.len()
        } else {
            1
        };
        let kube = Arc::new(GangSpec::default());
        let gangs = settings
            .topologies
            .items
            .iter()
            .map(|topo| {
                let volcano = GangSpec {
                    network_topology: topo.volcano.clone(),
                    ..GangSpec::default()
                };
                let kai = GangSpec {
                    kai_topology: topo.kai.clone(),
                    ..GangSpec::default()
                };
                // In `kind_index` order.
                [Arc::clone(&kube), Arc::new(kai), Arc::new(volcano)]
            })
            .collect();
        let mut s = GeneratorStream {
            gangs: Arc::new(gangs),
            copies: Vec::with_capacity(n),
            heap: BinaryHeap::with_capacity(n),
            index: 0,
            settings,
        };
        for c in 0..n {
            let mut seed = s.settings.seed ^ (c as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
            let mut copy = CopyState {
                rng: Rng::new(splitmix64(&mut seed)),
                queue: s.settings.per_local_queue.then_some(c),
                produced: 0,
                clock: s.settings.start.millis() as f64,
                next: None,
            };
            advance(&s.settings, &mut copy, true);
            if let Some(t) = copy.next {
                s.heap.push(Reverse((t, c)));
            }
            s.copies.push(copy);
        }
        s
    }

    /// The settings.
    pub fn settings(&self) -> &GeneratorSettings {
        &self.settings
    }

    /// The arrival time of the next workload, if any.
    pub fn peek_arrival(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }
}

/// Moves `copy.next` to its next arrival (or None when the copy is done).
fn advance(s: &GeneratorSettings, copy: &mut CopyState, first: bool) {
    if s.count.is_some_and(|n| copy.produced >= n) {
        copy.next = None;
        return;
    }
    let t = match &s.arrivals {
        Arrivals::Interval { every } => {
            if !first {
                copy.clock += *every as f64;
            }
            copy.clock
        }
        Arrivals::Poisson { mean_gap_ms } => {
            copy.clock += -(1.0 - copy.rng.unit()).ln() * mean_gap_ms;
            copy.clock
        }
        Arrivals::Trace(gaps) => match gaps.get(copy.produced as usize) {
            Some(g) => {
                copy.clock += *g as f64;
                copy.clock
            }
            None => {
                copy.next = None;
                return;
            }
        },
    };
    let t = SimTime::from_millis(t.floor() as i64);
    copy.next = match s.until {
        Some(u) if t > u => None,
        _ => Some(t),
    };
}

impl Iterator for GeneratorStream {
    type Item = Workload;

    fn next(&mut self) -> Option<Workload> {
        let Reverse((arrival, c)) = self.heap.pop()?;
        let s = Arc::clone(&self.settings);
        let copy = &mut self.copies[c];
        let w = make_workload(&s, &self.gangs, copy, arrival, self.index);
        self.index += 1;
        copy.produced += 1;
        advance(&s, copy, false);
        if let Some(t) = copy.next {
            self.heap.push(Reverse((t, c)));
        }
        Some(w)
    }
}

/// A stable digest of a generated pod set's requests: the `spec_shape` part of Kueue's
/// equivalence hash (generated pods differ only in their requests).
fn shape_of(requests: &[(ResourceId, i64)]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (r, a) in requests {
        for v in [r.index() as u64, *a as u64] {
            h = (h ^ v).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// A scheduler kind's place in `GeneratorStream::gangs`.
fn kind_index(kind: SchedulerKind) -> usize {
    match kind {
        SchedulerKind::Kube => 0,
        SchedulerKind::Kai => 1,
        SchedulerKind::Volcano => 2,
    }
}

fn make_workload(
    s: &GeneratorSettings,
    gangs: &[[Arc<GangSpec>; 3]],
    copy: &mut CopyState,
    arrival: SimTime,
    index: u64,
) -> Workload {
    let rng = &mut copy.rng;
    let q = &s.queues.items[match copy.queue {
        Some(i) => i,
        None => s.queues.pick(rng),
    }];
    let (class, priority) = &s.priorities.items[s.priorities.pick(rng)];
    let (scheduler_name, kind) = &s.schedulers.items[s.schedulers.pick(rng)];
    let topo_index = s.topologies.pick(rng);
    let topo = &s.topologies.items[topo_index];
    let pods = s.pods.sample(rng).max(1) as u32;
    let requests: Vec<(ResourceId, i64)> = s
        .requests
        .iter()
        .map(|(r, d)| (*r, d.sample(rng).max(0)))
        .collect();
    let duration = SimDuration::from_millis(s.duration.sample(rng).max(0));
    let name = format!("{}-{index}", s.name);
    let gang = Arc::clone(&gangs[topo_index][kind_index(*kind)]);
    Workload {
        uid: format!("{}/{name}", q.namespace),
        namespace: q.namespace.clone(),
        name,
        kind: "Workload".into(),
        owner: None,
        job_uid: None,
        queue: match q.id {
            Some(id) => QueueRef::Local(id),
            None => QueueRef::Unmanaged,
        },
        queue_name: q.id.map(|_| q.name.clone()),
        priority_class: class.clone(),
        priority: *priority,
        scheduler_name: scheduler_name.clone(),
        created_at: arrival,
        arrival,
        duration: Some(duration),
        pod_sets: vec![PodSet {
            name: "main".into(),
            count: pods,
            min_count: None,
            spec_shape: shape_of(&requests),
            requests: ResourceList::from_pairs(requests),
            node_selector: Default::default(),
            tolerations: Vec::new(),
            priority_class_name: None,
            topology_request: topo.kueue.clone(),
        }],
        active: true,
        max_execution_time: None,
        initial_admission: None,
        last_eviction: None,
        creation_blocked: None,
        gang,
    }
}

/// Several generators merged by arrival time (ties: the generator listed first).
#[derive(Clone, Debug, Default)]
pub struct GeneratedWorkloads {
    streams: Vec<GeneratorStream>,
    heap: BinaryHeap<Reverse<(SimTime, usize)>>,
}

impl GeneratedWorkloads {
    /// The merge of `streams`, in this order for ties.
    pub fn new(streams: Vec<GeneratorStream>) -> Self {
        let mut heap = BinaryHeap::with_capacity(streams.len());
        for (i, s) in streams.iter().enumerate() {
            if let Some(t) = s.peek_arrival() {
                heap.push(Reverse((t, i)));
            }
        }
        GeneratedWorkloads { streams, heap }
    }

    /// The arrival time of the next workload, if any.
    pub fn peek_arrival(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// Which stream the next workload comes from (its index in `new`'s list).
    pub fn peek_stream(&self) -> Option<usize> {
        self.heap.peek().map(|Reverse((_, i))| *i)
    }
}

impl Iterator for GeneratedWorkloads {
    type Item = Workload;

    fn next(&mut self) -> Option<Workload> {
        let Reverse((_, i)) = self.heap.pop()?;
        let w = self.streams[i].next();
        if let Some(t) = self.streams[i].peek_arrival() {
            self.heap.push(Reverse((t, i)));
        }
        w
    }
}

// ---- resolution ----------------------------------------------------------------------------

/// The most pods a generated workload may have (a Kubernetes Job is far below it).
pub(crate) const MAX_PODS: i64 = 1_000_000;
/// The longest duration a generator may draw or space arrivals by: 100 years.
pub(crate) const MAX_DURATION_MS: i64 = 100 * 365 * 24 * 3_600_000;
/// No generated workload arrives later than this after the start (1,000 years), so that
/// arrival plus duration stays far inside simulated time.
pub(crate) const MAX_ARRIVAL_MS: i64 = 10 * MAX_DURATION_MS;

/// What a distribution's values are.
#[derive(Clone, Copy)]
enum Unit<'r> {
    /// A positive count (pods).
    Count,
    /// A quantity of this resource, in Kueue units.
    Quantity(&'r str),
    /// A duration (Go syntax; a bare number in `unit`, default seconds, in a CSV).
    Duration,
}

fn parse_value(unit: Unit<'_>, text: &str, csv_unit_ms: Option<f64>) -> Result<i64, String> {
    let t = text.trim();
    match unit {
        Unit::Count => match t.parse::<i64>() {
            Ok(v) if (1..=MAX_PODS).contains(&v) => Ok(v),
            _ => Err(format!("{t:?}: expected an integer from 1 to {MAX_PODS}")),
        },
        Unit::Quantity(r) => {
            let q = kueuesim_model::Quantity::parse(t).map_err(|e| format!("{t:?}: {e}"))?;
            let v = kueuesim_model::resource_amount(r, &q).map_err(|e| format!("{r}: {e}"))?;
            if v < 0 {
                return Err(format!("{t:?}: expected a non-negative quantity"));
            }
            Ok(v)
        }
        Unit::Duration => {
            let too_long = || format!("{t:?}: longer than 100 years");
            if let (Some(ms), Ok(n)) = (csv_unit_ms, t.parse::<f64>()) {
                if n.is_finite() && n >= 0.0 {
                    let v = (n * ms).round();
                    return if v <= MAX_DURATION_MS as f64 {
                        Ok(v as i64)
                    } else {
                        Err(too_long())
                    };
                }
                return Err(format!("{t:?}: expected a non-negative number"));
            }
            SimDuration::parse(t)
                .map(|d| d.millis())
                .map_err(|e| format!("{t:?}: {e}"))
                .and_then(|v| {
                    if v < 0 {
                        Err(format!("{t:?}: expected a non-negative duration"))
                    } else if v > MAX_DURATION_MS {
                        Err(too_long())
                    } else {
                        Ok(v)
                    }
                })
        }
    }
}

fn value(src: &ObjectText<'_>, unit: Unit<'_>, s: &wire::S) -> Result<i64, ScenarioError> {
    parse_value(unit, &s.value, None).map_err(|e| err_at(src, s, e))
}

fn number(src: &ObjectText<'_>, s: &wire::S, what: &str) -> Result<f64, ScenarioError> {
    match s.value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(err_at(
            src,
            s,
            format!("{what} {:?}: expected a non-negative number", s.value),
        )),
    }
}

/// Milliseconds per unit of a CSV column of bare numbers.
fn csv_unit(src: &ObjectText<'_>, c: &wire::GenCsvColumn) -> Result<f64, ScenarioError> {
    Ok(match c.unit.as_ref() {
        None => 1000.0,
        Some(u) => match u.value.trim() {
            "ms" => 1.0,
            "s" => 1000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => {
                return Err(err_at(
                    src,
                    u,
                    format!("unit {:?}: expected one of ms, s, m, h", u.value),
                ));
            }
        },
    })
}

/// The values of one CSV column (header row names the columns; no quoting).
fn csv_column(
    src: &ObjectText<'_>,
    c: &wire::GenCsvColumn,
    unit: Unit<'_>,
    unit_ms: Option<f64>,
) -> Result<Vec<i64>, ScenarioError> {
    let base = Path::new(&src.file.name)
        .parent()
        .unwrap_or_else(|| Path::new(""));
    let path = base.join(c.path.value.trim());
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| err_at(src, &c.path, format!("cannot read CSV {shown}: {e}")))?;
    let mut lines = text.lines().enumerate();
    let Some((_, header)) = lines.next() else {
        return Err(err_at(
            src,
            &c.path,
            format!("CSV {shown} is empty: expected a header row"),
        ));
    };
    let col = header
        .split(',')
        .position(|h| h.trim() == c.column.value.trim())
        .ok_or_else(|| {
            err_at(
                src,
                &c.column,
                format!(
                    "CSV {shown} has no column {:?}: expected one of {}",
                    c.column.value,
                    header.trim()
                ),
            )
        })?;
    let mut out = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let mut column = 1u64;
        let mut field = None;
        for (j, f) in line.split(',').enumerate() {
            if j == col {
                field = Some(f);
                break;
            }
            column += f.chars().count() as u64 + 1;
        }
        let pos = Pos {
            file: shown.clone(),
            line: i as u64 + 1,
            column,
        };
        let Some(f) = field else {
            return Err(ScenarioError::at(
                pos,
                format!("row has no column {:?}", c.column.value),
                &text,
            ));
        };
        out.push(parse_value(unit, f, unit_ms).map_err(|e| ScenarioError::at(pos, e, &text))?);
    }
    if out.is_empty() {
        return Err(err_at(
            src,
            &c.path,
            format!("CSV {shown} has no rows: expected at least one value"),
        ));
    }
    Ok(out)
}

fn dist(
    src: &ObjectText<'_>,
    d: &Spanned<wire::GenDist>,
    unit: Unit<'_>,
    what: &str,
) -> Result<Dist, ScenarioError> {
    let g = &d.value;
    let set = [
        g.fixed.is_some(),
        g.uniform.is_some(),
        g.log_normal.is_some(),
        g.empirical.is_some(),
    ];
    if set.iter().filter(|&&b| b).count() != 1 {
        return Err(err_at(
            src,
            d,
            format!("{what}: expected exactly one of fixed, uniform, logNormal, empirical"),
        ));
    }
    if let Some(f) = &g.fixed {
        return Ok(Dist::Fixed(value(src, unit, f)?));
    }
    if let Some(u) = &g.uniform {
        let (min, max) = (value(src, unit, &u.min)?, value(src, unit, &u.max)?);
        if min > max {
            return Err(err_at(
                src,
                &u.max,
                format!("{what}: uniform max is below min: expected min ≤ max"),
            ));
        }
        return Ok(Dist::Uniform { min, max });
    }
    if let Some(l) = &g.log_normal {
        let median = value(src, unit, &l.median)?;
        if median <= 0 {
            return Err(err_at(
                src,
                &l.median,
                format!("{what}: logNormal median must be positive"),
            ));
        }
        let sigma = number(src, &l.sigma, "sigma")?;
        let min = match &l.min {
            Some(m) => value(src, unit, m)?,
            None => match unit {
                Unit::Count => 1,
                _ => 0,
            },
        };
        // No max: the largest value the unit allows, so a draw is always a valid one.
        let max = match &l.max {
            Some(m) => value(src, unit, m)?,
            None => match unit {
                Unit::Count => MAX_PODS,
                Unit::Duration => MAX_DURATION_MS,
                Unit::Quantity(_) => i64::MAX,
            },
        };
        if min > max {
            let at = l.max.as_ref().unwrap_or(&l.median);
            return Err(err_at(
                src,
                at,
                format!("{what}: logNormal max is below min: expected min ≤ max"),
            ));
        }
        return Ok(Dist::LogNormal {
            mu: (median as f64).ln(),
            sigma,
            min,
            max,
        });
    }
    let e = g.empirical.as_ref().expect("one is set");
    let unit_ms = match unit {
        Unit::Duration => Some(csv_unit(src, e)?),
        _ => {
            if let Some(u) = &e.unit {
                return Err(err_at(
                    src,
                    u,
                    format!("{what}: unit applies only to durations"),
                ));
            }
            None
        }
    };
    Ok(Dist::Empirical(csv_column(src, e, unit, unit_ms)?.into()))
}

fn weight(src: &ObjectText<'_>, w: Option<&wire::S>) -> Result<f64, ScenarioError> {
    match w {
        None => Ok(1.0),
        Some(s) => number(src, s, "weight"),
    }
}

fn mix<T>(
    src: &ObjectText<'_>,
    items: Vec<(T, f64)>,
    at: &Spanned<impl Sized>,
    what: &str,
) -> Result<Mix<T>, ScenarioError> {
    let mut cumulative = Vec::with_capacity(items.len());
    let mut total = 0.0;
    let mut out = Vec::with_capacity(items.len());
    for (t, w) in items {
        total += w;
        cumulative.push(total);
        out.push(t);
    }
    if total <= 0.0 {
        return Err(err_at(
            src,
            at,
            format!("{what}: the weights sum to 0: expected a positive weight"),
        ));
    }
    Ok(Mix {
        items: out,
        cumulative,
    })
}

/// Resolves a parsed `WorkloadGenerator` against the loaded world (queues, priority classes,
/// schedulers; resources are interned). `seed` is the Simulation seed.
pub(crate) fn resolve(
    src: &ObjectText<'_>,
    g: &wire::WorkloadGenerator,
    world: &mut World,
    seed: u64,
) -> Result<GeneratorSettings, ScenarioError> {
    let name = match &g.metadata.name {
        Some(n) if !n.value.is_empty() => n.value.clone(),
        _ => {
            return Err(err_obj(
                src,
                "WorkloadGenerator has no metadata.name: expected a name",
            ));
        }
    };
    let namespace = g
        .metadata
        .namespace
        .as_ref()
        .map_or_else(|| "default".to_string(), |n| n.value.clone());
    let spec = &g.spec;

    // Arrivals.
    let Some(arrival) = &spec.arrival else {
        return Err(err_obj(
            src,
            "WorkloadGenerator has no spec.arrival: expected interval, rate or interArrival",
        ));
    };
    let a = &arrival.value;
    let start = match &a.start {
        Some(s) => SimTime::from_millis(value(src, Unit::Duration, s)?),
        None => SimTime::ZERO,
    };
    let arrivals = match (&a.interval, &a.rate, &a.inter_arrival) {
        (Some(i), None, None) => {
            let every = value(src, Unit::Duration, i)?;
            if every == 0 && spec.count.is_none() {
                // Every arrival at the same time until `until`: never ends.
                return Err(err_at(
                    src,
                    i,
                    "interval 0s without a count: expected a positive interval, or a count",
                ));
            }
            Arrivals::Interval { every }
        }
        (None, Some(r), None) => {
            // `2.5` (per second) or `<n>/s`, `<n>/m`, `<n>/h`.
            let (n, per_ms) = match r.value.trim().split_once('/') {
                None => (r.value.trim(), 1000.0),
                Some((n, "s")) => (n.trim(), 1000.0),
                Some((n, "m")) => (n.trim(), 60_000.0),
                Some((n, "h")) => (n.trim(), 3_600_000.0),
                Some(_) => {
                    return Err(err_at(
                        src,
                        r,
                        format!(
                            "rate {:?}: expected arrivals per second, or <n>/s, <n>/m, <n>/h",
                            r.value
                        ),
                    ));
                }
            };
            match n.parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 && per_ms / v <= MAX_DURATION_MS as f64 => {
                    Arrivals::Poisson {
                        mean_gap_ms: per_ms / v,
                    }
                }
                _ => {
                    return Err(err_at(
                        src,
                        r,
                        format!(
                            "rate {:?}: expected a positive number of arrivals, at least one per 100 years",
                            r.value
                        ),
                    ));
                }
            }
        }
        (None, None, Some(c)) => {
            let unit_ms = csv_unit(src, c)?;
            Arrivals::Trace(csv_column(src, c, Unit::Duration, Some(unit_ms))?.into())
        }
        _ => {
            return Err(err_at(
                src,
                arrival,
                "spec.arrival: expected exactly one of interval, rate, interArrival",
            ));
        }
    };
    let count = match &spec.count {
        None => None,
        Some(c) if c.value >= 1 => Some(c.value as u64),
        Some(c) => {
            return Err(err_at(
                src,
                c,
                format!("count {}: expected an integer ≥ 1", c.value),
            ));
        }
    };
    let until = match &spec.until {
        None => None,
        Some(u) => Some(SimTime::from_millis(value(src, Unit::Duration, u)?)),
    };
    if count.is_none() && until.is_none() && !matches!(arrivals, Arrivals::Trace(_)) {
        return Err(err_obj(
            src,
            format!(
                "WorkloadGenerator {name} has neither spec.count nor spec.until: expected at least one, so it ends"
            ),
        ));
    }

    // Sizes and durations.
    let pods = match &spec.pods {
        Some(d) => dist(src, d, Unit::Count, "pods")?,
        None => Dist::Fixed(1),
    };
    let mut requests = Vec::new();
    for (r, d) in &spec.requests {
        let id = world.resources.intern(r);
        requests.push((id, dist(src, d, Unit::Quantity(r), r)?));
    }
    requests.sort_by_key(|(r, _)| *r);
    let Some(duration) = &spec.duration else {
        return Err(err_obj(
            src,
            format!(
                "WorkloadGenerator {name} has no spec.duration: expected how long workloads run"
            ),
        ));
    };
    let duration = dist(src, duration, Unit::Duration, "duration")?;

    // Queues.
    let mut queues = Vec::new();
    for q in &spec.queues {
        let Some(qn) = &q.value.name else {
            return Err(err_at(src, q, "queue: expected a LocalQueue name"));
        };
        let ns = q
            .value
            .namespace
            .as_ref()
            .map_or_else(|| namespace.clone(), |n| n.value.clone());
        let Some(id) = world
            .local_queues
            .iter()
            .position(|l| l.namespace == ns && l.name == qn.value)
        else {
            return Err(err_at(
                src,
                qn,
                format!(
                    "LocalQueue {ns}/{} does not exist: expected a LocalQueue defined in the input",
                    qn.value
                ),
            ));
        };
        queues.push((
            QueueChoice {
                id: Some(LocalQueueId::from_index(id)),
                name: qn.value.clone(),
                namespace: ns,
            },
            weight(src, q.value.weight.as_ref())?,
        ));
    }
    let queues = if !queues.is_empty() {
        mix(src, queues, &spec.queues[0], "queues")?
    } else if spec.per_local_queue {
        // Every LocalQueue of the input, in input order.
        if world.local_queues.is_empty() {
            return Err(err_obj(
                src,
                "perLocalQueue: the input has no LocalQueue: expected at least one",
            ));
        }
        Mix {
            items: world
                .local_queues
                .iter()
                .enumerate()
                .map(|(i, l)| QueueChoice {
                    id: Some(LocalQueueId::from_index(i)),
                    name: l.name.clone(),
                    namespace: l.namespace.clone(),
                })
                .collect(),
            cumulative: (1..=world.local_queues.len()).map(|i| i as f64).collect(),
        }
    } else {
        // No queue: workloads not managed by Kueue, in the generator's namespace.
        Mix::one(QueueChoice {
            id: None,
            name: String::new(),
            namespace: namespace.clone(),
        })
    };

    // Priorities.
    let mut priorities = Vec::new();
    for p in &spec.priorities {
        let item = match (&p.value.class_name, &p.value.value) {
            (Some(c), None) => {
                let pc = world
                    .priority_classes
                    .iter()
                    .find(|x| !x.is_pod_priority_class && x.name == c.value)
                    .or_else(|| world.priority_classes.iter().find(|x| x.name == c.value));
                match pc {
                    Some(pc) => (Some(pc.name.clone()), pc.value),
                    None => {
                        return Err(err_at(
                            src,
                            c,
                            format!(
                                "priority class {:?} does not exist: expected a WorkloadPriorityClass or PriorityClass of the input",
                                c.value
                            ),
                        ));
                    }
                }
            }
            (None, Some(v)) if i32::try_from(v.value).is_ok() => (None, v.value as i32),
            _ => {
                return Err(err_at(
                    src,
                    p,
                    "priority: expected exactly one of className, value (a 32-bit integer)",
                ));
            }
        };
        priorities.push((item, weight(src, p.value.weight.as_ref())?));
    }
    let priorities = if priorities.is_empty() {
        Mix::one((None, 0))
    } else {
        mix(src, priorities, &spec.priorities[0], "priorities")?
    };

    // Schedulers.
    let mut schedulers = Vec::new();
    for s in &spec.scheduler_names {
        let Some(n) = &s.value.name else {
            return Err(err_at(src, s, "schedulerNames: expected a name"));
        };
        let Some(kind) = world.config.scheduler(&n.value) else {
            let known: Vec<&str> = world
                .config
                .schedulers
                .iter()
                .map(|(n, _)| n.as_str())
                .collect();
            return Err(err_at(
                src,
                n,
                format!(
                    "schedulerName {:?} is run by no scheduler: expected one of {} (map more names in Simulation spec.schedulers)",
                    n.value,
                    known.join(", ")
                ),
            ));
        };
        schedulers.push((
            (n.value.clone(), kind),
            weight(src, s.value.weight.as_ref())?,
        ));
    }
    let schedulers = if schedulers.is_empty() {
        let kind = world
            .config
            .scheduler("default-scheduler")
            .unwrap_or(SchedulerKind::Kube);
        Mix::one(("default-scheduler".to_string(), kind))
    } else {
        mix(src, schedulers, &spec.scheduler_names[0], "schedulerNames")?
    };

    // Topology requests.
    let mut topologies = Vec::new();
    for t in &spec.topologies {
        let mut choice = TopologyChoice::default();
        if let Some(k) = &t.value.kueue {
            choice.kueue = match (&k.required, &k.preferred, k.unconstrained) {
                (Some(r), None, None | Some(false)) => {
                    Some(TopologyRequest::Required(r.value.trim().to_string()))
                }
                (None, Some(p), None | Some(false)) => {
                    Some(TopologyRequest::Preferred(p.value.trim().to_string()))
                }
                (None, None, Some(true)) => Some(TopologyRequest::Unconstrained),
                _ => {
                    return Err(err_at(
                        src,
                        t,
                        "topologies kueue: expected exactly one of required, preferred, unconstrained: true",
                    ));
                }
            };
        }
        if let Some(v) = &t.value.volcano {
            let hard = match v.mode.as_ref().map(|m| m.value.trim()) {
                None | Some("hard") => true,
                Some("soft") => false,
                Some(_) => {
                    let m = v.mode.as_ref().expect("some");
                    return Err(err_at(
                        src,
                        m,
                        format!("volcano mode {:?}: expected hard or soft", m.value),
                    ));
                }
            };
            let highest_tier = match (&v.highest_tier, &v.highest_tier_name) {
                (Some(n), None) => {
                    Some(TierRef::Number(i32::try_from(n.value).map_err(|_| {
                        err_at(src, n, "highestTier: expected a 32-bit integer")
                    })?))
                }
                (None, Some(n)) => Some(TierRef::Name(n.value.trim().to_string())),
                (None, None) => None,
                (Some(n), Some(_)) => {
                    return Err(err_at(
                        src,
                        n,
                        "volcano: expected at most one of highestTier, highestTierName",
                    ));
                }
            };
            choice.volcano = Some(NetworkTopology { hard, highest_tier });
        }
        if let Some(k) = &t.value.kai {
            let Some(topology) = &k.topology else {
                return Err(err_at(
                    src,
                    t,
                    "topologies kai: expected topology (the KAI Topology's name)",
                ));
            };
            choice.kai = Some(KaiTopologyConstraint {
                topology: topology.value.trim().to_string(),
                required: k.required.as_ref().map(|s| s.value.trim().to_string()),
                preferred: k.preferred.as_ref().map(|s| s.value.trim().to_string()),
            });
        }
        topologies.push((choice, weight(src, t.value.weight.as_ref())?));
    }
    let topologies = if topologies.is_empty() {
        Mix::one(TopologyChoice::default())
    } else {
        mix(src, topologies, &spec.topologies[0], "topologies")?
    };

    let mut s = seed ^ fnv1a(&name);
    Ok(GeneratorSettings {
        seed: splitmix64(&mut s),
        name,
        start,
        arrivals,
        count,
        until,
        pods,
        requests,
        duration,
        queues,
        per_local_queue: spec.per_local_queue,
        priorities,
        schedulers,
        topologies,
    })
}
