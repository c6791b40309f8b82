//! kueuesim-report: every output of a run. A `World` and the engine's `Outcome` become the
//! `SimulationResult` document (JSON or YAML) and the human summary, the kubectl views of
//! `get`/`describe`, and the files of `run --out DIR` (result.json, workloads.csv, queues.csv,
//! events.jsonl, timeseries.csv, metrics.prom, metrics.om, report.html), streamed as the run
//! goes (`outdir`); `escape` keeps what reaches a terminal or a spreadsheet from acting on it.

pub mod checks;
pub mod escape;
pub mod export;
pub mod figures;
pub mod hourly;
pub mod kubectl;
pub mod metrics;
pub mod openmetrics;
pub mod outdir;
pub mod output;
mod percentiles;
pub mod policies;
pub mod queues;
pub mod report;
pub mod summary_text;
