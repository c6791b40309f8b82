//! Kueue's own scheduler unit-test cases (`kueue-cases.md`: S-* and O-* from `TestSchedule`,
//! P-* from `TestPreemption` / `TestHierarchicalPreemptions`, F-* from `TestFairPreemptions`)
//! as scenarios under `scenarios/cases/`. Each scenario's header restates its case and the
//! upstream test. The P-* and F-* scenarios are described before their tests, below.
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

use kueuesim_report::output::{EventOut, SimulationResult, WorkloadOut};

use crate::util::{condition, id, run_dir, wl};

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

// ---- Preemption cases (P-*, `TestPreemption`) and fair-sharing preemption cases (F-*,
// `TestFairPreemptions`): each upstream case is the first cycle at time 0. These scenarios
// run for 2m with a 30s pod termination, so the victims' pods are gone at 30s: the preemptor
// is admitted then, and the victims are requeued and stay pending.

/// When the pods of a workload preempted at time 0 are gone.
const POD_GONE: f64 = 30.0;

/// The Preempted condition's message of `w`.
fn preempted_message(w: &WorkloadOut) -> &str {
    &condition(w, "Preempted").message
}

/// Preempted once, at `at`, by `preemptor` (`namespace/name`) for `preemption_reason`; back in
/// its queue and pending at the end (its pods gone, nothing it could preempt).
fn assert_preempted_then_requeued(
    w: &WorkloadOut,
    at: f64,
    preemptor: &str,
    preemption_reason: &str,
) {
    assert_eq!(w.evictions.len(), 1, "{}: evictions", id(w));
    let e = &w.evictions[0];
    assert_eq!(
        (e.at, e.reason, e.preemption_reason, e.preemptor.as_deref()),
        (at, "Preempted", Some(preemption_reason), Some(preemptor)),
        "{}: eviction",
        id(w)
    );
    let preempted = condition(w, "Preempted");
    assert_eq!(
        (preempted.status, preempted.reason, preempted.at),
        ("True", preemption_reason, at),
        "{}: Preempted condition",
        id(w)
    );
    assert_eq!(w.state, "Pending", "{}: state", id(w));
    assert!(
        w.pod_sets[0].flavors.is_empty(),
        "{}: holds a flavor",
        id(w)
    );
    assert_eq!(
        condition(w, "QuotaReserved").status,
        "False",
        "{}: QuotaReserved",
        id(w)
    );
}

/// The incoming workload of a case: its first cycle issued the preemption of `victims`
/// workloads (`more_needed` cpu short), and it was admitted on `default` once their pods were
/// gone.
fn assert_preemptor_admitted_after(w: &WorkloadOut, more_needed: u32, victims: u32, at: f64) {
    assert_first_warning(
        w,
        "WaitingForPreemptedWorkloads",
        &format!(
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, {more_needed} more needed. Pending the preemption of {victims} workload(s)"
        ),
    );
    assert_eq!(first_warning_cycle(w), 1, "{}: first cycle", id(w));
    assert_holds_quota(w);
    assert_eq!(w.admitted_at, Some(at), "{}: admittedAt", id(w));
    assert!(w.evictions.is_empty(), "{} was evicted", id(w));
    assert_flavor(w, "cpu", "default");
}

/// Upstream's message for a victim of its incoming workload (UID wl-in, JobUID job-in).
fn preempted_by_in(reason: &str, preemptor_path: &str, preemptee_path: &str) -> String {
    format!(
        "Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to {reason}; preemptor path: {preemptor_path}; preemptee path: {preemptee_path}"
    )
}

#[test]
fn p01_preempt_lowest_priority() {
    let r = run_dir("cases/P-01-preempt-lowest-priority");
    assert_preemptor_admitted_after(wl(&r, "default", "in"), 2, 1, POD_GONE);
    let low = wl(&r, "default", "low");
    assert_preempted_then_requeued(low, 0.0, "default/in", "InClusterQueue");
    assert_eq!(
        preempted_message(low),
        preempted_by_in(
            "prioritization in the ClusterQueue",
            "/standalone",
            "/standalone"
        )
    );
    for name in ["mid", "high"] {
        assert_untouched(wl(&r, "default", name), "cpu", "default");
    }
}

