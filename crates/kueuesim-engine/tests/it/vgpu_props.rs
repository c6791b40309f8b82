//! Volcano vGPU devices under random binds and releases (proptest), for every deviceshare
//! policy: no device over its memory, 100 % of its cores or its share count, a pod's devices
//! each holding its whole per-device request (never split), and everything given back on
//! release; and Volcano jobs with vGPU pods in whole runs, checked after every event.

use kueuesim_engine::Simulation;
use kueuesim_engine::placement::vgpu_book::{VgpuBook, VgpuClaim};
use kueuesim_model::gpu::{VGPU_CORES, VGPU_MEMORY, VGPU_NUMBER, VgpuMemory, VgpuRequest};
use kueuesim_model::{
    DeviceShareArgs, Labels, Node, NodeId, ResourceList, ResourceQuota, VgpuPolicy, World,
};
use proptest::prelude::*;

fn policy() -> impl Strategy<Value = VgpuPolicy> {
    prop_oneof![
        Just(VgpuPolicy::None),
        Just(VgpuPolicy::Binpack),
        Just(VgpuPolicy::Spread),
    ]
}

fn request() -> impl Strategy<Value = VgpuRequest> {
    (
        1u32..=3,
        prop_oneof![
            (0u8..=100).prop_map(VgpuMemory::Percent),
            (1u32..30_000).prop_map(VgpuMemory::Mib),
        ],
        prop_oneof![Just(0u8), Just(100u8), 1u8..100],
    )
        .prop_map(|(number, memory, cores)| VgpuRequest {
            number,
            memory,
            cores,
        })
}

/// Adds `vgpu-*` resources and, per node, (GPUs, MiB per GPU, shares per GPU).
fn add_vgpu_nodes(w: &mut World, nodes: &[(i64, i64, i64)]) {
    let cpu = w.resources.intern("cpu");
    let number = w.resources.intern(VGPU_NUMBER);
    let memory = w.resources.intern(VGPU_MEMORY);
    let cores = w.resources.intern(VGPU_CORES);
    for &(gpus, mib, split) in nodes {
        let mut alloc = vec![0; w.resources.len()];
        alloc[cpu.index()] = 64_000;
        alloc[number.index()] = gpus * split;
        alloc[memory.index()] = gpus * mib;
        alloc[cores.index()] = gpus * 100;
        let name = format!("node-{}", w.nodes.len());
        w.nodes.push(Node {
            name: name.clone(),
            labels: Labels::new(vec![("kubernetes.io/hostname".into(), name)]),
            allocatable: alloc,
            taints: vec![],
            unschedulable: false,
        });
    }
}

