//! The lint for likely typos: unknown label and annotation keys under Kueue's, kueuesim's,
//! KAI's and Volcano's prefixes, unknown fields of Kueue's kinds at any depth, and workloads
//! naming a LocalQueue that does not exist; warnings, errors with `--strict`.

use kueuesim_scenario::{LoadOptions, SourceFile, load};

use crate::util::{FLAVOR, cq, load_text, strict_load_error};

/// A Job `j` in `default` with `labels` and `annotations` (block lines at 4 spaces).
fn job(labels: &str, annotations: &str) -> String {
    let map = |m: &str| {
        if m.is_empty() {
            " {}\n".to_string()
        } else {
            format!("\n{m}")
        }
    };
    let (labels, annotations) = (map(labels), map(annotations));
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: default\n  labels:{labels}  annotations:{annotations}spec:\n  template:\n    spec:\n      containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: 1}}}}}}]\n"
    )
}

fn queues() -> String {
    format!(
        "{FLAVOR}---\n{}---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq, namespace: default}}\nspec: {{clusterQueue: cq}}\n---\n",
        cq("8")
    )
}

#[test]
fn a_misspelt_queue_label_and_duration_annotation_name_the_closest_keys() {
    let text = job(
        "    kueue.x-k8s.io/queue-nme: lq\n",
        "    kueuesim.io/duraton: 1h\n",
    );
    let loaded = load_text("t.yaml", &text).expect("typos are warnings");
    assert_eq!(
        loaded.warnings,
        [
            "t.yaml:7:5: label kueue.x-k8s.io/queue-nme is neither read by the simulator nor a known Kueue, KAI or Volcano key (closest: kueue.x-k8s.io/queue-name); ignored",
            "t.yaml:9:5: annotation kueuesim.io/duraton is neither read by the simulator nor a known Kueue, KAI or Volcano key (closest: kueuesim.io/duration); ignored",
        ]
    );
    let e = strict_load_error(&text);
    assert!(
        e.starts_with("t.yaml:7:5: label kueue.x-k8s.io/queue-nme is neither read by the simulator nor a known Kueue, KAI or Volcano key (closest: kueue.x-k8s.io/queue-name) (--strict)"),
        "{e}"
    );
    assert!(
        e.contains("kueue.x-k8s.io/queue-nme: lq"),
        "code frame: {e}"
    );
    let e = strict_load_error(&job("", "    kueuesim.io/duraton: 1h\n"));
    assert!(
        e.starts_with("t.yaml:8:5: annotation kueuesim.io/duraton ")
            && e.contains("(closest: kueuesim.io/duration) (--strict)"),
        "{e}"
    );
}

