//! Generated workloads, produced lazily: one generator's copies merged by arrival
//! (`GeneratorStream`), several generators merged (`GeneratedWorkloads`), and how one drawn
//! workload is made.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::sync::Arc;

use kueuesim_model::{
    GangSpec, PodSet, QueueRef, ResourceId, ResourceList, SchedulerKind, SimDuration, SimTime,
    Workload,
};

use super::rng::{Rng, splitmix64};
use super::{Arrivals, GeneratorSettings, TopologyChoice};

/// One copy's stream state.
#[derive(Clone, Debug)]
struct CopyState {
    rng: Rng,
    /// The fixed queue of a per-LocalQueue copy.
    queue: Option<usize>,
    /// Workloads of this copy produced so far.
    produced: u64,
    /// Simulated time of the next arrival, as a real number of ms (Poisson keeps fractions).
    clock: f64,
    next: Option<SimTime>,
}

/// One generator's workloads in arrival order (its copies merged; ties by copy index).
#[derive(Clone, Debug)]
pub struct GeneratorStream {
    settings: Arc<GeneratorSettings>,
    /// Per topology choice, the gang of a workload of each `SchedulerKind` (`kind_index`):
    /// shared by every workload that draws them (`Workload::gang`).
    gangs: Arc<Vec<[Arc<GangSpec>; 3]>>,
    copies: Vec<CopyState>,
    heap: BinaryHeap<Reverse<(SimTime, usize)>>,
    /// Workloads yielded so far (the name index).
    index: u64,
}

