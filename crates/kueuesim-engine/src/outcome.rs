//! What a simulation reports: per-workload records (state, times, admission, placement,
//! conditions, events) and run-wide counters, as plain data for the writers.

pub use crate::hourly::HourlySeries;
use kueuesim_model::{
    ClusterQueueId, FlavorId, NodeId, ResourceId, SimDuration, SimTime, Workload, WorkloadId,
};

// Defined beside the device book that works them out, below this module, so that the
// placement code it depends on does not depend on it in turn.
pub use crate::placement::devices::GpuSharingFigures;

// The counting over a run (a lean run's `Tally` and its parts) in a file of its own; its
// types keep their paths here.
mod tally;
pub use tally::{
    ClusterQueueTally, DurationPairs, Durations, QueueSamples, RepeatedPreemptions, Tally,
};

/// The state of a workload, as the `-o json` contract names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkloadState {
    /// Waiting for quota (also after a requeue), or, when not managed by Kueue, for its pods to
    /// be placed.
    Pending,
    /// Quota reserved, admission checks pending (not reached without admission checks).
    QuotaReserved,
    /// Quota held; pods being placed, unplaceable, or starting.
    Admitted,
    /// All pods running.
    Running,
    /// Evicted, pods still terminating.
    Evicted,
    /// Deactivated (`spec.active: false`).
    Inactive,
    /// Done.
    Finished,
}

impl WorkloadState {
    /// Every state, in report order.
    pub const ALL: [WorkloadState; 7] = [
        WorkloadState::Pending,
        WorkloadState::QuotaReserved,
        WorkloadState::Admitted,
        WorkloadState::Running,
        WorkloadState::Evicted,
        WorkloadState::Inactive,
        WorkloadState::Finished,
    ];

    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadState::Pending => "Pending",
            WorkloadState::QuotaReserved => "QuotaReserved",
            WorkloadState::Admitted => "Admitted",
            WorkloadState::Running => "Running",
            WorkloadState::Evicted => "Evicted",
            WorkloadState::Inactive => "Inactive",
            WorkloadState::Finished => "Finished",
        }
    }
}

/// A Workload condition type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConditionType {
    /// `QuotaReserved`.
    QuotaReserved,
    /// `Admitted`.
    Admitted,
    /// `PodsReady`.
    PodsReady,
    /// `Evicted`.
    Evicted,
    /// `Preempted`.
    Preempted,
    /// `Requeued`.
    Requeued,
    /// `Finished`.
    Finished,
}

impl ConditionType {
    /// Kueue's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionType::QuotaReserved => "QuotaReserved",
            ConditionType::Admitted => "Admitted",
            ConditionType::PodsReady => "PodsReady",
            ConditionType::Evicted => "Evicted",
            ConditionType::Preempted => "Preempted",
            ConditionType::Requeued => "Requeued",
            ConditionType::Finished => "Finished",
        }
    }
}

/// A Workload condition as Kueue writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// The type.
    pub kind: ConditionType,
    /// `True` or `False`.
    pub status: bool,
    /// Reason.
    pub reason: &'static str,
    /// Message: most are fixed words ("The workload has no reservation", "Quota reserved in
    /// ..." is built), borrowed rather than copied into a string of their own.
    pub message: std::borrow::Cow<'static, str>,
    /// lastTransitionTime.
    pub at: SimTime,
}

/// An event type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// `Normal`.
    Normal,
    /// `Warning`.
    Warning,
}

impl EventType {
    /// Kubernetes' spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// A Kubernetes event about a workload, worded as its real source words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// When.
    pub at: SimTime,
    /// Normal or Warning.
    pub kind: EventType,
    /// The component (`kueue-admission`, `default-scheduler`, ...).
    pub source: &'static str,
    /// Reason.
    pub reason: &'static str,
    /// Message.
    pub message: String,
    /// The Kueue scheduling cycle, for admission events.
    pub cycle: Option<u64>,
}

/// An eviction of a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Eviction {
    /// When.
    pub at: SimTime,
    /// The Evicted condition's reason (`Preempted`, `PodsReadyTimeout`, ...).
    pub reason: &'static str,
    /// The Preempted condition's reason, for preemptions.
    pub preemption_reason: Option<&'static str>,
    /// The preempting workload, for preemptions.
    pub preemptor: Option<String>,
    /// The ClusterQueue the preemptor was being admitted to, for Kueue's preemptions
    /// (`kueue_preempted_workloads_total`'s `preempting_cluster_queue`).
    pub preemptor_cluster_queue: Option<ClusterQueueId>,
}