#[test]
fn keys_in_pod_templates_flow_style_and_list_items_are_linted_once_per_key() {
    // A pod template's labels (flow style), and the same typo twice in a List: one warning
    // with the first place and the count.
    let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: batch/v1\n  kind: Job\n  metadata: {name: a, labels: {kai.scheduler/queu: q}}\n  spec:\n    template:\n      metadata: {labels: {volcano.sh/task-spek: t}}\n      spec: {containers: [{name: c}]}\n- {apiVersion: batch/v1, kind: Job, metadata: {name: b, labels: {kai.scheduler/queu: q}}, spec: {template: {spec: {containers: [{name: c}]}}}}\n";
    let loaded = load_text("t.yaml", text).expect("warnings only");
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert!(
        loaded.warnings[0].starts_with("t.yaml:6:32: label kai.scheduler/queu ")
            && loaded.warnings[0].contains("(closest: kai.scheduler/queue); ignored (and 1 more)"),
        "{:?}",
        loaded.warnings
    );
    assert!(
        loaded.warnings[1].starts_with("t.yaml:9:27: label volcano.sh/task-spek ")
            && loaded.warnings[1].contains("(closest: volcano.sh/task-spec); ignored"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn a_deep_unknown_kueue_field_names_the_closest_field() {
    let text = format!("{FLAVOR}---\n{}", cq("8")).replace("nominalQuota", "nominalQouta");
    let loaded = load_text("t.yaml", &text).expect_err("the quota is missing");
    // The misspelt quota is also a missing one: an error either way; the warning comes first
    // without --strict only if the object still loads, so check a field that is optional.
    assert!(loaded.to_string().contains("nominalQuota"), "{loaded}");
    let e = strict_load_error(&text);
    assert!(
        e.starts_with("t.yaml:18:9: ClusterQueue field spec.resourceGroups[0].flavors[0].resources[0].nominalQouta is not a field of kueue.x-k8s.io v1beta1 or v1beta2 (closest: nominalQuota) (--strict)"),
        "{e}"
    );
    let text = format!(
        "{FLAVOR}---\n{}  preemption: {{withinClusterQueu: LowerPriority}}\n",
        cq("8").replace("spec:\n", "spec:\n  cohortName: c\n")
    );
    let loaded = load_text("t.yaml", &text).expect("an unknown field is a warning");
    assert_eq!(
        loaded.warnings,
        [
            "t.yaml:20:16: ClusterQueue field spec.preemption.withinClusterQueu is not a field of kueue.x-k8s.io v1beta1 or v1beta2 (closest: withinClusterQueue); ignored"
        ]
    );
    assert!(
        strict_load_error(&text)
            .starts_with("t.yaml:20:16: ClusterQueue field spec.preemption.withinClusterQueu")
    );
}

#[test]
fn a_workload_topology_request_is_an_upstream_field() {
    let text = format!(
        "{}apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: w, namespace: default}}\nspec:\n  queueName: lq\n  podSets:\n  - name: main\n    count: 1\n    topologyRequest: {{required: kubernetes.io/hostname}}\n    template:\n      spec:\n        containers: [{{name: c}}]\n",
        queues()
    );
    let loaded = load_text("t.yaml", &text).expect("loads");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let typo = text.replace("topologyRequest", "topologyRequets");
    let e = strict_load_error(&typo);
    assert!(
        e.contains("Workload field spec.podSets[0].topologyRequets is not a field")
            && e.contains("(closest: topologyRequest) (--strict)"),
        "{e}"
    );
}

/// Objects as `kubectl get -o yaml` prints them from a cluster running Kueue: upstream
/// labels, annotations, finalizers, status and metadata the simulator does not read.
#[test]
fn a_kubectl_dump_with_upstream_keys_loads_without_warnings() {
    let text = format!(
        "{}{}",
        queues(),
        r#"apiVersion: v1
metadata: {resourceVersion: ""}
items:
- apiVersion: batch/v1
  kind: Job
  metadata:
    annotations:
      kueue.x-k8s.io/job-min-parallelism: "1"
      kueuesim.io/duration: 1h
    creationTimestamp: "2025-01-01T00:00:00Z"
    generation: 1
    labels:
      kueue.x-k8s.io/queue-name: lq
      kueue.x-k8s.io/priority-class: high
      kueue.x-k8s.io/job-uid: 0c4b6f0e
    name: j
    namespace: default
    resourceVersion: "1234"
    uid: 0c4b6f0e-0000-0000-0000-000000000000
  spec:
    parallelism: 1
    suspend: false
    template:
      metadata:
        annotations:
          kueue.x-k8s.io/workload: job-j-abcde
          kueue.x-k8s.io/podset: main
        labels:
          batch.kubernetes.io/job-name: j
          kueue.x-k8s.io/managed: "true"
          kueue.x-k8s.io/podset: main
      spec:
        containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]
  status: {active: 1}
- apiVersion: kueue.x-k8s.io/v1beta2
  kind: WorkloadPriorityClass
  metadata: {name: high, generation: 1, uid: x}
  value: 1000
  description: high
- apiVersion: kueue.x-k8s.io/v1beta2
  kind: Workload
  metadata:
    finalizers: [kueue.x-k8s.io/resource-in-use]
    labels:
      kueue.x-k8s.io/job-uid: 0c4b6f0e
    ownerReferences: [{apiVersion: batch/v1, kind: Job, name: other, uid: y, controller: true}]
    name: job-other-12345
    namespace: default
  spec:
    active: true
    queueName: lq
    priority: 0
    podSets:
    - count: 1
      name: main
      template:
        metadata:
          labels: {kueue.x-k8s.io/managed: "true", kueue.x-k8s.io/podset: main}
        spec:
          containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]
  status:
    conditions:
    - {type: QuotaReserved, status: "False", reason: Pending, message: "waiting", lastTransitionTime: "2025-01-01T00:00:00Z"}
    resourceRequests: [{name: main, resources: {nvidia.com/gpu: "1"}}]
    requeueState: {count: 1, requeueAt: "2025-01-01T00:01:00Z"}
    schedulingStats: {evictions: [{reason: Preempted, underlyingCause: "", count: 1}]}
- apiVersion: kueue.x-k8s.io/v1beta2
  kind: ClusterQueue
  metadata: {name: other}
  spec:
    namespaceSelector: {}
    queueingStrategy: BestEffortFIFO
    flavorFungibility: {whenCanBorrow: MayStopSearch, whenCanPreempt: TryNextFlavor}
    preemption: {withinClusterQueue: Never, reclaimWithinCohort: Never, borrowWithinCohort: {policy: Never}}
    stopPolicy: None
    resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
      - name: default
        resources: [{name: nvidia.com/gpu, nominalQuota: "8", borrowingLimit: "0"}]
  status:
    admittedWorkloads: 0
    pendingWorkloads: 1
    reservingWorkloads: 0
    conditions: [{type: Active, status: "True", reason: Ready, message: Can admit new workloads}]
    flavorsReservation: [{name: default, resources: [{name: nvidia.com/gpu, total: "0", borrowed: "0"}]}]
    flavorsUsage: [{name: default, resources: [{name: nvidia.com/gpu, total: "0", borrowed: "0"}]}]
    fairSharing: {weightedShare: 0}
- apiVersion: kueue.x-k8s.io/v1beta2
  kind: LocalQueue
  metadata: {name: lq2, namespace: default}
  spec: {clusterQueue: other}
  status:
    pendingWorkloads: 0
    flavorsReservation: [{name: default, resources: [{name: nvidia.com/gpu, total: "0"}]}]
kind: List
"#
    );
    let loaded = load_text("t.yaml", &text).expect("loads");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let strict = LoadOptions {
        strict: true,
        ..Default::default()
    };
    let file = [SourceFile {
        name: "t.yaml".into(),
        text,
    }];
    assert!(load(&file, strict).is_ok());
}

#[test]
fn a_node_label_a_selector_names_is_the_users_own() {
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {kueuesim.io/pool: a}}\nstatus: {allocatable: {cpu: 1}}\n";
    let loaded = load_text("t.yaml", node).expect("a warning");
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].starts_with("t.yaml:3:30: label kueuesim.io/pool "));
    // A ResourceFlavor selecting it (after the node): no warning.
    let text = format!(
        "{node}---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: f}}\nspec: {{nodeLabels: {{kueuesim.io/pool: a}}}}\n"
    );
    let loaded = load_text("t.yaml", &text).expect("loads");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn a_typo_set_by_set_points_into_the_argument() {
    let text = format!(
        "{}{}",
        queues(),
        job("    kueue.x-k8s.io/queue-name: lq\n", "")
    );
    let opts = LoadOptions {
        sets: vec!["job/default/j:metadata.labels.kueue\\.x-k8s\\.io/queue-nme=lq".into()],
        ..Default::default()
    };
    let l = crate::util::load_text_with("t.yaml", &text, opts).expect("a warning");
    assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
    assert!(
        l.warnings[0].starts_with("--set[1]:1:31: label kueue.x-k8s.io/queue-nme "),
        "{:?}",
        l.warnings
    );
}

