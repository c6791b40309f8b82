//! The discrete-event loop: arrivals, Kueue scheduling cycles, preemption and eviction, pod
//! placement, start-up and completion, applied to the runtime state of every workload.
//!
//! Policies (the admission cycle, preemption, placement) return decisions as data; this
//! module applies them, keeps quota and node capacity in step, and records conditions and
//! events as Kueue and the schedulers write them.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use kueuesim_model::quota::{Fr, NodeIdx, QuotaTree};
use kueuesim_model::resources::GPU;
use kueuesim_model::{
    ClusterQueueId, Labels, NodeId, ProgressPolicy, QueueRef, ResourceId, SchedulerKind,
    SimDuration, SimTime, StopPolicy, TierRef, Workload, WorkloadId, World,
};

use crate::admission::{self, Assignment, Decision, Head, NotAdmitted};
use crate::admitted::AdmittedIndex;
use crate::event_queue::EventQueue;
use crate::outcome::{
    Admission, Condition, ConditionType, Event, EventType, Eviction, LeanOutcome, Outcome,
    PodSetAssignment, RunStats, Sample, Tally, TimeSeries, WorkloadRecord, WorkloadState,
};
use crate::placement::{self, Cluster, NodeCapacity, PodNeeds};
use crate::preemption::{AdmittedWorkloads, Candidate, PreemptionReason, Target};
use crate::queues::{QueueKey, QueueManager, QueueStatus, RequeueReason};
use crate::uid_order::UidLabels;
use crate::window::Window;

/// The event source of Kueue's scheduler.
const KUEUE_ADMISSION: &str = "kueue-admission";
/// The event source of Kueue's workload controller.
const KUEUE_WORKLOAD_CONTROLLER: &str = "kueue-workload-controller";
/// `requeueBatchPeriod`: inadmissible workloads return to their heaps this long after the
/// capacity change that may let them in.
const REQUEUE_BATCH_PERIOD: SimDuration = SimDuration::from_secs(1);

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
}

/// Admission Fair Sharing state (`pkg/cache/queue/afs`): per LocalQueue a decayed consumed
/// usage, in base units (cores, bytes, GPUs), and the usage its admitted workloads hold now.
#[derive(Clone, Debug)]
struct AfsState {
    half_life_s: f64,
    sampling_s: f64,
    /// `resourceWeights` per resource (1 when not configured).
    weights: Vec<f64>,
    /// Whether each ClusterQueue uses it (`admissionScope`).
    enabled_cq: Vec<bool>,
    consumed: Vec<Vec<f64>>,
    last_update: Vec<SimTime>,
    admitted: Vec<Vec<f64>>,
    /// Per LocalQueue, an id of its name: preemption compares LocalQueues by
    /// `spec.queueName` alone.
    lq_name_id: Vec<u32>,
}

impl AfsState {
    /// `α(Δt) = 1 − 0.5^(Δt / halfLife)`; with no half-life usage is replaced at once.
    fn alpha(&self, dt_s: f64) -> f64 {
        // `calculateAlphaRate`: no half-life, no memory (and no entry penalty).
        if self.half_life_s <= 0.0 {
            0.0
        } else {
            1.0 - 0.5f64.powf(dt_s / self.half_life_s)
        }
    }

    /// `CalculateDecayedConsumed` up to `now`.
    fn decay(&mut self, lq: usize, now: SimTime) {
        if self.half_life_s <= 0.0 {
            // `reconcileConsumedUsage` resets the stored usage when there is no half-life.
            self.consumed[lq].iter_mut().for_each(|c| *c = 0.0);
            self.last_update[lq] = now;
            return;
        }
        let dt = (now - self.last_update[lq]).as_secs_f64().max(0.0);
        let a = self.alpha(dt);
        for (c, u) in self.consumed[lq].iter_mut().zip(&self.admitted[lq]) {
            *c = (1.0 - a) * *c + a * u;
        }
        self.last_update[lq] = now;
    }

    /// `CalculateUsage`: weighted consumed usage over the LocalQueue's weight; weight 0 is
    /// always last.
    fn usage(&self, lq: usize, weight_milli: i64) -> f64 {
        if weight_milli <= 0 {
            return f64::INFINITY;
        }
        let total: f64 = self.consumed[lq]
            .iter()
            .zip(&self.weights)
            .map(|(c, w)| c * w)
            .sum();
        total / (weight_milli as f64 / 1000.0)
    }
}

/// A workload's spec: the world's own, or one the run was streamed (shared, so a handle
/// outlives any borrow of the simulation).
#[derive(Clone, Debug)]
enum Spec<'w> {
    World(&'w Workload),
    Streamed(Rc<Workload>),
}

impl std::ops::Deref for Spec<'_> {
    type Target = Workload;

    #[inline]
    fn deref(&self) -> &Workload {
        match self {
            Spec::World(w) => w,
            Spec::Streamed(w) => w,
        }
    }
}

impl admission::Specs for Window<Box<Runtime<'_>>> {
    fn spec(&self, w: WorkloadId) -> &Workload {
        &self[w.index()].spec
    }
}

/// Where the workloads come from, in arrival order.
enum Feed<'w> {
    /// `world.workloads`, by id.
    World,
    /// A stream (`Simulation::with_stream`): `next` is the workload pulled ahead, whose
    /// arrival is queued; `rest` gives the ones after it.
    Stream {
        next: Option<Rc<Workload>>,
        rest: Box<dyn Iterator<Item = Workload> + 'w>,
    },
}

impl Clone for Feed<'_> {
    /// A forked run needs its own copy of the workloads still to come; a stream has no copy
    /// to give, so only runs fed from the world fork.
    fn clone(&self) -> Self {
        match self {
            Feed::World => Feed::World,
            Feed::Stream { .. } => panic!("a simulation fed by a stream cannot be forked"),
        }
    }
}

/// The runtime state of one workload.
#[derive(Clone, Debug)]
struct Runtime<'w> {
    /// Its spec.
    spec: Spec<'w>,
    /// Controller latency: its pods start no earlier than its admission's API write is done.
    starts_after: SimTime,
    /// Controller latency: its finish has gone through the API write queue.
    finish_written: bool,
    /// Bumped whenever scheduled PodsRunning/Finish/PodsGone events become stale.
    generation: u32,
    /// Per pod set, what one pod needs from a node (set when released to its scheduler).
    needs: Vec<PodNeeds>,
    /// KAI: GPUs this pending job is pipelined on (victims of its reclaim are terminating);
    /// they count as its queue's allocation until it is placed.
    kai_pipelined: i64,
    /// Quota usage held, to give back.
    usage: Vec<(Fr, i64)>,
    /// Its position in its ClusterQueue's queue.
    key: Option<QueueKey>,
    /// Time spent admitted before the latest admission (`accumulatedPastExecutionTimeSeconds`).
    past_execution: SimDuration,
    /// Deactivated (`spec.active: false`): never requeued.
    deactivated: bool,
    /// Running time saved by checkpoints (`ProgressPolicy::Checkpoint`).
    progress_saved: SimDuration,
    /// GPUs currently held and since when (for per-workload GPU time).
    gpus_held: i64,
    gpus_since: SimTime,
    /// End of the PodsReady back-off (`requeueState.requeueAt`).
    requeue_at: Option<SimTime>,
    /// Holds quota without `PodsReady=True` (in the cache's `WorkloadsNotReady`).
    not_ready: bool,
    /// Its UID, shared with its entry in `uid_labels` (so letting go of it allocates nothing).
    uid: Rc<str>,
    /// The label of its UID (`uid_order`), in its queue key and candidate record.
    uid_label: u64,
    /// Its scheduling-shape class (`SchedulingEquivalenceHashing`).
    shape: u32,
    record: WorkloadRecord,
}

/// A scheduling cycle being applied, or blocked by `waitForPodsReady.blockAdmission`: the
/// decisions still to apply (the next, e.g. the blocked admission, last), and the heads to
/// requeue once every entry is processed.
#[derive(Clone)]
struct SuspendedCycle {
    cycle: u64,
    rest: Vec<Decision>,
    /// Requeues wait for the end of the cycle, as upstream's step 6 ("Requeue the heads that
    /// were not scheduled"); the flag says whether a requeue that moved workloads counts as
    /// progress (not for a preemptor, which waits for its victims).
    deferred: Vec<(Head, RequeueReason, NotAdmitted, bool)>,
    progress: bool,
    /// Waited: the queues may have changed since the cycle popped its heads.
    resumed: bool,
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
    world: &'w World,
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
    /// Controller latency: the API writes queued so far are done then.
    api_free_at: SimTime,
    /// Workloads holding quota without `PodsReady=True`.
    not_ready: usize,
    /// The cycle waiting in `waitForPodsReadyIfNeeded`, if any.
    suspended: Option<SuspendedCycle>,
    /// Inadmissible requeues broadcast while a cycle waited: its entries requeued afterwards
    /// must see them too (`queueInadmissibleCycle >= popCycle` puts them back in the heap).
    requeued_while_suspended: Vec<NodeIdx>,
    afs: Option<AfsState>,
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
    /// Kueue's TAS view of the empty cluster (with the per-flavor snapshot masks), when a
    /// TAS flavor and nodes exist: each cycle's view starts from its shared parts.
    tas_base: Option<crate::tas::TasCapacity>,
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
    /// Record violations of invariants only observable at the moment of a decision.
    audit: Option<Vec<String>>,
    gpus_in_use: i64,
    last_accounted: SimTime,
}

/// Scheduling-shape classes (`SchedulingEquivalenceHashing`), numbered in order of first
/// arrival: workloads of equal priority and pod sets (name, count, minCount, requests, and the
/// template's scheduling spec: nodeSelector, tolerations, ...) share one. Found by a hash of
/// those fields; each bucket keeps one workload per class to compare with, so an arrival of a
/// known shape allocates nothing. The numbering is by arrival, whatever the hash.
#[derive(Clone, Default)]
struct ShapeClasses<'w> {
    buckets: BTreeMap<u64, Vec<(Spec<'w>, u32)>>,
    count: u32,
}

impl<'w> ShapeClasses<'w> {
    fn class_of(&mut self, wl: &Spec<'w>) -> u32 {
        let bucket = self.buckets.entry(shape_hash(wl)).or_default();
        if let Some(&(_, class)) = bucket.iter().find(|(rep, _)| same_shape(rep, wl)) {
            return class;
        }
        let class = self.count;
        self.count += 1;
        bucket.push((wl.clone(), class));
        class
    }
}

fn shape_hash(w: &Workload) -> u64 {
    use std::hash::{Hash, Hasher};
    // SipHash with fixed keys: the same on every run (not that the hash can change a class).
    let mut h = std::hash::DefaultHasher::new();
    w.priority.hash(&mut h);
    for p in &w.pod_sets {
        p.name.hash(&mut h);
        p.count.hash(&mut h);
        p.min_count.hash(&mut h);
        for (r, amount) in p.requests.iter() {
            r.index().hash(&mut h);
            amount.hash(&mut h);
        }
        p.spec_shape.hash(&mut h);
    }
    h.finish()
}

fn same_shape(a: &Workload, b: &Workload) -> bool {
    a.priority == b.priority
        && a.pod_sets.len() == b.pod_sets.len()
        && a.pod_sets.iter().zip(&b.pod_sets).all(|(x, y)| {
            x.name == y.name
                && x.count == y.count
                && x.min_count == y.min_count
                && x.requests == y.requests
                && x.spec_shape == y.spec_shape
        })
}

/// A workload's runtime state on arrival.
fn new_runtime<'w>(spec: Spec<'w>, shape: u32, uid: Rc<str>, uid_label: u64) -> Runtime<'w> {
    let placement = spec
        .pod_sets
        .iter()
        .map(|p| vec![None; p.count as usize])
        .collect();
    Runtime {
        starts_after: SimTime::ZERO,
        finish_written: false,
        generation: 0,
        needs: Vec::new(),
        kai_pipelined: 0,
        usage: Vec::new(),
        key: None,
        past_execution: SimDuration::ZERO,
        deactivated: false,
        progress_saved: SimDuration::ZERO,
        gpus_held: 0,
        gpus_since: SimTime::ZERO,
        requeue_at: None,
        not_ready: false,
        uid,
        uid_label,
        shape,
        spec,
        record: WorkloadRecord {
            state: WorkloadState::Pending,
            admitted_at: None,
            running_at: None,
            finished_at: None,
            admission: None,
            placement,
            topology_domain: None,
            evictions: Vec::new(),
            conditions: Vec::new(),
            events: Vec::new(),
            queue_status: None,
            gpu_ms: 0,
            lost_gpu_ms: 0,
            requeue_count: 0,
        },
    }
}

