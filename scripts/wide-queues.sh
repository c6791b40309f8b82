#!/usr/bin/env bash
# Writes the scenario of the memory measurement in docs/performance.md ("Many queues over a
# long horizon"): N ClusterQueues (default 1,000), each with one LocalQueue in its own
# namespace, each with one GPU of quota, over N/8 nodes of 8 GPUs, and one one-GPU Job that runs for 10 years in the first
# queue. Without `until` the run ends when that Job finishes, so every per-queue series spans
# ten years while only one queue ever changes.
#
#   scripts/wide-queues.sh 1000 > /tmp/wide.yaml
#   /usr/bin/time -v target/release/kueuesim run -q /tmp/wide.yaml
set -euo pipefail
n=${1:-1000}
nodes=$(((n + 7) / 8))
cat <<HEAD
apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata:
  name: wide-queues
spec:
  seed: 1
  startTime: "2026-01-01T00:00:00Z"
---
apiVersion: kueuesim.io/v1alpha1
kind: NodePool
metadata:
  name: h100
spec:
  namePrefix: gpu
  levels:
  - nodeLabel: topology.kueuesim.io/rack
    count: 1
  nodesPerDomain: $nodes
  template:
    allocatable:
      cpu: "112"
      memory: 2000Gi
      nvidia.com/gpu: "8"
      pods: "110"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: h100
HEAD
for ((i = 0; i < n; i++)); do
  q=$(printf 'team-%04d' "$i")
  cat <<CQ
---
apiVersion: v1
kind: Namespace
metadata:
  name: $q
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: $q
spec:
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: $q
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - name: cpu
        nominalQuota: 14
      - name: memory
        nominalQuota: 250Gi
      - name: nvidia.com/gpu
        nominalQuota: 1
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: default
  namespace: $q
spec:
  clusterQueue: $q
CQ
done
cat <<'JOB'
---
apiVersion: batch/v1
kind: Job
metadata:
  name: decade
  namespace: team-0000
  labels:
    kueue.x-k8s.io/queue-name: default
  annotations:
    kueuesim.io/duration: 87600h
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: registry.example.com/trainer:1.0
        resources:
          requests:
            cpu: "1"
            memory: 10Gi
          limits:
            nvidia.com/gpu: "1"
JOB
