//! A scenario's workloads as one arrival-ordered stream: its own objects, its
//! WorkloadGenerators and its WorkloadTraces merged lazily, one workload at a time.
//!
//! Equal arrivals keep document order across files and kinds (a generator counts at its
//! position), and trace rows come after everything else at the same time, in the order the
//! traces are declared. A loader either collects the stream into `World::workloads` or hands
//! it to the engine (`Simulation::with_stream`), which pulls each workload when the one
//! before it arrives, so a replay never holds the whole trace.
//!
//! Each workload is put in its `Rc` where it is made (`Shared`) and passed on as that: the
//! engine keeps it so (`WorkloadFeed::next_shared`), and a `Workload` is about 500 bytes that
//! every layer passing it by value would copy (a million times in `scale/million`).

use std::cell::RefCell;
use std::rc::Rc;

use kueuesim_model::{SimTime, Workload};

use crate::error::{Pos, ScenarioError};
use crate::generator::GeneratedWorkloads;
use crate::trace::TraceWorkloads;

/// Rank of trace rows at equal arrivals: after every object of the scenario.
const TRACE_RANK: usize = usize::MAX / 2;

/// A workload in the `Rc` the engine keeps it in.
type Shared = Rc<Workload>;

/// One source of workloads, each with its rank for ties (its document position).
trait Source: Iterator<Item = Result<(usize, Shared), ScenarioError>> {
    /// The next workload's rank and arrival, or the error `next` would give: all that
    /// counting the rest of a stream needs. By default the workload is built and dropped.
    fn next_arrival(&mut self) -> Option<Result<(usize, SimTime), ScenarioError>> {
        self.next().map(|r| r.map(|(rank, w)| (rank, w.arrival)))
    }

    /// How many workloads are still to come when that is known without pulling them and no
    /// error can be met among them; None: count them one by one.
    fn rest_without_errors(&self) -> Option<u64> {
        None
    }

    /// The latest arrival plus duration of the workloads still to come, when they are known
    /// without pulling them; None: not known (or none).
    fn known_end(&self) -> Option<SimTime> {
        None
    }

    /// `next`, made over one of `spare` (workloads the run let go of, held by nothing else)
    /// where the source can write one in place. By default `next`.
    fn next_in(
        &mut self,
        spare: &mut Vec<Shared>,
    ) -> Option<Result<(usize, Shared), ScenarioError>> {
        let _ = spare;
        self.next()
    }

    /// The first workload arriving at `t` or later, the ones before it passed over. By
    /// default each is built and dropped.
    fn first_from(&mut self, t: SimTime) -> Option<Result<(usize, Shared), ScenarioError>> {
        loop {
            match self.next()? {
                Ok((_, w)) if w.arrival < t => {}
                r => return Some(r),
            }
        }
    }
}

/// When a workload is done at the earliest: its arrival plus its duration (a workload
/// without one runs to the end of the run; its arrival, then).
pub fn earliest_end(w: &Workload) -> SimTime {
    w.arrival + w.duration.unwrap_or_default()
}

/// The scenario's own workloads, parsed already: they cannot fail, and how many are left is
/// known.
struct Explicit(std::vec::IntoIter<(usize, Workload)>);

impl Iterator for Explicit {
    type Item = Result<(usize, Shared), ScenarioError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(rank, w)| Ok((rank, Rc::new(w))))
    }
}

impl Source for Explicit {
    fn rest_without_errors(&self) -> Option<u64> {
        Some(self.0.len() as u64)
    }

    fn known_end(&self) -> Option<SimTime> {
        self.0.as_slice().iter().map(|(_, w)| earliest_end(w)).max()
    }
}

/// A trace's rows, each with the trace's rank.
struct Traced {
    trace: TraceWorkloads,
    rank: usize,
}

impl Iterator for Traced {
    type Item = Result<(usize, Shared), ScenarioError>;

    fn next(&mut self) -> Option<Self::Item> {
        let rank = self.rank;
        self.trace.next().map(|w| w.map(|w| (rank, Rc::new(w))))
    }
}

impl Source for Traced {
    /// Rows before `t` are read for their arrival alone.
    fn first_from(&mut self, t: SimTime) -> Option<Result<(usize, Shared), ScenarioError>> {
        let rank = self.rank;
        self.trace
            .first_from(t.millis())
            .map(|w| w.map(|w| (rank, Rc::new(w))))
    }
}

/// Where a bad row or value met while the engine pulls the stream is kept for the caller:
/// the stream then ends, and the run must be reported as failed with this error.
pub type StreamError = Rc<RefCell<Option<ScenarioError>>>;

