//! The objects of the simulated platform: Kueue's ResourceFlavor, ClusterQueue, LocalQueue,
//! WorkloadPriorityClass and Workload, and core Namespace and Node, with names resolved to ids.

use std::sync::Arc;

use crate::ids::{ClusterQueueId, CohortId, FlavorId, LocalQueueId, ResourceId};
use crate::labels::{LabelSelector, Labels, Taint, Toleration};
use crate::resources::ResourceList;
use crate::time::{SimDuration, SimTime};

/// A Kueue ResourceFlavor: a kind of capacity, and the node labels/taints that stand for it.
#[derive(Clone, Debug, Default)]
pub struct ResourceFlavor {
    /// Object name.
    pub name: String,
    /// `spec.nodeLabels`: injected as a nodeSelector into admitted pods.
    pub node_labels: Labels,
    /// `spec.nodeTaints`: the flavor is skipped for pods that do not tolerate them.
    pub node_taints: Vec<Taint>,
    /// `spec.tolerations`: added to pods admitted with this flavor.
    pub tolerations: Vec<Toleration>,
    /// `spec.topologyName`: makes it a TAS flavor.
    pub topology_name: Option<String>,
}

/// `spec.queueingStrategy` of a ClusterQueue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueingStrategy {
    /// The head blocks the queue until it is admitted.
    StrictFIFO,
    /// An inadmissible head steps aside so later workloads may be admitted (the default).
    #[default]
    BestEffortFIFO,
}

impl QueueingStrategy {
    /// The Kueue spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueingStrategy::StrictFIFO => "StrictFIFO",
            QueueingStrategy::BestEffortFIFO => "BestEffortFIFO",
        }
    }
}

/// `spec.stopPolicy` of a ClusterQueue or LocalQueue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StopPolicy {
    /// Active.
    #[default]
    None,
    /// No new admissions; admitted workloads keep running.
    Hold,
    /// No new admissions, and admitted workloads are evicted.
    HoldAndDrain,
}

/// The quota of one resource of one flavor in a ClusterQueue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceQuota {
    /// The resource.
    pub resource: ResourceId,
    /// `nominalQuota`, in Kueue units.
    pub nominal: i64,
    /// `borrowingLimit` (None: unlimited).
    pub borrowing_limit: Option<i64>,
    /// `lendingLimit` (None: all of nominal may be lent).
    pub lending_limit: Option<i64>,
}

/// One flavor of a resource group with its per-resource quotas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlavorQuotas {
    /// The flavor.
    pub flavor: FlavorId,
    /// One entry per covered resource, in `coveredResources` order.
    pub resources: Vec<ResourceQuota>,
}

/// A resource group: the unit of flavor choice (all its resources get the same flavor).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceGroup {
    /// `coveredResources`.
    pub covered: Vec<ResourceId>,
    /// `flavors`, in preference order.
    pub flavors: Vec<FlavorQuotas>,
}

/// A preemption policy (`Never`, `LowerPriority`, `LowerOrNewerEqualPriority`, `Any`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PreemptionPolicy {
    /// Nobody is preempted.
    #[default]
    Never,
    /// Workloads of lower priority.
    LowerPriority,
    /// Lower priority, or equal priority and newer (`withinClusterQueue` only).
    LowerOrNewerEqualPriority,
    /// Anybody (`reclaimWithinCohort` only).
    Any,
}

/// `spec.preemption` of a ClusterQueue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Preemption {
    /// `withinClusterQueue`.
    pub within_cluster_queue: PreemptionPolicy,
    /// `reclaimWithinCohort`.
    pub reclaim_within_cohort: PreemptionPolicy,
    /// `borrowWithinCohort.policy` (`Never` or `LowerPriority`).
    pub borrow_within_cohort: PreemptionPolicy,
    /// `borrowWithinCohort.maxPriorityThreshold`.
    pub borrow_max_priority_threshold: Option<i32>,
}

/// `flavorFungibility.whenCanBorrow` / `whenCanPreempt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FungibilityPolicy {
    /// Stop at this flavor (v1beta1 `Borrow` / `Preempt`).
    MayStopSearch,
    /// Look at the next flavors for a better one.
    TryNextFlavor,
}

/// `flavorFungibility.preference`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FungibilityPreference {
    /// Prefer a flavor that needs no preemption, even if it borrows.
    #[default]
    BorrowingOverPreemption,
    /// Prefer a flavor that needs no borrowing, even if it preempts.
    PreemptionOverBorrowing,
}

/// `spec.flavorFungibility` of a ClusterQueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlavorFungibility {
    /// `whenCanBorrow` (default `MayStopSearch`).
    pub when_can_borrow: FungibilityPolicy,
    /// `whenCanPreempt` (default `TryNextFlavor`).
    pub when_can_preempt: FungibilityPolicy,
    /// `preference`.
    pub preference: FungibilityPreference,
}

