//! `pendingBoundBy` over time: every pending workload-millisecond of a ClusterQueue and of a
//! LocalQueue added to the set of constraints that held the workload back at that moment
//! (`bound::BoundSet`), in integers, as the run goes.
//!
//! A workload counts while it waits to run: Pending in Kueue, or holding quota while its
//! scheduler cannot place its pods (not while its bound pods start). Its part is one of:
//! - `Own`: a set of its own, from the moment something reported it (its flavor assignment
//!   in a StrictFIFO ClusterQueue, a preemption it waits for, a placement that failed, a
//!   PodsReady back-off, a stopped queue), added up when it changes;
//! - `Follow`: a Pending workload of a BestEffortFIFO ClusterQueue shares the set its shape's
//!   last head was found inadmissible for. Kueue parks every workload of a head's scheduling
//!   shape with it (`SchedulingEquivalenceHashing`) and tries them again only one head at a
//!   time, so most of them are never tried themselves while they wait: what held the head back
//!   holds them. The time of each (ClusterQueue, shape) group's followers is added up per
//!   LocalQueue whenever the group's set or followers change, not per workload;
//! - `Off`: not waiting (admitted and placed, running, finished, inactive, evicted while its
//!   pods terminate but for a PodsReady eviction) or not Kueue's.
//!
//! Nothing recorded here feeds back into a decision.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use kueuesim_model::{
    ClusterQueueId, DomainId, LocalQueueId, QueueRef, QueueingStrategy, ResourceId, SchedulerKind,
    SimTime, StopPolicy, WorkloadId,
};

use crate::bound::{BoundSet, Constraint, PendingBound};

use super::Simulation;

/// A workload's part in `pendingBoundBy` (see the module's words).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Bound {
    #[default]
    Off,
    /// Held back by this set.
    Own(BoundSet),
    /// One of its (ClusterQueue, shape) group's followers.
    Follow,
}

/// The pending workloads of one shape in one BestEffortFIFO ClusterQueue that share its last
/// set, and since when it is added up.
///
/// The ClusterQueue's time is added up at every change to the group. A LocalQueue's is added
/// up when its own count of followers changes or the group's set does (`Follower::since`),
/// so an arrival costs the same with ten thousand LocalQueues following the shape as with
/// one. That is exact only while the set has one member (its split keeps every millisecond);
/// a set of several splits each addition rounding down, so then every follower is added up
/// at every change to the group, as it always was, to keep the same milliseconds.
#[derive(Clone, Debug)]
struct Group {
    set: BoundSet,
    since: SimTime,
    /// The LocalQueues with followers (none with a count of 0).
    followers: BTreeMap<LocalQueueId, Follower>,
    total: u32,
}

/// A LocalQueue's followers in a group, and since when their time is not yet added up.
#[derive(Clone, Copy, Debug)]
struct Follower {
    count: u32,
    since: SimTime,
}

impl Follower {
    /// Adds this LocalQueue's time under `set` up to `now` to its tally `lq_ms`.
    fn flush(&mut self, lq_ms: &mut Vec<u64>, resources: usize, set: &BoundSet, now: SimTime) {
        let ms = (now - self.since).millis().max(0) as u64;
        self.since = now;
        if ms > 0 {
            add(lq_ms, resources, set, ms * u64::from(self.count));
        }
    }
}

/// The run's pending milliseconds per ClusterQueue, per LocalQueue and per constraint, and
/// the groups of followers.
#[derive(Clone, Debug)]
pub(super) struct BoundTally {
    /// Resources in the world: a constraint's slot in the per-queue tallies is `slot`'s.
    resources: usize,
    /// Per ClusterQueue, per constraint slot: pending milliseconds.
    cq_ms: Vec<Vec<u64>>,
    /// Per LocalQueue, likewise.
    lq_ms: Vec<Vec<u64>>,
    /// Per ClusterQueue, each shape's index in its `groups` (`NO_GROUP`: none yet), dense by
    /// shape as the queue manager keeps its shapes: a lookup on every arrival, decision and
    /// admission is an index, not a search.
    group_of: Vec<Vec<u32>>,
    /// Per ClusterQueue, its groups.
    groups: Vec<Vec<Group>>,
}

