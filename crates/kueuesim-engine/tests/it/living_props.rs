//! A living cluster under random Timelines and failures (proptest): after every event no pod
//! is on a removed or failed node, a closed node takes no pod, quota usage equals what the
//! admitted workloads hold, every lost pod is replaced (or waiting for its scheduler) or its
//! job failed, gangs keep their pods all or none but while replacing; runs are deterministic.

use kueuesim_engine::outcome::Stopped;
use kueuesim_engine::{Simulation, WorkloadState};
use kueuesim_model::{
    Change, DurationDist, FailureConfig, GpuFailures, NodeFailures, NodeId, NodeOp, OnPodLoss,
    Resilience, SimDuration, SimTime, World,
};
use proptest::prelude::*;

use crate::fixtures::{Wl, add_node, add_workload, world};

/// A job controller's reaction, drawn from every kind.
fn arb_reaction() -> impl Strategy<Value = OnPodLoss> {
    prop_oneof![
        (prop::option::of(0u32..3), any::<bool>()).prop_map(|(limit, never)| {
            OnPodLoss::Replace {
                backoff_limit: limit,
                never_restarted: u32::from(never),
            }
        }),
        (0u32..2, 0u32..3).prop_map(|(backoff_limit, max_restarts)| OnPodLoss::RestartAll {
            backoff_limit,
            max_restarts,
        }),
        Just(OnPodLoss::Fail),
    ]
}

fn arb_resilience() -> impl Strategy<Value = Resilience> {
    (arb_reaction(), prop::option::of(1i64..100), 0i64..30).prop_map(|(on_pod_loss, ckpt, cost)| {
        Resilience {
            on_pod_loss,
            checkpoint_interval: ckpt.map(SimDuration::from_secs),
            restart_cost: SimDuration::from_secs(cost),
        }
    })
}

fn arb_op() -> impl Strategy<Value = NodeOp> {
    prop_oneof![
        Just(NodeOp::Cordon),
        Just(NodeOp::Uncordon),
        Just(NodeOp::Drain),
        Just(NodeOp::Remove),
    ]
}

/// A world of 1–5 nodes and up to 25 workloads of every scheduler, with a random Timeline of
/// node operations and random node and GPU failures (exponential, means of minutes).
fn arb_living_world() -> impl Strategy<Value = World> {
    let nodes = prop::collection::vec(0i64..9, 1..6);
    let wls = prop::collection::vec(
        (
            0usize..3,
            1u32..4,
            0i64..5,
            0i32..3,
            0i64..300,
            1i64..400,
            0usize..3,
            arb_resilience(),
        ),
        1..25,
    );
    let changes = prop::collection::vec(
        (0i64..600, arb_op(), prop::collection::vec(0usize..5, 1..3)),
        0..6,
    );
    let failures = (
        prop::option::of((100i64..2000, 0i64..300)),
        prop::option::of((200i64..4000, 0i64..300)),
    );
    let horizon = prop::option::of(200i64..2000);
    // Timeline changes that set or patch objects: at an offset, each ClusterQueue's GPU quota
    // (lowered below its usage or raised), whether it is in the Cohort `shared`, and that
    // Cohort's own GPU quota; and whether the last node joins only later (a NodePool added).
    let object_changes = (
        prop::collection::vec(
            (
                0i64..600,
                prop::collection::vec(0i64..24, 2),
                prop::collection::vec(any::<bool>(), 2),
                0i64..16,
            ),
            0..3,
        ),
        prop::option::of(0i64..600),
    );
    // GPUs as devices (`spec.gpuPlacement.devices`) with node operations and node failures.
    let devices = any::<bool>();
    (
        prop::collection::vec(0i64..24, 1..3),
        nodes,
        wls,
        changes,
        failures,
        horizon,
        any::<u64>(),
        (devices, object_changes),
    )
        .prop_map(
            |(quotas, nodes, wls, changes, failures, horizon, seed, (devices, object_changes))| {
                let mut w = world(&quotas);
                for g in &nodes {
                    add_node(&mut w, *g);
                }
                for (q, pods, gpus, prio, arrival, dur, sched, resilience) in wls {
                    add_workload(
                        &mut w,
                        Wl {
                            queue: if q == 2 { None } else { Some(q) },
                            pods,
                            gpus_per_pod: gpus,
                            priority: prio * 100,
                            arrival_s: arrival,
                            duration_s: dur,
                            scheduler: ["default-scheduler", "kai-scheduler", "volcano"][sched],
                        },
                    );
                    let last = w.workloads.len() - 1;
                    // `add_workload` keeps arrival order: the new one is the last of its time.
                    let i = w
                        .workloads
                        .iter()
                        .rposition(|x| x.name == format!("wl{last}"))
                        .expect("added");
                    w.workloads[i].resilience = resilience;
                }
                let n = w.nodes.len();
                let mut timeline: Vec<Change> = changes
                    .into_iter()
                    .map(|(at, op, targets)| {
                        let mut ids: Vec<NodeId> = targets
                            .into_iter()
                            .map(|t| NodeId::from_index(t % n))
                            .collect();
                        ids.sort();
                        ids.dedup();
                        Change {
                            at: SimTime::from_secs(at),
                            epoch: None,
                            updated: Vec::new(),
                            nodes: vec![(op, ids)],
                            source: "t.yaml:1:1".into(),
                        }
                    })
                    .collect();
                timeline.sort_by_key(|c| c.at);
                w.timeline = timeline;
                let all: Vec<NodeId> = (0..n).map(NodeId::from_index).collect();
                let exp = |s: i64| DurationDist::Exponential {
                    mean_ms: (s * 1000) as f64,
                };
                let mut cfg = FailureConfig::default();
                if let Some((mtbf, repair)) = failures.0 {
                    cfg.nodes.push(NodeFailures {
                        nodes: all.clone(),
                        mtbf: exp(mtbf),
                        repair: exp(repair),
                    });
                }
                // GPU failures, with GPUs as devices too.
                if let Some((mtbf, repair)) = failures.1 {
                    let with_gpus: Vec<NodeId> = all
                        .iter()
                        .copied()
                        .filter(|&x| nodes[x.index()] > 0)
                        .collect();
                    if !with_gpus.is_empty() {
                        cfg.gpus.push(GpuFailures {
                            nodes: with_gpus,
                            mtbf: exp(mtbf),
                            repair: DurationDist::Uniform {
                                min: 0,
                                max: repair * 1000,
                            },
                        });
                    }
                }
                w.config.failures = cfg;
                w.config.until = horizon.map(SimTime::from_secs);
                w.config.seed = seed;
                w.config.gpu.devices = devices;
                with_object_changes(&mut w, object_changes);
                w
            },
        )
}

