//! Unit tests of the preemption searches: the upstream classical preemption cases (P-*), the
//! candidate orderings, and the TAS fit check with a stand-in topology; fair sharing is in
//! `fair`, on the helpers here.

use super::*;
use PreemptionPolicy::{Any, LowerOrNewerEqualPriority, LowerPriority, Never};
use PreemptionReason::{InClusterQueue, InCohortReclaimWhileBorrowing, InCohortReclamation};
use kueuesim_model::{
    ClusterQueue, Cohort, CohortId, FlavorId, FlavorQuotas, ResourceFlavor, ResourceGroup,
    ResourceId, ResourceQuota,
};

mod fair;

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
fn pre(within: PreemptionPolicy, reclaim: PreemptionPolicy, threshold: Option<i32>) -> Preemption {
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

fn cq(name: &str, cohort: Option<u32>, groups: Vec<ResourceGroup>, p: Preemption) -> ClusterQueue {
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
    /// Kueue TAS stand-in: the preemptor's topology fits once these are removed.
    topology: Option<NeedsGone>,
}

/// A topology that fits once every listed workload's pods are gone.
#[derive(Debug)]
struct NeedsGone(Vec<WorkloadId>);

impl TopologyFit for NeedsGone {
    fn fits(&self, removed: &[WorkloadId]) -> bool {
        self.0.iter().all(|w| removed.contains(w))
    }
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
            topology: None,
        }
    }

    /// The preemptor's topology fits only once `names` are gone.
    fn topology_needs_gone(&mut self, names: &[&str]) {
        let ids = names
            .iter()
            .map(|n| {
                let i = self.names.iter().position(|x| x == n);
                WorkloadId::from_index(i.expect("admitted"))
            })
            .collect();
        self.topology = Some(NeedsGone(ids));
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
            uid_rank: id as u64,
            lq_fs_usage: None,
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
            topology: self.topology.as_ref().map(|t| t as &dyn TopologyFit),
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

/// `TestCandidatesOrdering` (preemption_test.go), the Admission Fair Sharing cases.
#[test]
fn candidates_ordering_prefers_higher_local_queue_usage() {
    let own = ClusterQueueId::from_index(0);
    let cand = |id: u32, cq: u32, priority: i32, lq: Option<(u32, f64)>| Candidate {
        workload: WorkloadId(id),
        cq: ClusterQueueId(cq),
        priority,
        timestamp: T0,
        reserved_at: T0,
        evicted: false,
        uid_rank: id as u64,
        lq_fs_usage: lq,
        usage: Vec::new(),
    };
    let order = |mut v: Vec<Candidate>| -> Vec<u32> {
        v.sort_by(|a, b| candidates_ordering(a, b, own));
        v.iter().map(|c| c.workload.0).collect()
    };
    let low_usage = cand(0, 0, 1, Some((0, 0.1)));
    let mid_usage = cand(1, 0, 10, Some((1, 0.5)));
    let high_usage_other_cq = cand(2, 1, 1, Some((2, 1.0)));
    // "workloads with higher LQ usage first": usage before priority.
    assert_eq!(order(vec![low_usage.clone(), mid_usage.clone()]), [1, 0]);
    // "workloads from different CQ are sorted based on priority and timestamp".
    assert_eq!(order(vec![mid_usage.clone(), high_usage_other_cq]), [2, 1]);
    // Without AFS (no usage), priority decides.
    let (mut a, mut b) = (low_usage.clone(), mid_usage.clone());
    (a.lq_fs_usage, b.lq_fs_usage) = (None, None);
    assert_eq!(order(vec![b, a]), [0, 1]);
    // LocalQueues with the same name (other namespaces) are not compared by usage.
    let mut same_name = mid_usage;
    same_name.lq_fs_usage = Some((0, 0.5));
    assert_eq!(order(vec![same_name, low_usage]), [0, 1]);
}

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

/// Kueue TAS (`workloadFits` places the preemptor too): the quota fits once `low` is gone,
/// but the topology only once `mid` is; `low` is then filled back (the minimal set).
#[test]
fn topology_fit_picks_the_victim_that_frees_the_domain() {
    let mut c = Case::new(world_p());
    c.admit("low", "standalone", -1, 2);
    c.admit("mid", "standalone", 0, 2);
    c.admit("high", "standalone", 1, 2);
    // Quota alone: the lowest priority suffices.
    assert_eq!(
        c.run("standalone", 1, T0, 2),
        expect(&[("low", InClusterQueue)])
    );
    c.topology_needs_gone(&["mid"]);
    assert_eq!(
        c.run("standalone", 1, T0, 2),
        expect(&[("mid", InClusterQueue)])
    );
    // A topology only a workload it may not preempt would free: no targets.
    c.topology_needs_gone(&["high"]);
    assert_eq!(c.run("standalone", 1, T0, 2), expect(&[]));
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

/// A random two-level cohort tree (a root cohort and a child cohort, each with or without
/// quota of its own), three ClusterQueues with cpu and memory quotas and random preemption
/// settings, and admitted workloads holding both resources.
#[allow(clippy::type_complexity)]
fn inert_case(
    quotas: &[(i64, Option<i64>, Option<i64>, i64, Option<i64>, Option<i64>)],
    homes: &[u32],
    cohort_quota: (i64, i64),
    settings: &[(u8, u8, Option<i32>)],
    admitted: &[(usize, i32, i64, i64)],
) -> Case {
    let policy = |k: u8| [Never, LowerPriority, LowerOrNewerEqualPriority, Any][k as usize % 4];
    let mut w = base_world();
    let both = |cpu: ResourceQuota, mem: ResourceQuota| {
        vec![rg(&[CPU, MEM], vec![(DEFAULT, vec![cpu, mem])])]
    };
    w.cohorts = vec![
        cohort(
            "root",
            None,
            both(
                rq(CPU, cohort_quota.0, None, None),
                rq(MEM, cohort_quota.0, None, None),
            ),
        ),
        cohort(
            "child",
            Some(0),
            both(
                rq(CPU, cohort_quota.1, None, None),
                rq(MEM, cohort_quota.1, None, None),
            ),
        ),
    ];
    w.cluster_queues = quotas
        .iter()
        .zip(homes)
        .zip(settings)
        .enumerate()
        .map(
            |(i, ((&(cn, cb, cl, mn, mb, ml), &home), &(within, reclaim, bwc)))| {
                cq(
                    &format!("cq{i}"),
                    Some(home),
                    both(rq(CPU, cn, cb, cl), rq(MEM, mn, mb, ml)),
                    pre(policy(within), policy(reclaim), bwc),
                )
            },
        )
        .collect();
    let mut c = Case::new(w);
    let mem = c.tree.fr(FlavorId(DEFAULT), ResourceId(MEM));
    for &(q, priority, cpu, m) in admitted {
        let name = format!("w{}", c.names.len());
        let fr = c.cpu();
        let cq_name = format!("cq{}", q % quotas.len());
        let cand = c.admit(&name, &cq_name, priority, cpu);
        cand.usage.push((mem, m));
        let cq_id = cand.cq;
        let node = c.tree.cq_node(cq_id);
        c.tree.add_usage(node, mem, m);
        debug_assert!(c.admitted.0[cq_id.index()].last().unwrap().usage[0].0 == fr);
    }
    c
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 16384,
        max_global_rejects: 1 << 17,
        ..Default::default()
    })]
    /// `usage_is_inert`: a classical search with a memory request that is inert picks the
    /// same targets as the search for the contested cpu alone (the flavor assigner's oracle),
    /// which is what lets the scheduler's search reuse the oracle's answer.
    #[test]
    fn an_inert_resource_leaves_the_targets_unchanged(
        quotas in proptest::collection::vec(
            (0i64..6, proptest::option::of(0i64..6), proptest::option::of(0i64..4),
             0i64..6, proptest::option::of(0i64..6), proptest::option::of(0i64..4)),
            3,
        ),
        homes in proptest::collection::vec(0u32..2, 3),
        cohort_quota in (0i64..4, 0i64..4),
        settings in proptest::collection::vec((0u8..4, 0u8..4, proptest::option::of(-1i32..2)), 3),
        admitted in proptest::collection::vec((0usize..3, -2i32..3, 0i64..4, 0i64..4), 0..9),
        preemptor in (0usize..3, -2i32..3, 1i64..6, 0i64..6),
    ) {
        let mut c = inert_case(&quotas, &homes, cohort_quota, &settings, &admitted);
        let (q, priority, cpu, mem_amount) = preemptor;
        let cq_id = ClusterQueueId::from_index(q);
        let (cpu_fr, mem) = (c.cpu(), c.tree.fr(FlavorId(DEFAULT), ResourceId(MEM)));
        proptest::prop_assume!(usage_is_inert(&c.tree, cq_id, mem, mem_amount));
        let search = |c: &mut Case, usage: &[(Fr, i64)]| {
            let p = Preemptor {
                workload: WorkloadId(u32::MAX),
                cq: cq_id,
                priority,
                timestamp: T0,
                usage,
                contested: &[cpu_fr],
                topology: None,
            };
            classical_targets(&c.world, &mut c.tree, &c.admitted, &p)
        };
        let alone = search(&mut c, &[(cpu_fr, cpu)]);
        let with_memory = search(&mut c, &[(cpu_fr, cpu), (mem, mem_amount)]);
        proptest::prop_assert_eq!(alone, with_memory);
    }
}

#[test]
fn preemption_reason_all_holds_every_variant_once() {
    // Exhaustive: a new variant stops this from compiling until it has a place here, and
    // then the length and positions below hold `ALL` (what a summary counts) to it.
    let position = |r: PreemptionReason| match r {
        InClusterQueue => 0,
        InCohortReclamation => 1,
        InCohortReclaimWhileBorrowing => 2,
        PreemptionReason::InCohortFairSharing => 3,
    };
    assert_eq!(PreemptionReason::ALL.len(), 4);
    for (i, r) in PreemptionReason::ALL.into_iter().enumerate() {
        assert_eq!(position(r), i, "{r:?}");
    }
}
