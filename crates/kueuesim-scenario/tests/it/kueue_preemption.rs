//! Kueue preemption as golden scenarios under `scenarios/kueue/`: within a ClusterQueue,
//! reclaim and borrowing within a cohort, the sticky preemptor, preemptors and victims taking
//! turns (also under fair sharing), victim order, `PreemptionOverBorrowing`, and the eviction writes that hold a
//! victim's quota. Each scenario's header holds the hand computation; the tests assert it
//! field by field, with the helpers of `kueue_features`.

use crate::kueue_features::{
    assert_condition, assert_pending, assert_preempted_once, assert_ran, events, more_needed,
    no_longer_fits, pending_preemption, run, run_until,
};
use crate::util::{condition, run_dir, warnings, wl};

// ---- 8. within-cq-preemption ----

const L_NEW_PREEMPTED: &str = "Preempted to accommodate a workload (UID: uid-l-urgent, JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: /lower; preemptee path: /lower";
const N_SMALL_PREEMPTED: &str = "Preempted to accommodate a workload (UID: uid-n-big, JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: /newer; preemptee path: /newer";

#[test]
fn within_cq_preemption() {
    // At 310s: l-new was preempted at 300 (LowerPriority), its pods are still terminating.
    let mid = run_until("within-cq-preemption", 310.0);
    let l_new = wl(&mid, "team-lower", "l-new");
    assert_eq!(l_new.state, "Evicted");
    assert_preempted_once(l_new, 300.0, "InClusterQueue", "team-lower/l-urgent");
    assert_condition(l_new, "Evicted", "True", "Preempted", L_NEW_PREEMPTED);
    assert_condition(
        l_new,
        "Preempted",
        "True",
        "InClusterQueue",
        L_NEW_PREEMPTED,
    );
    assert_eq!(condition(l_new, "Evicted").at, 300.0);
    // Its pods stop being ready as they terminate (generatePodsReadyCondition).
    assert_condition(
        l_new,
        "PodsReady",
        "False",
        "WaitForRecovery",
        "At least one pod has failed, waiting for recovery",
    );
    assert_eq!(condition(l_new, "PodsReady").at, 300.0);
    assert_eq!(
        events(l_new, "Preempted"),
        [(
            300.0,
            "Normal",
            format!("{L_NEW_PREEMPTED}; preemptor effective priority: 1000 (base: 1000, boost: 0); preemptee effective priority: 100 (base: 100, boost: 0)").as_str()
        )]
    );
    assert_eq!(
        events(l_new, "EvictedDueToPreempted"),
        [(300.0, "Normal", L_NEW_PREEMPTED)]
    );
    let urgent = wl(&mid, "team-lower", "l-urgent");
    assert_pending(urgent, Some("active"));
    assert_condition(
        urgent,
        "QuotaReserved",
        "False",
        "WaitingForPreemptedWorkloads",
        &pending_preemption("default", 2),
    );
    assert_eq!(
        events(urgent, "PreemptedWorkload"),
        [(
            300.0,
            "Normal",
            "Preempted workload team-lower/l-new (UID: uid-l-new) in ClusterQueue lower; preemptor effective priority: 1000 (base: 1000, boost: 0); preemptee effective priority: 100 (base: 100, boost: 0)"
        )]
    );
    assert_eq!(
        warnings(urgent),
        [(
            300.0,
            "WaitingForPreemptedWorkloads",
            pending_preemption("default", 2).as_str()
        )]
    );
    // The older of the two priority-100 workloads and the priority-500 one are left alone.
    for name in ["l-old", "l-mid"] {
        let w = wl(&mid, "team-lower", name);
        assert_eq!(w.state, "Running", "{name}");
        assert!(w.evictions.is_empty(), "{name}");
    }

    let r = run("within-cq-preemption");
    assert_ran(wl(&r, "team-lower", "l-old"), 0.0, 600.0);
    assert_ran(wl(&r, "team-lower", "l-mid"), 120.0, 3720.0);
    assert_ran(wl(&r, "team-lower", "l-urgent"), 330.0, 930.0);
    let l_new = wl(&r, "team-lower", "l-new");
    assert_ran(l_new, 601.0, 1201.0);
    assert_preempted_once(l_new, 300.0, "InClusterQueue", "team-lower/l-urgent");
    assert_condition(l_new, "Requeued", "True", "Preempted", L_NEW_PREEMPTED);
    assert_eq!(condition(l_new, "Requeued").at, 330.0);
    let previously = format!("Previously: {L_NEW_PREEMPTED}");
    assert_condition(l_new, "Evicted", "False", "QuotaReserved", &previously);
    assert_condition(l_new, "Preempted", "False", "QuotaReserved", &previously);
    assert_eq!(
        warnings(l_new),
        [(330.0, "WaitingForQuota", more_needed("default", 2).as_str())]
    );
    assert_eq!(
        events(l_new, "QuotaReserved")
            .iter()
            .map(|e| e.0)
            .collect::<Vec<_>>(),
        [60.0, 601.0]
    );

    // LowerOrNewerEqualPriority: n-big (created 60) preempts the equal-priority n-small
    // (created 120) that overtook it; n-a (created 0) was not a candidate at 60.
    assert_ran(wl(&r, "team-newer", "n-a"), 0.0, 180.0);
    let big = wl(&r, "team-newer", "n-big");
    assert_ran(big, 211.0, 511.0);
    assert_eq!(
        warnings(big),
        [
            (60.0, "WaitingForQuota", more_needed("default", 2).as_str()),
            (
                181.0,
                "WaitingForPreemptedWorkloads",
                pending_preemption("default", 2).as_str()
            ),
        ]
    );
    assert_eq!(
        events(big, "PreemptedWorkload"),
        [(
            181.0,
            "Normal",
            "Preempted workload team-newer/n-small (UID: uid-n-small) in ClusterQueue newer; preemptor effective priority: 100 (base: 100, boost: 0); preemptee effective priority: 100 (base: 100, boost: 0)"
        )]
    );
    let small = wl(&r, "team-newer", "n-small");
    assert_ran(small, 512.0, 1112.0);
    assert_preempted_once(small, 181.0, "InClusterQueue", "team-newer/n-big");
    assert_eq!(
        events(small, "EvictedDueToPreempted"),
        [(181.0, "Normal", N_SMALL_PREEMPTED)]
    );
    // n-small cannot preempt n-big back: same priority, and n-big is older.
    assert_eq!(
        warnings(small),
        [(211.0, "WaitingForQuota", more_needed("default", 2).as_str())]
    );
}

