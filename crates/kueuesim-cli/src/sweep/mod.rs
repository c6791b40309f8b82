//! `kueuesim sweep FILE`: every variant of a `Sweep` (a grid of parameters or a list of
//! variants) × every seed, run in parallel, into `sweep.csv` (a row per run) and
//! `sweep-summary.csv` (per variant, mean and 95 % CI per figure); or, with `spec.search`, a
//! bisection for the smallest parameter value meeting a target.

mod emit;
mod html;
mod names;
pub(crate) mod run;
mod search;
pub(crate) mod spec;

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use kueuesim_report::figures::{Stats, human};
use kueuesim_scenario::embedded::read_paths;
use kueuesim_scenario::overlay::closest_hint;
use kueuesim_scenario::{LoadOptions, SourceFile};

use self::run::{Journal, Prepared, Row, Runner};
use crate::{Failure, replicates};

/// The options of `kueuesim sweep`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct SweepArgs {
    #[command(subcommand)]
    command: Option<SweepCommand>,
    /// The Sweep file (apiVersion kueuesim.io/v1alpha1, kind Sweep).
    #[arg(required = true)]
    file: Option<PathBuf>,
    /// How many runs at once (default: the machine's cores).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Where sweep.csv, sweep-summary.csv and sweep.html go (default: sweep-NAME in the working
    /// directory, NAME the Sweep's metadata.name). Runs already in its sweep.csv are reused.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Make only run N of the sweep (from 0: variant N / seeds, seed N % seeds, in the order
    /// of sweep.csv) and write its row to DIR/rows/run-N.csv, e.g. as one index of a Kubernetes
    /// Indexed Job or a Slurm array; `kueuesim sweep collect DIR` then merges the rows.
    #[arg(long, value_name = "N")]
    index: Option<usize>,
    /// Print the sweep as runs for a cluster instead of running it: `kubernetes` (a ConfigMap
    /// with the Sweep and its base files, and an Indexed Job with one completion per run,
    /// labelled for Kueue's --queue) or `slurm` (an sbatch array script). Each index runs
    /// `--index N`; `kueuesim sweep collect DIR` merges their rows.
    #[arg(long, value_enum, value_name = "KIND")]
    emit: Option<emit::Emit>,
    /// With --emit: how many runs at once (the Indexed Job's parallelism, the Slurm array's
    /// `%N` throttle; default: all).
    #[arg(long, value_name = "N", requires = "emit")]
    parallelism: Option<usize>,
    /// The LocalQueue of the emitted Kubernetes Job (kueue.x-k8s.io/queue-name): a DNS-1123
    /// subdomain of at most 63 characters.
    #[arg(long, value_name = "NAME", default_value = "sweeps")]
    queue: String,
    /// The image the emitted Kubernetes Job runs, built from the repository's Containerfile;
    /// pin it by digest (registry.example/kueuesim@sha256:…).
    #[arg(long, value_name = "IMAGE", default_value = emit::DEFAULT_IMAGE)]
    image: String,
    /// The memory each pod of the emitted Kubernetes Job requests and is limited to.
    #[arg(long, value_name = "QUANTITY", default_value = "1Gi")]
    memory: String,
    /// With --emit kubernetes: base files outside the Sweep file's directory are embedded in
    /// the ConfigMap too (without it, they are an error: a shared Sweep must not carry files
    /// from elsewhere on this machine to a cluster).
    #[arg(long, requires = "emit")]
    allow_outside_base: bool,
    /// With --emit kubernetes: the base's trace files are on this PersistentVolumeClaim (at
    /// their paths under a trace root), mounted read-only as the pods' --trace-root, instead
    /// of in the ConfigMap (which holds at most 1 MiB).
    #[arg(long, value_name = "CLAIM", requires = "emit")]
    trace_claim: Option<String>,
    /// The base scenario's paths instead of spec.base (as a Job's pod sees them).
    #[arg(long, value_name = "PATH", num_args = 1..)]
    base: Vec<PathBuf>,
    /// No progress on stderr.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Objects of kinds the simulator does not read are an error instead of a warning.
    #[arg(long)]
    strict: bool,
    /// Where trace paths are looked for after the scenario file's directory.
    #[arg(long, value_name = "DIR")]
    trace_root: Option<PathBuf>,
}

