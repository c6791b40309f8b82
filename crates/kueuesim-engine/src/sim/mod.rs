//! The discrete-event loop: arrivals, Kueue scheduling cycles, preemption and eviction, pod
//! placement, start-up and completion, applied to the runtime state of every workload.
//!
//! Policies (the admission cycle, preemption, placement) return decisions as data; this
//! module applies them, keeps quota and node capacity in step, and records conditions and
//! events as Kueue and the schedulers write them.
//!
//! This file holds the `Simulation` type and its state and the run loop with the event
//! dispatch; each handler lives with its concern:
//! - `runtime`: a workload's runtime state, spec and scheduling-shape class;
//! - `arrival`: arrivals (from the world or a stream), UID labels, queue positions;
//! - `cycle`: the Kueue scheduling cycle, applying its decisions; `latency`: controller latency;
//! - `eviction`: eviction, releasing quota and nodes, requeueing;
//! - `pods_ready`: `waitForPodsReady`;
//! - `afs`: Admission Fair Sharing;
//! - `scheduling`: handing workloads to their gang scheduler and placing their pods (TAS);
//! - `kai`: KAI's PodGroups, topology constraints and reclaim;
//! - `pods`: pods running, finishing, and GPU accounting;
//! - `nodes`: nodes cordoned, drained, removed, failed (the Timeline's node operations);
//! - `epoch`: a Timeline change's `set` and `patch` (ClusterQueues and Cohorts updated);
//! - `failures`: seeded random node and GPU failures;
//! - `pod_loss`: pods that end early, the jobs' and Kueue's reactions, work kept and lost;
//! - `tas_replace`: Kueue TAS's replacement of a failed node in a topology assignment;
//! - `start`: the input's running pods booked on their nodes (a snapshot's state);
//! - `record`: conditions and events; `series`: the time series; `invariants`: the checks;
//! - `builders`: the run's options (`with_*`, `lean`); `queries`: the public queries.

mod afs;
mod arrival;
mod autoscale;
mod bound;
mod builders;
mod cycle;
mod epoch;
mod eviction;
mod failures;
mod invariants;
mod kai;
mod kai_actions;
mod kai_consolidation;
mod kai_evict;
mod kai_session;
mod kai_stale;
mod latency;
mod nodes;
mod outbox;
mod pod_loss;
mod pods;
mod pods_ready;
mod provisioning;
mod queries;
mod record;
mod retry;
mod runtime;
mod scheduling;
mod series;
mod serving;
mod start;
mod tas_replace;
mod volcano;
mod volcano_evict;
mod volcano_order;

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::rc::Rc;

use kueuesim_model::quota::{NodeIdx, QuotaTree};
use kueuesim_model::resources::GPU;
use kueuesim_model::{
    ClusterQueueId, QueueRef, ResourceId, SimDuration, SimTime, StopPolicy, Workload, WorkloadId,
    World,
};

use crate::admitted::AdmittedIndex;
use crate::event_queue::EventQueue;
use crate::hooks::Hooks;
use crate::outcome::{
    HourlySeries, LeanOutcome, Outcome, RunStats, Stopped, Tally, TimeSeries, WorkloadRecord,
    WorkloadState,
};
use crate::placement::Cluster;
use crate::queues::{QueueManager, QueueStatus};
use crate::uid_order::UidLabels;
use crate::window::Window;

use self::afs::AfsState;
use self::arrival::Feed;
pub use self::arrival::WorkloadFeed;
use self::cycle::SuspendedCycle;
use self::outbox::Outbox;
pub use self::outbox::RunSink;
use self::runtime::{Runtime, ShapeClasses, Spec};

