//! The run's options: `Simulation`'s builders (a streamed feed, a lean or last-events-only
//! record, the time series, hooks, an event budget, and the test-only audits).

use std::cell::RefCell;
use std::rc::Rc;

use kueuesim_model::{SimDuration, WorkloadId};

use crate::hooks::Hooks;
use crate::outcome::{Tally, TimeSeries};

use super::arrival::Feed;
use super::{Ev, Simulation, WorkloadFeed, series};

impl<'w> Simulation<'w> {
    /// Relabels the UIDs of the live workloads on every arrival instead of only when a gap
    /// is used up (for tests: every kept label must follow, or the order goes wrong).
    pub fn with_uid_respacing(mut self) -> Self {
        self.kueue.respace_uids_always = true;
        self
    }

    /// Turns on auditing of decisions (for tests): `check_invariants` then also reports a
    /// StrictFIFO ClusterQueue admitting a workload while one ahead of it waits in its heap.
    pub fn with_audit(mut self) -> Self {
        self.rec.audit = Some(Vec::new());
        self
    }

    /// Keeps only what a summary reads: a finished workload is folded into the run's `Tally`
    /// (its state, its wait, its ClusterQueue's admissions, evictions and GPU time) and let go
    /// of, and the outcome reports the tally and the unfinished workloads whole
    /// (`Outcome::lean`). Decisions are unchanged (nothing recorded feeds back into them).
    pub fn lean(mut self) -> Self {
        self.rec.tally = Some(Tally::new(self.world));
        self
    }

    /// For a run whose only reader is the summary text: each workload keeps only its newest
    /// event of each source (what the summary's "Waiting at the end" and the folding of
    /// repeats read), not its whole event history. Under overload a pending workload's
    /// "N more needed" message changes with every release, and its history grew without
    /// bound. Decisions are unchanged (nothing recorded feeds back into them).
    pub fn last_events_only(mut self) -> Self {
        self.rec.last_events_only = true;
        self
    }

    /// Feeds the run from `stream` instead of `world.workloads` (which must be empty): each
    /// workload is pulled when the one before it arrives, in arrival order, and its id is its
    /// position in the stream. The run is lean (`Simulation::lean`): memory then follows the
    /// live workloads, whatever the length of the stream.
    pub fn with_stream(mut self, stream: impl WorkloadFeed + 'w) -> Self {
        assert!(
            self.world.workloads.is_empty(),
            "a streamed run takes every workload from the stream"
        );
        let mut rest: Box<dyn WorkloadFeed + 'w> = Box::new(stream);
        let next = rest.next_shared();
        if let Some(n) = &next {
            self.events
                .push_presorted(n.arrival, Ev::Arrive(WorkloadId::from_index(0)));
        }
        self.feed = Feed::Stream { next, rest };
        self.lean()
    }

    /// Samples the state every `step` from time 0 to the end of the run
    /// (`Outcome::time_series`).
    pub fn with_time_series(mut self, step: SimDuration) -> Self {
        assert!(step > SimDuration::ZERO, "a time-series step is positive");
        self.rec.series = Some(TimeSeries {
            step,
            samples: Vec::new(),
        });
        self.rec.spines = Some(series::Spines::new(self.world));
        self
    }

    /// Replaces built-in policies by the caller's (`hooks::Hooks`): the queue order within a
    /// priority level and kube-scheduler's node scores.
    pub fn with_hooks(mut self, hooks: Rc<RefCell<dyn Hooks + 'w>>) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Stops the run once it has processed `max` events (`Stopped::EventBudget`): a bound on
    /// the work of any input, the same at every run of it.
    pub fn with_event_budget(mut self, max: u64) -> Self {
        self.event_budget = Some(max);
        self
    }
}
