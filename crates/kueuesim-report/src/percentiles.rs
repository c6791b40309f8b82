//! Nearest-rank percentiles of the report's distributions (waits, time in queue, job
//! completion, slowdown), from floats or from whole milliseconds.

use kueuesim_model::SimDuration;
use serde::Serialize;

/// Nearest-rank percentiles.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
}

pub(crate) fn percentiles(mut v: Vec<f64>) -> Percentiles {
    // Unstable, without the stable sort's buffer: values equal under `total_cmp` are the
    // same bits, so no order among them shows.
    v.sort_unstable_by(f64::total_cmp);
    percentiles_of_sorted(v)
}

/// `percentiles` of durations in seconds (`SimDuration::as_secs_f64`), given as their whole
/// milliseconds: these sort as plain integers, cheaper than the floats they become, and
/// since a millisecond count's seconds never decrease as it grows (an integer's nearest
/// float, over a positive constant), the floats come out in `total_cmp` order, the one
/// sorted list of their values: the same figures, the mean summed in the same order.
pub(crate) fn percentiles_of_millis(mut ms: Vec<i64>) -> Percentiles {
    ms.sort_unstable();
    let v: Vec<f64> = ms
        .into_iter()
        .map(|m| SimDuration::from_millis(m).as_secs_f64())
        .collect();
    debug_assert!(v.is_sorted_by(|a, b| a.total_cmp(b).is_le()));
    percentiles_of_sorted(v)
}

/// Nearest-rank percentiles of `v`, sorted by `f64::total_cmp`.
fn percentiles_of_sorted(v: Vec<f64>) -> Percentiles {
    if v.is_empty() {
        return Percentiles::default();
    }
    let rank = |p: f64| {
        let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
        v[i]
    };
    Percentiles {
        count: v.len() as u64,
        mean: Some(v.iter().sum::<f64>() / v.len() as f64),
        p50: Some(rank(0.50)),
        p90: Some(rank(0.90)),
        p95: Some(rank(0.95)),
        p99: Some(rank(0.99)),
        max: v.last().copied(),
    }
}