impl Default for FlavorFungibility {
    fn default() -> Self {
        FlavorFungibility {
            when_can_borrow: FungibilityPolicy::MayStopSearch,
            when_can_preempt: FungibilityPolicy::TryNextFlavor,
            preference: FungibilityPreference::BorrowingOverPreemption,
        }
    }
}

/// A Kueue Cohort: a node of the cohort tree, declared by a Cohort object or implied by a
/// ClusterQueue's `cohortName` (then without quota of its own).
#[derive(Clone, Debug, Default)]
pub struct Cohort {
    /// Object name.
    pub name: String,
    /// `spec.parentName`.
    pub parent: Option<CohortId>,
    /// `spec.resourceGroups`: quota owned by the cohort itself, shared by its subtree.
    pub resource_groups: Vec<ResourceGroup>,
    /// `spec.fairSharing.weight` in milli-units (1000 when unset).
    pub fair_sharing_weight_milli: i64,
    /// Whether a Cohort object declared it.
    pub declared: bool,
}

/// A Kueue ClusterQueue.
#[derive(Clone, Debug, Default)]
pub struct ClusterQueue {
    /// Object name.
    pub name: String,
    /// `spec.cohortName` (v1beta1 `spec.cohort`).
    pub cohort: Option<CohortId>,
    /// `spec.preemption`.
    pub preemption: Preemption,
    /// `spec.flavorFungibility`.
    pub flavor_fungibility: FlavorFungibility,
    /// `spec.fairSharing.weight` in milli-units (1000 when unset).
    pub fair_sharing_weight_milli: i64,
    /// `spec.admissionScope.admissionMode: UsageBasedAdmissionFairSharing`.
    pub admission_fair_sharing: bool,
    /// `spec.queueingStrategy`.
    pub queueing_strategy: QueueingStrategy,
    /// `spec.namespaceSelector`: `None` admits no namespace, `Some({})` every namespace.
    pub namespace_selector: Option<LabelSelector>,
    /// `spec.resourceGroups`.
    pub resource_groups: Vec<ResourceGroup>,
    /// `spec.stopPolicy`.
    pub stop_policy: StopPolicy,
}

impl ClusterQueue {
    /// The resource group covering `r`, if any.
    pub fn group_of(&self, r: ResourceId) -> Option<&ResourceGroup> {
        self.resource_groups.iter().find(|g| g.covered.contains(&r))
    }

    /// The quota of `(flavor, resource)`, if the queue defines it.
    pub fn quota(&self, flavor: FlavorId, r: ResourceId) -> Option<&ResourceQuota> {
        self.resource_groups
            .iter()
            .flat_map(|g| &g.flavors)
            .filter(|f| f.flavor == flavor)
            .flat_map(|f| &f.resources)
            .find(|q| q.resource == r)
    }
}

/// A Kueue LocalQueue.
#[derive(Clone, Debug)]
pub struct LocalQueue {
    /// Namespace.
    pub namespace: String,
    /// Object name.
    pub name: String,
    /// `spec.clusterQueue`.
    pub cluster_queue: ClusterQueueId,
    /// `spec.fairSharing.weight` in milli-units (Admission Fair Sharing); 1000 when unset.
    pub fair_sharing_weight_milli: i64,
    /// `spec.stopPolicy`.
    pub stop_policy: StopPolicy,
    /// `status.fairSharing.admissionFairSharingStatus.consumedResources` of the input: the
    /// Admission Fair Sharing usage at the start, in Kueue units.
    pub afs_consumed: Vec<(ResourceId, i64)>,
}

/// A Kueue WorkloadPriorityClass (or a scheduling.k8s.io PriorityClass).
#[derive(Clone, Debug)]
pub struct PriorityClass {
    /// Object name.
    pub name: String,
    /// `value`.
    pub value: i32,
    /// Whether this is a scheduling.k8s.io PriorityClass rather than a WorkloadPriorityClass.
    pub is_pod_priority_class: bool,
    /// `globalDefault` (pod PriorityClass only).
    pub global_default: bool,
    /// `preemptionPolicy: Never` (pod PriorityClass only; the API server's Priority
    /// admission copies it into the pods that name the class).
    pub preempt_never: bool,
}

/// A namespace and its labels (for ClusterQueue namespaceSelectors).
#[derive(Clone, Debug)]
pub struct Namespace {
    /// Object name.
    pub name: String,
    /// `metadata.labels`.
    pub labels: Labels,
}

/// A node of the cluster.
#[derive(Clone, Debug)]
pub struct Node {
    /// Object name.
    pub name: String,
    /// `metadata.labels`.
    pub labels: Labels,
    /// `status.allocatable`, dense by resource id (absent resources are 0).
    pub allocatable: Vec<i64>,
    /// `spec.taints`.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable`.
    pub unschedulable: bool,
}

