//! Kueue's own scheduler unit-test cases (`kueue-cases.md`, S-* and O-*) as scenarios under
//! `scenarios/cases/`. Each scenario's header restates its case and the upstream test.
//!
//! Upstream tests run one scheduling cycle; the simulator, like a live Kueue, keeps cycling
//! at time 0 until nothing changes, so a later cycle may overwrite the first cycle's
//! `QuotaReserved` condition (or even admit the workload). The first cycle's verdict is
//! therefore read from the workload's first Warning event from `kueue-admission`, and the
//! final state is what real Kueue reaches once the cycles at time 0 settle (each scenario
//! runs for 1s, so quota-only admissions are `Running` and preempted victims, with a 5m pod
//! termination, are still `Evicted`).
//!
//! O-03 (`TestBestEffortFIFORequeueIfNotPresent`, where each requeue reason sends a head) is
//! a unit test of the queue manager with no scenario-level shape of its own; it is covered by
//! the queue tests in the engine (`kueuesim-engine`, `queues.rs`) and, through its
//! consequences (pending-active vs pending-inadmissible), by the `queue_status` assertions
//! here.

use kueuesim_scenario::output::{ConditionOut, EventOut, SimulationResult, WorkloadOut};

use crate::util::run_dir;

fn wl<'a>(r: &'a SimulationResult, namespace: &str, name: &str) -> &'a WorkloadOut {
    r.workloads
        .iter()
        .find(|w| w.namespace == namespace && w.name == name)
        .unwrap_or_else(|| panic!("no workload {namespace}/{name}"))
}

fn id(w: &WorkloadOut) -> String {
    format!("{}/{}", w.namespace, w.name)
}

fn condition<'a>(w: &'a WorkloadOut, kind: &str) -> &'a ConditionOut {
    w.conditions
        .iter()
        .find(|c| c.kind == kind)
        .unwrap_or_else(|| panic!("{} has no {kind} condition", id(w)))
}

fn assert_flavor(w: &WorkloadOut, resource: &str, flavor: &str) {
    assert_eq!(
        w.pod_sets[0].flavors.get(resource).map(String::as_str),
        Some(flavor),
        "{}: flavor of {resource}",
        id(w)
    );
}

fn assert_holds_quota(w: &WorkloadOut) {
    assert!(
        matches!(w.state, "Admitted" | "Running"),
        "{} is {}, expected it to hold quota",
        id(w),
        w.state
    );
}

/// Admitted at time 0 (in quota-only runs it is `Running` at once) with `flavor` for
/// `resource`.
fn assert_admitted_at_start(w: &WorkloadOut, resource: &str, flavor: &str) {
    assert_holds_quota(w);
    assert_eq!(w.admitted_at, Some(0.0), "{}: admittedAt", id(w));
    assert_flavor(w, resource, flavor);
}

/// A workload admitted in the input that the case must leave alone.
fn assert_untouched(w: &WorkloadOut, resource: &str, flavor: &str) {
    assert_holds_quota(w);
    assert!(w.evictions.is_empty(), "{} was evicted", id(w));
    assert_flavor(w, resource, flavor);
}

/// Still pending at the end, in the active heap (`active`) or the inadmissible list.
fn assert_pending(w: &WorkloadOut, queue_status: &str) {
    assert_eq!(w.state, "Pending", "{}: state", id(w));
    assert_eq!(w.admitted_at, None, "{}: admittedAt", id(w));
    assert_eq!(
        w.queue_status.as_deref(),
        Some(queue_status),
        "{}: queueStatus",
        id(w)
    );
}

/// The first Warning event of Kueue's scheduler on `w`: its first cycle's verdict.
fn first_warning(w: &WorkloadOut) -> &EventOut {
    w.events
        .iter()
        .find(|e| e.kind == "Warning" && e.source == "kueue-admission")
        .unwrap_or_else(|| panic!("{} has no Warning event from kueue-admission", id(w)))
}

fn assert_first_warning(w: &WorkloadOut, reason: &str, message: &str) {
    let e = first_warning(w);
    assert_eq!(
        (e.reason, e.message.as_str()),
        (reason, message),
        "{}: first Warning event",
        id(w)
    );
}

fn assert_no_warning(w: &WorkloadOut) {
    let warnings: Vec<&EventOut> = w.events.iter().filter(|e| e.kind == "Warning").collect();
    assert!(warnings.is_empty(), "{}: {warnings:?}", id(w));
}

/// The scheduling cycle of the first `kueue-admission` event of `w` with `reason`.
fn cycle_of(w: &WorkloadOut, reason: &str) -> u64 {
    w.events
        .iter()
        .find(|e| e.source == "kueue-admission" && e.reason == reason)
        .and_then(|e| e.cycle)
        .unwrap_or_else(|| panic!("{} has no {reason} event with a cycle", id(w)))
}

