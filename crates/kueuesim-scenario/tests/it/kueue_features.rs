//! Kueue features as golden scenarios under `scenarios/kueue/`: each scenario's header holds
//! the hand computation, and the test asserts it field by field (times in seconds, flavors,
//! states, queue statuses, and the conditions and events Kueue writes).
//!
//! Some scenarios are also cut short (`run_until`) to look at the state between two events,
//! for instance while a preempted workload is still terminating.
//!
//! Some tests pin behaviours where a first version of the simulator differed from upstream
//! Kueue (main `ff69552e`); their comments cite the upstream source.

use kueuesim_engine::Simulation;
use kueuesim_model::SimTime;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result};

use crate::util::{condition, id, load_dir, run_dir, times, warnings, wl};

/// Runs `scenarios/kueue/<name>` to its own horizon.
pub(crate) fn run(name: &str) -> SimulationResult {
    run_dir(&format!("kueue/{name}"))
}

/// Runs `scenarios/kueue/<name>` up to `secs` seconds (as `--until` does) and reports the
/// state at that time.
pub(crate) fn run_until(name: &str, secs: f64) -> SimulationResult {
    let mut loaded = load_dir(&format!("kueue/{name}"));
    loaded.world.config.until = Some(SimTime::from_millis((secs * 1000.0).round() as i64));
    let outcome = Simulation::new(&loaded.world).run();
    result(&loaded.world, &outcome)
}

/// The condition `kind` has this status, reason and message.
pub(crate) fn assert_condition(
    w: &WorkloadOut,
    kind: &str,
    status: &str,
    reason: &str,
    message: &str,
) {
    let c = condition(w, kind);
    assert_eq!(
        (c.status, c.reason, c.message.as_str()),
        (status, reason, message),
        "{}: {kind} condition",
        id(w)
    );
}

/// Admitted at `admitted`, running at once (quota-only, no start-up delay), finished at
/// `finished`.
pub(crate) fn assert_ran(w: &WorkloadOut, admitted: f64, finished: f64) {
    assert_eq!(w.state, "Finished", "{}: state", id(w));
    assert_eq!(
        times(w),
        (Some(admitted), Some(admitted), Some(finished)),
        "{}: (admittedAt, runningAt, finishedAt)",
        id(w)
    );
}

fn assert_flavors(w: &WorkloadOut, expected: &[(&str, &str)]) {
    let got: Vec<(&str, &str)> = w.pod_sets[0]
        .flavors
        .iter()
        .map(|(r, f)| (r.as_str(), f.as_str()))
        .collect();
    assert_eq!(got, expected, "{}: flavors", id(w));
}

/// Pending, never admitted (so far), in the given queue status.
pub(crate) fn assert_pending(w: &WorkloadOut, queue_status: Option<&str>) {
    assert_eq!(w.state, "Pending", "{}: state", id(w));
    assert_eq!(
        w.queue_status.as_deref(),
        queue_status,
        "{}: queueStatus",
        id(w)
    );
}

/// The events of Kueue's scheduler on `w` with `reason`, as (at, type, message).
pub(crate) fn events<'a>(w: &'a WorkloadOut, reason: &str) -> Vec<(f64, &'a str, &'a str)> {
    w.events
        .iter()
        .filter(|e| e.source == "kueue-admission" && e.reason == reason)
        .map(|e| (e.at, e.kind, e.message.as_str()))
        .collect()
}

fn assert_no_events(w: &WorkloadOut) {
    assert!(w.events.is_empty(), "{}: {:?}", id(w), w.events);
}

/// One eviction, by preemption, at `at`, for `preemption_reason`, by `preemptor`.
pub(crate) fn assert_preempted_once(
    w: &WorkloadOut,
    at: f64,
    preemption_reason: &str,
    preemptor: &str,
) {
    assert_eq!(w.evictions.len(), 1, "{}: evictions", id(w));
    let e = &w.evictions[0];
    assert_eq!(
        (e.at, e.reason, e.preemption_reason, e.preemptor.as_deref()),
        (at, "Preempted", Some(preemption_reason), Some(preemptor)),
        "{}: eviction",
        id(w)
    );
}

pub(crate) fn no_longer_fits() -> &'static str {
    "Workload no longer fits after processing another workload"
}

pub(crate) fn more_needed(flavor: &str, n: u32) -> String {
    format!(
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor {flavor}, {n} more needed"
    )
}

pub(crate) fn pending_preemption(flavor: &str, n: u32) -> String {
    format!(
        "{}. Pending the preemption of 1 workload(s)",
        more_needed(flavor, n)
    )
}

// ---- 1. cohort-cycle ----

const LOOPS_INACTIVE: &str = "ClusterQueue loops is inactive";

#[test]
fn cohort_cycle() {
    let r = run("cohort-cycle");
    for job in ["stuck-1", "stuck-2"] {
        let w = wl(&r, "team", job);
        assert_eq!(w.state, "Pending", "{job}");
        assert_eq!(times(w), (None, None, None), "{job}");
        assert!(w.evictions.is_empty());
        assert_condition(w, "QuotaReserved", "False", "Suspended", LOOPS_INACTIVE);
        assert_eq!(condition(w, "QuotaReserved").at, 0.0);
        assert_condition(
            w,
            "Admitted",
            "False",
            "NoReservation",
            "The workload has no reservation",
        );
        assert_eq!(w.pod_sets[0].admitted_count, None);
    }
    let borrow = wl(&r, "team", "borrow");
    assert_ran(borrow, 0.0, 3600.0);
    assert_eq!(borrow.cluster_queue.as_deref(), Some("ok-borrower"));
    assert_flavors(borrow, &[("cpu", "default")]);
    assert_condition(
        borrow,
        "QuotaReserved",
        "True",
        "QuotaReserved",
        "Quota reserved in ClusterQueue ok-borrower",
    );
    assert_eq!(r.summary.admissions, 1);
}

/// Upstream keeps popping heads of a ClusterQueue in a cohort cycle: the cycle does not make
/// it inactive in the cache (`pkg/cache/scheduler/clusterqueue.go` `updateQueueStatus`
/// looks at stopPolicy, flavors, admission checks, TAS only), so `Manager.heads`
/// (`pkg/cache/queue/manager.go`) pops them; the snapshot puts the queue in
/// `InactiveClusterQueueSets` (`pkg/cache/scheduler/snapshot.go` `skipInactiveCQReason`,
/// `HasCycle`), `nominate` (`pkg/scheduler/scheduler.go`) makes an inadmissible entry
/// (Suspended, "ClusterQueue loops is inactive"), and `requeueAndUpdate` records a Warning
/// event with that reason and requeues it with `RequeueReasonGeneric`, which BestEffortFIFO
/// sends to the inadmissible list (`cluster_queue.go` `RequeueIfNotPresent`); cohort requeues
/// skip trees with cycles (`inadmissible_workloads.go` `requeueWorkloadsCohort`).
#[test]
fn cohort_cycle_heads_are_requeued_inadmissible() {
    let r = run("cohort-cycle");
    for job in ["stuck-1", "stuck-2"] {
        let w = wl(&r, "team", job);
        assert_pending(w, Some("inadmissible"));
        assert_eq!(warnings(w), [(0.0, "Suspended", LOOPS_INACTIVE)], "{job}");
    }
}

