//! Every job kind Kueue admits becomes the pod sets Kueue derives (Kueue's `pkg/controller/jobs/*`),
//! on scenarios/examples/job-kinds/.

use kueuesim_report::output::WorkloadOut;

use crate::util::{load_error, run_dir};

/// (pod set, count, requests as "resource=quantity" sorted).
fn shape(w: &WorkloadOut) -> Vec<(String, u32, String)> {
    w.pod_sets
        .iter()
        .map(|p| {
            let r: Vec<String> = p.requests.iter().map(|(k, v)| format!("{k}={v}")).collect();
            (p.name.clone(), p.count, r.join(" "))
        })
        .collect()
}

fn find<'a>(ws: &'a [WorkloadOut], prefix: &str) -> &'a WorkloadOut {
    ws.iter()
        .find(|w| w.name.starts_with(prefix))
        .unwrap_or_else(|| panic!("no workload {prefix}*"))
}

fn ps(name: &str, count: u32, req: &str) -> (String, u32, String) {
    (name.to_string(), count, req.to_string())
}

#[test]
fn each_kind_derives_kueues_pod_sets() {
    let r = run_dir("examples/job-kinds");
    let ws = &r.workloads;
    // JobSet: replicatedJob names lower-cased; count = replicas × min(parallelism, completions).
    let js = find(ws, "jobset-llm-pretrain-");
    assert_eq!(
        shape(js),
        [
            ps("driver", 1, "cpu=2 memory=8Gi"),
            ps("workers", 4, "cpu=16 memory=200Gi nvidia.com/gpu=4"),
        ]
    );
    // PyTorchJob: Master before Worker whatever the YAML order; runPolicy priority class.
    let pt = find(ws, "pytorchjob-resnet-ddp-");
    assert_eq!(
        shape(pt),
        [
            ps("master", 1, "cpu=8 memory=64Gi nvidia.com/gpu=2"),
            ps("worker", 3, "cpu=8 memory=64Gi nvidia.com/gpu=2"),
        ]
    );
    assert_eq!(pt.priority, 1000);
    let mpi = find(ws, "mpijob-hpl-");
    assert_eq!(
        shape(mpi),
        [
            ps("launcher", 1, "cpu=1 memory=2Gi"),
            ps("worker", 2, "cpu=32 memory=256Gi nvidia.com/gpu=8"),
        ]
    );
    // RayJob: head, workers = replicas × numOfHosts (lower-cased group name), default submitter.
    let ray = find(ws, "rayjob-tune-sweep-");
    assert_eq!(
        shape(ray),
        [
            ps("head", 1, "cpu=4 memory=16Gi"),
            ps("gpu-workers", 4, "cpu=4 memory=32Gi nvidia.com/gpu=1"),
            ps("submitter", 1, "cpu=500m memory=200Mi"),
        ]
    );
    // StatefulSet: one pod group; Deployment: a Workload per pod; LWS: one per group.
    assert_eq!(
        shape(find(ws, "statefulset-vector-db-")),
        [ps("main", 3, "cpu=4 memory=32Gi")]
    );
    assert_eq!(
        ws.iter()
            .filter(|w| w.name.starts_with("pod-embedder-"))
            .count(),
        2
    );
    let lws: Vec<&WorkloadOut> = ws
        .iter()
        .filter(|w| w.name.starts_with("leaderworkerset-llm-serve-"))
        .collect();
    assert_eq!(lws.len(), 2);
    assert_eq!(
        shape(lws[0]),
        [
            ps("leader", 1, "cpu=8 memory=64Gi nvidia.com/gpu=2"),
            ps("worker", 2, "cpu=8 memory=64Gi nvidia.com/gpu=2"),
        ]
    );
    assert_eq!(
        shape(find(ws, "pod-notebook-")),
        [ps("main", 1, "cpu=2 memory=8Gi nvidia.com/gpu=1")]
    );
    // TrainJob: the runtime's JobSet with the trainer step at numNodes × resourcesPerNode; the
    // runtime's podGroupPolicy makes it a Volcano gang of every pod with its network topology.
    let tj = find(ws, "trainjob-llama-ft-");
    assert_eq!(
        shape(tj),
        [ps("node", 2, "cpu=16 memory=128Gi nvidia.com/gpu=4")]
    );
    assert_eq!(tj.scheduler_name, "volcano");
    assert_eq!(tj.pod_sets[0].nodes.len(), 2, "placed as one gang");
    // A pod group: one Workload named after the group, a pod set per role.
    let group = ws.iter().find(|w| w.name == "ranker").expect("pod group");
    let mut counts: Vec<u32> = group.pod_sets.iter().map(|p| p.count).collect();
    counts.sort();
    assert_eq!(counts, [1, 2]);
    // A Pod bound in the dump runs on its node from the start, outside Kueue.
    let exporter = ws
        .iter()
        .find(|w| w.name == "node-exporter")
        .expect("bound pod");
    assert_eq!(
        (exporter.kind.as_str(), exporter.running_at),
        ("Pod", Some(0.0))
    );
    assert_eq!(exporter.pod_sets[0].nodes, ["a100-0"]);
    // Every other one is Kueue's: admitted through the team queue.
    assert!(
        ws.iter()
            .filter(|w| w.namespace == "research")
            .all(|w| w.cluster_queue.as_deref() == Some("research"))
    );
}

#[test]
fn malformed_job_kinds_are_errors_with_positions() {
    let e = load_error(
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: j}\nspec: {}\n",
    );
    assert!(e.starts_with("t.yaml:2:"), "{e}");
    assert!(e.contains("has no spec.replicatedJobs"), "{e}");
    let e = load_error(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n  pytorchReplicaSpecs:\n    Chief: {replicas: 1}\n",
    );
    assert!(
        e.contains("has replica type \"Chief\": expected one of Master, Worker"),
        "{e}"
    );
    let e = load_error(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n  pytorchReplicaSpecs:\n    Worker: {replicas: 0}\n",
    );
    assert!(e.starts_with("t.yaml:6:"), "{e}");
    assert!(
        e.contains("replicas 0: expected an integer from 1 to 100000"),
        "{e}"
    );
    let e = load_error(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\nspec:\n  runtimeRef: {name: torch}\n",
    );
    assert!(e.starts_with("t.yaml:5:"), "{e}");
    assert!(
        e.contains("names ClusterTrainingRuntime \"torch\", which is not in the input"),
        "{e}"
    );
    let e = load_error("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: r}\nspec: {}\n");
    assert!(e.contains("has no spec.rayClusterSpec"), "{e}");
}

#[test]
fn volcano_job_partitions_stay_in_leaves_of_one_spine() {
    let r = run_dir("examples/volcano-job");
    let j = r
        .workloads
        .iter()
        .find(|w| w.name == "allreduce")
        .expect("the Volcano Job");
    assert_eq!(j.kind, "VolcanoJob");
    assert_eq!(j.local_queue, None, "Kueue does not manage Volcano Jobs");
    let mut p0 = j.pod_sets[0].nodes.clone();
    let mut p1 = j.pod_sets[1].nodes.clone();
    p0.sort();
    p1.sort();
    // gpu-4/5 form leaf 2, gpu-6/7 leaf 3, both under spine 1.
    assert_eq!(
        (p0, p1),
        (
            vec!["gpu-4".to_string(), "gpu-5".into()],
            vec!["gpu-6".to_string(), "gpu-7".into()]
        )
    );
    assert_eq!(j.topology_domain.as_deref(), Some("gpu-spine-1"));
}
