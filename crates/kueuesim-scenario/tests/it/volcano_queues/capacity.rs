//! The capacity plugin's queues, flat and hierarchical: upstream's `capacity_test.go` cases.

use super::*;

/// capacity_test.go TestEnqueueAndAllocatable's cluster: n1, n2 of 3 cpu/3G; q1 (deserved
/// and capability 2 cpu/2G) runs pod1 (1 cpu, 3G) on n1; q2 (deserved 2 cpu/2G, capability
/// 3 cpu/3G) runs pod2 (3 cpu, 1G) on n2; q3 is Closed.
fn capacity_cluster() -> String {
    format!(
        "{}{}{}{}{}{}{}{}",
        sim("enqueue, allocate", &["capacity"]),
        node("n1", "3", "3G"),
        node("n2", "3", "3G"),
        queue(
            "q1",
            "weight: 1, deserved: {cpu: '2', memory: 2G}, capability: {cpu: '2', memory: 2G}",
            None
        ),
        queue(
            "q2",
            "weight: 1, deserved: {cpu: '2', memory: 2G}, capability: {cpu: '3', memory: 3G}",
            None
        ),
        queue(
            "q3",
            "weight: 1, capability: {cpu: '3', memory: 3G}",
            Some("Closed")
        ),
        running("pg1", "q1", "{cpu: '1', memory: 3G}", "1", "3G", "n1"),
        running("pg2", "q2", "{cpu: '3', memory: 1G}", "3", "1G", "n2"),
    )
}

#[test]
fn capacity_enqueue_and_allocatable_cases() {
    // Case 0: pod3 (1 cpu, 0G) of q1 stays within q1's capability in cpu: n1.
    // Case 1: pod4 (0 cpu, 1G) of q2 within its capability in memory: n2.
    let text = capacity_cluster()
        + &gang("pg3", "q1", Some("{cpu: '1', memory: 0G}"), "1", "0G")
        + &gang("pg4", "q2", Some("{cpu: '0', memory: 1G}"), "0", "1G");
    let r = run_text(&text);
    assert_eq!(nodes(wl(&r, "ns1", "pg3")), ["n1"]);
    assert_eq!(nodes(wl(&r, "ns1", "pg4")), ["n2"]);
    // Case 2: pod5 (1 cpu, 1G) of q1: 1 cpu/1G + q1's 1 cpu/3G is above 2G.
    let r = run_text(
        &(capacity_cluster() + &gang("pg5", "q1", Some("{cpu: '1', memory: 1G}"), "1", "1G")),
    );
    let pg5 = wl(&r, "ns1", "pg5");
    assert!(nodes(pg5).is_empty());
    assert_eq!(
        volcano_events(pg5),
        [
            (
                "Normal",
                "Unschedulable",
                "queue resource quota insufficient: insufficient memory"
            ),
            ("Warning", "Unschedulable", &*held_warning(pg5)),
        ]
    );
    // Case 4: the Closed q3 lets nothing in.
    let r = run_text(
        &(capacity_cluster() + &gang("pg6", "q3", Some("{cpu: '1', memory: 1G}"), "1", "1G")),
    );
    assert!(nodes(wl(&r, "ns1", "pg6")).is_empty());
}

#[test]
fn capacity_allocates_within_capability_only() {
    // capacity_test.go Test_capacityPlugin_OnSessionOpenWithoutHierarchy, with actions
    // allocate and reclaim and plugins predicates, gang, capacity. Case 0: q1 (capability
    // 2 cpu/2Gi) runs p1 (1 cpu, 1Gi) on n1; p2 (1 cpu, 1Gi, nodeSelector selector=worker)
    // binds on n1. Case 1: q2 (capability 1.5 cpu/1.5Gi) runs p3 (1 cpu, 1Gi); p4 does not
    // fit the capability.
    let nodes_text = "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {selector: worker}}\nstatus:\n  allocatable: {cpu: '2', memory: 4Gi, pods: '10'}\n".to_string()
        + &node("n2", "2", "4Gi");
    let base = sim("allocate, reclaim", &["predicates", "gang", "capacity"]) + &nodes_text;
    let case0 = base.clone()
        + &queue("q1", "weight: 1, capability: {cpu: '2', memory: 2Gi}", None)
        + &running("pg1", "q1", "{cpu: '1', memory: 1Gi}", "1", "1Gi", "n1")
        + &gang("pg2", "q1", None, "1", "1Gi").replace(
            "  schedulerName: volcano\n",
            "  schedulerName: volcano\n  nodeSelector: {selector: worker}\n",
        );
    assert_eq!(nodes(wl(&run_text(&case0), "ns1", "pg2")), ["n1"]);
    let case1 =
        base + &queue(
            "q2",
            "weight: 1, capability: {cpu: 1500m, memory: 1536Mi}",
            None,
        ) + &running("pg3", "q2", "{cpu: '1', memory: 1Gi}", "1", "1Gi", "n1")
            + &gang("pg4", "q2", None, "1", "1Gi");
    let r = run_text(&case1);
    let pg4 = wl(&r, "ns1", "pg4");
    assert!(nodes(pg4).is_empty());
    assert_eq!(
        volcano_events(pg4),
        [(
            "Warning",
            "Unschedulable",
            "1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; Pending: 1 Unschedulable"
        )]
    );
}