/// Adds random Timeline changes of objects to `w` (complete but for them): epochs with other
/// ClusterQueue quotas and Cohort membership, and a node that joins later.
#[allow(clippy::type_complexity)]
fn with_object_changes(
    w: &mut World,
    (changes, late): (Vec<(i64, Vec<i64>, Vec<bool>, i64)>, Option<i64>),
) {
    if changes.is_empty() && late.is_none() {
        return;
    }
    w.cohorts.push(kueuesim_model::Cohort {
        name: "shared".into(),
        fair_sharing_weight_milli: 1000,
        ..Default::default()
    });
    if let Some(at) = late {
        let last = NodeId::from_index(w.nodes.len() - 1);
        w.late_nodes.push(last);
        w.timeline.push(Change {
            at: SimTime::from_secs(at),
            epoch: None,
            updated: Vec::new(),
            nodes: vec![(NodeOp::Add, vec![last])],
            source: "t.yaml:1:1".into(),
        });
    }
    let gpu = w
        .resources
        .lookup("nvidia.com/gpu")
        .expect("a GPU resource");
    let mut base = w.clone();
    base.workloads.clear();
    base.timeline.clear();
    for (k, (at, quotas, joins, cohort_quota)) in changes.into_iter().enumerate() {
        let mut e = base.clone();
        for (i, cq) in e.cluster_queues.iter_mut().enumerate() {
            for q in &mut cq.resource_groups[0].flavors[0].resources {
                if q.resource == gpu {
                    q.nominal = quotas[i % 2];
                }
            }
            cq.cohort = joins[i % 2].then_some(kueuesim_model::CohortId::from_index(0));
        }
        let mut groups = e.cluster_queues[0].resource_groups.clone();
        for q in &mut groups[0].flavors[0].resources {
            q.nominal = if q.resource == gpu { cohort_quota } else { 0 };
        }
        e.cohorts[0].resource_groups = groups;
        w.epochs.push(e);
        w.timeline.push(Change {
            at: SimTime::from_secs(at),
            epoch: Some(k),
            updated: (0..w.cluster_queues.len())
                .map(kueuesim_model::ClusterQueueId::from_index)
                .collect(),
            nodes: Vec::new(),
            source: "t.yaml:1:1".into(),
        });
    }
    w.timeline.sort_by_key(|c| c.at);
}

/// Runs `world`, checking the invariants after every event, for at most `max_steps` events.
fn check_after_every_event(world: &World, max_steps: u32) -> Result<(), TestCaseError> {
    let sim = Simulation::new(world).with_audit();
    crate::invariants::check_each_event(sim, world.config.until, max_steps)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The invariants of `Simulation::check_invariants`, a living cluster's included, after
    /// every event of random Timelines and failures.
    #[test]
    fn invariants_hold_after_every_event_of_a_living_cluster(world in arb_living_world()) {
        check_after_every_event(&world, 20_000)?;
    }

    /// A run ends (without a horizon too: failures stop once nothing else is left, or the
    /// run stops when nothing finishes for long while failures go on), every workload in one
    /// state; a finished one ran, and what it was lost and kept adds up.
    #[test]
    fn living_runs_end_and_account_for_every_workload(world in arb_living_world()) {
        let outcome = Simulation::new(&world).with_event_budget(200_000).run();
        match &outcome.stats.stopped {
            None => {}
            Some(Stopped::FailuresWithoutEnd { .. }) => prop_assert!(world.config.until.is_none()),
            other => prop_assert!(false, "{other:?}"),
        }
        let f = &outcome.stats.failures;
        prop_assert!(f.restarts + f.jobs_failed <= f.pods_lost);
        prop_assert!(f.lost_gpu_ms <= outcome.stats.lost_gpu_ms);
        prop_assert!(outcome.stats.useful_gpu_ms <= outcome.stats.gpu_busy_ms);
        for rec in outcome.workloads.iter().flatten() {
            if rec.state == WorkloadState::Finished && !rec.failed {
                prop_assert!(rec.running_at.is_some() && rec.finished_at.is_some());
            }
            if let Some(e) = rec.ettr(outcome.stats.end) {
                prop_assert!((0.0..=1.0).contains(&e), "ETTR {e}");
            }
        }
    }

    /// Same world and seed, same result.
    #[test]
    fn living_runs_are_deterministic(world in arb_living_world()) {
        let a = Simulation::new(&world).with_event_budget(200_000).run();
        let b = Simulation::new(&world).with_event_budget(200_000).run();
        prop_assert_eq!(format!("{:?}", a.workloads), format!("{:?}", b.workloads));
        prop_assert_eq!(format!("{:?}", a.stats.failures), format!("{:?}", b.stats.failures));
    }
}
