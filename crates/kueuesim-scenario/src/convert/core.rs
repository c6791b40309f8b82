//! The loader's shared core: the `Builder` (the `World` under construction and the parsed
//! objects waiting to be built), `LoadOptions`, positions and errors of an object's fields,
//! duplicate detection, and the conversions every API family shares (names, quantities,
//! durations, labels, taints, tolerations, label selectors, pod-spec shapes, times).

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_saphyr::Spanned;

use kueuesim_model::limits;
use kueuesim_model::time::{SimDuration, SimTime, parse_rfc3339};
use kueuesim_model::{
    HyperNodeSpec, LabelSelector, Labels, Namespace, SelectorOp, SelectorRequirement, Taint,
    TaintEffect, Toleration, TolerationOp, TopologySlice, World, resource_amount,
};

use crate::error::{Pos, ScenarioError};
use crate::source::ObjectText;
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
/// How often a job saves its work: a failure loses only the work since the last checkpoint.
pub(crate) const CHECKPOINT_ANNOTATION: &str = "kueuesim.io/checkpoint-interval";
/// Running time each restart of a job spends before it does new work.
pub(crate) const RESTART_COST_ANNOTATION: &str = "kueuesim.io/restart-cost";
/// The name of the LocalQueue used for jobs that name none.
pub const DEFAULT_LOCAL_QUEUE: &str = "default";

/// Options of a load.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Unknown kinds are an error instead of a warning.
    pub strict: bool,
    /// `--trace-root`: where trace paths are looked for after the scenario file's directory
    /// (then `$KUEUESIM_TRACE_ROOT`, then the default root; see `trace::root::find_file`).
    pub trace_root: Option<std::path::PathBuf>,
    /// `--seed`: overrides Simulation `spec.seed`; applied before WorkloadGenerators and a
    /// trace's random mappings draw.
    pub seed: Option<u64>,
    /// Leave the workloads in `Loaded::stream` for the engine to pull
    /// (`Simulation::with_stream`) instead of collecting them into `world.workloads`.
    pub stream: bool,
    /// `--patch`: files of partial objects merged into the scenario's (`crate::overlay`).
    pub patches: Vec<crate::source::SourceFile>,
    /// `--set`: one field each (`KIND/[NAMESPACE/]NAME:PATH=VALUE`), after the patches.
    pub sets: Vec<String>,
}

/// A parsed object and where it came from.
pub(super) struct Parsed<'a, T> {
    pub(super) src: &'a ObjectText<'a>,
    pub(super) obj: T,
}

/// An admission check a ClusterQueue lists: its name and `onFlavors`.
pub(super) type ListedCheck = (wire::S, Vec<wire::S>);