/// `QueuedWaitTime` (`pkg/workload/workload.go`) measures from the `Requeued` condition's
/// lastTransitionTime when there is one (set when the evicted workload's pods are gone,
/// `pkg/controller/jobframework/reconciler.go`), not from creation.
#[test]
fn within_cq_preemption_readmission_wait_time_counts_from_requeue() {
    let r = run("within-cq-preemption");
    let readmitted = |ns: &str, name: &str| -> String {
        let e = events(wl(&r, ns, name), "QuotaReserved");
        e.last().expect("readmitted").2.to_string()
    };
    assert_eq!(
        readmitted("team-lower", "l-new"),
        "Quota reserved in ClusterQueue lower, wait time since queued was 271s"
    );
    assert_eq!(
        readmitted("team-newer", "n-small"),
        "Quota reserved in ClusterQueue newer, wait time since queued was 301s"
    );
}

// ---- 10. borrow-within-cohort ----

const Y_LOW_PREEMPTED: &str = "Preempted to accommodate a workload (UID: uid-x-hi, JobUID: UNKNOWN) due to reclamation within the cohort while borrowing; preemptor path: /co/cq-x; preemptee path: /co/cq-y";

#[test]
fn borrow_within_cohort() {
    // At 70s: x-hi, which must borrow, preempted y-low (priority 50 ≤ threshold 100).
    let mid = run_until("borrow-within-cohort", 70.0);
    let y_low = wl(&mid, "co-y", "y-low");
    assert_eq!(y_low.state, "Evicted");
    assert_preempted_once(y_low, 60.0, "InCohortReclaimWhileBorrowing", "co-x/x-hi");
    assert_condition(y_low, "Evicted", "True", "Preempted", Y_LOW_PREEMPTED);
    assert_condition(
        y_low,
        "Preempted",
        "True",
        "InCohortReclaimWhileBorrowing",
        Y_LOW_PREEMPTED,
    );
    let x_hi = wl(&mid, "co-x", "x-hi");
    assert_pending(x_hi, Some("active"));
    assert_condition(
        x_hi,
        "QuotaReserved",
        "False",
        "WaitingForPreemptedWorkloads",
        &pending_preemption("default", 2),
    );

    // At 400s: x-hi2 could only free room by preempting y-mid (150 > threshold): it waits.
    let later = run_until("borrow-within-cohort", 400.0);
    let x_hi2 = wl(&later, "co-x", "x-hi2");
    assert_pending(x_hi2, Some("inadmissible"));
    assert_condition(
        x_hi2,
        "QuotaReserved",
        "False",
        "WaitingForQuota",
        &more_needed("default", 2),
    );
    let y_mid = wl(&later, "co-y", "y-mid");
    assert_eq!(y_mid.state, "Running");
    assert!(y_mid.evictions.is_empty());
    assert_pending(wl(&later, "co-y", "y-low"), Some("inadmissible"));

    let r = run("borrow-within-cohort");
    let y_mid = wl(&r, "co-y", "y-mid");
    assert_ran(y_mid, 0.0, 3600.0);
    assert!(y_mid.evictions.is_empty());
    let x_hi = wl(&r, "co-x", "x-hi");
    assert_ran(x_hi, 90.0, 690.0);
    assert_eq!(
        events(x_hi, "PreemptedWorkload"),
        [(
            60.0,
            "Normal",
            "Preempted workload co-y/y-low (UID: uid-y-low) in ClusterQueue cq-y; preemptor effective priority: 1000 (base: 1000, boost: 0); preemptee effective priority: 50 (base: 50, boost: 0)"
        )]
    );
    let x_hi2 = wl(&r, "co-x", "x-hi2");
    assert_ran(x_hi2, 691.0, 1291.0);
    assert_eq!(
        warnings(x_hi2),
        [(300.0, "WaitingForQuota", more_needed("default", 2).as_str())]
    );
    assert!(events(x_hi2, "PreemptedWorkload").is_empty());
    let y_low = wl(&r, "co-y", "y-low");
    assert_ran(y_low, 1292.0, 1892.0);
    assert_preempted_once(y_low, 60.0, "InCohortReclaimWhileBorrowing", "co-x/x-hi");
    assert_eq!(
        events(y_low, "Preempted"),
        [(
            60.0,
            "Normal",
            format!("{Y_LOW_PREEMPTED}; preemptor effective priority: 1000 (base: 1000, boost: 0); preemptee effective priority: 50 (base: 50, boost: 0)").as_str()
        )]
    );
    assert_eq!(
        warnings(y_low),
        [
            (90.0, "WaitingForQuota", no_longer_fits()),
            (90.0, "WaitingForQuota", more_needed("default", 2).as_str()),
            (691.0, "WaitingForQuota", no_longer_fits()),
            (691.0, "WaitingForQuota", more_needed("default", 2).as_str()),
        ]
    );
}

