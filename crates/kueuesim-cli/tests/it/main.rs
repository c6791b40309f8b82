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
