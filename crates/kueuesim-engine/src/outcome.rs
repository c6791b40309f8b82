//! What a simulation reports: per-workload records (state, times, admission, placement,
//! conditions, events) and run-wide counters, as plain data for the writers.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

pub use crate::hourly::HourlySeries;
use kueuesim_model::{
    ClusterQueueId, FlavorId, LocalQueueId, NodeId, QueueRef, ResourceId, SimDuration, SimTime,
    Workload, WorkloadId, World,
};

// Defined beside the device book that works them out, below this module, so that the
// placement code it depends on does not depend on it in turn.
pub use crate::placement::devices::GpuSharingFigures;

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
    pub gpu_ms: i128,
    /// GPU-milliseconds of work lost to evictions (not checkpointed).
    pub lost_gpu_ms: i128,
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
    pub idle_quota_gpu_ms: i128,
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
    pub useful_ms: i128,
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
        (wall > 0).then(|| self.useful_ms as f64 / wall as f64)
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

/// What a run summary needs of its workloads, folded one workload at a time in any order:
/// counts by state, every admitted workload's wait, per ClusterQueue and per LocalQueue the
/// counts and GPU time of `ClusterQueueTally`, and the durations their percentiles are taken
/// over (`QueueSamples`). Integer sums and multisets of durations that the writers sort
/// before use, so the order of folding never shows.
///
/// A lean run keeps its tally for the whole trace, so what it holds per workload is what
/// the summary's memory grows by: one wait for the run-wide percentiles and one
/// `QueueSamples` entry per queue figure, each workload's durations held once (in the
/// bucket of its LocalQueue and ClusterQueue together, not once per queue), mostly as
/// 32-bit milliseconds (`Durations`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Workloads, arrived or not.
    pub total: u64,
    /// Not arrived by the end.
    pub not_arrived: u64,
    /// Arrived workloads Kueue does not manage.
    pub unmanaged: u64,
    /// Arrived workloads by state (`WorkloadState::ALL` order).
    pub by_state: [u64; 7],
    /// Per admitted workload, from creation to its latest admission.
    pub waits: Durations,
    /// Per arrived workload but the cluster's own (`Tally::is_cluster_own`), whether Kueue
    /// admits it or not: creation to its pods first all running, one not yet running at the
    /// end counted at its wait so far (censored: a lower bound); one that ended without
    /// running (failed, scaled down) or is deactivated (`Inactive`) is not counted.
    pub starts: Durations,
    /// Of `starts`, those still waiting at the end (counted at their wait so far).
    pub starts_waiting: u64,
    /// Arrived workloads but the cluster's own that no ClusterQueue counts (Kueue does not
    /// manage them, or is left out): the queue figures miss them, `starts` does not.
    pub outside_queues: u64,
    /// Per ClusterQueue (its admission's, else its LocalQueue's).
    pub cluster_queues: Vec<ClusterQueueTally>,
    /// Per LocalQueue (`World::local_queues` order): the workloads that name it.
    pub local_queues: Vec<ClusterQueueTally>,
    /// The queue figures' durations, by the LocalQueue the workload names (if any) and the
    /// ClusterQueue it is counted in (as `cluster_queues`): a ClusterQueue's are those of its
    /// keys, a LocalQueue's those of its keys (`Tally::cluster_queue_samples`,
    /// `Tally::local_queue_samples`).
    samples: BTreeMap<(Option<LocalQueueId>, ClusterQueueId), QueueSamples>,
    /// The keys of `samples` in ClusterQueue order, so that a ClusterQueue's figures find
    /// its keys by range instead of reading every key (with 1,000 ClusterQueues and as many
    /// LocalQueues, the scan was a million steps per figure). Private, as `samples` is:
    /// `add` keeps the two in step.
    cluster_queue_keys: BTreeSet<(ClusterQueueId, Option<LocalQueueId>)>,
    /// Arrived workloads Kueue does not manage, by namespace, but the cluster's own (a
    /// DaemonSet's, those of `World::is_system_namespace`) (capacity checks).
    pub unmanaged_by_namespace: BTreeMap<String, u64>,
    /// Of those, the suspended ones (`Workload::suspended`: they never run), by namespace.
    pub unmanaged_suspended_by_namespace: BTreeMap<String, u64>,
    /// Arrived workloads naming a LocalQueue that does not exist, by namespace and name.
    pub missing_queues: BTreeMap<(String, String), u64>,
    /// Per preemptor (`namespace/name`), the victims it preempted more than once: a
    /// preemption loop shows as the same victims preempted again and again (capacity checks'
    /// `PreemptionLoop`). Only preemptors with such a victim are kept, so it stays small.
    pub preemption_repeats: BTreeMap<String, RepeatedPreemptions>,
}