impl<'w> Simulation<'w> {
    /// Prepares the simulation of `world`; nothing has happened yet.
    pub fn new(world: &'w World) -> Self {
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
        let afs = world
            .config
            .kueue
            .admission_fair_sharing
            .as_ref()
            .and_then(|cfg| {
                let enabled_cq: Vec<bool> = world
                    .cluster_queues
                    .iter()
                    .map(|cq| cq.admission_fair_sharing)
                    .collect();
                if !enabled_cq.iter().any(|e| *e) {
                    return None;
                }
                let n_res = world.resources.len();
                let mut weights = vec![1.0; n_res];
                for &(r, w) in &cfg.resource_weights_milli {
                    weights[r.index()] = w as f64 / 1000.0;
                }
                let consumed = world
                    .local_queues
                    .iter()
                    .map(|lq| {
                        let mut c = vec![0.0; n_res];
                        for &(r, a) in &lq.afs_consumed {
                            c[r.index()] = base_units(world, r, a);
                        }
                        c
                    })
                    .collect();
                events.push(SimTime::ZERO + cfg.sampling_interval, Ev::AfsSample);
                let mut names: BTreeMap<&str, u32> = BTreeMap::new();
                let lq_name_id = world
                    .local_queues
                    .iter()
                    .map(|lq| {
                        let next = names.len() as u32;
                        *names.entry(lq.name.as_str()).or_insert(next)
                    })
                    .collect();
                Some(AfsState {
                    half_life_s: cfg.half_life.as_secs_f64(),
                    sampling_s: cfg.sampling_interval.as_secs_f64(),
                    weights,
                    enabled_cq,
                    consumed,
                    last_update: vec![SimTime::ZERO; world.local_queues.len()],
                    admitted: vec![vec![0.0; n_res]; world.local_queues.len()],
                    lq_name_id,
                })
            });
        Simulation {
            world,
            gpu,
            now: SimTime::ZERO,
            events,
            runtimes: Window::default(),
            feed: Feed::World,
            kueue: Kueue {
                queues: QueueManager::new(world.cluster_queues.len()),
                tree,
                admitted: AdmittedIndex::new(world.cluster_queues.len()),
                cq_stopped,
                uid_labels: UidLabels::default(),
                respace_uids_always: false,
                shape_classes: ShapeClasses::default(),
                requeue_pending: vec![false; n_nodes],
                cycle_scheduled: false,
                next_cycle_at: SimTime::ZERO,
                api_free_at: SimTime::ZERO,
                not_ready: 0,
                suspended: None,
                requeued_while_suspended: Vec::new(),
                afs,
            },
            sched: Schedulers {
                cluster: Cluster::new(world),
                awaiting_placement: BTreeSet::new(),
                placement_attempts: 0,
                tas_base: (world.flavors.iter().any(|f| f.topology_name.is_some())
                    && world.has_nodes())
                .then(|| crate::tas::TasCapacity::new(world)),
            },
            progress: Progress {
                last_effective: SimTime::ZERO,
                idle: false,
                arrived: 0,
                running: 0,
                terminating: 0,
                last_progress: SimTime::ZERO,
            },
            rec: Recorder {
                stats: RunStats {
                    gpu_capacity,
                    cq_gpu_seconds_by_hour: vec![Vec::new(); world.cluster_queues.len()],
                    quota_reserved_waits: Vec::new(),
                    ..RunStats::default()
                },
                tally: None,
                series: None,
                audit: None,
                gpus_in_use: 0,
                last_accounted: SimTime::ZERO,
            },
        }
    }

