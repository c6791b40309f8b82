//! One scheduling cycle (`Scheduler.schedule`): nominate the heads (`getInitialAssignments`,
//! with partial admission), order them (classical iterator or the fair-sharing tournament) and
//! process them against a snapshot whose usage accumulates (`processEntry`).

use std::fmt::Write as _;

use kueuesim_model::quota::{Fr, QuotaTree};
use kueuesim_model::{
    ClusterQueueId, FlavorId, PreemptionPolicy, TopologyRequest, WorkloadId, World,
};

use crate::bound::{BoundSet, Constraint};
use crate::outcome::PodSetAssignment;
use crate::preemption::{AdmittedWorkloads, Candidate, QuotaByPriority, Target, TopologyFit};
use crate::queues::RequeueReason;
use crate::tas::TasCapacity;

use super::binding::bound_of;
use super::flavors::{
    FlavorAssigner, Scratch, Subject, preemption_targets, remove_workloads, topology_assignment,
};
use super::pod_set_fit::tas_request;
use super::tas_fit::{PreemptorTopology, tas_flavor_of};
use super::{
    Assignment, Decision, Head, Mode, NotAdmitted, REASON_MISCONFIGURED, REASON_SUSPENDED,
    REASON_WAITING_FOR_PREEMPTED, REASON_WAITING_FOR_QUOTA, ScanClock, ScanProgress, Specs,
};

/// An entry of the cycle: a nominated head with its assignment and preemption targets.
pub(super) struct Entry {
    head: Head,
    priority: i32,
    assignment: Assignment,
    targets: Vec<Target>,
    /// The flavor-scan progress the assignment recorded (`recordAssignment`).
    scan: ScanProgress,
}

/// Where an assignment's flavor scans start.
#[derive(Clone, Copy)]
struct ScanStart<'a> {
    /// The workload's progress still current (`LastAssignment`): each scan resumes after the
    /// flavor it last tried.
    last: Option<&'a ScanProgress>,
    /// When recomputing an assignment, the flavors of the first one (`NominationMapping`):
    /// the only ones the scans may take.
    pin: Option<&'a [PodSetAssignment]>,
}

/// The admitted workloads less the victims of preemptions issued earlier in the cycle, as
/// the snapshot holds them while an assignment is recomputed (`SimulateWorkloadRemoval`):
/// they are no longer candidates.
struct WithoutVictims<'a, A: AdmittedWorkloads> {
    admitted: &'a A,
    victims: &'a [WorkloadId],
    /// The candidates left in each ClusterQueue that lost some.
    left: Vec<(ClusterQueueId, Vec<Candidate>)>,
}

impl<'a, A: AdmittedWorkloads> WithoutVictims<'a, A> {
    fn new(admitted: &'a A, victims: &'a [WorkloadId]) -> Self {
        let mut left: Vec<(ClusterQueueId, Vec<Candidate>)> = Vec::new();
        for &v in victims {
            let Some(c) = admitted.candidate(v) else {
                continue;
            };
            if left.iter().any(|(cq, _)| *cq == c.cq) {
                continue;
            }
            let rest = admitted
                .admitted_in(c.cq)
                .iter()
                .filter(|x| !victims.contains(&x.workload))
                .cloned()
                .collect();
            left.push((c.cq, rest));
        }
        WithoutVictims {
            admitted,
            victims,
            left,
        }
    }
}

impl<A: AdmittedWorkloads> AdmittedWorkloads for WithoutVictims<'_, A> {
    fn admitted_in(&self, cq: ClusterQueueId) -> &[Candidate] {
        match self.left.iter().find(|(q, _)| *q == cq) {
            Some((_, rest)) => rest,
            None => self.admitted.admitted_in(cq),
        }
    }

    fn lowest_priority(&self, cq: ClusterQueueId) -> Option<i32> {
        match self.left.iter().find(|(q, _)| *q == cq) {
            Some((_, rest)) => rest.iter().map(|c| c.priority).min(),
            None => self.admitted.lowest_priority(cq),
        }
    }

    fn candidate(&self, w: WorkloadId) -> Option<&Candidate> {
        if self.victims.contains(&w) {
            return None;
        }
        self.admitted.candidate(w)
    }

    fn priority_usage(&self, cq: ClusterQueueId, f: &mut QuotaByPriority<'_>) {
        match self.left.iter().find(|(q, _)| *q == cq) {
            Some((_, rest)) => rest.iter().for_each(|c| f(c.priority, &c.usage)),
            None => self.admitted.priority_usage(cq, f),
        }
    }
}

