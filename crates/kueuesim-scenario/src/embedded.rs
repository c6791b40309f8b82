//! The embedded default scenario (the reference platform day of scenarios/platform), and
//! reading scenario paths.

use std::path::Path;

use crate::error::ScenarioError;
use crate::source::{SourceFile, read_text};

/// The files of `scenarios/platform/`, compiled in so `kueuesim run` works with no path.
const PLATFORM: &[(&str, &str)] = &[
    (
        "scenarios/platform/00-simulation.yaml",
        include_str!("../../../scenarios/platform/00-simulation.yaml"),
    ),
    (
        "scenarios/platform/10-nodes.yaml",
        include_str!("../../../scenarios/platform/10-nodes.yaml"),
    ),
    (
        "scenarios/platform/20-kueue.yaml",
        include_str!("../../../scenarios/platform/20-kueue.yaml"),
    ),
    (
        "scenarios/platform/30-workloads.yaml",
        include_str!("../../../scenarios/platform/30-workloads.yaml"),
    ),
];

/// The default scenario's files, named `<embedded>/scenarios/platform/…` in messages.
pub fn default_scenario() -> Vec<SourceFile> {
    PLATFORM
        .iter()
        .map(|(name, text)| SourceFile {
            name: format!("<embedded>/{name}"),
            text: text.to_string(),
        })
        .collect()
}

/// Reads `paths`: a file as is, a directory as its `*.yaml`/`*.yml` files in lexical order
/// (not recursing).
pub fn read_paths(paths: &[impl AsRef<Path>]) -> Result<Vec<SourceFile>, ScenarioError> {
    let mut out = Vec::new();
    for p in paths {
        let p = p.as_ref();
        let io = |source| ScenarioError::Io {
            path: p.display().to_string(),
            source,
        };
        if p.is_dir() {
            let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(p)
                .map_err(io)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|e| e.is_file() && e.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect();
            entries.sort();
            if entries.is_empty() {
                return Err(ScenarioError::Invalid(format!(
                    "{}: directory has no *.yaml or *.yml files",
                    p.display()
                )));
            }
            for e in entries {
                let text = read_text(&e, &e.display().to_string())?;
                out.push(SourceFile {
                    name: e.display().to_string(),
                    text,
                });
            }
        } else {
            let text = read_text(p, &p.display().to_string())?;
            out.push(SourceFile {
                name: p.display().to_string(),
                text,
            });
        }
    }
    Ok(out)
}
