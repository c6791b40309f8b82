//! Fair-sharing preemption (`preemption_fair_test.go` `TestFairPreemptions`; the F-* cases),
//! on the helpers of the parent module.

use super::*;
use crate::preemption::fair::fair_targets_gated;

use PreemptionReason::InCohortFairSharing;

/// A ClusterQueue of the fair-sharing tests: name, cohort, cpu nominal per flavor (milli),
/// fair-sharing weight (milli), `spec.preemption`.
type FairCq<'a> = (&'a str, Option<&'a str>, &'a [(u16, i64)], i64, Preemption);

/// A world of cohorts (name, parent, cpu nominal on `default` in milli, weight milli) and
/// ClusterQueues; names are resolved here.
fn fair_world(cohorts: &[(&str, Option<&str>, i64, i64)], cqs: &[FairCq<'_>]) -> World {
    let mut w = base_world();
    let id = |name: &str| {
        let i = cohorts.iter().position(|c| c.0 == name);
        i.expect("known cohort") as u32
    };
    let cpu_groups = |quotas: &[(u16, i64)]| {
        if quotas.is_empty() {
            return vec![];
        }
        let flavors = quotas
            .iter()
            .map(|&(f, n)| (f, vec![rq(CPU, n, None, None)]))
            .collect();
        vec![rg(&[CPU], flavors)]
    };
    for &(name, parent, nominal, weight) in cohorts {
        let groups = if nominal > 0 {
            cpu_groups(&[(DEFAULT, nominal)])
        } else {
            vec![]
        };
        let mut co = cohort(name, parent.map(id), groups);
        co.fair_sharing_weight_milli = weight;
        w.cohorts.push(co);
    }
    for &(name, co, quotas, weight, p) in cqs {
        let mut q = cq(name, co.map(id), cpu_groups(quotas), p);
        q.fair_sharing_weight_milli = weight;
        w.cluster_queues.push(q);
    }
    w
}

/// `withinClusterQueue: LowerPriority`, `reclaimWithinCohort: Any`, and
/// `borrowWithinCohort` with threshold −3 (ignored by fair sharing).
fn fair_pre() -> Preemption {
    pre(LowerPriority, Any, Some(-3))
}

/// The shared setup F: cohort "all" with a, b, c (3 cpu, weight 1) and "preemptible"
/// (0 cpu); `weights` overrides the weights of a, b, c.
fn world_f_weighted(weights: [i64; 3], p: Preemption) -> World {
    fair_world(
        &[("all", None, 0, 1000)],
        &[
            ("a", Some("all"), &[(DEFAULT, 3000)], weights[0], p),
            ("b", Some("all"), &[(DEFAULT, 3000)], weights[1], p),
            ("c", Some("all"), &[(DEFAULT, 3000)], weights[2], p),
            (
                "preemptible",
                Some("all"),
                &[(DEFAULT, 0)],
                1000,
                Preemption::default(),
            ),
        ],
    )
}

fn world_f() -> World {
    world_f_weighted([1000; 3], fair_pre())
}

const UNIT: i64 = 1000;

impl Case {
    /// Admits `name` holding `cpu` of `flavor`.
    fn admit_on(&mut self, name: &str, cq: &str, priority: i32, flavor: u16, cpu: i64) {
        let (cq, fr) = (self.cq(cq), self.tree.fr(FlavorId(flavor), ResourceId(CPU)));
        let id = self.names.len();
        self.names.push(name.into());
        self.tree.add_usage(self.tree.cq_node(cq), fr, cpu);
        self.admitted.0[cq.index()].push(Candidate {
            workload: WorkloadId::from_index(id),
            cq,
            priority,
            timestamp: SimTime::ZERO,
            reserved_at: SimTime::ZERO,
            evicted: false,
            uid_rank: id as u64,
            lq_fs_usage: None,
            usage: vec![(fr, cpu)],
        });
    }

    /// Admits unit workloads of priority 0 named `names` in `cq`.
    fn units(&mut self, cq: &str, names: &[&str]) {
        for n in names {
            self.admit(n, cq, 0, UNIT);
        }
    }

    /// Fair-sharing targets for an incoming workload of priority `priority` needing `cpu`
    /// of `flavor` (contested) in `cq`. UIDs are the names (as upstream's test sets them),
    /// so the last tie-break is by name. Checks the tree is left as it was.
    fn run_fair_on(
        &mut self,
        cq: &str,
        priority: i32,
        flavor: u16,
        cpu: i64,
        strategies: &[FairStrategy],
        within_nominal_gate: bool,
    ) -> Vec<(String, PreemptionReason)> {
        let mut by_name: Vec<usize> = (0..self.names.len()).collect();
        by_name.sort_by(|&a, &b| self.names[a].cmp(&self.names[b]));
        for (rank, &i) in by_name.iter().enumerate() {
            for c in self.admitted.0.iter_mut().flatten() {
                if c.workload.index() == i {
                    c.uid_rank = rank as u64;
                }
            }
        }
        let fr = self.tree.fr(FlavorId(flavor), ResourceId(CPU));
        let usage = [(fr, cpu)];
        let p = Preemptor {
            workload: WorkloadId(u32::MAX),
            cq: self.cq(cq),
            priority,
            timestamp: T0,
            usage: &usage,
            contested: &[fr],
            topology: self.topology.as_ref().map(|t| t as &dyn TopologyFit),
        };
        let before = self.usages();
        let targets = fair_targets_gated(
            &self.world,
            &mut self.tree,
            &self.admitted,
            &p,
            strategies,
            within_nominal_gate,
        );
        assert_eq!(self.usages(), before, "the tree must be left unchanged");
        targets
            .into_iter()
            .map(|t| (self.names[t.workload.index()].clone(), t.reason))
            .collect()
    }

    /// `run_fair_on` with the default flavor, priority 0, default strategies, gate on.
    fn run_fair(&mut self, cq: &str, cpu: i64) -> Vec<(String, PreemptionReason)> {
        self.run_fair_on(cq, 0, DEFAULT, cpu, &[], true)
    }
}

/// F-01 "reclaim nominal from user using the most": c stays within nominal, so it takes
/// from the most unfair queue without comparing shares.
#[test]
fn f01_within_nominal_reclaims_from_the_most_unfair() {
    let mut c = Case::new(world_f());
    c.units("a", &["a1", "a2", "a3"]);
    c.units("b", &["b1", "b2", "b3", "b4", "b5"]);
    c.units("c", &["c1"]);
    assert_eq!(
        c.run_fair("c", UNIT),
        expect(&[("b1", InCohortReclamation)])
    );
}

/// Fair sharing with Kueue TAS: b1 frees the quota but not the topology, b2 does; b1 is
/// filled back.
#[test]
fn fair_topology_fit_takes_until_the_domain_is_free() {
    let mut c = Case::new(world_f());
    c.units("a", &["a1", "a2", "a3"]);
    c.units("b", &["b1", "b2", "b3", "b4", "b5"]);
    c.units("c", &["c1"]);
    c.topology_needs_gone(&["b2"]);
    assert_eq!(
        c.run_fair("c", UNIT),
        expect(&[("b2", InCohortReclamation)])
    );
}

/// "can reclaim from queue using less, if taking the latest workload from user using the
/// most isn't enough": b1 goes first, is not enough, and is filled back after a1.
#[test]
fn fair_reclaim_from_less_unfair_queue_when_needed() {
    let mut c = Case::new(world_f());
    c.admit("a1", "a", 0, 3000);
    c.admit("a2", "a", 0, 1000);
    c.admit("b1", "b", 0, 2000);
    c.admit("b2", "b", 0, 3000);
    assert_eq!(
        c.run_fair("c", 3000),
        expect(&[("a1", InCohortReclamation)])
    );
}

/// "reclaim borrowable quota from user using the most": a borrows with the incoming
/// workload (111) and b would drop to 111 too: S2-a passes.
#[test]
fn fair_reclaim_borrowable_from_the_most_unfair() {
    let mut c = Case::new(world_f());
    c.units("a", &["a1", "a2", "a3"]);
    c.units("b", &["b1", "b2", "b3", "b4", "b5"]);
    c.units("c", &["c1"]);
    assert_eq!(
        c.run_fair("a", UNIT),
        expect(&[("b1", InCohortFairSharing)])
    );
}

/// "preempt one from each CQ borrowing".
#[test]
fn fair_preempt_one_from_each_borrowing_queue() {
    let mut c = Case::new(world_f());
    c.admit("a1", "a", 0, 500);
    c.admit("a2", "a", 0, 500);
    c.admit("a3", "a", 0, 3000);
    c.admit("b1", "b", 0, 500);
    c.admit("b2", "b", 0, 500);
    c.admit("b3", "b", 0, 3000);
    assert_eq!(
        c.run_fair("c", 2000),
        expect(&[("a1", InCohortReclamation), ("b1", InCohortReclamation)])
    );
}

/// "can't preempt when everyone under nominal".
#[test]
fn fair_nothing_when_everyone_within_nominal() {
    let mut c = Case::new(world_f());
    c.units("a", &["a1", "a2", "a3"]);
    c.units("b", &["b1", "b2", "b3"]);
    c.units("c", &["c1", "c2", "c3"]);
    assert_eq!(c.run_fair("c", UNIT), expect(&[]));
}

/// F-03 "can't preempt when it would switch the imbalance": a would borrow 2 (222), b
/// borrows 2 (222); removing b1 drops b to 111 < 222 (S2-a fails) and 222 is not below
/// 222 (S2-b fails).
#[test]
fn f03_no_preemption_that_flips_the_imbalance() {
    let mut c = Case::new(world_f());
    c.units("a", &["a1", "a2", "a3"]);
    c.units("b", &["b1", "b2", "b3", "b4", "b5"]);
    assert_eq!(c.run_fair("a", 2000), expect(&[]));
}

/// "can preempt lower priority workloads from same CQ".
#[test]
fn fair_preempts_lower_priority_in_own_queue() {
    let mut c = Case::new(world_f());
    c.admit("a1_low", "a", -1, UNIT);
    c.admit("a2_low", "a", -1, UNIT);
    c.units("a", &["a3", "a4"]);
    c.units("b", &["b1", "b2", "b3", "b4", "b5"]);
    assert_eq!(
        c.run_fair("a", 2000),
        expect(&[("a1_low", InClusterQueue), ("a2_low", InClusterQueue)])
    );
}

/// "can preempt a combination of same CQ and highest user".
#[test]
fn fair_preempts_own_queue_and_most_unfair() {
    let mut c = Case::new(world_f());
    c.admit("a_low", "a", -1, UNIT);
    c.units("a", &["a2", "a3"]);
    c.units("b", &["b1", "b2", "b3", "b4", "b5", "b6"]);
    assert_eq!(
        c.run_fair("a", 2000),
        expect(&[("b1", InCohortFairSharing), ("a_low", InClusterQueue)])
    );
}

/// "preempt huge workload if there is no other option, as long as the target CQ gets a
/// lower share": a stays within nominal, so the 9-cpu workload goes.
#[test]
fn fair_preempts_huge_workload_when_within_nominal() {
    let mut c = Case::new(world_f());
    c.admit("b1", "b", 0, 9000);
    assert_eq!(
        c.run_fair("a", 2000),
        expect(&[("b1", InCohortReclamation)])
    );
}

/// "can't preempt huge workload if the incoming is also huge" and "can't preempt 2 smaller
/// workloads if the incoming is huge".
#[test]
fn fair_huge_incoming_cannot_preempt() {
    let mut c = Case::new(world_f());
    c.admit("a1", "a", 0, 2000);
    c.admit("b1", "b", 0, 7000);
    assert_eq!(c.run_fair("a", 5000), expect(&[]));

    let mut c = Case::new(world_f());
    c.admit("b1", "b", 0, 2000);
    c.admit("b2", "b", 0, 2000);
    c.admit("b3", "b", 0, 3000);
    assert_eq!(c.run_fair("a", 6000), expect(&[]));
}

/// "preempt from target and others even if over nominal": the first pass takes a1_low and
/// a2_low (S2-a refuses b's, which would drop b to 0 < 222), the second pass takes b1
/// (111 < 333), and filling back spares a2_low.
#[test]
fn fair_preempts_own_and_others_while_borrowing() {
    let mut c = Case::new(world_f());
    c.admit("a1_low", "a", -1, 2000);
    c.admit("a2_low", "a", -1, 1000);
    c.admit("b1", "b", 0, 3000);
    c.admit("b2", "b", 0, 3000);
    assert_eq!(
        c.run_fair("a", 4000),
        expect(&[("a1_low", InClusterQueue), ("b1", InCohortFairSharing)])
    );
}

/// "prefer to preempt workloads that don't make the target CQ have the biggest share":
/// removing b1 (2) would leave b at 0 < a's 55.6; b2 (1) leaves b at 111 ≥ 55.6.
#[test]
fn fair_prefers_victim_keeping_target_share_above_preemptor() {
    let mut c = Case::new(world_f());
    c.admit("b1", "b", 0, 2000);
    c.admit("b2", "b", 0, 1000);
    c.admit("b3", "b", 0, 2000);
    c.admit("c1", "c", 0, 1000);
    assert_eq!(
        c.run_fair("a", 3500),
        expect(&[("b2", InCohortFairSharing)])
    );
}

/// "preempt from different cluster queues if the end result has a smaller max share", and
/// "scenario above does not flap".
#[test]
fn fair_preempts_from_several_queues_and_does_not_flap() {
    let mut c = Case::new(world_f());
    c.admit("b1", "b", 0, 2000);
    c.admit("b2", "b", 0, 2500);
    c.admit("c1", "c", 0, 2000);
    c.admit("c2", "c", 0, 2500);
    assert_eq!(
        c.run_fair("a", 3500),
        expect(&[("b1", InCohortFairSharing), ("c1", InCohortFairSharing)])
    );

    let mut c = Case::new(world_f());
    c.admit("a1", "a", 0, 3500);
    c.admit("b2", "b", 0, 2500);
    c.admit("c2", "c", 0, 2500);
    assert_eq!(c.run_fair("b", 2000), expect(&[]));
}

/// "cannot preempt if it would make the candidate CQ go under nominal after preempting one
/// element".
#[test]
fn fair_cannot_push_target_under_nominal() {
    let mut c = Case::new(world_f());
    c.admit("b1", "b", 0, 3000);
    c.admit("b2", "b", 0, 3000);
    c.admit("c1", "c", 0, 3000);
    assert_eq!(c.run_fair("a", 4000), expect(&[]));
}

/// "workloads under priority threshold not capriciously preempted": `borrowWithinCohort`
/// plays no role in fair sharing.
#[test]
fn fair_ignores_borrow_within_cohort() {
    let mut c = Case::new(world_f());
    c.units("a", &["a1", "a2", "a3"]);
    c.units("b", &["b1", "b2", "b3"]);
    for n in ["preemptible1", "preemptible2", "preemptible3"] {
        c.admit(n, "preemptible", -3, UNIT);
    }
    assert_eq!(c.run_fair("a", 2000), expect(&[]));
}

/// F-06 / F-07: a 1-cpu preemptor in a (already at nominal) against b borrowing 3 with
/// b_low (5, prio 0) and b_high (1, prio 1).
fn case_f06() -> Case {
    let mut c = Case::new(world_f());
    c.admit("a1", "a", 0, 3000);
    c.admit("b_low", "b", 0, 5000);
    c.admit("b_high", "b", 1, 1000);
    c
}

/// F-06 "preempt lower priority first, even if big" (`[LessThanInitialShare]`): a's
/// share 111 is below b's 333, so the first candidate goes.
#[test]
fn f06_less_than_initial_share_takes_lower_priority_first() {
    let strategies = [FairStrategy::LessThanInitialShare];
    assert_eq!(
        case_f06().run_fair_on("a", 0, DEFAULT, UNIT, &strategies, true),
        expect(&[("b_low", InCohortFairSharing)])
    );
}

/// F-07 "preempt workload that doesn't transfer the imbalance, even if high priority"
/// (`[LessThanOrEqualToFinalShare]`): removing b_low would drop b to 0 < a's 111;
/// removing b_high leaves b at 222 ≥ 111.
#[test]
fn f07_final_share_picks_balance_preserving_victim() {
    let strategies = [FairStrategy::LessThanOrEqualToFinalShare];
    assert_eq!(
        case_f06().run_fair_on("a", 0, DEFAULT, UNIT, &strategies, true),
        expect(&[("b_high", InCohortFairSharing)])
    );
    // With both strategies S2-a finds b_high first, too.
    assert_eq!(
        case_f06().run_fair("a", UNIT),
        expect(&[("b_high", InCohortFairSharing)])
    );
}

/// F-05 "CQ with higher weight can preempt more": a's share is 222 / 2 = 111.
#[test]
fn f05_higher_weight_preempts_more() {
    let p = pre(LowerPriority, Any, None);
    let mut c = Case::new(world_f_weighted([2000, 1000, 1000], p));
    c.units("a", &["a1", "a2", "a3"]);
    c.units("b", &["b1", "b2", "b3", "b4", "b5", "b6"]);
    assert_eq!(
        c.run_fair("a", 2000),
        expect(&[("b1", InCohortFairSharing), ("b2", InCohortFairSharing)])
    );
}

/// "can preempt anything borrowing from CQ with 0 weight" and "can't preempt nominal from
/// CQ with 0 weight".
#[test]
fn fair_zero_weight_queue_loses_what_it_borrows_only() {
    let p = pre(LowerPriority, Any, None);
    let mut c = Case::new(world_f_weighted([1000, 0, 1000], p));
    c.units("a", &["a1", "a2", "a3"]);
    c.units("b", &["b1", "b2", "b3", "b4", "b5", "b6"]);
    assert_eq!(
        c.run_fair("a", 3000),
        expect(&[
            ("b1", InCohortFairSharing),
            ("b2", InCohortFairSharing),
            ("b3", InCohortFairSharing)
        ])
    );

    let w = fair_world(
        &[("all", None, 0, 1000)],
        &[
            ("a", Some("all"), &[(DEFAULT, 3000)], 1000, p),
            ("b", Some("all"), &[(DEFAULT, 3000)], 0, p),
        ],
    );
    let mut c = Case::new(w);
    c.units("a", &["a1", "a2", "a3"]);
    c.units("b", &["b1", "b2", "b3"]);
    assert_eq!(c.run_fair("a", UNIT), expect(&[]));
}

/// "can't preempt nominal from Cohort with 0 weight": right-cohort's own quota is not
/// borrowed, so it is pruned whatever its weight.
#[test]
fn fair_zero_weight_cohort_keeps_its_nominal() {
    let reclaim = pre(Never, Any, None);
    let w = fair_world(
        &[
            ("root", None, 0, 1000),
            ("right-cohort", Some("root"), 1000, 0),
        ],
        &[
            ("left-cq", Some("root"), &[(DEFAULT, 0)], 1000, reclaim),
            (
                "right-cq",
                Some("right-cohort"),
                &[(DEFAULT, 0)],
                0,
                reclaim,
            ),
        ],
    );
    let mut c = Case::new(w);
    c.units("right-cq", &["right-1"]);
    assert_eq!(c.run_fair("left-cq", UNIT), expect(&[]));
}

/// "can preempt within cluster queue when no cohort".
#[test]
fn fair_without_cohort_preempts_in_own_queue() {
    let w = fair_world(
        &[],
        &[(
            "a",
            None,
            &[(DEFAULT, 1000)],
            1000,
            pre(LowerPriority, Never, None),
        )],
    );
    let mut c = Case::new(w);
    c.units("a", &["a1"]);
    assert_eq!(
        c.run_fair_on("a", 1000, DEFAULT, UNIT, &[], true),
        expect(&[("a1", InClusterQueue)])
    );
}

/// "hierarchical preemption": ROOT(5) ← LEFT(5, w2) ← {a(1, w2), b(1)}, c(1),
/// RIGHT(5) ← {d(1), e(1, w0.99)}; b, c, d, e hold 5 units each (priorities 1..5); a asks
/// for 5 and takes from b, c and e.
#[test]
fn fair_hierarchical_preemption() {
    let none = Preemption::default();
    let w = fair_world(
        &[
            ("ROOT", None, 5000, 1000),
            ("LEFT", Some("ROOT"), 5000, 2000),
            ("RIGHT", Some("ROOT"), 5000, 1000),
        ],
        &[
            (
                "a",
                Some("LEFT"),
                &[(DEFAULT, 1000)],
                2000,
                pre(Never, Any, None),
            ),
            ("b", Some("LEFT"), &[(DEFAULT, 1000)], 1000, none),
            ("c", Some("ROOT"), &[(DEFAULT, 1000)], 1000, none),
            ("d", Some("RIGHT"), &[(DEFAULT, 1000)], 1000, none),
            ("e", Some("RIGHT"), &[(DEFAULT, 1000)], 990, none),
        ],
    );
    let mut c = Case::new(w);
    for q in ["b", "c", "d", "e"] {
        for prio in 1..=5 {
            c.admit(&format!("{q}{prio}"), q, prio, UNIT);
        }
    }
    let mut got = c.run_fair("a", 5000);
    got.sort();
    assert_eq!(
        got,
        expect(&[
            ("b1", InCohortFairSharing),
            ("b2", InCohortFairSharing),
            ("c1", InCohortFairSharing),
            ("c2", InCohortFairSharing),
            ("e1", InCohortFairSharing),
        ])
    );
}

/// "borrowing cq in non-borrowing cohort is protected" and "forced to preempt within
/// clusterqueue because borrowing workload too important".
#[test]
fn fair_borrowing_queue_in_non_borrowing_cohort_is_protected() {
    let world = |right_quota, reclaim| {
        fair_world(
            &[
                ("ROOT", None, 0, 1000),
                ("RIGHT", Some("ROOT"), right_quota, 100),
            ],
            &[
                (
                    "a",
                    Some("ROOT"),
                    &[(DEFAULT, 5000)],
                    10_000,
                    pre(LowerPriority, reclaim, None),
                ),
                ("b", Some("RIGHT"), &[], 100, Preemption::default()),
            ],
        )
    };
    let own = expect(&[
        ("a1", InClusterQueue),
        ("a2", InClusterQueue),
        ("a3", InClusterQueue),
    ]);

    let mut c = Case::new(world(1000, Any));
    for n in ["a1", "a2", "a3"] {
        c.admit(n, "a", -1, UNIT);
    }
    c.admit("b1", "b", -1, UNIT);
    let mut got = c.run_fair("a", 5000);
    got.sort();
    assert_eq!(got, own);

    let mut c = Case::new(world(3000, LowerPriority));
    for n in ["a1", "a2", "a3"] {
        c.admit(n, "a", -1, UNIT);
    }
    c.admit("b1", "b", 100, 4000);
    let mut got = c.run_fair("a", 4000);
    got.sort();
    assert_eq!(got, own);
}

/// "deep preemption": the almost-LCAs are A (weight 1.01) and B (0.99), three levels up.
#[test]
fn fair_deep_preemption_compares_almost_lcas() {
    let none = Preemption::default();
    let w = fair_world(
        &[
            ("ROOT", None, 0, 1000),
            ("A", Some("ROOT"), 0, 1010),
            ("AA", Some("A"), 0, 1000),
            ("AAA", Some("AA"), 0, 1000),
            ("B", Some("ROOT"), 0, 990),
            ("BB", Some("B"), 0, 1000),
            ("BBB", Some("BB"), 0, 1000),
            ("C", Some("ROOT"), 0, 1000),
            ("CC", Some("C"), 0, 1000),
            ("CCC", Some("CC"), 0, 1000),
            ("CCCC", Some("CCC"), 1000, 1000),
        ],
        &[
            (
                "a",
                Some("AAA"),
                &[(DEFAULT, 0)],
                1000,
                pre(Never, Any, None),
            ),
            ("b", Some("BBB"), &[(DEFAULT, 0)], 1000, none),
        ],
    );
    let mut c = Case::new(w);
    c.units("b", &["b1"]);
    assert_eq!(
        c.run_fair("a", UNIT),
        expect(&[("b1", InCohortFairSharing)])
    );
}

/// "cq with zero weight can reclaim nominal quota" and "cohort with zero weight can
/// reclaim nominal quota".
#[test]
fn fair_zero_weight_preemptor_reclaims_nominal() {
    let reclaim = pre(Never, Any, None);
    let none = Preemption::default();
    let w = fair_world(
        &[("ROOT", None, 0, 1000)],
        &[
            ("a", Some("ROOT"), &[(DEFAULT, 1000)], 0, reclaim),
            ("b", Some("ROOT"), &[(DEFAULT, 0)], 1000, none),
        ],
    );
    let mut c = Case::new(w);
    c.units("b", &["b1"]);
    assert_eq!(
        c.run_fair("a", UNIT),
        expect(&[("b1", InCohortReclamation)])
    );

    // Here a borrows from its cohort A, which does not borrow: A's share (0) is below b's.
    let w = fair_world(
        &[("ROOT", None, 0, 1000), ("A", Some("ROOT"), 1000, 0)],
        &[
            ("a", Some("A"), &[(DEFAULT, 0)], 0, reclaim),
            ("b", Some("ROOT"), &[(DEFAULT, 0)], 1000, none),
        ],
    );
    let mut c = Case::new(w);
    c.units("b", &["b1"]);
    assert_eq!(
        c.run_fair("a", UNIT),
        expect(&[("b1", InCohortFairSharing)])
    );
}

/// "nominal first: workload fitting within nominal can preempt despite high aggregate DRS"
/// (flavors premium = alpha, cheap = beta), and the same with the
/// `FairSharingPreemptWithinNominal` gate off.
#[test]
fn fair_within_nominal_gate() {
    const PREMIUM: u16 = 1;
    const CHEAP: u16 = 2;
    let w = fair_world(
        &[("all", None, 0, 1000)],
        &[
            (
                "a",
                Some("all"),
                &[(PREMIUM, 3000), (CHEAP, 0)],
                1000,
                pre(Never, Any, None),
            ),
            (
                "b",
                Some("all"),
                &[(PREMIUM, 0), (CHEAP, 6000)],
                1000,
                Preemption::default(),
            ),
        ],
    );
    let mut c = Case::new(w);
    c.admit_on("a_prem1", "a", 0, PREMIUM, UNIT);
    c.admit_on("a_prem2", "a", 0, PREMIUM, UNIT);
    for i in 1..=5 {
        c.admit_on(&format!("a_cheap{i}"), "a", 0, CHEAP, UNIT);
    }
    c.admit_on("b_prem1", "b", 0, PREMIUM, UNIT);
    assert_eq!(
        c.run_fair_on("a", 0, PREMIUM, UNIT, &[], true),
        expect(&[("b_prem1", InCohortReclamation)])
    );
    // Without the gate a's share (5 of 9 cheap lendable) is above b's (1 of 9 premium).
    assert_eq!(
        c.run_fair_on("a", 0, PREMIUM, UNIT, &[], false),
        expect(&[])
    );
}

/// The zero-weight preemptor cases: against a non-zero-weight borrower nothing passes;
/// against another zero-weight borrower the unweighted ratios compare; and the same shape
/// with weights 1.
#[test]
fn fair_zero_weight_borrowing_preemptor() {
    let reclaim = pre(Never, Any, None);
    let none = Preemption::default();
    let w = fair_world(
        &[("all", None, 0, 1000)],
        &[
            ("a", Some("all"), &[(DEFAULT, 1000)], 0, reclaim),
            ("b", Some("all"), &[(DEFAULT, 1000)], 1000, none),
        ],
    );
    let mut c = Case::new(w);
    c.units("a", &["a1"]);
    c.units("b", &["b1", "b2"]);
    assert_eq!(c.run_fair("a", UNIT), expect(&[]));

    for weight in [0, 1000] {
        let w = fair_world(
            &[("all", None, 3000, 1000)],
            &[
                ("a", Some("all"), &[(DEFAULT, 1000)], weight, reclaim),
                ("b", Some("all"), &[(DEFAULT, 0)], weight, none),
            ],
        );
        let mut c = Case::new(w);
        c.units("b", &["b1", "b2", "b3"]);
        assert_eq!(
            c.run_fair("a", 2000),
            expect(&[("b1", InCohortFairSharing)]),
            "weight {weight}"
        );
    }
}

/// "candidates skipped by the first strategy are still available to the second strategy":
/// A (weight 0) borrows, so x's candidates are skipped at first; once y1 goes, A stops
/// borrowing and S2-b takes x1.
#[test]
fn fair_skipped_candidates_reach_the_second_strategy() {
    let reclaim = pre(Never, Any, None);
    let none = Preemption::default();
    let w = fair_world(
        &[("ROOT", None, 0, 1000), ("A", Some("ROOT"), 1000, 0)],
        &[
            ("p", Some("A"), &[(DEFAULT, 2000)], 1000, reclaim),
            ("y", Some("A"), &[(DEFAULT, 2000)], 1000, none),
            ("x", Some("ROOT"), &[(DEFAULT, 1000)], 1000, none),
        ],
    );
    let mut c = Case::new(w);
    c.admit("p1", "p", 0, 2000);
    c.admit("y1", "y", 0, 2000);
    c.admit("y2", "y", 0, 2000);
    c.units("x", &["x1", "x2"]);
    assert_eq!(
        c.run_fair("p", UNIT),
        expect(&[("y1", InCohortFairSharing), ("x1", InCohortFairSharing)])
    );
    // With S2-a alone, x1 is never reconsidered.
    let s2a = [FairStrategy::LessThanOrEqualToFinalShare];
    assert_eq!(
        c.run_fair_on("p", 0, DEFAULT, UNIT, &s2a, true),
        expect(&[])
    );
}

/// `findCandidates` only takes other queues borrowing on a contested `Fr`: b borrows cheap
/// cpu (from c) and so outranks a, but its premium workload is within b's nominal and
/// must not go.
#[test]
fn fair_queue_borrowing_elsewhere_is_no_candidate() {
    const PREMIUM: u16 = 1;
    const CHEAP: u16 = 2;
    let none = Preemption::default();
    let w = fair_world(
        &[("all", None, 0, 1000)],
        &[
            (
                "a",
                Some("all"),
                &[(PREMIUM, 3000), (CHEAP, 0)],
                1000,
                pre(Never, Any, None),
            ),
            ("b", Some("all"), &[(PREMIUM, 3000), (CHEAP, 0)], 1000, none),
            ("c", Some("all"), &[(PREMIUM, 0), (CHEAP, 3000)], 1000, none),
        ],
    );
    let mut c = Case::new(w);
    c.admit_on("a_prem", "a", 0, PREMIUM, 3000);
    c.admit_on("b_prem", "b", 0, PREMIUM, 3000);
    c.admit_on("b_cheap", "b", 0, CHEAP, 2000);
    assert_eq!(c.run_fair_on("a", 0, PREMIUM, UNIT, &[], true), expect(&[]));
}

/// `nextTarget`: a cohort wins a tie against a ClusterQueue. x and cohort K (holding y)
/// both borrow 1 of the 2 lendable (500); p stays within nominal and takes from K's side.
#[test]
fn fair_cohort_wins_ties_against_cluster_queue() {
    let none = Preemption::default();
    let w = fair_world(
        &[("all", None, 0, 1000), ("K", Some("all"), 0, 1000)],
        &[
            (
                "p",
                Some("all"),
                &[(DEFAULT, 2000)],
                1000,
                pre(Never, Any, None),
            ),
            ("x", Some("all"), &[(DEFAULT, 0)], 1000, none),
            ("y", Some("K"), &[(DEFAULT, 0)], 1000, none),
        ],
    );
    let mut c = Case::new(w);
    c.units("x", &["x1"]);
    c.units("y", &["y1"]);
    assert_eq!(
        c.run_fair("p", UNIT),
        expect(&[("y1", InCohortReclamation)])
    );
}

/// `runSecondFsStrategy` takes at most one workload per ClusterQueue. a (nominal 3) holds
/// a_low (4) and asks for 5 more: a and b both borrow 6 of 12, and b goes first (its head
/// is another queue's). S2-a refuses b1, b2 (b would drop to 5 < 6) and b3; then a_low goes,
/// which is not enough. In the second pass a borrows 2 < b's 6, so b1 goes, which is not
/// enough either; b2 would pass again (2 < 5) and make room, but b is dropped: no targets.
#[test]
fn fair_second_strategy_takes_at_most_one_per_queue() {
    let none = Preemption::default();
    let w = fair_world(
        &[("all", None, 0, 1000)],
        &[
            ("a", Some("all"), &[(DEFAULT, 3000)], 1000, fair_pre()),
            ("b", Some("all"), &[(DEFAULT, 3000)], 1000, none),
            ("c", Some("all"), &[(DEFAULT, 6000)], 1000, none),
        ],
    );
    let mut c = Case::new(w);
    c.admit("a_low", "a", -1, 4000);
    c.admit("b1", "b", 0, 1000);
    c.admit("b2", "b", 0, 1000);
    c.admit("b3", "b", 0, 7000);
    assert_eq!(c.run_fair("a", 5000), expect(&[]));
}

proptest::proptest! {
    /// The global order read a chunk at a time equals the three lists each sorted whole by
    /// `CandidatesOrdering`, their evicted prefixes first: with and without Admission Fair
    /// Sharing usages, read to the end or stopped early.
    #[test]
    fn global_order_is_the_sorted_lists_evicted_first(
        cands in proptest::collection::vec(
            (0usize..3, proptest::bool::ANY, -2i32..3, 0i64..5, proptest::option::of((0u32..2, 0u8..3))),
            0..120,
        ),
        read in 0usize..130,
        fair in proptest::collection::vec(proptest::bool::ANY, 2),
    ) {
        let own = ClusterQueueId::from_index(0);
        let all: Vec<Candidate> = cands
            .iter()
            .enumerate()
            .map(|(i, &(list, evicted, priority, reserved, lq))| Candidate {
                workload: WorkloadId::from_index(i),
                // Same-CQ candidates are the third list's.
                cq: ClusterQueueId::from_index(if list == 2 { 0 } else { 1 }),
                priority,
                timestamp: SimTime::ZERO,
                reserved_at: SimTime(reserved * 1000),
                evicted,
                // UIDs are unique: the ordering's last tie-break.
                uid_rank: (i as u64 * 7919) % 1009,
                // Admission Fair Sharing is on or off per ClusterQueue, and a LocalQueue's
                // usage is one number (same-named queues of different namespaces with
                // different usages are the next test's).
                lq_fs_usage: lq
                    .filter(|_| fair[usize::from(list == 2)])
                    .map(|(q, _)| (q, f64::from(q) * 1.5))
                    .or(fair[usize::from(list == 2)].then_some((9, 0.0))),
                usage: Vec::new(),
            })
            .collect();
        let mut lists: [Vec<Elem<'_>>; 3] = Default::default();
        for (c, &(list, ..)) in all.iter().zip(&cands) {
            lists[list].push(Elem { cand: c, lca: None, variant: Variant::WithinCq });
        }
        // The reference: each list sorted whole, then the evicted prefixes, then the rest.
        let mut sorted = lists.clone();
        for l in &mut sorted {
            l.sort_by(|a, b| candidates_ordering(a.cand, b.cand, own));
        }
        let mut want: Vec<WorkloadId> = Vec::new();
        for evicted in [true, false] {
            for l in &sorted {
                want.extend(l.iter().filter(|e| e.cand.evicted == evicted).map(|e| e.cand.workload));
            }
        }
        let mut order = order::GlobalOrder::new(lists, own);
        let got: Vec<WorkloadId> = (0..read.min(want.len()))
            .map(|i| order.get(i).expect("within the count").cand.workload)
            .collect();
        proptest::prop_assert_eq!(&got[..], &want[..got.len()]);
        proptest::prop_assert!(order.get(want.len()).is_none());
    }
}

/// Same-named LocalQueues of different namespaces in one ClusterQueue, with different usages:
/// `CandidatesOrdering` compares usages only between different names, which is not a total
/// order (a before b before c before a). Upstream's sort does not mind; ours must not panic.
#[test]
fn global_order_survives_an_ordering_that_is_not_total() {
    let own = ClusterQueueId::from_index(0);
    let all: Vec<Candidate> = (0..60)
        .map(|i| Candidate {
            workload: WorkloadId::from_index(i),
            cq: own,
            priority: (i % 3) as i32,
            timestamp: SimTime::ZERO,
            reserved_at: SimTime::ZERO,
            evicted: false,
            uid_rank: i as u64,
            lq_fs_usage: Some(((i % 2) as u32, (i % 7) as f64)),
            usage: Vec::new(),
        })
        .collect();
    let list: Vec<Elem<'_>> = all
        .iter()
        .map(|c| Elem {
            cand: c,
            lca: None,
            variant: Variant::WithinCq,
        })
        .collect();
    let mut order = order::GlobalOrder::new([Vec::new(), Vec::new(), list], own);
    let mut seen: Vec<WorkloadId> = (0..60)
        .map(|i| order.get(i).unwrap().cand.workload)
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        (0..60).map(WorkloadId::from_index).collect::<Vec<_>>()
    );
}
