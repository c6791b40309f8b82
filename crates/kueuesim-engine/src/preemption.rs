//! Kueue's classical preemption (`pkg/scheduler/preemption/preemption.go`
//! `classicalPreemptions`, `classical/candidate_generator.go`,
//! `classical/hierarchical_preemption.go`, `common/ordering.go`,
//! `common/preemption_policy.go`): which admitted workloads must go so a preemptor fits.
//!
//! A pure function over a scratch `QuotaTree` (left as it was found) and the admitted
//! workloads: it returns the targets as data; the engine evicts them.
//!
//! Fair-sharing preemption (`fairPreemptions`, `fairsharing/*.go`) is `fair_targets`, built on
//! the Dominant Resource Share of `kueuesim_model::fair_sharing`.

use std::cmp::Ordering;
use std::collections::VecDeque;

use kueuesim_model::fair_sharing::{Drs, compare as drs_compare, drs};
use kueuesim_model::quota::{Fr, NodeIdx, QuotaTree};
use kueuesim_model::{ClusterQueueId, Preemption, PreemptionPolicy, SimTime, WorkloadId, World};

/// An admitted workload (holding quota) that may be preempted.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The workload.
    pub workload: WorkloadId,
    /// The ClusterQueue holding its quota.
    pub cq: ClusterQueueId,
    /// Effective priority.
    pub priority: i32,
    /// Queue-order timestamp (for `LowerOrNewerEqualPriority`).
    pub timestamp: SimTime,
    /// When its quota was reserved (the QuotaReserved transition): most recent first.
    pub reserved_at: SimTime,
    /// Already evicted, still holding quota while its pods terminate: preferred as victim.
    pub evicted: bool,
    /// The label of its UID (`uid_order`): the last tie-break.
    pub uid_rank: u64,
    /// Admission Fair Sharing (its ClusterQueue's admissionScope on): an id of its
    /// LocalQueue's name and that LocalQueue's usage this cycle (`LocalQueueFSUsage`).
    pub lq_fs_usage: Option<(u32, f64)>,
    /// The quota it holds, per `Fr`.
    pub usage: Vec<(Fr, i64)>,
}

/// The workload that needs room.
#[derive(Clone, Debug)]
pub struct Preemptor<'a> {
    /// The workload.
    pub workload: WorkloadId,
    /// Its ClusterQueue.
    pub cq: ClusterQueueId,
    /// Effective priority.
    pub priority: i32,
    /// Queue-order timestamp.
    pub timestamp: SimTime,
    /// The quota its assignment needs, per `Fr` (all flavors/resources of the assignment).
    pub usage: &'a [(Fr, i64)],
    /// The `Fr`s of the assignment that need preemption (the contested ones).
    pub contested: &'a [Fr],
    /// Kueue TAS: the placement of its pod sets with topology requests, checked after the
    /// quota in `workloadFits` (None: no pod set asks for a topology, or the oracle's
    /// quota-only search, `SimulatePreemption`).
    pub topology: Option<&'a dyn TopologyFit>,
}

/// The topology half of upstream's `workloadFits`: whether the preemptor's TAS pod sets can be
/// placed (`FindTopologyAssignmentsForWorkload`) once the given candidates' pods are gone from
/// the TAS snapshot (`Snapshot.RemoveWorkload` takes out their TAS usage with their quota).
pub trait TopologyFit: std::fmt::Debug {
    /// Whether every TAS pod set fits with the pods of `removed` given back.
    fn fits(&self, removed: &[WorkloadId]) -> bool;
}

/// Why a target is preempted: the `Preempted` condition's reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PreemptionReason {
    /// `InClusterQueue`: a workload of the preemptor's own ClusterQueue.
    InClusterQueue,
    /// `InCohortReclamation`: the preemptor reclaims quota lent to another ClusterQueue.
    InCohortReclamation,
    /// `InCohortReclaimWhileBorrowing`: `borrowWithinCohort` lets a borrowing preemptor
    /// take from lower-priority workloads of other ClusterQueues.
    InCohortReclaimWhileBorrowing,
    /// `InCohortFairSharing` (fair-sharing preemption).
    InCohortFairSharing,
}

impl PreemptionReason {
    /// Kueue's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptionReason::InClusterQueue => "InClusterQueue",
            PreemptionReason::InCohortReclamation => "InCohortReclamation",
            PreemptionReason::InCohortReclaimWhileBorrowing => "InCohortReclaimWhileBorrowing",
            PreemptionReason::InCohortFairSharing => "InCohortFairSharing",
        }
    }
}

/// A workload to preempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The victim.
    pub workload: WorkloadId,
    /// Why.
    pub reason: PreemptionReason,
}

/// The admitted workloads of every ClusterQueue, as candidates.
pub trait AdmittedWorkloads {
    /// The workloads holding quota in `cq` (any order; the algorithm sorts them).
    fn admitted_in(&self, cq: ClusterQueueId) -> &[Candidate];

    /// The record of `w`, if it holds quota.
    fn candidate(&self, w: WorkloadId) -> Option<&Candidate>;
}

/// How a candidate may be preempted: upstream's `preemptionVariant`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// A workload of the preemptor's own ClusterQueue (`WithinCQ`).
    WithinCq,
    /// The preemptor has a "hierarchical advantage" over it: the quota the candidate holds is
    /// quota of a subtree the preemptor belongs to and fits in, so priority does not matter.
    HierarchicalReclaim,
    /// A "priority candidate" that may only go if the preemptor ends up not borrowing.
    ReclaimWithoutBorrowing,
    /// A "priority candidate" that `borrowWithinCohort` lets go even while the preemptor borrows.
    ReclaimWhileBorrowing,
}

impl Variant {
    /// The `Preempted` condition reason of a victim of this variant (`PreemptionReason()`).
    fn reason(self) -> PreemptionReason {
        match self {
            Variant::WithinCq => PreemptionReason::InClusterQueue,
            Variant::HierarchicalReclaim | Variant::ReclaimWithoutBorrowing => {
                PreemptionReason::InCohortReclamation
            }
            Variant::ReclaimWhileBorrowing => PreemptionReason::InCohortReclaimWhileBorrowing,
        }
    }
}

/// A classified candidate (upstream `candidateElem`).
#[derive(Clone, Copy, Debug)]
struct Elem<'c> {
    cand: &'c Candidate,
    /// The cohort where the walk found it: the lowest common ancestor of its ClusterQueue and
    /// the preemptor's (None for same-CQ candidates).
    lca: Option<NodeIdx>,
    variant: Variant,
}

/// What every step needs to know about the preemptor.
struct Ctx<'p, 'u> {
    p: &'p Preemptor<'u>,
    settings: Preemption,
    /// `contested[fr]`: whether `fr` needs preemption (a dense set, so membership is O(1)).
    contested: Vec<bool>,
}

impl Ctx<'_, '_> {
    /// `WorkloadUsesResources`: only workloads holding some contested `Fr` can help.
    fn uses_contested(&self, c: &Candidate) -> bool {
        c.usage
            .iter()
            .any(|(fr, _)| self.contested.get(fr.index()).copied().unwrap_or(false))
    }

    /// `borrowWithinCohort` unset or `Never` (`IsBorrowingWithinCohortForbidden`).
    fn borrow_within_cohort_forbidden(&self) -> bool {
        self.settings.borrow_within_cohort == PreemptionPolicy::Never
    }

    /// `classifyPreemptionVariant`: None when the candidate cannot be preempted at all.
    fn classify(&self, c: &Candidate, hierarchical_advantage: bool) -> Option<Variant> {
        let own = c.cq == self.p.cq;
        let policy = if own {
            self.settings.within_cluster_queue
        } else {
            self.settings.reclaim_within_cohort
        };
        // Both filters are pure; the priority one is the cheaper and rules out most
        // candidates of a low-priority preemptor, so it goes first.
        if !satisfies_policy(self.p, c, policy) || !self.uses_contested(c) {
            return None;
        }
        if own {
            return Some(Variant::WithinCq);
        }
        if hierarchical_advantage {
            return Some(Variant::HierarchicalReclaim);
        }
        if self.borrow_within_cohort_forbidden() {
            return Some(Variant::ReclaimWithoutBorrowing);
        }
        // `isAboveBorrowingThreshold`: a candidate at or above the preemptor's priority, or
        // above `maxPriorityThreshold`, may only be taken when no borrowing remains.
        let above = c.priority >= self.p.priority
            || self
                .settings
                .borrow_max_priority_threshold
                .is_some_and(|t| c.priority > t);
        Some(if above {
            Variant::ReclaimWithoutBorrowing
        } else {
            Variant::ReclaimWhileBorrowing
        })
    }
}

/// `SatisfiesPreemptionPolicy`: whether `policy` lets `p` preempt `c`.
fn satisfies_policy(p: &Preemptor<'_>, c: &Candidate, policy: PreemptionPolicy) -> bool {
    let lower = c.priority < p.priority;
    match policy {
        PreemptionPolicy::Never => false,
        PreemptionPolicy::LowerPriority => lower,
        // Equal priority counts only when the candidate is strictly newer in queue order, so
        // two equal workloads cannot preempt each other back and forth.
        PreemptionPolicy::LowerOrNewerEqualPriority => {
            lower || (c.priority == p.priority && p.timestamp < c.timestamp)
        }
        PreemptionPolicy::Any => true,
    }
}

/// `CandidatesOrdering`: evicted first, other ClusterQueues before the preemptor's own, then
/// (Admission Fair Sharing, both in one ClusterQueue under different LocalQueue names) the
/// higher LocalQueue usage first, lower priority first, most recently reserved first, then UID.
fn candidates_ordering(a: &Candidate, b: &Candidate, own: ClusterQueueId) -> Ordering {
    b.evicted
        .cmp(&a.evicted)
        .then_with(|| (a.cq == own).cmp(&(b.cq == own)))
        .then_with(|| match (a.lq_fs_usage, b.lq_fs_usage) {
            // `resourceUsagePreemptionEnabled`: upstream compares `spec.queueName` only, so
            // same-named LocalQueues of different namespaces do not count as different.
            (Some((qa, ua)), Some((qb, ub))) if a.cq == b.cq && qa != qb && ua != ub => {
                ub.total_cmp(&ua)
            }
            _ => Ordering::Equal,
        })
        .then_with(|| a.priority.cmp(&b.priority))
        .then_with(|| b.reserved_at.cmp(&a.reserved_at))
        .then_with(|| a.uid_rank.cmp(&b.uid_rank))
}

/// `QuantitiesFitInQuota`: whether `requests` fit in `node`'s subtree quota on top of its
/// usage; rewrites `requests` to what is left for the parent once `node`'s unused private
/// quota has absorbed its share.
fn fits_in_quota(tree: &QuotaTree, node: NodeIdx, requests: &mut [(Fr, i64)]) -> bool {
    let mut fits = true;
    for (fr, v) in requests.iter_mut() {
        if tree.subtree_quota(node, *fr) < tree.usage(node, *fr) + *v {
            fits = false;
        }
        *v = (*v - tree.local_available(node, *fr)).max(0);
    }
    fits
}

/// `collectSameQueueCandidates`: the preemptor's own ClusterQueue, unless
/// `withinClusterQueue: Never`.
fn same_queue_candidates<'c>(
    ctx: &Ctx<'_, '_>,
    admitted: &'c impl AdmittedWorkloads,
) -> Vec<Elem<'c>> {
    if ctx.settings.within_cluster_queue == PreemptionPolicy::Never {
        return Vec::new();
    }
    admitted
        .admitted_in(ctx.p.cq)
        .iter()
        .filter_map(|c| {
            ctx.classify(c, false).map(|variant| Elem {
                cand: c,
                lca: None,
                variant,
            })
        })
        .collect()
}

