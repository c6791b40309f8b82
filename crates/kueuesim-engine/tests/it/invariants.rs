//! Invariants that hold after every event of any run (DESIGN.md §6).

use kueuesim_engine::{Simulation, WorkloadState};
use kueuesim_model::{QueueingStrategy, WorkloadId};
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No ClusterQueue above its nominal quota, no node above its allocatable, gangs
    /// all-or-nothing, usage consistent with the admitted workloads: after every event.
    #[test]
    fn invariants_hold_after_every_event(world in arb_world()) {
        let mut sim = Simulation::new(&world);
        let mut steps = 0;
        while sim.step(None) {
            steps += 1;
            prop_assert!(steps < 100_000, "run does not terminate");
            if let Err(e) = sim.check_invariants() {
                prop_assert!(false, "after event {steps} at {:?}: {e}", sim.now());
            }
        }
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
}
