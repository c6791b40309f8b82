//! report.html's queue table: one row per ClusterQueue, its LocalQueues under it (as the
//! summary's queue table has them), with the waits counting the still-pending workloads,
//! the workloads admitted, finished and pending, the GPU-hours used, lost and held, the GPU
//! utilisation of capacity and of nominal quota, and what held the queue's pending time back
//! (`pendingBoundBy`) as small bars, the whole map in a tooltip: the figures and names of the
//! summary's queue table.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::axis::duration;
use super::plot::{esc, style};
use crate::output::{ClusterQueueSummary, Percentiles, SimulationResult};
use crate::queues::QueueFigures;

/// ClusterQueues the table lists at most (those with the longest pending-inclusive p95 wait
/// past it), as the summary's table: the page stays bounded with 1,000 queues.
const SHOWN: usize = 30;
/// LocalQueues listed under one ClusterQueue at most.
const LOCAL_SHOWN: usize = 20;
/// Shares of `pendingBoundBy` drawn as bars (the rest in the tooltip), as the summary's
/// BOUND BY column shows two.
const BARS: usize = 2;
/// The width of a 100 % bar, in pixels.
const BAR_PX: f64 = 30.0;

/// The families of `pendingBoundBy` keys as the legend names them, in colour order.
const FAMILIES: [&str; 7] = [
    "quota",
    "cohort, borrowing or lending limit",
    "nodes",
    "topology",
    "podsReady, preempting",
    "strictFIFO, stopped, untried",
    "misconfigured",
];

/// The colour of a `pendingBoundBy` key, by what it is: one for each family of constraint,
/// so that a colour means the same in every row.
fn bound_color(key: &str) -> &'static str {
    style(family(key)).color
}

/// The family of a `pendingBoundBy` key (an index into `FAMILIES`).
fn family(key: &str) -> usize {
    let family = key.split(':').next().unwrap_or(key);
    match family {
        "quota" => 0,
        "cohort" | "borrowingLimit" | "lendingLimit" => 1,
        "nodes" => 2,
        "topology" => 3,
        "podsReady" | "preempting" => 4,
        "strictFIFO" | "stopped" | "untried" => 5,
        _ => 6,
    }
}

