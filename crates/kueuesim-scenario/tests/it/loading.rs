//! How input objects become workloads: order, times, and state carried over from a snapshot.

use kueuesim_engine::Simulation;
use kueuesim_report::output::result;

use crate::util::load_text;

const SETUP: &str = "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
";

fn workload(name: &str, extra_meta: &str, status: &str) -> String {
    format!(
        "---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: {name}
  namespace: ns
{extra_meta}spec:
  queueName: q
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - resources: {{requests: {{nvidia.com/gpu: 4}}}}
{status}"
    )
}

fn job(name: &str) -> String {
    format!(
        "---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: ns
  labels: {{kueue.x-k8s.io/queue-name: q}}
  annotations: {{kueuesim.io/duration: 1h}}
spec:
  template:
    spec:
      containers:
      - resources: {{limits: {{nvidia.com/gpu: 4}}}}
"
    )
}

/// A scenario is a state: equal arrivals are ordered by kind (in the loader's order of API
/// groups, `batch` before `kueue.x-k8s.io`) and name, never by where they are written.
#[test]
fn equal_arrivals_go_by_kind_and_name_whatever_the_document_order() {
    let first = workload(
        "first",
        "  uid: a\n  annotations: {kueuesim.io/duration: 1h}\n",
        "",
    );
    let names = |text: String| -> Vec<String> {
        let loaded = load_text("t.yaml", &text).unwrap();
        loaded
            .world
            .workloads
            .iter()
            .map(|w| w.name.clone())
            .collect()
    };
    let forward = names(format!("{SETUP}{first}{}{}", job("second"), job("a-third")));
    let backward = names(format!("{SETUP}{}{first}{}", job("a-third"), job("second")));
    assert_eq!(forward, backward);
    assert!(forward[0].starts_with("job-a-third-"), "{forward:?}");
    assert!(forward[1].starts_with("job-second-"), "{forward:?}");
    assert_eq!(forward[2], "first");
}

#[test]
fn admitted_workload_of_a_snapshot_runs_at_time_zero_and_holds_quota() {
    let meta = "  creationTimestamp: \"2026-01-01T00:00:00Z\"\n  annotations: {kueuesim.io/remaining: 30m, kueuesim.io/duration: 5h}\n";
    let status = "status:
  admission:
    clusterQueue: cq
    podSetAssignments:
    - name: main
      flavors: {nvidia.com/gpu: default}
      count: 1
  conditions:
  - type: QuotaReserved
    status: \"True\"
    lastTransitionTime: \"2026-01-01T00:30:00Z\"
";
    let text = format!(
        "{SETUP}{}{}",
        workload("running", meta, status),
        job("waiting").replace(
            "name: waiting\n",
            "name: waiting\n  creationTimestamp: \"2026-01-01T00:10:00Z\"\n"
        )
    );
    let loaded = load_text("t.yaml", &text).unwrap();
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let running = r.workloads.iter().find(|w| w.name == "running").unwrap();
    // Reserved at 30m by its condition, but the run starts at the earliest creation time; a
    // workload that holds quota in the input runs from time 0, for its remaining 30m.
    assert_eq!(
        (running.admitted_at, running.running_at, running.finished_at),
        (Some(0.0), Some(0.0), Some(1800.0))
    );
    assert_eq!(
        running.pod_sets[0]
            .flavors
            .get("nvidia.com/gpu")
            .map(String::as_str),
        Some("default")
    );
    // The job created at 10m needs the whole quota: it waits for the snapshot's workload.
    let waiting = r
        .workloads
        .iter()
        .find(|w| w.name.starts_with("job-waiting-"))
        .unwrap();
    assert_eq!(waiting.created_at, 600.0);
    // Parked as inadmissible (BestEffortFIFO), it returns 1 s after the quota is freed
    // (requeueBatchPeriod).
    assert_eq!(
        (waiting.admitted_at, waiting.finished_at),
        (Some(1801.0), Some(5401.0))
    );
}