// ---- sticky preemptor ----

#[test]
fn sticky_preemptor_keeps_its_head_until_admitted() {
    let r = run("sticky-preemptor");
    let p = wl(&r, "default", "p");
    assert_eq!(p.admitted_at, Some(10.5));
    assert!(
        p.events
            .iter()
            .any(|e| e.reason == "PreemptedWorkload" && e.at == 0.5)
    );
    let h = wl(&r, "default", "h");
    assert_eq!((h.state, h.admitted_at), ("Pending", None));
    let x = wl(&r, "default", "x");
    assert_eq!(
        x.evictions[0].preemption_reason,
        Some("InCohortReclaimWhileBorrowing")
    );
}

/// scenarios/kueue/preemptor-thrash: with Kueue's default feature gates a borrowing preemptor
/// and its lower-priority victim take turns: the victim borrows less, so each cycle admits it
/// first, and the preemptor evicts it again once its pod is gone (every 20s of termination).
#[test]
fn borrowing_preemptor_and_victim_take_turns() {
    let r = run_dir("kueue/preemptor-thrash");
    let wl0 = wl(&r, "ns0", "wl0");
    let wl2 = wl(&r, "ns1", "wl2");
    assert_eq!(wl(&r, "ns1", "wl1").state, "Finished");
    assert_eq!(wl2.admitted_at, None);
    // From 85s to 10m, one preemption per 20s round.
    assert_eq!(wl0.evictions.len(), 26);
    assert!(
        wl0.evictions
            .iter()
            .all(|e| e.preemption_reason == Some("InCohortReclaimWhileBorrowing")),
        "{:?}",
        wl0.evictions
    );
    let times: Vec<f64> = wl0.evictions.iter().map(|e| e.at).collect();
    assert_eq!(&times[..3], &[85.0, 105.0, 125.0]);
}

