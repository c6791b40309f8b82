//! `run --out` as a user reads it: the directory's files against the JSON document, the time
//! series, the HTML report (rendered in headless Chromium when one is installed), streamed
//! runs, `--write` and `--sample`.

use std::path::PathBuf;
use std::process::{Command, Output};

use super::{csv_cells, files_in, kueuesim, run_out, scenario, stderr, stdout, temp_dir};

#[test]
fn out_dir_files_agree_with_the_json_document() {
    let dir = run_out("out", "kueue/within-cq-preemption", &[]);
    let scenario_dir = scenario("kueue/within-cq-preemption");
    let json = kueuesim(&["run", &scenario_dir, "-o", "json"]);
    let result = std::fs::read_to_string(dir.join("result.json")).expect("result.json");
    assert_eq!(result, stdout(&json), "result.json is the -o json document");
    let doc: serde_json::Value = serde_json::from_str(&result).expect("valid JSON");
    let workloads = doc["workloads"].as_array().expect("workloads");

    // workloads.csv: a header and one row per workload, the same values as the document.
    let csv = std::fs::read_to_string(dir.join("workloads.csv")).expect("workloads.csv");
    let mut lines = csv.lines();
    let header = csv_cells(lines.next().expect("header"));
    let rows: Vec<Vec<String>> = lines.map(csv_cells).collect();
    assert_eq!(rows.len(), workloads.len());
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let mut preempted = 0;
    for (row, w) in rows.iter().zip(workloads) {
        assert_eq!(row.len(), header.len(), "{row:?}");
        assert_eq!(row[col("name")], w["name"].as_str().expect("name"));
        assert_eq!(row[col("state")], w["state"].as_str().expect("state"));
        let admitted = w["admittedAt"].as_f64().map(|a| a.to_string());
        let cell = &row[col("admittedAt")];
        assert_eq!(
            (!cell.is_empty()).then(|| cell.parse::<f64>().expect("number").to_string()),
            admitted
        );
        let evictions = w["evictions"].as_array().expect("evictions").len();
        assert_eq!(row[col("evictions")], evictions.to_string());
        preempted += row[col("preemptions")].parse::<usize>().expect("count");
    }
    assert!(preempted > 0, "the scenario preempts");

    // events.jsonl: every event of every workload, in time order.
    let events = std::fs::read_to_string(dir.join("events.jsonl")).expect("events.jsonl");
    let total: usize = workloads
        .iter()
        .map(|w| w["events"].as_array().expect("events").len())
        .sum();
    let lines: Vec<serde_json::Value> = events
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), total);
    let times: Vec<f64> = lines
        .iter()
        .map(|l| l["at"].as_f64().expect("at"))
        .collect();
    assert!(times.windows(2).all(|p| p[0] <= p[1]), "{times:?}");
    assert!(
        lines
            .iter()
            .any(|l| l["reason"] == "Preempted" && l["name"].is_string())
    );

    // Same inputs, same files.
    let again = run_out("out-again", "kueue/within-cq-preemption", &[]);
    for f in [
        "result.json",
        "workloads.csv",
        "queues.csv",
        "events.jsonl",
        "timeseries.csv",
        "metrics.prom",
        "metrics.om",
        "report.html",
        "summary.json",
    ] {
        assert_eq!(
            std::fs::read(dir.join(f)).expect("first"),
            std::fs::read(again.join(f)).expect("second"),
            "{f} differs between runs"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&again);
}

