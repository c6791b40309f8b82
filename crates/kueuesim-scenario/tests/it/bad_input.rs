//! Every malformed input is an error naming t.yaml:line:column and what was expected.

use crate::util::{FLAVOR, cq, load_error, load_text, strict_load_error};

#[test]
fn yaml_syntax_error() {
    let e = load_error("apiVersion: v1\nkind: Node\nmetadata: {name: [a\n");
    assert!(e.starts_with("t.yaml:3:"), "{e}");
}

#[test]
fn yaml_syntax_error_in_a_later_document_counts_file_lines() {
    let text = format!(
        "{FLAVOR}---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels: [unclosed\n"
    );
    let e = load_error(&text);
    assert!(e.starts_with("t.yaml:10:"), "{e}");
}

#[test]
fn wrong_type_quantity_names_the_value() {
    let e = load_error(&format!("{FLAVOR}---\n{}", cq("lots")));
    assert!(
        e.starts_with("t.yaml:18:23: invalid quantity \"lots\""),
        "{e}"
    );
    assert!(e.contains("expected"), "{e}");
    assert!(e.contains("nominalQuota: lots"), "code frame: {e}");
}

#[test]
fn bad_quantity_suffix() {
    let e = load_error(&format!("{FLAVOR}---\n{}", cq("8Xi")));
    assert!(
        e.starts_with("t.yaml:18:23: invalid quantity \"8Xi\""),
        "{e}"
    );
}

#[test]
fn wrong_type_integer_field() {
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: p\nvalue: high\n";
    let e = load_error(text);
    assert!(
        e.starts_with("t.yaml:5:8: invalid i32: expected an integer"),
        "{e}"
    );
}

#[test]
fn bad_duration_annotation() {
    let text = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    kueuesim.io/duration: 2 hours\nspec:\n  template:\n    spec:\n      containers: [{name: c}]\n";
    let e = load_error(text);
    assert!(e.starts_with("t.yaml:6:27: "), "{e}");
    assert!(e.contains("2 hours"), "{e}");
}

#[test]
fn bad_until_in_simulation() {
    let text = "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec:\n  until: forever\n";
    let e = load_error(text);
    assert!(e.starts_with("t.yaml:5:10: "), "{e}");
}

#[test]
fn unknown_simulation_field_is_rejected() {
    let text = "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec:\n  sead: 4\n";
    let e = load_error(text);
    assert!(e.starts_with("t.yaml:5:3: unknown field `sead`"), "{e}");
}

#[test]
fn local_queue_naming_a_missing_cluster_queue() {
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: q\n  namespace: ns\nspec:\n  clusterQueue: nowhere\n";
    let e = load_error(text);
    assert!(
        e.starts_with(
            "t.yaml:7:17: LocalQueue ns/q names ClusterQueue \"nowhere\", which does not exist"
        ),
        "{e}"
    );
}

#[test]
fn cluster_queue_naming_a_missing_flavor() {
    let e = load_error(&cq("8"));
    assert!(e.starts_with("t.yaml:10:13: ClusterQueue \"cq\" names ResourceFlavor \"default\", which does not exist"), "{e}");
}

#[test]
fn duplicate_objects() {
    let e = load_error(&format!("{FLAVOR}---\n{FLAVOR}"));
    assert!(
        e.starts_with(
            "t.yaml:7:7: duplicate ResourceFlavor \"default\": first defined at t.yaml:2:7"
        ),
        "{e}"
    );
}

#[test]
fn duplicate_namespaced_objects_in_a_list() {
    let lq = "- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: LocalQueue\n  metadata: {name: q, namespace: a}\n  spec: {clusterQueue: cq}\n";
    let text = format!(
        "{FLAVOR}---\n{}---\napiVersion: v1\nkind: List\nitems:\n{lq}{lq}",
        cq("8")
    );
    let e = load_error(&text);
    assert!(
        e.contains("duplicate LocalQueue \"a/q\": first defined at t.yaml:24:9"),
        "{e}"
    );
    assert!(e.starts_with("t.yaml:28:9: "), "{e}");
}

