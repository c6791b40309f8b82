//! The runtime state of one workload (`Runtime`), its spec (the world's or a streamed one) and
//! its scheduling-shape class (`SchedulingEquivalenceHashing`).

use std::collections::BTreeMap;
use std::rc::Rc;

use kueuesim_model::quota::Fr;
use kueuesim_model::{NodeId, SchedulerKind, SimDuration, SimTime, Workload, WorkloadId};

use crate::admission;
use crate::outcome::{Wide, WorkloadRecord, WorkloadState};
use crate::placement::PodNeeds;
use crate::queues::QueueKey;
use crate::window::Window;

/// A workload's spec: the world's own, or one the run was streamed (shared, so a handle
/// outlives any borrow of the simulation).
#[derive(Clone, Debug)]
pub(super) enum Spec<'w> {
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

    fn last_assignment(&self, w: WorkloadId) -> Option<&admission::ScanProgress> {
        self[w.index()].last_assignment.as_deref()
    }

    fn admission(&self, w: WorkloadId) -> Option<&[crate::outcome::PodSetAssignment]> {
        self[w.index()]
            .record
            .admission
            .as_ref()
            .map(|a| a.pod_sets.as_slice())
    }
}

// Word-aligned (`outcome::Wide`), so that its box is a plain `mi_malloc` (`kueuesim-alloc`):
// one per arriving workload.
const _: () = assert!(std::mem::align_of::<Runtime<'static>>() <= std::mem::size_of::<usize>());

/// The runtime state of one workload.
#[derive(Clone, Debug)]
pub(super) struct Runtime<'w> {
    /// Its spec.
    pub(super) spec: Spec<'w>,
    /// The scheduler its `schedulerName` names (kube-scheduler when the config names none),
    /// looked up once on arrival: the spec does not change, and every epoch keeps the
    /// start's config (`World::epochs`; `scheduler_of` checks it in debug builds).
    pub(super) scheduler: SchedulerKind,
    /// Controller latency: its pods start no earlier than its admission's API write is done.
    pub(super) starts_after: SimTime,
    /// Bumped whenever scheduled PodsRunning/Finish/PodsGone events become stale.
    pub(super) generation: u32,
    /// Per pod set, what one pod needs from a node (set when released to its scheduler).
    pub(super) needs: Vec<PodNeeds>,
    /// KAI: milli-GPUs this pending job is pipelined on (victims of its reclaim are terminating);
    /// they count as its queue's allocation until it is placed.
    pub(super) kai_pipelined: i64,
    /// KAI: the CPU (millicores) and memory (bytes) the job is pipelined on, as
    /// `kai_pipelined` (a job asking no GPUs is pipelined on these alone).
    pub(super) kai_pipelined_cpu_memory: [i64; 2],
    /// KAI: when this pending job tries its actions again because a min-runtime that kept a
    /// victim from it ends then (`Ev::KaiProtectionEnds`); None when none is due.
    pub(super) kai_retry_at: Option<SimTime>,
    /// KAI: the pods KAI's consolidation is moving (pod set, index, planned node) while they
    /// terminate; empty otherwise.
    pub(super) kai_moves: Vec<(usize, usize, NodeId)>,
    /// KAI: pods (pod set, index) of this job that reclaim or preempt evicted while the job
    /// keeps its other pods (an elastic victim above its minimum), terminating until
    /// `Ev::KaiVictimPodsGone`.
    pub(super) kai_releasing: Vec<(usize, usize)>,
    /// KAI: the victims of the reclaim or preempt that pipelined this job, when one of them
    /// loses only some pods (victim, its evicted pods or None for the whole job, the whole
    /// job's generation then): all go at once at `Ev::KaiVictimPodsGone`.
    pub(super) kai_victims: Vec<KaiVictim>,
    /// KAI: the device share each moved GPU-share pod is planned onto (pod set, index,
    /// claim), held on its planned node with `kai_moves`; empty otherwise.
    pub(super) kai_move_claims: Vec<(usize, usize, crate::placement::devices::Claim)>,
    /// KAI: the job whose consolidation moves them (set with `kai_moves`), and this job's
    /// generation then.
    pub(super) kai_moved_for: Option<(WorkloadId, u32)>,
    /// KAI: what a job KAI's consolidation pipelined holds of its planned nodes while the
    /// moved pods terminate (node, requests).
    pub(super) kai_holds: Vec<(NodeId, kueuesim_model::ResourceList)>,
    /// KAI: the jobs whose pods this job's consolidation moves.
    pub(super) kai_movers: Vec<WorkloadId>,
    /// KAI's `LastStartTimestamp`: when its scheduler last allocated it with none of its pods
    /// bound (allocate's `setLastStartTimestamp`), or the input's PodGroup annotation for a
    /// job running at the start; None: never (the min-runtimes do not protect it).
    pub(super) kai_last_start: Option<SimTime>,
    /// Volcano: its PodGroup is Inqueue (let in by the enqueue action, or by allocate
    /// without one); only read when the volcano-scheduler.conf has queue plugins.
    pub(super) volcano_inqueue: bool,
    /// Volcano: when the victims its `preempt` or `reclaim` action pipelined this pending
    /// job onto are gone. Until then, and at that instant (other victims may be going at
    /// it too), it asks for no more evictions (upstream's pipelined task holds their
    /// resources); at that instant it is tried first; should it still not bind, it may
    /// preempt or reclaim again when it is next tried, as in upstream's next session.
    pub(super) volcano_pipelined: Option<kueuesim_model::SimTime>,
    /// Volcano: its pods that `preempt` or `reclaim` evicted, terminating until the time
    /// given (upstream's `Releasing`): (gone at, pod set, index, by reclaim).
    pub(super) volcano_releasing: Vec<(kueuesim_model::SimTime, usize, usize, bool)>,
    /// Its pods were given back (`release`): done or evicted, even while its record still
    /// names their nodes. Volcano's and KAI's queues count its pods no more (until a KAI
    /// victim's new pods wait for KAI again, `kai_pods_gone`).
    pub(super) released: bool,
    /// Quota usage held, to give back.
    pub(super) usage: Vec<(Fr, i64)>,
    /// Its position in its ClusterQueue's queue.
    pub(super) key: Option<QueueKey>,
    /// Time spent admitted before the latest admission (`accumulatedPastExecutionTimeSeconds`).
    pub(super) past_execution: SimDuration,
    /// Deactivated (`spec.active: false`): never requeued.
    pub(super) deactivated: bool,
    /// A serving replica deleted by a scale-down while its pods terminated: done once they
    /// are gone (`serving`).
    pub(super) scaled_down: bool,
    /// Running time saved by checkpoints (`ProgressPolicy::Checkpoint`).
    pub(super) progress_saved: SimDuration,
    /// GPUs currently held and since when (for per-workload GPU time).
    pub(super) gpus_held: i64,
    pub(super) gpus_since: SimTime,
    /// End of the PodsReady back-off (`requeueState.requeueAt`).
    pub(super) requeue_at: Option<SimTime>,
    /// Holds quota without `PodsReady=True` (in the cache's `WorkloadsNotReady`).
    pub(super) not_ready: bool,
    /// The label of its UID (`uid_order`), in its queue key and candidate record.
    pub(super) uid_label: u64,
    /// Its scheduling-shape class (`SchedulingEquivalenceHashing`).
    pub(super) shape: u32,
    /// While pending: how far its last flavor scan got (`Info.LastAssignment`), kept in its
    /// queue between attempts and dropped when it is admitted or preempts.
    pub(super) last_assignment: Option<Box<admission::ScanProgress>>,
    /// With GPU devices: the devices its bound pods hold, to give back on release.
    pub(super) claims: Vec<(NodeId, crate::placement::devices::Claim)>,
    /// With Volcano vGPU: the vGPU devices its bound pods hold, to give back on release.
    pub(super) vgpu: Vec<(NodeId, crate::placement::volcano_vgpu::VgpuClaim)>,
    /// Some of its pods ended early and their replacements are not all placed yet: a gang
    /// may then hold fewer pods than its minMember.
    pub(super) replacing: bool,
    /// Kueue TAS: the node of its topology assignment that failed and whose pods wait for a
    /// replacement node (`status.unhealthyNodes`, `TASFailedNodeReplacement`).
    pub(super) unhealthy_node: Option<NodeId>,
    /// How often its pods all started running (a run after the first is a restart).
    pub(super) runs: u32,
    /// Pods it lost (drained, removed, failed), counted against its `backoffLimit`.
    pub(super) pods_lost: u32,
    /// Pods lost since its last JobSet restart (a child Job's failures).
    pub(super) pods_lost_since_restart: u32,
    /// JobSet restarts so far (`failurePolicy.maxRestarts`).
    pub(super) job_restarts: u32,
    /// KAI: since when its gang has been stale (fewer bound pods than a minMember, some
    /// still bound: `PodGroupInfo.IsStale`), KAI's `StalenessInfo.TimeStamp`; and the count
    /// of such stale periods, which the due stale-gang check must match.
    pub(super) kai_stale_since: Option<SimTime>,
    pub(super) kai_stale_epoch: u32,
    /// When it last lost pods while admitted: the quota it holds counts as held without
    /// running pods from then (`close_idle_quota`), not from its admission.
    pub(super) lost_at: Option<SimTime>,
    /// Its part in `pendingBoundBy` (`bound`) and since when.
    pub(super) bound: super::bound::Bound,
    pub(super) bound_since: SimTime,
    pub(super) record: WorkloadRecord,
}

