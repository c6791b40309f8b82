//! What a run hands out as it goes (`Simulation::run_with_sink`): every event as it is
//! recorded, every quota reservation's wait, every time-series sample, and a lean run's
//! finished workloads, so that writers can stream them to files while the engine lets go of
//! them. The engine stays free of I/O: it only fills the outbox, and the run loop empties it
//! into the caller's `RunSink` after every step.

use std::collections::VecDeque;

use kueuesim_model::{SimDuration, SimTime, Workload, WorkloadId};

use crate::outcome::{Event, Sample, WorkloadRecord};

use super::Simulation;
use super::runtime::Spec;

/// Receives what a run hands out as it goes (`Simulation::run_with_sink`). Calls arrive in
/// simulated-time order within each kind; a sink that writes files streams them.
pub trait RunSink {
    /// An event recorded on workload `w` (after the engine folded exact repeats): in time
    /// order, events at equal times in the order the simulator recorded them.
    fn event(&mut self, w: WorkloadId, wl: &Workload, e: &crate::outcome::Event);
    /// Whether `event` does anything: when not, the run does not copy events for it.
    fn wants_events(&self) -> bool {
        true
    }
    /// A quota reservation by a Kueue scheduling cycle and the time since the workload was
    /// created or last requeued (`QueuedWaitTime`), in the order they happened.
    fn quota_reserved(&mut self, w: WorkloadId, wl: &Workload, waited: SimDuration);
    /// `count` time-series samples (`Simulation::with_time_series`) of one state: `first`,
    /// and the same state at `first.at + step`, `first.at + 2·step`, … In time order, none
    /// after the end of the run; the outcome's `time_series` then has no samples. Nothing
    /// changes between events, so a quiet stretch of any length is one call: a sink that
    /// keeps samples keeps this once (`count` ≥ 1).
    fn samples(&mut self, first: &Sample, count: u64, step: SimDuration);
    /// A workload of a lean run that finished, with its final record, just before the run
    /// lets go of it (a full run keeps every record in the outcome instead). In the order
    /// they finished; not called for the workloads unfinished at the end
    /// (`LeanOutcome::unfinished`).
    fn finished(&mut self, w: WorkloadId, wl: &Workload, rec: &WorkloadRecord);
}

/// Samples of one state at `count` consecutive steps from `first.at`.
#[derive(Clone)]
struct SampleRun {
    first: Sample,
    count: u64,
    step: SimDuration,
}

/// What the run recorded since the sink last saw it.
#[derive(Clone, Default)]
pub(super) struct Outbox<'w> {
    /// Whether the sink reads events (`RunSink::wants_events`).
    wants_events: bool,
    events: Vec<(WorkloadId, Spec<'w>, Event)>,
    waits: Vec<(WorkloadId, Spec<'w>, SimDuration)>,
    /// Samples wait here until an effective event after them shows they are not past the
    /// end of the run (a run without a horizon ends at its last effective event), as runs of
    /// one state sampled at `first.at`, `first.at + step`, … (`count` samples).
    samples: VecDeque<SampleRun>,
    finished: Vec<(WorkloadId, Spec<'w>, WorkloadRecord)>,
}

impl<'w> Outbox<'w> {
    pub(super) fn new(wants_events: bool) -> Self {
        Outbox {
            wants_events,
            ..Outbox::default()
        }
    }

    /// Whether events are copied here for the sink.
    pub(super) fn wants_events(&self) -> bool {
        self.wants_events
    }

    pub(super) fn push_event(&mut self, w: WorkloadId, spec: Spec<'w>, e: Event) {
        self.events.push((w, spec, e));
    }

    pub(super) fn push_wait(&mut self, w: WorkloadId, spec: Spec<'w>, waited: SimDuration) {
        self.waits.push((w, spec, waited));
    }

    /// Samples of one state at `count` steps of `step` from `first.at`.
    pub(super) fn push_samples(&mut self, first: Sample, count: u64, step: SimDuration) {
        if count > 0 {
            self.samples.push_back(SampleRun { first, count, step });
        }
    }

    pub(super) fn push_finished(&mut self, w: WorkloadId, spec: Spec<'w>, rec: WorkloadRecord) {
        self.finished.push((w, spec, rec));
    }

    /// Drops the samples after `end` (taken before idle events past the end of the run).
    pub(super) fn drop_samples_after(&mut self, end: SimTime) {
        while let Some(last) = self.samples.back_mut() {
            if last.first.at > end {
                self.samples.pop_back();
                continue;
            }
            // The samples at or before `end`: `first.at + k·step <= end`.
            let within = (end - last.first.at).millis() / last.step.millis() + 1;
            last.count = last.count.min(within as u64);
            break;
        }
    }
}

impl Simulation<'_> {
    /// Hands what the outbox holds to `sink`: the waits and events first (they happened
    /// before a workload could finish in the same step), then samples up to `samples_until`,
    /// then the finished workloads.
    pub(super) fn drain_outbox(&mut self, sink: &mut dyn RunSink, samples_until: SimTime) {
        let Some(out) = &mut self.outbox else {
            return;
        };
        for (w, spec, waited) in out.waits.drain(..) {
            sink.quota_reserved(w, &spec, waited);
        }
        for (w, spec, e) in out.events.drain(..) {
            sink.event(w, &spec, &e);
        }
        // The runs due, each handed over whole (the part of it due): a long run of samples is
        // never held expanded, and one not yet due costs nothing.
        while let Some(run) = out.samples.front_mut() {
            if run.first.at > samples_until {
                break;
            }
            let due = ((samples_until - run.first.at).millis() / run.step.millis() + 1) as u64;
            let n = due.min(run.count);
            sink.samples(&run.first, n, run.step);
            run.first.at += SimDuration::from_millis(run.step.millis() * n as i64);
            if due < run.count {
                run.count -= due;
                break;
            }
            out.samples.pop_front();
        }
        for (w, spec, rec) in out.finished.drain(..) {
            sink.finished(w, &spec, &rec);
        }
    }
}