// ---- 2. resource-group-unit ----

#[test]
fn resource_group_unit() {
    let r = run("resource-group-unit");
    let mem = wl(&r, "team", "mem-heavy");
    assert_ran(mem, 0.0, 3600.0);
    // cpu alone fit `small`, but memory did not: the group moves to `big` as a whole.
    assert_flavors(
        mem,
        &[
            ("cpu", "big"),
            ("memory", "big"),
            ("nvidia.com/gpu", "a100"),
        ],
    );
    let gpu = wl(&r, "team", "gpu-heavy");
    assert_ran(gpu, 60.0, 3660.0);
    // The GPU group is chosen on its own: a100 has too little, h100 is used.
    assert_flavors(
        gpu,
        &[
            ("cpu", "small"),
            ("memory", "small"),
            ("nvidia.com/gpu", "h100"),
        ],
    );
    let cpu = wl(&r, "team", "cpu-heavy");
    assert_ran(cpu, 120.0, 3720.0);
    // cpu does not fit what is left of `small`; memory follows it to `big`.
    assert_flavors(cpu, &[("cpu", "big"), ("memory", "big")]);
    for w in [mem, gpu, cpu] {
        assert!(warnings(w).is_empty(), "{}: {:?}", id(w), warnings(w));
        assert_eq!(w.pod_sets[0].admitted_count, Some(1));
    }
}

// ---- 3. flavor-node-labels-and-taints ----

const NOWHERE_MESSAGE: &str = "couldn't assign flavors to pod set main: flavor zone-a doesn't match node affinity, flavor zone-b doesn't match node affinity, untolerated taint {spot true NoSchedule <nil>} in flavor spot";

#[test]
fn flavor_node_labels_and_taints() {
    let r = run("flavor-node-labels-and-taints");
    for (job, flavor, node) in [
        ("plain", "zone-a", "node-a"),
        // nodeSelector zone=b contradicts zone-a; spot defines no zone label.
        ("tolerant", "spot", "node-spot"),
        // zone-a contradicts the selector, spot's taint is not tolerated.
        ("picky", "zone-b", "node-b"),
    ] {
        let w = wl(&r, "team", job);
        assert_ran(w, 0.0, 3600.0);
        assert_flavors(w, &[("cpu", flavor)]);
        assert_eq!(w.pod_sets[0].nodes, [node], "{job}: nodes");
        assert!(warnings(w).is_empty(), "{job}: {:?}", warnings(w));
    }
    let nowhere = wl(&r, "team", "nowhere");
    assert_pending(nowhere, Some("inadmissible"));
    assert_eq!(times(nowhere), (None, None, None));
    assert_condition(
        nowhere,
        "QuotaReserved",
        "False",
        "NoMatchingFlavor",
        NOWHERE_MESSAGE,
    );
    assert_eq!(
        warnings(nowhere),
        [(0.0, "NoMatchingFlavor", NOWHERE_MESSAGE)]
    );
    assert!(nowhere.pod_sets[0].nodes.is_empty());
}

#[test]
fn a_resource_the_cluster_queue_does_not_cover_is_pending_not_an_empty_reason() {
    // cpu fits (a Fit attempt), nvidia.com/gpu has no resource group: no NoFit attempt, so
    // `resolveNoFitReason` has nothing to say and kueuesim writes `Pending`.
    let r = run("resource-unavailable-reason");
    let w = wl(&r, "default", "w");
    assert_pending(w, Some("inadmissible"));
    const MESSAGE: &str = "couldn't assign flavors to pod set main: resource nvidia.com/gpu unavailable in ClusterQueue";
    assert_condition(w, "QuotaReserved", "False", "Pending", MESSAGE);
    assert_eq!(warnings(w), [(0.0, "Pending", MESSAGE)]);
}

/// Upstream's `admit` (`pkg/scheduler/scheduler.go`) passes
/// `flavorassigner.FormatFlavorAssignmentAttemptsForEvents(e.assignment)`
/// (`pkg/scheduler/flavorassigner/flavor_assigner_attempts.go`) to
/// `recordQuotaReservationMetrics`, which appends `; Flavors considered: <podset>:
/// <flavor>(<mode>[;borrow=N][;reasons]), …` to the QuotaReserved event whenever an attempt
/// other than a plain fit (Fit, borrow 0) was made; attempts are sorted by flavor name.
/// The same applies to every admission that borrows (`default(Fit;borrow=1)`).
#[test]
fn flavor_node_labels_and_taints_quota_reserved_event_lists_considered_flavors() {
    let r = run("flavor-node-labels-and-taints");
    let quota_reserved = |job: &str| -> String {
        let w = wl(&r, "team", job);
        let e = events(w, "QuotaReserved");
        assert_eq!(e.len(), 1, "{job}");
        e[0].2.to_string()
    };
    let base = "Quota reserved in ClusterQueue team, wait time since queued was 0s";
    assert_eq!(quota_reserved("plain"), base);
    assert_eq!(
        quota_reserved("tolerant"),
        format!(
            "{base}; Flavors considered: main: zone-a(NoFit;flavor zone-a doesn't match node affinity)"
        )
    );
    assert_eq!(
        quota_reserved("picky"),
        format!(
            "{base}; Flavors considered: main: spot(NoFit;untolerated taint {{spot true NoSchedule <nil>}} in flavor spot), zone-a(NoFit;flavor zone-a doesn't match node affinity)"
        )
    );
}

// ---- 4. partial-admission ----

#[test]
fn partial_admission() {
    let r = run("partial-admission");
    let base = wl(&r, "team", "base");
    assert_ran(base, 0.0, 1800.0);
    assert_eq!(base.pod_sets[0].admitted_count, Some(3));

    let partial = wl(&r, "team", "partial");
    assert_ran(partial, 60.0, 3660.0);
    let ps = &partial.pod_sets[0];
    assert_eq!(
        (ps.count, ps.min_count, ps.admitted_count),
        (8, Some(2), Some(5)),
        "8 − 6·3/6 = 5 pods: the smallest reduction index that fits"
    );
    // Kueue lowers the Job's parallelism to the admitted count: 5 pods are created.
    assert_eq!(ps.pods.len(), 5);
    assert!(warnings(partial).is_empty(), "{:?}", warnings(partial));
    assert_condition(
        partial,
        "QuotaReserved",
        "True",
        "QuotaReserved",
        "Quota reserved in ClusterQueue team",
    );

    let whole = wl(&r, "team", "whole");
    assert_ran(whole, 3661.0, 4261.0);
    assert_eq!(
        (
            whole.pod_sets[0].min_count,
            whole.pod_sets[0].admitted_count
        ),
        (None, Some(8))
    );
    assert_eq!(
        warnings(whole),
        [
            (120.0, "WaitingForQuota", more_needed("default", 8).as_str()),
            (
                1801.0,
                "WaitingForQuota",
                more_needed("default", 5).as_str()
            ),
        ]
    );
}

