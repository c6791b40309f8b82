//! What a simulation reports: per-workload records (state, times, admission, placement,
//! conditions, events) and run-wide counters, as plain data for the writers.

use kueuesim_model::{
    ClusterQueueId, FlavorId, NodeId, QueueRef, ResourceId, SimDuration, SimTime, Workload,
    WorkloadId, World,
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
    /// Message.
    pub message: String,
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
    /// Per pod set, when each placed pod was bound (same shape as `placement`): the kubectl
    /// pod views tell a pod still starting (`ContainerCreating`) from a running one by it.
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
}

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
    /// GPU-milliseconds of work lost to evictions, all workloads.
    pub lost_gpu_ms: i128,
    /// Evictions by the Evicted condition's reason.
    pub evictions: std::collections::BTreeMap<&'static str, u64>,
    /// Preemptions by the Preempted condition's reason.
    pub preemptions: std::collections::BTreeMap<&'static str, u64>,
    /// Per ClusterQueue, GPU-seconds its admitted workloads held in each hour of the run.
    pub cq_gpu_seconds_by_hour: Vec<Vec<f64>>,
    /// Every quota reservation made by a scheduling cycle: the workload and how long it had
    /// waited since it was created or last requeued (Kueue's `quota_reserved_wait_time`).
    /// Empty for a lean run.
    pub quota_reserved_waits: Vec<(WorkloadId, SimDuration)>,
    /// Per ClusterQueue at the end, the quota its workloads hold for every flavor and resource
    /// of its resource groups, in their order (Kueue's `resourceNode.Usage`).
    pub final_quota_usage: Vec<Vec<(FlavorId, ResourceId, i64)>>,
}

/// The state sampled at one instant of a time series: after every event at or before `at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The instant sampled.
    pub at: SimTime,
    /// GPUs bound to pods.
    pub gpus_in_use: i64,
    /// Per ClusterQueue, GPU quota held by its workloads (all flavors).
    pub gpu_quota_by_cq: Vec<i64>,
    /// Per ResourceFlavor, GPU quota held in it (all ClusterQueues).
    pub gpu_quota_by_flavor: Vec<i64>,
    /// Per ClusterQueue, pending workloads in its heap (`kueue_pending_workloads`, `active`).
    pub pending_active: Vec<u32>,
    /// Per ClusterQueue, pending workloads parked as inadmissible.
    pub pending_inadmissible: Vec<u32>,
    /// Per LocalQueue, pending workloads (active and inadmissible;
    /// `kueue_local_queue_pending_workloads`).
    pub pending_by_lq: Vec<u32>,
    /// Per spine (`spine_domains`), workloads with pods bound all under it; the last entry
    /// counts those spread over several spines.
    pub gangs_by_spine: Vec<u32>,
}

/// The domains the time series counts running gangs in: the highest real tier of the
/// Volcano HyperNodes (the spines on the platform), else the top level of the first
/// Kueue/KAI Topology. (topology index as in `placement::topologies`, domains).
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
/// counts by state, every admitted workload's wait, and per ClusterQueue admissions,
/// evictions and GPU time. Integer sums, so the order of folding never shows.
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
    pub waits: Vec<SimDuration>,
    /// Per ClusterQueue (its admission's, else its LocalQueue's).
    pub cluster_queues: Vec<ClusterQueueTally>,
}

/// One ClusterQueue's part of a `Tally`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterQueueTally {
    /// Workloads it admitted at least once.
    pub admitted_workloads: u64,
    /// Evictions of its workloads.
    pub evictions: u64,
    /// GPU-milliseconds its workloads held.
    pub gpu_ms: i128,
}

impl Tally {
    /// Empty, for `world`'s ClusterQueues.
    pub fn new(world: &World) -> Self {
        Tally {
            cluster_queues: vec![ClusterQueueTally::default(); world.cluster_queues.len()],
            ..Tally::default()
        }
    }

    /// Counts a workload that never arrived.
    pub fn add_not_arrived(&mut self, n: u64) {
        self.total += n;
        self.not_arrived += n;
    }

    /// Counts an arrived workload.
    pub fn add(&mut self, world: &World, wl: &Workload, rec: &WorkloadRecord) {
        self.total += 1;
        if wl.queue == QueueRef::Unmanaged {
            self.unmanaged += 1;
        }
        self.by_state[state_slot(rec.state)] += 1;
        if let (Some(at), true) = (rec.admitted_at, rec.admission.is_some()) {
            self.waits.push(at - wl.created_at);
        }
        let cq = match (&rec.admission, &wl.queue) {
            (Some(a), _) => Some(a.cluster_queue),
            (None, QueueRef::Local(lq)) => Some(world.local_queue(*lq).cluster_queue),
            _ => None,
        };
        if let Some(cq) = cq {
            let t = &mut self.cluster_queues[cq.index()];
            if rec.admitted_at.is_some() {
                t.admitted_workloads += 1;
            }
            t.evictions += rec.evictions.len() as u64;
            t.gpu_ms += rec.gpu_ms;
        }
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
