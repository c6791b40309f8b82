//! `kueuesim.io/v1alpha1` WorkloadTrace: CSV traces (our native format, and adapters for the
//! public Alibaba openb, Philly and Alibaba DLRM traces) read row by row into `Workload`s with
//! every reference resolved, the trace root that finds their files, and the mappings that give
//! trace rows their namespace, LocalQueue, priority class, scheduler and topology request.
//!
//! A trace is read in two steps because its workloads refer to objects the rest of the
//! scenario defines: `declarations` checks the WorkloadTrace objects and finds their files
//! before the scenario is built (an adapter may generate cluster objects from a trace's side
//! tables, `generate`), and `open` makes a self-contained iterator once the world exists.

mod csv;
mod generate;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_saphyr::Spanned;

use kueuesim_model::time::parse_rfc3339;
use kueuesim_model::{
    GangSpec, Labels, LocalQueueId, PodSet, QueueRef, ResourceId, ResourceList, SimDuration,
    SimTime, TopologyRequest, Workload, World, resource_amount,
};

use crate::convert::core::{LoadOptions, err_at, pos_of};
use crate::error::{Pos, ScenarioError};
use crate::source::{ObjectText, SourceFile, yaml_error};
use crate::wire;

use self::csv::{CsvReader, Row, cell_error};

pub(crate) use self::generate::generate;

/// The trace root used when neither `--trace-root` nor `KUEUESIM_TRACE_ROOT` is given: the
/// `shared/traces` directory beside the checkout (`/work/shared/traces` for `/work/main`).
pub const DEFAULT_TRACE_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces");

/// The environment variable naming a trace root.
pub const TRACE_ROOT_ENV: &str = "KUEUESIM_TRACE_ROOT";

/// The node label that carries an openb node's GPU model (`none` on CPU-only nodes).
pub const GPU_MODEL_LABEL: &str = "kueuesim.io/gpu-model";

/// The resource a GPU-sharing openb pod requests with `gpuSharing: milli` (thousandths of a
/// GPU; a node offers 1000 per GPU).
pub const GPU_MILLI: &str = "kueuesim.io/gpu-milli";

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
    /// nodes offer 1000 per GPU.
    Milli,
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
}

/// `spec.philly`, checked.
#[derive(Clone, Debug)]
pub(crate) struct PhillyDecl {
    pub(crate) vc_nodes: Option<PathBuf>,
    pub(crate) default_vc_nodes: u32,
    pub(crate) extra_nodes: u32,
}

/// Finds `s` (a trace path of the YAML file `src`): as is when absolute; else in the YAML
/// file's directory, then under `--trace-root`, then under `$KUEUESIM_TRACE_ROOT`, then under
/// the default trace root. Not found: an error at the value listing every place looked.
fn find_file(
    src: &ObjectText<'_>,
    s: &wire::S,
    opts: &LoadOptions,
) -> Result<PathBuf, ScenarioError> {
    let rel = Path::new(s.value.trim());
    if s.value.trim().is_empty() {
        return Err(err_at(src, s, "empty path: expected a CSV file"));
    }
    let mut places: Vec<(PathBuf, &str)> = Vec::new();
    if rel.is_absolute() {
        places.push((rel.to_path_buf(), "absolute path"));
    } else {
        let dir = Path::new(&src.file.name)
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        places.push((dir.join(rel), "the scenario file's directory"));
        if let Some(root) = &opts.trace_root {
            places.push((root.join(rel), "--trace-root"));
        }
        if let Some(root) = std::env::var_os(TRACE_ROOT_ENV).filter(|r| !r.is_empty()) {
            places.push((PathBuf::from(root).join(rel), "$KUEUESIM_TRACE_ROOT"));
        }
        places.push((
            Path::new(DEFAULT_TRACE_ROOT).join(rel),
            "the default trace root beside the checkout",
        ));
    }
    if let Some((p, _)) = places.iter().find(|(p, _)| p.is_file()) {
        return Ok(p.clone());
    }
    let list: Vec<String> = places
        .iter()
        .map(|(p, why)| format!("\n  - {} ({why})", p.display()))
        .collect();
    Err(err_at(
        src,
        s,
        format!(
            "trace file {:?} not found; looked in:{}\nexpected it under a trace root: pass --trace-root DIR or set {TRACE_ROOT_ENV}; docs/traces.md lists the public traces and how to fetch them",
            s.value.trim(),
            list.concat()
        ),
    ))
}

fn mapping(
    src: &ObjectText<'_>,
    what: &str,
    m: &wire::TraceMapping,
) -> Result<MapSource, ScenarioError> {
    let given = [m.value.is_some(), m.column.is_some(), !m.random.is_empty()];
    let n = given.iter().filter(|g| **g).count();
    let first = m
        .value
        .as_ref()
        .or(m.column.as_ref())
        .or(m.random.first().map(|w| &w.value));
    let Some(first) = first else {
        return Err(ScenarioError::at(
            src.kind_pos.clone(),
            format!("spec.{what} sets none of value, column, random: expected exactly one"),
            &src.file.text,
        ));
    };
    if n != 1 {
        return Err(err_at(
            src,
            first,
            format!(
                "spec.{what} sets more than one of value, column, random: expected exactly one"
            ),
        ));
    }
    if m.column.is_none() && (!m.map.is_empty() || m.default.is_some()) {
        return Err(err_at(
            src,
            first,
            format!("spec.{what}: map and default apply to a column: expected column with them"),
        ));
    }
    if let Some(v) = &m.value {
        return Ok(MapSource::Const(v.value.trim().to_string(), pos_of(src, v)));
    }
    if let Some(c) = &m.column {
        return Ok(MapSource::Column {
            name: c.value.trim().to_string(),
            name_pos: pos_of(src, c),
            map: m
                .map
                .iter()
                .map(|(k, v)| (k.clone(), (v.value.trim().to_string(), pos_of(src, v))))
                .collect(),
            default: m
                .default
                .as_ref()
                .map(|d| (d.value.trim().to_string(), pos_of(src, d))),
        });
    }
    let mut out = Vec::new();
    for w in &m.random {
        let weight = match &w.weight {
            None => 1,
            Some(x) if x.value >= 1 && x.value <= i64::from(u32::MAX) => x.value as u64,
            Some(x) => {
                return Err(err_at(
                    src,
                    x,
                    format!("weight {}: expected an integer ≥ 1", x.value),
                ));
            }
        };
        out.push((
            w.value.value.trim().to_string(),
            weight,
            pos_of(src, &w.value),
        ));
    }
    Ok(MapSource::Random(out))
}

