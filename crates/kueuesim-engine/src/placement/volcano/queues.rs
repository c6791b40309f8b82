//! Volcano's queue plugins as one session sees them: `proportion`'s deserved shares
//! (iterative weighted water-filling capped by capability), its overused, allocatable and
//! enqueueable checks, and `overcommit`'s enqueue check. Amounts are dense by resource id,
//! in f64 and in the units upstream's `api.Resource` keeps them in (see [`Units`]).

use kueuesim_model::{ResourceList, ResourceTable, VolcanoQueue};

/// Upstream's `minResource`: amounts closer than this are equal (`lessEqualFunc`), and a
/// remainder below it is empty (`IsEmpty`). In upstream units, so 0.0001 of a GPU.
const MIN_RESOURCE: f64 = 0.1;

/// A dense resource vector.
pub type Res = Vec<f64>;

/// How upstream's `NewResource` counts each resource: cpu in millicores and memory in
/// bytes (as kueuesim does), `pods` as a count, and every other (scalar) resource,
/// ephemeral-storage and GPUs included, in milli-units (`rQuant.MilliValue()`).
/// Counting a GPU as 1000 keeps `minResource` a thousandth of a GPU, as upstream.
#[derive(Clone, Debug)]
pub struct Units {
    /// By resource id: upstream units per kueuesim unit.
    scale: Vec<f64>,
    /// The ids of cpu and memory, whose capability ≤ 0 upstream reads as no cap
    /// (`attr.capability.MilliCPU <= 0`).
    cpu_memory: Vec<usize>,
    /// The id of `pods`, which upstream's resource comparisons skip (`ignoredScalarResources`).
    pods: Option<usize>,
}

impl Units {
    /// The units of a scenario's resources.
    pub fn new(resources: &ResourceTable) -> Self {
        let scale = (0..resources.len())
            .map(|i| {
                let name = resources.name(kueuesim_model::ResourceId::from_index(i));
                if matches!(name, "cpu" | "memory" | "pods") {
                    1.0
                } else {
                    1000.0
                }
            })
            .collect();
        let cpu_memory = ["cpu", "memory"]
            .iter()
            .filter_map(|r| resources.lookup(r))
            .map(|r| r.index())
            .collect();
        let pods = resources.lookup("pods").map(|r| r.index());
        Units {
            scale,
            cpu_memory,
            pods,
        }
    }

    /// The number of resources.
    pub fn len(&self) -> usize {
        self.scale.len()
    }

    /// Whether there are no resources.
    pub fn is_empty(&self) -> bool {
        self.scale.is_empty()
    }

    /// drf's `calculateShare`: the largest `allocated / total` over the resources the
    /// cluster has (`Resource.ResourceNames`: at least `minResource`; `pods` is upstream's
    /// `MaxTaskNum`, not a resource there).
    pub fn dominant_share(&self, allocated: &[f64], total: &[f64]) -> f64 {
        let mut share = 0.0_f64;
        for (i, (&a, &t)) in allocated.iter().zip(total).enumerate() {
            if Some(i) == self.pods || t < MIN_RESOURCE {
                continue;
            }
            share = share.max(a / t);
        }
        share
    }

    /// Upstream's `Resource.IsEmpty`: no resource at `minResource` or more (`pods` is
    /// `MaxTaskNum` there, not a resource). A task whose requests are empty is BestEffort.
    pub fn requests_nothing(&self, r: &[f64]) -> bool {
        r.iter()
            .enumerate()
            .all(|(i, &a)| Some(i) == self.pods || a < MIN_RESOURCE)
    }

    /// `a` kueuesim units of resource `i`, in upstream units.
    pub fn amount(&self, i: usize, a: i64) -> f64 {
        a as f64 * self.scale.get(i).copied().unwrap_or(1.0)
    }

    /// A list as a dense vector in upstream units.
    pub fn dense(&self, list: &ResourceList) -> Res {
        let mut v = vec![0.0; self.len()];
        self.add_list(&mut v, list, 1.0);
        v
    }

    /// `dst += times × list`, in upstream units.
    pub fn add_list(&self, dst: &mut [f64], list: &ResourceList, times: f64) {
        for (r, a) in list.iter() {
            let i = r.index();
            if let Some(x) = dst.get_mut(i) {
                *x += self.amount(i, a) * times;
            }
        }
    }

    /// Whether upstream's comparisons skip resource `i` (`IsIgnoredScalarResource`: `pods`).
    pub fn ignored(&self, i: usize) -> bool {
        self.pods == Some(i)
    }

    /// Whether `i` is cpu or memory (upstream's `MilliCPU` and `Memory`, not a scalar).
    fn is_cpu_memory(&self, i: usize) -> bool {
        self.cpu_memory.contains(&i)
    }

    /// `ResourceNames` less the ignored ones: the resources of `r` at least `minResource`.
    fn names(&self, r: &[f64]) -> impl Iterator<Item = usize> + '_ {
        let named: Vec<usize> = (0..r.len())
            .filter(|&i| r[i] >= MIN_RESOURCE && !self.ignored(i))
            .collect();
        named.into_iter()
    }

    /// `IntersectionWithIgnoredScalarResources` is not empty: `a` and `b` share a resource.
    fn intersect(&self, a: &[f64], b: &[f64]) -> bool {
        self.names(a).any(|i| b[i] >= MIN_RESOURCE)
    }

    /// `hasRelevantDeserved`: a task of requests `req` asks for something `deserved` lists
    /// (`Intersection`, which skips nothing: a task's `Resreq` always holds one `pods`).
    fn relevant_deserved(&self, req: &[f64], deserved: &[f64]) -> bool {
        self.intersect(req, deserved) || self.pods.is_some_and(|p| deserved[p] >= MIN_RESOURCE)
    }

    /// Whether capability `a` of resource `i` caps it: upstream reads cpu or memory ≤ 0 as
    /// no cap.
    fn caps(&self, i: usize, a: i64) -> bool {
        i < self.len() && !(a <= 0 && self.cpu_memory.contains(&i))
    }
}

