//! The cases of upstream's `integration_tests/allocate/allocate_topology_test.go`.

use super::*;

// integration_tests/allocate/allocate_topology_test.go

const ZONE: &str = "topology.kubernetes.io/zone";
const RACK: &str = "topology.kubernetes.io/rack";
const REGION: &str = "topology.kubernetes.io/region";

/// A node of `gpus` GPUs in rack `rack`.
fn in_rack(name: &'static str, gpus: u32, rack: &'static str) -> Node {
    node(name, gpus).label(RACK, rack)
}

/// A Topology `rack-topology` of one level, the rack.
fn racks(nodes: Vec<Node>, queues: Vec<Queue>, jobs: Vec<Job>) -> Case {
    case(nodes, queues, jobs).topology("rack-topology", vec![RACK])
}

#[test]
fn a_job_requiring_a_zone_preferring_a_rack_stays_in_one_zone() {
    // allocate_topology_test.go, "Multi-level topology - pack job in single rack with
    // preferred level": 3 tasks; no rack has 3 GPUs, zone1 (node0, node1) has 4.
    let c = case(
        vec![
            node("node0", 2).label(ZONE, "zone1").label(RACK, "rack1"),
            node("node1", 2).label(ZONE, "zone1").label(RACK, "rack2"),
            node("node2", 2).label(ZONE, "zone2").label(RACK, "rack3"),
        ],
        vec![queue("queue0", 6.0)],
        vec![
            whole("pending_job0", "queue0", TRAIN, 1)
                .pending(3)
                .topology("datacenter-topology", Some(ZONE), Some(RACK)),
        ],
    )
    .topology("datacenter-topology", vec![ZONE, RACK]);
    c.run()
        .runs_within("pending_job0", 60.0, 3, &["node0", "node1"]);
}