/// `updateAssignmentIfNeeded` when the entry's targets overlap those of an entry processed
/// earlier in the cycle (`RecomputeAssignmentUponPreemptionTargetsOverlap`): the assignment
/// is computed again from the first flavor (`LastAssignment` cleared), kept to the flavors
/// of the first one (`NominationMapping`), on the snapshot as it will be once the
/// preemptions issued so far are done: their victims removed (quota, candidacy and TAS
/// usage), the usage of the entries already processed in place.
#[allow(clippy::too_many_arguments)] // The cycle's state, passed apart as it is borrowed apart.
fn recompute<A: AdmittedWorkloads, S: Specs + ?Sized>(
    world: &World,
    specs: &S,
    tree: &mut QuotaTree,
    admitted: &A,
    tas: &TasCapacity,
    e: &Entry,
    victims: &[WorkloadId],
    scratch: &mut Scratch,
) -> (Assignment, Vec<Target>) {
    let mark = tree.mark();
    remove_workloads(tree, admitted, world, victims.iter().copied());
    let without = WithoutVictims::new(admitted, victims);
    // Their pods leave the TAS snapshot with them (`Snapshot.RemoveWorkload`).
    let mut freed: Option<TasCapacity> = None;
    for &v in victims {
        let Some(assignments) = specs.admission(v) else {
            continue;
        };
        for (ps, psa) in specs.spec(v).pod_sets.iter().zip(assignments) {
            if let (Some(topo), Some(f)) = (&psa.topology, tas_flavor_of(world, psa)) {
                freed
                    .get_or_insert_with(|| tas.clone())
                    .give_back(world, f, topo, &ps.requests);
            }
        }
    }
    let start = ScanStart {
        last: None,
        pin: Some(&e.assignment.pod_sets),
    };
    let tas = freed.as_ref().unwrap_or(tas);
    let out = initial_assignment(world, specs, tree, &without, tas, e.head, start, scratch);
    tree.rollback_to(mark);
    out
}

