//! `metrics.om` of `run --out DIR`: the time series as Kueue's metrics over time, in the
//! OpenMetrics text format with a timestamp on every sample, for
//! `promtool tsdb create-blocks-from openmetrics`. Metric and label names are those of
//! `metrics.prom` (Kueue's `pkg/metrics`), so a dashboard written for a real cluster reads them.
//! Each family's samples must be contiguous, so each family is written to a file of its own
//! beside the output as the samples come, and the files are joined at the end.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use kueuesim_engine::outcome::Sample;
use kueuesim_model::resources::GPU;
use kueuesim_model::{SimDuration, World};

const ROLE: &str = "standalone";

/// 2026-01-01T00:00:00Z: time 0 of a scenario that sets no start (neither the Simulation's
/// `startTime` nor a creationTimestamp, so 1970-01-01), whose samples in 1970 Prometheus'
/// retention and Grafana's time pickers handle badly.
const DEFAULT_EPOCH_MS: i64 = 1_767_225_600_000;

/// Prometheus' default lookback (`--query.lookback-delta`, 5 minutes): a query at time t
/// reads a series' latest sample at or before t if it is at most this old.
const LOOKBACK_MS: i64 = 5 * 60 * 1000;

/// Where one family's values come from in a sample.
enum Source {
    /// Per ClusterQueue: active, then inadmissible.
    PendingByCq,
    ReservingByCq,
    AdmittedByCq,
    /// Per LocalQueue: active, then inadmissible.
    PendingByLq,
    /// GPU quota held, per (ClusterQueue, flavor) with GPU quota in it.
    GpuUsage(Vec<(usize, usize)>),
    /// Constant nominal GPU quota, per (ClusterQueue, flavor) with GPU quota in it.
    GpuNominal(Vec<i64>),
    GpusInUse,
    GangsBySpine,
}

/// One metric family being written: its series' label texts and its spill file.
struct Family {
    name: &'static str,
    help: &'static str,
    source: Source,
    /// `name{labels} ` of each series, in the order `values` gives them.
    series: Vec<String>,
    /// Each series' value in the samples being written.
    values: Vec<i64>,
    /// Per series, the value and time (ms) of its latest sample written.
    written: Vec<Option<(i64, i64)>>,
    path: PathBuf,
    file: BufWriter<File>,
}

/// Writes `metrics.om` from the samples of a run, one family at a time at the end.
pub struct OpenMetricsWriter {
    families: Vec<Family>,
    /// Unix milliseconds of simulated time 0 (the run's start, or `DEFAULT_EPOCH_MS`).
    epoch_ms: i64,
    flavors: usize,
}

/// A label set as client_golang writes it: pairs sorted by name, values escaped.
fn labels(name: &str, pairs: &[(&str, &str)]) -> String {
    let mut pairs: Vec<(&str, &str)> = pairs
        .iter()
        .copied()
        .chain(std::iter::once(("replica_role", ROLE)))
        .collect();
    pairs.sort_unstable();
    let text: Vec<String> = pairs
        .iter()
        .map(|(l, v)| {
            let v = v
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n");
            format!("{l}=\"{v}\"")
        })
        .collect();
    format!("{name}{{{}}} ", text.join(","))
}

/// A family's name, help, where its values come from and its series' label texts.
type FamilySpec = (&'static str, &'static str, Source, Vec<String>);

/// The series `metrics.om` writes for `world` and the bytes of their label texts: what
/// projecting its size needs (`outdir::projected_sizes`).
pub(crate) fn series_text(world: &World) -> (usize, usize) {
    OpenMetricsWriter::family_specs(world)
        .iter()
        .flat_map(|(_, _, _, series)| series)
        .fold((0, 0), |(n, bytes), s| (n + 1, bytes + s.len()))
}

/// A series steady from one sample to the next is written once every this many samples of
/// `step` (`OpenMetricsWriter::samples`: a gap may not exceed the lookback).
pub(crate) fn steady_interval(step: SimDuration) -> i64 {
    (LOOKBACK_MS / step.millis().max(1)).max(1)
}