/// What happens at a point in simulated time.
#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A workload is created (or becomes visible at the start).
    Arrive(WorkloadId),
    /// A Kueue scheduling cycle.
    Cycle,
    /// All pods of a workload are running (after start-up); stale if the generation moved on.
    PodsRunning(WorkloadId, u32),
    /// A workload completes; stale if the generation moved on.
    Finish(WorkloadId, u32),
    /// The pods of an evicted workload are gone: its quota and nodes are released.
    PodsGone(WorkloadId, u32),
    /// The pods KAI's reclaim evicted from a workload Kueue does not manage are gone: its
    /// nodes are released and its controller's new pods wait for KAI.
    KaiPodsGone(WorkloadId, u32),
    /// The pods KAI's reclaim or preempt evicted for this job are gone, when a victim was an
    /// elastic job that keeps some pods (`Runtime::kai_victims`): the job is placed first,
    /// then the victims' lost pods are replaced.
    KaiVictimPodsGone(WorkloadId),
    /// The pods KAI's consolidation moved for a job (this one) are gone: their replacements
    /// bind to the planned nodes and the job is placed.
    KaiConsolidated(WorkloadId),
    /// A min-runtime that kept a victim from a pending KAI job ends: the job tries again
    /// (upstream tries every session); outdated unless `Runtime::kai_retry_at` is now.
    KaiProtectionEnds(WorkloadId),
    /// KAI's `staleGangEviction` action looks at a gang stale since a grace period ago;
    /// outdated unless its stale period (`Runtime::kai_stale_epoch`) is still that one.
    KaiStaleGang(WorkloadId, u32),
    /// Pods of a workload that Volcano's `preempt` or `reclaim` evicted are gone
    /// (`Runtime::volcano_releasing` says which and when).
    VolcanoPodsGone(WorkloadId),
    /// Inadmissible workloads of a ClusterQueue or a whole cohort tree (by its root node)
    /// return to their heaps (`QueueInadmissibleWorkloads`, batched).
    RequeueInadmissible(NodeIdx),
    /// An admitted workload reaches its maximum execution time; stale if the generation
    /// moved on (`reconcileMaxExecutionTime`).
    MaxExecutionTime(WorkloadId, u32),
    /// An admitted workload's PodsReady timeout (`waitForPodsReady.timeout`); stale if the
    /// generation moved on.
    PodsReadyTimeout(WorkloadId, u32),
    /// A requeued workload's back-off ends (`requeueState.requeueAt`).
    BackoffExpired(WorkloadId, u32),
    /// Admission Fair Sharing: the LocalQueue controller samples usage
    /// (`usageSamplingInterval`).
    AfsSample,
    /// Timeline change `i` (`World::timeline`) applies.
    Change(u32),
    /// The earliest node or GPU failure or repair is due (`failures::FailureClock`).
    Failure,
    /// Serving object `World::serving[o]` scales down to its step `s` (`serving`).
    Scale(u32, u32),
    /// The cluster-autoscaler answers a workload's ProvisioningRequest; stale if the
    /// generation moved on (`autoscale`).
    Provision(WorkloadId, u32),
    /// A node a scale-up asked for joins (`autoscale`).
    NodeJoin(kueuesim_model::NodeId),
    /// The cluster-autoscaler looks for unneeded nodes (`autoscale`).
    AutoscaleScan,
    /// Volcano's session of this instant: the jobs released to it are tried in its
    /// allocate order among queues (`volcano_order`).
    VolcanoSession,
    /// KAI's session of this instant: allocate, consolidation, reclaim and preempt, each
    /// over the jobs due in `JobsOrderByQueues` order (`kai_session`).
    KaiSession,
}

/// A simulation of one world. Cloning it forks the run (benchmarks measure one step from
/// a prepared state this way).
///
/// Its state is in parts, so a handler's signature shows what it touches: Kueue's side
/// (`kueue`), the gang schedulers' side (`sched`), the run's own progress (`progress`) and
/// what the run records (`rec`); the workloads' runtime state and the event queue are
/// shared by all.
#[derive(Clone)]
pub struct Simulation<'w> {
    /// The world as it is now: the input's, or the epoch of the last Timeline change that
    /// set or patched objects (`World::epochs`: same ids, other ClusterQueue and Cohort specs).
    world: &'w World,
    /// The input's world: its workloads, its Timeline and its epochs.
    origin: &'w World,
    /// The GPU resource, if the world has one (GPU time and KAI's fair shares count it).
    gpu: Option<ResourceId>,
    now: SimTime,
    events: EventQueue<Ev>,
    /// The runtime state of every arrived workload; a lean run lets go of a workload once
    /// it finishes (folding it into `rec.tally`), so memory follows the live workloads.
    runtimes: Window<Box<Runtime<'w>>>,
    /// The workloads still to arrive.
    feed: Feed<'w>,
    kueue: Kueue<'w>,
    sched: Schedulers,
    progress: Progress,
    rec: Recorder,
    /// What the run hands to its `RunSink` after every step (`run_with_sink`), if it has one.
    outbox: Option<Outbox<'w>>,
    /// The most events the run may process (`with_event_budget`).
    event_budget: Option<u64>,
    /// The caller's policies (`with_hooks`); None: the built-in ones, asked nothing. Shared,
    /// not owned, so a forked simulation keeps them.
    hooks: Option<Rc<RefCell<dyn Hooks + 'w>>>,
    /// The serving objects' replicas and figures; None without serving objects that scale.
    serving: Option<Box<serving::ServingState>>,
    /// The cluster-autoscaler's state; None without autoscaled pools or provisioning checks.
    autoscale: Option<Box<autoscale::AutoscaleState>>,
    /// Keys of retried placement attempts that succeeded (`retry_one`), kept for their
    /// vectors: the next attempt's key is written over one. A kept key may hold its
    /// workload's `Rc` after the workload finished, until the key is reused: memory only,
    /// bounded by the most failed keys of one pass (nothing reads `Rc` counts).
    spare_keys: Vec<retry::Key<'w>>,
    /// The vector a `retry_placements` pass collects its failed keys in, empty between
    /// passes (kept for its capacity).
    failed_keys: Vec<retry::Key<'w>>,
    /// Record vectors of workloads a lean run let go of, for later arrivals.
    spare_vecs: runtime::SpareVecs,
}

