//! From parsed manifests to a `World`: names resolved to ids, quantities and durations parsed,
//! references checked, jobs turned into workloads as Kueue derives them, times laid out.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_saphyr::Spanned;

use kueuesim_model::time::{SimDuration, SimTime, parse_rfc3339};
use kueuesim_model::{
    ClusterQueue, ClusterQueueId, Cohort, CohortId, CreationBlocked, FlavorFungibility, FlavorId,
    FlavorQuotas, FungibilityPolicy, FungibilityPreference, InitialAdmission, LabelSelector,
    Labels, LocalQueue, LocalQueueId, Namespace, Node, PodSet, PodSetAdmission, Preemption,
    PreemptionPolicy, PriorityClass, QueueRef, QueueingStrategy, ResourceFlavor, ResourceGroup,
    ResourceList, ResourceQuota, SchedulerKind, SelectorOp, SelectorRequirement, SimConfig,
    StopPolicy, Taint, TaintEffect, Toleration, TolerationOp, Workload, World, resource_amount,
};

use kueuesim_model::topology::{HyperNodeError, TopologySource};
use kueuesim_model::{
    AdmissionFairSharing, BinpackArgs, FairSharingStrategy, GangSpec, HyperNodeMember,
    HyperNodeSpec, KaiQueue, KaiSubGroup, KaiTopologyConstraint, KueueConfig, NetworkTopology,
    NetworkTopologyAwareArgs, NodeId, NodeOrderWeights, PlacementStrategy, ProgressPolicy, TierRef,
    Topology, TopologyRequest, VolcanoConfig, VolcanoSubGroup, WaitForPodsReady,
};

use crate::error::{Pos, ScenarioError};
use crate::source::{ObjectText, SourceFile, split_objects, yaml_error};
use crate::stream::WorkloadStream;
use crate::wire;

/// The label that names a job's LocalQueue.
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
/// The label that names a job's WorkloadPriorityClass.
pub const PRIORITY_CLASS_LABEL: &str = "kueue.x-k8s.io/priority-class";
/// How long a workload runs once its pods run.
pub const DURATION_ANNOTATION: &str = "kueuesim.io/duration";
/// How much of it remains, for a workload already admitted in the input.
pub const REMAINING_ANNOTATION: &str = "kueuesim.io/remaining";
/// An arrival offset from the start; sets both arrival and creation time.
pub const ARRIVAL_ANNOTATION: &str = "kueuesim.io/arrival";
/// The name of the LocalQueue used for jobs that name none.
pub const DEFAULT_LOCAL_QUEUE: &str = "default";

/// Options of a load.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Unknown kinds are an error instead of a warning.
    pub strict: bool,
    /// `--trace-root`: where trace paths are looked for after the scenario file's directory
    /// (then `$KUEUESIM_TRACE_ROOT`, then the default root; see `trace::find_file`).
    pub trace_root: Option<std::path::PathBuf>,
    /// `--seed`: overrides Simulation `spec.seed`; applied before WorkloadGenerators and a
    /// trace's random mappings draw.
    pub seed: Option<u64>,
    /// Leave the workloads in `Loaded::stream` for the engine to pull
    /// (`Simulation::with_stream`) instead of collecting them into `world.workloads`.
    pub stream: bool,
}

/// A loaded scenario.
#[derive(Debug)]
pub struct Loaded {
    /// The world to simulate.
    pub world: World,
    /// Warnings for the user (skipped kinds, …), one line each.
    pub warnings: Vec<String>,
    /// The scenario's WorkloadTraces, checked; their workloads are already in
    /// `world.workloads` (`crate::trace::open` reads one again, row by row).
    pub traces: Vec<crate::trace::TraceDecl>,
    /// With `LoadOptions::stream`: every workload, in arrival order, still to be read
    /// (`world.workloads` is then empty).
    pub stream: Option<WorkloadStream>,
}

/// Loads every object of `files` into a world.
pub fn load(files: &[SourceFile], opts: LoadOptions) -> Result<Loaded, ScenarioError> {
    let mut objects = Vec::new();
    for f in files {
        objects.extend(split_objects(f)?);
    }
    // WorkloadTraces: checked and their files found first, since an adapter may generate
    // cluster objects (nodes, flavors, queues) that the scenario then builds like its own.
    let traces = crate::trace::declarations(&objects, &opts)?;
    let generated = crate::trace::generate(&traces)?;
    for f in &generated {
        objects.extend(split_objects(f)?);
    }
    for (i, o) in objects.iter_mut().enumerate() {
        o.order = i;
    }
    let (seed, streamed) = (opts.seed, opts.stream);
    let mut loaded = Builder::default().build(&objects, opts)?;
    if let Some(seed) = seed {
        loaded.world.config.seed = seed;
    }
    let mut stream = loaded.stream.take().expect("built with the workloads");
    for d in &traces {
        stream.add_trace(crate::trace::open(d, &mut loaded.world)?);
    }
    stream.prime()?;
    if streamed {
        // A streamed trace row's namespace is not added to the world: only a workload whose
        // LocalQueue exists is ever matched against a namespaceSelector, and a LocalQueue's
        // namespace always exists.
        loaded.stream = Some(stream);
    } else {
        while let Some(w) = stream.try_next()? {
            crate::trace::ensure_namespace(&mut loaded.world, &w.namespace);
            loaded.world.workloads.push(w);
        }
    }
    loaded.traces = traces;
    Ok(loaded)
}

/// `spec.volcano.configuration`: the node-order plugins of a volcano-scheduler.conf and
/// their arguments (other plugins do not change where resource-only pods go and are not
/// modelled; see docs/semantics.md).
fn volcano_config(src: &ObjectText<'_>, text: &wire::S) -> Result<VolcanoConfig, ScenarioError> {
    let conf: wire::VolcanoConf = serde_saphyr::from_str(&text.value).map_err(|e| {
        err_at(
            src,
            text,
            format!("spec.volcano.configuration is not a volcano-scheduler.conf: {e}"),
        )
    })?;
    let int = |p: &wire::VolcanoPlugin, key: &str, default: i64| -> Result<i64, ScenarioError> {
        match p.arguments.get(key) {
            None => Ok(default),
            Some(serde_json::Value::Number(n)) if n.as_i64().is_some() => {
                Ok(n.as_i64().unwrap_or(default))
            }
            Some(serde_json::Value::String(s)) if s.trim().parse::<i64>().is_ok() => {
                Ok(s.trim().parse().unwrap_or(default))
            }
            Some(v) => Err(err_at(
                src,
                text,
                format!(
                    "plugin {} argument {key} is {v}: expected an integer",
                    p.name
                ),
            )),
        }
    };
    let float = |p: &wire::VolcanoPlugin, key: &str, default: f64| -> Result<f64, ScenarioError> {
        match p.arguments.get(key) {
            None => Ok(default),
            Some(serde_json::Value::Number(n)) => Ok(n.as_f64().unwrap_or(default)),
            Some(serde_json::Value::String(s)) if s.trim().parse::<f64>().is_ok() => {
                Ok(s.trim().parse().unwrap_or(default))
            }
            Some(v) => Err(err_at(
                src,
                text,
                format!("plugin {} argument {key} is {v}: expected a number", p.name),
            )),
        }
    };
    let mut cfg = VolcanoConfig {
        nodeorder: None,
        binpack: None,
        network_topology_aware: None,
    };
    for p in conf.tiers.iter().flat_map(|t| &t.plugins) {
        match p.name.as_str() {
            "nodeorder" => {
                cfg.nodeorder = Some(NodeOrderWeights {
                    least_requested: int(p, "leastrequested.weight", 1)?,
                    most_requested: int(p, "mostrequested.weight", 0)?,
                    balanced_resource: int(p, "balancedresource.weight", 1)?,
                });
            }
            "binpack" => {
                let mut resources = vec![
                    ("cpu".to_string(), int(p, "binpack.cpu", 1)?),
                    ("memory".to_string(), int(p, "binpack.memory", 1)?),
                ];
                if let Some(serde_json::Value::String(list)) = p.arguments.get("binpack.resources")
                {
                    for r in list.split(',').map(str::trim).filter(|r| !r.is_empty()) {
                        let w = int(p, &format!("binpack.resources.{r}"), 1)?;
                        resources.push((r.to_string(), w));
                    }
                }
                cfg.binpack = Some(BinpackArgs {
                    weight: int(p, "binpack.weight", 1)?,
                    resources,
                });
            }
            "network-topology-aware" => {
                let enable = match p.arguments.get("hypernode.binpack.normal-pod.enable") {
                    None => true,
                    Some(serde_json::Value::Bool(b)) => *b,
                    Some(serde_json::Value::String(s)) => s.trim() != "false",
                    Some(v) => {
                        return Err(err_at(
                            src,
                            text,
                            format!(
                                "hypernode.binpack.normal-pod.enable is {v}: expected true or false"
                            ),
                        ));
                    }
                };
                let weight = float(p, "weight", 1.0)?;
                let fading = float(p, "hypernode.binpack.normal-pod.fading", 0.8)?;
                cfg.network_topology_aware = Some(NetworkTopologyAwareArgs {
                    weight: if weight < 0.0 { 1.0 } else { weight },
                    normal_pod_binpack: enable,
                    fading: if fading < 0.0 { 0.8 } else { fading },
                });
            }
            _ => {}
        }
    }
    Ok(cfg)
}

/// Which kind of top-level job a Workload stands for (for its name and gang rules).
#[derive(Clone, Copy)]
struct JobKind {
    /// The kind, as in the Workload name (`lower(kind)-…`).
    kind: &'static str,
    /// Its API group.
    group: &'static str,
    /// batch/v1 Job: KAI gives its pods one PodGroup each, Volcano's PodGroup controller
    /// minMember 1.
    is_batch_job: bool,
}

/// The fields of Kueue's kinds in v1beta1 or v1beta2, top level and under `spec`.
fn kueue_fields(kind: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    const TOP: &[&str] = &["apiVersion", "kind", "metadata", "spec", "status"];
    Some(match kind {
        "ResourceFlavor" => (
            TOP,
            &["nodeLabels", "nodeTaints", "tolerations", "topologyName"],
        ),
        "ClusterQueue" => (
            TOP,
            &[
                "cohort",
                "cohortName",
                "resourceGroups",
                "queueingStrategy",
                "namespaceSelector",
                "flavorFungibility",
                "preemption",
                "admissionChecks",
                "admissionChecksStrategy",
                "stopPolicy",
                "fairSharing",
                "admissionScope",
            ],
        ),
        "Cohort" => (
            TOP,
            &["parent", "parentName", "resourceGroups", "fairSharing"],
        ),
        "LocalQueue" => (TOP, &["clusterQueue", "stopPolicy", "fairSharing"]),
        "Workload" => (
            TOP,
            &[
                "podSets",
                "queueName",
                "priorityClassName",
                "priority",
                "priorityClassSource",
                "priorityClassRef",
                "active",
                "maximumExecutionTimeSeconds",
            ],
        ),
        "WorkloadPriorityClass" => (
            &["apiVersion", "kind", "metadata", "value", "description"],
            &[],
        ),
        "Topology" => (TOP, &["levels"]),
        _ => return None,
    })
}

/// The first field of a Kueue object (block style) that neither v1beta1 nor v1beta2 has, at
/// the top level or directly under `spec`, with its position.
fn unknown_kueue_field(src: &ObjectText<'_>) -> Option<(Pos, String)> {
    let (top, spec) = kueue_fields(&src.kind)?;
    let mut base: Option<usize> = None;
    let mut in_spec: Option<usize> = None;
    for (i, line) in src.text.lines().enumerate() {
        let t = line.trim_start_matches(' ');
        if t.is_empty() || t.starts_with('#') || t.starts_with("- ") || t == "-" {
            continue;
        }
        let ind = line.len() - t.len();
        let b = *base.get_or_insert(ind);
        let key = t.split(':').next().unwrap_or("").trim();
        if key.starts_with(['{', '[', '"', '\'']) || !t.contains(':') {
            continue;
        }
        let at = |col: usize| Pos {
            file: src.file.name.clone(),
            line: src.line_offset + i as u64 + 1,
            column: col as u64 + 1,
        };
        if ind == b {
            in_spec = None;
            if key == "spec" && t.trim_end() == "spec:" {
                in_spec = Some(usize::MAX);
            }
            if !top.contains(&key) {
                return Some((
                    at(ind),
                    format!(
                        "{} field {key:?} is not a field of kueue.x-k8s.io v1beta1 or v1beta2",
                        src.kind
                    ),
                ));
            }
        } else if let Some(si) = in_spec {
            let si = if si == usize::MAX {
                in_spec = Some(ind);
                ind
            } else {
                si
            };
            if ind == si && !spec.contains(&key) {
                return Some((
                    at(ind),
                    format!(
                        "{} spec field {key:?} is not a field of kueue.x-k8s.io v1beta1 or v1beta2",
                        src.kind
                    ),
                ));
            }
        }
    }
    None
}

/// A parsed object and where it came from.
struct Parsed<'a, T> {
    src: &'a ObjectText<'a>,
    obj: T,
}

