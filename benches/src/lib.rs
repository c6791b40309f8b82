//! Synthetic worlds for the criterion benchmarks of kueuesim.

use kueuesim_model::{
    ClusterQueue, ClusterQueueId, FlavorId, FlavorQuotas, LabelSelector, Labels, LocalQueue,
    LocalQueueId, Node, PodSet, QueueRef, ResourceFlavor, ResourceGroup, ResourceList,
    ResourceQuota, SimDuration, SimTime, Workload, World,
};

/// A world of `cqs` ClusterQueues (64 GPUs nominal each), `nodes` 8-GPU nodes (0: quota-only)
/// and `workloads` jobs of 1–8 GPUs arriving one per second round-robin over the queues, each
/// running 10 minutes. Deterministic: shapes cycle through fixed patterns.
pub fn synthetic_world(cqs: usize, nodes: usize, workloads: usize) -> World {
    let mut w = World::default();
    let cpu = w.resources.intern("cpu");
    let gpu = w.resources.intern("nvidia.com/gpu");
    w.flavors.push(ResourceFlavor {
        name: "default".into(),
        ..Default::default()
    });
    for i in 0..cqs {
        w.cluster_queues.push(ClusterQueue {
            name: format!("cq-{i}"),
            namespace_selector: Some(LabelSelector::default()),
            resource_groups: vec![ResourceGroup {
                covered: vec![cpu, gpu],
                flavors: vec![FlavorQuotas {
                    flavor: FlavorId(0),
                    resources: vec![
                        ResourceQuota {
                            resource: cpu,
                            nominal: 1_000_000_000,
                            borrowing_limit: None,
                            lending_limit: None,
                        },
                        ResourceQuota {
                            resource: gpu,
                            nominal: 64,
                            borrowing_limit: None,
                            lending_limit: None,
                        },
                    ],
                }],
            }],
            ..Default::default()
        });
        w.local_queues.push(LocalQueue {
            namespace: format!("ns-{i}"),
            name: "q".into(),
            cluster_queue: ClusterQueueId::from_index(i),
            fair_sharing_weight_milli: 1000,
            stop_policy: Default::default(),
            afs_consumed: Vec::new(),
        });
    }
    for i in 0..nodes {
        w.nodes.push(Node {
            name: format!("node-{i}"),
            labels: Labels::new(vec![("kubernetes.io/hostname".into(), format!("node-{i}"))]),
            allocatable: vec![128_000, 8],
            taints: vec![],
            unschedulable: false,
        });
    }
    for i in 0..workloads {
        let q = i % cqs;
        let gpus = [1, 2, 4, 8][i % 4];
        let at = SimTime::from_secs(i as i64);
        w.workloads.push(Workload {
            namespace: format!("ns-{q}"),
            name: format!("wl-{i}"),
            kind: "Workload".into(),
            owner: None,
            uid: format!("{i:08}"),
            queue: QueueRef::Local(LocalQueueId::from_index(q)),
            queue_name: Some("q".into()),
            priority_class: None,
            priority: (i % 3) as i32 * 100,
            scheduler_name: if i % 2 == 0 {
                "default-scheduler".into()
            } else {
                "kai-scheduler".into()
            },
            created_at: at,
            arrival: at,
            duration: Some(SimDuration::from_secs(600)),
            pod_sets: vec![PodSet {
                name: "main".into(),
                count: 1 + (i % 2) as u32,
                min_count: None,
                requests: ResourceList::from_pairs(vec![(cpu, 4000), (gpu, gpus)]),
                node_selector: Labels::default(),
                tolerations: vec![],
                priority_class_name: None,
                spec_shape: 0,
            }],
            active: true,
            initial_admission: None,
            last_eviction: None,
            max_execution_time: None,
            job_uid: None,
            creation_blocked: None,
            gang: Default::default(),
        });
    }
    w
}

