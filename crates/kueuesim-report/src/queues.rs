//! Figures per ClusterQueue and per LocalQueue for capacity planners: counts, waits (censored
//! with the still-pending ones, and over admitted workloads alone), time in queue, job
//! completion time and bounded slowdown, GPU-hours used, lost and held idle, utilisation and
//! preemptions. Built from the run's `Tally`, so a lean run and a full run agree.

use serde::Serialize;

use std::collections::BTreeMap;

use kueuesim_engine::bound::{Constraint, shares};
use kueuesim_engine::outcome::{ClusterQueueTally, Durations, QueueSamples, Tally};
use kueuesim_model::resources::GPU;
use kueuesim_model::{ClusterQueueId, LocalQueueId, SimDuration, World};

use crate::output::Percentiles;
use crate::percentiles::{from_total_key, millis_secs, percentiles_of_sorted, total_key};

/// The bound of bounded slowdown, in seconds (Tiresias, Gavel): a job's slowdown is its
/// completion time over its run time, the run time taken as at least this long so that very
/// short jobs do not dominate.
pub const SLOWDOWN_BOUND_SECONDS: f64 = 10.0;

/// The figures shared by `clusterQueues[]` and `localQueues[]` (flattened into each).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueFigures {
    /// Arrived workloads of the queue.
    pub workloads: u64,
    pub finished_workloads: u64,
    /// Workloads Pending at the end (never admitted, or requeued and not yet readmitted).
    pub pending_workloads: u64,
    /// Evictions of its workloads by a preemptor (Kueue preemption, KAI reclaim).
    pub preemptions_suffered: u64,
    /// Workloads its workloads preempted, in any queue.
    pub preemptions_caused: u64,
    /// Creation to the latest admission, over the queue's workloads, each one Pending at the
    /// end counted at its wait so far (creation to the end of the run): censored, a lower
    /// bound of its wait, so the percentiles are lower bounds too.
    pub wait_seconds_incl_pending: Percentiles,
    /// Creation to the latest admission, over workloads holding (or, finished or evicted,
    /// having held) an admission at the end — the run-wide `waitSecondsAdmitted` meaning.
    /// Includes time a preempted workload spent running before its readmission.
    pub wait_seconds_admitted: Percentiles,
    /// Time in queue: the time Pending (holding no quota) before the latest admission,
    /// summed over readmissions (back-off included), each workload Pending at the end at its
    /// time in queue so far.
    pub time_in_queue_seconds_incl_pending: Percentiles,
    /// `timeInQueueSecondsInclPending` over the workloads of `waitSecondsAdmitted` alone.
    pub time_in_queue_seconds_admitted: Percentiles,
    /// Job completion time: creation to finish, over finished workloads.
    pub jct_seconds_finished: Percentiles,
    /// (wait + run) / max(run, 10 s) over finished workloads: JCT over the run time the
    /// workload needs alone (its duration), bounded below by `SLOWDOWN_BOUND_SECONDS`.
    pub bounded_slowdown_finished: Percentiles,
    /// GPU-hours its workloads' pods held (quota-only: admitted GPUs while running).
    pub gpu_hours_used: f64,
    /// GPU-hours of work its workloads lost to evictions of any reason (run time a restart
    /// throws away; not what a checkpoint kept).
    pub gpu_hours_lost: f64,
    /// GPU-hours of admitted GPU quota its workloads held while their pods were not all
    /// running (from each admission until all pods ran, or until the eviction if they never
    /// did: a gang admitted by Kueue that its scheduler cannot place until PodsReadyTimeout).
    pub gpu_hours_held_not_running: f64,
    /// Nominal GPU quota of the ClusterQueue (for a LocalQueue: of its ClusterQueue), all
    /// flavors.
    pub nominal_gpu_quota: i64,
    /// GPU-hours used over the GPU capacity of the run (`summary.gpu.capacity`) × its length:
    /// the queue's part of the run-wide utilisation.
    pub gpu_utilization_of_capacity: Option<f64>,
    /// GPU-hours used over nominal GPU quota × run length (above 1 when borrowing).
    pub gpu_utilization_of_nominal_quota: Option<f64>,
}

impl QueueFigures {
    /// The six distributions, in the order the queue table and `queues.csv` give them.
    pub fn distributions(&self) -> [&Percentiles; 6] {
        [
            &self.wait_seconds_incl_pending,
            &self.wait_seconds_admitted,
            &self.time_in_queue_seconds_incl_pending,
            &self.time_in_queue_seconds_admitted,
            &self.jct_seconds_finished,
            &self.bounded_slowdown_finished,
        ]
    }
}