/// scenarios/kueue/fair-sharing-preemption-loop: under fair sharing the preemptor's victims
/// are readmitted ahead of it (their ClusterQueue's share with one of them back is below the
/// preemptor's), then it finds no victim and is parked until the evictions' requeue 1 s
/// later, when it preempts them again: once a second until a-long finishes at 75s. Upstream
/// Kueue's scheduler takes the same steps on this case. The run names the loop: a
/// `PreemptionLoop` check (printed as a warning and in the summary).
#[test]
fn fair_sharing_victims_readmitted_ahead_of_their_preemptor_every_second() {
    let r = run("fair-sharing-preemption-loop");
    let rounds: Vec<f64> = (20..=74).map(f64::from).collect();
    for (name, mut times) in [("b2", rounds.clone()), ("b3", rounds.clone())] {
        if name == "b3" {
            times.push(75.0);
        }
        let w = wl(&r, "research", name);
        let at: Vec<f64> = w.evictions.iter().map(|e| e.at).collect();
        assert_eq!(at, times, "{name}: preempted every second");
        assert!(
            w.evictions
                .iter()
                .all(|e| e.preemption_reason == Some("InCohortFairSharing")
                    && e.preemptor.as_deref() == Some("train/p")),
            "{name}: {:?}",
            w.evictions
        );
    }
    // Each round: b2 readmitted first (p no longer fits), then p finds no victim.
    let p = wl(&r, "train", "p");
    let at_21: Vec<(&str, &str)> = p
        .events
        .iter()
        .filter(|e| e.at == 21.0)
        .map(|e| (e.reason, e.message.as_str()))
        .collect();
    assert_eq!(at_21.len(), 5, "{at_21:?}");
    assert_eq!(at_21[3], ("WaitingForQuota", no_longer_fits()));
    assert_eq!(
        at_21[4],
        (
            "WaitingForQuota",
            "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu, 2 more needed"
        )
    );
    assert_eq!((p.admitted_at, p.state), (Some(75.0), "Finished"));
    assert_eq!(wl(&r, "research", "b3").admitted_at, Some(136.0));
    assert_eq!(wl(&r, "research", "b2").state, "Running");
    // The loop is named once, for its preemptor.
    let loops: Vec<_> = r
        .summary
        .checks
        .iter()
        .filter(|c| c.kind == "PreemptionLoop")
        .collect();
    assert_eq!(loops.len(), 1, "{:?}", r.summary.checks);
    assert_eq!(loops[0].object, "Workload/train/p");
    assert_eq!(
        loops[0].message,
        "workload train/p preempted the same 2 workload(s) 111 times from 20s to 1m15s of the run (research/b3 56 times), each readmitted in between: a preemption loop, which Kueue runs too (docs/semantics.md, Preemption loops)"
    );
}

