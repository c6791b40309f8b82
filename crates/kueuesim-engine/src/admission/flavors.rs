//! Flavor assignment (`flavorassigner.go`): for one workload in one ClusterQueue, a flavor per
//! resource group under the ClusterQueue's flavor fungibility, with the preemption oracle and
//! Kueue TAS's topology assignment.

use kueuesim_model::quota::{Fr, QuotaTree};
use kueuesim_model::{
    ClusterQueueId, FlavorFungibility, FlavorId, FungibilityPolicy, FungibilityPreference,
    PreemptionPolicy, ResourceGroup, ResourceId, ResourceList, TopologyRequest, Workload,
    WorkloadId, World,
};

use crate::bound::Constraint;
use crate::outcome::PodSetAssignment;
use crate::preemption::{
    AdmittedWorkloads, FairStrategy, Preemptor, SearchScratch, Target, classical_targets_with,
    fair_targets,
};
use crate::queues::QueueKey;
use crate::tas::{TasCapacity, TasMode, TopologyAssignment};

use super::messages::{
    Attempt, MESSAGE_CAPACITY, Reason, Unfit, considered_message, most_severe,
    resolve_no_fit_reason, sort_reasons,
};
use super::pod_set_fit::{
    flavor_mismatch, merge_usage, quota_requests, quota_requests_into, tas_mismatch, tas_request,
};
use super::{
    Assignment, Decision, Mode, REASON_EXCEEDS_MAX_QUOTA, REASON_NO_MATCHING_FLAVOR,
    REASON_TOPOLOGY_PLACEMENT_FAILED, REASON_WAITING_FOR_QUOTA, ScanProgress,
};

/// `preemptionMode` of the flavor assigner, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum PMode {
    NoFit,
    /// Preemption would be needed but the simulation found no candidates.
    NoCandidates,
    /// Preemption with at least one target in the workload's own ClusterQueue.
    Preempt,
    /// Preemption with every target in other ClusterQueues.
    Reclaim,
    Fit,
}

/// `granularMode`: preemption mode and borrowing level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Granular {
    pub(super) mode: PMode,
    pub(super) borrow: u32,
}

pub(super) const WORST: Granular = Granular {
    mode: PMode::NoFit,
    borrow: u32::MAX,
};

pub(super) const BEST: Granular = Granular {
    mode: PMode::Fit,
    borrow: 0,
};

/// `isPreferred`: whether `a` is better than `b` under the ClusterQueue's fungibility.
pub(super) fn is_preferred(a: Granular, b: Granular, f: &FlavorFungibility) -> bool {
    if a.mode == PMode::NoFit {
        return false;
    }
    if b.mode == PMode::NoFit {
        return true;
    }
    // A flavor without preemption candidates cannot admit in this attempt: it ranks below
    // every viable mode whatever the preference.
    let (a_none, b_none) = (a.mode == PMode::NoCandidates, b.mode == PMode::NoCandidates);
    if a_none != b_none {
        return !a_none;
    }
    match f.preference {
        FungibilityPreference::BorrowingOverPreemption => {
            if a.mode != b.mode {
                a.mode > b.mode
            } else {
                a.borrow < b.borrow
            }
        }
        FungibilityPreference::PreemptionOverBorrowing => {
            if a.borrow != b.borrow {
                a.borrow < b.borrow
            } else {
                a.mode > b.mode
            }
        }
    }
}

/// `shouldTryNextFlavor`.
pub(super) fn should_try_next(m: Granular, f: &FlavorFungibility) -> bool {
    matches!(m.mode, PMode::NoFit | PMode::NoCandidates)
        || (matches!(m.mode, PMode::Preempt | PMode::Reclaim)
            && f.when_can_preempt == FungibilityPolicy::TryNextFlavor)
        || (m.borrow > 0 && f.when_can_borrow == FungibilityPolicy::TryNextFlavor)
}

/// What the scheduler knows of the workload being assigned.
pub(super) struct Subject<'a> {
    pub(super) workload: WorkloadId,
    pub(super) wl: &'a Workload,
    pub(super) cq: ClusterQueueId,
    pub(super) priority: i32,
    pub(super) key: QueueKey,
}

/// `into.extend(from)`, taking `from` whole when `into` is empty (one resource group per
/// pod set, the common case, then moves no element and allocates nothing).
fn append<T>(into: &mut Vec<T>, mut from: Vec<T>) {
    if into.is_empty() {
        *into = from;
    } else {
        into.append(&mut from);
    }
}

/// The outcome of `find_flavor` for one resource group.
struct GroupChoice {
    /// Whether a flavor was chosen: then `Scratch::best` holds (resource, flavor, mode,
    /// borrowing level) per requested resource of the group.
    found: bool,
    /// For a chosen flavor, the index of the last flavor the scan tried, or -1 when that
    /// was the group's last (`TriedFlavorIdx`).
    tried: i32,
    /// Reasons to report when the choice is not a plain fit.
    reasons: Vec<Reason>,
    attempts: Vec<Attempt>,
}