/// A 2,000-object `kubectl get … -A -o yaml` dump (status, managedFields, uids and all) loads
/// as is and continues: admitted Workloads hold their quota from time 0 and finish after
/// their remaining time; pending ones are admitted as quota frees up.
#[test]
fn kubectl_dump_of_two_thousand_objects_loads_and_continues() {
    // The snapshot was taken at midnight: the run starts there.
    let text = format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: snapshot}}\nspec: {{startTime: \"2026-03-02T00:00:00Z\"}}\n---\n{}",
        kueuesim_scenario::synthetic::kubectl_dump(750, 20, 1208)
    );
    let loaded = crate::util::load_text("dump.yaml", &text).expect("the dump loads");
    let w = &loaded.world;
    let objects = w.nodes.len()
        + w.flavors.len()
        + w.cluster_queues.len()
        + w.local_queues.len()
        + w.workloads.len()
        + w.priority_classes.len();
    assert_eq!(objects, 750 + 1 + 20 + 20 + 1208 + 1);
    assert_eq!(
        w.workloads
            .iter()
            .filter(|x| x.initial_admission.is_some())
            .count(),
        604
    );
    let mut world = loaded.world.clone();
    world.config.until =
        Some(kueuesim_model::SimTime::ZERO + kueuesim_model::SimDuration::from_secs(3600));
    let out = kueuesim_engine::Simulation::new(&world).run();
    let r = kueuesim_report::output::result(&world, &out);
    let admitted_at_start = r
        .workloads
        .iter()
        .filter(|x| x.admitted_at.is_some_and(|a| a <= 0.0))
        .count();
    assert_eq!(admitted_at_start, 604);
    assert_eq!(
        r.summary.workloads.finished, 1208,
        "everything ran within the hour"
    );
}

/// A Workload admitted in a snapshot with no time of its own runs for the Simulation's
/// `spec.defaultRemaining`; its own `kueuesim.io/remaining` wins.
#[test]
fn default_remaining_for_admitted_workloads_of_a_snapshot() {
    let wl = |name: &str, ann: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: {name}
  namespace: ns
  annotations: {{{ann}}}
spec:
  queueName: q
  podSets:
  - name: main
    count: 1
    template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]}}}}
status:
  admission:
    clusterQueue: cq
    podSetAssignments:
    - name: main
      count: 1
      flavors: {{cpu: default}}
"
        )
    };
    let text = format!(
        "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{defaultRemaining: 10m}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: 10}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: ns}}
spec: {{clusterQueue: cq}}
---
{}---
{}",
        wl("plain", ""),
        wl("own", "kueuesim.io/remaining: 2m")
    );
    let loaded = crate::util::load_text("t.yaml", &text).expect("loads");
    let out = kueuesim_engine::Simulation::new(&loaded.world).run();
    let r = kueuesim_report::output::result(&loaded.world, &out);
    let finished = |n: &str| {
        r.workloads
            .iter()
            .find(|w| w.name == n)
            .and_then(|w| w.finished_at)
    };
    assert_eq!(finished("plain"), Some(600.0));
    assert_eq!(finished("own"), Some(120.0));
}