/// `collectCandidatesForHierarchicalReclaim`: walks from the preemptor's parent cohort to the
/// root, collecting at each level the workloads of the subtree not visited yet. Returns
/// (hierarchy candidates, priority candidates): once some ancestor's subtree absorbs the
/// request, the preemptor has a hierarchical advantage at that level and every level above.
fn cohort_candidates<'c>(
    ctx: &Ctx<'_, '_>,
    tree: &QuotaTree,
    admitted: &'c impl AdmittedWorkloads,
) -> (Vec<Elem<'c>>, Vec<Elem<'c>>) {
    let mut hierarchy = Vec::new();
    let mut priority = Vec::new();
    let cq_node = tree.cq_node(ctx.p.cq);
    if tree.parent(cq_node).is_none()
        || ctx.settings.reclaim_within_cohort == PreemptionPolicy::Never
    {
        return (hierarchy, priority);
    }
    let mut remaining = ctx.p.usage.to_vec();
    let mut advantage = fits_in_quota(tree, cq_node, &mut remaining);
    let mut previous = None;
    let mut current = tree.parent(cq_node);
    while let Some(node) = current {
        let out = if advantage {
            &mut hierarchy
        } else {
            &mut priority
        };
        let level = Level {
            lca: node,
            skip: previous,
            advantage,
        };
        collect_in_subtree(ctx, tree, admitted, node, level, out);
        advantage |= fits_in_quota(tree, node, &mut remaining);
        previous = Some(node);
        current = tree.parent(node);
    }
    (hierarchy, priority)
}

/// One step of the walk to the root: the ancestor being visited (the lowest common ancestor
/// of the preemptor and whatever is found below it), the child subtree already visited, and
/// whether the preemptor has the hierarchical advantage at this level.
#[derive(Clone, Copy)]
struct Level {
    lca: NodeIdx,
    skip: Option<NodeIdx>,
    advantage: bool,
}

/// `collectCandidatesInSubtree`: candidates of the ClusterQueues below `current`, pruning
/// subtrees and queues within their nominal quota on the contested `Fr`s (nothing to reclaim
/// there) and the subtree `level.skip` the walk came from (already visited).
fn collect_in_subtree<'c>(
    ctx: &Ctx<'_, '_>,
    tree: &QuotaTree,
    admitted: &'c impl AdmittedWorkloads,
    current: NodeIdx,
    level: Level,
    out: &mut Vec<Elem<'c>>,
) {
    let within = |n| tree.within_nominal(n, ctx.p.contested);
    // Child cohorts first, then child ClusterQueues, as upstream (the lists are sorted later,
    // so this only matters for exact ties).
    for &child in tree.children(current) {
        if tree.as_cq(child).is_none() && Some(child) != level.skip && !within(child) {
            collect_in_subtree(ctx, tree, admitted, child, level, out);
        }
    }
    for &child in tree.children(current) {
        let Some(cq) = tree.as_cq(child) else {
            continue;
        };
        if cq == ctx.p.cq || within(child) {
            continue;
        }
        out.extend(admitted.admitted_in(cq).iter().filter_map(|c| {
            ctx.classify(c, level.advantage).map(|variant| Elem {
                cand: c,
                lca: Some(level.lca),
                variant,
            })
        }));
    }
}

/// `candidateIsValid`: earlier removals may have brought a candidate's ClusterQueue (or a
/// cohort between it and the lowest common ancestor) back within nominal quota, and then its
/// workloads are no longer borrowing anything the preemptor could reclaim. With
/// `allow_borrowing`, `ReclaimWithoutBorrowing` candidates are off limits.
fn still_valid(ctx: &Ctx<'_, '_>, tree: &QuotaTree, e: &Elem<'_>, allow_borrowing: bool) -> bool {
    if e.cand.cq == ctx.p.cq {
        return true;
    }
    if allow_borrowing && e.variant == Variant::ReclaimWithoutBorrowing {
        return false;
    }
    let node = tree.cq_node(e.cand.cq);
    if tree.within_nominal(node, ctx.p.contested) {
        return false;
    }
    let mut current = tree.parent(node);
    while let Some(n) = current {
        if Some(n) == e.lca {
            break;
        }
        if tree.within_nominal(n, ctx.p.contested) {
            return false;
        }
        current = tree.parent(n);
    }
    true
}

/// `workloadFits`: every `Fr` of the preemptor's assignment fits what is available and, when
/// borrowing is not allowed, within its ClusterQueue's nominal quota.
fn preemptor_fits(tree: &QuotaTree, p: &Preemptor<'_>, allow_borrowing: bool) -> bool {
    let node = tree.cq_node(p.cq);
    p.usage.iter().all(|&(fr, v)| {
        (allow_borrowing || !tree.borrowing_with(node, fr, v)) && v <= tree.available(p.cq, fr)
    })
}

/// `workloadFits` in full: the quota (`preemptor_fits`), then, for a preemptor with TAS pod
/// sets, their placement with the pods of `removed` (the candidates taken out so far) given
/// back. Without TAS this is `preemptor_fits` and `removed` is never called.
fn workload_fits(
    tree: &QuotaTree,
    p: &Preemptor<'_>,
    allow_borrowing: bool,
    removed: impl FnOnce() -> Vec<WorkloadId>,
) -> bool {
    preemptor_fits(tree, p, allow_borrowing) && p.topology.is_none_or(|t| t.fits(&removed()))
}

/// Whether some attempt could succeed at all: removing every candidate it may use frees the
/// most quota any removal order can (a candidate's removal never takes room away, and
/// `candidateIsValid` only ever skips candidates), so when even that leaves the preemptor
/// without room, the search upstream runs would end empty-handed. Answering that first spares
/// sorting the candidates of the many searches that fail (a kueuesim shortcut with the same
/// result, not an upstream step).
fn could_fit(
    tree: &mut QuotaTree,
    p: &Preemptor<'_>,
    lists: &[&Vec<Elem<'_>>; 3],
    attempts: &[bool],
) -> bool {
    let mark = tree.mark();
    // First what an attempt with borrowing may use (all but `ReclaimWithoutBorrowing`), then
    // the rest, which only an attempt without borrowing may use.
    for e in lists.iter().flat_map(|l| l.iter()) {
        if e.variant != Variant::ReclaimWithoutBorrowing {
            remove(tree, e.cand);
        }
    }
    let all = || lists.iter().flat_map(|l| l.iter());
    let mut fits = attempts.contains(&true)
        && workload_fits(tree, p, true, || {
            all()
                .filter(|e| e.variant != Variant::ReclaimWithoutBorrowing)
                .map(|e| e.cand.workload)
                .collect()
        });
    if !fits && attempts.contains(&false) {
        for e in all() {
            if e.variant == Variant::ReclaimWithoutBorrowing {
                remove(tree, e.cand);
            }
        }
        fits = workload_fits(tree, p, false, || all().map(|e| e.cand.workload).collect());
    }
    tree.rollback_to(mark);
    fits
}

/// `queueUnderNominalInResourcesNeedingPreemption`: usage strictly below nominal on every
/// contested `Fr`.
fn under_nominal_on_contested(tree: &QuotaTree, p: &Preemptor<'_>) -> bool {
    let node = tree.cq_node(p.cq);
    p.contested
        .iter()
        .all(|&fr| tree.nominal(node, fr) > tree.usage(node, fr))
}

/// Takes a candidate's quota out of the tree (`RemoveWorkload` on the snapshot).
fn remove(tree: &mut QuotaTree, c: &Candidate) {
    let node = tree.cq_node(c.cq);
    for &(fr, amount) in &c.usage {
        tree.remove_usage(node, fr, amount);
    }
}

/// Puts a candidate's quota back (`AddWorkload` on the snapshot).
fn add_back(tree: &mut QuotaTree, c: &Candidate) {
    let node = tree.cq_node(c.cq);
    for &(fr, amount) in &c.usage {
        tree.add_usage(node, fr, amount);
    }
}

/// `fillBackWorkloads`: the greedy pass may have taken more than needed; walking the victims
/// in reverse (all but the last, whose removal made the preemptor fit), each one that can be
/// re-added with the preemptor still fitting is spared. Spared victims are swapped out with the
/// last element, as upstream does, so the target order matches Kueue's.
fn fill_back(
    tree: &mut QuotaTree,
    p: &Preemptor<'_>,
    removed: &mut Vec<Elem<'_>>,
    allow_borrowing: bool,
) {
    for i in (0..removed.len().saturating_sub(1)).rev() {
        add_back(tree, removed[i].cand);
        let others = || {
            let back = removed[i].cand.workload;
            removed
                .iter()
                .map(|e| e.cand.workload)
                .filter(|&w| w != back)
                .collect()
        };
        if workload_fits(tree, p, allow_borrowing, others) {
            removed.swap_remove(i);
        } else {
            remove(tree, removed[i].cand);
        }
    }
}

/// Classical preemption targets for `p` (empty: no way to make it fit).
///
/// Mirrors `classicalPreemptions`: builds the candidate lists (same-CQ, hierarchy, priority),
/// orders them globally, then for each allowed `allowBorrowing` attempt removes valid
/// candidates greedily until the preemptor fits and fills back what was not needed. `tree` is
/// only changed under a usage mark and is rolled back before returning.
pub fn classical_targets(
    world: &World,
    tree: &mut QuotaTree,
    admitted: &impl AdmittedWorkloads,
    p: &Preemptor<'_>,
) -> Vec<Target> {
    // A ClusterQueue in a cohort cycle is inactive; its walk to the root would not end.
    if tree.in_cycle(p.cq) {
        return Vec::new();
    }
    let mut contested = vec![false; tree.fr_count()];
    for fr in p.contested {
        contested[fr.index()] = true;
    }
    let ctx = Ctx {
        p,
        settings: world.cluster_queue(p.cq).preemption,
        contested,
    };

    let mut same_queue = same_queue_candidates(&ctx, admitted);
    let (mut hierarchy, mut priority) = cohort_candidates(&ctx, tree, admitted);
    let no_other_queue_candidates = hierarchy.is_empty() && priority.is_empty();
    let no_hierarchy_candidates = hierarchy.is_empty();

    // Which `allowBorrowing` attempts to make, and in which order. With borrowing allowed the
    // preemptor may end up borrowing but `ReclaimWithoutBorrowing` candidates are skipped;
    // without it those are usable but the preemptor must end within nominal. Upstream keeps
    // "false first" only when borrowWithinCohort is off and there are no hierarchy candidates,
    // for compatibility with older releases.
    let forbidden = ctx.borrow_within_cohort_forbidden();
    let attempts: &[bool] =
        if no_other_queue_candidates || (forbidden && !under_nominal_on_contested(tree, p)) {
            &[true]
        } else if forbidden && no_hierarchy_candidates {
            &[false, true]
        } else {
            &[true, false]
        };

    let lists = [&hierarchy, &priority, &same_queue];
    let possible = could_fit(tree, p, &lists, attempts);
    // Tests (debug builds) check the shortcut against the search it spares.
    if !possible && !cfg!(debug_assertions) {
        return Vec::new();
    }
    for list in [&mut hierarchy, &mut priority, &mut same_queue] {
        list.sort_by(|a, b| candidates_ordering(a.cand, b.cand, p.cq));
    }
    let targets = search(&ctx, tree, [&hierarchy, &priority, &same_queue], attempts);
    assert!(
        possible || targets.is_empty(),
        "could_fit ruled out a preemption the search found"
    );
    targets
}

/// The removal loop of `classicalPreemptions` over the sorted candidate lists: per attempt,
/// take valid candidates in order until the preemptor fits, then `fillBackWorkloads`.
fn search(
    ctx: &Ctx<'_, '_>,
    tree: &mut QuotaTree,
    lists: [&Vec<Elem<'_>>; 3],
    attempts: &[bool],
) -> Vec<Target> {
    let p = ctx.p;
    // Global order: each list's evicted prefix (the ordering puts evicted workloads first)
    // before any non-evicted candidate, keeping hierarchy → priority → same-CQ within each half.
    let splits = lists.map(|l| l.partition_point(|e| e.cand.evicted));
    let mut order: Vec<Elem<'_>> = Vec::with_capacity(lists.iter().map(|l| l.len()).sum());
    for (l, &s) in lists.iter().zip(&splits) {
        order.extend_from_slice(&l[..s]);
    }
    for (l, &s) in lists.iter().zip(&splits) {
        order.extend_from_slice(&l[s..]);
    }

    for &allow_borrowing in attempts {
        let mark = tree.mark();
        let mut removed: Vec<Elem<'_>> = Vec::new();
        for e in &order {
            if !still_valid(ctx, tree, e, allow_borrowing) {
                continue;
            }
            remove(tree, e.cand);
            removed.push(*e);
            let gone = || removed.iter().map(|e| e.cand.workload).collect();
            if workload_fits(tree, p, allow_borrowing, gone) {
                fill_back(tree, p, &mut removed, allow_borrowing);
                tree.rollback_to(mark);
                return removed
                    .iter()
                    .map(|e| Target {
                        workload: e.cand.workload,
                        reason: e.variant.reason(),
                    })
                    .collect();
            }
        }
        tree.rollback_to(mark);
    }
    Vec::new()
}

// ---------------------------------------------------------------------------------------------
// Fair-sharing preemption (`preemption.go` `fairPreemptions`, `runFirstFsStrategy`,
// `runSecondFsStrategy`; `fairsharing/{ordering,strategy,target,least_common_ancestor}.go`).
// ---------------------------------------------------------------------------------------------

/// A fair-sharing preemption strategy (`fairSharing.preemptionStrategies`; upstream
/// `fairsharing.Strategy`). Shares are those of the almost-lowest-common-ancestors of the
/// preemptor's and the target's ClusterQueues (the two children of their lowest common cohort on
/// either path), the preemptor's including the incoming workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FairStrategy {
    /// Rule S2-a: preempt a workload if the preemptor's new share is at most the target's
    /// share after the workload is gone.
    LessThanOrEqualToFinalShare,
    /// Rule S2-b: preempt a workload if the preemptor's new share is below the target's share
    /// before any removal.
    LessThanInitialShare,
}

impl FairStrategy {
    /// The strategies Kueue uses when `preemptionStrategies` is empty (`parseStrategies`).
    pub const DEFAULT: [FairStrategy; 2] = [
        FairStrategy::LessThanOrEqualToFinalShare,
        FairStrategy::LessThanInitialShare,
    ];

    /// Whether the strategy lets the preemptor take the candidate.
    fn passes(self, preemptor_new: &Drs, target_old: &Drs, target_new: &Drs) -> bool {
        match self {
            FairStrategy::LessThanOrEqualToFinalShare => {
                drs_compare(preemptor_new, target_new) != Ordering::Greater
            }
            FairStrategy::LessThanInitialShare => {
                drs_compare(preemptor_new, target_old) == Ordering::Less
            }
        }
    }
}

/// `TargetClusterQueueOrdering`: which ClusterQueue to take the next victim from. From the root,
/// it descends into the child with the highest share until it reaches a ClusterQueue, pruning
/// nodes that can yield nothing more; the same ClusterQueue may come back while it stays the
/// most unfair.
struct TargetOrdering<'c> {
    preemptor: ClusterQueueId,
    /// `preemptorAncestors`, dense by node: the cohorts on the preemptor's path to the root.
    on_preemptor_path: Vec<bool>,
    /// `clusterQueueToTarget`, dense by ClusterQueue: remaining candidates in order.
    per_cq: Vec<VecDeque<&'c Candidate>>,
    /// `prunedClusterQueues` and `prunedCohorts`, dense by node.
    pruned: Vec<bool>,
}

