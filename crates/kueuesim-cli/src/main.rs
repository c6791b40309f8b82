//! The `kueuesim` command: runs scenarios and validates them. Exit codes: 0 success, 1 a
//! simulation or I/O failure, 2 invalid input or usage.

/// mimalloc instead of the system allocator: a simulation creates and frees several small
/// objects per workload and per scheduling attempt, and glibc's malloc spent about a third of
/// a Kueue-shaped run in its own bookkeeping (docs/performance.md has the comparison).
#[global_allocator]
static GLOBAL: kueuesim_alloc::Allocator = kueuesim_alloc::Allocator;

use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// `eprintln!` for every warning and error the command prints: the line goes through
/// `eprint_visible`, so no name, message or file name can send the terminal an escape
/// sequence. (Progress lines, which write their own `\r` and `\x1b[K`, print directly.)
macro_rules! eprintln_visible {
    ($($arg:tt)*) => {
        $crate::eprint_visible(format_args!($($arg)*))
    };
}

mod compare;
mod kubectl;
mod policy_diff;
mod replicates;
mod sweep;
mod warnings;

use kueuesim_engine::Simulation;
use kueuesim_model::limits;
use kueuesim_model::{SimDuration, SimTime, World};
use kueuesim_report::outdir::{OutDir, OutFile, parse_write};
use kueuesim_report::output::{SimulationResult, result_with, summary_text, to_yaml, write_json};
use kueuesim_scenario::embedded::{default_scenario, read_paths};
use kueuesim_scenario::{LoadOptions, Loaded, ScenarioError, SourceFile, load};

#[derive(Parser)]
#[command(
    name = "kueuesim",
    version,
    about = "Deterministic simulator of Kueue, KAI Scheduler and Volcano on a GPU cluster"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How the warnings about the input are shown (the loader's, the capacity checks'):
    /// `all` each on its own line, `summary` one line saying how many, `none` not at all.
    #[arg(
        long,
        value_enum,
        value_name = "WHICH",
        default_value = "all",
        global = true
    )]
    warnings: warnings::Shown,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Summary,
    Json,
    Yaml,
}

/// What-if overrides of the scenario's objects, for every command that loads one.
#[derive(clap::Args, Clone, Default)]
struct OverrideArgs {
    /// A file (or directory) of partial objects merged into the scenario's objects with
    /// Kubernetes strategic-merge rules (by apiVersion group, kind, name, namespace); an
    /// object the scenario lacks is added, `$patch: delete` removes one. Repeatable, in order.
    #[arg(long = "patch", value_name = "FILE")]
    patches: Vec<PathBuf>,
    /// One field of one object: KIND/[NAMESPACE/]NAME:PATH=VALUE, e.g.
    /// clusterqueue/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota=192
    /// (PATH: fields, [N] or [key=value]; VALUE: YAML, null removes; a * in NAME or NAMESPACE
    /// matches any run of characters: every matching object). Repeatable; after --patch.
    #[arg(long = "set", value_name = "KIND/NAME:PATH=VALUE")]
    sets: Vec<String>,
}

impl OverrideArgs {
    /// The load options' patch files and `--set` arguments.
    fn apply_to(&self, opts: LoadOptions) -> Result<LoadOptions, Failure> {
        let patches = if self.patches.is_empty() {
            Vec::new()
        } else {
            read_paths(&self.patches)?
        };
        Ok(LoadOptions {
            patches,
            sets: self.sets.clone(),
            ..opts
        })
    }
}

