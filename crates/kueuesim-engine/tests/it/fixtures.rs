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
            afs_consumed: Vec::new(),
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
            preempt_never: false,
            spec_shape: 0,
            topology_request: None,
            topology_slice: None,
            gpu_share: None,
            vgpu: None,
            info: None,
        }],
        active: true,
        initial_admission: None,
        last_eviction: None,
        max_execution_time: None,
        job_uid: None,
        creation_blocked: None,
        suspended: false,
        requeue_state: None,
        gang: Default::default(),
        resilience: Default::default(),
        serving: None,
    });
    // The engine expects workloads in arrival order.
    w.workloads.sort_by_key(|x| x.arrival);
}

/// A ClusterQueue of `cohort_world`.
pub(crate) struct CqSpec {
    pub(crate) cohort: Option<usize>,
    pub(crate) nominal: i64,
    pub(crate) borrowing_limit: Option<i64>,
    pub(crate) lending_limit: Option<i64>,
    pub(crate) strict: bool,
    pub(crate) preemption: kueuesim_model::Preemption,
}

/// A world like `world`, with cohorts (`cohorts[i]` = (parent, own GPU quota); parents must
/// come earlier so there is no cycle) and ClusterQueues in them.
pub(crate) fn cohort_world(cohorts: &[(Option<usize>, i64)], cqs: &[CqSpec]) -> World {
    let mut w = world(&cqs.iter().map(|c| c.nominal).collect::<Vec<_>>());
    let gpu = kueuesim_model::ResourceId(1);
    for (i, &(parent, quota)) in cohorts.iter().enumerate() {
        w.cohorts.push(kueuesim_model::Cohort {
            name: format!("co{i}"),
            parent: parent.map(kueuesim_model::CohortId::from_index),
            resource_groups: vec![ResourceGroup {
                covered: vec![gpu],
                flavors: vec![FlavorQuotas {
                    flavor: FlavorId(0),
                    resources: vec![ResourceQuota {
                        resource: gpu,
                        nominal: quota,
                        borrowing_limit: None,
                        lending_limit: None,
                    }],
                }],
            }],
            fair_sharing_weight_milli: 1000,
            declared: true,
        });
    }
    for (cq, spec) in w.cluster_queues.iter_mut().zip(cqs) {
        cq.cohort = spec.cohort.map(kueuesim_model::CohortId::from_index);
        if spec.strict {
            cq.queueing_strategy = kueuesim_model::QueueingStrategy::StrictFIFO;
        }
        cq.preemption = spec.preemption;
        let q = &mut cq.resource_groups[0].flavors[0].resources[1];
        if spec.cohort.is_some() {
            q.borrowing_limit = spec.borrowing_limit;
            q.lending_limit = spec.lending_limit.map(|l| l.min(spec.nominal));
        }
    }
    w
}
