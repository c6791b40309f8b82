//! Placement invariants over random topologies, occupancies and gangs (proptest): a hard
//! constraint is never violated, a gang is bound whole or not at all, soft/preferred always
//! places a gang the cluster can hold, no node goes over its allocatable, the per-domain
//! free capacity always equals the sum over the domain's nodes, and KAI's kept per-domain
//! task-copy counts always equal a recount.

use kueuesim_engine::placement::{Cluster, PodNeeds, kai, topologies, volcano};
use kueuesim_model::{
    DomainId, HyperNodeMember, HyperNodeSpec, Labels, Node, NodeId, ResourceList, Topology, World,
};
use proptest::prelude::*;

/// A random three-level cluster: spines of leaves of nodes with 1–8 GPUs, as Volcano
/// HyperNodes (leaf tier 1, spine tier 2) and as a KAI Topology over `spine`/`leaf` labels;
/// then some GPUs taken.
#[derive(Debug, Clone)]
struct Case {
    /// Per spine, per leaf: each node's GPUs.
    shape: Vec<Vec<Vec<i64>>>,
    /// GPUs taken on each node (clamped to its allocatable), in node order.
    busy: Vec<i64>,
    pods: usize,
    gpus_per_pod: i64,
    hard: bool,
    tier_limit: i32,
    /// KAI: 0 = required spine, 1 = required leaf, 2 = preferred leaf, 3 = preferred spine.
    kai_mode: u8,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(
            prop::collection::vec(prop::collection::vec(1i64..=8, 1..4), 1..4),
            1..4,
        ),
        prop::collection::vec(0i64..=8, 36),
        1usize..7,
        1i64..=4,
        any::<bool>(),
        1i32..=3,
        0u8..4,
    )
        .prop_map(
            |(shape, busy, pods, gpus_per_pod, hard, tier_limit, kai_mode)| Case {
                shape,
                busy,
                pods,
                gpus_per_pod,
                hard,
                tier_limit,
                kai_mode,
            },
        )
}

