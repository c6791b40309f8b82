//! The tally of a run: what its summary needs of its workloads (counts by state, waits and
//! times to start, per-queue counts, GPU time and the durations the percentiles are taken
//! over), folded one workload at a time as a lean run lets each go. Its types are
//! `outcome`'s, re-exported there.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use kueuesim_model::{
    ClusterQueueId, LocalQueueId, QueueRef, ResourceId, SimDuration, SimTime, Workload, World,
};

use super::{WorkloadRecord, WorkloadState};

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
    /// `Tally::local_queue_samples`). Beside them, the counts `Tally::fold` has not yet
    /// added to `cluster_queues` and `local_queues` (`Tally::settle`).
    samples: Buckets,
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

/// The key of a `Tally::samples` bucket: the LocalQueue the workload names (if any) and the
/// ClusterQueue it is counted in.
type BucketKey = (Option<LocalQueueId>, ClusterQueueId);

/// `Tally::samples`: the buckets by key, in a map from key to a place in a dense list, so
/// that a fold finds its bucket by its LocalQueue's index (`by_local_queue`) instead of a
/// search of the map per finished workload. Two are equal when they hold the same buckets
/// under the same keys, whatever order the buckets were made in (the order of `list`) and
/// whatever the caches hold.
#[derive(Clone, Debug, Default)]
struct Buckets {
    /// Every key, with its bucket's place in `list`.
    index: BTreeMap<BucketKey, u32>,
    /// The buckets, in the order they were made.
    list: Vec<QueueBucket>,
    /// A cache of `index` by LocalQueue index: the ClusterQueue and place of the last key
    /// (Some(that LocalQueue), ClusterQueue) found or made, `NO_BUCKET` where none yet. A
    /// LocalQueue's workloads are nearly all counted in its own ClusterQueue, so one entry
    /// per LocalQueue answers nearly every fold; a miss searches `index` and refills it.
    by_local_queue: Vec<(ClusterQueueId, u32)>,
    /// The GPU resource's id (`ResourceTable::lookup` of `resources::GPU` in the world the
    /// tally folds from), looked up at the first fold instead of by name at every one.
    gpu: Option<Option<ResourceId>>,
}

/// `Buckets::by_local_queue`'s place for a LocalQueue no bucket was found for yet.
const NO_BUCKET: u32 = u32::MAX;

impl PartialEq for Buckets {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Buckets {}

impl Buckets {
    /// The bucket of `key`, made empty if it has none yet; `made` is called once a key is
    /// new.
    #[inline]
    fn entry(&mut self, key: BucketKey, made: impl FnOnce()) -> &mut QueueBucket {
        let (lq, cq) = key;
        if let Some(lq) = lq
            && let Some(&(c, at)) = self.by_local_queue.get(lq.index())
            && c == cq
            && at != NO_BUCKET
        {
            debug_assert_eq!(
                self.index.get(&key),
                Some(&at),
                "the LocalQueue cache is the map's"
            );
            return &mut self.list[at as usize];
        }
        self.entry_slow(key, made)
    }

    #[cold]
    #[inline(never)]
    fn entry_slow(&mut self, key: BucketKey, made: impl FnOnce()) -> &mut QueueBucket {
        let at = match self.index.entry(key) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                made();
                let at = u32::try_from(self.list.len()).expect("fewer buckets than u32::MAX");
                assert!(at != NO_BUCKET, "fewer buckets than u32::MAX");
                self.list.push(QueueBucket::default());
                *e.insert(at)
            }
        };
        if let (Some(lq), cq) = key {
            let i = lq.index();
            if self.by_local_queue.len() <= i {
                self.by_local_queue
                    .resize(i + 1, (ClusterQueueId::default(), NO_BUCKET));
            }
            self.by_local_queue[i] = (cq, at);
        }
        &mut self.list[at as usize]
    }

    /// The bucket of `key`, if it has one.
    fn get(&self, key: &BucketKey) -> Option<&QueueBucket> {
        self.index.get(key).map(|&at| &self.list[at as usize])
    }

    /// Every key and its bucket, in key order.
    fn iter(&self) -> impl Iterator<Item = (&BucketKey, &QueueBucket)> + Clone {
        self.index
            .iter()
            .map(|(key, &at)| (key, &self.list[at as usize]))
    }

    /// Every bucket, in no particular order (the order they were made in).
    fn values(&self) -> impl Iterator<Item = &QueueBucket> {
        self.list.iter()
    }
}

