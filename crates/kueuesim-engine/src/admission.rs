//! One Kueue scheduling cycle: nominate heads, order them, process them against a snapshot.
//!
//! Follows `pkg/scheduler/scheduler.go` (`schedule`, `nominate`, `processEntry`) and
//! `pkg/scheduler/flavorassigner/flavorassigner.go`. The cycle is a pure function of the world,
//! the quota usage and the heads: it returns decisions as data and the engine applies them.
//!
//! Modelled so far: nominal quota of each ClusterQueue (no cohorts, borrowing or preemption
//! yet), flavor order, flavor taints and nodeSelector matching on the flavor's own label keys,
//! the granular `QuotaReserved=False` reasons and Kueue's messages.

use kueuesim_model::labels::tolerated;
use kueuesim_model::{
    ClusterQueueId, FlavorId, QueueingStrategy, ResourceId, ResourceList, Workload, WorkloadId,
    World, format_amount,
};

use crate::outcome::PodSetAssignment;
use crate::queues::QueueKey;

/// Quota usage of every ClusterQueue per (flavor, resource), dense.
#[derive(Clone, Debug)]
pub struct QuotaUsage {
    n_flavors: usize,
    n_resources: usize,
    amounts: Vec<i64>,
}

impl QuotaUsage {
    /// Zero usage for the world's ClusterQueues.
    pub fn new(world: &World) -> Self {
        let n_flavors = world.flavors.len();
        let n_resources = world.resources.len();
        QuotaUsage {
            n_flavors,
            n_resources,
            amounts: vec![0; world.cluster_queues.len() * n_flavors * n_resources],
        }
    }

    fn slot(&self, cq: ClusterQueueId, f: FlavorId, r: ResourceId) -> usize {
        (cq.index() * self.n_flavors + f.index()) * self.n_resources + r.index()
    }

    /// Usage of `(f, r)` in `cq`.
    pub fn get(&self, cq: ClusterQueueId, f: FlavorId, r: ResourceId) -> i64 {
        self.amounts[self.slot(cq, f, r)]
    }

    /// Adds (or with a negative sign removes) a workload's usage.
    pub fn add(&mut self, cq: ClusterQueueId, usage: &[FlavorResourceAmount], sign: i64) {
        for u in usage {
            let s = self.slot(cq, u.flavor, u.resource);
            self.amounts[s] += sign * u.amount;
        }
    }
}

/// An amount of one resource of one flavor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlavorResourceAmount {
    /// The flavor.
    pub flavor: FlavorId,
    /// The resource.
    pub resource: ResourceId,
    /// The amount, in Kueue units.
    pub amount: i64,
}

/// A successful flavor assignment of a whole workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// Per pod set, the flavors and counts.
    pub pod_sets: Vec<PodSetAssignment>,
    /// The total quota it uses, merged per (flavor, resource).
    pub usage: Vec<FlavorResourceAmount>,
}

/// Why a workload did not get quota, as the `QuotaReserved=False` condition says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAdmitted {
    /// The granular reason (`UnadmittedWorkloadsObservability`).
    pub reason: &'static str,
    /// Kueue's message.
    pub message: String,
}

/// What happens to a head that was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requeue {
    /// Back to the active heap (StrictFIFO, or a transient reason).
    Active,
    /// To the inadmissible set until capacity may have been freed (BestEffortFIFO).
    Inadmissible,
}

/// The decisions of one cycle.
#[derive(Clone, Debug, Default)]
pub struct CycleDecisions {
    /// Workloads that get quota now, in processing order.
    pub admit: Vec<(WorkloadId, ClusterQueueId, Assignment)>,
    /// Heads that did not, with where they go and why.
    pub requeue: Vec<(ClusterQueueId, QueueKey, Requeue, NotAdmitted)>,
}

/// Reason severities for `resolveNoFitReason`: the most severe one names a pod set's failure.
fn severity(reason: &str) -> u8 {
    match reason {
        REASON_NO_MATCHING_FLAVOR => 4,
        REASON_EXCEEDS_MAX_QUOTA => 3,
        REASON_WAITING_FOR_QUOTA => 2,
        _ => 0,
    }
}

