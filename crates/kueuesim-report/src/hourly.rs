//! The per-hour series of the summary (`clusterQueues[].gpuSecondsByHour` and
//! `gpuShareByHour`): views of the engine's run-length `HourlySeries`, read and serialized as
//! the dense arrays they stand for without being expanded, so that a summary costs the
//! changes of the GPUs held, not ClusterQueues × hours (1,000 queues over ten years would be
//! 87.6 million numbers of each).

use std::sync::Arc;

use kueuesim_engine::outcome::HourlySeries;
use serde::ser::{Serialize, SerializeSeq, Serializer};

/// A ClusterQueue's GPU-seconds in each hour of the run (`gpuSecondsByHour`).
#[derive(Clone, Debug, Default)]
pub struct GpuSecondsByHour {
    hours: usize,
    of: Arc<HourlySeries>,
}

impl GpuSecondsByHour {
    /// Hours of the run (the array's length).
    pub fn len(&self) -> usize {
        self.hours
    }

    /// Whether the run lasted no time.
    pub fn is_empty(&self) -> bool {
        self.hours == 0
    }

    /// The GPU-seconds of each hour, in order.
    pub fn iter(&self) -> impl Iterator<Item = f64> + '_ {
        self.of.values(self.hours)
    }
}

impl Serialize for GpuSecondsByHour {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.hours))?;
        for v in self.iter() {
            seq.serialize_element(&v)?;
        }
        seq.end()
    }
}

/// A ClusterQueue's share of the GPU-seconds all ClusterQueues held in each hour
/// (`gpuShareByHour`; None where none held any).
#[derive(Clone, Debug, Default)]
pub struct GpuShareByHour {
    hours: usize,
    of: Arc<HourlySeries>,
    /// Every ClusterQueue's GPU-seconds per hour, summed (shared by all of them).
    all: Arc<HourlySeries>,
}

impl GpuShareByHour {
    /// Hours of the run (the array's length).
    pub fn len(&self) -> usize {
        self.hours
    }

    /// Whether the run lasted no time.
    pub fn is_empty(&self) -> bool {
        self.hours == 0
    }

    /// The share of each hour, in order.
    pub fn iter(&self) -> impl Iterator<Item = Option<f64>> + '_ {
        self.of
            .values(self.hours)
            .zip(self.all.values(self.hours))
            .map(|(v, all)| (all > 0.0).then(|| v / all))
    }
}

impl Serialize for GpuShareByHour {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.hours))?;
        for v in self.iter() {
            seq.serialize_element(&v)?;
        }
        seq.end()
    }
}

/// Each ClusterQueue's two series over the first `hours` hours of the run.
///
/// The hourly total adds the ClusterQueues' values in ClusterQueue order, as summing a
/// dense column would; hours where a queue held nothing add nothing, which leaves a sum of
/// non-negative numbers bit for bit the same (only an all-zero hour could differ, in the sign
/// of its zero, and its share is None either way).
pub(crate) fn by_hour(
    series: &[HourlySeries],
    hours: usize,
) -> Vec<(GpuSecondsByHour, GpuShareByHour)> {
    let mut all = HourlySeries::default();
    for s in series {
        for (from, to, v) in s.runs() {
            if v != 0.0 && from < hours {
                all.add(from, to.min(hours), v);
            }
        }
    }
    let all = Arc::new(all);
    series
        .iter()
        .map(|s| {
            let of = Arc::new(s.clone());
            (
                GpuSecondsByHour {
                    hours,
                    of: of.clone(),
                },
                GpuShareByHour {
                    hours,
                    of,
                    all: all.clone(),
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_views_read_and_serialize_as_the_dense_arrays() {
        let mut a = HourlySeries::default();
        let mut b = HourlySeries::default();
        a.add_gpu_time(1_000, 2 * 3_600_000 + 1_000, 3);
        b.add_gpu_time(3_600_000 + 77, 5 * 3_600_000, 1);
        let views = by_hour(&[a.clone(), b.clone(), HourlySeries::default()], 6);
        // The dense arrays, built as the summary once built them.
        let dense: Vec<Vec<f64>> = [&a, &b, &HourlySeries::default()]
            .iter()
            .map(|s| (0..6).map(|h| s.get(h)).collect())
            .collect();
        for (c, (secs, share)) in views.iter().enumerate() {
            let want_share: Vec<Option<f64>> = (0..6)
                .map(|h| {
                    let all: f64 = dense.iter().map(|d| d[h]).sum();
                    (all > 0.0).then(|| dense[c][h] / all)
                })
                .collect();
            assert_eq!(
                serde_json::to_string(secs).unwrap(),
                serde_json::to_string(&dense[c]).unwrap()
            );
            assert_eq!(
                serde_json::to_string(share).unwrap(),
                serde_json::to_string(&want_share).unwrap()
            );
            assert_eq!(secs.len(), 6);
        }
    }
}
