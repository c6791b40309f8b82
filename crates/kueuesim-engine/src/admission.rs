//! One Kueue scheduling cycle: nominate heads (flavor assignment with the preemption oracle),
//! order them, and process them against a snapshot whose usage accumulates.
//!
//! Follows `pkg/scheduler/scheduler.go` (`schedule`, `nominate`, `getInitialAssignments`,
//! `processEntry`, `makeClassicalIterator`) and `pkg/scheduler/flavorassigner/flavorassigner.go`
//! (`assignFlavors`, `findFlavorForPodSets`, `fitsResourceQuota`, `isPreferred`,
//! `shouldTryNextFlavor`, `resolveNoFitReason`). The cycle is a function of the world, the
//! quota tree and the admitted workloads: it changes the tree only inside an undo mark, and
//! returns its decisions as data for the engine to apply.

use kueuesim_model::labels::tolerated;
use kueuesim_model::quota::{Fr, QuotaTree};
use kueuesim_model::{
    ClusterQueueId, FlavorFungibility, FlavorId, FungibilityPolicy, FungibilityPreference,
    PreemptionPolicy, ResourceGroup, ResourceId, ResourceList, TopologyRequest, Workload,
    WorkloadId, World, format_amount,
};

use crate::outcome::PodSetAssignment;
use crate::preemption::{
    AdmittedWorkloads, FairStrategy, Preemptor, Target, classical_targets, fair_targets,
};
use crate::queues::{QueueKey, RequeueReason};
use crate::tas::{TasCapacity, TasMode, TopologyAssignment};

/// `WaitingForQuota`.
pub const REASON_WAITING_FOR_QUOTA: &str = "WaitingForQuota";
/// `ExceedsMaxQuota`.
pub const REASON_EXCEEDS_MAX_QUOTA: &str = "ExceedsMaxQuota";
/// `NoMatchingFlavor`.
pub const REASON_NO_MATCHING_FLAVOR: &str = "NoMatchingFlavor";
/// `TopologyPlacementFailed`: the pod set does not fit its TAS flavor's topology even on an
/// empty cluster (`WithSimulateEmpty`).
pub const REASON_TOPOLOGY_PLACEMENT_FAILED: &str = "TopologyPlacementFailed";
/// `Misconfigured`.
pub const REASON_MISCONFIGURED: &str = "Misconfigured";
/// `Suspended`.
pub const REASON_SUSPENDED: &str = "Suspended";
/// `WaitingForPreemptedWorkloads`.
pub const REASON_WAITING_FOR_PREEMPTED: &str = "WaitingForPreemptedWorkloads";

/// Why a workload did not get quota, as the `QuotaReserved=False` condition says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAdmitted {
    /// The granular reason (`UnadmittedWorkloadsObservability`).
    pub reason: &'static str,
    /// Kueue's message.
    pub message: String,
}

/// `preemptionMode` of the flavor assigner, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum PMode {
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
struct Granular {
    mode: PMode,
    borrow: u32,
}

const WORST: Granular = Granular {
    mode: PMode::NoFit,
    borrow: u32::MAX,
};
const BEST: Granular = Granular {
    mode: PMode::Fit,
    borrow: 0,
};

/// `isPreferred`: whether `a` is better than `b` under the ClusterQueue's fungibility.
fn is_preferred(a: Granular, b: Granular, f: &FlavorFungibility) -> bool {
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
fn should_try_next(m: Granular, f: &FlavorFungibility) -> bool {
    matches!(m.mode, PMode::NoFit | PMode::NoCandidates)
        || (matches!(m.mode, PMode::Preempt | PMode::Reclaim)
            && f.when_can_preempt == FungibilityPolicy::TryNextFlavor)
        || (m.borrow > 0 && f.when_can_borrow == FungibilityPolicy::TryNextFlavor)
}

/// Reason severities of `resolveNoFitReason`.
fn severity(reason: &str) -> u8 {
    match reason {
        REASON_NO_MATCHING_FLAVOR => 4,
        REASON_EXCEEDS_MAX_QUOTA => 3,
        REASON_WAITING_FOR_QUOTA => 2,
        REASON_TOPOLOGY_PLACEMENT_FAILED => 1,
        _ => 0,
    }
}

fn most_severe(a: &'static str, b: &'static str) -> &'static str {
    if severity(a) >= severity(b) { a } else { b }
}

/// The representative mode of an assignment (`FlavorAssignmentMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Cannot be admitted now.
    NoFit,
    /// Can be admitted after preempting (or, with no targets, not at all this cycle).
    Preempt,
    /// Fits.
    Fit,
}