#[test]
fn duplicate_yaml_key() {
    let e = load_error("apiVersion: v1\nkind: Node\nkind: Node\nmetadata: {name: n}\n");
    assert!(
        e.starts_with("t.yaml:3:1: duplicate key \"kind\": expected each key once in a mapping"),
        "{e}"
    );
}

#[test]
fn bad_enum_value_lists_the_options() {
    let text = format!("{FLAVOR}---\n{}  queueingStrategy: Fifo\n", cq("8"));
    let e = load_error(&text);
    assert!(
        e.contains("invalid queueingStrategy \"Fifo\": expected one of BestEffortFIFO, StrictFIFO"),
        "{e}"
    );
    assert!(e.starts_with("t.yaml:19:21:"), "{e}");
}

#[test]
fn unknown_scheduler_name() {
    let text = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      schedulerName: my-sched\n      containers: [{name: c}]\n";
    let e = load_error(text);
    assert!(
        e.starts_with("t.yaml:8:22: schedulerName \"my-sched\" is run by no scheduler"),
        "{e}"
    );
}

#[test]
fn unknown_kinds_warn_once_with_counts_and_strict_rejects_them() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: c}\n";
    let loaded = load_text("t.yaml", text).expect("unknown kinds are skipped");
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(
        loaded.warnings[0].contains("2 ConfigMap (v1)"),
        "{:?}",
        loaded.warnings
    );
    assert!(
        loaded.warnings[0].contains("1 Ingress (networking.k8s.io/v1)"),
        "{:?}",
        loaded.warnings
    );
    let e = strict_load_error(text);
    assert!(
        e.starts_with("t.yaml:2:7: unsupported kind ConfigMap (v1) (--strict)"),
        "{e}"
    );
}

#[test]
fn unsupported_kueue_api_version() {
    let e = load_error(
        "apiVersion: kueue.x-k8s.io/v1alpha1\nkind: ClusterQueue\nmetadata: {name: x}\n",
    );
    assert!(e.starts_with("t.yaml:2:7: unsupported apiVersion"), "{e}");
}

#[test]
fn object_without_a_name() {
    let e = load_error("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {}\n");
    assert!(
        e.starts_with("t.yaml:2:7: ResourceFlavor has no metadata.name"),
        "{e}"
    );
}

#[test]
fn bad_creation_timestamp() {
    let text = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  creationTimestamp: yesterday\nspec:\n  template:\n    spec:\n      containers: []\n";
    let e = load_error(text);
    assert!(e.starts_with("t.yaml:5:22: "), "{e}");
}

#[test]
fn duplicate_pod_set_names() {
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w}\nspec:\n  podSets:\n  - name: a\n    count: 1\n    template: {spec: {containers: [{name: c}]}}\n  - name: a\n    count: 2\n    template: {spec: {containers: [{name: c}]}}\n";
    let e = load_error(text);
    assert!(
        e.starts_with("t.yaml:9:11: pod set name \"a\" is used twice"),
        "{e}"
    );
}

#[test]
fn duplicate_node_pools() {
    let pool = "apiVersion: kueuesim.io/v1alpha1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  namePrefix: NAME\n";
    let text = format!(
        "{}---\n{}",
        pool.replace("NAME", "a"),
        pool.replace("NAME", "b")
    );
    let e = load_error(&text);
    assert!(e.starts_with("t.yaml:8:7: duplicate NodePool \"p\""), "{e}");
}

#[test]
fn negative_local_queue_weight() {
    let text = format!(
        "{FLAVOR}---\n{}---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: q, namespace: n}}\nspec:\n  clusterQueue: cq\n  fairSharing:\n    weight: \"-1\"\n",
        cq("8")
    );
    let e = load_error(&text);
    assert!(e.contains("fairSharing.weight \"-1\" is negative"), "{e}");
}

#[test]
fn resource_listed_twice_in_a_flavor() {
    let text = format!(
        "{FLAVOR}---\n{}      - name: nvidia.com/gpu\n        nominalQuota: 4\n",
        cq("8")
    );
    let e = load_error(&text);
    assert!(
        e.starts_with("t.yaml:19:15: resource \"nvidia.com/gpu\" is listed twice"),
        "{e}"
    );
}

const NODE: &str =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"1\"}}\n";

