//! The panels of report.html, each an aggregate bounded in size whatever the trace: GPUs bound
//! against capacity and nominal quota, the wait CDF per ClusterQueue, quota held by
//! ClusterQueue, fair sharing or quota share, pending workloads per LocalQueue, GPU device
//! allocation and fragmentation, evictions, and the topology at the end.

use std::collections::BTreeMap;
use std::fmt::Write;

use kueuesim_model::World;

use super::PlottedSeries;
use super::axis::{duration, time_step, time_ticks, value_ticks};
use super::plot::{
    Frame, H, MAX_LINES, Mark, REF, W, buckets, esc, keep_top, means, min_max, path, section, style,
};
use super::series::Column;
use crate::output::{SimulationResult, WorkloadOut};

/// Ticks a time axis aims for.
const X_TICKS: usize = 6;
/// Ticks a value axis aims for.
const Y_TICKS: usize = 5;
/// Points a CDF draws at most (quantiles; the exact steps below this many workloads).
const CDF_POINTS: usize = 200;
/// Bars of the eviction histogram at most (the bin is the round duration that fits).
const EVICTION_BINS: usize = 120;
/// Spine rows the topology panel draws at most.
const TOPOLOGY_ROWS: usize = 32;

/// What the time panels share: the series, the buckets, and the x axis (to the end of the
/// run). A panel reads each column it draws sample by sample into at most two points a
/// bucket (`line`) or one mean a bucket (`means`), so drawing holds no column whole.
pub(super) struct Timeline<'a> {
    series: &'a PlottedSeries,
    buckets: Vec<std::ops::Range<usize>>,
    end: f64,
}

impl<'a> Timeline<'a> {
    pub(super) fn new(series: &'a PlottedSeries, end: f64) -> Timeline<'a> {
        let last = series.len().checked_sub(1).map_or(0.0, |i| series.time(i));
        let end = last.max(end).max(60.0);
        Timeline {
            series,
            buckets: buckets(series.len()),
            end,
        }
    }
    /// The series drawn.
    pub(super) fn series(&self) -> &'a PlottedSeries {
        self.series
    }
    /// The end of the x axis, in seconds.
    pub(super) fn end(&self) -> f64 {
        self.end
    }
    pub(super) fn frame(&self, y_max: f64, integer: bool) -> Frame {
        Frame::new(
            self.end,
            time_ticks(self.end, X_TICKS),
            value_ticks(y_max, Y_TICKS, integer),
        )
    }
    /// A line through `values` (every sample's, in order), its min and max kept per bucket.
    pub(super) fn line(&self, f: &Frame, values: impl IntoIterator<Item = f64>) -> String {
        path(
            min_max(values, &self.buckets)
                .into_iter()
                .map(|(i, v)| (f.x(self.series.time(i)), f.y(v))),
        )
    }
    /// Each bucket's mean of `values` (every sample's, in order).
    fn means(&self, values: impl IntoIterator<Item = f64>) -> Vec<f64> {
        means(values, &self.buckets)
    }
}

pub(super) fn line_el(d: &str, s: super::plot::Style, width: f64, title: &str) -> String {
    format!(
        r##"<path class="data" d="{d}" fill="none" stroke="{}" stroke-width="{width}" stroke-dasharray="{}"><title>{}</title></path>"##,
        s.color,
        s.dash,
        esc(title)
    )
}

/// A horizontal reference line across the frame at `v`, labelled at its right end, above the
/// line or (`below`, for the lower of two close lines) under it.
pub(super) fn ref_line(f: &Frame, v: f64, dash: &str, label: &str, below: bool) -> String {
    let y = f.y(v);
    let ly = if below { y + 11.0 } else { y - 4.0 };
    format!(
        r##"<path class="data ref" d="M{:.1},{y:.1}L{:.1},{y:.1}" stroke="{REF}" stroke-width="1.5" stroke-dasharray="{dash}"><title>{l}</title></path><text class="reflabel" x="{:.1}" y="{:.1}" text-anchor="end">{l}</text>"##,
        f.x(0.0),
        f.right(),
        f.right() - 4.0,
        ly,
        l = esc(label)
    )
}

/// The GPUs of every node (`None` without nodes: a quota-only run).
pub(super) fn node_gpus(world: &World) -> Option<i64> {
    let gpu = world.resources.lookup(kueuesim_model::resources::GPU)?;
    let total: i64 = world
        .nodes
        .iter()
        .map(|n| n.allocatable.get(gpu.index()).copied().unwrap_or(0))
        .sum();
    (total > 0).then_some(total)
}

/// Nominal GPU quota of every ClusterQueue and Cohort (a Cohort's own quota is shared by its
/// subtree, so it is quota the queues can reach as much as theirs).
pub(super) fn nominal_gpus(world: &World) -> i64 {
    let Some(gpu) = world.resources.lookup(kueuesim_model::resources::GPU) else {
        return 0;
    };
    world
        .cluster_queues
        .iter()
        .flat_map(|c| &c.resource_groups)
        .chain(world.cohorts.iter().flat_map(|c| &c.resource_groups))
        .flat_map(|rg| &rg.flavors)
        .flat_map(|fq| &fq.resources)
        .filter(|rq| rq.resource == gpu)
        .map(|rq| rq.nominal)
        .sum()
}

