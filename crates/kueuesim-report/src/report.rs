//! `report.html`: one self-contained page (inline CSS and SVG drawn here, no scripts or fonts
//! from the network) with the run's summary and its plots: GPU quota held over time stacked
//! by ClusterQueue, pending workloads per LocalQueue, the wait-time CDF per priority class,
//! evictions over time, the topology's occupancy at the end, and fair-share vs weight.

use std::collections::BTreeMap;
use std::fmt::Write;

use kueuesim_engine::outcome::TimeSeries;
use kueuesim_model::World;

use crate::output::SimulationResult;

const W: f64 = 720.0;
const H: f64 = 260.0;
const PAD_L: f64 = 56.0;
const PAD_B: f64 = 30.0;
const PAD_T: f64 = 14.0;
const PAD_R: f64 = 16.0;
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A plot frame: axes with a few ticks, x in hours; `body` draws inside it.
struct Frame {
    x_max: f64,
    y_max: f64,
    /// Numeric ticks on the x axis (off for categories).
    x_ticks: bool,
}

impl Frame {
    fn x(&self, v: f64) -> f64 {
        PAD_L + v / self.x_max.max(1e-9) * (W - PAD_L - PAD_R)
    }
    fn y(&self, v: f64) -> f64 {
        H - PAD_B - v / self.y_max.max(1e-9) * (H - PAD_B - PAD_T)
    }
    fn axes(&self, x_label: &str, y_label: &str) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            r##"<line class="axis" x1="{PAD_L}" y1="{b}" x2="{r}" y2="{b}"/><line class="axis" x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{b}"/>"##,
            b = H - PAD_B,
            r = W - PAD_R
        );
        for i in 0..=4 {
            let v = self.y_max * f64::from(i) / 4.0;
            let _ = write!(
                s,
                r##"<text class="tick" x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                PAD_L - 6.0,
                self.y(v) + 4.0,
                fmt_tick(v)
            );
            let x = self.x_max * f64::from(i) / 4.0;
            if !self.x_ticks {
                continue;
            }
            let _ = write!(
                s,
                r##"<text class="tick" x="{:.1}" y="{}" text-anchor="middle">{}</text>"##,
                self.x(x),
                H - PAD_B + 16.0,
                fmt_tick(x)
            );
        }
        let _ = write!(
            s,
            r##"<text class="label" x="{}" y="{}" text-anchor="end">{}</text><text class="label" x="4" y="10">{}</text>"##,
            W - PAD_R,
            H - 2.0,
            esc(x_label),
            esc(y_label)
        );
        s
    }
}

