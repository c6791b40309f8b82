//! `kueuesim.io/v1alpha1` WorkloadTrace: CSV traces (our native format, and adapters for the
//! public Alibaba openb, Philly and Alibaba DLRM traces) read row by row into `Workload`s with
//! every reference resolved, the trace root that finds their files, and the mappings that give
//! trace rows their namespace, LocalQueue, priority class, scheduler and topology request.
//!
//! A trace is read in two steps because its workloads refer to objects the rest of the
//! scenario defines: `declarations` checks the WorkloadTrace objects and finds their files
//! before the scenario is built (an adapter may generate cluster objects from a trace's side
//! tables, `generate`), and `open` makes a self-contained iterator once the world exists.

mod cells;
mod csv;
mod declare;
mod generate;
mod open;
mod root;
mod rows;

pub(crate) use self::declare::declarations;
pub(crate) use self::generate::generate;
pub use self::open::open;
pub use self::root::{
    DEFAULT_TRACE_ROOT_BESIDE_CHECKOUT, TRACE_ROOT_ENV, default_trace_root,
    trace_root_beside_checkout,
};

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::Arc;

use kueuesim_model::{GangSpec, LocalQueueId, ResourceId};

use self::csv::{CsvReader, Row};
use crate::error::Pos;
use crate::source::SourceFile;

/// The node label that carries an openb node's GPU model (`none` on CPU-only nodes).
pub const GPU_MODEL_LABEL: &str = "kueuesim.io/gpu-model";

/// The resource a GPU-sharing openb pod requests with `gpuSharing: milli` or `device`
/// (thousandths of a GPU; a node offers 1000 per GPU).
pub const GPU_MILLI: &str = kueuesim_model::gpu::GPU_MILLI;

/// The whole-GPU resource.
pub const GPU: &str = "nvidia.com/gpu";

/// A trace's format (`spec.format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// kueuesim's own columns (docs/scenario-format.md).
    Native,
    /// Alibaba GPU cluster trace v2023, cluster openb: one row per pod.
    AlibabaOpenb,
    /// Microsoft Philly via the Pollux job list: one row per job.
    Philly,
    /// Alibaba GPU v2025 disaggregated DLRM serving: one row per inference instance.
    AlibabaDlrm,
}

impl TraceFormat {
    fn name(self) -> &'static str {
        match self {
            TraceFormat::Native => "native",
            TraceFormat::AlibabaOpenb => "alibaba-openb",
            TraceFormat::Philly => "philly",
            TraceFormat::AlibabaDlrm => "alibaba-dlrm",
        }
    }
}

/// How an openb GPU-sharing pod (`gpu_milli` < 1000) is modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GpuSharing {
    /// It takes one whole `nvidia.com/gpu`, as without a GPU-sharing device plugin.
    Whole,
    /// Every GPU pod requests `kueuesim.io/gpu-milli` (its share, or 1000 per whole GPU) and
    /// nodes offer 1000 per GPU, pooled per node (an optimistic bound: a share may straddle
    /// GPUs).
    Milli,
    /// As `Milli`, and the GPUs are devices (`SimConfig::gpu`): whole GPUs take free devices,
    /// a share stays on one device; the trace's pods are the target workload of the
    /// fragmentation figures.
    Device,
}

/// What an openb pod's `gpu_spec` (allowed GPU models) becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GpuSpec {
    /// One model: a nodeSelector on it; several models: an error (a nodeSelector cannot say
    /// "any of").
    Exact,
    /// The first model listed.
    First,
    /// No constraint.
    Ignore,
}

/// The attributes a mapping can set, in `TraceDecl::maps` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attr {
    Namespace = 0,
    LocalQueue = 1,
    PriorityClass = 2,
    SchedulerName = 3,
    Topology = 4,
}

const ATTRS: [(Attr, &str); 5] = [
    (Attr::Namespace, "namespace"),
    (Attr::LocalQueue, "localQueue"),
    (Attr::PriorityClass, "priorityClass"),
    (Attr::SchedulerName, "schedulerName"),
    (Attr::Topology, "topology"),
];