#[test]
fn capacity_hierarchy_checks_every_ancestor() {
    // enableHierarchy: a leaf under a parent capped at 2 cpu; the leaf itself has no cap.
    // Its sibling runs 2 cpu, so a 1-cpu job of the leaf waits: the parent has no room.
    let text = SIM.replace("ACTIONS", "enqueue, allocate").replace(
        "PLUGINS",
        "- name: capacity\n          enableHierarchy: true",
    ) + &node("n1", "8", "8G")
        + &queue("team", "weight: 1, capability: {cpu: '2'}", None)
        + &queue("a", "weight: 1, parent: team", None)
        + &queue("b", "weight: 1, parent: team", None)
        + &running("pg1", "b", "{cpu: '2'}", "2", "1G", "n1")
        + &gang("pg2", "a", Some("{cpu: '1'}"), "1", "1G");
    let r = run_text(&text);
    let pg2 = wl(&r, "ns1", "pg2");
    assert!(nodes(pg2).is_empty());
    assert_eq!(
        volcano_events(pg2),
        [
            (
                "Normal",
                "Unschedulable",
                "queue resource quota insufficient: insufficient cpu"
            ),
            ("Warning", "Unschedulable", &*held_warning(pg2)),
        ]
    );
    // A job of the parent itself is an error (upstream would stop scheduling every queue).
    let e = load_error(&text.replace("queue: a\n", "queue: team\n"));
    assert!(e.contains("queue \"team\" has child queues (a, b)"), "{e}");
    // Without the sibling's usage it fits.
    let free = text.replace("queue: b\n", "queue: default\n");
    assert_eq!(nodes(wl(&run_text(&free), "ns1", "pg2")), ["n1"]);
}

/// A Queue under `parent` with `deserved` and `capability` (flow mappings, or empty).
fn child(name: &str, parent: &str, deserved: &str, capability: &str) -> String {
    let mut spec = format!("weight: 1, parent: {parent}");
    if !deserved.is_empty() {
        spec += &format!(", deserved: {deserved}");
    }
    if !capability.is_empty() {
        spec += &format!(", capability: {capability}");
    }
    queue(name, &spec, None)
}