/// The flavor assigner for one workload in one ClusterQueue (`FlavorAssigner`).
pub(super) struct FlavorAssigner<'a, A: AdmittedWorkloads> {
    pub(super) world: &'a World,
    pub(super) tree: &'a mut QuotaTree,
    pub(super) admitted: &'a A,
    pub(super) subject: Subject<'a>,
    /// What Kueue's TAS cache sees of the nodes.
    pub(super) tas: &'a TasCapacity,
    /// Whether the preemption oracle searched for this workload (its last search is then
    /// `scratch.oracle`). When the scheduler then asks `getTargets` for exactly that usage (a
    /// one-resource workload, the common case) on the unchanged snapshot, the answer is the
    /// same, so it is reused.
    pub(super) searched: bool,
    /// The workload's flavor-scan progress from earlier attempts, if still current
    /// (`wl.LastAssignment` after `lastAssignmentOutdated`): each group's scan resumes after
    /// the flavor it last tried.
    pub(super) last: Option<&'a ScanProgress>,
    /// When an assignment is recomputed because preemption targets overlap
    /// (`RecomputeAssignmentUponPreemptionTargetsOverlap`): the flavors of the first
    /// assignment, per pod set (`NominationMapping`). Every other flavor is skipped
    /// (`shouldSkipBasedOnNominationMapping`), so the recomputation cannot switch flavors.
    pub(super) pin: Option<&'a [PodSetAssignment]>,
    /// The cycle's reusable vectors.
    pub(super) scratch: &'a mut Scratch,
}

/// Vectors `assign` refills on every call instead of allocating new ones: one set for the
/// whole run (`CycleScratch`), lent to each cycle and to each head's assigner in turn (an
/// overloaded cycle assigns thousands of heads; a million-workload run has millions of
/// cycles of one head each, which would otherwise grow these vectors afresh every time).
/// Nothing is carried from one use to the next but the vectors' capacity.
#[derive(Default)]
pub struct Scratch {
    /// A pod set's requested resources, in name order.
    pub(super) resources: Vec<(ResourceId, i64)>,
    /// Those of them one resource group covers.
    requested: Vec<(ResourceId, i64)>,
    /// `find_flavor`'s choice for the flavor being tried, and the best so far (swapped when
    /// it becomes the best): refilled for every group instead of a vector per flavor.
    chosen: Vec<(ResourceId, FlavorId, PMode, u32)>,
    best: Vec<(ResourceId, FlavorId, PMode, u32)>,
    /// `assign`'s choices for the pod set at hand.
    pub(super) flavors: Vec<(ResourceId, FlavorId, PMode, u32)>,
    /// The pod set's requests as counted against quota (`quota_requests`).
    pub(super) totals: ResourceList,
    /// `assign`'s flavor attempts per pod set (its index), for the QuotaReserved event.
    considered: Vec<(usize, Vec<Attempt>)>,
    /// The vectors of assignments the cycle dropped, for the next ones.
    pub(super) pools: Pools,
    /// The preemption oracle's last search for the workload at hand (valid while
    /// `FlavorAssigner::searched`): refilled rather than allocated for every head.
    pub(super) oracle: OracleSearch,
    /// The classical preemption search's vectors.
    pub(super) search: SearchScratch,
    /// The cycle's entries and its decisions, empty between cycles (the decisions come back
    /// through `give_decisions` once applied).
    pub(super) entries: Vec<Option<super::cycle::Entry>>,
    pub(super) order: Vec<u32>,
    pub(super) decisions: Vec<Decision>,
    /// The id of the `pods` resource in the world (`ResourceTable::lookup`, a search by name
    /// that every head's quota requests made), once looked up. A scratch serves one
    /// simulation, whose world does not change; debug builds check it against the lookup.
    pods: Option<Option<ResourceId>>,
    /// Each resource's rank in name order, by resource id, once worked out (`name_ranks`).
    name_rank: Vec<u32>,
}

/// The vectors of dropped assignments, emptied, handed to the next ones (`Scratch::recycle`):
/// under overload a cycle drops nearly every assignment it makes (a head that does not fit
/// is requeued with its message), millions in a run, each holding a handful of small vectors.
#[derive(Default)]
pub(super) struct Pools {
    pub(super) usage: Vec<Vec<(Fr, i64)>>,
    pub(super) frs: Vec<Vec<Fr>>,
    pub(super) pod_sets: Vec<Vec<PodSetAssignment>>,
    pub(super) flavors: Vec<Vec<(ResourceId, FlavorId)>>,
    pub(super) reasons: Vec<Vec<Reason>>,
    pub(super) per_pod_set: Vec<Vec<(usize, Vec<Reason>)>>,
    attempts: Vec<Vec<Attempt>>,
    /// A scan progress's outer and per-pod-set vectors (`ScanProgress::last_tried`).
    pub(super) scans: Vec<Vec<Vec<(ResourceId, i32)>>>,
    pub(super) tried: Vec<Vec<(ResourceId, i32)>>,
    /// Emptied message strings (`Scratch::take_string`).
    strings: Vec<String>,
}

/// At most this many emptied vectors of a kind are kept (a cycle holds a few per head).
const POOL_MAX: usize = 64;

/// An emptied vector from `pool`, or a new one.
pub(super) fn take<T>(pool: &mut Vec<Vec<T>>) -> Vec<T> {
    pool.pop().unwrap_or_default()
}

/// Empties `v` into `pool` if it holds memory and the pool has room.
pub(super) fn give<T>(pool: &mut Vec<Vec<T>>, mut v: Vec<T>) {
    if v.capacity() > 0 && pool.len() < POOL_MAX {
        v.clear();
        pool.push(v);
    }
}