fn fmt_tick(v: f64) -> String {
    if v >= 100.0 || (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn svg(id: &str, title: &str, body: &str, legend: &[(String, &str)]) -> String {
    let mut l = String::new();
    for (name, color) in legend {
        let _ = write!(
            l,
            r##"<span class="key"><span class="swatch" style="background:{color}"></span>{}</span>"##,
            esc(name)
        );
    }
    format!(
        r##"<section><h2>{}</h2><svg class="plot" id="{id}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img">{body}</svg><div class="legend">{l}</div></section>"##,
        esc(title)
    )
}

/// GPU quota held over time, stacked by ClusterQueue.
fn gpu_stack(world: &World, series: &TimeSeries) -> String {
    let hours = |s: &kueuesim_engine::outcome::Sample| s.at.as_secs_f64() / 3600.0;
    let x_max = series.samples.last().map_or(1.0, hours).max(1.0 / 60.0);
    let y_max = series
        .samples
        .iter()
        .map(|s| s.gpu_quota_by_cq.iter().sum::<i64>().max(s.gpus_in_use))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let f = Frame {
        x_max,
        y_max,
        x_ticks: true,
    };
    let mut body = f.axes("hours", "GPUs (quota held)");
    let mut below = vec![0i64; series.samples.len()];
    let mut legend = Vec::new();
    for (c, cq) in world.cluster_queues.iter().enumerate() {
        let color = PALETTE[c % PALETTE.len()];
        let mut top: Vec<(f64, f64)> = Vec::new();
        let mut bottom: Vec<(f64, f64)> = Vec::new();
        for (i, s) in series.samples.iter().enumerate() {
            let b = below[i];
            let t = b + s.gpu_quota_by_cq[c];
            top.push((f.x(hours(s)), f.y(t as f64)));
            bottom.push((f.x(hours(s)), f.y(b as f64)));
            below[i] = t;
        }
        let mut d = String::new();
        for (i, (x, y)) in top.iter().enumerate() {
            let _ = write!(d, "{}{x:.1},{y:.1}", if i == 0 { "M" } else { "L" });
        }
        for (x, y) in bottom.iter().rev() {
            let _ = write!(d, "L{x:.1},{y:.1}");
        }
        d.push('Z');
        let _ = write!(
            body,
            r##"<path class="data" d="{d}" fill="{color}" fill-opacity="0.85"><title>{}</title></path>"##,
            esc(&cq.name)
        );
        legend.push((cq.name.clone(), color));
    }
    svg(
        "gpu-by-cq",
        "GPU quota held over time, by ClusterQueue",
        &body,
        &legend,
    )
}

/// Lines of one value per series over time.
fn lines(
    id: &str,
    title: &str,
    y_label: &str,
    series: &TimeSeries,
    names: &[String],
    value: impl Fn(&kueuesim_engine::outcome::Sample, usize) -> f64,
) -> String {
    let hours = |s: &kueuesim_engine::outcome::Sample| s.at.as_secs_f64() / 3600.0;
    let x_max = series.samples.last().map_or(1.0, hours).max(1.0 / 60.0);
    let y_max = series
        .samples
        .iter()
        .flat_map(|s| (0..names.len()).map(|k| value(s, k)).collect::<Vec<_>>())
        .fold(1.0f64, f64::max);
    let f = Frame {
        x_max,
        y_max,
        x_ticks: true,
    };
    let mut body = f.axes("hours", y_label);
    let mut legend = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let mut d = String::new();
        for (i, s) in series.samples.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { "L" },
                f.x(hours(s)),
                f.y(value(s, k))
            );
        }
        let _ = write!(
            body,
            r##"<path class="data" d="{d}" fill="none" stroke="{color}" stroke-width="1.8"><title>{}</title></path>"##,
            esc(name)
        );
        legend.push((name.clone(), color));
    }
    svg(id, title, &body, &legend)
}

/// The wait-time CDF (creation to latest admission) per priority class.
fn wait_cdf(doc: &SimulationResult) -> String {
    let mut by_class: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for w in &doc.workloads {
        if let Some(a) = w.admitted_at {
            let class = w.priority_class.clone().unwrap_or_else(|| "(none)".into());
            by_class
                .entry(class)
                .or_default()
                .push((a - w.created_at).max(0.0) / 60.0);
        }
    }
    let x_max = by_class.values().flatten().copied().fold(1.0f64, f64::max);
    let f = Frame {
        x_max,
        y_max: 1.0,
        x_ticks: true,
    };
    let mut body = f.axes("minutes waited", "fraction admitted");
    let mut legend = Vec::new();
    for (k, (class, mut waits)) in by_class.into_iter().enumerate() {
        waits.sort_by(f64::total_cmp);
        let n = waits.len() as f64;
        let color = PALETTE[k % PALETTE.len()];
        let mut d = format!("M{:.1},{:.1}", f.x(0.0), f.y(0.0));
        for (i, w) in waits.iter().enumerate() {
            let _ = write!(
                d,
                "L{:.1},{:.1}L{:.1},{:.1}",
                f.x(*w),
                f.y(i as f64 / n),
                f.x(*w),
                f.y((i + 1) as f64 / n)
            );
        }
        let _ = write!(d, "L{:.1},{:.1}", f.x(x_max), f.y(1.0));
        let _ = write!(
            body,
            r##"<path class="data" d="{d}" fill="none" stroke="{color}" stroke-width="1.8"><title>{}</title></path>"##,
            esc(&class)
        );
        legend.push((format!("{class} ({} admitted)", waits.len()), color));
    }
    svg(
        "wait-cdf",
        "Wait until admission, CDF per priority class",
        &body,
        &legend,
    )
}