fn first_warning_cycle(w: &WorkloadOut) -> u64 {
    first_warning(w)
        .cycle
        .unwrap_or_else(|| panic!("{}: first Warning event without a cycle", id(w)))
}

/// Preempted at time 0 for `preemption_reason`, and still terminating at the end.
fn assert_preempted(w: &WorkloadOut, preemption_reason: &str) {
    assert_eq!(w.state, "Evicted", "{}: state", id(w));
    assert_eq!(w.evictions.len(), 1, "{}: evictions", id(w));
    let e = &w.evictions[0];
    assert_eq!(
        (e.at, e.reason, e.preemption_reason),
        (0.0, "Preempted", Some(preemption_reason)),
        "{}: eviction",
        id(w)
    );
    let evicted = condition(w, "Evicted");
    assert_eq!((evicted.status, evicted.reason), ("True", "Preempted"));
    let preempted = condition(w, "Preempted");
    assert_eq!(
        (preempted.status, preempted.reason),
        ("True", preemption_reason)
    );
}

/// The Preempted condition's message ends with Kueue's wording of the reason and the paths.
fn assert_preempted_message_ends_with(w: &WorkloadOut, tail: &str) {
    let message = &condition(w, "Preempted").message;
    assert!(
        message.starts_with("Preempted to accommodate a workload (UID: ")
            && message.ends_with(tail),
        "{}: {message}",
        id(w)
    );
}

const NO_LONGER_FITS: &str = "Workload no longer fits after processing another workload";

#[test]
fn s01_cannot_borrow_overadmission() {
    let r = run_dir("cases/S-01-cannot-borrow-overadmission");
    let alpha = wl(&r, "eng-alpha", "new");
    assert_admitted_at_start(alpha, "cpu", "on-demand");
    assert_eq!(alpha.pod_sets[0].admitted_count, Some(45));
    assert_no_warning(alpha);

    // First cycle: nominated on on-demand by borrowing, skipped once eng-alpha/new took 45.
    let beta = wl(&r, "eng-beta", "new");
    assert_first_warning(beta, "WaitingForQuota", NO_LONGER_FITS);
    assert_eq!(first_warning_cycle(beta), cycle_of(alpha, "QuotaReserved"));
    // StrictFIFO kept it at the head; the next cycle at time 0 finds on-demand NoFit (55 left)
    // and borrows spot instead.
    assert_admitted_at_start(beta, "cpu", "spot");
    assert!(cycle_of(beta, "QuotaReserved") > first_warning_cycle(beta));
}

#[test]
fn s03_reclaim_blocked_flavor_does_not_block_other_flavor() {
    let r = run_dir("cases/S-03-reclaim-blocked-flavor-does-not-block-other-flavor");
    let reclaim = wl(&r, "eng-alpha", "can-reclaim");
    assert_first_warning(
        reclaim,
        "WaitingForQuota",
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 50 more needed, insufficient unused quota for cpu in flavor spot, 1 more needed",
    );
    // StrictFIFO: it stays at the head of eng-alpha, and never gets in.
    assert_pending(reclaim, "active");
    assert_eq!(
        (
            condition(reclaim, "QuotaReserved").status,
            condition(reclaim, "QuotaReserved").reason
        ),
        ("False", "WaitingForQuota")
    );

    // Its spot reservation leaves on-demand alone: borrowed in the same cycle.
    let borrow = wl(&r, "eng-beta", "needs-to-borrow");
    assert_admitted_at_start(borrow, "cpu", "on-demand");
    assert_no_warning(borrow);
    assert_eq!(
        cycle_of(borrow, "QuotaReserved"),
        first_warning_cycle(reclaim)
    );

    assert_untouched(wl(&r, "eng-beta", "user-on-demand"), "cpu", "on-demand");
    assert_untouched(wl(&r, "eng-beta", "user-spot"), "cpu", "spot");
}

#[test]
fn s05_hierarchical_lending_limit_respected() {
    let r = run_dir("cases/S-05-hierarchical-lending-limit-respected");
    let pending = wl(&r, "eng-alpha", "wl-pending");
    let message = "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 1 more needed";
    assert_first_warning(pending, "WaitingForQuota", message);
    assert_pending(pending, "inadmissible");
    let c = condition(pending, "QuotaReserved");
    assert_eq!(
        (c.status, c.reason, c.message.as_str()),
        ("False", "WaitingForQuota", message)
    );
    assert_untouched(wl(&r, "eng-alpha", "wl-existing"), "cpu", "on-demand");
}