/// One pod set of a workload: `count` identical pods.
#[derive(Clone, Debug)]
pub struct PodSet {
    /// Pod set name (`main` for single-template kinds).
    pub name: String,
    /// Number of pods.
    pub count: u32,
    /// `minCount` for partial admission.
    pub min_count: Option<u32>,
    /// Requests of one pod, in Kueue units.
    pub requests: ResourceList,
    /// The pod template's `nodeSelector`.
    pub node_selector: Labels,
    /// The pod template's tolerations.
    pub tolerations: Vec<Toleration>,
    /// The pod template's `priorityClassName`, used for priority when no WorkloadPriorityClass.
    pub priority_class_name: Option<String>,
    /// The pods' `preemptionPolicy` is `Never` (their own, else their PriorityClass's):
    /// Volcano's preempt and reclaim evict nothing for them.
    pub preempt_never: bool,
    /// A digest of the pod template's scheduling-relevant spec (per-container requests and
    /// limits, init containers, overhead, nodeSelector, tolerations, classes): part of Kueue's
    /// scheduling equivalence hash (`SpecShape`).
    pub spec_shape: u64,
    /// Kueue TAS: the pod template's `kueue.x-k8s.io/podset-*-topology` annotation. A pod set
    /// with only a slice request is `Unconstrained` here, as upstream's `isUnconstrained`
    /// treats a slice-only request (`isSliceTopologyOnlyRequest`).
    pub topology_request: Option<TopologyRequest>,
    /// Kueue TAS: the slice request (`podset-slice-required-topology` and
    /// `podset-slice-size`): the placement keeps every slice within one domain of its level,
    /// and it is part of the scheduling equivalence hash.
    pub topology_slice: Option<TopologySlice>,
    /// KAI GPU sharing: the pod template's `gpu-fraction` or `gpu-memory` annotation.
    pub gpu_share: Option<crate::gpu::GpuShare>,
    /// Volcano vGPU: the pod's `volcano.sh/vgpu-*` requests, read as the deviceshare plugin
    /// reads them (the same amounts stay in `requests`, which Kueue and the node count).
    pub vgpu: Option<crate::gpu::VgpuRequest>,
    /// The pod template as written, for the views of its pods (`kubectl describe pod`);
    /// None: not given (trace and generated workloads).
    pub info: Option<Arc<PodInfo>>,
}

/// What a pod (or pod template) of the input says beyond its scheduling, as written: shown
/// by the pod views, never read by a decision.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodInfo {
    /// `metadata.labels`, sorted by key.
    pub labels: Vec<(String, String)>,
    /// `metadata.annotations`, sorted by key.
    pub annotations: Vec<(String, String)>,
    /// `spec.containers`, in order.
    pub containers: Vec<ContainerInfo>,
    /// `spec.nodeSelector`, sorted by key.
    pub node_selector: Vec<(String, String)>,
    /// `spec.tolerations`, as kubectl prints them (`key=value:effect`).
    pub tolerations: Vec<String>,
}

/// One container of a pod: its name and its requests as written (limits where a request is
/// missing, as the API server defaults them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerInfo {
    /// `name` (empty when not given).
    pub name: String,
    /// Resource name and quantity, sorted by resource name.
    pub requests: Vec<(String, String)>,
}

/// A pod set's Kueue topology request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TopologyRequest {
    /// `kueue.x-k8s.io/podset-required-topology: <level label>`.
    Required(String),
    /// `kueue.x-k8s.io/podset-preferred-topology: <level label>`.
    Preferred(String),
    /// `kueue.x-k8s.io/podset-unconstrained-topology: "true"`.
    Unconstrained,
}

/// A pod set's Kueue TAS slice request: every `size` consecutive pods in one domain of
/// `level` (`PodSetSliceRequiredTopology`, `PodSetSliceSize`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TopologySlice {
    /// The node label of the level each slice must fit in.
    pub level: String,
    /// Pods per slice, at least 1.
    pub size: u32,
}

/// How the input named a workload's queue, kept so outputs and messages can quote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueRef {
    /// Not managed by Kueue: no queue name and no `default` LocalQueue in the namespace.
    Unmanaged,
    /// Names a LocalQueue that exists.
    Local(LocalQueueId),
    /// Names a LocalQueue that does not exist: pending with Kueue's message, never admitted.
    Missing(String),
}

