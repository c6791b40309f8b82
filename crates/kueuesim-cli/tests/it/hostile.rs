//! Hostile input: the reproducers our mutation fuzzing found (tests/fixtures/hostile/), and
//! the classes they stand for, end in exit 2 with `file:line:column` and the real limit, in
//! bounded time, or run correctly when the input is valid.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary, killing it after `limit`: a hang is a failure, not a stuck test.
// The wall clock is the point here: it bounds a child process, and decides nothing simulated.
#[allow(clippy::disallowed_methods)]
fn run_bounded(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kueuesim"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!(
                "{args:?} still running after {limit:?}; stderr: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
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
        let o = run_bounded(&["run", &path], Duration::from_secs(60));
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

    let file = temp_file("not-a-dir", b"x");
    let o = run_bounded(&["run", "--out", &file], Duration::from_secs(60));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("is a file: expected a directory"), "{err}");
}
