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
            }],
            active: true,
            initial_admission: None,
            last_eviction: None,
            max_execution_time: None,
            job_uid: None,
            creation_blocked: None,
        });
    }
    w
}