impl Runtime<'_> {
    /// KAI: whether this pending job is pipelined onto its victims' releasing resources
    /// (GPUs, or CPU and memory for a job asking none).
    pub(super) fn kai_is_pipelined(&self) -> bool {
        self.kai_pipelined > 0 || self.kai_pipelined_cpu_memory.iter().any(|&x| x > 0)
    }

    /// Whether some pod is not placed yet.
    pub(super) fn has_unplaced(&self) -> bool {
        self.record.placement.iter().flatten().any(Option::is_none)
    }

    /// Its pods as its scheduler sees them: per pod set, what one pod needs and where each
    /// of its pods is bound.
    pub(super) fn pods(&self) -> Vec<(PodNeeds, Vec<Option<NodeId>>)> {
        self.needs
            .iter()
            .cloned()
            .zip(self.record.placement.iter().cloned())
            .collect()
    }

    /// `pods`, written over `out` with the vectors it holds: a pod set's needs are copied
    /// only where they differ from `out`'s, its bindings into the vector already there. A
    /// placement attempt reads its pods this way (`try_place`, and a retry's key), so a
    /// buffer kept from one attempt to the next allocates nothing once it has held a
    /// workload of the same pod sets.
    pub(super) fn pods_into(&self, out: &mut Vec<(PodNeeds, Vec<Option<NodeId>>)>) {
        out.truncate(self.needs.len().min(self.record.placement.len()));
        for (i, (needs, slots)) in self.needs.iter().zip(&self.record.placement).enumerate() {
            match out.get_mut(i) {
                Some((n, s)) => {
                    if n != needs {
                        // Field by field, into the vectors `n` has (`ResourceList::clone_from`).
                        let PodNeeds {
                            requests,
                            node_selector,
                            tolerations,
                        } = needs;
                        n.requests.clone_from(requests);
                        n.node_selector.clone_from(node_selector);
                        n.tolerations.clone_from(tolerations);
                    }
                    s.clone_from(slots);
                }
                None => out.push((needs.clone(), slots.clone())),
            }
        }
        debug_assert!(*out == self.pods(), "pods_into gives pods");
    }
}

