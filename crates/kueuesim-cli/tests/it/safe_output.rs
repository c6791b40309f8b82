//! What kueuesim writes cannot act on whoever reads it: no CSV cell a spreadsheet runs as a
//! formula, no control character reaching a terminal, no `--out` file written through a path
//! that was already there, and no path of the build machine in the binary.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use kueuesim_engine::Simulation;
use kueuesim_model::SimDuration;
use kueuesim_report::outdir::{OutDir, parse_write};
use kueuesim_report::output::result_with;
use kueuesim_scenario::embedded::read_paths;
use kueuesim_scenario::{LoadOptions, load};

use super::{csv_cells, kueuesim, scenario, stderr, stdout, temp_dir};

/// Text that a spreadsheet would run, or that would drive a terminal, in every name-like
/// field: what a Python caller or a trace mapping could hand the report even when a scenario
/// file's names are checked at load.
const HOSTILE: [&str; 5] = [
    "=HYPERLINK(\"http://evil.example\",\"x\")\u{1b}[2J",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|'/C calc'!A0",
    "+1\u{1b}]0;pwned\u{7}",
    "\tx\r=1",
];

/// Every cell of a CSV file kueuesim wrote: none starts a formula unless it is a number, and
/// no control character is anywhere but at the end of a line. Returns the cells.
fn assert_safe_csv(name: &str, text: &str) -> Vec<String> {
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{name} holds a control character:\n{text}"
    );
    let mut all = Vec::new();
    for line in text.lines() {
        for cell in csv_cells(line) {
            let formula = cell.starts_with(['=', '+', '@', '\t', '\r'])
                || (cell.starts_with('-') && cell.parse::<f64>().is_err());
            assert!(
                !formula,
                "{name}: cell {cell:?} starts a formula in:\n{line}"
            );
            all.push(cell);
        }
    }
    all
}

