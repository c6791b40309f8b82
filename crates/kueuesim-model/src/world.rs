//! The whole input of one simulation: every object, resolved, plus the simulator settings.

use std::collections::BTreeMap;

use crate::ids::{ClusterQueueId, FlavorId, LocalQueueId, NodeId, WorkloadId};
use crate::objects::{
    ClusterQueue, Cohort, LocalQueue, Namespace, Node, PriorityClass, ResourceFlavor, Workload,
};
use crate::resources::ResourceTable;
use crate::time::{SimDuration, SimTime};
use crate::topology::Topology;

/// Which gang/topology scheduler places a workload's pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchedulerKind {
    /// The default kube-scheduler: pods are placed one by one, no gang.
    Kube,
    /// KAI Scheduler: the whole gang or nothing.
    Kai,
    /// Volcano: the whole gang (minMember) or nothing.
    Volcano,
}

impl SchedulerKind {
    /// The event source name the scheduler writes (`From` in kubectl describe).
    pub fn event_source(self) -> &'static str {
        match self {
            SchedulerKind::Kube => "default-scheduler",
            SchedulerKind::Kai => "kai-scheduler",
            SchedulerKind::Volcano => "volcano",
        }
    }

    /// Whether pods are placed all-or-nothing.
    pub fn is_gang(self) -> bool {
        !matches!(self, SchedulerKind::Kube)
    }
}

/// Simulator settings (the `Simulation` object), with defaults applied.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Seed of the random streams.
    pub seed: u64,
    /// Wall-clock instant of simulated time 0, Unix milliseconds.
    pub start_unix_ms: i64,
    /// Horizon: events after it are not simulated.
    pub until: Option<SimTime>,
    /// Delay from a pod's binding to its running.
    pub pod_startup: SimDuration,
    /// Delay from a pod's termination request to its being gone.
    pub pod_termination: SimDuration,
    /// `schedulerName` → scheduler, sorted by name.
    pub schedulers: Vec<(String, SchedulerKind)>,
    /// Whether Kueue is in front of the pod schedulers (`spec.kueue.enabled`, default true).
    /// Off, every job goes straight to its scheduler, as on a cluster without Kueue: the
    /// gang schedulers' own queues are the only layer (the loader makes every workload
    /// unmanaged).
    pub kueue_enabled: bool,
    /// Kueue's own configuration (the `Configuration` object, defaulted as v1beta2 does).
    pub kueue: KueueConfig,
    /// What a preempted or evicted workload keeps of the work it did.
    pub progress: ProgressPolicy,
    /// KAI Scheduler settings (`spec.kai`).
    pub kai: KaiConfig,
    /// Volcano's scheduler configuration (`spec.volcano.configuration`).
    pub volcano: VolcanoConfig,
    /// How long Kueue's controller takes (`spec.kueue.controllerLatency`); zero: instantaneous.
    pub controller_latency: ControllerLatency,
    /// Kueue's feature gates that change a decision (`spec.kueue.featureGates`).
    pub kueue_gates: KueueGates,
    /// Policies the scenario names in place of the built-in ones (`spec.policies`), which the
    /// caller supplies (kueuesim's Python module binds each name to a callable).
    pub policies: PolicyNames,
    /// GPUs as devices shared by pods, and kube-scheduler's policy for them
    /// (`spec.gpuPlacement`, the openb adapter's `gpuSharing: device`).
    pub gpu: crate::gpu::GpuSharingConfig,
    /// Seeded random failures of nodes and GPUs (`spec.failures`).
    pub failures: crate::change::FailureConfig,
    /// What the seed changes in the workloads (`spec.variation`), as the loader describes it.
    pub variation: VariationNote,
}

/// What a run's seed changes in its workloads (`Simulation.spec.variation`, and any input
/// drawn from the seed), described by the loader for the summary (`summary.variation`).
#[derive(Clone, Debug, PartialEq)]
pub struct VariationNote {
    /// `spec.variation.arrivals`: `keep`, `jitter <duration>` or `poisson`.
    pub arrivals: String,
    /// `spec.variation.durations`: `keep` or `lognormal sigma <σ>`.
    pub durations: String,
    /// `spec.variation.load`.
    pub load: f64,
    /// `spec.variation.resample`: `none` or `days`.
    pub resample: String,
    /// What differs from one seed to the next, in words, `tie-breaks` last (the schedulers'
    /// seeded tie-breaks are always drawn from the seed).
    pub seeds_vary: Vec<String>,
}

