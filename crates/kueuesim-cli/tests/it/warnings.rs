//! `--warnings=all|summary|none`: the embedded scenario's two deliberate warnings (a
//! LocalQueue no object defines, from the loader; a namespace bypassing Kueue, from the
//! capacity checks) shown, counted in one line, or not shown, in every command that loads a
//! scenario; a value it does not know is a usage error. A preemption loop found by the run
//! is a warning too, and a line of the summary.

use std::path::Path;

use super::{kueuesim, scenario, stderr, stdout, temp_dir};

const MISSING_QUEUE: &str = "LocalQueue research/experiment is not defined in the input";
const BYPASS: &str = "1 workload(s) in namespace sandbox bypass Kueue";

/// The platform's arrivals as its file writes them: its variation re-draws them per seed,
/// and the sandbox notebook that bypasses Kueue arrives at 1h only as written.
const AS_WRITTEN: [&str; 2] = [
    "--set",
    "Simulation/platform-day:spec.variation.arrivals=keep",
];

/// The stderr lines that start with `warning`.
fn warning_lines(o: &std::process::Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("warning"))
        .map(str::to_string)
        .collect()
}

#[test]
fn run_shows_each_warning_by_default_and_with_all() {
    for args in [
        &["run", "--until", "1h"][..],
        &["run", "--until", "1h", "--warnings=all"][..],
    ] {
        let o = kueuesim(&[args, &AS_WRITTEN[..]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let lines = warning_lines(&o);
        assert_eq!(lines.len(), 2, "{args:?}: {lines:?}");
        assert!(lines[0].contains(MISSING_QUEUE), "{lines:?}");
        assert!(lines[1].contains(BYPASS), "{lines:?}");
    }
}

#[test]
fn run_with_summary_prints_one_line_counting_them_and_the_same_output() {
    let all = kueuesim(&[&["run", "--until", "1h"][..], &AS_WRITTEN].concat());
    let o = kueuesim(
        &[
            &["run", "--until", "1h", "--warnings=summary"][..],
            &AS_WRITTEN,
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "warning: 2 warnings not shown (--warnings=all shows them)\n"
    );
    // Only what stderr shows changes: the summary is the same.
    assert_eq!(stdout(&o), stdout(&all));
    assert!(stdout(&o).contains("\nSimulated 1h0m0s"), "{}", stdout(&o));
}

#[test]
fn run_with_none_prints_no_warning() {
    let o = kueuesim(&["run", "--until", "1h", "--warnings", "none"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    // Before the subcommand too: the option is global.
    let o = kueuesim(&["--warnings=none", "run", "--until", "1h", "-o", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

#[test]
fn run_with_seeds_counts_each_warning_once() {
    let o = kueuesim(&[
        "run",
        "--until",
        "1h",
        "--seeds",
        "1..2",
        "--warnings=summary",
        AS_WRITTEN[0],
        AS_WRITTEN[1],
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        warning_lines(&o),
        ["warning: 2 warnings not shown (--warnings=all shows them)"]
    );
}

#[test]
fn validate_get_and_describe_follow_it() {
    let platform = scenario("platform");
    let cases: [(&[&str], usize); 3] = [
        (&["validate", &platform], 1),
        (&["get", "clusterqueue", "--at", "1h"], 1),
        (&["describe", "clusterqueue", "ml-team", "--at", "1h"], 1),
    ];
    for (args, loader_warnings) in cases {
        let all = kueuesim(args);
        assert!(all.status.success(), "{args:?}: {}", stderr(&all));
        let lines = warning_lines(&all);
        assert_eq!(lines.len(), loader_warnings, "{args:?}: {lines:?}");
        assert!(lines[0].contains(MISSING_QUEUE), "{args:?}: {lines:?}");

        let summary = kueuesim(&[args, &["--warnings=summary"]].concat());
        assert!(summary.status.success(), "{args:?}: {}", stderr(&summary));
        assert_eq!(
            stderr(&summary),
            "warning: 1 warning not shown (--warnings=all shows them)\n",
            "{args:?}"
        );
        assert_eq!(stdout(&summary), stdout(&all), "{args:?}");

        let none = kueuesim(&[args, &["--warnings=none"]].concat());
        assert!(none.status.success(), "{args:?}: {}", stderr(&none));
        assert_eq!(stderr(&none), "", "{args:?}");
        assert_eq!(stdout(&none), stdout(&all), "{args:?}");
    }
}

/// A two-variant Sweep of the embedded platform scenario (its files under scenarios/).
fn sweep_file(dir: &Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata:\n  name: w\nspec:\n  base: {}\n  until: 1h\n  seeds: [1]\n  figures: [cycles]\n  parameters:\n  - name: strategy\n    values: [BestEffortFIFO, StrictFIFO]\n    set:\n    - 'cq/ml-team:spec.queueingStrategy={{{{value}}}}'\n    - '{}'\n",
        scenario("platform"),
        AS_WRITTEN[1]
    );
    let path = dir.join("w.yaml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn sweep_follows_it() {
    let dir = temp_dir("warnings-sweep");
    let file = sweep_file(&dir);
    let mut seen = Vec::new();
    for mode in ["all", "summary", "none"] {
        let out = dir.join(mode);
        let o = kueuesim(&[
            "sweep",
            &file,
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--warnings",
            mode,
        ]);
        assert!(o.status.success(), "{mode}: {}", stderr(&o));
        seen.push(warning_lines(&o));
        // What a sweep writes does not depend on what it shows.
        assert_eq!(
            std::fs::read_to_string(out.join("sweep.csv")).unwrap(),
            std::fs::read_to_string(dir.join("all").join("sweep.csv")).unwrap(),
            "{mode}"
        );
    }
    // Both variants give both warnings: each once, without variant names.
    assert_eq!(seen[0].len(), 2, "{:?}", seen[0]);
    assert!(seen[0][0].starts_with("warning: ") && seen[0][0].contains(MISSING_QUEUE));
    assert!(seen[0][1].starts_with("warning: ") && seen[0][1].contains(BYPASS));
    assert_eq!(
        seen[1],
        ["warning: 2 warnings not shown (--warnings=all shows them)"]
    );
    assert!(seen[2].is_empty(), "{:?}", seen[2]);
}

#[test]
fn an_unknown_value_is_a_usage_error() {
    for args in [
        &["run", "--warnings=some"][..],
        &["validate", "x.yaml", "--warnings", "quiet"][..],
    ] {
        let o = kueuesim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(
            err.contains("invalid value") && err.contains("[possible values: all, summary, none]"),
            "{err}"
        );
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn a_run_stopped_early_counts_them_before_its_error() {
    // Exit 3 after the load: the count of what was held back, then the error line.
    let o = kueuesim(&["run", "--max-events", "50", "--warnings=summary"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("warning: ") && lines[0].contains("not shown"),
        "{err}"
    );
    assert!(lines[1].starts_with("error: stopped early"), "{err}");
}

/// A preemption loop (scenarios/kueue/fair-sharing-preemption-loop: train/p preempts research's
/// b2 and b3 once a second, 55 rounds) is a warning and a line under the summary's evictions,
/// so that 111 preemptions of two workloads are not read as a simulator fault; with
/// `--warnings=none` the summary still says it.
#[test]
fn a_preemption_loop_is_a_warning_and_a_summary_line() {
    let path = scenario("kueue/fair-sharing-preemption-loop");
    let said = "workload train/p preempted the same 2 workload(s) 111 times from 20s to 1m15s of the run (research/b3 56 times), each readmitted in between: a preemption loop, which Kueue runs too (docs/semantics.md, Preemption loops)";
    let o = kueuesim(&["run", &path]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(warning_lines(&o), [format!("warning: {said}")]);
    let out = stdout(&o);
    let evictions = out
        .lines()
        .position(|l| l.starts_with("Evictions:    111 Preempted"))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(
        out.lines().nth(evictions + 1),
        Some(format!("  loop:       {said}").as_str()),
        "{out}"
    );
    let quiet = kueuesim(&["run", &path, "--warnings=none"]);
    assert_eq!(stderr(&quiet), "");
    assert_eq!(stdout(&quiet), out);
}