/// The merged workloads of a scenario, in arrival order.
pub struct WorkloadStream {
    sources: Vec<Box<dyn Source>>,
    /// The next workload of each source, pulled ahead.
    heads: Vec<Option<(usize, Shared)>>,
    /// Whether the heads were pulled (`prime`).
    primed: bool,
    error: StreamError,
    /// With a `Simulation.spec.variation`: the varied workloads, which this stream gives in
    /// place of its sources' (`crate::variation`).
    varied: Option<Box<dyn Stage>>,
    /// `Simulation.spec.kueue.enabled: false`: every workload is given without Kueue
    /// (`without_kueue`).
    without_kueue: bool,
    /// Workloads the run let go of and gave back (`WorkloadFeed::recycle`), held by nothing
    /// else: a generator writes its next workload over one instead of allocating its `Rc`,
    /// strings and vectors afresh (`Source::next_in`). At most `SPARE_WORKLOADS`.
    spare: Vec<Shared>,
}

/// The most spare workloads a stream keeps: a run lets go of about one workload per arrival,
/// so a few serve every arrival.
const SPARE_WORKLOADS: usize = 16;

/// Workload `w` on a cluster without Kueue: no webhook suspends its job and no controller
/// makes a Workload of it, so its pods go straight to their scheduler (Kueue's
/// `QueueRef::Unmanaged`), whatever queue-name label it carries. What only Kueue reads goes
/// with it: quota held in the input (`status.admission`), a requeue or eviction recorded in
/// a Workload's status, `maximumExecutionTimeSeconds`, and a WorkloadPriorityClass that does
/// not exist (Kueue's job controller could not create the Workload; without Kueue nothing
/// needs one). The priority Kueue resolved is kept, so both layers see the same priorities
/// (docs/semantics.md, "Without Kueue"). Pods bound in the input stay on their nodes.
pub fn without_kueue(w: &mut Workload) {
    w.queue = kueuesim_model::QueueRef::Unmanaged;
    w.queue_name = None;
    w.initial_admission = None;
    w.last_eviction = None;
    w.requeue_state = None;
    w.creation_blocked = None;
    w.max_execution_time = None;
}

/// A stage that gives a stream's workloads in place of its sources' (the variation, which
/// reads streams of its own).
pub(crate) trait Stage {
    /// Reads ahead what an error at the start needs (before a run starts).
    fn prime(&mut self) -> Result<(), ScenarioError>;
    /// The next workload, in arrival order, or the first error.
    fn try_next(&mut self) -> Result<Option<Workload>, ScenarioError>;
}

impl std::fmt::Debug for WorkloadStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkloadStream")
            .field("sources", &self.sources.len())
            .finish()
    }
}

/// The generated workloads with the checks the loader makes on each.
struct Generated {
    merged: GeneratedWorkloads,
    /// Per generator: its document position and where it is written (for errors).
    generators: Vec<(usize, Pos, Rc<str>)>,
}

impl Iterator for Generated {
    type Item = Result<(usize, Shared), ScenarioError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_in(&mut Vec::new())
    }
}

impl Generated {
    /// `next`, written over a spare workload if `spare` has one.
    fn next_over(&mut self, spare: &mut Vec<Shared>) -> Option<<Self as Iterator>::Item> {
        let i = self.merged.peek_stream()?;
        let w = self.merged.next_shared_in(spare.pop())?;
        if let Err(e) = self.check(i, w.arrival, || w.name.clone()) {
            return Some(Err(e));
        }
        Some(Ok((self.generators[i].0, w)))
    }
}

impl Generated {
    /// The loader's check of a generated workload of generator `i`: its arrival within the
    /// simulated time's range. `name` is only made for the message.
    fn check(
        &self,
        i: usize,
        arrival: SimTime,
        name: impl FnOnce() -> String,
    ) -> Result<(), ScenarioError> {
        if arrival.millis() <= crate::generator::MAX_ARRIVAL_MS {
            return Ok(());
        }
        let (_, pos, text) = &self.generators[i];
        Err(ScenarioError::at(
            pos.clone(),
            format!(
                "workload {} would arrive more than {} after the start: expected a count or until that ends the arrivals within {} ({} years)",
                name(),
                kueuesim_model::limits::MAX_TIME,
                kueuesim_model::limits::MAX_TIME,
                kueuesim_model::limits::MAX_TIME.millis() / (365 * 24 * 3_600_000)
            ),
            text,
        ))
    }
}

impl Source for Generated {
    /// A generated workload is written over a spare one (`GeneratorStream::next_shared_in`).
    fn next_in(
        &mut self,
        spare: &mut Vec<Shared>,
    ) -> Option<Result<(usize, Shared), ScenarioError>> {
        self.next_over(spare)
    }

