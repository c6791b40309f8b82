//! The gang schedulers' own objects: Volcano PodGroups and Queues, KAI PodGroups, and
//! Grove's PodCliqueSet and ClusterTopology.

use super::*;

// ---- Volcano PodGroup (scheduling.volcano.sh/v1beta1) ------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoNetworkTopology {
    pub mode: Option<S>,
    pub highest_tier_allowed: Option<Spanned<i64>>,
    pub highest_tier_name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SubGroupPolicy {
    pub name: Option<S>,
    pub label_selector: Option<LabelSelector>,
    pub match_label_keys: Vec<String>,
    pub sub_group_size: Option<Spanned<i64>>,
    pub min_sub_groups: Option<Spanned<i64>>,
    pub network_topology: Option<VolcanoNetworkTopology>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoPodGroupSpec {
    pub min_member: Option<Spanned<i64>>,
    pub min_resources: Option<ResourceMap>,
    pub min_task_member: BTreeMap<String, Spanned<i64>>,
    pub queue: Option<S>,
    pub network_topology: Option<VolcanoNetworkTopology>,
    pub sub_group_policy: Vec<SubGroupPolicy>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoPodGroup {
    pub metadata: ObjectMeta,
    pub spec: VolcanoPodGroupSpec,
}

/// `scheduling.volcano.sh/v1beta1` Queue.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoQueue {
    pub metadata: ObjectMeta,
    pub spec: VolcanoQueueSpec,
    pub status: VolcanoQueueStatus,
}

/// A Volcano Queue's spec: every field of upstream's `QueueSpec`, so a misspelt one is an
/// error naming the closest.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct VolcanoQueueSpec {
    pub weight: Option<Spanned<i64>>,
    pub capability: ResourceMap,
    pub reclaimable: Option<bool>,
    pub extend_clusters: Option<serde::de::IgnoredAny>,
    pub guarantee: VolcanoGuarantee,
    pub affinity: Option<serde::de::IgnoredAny>,
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub parent: Option<S>,
    pub deserved: ResourceMap,
    pub priority: Option<Spanned<i64>>,
    pub dequeue_strategy: Option<S>,
}

/// `spec.guarantee`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct VolcanoGuarantee {
    pub resource: ResourceMap,
}

/// A Volcano Queue's status: only `state` is read (a dump's counters are not).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoQueueStatus {
    pub state: Option<S>,
}

// ---- KAI PodGroup (scheduling.run.ai/v2alpha2) -------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KaiTopologyConstraint {
    pub topology: Option<String>,
    pub required_topology_level: Option<String>,
    pub preferred_topology_level: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KaiSubGroup {
    pub name: Option<S>,
    pub min_member: Option<Spanned<i64>>,
    pub parent: Option<S>,
    pub topology_constraint: Option<KaiTopologyConstraint>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KaiPodGroupSpec {
    pub min_member: Option<Spanned<i64>>,
    pub preemptibility: Option<S>,
    pub queue: Option<String>,
    pub topology_constraint: Option<KaiTopologyConstraint>,
    pub sub_groups: Vec<KaiSubGroup>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KaiQueueResource {
    pub quota: Option<Spanned<f64>>,
    pub over_quota_weight: Option<Spanned<f64>>,
    pub limit: Option<Spanned<f64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KaiQueueResources {
    pub gpu: Option<KaiQueueResource>,
    pub cpu: Option<KaiQueueResource>,
    pub memory: Option<KaiQueueResource>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KaiQueueSpec {
    pub parent_queue: Option<S>,
    pub priority: Option<i32>,
    pub preempt_min_runtime: Option<S>,
    pub reclaim_min_runtime: Option<S>,
    pub resources: KaiQueueResources,
}

/// `scheduling.run.ai/v2` Queue.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KaiQueue {
    pub metadata: ObjectMeta,
    pub spec: KaiQueueSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KaiPodGroup {
    pub metadata: ObjectMeta,
    pub spec: KaiPodGroupSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResourceTransformationConfig {
    pub input: Option<S>,
    pub strategy: Option<S>,
    pub outputs: ResourceMap,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResourcesConfig {
    pub exclude_resource_prefixes: Vec<String>,
    pub transformations: Vec<ResourceTransformationConfig>,
}

// ---- Grove (grove.io/v1alpha1): PodCliqueSet, ClusterTopology -----------------------------
// Grove's own fields are read strictly (a misspelt `minAvailable` would silently drop a gang
// minimum); the metadata, status and pod specs inside are Kubernetes types, read as on every
// kind.

/// `grove.io/v1alpha1` PodCliqueSet.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodCliqueSet {
    pub metadata: ObjectMeta,
    pub spec: PodCliqueSetSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PodCliqueSetSpec {
    /// Replicas of the whole set, each its own PodGangs (CRD default 0).
    pub replicas: Option<Spanned<i64>>,
    pub template: PodCliqueSetTemplate,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PodCliqueSetTemplate {
    pub cliques: Vec<PodCliqueTemplate>,
    pub clique_startup_type: Option<S>,
    pub priority_class_name: Option<S>,
    /// Read and not modelled (the headless Service of each replica).
    pub headless_service_config: Option<serde::de::IgnoredAny>,
    pub topology_constraint: Option<GroveTopologyConstraint>,
    /// Read and checked (a positive duration); gang termination is not modelled.
    pub termination_delay: Option<S>,
    pub pod_clique_scaling_groups: Vec<PodCliqueScalingGroupConfig>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PodCliqueTemplate {
    pub name: Option<S>,
    pub labels: Keyed<String>,
    pub annotations: Keyed<S>,
    pub topology_constraint: Option<GroveTopologyConstraint>,
    pub spec: PodCliqueSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PodCliqueSpec {
    pub role_name: Option<S>,
    pub pod_spec: PodSpec,
    pub replicas: Option<Spanned<i64>>,
    pub min_available: Option<Spanned<i64>>,
    pub starts_after: Vec<S>,
    /// Read and not modelled (a HorizontalPodAutoscaler's bounds): the replicas as written.
    pub auto_scaling_config: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PodCliqueScalingGroupConfig {
    pub name: Option<S>,
    pub clique_names: Vec<S>,
    pub replicas: Option<Spanned<i64>>,
    pub min_available: Option<Spanned<i64>>,
    /// Read and not modelled, as a clique's `autoScalingConfig`.
    pub scale_config: Option<serde::de::IgnoredAny>,
    pub topology_constraint: Option<GroveTopologyConstraint>,
}

/// Grove's `topologyConstraint` (of a PodCliqueSet, scaling group or clique).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GroveTopologyConstraint {
    pub pack_domain: Option<S>,
}

/// `grove.io/v1alpha1` ClusterTopology (cluster-scoped).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClusterTopology {
    pub metadata: ObjectMeta,
    pub spec: ClusterTopologySpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ClusterTopologySpec {
    pub levels: Vec<GroveTopologyLevel>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GroveTopologyLevel {
    pub domain: Option<S>,
    pub key: Option<S>,
}