/// The latest admission of a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admission {
    /// The ClusterQueue holding its quota.
    pub cluster_queue: ClusterQueueId,
    /// Per pod set: flavor of each resource (sorted by resource) and admitted count.
    pub pod_sets: Vec<PodSetAssignment>,
}

/// The flavors and count admitted for one pod set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSetAssignment {
    /// Flavor of each requested resource, sorted by resource id.
    pub flavors: Vec<(ResourceId, FlavorId)>,
    /// Admitted pod count.
    pub count: u32,
    /// Kueue TAS: the pod set's topology assignment (`status.admission.podSetAssignments[].
    /// topologyAssignment`), for a TAS flavor.
    pub topology: Option<crate::tas::TopologyAssignment>,
}

/// A workload's running count of (GPU-)milliseconds: an `i128`, kept word-aligned. A field
/// of `i128` itself is 16-byte aligned, and would make `WorkloadRecord` and the engine's boxed
/// state of each workload that holds it 16-byte aligned too: an alignment the allocator
/// meets only through mimalloc's slow aligned entry (`kueuesim-alloc`), once per workload,
/// and whose blocks take its slower free. The arithmetic is the `i128`'s.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
#[repr(C, packed(8))]
pub struct Wide(i128);

impl Wide {
    /// The count.
    #[inline]
    pub fn get(self) -> i128 {
        self.0
    }
}

impl std::ops::AddAssign<i128> for Wide {
    #[inline]
    fn add_assign(&mut self, x: i128) {
        let sum = self.0 + x;
        self.0 = sum;
    }
}

impl std::fmt::Debug for Wide {
    /// As the `i128` it holds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.0;
        std::fmt::Debug::fmt(&v, f)
    }
}

/// Everything reported about one workload.
#[derive(Clone, Debug)]
pub struct WorkloadRecord {
    /// State at the report time.
    pub state: WorkloadState,
    /// Latest admission time.
    pub admitted_at: Option<SimTime>,
    /// When all pods last started running.
    pub running_at: Option<SimTime>,
    /// When it finished.
    pub finished_at: Option<SimTime>,
    /// The latest admission, while or after it held quota.
    pub admission: Option<Admission>,
    /// Per pod set, the node of each placed pod (pod index order; `None` while unplaced).
    pub placement: Vec<Vec<Option<NodeId>>>,
    /// Per pod set, when each placed pod was bound (same shape as `placement` once the
    /// workload is released to its scheduler; empty before, and always in a lean run): the
    /// kubectl pod views tell a pod still starting (`ContainerCreating`) from a running one by it.
    pub bound_at: Vec<Vec<Option<SimTime>>>,
    /// The topology domain its gang scheduler placed it in (Volcano's
    /// `volcano.sh/job-allocated-hypernode`, KAI's domain), if a topology constraint applied.
    pub topology_domain: Option<String>,
    /// Evictions, oldest first.
    pub evictions: Vec<Eviction>,
    /// Conditions, one per type, in the order they were first set.
    pub conditions: Vec<Condition>,
    /// Events, oldest first; consecutive repeats of the same event are recorded once.
    pub events: Vec<Event>,
    /// For a pending workload at the end: whether it is in its ClusterQueue's heap or parked
    /// as inadmissible.
    pub queue_status: Option<crate::queues::QueueStatus>,
    /// GPU-milliseconds its pods held (quota-only: while running with admitted GPUs).
    pub gpu_ms: Wide,
    /// GPU-milliseconds of work lost to evictions (not checkpointed).
    pub lost_gpu_ms: Wide,
    /// Requeues after a PodsReady timeout (`requeueState.count`).
    pub requeue_count: u32,
    /// Time in queue: how long it was Pending (holding no quota) before its latest admission,
    /// summed over every admission (creation to the first, each requeue to the next).
    pub queued: SimDuration,
    /// When its latest stretch of Pending began: its creation, or its latest requeue.
    pub pending_since: SimTime,
    /// GPU-milliseconds of admitted GPU quota it held while its pods were not all running:
    /// from each admission to all pods running, or to its eviction if they never did (a
    /// gang Kueue admitted that its scheduler cannot place until `PodsReadyTimeout`).
    pub idle_quota_gpu_ms: Wide,
    /// Workloads it preempted (Kueue) or reclaimed from (KAI) to be admitted or placed.
    pub preemptions_caused: u32,
    /// Times its pods ended early (drained, removed, failed) and its job went on: the lost
    /// pods replaced, or a JobSet restarted.
    pub restarts: u32,
    /// Its job failed (lost more pods than its controller allows): `Finished`, reason `Failed`.
    pub failed: bool,
    /// Volcano: when its PodGroup went Pending → Inqueue, set only for a PodGroup the
    /// enqueue action held back first (the kubectl views show it Pending until then).
    pub inqueue_at: Option<SimTime>,
    /// Running time that did useful work: every run's work up to its finish or its last
    /// checkpoint, without restart costs (and the current run's so far, at the end).
    pub useful_ms: Wide,
    /// When its pods first all ran.
    pub first_running_at: Option<SimTime>,
    /// A serving replica deleted by a scale-down (its Workload goes with its pod or group
    /// upstream): `finished_at` is when.
    pub scaled_down: bool,
}