/// A workload already holding quota at the start (from `status.admission` of the input).
#[derive(Clone, Debug)]
pub struct InitialAdmission {
    /// `status.admission.clusterQueue`.
    pub cluster_queue: ClusterQueueId,
    /// Per pod set, in pod-set order: the flavor of each resource and the admitted count.
    pub pod_sets: Vec<PodSetAdmission>,
    /// When quota was reserved (the QuotaReserved condition's lastTransitionTime), if known.
    pub reserved_at: Option<SimTime>,
    /// Its pods were ready before the start (`PodsReady=True` in the input, or every admitted
    /// pod running on its node at the start): `waitForPodsReady` arms no timeout for it, as
    /// Kueue arms none for a workload whose PodsReady condition is True.
    pub pods_ready: bool,
}

/// The admission of one pod set: a flavor per resource and the admitted pod count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSetAdmission {
    /// Flavor chosen for each requested resource, sorted by resource id.
    pub flavors: Vec<(ResourceId, FlavorId)>,
    /// Admitted pod count (lower than the requested count under partial admission).
    pub count: u32,
    /// Kueue TAS: the topology assignment (`topologyAssignment`): the topology (index into
    /// `World::topologies`) and, per lowest-level domain in domain order, its pods.
    pub topology: Option<(usize, Vec<(crate::topology::DomainId, u32)>)>,
}

/// A Workload's `status.requeueState`, with its `Requeued` condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequeueState {
    /// `count`: requeues so far (the next back-off doubles from it; `backoffLimitCount`
    /// counts it).
    pub count: u32,
    /// `requeueAt`, relative to the start: it waits, inadmissible, until then.
    pub requeue_at: Option<SimTime>,
    /// The `Requeued` condition's reason and message, if the input has one.
    pub condition: Option<(String, String)>,
}

/// A workload: one unit of admission and gang scheduling.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Namespace.
    pub namespace: String,
    /// Name as reported: the Kueue Workload name, or the top-level object's own name.
    pub name: String,
    /// Kind reported: `Workload` for a Kueue Workload, else the top-level object's kind.
    pub kind: String,
    /// The top-level object a Kueue Workload was derived from (`Job`, `job-name`), if any.
    pub owner: Option<(String, String)>,
    /// `metadata.uid`, or `namespace/name` when absent: the last tie-break of queue order.
    pub uid: String,
    /// The UID of the job it stands for (a Job's `metadata.uid`; a Workload's
    /// `kueue.x-k8s.io/job-uid` label), quoted in preemption messages.
    pub job_uid: Option<String>,
    /// The queue it was submitted to.
    pub queue: QueueRef,
    /// The queue name as written in the input (for messages), if any.
    pub queue_name: Option<String>,
    /// Name of the priority class that gave the priority, if any.
    pub priority_class: Option<String>,
    /// Effective priority.
    pub priority: i32,
    /// `spec.schedulerName` of its pods.
    pub scheduler_name: String,
    /// Creation time (queue-order timestamp); before the start for objects that pre-exist it.
    pub created_at: SimTime,
    /// When the workload enters the simulation (≥ 0).
    pub arrival: SimTime,
    /// How long it runs once all its pods run; `None` runs until the horizon.
    pub duration: Option<SimDuration>,
    /// Pod sets.
    pub pod_sets: Vec<PodSet>,
    /// `spec.active` (false: never admitted).
    pub active: bool,
    /// `spec.maximumExecutionTimeSeconds` (jobs: label `kueue.x-k8s.io/max-exec-time-seconds`):
    /// once admitted for this long in total, the workload is deactivated.
    pub max_execution_time: Option<SimDuration>,
    /// Quota already held at the start, from the input's `status.admission`.
    pub initial_admission: Option<InitialAdmission>,
    /// The input's `Evicted=True` condition (reason, lastTransitionTime) of a workload that
    /// was evicted and requeued before the start: some reasons set its queue-order timestamp.
    pub last_eviction: Option<(String, SimTime)>,
    /// Why Kueue's job controller could not create the Workload (e.g. its
    /// WorkloadPriorityClass does not exist): it stays pending with this Warning event.
    pub creation_blocked: Option<CreationBlocked>,
    /// `status.requeueState` of a Workload of the input that was requeued (a PodsReady
    /// timeout, an admission check) before the start: how often, and until when it waits.
    pub requeue_state: Option<RequeueState>,
    /// A job Kueue does not manage that is suspended (`spec.suspend: true` as written, or
    /// suspended by Kueue's webhook for a queue-name label in a namespace Kueue's reconciler
    /// then ignores): nothing unsuspends it, so it never runs.
    pub suspended: bool,
    /// What its gang scheduler is asked for: gang size and topology constraint. Shared: most
    /// workloads of a generator or trace ask for the same, and a `GangSpec` is 256 bytes of
    /// mostly empty lists (`Arc::make_mut` to change one).
    pub gang: Arc<GangSpec>,
    /// What its controller does when pods end early, and the work a failure loses.
    pub resilience: crate::change::Resilience,
    /// The replica of a scaling serving object it stands for (a Deployment's pod, a
    /// LeaderWorkerSet's group, a StatefulSet's pod group), if any: its object's controller
    /// deletes it at a scale-down.
    pub serving: Option<crate::serving::ServingRef>,
}

