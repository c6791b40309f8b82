//! Synthetic worlds for the criterion benchmarks of kueuesim.

use kueuesim_model::{
    ClusterQueue, ClusterQueueId, FlavorId, FlavorQuotas, LabelSelector, Labels, LocalQueue,
    LocalQueueId, Node, PodSet, QueueRef, ResourceFlavor, ResourceGroup, ResourceId, ResourceList,
    ResourceQuota, SimDuration, SimTime, Workload, World,
};

/// Adds ClusterQueue `cq` (cpu practically unlimited, `gpus` nominal on flavor 0) and, in
/// `namespace`, its LocalQueue `lq`.
fn push_queue(
    w: &mut World,
    (cpu, gpu): (ResourceId, ResourceId),
    (cq, namespace, lq): (String, String, &str),
    gpus: i64,
    preemption: kueuesim_model::Preemption,
) {
    let quota = |resource, nominal| ResourceQuota {
        resource,
        nominal,
        borrowing_limit: None,
        lending_limit: None,
    };
    w.cluster_queues.push(ClusterQueue {
        name: cq,
        namespace_selector: Some(LabelSelector::default()),
        preemption,
        resource_groups: vec![ResourceGroup {
            covered: vec![cpu, gpu],
            flavors: vec![FlavorQuotas {
                flavor: FlavorId(0),
                resources: vec![quota(cpu, 1_000_000_000), quota(gpu, gpus)],
            }],
        }],
        ..Default::default()
    });
    w.local_queues.push(LocalQueue {
        namespace,
        name: lq.into(),
        cluster_queue: ClusterQueueId::from_index(w.cluster_queues.len() - 1),
        fair_sharing_weight_milli: 1000,
        stop_policy: Default::default(),
        afs_consumed: Vec::new(),
    });
}

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
        push_queue(
            &mut w,
            (cpu, gpu),
            (format!("cq-{i}"), format!("ns-{i}"), "q"),
            64,
            Default::default(),
        );
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
                preempt_never: false,
                spec_shape: 0,
                topology_request: None,
                topology_slice: None,
                gpu_share: None,
                vgpu: None,
                info: None,
            }],
            active: true,
            initial_admission: admitted.then(|| InitialAdmission {
                cluster_queue: ClusterQueueId::from_index(q),
                pod_sets: vec![PodSetAdmission {
                    flavors: vec![(cpu, FlavorId(0))],
                    count: 1,
                    topology: None,
                }],
                reserved_at: Some(SimTime::from_millis(-created)),
                pods_ready: false,
            }),
            last_eviction: None,
            max_execution_time: None,
            creation_blocked: None,
            suspended: false,
            requeue_state: None,
            gang: Default::default(),
            resilience: Default::default(),
            serving: None,
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

/// A 3-tier GPU cluster with Volcano HyperNodes: `zones` × 8 spines × 8 leaves × 16 nodes of
/// 8 GPUs (leaf tier 1, spine tier 2, zone tier 3), and a KAI/Kueue `Topology` over the same
/// labels (`zone`, `spine`, `leaf`).
pub fn topology_world(zones: usize) -> World {
    use kueuesim_model::{HyperNodeMember, HyperNodeSpec, Topology};
    let mut w = World::default();
    let cpu = w.resources.intern("cpu").index();
    let mem = w.resources.intern("memory").index();
    let gpu = w.resources.intern("nvidia.com/gpu").index();
    let mut hns = Vec::new();
    for z in 0..zones {
        let mut spines = Vec::new();
        for s in 0..8 {
            let spine = format!("z{z}-s{s}");
            let mut leaves = Vec::new();
            for l in 0..8 {
                let leaf = format!("{spine}-l{l}");
                let mut members = Vec::new();
                for n in 0..16 {
                    let mut alloc = vec![0; 3];
                    alloc[cpu] = 112_000;
                    alloc[mem] = 2_000 << 30;
                    alloc[gpu] = 8;
                    members.push(HyperNodeMember::Node(kueuesim_model::NodeId::from_index(
                        w.nodes.len(),
                    )));
                    w.nodes.push(Node {
                        name: format!("{leaf}-n{n:02}"),
                        labels: Labels::new(vec![
                            ("zone".into(), format!("z{z}")),
                            ("spine".into(), spine.clone()),
                            ("leaf".into(), leaf.clone()),
                        ]),
                        allocatable: alloc,
                        taints: vec![],
                        unschedulable: false,
                    });
                }
                hns.push(HyperNodeSpec {
                    name: leaf.clone(),
                    tier: 1,
                    tier_name: None,
                    members,
                });
                leaves.push(HyperNodeMember::HyperNode(leaf));
            }
            hns.push(HyperNodeSpec {
                name: spine.clone(),
                tier: 2,
                tier_name: None,
                members: leaves,
            });
            spines.push(HyperNodeMember::HyperNode(spine));
        }
        hns.push(HyperNodeSpec {
            name: format!("z{z}"),
            tier: 3,
            tier_name: None,
            members: spines,
        });
    }
    w.hypernodes = Topology::from_hypernodes(&hns, w.nodes.len()).expect("a tree");
    w.topologies = vec![Topology::from_levels(
        "cluster-topology",
        &["zone".into(), "spine".into(), "leaf".into()],
        &w.nodes,
    )];
    w
}