/// The `World` under construction, and the parsed objects of each kind waiting for their API
/// family's build step (`Builder::build` in `convert` runs the steps in order).
#[derive(Default)]
pub(super) struct Builder<'a> {
    pub(super) world: World,
    pub(super) warnings: Vec<String>,
    pub(super) simulation: Option<Parsed<'a, wire::Simulation>>,
    pub(super) configuration: Option<Parsed<'a, wire::Configuration>>,
    pub(super) namespaces: Vec<Parsed<'a, wire::Namespace>>,
    pub(super) flavors: Vec<Parsed<'a, wire::ResourceFlavor>>,
    pub(super) cohorts: Vec<Parsed<'a, wire::Cohort>>,
    pub(super) cluster_queues: Vec<Parsed<'a, wire::ClusterQueue>>,
    pub(super) local_queues: Vec<Parsed<'a, wire::LocalQueue>>,
    pub(super) wpcs: Vec<Parsed<'a, wire::WorkloadPriorityClass>>,
    pub(super) pcs: Vec<Parsed<'a, wire::PriorityClass>>,
    pub(super) nodes: Vec<Parsed<'a, wire::Node>>,
    pub(super) node_pools: Vec<Parsed<'a, wire::NodePool>>,
    /// Kueue (false) and KAI (true) Topology objects.
    pub(super) topologies: Vec<(bool, Parsed<'a, wire::Topology>)>,
    pub(super) hypernodes: Vec<Parsed<'a, wire::HyperNode>>,
    /// KAI PodGroups, by (namespace, name).
    pub(super) kai_pod_groups: BTreeMap<(String, String), Parsed<'a, wire::KaiPodGroup>>,
    /// KAI Queues.
    pub(super) kai_queues: Vec<Parsed<'a, wire::KaiQueue>>,
    /// Volcano Queues.
    pub(super) volcano_queues: Vec<Parsed<'a, wire::VolcanoQueue>>,
    /// Simulation `spec.defaultRemaining`.
    pub(super) default_remaining: Option<SimDuration>,
    /// Simulation `spec.variation`.
    pub(super) variation: crate::variation::Variation,
    /// Volcano PodGroups, by (namespace, name).
    pub(super) volcano_pod_groups: BTreeMap<(String, String), Parsed<'a, wire::VolcanoPodGroup>>,
    /// (KAI?, namespace, name) of every PodGroup a pod or job names.
    pub(super) pod_groups_named: std::collections::BTreeSet<(bool, String, String)>,
    /// HyperNodes NodePools generate (levels with `hyperNodeTier`), with their pool.
    pub(super) generated_hypernodes: Vec<(HyperNodeSpec, &'a ObjectText<'a>)>,
    pub(super) jobs: Vec<Parsed<'a, wire::Job>>,
    pub(super) jobsets: Vec<Parsed<'a, wire::JobSet>>,
    /// Kubeflow jobs with their kind.
    pub(super) kubeflow_jobs: Vec<(&'static str, Parsed<'a, wire::KubeflowJob>)>,
    pub(super) ray_jobs: Vec<Parsed<'a, wire::RayJob>>,
    pub(super) train_jobs: Vec<Parsed<'a, wire::TrainJob>>,
    pub(super) volcano_jobs: Vec<Parsed<'a, wire::VolcanoJob>>,
    /// (cluster-scoped?, runtime): ClusterTrainingRuntime and TrainingRuntime objects.
    pub(super) training_runtimes: Vec<(bool, Parsed<'a, wire::TrainingRuntime>)>,
    pub(super) ray_clusters: Vec<Parsed<'a, wire::RayCluster>>,
    pub(super) deployments: Vec<Parsed<'a, wire::ReplicatedPods>>,
    pub(super) statefulsets: Vec<Parsed<'a, wire::ReplicatedPods>>,
    pub(super) leader_worker_sets: Vec<Parsed<'a, wire::LeaderWorkerSet>>,
    /// Grove PodCliqueSets (`jobs::grove`).
    pub(super) pod_clique_sets: Vec<Parsed<'a, wire::PodCliqueSet>>,
    /// Grove ClusterTopologies, by name.
    pub(super) grove_topologies: BTreeMap<String, Parsed<'a, wire::ClusterTopology>>,
    /// Pods: a Pod has a pod template's shape (metadata and spec).
    pub(super) pods: Vec<Parsed<'a, wire::PodTemplateSpec>>,
    pub(super) workloads: Vec<Parsed<'a, wire::Workload>>,
    /// WorkloadGenerators (`crate::generator`), in document order.
    pub(super) generators: Vec<Parsed<'a, wire::WorkloadGenerator>>,
    /// Timelines (`convert::timeline`), in document order.
    pub(super) timelines: Vec<Parsed<'a, wire::Timeline>>,
    /// What the Timeline changes with `set` or `patch` do (`convert::epochs`): the nodes and
    /// Cohorts that appear later are built in from the start.
    pub(super) epoch_plan: Option<&'a super::epochs::EpochPlan>,
    /// Kueue AdmissionChecks and ProvisioningRequestConfigs (`convert::provisioning`).
    pub(super) admission_checks: Vec<Parsed<'a, wire::AdmissionCheck>>,
    pub(super) provisioning_configs: Vec<Parsed<'a, wire::ProvisioningRequestConfig>>,
    /// Per ClusterQueue (by index) the admission checks it lists: (name, onFlavors), with
    /// the ClusterQueue's object.
    pub(super) cq_checks: Vec<(usize, &'a ObjectText<'a>, Vec<ListedCheck>)>,
    /// NodePools with `spec.autoscaling`, in the order built (pool name order).
    pub(super) autoscaled_pools: Vec<kueuesim_model::autoscale::AutoscaledPool>,
    /// Each NodePool's nodes, by pool name: their indexes in `world.nodes`.
    pub(super) pool_nodes: BTreeMap<String, std::ops::Range<usize>>,
    /// Names to indexes in `world`, so that every reference is found in logarithmic time and
    /// loading stays linear in the number of objects (a chain of 100,000 Cohorts).
    pub(super) index: Index,
    /// (kind, namespace, name) → first position, for duplicate detection.
    /// Objects read, by (API group, kind, namespace, name): two kinds of one name in
    /// different groups (KAI's and Volcano's `Queue` and `PodGroup`) are different objects,
    /// as the API server keeps them.
    pub(super) seen: BTreeMap<(String, String, String, String), Pos>,
    /// (namespace, LocalQueue) → how many workloads of the input's objects name that
    /// LocalQueue, which does not exist, and the first such object's position.
    pub(super) missing_queues: BTreeMap<(String, String), (usize, Pos)>,
    /// Pod templates with Kueue's multi-layer slice annotation
    /// (`podset-slice-required-topology-constraints`), which is not modelled: how many, and
    /// the first one's position (one warning for them all).
    pub(super) slice_constraints_ignored: Option<(usize, Pos)>,
    /// Required node affinities of the pod templates, by the nodeSelector label standing
    /// for each (`pod_spec`).
    pub(super) node_affinities: BTreeMap<String, kueuesim_model::NodeAffinity>,
    /// The jobs and Workloads a running Pod of the input may belong to (`owners`).
    pub(super) pod_owners: std::collections::BTreeSet<super::owners::OwnerKey>,
    /// The input's ReplicaSets, each with the Deployment that controls it, if one does
    /// (`owners`: a Deployment's pods are owned by its ReplicaSet).
    pub(super) replica_sets: BTreeMap<(String, String), Option<String>>,
    /// Running Pods by their owner, until the owners' workloads are built (`owners`).
    pub(super) owned_pods: super::owners::OwnedPods,
}

/// Names to indexes of the `World`'s vectors, kept in step as objects are built.
#[derive(Default)]
pub(super) struct Index {
    /// Cohort name → index in `world.cohorts`.
    pub(super) cohorts: BTreeMap<String, usize>,
    /// ClusterQueue name → index in `world.cluster_queues`.
    pub(super) cluster_queues: BTreeMap<String, usize>,
    /// (namespace, name) → index in `world.local_queues`.
    pub(super) local_queues: BTreeMap<(String, String), usize>,
    /// Node name → index in `world.nodes`.
    pub(super) nodes: BTreeMap<String, usize>,
    /// KAI Queue name → index in `world.kai_queues`.
    pub(super) kai_queues: BTreeMap<String, usize>,
    /// Volcano Queue name → index in `world.volcano_queues`.
    pub(super) volcano_queues: BTreeMap<String, usize>,
}

pub(crate) fn pos_of<T>(src: &ObjectText<'_>, s: &Spanned<T>) -> Pos {
    if s.referenced.line() == 0 {
        return src.kind_pos.clone();
    }
    src.pos(s.referenced.line(), s.referenced.column())
}

pub(crate) fn err_at<T>(
    src: &ObjectText<'_>,
    s: &Spanned<T>,
    message: impl Into<String>,
) -> ScenarioError {
    let pos = pos_of(src, s);
    ScenarioError::at(pos.clone(), message, src.frame_for(&pos))
}

/// The Kueue TAS annotations of a slice request, as the Job integration reads them.
pub(crate) const SLICE_LEVEL_ANNOTATION: &str = "kueue.x-k8s.io/podset-slice-required-topology";
pub(crate) const SLICE_SIZE_ANNOTATION: &str = "kueue.x-k8s.io/podset-slice-size";
pub(crate) const SLICE_CONSTRAINTS_ANNOTATION: &str =
    "kueue.x-k8s.io/podset-slice-required-topology-constraints";

/// A Kueue TAS slice request from its level and size (the annotations above, a Workload's
/// `podSetSliceRequiredTopology` and `podSetSliceSize`, or a generator's `sliceRequired` and
/// `sliceSize`; `names` says which), checked as upstream's `ValidateTASPodSetRequest` checks
/// the annotations: each needs the other, the level is not empty and the size is an integer
/// of at least 1. `size` is where it was written, its value if it is an integer, and its text.
pub(crate) fn topology_slice(
    src: &ObjectText<'_>,
    level: Option<&wire::S>,
    size: Option<(Pos, Option<i64>, String)>,
    names: (&str, &str),
) -> Result<Option<TopologySlice>, ScenarioError> {
    let (level_name, size_name) = names;
    let at = |pos: Pos, message: String| {
        let frame = src.frame_for(&pos);
        ScenarioError::at(pos, message, frame)
    };
    match (level, size) {
        (None, None) => Ok(None),
        (Some(l), None) => Err(err_at(
            src,
            l,
            format!(
                "{level_name} without {size_name}: expected {size_name} (pods per slice) with it"
            ),
        )),
        (None, Some((pos, _, _))) => Err(at(
            pos,
            format!(
                "{size_name} without {level_name}: expected {level_name} (the level each slice must fit in) with it"
            ),
        )),
        (Some(l), Some((pos, size, text))) => {
            let level = l.value.trim();
            if level.is_empty() {
                return Err(err_at(
                    src,
                    l,
                    format!("{level_name} is empty: expected a topology level's node label"),
                ));
            }
            match size {
                Some(n) if (1..=i64::from(i32::MAX)).contains(&n) => Ok(Some(TopologySlice {
                    level: level.to_string(),
                    size: n as u32,
                })),
                _ => Err(at(
                    pos,
                    format!(
                        "{size_name} {text:?}: expected an integer of at least 1 (pods per slice)"
                    ),
                )),
            }
        }
    }
}

pub(crate) fn err_obj(src: &ObjectText<'_>, message: impl Into<String>) -> ScenarioError {
    ScenarioError::at(src.kind_pos.clone(), message, &src.file.text)
}

/// Parses an object of a kind the loader reads, and checks its metadata's names as the API
/// server would (`super::names::object_meta`).
pub(super) fn parse<'a, T: DeserializeOwned + wire::HasMeta>(
    src: &'a ObjectText<'a>,
) -> Result<Parsed<'a, T>, ScenarioError> {
    let obj: T = crate::source::from_yaml(&src.text).map_err(|e| src.yaml_error(&e))?;
    if let Some(meta) = obj.meta() {
        super::names::object_meta(src, meta)?;
    }
    Ok(Parsed { src, obj })
}