/// One preemptor's repeated preemptions (`Tally::preemption_repeats`): the victims it
/// preempted at least twice, how often and when. Folded per victim, in any order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepeatedPreemptions {
    /// Victims it preempted at least twice.
    pub victims: u64,
    /// Its preemptions of those victims.
    pub preemptions: u64,
    /// The victim it preempted most often, as (times, `namespace/name`); the least name
    /// among equals, so the order of folding does not show.
    pub most: (u64, String),
    /// Its first preemption of those victims.
    pub first: SimTime,
    /// Its last preemption of those victims.
    pub last: SimTime,
}

impl RepeatedPreemptions {
    /// Adds victim `victim`, preempted `times` times (at least twice) from `first` to `last`.
    fn add(&mut self, victim: &str, times: u64, first: SimTime, last: SimTime) {
        if self.victims == 0 {
            (self.first, self.last) = (first, last);
        } else {
            self.first = self.first.min(first);
            self.last = self.last.max(last);
        }
        self.victims += 1;
        self.preemptions += times;
        let (most, name) = &self.most;
        if times > *most || (times == *most && victim < name.as_str()) {
            self.most = (times, victim.to_string());
        }
    }
}

/// One queue's part of a `Tally` (a ClusterQueue's or a LocalQueue's): counts and GPU time.
/// The durations its percentiles are taken over are in `Tally::samples`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterQueueTally {
    /// Arrived workloads of the queue.
    pub workloads: u64,
    /// Workloads it admitted at least once.
    pub admitted_workloads: u64,
    /// Finished workloads.
    pub finished: u64,
    /// Workloads Pending at the end (never admitted, or requeued).
    pub pending: u64,
    /// Evictions of its workloads.
    pub evictions: u64,
    /// Evictions of its workloads by a preemptor (Kueue preemption, KAI reclaim).
    pub preempted: u64,
    /// Workloads its workloads preempted (in any queue).
    pub preemptions_caused: u64,
    /// GPU-milliseconds its workloads held.
    pub gpu_ms: i128,
    /// GPU-milliseconds of work its workloads lost to evictions.
    pub lost_gpu_ms: i128,
    /// GPU-milliseconds of quota its workloads held while their pods were not all running.
    pub idle_quota_gpu_ms: i128,
    /// The workload asking for the most GPUs (all pods), as (GPUs, `namespace/name`); the
    /// greatest name among equals, so the order of folding does not show.
    pub largest_workload: Option<(i64, String)>,
    /// The workload whose single pod asks for the most GPUs, likewise.
    pub largest_pod: Option<(i64, String)>,
}

/// The durations a queue's percentiles are taken over, for the workloads of one key of
/// `Tally::samples`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueSamples {
    /// Per workload holding (or having held, if finished or evicted) an admission at the end,
    /// not Pending: creation to its latest admission.
    pub waits: Durations,
    /// Per such workload: its time in queue (Pending) before its latest admission.
    pub queued: Durations,
    /// Per workload Pending at the end: creation to the end (censored wait).
    pub pending_waits: Durations,
    /// Per workload Pending at the end: its time in queue up to the end.
    pub pending_queued: Durations,
    /// Per finished workload: creation to finish (JCT), and its run time alone (its
    /// duration), for bounded slowdown.
    pub completions: DurationPairs,
}

/// A multiset of durations, for exact order statistics (its order is not kept). Held as
/// 32-bit milliseconds when they fit (0 to 49.7 days: nearly every wait and completion time),
/// half the size of a `SimDuration`; the others beside them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Durations {
    short: Vec<u32>,
    long: Vec<SimDuration>,
}

impl Durations {
    /// None.
    pub const fn new() -> Self {
        Durations {
            short: Vec::new(),
            long: Vec::new(),
        }
    }