    /// The spec of arrived workload `w` (a cheap handle, free of any borrow of `self`).
    #[inline]
    fn spec(&self, w: WorkloadId) -> Spec<'w> {
        self.runtimes[w.index()].spec.clone()
    }

    /// How many workload ids the run holds state for: from the oldest live workload to the
    /// newest arrival (what a lean run's memory follows).
    pub fn live_workloads(&self) -> usize {
        self.runtimes.span()
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Processes the next event if it is at or before `until`; returns false when none is.
    pub fn step(&mut self, until: Option<SimTime>) -> bool {
        let Some(at) = self.events.peek_time() else {
            return false;
        };
        if until.is_some_and(|u| at > u) {
            return false;
        }
        let Some((at, ev)) = self.events.pop() else {
            return false;
        };
        self.sample_before(at);
        self.advance_to(at);
        self.rec.stats.events_processed += 1;
        self.progress.idle = false;
        // A workload let go of (finished, lean) has no events left that are current.
        let current = |s: &Self, w: WorkloadId, g: u32| {
            s.runtimes.get(w.index()).is_some_and(|r| r.generation == g)
        };
        match ev {
            Ev::Arrive(w) => {
                self.progress.arrived += 1;
                self.progress.last_progress = at;
                self.arrive(w)
            }
            Ev::Cycle => self.cycle(),
            Ev::PodsRunning(w, g) if current(self, w, g) => self.pods_running(w),
            Ev::Finish(w, g) if current(self, w, g) => {
                if self.finish_waits_for_write(w, g) {
                    self.progress.idle = true;
                } else {
                    self.finish(w)
                }
            }
            Ev::PodsGone(w, g) if current(self, w, g) => self.pods_gone(w),
            Ev::KaiPodsGone(w, g) if current(self, w, g) => self.kai_pods_gone(w),
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
            Ev::PodsRunning(..)
            | Ev::Finish(..)
            | Ev::PodsGone(..)
            | Ev::KaiPodsGone(..)
            | Ev::MaxExecutionTime(..)
            | Ev::PodsReadyTimeout(..)
            | Ev::BackoffExpired(..) => self.progress.idle = true,
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
    /// calling `progress` every so often with the current time.
    pub fn run_with_progress(mut self, mut progress: impl FnMut(SimTime, u64)) -> Outcome {
        let until = self.world.config.until;
        while self.step(until) {
            if self.rec.stats.events_processed.is_multiple_of(65_536) {
                progress(self.now, self.rec.stats.events_processed);
            }
            if until.is_none() && self.only_futile_loops_left() {
                break;
            }
        }
        let end = match until {
            Some(u) => u.max(self.now),
            None => self.progress.last_effective,
        };
        if end >= self.now {
            self.advance_to(end);
        } else {
            // Only idle events happened after `end`: nothing changed, so GPU use was constant.
            let extra = (self.now - end).millis();
            self.rec.stats.gpu_busy_ms -= i128::from(self.rec.gpus_in_use) * i128::from(extra);
        }
        self.rec.stats.end = end;
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
        self.sample_before(end + SimDuration::from_millis(1));
        let live: Vec<usize> = self.runtimes.iter().map(|(i, _)| i).collect();
        for &i in &live {
            self.account_cq_gpus(WorkloadId::from_index(i), end);
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
            .map(|s| {
                let rest = s.rest.iter().map(|d| d.head().key.workload);
                let deferred = s.deferred.iter().map(|d| d.0.key.workload);
                rest.chain(deferred).collect()
            })
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
        let world = self.world;
        // Every workload is counted: a stream is read to its end (which also reports bad
        // input past the horizon).
        let not_arrived = match &mut self.feed {
            Feed::World => (world.workloads.len() - self.progress.arrived) as u64,
            Feed::Stream { next, rest } => next.take().map_or(0, |_| 1 + rest.count() as u64),
        };
        let mut runtimes = std::mem::take(&mut self.runtimes);
        let (workloads, lean) = match self.rec.tally.take() {
            None => {
                let mut records: Vec<Option<WorkloadRecord>> = Vec::new();
                records.resize_with(world.workloads.len(), || None);
                for i in live {
                    records[i] = runtimes.remove(i).map(|rt| rt.record);
                }
                (records, None)
            }
            Some(mut tally) => {
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

    /// Whether the run can only go round in circles: nothing runs or is still to arrive, and for
    /// two full PodsReady timeout + back-off rounds nothing has started or finished. Without a
    /// horizon the run ends there (Kueue would go on evicting and readmitting forever).
    pub fn only_futile_loops_left(&self) -> bool {
        let Some(cfg) = &self.world.config.kueue.wait_for_pods_ready else {
            return false;
        };
        if self.arrivals_pending() || self.progress.running > 0 || self.progress.terminating > 0 {
            return false;
        }
        let round = cfg.timeout + cfg.backoff_max + self.world.config.pod_termination;
        self.now - self.progress.last_progress > round + round
    }

    /// Relabels the UIDs of the live workloads on every arrival instead of only when a gap
    /// is used up (for tests: every kept label must follow, or the order goes wrong).
    pub fn with_uid_respacing(mut self) -> Self {
        self.kueue.respace_uids_always = true;
        self
    }

    /// Turns on auditing of decisions (for tests): `check_invariants` then also reports a
    /// StrictFIFO ClusterQueue admitting a workload while one ahead of it waits in its heap.
    pub fn with_audit(mut self) -> Self {
        self.rec.audit = Some(Vec::new());
        self
    }

    /// Keeps only what a summary reads: a finished workload is folded into the run's `Tally`
    /// (its state, its wait, its ClusterQueue's admissions, evictions and GPU time) and let go
    /// of, and the outcome reports the tally and the unfinished workloads whole
    /// (`Outcome::lean`). Decisions are unchanged (nothing recorded feeds back into them).
    pub fn lean(mut self) -> Self {
        self.rec.tally = Some(Tally::new(self.world));
        self
    }

    /// Feeds the run from `stream` instead of `world.workloads` (which must be empty): each
    /// workload is pulled when the one before it arrives, in arrival order, and its id is its
    /// position in the stream. The run is lean (`Simulation::lean`): memory then follows the
    /// live workloads, whatever the length of the stream.
    pub fn with_stream(mut self, stream: impl Iterator<Item = Workload> + 'w) -> Self {
        assert!(
            self.world.workloads.is_empty(),
            "a streamed run takes every workload from the stream"
        );
        let mut rest: Box<dyn Iterator<Item = Workload> + 'w> = Box::new(stream);
        let next = rest.next().map(Rc::new);
        if let Some(n) = &next {
            self.events
                .push_presorted(n.arrival, Ev::Arrive(WorkloadId::from_index(0)));
        }
        self.feed = Feed::Stream { next, rest };
        self.lean()
    }

    /// Samples the state every `step` from time 0 to the end of the run
    /// (`Outcome::time_series`).
    pub fn with_time_series(mut self, step: SimDuration) -> Self {
        assert!(step > SimDuration::ZERO, "a time-series step is positive");
        self.rec.series = Some(TimeSeries {
            step,
            samples: Vec::new(),
        });
        self
    }

    /// Takes the samples due strictly before `at`: the state now is the state after every
    /// event at or before them.
    fn sample_before(&mut self, at: SimTime) {
        let Some(series) = &self.rec.series else {
            return;
        };
        let step = series.step.millis();
        let mut next = series.samples.last().map_or(0, |s| s.at.millis() + step);
        while next < at.millis() {
            let sample = self.sample(SimTime::from_millis(next));
            self.rec
                .series
                .as_mut()
                .expect("checked")
                .samples
                .push(sample);
            next += step;
        }
    }

    fn sample(&self, at: SimTime) -> Sample {
        let world = self.world;
        let mut by_cq = vec![0; world.cluster_queues.len()];
        let mut by_flavor = vec![0; world.flavors.len()];
        if let Some(gpu) = self.gpu {
            for fr in (0..self.kueue.tree.fr_count()).map(|f| Fr(f as u32)) {
                let (f, r) = self.kueue.tree.split(fr);
                if r != gpu {
                    continue;
                }
                for (c, held) in by_cq.iter_mut().enumerate() {
                    let used = self
                        .kueue
                        .tree
                        .usage(self.kueue.tree.cq_node(ClusterQueueId::from_index(c)), fr);
                    *held += used;
                    by_flavor[f.index()] += used;
                }
            }
        }
        let (mut active, inadmissible): (Vec<u32>, Vec<u32>) = (0..world.cluster_queues.len())
            .map(|c| {
                let q = self.kueue.queues.queue(ClusterQueueId::from_index(c));
                (q.active.len() as u32, q.inadmissible.len() as u32)
            })
            .unzip();
        // Heads held by a cycle waiting under blockAdmission count as active, as upstream's
        // popped heads do.
        if let Some(waiting) = &self.kueue.suspended {
            let heads = waiting.rest.iter().map(|d| d.head().cq);
            for cq in heads.chain(waiting.deferred.iter().map(|d| d.0.cq)) {
                active[cq.index()] += 1;
            }
        }
        let mut by_lq = vec![0u32; world.local_queues.len()];
        for c in 0..world.cluster_queues.len() {
            let q = self.kueue.queues.queue(ClusterQueueId::from_index(c));
            for k in q.active.iter().chain(q.inadmissible.iter()) {
                if let QueueRef::Local(lq) = &self.spec(k.workload).queue {
                    by_lq[lq.index()] += 1;
                }
            }
        }
        if let Some(waiting) = &self.kueue.suspended {
            let heads = waiting.rest.iter().map(|d| d.head().key.workload);
            for w in heads.chain(waiting.deferred.iter().map(|d| d.0.key.workload)) {
                if let QueueRef::Local(lq) = &self.spec(w).queue {
                    by_lq[lq.index()] += 1;
                }
            }
        }
        let (ti, spines) = crate::outcome::spine_domains(world);
        let mut by_spine = vec![0u32; spines.len() + 1];
        if !spines.is_empty() {
            let t = crate::placement::topologies(world)
                .nth(ti)
                .expect("topology");
            for (_, rt) in self.runtimes.iter() {
                let mut spine: Option<Option<usize>> = None;
                for n in rt.record.placement.iter().flatten().flatten() {
                    let s = t.domain_of(*n).and_then(|d| {
                        t.ancestors(d)
                            .find_map(|a| spines.iter().position(|&x| x == a))
                    });
                    spine = Some(match spine {
                        None => s,
                        Some(prev) if prev == s => s,
                        Some(_) => None,
                    });
                }
                if rt.record.state == crate::outcome::WorkloadState::Finished {
                    continue;
                }
                match spine {
                    Some(Some(i)) => by_spine[i] += 1,
                    Some(None) => by_spine[spines.len()] += 1,
                    None => {}
                }
            }
        }
        Sample {
            at,
            gpus_in_use: self.rec.gpus_in_use,
            gpu_quota_by_cq: by_cq,
            gpu_quota_by_flavor: by_flavor,
            pending_active: active,
            pending_inadmissible: inadmissible,
            pending_by_lq: by_lq,
            gangs_by_spine: by_spine,
        }
    }

    /// Runs to the end (see `run_with_progress`).
    pub fn run(self) -> Outcome {
        self.run_with_progress(|_, _| {})
    }

    /// The state of workload `w` now, or `None` before it arrives.
    pub fn state_of(&self, w: WorkloadId) -> Option<WorkloadState> {
        match self.runtimes.get(w.index()) {
            Some(rt) => Some(rt.record.state),
            // A lean run lets go of a workload when it finishes.
            None if w.index() < self.progress.arrived => Some(WorkloadState::Finished),
            None => None,
        }
    }

    /// Checks the engine's invariants against the current state; the message names the first
    /// broken one. Meant for tests, after every step:
    /// - a ClusterQueue's usage equals the sum of the usage its workloads hold, and it never
    ///   exceeds what its quota and the cohort tree allow: within its nominal quota plus
    ///   borrowingLimit, and no cohort above its subtree quota (lending limits respected);
    /// - no node has negative free capacity, and free capacity equals allocatable minus the
    ///   requests of the pods bound to it;
    /// - a gang-scheduled workload has all of its pods placed or none.
    pub fn check_invariants(&self) -> Result<(), String> {
        let world = self.world;
        if let Some(v) = self.rec.audit.as_ref().and_then(|a| a.first()) {
            return Err(v.clone());
        }
        self.check_uid_labels()?;
        let mut expected = QuotaTree::new(world);
        // Limits hold for the workloads that are not on their way out: like Kueue, the
        // scheduler counts a preempted workload as gone while its pods terminate, so a
        // ClusterQueue may briefly hold more than its quota.
        let mut live = QuotaTree::new(world);
        for (i, rt) in self.runtimes.iter() {
            let w = WorkloadId::from_index(i);
            if let Some(c) = self.kueue.admitted.candidate(w) {
                for &(fr, amount) in &rt.usage {
                    expected.add_usage(expected.cq_node(c.cq), fr, amount);
                    if !c.evicted {
                        live.add_usage(live.cq_node(c.cq), fr, amount);
                    }
                }
            } else if !rt.usage.is_empty() {
                return Err(format!(
                    "{} holds usage but is not admitted",
                    self.spec(w).name
                ));
            }
            let placed: usize = rt
                .record
                .placement
                .iter()
                .flatten()
                .filter(|n| n.is_some())
                .count();
            let total: usize = rt.record.placement.iter().map(Vec::len).sum();
            // A gang is bound up to its minMember in one statement or not at all (a KAI Job's
            // pods are PodGroups of one; pods already running at the start count).
            let wl = self.spec(w);
            let min_member = match self.scheduler_of(w) {
                SchedulerKind::Kube => 1,
                SchedulerKind::Kai
                    if wl.gang.pod_group_per_pod || !wl.gang.kai_subgroups.is_empty() =>
                {
                    1
                }
                _ => wl.gang.min_member.map_or(total, |m| m as usize).min(total),
            };
            let pre_bound = wl.gang.bound_nodes.len().min(total);
            if placed != 0 && placed < min_member && placed != pre_bound {
                return Err(format!(
                    "gang {} has {placed} of {total} pods placed, below its minMember {min_member}",
                    wl.name
                ));
            }
        }
        self.check_pods_ready_tracking()?;
        for fr in (0..self.kueue.tree.fr_count()).map(|f| Fr(f as u32)) {
            let (f, r) = self.kueue.tree.split(fr);
            let what = format!("{}/{}", world.flavor(f).name, world.resources.name(r));
            for (c, cq) in world.cluster_queues.iter().enumerate() {
                let n = self.kueue.tree.cq_node(ClusterQueueId::from_index(c));
                let used = self.kueue.tree.usage(n, fr);
                if used != expected.usage(n, fr) {
                    return Err(format!(
                        "ClusterQueue {} usage of {what} is {used}, its workloads hold {}",
                        cq.name,
                        expected.usage(n, fr)
                    ));
                }
                let limit = match (cq.cohort, self.kueue.tree.borrowing_limit(n, fr)) {
                    (None, _) => self.kueue.tree.nominal(n, fr),
                    (Some(_), Some(bl)) => self.kueue.tree.nominal(n, fr) + bl,
                    (Some(_), None) => i64::MAX,
                };
                let used = live.usage(n, fr);
                if used > limit {
                    return Err(format!(
                        "ClusterQueue {} uses {used} of {what}, above nominal + borrowingLimit {limit}",
                        cq.name
                    ));
                }
            }
            // A cohort uses at most what its subtree lends it plus what it may borrow: the
            // root nothing beyond its subtree quota (which counts only lendable quota), inner
            // cohorts up to their borrowingLimit.
            for (j, co) in world.cohorts.iter().enumerate() {
                let n = self
                    .kueue
                    .tree
                    .cohort_node(kueuesim_model::CohortId::from_index(j));
                let limit = match (
                    self.kueue.tree.parent(n),
                    self.kueue.tree.borrowing_limit(n, fr),
                ) {
                    (None, _) => Some(self.kueue.tree.subtree_quota(n, fr)),
                    (Some(_), Some(bl)) => Some(self.kueue.tree.subtree_quota(n, fr) + bl),
                    (Some(_), None) => None,
                };
                if let Some(limit) = limit
                    && live.usage(n, fr) > limit
                {
                    return Err(format!(
                        "cohort {} uses {} of {what}, more than it may ({limit})",
                        co.name,
                        live.usage(n, fr)
                    ));
                }
            }
        }
        let mut cap = NodeCapacity::new(world);
        for rt in self
            .runtimes
            .iter()
            .map(|(_, rt)| rt)
            .filter(|rt| rt.record.state != WorkloadState::Finished)
        {
            for (ps, slots) in rt.record.placement.iter().enumerate() {
                for n in slots.iter().flatten() {
                    cap.apply(*n, &rt.needs[ps].requests, 1);
                }
            }
        }
        for (n, node) in world.nodes.iter().enumerate() {
            let id = NodeId::from_index(n);
            for r in 0..world.resources.len() {
                let free = self.sched.cluster.nodes.free(id, r);
                let name = world.resources.name(ResourceId::from_index(r));
                if free < 0 {
                    return Err(format!(
                        "node {} is over its allocatable {name}: free {free}",
                        node.name
                    ));
                }
                if free != cap.free(id, r) {
                    return Err(format!(
                        "node {} free {name} is {free}, its pods leave {}",
                        node.name,
                        cap.free(id, r)
                    ));
                }
            }
        }
        self.sched.cluster.check_indexes(world)
    }

    fn advance_to(&mut self, at: SimTime) {
        debug_assert!(at >= self.now, "time never goes backwards");
        let dt = (at - self.rec.last_accounted).millis();
        self.rec.stats.gpu_busy_ms += i128::from(self.rec.gpus_in_use) * i128::from(dt);
        self.rec.last_accounted = at;
        self.now = at;
    }

    fn request_cycle(&mut self) {
        if !self.kueue.cycle_scheduled {
            self.kueue.cycle_scheduled = true;
            // Controller latency: a cycle starts once the previous one has ended.
            let at = self.now.max(self.kueue.next_cycle_at);
            self.events.push(at, Ev::Cycle);
        }
    }

    /// Controller latency (`spec.kueue.controllerLatency`): a cycle that popped `heads` and
    /// decided `rest` keeps the scheduler busy for `cycle + perHead × heads + perAdmission ×
    /// admissions`; its decisions apply at its start (Kueue stamps the conditions and assumes
    /// the quota in its cache while processing the cycle).
    fn occupy_scheduler(&mut self, heads: usize, rest: &[Decision]) {
        let latency = &self.world.config.controller_latency;
        let admissions = rest
            .iter()
            .filter(|d| matches!(d, Decision::Admit { .. }))
            .count();
        self.kueue.next_cycle_at = self.now + latency.cycle_duration(heads, admissions);
    }

    /// Controller latency: a Kueue-managed workload's finish frees its quota only once Kueue
    /// has seen it through the API server, a write queued behind the others; true when the
    /// finish was put off until then.
    fn finish_waits_for_write(&mut self, w: WorkloadId, generation: u32) -> bool {
        let rt = &mut self.runtimes[w.index()];
        if std::mem::take(&mut rt.finish_written)
            || rt.record.admission.is_none()
            || self.world.config.controller_latency.api_write == SimDuration::ZERO
        {
            return false;
        }
        rt.finish_written = true;
        let done = self.api_write();
        if done <= self.now {
            self.runtimes[w.index()].finish_written = false;
            return false;
        }
        self.events.push(done, Ev::Finish(w, generation));
        true
    }

    /// Controller latency: one API write (an admission's status patch, an eviction), queued
    /// behind the earlier ones on Kueue's rate-limited client; returns when it is done.
    fn api_write(&mut self) -> SimTime {
        let write = self.world.config.controller_latency.api_write;
        if write == SimDuration::ZERO {
            return self.now;
        }
        let done = self.now.max(self.kueue.api_free_at) + write;
        self.kueue.api_free_at = done;
        done
    }

    /// The queue position of `w` (`GetQueueOrderTimestamp`): its creation time, except after
    /// an eviction by `PodsReadyTimeout` or `AdmissionCheck`, which orders it by the eviction
    /// time (`requeuingStrategy.timestamp: Eviction`, the default). A preempted workload keeps
    /// its place (`PrioritySortingWithinCohort` is on).
    fn queue_key(&self, w: WorkloadId) -> QueueKey {
        let wl = self.spec(w);
        let eviction = self.runtimes[w.index()]
            .record
            .evictions
            .last()
            .map(|e| (e.reason, e.at))
            .or_else(|| wl.last_eviction.as_ref().map(|(r, at)| (r.as_str(), *at)));
        let by_eviction = self
            .world
            .config
            .kueue
            .wait_for_pods_ready
            .as_ref()
            .is_none_or(|c| c.order_by_eviction);
        let timestamp = match eviction {
            Some(("PodsReadyTimeout", at)) if by_eviction => at,
            Some(("AdmissionCheck", at)) => at,
            _ => wl.created_at,
        };
        QueueKey {
            priority: Reverse(wl.priority),
            timestamp,
            uid_rank: self.runtimes[w.index()].uid_label,
            workload: w,
            shape: self.runtimes[w.index()].shape,
        }
    }

    /// Labels every live workload's UID afresh (its gap was used up) and rewrites the labels
    /// kept in queue keys, preemption candidates and a waiting cycle's heads. The order is
    /// unchanged, so nothing moves.
    fn respace_uid_labels(&mut self) {
        for (w, label) in self.kueue.uid_labels.respace() {
            let rt = &mut self.runtimes[w.index()];
            rt.uid_label = label;
            if let Some(k) = &mut rt.key {
                k.uid_rank = label;
            }
        }
        let runtimes = &self.runtimes;
        let label = |w: WorkloadId| runtimes[w.index()].uid_label;
        self.kueue.queues.relabel(label);
        self.kueue.admitted.relabel(label);
        if let Some(s) = &mut self.kueue.suspended {
            for d in &mut s.rest {
                let head = d.head_mut();
                head.key.uid_rank = label(head.key.workload);
            }
            for d in &mut s.deferred {
                d.0.key.uid_rank = label(d.0.key.workload);
            }
        }
    }

    /// The spec of arriving workload `w`; a stream then queues the arrival after it (ahead
    /// of every other event at its time, as if all arrivals had been queued at the start).
    fn take_arrival(&mut self, w: WorkloadId) -> Spec<'w> {
        match &mut self.feed {
            Feed::World => Spec::World(self.world.workload(w)),
            Feed::Stream { next, rest } => {
                let wl = next.take().expect("its arrival was queued with it");
                *next = rest.next().map(Rc::new);
                if let Some(n) = next {
                    assert!(
                        n.arrival >= wl.arrival,
                        "a workload stream gives workloads in arrival order"
                    );
                    let id = WorkloadId::from_index(w.index() + 1);
                    self.events.push_presorted(n.arrival, Ev::Arrive(id));
                }
                Spec::Streamed(wl)
            }
        }
    }

    /// Whether workloads are still to arrive.
    fn arrivals_pending(&self) -> bool {
        match &self.feed {
            Feed::World => self.progress.arrived < self.world.workloads.len(),
            Feed::Stream { next, .. } => next.is_some(),
        }
    }

    fn arrive(&mut self, w: WorkloadId) {
        let world = self.world;
        let wl = self.take_arrival(w);
        let shape = self.kueue.shape_classes.class_of(&wl);
        let uid: Rc<str> = wl.uid.as_str().into();
        let label = self.kueue.uid_labels.insert(uid.clone(), w);
        let runtime = new_runtime(wl.clone(), shape, uid, label.unwrap_or(0));
        self.runtimes.insert(w.index(), Box::new(runtime));
        if label.is_none() || self.kueue.respace_uids_always {
            self.respace_uid_labels();
        }
        if let Some(blocked) = &wl.creation_blocked {
            // No Workload exists, so Kueue never queues it; the job controller retries and
            // reports the same Warning.
            let message = blocked.message.clone();
            self.record_event(
                w,
                EventType::Warning,
                "kueue-job-controller",
                blocked.reason,
                message,
                None,
            );
            return;
        }
        if let Some(init) = &wl.initial_admission {
            let cq = init.cluster_queue;
            let assignment = Assignment {
                pod_sets: init
                    .pod_sets
                    .iter()
                    .map(|p| PodSetAssignment {
                        flavors: p.flavors.clone(),
                        count: p.count,
                        topology: None,
                    })
                    .collect(),
                usage: admission::usage_of(world, &self.kueue.tree, cq, &wl, &init.pod_sets),
                mode: admission::Mode::Fit,
                borrowing: 0,
                contested: Vec::new(),
                not_admitted: None,
                considered: String::new(),
            };
            // Reserved before (or, in a snapshot taken later than the start, at) time 0.
            let at = init.reserved_at.unwrap_or(self.now).min(self.now);
            self.runtimes[w.index()].key = Some(self.queue_key(w));
            self.admit(w, cq, assignment, None, at);
            // stopPolicy HoldAndDrain evicts what the queue had admitted.
            let lq_drains = matches!(&wl.queue, QueueRef::Local(lq) if world.local_queue(*lq).stop_policy == StopPolicy::HoldAndDrain);
            if world.cluster_queue(cq).stop_policy == StopPolicy::HoldAndDrain {
                self.evict(
                    w,
                    "ClusterQueueStopped",
                    None,
                    None,
                    "The ClusterQueue is stopped".into(),
                    None,
                );
            } else if lq_drains {
                self.evict(
                    w,
                    "LocalQueueStopped",
                    None,
                    None,
                    "The LocalQueue is stopped".into(),
                    None,
                );
            }
            return;
        }
        match &wl.queue {
            QueueRef::Unmanaged => self.release_to_scheduler(w),
            QueueRef::Missing(name) => {
                // Kueue's workload controller (getQueueBlocker): never queued, never admitted.
                let msg = format!("LocalQueue {name} doesn't exist");
                self.set_pending_condition(w, admission::REASON_MISCONFIGURED, msg);
            }
            QueueRef::Local(lq) => {
                if !wl.active {
                    self.runtimes[w.index()].record.state = WorkloadState::Inactive;
                    return;
                }
                let lq = world.local_queue(*lq);
                if lq.stop_policy != StopPolicy::None {
                    let msg = format!("LocalQueue {} is inactive", lq.name);
                    self.set_pending_condition(w, admission::REASON_SUSPENDED, msg);
                    return;
                }
                let cq = lq.cluster_queue;
                let key = self.queue_key(w);
                self.runtimes[w.index()].key = Some(key);
                let strategy = world.cluster_queue(cq).queueing_strategy;
                self.kueue.queues.add(cq, strategy, key);
                if self.kueue.cq_stopped[cq.index()] || self.kueue.tree.in_cycle(cq) {
                    // The workload controller's getQueueBlocker.
                    let msg = format!("ClusterQueue {} is inactive", world.cluster_queue(cq).name);
                    self.set_pending_condition(w, admission::REASON_SUSPENDED, msg);
                }
                if !self.kueue.cq_stopped[cq.index()] {
                    self.request_cycle();
                }
            }
        }
    }

    fn cycle(&mut self) {
        self.kueue.cycle_scheduled = false;
        if self.kueue.suspended.is_some() {
            // The scheduler is blocked in the cycle before; `resume_cycle` asks for the next.
            self.progress.idle = true;
            return;
        }
        let cq_stopped = &self.kueue.cq_stopped;
        // Each LocalQueue's usage once per cycle (the snapshot's view), looked up per workload.
        let world = self.world;
        let lq_usage: Vec<Option<f64>> = match &self.kueue.afs {
            None => Vec::new(),
            Some(afs) => world
                .local_queues
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    afs.enabled_cq[l.cluster_queue.index()]
                        .then(|| afs.usage(i, l.fair_sharing_weight_milli))
                })
                .collect(),
        };
        let runtimes = &self.runtimes;
        let afs_usage = |w: WorkloadId| -> Option<f64> {
            // Without Admission Fair Sharing there is nothing to look up.
            if lq_usage.is_empty() {
                return None;
            }
            match &runtimes[w.index()].spec.queue {
                QueueRef::Local(lq) => lq_usage.get(lq.index()).copied().flatten(),
                _ => None,
            }
        };
        let heads: Vec<Head> = self
            .kueue
            .queues
            .pop_heads_afs(|cq| !cq_stopped[cq.index()], afs_usage)
            .into_iter()
            .map(|(cq, key)| Head { cq, key })
            .collect();
        if heads.is_empty() {
            self.progress.idle = true;
            return;
        }
        self.rec.stats.cycles += 1;
        let cycle = self.rec.stats.cycles;
        if let Some(afs) = &self.kueue.afs {
            // The snapshot's `LocalQueueFSUsage` of every workload holding quota.
            self.kueue.admitted.set_lq_fs_usage(|w| {
                let usage = afs_usage(w)?;
                let QueueRef::Local(lq) = &runtimes[w.index()].spec.queue else {
                    return None;
                };
                Some((afs.lq_name_id[lq.index()], usage))
            });
        }
        let mut tas = self.tas_capacity();
        let mut rest = admission::run_cycle(
            self.world,
            &self.runtimes,
            &mut self.kueue.tree,
            &self.kueue.admitted,
            &mut tas,
            &heads,
        );
        self.occupy_scheduler(heads.len(), &rest);
        rest.reverse();
        self.apply_decisions(SuspendedCycle {
            cycle,
            rest,
            deferred: Vec::new(),
            progress: false,
            resumed: false,
        });
    }

    /// Applies a cycle's decisions in order (`processEntry`), until one admission finds
    /// `waitForPodsReady.blockAdmission` holding it (`waitForPodsReadyIfNeeded`): then the
    /// cycle waits, the rest of its decisions with it, until every workload holding quota
    /// has its pods ready (or loses its quota). Upstream's scheduler goroutine blocks on
    /// the cache's condition variable and admits with the snapshot it already took; that is
    /// safe because only the scheduler adds usage, so waiting can only free quota.
    fn apply_decisions(&mut self, mut state: SuspendedCycle) {
        let cycle = state.cycle;
        while let Some(d) = state.rest.pop() {
            match d {
                Decision::Admit { head, assignment } => {
                    if self.admission_blocked() {
                        self.set_pending_condition(
                            head.key.workload,
                            "WaitingForPodsReady",
                            "waiting for all admitted workloads to be in PodsReady condition"
                                .into(),
                        );
                        state.rest.push(Decision::Admit { head, assignment });
                        self.kueue.suspended = Some(state);
                        return;
                    }
                    state.progress = true;
                    // A cycle that waited admits the head it popped even if a workload that
                    // arrived meanwhile now sorts before it, as upstream's blocked goroutine does.
                    if !state.resumed
                        && self.world.cluster_queue(head.cq).queueing_strategy
                            == kueuesim_model::QueueingStrategy::StrictFIFO
                        && let Some(audit) = &mut self.rec.audit
                        && let Some(first) = self.kueue.queues.queue(head.cq).active.first()
                        && *first < head.key
                    {
                        audit.push(format!(
                            "StrictFIFO ClusterQueue {} admitted {:?} past {:?}",
                            self.world.cluster_queue(head.cq).name,
                            head.key,
                            first
                        ));
                    }
                    self.kueue.queues.clear_sticky(head.cq, head.key.workload);
                    let written = self.api_write();
                    self.runtimes[head.key.workload.index()].starts_after = written;
                    self.admit(
                        head.key.workload,
                        head.cq,
                        assignment,
                        Some(cycle),
                        self.now,
                    );
                }
                Decision::Preempt {
                    head,
                    targets,
                    not_admitted,
                } => {
                    for _ in &targets {
                        self.api_write();
                    }
                    state.progress |= self.issue_preemptions(head, &targets, cycle);
                    state.deferred.push((
                        head,
                        RequeueReason::PendingPreemption,
                        not_admitted,
                        false,
                    ));
                }
                Decision::Requeue {
                    head,
                    reason,
                    not_admitted,
                } => {
                    state.deferred.push((head, reason, not_admitted, true));
                }
            }
        }
        for (head, reason, not_admitted, counts) in std::mem::take(&mut state.deferred) {
            let moved = self.requeue(head, reason, not_admitted, cycle);
            state.progress |= counts && moved;
        }
        // Entries of a cycle that waited are requeued after broadcasts that happened during
        // the wait; upstream marks them active again, so broadcast once more.
        if state.resumed {
            let mut nodes = std::mem::take(&mut self.kueue.requeued_while_suspended);
            nodes.sort_unstable();
            nodes.dedup();
            for n in nodes {
                self.requeue_inadmissible(n);
            }
        }
        // Upstream loops without delay after a cycle that admitted something and backs off
        // after one that did not. A cycle that changed nothing would repeat the same decisions
        // until something else happens, so the next one waits for that event instead.
        if state.progress && self.kueue.queues.any_active() {
            self.request_cycle();
        }
    }

    /// UID labels increase in UID order among the live workloads, and every label kept in a
    /// queue key or a preemption candidate is its workload's current one.
    fn check_uid_labels(&self) -> Result<(), String> {
        let mut live: Vec<(&str, usize, u64)> = self
            .runtimes
            .iter()
            .map(|(i, rt)| (&*rt.uid, i, rt.uid_label))
            .collect();
        live.sort();
        if let Some(w) = live.windows(2).find(|w| w[0].2 >= w[1].2) {
            return Err(format!("UID labels out of order: {w:?}"));
        }
        let label = |w: WorkloadId| self.runtimes[w.index()].uid_label;
        let keys = self
            .kueue
            .queues
            .keys()
            .chain(self.runtimes.iter().filter_map(|(_, rt)| rt.key.as_ref()));
        for k in keys {
            if k.uid_rank != label(k.workload) {
                return Err(format!(
                    "stale UID label in the queue key of {:?}",
                    k.workload
                ));
            }
        }
        for c in self.kueue.admitted.all() {
            if c.uid_rank != label(c.workload) {
                return Err(format!("stale UID label in the candidate {:?}", c.workload));
            }
        }
        Ok(())
    }

    /// `not_ready` counts the workloads holding quota without `PodsReady=True`; a cycle is
    /// suspended only while one exists; and with `blockAdmission`, at most one workload that
    /// is not on its way out (and not admitted in the input) lacks ready pods: admissions
    /// are one at a time.
    fn check_pods_ready_tracking(&self) -> Result<(), String> {
        let world = self.world;
        let not_ready: Vec<WorkloadId> = self
            .runtimes
            .iter()
            .map(|(i, _)| WorkloadId::from_index(i))
            .filter(|&w| {
                self.kueue.admitted.candidate(w).is_some()
                    && !self.runtimes[w.index()]
                        .record
                        .conditions
                        .iter()
                        .any(|c| c.kind == ConditionType::PodsReady && c.status)
            })
            .collect();
        if not_ready.len() != self.kueue.not_ready {
            return Err(format!(
                "{} workloads hold quota without PodsReady, not_ready says {}",
                not_ready.len(),
                self.kueue.not_ready
            ));
        }
        if self.kueue.suspended.is_some() && !self.admission_blocked() {
            return Err("a cycle is suspended but nothing blocks admission".into());
        }
        let block = world
            .config
            .kueue
            .wait_for_pods_ready
            .as_ref()
            .is_some_and(|c| c.block_admission);
        let fresh: Vec<&str> = not_ready
            .iter()
            .filter(|&&w| {
                self.kueue.admitted.candidate(w).is_some_and(|c| !c.evicted)
                    && self.spec(w).initial_admission.is_none()
            })
            .map(|&w| self.runtimes[w.index()].spec.name.as_str())
            .collect();
        if block && fresh.len() > 1 {
            return Err(format!(
                "blockAdmission, yet several admitted workloads wait for their pods: {fresh:?}"
            ));
        }
        Ok(())
    }

    /// `waitForPodsReady.blockAdmission` and some workload holding quota is not ready
    /// (`PodsReadyForAllAdmittedWorkloads` is false).
    fn admission_blocked(&self) -> bool {
        self.kueue.not_ready > 0
            && self
                .world
                .config
                .kueue
                .wait_for_pods_ready
                .as_ref()
                .is_some_and(|c| c.block_admission)
    }

    /// Continues the blocked cycle once every workload holding quota is ready.
    fn resume_cycle(&mut self) {
        if let Some(mut state) = self.kueue.suspended.take() {
            self.progress.idle = false;
            state.resumed = true;
            self.apply_decisions(state);
        }
    }

    /// Keeps `not_ready` in step with the cache's `WorkloadsNotReady`: a workload is in it
    /// while it holds quota without `PodsReady=True`.
    fn track_ready(&mut self, w: WorkloadId) {
        let rt = &self.runtimes[w.index()];
        let want = self.kueue.admitted.candidate(w).is_some()
            && !rt
                .record
                .conditions
                .iter()
                .any(|c| c.kind == ConditionType::PodsReady && c.status);
        if want != rt.not_ready {
            self.runtimes[w.index()].not_ready = want;
            if want {
                self.kueue.not_ready += 1;
            } else {
                self.kueue.not_ready -= 1;
            }
        }
    }

    /// Puts a head back; returns whether it (or workloads parked with it) left the heap.
    fn requeue(&mut self, head: Head, reason: RequeueReason, why: NotAdmitted, cycle: u64) -> bool {
        let strategy = self.world.cluster_queue(head.cq).queueing_strategy;
        let moved = self
            .kueue
            .queues
            .requeue(head.cq, strategy, head.key, reason);
        let parked =
            self.kueue.queues.status(head.cq, &head.key) == Some(QueueStatus::Inadmissible);
        // Workloads parked with it get no condition: the workload controller writes one
        // only on its own reconcile (and `UnadmittedWorkloadsExplicitStatus` is off).
        self.record_event(
            head.key.workload,
            EventType::Warning,
            KUEUE_ADMISSION,
            why.reason,
            why.message.clone(),
            Some(cycle),
        );
        self.set_pending_condition(head.key.workload, why.reason, why.message);
        parked || !moved.is_empty()
    }

    /// `QuotaReserved=False` with `reason`, and `Admitted=False` (`NoReservation`), as
    /// `UnsetQuotaReservationWithCondition` writes them.
    fn set_pending_condition(&mut self, w: WorkloadId, reason: &'static str, message: String) {
        self.set_condition(w, ConditionType::QuotaReserved, false, reason, message);
        self.set_condition(
            w,
            ConditionType::Admitted,
            false,
            "NoReservation",
            "The workload has no reservation".into(),
        );
    }

    fn admit(
        &mut self,
        w: WorkloadId,
        cq: ClusterQueueId,
        a: Assignment,
        cycle: Option<u64>,
        at: SimTime,
    ) {
        let world = self.world;
        let cq_name = &world.cluster_queue(cq).name;
        let node = self.kueue.tree.cq_node(cq);
        for &(fr, amount) in &a.usage {
            self.kueue.tree.add_usage(node, fr, amount);
        }
        self.rec.stats.admissions += 1;
        self.afs_admit(w, &a.usage);
        let wl = self.spec(w);

        self.kueue.admitted.insert(Candidate {
            workload: w,
            cq,
            priority: wl.priority,
            // Quota reservation resets the Evicted condition, so the queue-order timestamp
            // of an admitted workload is its creation time (`GetQueueOrderTimestamp`).
            timestamp: wl.created_at,
            reserved_at: at,
            evicted: false,
            uid_rank: self.runtimes[w.index()].uid_label,
            lq_fs_usage: None,
            usage: a.usage.clone(),
        });
        // `QueuedWaitTime`: since the last requeue, else since creation.
        let queued_since = self.runtimes[w.index()]
            .record
            .conditions
            .iter()
            .find(|c| c.kind == ConditionType::Requeued && c.status)
            .map_or(wl.created_at, |c| c.at);
        // Only `metrics.prom` reads these; a lean run (a summary) keeps none, so its memory
        // does not grow with every admission.
        if cycle.is_some() && self.rec.tally.is_none() {
            self.rec
                .stats
                .quota_reserved_waits
                .push((w, at - queued_since));
        }
        let waited = (at - queued_since).as_secs_f64();
        let considered = if a.considered.is_empty() {
            String::new()
        } else {
            format!("; Flavors considered: {}", a.considered)
        };
        {
            let rt = &mut self.runtimes[w.index()];
            rt.usage = a.usage;
            rt.record.state = WorkloadState::Admitted;
            rt.record.admitted_at = Some(at);
            rt.record.admission = Some(Admission {
                cluster_queue: cq,
                pod_sets: a.pod_sets,
            });
        }
        if cycle.is_some() {
            self.record_event(
                w,
                EventType::Normal,
                KUEUE_ADMISSION,
                "QuotaReserved",
                format!("Quota reserved in ClusterQueue {cq_name}, wait time since queued was {waited:.0}s{considered}"),
                cycle,
            );
            self.record_event(
                w,
                EventType::Normal,
                KUEUE_ADMISSION,
                "Admitted",
                format!("Admitted by ClusterQueue {cq_name}, wait time since reservation was 0s"),
                cycle,
            );
        }
        self.set_condition_at(
            w,
            ConditionType::QuotaReserved,
            true,
            "QuotaReserved",
            format!("Quota reserved in ClusterQueue {cq_name}"),
            at,
        );
        // SetQuotaReservation resets an earlier eviction's conditions.
        for kind in [ConditionType::Evicted, ConditionType::Preempted] {
            let prev = self.runtimes[w.index()]
                .record
                .conditions
                .iter()
                .find(|c| c.kind == kind && c.status)
                .map(|c| c.message.clone());
            if let Some(prev) = prev {
                self.set_condition_at(
                    w,
                    kind,
                    false,
                    "QuotaReserved",
                    format!("Previously: {prev}"),
                    at,
                );
            }
        }
        self.set_condition_at(
            w,
            ConditionType::Admitted,
            true,
            "Admitted",
            "The workload is admitted".into(),
            at,
        );
        self.set_condition_at(
            w,
            ConditionType::PodsReady,
            false,
            "WaitForStart",
            "Not all pods are ready or succeeded".into(),
            at,
        );
        if let Some(wfpr) = &world.config.kueue.wait_for_pods_ready {
            let g = self.runtimes[w.index()].generation;
            self.events.push(
                (at + wfpr.timeout).max(self.now),
                Ev::PodsReadyTimeout(w, g),
            );
        }
        if let Some(max) = wl.max_execution_time {
            let rt = &self.runtimes[w.index()];
            let due = (at + max - rt.past_execution).max(self.now);
            self.events
                .push(due, Ev::MaxExecutionTime(w, rt.generation));
        }
        self.release_to_scheduler(w);
    }

    /// `waitForPodsReady`: an admitted workload whose pods are not all running by the timeout
    /// is evicted (`PodsReadyTimeout`) and requeued after a back-off of
    /// `backoffBase·2^(n−1)` capped at `backoffMax` (no jitter), or deactivated once it was
    /// requeued `backoffLimitCount` times.
    fn pods_ready_timeout(&mut self, w: WorkloadId) {
        if self.runtimes[w.index()].record.state != WorkloadState::Admitted {
            return;
        }
        let Some(cfg) = self.world.config.kueue.wait_for_pods_ready.clone() else {
            return;
        };
        let count = self.runtimes[w.index()].record.requeue_count;
        if cfg.backoff_limit.is_some_and(|limit| count + 1 > limit) {
            self.runtimes[w.index()].deactivated = true;
            self.release_quota(w);
            self.evict(
                w,
                "DeactivatedDueToRequeuingLimitExceeded",
                None,
                None,
                "The workload is deactivated due to exceeding the maximum number of re-queuing retries".into(),
                None,
            );
            return;
        }
        let n = count + 1;
        let backoff_ms = cfg
            .backoff_base
            .millis()
            .saturating_mul(1i64.checked_shl(n - 1).unwrap_or(i64::MAX))
            .min(cfg.backoff_max.millis());
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.requeue_count = n;
            rt.requeue_at = Some(self.now + SimDuration::from_millis(backoff_ms));
        }
        let wl = self.spec(w);
        let message = format!(
            "Exceeded the PodsReady timeout {}/{}",
            wl.namespace, wl.name
        );
        self.evict(w, "PodsReadyTimeout", None, None, message, None);
    }

    /// The PodsReady back-off ended: `Requeued=True` (`BackoffFinished`) and back to the heap.
    fn backoff_expired(&mut self, w: WorkloadId) {
        if self.runtimes[w.index()].record.state != WorkloadState::Pending {
            return;
        }
        self.runtimes[w.index()].requeue_at = None;
        self.set_condition(
            w,
            ConditionType::Requeued,
            true,
            "BackoffFinished",
            "The workload backoff was finished".into(),
        );
        if let (Some(key), QueueRef::Local(lq)) =
            (self.runtimes[w.index()].key, &self.spec(w).queue)
        {
            let cq = self.world.local_queue(*lq).cluster_queue;
            self.kueue.queues.push_active(cq, key);
            self.request_cycle();
        }
    }

    /// The LocalQueue controller's periodic `reconcileConsumedUsage`: every LocalQueue of an
    /// Admission Fair Sharing ClusterQueue decays its consumed usage towards what it holds.
    /// Sampling goes on only while something else is still to happen.
    fn afs_sample(&mut self) {
        self.progress.idle = true;
        let world = self.world;
        let now = self.now;
        let Some(afs) = &mut self.kueue.afs else {
            return;
        };
        for (i, lq) in world.local_queues.iter().enumerate() {
            if afs.enabled_cq[lq.cluster_queue.index()] {
                afs.decay(i, now);
            }
        }
        if !self.events.is_empty() {
            let next = now + SimDuration::from_millis((afs.sampling_s * 1000.0) as i64);
            self.events.push(next, Ev::AfsSample);
        }
    }

    /// A workload's quota usage per resource in base units, flavors flattened.
    fn usage_by_resource(&self, usage: &[(Fr, i64)]) -> Vec<f64> {
        let mut out = vec![0.0; self.world.resources.len()];
        for &(fr, a) in usage {
            let (_, r) = self.kueue.tree.split(fr);
            out[r.index()] += base_units(self.world, r, a);
        }
        out
    }

    /// Admission Fair Sharing at admission: the entry penalty (`requests × α(sampling
    /// interval)`, `CalculateEntryPenalty`) is pushed, and on `Admitted` folded into the
    /// decayed usage (`updateAfsConsumedUsage`).
    fn afs_admit(&mut self, w: WorkloadId, usage: &[(Fr, i64)]) {
        let Some(lq) = self.afs_lq(w) else { return };
        let add = self.usage_by_resource(usage);
        let now = self.now;
        let afs = self.kueue.afs.as_mut().expect("afs_lq implies afs");
        for (a, x) in afs.admitted[lq].iter_mut().zip(&add) {
            *a += x;
        }
        let alpha = afs.alpha(afs.sampling_s);
        afs.decay(lq, now);
        for (c, x) in afs.consumed[lq].iter_mut().zip(&add) {
            *c += x * alpha;
        }
    }

    /// The quota of `w` is released: its LocalQueue holds less.
    fn afs_release(&mut self, w: WorkloadId, usage: &[(Fr, i64)]) {
        let Some(lq) = self.afs_lq(w) else { return };
        let sub = self.usage_by_resource(usage);
        let afs = self.kueue.afs.as_mut().expect("afs_lq implies afs");
        for (a, x) in afs.admitted[lq].iter_mut().zip(&sub) {
            *a = (*a - x).max(0.0);
        }
    }

    fn afs_lq(&self, w: WorkloadId) -> Option<usize> {
        let afs = self.kueue.afs.as_ref()?;
        let QueueRef::Local(lq) = &self.spec(w).queue else {
            return None;
        };
        afs.enabled_cq[self.world.local_queue(*lq).cluster_queue.index()].then(|| lq.index())
    }

    /// `reconcileMaxExecutionTime`: the workload is deactivated and evicted.
    fn max_execution_time_exceeded(&mut self, w: WorkloadId) {
        if !matches!(
            self.runtimes[w.index()].record.state,
            WorkloadState::Admitted | WorkloadState::Running
        ) {
            return;
        }
        let max = self
            .spec(w)
            .max_execution_time
            .expect("scheduled only with a maximum");
        self.record_event(
            w,
            EventType::Warning,
            KUEUE_WORKLOAD_CONTROLLER,
            "MaximumExecutionTimeExceeded",
            format!(
                "The maximum execution time ({}s) exceeded",
                max.millis() / 1000
            ),
            None,
        );
        self.runtimes[w.index()].deactivated = true;
        // Deactivation (`spec.active: false`) removes the workload from the scheduler's cache
        // at once: its quota is free before its pods are gone.
        self.release_quota(w);
        self.evict(
            w,
            "DeactivatedDueToMaximumExecutionTimeExceeded",
            None,
            None,
            "The workload is deactivated due to exceeding the maximum execution time".into(),
            None,
        );
    }

    /// Evicts the targets of a preemption (`IssuePreemptions`); already evicted ones are left
    /// alone. Returns whether any eviction was new.
    fn issue_preemptions(&mut self, head: Head, targets: &[Target], cycle: u64) -> bool {
        let world = self.world;
        let preemptor = head.key.workload;
        let mut new = false;
        for t in targets {
            if self
                .kueue
                .admitted
                .candidate(t.workload)
                .is_none_or(|c| c.evicted)
            {
                continue;
            }
            new = true;
            let victim_cq = self
                .kueue
                .admitted
                .candidate(t.workload)
                .map(|c| c.cq)
                .expect("admitted");
            let message = format!(
                "Preempted to accommodate a workload (UID: {}, JobUID: {}) due to {}; preemptor path: {}; preemptee path: {}",
                self.spec(preemptor).uid,
                self.spec(preemptor).job_uid.as_deref().unwrap_or("UNKNOWN"),
                human_reason(t.reason),
                self.cq_path(head.cq),
                self.cq_path(victim_cq)
            );
            let (pp, vp) = (
                self.spec(preemptor).priority,
                self.spec(t.workload).priority,
            );
            let priorities = format!(
                "; preemptor effective priority: {pp} (base: {pp}, boost: 0); preemptee effective priority: {vp} (base: {vp}, boost: 0)"
            );
            self.record_event(
                t.workload,
                EventType::Normal,
                KUEUE_ADMISSION,
                "Preempted",
                format!("{message}{priorities}"),
                Some(cycle),
            );
            let victim = self.spec(t.workload);
            self.record_event(
                preemptor,
                EventType::Normal,
                KUEUE_ADMISSION,
                "PreemptedWorkload",
                format!(
                    "Preempted workload {}/{} (UID: {}) in ClusterQueue {}{priorities}",
                    victim.namespace,
                    victim.name,
                    victim.uid,
                    world.cluster_queue(victim_cq).name
                ),
                Some(cycle),
            );
            self.set_condition(
                t.workload,
                ConditionType::Preempted,
                true,
                t.reason.as_str(),
                message.clone(),
            );
            let preemptor_name = format!(
                "{}/{}",
                self.spec(preemptor).namespace,
                self.spec(preemptor).name
            );
            self.evict(
                t.workload,
                "Preempted",
                Some(t.reason.as_str()),
                Some(preemptor_name),
                message,
                Some(cycle),
            );
        }
        new
    }

    /// `/root/.../cq` (`buildCQPath`).
    fn cq_path(&self, cq: ClusterQueueId) -> String {
        let mut parts = vec![self.world.cluster_queue(cq).name.clone()];
        let mut n = self.kueue.tree.cq_node(cq);
        while let Some(p) = self.kueue.tree.parent(n) {
            let cohort = kueuesim_model::CohortId::from_index(
                p.0 as usize - self.world.cluster_queues.len(),
            );
            parts.push(self.world.cohorts[cohort.index()].name.clone());
            n = p;
        }
        parts.reverse();
        format!("/{}", parts.join("/"))
    }

    /// Evicts a workload holding quota: `Evicted=True`, its job is stopped, and its pods
    /// terminate; quota and nodes are released when they are gone (`PodsGone`).
    fn evict(
        &mut self,
        w: WorkloadId,
        reason: &'static str,
        preemption_reason: Option<&'static str>,
        preemptor: Option<String>,
        message: String,
        cycle: Option<u64>,
    ) {
        if let Some(c) = self.kueue.admitted.get_mut(w) {
            c.evicted = true;
        }
        self.sched.awaiting_placement.retain(|&(_, _, x)| x != w);
        let now = self.now;
        *self.rec.stats.evictions.entry(reason).or_default() += 1;
        if let Some(p) = preemption_reason {
            *self.rec.stats.preemptions.entry(p).or_default() += 1;
        }
        // The work done since the pods started running: kept up to the last checkpoint,
        // lost beyond it (`Simulation` `spec.preemption.progress`).
        if self.runtimes[w.index()].record.state == WorkloadState::Running {
            self.progress.running -= 1;
            let gpus = self.workload_gpus(w);
            let policy = self.world.config.progress;
            let rt = &mut self.runtimes[w.index()];
            let ran = now - rt.record.running_at.unwrap_or(now);
            let kept = match policy {
                ProgressPolicy::Restart => SimDuration::ZERO,
                ProgressPolicy::Checkpoint { interval } => {
                    SimDuration::from_millis(ran.millis() / interval.millis() * interval.millis())
                }
            };
            rt.progress_saved += kept;
            let lost = i128::from(gpus) * i128::from((ran - kept).millis());
            rt.record.lost_gpu_ms += lost;
            self.rec.stats.lost_gpu_ms += lost;
        }
        let generation = {
            let rt = &mut self.runtimes[w.index()];
            if let Some(at) = rt.record.admitted_at {
                rt.past_execution += now - at;
            }
            rt.record.state = WorkloadState::Evicted;
            rt.record.evictions.push(Eviction {
                at: self.now,
                reason,
                preemption_reason,
                preemptor,
            });
            rt.generation += 1;
            rt.generation
        };
        self.set_condition(w, ConditionType::Evicted, true, reason, message.clone());
        // The job is stopped and its pods stop being ready while they terminate: the job
        // reconciler's generatePodsReadyCondition turns a True PodsReady into WaitForRecovery
        // (which keeps blockAdmission waiting) until the quota is released.
        let ready = self.runtimes[w.index()]
            .record
            .conditions
            .iter()
            .any(|c| c.kind == ConditionType::PodsReady && c.status);
        if ready {
            self.set_condition(
                w,
                ConditionType::PodsReady,
                false,
                "WaitForRecovery",
                "At least one pod has failed, waiting for recovery".into(),
            );
        }
        self.record_event(
            w,
            EventType::Normal,
            KUEUE_ADMISSION,
            evicted_event_reason(reason),
            message,
            cycle,
        );
        self.progress.terminating += 1;
        self.events.push(
            self.now + self.world.config.pod_termination,
            Ev::PodsGone(w, generation),
        );
    }

    /// The pods of an evicted workload are gone: release its nodes and quota, and requeue it
    /// (`Requeued=True`) at its queue-order timestamp.
    fn pods_gone(&mut self, w: WorkloadId) {
        self.progress.terminating -= 1;
        self.release(w, false);
        let (reason, message) = self.runtimes[w.index()]
            .record
            .conditions
            .iter()
            .find(|c| c.kind == ConditionType::Evicted && c.status)
            .map(|c| (c.reason, c.message.clone()))
            .unwrap_or(("Evicted", String::new()));
        let deactivated = self.runtimes[w.index()].deactivated;
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = if deactivated {
                WorkloadState::Inactive
            } else {
                WorkloadState::Pending
            };
            rt.record.admission = None;
            rt.record.running_at = None;
        }
        // Only a preemption requeues at once (`setRequeued`); other evictions wait (back-off,
        // a stopped queue) or end (deactivation).
        self.set_condition(
            w,
            ConditionType::Requeued,
            reason == "Preempted",
            reason,
            message.clone(),
        );
        self.set_pending_condition(w, "PendingEvaluation", message);
        self.set_condition(
            w,
            ConditionType::PodsReady,
            false,
            "WaitForStart",
            "Not all pods are ready or succeeded".into(),
        );
        if deactivated {
            return;
        }
        let world = self.world;
        if let QueueRef::Local(lq) = &self.spec(w).queue {
            let lq = world.local_queue(*lq);
            let cq = lq.cluster_queue;
            // The workload controller's getQueueBlocker: a stopped LocalQueue takes nothing
            // back; a stopped ClusterQueue keeps it without popping it.
            if lq.stop_policy != StopPolicy::None {
                let msg = format!("LocalQueue {} is inactive", lq.name);
                self.set_pending_condition(w, admission::REASON_SUSPENDED, msg);
                return;
            }
            let key = self.queue_key(w);
            self.runtimes[w.index()].key = Some(key);
            let strategy = world.cluster_queue(cq).queueing_strategy;
            match self.runtimes[w.index()].requeue_at {
                // In its back-off window a workload waits as inadmissible.
                Some(at) if at > self.now => {
                    self.kueue.queues.park(cq, key);
                    let g = self.runtimes[w.index()].generation;
                    self.events.push(at, Ev::BackoffExpired(w, g));
                }
                _ => {
                    self.kueue.queues.add(cq, strategy, key);
                }
            }
            if self.kueue.cq_stopped[cq.index()] || self.kueue.tree.in_cycle(cq) {
                let msg = format!("ClusterQueue {} is inactive", world.cluster_queue(cq).name);
                self.set_pending_condition(w, admission::REASON_SUSPENDED, msg);
            }
            self.request_cycle();
        }
    }

    /// Gives back a workload's nodes and quota, and notifies the queues of the freed capacity.
    /// A finished workload keeps its placement in its record (for the report); an evicted one
    /// starts over.
    fn release(&mut self, w: WorkloadId, keep_placement: bool) {
        let managed_quota_only =
            !self.world.has_nodes() && self.runtimes[w.index()].record.admission.is_some();
        if managed_quota_only && self.runtimes[w.index()].record.running_at.is_some() {
            let gpus = self.workload_gpus(w);
            self.gpu_change(w, -gpus);
        }
        let released: Vec<(usize, NodeId)> = self.runtimes[w.index()]
            .record
            .placement
            .iter()
            .enumerate()
            .flat_map(|(ps, slots)| slots.iter().flatten().map(move |&n| (ps, n)))
            .collect();
        for (ps, node) in &released {
            let req = self.runtimes[w.index()].needs[*ps].requests.clone();
            self.sched.cluster.apply(self.world, *node, &req, -1);
            if let Some(g) = self.gpu {
                self.gpu_change(w, -req.get(g));
            }
        }
        if !keep_placement {
            for slots in &mut self.runtimes[w.index()].record.placement {
                slots.iter_mut().for_each(|s| *s = None);
            }
        }
        self.sched.awaiting_placement.retain(|&(_, _, x)| x != w);
        self.release_quota(w);
        if !released.is_empty() {
            self.retry_placements();
        }
    }

    /// Gives back the quota a workload holds (if it still does) and notifies the queues.
    fn release_quota(&mut self, w: WorkloadId) {
        if let Some(c) = self.kueue.admitted.remove(w) {
            self.track_ready(w);
            let usage = std::mem::take(&mut self.runtimes[w.index()].usage);
            self.afs_release(w, &usage);
            let node = self.kueue.tree.cq_node(c.cq);
            for (fr, amount) in usage {
                self.kueue.tree.remove_usage(node, fr, amount);
            }
            self.notify_capacity_freed(c.cq);
            // Upstream's scheduler loop keeps cycling while heads are waiting, so heads still
            // in a heap (StrictFIFO, or not yet tried) see the freed quota at once.
            if self.kueue.queues.any_active() {
                self.request_cycle();
            }
        }
    }

    /// Quota was freed in `cq`: its inadmissible workloads, or those of its whole cohort tree,
    /// return to their heaps after the batch period (`NotifyRetryInadmissible`).
    fn notify_capacity_freed(&mut self, cq: ClusterQueueId) {
        if self.kueue.tree.in_cycle(cq) {
            return;
        }
        let target = self.kueue.tree.root(self.kueue.tree.cq_node(cq));
        if !self.kueue.requeue_pending[target.0 as usize] {
            self.kueue.requeue_pending[target.0 as usize] = true;
            self.events.push(
                self.now + REQUEUE_BATCH_PERIOD,
                Ev::RequeueInadmissible(target),
            );
        }
    }

    /// The ClusterQueues of the subtree rooted at `n`.
    fn cqs_under(&self, n: NodeIdx) -> Vec<ClusterQueueId> {
        let mut out = Vec::new();
        let mut stack = vec![n];
        while let Some(n) = stack.pop() {
            match self.kueue.tree.as_cq(n) {
                Some(cq) => out.push(cq),
                None => stack.extend(self.kueue.tree.children(n).iter().copied()),
            }
        }
        out
    }

    fn requeue_inadmissible(&mut self, target: NodeIdx) {
        self.kueue.requeue_pending[target.0 as usize] = false;
        let mut moved = 0;
        let world = self.world;
        for cq in self.cqs_under(target) {
            // Namespace-mismatched workloads stay parked (`queueInadmissibleWorkloads`).
            let selector = &world.cluster_queue(cq).namespace_selector;
            // With no PodsReady back-off and a selector that takes every namespace, every
            // parked workload returns: move them all at once.
            let takes_all = selector.as_ref().is_some_and(|s| s.selects_everything());
            if takes_all && world.config.kueue.wait_for_pods_ready.is_none() {
                moved += self.kueue.queues.requeue_all_inadmissible(cq);
                continue;
            }
            let runtimes = &self.runtimes;
            let now = self.now;
            moved += self.kueue.queues.requeue_inadmissible(cq, |w| {
                // Still in its PodsReady back-off (`backoffWaitingTimeExpired`).
                if runtimes[w.index()].requeue_at.is_some_and(|at| at > now) {
                    return false;
                }
                world.namespace_selected(selector.as_ref(), &runtimes[w.index()].spec.namespace)
            });
        }
        if moved > 0 {
            self.request_cycle();
        } else {
            self.progress.idle = true;
        }
    }

    /// Hands the workload's pods to its scheduler: Kueue ungates/unsuspends them with the
    /// flavors' nodeLabels as nodeSelector and the flavors' tolerations added.
    fn release_to_scheduler(&mut self, w: WorkloadId) {
        let world = self.world;
        let wl = self.spec(w);
        let rt = &mut self.runtimes[w.index()];
        rt.needs = wl
            .pod_sets
            .iter()
            .enumerate()
            .map(|(i, ps)| {
                let mut selector: Vec<(String, String)> = ps
                    .node_selector
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                let mut tolerations = ps.tolerations.clone();
                if let Some(adm) = &rt.record.admission {
                    let mut flavors: Vec<_> = adm
                        .pod_sets
                        .get(i)
                        .map(|p| p.flavors.iter().map(|&(_, f)| f).collect())
                        .unwrap_or_default();
                    flavors.sort();
                    flavors.dedup();
                    for f in flavors {
                        let flavor = world.flavor(f);
                        selector.extend(
                            flavor
                                .node_labels
                                .iter()
                                .map(|(k, v)| (k.to_string(), v.to_string())),
                        );
                        tolerations.extend(flavor.tolerations.iter().cloned());
                    }
                }
                PodNeeds {
                    requests: ps.requests.clone(),
                    node_selector: Labels::new(selector),
                    tolerations,
                }
            })
            .collect();
        // Partial admission lowers the pod count the scheduler sees.
        rt.record.placement = wl
            .pod_sets
            .iter()
            .enumerate()
            .map(|(i, ps)| {
                let n = rt
                    .record
                    .admission
                    .as_ref()
                    .and_then(|a| a.pod_sets.get(i))
                    .map_or(ps.count, |a| a.count);
                vec![None; n as usize]
            })
            .collect();
        if !world.has_nodes() {
            // Quota-only: an admitted workload runs at once (after the pod start-up delay).
            self.schedule_running(w);
            return;
        }
        // Pods of the input already running on their nodes (a partly placed gang): bound
        // before the scheduler looks, on the first release only.
        if !wl.gang.bound_nodes.is_empty() && self.runtimes[w.index()].record.evictions.is_empty() {
            let mut it = wl.gang.bound_nodes.iter();
            'sets: for ps in 0..self.runtimes[w.index()].record.placement.len() {
                for idx in 0..self.runtimes[w.index()].record.placement[ps].len() {
                    let Some(&node) = it.next() else { break 'sets };
                    self.runtimes[w.index()].record.placement[ps][idx] = Some(node);
                    let req = self.runtimes[w.index()].needs[ps].requests.clone();
                    self.sched.cluster.apply(world, node, &req, 1);
                    if let Some(g) = self.gpu {
                        self.gpu_change(w, req.get(g));
                    }
                }
            }
        }
        self.sched
            .awaiting_placement
            .insert((Reverse(wl.priority), self.now, w));
        self.try_place(w);
    }

    /// GPUs taken (`delta` > 0) or given back by a workload: the run-wide and the workload's own
    /// GPU time.
    fn gpu_change(&mut self, w: WorkloadId, delta: i64) {
        let now = self.now;
        self.account_cq_gpus(w, now);
        let rt = &mut self.runtimes[w.index()];
        rt.record.gpu_ms += i128::from(rt.gpus_held) * i128::from((now - rt.gpus_since).millis());
        rt.gpus_held += delta;
        rt.gpus_since = now;
        self.rec.gpus_in_use += delta;
    }

    /// Adds the GPU time `w` held since its last change, up to `until`, to its ClusterQueue's
    /// hourly series.
    fn account_cq_gpus(&mut self, w: WorkloadId, until: SimTime) {
        let rt = &self.runtimes[w.index()];
        let (Some(adm), gpus) = (&rt.record.admission, rt.gpus_held) else {
            return;
        };
        if gpus == 0 || until <= rt.gpus_since {
            return;
        }
        let series = &mut self.rec.stats.cq_gpu_seconds_by_hour[adm.cluster_queue.index()];
        let (mut t, end) = (rt.gpus_since.millis().max(0), until.millis());
        while t < end {
            let hour = (t / 3_600_000) as usize;
            let next = ((hour as i64 + 1) * 3_600_000).min(end);
            if series.len() <= hour {
                series.resize(hour + 1, 0.0);
            }
            series[hour] += gpus as f64 * (next - t) as f64 / 1000.0;
            t = next;
        }
    }

    fn workload_gpus(&self, w: WorkloadId) -> i64 {
        let Some(g) = self.gpu else { return 0 };
        let rt = &self.runtimes[w.index()];
        rt.needs
            .iter()
            .zip(&rt.record.placement)
            .map(|(n, slots)| n.requests.get(g) * slots.len() as i64)
            .sum()
    }

    fn scheduler_of(&self, w: WorkloadId) -> SchedulerKind {
        let name = &self.spec(w).scheduler_name;
        self.world
            .config
            .scheduler(name)
            .unwrap_or(SchedulerKind::Kube)
    }

    /// One placement attempt; returns whether the workload is now fully placed.
    fn try_place(&mut self, w: WorkloadId) -> bool {
        let world = self.world;
        let kind = self.scheduler_of(w);
        let wl = self.spec(w);
        let rt = &self.runtimes[w.index()];
        let pods: Vec<(PodNeeds, Vec<Option<NodeId>>)> = rt
            .needs
            .iter()
            .cloned()
            .zip(rt.record.placement.iter().cloned())
            .collect();
        let total: usize = pods.iter().map(|(_, s)| s.len()).sum();
        // Ties are broken by a stream seeded per (seed, workload, attempt).
        self.sched.placement_attempts += 1;
        let seed = world.config.seed
            ^ (u64::from(w.0) << 32)
            ^ self
                .sched
                .placement_attempts
                .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        // Kueue TAS: pods go to their assigned domains (the ungater's nodeSelectors).
        let (pods, tas_index) = match self.tas_groups(w, &pods) {
            Some((groups, index)) => (groups, Some(index)),
            None => (pods, None),
        };
        let pod_name = |ps: usize, idx: usize| match &tas_index {
            Some(ix) => {
                let (p, i) = ix[ps][idx];
                wl.pod_name(p, i)
            }
            None => wl.pod_name(ps, idx),
        };
        let mut result = match kind {
            SchedulerKind::Kube => {
                placement::kube::place(world, &mut self.sched.cluster, &pods, seed)
            }
            SchedulerKind::Volcano => {
                let min_member = wl
                    .gang
                    .min_member
                    .map_or(total, |m| (m as usize).min(total));
                let highest_tier = wl.gang.network_topology.as_ref().and_then(|nt| {
                    if !nt.hard {
                        // Session open turns soft into hard at the virtual-root tier.
                        return Some(world.hypernodes.root_tier());
                    }
                    match nt.highest_tier.as_ref()? {
                        TierRef::Number(t) => Some(*t),
                        TierRef::Name(n) => world.hypernodes.tier_of_name(n),
                    }
                });
                // Subgroups: a hard tier of their own, else the job's (a soft subgroup under
                // a hard job is bounded by the job's tier).
                let subgroups: Vec<(Vec<usize>, i32)> = match highest_tier {
                    None => Vec::new(),
                    Some(job_limit) => {
                        wl.gang
                            .volcano_subgroups
                            .iter()
                            .map(|g| {
                                let own =
                                    g.network_topology.as_ref().filter(|nt| nt.hard).and_then(
                                        |nt| match nt.highest_tier.as_ref()? {
                                            TierRef::Number(t) => Some(*t),
                                            TierRef::Name(n) => world.hypernodes.tier_of_name(n),
                                        },
                                    );
                                (
                                    g.pod_sets.clone(),
                                    own.map_or(job_limit, |t| t.min(job_limit)),
                                )
                            })
                            .collect()
                    }
                };
                let job = placement::volcano::VolcanoJob {
                    pods: &pods,
                    min_member,
                    highest_tier,
                    pod_name: &pod_name,
                    seed,
                    subgroups: &subgroups,
                    min_task_member: &wl.gang.min_task_member,
                };
                placement::volcano::place(world, &mut self.sched.cluster, &job)
            }
            SchedulerKind::Kai => self.place_kai(w, &pods, total),
        };
        if let Some(ix) = &tas_index {
            for b in &mut result.bound {
                let (p, i) = ix[b.0][b.1];
                (b.0, b.1) = (p, i);
            }
            if let Some(u) = &mut result.unplaced {
                let (p, i) = ix[u.0][u.1];
                (u.0, u.1) = (p, i);
            }
        }
        let gpu = self.gpu;
        for &(ps, idx, node) in &result.bound {
            let rt = &mut self.runtimes[w.index()];
            rt.record.placement[ps][idx] = Some(node);
            if let Some(g) = gpu {
                let gpus = rt.needs[ps].requests.get(g);
                self.gpu_change(w, gpus);
            }
        }
        if result.domain.is_some() {
            self.runtimes[w.index()].record.topology_domain = result.domain.clone();
        }
        if !result.bound.is_empty() {
            self.runtimes[w.index()].kai_pipelined = 0;
        }
        match result.unplaced {
            None => {
                self.sched.awaiting_placement.retain(|&(_, _, x)| x != w);
                self.schedule_running(w);
                true
            }
            Some((_, _, message)) => {
                let reason = match kind {
                    SchedulerKind::Kube => "FailedScheduling",
                    SchedulerKind::Volcano | SchedulerKind::Kai => "Unschedulable",
                };
                self.record_event(
                    w,
                    EventType::Warning,
                    kind.event_source(),
                    reason,
                    message,
                    None,
                );
                if kind == SchedulerKind::Kai {
                    self.kai_reclaim(w);
                }
                false
            }
        }
    }

    /// KAI's reclaim action for a pending job of a KAI Queue (jobs Kueue does not manage;
    /// Kueue-managed ones are Kueue's to preempt): evict running jobs of queues above their
    /// fair share so the job fits, as `kai::reclaim_victims` picks them.
    fn kai_reclaim(&mut self, w: WorkloadId) {
        let world = self.world;
        let wl = self.spec(w);
        let (Some(queue), Some(g), QueueRef::Unmanaged) = (wl.gang.kai_queue, self.gpu, &wl.queue)
        else {
            return;
        };
        if self.runtimes[w.index()].kai_pipelined > 0 {
            return;
        }
        let nq = world.kai_queues.len();
        let mut allocated = vec![0i64; nq];
        let mut pending = vec![0i64; nq];
        let mut running = Vec::new();
        let waiting: Vec<WorkloadId> = self
            .sched
            .awaiting_placement
            .iter()
            .map(|&(_, _, x)| x)
            .collect();
        for (i, rt) in self.runtimes.iter() {
            let x = self.spec(WorkloadId::from_index(i));
            let Some(xq) = x.gang.kai_queue else { continue };
            if rt.needs.is_empty()
                || self.scheduler_of(WorkloadId::from_index(i)) != SchedulerKind::Kai
            {
                continue;
            }
            let (mut placed, mut unplaced) = (0, 0);
            for (ps, slots) in rt.record.placement.iter().enumerate() {
                let per = rt.needs.get(ps).map_or(0, |n| n.requests.get(g));
                for s in slots {
                    match s {
                        Some(_) => placed += per,
                        None => unplaced += per,
                    }
                }
            }
            // Pods of an evicted job are releasing: no longer its queue's. A pipelined job's
            // GPUs are already its queue's.
            if rt.record.state != WorkloadState::Evicted {
                allocated[xq] += placed;
            }
            allocated[xq] += rt.kai_pipelined;
            if waiting.contains(&WorkloadId::from_index(i)) {
                pending[xq] += (unplaced - rt.kai_pipelined).max(0);
            }
            if placed > 0
                && rt.record.state != WorkloadState::Evicted
                && x.queue == QueueRef::Unmanaged
            {
                running.push(placement::kai::RunningJob {
                    key: i,
                    queue: xq,
                    gpus: placed,
                    priority: x.priority,
                    created: x.created_at.millis(),
                });
            }
        }
        let total: i64 = world
            .nodes
            .iter()
            .map(|n| n.allocatable.get(g.index()).copied().unwrap_or(0))
            .sum();
        let requests: Vec<i64> = allocated.iter().zip(&pending).map(|(a, p)| a + p).collect();
        let fair = placement::kai::fair_shares(&world.kai_queues, total, &requests);
        let rt = &self.runtimes[w.index()];
        let pods: Vec<(PodNeeds, Vec<Option<NodeId>>)> = rt
            .needs
            .iter()
            .cloned()
            .zip(rt.record.placement.iter().cloned())
            .collect();
        let want: i64 = if wl.gang.pod_group_per_pod {
            placement::first_pending(&pods).map_or(0, |(ps, _)| pods[ps].0.requests.get(g))
        } else {
            pods.iter()
                .map(|(n, s)| n.requests.get(g) * s.iter().filter(|x| x.is_none()).count() as i64)
                .sum()
        };
        let total_pods: usize = pods.iter().map(|(_, s)| s.len()).sum();
        let victims = placement::kai::reclaim_victims(
            &world.kai_queues,
            &fair,
            &allocated,
            queue,
            want,
            &running,
            |victims| {
                let mut scratch = self.sched.cluster.clone();
                for &v in victims {
                    let vr = &self.runtimes[v];
                    for (ps, slots) in vr.record.placement.iter().enumerate() {
                        for n in slots.iter().flatten() {
                            scratch.apply(world, *n, &vr.needs[ps].requests, -1);
                        }
                    }
                }
                let saved = std::mem::replace(&mut self.sched.cluster, scratch);
                let r = self.place_kai(w, &pods, total_pods);
                self.sched.cluster = saved;
                !r.bound.is_empty()
            },
        );
        let Some(victims) = victims else { return };
        self.runtimes[w.index()].kai_pipelined = want;
        let by = format!("{}/{}", wl.namespace, wl.name);
        for v in victims {
            self.kai_evict(
                WorkloadId::from_index(v),
                &by,
                &world.kai_queues[queue].name,
            );
        }
    }

    /// KAI evicts a job for reclaim: its pods terminate (`podTermination`), then its
    /// controller's new pods wait for KAI again.
    fn kai_evict(&mut self, v: WorkloadId, by: &str, queue: &str) {
        let now = self.now;
        if self.runtimes[v.index()].record.state == WorkloadState::Running {
            self.progress.running -= 1;
            let gpus = self.workload_gpus(v);
            let rt = &mut self.runtimes[v.index()];
            let lost =
                i128::from(gpus) * i128::from((now - rt.record.running_at.unwrap_or(now)).millis());
            rt.record.lost_gpu_ms += lost;
            self.rec.stats.lost_gpu_ms += lost;
        }
        self.sched.awaiting_placement.retain(|&(_, _, x)| x != v);
        let generation = {
            let rt = &mut self.runtimes[v.index()];
            rt.record.state = WorkloadState::Evicted;
            rt.record.evictions.push(Eviction {
                at: now,
                reason: "Reclaim",
                preemption_reason: None,
                preemptor: Some(by.to_string()),
            });
            rt.generation += 1;
            rt.generation
        };
        *self.rec.stats.evictions.entry("Reclaim").or_default() += 1;
        self.record_event(
            v,
            EventType::Normal,
            SchedulerKind::Kai.event_source(),
            "Evict",
            format!("Evicted to reclaim resources for {by} of queue {queue}, which is below its fair share"),
            None,
        );
        self.events.push(
            now + self.world.config.pod_termination,
            Ev::KaiPodsGone(v, generation),
        );
    }

    /// The reclaimed pods are gone: nodes released (the reclaimer, waiting, is placed), and
    /// the job's new pods wait for KAI.
    fn kai_pods_gone(&mut self, v: WorkloadId) {
        self.release(v, false);
        {
            let rt = &mut self.runtimes[v.index()];
            rt.record.state = WorkloadState::Pending;
            rt.record.running_at = None;
        }
        let prio = self.spec(v).priority;
        self.sched
            .awaiting_placement
            .insert((Reverse(prio), self.now, v));
        self.try_place(v);
    }

    /// What Kueue's TAS cache sees: the nodes' free capacity minus the pods of admitted TAS
    /// workloads assigned to them but not bound yet. Empty when no flavor is a TAS flavor.
    fn tas_capacity(&self) -> crate::tas::TasCapacity {
        let world = self.world;
        let Some(base) = &self.sched.tas_base else {
            return crate::tas::TasCapacity::none();
        };
        let mut tas = crate::tas::TasCapacity {
            nodes: self.sched.cluster.nodes.clone(),
            in_flavor: base.in_flavor.clone(),
            leaves: base.leaves.clone(),
            empty: base.empty.clone(),
            exclusions: base.exclusions.clone(),
            orders: base.orders.clone(),
        };
        // The workloads holding quota, in id order (the assumed usage is spread over a
        // domain's nodes greedily, so the order matters).
        for w in self.kueue.admitted.ids_sorted() {
            let rt = &self.runtimes[w.index()];
            let Some(adm) = &rt.record.admission else {
                continue;
            };
            for (ps, psa) in adm.pod_sets.iter().enumerate() {
                let Some(topo) = &psa.topology else { continue };
                let t = &world.topologies[topo.topology];
                let placed = rt.record.placement.get(ps).map_or(&[][..], Vec::as_slice);
                let domains: Vec<(kueuesim_model::DomainId, u32)> = topo
                    .domains
                    .iter()
                    .map(|&(d, k)| {
                        let bound = placed
                            .iter()
                            .flatten()
                            .filter(|&&n| {
                                t.domain_of(n)
                                    .is_some_and(|x| t.ancestors(x).any(|a| a == d))
                            })
                            .count() as u32;
                        (d, k.saturating_sub(bound))
                    })
                    .collect();
                let requests = &self.spec(w).pod_sets[ps].requests;
                tas.apply(
                    world,
                    &crate::tas::TopologyAssignment {
                        topology: topo.topology,
                        domains,
                    },
                    requests,
                    1,
                );
            }
        }
        tas
    }

    /// A TAS workload's pods as Kueue's TopologyUngater releases them: per assigned domain, a
    /// group of pods whose nodeSelector pins the domain's level values. Returns the groups and,
    /// per group, the (pod set, pod index) of each of its pods.
    #[allow(clippy::type_complexity)]
    fn tas_groups(
        &self,
        w: WorkloadId,
        pods: &[(PodNeeds, Vec<Option<NodeId>>)],
    ) -> Option<(
        Vec<(PodNeeds, Vec<Option<NodeId>>)>,
        Vec<Vec<(usize, usize)>>,
    )> {
        let world = self.world;
        let adm = self.runtimes[w.index()].record.admission.as_ref()?;
        if adm.pod_sets.iter().all(|p| p.topology.is_none()) {
            return None;
        }
        let mut groups = Vec::new();
        let mut index = Vec::new();
        for (ps, (needs, slots)) in pods.iter().enumerate() {
            match adm.pod_sets.get(ps).and_then(|p| p.topology.as_ref()) {
                None => {
                    groups.push((needs.clone(), slots.clone()));
                    index.push((0..slots.len()).map(|i| (ps, i)).collect());
                }
                Some(topo) => {
                    let t = &world.topologies[topo.topology];
                    let kueuesim_model::topology::TopologySource::Levels { labels } = &t.source
                    else {
                        return None;
                    };
                    let mut next = 0;
                    for &(d, k) in &topo.domains {
                        let mut needs = needs.clone();
                        let mut sel: Vec<(String, String)> = needs
                            .node_selector
                            .iter()
                            .map(|(a, b)| (a.to_string(), b.to_string()))
                            .collect();
                        for a in t
                            .ancestors(d)
                            .filter(|&a| a != kueuesim_model::DomainId::ROOT)
                        {
                            let dom = t.domain(a);
                            sel.push((labels[dom.depth as usize - 1].clone(), dom.value.clone()));
                        }
                        needs.node_selector = Labels::new(sel);
                        let take = (k as usize).min(slots.len().saturating_sub(next));
                        groups.push((needs, slots[next..next + take].to_vec()));
                        index.push((next..next + take).map(|i| (ps, i)).collect());
                        next += take;
                    }
                }
            }
        }
        Some((groups, index))
    }

    /// KAI: one PodGroup for the workload, or (a batch Job: KAI's job grouper) one PodGroup
    /// per pod, each placed on its own.
    fn place_kai(
        &mut self,
        w: WorkloadId,
        pods: &[(PodNeeds, Vec<Option<NodeId>>)],
        total: usize,
    ) -> placement::Placement {
        let world = self.world;
        let wl = self.spec(w);
        let pod_name = |ps: usize, idx: usize| format!("{}/{}", wl.namespace, wl.pod_name(ps, idx));
        let constraint = match kai_constraint(world, &wl) {
            Ok(c) => c,
            Err(message) => {
                let (ps, idx) = placement::first_pending(pods).unwrap_or((0, 0));
                return placement::Placement {
                    unplaced: Some((ps, idx, message)),
                    ..Default::default()
                };
            }
        };
        if !wl.gang.kai_subgroups.is_empty() {
            let mut constraints = Vec::new();
            for g in &wl.gang.kai_subgroups {
                match g
                    .constraint
                    .as_ref()
                    .map(|c| resolve_kai(world, c, &format!("sub-group {}", g.name)))
                {
                    None => constraints.push(None),
                    Some(Ok(c)) => constraints.push(c),
                    Some(Err(message)) => {
                        let (ps, idx) = placement::first_pending(pods).unwrap_or((0, 0));
                        return placement::Placement {
                            unplaced: Some((ps, idx, message)),
                            ..Default::default()
                        };
                    }
                }
            }
            let tree = placement::kai::KaiTree {
                subgroups: &wl.gang.kai_subgroups,
                constraints,
                pod_set_subgroup: &wl.gang.pod_set_subgroup,
            };
            let job_name = format!("{}/pg-{}", wl.namespace, wl.name);
            let job = placement::kai::KaiJob {
                pods,
                min_member: wl
                    .gang
                    .min_member
                    .map_or(total, |m| (m as usize).min(total)),
                constraint,
                job_name: &job_name,
                pod_name: &pod_name,
            };
            return placement::kai::place_tree(world, &mut self.sched.cluster, &job, &tree);
        }
        if !wl.gang.pod_group_per_pod {
            let job_name = format!("{}/pg-{}", wl.namespace, wl.name);
            let min_member = wl
                .gang
                .min_member
                .map_or(total, |m| (m as usize).min(total));
            let job = placement::kai::KaiJob {
                pods,
                min_member,
                constraint,
                job_name: &job_name,
                pod_name: &pod_name,
            };
            return placement::kai::place(world, &mut self.sched.cluster, &job);
        }
        let mut out = placement::Placement::default();
        for (ps, (_, slots)) in pods.iter().enumerate() {
            for (idx, slot) in slots.iter().enumerate() {
                if slot.is_some() {
                    continue;
                }
                // This pod alone, as its own PodGroup of minMember 1.
                let single = [(pods[ps].0.clone(), vec![None])];
                let job_name = format!(
                    "{}/pg-{}",
                    wl.namespace,
                    pod_name(ps, idx).rsplit('/').next().unwrap_or_default()
                );
                let this_pod = |_: usize, _: usize| pod_name(ps, idx);
                let job = placement::kai::KaiJob {
                    pods: &single,
                    min_member: 1,
                    constraint,
                    job_name: &job_name,
                    pod_name: &this_pod,
                };
                let r = placement::kai::place(world, &mut self.sched.cluster, &job);
                out.bound
                    .extend(r.bound.iter().map(|&(_, _, n)| (ps, idx, n)));
                if r.domain.is_some() {
                    out.domain = r.domain;
                }
                if out.unplaced.is_none() {
                    out.unplaced = r.unplaced.map(|(_, _, m)| (ps, idx, m));
                }
            }
        }
        out
    }

    /// Retries every workload waiting for nodes, in scheduler queue order.
    ///
    /// Within one pass, a workload whose pods, bindings, gang and topology request are those
    /// of one that just failed is not tried again: nothing it could use changed in between
    /// (placements in the pass only take capacity), so it would fail the same way and its
    /// scheduler's event would repeat word for word (Kubernetes aggregates such events).
    /// This keeps a long queue of identical pods from costing a full node scan each per
    /// release.
    fn retry_placements(&mut self) {
        let waiting: Vec<WorkloadId> = self
            .sched
            .awaiting_placement
            .iter()
            .map(|&(_, _, w)| w)
            .collect();
        /// A workload's gang request, compared by value.
        struct GangOf<'w>(Spec<'w>);
        impl PartialEq for GangOf<'_> {
            fn eq(&self, other: &Self) -> bool {
                self.0.gang == other.0.gang
            }
        }
        type Key<'k> = (
            SchedulerKind,
            Vec<(PodNeeds, Vec<Option<NodeId>>)>,
            GangOf<'k>,
            Option<Vec<Option<crate::tas::TopologyAssignment>>>,
        );
        let mut failed: Vec<Key<'w>> = Vec::new();
        for w in waiting {
            let rt = &self.runtimes[w.index()];
            let key: Key<'w> = (
                self.scheduler_of(w),
                rt.needs
                    .iter()
                    .cloned()
                    .zip(rt.record.placement.iter().cloned())
                    .collect(),
                GangOf(rt.spec.clone()),
                rt.record
                    .admission
                    .as_ref()
                    .map(|a| a.pod_sets.iter().map(|p| p.topology.clone()).collect()),
            );
            if failed.contains(&key) {
                continue;
            }
            if !self.try_place(w) {
                failed.push(key);
            }
        }
    }

    /// A pod's name as its controller would name it (see `Workload::pod_name`).
    pub fn pod_name(&self, w: WorkloadId, ps: usize, idx: usize) -> String {
        self.spec(w).pod_name(ps, idx)
    }

    fn schedule_running(&mut self, w: WorkloadId) {
        let rt = &self.runtimes[w.index()];
        let at = self.now.max(rt.starts_after) + self.world.config.pod_startup;
        self.events.push(at, Ev::PodsRunning(w, rt.generation));
    }

    fn pods_running(&mut self, w: WorkloadId) {
        let managed = self.runtimes[w.index()].record.admission.is_some();
        if managed && !self.world.has_nodes() {
            // Quota-only: GPU use is measured against quota, so only admitted GPUs count.
            let gpus = self.workload_gpus(w);
            self.gpu_change(w, gpus);
        }
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = WorkloadState::Running;
            rt.record.running_at = Some(self.now);
        }
        self.progress.running += 1;
        self.progress.last_progress = self.now;
        if managed {
            self.set_condition(
                w,
                ConditionType::PodsReady,
                true,
                "Started",
                "All pods reached readiness and the workload is running".into(),
            );
        }
        if let Some(d) = self.spec(w).duration {
            let rt = &self.runtimes[w.index()];
            let remaining = (d - rt.progress_saved).max(SimDuration::ZERO);
            let g = rt.generation;
            self.events.push(self.now + remaining, Ev::Finish(w, g));
        }
    }

    fn finish(&mut self, w: WorkloadId) {
        self.progress.running -= 1;
        self.progress.last_progress = self.now;
        let managed = self.runtimes[w.index()].record.admission.is_some();
        self.release(w, true);
        {
            let rt = &mut self.runtimes[w.index()];
            rt.record.state = WorkloadState::Finished;
            rt.record.finished_at = Some(self.now);
            rt.generation += 1;
        }
        if managed {
            self.set_condition(
                w,
                ConditionType::Finished,
                true,
                "Succeeded",
                "Reached expected number of succeeded pods".into(),
            );
        }
        if let Some(tally) = &mut self.rec.tally {
            let rt = self.runtimes.remove(w.index()).expect("finishing workload");
            self.kueue.uid_labels.remove(&rt.uid, w);
            tally.add(self.world, &rt.spec, &rt.record);
        }
    }

    fn set_condition(
        &mut self,
        w: WorkloadId,
        kind: ConditionType,
        status: bool,
        reason: &'static str,
        message: String,
    ) {
        self.set_condition_at(w, kind, status, reason, message, self.now);
    }

    /// Sets a condition the way `apimeta.SetStatusCondition` does: lastTransitionTime moves
    /// only when the status changes.
    fn set_condition_at(
        &mut self,
        w: WorkloadId,
        kind: ConditionType,
        status: bool,
        reason: &'static str,
        message: String,
        at: SimTime,
    ) {
        let conds = &mut self.runtimes[w.index()].record.conditions;
        match conds.iter_mut().find(|c| c.kind == kind) {
            Some(c) => {
                if c.status != status {
                    c.at = at;
                }
                c.status = status;
                c.reason = reason;
                c.message = message;
            }
            None => conds.push(Condition {
                kind,
                status,
                reason,
                message,
                at,
            }),
        }
        if kind == ConditionType::PodsReady {
            self.track_ready(w);
        }
    }

    /// Records an event, folding an exact repeat of the workload's previous event of the same
    /// source into it (as the event recorder aggregates repeats into a count).
    fn record_event(
        &mut self,
        w: WorkloadId,
        kind: EventType,
        source: &'static str,
        reason: &'static str,
        message: String,
        cycle: Option<u64>,
    ) {
        let events = &mut self.runtimes[w.index()].record.events;
        if let Some(last) = events.iter().rev().find(|e| e.source == source)
            && last.kind == kind
            && last.reason == reason
            && last.message == message
        {
            return;
        }
        events.push(Event {
            at: self.now,
            kind,
            source,
            reason,
            message,
            cycle,
        });
    }
}