#[test]
fn capacity_hierarchy_upstream_cases() {
    // capacity_test.go Test_capacityPlugin_OnSessionOpenWithHierarchy (actions enqueue,
    // reclaim, allocate; plugins capacity with enableHierarchy, predicates, gang), node n1
    // of 8 cpu/8Gi, a `root` queue without capability.
    let base = SIM
        .replace("ACTIONS", "enqueue, reclaim, allocate")
        .replace(
            "PLUGINS",
            "- name: capacity\n          enableHierarchy: true\n        - name: predicates\n        - name: gang",
        )
        + &node("n1", "8", "8Gi")
        + &queue("root", "weight: 1", None);
    let tree1 = base.clone()
        + &child("q1", "root", "", "{cpu: '4', memory: 4Gi}")
        + &child("q2", "root", "", "{cpu: '4', memory: 4Gi}")
        + &child("q11", "q1", "", "{cpu: '1', memory: 1Gi}")
        + &child("q12", "q1", "", "{cpu: '3', memory: 3Gi}");
    // case0 "Pod allocatable when queue is leaf queue": p1 (1 cpu, 1Gi) of q11 → n1.
    let r = run_text(&(tree1.clone() + &gang("pg1", "q11", None, "1", "1Gi")));
    assert_eq!(nodes(wl(&r, "ns1", "pg1")), ["n1"]);
    // case1 "Pod not allocatable when queue is not leaf queue": p2 of q1 waits upstream, and
    // so does every other job (`buildHierarchicalQueueAttrs` leaves the plugin not ready to
    // schedule): here a job in a non-leaf queue is an error at its queue, also beside pg1.
    for text in [
        tree1.clone() + &gang("pg2", "q1", None, "1", "1Gi"),
        tree1 + &gang("pg1", "q11", None, "1", "1Gi") + &gang("pg2", "q1", None, "1", "1Gi"),
    ] {
        let e = load_error(&text);
        assert!(e.starts_with("t.yaml:"), "{e}");
        assert!(
            e.contains("queue \"q1\" has child queues (q11, q12): with the capacity plugin's enableHierarchy a job must be in a leaf queue"),
            "{e}"
        );
    }
    // case4 "Pod is not allocatable when ancestor queue's real capability not enough": q3
    // (capability 4 cpu/4Gi) has q31, q32 running 2 cpu/2Gi each; p10 (3 cpu/3Gi) of q33
    // fits q33's capability but not q3's.
    let tree3 = base.clone()
        + &child(
            "q3",
            "root",
            "{cpu: '4', memory: 4Gi, pods: '10'}",
            "{cpu: '4', memory: 4Gi, pods: '10'}",
        )
        + &child(
            "q31",
            "q3",
            "{cpu: '2', memory: 2Gi, pods: '2'}",
            "{cpu: '4', memory: 4Gi, pods: '4'}",
        )
        + &child(
            "q32",
            "q3",
            "{cpu: '2', memory: 2Gi, pods: '2'}",
            "{cpu: '4', memory: 4Gi, pods: '4'}",
        )
        + &child(
            "q33",
            "q3",
            "{cpu: '0', memory: 0Gi, pods: '2'}",
            "{cpu: '4', memory: 4Gi, pods: '4'}",
        )
        + &running("pg5", "q31", "{cpu: '2', memory: 2Gi}", "2", "2Gi", "n1")
        + &running("pg7", "q32", "{cpu: '2', memory: 2Gi}", "2", "2Gi", "n1");
    let r = run_text(&(tree3 + &gang("pg8", "q33", None, "3", "3Gi")));
    let pg8 = wl(&r, "ns1", "pg8");
    assert!(nodes(pg8).is_empty());
    assert_eq!(volcano_events(pg8).len(), 1);
    assert_eq!(volcano_events(pg8)[0].0, "Warning");
    // case5 "If the capability cpu or memory is not specified, the value should be inherited
    // from parent queue": q5 (4Gi), q51 (2Gi); p11 asks 1 cpu and no memory → n1.
    let tree5 = base.clone()
        + &child("q5", "root", "", "{memory: 4Gi}")
        + &child("q51", "q5", "", "{memory: 2Gi}");
    let p11 = gang("pg9", "q51", None, "1", "0").replace("memory: 0}", "memory: '0'}");
    let r = run_text(&(tree5 + &p11));
    assert_eq!(nodes(wl(&r, "ns1", "pg9")), ["n1"]);
    // case6 "podgroup can't be enqueued when any ancestor queue's capability is not
    // enough": q6 (2 cpu/4Gi) over q61 and q62 without capability; pg10 and pg11 each with
    // minResources 2 cpu/4Gi: the first in is let in, the other waits Pending.
    let tree6 = base
        + &child("q6", "root", "", "{cpu: '2', memory: 4Gi}")
        + &child("q61", "q6", "", "")
        + &child("q62", "q6", "", "");
    let r = run_text(
        &(tree6
            + &gang("pg10", "q61", Some("{cpu: '2', memory: 4Gi}"), "2", "4Gi")
            + &gang("pg11", "q62", Some("{cpu: '2', memory: 4Gi}"), "2", "4Gi")),
    );
    assert_eq!(nodes(wl(&r, "ns1", "pg10")), ["n1"]);
    let pg11 = wl(&r, "ns1", "pg11");
    assert!(nodes(pg11).is_empty());
    assert_eq!(
        volcano_events(pg11),
        [
            (
                "Normal",
                "Unschedulable",
                "queue resource quota insufficient: insufficient cpu, insufficient memory"
            ),
            ("Warning", "Unschedulable", &*held_warning(pg11)),
        ]
    );
}

