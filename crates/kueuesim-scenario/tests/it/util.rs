//! Loading YAML text and running it, for tests.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{ConditionOut, SimulationResult, WorkloadOut, result};
use kueuesim_scenario::{LoadOptions, Loaded, ScenarioError, SourceFile, load};

/// A ResourceFlavor `default` (a fixture other texts build on; tests point into its lines).
pub(crate) const FLAVOR: &str =
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: default\n";

/// A ClusterQueue `cq` taking every namespace, with `quota` GPUs of flavor `default`.
pub(crate) fn cq(quota: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - name: nvidia.com/gpu
        nominalQuota: {quota}
"
    )
}

/// Loads one file's text, named `name`.
pub(crate) fn load_text(name: &str, text: &str) -> Result<Loaded, ScenarioError> {
    load_text_with(name, text, LoadOptions::default())
}

/// Loads one file's text, named `name`, with `options`.
pub(crate) fn load_text_with(
    name: &str,
    text: &str,
    options: LoadOptions,
) -> Result<Loaded, ScenarioError> {
    load(
        &[SourceFile {
            name: name.into(),
            text: text.into(),
        }],
        options,
    )
}

/// The error message of loading `text` as `t.yaml` with `--strict`; panics if it loads.
pub(crate) fn strict_load_error(text: &str) -> String {
    let strict = LoadOptions {
        strict: true,
        ..Default::default()
    };
    match load_text_with("t.yaml", text, strict) {
        Ok(_) => panic!("expected a --strict error loading:\n{text}"),
        Err(e) => e.to_string(),
    }
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

/// Loads a scenario directory under `scenarios/`.
pub(crate) fn load_dir(rel: &str) -> Loaded {
    let files =
        kueuesim_scenario::embedded::read_paths(&[scenarios_dir().join(rel)]).expect("readable");
    load(&files, LoadOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Loads and runs a scenario directory under `scenarios/`.
pub(crate) fn run_dir(rel: &str) -> SimulationResult {
    let loaded = load_dir(rel);
    let outcome = Simulation::new(&loaded.world).run();
    result(&loaded.world, &outcome)
}

/// The workload `namespace/name`, or the Workload Kueue made for Job `name`
/// (`job-<name>-<hash>`).
pub(crate) fn wl<'a>(r: &'a SimulationResult, namespace: &str, name: &str) -> &'a WorkloadOut {
    let prefix = format!("job-{name}-");
    r.workloads
        .iter()
        .find(|w| w.namespace == namespace && (w.name == name || w.name.starts_with(&prefix)))
        .unwrap_or_else(|| panic!("no workload {namespace}/{name}"))
}

/// `namespace/name`, for messages.
pub(crate) fn id(w: &WorkloadOut) -> String {
    format!("{}/{}", w.namespace, w.name)
}

/// The condition `kind` of `w`; panics naming the workload if it has none.
pub(crate) fn condition<'a>(w: &'a WorkloadOut, kind: &str) -> &'a ConditionOut {
    w.conditions
        .iter()
        .find(|c| c.kind == kind)
        .unwrap_or_else(|| panic!("{} has no {kind} condition: {:?}", id(w), w.conditions))
}

/// (admittedAt, runningAt, finishedAt) in seconds.
pub(crate) fn times(w: &WorkloadOut) -> (Option<f64>, Option<f64>, Option<f64>) {
    (w.admitted_at, w.running_at, w.finished_at)
}

/// The Warning events of Kueue's scheduler on `w`, as (at, reason, message).
pub(crate) fn warnings(w: &WorkloadOut) -> Vec<(f64, &str, &str)> {
    w.events
        .iter()
        .filter(|e| e.kind == "Warning" && e.source == "kueue-admission")
        .map(|e| (e.at, e.reason, e.message.as_str()))
        .collect()
}