#[test]
fn p03_reclaim_from_borrower() {
    let r = run_dir("cases/P-03-reclaim-from-borrower");
    assert_preemptor_admitted_after(wl(&r, "default", "in"), 3, 1, POD_GONE);
    let mid = wl(&r, "default", "c2-mid");
    assert_preempted_then_requeued(mid, 0.0, "default/in", "InCohortReclamation");
    assert_eq!(
        preempted_message(mid),
        preempted_by_in("reclamation within the cohort", "/cohort/c1", "/cohort/c2")
    );
    // Other-ClusterQueue candidates come first: the lower-priority c1-low survives.
    for name in ["c1-low", "c2-high"] {
        assert_untouched(wl(&r, "default", name), "cpu", "default");
    }
}

#[test]
fn p05_reclaim_any_takes_lowest_priority_first() {
    let r = run_dir("cases/P-05-reclaim-Any-takes-lowest-priority-first");
    assert_preemptor_admitted_after(wl(&r, "default", "in"), 2, 1, POD_GONE);
    let c1_1 = wl(&r, "default", "c1-1");
    assert_preempted_then_requeued(c1_1, 0.0, "default/in", "InCohortReclamation");
    assert_eq!(
        preempted_message(c1_1),
        preempted_by_in("reclamation within the cohort", "/cohort/c2", "/cohort/c1")
    );
    for name in ["c1-2", "c2"] {
        assert_untouched(wl(&r, "default", name), "cpu", "default");
    }
}

#[test]
fn p07_borrow_within_cohort_below_threshold() {
    let r = run_dir("cases/P-07-borrowWithinCohort-below-threshold");
    assert_preemptor_admitted_after(wl(&r, "default", "in"), 8, 1, POD_GONE);
    let low = wl(&r, "default", "a-best-effort-low");
    assert_preempted_then_requeued(low, 0.0, "default/in", "InCohortReclaimWhileBorrowing");
    assert_eq!(
        preempted_message(low),
        preempted_by_in(
            "reclamation within the cohort while borrowing",
            "/with-shared-cq/a-standard",
            "/with-shared-cq/a-best-effort"
        )
    );
    assert_untouched(wl(&r, "default", "b-best-effort-low"), "cpu", "default");
}

#[test]
fn p09_borrow_within_cohort_above_threshold_but_no_borrow_after() {
    let r = run_dir("cases/P-09-borrowWithinCohort-above-threshold-but-no-borrow-after");
    assert_preemptor_admitted_after(wl(&r, "default", "in"), 1, 1, POD_GONE);
    let b = wl(&r, "default", "b-standard");
    assert_preempted_then_requeued(b, 0.0, "default/in", "InCohortReclamation");
    assert_eq!(
        preempted_message(b),
        preempted_by_in(
            "reclamation within the cohort",
            "/with-shared-cq/a-standard",
            "/with-shared-cq/b-standard"
        )
    );
}

#[test]
fn p11_lending_limit_makes_request_impossible() {
    let r = run_dir("cases/P-11-lending-limit-makes-request-impossible");
    let incoming = wl(&r, "default", "in");
    let message = "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, previously considered podsets requests (0) + current podset request (9) > maximum capacity (8)";
    assert_first_warning(incoming, "ExceedsMaxQuota", message);
    assert_eq!(first_warning_cycle(incoming), 1);
    // Never admitted, nothing preempted.
    assert_pending(incoming, "inadmissible");
    assert_untouched(wl(&r, "default", "lend2-low"), "cpu", "default");
    assert!(r.workloads.iter().all(|w| w.evictions.is_empty()));
}

#[test]
fn p13_hierarchical_candidate_preferred_over_lower_priority_local() {
    let r = run_dir("cases/P-13-hierarchical-candidate-preferred-over-lower-priority-local");
    assert_preemptor_admitted_after(wl(&r, "default", "in"), 1, 1, POD_GONE);
    let borrowing = wl(&r, "default", "admitted-borrowing");
    assert_preempted_then_requeued(borrowing, 0.0, "default/in", "InCohortReclamation");
    assert_eq!(
        preempted_message(borrowing),
        preempted_by_in("reclamation within the cohort", "/r/c/q", "/r/q-borrowing")
    );
    // The lower-priority workload of q itself survives.
    assert_untouched(wl(&r, "default", "admitted-same-queue"), "cpu", "default");
}

/// Units (1 cpu each) that the case leaves alone.
fn assert_units_untouched(r: &SimulationResult, names: &[&str]) {
    for name in names {
        assert_untouched(wl(r, "default", name), "cpu", "default");
    }
}