pub(super) fn name_of<'s>(
    src: &ObjectText<'_>,
    meta: &'s wire::ObjectMeta,
) -> Result<&'s str, ScenarioError> {
    match &meta.name {
        Some(n) if !n.value.is_empty() => Ok(&n.value),
        _ => Err(err_obj(
            src,
            format!("{} has no metadata.name: expected a name", src.kind),
        )),
    }
}

pub(super) fn namespace_of(meta: &wire::ObjectMeta) -> String {
    meta.namespace
        .as_ref()
        .map_or_else(|| "default".to_string(), |n| n.value.clone())
}

/// An amount of `resource` for a node or a pod, at most `limits::MAX_QUANTITY`.
pub(super) fn quantity(
    src: &ObjectText<'_>,
    resource: &str,
    q: &Spanned<String>,
) -> Result<i64, ScenarioError> {
    let amount = amount(src, resource, q)?;
    limits::check_quantity(resource, amount).map_err(|e| err_at(src, q, e))
}

/// A quota of `resource` (it may cover a whole cluster), at most `limits::MAX_QUOTA`.
pub(super) fn quota(
    src: &ObjectText<'_>,
    resource: &str,
    q: &Spanned<String>,
) -> Result<i64, ScenarioError> {
    let amount = amount(src, resource, q)?;
    limits::check_quota(resource, amount).map_err(|e| err_at(src, q, e))
}