/// One LocalQueue's figures.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalQueueSummary {
    pub namespace: String,
    pub name: String,
    pub cluster_queue: String,
    /// Workloads it admitted at least once.
    pub admitted_workloads: u64,
    /// Evictions of its workloads.
    pub evictions: u64,
    #[serde(flatten)]
    pub figures: QueueFigures,
    /// What held its workloads back: each constraint's share of their pending
    /// workload-seconds (`pending_bound_by`).
    pub pending_bound_by: BTreeMap<String, f64>,
}

/// `pendingBoundBy` of a queue from its pending milliseconds per constraint (the run's
/// `PendingBound`): each constraint's share (`bound::shares`), keyed by its name.
/// Empty when the queue had no pending time; else the shares sum to 1.
pub fn pending_bound_by(
    world: &World,
    ms: Option<&BTreeMap<Constraint, u64>>,
) -> BTreeMap<String, f64> {
    ms.map(shares)
        .unwrap_or_default()
        .into_iter()
        .map(|(c, share)| (c.name(world), share))
        .collect()
}

/// One ClusterQueue's quota of one resource, summed over its flavors, in the resource's
/// units (cpu in cores, memory in bytes, others as counted): `clusterQueues[].quota`, which
/// `compare` reads to tell what changed between two runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaOut {
    pub nominal: f64,
    /// Absent: unlimited (some flavor sets none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub borrowing_limit: Option<f64>,
    /// Absent: all of nominal may be lent (some flavor sets none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lending_limit: Option<f64>,
}

/// ClusterQueue `cq`'s quota per resource (by name), summed over its flavors.
pub fn quota_of(world: &World, cq: &kueuesim_model::ClusterQueue) -> BTreeMap<String, QuotaOut> {
    let mut out: BTreeMap<String, (i64, Option<i64>, Option<i64>)> = BTreeMap::new();
    for rq in cq
        .resource_groups
        .iter()
        .flat_map(|rg| &rg.flavors)
        .flat_map(|f| &f.resources)
    {
        let e = out
            .entry(world.resources.name(rq.resource).to_string())
            .or_insert((0, Some(0), Some(0)));
        e.0 += rq.nominal;
        e.1 = e.1.zip(rq.borrowing_limit).map(|(a, b)| a + b);
        e.2 = e.2.zip(rq.lending_limit).map(|(a, b)| a + b);
    }
    out.into_iter()
        .map(|(r, (nominal, bl, ll))| {
            // Kueue keeps cpu in millicores; the figure is in cores.
            let unit = |a: i64| {
                if r == "cpu" {
                    a as f64 / 1000.0
                } else {
                    a as f64
                }
            };
            let q = QuotaOut {
                nominal: unit(nominal),
                borrowing_limit: bl.map(unit),
                lending_limit: ll.map(unit),
            };
            (r, q)
        })
        .collect()
}

/// No durations: the other half of a measure without pending ones.
static EMPTY: Durations = Durations::new();

/// The durations a report's percentiles are taken over: its tally's, and a lean run's
/// finished workloads' read where the run left them (`LeanOutcome::tally`) rather than
/// copied into the report's tally (a million workloads hold tens of megabytes of them).
#[derive(Clone, Copy)]
pub struct Samples<'t> {
    tallies: [Option<&'t Tally>; 2],
}

impl<'t> Samples<'t> {
    /// Those of `tally` and, for a lean run, of its finished workloads (`finished`).
    pub fn new(tally: &'t Tally, finished: Option<&'t Tally>) -> Self {
        Samples {
            tallies: [Some(tally), finished],
        }
    }

    fn tallies(self) -> impl Iterator<Item = &'t Tally> + Clone {
        self.tallies.into_iter().flatten()
    }

    /// Every admitted workload's wait (`Tally::waits`).
    pub fn waits(self) -> impl Iterator<Item = SimDuration> + Clone + 't {
        self.tallies().flat_map(|t| t.waits.iter())
    }

    /// Every workload's time to start (`Tally::starts`), Kueue's or not.
    pub fn starts(self) -> impl Iterator<Item = SimDuration> + Clone + 't {
        self.tallies().flat_map(|t| t.starts.iter())
    }

    /// Every queue's durations: the run-wide figures'.
    pub fn all(self) -> impl Iterator<Item = &'t QueueSamples> + Clone {
        self.tallies().flat_map(Tally::all_samples)
    }

    /// ClusterQueue `cq`'s.
    pub fn cluster_queue(
        self,
        cq: ClusterQueueId,
    ) -> impl Iterator<Item = &'t QueueSamples> + Clone {
        self.tallies()
            .flat_map(move |t| t.cluster_queue_samples(cq))
    }

    /// LocalQueue `lq`'s.
    pub fn local_queue(self, lq: LocalQueueId) -> impl Iterator<Item = &'t QueueSamples> + Clone {
        self.tallies().flat_map(move |t| t.local_queue_samples(lq))
    }
}