/// The options of `kueuesim run`.
#[derive(clap::Args)]
struct RunArgs {
    /// YAML files or directories (their *.yaml / *.yml files, in lexical order).
    paths: Vec<PathBuf>,
    /// Seed of the random streams (overrides Simulation spec.seed).
    #[arg(long, conflicts_with = "seeds")]
    seed: Option<u64>,
    /// Replicates: run once per seed (A..B both included, or a list 1,5,9) and report every
    /// summary figure as mean and 95 % confidence interval across them (-o json: every
    /// seed's document and the aggregate; --out DIR: each seed's files in DIR/seed-N and
    /// DIR/summary.json, every seed's summary and the aggregate).
    #[arg(long, value_name = "SEEDS")]
    seeds: Option<String>,
    /// How many replicate runs at once (default: the machine's cores).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Simulate events at times ≤ this offset from the start (Go duration, e.g. 24h, or with
    /// days, e.g. 1d12h), then report the state at that time.
    // Hyphen values reach the parser, which says a negative offset is not one.
    #[arg(long, allow_hyphen_values = true)]
    until: Option<String>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value = "summary")]
    output: Format,
    /// Objects of kinds the simulator does not read, and likely typos (unknown Kueue fields,
    /// label and annotation keys; docs/scenario-format.md), are an error instead of a warning.
    #[arg(long)]
    strict: bool,
    /// Do not show progress on a terminal.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Show progress even when stderr is not a terminal (a log, CI): a line every few
    /// seconds with simulated time, share of the horizon, events/s and ETA (with --seeds, a
    /// line per run done).
    #[arg(long, conflicts_with = "quiet")]
    progress: bool,
    /// Where trace paths are looked for after the scenario file's directory (before
    /// $KUEUESIM_TRACE_ROOT and the default ../shared/traces beside the checkout).
    #[arg(long, value_name = "DIR")]
    trace_root: Option<PathBuf>,
    /// Also write files into this directory (created if missing): result.json, workloads.csv,
    /// queues.csv, events.jsonl, timeseries.csv, metrics.prom, metrics.om, report.html and
    /// summary.json, streamed as the run goes (docs/output.md).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Which files --out writes: comma-separated words, each a file (result, workloads,
    /// queues, events, timeseries, metrics, om, report, summary, or its file name) or a group
    /// (all, csv, json, prometheus). `summary,queues` is enough for `kueuesim compare` and
    /// stays small on a long run, where result.json holds every workload.
    #[arg(long, value_name = "FILES", default_value = "all", requires = "out")]
    write: String,
    /// The step of the time series (timeseries.csv, metrics.om, report.html's plots): a Go
    /// duration, or with days (10m, 1h, 1d); `auto` (the default) takes 1m unless the run's
    /// known length would make timeseries.csv and metrics.om together over 50 MB or a
    /// million samples, then the shortest of 5m, 10m, 15m, 30m, 1h, 2h, 6h, 12h, 1d, 7d
    /// that keeps them under (docs/output.md).
    #[arg(long, value_name = "STEP", default_value = "auto", requires = "out")]
    sample: String,
    /// Stop after this many events and report the run up to then (exit code 3): a bound
    /// on the work of any input, the same at every run.
    #[arg(long, value_name = "N", conflicts_with = "seeds")]
    max_events: Option<u64>,
    /// Stop after this much wall time (10s, 5m, 1h) and report the run up to then (exit
    /// code 3); checked every 4,096 events, so where it stops varies from run to run.
    #[arg(long, value_name = "DURATION", conflicts_with = "seeds")]
    max_wall: Option<String>,
    #[command(flatten)]
    overrides: OverrideArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scenario (files or directories of Kubernetes YAML); the embedded platform
    /// scenario when no path is given.
    Run(RunArgs),
    /// Show objects at a time of the simulation as `kubectl get` shows them: localqueue,
    /// clusterqueue, cohort, resourceflavor, workload, podgroup, pod, node or event
    /// (`get KIND[,KIND] [NAME...] [PATHS...]`, `get KIND/NAME`; docs/kubectl.md).
    Get {
        /// The kind (kubectl's names and short names; `KIND,KIND` or `KIND/NAME`).
        kind: String,
        #[command(flatten)]
        view: kubectl::ViewArgs,
        #[command(flatten)]
        get: kubectl::GetArgs,
    },
    /// Show objects at a time of the simulation as `kubectl describe` does: workload, pod,
    /// node, clusterqueue, localqueue, podgroup, cohort or resourceflavor
    /// (`describe KIND [NAME...] [PATHS...]`; no name: every object of the kind).
    Describe {
        /// The kind (kubectl's names and short names, or `KIND/NAME`).
        kind: String,
        #[command(flatten)]
        view: kubectl::ViewArgs,
    },
    /// Run every variant × seed of a Sweep file (kind: Sweep) in parallel into sweep.csv and
    /// sweep-summary.csv, or search for the smallest parameter value meeting a target.
    Sweep(sweep::SweepArgs),
    /// Compare two results figure by figure: `run --out` directories, `-o json` documents
    /// (one run or `run --seeds`), or VARIANT@SWEEP-DIR.
    Compare(compare::CompareArgs),
    /// Check that scenario files load, without simulating.
    Validate {
        /// YAML files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Objects of kinds the simulator does not read, and likely typos (unknown Kueue fields,
        /// label and annotation keys; docs/scenario-format.md), are an error instead of a warning.
        #[arg(long)]
        strict: bool,
        /// Where trace paths are looked for after the scenario file's directory.
        #[arg(long, value_name = "DIR")]
        trace_root: Option<PathBuf>,
        #[command(flatten)]
        overrides: OverrideArgs,
    },
}

