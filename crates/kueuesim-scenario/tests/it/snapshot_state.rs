//! A cluster dump is a state, not an order: what its objects hold (running pods on their
//! nodes, GPU shares, admitted quota) is booked before anything is scheduled, and the same
//! objects in any order give the same run, byte for byte.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result, to_json};
use kueuesim_scenario::{LoadOptions, SourceFile, load};
use proptest::prelude::*;

use crate::util::{load_text, scenarios_dir, wl};

fn run(text: &str) -> SimulationResult {
    let loaded = load_text("dump.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    result(&loaded.world, &Simulation::new(&loaded.world).run())
}

fn nodes(w: &WorkloadOut) -> Vec<&str> {
    w.pod_sets
        .iter()
        .flat_map(|p| p.nodes.iter().map(String::as_str))
        .collect()
}

/// A bare Pod in namespace `team` (`extra`: more metadata lines, `spec`: more spec lines,
/// both indented as fields of their block).
fn pod(name: &str, extra: &str, spec: &str, requests: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: team\n{extra}spec:\n{spec}  containers:\n  - name: main\n    resources: {{requests: {requests}}}\n"
    )
}

/// A node `n1` of 2 cpu and one 40000 MiB GPU, with GPUs as devices.
const ONE_GPU_NODE: &str = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: t}
spec: {until: 1h, gpuPlacement: {devices: true}}
---
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {nvidia.com/gpu.memory: \"40000\"}
status:
  allocatable: {cpu: \"2\", nvidia.com/gpu: \"1\", pods: \"110\"}
";

/// A running KAI pod holding half a GPU (`gpu-fraction: "0.5"`, `spec.nodeName`) holds its
/// share of the device (upstream `addSharedGPUTaskResources`): a pending 0.6 finds no device
/// and stays pending; a pending 0.5 joins it on the same GPU.
#[test]
fn a_running_kai_share_holds_its_part_of_the_gpu() {
    let kai = "  schedulerName: kai-scheduler\n";
    let running = pod(
        "a-running",
        "  annotations: {gpu-fraction: \"0.5\"}\n  labels: {runai-gpu-group: 6f2c}\n",
        &format!("{kai}  nodeName: n1\n"),
        "{cpu: \"500m\"}",
    );
    let big = pod(
        "b-pending",
        "  annotations: {gpu-fraction: \"0.6\"}\n",
        kai,
        "{cpu: \"500m\"}",
    );
    let r = run(&format!("{ONE_GPU_NODE}{running}{big}"));
    assert_eq!(nodes(wl(&r, "team", "a-running")), ["n1"]);
    let b = wl(&r, "team", "b-pending");
    assert!(nodes(b).is_empty(), "placed on {:?}", nodes(b));
    assert_eq!(b.state, "Pending");
    let half = pod(
        "c-pending",
        "  annotations: {gpu-fraction: \"0.5\"}\n",
        kai,
        "{cpu: \"500m\"}",
    );
    let r = run(&format!("{ONE_GPU_NODE}{running}{half}"));
    assert_eq!(nodes(wl(&r, "team", "c-pending")), ["n1"]);
}

/// A pending gang's pod written before a running pod on the same node does not take the
/// running pod's GPU and cpu: the running pod is booked first, whatever the order the dump
/// lists them in (kubectl sorts by name, not by state).
#[test]
fn a_pending_pod_listed_first_does_not_take_a_running_pods_node() {
    let gang = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: a-train, namespace: team}\nspec: {minMember: 1}\n";
    let pending = pod(
        "a-train-0",
        "  annotations: {scheduling.k8s.io/group-name: a-train}\n",
        "  schedulerName: volcano\n",
        "{cpu: \"2\", nvidia.com/gpu: \"1\"}",
    );
    let running = pod(
        "b-serve",
        "",
        "  nodeName: n1\n",
        "{cpu: \"2\", nvidia.com/gpu: \"1\"}",
    );
    for text in [
        format!("{ONE_GPU_NODE}---\n{gang}{pending}{running}"),
        format!("{ONE_GPU_NODE}{running}---\n{gang}{pending}"),
    ] {
        let r = run(&text);
        assert_eq!(nodes(wl(&r, "team", "b-serve")), ["n1"]);
        let train = wl(&r, "team", "a-train");
        assert!(nodes(train).is_empty(), "placed on {:?}", nodes(train));
        assert_eq!(train.state, "Pending");
    }
    // kube-scheduler's bare pods: 2 + 2 cpu on a 2-cpu node.
    let pending = pod("a-web", "", "", "{cpu: \"2\"}");
    let running = pod("b-db", "", "  nodeName: n1\n", "{cpu: \"2\"}");
    let r = run(&format!("{ONE_GPU_NODE}{pending}{running}"));
    assert_eq!(nodes(wl(&r, "team", "b-db")), ["n1"]);
    assert!(nodes(wl(&r, "team", "a-web")).is_empty());
}

/// The documents of a scenario directory, each a `---` document of one of its files.
fn documents(rel: &str) -> Vec<String> {
    let dir = scenarios_dir().join(rel);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("a scenario directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable");
        let mut doc = String::new();
        for line in text.lines() {
            if line == "---" || line.starts_with("--- ") {
                out.push(std::mem::take(&mut doc));
            } else {
                doc.push_str(line);
                doc.push('\n');
            }
        }
        out.push(doc);
    }
    out.retain(|d| {
        d.lines()
            .any(|l| l.starts_with("kind:") || l.starts_with('{'))
    });
    // A `kind: List` (kubectl's `-o yaml`) is its items, each a document to shuffle.
    out.into_iter()
        .flat_map(|d| list_items(&d).unwrap_or_else(|| vec![d]))
        .collect()
}