#[test]
fn s07_preempt_in_cq_and_cohort() {
    let r = run_dir("cases/S-07-preempt-in-cq-and-cohort");
    let preemptor = wl(&r, "eng-beta", "preemptor");
    assert_first_warning(
        preemptor,
        "WaitingForPreemptedWorkloads",
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 20 more needed, insufficient unused quota for cpu in flavor spot, 20 more needed. Pending the preemption of 2 workload(s)",
    );
    // Its victims are still terminating: it waits at the head of eng-beta.
    assert_pending(preemptor, "active");

    let borrower = wl(&r, "eng-alpha", "borrower");
    assert_preempted(borrower, "InCohortReclamation");
    assert_preempted_message_ends_with(
        borrower,
        "due to reclamation within the cohort; preemptor path: /eng/eng-beta; preemptee path: /eng/eng-alpha",
    );
    let low2 = wl(&r, "eng-beta", "low-2");
    assert_preempted(low2, "InClusterQueue");
    assert_preempted_message_ends_with(
        low2,
        "due to prioritization in the ClusterQueue; preemptor path: /eng/eng-beta; preemptee path: /eng/eng-beta",
    );
    assert_untouched(wl(&r, "eng-beta", "low-1"), "cpu", "on-demand");
    assert_untouched(wl(&r, "eng-alpha", "use-all-spot"), "cpu", "spot");
}

#[test]
fn s09_skip_flavor_without_candidates_even_with_may_stop_search() {
    let r = run_dir("cases/S-09-skip-flavor-without-candidates-even-with-MayStopSearch");
    let new = wl(&r, "eng-alpha", "new");
    assert_admitted_at_start(new, "cpu", "spot");
    assert_no_warning(new);
    assert_untouched(wl(&r, "eng-alpha", "admitted"), "cpu", "on-demand");
}

#[test]
fn s11_namespace_selector_mismatch() {
    let r = run_dir("cases/S-11-namespace-selector-mismatch");
    let new = wl(&r, "sales", "new");
    let message = "workload namespace doesn't match ClusterQueue selector";
    assert_first_warning(new, "Misconfigured", message);
    // Inadmissible even though eng-alpha is StrictFIFO.
    assert_pending(new, "inadmissible");
    let c = condition(new, "QuotaReserved");
    assert_eq!(
        (c.status, c.reason, c.message.as_str()),
        ("False", "Misconfigured", message)
    );
}

#[test]
fn s13_prefer_reclaim_flavor_over_in_cq_preemption() {
    let r = run_dir("cases/S-13-prefer-reclaim-flavor-over-in-cq-preemption");
    let preemptor = wl(&r, "eng-alpha", "preemptor");
    assert_first_warning(
        preemptor,
        "WaitingForPreemptedWorkloads",
        "couldn't assign flavors to pod set main: insufficient unused quota for gpu in flavor on-demand, 1 more needed, insufficient unused quota for gpu in flavor spot, 1 more needed. Pending the preemption of 1 workload(s)",
    );
    assert_pending(preemptor, "active");

    let b1 = wl(&r, "eng-beta", "b1");
    assert_preempted(b1, "InCohortReclamation");
    assert_preempted_message_ends_with(
        b1,
        "due to reclamation within the cohort; preemptor path: /other/other-alpha; preemptee path: /other/other-beta",
    );
    assert_untouched(wl(&r, "eng-alpha", "a1"), "gpu", "on-demand");
}

const A2_MESSAGE: &str = "couldn't assign flavors to pod set main: insufficient unused quota for gpu in flavor on-demand, 1 more needed";

#[test]
fn s14_capacity_not_blocked_when_lender_can_reclaim() {
    let r = run_dir("cases/S-14-capacity-not-blocked-when-lender-can-reclaim");
    let a2 = wl(&r, "eng-alpha", "a2-pending");
    assert_first_warning(a2, "WaitingForQuota", A2_MESSAGE);
    assert_pending(a2, "inadmissible");

    // cluster-queue-a can reclaim from anyone, so it reserves nothing: b1 borrows at once.
    let b1 = wl(&r, "eng-beta", "b1-pending");
    assert_admitted_at_start(b1, "gpu", "on-demand");
    assert_no_warning(b1);
    assert_eq!(cycle_of(b1, "QuotaReserved"), first_warning_cycle(a2));

    assert_untouched(wl(&r, "eng-alpha", "a1-admitted"), "gpu", "on-demand");
}