#[test]
fn a_required_rack_prefers_the_rack_already_used() {
    // allocate_topology_test.go, "Topology packing - prefer domains with existing
    // allocations": node0 (rack1) has 1 of 3 GPUs taken, node1 (rack2) none.
    let c = racks(
        vec![in_rack("node0", 3, "rack1"), in_rack("node1", 3, "rack2")],
        vec![queue("queue0", 6.0)],
        vec![
            whole("running_job0", "queue0", TRAIN, 1)
                .on("node0")
                .topology("rack-topology", Some(RACK), None),
            whole("pending_job0", "queue0", TRAIN, 1)
                .pending(2)
                .topology("rack-topology", Some(RACK), None),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_job0", 60.0, &["node0", "node0"]);
}

#[test]
fn a_job_no_rack_can_hold_waits() {
    // allocate_topology_test.go, "Topology constraint - job cannot fit in single domain, stays
    // pending": 2 tasks of 2 GPUs; rack1 has two nodes of 1 GPU, rack2 one of 2.
    let c = racks(
        vec![
            in_rack("node0", 1, "rack1"),
            in_rack("node1", 1, "rack1"),
            in_rack("node2", 2, "rack2"),
        ],
        vec![queue("queue0", 4.0)],
        vec![
            whole("pending_job0", "queue0", TRAIN, 2)
                .pending(2)
                .topology("rack-topology", Some(RACK), None),
        ],
    );
    c.run().waits("pending_job0");
}

#[test]
fn a_job_requiring_a_region_stays_in_it() {
    // allocate_topology_test.go, "Three-level topology - allocate with required and preferred
    // constraints": 4 tasks, required region, preferred rack; us-west holds node0..node2.
    let node_at = |name, zone, rack, region| {
        node(name, 2)
            .label(REGION, region)
            .label(ZONE, zone)
            .label(RACK, rack)
    };
    let c = case(
        vec![
            node_at("node0", "us-west-1a", "rack1", "us-west"),
            node_at("node1", "us-west-1a", "rack2", "us-west"),
            node_at("node2", "us-west-1b", "rack3", "us-west"),
            node_at("node3", "us-east-1a", "rack4", "us-east"),
        ],
        vec![queue("queue0", 8.0)],
        vec![
            whole("pending_job0", "queue0", TRAIN, 1)
                .pending(4)
                .topology("complex-topology", Some(REGION), Some(RACK)),
        ],
    )
    .topology("complex-topology", vec![REGION, ZONE, RACK]);
    c.run()
        .runs_within("pending_job0", 60.0, 4, &["node0", "node1", "node2"]);
}

#[test]
fn a_job_requiring_a_rack_takes_the_free_one() {
    // allocate_topology_test.go, "Topology with partial allocation - one rack full, allocate
    // remaining in another": queue0's job fills rack1 (node0, node1).
    let c = racks(
        vec![
            in_rack("node0", 1, "rack1"),
            in_rack("node1", 1, "rack1"),
            in_rack("node2", 2, "rack2"),
        ],
        vec![queue("queue0", 2.0), queue("queue1", 2.0)],
        vec![
            whole("running_job0", "queue0", TRAIN, 1)
                .on("node0")
                .on("node1")
                .topology("rack-topology", Some(RACK), None),
            whole("pending_job0", "queue1", TRAIN, 1)
                .pending(2)
                .topology("rack-topology", Some(RACK), None),
        ],
    );
    c.run().stays("running_job0", &["node0", "node1"]).runs(
        "pending_job0",
        60.0,
        &["node2", "node2"],
    );
}

#[test]
fn a_preferred_rack_that_cannot_be_had_does_not_block() {
    // allocate_topology_test.go, "Preferred topology only - still allocates when preferred
    // level cannot be satisfied": one GPU free in each rack, 2 tasks.
    let c = racks(
        vec![in_rack("node0", 2, "rack1"), in_rack("node1", 2, "rack2")],
        vec![queue("queue0", 4.0)],
        vec![
            whole("running_job0", "queue0", TRAIN, 1).on("node0"),
            whole("running_job1", "queue0", TRAIN, 1).on("node1"),
            whole("pending_job0", "queue0", TRAIN, 1)
                .pending(2)
                .topology("rack-topology", None, Some(RACK)),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .stays("running_job1", &["node1"])
        .runs_within("pending_job0", 60.0, 2, &["node0", "node1"]);
}

#[test]
fn a_required_rack_with_the_cpu_for_the_job() {
    // allocate_topology_test.go, "Topology with CPU constraints - allocate within topology
    // domain respecting CPU limits": 2 tasks of 1 GPU and 2000 cores; rack2's node1 has 1000.
    let c = racks(
        vec![
            in_rack("node0", 2, "rack1").cpu_millis(5_000_000),
            in_rack("node1", 2, "rack2").cpu_millis(1_000_000),
        ],
        vec![queue("queue0", 4.0)],
        vec![
            whole("pending_job0", "queue0", TRAIN, 1)
                .cpu(2_000_000, 0)
                .pending(2)
                .topology("rack-topology", Some(RACK), None),
        ],
    );
    c.run().runs("pending_job0", 60.0, &["node0", "node0"]);
}

#[test]
fn a_job_of_four_tasks_waits_when_every_rack_has_two_gpus() {
    // allocate_topology_test.go, "Topology constraint failure - sufficient cluster resources
    // but fragmented across domains": the cluster has 8 GPUs, each rack 2.
    let c = racks(
        vec![
            in_rack("node0", 2, "rack1"),
            in_rack("node1", 2, "rack2"),
            in_rack("node2", 2, "rack3"),
            in_rack("node3", 2, "rack4"),
        ],
        vec![queue("queue0", 8.0)],
        vec![
            whole("pending_job0", "queue0", TRAIN, 1)
                .pending(4)
                .topology("rack-topology", Some(RACK), None),
        ],
    );
    let r = c.run();
    r.waits("pending_job0");
    // KAI's message names each rack ("node-group rack1 can allocate only 2 of 4 required
    // pods") and the unsatisfied requirement.
    let text = r
        .job("pending_job0")
        .conditions
        .iter()
        .map(|c| c.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
        + &r.job("pending_job0")
            .events
            .iter()
            .map(|e| format!("{e:?}"))
            .collect::<Vec<_>>()
            .join("\n");
    assert!(
        text.contains("node-group rack4 can allocate only 2 of 4 required pods"),
        "{text}"
    );
}