/// `BoundTally::group_of` of a shape without a group.
const NO_GROUP: u32 = u32::MAX;

/// The constraints that name no resource, in their slots' order.
const SINGLES: [Constraint; 8] = [
    Constraint::Untried,
    Constraint::Nodes,
    Constraint::Topology,
    Constraint::StrictFifo,
    Constraint::Stopped,
    Constraint::PodsReady,
    Constraint::Preempting,
    Constraint::Misconfigured,
];

/// A constraint's slot in a queue's tally: the singles first, then four per resource.
fn slot(c: Constraint, resources: usize) -> usize {
    let per = |kind: usize, r: ResourceId| SINGLES.len() + kind * resources + r.index();
    match c {
        Constraint::Quota(r) => per(0, r),
        Constraint::BorrowingLimit(r) => per(1, r),
        Constraint::LendingLimit(r) => per(2, r),
        Constraint::Cohort(r) => per(3, r),
        c => SINGLES
            .iter()
            .position(|&s| s == c)
            .expect("every other constraint is a single"),
    }
}

/// The constraint of `slot`.
fn constraint_at(slot: usize, resources: usize) -> Constraint {
    if let Some(&c) = SINGLES.get(slot) {
        return c;
    }
    let i = slot - SINGLES.len();
    let r = ResourceId::from_index(i % resources);
    match i / resources {
        0 => Constraint::Quota(r),
        1 => Constraint::BorrowingLimit(r),
        2 => Constraint::LendingLimit(r),
        _ => Constraint::Cohort(r),
    }
}

/// Adds `set`'s parts of `ms` to the tally `v`.
fn add(v: &mut Vec<u64>, resources: usize, set: &BoundSet, ms: u64) {
    set.split(ms, |c, part| {
        let i = slot(c, resources);
        if v.len() <= i {
            v.resize(i + 1, 0);
        }
        v[i] += part;
    });
}

/// Adds the time of group `g`'s followers up to `now`: to the ClusterQueue's tally `cq_ms`,
/// and to the LocalQueues' tallies `lq_ms` when `every` LocalQueue is due (the set changes,
/// the run ends) or the set has several members (see `Group`).
fn flush(
    g: &mut Group,
    cq_ms: &mut Vec<u64>,
    lq_ms: &mut [Vec<u64>],
    resources: usize,
    now: SimTime,
    every: bool,
) {
    let ms = (now - g.since).millis().max(0) as u64;
    g.since = now;
    if ms > 0 && g.total > 0 {
        add(cq_ms, resources, &g.set, ms * u64::from(g.total));
    }
    if every || g.set.len() > 1 {
        for (lq, f) in &mut g.followers {
            f.flush(&mut lq_ms[lq.index()], resources, &g.set, now);
        }
    }
}

impl BoundTally {
    pub(super) fn new(world: &kueuesim_model::World) -> Self {
        let n = world.cluster_queues.len();
        BoundTally {
            resources: world.resources.len().max(1),
            cq_ms: vec![Vec::new(); n],
            lq_ms: vec![Vec::new(); world.local_queues.len()],
            group_of: vec![Vec::new(); n],
            groups: vec![Vec::new(); n],
        }
    }

    fn add(&mut self, cq: ClusterQueueId, lq: LocalQueueId, set: &BoundSet, ms: u64) {
        if ms > 0 {
            add(&mut self.cq_ms[cq.index()], self.resources, set, ms);
            add(&mut self.lq_ms[lq.index()], self.resources, set, ms);
        }
    }

    /// Group (`cq`, `shape`), made (`untried`, no followers) on first use, and flushed up to
    /// `now` (its followers' time so far added up; every LocalQueue's too with `every`).
    fn group(&mut self, cq: ClusterQueueId, shape: u32, now: SimTime, every: bool) -> &mut Group {
        let i = self.group_index(cq, shape, now, every);
        &mut self.groups[cq.index()][i]
    }