/// `getInitialAssignments`: the full assignment; with preemption, its targets; failing that,
/// partial admission (`PodSetReducer`) when a pod set has `minCount`. Every attempt starts
/// its flavor scans as `start` says.
#[allow(clippy::too_many_arguments)] // The cycle's state, passed apart as it is borrowed apart.
fn initial_assignment<A: AdmittedWorkloads, S: Specs + ?Sized>(
    world: &World,
    specs: &S,
    tree: &mut QuotaTree,
    admitted: &A,
    tas: &TasCapacity,
    head: Head,
    start: ScanStart<'_>,
    scratch: &mut Scratch,
) -> (Assignment, Vec<Target>) {
    let wl = specs.spec(head.key.workload);
    let subject = Subject {
        workload: head.key.workload,
        wl,
        cq: head.cq,
        priority: wl.priority,
        key: head.key,
    };
    let mut fa = FlavorAssigner {
        world,
        tree,
        admitted,
        subject,
        tas,
        searched: false,
        last: start.last,
        pin: start.pin,
        scratch,
    };
    // Most workloads have one or two pod sets: their counts stay on the stack (this runs for
    // every head of every cycle).
    let mut on_stack = [0u32; 8];
    let on_heap: Vec<u32>;
    let full_counts: &[u32] = if wl.pod_sets.len() <= on_stack.len() {
        for (c, p) in on_stack.iter_mut().zip(&wl.pod_sets) {
            *c = p.count;
        }
        &on_stack[..wl.pod_sets.len()]
    } else {
        on_heap = wl.pod_sets.iter().map(|p| p.count).collect();
        &on_heap
    };
    // An assignment in preempt mode may come without its pod sets (`complete_one_flavor`):
    // it gets them only once it is kept with preemption targets, since one dropped (most, under
    // overload) is read only for its usage, mode, borrowing level, reasons and scan progress.
    let mut full = fa.assign(full_counts);
    match full.mode {
        Mode::Fit => return (full, Vec::new()),
        Mode::Preempt => {
            let targets = targets_for(&mut fa, &full, specs);
            if !targets.is_empty() {
                fa.complete_one_flavor(&mut full, full_counts);
                return (full, targets);
            }
        }
        Mode::NoFit => {}
    }
    // Partial admission: the smallest reduction of the pod counts that fits.
    let delta = |p: &kueuesim_model::PodSet| p.count - p.min_count.unwrap_or(p.count);
    // Summed first: most workloads have no `minCount`, and most attempts under overload end
    // here, so the per-pod-set list is made only when there is something to reduce.
    let total: u32 = wl.pod_sets.iter().map(delta).sum();
    if total > 0 {
        let deltas: Vec<u32> = wl.pod_sets.iter().map(delta).collect();
        let counts_at = |i: u32| -> Vec<u32> {
            full_counts
                .iter()
                .zip(&deltas)
                .map(|(&c, &d)| c - (u64::from(d) * u64::from(i) / u64::from(total)) as u32)
                .collect()
        };
        // sort.Search over [0, total]: the smallest reduction index that fits.
        let (mut lo, mut hi) = (0u32, total + 1);
        let mut found: Option<(Assignment, Vec<Target>)> = None;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let counts = counts_at(mid);
            let mut a = fa.assign(&counts);
            let ok = match a.mode {
                Mode::Fit => Some((a, Vec::new())),
                Mode::Preempt => {
                    let t = targets_for(&mut fa, &a, specs);
                    if t.is_empty() {
                        None
                    } else {
                        fa.complete_one_flavor(&mut a, &counts);
                        Some((a, t))
                    }
                }
                Mode::NoFit => None,
            };
            match ok {
                Some(r) => {
                    found = Some(r);
                    hi = mid;
                }
                None => lo = mid + 1,
            }
        }
        if let Some(r) = found {
            return r;
        }
    }
    (full, Vec::new())
}

/// The fair-sharing tournament (`fair_sharing_iterator.go`): the next entry to process.
/// Take the first remaining entry's cohort tree (an entry without a cohort goes at once);
/// then from the root down, at every cohort pick among its children's candidates the one
/// whose child would not borrow on what it requests (`FairSharingPrioritizeNonBorrowing`),
/// then the lower dominant resource share of that child with the candidate's usage added,
/// then higher priority, then earlier timestamp. Shares are computed against the snapshot as
/// it stands, so they change as entries are admitted.
fn fair_pick(world: &World, tree: &mut QuotaTree, entries: &[&Entry]) -> usize {
    use kueuesim_model::fair_sharing::{Drs, compare, drs};
    use kueuesim_model::quota::NodeIdx;
    let first = tree.cq_node(entries[0].head.cq);
    if tree.parent(first).is_none() {
        return 0;
    }
    let root = tree.root(first);
    // `computeDRS`: add the entry's usage at its ClusterQueue (it bubbles up past private
    // quota), then read the share of every node on its path below the root.
    let mut keys: Vec<Option<Vec<(NodeIdx, bool, Drs)>>> = vec![None; entries.len()];
    for (i, e) in entries.iter().enumerate() {
        let n = tree.cq_node(e.head.cq);
        if tree.root(n) != root {
            continue;
        }
        let usage = &e.assignment.usage;
        let mark = tree.mark();
        for &(fr, a) in usage {
            tree.add_usage(n, fr, a);
        }
        let mut path = Vec::new();
        let mut cur = n;
        while cur != root {
            let share = drs(world, tree, cur, &[]);
            let borrows = share.is_borrowing_on(usage);
            path.push((cur, borrows, share));
            cur = tree.parent(cur).expect("below the root");
        }
        tree.rollback_to(mark);
        keys[i] = Some(path);
    }
    type Keys = [Option<Vec<(NodeIdx, bool, Drs)>>];
    fn key_at(keys: &Keys, i: usize, n: NodeIdx) -> (bool, &Drs) {
        let path = keys[i].as_ref().expect("candidate of this tree");
        let (_, b, d) = path
            .iter()
            .find(|(x, _, _)| *x == n)
            .expect("node on the candidate's path");
        (*b, d)
    }
    fn best(tree: &QuotaTree, entries: &[&Entry], n: NodeIdx, keys: &Keys) -> Option<usize> {
        if tree.as_cq(n).is_some() {
            return entries
                .iter()
                .enumerate()
                .position(|(i, e)| keys[i].is_some() && tree.cq_node(e.head.cq) == n);
        }
        let mut winner: Option<(usize, NodeIdx)> = None;
        for &c in tree.children(n) {
            let Some(i) = best(tree, entries, c, keys) else {
                continue;
            };
            let better = match winner {
                None => true,
                Some((j, wc)) => {
                    let ((ib, ishare), (jb, jshare)) = (key_at(keys, i, c), key_at(keys, j, wc));
                    let (a, b) = (&entries[i], &entries[j]);
                    // Non-borrowing first (FairSharingPrioritizeNonBorrowing), then the lower
                    // share, then higher priority, then earlier timestamp.
                    (
                        ib,
                        compare(ishare, jshare),
                        std::cmp::Reverse(a.priority),
                        a.head.key.timestamp,
                    ) < (
                        jb,
                        std::cmp::Ordering::Equal,
                        std::cmp::Reverse(b.priority),
                        b.head.key.timestamp,
                    )
                }
            };
            if better {
                winner = Some((i, c));
            }
        }
        winner.map(|w| w.0)
    }
    best(tree, entries, root, &keys).unwrap_or(0)
}

