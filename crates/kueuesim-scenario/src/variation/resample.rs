//! `resample: days`: a block bootstrap of whole days. Days are counted from the simulation's
//! start; the input spans n of them (up to its last arrival), and each of the n days of the
//! run is a copy of one of them drawn at random with replacement, its workloads moved to
//! that day (and renamed `-day<d>` when moved). The input is read again for each drawn day
//! (a stream opened afresh, or moved forward when the day lies ahead), so memory stays that
//! of one stream, at the cost of reading the input up to about n/2 times over.

use std::rc::Rc;

use kueuesim_model::{SimTime, Workload};

use super::varied::renamed;
use super::{DAY_MS, exists_at_start};
use crate::error::{Pos, ScenarioError};
use crate::generator::{GeneratedWorkloads, GeneratorSettings, GeneratorStream, Rng};
use crate::stream::WorkloadStream;
use crate::trace::TraceWorkloads;

/// What the merged workload stream is made of, kept to open it again from the start.
pub(crate) struct StreamParts {
    /// The scenario's own workloads with their document positions.
    explicit: Vec<(usize, Workload)>,
    /// The WorkloadGenerators, resolved.
    generators: Vec<GeneratorSettings>,
    /// Per generator: its document position and where it is written.
    places: Vec<(usize, Pos, Rc<str>)>,
    /// The traces, opened: each read again from its start (`TraceWorkloads::rewound`).
    traces: Vec<TraceWorkloads>,
}

impl StreamParts {
    pub(crate) fn new(
        explicit: Vec<(usize, Workload)>,
        generators: Vec<GeneratorSettings>,
        places: Vec<(usize, Pos, Rc<str>)>,
    ) -> Self {
        StreamParts {
            explicit,
            generators,
            places,
            traces: Vec::new(),
        }
    }

    /// Adds the traces as the loader opened them.
    pub(crate) fn with_traces(mut self, traces: Vec<TraceWorkloads>) -> Self {
        self.traces = traces;
        self
    }

    /// The merged stream, from its start.
    fn open(&mut self) -> Result<WorkloadStream, ScenarioError> {
        let streams = self
            .generators
            .iter()
            .cloned()
            .map(GeneratorStream::new)
            .collect();
        let mut s = WorkloadStream::new(
            self.explicit.clone(),
            GeneratedWorkloads::new(streams),
            self.places.clone(),
        );
        for t in &self.traces {
            s.add_trace(t.rewound()?);
        }
        Ok(s)
    }
}

/// An open stream of the input, its next workload pulled ahead, and how far it has moved:
/// a day that starts at `from` or later can be read from it, an earlier one cannot.
struct Reader {
    stream: WorkloadStream,
    next: Option<Workload>,
    from: i64,
}

impl Reader {
    fn pull(&mut self) -> Result<Option<Workload>, ScenarioError> {
        let w = self.next.take();
        if let Some(w) = &w {
            // Another workload may arrive at the same instant: a day starting then is behind.
            self.from = self.from.max(w.arrival.millis() + 1);
            self.next = self.stream.try_next()?;
        }
        Ok(w)
    }

    /// Moves to the first workload arriving at `t` ms or later.
    fn skip_before(&mut self, t: i64) -> Result<(), ScenarioError> {
        if self.next.as_ref().is_some_and(|w| w.arrival.millis() < t) {
            self.stream.skip_before(SimTime::from_millis(t))?;
            self.next = self.stream.try_next()?;
        }
        self.from = self.from.max(t);
        Ok(())
    }
}

/// The input's days, resampled, in arrival order.
pub(crate) struct Resampled {
    parts: StreamParts,
    /// Per day of the run, the input's day drawn for it.
    days: Vec<i64>,
    /// The day of the run being given.
    day: usize,
    reader: Option<Reader>,
    /// The day of the run the reader is reading.
    reading: Option<usize>,
    /// The workloads that exist at the start (kept once, as written), in arrival order, and
    /// how many were given.
    at_start: Vec<Workload>,
    given: usize,
    /// The next workload of the days, pulled ahead to merge with `at_start`.
    ahead: Option<Workload>,
    primed: bool,
}

impl Resampled {
    /// Reads the input once to count its days and keep the workloads that exist at the
    /// start, then draws the days from `seed`.
    pub(crate) fn new(mut parts: StreamParts, seed: u64) -> Result<Self, ScenarioError> {
        let mut first = parts.open()?;
        let mut last: Option<SimTime> = None;
        let mut at_start = Vec::new();
        while let Some(w) = first.try_next()? {
            if exists_at_start(&w) {
                at_start.push(w);
            } else {
                last = Some(w.arrival);
            }
        }
        let n = last.map_or(0, |t| t.millis().div_euclid(DAY_MS) + 1);
        let mut rng = Rng::new(seed ^ crate::generator::fnv1a("resample: days"));
        let days = (0..n).map(|_| rng.range(0, n - 1)).collect();
        Ok(Resampled {
            parts,
            days,
            day: 0,
            reader: None,
            reading: None,
            at_start,
            given: 0,
            ahead: None,
            primed: false,
        })
    }

    /// How many days the input spans (and the run draws).
    pub(crate) fn input_days(&self) -> u64 {
        self.days.len() as u64
    }

    /// The next workload, or the first error.
    pub(crate) fn try_next(&mut self) -> Result<Option<Workload>, ScenarioError> {
        if !self.primed {
            self.primed = true;
            self.ahead = self.next_of_days()?;
        }
        // The workloads that exist at the start go first at equal arrivals.
        let start_first = match (self.at_start.get(self.given), &self.ahead) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(s), Some(a)) => s.arrival <= a.arrival,
        };
        if start_first {
            self.given += 1;
            return Ok(Some(self.at_start[self.given - 1].clone()));
        }
        let w = self.ahead.take();
        if w.is_some() {
            self.ahead = self.next_of_days()?;
        }
        Ok(w)
    }

    /// The next workload of the resampled days.
    fn next_of_days(&mut self) -> Result<Option<Workload>, ScenarioError> {
        while let Some(&k) = self.days.get(self.day) {
            let (lo, hi) = (k * DAY_MS, (k + 1) * DAY_MS);
            // Entering a day: a reader that has moved into it or past it starts again.
            if self.reading != Some(self.day) {
                if self.reader.as_ref().is_some_and(|r| r.from > lo) {
                    self.reader = None;
                }
                self.reading = Some(self.day);
            }
            if self.reader.is_none() {
                let mut stream = self.parts.open()?;
                let next = stream.try_next()?;
                self.reader = Some(Reader {
                    stream,
                    next,
                    from: 0,
                });
            }
            let r = self.reader.as_mut().expect("opened");
            // The days before are passed over, building as few workloads as can be.
            r.skip_before(lo)?;
            if r.next.as_ref().is_some_and(|w| w.arrival.millis() < hi) {
                let mut w = r.pull()?.expect("peeked");
                if exists_at_start(&w) {
                    // Given once, at its own time (`at_start`).
                    continue;
                }
                let d = self.day as i64;
                if d != k {
                    let shift = (d - k) * DAY_MS;
                    w.arrival = SimTime::from_millis(w.arrival.millis() + shift);
                    w.created_at = SimTime::from_millis(w.created_at.millis() + shift);
                    renamed(&mut w, &format!("-day{d}"));
                }
                return Ok(Some(w));
            }
            self.day += 1;
        }
        Ok(None)
    }
}
