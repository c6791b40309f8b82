//! Kueue's classical preemption (`pkg/scheduler/preemption/preemption.go`
//! `classicalPreemptions`, `classical/candidate_generator.go`,
//! `classical/hierarchical_preemption.go`, `common/ordering.go`,
//! `common/preemption_policy.go`): which admitted workloads must go so a preemptor fits.
//!
//! A pure function over a scratch `QuotaTree` (left as it was found) and the admitted
//! workloads: it returns the targets as data; the engine evicts them.
//!
//! Fair-sharing preemption (`fairPreemptions`, `fairsharing/*.go`) is `fair_targets` in `fair.rs`, built on
//! the Dominant Resource Share of `kueuesim_model::fair_sharing`.

use std::cmp::Ordering;
use std::collections::VecDeque;

use kueuesim_model::fair_sharing::{Drs, compare as drs_compare, drs};
use kueuesim_model::quota::{Fr, NodeIdx, QuotaTree};
use kueuesim_model::{ClusterQueueId, Preemption, PreemptionPolicy, SimTime, WorkloadId, World};

mod fair;
mod order;

pub use fair::{FairStrategy, fair_targets};

use crate::admitted::OwnOrder;

use order::candidates_ordering;

/// What `AdmittedWorkloads::priority_usage` calls: a priority and quota held at it, per `Fr`.
pub type QuotaByPriority<'f> = dyn FnMut(i32, &[(Fr, i64)]) + 'f;

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
    /// Every reason, so that a summary counts each, zeros included.
    pub const ALL: [PreemptionReason; 4] = [
        PreemptionReason::InClusterQueue,
        PreemptionReason::InCohortReclamation,
        PreemptionReason::InCohortReclaimWhileBorrowing,
        PreemptionReason::InCohortFairSharing,
    ];

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

    /// The lowest priority among `admitted_in(cq)`, None when there is none: a search whose
    /// policy asks for a lower priority than every one of them passes the ClusterQueue over
    /// without reading its workloads.
    fn lowest_priority(&self, cq: ClusterQueueId) -> Option<i32> {
        self.admitted_in(cq).iter().map(|c| c.priority).min()
    }

    /// The record of `w`, if it holds quota.
    fn candidate(&self, w: WorkloadId) -> Option<&Candidate>;

    /// The quota the workloads of `cq` hold, by priority: `f(priority, usage)` for each
    /// priority or for each workload (summing the calls of one priority gives the same
    /// quota), in any order. A search that cannot succeed is told apart from this without
    /// reading the workloads one by one (`could_fit_bound`).
    fn priority_usage(&self, cq: ClusterQueueId, f: &mut QuotaByPriority<'_>) {
        for c in self.admitted_in(cq) {
            f(c.priority, &c.usage);
        }
    }

    /// The workloads of `cq` kept in `CandidatesOrdering`'s order within one ClusterQueue
    /// (evicted apart, then per priority most recently reserved first), so that the
    /// own-queue search reads the few it takes instead of every workload; None when not
    /// kept (the search then reads `admitted_in`). Given only while no workload has an
    /// Admission Fair Sharing usage, which the ordering compares before the priority.
    fn own_order(&self, _cq: ClusterQueueId) -> Option<OwnOrder<'_>> {
        None
    }
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
    /// `contested[fr]`: whether `fr` needs preemption (a dense set, so membership is O(1)),
    /// built only for a preemptor contesting more than `FEW_CONTESTED` `Fr`s; otherwise
    /// empty, and the preemptor's short list is scanned instead (most searches contest one
    /// `Fr`, and a search under overload is cheap enough that the set's allocation showed).
    contested: Vec<bool>,
}

/// Up to this many contested `Fr`s are looked up in the preemptor's list, not a dense set.
const FEW_CONTESTED: usize = 4;

impl<'p, 'u> Ctx<'p, 'u> {
    /// The preemptor's context: its ClusterQueue's preemption settings and, for many
    /// contested `Fr`s, those as a dense set.
    fn new(world: &World, tree: &QuotaTree, p: &'p Preemptor<'u>) -> Self {
        let mut contested = Vec::new();
        if p.contested.len() > FEW_CONTESTED {
            contested = vec![false; tree.fr_count()];
            for fr in p.contested {
                contested[fr.index()] = true;
            }
        }
        Ctx {
            p,
            settings: world.cluster_queue(p.cq).preemption,
            contested,
        }
    }

