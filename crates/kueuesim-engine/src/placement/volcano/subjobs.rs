//! Volcano's subjobs (`subGroupPolicy` instances, a Volcano Job's partitions) inside one
//! HyperNode of the job's gradient: the order the allocate action takes them in
//! (`organizeJobWorksheet`), each subjob's own gradient search, and the gang's readiness
//! with `minSubGroups` (Volcano's `allocateForJob`, `JobInfo.CheckSubJobReady`).

use kueuesim_model::{DomainId, NodeId, World};

use super::{OUTSIDE, TopologyScorer, hypernode_binpack, job_total};
use crate::placement::{
    Binding, Cluster, GangPods, PodNeeds, counts, fill, pending_total, tie_key, undo, with_bindings,
};

/// One subjob as the allocate action sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubJob {
    /// Its pod sets.
    pub pod_sets: Vec<usize>,
    /// Its hard tier limit (its own, else the job's).
    pub tier: i32,
    /// Its policy (upstream's `SubJobGID`): index into the job's `minSubGroups`.
    pub policy: usize,
    /// `subGroupSize`: the pods it needs placed to be ready (`SubJobInfo.IsReady`).
    pub min_available: u32,
}

/// What the gang plugin's `JobReady` checks for a job with subjobs.
pub(super) struct Readiness<'a> {
    /// PodGroup `minMember`.
    pub(super) min_member: usize,
    /// PodGroup `minTaskMember`: (pod set, minimum).
    pub(super) min_task_member: &'a [(usize, u32)],
    /// The subjobs, in `SubJobOrderFn` order.
    pub(super) subgroups: &'a [SubJob],
    /// Per policy: `minSubGroups` (0: no minimum).
    pub(super) min_sub_groups: &'a [u32],
}

impl Readiness<'_> {
    /// Pods of `pod_sets` bound in `pods` (a pod outside the statement's view is not).
    fn bound_in(pods: &GangPods, pod_sets: &[usize]) -> usize {
        pod_sets
            .iter()
            .map(|&ps| {
                pods[ps]
                    .1
                    .iter()
                    .filter(|s| s.is_some_and(|n| n != OUTSIDE))
                    .count()
            })
            .sum()
    }

    /// `SubJobInfo.IsReady`: at least `subGroupSize` of its pods placed.
    fn subjob_ready(&self, pods: &GangPods, g: usize) -> bool {
        let sj = &self.subgroups[g];
        Self::bound_in(pods, &sj.pod_sets) >= sj.min_available as usize
    }

    /// The gang plugin's `JobReady`: `minTaskMember` (`CheckTaskReady`), `minSubGroups` ready
    /// subjobs of each policy (`CheckSubJobReady`, a policy with 0 asks for none) and
    /// `minMember` pods (`IsReady`).
    pub(super) fn job_ready(&self, pods: &GangPods) -> bool {
        let all: Vec<usize> = (0..pods.len()).collect();
        if Self::bound_in(pods, &all) < self.min_member {
            return false;
        }
        let tasks_ready = self.min_task_member.iter().all(|&(ps, m)| {
            Self::bound_in(pods, &[ps]) >= (m as usize).min(pods.get(ps).map_or(0, |p| p.1.len()))
        });
        tasks_ready
            && self.min_sub_groups.iter().enumerate().all(|(p, &min)| {
                let ready = (0..self.subgroups.len())
                    .filter(|&g| self.subgroups[g].policy == p && self.subjob_ready(pods, g))
                    .count();
                ready >= min as usize
            })
    }

    /// `organizeJobWorksheet`'s order: the fewest not-ready subjobs that bring every policy
    /// to its `minSubGroups` (taken in `SubJobOrderFn` order) first, then the others, not
    /// ready before ready (the gang plugin's `SubJobOrderFn`).
    fn order(&self, pods: &GangPods) -> Vec<usize> {
        let ready: Vec<bool> = (0..self.subgroups.len())
            .map(|g| self.subjob_ready(pods, g))
            .collect();
        let mut have = vec![0u32; self.min_sub_groups.len()];
        for (g, sj) in self.subgroups.iter().enumerate() {
            if ready[g] {
                have[sj.policy] += 1;
            }
        }
        let mut required = vec![false; self.subgroups.len()];
        for (g, sj) in self.subgroups.iter().enumerate() {
            let min = self.min_sub_groups.get(sj.policy).copied().unwrap_or(0);
            if !ready[g] && have[sj.policy] < min {
                required[g] = true;
                have[sj.policy] += 1;
            }
        }
        let mut order: Vec<usize> = (0..self.subgroups.len()).collect();
        order.sort_by_key(|&g| (!required[g], ready[g]));
        order
    }
}