/// The nominal GPU quota of every ClusterQueue (all flavors), by index.
pub fn nominal_gpu_quota(world: &World) -> Vec<i64> {
    let gpu = world.resources.lookup(GPU);
    world
        .cluster_queues
        .iter()
        .map(|cq| {
            cq.resource_groups
                .iter()
                .flat_map(|rg| &rg.flavors)
                .flat_map(|fq| &fq.resources)
                .filter(|rq| Some(rq.resource) == gpu)
                .map(|rq| rq.nominal)
                .sum()
        })
        .collect()
}

/// The distributions of `QueueFigures`, as `FigureMemo` keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Measure {
    WaitInclPending,
    WaitAdmitted,
    QueuedInclPending,
    QueuedAdmitted,
    Jct,
    BoundedSlowdown,
}

/// Percentiles already taken for one report, by what they were taken over: a measure and
/// the `QueueSamples` it read, in order (by address: the memo borrows them, so none moves or
/// goes while it lives). A ClusterQueue with a single LocalQueue reads the same samples as
/// that LocalQueue, and without pending workloads a measure "including pending" reads what
/// its admitted-only twin reads: each such distribution is collected and sorted once (a
/// million workloads' durations are most of a report's time). Same input, same figures.
///
/// The run-wide figures read every ClusterQueue's samples (`split`): each ClusterQueue's
/// list is sorted apart, its figures kept for its own call, and the sorted lists merged
/// rather than every workload's durations sorted once more.
#[derive(Default)]
pub struct FigureMemo<'t> {
    taken: BTreeMap<(Measure, Vec<*const QueueSamples>), Percentiles>,
    /// Parts that a distribution over all of them together is taken from: the
    /// ClusterQueues' samples, which partition the run-wide ones.
    parts: Vec<Vec<&'t QueueSamples>>,
    /// The addresses of every group of `parts`, sorted: worked out once, not on every
    /// distribution taken (a report over thousands of LocalQueues takes thousands).
    union: Vec<*const QueueSamples>,
}

impl<'t> FigureMemo<'t> {
    /// Distributions over exactly the union of `parts` (disjoint, each a ClusterQueue's
    /// samples) are taken part by part, each part's figures kept under its own key.
    pub fn split(&mut self, parts: Vec<Vec<&'t QueueSamples>>) {
        let mut union: Vec<_> = parts.iter().flat_map(|p| addresses(p)).collect();
        union.sort_unstable();
        self.union = union;
        self.parts = parts;
    }

