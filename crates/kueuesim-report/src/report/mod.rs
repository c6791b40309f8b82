//! `report.html`: one self-contained page (inline CSS and SVG drawn here, no fonts or
//! requests to the network) with the run's summary in planner's units and its plots, each an
//! aggregate bounded in points so the page stays small on any trace (per-workload data lives
//! in workloads.csv and events.jsonl). `axis.rs` words ticks and durations, `plot.rs` draws,
//! `panels.rs` has one function per panel, `queues.rs` the queue table, `spines.rs` the free
//! GPUs per spine, `series.rs` keeps the time series' changes.

mod axis;
mod panels;
mod plot;
mod queues;
mod series;
mod spines;

use std::collections::BTreeMap;
use std::fmt::Write;

use kueuesim_model::World;

use crate::output::{SimulationResult, WorkloadOut};
use axis::duration;
use plot::esc;
pub use series::PlottedSeries;

/// What the page reads of workloads that are not in the document: a streamed `--out` run's
/// finished workloads, each folded in as it finishes (`add`) and let go of. Per workload
/// 8 bytes (its wait) and 16 per eviction, where a stripped `WorkloadOut` was about 800:
/// a replay of a hundred thousand workloads keeps under a megabyte for its page.
#[derive(Clone, Debug, Default)]
pub struct Folded {
    /// Each ClusterQueue's index by name, as `panels::wait_cdf` finds them.
    index: BTreeMap<String, usize>,
    /// Per ClusterQueue: the waits (seconds, `panels::wait_seconds`) of its admitted
    /// workloads, and how many were Pending.
    waits: Vec<Vec<f64>>,
    pending: Vec<usize>,
    /// Every eviction's time (seconds) and reason.
    evictions: Vec<(f64, &'static str)>,
}

impl Folded {
    /// Empty, for `world`'s ClusterQueues.
    pub fn new(world: &World) -> Self {
        let n = world.cluster_queues.len();
        Folded {
            index: world
                .cluster_queues
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name.clone(), i))
                .collect(),
            waits: vec![Vec::new(); n],
            pending: vec![0; n],
            evictions: Vec::new(),
        }
    }

    /// Folds in `w`: what `panels::wait_cdf` and `panels::evictions` read of it (the
    /// topology panel reads unfinished workloads only, which stay in the document).
    pub fn add(&mut self, w: &WorkloadOut) {
        debug_assert_eq!(w.state, "Finished", "only finished workloads are folded");
        if let Some(&c) = w.cluster_queue.as_deref().and_then(|q| self.index.get(q)) {
            match panels::wait_seconds(w) {
                panels::Wait::Pending => self.pending[c] += 1,
                panels::Wait::Admitted(s) => self.waits[c].push(s),
                panels::Wait::Neither => {}
            }
        }
        self.evictions
            .extend(w.evictions.iter().map(|e| (e.at, e.reason)));
    }
}

/// The whole page. Of the time series it reads what `PlottedSeries` keeps, and of each finished workload its ClusterQueue, state, times,
/// whether a pod set was admitted and its evictions' times and reasons: a streamed `--out`
/// run keeps just those (`Folded`), and the test that a streamed run's files equal a full
/// run's catches a panel reading more.
pub fn report_html(
    world: &World,
    doc: &SimulationResult,
    series: Option<&PlottedSeries>,
) -> String {
    report_html_with(world, doc, series, None)
}

