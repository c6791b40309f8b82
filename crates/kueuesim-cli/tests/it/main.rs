//! The `kueuesim` binary as a user runs it: output, determinism and exit codes.

use std::path::PathBuf;
use std::process::{Command, Output};

fn kueuesim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kueuesim"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn scenario(rel: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "..", "scenarios", rel]
        .iter()
        .collect();
    p.display().to_string()
}

/// A file of `tests/fixtures/` (`dir/name`), as a path argument.
fn fixture(rel: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "fixtures", rel]
        .iter()
        .collect();
    p.display().to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn default_run_prints_a_summary_of_the_platform_day() {
    let o = kueuesim(&["run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("Simulated 24h0m0s from 2026-03-02T00:00:00Z (seed 42)"),
        "{out}"
    );
    assert!(out.contains("Queue wait:   p50"), "{out}");
    assert!(
        out.contains("GPU:          256 GPUs (allocatable on nodes), utilisation"),
        "{out}"
    );
    assert!(out.contains("LocalQueue experiment doesn't exist"), "{out}");
}

#[test]
fn json_output_is_byte_identical_across_runs() {
    let dir = scenario("golden/first-fit-nodes");
    let a = kueuesim(&["run", &dir, "-o", "json"]);
    let b = kueuesim(&["run", &dir, "-o", "json"]);
    assert!(a.status.success(), "{}", stderr(&a));
    assert!(!a.stdout.is_empty());
    assert_eq!(a.stdout, b.stdout);
    let doc = stdout(&a);
    assert!(doc.contains("\"kind\": \"SimulationResult\""), "{doc}");
}

#[test]
fn yaml_output_carries_the_same_document() {
    let o = kueuesim(&["run", &scenario("golden/fifo-strategies"), "-o", "yaml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("kind: SimulationResult"), "{out}");
    assert!(out.contains("state: Finished"), "{out}");
}

#[test]
fn until_reports_the_state_at_that_time() {
    let o = kueuesim(&[
        "run",
        &scenario("golden/fifo-strategies"),
        "--until",
        "30m",
        "-o",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("\"endTime\": 1800.0"), "{out}");
    assert!(
        out.contains("\"running\": 3"),
        "a, c (best) and a (strict) run at 30m: {out}"
    );
}

#[test]
fn seed_flag_is_reported() {
    let o = kueuesim(&[
        "run",
        &scenario("golden/fifo-strategies"),
        "--seed",
        "7",
        "-o",
        "json",
    ]);
    assert!(stdout(&o).contains("\"seed\": 7"));
}

#[test]
fn validate_reports_what_it_loaded() {
    let o = kueuesim(&["validate", &scenario("platform")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with(
            "ok: 3 ClusterQueues, 5 LocalQueues, 1 ResourceFlavors, 32 nodes, 98 workloads"
        ),
        "{}",
        stdout(&o)
    );
}

#[test]
fn invalid_input_exits_2_with_file_line_column() {
    let dir = std::env::temp_dir().join(format!("kueuesim-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.yaml");
    std::fs::write(&f, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: p\nvalue: lots\n").unwrap();
    let o = kueuesim(&["run", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{}:5:8: invalid i32", f.display())),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_file_exits_1() {
    let o = kueuesim(&["run", "/nonexistent/scenario.yaml"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(kueuesim(&["run", "--until", "soon"]).status.code(), Some(2));
    assert_eq!(kueuesim(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(kueuesim(&["run", "-o", "xml"]).status.code(), Some(2));
}

/// A fresh directory under the system temp dir for one test.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kueuesim-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs `scenarios/<rel>` quietly with `extra` options and `--out` a fresh directory named
/// after `test`; asserts success and returns the directory.
fn run_out(test: &str, rel: &str, extra: &[&str]) -> PathBuf {
    let dir = temp_dir(test);
    let scenario_dir = scenario(rel);
    let mut args = vec!["run", scenario_dir.as_str(), "-q"];
    args.extend_from_slice(extra);
    args.extend(["--out", dir.to_str().expect("utf-8 temp path")]);
    let o = kueuesim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    dir
}

/// Splits one RFC 4180 CSV line into cells.
fn csv_cells(line: &str) -> Vec<String> {
    let (mut cells, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    cells.push(cur);
    cells
}

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
fn get_prints_kubectl_columns_at_a_time() {
    let dir = scenario("golden/first-fit-nodes");
    let o = kueuesim(&["get", "workload", "-n", "team", "-f", &dir, "--at", "5m"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "NAME               QUEUE     RESERVED IN   ADMITTED   FINISHED   AGE
job-spread-4f17d   q         team          True                  5m
job-gang-a59a5     q         team          True                  4m
"
    );
    // Before the gang arrives it does not exist yet.
    let o = kueuesim(&["get", "wl", "-n", "team", "-f", &dir, "--at", "30s"]);
    assert_eq!(stdout(&o).lines().count(), 2, "{}", stdout(&o));
    // Admitted by Kueue, unplaceable for Volcano: its PodGroup is Inqueue.
    let o = kueuesim(&["get", "podgroup", "-n", "team", "-f", &dir, "--at", "5m"]);
    assert_eq!(
        stdout(&o),
        "NAME            STATUS    MINMEMBER   RUNNINGS   AGE
podgroup-gang   Inqueue   2           0          4m
"
    );
    // A PodGroup of the input, by its own name: two of its three pods run from the start
    // (spec.nodeName), the third fits nowhere under the hard tier.
    let pg = scenario("placement-podgroups/V09-rescheduled-pinned-to-full-leaf");
    let o = kueuesim(&["get", "podgroup", "-A", "-f", &pg]);
    assert_eq!(
        stdout(&o),
        "NAMESPACE   NAME      STATUS    MINMEMBER   RUNNINGS   AGE
team        job       Running   2           2          10m
"
    );
    let o = kueuesim(&["get", "localqueue", "-A", "-f", &dir, "--at", "5m"]);
    assert_eq!(
        stdout(&o),
        "NAMESPACE   NAME      CLUSTERQUEUE   PENDING WORKLOADS   ADMITTED WORKLOADS
team        q         team           0                   2
"
    );
    let o = kueuesim(&["get", "cq", "-o", "wide", "-f", &dir]);
    assert!(
        stdout(&o).starts_with(
            "NAME      COHORT    STRATEGY         PENDING WORKLOADS   ADMITTED WORKLOADS\n"
        ),
        "{}",
        stdout(&o)
    );
    let o = kueuesim(&["get", "widgets", "-f", &dir]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("doesn't have a resource type \"widgets\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn describe_workload_shows_conditions_and_the_schedulers_reason() {
    let dir = scenario("golden/first-fit-nodes");
    let o = kueuesim(&[
        "describe",
        "workload",
        "job-gang-a59a5",
        "-n",
        "team",
        "-f",
        &dir,
        "--at",
        "5m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("Name:         job-gang-a59a5\nNamespace:    team\n"),
        "{out}"
    );
    assert!(out.contains("\n    Cluster Queue:  team\n"), "{out}");
    assert!(
        out.contains("    Reason:                QuotaReserved\n"),
        "{out}"
    );
    assert!(out.contains("\nEvents:\n  Type     Reason         Age   From             Message\n  ----     ------         ----  ----             -------\n"), "{out}");
    assert!(
        out.contains("  Warning  Unschedulable  4m    volcano          2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable; Pending: 2 Unschedulable. Origin reason is gang-jbwps: 0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu.\n"),
        "{out}"
    );
    let o = kueuesim(&["describe", "workload", "nope", "-n", "team", "-f", &dir]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("workloads.kueue.x-k8s.io \"nope\" not found"),
        "{}",
        stderr(&o)
    );
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
fn chromium() -> Option<String> {
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

fn headless(chromium: &str, profile: &std::path::Path, args: &[&str]) -> Output {
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
    let (scope, name, p95) = (col("scope"), col("name"), col("waitSecondsP95"));
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
fn get_workload_yaml_is_a_list_of_kueue_workloads_that_loads_back() {
    let src = scenario("golden/first-fit-nodes");
    let o = kueuesim(&[
        "get", "workload", "-n", "team", "-f", &src, "--at", "5m", "-o", "yaml",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dump = stdout(&o);
    assert!(
        dump.starts_with(
            "apiVersion: v1\nitems:\n- apiVersion: kueue.x-k8s.io/v1beta1\n  kind: Workload\n"
        ),
        "{dump}"
    );
    // The dump plus the cluster it came from is a scenario again: the admitted workloads
    // continue from their status.admission.
    let dir = temp_dir("dump");
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("workloads.yaml"), &dump).expect("write dump");
    std::fs::write(
        dir.join("cluster.yaml"),
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 100}, {name: nvidia.com/gpu, nominalQuota: 32}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: team}
spec: {clusterQueue: team}
",
    )
    .expect("write cluster");
    let o = kueuesim(&[
        "run",
        dir.to_str().expect("utf-8"),
        "-o",
        "json",
        "--until",
        "1s",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let names: Vec<(&str, &str)> = doc["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap_or(""),
                w["clusterQueue"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        names,
        [("job-spread-4f17d", "team"), ("job-gang-a59a5", "team")]
    );
    // Reloaded with its admission: it holds quota from the start.
    let admitted = doc["workloads"][0]["admittedAt"]
        .as_f64()
        .expect("admitted");
    assert!(admitted <= 0.0, "{admitted}");
    let o = kueuesim(&[
        "get", "workload", "-n", "team", "-f", &src, "--at", "5m", "-o", "json",
    ]);
    let list: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(list["kind"], "List");
    assert_eq!(
        list["items"][1]["status"]["admission"]["clusterQueue"],
        "team"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_root_flag_finds_a_trace_and_a_missing_trace_exits_2() {
    let dir = std::env::temp_dir().join(format!("kueuesim-cli-trace-root-{}", std::process::id()));
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("t")).expect("dir");
    std::fs::write(
        root.join("t/rows.csv"),
        "arrival,name,requests.cpu\n0,a,1\n60,b,1\n",
    )
    .expect("csv");
    let yaml = dir.join("s.yaml");
    std::fs::write(
        &yaml,
        "apiVersion: kueuesim.io/v1alpha1\nkind: WorkloadTrace\nmetadata: {name: t}\nspec:\n  format: native\n  path: t/rows.csv\n",
    )
    .expect("yaml");
    let yaml = yaml.display().to_string();
    let root = root.display().to_string();
    for cmd in ["validate", "run"] {
        let o = kueuesim(&[cmd, "--trace-root", &root, &yaml]);
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
    }
    let o = kueuesim(&["validate", "--trace-root", &root, &yaml]);
    assert!(stdout(&o).contains("2 workloads"), "{}", stdout(&o));
    let o = kueuesim(&["get", "workloads", "-A", "--trace-root", &root, "-f", &yaml]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Without the root the file is nowhere: exit 2, at the path value, listing the places.
    let o = kueuesim(&["validate", &yaml]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{yaml}:6:9: trace file \"t/rows.csv\" not found; looked in:"
        )),
        "{err}"
    );
    assert!(err.contains("docs/traces.md"), "{err}");
}

/// A copy of the native trace example whose trace goes on for 3,000 more rows, the last
/// with a bad pod count: the summary run streams the trace, so it meets the row mid-run.
#[test]
fn a_bad_trace_row_met_mid_run_exits_2_with_its_line() {
    let dir = temp_dir("bad-row-mid-run");
    std::fs::create_dir_all(&dir).unwrap();
    let example = scenario("examples/trace-native");
    let yaml = std::fs::read_to_string(format!("{example}/scenario.yaml")).unwrap();
    std::fs::write(dir.join("scenario.yaml"), yaml).unwrap();
    let mut csv = std::fs::read_to_string(format!("{example}/trace.csv")).unwrap();
    // After the example's last row (at 1h30m), in seconds.
    let last_arrival = 2 * 3600;
    let lines_before = csv.lines().count();
    for i in 1..=3000 {
        let pods = if i == 3000 { "many" } else { "1" };
        csv.push_str(&format!(
            "{},extra-{i},ml-team,training,low,default-scheduler,{pods},,1,1Gi,0,1m,\n",
            last_arrival + i * 10
        ));
    }
    std::fs::write(dir.join("trace.csv"), csv).unwrap();
    let bad_line = lines_before + 3000;
    let path = dir.to_str().unwrap();
    let out = temp_dir("bad-row-mid-run-out");
    let out_path = out.to_str().unwrap();
    for args in [
        vec!["run", path, "-q"],
        vec!["run", path, "-q", "--out", out_path],
        vec!["run", path, "-q", "--until", "1m"],
        vec!["run", path, "-q", "-o", "json"],
        vec!["validate", path],
    ] {
        let o = kueuesim(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("trace.csv:{bad_line}:")),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}: no result on bad input");
    }
    // The streamed --out run met the row mid-run: it leaves no file, partial or spilled.
    assert_eq!(files_in(&out), Vec::<String>::new());
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

mod hostile;
mod kubectl;
mod lint;
mod metrics;
mod sweep;

#[test]
fn set_and_patch_change_the_run_and_bad_ones_exit_2() {
    let platform = scenario("platform");
    let quota = "clusterqueue/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota=192";
    let base = kueuesim(&["run", &platform, "-o", "json"]);
    let more = kueuesim(&["run", &platform, "--set", quota, "-o", "json"]);
    assert!(more.status.success(), "{}", stderr(&more));
    let admitted = |o: &Output| {
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        doc["summary"]["clusterQueues"][0]["admittedWorkloads"]
            .as_u64()
            .expect("count")
    };
    // 50 % more GPU quota for ml-team admits more of its pretraining jobs.
    assert!(
        admitted(&more) > admitted(&base),
        "{} vs {}",
        admitted(&more),
        admitted(&base)
    );
    // The same change as a patch file gives the same run.
    let dir = temp_dir("patch");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let patch = dir.join("more-quota.yaml");
    std::fs::write(
        &patch,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: ml-team}\nspec:\n  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 192}\n",
    )
    .expect("write");
    let patched = kueuesim(&[
        "run",
        &platform,
        "--patch",
        &patch.display().to_string(),
        "-o",
        "json",
    ]);
    assert!(patched.status.success(), "{}", stderr(&patched));
    assert_eq!(patched.stdout, more.stdout);
    // A path that matches nothing: exit 2, the argument's column and the closest match.
    let o = kueuesim(&[
        "validate",
        &platform,
        "--set",
        &quota.replace("h100", "h10"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("error: --set[1]:1:52: spec.resourceGroups[0].flavors[name=h10] matches nothing: no item with name=h10 (closest: \"h100\")"), "{err}");
}

#[test]
fn seeds_replicate_in_parallel_with_the_same_answer_as_one_at_a_time() {
    let platform = scenario("platform");
    let one = kueuesim(&[
        "run", &platform, "--seeds", "1..4", "--jobs", "1", "-o", "json",
    ]);
    let many = kueuesim(&[
        "run", &platform, "--seeds", "1..4", "--jobs", "3", "-o", "json",
    ]);
    assert!(one.status.success(), "{}", stderr(&one));
    assert_eq!(one.stdout, many.stdout, "rows must not depend on --jobs");
    let doc: serde_json::Value = serde_json::from_slice(&one.stdout).expect("json");
    let runs = doc["runs"].as_array().expect("runs");
    let seeds: Vec<u64> = runs
        .iter()
        .map(|r| r["summary"]["seed"].as_u64().expect("seed"))
        .collect();
    assert_eq!(seeds, [1, 2, 3, 4]);
    // Each seed's document is the one `run --seed N` prints.
    let single = kueuesim(&["run", &platform, "--seed", "3", "-o", "json"]);
    let single: serde_json::Value = serde_json::from_slice(&single.stdout).expect("json");
    assert_eq!(runs[2], single);
    // The aggregate's mean of a figure is the mean of the runs' values.
    let fig = doc["aggregate"]
        .as_array()
        .expect("aggregate")
        .iter()
        .find(|f| f["figure"] == "waitSeconds.p90")
        .expect("p90 figure");
    let values: Vec<f64> = runs
        .iter()
        .map(|r| r["summary"]["waitSeconds"]["p90"].as_f64().expect("p90"))
        .collect();
    let mean = values.iter().sum::<f64>() / 4.0;
    assert!((fig["mean"].as_f64().expect("mean") - mean).abs() < 1e-9);
    assert_eq!(fig["n"], 4);
    assert!(fig["ci95"].as_f64().expect("ci") > 0.0);
    // The table for people, and usage errors.
    let text = kueuesim(&["run", &platform, "--seeds", "1,2"]);
    assert!(stdout(&text).starts_with("2 runs of "), "{}", stdout(&text));
    let bad = kueuesim(&["run", &platform, "--seeds", "3..1"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("3..1 is empty"), "{}", stderr(&bad));
}

#[test]
fn progress_flag_is_accepted_and_conflicts_with_quiet() {
    let dir = scenario("golden/first-fit-nodes");
    let o = kueuesim(&["run", &dir, "--progress"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A run shorter than the first report interval prints no progress line.
    assert!(!stderr(&o).contains("events/s"), "{}", stderr(&o));
    let o = kueuesim(&["run", &dir, "--progress", "--quiet"]);
    assert_eq!(o.status.code(), Some(2));
}

/// The files a directory holds, sorted (hidden spill files would show here too).
fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("out dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
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
        assert_eq!(files_in(&lean).len(), 8, "{rel}: {:?}", files_in(&lean));
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
        ("json", &["events.jsonl", "result.json"]),
        ("workloads", &["workloads.csv"]),
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

#[test]
fn the_summary_shows_the_thirty_longest_waiting_of_many_cluster_queues() {
    // Kueue's large-scale perf scenario has 1,000 ClusterQueues: the summary's queue table
    // shows 30 (the longest pending-inclusive p95 waits) and says how many it left out.
    let o = kueuesim(&[
        "run",
        &scenario("kueue-perf/large-scale.yaml"),
        "--until",
        "2m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Queues ("))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(table.len(), 31, "{out}");
    let more = table[30].trim();
    assert!(
        more.starts_with("… ")
            && more.ends_with(" more ClusterQueues with shorter waits (queues.csv, -o json)"),
        "{more}"
    );
    let shown: usize = table.len() - 1;
    let hidden: usize = more[4..].split(' ').next().unwrap().parse().unwrap();
    assert_eq!(shown + hidden, 1000, "{more}");
    // The first column is as wide as the names (cq-0-99-cohort-9), not as the "… more" line.
    let header = out
        .lines()
        .skip_while(|l| !l.starts_with("Queues ("))
        .nth(1)
        .unwrap();
    assert!(header.find("ADMITTED").unwrap() < 25, "{header}");
}

#[test]
fn compare_figures_keeps_the_matching_rows_and_names_a_pattern_that_matches_nothing() {
    let dir = run_out("compare-figures", "golden/first-fit-nodes", &[]);
    let d = dir.to_str().unwrap();
    let all = kueuesim(&["compare", d, d]);
    assert!(all.status.success(), "{}", stderr(&all));
    let o = kueuesim(&[
        "compare",
        d,
        d,
        "--figures",
        "waitSeconds.*,gpu.utilization",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The table's rows: every line after the header row that names a figure.
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.trim_start().starts_with("FIGURE"))
            .skip(1)
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect()
    };
    let (kept, every) = (rows(&stdout(&o)), rows(&stdout(&all)));
    assert!(kept.contains(&"gpu.utilization".to_string()), "{kept:?}");
    assert!(
        kept.iter().any(|f| f.starts_with("waitSeconds.")),
        "{kept:?}"
    );
    assert!(
        kept.iter()
            .all(|f| f == "gpu.utilization" || f.starts_with("waitSeconds.")),
        "{kept:?}"
    );
    let expected: Vec<&String> = every
        .iter()
        .filter(|f| *f == "gpu.utilization" || f.starts_with("waitSeconds."))
        .collect();
    assert_eq!(kept.iter().collect::<Vec<_>>(), expected);
    let bad = kueuesim(&["compare", d, d, "--figures", "waitSeconds.*,no.such.*"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("--figures no.such.*: no figure of either side matches it"),
        "{}",
        stderr(&bad)
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn compare_of_an_out_dir_without_result_json_says_which_write_it_needs() {
    let full = run_out("compare-full", "golden/first-fit-nodes", &[]);
    let csv = run_out("compare-csv", "golden/first-fit-nodes", &["--write", "csv"]);
    assert!(!csv.join("result.json").exists());
    let o = kueuesim(&["compare", full.to_str().unwrap(), csv.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "no result.json in it: expected a `run --out` directory whose --write included result"
        ),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(full).unwrap();
    std::fs::remove_dir_all(csv).unwrap();
}