// ---- 5. namespace-selector-nil ----

#[test]
fn namespace_selector_nil() {
    let r = run("namespace-selector-nil");
    let message = "workload namespace doesn't match ClusterQueue selector";
    let shut = wl(&r, "team", "shut-out");
    assert_pending(shut, Some("inadmissible"));
    assert_eq!(times(shut), (None, None, None));
    assert_eq!(shut.cluster_queue.as_deref(), Some("closed"));
    assert_condition(shut, "QuotaReserved", "False", "Misconfigured", message);
    assert_condition(
        shut,
        "Admitted",
        "False",
        "NoReservation",
        "The workload has no reservation",
    );
    assert_eq!(warnings(shut), [(0.0, "Misconfigured", message)]);

    let let_in = wl(&r, "team", "let-in");
    assert_ran(let_in, 0.0, 3600.0);
    assert_eq!(let_in.cluster_queue.as_deref(), Some("open"));
    assert_eq!(r.summary.admissions, 1);
}

// ---- 6. stop-policy ----

#[test]
fn stop_policy() {
    let r = run("stop-policy");
    let veteran = wl(&r, "team", "veteran");
    assert_ran(veteran, 0.0, 3600.0);
    assert!(veteran.evictions.is_empty(), "Hold does not drain");

    let frozen = wl(&r, "team", "frozen");
    assert_eq!(frozen.state, "Pending");
    assert_eq!(times(frozen), (None, None, None));
    assert_condition(
        frozen,
        "QuotaReserved",
        "False",
        "Suspended",
        "ClusterQueue held is inactive",
    );
    assert_condition(
        frozen,
        "Admitted",
        "False",
        "NoReservation",
        "The workload has no reservation",
    );
    assert_no_events(frozen);

    let on_pause = wl(&r, "team", "on-pause");
    // A stopped LocalQueue is not in the queue manager: the workload is queued nowhere.
    assert_pending(on_pause, None);
    assert_eq!(times(on_pause), (None, None, None));
    assert_condition(
        on_pause,
        "QuotaReserved",
        "False",
        "Suspended",
        "LocalQueue paused is inactive",
    );
    assert_no_events(on_pause);

    let control = wl(&r, "team", "control");
    assert_ran(control, 0.0, 3600.0);
    // veteran's admission from the input, and control's; nothing else is admitted.
    assert_eq!(r.summary.admissions, 2);
}

/// `reportCQPendingWorkloads` (`pkg/cache/queue/metrics.go`) reports every pending workload
/// of a ClusterQueue that is not active (`!statusChecker.ClusterQueueActive`) as
/// `inadmissible` (`inadmissible = MergedTracker(inadmissible, active)`), and a stopped
/// ClusterQueue is not active (`pkg/cache/scheduler/clusterqueue.go` `updateQueueStatus`).
#[test]
fn stop_policy_held_cluster_queue_reports_pending_as_inadmissible() {
    let r = run("stop-policy");
    assert_pending(wl(&r, "team", "frozen"), Some("inadmissible"));
}

// ---- 7. borrowing-and-lending ----

const A2_PREEMPTED: &str = "Preempted to accommodate a workload (UID: uid-b2, JobUID: uid-b2) due to reclamation within the cohort; preemptor path: /pool/cq-b; preemptee path: /pool/cq-a";

#[test]
fn borrowing_and_lending() {
    // At 250s: a2 was preempted at 240 and its pods are still terminating (30s).
    let mid = run_until("borrowing-and-lending", 250.0);
    let a2 = wl(&mid, "team-a", "a2");
    assert_eq!(a2.state, "Evicted");
    assert_eq!(a2.admitted_at, Some(60.0));
    let b2_name = id(wl(&mid, "team-b", "b2"));
    assert_preempted_once(a2, 240.0, "InCohortReclamation", &b2_name);
    assert_condition(a2, "Evicted", "True", "Preempted", A2_PREEMPTED);
    assert_condition(a2, "Preempted", "True", "InCohortReclamation", A2_PREEMPTED);
    let b2 = wl(&mid, "team-b", "b2");
    assert_pending(b2, Some("active"));
    assert_condition(
        b2,
        "QuotaReserved",
        "False",
        "WaitingForPreemptedWorkloads",
        &pending_preemption("default", 2),
    );
    // a3 hit cq-a's borrowingLimit while the cohort still had 2 cpu free.
    let a3 = wl(&mid, "team-a", "a3");
    assert_pending(a3, Some("inadmissible"));
    assert_condition(
        a3,
        "QuotaReserved",
        "False",
        "WaitingForQuota",
        &more_needed("default", 1),
    );

    // At 300s: a2's quota went at 270; b2 got it; a3 came back at 271 and fits; a2 waits.
    let later = run_until("borrowing-and-lending", 300.0);
    let a2 = wl(&later, "team-a", "a2");
    assert_pending(a2, Some("inadmissible"));
    assert_condition(a2, "Requeued", "True", "Preempted", A2_PREEMPTED);
    assert_eq!(condition(a2, "Requeued").at, 270.0);
    assert_condition(
        a2,
        "QuotaReserved",
        "False",
        "WaitingForQuota",
        &more_needed("default", 2),
    );
    assert_eq!(
        warnings(a2),
        [
            (270.0, "WaitingForQuota", no_longer_fits()),
            (270.0, "WaitingForQuota", more_needed("default", 2).as_str()),
        ]
    );
    assert_eq!(wl(&later, "team-b", "b2").admitted_at, Some(270.0));
    assert_eq!(wl(&later, "team-a", "a3").admitted_at, Some(271.0));

    let r = run("borrowing-and-lending");
    assert_ran(wl(&r, "team-a", "a1"), 0.0, 600.0);
    assert_ran(wl(&r, "team-c", "c1"), 0.0, 3600.0);
    // The lender's private quota: b1 fits although cq-a borrowed 6 from the cohort.
    let b1 = wl(&r, "team-b", "b1");
    assert_ran(b1, 180.0, 3780.0);
    assert!(warnings(b1).is_empty());
    let b2 = wl(&r, "team-b", "b2");
    assert_ran(b2, 240.0 + 30.0, 570.0);
    assert_eq!(
        warnings(b2),
        [(
            240.0,
            "WaitingForPreemptedWorkloads",
            pending_preemption("default", 2).as_str()
        )]
    );
    let a2 = wl(&r, "team-a", "a2");
    assert_ran(a2, 601.0, 1201.0);
    assert_preempted_once(a2, 240.0, "InCohortReclamation", &b2_name);
    assert_eq!(
        warnings(a2),
        [
            (270.0, "WaitingForQuota", no_longer_fits()),
            (270.0, "WaitingForQuota", more_needed("default", 2).as_str()),
            (571.0, "WaitingForQuota", more_needed("default", 1).as_str()),
        ]
    );
    let previously = format!("Previously: {A2_PREEMPTED}");
    assert_condition(a2, "Evicted", "False", "QuotaReserved", &previously);
    assert_condition(a2, "Preempted", "False", "QuotaReserved", &previously);
    let a3 = wl(&r, "team-a", "a3");
    assert_ran(a3, 271.0, 871.0);
    assert_eq!(
        warnings(a3),
        [(120.0, "WaitingForQuota", more_needed("default", 1).as_str())]
    );
    for w in &r.workloads {
        assert_flavors(w, &[("cpu", "default")]);
    }
}