impl Default for VariationNote {
    fn default() -> Self {
        VariationNote {
            arrivals: "keep".into(),
            durations: "keep".into(),
            load: 1.0,
            resample: "none".into(),
            seeds_vary: vec!["tie-breaks".into()],
        }
    }
}

/// `spec.policies`: the hooks a scenario replaces, each by a name the caller binds to a
/// policy (None: the built-in behaviour, Kueue's queue order and the scheduler's own scores).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyNames {
    /// `queueOrder`: orders pending workloads within a priority level.
    pub queue_order: Option<PolicyRef>,
    /// `nodeScore`: scores the feasible nodes for a kube-scheduler pod.
    pub node_score: Option<PolicyRef>,
}

/// A policy named in the input, and where (`file:line:column`), for the caller's errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyRef {
    /// The name the caller binds.
    pub name: String,
    /// `file:line:column` of the name in the input.
    pub at: String,
}

/// The Kueue feature gates a scenario may switch (`spec.kueue.featureGates`), with the
/// defaults of the Kueue version kueuesim follows (docs/semantics.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KueueGates {
    /// `FlavorFungibilityPreserveScanProgress` (beta, on by default since Kueue 0.20): a
    /// workload skipped in a cycle keeps its flavor-scan progress, and progress recorded in
    /// the previous cycle survives a change of its ClusterQueue's allocatable generation.
    pub preserve_scan_progress: bool,
    /// `RecomputeAssignmentUponPreemptionTargetsOverlap` (beta, on by default since Kueue
    /// 0.20): an entry whose preemption targets overlap those of an entry processed earlier in
    /// the cycle has its assignment recomputed as if those preemptions were done, instead of
    /// being skipped.
    pub recompute_on_overlap: bool,
    /// `SchedulingEquivalenceHashing` (beta; on by default from Kueue 0.18, off in 0.17 and
    /// in v0.15.7+ / v0.16.4+): under BestEffortFIFO a head requeued as NoFit or PreemptionNoCandidates
    /// parks every pending workload of its scheduling shape with it, and workloads of that
    /// shape created before the next requeue of inadmissible workloads are parked on arrival.
    /// Off, each workload is evaluated on its own.
    pub scheduling_equivalence_hashing: bool,
    /// `TASFailedNodeReplacement` (beta, on by default since Kueue 0.14): when a node of a
    /// TAS workload's topology assignment fails (deleted, not ready, drained), Kueue looks for
    /// a replacement node for its pods in the same required domain, keeping the others.
    pub tas_failed_node_replacement: bool,
    /// `TASFailedNodeReplacementFailFast` (beta, on by default since Kueue 0.14): when no
    /// replacement fits at the first attempt, the workload is evicted (else Kueue keeps
    /// trying).
    pub tas_failed_node_replacement_fail_fast: bool,
}

impl Default for KueueGates {
    fn default() -> Self {
        KueueGates {
            preserve_scan_progress: true,
            recompute_on_overlap: true,
            scheduling_equivalence_hashing: true,
            tas_failed_node_replacement: true,
            tas_failed_node_replacement_fail_fast: true,
        }
    }
}