/// Kueue's side: its queues, the quota tree and the cache of admitted workloads, and the
/// state of its scheduler's cycles and of the controllers around it.
#[derive(Clone)]
struct Kueue<'w> {
    queues: QueueManager,
    tree: QuotaTree,
    admitted: AdmittedIndex,
    /// Whether each ClusterQueue can admit (not stopped, not in a cohort cycle).
    cq_stopped: Vec<bool>,
    /// The labels ordering the live workloads' UIDs.
    uid_labels: UidLabels,
    /// Respace the UID labels on every arrival (`with_uid_respacing`, for tests).
    respace_uids_always: bool,
    /// The scheduling-shape classes seen so far.
    shape_classes: ShapeClasses<'w>,
    /// Whether a batched inadmissible requeue is pending, per tree node.
    requeue_pending: Vec<bool>,
    cycle_scheduled: bool,
    /// Controller latency: the scheduler is busy with the last cycle until then.
    next_cycle_at: SimTime,
    /// Controller latency: the client's token bucket in its GCRA form, the theoretical
    /// arrival time of the next write: once every write queued so far has had its token.
    api_tat: SimTime,
    /// Workloads holding quota without `PodsReady=True`.
    not_ready: usize,
    /// The cycle waiting in `waitForPodsReadyIfNeeded`, if any.
    suspended: Option<SuspendedCycle>,
    /// Inadmissible requeues broadcast while a cycle waited: its entries requeued afterwards
    /// must see them too (`queueInadmissibleCycle >= popCycle` puts them back in the heap).
    requeued_while_suspended: Vec<NodeIdx>,
    /// The ClusterQueues one requeue of inadmissible workloads visits (a buffer kept from
    /// one requeue to the next).
    requeue_cqs: Vec<ClusterQueueId>,
    afs: Option<AfsState>,
    /// Per ClusterQueue, its allocatable generation in the scheduler's cache
    /// (`AllocatableResourceGeneration`): moved on whenever one of its admitted workloads is
    /// updated or removed; flavor-scan progress recorded at an older one may be outdated.
    cq_generation: Vec<u64>,
    /// The pending workloads' flavor-scan progress, and the states it had since anything
    /// else last changed: cycles that only move it on stop when it comes back to one.
    scan_loop: cycle::ScanLoop,
    /// The flavor assigner's vectors, kept from cycle to cycle for their capacity.
    cycle_scratch: crate::admission::CycleScratch,
    /// The cycle's heads and its deferred requeues: empty between cycles, kept for their
    /// capacity.
    heads: Vec<crate::admission::Head>,
    deferred: Vec<cycle::DeferredRequeue>,
    /// Per (tree node, `Fr`), how far the usage was over its limit when a Timeline change
    /// lowered quota (Kueue evicts nobody for it): what the invariants allow beyond the limit.
    /// Empty until such a change.
    over_quota: Vec<i64>,
    /// Kueue TAS: the workloads with an unhealthy node waiting for the scheduler's second
    /// pass (`tas_replace`).
    tas_replacements: BTreeSet<WorkloadId>,
}

impl Kueue<'_> {
    /// How far `n`'s usage of `fr` may be over its limit (`over_quota`).
    fn over_quota_allowed(&self, n: NodeIdx, fr: kueuesim_model::quota::Fr) -> i64 {
        self.over_quota
            .get(n.0 as usize * self.tree.fr_count() + fr.index())
            .copied()
            .unwrap_or(0)
    }
}

/// The gang schedulers' side (kube-scheduler, Volcano, KAI): the nodes they bind pods to,
/// the workloads waiting for nodes, and Kueue TAS's view of the empty cluster.
#[derive(Clone)]
struct Schedulers {
    cluster: Cluster,
    /// Workloads released to a scheduler with pods still unplaced, in kube-scheduler's
    /// activeQ order: higher priority first, then earlier release.
    awaiting_placement: BTreeSet<(Reverse<i32>, SimTime, WorkloadId)>,
    /// Placement attempts so far: seeds each attempt's random tie-breaks.
    placement_attempts: u64,
    /// The pods of the last placement attempt (`try_place`), kept for their vectors: the
    /// next attempt writes its own over them.
    pods_scratch: Vec<(
        crate::placement::PodNeeds,
        Vec<Option<kueuesim_model::NodeId>>,
    )>,
    /// The workloads the last `retry_placements` pass went through, kept for the vector.
    waiting_scratch: Vec<WorkloadId>,
    /// While the workloads holding capacity from the start arrive: their pods still to
    /// place wait until all of them are booked (`arrive`).
    defer_placement: bool,
    /// The instant of the pending `Ev::VolcanoSession`, if one is queued.
    volcano_session_at: Option<SimTime>,
    /// The instant of the pending `Ev::KaiSession`, if one is queued.
    kai_session_at: Option<SimTime>,
    /// The jobs the pending `Ev::KaiSession` tries (`kai_session_for`).
    kai_due: BTreeSet<WorkloadId>,
    /// While KAI's session allocates, `Passes::One`: a KAI job's placement makes its next
    /// pass only, and the session pushes the job back into its order (`kai_session`);
    /// `Passes::All` otherwise.
    kai_passes: crate::placement::kai::Passes,
    /// While KAI's session allocates a job it pushed back: the job's next pass is not a new
    /// placement attempt (the attempts seeding tie-breaks do not count it).
    kai_pushed_back: bool,
    /// While a Volcano session allocates: a job allocate leaves short waits for the
    /// session's preempt and reclaim, which run after allocate over all its jobs.
    volcano_in_session: bool,
    /// The device of each KAI GPU group (node, `runai-gpu-group`, device) of the input's
    /// running shares, as they are booked (`book_bound_pods`).
    start_gpu_groups: Vec<(kueuesim_model::NodeId, String, usize)>,
    /// Kueue's TAS view of the empty cluster (with the per-flavor snapshot masks), when a
    /// TAS flavor and nodes exist: each cycle's view starts from its shared parts.
    tas_base: Option<crate::tas::TasCapacity>,
    /// The TAS view without nodes (no TAS flavor, or no nodes), made once and lent to each
    /// cycle: with no nodes, nothing a cycle books on it changes it.
    tas_none: crate::tas::TasCapacity,
    /// With GPUs as devices, while the pods of a failed GPU device are lost: the node and
    /// device, so each gives back its claim on that device.
    failed_device: Option<(kueuesim_model::NodeId, u32)>,
    /// While KAI's consolidation simulates a scenario: the GPUs each job of it holds there
    /// (workload index, milli-GPUs), which KAI's queue-limit check reads instead of the job's
    /// real placement (upstream's scenario deallocates the victims from their queues and
    /// allocates what it pipelines). Empty otherwise.
    kai_scenario_gpus: Vec<(usize, i64)>,
    /// Likewise the CPU (millicores) and memory (bytes) a victim of KAI's reclaim or preempt
    /// still holds in a scenario (workload index, amounts). Empty otherwise.
    kai_scenario_cpu_memory: Vec<(usize, [i64; 2])>,
    /// The TAS flavors the cycle's snapshot builds (`controllerLatency.perTasFlavor`): the
    /// ResourceFlavors with a `topologyName` when there is a TAS cluster, else none.
    tas_flavors: usize,
    /// Nodes cordoned, removed, failed, and failed GPUs; None when nothing changes nodes
    /// (no Timeline node operation, no failures).
    nodes: Option<nodes::NodeStates>,
    /// The next failures and repairs (`spec.failures`); None without failures.
    failures: Option<failures::FailureClock>,
    /// A Timeline change or the failures due at one instant are being applied: a job that
    /// fails and gives its nodes back does not have the waiting workloads placed yet (they
    /// could land on a node the same change is about to take), `after_node_change` does.
    nodes_changing: bool,
}

