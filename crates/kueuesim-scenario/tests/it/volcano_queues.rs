//! Volcano's own queues with a volcano-scheduler.conf: Queue objects and the conf's actions
//! and plugins as read (misspellings are errors naming the closest), and cases transcribed
//! from upstream's unit tests (volcano ed72c7c8: `proportion_test.go`
//! TestEnqueueAndAllocable, `enqueue_test.go` TestEnqueue, `overcommit_test.go`
//! TestOvercommitPlugin, `preempt_test.go` TestPreempt, `reclaim_test.go` TestReclaim): where
//! each pod binds, or that its PodGroup stays Pending with the event upstream records, and
//! which pods the preempt and reclaim actions evict.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result};

use crate::util::{load_error, load_text, run_dir, wl};

/// Loads and runs `text` as `t.yaml`.
fn run_text(text: &str) -> SimulationResult {
    let loaded = load_text("t.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    result(&loaded.world, &Simulation::new(&loaded.world).run())
}

/// The nodes of every pod of `w`.
fn nodes(w: &WorkloadOut) -> Vec<&str> {
    w.pod_sets
        .iter()
        .flat_map(|p| p.nodes.iter().map(String::as_str))
        .collect()
}

/// Volcano's events on `w`: (type, reason, message).
fn volcano_events(w: &WorkloadOut) -> Vec<(&str, &str, &str)> {
    w.events
        .iter()
        .filter(|e| e.source == "volcano")
        .map(|e| (e.kind, e.reason, e.message.as_str()))
        .collect()
}

/// The gang Warning upstream's cache records at session close for a PodGroup still Pending
/// (`RecordJobStatusEvent`): none of its pods was tried, so no origin reason. The PodGroups
/// of these tests have minMember 1; the histogram is sorted as strings.
fn held_warning(w: &WorkloadOut) -> String {
    let total: usize = w.pod_sets.iter().map(|p| p.count as usize).sum();
    let pending = total - nodes(w).len();
    let hist = if pending < 2 {
        format!("{pending} Pending, 1 minAvailable")
    } else {
        format!("1 minAvailable, {pending} Pending")
    };
    format!(
        "{pending}/{total} tasks in gang unschedulable: pod group is not ready, {hist}; Pending: {pending} Unschedulable"
    )
}

const SIM: &str = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: t}
spec:
  until: 10m
  volcano:
    configuration: |
      actions: \"ACTIONS\"
      tiers:
      - plugins:
        PLUGINS
";

/// A Simulation whose conf lists `actions` and the plugins `plugins` (one tier).
fn sim(actions: &str, plugins: &[&str]) -> String {
    let list: Vec<String> = plugins.iter().map(|p| format!("- name: {p}")).collect();
    SIM.replace("ACTIONS", actions)
        .replace("PLUGINS", &list.join("\n        "))
}

/// A node of `cpu` and `memory`.
fn node(name: &str, cpu: &str, memory: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus:\n  allocatable: {{cpu: '{cpu}', memory: {memory}, pods: '10'}}\n"
    )
}

/// A PodGroup of minMember 1 in `queue`, with `min` as its minResources (or none), and its
/// one pending pod of `cpu`/`memory`.
fn gang(name: &str, queue: &str, min: Option<&str>, cpu: &str, memory: &str) -> String {
    let min = min.map_or(String::new(), |m| format!("\n  minResources: {m}"));
    format!(
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ns1}}\nspec:\n  minMember: 1\n  queue: {queue}{min}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}-p\n  namespace: ns1\n  annotations: {{kueuesim.io/duration: 1h, scheduling.k8s.io/group-name: {name}}}\nspec:\n  schedulerName: volcano\n  containers:\n  - resources:\n      requests: {{cpu: '{cpu}', memory: {memory}}}\n"
    )
}

#[test]
fn proportion_cases_0_and_1_bind_within_the_deserved_share() {
    // Case 0: pod3 asks only for cpu, within q1's deserved 2 cpu; case 1: pod4 asks only
    // for memory, within q2's deserved 2G.
    let r = run_dir("volcano/proportion");
    assert_eq!(nodes(wl(&r, "ns1", "pg3")), ["n1"]);
    assert_eq!(nodes(wl(&r, "ns1", "pg4")), ["n2"]);
    assert_eq!(wl(&r, "ns1", "pg3").state, "Running");
    // Let in at once: no enqueue event, no inqueueAt.
    assert!(volcano_events(wl(&r, "ns1", "pg3")).is_empty());
    assert_eq!(wl(&r, "ns1", "pg3").inqueue_at, None);
    insta::assert_snapshot!(kueuesim_report::output::to_json(&r));
}

#[test]
fn proportion_case_2_over_capability_is_not_enqueued() {
    let r = run_dir("volcano/enqueue-over-capability");
    let pg5 = wl(&r, "ns1", "pg5");
    assert!(nodes(pg5).is_empty());
    assert_eq!(pg5.state, "Pending");
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
    assert_eq!(pg5.inqueue_at, None);
    insta::assert_snapshot!(kueuesim_report::output::to_json(&r));
}

#[test]
fn proportion_case_4_closed_queue_is_not_enqueued() {
    let r = run_dir("volcano/closed-queue");
    let pg6 = wl(&r, "ns1", "pg6");
    assert!(nodes(pg6).is_empty());
    // Upstream only logs the closed queue; its cache's gang Warning follows at session close.
    assert_eq!(
        volcano_events(pg6),
        [("Warning", "Unschedulable", &*held_warning(pg6))]
    );
}

#[test]
fn enqueue_rejects_min_resources_above_the_queue_capability() {
    // enqueue_test.go "pggroup cannot enqueue because queue resources are less than
    // podgroup MinResources": queue c1 (capability 1 cpu/1G), pg1 minResources 8 cpu/8G.
    let text = format!(
        "{}{}---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: c1}}\nspec: {{weight: 1, capability: {{cpu: '1', memory: 1G}}}}\n{}",
        sim("enqueue, allocate", &["drf", "proportion", "sla", "gang"]),
        node("n1", "16", "16G"),
        gang("pg1", "c1", Some("{cpu: '8', memory: 8G}"), "1", "1G"),
    );
    let r = run_text(&text);
    let pg1 = wl(&r, "ns1", "pg1");
    assert!(nodes(pg1).is_empty());
    assert_eq!(
        volcano_events(pg1),
        [
            (
                "Normal",
                "Unschedulable",
                "queue resource quota insufficient: insufficient cpu, insufficient memory"
            ),
            ("Warning", "Unschedulable", &*held_warning(pg1)),
        ]
    );
}

#[test]
fn enqueue_lets_in_pod_groups_without_min_resources() {
    // enqueue_test.go "when podgroup status is pending": pg1 (3 cpu) in c1, pg2 (1 cpu) in
    // c2, both without minResources, each queue capped at 4 cpu/4G: both are let in.
    let queues = "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: c1}\nspec: {weight: 1, capability: {cpu: '4', memory: 4G}}\n---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: c2}\nspec: {weight: 1, capability: {cpu: '4', memory: 4G}}\n";
    let text = format!(
        "{}{}{queues}{}{}",
        sim("enqueue, allocate", &["drf", "proportion", "sla", "gang"]),
        node("n1", "8", "8G"),
        gang("pg1", "c1", None, "3", "1G"),
        gang("pg2", "c2", None, "1", "1G"),
    );
    let r = run_text(&text);
    assert_eq!(nodes(wl(&r, "ns1", "pg1")), ["n1"]);
    assert_eq!(nodes(wl(&r, "ns1", "pg2")), ["n1"]);
}

