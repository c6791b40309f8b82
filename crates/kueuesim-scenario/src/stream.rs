//! A scenario's workloads as one arrival-ordered stream: its own objects, its
//! WorkloadGenerators and its WorkloadTraces merged lazily, one workload at a time.
//!
//! Equal arrivals keep document order across files and kinds (a generator counts at its
//! position), and trace rows come after everything else at the same time, in the order the
//! traces are declared. A loader either collects the stream into `World::workloads` or hands
//! it to the engine (`Simulation::with_stream`), which pulls each workload when the one
//! before it arrives, so a replay never holds the whole trace.

use std::cell::RefCell;
use std::rc::Rc;

use kueuesim_model::Workload;

use crate::error::{Pos, ScenarioError};
use crate::generator::GeneratedWorkloads;
use crate::trace::TraceWorkloads;

/// Rank of trace rows at equal arrivals: after every object of the scenario.
const TRACE_RANK: usize = usize::MAX / 2;

/// One source of workloads, each with its rank for ties (its document position).
type Source = Box<dyn Iterator<Item = Result<(usize, Workload), ScenarioError>>>;

/// Where a bad row or value met while the engine pulls the stream is kept for the caller:
/// the stream then ends, and the run must be reported as failed with this error.
pub type StreamError = Rc<RefCell<Option<ScenarioError>>>;

/// The merged workloads of a scenario, in arrival order.
pub struct WorkloadStream {
    sources: Vec<Source>,
    /// The next workload of each source, pulled ahead.
    heads: Vec<Option<(usize, Workload)>>,
    /// Whether the heads were pulled (`prime`).
    primed: bool,
    error: StreamError,
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
    type Item = Result<(usize, Workload), ScenarioError>;

    fn next(&mut self) -> Option<Self::Item> {
        let i = self.merged.peek_stream()?;
        let w = self.merged.next()?;
        let (order, pos, text) = &self.generators[i];
        if w.arrival.millis() > crate::generator::MAX_ARRIVAL_MS {
            return Some(Err(ScenarioError::at(
                pos.clone(),
                format!(
                    "workload {} would arrive more than {} after the start: expected a count or until that ends the arrivals within {} ({} years)",
                    w.name,
                    kueuesim_model::limits::MAX_TIME,
                    kueuesim_model::limits::MAX_TIME,
                    kueuesim_model::limits::MAX_TIME.millis() / (365 * 24 * 3_600_000)
                ),
                text,
            )));
        }
        Some(Ok((*order, w)))
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
        explicit.sort_by_key(|(order, w)| (w.arrival, *order));
        let sources: Vec<Source> = vec![
            Box::new(explicit.into_iter().map(Ok)),
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
        }
    }

    /// Adds a trace's rows, after everything added before at equal arrivals.
    pub(crate) fn add_trace(&mut self, trace: TraceWorkloads) {
        debug_assert!(!self.primed, "sources are added before the first pull");
        let rank = TRACE_RANK + self.sources.len();
        self.sources
            .push(Box::new(trace.map(move |w| w.map(|w| (rank, w)))));
        self.heads.push(None);
    }

    /// Pulls the first workload of every source, so that an error in the first row of a
    /// trace shows before a run starts.
    pub(crate) fn prime(&mut self) -> Result<(), ScenarioError> {
        if !self.primed {
            self.primed = true;
            for (head, source) in self.heads.iter_mut().zip(&mut self.sources) {
                *head = source.next().transpose()?;
            }
        }
        Ok(())
    }

    /// Where an error met later is kept (the stream then ends).
    pub fn error(&self) -> StreamError {
        self.error.clone()
    }

    /// The next workload, or the first error.
    pub fn try_next(&mut self) -> Result<Option<Workload>, ScenarioError> {
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
        self.heads[i] = self.sources[i].next().transpose()?;
        Ok(Some(w))
    }
}

impl Iterator for WorkloadStream {
    type Item = Workload;

    /// The next workload; after an error (kept in `error`), none.
    fn next(&mut self) -> Option<Workload> {
        if self.error.borrow().is_some() {
            return None;
        }
        match self.try_next() {
            Ok(w) => w,
            Err(e) => {
                *self.error.borrow_mut() = Some(e);
                None
            }
        }
    }
}
