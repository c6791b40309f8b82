//! Volcano and KAI placement cases (V*: Volcano's allocate and network-topology-aware plugin
//! tests; K*: KAI's allocateTopology and reclaim tests), each in two forms: as
//! jobs and Kueue Workloads (`scenarios/placement/`), and as the upstream schedulers' tests
//! write them, a PodGroup with bare Pods (`scenarios/placement-podgroups/`); each form under
//! ten seeds: the nodes each pod lands on, or the scheduler's reason.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result};

use crate::util::{load_dir, wl};

/// How a case is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// Jobs and Kueue Workloads with the schedulers' annotations.
    Job,
    /// The scheduler's PodGroup and bare Pods, no Kueue.
    PodGroup,
}

/// Runs `check` on the case in both forms under seeds 1 to 10, naming the form and seed of
/// a failure.
fn each(case: &str, check: impl Fn(Form, &SimulationResult)) {
    for (form, dir) in [
        (Form::Job, "placement"),
        (Form::PodGroup, "placement-podgroups"),
    ] {
        let loaded = load_dir(&format!("{dir}/{case}"));
        for seed in 1..=10 {
            let mut world = loaded.world.clone();
            world.config.seed = seed;
            let r = result(&world, &Simulation::new(&world).run());
            if let Err(e) = catch_unwind(AssertUnwindSafe(|| check(form, &r))) {
                eprintln!("{case}: failed in the {form:?} form under seed {seed}");
                resume_unwind(e);
            }
        }
    }
}

/// The nodes of every pod set, flattened, in pod order.
fn nodes(w: &WorkloadOut) -> Vec<&str> {
    w.pod_sets
        .iter()
        .flat_map(|p| p.nodes.iter().map(String::as_str))
        .collect()
}

/// The leaf (`s0`, `s1`, …) of a Volcano case node named `<leaf>-n<i>`.
fn leaf(node: &str) -> &str {
    node.split('-').next().unwrap_or(node)
}

/// The first Warning event from `source`.
fn warning<'a>(w: &'a WorkloadOut, source: &str) -> &'a str {
    &w.events
        .iter()
        .find(|e| e.kind == "Warning" && e.source == source)
        .unwrap_or_else(|| panic!("{} has no {source} warning: {:?}", w.name, w.events))
        .message
}

#[test]
fn v01_soft_gang_spans_leaves_when_no_leaf_holds_it() {
    each("V01-soft-spans-leaves", |_, r| {
        let n = nodes(wl(r, "team", "job"));
        assert_eq!(n.len(), 3);
        let mut leaves: Vec<&str> = n.iter().map(|x| leaf(x)).collect();
        leaves.sort();
        leaves.dedup();
        assert_eq!(leaves, ["s0", "s1"]);
    });
}

#[test]
fn v03_soft_search_applies_predicates() {
    each("V03-soft-respects-node-selector", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")), ["s1-n2"]);
    });
}

#[test]
fn v05_hard_tier_one_gang_of_three_binds_nothing() {
    each("V05-hard-tier1-gang-too-big", |_, r| {
        let w = wl(r, "team", "job");
        assert!(nodes(w).is_empty(), "nothing partial: {:?}", nodes(w));
        let m = warning(w, "volcano");
        assert!(
            m.starts_with("3/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; Pending: 1 Unschedulable, 2 Schedulable. Origin reason is job-"),
            "{m}"
        );
        assert!(
            m.ends_with(": In hyperNode s1: 0/2 nodes are unavailable: 2 Insufficient cpu.")
                || m.ends_with(": In hyperNode s0: 0/2 nodes are unavailable: 2 Insufficient cpu."),
            "{m}"
        );
    });
}

#[test]
fn v07_hard_tier_one_gang_stays_in_one_leaf() {
    each("V07-hard-tier1-one-leaf", |_, r| {
        let w = wl(r, "team", "job");
        let n = nodes(w);
        assert_eq!(n.len(), 2);
        assert_eq!(leaf(n[0]), leaf(n[1]), "{n:?}");
        // The PodGroup's allocated HyperNode is the leaf.
        assert_eq!(w.topology_domain.as_deref(), Some(leaf(n[0])));
    });
}

#[test]
fn v09_rescheduled_pod_is_pinned_to_its_full_leaf() {
    each("V09-rescheduled-pinned-to-full-leaf", |_, r| {
        let w = wl(r, "team", "job");
        assert_eq!(nodes(w), ["s0-n1", "s0-n2"], "p3 must not move to s1");
        assert_eq!(
            warning(w, "volcano"),
            "In hyperNode s0: 0/2 nodes are unavailable: 2 Insufficient cpu."
        );
    });
}

