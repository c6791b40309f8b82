//! Workload variation (`Simulation.spec.variation`): what a run's seed changes in its
//! workloads. Arrivals kept, jittered, or re-drawn as a Poisson process at the input's rate in
//! every hour; durations with multiplicative log-normal noise; a load factor that thins or
//! duplicates arrivals; a block bootstrap of whole days. It applies to the merged workload
//! stream (the scenario's objects, its WorkloadGenerators and its traces alike), lazily and
//! with memory bounded by the workloads of one hour or one jitter window, with random streams
//! of its own drawn from the run's seed (so it is independent of the schedulers' tie-breaks).
//!
//! Only workloads that arrive during the run vary: objects that exist at the start (a
//! snapshot's Workloads created before it, or holding quota) are kept as written.

mod resample;
mod varied;

pub(crate) use self::resample::{Resampled, StreamParts};
pub(crate) use self::varied::{Input, Varied};

use kueuesim_model::limits::{self, MAX_LOAD, MAX_SIGMA};
use kueuesim_model::{SimDuration, VariationNote, Workload};

use crate::convert::core::err_at;
use crate::error::ScenarioError;
use crate::generator::Rng;
use crate::source::ObjectText;
use crate::wire::{self, WordOr};

/// One hour and one day of simulated time, in milliseconds.
pub(crate) const HOUR_MS: i64 = 3_600_000;
pub(crate) const DAY_MS: i64 = 24 * HOUR_MS;

/// `spec.variation.arrivals`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArrivalVariation {
    /// As the input has them.
    Keep,
    /// Each moved by a uniform draw in [−d, +d] (not before the start).
    Jitter(SimDuration),
    /// Re-drawn as a Poisson process at the input's rate in every clock hour from the start:
    /// each arrival of the input in an hour becomes Poisson(load) arrivals, each at a uniform
    /// time in that hour.
    Poisson,
}

/// `spec.variation.durations`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DurationVariation {
    /// As the input has them.
    Keep,
    /// Each multiplied by exp(σZ − σ²/2), Z standard normal: mean-preserving, so the offered
    /// GPU-hours stay those of the input on average (a median-preserving factor would add
    /// exp(σ²/2) − 1 of work, 6 % at σ 0.35, and mix "more work" into "more variable work").
    LogNormal {
        /// σ of the logarithm.
        sigma: f64,
    },
}

/// A scenario's `spec.variation`, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Variation {
    /// How arrivals vary.
    pub arrivals: ArrivalVariation,
    /// How durations vary.
    pub durations: DurationVariation,
    /// Arrivals per arrival of the input (below 1 thins, above 1 duplicates).
    pub load: f64,
    /// A block bootstrap of whole days.
    pub resample_days: bool,
}

impl Default for Variation {
    fn default() -> Self {
        Variation {
            arrivals: ArrivalVariation::Keep,
            durations: DurationVariation::Keep,
            load: 1.0,
            resample_days: false,
        }
    }
}

impl Variation {
    /// Whether it changes any workload (the loader then puts the stage in the stream).
    pub fn changes_workloads(&self) -> bool {
        *self != Variation::default()
    }

    /// The part of the summary's note that the settings give: the settings as written back,
    /// and what of them differs from seed to seed. `input_days` is the number of days a
    /// resample draws from.
    pub(crate) fn note(&self, input_days: Option<u64>) -> VariationNote {
        let mut note = VariationNote {
            arrivals: match self.arrivals {
                ArrivalVariation::Keep => "keep".into(),
                ArrivalVariation::Jitter(d) => format!("jitter {d}"),
                ArrivalVariation::Poisson => "poisson".into(),
            },
            durations: match self.durations {
                DurationVariation::Keep => "keep".into(),
                DurationVariation::LogNormal { sigma } => format!("lognormal sigma {sigma}"),
            },
            load: self.load,
            resample: if self.resample_days { "days" } else { "none" }.into(),
            seeds_vary: Vec::new(),
        };
        let vary = &mut note.seeds_vary;
        if let (true, Some(n)) = (self.resample_days, input_days)
            && n > 1
        {
            vary.push(format!("days (drawn from the input's {n})"));
        }
        let fraction = self.load.fract() != 0.0;
        match self.arrivals {
            ArrivalVariation::Poisson if self.load == 1.0 => {
                vary.push("arrivals (poisson at the input's hourly rate)".into());
            }
            ArrivalVariation::Poisson => vary.push(format!(
                "arrivals (poisson at {}× the input's hourly rate)",
                self.load
            )),
            ArrivalVariation::Jitter(d) if d > SimDuration::ZERO => {
                vary.push(format!("arrivals (jitter ±{d})"));
            }
            _ => {}
        }
        if self.arrivals != ArrivalVariation::Poisson && fraction {
            vary.push(format!(
                "which arrivals are {} (load {})",
                if self.load < 1.0 {
                    "kept"
                } else {
                    "duplicated"
                },
                self.load
            ));
        }
        if let DurationVariation::LogNormal { sigma } = self.durations
            && sigma > 0.0
        {
            vary.push(format!("durations (lognormal σ {sigma})"));
        }
        note
    }
}