/// `kueuesim sweep collect DIR`.
#[derive(clap::Subcommand)]
enum SweepCommand {
    /// Merge the rows of `--index` runs (DIR/rows/run-N.csv, with the Sweep they wrote as
    /// DIR/sweep.yaml) into sweep.csv, sweep-summary.csv and sweep.html, the files a local
    /// sweep writes, without running anything; names the runs still missing.
    Collect {
        /// The `--out` directory of the index runs.
        dir: PathBuf,
    },
}

/// Whether figure `name` is kept under `patterns` (none: every figure).
pub(crate) fn keep(patterns: &[String], name: &str) -> bool {
    patterns.is_empty() || patterns.iter().any(|p| glob(p, name))
}

/// `*` matches any run of characters; everything else itself.
pub(crate) fn glob(pattern: &str, name: &str) -> bool {
    kueuesim_scenario::overlay::glob(pattern, name)
}

/// Runs done out of the runs to make, on stderr: a bar on a terminal, else a line every
/// few seconds.
pub(crate) struct Progress {
    show: bool,
    terminal: bool,
    total: AtomicUsize,
    done: AtomicUsize,
    started: std::time::Instant,
    last_line: Mutex<f64>,
}

impl Progress {
    fn new(show: bool) -> Progress {
        #[allow(clippy::disallowed_methods)]
        let started = std::time::Instant::now();
        Progress {
            show,
            terminal: std::io::stderr().is_terminal(),
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            started,
            last_line: Mutex::new(0.0),
        }
    }

    pub(crate) fn add(&self, runs: usize) {
        self.total.fetch_add(runs, Ordering::Relaxed);
    }

    pub(crate) fn tick(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if !self.show {
            return;
        }
        let total = self.total.load(Ordering::Relaxed);
        let wall = self.started.elapsed().as_secs_f64();
        let eta = wall / done as f64 * total.saturating_sub(done) as f64;
        if self.terminal {
            let width = 24;
            let filled = (done * width).checked_div(total).unwrap_or(0).min(width);
            eprint!(
                "\r[{}{}] {done}/{total} runs · {wall:.0}s · ETA {eta:.0}s\x1b[K",
                "#".repeat(filled),
                "-".repeat(width - filled)
            );
        } else {
            let mut last = self.last_line.lock().expect("no panic holding the lock");
            if wall - *last >= 5.0 || done == total {
                *last = wall;
                eprintln!("{done}/{total} runs done, {wall:.0}s, ETA {eta:.0}s");
            }
        }
    }

    fn finish(&self) {
        if self.show && self.terminal && self.done.load(Ordering::Relaxed) > 0 {
            eprint!("\r\x1b[K");
        }
    }
}

/// What the rows' figures mean; a change of it (a figure added to every run, a count that
/// a former version left out where it was 0) makes earlier rows unusable. Version 2: every
/// eviction and preemption reason is a figure of every run. Version 4: every queue's
/// `pendingBoundBy` shares and every ClusterQueue's `quota`, what the seeds vary and the
/// workload fingerprint (`seedsVary`, `workloadFingerprint`) before the figures.
const ROWS_FORMAT: &str = "kueuesim sweep rows 4";

/// What a sweep's reuse of earlier rows depends on: the rows' format, the Sweep file and the
/// base scenario's files, in order.
fn fingerprint(sweep: &spec::Sweep, base: &[SourceFile]) -> String {
    let mut h = sha1_smol::Sha1::new();
    h.update(ROWS_FORMAT.as_bytes());
    h.update(&[0]);
    h.update(sweep.file.text.as_bytes());
    // The files' texts, not their names: rows made where the base has other paths (a Job's
    // ConfigMap, `--base`) are collected here.
    for f in base {
        h.update(f.text.as_bytes());
        h.update(&[0]);
    }
    format!("{}\n", h.digest())
}