/// `pods` with only the pending pods of `pod_sets` pending.
fn only(pods: &GangPods, pod_sets: &[usize]) -> Vec<(PodNeeds, Vec<Option<NodeId>>)> {
    pods.iter()
        .enumerate()
        .map(|(ps, (n, slots))| {
            let keep = pod_sets.contains(&ps);
            let v = slots
                .iter()
                .map(|b| if keep { *b } else { Some(b.unwrap_or(OUTSIDE)) })
                .collect();
            (n.clone(), v)
        })
        .collect()
}

/// One subjob's gradient search inside `within` (`allocateForSubJob`): lowest tier first,
/// up to its tier limit; in each tier the HyperNodes that hold its pending requests, fullest
/// first (`HyperNodeOrderFn`'s bin-packing), those tied there by the subjob's tasks already
/// in them (the task-count bonus), then at random; the first whose dry run places every
/// pending pod of the subjob wins. The bindings stay applied on success.
#[allow(clippy::too_many_arguments)]
fn place_subjob(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    current: &GangPods,
    sj: &SubJob,
    within: DomainId,
    scorer_base: &TopologyScorer<'_>,
    seed: u64,
) -> Option<Vec<Binding>> {
    let t = &world.hypernodes;
    let view = only(current, &sj.pod_sets);
    let (_, pending_count) = counts(&view);
    let need = pending_total(&view);
    // The subjob's own tasks, bound or not (`getSubJobHyperNodeBinPackingScore` sums
    // `subJob.Tasks`): the other subjobs' pods are not part of its request.
    let members_only: Vec<(PodNeeds, Vec<Option<NodeId>>)> =
        sj.pod_sets.iter().map(|&ps| pods[ps].clone()).collect();
    let whole = job_total(&members_only);
    // Its tasks bound before this statement, per node: the HyperNode-level task count.
    let before: Vec<NodeId> = sj
        .pod_sets
        .iter()
        .flat_map(|&ps| pods[ps].1.iter().flatten().copied())
        .filter(|&n| n != OUTSIDE)
        .collect();
    let scorer = scorer_base.for_subjob(pods, Some(&sj.pod_sets));
    for (tier, domains) in &t.by_tier {
        if *tier > sj.tier {
            break;
        }
        let mut gradient: Vec<(f64, usize, u64, DomainId)> = domains
            .iter()
            .filter(|&&d| t.within(d, within))
            .filter(|&&d| {
                // Free capacity as the dry run so far left it.
                need.iter().all(|&(r, q)| {
                    t.nodes_of(d)
                        .iter()
                        .map(|&n| cluster.nodes.free(n, r))
                        .sum::<i64>()
                        >= q
                })
            })
            .map(|&d| {
                // `HyperNodeOrderFn` adds `scoreWithTaskNum` only to the HyperNodes tied at
                // the highest bin-packing score; ranking by (score, tasks) and keeping the
                // first that holds the subjob picks the same one.
                let tasks = before
                    .iter()
                    .filter(|&&n| t.domain_of(n).is_some_and(|nd| t.within(nd, d)))
                    .count();
                (
                    hypernode_binpack(cluster, d, &whole),
                    tasks,
                    tie_key(seed ^ 0x5b9, NodeId(d.0)),
                    d,
                )
            })
            .collect();
        gradient.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
        for &(_, _, _, d) in &gradient {
            let mut s = scorer.clone();
            match fill(
                world,
                &mut cluster.nodes,
                t.nodes_of(d),
                &view,
                pending_count,
                &mut s,
            ) {
                Ok(b) => return Some(b),
                Err((b, _)) => undo(&mut cluster.nodes, &view, &b),
            }
        }
    }
    None
}