fn add(a: &mut [f64], b: &[f64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// `dst += max(0, a − b)` per resource (upstream's `ExceededPart` added in).
fn add_excess(dst: &mut [f64], a: &[f64], b: &[f64]) {
    for ((d, x), y) in dst.iter_mut().zip(a).zip(b) {
        *d += (x - y).max(0.0);
    }
}

/// `Resource.LessEqual(rr, Zero)`: every dimension of `l` at most `r`'s.
pub fn less_equal(l: &[f64], r: &[f64]) -> bool {
    l.iter()
        .zip(r)
        .all(|(a, b)| a < b || (a - b).abs() < MIN_RESOURCE)
}

/// `LessEqualWithDimensionAndResourcesName(rr, req)`: the dimensions `req` asks for (> 0)
/// where `l` exceeds `r`; empty when none does. Strict (`r > rr`): unlike `LessEqual`,
/// upstream allows no `minResource` tolerance here.
pub fn exceeded_in(l: &[f64], r: &[f64], req: &[f64]) -> Vec<usize> {
    (0..l.len())
        .filter(|&i| req[i] > 0.0 && l[i] > r[i])
        .collect()
}

/// One job of the session, as the queue plugins count it.
#[derive(Clone, Debug)]
pub struct SessionJob {
    /// Its queue (index into `World::volcano_queues`).
    pub queue: usize,
    /// Requests of its placed pods.
    pub allocated: Res,
    /// Requests of its pods not placed yet.
    pub pending: Res,
    /// Its PodGroup's `minResources`, if set.
    pub min_resources: Option<Res>,
    /// Phase Inqueue (let in, not yet running its minimum).
    pub inqueue: bool,
    /// Phase Running with at least minMember pods placed.
    pub running_ready: bool,
}

/// `proportion`'s view of one queue (`queueAttr`).
#[derive(Clone, Debug)]
pub struct QueueAttr {
    /// Its weight.
    pub weight: i64,
    /// Deserved, from the water-filling.
    pub deserved: Res,
    /// Placed requests of its jobs.
    pub allocated: Res,
    /// Placed plus pending requests.
    pub request: Res,
    /// minResources its Inqueue jobs hold but have not placed yet.
    pub inqueue: Res,
    /// Placed beyond its jobs' minResources.
    pub elastic: Res,
    /// The cluster less others' guarantees, capped by its capability.
    pub real_capability: Res,
    /// Its guarantee.
    pub guarantee: Res,
    /// max over resources of allocated/deserved (`updateShare`).
    pub share: f64,
}

/// `proportion` at session open: every queue with a job in the session gets its attributes
/// and its deserved share.
#[derive(Clone, Debug)]
pub struct Proportion {
    /// By queue index; None for a queue without jobs (upstream has no attributes for it).
    pub attrs: Vec<Option<QueueAttr>>,
}

impl Proportion {
    /// `OnSessionOpen`: attributes from the jobs, then deserved by iterative water-filling:
    /// each round every queue not yet met gets the remainder × weight/Σweight on top of what
    /// it has, capped by its real capability and by its request, raised to its guarantee; a
    /// queue is met when its request fits its deserved or its deserved stopped changing;
    /// rounds end when nothing remains or the remainder stops changing.
    pub fn open(
        queues: &[VolcanoQueue],
        units: &Units,
        total: &[f64],
        jobs: &[SessionJob],
    ) -> Self {
        let n = units.len();
        let mut total_guarantee = vec![0.0; n];
        for q in queues {
            add(&mut total_guarantee, &units.dense(&q.guarantee));
        }
        let mut attrs: Vec<Option<QueueAttr>> = vec![None; queues.len()];
        for job in jobs {
            let attr = attrs[job.queue].get_or_insert_with(|| {
                let q = &queues[job.queue];
                let guarantee = units.dense(&q.guarantee);
                // realCapability = (total − Σguarantee) + own guarantee, then capped by
                // capability where it lists a resource (cpu or memory ≤ 0: no cap).
                let mut real: Res = (0..n)
                    .map(|i| (total[i] - total_guarantee[i]).max(0.0) + guarantee[i])
                    .collect();
                if let Some(cap) = &q.capability {
                    for (r, a) in cap.iter() {
                        let i = r.index();
                        if units.caps(i, a) {
                            real[i] = real[i].min(units.amount(i, a));
                        }
                    }
                }
                QueueAttr {
                    weight: q.weight,
                    deserved: vec![0.0; n],
                    allocated: vec![0.0; n],
                    request: vec![0.0; n],
                    inqueue: vec![0.0; n],
                    elastic: vec![0.0; n],
                    real_capability: real,
                    guarantee,
                    share: 0.0,
                }
            });
            add(&mut attr.allocated, &job.allocated);
            add(&mut attr.request, &job.allocated);
            add(&mut attr.request, &job.pending);
            if let Some(min) = &job.min_resources {
                // GetInqueueResource: the part of minResources not placed yet.
                if job.inqueue || job.running_ready {
                    add_excess(&mut attr.inqueue, min, &job.allocated);
                }
                // GetElasticResources: placed beyond minResources.
                add_excess(&mut attr.elastic, &job.allocated, min);
            }
        }
        let mut remaining = total.to_vec();
        let mut met = vec![false; queues.len()];
        // Upstream loops until the remainder is empty or unchanged; the cap only guards
        // against a float cycle, which a round that changes nothing already ends.
        for _ in 0..10_000 {
            let total_weight: i64 = attrs
                .iter()
                .enumerate()
                .filter(|(q, a)| a.is_some() && !met[*q])
                .map(|(_, a)| a.as_ref().map_or(0, |a| a.weight))
                .sum();
            if total_weight == 0 {
                break;
            }
            let old_remaining = remaining.clone();
            let mut increased = vec![0.0; n];
            let mut decreased = vec![0.0; n];
            for (q, attr) in attrs.iter_mut().enumerate() {
                let Some(attr) = attr else { continue };
                if met[q] {
                    continue;
                }
                let old = attr.deserved.clone();
                let part = attr.weight as f64 / total_weight as f64;
                for (i, d) in attr.deserved.iter_mut().enumerate() {
                    *d = (*d + remaining[i] * part)
                        .min(attr.real_capability[i])
                        .min(attr.request[i])
                        .max(attr.guarantee[i]);
                }
                attr.share = share(&attr.allocated, &attr.deserved);
                if less_equal(&attr.request, &attr.deserved) || attr.deserved == old {
                    met[q] = true;
                }
                add_excess(&mut increased, &attr.deserved, &old);
                add_excess(&mut decreased, &old, &attr.deserved);
            }
            for ((r, d), i) in remaining.iter_mut().zip(&decreased).zip(&increased) {
                *r = (*r + d - i).max(0.0);
            }
            if remaining.iter().all(|&r| r < MIN_RESOURCE) || remaining == old_remaining {
                break;
            }
        }
        Proportion { attrs }
    }

    /// `OverusedFn`: deserved ≤ allocated in every dimension.
    pub fn overused(&self, queue: usize) -> bool {
        self.attrs[queue]
            .as_ref()
            .is_some_and(|a| less_equal(&a.deserved, &a.allocated))
    }

    /// `AllocatableFn` for `request` more: the queue is open and allocated + request stays
    /// within deserved in the dimensions the request asks for.
    pub fn allocatable(&self, queue: &VolcanoQueue, qi: usize, request: &[f64]) -> bool {
        if !queue.open {
            return false;
        }
        let Some(a) = &self.attrs[qi] else {
            return true;
        };
        let mut future = a.allocated.clone();
        add(&mut future, request);
        exceeded_in(&future, &a.deserved, request).is_empty()
    }

    /// `JobEnqueueableFn`: Err(None) for a closed queue, Err(Some(resources)) when
    /// minResources + allocated + inqueue − elastic exceeds the real capability.
    pub fn enqueueable(
        &self,
        queue: &VolcanoQueue,
        qi: usize,
        min: Option<&[f64]>,
    ) -> Result<(), Option<Vec<usize>>> {
        if !queue.open {
            return Err(None);
        }
        let (Some(a), Some(min)) = (&self.attrs[qi], min) else {
            return Ok(());
        };
        let r: Res = (0..min.len())
            .map(|i| min[i] + a.allocated[i] + a.inqueue[i] - a.elastic[i])
            .collect();
        let over = exceeded_in(&r, &a.real_capability, min);
        if over.is_empty() {
            Ok(())
        } else {
            Err(Some(over))
        }
    }

    /// A job let in (`JobEnqueuedFn`): its minResources count as the queue's inqueue.
    pub fn enqueued(&mut self, qi: usize, min: Option<&[f64]>) {
        if let (Some(a), Some(min)) = (self.attrs[qi].as_mut(), min) {
            add(&mut a.inqueue, min);
        }
    }
}

/// `updateShare`: the largest allocated/deserved over the resources with a deserved amount.
fn share(allocated: &[f64], deserved: &[f64]) -> f64 {
    allocated
        .iter()
        .zip(deserved)
        .filter(|(_, d)| **d > 0.0)
        .map(|(a, d)| a / d)
        .fold(0.0, f64::max)
}

/// `overcommit` at session open: idle = total × factor − used; the minResources of Inqueue
/// jobs not placed yet are already promised.
#[derive(Clone, Debug)]
pub struct Overcommit {
    /// total × factor − used.
    pub idle: Res,
    /// Promised to Inqueue jobs.
    pub inqueue: Res,
}

impl Overcommit {
    /// The plugin's state for a session.
    pub fn open(factor: f64, total: &[f64], used: &[f64], jobs: &[SessionJob]) -> Self {
        let n = total.len();
        let idle = (0..n).map(|i| total[i] * factor - used[i]).collect();
        let mut inqueue = vec![0.0; n];
        for job in jobs {
            let Some(min) = &job.min_resources else {
                continue;
            };
            if job.inqueue {
                add(&mut inqueue, min);
            } else if job.running_ready {
                add_excess(&mut inqueue, min, &job.allocated);
            }
        }
        Overcommit { idle, inqueue }
    }

    /// `JobEnqueueableFn`: inqueue + minResources within idle, in the dimensions asked for.
    pub fn enqueueable(&self, min: Option<&[f64]>) -> Result<(), Vec<usize>> {
        let Some(min) = min else { return Ok(()) };
        let mut r = self.inqueue.clone();
        add(&mut r, min);
        let over = exceeded_in(&r, &self.idle, min);
        if over.is_empty() { Ok(()) } else { Err(over) }
    }

    /// A job let in.
    pub fn enqueued(&mut self, min: Option<&[f64]>) {
        if let Some(min) = min {
            add(&mut self.inqueue, min);
        }
    }
}

/// `capacity` at session open: each queue's own `deserved`, and its real capability, which
/// allocation and the enqueue vote check (there is no overused check). With
/// `enableHierarchy`, every queue gets attributes, a parent's are its subtree's sums, and a
/// job's queue and all its ancestors are checked.
#[derive(Clone, Debug)]
pub struct Capacity {
    /// By queue index; None for a queue without attributes (no job, flat mode).
    pub attrs: Vec<Option<QueueAttr>>,
    /// By queue index: its ancestors, nearest first (empty in flat mode).
    pub ancestors: Vec<Vec<usize>>,
    /// By queue index: whether it has child queues (hierarchical mode only).
    pub has_children: Vec<bool>,
}

impl Capacity {
    /// `buildQueueAttrs`, or with `hierarchy` `buildHierarchicalQueueAttrs` under a virtual
    /// root whose capability is unbounded (upstream's `root` queue without a capability).
    pub fn open(
        queues: &[VolcanoQueue],
        units: &Units,
        total: &[f64],
        jobs: &[SessionJob],
        hierarchy: bool,
    ) -> Self {
        let n = units.len();
        let nq = queues.len();
        let mut attrs: Vec<Option<QueueAttr>> = vec![None; nq];
        let mut ancestors = vec![Vec::new(); nq];
        let mut has_children = vec![false; nq];
        let blank = |q: &VolcanoQueue| QueueAttr {
            weight: q.weight,
            deserved: q.deserved.as_ref().map_or(vec![0.0; n], |d| units.dense(d)),
            allocated: vec![0.0; n],
            request: vec![0.0; n],
            inqueue: vec![0.0; n],
            elastic: vec![0.0; n],
            real_capability: vec![f64::INFINITY; n],
            guarantee: units.dense(&q.guarantee),
            share: 0.0,
        };
        if hierarchy {
            // A Queue named `root` is the root: every other queue without a parent is its
            // child (upstream's `updateAncestors` defaults a parent to `root`).
            let root = queues.iter().position(|q| q.name == "root");
            let parent_of = |i: usize| queues[i].parent.or(root.filter(|&r| r != i));
            for (i, q) in queues.iter().enumerate() {
                attrs[i] = Some(blank(q));
                let mut cur = parent_of(i);
                while let Some(p) = cur {
                    ancestors[i].push(p);
                    cur = parent_of(p);
                }
                if let Some(p) = parent_of(i) {
                    has_children[p] = true;
                }
            }
            // Top-down (parents before children): a child's effective capability is its
            // own where it lists a resource (cpu and memory above 0), else its parent's;
            // its real capability is the parent's less all siblings' guarantees plus its own,
            // capped by that capability (`checkHierarchicalQueue`).
            let mut order: Vec<usize> = (0..nq).collect();
            order.sort_by_key(|&i| ancestors[i].len());
            let mut effective: Vec<Res> = vec![vec![f64::INFINITY; n]; nq];
            for &i in &order {
                let parent = parent_of(i);
                let (parent_cap, parent_real) = match parent {
                    Some(p) => (
                        effective[p].clone(),
                        attrs[p]
                            .as_ref()
                            .map_or(vec![f64::INFINITY; n], |a| a.real_capability.clone()),
                    ),
                    None => (vec![f64::INFINITY; n], vec![f64::INFINITY; n]),
                };
                let mut cap = parent_cap;
                if let Some(c) = &queues[i].capability {
                    for (r, a) in c.iter() {
                        let k = r.index();
                        if units.caps(k, a) {
                            cap[k] = units.amount(k, a);
                        }
                    }
                }
                let mut siblings = vec![0.0; n];
                for (j, q) in queues.iter().enumerate() {
                    if parent_of(j) == parent {
                        add(&mut siblings, &units.dense(&q.guarantee));
                    }
                }
                let attr = attrs[i].as_mut().expect("every queue has attributes");
                for (k, real) in attr.real_capability.iter_mut().enumerate() {
                    *real =
                        ((parent_real[k] - siblings[k]).max(0.0) + attr.guarantee[k]).min(cap[k]);
                }
                effective[i] = cap;
            }
        } else {
            let mut total_guarantee = vec![0.0; n];
            for q in queues {
                add(&mut total_guarantee, &units.dense(&q.guarantee));
            }
            for job in jobs {
                attrs[job.queue].get_or_insert_with(|| {
                    let q = &queues[job.queue];
                    let mut a = blank(q);
                    for (k, real) in a.real_capability.iter_mut().enumerate() {
                        *real = (total[k] - total_guarantee[k]).max(0.0) + a.guarantee[k];
                    }
                    if let Some(c) = &q.capability {
                        for (r, x) in c.iter() {
                            let k = r.index();
                            if units.caps(k, x) {
                                a.real_capability[k] = a.real_capability[k].min(units.amount(k, x));
                            }
                        }
                    }
                    a
                });
            }
        }
        // The jobs' usage, on their queue and (hierarchical) every ancestor.
        for job in jobs {
            let chain: Vec<usize> = std::iter::once(job.queue)
                .chain(ancestors[job.queue].iter().copied())
                .collect();
            for q in chain {
                let Some(attr) = attrs[q].as_mut() else {
                    continue;
                };
                add(&mut attr.allocated, &job.allocated);
                add(&mut attr.request, &job.allocated);
                add(&mut attr.request, &job.pending);
                if let Some(min) = &job.min_resources {
                    if job.inqueue || job.running_ready {
                        add_excess(&mut attr.inqueue, min, &job.allocated);
                    }
                    add_excess(&mut attr.elastic, &job.allocated, min);
                }
            }
        }
        for attr in attrs.iter_mut().flatten() {
            for ((d, real), g) in attr
                .deserved
                .iter_mut()
                .zip(&attr.real_capability)
                .zip(&attr.guarantee)
            {
                *d = d.min(*real).max(*g);
            }
            attr.share = share(&attr.allocated, &attr.deserved);
        }
        Capacity {
            attrs,
            ancestors,
            has_children,
        }
    }

    /// The queue and its ancestors, leaf first.
    fn chain(&self, qi: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(qi).chain(self.ancestors[qi].iter().copied())
    }

    /// `AllocatableFn`: the queue is open (and a leaf), and allocated + request stays
    /// within the real capability of it and every ancestor, in the dimensions asked for.
    pub fn allocatable(&self, queue: &VolcanoQueue, qi: usize, request: &[f64]) -> bool {
        if !queue.open || self.has_children[qi] {
            return false;
        }
        self.chain(qi).all(|q| {
            self.attrs[q].as_ref().is_none_or(|a| {
                let mut future = a.allocated.clone();
                add(&mut future, request);
                exceeded_in(&future, &a.real_capability, request).is_empty()
            })
        })
    }

    /// `JobEnqueueableFn`: Err(None) for a closed or non-leaf queue, Err(Some(resources))
    /// when minResources + allocated + inqueue − elastic exceeds the real capability of the
    /// queue or an ancestor (the first, leaf up, that does).
    pub fn enqueueable(
        &self,
        queue: &VolcanoQueue,
        qi: usize,
        min: Option<&[f64]>,
    ) -> Result<(), Option<Vec<usize>>> {
        if !queue.open || self.has_children[qi] {
            return Err(None);
        }
        let Some(min) = min else { return Ok(()) };
        for q in self.chain(qi) {
            let Some(a) = &self.attrs[q] else { continue };
            let r: Res = (0..min.len())
                .map(|i| min[i] + a.allocated[i] + a.inqueue[i] - a.elastic[i])
                .collect();
            let over = exceeded_in(&r, &a.real_capability, min);
            if !over.is_empty() {
                return Err(Some(over));
            }
        }
        Ok(())
    }
}

/// The reclaimer `Capacity::reclaimable` votes for: its queue and requests, and the
/// plugin's `enableHierarchy` and `ancestorReclaimLevel`.
#[derive(Clone, Copy, Debug)]
pub struct Reclaimer<'a> {
    /// Its queue (index into `World::volcano_queues`).
    pub queue: usize,
    /// Its requests (`InitResreq`), in upstream units.
    pub req: &'a [f64],
    /// `enableHierarchy`.
    pub hierarchy: bool,
    /// `ancestorReclaimLevel`.
    pub level: u32,
}

/// `LessEqualPartlyWithDimensionZeroFiltered(rr, req)`: some resource `req` asks for, where
/// `l` or `r` is not empty, has `l` at most `r` (with `minResource` tolerance).
fn less_equal_partly_zero_filtered(units: &Units, l: &[f64], r: &[f64], req: &[f64]) -> bool {
    (0..l.len()).any(|i| {
        req[i] > 0.0
            && !units.ignored(i)
            && !(l[i] < MIN_RESOURCE && r[i] < MIN_RESOURCE)
            && (l[i] < r[i] || (l[i] - r[i]).abs() < MIN_RESOURCE)
    })
}

/// `GreaterPartlyWithRelevantDimensions(rr, req)`: some resource `req` asks for and `r`
/// holds has `l` strictly above `r`. Upstream keeps cpu and memory when `r`'s is at least
/// `minResource` and a scalar when `r` lists it; kueuesim's dense amounts read a scalar
/// listed at 0 as not listed.
fn greater_partly_relevant(units: &Units, l: &[f64], r: &[f64], req: &[f64]) -> bool {
    (0..l.len()).any(|i| {
        let relevant = if units.is_cpu_memory(i) {
            r[i] >= MIN_RESOURCE
        } else {
            r[i] > 0.0
        };
        req[i] > 0.0 && !units.ignored(i) && relevant && l[i] > r[i]
    })
}

impl Capacity {
    /// `queueAncestorAtDepth`: the ancestor `depth` levels up (1: the parent); None past
    /// the top or at a Queue named `root` (upstream's `rootQueueID`, which it never checks).
    fn ancestor_at(&self, queues: &[VolcanoQueue], qi: usize, depth: u32) -> Option<usize> {
        let a = *self.ancestors[qi].get(depth.checked_sub(1)? as usize)?;
        (queues[a].name != "root").then_some(a)
    }

    /// `sharesAnyNonRootAncestorWithinLevel`.
    fn share_ancestor(&self, queues: &[VolcanoQueue], a: usize, b: usize, level: u32) -> bool {
        (1..=level).any(|d| {
            self.ancestor_at(queues, a, d)
                .is_some_and(|x| (1..=level).any(|e| self.ancestor_at(queues, b, e) == Some(x)))
        })
    }

    /// `PreemptiveFn`: whether queue `qi` may reclaim for `request`: the queue is open,
    /// allocated + request stays within its real capability (in the dimensions asked for),
    /// and in some dimension asked for it stays within its deserved; else, with the
    /// hierarchy and `ancestorReclaimLevel`, within the deserved of an ancestor up to that
    /// level (the root aside).
    pub fn preemptive(
        &self,
        queues: &[VolcanoQueue],
        units: &Units,
        qi: usize,
        request: &[f64],
        hierarchy: bool,
        level: u32,
    ) -> bool {
        if !queues[qi].open {
            return false;
        }
        let Some(a) = &self.attrs[qi] else {
            return false;
        };
        let mut future = a.allocated.clone();
        add(&mut future, request);
        if !exceeded_in(&future, &a.real_capability, request).is_empty() {
            return false;
        }
        if less_equal_partly_zero_filtered(units, &future, &a.deserved, request) {
            return true;
        }
        hierarchy
            && (1..=level).any(|d| {
                self.ancestor_at(queues, qi, d)
                    .and_then(|p| self.attrs[p].as_ref())
                    .is_some_and(|p| {
                        let mut future = p.allocated.clone();
                        add(&mut future, request);
                        less_equal_partly_zero_filtered(units, &future, &p.deserved, request)
                    })
            })
    }

    /// `ReclaimableFn`: of `reclaimees` (key, queue, requests), in the victims' order
    /// (`BuildVictimsPriorityQueue`), those reclaim may take for `reclaimer`. A reclaimee
    /// sharing no resource with the reclaimer is skipped (`shouldSkipReclaimee`); its queue
    /// must keep its guarantee without it (`checkGuaranteeConstraint`); it is a victim when
    /// it asks for nothing the queue deserves (`isImmediateVictim`) or when the queue's
    /// allocated, less the victims already taken, exceeds its deserved in a resource the
    /// reclaimee asks for (`checkDeservedExceedance`). With the hierarchy and
    /// `ancestorReclaimLevel`, an immediate victim sharing an ancestor within the level with
    /// a reclaimer that asks for nothing its queue deserves is spared, and every ancestor of
    /// the reclaimee up to the level that the reclaimer does not share must exceed its
    /// deserved as well (`getReclaimeeAncestorToCheck`).
    pub fn reclaimable(
        &self,
        queues: &[VolcanoQueue],
        units: &Units,
        reclaimer: Reclaimer,
        reclaimees: &[(usize, usize, &[f64])],
    ) -> Vec<usize> {
        let Some(reclaimer_attr) = &self.attrs[reclaimer.queue] else {
            return Vec::new();
        };
        let level = if reclaimer.hierarchy {
            reclaimer.level
        } else {
            0
        };
        let mut allocations: std::collections::BTreeMap<usize, Res> = Default::default();
        let mut victims = Vec::new();
        for &(key, q, req) in reclaimees {
            let Some(attr) = &self.attrs[q] else { continue };
            if !units.intersect(req, reclaimer.req) {
                continue;
            }
            let allocated = allocations
                .entry(q)
                .or_insert_with(|| attr.allocated.clone());
            let without: Res = allocated.iter().zip(req).map(|(a, r)| a - r).collect();
            if !less_equal(&attr.guarantee, &without) {
                continue;
            }
            if !units.relevant_deserved(req, &attr.deserved) {
                if level > 0
                    && self.share_ancestor(queues, reclaimer.queue, q, level)
                    && !units.relevant_deserved(reclaimer.req, &reclaimer_attr.deserved)
                {
                    continue;
                }
            } else if !greater_partly_relevant(units, allocated, &attr.deserved, req) {
                continue;
            }
            let mut checked: Vec<usize> = Vec::new();
            let mut eligible = true;
            for d in 1..=level {
                let Some(t) = self.ancestor_at(queues, q, d) else {
                    continue;
                };
                if self.ancestor_at(queues, reclaimer.queue, d) == Some(t) {
                    continue;
                }
                let Some(ta) = &self.attrs[t] else {
                    eligible = false;
                    break;
                };
                let t_alloc = allocations.entry(t).or_insert_with(|| ta.allocated.clone());
                if !checked.contains(&t) {
                    checked.push(t);
                }
                if !units.relevant_deserved(req, &ta.deserved) {
                    continue;
                }
                if !greater_partly_relevant(units, t_alloc, &ta.deserved, req) {
                    eligible = false;
                    break;
                }
            }
            if !eligible {
                continue;
            }
            for x in std::iter::once(q).chain(checked) {
                if let Some(a) = allocations.get_mut(&x) {
                    for (v, r) in a.iter_mut().zip(req) {
                        *v -= r;
                    }
                }
            }
            victims.push(key);
        }
        victims
    }
}

/// The queue plugin of a session.
#[derive(Clone, Debug)]
pub enum QueueView {
    /// `proportion`.
    Proportion(Proportion),
    /// `capacity`.
    Capacity(Capacity),
}

impl QueueView {
    /// `OverusedFn` (capacity registers none).
    pub fn overused(&self, qi: usize) -> bool {
        match self {
            QueueView::Proportion(p) => p.overused(qi),
            QueueView::Capacity(_) => false,
        }
    }

    /// `AllocatableFn`.
    pub fn allocatable(&self, queue: &VolcanoQueue, qi: usize, request: &[f64]) -> bool {
        match self {
            QueueView::Proportion(p) => p.allocatable(queue, qi, request),
            QueueView::Capacity(c) => c.allocatable(queue, qi, request),
        }
    }

    /// `JobEnqueueableFn`.
    pub fn enqueueable(
        &self,
        queue: &VolcanoQueue,
        qi: usize,
        min: Option<&[f64]>,
    ) -> Result<(), Option<Vec<usize>>> {
        match self {
            QueueView::Proportion(p) => p.enqueueable(queue, qi, min),
            QueueView::Capacity(c) => c.enqueueable(queue, qi, min),
        }
    }

    /// A queue's attributes (None: the queue has no job in the session).
    pub fn attr(&self, qi: usize) -> Option<&QueueAttr> {
        match self {
            QueueView::Proportion(p) => p.attrs[qi].as_ref(),
            QueueView::Capacity(c) => c.attrs[qi].as_ref(),
        }
    }

    /// A task of queue `qi` allocated (`sign` 1, the plugins' `AllocateFunc`) or evicted
    /// (-1, `DeallocateFunc`) in the session: the queue's allocated (and with capacity's
    /// hierarchy its ancestors') and its share follow.
    pub fn account(&mut self, qi: usize, request: &[f64], sign: f64) {
        let chain: Vec<usize> = match self {
            QueueView::Proportion(_) => vec![qi],
            QueueView::Capacity(c) => c.chain(qi).collect(),
        };
        for q in chain {
            let attr = match self {
                QueueView::Proportion(p) => p.attrs[q].as_mut(),
                QueueView::Capacity(c) => c.attrs[q].as_mut(),
            };
            if let Some(a) = attr {
                for (x, r) in a.allocated.iter_mut().zip(request) {
                    *x += sign * r;
                }
                a.share = share(&a.allocated, &a.deserved);
            }
        }
    }
}

impl QueueView {
    /// The session's `QueueOrderFn` between queues `a` and `b` (Less: `a` is taken first by
    /// the allocate action). With the plugin's queue order on (`enableQueueOrder`, default
    /// true), proportion's and capacity's own: the higher `spec.priority` first, then the
    /// smaller share; capacity puts a queue with a `deserved` before one without at an equal
    /// share (`compareShareWithDeserved`), and with `enableHierarchy` compares, below the
    /// queues' deepest common ancestor, the two subtrees' shares. Equal when the plugin
    /// does not tell them apart (upstream then takes the queue created first, then the
    /// smaller UID).
    pub fn queue_order(
        &self,
        queues: &[VolcanoQueue],
        by_plugin: bool,
        a: usize,
        b: usize,
    ) -> std::cmp::Ordering {
        if !by_plugin {
            return std::cmp::Ordering::Equal;
        }
        let by_priority = queues[b].priority.cmp(&queues[a].priority);
        if by_priority.is_ne() {
            return by_priority;
        }
        match self {
            QueueView::Proportion(_) => self.order_share(a).total_cmp(&self.order_share(b)),
            QueueView::Capacity(c) => {
                let (leaf_a, leaf_b) = (!c.has_children[a], !c.has_children[b]);
                if leaf_a != leaf_b {
                    // A leaf queue first.
                    leaf_b.cmp(&leaf_a)
                } else {
                    // `getQueueLevel`: below the deepest common ancestor, each side's
                    // subtree (or the queue itself); in flat mode the queues themselves.
                    let path = |q: usize| {
                        let mut p: Vec<usize> = c.ancestors[q].iter().rev().copied().collect();
                        p.push(q);
                        p
                    };
                    let (pa, pb) = (path(a), path(b));
                    let common = pa.iter().zip(&pb).take_while(|(x, y)| x == y).count();
                    let sa = pa.get(common).copied().unwrap_or(a);
                    let sb = pb.get(common).copied().unwrap_or(b);
                    self.order_share(sa)
                        .total_cmp(&self.order_share(sb))
                        .then_with(|| {
                            // At an equal share a queue with a deserved first.
                            let deserves = |q: usize| {
                                self.attr(q)
                                    .is_some_and(|x| x.deserved.iter().any(|&d| d >= MIN_RESOURCE))
                            };
                            deserves(sb).cmp(&deserves(sa))
                        })
                }
            }
        }
    }

    /// A queue's share as its plugin's `updateQueueAttrShare` has it: the largest
    /// allocated/deserved over the resources it deserves (`ResourceNames`: at least
    /// `minResource`); capacity gives a queue that deserves nothing 1 (best-effort, after
    /// every queue below its deserved).
    fn order_share(&self, q: usize) -> f64 {
        let Some(attr) = self.attr(q) else {
            return 0.0;
        };
        let named = attr.deserved.iter().any(|&d| d >= MIN_RESOURCE);
        if !named && matches!(self, QueueView::Capacity(_)) {
            return 1.0;
        }
        attr.allocated
            .iter()
            .zip(&attr.deserved)
            .filter(|(_, d)| **d >= MIN_RESOURCE)
            .map(|(a, d)| a / d)
            .fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cpu, memory, nvidia.com/gpu, pods.
    fn units() -> Units {
        let mut t = ResourceTable::default();
        for r in ["cpu", "memory", "nvidia.com/gpu", "pods"] {
            t.intern(r);
        }
        Units::new(&t)
    }

    /// `LessEqualPartlyWithDimensionZeroFiltered`: one resource asked for within is enough;
    /// a resource both sides lack is left out, and `pods` never counts.
    #[test]
    fn preemptive_needs_room_in_one_resource_asked_for() {
        let u = units();
        // 4 cpu used of 2 deserved, memory within: preemptive on memory.
        assert!(less_equal_partly_zero_filtered(
            &u,
            &[4000.0, 4.0, 0.0, 0.0],
            &[2000.0, 4.0, 0.0, 0.0],
            &[2000.0, 3.0, 0.0, 0.0]
        ));
        // Above in cpu, memory not asked for: not preemptive.
        assert!(!less_equal_partly_zero_filtered(
            &u,
            &[4000.0, 0.0, 0.0, 1.0],
            &[2000.0, 4.0, 0.0, 10.0],
            &[2000.0, 0.0, 0.0, 1.0]
        ));
        // GPUs neither used nor deserved are left out (not "0 ≤ 0").
        assert!(!less_equal_partly_zero_filtered(
            &u,
            &[4000.0, 0.0, 0.0, 0.0],
            &[2000.0, 0.0, 0.0, 0.0],
            &[2000.0, 0.0, 1000.0, 0.0]
        ));
    }

    /// `GreaterPartlyWithRelevantDimensions`: strictly above, in a resource the reclaimee asks
    /// for and the queue deserves.
    #[test]
    fn reclaimable_only_above_the_deserved_in_resources_it_deserves() {
        let u = units();
        let deserved = [2000.0, 4.0, 0.0, 0.0];
        // Equal is not above.
        assert!(!greater_partly_relevant(
            &u,
            &[2000.0, 4.0, 0.0, 0.0],
            &deserved,
            &[2000.0, 4.0, 0.0, 0.0]
        ));
        // GPUs above a deserved the queue lacks do not count.
        assert!(!greater_partly_relevant(
            &u,
            &[2000.0, 4.0, 3000.0, 0.0],
            &deserved,
            &[0.0, 0.0, 1000.0, 0.0]
        ));
        assert!(greater_partly_relevant(
            &u,
            &[3000.0, 4.0, 0.0, 0.0],
            &deserved,
            &[1000.0, 0.0, 0.0, 0.0]
        ));
        // `hasRelevantDeserved` counts a deserved `pods` (every task holds one).
        assert!(!u.relevant_deserved(&[0.0, 0.0, 1000.0, 0.0], &deserved));
        assert!(u.relevant_deserved(&[0.0, 0.0, 1000.0, 0.0], &[0.0, 0.0, 0.0, 2.0]));
    }

    /// capacity's hierarchical `QueueOrderFn`: below the common ancestor, the subtrees'
    /// shares decide, not the leaves' own; a queue with a deserved goes before a best-effort
    /// one at an equal share; a higher priority before everything.
    #[test]
    fn hierarchical_queue_order_compares_the_subtrees_below_the_common_ancestor() {
        let mut t = ResourceTable::default();
        let cpu = t.intern("cpu");
        let u = Units::new(&t);
        let q = |name: &str, parent: Option<usize>, deserved: Option<i64>| VolcanoQueue {
            name: name.into(),
            parent,
            deserved: deserved.map(|d| ResourceList::from_pairs(vec![(cpu, d)])),
            ..VolcanoQueue::implicit_default()
        };
        // 0 a (deserves 4), 1 a1 (2), 2 a2 (2), 3 b (4), 4 b1 (2), 5 b2 (none).
        let mut queues = vec![
            q("a", None, Some(4000)),
            q("a1", Some(0), Some(2000)),
            q("a2", Some(0), Some(2000)),
            q("b", None, Some(4000)),
            q("b1", Some(3), Some(2000)),
            q("b2", Some(3), None),
        ];
        let job = |queue: usize, allocated: f64| SessionJob {
            queue,
            allocated: vec![allocated],
            pending: vec![1000.0],
            min_resources: None,
            inqueue: true,
            running_ready: false,
        };
        // a1 runs 2 cpu (a: share 0.5, a1: 1), b1 runs 1 cpu (b: 0.25, b1: 0.5).
        let jobs = [job(1, 2000.0), job(2, 0.0), job(4, 1000.0), job(5, 0.0)];
        let view = |queues: &[VolcanoQueue]| {
            QueueView::Capacity(Capacity::open(queues, &u, &[16000.0], &jobs, true))
        };
        let v = view(&queues);
        use std::cmp::Ordering::{Greater, Less};
        // a2's own share is 0, b1's 0.5, but b's subtree is below a's.
        assert_eq!(v.queue_order(&queues, true, 2, 4), Greater);
        // Under a: a2 (0) before a1 (1).
        assert_eq!(v.queue_order(&queues, true, 2, 1), Less);
        // Under b: b1 (0.5) before the best-effort b2 (1).
        assert_eq!(v.queue_order(&queues, true, 4, 5), Less);
        // Without the plugin's queue order, nothing tells them apart.
        assert!(v.queue_order(&queues, false, 2, 4).is_eq());
        // A higher priority first, whatever the shares.
        queues[1].priority = 1;
        assert_eq!(view(&queues).queue_order(&queues, true, 1, 4), Less);
    }
}