#[test]
fn capacity_hierarchy_upstream_allocation_cases_with_scalars() {
    let head = SIM
        .replace("ACTIONS", "enqueue, reclaim, allocate")
        .replace(
            "PLUGINS",
            "- name: capacity\n          enableHierarchy: true\n        - name: predicates\n        - name: gang",
        )
        + &queue("root", "weight: 1", None);
    let gpu_node = |name: &str, extra: &str| {
        format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus:\n  allocatable: {{cpu: '8', memory: 8Gi, nvidia.com/gpu: '8', pods: '10'{extra}}}\n"
        )
    };
    // case2 "Pod allocatable when queue has not exceed capability": pg3 (minMember 2) of
    // q31 with p3 and p4 (2 cpu/2Gi each) under q3 (4 cpu/4Gi): both on n1.
    let case2 = head.clone()
        + &node("n1", "8", "8Gi")
        + &child(
            "q3",
            "root",
            "{cpu: '4', memory: 4Gi}",
            "{cpu: '4', memory: 4Gi}",
        )
        + &child(
            "q4",
            "root",
            "{cpu: '2', memory: 2Gi}",
            "{cpu: '4', memory: 4Gi}",
        )
        + &child(
            "q31",
            "q3",
            "{cpu: '2', memory: 2Gi}",
            "{cpu: '4', memory: 4Gi}",
        )
        + &child(
            "q32",
            "q3",
            "{cpu: '2', memory: 2Gi}",
            "{cpu: '4', memory: 4Gi}",
        )
        + &pod_group("pg3", "q31", 2)
        + &gpu_pod("p3", "pg3", "2", "2Gi", "0")
        + &gpu_pod("p4", "pg3", "2", "2Gi", "0");
    assert_eq!(nodes(wl(&run_text(&case2), "ns1", "pg3")), ["n1", "n1"]);
    // case8 "When the queue's deserved value has a scalar resource set, the check can pass":
    // q8 (deserved 4 cpu/4Gi/8 GPUs) over q81 and q82 (2 cpu/2Gi/4 GPUs); p12 (2 cpu, 2Gi,
    // 1 GPU) of q81 on n-gpu.
    let case8 = head.clone()
        + &gpu_node("n-gpu", "")
        + &child(
            "q8",
            "root",
            "{cpu: '4', memory: 4Gi, nvidia.com/gpu: '8'}",
            "",
        )
        + &child(
            "q81",
            "q8",
            "{cpu: '2', memory: 2Gi, nvidia.com/gpu: '4'}",
            "",
        )
        + &child(
            "q82",
            "q8",
            "{cpu: '2', memory: 2Gi, nvidia.com/gpu: '4'}",
            "",
        )
        + &pod_group("pg12", "q81", 1)
        + &gpu_pod("p12", "pg12", "2", "2Gi", "1");
    assert_eq!(nodes(wl(&run_text(&case8), "ns1", "pg12")), ["n-gpu"]);
    // case9 "When some scalar resources are 0 in deserved, the check can still pass".
    let case9 = head.clone()
        + &gpu_node("n2", ", hugepages-1Gi: '0'")
        + &child(
            "q9",
            "root",
            "{cpu: '2', memory: 2Gi, nvidia.com/gpu: '8', hugepages-1Gi: '0'}",
            "",
        )
        + &child(
            "q91",
            "q9",
            "{cpu: '2', memory: 2Gi, nvidia.com/gpu: '4', hugepages-1Gi: '0'}",
            "",
        )
        + &pod_group("pg13", "q91", 1)
        + &gpu_pod("p13", "pg13", "2", "2Gi", "1");
    assert_eq!(nodes(wl(&run_text(&case9), "ns1", "pg13")), ["n2"]);
    // case11 "If the capability scalar resources is not specified, the value should be
    // inherited from parent queue": two leaves capped at 4 GPUs each under a parent without
    // capability; p14 and p15 (4 GPUs each) both on n2.
    let case11 = head
        + &gpu_node("n2", "")
        + &child("case11-queue1", "root", "", "")
        + &child(
            "case11-queue11",
            "case11-queue1",
            "",
            "{cpu: '4', memory: 4Gi, nvidia.com/gpu: '4'}",
        )
        + &child(
            "case11-queue12",
            "case11-queue1",
            "",
            "{cpu: '4', memory: 4Gi, nvidia.com/gpu: '4'}",
        )
        + &pod_group("pg14", "case11-queue11", 1)
        + &gpu_pod("p14", "pg14", "1", "1Gi", "4")
        + &pod_group("pg15", "case11-queue12", 1)
        + &gpu_pod("p15", "pg15", "1", "1Gi", "4");
    let r = run_text(&case11);
    assert_eq!(nodes(wl(&r, "ns1", "pg14")), ["n2"]);
    assert_eq!(nodes(wl(&r, "ns1", "pg15")), ["n2"]);
}
