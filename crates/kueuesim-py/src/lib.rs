//! kueuesim's Python extension module (`kueuesim._kueuesim`): loads scenarios, runs them with
//! or without Python policies, and hands the results over as dicts and typed columns that
//! the pure-Python package (`python/kueuesim`) turns into DataFrames (docs/python.md).

/// mimalloc for the engine's allocations, as in the CLI (docs/performance.md): a run makes
/// and frees many small objects, and the module must match the CLI's time for the same work.
/// Python's own objects still come from its allocator.
#[global_allocator]
static GLOBAL: kueuesim_alloc::Allocator = kueuesim_alloc::Allocator;

mod columns;
mod hooks;

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::rc::Rc;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use kueuesim_engine::Simulation;
use kueuesim_model::{SimDuration, SimTime, World};
use kueuesim_report::export;
use kueuesim_report::output::result_with;
use kueuesim_scenario::embedded::{default_scenario, read_paths};
use kueuesim_scenario::{LoadOptions, Loaded, ScenarioError, load};

use columns::{Clock, Column, NAT, Table, TimeKind, json_to_py};
use hooks::{NodeScoreRequest, OrderRequest, PolicyError, PyHooks};

pyo3::create_exception!(
    _kueuesim,
    InputError,
    PyValueError,
    "Invalid input: `file`, `line` and `column` say where (None when the input as a whole is wrong)."
);

/// A loader error as `InputError`, with its place as attributes.
fn input_error(py: Python<'_>, e: ScenarioError) -> PyErr {
    let err = match &e {
        ScenarioError::Io { .. } => {
            return pyo3::exceptions::PyOSError::new_err(e.to_string());
        }
        _ => InputError::new_err(e.to_string()),
    };
    let (file, line, column) = match &e {
        ScenarioError::At { pos, .. } => (Some(pos.file.clone()), Some(pos.line), Some(pos.column)),
        _ => (None, None, None),
    };
    let v = err.value(py);
    let _ = v.setattr("file", file);
    let _ = v.setattr("line", line);
    let _ = v.setattr("column", column);
    err
}

