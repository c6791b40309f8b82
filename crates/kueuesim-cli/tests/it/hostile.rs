//! Hostile input: the reproducers our mutation fuzzing found (tests/fixtures/hostile/), and
//! the classes they stand for, end in exit 2 with `file:line:column` and the real limit, in
//! bounded time, or run correctly when the input is valid.

use super::{fixture, scenario};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary, killing it after `limit`: a hang is a failure, not a stuck test.
// The wall clock is the point here: it bounds a child process, and decides nothing simulated.
#[allow(clippy::disallowed_methods)]
pub(super) fn run_bounded(args: &[&str], limit: Duration) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kueuesim"));
    cmd.args(args);
    run_command(cmd, args, limit)
}

/// As `run_bounded`, in at most `kib` KiB of address space (a shell's `ulimit -v`): an
/// allocation past it fails, and the run with it.
#[cfg(target_os = "linux")]
fn run_in_memory(kib: u64, args: &[&str], limit: Duration) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_kueuesim"))
        .args(args);
    run_command(cmd, args, limit)
}

#[allow(clippy::disallowed_methods)]
fn run_command(mut cmd: Command, args: &[&str], limit: Duration) -> Output {
    use std::io::Read;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    // Read both pipes as the child writes them: a child blocked on a full pipe is no hang.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let err = err.join().expect("stderr");
            panic!(
                "{args:?} still running after {limit:?}; stderr: {}",
                String::from_utf8_lossy(&err)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().expect("stdout"),
        stderr: err.join().expect("stderr"),
    }
}

fn fixtures() -> Vec<PathBuf> {
    let dir: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "fixtures", "hostile"]
        .iter()
        .collect();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

/// `file:line:column: ` at the start of the error line, with positive numbers.
fn position_of(stderr: &str, file: &str) -> Option<(u64, u64)> {
    let line = stderr.lines().find(|l| l.starts_with("error: "))?;
    let rest = line.strip_prefix("error: ")?.strip_prefix(file)?;
    let mut parts = rest.strip_prefix(':')?.splitn(3, ':');
    let l: u64 = parts.next()?.parse().ok()?;
    let c: u64 = parts.next()?.parse().ok()?;
    (l >= 1 && c >= 1).then_some((l, c))
}

#[test]
fn every_reproducer_ends_in_exit_2_with_a_position_or_runs() {
    let files = fixtures();
    assert_eq!(files.len(), 13, "{files:?}");
    for f in &files {
        let path = f.display().to_string();
        // Each in 256 MiB of address space and (a debug build on a busy machine) 10 s.
        #[cfg(target_os = "linux")]
        let o = run_in_memory(262_144, &["run", &path], Duration::from_secs(10));
        #[cfg(not(target_os = "linux"))]
        let o = run_bounded(&["run", &path], Duration::from_secs(10));
        let err = String::from_utf8_lossy(&o.stderr);
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!err.contains("panicked"), "{name}: {err}");
        if name.starts_with("03-") {
            // A KAI subgroup naming a level with no Topology anywhere: KAI leaves it
            // unconstrained, and the workload runs on the nodes there are.
            assert_eq!(o.status.code(), Some(0), "{name}: {err}");
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(out.contains("2 running"), "{name}: {out}");
            continue;
        }
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(position_of(&err, &path).is_some(), "{name}: {err}");
    }
}