/// `report_html` of the document's workloads and those `folded` (a streamed run's finished
/// workloads, not in the document).
pub fn report_html_with(
    world: &World,
    doc: &SimulationResult,
    series: Option<&PlottedSeries>,
    folded: Option<&Folded>,
) -> String {
    let s = &doc.summary;
    let mut rows = String::new();
    let mut row = |k: &str, v: String| {
        let _ = write!(rows, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    };
    let end = s.end_time;
    row("Start", s.start_time.clone());
    row("Simulated", duration(end));
    row("Seed", s.seed.to_string());
    row(
        "Workloads",
        format!(
            "{} total: {} finished, {} running, {} admitted, {} pending, {} evicted, {} inactive",
            s.workloads.total,
            s.workloads.finished,
            s.workloads.running,
            s.workloads.admitted,
            s.workloads.pending,
            s.workloads.evicted,
            s.workloads.inactive
        ),
    );
    let pct = |p: &crate::output::Percentiles| {
        [
            ("p50", p.p50),
            ("p90", p.p90),
            ("p95", p.p95),
            ("p99", p.p99),
        ]
        .iter()
        .map(|(k, v)| format!("{k} {}", v.map_or("n/a".into(), duration)))
        .collect::<Vec<_>>()
        .join(", ")
    };
    // The still-pending lead: a figure over the admitted alone can rise as a change admits
    // the long waiters (docs/output.md, "Which workloads a figure counts").
    let still = s
        .wait_seconds_incl_pending
        .count
        .saturating_sub(s.time_in_queue_seconds_admitted.count);
    row(
        "Wait until admission",
        if still > 0 {
            format!(
                "{} ({} workloads; the {still} still pending counted at their wait so far: a lower bound)",
                pct(&s.wait_seconds_incl_pending),
                s.wait_seconds_incl_pending.count
            )
        } else {
            format!(
                "{} ({} workloads, none still pending)",
                pct(&s.wait_seconds_incl_pending),
                s.wait_seconds_incl_pending.count
            )
        },
    );
    if still > 0 {
        row(
            "… admitted only",
            format!(
                "{} ({} admitted)",
                pct(&s.wait_seconds_admitted),
                s.wait_seconds_admitted.count
            ),
        );
    }
    row(
        "GPUs",
        format!(
            "{} capacity{}, {} nominal quota (ClusterQueues and Cohorts)",
            s.gpu.capacity,
            if panels::node_gpus(world).is_some() {
                " (node GPUs)"
            } else {
                " (no nodes: a quota-only run, capacity is the nominal quota)"
            },
            panels::nominal_gpus(world)
        ),
    );
    row(
        "GPU utilisation",
        s.gpu.utilization.map_or("n/a".into(), |u| {
            format!(
                "{:.1}% ({:.0} GPU-hours used, {:.0} lost to evictions, {:.0} held not running)",
                u * 100.0,
                s.gpu.busy_gpu_seconds / 3600.0,
                s.gpu.lost_gpu_hours,
                s.gpu.held_not_running_gpu_hours
            )
        }),
    );
    // A cluster that changes (a Timeline, spec.failures): what it cost.
    if let (Some(f), Some(goodput)) = (&s.failures, s.goodput) {
        row(
            "Failures",
            format!(
                "{} node and {} GPU failures; {} pods lost, {} restarts, {} jobs failed; {:.1} GPU-hours of work lost",
                f.node_failures,
                f.gpu_failures,
                f.pods_lost,
                f.restarts,
                f.jobs_failed,
                f.lost_gpu_seconds / 3600.0
            ),
        );
        row(
            "Goodput",
            goodput.map_or("n/a".into(), |g| {
                format!(
                    "{:.1}% ({:.1} useful GPU-hours of those used)",
                    g * 100.0,
                    f.useful_gpu_seconds / 3600.0
                )
            }),
        );
    }
    let fair = world.config.kueue.fair_sharing.is_some();
    let afs = world.config.kueue.admission_fair_sharing.is_some();
    row(
        "Fair sharing",
        match (fair, afs) {
            (true, false) => "on",
            (true, true) => "on, and Admission Fair Sharing",
            (false, true) => "off (Admission Fair Sharing on)",
            (false, false) => "off",
        }
        .into(),
    );
    let queue_table = queues::queue_table(doc);
    let kept = panels::kept_cluster_queues(world, doc);
    let timeline = series
        .filter(|s| !s.is_empty())
        .map(|s| panels::Timeline::new(s, end));
    let mut plots = String::new();
    if let Some(t) = &timeline {
        plots.push_str(&panels::gpus_over_time(world, t));
    }
    plots.push_str(&panels::wait_cdf(world, doc, folded, &kept));
    if let Some(t) = &timeline {
        plots.push_str(&panels::quota_stack(world, t, &kept));
    }
    if fair {
        plots.push_str(&panels::fairness(world, doc, &kept));
    } else if let Some(t) = &timeline {
        plots.push_str(&panels::quota_share(world, t, &kept));
    }
    if let Some(t) = &timeline {
        plots.push_str(&panels::pending_by_lq(world, t));
        if let Some(p) = panels::gpu_sharing(t) {
            plots.push_str(&p);
        }
    }
    plots.push_str(&panels::evictions(doc, folded, end));
    if let Some(p) = panels::failures_over_time(doc, end) {
        plots.push_str(&p);
    }
    if let Some(p) = timeline
        .as_ref()
        .and_then(|t| spines::free_gpus_by_spine(world, t))
    {
        plots.push_str(&p);
    }
    if let Some(t) = panels::topology(world, doc) {
        plots.push_str(&t);
    }
    format!(
        r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kueuesim report</title>
<style>
body {{ font-family: sans-serif; margin: 24px; color: #222; max-width: 780px; }}
table {{ border-collapse: collapse; margin-bottom: 16px; }}
th {{ white-space: nowrap; }}
th, td {{ text-align: left; padding: 3px 10px; border-bottom: 1px solid #ddd; font-size: 14px; }}
h1 {{ font-size: 20px; }} h2 {{ font-size: 15px; margin: 22px 0 6px; }}
.axis {{ stroke: #444; stroke-width: 1; }} .grid {{ stroke: #e4e4e4; stroke-width: 1; }}
.tick {{ font-size: 10px; fill: #555; }} .label {{ font-size: 11px; fill: #333; }}
.reflabel {{ font-size: 10px; fill: #222; paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }}
.p95line {{ stroke: #bbb; stroke-width: 1; stroke-dasharray: 3 3; }}
.legend {{ font-size: 12px; line-height: 1.7; }} .note {{ font-size: 12px; color: #555; margin: 4px 0 0; }}
.key {{ margin-right: 14px; white-space: nowrap; display: inline-block; }}
.swatch {{ vertical-align: middle; margin-right: 4px; }}
table.queues th, table.queues td {{ font-size: 12px; padding: 3px 3px; vertical-align: top; }}
table.queues td.bound-by {{ cursor: help; }}
table.queues thead th {{ font-weight: normal; color: #555; text-align: center; border-bottom: 1px solid #bbb; }}
table.queues th.name {{ font-weight: bold; }} table.queues tr.lq th.name {{ font-weight: normal; padding-left: 16px; }}
table.queues td.num {{ text-align: right; white-space: nowrap; }}
table.queues tr.more td {{ color: #555; }}
.bb {{ white-space: nowrap; font-size: 11px; line-height: 15px; }} .bb .more {{ color: #777; }}
.bar {{ display: inline-block; height: 9px; margin-right: 4px; vertical-align: -1px; }}
</style></head>
<body>
<h1>kueuesim report</h1>
<table>{rows}</table>
{queue_table}
{plots}
<div id="check" data-requests="unknown" data-plots="unknown" data-queue-rows="unknown" data-bound-bars="unknown" data-spine-points="unknown"></div>
<script>
// Self-check for the headless test: every plot has drawn marks, and the page fetched nothing.
window.addEventListener("load", function () {{
  var plots = document.querySelectorAll("svg.plot");
  var drawn = 0;
  plots.forEach(function (p) {{
    var marks = p.querySelectorAll(".data");
    var ok = marks.length > 0;
    marks.forEach(function (m) {{ var b = m.getBBox(); if (!(b.width > 0 || b.height > 0)) ok = false; }});
    p.setAttribute("data-rendered", ok ? "yes" : "no");
    if (ok) drawn++;
  }});
  var c = document.getElementById("check");
  c.setAttribute("data-plots", drawn + "/" + plots.length);
  // The queue table: its ClusterQueue rows, and its bound-by bars laid out with a width.
  var bars = document.querySelectorAll("td.bound-by .bar");
  var wide = 0;
  bars.forEach(function (b) {{ if (b.getBoundingClientRect().width > 0) wide++; }});
  c.setAttribute("data-queue-rows", String(document.querySelectorAll("table.queues tr.cq").length));
  c.setAttribute("data-bound-bars", wide + "/" + bars.length);
  // The spine panel: its lines with the points each drew.
  var spines = document.querySelectorAll("svg#free-gpus-by-spine path.spine");
  var points = [];
  spines.forEach(function (p) {{ points.push(String(p.getTotalLength() > 0 ? p.getAttribute("d").split(/[ML]/).length - 1 : 0)); }});
  c.setAttribute("data-spine-points", points.join(","));
  c.setAttribute("data-requests", String(performance.getEntriesByType("resource").length));
}});
</script>
</body></html>
"##
    )
}