impl WorkloadRecord {
    /// Effective training time ratio (ETTR, Kokolis et al., HPCA 2025): useful running time
    /// over the wall time from its first start to its finish (or `end`), requeues and
    /// replacements included; None if it never ran.
    pub fn ettr(&self, end: SimTime) -> Option<f64> {
        let from = self.first_running_at?;
        let to = self.finished_at.unwrap_or(end);
        let wall = (to - from).millis();
        (wall > 0).then(|| self.useful_ms.get() as f64 / wall as f64)
    }

    /// Every placed pod as (pod set, index), in pod-set then index order.
    pub fn placed_pods(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.placement.iter().enumerate().flat_map(|(ps, slots)| {
            slots
                .iter()
                .enumerate()
                .filter(|(_, n)| n.is_some())
                .map(move |(i, _)| (ps, i))
        })
    }
}

/// One serving object's figures (`summary.serving`), parallel to `World::serving`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServingStats {
    /// Replica-milliseconds its `spec.replicas` asked for, from its arrival to the end.
    pub wanted_ms: i128,
    /// Replica-milliseconds its replicas were ready (every pod of the replica running).
    pub ready_ms: i128,
    /// Replicas its scale-ups created (its first replicas included).
    pub replicas_created: u32,
    /// For each replica that became ready, the milliseconds from the scale-up that created
    /// it to ready, sorted.
    pub times_to_ready_ms: Vec<i64>,
}

/// What the cluster-autoscaler and the ProvisioningRequest check did (`summary.autoscaling`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AutoscalingStats {
    /// Scale-ups (for pending pods or for a ProvisioningRequest).
    pub scale_ups: u64,
    /// Nodes that joined after a scale-up.
    pub nodes_added: u64,
    /// Nodes a scale-down removed.
    pub nodes_removed: u64,
    /// Most autoscaled nodes there at once.
    pub peak_nodes: u64,
    /// Autoscaled nodes there at the end.
    pub nodes_at_end: u64,
    /// Integral of autoscaled nodes there over the run, node-milliseconds.
    pub node_ms: i128,
    /// Integral of their GPUs, GPU-milliseconds.
    pub gpu_ms: i128,
    /// ProvisioningRequests created.
    pub provisioning_requests: u64,
    /// ProvisioningRequests that failed.
    pub provisioning_failed: u64,
    /// Workloads deactivated after their last retry failed (check Rejected).
    pub provisioning_rejected: u64,
}

/// What the cluster's changes and failures did (`summary.failures`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FailureStats {
    /// Node failures (`spec.failures.nodes`).
    pub node_failures: u64,
    /// GPU failures (`spec.failures.gpus`).
    pub gpu_failures: u64,
    /// Pods that ended early (drained, removed, failed).
    pub pods_lost: u64,
    /// Times a job went on after losing pods (replaced, or a JobSet restarted).
    pub restarts: u64,
    /// Jobs that failed after losing pods.
    pub jobs_failed: u64,
    /// GPU-milliseconds of work lost when pods ended early (beyond the last checkpoint).
    pub lost_gpu_ms: i128,
    /// When each failure happened and each loss of work, in time order (the report's plot
    /// of failures and lost work over time): one entry per failure or per job that lost work.
    pub marks: Vec<FailureMark>,
}