/// Reads `spec.variation` of the Simulation `src`: every value checked, an error at its place.
pub(crate) fn read(
    src: &ObjectText<'_>,
    v: &wire::VariationSettings,
) -> Result<Variation, ScenarioError> {
    let mut out = Variation::default();
    if let Some(a) = &v.arrivals {
        out.arrivals = match &a.value {
            WordOr::Word(w) if w.trim() == "keep" => ArrivalVariation::Keep,
            WordOr::Word(w) if w.trim() == "poisson" => ArrivalVariation::Poisson,
            WordOr::Word(w) if w.trim() == "jitter" => {
                return Err(err_at(
                    src,
                    a,
                    "spec.variation.arrivals jitter needs its width: expected {jitter: <duration>}, e.g. {jitter: 10m}",
                ));
            }
            WordOr::Word(w) => {
                return Err(err_at(
                    src,
                    a,
                    format!(
                        "spec.variation.arrivals {w:?}: expected keep, poisson or {{jitter: <duration>}}"
                    ),
                ));
            }
            WordOr::Form(f) => {
                let d = limits::parse_duration(f.jitter.value.trim()).map_err(|e| {
                    err_at(
                        src,
                        &f.jitter,
                        format!("spec.variation.arrivals.jitter: {e}"),
                    )
                })?;
                if d < SimDuration::ZERO {
                    return Err(err_at(
                        src,
                        &f.jitter,
                        format!(
                            "spec.variation.arrivals.jitter {:?} is negative: expected a duration of 0 or more, e.g. 10m",
                            f.jitter.value
                        ),
                    ));
                }
                ArrivalVariation::Jitter(d)
            }
        };
    }
    if let Some(d) = &v.durations {
        out.durations = match &d.value {
            WordOr::Word(w) if w.trim() == "keep" => DurationVariation::Keep,
            WordOr::Word(w) if w.trim() == "lognormal" => {
                return Err(err_at(
                    src,
                    d,
                    "spec.variation.durations lognormal needs its sigma: expected {lognormal: {sigma: <number>}}, e.g. {lognormal: {sigma: 0.4}}",
                ));
            }
            WordOr::Word(w) => {
                return Err(err_at(
                    src,
                    d,
                    format!(
                        "spec.variation.durations {w:?}: expected keep or {{lognormal: {{sigma: <number>}}}}"
                    ),
                ));
            }
            WordOr::Form(f) => {
                let s = &f.lognormal.sigma;
                let sigma = number(&s.value)
                    .filter(|x| (0.0..=MAX_SIGMA).contains(x))
                    .ok_or_else(|| {
                        err_at(
                            src,
                            s,
                            format!(
                                "spec.variation.durations.lognormal.sigma {:?}: expected a number from 0 to {MAX_SIGMA}, e.g. 0.4",
                                s.value
                            ),
                        )
                    })?;
                DurationVariation::LogNormal { sigma }
            }
        };
    }
    if let Some(l) = &v.load {
        out.load = number(&l.value)
            .filter(|x| *x > 0.0 && *x <= MAX_LOAD)
            .ok_or_else(|| {
                err_at(
                    src,
                    l,
                    format!(
                        "spec.variation.load {:?}: expected a number above 0 and at most {MAX_LOAD} (0.8 thins the arrivals, 1.5 adds half as many again)",
                        l.value
                    ),
                )
            })?;
    }
    if let Some(r) = &v.resample {
        out.resample_days = match r.value.trim() {
            "days" => true,
            "none" => false,
            other => {
                return Err(err_at(
                    src,
                    r,
                    format!("spec.variation.resample {other:?}: expected days or none"),
                ));
            }
        };
    }
    Ok(out)
}

/// A finite number written in decimal (`NaN` and infinities are not numbers here).
fn number(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

/// The variation's own stream seed from the run's seed: its draws never share a stream with
/// the schedulers' tie-breaks or a generator's.
pub(crate) fn stream_seed(run_seed: u64) -> u64 {
    run_seed ^ crate::generator::fnv1a("kueuesim.io/variation")
}

/// The random stream of one workload: from the variation's seed and the workload's UID, so a
/// workload's draws do not depend on how many came before it (a patch that adds or removes
/// workloads leaves the others' draws as they were: common random numbers for `compare`).
pub(crate) fn workload_rng(seed: u64, w: &Workload) -> Rng {
    Rng::new(seed ^ crate::generator::fnv1a(&w.uid).rotate_left(17))
}

/// Whether the variation keeps `w` as written: it exists at the start rather than arriving
/// during the run (created before the start, or holding quota or nodes already:
/// `Workload::holds_at_start`), or it is a replica of a serving object that scales, which its
/// object's schedule or load creates (its arrivals are the scale-ups, not a job's).
pub(crate) fn exists_at_start(w: &Workload) -> bool {
    w.holds_at_start() || w.created_at < kueuesim_model::SimTime::ZERO || w.serving.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_what_the_seeds_vary() {
        assert!(Variation::default().note(None).seeds_vary.is_empty());
        let v = Variation {
            arrivals: ArrivalVariation::Poisson,
            durations: DurationVariation::LogNormal { sigma: 0.35 },
            load: 1.0,
            resample_days: true,
        };
        let n = v.note(Some(1));
        assert_eq!(
            n.seeds_vary,
            [
                "arrivals (poisson at the input's hourly rate)",
                "durations (lognormal σ 0.35)"
            ],
            "one input day: the bootstrap draws the same day every time"
        );
        assert_eq!(n.durations, "lognormal sigma 0.35");
        assert_eq!(
            v.note(Some(7)).seeds_vary[0],
            "days (drawn from the input's 7)"
        );
        let thin = Variation {
            load: 0.8,
            ..Variation::default()
        };
        assert_eq!(
            thin.note(None).seeds_vary,
            ["which arrivals are kept (load 0.8)"]
        );
        let twice = Variation {
            load: 2.0,
            ..Variation::default()
        };
        assert!(
            twice.note(None).seeds_vary.is_empty(),
            "exact copies draw nothing"
        );
    }
}
