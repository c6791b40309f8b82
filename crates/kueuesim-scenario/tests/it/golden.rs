//! Golden scenarios: the outcomes computed by hand (in each scenario's header comment) are
//! asserted field by field, then the whole result is snapshotted.

use kueuesim_report::output::to_json;

use crate::util::{condition, run_dir, times, wl};

#[test]
fn fifo_strategies() {
    let r = run_dir("golden/fifo-strategies");
    let h = Some(3600.0);
    // BestEffortFIFO: b steps aside (inadmissible), c is admitted behind it. When a and c
    // finish, inadmissible workloads return to the heap after the 1 s requeueBatchPeriod.
    assert_eq!(times(wl(&r, "best", "a")), (Some(0.0), Some(0.0), h));
    assert_eq!(times(wl(&r, "best", "c")), (Some(0.0), Some(0.0), h));
    assert_eq!(
        times(wl(&r, "best", "b")),
        (Some(3601.0), Some(3601.0), Some(7201.0))
    );
    // StrictFIFO: b blocks c, and stays in the heap, so it takes the freed quota at once.
    assert_eq!(times(wl(&r, "strict", "a")), (Some(0.0), Some(0.0), h));
    assert_eq!(times(wl(&r, "strict", "b")), (h, h, Some(7200.0)));
    assert_eq!(
        times(wl(&r, "strict", "c")),
        (Some(7200.0), Some(7200.0), Some(10800.0))
    );
    // b's first attempt: the message Kueue writes, with the amount still missing.
    let b = wl(&r, "best", "b");
    let pending = &b.events[0];
    assert_eq!(
        (pending.kind, pending.reason),
        ("Warning", "WaitingForQuota")
    );
    assert_eq!(
        pending.message,
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor default, 4 more needed"
    );
    assert_eq!(
        condition(b, "QuotaReserved").message,
        "Quota reserved in ClusterQueue best-effort"
    );
    assert_eq!(condition(b, "Finished").reason, "Succeeded");
    // 28 GPU-hours used of 16 GPUs × 3 h.
    assert_eq!(r.summary.gpu.busy_gpu_seconds, 28.0 * 3600.0);
    assert_eq!(r.summary.end_time, 10800.0);
    insta::assert_snapshot!(to_json(&r));
}

#[test]
fn queue_resolution() {
    let r = run_dir("golden/queue-resolution");
    let defaulted = wl(&r, "team", "defaulted");
    assert_eq!(defaulted.local_queue.as_deref(), Some("default"));
    assert_eq!(
        (defaulted.priority_class.as_deref(), defaulted.priority),
        (Some("default"), 50)
    );
    assert_eq!(defaulted.state, "Finished");
    let urgent = wl(&r, "team", "urgent");
    assert_eq!(
        (urgent.priority_class.as_deref(), urgent.priority),
        (Some("high"), 1000)
    );

    let typo = wl(&r, "team", "typo");
    assert_eq!(typo.state, "Pending");
    let c = condition(typo, "QuotaReserved");
    assert_eq!(
        (c.status, c.reason, c.message.as_str()),
        ("False", "Misconfigured", "LocalQueue mian doesn't exist")
    );

    let ghost = wl(&r, "team", "ghost-priority");
    assert_eq!(ghost.state, "Pending");
    assert_eq!(ghost.events[0].reason, "WorkloadPriorityClassNotFound");
    assert_eq!(
        ghost.events[0].message,
        "WorkloadPriorityClass \"ghost\" not found"
    );

    let big = wl(&r, "team", "too-big");
    let c = condition(big, "QuotaReserved");
    assert_eq!(c.reason, "ExceedsMaxQuota");
    assert_eq!(
        c.message,
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor default, previously considered podsets requests (0) + current podset request (8) > maximum capacity (4)"
    );

    let wrong = wl(&r, "other", "wrong-namespace");
    let c = condition(wrong, "QuotaReserved");
    assert_eq!(
        (c.reason, c.message.as_str()),
        (
            "Misconfigured",
            "workload namespace doesn't match ClusterQueue selector"
        )
    );

    let unmanaged = wl(&r, "loner", "unmanaged");
    assert_eq!(
        (
            unmanaged.kind.as_str(),
            unmanaged.local_queue.as_deref(),
            unmanaged.cluster_queue.as_deref()
        ),
        ("Job", None, None)
    );
    assert_eq!(times(unmanaged), (None, Some(0.0), Some(3600.0)));
    assert!(
        unmanaged.conditions.is_empty(),
        "Kueue writes nothing on a job it does not manage"
    );
    // Only the two Kueue-admitted 1-GPU jobs count against the 8 GPUs of quota.
    assert_eq!(r.summary.gpu.busy_gpu_seconds, 2.0 * 3600.0);
    insta::assert_snapshot!(to_json(&r));
}

