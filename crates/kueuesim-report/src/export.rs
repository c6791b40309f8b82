//! The lines of the flat files of `kueuesim run --out DIR` for analysis tools: one CSV row per
//! workload (`workloads.csv`, from the workload's `SimulationResult` entry so it always agrees
//! with `result.json`), one per ClusterQueue and LocalQueue (`queues.csv`), one JSON line per
//! recorded event (`events.jsonl`) and one CSV row per time-series sample (`timeseries.csv`).
//! `outdir` writes them as the run goes.

use serde::Serialize;

use kueuesim_engine::outcome::{Event, Sample};
use kueuesim_model::{Quantity, Workload, World};

use crate::escape::{CsvColumn, csv_cell};
use crate::output::{SimulationResult, WorkloadOut};

/// The columns of `workloads.csv`, in order. Times are seconds from the start; an empty cell
/// is a null (pandas reads it as NaN).
pub const WORKLOAD_COLUMNS: &[&str] = &[
    "namespace",
    "name",
    "kind",
    "localQueue",
    "clusterQueue",
    "priorityClass",
    "priority",
    "schedulerName",
    "state",
    "createdAt",
    "admittedAt",
    "runningAt",
    "finishedAt",
    "waitSeconds",
    "pods",
    "gpus",
    "flavors",
    "gpuSeconds",
    "lostGpuSeconds",
    "evictions",
    "preemptions",
    "lastEvictionReason",
    "requeueCount",
    "timeInQueueSeconds",
    "heldNotRunningGpuSeconds",
];

/// The columns `workloads.csv` adds after `WORKLOAD_COLUMNS` when the cluster changes during
/// the run (a Timeline or `spec.failures`: `output::living`), from each workload's
/// `failures`.
pub const FAILURE_COLUMNS: &[&str] = &["restarts", "usefulSeconds", "effectiveTrainingTimeRatio"];

/// The columns of `workloads.csv` of a run (`living`: with `FAILURE_COLUMNS`).
pub fn workload_columns(living: bool) -> Vec<&'static str> {
    let mut out = WORKLOAD_COLUMNS.to_vec();
    if living {
        out.extend_from_slice(FAILURE_COLUMNS);
    }
    out
}

/// The header line of `workloads.csv` (`living`: the cluster changes during the run).
pub fn workloads_csv_header(living: bool) -> String {
    let mut out = workload_columns(living).join(",");
    out.push('\n');
    out
}

/// One line of `workloads.csv`: a workload of the document (rows follow `result.json`'s order).
pub fn workloads_csv_row(w: &WorkloadOut) -> String {
    let cells = workload_cells(w);
    debug_assert_eq!(cells.len(), workload_columns(w.failures.is_some()).len());
    let line: Vec<String> = cells.into_iter().map(Cell::csv).collect();
    let mut out = line.join(",");
    out.push('\n');
    out
}

/// A cell of a flat table: text, or a number (None: null). The CSV files print them; the
/// Python module hands them over as typed columns.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Text (empty: an empty cell).
    Text(String),
    /// A number, None for a null.
    Num(Option<f64>),
    /// A count or another integer.
    Int(i64),
}

impl Cell {
    /// The cell as the CSV files print it (before quoting).
    pub fn text(self) -> String {
        match self {
            Cell::Text(s) => s,
            Cell::Num(v) => v.map(fmt_num).unwrap_or_default(),
            Cell::Int(v) => v.to_string(),
        }
    }

    /// The cell as the CSV files write it (`escape::csv_cell`: text never starts a formula).
    pub fn csv(self) -> String {
        let column = match self {
            Cell::Text(_) => CsvColumn::Text,
            Cell::Num(_) | Cell::Int(_) => CsvColumn::Number,
        };
        csv_cell(&self.text(), column).into_owned()
    }
}