#[test]
fn out_dir_that_cannot_be_created_is_an_io_failure() {
    let dir = temp_dir("out-blocked");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").expect("write");
    // A directory inside a file cannot be created: the system says why (exit 1).
    let o = kueuesim(&[
        "run",
        &scenario("golden/first-fit-nodes"),
        "--out",
        file.join("sub").to_str().expect("utf-8 temp path"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("a-file"), "{}", stderr(&o));
    // The file itself is a usage error, found before the run (exit 2).
    let o = kueuesim(&[
        "run",
        &scenario("golden/first-fit-nodes"),
        "--out",
        file.to_str().expect("utf-8 temp path"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a-file: is a file: expected a directory"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn timeseries_samples_every_minute_to_the_end() {
    let dir = run_out("timeseries", "kueue/block-admission", &[]);
    let csv = std::fs::read_to_string(dir.join("timeseries.csv")).expect("timeseries.csv");
    let mut lines = csv.lines();
    let header = csv_cells(lines.next().expect("header"));
    assert_eq!(
        header,
        [
            "time",
            "gpusInUse",
            "gpuQuota:cq=cq",
            "gpuQuota:flavor=default",
            "pendingActive:cq=cq",
            "pendingInadmissible:cq=cq",
            "pending:lq=team/q"
        ]
    );
    let rows: Vec<Vec<i64>> = lines
        .map(|l| {
            csv_cells(l)
                .iter()
                .map(|c| c.parse().expect("integer cell"))
                .collect()
        })
        .collect();
    // The run ends at 4140 s (b finishes): samples at 0, 60, …, 4140.
    assert_eq!(rows.len(), 4140 / 60 + 1);
    assert!(rows.iter().enumerate().all(|(i, r)| r[0] == 60 * i as i64));
    let at = |t: i64| rows[(t / 60) as usize][1..6].to_vec();
    // The LocalQueue's pending count is the ClusterQueue's (its only LocalQueue).
    assert!(
        rows.iter().all(|r| r[6] == r[4] + r[5]),
        "pending:lq = active + inadmissible"
    );
    // (in use, quota of cq, quota of flavor, pending active, pending inadmissible), from the
    // scenario's hand computation: stuck holds 16 GPUs of quota (never placed) while a and b
    // wait; at 300 s stuck is out (back-off) and a admitted; b admitted at 420 s, stuck again
    // at 540 s; a finishes at 4020 s, b at 4140 s.
    assert_eq!(at(60), [0, 16, 16, 2, 0]);
    assert_eq!(at(300), [2, 2, 2, 1, 1]);
    assert_eq!(at(360), [2, 2, 2, 2, 0]);
    assert_eq!(at(420), [4, 4, 4, 1, 0]);
    assert_eq!(at(540), [4, 20, 20, 0, 0]);
    assert_eq!(at(4080), [2, 2, 2, 0, 0]);
    assert_eq!(at(4140), [0, 0, 0, 0, 0]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn timeseries_counts_running_gangs_per_spine() {
    // V07: a hard tier-1 gang of two under s2 (the highest HyperNode tier, the "spine").
    let dir = run_out("gangs", "placement/V07-hard-tier1-one-leaf", &[]);
    let csv = std::fs::read_to_string(dir.join("timeseries.csv")).expect("timeseries.csv");
    let mut lines = csv.lines();
    let header = csv_cells(lines.next().expect("header"));
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name} in {header:?}"))
    };
    let (s2, several) = (
        col("runningGangs:spine=s2"),
        col("runningGangs:spine=(several)"),
    );
    let first = csv_cells(lines.next().expect("t=0"));
    assert_eq!((first[s2].as_str(), first[several].as_str()), ("1", "0"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn timeseries_and_report_follow_the_gpu_devices() {
    // The KAI sharing case: 3000 milli held on all 4 GPUs at 600 s, 3250 from 3601 s.
    let dir = run_out("devices", "golden/kai-gpu-sharing", &["--sample", "10m"]);
    let csv = std::fs::read_to_string(dir.join("timeseries.csv")).expect("timeseries.csv");
    let mut lines = csv.lines();
    let header = csv_cells(lines.next().expect("header"));
    let tail: Vec<&str> = header[header.len() - 4..]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        [
            "gpusAllocated",
            "milliGpusAllocated",
            "gpuAllocationRatio",
            "milliGpuAllocationRatio"
        ]
    );
    let rows: Vec<Vec<String>> = lines.map(csv_cells).collect();
    let last4 = |i: usize| rows[i][rows[i].len() - 4..].join(",");
    assert_eq!(
        (rows[1][0].as_str(), last4(1)),
        ("600", "4,3000,1,0.75".into())
    );
    assert_eq!(
        (rows[7][0].as_str(), last4(7)),
        ("4200", "4,3250,1,0.8125".into())
    );
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    assert!(html.contains("id=\"gpu-sharing\""), "the devices panel");
    assert!(html.contains("milli-GPU allocation ratio"), "its lines");
    if let Some(chromium) = chromium() {
        let page = format!("file://{}", dir.join("report.html").display());
        let dom = headless(&chromium, &dir.join("profile-dom"), &["--dump-dom", &page]);
        assert!(dom.status.success(), "{}", stderr(&dom));
        let dom = stdout(&dom);
        let plots = dom.matches("class=\"plot\"").count();
        assert!(
            dom.contains(&format!("data-plots=\"{plots}/{plots}\"")),
            "every plot drew its marks"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Debian's Chromium, if installed (`.ci/run` installs it and sets
/// KUEUESIM_REQUIRE_CHROMIUM=1, so there the test cannot be skipped).
pub(super) fn chromium() -> Option<String> {
    let path = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if std::path::Path::new(&path).exists() {
        return Some(path);
    }
    assert!(
        std::env::var("KUEUESIM_REQUIRE_CHROMIUM").is_err(),
        "KUEUESIM_REQUIRE_CHROMIUM is set but {path} does not exist"
    );
    eprintln!("skipping: no Chromium at {path} (set CHROMIUM or install Debian's chromium)");
    None
}

pub(super) fn headless(chromium: &str, profile: &std::path::Path, args: &[&str]) -> Output {
    Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium runs")
}

#[test]
fn report_html_renders_every_plot_offline_in_headless_chromium() {
    let dir = run_out("report", "platform", &[]);
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    // Self-contained: nothing to fetch.
    for needle in ["http://", "https://", " src=", "<link", "@import", "url("] {
        assert!(!html.contains(needle), "report.html references {needle:?}");
    }
    let Some(chromium) = chromium() else {
        return;
    };
    let page = format!("file://{}", dir.join("report.html").display());
    let dom = headless(&chromium, &dir.join("profile-dom"), &["--dump-dom", &page]);
    assert!(dom.status.success(), "{}", stderr(&dom));
    let dom = stdout(&dom);
    let plots = dom.matches("class=\"plot\"").count();
    assert!(plots >= 6, "{plots} plots");
    assert_eq!(
        dom.matches("data-rendered=\"yes\"").count(),
        plots,
        "every plot drew its marks"
    );
    assert!(
        dom.contains(&format!("data-plots=\"{plots}/{plots}\"")),
        "self-check ran"
    );
    assert!(
        dom.contains("data-requests=\"0\""),
        "the page made no network request"
    );
    // The queue table: a row per ClusterQueue, every bound-by bar laid out with a width.
    assert!(
        dom.contains("data-queue-rows=\"3\""),
        "three ClusterQueue rows"
    );
    let bars = attr_of(&dom, "id=\"check\"", "data-bound-bars");
    let (drawn, total) = bars.split_once('/').expect("drawn/total");
    assert!(
        drawn == total && total.parse::<usize>().expect("count") >= 4,
        "bound-by bars {bars}"
    );
    // The free-GPU panel: one line per spine, each through many points.
    let points = attr_of(&dom, "id=\"check\"", "data-spine-points");
    let points: Vec<usize> = points
        .split(',')
        .map(|p| p.parse().expect("a count"))
        .collect();
    assert_eq!(points.len(), 2, "a line per spine");
    assert!(points.iter().all(|&p| p > 10), "{points:?}");
    let shot = dir.join("report.png");
    let o = headless(
        &chromium,
        &dir.join("profile-shot"),
        &[
            "--window-size=820,2400",
            &format!("--screenshot={}", shot.display()),
            &page,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let png = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        png.len() > 20_000,
        "a screenshot with content: {} bytes",
        png.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The value of attribute `name` of the first element whose tag contains `marker`.
fn attr_of(html: &str, marker: &str, name: &str) -> String {
    let at = html
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} in the page"));
    let tag = &html[html[..at].rfind('<').expect("tag start")..];
    let tag = &tag[..tag.find('>').expect("tag end")];
    let from = tag
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("{name} in {tag}"))
        + name.len()
        + 3;
    tag[from..from + tag[from..].find('"').expect("closing quote")].to_string()
}

/// The `data-p95` of every p95 dot of report.html's wait CDF, by ClusterQueue.
fn report_p95s(html: &str) -> Vec<(String, f64)> {
    html.split("<circle class=\"data p95\"")
        .skip(1)
        .map(|dot| {
            let attr = |name: &str| {
                let from = dot.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
                dot[from..from + dot[from..].find('"').expect("closing quote")].to_string()
            };
            (attr("data-cq"), attr("data-p95").parse().expect("a number"))
        })
        .collect()
}

#[test]
fn report_html_marks_each_queues_p95_as_queues_csv_reports_it() {
    let dir = run_out("report-p95", "platform", &[]);
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    let csv = std::fs::read_to_string(dir.join("queues.csv")).expect("queues.csv");
    let mut lines = csv.lines();
    let header = csv_cells(lines.next().expect("header"));
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (scope, name, p95) = (col("scope"), col("name"), col("waitSecondsAdmittedP95"));
    let expected: Vec<(String, f64)> = lines
        .map(csv_cells)
        .filter(|c| c[scope] == "ClusterQueue" && !c[p95].is_empty())
        .map(|c| (c[name].clone(), c[p95].parse().expect("a number")))
        .collect();
    assert_eq!(expected.len(), 3, "{csv}");
    assert_eq!(report_p95s(&html), expected);
    // The platform runs without Kueue fair sharing: the quota-share panel stands in for the
    // fairness one; the tournament runs with it.
    assert!(html.contains("id=\"quota-share\"") && !html.contains("id=\"fairness\""));
    let fair = run_out("report-fair", "kueue/fair-sharing-tournament", &[]);
    let fair_html = std::fs::read_to_string(fair.join("report.html")).expect("report.html");
    assert!(fair_html.contains("id=\"fairness\"") && !fair_html.contains("id=\"quota-share\""));
    // Same input and seed, same page, byte for byte.
    let again = run_out("report-p95-again", "platform", &[]);
    let html_again = std::fs::read_to_string(again.join("report.html")).expect("report.html");
    assert!(html == html_again, "report.html differs between two runs");
    for d in [dir, fair, again] {
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn report_html_has_a_row_per_cluster_queue_with_what_held_it_back() {
    // The platform's three ClusterQueues, their LocalQueues under those with several, each
    // row's pending-inclusive p95 and pendingBoundBy as queues.csv has them.
    let dir = run_out("report-queues", "platform", &[]);
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    let csv = std::fs::read_to_string(dir.join("queues.csv")).expect("queues.csv");
    let mut lines = csv.lines();
    let header = csv_cells(lines.next().expect("header"));
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (scope, name, p95, bound, used, quota) = (
        col("scope"),
        col("name"),
        col("waitSecondsInclPendingP95"),
        col("pendingBoundBy"),
        col("gpuHoursUsed"),
        col("gpuUtilizationOfNominalQuota"),
    );
    let table = &html[html.find("id=\"queues\"").expect("the queue table")..];
    let table = &table[..table.find("</table>").expect("end")];
    let rows: Vec<&str> = table.split("<tr class=\"cq\"").skip(1).collect();
    let cqs: Vec<Vec<String>> = lines
        .map(csv_cells)
        .filter(|c| c[scope] == "ClusterQueue")
        .collect();
    assert_eq!(rows.len(), cqs.len(), "a row per ClusterQueue");
    for (row, c) in rows.iter().zip(&cqs) {
        assert!(
            row.starts_with(&format!(" data-cq=\"{}\"", c[name])),
            "{row}"
        );
        let seconds = attr_of(row, "wait-p95", "data-seconds");
        assert_eq!(
            seconds.parse::<f64>().ok(),
            c[p95].parse::<f64>().ok(),
            "{}",
            c[name]
        );
        assert_eq!(
            attr_of(row, "bound-by", "data-bound-by"),
            c[bound],
            "{}",
            c[name]
        );
        // GPU-hours used (whole hours from 10) and the utilisation of nominal quota, as the
        // cells after the waits show them.
        let cells: Vec<&str> = row
            .split("<td class=\"num\">")
            .skip(1)
            .map(|c| &c[..c.find('<').expect("cell end")])
            .collect();
        let used: f64 = c[used].parse().expect("gpuHoursUsed");
        assert!(used >= 10.0, "{}", c[name]);
        assert_eq!(cells[5], format!("{used:.0}"), "{}: {cells:?}", c[name]);
        let quota: f64 = c[quota].parse().expect("gpuUtilizationOfNominalQuota");
        assert_eq!(cells[9], format!("{:.0}%", quota * 100.0), "{}", c[name]);
    }
    // ml-team waited for its GPU quota most of the time: its largest bar, in the tooltip
    // with the rest of the map.
    let ml = rows
        .iter()
        .find(|r| r.starts_with(" data-cq=\"ml-team\""))
        .expect("ml-team's row");
    assert!(ml.contains(">quota:gpu 75%"), "{ml}");
    assert!(attr_of(ml, "bound-by", "title").starts_with("quota:nvidia.com/gpu 75%"));
    // ml-team has two LocalQueues with workloads: both listed under it.
    assert_eq!(
        table
            .matches("<tr class=\"lq\" data-cq=\"ml-team\"")
            .count(),
        2
    );
    // The free-GPU panel: a line per spine of the platform, named as timeseries.csv names
    // its freeGpus columns, and each one-spine gang's time short of room (never negative).
    let panel = &html[html
        .find("id=\"free-gpus-by-spine\"")
        .expect("the spine panel")..];
    let panel = &panel[..panel.find("</section>").expect("end")];
    let series = std::fs::read_to_string(dir.join("timeseries.csv")).expect("timeseries.csv");
    let spines: Vec<String> = csv_cells(series.lines().next().expect("header"))
        .into_iter()
        .filter_map(|h| h.strip_prefix("freeGpus:spine=").map(str::to_string))
        .collect();
    assert_eq!(spines, ["h100-spine-0", "h100-spine-1"]);
    for spine in &spines {
        assert!(
            panel.contains(&format!("<title>{spine}: free GPUs</title>")),
            "{spine}"
        );
    }
    assert_eq!(panel.matches("class=\"data spine\"").count(), 2);
    for gang in panel.split("<g class=\"gang\"").skip(1) {
        let gang = format!("<g class=\"gang\"{gang}");
        let short = attr_of(&gang, "class=\"gang\"", "data-short-seconds");
        assert!(!short.starts_with('-'), "{short}");
        let short: f64 = short.parse().expect("seconds");
        assert!((0.0..=86_400.0).contains(&short), "{short}");
    }
    assert!(
        panel.contains("research: 32 GPUs"),
        "research's largest gang's line"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two spines (Volcano HyperNodes of tier 1) of one 8-GPU node each, and three Volcano jobs
/// that must each fit in one spine: a (6 GPUs, 90 minutes) from 0, b (6 GPUs, an hour) from
/// a minute, c (two pods of 4 GPUs, an hour) from two minutes. c waits for a spine with 8
/// GPUs free until b is done, although 4 GPUs are free in the cluster and its quota holds it.
const ONE_SPINE_GANGS: &str = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: spines}
spec: {seed: 1}
---
apiVersion: kueuesim.io/v1alpha1
kind: NodePool
metadata: {name: pool}
spec:
  levels:
  - {nodeLabel: topology.kueuesim.io/spine, count: 2, hyperNodeTier: 1}
  nodesPerDomain: 1
  template:
    allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\", pods: \"110\"}
---
{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: gpu}}
---
{apiVersion: v1, kind: Namespace, metadata: {name: team}}
---
{apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {name: team}, spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 20}]}]}]}}
---
{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: q, namespace: team}, spec: {clusterQueue: team}}
---
{apiVersion: batch/v1, kind: Job, metadata: {name: a, namespace: team, labels: {kueue.x-k8s.io/queue-name: q}, annotations: {kueuesim.io/arrival: 0s, kueuesim.io/duration: 90m}}, spec: {suspend: true, template: {metadata: {annotations: {volcano.sh/network-topology-mode: hard, volcano.sh/network-topology-highest-tier: \"1\"}}, spec: {schedulerName: volcano-scheduler, restartPolicy: Never, containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: \"6\"}}}]}}}}
---
{apiVersion: batch/v1, kind: Job, metadata: {name: b, namespace: team, labels: {kueue.x-k8s.io/queue-name: q}, annotations: {kueuesim.io/arrival: 1m, kueuesim.io/duration: 1h}}, spec: {suspend: true, template: {metadata: {annotations: {volcano.sh/network-topology-mode: hard, volcano.sh/network-topology-highest-tier: \"1\"}}, spec: {schedulerName: volcano-scheduler, restartPolicy: Never, containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: \"6\"}}}]}}}}
---
{apiVersion: batch/v1, kind: Job, metadata: {name: c, namespace: team, labels: {kueue.x-k8s.io/queue-name: q}, annotations: {kueuesim.io/arrival: 2m, kueuesim.io/duration: 1h, scheduling.volcano.sh/group-min-member: \"2\"}}, spec: {parallelism: 2, completions: 2, suspend: true, template: {metadata: {annotations: {volcano.sh/network-topology-mode: hard, volcano.sh/network-topology-highest-tier: \"1\"}}, spec: {schedulerName: volcano-scheduler, restartPolicy: Never, containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: \"4\"}}}]}}}}
";

#[test]
fn free_gpus_per_spine_over_time_against_the_largest_one_spine_gang() {
    let (file, dir) = scenario_file("spines", ONE_SPINE_GANGS);
    let out = dir.join("out");
    let o = kueuesim(&["run", &file, "-q", "--out", out.to_str().expect("utf-8")]);
    assert!(o.status.success(), "{}", stderr(&o));
    // timeseries.csv: the free GPUs of each spine at every sample.
    let csv = std::fs::read_to_string(out.join("timeseries.csv")).expect("timeseries.csv");
    let mut lines = csv.lines();
    let header = csv_cells(lines.next().expect("header"));
    let free: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| h.starts_with("freeGpus:spine="))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(free.len(), 2, "{header:?}");
    let rows: Vec<(f64, Vec<i64>)> = lines
        .map(csv_cells)
        .map(|r| {
            let t = r[0].parse().expect("time");
            (
                t,
                free.iter().map(|&i| r[i].parse().expect("count")).collect(),
            )
        })
        .collect();
    let at = |secs: f64| {
        let mut v = rows
            .iter()
            .find(|r| r.0 == secs)
            .expect("a sample")
            .1
            .clone();
        v.sort_unstable();
        v
    };
    assert_eq!(at(0.0), [2, 8], "a on one spine");
    assert_eq!(at(1800.0), [2, 2], "a and b on one spine each; c waits");
    assert_eq!(at(4800.0), [0, 2], "c where b was, a still running");
    assert_eq!(rows.last().expect("rows").1, [8, 8], "all done");
    // No spine had 8 GPUs free from b's start until a ended: the samples whose most free
    // spine had fewer, each until the next sample.
    let short: f64 = rows
        .windows(2)
        .filter(|w| w[0].1.iter().max() < Some(&8))
        .map(|w| w[1].0 - w[0].0)
        .sum();
    assert!((5000.0..=5400.0).contains(&short), "{short}");
    // report.html: a line per spine, and c's 8 GPUs as the team's reference line with how long
    // no spine had them free.
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let panel = &html[html
        .find("id=\"free-gpus-by-spine\"")
        .expect("the spine panel")..];
    let panel = &panel[..panel.find("</section>").expect("end")];
    assert_eq!(panel.matches("class=\"data spine\"").count(), 2);
    assert_eq!(panel.matches("<g class=\"gang\"").count(), 1, "{panel}");
    assert_eq!(attr_of(panel, "class=\"gang\"", "data-cq"), "team");
    assert_eq!(attr_of(panel, "class=\"gang\"", "data-gpus"), "8");
    let reported: f64 = attr_of(panel, "class=\"gang\"", "data-short-seconds")
        .parse()
        .expect("seconds");
    assert_eq!(reported, short);
    assert!(panel.contains("team: 8 GPUs"), "the line's label");
    assert!(
        panel.contains("(team's team/job-c-"),
        "the gang named in the note"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_html_p95_of_millisecond_times_is_the_summarys() {
    // Times with millisecond fractions (as a varied day has): created at 1.1 s, admitted at
    // 4.3 s, after the job before it finishes at 3.3 s. The wait is 3.2 s in the summary and
    // queues.csv; subtracting the two times as floats gave 3.1999999999999997.
    let dir = temp_dir("report-ms");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let job = |name: &str, arrival: &str| {
        format!(
            "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: ns\n  labels: {{kueue.x-k8s.io/queue-name: lq}}\n  annotations: {{kueuesim.io/arrival: {arrival}, kueuesim.io/duration: 3300ms}}\nspec:\n  template:\n    spec:\n      containers:\n      - resources: {{requests: {{nvidia.com/gpu: \"1\"}}}}\n"
        )
    };
    let text = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: f}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: cq}}\nspec:\n  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: f\n      resources:\n      - {{name: nvidia.com/gpu, nominalQuota: 1}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq, namespace: ns}}\nspec: {{clusterQueue: cq}}\n{}{}",
        job("first", "0s"),
        job("second", "1100ms")
    );
    let file = dir.join("ms.yaml");
    std::fs::write(&file, text).expect("scenario");
    let out = dir.join("out");
    let o = kueuesim(&[
        "run",
        file.to_str().expect("utf-8"),
        "-q",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).expect("json"))
            .expect("json");
    let p95 = doc["summary"]["clusterQueues"][0]["waitSecondsAdmitted"]["p95"].clone();
    assert_eq!(p95, serde_json::json!(3.2));
    assert_eq!(report_p95s(&html), [("cq".to_string(), 3.2)]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A generated scenario of `cqs` ClusterQueues (one LocalQueue each) in one cohort, 40
/// spines of 2 leaves of 2 nodes of 8 GPUs (as Volcano HyperNodes with `hypernodes`), and
/// `workloads` jobs of 1 or 2 pods arriving about 3 an hour (4,000 span ~two months of
/// one-minute samples), light enough that the cluster keeps up and the run stays quick.
fn many_workloads_scenario(cqs: usize, workloads: usize, hypernodes: bool) -> String {
    let tiers = if hypernodes {
        [", hyperNodeTier: 2", ", hyperNodeTier: 1"]
    } else {
        ["", ""]
    };
    let mut y = format!(
        "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {{name: many}}
spec: {{seed: 7}}
---
apiVersion: kueuesim.io/v1alpha1
kind: NodePool
metadata: {{name: pool}}
spec:
  levels:
  - {{nodeLabel: topology.kueuesim.io/spine, count: 40{}}}
  - {{nodeLabel: topology.kueuesim.io/leaf, count: 2{}}}
  nodesPerDomain: 2
  template:
    allocatable: {{cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\", pods: \"110\"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: gpu}}
",
        tiers[0], tiers[1]
    );
    let mut queues = String::new();
    for q in 0..cqs {
        y.push_str(&format!(
            "---
{{apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {{name: team-{q:02}}}, spec: {{cohortName: all, namespaceSelector: {{}}, preemption: {{reclaimWithinCohort: Any}}, resourceGroups: [{{coveredResources: [nvidia.com/gpu], flavors: [{{name: gpu, resources: [{{name: nvidia.com/gpu, nominalQuota: 40}}]}}]}}]}}}}
---
{{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {{name: q, namespace: team-{q:02}}}, spec: {{clusterQueue: team-{q:02}}}}}
"
        ));
        queues.push_str(&format!(
            "{{name: q, namespace: team-{q:02}, weight: {}}}, ",
            1 + q % 5
        ));
    }
    y.push_str(&format!(
        "---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {{name: load}}
spec:
  count: {workloads}
  arrival: {{rate: 3/h}}
  pods: {{uniform: {{min: 1, max: 2}}}}
  requests: {{nvidia.com/gpu: {{fixed: 8}}}}
  duration: {{logNormal: {{median: 1h, sigma: 1, min: 10m, max: 72h}}}}
  queues: [{queues}]
"
    ));
    y
}

/// Runs a generated scenario (`many_workloads_scenario`) with `--out`; returns the output
/// directory and the directory to remove.
fn run_generated(test: &str, yaml: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(test);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("many.yaml");
    std::fs::write(&file, yaml).expect("write scenario");
    let out = dir.join("out");
    let o = kueuesim(&[
        "run",
        file.to_str().expect("utf-8"),
        "-q",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    (out, dir)
}

#[test]
fn report_html_stays_small_on_a_long_run_of_many_workloads_and_queues() {
    let (out, dir) = run_generated("report-size", &many_workloads_scenario(30, 4000, false));
    let read = |f: &str| std::fs::read_to_string(out.join(f)).expect(f);
    // The run is long and wide enough that drawing every sample or workload would not fit:
    // tens of thousands of samples of 30 ClusterQueues and 30 LocalQueues (report.html was
    // tens of MB when it drew them all).
    let (series, workloads) = (read("timeseries.csv"), read("workloads.csv"));
    assert!(
        series.lines().count() > 50_000,
        "{} samples",
        series.lines().count()
    );
    assert!(
        series.len() > 10_000_000,
        "timeseries.csv is {} bytes",
        series.len()
    );
    assert_eq!(workloads.lines().count(), 4001);
    let html = read("report.html");
    assert!(
        html.len() < 1_000_000,
        "report.html is {} bytes",
        html.len()
    );
    // Past 20 ClusterQueues and 24 LocalQueues the rest are folded into one series.
    assert!(html.contains("(11 other ClusterQueues)"), "CQs folded");
    assert!(html.contains("(7 other LocalQueues, summed)"), "LQs folded");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_html_topology_draws_at_most_32_spines_and_says_so() {
    let (out, dir) = run_generated("report-spines", &many_workloads_scenario(3, 50, true));
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let topology = &html[html.find("id=\"topology\"").expect("topology panel")..];
    let topology = &topology[..topology.find("</section>").expect("end")];
    // 40 spines of 2 leaves of 2 nodes: 32 rows of 4 node cells.
    assert_eq!(topology.matches("<rect class=\"data\"").count(), 32 * 4);
    assert!(topology.contains("not drawn: 8 more spines"), "{topology}");
    assert!(topology.contains("gaps separate the spine's leaves"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn streamed_out_files_equal_those_of_a_full_run() {
    // `-o json --out` runs in full (every record kept) and prints the document; `--out`
    // alone runs lean and streams, writing finished workloads as they finish. Both must write
    // the same files, and result.json must be the printed document byte for byte.
    for (test, rel) in [
        ("full-vs-lean-platform", "platform"),
        ("full-vs-lean-preemption", "kueue/within-cq-preemption"),
        ("full-vs-lean-backoff", "kueue/pods-ready-backoff"),
    ] {
        let full = temp_dir(&format!("{test}-full"));
        let o = kueuesim(&[
            "run",
            &scenario(rel),
            "-q",
            "-o",
            "json",
            "--out",
            full.to_str().expect("utf-8"),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let result = std::fs::read(full.join("result.json")).expect("result.json");
        assert_eq!(
            result, o.stdout,
            "{rel}: result.json is the -o json document"
        );
        let lean = run_out(&format!("{test}-lean"), rel, &[]);
        assert_eq!(files_in(&full), files_in(&lean), "{rel}");
        assert_eq!(files_in(&lean).len(), 9, "{rel}: {:?}", files_in(&lean));
        for f in files_in(&full) {
            assert_eq!(
                std::fs::read(full.join(&f)).expect("full"),
                std::fs::read(lean.join(&f)).expect("lean"),
                "{rel}: {f} differs between the full and the streamed run"
            );
        }
        let _ = std::fs::remove_dir_all(&full);
        let _ = std::fs::remove_dir_all(&lean);
    }
}

#[test]
fn write_selects_exactly_the_files_asked() {
    let all = run_out("write-all", "kueue/within-cq-preemption", &[]);
    for (write, expected) in [
        (
            "csv",
            &["queues.csv", "timeseries.csv", "workloads.csv"][..],
        ),
        ("result,om", &["metrics.om", "result.json"]),
        ("metrics.prom", &["metrics.prom"]),
        ("events", &["events.jsonl"]),
        (
            "prometheus,report",
            &["metrics.om", "metrics.prom", "report.html"],
        ),
        ("json", &["events.jsonl", "result.json", "summary.json"]),
        ("workloads", &["workloads.csv"]),
        ("summary", &["summary.json"]),
    ] {
        let dir = run_out(
            &format!("write-{}", write.replace([',', '.'], "-")),
            "kueue/within-cq-preemption",
            &["--write", write],
        );
        assert_eq!(files_in(&dir), expected, "--write {write}");
        // A file written alone is the file written with all the others.
        for f in expected {
            assert_eq!(
                std::fs::read(dir.join(f)).expect("alone"),
                std::fs::read(all.join(f)).expect("with all"),
                "--write {write}: {f}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = std::fs::remove_dir_all(&all);
    let dir = temp_dir("write-bad");
    let o = kueuesim(&[
        "run",
        &scenario("kueue/within-cq-preemption"),
        "--write",
        "csv,reprot",
        "--out",
        dir.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("\"reprot\"") && stderr(&o).contains("did you mean \"report\""),
        "{}",
        stderr(&o)
    );
    assert!(!dir.exists(), "nothing written on a usage error");
    let o = kueuesim(&[
        "run",
        &scenario("kueue/within-cq-preemption"),
        "--write",
        "csv",
    ]);
    assert_eq!(o.status.code(), Some(2), "--write needs --out");
}

/// The `time` column of a timeseries.csv.
fn sample_times(dir: &std::path::Path) -> Vec<i64> {
    let csv = std::fs::read_to_string(dir.join("timeseries.csv")).expect("timeseries.csv");
    csv.lines()
        .skip(1)
        .map(|l| csv_cells(l)[0].parse().expect("integer time"))
        .collect()
}

#[test]
fn sample_sets_the_time_series_step() {
    // kueue/block-admission ends at 4140 s.
    let minute = run_out("sample-1m", "kueue/block-admission", &[]);
    let ten = run_out("sample-10m", "kueue/block-admission", &["--sample", "10m"]);
    assert_eq!(
        sample_times(&minute),
        (0..=69).map(|i| i * 60).collect::<Vec<_>>()
    );
    assert_eq!(
        sample_times(&ten),
        (0..=6).map(|i| i * 600).collect::<Vec<_>>()
    );
    // The 10-minute rows are the minute rows at those times.
    let rows = |dir: &std::path::Path| -> Vec<String> {
        std::fs::read_to_string(dir.join("timeseries.csv"))
            .expect("timeseries.csv")
            .lines()
            .map(str::to_string)
            .collect()
    };
    let (m, t) = (rows(&minute), rows(&ten));
    for (i, row) in t.iter().enumerate().skip(1) {
        assert_eq!(row, &m[1 + (i - 1) * 10]);
    }
    // metrics.om follows the same step.
    let om = std::fs::read_to_string(ten.join("metrics.om")).expect("metrics.om");
    let stamps: std::collections::BTreeSet<i64> = om
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            l.rsplit(' ')
                .next()
                .expect("timestamp")
                .parse()
                .expect("integer")
        })
        .collect();
    let first = *stamps.first().expect("samples");
    assert_eq!(
        stamps.iter().map(|t| t - first).collect::<Vec<_>>(),
        (0..=6).map(|i| i * 600).collect::<Vec<_>>()
    );
    for bad in ["0s", "soon"] {
        let o = kueuesim(&[
            "run",
            &scenario("kueue/block-admission"),
            "--sample",
            bad,
            "--out",
            temp_dir("sample-bad").to_str().expect("utf-8"),
        ]);
        assert_eq!(o.status.code(), Some(2), "--sample {bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("--sample"), "{}", stderr(&o));
    }
    let _ = std::fs::remove_dir_all(&minute);
    let _ = std::fs::remove_dir_all(&ten);
}

/// `summary.json` is result.json's summary alone (kind `SimulationSummary`), and a run that
/// writes only it is as lean as the summary run: the same figures, without a workload list.
#[test]
fn summary_json_is_the_result_documents_summary() {
    let full = run_out("summary-full", "kueue/within-cq-preemption", &[]);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(full.join("result.json")).expect("result"))
            .expect("result.json is JSON");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(full.join("summary.json")).expect("summary"))
            .expect("summary.json is JSON");
    assert_eq!(summary["kind"], "SimulationSummary");
    assert_eq!(summary["apiVersion"], result["apiVersion"]);
    assert_eq!(summary["summary"], result["summary"]);
    assert!(summary.get("workloads").is_none());
    let _ = std::fs::remove_dir_all(&full);
}

/// `queues` ClusterQueues with a LocalQueue each in their own namespace, and `jobs` as
/// (arrival, duration) of one-GPU Jobs in the first (scripts/wide-queues.sh, smaller).
fn long_run_scenario(queues: usize, jobs: &[(&str, &str)]) -> String {
    let mut y = format!(
        "{{apiVersion: kueuesim.io/v1alpha1, kind: Simulation, metadata: {{name: long}}, spec: {{seed: 1}}}}
---
{{apiVersion: v1, kind: Node, metadata: {{name: n0}}, status: {{allocatable: {{nvidia.com/gpu: \"{queues}\", pods: \"110\"}}}}}}
---
{{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {{name: gpu}}}}
"
    );
    for q in 0..queues {
        y.push_str(&format!(
            "---
{{apiVersion: v1, kind: Namespace, metadata: {{name: team-{q}}}}}
---
{{apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {{name: team-{q}}}, spec: {{namespaceSelector: {{}}, resourceGroups: [{{coveredResources: [nvidia.com/gpu], flavors: [{{name: gpu, resources: [{{name: nvidia.com/gpu, nominalQuota: 1}}]}}]}}]}}}}
---
{{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {{name: q, namespace: team-{q}}}, spec: {{clusterQueue: team-{q}}}}}
"
        ));
    }
    for (i, (arrival, duration)) in jobs.iter().enumerate() {
        y.push_str(&format!(
            "---
{{apiVersion: batch/v1, kind: Job, metadata: {{name: job-{i}, namespace: team-0, labels: {{kueue.x-k8s.io/queue-name: q}}, annotations: {{kueuesim.io/arrival: {arrival}, kueuesim.io/duration: {duration}}}}}, spec: {{suspend: true, template: {{spec: {{restartPolicy: Never, containers: [{{name: main, image: x, resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}}}
"
        ));
    }
    y
}

/// Writes `yaml` to a fresh directory named after `test`; returns the file and the directory.
fn scenario_file(test: &str, yaml: &str) -> (String, PathBuf) {
    let dir = temp_dir(test);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("long.yaml");
    std::fs::write(&file, yaml).expect("write scenario");
    (file.to_str().expect("utf-8").to_string(), dir)
}

#[test]
fn out_warns_of_a_large_directory_before_the_run_without_until() {
    // 50 queues and a job of ten years: no `until`, but the input says the run lasts at least
    // ten years, and a sample a minute of 50 queues over ten years is hundreds of gigabytes.
    // The warning comes before the run (here stopped after its first event) and names the
    // options that keep the directory small.
    let (file, dir) = scenario_file("size-warning", &long_run_scenario(50, &[("0s", "87600h")]));
    let out = dir.join("out");
    let o = kueuesim(&[
        "run",
        &file,
        "-q",
        "--max-events",
        "1",
        // Asked for explicitly: `--sample auto` (the default) would choose a longer step.
        "--sample",
        "1m",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    let warning = err
        .lines()
        .find(|l| l.starts_with("warning: --out over"))
        .unwrap_or_else(|| panic!("no size warning in:\n{err}"));
    assert!(
        warning.starts_with(
            "warning: --out over at least 87600h0m0s (the input's latest arrival plus its \
             duration) at --sample 1m takes about "
        ),
        "{warning}"
    );
    for part in [
        "metrics.om",
        "timeseries.csv",
        "result.json",
        "--sample ",
        "--write ",
    ] {
        assert!(warning.contains(part), "{part}: {warning}");
    }
    // The files it suggests keep the directory small: report.html and queues.csv alone do
    // not grow with the horizon, and are not warned of.
    let o = kueuesim(&[
        "run",
        &file,
        "-q",
        "--max-events",
        "1",
        "--write",
        "report,queues",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning: --out"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_sample_count_warning_follows_the_runs_own_end() {
    // No `until`, and the generator's first job ends within the hour: its second arrives at
    // 17,000 h, so the series of this run takes more than a million samples a minute. Only
    // the run finds that out (a generator is not read ahead), so `--sample auto` took a
    // minute; the run says so at its end, before the files written last.
    let generator = "---
{apiVersion: kueuesim.io/v1alpha1, kind: WorkloadGenerator, metadata: {name: late, namespace: team-0}, spec: {count: 2, arrival: {interval: 17000h}, pods: {fixed: 1}, requests: {nvidia.com/gpu: {fixed: 1}}, duration: {fixed: 1h}, queues: [{name: q}]}}
";
    let (file, dir) = scenario_file("samples-warning", &(long_run_scenario(1, &[]) + generator));
    let out = dir.join("out");
    let o = kueuesim(&[
        "run",
        &file,
        "-q",
        "--write",
        "timeseries",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "warning: --sample auto (1m) over this run's 17001h0m0s takes 1020061 samples of \
             every series (timeseries.csv, metrics.om); --sample 5m or longer keeps them under \
             1000000"
        ),
        "{err}"
    );
    let rows = std::fs::read_to_string(out.join("timeseries.csv"))
        .expect("timeseries.csv")
        .lines()
        .count();
    assert_eq!(rows, 1 + 1_020_061);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sample_auto_takes_a_minute_unless_the_series_would_be_large() {
    // One queue and ten years: a sample a minute would be 5,256,001 rows, so `auto` takes the
    // shortest round step under a million samples (and 50 MB of series): 10 minutes, and
    // nothing is warned of. `--sample 1m` still samples every minute.
    let (file, dir) = scenario_file("sample-auto", &long_run_scenario(1, &[("0s", "1h")]));
    let out = dir.join("out");
    let o = kueuesim(&[
        "run",
        &file,
        "-q",
        "--until",
        "87600h",
        "--write",
        "timeseries",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let times = sample_times(&out);
    assert_eq!(times.len(), 525_601, "87600h / 10m + the sample at 0");
    assert_eq!(&times[..3], &[0, 600, 1200]);
    // A day of the same queue: every minute.
    let o = kueuesim(&[
        "run",
        &file,
        "-q",
        "--until",
        "24h",
        "--write",
        "timeseries",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let times = sample_times(&out);
    assert_eq!(times.len(), 1_441);
    assert_eq!(&times[..2], &[0, 60]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_html_plots_failures_and_the_work_they_lost_over_time() {
    // scenarios/timeline/node-failure: node-a fails at 2h (2 + 8 GPU-hours lost) and 4h20m
    // (8 more).
    let dir = run_out("report-failures", "timeline/node-failure", &[]);
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    assert!(html.contains("id=\"failures\""), "no failures panel");
    for title in [
        "<title>node failed: 10.0 GPU-hours lost from 2h</title>",
        "<title>node failed: 8.0 GPU-hours lost from 4h 20m</title>",
        "<title>1 node failures from 2h</title>",
        "<title>1 node failures from 4h 20m</title>",
        "lost: node failed (18.0 GPU-hours)",
    ] {
        assert!(html.contains(title), "{title}");
    }
    // A cluster that never changes has no such panel.
    let still = run_out("report-no-failures", "golden/fifo-strategies", &[]);
    let still_html = std::fs::read_to_string(still.join("report.html")).expect("report.html");
    assert!(!still_html.contains("id=\"failures\""));
    for d in [dir, still] {
        let _ = std::fs::remove_dir_all(&d);
    }
}
