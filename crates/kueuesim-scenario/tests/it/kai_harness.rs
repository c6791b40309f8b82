//! What the KAI case harnesses (`kai_tables`, `kai_integration_cases`,
//! `kai_allocate_fraction_cases`, `kai_reclaim_unit_cases`) write and read alike: the
//! Simulation, Node, PriorityClass and KAI Queue documents of a case, its run, and a job's
//! evictions. Each harness keeps only how its tables write their jobs (bare Pods or batch
//! Jobs, bound how, in which order), which is where upstream's test files differ.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result};

use crate::util::load_text;

/// KAI's priority classes as upstream's tests name them (`pkg/scheduler/constants`): train 50,
/// interactive 75, build 100, inference 125; build and inference are not preemptible.
pub(crate) const PRIORITY_CLASSES: [(&str, i32); 4] = [
    ("train", 50),
    ("interactive", 75),
    ("build", 100),
    ("inference", 125),
];

/// The Simulation of a case: 10m with a podTermination of 30s (upstream's `Releasing` pods
/// are gone by the next session), GPU devices bookkept when `devices` (a case with GPU
/// shares), and KAI's `placementStrategy` when the case sets one.
pub(crate) fn simulation(devices: bool, placement: Option<&str>) -> String {
    let mut spec = "until: 10m, podTermination: 30s".to_string();
    if devices {
        spec += ", gpuPlacement: {devices: true}";
    }
    if let Some(p) = placement {
        spec += &format!(", kai: {{placementStrategy: {p}}}");
    }
    format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec: {{{spec}}}\n"
    )
}

/// A Node of `labels` (`key: value` each) and `allocatable` (`resource: 'quantity'` each;
/// 110 pods are added).
pub(crate) fn node(name: &str, labels: &[String], allocatable: &[String]) -> String {
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{{}}}}}\nstatus:\n  allocatable: {{{}, pods: '110'}}\n",
        labels.join(", "),
        allocatable.join(", ")
    )
}

/// The PriorityClasses (name, value).
pub(crate) fn priority_classes(classes: &[(&str, i32)]) -> String {
    classes
        .iter()
        .map(|(name, value)| {
            format!(
                "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}\n"
            )
        })
        .collect()
}

/// A KAI Queue (a department is a Queue others name as parent): its parent, queue priority
/// (`None`: KAI's default), GPU quota, over-quota weight and limit (-1: none, as upstream's
/// test builder's `NoMaxAllowedResource`), and `more` resource lines (CPU, memory) under
/// `resources`.
pub(crate) fn queue(
    name: &str,
    parent: Option<&str>,
    priority: Option<i64>,
    [quota, weight, limit]: [f64; 3],
    more: &str,
) -> String {
    let mut s = format!(
        "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: {name}}}\nspec:\n"
    );
    if let Some(p) = parent {
        s += &format!("  parentQueue: {p}\n");
    }
    if let Some(p) = priority {
        s += &format!("  priority: {p}\n");
    }
    s += &format!(
        "  resources:\n    gpu: {{quota: {quota}, overQuotaWeight: {weight}, limit: {limit}}}\n{more}"
    );
    s
}

/// Loads a case's scenario and runs it to its result, panicking with the scenario's text on a
/// load error.
pub(crate) fn run(text: &str) -> SimulationResult {
    let loaded = load_text("t.yaml", text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    result(&loaded.world, &Simulation::new(&loaded.world).run())
}

/// A job's evictions: when, why and for whom (`<namespace>/<preemptor>`).
pub(crate) fn evictions(w: &WorkloadOut) -> Vec<(f64, &'static str, Option<&str>)> {
    w.evictions
        .iter()
        .map(|e| (e.at, e.reason, e.preemptor.as_deref()))
        .collect()
}