#[derive(Default)]
struct Builder<'a> {
    world: World,
    warnings: Vec<String>,
    simulation: Option<Parsed<'a, wire::Simulation>>,
    configuration: Option<Parsed<'a, wire::Configuration>>,
    namespaces: Vec<Parsed<'a, wire::Namespace>>,
    flavors: Vec<Parsed<'a, wire::ResourceFlavor>>,
    cohorts: Vec<Parsed<'a, wire::Cohort>>,
    cluster_queues: Vec<Parsed<'a, wire::ClusterQueue>>,
    local_queues: Vec<Parsed<'a, wire::LocalQueue>>,
    wpcs: Vec<Parsed<'a, wire::WorkloadPriorityClass>>,
    pcs: Vec<Parsed<'a, wire::PriorityClass>>,
    nodes: Vec<Parsed<'a, wire::Node>>,
    node_pools: Vec<Parsed<'a, wire::NodePool>>,
    /// Kueue (false) and KAI (true) Topology objects.
    topologies: Vec<(bool, Parsed<'a, wire::Topology>)>,
    hypernodes: Vec<Parsed<'a, wire::HyperNode>>,
    /// KAI PodGroups, by (namespace, name).
    kai_pod_groups: BTreeMap<(String, String), Parsed<'a, wire::KaiPodGroup>>,
    /// KAI Queues.
    kai_queues: Vec<Parsed<'a, wire::KaiQueue>>,
    /// Simulation `spec.defaultRemaining`.
    default_remaining: Option<SimDuration>,
    /// Volcano PodGroups, by (namespace, name).
    volcano_pod_groups: BTreeMap<(String, String), Parsed<'a, wire::VolcanoPodGroup>>,
    /// HyperNodes NodePools generate (levels with `hyperNodeTier`), with their pool.
    generated_hypernodes: Vec<(HyperNodeSpec, &'a ObjectText<'a>)>,
    jobs: Vec<Parsed<'a, wire::Job>>,
    jobsets: Vec<Parsed<'a, wire::JobSet>>,
    /// Kubeflow jobs with their kind.
    kubeflow_jobs: Vec<(&'static str, Parsed<'a, wire::KubeflowJob>)>,
    ray_jobs: Vec<Parsed<'a, wire::RayJob>>,
    train_jobs: Vec<Parsed<'a, wire::TrainJob>>,
    volcano_jobs: Vec<Parsed<'a, wire::VolcanoJob>>,
    /// (cluster-scoped?, runtime): ClusterTrainingRuntime and TrainingRuntime objects.
    training_runtimes: Vec<(bool, Parsed<'a, wire::TrainingRuntime>)>,
    ray_clusters: Vec<Parsed<'a, wire::RayCluster>>,
    deployments: Vec<Parsed<'a, wire::ReplicatedPods>>,
    statefulsets: Vec<Parsed<'a, wire::ReplicatedPods>>,
    leader_worker_sets: Vec<Parsed<'a, wire::LeaderWorkerSet>>,
    /// Pods: a Pod has a pod template's shape (metadata and spec).
    pods: Vec<Parsed<'a, wire::PodTemplateSpec>>,
    workloads: Vec<Parsed<'a, wire::Workload>>,
    /// WorkloadGenerators (generator.rs), in document order.
    generators: Vec<Parsed<'a, wire::WorkloadGenerator>>,
    /// (kind, namespace, name) → first position, for duplicate detection.
    seen: BTreeMap<(String, String, String), Pos>,
    /// The workloads, as a stream (`build_workloads`).
    stream: Option<WorkloadStream>,
}

pub(crate) fn pos_of<T>(src: &ObjectText<'_>, s: &Spanned<T>) -> Pos {
    if s.referenced.line() == 0 {
        return src.kind_pos.clone();
    }
    Pos {
        file: src.file.name.clone(),
        line: s.referenced.line() + src.line_offset,
        column: s.referenced.column(),
    }
}

pub(crate) fn err_at<T>(
    src: &ObjectText<'_>,
    s: &Spanned<T>,
    message: impl Into<String>,
) -> ScenarioError {
    ScenarioError::at(pos_of(src, s), message, &src.file.text)
}

pub(crate) fn err_obj(src: &ObjectText<'_>, message: impl Into<String>) -> ScenarioError {
    ScenarioError::at(src.kind_pos.clone(), message, &src.file.text)
}

fn parse<'a, T: DeserializeOwned>(src: &'a ObjectText<'a>) -> Result<Parsed<'a, T>, ScenarioError> {
    let obj =
        serde_saphyr::from_str(&src.text).map_err(|e| yaml_error(src.file, src.line_offset, &e))?;
    Ok(Parsed { src, obj })
}

fn name_of<'s>(src: &ObjectText<'_>, meta: &'s wire::ObjectMeta) -> Result<&'s str, ScenarioError> {
    match &meta.name {
        Some(n) if !n.value.is_empty() => Ok(&n.value),
        _ => Err(err_obj(
            src,
            format!("{} has no metadata.name: expected a name", src.kind),
        )),
    }
}

fn namespace_of(meta: &wire::ObjectMeta) -> String {
    meta.namespace
        .as_ref()
        .map_or_else(|| "default".to_string(), |n| n.value.clone())
}

fn quantity(
    src: &ObjectText<'_>,
    resource: &str,
    q: &Spanned<String>,
) -> Result<i64, ScenarioError> {
    let parsed = kueuesim_model::Quantity::parse(q.value.trim())
        .map_err(|e| err_at(src, q, e.to_string()))?;
    resource_amount(resource, &parsed).map_err(|e| err_at(src, q, format!("{resource}: {e}")))
}

fn duration(src: &ObjectText<'_>, d: &Spanned<String>) -> Result<SimDuration, ScenarioError> {
    SimDuration::parse(d.value.trim()).map_err(|e| err_at(src, d, e.to_string()))
}

fn one_of<T: Copy>(
    src: &ObjectText<'_>,
    s: &Spanned<String>,
    what: &str,
    options: &[(&str, T)],
) -> Result<T, ScenarioError> {
    options
        .iter()
        .find(|(n, _)| *n == s.value)
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

fn labels(map: &BTreeMap<String, String>) -> Labels {
    Labels::new(map.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

fn taint_effect(src: &ObjectText<'_>, s: &Spanned<String>) -> Result<TaintEffect, ScenarioError> {
    one_of(
        src,
        s,
        "taint effect",
        &[
            ("NoSchedule", TaintEffect::NoSchedule),
            ("PreferNoSchedule", TaintEffect::PreferNoSchedule),
            ("NoExecute", TaintEffect::NoExecute),
        ],
    )
}

fn taints(src: &ObjectText<'_>, ts: &[wire::Taint]) -> Result<Vec<Taint>, ScenarioError> {
    ts.iter()
        .map(|t| {
            Ok(Taint {
                key: t.key.clone(),
                value: t.value.clone().unwrap_or_default(),
                effect: taint_effect(src, &t.effect)?,
            })
        })
        .collect()
}

fn tolerations(
    src: &ObjectText<'_>,
    ts: &[wire::Toleration],
) -> Result<Vec<Toleration>, ScenarioError> {
    ts.iter()
        .map(|t| {
            let op = match &t.operator {
                None => TolerationOp::Equal,
                Some(o) => one_of(
                    src,
                    o,
                    "toleration operator",
                    &[
                        ("Equal", TolerationOp::Equal),
                        ("Exists", TolerationOp::Exists),
                    ],
                )?,
            };
            let effect = match &t.effect {
                Some(e) if !e.value.is_empty() => Some(taint_effect(src, e)?),
                _ => None,
            };
            Ok(Toleration {
                key: t.key.clone().unwrap_or_default(),
                op,
                value: t.value.clone().unwrap_or_default(),
                effect,
            })
        })
        .collect()
}

fn selector(src: &ObjectText<'_>, s: &wire::LabelSelector) -> Result<LabelSelector, ScenarioError> {
    let match_expressions = s
        .match_expressions
        .iter()
        .map(|r| {
            let op = one_of(
                src,
                &r.operator,
                "selector operator",
                &[
                    ("In", SelectorOp::In),
                    ("NotIn", SelectorOp::NotIn),
                    ("Exists", SelectorOp::Exists),
                    ("DoesNotExist", SelectorOp::DoesNotExist),
                ],
            )?;
            Ok(SelectorRequirement {
                key: r.key.clone(),
                op,
                values: r.values.clone(),
            })
        })
        .collect::<Result<_, ScenarioError>>()?;
    Ok(LabelSelector {
        match_labels: labels(&s.match_labels),
        match_expressions,
    })
}

fn stop_policy(
    src: &ObjectText<'_>,
    s: &Option<Spanned<String>>,
) -> Result<StopPolicy, ScenarioError> {
    match s {
        None => Ok(StopPolicy::None),
        Some(s) => one_of(
            src,
            s,
            "stopPolicy",
            &[
                ("None", StopPolicy::None),
                ("Hold", StopPolicy::Hold),
                ("HoldAndDrain", StopPolicy::HoldAndDrain),
            ],
        ),
    }
}

/// `fairSharing.weight` in milli-units; 1000 when unset; negative is an error.
fn weight_milli(src: &ObjectText<'_>, fs: &wire::FairSharing) -> Result<i64, ScenarioError> {
    let Some(w) = &fs.weight else { return Ok(1000) };
    let q = kueuesim_model::Quantity::parse(w.value.trim())
        .map_err(|e| err_at(src, w, e.to_string()))?;
    let milli = q.milli_value().map_err(|e| err_at(src, w, e.to_string()))?;
    if milli < 0 {
        return Err(err_at(
            src,
            w,
            format!(
                "fairSharing.weight {:?} is negative: expected a quantity ≥ 0",
                w.value
            ),
        ));
    }
    Ok(milli)
}

fn preemption(
    src: &ObjectText<'_>,
    p: Option<&wire::Preemption>,
) -> Result<Preemption, ScenarioError> {
    let Some(p) = p else {
        return Ok(Preemption::default());
    };
    let policy =
        |s: &Option<Spanned<String>>, what: &str, options: &[(&str, PreemptionPolicy)]| match s {
            None => Ok(PreemptionPolicy::Never),
            Some(s) => one_of(src, s, what, options),
        };
    use PreemptionPolicy as P;
    let within_cluster_queue = policy(
        &p.within_cluster_queue,
        "withinClusterQueue",
        &[
            ("Never", P::Never),
            ("LowerPriority", P::LowerPriority),
            ("LowerOrNewerEqualPriority", P::LowerOrNewerEqualPriority),
        ],
    )?;
    let reclaim_within_cohort = policy(
        &p.reclaim_within_cohort,
        "reclaimWithinCohort",
        &[
            ("Never", P::Never),
            ("LowerPriority", P::LowerPriority),
            ("Any", P::Any),
        ],
    )?;
    let (borrow_within_cohort, borrow_max_priority_threshold) = match &p.borrow_within_cohort {
        None => (P::Never, None),
        Some(b) => (
            policy(
                &b.policy,
                "borrowWithinCohort.policy",
                &[("Never", P::Never), ("LowerPriority", P::LowerPriority)],
            )?,
            b.max_priority_threshold,
        ),
    };
    Ok(Preemption {
        within_cluster_queue,
        reclaim_within_cohort,
        borrow_within_cohort,
        borrow_max_priority_threshold,
    })
}

fn fungibility(
    src: &ObjectText<'_>,
    f: Option<&wire::FlavorFungibility>,
) -> Result<FlavorFungibility, ScenarioError> {
    let mut out = FlavorFungibility::default();
    let Some(f) = f else { return Ok(out) };
    use FungibilityPolicy as F;
    // v1beta1 spelled MayStopSearch as `Borrow` / `Preempt`.
    if let Some(s) = &f.when_can_borrow {
        out.when_can_borrow = one_of(
            src,
            s,
            "whenCanBorrow",
            &[
                ("MayStopSearch", F::MayStopSearch),
                ("Borrow", F::MayStopSearch),
                ("TryNextFlavor", F::TryNextFlavor),
            ],
        )?;
    }
    if let Some(s) = &f.when_can_preempt {
        out.when_can_preempt = one_of(
            src,
            s,
            "whenCanPreempt",
            &[
                ("MayStopSearch", F::MayStopSearch),
                ("Preempt", F::MayStopSearch),
                ("TryNextFlavor", F::TryNextFlavor),
            ],
        )?;
    }
    if let Some(s) = &f.preference {
        out.preference = one_of(
            src,
            s,
            "preference",
            &[
                (
                    "BorrowingOverPreemption",
                    FungibilityPreference::BorrowingOverPreemption,
                ),
                (
                    "PreemptionOverBorrowing",
                    FungibilityPreference::PreemptionOverBorrowing,
                ),
            ],
        )?;
    }
    Ok(out)
}

/// A digest of a pod spec's scheduling-relevant fields, free of source positions, so equal
/// templates get equal digests (FNV-1a over a canonical text).
fn spec_shape(spec: &wire::PodSpec) -> u64 {
    use std::fmt::Write;
    let mut text = String::new();
    let resources = |text: &mut String, m: &wire::ResourceMap| {
        for (k, v) in m {
            let _ = write!(text, "{k}={};", v.value.trim());
        }
    };
    for (kind, list) in [("c", &spec.containers), ("i", &spec.init_containers)] {
        for c in list {
            let _ = write!(
                text,
                "{kind}[{}|",
                c.restart_policy.as_deref().unwrap_or("")
            );
            resources(&mut text, &c.resources.requests);
            text.push('|');
            resources(&mut text, &c.resources.limits);
            text.push(']');
        }
    }
    text.push_str("o:");
    resources(&mut text, &spec.overhead);
    for (k, v) in &spec.node_selector {
        let _ = write!(text, "ns:{k}={v};");
    }
    for t in &spec.tolerations {
        let _ = write!(
            text,
            "t:{}/{}/{}/{};",
            t.key.as_deref().unwrap_or(""),
            t.operator.as_ref().map_or("", |o| o.value.as_str()),
            t.value.as_deref().unwrap_or(""),
            t.effect.as_ref().map_or("", |e| e.value.as_str())
        );
    }
    let _ = write!(
        text,
        "pc:{};sn:{}",
        spec.priority_class_name
            .as_ref()
            .map_or("", |s| s.value.as_str()),
        spec.scheduler_name
            .as_ref()
            .map_or("", |s| s.value.as_str())
    );
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The group part of an apiVersion (`""` for the core group).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

impl<'a> Builder<'a> {
    fn remember(
        &mut self,
        src: &ObjectText<'_>,
        namespace: &str,
        name: &str,
    ) -> Result<(), ScenarioError> {
        let key = (src.kind.clone(), namespace.to_string(), name.to_string());
        if let Some(first) = self.seen.get(&key) {
            let what = if namespace.is_empty() {
                name.to_string()
            } else {
                format!("{namespace}/{name}")
            };
            return Err(err_obj(
                src,
                format!("duplicate {} {what:?}: first defined at {first}", src.kind),
            ));
        }
        self.seen.insert(key, src.kind_pos.clone());
        Ok(())
    }

    fn build(
        mut self,
        objects: &'a [ObjectText<'a>],
        opts: LoadOptions,
    ) -> Result<Loaded, ScenarioError> {
        let mut skipped: BTreeMap<String, (usize, Pos)> = BTreeMap::new();
        for src in objects {
            let group = group_of(&src.api_version);
            if group == "kueue.x-k8s.io"
                && let Some((pos, msg)) = unknown_kueue_field(src)
            {
                if opts.strict {
                    return Err(ScenarioError::at(
                        pos,
                        format!("{msg} (--strict)"),
                        &src.file.text,
                    ));
                }
                self.warnings.push(format!("{pos}: {msg}; ignored"));
            }
            let kueue_version_ok = matches!(
                src.api_version.as_str(),
                "kueue.x-k8s.io/v1beta1" | "kueue.x-k8s.io/v1beta2"
            );
            match (group, src.kind.as_str()) {
                (
                    "kueue.x-k8s.io",
                    "ResourceFlavor"
                    | "ClusterQueue"
                    | "LocalQueue"
                    | "WorkloadPriorityClass"
                    | "Workload",
                ) if !kueue_version_ok => {
                    return Err(err_obj(
                        src,
                        format!(
                            "unsupported apiVersion {:?} for {}: expected kueue.x-k8s.io/v1beta1 or kueue.x-k8s.io/v1beta2",
                            src.api_version, src.kind
                        ),
                    ));
                }
                ("kueue.x-k8s.io", "ResourceFlavor") => self.flavors.push(parse(src)?),
                ("kueue.x-k8s.io", "ClusterQueue") => self.cluster_queues.push(parse(src)?),
                ("kueue.x-k8s.io", "Cohort") => self.cohorts.push(parse(src)?),
                ("kueue.x-k8s.io", "LocalQueue") => self.local_queues.push(parse(src)?),
                ("kueue.x-k8s.io", "WorkloadPriorityClass") => self.wpcs.push(parse(src)?),
                ("kueue.x-k8s.io", "Workload") => self.workloads.push(parse(src)?),
                ("", "Node") => self.nodes.push(parse(src)?),
                ("", "Namespace") => self.namespaces.push(parse(src)?),
                ("scheduling.k8s.io", "PriorityClass") => self.pcs.push(parse(src)?),
                ("batch", "Job") => self.jobs.push(parse(src)?),
                ("jobset.x-k8s.io", "JobSet") => self.jobsets.push(parse(src)?),
                (
                    "kubeflow.org",
                    kind @ ("PyTorchJob" | "TFJob" | "XGBoostJob" | "PaddleJob" | "JAXJob"
                    | "MPIJob"),
                ) => {
                    let kind: &'static str = match kind {
                        "PyTorchJob" => "PyTorchJob",
                        "TFJob" => "TFJob",
                        "XGBoostJob" => "XGBoostJob",
                        "PaddleJob" => "PaddleJob",
                        "JAXJob" => "JAXJob",
                        _ => "MPIJob",
                    };
                    self.kubeflow_jobs.push((kind, parse(src)?));
                }
                ("ray.io", "RayJob") => self.ray_jobs.push(parse(src)?),
                ("trainer.kubeflow.org", "TrainJob") => self.train_jobs.push(parse(src)?),
                ("batch.volcano.sh", "Job") => self.volcano_jobs.push(parse(src)?),
                ("trainer.kubeflow.org", "ClusterTrainingRuntime") => {
                    self.training_runtimes.push((true, parse(src)?))
                }
                ("trainer.kubeflow.org", "TrainingRuntime") => {
                    self.training_runtimes.push((false, parse(src)?))
                }
                ("ray.io", "RayCluster") => self.ray_clusters.push(parse(src)?),
                ("apps", "Deployment") => self.deployments.push(parse(src)?),
                ("apps", "StatefulSet") => self.statefulsets.push(parse(src)?),
                ("leaderworkerset.x-k8s.io", "LeaderWorkerSet") => {
                    self.leader_worker_sets.push(parse(src)?)
                }
                ("", "Pod") => self.pods.push(parse(src)?),
                ("kueuesim.io", "Simulation") => {
                    let p: Parsed<'a, wire::Simulation> = parse(src)?;
                    if let Some(first) = &self.simulation {
                        return Err(err_obj(
                            src,
                            format!(
                                "duplicate Simulation: first defined at {}; expected at most one",
                                first.src.kind_pos
                            ),
                        ));
                    }
                    self.simulation = Some(p);
                }
                ("kueuesim.io", "NodePool") => self.node_pools.push(parse(src)?),
                // Read by `crate::trace` before the build.
                ("kueuesim.io", "WorkloadTrace") => {}
                ("kueuesim.io", "WorkloadGenerator") => {
                    let p: Parsed<'a, wire::WorkloadGenerator> = parse(src)?;
                    let name = name_of(src, &p.obj.metadata)?.to_string();
                    self.remember(src, "", &name)?;
                    self.generators.push(p);
                }
                ("kueue.x-k8s.io", "Topology") => self.topologies.push((false, parse(src)?)),
                ("kai.scheduler", "Topology") => self.topologies.push((true, parse(src)?)),
                ("topology.volcano.sh", "HyperNode") => self.hypernodes.push(parse(src)?),
                // Volcano Queues: read for their names; they do not hold quota here (Kueue
                // decides quota; docs/semantics.md).
                ("scheduling.volcano.sh", "Queue") => {
                    let p: Parsed<'a, wire::ObjectOnly> = parse(src)?;
                    let name = name_of(src, &p.obj.metadata)?.to_string();
                    self.remember(src, "", &name)?;
                }
                ("scheduling.volcano.sh", "PodGroup") => {
                    let p: Parsed<'a, wire::VolcanoPodGroup> = parse(src)?;
                    let name = name_of(src, &p.obj.metadata)?.to_string();
                    let ns = namespace_of(&p.obj.metadata);
                    self.remember(src, &ns, &name)?;
                    self.volcano_pod_groups.insert((ns, name), p);
                }
                ("scheduling.run.ai", "Queue") => self.kai_queues.push(parse(src)?),
                ("scheduling.run.ai", "PodGroup") => {
                    let p: Parsed<'a, wire::KaiPodGroup> = parse(src)?;
                    let name = name_of(src, &p.obj.metadata)?.to_string();
                    let ns = namespace_of(&p.obj.metadata);
                    self.remember(src, &ns, &name)?;
                    self.kai_pod_groups.insert((ns, name), p);
                }
                ("config.kueue.x-k8s.io", "Configuration") => {
                    let p: Parsed<'a, wire::Configuration> = parse(src)?;
                    if let Some(first) = &self.configuration {
                        return Err(err_obj(
                            src,
                            format!(
                                "duplicate Kueue Configuration: first defined at {}; expected at most one",
                                first.src.kind_pos
                            ),
                        ));
                    }
                    self.configuration = Some(p);
                }
                _ => {
                    // Not read any further, but a syntax error is still an error (the
                    // splitter read only its head).
                    serde_saphyr::from_str::<serde::de::IgnoredAny>(&src.text)
                        .map_err(|e| yaml_error(src.file, src.line_offset, &e))?;
                    let label = if src.api_version.is_empty() {
                        src.kind.clone()
                    } else {
                        format!("{} ({})", src.kind, src.api_version)
                    };
                    let e = skipped.entry(label).or_insert((0, src.kind_pos.clone()));
                    e.0 += 1;
                }
            }
        }
        if !skipped.is_empty() {
            if opts.strict {
                let (label, (_, pos)) = skipped
                    .iter()
                    .min_by_key(|(_, (_, pos))| objects.iter().position(|o| o.kind_pos == *pos))
                    .expect("non-empty");
                let src_text = objects
                    .iter()
                    .find(|o| o.kind_pos == *pos)
                    .map_or("", |o| o.file.text.as_str());
                return Err(ScenarioError::at(
                    pos.clone(),
                    format!(
                        "unsupported kind {label} (--strict): expected one of the kinds in docs/scenario-format.md"
                    ),
                    src_text,
                ));
            }
            let list: Vec<String> = skipped
                .iter()
                .map(|(k, (n, _))| format!("{n} {k}"))
                .collect();
            self.warnings.push(format!(
                "skipped objects of kinds the simulator does not read: {}",
                list.join(", ")
            ));
        }
        self.build_config()?;
        if let Some(seed) = opts.seed {
            self.world.config.seed = seed;
        }
        self.build_namespaces()?;
        self.build_flavors()?;
        self.build_cohorts()?;
        self.build_cluster_queues()?;
        self.build_local_queues()?;
        self.build_priority_classes()?;
        self.build_nodes()?;
        self.build_topologies()?;
        self.build_kai_queues()?;
        self.build_workloads()?;
        Ok(Loaded {
            world: self.world,
            warnings: self.warnings,
            traces: Vec::new(),
            stream: self.stream,
        })
    }

    fn build_config(&mut self) -> Result<(), ScenarioError> {
        let mut cfg = SimConfig::default();
        // startTime default: the earliest creationTimestamp in the input (epoch if none).
        let mut earliest: Option<i64> = None;
        let mut consider =
            |src: &ObjectText<'_>, meta: &wire::ObjectMeta| -> Result<(), ScenarioError> {
                // An arrival annotation overrides the object's times, so its timestamp does not count.
                if let Some(ts) = meta
                    .creation_timestamp
                    .as_ref()
                    .filter(|_| !meta.annotations.contains_key(ARRIVAL_ANNOTATION))
                {
                    let ms = parse_rfc3339(ts.value.trim())
                        .map_err(|e| err_at(src, ts, e.to_string()))?;
                    earliest = Some(earliest.map_or(ms, |e: i64| e.min(ms)));
                }
                Ok(())
            };
        for p in &self.jobs {
            consider(p.src, &p.obj.metadata)?;
        }
        for p in &self.workloads {
            consider(p.src, &p.obj.metadata)?;
        }
        cfg.start_unix_ms = earliest.unwrap_or(0);
        if let Some(sim) = &self.simulation {
            let src = sim.src;
            let spec = &sim.obj.spec;
            if let Some(seed) = spec.seed {
                cfg.seed = seed;
            }
            if let Some(st) = &spec.start_time {
                cfg.start_unix_ms =
                    parse_rfc3339(st.value.trim()).map_err(|e| err_at(src, st, e.to_string()))?;
            }
            if let Some(u) = &spec.until {
                cfg.until = Some(SimTime::ZERO + duration(src, u)?);
            }
            if let Some(d) = &spec.pod_startup {
                cfg.pod_startup = duration(src, d)?;
            }
            if let Some(d) = &spec.default_remaining {
                self.default_remaining = Some(duration(src, d)?);
            }
            if let Some(l) = spec
                .kueue
                .as_ref()
                .and_then(|k| k.controller_latency.as_ref())
            {
                let d = |v: &Option<wire::S>| v.as_ref().map(|v| duration(src, v)).transpose();
                let lat = &mut cfg.controller_latency;
                lat.cycle = d(&l.cycle)?.unwrap_or_default();
                lat.per_head = d(&l.per_head)?.unwrap_or_default();
                lat.per_admission = d(&l.per_admission)?.unwrap_or_default();
                lat.api_write = d(&l.api_write)?.unwrap_or_default();
            }
            if let Some(d) = &spec.pod_termination {
                cfg.pod_termination = duration(src, d)?;
            }
            if let Some(pp) = &spec.preemption {
                let progress = match &pp.progress {
                    None => "restart",
                    Some(s) => one_of(
                        src,
                        s,
                        "preemption.progress",
                        &[("restart", "restart"), ("checkpoint", "checkpoint")],
                    )?,
                };
                cfg.progress = match (progress, &pp.checkpoint_interval) {
                    ("checkpoint", Some(i)) => {
                        let interval = duration(src, i)?;
                        if interval <= SimDuration::ZERO {
                            return Err(err_at(
                                src,
                                i,
                                "checkpointInterval must be positive: expected a duration such as 30m",
                            ));
                        }
                        ProgressPolicy::Checkpoint { interval }
                    }
                    ("checkpoint", None) => {
                        return Err(err_obj(
                            src,
                            "preemption.progress checkpoint needs preemption.checkpointInterval: expected a duration such as 30m",
                        ));
                    }
                    _ => ProgressPolicy::Restart,
                };
            }
            for (name, kind) in &spec.schedulers {
                let k = one_of(
                    src,
                    kind,
                    "scheduler",
                    &[
                        ("kube", SchedulerKind::Kube),
                        ("kai", SchedulerKind::Kai),
                        ("volcano", SchedulerKind::Volcano),
                    ],
                )?;
                match cfg
                    .schedulers
                    .binary_search_by(|(n, _)| n.as_str().cmp(name))
                {
                    Ok(i) => cfg.schedulers[i].1 = k,
                    Err(i) => cfg.schedulers.insert(i, (name.clone(), k)),
                }
            }
        }
        if let Some(sim) = &self.simulation
            && let Some(kai) = &sim.obj.spec.kai
        {
            let src = sim.src;
            cfg.kai.default_preferred_level = kai
                .default_preferred_topology_level
                .as_ref()
                .map(|s| s.value.clone());
            cfg.kai.default_topology = kai.default_topology.as_ref().map(|s| s.value.clone());
            if let Some(p) = &kai.placement_strategy {
                cfg.kai.placement_strategy = one_of(
                    src,
                    p,
                    "placementStrategy",
                    &[
                        ("binpack", PlacementStrategy::Binpack),
                        ("spread", PlacementStrategy::Spread),
                    ],
                )?;
            }
        }
        if let Some(sim) = &self.simulation
            && let Some(text) = sim
                .obj
                .spec
                .volcano
                .as_ref()
                .and_then(|v| v.configuration.as_ref())
        {
            cfg.volcano = volcano_config(sim.src, text)?;
        }
        if let Some(conf) = self.configuration.take() {
            cfg.kueue = self.kueue_config(&conf)?;
        }
        self.world.config = cfg;
        Ok(())
    }

    /// Kueue's `Configuration`, defaulted as the API version defaults it: with v1beta2
    /// waitForPodsReady is on unless configured otherwise, with v1beta1 only when `enable`.
    fn kueue_config(
        &mut self,
        p: &Parsed<'_, wire::Configuration>,
    ) -> Result<KueueConfig, ScenarioError> {
        let src = p.src;
        let v1beta1 = src.api_version == "config.kueue.x-k8s.io/v1beta1";
        if !v1beta1 && src.api_version != "config.kueue.x-k8s.io/v1beta2" {
            return Err(err_obj(
                src,
                format!(
                    "unsupported apiVersion {:?} for Configuration: expected config.kueue.x-k8s.io/v1beta1 or config.kueue.x-k8s.io/v1beta2",
                    src.api_version
                ),
            ));
        }
        let c = &p.obj;
        let fair_sharing = match &c.fair_sharing {
            None => None,
            Some(fs) if v1beta1 && fs.enable != Some(true) => None,
            Some(fs) => {
                let options = [
                    (
                        "LessThanOrEqualToFinalShare",
                        FairSharingStrategy::LessThanOrEqualToFinalShare,
                    ),
                    (
                        "LessThanInitialShare",
                        FairSharingStrategy::LessThanInitialShare,
                    ),
                ];
                match &fs.preemption_strategies {
                    None => Some(vec![
                        FairSharingStrategy::LessThanOrEqualToFinalShare,
                        FairSharingStrategy::LessThanInitialShare,
                    ]),
                    Some(list) => Some(
                        list.iter()
                            .map(|s| one_of(src, s, "preemptionStrategy", &options))
                            .collect::<Result<_, _>>()?,
                    ),
                }
            }
        };
        let admission_fair_sharing = match &c.admission_fair_sharing {
            None => None,
            Some(a) => {
                let half_life = a
                    .usage_half_life_time
                    .as_ref()
                    .map(|d| duration(src, d))
                    .transpose()?
                    .unwrap_or(SimDuration::ZERO);
                let sampling_interval = a
                    .usage_sampling_interval
                    .as_ref()
                    .map(|d| duration(src, d))
                    .transpose()?
                    .unwrap_or(SimDuration::from_secs(300));
                let mut resource_weights_milli = Vec::new();
                for (r, w) in &a.resource_weights {
                    if !w.value.is_finite() || w.value < 0.0 {
                        return Err(err_at(
                            src,
                            w,
                            format!("resource weight {} for {r}: expected a number ≥ 0", w.value),
                        ));
                    }
                    resource_weights_milli.push((
                        self.world.resources.intern(r),
                        (w.value * 1000.0).round() as i64,
                    ));
                }
                Some(AdmissionFairSharing {
                    half_life,
                    sampling_interval,
                    resource_weights_milli,
                })
            }
        };
        let wait_for_pods_ready = match &c.wait_for_pods_ready {
            None if v1beta1 => None,
            None => Some(WaitForPodsReady::default()),
            Some(w) if v1beta1 && w.enable != Some(true) => None,
            Some(w) => {
                let mut r = WaitForPodsReady::default();
                if let Some(t) = &w.timeout {
                    r.timeout = duration(src, t)?;
                }
                // v1beta1 defaulted blockAdmission to true when enabled.
                r.block_admission = w.block_admission.unwrap_or(v1beta1);
                if let Some(rs) = &w.requeuing_strategy {
                    if let Some(t) = &rs.timestamp {
                        r.order_by_eviction = one_of(
                            src,
                            t,
                            "requeuingStrategy.timestamp",
                            &[("Eviction", true), ("Creation", false)],
                        )?;
                    }
                    let secs =
                        |v: &Spanned<i64>, what: &str| -> Result<SimDuration, ScenarioError> {
                            if v.value < 0 {
                                return Err(err_at(
                                    src,
                                    v,
                                    format!("{what} {} is negative: expected seconds ≥ 0", v.value),
                                ));
                            }
                            Ok(SimDuration::from_secs(v.value))
                        };
                    if let Some(b) = &rs.backoff_base_seconds {
                        r.backoff_base = secs(b, "backoffBaseSeconds")?;
                    }
                    if let Some(b) = &rs.backoff_max_seconds {
                        r.backoff_max = secs(b, "backoffMaxSeconds")?;
                    }
                    if let Some(l) = &rs.backoff_limit_count {
                        if l.value < 0 {
                            return Err(err_at(
                                src,
                                l,
                                format!(
                                    "backoffLimitCount {} is negative: expected a count ≥ 0",
                                    l.value
                                ),
                            ));
                        }
                        r.backoff_limit = Some(l.value as u32);
                    }
                }
                Some(r)
            }
        };
        let mut resources = kueuesim_model::ResourceConfig::default();
        if let Some(rc) = &p.obj.resources {
            resources.exclude_prefixes = rc.exclude_resource_prefixes.clone();
            for t in &rc.transformations {
                let Some(input) = t.input.as_ref().filter(|i| !i.value.is_empty()) else {
                    return Err(err_obj(
                        src,
                        "a resources.transformations entry has no input: expected a resource name",
                    ));
                };
                let retain = match &t.strategy {
                    None => true,
                    Some(s) => one_of(src, s, "strategy", &[("Retain", true), ("Replace", false)])?,
                };
                let mut outputs = Vec::new();
                for (name, q) in &t.outputs {
                    let amount = quantity(src, name, q)?;
                    outputs.push((self.world.resources.intern(name), amount));
                }
                resources
                    .transformations
                    .push(kueuesim_model::ResourceTransformation {
                        input: self.world.resources.intern(&input.value),
                        retain,
                        outputs,
                    });
            }
        }
        Ok(KueueConfig {
            fair_sharing,
            admission_fair_sharing,
            wait_for_pods_ready,
            resources,
        })
    }

    fn build_namespaces(&mut self) -> Result<(), ScenarioError> {
        let namespaces = std::mem::take(&mut self.namespaces);
        for p in &namespaces {
            let (src, name) = (p.src, name_of(p.src, &p.obj.metadata)?.to_string());
            let mut l: Vec<(String, String)> = p
                .obj
                .metadata
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            // The API server sets this label on every namespace.
            l.push(("kubernetes.io/metadata.name".into(), name.clone()));
            self.remember(src, "", &name)?;
            self.world.namespaces.push(Namespace {
                name,
                labels: Labels::new(l),
            });
        }
        Ok(())
    }

    /// Makes sure namespace `name` exists; namespaces are implicit when not declared.
    fn ensure_namespace(&mut self, name: &str) {
        if self.world.namespace(name).is_none() {
            self.world.namespaces.push(Namespace {
                name: name.to_string(),
                labels: Labels::new(vec![(
                    "kubernetes.io/metadata.name".into(),
                    name.to_string(),
                )]),
            });
        }
    }

    fn build_flavors(&mut self) -> Result<(), ScenarioError> {
        let flavors = std::mem::take(&mut self.flavors);
        for p in &flavors {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let spec = &p.obj.spec;
            let flavor = ResourceFlavor {
                name: name.clone(),
                node_labels: labels(&spec.node_labels),
                node_taints: taints(src, &spec.node_taints)?,
                tolerations: tolerations(src, &spec.tolerations)?,
                topology_name: spec.topology_name.clone(),
            };
            self.remember(src, "", &name)?;
            self.world.flavors.push(flavor);
        }
        Ok(())
    }

    fn flavor_id(&self, name: &str) -> Option<FlavorId> {
        self.world
            .flavors
            .iter()
            .position(|f| f.name == name)
            .map(FlavorId::from_index)
    }

    /// Reads `resourceGroups` of a ClusterQueue or Cohort named `name`: each resource in one
    /// group, each flavor in one group and existing, one quota per covered resource.
    fn resource_groups(
        &mut self,
        src: &ObjectText<'_>,
        name: &str,
        kind: &str,
        spec_groups: &[wire::ResourceGroup],
    ) -> Result<Vec<ResourceGroup>, ScenarioError> {
        let mut groups = Vec::new();
        let mut seen_resources: Vec<String> = Vec::new();
        let mut seen_flavors: Vec<String> = Vec::new();
        for g in spec_groups {
            let mut covered = Vec::new();
            for r in &g.covered_resources {
                if seen_resources.contains(&r.value) {
                    return Err(err_at(
                        src,
                        r,
                        format!(
                            "resource {:?} is covered by two resource groups: expected each resource in exactly one group",
                            r.value
                        ),
                    ));
                }
                seen_resources.push(r.value.clone());
                covered.push(self.world.resources.intern(&r.value));
            }
            let mut flavors = Vec::new();
            for f in &g.flavors {
                let Some(fid) = self.flavor_id(&f.name.value) else {
                    return Err(err_at(
                        src,
                        &f.name,
                        format!(
                            "{kind} {name:?} names ResourceFlavor {:?}, which does not exist: expected a ResourceFlavor defined in the input",
                            f.name.value
                        ),
                    ));
                };
                if seen_flavors.contains(&f.name.value) {
                    return Err(err_at(
                        src,
                        &f.name,
                        format!(
                            "flavor {:?} appears twice: expected each flavor in exactly one resource group",
                            f.name.value
                        ),
                    ));
                }
                seen_flavors.push(f.name.value.clone());
                let mut resources = Vec::new();
                for (k, r) in g.covered_resources.iter().enumerate() {
                    if let Some(dup) = f
                        .resources
                        .iter()
                        .filter(|q| q.name.value == r.value)
                        .nth(1)
                    {
                        return Err(err_at(
                            src,
                            &dup.name,
                            format!(
                                "resource {:?} is listed twice in flavor {:?}: expected one quota per resource",
                                r.value, f.name.value
                            ),
                        ));
                    }
                    let Some(q) = f.resources.iter().find(|q| q.name.value == r.value) else {
                        return Err(err_at(
                            src,
                            &f.name,
                            format!(
                                "flavor {:?} has no quota for covered resource {:?}: expected one entry per coveredResources item",
                                f.name.value, r.value
                            ),
                        ));
                    };
                    let res_name = r.value.clone();
                    resources.push(ResourceQuota {
                        resource: covered[k],
                        nominal: quantity(src, &res_name, &q.nominal_quota)?,
                        borrowing_limit: q
                            .borrowing_limit
                            .as_ref()
                            .map(|b| quantity(src, &res_name, b))
                            .transpose()?,
                        lending_limit: q
                            .lending_limit
                            .as_ref()
                            .map(|b| quantity(src, &res_name, b))
                            .transpose()?,
                    });
                }
                if let Some(extra) = f
                    .resources
                    .iter()
                    .find(|q| !g.covered_resources.iter().any(|r| r.value == q.name.value))
                {
                    return Err(err_at(
                        src,
                        &extra.name,
                        format!(
                            "resource {:?} is not in the group's coveredResources: expected one of {:?}",
                            extra.name.value,
                            g.covered_resources
                                .iter()
                                .map(|r| r.value.as_str())
                                .collect::<Vec<_>>()
                        ),
                    ));
                }
                flavors.push(FlavorQuotas {
                    flavor: fid,
                    resources,
                });
            }
            groups.push(ResourceGroup { covered, flavors });
        }
        Ok(groups)
    }

    /// Reads Cohort objects, then adds the cohorts ClusterQueues and Cohorts name without an
    /// object (implicit cohorts, no quota of their own).
    fn build_cohorts(&mut self) -> Result<(), ScenarioError> {
        let cohorts = std::mem::take(&mut self.cohorts);
        for p in &cohorts {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            self.remember(src, "", &name)?;
            let resource_groups =
                self.resource_groups(src, &name, "Cohort", &p.obj.spec.resource_groups)?;
            let weight = weight_milli(src, &p.obj.spec.fair_sharing)?;
            self.world.cohorts.push(Cohort {
                name,
                parent: None,
                resource_groups,
                fair_sharing_weight_milli: weight,
                declared: true,
            });
        }
        for (i, p) in cohorts.iter().enumerate() {
            let parent = p
                .obj
                .spec
                .parent_name
                .as_ref()
                .or(p.obj.spec.parent.as_ref())
                .filter(|n| !n.value.is_empty());
            if let Some(parent) = parent {
                let id = self.cohort_id(&parent.value);
                self.world.cohorts[i].parent = Some(id);
            }
        }
        Ok(())
    }

    /// The cohort named `name`, created implicitly if no Cohort object declares it.
    fn cohort_id(&mut self, name: &str) -> CohortId {
        match self.world.cohorts.iter().position(|c| c.name == name) {
            Some(i) => CohortId::from_index(i),
            None => {
                self.world.cohorts.push(Cohort {
                    name: name.to_string(),
                    parent: None,
                    resource_groups: Vec::new(),
                    fair_sharing_weight_milli: 1000,
                    declared: false,
                });
                CohortId::from_index(self.world.cohorts.len() - 1)
            }
        }
    }

    fn build_cluster_queues(&mut self) -> Result<(), ScenarioError> {
        let cluster_queues = std::mem::take(&mut self.cluster_queues);
        for p in &cluster_queues {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let spec = &p.obj.spec;
            let groups = self.resource_groups(src, &name, "ClusterQueue", &spec.resource_groups)?;
            let queueing_strategy = match &spec.queueing_strategy {
                None => QueueingStrategy::BestEffortFIFO,
                Some(s) => one_of(
                    src,
                    s,
                    "queueingStrategy",
                    &[
                        ("BestEffortFIFO", QueueingStrategy::BestEffortFIFO),
                        ("StrictFIFO", QueueingStrategy::StrictFIFO),
                    ],
                )?,
            };
            let cq = ClusterQueue {
                name: name.clone(),
                cohort: spec
                    .cohort_name
                    .clone()
                    .or_else(|| spec.cohort.clone())
                    .filter(|c| !c.is_empty())
                    .map(|c| self.cohort_id(&c)),
                preemption: preemption(src, spec.preemption.as_ref())?,
                flavor_fungibility: fungibility(src, spec.flavor_fungibility.as_ref())?,
                fair_sharing_weight_milli: weight_milli(src, &spec.fair_sharing)?,
                admission_fair_sharing: match spec
                    .admission_scope
                    .as_ref()
                    .and_then(|a| a.admission_mode.as_ref())
                {
                    None => false,
                    Some(m) => one_of(
                        src,
                        m,
                        "admissionScope.admissionMode",
                        &[
                            ("UsageBasedAdmissionFairSharing", true),
                            ("NoAdmissionFairSharing", false),
                        ],
                    )?,
                },
                queueing_strategy,
                namespace_selector: spec
                    .namespace_selector
                    .as_ref()
                    .map(|s| selector(src, s))
                    .transpose()?,
                resource_groups: groups,
                stop_policy: stop_policy(src, &spec.stop_policy)?,
            };
            self.remember(src, "", &name)?;
            self.world.cluster_queues.push(cq);
        }
        Ok(())
    }

    fn build_local_queues(&mut self) -> Result<(), ScenarioError> {
        let local_queues = std::mem::take(&mut self.local_queues);
        for p in &local_queues {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let namespace = namespace_of(&p.obj.metadata);
            let spec = &p.obj.spec;
            let Some(cq_name) = &spec.cluster_queue else {
                return Err(err_obj(
                    src,
                    format!(
                        "LocalQueue {namespace}/{name} has no spec.clusterQueue: expected the name of a ClusterQueue"
                    ),
                ));
            };
            let Some(cq) = self
                .world
                .cluster_queues
                .iter()
                .position(|c| c.name == cq_name.value)
            else {
                return Err(err_at(
                    src,
                    cq_name,
                    format!(
                        "LocalQueue {namespace}/{name} names ClusterQueue {:?}, which does not exist: expected a ClusterQueue defined in the input",
                        cq_name.value
                    ),
                ));
            };
            let weight = weight_milli(src, &spec.fair_sharing)?;
            let mut afs_consumed = Vec::new();
            if let Some(st) = p
                .obj
                .status
                .fair_sharing
                .as_ref()
                .and_then(|f| f.admission_fair_sharing_status.as_ref())
            {
                for (r, q) in &st.consumed_resources {
                    let amount = quantity(src, r, q)?;
                    afs_consumed.push((self.world.resources.intern(r), amount));
                }
            }
            let lq = LocalQueue {
                namespace: namespace.clone(),
                name: name.clone(),
                cluster_queue: ClusterQueueId::from_index(cq),
                fair_sharing_weight_milli: weight,
                stop_policy: stop_policy(src, &spec.stop_policy)?,
                afs_consumed,
            };
            self.remember(src, &namespace, &name)?;
            self.ensure_namespace(&namespace);
            self.world.local_queues.push(lq);
        }
        Ok(())
    }

    fn build_priority_classes(&mut self) -> Result<(), ScenarioError> {
        let wpcs = std::mem::take(&mut self.wpcs);
        for p in &wpcs {
            let name = name_of(p.src, &p.obj.metadata)?.to_string();
            self.remember(p.src, "", &name)?;
            self.world.priority_classes.push(PriorityClass {
                name,
                value: p.obj.value,
                is_pod_priority_class: false,
                global_default: false,
            });
        }
        let pcs = std::mem::take(&mut self.pcs);
        for p in &pcs {
            let name = name_of(p.src, &p.obj.metadata)?.to_string();
            self.remember(p.src, "", &name)?;
            self.world.priority_classes.push(PriorityClass {
                name,
                value: p.obj.value,
                is_pod_priority_class: true,
                global_default: p.obj.global_default,
            });
        }
        Ok(())
    }

    fn allocatable(
        &mut self,
        src: &ObjectText<'_>,
        map: &wire::ResourceMap,
    ) -> Result<Vec<(usize, i64)>, ScenarioError> {
        let mut out = Vec::new();
        for (r, q) in map {
            let amount = quantity(src, r, q)?;
            out.push((self.world.resources.intern(r).index(), amount));
        }
        Ok(out)
    }

    /// KAI Queues: GPU quota (deserved), over-quota weight and limit (-1: unlimited),
    /// priority and parent.
    fn build_kai_queues(&mut self) -> Result<(), ScenarioError> {
        let queues = std::mem::take(&mut self.kai_queues);
        let names: Vec<String> = queues
            .iter()
            .map(|q| name_of(q.src, &q.obj.metadata).map(str::to_string))
            .collect::<Result<_, _>>()?;
        for (q, name) in queues.iter().zip(&names) {
            let src = q.src;
            self.remember(src, "", name)?;
            let gpu = q.obj.spec.resources.gpu.as_ref();
            let num = |v: Option<&Spanned<f64>>, default: f64| -> Result<f64, ScenarioError> {
                match v {
                    None => Ok(default),
                    Some(x) if x.value >= -1.0 => Ok(x.value),
                    Some(x) => Err(err_at(
                        src,
                        x,
                        format!(
                            "{} is below -1: expected a non-negative amount or -1 (unlimited)",
                            x.value
                        ),
                    )),
                }
            };
            let quota = num(gpu.and_then(|g| g.quota.as_ref()), 0.0)?;
            let weight = num(gpu.and_then(|g| g.over_quota_weight.as_ref()), 1.0)?;
            let limit = num(gpu.and_then(|g| g.limit.as_ref()), -1.0)?;
            let parent = match &q.obj.spec.parent_queue {
                None => None,
                Some(p) => match names.iter().position(|n| *n == p.value) {
                    Some(i) => Some(i),
                    None => {
                        return Err(err_at(
                            src,
                            p,
                            format!(
                                "parentQueue {:?} is not a Queue in the input: expected a KAI Queue name",
                                p.value
                            ),
                        ));
                    }
                },
            };
            self.world.kai_queues.push(KaiQueue {
                name: name.clone(),
                parent,
                gpu_quota: (quota >= 0.0).then_some(quota.floor() as i64),
                gpu_over_quota_weight: weight.max(0.0).floor() as i64,
                gpu_limit: (limit >= 0.0).then_some(limit.floor() as i64),
                priority: q.obj.spec.priority.unwrap_or(100),
            });
        }
        Ok(())
    }

    /// Kueue/KAI Topologies as level trees, and the Volcano HyperNode tree (HyperNode objects
    /// plus those NodePools generate), with members resolved against the nodes.
    fn build_topologies(&mut self) -> Result<(), ScenarioError> {
        let topologies = std::mem::take(&mut self.topologies);
        let mut trees: Vec<(Topology, &ObjectText<'_>)> = Vec::new();
        for (kai, p) in &topologies {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            // Kueue and KAI Topologies of one name may both exist (KAI's Helm hook copies
            // Kueue's): only a duplicate within one API group is an error.
            let key = if *kai {
                "Topology (kai.scheduler)"
            } else {
                "Topology"
            };
            let dup = (key.to_string(), String::new(), name.clone());
            if let Some(first) = self.seen.get(&dup) {
                return Err(err_obj(
                    src,
                    format!("duplicate {key} {name:?}: first defined at {first}"),
                ));
            }
            self.seen.insert(dup, src.kind_pos.clone());
            let levels = &p.obj.spec.levels;
            if levels.is_empty() || levels.len() > 16 {
                return Err(err_obj(
                    src,
                    format!(
                        "Topology {name:?} has {} levels: expected 1 to 16 spec.levels",
                        levels.len()
                    ),
                ));
            }
            let mut labels = Vec::new();
            for (i, l) in levels.iter().enumerate() {
                let Some(label) = l.node_label.as_ref().filter(|l| !l.value.is_empty()) else {
                    return Err(err_obj(
                        src,
                        format!(
                            "Topology {name:?} level {i} has no nodeLabel: expected a node label key"
                        ),
                    ));
                };
                if labels.contains(&label.value) {
                    return Err(err_at(
                        src,
                        label,
                        format!(
                            "nodeLabel {:?} is listed twice: expected each level once",
                            label.value
                        ),
                    ));
                }
                if label.value == "kubernetes.io/hostname" && i + 1 != levels.len() {
                    return Err(err_at(
                        src,
                        label,
                        "kubernetes.io/hostname is not the last level: expected it only as the narrowest level",
                    ));
                }
                labels.push(label.value.clone());
            }
            if let Some((other, osrc)) = trees.iter().find(|(t, _)| t.name == name) {
                let TopologySource::Levels { labels: ol } = &other.source else {
                    unreachable!("level topologies only")
                };
                if *ol != labels {
                    return Err(err_obj(
                        src,
                        format!(
                            "Topology {name:?} has levels {labels:?} but the Topology of the same name at {} has {ol:?}: expected the Kueue and KAI copies to agree",
                            osrc.kind_pos
                        ),
                    ));
                }
                continue;
            }
            trees.push((
                Topology::from_levels(&name, &labels, &self.world.nodes),
                src,
            ));
        }
        let mut level_trees: Vec<Topology> = trees.into_iter().map(|(t, _)| t).collect();
        // The platform default "KAI prefers the same spine" without a named Topology: a
        // one-level topology over that label.
        let kai = &self.world.config.kai;
        if let Some(level) = &kai.default_preferred_level {
            match &kai.default_topology {
                Some(t) => {
                    let ok = level_trees.iter().any(|x| {
                        x.name == *t && matches!(&x.source, TopologySource::Levels { labels } if labels.contains(level))
                    });
                    if !ok {
                        let sim = self
                            .simulation
                            .as_ref()
                            .expect("spec.kai comes from a Simulation");
                        return Err(err_obj(
                            sim.src,
                            format!(
                                "spec.kai.defaultTopology {t:?} is not a Topology with level {level:?}: expected a Topology object listing that node label"
                            ),
                        ));
                    }
                }
                None => {
                    let name = format!("kueuesim-default-{level}");
                    level_trees.push(Topology::from_levels(
                        &name,
                        std::slice::from_ref(level),
                        &self.world.nodes,
                    ));
                    self.world.config.kai.default_topology = Some(name);
                }
            }
        }
        level_trees.sort_by(|a, b| a.name.cmp(&b.name));
        self.world.topologies = level_trees;

        // Volcano HyperNodes.
        let nodes = std::mem::take(&mut self.world.nodes);
        let node_index: BTreeMap<&str, NodeId> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), NodeId::from_index(i)))
            .collect();
        let (mut specs, mut origin): (Vec<HyperNodeSpec>, Vec<&ObjectText<'_>>) =
            std::mem::take(&mut self.generated_hypernodes)
                .into_iter()
                .unzip();
        let hypernodes = std::mem::take(&mut self.hypernodes);
        for p in &hypernodes {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            self.remember(src, "", &name)?;
            if specs.iter().any(|s| s.name == name) {
                return Err(err_obj(
                    src,
                    format!("duplicate HyperNode {name:?}: a NodePool already generates it"),
                ));
            }
            let tier = match &p.obj.spec.tier {
                Some(t) if t.value >= 0 && t.value <= i64::from(i32::MAX) => t.value as i32,
                Some(t) => {
                    return Err(err_at(
                        src,
                        t,
                        format!("tier {} is negative: expected an integer ≥ 0", t.value),
                    ));
                }
                None => {
                    return Err(err_obj(
                        src,
                        format!("HyperNode {name:?} has no spec.tier: expected an integer ≥ 0"),
                    ));
                }
            };
            let mut members = Vec::new();
            for m in &p.obj.spec.members {
                let sel = &m.selector;
                let n_sel = usize::from(sel.exact_match.is_some())
                    + usize::from(sel.regex_match.is_some())
                    + usize::from(sel.label_match.is_some());
                let kind_pos = m.kind.as_ref();
                if n_sel != 1 {
                    let msg = format!(
                        "HyperNode {name:?} member has {n_sel} selectors: expected exactly one of exactMatch, regexMatch, labelMatch"
                    );
                    return Err(match kind_pos {
                        Some(k) => err_at(src, k, msg),
                        None => err_obj(src, msg),
                    });
                }
                let is_node = match kind_pos {
                    Some(k) => one_of(
                        src,
                        k,
                        "member type",
                        &[("Node", true), ("HyperNode", false)],
                    )?,
                    None => {
                        return Err(err_obj(
                            src,
                            format!(
                                "HyperNode {name:?} member has no type: expected Node or HyperNode"
                            ),
                        ));
                    }
                };
                if let Some(e) = &sel.exact_match {
                    let Some(target) = e.name.as_ref().filter(|n| !n.value.is_empty()) else {
                        return Err(err_obj(
                            src,
                            format!("HyperNode {name:?} exactMatch has no name: expected a name"),
                        ));
                    };
                    if is_node {
                        match node_index.get(target.value.as_str()) {
                            Some(&n) => members.push(HyperNodeMember::Node(n)),
                            None => self.warnings.push(format!(
                                "{}: HyperNode {name:?} lists node {:?}, which does not exist; the member is ignored",
                                pos_of(src, target),
                                target.value
                            )),
                        }
                    } else {
                        members.push(HyperNodeMember::HyperNode(target.value.clone()));
                    }
                    continue;
                }
                if !is_node {
                    return Err(err_obj(
                        src,
                        format!(
                            "HyperNode {name:?} has a HyperNode member with regexMatch or labelMatch: expected exactMatch (Volcano matches HyperNodes by name only)"
                        ),
                    ));
                }
                if let Some(r) = &sel.regex_match {
                    let Some(pat) = &r.pattern else {
                        return Err(err_obj(
                            src,
                            format!(
                                "HyperNode {name:?} regexMatch has no pattern: expected a regular expression"
                            ),
                        ));
                    };
                    let re = regex::Regex::new(&pat.value).map_err(|e| {
                        err_at(
                            src,
                            pat,
                            format!("invalid regexMatch pattern {:?}: {e}", pat.value),
                        )
                    })?;
                    members.extend(
                        node_index
                            .iter()
                            .filter(|(n, _)| re.is_match(n))
                            .map(|(_, &id)| HyperNodeMember::Node(id)),
                    );
                } else if let Some(l) = &sel.label_match {
                    let ls = selector(src, l)?;
                    members.extend(
                        nodes
                            .iter()
                            .enumerate()
                            .filter(|(_, n)| ls.matches(&n.labels))
                            .map(|(i, _)| HyperNodeMember::Node(NodeId::from_index(i))),
                    );
                }
            }
            specs.push(HyperNodeSpec {
                name,
                tier,
                tier_name: p.obj.spec.tier_name.clone(),
                members,
            });
            origin.push(src);
        }
        let at = |name: &str| -> &ObjectText<'_> {
            let i = specs
                .iter()
                .position(|s| s.name == name)
                .expect("culprit is a HyperNode");
            origin[i]
        };
        drop(node_index);
        self.world.nodes = nodes;
        self.world.hypernodes = Topology::from_hypernodes(&specs, self.world.nodes.len())
            .map_err(|e| {
                let (culprit, msg) = match &e {
                    HyperNodeError::MissingMember(p, m) => (p.clone(), format!("HyperNode {p:?} lists HyperNode {m:?}, which does not exist: expected an existing HyperNode name")),
                    HyperNodeError::TwoParents(c, a, b) => (b.clone(), format!("HyperNode {c:?} has two parents, {a:?} and {b:?}: expected a tree (each HyperNode in at most one parent)")),
                    HyperNodeError::Cycle(c) => (c.clone(), format!("HyperNode {c:?} contains itself through its members: expected a tree")),
                };
                err_obj(at(&culprit), msg)
            })?;
        Ok(())
    }

    fn build_nodes(&mut self) -> Result<(), ScenarioError> {
        // Resources are interned as nodes are read; allocatable vectors are widened at the end.
        let mut built: Vec<(Node, Vec<(usize, i64)>)> = Vec::new();
        let nodes = std::mem::take(&mut self.nodes);
        for p in &nodes {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let st = &p.obj.status;
            let map = if st.allocatable.is_empty() {
                &st.capacity
            } else {
                &st.allocatable
            };
            let alloc = self.allocatable(src, map)?;
            let mut l: Vec<(String, String)> = p
                .obj
                .metadata
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !p.obj.metadata.labels.contains_key("kubernetes.io/hostname") {
                l.push(("kubernetes.io/hostname".into(), name.clone()));
            }
            let node = Node {
                name: name.clone(),
                labels: Labels::new(l),
                allocatable: Vec::new(),
                taints: taints(src, &p.obj.spec.taints)?,
                unschedulable: p.obj.spec.unschedulable,
            };
            self.remember(src, "", &name)?;
            built.push((node, alloc));
        }
        let node_pools = std::mem::take(&mut self.node_pools);
        for p in &node_pools {
            let src = p.src;
            let pool = name_of(src, &p.obj.metadata)?.to_string();
            let spec = &p.obj.spec;
            self.remember(src, "", &pool)?;
            let prefix = spec.name_prefix.clone().unwrap_or_else(|| pool.clone());
            let alloc = self.allocatable(src, &spec.template.allocatable)?;
            let node_taints = taints(src, &spec.template.taints)?;
            let per_domain = match &spec.nodes_per_domain {
                None => 1,
                Some(n) if n.value >= 1 => n.value,
                Some(n) => {
                    return Err(err_at(
                        src,
                        n,
                        format!(
                            "nodesPerDomain {} is not positive: expected an integer ≥ 1",
                            n.value
                        ),
                    ));
                }
            };
            let mut total: i64 = per_domain;
            for l in &spec.levels {
                if l.count.value < 1 {
                    return Err(err_at(
                        src,
                        &l.count,
                        format!(
                            "count {} is not positive: expected an integer ≥ 1",
                            l.count.value
                        ),
                    ));
                }
                total = total.saturating_mul(l.count.value);
            }
            if total > 1_000_000 {
                return Err(err_obj(
                    src,
                    format!("NodePool {pool:?} would make {total} nodes: expected at most 1000000"),
                ));
            }
            let width = (total - 1).max(0).to_string().len();
            // Levels that also make Volcano HyperNodes: tiers must fall going down.
            let mut tiered: Vec<(usize, i32)> = Vec::new();
            for (i, level) in spec.levels.iter().enumerate() {
                if let Some(t) = &level.hyper_node_tier {
                    if t.value < 0 || t.value > i64::from(i32::MAX) {
                        return Err(err_at(
                            src,
                            t,
                            format!(
                                "hyperNodeTier {} is negative: expected an integer ≥ 0",
                                t.value
                            ),
                        ));
                    }
                    if let Some(&(_, above)) = tiered.last()
                        && t.value as i32 >= above
                    {
                        return Err(err_at(
                            src,
                            t,
                            format!(
                                "hyperNodeTier {} is not below the tier {above} of a broader level: expected tiers to fall from the broadest level down",
                                t.value
                            ),
                        ));
                    }
                    tiered.push((i, t.value as i32));
                }
            }
            let mut hn_index: BTreeMap<String, usize> = BTreeMap::new();
            let node_base = built.len();
            for n in 0..total {
                let name = format!("{prefix}-{n:0width$}");
                let mut l: Vec<(String, String)> = spec
                    .template
                    .labels
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                // Domain index at each level: nodes are laid out depth-first, broadest first.
                let mut span = total;
                for level in &spec.levels {
                    let domains_above = total / span;
                    span /= level.count.value;
                    let index = n / span;
                    let _ = domains_above;
                    let value_prefix = level.value_prefix.clone().unwrap_or_else(|| {
                        level
                            .node_label
                            .value
                            .rsplit(['/', '.'])
                            .next()
                            .unwrap_or("domain")
                            .to_string()
                    });
                    l.push((
                        level.node_label.value.clone(),
                        format!("{value_prefix}-{index}"),
                    ));
                }
                l.push(("kubernetes.io/hostname".into(), name.clone()));
                // This node's HyperNodes: one per tiered level, each a member of the one above.
                let mut parent_hn: Option<usize> = None;
                for &(li, tier) in &tiered {
                    let value = &l[l.len() - 1 - (spec.levels.len() - li)].1;
                    let hn_name = format!("{pool}-{value}");
                    let k = match hn_index.get(&hn_name) {
                        Some(&k) => k,
                        None => {
                            let k = self.generated_hypernodes.len();
                            if let Some(p) = parent_hn {
                                self.generated_hypernodes[p]
                                    .0
                                    .members
                                    .push(HyperNodeMember::HyperNode(hn_name.clone()));
                            }
                            self.generated_hypernodes.push((
                                HyperNodeSpec {
                                    name: hn_name.clone(),
                                    tier,
                                    tier_name: None,
                                    members: Vec::new(),
                                },
                                src,
                            ));
                            hn_index.insert(hn_name, k);
                            k
                        }
                    };
                    parent_hn = Some(k);
                }
                if let Some(p) = parent_hn {
                    let id = NodeId::from_index(node_base + n as usize);
                    self.generated_hypernodes[p]
                        .0
                        .members
                        .push(HyperNodeMember::Node(id));
                }
                let dup_key = ("Node".to_string(), String::new(), name.clone());
                if let Some(first) = self.seen.get(&dup_key) {
                    return Err(err_obj(
                        src,
                        format!(
                            "NodePool {pool:?} makes node {name:?}, which is already defined at {first}: expected unique node names (set spec.namePrefix)"
                        ),
                    ));
                }
                self.seen.insert(dup_key, src.kind_pos.clone());
                built.push((
                    Node {
                        name,
                        labels: Labels::new(l),
                        allocatable: Vec::new(),
                        taints: node_taints.clone(),
                        unschedulable: false,
                    },
                    alloc.clone(),
                ));
            }
        }
        let n_res = self.world.resources.len();
        for (mut node, alloc) in built {
            node.allocatable = vec![0; n_res];
            for (r, a) in alloc {
                node.allocatable[r] = a;
            }
            self.world.nodes.push(node);
        }
        Ok(())
    }

    /// Per-pod requests as Kubernetes' `PodRequests` computes them: the sum of containers
    /// (limits standing in for missing requests) and restartable sidecars, the max against
    /// each init container, plus overhead.
    fn pod_requests(
        &mut self,
        src: &ObjectText<'_>,
        spec: &wire::PodSpec,
    ) -> Result<ResourceList, ScenarioError> {
        let mut container_requests =
            |c: &wire::Container| -> Result<Vec<(usize, i64)>, ScenarioError> {
                let mut out = Vec::new();
                for (r, q) in &c.resources.requests {
                    out.push((self.world.resources.intern(r).index(), quantity(src, r, q)?));
                }
                for (r, q) in &c.resources.limits {
                    if !c.resources.requests.contains_key(r) {
                        out.push((self.world.resources.intern(r).index(), quantity(src, r, q)?));
                    }
                }
                Ok(out)
            };
        let mut sum: BTreeMap<usize, i64> = BTreeMap::new();
        for c in &spec.containers {
            for (r, a) in container_requests(c)? {
                *sum.entry(r).or_default() += a;
            }
        }
        let mut sidecars: BTreeMap<usize, i64> = BTreeMap::new();
        let mut init_max: BTreeMap<usize, i64> = BTreeMap::new();
        for c in &spec.init_containers {
            let reqs = container_requests(c)?;
            if c.restart_policy.as_deref() == Some("Always") {
                for (r, a) in reqs {
                    *sidecars.entry(r).or_default() += a;
                    *sum.entry(r).or_default() += a;
                }
            } else {
                for (r, a) in reqs {
                    let need = a + sidecars.get(&r).copied().unwrap_or(0);
                    let e = init_max.entry(r).or_default();
                    *e = (*e).max(need);
                }
            }
        }
        for (r, a) in init_max {
            let e = sum.entry(r).or_default();
            *e = (*e).max(a);
        }
        for (r, q) in &spec.overhead {
            let a = quantity(src, r, q)?;
            *sum.entry(self.world.resources.intern(r).index())
                .or_default() += a;
        }
        Ok(ResourceList::from_pairs(
            sum.into_iter()
                .map(|(r, a)| (kueuesim_model::ResourceId::from_index(r), a))
                .collect(),
        ))
    }

    fn pod_set(
        &mut self,
        src: &ObjectText<'_>,
        name: String,
        count: u32,
        min_count: Option<u32>,
        t: &wire::PodTemplateSpec,
    ) -> Result<PodSet, ScenarioError> {
        if t.spec.containers.is_empty() {
            return Err(err_obj(
                src,
                format!(
                    "pod set {name:?} has a pod template without containers: expected spec.containers with at least one container"
                ),
            ));
        }
        let ann = &t.metadata.annotations;
        let topology_request = match (
            ann.get("kueue.x-k8s.io/podset-required-topology"),
            ann.get("kueue.x-k8s.io/podset-preferred-topology"),
            ann.get("kueue.x-k8s.io/podset-unconstrained-topology"),
        ) {
            (Some(r), _, _) => Some(TopologyRequest::Required(r.value.trim().to_string())),
            (None, Some(p), _) => Some(TopologyRequest::Preferred(p.value.trim().to_string())),
            (None, None, Some(u)) if u.value.trim() == "true" => {
                Some(TopologyRequest::Unconstrained)
            }
            _ => None,
        };
        Ok(PodSet {
            name,
            count,
            min_count,
            requests: self.pod_requests(src, &t.spec)?,
            node_selector: labels(&t.spec.node_selector),
            tolerations: tolerations(src, &t.spec.tolerations)?,
            priority_class_name: t.spec.priority_class_name.as_ref().map(|s| s.value.clone()),
            spec_shape: spec_shape(&t.spec),
            topology_request,
        })
    }

    /// Resolves the LocalQueue of a job: the queue-name label, else the namespace's `default`
    /// LocalQueue, else not managed by Kueue.
    fn job_queue(&self, namespace: &str, label: Option<&str>) -> (QueueRef, Option<String>) {
        let name = match label {
            Some(n) => n.to_string(),
            None => match self.lq_id(namespace, DEFAULT_LOCAL_QUEUE) {
                Some(_) => DEFAULT_LOCAL_QUEUE.to_string(),
                None => return (QueueRef::Unmanaged, None),
            },
        };
        match self.lq_id(namespace, &name) {
            Some(id) => (QueueRef::Local(id), Some(name)),
            None => (QueueRef::Missing(name.clone()), Some(name)),
        }
    }

    fn lq_id(&self, namespace: &str, name: &str) -> Option<LocalQueueId> {
        self.world
            .local_queues
            .iter()
            .position(|l| l.namespace == namespace && l.name == name)
            .map(LocalQueueId::from_index)
    }

    fn wpc(&self, name: &str) -> Option<&PriorityClass> {
        self.world
            .priority_classes
            .iter()
            .find(|p| !p.is_pod_priority_class && p.name == name)
    }

    fn pod_pc(&self, name: &str) -> Option<&PriorityClass> {
        self.world
            .priority_classes
            .iter()
            .find(|p| p.is_pod_priority_class && p.name == name)
    }

    /// Kueue's `ExtractPriority` for a job: the WorkloadPriorityClass label (the `default`
    /// WorkloadPriorityClass when no label and it exists: WorkloadPriorityClassDefaulting),
    /// else the pod template's PriorityClass, else the lowest globalDefault PriorityClass,
    /// else 0. A missing WorkloadPriorityClass blocks the Workload's creation.
    fn job_priority(
        &self,
        label: Option<&str>,
        pod_pc: Option<&Spanned<String>>,
        src: &ObjectText<'_>,
    ) -> Result<(Option<String>, i32, Option<CreationBlocked>), ScenarioError> {
        let wpc_name = label
            .map(str::to_string)
            .or_else(|| self.wpc("default").map(|_| "default".to_string()));
        if let Some(n) = wpc_name {
            return Ok(match self.wpc(&n) {
                Some(p) => (Some(n), p.value, None),
                None => (
                    Some(n.clone()),
                    0,
                    Some(CreationBlocked {
                        reason: "WorkloadPriorityClassNotFound",
                        message: format!("WorkloadPriorityClass {n:?} not found"),
                    }),
                ),
            });
        }
        self.pod_priority(pod_pc, src)
    }

    /// The pod-level priority: the pod template's PriorityClass, else the lowest-valued
    /// `globalDefault` PriorityClass, else 0.
    fn pod_priority(
        &self,
        pod_pc: Option<&Spanned<String>>,
        src: &ObjectText<'_>,
    ) -> Result<(Option<String>, i32, Option<CreationBlocked>), ScenarioError> {
        if let Some(pc) = pod_pc {
            return match self.pod_pc(&pc.value) {
                Some(p) => Ok((Some(p.name.clone()), p.value, None)),
                None => Err(err_at(
                    src,
                    pc,
                    format!(
                        "priorityClassName {:?} names no PriorityClass: expected a scheduling.k8s.io PriorityClass defined in the input (the API server rejects such pods)",
                        pc.value
                    ),
                )),
            };
        }
        let global = self
            .world
            .priority_classes
            .iter()
            .filter(|p| p.is_pod_priority_class && p.global_default)
            .min_by_key(|p| p.value);
        Ok(match global {
            Some(p) => (Some(p.name.clone()), p.value, None),
            None => (None, 0, None),
        })
    }

    fn scheduler_name(
        &self,
        src: &ObjectText<'_>,
        s: Option<&Spanned<String>>,
    ) -> Result<String, ScenarioError> {
        match s {
            None => Ok("default-scheduler".to_string()),
            Some(s) if self.world.config.scheduler(&s.value).is_some() => Ok(s.value.clone()),
            Some(s) => {
                let known: Vec<&str> = self
                    .world
                    .config
                    .schedulers
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect();
                Err(err_at(
                    src,
                    s,
                    format!(
                        "schedulerName {:?} is run by no scheduler: expected one of {} (map more names in Simulation spec.schedulers)",
                        s.value,
                        known.join(", ")
                    ),
                ))
            }
        }
    }

    /// What the workload's gang scheduler makes of it (research/volcano-kai.md §1.1, §2.4):
    /// - Volcano: one PodGroup per owner, `minMember` from the owner's
    ///   `scheduling.volcano.sh/group-min-member` (default 1 for a Job, whose pods Volcano's
    ///   PodGroup controller groups; a bare Workload is one gang of all its pods), the
    ///   network topology from the pod template's `volcano.sh/network-topology-mode` and
    ///   `volcano.sh/network-topology-highest-tier`;
    /// - KAI: a batch Job's pods get one PodGroup each (KAI's job grouper); a bare Workload is
    ///   one gang; the topology constraint from the top owner's `kai.scheduler/topology`,
    ///   `…-required-placement`, `…-preferred-placement`;
    /// - `kueuesim.io/bound-nodes`: pods already running, in pod order.
    fn gang_spec(
        &self,
        src: &ObjectText<'_>,
        scheduler_name: &str,
        meta: &wire::ObjectMeta,
        templates: &[&wire::ObjectMeta],
        pod_set_names: &[String],
        is_job: bool,
    ) -> Result<GangSpec, ScenarioError> {
        let template = templates[0];
        let mut gang = GangSpec::default();
        match self.world.config.scheduler(scheduler_name) {
            Some(SchedulerKind::Volcano) => {
                // Upstream falls back to 1 on a value it cannot parse; here that is an error,
                // so a typo does not silently break a gang.
                gang.min_member = match meta.annotations.get("scheduling.volcano.sh/group-min-member") {
                    Some(v) => Some(v.value.trim().parse::<u32>().map_err(|_| {
                        err_at(src, v, format!("scheduling.volcano.sh/group-min-member {:?}: expected a non-negative integer", v.value))
                    })?),
                    None if is_job => Some(1),
                    None => None,
                };
                let annotations = if is_job {
                    &template.annotations
                } else {
                    &meta.annotations
                };
                let mode = annotations.get("volcano.sh/network-topology-mode");
                let tier = annotations.get("volcano.sh/network-topology-highest-tier");
                // PodGroup spec.networkTopology.highestTierName has no pod annotation upstream;
                // this one stands in for it until Volcano PodGroups load.
                let tier_name = annotations.get("kueuesim.io/network-topology-highest-tier-name");
                if mode.is_some() || tier.is_some() || tier_name.is_some() {
                    // Invalid modes fall back to hard, as the PodGroup controller does.
                    let hard = mode.is_none_or(|m| m.value.trim() != "soft");
                    let highest_tier = match tier {
                        None => tier_name.map(|n| TierRef::Name(n.value.trim().to_string())),
                        Some(t) => Some(TierRef::Number(t.value.trim().parse::<i32>().map_err(|_| {
                            err_at(src, t, format!("volcano.sh/network-topology-highest-tier {:?}: expected an integer tier", t.value))
                        })?)),
                    };
                    gang.network_topology = Some(NetworkTopology { hard, highest_tier });
                }
                if let Some(pg) = meta.annotations.get("scheduling.k8s.io/group-name") {
                    self.volcano_pod_group(src, pg, meta, templates, pod_set_names, &mut gang)?;
                }
            }
            Some(SchedulerKind::Kai) => {
                gang.pod_group_per_pod = is_job;
                // kai.scheduler/queue; KAI's implicit default-queue otherwise.
                gang.kai_queue = match meta.labels.get("kai.scheduler/queue").map(String::as_str) {
                    None | Some("default-queue") => None,
                    Some(q) => match self.world.kai_queues.iter().position(|k| k.name == q) {
                        Some(i) => Some(i),
                        None => {
                            return Err(err_obj(
                                src,
                                format!(
                                    "label kai.scheduler/queue {q:?} names no KAI Queue in the input: expected a scheduling.run.ai Queue of that name, or default-queue"
                                ),
                            ));
                        }
                    },
                };
                if let Some(pg) = meta.annotations.get("pod-group-name") {
                    self.kai_pod_group(src, pg, meta, templates, &mut gang)?;
                }
                let get = |k: &str| meta.annotations.get(k).map(|v| v.value.trim().to_string());
                let required = get("kai.scheduler/topology-required-placement");
                let preferred = get("kai.scheduler/topology-preferred-placement");
                match (
                    get("kai.scheduler/topology"),
                    required.is_some() || preferred.is_some(),
                ) {
                    (Some(topology), _) => {
                        gang.kai_topology = Some(KaiTopologyConstraint {
                            topology,
                            required,
                            preferred,
                        });
                    }
                    (None, true) => {
                        return Err(err_obj(
                            src,
                            "kai.scheduler/topology-required-placement or -preferred-placement without kai.scheduler/topology: expected the Topology's name in kai.scheduler/topology",
                        ));
                    }
                    (None, false) => {}
                }
            }
            _ => {}
        }
        if let Some(b) = meta.annotations.get("kueuesim.io/bound-nodes") {
            for name in b.value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let Some(i) = self.world.nodes.iter().position(|n| n.name == name) else {
                    return Err(err_at(
                        src,
                        b,
                        format!(
                            "kueuesim.io/bound-nodes names node {name:?}, which does not exist: expected node names"
                        ),
                    ));
                };
                gang.bound_nodes.push(NodeId::from_index(i));
            }
        }
        Ok(gang)
    }

    /// The Volcano PodGroup a workload names (`scheduling.k8s.io/group-name`): its minMember,
    /// networkTopology and `subGroupPolicy` (pod sets matching a policy's labelSelector,
    /// grouped by equal values of its matchLabelKeys).
    fn volcano_pod_group(
        &self,
        src: &ObjectText<'_>,
        pg_name: &wire::S,
        meta: &wire::ObjectMeta,
        templates: &[&wire::ObjectMeta],
        pod_set_names: &[String],
        gang: &mut GangSpec,
    ) -> Result<(), ScenarioError> {
        let ns = namespace_of(meta);
        let Some(pg) = self
            .volcano_pod_groups
            .get(&(ns.clone(), pg_name.value.clone()))
        else {
            return Err(err_at(
                src,
                pg_name,
                format!(
                    "scheduling.k8s.io/group-name {:?}: no Volcano PodGroup {ns}/{} in the input: expected a scheduling.volcano.sh PodGroup of that name",
                    pg_name.value, pg_name.value
                ),
            ));
        };
        let psrc = pg.src;
        let spec = &pg.obj.spec;
        if let Some(m) = &spec.min_member {
            if m.value < 0 || m.value > i64::from(u32::MAX) {
                return Err(err_at(
                    psrc,
                    m,
                    format!("minMember {} is negative: expected an integer ≥ 0", m.value),
                ));
            }
            gang.min_member = Some(m.value as u32);
        }
        let topology =
            |nt: &wire::VolcanoNetworkTopology| -> Result<NetworkTopology, ScenarioError> {
                let hard = match &nt.mode {
                    None => true,
                    Some(m) => one_of(
                        psrc,
                        m,
                        "networkTopology mode",
                        &[("hard", true), ("soft", false)],
                    )?,
                };
                let highest_tier = match (&nt.highest_tier_allowed, &nt.highest_tier_name) {
                    (Some(_), Some(_)) => {
                        return Err(err_obj(
                            psrc,
                            "networkTopology has both highestTierAllowed and highestTierName: expected one of them",
                        ));
                    }
                    (Some(t), None) => {
                        Some(TierRef::Number(i32::try_from(t.value).map_err(|_| {
                            err_at(psrc, t, "highestTierAllowed: expected a tier number")
                        })?))
                    }
                    (None, Some(n)) => Some(TierRef::Name(n.clone())),
                    (None, None) => None,
                };
                Ok(NetworkTopology { hard, highest_tier })
            };
        if let Some(nt) = &spec.network_topology {
            gang.network_topology = Some(topology(nt)?);
        }
        // minTaskMember: task names are the pod set names.
        for (task, m) in &spec.min_task_member {
            let Some(ps) = pod_set_names.iter().position(|n| n == task) else {
                return Err(err_at(
                    psrc,
                    m,
                    format!(
                        "minTaskMember names task {task:?}, which the workload does not have: expected one of {pod_set_names:?}"
                    ),
                ));
            };
            if m.value < 0 || m.value > i64::from(u32::MAX) {
                return Err(err_at(
                    psrc,
                    m,
                    format!(
                        "minTaskMember {} is negative: expected an integer ≥ 0",
                        m.value
                    ),
                ));
            }
            gang.min_task_member.push((ps, m.value as u32));
        }
        for policy in &spec.sub_group_policy {
            let pname = policy
                .name
                .as_ref()
                .map_or(String::new(), |n| n.value.clone());
            let sel = match &policy.label_selector {
                Some(l) => Some(selector(psrc, l)?),
                None => None,
            };
            let nt = match &policy.network_topology {
                Some(nt) => Some(topology(nt)?),
                None => None,
            };
            // One subgroup per distinct tuple of matchLabelKeys values.
            let mut groups: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
            for (ps, t) in templates.iter().enumerate() {
                let l = labels(&t.labels);
                if sel.as_ref().is_some_and(|s| !s.matches(&l)) {
                    continue;
                }
                let key: Vec<String> = policy
                    .match_label_keys
                    .iter()
                    .map(|k| l.get(k).unwrap_or_default().to_string())
                    .collect();
                match groups.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1.push(ps),
                    None => groups.push((key, vec![ps])),
                }
            }
            for (key, pod_sets) in groups {
                gang.volcano_subgroups.push(VolcanoSubGroup {
                    name: std::iter::once(pname.clone())
                        .chain(key)
                        .collect::<Vec<_>>()
                        .join("/"),
                    pod_sets,
                    network_topology: nt.clone(),
                });
            }
        }
        Ok(())
    }

    /// The KAI PodGroup a workload names (`pod-group-name`): its minMember, topology
    /// constraint and subgroups, with each pod set in the subgroup its template's
    /// `kai.scheduler/subgroup-name` label names.
    fn kai_pod_group(
        &self,
        src: &ObjectText<'_>,
        pg_name: &wire::S,
        meta: &wire::ObjectMeta,
        templates: &[&wire::ObjectMeta],
        gang: &mut GangSpec,
    ) -> Result<(), ScenarioError> {
        let ns = namespace_of(meta);
        let Some(pg) = self
            .kai_pod_groups
            .get(&(ns.clone(), pg_name.value.clone()))
        else {
            return Err(err_at(
                src,
                pg_name,
                format!(
                    "pod-group-name {:?}: no KAI PodGroup {ns}/{} in the input: expected a scheduling.run.ai PodGroup of that name",
                    pg_name.value, pg_name.value
                ),
            ));
        };
        let psrc = pg.src;
        let spec = &pg.obj.spec;
        gang.pod_group_per_pod = false;
        if let Some(m) = &spec.min_member {
            if m.value < 0 || m.value > i64::from(u32::MAX) {
                return Err(err_at(
                    psrc,
                    m,
                    format!("minMember {} is negative: expected an integer ≥ 0", m.value),
                ));
            }
            gang.min_member = Some(m.value as u32);
        }
        let pg_topology = spec
            .topology_constraint
            .as_ref()
            .and_then(|t| t.topology.clone());
        let constraint =
            |t: &Option<wire::KaiTopologyConstraint>| -> Option<KaiTopologyConstraint> {
                let t = t.as_ref()?;
                let topology = t.topology.clone().or_else(|| pg_topology.clone())?;
                (t.required_topology_level.is_some() || t.preferred_topology_level.is_some()).then(
                    || KaiTopologyConstraint {
                        topology,
                        required: t.required_topology_level.clone(),
                        preferred: t.preferred_topology_level.clone(),
                    },
                )
            };
        if gang.kai_topology.is_none() {
            gang.kai_topology = constraint(&spec.topology_constraint);
        }
        // Subgroups, parents resolved by name; listed parents-first for the engine.
        let names: Vec<&str> = spec
            .sub_groups
            .iter()
            .map(|g| g.name.as_ref().map_or("", |n| n.value.as_str()))
            .collect();
        let mut order: Vec<usize> = Vec::new();
        let mut placed = vec![false; names.len()];
        while order.len() < names.len() {
            let before = order.len();
            for (i, g) in spec.sub_groups.iter().enumerate() {
                if placed[i] {
                    continue;
                }
                let ready = match &g.parent {
                    None => true,
                    Some(p) => match names.iter().position(|n| *n == p.value) {
                        Some(pi) => placed[pi],
                        None => {
                            return Err(err_at(
                                psrc,
                                p,
                                format!(
                                    "subgroup parent {:?} is not a subgroup of this PodGroup: expected one of {names:?}",
                                    p.value
                                ),
                            ));
                        }
                    },
                };
                if ready {
                    placed[i] = true;
                    order.push(i);
                }
            }
            if order.len() == before {
                return Err(err_obj(
                    psrc,
                    "subGroups form a cycle through their parents: expected a tree",
                ));
            }
        }
        for &i in &order {
            let g = &spec.sub_groups[i];
            let Some(name) = g.name.as_ref().filter(|n| !n.value.is_empty()) else {
                return Err(err_obj(
                    psrc,
                    "a subgroup has no name: expected spec.subGroups[].name",
                ));
            };
            let parent = g.parent.as_ref().map(|p| {
                let pi = names
                    .iter()
                    .position(|n| *n == p.value)
                    .expect("resolved above");
                order.iter().position(|&o| o == pi).expect("parents first")
            });
            let min_member = match &g.min_member {
                Some(m) if m.value >= 0 && m.value <= i64::from(u32::MAX) => {
                    (m.value as u32).max(1)
                }
                Some(m) => {
                    return Err(err_at(
                        psrc,
                        m,
                        format!("minMember {} is negative: expected an integer ≥ 0", m.value),
                    ));
                }
                None => 1,
            };
            gang.kai_subgroups.push(KaiSubGroup {
                name: name.value.clone(),
                parent,
                min_member,
                constraint: constraint(&g.topology_constraint),
            });
        }
        for t in templates {
            let sg = match t.labels.get("kai.scheduler/subgroup-name") {
                None => None,
                Some(n) => match gang.kai_subgroups.iter().position(|g| g.name == *n) {
                    Some(i) => Some(i),
                    None => {
                        return Err(err_at(
                            src,
                            pg_name,
                            format!(
                                "a pod set's kai.scheduler/subgroup-name {n:?} is not a subgroup of PodGroup {}: expected one of {names:?}",
                                pg_name.value
                            ),
                        ));
                    }
                },
            };
            gang.pod_set_subgroup.push(sg);
        }
        Ok(())
    }

    /// The Workload of a top-level job object (any kind with pod templates): queue and
    /// priority resolution, Kueue's Workload name, times, max execution time, scheduler and
    /// gang. `templates` are the pod sets' templates in pod-set order; `priority_class` the
    /// kind's own priority class (Kubeflow `runPolicy.schedulingPolicy.priorityClass`), else
    /// the first template's.
    #[allow(clippy::too_many_arguments)]
    fn job_workload(
        &mut self,
        src: &ObjectText<'_>,
        meta: &wire::ObjectMeta,
        kind: JobKind,
        name: &str,
        namespace: &str,
        pod_sets: Vec<PodSet>,
        templates: &[&wire::PodTemplateSpec],
        priority_class: Option<&wire::S>,
    ) -> Result<Workload, ScenarioError> {
        let template = templates[0];
        let (queue, queue_name) = self.job_queue(
            namespace,
            meta.labels
                .get(QUEUE_LABEL)
                .map(String::as_str)
                .filter(|q| !q.is_empty()),
        );
        let managed = queue != QueueRef::Unmanaged;
        let pod_pc = priority_class.or(template.spec.priority_class_name.as_ref());
        let (priority_class, priority, creation_blocked) = if managed {
            self.job_priority(
                meta.labels.get(PRIORITY_CLASS_LABEL).map(String::as_str),
                pod_pc,
                src,
            )?
        } else {
            // Not Kueue's: the pod's own priority class (or the global default) matters
            // only to its scheduler.
            self.pod_priority(pod_pc, src)?
        };
        let uid = meta
            .uid
            .clone()
            .unwrap_or_else(|| format!("{namespace}/{name}"));
        let (created_at, arrival) = self.times(src, meta)?;
        let job_max_exec = match meta.labels.get("kueue.x-k8s.io/max-exec-time-seconds") {
            None => None,
            Some(v) => match v.trim().parse::<i64>() {
                Ok(n) if n > 0 => Some(SimDuration::from_secs(n)),
                _ => {
                    return Err(err_obj(
                        src,
                        format!(
                            "label kueue.x-k8s.io/max-exec-time-seconds {v:?}: expected a positive integer number of seconds"
                        ),
                    ));
                }
            },
        };
        let report_name = if managed {
            kueue_workload_name(kind.kind, kind.group, name, &uid)
        } else {
            name.to_string()
        };
        let scheduler_name = self.scheduler_name(src, template.spec.scheduler_name.as_ref())?;
        let metas: Vec<&wire::ObjectMeta> = templates.iter().map(|t| &t.metadata).collect();
        let names: Vec<String> = pod_sets.iter().map(|p| p.name.clone()).collect();
        let gang = self.gang_spec(
            src,
            &scheduler_name,
            meta,
            &metas,
            &names,
            kind.is_batch_job,
        )?;
        self.ensure_namespace(namespace);
        Ok(Workload {
            namespace: namespace.to_string(),
            name: report_name,
            kind: if managed {
                "Workload".into()
            } else {
                kind.kind.into()
            },
            owner: Some((kind.kind.into(), name.to_string())),
            uid,
            queue,
            queue_name,
            priority_class,
            priority,
            scheduler_name,
            created_at,
            arrival,
            duration: self.workload_duration(src, meta, false)?,
            pod_sets,
            active: true,
            initial_admission: None,
            last_eviction: None,
            max_execution_time: job_max_exec,
            job_uid: meta.uid.clone(),
            creation_blocked,
            gang: Arc::new(gang),
        })
    }

    /// A positive replica count (default 1) as a pod count.
    fn replicas(
        src: &ObjectText<'_>,
        what: &str,
        v: Option<&Spanned<i64>>,
    ) -> Result<u32, ScenarioError> {
        match v {
            None => Ok(1),
            Some(r) if r.value >= 1 && r.value <= i64::from(u32::MAX) => Ok(r.value as u32),
            Some(r) => Err(err_at(
                src,
                r,
                format!(
                    "{what} {} is not positive: expected an integer ≥ 1 (a pod set of 0 pods is not admitted)",
                    r.value
                ),
            )),
        }
    }

    /// The job kinds beyond batch/v1 Job, with Kueue's pod-set derivation
    /// (research/manifests.md §1): JobSet, Kubeflow jobs, MPIJob, RayJob, RayCluster,
    /// Deployment (a Workload per pod), StatefulSet (one pod group), LeaderWorkerSet (a
    /// Workload per group) and Pods.
    fn build_other_jobs(&mut self, out: &mut Vec<(usize, Workload)>) -> Result<(), ScenarioError> {
        let jobsets = std::mem::take(&mut self.jobsets);
        for p in &jobsets {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            if p.obj.spec.replicated_jobs.is_empty() {
                return Err(err_obj(
                    src,
                    format!(
                        "JobSet {namespace}/{name} has no spec.replicatedJobs: expected at least one"
                    ),
                ));
            }
            let mut pod_sets = Vec::new();
            let mut templates = Vec::new();
            for rj in &p.obj.spec.replicated_jobs {
                let Some(rj_name) = rj.name.as_ref().filter(|n| !n.value.is_empty()) else {
                    return Err(err_obj(
                        src,
                        "a replicatedJob has no name: expected spec.replicatedJobs[].name",
                    ));
                };
                let replicas = Self::replicas(src, "replicas", rj.replicas.as_ref())?;
                let job = &rj.template.spec;
                let parallelism = Self::replicas(src, "parallelism", job.parallelism.as_ref())?;
                let completions = match &job.completions {
                    None => parallelism,
                    Some(_) => Self::replicas(src, "completions", job.completions.as_ref())?,
                };
                let count = replicas.saturating_mul(parallelism.min(completions));
                pod_sets.push(self.pod_set(
                    src,
                    rj_name.value.to_lowercase(),
                    count,
                    None,
                    &job.template,
                )?);
                templates.push(&job.template);
            }
            let kind = JobKind {
                kind: "JobSet",
                group: "jobset.x-k8s.io",
                is_batch_job: false,
            };
            let w = self.job_workload(
                src, meta, kind, &name, &namespace, pod_sets, &templates, None,
            )?;
            out.push((src.order, w));
        }
        let kubeflow = std::mem::take(&mut self.kubeflow_jobs);
        for (kind, p) in &kubeflow {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            let spec = &p.obj.spec;
            // Kueue's replica-type order per kind.
            let (specs, order): (Option<&BTreeMap<String, wire::ReplicaSpec>>, &[&str]) =
                match *kind {
                    "PyTorchJob" => (spec.pytorch_replica_specs.as_ref(), &["Master", "Worker"]),
                    "TFJob" => (
                        spec.tf_replica_specs.as_ref(),
                        &["Chief", "Master", "PS", "Worker", "Evaluator"],
                    ),
                    "XGBoostJob" => (spec.xgb_replica_specs.as_ref(), &["Master", "Worker"]),
                    "PaddleJob" => (spec.paddle_replica_specs.as_ref(), &["Master", "Worker"]),
                    "JAXJob" => (spec.jax_replica_specs.as_ref(), &["Worker"]),
                    _ => (spec.mpi_replica_specs.as_ref(), &["Launcher", "Worker"]),
                };
            let Some(specs) = specs.filter(|m| !m.is_empty()) else {
                return Err(err_obj(
                    src,
                    format!(
                        "{kind} {namespace}/{name} has no replica specs: expected spec.{} with {}",
                        match *kind {
                            "PyTorchJob" => "pytorchReplicaSpecs",
                            "TFJob" => "tfReplicaSpecs",
                            "XGBoostJob" => "xgbReplicaSpecs",
                            "PaddleJob" => "paddleReplicaSpecs",
                            "JAXJob" => "jaxReplicaSpecs",
                            _ => "mpiReplicaSpecs",
                        },
                        order.join(" / ")
                    ),
                ));
            };
            if let Some(unknown) = specs.keys().find(|k| !order.contains(&k.as_str())) {
                return Err(err_obj(
                    src,
                    format!(
                        "{kind} {namespace}/{name} has replica type {unknown:?}: expected one of {}",
                        order.join(", ")
                    ),
                ));
            }
            let mut pod_sets = Vec::new();
            let mut templates = Vec::new();
            for rt in order.iter().filter_map(|t| specs.get(*t).map(|s| (t, s))) {
                let (t, rs) = rt;
                let count = Self::replicas(src, "replicas", rs.replicas.as_ref())?;
                pod_sets.push(self.pod_set(src, t.to_lowercase(), count, None, &rs.template)?);
                templates.push(&rs.template);
            }
            let policy = spec
                .run_policy
                .as_ref()
                .and_then(|r| r.scheduling_policy.as_ref());
            let group = "kubeflow.org";
            let jk = JobKind {
                kind,
                group,
                is_batch_job: false,
            };
            let mut w = self.job_workload(
                src,
                meta,
                jk,
                &name,
                &namespace,
                pod_sets,
                &templates,
                policy.and_then(|p| p.priority_class.as_ref()),
            )?;
            // Gang schedulers: runPolicy.schedulingPolicy.minAvailable, else every pod.
            if let Some(m) = policy.and_then(|p| p.min_available.as_ref()) {
                Arc::make_mut(&mut w.gang).min_member =
                    Some(u32::try_from(m.value.max(0)).unwrap_or(u32::MAX));
            }
            out.push((src.order, w));
        }
        let ray_jobs = std::mem::take(&mut self.ray_jobs);
        for p in &ray_jobs {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            let Some(cluster) = &p.obj.spec.ray_cluster_spec else {
                return Err(err_obj(
                    src,
                    format!(
                        "RayJob {namespace}/{name} has no spec.rayClusterSpec: expected the cluster it runs on"
                    ),
                ));
            };
            let (mut pod_sets, mut templates) = self.ray_pod_sets(src, cluster)?;
            // K8sJobMode (the default) runs a submitter pod: its template, or Kueue's default
            // of 500m cpu and 200Mi memory.
            let mode = p
                .obj
                .spec
                .submission_mode
                .as_deref()
                .unwrap_or("K8sJobMode");
            if mode == "K8sJobMode" {
                match &p.obj.spec.submitter_pod_template {
                    Some(t) => {
                        pod_sets.push(self.pod_set(src, "submitter".into(), 1, None, t)?);
                        templates.push(t);
                    }
                    None => {
                        let mut ps = self.pod_set(
                            src,
                            "submitter".into(),
                            1,
                            None,
                            &cluster.head_group_spec.template,
                        )?;
                        let cpu = self.world.resources.intern("cpu");
                        let mem = self.world.resources.intern("memory");
                        ps.requests =
                            ResourceList::from_pairs(vec![(cpu, 500), (mem, 200 * 1024 * 1024)]);
                        pod_sets.push(ps);
                        templates.push(&cluster.head_group_spec.template);
                    }
                }
            }
            let kind = JobKind {
                kind: "RayJob",
                group: "ray.io",
                is_batch_job: false,
            };
            let w = self.job_workload(
                src, meta, kind, &name, &namespace, pod_sets, &templates, None,
            )?;
            out.push((src.order, w));
        }
        let train_jobs = std::mem::take(&mut self.train_jobs);
        let runtimes = std::mem::take(&mut self.training_runtimes);
        for p in &train_jobs {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            let rr = &p.obj.spec.runtime_ref;
            let Some(rname) = rr.name.as_ref().filter(|n| !n.value.is_empty()) else {
                return Err(err_obj(
                    src,
                    format!(
                        "TrainJob {namespace}/{name} has no spec.runtimeRef.name: expected the runtime it runs"
                    ),
                ));
            };
            let cluster = rr
                .kind
                .as_ref()
                .is_none_or(|k| k.value == "ClusterTrainingRuntime");
            let Some((_, rt)) = runtimes.iter().find(|(c, r)| {
                *c == cluster
                    && r.obj
                        .metadata
                        .name
                        .as_ref()
                        .is_some_and(|n| n.value == rname.value)
                    && (cluster || namespace_of(&r.obj.metadata) == namespace)
            }) else {
                let what = if cluster {
                    "ClusterTrainingRuntime"
                } else {
                    "TrainingRuntime"
                };
                return Err(err_at(
                    src,
                    rname,
                    format!(
                        "TrainJob {namespace}/{name} names {what} {:?}, which is not in the input: expected a trainer.kubeflow.org {what}",
                        rname.value
                    ),
                ));
            };
            let rspec = &rt.obj.spec;
            let trainer = p.obj.spec.trainer.as_ref();
            let num_nodes = match trainer
                .and_then(|t| t.num_nodes.as_ref())
                .or(rspec.ml_policy.as_ref().and_then(|m| m.num_nodes.as_ref()))
            {
                None => 1,
                Some(n) => Self::replicas(src, "numNodes", Some(n))?,
            };
            if rspec.template.spec.replicated_jobs.is_empty() {
                return Err(err_obj(
                    rt.src,
                    "the runtime has no spec.template.spec.replicatedJobs: expected the JobSet it builds",
                ));
            }
            // The child JobSet the trainer builds: the trainer step (ancestor label `trainer`,
            // or the replicatedJob `node`) runs numNodes pods with resourcesPerNode.
            let mut pod_sets = Vec::new();
            let mut templates = Vec::new();
            for rj in &rspec.template.spec.replicated_jobs {
                let Some(rj_name) = rj.name.as_ref().filter(|n| !n.value.is_empty()) else {
                    return Err(err_obj(
                        rt.src,
                        "a replicatedJob has no name: expected spec.template.spec.replicatedJobs[].name",
                    ));
                };
                let is_trainer = rj
                    .template
                    .metadata
                    .labels
                    .get("trainer.kubeflow.org/trainjob-ancestor-step")
                    .is_some_and(|v| v == "trainer")
                    || rj_name.value == "node";
                let replicas = Self::replicas(rt.src, "replicas", rj.replicas.as_ref())?;
                let job = &rj.template.spec;
                let count = if is_trainer {
                    num_nodes
                } else {
                    let parallelism =
                        Self::replicas(rt.src, "parallelism", job.parallelism.as_ref())?;
                    replicas.saturating_mul(parallelism)
                };
                let mut ps = self.pod_set(
                    rt.src,
                    rj_name.value.to_lowercase(),
                    count,
                    None,
                    &job.template,
                )?;
                if is_trainer && let Some(res) = trainer.and_then(|t| t.resources_per_node.as_ref())
                {
                    let container = wire::Container {
                        name: None,
                        resources: wire::ResourceRequirements {
                            requests: res.requests.clone(),
                            limits: res.limits.clone(),
                        },
                        restart_policy: None,
                    };
                    let spec = wire::PodSpec {
                        containers: vec![container],
                        ..Default::default()
                    };
                    ps.requests = self.pod_requests(src, &spec)?;
                }
                pod_sets.push(ps);
                templates.push(&job.template);
            }
            let kind = JobKind {
                kind: "TrainJob",
                group: "trainer.kubeflow.org",
                is_batch_job: false,
            };
            let mut w = self.job_workload(
                src, meta, kind, &name, &namespace, pod_sets, &templates, None,
            )?;
            // podGroupPolicy: Volcano's PodGroup gets every pod as minMember and the runtime's
            // networkTopology; coscheduling gangs every pod too.
            if let Some(pgp) = &rspec.pod_group_policy {
                Arc::make_mut(&mut w.gang).min_member = None;
                if let Some(nt) = pgp
                    .volcano
                    .as_ref()
                    .and_then(|v| v.network_topology.as_ref())
                {
                    let hard = match &nt.mode {
                        None => true,
                        Some(m) => one_of(
                            rt.src,
                            m,
                            "networkTopology mode",
                            &[("hard", true), ("soft", false)],
                        )?,
                    };
                    let highest_tier = match (&nt.highest_tier_allowed, &nt.highest_tier_name) {
                        (Some(t), _) => {
                            Some(TierRef::Number(i32::try_from(t.value).unwrap_or(i32::MAX)))
                        }
                        (None, Some(n)) => Some(TierRef::Name(n.clone())),
                        (None, None) => None,
                    };
                    Arc::make_mut(&mut w.gang).network_topology =
                        Some(NetworkTopology { hard, highest_tier });
                }
            }
            out.push((src.order, w));
        }
        let volcano_jobs = std::mem::take(&mut self.volcano_jobs);
        for p in &volcano_jobs {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            let dup = ("VolcanoJob".to_string(), namespace.clone(), name.clone());
            if let Some(first) = self.seen.get(&dup) {
                return Err(err_obj(
                    src,
                    format!("duplicate Volcano Job {namespace}/{name}: first defined at {first}"),
                ));
            }
            self.seen.insert(dup, src.kind_pos.clone());
            let spec = &p.obj.spec;
            if spec.tasks.is_empty() {
                return Err(err_obj(
                    src,
                    format!(
                        "Volcano Job {namespace}/{name} has no spec.tasks: expected at least one task"
                    ),
                ));
            }
            // One pod set per task; a task with a partitionPolicy is split into its
            // partitions (`<task>-<i>`, partitionSize pods each), each a subgroup with the
            // policy's network topology.
            let mut pod_sets = Vec::new();
            let mut templates = Vec::new();
            let mut partitions: Vec<(usize, Option<NetworkTopology>)> = Vec::new();
            let mut task_mins: Vec<(usize, u32)> = Vec::new();
            let topology =
                |nt: &wire::VolcanoNetworkTopology| -> Result<NetworkTopology, ScenarioError> {
                    let hard = match &nt.mode {
                        None => true,
                        Some(m) => one_of(
                            src,
                            m,
                            "networkTopology mode",
                            &[("hard", true), ("soft", false)],
                        )?,
                    };
                    let highest_tier = match (&nt.highest_tier_allowed, &nt.highest_tier_name) {
                        (Some(_), Some(_)) => {
                            return Err(err_obj(
                                src,
                                "networkTopology has both highestTierAllowed and highestTierName: expected one of them",
                            ));
                        }
                        (Some(t), None) => {
                            Some(TierRef::Number(i32::try_from(t.value).unwrap_or(i32::MAX)))
                        }
                        (None, Some(n)) => Some(TierRef::Name(n.clone())),
                        (None, None) => None,
                    };
                    Ok(NetworkTopology { hard, highest_tier })
                };
            for t in &spec.tasks {
                let Some(tname) = t.name.as_ref().filter(|n| !n.value.is_empty()) else {
                    return Err(err_obj(
                        src,
                        "a task has no name: expected spec.tasks[].name",
                    ));
                };
                let replicas = Self::replicas(src, "replicas", t.replicas.as_ref())?;
                match &t.partition_policy {
                    Some(pp) => {
                        let total =
                            Self::replicas(src, "totalPartitions", pp.total_partitions.as_ref())?;
                        let size =
                            Self::replicas(src, "partitionSize", pp.partition_size.as_ref())?;
                        if total.saturating_mul(size) != replicas {
                            let at = pp.total_partitions.as_ref().or(pp.partition_size.as_ref());
                            let msg = format!(
                                "task {:?}: totalPartitions × partitionSize = {} but replicas = {replicas}: expected them equal",
                                tname.value,
                                u64::from(total) * u64::from(size)
                            );
                            return Err(match at {
                                Some(a) => err_at(src, a, msg),
                                None => err_obj(src, msg),
                            });
                        }
                        let nt = pp.network_topology.as_ref().map(topology).transpose()?;
                        for i in 0..total {
                            partitions.push((pod_sets.len(), nt.clone()));
                            pod_sets.push(self.pod_set(
                                src,
                                format!("{}-{i}", tname.value),
                                size,
                                None,
                                &t.template,
                            )?);
                            templates.push(&t.template);
                        }
                    }
                    None => {
                        if let Some(m) = &t.min_available {
                            task_mins.push((
                                pod_sets.len(),
                                u32::try_from(m.value.max(0)).unwrap_or(u32::MAX),
                            ));
                        }
                        pod_sets.push(self.pod_set(
                            src,
                            tname.value.clone(),
                            replicas,
                            None,
                            &t.template,
                        )?);
                        templates.push(&t.template);
                    }
                }
            }
            let kind = JobKind {
                kind: "VolcanoJob",
                group: "batch.volcano.sh",
                is_batch_job: false,
            };
            let mut w = self.job_workload(
                src, meta, kind, &name, &namespace, pod_sets, &templates, None,
            )?;
            // Kueue does not manage Volcano Jobs: the Volcano job controller's PodGroup runs it.
            let scheduler = spec.scheduler_name.as_ref();
            w.scheduler_name = self.scheduler_name(src, scheduler)?;
            if scheduler.is_none() {
                w.scheduler_name = "volcano".into();
            }
            if self.world.config.scheduler(&w.scheduler_name) != Some(SchedulerKind::Volcano) {
                return Err(err_obj(
                    src,
                    format!(
                        "Volcano Job {namespace}/{name} runs on scheduler {:?}: expected a name mapped to volcano",
                        w.scheduler_name
                    ),
                ));
            }
            w.queue = QueueRef::Unmanaged;
            w.queue_name = None;
            w.kind = "VolcanoJob".into();
            w.name = name.clone();
            Arc::make_mut(&mut w.gang).min_member = spec
                .min_available
                .as_ref()
                .map(|m| u32::try_from(m.value.max(0)).unwrap_or(u32::MAX));
            Arc::make_mut(&mut w.gang).min_task_member = task_mins;
            Arc::make_mut(&mut w.gang).network_topology =
                spec.network_topology.as_ref().map(topology).transpose()?;
            Arc::make_mut(&mut w.gang).volcano_subgroups = partitions
                .into_iter()
                .map(|(ps, nt)| VolcanoSubGroup {
                    name: w.pod_sets[ps].name.clone(),
                    pod_sets: vec![ps],
                    network_topology: nt,
                })
                .collect();
            out.push((src.order, w));
        }
        let ray_clusters = std::mem::take(&mut self.ray_clusters);
        for p in &ray_clusters {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            let (pod_sets, templates) = self.ray_pod_sets(src, &p.obj.spec)?;
            let kind = JobKind {
                kind: "RayCluster",
                group: "ray.io",
                is_batch_job: false,
            };
            let w = self.job_workload(
                src, meta, kind, &name, &namespace, pod_sets, &templates, None,
            )?;
            out.push((src.order, w));
        }
        let statefulsets = std::mem::take(&mut self.statefulsets);
        for p in &statefulsets {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            // One pod group of `replicas` pods (Kueue's StatefulSet integration).
            let count = Self::replicas(src, "replicas", p.obj.spec.replicas.as_ref())?;
            let t = &p.obj.spec.template;
            let ps = self.pod_set(src, "main".into(), count, None, t)?;
            let kind = JobKind {
                kind: "StatefulSet",
                group: "apps",
                is_batch_job: false,
            };
            let w = self.job_workload(src, meta, kind, &name, &namespace, vec![ps], &[t], None)?;
            out.push((src.order, w));
        }
        let deployments = std::mem::take(&mut self.deployments);
        for p in &deployments {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            // Every pod is its own single-pod Workload (the pod integration).
            let count = Self::replicas(src, "replicas", p.obj.spec.replicas.as_ref())?;
            let t = &p.obj.spec.template;
            for i in 0..count {
                let ps = self.pod_set(src, "main".into(), 1, None, t)?;
                let kind = JobKind {
                    kind: "Pod",
                    group: "",
                    is_batch_job: false,
                };
                let pod = format!("{name}-{i}");
                let w =
                    self.job_workload(src, meta, kind, &pod, &namespace, vec![ps], &[t], None)?;
                out.push((src.order, w));
            }
        }
        let lws = std::mem::take(&mut self.leader_worker_sets);
        for p in &lws {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            let groups = Self::replicas(src, "replicas", p.obj.spec.replicas.as_ref())?;
            let lwt = &p.obj.spec.leader_worker_template;
            let size = Self::replicas(src, "size", lwt.size.as_ref())?;
            for g in 0..groups {
                let mut pod_sets = Vec::new();
                let mut templates = Vec::new();
                match &lwt.leader_template {
                    Some(leader) => {
                        pod_sets.push(self.pod_set(src, "leader".into(), 1, None, leader)?);
                        templates.push(leader);
                        if size > 1 {
                            pod_sets.push(self.pod_set(
                                src,
                                "worker".into(),
                                size - 1,
                                None,
                                &lwt.worker_template,
                            )?);
                            templates.push(&lwt.worker_template);
                        }
                    }
                    None => {
                        pod_sets.push(self.pod_set(
                            src,
                            "main".into(),
                            size,
                            None,
                            &lwt.worker_template,
                        )?);
                        templates.push(&lwt.worker_template);
                    }
                }
                let kind = JobKind {
                    kind: "LeaderWorkerSet",
                    group: "leaderworkerset.x-k8s.io",
                    is_batch_job: false,
                };
                let group_name = format!("{name}-{g}");
                let w = self.job_workload(
                    src,
                    meta,
                    kind,
                    &group_name,
                    &namespace,
                    pod_sets,
                    &templates,
                    None,
                )?;
                out.push((src.order, w));
            }
        }
        let pods = std::mem::take(&mut self.pods);
        // Pod groups: pods sharing `kueue.x-k8s.io/pod-group-name` in a namespace are one
        // Workload named after the group, with one pod set per role (pods of one spec shape).
        let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
        for (i, p) in pods.iter().enumerate() {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            if let Some(g) = meta.labels.get("kueue.x-k8s.io/pod-group-name") {
                groups.entry((namespace, g.clone())).or_default().push(i);
                continue;
            }
            let pod = &p.obj;
            let ps = self.pod_set(src, "main".into(), 1, None, pod)?;
            let kind = JobKind {
                kind: "Pod",
                group: "",
                is_batch_job: false,
            };
            let mut w =
                self.job_workload(src, meta, kind, &name, &namespace, vec![ps], &[pod], None)?;
            // A Pod already bound (`spec.nodeName`) occupies its node from time 0.
            if let Some(node) = &pod.spec.node_name {
                let Some(i) = self.world.nodes.iter().position(|n| n.name == node.value) else {
                    return Err(err_at(
                        src,
                        node,
                        format!(
                            "spec.nodeName {:?} is not a node of the input: expected a Node or NodePool node",
                            node.value
                        ),
                    ));
                };
                if w.queue != QueueRef::Unmanaged {
                    return Err(err_at(
                        src,
                        node,
                        "a bound Pod managed by Kueue: expected its admitted Workload in the input instead (kueuesim continues Kueue's pods from their Workloads)",
                    ));
                }
                Arc::make_mut(&mut w.gang).bound_nodes = vec![NodeId::from_index(i)];
            }
            out.push((src.order, w));
        }
        for ((namespace, group), members) in groups {
            let first = &pods[members[0]];
            let src = first.src;
            let meta = &first.obj.metadata;
            let total = match meta.annotations.get("kueue.x-k8s.io/pod-group-total-count") {
                Some(t) => match t.value.trim().parse::<usize>() {
                    Ok(n) if n >= 1 => n,
                    _ => {
                        return Err(err_at(
                            src,
                            t,
                            format!(
                                "pod-group-total-count {:?}: expected a positive integer",
                                t.value
                            ),
                        ));
                    }
                },
                None => {
                    return Err(err_obj(
                        src,
                        format!(
                            "pod group {namespace}/{group} has no kueue.x-k8s.io/pod-group-total-count annotation: expected the number of pods in the group"
                        ),
                    ));
                }
            };
            if members.len() != total {
                // Kueue waits for every pod of the group before it creates the Workload.
                self.warnings.push(format!(
                    "{}: pod group {namespace}/{group} has {} of its {total} pods in the input; Kueue waits for all of them, so it is not simulated",
                    src.kind_pos,
                    members.len()
                ));
                continue;
            }
            // Roles: pods of one spec shape, named by the shape's digest, sorted by name.
            let mut roles: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for &m in &members {
                let role = match pods[m]
                    .obj
                    .metadata
                    .annotations
                    .get("kueue.x-k8s.io/role-hash")
                {
                    Some(h) => h.value.clone(),
                    None => format!("{:08x}", spec_shape(&pods[m].obj.spec) as u32),
                };
                roles.entry(role).or_default().push(m);
            }
            let mut pod_sets = Vec::new();
            let mut templates = Vec::new();
            for (role, ms) in &roles {
                let t = &pods[ms[0]].obj;
                pod_sets.push(self.pod_set(src, role.clone(), ms.len() as u32, None, t)?);
                templates.push(t);
            }
            let kind = JobKind {
                kind: "Pod",
                group: "",
                is_batch_job: false,
            };
            let mut w = self.job_workload(
                src, meta, kind, &group, &namespace, pod_sets, &templates, None,
            )?;
            // A pod group's Workload is named after the group.
            w.name = group.clone();
            out.push((src.order, w));
        }
        Ok(())
    }

    /// RayCluster pod sets: `head` (1) and one per worker group, `replicas × numOfHosts`.
    #[allow(clippy::type_complexity)]
    fn ray_pod_sets<'t>(
        &mut self,
        src: &ObjectText<'_>,
        c: &'t wire::RayClusterSpec,
    ) -> Result<(Vec<PodSet>, Vec<&'t wire::PodTemplateSpec>), ScenarioError> {
        let mut pod_sets =
            vec![self.pod_set(src, "head".into(), 1, None, &c.head_group_spec.template)?];
        let mut templates = vec![&c.head_group_spec.template];
        for g in &c.worker_group_specs {
            let Some(gname) = g.group_name.as_ref().filter(|n| !n.value.is_empty()) else {
                return Err(err_obj(
                    src,
                    "a workerGroupSpec has no groupName: expected one",
                ));
            };
            let replicas = Self::replicas(src, "replicas", g.replicas.as_ref())?;
            let hosts = match &g.num_of_hosts {
                Some(h) if h.value > 1 => h.value as u32,
                _ => 1,
            };
            pod_sets.push(self.pod_set(
                src,
                gname.value.to_lowercase(),
                replicas.saturating_mul(hosts),
                None,
                &g.template,
            )?);
            templates.push(&g.template);
        }
        Ok((pod_sets, templates))
    }

    /// Creation and arrival times from `creationTimestamp` and the arrival annotation.
    fn times(
        &self,
        src: &ObjectText<'_>,
        meta: &wire::ObjectMeta,
    ) -> Result<(SimTime, SimTime), ScenarioError> {
        if let Some(a) = meta.annotations.get(ARRIVAL_ANNOTATION) {
            let t = SimTime::ZERO + duration(src, a)?;
            return Ok((t, t));
        }
        if let Some(ts) = &meta.creation_timestamp {
            let ms = parse_rfc3339(ts.value.trim()).map_err(|e| err_at(src, ts, e.to_string()))?;
            let created = SimTime::from_millis(ms - self.world.config.start_unix_ms);
            return Ok((created, created.max(SimTime::ZERO)));
        }
        Ok((SimTime::ZERO, SimTime::ZERO))
    }

    fn workload_duration(
        &self,
        src: &ObjectText<'_>,
        meta: &wire::ObjectMeta,
        admitted: bool,
    ) -> Result<Option<SimDuration>, ScenarioError> {
        if admitted && let Some(r) = meta.annotations.get(REMAINING_ANNOTATION) {
            return Ok(Some(duration(src, r)?));
        }
        let own = meta
            .annotations
            .get(DURATION_ANNOTATION)
            .map(|d| duration(src, d))
            .transpose()?;
        // A workload admitted in a snapshot without its own times: the Simulation's
        // `spec.defaultRemaining`.
        Ok(match own {
            None if admitted => self.default_remaining,
            d => d,
        })
    }

    fn build_workloads(&mut self) -> Result<(), ScenarioError> {
        let mut out: Vec<(usize, Workload)> = Vec::new();
        let jobs = std::mem::take(&mut self.jobs);
        for p in &jobs {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let namespace = namespace_of(&p.obj.metadata);
            let meta = &p.obj.metadata;
            let spec = &p.obj.spec;
            self.remember(src, &namespace, &name)?;
            // batch/v1 Job: one pod set `main`, count = min(parallelism, completions).
            let parallelism = spec.parallelism.as_ref().map_or(1, |p| p.value);
            let completions = spec.completions.as_ref().map_or(parallelism, |c| c.value);
            let count = parallelism.min(completions);
            if count < 1 || count > i64::from(u32::MAX) {
                let at = spec.parallelism.as_ref().or(spec.completions.as_ref());
                let msg = format!(
                    "Job {namespace}/{name} runs {count} pods: expected parallelism and completions ≥ 1"
                );
                return Err(match at {
                    Some(s) => err_at(src, s, msg),
                    None => err_obj(src, msg),
                });
            }
            let min_count = match meta.annotations.get("kueue.x-k8s.io/job-min-parallelism") {
                None => None,
                Some(s) => Some(s.value.trim().parse::<u32>().ok().filter(|&m| m >= 1 && i64::from(m) <= count).ok_or_else(|| err_at(src, s, format!("invalid job-min-parallelism {:?}: expected an integer between 1 and the Job's parallelism", s.value)))?),
            };
            let template = &spec.template;
            let pod_set = self.pod_set(src, "main".into(), count as u32, min_count, template)?;
            let w = self.job_workload(
                src,
                meta,
                JobKind {
                    kind: "Job",
                    group: "batch",
                    is_batch_job: true,
                },
                &name,
                &namespace,
                vec![pod_set],
                &[template],
                None,
            )?;
            out.push((src.order, w));
        }
        self.build_other_jobs(&mut out)?;
        let workloads = std::mem::take(&mut self.workloads);
        for p in &workloads {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let namespace = namespace_of(&p.obj.metadata);
            let meta = &p.obj.metadata;
            let spec = &p.obj.spec;
            self.remember(src, &namespace, &name)?;
            if spec.pod_sets.is_empty() {
                return Err(err_obj(
                    src,
                    format!(
                        "Workload {namespace}/{name} has no spec.podSets: expected 1 to 18 pod sets"
                    ),
                ));
            }
            if spec.pod_sets.len() > 18 {
                return Err(err_obj(
                    src,
                    format!(
                        "Workload {namespace}/{name} has {} pod sets: expected 1 to 18",
                        spec.pod_sets.len()
                    ),
                ));
            }
            let mut pod_sets: Vec<PodSet> = Vec::new();
            for ps in &spec.pod_sets {
                if pod_sets.iter().any(|p| p.name == ps.name.value) {
                    return Err(err_at(
                        src,
                        &ps.name,
                        format!(
                            "pod set name {:?} is used twice: expected unique pod set names",
                            ps.name.value
                        ),
                    ));
                }
                if ps.count.value < 0 || ps.count.value > i64::from(u32::MAX) {
                    return Err(err_at(
                        src,
                        &ps.count,
                        format!(
                            "count {} is out of range: expected a non-negative integer",
                            ps.count.value
                        ),
                    ));
                }
                // The CRD's `+kubebuilder:validation:Minimum=1` on minCount, and the
                // webhook's "at most one podSet can use minCount".
                let min_count = match &ps.min_count {
                    None => None,
                    Some(m) if m.value >= 1 && m.value <= ps.count.value => Some(m.value as u32),
                    Some(m) => {
                        return Err(err_at(
                            src,
                            m,
                            format!(
                                "minCount {} is out of range: expected 1 ≤ minCount ≤ count",
                                m.value
                            ),
                        ));
                    }
                };
                if let Some(m) = &ps.min_count
                    && spec
                        .pod_sets
                        .iter()
                        .filter(|p| p.min_count.is_some())
                        .nth(1)
                        .is_some_and(|p| std::ptr::eq(p, ps))
                {
                    return Err(err_at(
                        src,
                        m,
                        "a second pod set with minCount: expected at most one podSet to use minCount (partial admission)".to_string(),
                    ));
                }
                pod_sets.push(self.pod_set(
                    src,
                    ps.name.value.clone(),
                    ps.count.value as u32,
                    min_count,
                    &ps.template,
                )?);
            }
            // Kueue's CRD allows count 0 per pod set, but a Workload whose pod sets all
            // count 0 runs nothing: almost surely a mistake in the input (docs/semantics.md).
            if let Some(first) = spec.pod_sets.first()
                && spec.pod_sets.iter().all(|p| p.count.value == 0)
            {
                return Err(err_at(
                    src,
                    &first.count,
                    "every pod set has count 0, so the Workload runs no pods: expected a count ≥ 1"
                        .to_string(),
                ));
            }
            // spec.queueName, or the queue-name label; a Workload is never defaulted.
            let qn = spec
                .queue_name
                .as_ref()
                .map(|q| q.value.clone())
                .or_else(|| meta.labels.get(QUEUE_LABEL).cloned())
                .unwrap_or_default();
            let queue = match self.lq_id(&namespace, &qn) {
                Some(id) => QueueRef::Local(id),
                None => QueueRef::Missing(qn.clone()),
            };
            // spec.priority wins (a pre-built Workload carries it); else its class reference.
            let class = spec
                .priority_class_ref
                .as_ref()
                .and_then(|r| {
                    r.name
                        .as_ref()
                        .map(|n| (n.value.clone(), r.kind.as_deref() == Some("PriorityClass")))
                })
                .or_else(|| {
                    spec.priority_class_name.as_ref().map(|n| {
                        (
                            n.value.clone(),
                            spec.priority_class_source.as_deref()
                                == Some("scheduling.k8s.io/priorityclass"),
                        )
                    })
                })
                .or_else(|| {
                    meta.labels
                        .get(PRIORITY_CLASS_LABEL)
                        .map(|n| (n.clone(), false))
                });
            let class_value = class
                .as_ref()
                .and_then(|(n, pod)| if *pod { self.pod_pc(n) } else { self.wpc(n) })
                .map(|p| p.value);
            let priority = spec.priority.or(class_value).unwrap_or(0);
            let uid = meta
                .uid
                .clone()
                .unwrap_or_else(|| format!("{namespace}/{name}"));
            let (created_at, arrival) = self.times(src, meta)?;
            let initial_admission = match &p.obj.status.admission {
                None => None,
                Some(a) => Some(self.initial_admission(
                    src,
                    a,
                    &p.obj.status.conditions,
                    &spec.pod_sets,
                )?),
            };
            // A workload holding quota in the input is running at time 0, whatever its
            // creation time (a `kubectl get` snapshot continued from its start time).
            let arrival = if initial_admission.is_some() {
                SimTime::ZERO
            } else {
                arrival
            };
            // An Evicted=True condition without an admission: requeued before the start.
            let last_eviction = match p
                .obj
                .status
                .conditions
                .iter()
                .find(|c| c.kind == "Evicted" && c.status == "True")
            {
                Some(c) if initial_admission.is_none() => match &c.last_transition_time {
                    Some(ts) => {
                        let ms = parse_rfc3339(ts.value.trim())
                            .map_err(|e| err_at(src, ts, e.to_string()))?;
                        Some((
                            c.reason.clone(),
                            SimTime::from_millis(ms - self.world.config.start_unix_ms),
                        ))
                    }
                    None => None,
                },
                _ => None,
            };
            let scheduler_name =
                self.scheduler_name(src, spec.pod_sets[0].template.spec.scheduler_name.as_ref())?;
            let templates: Vec<&wire::ObjectMeta> =
                spec.pod_sets.iter().map(|p| &p.template.metadata).collect();
            let names: Vec<String> = spec.pod_sets.iter().map(|p| p.name.value.clone()).collect();
            let gang = self.gang_spec(src, &scheduler_name, meta, &templates, &names, false)?;
            self.ensure_namespace(&namespace);
            out.push((
                src.order,
                Workload {
                    namespace,
                    name,
                    kind: "Workload".into(),
                    owner: None,
                    uid,
                    queue,
                    queue_name: Some(qn),
                    priority_class: class.map(|(n, _)| n),
                    priority,
                    scheduler_name,
                    created_at,
                    arrival,
                    duration: self.workload_duration(src, meta, initial_admission.is_some())?,
                    pod_sets,
                    active: spec.active.unwrap_or(true),
                    initial_admission,
                    last_eviction,
                job_uid: meta.labels.get("kueue.x-k8s.io/job-uid").cloned(),
                max_execution_time: match &spec.maximum_execution_time_seconds {
                    None => None,
                    Some(m) if m.value > 0 => Some(SimDuration::from_secs(m.value)),
                    Some(m) => return Err(err_at(src, m, format!("maximumExecutionTimeSeconds {} is not positive: expected an integer ≥ 1", m.value))),
                },
                    creation_blocked: None,
                    gang: Arc::new(gang),
                },
            ));
        }
        // WorkloadGenerators: merged by arrival (ties: document order), pulled lazily.
        let generators = std::mem::take(&mut self.generators);
        let mut streams = Vec::with_capacity(generators.len());
        let mut places = Vec::with_capacity(generators.len());
        for p in &generators {
            let seed = self.world.config.seed;
            let settings = crate::generator::resolve(p.src, &p.obj, &mut self.world, seed)?;
            for q in &settings.queues.items {
                self.ensure_namespace(&q.namespace);
            }
            streams.push(crate::generator::GeneratorStream::new(settings));
            places.push((
                p.src.order,
                p.src.kind_pos.clone(),
                std::rc::Rc::from(p.src.file.text.as_str()),
            ));
        }
        let generated = crate::generator::GeneratedWorkloads::new(streams);
        self.stream = Some(WorkloadStream::new(out, generated, places));
        Ok(())
    }

    fn initial_admission(
        &mut self,
        src: &ObjectText<'_>,
        a: &wire::Admission,
        conditions: &[wire::StatusCondition],
        pod_sets: &[wire::WorkloadPodSet],
    ) -> Result<InitialAdmission, ScenarioError> {
        let Some(cq_name) = &a.cluster_queue else {
            return Err(err_obj(
                src,
                "status.admission has no clusterQueue: expected the ClusterQueue holding the quota",
            ));
        };
        let Some(cq) = self
            .world
            .cluster_queues
            .iter()
            .position(|c| c.name == cq_name.value)
        else {
            return Err(err_at(
                src,
                cq_name,
                format!(
                    "status.admission names ClusterQueue {:?}, which does not exist: expected a ClusterQueue defined in the input",
                    cq_name.value
                ),
            ));
        };
        let mut out = Vec::new();
        for (i, ps) in pod_sets.iter().enumerate() {
            // Assignments are matched by name, falling back to position.
            let psa = a
                .pod_set_assignments
                .iter()
                .find(|x| x.name.as_ref().is_some_and(|n| n.value == ps.name.value))
                .or_else(|| a.pod_set_assignments.get(i));
            let Some(psa) = psa else {
                return Err(err_at(
                    src,
                    &ps.name,
                    format!(
                        "status.admission has no podSetAssignment for pod set {:?}: expected one per pod set",
                        ps.name.value
                    ),
                ));
            };
            let mut flavors = Vec::new();
            for (r, f) in &psa.flavors {
                let Some(fid) = self.flavor_id(&f.value) else {
                    return Err(err_at(
                        src,
                        f,
                        format!(
                            "status.admission names ResourceFlavor {:?}, which does not exist: expected a ResourceFlavor defined in the input",
                            f.value
                        ),
                    ));
                };
                flavors.push((self.world.resources.intern(r), fid));
            }
            flavors.sort();
            let count = match &psa.count {
                None => ps.count.value as u32,
                Some(c) if c.value >= 0 && c.value <= ps.count.value => c.value as u32,
                Some(c) => {
                    return Err(err_at(
                        src,
                        c,
                        format!(
                            "admitted count {} is out of range: expected 0 ≤ count ≤ the pod set's count",
                            c.value
                        ),
                    ));
                }
            };
            out.push(PodSetAdmission { flavors, count });
        }
        let mut reserved_at = None;
        if let Some(c) = conditions
            .iter()
            .find(|c| c.kind == "QuotaReserved" && c.status == "True")
            && let Some(ts) = &c.last_transition_time
        {
            let ms = parse_rfc3339(ts.value.trim()).map_err(|e| err_at(src, ts, e.to_string()))?;
            reserved_at = Some(SimTime::from_millis(ms - self.world.config.start_unix_ms));
        }
        Ok(InitialAdmission {
            cluster_queue: ClusterQueueId::from_index(cq),
            pod_sets: out,
            reserved_at,
        })
    }
}

/// Kueue's Workload name for a job (`GetWorkloadNameForOwnerWithGVK`):
/// `<lower(kind)>-<owner name>-<first 5 hex of sha1(kind \n group \n name \n uid)>`, the prefix
/// truncated to 253 − 6 characters.
pub fn kueue_workload_name(kind: &str, group: &str, owner: &str, uid: &str) -> String {
    let mut h = sha1_smol::Sha1::new();
    h.update(format!("{kind}\n{group}\n{owner}\n{uid}").as_bytes());
    let hex = h.digest().to_string();
    let mut prefix = format!("{}-{owner}", kind.to_lowercase());
    prefix.truncate(253 - 1 - 5);
    format!("{prefix}-{}", &hex[..5])
}