impl Pools {
    fn give_attempts(&mut self, mut attempts: Vec<Attempt>) {
        for a in attempts.drain(..) {
            give(&mut self.reasons, a.reasons);
        }
        give(&mut self.attempts, attempts);
    }

    pub(super) fn give_per_pod_set(&mut self, mut per_pod_set: Vec<(usize, Vec<Reason>)>) {
        for (_, reasons) in per_pod_set.drain(..) {
            give(&mut self.reasons, reasons);
        }
        give(&mut self.per_pod_set, per_pod_set);
    }
}

impl Scratch {
    /// The id of the `pods` resource (see `pods`).
    pub(super) fn pods_resource(&mut self, world: &World) -> Option<ResourceId> {
        *self
            .pods
            .get_or_insert_with(|| world.resources.lookup("pods"))
    }

    /// Each resource's rank in name order, by resource id: a pod set's requests are sorted
    /// by name for every head (as Kueue iterates them), and ranks compare without reading
    /// the names. Names are unique, so the ranks order the ids exactly as the names do.
    /// Worked out once; a scratch serves one simulation, whose world does not change.
    pub(super) fn name_ranks(&mut self, world: &World) -> &[u32] {
        let table = &world.resources;
        if self.name_rank.len() != table.len() {
            let mut ids: Vec<ResourceId> = (0..table.len()).map(ResourceId::from_index).collect();
            ids.sort_by(|&a, &b| table.name(a).cmp(table.name(b)));
            self.name_rank = vec![0; ids.len()];
            for (rank, id) in ids.into_iter().enumerate() {
                self.name_rank[id.index()] = rank as u32;
            }
        }
        &self.name_rank
    }

    /// Takes back a cycle's decisions vector once every decision in it is applied.
    pub fn give_decisions(&mut self, mut decisions: Vec<Decision>) {
        decisions.clear();
        if decisions.capacity() > self.decisions.capacity() {
            self.decisions = decisions;
        }
    }

    /// An empty string for a message: a recycled one (`give_string`), or a new one with room
    /// for the usual one-reason message, so that it is written without growing.
    pub fn take_string(&mut self) -> String {
        self.pools
            .strings
            .pop()
            .unwrap_or_else(|| String::with_capacity(MESSAGE_CAPACITY))
    }

    /// Takes back a message string nothing holds any more (a condition's or event's message
    /// that a newer one replaced), for the next message.
    pub fn give_string(&mut self, mut s: String) {
        if s.capacity() >= MESSAGE_CAPACITY && self.pools.strings.len() < POOL_MAX {
            s.clear();
            self.pools.strings.push(s);
        }
    }

    /// Takes back the vectors of a workload's scan progress that a newer one replaced
    /// (`LastAssignment`), for the next assignments to fill.
    pub fn recycle_scan(&mut self, mut last_tried: Vec<Vec<(ResourceId, i32)>>) {
        let p = &mut self.pools;
        for tried in last_tried.drain(..) {
            give(&mut p.tried, tried);
        }
        give(&mut p.scans, last_tried);
    }

    /// Takes back the vectors of an assignment the cycle is done with (its scan progress
    /// moved out first), for the next assignments to fill.
    pub(super) fn recycle(&mut self, a: Assignment) {
        let p = &mut self.pools;
        give(&mut p.usage, a.usage);
        give(&mut p.frs, a.contested);
        let mut pod_sets = a.pod_sets;
        for ps in pod_sets.drain(..) {
            give(&mut p.flavors, ps.flavors);
        }
        give(&mut p.pod_sets, pod_sets);
        if let Some(unfit) = a.not_admitted {
            p.give_per_pod_set(unfit.pod_sets);
        }
        self.give_string(a.considered);
    }
}

/// A copy starts empty: only capacity would be copied, and a cloned simulation (a fork)
/// grows its own.
impl Clone for Scratch {
    fn clone(&self) -> Self {
        Scratch::default()
    }
}

/// A search the preemption oracle (`SimulatePreemption`) made, and its answer.
#[derive(Default)]
pub(super) struct OracleSearch {
    pub(super) usage: Vec<(Fr, i64)>,
    pub(super) contested: Vec<Fr>,
    pub(super) targets: Vec<Target>,
    /// Whether the search ended because no workload could be a candidate
    /// (`SearchScratch::none_possible`).
    pub(super) none_possible: bool,
}