/// The gang scheduler's view of a workload (the Volcano or KAI PodGroup its controller
/// would create).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GangSpec {
    /// PodGroup `minMember`: pods that must be placed in the same scheduling pass. `None`:
    /// every pod (the whole workload is one gang).
    pub min_member: Option<u32>,
    /// Volcano `spec.networkTopology`.
    pub network_topology: Option<NetworkTopology>,
    /// KAI `topologyConstraint` (annotations `kai.scheduler/topology*`).
    pub kai_topology: Option<KaiTopologyConstraint>,
    /// KAI only: one PodGroup per pod (KAI's grouper for a batch Job), each pod placed on
    /// its own; otherwise one PodGroup for the workload.
    pub pod_group_per_pod: bool,
    /// KAI PodGroup `spec.subGroups` (from a PodGroup object the workload names with the
    /// `pod-group-name` annotation), parents before children; empty without subgroups.
    pub kai_subgroups: Vec<KaiSubGroup>,
    /// Per pod set: its subgroup (index into `kai_subgroups`), from the pod template's
    /// `kai.scheduler/subgroup-name` label.
    pub pod_set_subgroup: Vec<Option<usize>>,
    /// KAI: the Queue (index into `World::kai_queues`) from the `kai.scheduler/queue` label;
    /// None: KAI's implicit `default-queue`, which has no quota and takes no part in reclaim.
    pub kai_queue: Option<usize>,
    /// KAI: the PodGroup's `spec.preemptibility` (`preemptible`: true, `non-preemptible`:
    /// false), which KAI's pod grouper sets from the `kai.scheduler/preemptibility` label of
    /// the owner or pod. None: KAI's default from the priority (`CalculatePreemptibility`).
    pub kai_preemptible: Option<bool>,
    /// Volcano: the Queue (index into `World::volcano_queues`) its PodGroup names
    /// (`spec.queue`, a Volcano Job's `spec.queue`, or the annotation
    /// `scheduling.volcano.sh/queue-name`); None: no Queue is modelled for it.
    pub volcano_queue: Option<usize>,
    /// Volcano PodGroup `spec.minResources`, which the enqueue action checks.
    pub volcano_min_resources: crate::volcano::MinResources,
    /// Volcano PodGroup `minTaskMember`: (pod set, minimum pods) pairs.
    pub min_task_member: Vec<(usize, u32)>,
    /// Volcano PodGroup `subGroupPolicy` instances (from the PodGroup the workload names with
    /// `scheduling.k8s.io/group-name`): the pods matching a policy, grouped by equal values of
    /// its `matchLabelKeys`.
    pub volcano_subgroups: Vec<VolcanoSubGroup>,
    /// Per `subGroupPolicy` (or partitioned Volcano Job task): `minSubGroups`
    /// (`minPartitions`), the ready subgroups the job needs; 0 (the default) asks for none.
    pub volcano_min_sub_groups: Vec<u32>,
    /// Per pod set, the nodes of its first pods, already running at the start (a bare Pod's
    /// `spec.nodeName`; annotation `kueuesim.io/bound-nodes`): a gang that is partly placed,
    /// e.g. after a pod failed. Empty: nothing runs yet.
    pub bound_nodes: Vec<Vec<crate::ids::NodeId>>,
    /// Per pod set, parallel to `bound_nodes`: the KAI GPU group of each bound pod that holds
    /// a GPU share (its `runai-gpu-group` label; shares of one group are on one device).
    /// Empty: none named.
    pub bound_gpu_groups: Vec<Vec<Option<String>>>,
    /// KAI's `LastStartTimestamp` of a job running at the start: its PodGroup's
    /// `kai.scheduler/last-start-timestamp` annotation, relative to the simulation start (at
    /// most 0). None: not given; upstream's minruntime plugin then does not protect the job.
    pub bound_started: Option<crate::time::SimTime>,
    /// The name of the input's PodGroup object this gang is (Volcano or KAI), if any; a
    /// scheduler's messages name it. None: the PodGroup its controller would create.
    pub pod_group: Option<String>,
    /// Per pod set, its pods' own names, when the input names them (the bare Pods of a
    /// PodGroup or a Kueue pod group); empty: named as their controller would name them.
    pub pod_names: Vec<Vec<String>>,
    /// Per pod set, parallel to `pod_names`: each bare Pod's own labels, annotations and
    /// containers (pods of one role share a spec but not their metadata); empty: the pod
    /// set's template (`PodSet::info`) stands for every pod.
    pub pod_info: Vec<Vec<Arc<PodInfo>>>,
}

