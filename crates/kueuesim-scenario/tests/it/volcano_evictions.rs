//! Volcano's preempt and reclaim actions with a volcano-scheduler.conf: cases transcribed
//! from upstream's unit tests (volcano ed72c7c8: `preempt_test.go` TestPreempt and
//! TestTopologyAwarePreempt's "preemption with priority queues",
//! `reclaim_test.go` TestReclaim, `capacity_test.go`'s reclaim cases and
//! AncestorReclaimScenarios) and the plugins' votes and switches: which pods each action
//! evicts, and where the preemptor binds.

use kueuesim_report::output::{SimulationResult, WorkloadOut};

use crate::util::{load_error, load_text, run_dir, wl};
use crate::volcano_queues::{run_text, volcano_events};

/// Each pod of `w` and its node at the end (None: pending).
pub(crate) fn pods(w: &WorkloadOut) -> Vec<(&str, Option<&str>)> {
    w.pod_sets
        .iter()
        .flat_map(|p| p.pods.iter().map(|x| (x.name.as_str(), x.node.as_deref())))
        .collect()
}

/// The `summary.evictions` count of `reason`.
fn evictions(r: &SimulationResult, reason: &str) -> u64 {
    r.summary.evictions.get(reason).copied().unwrap_or(0)
}

/// Volcano's `Evict` events on `w` (the cache's `Evict` with the action's reason), at `at`
/// seconds: (time, message).
fn evict_events(w: &WorkloadOut) -> Vec<(f64, &str)> {
    w.events
        .iter()
        .filter(|e| e.source == "volcano" && e.reason == "Evict")
        .map(|e| (e.at, e.message.as_str()))
        .collect()
}

/// The pods evicted from `w`: its pods left without a node (each victim's replacement
/// finds no room in these cases).
fn evicted(w: &WorkloadOut) -> Vec<&str> {
    pods(w)
        .into_iter()
        .filter(|p| p.1.is_none())
        .map(|p| p.0)
        .collect()
}

#[test]
fn preempt_case_one_task_of_another_job_for_the_gang() {
    // preempt_test.go "preempt one task of different job to fit both jobs on one node".
    let r = run_dir("volcano/preempt-one-task");
    let pg1 = wl(&r, "c1", "pg1");
    assert_eq!(evicted(pg1), ["preemptee1"]);
    assert_eq!(evict_events(pg1), [(0.0, "preempt")]);
    // pg1 keeps its minMember running: the gang plugin marks only a job that is not ready,
    // so its replacement pod's wait gives no PodGroup Unschedulable event.
    assert!(
        !volcano_events(pg1)
            .iter()
            .any(|(_, reason, _)| *reason == "Unschedulable"),
        "{:?}",
        volcano_events(pg1)
    );
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(
        pods(wl(&r, "c1", "pg2")),
        [("preemptor1", Some("n1")), ("preemptor2", None)]
    );
    // Bound once the victim has terminated (podTermination 30s).
    let bound = wl(&r, "c1", "pg2").pod_sets[0].pods[0].bound_at;
    assert_eq!(bound, Some(30.0));
}

#[test]
fn preempt_case_enough_tasks_for_a_large_task() {
    let r = run_dir("volcano/preempt-enough-tasks");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1", "preemptee2"]);
    assert_eq!(evictions(&r, "Preempt"), 2);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
}

#[test]
fn preempt_case_low_priority_job_for_the_queue_share() {
    // "preempt low priority job in same queue" (volcano issue 3161): the node has room,
    // the queue's deserved share has not.
    let r = run_dir("volcano/preempt-queue-allocatable");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
    assert_eq!(evictions(&r, "Preempt"), 1);
}

/// `Session.Allocatable` skips a plugin whose `enabledAllocatable` is false: preempt's
/// `preemptorFitsOnNode` then reads the node alone, so a preemptor above its queue's
/// capability on its own still preempts (it waited for good while the switch was read by
/// allocate only). With the switch on, nothing is evicted.
#[test]
fn preempt_reads_the_queue_plugins_enabled_allocatable() {
    let r = run_dir("volcano/preempt-allocatable-off");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
    assert_eq!(evictions(&r, "Preempt"), 1);
    let on = scenario_text("volcano/preempt-allocatable-off")
        .replace("          enabledAllocatable: false\n", "");
    let r = run_text(&on);
    assert!(evicted(wl(&r, "c1", "pg1")).is_empty());
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
}

