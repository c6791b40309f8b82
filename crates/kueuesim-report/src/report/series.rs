//! `PlottedSeries`: what report.html reads of the time series, kept as change points per
//! column (a value is kept where it differs from the sample before), so the page's memory
//! follows the changes of the run, not queues × samples: 1,000 queues idle for ten years
//! sampled every minute are a thousand points, not five billion. The panels read a column
//! back sample by sample (`Column::iter`), never whole.

use std::collections::BTreeMap;

use kueuesim_engine::outcome::{GpuSharingFigures, Sample};
use kueuesim_model::{SimDuration, SimTime, Workload, World};

use super::spines::OneSpineGangs;

/// One column of the time series as its change points: (first sample index, value), each
/// value holding until the next point's index (the last one's up to the series' end).
#[derive(Clone, Debug)]
pub(crate) struct Steps<T> {
    points: Vec<(usize, T)>,
}

impl<T> Default for Steps<T> {
    fn default() -> Self {
        Steps { points: Vec::new() }
    }
}

impl<T: Copy + PartialEq> Steps<T> {
    /// The value from sample `at` on (a point only if it differs from the last one).
    fn set(&mut self, at: usize, v: T) {
        if self.points.last().is_none_or(|p| p.1 != v) {
            self.points.push((at, v));
        }
    }

    /// The change points kept.
    pub(crate) fn points(&self) -> usize {
        self.points.len()
    }

    /// The values of samples `0..len`, one by one.
    fn iter(&self, len: usize) -> impl Iterator<Item = T> + '_ {
        self.points
            .iter()
            .enumerate()
            .flat_map(move |(k, &(from, v))| {
                let to = self.points.get(k + 1).map_or(len, |p| p.0);
                std::iter::repeat_n(v, to - from)
            })
    }

    /// Every value some sample has (each point's: a point holds for at least one sample).
    fn distinct(&self) -> impl Iterator<Item = T> + '_ {
        self.points.iter().map(|p| p.1)
    }

    /// The change points: (first sample index, value).
    pub(crate) fn runs(&self) -> &[(usize, T)] {
        &self.points
    }
}

impl Steps<i64> {
    /// The sum of `columns`, sample by sample (integers: exact in any order).
    fn sum<'a>(columns: impl IntoIterator<Item = &'a Steps<i64>>) -> Steps<i64> {
        // Each point as the change it makes to the sum, in sample order.
        let mut changes: Vec<(usize, i64)> = Vec::new();
        for c in columns {
            let mut was = 0;
            for &(at, v) in &c.points {
                changes.push((at, v - was));
                was = v;
            }
        }
        changes.sort_by_key(|c| c.0);
        let mut out = Steps::default();
        let mut total = 0;
        let mut k = 0;
        while k < changes.len() {
            let at = changes[k].0;
            while k < changes.len() && changes[k].0 == at {
                total += changes[k].1;
                k += 1;
            }
            out.set(at, total);
        }
        // A sum of no column, or of columns all starting later, is 0 from the first sample.
        if out.points.first().is_none_or(|p| p.0 > 0) {
            out.points.insert(0, (0, 0));
            if out.points.get(1).is_some_and(|p| p.1 == 0) {
                out.points.remove(1);
            }
        }
        out
    }

    /// The largest of `columns`, sample by sample (each column holding a value from sample
    /// 0: a column of the series always has a point there). A multiset of the current values
    /// keeps each change at a logarithm's cost, so many columns of many changes stay cheap.
    fn max_of<'a>(columns: impl IntoIterator<Item = &'a Steps<i64>>) -> Steps<i64> {
        let mut changes: Vec<(usize, i64, i64)> = Vec::new();
        for c in columns {
            let mut was: Option<i64> = None;
            for &(at, v) in &c.points {
                changes.push((at, was.unwrap_or(i64::MIN), v));
                was = Some(v);
            }
        }
        changes.sort_by_key(|c| c.0);
        let mut held: BTreeMap<i64, usize> = BTreeMap::new();
        let mut out = Steps::default();
        let mut k = 0;
        while k < changes.len() {
            let at = changes[k].0;
            while k < changes.len() && changes[k].0 == at {
                let (_, old, new) = changes[k];
                if old != i64::MIN
                    && let Some(n) = held.get_mut(&old)
                {
                    *n -= 1;
                    if *n == 0 {
                        held.remove(&old);
                    }
                }
                *held.entry(new).or_insert(0) += 1;
                k += 1;
            }
            if let Some((&top, _)) = held.last_key_value() {
                out.set(at, top);
            }
        }
        out
    }
}