fn hn(name: &str, tier: i64, members: &str) -> String {
    format!(
        "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {{name: {name}}}\nspec:\n  tier: {tier}\n  members:\n{members}"
    )
}

#[test]
fn hypernode_with_two_parents() {
    let leaf = hn(
        "leaf",
        1,
        "  - {type: Node, selector: {exactMatch: {name: n1}}}\n",
    );
    let child = "  - {type: HyperNode, selector: {exactMatch: {name: leaf}}}\n";
    let text = format!(
        "{NODE}---\n{leaf}---\n{}---\n{}",
        hn("spine-a", 2, child),
        hn("spine-b", 2, child)
    );
    let e = load_error(&text);
    // The second parent's document (line 23: its `kind`).
    assert!(e.starts_with("t.yaml:23:"), "{e}");
    assert!(
        e.contains(
            "HyperNode \"leaf\" has two parents, \"spine-a\" and \"spine-b\": expected a tree"
        ),
        "{e}"
    );
}

#[test]
fn hypernode_member_with_two_selectors_or_a_bad_regex() {
    let two = hn(
        "leaf",
        1,
        "  - type: Node\n    selector: {exactMatch: {name: n1}, regexMatch: {pattern: \"n.*\"}}\n",
    );
    let e = load_error(&format!("{NODE}---\n{two}"));
    assert!(
        e.contains(
            "member has 2 selectors: expected exactly one of exactMatch, regexMatch, labelMatch"
        ),
        "{e}"
    );
    let bad = hn(
        "leaf",
        1,
        "  - type: Node\n    selector: {regexMatch: {pattern: \"n[\"}}\n",
    );
    let e = load_error(&format!("{NODE}---\n{bad}"));
    assert!(e.starts_with("t.yaml:13:"), "{e}");
    assert!(e.contains("invalid regexMatch pattern \"n[\""), "{e}");
}

#[test]
fn topology_with_hostname_above_another_level() {
    let e = load_error(
        "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: t}\nspec:\n  levels:\n  - nodeLabel: kubernetes.io/hostname\n  - nodeLabel: rack\n",
    );
    assert!(e.starts_with("t.yaml:6:"), "{e}");
    assert!(
        e.contains("kubernetes.io/hostname is not the last level"),
        "{e}"
    );
}