/// One key of `Tally::samples`: its durations, and the queue counts of the workloads
/// `Tally::fold` counted there since the last `Tally::settle` (default once settled).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct QueueBucket {
    samples: QueueSamples,
    unsettled: ClusterQueueTally,
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
            // Each pod set's GPUs read once for both figures (the sum in pod set order, as
            // `Iterator::sum` adds).
            let (mut total, mut pod) = (0i64, None::<i64>);
            for p in &wl.pod_sets {
                let per_pod = p.requests.get(g);
                total += per_pod * i64::from(p.count);
                pod = Some(pod.map_or(per_pod, |m| m.max(per_pod)));
            }
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
        self.gpu_ms += rec.gpu_ms.get();
        self.lost_gpu_ms += rec.lost_gpu_ms.get();
        self.idle_quota_gpu_ms += rec.idle_quota_gpu_ms.get();
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
        debug_assert!(
            self.is_settled(),
            "a folded tally is settled before it is read"
        );
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
            samples: Buckets::default(),
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
        self.add_one(world, wl, rec, end, false);
    }

    /// Counts an arrived workload as `add` does, but its ClusterQueue's and LocalQueue's
    /// counts go to the bucket of its (LocalQueue, ClusterQueue) key only, once: `settle`
    /// adds every bucket to both queues' counts before they are read (a lean run folds each
    /// finished workload so, instead of counting it twice). The figures are sums and a
    /// greatest (GPUs, name), so adding a bucket's fold (`ClusterQueueTally::merge`) gives
    /// what adding its workloads one at a time gives.
    pub fn fold(&mut self, world: &World, wl: &Workload, rec: &WorkloadRecord, end: SimTime) {
        self.add_one(world, wl, rec, end, true);
    }

    /// Adds every bucket's counts (`fold`) to its ClusterQueue's and LocalQueue's, and
    /// empties the buckets.
    pub fn settle(&mut self) {
        let Buckets { index, list, .. } = &mut self.samples;
        for (&(lq, cq), &at) in index.iter() {
            let bucket = &mut list[at as usize];
            if bucket.unsettled == ClusterQueueTally::default() {
                continue;
            }
            let folded = std::mem::take(&mut bucket.unsettled);
            self.cluster_queues[cq.index()].merge(&folded);
            if let Some(lq) = lq {
                self.local_queues[lq.index()].merge(&folded);
            }
        }
    }

    /// Whether no bucket holds counts `settle` has still to add.
    pub fn is_settled(&self) -> bool {
        self.samples
            .values()
            .all(|b| b.unsettled == ClusterQueueTally::default())
    }

    /// `add` (`by_bucket` false) or `fold` (true).
    fn add_one(
        &mut self,
        world: &World,
        wl: &Workload,
        rec: &WorkloadRecord,
        end: SimTime,
        by_bucket: bool,
    ) {
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
        let gpu = *self
            .samples
            .gpu
            .get_or_insert_with(|| world.resources.lookup(kueuesim_model::resources::GPU));
        debug_assert_eq!(
            gpu,
            world.resources.lookup(kueuesim_model::resources::GPU),
            "a tally folds from one world"
        );
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
            // Once per workload, for its ClusterQueue and its LocalQueue together (a
            // LocalQueue names one ClusterQueue: one key each, but for admissions elsewhere).
            let keys = &mut self.cluster_queue_keys;
            let bucket = self.samples.entry((lq, cq), || {
                keys.insert((cq, lq));
            });
            bucket.samples.add(wl, rec, end);
            if by_bucket {
                bucket.unsettled.add(wl, rec, gpu);
                return;
            }
            self.cluster_queues[cq.index()].add(wl, rec, gpu);
        }
        // (A workload with a LocalQueue always has a ClusterQueue: its LocalQueue's.)
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
            .map(move |&(c, lq)| {
                &self
                    .samples
                    .get(&(lq, c))
                    .expect("every ClusterQueue key has its bucket")
                    .samples
            })
    }

    /// Every queue's durations (the run-wide figures'), by (LocalQueue, ClusterQueue).
    pub fn all_samples(&self) -> impl Iterator<Item = &QueueSamples> + Clone {
        self.samples.iter().map(|(_, b)| &b.samples)
    }

    /// The durations of LocalQueue `lq`'s figures.
    pub fn local_queue_samples(
        &self,
        lq: LocalQueueId,
    ) -> impl Iterator<Item = &QueueSamples> + Clone {
        let Buckets { index, list, .. } = &self.samples;
        index
            .range((Some(lq), ClusterQueueId::from_index(0))..)
            .take_while(move |((l, _), _)| *l == Some(lq))
            .map(move |(_, &at)| &list[at as usize].samples)
    }

    /// The bytes the tally's lists of durations have reserved: what a lean run's tally holds
    /// per workload (for tests of what a run retains).
    pub fn reserved_bytes(&self) -> usize {
        self.waits.reserved_bytes()
            + self.starts.reserved_bytes()
            + self
                .samples
                .values()
                .map(|b| b.samples.reserved_bytes())
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

    /// The buckets' LocalQueue cache answers as the map does: buckets made in two orders,
    /// then found again through the cache (and a miss that refills it), hold the same
    /// samples under the same keys and compare equal, and read in key order.
    #[test]
    fn buckets_by_local_queue_are_the_map() {
        let lq = |i| Some(LocalQueueId::from_index(i));
        let cq = ClusterQueueId::from_index;
        let keys = [
            (lq(2), cq(0)),
            (None, cq(1)),
            (lq(0), cq(1)),
            (lq(2), cq(3)),
        ];
        let fill = |order: &[usize]| {
            let mut b = Buckets::default();
            let mut made = 0;
            for round in 0..3 {
                for &i in order {
                    let bucket = b.entry(keys[i], || made += 1);
                    bucket.unsettled.workloads += 1;
                    bucket.samples.waits.push(SimDuration::from_millis(
                        i64::try_from(10 * i + round).expect("small"),
                    ));
                }
            }
            assert_eq!(made, keys.len(), "one bucket a key");
            b
        };
        let (a, b) = (fill(&[0, 1, 2, 3]), fill(&[3, 2, 1, 0]));
        assert_eq!(a, b);
        let mut sorted = keys.to_vec();
        sorted.sort();
        assert_eq!(a.iter().map(|(k, _)| *k).collect::<Vec<_>>(), sorted);
        for (k, bucket) in a.iter() {
            assert_eq!(bucket.unsettled.workloads, 3, "{k:?}");
            assert_eq!(b.get(k), Some(bucket));
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
