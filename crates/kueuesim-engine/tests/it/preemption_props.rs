//! Classical preemption over random cohorts: every victim is allowed by the policies, and
//! the victim set is minimal (putting any one victim back leaves the preemptor unable to fit
//! within the limits it was searched under).

use kueuesim_engine::preemption::{
    AdmittedWorkloads, Candidate, PreemptionReason, Preemptor, classical_targets,
};
use kueuesim_model::quota::{Fr, QuotaTree};
use kueuesim_model::{ClusterQueueId, PreemptionPolicy, SimTime, WorkloadId};
use proptest::prelude::*;

use crate::fixtures::{CqSpec, cohort_world};

struct Admitted(Vec<Vec<Candidate>>);

impl AdmittedWorkloads for Admitted {
    fn admitted_in(&self, cq: ClusterQueueId) -> &[Candidate] {
        &self.0[cq.index()]
    }
    fn candidate(&self, w: WorkloadId) -> Option<&Candidate> {
        self.0.iter().flatten().find(|c| c.workload == w)
    }
}

fn policy() -> impl Strategy<Value = kueuesim_model::Preemption> {
    use PreemptionPolicy::*;
    (0usize..3, 0usize..3, any::<bool>(), -1i32..3).prop_map(|(w, r, b, t)| {
        kueuesim_model::Preemption {
            within_cluster_queue: [Never, LowerPriority, LowerOrNewerEqualPriority][w],
            reclaim_within_cohort: [Never, LowerPriority, Any][r],
            borrow_within_cohort: if b && r != 0 { LowerPriority } else { Never },
            borrow_max_priority_threshold: (t >= 0).then_some(t),
        }
    })
}

/// GPU Fr of the fixture worlds (flavor 0, resource 1).
fn gpu(tree: &QuotaTree) -> Fr {
    tree.fr(kueuesim_model::FlavorId(0), kueuesim_model::ResourceId(1))
}

fn fits(tree: &QuotaTree, cq: ClusterQueueId, usage: &[(Fr, i64)]) -> bool {
    usage.iter().all(|&(fr, a)| a <= tree.available(cq, fr))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn victims_are_allowed_and_minimal(
        cqs in prop::collection::vec((0i64..10, prop::option::of(0i64..6), prop::option::of(0i64..10), policy()), 2..5),
        admitted in prop::collection::vec((0usize..5, 1i64..5, 0i32..4, 0i64..100), 2..14),
        (pcq, preq, pprio) in (0usize..5, 1i64..16, 0i32..4),
    ) {
        let specs: Vec<CqSpec> = cqs
            .iter()
            .map(|&(nominal, bl, ll, preemption)| CqSpec { cohort: Some(0), nominal, borrowing_limit: bl, lending_limit: ll, strict: false, preemption })
            .collect();
        let world = cohort_world(&[(None, 0)], &specs);
        let mut tree = QuotaTree::new(&world);
        let fr = gpu(&tree);
        let n = specs.len();
        let mut lists: Vec<Vec<Candidate>> = vec![Vec::new(); n];
        // Admit what fits, in order (a valid state).
        for (i, &(cq, amount, prio, ts)) in admitted.iter().enumerate() {
            let cq = ClusterQueueId::from_index(cq % n);
            if amount <= tree.available(cq, fr) {
                tree.add_usage(tree.cq_node(cq), fr, amount);
                lists[cq.index()].push(Candidate {
                    workload: WorkloadId::from_index(i),
                    cq,
                    priority: prio,
                    timestamp: SimTime::from_secs(ts),
                    reserved_at: SimTime::from_secs(ts),
                    evicted: false,
                    uid_rank: i as u64,
                    lq_fs_usage: None,
                    usage: vec![(fr, amount)],
                });
            }
        }
let admitted = Admitted(lists);
        let pcq = ClusterQueueId::from_index(pcq % n);
        let usage = [(fr, preq)];
        // Kueue looks for victims only for a preemptor that does not fit.
        prop_assume!(!fits(&tree, pcq, &usage));
        let contested = [fr];
        let p = Preemptor { workload: WorkloadId(999), cq: pcq, priority: pprio, timestamp: SimTime::from_secs(50), usage: &usage, contested: &contested, topology: None };
        let before: Vec<i64> = (0..n).map(|c| tree.usage(tree.cq_node(ClusterQueueId::from_index(c)), fr)).collect();
        let targets = classical_targets(&world, &mut tree, &admitted, &p);
        let after: Vec<i64> = (0..n).map(|c| tree.usage(tree.cq_node(ClusterQueueId::from_index(c)), fr)).collect();
        prop_assert_eq!(before, after, "the tree is left as found");
        let own = world.cluster_queue(pcq).preemption;
        for t in &targets {
            let c = admitted.candidate(t.workload).expect("targets are admitted");
            if c.cq == pcq {
                prop_assert_eq!(t.reason, PreemptionReason::InClusterQueue);
                let ok = match own.within_cluster_queue {
                    PreemptionPolicy::Never | PreemptionPolicy::Any => false,
                    PreemptionPolicy::LowerPriority => c.priority < pprio,
                    PreemptionPolicy::LowerOrNewerEqualPriority => c.priority < pprio || (c.priority == pprio && p.timestamp < c.timestamp),
                };
                prop_assert!(ok, "own-queue victim {:?} not allowed by {:?}", c, own.within_cluster_queue);
            } else {
                let ok = match own.reclaim_within_cohort {
                    PreemptionPolicy::Never | PreemptionPolicy::LowerOrNewerEqualPriority => false,
                    PreemptionPolicy::LowerPriority => c.priority < pprio,
                    PreemptionPolicy::Any => true,
                };
                prop_assert!(ok, "cohort victim {:?} not allowed by {:?}", c, own.reclaim_within_cohort);
                if t.reason == PreemptionReason::InCohortReclaimWhileBorrowing {
                    prop_assert!(c.priority < pprio);
                    if let Some(th) = own.borrow_max_priority_threshold {
                        prop_assert!(c.priority <= th);
                    }
                }
            }
        }
        if !targets.is_empty() {
            // With every victim gone the preemptor fits.
            let mark = tree.mark();
            for t in &targets {
                let c = admitted.candidate(t.workload).expect("admitted");
                tree.remove_usage(tree.cq_node(c.cq), fr, c.usage[0].1);
            }
            prop_assert!(fits(&tree, pcq, &usage), "the preemptor does not fit after the preemptions");
            tree.rollback_to(mark);
            // Minimal: keeping any one victim, it no longer fits (or would have to borrow,
            // in the search that forbade borrowing).
            for keep in &targets {
                let mark = tree.mark();
                for t in targets.iter().filter(|t| t.workload != keep.workload) {
                    let c = admitted.candidate(t.workload).expect("admitted");
                    tree.remove_usage(tree.cq_node(c.cq), fr, c.usage[0].1);
                }
                let still_fits = fits(&tree, pcq, &usage);
                let would_borrow = tree.borrowing_with(tree.cq_node(pcq), fr, preq);
                tree.rollback_to(mark);
                prop_assert!(!still_fits || would_borrow, "victim {:?} was not needed", keep);
            }
        }
    }
}