#[test]
fn overcommit_rejects_min_resources_above_idle_times_the_factor() {
    // overcommit_test.go "when the required resources of pg are too large": nodes 2 cpu/4Gi
    // and 4 cpu/16Gi, pg2 minResources 20 cpu/20G, factor 1.2: 7.2 cpu idle.
    let text = format!(
        "{}{}{}{}",
        sim("enqueue, allocate", &["overcommit", "gang"]),
        node("n1", "2", "4Gi"),
        node("n2", "4", "16Gi"),
        gang(
            "pg2",
            "default",
            Some("{cpu: 20000m, memory: 20G}"),
            "1",
            "1G"
        ),
    );
    let r = run_text(&text);
    let pg2 = wl(&r, "ns1", "pg2");
    assert!(nodes(pg2).is_empty());
    assert_eq!(
        volcano_events(pg2),
        [
            (
                "Normal",
                "Unschedulable",
                "resource in cluster is overused: overused cpu"
            ),
            ("Warning", "Unschedulable", &*held_warning(pg2)),
        ]
    );
    // "overCommitFactor is more than 0": 2 cpu/2G fits.
    let text = text.replace("{cpu: 20000m, memory: 20G}", "{cpu: 2000m, memory: 2G}");
    assert_eq!(nodes(wl(&run_text(&text), "ns1", "pg2")).len(), 1);
}

#[test]
fn without_enqueue_allocate_lets_the_pod_group_in_itself() {
    // Only `allocate`: no enqueue vote, so overcommit's limit does not apply (upstream's
    // allocate moves a Pending PodGroup to Inqueue itself).
    let text = format!(
        "{}{}{}",
        sim("allocate", &["overcommit", "gang"]),
        node("n1", "2", "4Gi"),
        gang(
            "pg2",
            "default",
            Some("{cpu: 20000m, memory: 20G}"),
            "1",
            "1G"
        ),
    );
    let r = run_text(&text);
    assert_eq!(nodes(wl(&r, "ns1", "pg2")), ["n1"]);
}

#[test]
fn a_misspelt_queue_field_names_the_closest() {
    let e = load_error(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec:\n  weight: 1\n  capabilty: {cpu: '2'}\n",
    );
    assert!(e.starts_with("t.yaml:6:3: "), "{e}");
    assert!(e.contains("capabilty"), "{e}");
    assert!(e.contains("(closest: \"capability\")"), "{e}");
}

#[test]
fn a_bad_queue_quantity_and_state_are_errors_at_their_place() {
    let e = load_error(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec:\n  deserved: {cpu: lots}\n",
    );
    assert!(e.starts_with("t.yaml:5:"), "{e}");
    let e = load_error(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nstatus: {state: Opened}\n",
    );
    assert!(e.starts_with("t.yaml:4:"), "{e}");
    assert!(e.contains("expected Open, Closed"), "{e}");
    let e = load_error(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: {weight: 70000}\n",
    );
    assert!(e.contains("expected an integer from 1 to 65535"), "{e}");
}

#[test]
fn a_missing_parent_or_queue_names_the_closest() {
    let e = load_error(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: research}\n---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: {parent: reserch}\n",
    );
    assert!(e.contains("(closest: \"research\")"), "{e}");
    let text = format!(
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: research}}\n{}",
        gang("pg1", "reserch", None, "1", "1G")
    );
    let e = load_error(&text);
    assert!(e.starts_with("t.yaml:"), "{e}");
    assert!(
        e.contains("queue \"reserch\" is not a Volcano Queue"),
        "{e}"
    );
    assert!(e.contains("(closest: \"research\")"), "{e}");
}

#[test]
fn unknown_actions_and_plugins_name_the_closest() {
    let e = load_error(&sim("enqeue, allocate", &["gang"]));
    assert!(e.starts_with("t.yaml:8:"), "{e}");
    assert!(e.contains("action \"enqeue\""), "{e}");
    assert!(e.contains("(closest: \"enqueue\")"), "{e}");
    let e = load_error(&sim("enqueue, allocate", &["proportoin"]));
    assert!(e.contains("plugin \"proportoin\""), "{e}");
    assert!(e.contains("(closest: \"proportion\")"), "{e}");
}

/// Confs upstream takes without a word but that cannot mean what they say: no `actions`
/// (upstream keeps its whole default conf, these tiers ignored) and no `allocate` (nothing
/// with requests is ever placed). Both are load errors at the conf.
#[test]
fn a_conf_without_actions_or_without_allocate_is_refused() {
    let e = load_error(
        &sim("enqueue, allocate", &["gang"]).replace("      actions: \"enqueue, allocate\"\n", ""),
    );
    assert!(e.starts_with("t.yaml:"), "{e}");
    assert!(e.contains("has no `actions`"), "{e}");
    let e = load_error(&sim("enqueue, backfill", &["gang"]));
    assert!(e.starts_with("t.yaml:"), "{e}");
    assert!(e.contains("lack \"allocate\""), "{e}");
}

#[test]
fn kueue_admits_first_then_the_volcano_queue_holds_the_job() {
    // Both layers: a Kueue-admitted Job (queue-name label, ClusterQueue with room) whose
    // Volcano queue is capped below its pods stays Pending in Volcano's enqueue.
    let text = format!(
        "{}{}{}---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: small}}\nspec: {{weight: 1, capability: {{cpu: 500m}}}}\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: ns1\n  labels: {{kueue.x-k8s.io/queue-name: lq}}\n  annotations: {{kueuesim.io/duration: 1h, scheduling.volcano.sh/queue-name: small}}\nspec:\n  parallelism: 2\n  completions: 2\n  template:\n    spec:\n      schedulerName: volcano\n      containers:\n      - resources:\n          requests: {{cpu: '1'}}\n",
        sim("enqueue, allocate", &["gang", "proportion"]),
        node("n1", "8", "8G"),
        KUEUE,
    );
    let r = run_text(&text);
    let j = wl(&r, "ns1", "j");
    assert!(j.admitted_at.is_some(), "Kueue admits it");
    assert!(nodes(j).is_empty());
    assert_eq!(
        volcano_events(j),
        [
            (
                "Normal",
                "Unschedulable",
                "queue resource quota insufficient: insufficient cpu"
            ),
            ("Warning", "Unschedulable", &*held_warning(j)),
        ]
    );
}

const KUEUE: &str = "---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: '8'}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: ns1}
spec: {clusterQueue: cq}
";

/// A PodGroup of minMember 1 in `queue` (minResources `min`) with one pod of `cpu`/`memory`
/// already running on `node`.
fn running(name: &str, queue: &str, min: &str, cpu: &str, memory: &str, node: &str) -> String {
    gang(name, queue, Some(min), cpu, memory).replace(
        "  schedulerName: volcano\n",
        &format!("  schedulerName: volcano\n  nodeName: {node}\n"),
    ) + "status: {phase: Running}\n"
}