/// `kueuesim sweep FILE`.
pub(crate) fn sweep(args: &SweepArgs) -> Result<(), Failure> {
    let file = match (&args.command, &args.file) {
        (Some(SweepCommand::Collect { dir }), _) => return collect(dir),
        (None, Some(file)) => file,
        (None, None) => unreachable!("clap requires FILE without a subcommand"),
    };
    let sweep = spec::read(file)?;
    let base = if args.base.is_empty() {
        read_paths(&sweep.base)?
    } else {
        read_paths(&args.base)?
    };
    // Templates that match nothing are the sweep's error, found before any run or file.
    let prepared: Vec<(Prepared, Option<usize>)> = sweep
        .variants
        .iter()
        .map(|v| (Prepared::new(&sweep, v), None))
        .collect();
    for (p, _) in &prepared {
        p.check(&sweep, &base)?;
    }
    if sweep.search.is_some() {
        search::check(&sweep, &base)?;
    }
    let opts = LoadOptions {
        strict: args.strict,
        trace_root: args.trace_root.clone(),
        ..LoadOptions::default()
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("sweep-{}", sweep.name)));
    let runs = prepared.len() * sweep.seeds.len();
    if let Some(how) = args.emit {
        if sweep.search.is_some() {
            return Err(Failure {
                code: 2,
                message: "--emit with spec.search: a search's runs depend on each other's results: run it whole".into(),
            });
        }
        let target = emit::Target {
            how,
            runs,
            parallelism: args.parallelism,
            out: &out,
            queue: &args.queue,
            image: &args.image,
            memory: &args.memory,
            base_flag: &args.base,
            trace_root: args.trace_root.as_deref(),
            trace_claim: args.trace_claim.as_deref(),
            strict: args.strict,
            allow_outside_base: args.allow_outside_base,
        };
        let variants: Vec<Prepared> = prepared.into_iter().map(|(p, _)| p).collect();
        return crate::print_data(&emit::emit(&target, &sweep, &base, &variants)?);
    }
    // `--index` is checked before anything is written.
    if let Some(n) = args.index {
        if sweep.search.is_some() {
            return Err(Failure {
                code: 2,
                message: "--index with spec.search: a search's runs depend on each other's results: run it whole".into(),
            });
        }
        if n >= runs {
            return Err(Failure {
                code: 2,
                message: format!(
                    "--index {n}: the sweep has {runs} runs: expected 0..{}",
                    runs.saturating_sub(1)
                ),
            });
        }
    }
    let io = |e: std::io::Error| Failure {
        code: 1,
        message: format!("{}: {e}", out.display()),
    };
    let params: Vec<String> = sweep.parameters.iter().map(|p| p.name.clone()).collect();
    let searching = sweep.search.is_some();

    // Rows of an earlier run of the same sweep on the same scenario are reused.
    let csv_path = out.join("sweep.csv");
    let fp_path = out.join(".sweep-fingerprint");
    let fp = fingerprint(&sweep, &base);
    let rows_dir = out.join("rows");
    if let Some(n) = args.index {
        rows_dir_not_a_link(&rows_dir)?;
        std::fs::create_dir_all(&out).map_err(io)?;
        run::write(&out, ".sweep-fingerprint", &fp)?;
        // `sweep collect DIR` reads the Sweep from here: each index writes the same text.
        run::write(&out, COLLECT_SPEC, &sweep.file.text)?;
        return one_index(args, &sweep, base, &prepared, n, &rows_dir);
    }
    let old = std::fs::read_to_string(&csv_path).ok();
    let same = std::fs::read_to_string(&fp_path).ok().as_deref() == Some(fp.as_str());
    let mut done = BTreeMap::new();
    let mut columns = None;
    // Files of another sweep are removed only once this one is known to load.
    let mut stale = Vec::new();
    match old {
        Some(text) if same => {
            let head = run::parse_csv(&text).into_iter().next().unwrap_or_default();
            if let Some(e) = head.iter().position(|h| h == "error") {
                columns = Some(head[e + 1..].to_vec());
            }
            for r in run::read_rows(&text) {
                done.insert((r.variant.clone(), r.seed), r);
            }
        }
        Some(_) => {
            eprintln_visible!(
                "note: {} is of another sweep or scenario: every run is made again",
                csv_path.display()
            );
            stale.push(csv_path.clone());
        }
        None => {}
    }
    // Rows written by `--index` runs (rows/run-N.csv) are collected the same way.
    let files = index_row_files(&rows_dir)?;
    if same {
        add_index_rows(&files, &mut done)?;
    } else if !files.is_empty() {
        stale.push(rows_dir.clone());
    }
    if !done.is_empty() && !args.quiet {
        eprintln_visible!(
            "{}: reusing {} runs already written",
            out.display(),
            done.len()
        );
    }

    let mut runner = Runner {
        sweep: &sweep,
        base,
        opts,
        until: sweep.until,
        jobs: replicates::jobs(args.jobs),
        progress: Progress::new(!args.quiet),
        done,
        journal: Mutex::new(Journal {
            path: csv_path.clone(),
            columns,
            params: params.clone(),
            search: searching,
            pending: Vec::new(),
        }),
    };
    // Each variant's first seed runs before the others: a variant that does not load is the
    // Sweep's input error (exit 2), found before any file is written.
    let first = if searching {
        Vec::new()
    } else {
        runner.first_seeds(&prepared)?
    };
    std::fs::create_dir_all(&out).map_err(io)?;
    for path in stale {
        if path.is_dir() {
            std::fs::remove_dir_all(&path).map_err(io)?;
        } else {
            std::fs::remove_file(&path).map_err(io)?;
        }
    }
    run::write(&out, ".sweep-fingerprint", &fp)?;
    {
        let mut journal = runner.journal.lock().expect("no run holds the lock here");
        for row in &first {
            journal.append(row);
        }
    }
    let (rows, text) = if searching {
        search::search(&runner)?
    } else {
        let rows = runner.run(&prepared);
        let text = table(&sweep, &rows);
        (rows, text)
    };
    runner.progress.finish();
    let text = with_seeds_vary(text, &rows);

    let failed = rows.iter().filter(|r| !r.error.is_empty()).count();
    print_warnings(&rows);
    write_results(&out, &sweep, &params, searching, &rows, &text)?;
    let mut text = text;
    text.push_str(&format!(
        "\n{} runs ({failed} failed) in {}: sweep.csv, sweep-summary.csv, sweep.html\n",
        rows.len(),
        out.display()
    ));
    crate::print_out(&text)
}

