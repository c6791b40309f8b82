//! Small worlds built in code.

use kueuesim_model::{
    ClusterQueue, ClusterQueueId, FlavorId, FlavorQuotas, LabelSelector, Labels, LocalQueue,
    LocalQueueId, Node, PodSet, QueueRef, ResourceFlavor, ResourceGroup, ResourceList,
    ResourceQuota, SimDuration, SimTime, Workload, World,
};

/// A world with resources `cpu` (id 0) and `nvidia.com/gpu` (id 1), one flavor, and the given
/// ClusterQueues (GPU nominal quota each; cpu quota is ample), each with one LocalQueue `lq`
/// in namespace `ns<i>`.
pub(crate) fn world(gpu_quotas: &[i64]) -> World {
    let mut w = World::default();
    let cpu = w.resources.intern("cpu");
    let gpu = w.resources.intern("nvidia.com/gpu");
    w.flavors.push(ResourceFlavor {
        name: "default".into(),
        ..Default::default()
    });
    for (i, &q) in gpu_quotas.iter().enumerate() {
        w.cluster_queues.push(ClusterQueue {
            name: format!("cq{i}"),
            namespace_selector: Some(LabelSelector::default()),
            resource_groups: vec![ResourceGroup {
                covered: vec![cpu, gpu],
                flavors: vec![FlavorQuotas {
                    flavor: FlavorId(0),
                    resources: vec![
                        ResourceQuota {
                            resource: cpu,
                            nominal: 1_000_000,
                            borrowing_limit: None,
                            lending_limit: None,
                        },
                        ResourceQuota {
                            resource: gpu,
                            nominal: q,
                            borrowing_limit: None,
                            lending_limit: None,
                        },
                    ],
                }],
            }],
            ..Default::default()
        });
        w.local_queues.push(LocalQueue {
            namespace: format!("ns{i}"),
            name: "lq".into(),
            cluster_queue: ClusterQueueId::from_index(i),
            fair_sharing_weight_milli: 1000,
            stop_policy: Default::default(),
        });
    }
    w
}

/// Adds a node with `gpus` GPUs and ample cpu.
pub(crate) fn add_node(w: &mut World, gpus: i64) {
    let name = format!("node-{}", w.nodes.len());
    w.nodes.push(Node {
        name: name.clone(),
        labels: Labels::new(vec![("kubernetes.io/hostname".into(), name)]),
        allocatable: vec![64_000, gpus],
        taints: vec![],
        unschedulable: false,
    });
}

/// A workload description for `add_workload`.
pub(crate) struct Wl {
    pub(crate) queue: Option<usize>,
    pub(crate) pods: u32,
    pub(crate) gpus_per_pod: i64,
    pub(crate) priority: i32,
    pub(crate) arrival_s: i64,
    pub(crate) duration_s: i64,
    pub(crate) scheduler: &'static str,
}

/// Adds a workload submitted to LocalQueue `queue` (None: unmanaged; out of range: missing).
pub(crate) fn add_workload(w: &mut World, wl: Wl) {
    let i = w.workloads.len();
    let queue = match wl.queue {
        None => QueueRef::Unmanaged,
        Some(q) if q < w.local_queues.len() => QueueRef::Local(LocalQueueId::from_index(q)),
        Some(_) => QueueRef::Missing("nope".into()),
    };
    let namespace = match wl.queue {
        Some(q) if q < w.local_queues.len() => w.local_queues[q].namespace.clone(),
        _ => "other".into(),
    };
    let at = SimTime::from_secs(wl.arrival_s);
    w.workloads.push(Workload {
        namespace,
        name: format!("wl{i}"),
        kind: "Workload".into(),
        owner: None,
        uid: format!("uid-{i:04}"),
        queue,
        queue_name: Some("lq".into()),
        priority_class: None,
        priority: wl.priority,
        scheduler_name: wl.scheduler.into(),
        created_at: at,
        arrival: at,
        duration: Some(SimDuration::from_secs(wl.duration_s)),
        pod_sets: vec![PodSet {
            name: "main".into(),
            count: wl.pods,
            min_count: None,
            requests: ResourceList::from_pairs(vec![
                (kueuesim_model::ResourceId(0), 1000),
                (kueuesim_model::ResourceId(1), wl.gpus_per_pod),
            ]),
            node_selector: Labels::default(),
            tolerations: vec![],
            priority_class_name: None,
        }],
        active: true,
        initial_admission: None,
        last_eviction: None,
        max_execution_time: None,
        creation_blocked: None,
    });
    // The engine expects workloads in arrival order.
    w.workloads.sort_by_key(|x| x.arrival);
}