/// A column read back: its values as `f64` for the plots.
pub(crate) struct Column<'a> {
    steps: std::borrow::Cow<'a, Steps<i64>>,
    len: usize,
}

impl Column<'_> {
    /// Each sample's value, in time order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = f64> + '_ {
        self.steps.iter(self.len).map(|v| v as f64)
    }

    /// Every value some sample has, each at least once (in no useful order).
    pub(crate) fn distinct(&self) -> impl Iterator<Item = f64> + '_ {
        self.steps.distinct().map(|v| v as f64)
    }

    /// The largest value of any sample (`floor` when larger, or when there is no sample).
    pub(crate) fn max(&self, floor: f64) -> f64 {
        self.distinct().fold(floor, f64::max)
    }

    /// Whether every sample is 0.
    pub(crate) fn all_zero(&self) -> bool {
        self.steps.distinct().all(|v| v == 0)
    }

    /// The runs of equal values: (first sample, last sample + 1, value), in order.
    pub(crate) fn runs(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        let points = self.steps.runs();
        points.iter().enumerate().map(move |(k, &(from, v))| {
            let to = points.get(k + 1).map_or(self.len, |p| p.0);
            (from, to, v as f64)
        })
    }
}

/// What the page reads of the time series: of each sample its time, the GPUs bound, the GPU
/// quota held per ClusterQueue, the pending workloads per LocalQueue, the free GPUs per
/// spine and, with GPU devices, their allocation and fragmentation; each column as its
/// change points (`Steps`), the times as runs of a fixed step. Beside them, per
/// ClusterQueue the largest gang the run admitted that must fit in one spine
/// (`note_admitted`), the free-GPU panel's references.
#[derive(Default)]
pub struct PlottedSeries {
    len: usize,
    /// Runs of sample times: (first sample index, its time, step), a run lasting until the
    /// next one's first index.
    times: Vec<(usize, SimTime, SimDuration)>,
    gpus_in_use: Steps<i64>,
    gpu_quota_by_cq: Vec<Steps<i64>>,
    pending_by_lq: Vec<Steps<i64>>,
    /// Per spine (`outcome::spine_domains`), its free GPUs; empty without spines or GPUs.
    free_gpus_by_spine: Vec<Steps<i64>>,
    /// Per ClusterQueue, the largest gang admitted that must fit in one spine.
    one_spine: OneSpineGangs,
    /// With GPU devices, their allocation and fragmentation (None in a sample without).
    gpu_sharing: Steps<Option<GpuSharingFigures>>,
}

impl PlottedSeries {
    /// An empty series for `world`'s queues.
    pub fn new(world: &World) -> Self {
        let one_spine = OneSpineGangs::new(world);
        PlottedSeries {
            gpu_quota_by_cq: vec![Steps::default(); world.cluster_queues.len()],
            pending_by_lq: vec![Steps::default(); world.local_queues.len()],
            free_gpus_by_spine: vec![Steps::default(); one_spine.spine_columns()],
            one_spine,
            ..PlottedSeries::default()
        }
    }

    /// A series of `spines` free-GPU columns and nothing else, for tests.
    #[cfg(test)]
    pub(crate) fn for_spines(spines: usize) -> Self {
        PlottedSeries {
            free_gpus_by_spine: vec![Steps::default(); spines],
            ..PlottedSeries::default()
        }
    }

    /// Notes a workload Kueue admitted (or that finished): per ClusterQueue, the largest of
    /// those that must fit in one spine is a reference line of the free-GPU panel.
    pub fn note_admitted(&mut self, wl: &Workload) {
        self.one_spine.note(wl);
    }