#[test]
fn f01_within_nominal_reclaim_ignores_shares() {
    let r = run_dir("cases/F-01-within-nominal-reclaim-ignores-shares");
    assert_preemptor_admitted_after(wl(&r, "default", "c-incoming"), 1, 1, POD_GONE);
    let b1 = wl(&r, "default", "b1");
    assert_preempted_then_requeued(b1, 0.0, "default/c-incoming", "InCohortReclamation");
    assert!(
        preempted_message(b1).ends_with(
            "due to reclamation within the cohort; preemptor path: /all/c; preemptee path: /all/b"
        ),
        "{}",
        preempted_message(b1)
    );
    assert_units_untouched(&r, &["a1", "a2", "a3", "b2", "b3", "b4", "b5", "c1"]);
}

#[test]
fn f03_no_preemption_that_flips_imbalance() {
    let r = run_dir("cases/F-03-no-preemption-that-flips-imbalance");
    let incoming = wl(&r, "default", "a-incoming");
    assert_first_warning(
        incoming,
        "WaitingForQuota",
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed",
    );
    assert_eq!(first_warning_cycle(incoming), 1);
    assert_pending(incoming, "inadmissible");
    assert!(r.workloads.iter().all(|w| w.evictions.is_empty()));
    assert_units_untouched(&r, &["a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5"]);
}

const FAIR_SHARING_A_B: &str =
    "due to Fair Sharing within the cohort; preemptor path: /all/a; preemptee path: /all/b";

#[test]
fn f05_weight_2_preempts_more() {
    let r = run_dir("cases/F-05-weight-2-preempts-more");
    assert_preemptor_admitted_after(wl(&r, "default", "a-incoming"), 2, 2, POD_GONE);
    for name in ["b1", "b2"] {
        let b = wl(&r, "default", name);
        assert_preempted_then_requeued(b, 0.0, "default/a-incoming", "InCohortFairSharing");
        assert!(
            preempted_message(b).ends_with(FAIR_SHARING_A_B),
            "{}",
            preempted_message(b)
        );
    }
    assert_units_untouched(&r, &["a1", "a2", "a3", "b3", "b4", "b5", "b6"]);
}

#[test]
fn f06_less_than_initial_share_takes_lower_priority_first() {
    let r = run_dir("cases/F-06-less-than-initial-share-takes-lower-priority-first");
    assert_preemptor_admitted_after(wl(&r, "default", "a-incoming"), 1, 1, POD_GONE);
    let low = wl(&r, "default", "b-low");
    assert_preempted_then_requeued(low, 0.0, "default/a-incoming", "InCohortFairSharing");
    assert!(
        preempted_message(low).ends_with(FAIR_SHARING_A_B),
        "{}",
        preempted_message(low)
    );
    assert_units_untouched(&r, &["a1", "b-high"]);
}

#[test]
fn f07_less_than_or_equal_to_final_share_picks_balance_preserving_victim() {
    let r = run_dir("cases/F-07-LessThanOrEqualToFinalShare-picks-balance-preserving-victim");
    assert_preemptor_admitted_after(wl(&r, "default", "a-incoming"), 1, 1, POD_GONE);
    // The case: b-high, not the lower-priority b-low, is the victim at time 0.
    let high = wl(&r, "default", "b-high");
    assert_eq!(high.evictions.len(), 1, "b-high: evictions");
    let e = &high.evictions[0];
    assert_eq!(
        (e.at, e.reason, e.preemption_reason, e.preemptor.as_deref()),
        (
            0.0,
            "Preempted",
            Some("InCohortFairSharing"),
            Some("default/a-incoming")
        )
    );
    let history = &condition(high, "Preempted").message;
    assert!(
        history.ends_with(FAIR_SHARING_A_B),
        "b-high Preempted condition: {history}"
    );
    // Requeued at 30s, b-high (priority 1) takes b's quota back from b-low (priority 0)
    // within b, and is admitted again once b-low's pods are gone.
    let low = wl(&r, "default", "b-low");
    assert_preempted_then_requeued(low, POD_GONE, "default/b-high", "InClusterQueue");
    assert!(
        preempted_message(low).ends_with(
            "due to prioritization in the ClusterQueue; preemptor path: /all/b; preemptee path: /all/b"
        ),
        "{}",
        preempted_message(low)
    );
    assert_holds_quota(high);
    assert_eq!(high.admitted_at, Some(2.0 * POD_GONE), "b-high: admittedAt");
    assert_flavor(high, "cpu", "default");
    assert_untouched(wl(&r, "default", "a1"), "cpu", "default");
}

// ---- Admission Fair Sharing (scheduler_afs_test.go TestScheduleForAFS) ----