#[test]
fn v10_rescheduled_pod_goes_to_the_sibling_leaf_within_the_limit() {
    each("V10-rescheduled-three-tier-within-limit", |_, r| {
        let n = nodes(wl(r, "team", "job"));
        assert_eq!(n[..2], ["s3-n1", "s3-n2"]);
        assert_eq!(leaf(n[2]), "s4", "{n:?}");
    });
}

#[test]
fn v11_rescheduled_pod_cannot_cross_the_limit() {
    each("V11-rescheduled-three-tier-cross-limit", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")), ["s3-n1", "s3-n2"]);
    });
}

#[test]
fn v13_highest_tier_name() {
    each("V13a-tier-name-below-gang", |_, r| {
        assert!(nodes(wl(r, "team", "job")).is_empty());
    });
    each("V13b-tier-name-above-gang", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")).len(), 3);
    });
    // An unknown tier name: no hard limit, so p3 binds outside the allocated leaf.
    each("V13c-unknown-tier-name-is-unconstrained", |_, r| {
        let n = nodes(wl(r, "team", "job"));
        assert_eq!(n.len(), 3);
        assert_eq!(leaf(n[2]), "s1");
    });
}

#[test]
fn k01_required_rack() {
    each("K01-required-rack", |_, r| {
        let w = wl(r, "team", "job");
        assert_eq!(nodes(w), ["node2", "node3"]);
        assert_eq!(w.topology_domain.as_deref(), Some("rack2"));
    });
}

#[test]
fn k02_required_rack_rolls_back_a_domain_that_fails_a_predicate() {
    each("K02-required-rack-rolls-back-on-predicate", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")), ["node2", "node3"]);
    });
}

#[test]
fn k03_required_spine_nested_in_rack() {
    each("K03-required-spine-nested", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")), ["node1", "node1"]);
    });
}

#[test]
fn k04_required_rack_skips_the_rack_that_holds_three_of_four() {
    each("K04-required-rack-fullest-fitting", |_, r| {
        assert_eq!(
            nodes(wl(r, "team", "job")),
            ["node2", "node2", "node3", "node3"]
        );
    });
}

#[test]
fn k05_without_preferred_level_nodes_bin_pack_across_subdomains() {
    each("K05-required-rack-binpacks-across-spines", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")), ["node0", "node1"]);
    });
}

#[test]
fn k06_no_rack_holds_the_gang() {
    each("K06-required-rack-nowhere", |form, r| {
        let w = wl(r, "team", "job");
        assert!(nodes(w).is_empty());
        // Admitted by Kueue (the Job form), unplaceable for KAI; KAI names the PodGroup,
        // the one its pod grouper makes for the Workload, or the input's.
        let (state, pod_group) = match form {
            Form::Job => ("Admitted", "pg-job"),
            Form::PodGroup => ("Pending", "job"),
        };
        assert_eq!(w.state, state);
        assert_eq!(
            warning(w, "kai-scheduler"),
            format!(
                "Unable to schedule podgroup: node-group rack1 can allocate only 3 of 4 required pods. \nnode-group rack2 can allocate only 3 of 4 required pods. \ntopology cluster-topology, requirement k8s.io/rack couldn't be satisfied for job <team/{pod_group}>."
            )
        );
    });
}

#[test]
fn k07_preferred_rack() {
    each("K07-preferred-rack", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")), ["node1", "node1"]);
    });
}

#[test]
fn k08_preferred_rack_falls_back_to_the_root_roomiest_rack_first() {
    each("K08-preferred-rack-falls-back-to-root", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")), ["node1", "node0"]);
    });
}

#[test]
fn k09_required_rack_when_the_preferred_spine_cannot_hold_it() {
    each("K09-required-rack-preferred-spine-unsatisfiable", |_, r| {
        let mut n = nodes(wl(r, "team", "job"));
        n.sort();
        assert_eq!(n, ["node2", "node3"]);
    });
}

#[test]
fn k16_preferred_spines_fill_roomiest_first() {
    each("K16-preferred-spine-roomiest-last", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")), ["node6", "node7", "node4"]);
    });
}

#[test]
fn k20_fullest_fitting_spine_wins() {
    each("K20-preferred-spine-fullest-fitting", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")), ["node3"]);
    });
}

#[test]
fn k21_parent_packing_rank_outranks_the_child_ratio() {
    each("K21-binpack-top-most-domain-first", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")), ["node3"]);
    });
}