#[test]
fn no_cell_of_the_run_files_starts_a_formula_or_holds_a_control_character() {
    let files = read_paths(&[PathBuf::from(scenario("golden/first-fit-nodes"))]).expect("read");
    let mut loaded = load(&files, LoadOptions::default()).expect("loads");
    let world = &mut loaded.world;
    world.cluster_queues[0].name = HOSTILE[0].into();
    world.flavors[0].name = HOSTILE[1].into();
    world.local_queues[0].name = HOSTILE[2].into();
    world.local_queues[0].namespace = HOSTILE[3].into();
    for (i, w) in world.workloads.iter_mut().enumerate() {
        w.namespace = HOSTILE[3].into();
        w.name = format!("{}{i}", HOSTILE[4]);
    }
    let world = &loaded.world;
    let dir = temp_dir("csv-formulas");
    let step = SimDuration::from_secs(600);
    let mut sink = OutDir::create(&dir, world, &parse_write("csv").expect("csv")).expect("out dir");
    let outcome = Simulation::new(world)
        .with_time_series(step)
        .run_with_sink(|_, _| ControlFlow::Continue(()), &mut sink);
    let mut doc = result_with(world, &outcome, true);
    sink.finish(&mut doc, &outcome).expect("written");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect(f);

    let workloads = assert_safe_csv("workloads.csv", &read("workloads.csv"));
    // The names are there, guarded and shown: the workload names started with a tab.
    assert!(
        workloads.contains(&"'@SUM(1+1)*cmd|'/C calc'!A0".to_string()),
        "{workloads:?}"
    );
    assert!(
        workloads.contains(&"\\tx\\r=10".to_string()),
        "{workloads:?}"
    );
    assert!(
        workloads.contains(&"'-2+3+cmd|' /C calc'!A0".to_string()),
        "{workloads:?}"
    );
    assert!(
        workloads.contains(&"'+1^[]0;pwned\\a".to_string()),
        "{workloads:?}"
    );

    let queues = assert_safe_csv("queues.csv", &read("queues.csv"));
    assert!(
        queues.contains(&"'=HYPERLINK(\"http://evil.example\",\"x\")^[[2J".to_string()),
        "{queues:?}"
    );

    let timeseries = read("timeseries.csv");
    let header = assert_safe_csv("timeseries.csv", timeseries.lines().next().expect("header"));
    assert!(
        header.contains(&"gpuQuota:flavor=-2+3+cmd|' /C calc'!A0".to_string()),
        "{header:?}"
    );
    assert_safe_csv("timeseries.csv", &timeseries);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn sweep_files_guard_text_cells_keep_negative_numbers_and_replace_symlinks() {
    let dir = temp_dir("sweep-formulas");
    std::fs::create_dir_all(&dir).expect("dir");
    // A parameter whose values are free text (an annotation) or a negative number.
    let file = dir.join("s.yaml");
    std::fs::write(
        &file,
        format!(
            "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata:\n  name: s\nspec:\n  base: {}\n  seeds: 1\n  figures: [cycles]\n  parameters:\n  - name: note\n    values: [-1, \"=1+1\", \"@SUM(A1)\"]\n    set:\n    - \"cq/team:metadata.annotations.note='{{{{value}}}}'\"\n",
            scenario("golden/first-fit-nodes")
        ),
    )
    .expect("write");
    let out = dir.join("out");
    // Files whose names are taken by symlinks are replaced, their targets left as they were.
    std::fs::create_dir_all(&out).expect("out");
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious\n").expect("victim");
    for n in ["sweep-summary.csv", "sweep.html"] {
        std::os::unix::fs::symlink(&victim, out.join(n)).expect("symlink");
    }
    let o = kueuesim(&[
        "sweep",
        file.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "precious\n"
    );
    for name in ["sweep.csv", "sweep-summary.csv"] {
        let text = std::fs::read_to_string(out.join(name)).expect(name);
        let cells = assert_safe_csv(name, &text);
        for guarded in ["note=-1", "-1", "'=1+1", "'@SUM(A1)", "note==1+1"] {
            assert!(
                cells.contains(&guarded.to_string()),
                "{name}: {guarded:?} in\n{text}"
            );
        }
    }
    // A rerun reads the guarded cells back as the values they were: every run is reused.
    let again = kueuesim(&[
        "sweep",
        file.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("reusing 3 runs"),
        "{}",
        stderr(&again)
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// A scenario file whose name drives a terminal (clears the screen, sets the title, moves
/// the cursor back), with `body`, in a fresh directory.
fn hostile_file(test: &str, body: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(test);
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("q\u{1b}[2J\u{1b}]0;pwned\u{7}\r\u{8}\u{9b}31m\u{202e}.yaml");
    std::fs::write(&file, body).expect("write");
    (dir, file)
}

fn assert_no_control(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{202e}')
        .collect();
    assert!(bad.is_empty(), "{what} passes {bad:?} raw:\n{text}");
}

#[test]
fn warnings_errors_and_the_summary_show_control_characters() {
    let scenario_text = std::fs::read_to_string(
        Path::new(&scenario("golden/first-fit-nodes")).join("scenario.yaml"),
    )
    .expect("scenario");
    // An unknown Kueue field: a warning naming the file.
    let warned = scenario_text.replacen(
        "  namespaceSelector: {}",
        "  namespaceSelector: {}\n  preemptionn: {}",
        1,
    );
    let (dir, file) = hostile_file("terminal-warning", &warned);
    let path = file.to_str().expect("utf-8");
    // Two seeds: the summary names the scenario file.
    let o = kueuesim(&["run", path, "--seeds", "1,2", "--jobs", "1", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning: "), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("q^[[2J^[]0;pwned\\a\\r\\b\\u009b31m\\u202e.yaml"),
        "{}",
        stderr(&o)
    );
    assert_no_control("stderr", &o.stderr);
    assert!(stdout(&o).contains("q^[[2J"), "{}", stdout(&o));
    assert_no_control("the summary", &o.stdout);
    // An error naming the file: exit 2, shown as well.
    std::fs::write(
        &file,
        scenario_text.replacen("podStartup: 10s", "podStartup: soon", 1),
    )
    .expect("write");
    let o = kueuesim(&["run", path]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
    assert_no_control("the error", &o.stderr);
    // JSON is the serializer's: its escapes are JSON's, and it is printed as it is.
    std::fs::write(&file, &scenario_text).expect("write");
    let o = kueuesim(&["describe", "workload", "\u{1b}[2Jnone", path, "-n", "team"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_no_control("describe's error", &o.stderr);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn out_never_writes_through_a_symlink_that_was_there() {
    let dir = temp_dir("out-symlinks");
    std::fs::create_dir_all(&dir).expect("dir");
    let victim = |n: &str| dir.join(format!("victim-{n}"));
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("out");
    // The spill file's name taken by a symlink: the run refuses it and writes nothing there.
    std::fs::write(victim("part"), "precious\n").expect("victim");
    std::os::unix::fs::symlink(victim("part"), out.join(".workloads.part")).expect("symlink");
    let run = || {
        kueuesim(&[
            "run",
            &scenario("golden/first-fit-nodes"),
            "-q",
            "--out",
            out.to_str().expect("utf-8"),
        ])
    };
    let o = run();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(".workloads.part: exists and is not a regular file"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(victim("part")).expect("victim"),
        "precious\n"
    );
    // Every file's name taken by a symlink: each becomes the run's file, no target changes.
    std::fs::remove_file(out.join(".workloads.part")).expect("unlink");
    let names = [
        "result.json",
        "workloads.csv",
        "queues.csv",
        "events.jsonl",
        "timeseries.csv",
        "metrics.prom",
        "metrics.om",
        "report.html",
        "summary.json",
    ];
    for n in names {
        std::fs::write(victim(n), "precious\n").expect("victim");
        std::os::unix::fs::symlink(victim(n), out.join(n)).expect("symlink");
    }
    // A regular file left by a crashed run is only in the way: it goes.
    std::fs::write(out.join(".events.jsonl.part"), "stale").expect("stale");
    let o = run();
    assert!(o.status.success(), "{}", stderr(&o));
    for n in names {
        assert_eq!(
            std::fs::read_to_string(victim(n)).expect("victim"),
            "precious\n",
            "{n}'s target was written"
        );
    }
    for n in names {
        let m = std::fs::symlink_metadata(out.join(n)).expect(n);
        assert!(m.file_type().is_file(), "{n} is the run's file");
    }
    // No temporary file is left.
    let left: Vec<String> = super::files_in(&out)
        .into_iter()
        .filter(|f| f.ends_with(".part"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn the_binary_holds_no_trace_root_of_the_machine_it_was_built_on() {
    let binary = std::fs::read(env!("CARGO_BIN_EXE_kueuesim")).expect("binary");
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("checkout");
    // The spellings an absolute default root had: the scenario crate's manifest directory
    // joined with ../../../shared/traces, and the directory it stands for.
    let baked = [
        format!(
            "{}/crates/kueuesim-scenario/../../../shared/traces",
            checkout.display()
        ),
        format!(
            "{}/shared/traces",
            checkout.parent().expect("parent").display()
        ),
    ];
    for needle in baked {
        let found = binary.windows(needle.len()).any(|w| w == needle.as_bytes());
        assert!(!found, "the binary holds {needle:?}");
    }
}