/// A Volcano Queue with `spec` (flow mapping body) and an optional state.
fn queue(name: &str, spec: &str, state: Option<&str>) -> String {
    let state = state.map_or(String::new(), |s| format!("status: {{state: {s}}}\n"));
    format!(
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: {name}}}\nspec: {{{spec}}}\n{state}"
    )
}

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

/// A pending pod of `cpu`/`memory`/`gpu` in PodGroup `pg` (without the PodGroup).
fn gpu_pod(name: &str, pg: &str, cpu: &str, memory: &str, gpu: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ns1\n  annotations: {{kueuesim.io/duration: 1h, scheduling.k8s.io/group-name: {pg}}}\nspec:\n  schedulerName: volcano\n  containers:\n  - resources:\n      requests: {{cpu: '{cpu}', memory: {memory}, nvidia.com/gpu: '{gpu}'}}\n"
    )
}

/// A PodGroup of `min_member` in `queue`, without minResources.
fn pod_group(name: &str, queue: &str, min_member: u32) -> String {
    format!(
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ns1}}\nspec: {{minMember: {min_member}, queue: {queue}}}\n"
    )
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

#[test]
fn weighted_queues_leave_a_node_idle_while_shares_do_not_fit_whole_node_gangs() {
    let r = run_dir("volcano/weighted-queues");
    let start = |name: &str| wl(&r, "team", name).running_at;
    let h = 3600.0;
    assert_eq!(start("research-0"), Some(0.0));
    assert_eq!(start("research-1"), Some(0.0));
    assert_eq!(start("research-2"), Some(h));
    assert_eq!(start("research-3"), Some(2.0 * h));
    assert_eq!(start("dev-0"), Some(2.0 * h));
    assert_eq!(start("dev-1"), Some(3.0 * h));
    assert_eq!(start("dev-2"), Some(3.0 * h));
    assert_eq!(start("dev-3"), Some(4.0 * h));
    // research-3 is let in at 1h, but waits for its share; dev-0 is let in at 2h.
    assert_eq!(wl(&r, "team", "research-3").inqueue_at, Some(h));
    assert_eq!(wl(&r, "team", "dev-0").inqueue_at, Some(2.0 * h));
    assert_eq!(
        volcano_events(wl(&r, "team", "dev-0"))[0],
        (
            "Normal",
            "Unschedulable",
            "resource in cluster is overused: overused nvidia.com/gpu"
        )
    );
    // Eight jobs × 8 GPUs × 1 h; one node idles from 1h to 2h and from 4h to 5h.
    assert_eq!(r.summary.gpu.busy_gpu_seconds, 8.0 * 8.0 * h);
    insta::assert_snapshot!(kueuesim_report::output::to_json(&r));
}

#[test]
fn proportion_case_3_over_deserved_is_not_allocated_with_only_allocatable_on() {
    // TestEnqueueAndAllocable case 3 ("exceed deserved, can not allocate"): the plugin with
    // `enabledAllocatable: true`, `enabledOverused: false`, `enableJobEnqueued: false`:
    // nothing votes, so pg5 is let in; q1's deserved is 2 cpu/2G and 1 cpu/2G + 1 cpu/1G
    // exceeds it in memory: it is not allocated.
    let text = std::fs::read_to_string(
        crate::util::scenarios_dir().join("volcano/enqueue-over-capability/scenario.yaml"),
    )
    .expect("readable")
    .replace(
        "        - name: proportion\n",
        "        - name: proportion\n          enabledAllocatable: true\n          enabledOverused: false\n          enableJobEnqueued: false\n",
    );
    let r = run_text(&text);
    let pg5 = wl(&r, "ns1", "pg5");
    assert!(nodes(pg5).is_empty());
    assert_eq!(
        volcano_events(pg5),
        [(
            "Warning",
            "Unschedulable",
            "1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; Pending: 1 Unschedulable"
        )]
    );
    // With the plugin's allocatable check off as well, nothing holds it back but the nodes
    // (n1 has 1 cpu and no memory left, n2 no cpu): the gang's own fit error.
    let open = text.replace("enabledAllocatable: true", "enabledAllocatable: false");
    let r = run_text(&open);
    let events = volcano_events(wl(&r, "ns1", "pg5"));
    assert!(events[0].2.contains("Origin reason is"), "{events:?}");
}

/// Whole GPUs in `dense` against the 0.1 `minResource`: upstream counts GPUs in milli
/// (`NewResource`, `MilliValue`) and `LessEqualWithDimensionAndResourcesName` has no
/// tolerance. Queues of weight 79 and 121 share 10 GPUs, so qa deserves 3.95 GPUs
/// (3950 milli): a fourth one-GPU job (4000 > 3950) is refused.
#[test]
fn proportion_counts_gpus_in_milli_units_without_tolerance() {
    let mut text = sim("enqueue, allocate", &["gang", "proportion"])
        + "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: '64', memory: 256Gi, pods: '110', nvidia.com/gpu: '10'}\n"
        + &queue("qa", "weight: 79", None)
        + &queue("qb", "weight: 121", None)
        + &queue("qc", "weight: 1", None)
        // Holds every GPU for a minute, so that the jobs below are all in the session that
        // places them (qc's job is done by then and counts for nothing).
        + &pod_group("blocker", "qc", 1)
        + &gpu_pod("blocker-p", "blocker", "100m", "100Mi", "10")
            .replace("duration: 1h", "duration: 1m");
    for (q, jobs) in [("qa", 10), ("qb", 7)] {
        for i in 0..jobs {
            let pg = format!("{q}-{i}");
            text += &pod_group(&pg, q, 1);
            text += &gpu_pod(&format!("{pg}-p"), &pg, "100m", "100Mi", "1");
        }
    }
    let r = run_text(&text);
    let bound = |q: &str, jobs: usize| {
        (0..jobs)
            .filter(|i| !nodes(wl(&r, "ns1", &format!("{q}-{i}"))).is_empty())
            .count()
    };
    // qb deserves 6.05 GPUs: 6 run in both counts.
    assert_eq!((bound("qa", 10), bound("qb", 7)), (3, 6));
}

/// Allocate skips a task its queue refuses and tries the rest (`allocateResourcesForTasks`:
/// `if !ssn.Allocatable(queue, task) { continue }`), then JobReady decides: with qa's
/// GPU capability 0 the worker is refused, the cpu-only launcher is enough for minMember 1.
#[test]
fn allocate_skips_a_refused_task_and_binds_the_rest() {
    let text = sim("enqueue, allocate", &["gang", "proportion"])
        + "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: '64', memory: 256Gi, pods: '110', nvidia.com/gpu: '8'}\n"
        + &queue("qa", "weight: 1, capability: {nvidia.com/gpu: '0'}", None)
        + &pod_group("job", "qa", 1)
        // Named so that the worker comes first, as the task the queue meets first.
        + &gpu_pod("a-worker", "job", "1", "1Gi", "1")
        + &gpu_pod("b-launcher", "job", "1", "1Gi", "0").replace(", nvidia.com/gpu: '0'", "");
    let r = run_text(&text);
    let job = wl(&r, "ns1", "job");
    // (asks for a GPU, pods bound) by pod set: the launcher only.
    let bound: Vec<(bool, usize)> = job
        .pod_sets
        .iter()
        .map(|p| (p.requests.contains_key("nvidia.com/gpu"), p.nodes.len()))
        .collect();
    assert_eq!(bound, [(true, 0), (false, 1)]);
    assert!(
        volcano_events(job).iter().all(|e| e.0 != "Warning"),
        "{:?}",
        volcano_events(job)
    );
}