/// Evictions per hour, by reason.
fn evictions(doc: &SimulationResult) -> String {
    let end_h = (doc.summary.end_time / 3600.0).ceil().max(1.0) as usize;
    let mut by_reason: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for w in &doc.workloads {
        for e in &w.evictions {
            let h = ((e.at / 3600.0) as usize).min(end_h - 1);
            by_reason.entry(e.reason).or_insert_with(|| vec![0; end_h])[h] += 1;
        }
    }
    let y_max = (0..end_h)
        .map(|h| by_reason.values().map(|v| v[h]).sum::<u32>())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let f = Frame {
        x_max: end_h as f64,
        y_max,
        x_ticks: true,
    };
    let mut body = f.axes("hours", "evictions per hour");
    let mut below = vec![0u32; end_h];
    let mut legend = Vec::new();
    let bar_w = (f.x(1.0) - f.x(0.0)) * 0.8;
    for (k, (reason, counts)) in by_reason.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        for (h, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let y0 = f.y(f64::from(below[h]));
            let y1 = f.y(f64::from(below[h] + c));
            let _ = write!(
                body,
                r##"<rect class="data" x="{:.1}" y="{y1:.1}" width="{bar_w:.1}" height="{:.1}" fill="{color}"><title>{reason}: {c}</title></rect>"##,
                f.x(h as f64) + bar_w * 0.1,
                y0 - y1
            );
            below[h] += c;
        }
        legend.push((reason.to_string(), color));
    }
    if by_reason.is_empty() {
        // Still a data mark: the zero line, so an empty run reads as "none", not as broken.
        let _ = write!(
            body,
            r##"<path class="data" d="M{:.1},{:.1}L{:.1},{:.1}" stroke="#59a14f" stroke-width="2"><title>no evictions</title></path>"##,
            f.x(0.0),
            f.y(0.0),
            f.x(end_h as f64),
            f.y(0.0)
        );
        legend.push(("no evictions".into(), "#59a14f"));
    }
    svg(
        "evictions",
        "Evictions and preemptions over time",
        &body,
        &legend,
    )
}

/// The topology at the end: per spine, a row of leaves, each a strip of node cells shaded by
/// the share of the node's GPUs bound to pods.
fn topology(world: &World, doc: &SimulationResult) -> Option<String> {
    let (ti, spines) = kueuesim_engine::outcome::spine_domains(world);
    if spines.is_empty() {
        return None;
    }
    let t = kueuesim_engine::placement::topologies(world).nth(ti)?;
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
    let cell = 10.0;
    let rows = spines.len();
    let height = 30.0 + rows as f64 * (cell * 2.0 + 26.0);
    let mut body = String::new();
    for (r, &s) in spines.iter().enumerate() {
        let y = 20.0 + r as f64 * (cell * 2.0 + 26.0);
        let _ = write!(
            body,
            r##"<text class="label" x="4" y="{:.1}">{}</text>"##,
            y + 12.0,
            esc(&t.domain(s).name)
        );
        let mut x = 120.0;
        let leaves: Vec<_> = if t.domain(s).children.is_empty() {
            vec![s]
        } else {
            t.domain(s).children.clone()
        };
        for leaf in leaves {
            for &n in t.nodes_of(leaf) {
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
                    r##"<rect class="data" x="{x:.1}" y="{y:.1}" width="{cell}" height="{:.1}" fill="#4e79a7" fill-opacity="{:.2}" stroke="#333" stroke-width="0.5"><title>{}: {}/{alloc} GPUs</title></rect>"##,
                    cell * 2.0,
                    0.08 + 0.92 * share,
                    esc(&world.node(n).name),
                    used[n.index()]
                );
                x += cell + 1.0;
                if x > W - 20.0 {
                    break;
                }
            }
            x += 6.0;
        }
    }
    Some(format!(
        r##"<section><h2>Topology at the end: GPUs bound per node, by spine and leaf</h2><svg class="plot" id="topology" viewBox="0 0 {W} {height:.0}" width="{W}" height="{height:.0}" role="img">{body}</svg></section>"##
    ))
}