/// Kueue is not instantaneous: its scheduler runs one cycle at a time (popping one head per
/// ClusterQueue), and every admission or eviction is a write to the API server through a
/// rate-limited client (QPS 50 in Kueue's performance harness). All zero by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControllerLatency {
    /// Fixed cost of a scheduling cycle (popping heads, nominating, the iterator).
    pub cycle: SimDuration,
    /// Cost per ClusterQueue in the cycle's snapshot: `cache.Snapshot` copies every
    /// ClusterQueue and cohort, with their usage and admitted workloads, at every cycle,
    /// however few heads it popped.
    pub per_cluster_queue: SimDuration,
    /// Cost per TAS flavor in the cycle's snapshot: the snapshot builds each TAS flavor's
    /// topology (`TASFlavorSnapshot`: its nodes, their free capacity and the usage of the TAS
    /// workloads) at every cycle.
    pub per_tas_flavor: SimDuration,
    /// Cost per head the cycle pops (flavor assignment, preemption search).
    pub per_head: SimDuration,
    /// Cost per admission inside the cycle (the scheduler's own work for it).
    pub per_admission: SimDuration,
    /// One API write (an admission's status patch, an eviction), and the interval between the
    /// client's tokens: writes take their tokens in order (`api_burst` of them at once after
    /// an idle spell), asynchronously to the scheduler; an admitted workload starts (its job
    /// is unsuspended) only once its write is done.
    pub api_write: SimDuration,
    /// How many writes the client may issue at once after it has been idle: client-go's
    /// token bucket (`flowcontrol.NewTokenBucketRateLimiter(qps, burst)`) hands out one token
    /// per `api_write` and holds at most this many. 0 or 1: one write at a time. Kueue's
    /// Configuration defaults `clientConnection` to QPS 300, burst 500; its performance
    /// harness's minimalkueue sets QPS 50, burst 100.
    pub api_burst: u32,
    /// One status patch of a head the cycle requeues with a changed `QuotaReserved=False`
    /// condition (`requeueAndUpdate`), queued on the same client; the scheduler issues it
    /// synchronously, so the cycle ends no earlier than when it is done. Zero: not modelled.
    pub status_write: SimDuration,
}

/// What a cycle did, as the controller latency prices it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CycleWork {
    /// Heads popped.
    pub heads: usize,
    /// Admissions made.
    pub admissions: usize,
    /// ClusterQueues in the snapshot.
    pub cluster_queues: usize,
    /// TAS flavors (ResourceFlavors with a `topologyName`) in the snapshot.
    pub tas_flavors: usize,
}

impl ControllerLatency {
    /// How long a cycle that did `work` keeps the scheduler, its synchronous writes aside.
    pub fn cycle_duration(&self, work: CycleWork) -> SimDuration {
        let per = |d: SimDuration, n: usize| d.millis() * n as i64;
        SimDuration::from_millis(
            self.cycle.millis()
                + per(self.per_cluster_queue, work.cluster_queues)
                + per(self.per_tas_flavor, work.tas_flavors)
                + per(self.per_head, work.heads)
                + per(self.per_admission, work.admissions),
        )
    }
}

/// The node-order plugins of a volcano-scheduler.conf and their arguments, as far as they
/// score resource-only pods. The default is the Helm chart's volcano-scheduler.conf
/// (nodeorder and binpack) plus network-topology-aware, the plugins the platform runs.
#[derive(Clone, Debug, PartialEq)]
pub struct VolcanoConfig {
    /// `nodeorder` with `leastrequested.weight`, `mostrequested.weight`,
    /// `balancedresource.weight` (defaults 1, 0, 1); None when the plugin is not listed.
    pub nodeorder: Option<NodeOrderWeights>,
    /// `binpack` with its arguments; None when not listed.
    pub binpack: Option<BinpackArgs>,
    /// `network-topology-aware` with its arguments; None when not listed.
    pub network_topology_aware: Option<NetworkTopologyAwareArgs>,
    /// `deviceshare` with `deviceshare.VGPUEnable: true`; None otherwise (vGPU requests are
    /// then plain extended resources, as upstream without the plugin's vGPU support).
    pub deviceshare: Option<DeviceShareArgs>,
    /// The conf's actions and queue plugins; None without a configuration (Volcano then
    /// places gangs as they come and its Queues take no part).
    pub queues: Option<crate::volcano::VolcanoQueueing>,
}

/// `deviceshare` arguments for Volcano vGPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceShareArgs {
    /// `deviceshare.SchedulePolicy`: the device order and score.
    pub policy: VgpuPolicy,
    /// `deviceshare.ScheduleWeight`: the node score's weight (0, the default: no score).
    pub weight: i64,
}

/// `deviceshare.SchedulePolicy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VgpuPolicy {
    /// No policy (the default): devices from the highest index down, score 0.
    #[default]
    None,
    /// `binpack`: the devices with the most memory used first; score 100 × used/total.
    Binpack,
    /// `spread`: the devices with the fewest pods first.
    Spread,
}

/// `nodeorder` weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeOrderWeights {
    /// `leastrequested.weight`.
    pub least_requested: i64,
    /// `mostrequested.weight`.
    pub most_requested: i64,
    /// `balancedresource.weight`.
    pub balanced_resource: i64,
}