/// The cells of a workload's `workloads.csv` row, typed, in `workload_columns` order.
pub fn workload_cells(w: &WorkloadOut) -> Vec<Cell> {
    let opt = |v: &Option<String>| Cell::Text(v.clone().unwrap_or_default());
    let num = Cell::Num;
    let int = |v: u64| Cell::Int(v as i64);
    let text = |s: &str| Cell::Text(s.to_string());
    let wait = w.admitted_at.map(|a| a - w.created_at);
    // Pods and GPUs as requested (count × per-pod request, whole GPUs as the quantity says).
    let pods: u64 = w.pod_sets.iter().map(|p| u64::from(p.count)).sum();
    let gpus: f64 = w
        .pod_sets
        .iter()
        .map(|p| {
            let per_pod = p
                .requests
                .iter()
                .filter(|(r, _)| r.ends_with("/gpu"))
                .filter_map(|(_, q)| Quantity::parse(q).ok()?.milli_value().ok())
                .map(|m| m as f64 / 1000.0)
                .sum::<f64>();
            per_pod * f64::from(p.count)
        })
        .sum();
    // Distinct flavors of the latest admission, in pod-set then resource order.
    let mut flavors: Vec<&str> = Vec::new();
    for p in &w.pod_sets {
        for f in p.flavors.values() {
            if !flavors.contains(&f.as_str()) {
                flavors.push(f);
            }
        }
    }
    let preemptions = w
        .evictions
        .iter()
        .filter(|e| e.preemption_reason.is_some())
        .count();
    let mut cells = vec![
        text(&w.namespace),
        text(&w.name),
        text(&w.kind),
        opt(&w.local_queue),
        opt(&w.cluster_queue),
        opt(&w.priority_class),
        Cell::Int(i64::from(w.priority)),
        text(&w.scheduler_name),
        Cell::Text(w.state.to_string()),
        num(Some(w.created_at)),
        num(w.admitted_at),
        num(w.running_at),
        num(w.finished_at),
        num(wait),
        int(pods),
        num(Some(gpus)),
        Cell::Text(flavors.join(";")),
        num(Some(w.gpu_seconds)),
        num(Some(w.lost_gpu_seconds)),
        int(w.evictions.len() as u64),
        int(preemptions as u64),
        Cell::Text(
            w.evictions
                .last()
                .map(|e| e.reason.to_string())
                .unwrap_or_default(),
        ),
        int(u64::from(w.requeue_count)),
        num(Some(w.time_in_queue_seconds)),
        num(Some(w.held_not_running_gpu_seconds)),
    ];
    if let Some(f) = &w.failures {
        cells.extend([
            int(u64::from(f.restarts)),
            num(Some(f.useful_seconds)),
            num(f.effective_training_time_ratio),
        ]);
    }
    cells
}

/// The distributions of `queues.csv`, each spread over `<name>Count`, `Mean`, `P50`, `P90`,
/// `P95`, `P99` and `Max` columns.
const QUEUE_DISTRIBUTIONS: &[&str] = &[
    "waitSecondsInclPending",
    "waitSecondsAdmitted",
    "timeInQueueSecondsInclPending",
    "timeInQueueSecondsAdmitted",
    "jctSecondsFinished",
    "boundedSlowdownFinished",
];

/// The columns of `queues.csv` before and after the distributions.
const QUEUE_HEAD: &[&str] = &[
    "scope",
    "namespace",
    "name",
    "clusterQueue",
    "cohort",
    "workloads",
    "admittedWorkloads",
    "finishedWorkloads",
    "pendingWorkloads",
    "evictions",
    "preemptionsSuffered",
    "preemptionsCaused",
];
const QUEUE_TAIL: &[&str] = &[
    "gpuHoursUsed",
    "gpuHoursLost",
    "gpuHoursHeldNotRunning",
    "nominalGpuQuota",
    "gpuUtilizationOfCapacity",
    "gpuUtilizationOfNominalQuota",
];