    /// Keeps what the page reads of `count` samples of one state: `first`, then the same at
    /// `first.at + step`, … (`RunSink::samples`).
    pub fn push(&mut self, first: &Sample, count: u64, step: SimDuration) {
        debug_assert_eq!(first.gpu_quota_by_cq.len(), self.gpu_quota_by_cq.len());
        debug_assert_eq!(first.pending_by_lq.len(), self.pending_by_lq.len());
        debug_assert_eq!(
            first.free_gpus_by_spine.len(),
            self.free_gpus_by_spine.len()
        );
        if count == 0 {
            return;
        }
        let i = self.len;
        let continues = self.times.last().is_some_and(|&(from, at, s)| {
            s == step && at.millis() + (i - from) as i64 * s.millis() == first.at.millis()
        });
        if !continues {
            self.times.push((i, first.at, step));
        }
        self.gpus_in_use.set(i, first.gpus_in_use);
        for (col, &v) in self.gpu_quota_by_cq.iter_mut().zip(&first.gpu_quota_by_cq) {
            col.set(i, v);
        }
        for (col, &v) in self.pending_by_lq.iter_mut().zip(&first.pending_by_lq) {
            col.set(i, i64::from(v));
        }
        for (col, &v) in self
            .free_gpus_by_spine
            .iter_mut()
            .zip(&first.free_gpus_by_spine)
        {
            col.set(i, v);
        }
        self.gpu_sharing.set(i, first.gpu_sharing);
        self.len += count as usize;
    }

    /// The samples kept.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no sample was kept.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The change points held over all columns: what the series costs.
    pub fn points(&self) -> usize {
        self.gpus_in_use.points()
            + self
                .gpu_quota_by_cq
                .iter()
                .map(Steps::points)
                .sum::<usize>()
            + self.pending_by_lq.iter().map(Steps::points).sum::<usize>()
            + self
                .free_gpus_by_spine
                .iter()
                .map(Steps::points)
                .sum::<usize>()
            + self.gpu_sharing.points()
    }

    /// The time of sample `i`, in seconds.
    pub(crate) fn time(&self, i: usize) -> f64 {
        let k = self.times.partition_point(|r| r.0 <= i) - 1;
        let (from, at, step) = self.times[k];
        SimTime::from_millis(at.millis() + (i - from) as i64 * step.millis()).as_secs_f64()
    }