#[test]
fn gang_references_that_do_not_resolve() {
    let job = |ann: &str, labels: &str, sched: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: team\n  labels: {{{labels}}}\n  annotations: {{{ann}}}\nspec:\n  template:\n    spec:\n      schedulerName: {sched}\n      containers:\n      - resources: {{requests: {{cpu: \"1\"}}}}\n"
        )
    };
    let e = load_error(&job("pod-group-name: nope", "", "kai-scheduler"));
    assert!(e.starts_with("t.yaml:7:"), "{e}");
    assert!(e.contains("no KAI PodGroup team/nope"), "{e}");
    let e = load_error(&job("scheduling.k8s.io/group-name: nope", "", "volcano"));
    assert!(e.contains("no Volcano PodGroup team/nope"), "{e}");
    let e = load_error(&job("", "kai.scheduler/queue: nope", "kai-scheduler"));
    // At the label's value.
    assert!(e.starts_with("t.yaml:6:33:"), "{e}");
    assert!(
        e.contains("label kai.scheduler/queue \"nope\" names no KAI Queue"),
        "{e}"
    );
    let e = load_error(&job("kueuesim.io/bound-nodes: ghost", "", "volcano"));
    assert!(
        e.contains("kueuesim.io/bound-nodes names node \"ghost\", which does not exist"),
        "{e}"
    );
    let e = load_error(&job(
        "scheduling.volcano.sh/group-min-member: two",
        "",
        "volcano",
    ));
    assert!(
        e.contains("group-min-member \"two\": expected a non-negative integer"),
        "{e}"
    );
}

#[test]
fn volcano_configuration_that_is_not_one() {
    let e = load_error(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nspec:\n  volcano:\n    configuration: |\n      tiers: 3\n",
    );
    // The configuration's text starts on line 6.
    assert!(e.starts_with("t.yaml:6:"), "{e}");
    assert!(
        e.contains("spec.volcano.configuration is not a volcano-scheduler.conf"),
        "{e}"
    );
}

#[test]
fn job_without_containers() {
    let e = load_error(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers: []\n",
    );
    assert!(e.starts_with("t.yaml:2:"), "{e}");
    assert!(
        e.contains(
            "pod template without containers: expected spec.containers with at least one container"
        ),
        "{e}"
    );
}

#[test]
fn a_kueue_field_of_neither_api_version_warns_and_strict_rejects_it() {
    let text = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cq\nspec:\n  cohrtName: x\n  resourceGroups: []\n";
    let loaded = load_text("t.yaml", text).expect("an unknown field is a warning");
    assert_eq!(
        loaded.warnings,
        [
            "t.yaml:6:3: ClusterQueue field spec.cohrtName is not a field of kueue.x-k8s.io v1beta1 or v1beta2 (closest: cohort); ignored"
        ]
    );
    // The closest field is one of the object's version: v1beta2 writes cohortName.
    let v2 = text.replace("v1beta1", "v1beta2");
    assert!(load_text("t.yaml", &v2).expect("loads").warnings[0].contains("(closest: cohortName)"));
    // Each version's own name is known: v1beta1's cohort, v1beta2's cohortName (the other
    // version's name is its own finding, lint::a_field_of_the_other_api_version_…).
    for (version, field) in [("v1beta1", "cohort"), ("v1beta2", "cohortName")] {
        let ok = text.replace("cohrtName", field).replace("v1beta1", version);
        assert!(
            load_text("t.yaml", &ok).expect("loads").warnings.is_empty(),
            "{field}"
        );
    }
    let e = strict_load_error(text);
    assert!(
        e.starts_with("t.yaml:6:3: ClusterQueue field spec.cohrtName is not a field"),
        "{e}"
    );
    let top = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\nlabels: {a: b}\n";
    let loaded = load_text("t.yaml", top).expect("warning only");
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.starts_with("t.yaml:4:1: ResourceFlavor field labels is not a field")),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn workload_pod_set_counts() {
    let wl = |sets: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {{name: w, namespace: default}}\nspec:\n  queueName: lq\n  podSets:\n{sets}"
        )
    };
    let set = |name: &str, count: u32, min: &str| {
        format!(
            "  - name: {name}\n    count: {count}\n{min}    template:\n      spec:\n        containers: [{{name: c}}]\n"
        )
    };
    let e = load_error(&wl(&set("main", 0, "")));
    assert!(
        e.starts_with("t.yaml:8:12: every pod set has count 0, so the Workload runs no pods"),
        "{e}"
    );
    let e = load_error(&wl(&set("main", 4, "    minCount: 0\n")));
    assert!(
        e.starts_with("t.yaml:9:15: minCount 0 is out of range: expected 1 ≤ minCount ≤ count"),
        "{e}"
    );
    let two = format!(
        "{}{}",
        set("a", 4, "    minCount: 2\n"),
        set("b", 4, "    minCount: 2\n")
    );
    let e = load_error(&wl(&two));
    assert!(
        e.starts_with("t.yaml:15:15: a second pod set with minCount"),
        "{e}"
    );
}

#[test]
fn kai_queue_parent_cycles_are_errors_at_the_parent() {
    let q = |name: &str, parent: &str| {
        format!(
            "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: {name}\nspec:\n  parentQueue: {parent}\n"
        )
    };
    let e = load_error(&q("a", "a"));
    assert!(
        e.starts_with(
            "t.yaml:6:16: parentQueue \"a\" makes a cycle (a → a): expected the Queues to form a tree"
        ),
        "{e}"
    );
    let e = load_error(&format!("{}---\n{}", q("a", "b"), q("b", "a")));
    assert!(
        e.starts_with("t.yaml:6:16: parentQueue \"b\" makes a cycle (a → b → a)"),
        "{e}"
    );
}

/// Cohorts `c0` ← `c1` ← … ← `c{depth - 1}`, each the parent of the next, as YAML documents.
fn cohort_chain(depth: u32) -> String {
    let mut text = String::new();
    for i in 0..depth {
        let parent = if i == 0 {
            String::new()
        } else {
            format!("parentName: c{}", i - 1)
        };
        text.push_str(&format!(
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: c{i}}}\nspec: {{{parent}}}\n"
        ));
    }
    text
}

