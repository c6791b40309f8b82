//! Capacity checks: pure analyses of the loaded `World` and the run's workloads (through its
//! `Tally`) that a planner should see before trusting the figures — GPU quota its nodes cannot
//! hold, GPU capacity no quota reaches, ClusterQueues whose largest workload can never be
//! admitted or placed, workloads that bypass Kueue, and preemption loops (a workload that
//! preempted the same victims again and again). The CLI prints them as warnings;
//! `-o json` lists them in `summary.checks`.

use std::collections::BTreeMap;

use serde::Serialize;

use kueuesim_engine::outcome::Tally;
use kueuesim_model::resources::GPU;
use kueuesim_model::{ClusterQueueId, CohortId, FlavorId, ResourceId, SimDuration, World};

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// What was found: `QuotaAboveNodeCapacity`, `CapacityWithoutQuota`,
    /// `WorkloadExceedsQuota`, `PodExceedsNodes`, `WorkloadsBypassKueue`,
    /// `WorkloadsNameMissingLocalQueue`, `PreemptionLoop`.
    pub kind: &'static str,
    /// The object it is about (`ResourceFlavor/a`, `ClusterQueue/b`, `Namespace/c`).
    pub object: String,
    /// One line, as printed after `warning: `.
    pub message: String,
}

/// Every check of `world` given the run's workloads folded into `tally` (a lean run's and
/// a full run's agree), in a fixed order: flavors, ClusterQueues, then bypassing workloads.
pub fn checks_of(world: &World, tally: &Tally) -> Vec<Check> {
    let mut out = Vec::new();
    let Some(gpu) = world.resources.lookup(GPU) else {
        bypass_checks(world, tally, &mut out);
        preemption_loop_checks(tally, &mut out);
        return out;
    };
    if world.has_nodes() {
        flavor_checks(world, gpu, &mut out);
    }
    cluster_queue_checks(world, gpu, tally, &mut out);
    bypass_checks(world, tally, &mut out);
    preemption_loop_checks(tally, &mut out);
    out
}

/// GPUs of the nodes a flavor's `nodeLabels` select (Kueue's flavor-to-node matching) among
/// the nodes there at the start: a Timeline's later nodes come with their own quota change
/// (the quota compared with them is the start's too).
fn flavor_node_gpus(world: &World, f: FlavorId, gpu: ResourceId) -> i64 {
    let labels = &world.flavor(f).node_labels;
    let mut late = vec![false; world.nodes.len()];
    for n in &world.late_nodes {
        late[n.index()] = true;
    }
    world
        .nodes
        .iter()
        .zip(late)
        .filter(|(n, late)| !late && n.labels.contains_all(labels))
        .map(|(n, _)| n)
        .map(|n| n.allocatable.get(gpu.index()).copied().unwrap_or(0))
        .sum()
}

/// Nominal GPU quota in flavor `f`: of one ClusterQueue, or of everything (ClusterQueues and
/// Cohorts) when `cq` is `None`.
fn nominal_in(world: &World, f: FlavorId, gpu: ResourceId, cq: Option<ClusterQueueId>) -> i64 {
    let groups: Vec<&kueuesim_model::ResourceGroup> = match cq {
        Some(c) => world.cluster_queue(c).resource_groups.iter().collect(),
        None => world
            .cluster_queues
            .iter()
            .flat_map(|c| &c.resource_groups)
            .chain(world.cohorts.iter().flat_map(|c| &c.resource_groups))
            .collect(),
    };
    groups
        .into_iter()
        .flat_map(|rg| &rg.flavors)
        .filter(|fq| fq.flavor == f)
        .flat_map(|fq| &fq.resources)
        .filter(|rq| rq.resource == gpu)
        .map(|rq| rq.nominal)
        .sum()
}

/// Per flavor: nominal GPU quota (all ClusterQueues and Cohorts) above the GPUs of its nodes
/// (Kueue admits what no node can run: gangs wait for PodsReadyTimeout), or node GPUs above
/// all quota (capacity Kueue can never admit to).
fn flavor_checks(world: &World, gpu: ResourceId, out: &mut Vec<Check>) {
    for (i, flavor) in world.flavors.iter().enumerate() {
        let f = FlavorId::from_index(i);
        let (quota, nodes) = (
            nominal_in(world, f, gpu, None),
            flavor_node_gpus(world, f, gpu),
        );
        let object = format!("ResourceFlavor/{}", flavor.name);
        if quota > nodes {
            out.push(Check {
                kind: "QuotaAboveNodeCapacity",
                message: format!(
                    "ResourceFlavor {}: nominal GPU quota {quota} exceeds the {nodes} GPUs of its nodes: Kueue can admit {} GPUs of workloads no node can run (they hold quota until PodsReadyTimeout or forever)",
                    flavor.name,
                    quota - nodes
                ),
                object,
            });
        } else if nodes > quota && quota > 0 {
            out.push(Check {
                kind: "CapacityWithoutQuota",
                message: format!(
                    "ResourceFlavor {}: its nodes have {nodes} GPUs but nominal GPU quota totals {quota}: {} GPUs no ClusterQueue can reach",
                    flavor.name,
                    nodes - quota
                ),
                object,
            });
        }
    }
}

