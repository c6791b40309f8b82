//! The variation of each workload as the stream gives it: how many copies arrive (the load
//! factor, or Poisson(load) for a Poisson re-draw), when each arrives and how long it runs.
//! Varied arrivals can move earlier than the input's next one, so the varied workloads wait
//! in a heap until no later input can give an earlier one: one hour of workloads for a
//! Poisson re-draw, twice the jitter for a jitter.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use kueuesim_model::limits::MAX_DURATION;
use kueuesim_model::{SimDuration, SimTime, Workload};

use super::{
    ArrivalVariation, DurationVariation, HOUR_MS, Resampled, Variation, exists_at_start,
    workload_rng,
};
use crate::error::ScenarioError;
use crate::generator::Rng;
use crate::stream::WorkloadStream;

/// Where the varied workloads come from: the merged stream, or its days resampled.
pub(crate) enum Input {
    /// The scenario's merged workloads.
    Stream(Box<WorkloadStream>),
    /// Whole days of them, drawn at random (`resample: days`).
    Days(Box<Resampled>),
}

impl Input {
    fn try_next(&mut self) -> Result<Option<Workload>, ScenarioError> {
        match self {
            Input::Stream(s) => s.try_next(),
            Input::Days(d) => d.try_next(),
        }
    }
}

/// A varied workload waiting for its turn: by arrival, then by the order it was made (so
/// equal arrivals keep the input's order).
struct Held {
    arrival: SimTime,
    made: u64,
    workload: Workload,
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        (self.arrival, self.made) == (other.arrival, other.made)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Held {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.arrival, self.made).cmp(&(other.arrival, other.made))
    }
}

/// The varied workloads, in arrival order.
pub(crate) struct Varied {
    settings: Variation,
    /// The variation's stream seed (`super::stream_seed`).
    seed: u64,
    input: Input,
    /// The input's next workload, pulled ahead; None once the input has ended.
    next: Option<Workload>,
    primed: bool,
    held: BinaryHeap<Reverse<Held>>,
    made: u64,
}

impl crate::stream::Stage for Varied {
    fn prime(&mut self) -> Result<(), ScenarioError> {
        Varied::prime(self)
    }

    fn try_next(&mut self) -> Result<Option<Workload>, ScenarioError> {
        Varied::try_next(self)
    }
}

impl Varied {
    pub(crate) fn new(settings: Variation, seed: u64, input: Input) -> Self {
        Varied {
            settings,
            seed,
            input,
            next: None,
            primed: false,
            held: BinaryHeap::new(),
            made: 0,
        }
    }

    /// Pulls the input's first workload, so an error there shows before a run starts.
    pub(crate) fn prime(&mut self) -> Result<(), ScenarioError> {
        if !self.primed {
            self.primed = true;
            self.next = self.input.try_next()?;
        }
        Ok(())
    }

    /// The earliest a varied copy of an input workload arriving at `t` (or later) can arrive.
    fn earliest_from(&self, t: SimTime) -> SimTime {
        match self.settings.arrivals {
            ArrivalVariation::Keep => t,
            ArrivalVariation::Jitter(j) => SimTime::from_millis((t.millis() - j.millis()).max(0)),
            ArrivalVariation::Poisson => {
                SimTime::from_millis(t.millis().div_euclid(HOUR_MS) * HOUR_MS)
            }
        }
    }

    /// The next varied workload, or the first error.
    pub(crate) fn try_next(&mut self) -> Result<Option<Workload>, ScenarioError> {
        self.prime()?;
        loop {
            if let Some(Reverse(first)) = self.held.peek() {
                // Safe to give once no workload still to come can arrive before it (at the
                // same instant, the one made later goes later).
                let safe = match &self.next {
                    None => true,
                    Some(n) => first.arrival <= self.earliest_from(n.arrival),
                };
                if safe {
                    let Reverse(h) = self.held.pop().expect("peeked");
                    return Ok(Some(h.workload));
                }
            }
            let Some(w) = self.next.take() else {
                return Ok(None);
            };
            self.next = self.input.try_next()?;
            self.vary(w);
        }
    }

    fn hold(&mut self, w: Workload) {
        self.made += 1;
        self.held.push(Reverse(Held {
            arrival: w.arrival,
            made: self.made,
            workload: w,
        }));
    }

    /// Puts the copies of `w` the variation makes into the heap.
    fn vary(&mut self, w: Workload) {
        if exists_at_start(&w) {
            self.hold(w);
            return;
        }
        let mut rng = workload_rng(self.seed, &w);
        let v = &self.settings;
        let copies = match v.arrivals {
            ArrivalVariation::Poisson => poisson(&mut rng, v.load),
            _ => {
                let whole = v.load.trunc() as u64;
                let frac = v.load.fract();
                whole + u64::from(frac > 0.0 && rng.unit() < frac)
            }
        };
        let (arrivals, durations) = (v.arrivals, v.durations);
        let mut input = Some(w);
        for k in 0..copies {
            // The last copy takes the input's workload itself.
            let mut c = match (k + 1 == copies, &input) {
                (false, Some(w)) => w.clone(),
                _ => input.take().expect("one workload per copy"),
            };
            if k > 0 {
                renamed(&mut c, &format!("-copy{k}"));
            }
            let arrival = match arrivals {
                ArrivalVariation::Keep => c.arrival,
                ArrivalVariation::Jitter(j) => {
                    let j = j.millis();
                    SimTime::from_millis((c.arrival.millis() + rng.range(-j, j)).max(0))
                }
                ArrivalVariation::Poisson => {
                    let hour = c.arrival.millis().div_euclid(HOUR_MS) * HOUR_MS;
                    SimTime::from_millis(hour + rng.range(0, HOUR_MS - 1))
                }
            };
            // A workload arriving during the run is created when it arrives.
            c.created_at =
                SimTime::from_millis(c.created_at.millis() + (arrival - c.arrival).millis());
            c.arrival = arrival;
            if let (DurationVariation::LogNormal { sigma }, Some(d)) = (durations, c.duration) {
                c.duration = Some(lognormal_noise(&mut rng, sigma, d));
            }
            self.hold(c);
        }
    }
}