/// Scheduling-shape classes (`SchedulingEquivalenceHashing`), numbered in order of first
/// arrival: workloads of equal priority and pod sets (name, count, minCount, requests, the
/// template's scheduling spec: nodeSelector, tolerations, ..., and the TAS topology and slice
/// requests, as `computeSchedulingHash` hashes `topologyRequest`) share one. Found by a hash of
/// those fields; each bucket keeps one workload per class to compare with, so an arrival of a
/// known shape allocates nothing. The numbering is by arrival, whatever the hash.
#[derive(Clone, Default)]
pub(super) struct ShapeClasses<'w> {
    buckets: BTreeMap<u64, Vec<(Spec<'w>, u32)>>,
    count: u32,
}

impl<'w> ShapeClasses<'w> {
    pub(super) fn class_of(&mut self, wl: &Spec<'w>) -> u32 {
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

/// FxHash's step over 8-byte words: the bucket key of `ShapeClasses`, a table of our own
/// with a few dozen shapes, so no protection against chosen keys is needed. SipHash cost
/// about 1,500 instructions per arrival of the million-workload run; this a few dozen.
#[derive(Default)]
struct ShapeHasher(u64);

impl ShapeHasher {
    #[inline]
    fn mix(&mut self, x: u64) {
        self.0 = crate::placement::mix(self.0, x as i64);
    }
}

impl std::hash::Hasher for ShapeHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let mut last = [0u8; 8];
        let rest = chunks.remainder();
        last[..rest.len()].copy_from_slice(rest);
        // The length too, so that trailing zero bytes are not lost in the padding.
        self.mix(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 56));
    }

    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.mix(u64::from(x));
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.mix(u64::from(x));
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.mix(x);
    }

    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.mix(x as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

fn shape_hash(w: &Workload) -> u64 {
    use std::hash::{Hash, Hasher};
    // Deterministic (no random keys), though the hash cannot change a class: a bucket's
    // workloads are compared field by field (`same_shape`).
    let mut h = ShapeHasher::default();
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
        p.topology_request.hash(&mut h);
        p.topology_slice.hash(&mut h);
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
                && x.topology_request == y.topology_request
                && x.topology_slice == y.topology_slice
        })
}