/// A flavor assignment of a whole workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// Per pod set (up to the first that failed), the flavors and counts.
    pub pod_sets: Vec<PodSetAssignment>,
    /// The quota it uses, per `Fr` (sorted, merged).
    pub usage: Vec<(Fr, i64)>,
    /// The representative mode.
    pub mode: Mode,
    /// The borrowing level: 0 within nominal, else the height of the subtree it borrows from.
    pub borrowing: u32,
    /// The `Fr`s assigned in preempt mode (`frsNeedPreemption`).
    pub contested: Vec<Fr>,
    /// For a mode other than `Fit`: the condition reason and Kueue's message.
    pub not_admitted: Option<NotAdmitted>,
    /// The flavors considered that did not simply fit, for the QuotaReserved event
    /// (`FormatFlavorAssignmentAttemptsForEvents`); empty when there is nothing to say.
    pub considered: String,
}

/// What the scheduler knows of the workload being assigned.
struct Subject<'a> {
    workload: WorkloadId,
    wl: &'a Workload,
    cq: ClusterQueueId,
    priority: i32,
    key: QueueKey,
}

/// One flavor tried for a resource group: its mode and, for NoFit, its reason.
struct Attempt {
    flavor: FlavorId,
    mode: PMode,
    borrow: u32,
    /// Sorted.
    reasons: Vec<String>,
    no_fit_reason: &'static str,
}

