//! WorkloadTrace objects checked before the scenario is built: spec and format settings,
//! files found, and the mappings that give rows their namespace, queue, priority class,
//! scheduler and topology request.

use std::path::PathBuf;

use serde_saphyr::Spanned;

use super::root::find_file;
use super::{
    ATTRS, Attr, GpuSharing, GpuSpec, MapSource, OpenbDecl, PhillyDecl, TraceDecl, TraceFile,
    TraceFormat,
};
use crate::convert::core::{LoadOptions, err_at, err_obj, pos_of};
use crate::convert::names;
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

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
        let t: wire::WorkloadTrace =
            crate::source::from_yaml(&src.text).map_err(|e| src.yaml_error(&e))?;
        names::object_meta(src, &t.metadata)?;
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
        // Row names are `<namePrefix><name cell>` or `<namePrefix><trace>-<row>` (the
        // longest, with the most rows a source may have): DNS-1123 subdomains, so the prefix
        // must make one (a name cell is mapped to fit behind it, `rows::trace_name`).
        let prefix = spec.name_prefix.as_ref().map_or("", |p| p.value.as_str());
        if let Some(at) = spec.name_prefix.as_ref().or(t.metadata.name.as_ref()) {
            names::generated(
                src,
                at,
                "workload names",
                &format!("{prefix}{name}-{}", kueuesim_model::limits::MAX_WORKLOADS),
                kueuesim_model::names::dns1123_subdomain,
            )?;
        }
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
        // Each file as written and as found (`TraceDecl::files`): an emitted Job carries
        // them to where the same written path finds them again.
        let mut files = Vec::new();
        let mut find = |s: &wire::S| -> Result<PathBuf, ScenarioError> {
            let found = find_file(src, s, opts)?;
            files.push(TraceFile {
                written: s.value.trim().to_string(),
                found: found.clone(),
                declared_in: src.file.name.clone(),
            });
            Ok(found)
        };
        let path = find(path)?;
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
                Some(n) => Some(find(n)?),
                None => None,
            },
            gpu_sharing: one_of(
                src,
                o.and_then(|o| o.gpu_sharing.as_ref()),
                "openb.gpuSharing",
                GpuSharing::Whole,
                &[
                    ("whole", GpuSharing::Whole),
                    ("milli", GpuSharing::Milli),
                    ("device", GpuSharing::Device),
                ],
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
            inflate: match o.and_then(|o| o.inflate.as_ref()) {
                None => None,
                Some(i) => {
                    let Some(r) = &i.ratio else {
                        return Err(err_obj(
                            src,
                            "spec.openb.inflate needs ratio: the GPU demand to reach, as a multiple of the cluster's GPUs (e.g. \"1.3\")",
                        ));
                    };
                    let thousandths = r
                        .value
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite() && *x > 0.0 && *x <= 100.0)
                        .map(|x| (x * 1000.0).round() as u64)
                        .filter(|&t| t > 0)
                        .ok_or_else(|| {
                            err_at(
                                src,
                                r,
                                format!(
                                    "openb.inflate.ratio {:?}: expected a number above 0 and at most 100, e.g. \"1.3\"",
                                    r.value
                                ),
                            )
                        })?;
                    Some((thousandths, i.seed))
                }
            },
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
                                    "extraNodes {}: {}: expected 0 to 100000 nodes",
                                    kueuesim_model::names::escaped(model),
                                    n.value
                                ),
                            ));
                        }
                        Ok((model.clone(), n.value as u32, pos_of(src, n)))
                    })
                    .collect::<Result<_, _>>()?,
            },
        };
        if let Some(c) = o.and_then(|o| o.cluster_queue.as_ref()) {
            names::reference(src, c, "openb.clusterQueue")?;
        }
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
                src.frame_for(pos),
            ));
        }
        if let Some(p) = p
            && p.vc_nodes.is_none()
            && let Some((key, n)) = [
                ("defaultVcNodes", &p.default_vc_nodes),
                ("extraNodes", &p.extra_nodes),
                ("nodePercent", &p.node_percent),
            ]
            .into_iter()
            .find_map(|(k, v)| v.as_ref().map(|n| (k, n)))
        {
            return Err(err_at(
                src,
                n,
                format!(
                    "philly.{key} needs philly.vcNodes: it sizes the cluster generated from the virtual-cluster table"
                ),
            ));
        }
        let node_percent = match p.and_then(|p| p.node_percent.as_ref()) {
            None => 100,
            Some(n) if (1..=1000).contains(&n.value) => n.value as u32,
            Some(n) => {
                return Err(err_at(
                    src,
                    n,
                    format!(
                        "philly.nodePercent {}: expected 1 to 1000 (percent of each virtual cluster's nodes)",
                        n.value
                    ),
                ));
            }
        };
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
                Some(n) => Some(find(n)?),
                None => None,
            },
            default_vc_nodes: count(p.and_then(|p| p.default_vc_nodes.as_ref()), 1)?,
            extra_nodes: count(p.and_then(|p| p.extra_nodes.as_ref()), 0)?,
            node_percent,
        };
        out.push(TraceDecl {
            name,
            format,
            path,
            yaml: src.file.clone(),
            limit,
            seed: spec.seed,
            name_prefix: spec.name_prefix.as_ref().map(|p| p.value.clone()),
            maps,
            index: out.len() as u64,
            openb,
            philly,
            files,
        });
    }
    Ok(out)
}