#[test]
fn workloads_naming_a_missing_local_queue_warn_once_per_queue() {
    let two = format!(
        "{}{}---\n{}",
        queues(),
        job("    kueue.x-k8s.io/queue-name: nope\n", ""),
        job("    kueue.x-k8s.io/queue-name: nope\n", "").replace("name: j", "name: k")
    );
    let loaded = load_text("t.yaml", &two).expect("a missing LocalQueue is a warning");
    assert_eq!(
        loaded.warnings,
        [
            "t.yaml:26:7: LocalQueue default/nope is not defined in the input; 2 workload(s) name it (the first here) and will stay pending as Kueue keeps them (\"LocalQueue nope doesn't exist\")"
        ]
    );
    // Still a warning with --strict (upstream accepts such workloads).
    let strict = LoadOptions {
        strict: true,
        ..Default::default()
    };
    assert!(crate::util::load_text_with("t.yaml", &two, strict).is_ok());
}

#[test]
fn a_field_of_the_other_api_version_names_what_this_version_writes() {
    // v1beta2 calls a ClusterQueue's cohort `cohortName`; an API server refuses v1beta1's
    // `cohort` on a v1beta2 object. Its author meant a cohort, so the loader reads it.
    let v2 = format!(
        "{FLAVOR}---\n{}",
        cq("8").replace("spec:\n", "spec:\n  cohort: c\n")
    );
    let loaded = load_text("t.yaml", &v2).expect("a warning");
    assert_eq!(
        loaded.warnings,
        [
            "t.yaml:11:3: ClusterQueue field spec.cohort is a field of kueue.x-k8s.io/v1beta1, not of kueue.x-k8s.io/v1beta2 (an API server refuses it under strict field validation, kubectl's default); kueue.x-k8s.io/v1beta2 writes cohortName; read all the same"
        ]
    );
    assert_eq!(loaded.world.cohorts.len(), 1, "the cohort is read");
    assert!(loaded.world.cluster_queues[0].cohort.is_some());
    let e = strict_load_error(&v2);
    assert!(
        e.starts_with("t.yaml:11:3: ClusterQueue field spec.cohort is a field of kueue.x-k8s.io/v1beta1, not of kueue.x-k8s.io/v1beta2 (an API server refuses it under strict field validation, kubectl's default); kueue.x-k8s.io/v1beta2 writes cohortName (--strict)"),
        "{e}"
    );
    // The same object in v1beta1 is right, and its mirror image is not.
    let v1 = v2.replace(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue",
    );
    assert!(
        load_text("t.yaml", &v1)
            .expect("v1beta1")
            .warnings
            .is_empty()
    );
    let mirror = v1.replace("cohort: c", "cohortName: c");
    assert_eq!(
        load_text("t.yaml", &mirror).expect("a warning").warnings,
        [
            "t.yaml:11:3: ClusterQueue field spec.cohortName is a field of kueue.x-k8s.io/v1beta2, not of kueue.x-k8s.io/v1beta1 (an API server refuses it under strict field validation, kubectl's default); kueue.x-k8s.io/v1beta1 writes cohort; read all the same"
        ]
    );
    // v1beta1's admissionChecks alone on a v1beta2 ClusterQueue: the name is also a field
    // of v1beta2's admissionChecksStrategy, and the walk tells them apart by place.
    // Both are read: the check they name must exist.
    let check = "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ProvisioningRequestConfig\nmetadata: {name: p}\nspec: {provisioningClassName: check-capacity.autoscaling.x-k8s.io}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: ac}\nspec: {controllerName: kueue.x-k8s.io/provisioning-request, parameters: {name: p}}\n";
    let checks = v2.replace("cohort: c", "admissionChecks: [ac]") + check;
    assert_eq!(
        load_text("t.yaml", &checks).expect("a warning").warnings,
        [
            "t.yaml:11:3: ClusterQueue field spec.admissionChecks is a field of kueue.x-k8s.io/v1beta1, not of kueue.x-k8s.io/v1beta2 (an API server refuses it under strict field validation, kubectl's default); kueue.x-k8s.io/v1beta2 writes admissionChecksStrategy; read all the same"
        ]
    );
    let strategy = v2.replace(
        "cohort: c",
        "admissionChecksStrategy: {admissionChecks: [{name: ac}]}",
    ) + check;
    let loaded = load_text("t.yaml", &strategy).expect("v1beta2");
    assert!(loaded.warnings.is_empty());
    assert!(loaded.world.autoscaling.expect("read").checks[0].is_some());
    // A field of the other version that nothing reads is ignored, as an unknown one is.
    let gated = v2
        .replace("cohort: c", "concurrentAdmissionPolicy: {}")
        .replace(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue",
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue",
        );
    assert_eq!(
        load_text("t.yaml", &gated).expect("a warning").warnings,
        [
            "t.yaml:11:3: ClusterQueue field spec.concurrentAdmissionPolicy is a field of kueue.x-k8s.io/v1beta2, not of kueue.x-k8s.io/v1beta1 (an API server refuses it under strict field validation, kubectl's default); ignored"
        ]
    );
}