impl<A: AdmittedWorkloads> FlavorAssigner<'_, A> {
    pub(super) fn preemptor<'u>(
        &self,
        usage: &'u [(Fr, i64)],
        contested: &'u [Fr],
    ) -> Preemptor<'u> {
        Preemptor {
            workload: self.subject.workload,
            cq: self.subject.cq,
            priority: self.subject.priority,
            timestamp: self.subject.key.timestamp,
            usage,
            contested,
            topology: None,
        }
    }

    /// `canPreemptWhileBorrowing` (classical: `borrowWithinCohort` allows it).
    fn can_preempt_while_borrowing(&self) -> bool {
        let preemption = self.world.cluster_queue(self.subject.cq).preemption;
        preemption.borrow_within_cohort != PreemptionPolicy::Never
            || (self.world.config.kueue.fair_sharing.is_some()
                && preemption.reclaim_within_cohort != PreemptionPolicy::Never)
    }

    /// `fitsResourceQuota`: the mode of `request` more of `fr` on top of `assumed` already
    /// assigned to earlier pod sets, its borrowing level, and the reason when it does not fit
    /// (as data: most are never worded).
    pub(super) fn fits_resource_quota(
        &mut self,
        fr: Fr,
        assumed: i64,
        request: i64,
    ) -> (PMode, u32, Option<Reason>, &'static str) {
        let cq = self.subject.cq;
        let available = self.tree.available(cq, fr);
        let max_capacity = self.tree.potential_available(self.tree.cq_node(cq), fr);
        let val = assumed + request;
        // The flavor and resource name a reason: a resource that fits (most) needs neither.
        if val > max_capacity {
            let (flavor, resource) = self.tree.split(fr);
            let msg = Reason::ExceedsMax {
                flavor,
                resource,
                assumed,
                request,
                max: max_capacity,
            };
            return (PMode::NoFit, 0, Some(msg), REASON_EXCEEDS_MAX_QUOTA);
        }
        let (borrow, may_reclaim) = self.tree.height_of_lowest_subtree_that_fits(cq, fr, val);
        if val <= available {
            return (PMode::Fit, borrow, None, "");
        }
        let (flavor, resource) = self.tree.split(fr);
        let msg = Reason::Unused {
            flavor,
            resource,
            needed: val - available,
            requested: val,
        };
        let nominal = self.tree.nominal(self.tree.cq_node(cq), fr);
        if nominal >= val || may_reclaim || self.can_preempt_while_borrowing() {
            // The preemption oracle (`SimulatePreemption`): the real algorithm, for this Fr.
            let usage = [(fr, val)];
            let contested = [fr];
            let p = self.preemptor(&usage, &contested);
            let targets = preemption_targets(
                self.world,
                self.tree,
                self.admitted,
                &p,
                &mut self.scratch.search,
            );
            // The previous search's vectors are refilled rather than allocated again: a
            // head's flavors and partial-admission attempts each ask the oracle.
            self.searched = true;
            let search = &mut self.scratch.oracle;
            search.usage.clear();
            search.usage.extend_from_slice(&usage);
            search.contested.clear();
            search.contested.extend_from_slice(&contested);
            search.targets.clone_from(&targets);
            search.none_possible = self.scratch.search.none_possible;
            if targets.is_empty() {
                return (PMode::NoCandidates, borrow, Some(msg), "");
            }
            let mark = self.tree.mark();
            self.remove_targets(&targets);
            let (borrow_after, _) = self.tree.height_of_lowest_subtree_that_fits(cq, fr, val);
            self.tree.rollback_to(mark);
            let own = targets.iter().any(|t| {
                self.admitted
                    .candidate(t.workload)
                    .is_some_and(|c| c.cq == cq)
            });
            let mode = if own { PMode::Preempt } else { PMode::Reclaim };
            return (mode, borrow_after, Some(msg), "");
        }
        (PMode::NoFit, borrow, Some(msg), REASON_WAITING_FOR_QUOTA)
    }

    /// Removes the usage of `targets` from the tree (inside a caller's mark).
    fn remove_targets(&mut self, targets: &[Target]) {
        remove_workloads(
            self.tree,
            self.admitted,
            self.world,
            targets.iter().map(|t| t.workload),
        );
    }

    /// `findFlavorForPodSets` for one resource group of pod set `ps`, reached through its
    /// requested resource `r`.
    /// `tas_req` is the pod set's `tas_request` on the ClusterQueue.
    fn find_flavor(
        &mut self,
        ps: usize,
        r: ResourceId,
        group: &ResourceGroup,
        requested: &[(ResourceId, i64)],
        assigned: &[(Fr, i64)],
        tas_req: Option<&TopologyRequest>,
    ) -> GroupChoice {
        let fung = self.world.cluster_queue(self.subject.cq).flavor_fungibility;
        let mut found = false;
        let mut best = std::mem::take(&mut self.scratch.best);
        best.clear();
        let mut chosen = std::mem::take(&mut self.scratch.chosen);
        let mut best_mode = WORST;
        // The group's reasons are its attempts' reasons, in order, but for the flavors a
        // nomination mapping skips (no attempt is made for them). Without a mapping they are
        // taken from the attempts at the end instead of copied as they come (this runs for
        // every head of every cycle).
        let pinned = self.pin.is_some();
        let mut reasons = take(&mut self.scratch.pools.reasons);
        let mut attempts = take(&mut self.scratch.pools.attempts);
        // The scan resumes after the flavor the last attempt ended on
        // (`NextFlavorToTryForPodSetResource`), so a workload that stopped at a flavor it
        // could not use tries the next one rather than the same one again.
        let start = self.last.map_or(0, |l| l.next_flavor(ps, r));
        let mut attempted: i32 = -1;
        for (idx, fq) in group.flavors.iter().enumerate().skip(start) {
            attempted = idx as i32;
            if let Some(pin) = self.pin
                && pin
                    .get(ps)
                    .is_none_or(|p| !p.flavors.contains(&(r, fq.flavor)))
            {
                let (fname, rname) = (
                    &self.world.flavor(fq.flavor).name,
                    self.world.resources.name(r),
                );
                reasons.push(Reason::Text(None, format!(
                    "skipping flavor {fname} as it is not found in the nomination mapping for resource {rname}"
                )));
                continue;
            }
            let mismatch = flavor_mismatch(self.world, fq.flavor, self.subject.wl, ps)
                .or_else(|| tas_mismatch(self.world, fq.flavor, tas_req));
            // A flavor that does not match the workload holds nothing back: another may.
            if let Some(why) = mismatch.map(|m| Reason::Text(None, m)) {
                if pinned {
                    reasons.push(why.clone());
                }
                attempts.push(Attempt {
                    flavor: fq.flavor,
                    mode: PMode::NoFit,
                    borrow: 0,
                    reasons: vec![why],
                    no_fit_reason: REASON_NO_MATCHING_FLAVOR,
                });
                continue;
            }
            let mut rep = BEST;
            let mut flavor_reason: &'static str = "";
            let mut flavor_reasons: Vec<Reason> = take(&mut self.scratch.pools.reasons);
            let mut max_borrow = 0;
            chosen.clear();
            for &(r, request) in requested {
                let fr = self.tree.fr(fq.flavor, r);
                let assumed = assigned.iter().filter(|u| u.0 == fr).map(|u| u.1).sum();
                let (mode, borrow, why, no_fit) = self.fits_resource_quota(fr, assumed, request);
                if let Some(why) = why {
                    if pinned {
                        reasons.push(why.clone());
                    }
                    flavor_reasons.push(why);
                }
                max_borrow = max_borrow.max(borrow);
                if !no_fit.is_empty() {
                    flavor_reason = most_severe(flavor_reason, no_fit);
                }
                let g = Granular { mode, borrow };
                // The flavor is as good as its worst resource.
                if is_preferred(rep, g, &fung) {
                    rep = g;
                }
                // Upstream's per-resource closure returns early on NoFit but the loop goes on, so
                // every resource of the group is evaluated and reported.
                if rep.mode != PMode::NoFit {
                    chosen.push((r, fq.flavor, mode, borrow));
                }
            }
            sort_reasons(self.world, &mut flavor_reasons);
            attempts.push(Attempt {
                flavor: fq.flavor,
                mode: rep.mode,
                borrow: max_borrow,
                reasons: flavor_reasons,
                no_fit_reason: flavor_reason,
            });
            if !should_try_next(rep, &fung) {
                std::mem::swap(&mut best, &mut chosen);
                found = true;
                best_mode = rep;
                break;
            }
            if is_preferred(rep, best_mode, &fung) {
                std::mem::swap(&mut best, &mut chosen);
                found = true;
                best_mode = rep;
            }
        }
        if best_mode.mode == PMode::Fit {
            reasons.clear();
        } else if !pinned {
            // Not a plain fit: the assignment will not be `Fit` either, and only a `Fit`
            // assignment's event lists the attempts' reasons (`considered_message`), so they
            // are moved out (each pod set's reasons are sorted before they are worded).
            match attempts.as_mut_slice() {
                [one] => std::mem::swap(&mut reasons, &mut one.reasons),
                many => {
                    for a in many {
                        reasons.append(&mut a.reasons);
                    }
                }
            }
        }
        // Reaching the last flavor means the next attempt starts from the first again.
        let tried = if attempted == group.flavors.len() as i32 - 1 {
            -1
        } else {
            attempted
        };
        self.scratch.best = best;
        self.scratch.chosen = chosen;
        GroupChoice {
            found,
            tried,
            reasons,
            attempts,
        }
    }

    /// `findTopologyAssignment` for `count` pods of pod set `ps` on TAS flavor `f`.
    pub(super) fn topology_assignment(
        &self,
        f: FlavorId,
        ps: &kueuesim_model::PodSet,
        count: u32,
        req: &TopologyRequest,
    ) -> Result<TopologyAssignment, String> {
        topology_assignment(self.world, self.tas, f, ps, count, req)
    }

    /// `assignFlavors`: flavors for every pod set at `counts` pods. The common shape (one
    /// pod set, one resource group of one flavor, no TAS) takes `assign_one_flavor`, which
    /// gives the same assignment as the general scan (`assign_scan`) with less bookkeeping;
    /// debug builds compare the two on every call.
    pub(super) fn assign(&mut self, counts: &[u32]) -> Assignment {
        let Some(fast) = self.assign_one_flavor(counts) else {
            return self.assign_scan(counts);
        };
        #[cfg(debug_assertions)]
        self.check_one_flavor(counts, &fast);
        fast
    }

    /// `assignFlavors` by the general scan: every pod set, every resource group, every flavor.
    pub(super) fn assign_scan(&mut self, counts: &[u32]) -> Assignment {
        let world = self.world;
        let cq = self.subject.cq;
        let queue = world.cluster_queue(cq);
        let pools = &mut self.scratch.pools;
        let mut usage: Vec<(Fr, i64)> = take(&mut pools.usage);
        let mut pod_sets = take(&mut pools.pod_sets);
        let mut contested = take(&mut pools.frs);
        let mut preempt_reasons: Vec<(usize, Vec<Reason>)> = take(&mut pools.per_pod_set);
        let mut borrowing = 0u32;
        let mut mode = Mode::Fit;
        // The pod set that failed (the scan stops at the first), its reasons and the condition
        // reason: worded only if the cycle keeps this assignment.
        let mut failure: Option<(usize, Vec<Reason>, &'static str)> = None;
        // Per pod set, the flavors tried: the QuotaReserved event lists them, so only an
        // assignment that fits needs them written out.
        let mut considered = std::mem::take(&mut self.scratch.considered);
        // Per pod set, the scan's progress per resource (`Assignment.append`): the pod sets
        // up to the first that failed, which records none.
        let mut last_tried: Vec<Vec<(ResourceId, i32)>> = take(&mut self.scratch.pools.scans);
        // Kueue TAS: the pod sets with a topology request on a TAS flavor, and the first whose
        // quota fits but whose placement does not (while it would on an empty cluster).
        let mut tas_pod_sets: Vec<usize> = Vec::new();
        let mut tas_miss: Option<(usize, String)> = None;

        // Refilled for every pod set and group, and handed back at the end for the next call.
        let mut resources = std::mem::take(&mut self.scratch.resources);
        let mut requested = std::mem::take(&mut self.scratch.requested);
        // The pod set's chosen (resource, flavor, mode, borrowing level).
        let mut flavors = std::mem::take(&mut self.scratch.flavors);
        let mut totals = std::mem::take(&mut self.scratch.totals);
        for (ps_index, ps) in self.subject.wl.pod_sets.iter().enumerate() {
            let count = counts[ps_index];
            // Worked out once per pod set (every flavor tried reads it): it depends on the
            // pod set and the ClusterQueue alone.
            let ps_tas = tas_request(world, cq, ps);
            let pods = self.scratch.pods_resource(world);
            quota_requests_into(world, cq, &ps.requests, count, pods, &mut totals);
            // Resources in name order, as Kueue iterates its requests.
            resources.clear();
            resources.extend(totals.iter());
            {
                let ranks = self.scratch.name_ranks(world);
                resources.sort_by_key(|a| ranks[a.0.index()]);
            }
            debug_assert!(
                resources
                    .windows(2)
                    .all(|w| world.resources.name(w[0].0) < world.resources.name(w[1].0)),
                "requests not in name order"
            );
            flavors.clear();
            let mut ps_attempts: Vec<Attempt> = Vec::new();
            let mut reasons: Vec<Reason> = Vec::new();
            let mut failed: Option<(Vec<Reason>, &'static str)> = None;
            let mut tried: Vec<(ResourceId, i32)> = take(&mut self.scratch.pools.tried);
            for &(r, amount) in &resources {
                if flavors.iter().any(|f| f.0 == r) {
                    continue;
                }
                let Some(group) = queue.group_of(r) else {
                    if amount == 0 {
                        continue;
                    }
                    let name = world.resources.name(r);
                    failed = Some((
                        vec![Reason::Text(
                            Some(Constraint::Misconfigured),
                            format!("resource {name} unavailable in ClusterQueue"),
                        )],
                        resolve_no_fit_reason(queue, &ps_attempts),
                    ));
                    break;
                };
                requested.clear();
                requested.extend(
                    resources
                        .iter()
                        .copied()
                        .filter(|(x, _)| group.covered.contains(x)),
                );
                let choice =
                    self.find_flavor(ps_index, r, group, &requested, &usage, ps_tas.as_ref());
                if choice.found {
                    let chosen = &self.scratch.best;
                    tried.extend(chosen.iter().map(|c| (c.0, choice.tried)));
                    flavors.extend_from_slice(chosen);
                    append(&mut reasons, choice.reasons);
                    append(&mut ps_attempts, choice.attempts);
                } else {
                    append(&mut ps_attempts, choice.attempts);
                    let reason = resolve_no_fit_reason(queue, &ps_attempts);
                    failed = Some((choice.reasons, reason));
                    break;
                }
            }
            let quota_failed = failed.is_some();
            // Kueue TAS: with quota fitting, where in the flavor's topology the pods go.
            let mut topology = None;
            let tas = match failed {
                None => ps_tas.and_then(|req| {
                    flavors
                        .iter()
                        .find(|f| world.flavor(f.1).topology_name.is_some())
                        .map(|f| (f.1, req))
                }),
                Some(_) => None,
            };
            // Whether the pod set could be placed at all, on the cluster without any TAS usage
            // (`WithSimulateEmpty`).
            let fits_when_empty = |f: FlavorId, req: &TopologyRequest| match &self.tas.empty {
                Some(empty) => topology_assignment(world, empty, f, ps, count, req).is_ok(),
                None => {
                    topology_assignment(world, &TasCapacity::new(world), f, ps, count, req).is_ok()
                }
            };
            if let Some((f, req)) = tas {
                tas_pod_sets.push(ps_index);
                if flavors.iter().all(|f| f.2 == PMode::Fit) {
                    match self.topology_assignment(f, ps, count, &req) {
                        Ok(a) => topology = Some(a),
                        // Upstream turns the pod set's mode into Preempt with the placement's
                        // message as its reason, then places it ignoring TAS usage
                        // (`WithSimulateEmpty`): if even that fails the pod set can never fit
                        // (NoFit, TopologyPlacementFailed); otherwise the preemptor looks for
                        // victims whose pods free the topology (below, after every pod set).
                        Err(msg) if fits_when_empty(f, &req) => {
                            tas_miss.get_or_insert((ps_index, msg));
                        }
                        Err(msg) => {
                            failed = Some((
                                vec![Reason::Text(Some(Constraint::Topology), msg)],
                                REASON_TOPOLOGY_PLACEMENT_FAILED,
                            ));
                        }
                    }
                } else if !fits_when_empty(f, &req) {
                    // Quota needs preemption (representative mode Preempt): upstream checks
                    // the TAS requests on the empty cluster first and, when one can never fit,
                    // the mode becomes NoFit (TopologyPlacementFailed) instead of evicting
                    // workloads for a pod set that could not run anyway. The message keeps
                    // the quota reasons, as upstream only marks the flavor attempt.
                    failed = Some((
                        std::mem::take(&mut reasons),
                        REASON_TOPOLOGY_PLACEMENT_FAILED,
                    ));
                }
            }
            // A pod set whose quota failed keeps no flavors, so no progress (upstream's group
            // flavors are nil then); one failing only its topology placement keeps both.
            if quota_failed {
                give(&mut self.scratch.pools.tried, tried);
                last_tried.push(Vec::new());
            } else {
                last_tried.push(tried);
            }
            if let Some((mut reasons, reason)) = failed {
                sort_reasons(world, &mut reasons);
                failure = Some((ps_index, reasons, reason));
                mode = Mode::NoFit;
                self.scratch.pools.give_attempts(ps_attempts);
                break;
            }
            // `PodSetAssignment.RepresentativeMode`: a pod set whose status holds no reason
            // is Fit whatever its resources' modes. Each group's status is cleared when the
            // group's flavor is as good as Fit, and under PreemptionOverBorrowing a flavor is as
            // good as its worst resource by borrowing first: one resource borrowing (Fit) and
            // another needing preemption without borrowing make the flavor Fit. The pod set then
            // counts as Fit, gets no preemption targets, and fails the cycle's fit check
            // (`Workload no longer fits after processing another workload`).
            let status_fit = reasons.is_empty();
            for &(r, f, m, b) in &flavors {
                let fr = self.tree.fr(f, r);
                // `resources` holds the pod set's totals, one entry per resource (a
                // binary search in `totals` would find the same amount).
                let amount = resources.iter().find(|x| x.0 == r).map_or(0, |x| x.1);
                debug_assert_eq!(amount, totals.get(r));
                usage.push((fr, amount));
                borrowing = borrowing.max(b);
                if m != PMode::Fit {
                    // Still contested if another pod set makes the assignment Preempt
                    // (`flavorResourcesNeedPreemption` reads the resources' modes).
                    contested.push(fr);
                    if !status_fit {
                        mode = mode.min(Mode::Preempt);
                    }
                }
            }
            usage = merge_usage(usage);
            considered.push((ps_index, ps_attempts));
            if reasons.is_empty() {
                give(&mut self.scratch.pools.reasons, reasons);
            } else {
                sort_reasons(world, &mut reasons);
                preempt_reasons.push((ps_index, reasons));
            }
            let mut assigned: Vec<(ResourceId, FlavorId)> = take(&mut self.scratch.pools.flavors);
            assigned.extend(flavors.iter().map(|f| (f.0, f.1)));
            assigned.sort();
            pod_sets.push(PodSetAssignment {
                flavors: assigned,
                count,
                topology,
            });
        }
        // Kueue TAS (`assignFlavors`): a quota fit whose placement failed is Preempt, the
        // first pod set that did not fit (`result.Failure()`) giving the message. In Preempt
        // mode every pod set with a TAS request has its flavors in Preempt mode
        // (`updateModeForTASRequests`): the quota may suffice while the topology is
        // fragmented, so victims may be needed on any of them.
        if mode == Mode::Fit
            && let Some((ps_index, msg)) = tas_miss
        {
            preempt_reasons.push((
                ps_index,
                vec![Reason::Text(Some(Constraint::Topology), msg)],
            ));
            mode = Mode::Preempt;
        }
        if mode == Mode::Preempt {
            for &i in &tas_pod_sets {
                for &(r, f) in &pod_sets[i].flavors {
                    contested.push(self.tree.fr(f, r));
                }
            }
        }
        contested.sort();
        contested.dedup();
        let not_admitted = match mode {
            Mode::Fit => {
                self.scratch.pools.give_per_pod_set(preempt_reasons);
                None
            }
            Mode::NoFit => {
                // The message and the reason are the failed pod set's alone (`resolveNoFitReason`
                // already falls back to `Pending` when it has nothing to say).
                let (ps, reasons, reason) = failure.expect("a NoFit assignment has a failure");
                self.scratch.pools.give_per_pod_set(preempt_reasons);
                let mut pod_sets = take(&mut self.scratch.pools.per_pod_set);
                pod_sets.push((ps, reasons));
                Some(Unfit { reason, pod_sets })
            }
            Mode::Preempt => Some(Unfit {
                reason: REASON_WAITING_FOR_QUOTA,
                pod_sets: preempt_reasons,
            }),
        };
        self.scratch.resources = resources;
        self.scratch.requested = requested;
        self.scratch.flavors = flavors;
        self.scratch.totals = totals;
        let considered_text = if mode == Mode::Fit {
            let out = self.scratch.take_string();
            considered_message(world, &self.subject.wl.pod_sets, &considered, out)
        } else {
            String::new()
        };
        for (_, attempts) in considered.drain(..) {
            self.scratch.pools.give_attempts(attempts);
        }
        self.scratch.considered = considered;
        Assignment {
            pod_sets,
            usage,
            mode,
            borrowing,
            contested,
            not_admitted,
            considered: considered_text,
            last_tried,
        }
    }
}

/// `findTopologyAssignment` for `count` pods of `ps` on TAS flavor `f` against `tas`.
pub(super) fn topology_assignment(
    world: &World,
    tas: &TasCapacity,
    f: FlavorId,
    ps: &kueuesim_model::PodSet,
    count: u32,
    req: &TopologyRequest,
) -> Result<TopologyAssignment, String> {
    topology_assignment_within(world, tas, f, ps, count, req, None)
}

/// `topology_assignment` with the pods kept inside domain `within` (Kueue's
/// `requiredReplacementDomain`: the leaves outside it count as full).
pub(crate) fn topology_assignment_within(
    world: &World,
    tas: &TasCapacity,
    f: FlavorId,
    ps: &kueuesim_model::PodSet,
    count: u32,
    req: &TopologyRequest,
    within: Option<kueuesim_model::DomainId>,
) -> Result<TopologyAssignment, String> {
    let name = world.flavor(f).topology_name.as_deref().unwrap_or_default();
    let index = world
        .topologies
        .binary_search_by(|t| t.name.as_str().cmp(name))
        .map_err(|_| {
            format!(
                "Flavor \"{}\" information missing in TAS cache",
                world.flavor(f).name
            )
        })?;
    let t = &world.topologies[index];
    let depth = |l: &str| {
        t.tier_of_level(l)
            .map_or(1, |tier| (t.root_tier() - tier) as u32)
    };
    let mode = match req {
        TopologyRequest::Required(l) => TasMode::Required(depth(l)),
        TopologyRequest::Preferred(l) => TasMode::Preferred(depth(l)),
        TopologyRequest::Unconstrained => TasMode::Unconstrained,
    };
    // The slice level must be a level of the topology (`resolveLevelIdx` for the slice key).
    let slice = match &ps.topology_slice {
        None => None,
        Some(s) => match t.tier_of_level(&s.level) {
            Some(tier) => Some(crate::tas::TasSlice {
                depth: (t.root_tier() - tier) as u32,
                size: s.size,
            }),
            None => {
                return Err(format!(
                    "no requested topology level for slices: {}",
                    s.level
                ));
            }
        },
    };
    let (mut leaves, total, excluded) = tas.pods_per_leaf(world, index, f, ps);
    if let Some(within) = within {
        for (d, k) in &mut leaves {
            if !t.ancestors(*d).any(|a| a == within) {
                *k = 0;
            }
        }
    }
    let order = match tas.orders.get(index) {
        Some(o) => std::borrow::Cow::Borrowed(o),
        None => std::borrow::Cow::Owned(crate::tas::DomainOrder::new(t)),
    };
    crate::tas::find_assignment_in(t, &order, name, &leaves, count, mode, slice)
        .map(|domains| TopologyAssignment {
            topology: index,
            domains,
        })
        .map_err(|msg| {
            if excluded.is_empty() {
                msg
            } else {
                let parts: Vec<String> =
                    excluded.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                format!(
                    "{msg}. Total nodes: {total}; excluded: {}",
                    parts.join(", ")
                )
            }
        })
}

/// The quota usage of an admission given as data (`status.admission` of the input): each pod
/// set's requests times its admitted count, charged to the flavor named per resource.
pub fn usage_of(
    world: &World,
    tree: &QuotaTree,
    cq: ClusterQueueId,
    wl: &Workload,
    pod_sets: &[kueuesim_model::PodSetAdmission],
) -> Vec<(Fr, i64)> {
    let mut out = Vec::new();
    for (ps, adm) in wl.pod_sets.iter().zip(pod_sets) {
        let totals = quota_requests(world, cq, &ps.requests, adm.count);
        for (r, amount) in totals.iter() {
            if let Some(&(_, f)) = adm.flavors.iter().find(|(fr, _)| *fr == r) {
                out.push((tree.fr(f, r), amount));
            }
        }
    }
    merge_usage(out)
}

/// `Preemptor.getTargets`: fair-sharing preemption when fair sharing is configured, else
/// classical preemption.
pub(super) fn preemption_targets(
    world: &World,
    tree: &mut QuotaTree,
    admitted: &impl AdmittedWorkloads,
    p: &Preemptor<'_>,
    search: &mut SearchScratch,
) -> Vec<Target> {
    match &world.config.kueue.fair_sharing {
        None => classical_targets_with(world, tree, admitted, p, search),
        Some(strategies) => {
            let strategies: Vec<FairStrategy> = strategies
                .iter()
                .map(|s| match s {
                    kueuesim_model::FairSharingStrategy::LessThanOrEqualToFinalShare => {
                        FairStrategy::LessThanOrEqualToFinalShare
                    }
                    kueuesim_model::FairSharingStrategy::LessThanInitialShare => {
                        FairStrategy::LessThanInitialShare
                    }
                })
                .collect();
            fair_targets(world, tree, admitted, p, &strategies)
        }
    }
}

/// Removes the quota usage of `workloads` from `tree` (the caller holds a mark).
pub(super) fn remove_workloads(
    tree: &mut QuotaTree,
    admitted: &impl AdmittedWorkloads,
    _world: &World,
    workloads: impl Iterator<Item = WorkloadId>,
) {
    for w in workloads {
        if let Some(c) = admitted.candidate(w) {
            let node = tree.cq_node(c.cq);
            for &(fr, amount) in &c.usage {
                tree.remove_usage(node, fr, amount);
            }
        }
    }
}
