//! GPU devices under random binds and releases (proptest), for every shared-GPU policy: no
//! device over 1000 milli or below 0, a share never split across devices, whole-GPU pods only
//! on devices that were wholly free, and everything given back on release; and KAI's GPU
//! sharing in whole runs, checked after every event.

use kueuesim_engine::Simulation;
use kueuesim_engine::placement::devices::Claim;
use kueuesim_engine::placement::{Cluster, PodNeeds, kube};
use kueuesim_model::gpu::{
    GPU_MILLI, GpuDemand, GpuPolicy, GpuShare, NODE_GPU_MEMORY_LABEL, target_workload,
};
use kueuesim_model::{Node, NodeId, ResourceList, World};
use proptest::prelude::*;

/// One step: bind a pod (cpu, GPU milli: below 1000 a share, else whole GPUs) or release the
/// k-th bound pod.
#[derive(Clone, Debug)]
enum Op {
    Bind(i64, i64),
    Release(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0i64..8, prop_oneof![1i64..1000, (1i64..=4).prop_map(|g| g * 1000)])
            .prop_map(|(c, m)| Op::Bind(c * 1000, m)),
        1 => (0usize..64).prop_map(Op::Release),
    ]
}

fn world(gpus: &[i64], policy: GpuPolicy) -> World {
    let mut w = World::default();
    let cpu = w.resources.intern("cpu");
    let milli = w.resources.intern(GPU_MILLI);
    for (i, &g) in gpus.iter().enumerate() {
        let mut alloc = vec![0; w.resources.len()];
        alloc[cpu.index()] = 16_000;
        alloc[milli.index()] = g * 1000;
        w.nodes.push(Node {
            name: format!("n{i}"),
            labels: Default::default(),
            allocatable: alloc,
            taints: vec![],
            unschedulable: false,
        });
    }
    w.config.gpu.devices = true;
    w.config.gpu.policy = policy;
    w.config.gpu.target = target_workload([
        (1000, Some(GpuDemand::Share(500))),
        (2000, Some(GpuDemand::Whole(1))),
        (0, None),
        (4000, Some(GpuDemand::Share(250))),
    ]);
    w
}

proptest! {
    #[test]
    fn devices_hold_their_invariants(
        gpus in prop::collection::vec(0i64..=8, 1..6),
        policy in prop::sample::select(GpuPolicy::NAMES.map(|(_, p)| p).to_vec()),
        ops in prop::collection::vec(op(), 1..60),
        seed in 0u64..1000,
    ) {
        let w = world(&gpus, policy);
        let cpu = w.resources.lookup("cpu").unwrap();
        let milli = w.resources.lookup(GPU_MILLI).unwrap();
        let mut cluster = Cluster::new(&w);
        let mut bound: Vec<(NodeId, ResourceList, Option<Claim>)> = Vec::new();
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Bind(c, m) => {
                    let requests = ResourceList::from_pairs(vec![(cpu, c), (milli, m)]);
                    let pods = vec![(
                        PodNeeds {
                            requests: requests.clone(),
                            node_selector: Default::default(),
                            tolerations: vec![],
                        },
                        vec![None],
                    )];
                    let before: Vec<Vec<u16>> = (0..gpus.len())
                        .map(|n| cluster.devices.as_ref().unwrap().book.free(NodeId::from_index(n)).to_vec())
                        .collect();
                    let out = kube::place(&w, &mut cluster, &pods, seed ^ step as u64);
                    let Some(&(_, _, node)) = out.bound.first() else {
                        prop_assert!(out.unplaced.is_some());
                        continue;
                    };
                    prop_assert_eq!(out.claims.len(), 1);
                    let claim = out.claims[0].2;
                    let free = &before[node.index()];
                    if m < 1000 {
                        // A share: one device, which had room for it.
                        prop_assert_eq!(claim.mask.count_ones(), 1);
                        prop_assert_eq!(i64::from(claim.milli), m);
                        let d = claim.mask.trailing_zeros() as usize;
                        prop_assert!(i64::from(free[d]) >= m);
                    } else {
                        // Whole GPUs: that many devices, each wholly free before.
                        prop_assert_eq!(i64::from(claim.mask.count_ones()), m / 1000);
                        prop_assert_eq!(claim.milli, 1000);
                        for (d, &f) in free.iter().enumerate() {
                            if claim.mask >> d & 1 == 1 {
                                prop_assert_eq!(f, 1000);
                            }
                        }
                    }
                    bound.push((node, requests, Some(claim)));
                }
                Op::Release(k) => {
                    if bound.is_empty() {
                        continue;
                    }
                    let (node, requests, claim) = bound.remove(k % bound.len());
                    cluster.apply(&w, node, &requests, -1);
                    if let Some(c) = claim {
                        cluster.devices.as_mut().unwrap().book.apply(node, c, -1);
                    }
                }
            }
            let book = &cluster.devices.as_ref().unwrap().book;
            let claims = bound.iter().filter_map(|(n, _, c)| c.map(|c| (*n, c)));
            prop_assert_eq!(book.check(claims), Ok(()));
            // The node-level milli-GPUs agree with the devices.
            for n in 0..gpus.len() {
                let id = NodeId::from_index(n);
                let sum: i64 = book.free(id).iter().map(|&f| i64::from(f)).sum();
                prop_assert_eq!(sum, cluster.nodes.free(id, milli.index()));
            }
        }
        // Conservation: everything released, every device is whole again.
        for (node, requests, claim) in bound.drain(..) {
            cluster.apply(&w, node, &requests, -1);
            if let Some(c) = claim {
                cluster.devices.as_mut().unwrap().book.apply(node, c, -1);
            }
        }
        let book = &cluster.devices.as_ref().unwrap().book;
        for n in 0..gpus.len() {
            prop_assert!(book.free(NodeId::from_index(n)).iter().all(|&f| f == 1000));
        }
    }
}