/// Half the GPUs busy in a random pattern that leaves some spines able to hold a 32-node
/// gang: in every other spine 80% of the nodes are full, in the rest 20% (seeded, fixed).
pub fn busy_cluster(world: &World) -> kueuesim_engine::placement::Cluster {
    let mut c = kueuesim_engine::placement::Cluster::new(world);
    let full = gang_pods(world, 1)[0].0.requests.clone();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for (i, node) in world.nodes.iter().enumerate() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let spine = i / 128;
        let busy_pct = if spine % 2 == 0 { 80 } else { 20 };
        let _ = node;
        if x % 100 < busy_pct {
            c.apply(world, kueuesim_model::NodeId::from_index(i), &full, 1);
        }
    }
    c
}

/// Releases what `placement` bound on `cluster` (its pods and any GPU-device claims), as the
/// engine does when the pods end: the cluster's free capacity is as before the placement,
/// while what it keeps from one decision to the next (KAI's per-shape task-copy counts, its
/// commit buffers) stays, as in a run's long-lived cluster.
pub fn release(
    world: &World,
    cluster: &mut kueuesim_engine::placement::Cluster,
    pods: &kueuesim_engine::placement::GangPods,
    placement: &kueuesim_engine::placement::Placement,
) {
    assert!(
        placement.vgpu.is_empty(),
        "the placement benches' worlds have no vGPU"
    );
    for &(ps, idx, claim) in &placement.claims {
        let node = placement
            .bound
            .iter()
            .find(|&&(p, i, _)| (p, i) == (ps, idx))
            .map(|&(_, _, n)| n)
            .expect("a claim belongs to a bound pod");
        cluster.apply_claim(world, node, claim, -1);
    }
    for &(ps, _, n) in &placement.bound {
        cluster.apply(world, n, &pods[ps].0.requests, -1);
    }
}

/// A gang of `pods` pods of 8 GPUs (and most of a node's cpu and memory).
pub fn gang_pods(
    world: &World,
    pods: usize,
) -> Vec<(
    kueuesim_engine::placement::PodNeeds,
    Vec<Option<kueuesim_model::NodeId>>,
)> {
    let r = |n: &str| world.resources.lookup(n).expect("resource");
    let needs = kueuesim_engine::placement::PodNeeds {
        requests: ResourceList::from_pairs(vec![
            (r("cpu"), 96_000),
            (r("memory"), 1_600 << 30),
            (r("nvidia.com/gpu"), 8),
        ]),
        node_selector: Labels::default(),
        tolerations: vec![],
    };
    vec![(needs, vec![None; pods])]
}

/// The placement benches' Volcano job: the gang of `pods` with `minMember` 32 under a hard
/// spine constraint (`highestTierAllowed: 2`).
pub fn spine_volcano_job<'a>(
    pods: &'a kueuesim_engine::placement::GangPods,
    pod_name: &'a dyn Fn(usize, usize) -> String,
    seed: u64,
) -> kueuesim_engine::placement::volcano::VolcanoJob<'a> {
    kueuesim_engine::placement::volcano::VolcanoJob {
        pods,
        min_member: 32,
        highest_tier: Some(2),
        pod_name,
        seed,
        subgroups: &[],
        min_sub_groups: &[],
        min_task_member: &[],
    }
}