/// An error and the exit code it maps to.
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl From<ScenarioError> for Failure {
    fn from(e: ScenarioError) -> Self {
        let code = match e {
            ScenarioError::Io { .. } => 1,
            _ => 2,
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

fn load_sources(paths: &[PathBuf], opts: LoadOptions) -> Result<Loaded, Failure> {
    let files: Vec<SourceFile> = if paths.is_empty() {
        default_scenario()
    } else {
        read_paths(paths)?
    };
    let loaded = load(&files, opts)?;
    // A policy named by the scenario is bound by the Python module's caller; the command
    // line has only the built-in ones.
    let names = &loaded.world.config.policies;
    for (field, p) in [
        ("queueOrder", &names.queue_order),
        ("nodeScore", &names.node_score),
    ] {
        if let Some(p) = p {
            return Err(Failure {
                code: 2,
                message: format!(
                    "{}: spec.policies.{field}: {:?} is a policy the caller supplies \
                     (kueuesim.run(..., policies={{{:?}: ...}}) in Python, docs/python.md); \
                     the command line runs the built-in ones only",
                    p.at, p.name, p.name
                ),
            });
        }
    }
    for w in &loaded.warnings {
        warnings::warn(w);
    }
    Ok(loaded)
}

fn run(args: &RunArgs) -> Result<(), Failure> {
    let RunArgs {
        paths,
        seed,
        until,
        output,
        strict,
        quiet,
        out,
        trace_root,
        overrides,
        seeds,
        jobs,
        progress,
        write,
        sample,
        max_events,
        max_wall,
    } = args;
    let (seed, output, strict, quiet) = (*seed, *output, *strict, *quiet);
    // Before the run, not after it: an --out that cannot be a directory is a usage error.
    if let Some(dir) = out
        && dir.exists()
        && !dir.is_dir()
    {
        return Err(Failure {
            code: 2,
            message: format!("--out {}: is a file: expected a directory", dir.display()),
        });
    }
    let usage = |message: String| Failure { code: 2, message };
    let files = parse_write(write).map_err(|e| usage(format!("--write: {e}")))?;
    let step = parse_sample(sample).map_err(usage)?;
    if let Some(seeds) = seeds {
        let out = out.as_deref().map(|dir| {
            (
                dir,
                replicates::OutSpec {
                    files: &files,
                    step,
                    sample,
                },
            )
        });
        return run_replicates(args, seeds, *jobs, out);
    }
    let max_wall_budget = match max_wall {
        Some(w) => {
            let d = parse_offset(w).map_err(|e| usage(format!("--max-wall: {e}")))?;
            if d <= SimDuration::ZERO {
                return Err(usage(format!(
                    "--max-wall: {w:?}: expected a positive duration (30s, 10m)"
                )));
            }
            Some(std::time::Duration::from_millis(d.millis() as u64))
        }
        None => None,
    };
    if *max_events == Some(0) {
        return Err(usage(
            "--max-events: 0: expected a positive number of events".into(),
        ));
    }
    // Only -o json|yaml prints every workload's record: any other run is lean and streamed
    // (workloads are read as they arrive and let go of as they finish), so a
    // million-workload replay holds only the live ones; with --out, each finished workload
    // is written out first (`OutDir`).
    let summary_only = matches!(output, Format::Summary);
    let mut loaded = load_sources(
        paths,
        overrides.apply_to(LoadOptions {
            strict,
            trace_root: trace_root.clone(),
            seed,
            stream: summary_only,
            ..LoadOptions::default()
        })?,
    )?;
    if let Some(u) = until {
        let d = parse_offset(u).map_err(|e| Failure {
            code: 2,
            message: format!("--until: {e}"),
        })?;
        loaded.world.config.until = Some(SimTime::ZERO + d);
    }
    let stream = loaded.stream.take();
    let world = &loaded.world;
    // The size of --out's files over the horizon known before the run, warned before they
    // are written; a run whose end was not known (a trace without `until`) is warned at its
    // end, before the files written last.
    let mut size_warned = false;
    // Only a run with --out samples (resolving `auto` projects the files' sizes, which
    // takes a moment with thousands of queues).
    let (step, sample) = match out {
        Some(_) => {
            let horizon = Horizon::before_run(world, stream.as_ref());
            let (step, sample) = step.resolve(sample, world, &files, horizon);
            if let Some(h) = horizon
                && let Some(w) = out_size_warning(world, &files, step, &sample, h)
            {
                warnings::warn(&w);
                size_warned = true;
            }
            (step, sample)
        }
        None => (SimDuration::ZERO, String::new()),
    };
    // On a terminal one line rewritten in place; with --progress elsewhere (a log), a line
    // every few seconds.
    let terminal = std::io::stderr().is_terminal();
    let show_progress = !quiet && (terminal || *progress);
    let mut last_line = 0.0f64;
    let mut sim = Simulation::new(world);
    let mut stream_error = None;
    if let Some(stream) = stream {
        stream_error = Some(stream.error());
        sim = sim.with_stream(stream);
    }
    if out.is_some() && files.iter().any(|f| f.needs_samples()) {
        sim = sim.with_time_series(step);
    }
    if let Some(n) = max_events {
        sim = sim.with_event_budget(*n);
    }
    if summary_only && out.is_none() {
        // The summary reads a waiting workload's newest event, never its history.
        sim = sim.last_events_only();
    }
    let mut sink = match out {
        Some(dir) => Some(OutDir::create(dir, world, &files).map_err(|e| Failure {
            code: 1,
            message: e.to_string(),
        })?),
        None => None,
    };
    // A progress line on a terminal once the run has taken a second: simulated time, events
    // per second of wall time and, with a horizon, the share done and an estimate left.
    #[allow(clippy::disallowed_methods)]
    let started = std::time::Instant::now();
    let horizon = world.config.until;
    let mut shown = false;
    let mut out_of_time = false;
    let show = |now: SimTime, events: u64| {
        if max_wall_budget.is_some_and(|max| started.elapsed() >= max) {
            out_of_time = true;
            return ControlFlow::Break(());
        }
        if !show_progress {
            return ControlFlow::Continue(());
        }
        let wall = started.elapsed().as_secs_f64();
        if wall < 1.0 {
            return ControlFlow::Continue(());
        }
        if !terminal {
            if wall - last_line < 5.0 {
                return ControlFlow::Continue(());
            }
            last_line = wall;
        }
        shown = terminal;
        let rate = events as f64 / wall;
        let mut line = format!(
            "\rsimulated {} · {events} events · {rate:.0} events/s",
            SimDuration::from_millis(now.millis())
        );
        if let Some(h) = horizon.filter(|h| h.millis() > 0) {
            let done = (now.millis() as f64 / h.millis() as f64).clamp(0.0, 1.0);
            let width = 24;
            let filled = (done * f64::from(width)).round() as usize;
            let eta = if done > 0.0 {
                wall * (1.0 - done) / done
            } else {
                0.0
            };
            line.push_str(&format!(
                " [{}{}] {:.0}% · ETA {:.0}s",
                "#".repeat(filled),
                "-".repeat(width as usize - filled),
                done * 100.0,
                eta
            ));
        }
        if terminal {
            eprint!("{line}\x1b[K");
        } else {
            eprintln!("{}", line.trim_start_matches('\r'));
        }
        ControlFlow::Continue(())
    };
    let outcome = match &mut sink {
        Some(sink) => sim.run_with_sink(show, sink),
        None => sim.run_with_progress(show),
    };
    if shown {
        eprint!("\r\x1b[K");
    }
    // A bad row met during the run ended the stream: the result is not reported.
    if let Some(e) = stream_error.and_then(|e| e.borrow_mut().take()) {
        return Err(e.into());
    }
    // With --out every workload unfinished at the end is written too.
    let mut doc = result_with(world, &outcome, !summary_only || sink.is_some());
    if out_of_time && let Some(stop) = &mut doc.summary.stopped_early {
        stop.reason = "MaxWallTime";
        stop.message = format!(
            "the run used its --max-wall budget of {} at simulated {}",
            max_wall.as_deref().unwrap_or_default(),
            SimDuration::from_millis(outcome.stats.end.millis())
        );
    }
    warn_checks(std::slice::from_ref(&doc));
    if sink.is_some()
        && !size_warned
        && let Some(w) = out_size_warning(
            world,
            &files,
            step,
            &sample,
            Horizon::Ended(outcome.stats.end),
        )
    {
        warnings::warn(&w);
    }
    if let Some(sink) = sink {
        sink.finish(&mut doc, &outcome).map_err(|e| Failure {
            code: 1,
            message: e.to_string(),
        })?;
    }
    match output {
        Format::Summary => print_out(&summary_text(world, &doc))?,
        // Written as it is serialized: the hourly series of many queues over years are
        // gigabytes of text.
        Format::Json => print_streamed(|out| write_json(&doc, out))?,
        Format::Yaml => print_data(&to_yaml(&doc))?,
    }
    // A budget stopped the run: the output above is the run up to then, and the exit code
    // (3) tells a script it is not the whole run.
    match &doc.summary.stopped_early {
        Some(stop) => Err(Failure {
            code: 3,
            message: format!(
                "stopped early: {}; the output describes the run up to then",
                stop.message
            ),
        }),
        None => Ok(()),
    }
}

/// How the end of a run is known when the size of its `--out` files is projected.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Horizon {
    /// `until`: the run ends there.
    Until(SimTime),
    /// The latest arrival plus duration of the workloads known before the run
    /// (`WorkloadStream::known_end`): the run lasts at least that long.
    AtLeast(SimTime),
    /// The run is over and ended here.
    Ended(SimTime),
}

impl Horizon {
    /// Before the run: `until`, else the latest end of the workloads known (the world's, or
    /// the stream's), if any is after the start.
    pub(crate) fn before_run(
        world: &World,
        stream: Option<&kueuesim_scenario::stream::WorkloadStream>,
    ) -> Option<Horizon> {
        if let Some(until) = world.config.until {
            return Some(Horizon::Until(until));
        }
        let known = match stream {
            Some(s) => s.known_end(),
            None => world
                .workloads
                .iter()
                .map(kueuesim_scenario::stream::earliest_end)
                .max(),
        };
        known.filter(|t| *t > SimTime::ZERO).map(Horizon::AtLeast)
    }

    fn end(self) -> SimTime {
        match self {
            Horizon::Until(t) | Horizon::AtLeast(t) | Horizon::Ended(t) => t,
        }
    }
}

/// `--out` files past this many bytes are worth a warning before they are written.
const LARGE_OUT: u64 = 1_000_000_000;

/// `--sample auto` keeps the projected timeseries.csv and metrics.om under this many bytes
/// together (`outdir::projected_sizes`, a lower bound: the files come out up to a few times
/// larger when the run outlasts what is known of it before, still well under `LARGE_OUT`).
const AUTO_SERIES_BYTES: u64 = 50_000_000;

/// `--sample`: a step, or `auto` (resolved once the run's length is known, `resolve`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SampleStep {
    Auto,
    Every(SimDuration),
}

/// Reads `--sample`: `auto`, or a positive duration.
fn parse_sample(sample: &str) -> Result<SampleStep, String> {
    if sample.trim() == "auto" {
        return Ok(SampleStep::Auto);
    }
    let step = parse_offset(sample).map_err(|e| format!("--sample: {e}"))?;
    if step <= SimDuration::ZERO {
        return Err(format!(
            "--sample: {sample:?}: expected auto or a positive duration (10m, 1h)"
        ));
    }
    Ok(SampleStep::Every(step))
}

impl SampleStep {
    /// The step of a run of `world` writing `files` over `horizon` (None: not known before
    /// the run), and how a warning names it: as `written`, or `auto (15m)`.
    pub(crate) fn resolve(
        self,
        written: &str,
        world: &World,
        files: &std::collections::BTreeSet<OutFile>,
        horizon: Option<Horizon>,
    ) -> (SimDuration, String) {
        match self {
            SampleStep::Every(step) => (step, written.to_string()),
            SampleStep::Auto => {
                let (step, name) = auto_step(world, files, horizon);
                (step, format!("auto ({name})"))
            }
        }
    }
}

/// The step `--sample auto` takes: the shortest of `ROUND_STEPS` (1m first) whose time series
/// over `horizon` takes at most `MANY_SAMPLES` samples and whose timeseries.csv and
/// metrics.om are projected under `AUTO_SERIES_BYTES`; 1m when the end is not known before
/// the run (it is then warned of at the end, as any step).
fn auto_step(
    world: &World,
    files: &std::collections::BTreeSet<OutFile>,
    horizon: Option<Horizon>,
) -> (SimDuration, &'static str) {
    let (first_ms, first) = ROUND_STEPS[0];
    let Some(end) = horizon.map(Horizon::end) else {
        return (SimDuration::from_millis(first_ms), first);
    };
    let series = |step: SimDuration| -> u64 {
        kueuesim_report::outdir::projected_sizes(world, files, step, end)
            .iter()
            .filter(|(f, _)| matches!(f, OutFile::Timeseries | OutFile::Om))
            .map(|(_, b)| b)
            .sum()
    };
    let fits = |ms: i64| {
        let samples = end.millis().max(0) as u64 / (ms as u64) + 1;
        samples <= MANY_SAMPLES && series(SimDuration::from_millis(ms)) <= AUTO_SERIES_BYTES
    };
    let &(ms, name) = ROUND_STEPS
        .iter()
        .find(|&&(ms, _)| fits(ms))
        .unwrap_or(&ROUND_STEPS[ROUND_STEPS.len() - 1]);
    (SimDuration::from_millis(ms), name)
}

/// Time series of more than this many samples of every series are worth a warning.
const MANY_SAMPLES: u64 = 1_000_000;

/// Round `--sample` steps a warning may suggest, shortest first.
const ROUND_STEPS: [(i64, &str); 11] = [
    (60_000, "1m"),
    (300_000, "5m"),
    (600_000, "10m"),
    (900_000, "15m"),
    (1_800_000, "30m"),
    (3_600_000, "1h"),
    (7_200_000, "2h"),
    (21_600_000, "6h"),
    (43_200_000, "12h"),
    (86_400_000, "1d"),
    (604_800_000, "7d"),
];

/// A warning when the `--out` files over `horizon` would take more than a gigabyte
/// (`outdir::projected_sizes`), naming a `--sample` step and a `--write` list that keep them
/// small; else when the time series would take more than a million samples of every series
/// (timeseries.csv, metrics.om), naming a step that keeps it under.
pub(crate) fn out_size_warning(
    world: &World,
    files: &std::collections::BTreeSet<OutFile>,
    step: SimDuration,
    sample: &str,
    horizon: Horizon,
) -> Option<String> {
    let end = horizon.end();
    let span = SimDuration::from_millis(end.millis());
    let span = match horizon {
        Horizon::Until(_) => format!("a horizon of {span}"),
        Horizon::AtLeast(_) => {
            format!("at least {span} (the input's latest arrival plus its duration)")
        }
        Horizon::Ended(_) => format!("this run's {span}"),
    };
    // The bytes of timeseries.csv and metrics.om, the files a longer step shortens.
    let is_series = |f: &OutFile| matches!(f, OutFile::Timeseries | OutFile::Om);
    let series_at = |step: SimDuration| -> u64 {
        kueuesim_report::outdir::projected_sizes(world, files, step, end)
            .iter()
            .filter(|(f, _)| is_series(f))
            .map(|(_, b)| b)
            .sum()
    };
    let series_files = files.iter().any(is_series);
    let mut sizes = kueuesim_report::outdir::projected_sizes(world, files, step, end);
    let total: u64 = sizes.iter().map(|(_, b)| b).sum();
    if total > LARGE_OUT {
        sizes.sort_by_key(|&(f, b)| (std::cmp::Reverse(b), f));
        let list: Vec<String> = sizes
            .iter()
            .map(|(f, b)| format!("{} {}", f.file_name(), human_bytes(*b)))
            .collect();
        let mut advice = Vec::new();
        // The shortest round step that brings the time series' files under the limit.
        if series_at(step) > LARGE_OUT / 10
            && let Some((name, t)) = ROUND_STEPS
                .iter()
                .filter(|(ms, _)| *ms > step.millis())
                .map(|&(ms, name)| (name, series_at(SimDuration::from_millis(ms))))
                .find(|&(_, t)| t <= LARGE_OUT)
        {
            let names: Vec<&str> = sizes
                .iter()
                .filter(|(f, _)| is_series(f))
                .map(|(f, _)| f.file_name())
                .collect();
            advice.push(format!(
                "--sample {name} brings {} to about {}",
                names.join(" and "),
                human_bytes(t)
            ));
        }
        // The files of more than a tenth of the limit left out; the others kept.
        let big: Vec<OutFile> = sizes
            .iter()
            .filter(|(_, b)| *b > LARGE_OUT / 10)
            .map(|(f, _)| *f)
            .collect();
        let keep: Vec<&str> = files
            .iter()
            .filter(|f| !big.contains(f))
            .map(|f| f.word())
            .collect();
        if !keep.is_empty() {
            let left: Vec<&str> = big.iter().map(|f| f.file_name()).collect();
            advice.push(format!(
                "--write {} leaves out {}",
                keep.join(","),
                left.join(", ")
            ));
        }
        let advice = if advice.is_empty() {
            String::new()
        } else {
            format!("; {}", advice.join("; or "))
        };
        return Some(format!(
            "--out over {span} at --sample {sample} takes about {} ({}){advice}",
            human_bytes(total),
            list.join(", ")
        ));
    }
    let samples = end.millis().max(0) as u64 / step.millis().max(1) as u64 + 1;
    if series_files && samples > MANY_SAMPLES {
        let fit = end.millis().max(0) as u64 / MANY_SAMPLES + 1;
        let longer = ROUND_STEPS
            .iter()
            .find(|(ms, _)| *ms as u64 >= fit)
            .map_or_else(
                || SimDuration::from_millis(fit as i64).to_string(),
                |(_, s)| s.to_string(),
            );
        return Some(format!(
            "--sample {sample} over {span} takes {samples} samples of every series \
             (timeseries.csv, metrics.om); --sample {longer} or longer keeps them under {MANY_SAMPLES}"
        ));
    }
    None
}

/// Bytes in decimal units, to two or three figures ("340 MB", "1.2 GB").
fn human_bytes(b: u64) -> String {
    let b = b as f64;
    match b {
        _ if b >= 1e12 => format!("{:.1} TB", b / 1e12),
        _ if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        _ if b >= 1e6 => format!("{:.0} MB", b / 1e6),
        _ => format!("{:.0} kB", b / 1e3),
    }
}

/// `run --seeds`: the scenario once per seed, in parallel, and the figures across them.
fn run_replicates(
    args: &RunArgs,
    seeds: &str,
    jobs: Option<usize>,
    out: Option<(&Path, replicates::OutSpec<'_>)>,
) -> Result<(), Failure> {
    let usage = |message: String| Failure { code: 2, message };
    let seeds = replicates::parse_seeds(seeds).map_err(usage)?;
    // Before any run: a format the replicates cannot print, a seed's directory that is a file.
    // -o json prints every workload's record (full runs); the summary table needs lean ones.
    let full = match args.output {
        Format::Summary => false,
        Format::Json => true,
        Format::Yaml => {
            return Err(usage(
                "-o yaml with --seeds: expected -o summary or -o json".to_string(),
            ));
        }
    };
    if let Some((dir, _)) = &out {
        // Not followed: a symlink there would send the seed's files where it points.
        if let Some((path, m)) = seeds.iter().find_map(|s| {
            let p = dir.join(format!("seed-{s}"));
            std::fs::symlink_metadata(&p)
                .ok()
                .filter(|m| !m.is_dir())
                .map(|m| (p, m))
        }) {
            let what = if m.is_symlink() {
                "a symlink"
            } else {
                "a file"
            };
            return Err(usage(format!(
                "--out: {} is {what}: expected a directory for the seed's files",
                path.display()
            )));
        }
        // A run does not clear its directory, but the replicate document must not outlive a
        // failed re-run (compare would read it).
        let summary = dir.join(OutFile::Summary.file_name());
        if summary.is_file() {
            std::fs::remove_file(&summary).map_err(|e| Failure {
                code: 1,
                message: format!("{}: {e}", summary.display()),
            })?;
        }
    }
    let until = args
        .until
        .as_deref()
        .map(parse_offset)
        .transpose()
        .map_err(|e| usage(format!("--until: {e}")))?;
    let files: Vec<SourceFile> = if args.paths.is_empty() {
        default_scenario()
    } else {
        read_paths(&args.paths)?
    };
    let base = args.overrides.apply_to(LoadOptions {
        strict: args.strict,
        trace_root: args.trace_root.clone(),
        ..LoadOptions::default()
    })?;
    // On a terminal one line rewritten in place; with --progress elsewhere (a log), a line
    // per run done.
    let terminal = std::io::stderr().is_terminal();
    let show = !args.quiet && (terminal || args.progress);
    let n = seeds.len();
    let runs = replicates::in_parallel(
        n,
        replicates::jobs(jobs),
        |i| {
            let opts = LoadOptions {
                seed: Some(seeds[i]),
                ..base.clone()
            };
            // Each seed's files in a directory of its own, as `run --seed N --out` writes.
            let dir = out
                .as_ref()
                .map(|(dir, _)| dir.join(format!("seed-{}", seeds[i])));
            let out = out
                .as_ref()
                .zip(dir.as_deref())
                .map(|((_, spec), d)| (spec, d));
            replicates::simulate(&files, opts, until, full, out)
        },
        |done| {
            if show && !terminal {
                eprintln!("{done}/{n} runs done");
            } else if show {
                eprint!("\r{done}/{n} runs done\x1b[K");
            }
        },
    );
    if show && terminal {
        eprint!("\r\x1b[K");
    }
    let mut docs = Vec::with_capacity(n);
    for (i, r) in runs.into_iter().enumerate() {
        let (doc, warnings) = r.map_err(|f| Failure {
            message: format!("seed {}: {}", seeds[i], f.message),
            ..f
        })?;
        // Every seed loads the same objects: their warnings once.
        if i == 0 {
            for w in &warnings {
                crate::warnings::warn(w);
            }
        }
        docs.push(doc);
    }
    warn_checks(&docs);
    let (vary, vary_warning) = replicates::seeds_vary(&docs);
    if let Some(w) = vary_warning {
        warnings::warn(&w);
    }
    let figures = replicates::aggregate(&docs);
    if let Some((dir, _)) = &out {
        // Always: the replicate document is what makes the directory comparable; `--write`
        // chooses each seed's files.
        let path = dir.join(OutFile::Summary.file_name());
        kueuesim_report::outdir::write_file(
            &path,
            replicates::summaries_json(&seeds, &figures, &docs).as_bytes(),
        )
        .map_err(|e| Failure {
            code: 1,
            message: e.to_string(),
        })?;
    }
    let label = if args.paths.is_empty() {
        "the embedded platform scenario".to_string()
    } else {
        args.paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    if full {
        print_data(&replicates::to_json(&seeds, &figures, &docs))
    } else {
        print_out(&replicates::aggregate_text(&label, &seeds, &vary, &figures))
    }
}

/// The capacity checks of `runs` (kueuesim_report::checks) as warnings worded like the
/// loader's, each once (replicates mostly share them). A LocalQueue that does not exist was
/// already named by the loader, with its position.
fn warn_checks(runs: &[SimulationResult]) {
    let mut said = std::collections::BTreeSet::new();
    for c in runs.iter().flat_map(|d| &d.summary.checks) {
        if c.kind != "WorkloadsNameMissingLocalQueue" && said.insert(c.message.as_str()) {
            warnings::warn(&c.message);
        }
    }
}

/// Writes human-readable `text` (the summary, tables, `get`/`describe`, compare's lines) to
/// stdout with its control characters made visible but line feeds and tabs
/// (`escape::terminal_text`: ESC as `^[`, CR as `\r`, as kubectl prints them; docs/output.md);
/// a closed pipe (`| head`) is not a failure.
pub(crate) fn print_out(text: &str) -> Result<(), Failure> {
    print_data(&kueuesim_report::escape::terminal_text(text))
}

/// A line of a warning or error to stderr, its control characters made visible but line feeds
/// and tabs (`eprintln_visible!`).
pub(crate) fn eprint_visible(args: std::fmt::Arguments<'_>) {
    let line = args.to_string();
    eprintln!("{}", kueuesim_report::escape::terminal_text(&line));
}

/// Writes a document for programs (JSON, YAML, an emitted manifest or script) to stdout as it
/// is: its serializer already escaped what it holds. A closed pipe is not a failure.
pub(crate) fn print_data(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure {
            code: 1,
            message: format!("writing output: {e}"),
        }),
    }
}

/// Writes to stdout through `write`, buffered, as `print_out` does a text.
fn print_streamed(
    write: impl FnOnce(&mut std::io::BufWriter<std::io::StdoutLock<'_>>) -> std::io::Result<()>,
) -> Result<(), Failure> {
    let mut stdout = std::io::BufWriter::with_capacity(256 * 1024, std::io::stdout().lock());
    match write(&mut stdout).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure {
            code: 1,
            message: format!("writing output: {e}"),
        }),
    }
}

