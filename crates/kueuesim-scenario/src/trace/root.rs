//! The trace root: where a WorkloadTrace's relative paths are looked for (the YAML file's
//! directory, `--trace-root`, `$KUEUESIM_TRACE_ROOT`, the default root beside the checkout,
//! found at run time), and opening a file.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use super::csv::CsvReader;
use crate::convert::core::{LoadOptions, err_at};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

/// Where the default trace root lies from a kueuesim checkout: `shared/traces` beside it
/// (`<parent>/shared/traces` for `<parent>/<checkout>`).
pub const DEFAULT_TRACE_ROOT_BESIDE_CHECKOUT: &str = "../shared/traces";

/// The trace root used after `--trace-root` and `$KUEUESIM_TRACE_ROOT`: `shared/traces`
/// beside the kueuesim checkout that holds the running executable (`target/release/kueuesim`,
/// a test binary), else beside the checkout that holds the current directory (the Python
/// module, run by an interpreter from elsewhere); None outside any checkout (an installed
/// binary, a container). Found at run time, so a binary carries no path of the machine it
/// was built on.
pub fn default_trace_root() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok();
    let cwd = std::env::current_dir().ok();
    [exe, cwd]
        .into_iter()
        .flatten()
        .find_map(|p| trace_root_beside_checkout(&p))
}

/// `shared/traces` beside the checkout holding `path`: its nearest ancestor (itself included)
/// that is kueuesim's workspace root, a directory with `Cargo.toml` and
/// `crates/kueuesim-scenario/`.
pub fn trace_root_beside_checkout(path: &Path) -> Option<PathBuf> {
    let checkout = path.ancestors().find(|d| {
        d.join("Cargo.toml").is_file() && d.join("crates").join("kueuesim-scenario").is_dir()
    })?;
    Some(checkout.join(DEFAULT_TRACE_ROOT_BESIDE_CHECKOUT))
}

/// The environment variable naming a trace root.
pub const TRACE_ROOT_ENV: &str = "KUEUESIM_TRACE_ROOT";

/// Finds `s` (a trace path of the YAML file `src`): as is when absolute; else in the YAML
/// file's directory, then under `--trace-root`, then under `$KUEUESIM_TRACE_ROOT`, then under
/// the default trace root (`default_trace_root`). Not found: an error at the value listing
/// every place looked.
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
        if let Some(root) = default_trace_root() {
            places.push((root.join(rel), "the default trace root beside the checkout"));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_root_is_beside_the_checkout_holding_the_path() {
        let tmp = std::env::temp_dir().join(format!("kueuesim-root-{}", std::process::id()));
        let checkout = tmp.join("parent").join("kueuesim");
        std::fs::create_dir_all(checkout.join("crates/kueuesim-scenario")).expect("dirs");
        std::fs::write(checkout.join("Cargo.toml"), "[workspace]\n").expect("write");
        let expected = Some(checkout.join("../shared/traces"));
        // A release binary, a test binary, the checkout itself, a directory inside it.
        for p in [
            "target/release/kueuesim",
            "target/debug/deps/it-0123abcd",
            "",
            "crates/kueuesim-scenario",
        ] {
            let path = checkout.join(p);
            assert_eq!(trace_root_beside_checkout(&path), expected, "{p}");
        }
        // Outside a checkout (an installed binary), or a directory with a Cargo.toml that
        // is not kueuesim's: no default root.
        assert_eq!(trace_root_beside_checkout(&tmp.join("bin/kueuesim")), None);
        std::fs::write(tmp.join("Cargo.toml"), "[workspace]\n").expect("write");
        assert_eq!(trace_root_beside_checkout(&tmp.join("bin/kueuesim")), None);
        std::fs::remove_dir_all(&tmp).expect("clean up");
    }

    #[test]
    fn this_test_binary_finds_the_checkout_it_was_built_in() {
        // Built in <checkout>/target (or run by cargo from inside the checkout): the root is
        // <checkout>/../shared/traces.
        let root = default_trace_root().expect("a checkout holds the test binary");
        let found = root
            .ancestors()
            .nth(3)
            .expect("<checkout>/../shared/traces");
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        assert_eq!(
            found.canonicalize().expect("found"),
            checkout.canonicalize().expect("checkout")
        );
    }
}