fn one_of<T: Copy>(
    src: &ObjectText<'_>,
    s: Option<&wire::S>,
    what: &str,
    default: T,
    options: &[(&str, T)],
) -> Result<T, ScenarioError> {
    let Some(s) = s else { return Ok(default) };
    options
        .iter()
        .find(|(n, _)| *n == s.value.trim())
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
            err_at(
                src,
                s,
                format!(
                    "invalid {what} {:?}: expected one of {}",
                    s.value,
                    names.join(", ")
                ),
            )
        })
}

/// Checks the WorkloadTrace objects among `objects` and finds their files.
pub(crate) fn declarations(
    objects: &[ObjectText<'_>],
    opts: &LoadOptions,
) -> Result<Vec<TraceDecl>, ScenarioError> {
    let mut out: Vec<TraceDecl> = Vec::new();
    for src in objects {
        if src.kind != "WorkloadTrace"
            || src.api_version.rsplit_once('/').map(|(g, _)| g) != Some("kueuesim.io")
        {
            continue;
        }
        let t: wire::WorkloadTrace = serde_saphyr::from_str(&src.text)
            .map_err(|e| yaml_error(src.file, src.line_offset, &e))?;
        let name = match &t.metadata.name {
            Some(n) if !n.value.trim().is_empty() => n.value.trim().to_string(),
            _ => {
                return Err(ScenarioError::at(
                    src.kind_pos.clone(),
                    "WorkloadTrace has no metadata.name: expected a name",
                    &src.file.text,
                ));
            }
        };
        if let Some(first) = out.iter().find(|d| d.name == name) {
            return Err(ScenarioError::at(
                src.kind_pos.clone(),
                format!(
                    "duplicate WorkloadTrace {name:?}: first defined in {}",
                    first.yaml.name
                ),
                &src.file.text,
            ));
        }
        let spec = &t.spec;
        let Some(fmt) = &spec.format else {
            return Err(ScenarioError::at(
                src.kind_pos.clone(),
                "WorkloadTrace has no spec.format: expected native, alibaba-openb, philly or alibaba-dlrm",
                &src.file.text,
            ));
        };
        let format = one_of(
            src,
            Some(fmt),
            "format",
            TraceFormat::Native,
            &[
                ("native", TraceFormat::Native),
                ("alibaba-openb", TraceFormat::AlibabaOpenb),
                ("philly", TraceFormat::Philly),
                ("alibaba-dlrm", TraceFormat::AlibabaDlrm),
            ],
        )?;
        let Some(path) = &spec.path else {
            return Err(ScenarioError::at(
                src.kind_pos.clone(),
                "WorkloadTrace has no spec.path: expected the trace's CSV file",
                &src.file.text,
            ));
        };
        let path = find_file(src, path, opts)?;
        let limit = match &spec.limit {
            None => None,
            Some(l) if l.value >= 0 => Some(l.value as u64),
            Some(l) => {
                return Err(err_at(
                    src,
                    l,
                    format!("limit {}: expected a number of rows ≥ 0", l.value),
                ));
            }
        };
        let mut maps: [Option<MapSource>; 5] = Default::default();
        for (attr, what) in ATTRS {
            let m = match attr {
                Attr::Namespace => &spec.namespace,
                Attr::LocalQueue => &spec.local_queue,
                Attr::PriorityClass => &spec.priority_class,
                Attr::SchedulerName => &spec.scheduler_name,
                Attr::Topology => &spec.topology,
            };
            if let Some(m) = m {
                maps[attr as usize] = Some(mapping(src, what, m)?);
            }
        }
        let misplaced = |s: Option<&wire::S>, what: &str| -> Result<(), ScenarioError> {
            match s {
                Some(s) => Err(err_at(
                    src,
                    s,
                    format!(
                        "spec.{what} applies to another format than {}: expected it only with that format",
                        format.name()
                    ),
                )),
                None => Ok(()),
            }
        };
        let o = spec.openb.as_ref();
        let p = spec.philly.as_ref();
        if format != TraceFormat::AlibabaOpenb
            && let Some(o) = o
        {
            misplaced(
                o.nodes
                    .as_ref()
                    .or(o.gpu_sharing.as_ref())
                    .or(o.gpu_spec.as_ref())
                    .or(o.cluster_queue.as_ref())
                    .or(Some(fmt)),
                "openb",
            )?;
        }
        if format != TraceFormat::Philly
            && let Some(p) = p
        {
            misplaced(p.vc_nodes.as_ref().or(Some(fmt)), "philly")?;
        }
        let openb = OpenbDecl {
            nodes: match o.and_then(|o| o.nodes.as_ref()) {
                Some(n) => Some(find_file(src, n, opts)?),
                None => None,
            },
            gpu_sharing: one_of(
                src,
                o.and_then(|o| o.gpu_sharing.as_ref()),
                "openb.gpuSharing",
                GpuSharing::Whole,
                &[("whole", GpuSharing::Whole), ("milli", GpuSharing::Milli)],
            )?,
            gpu_spec: one_of(
                src,
                o.and_then(|o| o.gpu_spec.as_ref()),
                "openb.gpuSpec",
                GpuSpec::Exact,
                &[
                    ("exact", GpuSpec::Exact),
                    ("first", GpuSpec::First),
                    ("ignore", GpuSpec::Ignore),
                ],
            )?,
            cluster_queue: o
                .and_then(|o| o.cluster_queue.as_ref())
                .map(|c| c.value.trim().to_string()),
            extra_nodes: match o {
                None => Vec::new(),
                Some(o) => o
                    .extra_nodes
                    .iter()
                    .map(|(model, n)| {
                        if n.value < 0 || n.value > 100_000 {
                            return Err(err_at(
                                src,
                                n,
                                format!(
                                    "extraNodes {model}: {}: expected 0 to 100000 nodes",
                                    n.value
                                ),
                            ));
                        }
                        Ok((model.clone(), n.value as u32, pos_of(src, n)))
                    })
                    .collect::<Result<_, _>>()?,
            },
        };
        if openb.cluster_queue.is_some() && openb.nodes.is_none() {
            let c = o.and_then(|o| o.cluster_queue.as_ref()).expect("set");
            return Err(err_at(
                src,
                c,
                "openb.clusterQueue needs openb.nodes: its quota is the nodes' capacity",
            ));
        }
        if openb.nodes.is_none()
            && let Some((_, _, pos)) = openb.extra_nodes.first()
        {
            return Err(ScenarioError::at(
                pos.clone(),
                "openb.extraNodes needs openb.nodes: the extra nodes copy the node list's shapes",
                &src.file.text,
            ));
        }
        if let Some(p) = p
            && p.vc_nodes.is_none()
            && let Some(n) = p.default_vc_nodes.as_ref().or(p.extra_nodes.as_ref())
        {
            return Err(err_at(
                src,
                n,
                "philly.defaultVcNodes and philly.extraNodes need philly.vcNodes: they size the generated cluster",
            ));
        }
        let count = |s: Option<&Spanned<i64>>, default: u32| -> Result<u32, ScenarioError> {
            match s {
                None => Ok(default),
                Some(n) if n.value >= 0 && n.value <= 100_000 => Ok(n.value as u32),
                Some(n) => Err(err_at(
                    src,
                    n,
                    format!("{}: expected 0 to 100000 nodes", n.value),
                )),
            }
        };
        let philly = PhillyDecl {
            vc_nodes: match p.and_then(|p| p.vc_nodes.as_ref()) {
                Some(n) => Some(find_file(src, n, opts)?),
                None => None,
            },
            default_vc_nodes: count(p.and_then(|p| p.default_vc_nodes.as_ref()), 1)?,
            extra_nodes: count(p.and_then(|p| p.extra_nodes.as_ref()), 0)?,
        };
        out.push(TraceDecl {
            name,
            format,
            path,
            yaml: src.file.clone(),
            limit,
            seed: spec.seed,
            name_prefix: spec.name_prefix.clone(),
            maps,
            index: out.len() as u64,
            openb,
            philly,
        });
    }
    Ok(out)
}

/// Opens a trace file as a CSV reader.
fn open_csv(path: &Path) -> Result<CsvReader<BufReader<File>>, ScenarioError> {
    let shown = path.display().to_string();
    let f = File::open(path).map_err(|source| ScenarioError::Io {
        path: shown.clone(),
        source,
    })?;
    CsvReader::new(BufReader::with_capacity(1 << 16, f), shown)
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
/// are not in arrival order; they are small).
enum Rows {
    Stream(CsvReader<BufReader<File>>),
    Sorted(std::vec::IntoIter<Row>),
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
}

/// A cell's value as seconds (a decimal number) rounded to milliseconds.
fn seconds(file: &str, row: &Row, i: usize, what: &str) -> Result<i64, ScenarioError> {
    let v = row.cell(i);
    match v.parse::<f64>() {
        Ok(s) if (0.0..9.0e12).contains(&s) => Ok((s * 1000.0).round() as i64),
        _ => Err(cell_error(
            file,
            row,
            i,
            format!("{what} {v:?}: expected a number of seconds ≥ 0"),
        )),
    }
}

/// An optional cell as seconds (empty: None).
fn opt_seconds(
    file: &str,
    row: &Row,
    i: Option<usize>,
    what: &str,
) -> Result<Option<i64>, ScenarioError> {
    match i {
        Some(i) if !row.cell(i).is_empty() => Ok(Some(seconds(file, row, i, what)?)),
        _ => Ok(None),
    }
}

/// A native time cell: seconds (a decimal number) or a Go duration (`1h30m`).
fn native_time(file: &str, row: &Row, i: usize, what: &str) -> Result<i64, ScenarioError> {
    let v = row.cell(i);
    if v.parse::<f64>().is_ok() {
        return seconds(file, row, i, what);
    }
    SimDuration::parse(v).map(SimDuration::millis).map_err(|e| {
        cell_error(
            file,
            row,
            i,
            format!("{what} {v:?}: {e}; expected seconds or a Go duration such as 1h30m"),
        )
    })
}

/// A non-negative integer cell (a decimal point with zeros after it is accepted).
pub(super) fn int_cell(
    file: &str,
    row: &Row,
    i: usize,
    what: &str,
    max: u64,
) -> Result<u64, ScenarioError> {
    let v = row.cell(i);
    let whole = v.strip_suffix(".0").unwrap_or(v);
    match whole.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(cell_error(
            file,
            row,
            i,
            format!("{what} {v:?}: expected an integer from 0 to {max}"),
        )),
    }
}

/// A non-negative decimal cell.
fn decimal(file: &str, row: &Row, i: usize, what: &str) -> Result<f64, ScenarioError> {
    let v = row.cell(i);
    match v.parse::<f64>() {
        Ok(x) if (0.0..1.0e15).contains(&x) => Ok(x),
        _ => Err(cell_error(
            file,
            row,
            i,
            format!("{what} {v:?}: expected a number ≥ 0"),
        )),
    }
}

/// Philly's submit time, `YYYY-MM-DD HH:MM:SS` (UTC), as Unix milliseconds.
fn philly_time(file: &str, row: &Row, i: usize) -> Result<i64, ScenarioError> {
    let v = row.cell(i);
    parse_rfc3339(&format!("{}Z", v.replacen(' ', "T", 1))).map_err(|_| {
        cell_error(
            file,
            row,
            i,
            format!("timestamp {v:?}: expected YYYY-MM-DD HH:MM:SS"),
        )
    })
}

/// splitmix64: the per-row random draw of a mapping, from (seed, stream, row) only, so a
/// draw never depends on other draws or on the order rows are read.
fn draw(seed: u64, stream: u64, row: u64) -> u64 {
    let mut z =
        seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03) ^ row.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2 {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
    }
    z
}