    /// Adds `d`.
    pub fn push(&mut self, d: SimDuration) {
        match u32::try_from(d.millis()) {
            Ok(ms) => self.short.push(ms),
            Err(_) => self.long.push(d),
        }
    }

    /// How many durations it holds.
    pub fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its durations, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = SimDuration> + Clone + '_ {
        let short = self
            .short
            .iter()
            .map(|&ms| SimDuration::from_millis(i64::from(ms)));
        short.chain(self.long.iter().copied())
    }

    /// The bytes its lists have reserved (what it costs, for tests of what a run retains).
    pub fn reserved_bytes(&self) -> usize {
        self.short.capacity() * size_of::<u32>() + self.long.capacity() * size_of::<SimDuration>()
    }
}

/// A multiset of pairs of durations, held as `Durations` holds one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DurationPairs {
    short: Vec<[u32; 2]>,
    long: Vec<(SimDuration, SimDuration)>,
}

impl DurationPairs {
    /// Adds (`a`, `b`).
    pub fn push(&mut self, a: SimDuration, b: SimDuration) {
        match (u32::try_from(a.millis()), u32::try_from(b.millis())) {
            (Ok(x), Ok(y)) => self.short.push([x, y]),
            _ => self.long.push((a, b)),
        }
    }

    /// How many pairs it holds.
    pub fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its pairs, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (SimDuration, SimDuration)> + Clone + '_ {
        let ms = |x: u32| SimDuration::from_millis(i64::from(x));
        let short = self.short.iter().map(move |&[a, b]| (ms(a), ms(b)));
        short.chain(self.long.iter().copied())
    }

    /// The bytes its lists have reserved.
    pub fn reserved_bytes(&self) -> usize {
        self.short.capacity() * size_of::<[u32; 2]>()
            + self.long.capacity() * size_of::<(SimDuration, SimDuration)>()
    }
}

impl QueueSamples {
    fn add(&mut self, wl: &Workload, rec: &WorkloadRecord, end: SimTime) {
        if rec.state == WorkloadState::Pending {
            self.pending_waits.push(end - wl.created_at);
            self.pending_queued
                .push(rec.queued + (end - rec.pending_since).max(SimDuration::ZERO));
        } else if let (Some(at), true) = (rec.admitted_at, rec.admission.is_some()) {
            self.waits.push(at - wl.created_at);
            self.queued.push(rec.queued);
        }
        if let (WorkloadState::Finished, Some(done)) = (rec.state, rec.finished_at) {
            let run = wl
                .duration
                .or(rec.running_at.map(|r| done - r))
                .unwrap_or(SimDuration::ZERO);
            self.completions.push(done - wl.created_at, run);
        }
    }

    /// The bytes its lists have reserved.
    pub fn reserved_bytes(&self) -> usize {
        [
            &self.waits,
            &self.queued,
            &self.pending_waits,
            &self.pending_queued,
        ]
        .iter()
        .map(|d| d.reserved_bytes())
        .sum::<usize>()
            + self.completions.reserved_bytes()
    }
}

impl ClusterQueueTally {
    fn add(&mut self, wl: &Workload, rec: &WorkloadRecord, gpu: Option<ResourceId>) {
        self.workloads += 1;
        if let Some(g) = gpu {
            let total: i64 = wl
                .pod_sets
                .iter()
                .map(|p| p.requests.get(g) * i64::from(p.count))
                .sum();
            let pod = wl.pod_sets.iter().map(|p| p.requests.get(g)).max();
            // `namespace/name`, compared in its parts without building it: most workloads
            // of a trace tie on GPUs.
            let joined = [wl.namespace.as_bytes(), b"/", wl.name.as_bytes()];
            let name = || format!("{}/{}", wl.namespace, wl.name);
            keep_largest(&mut self.largest_workload, total, joined, name);
            keep_largest(&mut self.largest_pod, pod.unwrap_or(0), joined, name);
        }
        if rec.admitted_at.is_some() {
            self.admitted_workloads += 1;
        }
        self.evictions += rec.evictions.len() as u64;
        self.preempted += rec
            .evictions
            .iter()
            .filter(|e| e.preemptor.is_some())
            .count() as u64;
        self.preemptions_caused += u64::from(rec.preemptions_caused);
        self.gpu_ms += rec.gpu_ms;
        self.lost_gpu_ms += rec.lost_gpu_ms;
        self.idle_quota_gpu_ms += rec.idle_quota_gpu_ms;
        if rec.state == WorkloadState::Pending {
            self.pending += 1;
        }
        if rec.state == WorkloadState::Finished && rec.finished_at.is_some() {
            self.finished += 1;
        }
    }