/// `binpack` arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinpackArgs {
    /// `binpack.weight`.
    pub weight: i64,
    /// Per-resource weights (`binpack.cpu`, `binpack.memory`, `binpack.resources.<name>`),
    /// by resource name.
    pub resources: Vec<(String, i64)>,
}

/// `network-topology-aware` arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct NetworkTopologyAwareArgs {
    /// `weight`.
    pub weight: f64,
    /// `hypernode.binpack.normal-pod.enable`.
    pub normal_pod_binpack: bool,
    /// `hypernode.binpack.normal-pod.fading`.
    pub fading: f64,
}

impl Default for VolcanoConfig {
    fn default() -> Self {
        VolcanoConfig {
            nodeorder: Some(NodeOrderWeights {
                least_requested: 1,
                most_requested: 0,
                balanced_resource: 1,
            }),
            binpack: Some(BinpackArgs {
                weight: 1,
                resources: vec![("cpu".into(), 1), ("memory".into(), 1)],
            }),
            network_topology_aware: Some(NetworkTopologyAwareArgs {
                weight: 1.0,
                normal_pod_binpack: true,
                fading: 0.8,
            }),
            deviceshare: None,
            queues: None,
        }
    }
}

/// KAI's node placement strategy (SchedulingShard `placementStrategy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlacementStrategy {
    /// Fill the fullest nodes first (KAI's default).
    #[default]
    Binpack,
    /// Spread over the emptiest nodes.
    Spread,
}

/// KAI Scheduler settings of the `Simulation` (`spec.kai`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KaiConfig {
    /// `defaultPreferredTopologyLevel`: a node label that a KAI workload without a topology
    /// constraint prefers (the platform's "same spine"; unset upstream).
    pub default_preferred_level: Option<String>,
    /// `defaultTopology`: the Topology the default preferred level belongs to; unset, a
    /// one-level topology over that label.
    pub default_topology: Option<String>,
    /// `placementStrategy` for GPU pods.
    pub placement_strategy: PlacementStrategy,
}

/// What an evicted workload keeps of its work (`Simulation` `spec.preemption.progress`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProgressPolicy {
    /// Everything since it started running is lost; it runs its whole duration again.
    #[default]
    Restart,
    /// Work is saved every `interval` of running time; only the time since the last
    /// checkpoint is lost.
    Checkpoint {
        /// The checkpoint interval.
        interval: SimDuration,
    },
}

/// A fair-sharing preemption strategy (`fairSharing.preemptionStrategies`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FairSharingStrategy {
    /// Preempt while the preemptor's share stays at or below the target's share after
    /// the preemption.
    LessThanOrEqualToFinalShare,
    /// Preempt while the preemptor's share is below the target's share before it.
    LessThanInitialShare,
}

/// `waitForPodsReady` of Kueue's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitForPodsReady {
    /// `timeout`: an admitted workload whose pods are not all ready by then is evicted.
    pub timeout: SimDuration,
    /// `blockAdmission`: nothing else is admitted while an admitted workload is not ready.
    pub block_admission: bool,
    /// `requeuingStrategy.timestamp: Eviction` (true, the default) or `Creation`.
    pub order_by_eviction: bool,
    /// `requeuingStrategy.backoffBaseSeconds`.
    pub backoff_base: SimDuration,
    /// `requeuingStrategy.backoffMaxSeconds`.
    pub backoff_max: SimDuration,
    /// `requeuingStrategy.backoffLimitCount`: requeues before the workload is deactivated.
    pub backoff_limit: Option<u32>,
    /// `recoveryTimeout`: an admitted workload whose pods were ready and then failed
    /// (`PodsReady=False`, `WaitForRecovery`) is evicted if they are not all ready again this
    /// long after; None (`0s`) never. Defaults to `timeout`.
    pub recovery_timeout: Option<SimDuration>,
}

impl Default for WaitForPodsReady {
    /// The v1beta2 defaults (`apis/config/v1beta2/defaults.go`).
    fn default() -> Self {
        WaitForPodsReady {
            timeout: SimDuration::from_secs(30 * 60),
            block_admission: false,
            order_by_eviction: true,
            backoff_base: SimDuration::from_secs(60),
            backoff_max: SimDuration::from_secs(3600),
            backoff_limit: None,
            recovery_timeout: Some(SimDuration::from_secs(30 * 60)),
        }
    }
}