/// One entry of `FailureStats::marks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailureMark {
    /// When.
    pub at: SimTime,
    /// What happened.
    pub what: FailureCause,
    /// GPU-milliseconds of work lost then (0 for a failure itself: its pods' losses follow
    /// as their own entries).
    pub lost_gpu_ms: i128,
}

/// What a `FailureMark` records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FailureCause {
    /// A node failed (`spec.failures.nodes`).
    NodeFailure,
    /// A GPU failed (`spec.failures.gpus`).
    GpuFailure,
    /// Work lost by pods evicted by a drain.
    LostToDrain,
    /// Work lost by pods of a removed node.
    LostToRemoval,
    /// Work lost by pods of a failed node.
    LostToNodeFailure,
    /// Work lost by pods of a failed GPU.
    LostToGpuFailure,
    /// Work lost by pods KAI's `staleGangEviction` evicted: none so far, as a gang is stale
    /// only after a loss that already ended its run.
    LostToStaleGangEviction,
    /// Work lost by pods Volcano's `preempt` or `reclaim` action evicted.
    LostToVolcanoEviction,
    /// Work lost by pods KAI's consolidation moved to other nodes.
    LostToConsolidation,
    /// Work lost by pods KAI's reclaim or preempt evicted from an elastic job above its
    /// minimum (kueuesim's job runs only with all its pods).
    LostToKaiEviction,
}

impl FailureCause {
    /// How the report names it.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureCause::NodeFailure => "node failures",
            FailureCause::GpuFailure => "GPU failures",
            FailureCause::LostToDrain => "drained",
            FailureCause::LostToRemoval => "node removed",
            FailureCause::LostToNodeFailure => "node failed",
            FailureCause::LostToGpuFailure => "GPU failed",
            FailureCause::LostToStaleGangEviction => "stale gang evicted",
            FailureCause::LostToVolcanoEviction => "preempted or reclaimed by Volcano",
            FailureCause::LostToConsolidation => "consolidation moved",
            FailureCause::LostToKaiEviction => "reclaimed or preempted by KAI",
        }
    }
}

/// Every reason an eviction can carry in kueuesim: the `Evicted` condition reasons Kueue
/// sets for what is modelled (`Preempted`, `PodsReadyTimeout`, `ClusterQueueStopped`,
/// `LocalQueueStopped`, and the deactivations `DeactivatedDueToMaximumExecutionTimeExceeded`
/// and `DeactivatedDueToRequeuingLimitExceeded`), and KAI's `Reclaim`, `Preempt` and
/// `Consolidation`. A summary counts each of them, zeros included, so that across seeds or
/// variants a reason one run never saw is a count of 0 rather than a figure that run lacks
/// (the report leaves some out where they cannot happen).
pub const EVICTION_REASONS: [&str; 12] = [
    "AdmissionCheck",
    "ClusterQueueStopped",
    "Consolidation",
    "DeactivatedDueToAdmissionCheck",
    "DeactivatedDueToMaximumExecutionTimeExceeded",
    "DeactivatedDueToRequeuingLimitExceeded",
    "LocalQueueStopped",
    "NodeFailures",
    "PodsReadyTimeout",
    "Preempt",
    "Preempted",
    "Reclaim",
];