/// A Volcano Job in queue `qa` (`minAvailable` line `job_min`, may be empty) with a `worker`
/// task (4 replicas, minAvailable 1, one GPU each) and a cpu-only `ps` task (2 replicas,
/// minAvailable 2, PriorityClass `ps_pc` when given).
fn volcano_job(job_min: &str, ps_pc: Option<&str>) -> String {
    let pc = ps_pc.map_or(String::new(), |p| {
        format!("\n        priorityClassName: {p}")
    });
    format!(
        "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: job, namespace: ns1, annotations: {{kueuesim.io/duration: 1h}}}}\nspec:\n  schedulerName: volcano\n  queue: qa{job_min}\n  tasks:\n  - name: worker\n    replicas: 4\n    minAvailable: 1\n    template:\n      spec:\n        containers:\n        - resources: {{requests: {{cpu: '1', memory: 1Gi, nvidia.com/gpu: '1'}}}}\n  - name: ps\n    replicas: 2\n    minAvailable: 2\n    template:\n      spec:{pc}\n        containers:\n        - resources: {{requests: {{cpu: '1', memory: 1Gi}}}}\n"
    )
}

/// A node of 64 cpu and 8 GPUs, and queue `qa` capped at `gpus` GPUs.
fn gpu_node_and_queue(gpus: u32) -> String {
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: '64', memory: 256Gi, pods: '110', nvidia.com/gpu: '8'}\n".to_string()
        + &queue("qa", &format!("weight: 1, capability: {{nvidia.com/gpu: '{gpus}'}}"), None)
}

/// Volcano's job controller (`calcPGMinResources`, `CalcPGMinResources`): with the job's
/// minAvailable at its default (the tasks' sum, 3), the PodGroup's minResources are each
/// task's own minAvailable pods, 1 worker and 2 ps: 1 GPU, within qa's capability of 2.
#[test]
fn volcano_job_min_resources_count_each_tasks_min_available() {
    let text = sim("enqueue, allocate", &["gang", "proportion"])
        + &gpu_node_and_queue(2)
        + &volcano_job("", None);
    let r = run_text(&text);
    let job = wl(&r, "ns1", "job");
    assert!(volcano_events(job).is_empty(), "{:?}", volcano_events(job));
    // Two workers (qa's capability) and both ps.
    let bound: Vec<usize> = job.pod_sets.iter().map(|p| p.nodes.len()).collect();
    assert_eq!(bound, [2, 2]);
}

/// `CalcFirstCountResources`: a job minAvailable (2) below the tasks' sum (3) counts the
/// first 2 pods by task PriorityClass, highest first: the ps task's, no GPU.
#[test]
fn volcano_job_min_resources_take_tasks_by_priority() {
    let text = sim("enqueue, allocate", &["gang", "proportion"])
        + "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
        + &gpu_node_and_queue(1)
        + &volcano_job("\n  minAvailable: 2", Some("high"));
    let r = run_text(&text);
    let job = wl(&r, "ns1", "job");
    assert!(volcano_events(job).is_empty(), "{:?}", volcano_events(job));
    let bound: Vec<usize> = job.pod_sets.iter().map(|p| p.nodes.len()).collect();
    assert_eq!(bound, [1, 2]);
}

/// A Queue's fields that are read but not simulated (node affinity, extendClusters, type,
/// dequeueStrategy) are a warning naming them, not dropped unseen.
#[test]
fn unsimulated_queue_fields_are_a_warning() {
    let text = format!(
        "{}{}{}{}",
        sim("enqueue, allocate", &["proportion"]),
        node("n1", "4", "4G"),
        queue(
            "q1",
            "weight: 1, dequeueStrategy: fifo, affinity: {nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [g1]}}",
            None
        ),
        gang("pg1", "q1", None, "1", "1G"),
    );
    let loaded = crate::util::load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        loaded.warnings.iter().any(|w| w.contains(
            "Volcano Queue \"q1\": spec.affinity, spec.dequeueStrategy not simulated yet"
        )),
        "{:?}",
        loaded.warnings
    );
}

/// The job webhook's bounds (`validateJobCreate`, `validateTaskTemplate`): a task's
/// minAvailable from 0 to its replicas, the job's from 0 to the tasks' total; each out of
/// range is an error at its place (they were clamped to 0, or let through).
#[test]
fn volcano_job_min_available_out_of_range_is_an_error() {
    let base = sim("enqueue, allocate", &["gang", "proportion"]) + &gpu_node_and_queue(8);
    let task_over = volcano_job("", None).replace(
        "replicas: 4\n    minAvailable: 1",
        "replicas: 4\n    minAvailable: 5",
    );
    let e = crate::util::load_error(&(base.clone() + &task_over));
    assert!(
        e.contains("task minAvailable 5: expected an integer from 0 to 4"),
        "{e}"
    );
    let task_negative = volcano_job("", None).replace(
        "replicas: 2\n    minAvailable: 2",
        "replicas: 2\n    minAvailable: -1",
    );
    let e = crate::util::load_error(&(base.clone() + &task_negative));
    assert!(
        e.contains("task minAvailable -1: expected an integer from 0 to 2"),
        "{e}"
    );
    let e = crate::util::load_error(&(base + &volcano_job("\n  minAvailable: 7", None)));
    assert!(
        e.contains("minAvailable 7: expected an integer from 0 to 6"),
        "{e}"
    );
}

/// An overcommit-factor below 1 is taken as the default 1.2, as upstream's plugin does, and
/// said in a warning, as upstream logs it (it was taken silently).
#[test]
fn an_overcommit_factor_below_one_is_a_warning() {
    let text = sim(
        "enqueue, allocate",
        &[
            "proportion",
            "overcommit\n          arguments: {overcommit-factor: 0.5}",
        ],
    ) + &node("n1", "4", "4G")
        + &queue("q1", "weight: 1", None)
        + &gang("pg1", "q1", None, "1", "1G");
    let loaded = crate::util::load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("overcommit-factor 0.5 is below 1")),
        "{:?}",
        loaded.warnings
    );
}

/// A plugin key upstream's `PluginOption` does not have is a misspelling, an error (it was
/// dropped unseen, so `enableReclaimabel: false` left the plugin voting); a switch upstream
/// has but kueuesim does not simulate is a warning; the actions' `configurations` too.
#[test]
fn a_misspelt_plugin_switch_is_an_error_and_an_unsimulated_one_a_warning() {
    let base = |plugin: &str| {
        sim("enqueue, allocate, reclaim", &["proportion", plugin])
            + &node("n1", "4", "4G")
            + &queue("q1", "weight: 1", None)
            + &gang("pg1", "q1", None, "1", "1G")
    };
    let e = crate::util::load_error(&base(
        "gang
          enableReclaimabel: false",
    ));
    assert!(
        e.contains("unknown field `enableReclaimabel`") && e.contains("spec.volcano.configuration"),
        "{e}"
    );
    let loaded = crate::util::load_text(
        "t.yaml",
        &base(
            "gang
          enableJobOrder: false",
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        loaded.warnings.iter().any(|w| w.contains(
            "plugin gang: enableJobOrder is not simulated: the plugin takes part as by default"
        )),
        "{:?}",
        loaded.warnings
    );
    // drf's enableHierarchy (hierarchical DRF) is not simulated: a warning, not silence.
    let loaded = crate::util::load_text(
        "t.yaml",
        &base(
            "drf
          enableHierarchy: true",
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("plugin drf: enableHierarchy (hierarchical DRF) is not simulated")),
        "{:?}",
        loaded.warnings
    );
    let text = base("gang").replacen(
        "tiers:",
        "configurations:
      - name: preempt
        arguments: {enableTopologyAwarePreemption: true}
      tiers:",
        1,
    );
    assert!(text.contains("configurations:"), "{text}");
    let loaded = crate::util::load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("configurations (the actions' own arguments) are not simulated")),
        "{:?}",
        loaded.warnings
    );
}

