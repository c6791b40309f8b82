//! Capacity on demand: autoscaled NodePools and Kueue's ProvisioningRequest admission check
//! (scenarios/autoscale/), and the errors of their input.

use kueuesim_report::output::to_json;

use crate::util::{FLAVOR, condition, load_error, load_text, run_dir, times, wl};

/// The hand-computed outcome in scenarios/autoscale/provisioning/scenario.yaml's header.
#[test]
fn provisioning_check_in_front_of_an_autoscaled_pool() {
    let r = run_dir("autoscale/provisioning");
    let (h, m) = (3600.0, 60.0);
    // a fits on the node there: admitted at once, runs at once.
    let a = wl(&r, "team", "a");
    assert_eq!(times(a), (Some(0.0), Some(0.0), Some(h)));
    // b's request scales the pool up by 2: admitted at 0, running when the nodes join.
    let b = wl(&r, "team", "b");
    assert_eq!(times(b), (Some(0.0), Some(5.0 * m), Some(h + 5.0 * m)));
    assert_eq!(b.pod_sets[0].nodes, ["gpu-1", "gpu-2"]);
    let reasons: Vec<(&str, &str)> = b.events.iter().map(|e| (e.source, e.reason)).collect();
    assert_eq!(
        &reasons[..4],
        [
            ("kueue-admission", "QuotaReserved"),
            (
                "kueue-provisioning-request-controller",
                "ProvisioningRequestCreated"
            ),
            (
                "kueue-provisioning-request-controller",
                "AdmissionCheckUpdated"
            ),
            ("kueue-workload-controller", "Admitted"),
        ]
    );
    assert_eq!(
        b.events[1].message,
        format!("Created ProvisioningRequest: \"{}-capacity-1\"", b.name)
    );
    assert_eq!(
        b.events[2].message,
        "Admission check capacity updated state from Pending to Ready with message: Capacity is found in the cluster"
    );
    // c: the pool is at its max; 3 retries after 60 s, 120 s, 240 s, then Rejected.
    let c = wl(&r, "team", "c");
    assert_eq!(c.state, "Inactive");
    let evictions: Vec<(f64, &str)> = c.evictions.iter().map(|e| (e.at, e.reason)).collect();
    assert_eq!(
        evictions,
        [
            (0.0, "AdmissionCheck"),
            (m, "AdmissionCheck"),
            (3.0 * m, "AdmissionCheck"),
            (7.0 * m, "DeactivatedDueToAdmissionCheck"),
        ]
    );
    assert_eq!(
        condition(c, "Evicted").message,
        "The workload is deactivated due to AdmissionCheck in Rejected state: \"capacity\" (CA could not find requested capacity)"
    );
    let retry = c
        .events
        .iter()
        .find(|e| e.reason == "EvictedDueToAdmissionCheck")
        .expect("a Retry eviction");
    assert_eq!(
        retry.message,
        "Evicted due to AdmissionCheck in Retry state: \"capacity\" (Retrying after failure: CA could not find requested capacity)"
    );
    assert!(
        c.events.iter().any(|e| e.reason == "AdmissionCheckRejected"
            && e.kind == "Warning"
            && e.message
                == "Deactivated due to AdmissionCheck in Rejected state: \"capacity\" (CA could not find requested capacity)"),
        "{:?}",
        c.events
    );
    // d at 2h: one pod on the node there, the pool grows by one (gpu-0 again) for the other.
    let d = wl(&r, "team", "d");
    assert_eq!(
        times(d),
        (
            Some(2.0 * h),
            Some(2.0 * h + 5.0 * m),
            Some(3.0 * h + 5.0 * m)
        )
    );
    let a = r.summary.autoscaling.as_ref().expect("summary.autoscaling");
    assert_eq!(
        (
            a.scale_ups,
            a.nodes_added,
            a.nodes_removed,
            a.peak_nodes,
            a.nodes_at_end
        ),
        (2, 3, 3, 3, 1)
    );
    assert_eq!(a.node_hours, 445.0 / 60.0);
    assert_eq!(
        (
            a.provisioning_requests,
            a.provisioning_failed,
            a.provisioning_rejected
        ),
        (7, 4, 1)
    );
    assert_eq!(r.summary.evictions["AdmissionCheck"], 3);
    assert_eq!(r.summary.evictions["DeactivatedDueToAdmissionCheck"], 1);
    insta::assert_snapshot!(to_json(&r));
}