/// The dry run of a job with subjobs inside HyperNode `within` (`allocateForJob`'s loop over
/// the job worksheet): subjobs in `organizeJobWorksheet` order, each with its own gradient
/// search under its own tier limit; a subjob that does not fit is skipped, and the run stops
/// as soon as the gang is ready (`JobReady`), so a job already running places one more
/// subjob per statement. The pods in no subjob (the default subjob) fill `within` last, up to
/// `minMember` (one pod when the job is already ready and no subjob was placed). The
/// statement holds if the gang is ready at the end; its bindings then stay applied to the
/// node capacity (as `fill` leaves them). Otherwise the error names the first pod that did
/// not fit, with the bindings made before it still applied (the caller undoes them).
#[allow(clippy::type_complexity)]
pub(super) fn fill_subgroups(
    world: &World,
    cluster: &mut Cluster,
    pods: &GangPods,
    ready: &Readiness<'_>,
    within: DomainId,
    scorer_base: &TopologyScorer<'_>,
    seed: u64,
) -> Result<Vec<Binding>, (Vec<Binding>, (usize, usize))> {
    let t = &world.hypernodes;
    let mut made: Vec<Binding> = Vec::new();
    let mut current = pods.to_vec();
    // The first pod that did not fit and how many bindings were made before it: the
    // failure is explained with the dry run as it stood then.
    let mut first_failed: Option<((usize, usize), usize)> = None;
    for g in ready.order(pods) {
        let sj = &ready.subgroups[g];
        let view = only(&current, &sj.pod_sets);
        let Some(first) = crate::placement::first_pending(&view) else {
            continue;
        };
        match place_subjob(
            world,
            cluster,
            pods,
            &current,
            sj,
            within,
            scorer_base,
            seed,
        ) {
            Some(b) => {
                current = with_bindings(&current, &b);
                made.extend(b);
                if ready.job_ready(&current) {
                    break;
                }
            }
            None => {
                first_failed.get_or_insert((first, made.len()));
            }
        }
    }
    // Pods in no subgroup.
    let rest: Vec<usize> = (0..pods.len())
        .filter(|ps| !ready.subgroups.iter().any(|sj| sj.pod_sets.contains(ps)))
        .collect();
    let view = only(&current, &rest);
    let (_, left) = counts(&view);
    let now_ready = ready.job_ready(&current);
    if left > 0 && (!now_ready || made.is_empty()) {
        let all: Vec<usize> = (0..pods.len()).collect();
        let bound = Readiness::bound_in(&current, &all);
        let k = if now_ready {
            1
        } else {
            ready.min_member.saturating_sub(bound).clamp(1, left)
        };
        let mut scorer = scorer_base.for_subjob(pods, Some(&rest));
        match fill(
            world,
            &mut cluster.nodes,
            t.nodes_of(within),
            &view,
            k,
            &mut scorer,
        ) {
            Ok(b) => {
                current = with_bindings(&current, &b);
                made.extend(b);
            }
            Err((b, pod)) => {
                made.extend(b);
                first_failed.get_or_insert((pod, made.len()));
            }
        }
    }
    if !made.is_empty() && ready.job_ready(&current) {
        return Ok(made);
    }
    // Keep the bindings made before the first failure applied, as `fill` does, for the
    // caller's fit error; it undoes them.
    let (pod, kept) = first_failed.unwrap_or_else(|| {
        let pod = crate::placement::first_pending(pods).unwrap_or((0, 0));
        (pod, 0)
    });
    undo(&mut cluster.nodes, pods, &made[kept..]);
    made.truncate(kept);
    Err((made, pod))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::{Labels, ResourceList};

    fn pod_sets(bound: &[usize]) -> Vec<(PodNeeds, Vec<Option<NodeId>>)> {
        let needs = PodNeeds {
            requests: ResourceList::default(),
            node_selector: Labels::default(),
            tolerations: vec![],
        };
        bound
            .iter()
            .map(|&b| {
                let slots = (0..2).map(|i| (i < b).then_some(NodeId(0))).collect();
                (needs.clone(), slots)
            })
            .collect()
    }

    fn subjob(ps: usize, policy: usize) -> SubJob {
        SubJob {
            pod_sets: vec![ps],
            tier: 1,
            policy,
            min_available: 2,
        }
    }

    /// `organizeJobWorksheet`: the subjobs that bring each policy to its `minSubGroups` come
    /// first; the others follow, not ready before ready.
    #[test]
    fn required_subjobs_first_then_not_ready_before_ready() {
        let subgroups = [subjob(0, 0), subjob(1, 1), subjob(2, 1), subjob(3, 0)];
        let ready = Readiness {
            min_member: 0,
            min_task_member: &[],
            subgroups: &subgroups,
            min_sub_groups: &[0, 1],
        };
        // Nothing bound: subjob 1 is the one policy 1 needs.
        assert_eq!(ready.order(&pod_sets(&[0, 0, 0, 0])), [1, 0, 2, 3]);
        // Subjob 2 ready already satisfies policy 1: none is required, and it goes last.
        assert_eq!(ready.order(&pod_sets(&[0, 0, 2, 0])), [0, 1, 3, 2]);
    }

    /// `JobReady`: minMember pods and, per policy, minSubGroups subjobs with subGroupSize
    /// pods placed (a half-placed subjob does not count).
    #[test]
    fn job_ready_needs_min_member_and_min_sub_groups() {
        let subgroups = [subjob(0, 0), subjob(1, 0), subjob(2, 1)];
        let ready = Readiness {
            min_member: 3,
            min_task_member: &[],
            subgroups: &subgroups,
            min_sub_groups: &[2, 0],
        };
        assert!(ready.job_ready(&pod_sets(&[2, 2, 0])));
        assert!(
            !ready.job_ready(&pod_sets(&[2, 1, 2])),
            "one policy-0 subjob is short"
        );
        assert!(!ready.job_ready(&pod_sets(&[2, 0, 0])), "below minMember");
    }
}
