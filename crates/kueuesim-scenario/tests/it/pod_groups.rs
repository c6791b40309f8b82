//! Gangs as a cluster dump writes them: a Volcano or KAI PodGroup with its bare Pods (some
//! already bound), and what the loader refuses or warns about in that form.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, result};

use crate::util::{load_error, load_text, wl};

/// Two leaves of two 2-cpu nodes under a spine (Volcano HyperNodes), and `objects`.
fn cluster(objects: &str) -> String {
    let mut text = String::from(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {name: t}\nspec: {until: 1h}\n",
    );
    for (leaf, nodes) in [("s0", ["s0-n1", "s0-n2"]), ("s1", ["s1-n3", "s1-n4"])] {
        for n in nodes {
            text.push_str(&format!(
                "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\nstatus: {{allocatable: {{cpu: '2', memory: 4Gi, pods: '110'}}}}\n"
            ));
        }
        text.push_str(&format!(
            "---\napiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {{name: {leaf}}}\nspec:\n  tier: 1\n  members:\n  - {{type: Node, selector: {{exactMatch: {{name: {}}}}}}}\n  - {{type: Node, selector: {{exactMatch: {{name: {}}}}}}}\n",
            nodes[0], nodes[1]
        ));
    }
    text.push_str("---\napiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: spine}\nspec:\n  tier: 2\n  members:\n  - {type: HyperNode, selector: {exactMatch: {name: s0}}}\n  - {type: HyperNode, selector: {exactMatch: {name: s1}}}\n---\n");
    text.push_str(objects);
    text
}

/// A bare Pod of 1 cpu (`extra`: more of its metadata, indented as metadata fields).
fn pod(name: &str, extra: &str, spec: &str) -> String {
    format!(
        "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: {name}\n    namespace: team\n{extra}  spec:\n{spec}    containers:\n    - resources: {{requests: {{cpu: '1'}}}}\n"
    )
}