fn amount(src: &ObjectText<'_>, resource: &str, q: &Spanned<String>) -> Result<i64, ScenarioError> {
    let parsed = kueuesim_model::Quantity::parse(q.value.trim())
        .map_err(|e| err_at(src, q, e.to_string()))?;
    resource_amount(resource, &parsed).map_err(|e| err_at(src, q, format!("{resource}: {e}")))
}

/// A duration field, at most `limits::MAX_DURATION`.
pub(super) fn duration(
    src: &ObjectText<'_>,
    d: &Spanned<String>,
) -> Result<SimDuration, ScenarioError> {
    limits::parse_duration(d.value.trim()).map_err(|e| err_at(src, d, e))
}

/// A duration field, at most `limits::MAX_DURATION` (for the modules beside `convert`).
pub(crate) fn duration_field(
    src: &ObjectText<'_>,
    d: &Spanned<String>,
) -> Result<SimDuration, ScenarioError> {
    duration(src, d)
}

/// A checkpoint interval (`kueuesim.io/checkpoint-interval`, a generator's
/// `checkpointInterval`): a positive duration.
pub(crate) fn checkpoint_interval(
    src: &ObjectText<'_>,
    d: &Spanned<String>,
) -> Result<SimDuration, ScenarioError> {
    let v = duration(src, d)?;
    if v <= SimDuration::ZERO {
        return Err(err_at(
            src,
            d,
            format!(
                "checkpoint interval {:?}: expected a positive duration",
                d.value
            ),
        ));
    }
    Ok(v)
}