fn vgpu_nodes() -> impl Strategy<Value = Vec<(i64, i64, i64)>> {
    prop::collection::vec(
        (
            0i64..=4,
            prop_oneof![Just(16_000i64), Just(24_000)],
            1i64..=4,
        ),
        1..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random binds (through the deviceshare filter) and releases keep every device within
    /// its memory, cores and share count, each claim on exactly `number` devices with the
    /// request's MiB and cores on each, the book equal to the claims held, and a book whose
    /// pods all left empty again.
    #[test]
    fn vgpu_devices_stay_within_bounds(
        nodes in vgpu_nodes(),
        policy in policy(),
        ops in prop::collection::vec((any::<bool>(), request(), 0usize..8), 1..80),
    ) {
        let mut w = World::default();
        add_vgpu_nodes(&mut w, &nodes);
        w.config.volcano.deviceshare = Some(DeviceShareArgs { policy, weight: 1 });
        let mut book = VgpuBook::new(&w).expect("deviceshare vGPU is on");
        let mut held: Vec<(NodeId, VgpuClaim)> = Vec::new();
        for (bind, req, k) in ops {
            if bind || held.is_empty() {
                let node = NodeId::from_index(k % nodes.len());
                if let Ok((claim, _)) = book.fit(node, req) {
                    if book.count(node) == 0 {
                        prop_assert_eq!(claim.mask, 0);
                        continue;
                    }
                    prop_assert_eq!(claim.mask.count_ones(), req.number);
                    prop_assert_eq!(claim.cores, req.cores);
                    let (mem, ..) = book.device(node, 0);
                    prop_assert_eq!(claim.mib, req.mib_on(mem));
                    book.apply(node, claim, 1);
                    held.push((node, claim));
                }
            } else {
                let (node, claim) = held.remove(k % held.len());
                book.apply(node, claim, -1);
            }
            prop_assert_eq!(book.check(held.iter().copied()), Ok(()));
        }
        for (node, claim) in held.drain(..) {
            book.apply(node, claim, -1);
        }
        prop_assert_eq!(book.check(std::iter::empty()), Ok(()));
        for n in 0..nodes.len() {
            let node = NodeId::from_index(n);
            for i in 0..book.count(node) {
                let (_, _, mem, cores, num) = book.device(node, i);
                prop_assert_eq!((mem, cores, num), (0, 0, 0));
            }
        }
    }
}

/// A world of Volcano jobs, some with vGPU pods (their requests charged to Kueue as plain
/// resources), on nodes of 0 to 4 vGPU devices, the deviceshare plugin on.
fn arb_vgpu_world() -> impl Strategy<Value = World> {
    let wls = prop::collection::vec(
        (
            0usize..3,
            1u32..4,
            0i64..200,
            1i64..300,
            prop::option::of(request()),
        ),
        1..25,
    );
    (vgpu_nodes(), policy(), wls).prop_map(|(nodes, policy, wls)| {
        let mut w = crate::fixtures::world(&[8, 4, 6]);
        add_vgpu_nodes(&mut w, &nodes);
        let ids = [VGPU_NUMBER, VGPU_MEMORY, VGPU_CORES].map(|n| w.resources.intern(n));
        for cq in &mut w.cluster_queues {
            let rg = &mut cq.resource_groups[0];
            for r in ids {
                rg.covered.push(r);
                rg.flavors[0].resources.push(ResourceQuota {
                    resource: r,
                    nominal: 200_000,
                    borrowing_limit: None,
                    lending_limit: None,
                });
            }
        }
        for (q, pods, arrival, dur, req) in wls {
            crate::fixtures::add_workload(
                &mut w,
                crate::fixtures::Wl {
                    queue: Some(q),
                    pods,
                    gpus_per_pod: 0,
                    priority: 0,
                    arrival_s: arrival,
                    duration_s: dur,
                    scheduler: "volcano",
                },
            );
            if let Some(r) = req {
                let name = format!("wl{}", w.workloads.len() - 1);
                let wl = w.workloads.iter_mut().find(|x| x.name == name).unwrap();
                let mib = match r.memory {
                    VgpuMemory::Mib(m) => i64::from(m),
                    VgpuMemory::Percent(_) => 0,
                };
                let ps = &mut wl.pod_sets[0];
                ps.vgpu = Some(r);
                ps.requests = ResourceList::from_pairs(vec![
                    (kueuesim_model::ResourceId(0), 1000),
                    (ids[0], i64::from(r.number)),
                    (ids[1], mib),
                    (ids[2], i64::from(r.cores)),
                ]);
            }
        }
        w.config.volcano.deviceshare = Some(DeviceShareArgs { policy, weight: 2 });
        w
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Volcano jobs with vGPU pods keep the invariants after every event (the vGPU book
    /// within bounds and equal to what the bound pods' claims hold, node capacity, quota),
    /// and once every workload has left the devices hold nothing (checked by the same
    /// invariant with no claims left).
    #[test]
    fn volcano_vgpu_keeps_the_invariants_after_every_event(world in arb_vgpu_world()) {
        let mut sim = Simulation::new(&world);
        let mut steps = 0;
        while steps < 5_000 && sim.step(None) && !sim.only_futile_loops_left() {
            steps += 1;
            if let Err(e) = sim.check_invariants() {
                prop_assert!(false, "after event {steps} at {:?}: {e}", sim.now());
            }
        }
    }
}