/// A share as a percentage with at most one decimal below 10 % ("0.6%", "13%").
fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p < 9.95 {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

/// A key as the cell shows it: a resource named with a domain by its last part
/// (`quota:nvidia.com/gpu` as `quota:gpu`), so the column stays narrow; the tooltip has it whole.
fn short_key(key: &str) -> String {
    match key.split_once(':') {
        Some((family, resource)) => {
            format!(
                "{family}:{}",
                resource.rsplit('/').next().unwrap_or(resource)
            )
        }
        None => key.to_string(),
    }
}

/// The bound-by cell: the largest `BARS` shares as bars with their key and percentage, the
/// whole map (largest first) in the tooltip and in `data-bound-by` (keys in order).
fn bound_cell(bound: &BTreeMap<String, f64>) -> String {
    if bound.is_empty() {
        return r#"<td class="bound-by" data-bound-by="" title="never waited">–</td>"#.into();
    }
    let mut v: Vec<(&String, f64)> = bound.iter().map(|(k, x)| (k, *x)).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let title: Vec<String> = v
        .iter()
        .map(|(k, x)| format!("{k} {}", percent(*x)))
        .collect();
    let data: Vec<String> = bound.iter().map(|(k, x)| format!("{k}={x:.4}")).collect();
    let mut bars = String::new();
    let shown = v.len().min(BARS);
    for (i, (k, x)) in v.iter().take(BARS).enumerate() {
        let more = if i + 1 == shown && v.len() > BARS {
            format!(r#" <span class="more">+{}</span>"#, v.len() - BARS)
        } else {
            String::new()
        };
        let _ = write!(
            bars,
            r#"<div class="bb"><span class="bar" style="width:{:.1}px;background:{}"></span>{} {}{more}</div>"#,
            (x * BAR_PX).max(1.0),
            bound_color(k),
            esc(&short_key(k)),
            percent(*x)
        );
    }
    format!(
        r#"<td class="bound-by" data-bound-by="{}" title="{}">{bars}</td>"#,
        esc(&data.join(";")),
        esc(&title.join(", "))
    )
}

/// A wait percentile; "≥" when still-pending workloads count at their wait so far.
fn wait(v: Option<f64>, lower_bound: bool) -> String {
    match v {
        None => "–".into(),
        Some(s) if lower_bound => format!("≥{}", duration(s)),
        Some(s) => duration(s),
    }
}

/// How many of a figure's workloads were still pending at the end.
fn still_pending(incl: &Percentiles, admitted: &Percentiles) -> u64 {
    incl.count.saturating_sub(admitted.count)
}

/// One row's cells after its name.
fn cells(admitted: u64, f: &QueueFigures, bound: &BTreeMap<String, f64>) -> String {
    let still = still_pending(&f.wait_seconds_incl_pending, &f.wait_seconds_admitted) > 0;
    let gpu_h = |h: f64| {
        if h == 0.0 {
            "0".to_string()
        } else if h < 10.0 {
            format!("{h:.1}")
        } else {
            format!("{h:.0}")
        }
    };
    let mut s = String::new();
    for n in [admitted, f.finished_workloads, f.pending_workloads] {
        let _ = write!(s, r#"<td class="num">{n}</td>"#);
    }
    let _ = write!(
        s,
        r#"<td class="num">{}</td><td class="num wait-p95" data-seconds="{}">{}</td><td class="num">{}</td>"#,
        wait(f.wait_seconds_incl_pending.p50, still),
        f.wait_seconds_incl_pending
            .p95
            .map_or(String::new(), |v| v.to_string()),
        wait(f.wait_seconds_incl_pending.p95, still),
        wait(f.wait_seconds_admitted.p95, false),
    );
    for h in [
        f.gpu_hours_used,
        f.gpu_hours_lost,
        f.gpu_hours_held_not_running,
    ] {
        let _ = write!(s, r#"<td class="num">{}</td>"#, gpu_h(h));
    }
    for u in [
        f.gpu_utilization_of_capacity,
        f.gpu_utilization_of_nominal_quota,
    ] {
        let _ = write!(
            s,
            r#"<td class="num">{}</td>"#,
            u.map_or("–".into(), |u| format!("{:.0}%", u * 100.0))
        );
    }
    s.push_str(&bound_cell(bound));
    s
}

/// The queue table, or nothing when no queue had a workload.
pub(super) fn queue_table(doc: &SimulationResult) -> String {
    let s = &doc.summary;
    let mut active: Vec<(usize, &ClusterQueueSummary)> = s
        .cluster_queues
        .iter()
        .enumerate()
        .filter(|(_, c)| c.figures.workloads > 0)
        .collect();
    if active.is_empty() {
        return String::new();
    }
    let hidden = active.len().saturating_sub(SHOWN);
    if hidden > 0 {
        let key = |c: &ClusterQueueSummary| c.figures.wait_seconds_incl_pending.p95;
        active.sort_by(|(i, a), (j, b)| {
            key(b)
                .unwrap_or(-1.0)
                .total_cmp(&key(a).unwrap_or(-1.0))
                .then(i.cmp(j))
        });
        active.truncate(SHOWN);
        active.sort_by_key(|(i, _)| *i);
    }
    let mut rows = String::new();
    for (_, cq) in active {
        let _ = write!(
            rows,
            r#"<tr class="cq" data-cq="{n}"><th class="name">{n}</th>{}</tr>"#,
            cells(cq.admitted_workloads, &cq.figures, &cq.pending_bound_by),
            n = esc(&cq.name)
        );
        let lqs: Vec<_> = s
            .local_queues
            .iter()
            .filter(|l| l.cluster_queue == cq.name && l.figures.workloads > 0)
            .collect();
        // A LocalQueue alone in its ClusterQueue repeats it: listed only beside others.
        if lqs.len() > 1 {
            for lq in lqs.iter().take(LOCAL_SHOWN) {
                let _ = write!(
                    rows,
                    r#"<tr class="lq" data-cq="{}"><th class="name">{}/{}</th>{}</tr>"#,
                    esc(&cq.name),
                    esc(&lq.namespace),
                    esc(&lq.name),
                    cells(lq.admitted_workloads, &lq.figures, &lq.pending_bound_by)
                );
            }
            if lqs.len() > LOCAL_SHOWN {
                let _ = write!(
                    rows,
                    r#"<tr class="more"><td colspan="13">… {} more LocalQueues of {} (queues.csv)</td></tr>"#,
                    lqs.len() - LOCAL_SHOWN,
                    esc(&cq.name)
                );
            }
        }
    }
    if hidden > 0 {
        let _ = write!(
            rows,
            r#"<tr class="more"><td colspan="13">… {hidden} more ClusterQueues with shorter waits (queues.csv)</td></tr>"#
        );
    }
    // The colours of the families some listed queue shows, for the legend under the table.
    let mut shown = [false; FAMILIES.len()];
    let listed = s
        .cluster_queues
        .iter()
        .map(|c| &c.pending_bound_by)
        .chain(s.local_queues.iter().map(|l| &l.pending_bound_by));
    for key in listed.flat_map(|b| b.keys()) {
        shown[family(key)] = true;
    }
    let legend: String = FAMILIES
        .iter()
        .enumerate()
        .filter(|(k, _)| shown[*k])
        .map(|(k, label)| {
            format!(
                r#"<span class="key"><span class="bar" style="width:12px;background:{}"></span>{label}</span>"#,
                style(k).color
            )
        })
        .collect();
    format!(
        r#"<section><h2>Queues: waits, workloads, GPU-hours and what held them back</h2><table class="queues" id="queues"><thead><tr><th rowspan="2">ClusterQueue<br>LocalQueue</th><th colspan="3">workloads</th><th colspan="3">wait</th><th colspan="3">GPU-hours</th><th colspan="2">GPU util</th><th rowspan="2">bound by</th></tr><tr><th>admitted</th><th>finished</th><th>pending</th><th>p50</th><th>p95</th><th>admitted-<br>only p95</th><th>used</th><th>lost</th><th>held</th><th>cap</th><th>quota</th></tr></thead><tbody>{rows}</tbody></table><div class="legend">{legend}</div><p class="note">As the summary's queue table. Wait p50 and p95: creation to the latest admission, the still-pending workloads counted at their wait so far (≥: a lower bound; waitSecondsInclPending); admitted-only p95: the admitted alone (waitSecondsAdmitted). GPU-hours used, lost to evictions, and held: quota held while the workload's pods were not all running (gpuHoursHeldNotRunning). GPU util: GPU-hours used over the GPU capacity × the run (cap) and over the ClusterQueue's nominal GPU quota × the run (quota; above 100 % when borrowing). Bound by: each constraint's share of the queue's pending workload-seconds (pendingBoundBy), the largest two as bars (nvidia.com/gpu written gpu; +N: more constraints), the whole map in the cell's tooltip.</p></section>"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_by_cells_draw_the_largest_shares_and_keep_the_whole_map() {
        let map: BTreeMap<String, f64> = [
            ("nodes", 0.006),
            ("quota:cpu", 0.132),
            ("quota:memory", 0.04),
            ("quota:nvidia.com/gpu", 0.822),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let cell = bound_cell(&map);
        assert_eq!(cell.matches("class=\"bar\"").count(), 2);
        // Largest first in the bars and the tooltip; keys in order in the data.
        let gpu = cell.find(">quota:gpu 82%").expect("gpu bar");
        let cpu = cell.find(">quota:cpu 13%").expect("cpu bar");
        assert!(gpu < cpu);
        assert!(cell.contains(r#"quota:cpu 13% <span class="more">+2</span>"#));
        assert!(cell.contains(
            "title=\"quota:nvidia.com/gpu 82%, quota:cpu 13%, quota:memory 4.0%, nodes 0.6%\""
        ));
        assert!(cell.contains(
            "data-bound-by=\"nodes=0.0060;quota:cpu=0.1320;quota:memory=0.0400;quota:nvidia.com/gpu=0.8220\""
        ));
        assert!(cell.contains("width:24.7px"), "{cell}");
        assert!(bound_cell(&BTreeMap::new()).contains("never waited"));
    }
}