/// GPUs bound to pods and GPU quota held over time, against the nodes' GPUs and the
/// ClusterQueues' nominal GPU quota.
pub(super) fn gpus_over_time(world: &World, t: &Timeline<'_>) -> String {
    let bound = t.series.gpus_in_use();
    let held = t.series.quota_of(0..world.cluster_queues.len());
    let capacity = node_gpus(world);
    let nominal = Some(nominal_gpus(world)).filter(|&n| n > 0);
    let y_max = capacity
        .map(|c| c as f64)
        .into_iter()
        .chain(nominal.map(|n| n as f64))
        .fold(held.max(bound.max(1.0)), f64::max);
    let f = t.frame(y_max * 1.04, true);
    let mut body = f.axes("time since start", "GPUs");
    let mut keys = Vec::new();
    match (capacity, nominal) {
        (Some(c), Some(n)) if c == n => {
            body.push_str(&ref_line(
                &f,
                c as f64,
                "6 3",
                &format!("node GPUs = nominal quota: {c}"),
                false,
            ));
            keys.push(("node GPUs = nominal GPU quota".into(), Mark::Ref("6 3")));
        }
        _ => {
            // The lower line's label goes under it, so two close lines keep apart labels.
            let (c, n) = (capacity.unwrap_or(0), nominal.unwrap_or(0));
            if let Some(c) = capacity {
                body.push_str(&ref_line(
                    &f,
                    c as f64,
                    "6 3",
                    &format!("node GPUs: {c}"),
                    c < n,
                ));
                keys.push(("node GPUs (capacity)".into(), Mark::Ref("6 3")));
            }
            if let Some(n) = nominal {
                body.push_str(&ref_line(
                    &f,
                    n as f64,
                    "2 3",
                    &format!("nominal quota: {n}"),
                    n < c,
                ));
                keys.push((
                    "nominal GPU quota (ClusterQueues and Cohorts)".into(),
                    Mark::Ref("2 3"),
                ));
            }
        }
    }
    let (held_style, bound_style) = (style(1), style(0));
    // Quota held is drawn wide underneath, so where it equals GPUs bound it shows as a rim.
    body.push_str(&line_el(
        &t.line(&f, held.iter()),
        held_style,
        4.0,
        "GPU quota held",
    ));
    body.push_str(&line_el(
        &t.line(&f, bound.iter()),
        bound_style,
        1.5,
        "GPUs bound",
    ));
    keys.push(("GPUs bound to pods".into(), Mark::Line(bound_style)));
    keys.push((
        "GPU quota held (admitted workloads)".into(),
        Mark::Line(held_style),
    ));
    section(
        "gpus",
        "GPUs bound over time, against capacity and nominal quota",
        H,
        &body,
        &keys,
        "Quota held above GPUs bound is quota admitted workloads hold while their pods wait for \
         nodes; quota held above the nominal line is borrowed.",
    )
}

/// With GPU devices, their allocation and fragmentation over time in percent: the summary's
/// `gpu.sharing` figures (Weng et al., USENIX ATC 2023) at every sample; the fragmentation
/// lines only with a target workload. None without devices.
pub(super) fn gpu_sharing(t: &Timeline<'_>) -> Option<String> {
    use kueuesim_engine::outcome::GpuSharingFigures;
    let figures = t.series.gpu_sharing()?;
    let first = figures.clone().next()?;
    let pct = |a: f64, b: f64| if b > 0.0 { 100.0 * a / b } else { 0.0 };
    type Ratio = fn(&GpuSharingFigures) -> (f64, f64);
    let mut lines: Vec<(&str, Ratio)> = vec![
        ("GPU allocation ratio (GPUs some pod holds)", |f| {
            (f.gpus_allocated as f64, f.gpus as f64)
        }),
        ("milli-GPU allocation ratio (milli-GPUs held)", |f| {
            (f.milli_allocated as f64, (f.gpus * 1000) as f64)
        }),
    ];
    if first.milli_fragmented.is_some() {
        lines.push(("fragmentation rate (of the idle milli-GPUs)", |f| {
            (f.milli_fragmented.unwrap_or(0.0), f.milli_idle as f64)
        }));
        lines.push(("fragmented GPUs (of all GPUs)", |f| {
            (f.milli_fragmented.unwrap_or(0.0), (f.gpus * 1000) as f64)
        }));
    }
    let f = t.frame(104.0, false);
    let mut body = f.axes("time since start", "% of GPUs");
    let mut keys = Vec::new();
    for (k, (name, ratio)) in lines.iter().enumerate() {
        let values = figures.clone().map(|g| {
            let (a, b) = ratio(&g);
            pct(a, b)
        });
        body.push_str(&line_el(&t.line(&f, values), style(k), 1.5, name));
        keys.push((name.to_string(), Mark::Line(style(k))));
    }
    Some(section(
        "gpu-sharing",
        "GPU devices: allocation and fragmentation over time",
        H,
        &body,
        &keys,
        "A GPU counts as allocated when any pod holds a share of it; the milli-GPU ratio counts \
         the shares. The fragmentation rate is the part of the idle milli-GPUs the target \
         workload cannot use (FGD's measure).",
    ))
}

