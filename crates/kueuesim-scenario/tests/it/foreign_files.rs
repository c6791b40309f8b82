//! Files that are not what they were given as (a `--patch`, a scenario file, a trace or a
//! generator's CSV that is a binary file or a symlink to a system file): the error names the
//! place and the parser's message, and never shows the file's text.

use std::path::{Path, PathBuf};

use kueuesim_scenario::embedded::read_paths;
use kueuesim_scenario::{LoadOptions, ScenarioError, SourceFile, load};

use crate::util::{FLAVOR, cq};

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kueuesim-foreign-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// What a secret line looks like in the files below; no error may contain it.
const SECRET: &str = "s3cr3t-T0KEN";

/// Texts a system or credentials file may hold, each with `SECRET` on its first line: a
/// passwd/shadow-like line (a YAML plain scalar), a `key: value` file (a YAML mapping
/// without `kind`), a line that is no YAML at all, and a line that is a CSV header.
fn secret_texts() -> Vec<String> {
    vec![
        format!("root:$6${SECRET}:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"),
        format!("password: {SECRET}\nuser: admin\n"),
        format!("token: [{SECRET}\n"),
        format!("{SECRET},a,b\n1,2,3\n"),
        format!("- {SECRET}\n- x\n"),
    ]
}

/// Writes `text` as `dir/target.txt` and returns `dir/link` (`link` names the symlink, e.g.
/// `patch.yaml`), a symlink to it.
fn symlink_to(dir: &Path, link: &str, text: &str) -> PathBuf {
    let target = dir.join("target.txt");
    std::fs::write(&target, text).expect("write target");
    let path = dir.join(link);
    let _ = std::fs::remove_file(&path);
    std::os::unix::fs::symlink(&target, &path).expect("symlink");
    path
}

fn assert_hidden(e: &ScenarioError, what: &str) {
    let shown = e.to_string();
    assert!(
        !shown.contains(SECRET),
        "{what}: the file's text shown:\n{shown}"
    );
    // Still an error at a place, with the parser's or loader's message.
    assert!(
        matches!(e, ScenarioError::At { pos, .. } if pos.line >= 1),
        "{what}: {shown}"
    );
}

fn scenario() -> SourceFile {
    SourceFile {
        name: "s.yaml".into(),
        text: format!("{FLAVOR}---\n{}", cq("8")),
    }
}

#[test]
fn a_patch_that_is_a_symlink_to_a_secret_file_is_not_shown() {
    let dir = scratch("patch");
    for (i, text) in secret_texts().iter().enumerate() {
        let link = symlink_to(&dir, "patch.yaml", text);
        let patches = read_paths(&[link]).expect("readable");
        let opts = LoadOptions {
            patches,
            ..Default::default()
        };
        let e = load(&[scenario()], opts).expect_err("not a patch");
        assert_hidden(&e, &format!("patch {i}"));
    }
}

#[test]
fn a_scenario_file_that_is_a_secret_file_is_not_shown() {
    let dir = scratch("scenario");
    for (i, text) in secret_texts().iter().enumerate() {
        let link = symlink_to(&dir, "scenario.yaml", text);
        let files = read_paths(&[link]).expect("readable");
        let e = load(&files, LoadOptions::default()).expect_err("not a scenario");
        assert_hidden(&e, &format!("scenario {i}"));
    }
}

#[test]
fn a_binary_file_is_not_shown() {
    let dir = scratch("binary");
    let path = dir.join("patch.yaml");
    let mut bytes = format!("\x7fELF\n{SECRET}").into_bytes();
    bytes.extend_from_slice(&[0xff, 0xfe, 0x00, b'\n']);
    std::fs::write(&path, &bytes).expect("write");
    let e = read_paths(&[path]).expect_err("not UTF-8");
    let shown = e.to_string();
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(shown.contains(":2:13: byte 0xFF is not UTF-8"), "{shown}");
}

#[test]
fn a_trace_that_is_a_secret_file_is_not_shown() {
    let dir = scratch("trace");
    for format in ["native", "alibaba-openb", "philly", "alibaba-dlrm"] {
        for (i, text) in secret_texts().iter().enumerate() {
            symlink_to(&dir, "trace.csv", text);
            let yaml = format!(
                "{FLAVOR}---\n{}---\napiVersion: kueuesim.io/v1alpha1\nkind: WorkloadTrace\nmetadata: {{name: tr}}\nspec:\n  format: {format}\n  path: trace.csv\n",
                cq("8")
            );
            let name = dir.join("scenario.yaml").display().to_string();
            let e = load(&[SourceFile { name, text: yaml }], LoadOptions::default())
                .expect_err("not a trace");
            assert_hidden(&e, &format!("{format} {i}"));
            assert!(e.to_string().contains("no column"), "{format} {i}: {e}");
        }
    }
}

#[test]
fn a_generator_csv_that_is_a_secret_file_is_not_shown() {
    let dir = scratch("generator");
    for (i, text) in secret_texts().iter().enumerate() {
        symlink_to(&dir, "gaps.csv", text);
        let yaml = format!(
            "{FLAVOR}---\n{}---\napiVersion: kueuesim.io/v1alpha1\nkind: WorkloadGenerator\nmetadata: {{name: g}}\nspec:\n  arrival: {{interArrival: {{path: gaps.csv, column: gap}}}}\n  queues: [{{name: q}}]\n",
            cq("8")
        );
        let name = dir.join("scenario.yaml").display().to_string();
        let e = load(&[SourceFile { name, text: yaml }], LoadOptions::default())
            .expect_err("not the CSV");
        assert_hidden(&e, &format!("generator {i}"));
        assert!(e.to_string().contains("has no column \"gap\""), "{i}: {e}");
    }
}

/// An object that is YAML with a wrong value still shows its line: the frame is kept for
/// files that are what they were given as.
#[test]
fn an_object_with_a_wrong_value_still_shows_its_line() {
    let text = format!("{FLAVOR}---\n{}", cq("lots"));
    let e = load(
        &[SourceFile {
            name: "t.yaml".into(),
            text,
        }],
        LoadOptions::default(),
    )
    .expect_err("bad quota");
    assert!(e.to_string().contains("nominalQuota: lots"), "{e}");
}