/// `admissionFairSharing` of Kueue's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionFairSharing {
    /// `usageHalfLifeTime` (0: usage is forgotten at every sample).
    pub half_life: SimDuration,
    /// `usageSamplingInterval` (default 5m).
    pub sampling_interval: SimDuration,
    /// `resourceWeights` in milli-units per resource (1000 when not listed).
    pub resource_weights_milli: Vec<(crate::ids::ResourceId, i64)>,
}

/// Kueue's configuration as far as it changes decisions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KueueConfig {
    /// `fairSharing`: enabled with these preemption strategies, in order.
    pub fair_sharing: Option<Vec<FairSharingStrategy>>,
    /// `admissionFairSharing`, if configured.
    pub admission_fair_sharing: Option<AdmissionFairSharing>,
    /// `waitForPodsReady`, if enabled (on by default with v1beta2).
    pub wait_for_pods_ready: Option<WaitForPodsReady>,
    /// `resources`: how pod requests become quota requests.
    pub resources: ResourceConfig,
    /// `manageJobsWithoutQueueName`: jobs without a queue-name label in a namespace
    /// `managed_jobs_namespace_selector` selects are managed too (and wait, with no queue).
    pub manage_jobs_without_queue_name: bool,
    /// `managedJobsNamespaceSelector` (None: every namespace): Kueue manages no job of a
    /// namespace it does not select. Default: every namespace but `kube-system` and Kueue's
    /// own (`kueue-system`).
    pub managed_jobs_namespace_selector: Option<crate::labels::LabelSelector>,
    /// Kueue's own namespace (`namespace` of its Configuration, default `kueue-system`).
    pub namespace: String,
}

/// Kueue's default `managedJobsNamespaceSelector`: `kubernetes.io/metadata.name NotIn
/// [kube-system, <Kueue's namespace>]` (`SetDefaults_Configuration`).
pub fn default_managed_jobs_namespace_selector(
    kueue_namespace: &str,
) -> crate::labels::LabelSelector {
    crate::labels::LabelSelector {
        match_labels: crate::labels::Labels::default(),
        match_expressions: vec![crate::labels::SelectorRequirement {
            key: "kubernetes.io/metadata.name".into(),
            op: crate::labels::SelectorOp::NotIn,
            values: vec!["kube-system".into(), kueue_namespace.into()],
        }],
    }
}

/// `resources` of Kueue's configuration: requests Kueue leaves out of quota, and requests it
/// counts as other resources (`excludeResourcePrefixes`, `transformations`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceConfig {
    /// `excludeResourcePrefixes`: resources whose names start with one of these are ignored.
    pub exclude_prefixes: Vec<String>,
    /// `transformations`, by input resource.
    pub transformations: Vec<ResourceTransformation>,
}

/// One `resources.transformations` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceTransformation {
    /// `input`.
    pub input: crate::ids::ResourceId,
    /// `strategy: Retain` (true, the default) keeps the input; `Replace` drops it.
    pub retain: bool,
    /// `outputs`: per unit of the input, this much of each output (Kueue units).
    pub outputs: Vec<(crate::ids::ResourceId, i64)>,
}

impl Default for KueueConfig {
    /// No Configuration object: v1beta2 defaults (waitForPodsReady on, no fair sharing).
    fn default() -> Self {
        KueueConfig {
            fair_sharing: None,
            admission_fair_sharing: None,
            wait_for_pods_ready: Some(WaitForPodsReady::default()),
            resources: ResourceConfig::default(),
            manage_jobs_without_queue_name: false,
            managed_jobs_namespace_selector: Some(default_managed_jobs_namespace_selector(
                "kueue-system",
            )),
            namespace: "kueue-system".into(),
        }
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 0,
            start_unix_ms: 0,
            until: None,
            pod_startup: SimDuration::ZERO,
            pod_termination: SimDuration::ZERO,
            schedulers: default_schedulers(),
            kueue_enabled: true,
            kueue: KueueConfig::default(),
            progress: ProgressPolicy::default(),
            kai: KaiConfig::default(),
            volcano: VolcanoConfig::default(),
            controller_latency: ControllerLatency::default(),
            kueue_gates: KueueGates::default(),
            policies: PolicyNames::default(),
            gpu: crate::gpu::GpuSharingConfig::default(),
            failures: crate::change::FailureConfig::default(),
            variation: VariationNote::default(),
        }
    }
}

