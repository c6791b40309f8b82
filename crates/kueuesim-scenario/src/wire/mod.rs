//! The YAML shapes read from manifests: the subset of each Kubernetes kind the simulator uses.
#![allow(unreachable_pub, missing_docs)]
//!
//! Unknown fields are ignored on Kubernetes kinds (real manifests carry many), and rejected on
//! kueuesim's own kinds so a typo in a simulator setting is caught. Values that need checking
//! after parsing (quantities, durations, references) are `Spanned` so errors can point at them.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_saphyr::Spanned;

mod gangs;
mod jobs;
mod living;

pub use gangs::*;
pub use jobs::*;
pub use living::*;

/// A string with its position.
pub type S = Spanned<String>;

/// A mapping with string keys, read as the `BTreeMap` it dereferences to, that also keeps
/// where each key and value was written: a key or value the API server would refuse (a
/// label key or value, a resource name) is reported at its own place (`convert::names`).
#[derive(Clone, Debug)]
pub struct Keyed<V> {
    map: BTreeMap<String, V>,
    /// Each key as written, with its place, and the place of its value; in written order.
    pub entries: Vec<(S, serde_saphyr::Location)>,
}

impl<V> Default for Keyed<V> {
    fn default() -> Self {
        Keyed {
            map: BTreeMap::new(),
            entries: Vec::new(),
        }
    }
}

impl<V> std::ops::Deref for Keyed<V> {
    type Target = BTreeMap<String, V>;
    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl<'a, V> IntoIterator for &'a Keyed<V> {
    type Item = (&'a String, &'a V);
    type IntoIter = std::collections::btree_map::Iter<'a, String, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.map.iter()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Keyed<V> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyedVisitor<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for KeyedVisitor<V> {
            type Value = Keyed<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Keyed::default();
                while let Some((k, v)) = access.next_entry::<S, Spanned<V>>()? {
                    out.entries.push((k.clone(), v.referenced));
                    out.map.insert(k.value, v.value);
                }
                Ok(out)
            }
        }
        d.deserialize_map(KeyedVisitor(std::marker::PhantomData))
    }
}

/// `metadata`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectMeta {
    pub name: Option<S>,
    pub namespace: Option<S>,
    pub labels: Keyed<String>,
    pub annotations: Keyed<S>,
    pub creation_timestamp: Option<S>,
    pub uid: Option<String>,
    pub owner_references: Vec<OwnerReference>,
}

/// One `metadata.ownerReferences` entry.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OwnerReference {
    pub kind: String,
    pub name: String,
    pub controller: Option<bool>,
}

impl ObjectMeta {
    /// The controlling owner (`controller: true`), else the only owner: (kind, name).
    pub fn controller(&self) -> Option<(&str, &str)> {
        let refs = &self.owner_references;
        refs.iter()
            .find(|r| r.controller == Some(true))
            .or_else(|| (refs.len() == 1).then(|| &refs[0]))
            .map(|r| (r.kind.as_str(), r.name.as_str()))
    }
}

/// A top-level object's `metadata` (None for a kind without one, Kueue's Configuration), so
/// that the loader checks every object's names in one place (`convert::names::object_meta`).
pub trait HasMeta {
    fn meta(&self) -> Option<&ObjectMeta>;
}

macro_rules! has_meta {
    ($($t:ident),* $(,)?) => {
        $(impl HasMeta for $t {
            fn meta(&self) -> Option<&ObjectMeta> {
                Some(&self.metadata)
            }
        })*
    };
}

has_meta!(
    AdmissionCheck,
    ProvisioningRequestConfig,
    PodTemplateSpec,
    Node,
    Namespace,
    PriorityClass,
    Job,
    ObjectOnly,
    JobSet,
    KubeflowJob,
    RayJob,
    RayCluster,
    ReplicatedPods,
    LeaderWorkerSet,
    TrainJob,
    TrainingRuntime,
    VolcanoJob,
    ResourceFlavor,
    Cohort,
    ClusterQueue,
    LocalQueue,
    WorkloadPriorityClass,
    Workload,
    Simulation,
    NodePool,
    WorkloadGenerator,
    Topology,
    HyperNode,
    VolcanoPodGroup,
    VolcanoQueue,
    KaiQueue,
    KaiPodGroup,
    PodCliqueSet,
    ClusterTopology,
    WorkloadTrace,
    Timeline,
);

impl HasMeta for Configuration {
    fn meta(&self) -> Option<&ObjectMeta> {
        None
    }
}