fn run(text: &str) -> SimulationResult {
    let loaded = load_text("dump.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    result(&loaded.world, &Simulation::new(&loaded.world).run())
}

/// `kubectl get pods,podgroups -A -o yaml` of a Volcano gang of four whose first two pods
/// already run on s0-n1: one workload, the PodGroup, with the pods' own names; hard tier 1
/// pins the rest to s0, the leaf where the gang runs (s0-n2 takes both, 1 cpu each).
#[test]
fn a_volcano_podgroup_and_its_pods_are_one_gang_that_continues_where_it_runs() {
    let group =
        "    annotations: {scheduling.k8s.io/group-name: trainer, kueuesim.io/duration: 2h}\n";
    let mut items = String::from(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: scheduling.volcano.sh/v1beta1\n  kind: PodGroup\n  metadata: {name: trainer, namespace: team}\n  spec:\n    minMember: 4\n    networkTopology: {mode: hard, highestTierAllowed: 1}\n",
    );
    items += &pod(
        "trainer-worker-0",
        group,
        "    schedulerName: volcano\n    nodeName: s0-n1\n",
    );
    items += &pod(
        "trainer-worker-1",
        group,
        "    schedulerName: volcano\n    nodeName: s0-n1\n",
    );
    items += &pod("trainer-worker-2", group, "    schedulerName: volcano\n");
    items += &pod("trainer-worker-3", group, "    schedulerName: volcano\n");
    let r = run(&cluster(&items));
    assert_eq!(r.workloads.len(), 1, "one gang, not four pods");
    let w = wl(&r, "team", "trainer");
    assert_eq!(w.kind, "PodGroup");
    assert_eq!(w.state, "Running");
    let pods: Vec<(&str, &str)> = w.pod_sets[0]
        .pods
        .iter()
        .zip(&w.pod_sets[0].nodes)
        .map(|(p, n)| (p.name.as_str(), n.as_str()))
        .collect();
    assert_eq!(
        pods,
        [
            ("trainer-worker-0", "s0-n1"),
            ("trainer-worker-1", "s0-n1"),
            ("trainer-worker-2", "s0-n2"),
            ("trainer-worker-3", "s0-n2"),
        ]
    );
}

/// KAI: a PodGroup's `spec.queue` and subgroups, pods by `pod-group-name` and
/// `kai.scheduler/subgroup-name`; pod sets in the order of the PodGroup's subgroups, bound
/// members listed first in their pod set whatever the dump's order.
#[test]
fn a_kai_podgroup_takes_its_queue_and_subgroups_from_the_podgroup() {
    let objects = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: research}\nspec: {resources: {gpu: {quota: -1, limit: -1}}}\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: scheduling.run.ai/v2alpha2\n  kind: PodGroup\n  metadata: {name: llm, namespace: team}\n  spec:\n    queue: research\n    minMember: 3\n    subGroups:\n    - {name: leaders, minMember: 1}\n    - {name: workers, minMember: 2}\n";
    let leader = "    labels: {kai.scheduler/subgroup-name: leaders}\n    annotations: {pod-group-name: llm}\n";
    let worker = "    labels: {kai.scheduler/subgroup-name: workers}\n    annotations: {pod-group-name: llm}\n";
    let mut text = cluster(objects);
    text += &pod("llm-w-1", worker, "    schedulerName: kai-scheduler\n");
    text += &pod("llm-leader", leader, "    schedulerName: kai-scheduler\n");
    text += &pod(
        "llm-w-0",
        worker,
        "    schedulerName: kai-scheduler\n    nodeName: s1-n4\n",
    );
    let loaded = load_text("dump.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    let ws = &loaded.world.workloads;
    assert_eq!(ws.len(), 1);
    let w = &ws[0];
    assert_eq!((w.kind.as_str(), w.name.as_str()), ("PodGroup", "llm"));
    assert_eq!(w.gang.kai_queue, Some(0), "spec.queue: research");
    assert_eq!(w.gang.pod_group.as_deref(), Some("llm"));
    let sets: Vec<(&str, u32)> = w
        .pod_sets
        .iter()
        .map(|p| (p.name.as_str(), p.count))
        .collect();
    assert_eq!(sets, [("leaders", 1), ("workers", 2)]);
    assert_eq!(
        w.gang.pod_names,
        [vec!["llm-leader"], vec!["llm-w-0", "llm-w-1"]]
    );
    assert_eq!(w.gang.pre_bound(), 1);
    assert_eq!(w.gang.min_member, Some(3));
    let subgroups: Vec<&str> = w
        .gang
        .pod_set_subgroup
        .iter()
        .map(|s| {
            w.gang.kai_subgroups[s.expect("in a subgroup")]
                .name
                .as_str()
        })
        .collect();
    assert_eq!(subgroups, ["leaders", "workers"]);
}

#[test]
fn podgroup_inputs_that_cannot_be_a_gang_are_errors_with_positions() {
    let pg = "- apiVersion: scheduling.volcano.sh/v1beta1\n  kind: PodGroup\n  metadata: {name: pg, namespace: team}\n  spec: {minMember: 2}\n";
    let member = "    annotations: {scheduling.k8s.io/group-name: pg}\n";
    // Pods naming a PodGroup that is not in the input.
    let text = cluster(&format!(
        "apiVersion: v1\nkind: List\nitems:\n{}",
        pod("a", member, "    schedulerName: volcano\n")
    ));
    let e = load_error(&text);
    assert!(
        e.contains("scheduling.k8s.io/group-name \"pg\": no Volcano PodGroup team/pg in the input"),
        "{e}"
    );
    assert!(e.starts_with("t.yaml:"), "a position: {e}");
    // Managed by Kueue without Kueue's own pod group: Kueue would admit pod by pod.
    let managed = "    labels: {kueue.x-k8s.io/queue-name: q}\n    annotations: {scheduling.k8s.io/group-name: pg}\n";
    let text = cluster(&format!(
        "apiVersion: v1\nkind: List\nitems:\n{pg}{}{}",
        pod("a", managed, "    schedulerName: volcano\n"),
        pod("b", managed, "    schedulerName: volcano\n")
    ));
    let e = load_error(&text);
    assert!(
        e.contains("the pods of PodGroup team/pg are managed by Kueue (LocalQueue \"q\") without kueue.x-k8s.io/pod-group-name"),
        "{e}"
    );
    // A Kueue pod group on two schedulers.
    let kueue = "    labels: {kueue.x-k8s.io/pod-group-name: g}\n    annotations: {kueue.x-k8s.io/pod-group-total-count: '2'}\n";
    let text = cluster(&format!(
        "apiVersion: v1\nkind: List\nitems:\n{}{}",
        pod("a", kueue, "    schedulerName: volcano\n"),
        pod("b", kueue, "")
    ));
    let e = load_error(&text);
    assert!(
        e.contains("pod b of group team/g has schedulerName \"default-scheduler\", pod a \"volcano\": expected one scheduler for the pods of a group"),
        "{e}"
    );
}

#[test]
fn podgroups_without_their_pods_and_pods_of_another_scheduler_are_warned_about() {
    let text = cluster(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: scheduling.volcano.sh/v1beta1\n  kind: PodGroup\n  metadata: {name: lonely, namespace: team}\n  spec: {minMember: 2}\n- apiVersion: scheduling.run.ai/v2alpha2\n  kind: PodGroup\n  metadata: {name: kai-pg, namespace: team}\n  spec: {minMember: 1}\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: stray\n    namespace: team\n    annotations: {pod-group-name: kai-pg}\n  spec:\n    containers:\n    - resources: {requests: {cpu: '1'}}\n",
    );
    let loaded = load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    let w = loaded.warnings.join("\n");
    assert!(
        w.contains("Volcano PodGroup team/lonely has no pods in the input"),
        "{w}"
    );
    assert!(
        w.contains("pod team/stray names KAI PodGroup \"kai-pg\" (pod-group-name) but is scheduled by \"default-scheduler\""),
        "{w}"
    );
    // The KAI PodGroup is named (by a pod it does not schedule): no second warning for it.
    assert!(!w.contains("KAI PodGroup team/kai-pg has no pods"), "{w}");
}

/// Volcano's subjobs (`getOrCreateSubJob`, `getSubJobMatchValues`): a pod joins the first
/// policy whose selector matches and whose matchLabelKeys labels it all has, not empty; a
/// policy without matchLabelKeys matches nothing; the rest is the default subjob.
#[test]
fn volcano_pods_join_the_first_matching_subgroup_policy_only() {
    let mut text = cluster(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: scheduling.volcano.sh/v1beta1\n  kind: PodGroup\n  metadata: {name: pg, namespace: team}\n  spec:\n    minMember: 4\n    subGroupPolicy:\n    - {name: none, labelSelector: {matchLabels: {tier: w}}}\n    - {name: a, matchLabelKeys: [rack], labelSelector: {matchLabels: {tier: w}}}\n    - {name: b, matchLabelKeys: [rack]}\n",
    );
    let member = |labels: &str| {
        format!("    labels: {{{labels}}}\n    annotations: {{scheduling.k8s.io/group-name: pg}}\n")
    };
    text += &pod(
        "w0",
        &member("tier: w, rack: r1"),
        "    schedulerName: volcano\n",
    );
    text += &pod(
        "p0",
        &member("tier: p, rack: r1"),
        "    schedulerName: volcano\n",
    );
    text += &pod(
        "w1",
        &member("tier: w, rack: ''"),
        "    schedulerName: volcano\n",
    );
    text += &pod("w2", &member("tier: w"), "    schedulerName: volcano\n");
    let loaded = load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    let w = &loaded.world.workloads[0];
    let groups: Vec<(&str, Vec<&str>)> = w
        .gang
        .volcano_subgroups
        .iter()
        .map(|g| {
            (
                g.name.as_str(),
                g.pod_sets
                    .iter()
                    .map(|&ps| w.gang.pod_names[ps][0].as_str())
                    .collect(),
            )
        })
        .collect();
    // w0 in a's subjob only (not also b's), p0 in b's; w1 (empty rack) and w2 (no rack) in
    // the default subjob; the policy without matchLabelKeys takes no pod.
    assert_eq!(groups, [("a/r1", vec!["w0"]), ("b/r1", vec!["p0"])]);
}

/// A subgroup no leaf holds: Volcano's `FitErrors.Error()` counts only the nodes that gave a
/// reason, and with none it ends at "0/0 nodes are unavailable" (no empty reason list).
#[test]
fn a_volcano_subgroup_that_fits_no_leaf_has_no_empty_reason_list() {
    let mut text = cluster(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: scheduling.volcano.sh/v1beta1\n  kind: PodGroup\n  metadata: {name: pg, namespace: team}\n  spec:\n    minMember: 3\n    networkTopology: {mode: hard, highestTierAllowed: 2}\n    subGroupPolicy:\n    - name: a\n      matchLabelKeys: [part]\n      networkTopology: {mode: hard, highestTierAllowed: 1}\n",
    );
    let member = "    labels: {part: p}\n    annotations: {scheduling.k8s.io/group-name: pg}\n";
    for i in 0..3 {
        // 2 cpu each: three do not fit a leaf of two 2-cpu nodes.
        text += &pod(&format!("p{i}"), member, "    schedulerName: volcano\n")
            .replace("cpu: '1'", "cpu: '2'");
    }
    let r = run(&text);
    let w = wl(&r, "team", "pg");
    assert!(w.pod_sets[0].nodes.is_empty());
    let m = &w
        .events
        .iter()
        .find(|e| e.kind == "Warning" && e.source == "volcano")
        .expect("a Volcano warning")
        .message;
    assert!(!m.contains("unavailable: ."), "{m}");
    assert!(m.contains("nodes are unavailable"), "{m}");
}

/// Upstream KAI `allocateTopology_test.go`, "Required topology level - could not schedule on
/// first domain due to affinity, goes to next", as a dump: a PodGroup of two bare Pods of one
/// GPU under a required rack, the first with a required node affinity
/// (`kai.scheduler/type In [affinity1]`) that only rack2's nodes meet. Each pod keeps its
/// own spec: rack1 cannot hold pod 0, so the gang goes to rack2, pod 0 on node2 and pod 1 on
/// node3, as upstream expects.
#[test]
fn a_bare_pods_own_node_affinity_moves_its_kai_gang_to_the_next_domain() {
    let mut text = String::from(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {name: t}\nspec: {until: 1h}\n---\napiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: cluster-topology}\nspec:\n  levels:\n  - nodeLabel: k8s.io/rack\n",
    );
    for (i, rack) in ["rack1", "rack1", "rack2", "rack2"].iter().enumerate() {
        let kind = if *rack == "rack2" {
            ", kai.scheduler/type: affinity1"
        } else {
            ""
        };
        text += &format!(
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node{i}\n  labels: {{k8s.io/rack: {rack}{kind}}}\nstatus:\n  allocatable: {{cpu: '8', nvidia.com/gpu: '1', pods: '110'}}\n"
        );
    }
    text += "---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: department-a}
spec: {resources: {gpu: {quota: 4, limit: -1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: queue0}
spec:
  parentQueue: department-a
  resources: {gpu: {quota: 4, limit: 4, overQuotaWeight: 1}}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pending-job0, namespace: team}
spec:
  queue: queue0
  minMember: 2
  topologyConstraint: {topology: cluster-topology, requiredTopologyLevel: k8s.io/rack}
---
apiVersion: v1
kind: Pod
metadata:
  name: pending-job0-0
  namespace: team
  annotations: {pod-group-name: pending-job0}
spec:
  schedulerName: kai-scheduler
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: kai.scheduler/type, operator: In, values: [affinity1]}
  containers:
  - name: worker
    resources: {limits: {nvidia.com/gpu: '1'}}
---
apiVersion: v1
kind: Pod
metadata:
  name: pending-job0-1
  namespace: team
  annotations: {pod-group-name: pending-job0}
spec:
  schedulerName: kai-scheduler
  containers:
  - name: worker
    resources: {limits: {nvidia.com/gpu: '1'}}
";
    let loaded = load_text("dump.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let w = wl(&r, "team", "pending-job0");
    let placed: Vec<(&str, &str)> = w
        .pod_sets
        .iter()
        .flat_map(|ps| {
            ps.pods
                .iter()
                .zip(&ps.nodes)
                .map(|(p, n)| (p.name.as_str(), n.as_str()))
        })
        .collect();
    let mut placed = placed;
    placed.sort();
    assert_eq!(
        placed,
        [("pending-job0-0", "node2"), ("pending-job0-1", "node3")]
    );
}

/// A bare Pod keeps what it says: its own name, and in `kubectl describe pod` its labels,
/// annotations and containers with their own requests (not one container `main`).
#[test]
fn describe_pod_shows_a_bare_pods_own_labels_annotations_and_containers() {
    let text = cluster(
        "apiVersion: v1
kind: Pod
metadata:
  name: web-7d4f9
  namespace: team
  labels: {app: web, pod-template-hash: 7d4f9}
  annotations: {example.com/owner: ops}
spec:
  nodeName: s0-n1
  containers:
  - name: nginx
    resources: {requests: {cpu: 500m}}
  - name: log-shipper
    resources: {limits: {cpu: 250m}}
",
    );
    let loaded = load_text("dump.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let w = wl(&r, "team", "web-7d4f9");
    assert_eq!(w.pod_sets[0].pods[0].name, "web-7d4f9");
    use kueuesim_report::kubectl::{Kind, Namespaces, describe};
    let d = describe(
        &loaded.world,
        &r,
        Kind::parse("pod").expect("a kind"),
        &Namespaces::One("team".into()),
        &["web-7d4f9".to_string()],
        None,
        60.0,
    )
    .unwrap_or_else(|e| panic!("{e:?}"))
    .text;
    let line = |prefix: &str| {
        d.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in\n{d}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(line("Labels:"), "Labels: app=web");
    assert!(d.contains("pod-template-hash=7d4f9"), "{d}");
    assert_eq!(line("Annotations:"), "Annotations: example.com/owner: ops");
    assert!(!d.contains("  main:"), "{d}");
    let nginx = d.find("  nginx:").expect("container nginx");
    let shipper = d.find("  log-shipper:").expect("container log-shipper");
    assert!(nginx < shipper);
    assert!(
        d[nginx..shipper].contains("cpu:") && d[nginx..shipper].contains("500m"),
        "{d}"
    );
    assert!(d[shipper..].contains("250m"), "{d}");
}