/// A world of KAI, Volcano and kube-scheduler workloads on nodes of 0 to 4 GPUs (some with
/// `nvidia.com/gpu.memory`), GPU devices on, with some KAI workloads asking GPU shares
/// (`gpu-fraction` or `gpu-memory`, charged to Kueue as `kueuesim.io/gpu-milli`).
fn arb_sharing_world() -> impl Strategy<Value = World> {
    let nodes = prop::collection::vec((0i64..=4, prop::option::of(1i64..=4)), 1..5);
    let wls = prop::collection::vec(
        (
            0usize..3,
            1u32..4,
            0i64..3,
            0i64..200,
            1i64..300,
            0usize..3,
            prop::option::of(prop_oneof![
                (1u16..1000).prop_map(GpuShare::Fraction),
                (1i64..50_000).prop_map(GpuShare::Memory),
            ]),
        ),
        1..25,
    );
    (nodes, wls).prop_map(|(nodes, wls)| {
        let mut w = crate::fixtures::world(&[8, 4, 6]);
        let milli = w.resources.intern(GPU_MILLI);
        for cq in &mut w.cluster_queues {
            let rg = &mut cq.resource_groups[0];
            rg.covered.push(milli);
            rg.flavors[0].resources.push(kueuesim_model::ResourceQuota {
                resource: milli,
                nominal: 3000,
                borrowing_limit: None,
                lending_limit: None,
            });
        }
        for (g, mem) in nodes {
            crate::fixtures::add_node(&mut w, g);
            if let Some(m) = mem {
                let n = w.nodes.last_mut().unwrap();
                let mut labels: Vec<(String, String)> = n
                    .labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                labels.push((NODE_GPU_MEMORY_LABEL.into(), (m * 10_000).to_string()));
                n.labels = kueuesim_model::Labels::new(labels);
            }
        }
        for (q, pods, gpus, arrival, dur, sched, share) in wls {
            let scheduler = ["default-scheduler", "kai-scheduler", "volcano"][sched];
            crate::fixtures::add_workload(
                &mut w,
                crate::fixtures::Wl {
                    queue: Some(q),
                    pods,
                    gpus_per_pod: gpus,
                    priority: 0,
                    arrival_s: arrival,
                    duration_s: dur,
                    scheduler,
                },
            );
            if let (Some(s), "kai-scheduler") = (share, scheduler) {
                // `add_workload` keeps the workloads sorted by arrival: find this one.
                let name = format!("wl{}", w.workloads.len() - 1);
                let wl = w.workloads.iter_mut().find(|x| x.name == name).unwrap();
                let charge = i64::from(s.milli_on(20_000).unwrap_or(1000));
                let ps = &mut wl.pod_sets[0];
                ps.gpu_share = Some(s);
                ps.requests = ResourceList::from_pairs(vec![
                    (kueuesim_model::ResourceId(0), 1000),
                    (milli, charge),
                ]);
            }
        }
        w.config.gpu.devices = true;
        w
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// KAI's GPU sharing keeps the devices' invariants after every event: no device over 1000
    /// milli or below 0, a share on one device, each device's use what the bound pods' claims
    /// hold, a node's GPUs used by its pods plus one reservation pod per shared device, and
    /// everything given back when the workloads leave.
    #[test]
    fn kai_shares_keep_the_invariants_after_every_event(world in arb_sharing_world()) {
        let mut sim = Simulation::new(&world);
        let mut steps = 0;
        while steps < 5_000 && sim.step(None) && !sim.only_futile_loops_left() {
            steps += 1;
            if let Err(e) = sim.check_invariants() {
                prop_assert!(false, "after event {steps} at {:?}: {e}", sim.now());
            }
        }
        // Conservation: once every workload has left, the devices are whole again.
        if !sim.step(None) {
            let f = sim.gpu_sharing_figures().expect("devices are on");
            prop_assert_eq!(f.milli_allocated, 0);
            prop_assert_eq!(f.gpus_allocated, 0);
        }
    }
}
