//! kueuesim's Python extension module (`kueuesim._kueuesim`): loads scenarios, runs them with
//! or without Python policies, and hands the results over as dicts and typed columns that
//! the pure-Python package (`python/kueuesim`) turns into DataFrames (docs/python.md).

/// mimalloc for the engine's allocations, as in the CLI (docs/performance.md): a run makes
/// and frees many small objects, and the module must match the CLI's time for the same work.
/// Python's own objects still come from its allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod columns;
mod hooks;

use std::cell::RefCell;
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

use columns::{Column, Table, json_to_py};
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

#[allow(clippy::too_many_arguments)]
fn load_world(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    seed: Option<u64>,
    until: Option<&str>,
    patches: Vec<PathBuf>,
    sets: Vec<String>,
    trace_root: Option<PathBuf>,
    strict: bool,
    stream: bool,
) -> PyResult<Loaded> {
    let run = || -> Result<Loaded, ScenarioError> {
        let files = if paths.is_empty() {
            default_scenario()
        } else {
            read_paths(&paths)?
        };
        let patches = if patches.is_empty() {
            Vec::new()
        } else {
            read_paths(&patches)?
        };
        let opts = LoadOptions {
            strict,
            trace_root,
            seed,
            stream,
            patches,
            sets,
        };
        load(&files, opts)
    };
    let mut loaded = run().map_err(|e| input_error(py, e))?;
    if let Some(u) = until {
        loaded.world.config.until = Some(SimTime::ZERO + duration(u, "until")?);
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

fn workloads_table(doc: &kueuesim_report::output::SimulationResult) -> Table {
    let names: Vec<String> = export::WORKLOAD_COLUMNS
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut rows = doc.workloads.iter().map(export::workload_cells);
    let Some(first) = rows.next() else {
        return Table::new(&names, |_| Column::Text(Vec::new()));
    };
    let mut t = Table::new(&names, |i| Column::for_cell(&first[i]));
    for row in std::iter::once(first).chain(rows) {
        for (c, cell) in t.columns.iter_mut().zip(row) {
            c.push(cell);
        }
    }
    t
}

/// One row per pod of the document's workloads: where it runs (`podSets[].pods[]`).
fn pods_table(doc: &kueuesim_report::output::SimulationResult) -> Table {
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
                bound.push(p.bound_at.unwrap_or(f64::NAN));
            }
        }
    }
    let mut columns: Vec<Column> = text.into_iter().map(Column::Text).collect();
    columns.push(Column::F64(bound));
    Table { names, columns }
}

fn events_table(world: &World, outcome: &kueuesim_engine::Outcome) -> Table {
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
        at.push(t.as_secs_f64());
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
    let mut columns = vec![Column::F64(at)];
    columns.extend(text.into_iter().map(Column::Text));
    columns.push(Column::F64(cycle));
    Table { names, columns }
}

fn timeseries_table(world: &World, outcome: &kueuesim_engine::Outcome) -> Table {
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
        time.push(s.at.as_secs_f64());
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
    let mut columns = vec![Column::F64(time)];
    columns.extend(counts.into_iter().map(Column::I64));
    columns.extend(figures.into_iter().map(Column::F64));
    Table { names, columns }
}

/// Runs a scenario; see `kueuesim.run` (python/kueuesim/__init__.py) for the arguments.
/// Returns a dict: `summary` (the `-o json` summary), `warnings`, `hook_calls`,
/// `wall_seconds` (the simulation alone) and `tables` (a `Tables`: the columns of each table,
/// built on first access).
#[pyfunction]
#[pyo3(signature = (paths, *, seed=None, until=None, patches=Vec::new(), sets=Vec::new(), policies=None, sample="10m", trace_root=None, strict=false, tables=true))]
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
) -> PyResult<Bound<'py, PyDict>> {
    let step = duration(sample, "sample")?;
    if step <= SimDuration::ZERO {
        return Err(PyValueError::new_err(format!(
            "sample: {sample:?}: expected a positive duration (10m, 1h)"
        )));
    }
    // Without tables the run is what `kueuesim run` does for a summary: the workloads
    // streamed from the input, and each let go of as it finishes (`Simulation::with_stream`).
    let mut loaded = load_world(
        py, paths, seed, until, patches, sets, trace_root, strict, !tables,
    )?;
    let stream = loaded.stream.take();
    let world = &loaded.world;
    let names = &world.config.policies;
    let order = bind_policy(policies, "queueOrder", &names.queue_order)?;
    let score = bind_policy(policies, "nodeScore", &names.node_score)?;
    #[allow(clippy::disallowed_methods)]
    let started = std::time::Instant::now();
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
    let hooks = if order.is_some() || score.is_some() {
        let h = Rc::new(RefCell::new(PyHooks::new(py, world, order, score)?));
        sim = sim.with_hooks(h.clone());
        Some(h)
    } else {
        None
    };
    let outcome = sim.run();
    let wall = started.elapsed().as_secs_f64();
    let mut hook_calls = 0;
    if let Some(h) = hooks {
        let mut h = h.borrow_mut();
        if let Some(e) = h.error.take() {
            return Err(e);
        }
        hook_calls = h.calls;
    }
    if let Some(e) = stream_error.and_then(|e| e.borrow_mut().take()) {
        return Err(input_error(py, e));
    }
    // The summary now; the tables on first access (`Tables`), so that a caller who reads
    // only the summary (a sweep, a quick look) pays what `kueuesim run` pays for it.
    let summary = result_with(world, &outcome, false).summary;
    let summary =
        serde_json::to_value(&summary).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let out = PyDict::new(py);
    out.set_item("summary", json_to_py(py, &summary)?)?;
    out.set_item("warnings", PyList::new(py, &loaded.warnings)?)?;
    out.set_item("hook_calls", hook_calls)?;
    out.set_item("wall_seconds", wall)?;
    if tables {
        let tables = Tables {
            world: loaded.world,
            outcome,
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
        let table = match name {
            "workloads" | "pods" => {
                let doc = self
                    .doc
                    .get_or_insert_with(|| result_with(&self.world, &self.outcome, true));
                if name == "workloads" {
                    workloads_table(doc)
                } else {
                    pods_table(doc)
                }
            }
            "events" => events_table(&self.world, &self.outcome),
            "timeseries" => timeseries_table(&self.world, &self.outcome),
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
    let loaded = load_world(
        py, paths, seed, until, patches, sets, trace_root, strict, false,
    )?;
    let w = &loaded.world;
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
            Column::F64(ws.iter().map(|x| x.created_at.as_secs_f64()).collect()),
            Column::F64(
                ws.iter()
                    .map(|x| x.duration.map_or(f64::NAN, |d| d.as_secs_f64()))
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
    out.set_item("until", w.config.until.map(|u| u.as_secs_f64()))?;
    let p = &w.config.policies;
    let policies = PyDict::new(py);
    policies.set_item("queueOrder", p.queue_order.as_ref().map(|r| r.name.clone()))?;
    policies.set_item("nodeScore", p.node_score.as_ref().map(|r| r.name.clone()))?;
    out.set_item("policies", policies)?;
    out.set_item("warnings", PyList::new(py, &loaded.warnings)?)?;
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