/// The items of a `kind: List` document in kubectl's block style (`items:` then `- ` entries
/// indented by two), each as a document of its own; None for any other document.
fn list_items(doc: &str) -> Option<Vec<String>> {
    if !doc.lines().any(|l| l == "kind: List") {
        return None;
    }
    let mut items = Vec::new();
    let mut item: Option<String> = None;
    let mut in_items = false;
    for line in doc.lines() {
        if line == "items:" {
            in_items = true;
        } else if !in_items {
        } else if let Some(first) = line.strip_prefix("- ") {
            items.extend(item.replace(format!("{first}\n")));
        } else if let Some(rest) = line.strip_prefix("  ") {
            let it = item.as_mut()?;
            it.push_str(rest);
            it.push('\n');
        } else {
            in_items = false;
        }
    }
    items.extend(item);
    Some(items)
}

/// The `-o json` document of `docs` joined in the given order, as one file of `rel`.
fn json_of(rel: &str, docs: &[String]) -> String {
    let name = scenarios_dir().join(rel).join("shuffled.yaml");
    let files = [SourceFile {
        name: name.to_string_lossy().into_owned(),
        text: docs.join("---\n"),
    }];
    let loaded = load(&files, LoadOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"));
    to_json(&result(
        &loaded.world,
        &Simulation::new(&loaded.world).run(),
    ))
}

/// The golden scenarios and the dump-shaped ones.
const SCENARIOS: &[&str] = &[
    "golden/fifo-strategies",
    "golden/first-fit-nodes",
    "golden/kai-gpu-sharing",
    "golden/kubectl-pods",
    "golden/queue-resolution",
    "golden/tas-preemption",
    "golden/tas-preemption-no-help",
    "golden/volcano-vgpu",
    "cases/T-13d-tas-fragmented-capacity-preempts-low-in-a-dump",
    "dump/gpu-cluster",
];

/// The documents of the dump-shaped scenarios are their List's items.
#[test]
fn a_list_is_shuffled_item_by_item() {
    let docs = documents("dump/gpu-cluster");
    assert_eq!(
        docs.len(),
        2 + 69,
        "the Simulation, the Configuration, the items"
    );
    assert!(docs.iter().all(|d| !d.contains("kind: List")));
    let mut reversed = docs.clone();
    reversed.reverse();
    assert!(json_of("dump/gpu-cluster", &docs) == json_of("dump/gpu-cluster", &reversed));
}

proptest! {
    #![proptest_config(ProptestConfig {
        // Each case runs one scenario twice; PROPTEST_CASES runs more.
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(24),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The same objects in any order give byte-identical output.
    #[test]
    fn any_object_order_gives_the_same_run(
        (which, order) in (0..SCENARIOS.len()).prop_flat_map(|i| {
            let n = documents(SCENARIOS[i]).len();
            (Just(i), Just((0..n).collect::<Vec<usize>>()).prop_shuffle())
        })
    ) {
        let rel = SCENARIOS[which];
        let docs = documents(rel);
        let shuffled: Vec<String> = order.iter().map(|&i| docs[i].clone()).collect();
        prop_assert!(json_of(rel, &docs) == json_of(rel, &shuffled), "{rel}: order {order:?}");
    }
}

/// A Kueue cluster of one ClusterQueue `cq` (8 cpu of flavor `default`), LocalQueue `lq` in
/// `team`, and nodes `n1`, `n2` of 4 cpu, as a dump begins.
const KUEUE_CLUSTER: &str = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: t}
spec: {startTime: \"2026-01-01T00:00:00Z\", until: 2h}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: \"8\"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: cq}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: \"4\", pods: \"110\"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: \"4\", pods: \"110\"}}
";

/// A running pod of Job `train` (its controller), named `name`, on `node`.
fn job_pod(name: &str, node: &str) -> String {
    format!(
        "---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: team
  labels: {{kueue.x-k8s.io/podset: main, batch.kubernetes.io/job-name: train}}
  ownerReferences:
  - {{apiVersion: batch/v1, kind: Job, name: train, uid: job-uid, controller: true}}
spec:
  nodeName: {node}
  containers:
  - name: trainer
    resources: {{requests: {{cpu: \"3\"}}}}
status: {{phase: Running}}
"
    )
}

/// A dump holds a Job, the Workload Kueue made for it (owned by the Job) and the Job's
/// running pods (owned by the Job): one workload, admitted from the start, whose pods run
/// on the nodes the dump says under their own names; not a Job queued again beside its
/// Workload, nor its pods as bare Pods of their own.
#[test]
fn a_dumped_job_its_workload_and_its_pods_are_one_running_workload() {
    let job = "---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team
  uid: job-uid
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {kueuesim.io/duration: 1h}
  creationTimestamp: \"2026-01-01T00:00:00Z\"
spec:
  parallelism: 2
  completions: 2
  suspend: false
  template:
    spec:
      containers:
      - name: trainer
        resources: {requests: {cpu: \"3\"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: job-train-3c1a2
  namespace: team
  uid: wl-uid
  creationTimestamp: \"2026-01-01T00:00:00Z\"
  labels: {kueue.x-k8s.io/job-uid: job-uid}
  annotations: {kueuesim.io/duration: 1h}
  ownerReferences:
  - {apiVersion: batch/v1, kind: Job, name: train, uid: job-uid, controller: true}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 2
    template:
      spec:
        containers:
        - name: trainer
          resources: {requests: {cpu: \"3\"}}
status:
  admission:
    clusterQueue: cq
    podSetAssignments:
    - {name: main, count: 2, flavors: {cpu: default}}
  conditions:
  - {type: QuotaReserved, status: \"True\", reason: QuotaReserved, message: ok, lastTransitionTime: \"2026-01-01T00:00:00Z\"}
  - {type: Admitted, status: \"True\", reason: Admitted, message: ok, lastTransitionTime: \"2026-01-01T00:00:00Z\"}
";
    let text = format!(
        "{KUEUE_CLUSTER}{job}{}{}",
        job_pod("train-b7x2k", "n2"),
        job_pod("train-q9z4m", "n1")
    );
    let loaded = load_text("dump.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let names: Vec<&str> = loaded
        .world
        .workloads
        .iter()
        .map(|w| w.name.as_str())
        .collect();
    assert_eq!(names, ["job-train-3c1a2"]);
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let w = wl(&r, "team", "job-train-3c1a2");
    assert_eq!(w.admitted_at, Some(0.0));
    assert_eq!(w.running_at, Some(0.0));
    let placed: Vec<(&str, &str)> = w.pod_sets[0]
        .pods
        .iter()
        .zip(&w.pod_sets[0].nodes)
        .map(|(p, n)| (p.name.as_str(), n.as_str()))
        .collect();
    assert_eq!(placed, [("train-b7x2k", "n2"), ("train-q9z4m", "n1")]);
}

/// A Workload waiting out a PodsReady back-off in the dump (`status.requeueState` with
/// `requeueAt` 10 minutes after the start, `Requeued=False`) stays inadmissible until then,
/// though its ClusterQueue has room, and its requeue count goes on from the dump's.
#[test]
fn a_requeued_workload_waits_out_its_back_off() {
    let workload = "---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: backoff
  namespace: team
  creationTimestamp: \"2026-01-01T00:00:00Z\"
  annotations: {kueuesim.io/duration: 10m}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          resources: {requests: {cpu: \"1\"}}
status:
  requeueState: {count: 2, requeueAt: \"2026-01-01T00:10:00Z\"}
  conditions:
  - {type: Requeued, status: \"False\", reason: PodsReadyTimeout, message: Exceeded the PodsReady timeout team/backoff, lastTransitionTime: \"2025-12-31T23:58:00Z\"}
";
    let loaded = load_text("dump.yaml", &format!("{KUEUE_CLUSTER}{workload}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let w = wl(&r, "team", "backoff");
    assert_eq!(w.admitted_at, Some(600.0));
    assert_eq!(w.requeue_count, 2);
    let requeued = crate::util::condition(w, "Requeued");
    assert_eq!(
        (requeued.status, requeued.reason),
        ("True", "BackoffFinished")
    );
}

/// The pods of `w` as (pod, node) pairs.
fn placed(w: &WorkloadOut) -> Vec<(&str, &str)> {
    w.pod_sets
        .iter()
        .flat_map(|ps| {
            ps.pods
                .iter()
                .zip(&ps.nodes)
                .map(|(p, n)| (p.name.as_str(), n.as_str()))
        })
        .collect()
}

/// scenarios/dump/gpu-cluster, `kubectl get … -A -o yaml` of a GPU cluster (see its header):
/// it loads without a warning, and what holds capacity in it holds it from the start.
#[test]
fn a_cluster_dump_runs_from_the_state_it_holds() {
    let loaded = crate::util::load_dir("dump/gpu-cluster");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    // The running job keeps its pods on their nodes, is never evicted (PodsReady in the dump,
    // though reserved longer ago than the timeout) and ends when its 2h are up.
    let pretrain = wl(&r, "team-a", "job-pretrain-17-4c9d2");
    assert_eq!(
        placed(pretrain),
        [
            ("pretrain-17-b9q4m", "gpu-5"),
            ("pretrain-17-x7k2p", "gpu-1")
        ]
    );
    assert!(pretrain.evictions.is_empty(), "{:?}", pretrain.evictions);
    assert_eq!(
        (pretrain.running_at, pretrain.finished_at),
        (Some(0.0), Some(7200.0))
    );
    // The pending sweep fits team-a's quota and gpu-2's free GPUs at the first cycle.
    let sweep = wl(&r, "team-a", "job-sweep-4-c03d1");
    assert_eq!(sweep.admitted_at, Some(0.0));
    assert_eq!(sweep.pod_sets[0].nodes, ["gpu-2"]);
    // The requeued one waits out its back-off (requeueAt 10:04:05) and goes on counting.
    let finetune = wl(&r, "team-b", "job-finetune-4-5e3b9");
    assert!(
        finetune.admitted_at.is_some_and(|t| t >= 245.0),
        "{:?}",
        finetune.admitted_at
    );
    assert!(finetune.requeue_count >= 1);
    // Finished and failed jobs are history; the system pods keep their nodes and names.
    for gone in ["eval-8", "data-check"] {
        assert!(
            !r.workloads.iter().any(|w| w.name.contains(gone)),
            "{gone} was simulated"
        );
    }
    let coredns: Vec<(&str, &str)> = r
        .workloads
        .iter()
        .filter(|w| w.namespace == "kube-system" && w.name.starts_with("coredns-"))
        .flat_map(placed)
        .collect();
    assert_eq!(
        coredns,
        [
            ("coredns-5d78c9869d-h5n3c", "cpu-1"),
            ("coredns-5d78c9869d-r2t8w", "cpu-1")
        ]
    );
    // Nothing new goes to the cordoned gpu-3 or the NotReady gpu-4: only what ran there.
    for w in &r.workloads {
        for ps in &w.pod_sets {
            for (pod, node) in ps.pods.iter().zip(&ps.nodes) {
                if node == "gpu-4" {
                    assert!(
                        pod.name.starts_with("kube-proxy-")
                            || pod.name.starts_with("nvidia-device-plugin-"),
                        "{} on gpu-4",
                        pod.name
                    );
                }
                if node == "gpu-3" {
                    assert!(
                        pod.name.starts_with("kube-proxy-")
                            || pod.name.starts_with("nvidia-device-plugin-")
                            || pod.name.starts_with("eval-9-"),
                        "{} on gpu-3",
                        pod.name
                    );
                }
            }
        }
    }
    // The cluster's own pods bypass nothing; the research namespace's Volcano pods do.
    let bypass: Vec<&str> = r
        .summary
        .checks
        .iter()
        .filter(|c| c.kind == "WorkloadsBypassKueue")
        .map(|c| c.object.as_str())
        .collect();
    assert_eq!(bypass, ["Namespace/research"]);
}

/// A node whose `Ready` condition is `False` (no taint written) gets the node lifecycle
/// controller's `node.kubernetes.io/not-ready:NoSchedule` taint: a pending pod goes to the
/// ready node, though the NotReady one comes first by name.
#[test]
fn a_not_ready_node_takes_no_new_pod() {
    let text = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: t}
spec: {until: 1h}
---
apiVersion: v1
kind: Node
metadata: {name: a-down}
status:
  allocatable: {cpu: \"4\", pods: \"110\"}
  conditions:
  - {type: Ready, status: \"False\", reason: KubeletNotReady}
---
apiVersion: v1
kind: Node
metadata: {name: b-up}
status:
  allocatable: {cpu: \"4\", pods: \"110\"}
  conditions:
  - {type: Ready, status: \"True\", reason: KubeletReady}
";
    let text = format!("{text}{}", pod("web", "", "", "{cpu: \"1\"}"));
    let r = run(&text);
    assert_eq!(nodes(wl(&r, "team", "web")), ["b-up"]);
}

/// An admitted Workload of a dump reserved an hour before it, with `PodsReady=True`, is not
/// evicted by a 10-minute PodsReady timeout at the start (Kueue arms none while PodsReady is
/// True); its pods, not in the dump, are placed at once.
#[test]
fn a_ready_workload_reserved_long_ago_is_not_timed_out() {
    let config = "---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {timeout: 10m}
";
    let workload = "---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: long-running
  namespace: team
  creationTimestamp: \"2025-12-31T23:00:00Z\"
  annotations: {kueuesim.io/remaining: 30m}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          resources: {requests: {cpu: \"1\"}}
status:
  admission:
    clusterQueue: cq
    podSetAssignments:
    - {name: main, count: 1, flavors: {cpu: default}}
  conditions:
  - {type: QuotaReserved, status: \"True\", reason: QuotaReserved, message: ok, lastTransitionTime: \"2025-12-31T23:00:00Z\"}
  - {type: PodsReady, status: \"True\", reason: Started, message: ok, lastTransitionTime: \"2025-12-31T23:01:00Z\"}
";
    let loaded = load_text("dump.yaml", &format!("{KUEUE_CLUSTER}{config}{workload}"))
        .unwrap_or_else(|e| panic!("{e}"));
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let w = wl(&r, "team", "long-running");
    assert!(w.evictions.is_empty(), "{:?}", w.evictions);
    assert_eq!((w.running_at, w.finished_at), (Some(0.0), Some(1800.0)));
}

/// A Deployment Kueue manages, in a dump: Kueue's pod integration made one Workload per
/// pod (owned by the pod). Each running pod is its Workload's, found through its ReplicaSet,
/// and the Deployment makes no replicas of its own beside them.
#[test]
fn a_managed_deployments_pods_are_their_workloads() {
    let mut text = format!(
        "{KUEUE_CLUSTER}---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: team
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: nginx
        resources: {{requests: {{cpu: \"1\"}}}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-6b7f9
  namespace: team
  ownerReferences:
  - {{apiVersion: apps/v1, kind: Deployment, name: web, uid: d, controller: true}}
spec:
  replicas: 2
"
    );
    for (pod, node) in [("web-6b7f9-aaaaa", "n1"), ("web-6b7f9-bbbbb", "n2")] {
        text += &format!(
            "---
apiVersion: v1
kind: Pod
metadata:
  name: {pod}
  namespace: team
  labels: {{pod-template-hash: 6b7f9, kueue.x-k8s.io/queue-name: lq}}
  ownerReferences:
  - {{apiVersion: apps/v1, kind: ReplicaSet, name: web-6b7f9, uid: rs, controller: true}}
spec:
  nodeName: {node}
  containers:
  - name: nginx
    resources: {{requests: {{cpu: \"1\"}}}}
status: {{phase: Running}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: pod-{pod}-1f2e3
  namespace: team
  ownerReferences:
  - {{apiVersion: v1, kind: Pod, name: {pod}, uid: {pod}, controller: true}}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: nginx
          resources: {{requests: {{cpu: \"1\"}}}}
status:
  admission:
    clusterQueue: cq
    podSetAssignments:
    - {{name: main, count: 1, flavors: {{cpu: default}}}}
"
        );
    }
    let loaded = load_text("dump.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let all: Vec<(&str, Vec<(&str, &str)>)> = r
        .workloads
        .iter()
        .map(|w| (w.name.as_str(), placed(w)))
        .collect();
    assert_eq!(
        all,
        [
            ("pod-web-6b7f9-aaaaa-1f2e3", vec![("web-6b7f9-aaaaa", "n1")]),
            ("pod-web-6b7f9-bbbbb-1f2e3", vec![("web-6b7f9-bbbbb", "n2")])
        ]
    );
}