/// The most sets of vectors `SpareVecs` keeps: a lean run lets go of about one workload per
/// arrival, so a few serve every arrival.
const SPARE_RUNTIMES: usize = 16;

/// The record's vectors of workloads a lean run let go of (`let_go_if_lean`), emptied and
/// handed to later arrivals (`new_runtime`) instead of freed and allocated again: every
/// arrival needs its pods' slots, a condition and an event. Only capacity carries over,
/// which nothing observes.
#[derive(Clone, Debug, Default)]
pub(super) struct SpareVecs {
    kept: Vec<RecordVecs>,
}

/// One let-go workload's vectors (`SpareVecs`).
#[derive(Clone, Debug, Default)]
pub(super) struct RecordVecs {
    placement: Vec<Vec<Option<NodeId>>>,
    conditions: Vec<crate::outcome::Condition>,
    events: Vec<crate::outcome::Event>,
}

impl SpareVecs {
    /// Keeps `rt`'s vectors (taken out of it) unless enough are kept.
    pub(super) fn keep(&mut self, rt: &mut Runtime<'_>) {
        if self.kept.len() < SPARE_RUNTIMES {
            self.kept.push(RecordVecs {
                placement: std::mem::take(&mut rt.record.placement),
                conditions: std::mem::take(&mut rt.record.conditions),
                events: std::mem::take(&mut rt.record.events),
            });
        }
    }

    /// A kept set of vectors, or new ones.
    pub(super) fn take(&mut self) -> RecordVecs {
        self.kept.pop().unwrap_or_default()
    }
}

