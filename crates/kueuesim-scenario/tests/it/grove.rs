//! Grove PodCliqueSets: what Grove's webhooks refuse is an error at its place, a misspelt
//! Grove field is an error (not a gang minimum silently lost), and Kueue in front serves each
//! PodGang's pods as one Workload of its LocalQueue.

use kueuesim_model::QueueRef;

use crate::util::{FLAVOR, cq, load_error, load_text};

/// A PodCliqueSet `pcs` in namespace `serving`: a `frontend` clique and a `worker` clique
/// (`worker` written by the caller, indented as a clique), with `extra` spliced into the
/// template.
fn pcs(worker: &str, extra: &str) -> String {
    format!(
        "apiVersion: grove.io/v1alpha1
kind: PodCliqueSet
metadata:
  name: pcs
  namespace: serving
spec:
  replicas: 1
  template:
{extra}    cliques:
    - name: frontend
      labels: {{kueue.x-k8s.io/queue-name: lq}}
      spec:
        replicas: 1
        podSpec:
          schedulerName: kai-scheduler
          containers:
          - resources: {{requests: {{cpu: '1'}}}}
{worker}"
    )
}

const WORKER: &str = "    - name: worker
      labels: {kueue.x-k8s.io/queue-name: lq}
      spec:
        replicas: 4
        minAvailable: 2
        podSpec:
          schedulerName: kai-scheduler
          containers:
          - resources: {limits: {nvidia.com/gpu: '1'}}
";

#[test]
fn a_misspelt_grove_field_is_an_error_at_its_place() {
    let e = load_error(&pcs(&WORKER.replace("minAvailable", "minAvailble"), ""));
    assert!(
        e.starts_with("t.yaml:22:9: unknown field `minAvailble`"),
        "{e}"
    );
    assert!(e.contains("minAvailble"), "{e}");
}

#[test]
fn min_available_above_replicas_is_refused() {
    let e = load_error(&pcs(
        &WORKER.replace("minAvailable: 2", "minAvailable: 5"),
        "",
    ));
    assert!(e.starts_with("t.yaml:22:23: minAvailable 5"), "{e}");
    assert!(e.contains("must not be greater than replicas (4)"), "{e}");
}

#[test]
fn a_pack_domain_needs_a_cluster_topology() {
    let e = load_error(&pcs(WORKER, "    topologyConstraint: {packDomain: rack}\n"));
    assert!(e.starts_with("t.yaml:9:38: packDomain \"rack\""), "{e}");
    assert!(e.contains("topology support is not enabled"), "{e}");
}

#[test]
fn cliques_run_on_kai() {
    let e = load_error(&pcs(
        &WORKER.replace("kai-scheduler", "default-scheduler"),
        "",
    ));
    assert!(
        e.contains("the schedulerName for all pods have to be the same"),
        "{e}"
    );
    let alone = pcs("", "").replace("kai-scheduler", "default-scheduler");
    let e = load_error(&alone);
    assert!(e.contains("is not a KAI scheduler"), "{e}");
}

#[test]
fn explicit_startup_order_must_not_loop() {
    let looped = pcs(
        &WORKER.replace(
            "        replicas: 4\n",
            "        replicas: 4\n        startsAfter: [frontend]\n",
        ),
        "    cliqueStartupType: CliqueStartupTypeExplicit\n",
    )
    .replace(
        "        replicas: 1\n",
        "        replicas: 1\n        startsAfter: [worker]\n",
    );
    let e = load_error(&looped);
    assert!(
        e.contains("clique must not have circular dependencies"),
        "{e}"
    );
    assert!(e.contains("frontend → worker → frontend"), "{e}");
    let unknown = pcs(WORKER, "    cliqueStartupType: CliqueStartupTypeExplicit\n").replace(
        "        replicas: 1\n",
        "        replicas: 1\n        startsAfter: [prefill]\n",
    );
    let e = load_error(&unknown);
    assert!(e.contains("startsAfter names \"prefill\""), "{e}");
}