impl OpenMetricsWriter {
    /// The families of `world`, in the order they are written.
    fn family_specs(world: &World) -> Vec<FamilySpec> {
        let cqs = &world.cluster_queues;
        let cohort = |c: usize| {
            cqs[c]
                .cohort
                .map_or("", |co| world.cohorts[co.index()].name.as_str())
        };
        let gpu = world.resources.lookup(GPU);
        // The (ClusterQueue, flavor) pairs with GPU quota, in spec order, and their quota.
        let mut gpu_pairs = Vec::new();
        let mut nominal = Vec::new();
        for (c, cq) in cqs.iter().enumerate() {
            for fq in cq.resource_groups.iter().flat_map(|rg| &rg.flavors) {
                for rq in fq.resources.iter().filter(|rq| Some(rq.resource) == gpu) {
                    gpu_pairs.push((c, fq.flavor.index()));
                    nominal.push(rq.nominal);
                }
            }
        }
        let quota_series = |name: &str| -> Vec<String> {
            gpu_pairs
                .iter()
                .map(|&(c, f)| {
                    labels(
                        name,
                        &[
                            ("cohort", cohort(c)),
                            ("cluster_queue", cqs[c].name.as_str()),
                            ("flavor", world.flavors[f].name.as_str()),
                            ("resource", GPU),
                        ],
                    )
                })
                .collect()
        };
        let per_cq = |name: &str| -> Vec<String> {
            cqs.iter()
                .map(|cq| labels(name, &[("cluster_queue", cq.name.as_str())]))
                .collect()
        };
        let by_status = |name: &str, key: &dyn Fn(usize) -> Vec<(&'static str, String)>, n| {
            let mut out = Vec::new();
            for status in ["active", "inadmissible"] {
                for i in 0..n {
                    let key = key(i);
                    let mut pairs: Vec<(&str, &str)> =
                        key.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    pairs.push(("status", status));
                    out.push(labels(name, &pairs));
                }
            }
            out
        };
        let mut specs: Vec<FamilySpec> = vec![
            (
                "kueue_pending_workloads",
                "The number of pending workloads, per 'cluster_queue' and 'status'.",
                Source::PendingByCq,
                by_status(
                    "kueue_pending_workloads",
                    &|c| vec![("cluster_queue", cqs[c].name.clone())],
                    cqs.len(),
                ),
            ),
            (
                "kueue_reserving_active_workloads",
                "The number of Workloads that are reserving quota, per 'cluster_queue'",
                Source::ReservingByCq,
                per_cq("kueue_reserving_active_workloads"),
            ),
            (
                "kueue_admitted_active_workloads",
                "The number of admitted Workloads that are active, per 'cluster_queue'",
                Source::AdmittedByCq,
                per_cq("kueue_admitted_active_workloads"),
            ),
            (
                "kueue_local_queue_pending_workloads",
                "The number of pending workloads, per 'local_queue' and 'status'.",
                Source::PendingByLq,
                by_status(
                    "kueue_local_queue_pending_workloads",
                    &|l| {
                        let lq = &world.local_queues[l];
                        vec![
                            ("name", lq.name.clone()),
                            ("namespace", lq.namespace.clone()),
                        ]
                    },
                    world.local_queues.len(),
                ),
            ),
            (
                "kueue_cluster_queue_resource_usage",
                "Reports the cluster_queue's total admitted resource usage within all the flavors",
                Source::GpuUsage(gpu_pairs.clone()),
                quota_series("kueue_cluster_queue_resource_usage"),
            ),
            (
                "kueue_cluster_queue_nominal_quota",
                "Reports the cluster_queue's resource nominal quota within all the flavors",
                Source::GpuNominal(nominal),
                quota_series("kueue_cluster_queue_nominal_quota"),
            ),
            (
                "kueuesim_gpus_in_use",
                "GPUs bound to pods (kueuesim; no Kueue metric counts them).",
                Source::GpusInUse,
                vec![labels("kueuesim_gpus_in_use", &[])],
            ),
        ];
        let (ti, spines) = kueuesim_engine::outcome::spine_domains(world);
        if let Some(t) = kueuesim_engine::placement::topologies(world)
            .nth(ti)
            .filter(|_| !spines.is_empty())
        {
            let name = "kueuesim_running_gangs";
            let mut series: Vec<String> = spines
                .iter()
                .map(|&d| labels(name, &[("domain", t.domain(d).name.as_str())]))
                .collect();
            series.push(labels(name, &[("domain", "(several)")]));
            specs.push((
                name,
                "Workloads with pods running all under one top-level topology domain, or over several (kueuesim).",
                Source::GangsBySpine,
                series,
            ));
        }
        specs
    }