#[test]
fn v14_fuller_leaf_then_node_bin_packing() {
    each("V14-hard-tier1-node-level-binpack", |_, r| {
        let w = wl(r, "team", "pg1");
        assert_eq!(w.pod_sets[0].nodes, ["s0-n1"]);
        assert_eq!(w.pod_sets[1].nodes, ["s0-n2"]);
    });
}

/// The nodes of each named pod set of `job`.
fn by_pod_set(w: &WorkloadOut) -> Vec<(&str, Vec<&str>)> {
    w.pod_sets
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.nodes.iter().map(String::as_str).collect(),
            )
        })
        .collect()
}

#[test]
fn k10_subgroups_take_their_own_racks_in_the_required_zone() {
    each("K10-subgroups-required-rack-in-required-zone", |form, r| {
        assert_eq!(
            by_pod_set(wl(r, "team", "job")),
            // Bare pods' pod sets are named by their subgroup.
            match form {
                Form::Job => [("a", vec!["node2"]), ("b", vec!["node3"])],
                Form::PodGroup => [("sub-a", vec!["node2"]), ("sub-b", vec!["node3"])],
            }
        );
    });
}

#[test]
fn k11_three_levels_of_required_subgroups() {
    each("K11-subgroups-three-levels", |_, r| {
        assert_eq!(
            nodes(wl(r, "team", "job")),
            ["node4", "node5", "node6", "node7"]
        );
    });
}

#[test]
fn k12_subgroup_required_rack_fullest_first() {
    each("K12-subgroup-required-rack-fullest", |_, r| {
        assert_eq!(nodes(wl(r, "team", "job")), ["node1"]);
    });
}

#[test]
fn k13_k14_replicas_each_in_one_rack_of_the_zone() {
    for case in [
        "K13-subgroups-preferred-rack-in-preferred-zone",
        "K14-subgroups-required-rack-in-preferred-zone",
    ] {
        each(case, |_, r| {
            assert_eq!(
                nodes(wl(r, "team", "job")),
                ["node2", "node2", "node3", "node3"],
                "{case}"
            );
        });
    }
}

#[test]
fn k15_required_spines_with_unconstrained_leaves() {
    each(
        "K15-subgroups-required-spine-unconstrained-leaves",
        |_, r| {
            assert_eq!(
                nodes(wl(r, "team", "job")),
                ["node4", "node5", "node6", "node7"]
            );
        },
    );
}

#[test]
fn k17_elastic_subgroups_do_not_keep_locality() {
    each("K17-elastic-subgroups", |form, r| {
        assert_eq!(
            by_pod_set(wl(r, "team", "job")),
            match form {
                Form::Job => [("a", vec!["node0", "node1"]), ("b", vec!["node0", "node1"])],
                Form::PodGroup => [
                    ("subgroup-a", vec!["node0", "node1"]),
                    ("subgroup-b", vec!["node0", "node1"]),
                ],
            }
        );
    });
}

#[test]
fn k18_subgroups_without_preference_use_the_podgroup_scores() {
    each("K18-spine-preferred-subgroups-unconstrained", |_, r| {
        assert_eq!(
            nodes(wl(r, "team", "job")),
            ["node4", "node5", "node6", "node7", "node0", "node1"]
        );
    });
}

#[test]
fn k19_subgroups_prefer_racks_inside_the_spines() {
    each("K19-spine-preferred-subgroups-prefer-rack", |_, r| {
        assert_eq!(
            nodes(wl(r, "team", "job")),
            ["node2", "node3", "node0", "node6", "node7", "node4"]
        );
    });
}

#[test]
fn v18_subgroup_policies_each_in_their_own_leaf() {
    each("V18-subgroup-policy-network-topology", |_, r| {
        let w = wl(r, "team", "job");
        let mut workers = w.pod_sets[1].nodes.clone();
        workers.sort();
        assert_eq!(w.pod_sets[0].nodes, ["s1-n3"]);
        assert_eq!(workers, ["s0-n1", "s0-n2"]);
        assert_eq!(w.topology_domain.as_deref(), Some("s2"));
    });
}

#[test]
fn k22_reclaim_evicts_the_younger_job_of_the_queue_above_its_share() {
    each("K22-reclaim-to-fair-share", |_, r| {
        let state = |name: &str| wl(r, "team", name).state;
        assert_eq!(state("running-job0"), "Running");
        let victim = wl(r, "team", "running-job1");
        assert_eq!(victim.evictions.len(), 1, "evicted once, no ping-pong");
        assert_eq!(victim.evictions[0].reason, "Reclaim");
        assert_eq!(
            victim.evictions[0].preemptor.as_deref(),
            Some("team/pending-job0")
        );
        assert_eq!(victim.state, "Pending", "its new pod may not reclaim back");
        let reclaimer = wl(r, "team", "pending-job0");
        assert_eq!(nodes(reclaimer), ["node0"]);
        // Pipelined: placed once the victim's pod is gone (podTermination 30s after 2m).
        assert_eq!(reclaimer.running_at, Some(150.0));
        assert_eq!(
            state("pending-job1"),
            "Pending",
            "queue1 would exceed its fair share"
        );
    });
}

