//! Kueue's scheduler performance scenarios (`scenarios/kueue-perf/`: baseline, large-scale,
//! tas) measured the way Kueue's harness measures them, against its published CI means and
//! pass bands. With `-- --nocapture` it prints the table of docs/validation.md.
//!
//! The measures mirror `test/performance/scheduler/runner/recorder` and `checker`:
//! - wall time: the harness times the minimalkueue process; here, the simulated end (the
//!   last event that changed anything: the last workload's quota released);
//! - ClusterQueue usage %: Σ over ClusterQueues of ∫ CPU usage of admitted workloads dt,
//!   divided by (Σ nominal CPU quota × (last − first CQ event)), with the first event at
//!   time 0 (queues exist from the start) and the last at the simulated end;
//! - time to admission: per class (the workload-set name), the integer mean over its
//!   workloads of (Admitted condition time − creation time), the latest admission counting
//!   for a workload admitted twice.

use std::collections::BTreeMap;

use kueuesim_engine::Simulation;
use kueuesim_scenario::{LoadOptions, load};

use crate::util::scenarios_dir;

/// What the harness reports for one run.
struct Measured {
    wall_ms: i64,
    usage_pct: f64,
    /// Class → mean time to admission (ms).
    time_to_admission: BTreeMap<String, i64>,
    workloads: usize,
}

/// Kueue's published numbers for a scenario (rangespec.yaml at commit ff69552e: the CI
/// mean in its comments, and the pass threshold).
struct Published {
    name: &'static str,
    wall_mean_ms: i64,
    max_wall_ms: i64,
    usage_mean_pct: f64,
    min_usage_pct: f64,
    /// (class, mean, max).
    classes: &'static [(&'static str, i64, i64)],
    /// The measures (as the table names them) the calibration leaves more than 15 % from
    /// the published mean (docs/validation.md says why); every other one is held to 15 %.
    misses: &'static [&'static str],
}

/// How far from the published mean a measure may land: the goal of issue 18.
const CLOSE: f64 = 0.15;

const PUBLISHED: &[Published] = &[
    Published {
        name: "baseline",
        wall_mean_ms: 351_116,
        max_wall_ms: 425_000,
        usage_mean_pct: 55.9,
        min_usage_pct: 50.0,
        classes: &[
            ("large", 16_501, 23_000),
            ("medium", 76_768, 90_000),
            ("small", 215_468, 260_000),
        ],
        misses: &[],
    },
    Published {
        name: "large-scale",
        wall_mean_ms: 1_179_411,
        max_wall_ms: 1_416_000,
        usage_mean_pct: 38.64,
        min_usage_pct: 31.6,
        classes: &[
            ("large", 105_604, 128_000),
            ("medium", 256_413, 308_000),
            ("small", 700_379, 841_000),
        ],
        misses: MISSES_LARGE_SCALE,
    },
    Published {
        name: "tas",
        wall_mean_ms: 401_472,
        max_wall_ms: 482_000,
        usage_mean_pct: 62.41,
        min_usage_pct: 57.0,
        classes: &[
            ("large-balanced-rack", 37_862, 46_000),
            ("large-preferred-rack", 39_573, 48_000),
            ("large-required-rack", 39_625, 48_000),
            ("medium-balanced-rack", 106_303, 128_000),
            ("medium-preferred-rack", 106_324, 128_000),
            ("medium-required-rack", 107_071, 129_000),
            ("small-balanced-rack", 237_846, 286_000),
            ("small-preferred-rack", 246_090, 296_000),
            ("small-required-rack", 246_755, 297_000),
        ],
        misses: MISSES_TAS,
    },
];

const MISSES_LARGE_SCALE: &[&str] = &[];
const MISSES_TAS: &[&str] = &[];

