#!/usr/bin/env bash
# Writes the scenarios of the scale measurements in docs/performance.md ("Cost against the
# number of queues" and "The scale table"): W one-GPU workloads (default 100,000) spread
# evenly over L LocalQueues (default 100), each in its own namespace, which belong to C
# ClusterQueues (default 1; LocalQueue i to ClusterQueue i mod C) in one cohort, over N nodes
# of 8 GPUs (default 100). Each ClusterQueue's nominal quota is its share of the GPUs
# (rounded up), so together they hold the cluster and lend what they do not use.
# Workloads arrive as a Poisson process offering LOAD % of the GPUs (default 80: a rate of
# 0.8 x GPUs per hour for durations of mean 1 h, uniform from 30 to 90 minutes; above 100
# they queue), go to their LocalQueue by a uniform draw, and are placed by kube-scheduler.
#
#   scripts/scale-queues.sh WORKLOADS LOCALQUEUES CLUSTERQUEUES NODES LOAD > /tmp/scale.yaml
#   scripts/scale-queues.sh 100000 10000 1 100 > /tmp/lq10000.yaml
#   /usr/bin/time -v target/release/kueuesim run -q /tmp/lq10000.yaml
set -euo pipefail
workloads=${1:-100000}
localqueues=${2:-100}
clusterqueues=${3:-1}
nodes=${4:-100}
load=${5:-80}
if ((localqueues < clusterqueues)); then
  echo "scale-queues.sh: $localqueues LocalQueues for $clusterqueues ClusterQueues: expected at least one LocalQueue per ClusterQueue" >&2
  exit 2
fi
gpus=$((nodes * 8))
quota=$(((gpus + clusterqueues - 1) / clusterqueues))
rate=$((gpus * load / 100))
if ((rate < 1)); then rate=1; fi

cat <<HEAD
# scripts/scale-queues.sh $workloads $localqueues $clusterqueues $nodes $load
apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata:
  name: scale-queues
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
# printf, not one cat per object: 10,000 queues are written in a second.
for ((c = 0; c < clusterqueues; c++)); do
  printf -- '---\n{apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {name: cq-%05d}, spec: {cohortName: org, namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: %d}]}]}]}}\n' "$c" "$quota"
done
for ((l = 0; l < localqueues; l++)); do
  printf -- '---\n{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: lq, namespace: ns-%05d}, spec: {clusterQueue: cq-%05d}}\n' "$l" $((l % clusterqueues))
done
cat <<GEN
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata:
  name: jobs
spec:
  count: $workloads
  arrival: {rate: $rate/h}
  requests:
    nvidia.com/gpu: {fixed: 1}
  duration: {uniform: {min: 30m, max: 90m}}
  queues:
GEN
for ((l = 0; l < localqueues; l++)); do
  printf '  - {name: lq, namespace: ns-%05d}\n' "$l"
done