#[test]
fn a_workloads_topology_request_is_its_field_and_template_annotations_only_warn() {
    use kueuesim_model::TopologyRequest;
    let ps = |tr: &str, ann: &str| {
        format!(
            "---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: w, namespace: ns}}
spec:
  queueName: q
  podSets:
  - name: main
    count: 1
{tr}    template:
      metadata: {{annotations: {{{ann}}}}}
      spec: {{containers: [{{resources: {{requests: {{nvidia.com/gpu: 1}}}}}}]}}
"
        )
    };
    let request = |text: String| {
        let l = load_text("t.yaml", &format!("{SETUP}{text}")).expect("loads");
        (
            l.world.workloads[0].pod_sets[0].topology_request.clone(),
            l.warnings,
        )
    };
    for (field, want) in [
        (
            "    topologyRequest: {required: rack}\n",
            Some(TopologyRequest::Required("rack".into())),
        ),
        (
            "    topologyRequest: {preferred: block}\n",
            Some(TopologyRequest::Preferred("block".into())),
        ),
        (
            "    topologyRequest: {unconstrained: true}\n",
            Some(TopologyRequest::Unconstrained),
        ),
        // `required` wins over `preferred`, as upstream's levelKey takes it first.
        (
            "    topologyRequest: {preferred: block, required: rack}\n",
            Some(TopologyRequest::Required("rack".into())),
        ),
        ("    topologyRequest: {unconstrained: false}\n", None),
        ("    topologyRequest: {podIndexLabel: idx}\n", None),
    ] {
        let (got, warnings) = request(ps(field, ""));
        assert_eq!(got, want, "{field}");
        assert!(warnings.is_empty(), "{field}: {warnings:?}");
    }
    // The field decides even when the template's annotation says otherwise.
    let (got, warnings) = request(ps(
        "    topologyRequest: {required: rack}\n",
        "kueue.x-k8s.io/podset-preferred-topology: block",
    ));
    assert_eq!(got, Some(TopologyRequest::Required("rack".into())));
    assert!(warnings.is_empty(), "{warnings:?}");
    // An annotation alone is not read on a Workload: a warning at the annotation.
    let (got, warnings) = request(ps("", "kueue.x-k8s.io/podset-required-topology: rack"));
    assert_eq!(got, None);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("t.yaml:31:73: ")
            && warnings[0].contains("Workload pod set \"main\": Kueue reads a Workload's topology request from spec.podSets[].topologyRequest")
            && warnings[0].contains("kueue.x-k8s.io/podset-required-topology annotation; the pod set has no topology request"),
        "{warnings:?}"
    );
}