/// Fair share: each ClusterQueue's share of GPU time against its fair-sharing weight.
fn fairness(world: &World, doc: &SimulationResult) -> String {
    let weights: Vec<f64> = world
        .cluster_queues
        .iter()
        .map(|c| c.fair_sharing_weight_milli as f64 / 1000.0)
        .collect();
    let total_w: f64 = weights.iter().sum::<f64>().max(1e-9);
    let n = world.cluster_queues.len().max(1);
    let f = Frame {
        x_max: n as f64,
        y_max: 1.0,
        x_ticks: false,
    };
    let mut body = f.axes("ClusterQueue", "share");
    let slot = (f.x(1.0) - f.x(0.0)) / 3.0;
    for (c, cq) in world.cluster_queues.iter().enumerate() {
        let share = doc
            .summary
            .cluster_queues
            .iter()
            .find(|s| s.name == cq.name)
            .and_then(|s| s.gpu_share)
            .unwrap_or(0.0);
        let weight = weights[c] / total_w;
        for (k, (v, color, what)) in [
            (share, "#4e79a7", "GPU-time share"),
            (weight, "#f28e2b", "weight share"),
        ]
        .into_iter()
        .enumerate()
        {
            let x = f.x(c as f64) + slot * (0.5 + k as f64);
            let _ = write!(
                body,
                r##"<rect class="data" x="{x:.1}" y="{:.1}" width="{slot:.1}" height="{:.1}" fill="{color}"><title>{}: {what} {v:.3}</title></rect>"##,
                f.y(v),
                f.y(0.0) - f.y(v),
                esc(&cq.name)
            );
        }
        let _ = write!(
            body,
            r##"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            f.x(c as f64 + 0.5),
            H - PAD_B + 28.0 - 12.0,
            esc(&cq.name)
        );
    }
    svg(
        "fairness",
        "Fairness: share of GPU time vs share of fair-sharing weight",
        &body,
        &[
            ("GPU-time share".into(), "#4e79a7"),
            ("weight share".into(), "#f28e2b"),
        ],
    )
}

/// The whole page.
pub fn report_html(world: &World, doc: &SimulationResult, series: Option<&TimeSeries>) -> String {
    let s = &doc.summary;
    let mut rows = String::new();
    let mut row = |k: &str, v: String| {
        let _ = write!(rows, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    };
    row("Start", s.start_time.clone());
    row("Simulated", format!("{:.0} s", s.end_time));
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
    row(
        "Wait until admission",
        format!(
            "p50 {:.0} s, p90 {:.0} s, p99 {:.0} s",
            s.wait_seconds.p50.unwrap_or(0.0),
            s.wait_seconds.p90.unwrap_or(0.0),
            s.wait_seconds.p99.unwrap_or(0.0)
        ),
    );
    row(
        "GPU utilisation",
        s.gpu
            .utilization
            .map_or("n/a".into(), |u| format!("{:.1}%", u * 100.0)),
    );
    let mut plots = String::new();
    if let Some(series) = series.filter(|s| !s.samples.is_empty()) {
        plots.push_str(&gpu_stack(world, series));
        let names: Vec<String> = world
            .local_queues
            .iter()
            .map(|l| format!("{}/{}", l.namespace, l.name))
            .collect();
        plots.push_str(&lines(
            "pending-by-lq",
            "Pending workloads per LocalQueue",
            "pending workloads",
            series,
            &names,
            |s, k| f64::from(s.pending_by_lq[k]),
        ));
    }
    plots.push_str(&wait_cdf(doc));
    plots.push_str(&evictions(doc));
    if let Some(t) = topology(world, doc) {
        plots.push_str(&t);
    }
    plots.push_str(&fairness(world, doc));
    format!(
        r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kueuesim report</title>
<style>
body {{ font-family: sans-serif; margin: 24px; color: #222; max-width: 780px; }}
table {{ border-collapse: collapse; margin-bottom: 16px; }}
th, td {{ text-align: left; padding: 3px 10px; border-bottom: 1px solid #ddd; font-size: 14px; }}
h1 {{ font-size: 20px; }} h2 {{ font-size: 15px; margin: 22px 0 6px; }}
.axis {{ stroke: #444; stroke-width: 1; }} .tick {{ font-size: 10px; fill: #555; }}
.label {{ font-size: 11px; fill: #333; }} .legend {{ font-size: 12px; }}
.key {{ margin-right: 14px; white-space: nowrap; }}
.swatch {{ display: inline-block; width: 10px; height: 10px; margin-right: 4px; }}
</style></head>
<body>
<h1>kueuesim report</h1>
<table>{rows}</table>
{plots}
<div id="check" data-requests="unknown" data-plots="unknown"></div>
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
  c.setAttribute("data-requests", String(performance.getEntriesByType("resource").length));
}});
</script>
</body></html>
"##
    )
}