/// Whether the run is getting anywhere: what has arrived, runs or terminates, and when
/// something last changed.
#[derive(Clone)]
struct Progress {
    /// The time of the last event that changed anything (stale and idle ones do not count),
    /// which is where a run without a horizon ends.
    last_effective: SimTime,
    /// Set by a handler that found nothing to do.
    idle: bool,
    /// Arrivals processed: the ids below it have arrived.
    arrived: usize,
    /// Workloads whose pods all run.
    running: usize,
    /// Workloads evicted whose pods are still terminating.
    terminating: usize,
    /// The last arrival, start or completion: with none for long, and nothing running or
    /// still to arrive, only PodsReady timeouts and back-offs of workloads that can never be
    /// placed are left, a loop that would go on forever.
    last_progress: SimTime,
    /// Events processed at the current instant (`now`): past `livelock_bound` time has
    /// stopped advancing while decisions repeat.
    events_this_instant: u64,
    /// With failures: the last arrival, finish or failed job (`failures_without_end`).
    last_done: SimTime,
    /// With failures: the longest duration plus restart cost of the workloads arrived.
    longest: SimDuration,
}

/// What the run records beside the workloads' own records: its statistics and GPU time, the
/// lean run's tally, the time series and the audit.
#[derive(Clone)]
struct Recorder {
    stats: RunStats,
    /// Keep only what a summary needs (`Simulation::lean`): the finished workloads, folded.
    tally: Option<Tally>,
    /// The time series being sampled, if asked for.
    series: Option<TimeSeries>,
    /// For the series' per-spine columns: the spines and the spine each node is under,
    /// worked out once per run (the topology does not change).
    spines: Option<series::Spines>,
    /// Record violations of invariants only observable at the moment of a decision.
    audit: Option<Vec<String>>,
    /// Keep only each workload's newest event per source (`Simulation::last_events_only`).
    last_events_only: bool,
    /// The pending workload-milliseconds per queue and what held them back
    /// (`pendingBoundBy`), into `stats.pending_bound` at the end.
    bound: bound::BoundTally,
    gpus_in_use: i64,
    last_accounted: SimTime,
    /// The time of the latest time-series sample taken (the sampler goes on from it).
    last_sample: Option<SimTime>,
}