/// The admission-cycle benchmark world: `cohorts` cohorts of `cqs_per_cohort` ClusterQueues
/// (cpu nominal 20, borrowingLimit 100, like Kueue's performance harness), and
/// `pending_per_cq` pending 1–5 cpu workloads per ClusterQueue, all at time 0. With
/// `contended`, every ClusterQueue's nominal quota is already held by four 5-cpu workloads of
/// priority 0 and the pending ones have priority 100, so heads need preemption
/// (withinClusterQueue: LowerPriority, reclaimWithinCohort: Any).
pub fn cycle_world(
    cohorts: usize,
    cqs_per_cohort: usize,
    pending_per_cq: usize,
    contended: bool,
) -> World {
    use kueuesim_model::{
        Cohort, CohortId, InitialAdmission, PodSetAdmission, Preemption, PreemptionPolicy,
    };
    let mut w = World::default();
    let cpu = w.resources.intern("cpu");
    w.flavors.push(ResourceFlavor {
        name: "default".into(),
        ..Default::default()
    });
    for c in 0..cohorts {
        w.cohorts.push(Cohort {
            name: format!("cohort-{c}"),
            fair_sharing_weight_milli: 1000,
            declared: false,
            ..Default::default()
        });
    }
    let n_cqs = cohorts * cqs_per_cohort;
    for i in 0..n_cqs {
        w.cluster_queues.push(ClusterQueue {
            name: format!("cq-{i}"),
            cohort: Some(CohortId::from_index(i / cqs_per_cohort)),
            namespace_selector: Some(LabelSelector::default()),
            preemption: Preemption {
                within_cluster_queue: PreemptionPolicy::LowerPriority,
                reclaim_within_cohort: PreemptionPolicy::Any,
                ..Default::default()
            },
            resource_groups: vec![ResourceGroup {
                covered: vec![cpu],
                flavors: vec![FlavorQuotas {
                    flavor: FlavorId(0),
                    resources: vec![ResourceQuota {
                        resource: cpu,
                        nominal: 20_000,
                        borrowing_limit: Some(100_000),
                        lending_limit: None,
                    }],
                }],
            }],
            fair_sharing_weight_milli: 1000,
            ..Default::default()
        });
        w.local_queues.push(LocalQueue {
            namespace: format!("ns-{i}"),
            name: "q".into(),
            cluster_queue: ClusterQueueId::from_index(i),
            fair_sharing_weight_milli: 1000,
            stop_policy: Default::default(),
            afs_consumed: Vec::new(),
        });
    }
    let add = |w: &mut World, q: usize, cpus: i64, priority: i32, created: i64, admitted: bool| {
        let n = w.workloads.len();
        w.workloads.push(Workload {
            namespace: format!("ns-{q}"),
            name: format!("wl-{n}"),
            kind: "Workload".into(),
            owner: None,
            uid: format!("{n:08}"),
            job_uid: None,
            queue: QueueRef::Local(LocalQueueId::from_index(q)),
            queue_name: Some("q".into()),
            priority_class: None,
            priority,
            scheduler_name: "default-scheduler".into(),
            created_at: SimTime::from_millis(-created),
            arrival: SimTime::ZERO,
            duration: Some(SimDuration::from_secs(600)),
            pod_sets: vec![PodSet {
                name: "main".into(),
                count: 1,
                min_count: None,
                requests: ResourceList::from_pairs(vec![(cpu, cpus * 1000)]),
                node_selector: Labels::default(),
                tolerations: vec![],
                priority_class_name: None,
                spec_shape: 0,
            }],
            active: true,
            initial_admission: admitted.then(|| InitialAdmission {
                cluster_queue: ClusterQueueId::from_index(q),
                pod_sets: vec![PodSetAdmission {
                    flavors: vec![(cpu, FlavorId(0))],
                    count: 1,
                }],
                reserved_at: Some(SimTime::from_millis(-created)),
            }),
            last_eviction: None,
            max_execution_time: None,
            creation_blocked: None,
            gang: Default::default(),
        });
    };
    for q in 0..n_cqs {
        if contended {
            for k in 0..4 {
                add(&mut w, q, 5, 0, 1_000_000 + k, true);
            }
        }
        for k in 0..pending_per_cq {
            let cpus = 1 + ((q + k) % 5) as i64;
            add(
                &mut w,
                q,
                cpus,
                if contended { 100 } else { 0 },
                k as i64,
                false,
            );
        }
    }
    w
}
