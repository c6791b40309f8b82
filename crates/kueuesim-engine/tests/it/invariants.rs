//! Invariants that hold after every event of any run: no node over its allocatable, no
//! ClusterQueue over quota plus borrowing limit, gangs all-or-nothing, hard topology kept.

use kueuesim_engine::outcome::Tally;
use kueuesim_engine::{Simulation, WorkloadState};
use kueuesim_model::{QueueingStrategy, WorkloadId, World};
use proptest::prelude::*;

use crate::fixtures::{Wl, add_node, add_workload, world};

fn arb_world() -> impl Strategy<Value = kueuesim_model::World> {
    let cqs = prop::collection::vec((0i64..24, any::<bool>()), 1..4);
    let nodes = prop::collection::vec(0i64..9, 0..5);
    let wls = prop::collection::vec(
        (
            0usize..5,
            1u32..5,
            0i64..5,
            0i32..3,
            0i64..300,
            1i64..400,
            0usize..3,
        ),
        1..30,
    );
    (cqs, nodes, wls).prop_map(|(cqs, nodes, wls)| {
        let quotas: Vec<i64> = cqs.iter().map(|c| c.0).collect();
        let mut w = world(&quotas);
        for (cq, (_, strict)) in w.cluster_queues.iter_mut().zip(&cqs) {
            if *strict {
                cq.queueing_strategy = QueueingStrategy::StrictFIFO;
            }
        }
        for g in nodes {
            add_node(&mut w, g);
        }
        for (q, pods, gpus, prio, arrival, dur, sched) in wls {
            add_workload(
                &mut w,
                Wl {
                    // 4 and above: unmanaged or missing queues.
                    queue: if q == 4 { None } else { Some(q) },
                    pods,
                    gpus_per_pod: gpus,
                    priority: prio * 100,
                    arrival_s: arrival,
                    duration_s: dur,
                    scheduler: ["default-scheduler", "kai-scheduler", "volcano"][sched],
                },
            );
        }
        w
    })
}

/// Runs `world` (with the decision audit on), checking `Simulation::check_invariants` after
/// every event, for at most `max_steps` events: some worlds never settle, as in Kueue (a
/// borrowing preemptor and its victim taking turns: `scenarios/kueue/preemptor-thrash`), and
/// the invariants hold all along those too.
fn check_after_every_event(world: &World, max_steps: u32) -> Result<(), TestCaseError> {
    // UID labels are respaced on every arrival, so the check also sees every kept label
    // follow a respacing.
    let sim = Simulation::new(world).with_audit().with_uid_respacing();
    check_each_event(sim, None, max_steps)
}

/// Steps `sim` (built `with_audit`) up to `until`, checking the invariants after every event,
/// for at most `max_steps` events.
pub(crate) fn check_each_event(
    mut sim: Simulation<'_>,
    until: Option<kueuesim_model::SimTime>,
    max_steps: u32,
) -> Result<(), TestCaseError> {
    let mut steps = 0;
    while steps < max_steps && sim.step(until) && !sim.only_futile_loops_left() {
        steps += 1;
        if let Err(e) = sim.check_invariants() {
            prop_assert!(false, "after event {steps} at {:?}: {e}", sim.now());
        }
    }
    Ok(())
}