/// Where a mapping takes its value.
#[derive(Clone, Debug)]
enum MapSource {
    /// The same value for every row.
    Const(String, Pos),
    /// A column's cell, through `map` (values not in it: `default`, else the cell itself).
    Column {
        name: String,
        name_pos: Pos,
        map: BTreeMap<String, (String, Pos)>,
        default: Option<(String, Pos)>,
    },
    /// A weighted choice, drawn per row from the seed, the trace and the row index.
    Random(Vec<(String, u64, Pos)>),
}

/// A checked WorkloadTrace object, with its files found. It owns everything it needs, so an
/// iterator over its rows can be made at any time once the world exists.
#[derive(Clone, Debug)]
pub struct TraceDecl {
    /// `metadata.name`.
    pub name: String,
    /// `spec.format`.
    pub format: TraceFormat,
    /// The trace file, as found under the trace root.
    pub path: PathBuf,
    /// The YAML file that declares it (for code frames of errors at its settings).
    yaml: SourceFile,
    limit: Option<u64>,
    seed: Option<u64>,
    name_prefix: Option<String>,
    maps: [Option<MapSource>; 5],
    /// Position of this trace among the scenario's traces (its random streams).
    index: u64,
    pub(crate) openb: OpenbDecl,
    pub(crate) philly: PhillyDecl,
    /// Every file the trace reads, as written and as found.
    files: Vec<TraceFile>,
}

/// A file a WorkloadTrace reads (its CSV, an adapter's side table): the path as written in
/// the YAML, where the trace root found it, and the YAML file that names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFile {
    /// The path as written (trimmed), relative to a trace root unless absolute.
    pub written: String,
    /// Where it was found (`crate::trace::root`'s order of places).
    pub found: PathBuf,
    /// The name of the YAML file whose WorkloadTrace names it.
    pub declared_in: String,
}

impl TraceDecl {
    /// Every file the trace reads, as written and as found.
    pub fn files(&self) -> &[TraceFile] {
        &self.files
    }
}

/// The files the WorkloadTraces of `files` read, with `opts`' overrides (`--patch`, `--set`)
/// of WorkloadTraces applied, as a load finds them, without building the scenario or reading
/// a trace: what a run elsewhere (`kueuesim sweep --emit kubernetes`) must carry along.
pub fn trace_files(
    files: &[SourceFile],
    opts: &crate::LoadOptions,
) -> Result<Vec<TraceFile>, crate::ScenarioError> {
    let set_files = crate::overlay::set_sources(&opts.sets);
    let mut overrides = crate::overlay::Overrides::read(&opts.patches, &set_files)?;
    let mut objects = Vec::new();
    for f in files {
        objects.extend(crate::source::split_objects(f)?);
    }
    let mut notes = Vec::new();
    overrides.apply(
        &mut objects,
        |k| crate::overlay::kind_matches(k, "WorkloadTrace"),
        &mut notes,
    )?;
    let decls = declarations(&objects, opts)?;
    Ok(decls.iter().flat_map(|d| d.files.iter().cloned()).collect())
}

impl TraceDecl {
    /// Whether its rows draw values from the run's seed (a random mapping, or openb's
    /// `inflate` sample, with no `spec.seed` of its own): they then differ from seed to seed.
    pub(crate) fn draws_from_run_seed(&self) -> bool {
        let random = self
            .maps
            .iter()
            .flatten()
            .any(|m| matches!(m, MapSource::Random(_)));
        let inflate = self.openb.inflate.is_some_and(|(_, seed)| seed.is_none());
        self.seed.is_none() && (random || inflate)
    }
}

