//! Kueue behaviours the differential oracle against upstream Kueue (main `ff69552e`) found
//! kueuesim getting wrong, as scenarios of `scenarios/kueue/` whose headers hold the hand
//! computation from the upstream code; asserted field by field.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result};

use crate::util::{id, load_dir, load_text, run_dir, warnings, wl};

/// (admittedAt, state, queueStatus).
fn status(w: &WorkloadOut) -> (Option<f64>, &str, Option<&str>) {
    (w.admitted_at, w.state, w.queue_status.as_deref())
}

/// Every eviction as (at, preemption reason, preemptor).
fn evictions(w: &WorkloadOut) -> Vec<(f64, Option<&str>, Option<&str>)> {
    w.evictions
        .iter()
        .map(|e| (e.at, e.preemption_reason, e.preemptor.as_deref()))
        .collect()
}

fn gpu_flavor(w: &WorkloadOut) -> &str {
    w.pod_sets[0]
        .flavors
        .get("nvidia.com/gpu")
        .map_or("", String::as_str)
}

#[test]
fn a_head_parked_after_a_finished_scan_scans_again_until_it_is_parked() {
    // `requeueIfNotPresent`: big's scan, started again after the inadmissible requeue,
    // stops at g0 with g1 left, so big stays the head for one more cycle, is parked, and gpu
    // is admitted behind it.
    let r = run_dir("kueue/scan-restarts-after-parking");
    let urgent = wl(&r, "default", "urgent");
    assert_eq!(status(urgent), (Some(60.0), "Running", None));
    let gpu = wl(&r, "default", "gpu");
    assert_eq!(status(gpu), (Some(61.0), "Running", None), "{}", id(gpu));
    assert_eq!(gpu_flavor(gpu), "g0");
    let big = wl(&r, "default", "big");
    assert_eq!(status(big), (Some(0.0), "Pending", Some("inadmissible")));
    assert_eq!(
        evictions(big),
        [(60.0, Some("InClusterQueue"), Some("default/urgent"))]
    );
}

#[test]
fn cycles_that_only_move_flavor_scans_stop_when_the_scans_come_back_to_a_state() {
    // x and y each alternate between two scan states (ps1 resumed at f1, then at f2); the
    // cycles at each instant stop at the first state of both seen since the last admission,
    // as upstream's scheduler would only repeat them: 4 cycles at 0 s, 4 at 10 s.
    let r = run_dir("kueue/scan-loop-closes");
    assert!(
        r.summary.stopped_early.is_none(),
        "{:?}",
        r.summary.stopped_early
    );
    assert_eq!(r.summary.cycles, 8);
    for (name, at) in [("hx", 0.0), ("hy", 10.0)] {
        let w = wl(&r, "default", name);
        assert_eq!(status(w), (Some(at), "Running", None), "{name}");
        assert_eq!(
            w.pod_sets[0].flavors.get("cpu").map(String::as_str),
            Some("f0")
        );
    }
    for name in ["x", "y"] {
        let w = wl(&r, "default", name);
        assert_eq!(status(w), (None, "Pending", Some("active")), "{name}");
        // Each ends in state A: ps0 on f0 without preemption candidates.
        assert!(
            warnings(w).last().is_some_and(|e| e
                .2
                .ends_with("insufficient unused quota for cpu in flavor f0, 2 more needed")),
            "{name}: {:?}",
            warnings(w).last()
        );
    }
}

#[test]
fn a_strict_fifo_head_whose_scans_ended_is_retried_after_a_finish() {
    // partial's scans ended at 0 s (a on f1, b fitting nowhere); when short finishes, the
    // retry restarts a on f0, stops there, and the next one resumes at f1 and admits b with
    // 2 of its 4 pods (partial admission).
    let r = run_dir("kueue/scan-restarts-after-finish");
    let short = wl(&r, "default", "short");
    assert_eq!(
        (short.admitted_at, short.finished_at),
        (Some(0.0), Some(15.0))
    );
    let partial = wl(&r, "default", "partial");
    assert_eq!(
        status(partial),
        (Some(15.0), "Running", None),
        "{}",
        id(partial)
    );
    let placed: Vec<(&str, Option<u32>)> = partial
        .pod_sets
        .iter()
        .map(|p| (p.flavors["cpu"].as_str(), p.admitted_count))
        .collect();
    assert_eq!(placed, [("f1", Some(1)), ("f0", Some(2))]);
}

fn run_with_recompute(on: bool) -> SimulationResult {
    let mut loaded = load_dir("kueue/overlapping-targets-recompute");
    loaded.world.config.kueue_gates.recompute_on_overlap = on;
    let outcome = Simulation::new(&loaded.world).run();
    result(&loaded.world, &outcome)
}