/// `Preemptor.GetTargets` for an assignment in preempt mode: with Kueue TAS, the search
/// also places the pod sets with topology requests (`workloadFits`).
fn targets_for<A: AdmittedWorkloads, S: Specs + ?Sized>(
    fa: &mut FlavorAssigner<'_, A>,
    a: &Assignment,
    specs: &S,
) -> Vec<Target> {
    let (world, tas, wl, cq) = (fa.world, fa.tas, fa.subject.wl, fa.subject.cq);
    // The oracle's search is quota only (`SimulatePreemption` has no TAS requests): its
    // answer stands for the scheduler's only without TAS.
    let s = &fa.scratch.oracle;
    // The oracle's classical search ended because no workload could be a candidate
    // (`no_candidates_possible`). That holds for this usage too when it holds the oracle's
    // entries and contests the same resources: the lowest-priority check reads neither, the
    // nominal check reads the contested resources, and the cohort walk either visits no
    // level whatever the usage (no cohort, `reclaimWithinCohort: Never`) or, with
    // `priority_unusable`, visits a level only once the usage has fitted at or below it,
    // which a usage holding the oracle's (one pair: its contested resource) with more
    // resources does nowhere the oracle's does not. Under overload most heads that do not
    // fit end here (the condition is `no_candidates_possible`'s). No candidate is no
    // candidate whatever the topology, so the preemptor's TAS requests are not gathered
    // for this answer (but in debug builds, which check it with them).
    if world.config.kueue.fair_sharing.is_none()
        && fa.searched
        && s.none_possible
        && s.contested == a.contested
        && s.usage.iter().all(|u| a.usage.contains(u))
    {
        #[cfg(debug_assertions)]
        {
            let topology = PreemptorTopology::new(world, tas, specs, cq, wl, a);
            let mut p = fa.preemptor(&a.usage, &a.contested);
            p.topology = topology.as_ref().map(|t| t as &dyn TopologyFit);
            assert!(
                preemption_targets(fa.world, fa.tree, fa.admitted, &p, &mut fa.scratch.search)
                    .is_empty()
                    && fa.scratch.search.none_possible,
                "the oracle's verdict of no candidate does not hold for the assignment's usage"
            );
        }
        return Vec::new();
    }
    let topology = PreemptorTopology::new(world, tas, specs, cq, wl, a);
    let mut p = fa.preemptor(&a.usage, &a.contested);
    p.topology = topology.as_ref().map(|t| t as &dyn TopologyFit);
    let s = &fa.scratch.oracle;
    // The oracle searched with the contested resource only; the assignment's other resources
    // may change nothing (`usage_is_inert`, classical preemption), and then its answer holds.
    let same_usage = s.usage == a.usage
        || (world.config.kueue.fair_sharing.is_none()
            && s.usage.iter().all(|u| a.usage.contains(u))
            && a.usage.iter().all(|&(fr, v)| {
                s.usage.iter().any(|u| u.0 == fr)
                    || (!a.contested.contains(&fr)
                        && crate::preemption::usage_is_inert(fa.tree, cq, fr, v))
            }));
    if !(fa.searched && p.topology.is_none() && same_usage && s.contested == a.contested) {
        return preemption_targets(fa.world, fa.tree, fa.admitted, &p, &mut fa.scratch.search);
    }
    let reused = s.targets.clone();
    // Tests (debug builds) check the reuse against a search of its own.
    debug_assert_eq!(
        reused,
        preemption_targets(fa.world, fa.tree, fa.admitted, &p, &mut fa.scratch.search),
        "a reused preemption search differs"
    );
    reused
}