#[test]
fn k23_reclaim_keeps_the_victims_that_fit_back_and_evicts_only_the_gang() {
    each("K23-reclaim-minimal-victims", |_, r| {
        let younger = wl(r, "team", "q0-job1");
        assert!(
            younger.evictions.is_empty(),
            "q0-job1 fits back on node3 once the preemptor is placed: {:?}",
            younger.evictions
        );
        assert_eq!(younger.state, "Running");
        assert_eq!(nodes(younger), ["node3"]);
        let gang = wl(r, "team", "q0-job0");
        assert_eq!(
            gang.evictions.len(),
            1,
            "evicted once: {:?}",
            gang.evictions
        );
        assert_eq!(gang.evictions[0].reason, "Reclaim");
        assert_eq!(gang.evictions[0].preemptor.as_deref(), Some("team/q1-job1"));
        assert_eq!(gang.state, "Pending", "queue0 may not reclaim back");
        let reclaimer = wl(r, "team", "q1-job1");
        assert_eq!(nodes(reclaimer), ["node0", "node1", "node2"]);
        assert_eq!(reclaimer.running_at, Some(150.0));
    });
}

#[test]
fn volcano_min_task_member_holds_the_gang_back() {
    each("volcano-min-task-member", |_, r| {
        let with = wl(r, "team", "with-task-min");
        assert!(nodes(with).is_empty(), "{:?}", nodes(with));
        assert!(
            warning(with, "volcano").starts_with(
                "4/4 tasks in gang unschedulable: pod group is not ready, 2 minAvailable, 4 Pending; Pending: 3 Unschedulable, 1 Schedulable."
            ),
            "{}",
            warning(with, "volcano")
        );
        let without = wl(r, "team", "without-task-min");
        assert_eq!(without.pod_sets[0].nodes, ["node0", "node0"]);
        assert!(without.pod_sets[1].nodes.is_empty());
    });
}

/// How many pods of `w` are on each leaf, sorted.
fn per_leaf(w: &WorkloadOut) -> Vec<usize> {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for n in nodes(w) {
        *counts.entry(leaf(n)).or_default() += 1;
    }
    let mut v: Vec<usize> = counts.into_values().collect();
    v.sort_unstable();
    v
}

#[test]
fn v19_task_count_bonus_keeps_the_gang_two_and_two() {
    each("V19-task-count-tie-bonus", |_, r| {
        let w = wl(r, "team", "job");
        assert_eq!(per_leaf(w), [2, 2], "{:?}", nodes(w));
    });
}

#[test]
fn v20_min_sub_groups_covering_every_subgroup() {
    each("V20-min-sub-groups-all-required", |_, r| {
        let w = wl(r, "team", "job");
        assert_eq!(nodes(w).len(), 5, "{:?}", nodes(w));
        assert_eq!(w.pod_sets[0].nodes, ["s2-n5"]);
        for ps in &w.pod_sets[1..] {
            assert_eq!(leaf(&ps.nodes[0]), leaf(&ps.nodes[1]), "{:?}", ps.nodes);
        }
    });
}

#[test]
fn v21_min_sub_groups_binds_the_required_subgroups_only() {
    each("V21-min-sub-groups-partial", |_, r| {
        let w = wl(r, "team", "job");
        let bound: Vec<usize> = w.pod_sets.iter().map(|p| p.nodes.len()).collect();
        // The first two masters (task1, minSubGroups 2) and the first worker subgroup
        // (task2, minSubGroups 1), in SubJobOrderFn order.
        assert_eq!(bound, [1, 1, 0, 0, 2, 0], "{:?}", nodes(w));
        let workers = &w.pod_sets[4].nodes;
        assert_eq!(leaf(&workers[0]), leaf(&workers[1]), "{workers:?}");
        assert_eq!(leaf(&w.pod_sets[0].nodes[0]), leaf(&w.pod_sets[1].nodes[0]));
    });
}