/// `FormatFlavorAssignmentAttemptsForEvents` for one pod set: every flavor considered that did
/// not simply fit without borrowing, sorted by flavor name:
/// `flavor(Mode[;borrow=N][;reasons])`, or `flavor(preemptionMode=P;...)` when preemption
/// was considered.
fn format_attempts(world: &World, attempts: &[Attempt]) -> String {
    let mut sorted: Vec<&Attempt> = attempts
        .iter()
        .filter(|a| !(a.mode == PMode::Fit && a.borrow == 0))
        .collect();
    sorted.sort_by(|a, b| {
        world
            .flavor(a.flavor)
            .name
            .cmp(&world.flavor(b.flavor).name)
    });
    sorted
        .iter()
        .map(|a| {
            let mode = match a.mode {
                PMode::NoFit => "NoFit".to_string(),
                PMode::Fit => "Fit".to_string(),
                PMode::NoCandidates => "preemptionMode=NoCandidates".to_string(),
                PMode::Preempt => "preemptionMode=Preempt".to_string(),
                PMode::Reclaim => "preemptionMode=Reclaim".to_string(),
            };
            let mut out = format!("{}({mode}", world.flavor(a.flavor).name);
            if a.borrow > 0 {
                out.push_str(&format!(";borrow={}", a.borrow));
            }
            if !a.reasons.is_empty() {
                out.push(';');
                out.push_str(&a.reasons.join(";"));
            }
            out.push(')');
            out
        })
        .collect::<Vec<_>>()
        .join(", ")
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

/// The flavors considered for each pod set, for the QuotaReserved event: `<pod set>: <attempts>`
/// joined by ` | ` over the pod sets with something to say.
fn considered_message(world: &World, pod_sets: &[(&String, Vec<Attempt>)]) -> String {
    pod_sets
        .iter()
        .filter_map(|(name, attempts)| {
            let text = format_attempts(world, attempts);
            (!text.is_empty()).then(|| format!("{name}: {text}"))
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The outcome of `find_flavor` for one resource group.
struct GroupChoice {
    /// (resource, flavor, mode) per requested resource of the group, if a flavor was chosen.
    chosen: Option<Vec<(ResourceId, FlavorId, PMode, u32)>>,
    /// Reasons to report when the choice is not a plain fit.
    reasons: Vec<String>,
    attempts: Vec<Attempt>,
}

/// The flavor assigner for one workload in one ClusterQueue (`FlavorAssigner`).
struct FlavorAssigner<'a, A: AdmittedWorkloads> {
    world: &'a World,
    tree: &'a mut QuotaTree,
    admitted: &'a A,
    subject: Subject<'a>,
    /// What Kueue's TAS cache sees of the nodes.
    tas: &'a TasCapacity,
    /// The preemption oracle's last search. When the scheduler then asks `getTargets` for
    /// exactly that usage (a one-resource workload, the common case) on the unchanged
    /// snapshot, the answer is the same, so it is reused.
    last_search: Option<OracleSearch>,
}

/// A search the preemption oracle (`SimulatePreemption`) made, and its answer.
struct OracleSearch {
    usage: Vec<(Fr, i64)>,
    contested: Vec<Fr>,
    targets: Vec<Target>,
}

/// The topology request a pod set has on a ClusterQueue: its annotation, or, when every
/// flavor of the ClusterQueue is a TAS flavor, an implied unconstrained one.
fn tas_request(
    world: &World,
    cq: ClusterQueueId,
    ps: &kueuesim_model::PodSet,
) -> Option<TopologyRequest> {
    if let Some(r) = &ps.topology_request {
        return Some(r.clone());
    }
    let queue = world.cluster_queue(cq);
    let mut flavors = queue
        .resource_groups
        .iter()
        .flat_map(|g| &g.flavors)
        .peekable();
    let all_tas =
        flavors.peek().is_some() && flavors.all(|f| world.flavor(f.flavor).topology_name.is_some());
    all_tas.then_some(TopologyRequest::Unconstrained)
}

/// Why a flavor cannot serve a pod set's (lack of) topology request (`checkPodSetAndFlavorMatchForTAS`).
fn tas_mismatch(
    world: &World,
    cq: ClusterQueueId,
    f: FlavorId,
    wl: &Workload,
    ps: usize,
) -> Option<String> {
    let flavor = world.flavor(f);
    let pod = &wl.pod_sets[ps];
    match (tas_request(world, cq, pod), &flavor.topology_name) {
        (None, None) => None,
        (None, Some(_)) => Some(format!(
            "Flavor \"{}\" supports only TopologyAwareScheduling",
            flavor.name
        )),
        (Some(_), None) => Some(format!(
            "Flavor \"{}\" does not support TopologyAwareScheduling",
            flavor.name
        )),
        (Some(req), Some(topology)) => {
            let Some(t) = world.topology(topology) else {
                return Some(format!(
                    "Flavor \"{}\" information missing in TAS cache",
                    flavor.name
                ));
            };
            let level = match &req {
                TopologyRequest::Required(l) | TopologyRequest::Preferred(l) => Some(l),
                TopologyRequest::Unconstrained => None,
            };
            match level {
                Some(l) if t.tier_of_level(l).is_none() => Some(format!(
                    "Flavor \"{}\" does not contain the requested level",
                    flavor.name
                )),
                _ => None,
            }
        }
    }
}

/// Per-pod requests as Kueue counts them against a ClusterQueue: the pod template's
/// requests, plus `pods: 1` when the ClusterQueue covers the `pods` resource.
///
/// Kueue's `resources` configuration applies first: resources with an excluded prefix are
/// dropped, and each transformation adds its outputs per unit of its input (keeping the input
/// with `Retain`, dropping it with `Replace`).
fn quota_requests(world: &World, cq: ClusterQueueId, per_pod: &ResourceList) -> ResourceList {
    let rc = &world.config.kueue.resources;
    let mut req = if rc.exclude_prefixes.is_empty() && rc.transformations.is_empty() {
        per_pod.clone()
    } else {
        let mut pairs: Vec<(ResourceId, i64)> = Vec::new();
        for (r, a) in per_pod.iter() {
            let name = world.resources.name(r);
            if rc
                .exclude_prefixes
                .iter()
                .any(|p| name.starts_with(p.as_str()))
            {
                continue;
            }
            match rc.transformations.iter().find(|t| t.input == r) {
                Some(t) => {
                    // cpu is counted in millis: a per-unit output scales by cores.
                    let units = if name == "cpu" {
                        a as f64 / 1000.0
                    } else {
                        a as f64
                    };
                    for &(out, per) in &t.outputs {
                        pairs.push((out, (units * per as f64).ceil() as i64));
                    }
                    if t.retain {
                        pairs.push((r, a));
                    }
                }
                None => pairs.push((r, a)),
            }
        }
        ResourceList::from_pairs(pairs)
    };
    if let Some(pods) = world.resources.lookup("pods")
        && world.cluster_queue(cq).group_of(pods).is_some()
    {
        req.set(pods, 1);
    }
    req
}

/// Whether flavor `f` may hold pod set `ps` at all (`checkFlavorForPodSets`): flavor taints
/// tolerated by the pod's and the flavor's tolerations, and the pod's nodeSelector agreeing
/// with the flavor's nodeLabels on the keys the flavor defines. Returns the reason if not.
fn flavor_mismatch(world: &World, f: FlavorId, wl: &Workload, ps: usize) -> Option<String> {
    let flavor = world.flavor(f);
    let pod = &wl.pod_sets[ps];
    for taint in flavor
        .node_taints
        .iter()
        .filter(|t| t.effect.blocks_scheduling())
    {
        if !tolerated(taint, &pod.tolerations, &flavor.tolerations) {
            // Kueue formats the corev1.Taint struct with %s: `{key value Effect <nil>}`.
            return Some(format!(
                "untolerated taint {{{} {} {} <nil>}} in flavor {}",
                taint.key,
                taint.value,
                taint.effect.as_str(),
                flavor.name
            ));
        }
    }
    let mismatch = pod
        .node_selector
        .iter()
        .any(|(k, v)| flavor.node_labels.get(k).is_some_and(|fv| fv != v));
    if mismatch {
        return Some(format!(
            "flavor {} doesn't match node affinity",
            flavor.name
        ));
    }
    None
}

fn merge_usage(mut v: Vec<(Fr, i64)>) -> Vec<(Fr, i64)> {
    v.sort_by_key(|u| u.0);
    let mut out: Vec<(Fr, i64)> = Vec::with_capacity(v.len());
    for (fr, a) in v {
        match out.last_mut() {
            Some(last) if last.0 == fr => last.1 += a,
            _ => out.push((fr, a)),
        }
    }
    out
}

impl<A: AdmittedWorkloads> FlavorAssigner<'_, A> {
    fn preemptor<'u>(&self, usage: &'u [(Fr, i64)], contested: &'u [Fr]) -> Preemptor<'u> {
        Preemptor {
            workload: self.subject.workload,
            cq: self.subject.cq,
            priority: self.subject.priority,
            timestamp: self.subject.key.timestamp,
            usage,
            contested,
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
    /// assigned to earlier pod sets, its borrowing level, and the reasons when it does not fit.
    fn fits_resource_quota(
        &mut self,
        fr: Fr,
        assumed: i64,
        request: i64,
    ) -> (PMode, u32, Vec<String>, &'static str) {
        let cq = self.subject.cq;
        let (flavor, resource) = self.tree.split(fr);
        let rname = self.world.resources.name(resource);
        let fname = &self.world.flavor(flavor).name;
        let available = self.tree.available(cq, fr);
        let max_capacity = self.tree.potential_available(self.tree.cq_node(cq), fr);
        let val = assumed + request;
        if val > max_capacity {
            let msg = format!(
                "insufficient quota for {rname} in flavor {fname}, previously considered podsets requests ({}) + current podset request ({}) > maximum capacity ({})",
                format_amount(rname, assumed),
                format_amount(rname, request),
                format_amount(rname, max_capacity)
            );
            return (PMode::NoFit, 0, vec![msg], REASON_EXCEEDS_MAX_QUOTA);
        }
        let (borrow, may_reclaim) = self.tree.height_of_lowest_subtree_that_fits(cq, fr, val);
        if val <= available {
            return (PMode::Fit, borrow, Vec::new(), "");
        }
        let msg = format!(
            "insufficient unused quota for {rname} in flavor {fname}, {} more needed",
            format_amount(rname, val - available)
        );
        let nominal = self.tree.nominal(self.tree.cq_node(cq), fr);
        if nominal >= val || may_reclaim || self.can_preempt_while_borrowing() {
            // The preemption oracle (`SimulatePreemption`): the real algorithm, for this Fr.
            let usage = [(fr, val)];
            let contested = [fr];
            let p = self.preemptor(&usage, &contested);
            let targets = preemption_targets(self.world, self.tree, self.admitted, &p);
            self.last_search = Some(OracleSearch {
                usage: usage.to_vec(),
                contested: contested.to_vec(),
                targets: targets.clone(),
            });
            if targets.is_empty() {
                return (PMode::NoCandidates, borrow, vec![msg], "");
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
            return (mode, borrow_after, vec![msg], "");
        }
        (PMode::NoFit, borrow, vec![msg], REASON_WAITING_FOR_QUOTA)
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

    /// `findFlavorForPodSets` for one resource group of pod set `ps`.
    fn find_flavor(
        &mut self,
        ps: usize,
        group: &ResourceGroup,
        requested: &[(ResourceId, i64)],
        assigned: &[(Fr, i64)],
    ) -> GroupChoice {
        let fung = self.world.cluster_queue(self.subject.cq).flavor_fungibility;
        let mut best: Option<Vec<(ResourceId, FlavorId, PMode, u32)>> = None;
        let mut best_mode = WORST;
        let mut reasons = Vec::new();
        let mut attempts = Vec::new();
        for fq in &group.flavors {
            let mismatch =
                flavor_mismatch(self.world, fq.flavor, self.subject.wl, ps).or_else(|| {
                    tas_mismatch(self.world, self.subject.cq, fq.flavor, self.subject.wl, ps)
                });
            if let Some(why) = mismatch {
                reasons.push(why.clone());
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
            let mut flavor_reasons: Vec<String> = Vec::new();
            let mut max_borrow = 0;
            let mut chosen = Vec::with_capacity(requested.len());
            for &(r, request) in requested {
                let fr = self.tree.fr(fq.flavor, r);
                let assumed = assigned.iter().filter(|u| u.0 == fr).map(|u| u.1).sum();
                let (mode, borrow, why, no_fit) = self.fits_resource_quota(fr, assumed, request);
                flavor_reasons.extend(why.iter().cloned());
                reasons.extend(why);
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
            flavor_reasons.sort();
            attempts.push(Attempt {
                flavor: fq.flavor,
                mode: rep.mode,
                borrow: max_borrow,
                reasons: flavor_reasons,
                no_fit_reason: flavor_reason,
            });
            if !should_try_next(rep, &fung) {
                best = Some(chosen);
                best_mode = rep;
                break;
            }
            if is_preferred(rep, best_mode, &fung) {
                best = Some(chosen);
                best_mode = rep;
            }
        }
        if best_mode.mode == PMode::Fit {
            reasons.clear();
        }
        GroupChoice {
            chosen: best,
            reasons,
            attempts,
        }
    }

    /// `findTopologyAssignment` for `count` pods of pod set `ps` on TAS flavor `f`.
    fn topology_assignment(
        &self,
        f: FlavorId,
        ps: &kueuesim_model::PodSet,
        count: u32,
        req: &TopologyRequest,
    ) -> Result<TopologyAssignment, String> {
        topology_assignment(self.world, self.tas, f, ps, count, req)
    }

    /// `assignFlavors`: flavors for every pod set at `counts` pods.
    fn assign(&mut self, counts: &[u32]) -> Assignment {
        let world = self.world;
        let cq = self.subject.cq;
        let queue = world.cluster_queue(cq);
        let mut usage: Vec<(Fr, i64)> = Vec::new();
        let mut pod_sets = Vec::new();
        let mut contested = Vec::new();
        let mut borrowing = 0u32;
        let mut mode = Mode::Fit;
        let mut failures: Vec<(String, Vec<String>, &'static str)> = Vec::new();
        let mut preempt_reasons: Vec<(String, Vec<String>)> = Vec::new();
        // Per pod set, the flavors tried: the QuotaReserved event lists them, so only an
        // assignment that fits needs them written out.
        let mut considered: Vec<(&String, Vec<Attempt>)> = Vec::new();

        for (ps_index, ps) in self.subject.wl.pod_sets.iter().enumerate() {
            let count = counts[ps_index];
            let totals = quota_requests(world, cq, &ps.requests).scaled(i64::from(count));
            // Resources in name order, as Kueue iterates its requests.
            let mut resources: Vec<(ResourceId, i64)> = totals.iter().collect();
            resources.sort_by(|a, b| world.resources.name(a.0).cmp(world.resources.name(b.0)));
            let mut flavors: Vec<(ResourceId, FlavorId, PMode, u32)> = Vec::new();
            let mut ps_attempts: Vec<Attempt> = Vec::new();
            let mut reasons: Vec<String> = Vec::new();
            let mut failed: Option<(Vec<String>, &'static str)> = None;
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
                        vec![format!("resource {name} unavailable in ClusterQueue")],
                        resolve_no_fit_reason(queue, &ps_attempts),
                    ));
                    break;
                };
                let requested: Vec<(ResourceId, i64)> = resources
                    .iter()
                    .copied()
                    .filter(|(x, _)| group.covered.contains(x))
                    .collect();
                let choice = self.find_flavor(ps_index, group, &requested, &usage);
                match choice.chosen {
                    Some(chosen) => {
                        append(&mut flavors, chosen);
                        append(&mut reasons, choice.reasons);
                        append(&mut ps_attempts, choice.attempts);
                    }
                    None => {
                        append(&mut ps_attempts, choice.attempts);
                        let reason = resolve_no_fit_reason(queue, &ps_attempts);
                        failed = Some((choice.reasons, reason));
                        break;
                    }
                }
            }
            // Kueue TAS: with quota fitting, where in the flavor's topology the pods go.
            let mut topology = None;
            let tas = match failed {
                None => tas_request(world, cq, ps).and_then(|req| {
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
                if flavors.iter().all(|f| f.2 == PMode::Fit) {
                    match self.topology_assignment(f, ps, count, &req) {
                        Ok(a) => topology = Some(a),
                        Err(msg) => {
                            // Upstream turns the mode into Preempt and tries the placement
                            // ignoring TAS usage: if even that fails the pod set can never
                            // fit (TopologyPlacementFailed); otherwise preemption might free
                            // the nodes, which kueuesim does not search for TAS
                            // (docs/semantics.md).
                            let reason = if fits_when_empty(f, &req) {
                                REASON_WAITING_FOR_QUOTA
                            } else {
                                REASON_TOPOLOGY_PLACEMENT_FAILED
                            };
                            failed = Some((vec![msg], reason));
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
            if let Some((mut reasons, reason)) = failed {
                reasons.sort();
                failures.push((ps.name.clone(), reasons, reason));
                mode = Mode::NoFit;
                break;
            }
            for &(r, f, m, b) in &flavors {
                let fr = self.tree.fr(f, r);
                let amount = totals.get(r);
                usage.push((fr, amount));
                borrowing = borrowing.max(b);
                if m != PMode::Fit {
                    contested.push(fr);
                    mode = mode.min(Mode::Preempt);
                }
            }
            usage = merge_usage(usage);
            considered.push((&ps.name, ps_attempts));
            if !reasons.is_empty() {
                reasons.sort();
                preempt_reasons.push((ps.name.clone(), reasons));
            }
            let mut assigned: Vec<(ResourceId, FlavorId)> =
                flavors.iter().map(|f| (f.0, f.1)).collect();
            assigned.sort();
            pod_sets.push(PodSetAssignment {
                flavors: assigned,
                count,
                topology,
            });
        }
        contested.sort();
        contested.dedup();
        let not_admitted = match mode {
            Mode::Fit => None,
            Mode::NoFit => {
                let reason = failures.iter().fold("", |acc, f| most_severe(acc, f.2));
                Some(NotAdmitted {
                    reason,
                    message: pod_set_message(&failures_as_pairs(&failures)),
                })
            }
            Mode::Preempt => Some(NotAdmitted {
                reason: REASON_WAITING_FOR_QUOTA,
                message: pod_set_message(&preempt_reasons),
            }),
        };
        Assignment {
            pod_sets,
            usage,
            mode,
            borrowing,
            contested,
            not_admitted,
            considered: if mode == Mode::Fit {
                considered_message(world, &considered)
            } else {
                String::new()
            },
        }
    }
}

/// `findTopologyAssignment` for `count` pods of `ps` on TAS flavor `f` against `tas`.
pub(crate) fn topology_assignment(
    world: &World,
    tas: &TasCapacity,
    f: FlavorId,
    ps: &kueuesim_model::PodSet,
    count: u32,
    req: &TopologyRequest,
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
    let (leaves, total, excluded) = tas.pods_per_leaf(world, index, f, ps);
    let order = match tas.orders.get(index) {
        Some(o) => std::borrow::Cow::Borrowed(o),
        None => std::borrow::Cow::Owned(crate::tas::DomainOrder::new(t)),
    };
    crate::tas::find_assignment_in(t, &order, name, &leaves, count, mode)
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

/// `resolveNoFitReason` for a pod set that failed, over the flavor attempts of every resource
/// group processed for it: within a group the least severe NoFit attempt stands for the group
/// (an alternative was closer), across groups the most severe wins (co-requisites). With no
/// attempt at all it is `NoMatchingFlavor`; with no NoFit attempt upstream computes an empty
/// reason, which the API would reject: kueuesim writes `Pending`, the reason Kueue used before
/// `UnadmittedWorkloadsObservability`.
fn resolve_no_fit_reason(
    queue: &kueuesim_model::ClusterQueue,
    attempts: &[Attempt],
) -> &'static str {
    if attempts.is_empty() {
        return REASON_NO_MATCHING_FLAVOR;
    }
    let mut per_group: Vec<Option<&'static str>> = vec![None; queue.resource_groups.len()];
    for a in attempts.iter().filter(|a| a.mode == PMode::NoFit) {
        let Some(g) = queue
            .resource_groups
            .iter()
            .position(|g| g.flavors.iter().any(|f| f.flavor == a.flavor))
        else {
            continue;
        };
        per_group[g] = Some(match per_group[g] {
            Some(r) if severity(r) <= severity(a.no_fit_reason) => r,
            _ => a.no_fit_reason,
        });
    }
    let reason = per_group.into_iter().flatten().fold("", most_severe);
    if reason.is_empty() { "Pending" } else { reason }
}

fn failures_as_pairs(f: &[(String, Vec<String>, &'static str)]) -> Vec<(String, Vec<String>)> {
    f.iter().map(|(n, r, _)| (n.clone(), r.clone())).collect()
}

/// `Assignment.Message`: `couldn't assign flavors to pod set <ps>: <reasons>` joined by `; `.
fn pod_set_message(pod_sets: &[(String, Vec<String>)]) -> String {
    pod_sets
        .iter()
        .map(|(name, reasons)| {
            format!(
                "couldn't assign flavors to pod set {name}: {}",
                reasons.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Removes the quota usage of `workloads` from `tree` (the caller holds a mark).
fn remove_workloads(
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

/// Whether `usage` fits in `cq` now (`ClusterQueueSnapshot.Fits`).
fn fits(tree: &QuotaTree, cq: ClusterQueueId, usage: &[(Fr, i64)]) -> bool {
    usage
        .iter()
        .all(|&(fr, amount)| amount <= tree.available(cq, fr))
}

/// Where a cycle reads the spec of a head's workload (the engine's live workloads).
pub trait Specs {
    /// The spec of workload `w`, which has arrived.
    fn spec(&self, w: WorkloadId) -> &Workload;
}

/// A head popped for this cycle.
#[derive(Clone, Copy, Debug)]
pub struct Head {
    /// Its ClusterQueue.
    pub cq: ClusterQueueId,
    /// Its queue position.
    pub key: QueueKey,
}

/// What the cycle decided for one head.
#[derive(Clone, Debug)]
pub enum Decision {
    /// Reserve quota now.
    Admit {
        /// The head.
        head: Head,
        /// Its flavors.
        assignment: Assignment,
    },
    /// Evict `targets` for it; it stays at the head of its queue until they are gone.
    Preempt {
        /// The head.
        head: Head,
        /// The victims.
        targets: Vec<Target>,
        /// Why it is not admitted yet (`WaitingForPreemptedWorkloads`).
        not_admitted: NotAdmitted,
    },
    /// Not admitted this cycle.
    Requeue {
        /// The head.
        head: Head,
        /// Where the queue puts it.
        reason: RequeueReason,
        /// Why.
        not_admitted: NotAdmitted,
    },
}

impl Decision {
    /// The head the decision is about.
    pub fn head(&self) -> &Head {
        match self {
            Decision::Admit { head, .. }
            | Decision::Preempt { head, .. }
            | Decision::Requeue { head, .. } => head,
        }
    }

    /// The head this decision is about, mutable.
    pub fn head_mut(&mut self) -> &mut Head {
        match self {
            Decision::Admit { head, .. }
            | Decision::Preempt { head, .. }
            | Decision::Requeue { head, .. } => head,
        }
    }
}

/// An entry of the cycle: a nominated head with its assignment and preemption targets.
struct Entry {
    head: Head,
    priority: i32,
    assignment: Assignment,
    targets: Vec<Target>,
}

/// `getInitialAssignments`: the full assignment; with preemption, its targets; failing that,
/// partial admission (`PodSetReducer`) when a pod set has `minCount`.
fn initial_assignment<A: AdmittedWorkloads>(
    world: &World,
    wl: &Workload,
    tree: &mut QuotaTree,
    admitted: &A,
    tas: &TasCapacity,
    head: Head,
) -> (Assignment, Vec<Target>) {
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
        last_search: None,
    };
    let full_counts: Vec<u32> = wl.pod_sets.iter().map(|p| p.count).collect();
    let full = fa.assign(&full_counts);
    match full.mode {
        Mode::Fit => return (full, Vec::new()),
        Mode::Preempt => {
            let targets = targets_for(&mut fa, &full);
            if !targets.is_empty() {
                return (full, targets);
            }
        }
        Mode::NoFit => {}
    }
    // Partial admission: the smallest reduction of the pod counts that fits.
    let deltas: Vec<u32> = wl
        .pod_sets
        .iter()
        .map(|p| p.count - p.min_count.unwrap_or(p.count))
        .collect();
    let total: u32 = deltas.iter().sum();
    if total > 0 {
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
            let a = fa.assign(&counts_at(mid));
            let ok = match a.mode {
                Mode::Fit => Some((a, Vec::new())),
                Mode::Preempt => {
                    let t = targets_for(&mut fa, &a);
                    (!t.is_empty()).then_some((a, t))
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

/// `Preemptor.getTargets`: fair-sharing preemption when fair sharing is configured, else
/// classical preemption.
fn preemption_targets(
    world: &World,
    tree: &mut QuotaTree,
    admitted: &impl AdmittedWorkloads,
    p: &Preemptor<'_>,
) -> Vec<Target> {
    match &world.config.kueue.fair_sharing {
        None => classical_targets(world, tree, admitted, p),
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

/// The fair-sharing tournament (`fair_sharing_iterator.go`): the next entry to process.
/// Take the first remaining entry's cohort tree (an entry without a cohort goes at once);
/// then from the root down, at every cohort pick among its children's candidates the one
/// whose child would not borrow on what it requests (`FairSharingPrioritizeNonBorrowing`),
/// then the lower dominant resource share of that child with the candidate's usage added,
/// then higher priority, then earlier timestamp. Shares are computed against the snapshot as
/// it stands, so they change as entries are admitted.
fn fair_pick(world: &World, tree: &mut QuotaTree, entries: &[Entry]) -> usize {
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
    fn best(tree: &QuotaTree, entries: &[Entry], n: NodeIdx, keys: &Keys) -> Option<usize> {
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

/// `Preemptor.GetTargets` for an assignment in preempt mode.
fn targets_for<A: AdmittedWorkloads>(
    fa: &mut FlavorAssigner<'_, A>,
    a: &Assignment,
) -> Vec<Target> {
    let p = fa.preemptor(&a.usage, &a.contested);
    let reused = match &fa.last_search {
        Some(s) if s.usage == a.usage && s.contested == a.contested => s.targets.clone(),
        _ => return preemption_targets(fa.world, fa.tree, fa.admitted, &p),
    };
    // Tests (debug builds) check the reuse against a search of its own.
    debug_assert_eq!(
        reused,
        preemption_targets(fa.world, fa.tree, fa.admitted, &p),
        "a reused preemption search differs"
    );
    reused
}

/// Runs one scheduling cycle over `heads` (`Scheduler.schedule`). `tree` holds the usage of
/// every workload holding quota and is returned unchanged; `admitted` lists them.
pub fn run_cycle<A: AdmittedWorkloads, S: Specs + ?Sized>(
    world: &World,
    specs: &S,
    tree: &mut QuotaTree,
    admitted: &A,
    tas: &mut TasCapacity,
    heads: &[Head],
) -> Vec<Decision> {
    let mut decisions = Vec::with_capacity(heads.len());
    // Nominate: early checks, then a flavor assignment against the cycle-start snapshot.
    let mut entries: Vec<Entry> = Vec::new();
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
                },
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
                },
            });
            continue;
        }
        let (assignment, targets) = initial_assignment(world, wl, tree, admitted, tas, h);
        entries.push(Entry {
            head: h,
            priority: wl.priority,
            assignment,
            targets,
        });
    }

    // Order (classical iterator): lower borrowing level first, then higher priority
    // (PrioritySortingWithinCohort), then earlier queue-order timestamp; stable. With fair
    // sharing the tournament picks each next entry instead.
    let fair = world.config.kueue.fair_sharing.is_some();
    if !fair {
        entries.sort_by_key(|e| {
            (
                e.assignment.borrowing,
                std::cmp::Reverse(e.priority),
                e.head.key.timestamp,
            )
        });
    }

    // Process, with usage accumulating in the snapshot; undone at the end.
    let mark = tree.mark();
    let mut preempted: Vec<WorkloadId> = Vec::new();
    let mut entries: std::collections::VecDeque<Entry> = entries.into();
    while !entries.is_empty() {
        let e = if fair {
            let next = fair_pick(world, tree, entries.make_contiguous());
            entries.remove(next).expect("in range")
        } else {
            entries.pop_front().expect("non-empty")
        };
        let h = e.head;
        let a = e.assignment;
        match a.mode {
            Mode::NoFit => {
                let not_admitted = a.not_admitted.clone().expect("NoFit has a reason");
                decisions.push(Decision::Requeue {
                    head: h,
                    reason: RequeueReason::NoFit,
                    not_admitted,
                });
                continue;
            }
            Mode::Preempt if e.targets.is_empty() => {
                // No candidates: unless the ClusterQueue can always reclaim its nominal quota
                // (reclaimWithinCohort: Any, `CanAlwaysReclaim`), hold what it would take so
                // others cannot borrow it in this cycle (`reserveCapacityForUnreclaimablePreempt`).
                let cq = world.cluster_queue(h.cq);
                if cq.preemption.reclaim_within_cohort != PreemptionPolicy::Any {
                    for (fr, amount) in quota_to_reserve(tree, h.cq, &a) {
                        tree.add_usage(tree.cq_node(h.cq), fr, amount);
                    }
                }
                let not_admitted = a.not_admitted.clone().expect("Preempt has a message");
                decisions.push(Decision::Requeue {
                    head: h,
                    reason: RequeueReason::PreemptionNoCandidates,
                    not_admitted,
                });
                continue;
            }
            _ => {}
        }
        if e.targets.iter().any(|t| preempted.contains(&t.workload)) {
            decisions.push(Decision::Requeue {
                head: h,
                reason: RequeueReason::FailedAfterNomination,
                not_admitted: NotAdmitted {
                    reason: REASON_WAITING_FOR_QUOTA,
                    message: "Workload has overlapping preemption targets with another workload"
                        .into(),
                },
            });
            continue;
        }
        // Fits once every victim chosen so far (this entry's and earlier ones') is gone?
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
        if !ok {
            decisions.push(Decision::Requeue {
                head: h,
                reason: RequeueReason::FailedAfterNomination,
                not_admitted: NotAdmitted {
                    reason: REASON_WAITING_FOR_QUOTA,
                    message: "Workload no longer fits after processing another workload".into(),
                },
            });
            continue;
        }
        preempted.extend(e.targets.iter().map(|t| t.workload));
        for &(fr, amount) in &a.usage {
            tree.add_usage(tree.cq_node(h.cq), fr, amount);
        }
        if a.mode == Mode::Preempt {
            let base = a.not_admitted.clone().expect("Preempt has a message");
            let message = format!(
                "{}. Pending the preemption of {} workload(s)",
                base.message,
                e.targets.len()
            );
            decisions.push(Decision::Preempt {
                head: h,
                targets: e.targets,
                not_admitted: NotAdmitted {
                    reason: REASON_WAITING_FOR_PREEMPTED,
                    message,
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
                for &(fr, amount) in &a.usage {
                    tree.add_usage(tree.cq_node(h.cq), fr, -amount);
                }
                decisions.push(Decision::Requeue {
                    head: h,
                    reason: RequeueReason::FailedAfterNomination,
                    not_admitted: NotAdmitted {
                        reason: REASON_WAITING_FOR_QUOTA,
                        message,
                    },
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
        let totals = quota_requests(world, cq, &ps.requests).scaled(i64::from(adm.count));
        for (r, amount) in totals.iter() {
            if let Some(&(_, f)) = adm.flavors.iter().find(|(fr, _)| *fr == r) {
                out.push((tree.fr(f, r), amount));
            }
        }
    }
    merge_usage(out)
}
