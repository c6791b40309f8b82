//! `metrics.prom` and `metrics.om` as Prometheus, promtool and the Grafana dashboard read
//! them: the text formats, agreement with the result document, and Kueue's metric names.

use std::collections::BTreeMap;

use std::path::PathBuf;
use std::process::Command;

use super::{csv_cells, run_out, stderr, stdout};
/// One sample of the Prometheus text format: name, labels, value. Panics on a malformed line,
/// and checks every family is declared (`# TYPE`) before its samples.
fn parse_prom(text: &str) -> Vec<(String, BTreeMap<String, String>, f64)> {
    let mut declared: BTreeMap<String, String> = BTreeMap::new();
    let mut samples = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
            assert!(["gauge", "counter", "histogram"].contains(&kind), "{line}");
            declared.insert(name.into(), kind.into());
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("sample value");
        let (name, labels) = series.split_once('{').expect("labels");
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{line}"
        );
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| {
                let base = name.strip_suffix(suffix)?;
                (declared.get(base).map(String::as_str) == Some("histogram")).then_some(base)
            })
            .unwrap_or(name);
        assert!(declared.contains_key(family), "{name} has no # TYPE line");
        let body = labels.strip_suffix('}').expect("closing brace");
        let mut map = BTreeMap::new();
        for pair in body.split("\",").filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once("=\"").expect("label=\"value\"");
            map.insert(k.to_string(), v.trim_end_matches('"').to_string());
        }
        let names: Vec<&String> = map.keys().collect();
        assert!(names.iter().any(|k| *k == "replica_role"), "{line}");
        samples.push((name.to_string(), map, value.parse().expect("numeric value")));
    }
    samples
}

