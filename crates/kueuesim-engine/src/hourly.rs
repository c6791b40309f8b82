//! `HourlySeries`: one number per hour of a run (a ClusterQueue's GPU-seconds in each hour),
//! held as runs of equal values, so that its memory follows the changes of the GPUs held, not
//! the length of the run (a one-GPU job running ten years is three runs, not 87,600 hours).

/// Milliseconds in an hour.
const HOUR_MS: i64 = 3_600_000;

/// One `f64` per hour from hour 0 to `len()`, as runs of bit-identical values. Reads as a
/// dense vector would (`get`, `values`); hours at or past `len()` read 0.
///
/// Every hour receives the same additions, in the same order, as a dense vector's would
/// (`add` adds one amount to each hour of a range), so every value is bit for bit the one a
/// dense vector holds: runs are split where a range starts or ends and merged again where
/// neighbours become equal.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HourlySeries {
    /// Each run's first hour and value, by hour; the first starts at hour 0, a run lasts until
    /// the next one's start and the last until `len`.
    runs: Vec<(usize, f64)>,
    len: usize,
}

impl HourlySeries {
    /// Hours held (a dense vector's length): the last hour anything was added to, plus one.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was ever added.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Runs of equal values held: what the series costs.
    pub fn run_count(&self) -> usize {
        self.runs.len()
    }

    /// The value of hour `h` (0 past the end).
    pub fn get(&self, h: usize) -> f64 {
        if h >= self.len {
            return 0.0;
        }
        let k = self.runs.partition_point(|r| r.0 <= h) - 1;
        self.runs[k].1
    }

    /// Each run as (first hour, hour after its last, value), in order.
    pub fn runs(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        self.runs.iter().enumerate().map(|(i, &(start, v))| {
            let end = self.runs.get(i + 1).map_or(self.len, |r| r.0);
            (start, end, v)
        })
    }

