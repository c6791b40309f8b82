//! kueuesim-engine: the discrete-event simulation of Kueue admission and pod placement.
//!
//! `Simulation::new(&world).run()` replays a `World` and returns an `Outcome`. Decisions are
//! computed by pure policy functions (`admission::run_cycle`, `placement::{kube, volcano, kai}::place`) and
//! applied by the loop in `sim`, whose handlers live one concern a file (arrivals, the Kueue
//! cycle, eviction and requeue, waitForPodsReady, Admission Fair Sharing, gang scheduling,
//! KAI, pods and GPU time, records, time series, invariants).
#![warn(missing_docs)]

pub mod admission;
pub mod admitted;
pub mod bound;
pub mod event_queue;
pub mod hooks;
pub mod hourly;
pub mod outcome;
pub mod placement;
pub mod preemption;
pub mod queues;
pub mod sim;
pub mod tas;
pub mod uid_order;
pub mod window;

pub use hooks::Hooks;
pub use outcome::{Outcome, WorkloadRecord, WorkloadState};
pub use sim::{RunSink, Simulation, WorkloadFeed};
