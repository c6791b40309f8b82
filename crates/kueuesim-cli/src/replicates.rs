//! Replicate runs (`run --seeds 1..10`): the same scenario under several seeds, run in
//! parallel on the machine's cores, every figure of the summary reported as mean and 95 %
//! confidence interval across the seeds (`-o json`: every seed's document too).

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use kueuesim_engine::Simulation;
use kueuesim_model::{SimDuration, SimTime};
use kueuesim_report::figures::{Stats, flatten, human};
use kueuesim_report::outdir::{OutDir, OutFile};
use kueuesim_report::output::{SimulationResult, SummaryDoc, result_with};
use kueuesim_scenario::{LoadOptions, ScenarioError, SourceFile, load};

use crate::Failure;

/// The seeds of `--seeds`: `A..B` (both included), a list `1,5,9`, or both (`1..3,7`).
pub(crate) fn parse_seeds(s: &str) -> Result<Vec<u64>, String> {
    let mut seeds = Vec::new();
    for part in s.split(',').map(str::trim) {
        let int = |t: &str| {
            t.trim().parse::<u64>().map_err(|_| {
                format!("--seeds {s:?}: {t:?} is not a seed: expected A..B, a list 1,2,3, or both")
            })
        };
        match part.split_once("..") {
            Some((a, b)) => {
                let (a, b) = (int(a)?, int(b.trim_start_matches('='))?);
                if b < a {
                    return Err(format!("--seeds {s:?}: {a}..{b} is empty: expected A ≤ B"));
                }
                if b - a >= 100_000 {
                    return Err(format!("--seeds {s:?}: more than 100000 seeds"));
                }
                seeds.extend(a..=b);
            }
            None => seeds.push(int(part)?),
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(d) = seeds.iter().find(|x| !seen.insert(**x)) {
        return Err(format!("--seeds {s:?}: seed {d} is given twice"));
    }
    Ok(seeds)
}

/// The number of runs to make at once: `--jobs`, else the machine's cores.
pub(crate) fn jobs(requested: Option<usize>) -> usize {
    requested
        .filter(|&j| j > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Runs `f(0..n)` on `jobs` threads; the results come back in index order whatever order the
/// runs finish in (so the output never depends on `--jobs`). `done(k)` is called after each
/// run with the number finished so far.
pub(crate) fn in_parallel<T: Send>(
    n: usize,
    jobs: usize,
    f: impl Fn(usize) -> T + Sync,
    done: impl Fn(usize) + Sync,
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = f(i);
                    // Counted and reported under the lock, so reports come in count order.
                    let mut slots = slots.lock().expect("no run panics holding the lock");
                    slots[i] = Some(r);
                    done(finished.fetch_add(1, Ordering::Relaxed) + 1);
                }
            });
        }
    });
    slots
        .into_inner()
        .expect("no run panics holding the lock")
        .into_iter()
        .map(|r| r.expect("every index ran"))
        .collect()
}