/// Run-wide results.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// The time the report describes (the horizon, or the last event).
    pub end: SimTime,
    /// Kueue scheduling cycles run.
    pub cycles: u64,
    /// Admissions made (a requeued workload admitted again counts again).
    pub admissions: u64,
    /// Integral of GPUs in use over time, in GPU-milliseconds.
    pub gpu_busy_ms: i128,
    /// GPU capacity: allocatable GPUs of all nodes, or nominal GPU quota when quota-only.
    pub gpu_capacity: i64,
    /// Events processed.
    pub events_processed: u64,
    /// GPU-milliseconds of work lost to evictions and to pods that ended early, all
    /// workloads.
    pub lost_gpu_ms: i128,
    /// GPU-milliseconds of useful work: every run's work up to its finish or its last
    /// checkpoint (the runs going on at the end, up to the end) (`summary.goodput`'s
    /// numerator).
    pub useful_gpu_ms: i128,
    /// What the cluster's changes and failures did.
    pub failures: FailureStats,
    /// Evictions by the Evicted condition's reason (one of `EVICTION_REASONS`); reasons that
    /// did not happen are absent.
    pub evictions: std::collections::BTreeMap<&'static str, u64>,
    /// The autoscaler's figures; None without autoscaled pools and provisioning checks.
    pub autoscaling: Option<AutoscalingStats>,
    /// Preemptions by the Preempted condition's reason.
    pub preemptions: std::collections::BTreeMap<&'static str, u64>,
    /// Per ClusterQueue, GPU-seconds its admitted workloads held in each hour of the run, as
    /// runs of equal hours (a queue idle for years is one run).
    pub cq_gpu_seconds_by_hour: Vec<HourlySeries>,
    /// Every quota reservation made by a scheduling cycle: the workload and how long it had
    /// waited since it was created or last requeued (Kueue's `quota_reserved_wait_time`).
    /// Empty for a lean run.
    pub quota_reserved_waits: Vec<(WorkloadId, SimDuration)>,
    /// Per ClusterQueue at the end, the quota its workloads hold for every flavor and resource
    /// of its resource groups, in their order (Kueue's `resourceNode.Usage`).
    pub final_quota_usage: Vec<Vec<(FlavorId, ResourceId, i64)>>,
    /// Why the run stopped before its end, if it did: the outcome is then the state at `end`,
    /// the time of the last event processed.
    pub stopped: Option<Stopped>,
    /// With GPU devices: allocation and fragmentation of the GPUs at the end.
    pub gpu_sharing: Option<GpuSharingFigures>,
    /// Pending workload-milliseconds per ClusterQueue and LocalQueue, by what held them back
    /// (`pendingBoundBy`; `bound::shares` gives each constraint's share).
    pub pending_bound: crate::bound::PendingBound,
    /// A hash of every arrived workload's namespace, name, arrival, duration and pod sets'
    /// sizes, in arrival order (`workload_fingerprint`): equal on two runs that replayed
    /// the same workloads, so a reader can tell seeds that vary the workload from seeds that
    /// vary tie-breaks only.
    pub workload_fingerprint: u64,
    /// Per serving object that scales (`World::serving`), its figures.
    pub serving: Vec<ServingStats>,
}

/// Folds workload `w` into a run's `workload_fingerprint` (FNV-1a, 64 bits, over its
/// namespace, name, arrival, duration and each pod set's count and requests).
pub fn workload_fingerprint(mut hash: u64, w: &kueuesim_model::Workload) -> u64 {
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(w.namespace.as_bytes());
    eat(b"/");
    eat(w.name.as_bytes());
    eat(&w.arrival.millis().to_le_bytes());
    eat(&w.duration.map_or(-1, |d| d.millis()).to_le_bytes());
    for p in &w.pod_sets {
        eat(&p.count.to_le_bytes());
        for (r, v) in p.requests.iter() {
            eat(&(r.index() as u64).to_le_bytes());
            eat(&v.to_le_bytes());
        }
    }
    hash
}

/// Why a run stopped before its end (`RunStats::stopped`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// Simulated time stopped advancing while decisions repeat (a preemption livelock under
    /// zero latencies).
    Livelock {
        /// The instant time stopped at.
        at: SimTime,
        /// Events processed at that instant.
        events: u64,
        /// The live workloads evicted most often at that instant (`kind namespace/name`), with
        /// how often, at most five.
        evicted: Vec<(String, u64)>,
    },
    /// It processed the events `Simulation::with_event_budget` allowed.
    EventBudget(u64),
    /// The caller's progress callback asked it to stop (a wall-time budget, say).
    ByCaller,
    /// A run without a horizon and with `spec.failures`: every workload has arrived, and for
    /// `for_` nothing finished or failed while failures kept ending pods (the jobs left
    /// lose their work faster than they do it, and failures never stop).
    FailuresWithoutEnd {
        /// How long nothing finished.
        for_: SimDuration,
    },
}

