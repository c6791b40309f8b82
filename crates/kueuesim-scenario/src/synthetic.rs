//! Synthetic inputs in the shape real tools print them, for tests and benchmarks: a
//! `kubectl get nodes,resourceflavors,clusterqueues,localqueues,workloadpriorityclasses,
//! workloads -A -o yaml` dump of a live cluster, with the server-side noise (uid,
//! resourceVersion, managedFields, status) kubectl includes.

use std::fmt::Write;

/// A dump of `nodes` 8-GPU nodes, `queues` ClusterQueues (one LocalQueue each) and
/// `workloads` Workloads, of which every other one is admitted (`status.admission`, running
/// for `kueuesim.io/remaining` 5m) and the rest pending (`kueuesim.io/duration` 5m). Quotas
/// hold every admitted workload. Deterministic.
pub fn kubectl_dump(nodes: usize, queues: usize, workloads: usize) -> String {
    let mut s =
        String::from("apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n");
    let managed = |manager: &str| {
        format!(
            "    managedFields:\n    - apiVersion: v1\n      fieldsType: FieldsV1\n      fieldsV1:\n        f:metadata:\n          f:labels:\n            .: {{}}\n      manager: {manager}\n      operation: Update\n      time: \"2026-03-01T23:00:00Z\"\n"
        )
    };
    for n in 0..nodes {
        let _ = write!(
            s,
            "- apiVersion: v1\n  kind: Node\n  metadata:\n    creationTimestamp: \"2026-03-01T00:00:00Z\"\n    labels:\n      kubernetes.io/hostname: node-{n:05}\n      nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n      topology.kueuesim.io/rack: rack-{}\n{}    name: node-{n:05}\n    resourceVersion: \"{}\"\n    uid: 00000000-0000-0000-0000-{n:012}\n  spec:\n    podCIDR: 10.0.{}.0/24\n  status:\n    allocatable:\n      cpu: \"112\"\n      ephemeral-storage: \"1000000000000\"\n      memory: 2000Gi\n      nvidia.com/gpu: \"8\"\n      pods: \"110\"\n    capacity:\n      cpu: \"112\"\n      memory: 2048Gi\n      nvidia.com/gpu: \"8\"\n      pods: \"110\"\n    conditions:\n    - lastHeartbeatTime: \"2026-03-01T23:59:00Z\"\n      lastTransitionTime: \"2026-03-01T00:00:00Z\"\n      message: kubelet is posting ready status\n      reason: KubeletReady\n      status: \"True\"\n      type: Ready\n    nodeInfo:\n      kubeletVersion: v1.33.1\n      containerRuntimeVersion: containerd://2.0.0\n",
            n / 16,
            managed("kubelet"),
            1000 + n,
            n % 250
        );
    }
    s.push_str("- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: ResourceFlavor\n  metadata:\n    name: h100\n    uid: flavor-h100\n  spec:\n    nodeLabels:\n      nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n");
    s.push_str("- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: WorkloadPriorityClass\n  metadata:\n    name: normal\n  value: 500\n");
    // Each queue's quota covers its share of the admitted workloads (8 GPUs each).
    let per_queue = workloads.div_ceil(queues.max(1));
    let gpus = (per_queue * 8).max(8);
    for q in 0..queues {
        let _ = write!(
            s,
            "- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: ClusterQueue\n  metadata:\n    generation: 3\n    name: team-{q:03}\n{}    uid: cq-{q}\n  spec:\n    cohortName: all\n    namespaceSelector: {{}}\n    queueingStrategy: BestEffortFIFO\n    resourceGroups:\n    - coveredResources: [cpu, memory, nvidia.com/gpu]\n      flavors:\n      - name: h100\n        resources:\n        - name: cpu\n          nominalQuota: \"{}\"\n        - name: memory\n          nominalQuota: {}Gi\n        - name: nvidia.com/gpu\n          nominalQuota: \"{gpus}\"\n  status:\n    admittedWorkloads: 0\n    conditions:\n    - lastTransitionTime: \"2026-03-01T00:00:00Z\"\n      message: Can admit new workloads\n      observedGeneration: 3\n      reason: Ready\n      status: \"True\"\n      type: Active\n    pendingWorkloads: 0\n",
            managed("kueue"),
            gpus * 14,
            gpus * 250
        );
        let _ = write!(
            s,
            "- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: LocalQueue\n  metadata:\n    name: q\n    namespace: team-{q:03}\n  spec:\n    clusterQueue: team-{q:03}\n  status:\n    admittedWorkloads: 0\n    pendingWorkloads: 0\n"
        );
    }
    for w in 0..workloads {
        let q = w % queues.max(1);
        let admitted = w % 2 == 0;
        let _ = write!(
            s,
            "- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: Workload\n  metadata:\n    annotations:\n      {}: 5m\n    creationTimestamp: \"2026-03-01T{:02}:{:02}:00Z\"\n    labels:\n      kueue.x-k8s.io/job-uid: job-{w}\n{}    name: job-train-{w:05}-abcde\n    namespace: team-{q:03}\n    uid: wl-{w}\n  spec:\n    active: true\n    podSets:\n    - count: 1\n      name: main\n      template:\n        spec:\n          containers:\n          - image: registry.example.com/trainer:1.0\n            name: main\n            resources:\n              requests:\n                cpu: \"14\"\n                memory: 250Gi\n              limits:\n                nvidia.com/gpu: \"8\"\n    priority: 500\n    priorityClassRef:\n      group: kueue.x-k8s.io\n      kind: WorkloadPriorityClass\n      name: normal\n    queueName: q\n",
            if admitted {
                "kueuesim.io/remaining"
            } else {
                "kueuesim.io/duration"
            },
            12 + (w / 60) % 12,
            w % 60,
            managed("kueue")
        );
        if admitted {
            s.push_str("  status:\n    admission:\n      clusterQueue: team-");
            let _ = write!(
                s,
                "{q:03}\n      podSetAssignments:\n      - count: 1\n        flavors:\n          cpu: h100\n          memory: h100\n          nvidia.com/gpu: h100\n        name: main\n        resourceUsage:\n          cpu: \"14\"\n          memory: 250Gi\n          nvidia.com/gpu: \"8\"\n    conditions:\n    - lastTransitionTime: \"2026-03-01T23:00:00Z\"\n      message: Quota reserved in ClusterQueue team-{q:03}\n      observedGeneration: 1\n      reason: QuotaReserved\n      status: \"True\"\n      type: QuotaReserved\n    - lastTransitionTime: \"2026-03-01T23:00:00Z\"\n      message: The workload is admitted\n      observedGeneration: 1\n      reason: Admitted\n      status: \"True\"\n      type: Admitted\n"
            );
        } else {
            let _ = write!(
                s,
                "  status:\n    conditions:\n    - lastTransitionTime: \"2026-03-01T23:00:00Z\"\n      message: \"couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed\"\n      observedGeneration: 1\n      reason: WaitingForQuota\n      status: \"False\"\n      type: QuotaReserved\n"
            );
        }
    }
    s
}