/// `WaitingForQuota`.
pub const REASON_WAITING_FOR_QUOTA: &str = "WaitingForQuota";
/// `ExceedsMaxQuota`.
pub const REASON_EXCEEDS_MAX_QUOTA: &str = "ExceedsMaxQuota";
/// `NoMatchingFlavor`.
pub const REASON_NO_MATCHING_FLAVOR: &str = "NoMatchingFlavor";
/// `Misconfigured`.
pub const REASON_MISCONFIGURED: &str = "Misconfigured";

/// One pod set's failure: sorted reasons and the most severe reason code.
struct PodSetFailure {
    reasons: Vec<String>,
    reason: &'static str,
}

/// Per-pod requests as Kueue counts them against a ClusterQueue: the pod template's requests,
/// plus `pods: 1` when the ClusterQueue covers the `pods` resource.
fn quota_requests(world: &World, cq: ClusterQueueId, per_pod: &ResourceList) -> ResourceList {
    let mut req = per_pod.clone();
    if let Some(pods) = world.resources.lookup("pods")
        && world.cluster_queue(cq).group_of(pods).is_some()
    {
        req.set(pods, 1);
    }
    req
}

/// Whether flavor `f` may hold this pod set at all (`checkFlavorForPodSets`): flavor taints
/// tolerated by the pod's and the flavor's tolerations, and the pod's nodeSelector matching
/// the flavor's nodeLabels on the keys the flavor defines. Returns the reason if not.
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