/// A Poisson(mean) count (Knuth's product of uniforms; `mean` is at most `MAX_LOAD`, whose
/// e^−mean is still a normal double).
fn poisson(rng: &mut Rng, mean: f64) -> u64 {
    let floor = (-mean).exp();
    let mut k = 0;
    let mut p = rng.unit();
    while p > floor {
        k += 1;
        p *= rng.unit();
    }
    k
}

/// `d` times exp(σZ − σ²/2): log-normal noise of mean 1.
fn lognormal_noise(rng: &mut Rng, sigma: f64, d: SimDuration) -> SimDuration {
    let factor = (sigma * rng.normal() - sigma * sigma / 2.0).exp();
    // `as` saturates; the limit keeps it within every duration the input may hold.
    let ms = (d.millis() as f64 * factor).round() as i64;
    SimDuration::from_millis(ms.clamp(0, MAX_DURATION.millis()))
}

/// Gives a copy of a workload its own names and UIDs: `suffix` after its name (within the
/// 253 characters of a DNS-1123 subdomain, `IsDNS1123Subdomain`) and its owner's (within the
/// 63 of a DNS-1123 label, as a Job's name must be for its `job-name` label), and UIDs
/// derived from the originals and the suffix (SHA-1, written as a UUID).
pub(crate) fn renamed(w: &mut Workload, suffix: &str) {
    w.name = with_suffix(&w.name, suffix, 253);
    if let Some((_, owner)) = &mut w.owner {
        *owner = with_suffix(owner, suffix, 63);
    }
    w.uid = derived_uid(&w.uid, suffix);
    if let Some(u) = &mut w.job_uid {
        *u = derived_uid(u, suffix);
    }
}

/// `name` + `suffix` in at most `max` characters: the name cut short (and any `-` or `.` it
/// then ends with dropped, as a DNS-1123 name ends with a letter or digit) when it must be.
fn with_suffix(name: &str, suffix: &str, max: usize) -> String {
    let room = max.saturating_sub(suffix.len());
    let mut base: String = name.chars().take(room).collect();
    while base.len() > room {
        base.pop();
    }
    let cut = base.len() < name.len();
    if cut {
        while base.ends_with(|c: char| !c.is_ascii_alphanumeric()) {
            base.pop();
        }
    }
    base.push_str(suffix);
    base
}

/// A UID for a copy: the SHA-1 of the original and the suffix, as an RFC 4122 UUID (version
/// 5's layout), so copies' UIDs are distinct, well-formed and the same on every run.
fn derived_uid(uid: &str, suffix: &str) -> String {
    let mut h = sha1_smol::Sha1::new();
    h.update(uid.as_bytes());
    h.update(b"\n");
    h.update(suffix.as_bytes());
    let mut b = h.digest().bytes();
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b[..16].iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_have_valid_distinct_names() {
        assert_eq!(with_suffix("train", "-copy1", 63), "train-copy1");
        let long = format!("{}-x", "a".repeat(60));
        let cut = with_suffix(&long, "-copy12", 63);
        assert_eq!(cut.len(), 63);
        assert!(
            cut.starts_with(&"a".repeat(56)) && cut.ends_with("-copy12"),
            "{cut}"
        );
        // Cut at a `-`: the `-` goes too.
        let dash = format!("{}-{}", "a".repeat(55), "b".repeat(10));
        assert_eq!(
            with_suffix(&dash, "-copy1", 62),
            format!("{}-copy1", "a".repeat(55))
        );
        let (u1, u2) = (derived_uid("x", "-copy1"), derived_uid("x", "-copy2"));
        assert_ne!(u1, u2);
        assert_eq!(u1.len(), 36);
        assert_eq!(&u1[14..15], "5");
        assert_eq!(u1, derived_uid("x", "-copy1"));
    }

    #[test]
    fn poisson_counts_have_the_mean_and_lognormal_noise_keeps_it() {
        let mut rng = Rng::new(7);
        let n = 20_000;
        let total: u64 = (0..n).map(|_| poisson(&mut rng, 1.5)).sum();
        let mean = total as f64 / n as f64;
        assert!((mean - 1.5).abs() < 0.03, "{mean}");
        let d = SimDuration::from_secs(3600);
        let sum: i64 = (0..n)
            .map(|_| lognormal_noise(&mut rng, 0.5, d).millis())
            .sum();
        let mean = sum as f64 / n as f64 / d.millis() as f64;
        assert!((mean - 1.0).abs() < 0.02, "mean-preserving: {mean}");
        assert_eq!(lognormal_noise(&mut rng, 0.0, d), d);
    }
}