    /// Opens one spill file per family in `dir` (hidden names, removed by `finish`).
    pub fn create(dir: &Path, world: &World) -> std::io::Result<Self> {
        let specs = Self::family_specs(world);
        let mut families = Vec::with_capacity(specs.len());
        for (i, (name, help, source, series)) in specs.into_iter().enumerate() {
            let path = dir.join(format!(".metrics.om.{i}.part"));
            let file =
                BufWriter::with_capacity(crate::outdir::BUFFER, crate::outdir::create_part(&path)?);
            families.push(Family {
                name,
                help,
                source,
                written: vec![None; series.len()],
                values: Vec::with_capacity(series.len()),
                series,
                path,
                file,
            });
        }
        Ok(OpenMetricsWriter {
            families,
            epoch_ms: match world.config.start_unix_ms {
                0 => DEFAULT_EPOCH_MS,
                start => start,
            },
            flavors: world.flavors.len(),
        })
    }

    /// Appends `count` samples of one state (`first`, then the same at `first.at + step`, …)
    /// to every family: a series' value when it changed, or when leaving it out could leave a
    /// gap longer than Prometheus' lookback (`LOOKBACK_MS`) before the next sample. A query at
    /// any time then reads the value the series had then, as if every sample were written,
    /// and a long trace sampled every minute writes a fraction of the lines (most series are
    /// steady most of the time).
    pub fn samples(
        &mut self,
        first: &Sample,
        count: u64,
        step: SimDuration,
    ) -> std::io::Result<()> {
        // The values are the state's, read once for all its samples.
        for f in &mut self.families {
            let v = &mut f.values;
            v.clear();
            let s = first;
            match &f.source {
                Source::PendingByCq => {
                    v.extend(s.pending_active.iter().map(|&n| i64::from(n)));
                    v.extend(s.pending_inadmissible.iter().map(|&n| i64::from(n)));
                }
                Source::ReservingByCq => v.extend(s.reserving_by_cq.iter().map(|&n| i64::from(n))),
                Source::AdmittedByCq => v.extend(s.admitted_by_cq.iter().map(|&n| i64::from(n))),
                Source::PendingByLq => {
                    v.extend(
                        s.pending_by_lq
                            .iter()
                            .zip(&s.pending_inadmissible_by_lq)
                            .map(|(&all, &inadmissible)| i64::from(all - inadmissible)),
                    );
                    v.extend(s.pending_inadmissible_by_lq.iter().map(|&n| i64::from(n)));
                }
                Source::GpuUsage(pairs) => v.extend(
                    pairs
                        .iter()
                        .map(|&(c, fl)| s.gpu_quota_by_cq_flavor[c * self.flavors + fl]),
                ),
                Source::GpuNominal(q) => v.extend_from_slice(q),
                Source::GpusInUse => v.push(s.gpus_in_use),
                Source::GangsBySpine => v.extend(s.gangs_by_spine.iter().map(|&n| i64::from(n))),
            }
        }
        let step = step.millis();
        for k in 0..count as i64 {
            let ms = self.epoch_ms + first.at.millis() + k * step;
            // Seconds, with the milliseconds only when there are some (OpenMetrics timestamps
            // are seconds; promtool reads either).
            let ts = if ms.rem_euclid(1000) == 0 {
                format!("{}", ms.div_euclid(1000))
            } else {
                format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
            };
            for f in &mut self.families {
                let series = f.series.iter().zip(&f.values).zip(&mut f.written);
                for ((series, &value), last) in series {
                    let due = match *last {
                        None => true,
                        Some((was, at)) => was != value || ms + step - at > LOOKBACK_MS,
                    };
                    if due {
                        writeln!(f.file, "{series}{value} {ts}")?;
                        *last = Some((value, ms));
                    }
                }
            }
        }
        Ok(())
    }

    /// Removes the spill files (a run that failed writes no metrics.om).
    pub fn discard(self) {
        for f in self.families {
            drop(f.file);
            let _ = std::fs::remove_file(&f.path);
        }
    }

    /// Writes the file into `out`: every family's `# TYPE` and `# HELP`, then its samples,
    /// then `# EOF`; removes the spill files, also when writing fails.
    pub fn finish(self, out: &mut impl Write) -> std::io::Result<()> {
        let mut result = Ok(());
        for f in self.families {
            if result.is_ok() {
                result = Self::copy_family(f.name, f.help, f.file, &f.path, out);
            }
            let _ = std::fs::remove_file(&f.path);
        }
        result.and_then(|()| out.write_all(b"# EOF\n"))
    }

    fn copy_family(
        name: &str,
        help: &str,
        file: BufWriter<File>,
        path: &Path,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        drop(file.into_inner().map_err(|e| e.into_error())?);
        writeln!(out, "# TYPE {name} gauge")?;
        writeln!(out, "# HELP {name} {help}")?;
        std::io::copy(&mut File::open(path)?, out)?;
        Ok(())
    }
}