    /// The percentiles of `measure` over `groups`' lists, taken once.
    fn take(&mut self, measure: Measure, groups: &[&'t QueueSamples]) -> Percentiles {
        let key = (measure, addresses(groups));
        if let Some(p) = self.taken.get(&key) {
            return p.clone();
        }
        // Taken by parts only over exactly their union (each group once).
        let split = groups.len() > 1 && groups.len() == self.union.len() && {
            let mut whole = addresses(groups);
            whole.sort_unstable();
            whole == self.union
        };
        let parts = if split {
            std::mem::take(&mut self.parts)
        } else {
            vec![groups.to_vec()]
        };
        let p = match measure {
            Measure::BoundedSlowdown => self.of_parts(measure, &parts, from_total_key, |s, v| {
                v.extend(s.completions.iter().map(|(j, run)| {
                    total_key(j.as_secs_f64() / run.as_secs_f64().max(SLOWDOWN_BOUND_SECONDS))
                }));
            }),
            Measure::Jct => self.of_parts(measure, &parts, millis_secs, |s, v| {
                v.extend(s.completions.iter().map(|(j, _)| j.millis()));
            }),
            _ => self.of_parts(measure, &parts, millis_secs, |s, v| {
                for d in lists(measure, s) {
                    v.extend(d.iter().map(SimDuration::millis));
                }
            }),
        };
        if split {
            self.parts = parts;
        }
        self.taken.insert(key, p.clone());
        p
    }

    /// `measure`'s percentiles over the keys `collect` writes of every group of `parts`:
    /// one part's sorted whole; several parts' sorted apart, each part's figures kept as its
    /// own key's (which its own call would take: the same list, the same sort), and the
    /// sorted parts merged.
    fn of_parts<K: Copy + Ord>(
        &mut self,
        measure: Measure,
        parts: &[Vec<&'t QueueSamples>],
        value: fn(K) -> f64,
        collect: impl Fn(&QueueSamples, &mut Vec<K>),
    ) -> Percentiles {
        // Collected at its length (a million workloads' durations, one at a time).
        let n = parts.iter().flatten().map(|s| list_len(measure, s)).sum();
        let mut keys = Vec::with_capacity(n);
        let mut starts = Vec::with_capacity(parts.len() + 1);
        starts.push(0);
        for part in parts {
            for &s in part {
                collect(s, &mut keys);
            }
            starts.push(keys.len());
        }
        if let [_] = parts {
            keys.sort_unstable();
            return percentiles_of_sorted(&keys, value);
        }
        for (r, part) in starts.windows(2).zip(parts) {
            let run = &mut keys[r[0]..r[1]];
            run.sort_unstable();
            self.taken
                .entry((own_measure(measure, part), addresses(part)))
                .or_insert_with(|| percentiles_of_sorted(run, value));
        }
        // The stable sort finds the sorted parts as runs and merges them (`slice::sort`,
        // driftsort), much cheaper than sorting the keys again. Keys equal only where their
        // values are the same bits: the one sorted list, whichever sort made it.
        keys.sort();
        percentiles_of_sorted(&keys, value)
    }
}

/// The memo's key of `groups`.
fn addresses(groups: &[&QueueSamples]) -> Vec<*const QueueSamples> {
    groups.iter().map(|&s| s as *const _).collect()
}

/// The durations `measure` reads of one `QueueSamples` (all but bounded slowdown).
fn lists(measure: Measure, s: &QueueSamples) -> [&Durations; 2] {
    match measure {
        Measure::WaitInclPending => [&s.waits, &s.pending_waits],
        Measure::WaitAdmitted => [&s.waits, &EMPTY],
        Measure::QueuedInclPending => [&s.queued, &s.pending_queued],
        Measure::QueuedAdmitted => [&s.queued, &EMPTY],
        Measure::Jct | Measure::BoundedSlowdown => [&EMPTY, &EMPTY],
    }
}

/// How many values `measure` reads of `s`.
fn list_len(measure: Measure, s: &QueueSamples) -> usize {
    match measure {
        Measure::Jct | Measure::BoundedSlowdown => s.completions.len(),
        _ => lists(measure, s).iter().map(|d| d.len()).sum(),
    }
}

/// The measure a queue whose durations are `groups`' takes for `measure`'s list (`figures`:
/// "including pending" without pending durations is the admitted-only list).
fn own_measure(measure: Measure, groups: &[&QueueSamples]) -> Measure {
    match measure {
        Measure::WaitInclPending if groups.iter().all(|s| s.pending_waits.is_empty()) => {
            Measure::WaitAdmitted
        }
        Measure::QueuedInclPending if groups.iter().all(|s| s.pending_queued.is_empty()) => {
            Measure::QueuedAdmitted
        }
        m => m,
    }
}

/// A queue's figures from its tally and the durations of its workloads (`samples`: the keys
/// of `Tally::samples` that are the queue's); `capacity` GPUs over `end_secs` for
/// utilisation. Each distribution is collected, sorted and let go of in turn, unless `memo`
/// already has it.
pub fn figures<'t>(
    t: &ClusterQueueTally,
    samples: impl Iterator<Item = &'t QueueSamples> + Clone,
    nominal: i64,
    capacity: i64,
    end_secs: f64,
    memo: &mut FigureMemo<'t>,
) -> QueueFigures {
    let hours = |ms: i128| ms as f64 / 3_600_000.0;
    let used = hours(t.gpu_ms);
    let share =
        |gpus: i64| (gpus > 0 && end_secs > 0.0).then(|| used * 3600.0 / (gpus as f64 * end_secs));
    let groups: Vec<&'t QueueSamples> = samples.collect();
    // Without pending durations, "including pending" is the admitted-only list.
    let wait_incl = own_measure(Measure::WaitInclPending, &groups);
    let queued_incl = own_measure(Measure::QueuedInclPending, &groups);
    QueueFigures {
        workloads: t.workloads,
        finished_workloads: t.finished,
        pending_workloads: t.pending,
        preemptions_suffered: t.preempted,
        preemptions_caused: t.preemptions_caused,
        wait_seconds_incl_pending: memo.take(wait_incl, &groups),
        wait_seconds_admitted: memo.take(Measure::WaitAdmitted, &groups),
        time_in_queue_seconds_incl_pending: memo.take(queued_incl, &groups),
        time_in_queue_seconds_admitted: memo.take(Measure::QueuedAdmitted, &groups),
        jct_seconds_finished: memo.take(Measure::Jct, &groups),
        bounded_slowdown_finished: memo.take(Measure::BoundedSlowdown, &groups),
        gpu_hours_used: used,
        gpu_hours_lost: hours(t.lost_gpu_ms),
        gpu_hours_held_not_running: hours(t.idle_quota_gpu_ms),
        nominal_gpu_quota: nominal,
        gpu_utilization_of_capacity: share(capacity),
        gpu_utilization_of_nominal_quota: share(nominal),
    }
}

/// Every LocalQueue's figures, in `World::local_queues` order.
pub fn local_queue_summaries<'t>(
    world: &World,
    tally: &Tally,
    samples: Samples<'t>,
    capacity: i64,
    end_secs: f64,
    memo: &mut FigureMemo<'t>,
) -> Vec<LocalQueueSummary> {
    let nominal = nominal_gpu_quota(world);
    world
        .local_queues
        .iter()
        .zip(&tally.local_queues)
        .enumerate()
        .map(|(i, (lq, t))| LocalQueueSummary {
            namespace: lq.namespace.clone(),
            name: lq.name.clone(),
            cluster_queue: world.cluster_queue(lq.cluster_queue).name.clone(),
            admitted_workloads: t.admitted_workloads,
            evictions: t.evictions,
            figures: figures(
                t,
                samples.local_queue(LocalQueueId::from_index(i)),
                nominal[lq.cluster_queue.index()],
                capacity,
                end_secs,
                memo,
            ),
            pending_bound_by: BTreeMap::new(),
        })
        .collect()
}