#[test]
fn metrics_prom_parses_and_agrees_with_the_result() {
    let dir = run_out(
        "metrics",
        "kueue/within-cq-preemption",
        &["--until", "310s"],
    );
    let prom = std::fs::read_to_string(dir.join("metrics.prom")).expect("metrics.prom");
    let samples = parse_prom(&prom);
    let sum = |name: &str, filter: &dyn Fn(&BTreeMap<String, String>) -> bool| -> f64 {
        samples
            .iter()
            .filter(|(n, l, _)| n == name && filter(l))
            .map(|s| s.2)
            .sum()
    };
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("result.json")).expect("result.json"),
    )
    .expect("JSON");
    let wls = doc["workloads"].as_array().expect("workloads");
    let count = |f: &dyn Fn(&serde_json::Value) -> bool| wls.iter().filter(|w| f(w)).count() as f64;
    let active = count(&|w| w["state"] == "Pending" && w["queueStatus"] == "active");
    assert!(active > 0.0, "the cut-off leaves a workload waiting");
    assert_eq!(
        sum("kueue_pending_workloads", &|l| l["status"] == "active"),
        active
    );
    let holding =
        count(&|w| ["Admitted", "Running", "Evicted"].contains(&w["state"].as_str().unwrap_or("")));
    assert_eq!(sum("kueue_admitted_active_workloads", &|_| true), holding);
    // The LocalQueue mirrors add up to the ClusterQueue figures.
    assert_eq!(
        sum("kueue_local_queue_pending_workloads", &|l| l["status"]
            == "active"),
        active
    );
    assert_eq!(
        sum("kueue_local_queue_admitted_active_workloads", &|_| true),
        holding
    );
    assert_eq!(
        sum("kueue_local_queue_admitted_active_workloads", &|l| {
            l["namespace"] == "team-lower" && l["name"] == "q"
        }),
        count(&|w| {
            w["namespace"] == "team-lower"
                && ["Admitted", "Running", "Evicted"].contains(&w["state"].as_str().unwrap_or(""))
        })
    );
    let admitted_events: usize = wls
        .iter()
        .map(|w| {
            w["events"]
                .as_array()
                .expect("events")
                .iter()
                .filter(|e| e["reason"] == "Admitted")
                .count()
        })
        .sum();
    assert_eq!(
        sum("kueue_admitted_workloads_total", &|_| true),
        admitted_events as f64
    );
    let preemptions: usize = wls
        .iter()
        .map(|w| {
            w["evictions"]
                .as_array()
                .expect("evictions")
                .iter()
                .filter(|e| e["preemptionReason"].is_string())
                .count()
        })
        .sum();
    assert!(preemptions > 0);
    assert_eq!(
        sum("kueue_preempted_workloads_total", &|_| true),
        preemptions as f64
    );
    // Wait-time histograms: one observation per quota reservation, cumulative buckets
    // ending in +Inf = count.
    let reservations: usize = wls
        .iter()
        .map(|w| {
            w["events"]
                .as_array()
                .expect("events")
                .iter()
                .filter(|e| e["reason"] == "QuotaReserved")
                .count()
        })
        .sum();
    for h in [
        "kueue_quota_reserved_wait_time_seconds",
        "kueue_admission_wait_time_seconds",
    ] {
        assert_eq!(
            sum(&format!("{h}_count"), &|_| true),
            reservations as f64,
            "{h}"
        );
        for cq in ["lower", "newer"] {
            let buckets: Vec<f64> = samples
                .iter()
                .filter(|(n, l, _)| *n == format!("{h}_bucket") && l["cluster_queue"] == cq)
                .map(|s| s.2)
                .collect();
            assert!(buckets.windows(2).all(|p| p[0] <= p[1]), "{h} {cq}");
            assert_eq!(
                buckets.last().copied(),
                Some(sum(&format!("{h}_count"), &|l| l["cluster_queue"] == cq))
            );
        }
    }
    // Quota: nominal from the spec; usage at 310 s is what the holding workloads (l-new
    // still terminating) requested, as result.json lists them.
    for (cq, nominal) in [("lower", 6.0), ("newer", 4.0)] {
        let on = |l: &BTreeMap<String, String>| l["cluster_queue"] == cq && l["resource"] == "cpu";
        assert_eq!(sum("kueue_cluster_queue_nominal_quota", &on), nominal);
        assert_eq!(
            sum("kueue_cluster_queue_borrowing_limit", &on),
            f64::INFINITY
        );
        let held: f64 = wls
            .iter()
            .filter(|w| {
                w["clusterQueue"] == cq
                    && ["Admitted", "Running", "Evicted"]
                        .contains(&w["state"].as_str().unwrap_or(""))
            })
            .flat_map(|w| w["podSets"].as_array().expect("podSets").clone())
            .map(|p| {
                p["requests"]["cpu"]
                    .as_str()
                    .expect("cpu request")
                    .parse::<f64>()
                    .expect("whole cores")
                    * p["admittedCount"].as_f64().expect("admitted")
            })
            .sum();
        assert!(held > 0.0);
        assert_eq!(sum("kueue_cluster_queue_resource_usage", &on), held, "{cq}");
        assert_eq!(
            sum("kueue_cluster_queue_resource_reservation", &on),
            held,
            "{cq}"
        );
    }
    // l-urgent (ClusterQueue lower) preempted l-new at 300 s.
    assert_eq!(
        sum("kueue_preempted_workloads_total", &|l| {
            l["reason"] == "InClusterQueue" && l["preempting_cluster_queue"] == "lower"
        }),
        1.0
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn metrics_prom_splits_deactivation_into_reason_and_underlying_cause() {
    let dir = run_out("metrics-evicted", "kueue/pods-ready-backoff", &[]);
    let prom = std::fs::read_to_string(dir.join("metrics.prom")).expect("metrics.prom");
    let evicted: Vec<(String, String, f64)> = parse_prom(&prom)
        .into_iter()
        .filter(|(n, l, _)| n == "kueue_evicted_workloads_total" && l["cluster_queue"] == "cq")
        .map(|(_, l, v)| (l["reason"].clone(), l["underlying_cause"].clone(), v))
        .collect();
    // Three PodsReady timeouts, then the requeuing limit deactivates it (evict.go reports
    // reason Deactivated with the cause).
    assert_eq!(
        evicted,
        [
            ("Deactivated".into(), "RequeuingLimitExceeded".into(), 1.0),
            ("PodsReadyTimeout".into(), String::new(), 3.0)
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn metrics_prom_reports_cluster_queue_status_and_hierarchy() {
    let dir = run_out("metrics-status", "kueue/cohort-cycle", &[]);
    let prom = std::fs::read_to_string(dir.join("metrics.prom")).expect("metrics.prom");
    let samples = parse_prom(&prom);
    let status = |cq: &str| -> Vec<String> {
        samples
            .iter()
            .filter(|(n, l, v)| {
                n == "kueue_cluster_queue_status" && l["cluster_queue"] == cq && *v == 1.0
            })
            .map(|(_, l, _)| l["status"].clone())
            .collect()
    };
    // A ClusterQueue in a cohort cycle is inactive: pending; the others are active.
    assert_eq!(status("loops"), ["pending"]);
    assert_eq!(status("ok-borrower"), ["active"]);
    let info: Vec<(String, String)> = samples
        .iter()
        .filter(|(n, l, _)| n == "kueue_cluster_queue_info" && l["cluster_queue"] == "loops")
        .map(|(_, l, _)| (l["parent_cohort"].clone(), l["root_cohort"].clone()))
        .collect();
    assert_eq!(info, [("loop-a".to_string(), String::new())]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Checks the OpenMetrics text: `# TYPE` then `# HELP` once per family, its samples next and
/// contiguous, each series in increasing timestamp order, `# EOF` last. Returns the families.
fn check_openmetrics(text: &str) -> Vec<String> {
    let mut families: Vec<String> = Vec::new();
    let mut last: BTreeMap<String, f64> = BTreeMap::new();
    let mut lines = text.lines().peekable();
    let mut samples = 0;
    while let Some(line) = lines.next() {
        if line == "# EOF" {
            assert!(lines.peek().is_none(), "# EOF is the last line");
            assert!(samples > 0, "samples written");
            return families;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
            assert_eq!(kind, "gauge", "{line}");
            assert!(!families.iter().any(|f| f == name), "{name} declared twice");
            families.push(name.to_string());
            let help = lines.next().expect("# HELP");
            assert!(help.starts_with(&format!("# HELP {name} ")), "{help}");
            continue;
        }
        let family = families.last().expect("a sample after a # TYPE");
        let (series, rest) = line.rsplit_once('}').expect("labels");
        assert!(
            series.starts_with(&format!("{family}{{")),
            "{line} outside its family"
        );
        let mut parts = rest.split_whitespace();
        let _value: f64 = parts.next().expect("value").parse().expect("number");
        let ts: f64 = parts.next().expect("timestamp").parse().expect("number");
        let prev = last.insert(series.to_string(), ts);
        assert!(prev.is_none_or(|p| p < ts), "{line}: timestamps go back");
        samples += 1;
    }
    panic!("no # EOF");
}

#[test]
fn metrics_om_is_openmetrics_that_promtool_imports() {
    let dir = run_out("om", "platform", &["--write", "om,timeseries"]);
    let om = std::fs::read_to_string(dir.join("metrics.om")).expect("metrics.om");
    let families = check_openmetrics(&om);
    // A steady series is written only every few minutes, yet at every sample time a query
    // (the latest sample at most 5 minutes old, Prometheus' lookback) reads the value of
    // timeseries.csv: here each ClusterQueue's active pending workloads.
    let csv = std::fs::read_to_string(dir.join("timeseries.csv")).expect("timeseries.csv");
    let mut rows = csv.lines();
    let header = csv_cells(rows.next().expect("header"));
    let rows: Vec<Vec<String>> = rows.map(csv_cells).collect();
    let start = 1_772_409_600i64;
    let mut checked = 0;
    for (col, name) in header.iter().enumerate() {
        let Some(cq) = name.strip_prefix("pendingActive:cq=") else {
            continue;
        };
        let prefix = format!(
            "kueue_pending_workloads{{cluster_queue=\"{cq}\",replica_role=\"standalone\",status=\"active\"}} "
        );
        let points: Vec<(i64, String)> = om
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .map(|rest| {
                let (v, t) = rest.split_once(' ').expect("value timestamp");
                (t.parse::<i64>().expect("seconds") - start, v.to_string())
            })
            .collect();
        assert!(
            points.len() < rows.len(),
            "{cq}: steady stretches are left out"
        );
        for row in &rows {
            let t: i64 = row[0].parse().expect("time");
            let (at, v) = points.iter().rev().find(|p| p.0 <= t).expect("a sample");
            assert!(t - at <= 300, "{cq} at {t}: latest sample {at} too old");
            assert_eq!(v, &row[col], "{cq} at {t}");
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked}");
    for f in [
        "kueue_pending_workloads",
        "kueue_admitted_active_workloads",
        "kueue_reserving_active_workloads",
        "kueue_local_queue_pending_workloads",
        "kueue_cluster_queue_resource_usage",
        "kueue_cluster_queue_nominal_quota",
    ] {
        assert!(families.iter().any(|x| x == f), "{f} missing: {families:?}");
    }
    // The platform day starts at 2026-03-02T00:00:00Z (its startTime): the first samples
    // are stamped with it.
    assert!(
        om.contains("} 0 1772409600\n"),
        "epoch is the scenario's startTime"
    );
    // A scenario with no start (its summary says 1970) is stamped from 2026-01-01.
    let unset = run_out("om-epoch", "golden/first-fit-nodes", &["--write", "om"]);
    let text = std::fs::read_to_string(unset.join("metrics.om")).expect("metrics.om");
    check_openmetrics(&text);
    assert!(text.contains("} 0 1767225600\n"), "default epoch");
    let _ = std::fs::remove_dir_all(&unset);
    // Some ClusterQueue holds GPU quota at some point, and something waits.
    let positive = |name: &str| {
        om.lines()
            .filter(|l| l.starts_with(&format!("{name}{{")))
            .any(|l| l.split(' ').nth(1).expect("value") != "0")
    };
    assert!(positive("kueue_cluster_queue_resource_usage"));
    assert!(positive("kueue_admitted_active_workloads"));
    assert!(positive("kueue_pending_workloads"));

    let promtool = std::env::var("PROMTOOL").unwrap_or_else(|_| "/usr/bin/promtool".into());
    if !std::path::Path::new(&promtool).exists() {
        assert!(
            std::env::var("KUEUESIM_REQUIRE_PROMTOOL").is_err(),
            "KUEUESIM_REQUIRE_PROMTOOL is set but {promtool} does not exist"
        );
        eprintln!("skipping the import: no promtool at {promtool} (install Debian's prometheus)");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let blocks = dir.join("blocks");
    let o = Command::new(&promtool)
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(dir.join("metrics.om"))
        .arg(&blocks)
        .output()
        .expect("promtool runs");
    assert!(o.status.success(), "promtool: {}{}", stdout(&o), stderr(&o));
    let made = std::fs::read_dir(&blocks).expect("blocks").count();
    assert!(made > 0, "promtool wrote blocks");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn grafana_dashboard_queries_only_series_of_metrics_om() {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "docs",
        "grafana-dashboard.json",
    ]
    .iter()
    .collect();
    let text = std::fs::read_to_string(&path).expect("docs/grafana-dashboard.json");
    let dash: serde_json::Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let mut queries = Vec::new();
    for p in dash["panels"].as_array().expect("panels") {
        for t in p["targets"].as_array().expect("targets") {
            queries.push(t["expr"].as_str().expect("expr").to_string());
        }
    }
    for v in dash["templating"]["list"].as_array().expect("variables") {
        queries.push(v["definition"].as_str().expect("definition").to_string());
    }
    let names: std::collections::BTreeSet<String> = queries
        .iter()
        .flat_map(|q| {
            q.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("kueue_") || w.starts_with("kueuesim_"))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(names.len() >= 5, "{names:?}");
    let dir = run_out("grafana", "platform", &["--write", "om", "--sample", "10m"]);
    let om = std::fs::read_to_string(dir.join("metrics.om")).expect("metrics.om");
    for n in &names {
        assert!(
            om.contains(&format!("# TYPE {n} gauge\n")) && om.contains(&format!("\n{n}{{")),
            "the dashboard queries {n}, which metrics.om does not have"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