#[test]
fn first_fit_nodes() {
    let r = run_dir("golden/first-fit-nodes");
    let spread = wl(&r, "team", "spread");
    // kube-scheduler spreads by cpu (GPUs do not count in its scores).
    assert_eq!(spread.pod_sets[0].nodes, ["node-a", "node-b", "node-a"]);
    assert_eq!(times(spread), (Some(0.0), Some(10.0), Some(3610.0)));
    let gang = wl(&r, "team", "gang");
    // waitForPodsReady (on by default, 30m): unplaced at 1860 s it is evicted, backs off 60 s,
    // is readmitted at 1920 s and placed when spread finishes.
    assert_eq!(times(gang), (Some(1920.0), Some(3620.0), Some(5420.0)));
    assert_eq!(gang.evictions[0].reason, "PodsReadyTimeout");
    assert_eq!(gang.evictions[0].at, 1860.0);
    assert_eq!(condition(gang, "Requeued").reason, "BackoffFinished");
    let mut gang_nodes = gang.pod_sets[0].nodes.clone();
    gang_nodes.sort();
    assert_eq!(gang_nodes, ["node-a", "node-b"]);
    let unschedulable = gang
        .events
        .iter()
        .find(|e| e.source == "volcano")
        .expect("volcano event");
    assert_eq!(unschedulable.reason, "Unschedulable");
    assert_eq!(unschedulable.at, 60.0);
    assert!(
        unschedulable
            .message
            .ends_with("0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu."),
        "{}",
        unschedulable.message
    );
    assert_eq!(condition(gang, "PodsReady").reason, "Started");
    insta::assert_snapshot!(to_json(&r));
}

/// The first Warning event of Kueue's scheduler on `w`: (time, reason, message).
fn first_admission_warning(w: &kueuesim_report::output::WorkloadOut) -> (f64, &str, &str) {
    let e = w
        .events
        .iter()
        .find(|e| e.kind == "Warning" && e.source == "kueue-admission")
        .unwrap_or_else(|| panic!("{} has no Warning from kueue-admission", w.name));
    (e.at, e.reason, e.message.as_str())
}

#[test]
fn tas_preemption() {
    let r = run_dir("golden/tas-preemption");
    let (mid, low, high) = (
        wl(&r, "team", "mid"),
        wl(&r, "team", "low"),
        wl(&r, "team", "high"),
    );
    assert_eq!(mid.pod_sets[0].nodes, ["n1", "n1", "n2"]);
    assert!(mid.evictions.is_empty(), "{:?}", mid.evictions);
    assert_eq!(times(mid), (Some(0.0), Some(0.0), Some(3600.0)));
    // The quota fits, the racks do not: high preempts the lowest-priority workload whose
    // pods free a rack, and says so.
    assert_eq!(
        first_admission_warning(high),
        (
            60.0,
            "WaitingForPreemptedWorkloads",
            "couldn't assign flavors to pod set main: topology \"default\" allows to fit only 1 out of 2 pod(s). Total nodes: 4; excluded: resource \"cpu\": 2. Pending the preemption of 1 workload(s)"
        )
    );
    assert_eq!(low.evictions.len(), 1, "{:?}", low.evictions);
    let ev = &low.evictions[0];
    assert_eq!(
        (ev.at, ev.reason, ev.preemption_reason),
        (60.0, "Preempted", Some("InClusterQueue"))
    );
    assert_eq!(ev.preemptor, Some(format!("team/{}", high.name)));
    assert_eq!(
        condition(low, "Requeued").message,
        "Preempted to accommodate a workload (UID: team/high, JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: /cq; preemptee path: /cq"
    );
    // Admitted once low's pods are gone (30 s), into the rack low left.
    assert_eq!(times(high), (Some(90.0), Some(90.0), Some(3690.0)));
    assert_eq!(high.pod_sets[0].nodes, ["n3", "n3"]);
    // low waits for mid's rack.
    assert_eq!(times(low).0, Some(3601.0));
    assert_eq!(low.pod_sets[0].nodes, ["n1", "n1", "n2"]);
    insta::assert_snapshot!(to_json(&r));
}

