//! Python callables as the engine's `Hooks`: each call gets a read-only request object and
//! returns data, which is checked here before the engine sees it. A callable that raises an
//! `Exception`, or returns something unusable (an unknown node, a node that cannot take the
//! pod, a score that is not a number), becomes a `PolicyError` kept until the run stops; the
//! engine takes its built-in decision for that one call, so nothing is left half-applied.
//! Any other `BaseException` (`KeyboardInterrupt`, `SystemExit`) is kept as itself and
//! stops the run the same way: it is no wrong decision but the program being stopped.

use std::collections::BTreeMap;
use std::sync::Arc;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use kueuesim_engine::hooks::{Hooks, OrderView, ScoreView};
use kueuesim_model::{ResourceId, Workload, World};

pyo3::create_exception!(
    _kueuesim,
    PolicyError,
    pyo3::exceptions::PyRuntimeError,
    "A Python policy raised an Exception, or returned a decision the engine cannot use."
);

/// What a queue-order policy is asked about a workload entering its ClusterQueue's queue.
#[pyclass(frozen, module = "kueuesim", get_all)]
pub(crate) struct OrderRequest {
    /// The workload's index in the run (arrival order).
    id: u32,
    namespace: String,
    name: String,
    kind: String,
    local_queue: Option<String>,
    cluster_queue: String,
    priority: i32,
    /// Seconds from the start.
    created_at: f64,
    /// The current simulated time, seconds.
    now: f64,
    /// The run time the input gives (`kueuesim.io/duration`, a trace's), seconds.
    duration: Option<f64>,
    pods: u64,
    gpus: f64,
    /// GPU-seconds held so far (attained service).
    attained_gpu_seconds: f64,
    evictions: usize,
}

/// What a node-score policy is asked about one pod: the pod, and the feasible nodes as numpy
/// arrays aligned with `candidates` (node indices).
#[pyclass(frozen, module = "kueuesim")]
pub(crate) struct NodeScoreRequest {
    #[pyo3(get)]
    id: u32,
    #[pyo3(get)]
    namespace: String,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    priority: i32,
    #[pyo3(get)]
    duration: Option<f64>,
    #[pyo3(get)]
    now: f64,
    #[pyo3(get)]
    pod_set: usize,
    #[pyo3(get)]
    pod: usize,
    #[pyo3(get)]
    request_gpus: i64,
    #[pyo3(get)]
    request_cpu_milli: i64,
    #[pyo3(get)]
    request_memory: i64,
    #[pyo3(get)]
    candidates: Py<PyAny>,
    #[pyo3(get)]
    free_gpus: Py<PyAny>,
    #[pyo3(get)]
    free_cpu_milli: Py<PyAny>,
    #[pyo3(get)]
    free_memory: Py<PyAny>,
    #[pyo3(get)]
    allocatable_gpus: Py<PyAny>,
    #[pyo3(get)]
    allocatable_cpu_milli: Py<PyAny>,
    #[pyo3(get)]
    allocatable_memory: Py<PyAny>,
    #[pyo3(get)]
    node_count: usize,
    names_src: Arc<Vec<String>>,
    idx: Vec<u32>,
}

#[pymethods]
impl NodeScoreRequest {
    /// The candidates' names, in `candidates` order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.idx
            .iter()
            .map(|&i| self.names_src[i as usize].clone())
            .collect()
    }
}

/// The Python policies of one run.
pub(crate) struct PyHooks {
    order: Option<(String, Py<PyAny>)>,
    score: Option<(String, Py<PyAny>)>,
    /// The first failure; the run stops after the step that met it.
    pub(crate) error: Option<PyErr>,
    frombuffer: Py<PyAny>,
    names: Arc<Vec<String>>,
    node_index: BTreeMap<String, u32>,
    gpu: Option<ResourceId>,
    cpu: Option<ResourceId>,
    memory: Option<ResourceId>,
    /// Calls made, for the cost figures (docs/python.md).
    pub(crate) calls: u64,
}

