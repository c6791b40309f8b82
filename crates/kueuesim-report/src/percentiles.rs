//! Nearest-rank percentiles of the report's distributions (waits, time in queue, job
//! completion, slowdown), from floats or from whole milliseconds.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;

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

/// `percentiles_of_sorted` of the union of sorted runs: `keys[starts[i]..starts[i + 1]]`,
/// each in increasing order, their keys ordering their values as `total_cmp` does, and keys
/// equal only where their values are the same bits (`total_key`, or whole milliseconds).
/// The runs are merged as they are read (a heap of their heads), never into a list: the
/// merged order is the one sorted order of the keys, so the ranks and the mean, summed in
/// that order, are those of sorting the whole list. A ClusterQueue's figures sort its own
/// list; the run-wide figures merge those instead of sorting every workload's again.
pub(crate) fn percentiles_of_runs<K: Copy + Ord>(
    keys: &[K],
    starts: &[usize],
    value: impl Fn(K) -> f64,
) -> Percentiles {
    debug_assert!(
        starts.first() == Some(&0)
            && starts.last() == Some(&keys.len())
            && starts.is_sorted()
            && starts.windows(2).all(|r| keys[r[0]..r[1]].is_sorted()),
        "runs cover the keys, each sorted"
    );
    if keys.is_empty() {
        return Percentiles::default();
    }
    let ranks = ranks(keys.len());
    let mut at = [0.0; 5];
    let mut next = 0;
    let mut i = 0;
    // `sum` as `percentiles_of_sorted` sums: the same fold over the same values, in order.
    let sum = merged(keys, starts)
        .map(|k| {
            let v = value(k);
            while next < ranks.len() && ranks[next] == i {
                at[next] = v;
                next += 1;
            }
            i += 1;
            v
        })
        .sum::<f64>();
    debug_assert_eq!(i, keys.len());
    let [p50, p90, p95, p99, max] = at;
    Percentiles {
        count: keys.len() as u64,
        mean: Some(sum / keys.len() as f64),
        p50: Some(p50),
        p90: Some(p90),
        p95: Some(p95),
        p99: Some(p99),
        max: Some(max),
    }
}

/// The keys of sorted runs `keys[starts[i]..starts[i + 1]]` in increasing order: a k-way
/// merge by a heap of each run's next key (ties in any order: equal keys are equal values).
fn merged<'k, K: Copy + Ord>(keys: &'k [K], starts: &[usize]) -> impl Iterator<Item = K> + 'k {
    // (head, run), and each run's next index and end.
    let mut heads = BinaryHeap::with_capacity(starts.len());
    let mut runs: Vec<(usize, usize)> = Vec::with_capacity(starts.len());
    for r in starts.windows(2) {
        if r[0] < r[1] {
            heads.push(Reverse((keys[r[0]], runs.len())));
            runs.push((r[0] + 1, r[1]));
        }
    }
    std::iter::from_fn(move || {
        let mut top = heads.peek_mut()?;
        let Reverse((k, run)) = *top;
        let (next, end) = &mut runs[run];
        if *next < *end {
            *top = Reverse((keys[*next], run));
            *next += 1;
        } else {
            PeekMut::pop(top);
        }
        Some(k)
    })
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

    /// Figures to compare bit for bit.
    fn bits(p: &Percentiles) -> [Option<u64>; 7] {
        let b = |x: Option<f64>| x.map(f64::to_bits);
        [
            Some(p.count),
            b(p.mean),
            b(p.p50),
            b(p.p90),
            b(p.p95),
            b(p.p99),
            b(p.max),
        ]
    }

    /// Sorted runs merged give the figures of the whole list sorted, bit for bit: runs
    /// empty, of one key, of repeated keys, and floats with zeros of both signs and NaN.
    #[test]
    fn merged_runs_are_the_sorted_list() {
        for (seed, runs) in [(1, 1), (2, 2), (3, 5), (4, 16), (5, 40)] {
            let lens: Vec<usize> = numbers(seed, runs)
                .into_iter()
                .enumerate()
                .map(|(i, k)| if i % 7 == 3 { 0 } else { (k % 300) as usize })
                .collect();
            let total: usize = lens.iter().sum();
            let raw = numbers(seed + 100, total);
            let ms: Vec<i64> = raw.iter().map(|&k| (k % 5_000) as i64 - 20).collect();
            let specials = [0.0, -0.0, f64::NAN, 1.5, -2.25, f64::INFINITY];
            let floats: Vec<u64> = raw
                .iter()
                .map(|&k| {
                    let x = if k % 5 == 0 {
                        specials[(k / 5 % 6) as usize]
                    } else {
                        (k % 10_000) as f64 / 7.0
                    };
                    total_key(x)
                })
                .collect();
            let mut starts = vec![0];
            for l in &lens {
                starts.push(starts.last().unwrap() + l);
            }
            fn check<K: Copy + Ord>(keys: &[K], starts: &[usize], value: fn(K) -> f64) {
                let mut runs = keys.to_vec();
                for r in starts.windows(2) {
                    runs[r[0]..r[1]].sort_unstable();
                }
                let mut sorted = keys.to_vec();
                sorted.sort_unstable();
                assert_eq!(
                    bits(&percentiles_of_runs(&runs, starts, value)),
                    bits(&percentiles_of_sorted(&sorted, value))
                );
            }
            check(&ms, &starts, millis_secs);
            check(&floats, &starts, from_total_key);
        }
        assert_eq!(
            bits(&percentiles_of_runs::<i64>(&[], &[0, 0, 0], millis_secs)),
            bits(&Percentiles::default())
        );
    }
}