/// The ClusterQueues drawn on their own (at most `MAX_AREAS`, the rest as one "others"),
/// ranked by GPU time used then workloads, shared by every ClusterQueue panel so a queue
/// keeps its colour.
pub(super) fn kept_cluster_queues(world: &World, doc: &SimulationResult) -> Vec<usize> {
    let rank = |c: usize| {
        doc.summary
            .cluster_queues
            .get(c)
            .map_or(0.0, |s| s.gpu_seconds + s.figures.workloads as f64 * 1e-9)
    };
    keep_top(world.cluster_queues.len(), super::plot::MAX_AREAS, rank)
}

fn others(n: usize, what: &str) -> String {
    format!("({n} other {what})")
}

/// GPU quota held over time, stacked by ClusterQueue (bucket means, so layers add up).
pub(super) fn quota_stack(world: &World, t: &Timeline<'_>, kept: &[usize]) -> String {
    let n = world.cluster_queues.len();
    let mut layers: Vec<(String, Vec<f64>)> = kept
        .iter()
        .map(|&c| {
            (
                world.cluster_queues[c].name.clone(),
                t.means(t.series.quota(c).iter()),
            )
        })
        .collect();
    if kept.len() < n {
        let rest: Vec<usize> = (0..n).filter(|c| !kept.contains(c)).collect();
        let v = t.series.quota_of(rest.iter().copied());
        layers.push((others(rest.len(), "ClusterQueues"), t.means(v.iter())));
    }
    let xs = t.means(t.series.times());
    let mut top = vec![0.0; xs.len()];
    for (_, v) in &layers {
        for (a, b) in top.iter_mut().zip(v) {
            *a += b;
        }
    }
    let f = t.frame(top.iter().copied().fold(1.0, f64::max), true);
    let mut body = f.axes("time since start", "GPU quota held");
    // Each layer is drawn as its cumulative top filled down to the axis, the top layer first
    // and each lower one over it: one edge a layer instead of two, half the bytes.
    let mut tops = Vec::with_capacity(layers.len());
    let mut acc = vec![0.0; xs.len()];
    for (_, v) in &layers {
        for (a, b) in acc.iter_mut().zip(v) {
            *a += b;
        }
        tops.push(acc.clone());
    }
    let (x0, x1, base) = (
        f.x(xs.first().copied().unwrap_or(0.0)),
        f.x(xs.last().copied().unwrap_or(0.0)),
        f.y(0.0),
    );
    let mut keys = Vec::new();
    let mut areas = Vec::new();
    for (k, ((name, _), top)) in layers.iter().zip(&tops).enumerate() {
        let color = style(k).color;
        let d = path(xs.iter().zip(top).map(|(x, v)| (f.x(*x), f.y(*v))));
        areas.push(format!(
            r##"<path class="data" d="{d}L{x1:.1},{base:.1}L{x0:.1},{base:.1}Z" fill="{color}"><title>{}</title></path>"##,
            esc(name)
        ));
        keys.push((name.clone(), Mark::Area(color)));
    }
    for a in areas.iter().rev() {
        body.push_str(a);
    }
    let note = if t.series.len() > xs.len() {
        format!(
            "Each point is the mean over {} of samples (areas keep the GPU-hours).",
            duration(t.end / xs.len() as f64)
        )
    } else {
        String::new()
    };
    section(
        "gpu-by-cq",
        "GPU quota held over time, stacked by ClusterQueue",
        H,
        &body,
        &keys,
        &note,
    )
}