impl PyHooks {
    pub(crate) fn new(
        py: Python<'_>,
        world: &World,
        order: Option<(String, Py<PyAny>)>,
        score: Option<(String, Py<PyAny>)>,
    ) -> PyResult<PyHooks> {
        let names: Vec<String> = world.nodes.iter().map(|n| n.name.clone()).collect();
        let node_index = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as u32))
            .collect();
        Ok(PyHooks {
            order,
            score,
            error: None,
            frombuffer: py.import("numpy")?.getattr("frombuffer")?.unbind(),
            names: Arc::new(names),
            node_index,
            gpu: world.resources.lookup(kueuesim_model::resources::GPU),
            cpu: world.resources.lookup("cpu"),
            memory: world.resources.lookup("memory"),
            calls: 0,
        })
    }

    /// Records a failure of policy `name` (the first one only): a `PolicyError` with the
    /// policy's `Exception` as its cause, or, for a `BaseException` that is not an
    /// `Exception` (`KeyboardInterrupt` from Ctrl-C, `SystemExit` from `sys.exit()`), that
    /// exception itself, so that it propagates out of `run` as Python would propagate it.
    fn fail(&mut self, py: Python<'_>, name: &str, message: String, cause: Option<PyErr>) {
        if self.error.is_some() {
            return;
        }
        self.error = Some(match cause {
            Some(e) if !e.is_instance_of::<PyException>(py) => e,
            cause => {
                let e = PolicyError::new_err(format!("policy {name:?}: {message}"));
                e.set_cause(py, cause);
                e
            }
        });
    }

    fn array(&self, py: Python<'_>, v: &[i64]) -> PyResult<Py<PyAny>> {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
        self.frombuffer.call1(py, (PyBytes::new(py, &bytes), "i8"))
    }

    fn score_request(&self, py: Python<'_>, v: &ScoreView<'_>) -> PyResult<NodeScoreRequest> {
        let per = |r: Option<ResourceId>, f: &dyn Fn(ResourceId, kueuesim_model::NodeId) -> i64| {
            v.candidates
                .iter()
                .map(|&n| r.map_or(0, |r| f(r, n)))
                .collect::<Vec<i64>>()
        };
        let free = |r: Option<ResourceId>| per(r, &|r, n| v.nodes.free(n, r.index()));
        let alloc = |r: Option<ResourceId>| per(r, &|r, n| v.nodes.allocatable(n, r.index()));
        let req = |r: Option<ResourceId>| r.map_or(0, |r| v.needs.requests.get(r));
        let idx: Vec<u32> = v.candidates.iter().map(|n| n.0).collect();
        let cand: Vec<i64> = idx.iter().map(|&i| i64::from(i)).collect();
        Ok(NodeScoreRequest {
            id: v.id.0,
            namespace: v.workload.namespace.clone(),
            name: v.workload.name.clone(),
            priority: v.workload.priority,
            duration: v.workload.duration.map(|d| d.as_secs_f64()),
            now: v.now.as_secs_f64(),
            pod_set: v.pod_set,
            pod: v.pod,
            request_gpus: req(self.gpu),
            request_cpu_milli: req(self.cpu),
            request_memory: req(self.memory),
            candidates: self.array(py, &cand)?,
            free_gpus: self.array(py, &free(self.gpu))?,
            free_cpu_milli: self.array(py, &free(self.cpu))?,
            free_memory: self.array(py, &free(self.memory))?,
            allocatable_gpus: self.array(py, &alloc(self.gpu))?,
            allocatable_cpu_milli: self.array(py, &alloc(self.cpu))?,
            allocatable_memory: self.array(py, &alloc(self.memory))?,
            node_count: v.world.nodes.len(),
            names_src: self.names.clone(),
            idx,
        })
    }

    /// The scores a policy returned, checked: a sequence of one number per candidate, or a
    /// mapping node name → score (candidates left out are not used).
    fn read_scores(
        &self,
        py: Python<'_>,
        v: &ScoreView<'_>,
        ret: &Bound<'_, PyAny>,
        scores: &mut Vec<f64>,
    ) -> Result<(), BadScores> {
        let n = v.candidates.len();
        if let Ok(d) = ret.cast::<PyDict>() {
            scores.resize(n, f64::NEG_INFINITY);
            for (k, s) in d.iter() {
                let name: String = k
                    .extract()
                    .map_err(|_| format!("a key {k} is not a node name"))?;
                let Some(&node) = self.node_index.get(&name) else {
                    return Err(format!(
                        "returned a score for node {name:?}, which does not exist"
                    )
                    .into());
                };
                let Ok(i) = v.candidates.binary_search(&kueuesim_model::NodeId(node)) else {
                    let free = self
                        .gpu
                        .map_or(0, |g| v.nodes.free(kueuesim_model::NodeId(node), g.index()));
                    return Err(format!(
                        "returned a score for node {name:?}, which cannot take pod {} of {}/{} \
                         (over capacity or filtered out: {free} GPUs free, the pod requests {})",
                        v.pod,
                        v.workload.namespace,
                        v.workload.name,
                        self.gpu.map_or(0, |g| v.needs.requests.get(g))
                    )
                    .into());
                };
                scores[i] = s.extract().map_err(|e| {
                    BadScores::raised(py, e, || format!("the score of {name:?} is not a number"))
                })?;
            }
        } else {
            let np = py.import("numpy").map_err(|e| e.to_string())?;
            // numpy reads the answer through its own methods (`__len__`, `__getitem__`,
            // `__float__`, `__array__`): Python code of the policy's, which may raise anything.
            let arr = np
                .call_method1("ascontiguousarray", (ret, "f8"))
                .map_err(|e| {
                    let text = e.to_string();
                    BadScores::raised(py, e, || {
                        format!("expected a sequence of numbers or a dict of node → score: {text}")
                    })
                })?;
            let bytes = arr
                .call_method0("tobytes")
                .and_then(|b| b.extract::<Vec<u8>>())
                .map_err(|e| e.to_string())?;
            scores.extend(
                bytes
                    .chunks_exact(8)
                    .map(|c| f64::from_ne_bytes(c.try_into().expect("8 bytes"))),
            );
            if scores.len() != n {
                return Err(
                    format!("returned {} scores for {n} candidate nodes", scores.len()).into(),
                );
            }
        }
        if let Some(i) = scores
            .iter()
            .position(|s| s.is_nan() || *s == f64::INFINITY)
        {
            return Err(BadScores::Wrong(format!(
                "the score of node {:?} is {}: expected a finite number (or -inf: do not use)",
                self.names[v.candidates[i].index()],
                scores[i]
            )));
        }
        Ok(())
    }
}