/// An amount in Kueue units as Admission Fair Sharing counts it: base units, so cores for
/// cpu (Kueue keeps millicores) and the amount itself for everything else.
fn base_units(world: &World, r: ResourceId, amount: i64) -> f64 {
    if world.resources.name(r) == "cpu" {
        amount as f64 / 1000.0
    } else {
        amount as f64
    }
}

/// `HumanReadablePreemptionReasons`.
fn human_reason(r: PreemptionReason) -> &'static str {
    match r {
        PreemptionReason::InClusterQueue => "prioritization in the ClusterQueue",
        PreemptionReason::InCohortReclamation => "reclamation within the cohort",
        PreemptionReason::InCohortFairSharing => "Fair Sharing within the cohort",
        PreemptionReason::InCohortReclaimWhileBorrowing => {
            "reclamation within the cohort while borrowing"
        }
    }
}

/// The event reason of an eviction: `Evicted` + `DueTo` + the Evicted condition's reason.
fn evicted_event_reason(reason: &str) -> &'static str {
    match reason {
        "Preempted" => "EvictedDueToPreempted",
        "PodsReadyTimeout" => "EvictedDueToPodsReadyTimeout",
        "ClusterQueueStopped" => "EvictedDueToClusterQueueStopped",
        "LocalQueueStopped" => "EvictedDueToLocalQueueStopped",
        "Deactivated" => "EvictedDueToDeactivated",
        "DeactivatedDueToMaximumExecutionTimeExceeded" => {
            "EvictedDueToDeactivatedDueToMaximumExecutionTimeExceeded"
        }
        "DeactivatedDueToRequeuingLimitExceeded" => {
            "EvictedDueToDeactivatedDueToRequeuingLimitExceeded"
        }
        _ => "Evicted",
    }
}