impl<'w> Simulation<'w> {
    /// Prepares the simulation of `world`; nothing has happened yet.
    pub fn new(world: &'w World) -> Self {
        // Each workload's scheduler is looked up once on arrival from the start's config
        // (`Runtime::scheduler`): an epoch with other schedulers would be a World built in
        // code against `World::epochs`' rule (the loader copies the config), not an input.
        assert!(
            world
                .epochs
                .iter()
                .all(|e| e.config.schedulers == world.config.schedulers),
            "an epoch's schedulers differ from the start's (World::epochs)"
        );
        // The arrivals are known up front: they wait beside the heap, first at equal times.
        let mut events = EventQueue::presorted(
            world
                .workloads
                .iter()
                .enumerate()
                .map(|(i, w)| (w.arrival, Ev::Arrive(WorkloadId::from_index(i))))
                .collect(),
        );
        let tree = QuotaTree::new(world);
        // A stopped ClusterQueue is inactive in the queue manager: its heads are never popped.
        // One in a cohort cycle is inactive only in the cache: its heads are popped and
        // nominated as inadmissible.
        let cq_stopped = world
            .cluster_queues
            .iter()
            .map(|cq| cq.stop_policy != StopPolicy::None)
            .collect();
        let gpu = world.resources.lookup(GPU);
        let gpu_capacity = match gpu {
            None => 0,
            Some(g) if world.has_nodes() => world
                .nodes
                .iter()
                .map(|n| n.allocatable.get(g.index()).copied().unwrap_or(0))
                .sum(),
            Some(g) => world
                .cluster_queues
                .iter()
                .flat_map(|cq| &cq.resource_groups)
                .chain(world.cohorts.iter().flat_map(|c| &c.resource_groups))
                .flat_map(|rg| &rg.flavors)
                .flat_map(|f| &f.resources)
                .filter(|q| q.resource == g)
                .map(|q| q.nominal)
                .sum(),
        };
        let n_nodes = world.cluster_queues.len() + world.cohorts.len();
        let afs = AfsState::new(world, &mut events);
        let tas_flavors = if world.has_nodes() {
            world
                .flavors
                .iter()
                .filter(|f| f.topology_name.is_some())
                .count()
        } else {
            0
        };
        let mut sim = Simulation {
            world,
            origin: world,
            gpu,
            now: SimTime::ZERO,
            events,
            runtimes: Window::default(),
            feed: Feed::World,
            kueue: Kueue {
                queues: QueueManager::new(world.cluster_queues.len()).with_equivalence_hashing(
                    world.config.kueue_gates.scheduling_equivalence_hashing,
                ),
                tree,
                admitted: AdmittedIndex::new(world.cluster_queues.len()),
                cq_stopped,
                uid_labels: UidLabels::default(),
                respace_uids_always: false,
                shape_classes: ShapeClasses::default(),
                requeue_pending: vec![false; n_nodes],
                cycle_scheduled: false,
                next_cycle_at: SimTime::ZERO,
                api_tat: SimTime::ZERO,
                not_ready: 0,
                suspended: None,
                requeued_while_suspended: Vec::new(),
                requeue_cqs: Vec::new(),
                afs,
                cq_generation: vec![0; world.cluster_queues.len()],
                cycle_scratch: crate::admission::CycleScratch::default(),
                heads: Vec::new(),
                deferred: Vec::new(),
                over_quota: Vec::new(),
                tas_replacements: BTreeSet::new(),
                scan_loop: cycle::ScanLoop::default(),
            },
            sched: Schedulers {
                cluster: Cluster::new(world),
                awaiting_placement: BTreeSet::new(),
                placement_attempts: 0,
                pods_scratch: Vec::new(),
                waiting_scratch: Vec::new(),
                defer_placement: false,
                volcano_session_at: None,
                kai_session_at: None,
                kai_due: BTreeSet::new(),
                kai_passes: crate::placement::kai::Passes::All,
                kai_pushed_back: false,
                volcano_in_session: false,
                start_gpu_groups: Vec::new(),
                tas_base: (tas_flavors > 0).then(|| crate::tas::TasCapacity::new(world)),
                tas_none: crate::tas::TasCapacity::none(),
                failed_device: None,
                kai_scenario_gpus: Vec::new(),
                kai_scenario_cpu_memory: Vec::new(),
                tas_flavors,
                nodes: (world.has_nodes()
                    && (!world.timeline.is_empty()
                        || !world.config.failures.is_empty()
                        || world.autoscaling.is_some()))
                .then(|| nodes::NodeStates::new(world)),
                failures: (world.has_nodes() && !world.config.failures.is_empty())
                    .then(|| failures::FailureClock::new(world)),
                nodes_changing: false,
            },
            progress: Progress {
                last_effective: SimTime::ZERO,
                idle: false,
                arrived: 0,
                running: 0,
                terminating: 0,
                last_progress: SimTime::ZERO,
                events_this_instant: 0,
                last_done: SimTime::ZERO,
                longest: SimDuration::ZERO,
            },
            rec: Recorder {
                stats: RunStats {
                    gpu_capacity,
                    cq_gpu_seconds_by_hour: vec![
                        HourlySeries::default();
                        world.cluster_queues.len()
                    ],
                    quota_reserved_waits: Vec::new(),
                    ..RunStats::default()
                },
                tally: None,
                series: None,
                spines: None,
                audit: None,
                last_events_only: false,
                bound: bound::BoundTally::new(world),
                gpus_in_use: 0,
                last_accounted: SimTime::ZERO,
                last_sample: None,
            },
            outbox: None,
            event_budget: None,
            hooks: None,
            serving: None,
            autoscale: autoscale::AutoscaleState::new(world).map(Box::new),
            spare_keys: Vec::new(),
            failed_keys: Vec::new(),
            spare_vecs: runtime::SpareVecs::default(),
        };
        sim.serving = serving::ServingState::new(world, &mut sim.events).map(Box::new);
        // The cluster's changes: the Timeline's at their times, the first failure.
        for (i, c) in world.timeline.iter().enumerate() {
            sim.events.push(c.at, Ev::Change(i as u32));
        }
        sim.queue_failure_event(true);
        // The nodes a later change adds are not there yet.
        if let Some(states) = sim.sched.nodes.as_mut() {
            for &n in &world.late_nodes {
                states.removed[n.index()] = true;
                states.sync(world, &mut sim.sched.cluster, n);
            }
        }
        sim.autoscale_start();
        sim
    }