    /// `WorkloadUsesResources`: only workloads holding some contested `Fr` can help.
    #[inline]
    fn uses_contested(&self, c: &Candidate) -> bool {
        if self.contested.is_empty() {
            return c.usage.iter().any(|(fr, _)| self.p.contested.contains(fr));
        }
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

/// Whether `policy` can let `p` preempt some workload of a ClusterQueue whose lowest priority
/// is `lowest` (`SatisfiesPreemptionPolicy` below, for the most favourable candidate): false
/// means no workload there satisfies it.
fn policy_may_admit_some(p: &Preemptor<'_>, lowest: Option<i32>, policy: PreemptionPolicy) -> bool {
    let Some(lowest) = lowest else { return false };
    match policy {
        PreemptionPolicy::Never => false,
        PreemptionPolicy::LowerPriority => lowest < p.priority,
        PreemptionPolicy::LowerOrNewerEqualPriority => lowest <= p.priority,
        PreemptionPolicy::Any => true,
    }
}

/// `SatisfiesPreemptionPolicy`: whether `policy` lets `p` preempt `c`.
#[inline]
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
    let policy = ctx.settings.within_cluster_queue;
    if !policy_may_admit_some(ctx.p, admitted.lowest_priority(ctx.p.cq), policy) {
        return Vec::new();
    }
    let all = admitted.admitted_in(ctx.p.cq);
    // Room for every workload at once: a search that gets here usually keeps most of its
    // ClusterQueue's (hundreds under overload), and growing the list by doubling showed.
    let mut out = Vec::with_capacity(all.len());
    // `classify` for a workload of the preemptor's own ClusterQueue, written out: the policy
    // is `withinClusterQueue`'s and the variant `WithinCQ` (this reads every workload of the
    // ClusterQueue, hundreds under overload, for each search that gets this far).
    out.extend(all.iter().filter_map(|c| {
        debug_assert_eq!(c.cq, ctx.p.cq, "admitted_in(cq) holds cq's workloads");
        (satisfies_policy(ctx.p, c, policy) && ctx.uses_contested(c)).then_some(Elem {
            cand: c,
            lca: None,
            variant: Variant::WithinCq,
        })
    }));
    debug_assert!(
        out.iter()
            .all(|e| ctx.classify(e.cand, false) == Some(Variant::WithinCq))
            && out.len()
                == all
                    .iter()
                    .filter(|c| ctx.classify(c, false).is_some())
                    .count(),
        "the same-queue filter is classify's"
    );
    out
}

/// `collectCandidatesForHierarchicalReclaim`: walks from the preemptor's parent cohort to the
/// root, collecting at each level the workloads of the subtree not visited yet. Returns
/// (hierarchy candidates, priority candidates): once some ancestor's subtree absorbs the
/// request, the preemptor has a hierarchical advantage at that level and every level above.
///
/// `priority_unusable`: the caller knows that no attempt can use a priority candidate (each
/// would be `ReclaimWithoutBorrowing`, and only the attempt with borrowing will run), so the
/// levels without the advantage are not collected: the lists upstream would build there are
/// skipped whole by `candidateIsValid`, so leaving them out changes no result.
fn cohort_candidates<'c>(
    ctx: &Ctx<'_, '_>,
    tree: &QuotaTree,
    admitted: &'c impl AdmittedWorkloads,
    priority_unusable: bool,
) -> (Vec<Elem<'c>>, Vec<Elem<'c>>) {
    let mut hierarchy = Vec::new();
    let mut priority = Vec::new();
    cohort_levels(ctx, tree, priority_unusable, |level| {
        let out = if level.advantage {
            &mut hierarchy
        } else {
            &mut priority
        };
        collect_in_subtree(ctx, tree, admitted, level.lca, level, out);
    });
    (hierarchy, priority)
}