/// S-15: cluster-queue-a is not sure to reclaim, so a2's failed attempt reserves its free gpu
/// for the rest of that cycle and b1 is skipped; the next cycle (a2 now inadmissible) admits
/// b1 after all.
fn capacity_reserved_when_reclaim_not_guaranteed(dir: &str) {
    let r = run_dir(dir);
    let a2 = wl(&r, "eng-alpha", "a2-pending");
    assert_first_warning(a2, "WaitingForQuota", A2_MESSAGE);
    assert_pending(a2, "inadmissible");

    let b1 = wl(&r, "eng-beta", "b1-pending");
    assert_first_warning(b1, "WaitingForQuota", NO_LONGER_FITS);
    assert_eq!(first_warning_cycle(b1), first_warning_cycle(a2));
    // Admitted in a later cycle, within the first second (Kueue backs off 1 ms after a cycle
    // that admitted nothing).
    assert_holds_quota(b1);
    assert!(
        b1.admitted_at.is_some_and(|t| (0.0..1.0).contains(&t)),
        "{dir}: b1 admittedAt {:?}",
        b1.admitted_at
    );
    assert_flavor(b1, "gpu", "on-demand");
    assert!(cycle_of(b1, "QuotaReserved") > first_warning_cycle(b1));

    assert_untouched(wl(&r, "eng-alpha", "a1-admitted"), "gpu", "on-demand");
}

#[test]
fn s15_capacity_reserved_when_reclaim_not_guaranteed_lower_priority() {
    capacity_reserved_when_reclaim_not_guaranteed(
        "cases/S-15-capacity-reserved-when-reclaim-not-guaranteed-lower-priority",
    );
}

#[test]
fn s15_capacity_reserved_when_reclaim_not_guaranteed_never() {
    capacity_reserved_when_reclaim_not_guaranteed(
        "cases/S-15-capacity-reserved-when-reclaim-not-guaranteed-never",
    );
}

#[test]
fn s17_preemption_over_borrowing() {
    let r = run_dir("cases/S-17-preemption-over-borrowing");
    let high = wl(&r, "default", "high-pob");
    assert_first_warning(
        high,
        "WaitingForPreemptedWorkloads",
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 5 more needed. Pending the preemption of 1 workload(s)",
    );
    // Waits for low-pob to terminate; never takes spot by borrowing.
    assert_pending(high, "active");

    let low = wl(&r, "default", "low-pob");
    assert_preempted(low, "InClusterQueue");
    assert_preempted_message_ends_with(
        low,
        "due to prioritization in the ClusterQueue; preemptor path: /pob-cohort/pob-cq; preemptee path: /pob-cohort/pob-cq",
    );
}

#[test]
fn s19_preemption_over_borrowing_ignores_flavor_without_candidates() {
    let r = run_dir("cases/S-19-preemption-over-borrowing-ignores-flavor-without-candidates");
    let pending = wl(&r, "default", "pending-nopc");
    assert_admitted_at_start(pending, "cpu", "spot");
    assert_no_warning(pending);
    assert_untouched(wl(&r, "default", "admitted-nopc"), "cpu", "on-demand");
}

#[test]
fn o01_cycle_entry_ordering() {
    // Each stage (one per minute) admits exactly the first entry of that cycle's order.
    const EXPECTED: [&str; 9] = [
        "new-high-pri",
        "old",
        "recently-evicted",
        "new",
        "high-pri-borrowing",
        "old-borrowing",
        "evicted-borrowing",
        "new-borrowing",
        "high-pri-borrowing-more",
    ];
    let r = run_dir("cases/O-01-cycle-entry-ordering");
    let mut admitted: Vec<(f64, &str)> = EXPECTED
        .iter()
        .map(|&name| {
            let w = wl(&r, "ordering", name);
            let at = w
                .admitted_at
                .unwrap_or_else(|| panic!("{name} was never admitted ({})", w.state));
            (at, name)
        })
        .collect();
    admitted.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(admitted[0].0, 0.0, "{admitted:?}");
    assert!(
        admitted.windows(2).all(|p| p[0].0 < p[1].0),
        "one entry per stage: {admitted:?}"
    );
    let order: Vec<&str> = admitted.iter().map(|&(_, name)| name).collect();
    // Without the queue-order timestamp of the PodsReadyTimeout evictions, the seven other
    // entries keep this order (borrowing level, then priority, then creation).
    let not_evicted = |names: &[&str]| -> Vec<String> {
        names
            .iter()
            .filter(|n| !n.contains("evicted"))
            .map(|n| n.to_string())
            .collect()
    };
    assert_eq!(not_evicted(&order), not_evicted(&EXPECTED));
    // With them: an entry evicted by PodsReadyTimeout is ordered by its eviction time.
    assert_eq!(order, EXPECTED);
    assert_untouched(wl(&r, "ordering", "filler"), "cpu", "default");
}