    /// `group`'s index in its ClusterQueue's `groups`.
    fn group_index(&mut self, cq: ClusterQueueId, shape: u32, now: SimTime, every: bool) -> usize {
        let c = cq.index();
        let slots = &mut self.group_of[c];
        let s = shape as usize;
        if slots.len() <= s {
            slots.resize(s + 1, NO_GROUP);
        }
        if slots[s] == NO_GROUP {
            slots[s] = self.groups[c].len() as u32;
            self.groups[c].push(Group {
                set: BoundSet::one(Constraint::Untried),
                since: now,
                followers: BTreeMap::new(),
                total: 0,
            });
        }
        let i = slots[s] as usize;
        let g = &mut self.groups[c][i];
        flush(
            g,
            &mut self.cq_ms[c],
            &mut self.lq_ms,
            self.resources,
            now,
            every,
        );
        i
    }

    /// One more (`step` 1) or one fewer (-1) follower of LocalQueue `lq` in group (`cq`,
    /// `shape`) from `now`.
    fn follow(
        &mut self,
        cq: ClusterQueueId,
        shape: u32,
        lq: LocalQueueId,
        now: SimTime,
        step: i32,
    ) {
        let resources = self.resources;
        let i = self.group_index(cq, shape, now, false);
        let g = &mut self.groups[cq.index()][i];
        match g.followers.entry(lq) {
            Entry::Occupied(mut e) => {
                let f = e.get_mut();
                // Its time so far at its old count.
                f.flush(&mut self.lq_ms[lq.index()], resources, &g.set, now);
                f.count = f.count.saturating_add_signed(step);
                if f.count == 0 {
                    e.remove();
                }
            }
            Entry::Vacant(e) if step > 0 => {
                e.insert(Follower {
                    count: step as u32,
                    since: now,
                });
            }
            Entry::Vacant(_) => {}
        }
        g.total = g.total.saturating_add_signed(step);
    }

    /// Group (`cq`, `shape`)'s set from `now` on.
    fn set_group(&mut self, cq: ClusterQueueId, shape: u32, set: &BoundSet, now: SimTime) {
        let same = self.group_of[cq.index()]
            .get(shape as usize)
            .filter(|&&i| i != NO_GROUP)
            .is_some_and(|&i| self.groups[cq.index()][i as usize].set == *set);
        if !same {
            self.group(cq, shape, now, true).set = *set;
        }
    }

    /// The milliseconds per queue and constraint, every group added up to `end`.
    fn finish(mut self, end: SimTime) -> PendingBound {
        let resources = self.resources;
        for (c, groups) in self.groups.iter_mut().enumerate() {
            for g in groups {
                flush(g, &mut self.cq_ms[c], &mut self.lq_ms, resources, end, true);
            }
        }
        let per = |v: &[Vec<u64>]| -> Vec<BTreeMap<Constraint, u64>> {
            v.iter()
                .map(|ms| {
                    ms.iter()
                        .enumerate()
                        .filter(|&(_, &t)| t > 0)
                        .map(|(i, &t)| (constraint_at(i, resources), t))
                        .collect()
                })
                .collect()
        };
        PendingBound {
            cluster_queues: per(&self.cq_ms),
            local_queues: per(&self.lq_ms),
        }
    }
}