fn measure(name: &str) -> Measured {
    let path = scenarios_dir().join(format!("kueue-perf/{name}.yaml"));
    let files = kueuesim_scenario::embedded::read_paths(&[path]).expect("readable");
    let world = load(&files, LoadOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .world;
    let outcome = Simulation::new(&world).run();
    let end = outcome.stats.end.millis();
    let cpu = world.resources.lookup("cpu").expect("cpu is requested");
    let nominal: i64 = world
        .cluster_queues
        .iter()
        .flat_map(|c| &c.resource_groups)
        .flat_map(|rg| &rg.flavors)
        .flat_map(|f| &f.resources)
        .filter(|r| r.resource == cpu)
        .map(|r| r.nominal)
        .sum();
    let mut used: i128 = 0;
    let mut sums: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for (w, rec) in world.workloads.iter().zip(&outcome.workloads) {
        let rec = rec.as_ref().expect("every workload arrives");
        let millicores: i64 = w
            .pod_sets
            .iter()
            .map(|p| p.requests.get(cpu) * i64::from(p.count))
            .sum();
        // Each admission holds quota until the next eviction, or the finish.
        let starts = rec
            .events
            .iter()
            .filter(|e| e.reason == "QuotaReserved")
            .map(|e| e.at);
        let stops = rec
            .evictions
            .iter()
            .map(|e| e.at)
            .chain(rec.finished_at.or(Some(outcome.stats.end)));
        for (a, b) in starts.zip(stops) {
            used += i128::from(millicores) * i128::from((b - a).millis());
        }
        let admitted = rec
            .admitted_at
            .unwrap_or_else(|| panic!("{name}: {} never admitted", w.name));
        let class = w.name.rsplit_once('-').map_or(w.name.as_str(), |c| c.0);
        let e = sums.entry(class.to_string()).or_default();
        e.0 += (admitted - w.created_at).millis();
        e.1 += 1;
    }
    Measured {
        wall_ms: end,
        usage_pct: used as f64 * 100.0 / (nominal as f64 * end as f64),
        time_to_admission: sums.into_iter().map(|(c, (t, n))| (c, t / n)).collect(),
        workloads: world.workloads.len(),
    }
}

fn secs(ms: i64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// Runs scenario `name`, prints its table (as in docs/validation.md) and asserts its bands,
/// and that every measure not listed as a miss is within 15 % of its published mean (and
/// every listed one is not, so the list cannot go stale).
fn check_bands(name: &str) {
    let p = PUBLISHED
        .iter()
        .find(|p| p.name == name)
        .expect("a published scenario");
    let m = measure(p.name);
    let mut failures = Vec::new();
    let mut table = format!(
        "\n#### {} ({} workloads)\n\n| measure | kueuesim | published mean | off by | band | in band |\n|---|---|---|---|---|---|\n",
        p.name, m.workloads
    );
    let mut seen: Vec<String> = Vec::new();
    let mut row = |what: String, ours: String, mean: String, off: f64, band: String, ok: bool| {
        let close = off.abs() <= CLOSE;
        table.push_str(&format!(
            "| {what} | {ours} | {mean} | {:+.0} % | {band} | {} |\n",
            off * 100.0,
            if ok { "yes" } else { "**no**" }
        ));
        if !ok {
            failures.push(format!("{}: {what} = {ours}, band {band}", p.name));
        }
        let miss = p.misses.contains(&what.as_str());
        if close == miss {
            failures.push(format!(
                "{}: {what} = {ours} is {:+.1} % from the mean {mean}, {}",
                p.name,
                off * 100.0,
                if miss {
                    "listed as a miss: take it off the list"
                } else {
                    "more than 15 %"
                }
            ));
        }
        seen.push(what);
    };
    let off = |ours: f64, mean: f64| (ours - mean) / mean;
    row(
        "wall time (simulated end)".into(),
        secs(m.wall_ms),
        secs(p.wall_mean_ms),
        off(m.wall_ms as f64, p.wall_mean_ms as f64),
        format!("≤ {}", secs(p.max_wall_ms)),
        m.wall_ms <= p.max_wall_ms,
    );
    row(
        "ClusterQueue usage".into(),
        format!("{:.1} %", m.usage_pct),
        format!("{:.1} %", p.usage_mean_pct),
        off(m.usage_pct, p.usage_mean_pct),
        format!("≥ {:.1} %", p.min_usage_pct),
        m.usage_pct >= p.min_usage_pct,
    );
    assert_eq!(
        m.time_to_admission.len(),
        p.classes.len(),
        "{}: classes {:?}",
        p.name,
        m.time_to_admission.keys().collect::<Vec<_>>()
    );
    for &(class, mean, max) in p.classes {
        let ours = *m
            .time_to_admission
            .get(class)
            .unwrap_or_else(|| panic!("{}: no class {class}", p.name));
        row(
            format!("avg time to admission, {class}"),
            secs(ours),
            secs(mean),
            off(ours as f64, mean as f64),
            format!("≤ {}", secs(max)),
            ours <= max,
        );
    }
    println!("{table}");
    // A listed miss that names no measure (misspelt, renamed) would go unnoticed otherwise.
    for miss in p.misses {
        if !seen.iter().any(|w| w == miss) {
            failures.push(format!("{}: the miss {miss:?} names no measure", p.name));
        }
    }
    assert!(
        failures.is_empty(),
        "outside the bands or the 15 % bar:\n{}",
        failures.join("\n")
    );
}

// One test per scenario, so they run in parallel.

#[test]
fn kueue_perf_baseline_stays_in_its_bands() {
    check_bands("baseline");
}

#[test]
fn kueue_perf_large_scale_stays_in_its_bands() {
    check_bands("large-scale");
}

#[test]
fn kueue_perf_tas_stays_in_its_bands() {
    check_bands("tas");
}

/// Three workloads of 1 CPU for 1 s queued at once in one ClusterQueue of `quota` CPUs, with
/// a generator, and `latency` as `spec.kueue.controllerLatency`: (admittedAt, runningAt,
/// finishedAt) of each.
fn latency_run(latency: &str, quota: u32) -> Vec<(Option<f64>, Option<f64>, Option<f64>)> {
    latency_run_with(latency, quota, "")
}

/// [`latency_run`] with more documents (`extra`) after the three workloads.
fn latency_run_with(
    latency: &str,
    quota: u32,
    extra: &str,
) -> Vec<(Option<f64>, Option<f64>, Option<f64>)> {
    let text = format!(
        "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
spec:
  kueue:
    controllerLatency: {latency}
---
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: rf}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{{name: rf, resources: [{{name: cpu, nominalQuota: {quota}}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: ns}}
spec: {{clusterQueue: cq}}
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {{name: w, namespace: ns}}
spec:
  count: 3
  arrival: {{interval: 0s}}
  requests: {{cpu: {{fixed: '1'}}}}
  duration: {{fixed: 1s}}
  queues: [{{name: lq}}]
{extra}"
    );
    let loaded = crate::util::load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    let outcome = Simulation::new(&loaded.world).run();
    let r = kueuesim_report::output::result(&loaded.world, &outcome);
    r.workloads.iter().map(crate::util::times).collect()
}

#[test]
fn controller_latency_spaces_cycles_and_delays_start_and_release() {
    // Default: instantaneous; all three admitted and started at 0.
    let none = latency_run("{}", 10);
    assert_eq!(
        none,
        vec![(Some(0.0), Some(0.0), Some(1.0)); 3],
        "zero latency is today's behaviour"
    );
    // One head per ClusterQueue per cycle; a cycle with one admission takes 100 + 10 ms.
    // Admission writes (50 ms each) start the workloads; a finish is no write of Kueue's.
    let slow = latency_run("{cycle: 100ms, perAdmission: 10ms, apiWrite: 50ms}", 10);
    let expected = vec![
        (Some(0.0), Some(0.05), Some(1.05)),
        (Some(0.11), Some(0.16), Some(1.16)),
        (Some(0.22), Some(0.27), Some(1.27)),
    ];
    assert_eq!(slow, expected);
    // The snapshot's cost per ClusterQueue (one here) lengthens every cycle the same way.
    let per_cq = latency_run("{cycle: 100ms, perClusterQueue: 10ms, apiWrite: 50ms}", 10);
    assert_eq!(per_cq, expected);
}

#[test]
fn controller_latency_client_burst_sends_writes_at_once_then_one_per_token() {
    // Cycles (10 ms) outpace the client (a token per 50 ms). One write at a time: each
    // admission's write waits for the one before, so the pods start 50 ms apart.
    let serial = latency_run("{cycle: 10ms, apiWrite: 50ms}", 10);
    let running: Vec<_> = serial.iter().map(|t| t.1).collect();
    assert_eq!(running, vec![Some(0.05), Some(0.1), Some(0.15)]);
    assert_eq!(
        serial,
        latency_run("{cycle: 10ms, apiWrite: 50ms, apiBurst: 1}", 10)
    );
    // A bucket of two tokens, full at the start: the second write goes as soon as it is
    // issued (10 ms), the third waits for the token the first one's refill brings (50 ms).
    let burst = latency_run("{cycle: 10ms, apiWrite: 50ms, apiBurst: 2}", 10);
    let running: Vec<_> = burst.iter().map(|t| t.1).collect();
    assert_eq!(running, vec![Some(0.05), Some(0.06), Some(0.1)]);
    let admitted: Vec<_> = burst.iter().map(|t| t.0).collect();
    assert_eq!(admitted, vec![Some(0.0), Some(0.01), Some(0.02)]);
}

#[test]
fn controller_latency_client_bucket_refills_to_its_burst_and_no_more() {
    // Three more workloads 10 s later, after the bucket has been idle long enough to refill
    // 200 tokens' worth: it holds `apiBurst` (2) of them, so the later three start as the
    // first three did (`rate.Limiter` caps its tokens at the burst), not all at once.
    let later = "---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {name: later, namespace: ns}
spec:
  count: 3
  arrival: {start: 10s, interval: 0s}
  requests: {cpu: {fixed: '1'}}
  duration: {fixed: 1s}
  queues: [{name: lq}]
";
    let runs = latency_run_with("{cycle: 10ms, apiWrite: 50ms, apiBurst: 2}", 10, later);
    let running: Vec<_> = runs.iter().map(|t| t.1).collect();
    assert_eq!(
        running,
        vec![
            Some(0.05),
            Some(0.06),
            Some(0.1),
            Some(10.05),
            Some(10.06),
            Some(10.1)
        ]
    );
}

#[test]
fn controller_latency_cycle_waits_for_its_status_writes() {
    // Quota for one: each later head finds no room when first popped, and its new Pending
    // condition is a status patch the cycle waits for. A finish requeues the parked heads
    // one second later (the batched inadmissible requeue).
    let quick = latency_run("{cycle: 100ms, apiWrite: 50ms}", 1);
    assert_eq!(
        quick,
        vec![
            (Some(0.0), Some(0.05), Some(1.05)),
            (Some(2.05), Some(2.1), Some(3.1)),
            (Some(4.1), Some(4.15), Some(5.15)),
        ]
    );
    // The cycle at 0.1 s patches the second head's condition until 3.1 s, past the requeue
    // at 2.05 s; the cycle at 3.2 s does the same for the third head until 6.2 s.
    let slow = latency_run("{cycle: 100ms, apiWrite: 50ms, statusWrite: 3s}", 1);
    assert_eq!(
        slow,
        vec![
            (Some(0.0), Some(0.05), Some(1.05)),
            (Some(3.1), Some(3.15), Some(4.15)),
            (Some(6.2), Some(6.25), Some(7.25)),
        ]
    );
}

#[test]
fn controller_latency_bad_settings_name_file_line_column() {
    let sim = |latency: &str| {
        format!(
            "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nspec:\n  kueue:\n    controllerLatency: {latency}\n"
        )
    };
    let e = crate::util::load_error(&sim("{cycle: soon}"));
    assert!(e.starts_with("t.yaml:5:32:"), "{e}");
    let e = crate::util::load_error(&sim("{cycles: 1s}"));
    assert!(e.starts_with("t.yaml:5:") && e.contains("cycles"), "{e}");
    let e = crate::util::load_error(&sim("{apiWrite: 20ms, apiBurst: -1}"));
    assert!(
        e.starts_with("t.yaml:5:51:") && e.contains("apiBurst"),
        "{e}"
    );
}

#[test]
fn feature_gates_switch_scan_progress_and_name_bad_values() {
    let sim = |gates: &str| {
        format!(
            "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nspec:\n  kueue:\n    featureGates: {gates}\n"
        )
    };
    let gates = |text: &str| {
        crate::util::load_text("t.yaml", text)
            .expect("loads")
            .world
            .config
            .kueue_gates
    };
    assert!(gates("apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\n").preserve_scan_progress);
    assert!(!gates(&sim("{FlavorFungibilityPreserveScanProgress: false}")).preserve_scan_progress);
    assert!(gates(&sim("{FlavorFungibilityPreserveScanProgress: true}")).preserve_scan_progress);
    assert!(gates("apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\n").recompute_on_overlap);
    let off = gates(&sim(
        "{RecomputeAssignmentUponPreemptionTargetsOverlap: false}",
    ));
    assert!(!off.recompute_on_overlap && off.preserve_scan_progress);
    assert!(off.scheduling_equivalence_hashing);
    let off = gates(&sim("{SchedulingEquivalenceHashing: false}"));
    assert!(!off.scheduling_equivalence_hashing && off.recompute_on_overlap);
    let e = crate::util::load_error(&sim("{FlavorFungibilityPreserveScanProgress: maybe}"));
    assert!(
        e.starts_with("t.yaml:5:59:") && e.contains("expected true or false"),
        "{e}"
    );
    let loaded = crate::util::load_text("t.yaml", &sim("{TopologyAwareScheduling: true}"))
        .expect("an unknown gate is a warning");
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.starts_with("t.yaml:5:45:")
                && w.contains("featureGates.TopologyAwareScheduling")),
        "{:?}",
        loaded.warnings
    );
}