#[test]
fn preempt_case_commits_only_the_node_that_fits() {
    let r = run_dir("volcano/preempt-commit-one-node");
    assert_eq!(pods(wl(&r, "c1", "pg1")), [("preemptee1", Some("n1"))]);
    assert!(evict_events(wl(&r, "c1", "pg1")).is_empty());
    assert_eq!(evicted(wl(&r, "c1", "pg3")), ["preemptee2"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n2"))]);
    assert_eq!(evictions(&r, "Preempt"), 1);
}

#[test]
fn preempt_tries_the_nodes_by_node_score() {
    // `normalPreempt` sorts the predicate nodes by the node-order plugins' score
    // (`PrioritizeNodes`, `SortNodes`): leastrequested puts n2 (more memory left) before
    // n1, so b1 is the victim, not a1 as node order would have it.
    let r = run_dir("volcano/preempt-node-score");
    assert_eq!(pods(wl(&r, "c1", "pga")), [("a1", Some("n1"))]);
    assert!(evict_events(wl(&r, "c1", "pga")).is_empty());
    assert_eq!(evicted(wl(&r, "c1", "pgb")), ["b1"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n2"))]);
    assert_eq!(evictions(&r, "Preempt"), 1);
}

#[test]
fn drf_votes_victims_among_jobs_of_one_priority() {
    // The first tier (priority, gang, conformance) finds no victim of a lower priority, so
    // drf's vote in the second decides: pga keeps the preemptor's share (0.5) without a1.
    let r = run_dir("volcano/preempt-drf");
    assert_eq!(evicted(wl(&r, "c1", "pga")), ["a1"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("p1", Some("n1"))]);
    assert_eq!(evictions(&r, "Preempt"), 1);
    // A task of 3 cpu gives pg2 a share of 0.75, above what pga keeps without a1 (0.5):
    // drf votes for no one and nothing is evicted.
    let text = scenario_text("volcano/preempt-drf").replace(
        "requests: {cpu: '2', memory: 256Mi}",
        "requests: {cpu: '3', memory: 256Mi}",
    );
    let r = run_text(&text);
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("p1", None)]);
}

#[test]
fn enable_preemptable_and_enable_job_starving_take_a_plugin_out_of_their_function() {
    // `enablePreemptable: false` on priority (one tier, jobs of one priority): priority no
    // longer vetoes, so gang and conformance vote every pod of pga (`Session.Preemptable`
    // skips priority) and the victims' order takes the one scheduled last, a3.
    let text = scenario_text("volcano/preempt-drf").replace(
        "      - plugins:
        - name: priority
        - name: gang
        - name: conformance
      - plugins:
        - name: drf
        - name: proportion",
        "      - plugins:
        - name: priority
          enablePreemptable: false
        - name: gang
        - name: conformance
        - name: proportion",
    );
    assert!(text.contains("enablePreemptable: false"), "{text}");
    let loaded = load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !loaded.warnings.iter().any(|w| w.contains("not simulated")),
        "{:?}",
        loaded.warnings
    );
    let r = run_text(&text);
    assert_eq!(evicted(wl(&r, "c1", "pga")), ["a3"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("p1", Some("n1"))]);
    // `enableJobStarving: false` on gang and priority: no plugin says the preemptor's job
    // starves (`Session.JobStarving` is false without one), so preempt skips it.
    let text = scenario_text("volcano/preempt-one-task").replace(
        "        - name: gang
        - name: priority",
        "        - name: gang
          enableJobStarving: false
        - name: priority
          enableJobStarving: false",
    );
    assert!(text.contains("enableJobStarving: false"), "{text}");
    let r = run_text(&text);
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert!(evicted(wl(&r, "c1", "pg1")).is_empty());
}

#[test]
fn preempt_cases_with_best_effort_pods_take_the_pod_slot() {
    // preempt_test.go "unBestEffort high-priority pod preempt BestEffort low-priority pod
    // in same queue": n1 holds one pod; the BestEffort victim goes, the preemptor binds.
    // Guards: the main branch before BestEffort pods were told apart agrees; each fails if
    // the pod count stopped counting or a pod without requests stopped being a victim.
    let r = run_dir("volcano/preempt-best-effort-victim");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1"]);
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
    // "BestEffort high-priority pod preempt BestEffort low-priority pod in same queue":
    // one eviction, as upstream expects (the job starves: gang counts no pending
    // BestEffort pod as occupied); allocate then places neither BestEffort pod (backfill's
    // work, not listed).
    let r = run_dir("volcano/preempt-best-effort-preemptor");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1"]);
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
    // "BestEffort pod is not supported to preempt unBestEffort pod" (preempt's filter): the
    // BestEffort preemptor leaves a victim that requests resources alone.
    let text = scenario_text("volcano/preempt-best-effort-preemptor").replacen(
        "  nodeName: n1
  containers:
  - name: c",
        "  nodeName: n1
  containers:
  - resources:
      requests: {cpu: '1', memory: 1G}",
        1,
    );
    assert!(text.contains("requests: {cpu: '1', memory: 1G}"), "{text}");
    let r = run_text(&text);
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg1")), [("preemptee1", Some("n1"))]);
}

#[test]
fn backfill_places_best_effort_pods_and_nothing_else_does() {
    // backfill places be1 although proportion reads q1 (whose jobs request nothing) as
    // overused: it checks no queue.
    let r = run_dir("volcano/backfill-best-effort");
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("be1", Some("n1"))]);
    // Without backfill, allocate skips BestEffort tasks: be1 stays pending, with the
    // queue plugin or without it.
    let text = scenario_text("volcano/backfill-best-effort").replace(
        r#"actions: "enqueue, allocate, backfill""#,
        r#"actions: "enqueue, allocate""#,
    );
    assert!(!text.contains("backfill\""), "{text}");
    let r = run_text(&text);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("be1", None)]);
    let r = run_text(&text.replace("        - name: proportion\n", ""));
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("be1", None)]);
}