/// the LocalQueue with less consumed usage goes first.
#[test]
fn a01_less_used_local_queue_first() {
    let r = crate::util::run_dir("cases/A-01-less-used-localqueue-first");
    let find = |n: &str| r.workloads.iter().find(|w| w.name == n).expect("workload");
    let (a1, b1) = (find("wl-a1"), find("wl-b1"));
    assert_eq!(b1.admitted_at, Some(0.0));
    assert_eq!(
        b1.pod_sets[0].flavors.get("cpu").map(String::as_str),
        Some("default")
    );
    assert_eq!(a1.state, "Pending");
    let c = a1
        .conditions
        .iter()
        .find(|c| c.kind == "QuotaReserved")
        .expect("condition");
    assert_eq!(
        c.message,
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 8 more needed"
    );
}

/// a LocalQueue of weight 0 has infinite usage and goes last.
#[test]
fn a03_zero_weight_local_queue_last() {
    let r = crate::util::run_dir("cases/A-03-zero-weight-localqueue-last");
    let find = |n: &str| r.workloads.iter().find(|w| w.name == n).expect("workload");
    assert_eq!(find("wl-a1").admitted_at, Some(0.0));
    assert_eq!(find("wl-z1").state, "Pending");
}

/// The topology assignment of a workload's first pod set: (levels, [(values, count)]).
fn topology_of(w: &WorkloadOut) -> (Vec<String>, Vec<(Vec<String>, u32)>) {
    let t = w.pod_sets[0]
        .topology_assignment
        .as_ref()
        .unwrap_or_else(|| panic!("{} has no topology assignment", w.name));
    (
        t.levels.clone(),
        t.domains
            .iter()
            .map(|d| (d.values.clone(), d.count))
            .collect(),
    )
}

#[test]
fn t01_required_host_fits() {
    let r = run_dir("cases/T-01-required-host-fits");
    let foo = wl(&r, "default", "foo");
    assert_eq!(foo.pod_sets[0].flavors["cpu"], "tas-default");
    assert_eq!(
        topology_of(foo),
        (
            vec!["kubernetes.io/hostname".to_string()],
            vec![(vec!["x1".to_string()], 1)]
        )
    );
    assert_eq!(foo.pod_sets[0].nodes, ["x1"]);
}

#[test]
fn t03_level_missing_in_flavor() {
    let r = run_dir("cases/T-03a-level-missing-in-flavor");
    let foo = wl(&r, "default", "foo");
    assert_eq!(foo.state, "Pending");
    let c = condition(foo, "QuotaReserved");
    assert_eq!(c.reason, "NoMatchingFlavor");
    assert_eq!(
        c.message,
        "couldn't assign flavors to pod set one: Flavor \"tas-default\" does not contain the requested level"
    );
    let r = run_dir("cases/T-03b-level-only-in-second-flavor");
    let foo = wl(&r, "default", "foo");
    assert_eq!(foo.pod_sets[0].flavors["cpu"], "tas-custom-flavor");
    assert_eq!(
        topology_of(foo),
        (
            vec!["cloud.com/custom-level".to_string()],
            vec![(vec!["x1".to_string()], 1)]
        )
    );
}

#[test]
fn t09_node_taints_and_flavor_tolerations() {
    let r = run_dir("cases/T-09a-flavor-toleration");
    let foo = wl(&r, "default", "foo");
    assert_eq!(topology_of(foo).1, [(vec!["x1".to_string()], 1)]);
    assert_eq!(
        foo.pod_sets[0].nodes,
        ["x1"],
        "the flavor's toleration reaches the pod"
    );
    let r = run_dir("cases/T-09b-untolerated-taint");
    let foo = wl(&r, "default", "foo");
    assert_eq!(foo.state, "Pending");
    let c = condition(foo, "QuotaReserved");
    assert_eq!(c.reason, "TopologyPlacementFailed");
    assert_eq!(
        c.message,
        "couldn't assign flavors to pod set one: topology \"default\" doesn't allow to fit any of 1 pod(s). Total nodes: 1; excluded: taint \"example.com/gpu=present:NoSchedule\": 1"
    );
}

// Kueue TAS preemption (`scheduler_tas_test.go` `TestScheduleForTASPreemption`). Upstream's
// admitted workloads carry topology assignments, which kueuesim's input admissions do not: they
// arrive at 0 and the first cycles place them; the incoming workload arrives at 1s.