/// The workload's KAI topology constraint resolved against its Topology: its own
/// (`kai.scheduler/topology*` annotations or its PodGroup) or the platform default
/// (`spec.kai`). Errors are the scheduler's messages for a constraint it cannot use.
fn kai_constraint(
    world: &World,
    wl: &kueuesim_model::Workload,
) -> Result<Option<placement::kai::KaiConstraint>, String> {
    match (&wl.gang.kai_topology, &world.config.kai) {
        (Some(c), _) => resolve_kai(world, c, "workload"),
        (None, kai) => match (&kai.default_topology, &kai.default_preferred_level) {
            (Some(t), Some(level)) => resolve_kai(
                world,
                &kueuesim_model::KaiTopologyConstraint {
                    topology: t.clone(),
                    required: None,
                    preferred: Some(level.clone()),
                },
                "workload",
            ),
            _ => Ok(None),
        },
    }
}

/// One KAI `topologyConstraint` resolved to level depths of its Topology; `who` is
/// `workload` or `sub-group <name>` in KAI's messages.
fn resolve_kai(
    world: &World,
    c: &kueuesim_model::KaiTopologyConstraint,
    who: &str,
) -> Result<Option<placement::kai::KaiConstraint>, String> {
    let topology = &c.topology;
    if c.required.is_none() && c.preferred.is_none() {
        return Ok(None);
    }
    let Ok(index) = world
        .topologies
        .binary_search_by(|t| t.name.as_str().cmp(topology))
    else {
        return Err(format!("Requested topology {topology} does not exist"));
    };
    let t = &world.topologies[index];
    let not_found = |which: &str, label: &str| {
        format!(
            "Unable to schedule podgroup: topology constraint error: {who} specified '{label}' as the {which} topology constraint level, but the topology tree '{topology}' does not contain a level with this name."
        )
    };
    let depth = |which: &str, label: &Option<String>| -> Result<Option<u32>, String> {
        let Some(label) = label else { return Ok(None) };
        match t.tier_of_level(label) {
            Some(tier) => Ok(Some((t.root_tier() - tier) as u32)),
            None => Err(not_found(which, label)),
        }
    };
    let required = depth("required", &c.required)?;
    let preferred = depth("preferred", &c.preferred)?;
    if let (Some(r), Some(p)) = (required, preferred)
        && p < r
    {
        return Err(not_found(
            "preferred",
            c.preferred.as_deref().unwrap_or_default(),
        ));
    }
    Ok(Some(placement::kai::KaiConstraint {
        topology: index,
        required,
        preferred,
    }))
}