    /// Arrivals before `t` are skipped without being built (with the same check).
    fn first_from(&mut self, t: SimTime) -> Option<Result<(usize, Shared), ScenarioError>> {
        while self.merged.peek_arrival().is_some_and(|a| a < t) {
            if let Err(e) = self.next_arrival()? {
                return Some(Err(e));
            }
        }
        self.next()
    }

    /// Skips the workload without building it (no name, no pod set), with the same check.
    fn next_arrival(&mut self) -> Option<Result<(usize, SimTime), ScenarioError>> {
        let (arrival, i, index) = self.merged.skip_next()?;
        let merged = &self.merged;
        Some(
            self.check(i, arrival, || merged.name_of(i, index))
                .map(|()| (self.generators[i].0, arrival)),
        )
    }

    /// When every arrival still to come is bound to pass `check` whatever the draws (see
    /// `GeneratorStream::rest_if_bounded`), how many there are.
    fn rest_without_errors(&self) -> Option<u64> {
        self.merged
            .rest_if_bounded(crate::generator::MAX_ARRIVAL_MS)
    }
}

impl WorkloadStream {
    /// The scenario's own workloads (`explicit`, with their document positions) and its
    /// generators (each with its position, where it is written and that file's text).
    pub(crate) fn new(
        mut explicit: Vec<(usize, Workload)>,
        generated: GeneratedWorkloads,
        generators: Vec<(usize, Pos, Rc<str>)>,
    ) -> Self {
        // What already holds capacity (quota admitted in the input, pods bound to nodes)
        // arrives first at its instant, so it is booked before anything else is scheduled
        // there, whatever the objects' order (the engine books it before placing any pod).
        explicit.sort_by_key(|(order, w)| (w.arrival, !w.holds_at_start(), *order));
        let sources: Vec<Box<dyn Source>> = vec![
            Box::new(Explicit(explicit.into_iter())),
            Box::new(Generated {
                merged: generated,
                generators,
            }),
        ];
        WorkloadStream {
            heads: vec![None; sources.len()],
            sources,
            primed: false,
            error: StreamError::default(),
            varied: None,
            without_kueue: false,
            spare: Vec::new(),
        }
    }

    /// A stream of the workloads `stage` gives.
    pub(crate) fn of_stage(stage: Box<dyn Stage>) -> Self {
        let mut s =
            WorkloadStream::new(Vec::new(), GeneratedWorkloads::new(Vec::new()), Vec::new());
        s.varied = Some(stage);
        s
    }

    /// Gives every workload without Kueue from now on (`without_kueue`).
    pub(crate) fn set_without_kueue(&mut self) {
        self.without_kueue = true;
    }

    /// Adds a trace's rows, after everything added before at equal arrivals.
    pub(crate) fn add_trace(&mut self, trace: TraceWorkloads) {
        debug_assert!(!self.primed, "sources are added before the first pull");
        let rank = TRACE_RANK + self.sources.len();
        self.sources.push(Box::new(Traced { trace, rank }));
        self.heads.push(None);
    }

    /// Moves past every workload arriving before `t` (building as few as its sources allow):
    /// the next one given arrives at `t` or later.
    pub(crate) fn skip_before(&mut self, t: SimTime) -> Result<(), ScenarioError> {
        debug_assert!(self.varied.is_none(), "a varied stream is not skipped");
        self.prime()?;
        for (head, source) in self.heads.iter_mut().zip(&mut self.sources) {
            if head.as_ref().is_some_and(|(_, w)| w.arrival < t) {
                *head = source.first_from(t).transpose()?;
            }
        }
        Ok(())
    }

    /// Pulls the first workload of every source, so that an error in the first row of a
    /// trace shows before a run starts.
    pub(crate) fn prime(&mut self) -> Result<(), ScenarioError> {
        if let Some(v) = &mut self.varied {
            return v.prime();
        }
        if !self.primed {
            self.primed = true;
            for (head, source) in self.heads.iter_mut().zip(&mut self.sources) {
                *head = source.next().transpose()?;
            }
        }
        Ok(())
    }

    /// The latest `earliest_end` of the workloads known before the run: the scenario's own
    /// and the first of each generator and trace. The run lasts at least that long when they
    /// are admitted; generators and traces are not read ahead, so it may last longer.
    pub fn known_end(&self) -> Option<SimTime> {
        let heads = self.heads.iter().flatten().map(|(_, w)| earliest_end(w));
        heads
            .chain(self.sources.iter().filter_map(|s| s.known_end()))
            .max()
    }

    /// Where an error met later is kept (the stream then ends).
    pub fn error(&self) -> StreamError {
        self.error.clone()
    }