/// Whether a run of `world` without a horizon ends within `max_steps` events.
fn settles(world: &World, max_steps: u32) -> bool {
    let mut sim = Simulation::new(world);
    for _ in 0..max_steps {
        if !sim.step(None) || sim.only_futile_loops_left() {
            return true;
        }
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No ClusterQueue above its nominal quota, no node above its allocatable, gangs
    /// all-or-nothing, usage consistent with the admitted workloads: after every event.
    #[test]
    fn invariants_hold_after_every_event(world in arb_world()) {
        check_after_every_event(&world, 20_000)?;
    }

    /// Every workload is in exactly one state at the end, and a run without a horizon leaves
    /// nothing running: each workload finished or is waiting for something that never comes.
    #[test]
    fn every_workload_accounted_for(world in arb_world()) {
        let outcome = Simulation::new(&world).run();
        prop_assert_eq!(outcome.workloads.len(), world.workloads.len());
        for (i, rec) in outcome.workloads.iter().enumerate() {
            let rec = rec.as_ref().expect("without a horizon every workload arrives");
            let wl = world.workload(WorkloadId::from_index(i));
            prop_assert!(rec.state != WorkloadState::Running, "{} still running with a finite duration", wl.name);
            if rec.state == WorkloadState::Finished {
                prop_assert!(rec.finished_at.is_some() && rec.running_at.is_some());
                prop_assert!(rec.running_at <= rec.finished_at);
            }
            if rec.admitted_at.is_some() {
                prop_assert!(rec.admitted_at.unwrap() >= wl.arrival);
            }
        }
    }

    /// Same world, same result: the outcome does not depend on anything but the input.
    #[test]
    fn runs_are_deterministic(world in arb_world()) {
        let a = Simulation::new(&world).run();
        let b = Simulation::new(&world).run();
        prop_assert_eq!(format!("{:?}", a.workloads), format!("{:?}", b.workloads));
    }

    /// A lean run folds each finished workload's queue counts into its (LocalQueue,
    /// ClusterQueue) bucket and settles them at the end (`Tally::fold`, `Tally::settle`):
    /// every ClusterQueue's and LocalQueue's counts are then those of the full run's records
    /// added one at a time (`Tally::add`), as the report reads them.
    #[test]
    fn lean_tally_counts_the_queues_as_the_full_run(world in arb_world()) {
        let full = Simulation::new(&world).run();
        let mut want = Tally::new(&world);
        for (i, rec) in full.workloads.iter().enumerate() {
            let rec = rec.as_ref().expect("without a horizon every workload arrives");
            want.add(&world, world.workload(WorkloadId::from_index(i)), rec, full.stats.end);
        }
        let lean = Simulation::new(&world).lean().run();
        let end = lean.stats.end;
        let lean = lean.lean.expect("a lean run");
        prop_assert!(lean.tally.is_settled());
        let mut got = lean.tally.clone_counts();
        for (_, wl, rec) in &lean.unfinished {
            got.add(&world, wl, rec, end);
        }
        prop_assert_eq!(&got.cluster_queues, &want.cluster_queues);
        prop_assert_eq!(&got.local_queues, &want.local_queues);
        prop_assert_eq!(got.by_state, want.by_state);
    }
}

fn arb_policy() -> impl Strategy<Value = kueuesim_model::Preemption> {
    use kueuesim_model::PreemptionPolicy::*;
    (0usize..3, 0usize..3, any::<bool>(), -1i32..3).prop_map(|(w, r, b, t)| {
        kueuesim_model::Preemption {
            within_cluster_queue: [Never, LowerPriority, LowerOrNewerEqualPriority][w],
            reclaim_within_cohort: [Never, LowerPriority, Any][r],
            borrow_within_cohort: if b && r != 0 { LowerPriority } else { Never },
            borrow_max_priority_threshold: (t >= 0).then_some(t * 100),
        }
    })
}

/// Random cohort trees (parents before children, so no cycles), ClusterQueues with
/// borrowing and lending limits, preemption policies and strategies, on nodes or quota-only.
fn arb_cohort_world() -> impl Strategy<Value = World> {
    let cohorts =
        prop::collection::vec((any::<prop::sample::Index>(), any::<bool>(), 0i64..8), 0..4);
    let cqs = prop::collection::vec(
        (
            any::<prop::sample::Index>(),
            any::<bool>(),
            0i64..16,
            prop::option::of(0i64..8),
            prop::option::of(0i64..16),
            any::<bool>(),
            arb_policy(),
        ),
        1..5,
    );
    let nodes = prop::collection::vec(0i64..9, 0..4);
    let wls = prop::collection::vec(
        (
            0usize..6,
            1u32..4,
            0i64..5,
            0i32..3,
            0i64..300,
            1i64..400,
            0usize..3,
        ),
        1..30,
    );
    // waitForPodsReady: the v1beta2 default (the fixture's), off, or blockAdmission with a
    // short timeout and a pod start-up delay so that admissions queue behind unready pods.
    let pods_ready = 0u8..3;
    (cohorts, cqs, nodes, wls, pods_ready).prop_map(|(cohorts, cqs, nodes, wls, pods_ready)| {
        let cohorts: Vec<(Option<usize>, i64)> = cohorts
            .iter()
            .enumerate()
            .map(|(i, (p, has_parent, q))| ((i > 0 && *has_parent).then(|| p.index(i)), *q))
            .collect();
        let specs: Vec<crate::fixtures::CqSpec> = cqs
            .iter()
            .map(
                |(c, in_cohort, nominal, bl, ll, strict, preemption)| crate::fixtures::CqSpec {
                    cohort: (*in_cohort && !cohorts.is_empty()).then(|| c.index(cohorts.len())),
                    nominal: *nominal,
                    borrowing_limit: *bl,
                    lending_limit: *ll,
                    strict: *strict,
                    preemption: *preemption,
                },
            )
            .collect();
        let mut w = crate::fixtures::cohort_world(&cohorts, &specs);
        w.config.pod_termination = kueuesim_model::SimDuration::from_secs(20);
        match pods_ready {
            1 => w.config.kueue.wait_for_pods_ready = None,
            2 => {
                w.config.kueue.wait_for_pods_ready = Some(kueuesim_model::WaitForPodsReady {
                    timeout: kueuesim_model::SimDuration::from_secs(120),
                    block_admission: true,
                    ..Default::default()
                });
                w.config.pod_startup = kueuesim_model::SimDuration::from_secs(15);
            }
            _ => {}
        }
        for g in nodes {
            add_node(&mut w, g);
        }
        let n_lq = w.local_queues.len();
        for (q, pods, gpus, prio, arrival, dur, sched) in wls {
            add_workload(
                &mut w,
                Wl {
                    queue: if q >= n_lq { None } else { Some(q) },
                    pods,
                    gpus_per_pod: gpus,
                    priority: prio * 100,
                    arrival_s: arrival,
                    duration_s: dur,
                    scheduler: ["default-scheduler", "kai-scheduler", "volcano"][sched],
                },
            );
        }
        w
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// Over random cohort trees: no ClusterQueue above nominal + borrowingLimit, no cohort
    /// taking more than its subtree lends (lending limits) or beyond its borrowingLimit, usage
    /// consistent with the admitted workloads, StrictFIFO never admitting past a waiting head,
    /// nodes never over-committed, gangs all-or-nothing: after every event.
    #[test]
    fn cohort_invariants_hold_after_every_event(world in arb_cohort_world()) {
        check_after_every_event(&world, 20_000)?;
    }

    /// Preemption and requeueing never lose a workload: with finite durations, a run without
    /// a horizon ends with nothing running or terminating.
    #[test]
    fn cohort_runs_settle(world in arb_cohort_world()) {
        // A world that thrashes as Kueue would (preemptor-thrash) has nothing to settle.
        prop_assume!(settles(&world, 50_000));
        let step = kueuesim_model::SimDuration::from_secs(10);
        let outcome = Simulation::new(&world).with_time_series(step).run();
        for rec in outcome.workloads.iter().flatten() {
            prop_assert!(!matches!(rec.state, WorkloadState::Running | WorkloadState::Evicted), "{:?}", rec.state);
        }
        // The time series covers 0..=end at the step; quota held adds up the same by
        // ClusterQueue and by flavor.
        let series = outcome.time_series.expect("asked for");
        let end = outcome.stats.end.millis();
        prop_assert_eq!(series.samples.len() as i64, end / step.millis() + 1);
        for (i, s) in series.samples.iter().enumerate() {
            prop_assert_eq!(s.at.millis(), i as i64 * step.millis());
            prop_assert_eq!(
                s.gpu_quota_by_cq.iter().sum::<i64>(),
                s.gpu_quota_by_flavor.iter().sum::<i64>()
            );
        }

    }
}