impl<'c> TargetOrdering<'c> {
    /// `MakeClusterQueueOrdering` over `candidates` (already sorted).
    fn new(
        world: &World,
        tree: &QuotaTree,
        preemptor: ClusterQueueId,
        candidates: &[&'c Candidate],
    ) -> Self {
        let nodes = world.cluster_queues.len() + world.cohorts.len();
        let mut on_preemptor_path = vec![false; nodes];
        let mut cur = tree.parent(tree.cq_node(preemptor));
        while let Some(n) = cur {
            on_preemptor_path[n.0 as usize] = true;
            cur = tree.parent(n);
        }
        let mut per_cq = vec![VecDeque::new(); world.cluster_queues.len()];
        for &c in candidates {
            per_cq[c.cq.index()].push_back(c);
        }
        TargetOrdering {
            preemptor,
            on_preemptor_path,
            per_cq,
            pruned: vec![false; nodes],
        }
    }

    fn has_workload(&self, cq: ClusterQueueId) -> bool {
        !self.per_cq[cq.index()].is_empty()
    }

    /// `PopWorkload`: the next candidate of `cq`.
    fn pop(&mut self, cq: ClusterQueueId) -> Option<&'c Candidate> {
        self.per_cq[cq.index()].pop_front()
    }

    /// `DropQueue`.
    fn drop_queue(&mut self, tree: &QuotaTree, cq: ClusterQueueId) {
        self.pruned[tree.cq_node(cq).0 as usize] = true;
    }

    /// The next step of `Iter()`: the ClusterQueue to consider, or None when the root is
    /// pruned. The caller must pop a workload or drop the queue before asking again.
    fn next(&mut self, world: &World, tree: &QuotaTree) -> Option<ClusterQueueId> {
        let pnode = tree.cq_node(self.preemptor);
        if tree.parent(pnode).is_none() {
            // Without a cohort, only the preemptor's own workloads.
            let live = !self.pruned[pnode.0 as usize] && self.has_workload(self.preemptor);
            return live.then_some(self.preemptor);
        }
        let root = tree.root(pnode);
        while !self.pruned[root.0 as usize] {
            if let Some(cq) = self.next_target(world, tree, root) {
                return Some(cq);
            }
        }
        None
    }

    /// `nextTarget`: descends from `cohort` into its most unfair child. None means this call
    /// only pruned nodes (not that nothing is left).
    fn next_target(
        &mut self,
        world: &World,
        tree: &QuotaTree,
        cohort: NodeIdx,
    ) -> Option<ClusterQueueId> {
        let mut best_cq: Option<(ClusterQueueId, Drs)> = None;
        let mut best_cohort: Option<(NodeIdx, Drs)> = None;
        for &child in tree.children(cohort) {
            if self.pruned[child.0 as usize] {
                continue;
            }
            let d = drs(world, tree, child, &[]);
            match tree.as_cq(child) {
                Some(cq) => {
                    // The preemptor's own queue stays until it runs out of candidates.
                    if (!d.is_borrowing() && cq != self.preemptor) || !self.has_workload(cq) {
                        self.pruned[child.0 as usize] = true;
                        continue;
                    }
                    match &best_cq {
                        None => best_cq = Some((cq, d)),
                        Some((best, best_drs)) => match drs_compare(&d, best_drs) {
                            Ordering::Greater => best_cq = Some((cq, d)),
                            // Equal shares: the queue whose next candidate goes first.
                            Ordering::Equal => {
                                let (new_head, cur_head) =
                                    (self.per_cq[cq.index()][0], self.per_cq[best.index()][0]);
                                if candidates_ordering(new_head, cur_head, self.preemptor)
                                    == Ordering::Less
                                {
                                    best_cq = Some((cq, d));
                                }
                            }
                            Ordering::Less => {}
                        },
                    }
                }
                None => {
                    // A cohort that does not borrow has nothing to give back, unless the
                    // preemptor is below it (imbalance inside, or its own queue).
                    if !d.is_borrowing() && !self.on_preemptor_path[child.0 as usize] {
                        self.pruned[child.0 as usize] = true;
                        continue;
                    }
                    // Upstream visits child cohorts in random order and keeps the last of the
                    // highest (`>=`); here the order is the tree's (cohort id), so among equal
                    // shares the last child cohort wins.
                    if best_cohort
                        .as_ref()
                        .is_none_or(|(_, b)| drs_compare(&d, b) != Ordering::Less)
                    {
                        best_cohort = Some((child, d));
                    }
                }
            }
        }
        match (best_cohort, best_cq) {
            (None, None) => {
                self.pruned[cohort.0 as usize] = true;
                None
            }
            // A cohort wins ties against a ClusterQueue: inside it, the most unfair node can
            // be chosen.
            (Some((c, cd)), Some((_, qd))) if drs_compare(&cd, &qd) != Ordering::Less => {
                self.next_target(world, tree, c)
            }
            (Some((c, _)), None) => self.next_target(world, tree, c),
            (_, Some((q, _))) => Some(q),
        }
    }
}

/// `getAlmostLCAs`: the nodes just below the lowest common ancestor of the preemptor's and the
/// target's ClusterQueues, on the preemptor's side and on the target's.
fn almost_lcas(
    tree: &QuotaTree,
    ordering: &TargetOrdering<'_>,
    target: ClusterQueueId,
) -> (NodeIdx, NodeIdx) {
    let tnode = tree.cq_node(target);
    let mut lca = tree.parent(tnode);
    while let Some(n) = lca {
        if ordering.on_preemptor_path[n.0 as usize] {
            break;
        }
        lca = tree.parent(n);
    }
    let lca = lca.expect("target and preemptor share a root cohort");
    let below = |from: NodeIdx| {
        let mut a = from;
        while let Some(p) = tree.parent(a) {
            if p == lca {
                return a;
            }
            a = p;
        }
        unreachable!("the lowest common ancestor is above both ClusterQueues")
    };
    (below(tree.cq_node(ordering.preemptor)), below(tnode))
}

/// `ComputeShares`: (preemptor's new share, target's old share) at the almost-LCAs.
fn compute_shares(
    world: &World,
    tree: &QuotaTree,
    ordering: &TargetOrdering<'_>,
    target: ClusterQueueId,
) -> (Drs, Drs, NodeIdx) {
    let (pa, ta) = almost_lcas(tree, ordering, target);
    (drs(world, tree, pa, &[]), drs(world, tree, ta, &[]), ta)
}

/// `workloadFitsForFairSharing`: whether the preemptor fits, with its own usage (added for the
/// share computations) taken out for the check.
fn fits_for_fair_sharing(
    tree: &mut QuotaTree,
    p: &Preemptor<'_>,
    targets: &[(&Candidate, PreemptionReason)],
) -> bool {
    let mark = tree.mark();
    let node = tree.cq_node(p.cq);
    for &(fr, v) in p.usage {
        tree.remove_usage(node, fr, v);
    }
    let fits = workload_fits(tree, p, true, || {
        targets.iter().map(|t| t.0.workload).collect()
    });
    tree.rollback_to(mark);
    fits
}

/// `fillBackWorkloads` with borrowing allowed, over fair-sharing victims (each with its
/// reason); spared victims are swapped out with the last element, as upstream does.
fn fill_back_fair(
    tree: &mut QuotaTree,
    p: &Preemptor<'_>,
    removed: &mut Vec<(&Candidate, PreemptionReason)>,
) {
    for i in (0..removed.len().saturating_sub(1)).rev() {
        add_back(tree, removed[i].0);
        let others = || {
            let back = removed[i].0.workload;
            removed
                .iter()
                .map(|t| t.0.workload)
                .filter(|&w| w != back)
                .collect()
        };
        if workload_fits(tree, p, true, others) {
            removed.swap_remove(i);
        } else {
            remove(tree, removed[i].0);
        }
    }
}

/// Fair-sharing preemption targets for `p` (empty: no way to make it fit fairly).
///
/// Mirrors `fairPreemptions` with the `FairSharingPreemptWithinNominal` gate on (its default):
/// candidates pass the ClusterQueue's policies and use a contested `Fr`, and other queues'
/// only if those queues borrow on a contested `Fr`; they are sorted by `CandidatesOrdering`.
/// With the preemptor's usage added to its queue, the first strategy walks the target
/// ordering: the preemptor's own workloads go unconditionally (`InClusterQueue`); while the
/// preemptor stays within nominal on the contested `Fr`s, other queues' go unconditionally
/// (`InCohortReclamation`); otherwise a candidate goes only if the strategy passes at the
/// almost-LCA level (`InCohortFairSharing`), after which the target queue is chosen again.
/// Candidates refused are retried with `LessThanInitialShare`, at most one per ClusterQueue,
/// when a second strategy is configured. Then the victims not needed are filled back. An empty
/// `strategies` means the default pair. `tree` is only changed under a usage mark and is left
/// exactly as it was found.
pub fn fair_targets(
    world: &World,
    tree: &mut QuotaTree,
    admitted: &impl AdmittedWorkloads,
    p: &Preemptor<'_>,
    strategies: &[FairStrategy],
) -> Vec<Target> {
    fair_targets_gated(world, tree, admitted, p, strategies, true)
}