impl GangSpec {
    /// How many pods run at the start (`bound_nodes`).
    pub fn pre_bound(&self) -> usize {
        self.bound_nodes.iter().map(Vec::len).sum()
    }
}

/// Volcano's `networkTopology` of a PodGroup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkTopology {
    /// `mode: hard` (true) or `soft`.
    pub hard: bool,
    /// `highestTierAllowed` or `highestTierName`.
    pub highest_tier: Option<TierRef>,
}

/// How a Volcano constraint names its highest tier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TierRef {
    /// `highestTierAllowed`.
    Number(i32),
    /// `highestTierName` (a HyperNode `spec.tierName`).
    Name(String),
}

/// A KAI Queue (`scheduling.run.ai/v2`), as far as fair share, limits and reclaim go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KaiQueue {
    /// Object name.
    pub name: String,
    /// `spec.parentQueue`, resolved (parents are departments: they hold no jobs).
    pub parent: Option<usize>,
    /// `spec.resources.gpu.quota` (deserved) in milli-GPUs (a fraction of a GPU allowed, as
    /// upstream's float); None: unlimited (-1).
    pub gpu_quota: Option<i64>,
    /// `spec.resources.gpu.overQuotaWeight`.
    pub gpu_over_quota_weight: i64,
    /// `spec.resources.gpu.limit` in milli-GPUs; None: no limit (-1).
    pub gpu_limit: Option<i64>,
    /// `spec.priority` (default 100): over-quota goes to higher priorities first.
    pub priority: i32,
    /// `spec.preemptMinRuntime`: a job of this queue (or below it, unless set lower down)
    /// that started less than this ago is not preempted (the minruntime plugin). None: unset.
    pub preempt_min_runtime: Option<crate::SimDuration>,
    /// `spec.reclaimMinRuntime`: likewise for reclaim, resolved from the child of the
    /// reclaimer's and the victim's lowest common ancestor up. None: unset.
    pub reclaim_min_runtime: Option<crate::SimDuration>,
    /// `spec.resources.cpu`, in millicores.
    pub cpu: KaiQueueResource,
    /// `spec.resources.memory`, in bytes (the Queue gives megabytes of 10^6 bytes).
    pub memory: KaiQueueResource,
}

/// One resource of a KAI Queue besides GPUs (the proportion plugin's `ResourceShare` inputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KaiQueueResource {
    /// `quota` (deserved); None: unlimited (-1).
    pub quota: Option<i64>,
    /// `overQuotaWeight`.
    pub over_quota_weight: i64,
    /// `limit`; None: no limit (-1).
    pub limit: Option<i64>,
}

impl KaiQueueResource {
    /// A resource the Queue does not bound: unlimited deserved quota and limit, weight 1 (a
    /// Queue without the section; every queue then gets its whole request as fair share).
    pub const UNLIMITED: Self = Self {
        quota: None,
        over_quota_weight: 1,
        limit: None,
    };
}

/// One subgroup of a Volcano `subGroupPolicy`: pod sets placed together under their own
/// network topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VolcanoSubGroup {
    /// The policy's name and the matched label values, e.g. `task2/worker`.
    pub name: String,
    /// Its pod sets.
    pub pod_sets: Vec<usize>,
    /// The policy's `networkTopology`.
    pub network_topology: Option<NetworkTopology>,
    /// Its policy: index into `GangSpec::volcano_min_sub_groups` (upstream's `SubJobGID`).
    pub policy: usize,
    /// The policy's `subGroupSize` (default 1): the subgroup's `MinAvailable`, the pods it
    /// needs placed to count as ready (`SubJobInfo.IsReady`).
    pub min_available: u32,
}

/// A KAI PodGroup subgroup: a gang of its own inside the PodGroup, with its own topology
/// constraint, nested under `parent`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KaiSubGroup {
    /// `name`.
    pub name: String,
    /// `parent` (index into the subgroup list), None under the PodGroup itself.
    pub parent: Option<usize>,
    /// `minMember` (at least 1).
    pub min_member: u32,
    /// `topologyConstraint` (its `topology` defaults to the PodGroup's).
    pub constraint: Option<KaiTopologyConstraint>,
}

/// KAI's `topologyConstraint`: levels are node-label keys of the named Topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KaiTopologyConstraint {
    /// `topology`: the Topology object's name.
    pub topology: String,
    /// `requiredTopologyLevel`.
    pub required: Option<String>,
    /// `preferredTopologyLevel`.
    pub preferred: Option<String>,
}

/// A job whose Workload Kueue cannot create: the job controller's Warning event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreationBlocked {
    /// The event reason, e.g. `WorkloadPriorityClassNotFound`.
    pub reason: &'static str,
    /// The event message.
    pub message: String,
}