#[test]
fn overlapping_targets_recompute_the_assignment_and_a_fitting_entry_waits() {
    // RecomputeAssignmentUponPreemptionTargetsOverlap (on by default): b fits once a's victim
    // is gone (DeferredFit) and holds its quota in the cycle, so c never gets in.
    let r = run_with_recompute(true);
    assert_eq!(
        evictions(wl(&r, "default", "v")),
        [(0.0, Some("InCohortReclamation"), Some("default/a"))]
    );
    for name in ["a", "b"] {
        let w = wl(&r, "default", name);
        assert_eq!(status(w), (Some(0.0), "Running", None), "{name}");
        assert!(w.evictions.is_empty(), "{name}: {:?}", w.evictions);
    }
    let b = wl(&r, "default", "b");
    assert_eq!(
        warnings(b),
        [(
            0.0,
            "WaitingForPreemptedWorkloads",
            "Workload has overlapping preemption targets with another workload, but will fit after these preemptions complete"
        )]
    );
    let c = wl(&r, "default", "c");
    assert_eq!(status(c), (None, "Pending", Some("inadmissible")));
    assert!(c.evictions.is_empty(), "{:?}", c.evictions);
    assert_eq!(
        warnings(c),
        [
            (
                0.0,
                "WaitingForQuota",
                "Workload no longer fits after processing another workload"
            ),
            (
                0.0,
                "WaitingForQuota",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor f0, 1 more needed"
            )
        ]
    );
}

#[test]
fn without_the_gate_an_overlapping_entry_is_skipped_and_reclaims_later() {
    // The answer before Kueue 0.20: b is skipped, c borrows the room a's preemption makes,
    // and b reclaims it.
    let r = run_with_recompute(false);
    let b = wl(&r, "default", "b");
    assert_eq!(status(b), (Some(0.0), "Running", None));
    assert_eq!(
        warnings(b)[0],
        (
            0.0,
            "WaitingForQuota",
            "Workload has overlapping preemption targets with another workload"
        )
    );
    let c = wl(&r, "default", "c");
    assert_eq!(status(c), (Some(0.0), "Pending", Some("inadmissible")));
    assert_eq!(
        evictions(c),
        [(0.0, Some("InCohortReclamation"), Some("default/b"))]
    );
}

/// `scenarios/kueue/fair-sharing-tied-cohorts` as written, or with its Cohorts team-a and
/// team-b declared the other way round.
fn run_tied_cohorts(swapped: bool) -> SimulationResult {
    let path = crate::util::scenarios_dir().join("kueue/fair-sharing-tied-cohorts/scenario.yaml");
    let text = std::fs::read_to_string(path).expect("readable");
    let text = if swapped {
        let docs: Vec<&str> = text.split("\n---\n").collect();
        let at = |name: &str| {
            docs.iter()
                .position(|d| {
                    d.contains("kind: Cohort\n") && d.contains(&format!("name: {name}}}"))
                })
                .unwrap_or_else(|| panic!("no Cohort {name}"))
        };
        let (a, b) = (at("team-a"), at("team-b"));
        let mut docs = docs.clone();
        docs.swap(a, b);
        docs.join("\n---\n")
    } else {
        text
    };
    let loaded = load_text("scenario.yaml", &text).expect("loads");
    let outcome = Simulation::new(&loaded.world).run();
    result(&loaded.world, &outcome)
}

#[test]
fn tied_child_cohorts_give_the_same_victim_in_either_declaration_order() {
    // team-a and team-b borrow 3 cpu each; small, within its nominal quota in the root's own
    // ClusterQueue, reclaims from the tied cohort with the greater name, team-b.
    for swapped in [false, true] {
        let r = run_tied_cohorts(swapped);
        assert_eq!(
            evictions(wl(&r, "default", "b-big")),
            [(10.0, Some("InCohortReclamation"), Some("default/small"))],
            "swapped: {swapped}"
        );
        assert_eq!(
            status(wl(&r, "default", "b-big")),
            (Some(0.0), "Pending", Some("inadmissible")),
            "swapped: {swapped}"
        );
        assert_eq!(
            status(wl(&r, "default", "small")),
            (Some(10.0), "Running", None),
            "swapped: {swapped}"
        );
        for name in ["a-big", "shared-1"] {
            let w = wl(&r, "default", name);
            assert_eq!(
                status(w),
                (Some(0.0), "Running", None),
                "{name}, swapped: {swapped}"
            );
            assert!(w.evictions.is_empty(), "{name}, swapped: {swapped}");
        }
    }
}