    /// Adds another queue's figures (a ClusterQueue's from its LocalQueues', say).
    pub fn merge(&mut self, o: &ClusterQueueTally) {
        self.workloads += o.workloads;
        self.admitted_workloads += o.admitted_workloads;
        self.finished += o.finished;
        self.pending += o.pending;
        self.evictions += o.evictions;
        self.preempted += o.preempted;
        self.preemptions_caused += o.preemptions_caused;
        self.gpu_ms += o.gpu_ms;
        self.lost_gpu_ms += o.lost_gpu_ms;
        self.idle_quota_gpu_ms += o.idle_quota_gpu_ms;
        for (mine, theirs) in [
            (&mut self.largest_workload, &o.largest_workload),
            (&mut self.largest_pod, &o.largest_pod),
        ] {
            if let Some((gpus, name)) = theirs {
                keep_largest(mine, *gpus, [name.as_bytes(), b"", b""], || name.clone());
            }
        }
    }
}

/// Keeps the greater of `slot` and (`gpus`, `name`), `name` given as the parts it joins to
/// compare (so a tie costs no allocation) and built only when kept; nothing for a workload
/// without GPUs.
fn keep_largest(
    slot: &mut Option<(i64, String)>,
    gpus: i64,
    name_parts: [&[u8]; 3],
    name: impl FnOnce() -> String,
) {
    if gpus <= 0 || slot.as_ref().is_some_and(|(g, _)| *g > gpus) {
        return;
    }
    if slot
        .as_ref()
        .is_none_or(|(g, n)| *g < gpus || cmp_joined(n.as_bytes(), name_parts).is_lt())
    {
        *slot = Some((gpus, name()));
    }
}

/// `a` compared with the concatenation of `parts`, as byte strings (lexicographically, a
/// prefix first), a slice comparison per part instead of one step per byte.
fn cmp_joined(mut a: &[u8], parts: [&[u8]; 3]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    for p in parts {
        let n = a.len().min(p.len());
        match a[..n].cmp(&p[..n]) {
            Ordering::Equal if n < p.len() => return Ordering::Less,
            Ordering::Equal => a = &a[n..],
            unequal => return unequal,
        }
    }
    if a.is_empty() {
        Ordering::Equal
    } else {
        Ordering::Greater
    }
}

impl Tally {
    /// Empty, for `world`'s ClusterQueues and LocalQueues.
    pub fn new(world: &World) -> Self {
        Tally {
            cluster_queues: vec![ClusterQueueTally::default(); world.cluster_queues.len()],
            local_queues: vec![ClusterQueueTally::default(); world.local_queues.len()],
            ..Tally::default()
        }
    }

    /// A copy of its counts and per-queue totals without its durations (`waits`,
    /// `samples`, most of what a lean run's tally holds): the report adds a lean run's
    /// unfinished workloads to such a copy and reads the finished ones' durations where the
    /// run left them, instead of copying them.
    pub fn clone_counts(&self) -> Tally {
        Tally {
            total: self.total,
            not_arrived: self.not_arrived,
            unmanaged: self.unmanaged,
            by_state: self.by_state,
            waits: Durations::new(),
            starts: Durations::new(),
            starts_waiting: self.starts_waiting,
            outside_queues: self.outside_queues,
            cluster_queues: self.cluster_queues.clone(),
            local_queues: self.local_queues.clone(),
            samples: BTreeMap::new(),
            cluster_queue_keys: BTreeSet::new(),
            unmanaged_by_namespace: self.unmanaged_by_namespace.clone(),
            unmanaged_suspended_by_namespace: self.unmanaged_suspended_by_namespace.clone(),
            missing_queues: self.missing_queues.clone(),
            preemption_repeats: self.preemption_repeats.clone(),
        }
    }

    /// Counts a workload that never arrived.
    pub fn add_not_arrived(&mut self, n: u64) {
        self.total += n;
        self.not_arrived += n;
    }