/// The characters of Kubernetes' random name suffixes (`utilrand.String`): no vowels, no
/// look-alike digits.
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A stand-in for the 5 random characters the API server appends to a `generateName`
/// (`utilrand.String(5)`): FNV-1a over `seed` and the pod's position, so runs are stable.
fn random_suffix(seed: &str, ps: usize, idx: usize) -> String {
    let mut out = String::with_capacity(5);
    push_random_suffix(&mut out, seed, ps, idx);
    out
}

/// Appends `random_suffix(seed, ps, idx)` to `out` (no string of its own).
fn push_random_suffix(out: &mut String, seed: &str, ps: usize, idx: usize) {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in seed
        .bytes()
        .chain((ps as u64).to_le_bytes())
        .chain((idx as u64).to_le_bytes())
    {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    for i in 0..5 {
        let k = (h >> (i * 12)) as usize % SUFFIX_ALPHABET.len();
        out.push(SUFFIX_ALPHABET[k] as char);
    }
}

/// What `Workload::pod_name` reserves: a name of this length or less is written with one
/// allocation (a longer one grows the string as pushes do).
pub const POD_NAME_ROOM: usize = 64;

/// Appends `n` in decimal to `out`, as `format!("{n}")` writes it, without the formatting
/// machinery (pod names are built on every failed placement, the engine's flavor-attempt
/// messages on every admission of a borrowing ClusterQueue).
pub fn push_decimal(out: &mut String, n: usize) {
    let mut buf = [0u8; 20];
    out.push_str(crate::quantity::decimal_digits(n as u64, &mut buf));
}

/// A Deployment's `pod-template-hash`: the Deployment controller's `ComputeHash` writes the
/// 32-bit FNV-1a hash of the pod template in decimal and `rand.SafeEncodeString` maps each
/// digit into the suffix alphabet; kueuesim hashes the Deployment's name (it keeps no
/// template), so each Deployment has one hash.
pub fn pod_template_hash(deployment: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in deployment.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h.to_string()
        .bytes()
        .map(|d| SUFFIX_ALPHABET[usize::from(d) % SUFFIX_ALPHABET.len()] as char)
        .collect()
}

/// The name the ReplicaSet controller gives a pod of `deployment`:
/// `<deployment>-<pod-template-hash>-<5 random characters>` (the ReplicaSet is
/// `<deployment>-<pod-template-hash>` and its pods' `generateName` that plus `-`); the
/// suffix is derived from `seed` and `idx`.
pub fn replica_set_pod_name(deployment: &str, seed: &str, idx: usize) -> String {
    format!(
        "{deployment}-{}-{}",
        pod_template_hash(deployment),
        random_suffix(seed, 0, idx)
    )
}

impl Workload {
    /// Whether KAI may evict it (`PodGroupInfo.IsPreemptibleJob`): its PodGroup's
    /// preemptibility when set, else preemptible below priority 100
    /// (`CalculatePreemptibility`).
    pub fn kai_preemptible(&self) -> bool {
        self.gang.kai_preemptible.unwrap_or(self.priority < 100)
    }

    /// Whether it holds capacity from the start: quota (`status.admission` of the input) or
    /// nodes (pods already bound). The loader lets such workloads arrive first at their
    /// instant and the engine books them before it places any pod there, so a snapshot is
    /// read as a state, not in the order its objects were written.
    pub fn holds_at_start(&self) -> bool {
        self.initial_admission.is_some() || self.gang.pre_bound() > 0
    }

    /// The name of pod `idx` of pod set `ps`: its own name when the input names it, else as
    /// its controller would name it: a Job's pods `<job>-<5 random chars>` (here derived
    /// from the UID and index, so runs are stable); a plain Pod is its own name; a
    /// StatefulSet's pods `<statefulset>-<ordinal>`; a Deployment's
    /// `<deployment>-<pod-template-hash>-<5 random chars>` (`replica_set_pod_name`); a
    /// LeaderWorkerSet group `<lws>-<group>` (the owner name here) has its leader named so
    /// and its workers `<lws>-<group>-<worker index>` (the leader is index 0); a Kubeflow
    /// job's `<job>-<replica type>-<index>` (an MPIJob's launcher `<mpijob>-launcher-<5 random
    /// chars>`); a Grove PodGang's `<podclique>-<5 random chars>`; any other's (a bare
    /// Workload, JobSet, RayJob, TrainJob)
    /// `<workload>-<podset>-<index>`.
    pub fn pod_name(&self, ps: usize, idx: usize) -> String {
        // Room for the usual shapes at once, so that the pushes do not regrow it.
        let mut out = String::with_capacity(POD_NAME_ROOM);
        self.push_pod_name(&mut out, ps, idx);
        out
    }

    /// Appends `pod_name(ps, idx)` to `out`: the schedulers' failure messages name a pod
    /// on every failed placement, so the name is built in place, piece by piece, instead of
    /// through `format!` (byte for byte the same name; a test compares the two).
    pub fn push_pod_name(&self, out: &mut String, ps: usize, idx: usize) {
        if let Some(name) = self.gang.pod_names.get(ps).and_then(|n| n.get(idx)) {
            out.push_str(name);
            return;
        }
        // `<a>-<b>-<idx>`, the fallback shape.
        let dashed = |out: &mut String, a: &str, b: &str| {
            out.push_str(a);
            out.push('-');
            out.push_str(b);
            out.push('-');
            push_decimal(out, idx);
        };
        let Some((kind, owner)) = &self.owner else {
            dashed(out, &self.name, &self.pod_sets[ps].name);
            return;
        };
        match kind.as_str() {
            "Job" => {
                out.push_str(owner);
                out.push('-');
                push_random_suffix(out, &self.uid, ps, idx);
            }
            "Pod" if self.pod_sets.len() == 1 && self.pod_sets[0].count == 1 => {
                out.push_str(owner);
            }
            "StatefulSet" if self.pod_sets.len() == 1 => {
                out.push_str(owner);
                out.push('-');
                push_decimal(out, idx);
            }
            "Deployment" if self.pod_sets.len() == 1 => {
                out.push_str(&replica_set_pod_name(owner, &self.uid, idx));
            }
            // The training operator's `GenGeneralName`: `<job>-<replica type>-<index>`.
            "PyTorchJob" | "TFJob" | "XGBoostJob" | "PaddleJob" | "JAXJob" => {
                dashed(out, owner, &self.pod_sets[ps].name);
            }
            // The MPI operator: the launcher is a Job `<mpijob>-launcher`, the workers
            // `<mpijob>-worker-<index>`.
            "MPIJob" if self.pod_sets[ps].name == "launcher" => {
                out.push_str(owner);
                out.push_str("-launcher-");
                push_random_suffix(out, &self.uid, ps, idx);
            }
            "MPIJob" => dashed(out, owner, &self.pod_sets[ps].name),
            // Grove: a PodClique's pods are `<podclique>-<5 random chars>` (`generateName`);
            // a PodGang's pod sets are its PodCliques.
            "PodGang" => {
                out.push_str(&self.pod_sets[ps].name);
                out.push('-');
                push_random_suffix(out, &self.uid, ps, idx);
            }
            "LeaderWorkerSet" => {
                // The worker index: the leader pod set's one pod is 0, the workers after it.
                let worker = match self.pod_sets[ps].name.as_str() {
                    "leader" => 0,
                    "worker" => idx + 1,
                    _ => idx,
                };
                out.push_str(owner);
                if worker != 0 {
                    out.push('-');
                    push_decimal(out, worker);
                }
            }
            _ => dashed(out, &self.name, &self.pod_sets[ps].name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_set_pods_are_named_as_the_replica_set_controller_names_them() {
        let hash = pod_template_hash("web");
        // A 32-bit hash in decimal: up to 10 characters, all of the suffix alphabet.
        assert!((1..=10).contains(&hash.len()), "{hash}");
        assert!(hash.bytes().all(|b| SUFFIX_ALPHABET.contains(&b)), "{hash}");
        let a = replica_set_pod_name("web", "uid-1", 0);
        let b = replica_set_pod_name("web", "uid-1", 1);
        assert!(a.starts_with(&format!("web-{hash}-")), "{a}");
        assert_eq!(a.len(), "web-".len() + hash.len() + 6, "{a}");
        assert_ne!(a, b);
        assert_eq!(a, replica_set_pod_name("web", "uid-1", 0));
        assert_ne!(pod_template_hash("api"), hash);
    }

    #[test]
    fn pod_name_pieces_are_written_as_format_writes_them() {
        // `push_pod_name` builds names from these pieces where `format!` did before.
        for n in [0, 1, 9, 10, 99, 100, 12_345, usize::MAX] {
            let mut out = String::from("x-");
            push_decimal(&mut out, n);
            assert_eq!(out, format!("x-{n}"));
        }
        let mut out = String::new();
        push_random_suffix(&mut out, "uid-7", 1, 3);
        let old: String = {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in "uid-7"
                .bytes()
                .chain(1u64.to_le_bytes())
                .chain(3u64.to_le_bytes())
            {
                h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
            (0..5)
                .map(|i| SUFFIX_ALPHABET[(h >> (i * 12)) as usize % SUFFIX_ALPHABET.len()] as char)
                .collect()
        };
        assert_eq!(out, old);
        assert_eq!(random_suffix("uid-7", 1, 3), old);
    }
}