/// The Sweep an `--index` run leaves beside its row, for `sweep collect`.
const COLLECT_SPEC: &str = "sweep.yaml";

/// sweep.csv, sweep-summary.csv, sweep.html (and search.txt) of `rows`.
fn write_results(
    out: &std::path::Path,
    sweep: &spec::Sweep,
    params: &[String],
    searching: bool,
    rows: &[Row],
    text: &str,
) -> Result<(), Failure> {
    let columns = run::columns(&sweep.figures, rows);
    for p in &sweep.figures {
        if !columns.iter().any(|c| glob(p, c)) && rows.iter().any(|r| r.error.is_empty()) {
            let all = run::columns(&[], rows);
            let hint = closest_hint(p, all.iter().map(String::as_str));
            crate::warnings::warn(&format!("figure {p:?} is in no run's summary{hint}"));
        }
    }
    run::write(
        out,
        "sweep.csv",
        &run::sweep_csv(params, searching, &columns, rows),
    )?;
    run::write(
        out,
        "sweep-summary.csv",
        &run::summary_csv(params, searching, &columns, rows),
    )?;
    run::write(
        out,
        "sweep.html",
        &html::sweep_html(sweep, params, &columns, rows),
    )?;
    if searching {
        run::write(out, "search.txt", text)?;
    }
    Ok(())
}

/// The loader's warnings and the capacity checks of the runs, each once, with the variants
/// that gave it: a quota sweep's upper values are where "quota above what the nodes hold"
/// shows, and one line per run would bury it.
fn print_warnings(rows: &[Row]) {
    let mut seen: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in rows {
        for w in &r.warnings {
            match seen.iter_mut().find(|(m, _)| *m == w.as_str()) {
                Some((_, vs)) => {
                    if !vs.contains(&r.variant.as_str()) {
                        vs.push(&r.variant);
                    }
                }
                None => seen.push((w, vec![&r.variant])),
            }
        }
    }
    let variants: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r.variant.as_str()).collect();
    for (message, vs) in seen {
        if vs.len() == variants.len() {
            crate::warnings::warn(message);
        } else {
            let mut names = vs[..vs.len().min(3)].join(", ");
            if vs.len() > 3 {
                names.push_str(&format!(" and {} more", vs.len() - 3));
            }
            crate::warnings::warn_for(&names, message);
        }
    }
}

/// The most a row file may hold: one run's header and row are a few KiB (every figure of
/// a run with its ClusterQueues'); a bigger file is not a row of `--index`, and reading it
/// whole would cost memory for nothing.
const ROW_FILE_MAX: u64 = 1024 * 1024;