/// The walk of `collectCandidatesForHierarchicalReclaim`: each level from the preemptor's
/// parent cohort to the root whose candidates are collected (all but those without the
/// advantage when `priority_unusable`), with whether the preemptor has the hierarchical
/// advantage there.
fn cohort_levels(
    ctx: &Ctx<'_, '_>,
    tree: &QuotaTree,
    priority_unusable: bool,
    mut visit: impl FnMut(Level),
) {
    let cq_node = tree.cq_node(ctx.p.cq);
    if tree.parent(cq_node).is_none()
        || ctx.settings.reclaim_within_cohort == PreemptionPolicy::Never
    {
        return;
    }
    // The usage left to place above each level; usually a few resources, kept on the stack
    // (every preemption search of a ClusterQueue in a cohort comes here).
    let mut on_stack = [(Fr(0), 0i64); 8];
    let mut on_heap: Vec<(Fr, i64)>;
    let remaining: &mut [(Fr, i64)] = if ctx.p.usage.len() <= on_stack.len() {
        let r = &mut on_stack[..ctx.p.usage.len()];
        r.copy_from_slice(ctx.p.usage);
        r
    } else {
        on_heap = ctx.p.usage.to_vec();
        &mut on_heap
    };
    let mut advantage = fits_in_quota(tree, cq_node, remaining);
    let mut previous = None;
    let mut current = tree.parent(cq_node);
    while let Some(node) = current {
        if advantage || !priority_unusable {
            visit(Level {
                lca: node,
                skip: previous,
                advantage,
            });
        }
        advantage |= fits_in_quota(tree, node, remaining);
        previous = Some(node);
        current = tree.parent(node);
    }
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
    subtree_queues(ctx, tree, admitted, current, level, &mut |cq| {
        out.extend(admitted.admitted_in(cq).iter().filter_map(|c| {
            ctx.classify(c, level.advantage).map(|variant| Elem {
                cand: c,
                lca: Some(level.lca),
                variant,
            })
        }));
    });
}