/// The most GPUs a ClusterQueue can hold in flavor `f`: its nominal quota plus what it may
/// borrow (the rest of its cohort tree's nominal quota, capped by its borrowingLimit). An
/// upper bound: lending limits and others' usage only lower it.
///
/// `tree_nominal` keeps each (root cohort, flavor)'s whole nominal quota once worked out, so
/// ten thousand ClusterQueues of one cohort cost one pass over them, not one each.
fn reachable_in(
    world: &World,
    c: ClusterQueueId,
    f: FlavorId,
    gpu: ResourceId,
    tree_nominal: &mut BTreeMap<(CohortId, FlavorId), i64>,
) -> i64 {
    let cq = world.cluster_queue(c);
    let own = nominal_in(world, f, gpu, Some(c));
    let Some(cohort) = cq.cohort else { return own };
    let root = |mut id: CohortId| {
        while let Some(p) = world.cohorts[id.index()].parent {
            id = p;
        }
        id
    };
    let r = root(cohort);
    // Every ClusterQueue of the tree, this one included, and its cohorts.
    let whole = *tree_nominal.entry((r, f)).or_insert_with(|| {
        world
            .cluster_queues
            .iter()
            .enumerate()
            .filter(|(_, o)| o.cohort.is_some_and(|oc| root(oc) == r))
            .map(|(j, _)| nominal_in(world, f, gpu, Some(ClusterQueueId::from_index(j))))
            .sum::<i64>()
            + world
                .cohorts
                .iter()
                .enumerate()
                .filter(|(j, _)| root(CohortId::from_index(*j)) == r)
                .flat_map(|(_, co)| &co.resource_groups)
                .flat_map(|rg| &rg.flavors)
                .filter(|fq| fq.flavor == f)
                .flat_map(|fq| &fq.resources)
                .filter(|rq| rq.resource == gpu)
                .map(|rq| rq.nominal)
                .sum::<i64>()
    });
    let others = whole - own;
    let limit = cq
        .resource_groups
        .iter()
        .flat_map(|rg| &rg.flavors)
        .filter(|fq| fq.flavor == f)
        .flat_map(|fq| &fq.resources)
        .find(|rq| rq.resource == gpu)
        .and_then(|rq| rq.borrowing_limit);
    own + limit.map_or(others, |l| others.min(l))
}