/// Without an admission check, pods pending unschedulable make the cluster-autoscaler grow
/// the pool (as its main loop does), and an empty node goes after scaleDownUnneeded.
#[test]
fn pending_pods_scale_the_pool_up_and_empty_nodes_go() {
    let text = format!(
        "{FLAVOR}---
apiVersion: kueuesim.io/v1alpha1
kind: NodePool
metadata: {{name: gpu}}
spec:
  nodesPerDomain: 4
  template: {{allocatable: {{nvidia.com/gpu: \"8\", pods: \"110\"}}}}
  autoscaling: {{min: 0, max: 4, provisioningDelay: 3m, scaleDownUnneeded: 7m}}
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {{kueuesim.io/duration: 1h}}
spec:
  containers:
  - resources: {{limits: {{nvidia.com/gpu: \"8\"}}}}
"
    );
    let loaded = load_text("t.yaml", &text).expect("loads");
    let outcome = kueuesim_engine::Simulation::new(&loaded.world).run();
    let r = kueuesim_report::output::result(&loaded.world, &outcome);
    let p = &r.workloads[0];
    // The pod waits for the node the scale-up asked for: 3 minutes.
    assert_eq!(p.running_at, Some(180.0));
    assert_eq!(p.pod_sets[0].nodes, ["gpu-0"]);
    let a = r.summary.autoscaling.as_ref().expect("summary.autoscaling");
    assert_eq!((a.scale_ups, a.nodes_added, a.peak_nodes), (1, 1, 1));
    // The run ends when the pod does (1h3m); the node goes 7 minutes later, after the end,
    // and is not counted.
    assert_eq!(r.summary.end_time, 3780.0);
    assert_eq!((a.nodes_removed, a.nodes_at_end), (0, 1));
    assert_eq!(a.node_hours, 1.0);
    // With a horizon past it, the scale-down is the run's: the node went at 1h10m.
    let text = format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: s}}\nspec: {{until: 2h}}\n---\n{text}"
    );
    let loaded = load_text("t.yaml", &text).expect("loads");
    let outcome = kueuesim_engine::Simulation::new(&loaded.world).run();
    let r = kueuesim_report::output::result(&loaded.world, &outcome);
    let a = r.summary.autoscaling.as_ref().expect("summary.autoscaling");
    assert_eq!((a.nodes_added, a.nodes_removed, a.nodes_at_end), (1, 1, 0));
    assert_eq!(a.node_hours, (4200.0 - 180.0) / 3600.0);
}

fn with_check(check: &str, config: &str) -> String {
    format!(
        "{FLAVOR}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {{name: prc}}
spec:
{config}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {{name: capacity}}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {{apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: prc}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  admissionChecksStrategy:
    admissionChecks:
    - name: {check}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - {{name: nvidia.com/gpu, nominalQuota: 8}}
"
    )
}

const ATOMIC: &str = "  provisioningClassName: best-effort-atomic-scale-up.autoscaling.x-k8s.io\n";

#[test]
fn a_check_and_its_config_load() {
    let loaded = load_text("t.yaml", &with_check("capacity", ATOMIC)).expect("loads");
    let a = loaded.world.autoscaling.as_ref().expect("autoscaling");
    let c = a.checks[0].as_ref().expect("cq's check");
    assert_eq!(
        (
            c.name.as_str(),
            c.backoff_limit_count,
            c.backoff_base.millis(),
            c.backoff_max.millis()
        ),
        ("capacity", 3, 60_000, 1_800_000)
    );
}

#[test]
fn a_misspelt_check_name_is_an_error_naming_the_closest() {
    let e = load_error(&with_check("capacty", ATOMIC));
    assert!(
        e.starts_with("t.yaml:25:13: admission check \"capacty\": no such AdmissionCheck (closest: \"capacity\")"),
        "{e}"
    );
}

#[test]
fn an_unknown_field_of_a_config_is_an_error_naming_the_closest() {
    let e = load_error(&with_check(
        "capacity",
        &format!("{ATOMIC}  retryStrategy: {{backoffLimitCont: 2}}\n"),
    ));
    assert!(e.starts_with("t.yaml:11:19: "), "{e}");
    assert!(e.contains("unknown field `backoffLimitCont`"), "{e}");
    assert!(e.contains("(closest: \"backoffLimitCount\")"), "{e}");
}

#[test]
fn an_unknown_class_is_an_error() {
    let e = load_error(&with_check(
        "capacity",
        "  provisioningClassName: queued-provisioning.gke.io\n",
    ));
    assert!(
        e.starts_with("t.yaml:10:26: invalid provisioningClassName \"queued-provisioning.gke.io\": expected one of check-capacity.autoscaling.x-k8s.io, best-effort-atomic-scale-up.autoscaling.x-k8s.io"),
        "{e}"
    );
}

#[test]
fn autoscaling_bounds_are_checked() {
    let pool = |a: &str| {
        format!(
            "apiVersion: kueuesim.io/v1alpha1
kind: NodePool
metadata: {{name: gpu}}
spec:
  nodesPerDomain: 4
  template: {{allocatable: {{nvidia.com/gpu: \"8\"}}}}
  autoscaling: {a}
"
        )
    };
    let e = load_error(&pool("{max: 5}"));
    assert!(
        e.starts_with("t.yaml:7:22: autoscaling.max 5: expected an integer from 1 to the 4 nodes the pool lays out"),
        "{e}"
    );
    let e = load_error(&pool("{min: 3, max: 2}"));
    assert!(
        e.starts_with(
            "t.yaml:7:22: autoscaling.min 3: expected an integer from 0 to autoscaling.max (2)"
        ),
        "{e}"
    );
    let e = load_error(&pool("{minn: 1}"));
    assert!(e.contains("unknown field `minn`"), "{e}");
    assert!(e.contains("(closest: \"min\")"), "{e}");
}

/// `check-capacity.autoscaling.x-k8s.io` never scales up: a request that does not fit on
/// the nodes there fails, and the retry after the back-off finds the capacity a finished
/// job left.
#[test]
fn check_capacity_books_what_is_there_and_never_scales_up() {
    let job = |name: &str, pods: u32| {
        format!(
            "---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: team
  labels: {{kueue.x-k8s.io/queue-name: q}}
  annotations: {{kueuesim.io/duration: 1h}}
spec:
  parallelism: {pods}
  completions: {pods}
  template:
    spec:
      containers:
      - resources: {{limits: {{nvidia.com/gpu: \"8\"}}}}
"
        )
    };
    let text = format!(
        "{FLAVOR}---
apiVersion: kueuesim.io/v1alpha1
kind: NodePool
metadata: {{name: gpu}}
spec:
  nodesPerDomain: 3
  template: {{allocatable: {{nvidia.com/gpu: \"8\", pods: \"110\"}}}}
  autoscaling: {{min: 2, max: 3}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {{name: check}}
spec:
  provisioningClassName: check-capacity.autoscaling.x-k8s.io
  retryStrategy: {{backoffLimitCount: 1, backoffBaseSeconds: 3600, backoffMaxSeconds: 3600}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {{name: capacity}}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {{name: check}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  admissionChecks: [capacity]
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - {{name: nvidia.com/gpu, nominalQuota: 24}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: team}}
spec: {{clusterQueue: cq}}
{}{}",
        job("a", 1),
        job("b", 2)
    );
    let loaded = load_text("t.yaml", &text).expect("loads");
    let outcome = kueuesim_engine::Simulation::new(&loaded.world).run();
    let r = kueuesim_report::output::result(&loaded.world, &outcome);
    assert_eq!(
        times(wl(&r, "team", "a")),
        (Some(0.0), Some(0.0), Some(3600.0))
    );
    let b = wl(&r, "team", "b");
    let evictions: Vec<(f64, &str)> = b.evictions.iter().map(|e| (e.at, e.reason)).collect();
    assert_eq!(evictions, [(0.0, "AdmissionCheck")]);
    assert_eq!(times(b), (Some(3600.0), Some(3600.0), Some(7200.0)));
    let a = r.summary.autoscaling.as_ref().expect("summary.autoscaling");
    assert_eq!(
        (a.scale_ups, a.nodes_added, a.provisioning_requests),
        (0, 0, 3)
    );
}

/// A node emptied by a pod lost (here a Job's pod on a failed GPU; the Job's replacement
/// pod finds no GPU there) starts its `scaleDownUnneeded` clock then, as after any release:
/// the node joins at 3m, loses its pod at 30m and goes at 37m. When only a workload's
/// release started the clock, it stayed empty to the 2h horizon (1.95 node-hours).
#[test]
fn a_node_emptied_by_a_lost_pod_goes_after_scale_down_unneeded() {
    let text = format!(
        "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec:
  until: 2h
  failures:
    nodes: {{mtbf: 87600h}}
    gpus: {{mtbf: {{fixed: 30m}}, repair: 24h}}
---
{FLAVOR}---
apiVersion: kueuesim.io/v1alpha1
kind: NodePool
metadata: {{name: gpu}}
spec:
  nodesPerDomain: 1
  template: {{allocatable: {{nvidia.com/gpu: \"8\", pods: \"110\"}}}}
  autoscaling: {{min: 0, max: 1, provisioningDelay: 3m, scaleDownUnneeded: 7m}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: j
  annotations: {{kueuesim.io/duration: 1h}}
spec:
  template:
    spec:
      containers:
      - resources: {{limits: {{nvidia.com/gpu: \"8\"}}}}
"
    );
    let loaded = load_text("t.yaml", &text).expect("loads");
    let outcome = kueuesim_engine::Simulation::new(&loaded.world).run();
    let r = kueuesim_report::output::result(&loaded.world, &outcome);
    let a = r.summary.autoscaling.as_ref().expect("summary.autoscaling");
    assert_eq!(a.nodes_removed, 1);
    // 34 minutes of the first node, then a few of the one a later scale-up brings for the
    // replacement.
    assert!(
        a.node_hours > 34.0 / 60.0 && a.node_hours < 40.0 / 60.0,
        "{a:?}"
    );
}

/// A Timeline change to an autoscaled pool's bounds or a ClusterQueue's checks is refused
/// at the change: the autoscaler and Kueue's checks are set up once (it loaded and did
/// nothing).
#[test]
fn a_timeline_changing_autoscaling_is_an_error() {
    let text = std::fs::read_to_string(
        crate::util::scenarios_dir().join("autoscale/provisioning/scenario.yaml"),
    )
    .expect("readable");
    let text = format!(
        "{text}---\napiVersion: kueuesim.io/v1alpha1\nkind: Timeline\nmetadata: {{name: grow}}\nspec:\n  changes:\n  - at: 1h\n    set: ['nodepool/gpu:spec.autoscaling.max=4']\n"
    );
    let e = load_error(&text);
    assert!(
        e.contains("alters a NodePool's spec.autoscaling or a ClusterQueue's admissionChecks"),
        "{e}"
    );
    // Any other change loads with the checks as they are (the epoch's build found no
    // AdmissionCheck and refused every Timeline of a ClusterQueue with a check).
    let quota = text.replace(
        "'nodepool/gpu:spec.autoscaling.max=4'",
        "'cq/cq:spec.resourceGroups[0].flavors[0].resources[0].nominalQuota=40'",
    );
    let loaded = load_text("t.yaml", &quota).unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.world.autoscaling.is_some());
}
