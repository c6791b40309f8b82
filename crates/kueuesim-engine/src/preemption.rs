//! Kueue's classical preemption (`pkg/scheduler/preemption/preemption.go`
//! `classicalPreemptions`, `classical/candidate_generator.go`,
//! `classical/hierarchical_preemption.go`, `common/ordering.go`,
//! `common/preemption_policy.go`): which admitted workloads must go so a preemptor fits.
//!
//! A pure function over a scratch `QuotaTree` (left as it was found) and the admitted
//! workloads: it returns the targets as data; the engine evicts them.

use std::cmp::Ordering;

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
    /// Rank of its UID: the last tie-break.
    pub uid_rank: u32,
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
        if !self.uses_contested(c) {
            return None;
        }
        let own = c.cq == self.p.cq;
        let policy = if own {
            self.settings.within_cluster_queue
        } else {
            self.settings.reclaim_within_cohort
        };
        if !satisfies_policy(self.p, c, policy) {
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

/// `CandidatesOrdering` (without the Admission Fair Sharing criterion): evicted first, other
/// ClusterQueues before the preemptor's own, lower priority first, most recently reserved
/// first, then UID.
fn candidates_ordering(a: &Candidate, b: &Candidate, own: ClusterQueueId) -> Ordering {
    b.evicted
        .cmp(&a.evicted)
        .then_with(|| (a.cq == own).cmp(&(b.cq == own)))
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
        if preemptor_fits(tree, p, allow_borrowing) {
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
    for list in [&mut hierarchy, &mut priority, &mut same_queue] {
        list.sort_by(|a, b| candidates_ordering(a.cand, b.cand, p.cq));
    }
    let no_other_queue_candidates = hierarchy.is_empty() && priority.is_empty();
    let no_hierarchy_candidates = hierarchy.is_empty();

    // Global order: each list's evicted prefix (the ordering puts evicted workloads first)
    // before any non-evicted candidate, keeping hierarchy → priority → same-CQ within each half.
    let lists = [&hierarchy, &priority, &same_queue];
    let splits = lists.map(|l| l.partition_point(|e| e.cand.evicted));
    let mut order: Vec<Elem<'_>> = Vec::with_capacity(lists.iter().map(|l| l.len()).sum());
    for (l, &s) in lists.iter().zip(&splits) {
        order.extend_from_slice(&l[..s]);
    }
    for (l, &s) in lists.iter().zip(&splits) {
        order.extend_from_slice(&l[s..]);
    }

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

    for &allow_borrowing in attempts {
        let mark = tree.mark();
        let mut removed: Vec<Elem<'_>> = Vec::new();
        for e in &order {
            if !still_valid(&ctx, tree, e, allow_borrowing) {
                continue;
            }
            remove(tree, e.cand);
            removed.push(*e);
            if preemptor_fits(tree, p, allow_borrowing) {
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
            }
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
                uid_rank: id as u32,
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
}