#[test]
fn a_chain_of_cohorts_loads_in_linear_time() {
    // 20,000 cohorts, each the parent of the next: with the old quadratic lookups and walks
    // this test took minutes.
    let text = cohort_chain(20_000);
    let loaded = load_text("t.yaml", &text).expect("loads");
    assert_eq!(loaded.world.cohorts.len(), 20_000);
    assert_eq!(
        loaded.world.cohorts[19_999].parent,
        Some(kueuesim_model::CohortId::from_index(19_998))
    );
    // The quota tree over the chain is built with loops, not recursion.
    let tree = kueuesim_model::quota::QuotaTree::new(&loaded.world);
    let leaf = tree.cohort_node(kueuesim_model::CohortId::from_index(19_999));
    assert_eq!(
        tree.root(leaf),
        tree.cohort_node(kueuesim_model::CohortId::from_index(0))
    );
}

/// A preemption in a ClusterQueue under a chain of 40 cohorts: the messages' paths
/// (`buildCQPath`) name every cohort from the root down, past the 16 the walk keeps on the
/// stack (the engine's unit test `cq_path_of_a_deep_chain_without_recursion` walks 100,000).
#[test]
fn a_preemption_under_a_cohort_chain_names_its_whole_path() {
    let depth = 40;
    let mut text = cohort_chain(depth);
    let job = |name: &str, class: &str, arrival: &str| {
        format!(
            "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: team\n  labels: {{kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: {class}}}\n  annotations: {{kueuesim.io/duration: 1h, kueuesim.io/arrival: {arrival}}}\nspec:\n  template:\n    spec:\n      containers:\n      - resources: {{requests: {{cpu: \"1\"}}}}\n"
        )
    };
    text.push_str(&format!(
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: default}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {{name: low}}\nvalue: 0\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {{name: high}}\nvalue: 1000\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: cq}}\nspec:\n  cohortName: c{last}\n  namespaceSelector: {{}}\n  preemption: {{withinClusterQueue: LowerPriority}}\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: default\n      resources:\n      - {{name: cpu, nominalQuota: 1}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: q, namespace: team}}\nspec: {{clusterQueue: cq}}\n{low}{high}",
        last = depth - 1,
        low = job("low", "low", "0s"),
        high = job("high", "high", "1m"),
    ));
    let r = crate::volcano_queues::run_text(&text);
    let path: String = (0..depth).map(|i| format!("/c{i}")).collect::<String>() + "/cq";
    let low = crate::util::wl(&r, "team", "low");
    assert_eq!(
        crate::util::condition(low, "Requeued").message,
        format!(
            "Preempted to accommodate a workload (UID: team/high, JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: {path}; preemptee path: {path}"
        )
    );
}