    /// The values of hours `0..hours`, 0 past `len()`.
    pub fn values(&self, hours: usize) -> impl Iterator<Item = f64> + '_ {
        let mut run = 0;
        (0..hours).map(move |h| {
            if h >= self.len {
                return 0.0;
            }
            while self.runs.get(run + 1).is_some_and(|r| r.0 <= h) {
                run += 1;
            }
            self.runs[run].1
        })
    }

    /// Adds `x` to every hour of `from..to` (the series grows to `to` hours, new hours 0).
    pub fn add(&mut self, from: usize, to: usize, x: f64) {
        if from >= to {
            return;
        }
        if to > self.len {
            if self
                .runs
                .last()
                .is_none_or(|r| r.1.to_bits() != 0f64.to_bits())
            {
                self.runs.push((self.len, 0.0));
            }
            self.len = to;
        }
        let i = self.split_at(from);
        let j = self.split_at(to);
        for r in &mut self.runs[i..j] {
            r.1 += x;
        }
        // Runs that became equal to a neighbour join it: the range's own runs and its two
        // edges.
        let lo = i.max(1);
        let hi = (j + 1).min(self.runs.len());
        let mut w = lo;
        for r in lo..hi {
            if self.runs[r].1.to_bits() != self.runs[w - 1].1.to_bits() {
                self.runs[w] = self.runs[r];
                w += 1;
            }
        }
        self.runs.drain(w..hi);
    }

    /// The index of the run starting at hour `h`, splitting the run holding it in two if it
    /// starts before; the number of runs when `h` is `len()` or past it.
    fn split_at(&mut self, h: usize) -> usize {
        if h >= self.len {
            return self.runs.len();
        }
        let k = self.runs.partition_point(|r| r.0 <= h) - 1;
        if self.runs[k].0 == h {
            return k;
        }
        self.runs.insert(k + 1, (h, self.runs[k].1));
        k + 1
    }

    /// Adds `gpus` GPUs held from `from_ms` to `to_ms` (milliseconds from the start; before 0
    /// counts from 0) as GPU-seconds to the hours they cover: `gpus × ms / 1000` to each hour,
    /// for the milliseconds of the span within it.
    pub fn add_gpu_time(&mut self, from_ms: i64, to_ms: i64, gpus: i64) {
        let (mut t, end) = (from_ms.max(0), to_ms);
        let amount = |ms: i64| gpus as f64 * ms as f64 / 1000.0;
        let hour = |t: i64| (t / HOUR_MS) as usize;
        // A first hour entered part way, or a span within one hour.
        if t < end && (t % HOUR_MS != 0 || end - t < HOUR_MS) {
            let next = ((t / HOUR_MS + 1) * HOUR_MS).min(end);
            self.add(hour(t), hour(t) + 1, amount(next - t));
            t = next;
        }
        // Whole hours: each the same amount.
        let whole_end = end / HOUR_MS * HOUR_MS;
        if t < whole_end {
            self.add(hour(t), hour(whole_end), amount(HOUR_MS));
            t = whole_end;
        }
        if t < end {
            self.add(hour(t), hour(t) + 1, amount(end - t));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dense vector the series stands for, built as the series' callers used to.
    fn dense_add(v: &mut Vec<f64>, from_ms: i64, to_ms: i64, gpus: i64) {
        let (mut t, end) = (from_ms.max(0), to_ms);
        while t < end {
            let hour = (t / HOUR_MS) as usize;
            let next = ((hour as i64 + 1) * HOUR_MS).min(end);
            if v.len() <= hour {
                v.resize(hour + 1, 0.0);
            }
            v[hour] += gpus as f64 * (next - t) as f64 / 1000.0;
            t = next;
        }
    }

    #[test]
    fn a_decade_of_one_job_is_a_few_runs_and_reads_as_the_dense_hours() {
        let mut s = HourlySeries::default();
        let mut d = Vec::new();
        let decade = 87_600 * HOUR_MS;
        s.add_gpu_time(1_234, decade - 777, 3);
        dense_add(&mut d, 1_234, decade - 777, 3);
        assert_eq!(s.len(), d.len());
        assert!(s.run_count() <= 3, "{:?}", s.runs);
        assert!(
            s.values(d.len() + 2)
                .zip(d.iter().chain(&[0.0, 0.0]))
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
    }

    #[test]
    fn overlapping_spans_give_the_dense_values_bit_for_bit() {
        // Amounts of thirds and sevenths, so that the order of additions shows in the bits.
        let spans: Vec<(i64, i64, i64)> = (0..400)
            .map(|i: i64| {
                let from = (i * 7_777_777) % (50 * HOUR_MS) + i % 3;
                let to = from + (i * 1_234_567) % (9 * HOUR_MS) + 1;
                (from, to, i % 5 + 1)
            })
            .collect();
        let (mut s, mut d) = (HourlySeries::default(), Vec::new());
        for &(from, to, gpus) in &spans {
            s.add_gpu_time(from, to, gpus);
            dense_add(&mut d, from, to, gpus);
        }
        assert_eq!(s.len(), d.len());
        for (h, want) in d.iter().enumerate() {
            assert_eq!(s.get(h).to_bits(), want.to_bits(), "hour {h}");
        }
        let read: Vec<f64> = s.values(d.len()).collect();
        assert_eq!(read, d);
        // No two neighbouring runs are equal, and each covers at least an hour.
        assert!(
            s.runs
                .windows(2)
                .all(|w| w[0].1.to_bits() != w[1].1.to_bits() && w[0].0 < w[1].0)
        );
        let covered: usize = s.runs().map(|(a, b, _)| b - a).sum();
        assert_eq!(covered, s.len());
    }

    #[test]
    fn a_range_added_before_the_end_splits_and_rejoins_runs() {
        let mut s = HourlySeries::default();
        s.add(0, 10, 1.0);
        s.add(3, 5, 2.0);
        assert_eq!(
            s.runs().collect::<Vec<_>>(),
            [(0, 3, 1.0), (3, 5, 3.0), (5, 10, 1.0)]
        );
        s.add(0, 3, 2.0);
        s.add(5, 12, 2.0);
        assert_eq!(s.runs().collect::<Vec<_>>(), [(0, 10, 3.0), (10, 12, 2.0)]);
        assert_eq!((s.get(11), s.get(12)), (2.0, 0.0));
    }
}