/// A cycle of parents is an error at the spec.parent of a queue in the cycle: a queue that
/// only leads into it (a, whose parent b is in the cycle b -> c -> b) is not the one named.
#[test]
fn a_parent_cycle_is_an_error_at_a_queue_in_it() {
    let text = sim("enqueue, allocate", &["capacity"])
        + &node("n1", "4", "4G")
        + &queue("a", "parent: b", None)
        + &queue("b", "parent: c", None)
        + &queue("c", "parent: b", None);
    let e = crate::util::load_error(&text);
    assert!(
        e.contains("Volcano Queue \"b\" is its own ancestor through spec.parent"),
        "{e}"
    );
    let line = text
        .lines()
        .position(|l| l.contains("name: b}"))
        .expect("queue b")
        + 2;
    assert!(e.starts_with(&format!("t.yaml:{line}:")), "{e}");
}

/// Each pod of `w` and its node at the end (None: pending).
fn pods(w: &WorkloadOut) -> Vec<(&str, Option<&str>)> {
    w.pod_sets
        .iter()
        .flat_map(|p| p.pods.iter().map(|x| (x.name.as_str(), x.node.as_deref())))
        .collect()
}

/// The `summary.evictions` count of `reason`.
fn evictions(r: &SimulationResult, reason: &str) -> u64 {
    r.summary.evictions.get(reason).copied().unwrap_or(0)
}

/// Volcano's `Evict` events on `w` (the cache's `Evict` with the action's reason), at `at`
/// seconds: (time, message).
fn evict_events(w: &WorkloadOut) -> Vec<(f64, &str)> {
    w.events
        .iter()
        .filter(|e| e.source == "volcano" && e.reason == "Evict")
        .map(|e| (e.at, e.message.as_str()))
        .collect()
}

/// The pods evicted from `w`: its pods left without a node (each victim's replacement
/// finds no room in these cases).
fn evicted(w: &WorkloadOut) -> Vec<&str> {
    pods(w)
        .into_iter()
        .filter(|p| p.1.is_none())
        .map(|p| p.0)
        .collect()
}

#[test]
fn preempt_case_one_task_of_another_job_for_the_gang() {
    // preempt_test.go "preempt one task of different job to fit both jobs on one node".
    let r = run_dir("volcano/preempt-one-task");
    let pg1 = wl(&r, "c1", "pg1");
    assert_eq!(evicted(pg1), ["preemptee1"]);
    assert_eq!(evict_events(pg1), [(0.0, "preempt")]);
    // pg1 keeps its minMember running: the gang plugin marks only a job that is not ready,
    // so its replacement pod's wait gives no PodGroup Unschedulable event.
    assert!(
        !volcano_events(pg1)
            .iter()
            .any(|(_, reason, _)| *reason == "Unschedulable"),
        "{:?}",
        volcano_events(pg1)
    );
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(
        pods(wl(&r, "c1", "pg2")),
        [("preemptor1", Some("n1")), ("preemptor2", None)]
    );
    // Bound once the victim has terminated (podTermination 30s).
    let bound = wl(&r, "c1", "pg2").pod_sets[0].pods[0].bound_at;
    assert_eq!(bound, Some(30.0));
}

#[test]
fn preempt_case_enough_tasks_for_a_large_task() {
    let r = run_dir("volcano/preempt-enough-tasks");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1", "preemptee2"]);
    assert_eq!(evictions(&r, "Preempt"), 2);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
}

#[test]
fn preempt_case_low_priority_job_for_the_queue_share() {
    // "preempt low priority job in same queue" (volcano issue 3161): the node has room,
    // the queue's deserved share has not.
    let r = run_dir("volcano/preempt-queue-allocatable");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
    assert_eq!(evictions(&r, "Preempt"), 1);
}

