//! The policies a run had in effect, in one place: Kueue's fair sharing and its strategies,
//! Admission Fair Sharing, waitForPodsReady, each ClusterQueue's cohort, queueing strategy and
//! preemption, and the Kueue feature gates set away from their defaults. `summary.policies`
//! of the result (so `compare` can say which differ between two runs) and the summary's
//! header lines, where equal settings are folded (`StrictFIFO: all`).

use std::collections::BTreeMap;

use serde::Serialize;

use kueuesim_model::{FairSharingStrategy, KueueGates, PreemptionPolicy, World};

/// `summary.policies`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Policies {
    /// `false` when the Simulation leaves Kueue out (`spec.kueue.enabled: false`: every job
    /// goes to its scheduler directly); absent when Kueue is in front, as in every run before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kueue_enabled: Option<bool>,
    /// Kueue's Configuration `fairSharing`.
    pub fair_sharing: FairSharingPolicy,
    /// Kueue's Configuration `admissionFairSharing`, and the ClusterQueues whose
    /// `admissionScope.admissionMode` is `UsageBasedAdmissionFairSharing`.
    pub admission_fair_sharing: AdmissionFairSharingPolicy,
    /// Kueue's Configuration `waitForPodsReady`.
    pub wait_for_pods_ready: WaitForPodsReadyPolicy,
    /// Per ClusterQueue, in the scenario's order.
    pub cluster_queues: Vec<ClusterQueuePolicies>,
    /// The Kueue feature gates (`Simulation.spec.kueue.featureGates`) whose value differs
    /// from the default of the Kueue version kueuesim follows: name → enabled.
    pub feature_gates: BTreeMap<&'static str, bool>,
}

/// `fairSharing` of Kueue's Configuration.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FairSharingPolicy {
    pub enabled: bool,
    /// `preemptionStrategies`, in order (empty when off).
    pub preemption_strategies: Vec<&'static str>,
}

/// `admissionFairSharing` of Kueue's Configuration.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionFairSharingPolicy {
    pub enabled: bool,
    /// `usageHalfLifeTime`, as a Go duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_half_life_time: Option<String>,
    /// `usageSamplingInterval`, as a Go duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_sampling_interval: Option<String>,
    /// The ClusterQueues with `admissionScope.admissionMode: UsageBasedAdmissionFairSharing`.
    pub cluster_queues: Vec<String>,
}

/// `waitForPodsReady` of Kueue's Configuration.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitForPodsReadyPolicy {
    pub enabled: bool,
    /// `timeout`, as a Go duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_admission: Option<bool>,
    /// `requeuingStrategy.backoffBaseSeconds` and `backoffMaxSeconds`, as Go durations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_base: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_max: Option<String>,
    /// `requeuingStrategy.backoffLimitCount` (absent: no limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_limit_count: Option<u32>,
}

/// One ClusterQueue's policies.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterQueuePolicies {
    pub name: String,
    /// `spec.cohortName` (absent: in no cohort, so it neither lends nor borrows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    /// `spec.queueingStrategy`.
    pub queueing_strategy: &'static str,
    /// `spec.preemption`.
    pub preemption: PreemptionPolicies,
}

/// `spec.preemption` of a ClusterQueue, as Kueue spells it.
#[derive(Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreemptionPolicies {
    pub within_cluster_queue: &'static str,
    pub reclaim_within_cohort: &'static str,
    /// `borrowWithinCohort.policy`.
    pub borrow_within_cohort: &'static str,
    /// `borrowWithinCohort.maxPriorityThreshold`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub borrow_max_priority_threshold: Option<i32>,
}

fn preemption_policy(p: PreemptionPolicy) -> &'static str {
    match p {
        PreemptionPolicy::Never => "Never",
        PreemptionPolicy::LowerPriority => "LowerPriority",
        PreemptionPolicy::LowerOrNewerEqualPriority => "LowerOrNewerEqualPriority",
        PreemptionPolicy::Any => "Any",
    }
}

fn strategy(s: FairSharingStrategy) -> &'static str {
    match s {
        FairSharingStrategy::LessThanOrEqualToFinalShare => "LessThanOrEqualToFinalShare",
        FairSharingStrategy::LessThanInitialShare => "LessThanInitialShare",
    }
}