/// A KAI pod whose pod template carries `annotations` (and `gpu` in its requests), with GPU
/// devices on or off.
fn kai_share_job(devices: bool, annotations: &str, gpu: &str) -> String {
    format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: s}}\nspec:\n  gpuPlacement: {{devices: {devices}}}\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    metadata:\n      annotations: {{{annotations}}}\n    spec:\n      schedulerName: kai-scheduler\n      containers:\n      - resources: {{requests: {{cpu: \"1\"{gpu}}}}}\n"
    )
}

#[test]
fn kai_gpu_share_annotations_are_checked_as_kais_webhook_does() {
    let e = load_error(&kai_share_job(true, "gpu-fraction: \"1.5\"", ""));
    assert!(
        e.starts_with(
            "t.yaml:14:35: gpu-fraction annotation value must be a positive number smaller than 1.0"
        ),
        "{e}"
    );
    let e = load_error(&kai_share_job(true, "gpu-memory: \"-3\"", ""));
    assert!(
        e.starts_with("t.yaml:14:33: gpu-memory annotation value must be a positive integer"),
        "{e}"
    );
    let e = load_error(&kai_share_job(
        true,
        "gpu-fraction: \"0.5\"",
        ", nvidia.com/gpu: \"1\"",
    ));
    assert!(
        e.contains("cannot have both GPU fraction request and whole GPU resource request/limit"),
        "{e}"
    );
    let e = load_error(&kai_share_job(
        true,
        "gpu-fraction: \"0.5\", gpu-memory: \"100\"",
        "",
    ));
    assert!(e.contains("cannot request both GPU and GPU memory"), "{e}");
    let e = load_error(&kai_share_job(
        true,
        "gpu-fraction: \"0.5\", gpu-fraction-num-devices: \"2\"",
        "",
    ));
    assert!(e.contains("is not modelled"), "{e}");
    // KAI's webhook refuses shares while GPU sharing is off (`global.gpuSharing`).
    let e = load_error(&kai_share_job(false, "gpu-fraction: \"0.5\"", ""));
    assert!(
        e.starts_with("t.yaml:14:35: a GPU-sharing request while GPU sharing is off"),
        "{e}"
    );
    assert!(load_text("t.yaml", &kai_share_job(true, "gpu-fraction: \"0.5\"", "")).is_ok());
}

/// A Volcano pod with the container `limits` and pod template `annotations`.
fn vgpu_job(limits: &str, annotations: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    metadata:\n      annotations: {{{annotations}}}\n    spec:\n      schedulerName: volcano\n      containers:\n      - resources: {{limits: {{{limits}}}}}\n"
    )
}

#[test]
fn vgpu_requests_are_checked() {
    let e = load_error(&vgpu_job(
        "volcano.sh/vgpu-number: \"1\", volcano.sh/vgpu-cores: \"150\"",
        "",
    ));
    assert!(
        e.starts_with(
            "t.yaml:12:82: volcano.sh/vgpu-cores is 150: expected a percentage of a device's cores from 0 to 100"
        ),
        "{e}"
    );
    let e = load_error(&vgpu_job("volcano.sh/vgpu-cores: \"50\"", ""));
    assert!(
        e.starts_with(
            "t.yaml:12:53: volcano.sh/vgpu-cores without volcano.sh/vgpu-number or volcano.sh/vgpu-memory"
        ),
        "{e}"
    );
    let e = load_error(&vgpu_job(
        "volcano.sh/vgpu-number: \"1\", volcano.sh/vgpu-memory-percentage: \"101\"",
        "",
    ));
    assert!(
        e.contains("volcano.sh/vgpu-memory-percentage is 101: expected a percentage"),
        "{e}"
    );
    let e = load_error(&vgpu_job("volcano.sh/vgpu-number: \"0\"", ""));
    assert!(
        e.starts_with("t.yaml:12:54: volcano.sh/vgpu-number is 0: expected at least 1 device"),
        "{e}"
    );
    let e = load_error(&vgpu_job(
        "volcano.sh/vgpu-number: \"1\"",
        "volcano.sh/vgpu-mode: mig",
    ));
    assert!(
        e.starts_with("t.yaml:8:43: volcano.sh/vgpu-mode \"mig\" is not modelled"),
        "{e}"
    );
    // vgpu-memory alone asks one device (upstream's ExtractResourceRequest), as does
    // vgpu-number with hami-core named.
    let one = |limits: &str, ann: &str| {
        let l = load_text("t.yaml", &vgpu_job(limits, ann)).expect("loads");
        l.world.workloads[0].pod_sets[0].vgpu.unwrap()
    };
    let r = one("volcano.sh/vgpu-memory: \"3000\"", "");
    assert_eq!(
        (r.number, r.memory, r.cores),
        (1, kueuesim_model::gpu::VgpuMemory::Mib(3000), 0)
    );
    let r = one(
        "volcano.sh/vgpu-number: \"2\", volcano.sh/vgpu-memory: \"3000\", volcano.sh/vgpu-memory-percentage: \"40\"",
        "volcano.sh/vgpu-mode: hami-core",
    );
    assert_eq!(
        (r.number, r.memory),
        (2, kueuesim_model::gpu::VgpuMemory::Percent(40))
    );
    let r = one("volcano.sh/vgpu-number: \"1\"", "");
    assert_eq!(r.memory, kueuesim_model::gpu::VgpuMemory::Percent(100));
}