/// Go-style duration text ("6h", "90m") as simulated time.
fn duration(text: &str, what: &str) -> PyResult<SimDuration> {
    kueuesim_model::limits::parse_time_offset(text.trim())
        .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

/// What `load_world` reads: the paths and the command's what-if options.
struct LoadRequest {
    paths: Vec<PathBuf>,
    seed: Option<u64>,
    until: Option<SimDuration>,
    patches: Vec<PathBuf>,
    sets: Vec<String>,
    trace_root: Option<PathBuf>,
    strict: bool,
    stream: bool,
}

/// Loads a scenario as the command does; Rust only, so it runs without the GIL.
fn load_world(req: LoadRequest) -> Result<Loaded, ScenarioError> {
    let files = if req.paths.is_empty() {
        default_scenario()
    } else {
        read_paths(&req.paths)?
    };
    let patches = if req.patches.is_empty() {
        Vec::new()
    } else {
        read_paths(&req.patches)?
    };
    let opts = LoadOptions {
        strict: req.strict,
        trace_root: req.trace_root,
        seed: req.seed,
        stream: req.stream,
        patches,
        sets: req.sets,
    };
    let mut loaded = load(&files, opts)?;
    if let Some(u) = req.until {
        loaded.world.config.until = Some(SimTime::ZERO + u);
    }
    Ok(loaded)
}

/// The policy callable bound to `name` in `policies`, or an error naming the field.
fn bind_policy(
    policies: Option<&Bound<'_, PyDict>>,
    field: &str,
    p: &Option<kueuesim_model::PolicyRef>,
) -> PyResult<Option<(String, Py<PyAny>)>> {
    let Some(p) = p else { return Ok(None) };
    let f = match policies {
        Some(d) => d.get_item(&p.name)?,
        None => None,
    };
    match f {
        Some(f) if f.is_callable() => Ok(Some((p.name.clone(), f.unbind()))),
        Some(_) => Err(PyValueError::new_err(format!(
            "{}: spec.policies.{field}: policies[{:?}] is not callable",
            p.at, p.name
        ))),
        None => Err(PyValueError::new_err(format!(
            "{}: spec.policies.{field} names {:?}: pass it as kueuesim.run(..., policies={{{:?}: callable}})",
            p.at, p.name, p.name
        ))),
    }
}

/// The workloads table's time columns: `workloads.csv`'s seconds as instants (offsets from
/// the start) and durations, a duration without the unit its CSV name carries
/// (docs/python.md, "Times").
const WORKLOAD_TIMES: &[(&str, &str, TimeKind)] = &[
    ("createdAt", "createdAt", TimeKind::Instant),
    ("admittedAt", "admittedAt", TimeKind::Instant),
    ("runningAt", "runningAt", TimeKind::Instant),
    ("finishedAt", "finishedAt", TimeKind::Instant),
    ("waitSeconds", "wait", TimeKind::Duration),
    ("timeInQueueSeconds", "timeInQueue", TimeKind::Duration),
];

fn workloads_table(
    doc: &kueuesim_report::output::SimulationResult,
    clock: Clock,
) -> PyResult<Table> {
    let names: Vec<String> = export::workload_columns(doc.summary.failures.is_some())
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut rows = doc.workloads.iter().map(export::workload_cells);
    let mut t = match rows.next() {
        None => Table::new(&names, |_| Column::Text(Vec::new())),
        Some(first) => {
            let mut t = Table::new(&names, |i| Column::for_cell(&first[i]));
            for row in std::iter::once(first).chain(rows) {
                for (c, cell) in t.columns.iter_mut().zip(row) {
                    c.push(cell);
                }
            }
            t
        }
    };
    t.retime(clock, WORKLOAD_TIMES)?;
    Ok(t)
}

/// One row per pod of the document's workloads: where it runs (`podSets[].pods[]`).
fn pods_table(doc: &kueuesim_report::output::SimulationResult, clock: Clock) -> PyResult<Table> {
    let names: Vec<String> = ["namespace", "workload", "podSet", "pod", "node", "boundAt"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut text: [Vec<Option<String>>; 5] = Default::default();
    let mut bound = Vec::new();
    for w in &doc.workloads {
        for ps in &w.pod_sets {
            for p in &ps.pods {
                let cells = [
                    Some(w.namespace.clone()),
                    Some(w.name.clone()),
                    Some(ps.name.clone()),
                    Some(p.name.clone()),
                    p.node.clone(),
                ];
                for (c, v) in text.iter_mut().zip(cells) {
                    c.push(v);
                }
                bound.push(clock.convert(TimeKind::Instant, p.bound_at.unwrap_or(f64::NAN))?);
            }
        }
    }
    let mut columns: Vec<Column> = text.into_iter().map(Column::Text).collect();
    columns.push(Column::Instant(bound));
    Ok(Table { names, columns })
}

fn events_table(world: &World, outcome: &kueuesim_engine::Outcome) -> PyResult<Table> {
    let clock = Clock {
        start_unix_ms: world.config.start_unix_ms,
    };
    let names: Vec<String> = [
        "at",
        "namespace",
        "name",
        "kind",
        "type",
        "source",
        "reason",
        "message",
        "cycle",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Every event with its workload, in time order (ties: workload, then recording order).
    let mut all: Vec<(SimTime, usize, &kueuesim_engine::outcome::Event)> = Vec::new();
    for (i, r) in outcome.workloads.iter().enumerate() {
        if let Some(r) = r {
            all.extend(r.events.iter().map(|e| (e.at, i, e)));
        }
    }
    all.sort_by_key(|(at, i, _)| (*at, *i));
    let mut at = Vec::with_capacity(all.len());
    let mut cycle = Vec::with_capacity(all.len());
    let mut text: [Vec<Option<String>>; 7] = Default::default();
    for (t, i, e) in all {
        let wl = &world.workloads[i];
        at.push(clock.instant(t.millis())?);
        cycle.push(e.cycle.map_or(f64::NAN, |c| c as f64));
        let cells = [
            wl.namespace.as_str(),
            &wl.name,
            &wl.kind,
            e.kind.as_str(),
            e.source,
            e.reason,
            &e.message,
        ];
        for (col, s) in text.iter_mut().zip(cells) {
            col.push(Some(s.to_string()));
        }
    }
    let mut columns = vec![Column::Instant(at)];
    columns.extend(text.into_iter().map(Column::Text));
    columns.push(Column::F64(cycle));
    Ok(Table { names, columns })
}

fn timeseries_table(world: &World, outcome: &kueuesim_engine::Outcome) -> PyResult<Table> {
    let clock = Clock {
        start_unix_ms: world.config.start_unix_ms,
    };
    let (mut names, cols) = export::timeseries_columns(world);
    let samples = outcome
        .time_series
        .as_ref()
        .map_or(&[][..], |t| &t.samples[..]);
    let mut time = Vec::with_capacity(samples.len());
    // Counts first, then (with GPU devices) the ratios, NaN where a ratio is of nothing.
    let mut row = Vec::new();
    let mut ratios = Vec::new();
    if let Some(s) = samples.first() {
        export::timeseries_counts(&cols, s, &mut row);
        export::timeseries_figures(&cols, s, &mut ratios);
    }
    let (n_counts, n_ratios) = (row.len(), ratios.len());
    let mut counts: Vec<Vec<i64>> = vec![Vec::with_capacity(samples.len()); n_counts];
    let mut figures: Vec<Vec<f64>> = vec![Vec::with_capacity(samples.len()); n_ratios];
    for s in samples {
        time.push(clock.instant(s.at.millis())?);
        row.clear();
        ratios.clear();
        export::timeseries_counts(&cols, s, &mut row);
        export::timeseries_figures(&cols, s, &mut ratios);
        for (c, v) in counts.iter_mut().zip(&row) {
            c.push(*v);
        }
        for (c, v) in figures.iter_mut().zip(&ratios) {
            c.push(v.unwrap_or(f64::NAN));
        }
    }
    if samples.is_empty() {
        counts = vec![Vec::new(); names.len() - 1];
    }
    names.truncate(1 + counts.len() + figures.len());
    let mut columns = vec![Column::Instant(time)];
    columns.extend(counts.into_iter().map(Column::I64));
    columns.extend(figures.into_iter().map(Column::F64));
    Ok(Table { names, columns })
}

/// The budgets of one run, as `kueuesim run --max-events` and `--max-wall` take them.
struct Budget {
    max_events: Option<u64>,
    /// The wall-time budget, with its text for the message.
    max_wall: Option<(String, std::time::Duration)>,
}

impl Budget {
    fn new(max_events: Option<u64>, max_wall: Option<&str>) -> PyResult<Budget> {
        if max_events == Some(0) {
            return Err(PyValueError::new_err(
                "max_events: 0: expected a positive number of events",
            ));
        }
        let max_wall = match max_wall {
            Some(w) => {
                let d = duration(w, "max_wall")?;
                if d <= SimDuration::ZERO {
                    return Err(PyValueError::new_err(format!(
                        "max_wall: {w:?}: expected a positive duration (30s, 10m) or seconds"
                    )));
                }
                let wall = std::time::Duration::from_millis(d.millis() as u64);
                Some((w.trim().to_string(), wall))
            }
            None => None,
        };
        Ok(Budget {
            max_events,
            max_wall,
        })
    }
}

/// How often, at most, a run on the main thread takes the GIL to run Python's signal
/// handlers. The engine offers a check every 4,096 events (`Simulation::run_with_progress`);
/// taking the GIL while another Python thread holds it waits for that thread's switch
/// interval (5 ms by default), so the checks are also spaced in wall time: Ctrl-C is still
/// seen promptly, and a busy Python thread delays the run by one interval per check at most.
const SIGNAL_CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// The engine's progress callback of a run without the GIL: the wall-time budget, and
/// Python's signal handlers on the main thread (Ctrl-C raises `KeyboardInterrupt` there).
/// Neither changes what the engine does; each can only stop it, between two events.
struct Watch {
    started: std::time::Instant,
    max_wall: Option<std::time::Duration>,
    /// Run the signal handlers: only the main thread runs them (Python's rule), so a run on
    /// another thread never takes the GIL for them.
    signals: bool,
    last_signal_check: std::time::Instant,
    /// The exception a signal handler raised; the run stopped for it.
    interrupt: Option<PyErr>,
    /// The wall-time budget ran out; the run stopped for it.
    out_of_time: bool,
}

impl Watch {
    #[allow(clippy::disallowed_methods)] // wall time for the budget and the checks' spacing, never simulated time
    fn new(max_wall: Option<std::time::Duration>, signals: bool) -> Watch {
        let now = std::time::Instant::now();
        Watch {
            started: now,
            max_wall,
            signals,
            last_signal_check: now,
            interrupt: None,
            out_of_time: false,
        }
    }

    #[allow(clippy::disallowed_methods)] // as in `new`
    fn tick(&mut self) -> ControlFlow<()> {
        let now = std::time::Instant::now();
        if self
            .max_wall
            .is_some_and(|max| now.duration_since(self.started) >= max)
        {
            self.out_of_time = true;
            return ControlFlow::Break(());
        }
        if self.signals && now.duration_since(self.last_signal_check) >= SIGNAL_CHECK_EVERY {
            self.last_signal_check = now;
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                self.interrupt = Some(e);
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }
}

/// Why a run gave no result: bad input (raised as `InputError` once the GIL is back) or a
/// Python exception (a policy's, a signal handler's).
enum RunFailure {
    Input(ScenarioError),
    Python(PyErr),
}

/// A finished run, handed back to the thread that holds the GIL.
struct Ran {
    world: World,
    outcome: kueuesim_engine::Outcome,
    warnings: Vec<String>,
    summary: serde_json::Value,
    hook_calls: u64,
    wall_seconds: f64,
}

/// Everything `run` does between its arguments and its result, without the GIL: the load,
/// the simulation and the summary are Rust only; the policies and the signal checks take
/// the GIL back for each call (`Python::attach`).
#[allow(clippy::too_many_arguments)]
fn simulate(
    load: LoadRequest,
    step: SimDuration,
    tables: bool,
    policies: Option<Py<PyDict>>,
    on_warnings: Option<Py<PyAny>>,
    budget: Budget,
    signals: bool,
) -> Result<Ran, RunFailure> {
    // Without tables the run is what `kueuesim run` does for a summary: the workloads
    // streamed from the input, and each let go of as it finishes (`Simulation::with_stream`).
    let mut loaded = load_world(load).map_err(RunFailure::Input)?;
    // The load's warnings go to Python before the run, as the command prints them before
    // its output: a caller whose warnings filter makes them errors stops here, before
    // spending the run.
    if let Some(f) = on_warnings {
        Python::attach(|py| -> PyResult<()> {
            if !loaded.warnings.is_empty() {
                f.call1(py, (PyList::new(py, &loaded.warnings)?,))?;
            }
            drop(f);
            Ok(())
        })
        .map_err(RunFailure::Python)?;
    }
    let stream = loaded.stream.take();
    let world = &loaded.world;
    let names = &world.config.policies;
    let hooks = Python::attach(|py| -> PyResult<Option<PyHooks>> {
        let policies = policies.as_ref().map(|d| d.bind(py));
        let order = bind_policy(policies, "queueOrder", &names.queue_order)?;
        let score = bind_policy(policies, "nodeScore", &names.node_score)?;
        if order.is_none() && score.is_none() {
            return Ok(None);
        }
        PyHooks::new(py, world, order, score).map(Some)
    })
    .map_err(RunFailure::Python)?;
    let mut watch = Watch::new(budget.max_wall.as_ref().map(|(_, d)| *d), signals);
    let mut sim = Simulation::new(world);
    let mut stream_error = None;
    match stream {
        Some(stream) => {
            stream_error = Some(stream.error());
            sim = sim.with_stream(stream);
        }
        None if tables => sim = sim.with_time_series(step),
        None => sim = sim.lean(),
    }
    if let Some(n) = budget.max_events {
        sim = sim.with_event_budget(n);
    }
    let hooks = hooks.map(|h| Rc::new(RefCell::new(h)));
    if let Some(h) = &hooks {
        sim = sim.with_hooks(h.clone());
    }
    let outcome = sim.run_with_progress(|_, _| watch.tick());
    let wall_seconds = watch.started.elapsed().as_secs_f64();
    let (hook_error, hook_calls) = match &hooks {
        Some(h) => {
            let mut h = h.borrow_mut();
            (h.error.take(), h.calls)
        }
        None => (None, 0),
    };
    // The policies' Python objects are let go of with the GIL held.
    Python::attach(|_| drop(hooks));
    if let Some(e) = watch.interrupt {
        return Err(RunFailure::Python(e));
    }
    if let Some(e) = hook_error {
        return Err(RunFailure::Python(e));
    }
    if let Some(e) = stream_error.and_then(|e| e.borrow_mut().take()) {
        return Err(RunFailure::Input(e));
    }
    // The summary now; the tables on first access (`Tables`), so that a caller who reads
    // only the summary (a sweep, a quick look) pays what `kueuesim run` pays for it.
    let mut summary = result_with(world, &outcome, false).summary;
    // The engine knows only that its caller stopped it; the wall-time budget is named here,
    // in the words of `kueuesim run --max-wall`.
    if watch.out_of_time
        && let Some(stop) = &mut summary.stopped_early
    {
        stop.reason = "MaxWallTime";
        stop.message = format!(
            "the run used its max_wall budget of {} at simulated {}",
            budget.max_wall.map(|(text, _)| text).unwrap_or_default(),
            SimDuration::from_millis(outcome.stats.end.millis())
        );
    }
    let summary = serde_json::to_value(&summary)
        .map_err(|e| RunFailure::Python(PyRuntimeError::new_err(e.to_string())))?;
    Ok(Ran {
        world: loaded.world,
        outcome,
        warnings: loaded.warnings,
        summary,
        hook_calls,
        wall_seconds,
    })
}

/// Whether the calling thread is Python's main thread, the one that runs signal handlers.
fn on_main_thread(py: Python<'_>) -> PyResult<bool> {
    let threading = py.import("threading")?;
    let current = threading.call_method0("current_thread")?;
    Ok(current.is(&threading.call_method0("main_thread")?))
}

/// Runs a scenario; see `kueuesim.run` (python/kueuesim/__init__.py) for the arguments;
/// `on_warnings`, when given, is called with the load's warnings (a list of `str`, when
/// there are any) after the load and before the run, and an exception it raises ends the
/// call. Returns a dict: `summary` (the `-o json` summary), `start_unix_ms` (the instant of
/// simulated time 0), `warnings`, `hook_calls`,
/// `wall_seconds` (the simulation alone) and `tables` (a `Tables`: the columns of each table,
/// built on first access).
/// The GIL is released from the load to the summary, so other Python threads run meanwhile.
#[pyfunction]
#[pyo3(signature = (paths, *, seed=None, until=None, patches=Vec::new(), sets=Vec::new(), policies=None, sample="10m", trace_root=None, strict=false, tables=true, max_events=None, max_wall=None, on_warnings=None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    seed: Option<u64>,
    until: Option<&str>,
    patches: Vec<PathBuf>,
    sets: Vec<String>,
    policies: Option<&Bound<'py, PyDict>>,
    sample: &str,
    trace_root: Option<PathBuf>,
    strict: bool,
    tables: bool,
    max_events: Option<u64>,
    max_wall: Option<&str>,
    on_warnings: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let step = duration(sample, "sample")?;
    if step <= SimDuration::ZERO {
        return Err(PyValueError::new_err(format!(
            "sample: {sample:?}: expected a positive duration (10m, 1h)"
        )));
    }
    let until = until.map(|u| duration(u, "until")).transpose()?;
    let budget = Budget::new(max_events, max_wall)?;
    let load = LoadRequest {
        paths,
        seed,
        until,
        patches,
        sets,
        trace_root,
        strict,
        stream: !tables,
    };
    let policies = policies.map(|d| d.clone().unbind());
    let signals = on_main_thread(py)?;
    let ran = py
        .detach(move || simulate(load, step, tables, policies, on_warnings, budget, signals))
        .map_err(|e| match e {
            RunFailure::Input(e) => input_error(py, e),
            RunFailure::Python(e) => e,
        })?;
    let out = PyDict::new(py);
    out.set_item("summary", json_to_py(py, &ran.summary)?)?;
    out.set_item("start_unix_ms", ran.world.config.start_unix_ms)?;
    out.set_item("warnings", PyList::new(py, &ran.warnings)?)?;
    out.set_item("hook_calls", ran.hook_calls)?;
    out.set_item("wall_seconds", ran.wall_seconds)?;
    if tables {
        let tables = Tables {
            world: ran.world,
            outcome: ran.outcome,
            doc: None,
            build_seconds: 0.0,
        };
        out.set_item("tables", Bound::new(py, tables)?)?;
    } else {
        out.set_item("tables", py.None())?;
    }
    Ok(out)
}

/// A run's world and outcome, kept so that each table is built when first asked for.
#[pyclass(unsendable)]
struct Tables {
    world: World,
    outcome: kueuesim_engine::Outcome,
    /// The `-o json` document with its workloads, for the workloads and pods tables.
    doc: Option<kueuesim_report::output::SimulationResult>,
    /// Seconds spent building columns so far (`Result.frames_seconds`).
    build_seconds: f64,
}

#[pymethods]
impl Tables {
    /// The columns of one table: `workloads`, `pods`, `events` or `timeseries`.
    fn table<'py>(&mut self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyList>> {
        #[allow(clippy::disallowed_methods)]
        let started = std::time::Instant::now();
        let clock = Clock {
            start_unix_ms: self.world.config.start_unix_ms,
        };
        let table = match name {
            "workloads" | "pods" => {
                let doc = self
                    .doc
                    .get_or_insert_with(|| result_with(&self.world, &self.outcome, true));
                if name == "workloads" {
                    workloads_table(doc, clock)?
                } else {
                    pods_table(doc, clock)?
                }
            }
            "events" => events_table(&self.world, &self.outcome)?,
            "timeseries" => timeseries_table(&self.world, &self.outcome)?,
            _ => return Err(PyValueError::new_err(format!("no table {name:?}"))),
        };
        let columns = table.into_py(py)?;
        self.build_seconds += started.elapsed().as_secs_f64();
        Ok(columns)
    }

    #[getter]
    fn build_seconds(&self) -> f64 {
        self.build_seconds
    }
}

/// Loads a scenario without running it; see `kueuesim.load`.
#[pyfunction]
#[pyo3(signature = (paths, *, seed=None, until=None, patches=Vec::new(), sets=Vec::new(), trace_root=None, strict=false))]
#[allow(clippy::too_many_arguments)]
fn load_scenario<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    seed: Option<u64>,
    until: Option<&str>,
    patches: Vec<PathBuf>,
    sets: Vec<String>,
    trace_root: Option<PathBuf>,
    strict: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let load = LoadRequest {
        paths,
        seed,
        until: until.map(|u| duration(u, "until")).transpose()?,
        patches,
        sets,
        trace_root,
        strict,
        stream: false,
    };
    // A trace of a million rows takes a while to read: other Python threads run meanwhile.
    let (world, warnings) = py
        .detach(move || load_world(load).map(|l| (l.world, l.warnings)))
        .map_err(|e| input_error(py, e))?;
    let w = &world;
    let out = PyDict::new(py);
    let text = |v: Vec<String>| Column::Text(v.into_iter().map(Some).collect());
    let gpu = w.resources.lookup(kueuesim_model::resources::GPU);
    let nodes = Table {
        names: vec!["name".into(), "gpus".into()],
        columns: vec![
            text(w.nodes.iter().map(|n| n.name.clone()).collect()),
            Column::I64(
                w.nodes
                    .iter()
                    .map(|n| {
                        gpu.and_then(|g| n.allocatable.get(g.index()).copied())
                            .unwrap_or(0)
                    })
                    .collect(),
            ),
        ],
    };
    let cqs = Table {
        names: vec!["name".into(), "queueingStrategy".into()],
        columns: vec![
            text(w.cluster_queues.iter().map(|c| c.name.clone()).collect()),
            text(
                w.cluster_queues
                    .iter()
                    .map(|c| format!("{:?}", c.queueing_strategy))
                    .collect(),
            ),
        ],
    };
    let lqs = Table {
        names: vec!["namespace".into(), "name".into(), "clusterQueue".into()],
        columns: vec![
            text(w.local_queues.iter().map(|l| l.namespace.clone()).collect()),
            text(w.local_queues.iter().map(|l| l.name.clone()).collect()),
            text(
                w.local_queues
                    .iter()
                    .map(|l| w.cluster_queue(l.cluster_queue).name.clone())
                    .collect(),
            ),
        ],
    };
    let ws = &w.workloads;
    let clock = Clock {
        start_unix_ms: w.config.start_unix_ms,
    };
    let wls = Table {
        names: [
            "namespace",
            "name",
            "kind",
            "localQueue",
            "priority",
            "createdAt",
            "duration",
            "pods",
            "gpus",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        columns: vec![
            text(ws.iter().map(|x| x.namespace.clone()).collect()),
            text(ws.iter().map(|x| x.name.clone()).collect()),
            text(ws.iter().map(|x| x.kind.clone()).collect()),
            Column::Text(ws.iter().map(|x| x.queue_name.clone()).collect()),
            Column::I64(ws.iter().map(|x| i64::from(x.priority)).collect()),
            Column::Instant(
                ws.iter()
                    .map(|x| clock.instant(x.created_at.millis()))
                    .collect::<PyResult<_>>()?,
            ),
            Column::Duration(
                ws.iter()
                    .map(|x| x.duration.map_or(NAT, |d| columns::duration(d.millis())))
                    .collect(),
            ),
            Column::I64(
                ws.iter()
                    .map(|x| x.pod_sets.iter().map(|p| i64::from(p.count)).sum())
                    .collect(),
            ),
            Column::F64(
                ws.iter()
                    .map(|x| {
                        x.pod_sets
                            .iter()
                            .map(|p| {
                                gpu.map_or(0, |g| p.requests.get(g)) as f64 * f64::from(p.count)
                            })
                            .sum()
                    })
                    .collect(),
            ),
        ],
    };
    out.set_item("nodes", nodes.into_py(py)?)?;
    out.set_item("cluster_queues", cqs.into_py(py)?)?;
    out.set_item("local_queues", lqs.into_py(py)?)?;
    out.set_item("workloads", wls.into_py(py)?)?;
    out.set_item(
        "flavors",
        w.flavors.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
    )?;
    out.set_item("seed", w.config.seed)?;
    out.set_item("start_unix_ms", w.config.start_unix_ms)?;
    out.set_item("until", w.config.until.map(|u| u.as_secs_f64()))?;
    let p = &w.config.policies;
    let policies = PyDict::new(py);
    policies.set_item("queueOrder", p.queue_order.as_ref().map(|r| r.name.clone()))?;
    policies.set_item("nodeScore", p.node_score.as_ref().map(|r| r.name.clone()))?;
    out.set_item("policies", policies)?;
    out.set_item("warnings", PyList::new(py, &warnings)?)?;
    Ok(out)
}

#[pymodule]
fn _kueuesim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(load_scenario, m)?)?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("PolicyError", py.get_type::<PolicyError>())?;
    m.add_class::<Tables>()?;
    m.add_class::<OrderRequest>()?;
    m.add_class::<NodeScoreRequest>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