/// A topology mapping value: `required:<level>`, `preferred:<level>`, `unconstrained`, or
/// empty / `none`.
fn topology(v: &str) -> Result<Option<TopologyRequest>, String> {
    let v = v.trim();
    if v.is_empty() || v == "none" {
        return Ok(None);
    }
    if v == "unconstrained" {
        return Ok(Some(TopologyRequest::Unconstrained));
    }
    match v.split_once(':') {
        Some(("required", l)) if !l.trim().is_empty() => {
            Ok(Some(TopologyRequest::Required(l.trim().to_string())))
        }
        Some(("preferred", l)) if !l.trim().is_empty() => {
            Ok(Some(TopologyRequest::Preferred(l.trim().to_string())))
        }
        _ => Err(format!(
            "topology {v:?}: expected required:<level label>, preferred:<level label>, unconstrained or none"
        )),
    }
}

impl TraceDecl {
    fn yaml_error(&self, pos: &Pos, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(pos.clone(), message, &self.yaml.text)
    }

    /// Checks a value a mapping writes in the YAML (a constant, a map value, a default, a
    /// random choice) against the world.
    fn check_value(
        &self,
        attr: Attr,
        v: &str,
        pos: &Pos,
        names: &Names,
    ) -> Result<(), ScenarioError> {
        check_value(attr, v, names).map_err(|m| self.yaml_error(pos, m))
    }
}