#[test]
fn tas_preemption_that_cannot_help_evicts_nothing() {
    let r = run_dir("golden/tas-preemption-no-help");
    for w in &r.workloads {
        assert!(w.evictions.is_empty(), "{}: {:?}", w.name, w.evictions);
    }
    let d = wl(&r, "team", "d");
    assert_eq!(
        first_admission_warning(d),
        (
            60.0,
            "WaitingForQuota",
            "couldn't assign flavors to pod set main: topology \"default\" allows to fit only 1 out of 2 pod(s). Total nodes: 4; excluded: resource \"cpu\": 3"
        )
    );
    assert_eq!(times(d).0, Some(3601.0));
    assert_eq!(d.pod_sets[0].nodes, ["n1", "n1"]);
    // d held its quota for the rest of its cycle, so e could not borrow it then.
    let e = wl(&r, "team", "e");
    assert_eq!(
        first_admission_warning(e),
        (
            60.0,
            "WaitingForQuota",
            "Workload no longer fits after processing another workload"
        )
    );
    assert_eq!(times(e).0, Some(60.0));
    assert_eq!(e.pod_sets[0].nodes, ["n4"]);
    insta::assert_snapshot!(to_json(&r));
}

#[test]
fn embedded_platform_day_runs_and_matches_its_directory() {
    use kueuesim_engine::Simulation;
    use kueuesim_report::output::result;
    use kueuesim_scenario::{LoadOptions, load};
    let files = kueuesim_scenario::embedded::default_scenario();
    let loaded = load(&files, LoadOptions::default()).expect("embedded scenario loads");
    let embedded = to_json(&result(
        &loaded.world,
        &Simulation::new(&loaded.world).run(),
    ));
    let from_dir = to_json(&run_dir("platform"));
    assert_eq!(
        embedded, from_dir,
        "the embedded copy must be scenarios/platform/"
    );
    // The platform's one lint finding: the Job `exp-typo` names the LocalQueue `experiment`
    // on purpose. (Its KAI jobs' `kai.scheduler/enabled` label is the platform guide's
    // convention, a known key.)
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(
        loaded.warnings[0].contains(
            ": LocalQueue research/experiment is not defined in the input; 1 workload(s)"
        ),
        "{:?}",
        loaded.warnings
    );
    insta::assert_snapshot!(embedded);
}

#[test]
fn json_is_byte_identical_across_runs() {
    for dir in [
        "golden/fifo-strategies",
        "golden/first-fit-nodes",
        "golden/tas-preemption",
        "platform",
    ] {
        assert_eq!(to_json(&run_dir(dir)), to_json(&run_dir(dir)), "{dir}");
    }
}