#[test]
fn v22_min_sub_groups_beyond_the_nodes_binds_nothing() {
    each("V22-min-sub-groups-unsatisfiable", |_, r| {
        let w = wl(r, "team", "job");
        assert!(nodes(w).is_empty(), "{:?}", nodes(w));
        // The master and one worker subgroup fit (3 schedulable); the second worker subgroup
        // finds no leaf with two free nodes, explained with the dry run as it stood.
        let m = warning(w, "volcano");
        assert!(
            m.starts_with("5/5 tasks in gang unschedulable: pod group is not ready, 3 minAvailable, 5 Pending; Pending: 2 Unschedulable, 3 Schedulable. Origin reason is job-"),
            "{m}"
        );
        assert!(
            m.ends_with(": In hyperNode s2: 0/3 nodes are unavailable: 3 Insufficient cpu."),
            "{m}"
        );
    });
}

#[test]
fn kai_reclaim_leaves_finished_jobs_alone() {
    // A finished job keeps its nodes in the report but holds no GPUs: it is neither counted
    // in its queue's allocation nor a victim.
    let r = crate::util::run_dir("kai/reclaim-after-finish");
    let done = wl(&r, "team", "done");
    assert_eq!(done.state, "Finished");
    assert!(done.evictions.is_empty(), "{:?}", done.evictions);
    let victim = wl(&r, "team", "run-b");
    assert_eq!(victim.evictions.len(), 1, "{:?}", victim.evictions);
    assert_eq!(
        victim.evictions[0].preemptor.as_deref(),
        Some("team/want-2")
    );
    assert!(wl(&r, "team", "run-a").evictions.is_empty());
    assert_eq!(wl(&r, "team", "want-2").running_at, Some(150.0));
}

#[test]
fn k24_preempt_takes_the_lowest_priority_job_of_the_queue() {
    each("K24-preempt-lowest-priority", |form, r| {
        let victim = wl(r, "team", "running-job0");
        assert_eq!(victim.evictions.len(), 1, "{:?}", victim.evictions);
        assert_eq!(victim.evictions[0].reason, "Preempt");
        // `GetPreemptMessage`, naming the preemptor's PodGroup (KAI's grouper's `pg-<job>`
        // for a batch Job).
        let preemptor_group = match form {
            Form::Job => "team/pg-pending-job0",
            Form::PodGroup => "team/pending-job0",
        };
        assert!(
            victim.events.iter().any(|e| e.reason == "Evict"
                && e.message.starts_with("Pod team/running-job0-")
                && e.message.ends_with(&format!(
                    " was preempted by higher priority workload {preemptor_group}"
                ))),
            "{:?}",
            victim.events
        );
        assert_eq!(victim.state, "Pending", "its new pod may not preempt back");
        assert!(wl(r, "team", "running-job1").evictions.is_empty());
        let preemptor = wl(r, "team", "pending-job0");
        assert_eq!(nodes(preemptor), ["node0"]);
        assert_eq!(preemptor.running_at, Some(150.0));
    });
}

#[test]
fn k24_preempt_min_runtime_protects_the_young_job() {
    // queue0's preemptMinRuntime of 5m protects both victims at 2m: nothing is preempted
    // then. The build job tries again when the first protection ends (running-job0, started
    // at 0s, at 5m; upstream tries every session) and preempts it then.
    let mut loaded = crate::util::load_dir("placement-podgroups/K24-preempt-lowest-priority");
    loaded.world.kai_queues[0].preempt_min_runtime =
        Some(kueuesim_model::SimDuration::from_secs(300));
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let at: Vec<f64> = wl(&r, "team", "running-job0")
        .evictions
        .iter()
        .map(|e| e.at)
        .collect();
    assert_eq!(at, [300.0]);
    assert!(wl(&r, "team", "running-job1").evictions.is_empty());
    // 1m30s: running-job1 (started at 1m) is still protected, running-job0 (0s) is not.
    loaded.world.kai_queues[0].preempt_min_runtime =
        Some(kueuesim_model::SimDuration::from_secs(90));
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    assert_eq!(wl(&r, "team", "running-job0").evictions.len(), 1);
    assert!(wl(&r, "team", "running-job1").evictions.is_empty());
}

#[test]
fn kai_preempt_min_runtime_reads_a_dumps_start_times() {
    // The younger new-train started 2m before the simulation (status.startTime): still
    // protected by queue0's 10m preemptMinRuntime at 1m, so old-train (61m) is the victim.
    let r = crate::util::run_dir("kai/preempt-min-runtime");
    let old = wl(&r, "team", "old-train");
    assert_eq!(old.evictions.len(), 1, "{:?}", old.evictions);
    assert_eq!(
        (old.evictions[0].at, old.evictions[0].reason),
        (60.0, "Preempt")
    );
    assert!(wl(&r, "team", "new-train").evictions.is_empty());
    let build = wl(&r, "team", "build");
    assert_eq!(nodes(build), ["node0"]);
    assert_eq!(build.running_at, Some(90.0));
}
