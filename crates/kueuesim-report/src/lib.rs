//! kueuesim-report: every output of a run. A `World` and the engine's `Outcome` become the
//! `SimulationResult` document (JSON or YAML) and the human summary, the kubectl views of
//! `get`/`describe`, and the files of `run --out DIR` (workloads.csv, events.jsonl,
//! timeseries.csv, metrics.prom, report.html).

pub mod checks;
pub mod export;
pub mod figures;
pub mod kubectl;
pub mod metrics;
pub mod output;
pub mod queues;
pub mod report;