/// `queues.csv`: one row per ClusterQueue (`scope` `ClusterQueue`), then one per LocalQueue
/// (`LocalQueue`), with the figures of `summary.clusterQueues[]` / `summary.localQueues[]`.
pub fn queues_csv(doc: &SimulationResult) -> String {
    let mut header: Vec<String> = QUEUE_HEAD.iter().map(|s| s.to_string()).collect();
    for d in QUEUE_DISTRIBUTIONS {
        for p in ["Count", "Mean", "P50", "P90", "P95", "P99", "Max"] {
            header.push(format!("{d}{p}"));
        }
    }
    header.extend(QUEUE_TAIL.iter().map(|s| s.to_string()));
    header.push("pendingBoundBy".to_string());
    let mut out = header
        .iter()
        .map(|h| csv_cell(h, CsvColumn::Text))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    let s = &doc.summary;
    let rows = s
        .cluster_queues
        .iter()
        .map(|c| {
            let head = [
                "ClusterQueue".to_string(),
                String::new(),
                c.name.clone(),
                c.name.clone(),
                c.cohort.clone().unwrap_or_default(),
            ];
            let bound = &c.pending_bound_by;
            (head, c.admitted_workloads, c.evictions, &c.figures, bound)
        })
        .chain(s.local_queues.iter().map(|l| {
            let cohort = s
                .cluster_queues
                .iter()
                .find(|c| c.name == l.cluster_queue)
                .and_then(|c| c.cohort.clone())
                .unwrap_or_default();
            let head = [
                "LocalQueue".to_string(),
                l.namespace.clone(),
                l.name.clone(),
                l.cluster_queue.clone(),
                cohort,
            ];
            let bound = &l.pending_bound_by;
            (head, l.admitted_workloads, l.evictions, &l.figures, bound)
        }));
    for (head, admitted, evictions, f, bound) in rows {
        let num = |v: Option<f64>| v.map(fmt_num).unwrap_or_default();
        let head_len = head.len();
        let mut cells: Vec<String> = head.to_vec();
        cells.extend([
            f.workloads.to_string(),
            admitted.to_string(),
            f.finished_workloads.to_string(),
            f.pending_workloads.to_string(),
            evictions.to_string(),
            f.preemptions_suffered.to_string(),
            f.preemptions_caused.to_string(),
        ]);
        for p in f.distributions() {
            cells.push(p.count.to_string());
            cells.extend([p.mean, p.p50, p.p90, p.p95, p.p99, p.max].map(num));
        }
        cells.extend([
            fmt_num(f.gpu_hours_used),
            fmt_num(f.gpu_hours_lost),
            fmt_num(f.gpu_hours_held_not_running),
            f.nominal_gpu_quota.to_string(),
            num(f.gpu_utilization_of_capacity),
            num(f.gpu_utilization_of_nominal_quota),
        ]);
        cells.push(bound_cell(bound));
        debug_assert_eq!(cells.len(), header.len());
        // The scope and the names are text, and so is the last column (pendingBoundBy's
        // `key=share;…`); every column between them a number.
        let last = cells.len() - 1;
        let line: Vec<std::borrow::Cow<'_, str>> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let column = if i < head_len || i == last {
                    CsvColumn::Text
                } else {
                    CsvColumn::Number
                };
                csv_cell(c, column)
            })
            .collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// `pendingBoundBy` in one cell: `key=share;key=share`, keys in order, shares to 4 decimals