    /// Counts an arrived workload as it is at `end`, the time the report describes (a
    /// finished workload's figures do not depend on it).
    pub fn add(&mut self, world: &World, wl: &Workload, rec: &WorkloadRecord, end: SimTime) {
        self.total += 1;
        if wl.queue == QueueRef::Unmanaged {
            self.unmanaged += 1;
        }
        self.by_state[state_slot(rec.state)] += 1;
        // The cluster's own pods (a DaemonSet's, those of kube-system and Kueue's
        // namespace) run outside Kueue by design: they bypass nothing.
        // Without Kueue (`spec.kueue.enabled: false`) every workload goes to its scheduler
        // by the scenario's choice: nothing bypasses a Kueue that is not there.
        let cluster_own = Self::is_cluster_own(world, wl);
        let system = !world.config.kueue_enabled || cluster_own;
        match &wl.queue {
            QueueRef::Unmanaged if system => {}
            QueueRef::Unmanaged => {
                *self
                    .unmanaged_by_namespace
                    .entry(wl.namespace.clone())
                    .or_default() += 1;
                if wl.suspended {
                    *self
                        .unmanaged_suspended_by_namespace
                        .entry(wl.namespace.clone())
                        .or_default() += 1;
                }
            }
            QueueRef::Missing(q) => {
                *self
                    .missing_queues
                    .entry((wl.namespace.clone(), q.clone()))
                    .or_default() += 1;
            }
            QueueRef::Local(_) => {}
        }
        self.add_repeated_preemptions(wl, rec);
        let gpu = world.resources.lookup(kueuesim_model::resources::GPU);
        if let (Some(at), true) = (rec.admitted_at, rec.admission.is_some()) {
            self.waits.push(at - wl.created_at);
        }
        let cq = match (&rec.admission, &wl.queue) {
            (Some(a), _) => Some(a.cluster_queue),
            (None, QueueRef::Local(lq)) => Some(world.local_queue(*lq).cluster_queue),
            _ => None,
        };
        let lq = match wl.queue {
            QueueRef::Local(lq) => Some(lq),
            _ => None,
        };
        if !cluster_own {
            self.add_start(wl, rec, end);
            if cq.is_none() {
                self.outside_queues += 1;
            }
        }
        if let Some(cq) = cq {
            self.cluster_queues[cq.index()].add(wl, rec, gpu);
            // Once per workload, for its ClusterQueue and its LocalQueue together (a
            // LocalQueue names one ClusterQueue: one key each, but for admissions elsewhere).
            let samples = match self.samples.entry((lq, cq)) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    self.cluster_queue_keys.insert((cq, lq));
                    e.insert(QueueSamples::default())
                }
            };
            samples.add(wl, rec, end);
        }
        if let Some(lq) = lq {
            self.local_queues[lq.index()].add(wl, rec, gpu);
        }
    }

    /// The cluster's own workloads (a DaemonSet's pods, those of kube-system and Kueue's
    /// namespace): they run outside Kueue by design and start at once, so the run's time to
    /// start leaves them out.
    pub fn is_cluster_own(world: &World, wl: &Workload) -> bool {
        world.is_system_namespace(&wl.namespace)
            || wl
                .owner
                .as_ref()
                .is_some_and(|(kind, _)| kind == "DaemonSet")
    }

    /// Adds `wl`'s time to start (`starts`): creation to its pods first all running, or,
    /// still waiting at `end`, its wait so far. A workload the input binds at the start
    /// runs from it whatever creation time it gives (a later one only orders it, its age):
    /// it waited 0, not a negative time.
    fn add_start(&mut self, wl: &Workload, rec: &WorkloadRecord, end: SimTime) {
        match rec.first_running_at {
            Some(at) => self
                .starts
                .push((at - wl.created_at).max(kueuesim_model::SimDuration::ZERO)),
            // Deactivated (Inactive) is out of the queue as Kueue's waits count it.
            None if !matches!(rec.state, WorkloadState::Finished | WorkloadState::Inactive) => {
                self.starts.push(end - wl.created_at);
                self.starts_waiting += 1;
            }
            None => {}
        }
    }

    /// Counts, per preemptor, the preemptions of victim `wl` when it preempted it more
    /// than once (`preemption_repeats`).
    fn add_repeated_preemptions(&mut self, wl: &Workload, rec: &WorkloadRecord) {
        if rec.evictions.len() < 2 {
            return;
        }
        // Per preemptor of this victim: times, first, last (evictions are oldest first).
        let mut by: BTreeMap<&str, (u64, SimTime, SimTime)> = BTreeMap::new();
        for e in &rec.evictions {
            if let Some(p) = &e.preemptor {
                let entry = by.entry(p.as_str()).or_insert((0, e.at, e.at));
                entry.0 += 1;
                entry.2 = e.at;
            }
        }
        let victim = format!("{}/{}", wl.namespace, wl.name);
        for (preemptor, (times, first, last)) in by {
            if times >= 2 {
                self.preemption_repeats
                    .entry(preemptor.to_string())
                    .or_default()
                    .add(&victim, times, first, last);
            }
        }
    }

    /// The durations of ClusterQueue `cq`'s figures.
    pub fn cluster_queue_samples(
        &self,
        cq: ClusterQueueId,
    ) -> impl Iterator<Item = &QueueSamples> + Clone {
        // In `samples`' order among them: by LocalQueue, none first.
        self.cluster_queue_keys
            .range((cq, None)..)
            .take_while(move |(c, _)| *c == cq)
            .map(move |&(c, lq)| &self.samples[&(lq, c)])
    }

    /// Every queue's durations (the run-wide figures'), by (LocalQueue, ClusterQueue).
    pub fn all_samples(&self) -> impl Iterator<Item = &QueueSamples> + Clone {
        self.samples.values()
    }

    /// The durations of LocalQueue `lq`'s figures.
    pub fn local_queue_samples(
        &self,
        lq: LocalQueueId,
    ) -> impl Iterator<Item = &QueueSamples> + Clone {
        self.samples
            .range((Some(lq), ClusterQueueId::from_index(0))..)
            .take_while(move |((l, _), _)| *l == Some(lq))
            .map(|(_, s)| s)
    }

    /// The bytes the tally's lists of durations have reserved: what a lean run's tally holds
    /// per workload (for tests of what a run retains).
    pub fn reserved_bytes(&self) -> usize {
        self.waits.reserved_bytes()
            + self.starts.reserved_bytes()
            + self
                .samples
                .values()
                .map(QueueSamples::reserved_bytes)
                .sum::<usize>()
    }

    /// How many arrived workloads are in `state`.
    pub fn count(&self, state: WorkloadState) -> u64 {
        self.by_state[state_slot(state)]
    }
}