fn build(c: &Case) -> (World, Cluster) {
    let mut w = World::default();
    let gpu = w.resources.intern("nvidia.com/gpu");
    let mut hns = Vec::new();
    for (s, leaves) in c.shape.iter().enumerate() {
        let mut spine_members = Vec::new();
        for (l, nodes) in leaves.iter().enumerate() {
            let leaf = format!("s{s}-l{l}");
            let mut members = Vec::new();
            for &g in nodes {
                members.push(HyperNodeMember::Node(NodeId::from_index(w.nodes.len())));
                w.nodes.push(Node {
                    name: format!("{leaf}-n{}", members.len()),
                    labels: Labels::new(vec![
                        ("spine".into(), format!("s{s}")),
                        ("leaf".into(), leaf.clone()),
                    ]),
                    allocatable: vec![g],
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
            spine_members.push(HyperNodeMember::HyperNode(leaf));
        }
        hns.push(HyperNodeSpec {
            name: format!("s{s}"),
            tier: 2,
            tier_name: None,
            members: spine_members,
        });
    }
    w.hypernodes = Topology::from_hypernodes(&hns, w.nodes.len()).expect("tree");
    w.topologies = vec![Topology::from_levels(
        "t",
        &["spine".into(), "leaf".into()],
        &w.nodes,
    )];
    let mut cluster = Cluster::new(&w);
    for (i, node) in w.nodes.iter().enumerate() {
        let take = c.busy[i % c.busy.len()].min(node.allocatable[0]);
        if take > 0 {
            let req = ResourceList::from_pairs(vec![(gpu, take)]);
            cluster.apply(&w, NodeId::from_index(i), &req, 1);
        }
    }
    (w, cluster)
}

fn gang(w: &World, c: &Case) -> Vec<(PodNeeds, Vec<Option<NodeId>>)> {
    let gpu = w.resources.lookup("nvidia.com/gpu").expect("gpu");
    vec![(
        PodNeeds {
            requests: ResourceList::from_pairs(vec![(gpu, c.gpus_per_pod)]),
            node_selector: Labels::default(),
            tolerations: vec![],
        },
        vec![None; c.pods],
    )]
}

/// How many pods of `per_pod` GPUs fit on `nodes` (exact for identical GPU-only pods).
fn capacity(cluster: &Cluster, nodes: &[NodeId], per_pod: i64) -> usize {
    nodes
        .iter()
        .map(|&n| (cluster.nodes.free(n, 0).max(0) / per_pod) as usize)
        .sum()
}

/// No node over its allocatable, and every domain's free capacity is the sum over its nodes.
fn check_books(w: &World, cluster: &Cluster) -> Result<(), TestCaseError> {
    for i in 0..w.nodes.len() {
        prop_assert!(cluster.nodes.free(NodeId::from_index(i), 0) >= 0);
    }
    for (ti, t) in topologies(w).enumerate() {
        for d in 0..t.domains.len() {
            let d = DomainId::from_index(d);
            let sum: i64 = t
                .nodes_of(d)
                .iter()
                .map(|&n| cluster.nodes.free(n, 0))
                .sum();
            prop_assert_eq!(
                cluster.domain_free(ti, d, 0),
                sum,
                "domain {}",
                t.domain(d).name
            );
            // The GPU histogram's pod capacity matches the nodes, for every pod size.
            for k in 1..=8 {
                let pods: u64 = t
                    .nodes_of(d)
                    .iter()
                    .map(|&n| (cluster.nodes.free(n, 0).max(0) / k) as u64)
                    .sum();
                prop_assert_eq!(
                    cluster.domain_gpu_pods(ti, d, k),
                    Some(pods),
                    "domain {} pods of {} GPUs",
                    t.domain(d).name,
                    k
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Volcano: hard constraints hold, gangs are whole, soft places whatever fits.
    #[test]
    fn volcano_gangs_are_whole_and_within_the_limit(c in case()) {
        let (w, mut cluster) = build(&c);
        let before = capacity(&cluster, &w.hypernodes.node_order, c.gpus_per_pod);
        let pods = gang(&w, &c);
        let name = |_: usize, i: usize| format!("p-{i}");
        let root_tier = w.hypernodes.root_tier();
        let job = volcano::VolcanoJob {
            pods: &pods,
            min_member: c.pods,
            highest_tier: Some(if c.hard { c.tier_limit } else { root_tier }),
            pod_name: &name,
            seed: 7,
            subgroups: &[],
            min_sub_groups: &[],
                min_task_member: &[],
        };
        let p = volcano::place(&w, &mut cluster, &job);
        prop_assert!(p.bound.is_empty() || p.bound.len() == c.pods, "partial gang: {:?}", p.bound);
        if !p.bound.is_empty() {
            let t = &w.hypernodes;
            let lca = p.bound.iter().filter_map(|b| t.domain_of(b.2)).reduce(|a, b| t.lca(a, b)).expect("bound");
            if c.hard {
                prop_assert!(t.domain(lca).tier <= c.tier_limit, "LCA {} tier {} > {}", t.domain(lca).name, t.domain(lca).tier, c.tier_limit);
            }
        } else if !c.hard {
            prop_assert!(before < c.pods, "soft gang unplaced although the cluster holds {before} of {}", c.pods);
        }
        check_books(&w, &cluster)?;
    }

    /// KAI: required levels hold, gangs are whole, preferred places whatever fits.
    #[test]
    fn kai_gangs_are_whole_and_within_the_required_domain(c in case()) {
        let (w, mut cluster) = build(&c);
        let before = capacity(&cluster, &w.topologies[0].node_order, c.gpus_per_pod);
        let pods = gang(&w, &c);
        let name = |_: usize, i: usize| format!("p-{i}");
        let (required, preferred) = match c.kai_mode {
            0 => (Some(1), None),
            1 => (Some(2), None),
            2 => (None, Some(2)),
            _ => (None, Some(1)),
        };
        let job = kai::KaiJob {
            pods: &pods,
            min_member: c.pods,
            constraint: Some(kai::KaiConstraint { topology: 0, required, preferred }),
            job_name: "ns/pg",
            pod_name: &name,
        };
        let p = kai::place(&w, &mut cluster, &job);
        prop_assert!(p.bound.is_empty() || p.bound.len() == c.pods, "partial gang: {:?}", p.bound);
        let t = &w.topologies[0];
        if let (Some(depth), false) = (required, p.bound.is_empty()) {
            let lca = p.bound.iter().filter_map(|b| t.domain_of(b.2)).reduce(|a, b| t.lca(a, b)).expect("bound");
            prop_assert!(t.domain(lca).depth >= depth, "gang spans {} above the required level", t.domain(lca).name);
        }
        if required.is_none() && p.bound.is_empty() {
            prop_assert!(before < c.pods, "preferred gang unplaced although the cluster holds {before} of {}", c.pods);
        }
        check_books(&w, &cluster)?;
    }
}

/// Per spine, per leaf, per node: (GPUs, cpu, pod slots).
type Layout = [Vec<Vec<(i64, i64, i64)>>];

/// A cluster for KAI's kept counts: spines of leaves of nodes with GPUs, cpu and few pod
/// slots (so the pod-slot cap matters), as two KAI Topologies (`spine`/`leaf` and `leaf`).
fn counts_world(shape: &Layout) -> World {
    let mut w = World::default();
    let gpu = w.resources.intern("nvidia.com/gpu");
    let cpu = w.resources.intern("cpu");
    let pods = w.resources.intern("pods");
    for (s, leaves) in shape.iter().enumerate() {
        for (l, nodes) in leaves.iter().enumerate() {
            for &(g, c, p) in nodes {
                let mut alloc = vec![0; 3];
                alloc[gpu.index()] = g;
                alloc[cpu.index()] = c;
                alloc[pods.index()] = p;
                w.nodes.push(Node {
                    name: format!("s{s}-l{l}-n{}", w.nodes.len()),
                    labels: Labels::new(vec![
                        ("spine".into(), format!("s{s}")),
                        ("leaf".into(), format!("s{s}-l{l}")),
                    ]),
                    allocatable: alloc,
                    taints: vec![],
                    unschedulable: false,
                });
            }
        }
    }
    w.topologies = vec![
        Topology::from_levels("t", &["spine".into(), "leaf".into()], &w.nodes),
        Topology::from_levels("by-leaf", &["leaf".into()], &w.nodes),
    ];
    w
}

/// A step of the random history: bind a pod of shape `.1` on node `.0`, release the `.0`-th
/// bound pod, or ask for the counts of shape `.1` in the `.0`-th domain.
#[derive(Clone, Debug)]
enum Step {
    Bind(usize, usize),
    Release(usize),
    Ask(usize, usize),
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// KAI's per-domain counts of task copies, kept in step with binds and releases, equal a
    /// count over each domain's nodes after any history, for every shape still kept; with
    /// more shapes asked about than are kept, shapes fall out and are rebuilt.
    #[test]
    fn kai_fit_counts_equal_a_recount(
        layout in prop::collection::vec(
            prop::collection::vec(prop::collection::vec((0i64..=8, 0i64..=6, 1i64..=3), 1..4), 1..4),
            1..4,
        ),
        steps in prop::collection::vec(
            prop_oneof![
                (0usize..40, 0usize..30).prop_map(|(n, s)| Step::Bind(n, s)),
                (0usize..40).prop_map(Step::Release),
                (0usize..40, 0usize..30).prop_map(|(d, s)| Step::Ask(d, s)),
            ],
            0..80,
        ),
    ) {
        let w = counts_world(&layout);
        let gpu = w.resources.lookup("nvidia.com/gpu").expect("gpu").index();
        let cpu = w.resources.lookup("cpu").expect("cpu").index();
        // 29 shapes (every (GPUs, cpu) pair but the empty one), more than are kept.
        let shape_of = |s: usize| -> Vec<(usize, i64)> {
            let (g, c) = ((s % 6) as i64, ((s / 6) % 5) as i64 + (s == 0) as i64);
            [(gpu, g), (cpu, c)].into_iter().filter(|&(_, a)| a > 0).collect::<Vec<_>>()
        };
        let requests = |s: usize| {
            ResourceList::from_pairs(
                shape_of(s)
                    .into_iter()
                    .map(|(r, a)| (kueuesim_model::ResourceId::from_index(r), a))
                    .collect(),
            )
        };
        let mut cluster = Cluster::new(&w);
        let mut bound: Vec<(NodeId, usize)> = Vec::new();
        for step in steps {
            match step {
                Step::Bind(n, s) => {
                    let node = NodeId::from_index(n % w.nodes.len());
                    let req = requests(s);
                    if cluster.nodes.fits(node, &req) {
                        cluster.apply(&w, node, &req, 1);
                        bound.push((node, s));
                    }
                }
                Step::Release(i) if !bound.is_empty() => {
                    let (node, s) = bound.remove(i % bound.len());
                    cluster.apply(&w, node, &requests(s), -1);
                }
                Step::Release(_) => {}
                Step::Ask(d, s) => {
                    let t = d % w.topologies.len();
                    let d = DomainId::from_index(d % w.topologies[t].domains.len());
                    cluster.kai_fit_count(&w, &shape_of(s), t, d);
                }
            }
            // Every kept shape, every domain: the kept count against the nodes.
            let shapes: Vec<Vec<(usize, i64)>> =
                cluster.kai_shapes().into_iter().map(|s| s.to_vec()).collect();
            for shape in shapes {
                for (ti, t) in w.topologies.iter().enumerate() {
                    for d in 0..t.domains.len() {
                        let d = DomainId::from_index(d);
                        let (mut copies, mut slots) = (0u64, 0u64);
                        for &n in t.nodes_of(d) {
                            let k = shape
                                .iter()
                                .map(|&(r, a)| (cluster.nodes.free(n, r).max(0) / a) as u64)
                                .min()
                                .unwrap_or(u64::MAX);
                            copies += k;
                            slots += k.min(cluster.nodes.free_pods(n).max(0) as u64);
                        }
                        let kept = cluster.kai_fit_count(&w, &shape, ti, d);
                        prop_assert_eq!(
                            (kept.copies, kept.within_pod_slots),
                            (copies, slots),
                            "shape {:?}, domain {}",
                            &shape,
                            t.domain(d).name
                        );
                    }
                }
            }
            prop_assert!(cluster.check_indexes(&w).is_ok());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Volcano's per-tier index of HyperNodes by free GPUs, kept lazily through binds and
    /// releases, answers "which HyperNodes of this tier have at least q GPUs free, in the
    /// tier's order" exactly as a scan of the tier's HyperNodes does, after any history; and
    /// so does its count of pods of k GPUs the HyperNodes could host.
    #[test]
    fn hypernode_tier_index_equals_a_scan(
        layout in prop::collection::vec(
            prop::collection::vec(prop::collection::vec((0i64..=8, 0i64..=6, 1i64..=3), 1..4), 1..4),
            1..4,
        ),
        steps in prop::collection::vec(
            prop_oneof![
                (0usize..40, 0usize..30).prop_map(|(n, s)| Step::Bind(n, s)),
                (0usize..40).prop_map(Step::Release),
                (0usize..40, 0usize..30).prop_map(|(d, s)| Step::Ask(d, s)),
            ],
            0..80,
        ),
    ) {
        let mut w = counts_world(&layout);
        w.hypernodes = Topology::from_levels("h", &["spine".into(), "leaf".into()], &w.nodes);
        let gpu = w.resources.lookup("nvidia.com/gpu").expect("gpu");
        let cpu = w.resources.lookup("cpu").expect("cpu");
        let requests = |s: usize| {
            ResourceList::from_pairs(
                [(gpu, (s % 6) as i64), (cpu, ((s / 6) % 5) as i64 + 1)]
                    .into_iter()
                    .filter(|&(_, a)| a > 0)
                    .collect(),
            )
        };
        let mut cluster = Cluster::new(&w);
        let mut bound: Vec<(NodeId, usize)> = Vec::new();
        let mut out = Vec::new();
        for step in steps {
            match step {
                Step::Bind(n, s) => {
                    let node = NodeId::from_index(n % w.nodes.len());
                    let req = requests(s);
                    if cluster.nodes.fits(node, &req) {
                        cluster.apply(&w, node, &req, 1);
                        bound.push((node, s));
                    }
                }
                Step::Release(i) if !bound.is_empty() => {
                    let (node, s) = bound.remove(i % bound.len());
                    cluster.apply(&w, node, &requests(s), -1);
                }
                Step::Release(_) => {}
                // Read the index: it syncs here, and only here.
                Step::Ask(tier, q) => {
                    let ti = tier % w.hypernodes.by_tier.len();
                    let q = (q % 30) as i64 + 1;
                    prop_assert!(cluster.hypernodes_with_free_gpus(&w, ti, q, &mut out).is_some());
                    let scan: Vec<DomainId> = w.hypernodes.by_tier[ti]
                        .1
                        .iter()
                        .copied()
                        .filter(|&d| cluster.domain_free(0, d, gpu.index()) >= q)
                        .collect();
                    prop_assert_eq!(&out, &scan, "tier {}, at least {} GPUs", ti, q);
                    // The same tier by pods of k GPUs (seven sizes, more than the index
                    // keeps, so sizes fall out and are counted again), at least 0 to 36 of
                    // them (above 32 the index filters its last level by the counts).
                    // Not kept (None) only without a GPU histogram: no node has a GPU.
                    let (k, at_least) = (q % 7 + 1, (q / 7 % 5 * 9) as u64);
                    let kept = cluster.hypernodes_with_gpu_pods(&w, ti, (k, at_least), &mut out);
                    let root_pods = cluster.domain_gpu_pods(0, DomainId::ROOT, k);
                    prop_assert_eq!(kept.is_some(), root_pods.is_some());
                    if kept.is_some() {
                        let scan: Vec<DomainId> = w.hypernodes.by_tier[ti]
                            .1
                            .iter()
                            .copied()
                            .filter(|&d| cluster.domain_gpu_pods(0, d, k) >= Some(at_least))
                            .collect();
                        prop_assert_eq!(&out, &scan, "tier {}, {} pods of {} GPUs", ti, at_least, k);
                    }
                }
            }
            prop_assert_eq!(cluster.check_indexes(&w), Ok(()));
        }
    }
}