/// Assigns flavors to every pod set of `wl` in `cq` given the current `usage`
/// (`FlavorAssigner.Assign` restricted to nominal quota, no preemption).
pub fn assign_flavors(
    world: &World,
    cq: ClusterQueueId,
    wl: &Workload,
    usage: &QuotaUsage,
) -> Result<Assignment, NotAdmitted> {
    let queue = world.cluster_queue(cq);
    let mut assigned: Vec<FlavorResourceAmount> = Vec::new();
    let mut pod_sets = Vec::with_capacity(wl.pod_sets.len());
    let mut failures: Vec<(String, PodSetFailure)> = Vec::new();

    for (ps_index, ps) in wl.pod_sets.iter().enumerate() {
        let totals = quota_requests(world, cq, &ps.requests).scaled(i64::from(ps.count));
        let mut flavors: Vec<(ResourceId, FlavorId)> = Vec::new();
        let mut reasons: Vec<String> = Vec::new();
        let mut ps_reason: &'static str = "";
        let mut failed = false;

        // Resources the ClusterQueue does not cover fail the pod set, unless requested at 0.
        for (r, amount) in totals.iter() {
            if amount != 0 && queue.group_of(r).is_none() {
                reasons.push(format!(
                    "resource {} unavailable in ClusterQueue",
                    world.resources.name(r)
                ));
                ps_reason = REASON_NO_MATCHING_FLAVOR;
                failed = true;
            }
        }

        // One flavor per resource group: the group is the unit of flavor choice.
        for group in &queue.resource_groups {
            let requested: Vec<(ResourceId, i64)> = totals
                .iter()
                .filter(|(r, _)| group.covered.contains(r))
                .collect();
            if requested.is_empty() {
                continue;
            }
            let mut group_reason: Option<&'static str> = None;
            let mut chosen: Option<FlavorId> = None;
            for fq in &group.flavors {
                if let Some(why) = flavor_mismatch(world, fq.flavor, wl, ps_index) {
                    reasons.push(why);
                    group_reason = Some(least_severe(group_reason, REASON_NO_MATCHING_FLAVOR));
                    continue;
                }
                let mut flavor_reason: Option<&'static str> = None;
                for &(r, request) in &requested {
                    let nominal = fq
                        .resources
                        .iter()
                        .find(|q| q.resource == r)
                        .map_or(0, |q| q.nominal);
                    let earlier = assigned
                        .iter()
                        .filter(|u| u.flavor == fq.flavor && u.resource == r)
                        .map(|u| u.amount)
                        .sum::<i64>();
                    let val = earlier + request;
                    let available = (nominal - usage.get(cq, fq.flavor, r)).max(0);
                    let name = world.resources.name(r);
                    let fname = &world.flavor(fq.flavor).name;
                    // Without a cohort the largest request that could ever fit
                    // (PotentialAvailable) is the nominal quota.
                    if val > nominal {
                        reasons.push(format!(
                            "insufficient quota for {name} in flavor {fname}, previously considered podsets requests ({}) + current podset request ({}) > maximum capacity ({})",
                            format_amount(name, earlier),
                            format_amount(name, request),
                            format_amount(name, nominal)
                        ));
                        flavor_reason = Some(most_severe(flavor_reason, REASON_EXCEEDS_MAX_QUOTA));
                    } else if val > available {
                        reasons.push(format!(
                            "insufficient unused quota for {name} in flavor {fname}, {} more needed",
                            format_amount(name, val - available)
                        ));
                        flavor_reason = Some(most_severe(flavor_reason, REASON_WAITING_FOR_QUOTA));
                    }
                }
                match flavor_reason {
                    None => {
                        chosen = Some(fq.flavor);
                        break;
                    }
                    Some(r) => group_reason = Some(least_severe(group_reason, r)),
                }
            }
            match chosen {
                Some(f) => {
                    for &(r, amount) in &requested {
                        flavors.push((r, f));
                        assigned.push(FlavorResourceAmount {
                            flavor: f,
                            resource: r,
                            amount,
                        });
                    }
                }
                None => {
                    failed = true;
                    // Across groups the most severe reason wins (co-requisites); within a group
                    // the least severe flavor attempt (the best alternative) stands for it.
                    ps_reason = most_severe(
                        Some(ps_reason),
                        group_reason.unwrap_or(REASON_NO_MATCHING_FLAVOR),
                    );
                }
            }
        }

        if failed {
            reasons.sort();
            failures.push((
                ps.name.clone(),
                PodSetFailure {
                    reasons,
                    reason: ps_reason,
                },
            ));
        } else {
            flavors.sort();
            pod_sets.push(PodSetAssignment {
                flavors,
                count: ps.count,
            });
        }
    }

    if failures.is_empty() {
        Ok(Assignment {
            pod_sets,
            usage: merge_usage(assigned),
        })
    } else {
        let reason = failures
            .iter()
            .fold(None, |acc, (_, f)| Some(most_severe(acc, f.reason)))
            .unwrap_or(REASON_NO_MATCHING_FLAVOR);
        let message = failures
            .iter()
            .map(|(name, f)| {
                format!(
                    "couldn't assign flavors to pod set {name}: {}",
                    f.reasons.join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        Err(NotAdmitted { reason, message })
    }
}

fn most_severe(a: Option<&'static str>, b: &'static str) -> &'static str {
    match a {
        Some(a) if severity(a) >= severity(b) => a,
        _ => b,
    }
}

fn least_severe(a: Option<&'static str>, b: &'static str) -> &'static str {
    match a {
        Some(a) if severity(a) <= severity(b) => a,
        _ => b,
    }
}

fn merge_usage(mut v: Vec<FlavorResourceAmount>) -> Vec<FlavorResourceAmount> {
    v.sort_by_key(|u| (u.flavor, u.resource));
    let mut out: Vec<FlavorResourceAmount> = Vec::with_capacity(v.len());
    for u in v {
        match out.last_mut() {
            Some(last) if last.flavor == u.flavor && last.resource == u.resource => {
                last.amount += u.amount
            }
            _ => out.push(u),
        }
    }
    out
}

/// Whether `usage` fits in `cq` on top of `current` (the snapshot's `Fits`).
fn fits(
    world: &World,
    cq: ClusterQueueId,
    usage: &[FlavorResourceAmount],
    current: &QuotaUsage,
) -> bool {
    let queue = world.cluster_queue(cq);
    usage.iter().all(|u| {
        let nominal = queue.quota(u.flavor, u.resource).map_or(0, |q| q.nominal);
        current.get(cq, u.flavor, u.resource) + u.amount <= nominal
    })
}

/// A head popped for this cycle.
#[derive(Clone, Copy, Debug)]
pub struct Head {
    /// Its ClusterQueue.
    pub cq: ClusterQueueId,
    /// Its queue position.
    pub key: QueueKey,
}

/// Runs one scheduling cycle over `heads` (`Scheduler.schedule`).
pub fn run_cycle(world: &World, usage: &QuotaUsage, heads: &[Head]) -> CycleDecisions {
    let mut decisions = CycleDecisions::default();
    // Nominate: early checks, then a flavor assignment against the cycle-start snapshot.
    let mut entries: Vec<(Head, Assignment)> = Vec::new();
    for &h in heads {
        let wl = world.workload(h.key.workload);
        let queue = world.cluster_queue(h.cq);
        let ns_labels = world.namespace(&wl.namespace).map(|n| &n.labels);
        let ns_ok = match (&queue.namespace_selector, ns_labels) {
            (None, _) => false,
            (Some(sel), Some(labels)) => sel.matches(labels),
            (Some(sel), None) => sel.matches(&Default::default()),
        };
        if !ns_ok {
            // A namespace mismatch goes to the inadmissible list even under StrictFIFO
            // (RequeueReasonNamespaceMismatch).
            decisions.requeue.push((
                h.cq,
                h.key,
                Requeue::Inadmissible,
                NotAdmitted {
                    reason: REASON_MISCONFIGURED,
                    message: "workload namespace doesn't match ClusterQueue selector".into(),
                },
            ));
            continue;
        }
        match assign_flavors(world, h.cq, wl, usage) {
            Ok(a) => entries.push((h, a)),
            Err(why) => {
                let to = match queue.queueing_strategy {
                    QueueingStrategy::StrictFIFO => Requeue::Active,
                    QueueingStrategy::BestEffortFIFO => Requeue::Inadmissible,
                };
                decisions.requeue.push((h.cq, h.key, to, why));
            }
        }
    }

    // Order (classical iterator): borrowing level (all 0 without cohorts), then higher
    // priority (PrioritySortingWithinCohort), then earlier queue-order timestamp. The sort is
    // stable, so equal entries keep ClusterQueue order.
    entries.sort_by_key(|(h, _)| (h.key.priority, h.key.timestamp));

    // Process: usage accumulates in the snapshot, so later entries see earlier admissions.
    let mut snapshot = usage.clone();
    for (h, a) in entries {
        if fits(world, h.cq, &a.usage, &snapshot) {
            snapshot.add(h.cq, &a.usage, 1);
            decisions.admit.push((h.key.workload, h.cq, a));
        } else {
            // Skipped entries are requeued as transient (back to the heap) in both strategies.
            decisions.requeue.push((
                h.cq,
                h.key,
                Requeue::Active,
                NotAdmitted {
                    reason: REASON_WAITING_FOR_QUOTA,
                    message: "Workload no longer fits after processing another workload".into(),
                },
            ));
        }
    }
    decisions
}

/// The quota usage of an admission given as data (`status.admission` of the input): each pod
/// set's requests times its admitted count, charged to the flavor named per resource.
pub fn usage_of(
    world: &World,
    cq: ClusterQueueId,
    wl: &Workload,
    pod_sets: &[kueuesim_model::PodSetAdmission],
) -> Vec<FlavorResourceAmount> {
    let mut out = Vec::new();
    for (ps, adm) in wl.pod_sets.iter().zip(pod_sets) {
        let totals = quota_requests(world, cq, &ps.requests).scaled(i64::from(adm.count));
        for (r, amount) in totals.iter() {
            if let Some(&(_, f)) = adm.flavors.iter().find(|(fr, _)| *fr == r) {
                out.push(FlavorResourceAmount {
                    flavor: f,
                    resource: r,
                    amount,
                });
            }
        }
    }
    merge_usage(out)
}