/// A Volcano job without topology (the flat node search): all of `pods`, `minMember`
/// `min_member`.
pub fn flat_volcano_job<'a>(
    pods: &'a kueuesim_engine::placement::GangPods,
    pod_name: &'a dyn Fn(usize, usize) -> String,
    min_member: usize,
) -> kueuesim_engine::placement::volcano::VolcanoJob<'a> {
    kueuesim_engine::placement::volcano::VolcanoJob {
        highest_tier: None,
        min_member,
        ..spine_volcano_job(pods, pod_name, 1)
    }
}

/// The placement benches' KAI job: the gang of `pods` with `minMember` 32 under
/// `requiredTopologyLevel: spine` (level 2 of topology 0).
pub fn spine_kai_job<'a>(
    pods: &'a kueuesim_engine::placement::GangPods,
    pod_name: &'a dyn Fn(usize, usize) -> String,
) -> kueuesim_engine::placement::kai::KaiJob<'a> {
    kueuesim_engine::placement::kai::KaiJob {
        pods,
        min_member: 32,
        constraint: Some(kueuesim_engine::placement::kai::KaiConstraint {
            topology: 0,
            required: Some(2),
            preferred: None,
        }),
        job_name: "bench/pg",
        pod_name,
    }
}

/// The naive baseline: the same ascending tier search, but every candidate HyperNode is
/// dry-run by scanning every node of the cluster for each pod (membership by walking the
/// node's ancestors, then the filters, then kube's least-allocated score), with no domain
/// capacity sums to skip hopeless domains.
pub fn naive_hard_topology(
    world: &World,
    cluster: &kueuesim_engine::placement::Cluster,
    pods: &[(
        kueuesim_engine::placement::PodNeeds,
        Vec<Option<kueuesim_model::NodeId>>,
    )],
    tier_limit: i32,
) -> Option<Vec<kueuesim_model::NodeId>> {
    use kueuesim_engine::placement::{feasible, kube};
    let t = &world.hypernodes;
    for (tier, domains) in &t.by_tier {
        if *tier > tier_limit {
            break;
        }
        for &d in domains {
            let mut cap = cluster.nodes.clone();
            let mut placed = Vec::new();
            'pods: for (needs, slots) in pods {
                for _ in slots {
                    let mut best: Option<(i64, kueuesim_model::NodeId)> = None;
                    for i in 0..world.nodes.len() {
                        let n = kueuesim_model::NodeId::from_index(i);
                        let inside = t
                            .domain_of(n)
                            .is_some_and(|x| t.ancestors(x).any(|a| a == d));
                        if !inside || !feasible(world, &cap, n, needs) {
                            continue;
                        }
                        let s = kube::least_allocated(world, &cap, cluster.res, n, needs);
                        if best.is_none_or(|b| s > b.0) {
                            best = Some((s, n));
                        }
                    }
                    match best {
                        Some((_, n)) => {
                            cap.apply(n, &needs.requests, 1);
                            placed.push(n);
                        }
                        None => break 'pods,
                    }
                }
            }
            if placed.len() == pods.iter().map(|p| p.1.len()).sum::<usize>() {
                return Some(placed);
            }
        }
    }
    None
}

