//! Opening a trace against the built world: the columns of its format, its mappings'
//! values checked against the world's names, rows streamed or sorted by arrival.

use std::sync::Arc;

use kueuesim_model::{LocalQueueId, TopologyRequest, World};

use super::cells::philly_time;
use super::csv::cell_error;
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