/// The ClusterQueues whose workloads `collectCandidatesInSubtree` reads below `current`, in
/// its order: subtrees and queues within their nominal quota on the contested `Fr`s are
/// pruned, as are queues where the policy can admit no workload.
fn subtree_queues(
    ctx: &Ctx<'_, '_>,
    tree: &QuotaTree,
    admitted: &impl AdmittedWorkloads,
    current: NodeIdx,
    level: Level,
    visit: &mut impl FnMut(ClusterQueueId),
) {
    let within = |n| tree.within_nominal(n, ctx.p.contested);
    // Child cohorts first, then child ClusterQueues, as upstream (the lists are sorted later,
    // so this only matters for exact ties).
    for &child in tree.children(current) {
        if tree.as_cq(child).is_none() && Some(child) != level.skip && !within(child) {
            subtree_queues(ctx, tree, admitted, child, level, visit);
        }
    }
    for &child in tree.children(current) {
        let Some(cq) = tree.as_cq(child) else {
            continue;
        };
        if cq == ctx.p.cq
            || within(child)
            || !policy_may_admit_some(
                ctx.p,
                admitted.lowest_priority(cq),
                ctx.settings.reclaim_within_cohort,
            )
        {
            continue;
        }
        visit(cq);
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

/// Whether `v` more of `fr` in a preemptor's usage can never change a classical search's
/// answer: it fits the ClusterQueue's own quota (no borrowing), within what is available,
/// and what it leaves for each cohort level above fits there too. Such an `Fr` passes
/// `preemptor_fits` with and without borrowing now and after any candidates are removed
/// (a removal only lowers usage, so the ClusterQueue stays within its quota and what is
/// available only grows), and it never takes away the hierarchical advantage `cohort_levels`
/// works out (it fits at every level). A search with it in the usage therefore picks the
/// same targets as one without it: the scheduler's `GetTargets` for a whole assignment whose
/// other resources are like this answers as the flavor assigner's preemption oracle did for
/// the contested one (`SimulatePreemption`), and kueuesim reuses that answer. Classical
/// preemption only: fair sharing weighs every resource of the usage in its shares.
pub(crate) fn usage_is_inert(tree: &QuotaTree, cq: ClusterQueueId, fr: Fr, v: i64) -> bool {
    let node = tree.cq_node(cq);
    if tree.borrowing_with(node, fr, v) || v > tree.available(cq, fr) {
        return false;
    }
    let mut left = v;
    let mut current = Some(node);
    while let Some(n) = current {
        // `fits_in_quota`'s test and carry for this `Fr` alone.
        if tree.subtree_quota(n, fr) < tree.usage(n, fr) + left {
            return false;
        }
        left = (left - tree.local_available(n, fr)).max(0);
        current = tree.parent(n);
    }
    true
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
    let all = || lists.iter().flat_map(|l| l.iter());
    // First what an attempt with borrowing may use (all but `ReclaimWithoutBorrowing`), then
    // the rest, which only an attempt without borrowing may use.
    remove_summed(
        tree,
        all()
            .filter(|e| e.variant != Variant::ReclaimWithoutBorrowing)
            .map(|e| e.cand),
    );
    let mut fits = attempts.contains(&true)
        && workload_fits(tree, p, true, || {
            all()
                .filter(|e| e.variant != Variant::ReclaimWithoutBorrowing)
                .map(|e| e.cand.workload)
                .collect()
        });
    if !fits && attempts.contains(&false) {
        remove_summed(
            tree,
            all()
                .filter(|e| e.variant == Variant::ReclaimWithoutBorrowing)
                .map(|e| e.cand),
        );
        fits = workload_fits(tree, p, false, || all().map(|e| e.cand.workload).collect());
    }
    tree.rollback_to(mark);
    fits
}

/// Whether `policy` may let `p` preempt a workload of `priority` (`SatisfiesPreemptionPolicy`
/// without the timestamp: an equal priority counts under `LowerOrNewerEqualPriority`).
fn policy_may_take(p: &Preemptor<'_>, priority: i32, policy: PreemptionPolicy) -> bool {
    policy_may_admit_some(p, Some(priority), policy)
}

/// An upper bound of `could_fit` read from each ClusterQueue's quota per priority
/// (`AdmittedWorkloads::priority_usage`) instead of from the candidates one by one. Every
/// workload `could_fit` would remove is removed here too, in the same attempt (those an
/// attempt with borrowing may use, then the `ReclaimWithoutBorrowing` ones), along with some
/// it would not: an equal priority's older workloads under `LowerOrNewerEqualPriority`, workloads
/// holding no contested `Fr`, and the attempt without borrowing even when only the one with
/// borrowing runs. Removing more never takes room away, and the TAS half of `workloadFits` is
/// taken to pass, so when this says no, so does `could_fit` (debug builds check it). Under
/// overload most searches that get this far end here, without reading hundreds of candidates.
///
/// It also tells when its answer is `could_fit`'s exactly (`Bound::Fits`): the attempt with
/// borrowing fits (every attempt list holds it, and `could_fit` tries it first) and, on the
/// `Fr`s `preemptor_fits` reads, this removed just what `could_fit` removes for it. That holds
/// when the preemptor has no TAS pod sets, every `Fr` of its usage is contested (so a workload
/// that uses no contested `Fr` holds none of them, and what else either removes is in columns
/// nobody reads: a removal touches its `Fr`'s column only), the within-ClusterQueue policy
/// reads the priority alone (`LowerPriority`, `Any`, `Never`: `policy_may_take` then is
/// `satisfies_policy`), and no other ClusterQueue's quota was removed for the attempt (the
/// candidates `could_fit` takes there are among those, so it takes none either). Under
/// overload that is most searches past the bound: a ClusterQueue at its borrowing limit
/// preempting its own lower-priority work.
fn could_fit_bound(
    ctx: &Ctx<'_, '_>,
    tree: &mut QuotaTree,
    admitted: &impl AdmittedWorkloads,
    only_with_borrowing: bool,
    scratch: &mut SearchScratch,
) -> Bound {
    let p = ctx.p;
    // (ClusterQueue, Fr, amount) to remove for the attempt with borrowing, and the
    // `ReclaimWithoutBorrowing` rest for the one without.
    let with_borrowing = &mut scratch.with_borrowing;
    let without_borrowing = &mut scratch.without_borrowing;
    with_borrowing.clear();
    without_borrowing.clear();
    let within = ctx.settings.within_cluster_queue;
    if policy_may_admit_some(p, admitted.lowest_priority(p.cq), within) {
        admitted.priority_usage(p.cq, &mut |priority, usage| {
            if policy_may_take(p, priority, within) {
                with_borrowing.extend(usage.iter().map(|&(fr, a)| (p.cq, fr, a)));
            }
        });
    }
    let own_only = with_borrowing.len();
    let reclaim = ctx.settings.reclaim_within_cohort;
    let forbidden = ctx.borrow_within_cohort_forbidden();
    let threshold = ctx.settings.borrow_max_priority_threshold;
    let tree_ref: &QuotaTree = tree;
    cohort_levels(ctx, tree_ref, only_with_borrowing, |level| {
        subtree_queues(ctx, tree_ref, admitted, level.lca, level, &mut |cq| {
            admitted.priority_usage(cq, &mut |priority, usage| {
                if !policy_may_take(p, priority, reclaim) {
                    return;
                }
                // `classify`'s variant, which reads only the level and the priority.
                let without_only = !level.advantage
                    && (forbidden
                        || priority >= p.priority
                        || threshold.is_some_and(|t| priority > t));
                let out = if without_only {
                    &mut *without_borrowing
                } else {
                    &mut *with_borrowing
                };
                out.extend(usage.iter().map(|&(fr, a)| (cq, fr, a)));
            });
        });
    });
    let mark = tree.mark();
    for &(cq, fr, amount) in with_borrowing.iter() {
        tree.remove_usage(tree.cq_node(cq), fr, amount);
    }
    let fits_with_borrowing = preemptor_fits(tree, p, true);
    let mut fits = fits_with_borrowing;
    if !fits && !only_with_borrowing {
        for &(cq, fr, amount) in without_borrowing.iter() {
            tree.remove_usage(tree.cq_node(cq), fr, amount);
        }
        fits = preemptor_fits(tree, p, false);
    }
    tree.rollback_to(mark);
    let exact = p.topology.is_none()
        && p.usage.iter().all(|(fr, _)| p.contested.contains(fr))
        && within != PreemptionPolicy::LowerOrNewerEqualPriority
        && with_borrowing.len() == own_only;
    if fits_with_borrowing && exact {
        Bound::Fits
    } else if fits {
        Bound::MayFit
    } else {
        Bound::CannotFit
    }
}

/// What `could_fit_bound` tells of `could_fit`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bound {
    /// `could_fit` is false.
    CannotFit,
    /// `could_fit` may be either.
    MayFit,
    /// `could_fit` is true.
    Fits,
}

/// Whether the classical search can have no candidate at all, read without collecting
/// any: no workload of the preemptor's own ClusterQueue satisfies `withinClusterQueue` (by
/// its lowest priority, as `collectSameQueueCandidates` starts), and the walk of
/// `collectCandidatesForHierarchicalReclaim` visits no level (`cohort_levels`: no cohort,
/// `reclaimWithinCohort: Never`, or, with `priority_unusable`, no hierarchical advantage on
/// the way up). Then the candidate lists are empty and so is the answer, whatever the
/// quota. In the million this is most searches of the run: a head whose priority is at or
/// below the lowest admitted in its ClusterQueue (`withinClusterQueue: LowerPriority`), with
/// borrowWithinCohort off, at or above nominal on a contested resource, and a request that
/// fits in no subtree on the way up.
fn no_candidates_possible(
    ctx: &Ctx<'_, '_>,
    tree: &QuotaTree,
    admitted: &impl AdmittedWorkloads,
    priority_unusable: bool,
) -> bool {
    let within = ctx.settings.within_cluster_queue;
    if policy_may_admit_some(ctx.p, admitted.lowest_priority(ctx.p.cq), within) {
        return false;
    }
    let mut any_level = false;
    cohort_levels(ctx, tree, priority_unusable, |_| any_level = true);
    !any_level
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

/// Takes the quota of all `cands` out of the tree, as `remove` on each would, with one
/// removal per ClusterQueue and `Fr` for each run of candidates of the same ClusterQueue (the
/// lists are collected queue by queue). Removals compose: taking `a` then `b` from a node
/// leaves every ancestor as taking `a + b` at once (each level passes up
/// `min(amount, stored in parent)`, and `min(a, s) + min(b, max(s - a, 0)) = min(a + b, s)`).
fn remove_summed<'c>(tree: &mut QuotaTree, cands: impl Iterator<Item = &'c Candidate>) {
    let mut run: Option<ClusterQueueId> = None;
    let mut sums: Vec<(Fr, i64)> = Vec::new();
    let flush = |tree: &mut QuotaTree, cq: Option<ClusterQueueId>, sums: &mut Vec<(Fr, i64)>| {
        if let Some(cq) = cq {
            let node = tree.cq_node(cq);
            for &(fr, amount) in sums.iter() {
                tree.remove_usage(node, fr, amount);
            }
        }
        sums.clear();
    };
    for c in cands {
        if run != Some(c.cq) {
            flush(tree, run, &mut sums);
            run = Some(c.cq);
        }
        for &(fr, amount) in &c.usage {
            match sums.iter_mut().find(|s| s.0 == fr) {
                Some(s) => s.1 += amount,
                None => sums.push((fr, amount)),
            }
        }
    }
    flush(tree, run, &mut sums);
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
    classical_targets_with(world, tree, admitted, p, &mut SearchScratch::default())
}

/// The vectors a classical search fills and empties, kept by a caller that searches often
/// (the flavor assigner asks for every head that needs preemption) for their capacity.
#[derive(Default)]
pub struct SearchScratch {
    /// `could_fit_bound`'s (ClusterQueue, Fr, amount) to remove for the attempt with
    /// borrowing, and the rest for the one without.
    with_borrowing: Vec<(ClusterQueueId, Fr, i64)>,
    without_borrowing: Vec<(ClusterQueueId, Fr, i64)>,
    /// Whether the last classical search ended because no workload could be a candidate
    /// (`no_candidates_possible`), so that its caller can carry that verdict over.
    pub(crate) none_possible: bool,
}

/// `classical_targets` with the caller's scratch vectors.
pub fn classical_targets_with(
    world: &World,
    tree: &mut QuotaTree,
    admitted: &impl AdmittedWorkloads,
    p: &Preemptor<'_>,
    scratch: &mut SearchScratch,
) -> Vec<Target> {
    scratch.none_possible = false;
    // A ClusterQueue in a cohort cycle is inactive; its walk to the root would not end.
    if tree.in_cycle(p.cq) {
        return Vec::new();
    }
    let ctx = Ctx::new(world, tree, p);

    // Which `allowBorrowing` attempts to make, and in which order. With borrowing allowed the
    // preemptor may end up borrowing but `ReclaimWithoutBorrowing` candidates are skipped;
    // without it those are usable but the preemptor must end within nominal. Upstream keeps
    // "false first" only when borrowWithinCohort is off and there are no hierarchy candidates,
    // for compatibility with older releases.
    let forbidden = ctx.borrow_within_cohort_forbidden();
    // With borrowWithinCohort off and the preemptor's ClusterQueue at or above nominal on a
    // contested `Fr`, only the attempt with borrowing runs, whatever the lists hold, and every
    // priority candidate is `ReclaimWithoutBorrowing` (not valid in it): they need not be
    // collected. Under overload this is most searches, and most of their cost.
    let only_with_borrowing = forbidden && !under_nominal_on_contested(tree, p);
    // No workload can be a candidate: both lists come out empty, and the answer is no
    // targets whatever the bound says. Tests (debug builds) go on to check it on the lists.
    let none_possible = no_candidates_possible(&ctx, tree, admitted, only_with_borrowing);
    scratch.none_possible = none_possible;
    if none_possible && !cfg!(debug_assertions) {
        return Vec::new();
    }
    // Tests (debug builds) go on to check the bound against the search it spares.
    let bound = could_fit_bound(&ctx, tree, admitted, only_with_borrowing, scratch);
    if bound == Bound::CannotFit && !cfg!(debug_assertions) {
        return Vec::new();
    }

    let (hierarchy, priority) = cohort_candidates(&ctx, tree, admitted, only_with_borrowing);
    let no_other_queue_candidates = hierarchy.is_empty() && priority.is_empty();
    // Only the preemptor's own ClusterQueue has candidates and the bound knows a preemption
    // is possible (`Bound::Fits`, so `could_fit` is not asked): the search reads the
    // ClusterQueue's workloads in order without the same-queue list (`OwnQueueOrder`), with
    // the one attempt the lists' emptiness leaves (with borrowing). Under overload that is
    // most searches that find targets: a ClusterQueue at its borrowing limit preempting its
    // own lower-priority work. Tests (debug builds) go on to check it against the search
    // over the lists.
    let own_queue_targets = if no_other_queue_candidates && bound == Bound::Fits {
        order::OwnQueueOrder::new(&ctx, admitted, admitted.lowest_priority(p.cq))
            .map(|mut order| search_in(&ctx, tree, |i| order.get(i), &[true]))
    } else {
        None
    };
    let own_queue_targets = match own_queue_targets {
        Some(targets) if !cfg!(debug_assertions) => return targets,
        other => other,
    };
    let same_queue = same_queue_candidates(&ctx, admitted);
    let no_hierarchy_candidates = hierarchy.is_empty();
    debug_assert!(
        !none_possible || (no_other_queue_candidates && same_queue.is_empty()),
        "no_candidates_possible said no candidate, the lists hold some"
    );
    let attempts: &[bool] = if no_other_queue_candidates || only_with_borrowing {
        &[true]
    } else if forbidden && no_hierarchy_candidates {
        &[false, true]
    } else {
        &[true, false]
    };

    // Release builds returned the own-queue search's targets above, so only tests (debug
    // builds) get here with them.
    let own_queue_agrees =
        |targets: &[Target]| own_queue_targets.as_ref().is_none_or(|own| own == targets);
    // No candidate anywhere: the removal loop has nothing to take, so there are no targets
    // whatever the quota says. Under overload most searches end here (a ClusterQueue above
    // its nominal quota, with borrowWithinCohort off and no hierarchical advantage).
    if no_other_queue_candidates && same_queue.is_empty() {
        debug_assert!(own_queue_agrees(&[]), "the own-queue search found targets");
        return Vec::new();
    }
    let lists = [&hierarchy, &priority, &same_queue];
    // Tests (debug builds) check the bound's exact answer against `could_fit`.
    let possible = if bound == Bound::Fits && !cfg!(debug_assertions) {
        true
    } else {
        could_fit(tree, p, &lists, attempts)
    };
    assert!(
        bound != Bound::CannotFit || !possible,
        "could_fit_bound ruled out a preemption could_fit allows"
    );
    assert!(
        bound != Bound::Fits || possible,
        "could_fit_bound's exact answer differs from could_fit's"
    );
    // Tests (debug builds) check the shortcut against the search it spares.
    if !possible && !cfg!(debug_assertions) {
        return Vec::new();
    }
    let targets = search(&ctx, tree, [hierarchy, priority, same_queue], attempts);
    assert!(
        possible || targets.is_empty(),
        "could_fit ruled out a preemption the search found"
    );
    debug_assert!(
        own_queue_agrees(&targets),
        "the search over the own ClusterQueue in order differs from the lists' search"
    );
    targets
}

/// The removal loop of `classicalPreemptions` over the candidate lists in their global order:
/// per attempt, take valid candidates in order until the preemptor fits, then
/// `fillBackWorkloads`.
fn search(
    ctx: &Ctx<'_, '_>,
    tree: &mut QuotaTree,
    lists: [Vec<Elem<'_>>; 3],
    attempts: &[bool],
) -> Vec<Target> {
    let mut order = order::GlobalOrder::new(lists, ctx.p.cq);
    search_in(ctx, tree, |i| order.get(i), attempts)
}

/// `search` over candidates read in the global order from `candidate` (the `i`-th, None past
/// the last).
fn search_in<'c>(
    ctx: &Ctx<'_, '_>,
    tree: &mut QuotaTree,
    mut candidate: impl FnMut(usize) -> Option<Elem<'c>>,
    attempts: &[bool],
) -> Vec<Target> {
    let p = ctx.p;
    for &allow_borrowing in attempts {
        let mark = tree.mark();
        let mut removed: Vec<Elem<'_>> = Vec::new();
        let mut i = 0;
        while let Some(e) = candidate(i) {
            i += 1;
            if !still_valid(ctx, tree, &e, allow_borrowing) {
                continue;
            }
            remove(tree, e.cand);
            removed.push(e);
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

#[cfg(test)]
mod tests;
