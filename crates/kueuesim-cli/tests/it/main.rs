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
    // First what another seed would change: the reference day declares its variation.
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some(
            "Seeds vary:   arrivals (poisson at the input's hourly rate), durations (lognormal σ 0.35), tie-breaks"
        ),
        "{out}"
    );
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("Simulated 24h0m0s from 2026-03-02T00:00:00Z (seed 42)")),
        "{out}"
    );
    assert!(out.contains("Queue wait:   p50"), "{out}");
    assert!(
        out.contains("GPU:          256 GPUs (allocatable on nodes), utilisation"),
        "{out}"
    );
    // The day as written holds a workload of a LocalQueue no object defines (seed 42's draw
    // of the day happens to leave it out: a Poisson count of 0).
    let o = kueuesim(&[
        "run",
        "--set",
        "Simulation/platform-day:spec.variation.arrivals=keep",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("LocalQueue experiment doesn't exist"),
        "{}",
        stdout(&o)
    );
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
            "ok: 3 ClusterQueues, 5 LocalQueues, 1 ResourceFlavors, 32 nodes, 87 workloads (seed 42; seeds vary: arrivals (poisson at the input's hourly rate), durations (lognormal σ 0.35), tie-breaks)"
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
fn get_prints_kubectl_columns_at_a_time() {
    let dir = scenario("golden/first-fit-nodes");
    let o = kueuesim(&["get", "workload", "-n", "team", "-f", &dir, "--at", "5m"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "NAME               QUEUE   RESERVED IN   ADMITTED   FINISHED   AGE
job-gang-a59a5     q       team          True                  4m
job-spread-4f17d   q       team          True                  5m
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
        "NAMESPACE   NAME   STATUS    MINMEMBER   RUNNINGS   AGE
team        job    Running   2           2          10m
"
    );
    let o = kueuesim(&["get", "localqueue", "-A", "-f", &dir, "--at", "5m"]);
    assert_eq!(
        stdout(&o),
        "NAMESPACE   NAME   CLUSTERQUEUE   PENDING WORKLOADS   ADMITTED WORKLOADS
team        q      team           0                   2
"
    );
    let o = kueuesim(&["get", "cq", "-o", "wide", "-f", &dir]);
    assert!(
        stdout(&o).starts_with(
            "NAME   COHORT   STRATEGY         PENDING WORKLOADS   ADMITTED WORKLOADS\n"
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
fn describe_workload_shows_conditions_and_kueues_events_and_the_podgroup_its_schedulers() {
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
    // Kueue's events are on the Workload; Volcano's reason for the unplaceable gang is on
    // its PodGroup, as `kubectl describe podgroup` shows it upstream (it was on the Workload).
    assert!(
        out.contains("\nEvents:\n  Type    Reason         Age   From             Message\n"),
        "{out}"
    );
    assert!(!out.contains("volcano"), "{out}");
    let o = kueuesim(&[
        "describe",
        "podgroup",
        "podgroup-gang",
        "-n",
        "team",
        "-f",
        &dir,
        "--at",
        "5m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pg = stdout(&o);
    assert!(
        pg.contains("  Warning  Unschedulable  4m    volcano  2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable; Pending: 2 Unschedulable. Origin reason is gang-jbwps: 0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu.\n"),
        "{pg}"
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
    // The dump lists the Workloads in the API server's order (by name).
    assert_eq!(
        names,
        [("job-gang-a59a5", "team"), ("job-spread-4f17d", "team")]
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

mod bound;
mod dump;
mod emit;
mod hostile;
mod kubectl;
mod kubectl_habits;
mod lint;
mod metrics;
mod out;
mod safe_output;
mod sweep;
mod sweep_campaign;
mod sweep_html;
/// What the seeds vary: the platform day per seed, the same bytes per seed, and what the
/// summary, `--seeds` and `compare` say of it.
mod variation;
mod warnings;

#[test]
fn set_and_patch_change_the_run_and_bad_ones_exit_2() {
    let platform = scenario("platform");
    let quota = "clusterqueue/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota=192";
    let base = kueuesim(&["run", &platform, "-o", "json"]);
    let more = kueuesim(&["run", &platform, "--set", quota, "-o", "json"]);
    assert!(more.status.success(), "{}", stderr(&more));
    let gpu_seconds = |o: &Output| {
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        doc["summary"]["clusterQueues"]
            .as_array()
            .expect("clusterQueues")
            .iter()
            .find(|c| c["name"] == "ml-team")
            .expect("ml-team")["gpuSeconds"]
            .as_f64()
            .expect("GPU-seconds")
    };
    // 50 % more GPU quota for ml-team runs more of its pretraining in the day.
    assert!(
        gpu_seconds(&more) > gpu_seconds(&base),
        "{} vs {}",
        gpu_seconds(&more),
        gpu_seconds(&base)
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
        .find(|f| f["figure"] == "waitSecondsInclPending.p90")
        .expect("p90 figure");
    let values: Vec<f64> = runs
        .iter()
        .map(|r| {
            r["summary"]["waitSecondsInclPending"]["p90"]
                .as_f64()
                .expect("p90")
        })
        .collect();
    let mean = values.iter().sum::<f64>() / 4.0;
    assert!((fig["mean"].as_f64().expect("mean") - mean).abs() < 1e-9);
    assert_eq!(fig["n"], 4);
    assert!(fig["ci95"].as_f64().expect("ci") > 0.0);
    // Every eviction and preemption reason is a figure of every seed, zeros included: a
    // reason no seed saw (no preemption on this day) averages 0 over all four, and one that
    // happened is averaged over all four too, not over the seeds that saw it.
    let aggregate = doc["aggregate"].as_array().expect("aggregate");
    for name in [
        "evictions.Preempted",
        "evictions.PodsReadyTimeout",
        "preemptions.InCohortReclamation",
    ] {
        let fig = aggregate
            .iter()
            .find(|f| f["figure"] == name)
            .unwrap_or_else(|| panic!("no aggregate figure {name}"));
        assert_eq!(fig["n"], 4, "{name}");
        let (map, reason) = name.split_once('.').expect("map.reason");
        let sum: f64 = runs
            .iter()
            .map(|r| {
                r["summary"][map][reason]
                    .as_f64()
                    .expect("a count per seed")
            })
            .sum();
        assert!((fig["mean"].as_f64().expect("mean") - sum / 4.0).abs() < 1e-9);
    }
    // The table for people, and usage errors.
    let text = kueuesim(&["run", &platform, "--seeds", "1,2"]);
    assert!(stdout(&text).starts_with("2 runs of "), "{}", stdout(&text));
    let bad = kueuesim(&["run", &platform, "--seeds", "3..1"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("3..1 is empty"), "{}", stderr(&bad));
}

#[test]
fn seeds_with_out_write_each_seeds_files_and_every_summary() {
    // `run --seeds --out DIR`: DIR/seed-N holds what `run --seed N --out` writes, and
    // DIR/summary.json the replicate document with each seed's summary alone, which
    // `compare` reads as it reads `-o json`'s.
    let platform = scenario("platform");
    let dir = temp_dir("seeds-out");
    let d = dir.to_str().unwrap();
    let o = kueuesim(&[
        "run",
        &platform,
        "-q",
        "--seeds",
        "1..3",
        "--jobs",
        "2",
        "--out",
        d,
        "--write",
        "summary,workloads",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("3 runs of "), "{}", stdout(&o));
    assert_eq!(
        files_in(&dir),
        ["seed-1", "seed-2", "seed-3", "summary.json"]
    );
    let single = temp_dir("seeds-out-single");
    let s = single.to_str().unwrap();
    let one = kueuesim(&[
        "run",
        &platform,
        "-q",
        "--seed",
        "2",
        "--out",
        s,
        "--write",
        "summary,workloads",
    ]);
    assert!(one.status.success(), "{}", stderr(&one));
    for f in ["summary.json", "workloads.csv"] {
        assert_eq!(
            std::fs::read(dir.join("seed-2").join(f)).unwrap(),
            std::fs::read(single.join(f)).unwrap(),
            "{f}"
        );
    }
    assert_eq!(
        files_in(&dir.join("seed-1")),
        ["summary.json", "workloads.csv"]
    );
    // The replicate document: the aggregate of -o json, each run the seed's summary.
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let full = kueuesim(&["run", &platform, "--seeds", "1..3", "-o", "json"]);
    let full: serde_json::Value = serde_json::from_slice(&full.stdout).expect("json");
    assert_eq!(doc["kind"], "ReplicateResults");
    assert_eq!(doc["aggregate"], full["aggregate"]);
    let runs = doc["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 3);
    for (r, f) in runs.iter().zip(full["runs"].as_array().unwrap()) {
        assert_eq!(r["kind"], "SimulationSummary");
        assert_eq!(r["summary"], f["summary"]);
        assert!(r.get("workloads").is_none());
    }
    // compare reads the directory as it reads the -o json document.
    let fj = temp_dir("seeds-out.json");
    std::fs::write(&fj, serde_json::to_vec(&full).unwrap()).unwrap();
    let by_dir = kueuesim(&["compare", d, s]);
    let by_json = kueuesim(&["compare", fj.to_str().unwrap(), s]);
    assert_eq!(by_dir.status.code(), Some(0), "{}", stderr(&by_dir));
    assert_eq!(by_json.status.code(), Some(0), "{}", stderr(&by_json));
    // After the A: line, the same table, with A's 95 % intervals (the replicates).
    let table = |o: &Output| {
        stdout(o)
            .lines()
            .skip(1)
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert!(table(&by_dir).len() > 10, "{:?}", table(&by_dir));
    assert!(table(&by_dir)[4].contains(" ± "), "{:?}", table(&by_dir));
    assert_eq!(table(&by_dir), table(&by_json));
    // A re-run whose --write leaves the summary out still writes the replicate document; the
    // capacity checks are said once, as `run` says them.
    let quota = "cq/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota=192";
    let o = kueuesim(&[
        "run",
        &platform,
        "-q",
        "--seeds",
        "1..2",
        "--out",
        d,
        "--write",
        "workloads",
        "--set",
        quota,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("summary.json").is_file());
    assert_eq!(
        stderr(&o).matches("nominal GPU quota 320 exceeds").count(),
        1,
        "{}",
        stderr(&o)
    );
    // A re-run that fails leaves no former replicate document behind to be compared.
    let o = kueuesim(&[
        "run",
        &platform,
        "-q",
        "--seeds",
        "1..2",
        "--out",
        d,
        "--set",
        "cq/nope:spec.cohort=x",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!dir.join("summary.json").exists());
    // Refused before any run: -o yaml, and a seed's directory that is a file.
    let fresh = temp_dir("seeds-out-yaml");
    let f = fresh.to_str().unwrap();
    let o = kueuesim(&[
        "run", &platform, "-q", "--seeds", "1..2", "--out", f, "-o", "yaml",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!fresh.exists());
    std::fs::create_dir_all(&fresh).unwrap();
    std::fs::write(fresh.join("seed-2"), "").unwrap();
    let o = kueuesim(&["run", &platform, "-q", "--seeds", "1..2", "--out", f]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("seed-2 is a file"), "{}", stderr(&o));
    assert!(!fresh.join("seed-1").exists());
    for p in [&dir, &single, &fresh] {
        std::fs::remove_dir_all(p).unwrap();
    }
    std::fs::remove_file(&fj).unwrap();
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
    // Replicates in a log: a line per run done, none without --progress.
    let o = kueuesim(&["run", &dir, "--seeds", "1..3", "--jobs", "1", "--progress"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().filter(|l| l.ends_with("runs done")).collect();
    assert_eq!(lines, ["1/3 runs done", "2/3 runs done", "3/3 runs done"]);
    let o = kueuesim(&["run", &dir, "--seeds", "1..3"]);
    assert!(!stderr(&o).contains("runs done"), "{}", stderr(&o));
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
fn a_misspelt_override_is_exit_2_naming_the_closest_field_in_every_command() {
    // A what-if whose field does not exist would print the baseline's figures as the
    // variant's: refused in every command that loads, at the argument's column.
    let platform = scenario("platform");
    let typo = "cq/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuot=192";
    let want = "--set[1]:1:85: ClusterQueue field spec.resourceGroups[0].flavors[0].resources[2].nominalQuot is not a field of kueue.x-k8s.io v1beta1 or v1beta2 (closest: nominalQuota)";
    for args in [
        vec!["run", &platform],
        vec!["run", &platform, "--seeds", "1..2"],
        vec!["validate", &platform],
        vec!["get", "clusterqueue", "-f", &platform],
        vec!["describe", "clusterqueue", "ml-team", "-f", &platform],
    ] {
        let mut args = args.clone();
        args.extend(["--set", typo]);
        let o = kueuesim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    // The same in a patch file: at its line and column.
    let dir = temp_dir("strict-patch");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let patch = dir.join("typo.yaml");
    std::fs::write(
        &patch,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: ml-team}\nspec:\n  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources:\n      - {name: nvidia.com/gpu, nominalQuot: 192}\n",
    )
    .expect("write");
    let o = kueuesim(&["run", &platform, "--patch", &patch.display().to_string()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("typo.yaml:10:32: ClusterQueue field spec.resourceGroups[0].flavors[0].resources[2].nominalQuot is not a field"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The files of scenarios/patches/.
fn ready_patches() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(scenario("patches"))
        .expect("scenarios/patches")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    v.sort();
    v
}

#[test]
fn the_ready_made_patches_apply_to_the_platform_and_the_summary_says_what_changed() {
    let platform = scenario("platform");
    let base = kueuesim(&["run", &platform]);
    let base_warnings = stderr(&base);
    let policies = |o: &Output| -> serde_json::Value {
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        doc["summary"]["policies"].clone()
    };
    let base_json = kueuesim(&["run", &platform, "-o", "json"]);
    let before = policies(&base_json);
    assert_eq!(before["fairSharing"]["enabled"], false);
    // The platform's header: no cohort, BestEffortFIFO for ml-team only.
    let out = stdout(&base);
    assert!(
        out.contains(
            "\nPolicies:     fair sharing off; admission fair sharing off; waitForPodsReady on ("
        ),
        "{out}"
    );
    assert!(out.contains("\n  Cohorts:    no cohort: all\n"), "{out}");
    assert!(
        out.contains("\n  Queueing:   BestEffortFIFO: all\n"),
        "{out}"
    );
    let names: Vec<String> = ready_patches()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in ["fair-sharing.yaml", "strict-fifo.yaml"] {
        assert!(names.iter().any(|n| n == want), "{names:?}");
    }
    for p in ready_patches() {
        let p = p.display().to_string();
        // Cleanly: exit 0 and no warning the base run does not give.
        let o = kueuesim(&["run", &platform, "--patch", &p]);
        assert!(o.status.success(), "{p}: {}", stderr(&o));
        assert_eq!(stderr(&o), base_warnings, "{p}");
        let j = kueuesim(&["run", &platform, "--patch", &p, "-o", "json"]);
        let after = policies(&j);
        assert_ne!(after, before, "{p} changes a policy");
        let cqs = after["clusterQueues"].as_array().expect("cqs");
        assert_eq!(cqs.len(), 3);
        if p.ends_with("fair-sharing.yaml") {
            assert_eq!(after["fairSharing"]["enabled"], true);
            assert!(
                cqs.iter().all(|c| c["cohort"] == "all-teams"
                    && c["preemption"]["reclaimWithinCohort"] == "Any")
            );
            assert!(
                stdout(&o).contains("\nPolicies:     fair sharing on (LessThanOrEqualToFinalShare, LessThanInitialShare);"),
                "{}",
                stdout(&o)
            );
            assert!(stdout(&o).contains("\n  Cohorts:    cohort all-teams: all\n"));
        }
        if p.ends_with("strict-fifo.yaml") {
            assert!(cqs.iter().all(|c| c["queueingStrategy"] == "StrictFIFO"));
            assert!(stdout(&o).contains("\n  Queueing:   StrictFIFO: all\n"));
        }
    }
    // compare names the policies that differ.
    let dir = temp_dir("patch-compare");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    std::fs::write(&a, &base_json.stdout).expect("write");
    let strict = ready_patches()
        .into_iter()
        .find(|p| p.ends_with("strict-fifo.yaml"))
        .expect("strict-fifo.yaml");
    let o = kueuesim(&[
        "run",
        &platform,
        "--patch",
        &strict.display().to_string(),
        "-o",
        "json",
    ]);
    std::fs::write(&b, &o.stdout).expect("write");
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let o = kueuesim(&["compare", &a, &b, "--figures", "gpu.utilization"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "\nPolicies that differ (A → B): clusterQueues[*].queueingStrategy BestEffortFIFO → StrictFIFO\n"
        ),
        "{}",
        stdout(&o)
    );
    let o = kueuesim(&["compare", &a, &a, "--figures", "gpu.utilization"]);
    assert!(
        stdout(&o).contains("\nPolicies: the same on both sides\n"),
        "{}",
        stdout(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_headline_wait_counts_the_still_pending_and_says_it_is_a_lower_bound() {
    let o = kueuesim(&["run", &scenario("platform")]);
    let out = stdout(&o);
    let doc: serde_json::Value =
        serde_json::from_slice(&kueuesim(&["run", &scenario("platform"), "-o", "json"]).stdout)
            .expect("json");
    let s = &doc["summary"];
    let (all, admitted) = (&s["waitSecondsInclPending"], &s["waitSecondsAdmitted"]);
    assert!(all["count"].as_u64() > s["timeInQueueSecondsAdmitted"]["count"].as_u64());
    // The old families are gone from the document.
    for old in [
        "waitSeconds",
        "timeInQueueSeconds",
        "jctSeconds",
        "boundedSlowdown",
    ] {
        assert!(s.get(old).is_none(), "{old}");
    }
    let line = out
        .lines()
        .find(|l| l.starts_with("Queue wait:"))
        .expect("a Queue wait line");
    let secs = |v: &serde_json::Value| kueuesim_model_duration(v.as_f64().expect("a p95"));
    assert!(
        line.contains(&format!("p95 {},", secs(&all["p95"]))),
        "{line}\n{out}"
    );
    assert!(
        line.contains("still pending counted at their wait so far, so these are lower bounds"),
        "{line}"
    );
    let next = out
        .lines()
        .skip_while(|l| !l.starts_with("Queue wait:"))
        .nth(1)
        .expect("the admitted line");
    assert!(next.starts_with("  admitted:"), "{next}");
    assert!(
        next.contains(&format!("p95 {},", secs(&admitted["p95"]))),
        "{next}"
    );
}

/// Seconds as the summary prints a duration (Go's format, `4h10m33s`).
fn kueuesim_model_duration(s: f64) -> String {
    kueuesim_model::SimDuration::from_millis((s * 1000.0).round() as i64).to_string()
}