#[test]
fn two_resource_preemption_takes_both_holders() {
    // The scheduler's getTargets searches with both resources contested; the flavor
    // assigner's oracle searched one resource at a time, so its last answer (memory: mem-hog
    // alone) is not the scheduler's.
    let r = run("two-resource-preemption");
    for name in ["cpu-hog", "mem-hog"] {
        let w = wl(&r, "team", name);
        assert_preempted_once(w, 60.0, "InClusterQueue", "team/urgent");
        assert_eq!(w.admitted_at, Some(691.0), "{name}: readmitted");
    }
    assert_ran(wl(&r, "team", "urgent"), 90.0, 690.0);
}

#[test]
fn victims_reserved_within_one_second_tie_and_the_lower_uid_goes() {
    // `CandidatesOrdering` reads `quotaReservationTime` back from the API server, in whole
    // seconds: b-first (60.0 s) and b-second (60.4 s) tie, and uid-1 is evicted first.
    let r = run("victim-order-whole-seconds");
    let first = wl(&r, "default", "b-first");
    assert_preempted_once(first, 60.9, "InCohortReclamation", "default/a-job");
    assert_pending(first, Some("inadmissible"));
    let second = wl(&r, "default", "b-second");
    assert!(second.evictions.is_empty(), "{:?}", second.evictions);
    assert_eq!(second.state, "Running");
    let a = wl(&r, "default", "a-job");
    assert_eq!((a.state, a.admitted_at), ("Running", Some(60.9)));
}

#[test]
fn preemption_over_borrowing_makes_a_pod_set_needing_preemption_fit() {
    // Under PreemptionOverBorrowing, b-job's flavor is as good as memory's Fit with borrowing,
    // its worst resource: the pod set's status holds no reason, so upstream's
    // `PodSetAssignment.RepresentativeMode` is Fit although cpu needs preemption. No targets
    // are searched and the cycle's fit check fails on cpu: a-job is never preempted.
    let r = run("preemption-over-borrowing-fit");
    let a = wl(&r, "default", "a-job");
    assert_eq!((a.state, a.admitted_at), ("Running", Some(0.0)));
    assert!(a.evictions.is_empty(), "{:?}", a.evictions);
    let b = wl(&r, "default", "b-job");
    assert_eq!(b.state, "Pending");
    assert!(b.evictions.is_empty(), "{:?}", b.evictions);
    assert_condition(
        b,
        "QuotaReserved",
        "False",
        "WaitingForQuota",
        "Workload no longer fits after processing another workload",
    );
}

#[test]
fn eviction_writes_hold_the_victims_quota_one_write_at_a_time() {
    // `IssuePreemptions` patches each victim through Kueue's client; with 2 s per write the
    // victims' quota comes back at 62 s and 64 s (queued writes), not at the eviction (60 s),
    // and the preemptor is admitted once the cycle that waited for both writes is over.
    let r = run("eviction-writes-hold-quota");
    let requeued_at = |name: &str| {
        let w = wl(&r, "default", name);
        assert_preempted_once(w, 60.0, "InClusterQueue", "default/high");
        let c = condition(w, "Requeued");
        assert_eq!((c.status, c.reason), ("True", "Preempted"), "{name}");
        c.at
    };
    assert_eq!((requeued_at("low-b"), requeued_at("low-a")), (62.0, 64.0));
    let high = wl(&r, "default", "high");
    assert_eq!(
        (high.state, high.admitted_at, high.running_at),
        ("Running", Some(64.0), Some(66.0))
    );
    assert_condition(
        wl(&r, "default", "low-a"),
        "QuotaReserved",
        "False",
        "WaitingForQuota",
        &more_needed("default", 2),
    );
    let b = wl(&r, "default", "low-b");
    assert_pending(b, Some("inadmissible"));
    assert_eq!(condition(b, "QuotaReserved").reason, "PendingEvaluation");
    assert_eq!(
        (b.admitted_at, b.running_at),
        (Some(10.0), None),
        "low-b: its first admission is kept, it no longer runs"
    );
}