#[test]
fn preempt_case_takes_a_jobs_lower_priority_pod_first() {
    // preempt_test.go "preempt low priority job in same queue but not pod with
    // preemptable=false or higher priority": preemptee1 is not preemptable, preemptee3's own
    // priority is high; the victims' order takes preemptee2 (its job's task order reversed).
    let r = run_dir("volcano/preempt-task-priority");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee2"]);
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
}

#[test]
fn preempt_case_multi_queue_preempts_within_the_queue() {
    let r = run_dir("volcano/preempt-multi-queue");
    assert_eq!(pods(wl(&r, "c1", "pg1")), [("q1-runner1", Some("n1"))]);
    assert_eq!(evicted(wl(&r, "c1", "pg2")), ["q2-preemptee1"]);
    assert_eq!(pods(wl(&r, "c1", "pg3")), [("q2-preemptor1", Some("n1"))]);
}

/// TestTopologyAwarePreempt "preemption with priority queues", on the normal path: the
/// node is full with a pod of each queue, and preempt evicts only within the preemptor's
/// queue q1 (preemptee1), never q2's preemptee2 though q2's job is of the same priority
/// as the preemptor and q2 is the higher-priority queue.
#[test]
fn preempt_case_priority_queues_evicts_within_the_queue() {
    let r = run_dir("volcano/preempt-priority-queues");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1"]);
    assert_eq!(evict_events(wl(&r, "c1", "pg1")), [(0.0, "preempt")]);
    assert_eq!(pods(wl(&r, "c1", "pg3")), [("preemptee2", Some("n1"))]);
    assert!(evict_events(wl(&r, "c1", "pg3")).is_empty());
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
    // Bound once preemptee1 has terminated (podTermination 30s).
    assert_eq!(wl(&r, "c1", "pg2").pod_sets[0].pods[0].bound_at, Some(30.0));
}