/// Why a policy's scores were not used.
enum BadScores {
    /// A wrong answer, in words.
    Wrong(String),
    /// Reading the answer ran the policy's Python code, which raised a `BaseException` that
    /// is not an `Exception` (`KeyboardInterrupt`, `SystemExit`): it propagates as itself.
    Stopped(PyErr),
}

impl BadScores {
    /// `e` met while reading the answer: a wrong answer (`what`), unless it stops the program.
    fn raised(py: Python<'_>, e: PyErr, what: impl FnOnce() -> String) -> BadScores {
        if e.is_instance_of::<PyException>(py) {
            BadScores::Wrong(what())
        } else {
            BadScores::Stopped(e)
        }
    }
}

impl From<String> for BadScores {
    fn from(message: String) -> BadScores {
        BadScores::Wrong(message)
    }
}

fn duration_of(w: &Workload) -> Option<f64> {
    w.duration.map(|d| d.as_secs_f64())
}

impl Hooks for PyHooks {
    fn orders(&self) -> bool {
        self.order.is_some()
    }

    fn scores(&self) -> bool {
        self.score.is_some()
    }

    fn queue_order(&mut self, v: &OrderView<'_>) -> Option<f64> {
        if self.error.is_some() {
            return None;
        }
        self.calls += 1;
        Python::attach(|py| {
            let (name, f) = self.order.as_ref()?;
            let w = v.workload;
            let gpus = self.gpu.map_or(0.0, |g| {
                w.pod_sets
                    .iter()
                    .map(|p| p.requests.get(g) as f64 * f64::from(p.count))
                    .sum()
            });
            let req = OrderRequest {
                id: v.id.0,
                namespace: w.namespace.clone(),
                name: w.name.clone(),
                kind: w.kind.clone(),
                local_queue: w.queue_name.clone(),
                cluster_queue: v.world.cluster_queue(v.cluster_queue).name.clone(),
                priority: w.priority,
                created_at: w.created_at.as_secs_f64(),
                now: v.now.as_secs_f64(),
                duration: duration_of(w),
                pods: w.pod_sets.iter().map(|p| u64::from(p.count)).sum(),
                gpus,
                attained_gpu_seconds: v.attained_gpu_ms as f64 / 1000.0,
                evictions: v.evictions,
            };
            let name = name.clone();
            match f.call1(py, (req,)).and_then(|r| r.extract::<f64>(py)) {
                Ok(k) if !k.is_nan() => Some(k),
                Ok(_) => {
                    let msg = format!("returned NaN as the key of {}/{}", w.namespace, w.name);
                    self.fail(py, &name, msg, None);
                    None
                }
                Err(e) => {
                    let msg = format!("failed on workload {}/{}", w.namespace, w.name);
                    self.fail(py, &name, msg, Some(e));
                    None
                }
            }
        })
    }

    fn node_scores(&mut self, v: &ScoreView<'_>, scores: &mut Vec<f64>) -> Option<()> {
        if self.error.is_some() {
            return None;
        }
        self.calls += 1;
        Python::attach(|py| {
            let (name, f) = self.score.as_ref()?;
            let name = name.clone();
            let ret = self
                .score_request(py, v)
                .and_then(|req| f.call1(py, (req,)));
            let what = format!(
                "pod {} of pod set {} of {}/{}",
                v.pod, v.pod_set, v.workload.namespace, v.workload.name
            );
            match ret {
                Ok(r) => match self.read_scores(py, v, r.bind(py), scores) {
                    Ok(()) => Some(()),
                    Err(BadScores::Wrong(m)) => {
                        self.fail(py, &name, format!("{what}: {m}"), None);
                        None
                    }
                    Err(BadScores::Stopped(e)) => {
                        self.fail(py, &name, what, Some(e));
                        None
                    }
                },
                Err(e) => {
                    self.fail(py, &name, format!("failed on {what}"), Some(e));
                    None
                }
            }
        })
    }

    fn failed(&self) -> bool {
        self.error.is_some()
    }
}