/// (no key holds `=` or `;`: resource names are qualified names).
fn bound_cell(bound: &std::collections::BTreeMap<String, f64>) -> String {
    bound
        .iter()
        .map(|(k, v)| format!("{k}={v:.4}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// A number as JSON would print it: integers without a fraction, others in full precision.
fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// One line of `events.jsonl`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EventLine<'a> {
    at: f64,
    namespace: &'a str,
    /// The workload the event is about (`involvedObject`).
    name: &'a str,
    kind: &'a str,
    #[serde(rename = "type")]
    event_type: &'a str,
    source: &'a str,
    reason: &'a str,
    message: &'a str,
    cycle: Option<u64>,
}

/// One line of `events.jsonl`: an event of workload `wl` as the engine recorded it.
pub fn event_line(wl: &Workload, e: &Event) -> String {
    let line = EventLine {
        at: e.at.as_secs_f64(),
        namespace: &wl.namespace,
        name: &wl.name,
        kind: &wl.kind,
        event_type: e.kind.as_str(),
        source: e.source,
        reason: e.reason,
        message: &e.message,
        cycle: e.cycle,
    };
    let mut json = serde_json::to_string(&line).expect("event lines always serialize");
    json.push('\n');
    json
}

/// The columns of `timeseries.csv` past its fixed ones: whether the world has spines to count
/// running gangs in (`outcome::spine_domains`).
pub struct TimeseriesColumns {
    spines: bool,
    /// Spines and GPUs: the free GPUs per spine follow the running gangs.
    free_gpus: bool,
    /// GPU devices are bookkept: their allocation columns follow.
    devices: bool,
    /// A target workload is known: the fragmentation columns follow too.
    fragmentation: bool,
}

/// With GPU devices, the count columns of `timeseries.csv` after the spines (what
/// `timeseries_counts` adds).
const DEVICE_COUNTS: [&str; 2] = ["gpusAllocated", "milliGpusAllocated"];

/// With GPU devices, the ratio columns after the counts (what `timeseries_figures` gives):
/// the summary's `gpu.sharing` figures at each sample; the last three only with a target
/// workload.
const DEVICE_FIGURES: [&str; 5] = [
    "gpuAllocationRatio",
    "milliGpuAllocationRatio",
    "fragmentedMilliGpus",
    "fragmentationRate",
    "fragmentedGpuRatio",
];

/// The header line of `timeseries.csv` (`time` in seconds, then GPUs bound to pods, GPU quota
/// held per ClusterQueue and per ResourceFlavor (Kueue's `cluster_queue_resource_usage`), and
/// pending workloads per ClusterQueue, active and inadmissible (`pending_workloads`), per
/// LocalQueue, and running gangs and free GPUs per spine), and what the rows need to follow
/// it.
pub fn timeseries_csv_header(world: &World) -> (String, TimeseriesColumns) {
    let (header, columns) = timeseries_columns(world);
    let cells: Vec<_> = header
        .iter()
        .map(|h| csv_cell(h, CsvColumn::Text))
        .collect();
    let mut out = cells.join(",");
    out.push('\n');
    (out, columns)
}

/// The column names of `timeseries.csv`, and what the rows need to follow them.
pub fn timeseries_columns(world: &World) -> (Vec<String>, TimeseriesColumns) {
    let mut header = vec!["time".to_string(), "gpusInUse".to_string()];
    let cqs: Vec<&str> = world
        .cluster_queues
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    header.extend(cqs.iter().map(|c| format!("gpuQuota:cq={c}")));
    header.extend(
        world
            .flavors
            .iter()
            .map(|f| format!("gpuQuota:flavor={}", f.name)),
    );
    header.extend(cqs.iter().map(|c| format!("pendingActive:cq={c}")));
    header.extend(cqs.iter().map(|c| format!("pendingInadmissible:cq={c}")));
    header.extend(
        world
            .local_queues
            .iter()
            .map(|l| format!("pending:lq={}/{}", l.namespace, l.name)),
    );
    let (ti, spines) = kueuesim_engine::outcome::spine_domains(world);
    let t = kueuesim_engine::placement::topologies(world).nth(ti);
    let with_spines = t.is_some() && !spines.is_empty();
    if let Some(t) = t.filter(|_| !spines.is_empty()) {
        header.extend(
            spines
                .iter()
                .map(|&d| format!("runningGangs:spine={}", t.domain(d).name)),
        );
        header.push("runningGangs:spine=(several)".into());
    }
    let free_gpus = with_spines
        && world
            .resources
            .lookup(kueuesim_model::resources::GPU)
            .is_some();
    if let Some(t) = t.filter(|_| free_gpus) {
        header.extend(
            spines
                .iter()
                .map(|&d| format!("freeGpus:spine={}", t.domain(d).name)),
        );
    }
    let devices = world.config.gpu.devices;
    let fragmentation = devices && !world.config.gpu.target.is_empty();
    if devices {
        header.extend(DEVICE_COUNTS.iter().map(|s| s.to_string()));
        let figures = if fragmentation { 5 } else { 2 };
        header.extend(DEVICE_FIGURES[..figures].iter().map(|s| s.to_string()));
    }
    (
        header,
        TimeseriesColumns {
            spines: with_spines,
            free_gpus,
            devices,
            fragmentation,
        },
    )
}

/// The first cell of a `timeseries.csv` row: the sample's time in seconds.
pub fn timeseries_csv_time(at: kueuesim_model::SimTime) -> String {
    fmt_num(at.as_secs_f64())
}

/// One row of `timeseries.csv`.
pub fn timeseries_csv_row(columns: &TimeseriesColumns, s: &Sample) -> String {
    let mut row = vec![timeseries_csv_time(s.at)];
    let mut counts = Vec::new();
    timeseries_counts(columns, s, &mut counts);
    row.extend(counts.iter().map(i64::to_string));
    let mut figures = Vec::new();
    timeseries_figures(columns, s, &mut figures);
    row.extend(figures.iter().map(|f| f.map_or(String::new(), fmt_num)));
    let mut out = row.join(",");
    out.push('\n');
    out
}

/// The columns of a `timeseries.csv` row after `time`, into `out`.
pub fn timeseries_counts(columns: &TimeseriesColumns, s: &Sample, out: &mut Vec<i64>) {
    out.push(s.gpus_in_use);
    out.extend(&s.gpu_quota_by_cq);
    out.extend(&s.gpu_quota_by_flavor);
    let counts = [&s.pending_active, &s.pending_inadmissible, &s.pending_by_lq];
    out.extend(counts.into_iter().flatten().map(|&n| i64::from(n)));
    if columns.spines {
        out.extend(s.gangs_by_spine.iter().map(|&n| i64::from(n)));
    }
    if columns.free_gpus {
        out.extend(&s.free_gpus_by_spine);
    }
    if columns.devices {
        let f = s.gpu_sharing.unwrap_or_default();
        out.extend([f.gpus_allocated, f.milli_allocated]);
    }
}

/// The ratio columns of a `timeseries.csv` row after the counts, into `out` (None: a ratio
/// of nothing, an empty cell).
pub fn timeseries_figures(columns: &TimeseriesColumns, s: &Sample, out: &mut Vec<Option<f64>>) {
    if !columns.devices {
        return;
    }
    let f = s.gpu_sharing.unwrap_or_default();
    let g = crate::output::GpuSharingOut::of(kueuesim_model::gpu::GpuPolicy::Default, &f);
    out.extend([g.gpu_allocation_ratio, g.milli_gpu_allocation_ratio]);
    if columns.fragmentation {
        out.extend([
            g.fragmented_milli_gpus,
            g.fragmentation_rate,
            g.fragmented_gpu_ratio,
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_quoted_only_when_needed() {
        let text = |s: &str| Cell::Text(s.into()).csv();
        assert_eq!(text("plain"), "plain");
        assert_eq!(text("a,b"), "\"a,b\"");
        assert_eq!(text("say \"hi\""), "\"say \"\"hi\"\"\"");
        // Negative numbers stay numbers; text that would start a formula is guarded.
        assert_eq!(Cell::Num(Some(-1.5)).csv(), "-1.5");
        assert_eq!(Cell::Int(-3).csv(), "-3");
        assert_eq!(text("-3"), "'-3");
        assert_eq!(text("=1+1"), "'=1+1");
    }

    #[test]
    fn device_columns_follow_the_devices_and_the_target() {
        use kueuesim_engine::outcome::GpuSharingFigures;
        use kueuesim_model::gpu::{GpuDemand, TargetPod};
        let mut w = World::default();
        let (_, plain) = timeseries_columns(&w);
        assert!(!plain.devices);
        w.config.gpu.devices = true;
        let (names, cols) = timeseries_columns(&w);
        assert_eq!(names.len(), 6);
        w.config.gpu.target = vec![TargetPod {
            cpu_milli: 0,
            gpu: Some(GpuDemand::Share(500)),
            freq: 1.0,
        }];
        let (names, frag) = timeseries_columns(&w);
        assert_eq!(
            names[names.len() - 3..],
            [
                "fragmentedMilliGpus",
                "fragmentationRate",
                "fragmentedGpuRatio"
            ]
        );
        let mut s = Sample {
            at: kueuesim_model::SimTime::from_secs(60),
            gpus_in_use: 0,
            gpu_quota_by_cq: vec![],
            gpu_quota_by_flavor: vec![],
            gpu_quota_by_cq_flavor: vec![],
            reserving_by_cq: vec![],
            admitted_by_cq: vec![],
            pending_active: vec![],
            pending_inadmissible: vec![],
            pending_by_lq: vec![],
            pending_inadmissible_by_lq: vec![],
            gangs_by_spine: vec![],
            free_gpus_by_spine: vec![],
            gpu_sharing: Some(GpuSharingFigures {
                gpus: 4,
                gpus_allocated: 2,
                milli_allocated: 1500,
                milli_idle: 2500,
                milli_fragmented: Some(500.0),
            }),
        };
        assert_eq!(timeseries_csv_row(&cols, &s), "60,0,2,1500,0.5,0.375\n");
        assert_eq!(
            timeseries_csv_row(&frag, &s),
            "60,0,2,1500,0.5,0.375,500,0.2,0.125\n"
        );
        // No GPUs: the ratios are of nothing, empty cells.
        s.gpu_sharing = Some(GpuSharingFigures::default());
        assert_eq!(timeseries_csv_row(&cols, &s), "60,0,0,0,,\n");
    }

    #[test]
    fn numbers_print_like_json() {
        assert_eq!(fmt_num(1860.0), "1860");
        assert_eq!(fmt_num(0.5), "0.5");
        assert_eq!(fmt_num(-3.0), "-3");
    }
}