#[test]
fn kai_gpu_sharing() {
    let r = run_dir("golden/kai-gpu-sharing");
    let on = |name: &str| wl(&r, "team", name).pod_sets[0].nodes.clone();
    // Bin-pack with gpusharingorder: the shares gather on node-a's GPU 0 until it is full,
    // then node-b opens its GPUs one share each.
    assert_eq!(on("half-a"), ["node-a"]);
    assert_eq!(on("quarter"), ["node-a"]);
    assert_eq!(on("whole"), ["node-a"]);
    assert_eq!(on("half-b"), ["node-b"]);
    assert_eq!(on("three-q"), ["node-b"]);
    // The reservation pods hold a whole GPU per shared device: big waits for the last share
    // on node-a's GPU 0 to leave (3601 s), not the first (3600 s).
    let big = wl(&r, "team", "big");
    assert_eq!(big.evictions[0].reason, "PodsReadyTimeout");
    assert_eq!(times(big), (Some(1865.0), Some(3601.0), Some(7201.0)));
    assert_eq!(on("big"), ["node-a"]);
    assert!(
        big.events[2].message.ends_with(
            "no nodes with enough resources were found: 2 node(s) didn't have enough resources: GPUs."
        ),
        "{}",
        big.events[2].message
    );
    let too_big = wl(&r, "team", "too-big");
    assert_eq!(too_big.state, "Pending");
    assert!(
        too_big.events[2]
            .message
            .ends_with("2 node(s) didn't have enough resources: GPU memory."),
        "{}",
        too_big.events[2].message
    );
    // Kueue charged the shares as kueuesim.io/gpu-milli: 500 + 250 + 500 + 750 + 1000.
    let loaded = crate::util::load_dir("golden/kai-gpu-sharing");
    let milli = loaded
        .world
        .resources
        .lookup(kueuesim_model::gpu::GPU_MILLI)
        .unwrap();
    let charged: Vec<i64> = loaded
        .world
        .workloads
        .iter()
        .map(|w| w.pod_sets[0].requests.get(milli))
        .collect();
    assert_eq!(charged, [500, 250, 0, 500, 750, 0, 1000]);
    // The devices over time: the time series' allocation figures.
    let outcome = kueuesim_engine::Simulation::new(&loaded.world)
        .with_time_series(kueuesim_model::SimDuration::from_secs(600))
        .run();
    let held: Vec<(f64, i64, i64)> = outcome
        .time_series
        .as_ref()
        .unwrap()
        .samples
        .iter()
        .map(|s| {
            let f = s.gpu_sharing.unwrap();
            (s.at.as_secs_f64(), f.gpus_allocated, f.milli_allocated)
        })
        .collect();
    assert_eq!(held[0], (0.0, 1, 500));
    assert_eq!(held[1], (600.0, 4, 3000));
    assert_eq!(held[6], (3600.0, 4, 2500));
    assert_eq!(held[7], (4200.0, 4, 3250));
    assert_eq!(held[12], (7200.0, 4, 3250));
    assert_eq!(held[13], (7800.0, 0, 0));
    insta::assert_snapshot!(to_json(&r));
}

#[test]
fn kai_gpu_sharing_spread() {
    // gpuspread and nodeplacement spread: an idle GPU before a shared one, the emptier node
    // first. quarter goes to node-b's idle GPU (node-a has one whole GPU free, node-b two).
    let mut loaded = crate::util::load_dir("golden/kai-gpu-sharing");
    loaded.world.config.kai.placement_strategy = kueuesim_model::PlacementStrategy::Spread;
    let r = kueuesim_report::output::result(
        &loaded.world,
        &kueuesim_engine::Simulation::new(&loaded.world).run(),
    );
    let on = |name: &str| wl(&r, "team", name).pod_sets[0].nodes.clone();
    assert_eq!(on("half-a"), ["node-a"]);
    assert_eq!(on("quarter"), ["node-b"]);
    // whole: node-a and node-b have one whole GPU free each: equal, node-a by name.
    assert_eq!(on("whole"), ["node-a"]);
    // half-b: node-a has no whole GPU free (spread score 0), node-b one (0.5): node-b's idle
    // GPU 1. three-q (750) then fits only node-b's GPU 0 (750 free; node-a's has 500).
    assert_eq!(on("half-b"), ["node-b"]);
    assert_eq!(on("three-q"), ["node-b"]);
}

#[test]
fn volcano_vgpu() {
    let r = run_dir("golden/volcano-vgpu");
    let on = |name: &str| wl(&r, "team", name).pod_sets[0].nodes.clone();
    // Binpack: a and b share node-a's GPU 0; d takes node-a's idle GPU 1 (75 against
    // node-b's 50); e finds GPU 0 full and GPU 1's cores all taken, so node-b.
    assert_eq!(on("a"), ["node-a"]);
    assert_eq!(on("b"), ["node-a"]);
    assert_eq!(on("d"), ["node-a"]);
    assert_eq!(on("e"), ["node-b"]);
    // c asks two GPUs of 10000 MiB: node-a has one that fits, node-b one GPU in all. On
    // node-level counts it ran at 2 s; per device it waits for d to leave node-a's GPU 1.
    let c = wl(&r, "team", "c");
    assert_eq!(times(c), (Some(2.0), Some(1203.0), Some(1803.0)));
    assert_eq!(on("c"), ["node-a"]);
    assert!(
        c.events[2].message.ends_with(
            "Origin reason is c-xvxzz: 0/2 nodes are unavailable: 2 hami-vgpuDeviceSharing error."
        ),
        "{}",
        c.events[2].message
    );
    assert_eq!(
        times(wl(&r, "team", "d")),
        (Some(3.0), Some(3.0), Some(1203.0))
    );
    // Kueue charges the requests as plain resources: c's vgpu-memory is its 10000 per
    // device (the devices hold 20000), d's vgpu-cores 100.
    let loaded = crate::util::load_dir("golden/volcano-vgpu");
    let res = |n: &str| loaded.world.resources.lookup(n).unwrap();
    let (mem, cores) = (
        res(kueuesim_model::gpu::VGPU_MEMORY),
        res(kueuesim_model::gpu::VGPU_CORES),
    );
    let charged: Vec<(i64, i64)> = loaded
        .world
        .workloads
        .iter()
        .map(|w| {
            (
                w.pod_sets[0].requests.get(mem),
                w.pod_sets[0].requests.get(cores),
            )
        })
        .collect();
    assert_eq!(
        charged,
        [(8000, 0), (8000, 0), (10000, 0), (12000, 100), (2000, 0)]
    );
    insta::assert_snapshot!(to_json(&r));
}