/// `--at` and `--until`: a Go duration, or one with days (`1d`, `1d12h`, `1.5d`); the model's
/// `limits::parse_offset_days`, which the Timeline's offsets share.
pub(crate) fn parse_offset(s: &str) -> Result<SimDuration, String> {
    limits::parse_offset_days(s)
}

fn validate(paths: &[PathBuf], opts: LoadOptions) -> Result<(), Failure> {
    let mut loaded = load_sources(paths, opts)?;
    // Every workload is read and checked, one at a time (a long trace is never held whole).
    let mut workloads = loaded.world.workloads.len();
    if let Some(mut stream) = loaded.stream.take() {
        while stream.try_next()?.is_some() {
            workloads += 1;
        }
    }
    let w = &loaded.world;
    // Workloads a seed draws (`spec.variation`, generators) are this seed's draw.
    let vary = &w.config.variation.seeds_vary;
    let drawn = if vary.len() > 1 {
        format!(
            " (seed {}; seeds vary: {})",
            w.config.seed,
            kueuesim_report::output::seeds_vary_text(vary)
        )
    } else {
        String::new()
    };
    println!(
        "ok: {} ClusterQueues, {} LocalQueues, {} ResourceFlavors, {} nodes, {} workloads{drawn}",
        w.cluster_queues.len(),
        w.local_queues.len(),
        w.flavors.len(),
        w.nodes.len(),
        workloads
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            // clap's own help/version output is success; anything else is a usage error.
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    warnings::show(cli.warnings);
    let r = match &cli.command {
        Command::Run(args) => run(args),
        Command::Validate {
            paths,
            strict,
            trace_root,
            overrides,
        } => overrides
            .apply_to(LoadOptions {
                strict: *strict,
                trace_root: trace_root.clone(),
                seed: None,
                stream: true,
                ..LoadOptions::default()
            })
            .and_then(|opts| validate(paths, opts)),
        Command::Get { kind, view, get } => kubectl::get(kind, view, get),
        Command::Describe { kind, view } => kubectl::describe(kind, view),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Compare(args) => compare::compare(args),
    };
    warnings::finish();
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln_visible!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