    /// The spec of arrived workload `w` (a cheap handle, free of any borrow of `self`).
    #[inline]
    fn spec(&self, w: WorkloadId) -> Spec<'w> {
        self.runtimes[w.index()].spec.clone()
    }

    /// Processes the next event if it is at or before `until`; returns false when none is.
    pub fn step(&mut self, until: Option<SimTime>) -> bool {
        // The next event, unless none is due by `until`.
        let Some((at, ev)) = self.events.pop_until(until) else {
            return false;
        };
        self.sample_before(at);
        if at == self.now {
            self.progress.events_this_instant += 1;
        } else {
            self.progress.events_this_instant = 1;
        }
        self.advance_to(at);
        self.rec.stats.events_processed += 1;
        self.progress.idle = false;
        // A workload let go of (finished, lean) has no events left that are current.
        let current = |s: &Self, w: WorkloadId, g: u32| {
            s.runtimes.get(w.index()).is_some_and(|r| r.generation == g)
        };
        if !matches!(ev, Ev::Cycle) {
            // Anything else may change what a cycle sees: the flavor-scan states seen before
            // it say nothing about the cycles after it.
            self.kueue.scan_loop.forget();
        }
        match ev {
            Ev::Arrive(w) => {
                self.progress.arrived += 1;
                self.progress.last_progress = at;
                self.arrive(w)
            }
            Ev::Cycle => self.cycle(),
            Ev::PodsRunning(w, g) if current(self, w, g) => self.pods_running(w),
            Ev::Finish(w, g) if current(self, w, g) => self.finish(w),
            Ev::PodsGone(w, g) if current(self, w, g) => self.pods_gone(w),
            Ev::KaiPodsGone(w, g) if current(self, w, g) => self.kai_pods_gone(w),
            Ev::VolcanoPodsGone(w) => {
                if !self.volcano_pods_gone(w) {
                    self.progress.idle = true;
                }
            }
            Ev::KaiConsolidated(w) => self.kai_consolidated(w),
            Ev::KaiVictimPodsGone(w) => {
                if !self.kai_victim_pods_gone(w) {
                    self.progress.idle = true;
                }
            }
            Ev::VolcanoSession => self.volcano_session(),
            Ev::KaiSession => self.kai_session(),
            Ev::KaiProtectionEnds(w) => {
                if !self.kai_protection_ends(w) {
                    self.progress.idle = true;
                }
            }
            Ev::KaiStaleGang(w, e) => {
                if !self.kai_stale_gang_due(w, e) {
                    self.progress.idle = true;
                }
            }
            Ev::RequeueInadmissible(n) => {
                if self.kueue.suspended.is_some() {
                    self.kueue.requeued_while_suspended.push(n);
                }
                self.requeue_inadmissible(n)
            }
            Ev::MaxExecutionTime(w, g) if current(self, w, g) => {
                self.max_execution_time_exceeded(w)
            }
            Ev::PodsReadyTimeout(w, g) if current(self, w, g) => self.pods_ready_timeout(w),
            Ev::BackoffExpired(w, g) if current(self, w, g) => self.backoff_expired(w),
            Ev::AfsSample => self.afs_sample(),
            Ev::Change(i) => self.apply_change(i as usize),
            Ev::Failure => self.failures_due(),
            Ev::Scale(o, s) => self.scale_down(o as usize, s as usize),
            Ev::Provision(w, g) if current(self, w, g) => self.provision(w),
            Ev::NodeJoin(n) => self.node_join(n),
            Ev::AutoscaleScan => self.autoscale_scan(),
            Ev::PodsRunning(..)
            | Ev::Finish(..)
            | Ev::PodsGone(..)
            | Ev::KaiPodsGone(..)
            | Ev::MaxExecutionTime(..)
            | Ev::PodsReadyTimeout(..)
            | Ev::BackoffExpired(..)
            | Ev::Provision(..) => self.progress.idle = true,
        }
        if self.kueue.not_ready == 0 && self.kueue.suspended.is_some() {
            self.resume_cycle();
        }
        if !self.progress.idle {
            self.progress.last_effective = at;
        }
        true
    }

    /// Runs to the horizon (`until`, or the world's own), or until nothing more can happen,
    /// calling `progress` every 4,096 events with the current time and the events processed;
    /// a `Break` from it stops the run there (`Stopped::ByCaller`), with the outcome at that
    /// time.
    pub fn run_with_progress(
        self,
        progress: impl FnMut(SimTime, u64) -> ControlFlow<()>,
    ) -> Outcome {
        self.run_inner(progress, None)
    }

    /// Runs as `run_with_progress` does, handing `sink` every event as it is recorded, every
    /// quota reservation's wait, every time-series sample and (a lean run) every finished
    /// workload's record, after each step: writers stream them while a lean run's memory
    /// still follows the live workloads.
    pub fn run_with_sink(
        mut self,
        progress: impl FnMut(SimTime, u64) -> ControlFlow<()>,
        sink: &mut dyn RunSink,
    ) -> Outcome {
        self.outbox = Some(Outbox::new(sink.wants_events()));
        self.run_inner(progress, Some(sink))
    }

    fn run_inner(
        mut self,
        mut progress: impl FnMut(SimTime, u64) -> ControlFlow<()>,
        mut sink: Option<&mut dyn RunSink>,
    ) -> Outcome {
        let until = self.world.config.until;
        while self.step(until) {
            if let Some(sink) = sink.as_deref_mut() {
                // With a horizon every sample is before the end; without one, the run ends
                // at its last effective event, so later samples wait until one follows.
                let samples_until = match until {
                    Some(_) => SimTime::MAX,
                    None => self.progress.last_effective,
                };
                self.drain_outbox(sink, samples_until);
            }
            let events = self.rec.stats.events_processed;
            if self.event_budget.is_some_and(|max| events >= max) {
                self.rec.stats.stopped = Some(Stopped::EventBudget(events));
                break;
            }
            if events.is_multiple_of(4_096) && progress(self.now, events).is_break() {
                self.rec.stats.stopped = Some(Stopped::ByCaller);
                break;
            }
            // A hook that failed had its call answered by the built-in policy; the run stops
            // here and the caller reports the hook's error.
            if self.hooks.as_ref().is_some_and(|h| h.borrow().failed()) {
                self.rec.stats.stopped = Some(Stopped::ByCaller);
                break;
            }
            if self.progress.events_this_instant > livelock_bound(self.progress.arrived) {
                self.rec.stats.stopped = Some(self.livelock());
                break;
            }
            if until.is_none() && self.only_futile_loops_left() {
                break;
            }
            if until.is_none()
                && let Some(for_) = self.failures_without_end()
            {
                self.rec.stats.stopped = Some(Stopped::FailuresWithoutEnd { for_ });
                break;
            }
        }
        // A run stopped early describes the time it reached.
        let end = match (until, &self.rec.stats.stopped) {
            (_, Some(_)) => self.now,
            (Some(u), None) => u.max(self.now),
            (None, None) => self.progress.last_effective,
        };
        if end >= self.now {
            self.advance_to(end);
        } else {
            // Only idle events happened after `end`: nothing changed, so GPU use was constant.
            let extra = (self.now - end).millis();
            self.rec.stats.gpu_busy_ms -= i128::from(self.rec.gpus_in_use) * i128::from(extra);
        }
        self.rec.stats.end = end;
        self.autoscale_finish(end);
        if let Some(serving) = self.serving.take() {
            self.rec.stats.serving = serving.finish(self.origin, end);
        }
        self.rec.stats.gpu_sharing = self.gpu_sharing_figures();
        self.rec.stats.final_quota_usage = self
            .world
            .cluster_queues
            .iter()
            .enumerate()
            .map(|(c, cq)| {
                let node = self.kueue.tree.cq_node(ClusterQueueId::from_index(c));
                cq.resource_groups
                    .iter()
                    .flat_map(|rg| &rg.flavors)
                    .flat_map(|fq| fq.resources.iter().map(move |rq| (fq.flavor, rq.resource)))
                    .map(|(f, r)| (f, r, self.kueue.tree.usage(node, self.kueue.tree.fr(f, r))))
                    .collect()
            })
            .collect();
        // Samples after the end (taken before idle events past it) go; the rest up to it come.
        if let Some(series) = &mut self.rec.series {
            series.samples.retain(|s| s.at <= end);
        }
        if let Some(out) = &mut self.outbox {
            out.drop_samples_after(end);
        }
        self.sample_before(end + SimDuration::from_millis(1));
        if let Some(sink) = sink {
            self.drain_outbox(sink, end);
        }
        let live: Vec<usize> = self.runtimes.iter().map(|(i, _)| i).collect();
        for &i in &live {
            self.rec.account_cq_gpus(&self.runtimes[i], end);
            self.close_idle_quota_at(WorkloadId::from_index(i), end);
        }
        self.close_bounds(end);
        // The runs going on at the end did useful work up to it (none of it is lost yet).
        for &i in &live {
            let w = WorkloadId::from_index(i);
            if self.runtimes[i].record.state == WorkloadState::Running {
                let gpus = i128::from(self.workload_gpus(w));
                let work = pod_loss::run_work(&self.runtimes[i], end).millis();
                self.runtimes[i].record.useful_ms += i128::from(work);
                self.rec.stats.useful_gpu_ms += gpus * i128::from(work);
            }
        }
        for (_, rt) in self.runtimes.iter_mut() {
            if rt.gpus_held != 0 {
                rt.record.gpu_ms +=
                    i128::from(rt.gpus_held) * i128::from((end - rt.gpus_since).millis());
            }
        }
        let waiting: BTreeSet<WorkloadId> = self
            .kueue
            .suspended
            .as_ref()
            .map(|s| s.heads().map(|h| h.key.workload).collect())
            .unwrap_or_default();
        for (_, rt) in self.runtimes.iter_mut() {
            if let (Some(key), WorkloadState::Pending) = (&rt.key, rt.record.state) {
                let w = key.workload;
                if let QueueRef::Local(lq) = rt.spec.queue {
                    let cq = self.world.local_queue(lq).cluster_queue;
                    rt.record.queue_status = if self.kueue.cq_stopped[cq.index()] {
                        // An inactive ClusterQueue reports all its pending workloads as
                        // inadmissible (`pending_workloads` metrics).
                        Some(QueueStatus::Inadmissible)
                    } else if waiting.contains(&w) {
                        // Popped by a cycle still waiting under blockAdmission: upstream
                        // counts a popped head as active.
                        Some(QueueStatus::Active)
                    } else {
                        self.kueue.queues.status(cq, key)
                    };
                }
            }
        }
        let origin = self.origin;
        // Every workload is counted: a stream is read to its end (which also reports bad
        // input past the horizon).
        let not_arrived = match &mut self.feed {
            Feed::World => (origin.workloads.len() - self.progress.arrived) as u64,
            Feed::Stream { next, rest } => next.take().map_or(0, |_| 1 + rest.count_rest()),
        };
        let mut runtimes = std::mem::take(&mut self.runtimes);
        let (workloads, lean) = match self.rec.tally.take() {
            None => {
                let mut records: Vec<Option<WorkloadRecord>> = Vec::new();
                records.resize_with(origin.workloads.len(), || None);
                for i in live {
                    records[i] = runtimes.remove(i).map(|rt| rt.record);
                }
                (records, None)
            }
            Some(mut tally) => {
                // The finished workloads' queue counts, folded by queue pair (`Tally::fold`).
                tally.settle();
                tally.add_not_arrived(not_arrived);
                let unfinished = live
                    .into_iter()
                    .filter_map(|i| runtimes.remove(i).map(|rt| (i, rt)))
                    .map(|(i, rt)| {
                        let w = WorkloadId::from_index(i);
                        let spec = match rt.spec {
                            Spec::World(wl) => wl.clone(),
                            Spec::Streamed(wl) => Rc::unwrap_or_clone(wl),
                        };
                        (w, spec, rt.record)
                    })
                    .collect();
                (Vec::new(), Some(LeanOutcome { tally, unfinished }))
            }
        };
        Outcome {
            workloads,
            lean,
            stats: self.rec.stats,
            time_series: self.rec.series,
        }
    }

    /// Processes events until the next one is a Kueue scheduling cycle (for benchmarks);
    /// returns false if the run ends first.
    pub fn run_until_next_cycle(&mut self) -> bool {
        loop {
            match self.events.peek() {
                None => return false,
                Some((_, Ev::Cycle)) => return true,
                Some(_) => {
                    self.step(None);
                }
            }
        }
    }

    /// What a livelock at `now` is: the live workloads evicted most often at this instant
    /// (the preemptors and victims that take the quota from each other), at most five.
    fn livelock(&self) -> Stopped {
        let mut evicted: Vec<(u64, WorkloadId)> = self
            .runtimes
            .iter()
            .map(|(i, rt)| {
                let n = rt
                    .record
                    .evictions
                    .iter()
                    .filter(|e| e.at == self.now)
                    .count();
                (n as u64, WorkloadId::from_index(i))
            })
            .filter(|&(n, _)| n > 0)
            .collect();
        evicted.sort_by_key(|&(n, w)| (Reverse(n), w));
        evicted.truncate(5);
        Stopped::Livelock {
            at: self.now,
            events: self.progress.events_this_instant,
            evicted: evicted
                .into_iter()
                .map(|(n, w)| {
                    let spec = self.spec(w);
                    (format!("{} {}/{}", spec.kind, spec.namespace, spec.name), n)
                })
                .collect(),
        }
    }

    /// Where `w` waits, if queued through a LocalQueue: its ClusterQueue and its queue key.
    fn queued_at(&self, w: WorkloadId) -> Option<(ClusterQueueId, crate::queues::QueueKey)> {
        let rt = &self.runtimes[w.index()];
        match (&rt.spec.queue, rt.key) {
            (QueueRef::Local(lq), Some(key)) => {
                Some((self.world.local_queue(*lq).cluster_queue, key))
            }
            _ => None,
        }
    }

    /// The caller's queue-order key of `w` (`hooks::Hooks::queue_order`), 0 without a hook.
    fn policy_order_key(&self, w: WorkloadId, wl: &Workload) -> i64 {
        let Some(h) = self.hooks.as_ref().filter(|h| h.borrow().orders()) else {
            return 0;
        };
        let rt = &self.runtimes[w.index()];
        let cq = match &wl.queue {
            kueuesim_model::QueueRef::Local(lq) => self.world.local_queue(*lq).cluster_queue,
            _ => return 0,
        };
        let view = crate::hooks::OrderView {
            world: self.world,
            id: w,
            workload: wl,
            cluster_queue: cq,
            now: self.now,
            attained_gpu_ms: i64::try_from(rt.record.gpu_ms.get()).unwrap_or(i64::MAX),
            evictions: rt.record.evictions.len(),
        };
        h.borrow_mut()
            .queue_order(&view)
            .map_or(0, crate::hooks::order_key)
    }

    /// Runs to the end (see `run_with_progress`).
    pub fn run(self) -> Outcome {
        self.run_with_progress(|_, _| ControlFlow::Continue(()))
    }

    fn advance_to(&mut self, at: SimTime) {
        debug_assert!(at >= self.now, "time never goes backwards");
        self.rec.gpu_busy_until(at);
        self.now = at;
    }
}

/// The most events one simulated instant may take before the run is a livelock
/// (`Stopped::Livelock`): 20,000, or twenty per workload arrived when more. Every real
/// Kueue scheduling cycle takes time, so decisions that repeat without end at one instant
/// (a preemptor and its victim reclaiming quota from each other with no controller latency
/// and instant pod termination) are the model's, not the cluster's; an instant where every
/// workload of a large snapshot arrives, is admitted and starts takes a few events each.
/// The floor is low enough that a small world stops within a second: each round of such a
/// loop records a preemption's events and messages, so its cost per event grows as it goes
/// (100,000 events took 2–3 s of CPU and 300 MB in the oracle's cases).
fn livelock_bound(arrived: usize) -> u64 {
    (20_000u64).max(20 * arrived as u64)
}