/// The scale benchmark world (issue 8): `topology_world(zones)` (zones × 1,024 nodes of 8
/// GPUs, 3 tiers) with 16 ClusterQueues sharing the GPUs equally (withinClusterQueue:
/// LowerPriority), and `workloads` jobs arriving as a Poisson process that offers `load` (a
/// fraction) of the cluster's GPUs: a third Volcano gangs of 8-GPU pods under one spine (hard
/// `networkTopology`, tier 2), a third KAI jobs of 1–4 pods of 1–8 GPUs, a third
/// kube-scheduler pods of 1–4 GPUs; three priorities; durations 10 minutes to 4 hours.
/// Shapes and times come from a fixed xorshift sequence, so the world is the same every run.
pub fn scale_world(zones: usize, workloads: usize, load: f64) -> World {
    use kueuesim_model::{GangSpec, NetworkTopology, Preemption, PreemptionPolicy, TierRef};
    let mut w = topology_world(zones);
    let cpu = ResourceId::from_index(0);
    let gpu = ResourceId::from_index(2);
    let total_gpus = 8 * w.nodes.len() as i64;
    let cqs = 16usize;
    w.flavors.push(ResourceFlavor {
        name: "h100".into(),
        ..Default::default()
    });
    for i in 0..cqs {
        push_queue(
            &mut w,
            (cpu, gpu),
            (format!("team-{i}"), format!("team-{i}"), "train"),
            total_gpus / cqs as i64,
            Preemption {
                within_cluster_queue: PreemptionPolicy::LowerPriority,
                ..Default::default()
            },
        );
    }
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // Mean GPU-time per job: Volcano 8 pods × 8 GPUs, KAI 2.5 × 4.5, kube 2.5; mean duration
    // 2h05m. Arrivals are spaced to offer ~90% of the GPUs.
    let mean_gpu_ms = (64.0 + 11.25 + 2.5) / 3.0 * 7_500_000.0;
    let gap_ms = mean_gpu_ms / (load * total_gpus as f64);
    let mut at_ms = 0.0f64;
    for i in 0..workloads {
        let r = next();
        // Exponential inter-arrival times (a Poisson process).
        let u = ((r >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        at_ms += -u.ln() * gap_ms;
        let at = SimTime::from_millis(at_ms as i64);
        let q = (next() % cqs as u64) as usize;
        let kind = i % 3;
        let (scheduler, count, gpus, gang) = match kind {
            0 => (
                "volcano",
                [4u32, 8, 12][(next() % 3) as usize],
                8,
                GangSpec {
                    network_topology: Some(NetworkTopology {
                        hard: true,
                        highest_tier: Some(TierRef::Number(2)),
                    }),
                    ..Default::default()
                },
            ),
            1 => (
                "kai-scheduler",
                1 + (next() % 4) as u32,
                [1i64, 2, 4, 8, 8, 4][(next() % 6) as usize],
                GangSpec::default(),
            ),
            _ => (
                "default-scheduler",
                1 + (next() % 4) as u32,
                [1i64, 2, 4, 1][(next() % 4) as usize],
                GangSpec::default(),
            ),
        };
        let minutes = [10i64, 30, 60, 120, 240, 290][(next() % 6) as usize];
        w.workloads.push(Workload {
            namespace: format!("team-{q}"),
            name: format!("job-{i}"),
            kind: "Workload".into(),
            owner: None,
            uid: format!("{i:08}"),
            queue: QueueRef::Local(LocalQueueId::from_index(q)),
            queue_name: Some("train".into()),
            priority_class: None,
            priority: [0, 100, 1000][(next() % 3) as usize],
            scheduler_name: scheduler.into(),
            created_at: at,
            arrival: at,
            duration: Some(SimDuration::from_secs(minutes * 60)),
            pod_sets: vec![PodSet {
                name: "main".into(),
                count,
                min_count: None,
                requests: ResourceList::from_pairs(vec![(cpu, 8000 * gpus), (gpu, gpus)]),
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
            gang: gang.into(),
            resilience: Default::default(),
            serving: None,
        });
    }
    w
}

/// Philly's overload in miniature: `synthetic_world`'s `cqs` ClusterQueues (64 GPUs each) in
/// one cohort that may lend everything, with reclaimWithinCohort Any and priority preemption
/// within each ClusterQueue, under the default waitForPodsReady, offered about five times
/// their quota (`workloads` jobs, one a second, 10 minutes each). Thousands wait at once, and
/// every release requeues the cohort's parked workloads (`QueueInadmissibleWorkloads`).
pub fn overloaded_world(cqs: usize, workloads: usize) -> World {
    use kueuesim_model::{Cohort, CohortId, Preemption, PreemptionPolicy};
    let mut w = synthetic_world(cqs, 0, workloads);
    w.cohorts.push(Cohort {
        name: "all".into(),
        fair_sharing_weight_milli: 1000,
        ..Default::default()
    });
    for cq in &mut w.cluster_queues {
        cq.cohort = Some(CohortId::from_index(0));
        cq.preemption = Preemption {
            within_cluster_queue: PreemptionPolicy::LowerPriority,
            reclaim_within_cohort: PreemptionPolicy::Any,
            ..cq.preemption
        };
    }
    w
}

/// The scenario of the queue-count measurements (docs/performance.md, "Cost against the
/// number of queues" and "The scale table"), the same text `scripts/scale-queues.sh` writes:
/// `workloads` one-GPU jobs (durations uniform from 30 to 90 minutes, a Poisson arrival
/// rate offering `load_percent` % of the GPUs) drawn uniformly over `local_queues`
/// LocalQueues, each in its own namespace, which belong to `cluster_queues` ClusterQueues
/// (LocalQueue i to ClusterQueue i mod `cluster_queues`) in one cohort, each with its share
/// of the GPUs (rounded up) as nominal quota, over `nodes` nodes of 8 GPUs placed by
/// kube-scheduler.
pub fn queues_yaml(
    workloads: usize,
    local_queues: usize,
    cluster_queues: usize,
    nodes: usize,
    load_percent: usize,
) -> String {
    use std::fmt::Write;
    assert!(local_queues >= cluster_queues && cluster_queues > 0);
    let gpus = nodes * 8;
    let quota = gpus.div_ceil(cluster_queues);
    let rate = (gpus * load_percent / 100).max(1);
    let mut y = format!(
        "# scripts/scale-queues.sh {workloads} {local_queues} {cluster_queues} {nodes} {load_percent}
apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata:
  name: scale-queues
spec:
  seed: 1
  startTime: \"2026-01-01T00:00:00Z\"
---
apiVersion: kueuesim.io/v1alpha1
kind: NodePool
metadata:
  name: h100
spec:
  namePrefix: gpu
  levels:
  - nodeLabel: topology.kueuesim.io/rack
    count: 1
  nodesPerDomain: {nodes}
  template:
    allocatable:
      cpu: \"112\"
      memory: 2000Gi
      nvidia.com/gpu: \"8\"
      pods: \"110\"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: h100
"
    );
    for c in 0..cluster_queues {
        let _ = writeln!(
            y,
            "---\n{{apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {{name: cq-{c:05}}}, spec: {{cohortName: org, namespaceSelector: {{}}, resourceGroups: [{{coveredResources: [nvidia.com/gpu], flavors: [{{name: h100, resources: [{{name: nvidia.com/gpu, nominalQuota: {quota}}}]}}]}}]}}}}"
        );
    }
    for l in 0..local_queues {
        let _ = writeln!(
            y,
            "---\n{{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {{name: lq, namespace: ns-{l:05}}}, spec: {{clusterQueue: cq-{:05}}}}}",
            l % cluster_queues
        );
    }
    let _ = write!(
        y,
        "---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata:
  name: jobs
spec:
  count: {workloads}
  arrival: {{rate: {rate}/h}}
  requests:
    nvidia.com/gpu: {{fixed: 1}}
  duration: {{uniform: {{min: 30m, max: 90m}}}}
  queues:
"
    );
    for l in 0..local_queues {
        let _ = writeln!(y, "  - {{name: lq, namespace: ns-{l:05}}}");
    }
    y
}

#[cfg(test)]
mod tests {
    /// The bench's scenario is the one `scripts/scale-queues.sh` writes for the CLI's
    /// measurements, byte for byte.
    #[test]
    fn queues_yaml_is_the_scripts_scenario() {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/scale-queues.sh");
        for args in [[20, 7, 3, 2, 80], [5, 1, 1, 1, 150]] {
            let out = std::process::Command::new("bash")
                .arg(script)
                .args(args.map(|a| a.to_string()))
                .output()
                .expect("bash runs the script");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let [w, l, c, n, p] = args;
            assert_eq!(
                String::from_utf8(out.stdout).expect("utf-8"),
                super::queues_yaml(w, l, c, n, p),
                "{args:?}"
            );
        }
    }
}
