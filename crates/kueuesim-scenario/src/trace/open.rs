//! Opening a trace against the built world: the columns of its format, its mappings'
//! values checked against the world's names, rows streamed or sorted by arrival.

use std::sync::Arc;

use kueuesim_model::{LocalQueueId, TopologyRequest, World};

use super::cells::philly_time;
use super::csv::{cell_error, require_columns};
use super::root::open_csv;
use super::{
    ATTRS, Attr, Columns, GPU, GPU_MILLI, GpuSharing, MapSource, Names, Rows, Source, TraceDecl,
    TraceFormat, TraceWorkloads,
};
use crate::error::{Pos, ScenarioError};

/// A topology mapping value: `required:<level>`, `preferred:<level>`, `unconstrained`, or
/// empty / `none`.
pub(super) fn topology(v: &str) -> Result<Option<TopologyRequest>, String> {
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
    pub(super) fn yaml_error(&self, pos: &Pos, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(pos.clone(), message, &self.yaml.text)
    }

    /// Checks a value a mapping writes in the YAML (a constant, a map value, a default, a
    /// random choice) against the world.
    pub(super) fn check_value(
        &self,
        attr: Attr,
        v: &str,
        pos: &Pos,
        names: &Names,
    ) -> Result<(), ScenarioError> {
        check_value(attr, v, names).map_err(|m| self.yaml_error(pos, m))
    }
}

pub(super) fn check_value(attr: Attr, v: &str, names: &Names) -> Result<(), String> {
    use kueuesim_model::names::{dns1123_label, dns1123_subdomain, shown};
    match attr {
        Attr::Namespace if v.is_empty() => Err("empty namespace: expected a name".into()),
        // A namespace is a DNS-1123 label, a LocalQueue's name a DNS-1123 subdomain (as the
        // API server and Kueue check them); a cell read as one is mapped first
        // (`rows::trace_value_name`), a value written in the YAML must be one.
        Attr::Namespace => dns1123_label(v).map_err(|e| format!("namespace {}: {e}", shown(v))),
        Attr::LocalQueue if !v.is_empty() => {
            dns1123_subdomain(v).map_err(|e| format!("LocalQueue {}: {e}", shown(v)))
        }
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
    // The header is the format's before anything else is said about it (or its cells are
    // named in a message): a file that is not a trace of the format is not shown.
    let required: &[&str] = match decl.format {
        TraceFormat::Native => &["arrival"],
        TraceFormat::AlibabaOpenb => &["name", "cpu_milli", "memory_mib", "num_gpu"],
        TraceFormat::Philly => &["timestamp", "duration", "num_gpus", "cluster"],
        TraceFormat::AlibabaDlrm => &[
            "instance_sn",
            "app_name",
            "cpu_request",
            "gpu_request",
            "memory_request",
            "creation_time",
            "scheduled_time",
            "deletion_time",
        ],
    };
    require_columns(
        &file,
        &header,
        &names_of,
        required,
        &format!("the {} trace format", decl.format.name()),
    )?;
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
    // A column of `required`, there since `require_columns` passed.
    let need = |n: &str| col(n).expect("checked by require_columns");
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
                    // A resource name, as everywhere: a qualified name.
                    kueuesim_model::names::qualified_name(r).map_err(|e| {
                        cell_error(
                            &file,
                            &header,
                            i,
                            format!("resource name {}: {e}", kueuesim_model::names::shown(r)),
                        )
                    })?;
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
                arrival: need("arrival"),
                name: col("name"),
                own,
                pods: col("pods"),
                min_member: col("minMember"),
                duration: col("duration"),
                requests,
            }
        }
        TraceFormat::AlibabaOpenb => Columns::Openb {
            name: need("name"),
            cpu: need("cpu_milli"),
            memory: need("memory_mib"),
            gpu: need("num_gpu"),
            gpu_milli: col("gpu_milli"),
            gpu_spec: col("gpu_spec"),
            creation: col("creation_time"),
            scheduled: col("scheduled_time"),
            deletion: col("deletion_time"),
        },
        TraceFormat::Philly => Columns::Philly {
            timestamp: need("timestamp"),
            duration: need("duration"),
            gpus: need("num_gpus"),
            cluster: need("cluster"),
            zero_ms: 0,
        },
        TraceFormat::AlibabaDlrm => Columns::Dlrm {
            name: need("instance_sn"),
            app: need("app_name"),
            cpu: need("cpu_request"),
            gpu: need("gpu_request"),
            memory: need("memory_request"),
            creation: need("creation_time"),
            scheduled: need("scheduled_time"),
            deletion: need("deletion_time"),
        },
    };
    let mut t = TraceWorkloads {
        file: file.clone(),
        path: decl.path.clone(),
        format: decl.format,
        rows: Rows::Sorted {
            rows: Vec::new().into(),
            at: 0,
        },
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
        gpu_milli: if decl.openb.gpu_sharing != GpuSharing::Whole {
            world.resources.intern(GPU_MILLI)
        } else {
            world.resources.intern(GPU)
        },
        default_gang: Arc::default(),
        inflated: false,
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
        // Every arrival is read first, in file order, so the first bad cell is the one
        // reported; the sort then reads each again into small cached keys (arrival, file
        // index) and moves each row once.
        for r in &rows {
            t.arrival_ms(r)?;
        }
        rows.sort_by_cached_key(|r| (t.arrival_ms(r).unwrap_or(i64::MAX), r.index));
        t.rows = Rows::Sorted {
            rows: rows.into(),
            at: 0,
        };
    } else if decl.format == TraceFormat::AlibabaOpenb
        && (decl.openb.gpu_sharing == GpuSharing::Device || decl.openb.inflate.is_some())
    {
        // Device bookkeeping wants the whole pod list (the target workload of the
        // fragmentation figures), and so does the FGD simulator's workload tuning.
        let mut rows = Vec::new();
        while let Some(r) = reader.next_row() {
            rows.push(r?);
        }
        let mut shapes = Vec::with_capacity(rows.len());
        for r in &rows {
            shapes.push(t.openb_shape(r)?);
        }
        if decl.openb.gpu_sharing == GpuSharing::Device {
            world.config.gpu.devices = true;
            world.config.gpu.target = kueuesim_model::gpu::target_workload(shapes.iter().copied());
        }
        if let Some((ratio, seed)) = decl.openb.inflate {
            let seed = seed.unwrap_or(t.seed);
            rows = inflate(world, rows, &shapes, ratio, seed);
            t.inflated = true;
        }
        t.rows = Rows::Sorted {
            rows: rows.into(),
            at: 0,
        };
    } else {
        t.rows = Rows::Stream(reader);
    }
    Ok(t)
}