/// The scheduler names the platform runs: `default-scheduler: kube, kai-scheduler: kai,
/// volcano: volcano, volcano-scheduler: volcano` (the Simulation may add more).
pub fn default_schedulers() -> Vec<(String, SchedulerKind)> {
    let mut v = vec![
        ("default-scheduler".to_string(), SchedulerKind::Kube),
        ("kai-scheduler".to_string(), SchedulerKind::Kai),
        ("volcano".to_string(), SchedulerKind::Volcano),
        ("volcano-scheduler".to_string(), SchedulerKind::Volcano),
    ];
    v.sort();
    v
}

impl SimConfig {
    /// The scheduler running pods named `scheduler_name`, if any (the loader rejects names
    /// no scheduler runs).
    pub fn scheduler(&self, scheduler_name: &str) -> Option<SchedulerKind> {
        self.schedulers
            .binary_search_by(|(n, _)| n.as_str().cmp(scheduler_name))
            .ok()
            .map(|i| self.schedulers[i].1)
    }
}

/// Every object of one scenario, names resolved into dense ids.
#[derive(Clone, Debug)]
pub struct World {
    /// Interned resource names.
    pub resources: ResourceTable,
    /// ResourceFlavors by `FlavorId`.
    pub flavors: Vec<ResourceFlavor>,
    /// ClusterQueues by `ClusterQueueId`.
    pub cluster_queues: Vec<ClusterQueue>,
    /// Cohorts by `CohortId` (declared and implicit).
    pub cohorts: Vec<Cohort>,
    /// LocalQueues by `LocalQueueId`.
    pub local_queues: Vec<LocalQueue>,
    /// Priority classes (Workload and pod), in input order.
    pub priority_classes: Vec<PriorityClass>,
    /// Namespaces by name (`add_namespace`): looked up by a workload's namespace, so a
    /// platform of ten thousand namespaces costs a lookup, not a scan.
    pub namespaces: BTreeMap<String, Namespace>,
    /// Nodes by `NodeId`; empty means a quota-only simulation.
    pub nodes: Vec<Node>,
    /// Kueue and KAI `Topology` objects as trees over the nodes, sorted by name.
    pub topologies: Vec<Topology>,
    /// The Volcano HyperNode tree (only the virtual root over every node when there are no
    /// HyperNodes).
    pub hypernodes: Topology,
    /// KAI Queues, in input order (parents before their children is not required).
    pub kai_queues: Vec<crate::objects::KaiQueue>,
    /// Volcano Queues, in input order (plus Volcano's implicit `default` when a PodGroup
    /// names it and the input has none).
    pub volcano_queues: Vec<crate::volcano::VolcanoQueue>,
    /// Workloads by `WorkloadId`, in arrival-then-document order.
    pub workloads: Vec<Workload>,
    /// Settings.
    pub config: SimConfig,
    /// The changes of the `Timeline` objects, in the order they apply (time, then document
    /// order); empty: the cluster never changes on schedule.
    pub timeline: Vec<crate::change::Change>,
    /// The serving objects that scale (`kueuesim.io/replicas`, a load with
    /// `kueuesim.io/load-per-replica`), in input order; their replica workloads point here
    /// (`Workload::serving`).
    pub serving: Vec<crate::serving::ServingObject>,
    /// The world as each Timeline change with `set` or `patch` leaves its objects
    /// (`Change::epoch`): the same ids throughout (every node, ClusterQueue and Cohort of any
    /// epoch is in all of them), different ClusterQueues' and Cohorts' specs; no workloads,
    /// no timeline and no epochs of its own. The resources, nodes, topologies and config
    /// are the start's in every epoch (the loader clones them and rejects a change to the
    /// first three): the engine keeps what it derives from them (resource ids, per-node
    /// ancestor chains, each workload's scheduler) for the whole run (`Simulation::new`
    /// checks the config; the rest is checked in debug builds only).
    pub epochs: Vec<World>,
    /// The nodes that are not there at the start: a later Timeline change adds them
    /// (`NodeOp::Add`).
    pub late_nodes: Vec<NodeId>,
    /// NodePools the cluster-autoscaler scales and ClusterQueues' ProvisioningRequest checks
    /// (None: nothing autoscaled, no admission check).
    pub autoscaling: Option<Box<crate::autoscale::Autoscaling>>,
}