/// `preemptionMessage` (`pkg/scheduler/preemption/preemption.go`) writes
/// `preemptor.Labels["kueue.x-k8s.io/job-uid"]` as JobUID, and `ConstructWorkload`
/// (`pkg/controller/jobframework/reconciler.go`) sets that label to the Job's UID when it is
/// a valid label value (`uid-b2` is).
#[test]
fn borrowing_and_lending_preemption_message_names_the_job_uid() {
    let r = run_until("borrowing-and-lending", 250.0);
    let message = &condition(wl(&r, "team-a", "a2"), "Preempted").message;
    assert!(
        message.contains(", JobUID: uid-b2) due to reclamation within the cohort;"),
        "{message}"
    );
}

// ---- 9. equivalence-hashing-and-batching ----

const BYPASSED: &str =
    "Bypassed scheduling evaluation because an equivalent workload recently failed";

#[test]
fn equivalence_hashing_and_batching() {
    // Half a second after the blocker finished (600): everything is still parked.
    let parked = run_until("equivalence-hashing-and-batching", 600.5);
    assert_eq!(wl(&parked, "team", "blocker").finished_at, Some(600.0));
    let eq1 = wl(&parked, "team", "eq-1");
    assert_pending(eq1, Some("inadmissible"));
    assert_condition(
        eq1,
        "QuotaReserved",
        "False",
        "WaitingForQuota",
        &more_needed("default", 2),
    );
    assert_eq!(
        warnings(eq1),
        [(60.0, "WaitingForQuota", more_needed("default", 2).as_str())]
    );
    for name in ["eq-2", "eq-3", "eq-4"] {
        let w = wl(&parked, "team", name);
        // Parked together with eq-1 at 60, never evaluated themselves. (Their QuotaReserved
        // condition is checked in `equivalence_hashing_parked_workloads_get_no_condition`.)
        assert_pending(w, Some("inadmissible"));
        assert_no_events(w);
    }
    // eq-5 arrived at 120, after its shape was parked: it is parked too.
    assert_pending(wl(&parked, "team", "eq-5"), Some("inadmissible"));
    let other = wl(&parked, "team", "other");
    assert_pending(other, Some("inadmissible"));
    assert_eq!(
        warnings(other),
        [(60.0, "WaitingForQuota", more_needed("default", 1).as_str())]
    );

    // They return to the heap 1s after the blocker's quota was freed.
    let r = run("equivalence-hashing-and-batching");
    assert_ran(wl(&r, "team", "blocker"), 0.0, 600.0);
    assert_ran(wl(&r, "team", "eq-1"), 601.0, 901.0);
    assert_ran(wl(&r, "team", "eq-2"), 601.0, 901.0);
    assert_ran(wl(&r, "team", "eq-3"), 902.0, 1202.0);
    assert_ran(wl(&r, "team", "eq-4"), 902.0, 1202.0);
    let other = wl(&r, "team", "other");
    let eq5 = wl(&r, "team", "eq-5");
    assert_ran(other, 1203.0, 1503.0);
    assert_ran(eq5, 1203.0, 1503.0);
    // Same instant, but other (created 60) is the head before eq-5 (created 120).
    let cycle = |w: &WorkloadOut| {
        w.events
            .iter()
            .find(|e| e.reason == "QuotaReserved")
            .and_then(|e| e.cycle)
            .expect("admitted in a cycle")
    };
    assert!(cycle(other) < cycle(eq5));
    assert!(warnings(wl(&r, "team", "eq-2")).is_empty());
    // eq-3 failed on its own at 601 and parked eq-4 again.
    assert_eq!(
        warnings(wl(&r, "team", "eq-3")),
        [(601.0, "WaitingForQuota", more_needed("default", 2).as_str())]
    );
    assert!(warnings(wl(&r, "team", "eq-4")).is_empty());
    assert_eq!(
        warnings(wl(&r, "team", "other")),
        [(60.0, "WaitingForQuota", more_needed("default", 1).as_str())],
        "its later identical failures fold into the first event"
    );
}

/// `resolveGranularUnadmittedQuotaReservedCondition` (`pkg/controller/core/
/// workload_controller.go`) writes the bypass message only when `shouldCheckEquivalenceHash`
/// holds: no condition yet and gate `UnadmittedWorkloadsExplicitStatus` (default off,
/// `pkg/features/kube_features.go`), or reason "", PendingEvaluation, Suspended, Deactivated or
/// Pending. A fresh workload has no condition (with the gate off nothing is stamped on
/// creation), and the bulk move (`cluster_queue.go` `handleInadmissibleHash`) triggers no
/// reconcile; upstream's own test "reconcile bypassed workload when
/// SchedulingEquivalenceHashing is enabled and UnadmittedWorkloadsExplicitStatus is disabled
/// (no status stamped on creation)" expects no condition.
///
/// The simulator does the same: no condition and no event on them.
///
/// A workload created while its shape is parked (eq-5) goes straight to the inadmissible list
/// upstream (`cluster_queue.go` `AddOrUpdate`: "Skip to inadmissible if the workload's
/// equivalence class was already bulk-moved"), so it is not evaluated until the next requeue,
/// here as there (first Warning at 902).
#[test]
fn equivalence_hashing_parked_workloads_get_no_condition() {
    let parked = run_until("equivalence-hashing-and-batching", 600.5);
    for name in ["eq-2", "eq-3", "eq-4", "eq-5"] {
        let w = wl(&parked, "team", name);
        assert_pending(w, Some("inadmissible"));
        assert!(
            w.conditions
                .iter()
                .all(|c| c.kind != "QuotaReserved" && c.message != BYPASSED),
            "{name}: {:?}",
            w.conditions
        );
        assert!(w.events.is_empty(), "{name}: {:?}", w.events);
    }
    // eq-5 is first evaluated at 902, once eq-3 and eq-4 took the freed quota.
    let r = run("equivalence-hashing-and-batching");
    assert_eq!(
        warnings(wl(&r, "team", "eq-5")),
        [(902.0, "WaitingForQuota", more_needed("default", 2).as_str())]
    );
}