    /// The next workload, or the first error.
    pub fn try_next(&mut self) -> Result<Option<Workload>, ScenarioError> {
        // Nothing else holds the `Rc` yet, so the workload is moved out of it.
        let next = self.try_next_shared()?;
        Ok(next.map(|w| Rc::try_unwrap(w).unwrap_or_else(|w| (*w).clone())))
    }

    /// `try_next`, the workload in its `Rc` (`Shared`).
    pub fn try_next_shared(&mut self) -> Result<Option<Rc<Workload>>, ScenarioError> {
        let mut next = self.try_next_of_sources()?;
        if self.without_kueue
            && let Some(w) = &mut next
        {
            without_kueue(Rc::make_mut(w));
        }
        Ok(next)
    }

    /// The next workload of the variation or of the merged sources.
    fn try_next_of_sources(&mut self) -> Result<Option<Shared>, ScenarioError> {
        if let Some(v) = &mut self.varied {
            return Ok(v.try_next()?.map(Rc::new));
        }
        self.prime()?;
        let best = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(i, h)| h.as_ref().map(|(rank, w)| ((w.arrival, *rank, i), i)))
            .min()
            .map(|(_, i)| i);
        let Some(i) = best else { return Ok(None) };
        let (_, w) = self.heads[i].take().expect("chosen head");
        self.heads[i] = self.sources[i].next_in(&mut self.spare).transpose()?;
        Ok(Some(w))
    }
}

impl kueuesim_engine::WorkloadFeed for WorkloadStream {
    /// `next` without moving the workload out of the `Rc` it was made in.
    fn next_shared(&mut self) -> Option<Rc<Workload>> {
        if self.error.borrow().is_some() {
            return None;
        }
        match self.try_next_shared() {
            Ok(w) => w,
            Err(e) => {
                *self.error.borrow_mut() = Some(e);
                None
            }
        }
    }

    /// Kept to be written over (`spare`) when nothing else holds it and fewer than
    /// `SPARE_WORKLOADS` are kept; a stream of a variation makes its own workloads, and
    /// keeps none.
    fn recycle(&mut self, mut spent: Rc<Workload>) {
        if self.varied.is_none()
            && self.spare.len() < SPARE_WORKLOADS
            && Rc::get_mut(&mut spent).is_some()
        {
            self.spare.push(spent);
        }
    }

    /// What counting `next` until it gives None would give, and the same error kept, but
    /// generated workloads are skipped rather than built (a run cut short by `until` counts
    /// every workload after it; trace rows are still read, so a bad row past the horizon
    /// is reported as before).
    fn count_rest(&mut self) -> u64 {
        if self.error.borrow().is_some() {
            return 0;
        }
        if let Err(e) = self.prime() {
            *self.error.borrow_mut() = Some(e);
            return 0;
        }
        // Varied workloads are counted as they are made: how many copies arrive is drawn.
        if self.varied.is_some() {
            let mut n = 0;
            while self.next().is_some() {
                n += 1;
            }
            return n;
        }
        // The heads as (arrival, rank): the merge order of `try_next`.
        // No source can fail and each knows its rest (the scenario's own workloads, generators
        // whose arrivals are bounded within range): no need to merge or draw them.
        let known: Option<u64> = self.sources.iter().map(|s| s.rest_without_errors()).sum();
        if let Some(rest) = known {
            let heads = self.heads.iter_mut().filter_map(|h| h.take()).count() as u64;
            return heads + rest;
        }
        let mut heads: Vec<Option<(SimTime, usize)>> = self
            .heads
            .iter_mut()
            .map(|h| h.take().map(|(rank, w)| (w.arrival, rank)))
            .collect();
        let mut n = 0;
        loop {
            let best = heads
                .iter()
                .enumerate()
                .filter_map(|(i, h)| h.map(|(arrival, rank)| ((arrival, rank, i), i)))
                .min()
                .map(|(_, i)| i);
            let Some(i) = best else { return n };
            // As in `try_next`: the source is pulled before its head is given, and an error
            // there ends the stream without it.
            match self.sources[i].next_arrival().transpose() {
                Ok(next) => heads[i] = next.map(|(rank, arrival)| (arrival, rank)),
                Err(e) => {
                    *self.error.borrow_mut() = Some(e);
                    return n;
                }
            }
            n += 1;
        }
    }
}

impl Iterator for WorkloadStream {
    type Item = Workload;

    /// The next workload; after an error (kept in `error`), none. Nothing else holds the
    /// `Rc` yet (`next_shared`), so the workload is moved out of it.
    fn next(&mut self) -> Option<Workload> {
        use kueuesim_engine::WorkloadFeed;
        self.next_shared()
            .map(|w| Rc::try_unwrap(w).unwrap_or_else(|w| (*w).clone()))
    }
}