#[test]
fn preempt_cases_that_evict_nothing() {
    // "do not preempt if there are enough idle resources", "do not preempt if job is
    // pipelined", "preempt low priority job in same queue: allocatable and has enough
    // resource, don't preempt", "rollback evictions when preemptor exceeds queue capacity
    // after evicting victims". Guards: today's main evicts nothing either.
    let r = run_dir("volcano/preempt-idle");
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(
        pods(wl(&r, "c1", "pg1")),
        [
            ("preemptee1", Some("n1")),
            ("preemptee2", Some("n1")),
            ("preemptor1", Some("n1"))
        ]
    );
    let r = run_dir("volcano/preempt-pipelined");
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(
        pods(wl(&r, "c1", "pg2")),
        [("preemptee3", Some("n1")), ("preemptor2", None)]
    );
    let r = run_dir("volcano/preempt-queue-room");
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg1")), [("preemptee1", Some("n1"))]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
    let r = run_dir("volcano/preempt-rollback");
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert!(evict_events(wl(&r, "c1", "pg1")).is_empty());
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
}

#[test]
fn reclaim_case_overused_queue() {
    // reclaim_test.go "Two Queue with one Queue overusing resource, should reclaim".
    let r = run_dir("volcano/reclaim-overused-queue");
    let pg1 = wl(&r, "c1", "pg1");
    assert_eq!(evicted(pg1), ["preemptee2"]);
    assert_eq!(evict_events(pg1), [(0.0, "reclaim")]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
}

#[test]
fn reclaim_case_lower_priority_job_first() {
    let r = run_dir("volcano/reclaim-job-order");
    assert!(evicted(wl(&r, "c1", "pg1")).is_empty());
    assert_eq!(evicted(wl(&r, "c1", "pg2")), ["preemptee2-1"]);
    assert_eq!(pods(wl(&r, "c1", "pg3")), [("preemptor1", Some("n1"))]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
}

#[test]
fn reclaim_case_lower_priority_queue_first() {
    let r = run_dir("volcano/reclaim-queue-priority");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1-1"]);
    assert!(evicted(wl(&r, "c1", "pg2")).is_empty());
    assert_eq!(pods(wl(&r, "c1", "pg3")), [("preemptor1", Some("n1"))]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
}

#[test]
fn reclaim_case_counts_the_node_idle_resources() {
    let r = run_dir("volcano/reclaim-node-idle");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1-1"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptee2-1", Some("n1"))]);
    assert_eq!(pods(wl(&r, "c1", "pg3")), [("preemptor1", Some("n1"))]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
}

#[test]
fn reclaim_cases_that_evict_nothing() {
    // "can not reclaim resources when queue is not open(proportion plugin)" and "only
    // commit evictions on the node where reclaim succeeds". Guards: today's main evicts
    // nothing either.
    let r = run_dir("volcano/reclaim-closed-queue");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert!(evicted(wl(&r, "c1", "pg1")).is_empty());
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
    let r = run_dir("volcano/reclaim-idle-node");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg-victim")), [("victim-n1", Some("n1"))]);
    assert_eq!(
        pods(wl(&r, "c1", "pg-preemptor")),
        [("preemptor1", Some("n1"))]
    );
}

/// The pods of every workload that ended without a node, by PodGroup.
fn all_evicted(r: &SimulationResult) -> Vec<(&str, Vec<&str>)> {
    r.workloads
        .iter()
        .map(|w| (w.name.as_str(), evicted(w)))
        .filter(|(_, e)| !e.is_empty())
        .collect()
}

#[test]
fn capacity_reclaim_case_2_from_a_queue_above_its_deserved() {
    // capacity_test.go Test_capacityPlugin_OnSessionOpenWithoutHierarchy "case2".
    let r = run_dir("volcano/capacity-reclaim-below-deserved");
    assert_eq!(evicted(wl(&r, "ns1", "pg5")), ["p6"]);
    assert_eq!(evict_events(wl(&r, "ns1", "pg5")), [(0.0, "reclaim")]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg6")), [("p7", Some("n2"))]);
    assert_eq!(
        wl(&r, "ns1", "pg6").pod_sets[0].pods[0].bound_at,
        Some(30.0)
    );
}

#[test]
fn capacity_reclaim_case_3_a_scalar_only_reclaimer() {
    let r = run_dir("volcano/capacity-reclaim-scalar-only");
    assert_eq!(all_evicted(&r), [("pg7", vec!["p9"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg9")), [("p12", Some("n4"))]);
}

#[test]
fn capacity_reclaim_case_5_within_the_deserved_in_one_dimension() {
    let r = run_dir("volcano/capacity-reclaim-one-dimension");
    assert_eq!(all_evicted(&r), [("pg18", vec!["p18"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg17")), [("p17", Some("n1"))]);
}

#[test]
fn capacity_reclaim_case_8_only_in_the_reclaimer_dimensions() {
    let r = run_dir("volcano/capacity-reclaim-reclaimer-dimensions");
    assert_eq!(all_evicted(&r), [("pg28", vec!["p28"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg30")), [("p30", Some("n8"))]);
}

#[test]
fn capacity_reclaim_cases_that_evict_nothing() {
    // "case6", "case7", "case9" and "case10", and reclaim_test.go "can not reclaim resources
    // when queue is not open(capacity plugin)". Guards: today's main evicts nothing either.
    let r = run_dir("volcano/capacity-reclaim-closed-queue");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
    let r = run_dir("volcano/capacity-reclaim-above-deserved");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "ns1", "pg20")), [("p20", None)]);
    let r = run_dir("volcano/capacity-reclaim-scalar-not-allocated");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "ns1", "pg25")), [("p25", None)]);
    let r = run_dir("volcano/capacity-reclaim-scalar-queue");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "ns1", "pg32")), [("p32", None)]);
    let r = run_dir("volcano/capacity-reclaim-capability");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "ns1", "pg34")), [("p34", None)]);
}

#[test]
fn capacity_hierarchy_reclaim_cases_3_and_12() {
    // capacity_test.go Test_capacityPlugin_OnSessionOpenWithHierarchy "case3" and "case12".
    let r = run_dir("volcano/capacity-hierarchy-reclaim");
    assert_eq!(all_evicted(&r), [("pg5", vec!["p7"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg6")), [("p8", Some("n1"))]);
    let r = run_dir("volcano/capacity-hierarchy-reclaim-scalar");
    assert_eq!(all_evicted(&r), [("pg17", vec!["p17"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg16")), [("p16", Some("n3"))]);
}

#[test]
fn capacity_ancestor_reclaim_cases_that_evict() {
    // capacity_test.go Test_capacityPlugin_AncestorReclaimScenarios "case1", "case5" and
    // "case6": the reclaimer's parent deserves what it asks for (level 1); the victim's
    // queue is above its deserved (level 0), and so is its parent (level 1).
    let r = run_dir("volcano/capacity-ancestor-parent-deserved");
    assert_eq!(all_evicted(&r), [("pg1", vec!["p1"])]);
    assert_eq!(pods(wl(&r, "ns1", "pg2")), [("p2", Some("n1"))]);
    // "case2": across project roots, the lowest-priority victim of the queue above its
    // deserved under a parent above its own.
    let r = run_dir("volcano/capacity-ancestor-cross-parent");
    assert_eq!(all_evicted(&r), [("pg4", vec!["p4"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg5")), [("p5", Some("n1"))]);
    // "case3": the sibling queue's victim p3 for pg6; pg4-reclaimed, whose queue deserves
    // nothing, reclaims nothing. The test's PodGroup phases (Inqueue, Pending) are not read:
    // both are let in. A guard: today's main evicts the same.
    let r = run_dir("volcano/capacity-ancestor-sibling-first");
    assert_eq!(evict_events(wl(&r, "ns1", "pg3")), [(0.0, "reclaim")]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg6")), [("p6", Some("n1"))]);
    assert_eq!(pods(wl(&r, "ns1", "pg4-reclaimed")), [("p4", None)]);
    for dir in ["capacity-ancestor-level-0", "capacity-ancestor-level-1"] {
        let r = run_dir(&format!("volcano/{dir}"));
        assert_eq!(all_evicted(&r), [("pg-victim", vec!["p-victim"])], "{dir}");
        assert_eq!(evictions(&r, "Reclaim"), 1, "{dir}");
        assert_eq!(
            pods(wl(&r, "ns1", "pg-reclaimer")),
            [("p-reclaimer", Some("n1"))],
            "{dir}"
        );
    }
}

#[test]
fn capacity_ancestor_reclaim_cases_that_evict_nothing() {
    // "case4", "case7" (the level-1 tree of case 6 at level 2: the grandparent is within
    // its deserved), "case8", "case9", "case10" and "case11". Guards: today's main evicts
    // nothing either.
    let r = run_dir("volcano/capacity-ancestor-victim-within-deserved");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "ns1", "pg2")), [("p2", None)]);
    for dir in [
        "capacity-ancestor-level-2",
        "capacity-ancestor-siblings-unset",
        "capacity-ancestor-shared-grandparent",
        "capacity-ancestor-unbalanced",
        "capacity-ancestor-unbalanced-depth-2",
    ] {
        let r = run_dir(&format!("volcano/{dir}"));
        assert_eq!(evictions(&r, "Reclaim"), 0, "{dir}");
        assert_eq!(
            pods(wl(&r, "ns1", "pg-reclaimer")),
            [("p-reclaimer", None)],
            "{dir}"
        );
    }
}

/// The text of `scenarios/<rel>/scenario.yaml`.
fn scenario_text(rel: &str) -> String {
    std::fs::read_to_string(crate::util::scenarios_dir().join(rel).join("scenario.yaml"))
        .expect("the scenario")
}

#[test]
fn preempt_case_preemption_policy_never_evicts_nothing() {
    // preempt_test.go "can not preempt resources when task preemption policy is never".
    let r = run_dir("volcano/preempt-policy-never");
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg1")), [("preemptee1", Some("n1"))]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
    // Without the policy the same job preempts (the guard of the case).
    let text = scenario_text("volcano/preempt-policy-never");
    let r = run_text(&text.replace("  preemptionPolicy: Never\n", ""));
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
}

#[test]
fn reclaim_cases_preemption_policy_never() {
    // reclaim_test.go "can not reclaim resources when task preemption policy is never": as
    // upstream (pg2 of minMember 0 does not starve either), then with minMember 1, where
    // only the policy keeps reclaim from evicting.
    let r = run_dir("volcano/reclaim-policy-never");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    // The variant: pg2 of minMember 1, and n1 of 2 cpu, 2Gi full with a second pod of pg1,
    // so that q2 deserves the 1 cpu preemptor1 asks for (weights 5 and 10: q1 1 cpu, q2 1).
    let original = scenario_text("volcano/reclaim-policy-never");
    let preemptee = &original[original
        .find("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: preemptee1")
        .expect("preemptee1")..];
    let preemptee = &preemptee[..preemptee[4..].find("---").expect("a next document") + 4];
    let text = original
        .replace(
            "metadata: {name: pg2, namespace: c1}\nspec: {minMember: 0",
            "metadata: {name: pg2, namespace: c1}\nspec: {minMember: 1",
        )
        .replace(
            "allocatable: {cpu: '1', memory: 1Gi, pods: '1'}",
            "allocatable: {cpu: '2', memory: 2Gi, pods: '2'}",
        )
        + &preemptee.replace("preemptee1", "preemptee2");
    let r = run_text(&text);
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(
        pods(wl(&r, "c1", "pg1")),
        [("preemptee1", Some("n1")), ("preemptee2", Some("n1"))]
    );
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
    // The pod's own policy taken out: its PriorityClass's Never (copied into the pod by the
    // API server's Priority admission) still holds it back.
    let class_only = text.replace("  preemptionPolicy: Never\n", "");
    assert_ne!(class_only, text);
    assert_eq!(evictions(&run_text(&class_only), "Reclaim"), 0);
    // The pod's own PreemptLowerPriority goes before its class's Never: it reclaims.
    let own = text.replace(
        "  preemptionPolicy: Never\n",
        "  preemptionPolicy: PreemptLowerPriority\n",
    );
    let r = run_text(&own);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(evicted(wl(&r, "c1", "pg1")).len(), 1);
    // "Reclaim succeeds for second task when first task has PreemptionPolicy=Never": the
    // second task evicts victim-pod (a guard: main evicts it for the first task); with both
    // tasks Never nothing is evicted.
    let r = run_dir("volcano/reclaim-policy-never-second-task");
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(evicted(wl(&r, "c1", "pg-victim")), ["victim-pod"]);
    let text = scenario_text("volcano/reclaim-policy-never-second-task");
    let both = text.replace(
        "  name: preemptor-task2-preemptable\n  namespace: c1\n  annotations: {kueuesim.io/duration: 1h, scheduling.k8s.io/group-name: pg-preemptor}\nspec:\n  schedulerName: volcano\n",
        "  name: preemptor-task2-preemptable\n  namespace: c1\n  annotations: {kueuesim.io/duration: 1h, scheduling.k8s.io/group-name: pg-preemptor}\nspec:\n  schedulerName: volcano\n  preemptionPolicy: Never\n",
    );
    assert_ne!(both, text);
    let r = run_text(&both);
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert!(evicted(wl(&r, "c1", "pg-victim")).is_empty());
}

#[test]
fn a_misspelt_preemption_policy_is_an_error_at_its_place() {
    let text = scenario_text("volcano/reclaim-policy-never");
    let e = load_error(&text.replace("  preemptionPolicy: Never\n", "  preemptionPolicy: Nevr\n"));
    assert!(
        e.contains(
            "invalid preemptionPolicy \"Nevr\": expected one of Never, PreemptLowerPriority"
        ),
        "{e}"
    );
    assert!(e.contains("t.yaml:"), "{e}");
    let e = load_error(&text.replace(
        "value: 1000\npreemptionPolicy: Never",
        "value: 1000\npreemptionPolicy: never",
    ));
    assert!(e.contains("invalid preemptionPolicy \"never\""), "{e}");
}

#[test]
fn preempt_runs_after_allocate_has_placed_every_job() {
    // Upstream semantics (runOnce: each action over all jobs): allocate places pg-b on the
    // idle cpu before preempt starts, so pg-a's preempt finds on n1 only the 1 cpu of the
    // pod gang lets pg-low give, short of its 2 (`ValidateVictims`), and evicts nothing.
    let r = run_dir("volcano/preempt-after-allocate");
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(
        pods(wl(&r, "c1", "pg-low")),
        [("low-1", Some("n1")), ("low-2", Some("n1"))]
    );
    assert_eq!(pods(wl(&r, "c1", "pg-b")), [("b-1", Some("n1"))]);
    assert_eq!(pods(wl(&r, "c1", "pg-a")), [("a-1", None)]);
    assert!(evict_events(wl(&r, "c1", "pg-low")).is_empty());
    // Without pg-b, pg-a preempts low-1 and binds in its place (the guard of the case).
    let text = scenario_text("volcano/preempt-after-allocate");
    let cut = text.find("metadata: {name: pg-b").expect("pg-b");
    let start = text[..cut].rfind("---").expect("its document");
    let r = run_text(&text[..start]);
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(pods(wl(&r, "c1", "pg-a")), [("a-1", Some("n1"))]);
}

#[test]
fn reclaim_listed_before_preempt_runs_first_over_all_jobs() {
    // Upstream semantics: with `reclaim` before `preempt` in the conf, pg-b (q2) reclaims a
    // pod of pg-low before pg-a (q1, first in allocate's queue order) may preempt it; gang
    // then keeps pg-low's last pod from pg-a.
    let r = run_dir("volcano/reclaim-before-preempt");
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(evictions(&r, "Preempt"), 0);
    let low = wl(&r, "c1", "pg-low");
    assert_eq!(evict_events(low), [(0.0, "reclaim")]);
    assert_eq!(evicted(low), ["low-2"]);
    assert_eq!(pods(wl(&r, "c1", "pg-b")), [("b-1", Some("n1"))]);
    assert_eq!(
        wl(&r, "c1", "pg-b").pod_sets[0].pods[0].bound_at,
        Some(30.0)
    );
    assert_eq!(pods(wl(&r, "c1", "pg-a")), [("a-1", None)]);
    // In the conf's other order preempt goes first: pg-a takes low-1 at once; reclaim in the
    // same session then finds q1 within its deserved (low-1, Releasing, no longer counts in
    // its allocated) and takes low-2 for pg-b only at the next session, once a-1 holds
    // q1's cpu.
    let text = scenario_text("volcano/reclaim-before-preempt");
    let r = run_text(&text.replace(
        "actions: \"allocate, reclaim, preempt\"",
        "actions: \"allocate, preempt, reclaim\"",
    ));
    assert_eq!(
        evict_events(wl(&r, "c1", "pg-low")),
        [(0.0, "preempt"), (30.0, "reclaim")]
    );
    assert_eq!(pods(wl(&r, "c1", "pg-a")), [("a-1", Some("n1"))]);
    assert_eq!(
        wl(&r, "c1", "pg-a").pod_sets[0].pods[0].bound_at,
        Some(30.0)
    );
}

#[test]
fn enqueue_listed_after_allocate_lets_jobs_in_for_the_next_allocate() {
    // `proportion` with `allocate, enqueue`: the session's allocate leaves the Pending
    // PodGroups alone (enqueue is in the conf), its enqueue lets them in, and the next
    // session (at the same instant here, where upstream's comes a period later) binds them
    // as in the conf's usual order.
    let text = scenario_text("volcano/proportion");
    assert!(text.contains("actions: \"enqueue, allocate\""));
    let r = run_text(&text.replace(
        "actions: \"enqueue, allocate\"",
        "actions: \"allocate, enqueue\"",
    ));
    for (pg, node) in [("pg3", "n1"), ("pg4", "n2")] {
        let w = wl(&r, "ns1", pg);
        assert_eq!(pods(w).first().and_then(|p| p.1), Some(node), "{pg}");
        assert_eq!(w.pod_sets[0].pods[0].bound_at, Some(0.0), "{pg}");
    }
}

#[test]
fn preempt_within_a_job_takes_its_lower_priority_task() {
    // preempt.go's second loop, "Preemption between Task within Job": master (high task
    // priority) evicts a worker of its own job (low), once, and binds in its place.
    let r = run_dir("volcano/preempt-within-job");
    let pg1 = wl(&r, "c1", "pg1");
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(evict_events(pg1), [(0.0, "preempt")]);
    assert_eq!(
        pods(pg1),
        [
            ("master", Some("n1")),
            ("worker-0", None),
            ("worker-1", Some("n1"))
        ]
    );
    assert_eq!(pg1.pod_sets[0].pods[0].bound_at, Some(30.0));
    // With gang deciding JobStarving too (upstream's default), pg1 at its minMember does
    // not starve: nothing is evicted and master waits.
    let text = scenario_text("volcano/preempt-within-job");
    let r = run_text(&text.replace("          enableJobStarving: false\n", ""));
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg1"))[0], ("master", None));
    // A task of the job's own priority is no victim: with master at low-priority nothing
    // is evicted either.
    let r = run_text(&text.replacen(
        "  priorityClassName: high-priority\n",
        "  priorityClassName: low-priority\n",
        1,
    ));
    assert_eq!(evictions(&r, "Preempt"), 0);
    // master with `preemptionPolicy: Never` ends its job's loop at once.
    let r = run_text(&text.replacen(
        "  priorityClassName: high-priority\n",
        "  priorityClassName: high-priority\n  preemptionPolicy: Never\n",
        1,
    ));
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg1"))[0], ("master", None));
}