impl Simulation<'_> {
    /// The ClusterQueue and LocalQueue `w`'s pending time counts in: those of the LocalQueue
    /// it names (None when Kueue does not manage it, or its LocalQueue does not exist).
    fn bound_queues(&self, w: WorkloadId) -> Option<(ClusterQueueId, LocalQueueId)> {
        match self.runtimes[w.index()].spec.queue {
            QueueRef::Local(lq) => Some((self.world.local_queue(lq).cluster_queue, lq)),
            _ => None,
        }
    }

    /// `w`'s part changes to `to` now: the time of its part so far is added up.
    fn set_bound(&mut self, w: WorkloadId, to: Bound) {
        let Some((cq, lq)) = self.bound_queues(w) else {
            return;
        };
        let now = self.now;
        let rt = &mut self.runtimes[w.index()];
        if rt.bound == to {
            return;
        }
        let (from, since, shape) = (rt.bound, rt.bound_since, rt.shape);
        rt.bound = to;
        rt.bound_since = now;
        let tally = &mut self.rec.bound;
        match from {
            Bound::Own(set) => tally.add(cq, lq, &set, (now - since).millis().max(0) as u64),
            Bound::Follow => tally.follow(cq, shape, lq, now, -1),
            Bound::Off => {}
        }
        if to == Bound::Follow {
            tally.follow(cq, shape, lq, now, 1);
        }
    }

    /// `w` no longer waits (admitted, placed, finished, deactivated, evicted).
    pub(super) fn bound_off(&mut self, w: WorkloadId) {
        self.set_bound(w, Bound::Off);
    }

    /// `w` waits, held back by `c` alone, from now on.
    pub(super) fn bound_own(&mut self, w: WorkloadId, c: Constraint) {
        self.set_bound(w, Bound::Own(BoundSet::one(c)));
    }

    /// `w` (re)enters its queue (arrival, requeue, the end of its back-off): held back by
    /// its stopped LocalQueue or ClusterQueue, by the blocked head of a StrictFIFO
    /// ClusterQueue (it is not tried before the head is admitted), else by what holds its
    /// shape back.
    pub(super) fn bound_queued(&mut self, w: WorkloadId) {
        let Some((cq, lq)) = self.bound_queues(w) else {
            return;
        };
        let to = if self.world.local_queue(lq).stop_policy != StopPolicy::None
            || self.kueue.cq_stopped[cq.index()]
        {
            Bound::Own(BoundSet::one(Constraint::Stopped))
        } else if self.world.cluster_queue(cq).queueing_strategy == QueueingStrategy::StrictFIFO {
            Bound::Own(BoundSet::one(Constraint::StrictFifo))
        } else {
            Bound::Follow
        };
        self.set_bound(w, to);
    }

    /// A cycle found head `w` of `cq` inadmissible for `set` (empty: nothing new). In a
    /// BestEffortFIFO ClusterQueue a set that is not the workload's own becomes its shape's,
    /// for every workload of the shape waiting with it.
    pub(super) fn bound_decided(&mut self, w: WorkloadId, cq: ClusterQueueId, set: &BoundSet) {
        if set.is_empty() || self.bound_queues(w).is_none() {
            return;
        }
        let strict = self.world.cluster_queue(cq).queueing_strategy == QueueingStrategy::StrictFIFO;
        if strict || set.own() {
            self.set_bound(w, Bound::Own(*set));
        } else {
            let shape = self.runtimes[w.index()].shape;
            self.rec.bound.set_group(cq, shape, set, self.now);
            self.set_bound(w, Bound::Follow);
        }
    }

    /// Admitted workload `w`'s scheduler could not place its pods: `topology` when its
    /// placement has a required topology (Volcano's hard `networkTopology`, KAI's required
    /// level, Kueue TAS's assigned domains) and the free capacity of that topology's whole
    /// tree would hold its pending pods (by resources summed, and by GPUs per node:
    /// `Cluster::domain_may_place` at the root), else `nodes`.
    pub(super) fn bound_unplaced(&mut self, w: WorkloadId, kind: SchedulerKind) {
        if self.bound_queues(w).is_none() {
            return;
        }
        let c = match self.required_topology(w, kind) {
            Some(t) if self.tree_would_hold(w, t) => Constraint::Topology,
            _ => Constraint::Nodes,
        };
        self.bound_own(w, c);
    }

    /// The topology (as `placement::topologies` numbers them) a placement of `w` must keep
    /// its pods within one domain of, if any.
    fn required_topology(&self, w: WorkloadId, kind: SchedulerKind) -> Option<usize> {
        let world = self.world;
        let rt = &self.runtimes[w.index()];
        let gang = &rt.spec.gang;
        let hard = |nt: &Option<kueuesim_model::NetworkTopology>| {
            nt.as_ref()
                .is_some_and(|nt| nt.hard && nt.highest_tier.is_some())
        };
        let kai_index = |c: &kueuesim_model::KaiTopologyConstraint| {
            c.required.as_ref()?;
            world
                .topologies
                .binary_search_by(|t| t.name.as_str().cmp(&c.topology))
                .ok()
                .map(|i| i + 1)
        };
        let own = match kind {
            SchedulerKind::Volcano => (hard(&gang.network_topology)
                || gang
                    .volcano_subgroups
                    .iter()
                    .any(|g| hard(&g.network_topology)))
            .then_some(0),
            SchedulerKind::Kai => gang.kai_topology.as_ref().and_then(kai_index).or_else(|| {
                gang.kai_subgroups
                    .iter()
                    .filter_map(|g| g.constraint.as_ref())
                    .find_map(kai_index)
            }),
            SchedulerKind::Kube => None,
        };
        // Kueue TAS: the pods go to the domains of their topology assignment.
        own.or_else(|| {
            rt.record
                .admission
                .as_ref()?
                .pod_sets
                .iter()
                .find_map(|p| p.topology.as_ref())
                .map(|t| t.topology + 1)
        })
    }

    /// Whether topology `t`'s whole tree has the free capacity for `w`'s pending pods.
    fn tree_would_hold(&mut self, w: WorkloadId, t: usize) -> bool {
        // The pods are read into the placement attempts' buffer (`try_place`), which is
        // free again by now.
        let mut pods = std::mem::take(&mut self.sched.pods_scratch);
        let rt = &self.runtimes[w.index()];
        let cluster = &self.sched.cluster;
        let mut totals: Vec<(usize, i64)> = Vec::new();
        let mut need = 0;
        for (needs, slots) in rt.needs.iter().zip(&rt.record.placement) {
            let pending = slots.iter().filter(|s| s.is_none()).count();
            need += pending;
            for (r, amount) in needs.requests.iter() {
                let add = amount * pending as i64;
                match totals.iter_mut().find(|x| x.0 == r.index()) {
                    Some(x) => x.1 += add,
                    None => totals.push((r.index(), add)),
                }
            }
        }
        rt.pods_into(&mut pods);
        let gpu_sets = cluster.pending_gpu_pods(&pods);
        self.sched.pods_scratch = pods;
        let cluster = &self.sched.cluster;
        cluster.domain_may_hold(t, DomainId::ROOT, &totals)
            && cluster.domain_may_place(t, DomainId::ROOT, gpu_sets.as_deref(), need)
    }

    /// The end of the run (`end`): every part added up to it, the tallies into the run's
    /// statistics.
    pub(super) fn close_bounds(&mut self, end: SimTime) {
        let live: Vec<usize> = self.runtimes.iter().map(|(i, _)| i).collect();
        for i in live {
            let w = WorkloadId::from_index(i);
            let Some((cq, lq)) = self.bound_queues(w) else {
                continue;
            };
            let rt = &self.runtimes[i];
            if let Bound::Own(set) = rt.bound {
                let ms = (end - rt.bound_since).millis().max(0) as u64;
                self.rec.bound.add(cq, lq, &set, ms);
            }
        }
        let world = self.world;
        let tally = std::mem::replace(&mut self.rec.bound, BoundTally::new(world));
        self.rec.stats.pending_bound = tally.finish(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::{LocalQueue, ResourceId, World};

    /// The followers' time as it was added up before LocalQueues were flushed on their own
    /// changes: at every change to a group, every follower's time since the group's last.
    #[derive(Default)]
    struct EveryChange {
        set: Option<BoundSet>,
        since: SimTime,
        followers: Vec<(usize, u32)>,
        cq: Vec<u64>,
        lq: Vec<Vec<u64>>,
    }

    impl EveryChange {
        fn flush(&mut self, now: SimTime, resources: usize) {
            let ms = (now - self.since).millis().max(0) as u64;
            self.since = now;
            let total: u32 = self.followers.iter().map(|f| f.1).sum();
            if ms == 0 || total == 0 {
                return;
            }
            let set = self.set.expect("set");
            add(&mut self.cq, resources, &set, ms * u64::from(total));
            for &(l, n) in &self.followers {
                add(&mut self.lq[l], resources, &set, ms * u64::from(n));
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Follow(usize),
        Unfollow(usize),
        /// A new set: one constraint, or two of weights 1 and 2 (split with rounding).
        Set(bool, u8),
        Wait(u16),
    }

    fn op(queues: usize) -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            3 => (0..queues).prop_map(Op::Follow),
            2 => (0..queues).prop_map(Op::Unfollow),
            1 => (any::<bool>(), 0u8..3).prop_map(|(two, k)| Op::Set(two, k)),
            3 => (0u16..1000).prop_map(Op::Wait),
        ]
    }

    fn set_of(two: bool, k: u8) -> BoundSet {
        let r = ResourceId::from_index(0);
        let first = [
            Constraint::Quota(r),
            Constraint::Cohort(r),
            Constraint::Nodes,
        ][k as usize];
        let mut s = BoundSet::one(first);
        if two {
            s.insert(Constraint::BorrowingLimit(r), 2 * crate::bound::WEIGHT_ONE);
        }
        s
    }

    proptest::proptest! {
        /// A group's LocalQueues added up when their own count changes (one-constraint
        /// sets) or at every change (several constraints, whose split rounds each part
        /// down) hold, to the millisecond, what adding every follower up at every change to
        /// the group did; the ClusterQueue's time too.
        #[test]
        fn followers_add_up_as_at_every_change(ops in proptest::collection::vec(op(5), 1..120)) {
            let mut world = World::default();
            world.resources.intern("nvidia.com/gpu");
            world.cluster_queues.push(Default::default());
            for i in 0..5 {
                world.local_queues.push(LocalQueue {
                    namespace: format!("ns-{i}"),
                    name: "lq".into(),
                    cluster_queue: ClusterQueueId::from_index(0),
                    fair_sharing_weight_milli: 1000,
                    stop_policy: Default::default(),
                    afs_consumed: Vec::new(),
                });
            }
            let cq = ClusterQueueId::from_index(0);
            let mut tally = BoundTally::new(&world);
            let resources = tally.resources;
            let mut reference = EveryChange {
                set: Some(BoundSet::one(Constraint::Untried)),
                lq: vec![Vec::new(); 5],
                ..EveryChange::default()
            };
            let mut now = SimTime::ZERO;
            for op in ops {
                match op {
                    Op::Follow(l) | Op::Unfollow(l) => {
                        let step = if matches!(op, Op::Follow(_)) { 1 } else { -1 };
                        // As in a run, only a follower stops following.
                        let count = reference.followers.iter().find(|f| f.0 == l).map_or(0, |f| f.1);
                        if step < 0 && count == 0 {
                            continue;
                        }
                        tally.follow(cq, 0, LocalQueueId::from_index(l), now, step);
                        reference.flush(now, resources);
                        match reference.followers.iter().position(|f| f.0 == l) {
                            Some(i) => {
                                let f = &mut reference.followers[i].1;
                                *f = f.saturating_add_signed(step);
                            }
                            None if step > 0 => reference.followers.push((l, 1)),
                            None => {}
                        }
                    }
                    Op::Set(two, k) => {
                        let set = set_of(two, k);
                        tally.set_group(cq, 0, &set, now);
                        if reference.set != Some(set) {
                            reference.flush(now, resources);
                            reference.set = Some(set);
                        }
                    }
                    Op::Wait(ms) => now += kueuesim_model::SimDuration::from_millis(i64::from(ms)),
                }
            }
            reference.flush(now, resources);
            let got = tally.finish(now);
            let want = |v: &[u64]| -> BTreeMap<Constraint, u64> {
                v.iter()
                    .enumerate()
                    .filter(|&(_, &t)| t > 0)
                    .map(|(i, &t)| (constraint_at(i, resources), t))
                    .collect()
            };
            proptest::prop_assert_eq!(&got.cluster_queues[0], &want(&reference.cq));
            for l in 0..5 {
                proptest::prop_assert_eq!(&got.local_queues[l], &want(&reference.lq[l]), "LocalQueue {}", l);
            }
        }
    }
}