/// A workload's runtime state on arrival, its record's vectors written into `vecs` (kept
/// from a workload let go of, or new): the same lengths and elements as new ones.
pub(super) fn new_runtime<'w>(
    spec: Spec<'w>,
    scheduler: SchedulerKind,
    shape: u32,
    uid_label: u64,
    vecs: RecordVecs,
) -> Runtime<'w> {
    let RecordVecs {
        mut placement,
        mut conditions,
        mut events,
    } = vecs;
    // A slot per pod, every one empty.
    placement.truncate(spec.pod_sets.len());
    for (i, p) in spec.pod_sets.iter().enumerate() {
        let n = p.count as usize;
        match placement.get_mut(i) {
            Some(slots) => {
                slots.clear();
                slots.resize(n, None);
            }
            None => placement.push(vec![None; n]),
        }
    }
    // The capacity their first push would give (a `Vec`'s least for such sizes): nearly
    // every workload gets a condition and an event, and an allocation made here skips the
    // growth path each first push took.
    conditions.clear();
    conditions.reserve(4);
    events.clear();
    events.reserve(4);
    let pending_since = spec.created_at;
    Runtime {
        scheduler,
        starts_after: SimTime::ZERO,
        generation: 0,
        needs: Vec::new(),
        kai_pipelined: 0,
        kai_pipelined_cpu_memory: [0, 0],
        kai_retry_at: None,
        kai_moves: Vec::new(),
        kai_releasing: Vec::new(),
        kai_victims: Vec::new(),
        kai_move_claims: Vec::new(),
        kai_moved_for: None,
        kai_holds: Vec::new(),
        kai_movers: Vec::new(),
        kai_last_start: None,
        volcano_inqueue: false,
        volcano_pipelined: None,
        volcano_releasing: Vec::new(),
        released: false,
        usage: Vec::new(),
        key: None,
        past_execution: SimDuration::ZERO,
        deactivated: false,
        scaled_down: false,
        progress_saved: SimDuration::ZERO,
        gpus_held: 0,
        gpus_since: SimTime::ZERO,
        requeue_at: None,
        not_ready: false,
        uid_label,
        shape,
        last_assignment: None,
        claims: Vec::new(),
        vgpu: Vec::new(),
        replacing: false,
        unhealthy_node: None,
        runs: 0,
        pods_lost: 0,
        pods_lost_since_restart: 0,
        job_restarts: 0,
        kai_stale_since: None,
        kai_stale_epoch: 0,
        lost_at: None,
        bound: super::bound::Bound::Off,
        bound_since: SimTime::ZERO,
        record: WorkloadRecord {
            state: WorkloadState::Pending,
            admitted_at: None,
            running_at: None,
            finished_at: None,
            admission: None,
            bound_at: Vec::new(),
            placement,
            topology_domain: None,
            evictions: Vec::new(),
            conditions,
            events,
            queue_status: None,
            gpu_ms: Wide::default(),
            lost_gpu_ms: Wide::default(),
            requeue_count: 0,
            queued: SimDuration::ZERO,
            pending_since,
            idle_quota_gpu_ms: Wide::default(),
            preemptions_caused: 0,
            restarts: 0,
            failed: false,
            inqueue_at: None,
            useful_ms: Wide::default(),
            first_running_at: None,
            scaled_down: false,
        },
        spec,
    }
}

/// A victim of the KAI reclaim or preempt that pipelined a job, whose pods go at the job's
/// `Ev::KaiVictimPodsGone` (`Runtime::kai_victims`).
#[derive(Clone, Debug)]
pub(super) struct KaiVictim {
    /// The victim.
    pub(super) job: WorkloadId,
    /// Its evicted pods (pod set, index); None: the whole job.
    pub(super) pods: Option<Vec<(usize, usize)>>,
    /// The whole job's generation after its eviction (an outdated one is not released).
    pub(super) generation: u32,
}