/// Gate `SchedulingEquivalenceHashing` off (`featureGates`, as in Kueue 0.17, where it is
/// beta and off by default): `requeueIfNotPresent` moves no equivalent workload with a NoFit head and
/// `AddOrUpdate` parks no arrival, so every workload is evaluated on its own and gets its own
/// Warning; the admissions are the same as with the gate on.
#[test]
fn without_equivalence_hashing_each_workload_is_evaluated() {
    let mut loaded = load_dir("kueue/equivalence-hashing-and-batching");
    loaded
        .world
        .config
        .kueue_gates
        .scheduling_equivalence_hashing = false;
    let outcome = Simulation::new(&loaded.world).run();
    let r = result(&loaded.world, &outcome);
    for name in ["eq-1", "eq-2", "eq-3", "eq-4"] {
        assert_eq!(
            warnings(wl(&r, "team", name)),
            [(60.0, "WaitingForQuota", more_needed("default", 2).as_str())],
            "{name}"
        );
    }
    assert_eq!(
        warnings(wl(&r, "team", "eq-5")),
        [(120.0, "WaitingForQuota", more_needed("default", 2).as_str())]
    );
    assert_ran(wl(&r, "team", "eq-1"), 601.0, 901.0);
    assert_ran(wl(&r, "team", "eq-2"), 601.0, 901.0);
    assert_ran(wl(&r, "team", "eq-3"), 902.0, 1202.0);
    assert_ran(wl(&r, "team", "eq-4"), 902.0, 1202.0);
    assert_ran(wl(&r, "team", "other"), 1203.0, 1503.0);
    assert_ran(wl(&r, "team", "eq-5"), 1203.0, 1503.0);
}

// ---- maximumExecutionTimeSeconds ----

#[test]
fn max_execution_time_deactivates() {
    let r = run("max-execution-time");
    let capped = wl(&r, "team", "capped");
    assert_eq!(capped.state, "Inactive");
    assert_eq!(capped.admitted_at, Some(0.0));
    let exceeded = capped
        .events
        .iter()
        .find(|e| e.reason == "MaximumExecutionTimeExceeded")
        .expect("event");
    assert_eq!((exceeded.kind, exceeded.at), ("Warning", 600.0));
    assert_eq!(
        exceeded.message,
        "The maximum execution time (600s) exceeded"
    );
    assert_condition(
        capped,
        "Evicted",
        "True",
        "DeactivatedDueToMaximumExecutionTimeExceeded",
        "The workload is deactivated due to exceeding the maximum execution time",
    );
    assert_eq!(condition(capped, "Requeued").status, "False");
    assert_eq!(capped.evictions[0].at, 600.0);
    // Never requeued: admitted once.
    assert!(
        !capped
            .events
            .iter()
            .any(|e| e.reason == "QuotaReserved" && e.at > 0.0)
    );
    let waiting = wl(&r, "team", "waiting");
    assert_eq!(
        (waiting.admitted_at, waiting.finished_at),
        (Some(1801.0), Some(2401.0))
    );
    let retries: Vec<f64> = waiting
        .events
        .iter()
        .filter(|e| e.reason == "WaitingForQuota")
        .map(|e| e.at)
        .collect();
    assert_eq!(retries, [60.0, 601.0]);
    let short = wl(&r, "team", "short");
    assert_eq!((short.state, short.finished_at), ("Finished", Some(1800.0)));
}

// ---- stopPolicy HoldAndDrain ----

#[test]
fn hold_and_drain_evicts_admitted_workloads() {
    let r = run("hold-and-drain");
    let cq = wl(&r, "team", "drained-cq");
    assert_eq!(
        (cq.state, cq.queue_status.as_deref()),
        ("Pending", Some("inadmissible"))
    );
    assert_condition(
        cq,
        "Evicted",
        "True",
        "ClusterQueueStopped",
        "The ClusterQueue is stopped",
    );
    assert_condition(
        cq,
        "QuotaReserved",
        "False",
        "Suspended",
        "ClusterQueue drained is inactive",
    );
    assert_eq!(condition(cq, "Requeued").status, "False");
    assert_eq!(cq.events[0].reason, "EvictedDueToClusterQueueStopped");
    let lq = wl(&r, "team", "drained-lq");
    assert_eq!((lq.state, lq.queue_status.as_deref()), ("Pending", None));
    assert_condition(
        lq,
        "Evicted",
        "True",
        "LocalQueueStopped",
        "The LocalQueue is stopped",
    );
    assert_condition(
        lq,
        "QuotaReserved",
        "False",
        "Suspended",
        "LocalQueue paused is inactive",
    );
    let newcomer = wl(&r, "team", "newcomer");
    assert_condition(
        newcomer,
        "QuotaReserved",
        "False",
        "Suspended",
        "ClusterQueue drained is inactive",
    );
    assert_eq!(newcomer.admitted_at, None);
}

// ---- lost work: checkpoint vs restart ----

#[test]
fn checkpoint_keeps_whole_intervals_and_restart_loses_all() {
    let r = run("checkpoint-vs-restart");
    let long = wl(&r, "team", "long");
    assert_eq!(long.evictions[0].preemption_reason, Some("InClusterQueue"));
    assert_eq!(long.evictions[0].at, 3000.0);
    // 50 min ran, 40 min checkpointed: 10 min × 8 GPUs lost.
    assert_eq!(long.lost_gpu_seconds, 600.0 * 8.0);
    assert_eq!(
        (long.admitted_at, long.finished_at),
        (Some(4861.0), Some(9661.0))
    );
    assert_eq!(r.summary.preemptions.get("InClusterQueue"), Some(&1));

    // The same run with progress: restart.
    let mut loaded = load_dir("kueue/checkpoint-vs-restart");
    loaded.world.config.progress = kueuesim_model::ProgressPolicy::Restart;
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let long = wl(&r, "team", "long");
    assert_eq!(long.lost_gpu_seconds, 3000.0 * 8.0);
    assert_eq!(long.finished_at, Some(4861.0 + 7200.0));
    assert!((r.summary.gpu.lost_gpu_hours - 3000.0 * 8.0 / 3600.0).abs() < 1e-9);
}

// ---- waitForPodsReady back-off ----

#[test]
fn pods_ready_timeouts_back_off_then_deactivate() {
    let r = run("pods-ready-backoff");
    let gang = wl(&r, "team", "gang");
    let timeouts: Vec<(&str, f64)> = gang.evictions.iter().map(|e| (e.reason, e.at)).collect();
    assert_eq!(
        timeouts,
        [
            ("PodsReadyTimeout", 601.0),
            ("PodsReadyTimeout", 1261.0),
            ("PodsReadyTimeout", 1981.0),
            ("DeactivatedDueToRequeuingLimitExceeded", 2821.0)
        ]
    );
    // Readmitted at the end of each back-off: 60 s, 120 s, 240 s.
    let admissions: Vec<f64> = gang
        .events
        .iter()
        .filter(|e| e.reason == "QuotaReserved")
        .map(|e| e.at)
        .collect();
    assert_eq!(admissions, [1.0, 661.0, 1381.0, 2221.0]);
    assert_eq!((gang.state, gang.requeue_count), ("Inactive", 3));
    assert_eq!(
        condition(gang, "Evicted").message,
        "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
    );
    let first = gang
        .events
        .iter()
        .find(|e| e.reason == "EvictedDueToPodsReadyTimeout")
        .expect("event");
    assert_eq!(
        first.message,
        format!("Exceeded the PodsReady timeout team/{}", gang.name)
    );
}