/// Where `state` is counted in `Tally::by_state` (its place in `WorkloadState::ALL`).
fn state_slot(state: WorkloadState) -> usize {
    WorkloadState::ALL
        .iter()
        .position(|s| *s == state)
        .expect("every state is listed")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fold of repeated preemptions reads the same in any order of victims: the most
    /// preempted victim by count, then least name; the first and last preemption of all.
    #[test]
    fn repeated_preemptions_fold_in_any_order() {
        let victims = [
            ("ns/b", 3, 20, 40),
            ("ns/a", 3, 25, 45),
            ("ns/c", 2, 10, 30),
        ];
        let fold = |order: &[usize]| {
            let mut r = RepeatedPreemptions::default();
            for &i in order {
                let (name, times, first, last) = victims[i];
                r.add(
                    name,
                    times,
                    SimTime::from_secs(first),
                    SimTime::from_secs(last),
                );
            }
            r
        };
        let want = RepeatedPreemptions {
            victims: 3,
            preemptions: 8,
            most: (3, "ns/a".to_string()),
            first: SimTime::from_secs(10),
            last: SimTime::from_secs(45),
        };
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
            assert_eq!(fold(&order), want, "{order:?}");
        }
    }

    proptest::proptest! {
        /// `cmp_joined` orders as comparing with the joined string itself.
        #[test]
        fn cmp_joined_is_the_joined_comparison(
            a in "[a-c/]{0,6}",
            p0 in "[a-c/]{0,3}",
            p1 in "[a-c/]{0,2}",
            p2 in "[a-c/]{0,3}",
        ) {
            let joined = format!("{p0}{p1}{p2}");
            proptest::prop_assert_eq!(
                cmp_joined(a.as_bytes(), [p0.as_bytes(), p1.as_bytes(), p2.as_bytes()]),
                a.as_bytes().cmp(joined.as_bytes())
            );
        }
    }
}