/// Runs one scheduling cycle over `heads` (`Scheduler.schedule`). `tree` holds the usage of
/// every workload holding quota and is returned unchanged; `admitted` lists them; `clock`
/// dates the flavor-scan progress the heads bring and the cycle records; `scratch` lends its
/// vectors' capacity (its contents do not matter).
#[allow(clippy::too_many_arguments)]
pub fn run_cycle<A: AdmittedWorkloads, S: Specs + ?Sized>(
    world: &World,
    specs: &S,
    tree: &mut QuotaTree,
    admitted: &A,
    tas: &mut TasCapacity,
    heads: &[Head],
    clock: ScanClock<'_>,
    scratch: &mut Scratch,
) -> Vec<Decision> {
    let preserve = world.config.kueue_gates.preserve_scan_progress;
    let recompute_on_overlap = world.config.kueue_gates.recompute_on_overlap;
    // Both vectors are the scratch's, kept from cycle to cycle for their capacity; the
    // decisions come back once applied (`Scratch::give_decisions`).
    let mut decisions = std::mem::take(&mut scratch.decisions);
    decisions.clear();
    decisions.reserve(heads.len());
    // Nominate: early checks, then a flavor assignment against the cycle-start snapshot.
    // Each entry stays in its slot until processed, and the order is sorted as indices: an
    // entry (its assignment, targets and scan progress) is a few hundred bytes, and sorting
    // them moved each several times.
    let mut entries = std::mem::take(&mut scratch.entries);
    entries.clear();
    let mut order = std::mem::take(&mut scratch.order);
    order.clear();
    for &h in heads {
        let wl = specs.spec(h.key.workload);
        let queue = world.cluster_queue(h.cq);
        if tree.in_cycle(h.cq) {
            // A ClusterQueue in a cohort cycle is inactive in the cache: its heads are
            // nominated as inadmissible (`nominate`).
            decisions.push(Decision::Requeue {
                head: h,
                reason: RequeueReason::Generic,
                not_admitted: NotAdmitted {
                    reason: REASON_SUSPENDED,
                    message: format!("ClusterQueue {} is inactive", queue.name),
                    bound: BoundSet::one(Constraint::Misconfigured),
                },
                scan: specs.last_assignment(h.key.workload).cloned(),
            });
            continue;
        }
        let ns_ok = world.namespace_selected(queue.namespace_selector.as_ref(), &wl.namespace);
        if !ns_ok {
            decisions.push(Decision::Requeue {
                head: h,
                reason: RequeueReason::NamespaceMismatch,
                not_admitted: NotAdmitted {
                    reason: REASON_MISCONFIGURED,
                    message: "workload namespace doesn't match ClusterQueue selector".into(),
                    bound: BoundSet::one(Constraint::Misconfigured),
                },
                scan: specs.last_assignment(h.key.workload).cloned(),
            });
            continue;
        }
        // `getAssignments`: progress that no longer describes the ClusterQueue is dropped
        // first (`lastAssignmentOutdated`), once per workload per cycle.
        let generation = clock.cq_generations[h.cq.index()];
        let last = specs
            .last_assignment(h.key.workload)
            .filter(|l| !l.outdated(generation, clock.cycle, preserve));
        let (mut assignment, targets) = initial_assignment(
            world,
            specs,
            tree,
            admitted,
            tas,
            h,
            ScanStart { last, pin: None },
            scratch,
        );
        let scan = ScanProgress {
            // Moved, not copied: nothing reads the assignment's copy after this.
            last_tried: std::mem::take(&mut assignment.last_tried),
            cq_generation: generation,
            cycle: clock.cycle,
        };
        entries.push(Some(Entry {
            head: h,
            priority: wl.priority,
            assignment,
            targets,
            scan,
        }));
    }

    // Order (classical iterator): lower borrowing level first, then higher priority
    // (PrioritySortingWithinCohort), then the caller's queue-order key (0 without one), then
    // earlier queue-order timestamp; stable. With fair
    // sharing the tournament picks each next entry instead.
    let fair = world.config.kueue.fair_sharing.is_some();
    order.extend(0..entries.len() as u32);
    fn entry(entries: &[Option<Entry>], i: u32) -> &Entry {
        entries[i as usize].as_ref().expect("not yet processed")
    }
    if !fair {
        // Sorted, then reversed so that the next entry is popped from the end.
        order.sort_by_key(|&i| {
            let e = entry(&entries, i);
            (
                e.assignment.borrowing,
                std::cmp::Reverse(e.priority),
                e.head.key.policy,
                e.head.key.timestamp,
            )
        });
        order.reverse();
    }

    // Process, with usage accumulating in the snapshot; undone at the end.
    let mark = tree.mark();
    // The usage every assignment was computed against (nomination rolls back what it tries).
    let nominated = tree.usage_id();
    let mut preempted: Vec<WorkloadId> = Vec::new();
    while !order.is_empty() {
        let next = if fair {
            let live: Vec<&Entry> = order.iter().map(|&i| entry(&entries, i)).collect();
            order.remove(fair_pick(world, tree, &live))
        } else {
            order.pop().expect("non-empty")
        };
        // The usage the last entry adds to the snapshot is read by no later entry and undone
        // at the end of the cycle (`rollback_to(mark)`), so it is not added (a cycle of the
        // million has one head: its admission would add and undo a walk per resource).
        let last = order.is_empty();
        let mut e = entries[next as usize].take().expect("processed once");
        let h = e.head;
        if recompute_on_overlap && e.targets.iter().any(|t| preempted.contains(&t.workload)) {
            let (mut a, targets) =
                recompute(world, specs, tree, admitted, tas, &e, &preempted, scratch);
            e.scan.last_tried = std::mem::take(&mut a.last_tried);
            if a.mode == Mode::Fit {
                // DeferredFit: it fits once the preemptions issued so far are done, so it
                // waits for them, holding its usage in the snapshot for the rest of the cycle,
                // and its next attempt scans every flavor again (`LastAssignment` cleared).
                if !last {
                    for &(fr, amount) in &a.usage {
                        tree.add_usage(tree.cq_node(h.cq), fr, amount);
                    }
                }
                decisions.push(Decision::Requeue {
                    head: h,
                    reason: RequeueReason::PendingPreemption,
                    not_admitted: NotAdmitted {
                        reason: REASON_WAITING_FOR_PREEMPTED,
                        message: "Workload has overlapping preemption targets with another \
                                  workload, but will fit after these preemptions complete"
                            .into(),
                        bound: BoundSet::one(Constraint::Preempting),
                    },
                    scan: None,
                });
                continue;
            }
            e.assignment = a;
            e.targets = targets;
        }
        let a = e.assignment;
        match a.mode {
            Mode::NoFit => {
                let unfit = a.not_admitted.as_ref().expect("NoFit has a reason");
                let bound = bound_of(tree, h.cq, unfit);
                let not_admitted = unfit.not_admitted(
                    world,
                    specs.spec(h.key.workload),
                    scratch.take_string(),
                    bound,
                );
                decisions.push(Decision::Requeue {
                    head: h,
                    reason: RequeueReason::NoFit,
                    not_admitted,
                    scan: Some(e.scan),
                });
                scratch.recycle(a);
                continue;
            }
            Mode::Preempt if e.targets.is_empty() => {
                // No candidates: unless the ClusterQueue can always reclaim its nominal quota
                // (reclaimWithinCohort: Any, `CanAlwaysReclaim`), hold what it would take so
                // others cannot borrow it in this cycle (`reserveCapacityForUnreclaimablePreempt`).
                let unfit = a.not_admitted.as_ref().expect("Preempt has a message");
                // What held it back, read before its own reservation below.
                let bound = bound_of(tree, h.cq, unfit);
                let cq = world.cluster_queue(h.cq);
                if !last && cq.preemption.reclaim_within_cohort != PreemptionPolicy::Any {
                    for (fr, amount) in quota_to_reserve(tree, h.cq, &a) {
                        tree.add_usage(tree.cq_node(h.cq), fr, amount);
                    }
                }
                let not_admitted = unfit.not_admitted(
                    world,
                    specs.spec(h.key.workload),
                    scratch.take_string(),
                    bound,
                );
                decisions.push(Decision::Requeue {
                    head: h,
                    reason: RequeueReason::PreemptionNoCandidates,
                    not_admitted,
                    scan: Some(e.scan),
                });
                scratch.recycle(a);
                continue;
            }
            _ => {}
        }
        // `markSkipped`: an entry skipped because another took the capacity or its targets
        // keeps its progress only under FlavorFungibilityPreserveScanProgress; without the
        // gate the next cycle retries every flavor.
        // (Moved into the skip's decision, not copied for every entry that gets this far.)
        if e.targets.iter().any(|t| preempted.contains(&t.workload)) {
            decisions.push(Decision::Requeue {
                head: h,
                reason: RequeueReason::FailedAfterNomination,
                not_admitted: NotAdmitted {
                    reason: REASON_WAITING_FOR_QUOTA,
                    message: "Workload has overlapping preemption targets with another workload"
                        .into(),
                    bound: BoundSet::EMPTY,
                },
                scan: preserve.then_some(e.scan),
            });
            continue;
        }
        // Fits once every victim chosen so far (this entry's and earlier ones') is gone?
        // A `Fit` assignment with no contested resource, no victim anywhere and the snapshot
        // unchanged since it was computed does: each of its resources passed
        // `fitsResourceQuota`'s `val <= available` on this very usage, its pod sets' requests
        // summed (`assumed`). Not so when a resource is contested: under
        // PreemptionOverBorrowing a pod set whose status holds no reason is `Fit`
        // (`RepresentativeMode`) while one of its resources needs preemption, and upstream's
        // check then skips it. Debug builds check the answer.
        let known_fit = a.mode == Mode::Fit
            && a.contested.is_empty()
            && e.targets.is_empty()
            && preempted.is_empty()
            && tree.usage_id() == nominated;
        let ok = known_fit || {
            let check = tree.mark();
            remove_workloads(
                tree,
                admitted,
                world,
                preempted
                    .iter()
                    .copied()
                    .chain(e.targets.iter().map(|t| t.workload)),
            );
            let ok = fits(tree, h.cq, &a.usage);
            tree.rollback_to(check);
            ok
        };
        debug_assert!(
            !known_fit || fits(tree, h.cq, &a.usage),
            "a Fit assignment on its own snapshot does not fit"
        );
        if !ok {
            decisions.push(Decision::Requeue {
                head: h,
                reason: RequeueReason::FailedAfterNomination,
                not_admitted: NotAdmitted {
                    reason: REASON_WAITING_FOR_QUOTA,
                    message: "Workload no longer fits after processing another workload".into(),
                    bound: BoundSet::EMPTY,
                },
                scan: preserve.then_some(e.scan),
            });
            continue;
        }
        preempted.extend(e.targets.iter().map(|t| t.workload));
        if !last {
            for &(fr, amount) in &a.usage {
                tree.add_usage(tree.cq_node(h.cq), fr, amount);
            }
        }
        if a.mode == Mode::Preempt {
            let unfit = a.not_admitted.as_ref().expect("Preempt has a message");
            let mut message = scratch.take_string();
            unfit.write_message(world, specs.spec(h.key.workload), &mut message);
            let _ = write!(
                message,
                ". Pending the preemption of {} workload(s)",
                e.targets.len()
            );
            decisions.push(Decision::Preempt {
                head: h,
                targets: e.targets,
                not_admitted: NotAdmitted {
                    reason: REASON_WAITING_FOR_PREEMPTED,
                    message,
                    bound: BoundSet::one(Constraint::Preempting),
                },
            });
        } else {
            // TAS: an earlier entry of this cycle may have taken the nodes; recompute the
            // placement then (TASRecomputeAssignmentWithinSchedulingCycle, on by default).
            let mut a = a;
            let wl = specs.spec(h.key.workload);
            let mut tas_failure = None;
            for (i, psa) in a.pod_sets.iter_mut().enumerate() {
                let Some(topo) = &psa.topology else { continue };
                let ps = &wl.pod_sets[i];
                let (leaves, _, _) =
                    tas.pods_per_leaf(world, topo.topology, tas_flavor(world, psa), ps);
                let still = topo
                    .domains
                    .iter()
                    .all(|&(d, k)| leaves.iter().find(|l| l.0 == d).is_some_and(|l| l.1 >= k));
                if !still {
                    let req =
                        tas_request(world, h.cq, ps).unwrap_or(TopologyRequest::Unconstrained);
                    match topology_assignment(
                        world,
                        tas,
                        tas_flavor(world, psa),
                        ps,
                        psa.count,
                        &req,
                    ) {
                        Ok(t) => psa.topology = Some(t),
                        Err(msg) => {
                            tas_failure = Some(format!(
                                "couldn't assign flavors to pod set {}: {msg}",
                                ps.name
                            ));
                            break;
                        }
                    }
                }
                if let Some(topo) = &psa.topology {
                    tas.apply(world, topo, &ps.requests, 1);
                }
            }
            if let Some(message) = tas_failure {
                if !last {
                    for &(fr, amount) in &a.usage {
                        tree.add_usage(tree.cq_node(h.cq), fr, -amount);
                    }
                }
                // Upstream recomputes the assignment from the first flavor for TAS
                // (`updateAssignmentIfNeeded`) and then skips the entry (`markSkipped`).
                decisions.push(Decision::Requeue {
                    head: h,
                    reason: RequeueReason::FailedAfterNomination,
                    not_admitted: NotAdmitted {
                        reason: REASON_WAITING_FOR_QUOTA,
                        message,
                        bound: BoundSet::one(Constraint::Topology),
                    },
                    scan: preserve.then_some(e.scan),
                });
                continue;
            }
            decisions.push(Decision::Admit {
                head: h,
                assignment: a,
            });
        }
    }
    tree.rollback_to(mark);
    scratch.entries = entries;
    scratch.order = order;
    decisions
}