/// Kueue has no Grove integration: the cliques' pods are plain Pods. Managed ones must form
/// one Kueue pod group, which Kueue admits whole: then the PodGang is one Workload of the
/// LocalQueue, named as the group; alone, each pod would be a Workload (an error here).
#[test]
fn kueue_in_front_admits_the_podgang_as_its_pod_group() {
    let lq = format!(
        "{FLAVOR}---\n{}---\napiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: serving}}
spec: {{clusterQueue: cq}}
---
",
        cq("8")
    );
    let grouped = |total: &str| {
        pcs(WORKER, "").replace(
            "      labels: {kueue.x-k8s.io/queue-name: lq}\n",
            &format!(
                "      labels: {{kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/pod-group-name: dynamo}}\n      annotations: {{kueue.x-k8s.io/pod-group-total-count: '{total}'}}\n"
            ),
        )
    };
    let loaded = load_text("t.yaml", &format!("{lq}{}", grouped("5"))).expect("loads");
    let w = &loaded.world.workloads[0];
    assert_eq!((w.name.as_str(), w.kind.as_str()), ("dynamo", "Workload"));
    assert!(matches!(w.queue, QueueRef::Local(_)), "{:?}", w.queue);
    assert_eq!(w.gang.min_member, Some(3));
    let mins: Vec<u32> = w.gang.kai_subgroups.iter().map(|g| g.min_member).collect();
    assert_eq!(mins, [1, 2]);
    // A total count that is not the PodGang's pods: Kueue would wait for ever.
    let e = load_error(&format!("{lq}{}", grouped("4")));
    assert!(e.contains("pod-group-total-count \"4\": expected 5"), "{e}");
    // Two replicas: two PodGangs in one Kueue group.
    let e = load_error(&format!(
        "{lq}{}",
        grouped("5").replace("  replicas: 1\n  template", "  replicas: 2\n  template")
    ));
    assert!(e.contains("would hold the pods of 2 PodGangs"), "{e}");
    // The queue label alone: each pod its own Workload.
    let e = load_error(&format!("{lq}{}", pcs(WORKER, "")));
    assert!(
        e.contains("Kueue would admit each pod as a Workload of its own"),
        "{e}"
    );
    // One clique without the label: the PodGang would be half Kueue's.
    let half = pcs(
        &WORKER.replace("      labels: {kueue.x-k8s.io/queue-name: lq}\n", ""),
        "",
    );
    let e = load_error(&format!("{lq}{half}"));
    assert!(
        e.contains("give label kueue.x-k8s.io/queue-name different values"),
        "{e}"
    );
    // Without the label and with no `default` LocalQueue, the PodGang bypasses Kueue.
    let none = pcs(WORKER, "").replace("      labels: {kueue.x-k8s.io/queue-name: lq}\n", "");
    let loaded = load_text("t.yaml", &none).expect("loads");
    let w = &loaded.world.workloads[0];
    assert_eq!(
        (w.kind.as_str(), &w.queue),
        ("PodGang", &QueueRef::Unmanaged)
    );
    assert_eq!(w.pod_name(1, 0).len(), "pcs-0-worker-".len() + 5);
}

/// What loads but cannot do what it says is a warning: a set of 0 replicas (the CRD's
/// default), a ClusterTopology without the KAI Topology KAI looks up by its name, KAI's queue
/// label on the PodCliqueSet, where KAI's grouper does not read it.
#[test]
fn warnings_for_what_does_nothing() {
    let none = pcs(WORKER, "").replace("  replicas: 1\n  template", "  template");
    let loaded = load_text("t.yaml", &none).expect("loads");
    assert!(loaded.world.workloads.is_empty());
    assert!(
        loaded.warnings.iter().any(|w| w.contains("has 0 replicas")),
        "{:?}",
        loaded.warnings
    );
    let topology = "apiVersion: grove.io/v1alpha1
kind: ClusterTopology
metadata: {name: grove-topology}
spec:
  levels:
  - {domain: rack, key: example/rack}
  - {domain: host, key: kubernetes.io/hostname}
---
";
    let queued = pcs(WORKER, "")
        .replace("      labels: {kueue.x-k8s.io/queue-name: lq}\n", "")
        .replace(
            "  namespace: serving\n",
            "  namespace: serving\n  labels: {kai.scheduler/queue: team}\n",
        );
    let loaded = load_text("t.yaml", &format!("{topology}{queued}")).expect("loads");
    let w = &loaded.world.workloads[0];
    let c = w.gang.kai_topology.as_ref().expect("preferred level");
    assert_eq!(
        (c.required.as_deref(), c.preferred.as_deref()),
        (None, Some("kubernetes.io/hostname"))
    );
    for expected in [
        "ClusterTopology grove-topology has no KAI Topology of the same name",
        "label kai.scheduler/queue on the PodCliqueSet is not read",
    ] {
        assert!(
            loaded.warnings.iter().any(|w| w.contains(expected)),
            "{expected}: {:?}",
            loaded.warnings
        );
    }
}

/// A ClusterTopology level's key is a node label key, checked as the API server checks one
/// (it reaches warnings and the terminal): an invalid one is an error at its place.
#[test]
fn a_cluster_topology_key_that_is_no_label_key_is_an_error() {
    let dir = crate::util::scenarios_dir().join("golden/grove-dynamo");
    let mut text = String::new();
    for e in std::fs::read_dir(&dir).expect("readable").flatten() {
        if e.path().extension().is_some_and(|x| x == "yaml") {
            text.push_str(&std::fs::read_to_string(e.path()).expect("readable"));
            text.push_str("\n---\n");
        }
    }
    let bad = text.replace("key: network.example/rack}", "key: \"rack\\u001b[31m\"}");
    assert_ne!(bad, text);
    let e = load_error(&bad);
    assert!(e.contains("key \"rack\\u{1b}[31m\""), "{e}");
}