/// Kueue TAS slice requests: a Job's `podset-slice-required-topology` with
/// `podset-slice-size` (as `jobframework`'s `podSetTopologyRequestBuilder` reads them, checked
/// as `ValidateTASPodSetRequest` checks them), a Workload's `podSetSliceRequiredTopology` with
/// `podSetSliceSize`. A slice-only request makes the pod set TAS and unconstrained
/// (`isSliceTopologyOnlyRequest`).
#[test]
fn kueue_slice_requests_are_read_and_checked_as_upstream_validates() {
    use crate::util::load_error;
    use kueuesim_model::{TopologyRequest, TopologySlice};
    // One Job document, and an input of the setup with one Job named j.
    let job_doc = |name: &str, ann: &str| {
        format!(
            "---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: ns
  labels: {{kueue.x-k8s.io/queue-name: q}}
spec:
  parallelism: 4
  template:
    metadata:
      annotations: {{{ann}}}
    spec: {{containers: [{{resources: {{requests: {{nvidia.com/gpu: 1}}}}}}]}}
"
        )
    };
    let job = |ann: &str| format!("{SETUP}{}", job_doc("j", ann));
    let topology = |text: String| {
        let l = load_text("t.yaml", &text).expect("loads");
        let ps = &l.world.workloads[0].pod_sets[0];
        (ps.topology_request.clone(), ps.topology_slice.clone())
    };
    let rack2 = Some(TopologySlice {
        level: "rack".into(),
        size: 2,
    });
    assert_eq!(
        topology(job(
            "kueue.x-k8s.io/podset-slice-required-topology: rack, kueue.x-k8s.io/podset-slice-size: \"2\""
        )),
        (Some(TopologyRequest::Unconstrained), rack2.clone())
    );
    assert_eq!(
        topology(job(
            "kueue.x-k8s.io/podset-required-topology: block, kueue.x-k8s.io/podset-slice-required-topology: rack, kueue.x-k8s.io/podset-slice-size: \"2\""
        )),
        (
            Some(TopologyRequest::Required("block".into())),
            rack2.clone()
        )
    );
    // The Workload's fields; its template's annotations are not read.
    let workload = |tr: &str, ann: &str| {
        format!(
            "{SETUP}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: w, namespace: ns}}
spec:
  queueName: q
  podSets:
  - name: main
    count: 4
{tr}    template:
      metadata: {{annotations: {{{ann}}}}}
      spec: {{containers: [{{resources: {{requests: {{nvidia.com/gpu: 1}}}}}}]}}
"
        )
    };
    assert_eq!(
        topology(workload(
            "    topologyRequest: {podSetSliceRequiredTopology: rack, podSetSliceSize: 2}\n",
            ""
        )),
        (Some(TopologyRequest::Unconstrained), rack2)
    );
    assert_eq!(
        topology(workload(
            "",
            "kueue.x-k8s.io/podset-slice-required-topology: rack, kueue.x-k8s.io/podset-slice-size: \"0\""
        )),
        (None, None)
    );
    // One without the other, a size below 1 or not a number: errors where they are written.
    let e = load_error(&job("kueue.x-k8s.io/podset-slice-required-topology: rack"));
    assert!(
        e.contains("t.yaml:32:68:")
            && e.contains("kueue.x-k8s.io/podset-slice-required-topology without kueue.x-k8s.io/podset-slice-size"),
        "{e}"
    );
    let e = load_error(&job("kueue.x-k8s.io/podset-slice-size: \"2\""));
    assert!(
        e.contains("t.yaml:32:55:")
            && e.contains("kueue.x-k8s.io/podset-slice-size without kueue.x-k8s.io/podset-slice-required-topology"),
        "{e}"
    );
    for size in ["\"0\"", "\"two\""] {
        let e = load_error(&job(&format!(
            "kueue.x-k8s.io/podset-slice-required-topology: rack, kueue.x-k8s.io/podset-slice-size: {size}"
        )));
        assert!(
            e.contains("t.yaml:32:")
                && e.contains(&format!(
                    "kueue.x-k8s.io/podset-slice-size {:?}: expected an integer of at least 1",
                    size.trim_matches('"')
                )),
            "{e}"
        );
    }
    let e = load_error(&workload(
        "    topologyRequest: {podSetSliceRequiredTopology: rack}\n",
        "",
    ));
    assert!(
        e.contains("podSetSliceRequiredTopology without podSetSliceSize"),
        "{e}"
    );
    // A slice larger than the Job's pod set: the Job webhooks refuse it
    // (`ValidateSliceSizeAnnotationUpperBound`); a slice of the whole pod set is accepted.
    let e = load_error(&job(
        "kueue.x-k8s.io/podset-slice-required-topology: rack, kueue.x-k8s.io/podset-slice-size: \"8\"",
    ));
    assert!(
        e.contains("t.yaml:32:")
            && e.contains(
                "kueue.x-k8s.io/podset-slice-size 8 is greater than pod set \"main\"'s 4 pods"
            ),
        "{e}"
    );
    assert_eq!(
        topology(job(
            "kueue.x-k8s.io/podset-slice-required-topology: rack, kueue.x-k8s.io/podset-slice-size: \"4\""
        ))
        .1,
        Some(TopologySlice {
            level: "rack".into(),
            size: 4
        })
    );
    // Multi-layer slices (TASMultiLayerTopology) are not modelled: one warning for all the
    // pod sets that carry the annotation, at the first.
    let two = format!(
        "{}{}",
        job(
            "kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{\"topology\":\"rack\",\"size\":2}]'"
        ),
        job_doc(
            "j2",
            "kueue.x-k8s.io/podset-slice-required-topology-constraints: '[]'"
        )
    );
    let l = load_text("t.yaml", &two).expect("loads");
    let w: Vec<&String> = l
        .warnings
        .iter()
        .filter(|w| w.contains("podset-slice-required-topology-constraints"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", l.warnings);
    assert!(
        w[0].starts_with("t.yaml:32:")
            && w[0].contains("is not modelled; 2 pod set(s) carry it (the first here)"),
        "{}",
        w[0]
    );
}