/// A resource list (`requests`, `limits`, `allocatable`): name → quantity.
pub type ResourceMap = Keyed<S>;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Toleration {
    pub key: Option<String>,
    pub operator: Option<S>,
    pub value: Option<String>,
    pub effect: Option<S>,
    pub toleration_seconds: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    pub key: String,
    #[serde(default)]
    pub value: Option<String>,
    pub effect: S,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LabelSelector {
    pub match_labels: Keyed<String>,
    pub match_expressions: Vec<SelectorRequirement>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectorRequirement {
    pub key: String,
    pub operator: S,
    #[serde(default)]
    pub values: Vec<String>,
}

// ---- core/v1 -----------------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResourceRequirements {
    pub requests: ResourceMap,
    pub limits: ResourceMap,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Container {
    pub name: Option<String>,
    pub resources: ResourceRequirements,
    /// `Always` on an init container makes it a sidecar.
    pub restart_policy: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodSpec {
    pub containers: Vec<Container>,
    pub init_containers: Vec<Container>,
    pub overhead: ResourceMap,
    pub node_selector: Keyed<String>,
    pub tolerations: Vec<Toleration>,
    pub priority_class_name: Option<S>,
    /// `Never` or `PreemptLowerPriority` (the default).
    pub preemption_policy: Option<S>,
    pub scheduler_name: Option<S>,
    /// A bound Pod's node.
    pub node_name: Option<S>,
    pub affinity: Option<Affinity>,
}

/// `spec.affinity`: only the required node affinity is read.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Affinity {
    pub node_affinity: Option<NodeAffinity>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeAffinity {
    pub required_during_scheduling_ignored_during_execution: Option<NodeSelector>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelector {
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelectorTerm {
    pub match_expressions: Vec<SelectorRequirement>,
    pub match_fields: Vec<SelectorRequirement>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodTemplateSpec {
    pub metadata: ObjectMeta,
    pub spec: PodSpec,
    /// A Pod's status (a pod template has none): `phase` tells a finished pod.
    pub status: PodStatus,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodStatus {
    pub phase: Option<S>,
    /// When the kubelet started the pod (RFC 3339).
    pub start_time: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSpec {
    pub taints: Vec<Taint>,
    pub unschedulable: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeStatus {
    pub allocatable: ResourceMap,
    pub capacity: ResourceMap,
    /// `Ready` tells a NotReady node (`False`: not ready, `Unknown`: unreachable).
    pub conditions: Vec<StatusCondition>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Node {
    pub metadata: ObjectMeta,
    pub spec: NodeSpec,
    pub status: NodeStatus,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Namespace {
    pub metadata: ObjectMeta,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PriorityClass {
    pub metadata: ObjectMeta,
    pub value: i32,
    pub global_default: bool,
    /// `Never` or `PreemptLowerPriority` (the default).
    pub preemption_policy: Option<S>,
}

// ---- batch/v1 ----------------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobSpec {
    pub parallelism: Option<Spanned<i64>>,
    pub completions: Option<Spanned<i64>>,
    /// Pod failures the Job survives (default 6).
    pub backoff_limit: Option<Spanned<i64>>,
    pub suspend: Option<bool>,
    pub template: PodTemplateSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Job {
    pub metadata: ObjectMeta,
    pub spec: JobSpec,
    pub status: JobStatus,
}

/// The status of a job kind that reports its end in conditions (batch Job, JobSet,
/// TrainJob, the Kubeflow jobs): a dump keeps finished jobs until they are deleted.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobStatus {
    pub conditions: Vec<StatusCondition>,
}

impl JobStatus {
    /// Whether the job has ended: a condition `Complete` (batch Job, TrainJob), `Completed`
    /// (JobSet), `Succeeded` (Kubeflow) or `Failed` (all of them) with status `True`.
    pub fn finished(&self) -> bool {
        self.conditions.iter().any(|c| {
            c.status == "True"
                && matches!(
                    c.kind.as_str(),
                    "Complete" | "Completed" | "Succeeded" | "Failed"
                )
        })
    }
}

/// An object read only for its metadata.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectOnly {
    pub metadata: ObjectMeta,
}

// ---- kueue.x-k8s.io ----------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResourceFlavorSpec {
    pub node_labels: Keyed<String>,
    pub node_taints: Vec<Taint>,
    pub tolerations: Vec<Toleration>,
    pub topology_name: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResourceFlavor {
    pub metadata: ObjectMeta,
    pub spec: ResourceFlavorSpec,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceQuota {
    pub name: S,
    pub nominal_quota: S,
    #[serde(default)]
    pub borrowing_limit: Option<S>,
    #[serde(default)]
    pub lending_limit: Option<S>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlavorQuotas {
    pub name: S,
    #[serde(default)]
    pub resources: Vec<ResourceQuota>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceGroup {
    #[serde(default)]
    pub covered_resources: Vec<S>,
    #[serde(default)]
    pub flavors: Vec<FlavorQuotas>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClusterQueueSpec {
    /// v1beta2.
    pub cohort_name: Option<S>,
    /// v1beta1.
    pub cohort: Option<S>,
    pub queueing_strategy: Option<S>,
    pub namespace_selector: Option<LabelSelector>,
    pub resource_groups: Vec<ResourceGroup>,
    pub stop_policy: Option<S>,
    pub preemption: Option<Preemption>,
    pub flavor_fungibility: Option<FlavorFungibility>,
    pub fair_sharing: FairSharing,
    pub admission_scope: Option<AdmissionScope>,
    /// v1beta1: the AdmissionChecks' names.
    pub admission_checks: Vec<S>,
    /// v1beta2 (and v1beta1): the AdmissionChecks with the flavors they apply to.
    pub admission_checks_strategy: Option<AdmissionChecksStrategy>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AdmissionChecksStrategy {
    pub admission_checks: Vec<AdmissionCheckStrategyRule>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionCheckStrategyRule {
    pub name: S,
    #[serde(default)]
    pub on_flavors: Vec<S>,
}

/// Kueue `AdmissionCheck` (read strictly: an unknown field is an error).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct AdmissionCheck {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub metadata: ObjectMeta,
    pub spec: AdmissionCheckSpec,
    /// Written by Kueue; not read.
    pub status: serde::de::IgnoredAny,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct AdmissionCheckSpec {
    pub controller_name: Option<S>,
    pub parameters: Option<AdmissionCheckParameters>,
    /// Deprecated upstream and unused by the provisioning controller.
    pub retry_delay_minutes: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct AdmissionCheckParameters {
    pub api_group: Option<S>,
    pub kind: Option<S>,
    pub name: Option<S>,
}

/// Kueue `ProvisioningRequestConfig` (read strictly).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ProvisioningRequestConfig {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub metadata: ObjectMeta,
    pub spec: ProvisioningRequestConfigSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ProvisioningRequestConfigSpec {
    pub provisioning_class_name: Option<S>,
    /// Passed to the ProvisioningRequest; not read by the simulated autoscaler.
    pub parameters: BTreeMap<String, String>,
    pub managed_resources: Vec<S>,
    pub retry_strategy: Option<ProvisioningRetryStrategy>,
    /// Names the node labels Kueue copies from the request's details; the simulated
    /// autoscaler writes no details, so nothing is copied.
    pub pod_set_updates: Option<serde::de::IgnoredAny>,
    /// How pod sets are merged into the request's pod sets: the simulated autoscaler counts
    /// the pods alike either way.
    pub pod_set_merge_policy: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ProvisioningRetryStrategy {
    pub backoff_limit_count: Option<Spanned<i64>>,
    pub backoff_base_seconds: Option<Spanned<i64>>,
    pub backoff_max_seconds: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AdmissionScope {
    pub admission_mode: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AfsStatus {
    pub consumed_resources: ResourceMap,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LocalQueueFairSharingStatus {
    pub admission_fair_sharing_status: Option<AfsStatus>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LocalQueueStatus {
    pub fair_sharing: Option<LocalQueueFairSharingStatus>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BorrowWithinCohort {
    pub policy: Option<S>,
    pub max_priority_threshold: Option<i32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Preemption {
    pub within_cluster_queue: Option<S>,
    pub reclaim_within_cohort: Option<S>,
    pub borrow_within_cohort: Option<BorrowWithinCohort>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FlavorFungibility {
    pub when_can_borrow: Option<S>,
    pub when_can_preempt: Option<S>,
    pub preference: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CohortSpec {
    /// v1beta1/v1beta2.
    pub parent_name: Option<S>,
    /// v1alpha1.
    pub parent: Option<S>,
    pub resource_groups: Vec<ResourceGroup>,
    pub fair_sharing: FairSharing,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Cohort {
    pub metadata: ObjectMeta,
    pub spec: CohortSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClusterQueue {
    pub metadata: ObjectMeta,
    pub spec: ClusterQueueSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FairSharing {
    pub weight: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LocalQueueSpec {
    pub cluster_queue: Option<S>,
    pub fair_sharing: FairSharing,
    pub stop_policy: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LocalQueue {
    pub metadata: ObjectMeta,
    pub spec: LocalQueueSpec,
    pub status: LocalQueueStatus,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkloadPriorityClass {
    pub metadata: ObjectMeta,
    pub value: i32,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadPodSet {
    pub name: S,
    pub count: Spanned<i64>,
    #[serde(default)]
    pub min_count: Option<Spanned<i64>>,
    #[serde(default)]
    pub template: PodTemplateSpec,
    /// Kueue TAS: what the Job integration fills from the pod template's
    /// `kueue.x-k8s.io/podset-*-topology` annotations (`PodSetTopologyRequest`, v1beta1 and
    /// v1beta2 alike).
    #[serde(default)]
    pub topology_request: Option<PodSetTopologyRequest>,
}

/// A Workload pod set's `topologyRequest`: the fields that choose the level and the slice
/// (the index-label and group fields are not modelled, docs/semantics.md).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodSetTopologyRequest {
    pub required: Option<S>,
    pub preferred: Option<S>,
    pub unconstrained: Option<Spanned<bool>>,
    pub pod_set_slice_required_topology: Option<S>,
    pub pod_set_slice_size: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PriorityClassRef {
    pub group: Option<String>,
    pub kind: Option<String>,
    pub name: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkloadSpec {
    pub queue_name: Option<S>,
    pub pod_sets: Vec<WorkloadPodSet>,
    pub priority: Option<i32>,
    /// v1beta1.
    pub priority_class_name: Option<S>,
    /// v1beta1: `kueue.x-k8s.io/workloadpriorityclass` or `scheduling.k8s.io/priorityclass`.
    pub priority_class_source: Option<String>,
    /// v1beta2.
    pub priority_class_ref: Option<PriorityClassRef>,
    pub active: Option<bool>,
    pub maximum_execution_time_seconds: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodSetAssignment {
    pub name: Option<S>,
    pub flavors: Keyed<S>,
    pub count: Option<Spanned<i64>>,
    pub topology_assignment: Option<Spanned<TopologyAssignment>>,
}

/// Kueue TAS: where an admitted pod set's pods go. v1beta1 lists `domains`; v1beta2 writes
/// them compressed as `slices`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologyAssignment {
    pub levels: Vec<String>,
    /// v1beta1.
    pub domains: Vec<TopologyDomainAssignment>,
    /// v1beta2.
    pub slices: Vec<TopologyAssignmentSlice>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologyDomainAssignment {
    pub values: Vec<String>,
    pub count: i64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologyAssignmentSlice {
    pub domain_count: i64,
    pub values_per_level: Vec<SliceLevelValues>,
    pub pod_counts: SlicePodCounts,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SliceLevelValues {
    pub universal: Option<String>,
    pub individual: Option<SliceIndividualValues>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SliceIndividualValues {
    pub prefix: Option<String>,
    pub suffix: Option<String>,
    pub roots: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SlicePodCounts {
    pub universal: Option<i64>,
    pub individual: Vec<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Admission {
    pub cluster_queue: Option<S>,
    pub pod_set_assignments: Vec<PodSetAssignment>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StatusCondition {
    #[serde(rename = "type")]
    pub kind: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    pub last_transition_time: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RequeueState {
    pub count: Option<Spanned<i64>>,
    pub requeue_at: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkloadStatus {
    pub admission: Option<Admission>,
    pub conditions: Vec<StatusCondition>,
    pub requeue_state: Option<RequeueState>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Workload {
    pub metadata: ObjectMeta,
    pub spec: WorkloadSpec,
    pub status: WorkloadStatus,
}

// ---- kueuesim.io/v1alpha1 ----------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PreemptionProgress {
    /// `restart` (default) or `checkpoint`.
    pub progress: Option<S>,
    /// For `checkpoint`: how often work is saved.
    pub checkpoint_interval: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct SimulationSpec {
    /// Seeded random failures of nodes and GPUs.
    pub failures: Option<Spanned<FailureSettings>>,
    pub preemption: Option<PreemptionProgress>,
    pub seed: Option<u64>,
    pub start_time: Option<S>,
    pub until: Option<S>,
    pub pod_startup: Option<S>,
    pub pod_termination: Option<S>,
    /// How long a Workload admitted in the input (`status.admission`) still runs when it
    /// has neither `kueuesim.io/remaining` nor `kueuesim.io/duration`.
    pub default_remaining: Option<S>,
    pub schedulers: Keyed<S>,
    pub kai: Option<KaiSettings>,
    pub volcano: Option<VolcanoSettings>,
    pub kueue: Option<KueueSettings>,
    pub policies: Option<PolicySettings>,
    pub gpu_placement: Option<GpuPlacementSettings>,
    pub variation: Option<VariationSettings>,
}

/// `spec.variation`: what a seed changes in the workloads (`crate::variation`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct VariationSettings {
    /// `keep`, `poisson`, or `{jitter: <duration>}`.
    pub arrivals: Option<Spanned<WordOr<ArrivalsForm>>>,
    /// `keep`, or `{lognormal: {sigma: <float>}}`.
    pub durations: Option<Spanned<WordOr<DurationsForm>>>,
    /// A factor of the arrivals (read as text so a bad value is an error at its place).
    pub load: Option<S>,
    /// `days` (or `none`).
    pub resample: Option<S>,
}

/// `arrivals` written as a mapping.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArrivalsForm {
    pub jitter: S,
}

/// `durations` written as a mapping.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DurationsForm {
    pub lognormal: LogNormalNoise,
}

/// `durations.lognormal`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogNormalNoise {
    pub sigma: S,
}

/// A setting written as one word (`keep`) or as a mapping (`{jitter: 10m}`): the mapping is
/// read as `M`, so a misspelt key in it is an error at its place.
#[derive(Debug)]
pub enum WordOr<M> {
    Word(String),
    Form(M),
}

impl<'de, M: Deserialize<'de>> Deserialize<'de> for WordOr<M> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<M>(std::marker::PhantomData<M>);
        impl<'de, M: Deserialize<'de>> serde::de::Visitor<'de> for V<M> {
            type Value = WordOr<M>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a word or a mapping")
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(WordOr::Word(v.to_string()))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(WordOr::Word(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(WordOr::Word(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(WordOr::Word(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(WordOr::Word(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(WordOr::Word(String::new()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                a: A,
            ) -> Result<Self::Value, A::Error> {
                M::deserialize(serde::de::value::MapAccessDeserializer::new(a)).map(WordOr::Form)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `spec.policies`: names of caller-supplied policies (`kueue` and `scheduler` name the
/// built-in ones).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PolicySettings {
    pub queue_order: Option<S>,
    pub node_score: Option<S>,
}

/// `spec.gpuPlacement`: GPUs as devices and kube-scheduler's policy for shared GPUs.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GpuPlacementSettings {
    pub devices: Option<bool>,
    pub policy: Option<S>,
}

/// `spec.kueue`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct KueueSettings {
    /// `true` (default) or `false`: whether Kueue is in front of the pod schedulers.
    pub enabled: Option<S>,
    pub controller_latency: Option<ControllerLatencySettings>,
    /// Kueue feature gates by name (`FlavorFungibilityPreserveScanProgress: false`); the
    /// values are read as text so a non-boolean is an error at its place.
    pub feature_gates: BTreeMap<String, S>,
}

/// `spec.kueue.controllerLatency` (durations).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ControllerLatencySettings {
    pub cycle: Option<S>,
    pub per_cluster_queue: Option<S>,
    pub per_tas_flavor: Option<S>,
    pub per_head: Option<S>,
    pub per_admission: Option<S>,
    pub api_write: Option<S>,
    pub api_burst: Option<Spanned<i64>>,
    pub status_write: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct VolcanoSettings {
    /// The volcano-scheduler.conf text.
    pub configuration: Option<S>,
}

/// volcano-scheduler.conf, with every key upstream's `SchedulerConfiguration` reads
/// (`pkg/scheduler/conf/scheduler_conf.go`): a key it does not know is a misspelling, an
/// error here (upstream's non-strict YAML would drop it unseen).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct VolcanoConf {
    pub actions: Option<String>,
    pub tiers: Vec<VolcanoTier>,
    /// The actions' own arguments (`Configuration`): not simulated (a warning).
    pub configurations: Option<serde_json::Value>,
    /// The metrics settings: no bearing on decisions.
    pub metrics: Option<serde_json::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct VolcanoTier {
    pub plugins: Vec<VolcanoPlugin>,
}

/// One plugin of a tier (`PluginOption`). The `enable…` switches kueuesim does not simulate
/// are read so that a misspelt one is an error and a set one a warning
/// (`VolcanoPlugin::unsimulated_switches`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct VolcanoPlugin {
    pub name: String,
    /// `enableHierarchy` (the capacity plugin's hierarchical queues).
    pub enable_hierarchy: Option<bool>,
    /// `enableJobEnqueued`: whether the plugin votes in the enqueue action (default on).
    pub enable_job_enqueued: Option<bool>,
    /// `enabledAllocatable`: whether the plugin checks allocation (default on).
    pub enabled_allocatable: Option<bool>,
    /// `enabledOverused`: whether the plugin's overused check applies (default on).
    pub enabled_overused: Option<bool>,
    /// `enableReclaimable`: whether the plugin votes on reclaim's victims (default on).
    pub enable_reclaimable: Option<bool>,
    pub arguments: BTreeMap<String, serde_json::Value>,
    pub enable_job_order: Option<bool>,
    pub enable_job_ready: Option<bool>,
    pub enable_job_pipelined: Option<bool>,
    pub enable_task_order: Option<bool>,
    pub enable_preemptable: Option<bool>,
    pub enable_preemptive: Option<bool>,
    pub enable_queue_order: Option<bool>,
    #[serde(rename = "enabledClusterOrder")]
    pub enabled_cluster_order: Option<bool>,
    pub enable_predicate: Option<bool>,
    pub enable_best_node: Option<bool>,
    pub enable_node_order: Option<bool>,
    pub enable_target_job: Option<bool>,
    pub enable_reserved_nodes: Option<bool>,
    #[serde(rename = "enabledVictim")]
    pub enabled_victim: Option<bool>,
    pub enable_job_starving: Option<bool>,
    #[serde(rename = "enabledHyperNodeOrder")]
    pub enabled_hyper_node_order: Option<bool>,
    #[serde(rename = "enabledSubJobReady")]
    pub enabled_sub_job_ready: Option<bool>,
    #[serde(rename = "enabledSubJobPipelined")]
    pub enabled_sub_job_pipelined: Option<bool>,
    #[serde(rename = "enabledSubJobOrder")]
    pub enabled_sub_job_order: Option<bool>,
    #[serde(rename = "enabledHyperNodeGradient")]
    pub enabled_hyper_node_gradient: Option<bool>,
}

impl VolcanoPlugin {
    /// The `enable…` switches set in this plugin that kueuesim does not simulate (each
    /// plugin takes part as its defaults say), by upstream's key.
    pub fn unsimulated_switches(&self) -> Vec<&'static str> {
        [
            ("enableJobOrder", self.enable_job_order),
            ("enableJobReady", self.enable_job_ready),
            ("enableJobPipelined", self.enable_job_pipelined),
            ("enableTaskOrder", self.enable_task_order),
            ("enablePreemptive", self.enable_preemptive),
            // The queue plugin's is simulated (`VolcanoQueueing::queue_order`).
            (
                "enableQueueOrder",
                self.enable_queue_order
                    .filter(|_| !matches!(self.name.as_str(), "proportion" | "capacity")),
            ),
            ("enabledClusterOrder", self.enabled_cluster_order),
            ("enablePredicate", self.enable_predicate),
            ("enableBestNode", self.enable_best_node),
            ("enableNodeOrder", self.enable_node_order),
            ("enableTargetJob", self.enable_target_job),
            ("enableReservedNodes", self.enable_reserved_nodes),
            ("enabledVictim", self.enabled_victim),
            ("enabledHyperNodeOrder", self.enabled_hyper_node_order),
            ("enabledSubJobReady", self.enabled_sub_job_ready),
            ("enabledSubJobPipelined", self.enabled_sub_job_pipelined),
            ("enabledSubJobOrder", self.enabled_sub_job_order),
            ("enabledHyperNodeGradient", self.enabled_hyper_node_gradient),
        ]
        .into_iter()
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| k)
        .collect()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct KaiSettings {
    pub default_preferred_topology_level: Option<S>,
    pub default_topology: Option<S>,
    pub placement_strategy: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Simulation {
    pub metadata: ObjectMeta,
    pub spec: SimulationSpec,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodePoolLevel {
    /// The node label that names this level's domain (e.g. a spine label).
    pub node_label: S,
    /// How many domains of this level under each domain of the level above.
    pub count: Spanned<i64>,
    /// Prefix of the generated label values (`<prefix>-<index>`); default: the label's last
    /// path segment.
    #[serde(default)]
    pub value_prefix: Option<S>,
    /// Also generate a Volcano HyperNode of this tier for every domain of this level.
    #[serde(default)]
    pub hyper_node_tier: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct NodeTemplate {
    pub labels: Keyed<String>,
    pub allocatable: ResourceMap,
    pub taints: Vec<Taint>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct NodePoolSpec {
    /// Node names are `<namePrefix>-<index>`; default: the pool's name.
    pub name_prefix: Option<S>,
    /// Topology levels, broadest first.
    pub levels: Vec<NodePoolLevel>,
    /// Nodes under each domain of the narrowest level (or in all, without levels).
    pub nodes_per_domain: Option<Spanned<i64>>,
    pub template: NodeTemplate,
    /// The cluster-autoscaler scales the pool (`autoscaling`).
    pub autoscaling: Option<Spanned<PoolAutoscaling>>,
}

/// A NodePool's `spec.autoscaling`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PoolAutoscaling {
    pub min: Option<Spanned<i64>>,
    pub max: Option<Spanned<i64>>,
    pub provisioning_delay: Option<S>,
    pub scale_down_unneeded: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodePool {
    pub metadata: ObjectMeta,
    pub spec: NodePoolSpec,
}

// ---- kueuesim.io WorkloadGenerator (read by generator/) ----------------------------------

/// A distribution of one value (exactly one of the fields).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GenDist {
    pub fixed: Option<S>,
    pub uniform: Option<GenUniform>,
    pub log_normal: Option<GenLogNormal>,
    pub empirical: Option<GenCsvColumn>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GenUniform {
    pub min: S,
    pub max: S,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GenLogNormal {
    pub median: S,
    pub sigma: S,
    #[serde(default)]
    pub min: Option<S>,
    #[serde(default)]
    pub max: Option<S>,
}

/// A column of a CSV file (path relative to the YAML file).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GenCsvColumn {
    pub path: S,
    pub column: S,
    /// For durations and inter-arrival times written as bare numbers: their unit.
    #[serde(default)]
    pub unit: Option<S>,
}

/// Arrivals: exactly one of `interval`, `rate`, `interArrival`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GenArrival {
    pub start: Option<S>,
    pub interval: Option<S>,
    pub rate: Option<S>,
    pub inter_arrival: Option<GenCsvColumn>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GenQueue {
    pub name: Option<S>,
    pub namespace: Option<S>,
    pub weight: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GenPriority {
    pub class_name: Option<S>,
    pub value: Option<Spanned<i64>>,
    pub weight: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GenScheduler {
    pub name: Option<S>,
    pub weight: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GenKueueTopology {
    pub required: Option<S>,
    pub preferred: Option<S>,
    pub unconstrained: Option<bool>,
    pub slice_required: Option<S>,
    pub slice_size: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GenVolcanoTopology {
    pub mode: Option<S>,
    pub highest_tier: Option<Spanned<i64>>,
    pub highest_tier_name: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GenKaiTopology {
    pub topology: Option<S>,
    pub required: Option<S>,
    pub preferred: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GenTopology {
    pub weight: Option<S>,
    pub kueue: Option<GenKueueTopology>,
    pub volcano: Option<GenVolcanoTopology>,
    pub kai: Option<GenKaiTopology>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct WorkloadGeneratorSpec {
    pub count: Option<Spanned<i64>>,
    pub until: Option<S>,
    pub arrival: Option<Spanned<GenArrival>>,
    pub pods: Option<Spanned<GenDist>>,
    pub requests: Keyed<Spanned<GenDist>>,
    pub duration: Option<Spanned<GenDist>>,
    pub queues: Vec<Spanned<GenQueue>>,
    pub per_local_queue: bool,
    pub priorities: Vec<Spanned<GenPriority>>,
    pub scheduler_names: Vec<Spanned<GenScheduler>>,
    pub topologies: Vec<Spanned<GenTopology>>,
    /// Work is saved this often (`kueuesim.io/checkpoint-interval` of each workload).
    pub checkpoint_interval: Option<S>,
    /// Running time each restart spends before new work (`kueuesim.io/restart-cost`).
    pub restart_cost: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkloadGenerator {
    pub metadata: ObjectMeta,
    pub spec: WorkloadGeneratorSpec,
}

// ---- topology: Kueue/KAI Topology, Volcano HyperNode -------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologyLevel {
    pub node_label: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologySpec {
    pub levels: Vec<TopologyLevel>,
}

/// `kueue.x-k8s.io` or `kai.scheduler` Topology (same schema).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Topology {
    pub metadata: ObjectMeta,
    pub spec: TopologySpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExactMatch {
    pub name: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RegexMatch {
    pub pattern: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MemberSelector {
    pub exact_match: Option<ExactMatch>,
    pub regex_match: Option<RegexMatch>,
    pub label_match: Option<LabelSelector>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HyperNodeMember {
    #[serde(rename = "type")]
    pub kind: Option<S>,
    pub selector: MemberSelector,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HyperNodeSpec {
    pub tier: Option<Spanned<i64>>,
    pub tier_name: Option<String>,
    pub members: Vec<HyperNodeMember>,
}

/// `topology.volcano.sh/v1alpha1` HyperNode.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HyperNode {
    pub metadata: ObjectMeta,
    pub spec: HyperNodeSpec,
}

// ---- config.kueue.x-k8s.io ---------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FairSharingConfig {
    /// v1beta1 only.
    pub enable: Option<bool>,
    pub preemption_strategies: Option<Vec<S>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AdmissionFairSharingConfig {
    pub usage_half_life_time: Option<S>,
    pub usage_sampling_interval: Option<S>,
    pub resource_weights: BTreeMap<String, Spanned<f64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RequeuingStrategy {
    pub timestamp: Option<S>,
    pub backoff_limit_count: Option<Spanned<i64>>,
    pub backoff_base_seconds: Option<Spanned<i64>>,
    pub backoff_max_seconds: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WaitForPodsReadyConfig {
    /// v1beta1 only (v1beta2 is always on unless the DisableWaitForPodsReady gate is set).
    pub enable: Option<bool>,
    pub timeout: Option<S>,
    pub block_admission: Option<bool>,
    pub recovery_timeout: Option<S>,
    pub requeuing_strategy: Option<RequeuingStrategy>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Configuration {
    /// Kueue's own namespace (`kueue-system`), which the default managedJobsNamespaceSelector
    /// leaves out.
    pub namespace: Option<S>,
    pub manage_jobs_without_queue_name: Option<bool>,
    pub managed_jobs_namespace_selector: Option<LabelSelector>,
    pub resources: Option<ResourcesConfig>,
    pub fair_sharing: Option<FairSharingConfig>,
    pub admission_fair_sharing: Option<AdmissionFairSharingConfig>,
    pub wait_for_pods_ready: Option<WaitForPodsReadyConfig>,
}

// ---- kueuesim.io WorkloadTrace (crate::trace) --------------------------------------------

/// One weighted choice of a random mapping.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WeightedValue {
    pub value: S,
    #[serde(default)]
    pub weight: Option<Spanned<i64>>,
}

/// How one attribute of a trace workload is chosen: a constant, a column (through an optional
/// value map), or a seeded weighted random choice.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct TraceMapping {
    pub value: Option<S>,
    pub column: Option<S>,
    pub map: BTreeMap<String, S>,
    pub default: Option<S>,
    pub random: Vec<WeightedValue>,
}

/// `spec.openb` of a WorkloadTrace.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct OpenbSettings {
    pub nodes: Option<S>,
    pub gpu_sharing: Option<S>,
    pub gpu_spec: Option<S>,
    pub cluster_queue: Option<S>,
    pub extra_nodes: BTreeMap<String, Spanned<i64>>,
    pub inflate: Option<OpenbInflate>,
}

/// `spec.openb.inflate`: the FGD simulator's workload tuning.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct OpenbInflate {
    /// Target GPU demand as a multiple of the cluster's GPUs, e.g. "1.3".
    pub ratio: Option<S>,
    pub seed: Option<u64>,
}

/// `spec.philly` of a WorkloadTrace.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PhillySettings {
    pub vc_nodes: Option<S>,
    pub default_vc_nodes: Option<Spanned<i64>>,
    pub extra_nodes: Option<Spanned<i64>>,
    pub node_percent: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct WorkloadTraceSpec {
    pub format: Option<S>,
    pub path: Option<S>,
    pub limit: Option<Spanned<i64>>,
    pub seed: Option<u64>,
    pub name_prefix: Option<S>,
    pub namespace: Option<TraceMapping>,
    pub local_queue: Option<TraceMapping>,
    pub priority_class: Option<TraceMapping>,
    pub scheduler_name: Option<TraceMapping>,
    pub topology: Option<TraceMapping>,
    pub openb: Option<OpenbSettings>,
    pub philly: Option<PhillySettings>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkloadTrace {
    pub metadata: ObjectMeta,
    pub spec: WorkloadTraceSpec,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys and values keep their places, in block and flow style, plain and quoted.
    #[test]
    fn keyed_maps_keep_key_and_value_places() {
        let m: ObjectMeta = serde_saphyr::from_str(
            "name: x\nlabels:\n  app: web\n  \"x.io/k\": 'v'\nannotations: {a: \"1\", b: 2}\n",
        )
        .unwrap();
        let places: Vec<_> = m
            .labels
            .entries
            .iter()
            .map(|(k, v)| {
                (
                    k.value.as_str(),
                    k.referenced.line(),
                    k.referenced.column(),
                    v.line(),
                    v.column(),
                )
            })
            .collect();
        assert_eq!(places, [("app", 3, 3, 3, 8), ("x.io/k", 4, 3, 4, 13)]);
        assert_eq!(m.labels.get("app").map(String::as_str), Some("web"));
        assert_eq!(m.annotations.get("b").map(|s| s.value.as_str()), Some("2"));
        let (k, v) = &m.annotations.entries[1];
        assert_eq!((k.referenced.column(), v.column()), (23, 26));
    }
}