/// One run of a scenario in this process: load (with `opts`), simulate to `until`, and the
/// result document (with every workload when `full`, else the summary alone from a lean,
/// streamed run). With `out`, the run's files are written into its directory as `run --seed
/// N --out DIR --write …` writes them, streamed as the run goes. The loader's warnings come
/// back beside it.
pub(crate) fn simulate(
    files: &[SourceFile],
    opts: LoadOptions,
    until: Option<SimDuration>,
    full: bool,
    out: Option<(&OutSpec<'_>, &Path)>,
) -> Result<(SimulationResult, Vec<String>), Failure> {
    simulate_staged(files, opts, until, full, out, Failure::from).map_err(|e| e.failure)
}

/// Why a run failed, and whether it was its load (the input: the same for every seed) or
/// the run itself (a streamed trace row met on the way).
pub(crate) struct RunFailure {
    pub(crate) failure: Failure,
    pub(crate) at_load: bool,
}

/// `simulate`, with the loader's errors turned into failures by `map_err` (a sweep points
/// them back into its own file), telling a load failure from a failure while running.
pub(crate) fn simulate_staged(
    files: &[SourceFile],
    opts: LoadOptions,
    until: Option<SimDuration>,
    full: bool,
    out: Option<(&OutSpec<'_>, &Path)>,
    map_err: impl Fn(ScenarioError) -> Failure,
) -> Result<(SimulationResult, Vec<String>), RunFailure> {
    let running = |failure| RunFailure {
        failure,
        at_load: false,
    };
    let io = |e: kueuesim_report::outdir::OutError| {
        running(Failure {
            code: 1,
            message: e.to_string(),
        })
    };
    let mut loaded = load(
        files,
        LoadOptions {
            stream: !full,
            ..opts
        },
    )
    .map_err(|e| RunFailure {
        failure: map_err(e),
        at_load: true,
    })?;
    if let Some(d) = until {
        loaded.world.config.until = Some(SimTime::ZERO + d);
    }
    let stream = loaded.stream.take();
    let mut warnings = std::mem::take(&mut loaded.warnings);
    let world = &loaded.world;
    let horizon = crate::Horizon::before_run(world, stream.as_ref());
    let mut sim = Simulation::new(world);
    let mut stream_error = None;
    if let Some(stream) = stream {
        stream_error = Some(stream.error());
        sim = sim.with_stream(stream);
    }
    let mut sink = None;
    if let Some((spec, dir)) = out {
        let (step, sample) = spec.step.resolve(spec.sample, world, spec.files, horizon);
        if spec.files.iter().any(|f| f.needs_samples()) {
            sim = sim.with_time_series(step);
        }
        if let Some(h) = horizon {
            warnings.extend(crate::out_size_warning(world, spec.files, step, &sample, h));
        }
        sink = Some(OutDir::create(dir, world, spec.files).map_err(io)?);
    }
    let outcome = match &mut sink {
        Some(sink) => sim.run_with_sink(|_, _| ControlFlow::Continue(()), sink),
        None => sim.run(),
    };
    if let Some(e) = stream_error.and_then(|e| e.borrow_mut().take()) {
        return Err(running(map_err(e)));
    }
    // As `run --out`: every workload unfinished at the end is written too.
    let mut doc = result_with(world, &outcome, full || sink.is_some());
    if let Some(sink) = sink {
        sink.finish(&mut doc, &outcome).map_err(io)?;
        if !full {
            doc.workloads = Vec::new();
        }
    }
    // A run that stopped before its end (a livelock at one instant) has partial figures: it
    // is a failed run, not a sample of the variant.
    if let Some(stop) = &doc.summary.stopped_early {
        return Err(running(Failure {
            code: 3,
            message: format!("stopped early: {}", stop.message),
        }));
    }
    Ok((doc, warnings))
}

/// What `--out` writes with `--seeds`: the files of each seed's directory and the time
/// series' step.
pub(crate) struct OutSpec<'a> {
    pub(crate) files: &'a BTreeSet<OutFile>,
    /// `--sample`, resolved per run (`SampleStep::resolve`: `auto` follows each run's length).
    pub(crate) step: crate::SampleStep,
    /// `--sample` as written, for the warning on large files (`out_size_warning`).
    pub(crate) sample: &'a str,
}

/// One figure across the replicates.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FigureStats {
    pub(crate) figure: String,
    #[serde(flatten)]
    pub(crate) stats: Stats,
}

/// `-o json` of `run --seeds`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReplicateResults<'a, R: Serialize> {
    api_version: &'static str,
    kind: &'static str,
    seeds: &'a [u64],
    /// Per figure of the summary: runs with a value, mean, sample sd, 95 % CI half-width
    /// (Student's t), min, max.
    aggregate: &'a [FigureStats],
    /// Every seed's document: its whole result (`-o json`), or its summary alone
    /// (`--out`'s summary.json).
    runs: &'a [R],
}

/// Every summary figure across `runs` (the seed itself left out), in the first run's order.
pub(crate) fn aggregate(runs: &[SimulationResult]) -> Vec<FigureStats> {
    let mut per_run: Vec<Vec<(String, Option<f64>)>> = runs
        .iter()
        .map(|r| flatten(&serde_json::to_value(&r.summary).expect("the summary serializes")))
        .collect();
    // A constraint that bound a queue in some seeds is a share of 0 in the others.
    kueuesim_report::figures::fill_bound_by_zeros(&mut per_run);
    // Figures in first-seen order over all runs (a ClusterQueue absent from one run's
    // summary still counts in the others).
    let mut names: Vec<String> = Vec::new();
    let mut known = std::collections::BTreeSet::new();
    for run in &per_run {
        for (n, _) in run {
            if n != "seed" && known.insert(n.clone()) {
                names.push(n.clone());
            }
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let values = per_run
                .iter()
                .map(|run| run.iter().find(|(n, _)| *n == name).and_then(|(_, v)| *v));
            Stats::of(values).map(|stats| FigureStats {
                figure: name,
                stats,
            })
        })
        .collect()
}