/// An offset from the simulation start (an arrival, a horizon), at most `limits::MAX_TIME`.
pub(super) fn time_offset(
    src: &ObjectText<'_>,
    d: &Spanned<String>,
) -> Result<SimTime, ScenarioError> {
    let d = limits::parse_time_offset(d.value.trim()).map_err(|e| err_at(src, d, e))?;
    Ok(SimTime::ZERO + d)
}

/// Whole seconds of an integer field (`what` names it), at most `limits::MAX_DURATION`.
pub(super) fn seconds(
    src: &ObjectText<'_>,
    s: &Spanned<i64>,
    what: &str,
) -> Result<SimDuration, ScenarioError> {
    limits::check_seconds(what, s.value).map_err(|e| err_at(src, s, e))
}

/// An integer field (`what` names it) in `min..=max`, the range stated when it is not.
pub(super) fn count_in(
    src: &ObjectText<'_>,
    s: &Spanned<i64>,
    what: &str,
    min: i64,
    max: i64,
) -> Result<i64, ScenarioError> {
    limits::check_count(what, s.value, min, max).map_err(|e| err_at(src, s, e))
}

pub(super) fn one_of<T: Copy>(
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

pub(super) fn labels(map: &BTreeMap<String, String>) -> Labels {
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

pub(super) fn taints(
    src: &ObjectText<'_>,
    ts: &[wire::Taint],
) -> Result<Vec<Taint>, ScenarioError> {
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

pub(super) fn tolerations(
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

pub(super) fn selector(
    src: &ObjectText<'_>,
    s: &wire::LabelSelector,
) -> Result<LabelSelector, ScenarioError> {
    // `ValidateLabelSelector`: matchLabels as labels (a requirement's key and values as a
    // label key and values, where the selector is used).
    super::names::labels(src, &s.match_labels, "matchLabels")?;
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

/// A digest of a pod spec's scheduling-relevant fields, free of source positions, so equal
/// templates get equal digests (FNV-1a over a canonical text).
pub(super) fn spec_shape(spec: &wire::PodSpec) -> u64 {
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
    // The required node affinity, as written (without the positions of its values).
    if let Some(required) = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
    {
        for term in &required.node_selector_terms {
            text.push_str("na:");
            for (kind, list) in [("e", &term.match_expressions), ("f", &term.match_fields)] {
                for r in list {
                    let _ = write!(
                        text,
                        "{kind}[{}|{}|{}]",
                        r.key,
                        r.operator.value,
                        r.values.join(",")
                    );
                }
            }
            text.push(';');
        }
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
    // Only `Never`, the one value that changes what the pods do (Volcano's preempt and
    // reclaim skip them): `PreemptLowerPriority`, which the API server writes into every
    // pod of a dump, behaves as no policy, so such pods keep the digest (and the pod set
    // name) they had.
    if spec
        .preemption_policy
        .as_ref()
        .is_some_and(|p| p.value.trim() == "Never")
    {
        text.push_str("pp:Never;");
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

/// Makes sure namespace `name` exists in `world`; namespaces are implicit when not declared
/// (created as Kubernetes would, with its name label).
pub(super) fn ensure_namespace(world: &mut World, name: &str) {
    if !world.has_namespace(name) {
        world.add_namespace(Namespace {
            name: name.to_string(),
            labels: Labels::new(vec![(
                "kubernetes.io/metadata.name".into(),
                name.to_string(),
            )]),
        });
    }
}

impl<'a> Builder<'a> {
    pub(super) fn remember(
        &mut self,
        src: &ObjectText<'_>,
        namespace: &str,
        name: &str,
    ) -> Result<(), ScenarioError> {
        let group = src
            .api_version
            .rsplit_once('/')
            .map_or("", |(g, _)| g)
            .to_string();
        let key = (
            group,
            src.kind.clone(),
            namespace.to_string(),
            name.to_string(),
        );
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

    /// Notes a workload of `src` that names LocalQueue `queue` of `namespace`, which does not
    /// exist.
    pub(super) fn note_missing_queue(
        &mut self,
        src: &ObjectText<'_>,
        namespace: &str,
        queue: &str,
    ) {
        self.missing_queues
            .entry((namespace.to_string(), queue.to_string()))
            .or_insert((0, src.kind_pos.clone()))
            .0 += 1;
    }

    /// One warning per LocalQueue that workloads of the input's objects name but that does not
    /// exist. Upstream accepts such a workload and keeps it pending ("LocalQueue X doesn't
    /// exist", kueue `pkg/cache/queue`), and so does the run; this only says so at load, once
    /// per queue, with the count and the first workload's place. (A run's report checks the
    /// same of every workload the run saw, traces and generators included, after the run.)
    pub(super) fn missing_queue_warnings(&mut self) {
        let mut missing = std::mem::take(&mut self.missing_queues);
        if !self.world.config.kueue_enabled {
            // Without Kueue (`spec.kueue.enabled: false`) no workload waits for a LocalQueue:
            // its pods go to their scheduler.
            missing.clear();
        }
        for ((ns, q), (n, pos)) in missing {
            self.warnings.push(if q.is_empty() {
                // `manageJobsWithoutQueueName`: managed, with no queue to go to.
                format!(
                    "{pos}: {n} job(s) of namespace {ns} name no LocalQueue and Kueue manages them (manageJobsWithoutQueueName; the first here): they will stay pending as Kueue keeps them (\"LocalQueue  doesn't exist\")"
                )
            } else {
                format!(
                    "{pos}: LocalQueue {ns}/{q} is not defined in the input; {n} workload(s) name it (the first here) and will stay pending as Kueue keeps them (\"LocalQueue {q} doesn't exist\")"
                )
            });
        }
        if let Some((n, pos)) = self.slice_constraints_ignored.take() {
            self.warnings.push(format!(
                "{pos}: annotation {SLICE_CONSTRAINTS_ANNOTATION} (Kueue's multi-layer slices, \
                 gate TASMultiLayerTopology) is not modelled; {n} pod set(s) carry it (the first \
                 here) and are placed without it, by their other topology annotations"
            ));
        }
    }

    /// Makes sure namespace `name` exists; namespaces are implicit when not declared.
    pub(super) fn ensure_namespace(&mut self, name: &str) {
        ensure_namespace(&mut self.world, name);
    }

    /// Creation and arrival times from `creationTimestamp` and the arrival annotation.
    pub(super) fn times(
        &self,
        src: &ObjectText<'_>,
        meta: &wire::ObjectMeta,
    ) -> Result<(SimTime, SimTime), ScenarioError> {
        if let Some(a) = meta.annotations.get(ARRIVAL_ANNOTATION) {
            let t = time_offset(src, a)?;
            return Ok((t, t));
        }
        if let Some(ts) = &meta.creation_timestamp {
            let ms = parse_rfc3339(ts.value.trim()).map_err(|e| err_at(src, ts, e.to_string()))?;
            // Both are within years 0000 to 9999, so the difference fits easily.
            let created = SimTime::from_millis(ms - self.world.config.start_unix_ms);
            if created.millis().unsigned_abs() > limits::MAX_TIME.millis().unsigned_abs() {
                return Err(err_at(
                    src,
                    ts,
                    format!(
                        "creationTimestamp {} is {} from the simulation start: expected at most {} either way",
                        ts.value.trim(),
                        SimDuration::from_millis(created.millis().saturating_abs()),
                        limits::MAX_TIME
                    ),
                ));
            }
            return Ok((created, created.max(SimTime::ZERO)));
        }
        Ok((SimTime::ZERO, SimTime::ZERO))
    }

    /// KAI's `LastStartTimestamp` of a job running at the start: the
    /// `kai.scheduler/last-start-timestamp` annotation (RFC 3339) in `annotations`, relative to
    /// the simulation start and at most 0 (it runs at the start); None when not given.
    pub(super) fn kai_last_start(
        &self,
        src: &ObjectText<'_>,
        annotations: &wire::Keyed<wire::S>,
    ) -> Result<Option<SimTime>, ScenarioError> {
        let Some(ts) = annotations.get("kai.scheduler/last-start-timestamp") else {
            return Ok(None);
        };
        let ms = parse_rfc3339(ts.value.trim())
            .map_err(|e| err_at(src, ts, format!("kai.scheduler/last-start-timestamp: {e}")))?;
        let at = SimTime::from_millis(ms - self.world.config.start_unix_ms);
        if at.millis().unsigned_abs() > limits::MAX_TIME.millis().unsigned_abs() {
            return Err(err_at(
                src,
                ts,
                format!(
                    "kai.scheduler/last-start-timestamp {} is {} from the simulation start: expected at most {} either way",
                    ts.value.trim(),
                    SimDuration::from_millis(at.millis().saturating_abs()),
                    limits::MAX_TIME
                ),
            ));
        }
        Ok(Some(at.min(SimTime::ZERO)))
    }

    /// A job's `kueuesim.io/checkpoint-interval` and `kueuesim.io/restart-cost`, with its
    /// controller's reaction to lost pods `on_pod_loss`.
    pub(super) fn resilience(
        &self,
        src: &ObjectText<'_>,
        meta: &wire::ObjectMeta,
        on_pod_loss: kueuesim_model::OnPodLoss,
    ) -> Result<kueuesim_model::Resilience, ScenarioError> {
        Ok(kueuesim_model::Resilience {
            on_pod_loss,
            checkpoint_interval: meta
                .annotations
                .get(CHECKPOINT_ANNOTATION)
                .map(|c| checkpoint_interval(src, c))
                .transpose()?,
            restart_cost: meta
                .annotations
                .get(RESTART_COST_ANNOTATION)
                .map(|c| duration(src, c))
                .transpose()?
                .unwrap_or(SimDuration::ZERO),
        })
    }

    pub(super) fn workload_duration(
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
}