impl GeneratorStream {
    /// The stream of `settings`.
    pub fn new(settings: GeneratorSettings) -> Self {
        let settings = Arc::new(settings);
        let n = if settings.per_local_queue {
            settings.queues.items.len()
        } else {
            1
        };
        let kube = Arc::new(GangSpec::default());
        let gangs = settings
            .topologies
            .items
            .iter()
            .map(|topo| {
                let volcano = GangSpec {
                    network_topology: topo.volcano.clone(),
                    ..GangSpec::default()
                };
                let kai = GangSpec {
                    kai_topology: topo.kai.clone(),
                    ..GangSpec::default()
                };
                // In `kind_index` order.
                [Arc::clone(&kube), Arc::new(kai), Arc::new(volcano)]
            })
            .collect();
        let mut s = GeneratorStream {
            gangs: Arc::new(gangs),
            copies: Vec::with_capacity(n),
            heap: BinaryHeap::with_capacity(n),
            index: 0,
            settings,
        };
        for c in 0..n {
            let mut seed = s.settings.seed ^ (c as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
            let mut copy = CopyState {
                rng: Rng::new(splitmix64(&mut seed)),
                queue: s.settings.per_local_queue.then_some(c),
                produced: 0,
                clock: s.settings.start.millis() as f64,
                next: None,
            };
            advance(&s.settings, &mut copy, true);
            if let Some(t) = copy.next {
                s.heap.push(Reverse((t, c)));
            }
            s.copies.push(copy);
        }
        s
    }

    /// The settings.
    pub fn settings(&self) -> &GeneratorSettings {
        &self.settings
    }

    /// The arrival time of the next workload, if any.
    pub fn peek_arrival(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// How many workloads are still to come, without drawing them, when no draw can change
    /// that or make an arrival later than `limit_ms`: a count per copy, no `until`, and each
    /// copy's last arrival bounded within the limit (its clock plus the remaining gaps at
    /// their largest: `every`, or for Poisson 37 × the mean, since `-ln(1 - unit())` is at
    /// most `-ln(2⁻⁵³)` = 36.7; with a margin for the clock's rounding). None otherwise.
    pub fn rest_if_bounded(&self, limit_ms: i64) -> Option<u64> {
        let s = &self.settings;
        if s.until.is_some() {
            return None;
        }
        let n = s.count?;
        let max_gap = match &s.arrivals {
            Arrivals::Interval { every } => *every as f64,
            Arrivals::Poisson { mean_gap_ms } => 37.0 * mean_gap_ms,
            Arrivals::Trace(_) => return None,
        };
        let mut rest = 0;
        for copy in self.copies.iter().filter(|c| c.next.is_some()) {
            let left = n - copy.produced;
            let last = copy.clock + left as f64 * max_gap * 1.001 + 1.0;
            if last.is_nan() || last > limit_ms as f64 {
                return None;
            }
            rest += left;
        }
        Some(rest)
    }
}

/// Moves `copy.next` to its next arrival (or None when the copy is done).
fn advance(s: &GeneratorSettings, copy: &mut CopyState, first: bool) {
    if s.count.is_some_and(|n| copy.produced >= n) {
        copy.next = None;
        return;
    }
    let t = match &s.arrivals {
        Arrivals::Interval { every } => {
            if !first {
                copy.clock += *every as f64;
            }
            copy.clock
        }
        Arrivals::Poisson { mean_gap_ms } => {
            copy.clock += -(1.0 - copy.rng.unit()).ln() * mean_gap_ms;
            copy.clock
        }
        Arrivals::Trace(gaps) => match gaps.get(copy.produced as usize) {
            Some(g) => {
                copy.clock += *g as f64;
                copy.clock
            }
            None => {
                copy.next = None;
                return;
            }
        },
    };
    let t = SimTime::from_millis(t.floor() as i64);
    copy.next = match s.until {
        Some(u) if t > u => None,
        _ => Some(t),
    };
}

impl GeneratorStream {
    /// Moves past the next workload without building it: the same draws as `next` (so the
    /// workloads after it are the same), without its name, uid or pod set. Gives its arrival and its
    /// name index (`name_of`).
    pub fn skip_next(&mut self) -> Option<(SimTime, u64)> {
        let Reverse((arrival, c)) = self.heap.pop()?;
        let copy = &mut self.copies[c];
        draw(&self.settings, copy, Vec::new());
        let index = self.index;
        self.finish_one(c);
        Some((arrival, index))
    }

    /// The name of the workload with name index `index`.
    pub fn name_of(&self, index: u64) -> String {
        workload_name(&self.settings.name, index)
    }

    /// Counts the workload of copy `c` just drawn and queues the copy's next arrival.
    fn finish_one(&mut self, c: usize) {
        let copy = &mut self.copies[c];
        self.index += 1;
        copy.produced += 1;
        advance(&self.settings, copy, false);
        if let Some(t) = copy.next {
            self.heap.push(Reverse((t, c)));
        }
    }
}

impl GeneratorStream {
    /// The next workload, made straight into what `wrap` puts it in (`Rc::new` for a
    /// streamed run, which keeps it shared): a `Workload` is about 500 bytes, and each layer
    /// that passes it on by value copies it.
    #[inline(always)]
    fn next_into<T>(&mut self, wrap: impl FnOnce(Workload) -> T) -> Option<T> {
        let Reverse((arrival, c)) = self.heap.pop()?;
        let copy = &mut self.copies[c];
        let d = draw(
            &self.settings,
            copy,
            Vec::with_capacity(self.settings.requests.len()),
        );
        let w = wrap(make_workload(
            &self.settings,
            &self.gangs,
            d,
            arrival,
            self.index,
        ));
        self.finish_one(c);
        Some(w)
    }

    /// `next`, the workload in an `Rc` (`next_into`).
    pub fn next_shared(&mut self) -> Option<Rc<Workload>> {
        self.next_into(Rc::new)
    }

    /// `next_shared`, written over `spare` when one is given: a workload the run let go of
    /// (`WorkloadFeed::recycle`), held by nothing else, whose strings and vectors then take
    /// the next workload's text and pods without an allocation (a generated workload made
    /// afresh allocates about ten times, its `Rc` included). The workload is the one
    /// `make_workload` makes, field by field (`remake_workload`).
    pub fn next_shared_in(&mut self, spare: Option<Rc<Workload>>) -> Option<Rc<Workload>> {
        let Some(mut spare) = spare.filter(|w| Rc::strong_count(w) == 1 && Rc::weak_count(w) == 0)
        else {
            return self.next_shared();
        };
        let Reverse((arrival, c)) = self.heap.pop()?;
        let w = Rc::get_mut(&mut spare).expect("a spare workload is held by nothing else");
        // The drawn requests go into the spare's own vector.
        let mut requests = w
            .pod_sets
            .first_mut()
            .map(|p| std::mem::take(&mut p.requests).into_pairs())
            .unwrap_or_default();
        requests.clear();
        let d = draw(&self.settings, &mut self.copies[c], requests);
        #[cfg(debug_assertions)]
        let made = make_workload(&self.settings, &self.gangs, d.clone(), arrival, self.index);
        remake_workload(w, &self.settings, &self.gangs, d, arrival, self.index);
        #[cfg(debug_assertions)]
        assert_eq!(
            format!("{w:?}"),
            format!("{made:?}"),
            "a remade workload is the one made afresh"
        );
        self.finish_one(c);
        Some(spare)
    }
}

impl Iterator for GeneratorStream {
    type Item = Workload;

    fn next(&mut self) -> Option<Workload> {
        self.next_into(|w| w)
    }
}

/// A stable digest of a generated pod set's requests: the `spec_shape` part of Kueue's
/// equivalence hash (generated pods differ only in their requests).
fn shape_of(requests: &[(ResourceId, i64)]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (r, a) in requests {
        for v in [r.index() as u64, *a as u64] {
            h = (h ^ v).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// A scheduler kind's place in `GeneratorStream::gangs`.
fn kind_index(kind: SchedulerKind) -> usize {
    match kind {
        SchedulerKind::Kube => 0,
        SchedulerKind::Kai => 1,
        SchedulerKind::Volcano => 2,
    }
}

/// `{generator}-{index}`, written without the formatting machinery (every generated
/// workload pays for its name and its uid).
fn workload_name(generator: &str, index: u64) -> String {
    let mut name = String::new();
    write_workload_name(&mut name, generator, index);
    name
}

/// `workload_name` written over `name` (its buffer kept, grown only when too short).
fn write_workload_name(name: &mut String, generator: &str, index: u64) {
    let mut buf = [0; 20];
    let digits = kueuesim_model::decimal_digits(index, &mut buf);
    name.clear();
    name.reserve_exact(generator.len() + 1 + digits.len());
    name.push_str(generator);
    name.push('-');
    name.push_str(digits);
}

/// `namespace/name`, a generated workload's uid, written over `uid`.
fn write_uid(uid: &mut String, namespace: &str, name: &str) {
    uid.clear();
    uid.reserve_exact(namespace.len() + 1 + name.len());
    uid.push_str(namespace);
    uid.push('/');
    uid.push_str(name);
}

/// `text` written over `out`, an optional string (its buffer kept when both are some).
fn set_text(out: &mut Option<String>, text: Option<&str>) {
    match (out.as_mut(), text) {
        (Some(o), Some(t)) => {
            o.clear();
            o.push_str(t);
        }
        (_, t) => *out = t.map(str::to_owned),
    }
}

/// What one workload draws from its copy's stream, in this order: everything random about it.
#[cfg_attr(debug_assertions, derive(Clone))]
struct Drawn {
    queue: usize,
    priority: usize,
    scheduler: usize,
    topology: usize,
    pods: u32,
    requests: Vec<(ResourceId, i64)>,
    duration: SimDuration,
}

/// One workload's draws, its requests pushed onto `requests` (empty: a vector to reuse).
/// `GeneratorStream::skip_next` makes them too, so skipping a workload leaves the stream
/// where building it would.
fn draw(
    s: &GeneratorSettings,
    copy: &mut CopyState,
    mut requests: Vec<(ResourceId, i64)>,
) -> Drawn {
    let rng = &mut copy.rng;
    let queue = match copy.queue {
        Some(i) => i,
        None => s.queues.pick(rng),
    };
    let priority = s.priorities.pick(rng);
    let scheduler = s.schedulers.pick(rng);
    let topology = s.topologies.pick(rng);
    let pods = s.pods.sample(rng).max(1) as u32;
    debug_assert!(requests.is_empty());
    requests.extend(s.requests.iter().map(|(r, d)| (*r, d.sample(rng).max(0))));
    let duration = SimDuration::from_millis(s.duration.sample(rng).max(0));
    Drawn {
        queue,
        priority,
        scheduler,
        topology,
        pods,
        requests,
        duration,
    }
}

fn make_workload(
    s: &GeneratorSettings,
    gangs: &[[Arc<GangSpec>; 3]],
    d: Drawn,
    arrival: SimTime,
    index: u64,
) -> Workload {
    let q = &s.queues.items[d.queue];
    let (class, priority) = &s.priorities.items[d.priority];
    let (scheduler_name, kind) = &s.schedulers.items[d.scheduler];
    let topo_index = d.topology;
    let topo = &s.topologies.items[topo_index];
    let (pods, requests, duration) = (d.pods, d.requests, d.duration);
    let name = workload_name(&s.name, index);
    let mut uid = String::with_capacity(q.namespace.len() + 1 + name.len());
    uid.push_str(&q.namespace);
    uid.push('/');
    uid.push_str(&name);
    let gang = Arc::clone(&gangs[topo_index][kind_index(*kind)]);
    Workload {
        uid,
        namespace: q.namespace.clone(),
        name,
        kind: "Workload".into(),
        owner: None,
        job_uid: None,
        queue: match q.id {
            Some(id) => QueueRef::Local(id),
            None => QueueRef::Unmanaged,
        },
        queue_name: q.id.map(|_| q.name.clone()),
        priority_class: class.clone(),
        priority: *priority,
        scheduler_name: scheduler_name.clone(),
        created_at: arrival,
        arrival,
        duration: Some(duration),
        pod_sets: vec![main_pod_set(
            pods,
            shape_of(&requests),
            ResourceList::from_pairs(requests),
            topo,
        )],
        active: true,
        max_execution_time: None,
        initial_admission: None,
        last_eviction: None,
        creation_blocked: None,
        suspended: false,
        requeue_state: None,
        gang,
        resilience: s.resilience,
        serving: None,
    }
}

/// A generated workload's one pod set, `main`, as `make_workload` makes it and
/// `remake_workload` makes it where a recycled workload has none.
fn main_pod_set(
    count: u32,
    spec_shape: u64,
    requests: ResourceList,
    topo: &TopologyChoice,
) -> PodSet {
    PodSet {
        name: "main".into(),
        count,
        min_count: None,
        spec_shape,
        requests,
        node_selector: Default::default(),
        tolerations: Vec::new(),
        priority_class_name: None,
        preempt_never: false,
        topology_request: topo.kueue.clone(),
        topology_slice: topo.kueue_slice.clone(),
        gpu_share: None,
        vgpu: None,
        info: None,
    }
}

/// `make_workload`'s workload written over `w`, a workload let go of (of any source): each
/// field set as `make_workload` sets it, strings and vectors written into the ones `w` has.
/// Every field is named (no `..`), so a field added to `Workload` or `PodSet` must be
/// set here too.
fn remake_workload(
    w: &mut Workload,
    s: &GeneratorSettings,
    gangs: &[[Arc<GangSpec>; 3]],
    d: Drawn,
    arrival_at: SimTime,
    index: u64,
) {
    let q = &s.queues.items[d.queue];
    let (class, priority_of) = &s.priorities.items[d.priority];
    let (scheduler, kind_of) = &s.schedulers.items[d.scheduler];
    let topo_index = d.topology;
    let topo = &s.topologies.items[topo_index];
    let Workload {
        namespace,
        name,
        kind,
        owner,
        uid,
        job_uid,
        queue,
        queue_name,
        priority_class,
        priority,
        scheduler_name,
        created_at,
        arrival,
        duration,
        pod_sets,
        active,
        max_execution_time,
        initial_admission,
        last_eviction,
        creation_blocked,
        requeue_state,
        suspended,
        gang,
        resilience,
        serving,
    } = w;
    write_workload_name(name, &s.name, index);
    write_uid(uid, &q.namespace, name);
    namespace.clone_from(&q.namespace);
    kind.clear();
    kind.push_str("Workload");
    *owner = None;
    *job_uid = None;
    *queue = match q.id {
        Some(id) => QueueRef::Local(id),
        None => QueueRef::Unmanaged,
    };
    set_text(queue_name, q.id.map(|_| q.name.as_str()));
    set_text(priority_class, class.as_deref());
    *priority = *priority_of;
    scheduler_name.clone_from(scheduler);
    *created_at = arrival_at;
    *arrival = arrival_at;
    *duration = Some(d.duration);
    pod_sets.truncate(1);
    let spec_shape_of = shape_of(&d.requests);
    let requests_of = ResourceList::from_pairs(d.requests);
    match pod_sets.first_mut() {
        None => pod_sets.push(main_pod_set(d.pods, spec_shape_of, requests_of, topo)),
        Some(p) => {
            let PodSet {
                name,
                count,
                min_count,
                requests,
                node_selector,
                tolerations,
                priority_class_name,
                preempt_never,
                spec_shape,
                topology_request,
                topology_slice,
                gpu_share,
                vgpu,
                info,
            } = p;
            name.clear();
            name.push_str("main");
            *count = d.pods;
            *min_count = None;
            *spec_shape = spec_shape_of;
            *requests = requests_of;
            *node_selector = Default::default();
            tolerations.clear();
            *priority_class_name = None;
            *preempt_never = false;
            topology_request.clone_from(&topo.kueue);
            topology_slice.clone_from(&topo.kueue_slice);
            *gpu_share = None;
            *vgpu = None;
            *info = None;
        }
    }
    *active = true;
    *max_execution_time = None;
    *initial_admission = None;
    *last_eviction = None;
    *creation_blocked = None;
    *suspended = false;
    *requeue_state = None;
    *gang = Arc::clone(&gangs[topo_index][kind_index(*kind_of)]);
    *resilience = s.resilience;
    *serving = None;
}

/// Several generators merged by arrival time (ties: the generator listed first).
#[derive(Clone, Debug, Default)]
pub struct GeneratedWorkloads {
    streams: Vec<GeneratorStream>,
    heap: BinaryHeap<Reverse<(SimTime, usize)>>,
}

impl GeneratedWorkloads {
    /// The merge of `streams`, in this order for ties.
    pub fn new(streams: Vec<GeneratorStream>) -> Self {
        let mut heap = BinaryHeap::with_capacity(streams.len());
        for (i, s) in streams.iter().enumerate() {
            if let Some(t) = s.peek_arrival() {
                heap.push(Reverse((t, i)));
            }
        }
        GeneratedWorkloads { streams, heap }
    }

    /// The arrival time of the next workload, if any.
    pub fn peek_arrival(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// `GeneratorStream::rest_if_bounded` over every stream: None if any is not bounded.
    pub fn rest_if_bounded(&self, limit_ms: i64) -> Option<u64> {
        self.streams
            .iter()
            .map(|s| s.rest_if_bounded(limit_ms))
            .sum()
    }

    /// Which stream the next workload comes from (its index in `new`'s list).
    pub fn peek_stream(&self) -> Option<usize> {
        self.heap.peek().map(|Reverse((_, i))| *i)
    }
}

impl GeneratedWorkloads {
    /// `GeneratorStream::skip_next` of the stream the next workload comes from: its arrival,
    /// the stream's index and the workload's name index there.
    pub fn skip_next(&mut self) -> Option<(SimTime, usize, u64)> {
        let Reverse((_, i)) = self.heap.pop()?;
        let skipped = self.streams[i].skip_next();
        if let Some(t) = self.streams[i].peek_arrival() {
            self.heap.push(Reverse((t, i)));
        }
        skipped.map(|(t, index)| (t, i, index))
    }

    /// The name of workload `index` of stream `stream`.
    pub fn name_of(&self, stream: usize, index: u64) -> String {
        self.streams[stream].name_of(index)
    }
}

impl GeneratedWorkloads {
    /// `next`, the workload in an `Rc` (`GeneratorStream::next_shared`).
    pub fn next_shared(&mut self) -> Option<Rc<Workload>> {
        self.next_shared_in(None)
    }

    /// `next_shared`, written over `spare` when one is given
    /// (`GeneratorStream::next_shared_in`).
    pub fn next_shared_in(&mut self, spare: Option<Rc<Workload>>) -> Option<Rc<Workload>> {
        let Reverse((_, i)) = self.heap.pop()?;
        let w = self.streams[i].next_shared_in(spare);
        if let Some(t) = self.streams[i].peek_arrival() {
            self.heap.push(Reverse((t, i)));
        }
        w
    }
}

impl Iterator for GeneratedWorkloads {
    type Item = Workload;

    fn next(&mut self) -> Option<Workload> {
        let Reverse((_, i)) = self.heap.pop()?;
        let w = self.streams[i].next();
        if let Some(t) = self.streams[i].peek_arrival() {
            self.heap.push(Reverse((t, i)));
        }
        w
    }
}
