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

pub(crate) fn percentiles(v: Vec<f64>) -> Percentiles {
    // Sorted as the integers `f64::total_cmp` compares (`total_key`), which keeps no order
    // among equal values: those are the same bits, so none shows.
    let mut keys: Vec<u64> = v.into_iter().map(total_key).collect();
    keys.sort_unstable();
    percentiles_of_sorted(&keys, from_total_key)
}

/// `percentiles` of durations in seconds (`SimDuration::as_secs_f64`), given as their whole
/// milliseconds: these sort as plain integers, cheaper than the floats they become, and
/// since a millisecond count's seconds never decrease as it grows (an integer's nearest
/// float, over a positive constant), the floats come out in `total_cmp` order, the one
/// sorted list of their values: the same figures, the mean summed in the same order.
pub(crate) fn percentiles_of_millis(mut ms: Vec<i64>) -> Percentiles {
    ms.sort_unstable();
    debug_assert!(ms.is_sorted_by(|&a, &b| millis_secs(a).total_cmp(&millis_secs(b)).is_le()));
    percentiles_of_sorted(&ms, millis_secs)
}

/// The seconds of `m` milliseconds (`SimDuration::as_secs_f64`): the value of a millisecond
/// key.
pub(crate) fn millis_secs(m: i64) -> f64 {
    SimDuration::from_millis(m).as_secs_f64()
}

/// The nearest ranks (indexes into the sorted list) of p50, p90, p95 and p99 and the
/// maximum among `n` values, in increasing order.
fn ranks(n: usize) -> [usize; 5] {
    let at = |p: f64| ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
    [at(0.50), at(0.90), at(0.95), at(0.99), n - 1]
}

/// Nearest-rank percentiles of the values `value` gives of `keys`, which are in the
/// values' `f64::total_cmp` order: the mean is summed in that order, as a sorted list of the
/// values would be (no list of them is made: a million workloads' durations are most of a
/// report's time).
pub(crate) fn percentiles_of_sorted<K: Copy>(keys: &[K], value: impl Fn(K) -> f64) -> Percentiles {
    if keys.is_empty() {
        return Percentiles::default();
    }
    let [p50, p90, p95, p99, max] = ranks(keys.len()).map(|i| value(keys[i]));
    Percentiles {
        count: keys.len() as u64,
        mean: Some(keys.iter().map(|&k| value(k)).sum::<f64>() / keys.len() as f64),
        p50: Some(p50),
        p90: Some(p90),
        p95: Some(p95),
        p99: Some(p99),
        max: Some(max),
    }
}

/// `x` as an unsigned integer that orders as `f64::total_cmp` orders the floats (the same
/// transform `total_cmp` makes, then the sign bit flipped so that the order is unsigned).
pub(crate) fn total_key(x: f64) -> u64 {
    let bits = x.to_bits() as i64;
    signed_key(bits ^ (((bits >> 63) as u64) >> 1) as i64)
}

/// The float whose `total_key` is `k`.
pub(crate) fn from_total_key(k: u64) -> f64 {
    let bits = from_signed_key(k);
    f64::from_bits((bits ^ (((bits >> 63) as u64) >> 1) as i64) as u64)
}

/// `m` as an unsigned integer of the same order: the sign bit flipped.
fn signed_key(m: i64) -> u64 {
    (m as u64) ^ (1 << 63)
}

/// The integer whose `signed_key` is `k`.
fn from_signed_key(k: u64) -> i64 {
    (k ^ (1 << 63)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (splitmix64) for the lists below.
    fn numbers(seed: u64, n: usize) -> Vec<u64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = s;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^ (z >> 31)
            })
            .collect()
    }

    /// The keys order as `total_cmp` and give back the same bits, signed integers as `Ord`.
    #[test]
    fn keys_order_and_round_trip() {
        let floats = [
            f64::NEG_INFINITY,
            -1e300,
            -1.5,
            -0.0,
            0.0,
            1e-300,
            0.25,
            3.0,
            f64::INFINITY,
            f64::NAN,
        ];
        for a in floats {
            assert_eq!(from_total_key(total_key(a)).to_bits(), a.to_bits());
            for b in floats {
                assert_eq!(total_key(a).cmp(&total_key(b)), a.total_cmp(&b));
            }
        }
        let ints = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for a in ints {
            assert_eq!(from_signed_key(signed_key(a)), a);
            for b in ints {
                assert_eq!(signed_key(a).cmp(&signed_key(b)), a.cmp(&b));
            }
        }
    }

    /// The figures are those of the sorted list of values, the mean summed in sorted order.
    #[test]
    fn figures_are_those_of_the_sorted_values() {
        for n in [1, 3, 100, 10_000] {
            let ms: Vec<i64> = numbers(n as u64, n)
                .into_iter()
                .map(|k| (k % 50_000_000) as i64)
                .collect();
            let mut sorted: Vec<f64> = ms
                .iter()
                .map(|&m| SimDuration::from_millis(m).as_secs_f64())
                .collect();
            sorted.sort_by(f64::total_cmp);
            let rank = |p: f64| sorted[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
            let mean = sorted.iter().sum::<f64>() / n as f64;
            for p in [percentiles_of_millis(ms.clone()), {
                let floats = ms
                    .iter()
                    .map(|&m| SimDuration::from_millis(m).as_secs_f64())
                    .collect();
                percentiles(floats)
            }] {
                assert_eq!(p.count, n as u64);
                assert_eq!(p.mean.map(f64::to_bits), Some(mean.to_bits()));
                assert_eq!(p.p50, Some(rank(0.5)));
                assert_eq!(p.p90, Some(rank(0.9)));
                assert_eq!(p.p95, Some(rank(0.95)));
                assert_eq!(p.p99, Some(rank(0.99)));
                assert_eq!(p.max, sorted.last().copied());
            }
        }
    }
}