/// Whether `name` is the name `--index N` gives its row (`run-N.csv`, N decimal).
fn is_row_file(name: &str) -> bool {
    name.strip_prefix("run-")
        .and_then(|n| n.strip_suffix(".csv"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// `rows_dir` refused when it is a symbolic link: index runs write into it, and `collect`
/// reads it, only as the directory it is inside `--out`.
fn rows_dir_not_a_link(rows_dir: &std::path::Path) -> Result<(), Failure> {
    match std::fs::symlink_metadata(rows_dir) {
        Ok(m) if m.file_type().is_symlink() => Err(Failure {
            code: 2,
            message: format!(
                "{}: a symbolic link: expected the directory of row files itself (kueuesim reads and writes only inside the sweep's directory)",
                rows_dir.display()
            ),
        }),
        _ => Ok(()),
    }
}

/// The row files `--index` runs wrote into `rows_dir` (regular files named `run-N.csv`), in
/// name (= index) order; none when the directory does not exist. Anything else there — a
/// subdirectory, a symbolic link (never followed), a file of another name — is named on
/// stderr and skipped.
fn index_row_files(rows_dir: &std::path::Path) -> Result<Vec<PathBuf>, Failure> {
    rows_dir_not_a_link(rows_dir)?;
    let entries = match std::fs::read_dir(rows_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Failure {
                code: 1,
                message: format!("{}: {e}", rows_dir.display()),
            });
        }
    };
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for e in entries {
        let e = e.map_err(|e| Failure {
            code: 1,
            message: format!("{}: {e}", rows_dir.display()),
        })?;
        let path = e.path();
        let kind = std::fs::symlink_metadata(&path).map(|m| m.file_type());
        let why = match (&kind, e.file_name().to_str()) {
            (Ok(k), _) if k.is_symlink() => Some("a symbolic link"),
            (Ok(k), _) if k.is_dir() => Some("a directory"),
            (Ok(k), _) if !k.is_file() => Some("not a regular file"),
            (Err(_), _) => Some("gone while read"),
            (Ok(_), Some(name)) if is_row_file(name) => None,
            (Ok(_), _) => Some("not named run-N.csv"),
        };
        match why {
            None => files.push(path),
            Some(why) => skipped.push((path, why)),
        }
    }
    files.sort();
    skipped.sort();
    for (path, why) in skipped {
        eprintln_visible!("note: {}: {why}: skipped", path.display());
    }
    Ok(files)
}

/// Adds the rows of `files` to `done` (a row already there is kept). A file over
/// `ROW_FILE_MAX` is an error naming it; one that is not UTF-8 is named and skipped (its
/// run counts as missing, so `collect` names the index to run again).
fn add_index_rows(
    files: &[PathBuf],
    done: &mut BTreeMap<(String, u64), Row>,
) -> Result<(), Failure> {
    use std::io::Read;
    for f in files {
        let io = |e: std::io::Error| Failure {
            code: 1,
            message: format!("{}: {e}", f.display()),
        };
        // Read at most one byte past the cap: the file may have grown since it was listed.
        let mut bytes = Vec::new();
        std::fs::File::open(f)
            .map_err(io)?
            .take(ROW_FILE_MAX + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 > ROW_FILE_MAX {
            return Err(Failure {
                code: 2,
                message: format!(
                    "{}: over {ROW_FILE_MAX} bytes (1 MiB): expected the row file of one run of `kueuesim sweep --index N`, a few KiB",
                    f.display()
                ),
            });
        }
        let Ok(text) = String::from_utf8(bytes) else {
            crate::warnings::warn(&format!(
                "{}: not UTF-8, so not a row of `--index`: skipped (its run counts as missing)",
                f.display()
            ));
            continue;
        };
        for r in run::read_rows(&text) {
            done.entry((r.variant.clone(), r.seed)).or_insert(r);
        }
    }
    Ok(())
}

/// `kueuesim sweep collect DIR`: the rows of `--index` runs into the files a local sweep
/// writes; nothing is run (the base scenario need not be here).
fn collect(dir: &std::path::Path) -> Result<(), Failure> {
    let spec_path = dir.join(COLLECT_SPEC);
    // The Sweep the index runs wrote, itself: a symbolic link there is not followed.
    let regular = std::fs::symlink_metadata(&spec_path).is_ok_and(|m| m.file_type().is_file());
    if !regular {
        return Err(Failure {
            code: 2,
            message: format!(
                "{}: not found (or not a regular file): expected the Sweep that `kueuesim sweep FILE --index N --out {}` writes beside rows/",
                spec_path.display(),
                dir.display()
            ),
        });
    }
    let sweep = spec::read(&spec_path)?;
    if sweep.search.is_some() {
        return Err(Failure {
            code: 2,
            message: format!(
                "{}: a search is run whole, not by index: nothing to collect",
                spec_path.display()
            ),
        });
    }
    let mut done: BTreeMap<(String, u64), Row> = BTreeMap::new();
    let rows_dir = dir.join("rows");
    add_index_rows(&index_row_files(&rows_dir)?, &mut done)?;
    // In the order of a local sweep: variant, then seed.
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for (v, variant) in sweep.variants.iter().enumerate() {
        for (s, seed) in sweep.seeds.iter().enumerate() {
            match done.get(&(variant.name.clone(), *seed)) {
                Some(r) => rows.push(r.clone()),
                None => missing.push(v * sweep.seeds.len() + s),
            }
        }
    }
    let params: Vec<String> = sweep.parameters.iter().map(|p| p.name.clone()).collect();
    let text = table(&sweep, &rows);
    write_results(dir, &sweep, &params, false, &rows, &text)?;
    let total = sweep.variants.len() * sweep.seeds.len();
    let failed = rows.iter().filter(|r| !r.error.is_empty()).count();
    let mut text = text;
    text.push_str(&format!(
        "\n{} of {total} runs ({failed} failed) collected in {}: sweep.csv, sweep-summary.csv, sweep.html\n",
        rows.len(),
        dir.display()
    ));
    crate::print_out(&text)?;
    if missing.is_empty() {
        return Ok(());
    }
    let mut list: Vec<String> = missing.iter().take(20).map(|i| i.to_string()).collect();
    if missing.len() > 20 {
        list.push(format!("… ({} in all)", missing.len()));
    }
    Err(Failure {
        code: 1,
        message: format!(
            "{} of {total} runs have no row in {}: indices {} (run them with --index N)",
            missing.len(),
            rows_dir.display(),
            list.join(", ")
        ),
    })
}

/// `--index N`: one run of the sweep, its row into `rows/run-N.csv`.
fn one_index(
    args: &SweepArgs,
    sweep: &spec::Sweep,
    base: Vec<SourceFile>,
    prepared: &[(Prepared, Option<usize>)],
    n: usize,
    rows_dir: &std::path::Path,
) -> Result<(), Failure> {
    // `sweep` checked `n` against the runs before writing anything.
    let seeds = &sweep.seeds;
    let total = prepared.len() * seeds.len();
    let runner = Runner {
        sweep,
        base,
        opts: LoadOptions {
            strict: args.strict,
            trace_root: args.trace_root.clone(),
            ..LoadOptions::default()
        },
        until: sweep.until,
        jobs: 1,
        progress: Progress::new(false),
        done: BTreeMap::new(),
        journal: Mutex::new(Journal {
            path: rows_dir.join("unused"),
            columns: None,
            params: Vec::new(),
            search: false,
            pending: Vec::new(),
        }),
    };
    let (variant, seed) = (&prepared[n / seeds.len()].0, seeds[n % seeds.len()]);
    let row = runner.one(variant, None, seed);
    let params: Vec<String> = sweep.parameters.iter().map(|p| p.name.clone()).collect();
    let columns = run::columns(&sweep.figures, std::slice::from_ref(&row));
    rows_dir_not_a_link(rows_dir)?;
    std::fs::create_dir_all(rows_dir).map_err(|e| Failure {
        code: 1,
        message: format!("{}: {e}", rows_dir.display()),
    })?;
    let status = if row.error.is_empty() {
        "ok".to_string()
    } else {
        format!("error: {}", row.error)
    };
    let name = format!("run-{n:06}.csv");
    run::write(
        rows_dir,
        &name,
        &run::sweep_csv(&params, false, &columns, std::slice::from_ref(&row)),
    )?;
    crate::print_out(&format!(
        "run {n} of {total}: variant {}, seed {seed}: {status}\n",
        row.variant
    ))
}

/// Per variant: its runs and a few kept figures as mean ± 95 % CI.
fn table(sweep: &spec::Sweep, rows: &[Row]) -> String {
    let mut columns = run::columns(&sweep.figures, rows);
    // The kept figures past the fourth are not shown, but named below the table: a figure
    // asked for is never dropped without a word (all are in sweep.csv).
    let (shown, not_shown): (Vec<String>, Vec<String>) = if sweep.figures.is_empty() {
        let shown = [
            "waitSecondsInclPending.p90",
            "gpu.utilization",
            "workloads.finished",
        ]
        .iter()
        .filter(|f| columns.iter().any(|c| c == *f))
        .map(|f| f.to_string())
        .collect();
        (shown, Vec::new())
    } else {
        let rest = columns.split_off(columns.len().min(TABLE_FIGURES));
        (columns, rest)
    };
    let mut lines: Vec<Vec<String>> = Vec::new();
    let mut head = vec!["VARIANT".to_string(), "RUNS".into(), "FAILED".into()];
    head.extend(shown.iter().cloned());
    lines.push(head);
    for v in &sweep.variants {
        let group: Vec<&Row> = rows.iter().filter(|r| r.variant == v.name).collect();
        let failed = group.iter().filter(|r| !r.error.is_empty()).count();
        let mut l = vec![v.name.clone(), group.len().to_string(), failed.to_string()];
        for f in &shown {
            l.push(match Stats::of(group.iter().map(|r| r.figure(f))) {
                None => "-".into(),
                Some(s) => match s.ci95 {
                    Some(h) => format!("{} ± {}", human(f, s.mean), human(f, h)),
                    None => human(f, s.mean),
                },
            });
        }
        lines.push(l);
    }
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!(
        "sweep {}: {} variants × {} seeds (mean ± 95 % CI)\n\n",
        sweep.name,
        sweep.variants.len(),
        sweep.seeds.len()
    );
    for l in lines {
        let cells: Vec<String> = l
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
    }
    if !not_shown.is_empty() {
        const NAMED: usize = 8;
        let mut names = not_shown
            .iter()
            .take(NAMED)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        if not_shown.len() > NAMED {
            names.push_str(", …");
        }
        out.push_str(&format!(
            "\n  {} more kept figure{} in sweep.csv and sweep-summary.csv: {names}\n",
            not_shown.len(),
            if not_shown.len() == 1 { "" } else { "s" },
        ));
    }
    out
}

/// `text` with a line after its first that says what the sweep's seeds vary (each distinct
/// wording once: variants may differ), and a warning on stderr for every variant whose seeds
/// do not vary the workload (the intervals then measure tie-break noise).
fn with_seeds_vary(text: String, rows: &[Row]) -> String {
    let mut said: Vec<String> = Vec::new();
    let mut warned: Vec<(&str, String)> = Vec::new();
    let mut variants: Vec<&str> = rows.iter().map(|r| r.variant.as_str()).collect();
    variants.dedup();
    for v in variants {
        let runs: Vec<&Row> = rows
            .iter()
            .filter(|r| r.variant == v && r.error.is_empty())
            .collect();
        let Some(items) = runs.iter().find_map(|r| r.variation.seeds_vary.as_ref()) else {
            continue;
        };
        let words = kueuesim_report::output::seeds_vary_text(items);
        if !said.contains(&words) {
            said.push(words);
        }
        let prints: Vec<&str> = runs
            .iter()
            .filter_map(|r| r.variation.fingerprint.as_deref())
            .collect();
        if runs.len() > 1
            && let Some(w) = kueuesim_report::output::seeds_warning(items, &prints)
        {
            warned.push((v, w));
        }
    }
    // One warning, however many variants: they load the same scenario.
    if let Some((v, w)) = warned.first() {
        let more = match warned.len() - 1 {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        crate::warnings::warn_for(&format!("{v}{more}"), w);
    }
    if said.is_empty() {
        return text;
    }
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    format!("{first}\nSeeds vary: {}\n{rest}", said.join(" | "))
}

/// How many kept figures the table shows (its width on a terminal).
const TABLE_FIGURES: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_runs_of_characters() {
        assert!(glob(
            "clusterQueues[*].waitSecondsInclPending.p95",
            "clusterQueues[ml-team].waitSecondsInclPending.p95"
        ));
        assert!(!glob(
            "clusterQueues[*].waitSecondsInclPending.p95",
            "clusterQueues[a].gpuShare"
        ));
        assert!(glob(
            "waitSecondsInclPending.p90",
            "waitSecondsInclPending.p90"
        ));
        assert!(glob("*", "x"));
        assert!(!glob("a*b", "ac"));
    }
}