/// Per ClusterQueue: its largest workload asks for more GPUs than any of its flavors can
/// reach (never admitted), or its largest pod for more GPUs than any node has (admitted,
/// never placed).
fn cluster_queue_checks(world: &World, gpu: ResourceId, tally: &Tally, out: &mut Vec<Check>) {
    let largest_node = world
        .nodes
        .iter()
        .map(|n| n.allocatable.get(gpu.index()).copied().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let mut tree_nominal = BTreeMap::new();
    for (i, (cq, t)) in world
        .cluster_queues
        .iter()
        .zip(&tally.cluster_queues)
        .enumerate()
    {
        let c = ClusterQueueId::from_index(i);
        let object = format!("ClusterQueue/{}", cq.name);
        if let Some((gpus, name)) = &t.largest_workload {
            let reach = cq
                .resource_groups
                .iter()
                .filter(|rg| rg.covered.contains(&gpu))
                .flat_map(|rg| &rg.flavors)
                .map(|fq| reachable_in(world, c, fq.flavor, gpu, &mut tree_nominal))
                .max()
                .unwrap_or(0);
            if *gpus > reach {
                out.push(Check {
                    kind: "WorkloadExceedsQuota",
                    object: object.clone(),
                    message: format!(
                        "ClusterQueue {}: its largest workload {name} asks for {gpus} GPUs, more than its quota can reach in any flavor ({reach}, borrowing included): it can never be admitted",
                        cq.name
                    ),
                });
            }
        }
        if let (Some((gpus, name)), true) = (&t.largest_pod, world.has_nodes())
            && *gpus > largest_node
        {
            out.push(Check {
                kind: "PodExceedsNodes",
                object,
                message: format!(
                    "ClusterQueue {}: a pod of {name} asks for {gpus} GPUs, more than any node has ({largest_node}): it can never be placed",
                    cq.name
                ),
            });
        }
    }
}

/// Workloads Kueue never sees: no `kueue.x-k8s.io/queue-name` label and no `default`
/// LocalQueue in their namespace, or a namespace its `managedJobsNamespaceSelector` leaves
/// out (and how many of them are suspended, so never run); and workloads naming a
/// LocalQueue that does not exist.
fn bypass_checks(world: &World, tally: &Tally, out: &mut Vec<Check>) {
    for (ns, n) in &tally.unmanaged_by_namespace {
        // Why Kueue leaves them alone (`ReconcileGenericJob`): the namespace is not one its
        // Configuration manages, or they name no queue and none is defaulted.
        let why = if world.kueue_manages_namespace(ns) {
            "no kueue.x-k8s.io/queue-name label and no LocalQueue named default in the namespace"
                .to_string()
        } else {
            format!(
                "namespace {ns} is outside the Kueue Configuration's managedJobsNamespaceSelector"
            )
        };
        let suspended = tally
            .unmanaged_suspended_by_namespace
            .get(ns)
            .copied()
            .unwrap_or(0);
        let rest = match (suspended, n - suspended) {
            (0, _) => "their scheduler places them outside any quota".to_string(),
            (s, 0) => format!(
                "{s} of them are suspended (spec.suspend), which nothing unsuspends outside Kueue: they never run"
            ),
            (s, r) => format!(
                "{s} of them are suspended (spec.suspend), which nothing unsuspends outside Kueue: they never run; their scheduler places the other {r} outside any quota"
            ),
        };
        out.push(Check {
            kind: "WorkloadsBypassKueue",
            object: format!("Namespace/{ns}"),
            message: format!("{n} workload(s) in namespace {ns} bypass Kueue: {why}; {rest}"),
        });
    }
    for ((ns, q), n) in &tally.missing_queues {
        out.push(Check {
            kind: "WorkloadsNameMissingLocalQueue",
            object: format!("Namespace/{ns}"),
            message: if q.is_empty() {
                format!(
                    "{n} workload(s) in namespace {ns} name no LocalQueue and Kueue manages them (manageJobsWithoutQueueName): they stay pending"
                )
            } else {
                format!(
                    "{n} workload(s) in namespace {ns} name LocalQueue {q}, which does not exist: they stay pending"
                )
            },
        });
    }
}

/// How often one preemptor must have preempted one victim for `PreemptionLoop`. On the
/// reference platform's days (seeds 1-10 and 42, with and without fair sharing) a pair
/// repeats at most 5 times outside a loop (a preemptor evicted by PodsReadyTimeout and
/// readmitted, half an hour a round); a loop repeats every few seconds.
pub const PREEMPTION_LOOP_REPEATS: u64 = 10;

/// Preemptors that preempted one victim `PREEMPTION_LOOP_REPEATS` times or more: each time
/// the victim was readmitted in between, and the preemptor did not keep what it freed.
/// Kueue runs such loops too (docs/semantics.md, "Preemption loops"); said here so that the
/// run's eviction counts are not read as a simulator fault.
fn preemption_loop_checks(tally: &Tally, out: &mut Vec<Check>) {
    for (preemptor, r) in &tally.preemption_repeats {
        let (times, victim) = &r.most;
        if *times < PREEMPTION_LOOP_REPEATS {
            continue;
        }
        let start = SimDuration::from_millis(r.first.millis());
        let end = SimDuration::from_millis(r.last.millis());
        out.push(Check {
            kind: "PreemptionLoop",
            object: format!("Workload/{preemptor}"),
            message: format!(
                "workload {preemptor} preempted the same {} workload(s) {} times from {start} to {end} of the run ({victim} {times} times), each readmitted in between: a preemption loop, which Kueue runs too (docs/semantics.md, Preemption loops)",
                r.victims, r.preemptions
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_engine::outcome::RepeatedPreemptions;
    use kueuesim_model::SimTime;

    fn tally_with(times: u64) -> Tally {
        let mut tally = Tally::default();
        tally.preemption_repeats.insert(
            "team/p".to_string(),
            RepeatedPreemptions {
                victims: 2,
                preemptions: times + 2,
                most: (times, "other/v".to_string()),
                first: SimTime::from_secs(60),
                last: SimTime::from_secs(3600 + 60),
            },
        );
        tally
    }

    /// A victim preempted `PREEMPTION_LOOP_REPEATS` times by one preemptor is a loop; one
    /// time fewer is not (a preemptor timed out by PodsReadyTimeout and readmitted repeats a
    /// few times on the reference platform's days).
    #[test]
    fn a_preemption_loop_is_ten_repeats_of_one_victim() {
        let mut out = Vec::new();
        preemption_loop_checks(&tally_with(PREEMPTION_LOOP_REPEATS - 1), &mut out);
        assert_eq!(out, []);
        preemption_loop_checks(&tally_with(PREEMPTION_LOOP_REPEATS), &mut out);
        assert_eq!(
            out,
            [Check {
                kind: "PreemptionLoop",
                object: "Workload/team/p".to_string(),
                message: "workload team/p preempted the same 2 workload(s) 12 times from 1m0s to 1h1m0s of the run (other/v 10 times), each readmitted in between: a preemption loop, which Kueue runs too (docs/semantics.md, Preemption loops)".to_string(),
            }]
        );
    }
}