/// What the seeds of `runs` vary (the first run's words: every seed loads the same
/// scenario), and the warning when that is not a day's variation.
pub(crate) fn seeds_vary(runs: &[SimulationResult]) -> (String, Option<String>) {
    let Some(first) = runs.first() else {
        return (String::new(), None);
    };
    let v = &first.summary.variation;
    let prints: Vec<&str> = runs
        .iter()
        .map(|r| r.summary.variation.workload_fingerprint.as_str())
        .collect();
    (
        v.seeds_vary_text(),
        kueuesim_report::output::seeds_warning(&v.seeds_vary, &prints),
    )
}

/// The aggregate as a table for people; `vary` says what the seeds vary.
pub(crate) fn aggregate_text(
    label: &str,
    seeds: &[u64],
    vary: &str,
    figures: &[FigureStats],
) -> String {
    let mut out = format!(
        "{} runs of {label}, seeds {}: mean ± 95 % confidence interval (Student's t), min – max\nSeeds vary: {vary}\n\n",
        seeds.len(),
        seeds_text(seeds)
    );
    let width = figures
        .iter()
        .map(|f| f.figure.len())
        .max()
        .unwrap_or(6)
        .max(6);
    out.push_str(&format!(
        "  {:width$}  {:>12}  {:>12}  {:>12}  {:>12}\n",
        "FIGURE", "MEAN", "±95% CI", "MIN", "MAX"
    ));
    for f in figures {
        let s = &f.stats;
        let ci = s
            .ci95
            .map_or("-".to_string(), |h| format!("± {}", human(&f.figure, h)));
        out.push_str(&format!(
            "  {:width$}  {:>12}  {:>12}  {:>12}  {:>12}\n",
            f.figure,
            human(&f.figure, s.mean),
            ci,
            human(&f.figure, s.min),
            human(&f.figure, s.max)
        ));
    }
    out
}

/// `1..10` for consecutive seeds, else the list.
fn seeds_text(seeds: &[u64]) -> String {
    let consecutive = seeds.windows(2).all(|w| w[1] == w[0] + 1);
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if consecutive && seeds.len() > 2 => format!("{a}..{b}"),
        _ => seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// The `-o json` document of `run --seeds`.
pub(crate) fn to_json(
    seeds: &[u64],
    aggregate: &[FigureStats],
    runs: &[SimulationResult],
) -> String {
    replicate_json(seeds, aggregate, runs)
}

/// `summary.json` of `run --seeds --out`: the `ReplicateResults` document with each seed's
/// summary alone (a `SimulationSummary`) as its run, which `kueuesim compare` reads as it
/// reads `-o json`'s.
pub(crate) fn summaries_json(
    seeds: &[u64],
    aggregate: &[FigureStats],
    runs: &[SimulationResult],
) -> String {
    let summaries: Vec<SummaryDoc<'_>> = runs.iter().map(SummaryDoc::of).collect();
    replicate_json(seeds, aggregate, &summaries)
}

fn replicate_json<R: Serialize>(seeds: &[u64], aggregate: &[FigureStats], runs: &[R]) -> String {
    let doc = ReplicateResults {
        api_version: "kueuesim.io/v1alpha1",
        kind: "ReplicateResults",
        seeds,
        aggregate,
        runs,
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("serializes");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_parse_ranges_and_lists() {
        assert_eq!(parse_seeds("1..4").unwrap(), [1, 2, 3, 4]);
        assert_eq!(parse_seeds("1..=2, 7").unwrap(), [1, 2, 7]);
        assert_eq!(parse_seeds("5").unwrap(), [5]);
        assert!(parse_seeds("3..1").unwrap_err().contains("empty"));
        assert!(parse_seeds("1,1").unwrap_err().contains("twice"));
        assert!(parse_seeds("a..b").unwrap_err().contains("not a seed"));
        assert_eq!(seeds_text(&[1, 2, 3]), "1..3");
        assert_eq!(seeds_text(&[1, 5]), "1,5");
    }

    #[test]
    fn parallel_results_keep_index_order() {
        let out = in_parallel(
            20,
            4,
            |i| {
                // Later indexes finish first.
                std::thread::sleep(std::time::Duration::from_millis((20 - i as u64) * 2));
                i * 10
            },
            |_| {},
        );
        assert_eq!(out, (0..20).map(|i| i * 10).collect::<Vec<_>>());
    }
}
