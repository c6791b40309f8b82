//! The trace root: where a WorkloadTrace's relative paths are looked for (the YAML file's
//! directory, `--trace-root`, `$KUEUESIM_TRACE_ROOT`, the default root), and opening a file.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use super::csv::CsvReader;
use crate::convert::core::{LoadOptions, err_at};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

/// The trace root used when neither `--trace-root` nor `KUEUESIM_TRACE_ROOT` is given: the
/// `shared/traces` directory beside the checkout (`<parent>/shared/traces` for
/// `<parent>/<checkout>`).
pub const DEFAULT_TRACE_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces");

/// The environment variable naming a trace root.
pub const TRACE_ROOT_ENV: &str = "KUEUESIM_TRACE_ROOT";

/// Finds `s` (a trace path of the YAML file `src`): as is when absolute; else in the YAML
/// file's directory, then under `--trace-root`, then under `$KUEUESIM_TRACE_ROOT`, then under
/// the default trace root. Not found: an error at the value listing every place looked.
pub(super) fn find_file(
    src: &ObjectText<'_>,
    s: &wire::S,
    opts: &LoadOptions,
) -> Result<PathBuf, ScenarioError> {
    let rel = Path::new(s.value.trim());
    if s.value.trim().is_empty() {
        return Err(err_at(src, s, "empty path: expected a CSV file"));
    }
    let mut places: Vec<(PathBuf, &str)> = Vec::new();
    if rel.is_absolute() {
        places.push((rel.to_path_buf(), "absolute path"));
    } else {
        let dir = Path::new(&src.file.name)
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        places.push((dir.join(rel), "the scenario file's directory"));
        if let Some(root) = &opts.trace_root {
            places.push((root.join(rel), "--trace-root"));
        }
        if let Some(root) = std::env::var_os(TRACE_ROOT_ENV).filter(|r| !r.is_empty()) {
            places.push((PathBuf::from(root).join(rel), "$KUEUESIM_TRACE_ROOT"));
        }
        places.push((
            Path::new(DEFAULT_TRACE_ROOT).join(rel),
            "the default trace root beside the checkout",
        ));
    }
    if let Some((p, _)) = places.iter().find(|(p, _)| p.is_file()) {
        return Ok(p.clone());
    }
    let list: Vec<String> = places
        .iter()
        .map(|(p, why)| format!("\n  - {} ({why})", p.display()))
        .collect();
    Err(err_at(
        src,
        s,
        format!(
            "trace file {:?} not found; looked in:{}\nexpected it under a trace root: pass --trace-root DIR or set {TRACE_ROOT_ENV}; docs/traces.md lists the public traces and how to fetch them",
            s.value.trim(),
            list.concat()
        ),
    ))
}

/// Opens a trace file as a CSV reader.
pub(super) fn open_csv(path: &Path) -> Result<CsvReader<BufReader<File>>, ScenarioError> {
    let shown = path.display().to_string();
    let f = File::open(path).map_err(|source| ScenarioError::Io {
        path: shown.clone(),
        source,
    })?;
    CsvReader::new(BufReader::with_capacity(1 << 16, f), shown)
}