impl World {
    /// The flavor `id`.
    pub fn flavor(&self, id: FlavorId) -> &ResourceFlavor {
        &self.flavors[id.index()]
    }
    /// The ClusterQueue `id`.
    pub fn cluster_queue(&self, id: ClusterQueueId) -> &ClusterQueue {
        &self.cluster_queues[id.index()]
    }
    /// The LocalQueue `id`.
    pub fn local_queue(&self, id: LocalQueueId) -> &LocalQueue {
        &self.local_queues[id.index()]
    }
    /// The node `id`.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }
    /// The workload `id`.
    pub fn workload(&self, id: WorkloadId) -> &Workload {
        &self.workloads[id.index()]
    }
    /// Whether the simulation places pods on nodes (otherwise it is quota-only).
    pub fn has_nodes(&self) -> bool {
        !self.nodes.is_empty()
    }
    /// The Kueue/KAI Topology named `name`.
    pub fn topology(&self, name: &str) -> Option<&Topology> {
        self.topologies
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.topologies[i])
    }
    /// The namespace named `name`, if declared.
    pub fn namespace(&self, name: &str) -> Option<&Namespace> {
        self.namespaces.get(name)
    }

    /// Adds namespace `ns` unless one of its name is there already (the first stays).
    pub fn add_namespace(&mut self, ns: Namespace) {
        self.namespaces.entry(ns.name.clone()).or_insert(ns);
    }

    /// Whether a namespace named `name` is declared.
    pub fn has_namespace(&self, name: &str) -> bool {
        self.namespaces.contains_key(name)
    }

    /// Whether Kueue may manage jobs of `namespace` (`managedJobsNamespaceSelector`; a
    /// namespace not in the input has the one label the API server gives every namespace,
    /// `kubernetes.io/metadata.name`).
    pub fn kueue_manages_namespace(&self, namespace: &str) -> bool {
        let Some(sel) = &self.config.kueue.managed_jobs_namespace_selector else {
            return true;
        };
        match self.namespace(namespace) {
            Some(n) => sel.matches(&n.labels),
            None => sel.matches(&crate::labels::Labels::new(vec![(
                "kubernetes.io/metadata.name".into(),
                namespace.into(),
            )])),
        }
    }

    /// Whether `namespace` is one of the cluster's own: `kube-system` and Kueue's (those
    /// Kueue's default `managedJobsNamespaceSelector` leaves out), whose pods run the
    /// cluster and are nobody's workloads to queue.
    pub fn is_system_namespace(&self, namespace: &str) -> bool {
        namespace == "kube-system" || namespace == self.config.kueue.namespace
    }

    /// Whether a ClusterQueue `namespaceSelector` admits workloads of `namespace` (`None`
    /// admits none, `{}` all without looking the namespace up, a namespace not in the input
    /// has no labels).
    pub fn namespace_selected(
        &self,
        selector: Option<&crate::labels::LabelSelector>,
        namespace: &str,
    ) -> bool {
        match selector {
            None => false,
            Some(sel) if sel.selects_everything() => true,
            Some(sel) => match self.namespace(namespace) {
                Some(n) => sel.matches(&n.labels),
                None => sel.matches(&Default::default()),
            },
        }
    }
}

impl Default for World {
    fn default() -> Self {
        World {
            resources: ResourceTable::default(),
            flavors: Vec::new(),
            cluster_queues: Vec::new(),
            cohorts: Vec::new(),
            local_queues: Vec::new(),
            priority_classes: Vec::new(),
            namespaces: BTreeMap::new(),
            nodes: Vec::new(),
            topologies: Vec::new(),
            hypernodes: Topology::from_hypernodes(&[], 0).expect("no HyperNodes is a tree"),
            kai_queues: Vec::new(),
            volcano_queues: Vec::new(),
            workloads: Vec::new(),
            config: SimConfig::default(),
            timeline: Vec::new(),
            serving: Vec::new(),
            epochs: Vec::new(),
            late_nodes: Vec::new(),
            autoscaling: None,
        }
    }
}