#[test]
fn preempt_case_commits_only_the_node_that_fits() {
    let r = run_dir("volcano/preempt-commit-one-node");
    assert_eq!(pods(wl(&r, "c1", "pg1")), [("preemptee1", Some("n1"))]);
    assert!(evict_events(wl(&r, "c1", "pg1")).is_empty());
    assert_eq!(evicted(wl(&r, "c1", "pg3")), ["preemptee2"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n2"))]);
    assert_eq!(evictions(&r, "Preempt"), 1);
}

#[test]
fn preempt_tries_the_nodes_by_node_score() {
    // `normalPreempt` sorts the predicate nodes by the node-order plugins' score
    // (`PrioritizeNodes`, `SortNodes`): leastrequested puts n2 (more memory left) before
    // n1, so b1 is the victim, not a1 as node order would have it.
    let r = run_dir("volcano/preempt-node-score");
    assert_eq!(pods(wl(&r, "c1", "pga")), [("a1", Some("n1"))]);
    assert!(evict_events(wl(&r, "c1", "pga")).is_empty());
    assert_eq!(evicted(wl(&r, "c1", "pgb")), ["b1"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n2"))]);
    assert_eq!(evictions(&r, "Preempt"), 1);
}

#[test]
fn drf_votes_victims_among_jobs_of_one_priority() {
    // The first tier (priority, gang, conformance) finds no victim of a lower priority, so
    // drf's vote in the second decides: pga keeps the preemptor's share (0.5) without a1.
    let r = run_dir("volcano/preempt-drf");
    assert_eq!(evicted(wl(&r, "c1", "pga")), ["a1"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("p1", Some("n1"))]);
    assert_eq!(evictions(&r, "Preempt"), 1);
    // A task of 3 cpu gives pg2 a share of 0.75, above what pga keeps without a1 (0.5):
    // drf votes for no one and nothing is evicted.
    let text = volcano_scenario("preempt-drf").replace(
        "requests: {cpu: '2', memory: 256Mi}",
        "requests: {cpu: '3', memory: 256Mi}",
    );
    let r = run_text(&text);
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("p1", None)]);
}

/// A scenario file of `scenarios/volcano/` as text.
fn volcano_scenario(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../../scenarios/volcano/{name}/scenario.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn enable_preemptable_and_enable_job_starving_take_a_plugin_out_of_their_function() {
    // `enablePreemptable: false` on priority (one tier, jobs of one priority): priority no
    // longer vetoes, so gang and conformance vote every pod of pga (`Session.Preemptable`
    // skips priority) and the victims' order takes the one scheduled last, a3.
    let text = volcano_scenario("preempt-drf").replace(
        "      - plugins:
        - name: priority
        - name: gang
        - name: conformance
      - plugins:
        - name: drf
        - name: proportion",
        "      - plugins:
        - name: priority
          enablePreemptable: false
        - name: gang
        - name: conformance
        - name: proportion",
    );
    assert!(text.contains("enablePreemptable: false"), "{text}");
    let loaded = load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !loaded.warnings.iter().any(|w| w.contains("not simulated")),
        "{:?}",
        loaded.warnings
    );
    let r = run_text(&text);
    assert_eq!(evicted(wl(&r, "c1", "pga")), ["a3"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("p1", Some("n1"))]);
    // `enableJobStarving: false` on gang and priority: no plugin says the preemptor's job
    // starves (`Session.JobStarving` is false without one), so preempt skips it.
    let text = volcano_scenario("preempt-one-task").replace(
        "        - name: gang
        - name: priority",
        "        - name: gang
          enableJobStarving: false
        - name: priority
          enableJobStarving: false",
    );
    assert!(text.contains("enableJobStarving: false"), "{text}");
    let r = run_text(&text);
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert!(evicted(wl(&r, "c1", "pg1")).is_empty());
}

#[test]
fn preempt_cases_with_best_effort_pods_take_the_pod_slot() {
    // preempt_test.go "unBestEffort high-priority pod preempt BestEffort low-priority pod
    // in same queue": n1 holds one pod; the BestEffort victim goes, the preemptor binds.
    // Guards: the main branch before BestEffort pods were told apart agrees; each fails if
    // the pod count stopped counting or a pod without requests stopped being a victim.
    let r = run_dir("volcano/preempt-best-effort-victim");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1"]);
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
    // "BestEffort high-priority pod preempt BestEffort low-priority pod in same queue":
    // one eviction, as upstream expects (the job starves: gang counts no pending
    // BestEffort pod as occupied); allocate then places neither BestEffort pod (backfill's
    // work, not listed).
    let r = run_dir("volcano/preempt-best-effort-preemptor");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1"]);
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
    // "BestEffort pod is not supported to preempt unBestEffort pod" (preempt's filter): the
    // BestEffort preemptor leaves a victim that requests resources alone.
    let text = volcano_scenario("preempt-best-effort-preemptor").replacen(
        "  nodeName: n1
  containers:
  - name: c",
        "  nodeName: n1
  containers:
  - resources:
      requests: {cpu: '1', memory: 1G}",
        1,
    );
    assert!(text.contains("requests: {cpu: '1', memory: 1G}"), "{text}");
    let r = run_text(&text);
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg1")), [("preemptee1", Some("n1"))]);
}

#[test]
fn backfill_places_best_effort_pods_and_nothing_else_does() {
    // backfill places be1 although proportion reads q1 (whose jobs request nothing) as
    // overused: it checks no queue.
    let r = run_dir("volcano/backfill-best-effort");
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("be1", Some("n1"))]);
    // Without backfill, allocate skips BestEffort tasks: be1 stays pending, with the
    // queue plugin or without it.
    let text = volcano_scenario("backfill-best-effort").replace(
        r#"actions: "enqueue, allocate, backfill""#,
        r#"actions: "enqueue, allocate""#,
    );
    assert!(!text.contains("backfill\""), "{text}");
    let r = run_text(&text);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("be1", None)]);
    let r = run_text(&text.replace("        - name: proportion\n", ""));
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("be1", None)]);
}

#[test]
fn preempt_case_takes_a_jobs_lower_priority_pod_first() {
    // preempt_test.go "preempt low priority job in same queue but not pod with
    // preemptable=false or higher priority": preemptee1 is not preemptable, preemptee3's own
    // priority is high; the victims' order takes preemptee2 (its job's task order reversed).
    let r = run_dir("volcano/preempt-task-priority");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee2"]);
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
}

#[test]
fn preempt_case_multi_queue_preempts_within_the_queue() {
    let r = run_dir("volcano/preempt-multi-queue");
    assert_eq!(pods(wl(&r, "c1", "pg1")), [("q1-runner1", Some("n1"))]);
    assert_eq!(evicted(wl(&r, "c1", "pg2")), ["q2-preemptee1"]);
    assert_eq!(pods(wl(&r, "c1", "pg3")), [("q2-preemptor1", Some("n1"))]);
}

#[test]
fn preempt_cases_that_evict_nothing() {
    // "do not preempt if there are enough idle resources", "do not preempt if job is
    // pipelined", "preempt low priority job in same queue: allocatable and has enough
    // resource, don't preempt", "rollback evictions when preemptor exceeds queue capacity
    // after evicting victims". Guards: today's main evicts nothing either.
    let r = run_dir("volcano/preempt-idle");
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(
        pods(wl(&r, "c1", "pg1")),
        [
            ("preemptee1", Some("n1")),
            ("preemptee2", Some("n1")),
            ("preemptor1", Some("n1"))
        ]
    );
    let r = run_dir("volcano/preempt-pipelined");
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(
        pods(wl(&r, "c1", "pg2")),
        [("preemptee3", Some("n1")), ("preemptor2", None)]
    );
    let r = run_dir("volcano/preempt-queue-room");
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg1")), [("preemptee1", Some("n1"))]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
    let r = run_dir("volcano/preempt-rollback");
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert!(evict_events(wl(&r, "c1", "pg1")).is_empty());
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
}