    /// Every sample's time in seconds, in order.
    pub(crate) fn times(&self) -> impl Iterator<Item = f64> + '_ {
        (0..self.len).map(move |i| self.time(i))
    }

    /// GPUs bound to pods.
    pub(crate) fn gpus_in_use(&self) -> Column<'_> {
        self.column(&self.gpus_in_use)
    }

    /// GPU quota held by ClusterQueue `c`.
    pub(crate) fn quota(&self, c: usize) -> Column<'_> {
        self.column(&self.gpu_quota_by_cq[c])
    }

    /// GPU quota held by the ClusterQueues `cs` together.
    pub(crate) fn quota_of(&self, cs: impl IntoIterator<Item = usize>) -> Column<'_> {
        let sum = Steps::sum(cs.into_iter().map(|c| &self.gpu_quota_by_cq[c]));
        Column {
            steps: std::borrow::Cow::Owned(sum),
            len: self.len,
        }
    }

    /// Pending workloads of LocalQueue `l`.
    pub(crate) fn pending(&self, l: usize) -> Column<'_> {
        self.column(&self.pending_by_lq[l])
    }

    /// Pending workloads of the LocalQueues `ls` together.
    pub(crate) fn pending_of(&self, ls: impl IntoIterator<Item = usize>) -> Column<'_> {
        let sum = Steps::sum(ls.into_iter().map(|l| &self.pending_by_lq[l]));
        Column {
            steps: std::borrow::Cow::Owned(sum),
            len: self.len,
        }
    }

    /// Spines with a free-GPU column (`outcome::spine_domains`' order).
    pub(crate) fn spines(&self) -> usize {
        self.free_gpus_by_spine.len()
    }

    /// GPUs free in spine `s`.
    pub(crate) fn free_gpus(&self, s: usize) -> Column<'_> {
        self.column(&self.free_gpus_by_spine[s])
    }

    /// The most GPUs free in any one of the spines `ss`, sample by sample.
    pub(crate) fn most_free_of(&self, ss: impl IntoIterator<Item = usize>) -> Column<'_> {
        let max = Steps::max_of(ss.into_iter().map(|s| &self.free_gpus_by_spine[s]));
        Column {
            steps: std::borrow::Cow::Owned(max),
            len: self.len,
        }
    }

    /// Per ClusterQueue (`None`: of none), the largest gang admitted that must fit in one
    /// spine: its GPUs and `namespace/name`.
    pub(crate) fn largest_one_spine_gangs(
        &self,
    ) -> impl Iterator<Item = (Option<usize>, i64, &str)> + '_ {
        self.one_spine.largest()
    }

    /// With GPU devices in every sample, their figures sample by sample; None otherwise.
    pub(crate) fn gpu_sharing(
        &self,
    ) -> Option<impl Iterator<Item = GpuSharingFigures> + Clone + '_> {
        if self.len == 0 || self.gpu_sharing.distinct().any(|f| f.is_none()) {
            return None;
        }
        Some(
            self.gpu_sharing
                .points
                .iter()
                .enumerate()
                .flat_map(move |(k, &(from, v))| {
                    let to = self.gpu_sharing.points.get(k + 1).map_or(self.len, |p| p.0);
                    std::iter::repeat_n(v.expect("checked"), to - from)
                }),
        )
    }

    fn column<'a>(&'a self, steps: &'a Steps<i64>) -> Column<'a> {
        Column {
            steps: std::borrow::Cow::Borrowed(steps),
            len: self.len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at: i64, quota: [i64; 3]) -> Sample {
        Sample {
            at: SimTime::from_millis(at),
            gpus_in_use: quota.iter().sum(),
            gpu_quota_by_cq: quota.to_vec(),
            gpu_quota_by_flavor: Vec::new(),
            gpu_quota_by_cq_flavor: Vec::new(),
            reserving_by_cq: Vec::new(),
            admitted_by_cq: Vec::new(),
            pending_active: Vec::new(),
            pending_inadmissible: Vec::new(),
            pending_by_lq: vec![0],
            pending_inadmissible_by_lq: Vec::new(),
            gangs_by_spine: Vec::new(),
            free_gpus_by_spine: Vec::new(),
            gpu_sharing: None,
        }
    }

    #[test]
    fn columns_read_back_every_sample_and_keep_only_changes() {
        let mut s = PlottedSeries {
            gpu_quota_by_cq: vec![Steps::default(); 3],
            pending_by_lq: vec![Steps::default(); 1],
            ..PlottedSeries::default()
        };
        let step = SimDuration::from_millis(60_000);
        s.push(&sample(0, [0, 0, 0]), 3, step);
        s.push(&sample(180_000, [4, 0, 0]), 1, step);
        s.push(&sample(240_000, [4, 2, 0]), 1_000_000, step);
        assert_eq!(s.len(), 1_000_004);
        // Two changes of the first queue, two of the second, one point of the idle third and of
        // the pending column; the times are one run.
        assert_eq!(s.quota(0).steps.points(), 2);
        assert_eq!(s.quota(2).steps.points(), 1);
        assert_eq!(s.times.len(), 1);
        let q1: Vec<f64> = s.quota(1).iter().take(6).collect();
        assert_eq!(q1, [0.0, 0.0, 0.0, 0.0, 2.0, 2.0]);
        assert_eq!(s.time(1_000_003), 60_000_180.0);
        let sum: Vec<f64> = s.quota_of([0, 1, 2]).iter().take(6).collect();
        assert_eq!(sum, [0.0, 0.0, 0.0, 4.0, 6.0, 6.0]);
        assert_eq!(s.quota_of([2]).iter().count(), 1_000_004);
        assert_eq!(s.quota_of([0, 1]).max(1.0), 6.0);
        assert!(s.pending_of([0]).all_zero());
    }
}