/// `spec.openb`, checked.
#[derive(Clone, Debug)]
pub(crate) struct OpenbDecl {
    pub(crate) nodes: Option<PathBuf>,
    pub(crate) gpu_sharing: GpuSharing,
    pub(crate) gpu_spec: GpuSpec,
    pub(crate) cluster_queue: Option<String>,
    /// (GPU model, nodes, where written).
    pub(crate) extra_nodes: Vec<(String, u32, Pos)>,
    /// `inflate`: (ratio in thousandths, seed).
    pub(crate) inflate: Option<(u64, Option<u64>)>,
}

/// `spec.philly`, checked.
#[derive(Clone, Debug)]
pub(crate) struct PhillyDecl {
    pub(crate) vc_nodes: Option<PathBuf>,
    pub(crate) default_vc_nodes: u32,
    pub(crate) extra_nodes: u32,
    /// Every virtual cluster's nodes (and so its quota) scaled to this percent, at least 1.
    pub(crate) node_percent: u32,
}

/// The resolved mapping of one attribute.
#[derive(Clone, Debug)]
enum Source {
    Const(String),
    Column {
        col: usize,
        map: BTreeMap<String, String>,
        default: Option<String>,
    },
    Random {
        choices: Vec<(String, u64)>,
        total: u64,
    },
}

/// The column indices of a format.
#[derive(Clone, Debug)]
enum Columns {
    Native {
        arrival: usize,
        name: Option<usize>,
        own: [Option<usize>; 5],
        pods: Option<usize>,
        min_member: Option<usize>,
        duration: Option<usize>,
        /// `requests.<resource>` columns.
        requests: Vec<(usize, String, ResourceId)>,
    },
    Openb {
        name: usize,
        cpu: usize,
        memory: usize,
        gpu: usize,
        gpu_milli: Option<usize>,
        gpu_spec: Option<usize>,
        creation: Option<usize>,
        scheduled: Option<usize>,
        deletion: Option<usize>,
    },
    Philly {
        timestamp: usize,
        duration: usize,
        gpus: usize,
        cluster: usize,
        /// The earliest submit time of the file (its time 0), Unix ms.
        zero_ms: i64,
    },
    Dlrm {
        name: usize,
        app: usize,
        cpu: usize,
        gpu: usize,
        memory: usize,
        creation: usize,
        scheduled: usize,
        deletion: usize,
    },
}

/// Where the rows come from: streamed, or read whole and sorted by arrival (public files that
/// are not in arrival order; they are small), shared by the readers `rewound` makes.
enum Rows {
    Stream(CsvReader<BufReader<File>>),
    Sorted { rows: std::rc::Rc<[Row]>, at: usize },
}

/// Name lookups of the world, owned so the iterator borrows nothing.
#[derive(Clone, Debug, Default)]
struct Names {
    local_queues: BTreeMap<(String, String), LocalQueueId>,
    /// WorkloadPriorityClass name → value.
    priority_classes: BTreeMap<String, i32>,
    schedulers: Vec<String>,
}

/// The workloads of one trace, in arrival order, each with every reference resolved. Owns its
/// reader and settings.
pub struct TraceWorkloads {
    file: String,
    /// The trace file (a streamed trace is opened again by `rewound`).
    path: PathBuf,
    format: TraceFormat,
    rows: Rows,
    cols: Columns,
    sources: [Option<Source>; 5],
    names: Names,
    seed: u64,
    stream: u64,
    limit: Option<u64>,
    produced: u64,
    name_prefix: String,
    /// `metadata.name` of the WorkloadTrace: rows without a name are `<it>-<row index>`.
    trace_name: String,
    /// Arrival and line of the previous row (native: rows must be sorted).
    last: Option<(i64, u64)>,
    gpu_sharing: GpuSharing,
    gpu_spec: GpuSpec,
    cpu: ResourceId,
    memory: ResourceId,
    gpu: ResourceId,
    gpu_milli: ResourceId,
    /// The gang of a row that sets no gang size: one shared value (`Workload::gang`).
    default_gang: Arc<GangSpec>,
    /// openb `inflate`: rows were sampled and shuffled; each arrives at its position (in
    /// seconds), is named after it and never leaves.
    inflated: bool,
}