#[test]
fn block_admission_serialises_admissions_behind_unready_workloads() {
    let r = run("block-admission");
    let (stuck, a, b) = (
        wl(&r, "team", "stuck"),
        wl(&r, "team", "a"),
        wl(&r, "team", "b"),
    );
    // a waits for stuck's timeout, b for a's pods, stuck (requeued) for b's pods.
    assert_eq!(times(a), (Some(300.0), Some(420.0), Some(4020.0)));
    assert_eq!(times(b), (Some(420.0), Some(540.0), Some(4140.0)));
    let reservations: Vec<f64> = stuck
        .events
        .iter()
        .filter(|e| e.reason == "QuotaReserved")
        .map(|e| e.at)
        .collect();
    assert_eq!(reservations, [0.0, 540.0]);
    let evictions: Vec<(&str, f64)> = stuck.evictions.iter().map(|e| (e.reason, e.at)).collect();
    assert_eq!(
        evictions,
        [
            ("PodsReadyTimeout", 300.0),
            ("DeactivatedDueToRequeuingLimitExceeded", 840.0)
        ]
    );
    assert_eq!(stuck.state, "Inactive");

    // While blocked, the cycle's head says why (`waitForPodsReadyIfNeeded`).
    let mid = run_until("block-admission", 100.0);
    assert_condition(
        wl(&mid, "team", "a"),
        "QuotaReserved",
        "False",
        "WaitingForPodsReady",
        "waiting for all admitted workloads to be in PodsReady condition",
    );

    // The same world without blockAdmission admits a and b at once.
    let mut loaded = load_dir("kueue/block-admission");
    let wfpr = loaded
        .world
        .config
        .kueue
        .wait_for_pods_ready
        .as_mut()
        .expect("v1beta1 enable: true");
    assert!(
        wfpr.block_admission,
        "v1beta1 defaults blockAdmission to true"
    );
    wfpr.block_admission = false;
    let free = result(&loaded.world, &Simulation::new(&loaded.world).run());
    assert_eq!(wl(&free, "team", "a").admitted_at, Some(1.0));
    assert_eq!(wl(&free, "team", "b").admitted_at, Some(1.0));
}

#[test]
fn afs_preempts_from_the_busier_local_queue_first() {
    let r = run("afs-preemption-victims");
    let (heavy, light, urgent) = (
        wl(&r, "lab", "heavy-job"),
        wl(&r, "lab", "light-job"),
        wl(&r, "lab", "urgent"),
    );
    let evictions: Vec<(&str, f64)> = heavy.evictions.iter().map(|e| (e.reason, e.at)).collect();
    assert_eq!(evictions, [("Preempted", 60.0)]);
    assert_condition(
        heavy,
        "Preempted",
        "False",
        "QuotaReserved",
        "Previously: Preempted to accommodate a workload (UID: uid-urgent, JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: /shared; preemptee path: /shared",
    );
    assert!(light.evictions.is_empty());
    assert_ran(urgent, 60.0, 1860.0);
    assert_ran(light, 1.0, 3601.0);
    assert_ran(heavy, 1861.0, 5461.0);

    // Without Admission Fair Sharing the more recently reserved workload goes instead.
    let mut loaded = load_dir("kueue/afs-preemption-victims");
    loaded.world.config.kueue.admission_fair_sharing = None;
    let plain = result(&loaded.world, &Simulation::new(&loaded.world).run());
    assert!(wl(&plain, "lab", "heavy-job").evictions.is_empty());
    assert_eq!(wl(&plain, "lab", "light-job").evictions.len(), 1);
}

#[test]
fn block_admission_keeps_requeue_broadcasts_made_during_the_wait() {
    let r = run("block-admission-requeue");
    let admitted = |name: &str| wl(&r, "team", name).admitted_at;
    assert_eq!(admitted("a-first"), Some(0.0));
    assert_eq!(admitted("b-1"), Some(720.0));
    // Freed at 300s while the cycle holding it waited; not missed.
    assert_eq!(admitted("a-second"), Some(840.0));
    assert_eq!(wl(&r, "team", "a-second").state, "Finished");
    assert_eq!(wl(&r, "team", "blocker").state, "Inactive");
    // Processed before the blocked admission, requeued only when the cycle ends (step 6).
    let c1 = wl(&r, "team", "c-1");
    let pending: Vec<(f64, &str)> = c1.events.iter().map(|e| (e.at, e.reason)).collect();
    assert_eq!(pending, [(720.0, "ExceedsMaxQuota")]);
    assert_eq!(condition(c1, "QuotaReserved").at, 720.0);

    // While the cycle waits, the heads it popped count as active (as upstream's pending
    // workloads do) and say why they wait.
    let mid = run_until("block-admission-requeue", 200.0);
    for name in ["b-1", "a-second", "c-1"] {
        let w = wl(&mid, "team", name);
        assert_eq!(
            (w.state, w.queue_status.as_deref()),
            ("Pending", Some("active")),
            "{name}"
        );
    }
    assert_condition(
        wl(&mid, "team", "b-1"),
        "QuotaReserved",
        "False",
        "WaitingForPodsReady",
        "waiting for all admitted workloads to be in PodsReady condition",
    );
}

// ---- Admission Fair Sharing over a day ----

#[test]
fn afs_splits_gpu_time_by_local_queue_weight() {
    let r = run("afs-two-tenants");
    let by_lq = |lq: &str| -> f64 {
        r.workloads
            .iter()
            .filter(|w| w.local_queue.as_deref() == Some(lq))
            .map(|w| w.gpu_seconds)
            .sum()
    };
    let (gold, bronze) = (by_lq("gold"), by_lq("bronze"));
    // The 6 GPUs are busy all day but for the 1 s requeue batch after completions.
    let total = 6.0 * 24.0 * 3600.0;
    assert!(
        gold + bronze > 0.99 * total && gold + bronze <= total,
        "{gold} + {bronze}"
    );
    // The per-hour series of the ClusterQueue adds up to the same GPU time, hour by hour
    // within capacity, and it holds all the GPU time of the run.
    let cq = &r.summary.cluster_queues[0];
    assert_eq!(cq.gpu_seconds_by_hour.len(), 24);
    let by_hour: f64 = cq.gpu_seconds_by_hour.iter().sum();
    assert!(
        (by_hour - (gold + bronze)).abs() < 1e-6,
        "{by_hour} vs {}",
        gold + bronze
    );
    assert!(
        cq.gpu_seconds_by_hour
            .iter()
            .all(|s| s <= 6.0 * 3600.0 + 1e-6)
    );
    assert!(cq.gpu_share_by_hour.iter().all(|s| s == Some(1.0)));
    let ratio = gold / bronze;
    assert!(
        (1.8..=2.2).contains(&ratio),
        "gold:bronze GPU time {ratio:.3}, expected about 2 (weights 2:1)"
    );
}

// ---- fair sharing tournament ----