#[test]
fn reclaim_case_overused_queue() {
    // reclaim_test.go "Two Queue with one Queue overusing resource, should reclaim".
    let r = run_dir("volcano/reclaim-overused-queue");
    let pg1 = wl(&r, "c1", "pg1");
    assert_eq!(evicted(pg1), ["preemptee2"]);
    assert_eq!(evict_events(pg1), [(0.0, "reclaim")]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
}

#[test]
fn reclaim_case_lower_priority_job_first() {
    let r = run_dir("volcano/reclaim-job-order");
    assert!(evicted(wl(&r, "c1", "pg1")).is_empty());
    assert_eq!(evicted(wl(&r, "c1", "pg2")), ["preemptee2-1"]);
    assert_eq!(pods(wl(&r, "c1", "pg3")), [("preemptor1", Some("n1"))]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
}

#[test]
fn reclaim_case_lower_priority_queue_first() {
    let r = run_dir("volcano/reclaim-queue-priority");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1-1"]);
    assert!(evicted(wl(&r, "c1", "pg2")).is_empty());
    assert_eq!(pods(wl(&r, "c1", "pg3")), [("preemptor1", Some("n1"))]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
}

#[test]
fn reclaim_case_counts_the_node_idle_resources() {
    let r = run_dir("volcano/reclaim-node-idle");
    assert_eq!(evicted(wl(&r, "c1", "pg1")), ["preemptee1-1"]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptee2-1", Some("n1"))]);
    assert_eq!(pods(wl(&r, "c1", "pg3")), [("preemptor1", Some("n1"))]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
}

#[test]
fn reclaim_cases_that_evict_nothing() {
    // "can not reclaim resources when queue is not open(proportion plugin)" and "only
    // commit evictions on the node where reclaim succeeds". Guards: today's main evicts
    // nothing either.
    let r = run_dir("volcano/reclaim-closed-queue");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert!(evicted(wl(&r, "c1", "pg1")).is_empty());
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
    let r = run_dir("volcano/reclaim-idle-node");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg-victim")), [("victim-n1", Some("n1"))]);
    assert_eq!(
        pods(wl(&r, "c1", "pg-preemptor")),
        [("preemptor1", Some("n1"))]
    );
}

/// The pods of every workload that ended without a node, by PodGroup.
fn all_evicted(r: &SimulationResult) -> Vec<(&str, Vec<&str>)> {
    r.workloads
        .iter()
        .map(|w| (w.name.as_str(), evicted(w)))
        .filter(|(_, e)| !e.is_empty())
        .collect()
}

#[test]
fn capacity_reclaim_case_2_from_a_queue_above_its_deserved() {
    // capacity_test.go Test_capacityPlugin_OnSessionOpenWithoutHierarchy "case2".
    let r = run_dir("volcano/capacity-reclaim-below-deserved");
    assert_eq!(evicted(wl(&r, "ns1", "pg5")), ["p6"]);
    assert_eq!(evict_events(wl(&r, "ns1", "pg5")), [(0.0, "reclaim")]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg6")), [("p7", Some("n2"))]);
    assert_eq!(
        wl(&r, "ns1", "pg6").pod_sets[0].pods[0].bound_at,
        Some(30.0)
    );
}

#[test]
fn capacity_reclaim_case_3_a_scalar_only_reclaimer() {
    let r = run_dir("volcano/capacity-reclaim-scalar-only");
    assert_eq!(all_evicted(&r), [("pg7", vec!["p9"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg9")), [("p12", Some("n4"))]);
}

#[test]
fn capacity_reclaim_case_5_within_the_deserved_in_one_dimension() {
    let r = run_dir("volcano/capacity-reclaim-one-dimension");
    assert_eq!(all_evicted(&r), [("pg18", vec!["p18"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg17")), [("p17", Some("n1"))]);
}

#[test]
fn capacity_reclaim_case_8_only_in_the_reclaimer_dimensions() {
    let r = run_dir("volcano/capacity-reclaim-reclaimer-dimensions");
    assert_eq!(all_evicted(&r), [("pg28", vec!["p28"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg30")), [("p30", Some("n8"))]);
}

#[test]
fn capacity_reclaim_cases_that_evict_nothing() {
    // "case6", "case7", "case9" and "case10", and reclaim_test.go "can not reclaim resources
    // when queue is not open(capacity plugin)". Guards: today's main evicts nothing either.
    let r = run_dir("volcano/capacity-reclaim-closed-queue");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
    let r = run_dir("volcano/capacity-reclaim-above-deserved");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "ns1", "pg20")), [("p20", None)]);
    let r = run_dir("volcano/capacity-reclaim-scalar-not-allocated");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "ns1", "pg25")), [("p25", None)]);
    let r = run_dir("volcano/capacity-reclaim-scalar-queue");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "ns1", "pg32")), [("p32", None)]);
    let r = run_dir("volcano/capacity-reclaim-capability");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "ns1", "pg34")), [("p34", None)]);
}

#[test]
fn capacity_hierarchy_reclaim_cases_3_and_12() {
    // capacity_test.go Test_capacityPlugin_OnSessionOpenWithHierarchy "case3" and "case12".
    let r = run_dir("volcano/capacity-hierarchy-reclaim");
    assert_eq!(all_evicted(&r), [("pg5", vec!["p7"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg6")), [("p8", Some("n1"))]);
    let r = run_dir("volcano/capacity-hierarchy-reclaim-scalar");
    assert_eq!(all_evicted(&r), [("pg17", vec!["p17"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg16")), [("p16", Some("n3"))]);
}

#[test]
fn capacity_ancestor_reclaim_cases_that_evict() {
    // capacity_test.go Test_capacityPlugin_AncestorReclaimScenarios "case1", "case5" and
    // "case6": the reclaimer's parent deserves what it asks for (level 1); the victim's
    // queue is above its deserved (level 0), and so is its parent (level 1).
    let r = run_dir("volcano/capacity-ancestor-parent-deserved");
    assert_eq!(all_evicted(&r), [("pg1", vec!["p1"])]);
    assert_eq!(pods(wl(&r, "ns1", "pg2")), [("p2", Some("n1"))]);
    // "case2": across project roots, the lowest-priority victim of the queue above its
    // deserved under a parent above its own.
    let r = run_dir("volcano/capacity-ancestor-cross-parent");
    assert_eq!(all_evicted(&r), [("pg4", vec!["p4"])]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg5")), [("p5", Some("n1"))]);
    // "case3": the sibling queue's victim p3 for pg6; pg4-reclaimed, whose queue deserves
    // nothing, reclaims nothing. The test's PodGroup phases (Inqueue, Pending) are not read:
    // both are let in. A guard: today's main evicts the same.
    let r = run_dir("volcano/capacity-ancestor-sibling-first");
    assert_eq!(evict_events(wl(&r, "ns1", "pg3")), [(0.0, "reclaim")]);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(pods(wl(&r, "ns1", "pg6")), [("p6", Some("n1"))]);
    assert_eq!(pods(wl(&r, "ns1", "pg4-reclaimed")), [("p4", None)]);
    for dir in ["capacity-ancestor-level-0", "capacity-ancestor-level-1"] {
        let r = run_dir(&format!("volcano/{dir}"));
        assert_eq!(all_evicted(&r), [("pg-victim", vec!["p-victim"])], "{dir}");
        assert_eq!(evictions(&r, "Reclaim"), 1, "{dir}");
        assert_eq!(
            pods(wl(&r, "ns1", "pg-reclaimer")),
            [("p-reclaimer", Some("n1"))],
            "{dir}"
        );
    }
}

#[test]
fn capacity_ancestor_reclaim_cases_that_evict_nothing() {
    // "case4", "case7" (the level-1 tree of case 6 at level 2: the grandparent is within
    // its deserved), "case8", "case9", "case10" and "case11". Guards: today's main evicts
    // nothing either.
    let r = run_dir("volcano/capacity-ancestor-victim-within-deserved");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(pods(wl(&r, "ns1", "pg2")), [("p2", None)]);
    for dir in [
        "capacity-ancestor-level-2",
        "capacity-ancestor-siblings-unset",
        "capacity-ancestor-shared-grandparent",
        "capacity-ancestor-unbalanced",
        "capacity-ancestor-unbalanced-depth-2",
    ] {
        let r = run_dir(&format!("volcano/{dir}"));
        assert_eq!(evictions(&r, "Reclaim"), 0, "{dir}");
        assert_eq!(
            pods(wl(&r, "ns1", "pg-reclaimer")),
            [("p-reclaimer", None)],
            "{dir}"
        );
    }
}

#[test]
fn allocate_takes_the_queues_by_priority() {
    // capacity_test.go Test_capacityPlugin_OnSessionOpenWithoutHierarchy "case4" and
    // proportion_test.go TestAllocate "case0": one node free, a pending job in the queue of
    // priority 1 and one in the queue of priority 10 (listed after it); the second binds.
    let r = run_dir("volcano/capacity-queue-priority");
    assert_eq!(pods(wl(&r, "ns1", "pg12")), [("p15", Some("n6"))]);
    assert_eq!(pods(wl(&r, "ns1", "pg11")), [("p14", None)]);
    let r = run_dir("volcano/proportion-queue-priority");
    assert_eq!(pods(wl(&r, "ns1", "pg3")), [("p3", Some("n2"))]);
    assert_eq!(pods(wl(&r, "ns1", "pg2")), [("p2", None)]);
    // With capacity's `enableQueueOrder: false` nothing orders the queues: the jobs go in
    // kueuesim's placement order, p14 (listed first) binds.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/volcano/capacity-queue-priority/scenario.yaml"),
    )
    .expect("the scenario");
    let off = text.replace(
        "        - name: capacity\n",
        "        - name: capacity\n          enableQueueOrder: false\n",
    );
    assert_ne!(off, text);
    let loaded = load_text("t.yaml", &off).unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    assert_eq!(pods(wl(&r, "ns1", "pg11")), [("p14", Some("n6"))]);
    assert_eq!(pods(wl(&r, "ns1", "pg12")), [("p15", None)]);
}

#[test]
fn allocate_takes_queues_of_equal_priority_by_share() {
    // proportion's QueueOrderFn after the priority: the smaller share first. qa runs 1 cpu
    // and deserves 1 (share 1), qb runs nothing (share 0); of the two 1-cpu jobs, ga listed
    // first, only one fits n1: qb's. The queue checks are off so that only the order decides.
    let conf = SIM.replace("ACTIONS", "allocate").replace(
        "PLUGINS",
        "- name: proportion\n          enabledAllocatable: false\n          enabledOverused: false",
    );
    let text = |qa: &str| {
        conf.clone()
            + &node("n1", "2", "2G")
            + &queue("qa", qa, None)
            + &queue("qb", "weight: 1", None)
            + &running("pa", "qa", "{cpu: '1', memory: 1G}", "1", "1G", "n1")
            + &gang("ga", "qa", None, "1", "1G")
            + &gang("gb", "qb", None, "1", "1G")
    };
    let r = run_text(&text("weight: 1"));
    assert_eq!(nodes(wl(&r, "ns1", "gb")), ["n1"]);
    assert!(nodes(wl(&r, "ns1", "ga")).is_empty());
    // A queue's higher priority goes before its larger share.
    let r = run_text(&text("weight: 1, priority: 1"));
    assert!(nodes(wl(&r, "ns1", "gb")).is_empty());
    assert_eq!(nodes(wl(&r, "ns1", "ga")), ["n1"]);
}

/// The text of `scenarios/<rel>/scenario.yaml`.
fn scenario_text(rel: &str) -> String {
    std::fs::read_to_string(crate::util::scenarios_dir().join(rel).join("scenario.yaml"))
        .expect("the scenario")
}

#[test]
fn preempt_case_preemption_policy_never_evicts_nothing() {
    // preempt_test.go "can not preempt resources when task preemption policy is never".
    let r = run_dir("volcano/preempt-policy-never");
    assert_eq!(evictions(&r, "Preempt"), 0);
    assert_eq!(pods(wl(&r, "c1", "pg1")), [("preemptee1", Some("n1"))]);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
    // Without the policy the same job preempts (the guard of the case).
    let text = scenario_text("volcano/preempt-policy-never");
    let r = run_text(&text.replace("  preemptionPolicy: Never\n", ""));
    assert_eq!(evictions(&r, "Preempt"), 1);
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", Some("n1"))]);
}

#[test]
fn reclaim_cases_preemption_policy_never() {
    // reclaim_test.go "can not reclaim resources when task preemption policy is never": as
    // upstream (pg2 of minMember 0 does not starve either), then with minMember 1, where
    // only the policy keeps reclaim from evicting.
    let r = run_dir("volcano/reclaim-policy-never");
    assert_eq!(evictions(&r, "Reclaim"), 0);
    // The variant: pg2 of minMember 1, and n1 of 2 cpu, 2Gi full with a second pod of pg1,
    // so that q2 deserves the 1 cpu preemptor1 asks for (weights 5 and 10: q1 1 cpu, q2 1).
    let original = scenario_text("volcano/reclaim-policy-never");
    let preemptee = &original[original
        .find("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: preemptee1")
        .expect("preemptee1")..];
    let preemptee = &preemptee[..preemptee[4..].find("---").expect("a next document") + 4];
    let text = original
        .replace(
            "metadata: {name: pg2, namespace: c1}\nspec: {minMember: 0",
            "metadata: {name: pg2, namespace: c1}\nspec: {minMember: 1",
        )
        .replace(
            "allocatable: {cpu: '1', memory: 1Gi, pods: '1'}",
            "allocatable: {cpu: '2', memory: 2Gi, pods: '2'}",
        )
        + &preemptee.replace("preemptee1", "preemptee2");
    let r = run_text(&text);
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert_eq!(
        pods(wl(&r, "c1", "pg1")),
        [("preemptee1", Some("n1")), ("preemptee2", Some("n1"))]
    );
    assert_eq!(pods(wl(&r, "c1", "pg2")), [("preemptor1", None)]);
    // The pod's own policy taken out: its PriorityClass's Never (copied into the pod by the
    // API server's Priority admission) still holds it back.
    let class_only = text.replace("  preemptionPolicy: Never\n", "");
    assert_ne!(class_only, text);
    assert_eq!(evictions(&run_text(&class_only), "Reclaim"), 0);
    // The pod's own PreemptLowerPriority goes before its class's Never: it reclaims.
    let own = text.replace(
        "  preemptionPolicy: Never\n",
        "  preemptionPolicy: PreemptLowerPriority\n",
    );
    let r = run_text(&own);
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(evicted(wl(&r, "c1", "pg1")).len(), 1);
    // "Reclaim succeeds for second task when first task has PreemptionPolicy=Never": the
    // second task evicts victim-pod (a guard: main evicts it for the first task); with both
    // tasks Never nothing is evicted.
    let r = run_dir("volcano/reclaim-policy-never-second-task");
    assert_eq!(evictions(&r, "Reclaim"), 1);
    assert_eq!(evicted(wl(&r, "c1", "pg-victim")), ["victim-pod"]);
    let text = scenario_text("volcano/reclaim-policy-never-second-task");
    let both = text.replace(
        "  name: preemptor-task2-preemptable\n  namespace: c1\n  annotations: {kueuesim.io/duration: 1h, scheduling.k8s.io/group-name: pg-preemptor}\nspec:\n  schedulerName: volcano\n",
        "  name: preemptor-task2-preemptable\n  namespace: c1\n  annotations: {kueuesim.io/duration: 1h, scheduling.k8s.io/group-name: pg-preemptor}\nspec:\n  schedulerName: volcano\n  preemptionPolicy: Never\n",
    );
    assert_ne!(both, text);
    let r = run_text(&both);
    assert_eq!(evictions(&r, "Reclaim"), 0);
    assert!(evicted(wl(&r, "c1", "pg-victim")).is_empty());
}

#[test]
fn a_misspelt_preemption_policy_is_an_error_at_its_place() {
    let text = scenario_text("volcano/reclaim-policy-never");
    let e = load_error(&text.replace("  preemptionPolicy: Never\n", "  preemptionPolicy: Nevr\n"));
    assert!(
        e.contains(
            "invalid preemptionPolicy \"Nevr\": expected one of Never, PreemptLowerPriority"
        ),
        "{e}"
    );
    assert!(e.contains("t.yaml:"), "{e}");
    let e = load_error(&text.replace(
        "value: 1000\npreemptionPolicy: Never",
        "value: 1000\npreemptionPolicy: never",
    ));
    assert!(e.contains("invalid preemptionPolicy \"never\""), "{e}");
}