/// The FGD simulator's workload tuning with `--shuffle-pod` (`SortClusterPods`, then
/// `TunePodsByNodeTotalResource`): the pod list is shuffled; then, below the target GPU demand
/// (`ratio_milli`/1000 × the cluster's GPUs), pods drawn at random from the list are appended
/// until the next would pass it (by its per-GPU milli, as upstream checks); above it, pods drawn at random are removed until it is
/// reached. Rows are renumbered by their new position. Draws are splitmix64 from the seed
/// (upstream uses Go's math/rand: the same method, not the same draws).
fn inflate(
    world: &World,
    rows: Vec<super::csv::Row>,
    shapes: &[(i64, Option<kueuesim_model::gpu::GpuDemand>)],
    ratio_milli: u64,
    seed: u64,
) -> Vec<super::csv::Row> {
    use kueuesim_model::gpu::{GpuDemand, MILLI};
    let n = rows.len();
    if n == 0 {
        return rows;
    }
    let gpu = world.resources.lookup(GPU);
    let milli = world.resources.lookup(GPU_MILLI);
    let cluster: i64 = world
        .nodes
        .iter()
        .map(|node| {
            let of = |r: Option<kueuesim_model::ResourceId>| {
                r.and_then(|r| node.allocatable.get(r.index()).copied())
                    .unwrap_or(0)
            };
            of(gpu) * MILLI + of(milli)
        })
        .sum();
    let target = i128::from(cluster) * i128::from(ratio_milli) / 1000;
    let demand = |i: usize| i128::from(shapes[i].1.map_or(0, GpuDemand::total_milli));
    let mut total: i128 = (0..n).map(demand).sum();
    let mut picked: Vec<usize> = (0..n).collect();
    let mut k = 0u64;
    let mut next = |bound: usize| {
        k += 1;
        (super::rows::draw(seed, 0x1f6d_6e5a_u64, k) % bound as u64) as usize
    };
    // Fisher-Yates.
    for i in (1..picked.len()).rev() {
        let j = next(i + 1);
        picked.swap(i, j);
    }
    if total > target {
        while total > target && !picked.is_empty() {
            let at = next(picked.len());
            total -= demand(picked.remove(at));
        }
    } else {
        // Upstream checks the drawn pod's per-GPU milli (a whole GPU counts 1000 however many
        // it asks) before adding its whole demand: kept as is.
        let per_gpu = |i: usize| i128::from(shapes[i].1.map_or(0, GpuDemand::milli_per_device));
        loop {
            let i = next(n);
            if total + per_gpu(i) > target {
                break;
            }
            total += demand(i);
            picked.push(i);
        }
    }
    picked
        .into_iter()
        .enumerate()
        .map(|(pos, i)| {
            let mut r = rows[i].clone();
            r.index = pos as u64;
            r
        })
        .collect()
}
