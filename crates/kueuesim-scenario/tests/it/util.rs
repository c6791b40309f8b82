//! Loading YAML text and running it, for tests.

use kueuesim_engine::Simulation;
use kueuesim_scenario::output::{SimulationResult, result};
use kueuesim_scenario::{LoadOptions, Loaded, ScenarioError, SourceFile, load};

/// Loads one file's text, named `name`.
pub(crate) fn load_text(name: &str, text: &str) -> Result<Loaded, ScenarioError> {
    load(
        &[SourceFile {
            name: name.into(),
            text: text.into(),
        }],
        LoadOptions::default(),
    )
}

/// The error message of loading `text` as `t.yaml`; panics if it loads.
pub(crate) fn load_error(text: &str) -> String {
    match load_text("t.yaml", text) {
        Ok(_) => panic!("expected an error loading:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// The scenarios directory of the repository.
pub(crate) fn scenarios_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// Loads and runs a scenario directory under `scenarios/`.
pub(crate) fn run_dir(rel: &str) -> SimulationResult {
    let files =
        kueuesim_scenario::embedded::read_paths(&[scenarios_dir().join(rel)]).expect("readable");
    let loaded = load(&files, LoadOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let outcome = Simulation::new(&loaded.world).run();
    result(&loaded.world, &outcome)
}