/// The run-wide counts: every ClusterQueue's together (their durations are all of
/// `Tally::samples`).
pub fn all_queues(tally: &Tally) -> ClusterQueueTally {
    let mut all = ClusterQueueTally::default();
    for t in &tally.cluster_queues {
        all.merge(t);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures to compare bit for bit.
    fn bits(f: &QueueFigures) -> Vec<Option<u64>> {
        f.distributions()
            .into_iter()
            .flat_map(|p| {
                [
                    Some(p.count),
                    p.mean.map(f64::to_bits),
                    p.p50.map(f64::to_bits),
                    p.p90.map(f64::to_bits),
                    p.p95.map(f64::to_bits),
                    p.p99.map(f64::to_bits),
                    p.max.map(f64::to_bits),
                ]
            })
            .collect()
    }

    /// The run-wide figures taken from the ClusterQueues' sorted parts (`FigureMemo::split`)
    /// are those of the whole lists sorted, and so are each part's figures the memo keeps:
    /// groups with and without pending durations, empty ones, repeated and long durations.
    #[test]
    fn split_figures_are_the_whole_lists() {
        let mut state = 7u64;
        let mut draw = |m: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % m
        };
        let groups: Vec<QueueSamples> = (0..7)
            .map(|g| {
                let mut s = QueueSamples::default();
                let n = if g == 3 { 0 } else { draw(400) };
                let ms = |x: u64| SimDuration::from_millis(x as i64);
                for _ in 0..n {
                    // Now and then a duration too long for 32 bits.
                    let long = if draw(50) == 0 { 1 << 33 } else { 0 };
                    s.waits.push(ms(draw(90_000) + long));
                    s.queued.push(ms(draw(3_000)));
                    s.completions.push(ms(draw(200_000)), ms(draw(100_000)));
                    if g % 2 == 0 {
                        s.pending_waits.push(ms(draw(70_000)));
                        s.pending_queued.push(ms(draw(700)));
                    }
                }
                s
            })
            .collect();
        let t = ClusterQueueTally::default();
        let all: Vec<&QueueSamples> = groups.iter().collect();
        // Parts as ClusterQueues would have them, one of them empty, in another order.
        let parts: Vec<Vec<&QueueSamples>> = vec![
            vec![all[4], all[0]],
            vec![],
            vec![all[1]],
            vec![all[6], all[2], all[3], all[5]],
        ];
        let mut split = FigureMemo::default();
        split.split(parts.clone());
        let merged = figures(&t, all.iter().copied(), 0, 8, 3600.0, &mut split);
        let whole = figures(
            &t,
            all.iter().copied(),
            0,
            8,
            3600.0,
            &mut FigureMemo::default(),
        );
        assert_eq!(bits(&merged), bits(&whole));
        for part in parts {
            let kept = figures(&t, part.iter().copied(), 0, 8, 3600.0, &mut split);
            let fresh = figures(
                &t,
                part.iter().copied(),
                0,
                8,
                3600.0,
                &mut FigureMemo::default(),
            );
            assert_eq!(bits(&kept), bits(&fresh));
        }
    }
}