#[test]
fn messages_state_the_limit_that_was_enforced() {
    let by_name = |prefix: &str| {
        let f = fixtures()
            .into_iter()
            .find(|f| f.file_name().unwrap().to_string_lossy().starts_with(prefix))
            .expect("fixture");
        let path = f.display().to_string();
        let o = run_bounded(&["validate", &path], Duration::from_secs(60));
        assert_eq!(o.status.code(), Some(2));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    for (prefix, at, says) in [
        (
            "01-",
            ":25:39: ",
            "duration 2562047788015h12m55.807s is too long: expected at most 87600h0m0s (10 years)",
        ),
        (
            "04-",
            ":29:12: ",
            "count 1000000000: expected an integer from 0 to 100000",
        ),
        (
            "05-",
            ":4:15: ",
            "time 300000000000h0m0s after the start is too late: expected at most 87600h0m0s",
        ),
        (
            "07-",
            ":24:13: ",
            "replicas 1000000: expected an integer from 1 to 100000",
        ),
        (
            "08-",
            ":3:21: ",
            "byte 0xE9 is not UTF-8: expected the file in UTF-8",
        ),
        (
            "11-",
            ":23:82: ",
            "sigma 1e308: expected a number from 0 to 10",
        ),
        (
            "12-",
            ":3:73: ",
            "backoffBaseSeconds 9223372036854775807: expected seconds from 0 to 315360000",
        ),
    ] {
        let err = by_name(prefix);
        assert!(err.contains(at), "{prefix}: {err}");
        assert!(err.contains(says), "{prefix}: {err}");
    }
}

fn temp_file(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("kueuesim-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

#[test]
fn a_byte_order_mark_is_dropped_and_yaml_errors_are_in_our_words() {
    let bom = temp_file(
        "bom.yaml",
        b"\xEF\xBB\xBFapiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
    );
    let o = run_bounded(&["validate", &bom], Duration::from_secs(30));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let dup = temp_file(
        "dup.yaml",
        b"apiVersion: v1\nkind: Namespace\nmetadata: {name: x, name: y}\n",
    );
    let o = run_bounded(&["validate", &dup], Duration::from_secs(30));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{dup}:3:21: duplicate key \"name\": expected each key once in a mapping"
        )),
        "{err}"
    );

    let deep = format!(
        "apiVersion: v1\nkind: Namespace\nmetadata: {{name: x}}\nspec: {{x: {}{}}}\n",
        "[".repeat(70),
        "]".repeat(70)
    );
    let deep = temp_file("deep.yaml", deep.as_bytes());
    let o = run_bounded(&["validate", &deep], Duration::from_secs(30));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nesting deeper than 64 levels: expected at most 64 levels"),
        "{err}"
    );
    for leak in ["Options", "Budget", "DuplicateKeyPolicy", "Depth {"] {
        assert!(!err.contains(leak), "{err}");
    }
}