#[test]
fn volcano_vgpu_without_the_plugin_counts_per_node() {
    // Without deviceshare.VGPUEnable the requests are extended resources counted per node
    // (upstream without the plugin's vGPU support): c runs at once.
    let mut loaded = crate::util::load_dir("golden/volcano-vgpu");
    loaded.world.config.volcano.deviceshare = None;
    let r = kueuesim_report::output::result(
        &loaded.world,
        &kueuesim_engine::Simulation::new(&loaded.world).run(),
    );
    assert_eq!(
        times(wl(&r, "team", "c")),
        (Some(2.0), Some(2.0), Some(602.0))
    );
}

#[test]
fn kai_queue_limits() {
    let r = run_dir("kai/queue-limits");
    let warning = |name: &str| {
        wl(&r, "team", name)
            .events
            .iter()
            .find(|e| e.kind == "Warning")
            .map(|e| (e.at, e.message.clone()))
    };
    // vision's limit of 3: the fourth 1-GPU job waits with two GPUs idle.
    assert_eq!(
        warning("vision-3"),
        Some((
            0.0,
            "OverLimit: vision quota has reached the allowable limit of GPUs. Limit is 3 GPUs, currently 3 GPUs allocated and workload requested 1 GPUs.".to_string()
        ))
    );
    // The department's limit of 6 holds the 4-GPU gang of nlp, which has no limit of its own.
    assert_eq!(
        warning("nlp-gang"),
        Some((
            60.0,
            "OverLimit: research quota has reached the allowable limit of GPUs. Limit is 6 GPUs, currently 3 GPUs allocated and workload requested 4 GPUs.".to_string()
        ))
    );
    for name in ["vision-0", "vision-1", "vision-2"] {
        assert_eq!(
            times(wl(&r, "team", name)).1,
            Some(0.0),
            "{name} runs at once"
        );
    }
    // At 10m the three finish: vision-3 and the gang fit under both limits (5 ≤ 6).
    assert_eq!(times(wl(&r, "team", "vision-3")).1, Some(600.0));
    assert_eq!(times(wl(&r, "team", "nlp-gang")).1, Some(600.0));
    insta::assert_snapshot!(to_json(&r));
}