const FOO_PREEMPTED: &str = "Preempted to accommodate a workload (UID: wl-foo, JobUID: job-foo) due to prioritization in the ClusterQueue; preemptor path: /tas-main; preemptee path: /tas-main";

#[test]
fn t11_tas_preempts_only_low_priority() {
    let r = run_dir("cases/T-11-tas-preempts-only-low-priority");
    let foo = wl(&r, "default", "foo");
    assert_first_warning(
        foo,
        "WaitingForPreemptedWorkloads",
        "couldn't assign flavors to pod set one: topology \"tas-single-level\" doesn't allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource \"cpu\": 1. Pending the preemption of 1 workload(s)",
    );
    let low = wl(&r, "default", "low-priority-admitted");
    assert_preempted_then_requeued(low, 1.0, "default/foo", "InClusterQueue");
    assert_eq!(condition(low, "Preempted").message, FOO_PREEMPTED);
    // Admitted onto x1 once the victim's pods are gone.
    assert_eq!(foo.admitted_at, Some(31.0));
    assert_eq!(foo.pod_sets[0].nodes, ["x1"]);
}

#[test]
fn t13_tas_fragmented_capacity_preempts_low() {
    let r = run_dir("cases/T-13-tas-fragmented-capacity-preempts-low");
    let foo = wl(&r, "default", "foo");
    assert_first_warning(
        foo,
        "WaitingForPreemptedWorkloads",
        "couldn't assign flavors to pod set one: topology \"tas-single-level\" allows to fit only 1 out of 2 pod(s). Pending the preemption of 1 workload(s)",
    );
    let low = wl(&r, "default", "low-priority-admitted");
    assert_preempted_then_requeued(low, 1.0, "default/foo", "InClusterQueue");
    assert_eq!(condition(low, "Preempted").message, FOO_PREEMPTED);
    let mid = wl(&r, "default", "mid-priority-admitted");
    assert_untouched(mid, "cpu", "tas-default");
    assert_eq!(mid.pod_sets[0].nodes, ["x1"]);
    assert_eq!(foo.admitted_at, Some(31.0));
    assert_eq!(foo.pod_sets[0].nodes, ["y1", "y1"]);
}

/// T-13 as a cluster dump: the admitted Workloads carry their `topologyAssignment`, and the
/// victim search sees them exactly as workloads the run admitted (upstream's test gives them
/// so). The start is the snapshot's time, so the preemption is at 0 and the victim's pods
/// are gone at 30s.
#[test]
fn t13d_tas_preemption_sees_the_admitted_workloads_of_a_dump() {
    let r = run_dir("cases/T-13d-tas-fragmented-capacity-preempts-low-in-a-dump");
    let foo = wl(&r, "default", "foo");
    assert_first_warning(
        foo,
        "WaitingForPreemptedWorkloads",
        "couldn't assign flavors to pod set one: topology \"tas-single-level\" allows to fit only 1 out of 2 pod(s). Pending the preemption of 1 workload(s)",
    );
    let low = wl(&r, "default", "low-priority-admitted");
    assert_preempted_then_requeued(low, 0.0, "default/foo", "InClusterQueue");
    assert_eq!(condition(low, "Preempted").message, FOO_PREEMPTED);
    let mid = wl(&r, "default", "mid-priority-admitted");
    assert_untouched(mid, "cpu", "tas-default");
    assert_eq!(mid.pod_sets[0].nodes, ["x1"]);
    assert_eq!(foo.admitted_at, Some(30.0));
    assert_eq!(foo.pod_sets[0].nodes, ["y1", "y1"]);
}

#[test]
fn t15_tas_equal_priority_waits() {
    let r = run_dir("cases/T-15-tas-equal-priority-waits");
    let waiting = wl(&r, "default", "mid-priority-waiting");
    assert_first_warning(
        waiting,
        "WaitingForQuota",
        "couldn't assign flavors to pod set one: topology \"tas-single-level\" allows to fit only 1 out of 2 pod(s)",
    );
    assert_pending(waiting, "inadmissible");
    let admitted = wl(&r, "default", "mid-priority-admitted");
    assert_untouched(admitted, "cpu", "tas-default");
    assert!(
        r.workloads.iter().all(|w| w.evictions.is_empty()),
        "nothing is evicted"
    );
    // Upstream's single cycle leaves it queued; the next one admits it into the cpu left.
    let small = wl(&r, "default", "low-priority-which-would-fit");
    assert_eq!(small.admitted_at, Some(1.0));
    assert_eq!(small.pod_sets[0].nodes, ["x1"]);
}