#[test]
fn fair_sharing_orders_entries_by_share_not_priority() {
    let r = run("fair-sharing-tournament");
    let (hi, lo) = (wl(&r, "team-a", "a-high"), wl(&r, "team-b", "b-low"));
    assert_eq!(lo.admitted_at, Some(10.0));
    assert_eq!(hi.admitted_at, Some(1811.0));

    // Classical ordering: priority decides among entries at the same borrowing level.
    let mut loaded = load_dir("kueue/fair-sharing-tournament");
    loaded.world.config.kueue.fair_sharing = None;
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let (hi, lo) = (wl(&r, "team-a", "a-high"), wl(&r, "team-b", "b-low"));
    assert_eq!(hi.admitted_at, Some(10.0));
    assert_eq!(lo.admitted_at, Some(1811.0));
}

/// scenarios/kueue/tas-racks: TAS placements of two ClusterQueues in one cycle (the second
/// recomputed onto the other rack), a third waiting with Kueue's TAS message until a rack
/// frees up, and the pods bound exactly where the topology assignment put them.
#[test]
fn tas_racks() {
    let r = run_dir("kueue/tas-racks");
    let a = wl(&r, "team", "a");
    let b = wl(&r, "team", "b");
    let c = wl(&r, "team", "c");
    assert_eq!(a.pod_sets[0].nodes, ["n1", "n1", "n2", "n2"]);
    assert_eq!(b.pod_sets[0].nodes, ["n3", "n3", "n4", "n4"]);
    assert_eq!((a.admitted_at, b.admitted_at), (Some(0.0), Some(0.0)));
    let ta = a.pod_sets[0].topology_assignment.as_ref().expect("TAS");
    assert_eq!(ta.levels, ["kubernetes.io/hostname"]);
    let first = c
        .events
        .iter()
        .find(|e| e.kind == "Warning" && e.source == "kueue-admission")
        .expect("c waits");
    assert_eq!(
        first.message,
        "couldn't assign flavors to pod set main: topology \"default\" doesn't allow to fit any of 2 pod(s). Total nodes: 4; excluded: resource \"cpu\": 4"
    );
    // a finishes at 1h; the inadmissible requeue batch (1s) brings c back into r1.
    assert_eq!(c.admitted_at, Some(3601.0));
    assert_eq!(c.pod_sets[0].nodes, ["n1", "n1"]);
}

/// scenarios/kueue/tas-slices: slice requests read from the Job's annotations keep every
/// slice within one rack, where the same pods without slices fill the fuller rack first; a
/// pod count that is not whole slices waits with TopologyPlacementFailed.
#[test]
fn tas_slices() {
    let r = run_dir("kueue/tas-slices");
    let sliced = wl(&r, "team", "sliced");
    assert_eq!(sliced.admitted_at, Some(0.0));
    assert_eq!(sliced.pod_sets[0].nodes, ["n1", "n2", "n4", "n5"]);
    let plain = wl(&r, "team", "plain");
    assert_eq!(plain.admitted_at, Some(7200.0));
    assert_eq!(plain.pod_sets[0].nodes, ["n1", "n2", "n3", "n4"]);
    let odd = wl(&r, "team", "odd");
    assert_eq!(odd.admitted_at, None);
    let c = condition(odd, "QuotaReserved");
    assert_eq!(c.reason, "TopologyPlacementFailed");
    assert_eq!(
        c.message,
        "couldn't assign flavors to pod set main: the pod set's 3 pods are not a whole number of slices of 2"
    );
}

/// scenarios/kueue/resource-transformations: excluded prefixes leave quota alone, a
/// transformation turns MIG slices into memory quota.
#[test]
fn resource_exclusions_and_transformations() {
    let r = run_dir("kueue/resource-transformations");
    let a = wl(&r, "team", "a");
    let b = wl(&r, "team", "b");
    assert_eq!(a.admitted_at, Some(0.0));
    assert_eq!(
        a.pod_sets[0]
            .flavors
            .get("example-memory")
            .map(String::as_str),
        Some("default")
    );
    assert!(!a.pod_sets[0].flavors.contains_key("example.com/scratch"));
    let waited = b
        .events
        .iter()
        .find(|e| e.kind == "Warning")
        .expect("b waits");
    // A transformation's output is not memory: Kueue's ResourceFormatter words it as
    // DecimalSI (only DRA-mapped resources are registered as binary), so 10Gi of it is
    // written as its integer.
    assert!(
        waited.message.contains(
            "insufficient unused quota for example-memory in flavor default, 10737418240 more needed"
        ),
        "{}",
        waited.message
    );
    // a finishes at 1h; the inadmissible requeue batch (1s) brings b back.
    assert_eq!(b.admitted_at, Some(3601.0));
}

/// scenarios/kueue/tas-never-fits: a high-priority TAS request that could only be admitted
/// by preemption, but fits no rack even on an empty cluster, is NoFit with
/// TopologyPlacementFailed (upstream's `WithSimulateEmpty` check in Preempt mode) and evicts
/// nothing; the low-priority workload runs to its end.
#[test]
fn tas_request_that_never_fits_does_not_preempt() {
    let r = run_dir("kueue/tas-never-fits");
    let low = wl(&r, "team", "low");
    let big = wl(&r, "team", "big");
    assert!(low.evictions.is_empty(), "{:?}", low.evictions);
    assert_eq!(
        (low.admitted_at, low.finished_at),
        (Some(0.0), Some(7200.0))
    );
    assert!(
        r.summary.preemptions.values().all(|&n| n == 0),
        "{:?}",
        r.summary.preemptions
    );
    assert_eq!(big.admitted_at, None);
    let reserved = big
        .conditions
        .iter()
        .find(|c| c.kind == "QuotaReserved")
        .expect("QuotaReserved");
    assert_eq!(reserved.reason, "TopologyPlacementFailed");
    // While low runs the quota is what is short: the message keeps the quota reason.
    let first = big
        .events
        .iter()
        .find(|e| e.kind == "Warning" && e.source == "kueue-admission")
        .expect("big waits");
    assert!(
        first
            .message
            .contains("insufficient unused quota for cpu in flavor tas"),
        "{}",
        first.message
    );
    // A few cycles, not one per second of the horizon.
    assert!(r.summary.cycles < 20, "{} cycles", r.summary.cycles);
}

/// scenarios/kueue/equivalence-hash-topology: the scheduling equivalence hash covers the pod
/// sets' topology requests (`computeSchedulingHash`, `topologyRequest`), so a workload that
/// differs from a NoFit head only in its topology request is not parked with it.
#[test]
fn equivalence_hash_covers_the_topology_request() {
    let r = run("equivalence-hash-topology");
    let pref = wl(&r, "team", "x-pref");
    assert_ran(pref, 0.0, 3600.0);
    let req1 = wl(&r, "team", "req-1");
    assert_eq!(req1.admitted_at, None);
    assert_eq!(
        condition(req1, "QuotaReserved").reason,
        "TopologyPlacementFailed"
    );
    // req-2 is parked with req-1 at 0s, and again when req-1 fails after the requeue at
    // 1h + 1s: it is never evaluated itself.
    let req2 = wl(&r, "team", "req-2");
    assert_eq!(req2.admitted_at, None);
    assert_no_events(req2);
    assert_eq!(r.summary.cycles, 3);
    // Cycle 1 fails req-1; cycle 2 admits pref.
    let admitted_in = pref
        .events
        .iter()
        .find(|e| e.reason == "QuotaReserved")
        .and_then(|e| e.cycle);
    assert_eq!(admitted_in, Some(2));
}