#[test]
fn command_line_offsets_and_out_are_checked_in_words() {
    let o = run_bounded(&["run", "--until", "-1h"], Duration::from_secs(60));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--until: negative duration \"-1h\": expected a duration of zero or more"),
        "{err}"
    );
    let o = run_bounded(&["run", "--until", "3651d"], Duration::from_secs(60));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("expected at most 87600h0m0s"), "{err}");

    // A device has no length and no end: reading stops one byte past the limit.
    #[cfg(target_os = "linux")]
    {
        let o = run_in_memory(1_500_000, &["run", "/dev/zero"], Duration::from_secs(60));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("/dev/zero:1:1: the file has more than 268435456 bytes: expected at most 268435456 (256 MiB)"),
            "{err}"
        );
    }

    let file = temp_file("not-a-dir", b"x");
    let o = run_bounded(&["run", "--out", &file], Duration::from_secs(60));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("is a file: expected a directory"), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_ten_year_horizon_streams_its_samples_in_bounded_memory() {
    // One job of an hour, then ten years with nothing to do, sampled every minute: 5,256,001
    // samples of one state. They used to be held whole (2 GB in one allocation) before the
    // sink saw any; now they are taken once and handed out as one run, and report.html keeps
    // only where its columns change. Nothing it writes grows with the horizon, so the
    // sample count is not warned of; it is when timeseries.csv (a row a sample) is asked for.
    let f = fixtures()
        .into_iter()
        .find(|f| f.file_name().unwrap().to_string_lossy().starts_with("03-"))
        .expect("fixture");
    let dir = std::env::temp_dir().join(format!("kueuesim-ten-years-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (path, out) = (f.display().to_string(), dir.display().to_string());
    let o = run_in_memory(
        1_500_000,
        &[
            "run", &path, "--until", "87600h", "--out", &out, "--write", "report", "-q",
        ],
        Duration::from_secs(120),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("warning: --sample"), "{err}");
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    assert!(html.contains("GPU quota held over time"), "{}", html.len());
    let o = run_bounded(
        &[
            "run",
            &path,
            "--until",
            "87600h",
            "--out",
            &out,
            "--write",
            "timeseries",
            // Asked for explicitly: `--sample auto` (the default) would choose a longer step.
            "--sample",
            "1m",
            "--max-events",
            "1",
            "-q",
        ],
        Duration::from_secs(60),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("--sample 1m over a horizon of 87600h0m0s takes 5256001 samples")
            && err.contains("--sample 10m or longer"),
        "{err}"
    );

    // The same horizon sampled every day: one row per day, each day's sample there once.
    let o = run_bounded(
        &[
            "run",
            &path,
            "--until",
            "87600h",
            "--out",
            &out,
            "--write",
            "timeseries",
            "--sample",
            "1d",
            "-q",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(o.status.code(), Some(0));
    let csv = std::fs::read_to_string(dir.join("timeseries.csv")).expect("timeseries.csv");
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 3651, "87600h / 24h + the sample at 0");
    for (k, row) in rows.iter().enumerate() {
        let at: f64 = row.split(',').next().unwrap().parse().expect("seconds");
        assert_eq!(at, k as f64 * 86_400.0, "row {k}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_event_budget_stops_the_run_with_the_partial_result_and_exit_3() {
    let platform = scenario("platform");
    let o = run_bounded(
        &["run", &platform, "--max-events", "500", "-o", "json", "-q"],
        Duration::from_secs(60),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "error: stopped early: the run processed its budget of 500 events at simulated "
        ),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let s = &doc["summary"];
    assert_eq!(s["eventsProcessed"], 500);
    assert_eq!(s["stoppedEarly"]["reason"], "MaxEvents");
    // The run stopped before its horizon: its end is the time of the 500th event.
    let whole = run_bounded(
        &["run", &platform, "-o", "json", "-q"],
        Duration::from_secs(60),
    );
    assert_eq!(whole.status.code(), Some(0));
    let whole: serde_json::Value = serde_json::from_slice(&whole.stdout).expect("json");
    assert!(whole["summary"].get("stoppedEarly").is_none());
    assert!(s["endTime"].as_f64() < whole["summary"]["endTime"].as_f64());
    // The same budget stops at the same event every time: the document is the same.
    let again = run_bounded(
        &["run", &platform, "--max-events", "500", "-o", "json", "-q"],
        Duration::from_secs(60),
    );
    assert_eq!(again.stdout, o.stdout);

    // A summary says so at the top; a wall budget that has passed by the first check stops
    // the run at event 4,096 (checked every 4,096 events).
    let o = run_bounded(
        &["run", &platform, "--max-events", "500", "-q"],
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&o.stdout);
    // (After the line of what the seeds vary and the one of what was simulated.)
    assert!(
        text.lines().nth(2).is_some_and(|l| l.starts_with(
            "Stopped early: the run processed its budget of 500 events at simulated "
        )),
        "{text}"
    );
    let million = scenario("scale/million.yaml");
    let o = run_bounded(
        &["run", &million, "--max-wall", "1ms", "-q"],
        Duration::from_secs(120),
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut lines = text.lines().skip(1);
    assert!(
        lines.next().is_some_and(|l| l.ends_with(", 4096 events")),
        "{text}"
    );
    assert!(
        lines.next().is_some_and(|l| l
            .starts_with("Stopped early: the run used its --max-wall budget of 1ms at simulated ")),
        "{text}"
    );
    for bad in [["--max-events", "0"], ["--max-wall", "0s"]] {
        let o = run_bounded(&["run", bad[0], bad[1]], Duration::from_secs(60));
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn a_livelock_at_one_instant_stops_and_names_its_workloads() {
    let path = fixture("livelock/reclaim-ping-pong.yaml");
    // `--until 0s` used to never return: time never passed 0s.
    let o = run_bounded(&["run", &path, "--until", "0s"], Duration::from_secs(60));
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(3), "{err}");
    let stopped = out.lines().nth(2).unwrap_or_default();
    assert!(
        stopped.starts_with("Stopped early: simulated time stopped at 0s: 20001 events at that one instant while decisions repeat (Workload default/w13 evicted "),
        "{out}"
    );
    assert!(
        err.contains("error: stopped early: simulated time stopped at 0s"),
        "{err}"
    );
    let o = run_bounded(&["run", &path, "-o", "json", "-q"], Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(3));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(doc["summary"]["stoppedEarly"]["reason"], "Livelock");
    assert_eq!(doc["summary"]["endTime"], 0.0);
    assert_eq!(doc["summary"]["eventsProcessed"], 20_001);
}
