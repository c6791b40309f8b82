//! Cluster objects a trace adapter generates from the trace's side tables, as YAML that the
//! loader then reads like the user's own files: openb's node list becomes Nodes, one
//! ResourceFlavor per GPU model and (on request) a ClusterQueue holding the nodes' capacity;
//! Philly's virtual-cluster table becomes a ClusterQueue and LocalQueue per virtual cluster and
//! the 8-GPU nodes behind their quota.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use crate::error::ScenarioError;
use crate::source::SourceFile;

use super::csv::{Row, cell_error, require_columns};
use super::root::open_csv;
use super::rows::{NAME_MAX, queue_name, trace_name};
use super::{GPU, GPU_MILLI, GPU_MODEL_LABEL, GpuSharing, TraceDecl, TraceFormat};
use kueuesim_model::names::shown;

/// The YAML files the traces of `decls` generate (none for a trace that asks for nothing).
pub(crate) fn generate(decls: &[TraceDecl]) -> Result<Vec<SourceFile>, ScenarioError> {
    let mut out = Vec::new();
    for d in decls {
        match d.format {
            TraceFormat::AlibabaOpenb => {
                if let Some(nodes) = &d.openb.nodes {
                    out.push(openb(d, nodes)?);
                }
            }
            TraceFormat::Philly => {
                if let Some(vcs) = &d.philly.vc_nodes {
                    out.push(philly(d, vcs)?);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// A ResourceFlavor name for a GPU model (`cpu-only` for none).
pub(crate) fn flavor_name(model: &str) -> String {
    if model.is_empty() {
        return "cpu-only".to_string();
    }
    model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// A non-negative integer cell up to `max` (`super::int_cell`), as i64.
fn int_cell(file: &str, row: &Row, i: usize, what: &str, max: u64) -> Result<i64, ScenarioError> {
    super::cells::int_cell(file, row, i, what, max).map(|n| n as i64)
}

/// The index of column `want` in a header already checked to hold it (`require_columns`).
fn column(names: &[String], want: &str) -> usize {
    names
        .iter()
        .position(|n| n == want)
        .expect("checked by require_columns")
}

/// One openb node shape: (cpu millicores, memory MiB, GPUs).
type Shape = (i64, i64, i64);

fn node_yaml(s: &mut String, name: &str, model: &str, shape: Shape, sharing: GpuSharing) {
    let (cpu, mem, gpus) = shape;
    let label = if model.is_empty() { "none" } else { model };
    let _ = write!(
        s,
        "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels:\n    {GPU_MODEL_LABEL}: \"{label}\"\nstatus:\n  allocatable:\n    cpu: \"{cpu}m\"\n    memory: \"{mem}Mi\"\n"
    );
    if gpus > 0 {
        match sharing {
            GpuSharing::Whole => {
                let _ = writeln!(s, "    {GPU}: \"{gpus}\"");
            }
            GpuSharing::Milli | GpuSharing::Device => {
                let _ = writeln!(s, "    {GPU_MILLI}: \"{}\"", gpus * 1000);
            }
        }
    }
}

/// openb: a Node per row of the node list (label `kueuesim.io/gpu-model`), `extraNodes` more
/// per model (the model's most common shape), a ResourceFlavor per model, and with
/// `clusterQueue` a ClusterQueue whose quota is every node's capacity plus its LocalQueue.
fn openb(d: &TraceDecl, path: &Path) -> Result<SourceFile, ScenarioError> {
    let mut r = open_csv(path)?;
    let file = r.file.clone();
    let header = r.header().clone();
    let names = r.names().to_vec();
    require_columns(
        &file,
        &header,
        &names,
        &["sn", "cpu_milli", "memory_mib", "gpu", "model"],
        "openb's node list",
    )?;
    let c_sn = column(&names, "sn");
    let c_cpu = column(&names, "cpu_milli");
    let c_mem = column(&names, "memory_mib");
    let c_gpu = column(&names, "gpu");
    let c_model = column(&names, "model");
    let mut s = format!("# Generated from {file} for WorkloadTrace {}.\n", d.name);
    // Models in order of first appearance, with their node shapes counted.
    let mut models: Vec<String> = Vec::new();
    let mut shapes: BTreeMap<String, BTreeMap<Shape, u32>> = BTreeMap::new();
    let mut totals: BTreeMap<String, (i64, i64, i64)> = BTreeMap::new();
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    let mut flavor_of: BTreeMap<String, String> = BTreeMap::new();
    while let Some(row) = r.next_row() {
        let row = row?;
        let sn = row.cell(c_sn).to_string();
        if sn.is_empty() {
            return Err(cell_error(
                &file,
                &row,
                c_sn,
                "empty node name: expected a name",
            ));
        }
        if let Some(first) = seen.insert(sn.clone(), row.line) {
            return Err(cell_error(
                &file,
                &row,
                c_sn,
                format!("duplicate node {}: first on line {first}", shown(&sn)),
            ));
        }
        // The node's name: the cell, mapped to a DNS-1123 subdomain (docs/traces.md, "Names").
        let node_name = trace_name(&sn, NAME_MAX).into_owned();
        let shape = (
            int_cell(&file, &row, c_cpu, "cpu_milli", 1 << 40)?,
            int_cell(&file, &row, c_mem, "memory_mib", 1 << 40)?,
            int_cell(&file, &row, c_gpu, "gpu", 1 << 20)?,
        );
        let model = row.cell(c_model).to_string();
        // A model is a label value on its nodes and names a ResourceFlavor (`flavor_name`):
        // one that is not a label value, or whose flavor name another model has, is refused.
        if !model.is_empty() {
            kueuesim_model::names::label_value(&model).map_err(|e| {
                cell_error(
                    &file,
                    &row,
                    c_model,
                    format!("model {}: {e}", shown(&model)),
                )
            })?;
            let flavor = flavor_name(&model);
            match flavor_of.get(&flavor) {
                Some(other) if *other != model => {
                    return Err(cell_error(
                        &file,
                        &row,
                        c_model,
                        format!(
                            "model {} has the ResourceFlavor name {flavor:?} of model {}: expected models that differ in more than case and punctuation",
                            shown(&model),
                            shown(other)
                        ),
                    ));
                }
                Some(_) => {}
                None => {
                    flavor_of.insert(flavor, model.clone());
                }
            }
        }
        if model.is_empty() != (shape.2 == 0) {
            return Err(cell_error(
                &file,
                &row,
                c_model,
                format!(
                    "model {model:?} with {} GPUs: expected a model exactly when the node has GPUs",
                    shape.2
                ),
            ));
        }
        if !models.contains(&model) {
            models.push(model.clone());
        }
        *shapes
            .entry(model.clone())
            .or_default()
            .entry(shape)
            .or_default() += 1;
        let t = totals.entry(model.clone()).or_default();
        t.0 += shape.0;
        t.1 += shape.1;
        t.2 += shape.2;
        node_yaml(&mut s, &node_name, &model, shape, d.openb.gpu_sharing);
    }
    for (model, n, pos) in &d.openb.extra_nodes {
        let Some(by_shape) = shapes.get(model) else {
            return Err(d.yaml_error(
                pos,
                format!(
                    "extraNodes names GPU model {model:?}, which no node of {file} has: expected one of {}",
                    models
                        .iter()
                        .filter(|m| !m.is_empty())
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        // The most common shape; the smallest among equally common ones.
        let shape = by_shape
            .iter()
            .max_by_key(|(s, c)| (**c, std::cmp::Reverse(**s)))
            .map(|(s, _)| *s)
            .expect("a model has nodes");
        for i in 0..*n {
            let name = format!("extra-{}-{i:05}", flavor_name(model));
            node_yaml(&mut s, &name, model, shape, d.openb.gpu_sharing);
        }
        let t = totals.entry(model.clone()).or_default();
        t.0 += shape.0 * i64::from(*n);
        t.1 += shape.1 * i64::from(*n);
        t.2 += shape.2 * i64::from(*n);
    }
    // CPU-only first, so CPU pods use CPU nodes before GPU nodes' flavors.
    models.sort_by_key(|m| !m.is_empty());
    for m in &models {
        let label = if m.is_empty() { "none" } else { m.as_str() };
        let _ = write!(
            s,
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: {}\nspec:\n  nodeLabels:\n    {GPU_MODEL_LABEL}: \"{label}\"\n",
            flavor_name(m)
        );
    }
    if let Some(cq) = &d.openb.cluster_queue {
        let gpu_res = match d.openb.gpu_sharing {
            GpuSharing::Whole => GPU,
            GpuSharing::Milli | GpuSharing::Device => GPU_MILLI,
        };
        let _ = write!(
            s,
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: \"{cq}\"\nspec:\n  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [cpu, memory, {gpu_res}]\n    flavors:\n"
        );
        for m in &models {
            let (cpu, mem, gpus) = totals[m];
            let gpus = match d.openb.gpu_sharing {
                GpuSharing::Whole => gpus,
                GpuSharing::Milli | GpuSharing::Device => gpus * 1000,
            };
            let _ = write!(
                s,
                "    - name: {}\n      resources:\n      - name: cpu\n        nominalQuota: \"{cpu}m\"\n      - name: memory\n        nominalQuota: \"{mem}Mi\"\n      - name: {gpu_res}\n        nominalQuota: \"{gpus}\"\n",
                flavor_name(m)
            );
        }
        let _ = write!(
            s,
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: \"{cq}\"\n  namespace: default\nspec:\n  clusterQueue: \"{cq}\"\n"
        );
    }
    Ok(SourceFile {
        name: format!("<generated from {file}>"),
        text: s,
    })
}

/// Philly: per virtual cluster (the table's, and any other the job list names, with
/// `defaultVcNodes`) a ClusterQueue in cohort `philly` with `nodes × 8` GPUs of nominal quota
/// and a LocalQueue of the same name in `default`; the nodes themselves (8 GPUs each); with
/// `extraNodes`, that many more nodes whose GPUs the cohort itself holds, lendable to every
/// virtual cluster.
fn philly(d: &TraceDecl, path: &Path) -> Result<SourceFile, ScenarioError> {
    let mut r = open_csv(path)?;
    let file = r.file.clone();
    let header = r.header().clone();
    let names = r.names().to_vec();
    require_columns(
        &file,
        &header,
        &names,
        &["vc", "node num"],
        "Philly's virtual-cluster table",
    )?;
    let c_vc = column(&names, "vc");
    let c_nodes = column(&names, "node num");
    let mut vcs: Vec<(String, i64)> = Vec::new();
    while let Some(row) = r.next_row() {
        let row = row?;
        // The virtual cluster's queues' name (docs/traces.md, "Names"); the job list's
        // `cluster` cells are mapped the same way (`rows::queue_name`).
        let vc = queue_name(row.cell(c_vc)).into_owned();
        if row.cell(c_vc).is_empty() {
            return Err(cell_error(
                &file,
                &row,
                c_vc,
                "empty vc: expected a virtual cluster id",
            ));
        }
        if vcs.iter().any(|(v, _)| *v == vc) {
            return Err(cell_error(
                &file,
                &row,
                c_vc,
                format!("duplicate vc {}", shown(row.cell(c_vc))),
            ));
        }
        vcs.push((vc, int_cell(&file, &row, c_nodes, "node num", 100_000)?));
    }
    // Virtual clusters of the job list missing from the table.
    let mut jobs = open_csv(&d.path)?;
    let jfile = jobs.file.clone();
    let jheader = jobs.header().clone();
    let jnames = jobs.names().to_vec();
    require_columns(&jfile, &jheader, &jnames, &["cluster"], "Philly's job list")?;
    let c_cluster = column(&jnames, "cluster");
    let mut missing: Vec<String> = Vec::new();
    while let Some(row) = jobs.next_row() {
        let row = row?;
        let raw = row.cell(c_cluster);
        if raw.is_empty() {
            continue;
        }
        let vc = queue_name(raw);
        if !vcs.iter().any(|(v, _)| *v == vc) && !missing.iter().any(|m| *m == vc) {
            missing.push(vc.into_owned());
        }
    }
    missing.sort();
    let default = i64::from(d.philly.default_vc_nodes);
    vcs.extend(missing.into_iter().map(|m| (m, default)));
    // What if the cluster had p % of its nodes: each virtual cluster's count, rounded half
    // up, at least one node (a VC keeps some quota of its own); extraNodes are not scaled.
    let pct = i64::from(d.philly.node_percent);
    if pct != 100 {
        for (_, n) in &mut vcs {
            *n = ((*n * pct + 50) / 100).max(1);
        }
    }
    let extra = i64::from(d.philly.extra_nodes);
    let total: i64 = vcs.iter().map(|(_, n)| n).sum::<i64>() + extra;
    let mut s = format!(
        "# Generated from {file} for WorkloadTrace {}: {} virtual clusters, {total} nodes.\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: philly-gpu\n",
        d.name,
        vcs.len()
    );
    for i in 0..total {
        let _ = write!(
            s,
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: philly-node-{i:05}\nstatus:\n  allocatable:\n    cpu: \"64\"\n    memory: 512Gi\n    {GPU}: \"8\"\n"
        );
    }
    if extra > 0 {
        let _ = write!(
            s,
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: philly\nspec:\n  resourceGroups:\n  - coveredResources: [{GPU}]\n    flavors:\n    - name: philly-gpu\n      resources:\n      - name: {GPU}\n        nominalQuota: \"{}\"\n",
            extra * 8
        );
    }
    for (vc, n) in &vcs {
        let _ = write!(
            s,
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: \"{vc}\"\nspec:\n  cohortName: philly\n  namespaceSelector: {{}}\n  preemption:\n    reclaimWithinCohort: Any\n  resourceGroups:\n  - coveredResources: [{GPU}]\n    flavors:\n    - name: philly-gpu\n      resources:\n      - name: {GPU}\n        nominalQuota: \"{}\"\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: \"{vc}\"\n  namespace: default\nspec:\n  clusterQueue: \"{vc}\"\n",
            n * 8
        );
    }
    Ok(SourceFile {
        name: format!("<generated from {file}>"),
        text: s,
    })
}
