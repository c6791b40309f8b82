//! Kueue's fair-sharing preemption (`preemption.go` `fairPreemptions`, `runFirstFsStrategy`,
//! `runSecondFsStrategy`; `fairsharing/{ordering,strategy,target,least_common_ancestor}.go`),
//! on the candidates and quota arithmetic of the classical search in the parent module.

use super::*;

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
                    // Upstream visits child cohorts in random order (`ChildCohorts` lists a
                    // set) and keeps the last of the highest (`>=`), so a tie has no fixed
                    // winner there. Here the one with the greatest name wins, as if they were
                    // visited in name order: the same choice whatever order the scenario
                    // declares its cohorts in.
                    let better = match &best_cohort {
                        None => true,
                        Some((b, bd)) => match drs_compare(&d, bd) {
                            Ordering::Greater => true,
                            Ordering::Equal => cohort_name(world, child) > cohort_name(world, *b),
                            Ordering::Less => false,
                        },
                    };
                    if better {
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

/// The name of cohort node `n` (the tree numbers ClusterQueues first, then cohorts).
fn cohort_name(world: &World, n: NodeIdx) -> &str {
    &world.cohorts[n.0 as usize - world.cluster_queues.len()].name
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
pub(super) fn fair_targets_gated(
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
    let ctx = Ctx::new(world, tree, p);

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
    order::sort_candidates(&mut candidates, |c| *c, p.cq);

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