/// Pending workloads per LocalQueue over time (the busiest `MAX_LINES - 1` on their own).
pub(super) fn pending_by_lq(world: &World, t: &Timeline<'_>) -> String {
    let n = world.local_queues.len();
    let peak: Vec<f64> = (0..n).map(|k| t.series.pending(k).max(0.0)).collect();
    let kept = keep_top(n, MAX_LINES, |k| peak[k]);
    let mut lines: Vec<(String, Column<'_>)> = kept
        .iter()
        .map(|&k| {
            let l = &world.local_queues[k];
            (format!("{}/{}", l.namespace, l.name), t.series.pending(k))
        })
        .collect();
    if kept.len() < n {
        let rest: Vec<usize> = (0..n).filter(|k| !kept.contains(k)).collect();
        lines.push((
            others(rest.len(), "LocalQueues, summed"),
            t.series.pending_of(rest),
        ));
    }
    let y_max = lines.iter().fold(1.0, |m, (_, v)| v.max(m));
    let f = t.frame(y_max, true);
    let mut body = f.axes("time since start", "pending workloads");
    let mut keys = Vec::new();
    for (k, (name, v)) in lines.iter().enumerate() {
        body.push_str(&line_el(&t.line(&f, v.iter()), style(k), 1.6, name));
        keys.push((name.clone(), Mark::Line(style(k))));
    }
    let note = if y_max <= 1.0 && lines.iter().all(|(_, v)| v.all_zero()) {
        "No workload was pending at any sample: every line lies on the axis."
    } else {
        ""
    };
    section(
        "pending-by-lq",
        "Pending workloads per LocalQueue",
        H,
        &body,
        &keys,
        note,
    )
}

/// Nearest-rank percentile of sorted values (as the summary computes them).
fn nearest_rank(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

/// What the wait CDF counts of a workload.
pub(super) enum Wait {
    /// Pending: counted as still waiting.
    Pending,
    /// Admitted: its wait in seconds.
    Admitted(f64),
    /// Neither (never admitted and not pending).
    Neither,
}

/// What the wait CDF counts of `w`: Pending, or its wait (creation to the latest admission)
/// if a pod set was admitted.
pub(super) fn wait_seconds(w: &WorkloadOut) -> Wait {
    if w.state == "Pending" {
        return Wait::Pending;
    }
    match (
        w.admitted_at,
        w.pod_sets.iter().any(|p| p.admitted_count.is_some()),
    ) {
        (Some(a), true) => {
            // In whole milliseconds, as the summary subtracts them: seconds with a fraction
            // (varied arrivals and durations) subtracted as floats differ in the last digit.
            let ms = |s: f64| (s * 1000.0).round();
            Wait::Admitted((ms(a) - ms(w.created_at)) / 1000.0)
        }
        _ => Wait::Neither,
    }
}

/// The wait (creation to the latest admission) CDF per ClusterQueue, over the workloads the
/// summary's `waitSecondsAdmitted` counts, with each queue's p95 marked.
pub(super) fn wait_cdf(
    world: &World,
    doc: &SimulationResult,
    folded: Option<&super::Folded>,
    kept: &[usize],
) -> String {
    let index: BTreeMap<&str, usize> = world
        .cluster_queues
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    let n = world.cluster_queues.len();
    let mut waits = vec![Vec::new(); n];
    let mut pending = vec![0usize; n];
    for w in &doc.workloads {
        let Some(&c) = w.cluster_queue.as_deref().and_then(|q| index.get(q)) else {
            continue;
        };
        match wait_seconds(w) {
            Wait::Pending => pending[c] += 1,
            Wait::Admitted(s) => waits[c].push(s),
            Wait::Neither => {}
        }
    }
    // The folded workloads' waits (each list is sorted below, so where they join does not
    // matter).
    if let Some(f) = folded {
        for (c, (w, p)) in f.waits.iter().zip(&f.pending).enumerate() {
            waits[c].extend_from_slice(w);
            pending[c] += p;
        }
    }
    let mut groups: Vec<(String, Vec<f64>, usize)> = kept
        .iter()
        .map(|&c| {
            (
                world.cluster_queues[c].name.clone(),
                std::mem::take(&mut waits[c]),
                pending[c],
            )
        })
        .collect();
    if kept.len() < n {
        let rest: Vec<usize> = (0..n).filter(|c| !kept.contains(c)).collect();
        groups.push((
            others(rest.len(), "ClusterQueues"),
            rest.iter()
                .flat_map(|&c| waits[c].iter().copied())
                .collect(),
            rest.iter().map(|&c| pending[c]).sum(),
        ));
    }
    for (_, w, _) in &mut groups {
        w.sort_by(f64::total_cmp);
    }
    let x_max = groups
        .iter()
        .filter_map(|(_, w, _)| w.last())
        .copied()
        .fold(60.0, f64::max)
        // Room past the longest wait, so the last rise is not on the frame's edge.
        * 1.03;
    let f = Frame::new(
        x_max,
        time_ticks(x_max, X_TICKS),
        value_ticks(1.0, Y_TICKS, false),
    );
    let mut body = f.axes("wait until admission", "fraction of admitted workloads");
    let mut keys = Vec::new();
    let mut marks = String::new();
    for (k, (name, w, pend)) in groups.iter().enumerate() {
        let s = style(k);
        let total = w.len();
        let tail = if *pend > 0 {
            format!(", {pend} pending not counted")
        } else {
            String::new()
        };
        let Some(p95) = nearest_rank(w, 95.0) else {
            keys.push((format!("{name}: none admitted{tail}"), Mark::Line(s)));
            continue;
        };
        // Exact steps for small queues, else CDF_POINTS evenly spaced ranks (and the last).
        let ranks: Vec<usize> = if total <= CDF_POINTS {
            (0..total).collect()
        } else {
            (1..=CDF_POINTS)
                .map(|q| q * total / CDF_POINTS - 1)
                .collect()
        };
        let mut pts = vec![(f.x(0.0), f.y(0.0))];
        let mut prev = f.y(0.0);
        for r in ranks {
            let (x, y) = (f.x(w[r]), f.y((r + 1) as f64 / total as f64));
            pts.push((x, prev));
            pts.push((x, y));
            prev = y;
        }
        pts.push((f.x(x_max), prev));
        body.push_str(&line_el(&path(pts), s, 1.8, name));
        let (px, py) = (f.x(p95), f.y(0.95));
        let _ = write!(
            marks,
            r##"<circle class="data p95" cx="{px:.1}" cy="{py:.1}" r="3.5" fill="{c}" stroke="#fff" stroke-width="1" data-cq="{}" data-p95="{p95}"><title>{}: p95 {}</title></circle>"##,
            esc(name),
            esc(name),
            duration(p95),
            c = s.color,
        );
        keys.push((
            format!("{name}: p95 {} ({total} admitted{tail})", duration(p95)),
            Mark::Line(s),
        ));
    }
    let y95 = f.y(0.95);
    let _ = write!(
        body,
        r##"<line class="p95line" x1="{:.1}" y1="{y95:.1}" x2="{:.1}" y2="{y95:.1}"/><text class="reflabel" x="{:.1}" y="{:.1}" text-anchor="end">p95</text>"##,
        f.x(0.0),
        f.right(),
        // Left of the axis, under the 1.0 tick: the right end is where the slowest queue's
        // p95 dot tends to be.
        f.x(0.0) - 6.0,
        y95 + 9.0
    );
    body.push_str(&marks);
    let none_waited = groups
        .iter()
        .all(|(_, w, _)| w.last().is_none_or(|&m| m <= 0.0));
    section(
        "wait-cdf",
        "Wait until admission, CDF per ClusterQueue (p95 marked)",
        H,
        &body,
        &keys,
        &format!(
            "Creation to the latest admission (waitSecondsAdmitted), over the workloads admitted by the \
             end; workloads still pending at the end are not counted (the legend says how many), \
             so the curve understates a queue that is not keeping up.{}",
            if none_waited {
                " No admitted workload waited: every curve rises at 0."
            } else {
                ""
            }
        ),
    )
}

/// Each ClusterQueue's GPU quota held over its nominal GPU quota, over time (1 = at nominal;
/// above it, borrowing). Shown instead of the fairness panel when fair sharing is off.
pub(super) fn quota_share(world: &World, t: &Timeline<'_>, kept: &[usize]) -> String {
    let nominal = crate::queues::nominal_gpu_quota(world);
    let n = world.cluster_queues.len();
    // Each line: its name, the quota held and the nominal quota it is divided by.
    let mut lines: Vec<(String, Column<'_>, f64)> = kept
        .iter()
        .filter(|&&c| nominal[c] > 0)
        .map(|&c| {
            (
                world.cluster_queues[c].name.clone(),
                t.series.quota(c),
                nominal[c] as f64,
            )
        })
        .collect();
    let rest: Vec<usize> = (0..n)
        .filter(|c| !kept.contains(c) && nominal[*c] > 0)
        .collect();
    if !rest.is_empty() {
        let q: i64 = rest.iter().map(|&c| nominal[c]).sum();
        lines.push((
            others(rest.len(), "ClusterQueues, pooled"),
            t.series.quota_of(rest.iter().copied()),
            q as f64,
        ));
    }
    let without = (0..n).filter(|&c| nominal[c] == 0).count();
    // The largest share of any sample: a held value's share is the same whichever sample
    // holds it.
    let y_max = lines.iter().fold(1.0, |m, (_, v, q)| {
        v.distinct().map(|x| x / q).fold(m, f64::max)
    });
    let f = t.frame(y_max * 1.04, false);
    let mut body = f.axes("time since start", "quota held / nominal quota");
    body.push_str(&ref_line(&f, 1.0, "6 3", "nominal quota", false));
    let mut keys = Vec::new();
    // Legend order follows the stacked panel's (same colour, same queue).
    for (name, v, q) in &lines {
        let k = kept
            .iter()
            .position(|&c| world.cluster_queues[c].name == *name)
            .unwrap_or(kept.len());
        body.push_str(&line_el(
            &t.line(&f, v.iter().map(|x| x / q)),
            style(k),
            1.6,
            name,
        ));
        keys.push((name.clone(), Mark::Line(style(k))));
    }
    let note = if without > 0 {
        format!("{without} ClusterQueue(s) without nominal GPU quota are not drawn.")
    } else {
        String::new()
    };
    section(
        "quota-share",
        "Quota share: GPU quota held over nominal GPU quota, per ClusterQueue",
        H,
        &body,
        &keys,
        format!(
            "Fair sharing is off. Above 1 a queue borrows from its cohort; below, it lends or \
             idles. {note}"
        )
        .trim_end(),
    )
}

/// Fair sharing: each ClusterQueue's share of GPU time against its share of the weights.
pub(super) fn fairness(world: &World, doc: &SimulationResult, kept: &[usize]) -> String {
    let n = world.cluster_queues.len();
    let share_of = |c: usize| {
        doc.summary
            .cluster_queues
            .get(c)
            .and_then(|s| s.gpu_share)
            .unwrap_or(0.0)
    };
    let weight = |c: usize| world.cluster_queues[c].fair_sharing_weight_milli as f64;
    let total_w: f64 = (0..n).map(weight).sum::<f64>().max(1e-9);
    let mut bars: Vec<(String, f64, f64)> = kept
        .iter()
        .map(|&c| {
            (
                world.cluster_queues[c].name.clone(),
                share_of(c),
                weight(c) / total_w,
            )
        })
        .collect();
    if kept.len() < n {
        let rest: Vec<usize> = (0..n).filter(|c| !kept.contains(c)).collect();
        bars.push((
            others(rest.len(), "ClusterQueues"),
            rest.iter().map(|&c| share_of(c)).sum(),
            rest.iter().map(|&c| weight(c)).sum::<f64>() / total_w,
        ));
    }
    let y_max = bars.iter().flat_map(|b| [b.1, b.2]).fold(0.01, f64::max);
    let f = Frame::new(
        bars.len() as f64,
        Vec::new(),
        value_ticks(y_max, Y_TICKS, false),
    );
    let mut body = f.axes("ClusterQueue", "share");
    let slot = (f.x(1.0) - f.x(0.0)) / 3.0;
    // A label gets the width of its slot; longer names are cut (the bar's title has it whole).
    let chars = ((slot * 3.0) / 6.0).floor().max(3.0) as usize;
    let (used, wanted) = (style(0), style(1));
    for (c, (name, share, w)) in bars.iter().enumerate() {
        for (k, (v, color, what)) in [
            (*share, used.color, "GPU-time share"),
            (*w, wanted.color, "weight share"),
        ]
        .into_iter()
        .enumerate()
        {
            let x = f.x(c as f64) + slot * (0.5 + k as f64);
            // A zero share is still a mark: a hairline on the axis.
            let h = (f.y(0.0) - f.y(v)).max(0.5);
            let _ = write!(
                body,
                r##"<rect class="data" x="{x:.1}" y="{:.1}" width="{slot:.1}" height="{h:.1}" fill="{color}"><title>{}: {what} {v:.3}</title></rect>"##,
                f.y(0.0) - h,
                esc(name)
            );
        }
        let label: String = if name.chars().count() > chars {
            name.chars()
                .take(chars.saturating_sub(1))
                .chain(['…'])
                .collect()
        } else {
            name.clone()
        };
        let _ = write!(
            body,
            r##"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="middle">{}<title>{}</title></text>"##,
            f.x(c as f64 + 0.5),
            H - 16.0,
            esc(&label),
            esc(name)
        );
    }
    section(
        "fairness",
        "Fair sharing: share of GPU time vs share of fair-sharing weight",
        H,
        &body,
        &[
            ("share of GPU time used".into(), Mark::Area(used.color)),
            (
                "share of fair-sharing weight".into(),
                Mark::Area(wanted.color),
            ),
        ],
        "A queue whose GPU-time bar is below its weight bar got less than its weight's share over \
         the run (it may not have asked for more).",
    )
}

/// Evictions over time, stacked by reason, in bins of a round duration.
pub(super) fn evictions(
    doc: &SimulationResult,
    folded: Option<&super::Folded>,
    end: f64,
) -> String {
    let end = end.max(60.0);
    let bin = time_step(end, EVICTION_BINS);
    let bins = (end / bin).ceil().max(1.0) as usize;
    let mut by_reason: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    let folded = folded.map_or(&[][..], |f| &f.evictions[..]);
    let all = doc
        .workloads
        .iter()
        .flat_map(|w| w.evictions.iter().map(|e| (e.at, e.reason)))
        .chain(folded.iter().copied());
    for (at, reason) in all {
        let b = ((at / bin) as usize).min(bins - 1);
        by_reason.entry(reason).or_insert_with(|| vec![0; bins])[b] += 1;
    }
    let y_max = (0..bins)
        .map(|b| by_reason.values().map(|v| v[b]).sum::<u32>())
        .max()
        .unwrap_or(0)
        .max(1);
    let f = Frame::new(
        end,
        time_ticks(end, X_TICKS),
        value_ticks(f64::from(y_max), Y_TICKS, true),
    );
    let per = duration(bin);
    let mut body = f.axes("time since start", &format!("evictions per {per}"));
    let mut below = vec![0u32; bins];
    let mut keys = Vec::new();
    let bar_w = (f.x(bin) - f.x(0.0)) * 0.8;
    for (k, (reason, counts)) in by_reason.iter().enumerate() {
        let color = style(k).color;
        for (b, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let y0 = f.y(f64::from(below[b]));
            let y1 = f.y(f64::from(below[b] + c));
            let _ = write!(
                body,
                r##"<rect class="data" x="{:.1}" y="{y1:.1}" width="{bar_w:.1}" height="{:.1}" fill="{color}"><title>{reason}: {c} from {}</title></rect>"##,
                f.x(b as f64 * bin) + bar_w * 0.1,
                y0 - y1,
                duration(b as f64 * bin)
            );
            below[b] += c;
        }
        let total: u32 = counts.iter().sum();
        keys.push((format!("{reason} ({total})"), Mark::Area(color)));
    }
    if by_reason.is_empty() {
        // Still a data mark: the zero line, so an empty run reads as "none", not as broken.
        let _ = write!(
            body,
            r##"<path class="data" d="M{:.1},{:.1}L{:.1},{:.1}" stroke="{c}" stroke-width="2"><title>no evictions</title></path>"##,
            f.x(0.0),
            f.y(0.0),
            f.x(end),
            f.y(0.0),
            c = style(2).color
        );
        keys.push(("no evictions".into(), Mark::Area(style(2).color)));
    }
    section(
        "evictions",
        "Evictions and preemptions over time, by reason",
        H,
        &body,
        &keys,
        "",
    )
}

/// A cluster that changes (a Timeline, `spec.failures`): the work lost per time bin, stacked
/// by what ended the pods, and a tick on the time axis for every bin with node or GPU
/// failures. None for a cluster that never changes.
pub(super) fn failures_over_time(doc: &SimulationResult, end: f64) -> Option<String> {
    use kueuesim_engine::outcome::FailureCause;
    let f = doc.summary.failures.as_ref()?;
    let end = end.max(60.0);
    let bin = time_step(end, EVICTION_BINS);
    let bins = (end / bin).ceil().max(1.0) as usize;
    let at = |t: f64| ((t / bin) as usize).min(bins - 1);
    // GPU-hours lost per bin by cause, and failures per bin by kind.
    let mut lost: BTreeMap<FailureCause, Vec<f64>> = BTreeMap::new();
    let mut failures: BTreeMap<FailureCause, Vec<u32>> = BTreeMap::new();
    for &(t, what, gpu_s) in &f.over_time {
        match what {
            FailureCause::NodeFailure | FailureCause::GpuFailure => {
                failures.entry(what).or_insert_with(|| vec![0; bins])[at(t)] += 1;
            }
            _ => lost.entry(what).or_insert_with(|| vec![0.0; bins])[at(t)] += gpu_s / 3600.0,
        }
    }
    let y_max = (0..bins)
        .map(|b| lost.values().map(|v| v[b]).sum::<f64>())
        .fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max } else { 1.0 };
    let fr = Frame::new(
        end,
        time_ticks(end, X_TICKS),
        value_ticks(y_max, Y_TICKS, false),
    );
    let per = duration(bin);
    let mut body = fr.axes("time since start", &format!("GPU-hours lost per {per}"));
    let mut below = vec![0.0f64; bins];
    let mut keys = Vec::new();
    let bar_w = (fr.x(bin) - fr.x(0.0)) * 0.8;
    for (k, (what, hours)) in lost.iter().enumerate() {
        let color = style(k).color;
        for (b, &h) in hours.iter().enumerate() {
            if h <= 0.0 {
                continue;
            }
            let (y0, y1) = (fr.y(below[b]), fr.y(below[b] + h));
            let _ = write!(
                body,
                r##"<rect class="data" x="{:.1}" y="{y1:.1}" width="{bar_w:.1}" height="{:.1}" fill="{color}"><title>{}: {h:.1} GPU-hours lost from {}</title></rect>"##,
                fr.x(b as f64 * bin) + bar_w * 0.1,
                (y0 - y1).max(0.5),
                what.as_str(),
                duration(b as f64 * bin)
            );
            below[b] += h;
        }
        let total: f64 = hours.iter().sum();
        keys.push((
            format!("lost: {} ({total:.1} GPU-hours)", what.as_str()),
            Mark::Area(color),
        ));
    }
    // The failures themselves: a tick below the bars in each bin that had any.
    for (k, (what, counts)) in failures.iter().enumerate() {
        let color = style(lost.len() + k).color;
        for (b, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let x = fr.x(b as f64 * bin) + bar_w * 0.6;
            let y = fr.y(0.0);
            let _ = write!(
                body,
                r##"<path class="data" d="M{x:.1},{:.1}L{x:.1},{:.1}" stroke="{color}" stroke-width="3"><title>{c} {} from {}</title></path>"##,
                y - 2.0 - 6.0 * k as f64,
                y - 8.0 - 6.0 * k as f64,
                what.as_str(),
                duration(b as f64 * bin)
            );
        }
        let total: u32 = counts.iter().sum();
        keys.push((format!("{} ({total})", what.as_str()), Mark::Area(color)));
    }
    if lost.is_empty() && failures.is_empty() {
        let _ = write!(
            body,
            r##"<path class="data" d="M{:.1},{:.1}L{:.1},{:.1}" stroke="{c}" stroke-width="2"><title>no failure, no work lost</title></path>"##,
            fr.x(0.0),
            fr.y(0.0),
            fr.x(end),
            fr.y(0.0),
            c = style(2).color
        );
        keys.push((
            "no failure, no work lost".into(),
            Mark::Area(style(2).color),
        ));
    }
    Some(section(
        "failures",
        "Failures and work lost over time",
        H,
        &body,
        &keys,
        "Bars: the work lost when pods ended early (beyond their job's last checkpoint), by what ended them; ticks on the time axis: node and GPU failures.",
    ))
}

/// The topology at the end: per spine a row of node cells grouped by leaf, each shaded by the
/// share of the node's GPUs bound to pods.
pub(super) fn topology(world: &World, doc: &SimulationResult) -> Option<String> {
    let (ti, mut spines) = kueuesim_engine::outcome::spine_domains(world);
    if spines.is_empty() {
        return None;
    }
    let t = kueuesim_engine::placement::topologies(world).nth(ti)?;
    // Rows in natural order (spine-2 before spine-10), so the rows cut are the last ones.
    spines.sort_by_cached_key(|&s| natural_key(&t.domain(s).name));
    let gpu = world.resources.lookup(kueuesim_model::resources::GPU)?;
    let mut used = vec![0i64; world.nodes.len()];
    let node_index: BTreeMap<&str, usize> = world
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    for w in doc.workloads.iter().filter(|w| w.state != "Finished") {
        for p in &w.pod_sets {
            let per: i64 = p
                .requests
                .get(kueuesim_model::resources::GPU)
                .and_then(|q| q.parse().ok())
                .unwrap_or(0);
            for n in &p.nodes {
                if let Some(&i) = node_index.get(n.as_str()) {
                    used[i] += per;
                }
            }
        }
    }
    let leaves_of = |s| {
        if t.domain(s).children.is_empty() {
            vec![s]
        } else {
            t.domain(s).children.clone()
        }
    };
    // One cell width for every row, the widest row filling the width (2 to 16 px a node).
    let (x0, gap) = (130.0, 5.0);
    let widest = spines
        .iter()
        .map(|&s| {
            let leaves = leaves_of(s);
            let nodes: usize = leaves.iter().map(|&l| t.nodes_of(l).len()).sum();
            (nodes, leaves.len())
        })
        .map(|(n, l)| (W - x0 - 10.0 - gap * l as f64) / n.max(1) as f64)
        .fold(16.0, f64::min)
        .max(2.0);
    let cell = widest;
    let has_leaves = spines.iter().any(|&s| !t.domain(s).children.is_empty());
    // Rows get lower when there are many, so 32 spines stay within a screen.
    let row_h = if spines.len() > 8 { 20.0 } else { 30.0 };
    let cell_h = row_h - 10.0;
    let rows = spines.len().min(TOPOLOGY_ROWS);
    let height = 16.0 + rows as f64 * row_h + if spines.len() > rows { 18.0 } else { 0.0 };
    let mut body = String::new();
    let mut cut = 0usize;
    for (r, &s) in spines.iter().take(rows).enumerate() {
        let y = 10.0 + r as f64 * row_h;
        let _ = write!(
            body,
            r##"<text class="label" x="4" y="{:.1}">{}</text>"##,
            y + cell_h / 2.0 + 4.0,
            esc(&t.domain(s).name)
        );
        let mut x = x0;
        for leaf in leaves_of(s) {
            for &n in t.nodes_of(leaf) {
                if x + cell > W - 4.0 {
                    cut += 1;
                    continue;
                }
                let alloc = world
                    .node(n)
                    .allocatable
                    .get(gpu.index())
                    .copied()
                    .unwrap_or(0);
                let share = if alloc > 0 {
                    used[n.index()] as f64 / alloc as f64
                } else {
                    0.0
                };
                let _ = write!(
                    body,
                    r##"<rect class="data" x="{x:.1}" y="{y:.1}" width="{:.1}" height="{cell_h}" fill="{c}" fill-opacity="{:.2}" stroke="#555" stroke-width="0.4"><title>{}: {}/{alloc} GPUs bound</title></rect>"##,
                    (cell - 1.0).max(1.0),
                    0.06 + 0.94 * share.clamp(0.0, 1.0),
                    esc(&world.node(n).name),
                    used[n.index()],
                    c = style(0).color,
                );
                x += cell;
            }
            x += gap;
        }
    }
    if spines.len() > rows || cut > 0 {
        let mut msg = Vec::new();
        if spines.len() > rows {
            msg.push(format!("{} more spines", spines.len() - rows));
        }
        if cut > 0 {
            msg.push(format!("{cut} nodes past the width"));
        }
        let _ = write!(
            body,
            r##"<text class="label" x="4" y="{:.1}">not drawn: {}</text>"##,
            height - 4.0,
            msg.join(", ")
        );
    }
    // The legend: the shading scale, and what a cell and a gap are.
    let mut scale = String::new();
    for (i, share) in [0.0, 0.25, 0.5, 0.75, 1.0].into_iter().enumerate() {
        let _ = write!(
            scale,
            r##"<span class="key"><svg class="swatch" width="14" height="12"><rect x="1" y="0" width="12" height="12" fill="{c}" fill-opacity="{:.2}" stroke="#555" stroke-width="0.6"/></svg>{}%</span>"##,
            0.06 + 0.94 * share,
            i * 25,
            c = style(0).color,
        );
    }
    Some(format!(
        r##"<section><h2>Topology at the end: GPUs bound per node, by spine and leaf</h2><svg class="plot" id="topology" viewBox="0 0 {W} {height:.0}" width="{W}" height="{height:.0}" role="img">{body}</svg><div class="legend">{scale}<span class="key">of a node's GPUs bound</span></div><p class="note">One row per spine; each cell a node, shaded by the share of its GPUs bound to pods at the end{}.</p></section>"##,
        if has_leaves {
            "; gaps separate the spine's leaves"
        } else {
            " (these spines hold their nodes directly)"
        }
    ))
}

/// A name's sort key with every run of digits compared as a number ("spine-2" < "spine-10").
pub(super) fn natural_key(name: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut text = String::new();
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n = u64::from(c as u8 - b'0');
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                n = n
                    .saturating_mul(10)
                    .saturating_add(u64::from(*d as u8 - b'0'));
                chars.next();
            }
            key.push((std::mem::take(&mut text), n));
        } else {
            text.push(c);
        }
    }
    key.push((text, 0));
    key
}

#[cfg(test)]
mod tests {
    use super::{natural_key, nearest_rank};

    #[test]
    fn natural_order_compares_digit_runs_as_numbers() {
        let mut v = ["pool-spine-10", "pool-spine-2", "pool-spine-1", "a-9-b"];
        v.sort_by_key(|n| natural_key(n));
        assert_eq!(
            v,
            ["a-9-b", "pool-spine-1", "pool-spine-2", "pool-spine-10"]
        );
    }

    #[test]
    fn nearest_rank_p95_of_43_values_is_the_41st() {
        let v: Vec<f64> = (1..=43).map(f64::from).collect();
        assert_eq!(nearest_rank(&v, 95.0), Some(41.0));
        assert_eq!(nearest_rank(&[7.0], 95.0), Some(7.0));
        assert_eq!(nearest_rank(&[], 95.0), None);
    }
}