/// `fair_targets` with the `FairSharingPreemptWithinNominal` gate given.
fn fair_targets_gated(
    world: &World,
    tree: &mut QuotaTree,
    admitted: &impl AdmittedWorkloads,
    p: &Preemptor<'_>,
    strategies: &[FairStrategy],
    preempt_within_nominal_gate: bool,
) -> Vec<Target> {
    if tree.in_cycle(p.cq) {
        return Vec::new();
    }
    let strategies = if strategies.is_empty() {
        &FairStrategy::DEFAULT[..]
    } else {
        strategies
    };
    let mut contested = vec![false; tree.fr_count()];
    for fr in p.contested {
        contested[fr.index()] = true;
    }
    let ctx = Ctx {
        p,
        settings: world.cluster_queue(p.cq).preemption,
        contested,
    };

    // `findCandidates`.
    let eligible = |c: &Candidate, policy| satisfies_policy(p, c, policy) && ctx.uses_contested(c);
    let mut candidates: Vec<&Candidate> = Vec::new();
    let within = ctx.settings.within_cluster_queue;
    if within != PreemptionPolicy::Never {
        candidates.extend(
            admitted
                .admitted_in(p.cq)
                .iter()
                .filter(|c| eligible(c, within)),
        );
    }
    let pnode = tree.cq_node(p.cq);
    let reclaim = ctx.settings.reclaim_within_cohort;
    if tree.parent(pnode).is_some() && reclaim != PreemptionPolicy::Never {
        // Every ClusterQueue of the tree but the preemptor's, if it borrows on a contested
        // `Fr` (`cqIsBorrowing`: usage above nominal).
        let mut stack = vec![tree.root(pnode)];
        while let Some(n) = stack.pop() {
            stack.extend(tree.children(n).iter().rev());
            let Some(cq) = tree.as_cq(n) else { continue };
            let borrowing = p
                .contested
                .iter()
                .any(|&fr| tree.nominal(n, fr) < tree.usage(n, fr));
            if cq != p.cq && borrowing {
                candidates.extend(
                    admitted
                        .admitted_in(cq)
                        .iter()
                        .filter(|c| eligible(c, reclaim)),
                );
            }
        }
    }
    if candidates.is_empty() {
        return Vec::new();
    }
    candidates.sort_by(|a, b| candidates_ordering(a, b, p.cq));

    let outer = tree.mark();
    // Shares include the incoming workload.
    for &(fr, v) in p.usage {
        tree.add_usage(pnode, fr, v);
    }
    let mut targets: Vec<(&Candidate, PreemptionReason)> = Vec::new();
    let mut retry: Vec<&Candidate> = Vec::new();
    let mut fits = false;

    // `runFirstFsStrategy`.
    let preemptor_within_nominal = preempt_within_nominal_gate
        && p.contested
            .iter()
            .all(|&fr| tree.nominal(pnode, fr) >= tree.usage(pnode, fr));
    let mut ordering = TargetOrdering::new(world, tree, p.cq, &candidates);
    'first: while let Some(cq) = ordering.next(world, tree) {
        if cq == p.cq || preemptor_within_nominal {
            let reason = if cq == p.cq {
                PreemptionReason::InClusterQueue
            } else {
                PreemptionReason::InCohortReclamation
            };
            let c = ordering
                .pop(cq)
                .expect("the ordering yields queues with candidates");
            remove(tree, c);
            targets.push((c, reason));
            if fits_for_fair_sharing(tree, p, &targets) {
                fits = true;
                break;
            }
            continue;
        }
        let (preemptor_new, target_old, target_node) = compute_shares(world, tree, &ordering, cq);
        // `fsStrategyUnsatisfiable`: a zero-weight borrowing preemptor (infinite share) can
        // pass neither strategy against a finite target; its candidates wait for the second.
        if preemptor_new.zero_weight_borrows() && !target_old.zero_weight_borrows() {
            while let Some(c) = ordering.pop(cq) {
                retry.push(c);
            }
            continue;
        }
        while let Some(c) = ordering.pop(cq) {
            // `ComputeTargetShareAfterRemoval`.
            let mark = tree.mark();
            remove(tree, c);
            let target_new = drs(world, tree, target_node, &[]);
            tree.rollback_to(mark);
            if strategies[0].passes(&preemptor_new, &target_old, &target_new) {
                remove(tree, c);
                targets.push((c, PreemptionReason::InCohortFairSharing));
                if fits_for_fair_sharing(tree, p, &targets) {
                    fits = true;
                    break 'first;
                }
                // Shares changed: choose the target queue again.
                break;
            }
            retry.push(c);
        }
    }

    // `runSecondFsStrategy` (rule S2-b): API validation only allows `LessThanInitialShare`
    // second, so upstream applies it whatever the second entry is, and so does this.
    if !fits && strategies.len() > 1 {
        let mut ordering = TargetOrdering::new(world, tree, p.cq, &retry);
        while let Some(cq) = ordering.next(world, tree) {
            let (preemptor_new, target_old, _) = compute_shares(world, tree, &ordering, cq);
            let passed = drs_compare(&preemptor_new, &target_old) == Ordering::Less;
            // The rule does not depend on the workload: the first candidate.
            let c = ordering
                .pop(cq)
                .expect("the ordering yields queues with candidates");
            if passed {
                remove(tree, c);
                targets.push((c, PreemptionReason::InCohortFairSharing));
                if fits_for_fair_sharing(tree, p, &targets) {
                    fits = true;
                    break;
                }
            }
            ordering.drop_queue(tree, cq);
        }
    }

    for &(fr, v) in p.usage {
        tree.remove_usage(pnode, fr, v);
    }
    if fits {
        fill_back_fair(tree, p, &mut targets);
    }
    tree.rollback_to(outer);
    if !fits {
        return Vec::new();
    }
    targets
        .into_iter()
        .map(|(c, reason)| Target {
            workload: c.workload,
            reason,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use PreemptionPolicy::{Any, LowerOrNewerEqualPriority, LowerPriority, Never};
    use PreemptionReason::{InClusterQueue, InCohortReclaimWhileBorrowing, InCohortReclamation};
    use kueuesim_model::{
        ClusterQueue, Cohort, CohortId, FlavorId, FlavorQuotas, ResourceFlavor, ResourceGroup,
        ResourceId, ResourceQuota,
    };

    /// A quota of `resource`: nominal, borrowingLimit, lendingLimit.
    fn rq(resource: u16, nominal: i64, bl: Option<i64>, ll: Option<i64>) -> ResourceQuota {
        ResourceQuota {
            resource: ResourceId(resource),
            nominal,
            borrowing_limit: bl,
            lending_limit: ll,
        }
    }

    /// A resource group with one flavor per entry.
    fn rg(covered: &[u16], flavors: Vec<(u16, Vec<ResourceQuota>)>) -> ResourceGroup {
        ResourceGroup {
            covered: covered.iter().map(|&r| ResourceId(r)).collect(),
            flavors: flavors
                .into_iter()
                .map(|(f, resources)| FlavorQuotas {
                    flavor: FlavorId(f),
                    resources,
                })
                .collect(),
        }
    }

    /// `spec.preemption`.
    fn pre(
        within: PreemptionPolicy,
        reclaim: PreemptionPolicy,
        threshold: Option<i32>,
    ) -> Preemption {
        Preemption {
            within_cluster_queue: within,
            reclaim_within_cohort: reclaim,
            borrow_within_cohort: if threshold.is_some() {
                LowerPriority
            } else {
                Never
            },
            borrow_max_priority_threshold: threshold,
        }
    }

    fn cq(
        name: &str,
        cohort: Option<u32>,
        groups: Vec<ResourceGroup>,
        p: Preemption,
    ) -> ClusterQueue {
        ClusterQueue {
            name: name.into(),
            cohort: cohort.map(CohortId),
            preemption: p,
            resource_groups: groups,
            ..Default::default()
        }
    }

    fn cohort(name: &str, parent: Option<u32>, groups: Vec<ResourceGroup>) -> Cohort {
        Cohort {
            name: name.into(),
            parent: parent.map(CohortId),
            resource_groups: groups,
            fair_sharing_weight_milli: 1000,
            declared: true,
        }
    }

    /// Resources `cpu` (0) and `memory` (1); flavors `default` (0), `alpha` (1), `beta` (2).
    fn base_world() -> World {
        let mut w = World::default();
        w.resources.intern("cpu");
        w.resources.intern("memory");
        for name in ["default", "alpha", "beta"] {
            w.flavors.push(ResourceFlavor {
                name: name.into(),
                ..Default::default()
            });
        }
        w
    }

    const CPU: u16 = 0;
    const MEM: u16 = 1;
    const DEFAULT: u16 = 0;

    /// The shared setup P of kueue-cases.md (`TestPreemption`'s defaultClusterQueues, the
    /// ones the cases use). Memory is in Gi.
    fn world_p() -> World {
        let mut w = base_world();
        w.cohorts = vec![
            cohort("cohort", None, vec![]),
            cohort("with_shared_cq", None, vec![]),
            cohort("cohort-lend", None, vec![]),
        ];
        let cpu_only =
            |nominal, bl, ll| vec![rg(&[CPU], vec![(DEFAULT, vec![rq(CPU, nominal, bl, ll)])])];
        let c_groups = || {
            vec![rg(
                &[CPU, MEM],
                vec![(
                    DEFAULT,
                    vec![rq(CPU, 6, Some(6), None), rq(MEM, 3, Some(3), None)],
                )],
            )]
        };
        let bwc = Some(0);
        w.cluster_queues = vec![
            cq(
                "standalone",
                None,
                vec![
                    rg(&[CPU], vec![(DEFAULT, vec![rq(CPU, 6, None, None)])]),
                    rg(
                        &[MEM],
                        vec![
                            (1, vec![rq(MEM, 3, None, None)]),
                            (2, vec![rq(MEM, 3, None, None)]),
                        ],
                    ),
                ],
                pre(LowerPriority, Never, None),
            ),
            cq(
                "c1",
                Some(0),
                c_groups(),
                pre(LowerPriority, LowerPriority, None),
            ),
            cq("c2", Some(0), c_groups(), pre(Never, Any, None)),
            cq(
                "preventStarvation",
                None,
                cpu_only(6, None, None),
                pre(LowerOrNewerEqualPriority, Never, None),
            ),
            cq(
                "a_standard",
                Some(1),
                cpu_only(1, Some(12), None),
                pre(Never, LowerPriority, bwc),
            ),
            cq(
                "b_standard",
                Some(1),
                cpu_only(1, Some(12), None),
                pre(LowerPriority, Any, bwc),
            ),
            cq(
                "a_best_effort",
                Some(1),
                cpu_only(1, Some(12), None),
                pre(Never, LowerPriority, bwc),
            ),
            cq(
                "b_best_effort",
                Some(1),
                cpu_only(0, Some(13), None),
                pre(Never, LowerPriority, bwc),
            ),
            cq(
                "shared",
                Some(1),
                cpu_only(10, None, None),
                Preemption::default(),
            ),
            cq(
                "lend1",
                Some(2),
                cpu_only(6, None, Some(4)),
                pre(LowerPriority, LowerPriority, None),
            ),
            cq(
                "lend2",
                Some(2),
                cpu_only(6, None, Some(2)),
                pre(LowerPriority, LowerPriority, None),
            ),
        ];
        w
    }

    /// Admitted workloads per ClusterQueue.
    struct Admitted(Vec<Vec<Candidate>>);

    impl AdmittedWorkloads for Admitted {
        fn admitted_in(&self, cq: ClusterQueueId) -> &[Candidate] {
            &self.0[cq.index()]
        }

        fn candidate(&self, w: WorkloadId) -> Option<&Candidate> {
            self.0.iter().flatten().find(|c| c.workload == w)
        }
    }

    /// A world, its tree with the admitted usage, and the admitted workloads by name.
    struct Case {
        world: World,
        tree: QuotaTree,
        admitted: Admitted,
        names: Vec<String>,
        /// Kueue TAS stand-in: the preemptor's topology fits once these are removed.
        topology: Option<NeedsGone>,
    }

    /// A topology that fits once every listed workload's pods are gone.
    #[derive(Debug)]
    struct NeedsGone(Vec<WorkloadId>);

    impl TopologyFit for NeedsGone {
        fn fits(&self, removed: &[WorkloadId]) -> bool {
            self.0.iter().all(|w| removed.contains(w))
        }
    }

    impl Case {
        fn new(world: World) -> Self {
            let tree = QuotaTree::new(&world);
            let admitted = Admitted(vec![Vec::new(); world.cluster_queues.len()]);
            Case {
                world,
                tree,
                admitted,
                names: Vec::new(),
                topology: None,
            }
        }

        /// The preemptor's topology fits only once `names` are gone.
        fn topology_needs_gone(&mut self, names: &[&str]) {
            let ids = names
                .iter()
                .map(|n| {
                    let i = self.names.iter().position(|x| x == n);
                    WorkloadId::from_index(i.expect("admitted"))
                })
                .collect();
            self.topology = Some(NeedsGone(ids));
        }

        fn cq(&self, name: &str) -> ClusterQueueId {
            let i = self
                .world
                .cluster_queues
                .iter()
                .position(|c| c.name == name);
            ClusterQueueId::from_index(i.expect("known ClusterQueue"))
        }

        fn cpu(&self) -> Fr {
            self.tree.fr(FlavorId(DEFAULT), ResourceId(CPU))
        }

        /// Admits `name` in `cq` holding `cpu` of the default flavor; reserved at 0, created at
        /// 0, UID rank in admission order. Returns it for tweaks that do not change usage.
        fn admit(&mut self, name: &str, cq: &str, priority: i32, cpu: i64) -> &mut Candidate {
            let (cq, fr) = (self.cq(cq), self.cpu());
            let id = self.names.len();
            self.names.push(name.into());
            self.tree.add_usage(self.tree.cq_node(cq), fr, cpu);
            let list = &mut self.admitted.0[cq.index()];
            list.push(Candidate {
                workload: WorkloadId::from_index(id),
                cq,
                priority,
                timestamp: SimTime::ZERO,
                reserved_at: SimTime::ZERO,
                evicted: false,
                uid_rank: id as u64,
                lq_fs_usage: None,
                usage: vec![(fr, cpu)],
            });
            list.last_mut().expect("just pushed")
        }

        /// Targets for an incoming workload needing `cpu` default cpu (contested) in `cq`;
        /// checks the tree is left as it was.
        fn run(
            &mut self,
            cq: &str,
            priority: i32,
            timestamp: SimTime,
            cpu: i64,
        ) -> Vec<(String, PreemptionReason)> {
            let fr = self.cpu();
            let usage = [(fr, cpu)];
            let p = Preemptor {
                workload: WorkloadId(u32::MAX),
                cq: self.cq(cq),
                priority,
                timestamp,
                usage: &usage,
                contested: &[fr],
                topology: self.topology.as_ref().map(|t| t as &dyn TopologyFit),
            };
            let before = self.usages();
            let targets = classical_targets(&self.world, &mut self.tree, &self.admitted, &p);
            assert_eq!(self.usages(), before, "the tree must be left unchanged");
            targets
                .into_iter()
                .map(|t| (self.names[t.workload.index()].clone(), t.reason))
                .collect()
        }

        /// Every node's usage of every `Fr`.
        fn usages(&self) -> Vec<i64> {
            let nodes = self.world.cluster_queues.len() + self.world.cohorts.len();
            (0..nodes as u32)
                .flat_map(|n| (0..self.tree.fr_count() as u32).map(move |f| (NodeIdx(n), Fr(f))))
                .map(|(n, f)| self.tree.usage(n, f))
                .collect()
        }
    }

    fn expect(targets: &[(&str, PreemptionReason)]) -> Vec<(String, PreemptionReason)> {
        targets.iter().map(|&(n, r)| (n.to_string(), r)).collect()
    }

    const T0: SimTime = SimTime::ZERO;

    /// `TestCandidatesOrdering` (preemption_test.go), the Admission Fair Sharing cases.
    #[test]
    fn candidates_ordering_prefers_higher_local_queue_usage() {
        let own = ClusterQueueId::from_index(0);
        let cand = |id: u32, cq: u32, priority: i32, lq: Option<(u32, f64)>| Candidate {
            workload: WorkloadId(id),
            cq: ClusterQueueId(cq),
            priority,
            timestamp: T0,
            reserved_at: T0,
            evicted: false,
            uid_rank: id as u64,
            lq_fs_usage: lq,
            usage: Vec::new(),
        };
        let order = |mut v: Vec<Candidate>| -> Vec<u32> {
            v.sort_by(|a, b| candidates_ordering(a, b, own));
            v.iter().map(|c| c.workload.0).collect()
        };
        let low_usage = cand(0, 0, 1, Some((0, 0.1)));
        let mid_usage = cand(1, 0, 10, Some((1, 0.5)));
        let high_usage_other_cq = cand(2, 1, 1, Some((2, 1.0)));
        // "workloads with higher LQ usage first": usage before priority.
        assert_eq!(order(vec![low_usage.clone(), mid_usage.clone()]), [1, 0]);
        // "workloads from different CQ are sorted based on priority and timestamp".
        assert_eq!(order(vec![mid_usage.clone(), high_usage_other_cq]), [2, 1]);
        // Without AFS (no usage), priority decides.
        let (mut a, mut b) = (low_usage.clone(), mid_usage.clone());
        (a.lq_fs_usage, b.lq_fs_usage) = (None, None);
        assert_eq!(order(vec![b, a]), [0, 1]);
        // LocalQueues with the same name (other namespaces) are not compared by usage.
        let mut same_name = mid_usage;
        same_name.lq_fs_usage = Some((0, 0.5));
        assert_eq!(order(vec![same_name, low_usage]), [0, 1]);
    }

    /// P-01 "preempt lowest priority".
    #[test]
    fn p01_preempt_lowest_priority() {
        let mut c = Case::new(world_p());
        c.admit("low", "standalone", -1, 2);
        c.admit("mid", "standalone", 0, 2);
        c.admit("high", "standalone", 1, 2);
        assert_eq!(
            c.run("standalone", 1, T0, 2),
            expect(&[("low", InClusterQueue)])
        );
    }

    /// P-03 "reclaim quota from borrower": other-CQ candidates come first, so c1-low survives.
    #[test]
    fn p03_reclaim_from_borrower() {
        let mut c = Case::new(world_p());
        c.admit("c1-low", "c1", -1, 3);
        c.admit("c2-mid", "c2", 0, 3);
        c.admit("c2-high", "c2", 1, 6);
        assert_eq!(
            c.run("c1", 1, T0, 3),
            expect(&[("c2-mid", InCohortReclamation)])
        );
    }

    /// P-05 "reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny".
    #[test]
    fn p05_reclaim_any_takes_lowest_priority_first() {
        let mut c = Case::new(world_p());
        c.admit("c1-1", "c1", 0, 4);
        c.admit("c1-2", "c1", 1, 4);
        c.admit("c2", "c2", 0, 2);
        assert_eq!(
            c.run("c2", 0, T0, 4),
            expect(&[("c1-1", InCohortReclamation)])
        );
    }

    /// P-07 "use BorrowWithinCohort; allow preempting a lower-priority workload from another
    /// ClusterQueue while borrowing".
    #[test]
    fn p07_borrow_within_cohort_below_threshold() {
        let mut c = Case::new(world_p());
        c.admit("a_best_effort_low", "a_best_effort", -1, 10);
        c.admit("b_best_effort_low", "b_best_effort", -1, 1);
        assert_eq!(
            c.run("a_standard", 0, T0, 10),
            expect(&[("a_best_effort_low", InCohortReclaimWhileBorrowing)])
        );
    }

    /// "don't allow preempting a lower-priority workload with priority above
    /// MaxPriorityThreshold, if borrowing is required even after the preemption".
    #[test]
    fn p08_above_threshold_while_borrowing_is_refused() {
        let mut c = Case::new(world_p());
        c.admit("b_standard", "b_standard", 1, 10);
        assert_eq!(c.run("a_standard", 2, T0, 10), expect(&[]));
    }

    /// P-09 "allow preempting a lower-priority workload with priority above
    /// MaxPriorityThreshold, if borrowing is not required after the preemption": the request
    /// fits a_standard's nominal, so it has the hierarchical advantage.
    #[test]
    fn p09_above_threshold_without_borrowing_after() {
        let mut c = Case::new(world_p());
        c.admit("b_standard", "b_standard", 1, 13);
        assert_eq!(
            c.run("a_standard", 2, T0, 1),
            expect(&[("b_standard", InCohortReclamation)])
        );
    }

    /// P-11 "cannot preempt from other ClusterQueues if exceeds requestable quota including
    /// lending limit": lend1 can reach at most 2 private + 6 lent = 8 < 9.
    #[test]
    fn p11_lending_limit_makes_request_impossible() {
        let mut c = Case::new(world_p());
        c.admit("lend2-low", "lend2", -1, 10);
        assert_eq!(c.run("lend1", 0, T0, 9), expect(&[]));
    }

    /// P-13 "prefer to preempt hierarchical candidate" (preemption_hierarchical_test.go): the
    /// borrower of cohort c's quota goes before a lower-priority workload of q itself.
    #[test]
    fn p13_hierarchical_candidate_preferred_over_lower_priority_local() {
        let mut w = base_world();
        w.cohorts = vec![
            cohort("r", None, vec![]),
            cohort(
                "c",
                Some(0),
                vec![rg(&[CPU], vec![(DEFAULT, vec![rq(CPU, 2, None, None)])])],
            ),
        ];
        let zero = || vec![rg(&[CPU], vec![(DEFAULT, vec![rq(CPU, 0, None, None)])])];
        w.cluster_queues = vec![
            cq("q", Some(1), zero(), pre(LowerPriority, Any, None)),
            cq(
                "q_borrowing",
                Some(0),
                zero(),
                pre(LowerPriority, Any, None),
            ),
        ];
        let mut c = Case::new(w);
        c.admit("admitted_borrowing", "q_borrowing", 1, 1);
        c.admit("admitted_same_queue", "q", -2, 1);
        assert_eq!(
            c.run("q", 0, T0, 1),
            expect(&[("admitted_borrowing", InCohortReclamation)])
        );
    }

    /// "preempt newer workloads with the same priority" (LowerOrNewerEqualPriority): wl1 has a
    /// higher priority; wl2 and wl3 are equal and newer than the preemptor, and wl2 was
    /// reserved most recently.
    #[test]
    fn lower_or_newer_equal_priority_preempts_newer_equal() {
        let mut c = Case::new(world_p());
        let now = SimTime::from_secs(100);
        c.admit("wl1", "preventStarvation", 2, 2).reserved_at = now;
        let wl2 = c.admit("wl2", "preventStarvation", 1, 2);
        wl2.timestamp = now;
        wl2.reserved_at = SimTime::from_secs(101);
        let wl3 = c.admit("wl3", "preventStarvation", 1, 2);
        wl3.timestamp = now;
        wl3.reserved_at = now;
        let preemptor_created = SimTime::from_secs(85);
        assert_eq!(
            c.run("preventStarvation", 1, preemptor_created, 2),
            expect(&[("wl2", InClusterQueue)])
        );
        // A preemptor newer than them may not take equal-priority workloads.
        assert_eq!(
            c.run("preventStarvation", 1, SimTime::from_secs(200), 2),
            expect(&[])
        );
    }

    /// "minimal set excludes low priority": greedy removal takes low (1) then mid (2); filling
    /// back re-admits low, since freeing mid alone makes room for 2.
    #[test]
    fn fill_back_spares_an_unneeded_victim() {
        let mut c = Case::new(world_p());
        c.admit("low", "standalone", -1, 1);
        c.admit("mid", "standalone", 0, 2);
        c.admit("high", "standalone", 1, 3);
        assert_eq!(
            c.run("standalone", 1, T0, 2),
            expect(&[("mid", InClusterQueue)])
        );
    }

    /// Kueue TAS (`workloadFits` places the preemptor too): the quota fits once `low` is gone,
    /// but the topology only once `mid` is; `low` is then filled back (the minimal set).
    #[test]
    fn topology_fit_picks_the_victim_that_frees_the_domain() {
        let mut c = Case::new(world_p());
        c.admit("low", "standalone", -1, 2);
        c.admit("mid", "standalone", 0, 2);
        c.admit("high", "standalone", 1, 2);
        // Quota alone: the lowest priority suffices.
        assert_eq!(
            c.run("standalone", 1, T0, 2),
            expect(&[("low", InClusterQueue)])
        );
        c.topology_needs_gone(&["mid"]);
        assert_eq!(
            c.run("standalone", 1, T0, 2),
            expect(&[("mid", InClusterQueue)])
        );
        // A topology only a workload it may not preempt would free: no targets.
        c.topology_needs_gone(&["high"]);
        assert_eq!(c.run("standalone", 1, T0, 2), expect(&[]));
    }

    /// Already-evicted workloads go first, whatever their priority.
    #[test]
    fn evicted_candidates_first() {
        let mut c = Case::new(world_p());
        c.admit("low", "standalone", -1, 2);
        c.admit("mid", "standalone", 0, 2).evicted = true;
        c.admit("high", "standalone", 1, 2);
        assert_eq!(
            c.run("standalone", 1, T0, 2),
            expect(&[("mid", InClusterQueue)])
        );
    }

    // -----------------------------------------------------------------------------------------
    // Fair sharing (`preemption_fair_test.go` `TestFairPreemptions`; kueue-cases.md F-*).
    // -----------------------------------------------------------------------------------------

    use PreemptionReason::InCohortFairSharing;

    /// A ClusterQueue of the fair-sharing tests: name, cohort, cpu nominal per flavor (milli),
    /// fair-sharing weight (milli), `spec.preemption`.
    type FairCq<'a> = (&'a str, Option<&'a str>, &'a [(u16, i64)], i64, Preemption);

    /// A world of cohorts (name, parent, cpu nominal on `default` in milli, weight milli) and
    /// ClusterQueues; names are resolved here.
    fn fair_world(cohorts: &[(&str, Option<&str>, i64, i64)], cqs: &[FairCq<'_>]) -> World {
        let mut w = base_world();
        let id = |name: &str| {
            let i = cohorts.iter().position(|c| c.0 == name);
            i.expect("known cohort") as u32
        };
        let cpu_groups = |quotas: &[(u16, i64)]| {
            if quotas.is_empty() {
                return vec![];
            }
            let flavors = quotas
                .iter()
                .map(|&(f, n)| (f, vec![rq(CPU, n, None, None)]))
                .collect();
            vec![rg(&[CPU], flavors)]
        };
        for &(name, parent, nominal, weight) in cohorts {
            let groups = if nominal > 0 {
                cpu_groups(&[(DEFAULT, nominal)])
            } else {
                vec![]
            };
            let mut co = cohort(name, parent.map(id), groups);
            co.fair_sharing_weight_milli = weight;
            w.cohorts.push(co);
        }
        for &(name, co, quotas, weight, p) in cqs {
            let mut q = cq(name, co.map(id), cpu_groups(quotas), p);
            q.fair_sharing_weight_milli = weight;
            w.cluster_queues.push(q);
        }
        w
    }

    /// `withinClusterQueue: LowerPriority`, `reclaimWithinCohort: Any`, and
    /// `borrowWithinCohort` with threshold −3 (ignored by fair sharing).
    fn fair_pre() -> Preemption {
        pre(LowerPriority, Any, Some(-3))
    }

    /// The shared setup F: cohort "all" with a, b, c (3 cpu, weight 1) and "preemptible"
    /// (0 cpu); `weights` overrides the weights of a, b, c.
    fn world_f_weighted(weights: [i64; 3], p: Preemption) -> World {
        fair_world(
            &[("all", None, 0, 1000)],
            &[
                ("a", Some("all"), &[(DEFAULT, 3000)], weights[0], p),
                ("b", Some("all"), &[(DEFAULT, 3000)], weights[1], p),
                ("c", Some("all"), &[(DEFAULT, 3000)], weights[2], p),
                (
                    "preemptible",
                    Some("all"),
                    &[(DEFAULT, 0)],
                    1000,
                    Preemption::default(),
                ),
            ],
        )
    }

    fn world_f() -> World {
        world_f_weighted([1000; 3], fair_pre())
    }

    const UNIT: i64 = 1000;

    impl Case {
        /// Admits `name` holding `cpu` of `flavor`.
        fn admit_on(&mut self, name: &str, cq: &str, priority: i32, flavor: u16, cpu: i64) {
            let (cq, fr) = (self.cq(cq), self.tree.fr(FlavorId(flavor), ResourceId(CPU)));
            let id = self.names.len();
            self.names.push(name.into());
            self.tree.add_usage(self.tree.cq_node(cq), fr, cpu);
            self.admitted.0[cq.index()].push(Candidate {
                workload: WorkloadId::from_index(id),
                cq,
                priority,
                timestamp: SimTime::ZERO,
                reserved_at: SimTime::ZERO,
                evicted: false,
                uid_rank: id as u64,
                lq_fs_usage: None,
                usage: vec![(fr, cpu)],
            });
        }

        /// Admits unit workloads of priority 0 named `names` in `cq`.
        fn units(&mut self, cq: &str, names: &[&str]) {
            for n in names {
                self.admit(n, cq, 0, UNIT);
            }
        }

        /// Fair-sharing targets for an incoming workload of priority `priority` needing `cpu`
        /// of `flavor` (contested) in `cq`. UIDs are the names (as upstream's test sets them),
        /// so the last tie-break is by name. Checks the tree is left as it was.
        fn run_fair_on(
            &mut self,
            cq: &str,
            priority: i32,
            flavor: u16,
            cpu: i64,
            strategies: &[FairStrategy],
            within_nominal_gate: bool,
        ) -> Vec<(String, PreemptionReason)> {
            let mut by_name: Vec<usize> = (0..self.names.len()).collect();
            by_name.sort_by(|&a, &b| self.names[a].cmp(&self.names[b]));
            for (rank, &i) in by_name.iter().enumerate() {
                for c in self.admitted.0.iter_mut().flatten() {
                    if c.workload.index() == i {
                        c.uid_rank = rank as u64;
                    }
                }
            }
            let fr = self.tree.fr(FlavorId(flavor), ResourceId(CPU));
            let usage = [(fr, cpu)];
            let p = Preemptor {
                workload: WorkloadId(u32::MAX),
                cq: self.cq(cq),
                priority,
                timestamp: T0,
                usage: &usage,
                contested: &[fr],
                topology: self.topology.as_ref().map(|t| t as &dyn TopologyFit),
            };
            let before = self.usages();
            let targets = fair_targets_gated(
                &self.world,
                &mut self.tree,
                &self.admitted,
                &p,
                strategies,
                within_nominal_gate,
            );
            assert_eq!(self.usages(), before, "the tree must be left unchanged");
            targets
                .into_iter()
                .map(|t| (self.names[t.workload.index()].clone(), t.reason))
                .collect()
        }

        /// `run_fair_on` with the default flavor, priority 0, default strategies, gate on.
        fn run_fair(&mut self, cq: &str, cpu: i64) -> Vec<(String, PreemptionReason)> {
            self.run_fair_on(cq, 0, DEFAULT, cpu, &[], true)
        }
    }

    /// F-01 "reclaim nominal from user using the most": c stays within nominal, so it takes
    /// from the most unfair queue without comparing shares.
    #[test]
    fn f01_within_nominal_reclaims_from_the_most_unfair() {
        let mut c = Case::new(world_f());
        c.units("a", &["a1", "a2", "a3"]);
        c.units("b", &["b1", "b2", "b3", "b4", "b5"]);
        c.units("c", &["c1"]);
        assert_eq!(
            c.run_fair("c", UNIT),
            expect(&[("b1", InCohortReclamation)])
        );
    }

    /// Fair sharing with Kueue TAS: b1 frees the quota but not the topology, b2 does; b1 is
    /// filled back.
    #[test]
    fn fair_topology_fit_takes_until_the_domain_is_free() {
        let mut c = Case::new(world_f());
        c.units("a", &["a1", "a2", "a3"]);
        c.units("b", &["b1", "b2", "b3", "b4", "b5"]);
        c.units("c", &["c1"]);
        c.topology_needs_gone(&["b2"]);
        assert_eq!(
            c.run_fair("c", UNIT),
            expect(&[("b2", InCohortReclamation)])
        );
    }

    /// "can reclaim from queue using less, if taking the latest workload from user using the
    /// most isn't enough": b1 goes first, is not enough, and is filled back after a1.
    #[test]
    fn fair_reclaim_from_less_unfair_queue_when_needed() {
        let mut c = Case::new(world_f());
        c.admit("a1", "a", 0, 3000);
        c.admit("a2", "a", 0, 1000);
        c.admit("b1", "b", 0, 2000);
        c.admit("b2", "b", 0, 3000);
        assert_eq!(
            c.run_fair("c", 3000),
            expect(&[("a1", InCohortReclamation)])
        );
    }

    /// "reclaim borrowable quota from user using the most": a borrows with the incoming
    /// workload (111) and b would drop to 111 too: S2-a passes.
    #[test]
    fn fair_reclaim_borrowable_from_the_most_unfair() {
        let mut c = Case::new(world_f());
        c.units("a", &["a1", "a2", "a3"]);
        c.units("b", &["b1", "b2", "b3", "b4", "b5"]);
        c.units("c", &["c1"]);
        assert_eq!(
            c.run_fair("a", UNIT),
            expect(&[("b1", InCohortFairSharing)])
        );
    }

    /// "preempt one from each CQ borrowing".
    #[test]
    fn fair_preempt_one_from_each_borrowing_queue() {
        let mut c = Case::new(world_f());
        c.admit("a1", "a", 0, 500);
        c.admit("a2", "a", 0, 500);
        c.admit("a3", "a", 0, 3000);
        c.admit("b1", "b", 0, 500);
        c.admit("b2", "b", 0, 500);
        c.admit("b3", "b", 0, 3000);
        assert_eq!(
            c.run_fair("c", 2000),
            expect(&[("a1", InCohortReclamation), ("b1", InCohortReclamation)])
        );
    }

    /// "can't preempt when everyone under nominal".
    #[test]
    fn fair_nothing_when_everyone_within_nominal() {
        let mut c = Case::new(world_f());
        c.units("a", &["a1", "a2", "a3"]);
        c.units("b", &["b1", "b2", "b3"]);
        c.units("c", &["c1", "c2", "c3"]);
        assert_eq!(c.run_fair("c", UNIT), expect(&[]));
    }

    /// F-03 "can't preempt when it would switch the imbalance": a would borrow 2 (222), b
    /// borrows 2 (222); removing b1 drops b to 111 < 222 (S2-a fails) and 222 is not below
    /// 222 (S2-b fails).
    #[test]
    fn f03_no_preemption_that_flips_the_imbalance() {
        let mut c = Case::new(world_f());
        c.units("a", &["a1", "a2", "a3"]);
        c.units("b", &["b1", "b2", "b3", "b4", "b5"]);
        assert_eq!(c.run_fair("a", 2000), expect(&[]));
    }

    /// "can preempt lower priority workloads from same CQ".
    #[test]
    fn fair_preempts_lower_priority_in_own_queue() {
        let mut c = Case::new(world_f());
        c.admit("a1_low", "a", -1, UNIT);
        c.admit("a2_low", "a", -1, UNIT);
        c.units("a", &["a3", "a4"]);
        c.units("b", &["b1", "b2", "b3", "b4", "b5"]);
        assert_eq!(
            c.run_fair("a", 2000),
            expect(&[("a1_low", InClusterQueue), ("a2_low", InClusterQueue)])
        );
    }

    /// "can preempt a combination of same CQ and highest user".
    #[test]
    fn fair_preempts_own_queue_and_most_unfair() {
        let mut c = Case::new(world_f());
        c.admit("a_low", "a", -1, UNIT);
        c.units("a", &["a2", "a3"]);
        c.units("b", &["b1", "b2", "b3", "b4", "b5", "b6"]);
        assert_eq!(
            c.run_fair("a", 2000),
            expect(&[("b1", InCohortFairSharing), ("a_low", InClusterQueue)])
        );
    }

    /// "preempt huge workload if there is no other option, as long as the target CQ gets a
    /// lower share": a stays within nominal, so the 9-cpu workload goes.
    #[test]
    fn fair_preempts_huge_workload_when_within_nominal() {
        let mut c = Case::new(world_f());
        c.admit("b1", "b", 0, 9000);
        assert_eq!(
            c.run_fair("a", 2000),
            expect(&[("b1", InCohortReclamation)])
        );
    }

    /// "can't preempt huge workload if the incoming is also huge" and "can't preempt 2 smaller
    /// workloads if the incoming is huge".
    #[test]
    fn fair_huge_incoming_cannot_preempt() {
        let mut c = Case::new(world_f());
        c.admit("a1", "a", 0, 2000);
        c.admit("b1", "b", 0, 7000);
        assert_eq!(c.run_fair("a", 5000), expect(&[]));

        let mut c = Case::new(world_f());
        c.admit("b1", "b", 0, 2000);
        c.admit("b2", "b", 0, 2000);
        c.admit("b3", "b", 0, 3000);
        assert_eq!(c.run_fair("a", 6000), expect(&[]));
    }

    /// "preempt from target and others even if over nominal": the first pass takes a1_low and
    /// a2_low (S2-a refuses b's, which would drop b to 0 < 222), the second pass takes b1
    /// (111 < 333), and filling back spares a2_low.
    #[test]
    fn fair_preempts_own_and_others_while_borrowing() {
        let mut c = Case::new(world_f());
        c.admit("a1_low", "a", -1, 2000);
        c.admit("a2_low", "a", -1, 1000);
        c.admit("b1", "b", 0, 3000);
        c.admit("b2", "b", 0, 3000);
        assert_eq!(
            c.run_fair("a", 4000),
            expect(&[("a1_low", InClusterQueue), ("b1", InCohortFairSharing)])
        );
    }

    /// "prefer to preempt workloads that don't make the target CQ have the biggest share":
    /// removing b1 (2) would leave b at 0 < a's 55.6; b2 (1) leaves b at 111 ≥ 55.6.
    #[test]
    fn fair_prefers_victim_keeping_target_share_above_preemptor() {
        let mut c = Case::new(world_f());
        c.admit("b1", "b", 0, 2000);
        c.admit("b2", "b", 0, 1000);
        c.admit("b3", "b", 0, 2000);
        c.admit("c1", "c", 0, 1000);
        assert_eq!(
            c.run_fair("a", 3500),
            expect(&[("b2", InCohortFairSharing)])
        );
    }

    /// "preempt from different cluster queues if the end result has a smaller max share", and
    /// "scenario above does not flap".
    #[test]
    fn fair_preempts_from_several_queues_and_does_not_flap() {
        let mut c = Case::new(world_f());
        c.admit("b1", "b", 0, 2000);
        c.admit("b2", "b", 0, 2500);
        c.admit("c1", "c", 0, 2000);
        c.admit("c2", "c", 0, 2500);
        assert_eq!(
            c.run_fair("a", 3500),
            expect(&[("b1", InCohortFairSharing), ("c1", InCohortFairSharing)])
        );

        let mut c = Case::new(world_f());
        c.admit("a1", "a", 0, 3500);
        c.admit("b2", "b", 0, 2500);
        c.admit("c2", "c", 0, 2500);
        assert_eq!(c.run_fair("b", 2000), expect(&[]));
    }

    /// "cannot preempt if it would make the candidate CQ go under nominal after preempting one
    /// element".
    #[test]
    fn fair_cannot_push_target_under_nominal() {
        let mut c = Case::new(world_f());
        c.admit("b1", "b", 0, 3000);
        c.admit("b2", "b", 0, 3000);
        c.admit("c1", "c", 0, 3000);
        assert_eq!(c.run_fair("a", 4000), expect(&[]));
    }

    /// "workloads under priority threshold not capriciously preempted": `borrowWithinCohort`
    /// plays no role in fair sharing.
    #[test]
    fn fair_ignores_borrow_within_cohort() {
        let mut c = Case::new(world_f());
        c.units("a", &["a1", "a2", "a3"]);
        c.units("b", &["b1", "b2", "b3"]);
        for n in ["preemptible1", "preemptible2", "preemptible3"] {
            c.admit(n, "preemptible", -3, UNIT);
        }
        assert_eq!(c.run_fair("a", 2000), expect(&[]));
    }

    /// F-06 / F-07: a 1-cpu preemptor in a (already at nominal) against b borrowing 3 with
    /// b_low (5, prio 0) and b_high (1, prio 1).
    fn case_f06() -> Case {
        let mut c = Case::new(world_f());
        c.admit("a1", "a", 0, 3000);
        c.admit("b_low", "b", 0, 5000);
        c.admit("b_high", "b", 1, 1000);
        c
    }

    /// F-06 "preempt lower priority first, even if big" (`[LessThanInitialShare]`): a's
    /// share 111 is below b's 333, so the first candidate goes.
    #[test]
    fn f06_less_than_initial_share_takes_lower_priority_first() {
        let strategies = [FairStrategy::LessThanInitialShare];
        assert_eq!(
            case_f06().run_fair_on("a", 0, DEFAULT, UNIT, &strategies, true),
            expect(&[("b_low", InCohortFairSharing)])
        );
    }

    /// F-07 "preempt workload that doesn't transfer the imbalance, even if high priority"
    /// (`[LessThanOrEqualToFinalShare]`): removing b_low would drop b to 0 < a's 111;
    /// removing b_high leaves b at 222 ≥ 111.
    #[test]
    fn f07_final_share_picks_balance_preserving_victim() {
        let strategies = [FairStrategy::LessThanOrEqualToFinalShare];
        assert_eq!(
            case_f06().run_fair_on("a", 0, DEFAULT, UNIT, &strategies, true),
            expect(&[("b_high", InCohortFairSharing)])
        );
        // With both strategies S2-a finds b_high first, too.
        assert_eq!(
            case_f06().run_fair("a", UNIT),
            expect(&[("b_high", InCohortFairSharing)])
        );
    }

    /// F-05 "CQ with higher weight can preempt more": a's share is 222 / 2 = 111.
    #[test]
    fn f05_higher_weight_preempts_more() {
        let p = pre(LowerPriority, Any, None);
        let mut c = Case::new(world_f_weighted([2000, 1000, 1000], p));
        c.units("a", &["a1", "a2", "a3"]);
        c.units("b", &["b1", "b2", "b3", "b4", "b5", "b6"]);
        assert_eq!(
            c.run_fair("a", 2000),
            expect(&[("b1", InCohortFairSharing), ("b2", InCohortFairSharing)])
        );
    }

    /// "can preempt anything borrowing from CQ with 0 weight" and "can't preempt nominal from
    /// CQ with 0 weight".
    #[test]
    fn fair_zero_weight_queue_loses_what_it_borrows_only() {
        let p = pre(LowerPriority, Any, None);
        let mut c = Case::new(world_f_weighted([1000, 0, 1000], p));
        c.units("a", &["a1", "a2", "a3"]);
        c.units("b", &["b1", "b2", "b3", "b4", "b5", "b6"]);
        assert_eq!(
            c.run_fair("a", 3000),
            expect(&[
                ("b1", InCohortFairSharing),
                ("b2", InCohortFairSharing),
                ("b3", InCohortFairSharing)
            ])
        );

        let w = fair_world(
            &[("all", None, 0, 1000)],
            &[
                ("a", Some("all"), &[(DEFAULT, 3000)], 1000, p),
                ("b", Some("all"), &[(DEFAULT, 3000)], 0, p),
            ],
        );
        let mut c = Case::new(w);
        c.units("a", &["a1", "a2", "a3"]);
        c.units("b", &["b1", "b2", "b3"]);
        assert_eq!(c.run_fair("a", UNIT), expect(&[]));
    }

    /// "can't preempt nominal from Cohort with 0 weight": right-cohort's own quota is not
    /// borrowed, so it is pruned whatever its weight.
    #[test]
    fn fair_zero_weight_cohort_keeps_its_nominal() {
        let reclaim = pre(Never, Any, None);
        let w = fair_world(
            &[
                ("root", None, 0, 1000),
                ("right-cohort", Some("root"), 1000, 0),
            ],
            &[
                ("left-cq", Some("root"), &[(DEFAULT, 0)], 1000, reclaim),
                (
                    "right-cq",
                    Some("right-cohort"),
                    &[(DEFAULT, 0)],
                    0,
                    reclaim,
                ),
            ],
        );
        let mut c = Case::new(w);
        c.units("right-cq", &["right-1"]);
        assert_eq!(c.run_fair("left-cq", UNIT), expect(&[]));
    }

    /// "can preempt within cluster queue when no cohort".
    #[test]
    fn fair_without_cohort_preempts_in_own_queue() {
        let w = fair_world(
            &[],
            &[(
                "a",
                None,
                &[(DEFAULT, 1000)],
                1000,
                pre(LowerPriority, Never, None),
            )],
        );
        let mut c = Case::new(w);
        c.units("a", &["a1"]);
        assert_eq!(
            c.run_fair_on("a", 1000, DEFAULT, UNIT, &[], true),
            expect(&[("a1", InClusterQueue)])
        );
    }

    /// "hierarchical preemption": ROOT(5) ← LEFT(5, w2) ← {a(1, w2), b(1)}, c(1),
    /// RIGHT(5) ← {d(1), e(1, w0.99)}; b, c, d, e hold 5 units each (priorities 1..5); a asks
    /// for 5 and takes from b, c and e.
    #[test]
    fn fair_hierarchical_preemption() {
        let none = Preemption::default();
        let w = fair_world(
            &[
                ("ROOT", None, 5000, 1000),
                ("LEFT", Some("ROOT"), 5000, 2000),
                ("RIGHT", Some("ROOT"), 5000, 1000),
            ],
            &[
                (
                    "a",
                    Some("LEFT"),
                    &[(DEFAULT, 1000)],
                    2000,
                    pre(Never, Any, None),
                ),
                ("b", Some("LEFT"), &[(DEFAULT, 1000)], 1000, none),
                ("c", Some("ROOT"), &[(DEFAULT, 1000)], 1000, none),
                ("d", Some("RIGHT"), &[(DEFAULT, 1000)], 1000, none),
                ("e", Some("RIGHT"), &[(DEFAULT, 1000)], 990, none),
            ],
        );
        let mut c = Case::new(w);
        for q in ["b", "c", "d", "e"] {
            for prio in 1..=5 {
                c.admit(&format!("{q}{prio}"), q, prio, UNIT);
            }
        }
        let mut got = c.run_fair("a", 5000);
        got.sort();
        assert_eq!(
            got,
            expect(&[
                ("b1", InCohortFairSharing),
                ("b2", InCohortFairSharing),
                ("c1", InCohortFairSharing),
                ("c2", InCohortFairSharing),
                ("e1", InCohortFairSharing),
            ])
        );
    }

    /// "borrowing cq in non-borrowing cohort is protected" and "forced to preempt within
    /// clusterqueue because borrowing workload too important".
    #[test]
    fn fair_borrowing_queue_in_non_borrowing_cohort_is_protected() {
        let world = |right_quota, reclaim| {
            fair_world(
                &[
                    ("ROOT", None, 0, 1000),
                    ("RIGHT", Some("ROOT"), right_quota, 100),
                ],
                &[
                    (
                        "a",
                        Some("ROOT"),
                        &[(DEFAULT, 5000)],
                        10_000,
                        pre(LowerPriority, reclaim, None),
                    ),
                    ("b", Some("RIGHT"), &[], 100, Preemption::default()),
                ],
            )
        };
        let own = expect(&[
            ("a1", InClusterQueue),
            ("a2", InClusterQueue),
            ("a3", InClusterQueue),
        ]);

        let mut c = Case::new(world(1000, Any));
        for n in ["a1", "a2", "a3"] {
            c.admit(n, "a", -1, UNIT);
        }
        c.admit("b1", "b", -1, UNIT);
        let mut got = c.run_fair("a", 5000);
        got.sort();
        assert_eq!(got, own);

        let mut c = Case::new(world(3000, LowerPriority));
        for n in ["a1", "a2", "a3"] {
            c.admit(n, "a", -1, UNIT);
        }
        c.admit("b1", "b", 100, 4000);
        let mut got = c.run_fair("a", 4000);
        got.sort();
        assert_eq!(got, own);
    }

    /// "deep preemption": the almost-LCAs are A (weight 1.01) and B (0.99), three levels up.
    #[test]
    fn fair_deep_preemption_compares_almost_lcas() {
        let none = Preemption::default();
        let w = fair_world(
            &[
                ("ROOT", None, 0, 1000),
                ("A", Some("ROOT"), 0, 1010),
                ("AA", Some("A"), 0, 1000),
                ("AAA", Some("AA"), 0, 1000),
                ("B", Some("ROOT"), 0, 990),
                ("BB", Some("B"), 0, 1000),
                ("BBB", Some("BB"), 0, 1000),
                ("C", Some("ROOT"), 0, 1000),
                ("CC", Some("C"), 0, 1000),
                ("CCC", Some("CC"), 0, 1000),
                ("CCCC", Some("CCC"), 1000, 1000),
            ],
            &[
                (
                    "a",
                    Some("AAA"),
                    &[(DEFAULT, 0)],
                    1000,
                    pre(Never, Any, None),
                ),
                ("b", Some("BBB"), &[(DEFAULT, 0)], 1000, none),
            ],
        );
        let mut c = Case::new(w);
        c.units("b", &["b1"]);
        assert_eq!(
            c.run_fair("a", UNIT),
            expect(&[("b1", InCohortFairSharing)])
        );
    }

    /// "cq with zero weight can reclaim nominal quota" and "cohort with zero weight can
    /// reclaim nominal quota".
    #[test]
    fn fair_zero_weight_preemptor_reclaims_nominal() {
        let reclaim = pre(Never, Any, None);
        let none = Preemption::default();
        let w = fair_world(
            &[("ROOT", None, 0, 1000)],
            &[
                ("a", Some("ROOT"), &[(DEFAULT, 1000)], 0, reclaim),
                ("b", Some("ROOT"), &[(DEFAULT, 0)], 1000, none),
            ],
        );
        let mut c = Case::new(w);
        c.units("b", &["b1"]);
        assert_eq!(
            c.run_fair("a", UNIT),
            expect(&[("b1", InCohortReclamation)])
        );

        // Here a borrows from its cohort A, which does not borrow: A's share (0) is below b's.
        let w = fair_world(
            &[("ROOT", None, 0, 1000), ("A", Some("ROOT"), 1000, 0)],
            &[
                ("a", Some("A"), &[(DEFAULT, 0)], 0, reclaim),
                ("b", Some("ROOT"), &[(DEFAULT, 0)], 1000, none),
            ],
        );
        let mut c = Case::new(w);
        c.units("b", &["b1"]);
        assert_eq!(
            c.run_fair("a", UNIT),
            expect(&[("b1", InCohortFairSharing)])
        );
    }

    /// "nominal first: workload fitting within nominal can preempt despite high aggregate DRS"
    /// (flavors premium = alpha, cheap = beta), and the same with the
    /// `FairSharingPreemptWithinNominal` gate off.
    #[test]
    fn fair_within_nominal_gate() {
        const PREMIUM: u16 = 1;
        const CHEAP: u16 = 2;
        let w = fair_world(
            &[("all", None, 0, 1000)],
            &[
                (
                    "a",
                    Some("all"),
                    &[(PREMIUM, 3000), (CHEAP, 0)],
                    1000,
                    pre(Never, Any, None),
                ),
                (
                    "b",
                    Some("all"),
                    &[(PREMIUM, 0), (CHEAP, 6000)],
                    1000,
                    Preemption::default(),
                ),
            ],
        );
        let mut c = Case::new(w);
        c.admit_on("a_prem1", "a", 0, PREMIUM, UNIT);
        c.admit_on("a_prem2", "a", 0, PREMIUM, UNIT);
        for i in 1..=5 {
            c.admit_on(&format!("a_cheap{i}"), "a", 0, CHEAP, UNIT);
        }
        c.admit_on("b_prem1", "b", 0, PREMIUM, UNIT);
        assert_eq!(
            c.run_fair_on("a", 0, PREMIUM, UNIT, &[], true),
            expect(&[("b_prem1", InCohortReclamation)])
        );
        // Without the gate a's share (5 of 9 cheap lendable) is above b's (1 of 9 premium).
        assert_eq!(
            c.run_fair_on("a", 0, PREMIUM, UNIT, &[], false),
            expect(&[])
        );
    }

    /// The zero-weight preemptor cases: against a non-zero-weight borrower nothing passes;
    /// against another zero-weight borrower the unweighted ratios compare; and the same shape
    /// with weights 1.
    #[test]
    fn fair_zero_weight_borrowing_preemptor() {
        let reclaim = pre(Never, Any, None);
        let none = Preemption::default();
        let w = fair_world(
            &[("all", None, 0, 1000)],
            &[
                ("a", Some("all"), &[(DEFAULT, 1000)], 0, reclaim),
                ("b", Some("all"), &[(DEFAULT, 1000)], 1000, none),
            ],
        );
        let mut c = Case::new(w);
        c.units("a", &["a1"]);
        c.units("b", &["b1", "b2"]);
        assert_eq!(c.run_fair("a", UNIT), expect(&[]));

        for weight in [0, 1000] {
            let w = fair_world(
                &[("all", None, 3000, 1000)],
                &[
                    ("a", Some("all"), &[(DEFAULT, 1000)], weight, reclaim),
                    ("b", Some("all"), &[(DEFAULT, 0)], weight, none),
                ],
            );
            let mut c = Case::new(w);
            c.units("b", &["b1", "b2", "b3"]);
            assert_eq!(
                c.run_fair("a", 2000),
                expect(&[("b1", InCohortFairSharing)]),
                "weight {weight}"
            );
        }
    }

    /// "candidates skipped by the first strategy are still available to the second strategy":
    /// A (weight 0) borrows, so x's candidates are skipped at first; once y1 goes, A stops
    /// borrowing and S2-b takes x1.
    #[test]
    fn fair_skipped_candidates_reach_the_second_strategy() {
        let reclaim = pre(Never, Any, None);
        let none = Preemption::default();
        let w = fair_world(
            &[("ROOT", None, 0, 1000), ("A", Some("ROOT"), 1000, 0)],
            &[
                ("p", Some("A"), &[(DEFAULT, 2000)], 1000, reclaim),
                ("y", Some("A"), &[(DEFAULT, 2000)], 1000, none),
                ("x", Some("ROOT"), &[(DEFAULT, 1000)], 1000, none),
            ],
        );
        let mut c = Case::new(w);
        c.admit("p1", "p", 0, 2000);
        c.admit("y1", "y", 0, 2000);
        c.admit("y2", "y", 0, 2000);
        c.units("x", &["x1", "x2"]);
        assert_eq!(
            c.run_fair("p", UNIT),
            expect(&[("y1", InCohortFairSharing), ("x1", InCohortFairSharing)])
        );
        // With S2-a alone, x1 is never reconsidered.
        let s2a = [FairStrategy::LessThanOrEqualToFinalShare];
        assert_eq!(
            c.run_fair_on("p", 0, DEFAULT, UNIT, &s2a, true),
            expect(&[])
        );
    }

    /// `findCandidates` only takes other queues borrowing on a contested `Fr`: b borrows cheap
    /// cpu (from c) and so outranks a, but its premium workload is within b's nominal and
    /// must not go.
    #[test]
    fn fair_queue_borrowing_elsewhere_is_no_candidate() {
        const PREMIUM: u16 = 1;
        const CHEAP: u16 = 2;
        let none = Preemption::default();
        let w = fair_world(
            &[("all", None, 0, 1000)],
            &[
                (
                    "a",
                    Some("all"),
                    &[(PREMIUM, 3000), (CHEAP, 0)],
                    1000,
                    pre(Never, Any, None),
                ),
                ("b", Some("all"), &[(PREMIUM, 3000), (CHEAP, 0)], 1000, none),
                ("c", Some("all"), &[(PREMIUM, 0), (CHEAP, 3000)], 1000, none),
            ],
        );
        let mut c = Case::new(w);
        c.admit_on("a_prem", "a", 0, PREMIUM, 3000);
        c.admit_on("b_prem", "b", 0, PREMIUM, 3000);
        c.admit_on("b_cheap", "b", 0, CHEAP, 2000);
        assert_eq!(c.run_fair_on("a", 0, PREMIUM, UNIT, &[], true), expect(&[]));
    }

    /// `nextTarget`: a cohort wins a tie against a ClusterQueue. x and cohort K (holding y)
    /// both borrow 1 of the 2 lendable (500); p stays within nominal and takes from K's side.
    #[test]
    fn fair_cohort_wins_ties_against_cluster_queue() {
        let none = Preemption::default();
        let w = fair_world(
            &[("all", None, 0, 1000), ("K", Some("all"), 0, 1000)],
            &[
                (
                    "p",
                    Some("all"),
                    &[(DEFAULT, 2000)],
                    1000,
                    pre(Never, Any, None),
                ),
                ("x", Some("all"), &[(DEFAULT, 0)], 1000, none),
                ("y", Some("K"), &[(DEFAULT, 0)], 1000, none),
            ],
        );
        let mut c = Case::new(w);
        c.units("x", &["x1"]);
        c.units("y", &["y1"]);
        assert_eq!(
            c.run_fair("p", UNIT),
            expect(&[("y1", InCohortReclamation)])
        );
    }

    /// `runSecondFsStrategy` takes at most one workload per ClusterQueue. a (nominal 3) holds
    /// a_low (4) and asks for 5 more: a and b both borrow 6 of 12, and b goes first (its head
    /// is another queue's). S2-a refuses b1, b2 (b would drop to 5 < 6) and b3; then a_low goes,
    /// which is not enough. In the second pass a borrows 2 < b's 6, so b1 goes, which is not
    /// enough either; b2 would pass again (2 < 5) and make room, but b is dropped: no targets.
    #[test]
    fn fair_second_strategy_takes_at_most_one_per_queue() {
        let none = Preemption::default();
        let w = fair_world(
            &[("all", None, 0, 1000)],
            &[
                ("a", Some("all"), &[(DEFAULT, 3000)], 1000, fair_pre()),
                ("b", Some("all"), &[(DEFAULT, 3000)], 1000, none),
                ("c", Some("all"), &[(DEFAULT, 6000)], 1000, none),
            ],
        );
        let mut c = Case::new(w);
        c.admit("a_low", "a", -1, 4000);
        c.admit("b1", "b", 0, 1000);
        c.admit("b2", "b", 0, 1000);
        c.admit("b3", "b", 0, 7000);
        assert_eq!(c.run_fair("a", 5000), expect(&[]));
    }
}