/// The Kueue feature gates kueuesim models, by Kueue's name, with their value in `g`.
fn gates(g: &KueueGates) -> [(&'static str, bool); 5] {
    [
        (
            "FlavorFungibilityPreserveScanProgress",
            g.preserve_scan_progress,
        ),
        (
            "RecomputeAssignmentUponPreemptionTargetsOverlap",
            g.recompute_on_overlap,
        ),
        (
            "SchedulingEquivalenceHashing",
            g.scheduling_equivalence_hashing,
        ),
        ("TASFailedNodeReplacement", g.tas_failed_node_replacement),
        (
            "TASFailedNodeReplacementFailFast",
            g.tas_failed_node_replacement_fail_fast,
        ),
    ]
}

/// The policies of `world`.
pub fn policies(world: &World) -> Policies {
    let k = &world.config.kueue;
    let fair = k.fair_sharing.as_deref().unwrap_or(&[]);
    let afs = k.admission_fair_sharing.as_ref();
    let wfpr = k.wait_for_pods_ready.as_ref();
    let defaults = gates(&KueueGates::default());
    Policies {
        kueue_enabled: (!world.config.kueue_enabled).then_some(false),
        fair_sharing: FairSharingPolicy {
            enabled: k.fair_sharing.is_some(),
            preemption_strategies: fair.iter().map(|s| strategy(*s)).collect(),
        },
        admission_fair_sharing: AdmissionFairSharingPolicy {
            enabled: afs.is_some(),
            usage_half_life_time: afs.map(|a| a.half_life.to_string()),
            usage_sampling_interval: afs.map(|a| a.sampling_interval.to_string()),
            cluster_queues: world
                .cluster_queues
                .iter()
                .filter(|c| c.admission_fair_sharing)
                .map(|c| c.name.clone())
                .collect(),
        },
        wait_for_pods_ready: WaitForPodsReadyPolicy {
            enabled: wfpr.is_some(),
            timeout: wfpr.map(|w| w.timeout.to_string()),
            block_admission: wfpr.map(|w| w.block_admission),
            backoff_base: wfpr.map(|w| w.backoff_base.to_string()),
            backoff_max: wfpr.map(|w| w.backoff_max.to_string()),
            backoff_limit_count: wfpr.and_then(|w| w.backoff_limit),
        },
        cluster_queues: world
            .cluster_queues
            .iter()
            .map(|c| ClusterQueuePolicies {
                name: c.name.clone(),
                cohort: c.cohort.map(|id| world.cohorts[id.index()].name.clone()),
                queueing_strategy: c.queueing_strategy.as_str(),
                preemption: PreemptionPolicies {
                    within_cluster_queue: preemption_policy(c.preemption.within_cluster_queue),
                    reclaim_within_cohort: preemption_policy(c.preemption.reclaim_within_cohort),
                    borrow_within_cohort: preemption_policy(c.preemption.borrow_within_cohort),
                    borrow_max_priority_threshold: c.preemption.borrow_max_priority_threshold,
                },
            })
            .collect(),
        feature_gates: gates(&world.config.kueue_gates)
            .into_iter()
            .zip(defaults)
            .filter(|((_, on), (_, default))| on != default)
            .map(|((name, on), _)| (name, on))
            .collect(),
    }
}

/// At most this many ClusterQueue names per folded group on a summary line.
const NAMES_SHOWN: usize = 8;

/// `value: a, b; other: c` — the ClusterQueues grouped by equal value (groups in order of
/// first appearance), or `value: all` when every one has the same.
fn folded(items: &[(String, String)]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, value) in items {
        match groups.iter_mut().find(|(v, _)| *v == value.as_str()) {
            Some((_, names)) => names.push(name),
            None => groups.push((value, vec![name])),
        }
    }
    if let [(value, _)] = groups.as_slice() {
        return format!("{value}: all");
    }
    groups
        .iter()
        .map(|(value, names)| {
            let mut shown = names
                .iter()
                .take(NAMES_SHOWN)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            if names.len() > NAMES_SHOWN {
                shown.push_str(&format!(", … {} more", names.len() - NAMES_SHOWN));
            }
            format!("{value}: {shown}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The summary's header lines for `p` (none without ClusterQueues: no Kueue policy applies).
pub fn header_lines(p: &Policies) -> Vec<String> {
    if p.kueue_enabled == Some(false) {
        // No Kueue policy applies: its objects stay in the input and admit nothing.
        return vec![
            "Policies:     Kueue off (spec.kueue.enabled: false): every job goes to its scheduler directly"
                .to_string(),
        ];
    }
    if p.cluster_queues.is_empty() {
        return Vec::new();
    }
    let fair = if p.fair_sharing.enabled {
        format!(
            "fair sharing on ({})",
            p.fair_sharing.preemption_strategies.join(", ")
        )
    } else {
        "fair sharing off".to_string()
    };
    let afs = &p.admission_fair_sharing;
    let afs = match (afs.enabled, afs.cluster_queues.as_slice()) {
        (false, _) => "admission fair sharing off".to_string(),
        (true, []) => "admission fair sharing configured, used by no ClusterQueue".to_string(),
        (true, cqs) => format!(
            "admission fair sharing on for {} (usage half-life {})",
            if cqs.len() == p.cluster_queues.len() {
                "all".to_string()
            } else {
                cqs.join(", ")
            },
            afs.usage_half_life_time.as_deref().unwrap_or("0s")
        ),
    };
    let w = &p.wait_for_pods_ready;
    let wfpr = if w.enabled {
        format!(
            "waitForPodsReady on (timeout {}, requeue back-off {} to {}{}{})",
            w.timeout.as_deref().unwrap_or("-"),
            w.backoff_base.as_deref().unwrap_or("-"),
            w.backoff_max.as_deref().unwrap_or("-"),
            w.backoff_limit_count.map_or(String::new(), |n| format!(
                ", deactivated after {n} requeues"
            )),
            if w.block_admission == Some(true) {
                ", blockAdmission"
            } else {
                ""
            }
        )
    } else {
        "waitForPodsReady off".to_string()
    };
    let gates = if p.feature_gates.is_empty() {
        "feature gates at their defaults".to_string()
    } else {
        format!(
            "feature gates {}",
            p.feature_gates
                .iter()
                .map(|(g, on)| format!("{g}={on}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let cqs = &p.cluster_queues;
    let each = |f: &dyn Fn(&ClusterQueuePolicies) -> String| -> String {
        let items: Vec<(String, String)> = cqs.iter().map(|c| (c.name.clone(), f(c))).collect();
        folded(&items)
    };
    let cohort = each(&|c| {
        c.cohort
            .as_ref()
            .map_or("no cohort".to_string(), |n| format!("cohort {n}"))
    });
    let queueing = each(&|c| c.queueing_strategy.to_string());
    let preemption = each(&|c| {
        let p = &c.preemption;
        format!(
            "withinClusterQueue {}, reclaimWithinCohort {}, borrowWithinCohort {}{}",
            p.within_cluster_queue,
            p.reclaim_within_cohort,
            p.borrow_within_cohort,
            p.borrow_max_priority_threshold
                .map_or(String::new(), |t| format!(" (maxPriorityThreshold {t})"))
        )
    });
    vec![
        format!("Policies:     {fair}; {afs}; {wfpr}; {gates}"),
        format!("  Cohorts:    {cohort}"),
        format!("  Queueing:   {queueing}"),
        format!("  Preemption: {preemption}"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_settings_fold_and_others_group_in_order() {
        let items = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            folded(&items(&[("a", "StrictFIFO"), ("b", "StrictFIFO")])),
            "StrictFIFO: all"
        );
        assert_eq!(
            folded(&items(&[
                ("ml-team", "BestEffortFIFO"),
                ("inference", "StrictFIFO"),
                ("research", "BestEffortFIFO"),
            ])),
            "BestEffortFIFO: ml-team, research; StrictFIFO: inference"
        );
        let many: Vec<(String, String)> = (0..10)
            .map(|i| (format!("q{i}"), if i == 0 { "A" } else { "B" }.to_string()))
            .collect();
        assert_eq!(
            folded(&many),
            "A: q0; B: q1, q2, q3, q4, q5, q6, q7, q8, … 1 more"
        );
    }
}
