//! Integration tests of loading manifests and writing results.

/// Malformed or inconsistent input: each case names file:line:column and what was expected.
mod bad_input;
/// Golden scenarios of `scenarios/golden/`: hand-computed outcomes plus snapshots.
mod golden;
/// Kueue's own scheduler unit-test cases (kueue-cases.md S-*, O-*) as scenarios.
mod kueue_cases;
/// How objects become workloads: document order, times, snapshot state.
mod loading;
/// Helpers to load text and run it.
mod util;
