//! Integration tests of the engine, on worlds built in code (the engine knows no YAML).

/// GPU devices under random binds and releases, every shared-GPU policy.
mod device_props;
/// Builders of small worlds shared by the tests.
mod fixtures;
/// Invariants under random worlds (proptest): quota, node capacity, gangs, accounting.
mod invariants;
/// The module layering read from the sources: scheduler folders, shared code, outcome, hooks.
mod layering;
/// A living cluster: invariants under random Timelines and node and GPU failures.
mod living_props;
/// Placement invariants over random topologies and gangs: hard limits, whole gangs, books.
mod placement_props;
/// Classical preemption never evicts a workload its policies protect, nor one not needed.
mod preemption_props;
/// Volcano vGPU devices under random binds and releases, and in whole runs.
mod vgpu_props;