fn check_value(attr: Attr, v: &str, names: &Names) -> Result<(), String> {
    match attr {
        Attr::Namespace if v.is_empty() => Err("empty namespace: expected a name".into()),
        Attr::PriorityClass if !v.is_empty() && !names.priority_classes.contains_key(v) => {
            Err(format!(
                "priority class {v:?} is no WorkloadPriorityClass of the scenario: expected one of {}",
                names
                    .priority_classes
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
        Attr::SchedulerName if !names.schedulers.iter().any(|s| s == v) => Err(format!(
            "schedulerName {v:?} is run by no scheduler: expected one of {} (map more names in Simulation spec.schedulers)",
            names.schedulers.join(", ")
        )),
        Attr::Topology => topology(v).map(|_| ()),
        _ => Ok(()),
    }
}

/// Opens `decl`'s trace for reading against `world` (its queues, priority classes and
/// schedulers; the resources it requests are interned there).
pub fn open(decl: &TraceDecl, world: &mut World) -> Result<TraceWorkloads, ScenarioError> {
    let mut reader = open_csv(&decl.path)?;
    let file = reader.file.clone();
    let header = reader.header().clone();
    let names_of: Vec<String> = reader.names().to_vec();
    // A column named twice would leave one of them unread.
    for (i, n) in names_of.iter().enumerate() {
        if let Some(first) = names_of[..i].iter().position(|m| m == n) {
            return Err(cell_error(
                &file,
                &header,
                i,
                format!(
                    "column {n:?} appears twice (also column {}): expected unique column names",
                    first + 1
                ),
            ));
        }
    }
    let col = |n: &str| names_of.iter().position(|c| c == n);
    let need = |n: &str| {
        col(n).ok_or_else(|| {
            ScenarioError::at_line(
                Pos {
                    file: file.clone(),
                    line: header.line,
                    column: 1,
                },
                format!(
                    "no column {n:?}: expected the header of the {} format (docs/scenario-format.md)",
                    decl.format.name()
                ),
                &header.text,
            )
        })
    };
    let mut names = Names {
        schedulers: world
            .config
            .schedulers
            .iter()
            .map(|(n, _)| n.clone())
            .collect(),
        ..Names::default()
    };
    for (i, l) in world.local_queues.iter().enumerate() {
        names.local_queues.insert(
            (l.namespace.clone(), l.name.clone()),
            LocalQueueId::from_index(i),
        );
    }
    for p in world
        .priority_classes
        .iter()
        .filter(|p| !p.is_pod_priority_class)
    {
        names.priority_classes.insert(p.name.clone(), p.value);
    }
    // Mappings: columns resolved against the header, written values checked.
    let mut sources: [Option<Source>; 5] = Default::default();
    let mut mapped_columns: Vec<usize> = Vec::new();
    for (attr, _) in ATTRS {
        let Some(m) = &decl.maps[attr as usize] else {
            continue;
        };
        sources[attr as usize] = Some(match m {
            MapSource::Const(v, pos) => {
                decl.check_value(attr, v, pos, &names)?;
                Source::Const(v.clone())
            }
            MapSource::Column {
                name,
                name_pos,
                map,
                default,
            } => {
                let Some(c) = col(name) else {
                    return Err(decl.yaml_error(
                        name_pos,
                        format!(
                            "column {name:?} is not in the header of {file}: expected one of {}",
                            names_of.join(", ")
                        ),
                    ));
                };
                mapped_columns.push(c);
                for (v, pos) in map.values().chain(default.iter()) {
                    decl.check_value(attr, v, pos, &names)?;
                }
                Source::Column {
                    col: c,
                    map: map
                        .iter()
                        .map(|(k, (v, _))| (k.clone(), v.clone()))
                        .collect(),
                    default: default.as_ref().map(|(v, _)| v.clone()),
                }
            }
            MapSource::Random(choices) => {
                for (v, _, pos) in choices {
                    decl.check_value(attr, v, pos, &names)?;
                }
                Source::Random {
                    total: choices.iter().map(|c| c.1).sum(),
                    choices: choices.iter().map(|(v, w, _)| (v.clone(), *w)).collect(),
                }
            }
        });
    }
    let cols = match decl.format {
        TraceFormat::Native => {
            let mut own = [None; 5];
            for (attr, n) in [
                (Attr::Namespace, "namespace"),
                (Attr::LocalQueue, "queue"),
                (Attr::PriorityClass, "priorityClass"),
                (Attr::SchedulerName, "scheduler"),
                (Attr::Topology, "topology"),
            ] {
                own[attr as usize] = col(n);
            }
            let mut requests = Vec::new();
            for (i, n) in names_of.iter().enumerate() {
                let known = matches!(
                    n.as_str(),
                    "arrival"
                        | "name"
                        | "namespace"
                        | "queue"
                        | "priorityClass"
                        | "scheduler"
                        | "topology"
                        | "pods"
                        | "minMember"
                        | "duration"
                );
                if let Some(r) = n.strip_prefix("requests.") {
                    if r.is_empty() {
                        return Err(cell_error(
                            &file,
                            &header,
                            i,
                            "column \"requests.\" names no resource: expected requests.<resource>, e.g. requests.nvidia.com/gpu",
                        ));
                    }
                    requests.push((i, r.to_string(), world.resources.intern(r)));
                } else if !known && !mapped_columns.contains(&i) {
                    return Err(cell_error(
                        &file,
                        &header,
                        i,
                        format!(
                            "unknown column {n:?}: expected arrival, name, namespace, queue, priorityClass, scheduler, pods, minMember, duration, topology, requests.<resource>, or a column a mapping of the WorkloadTrace reads"
                        ),
                    ));
                }
            }
            Columns::Native {
                arrival: need("arrival")?,
                name: col("name"),
                own,
                pods: col("pods"),
                min_member: col("minMember"),
                duration: col("duration"),
                requests,
            }
        }
        TraceFormat::AlibabaOpenb => Columns::Openb {
            name: need("name")?,
            cpu: need("cpu_milli")?,
            memory: need("memory_mib")?,
            gpu: need("num_gpu")?,
            gpu_milli: col("gpu_milli"),
            gpu_spec: col("gpu_spec"),
            creation: col("creation_time"),
            scheduled: col("scheduled_time"),
            deletion: col("deletion_time"),
        },
        TraceFormat::Philly => Columns::Philly {
            timestamp: need("timestamp")?,
            duration: need("duration")?,
            gpus: need("num_gpus")?,
            cluster: need("cluster")?,
            zero_ms: 0,
        },
        TraceFormat::AlibabaDlrm => Columns::Dlrm {
            name: need("instance_sn")?,
            app: need("app_name")?,
            cpu: need("cpu_request")?,
            gpu: need("gpu_request")?,
            memory: need("memory_request")?,
            creation: need("creation_time")?,
            scheduled: need("scheduled_time")?,
            deletion: need("deletion_time")?,
        },
    };
    let mut t = TraceWorkloads {
        file: file.clone(),
        format: decl.format,
        rows: Rows::Sorted(Vec::new().into_iter()),
        cols,
        sources,
        names,
        seed: decl.seed.unwrap_or(world.config.seed),
        stream: decl.index,
        limit: decl.limit,
        produced: 0,
        name_prefix: decl.name_prefix.clone().unwrap_or_default(),
        trace_name: decl.name.clone(),
        last: None,
        gpu_sharing: decl.openb.gpu_sharing,
        gpu_spec: decl.openb.gpu_spec,
        cpu: world.resources.intern("cpu"),
        memory: world.resources.intern("memory"),
        gpu: world.resources.intern(GPU),
        gpu_milli: if decl.openb.gpu_sharing == GpuSharing::Milli {
            world.resources.intern(GPU_MILLI)
        } else {
            world.resources.intern(GPU)
        },
        default_gang: Arc::default(),
    };
    // Philly and DLRM files are not in arrival order: read whole (the first `limit` rows),
    // then sorted by arrival, file order among equal arrivals.
    if matches!(decl.format, TraceFormat::Philly | TraceFormat::AlibabaDlrm) {
        let mut rows = Vec::new();
        while t.limit.is_none_or(|l| (rows.len() as u64) < l) {
            match reader.next_row() {
                None => break,
                Some(r) => rows.push(r?),
            }
        }
        if let Columns::Philly {
            timestamp, zero_ms, ..
        } = &mut t.cols
        {
            let mut zero = i64::MAX;
            for r in &rows {
                zero = zero.min(philly_time(&file, r, *timestamp)?);
            }
            *zero_ms = if zero == i64::MAX { 0 } else { zero };
        }
        let mut keyed = Vec::with_capacity(rows.len());
        for r in rows {
            keyed.push((t.arrival_ms(&r)?, r));
        }
        keyed.sort_by_key(|(a, r)| (*a, r.index));
        t.rows = Rows::Sorted(
            keyed
                .into_iter()
                .map(|(_, r)| r)
                .collect::<Vec<_>>()
                .into_iter(),
        );
    } else {
        t.rows = Rows::Stream(reader);
    }
    Ok(t)
}

/// One pod set of a row before it becomes a `PodSet`.
struct Shape {
    name: &'static str,
    count: u32,
    requests: Vec<(ResourceId, i64)>,
    node_selector: Vec<(String, String)>,
}

/// A row's workload before mappings and names are applied.
struct Draft {
    name: String,
    owner_kind: &'static str,
    owner: String,
    arrival_ms: i64,
    duration_ms: Option<i64>,
    shapes: Vec<Shape>,
    min_member: Option<u32>,
}

impl TraceWorkloads {
    /// A row's arrival, in ms from the trace's time 0.
    fn arrival_ms(&self, row: &Row) -> Result<i64, ScenarioError> {
        let f = &self.file;
        match &self.cols {
            Columns::Native { arrival, .. } => native_time(f, row, *arrival, "arrival"),
            Columns::Openb { creation, .. } => {
                Ok(opt_seconds(f, row, *creation, "creation_time")?.unwrap_or(0))
            }
            Columns::Philly {
                timestamp, zero_ms, ..
            } => Ok(philly_time(f, row, *timestamp)? - zero_ms),
            Columns::Dlrm { creation, .. } => {
                Ok(opt_seconds(f, row, Some(*creation), "creation_time")?.unwrap_or(0))
            }
        }
    }

    fn draft(&mut self, row: &Row) -> Result<Draft, ScenarioError> {
        let f = self.file.clone();
        let f = f.as_str();
        let arrival_ms = self.arrival_ms(row)?;
        let index = row.index;
        Ok(match &self.cols {
            Columns::Native {
                arrival,
                name,
                pods,
                min_member,
                duration,
                requests,
                ..
            } => {
                if let Some((prev, line)) = self.last
                    && arrival_ms < prev
                {
                    return Err(cell_error(
                        f,
                        row,
                        *arrival,
                        format!(
                            "arrival {:?} is before the previous row's (line {line}): expected the native format's rows in arrival order",
                            row.cell(*arrival)
                        ),
                    ));
                }
                self.last = Some((arrival_ms, row.line));
                let count = match pods {
                    Some(i) if !row.cell(*i).is_empty() => {
                        let n = int_cell(f, row, *i, "pods", u64::from(u32::MAX))?;
                        if n == 0 {
                            return Err(cell_error(f, row, *i, "pods 0: expected at least 1 pod"));
                        }
                        n as u32
                    }
                    _ => 1,
                };
                let min_member = match min_member {
                    Some(i) if !row.cell(*i).is_empty() => {
                        let n = int_cell(f, row, *i, "minMember", u64::from(count))?;
                        if n == 0 {
                            return Err(cell_error(
                                f,
                                row,
                                *i,
                                "minMember 0: expected 1 to the number of pods",
                            ));
                        }
                        Some(n as u32)
                    }
                    _ => None,
                };
                let duration_ms = match duration {
                    Some(i) if !row.cell(*i).is_empty() => {
                        Some(native_time(f, row, *i, "duration")?)
                    }
                    _ => None,
                };
                let mut reqs = Vec::new();
                for (i, r, id) in requests {
                    let v = row.cell(*i);
                    if v.is_empty() {
                        continue;
                    }
                    let q = kueuesim_model::Quantity::parse(v)
                        .map_err(|e| cell_error(f, row, *i, format!("{r} {v:?}: {e}")))?;
                    let a = resource_amount(r, &q)
                        .map_err(|e| cell_error(f, row, *i, format!("{r} {v:?}: {e}")))?;
                    reqs.push((*id, a));
                }
                let own_name = name.map(|i| row.cell(i)).filter(|n| !n.is_empty());
                let name = match own_name {
                    Some(n) => format!("{}{n}", self.name_prefix),
                    None => format!("{}{}-{index:06}", self.name_prefix, self.trace_name),
                };
                Draft {
                    owner: name.clone(),
                    name,
                    owner_kind: "Job",
                    arrival_ms,
                    duration_ms,
                    shapes: vec![Shape {
                        name: "main",
                        count,
                        requests: reqs,
                        node_selector: Vec::new(),
                    }],
                    min_member,
                }
            }
            Columns::Openb {
                name,
                cpu,
                memory,
                gpu,
                gpu_milli,
                gpu_spec,
                scheduled,
                deletion,
                ..
            } => {
                let cpu_milli = int_cell(f, row, *cpu, "cpu_milli", 1 << 40)? as i64;
                let mem = int_cell(f, row, *memory, "memory_mib", 1 << 40)? as i64;
                let gpus = int_cell(f, row, *gpu, "num_gpu", 1 << 20)? as i64;
                let milli = match gpu_milli {
                    Some(i) if !row.cell(*i).is_empty() => {
                        int_cell(f, row, *i, "gpu_milli", 1000)? as i64
                    }
                    _ => 0,
                };
                let mut reqs = Vec::new();
                if cpu_milli > 0 {
                    reqs.push((self.cpu, cpu_milli));
                }
                if mem > 0 {
                    reqs.push((self.memory, mem * 1024 * 1024));
                }
                if gpus > 0 {
                    match self.gpu_sharing {
                        GpuSharing::Whole => reqs.push((self.gpu, gpus)),
                        GpuSharing::Milli => {
                            let share = if gpus == 1 && milli > 0 {
                                milli
                            } else {
                                gpus * 1000
                            };
                            reqs.push((self.gpu_milli, share));
                        }
                    }
                }
                let mut node_selector = Vec::new();
                if let Some(i) = gpu_spec {
                    let mut models: Vec<&str> = row
                        .cell(*i)
                        .split('|')
                        .map(str::trim)
                        .filter(|m| !m.is_empty())
                        .collect();
                    let first = models.first().copied();
                    models.sort_unstable();
                    models.dedup();
                    let chosen = match (self.gpu_spec, models.len()) {
                        (_, 0) | (GpuSpec::Ignore, _) => None,
                        (_, 1) => first,
                        (GpuSpec::First, _) => first,
                        (GpuSpec::Exact, _) => {
                            return Err(cell_error(
                                f,
                                row,
                                *i,
                                format!(
                                    "gpu_spec {:?} allows several GPU models, which a nodeSelector cannot express: expected one model, or set spec.openb.gpuSpec to first or ignore",
                                    row.cell(*i)
                                ),
                            ));
                        }
                    };
                    if let Some(m) = chosen {
                        node_selector.push((GPU_MODEL_LABEL.to_string(), m.to_string()));
                    }
                }
                let deleted = opt_seconds(f, row, *deletion, "deletion_time")?;
                let started = opt_seconds(f, row, *scheduled, "scheduled_time")?;
                let duration_ms = match deleted {
                    None => None,
                    Some(d) => {
                        let from = started.unwrap_or(arrival_ms);
                        if d < from {
                            return Err(cell_error(
                                f,
                                row,
                                deletion.expect("deleted"),
                                format!(
                                    "deletion_time {:?} is before the pod started: expected it at or after scheduled_time (or creation_time)",
                                    row.cell(deletion.expect("deleted"))
                                ),
                            ));
                        }
                        Some(d - from)
                    }
                };
                let pod = row.cell(*name);
                if pod.is_empty() {
                    return Err(cell_error(f, row, *name, "empty pod name: expected a name"));
                }
                Draft {
                    name: format!("{}{pod}", self.name_prefix),
                    owner_kind: "Pod",
                    owner: pod.to_string(),
                    arrival_ms,
                    duration_ms,
                    shapes: vec![Shape {
                        name: "main",
                        count: 1,
                        requests: reqs,
                        node_selector,
                    }],
                    min_member: None,
                }
            }
            Columns::Philly { duration, gpus, .. } => {
                let g = int_cell(f, row, *gpus, "num_gpus", 1 << 20)? as u32;
                if g == 0 {
                    return Err(cell_error(
                        f,
                        row,
                        *gpus,
                        "num_gpus 0: expected at least 1 GPU",
                    ));
                }
                let d = seconds(f, row, *duration, "duration")?;
                // A job of more than 8 GPUs is a gang of 8-GPU pods (and one pod of the rest).
                let mut shapes = Vec::new();
                let (full, rest) = if g <= 8 { (0, g) } else { (g / 8, g % 8) };
                if full > 0 {
                    shapes.push(Shape {
                        name: "workers",
                        count: full,
                        requests: vec![(self.gpu, 8)],
                        node_selector: Vec::new(),
                    });
                }
                if rest > 0 {
                    shapes.push(Shape {
                        name: if full > 0 { "rest" } else { "main" },
                        count: 1,
                        requests: vec![(self.gpu, i64::from(rest))],
                        node_selector: Vec::new(),
                    });
                }
                let name = format!("{}{}-{index:06}", self.name_prefix, self.trace_name);
                Draft {
                    owner: name.clone(),
                    name,
                    owner_kind: "Job",
                    arrival_ms,
                    duration_ms: Some(d),
                    shapes,
                    min_member: None,
                }
            }
            Columns::Dlrm {
                name,
                app,
                cpu,
                gpu,
                memory,
                creation,
                scheduled,
                deletion,
            } => {
                let cpu_milli = (decimal(f, row, *cpu, "cpu_request")? * 1000.0).round() as i64;
                let gpus = int_cell(f, row, *gpu, "gpu_request", 1 << 20)? as i64;
                let mem = (decimal(f, row, *memory, "memory_request")? * 1024.0 * 1024.0 * 1024.0)
                    .round() as i64;
                let mut reqs = Vec::new();
                if cpu_milli > 0 {
                    reqs.push((self.cpu, cpu_milli));
                }
                if mem > 0 {
                    reqs.push((self.memory, mem));
                }
                if gpus > 0 {
                    reqs.push((self.gpu, gpus));
                }
                let created = opt_seconds(f, row, Some(*creation), "creation_time")?;
                let started = opt_seconds(f, row, Some(*scheduled), "scheduled_time")?;
                let deleted = opt_seconds(f, row, Some(*deletion), "deletion_time")?;
                // An instance created before the trace window is there from time 0; one still
                // alive at its end runs until the horizon.
                let duration_ms = match deleted {
                    None => None,
                    Some(d) => {
                        let from = started.or(created).unwrap_or(0);
                        if d < from {
                            return Err(cell_error(
                                f,
                                row,
                                *deletion,
                                format!(
                                    "deletion_time {:?} is before the instance started: expected it at or after scheduled_time",
                                    row.cell(*deletion)
                                ),
                            ));
                        }
                        Some(d - from)
                    }
                };
                let inst = row.cell(*name);
                if inst.is_empty() {
                    return Err(cell_error(
                        f,
                        row,
                        *name,
                        "empty instance_sn: expected a name",
                    ));
                }
                Draft {
                    name: format!("{}{inst}", self.name_prefix),
                    owner_kind: "Deployment",
                    owner: row.cell(*app).to_string(),
                    arrival_ms,
                    duration_ms,
                    shapes: vec![Shape {
                        name: "main",
                        count: 1,
                        requests: reqs,
                        node_selector: Vec::new(),
                    }],
                    min_member: None,
                }
            }
        })
    }

    /// The value of `attr` for `row`: its mapping, else the format's own column, else None.
    fn value(&self, attr: Attr, row: &Row) -> Result<Option<String>, ScenarioError> {
        let (v, cell) = match &self.sources[attr as usize] {
            Some(Source::Const(v)) => (v.clone(), None),
            Some(Source::Column { col, map, default }) => {
                let raw = row.cell(*col);
                match map.get(raw).or(default.as_ref()) {
                    Some(v) => (v.clone(), None),
                    None => (raw.to_string(), Some(*col)),
                }
            }
            Some(Source::Random { choices, total }) => {
                let mut pick = draw(self.seed, self.stream * 8 + attr as u64, row.index) % total;
                let mut chosen = &choices[0].0;
                for (v, w) in choices {
                    if pick < *w {
                        chosen = v;
                        break;
                    }
                    pick -= w;
                }
                (chosen.clone(), None)
            }
            None => {
                let own = match (&self.cols, attr) {
                    (Columns::Native { own, .. }, _) => own[attr as usize],
                    (Columns::Philly { cluster, .. }, Attr::LocalQueue) => Some(*cluster),
                    _ => None,
                };
                match own {
                    Some(i) if !row.cell(i).is_empty() => (row.cell(i).to_string(), Some(i)),
                    _ => return Ok(None),
                }
            }
        };
        if let Some(i) = cell {
            check_value(attr, &v, &self.names).map_err(|m| cell_error(&self.file, row, i, m))?;
        }
        Ok(Some(v))
    }

    fn workload(&mut self, row: &Row) -> Result<Workload, ScenarioError> {
        let d = self.draft(row)?;
        let namespace = self
            .value(Attr::Namespace, row)?
            .unwrap_or_else(|| "default".to_string());
        let (queue, queue_name) = match self.value(Attr::LocalQueue, row)? {
            Some(q) => match self.names.local_queues.get(&(namespace.clone(), q.clone())) {
                Some(id) => (QueueRef::Local(*id), Some(q)),
                None => (QueueRef::Missing(q.clone()), Some(q)),
            },
            // Kueue's defaulting: the namespace's `default` LocalQueue, if any.
            None => match self
                .names
                .local_queues
                .get(&(namespace.clone(), "default".to_string()))
            {
                Some(id) => (QueueRef::Local(*id), Some("default".to_string())),
                None => (QueueRef::Unmanaged, None),
            },
        };
        let (priority_class, priority) = match self.value(Attr::PriorityClass, row)? {
            Some(p) if !p.is_empty() => {
                let v = self.names.priority_classes[&p];
                (Some(p), v)
            }
            // WorkloadPriorityClassDefaulting: the `default` class when it exists.
            _ => match self.names.priority_classes.get("default") {
                Some(v) => (Some("default".to_string()), *v),
                None => (None, 0),
            },
        };
        let scheduler_name = self
            .value(Attr::SchedulerName, row)?
            .unwrap_or_else(|| "default-scheduler".to_string());
        let topology_request = match self.value(Attr::Topology, row)? {
            Some(t) => topology(&t).unwrap_or(None),
            None => None,
        };
        let managed = queue != QueueRef::Unmanaged;
        let pod_sets = d
            .shapes
            .into_iter()
            .map(|s| {
                let mut shape_text = String::new();
                for (r, a) in &s.requests {
                    shape_text.push_str(&format!("{}={a};", r.index()));
                }
                for (k, v) in &s.node_selector {
                    shape_text.push_str(&format!("ns:{k}={v};"));
                }
                PodSet {
                    name: s.name.to_string(),
                    count: s.count,
                    min_count: None,
                    requests: ResourceList::from_pairs(s.requests),
                    node_selector: Labels::new(s.node_selector),
                    tolerations: Vec::new(),
                    priority_class_name: None,
                    spec_shape: shape_text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
                    }),
                    topology_request: topology_request.clone(),
                }
            })
            .collect();
        let at = SimTime::from_millis(d.arrival_ms);
        Ok(Workload {
            uid: format!("{namespace}/{}", d.name),
            namespace,
            kind: if managed {
                "Workload".into()
            } else {
                d.owner_kind.into()
            },
            owner: Some((d.owner_kind.into(), d.owner)),
            name: d.name,
            job_uid: None,
            queue,
            queue_name,
            priority_class,
            priority,
            scheduler_name,
            created_at: at,
            arrival: at,
            duration: d.duration_ms.map(SimDuration::from_millis),
            pod_sets,
            active: true,
            max_execution_time: None,
            initial_admission: None,
            last_eviction: None,
            creation_blocked: None,
            gang: match d.min_member {
                None => Arc::clone(&self.default_gang),
                Some(_) => Arc::new(GangSpec {
                    min_member: d.min_member,
                    ..GangSpec::default()
                }),
            },
        })
    }

    /// The trace's format.
    pub fn format(&self) -> TraceFormat {
        self.format
    }
}

impl Iterator for TraceWorkloads {
    type Item = Result<Workload, ScenarioError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.limit.is_some_and(|l| self.produced >= l) {
            return None;
        }
        let row = match &mut self.rows {
            Rows::Stream(r) => match r.next_row()? {
                Ok(row) => row,
                Err(e) => return Some(Err(e)),
            },
            Rows::Sorted(it) => it.next()?,
        };
        self.produced += 1;
        Some(self.workload(&row))
    }
}