// ---- flavor-scan progress (LastAssignment) ----

/// Per pod set, its name and the flavor of its cpu.
fn cpu_flavors(w: &WorkloadOut) -> Vec<(&str, &str)> {
    w.pod_sets
        .iter()
        .map(|p| {
            let f = p.flavors.get("cpu").map_or("", String::as_str);
            (p.name.as_str(), f)
        })
        .collect()
}

#[test]
fn a_skipped_workload_resumes_its_flavor_scan_in_the_next_cycle() {
    // FlavorFungibilityPreserveScanProgress (on by default): `markSkipped` keeps
    // LastAssignment, and `findFlavorForPodSets` resumes after f0, where cycle 1 stopped.
    let r = run("scan-progress-skipped");
    let x = wl(&r, "default", "x");
    assert_ran(x, 0.0, 3600.0);
    assert_eq!(cpu_flavors(x), [("main", "f0")]);
    let w = wl(&r, "default", "w");
    assert_ran(w, 0.0, 3600.0);
    assert_eq!(cpu_flavors(w), [("ps0", "f1"), ("ps1", "f1")]);
    assert_eq!(
        warnings(w),
        [(0.0, "WaitingForQuota", no_longer_fits())],
        "w: skipped once, in cycle 1"
    );
}

#[test]
fn without_the_gate_a_skipped_workload_scans_from_the_first_flavor() {
    // FlavorFungibilityPreserveScanProgress off: the skip drops LastAssignment, the next cycle
    // starts at f0 and ps1 borrows f0 again (the answer before Kueue 0.20).
    let r = run("scan-progress-gate-off");
    let w = wl(&r, "default", "w");
    assert_ran(w, 0.0, 3600.0);
    assert_eq!(cpu_flavors(w), [("ps0", "f1"), ("ps1", "f0")]);
    assert_eq!(warnings(w), [(0.0, "WaitingForQuota", no_longer_fits())]);
    assert_eq!(cpu_flavors(wl(&r, "default", "x")), [("main", "f0")]);
}

#[test]
fn a_best_effort_head_with_flavors_left_stays_active_and_resumes() {
    // `requeueIfNotPresent`: `LastAssignment.PendingFlavors()` keeps w in the heap; the next
    // cycle resumes ps0 at f1 and admits w before the lower-priority z.
    let r = run("pending-flavors-stay-active");
    let w = wl(&r, "default", "w");
    assert_ran(w, 0.0, 3600.0);
    assert_eq!(cpu_flavors(w), [("ps0", "f1"), ("ps1", "f0")]);
    assert_eq!(
        warnings(w),
        [(
            0.0,
            "ExceedsMaxQuota",
            "couldn't assign flavors to pod set ps1: flavor f1 doesn't match node affinity, insufficient quota for cpu in flavor f0, previously considered podsets requests (3) + current podset request (3) > maximum capacity (4)"
        )]
    );
    let z = wl(&r, "default", "z");
    assert_ran(z, 3601.0, 7201.0);
    assert_eq!(cpu_flavors(z), [("main", "f0")]);
    assert_eq!(
        warnings(z),
        [(
            0.0,
            "WaitingForQuota",
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor f0, 2 more needed, insufficient unused quota for cpu in flavor f1, 2 more needed"
        )]
    );
    // While w runs, z waits parked: the head that failed was w, kept active.
    let r = run_until("pending-flavors-stay-active", 10.0);
    assert_eq!(wl(&r, "default", "w").state, "Running");
    assert_pending(wl(&r, "default", "z"), Some("inadmissible"));
}

/// `manageJobsWithoutQueueName` and `managedJobsNamespaceSelector` as Kueue's jobframework
/// applies them (see the scenario's header).
#[test]
fn management_rules_follow_the_kueue_configuration() {
    let r = run("management-rules");
    let labelled = wl(&r, "team", "labelled");
    assert_eq!(times(labelled), (Some(0.0), Some(0.0), Some(600.0)));
    let no_label = wl(&r, "team", "no-label");
    assert_eq!(no_label.state, "Pending");
    assert_condition(
        no_label,
        "QuotaReserved",
        "False",
        "Misconfigured",
        "LocalQueue  doesn't exist",
    );
    for name in ["outside", "held"] {
        let w = wl(&r, "sandbox", name);
        assert_eq!((w.kind.as_str(), w.state), ("Job", "Pending"), "{name}");
        assert!(w.pod_sets[0].nodes.is_empty(), "{name} runs");
        let e = w.events.last().expect("the Job controller's event");
        assert_eq!(
            (e.reason, e.message.as_str()),
            ("Suspended", "Job suspended")
        );
    }
    for name in ["plain", "pod"] {
        let w = wl(&r, "sandbox", name);
        assert_eq!(w.local_queue, None, "{name}");
        assert_eq!(w.state, "Finished", "{name}");
        assert_eq!(w.pod_sets[0].nodes, ["n1"], "{name}");
    }
    let bypass: Vec<&str> = r
        .summary
        .checks
        .iter()
        .filter(|c| c.kind == "WorkloadsBypassKueue")
        .map(|c| c.message.as_str())
        .collect();
    assert_eq!(
        bypass,
        [
            "4 workload(s) in namespace sandbox bypass Kueue: namespace sandbox is outside the Kueue Configuration's managedJobsNamespaceSelector; 2 of them are suspended (spec.suspend), which nothing unsuspends outside Kueue: they never run; their scheduler places the other 2 outside any quota"
        ]
    );
}

/// A Job written suspended, without a queue name, on a Kueue with its defaults (which does
/// not manage jobs without one): no controller unsuspends it, so it never runs, and the
/// capacity check says so.
#[test]
fn an_unmanaged_suspended_job_stays_suspended() {
    let text = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {until: 1h}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '8', pods: '110'}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: paused
  namespace: team
  annotations: {kueuesim.io/duration: 10m}
spec:
  suspend: true
  template:
    spec:
      containers:
      - name: main
        resources: {requests: {cpu: '1'}}
";
    let loaded = crate::util::load_text("t.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let w = wl(&r, "team", "paused");
    assert_eq!(w.state, "Pending");
    assert!(
        w.pod_sets[0].nodes.is_empty(),
        "it ran on {:?}",
        w.pod_sets[0].nodes
    );
    let check = r
        .summary
        .checks
        .iter()
        .find(|c| c.kind == "WorkloadsBypassKueue")
        .expect("a bypass check");
    assert!(
        check.message.ends_with(
            "1 of them are suspended (spec.suspend), which nothing unsuspends outside Kueue: they never run"
        ),
        "{}",
        check.message
    );
}