/// A Dynamo-shaped PodCliqueSet on Grove and KAI: each PodGang is one KAI PodGroup with a
/// subgroup per PodClique, its scaling-group replica packed in one rack and the set's replica
/// in one spine; a PodGang that cannot have all its minimum places none of its pods.
#[test]
fn grove_dynamo() {
    let r = run_dir("golden/grove-dynamo");
    let nodes = |gang: &str| -> Vec<Vec<String>> {
        wl(&r, "serving", gang)
            .pod_sets
            .iter()
            .map(|p| p.nodes.clone())
            .collect()
    };
    let base = wl(&r, "serving", "dynamo-0");
    let sets: Vec<(&str, u32)> = base
        .pod_sets
        .iter()
        .map(|p| (p.name.as_str(), p.count))
        .collect();
    assert_eq!(
        sets,
        [
            ("dynamo-0-frontend", 1),
            ("dynamo-0-workers-0-prefill", 1),
            ("dynamo-0-workers-0-decode", 2)
        ]
    );
    // The scaling-group replica packed in rack r3 (n5, n6), the only rack with 6 free GPUs;
    // without the rack constraint bin-packing takes n7 (rack r4) first.
    assert_eq!(
        nodes("dynamo-0"),
        [vec!["n5"], vec!["n5"], vec!["n6", "n6"]]
    );
    assert_eq!(times(base), (None, Some(0.0), Some(3600.0)));
    // Scaling-group replica 1 is a PodGang of its own. No rack has its 6 GPUs at 0 s, and
    // none of its pods is placed: r4's 4 free GPUs would take prefill and one decode pod,
    // below decode's minAvailable 2 (with that minimum lost, the two would hold r4 and the
    // gang, pinned there, never complete); it runs once dynamo-0 has finished.
    let scaled = wl(&r, "serving", "dynamo-0-workers-0");
    let names: Vec<&str> = scaled.pod_sets.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["dynamo-0-workers-1-prefill", "dynamo-0-workers-1-decode"]
    );
    assert_eq!(times(scaled), (None, Some(3600.0), Some(7200.0)));
    let first = &scaled.events[0];
    assert_eq!((first.at, first.reason), (0.0, "Unschedulable"));
    // KAI looked in one spine (the set's packDomain block): s2's racks and nodes alone.
    assert!(
        first
            .message
            .contains("node-group r4 can allocate only 2 of 3 required pods"),
        "{}",
        first.message
    );
    assert!(
        !first.message.contains("node-group r1 "),
        "{}",
        first.message
    );
    // Nothing of it was bound before 3600 s: its pods start together at 3600 s.
    assert_eq!(nodes("dynamo-0-workers-0"), [vec!["n5"], vec!["n6", "n6"]]);
    insta::assert_snapshot!(to_json(&r));
}

/// The KAI PodGroup of each PodGang as KAI's grove pod grouper builds it: minMember the sum
/// of the PodCliques' minAvailable, a subgroup per PodClique, the scaling-group replica a
/// parent subgroup packed in a rack, the PodGang packed in a spine, preferring a host.
#[test]
fn grove_dynamo_gangs() {
    let loaded = crate::util::load_dir("golden/grove-dynamo");
    let base = loaded
        .world
        .workloads
        .iter()
        .find(|w| w.name == "dynamo-0")
        .expect("PodGang dynamo-0");
    let g = &base.gang;
    assert_eq!(base.scheduler_name, "kai-scheduler");
    assert_eq!(g.min_member, Some(4));
    let c = g.kai_topology.as_ref().expect("the set's pack constraint");
    assert_eq!(
        (
            c.topology.as_str(),
            c.required.as_deref(),
            c.preferred.as_deref()
        ),
        (
            "grove-topology",
            Some("network.example/spine"),
            Some("kubernetes.io/hostname")
        )
    );
    let subgroups: Vec<(&str, Option<usize>, u32, Option<&str>)> = g
        .kai_subgroups
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.parent,
                s.min_member,
                s.constraint.as_ref().and_then(|c| c.required.as_deref()),
            )
        })
        .collect();
    assert_eq!(
        subgroups,
        [
            ("dynamo-0-workers-0", None, 0, Some("network.example/rack")),
            ("dynamo-0-frontend", None, 1, None),
            ("dynamo-0-workers-0-prefill", Some(0), 1, None),
            ("dynamo-0-workers-0-decode", Some(0), 2, None),
        ]
    );
    assert_eq!(g.pod_set_subgroup, [Some(1), Some(2), Some(3)]);
}

/// Kueue in front of Grove: each PodCliqueSet's PodGang is one Kueue pod group, admitted
/// whole by quota; KAI places it once admitted. The second set waits for quota while the
/// nodes have room, its pods gated.
#[test]
fn grove_kueue() {
    let r = run_dir("golden/grove-kueue");
    let a = wl(&r, "serving", "a");
    let b = wl(&r, "serving", "b");
    assert_eq!(a.local_queue.as_deref(), Some("serving"));
    assert_eq!(times(a), (Some(0.0), Some(0.0), Some(3600.0)));
    assert_eq!(times(b), (Some(3601.0), Some(3601.0), Some(7201.0)));
    assert_eq!(
        (b.events[0].at, b.events[0].reason),
        (60.0, "WaitingForQuota")
    );
    let sets: Vec<&str> = b.pod_sets.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        sets,
        [
            "b-0-frontend",
            "b-0-workers-0-prefill",
            "b-0-workers-0-decode"
        ]
    );
    insta::assert_snapshot!(to_json(&r));
}