/// The state sampled at one instant of a time series: after every event at or before `at`.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The instant sampled.
    pub at: SimTime,
    /// GPUs bound to pods.
    pub gpus_in_use: i64,
    /// Per ClusterQueue, GPU quota held by its workloads (all flavors).
    pub gpu_quota_by_cq: Vec<i64>,
    /// Per ResourceFlavor, GPU quota held in it (all ClusterQueues).
    pub gpu_quota_by_flavor: Vec<i64>,
    /// GPU quota held per ClusterQueue and ResourceFlavor, ClusterQueue-major
    /// (`[cq * flavors + flavor]`; `kueue_cluster_queue_resource_usage`).
    pub gpu_quota_by_cq_flavor: Vec<i64>,
    /// Per ClusterQueue, workloads holding its quota (`kueue_reserving_active_workloads`).
    pub reserving_by_cq: Vec<u32>,
    /// Per ClusterQueue, workloads holding its quota that are admitted (not only reserving:
    /// `kueue_admitted_active_workloads`).
    pub admitted_by_cq: Vec<u32>,
    /// Per ClusterQueue, pending workloads in its heap (`kueue_pending_workloads`, `active`).
    pub pending_active: Vec<u32>,
    /// Per ClusterQueue, pending workloads parked as inadmissible.
    pub pending_inadmissible: Vec<u32>,
    /// Per LocalQueue, pending workloads (active and inadmissible;
    /// `kueue_local_queue_pending_workloads`).
    pub pending_by_lq: Vec<u32>,
    /// Per LocalQueue, the pending workloads of `pending_by_lq` parked as inadmissible.
    pub pending_inadmissible_by_lq: Vec<u32>,
    /// Per spine (`spine_domains`), workloads with pods bound all under it; the last entry
    /// counts those spread over several spines.
    pub gangs_by_spine: Vec<u32>,
    /// Per spine (`spine_domains`), the GPUs free on its nodes: their allocatable
    /// `nvidia.com/gpu` less the requests of the pods bound to them (the scheduler's view of
    /// the domain). Empty without spines or without GPUs. A gang that must fit in one spine
    /// (Volcano's hard `networkTopology`, KAI's required level) finds room only where this
    /// reaches its need.
    pub free_gpus_by_spine: Vec<i64>,
    /// With GPU devices, their allocation and fragmentation (as the summary's, at `at`).
    pub gpu_sharing: Option<GpuSharingFigures>,
}

/// The domains the time series counts running gangs and free GPUs in: the highest real
/// tier of the Volcano HyperNodes (the spines on the platform), else the top level of the
/// first Kueue/KAI Topology. (topology index as in `placement::topologies`, domains).
pub fn spine_domains(world: &kueuesim_model::World) -> (usize, Vec<kueuesim_model::DomainId>) {
    let hn = &world.hypernodes;
    if hn.domains.len() > 1 {
        let top = hn.domains.iter().skip(1).map(|d| d.tier).max().unwrap_or(0);
        let doms = hn
            .by_tier
            .iter()
            .find(|(t, _)| *t == top)
            .map(|(_, d)| d.clone())
            .unwrap_or_default();
        return (0, doms);
    }
    match world.topologies.first() {
        Some(t) => (1, t.domain(kueuesim_model::DomainId::ROOT).children.clone()),
        None => (0, Vec::new()),
    }
}

/// Samples at a fixed step from time 0 to the end of the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeSeries {
    /// Time between samples.
    pub step: SimDuration,
    /// At 0, step, 2·step, … up to the end.
    pub samples: Vec<Sample>,
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// One record per workload, by `WorkloadId`; `None` for those not yet arrived at `end`.
    /// Empty for a lean run, which reports `lean` instead.
    pub workloads: Vec<Option<WorkloadRecord>>,
    /// A lean run (`Simulation::lean`): the finished workloads folded into a tally as they
    /// finished, and the records of the others.
    pub lean: Option<LeanOutcome>,
    /// Run-wide results.
    pub stats: RunStats,
    /// The time series, when asked for (`Simulation::with_time_series`).
    pub time_series: Option<TimeSeries>,
}

/// What a lean run reports: a tally of the workloads it let go of, and the rest whole.
#[derive(Clone, Debug)]
pub struct LeanOutcome {
    /// The finished workloads, and those that never arrived.
    pub tally: Tally,
    /// Every arrived workload that did not finish, by id, with its spec.
    pub unfinished: Vec<(WorkloadId, Workload, WorkloadRecord)>,
}