/// The TAS flavor of a pod set's assignment.
fn tas_flavor(world: &World, psa: &PodSetAssignment) -> FlavorId {
    psa.flavors
        .iter()
        .map(|&(_, f)| f)
        .find(|&f| world.flavor(f).topology_name.is_some())
        .unwrap_or(FlavorId(0))
}

/// `quotaResourcesToReserve` for a preempting entry with no candidates: within nominal,
/// what is left of nominal; when borrowing, up to nominal + borrowingLimit.
fn quota_to_reserve(tree: &QuotaTree, cq: ClusterQueueId, a: &Assignment) -> Vec<(Fr, i64)> {
    let n = tree.cq_node(cq);
    a.usage
        .iter()
        .map(|&(fr, amount)| {
            let nominal = tree.nominal(n, fr);
            let used = tree.usage(n, fr);
            let r = if a.borrowing > 0 {
                match tree.borrowing_limit(n, fr) {
                    None => amount,
                    Some(bl) => amount.min(nominal + bl - used),
                }
            } else {
                amount.min(nominal - used).max(0)
            };
            (fr, r)
        })
        .collect()
}

/// Whether `usage` fits in `cq` now (`ClusterQueueSnapshot.Fits`).
pub(super) fn fits(tree: &QuotaTree, cq: ClusterQueueId, usage: &[(Fr, i64)]) -> bool {
    usage
        .iter()
        .all(|&(fr, amount)| amount <= tree.available(cq, fr))
}
