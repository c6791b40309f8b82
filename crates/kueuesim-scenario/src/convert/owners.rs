//! A cluster dump's objects by who owns them: a job (Job, JobSet, …) whose Kueue Workload is
//! in the input is that Workload (which carries the admission), and the running Pods a job
//! or Workload owns are its pods on their nodes, not bare Pods of their own. Finished jobs
//! and Workloads are history: a dump keeps them until they are deleted, and they hold
//! nothing.
//!
//! Ownership is read from `metadata.ownerReferences` (the controller, else the only owner),
//! as Kueue's jobframework and the garbage collector read it: a Workload's owner is its job
//! (`ownerReferences` kind and name), a Pod's is the job that created it; JobSet pods are
//! owned by its child Jobs and carry the label `jobset.sigs.k8s.io/jobset-name`; a
//! Deployment's pods are owned by its ReplicaSet, which the Deployment owns (the ReplicaSet
//! of the input, else the name `<deployment>-<pod-template-hash>` the Deployment controller
//! gives it); a DaemonSet's pods are its own and run where they are.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kueuesim_model::{NodeId, PodInfo, QueueRef, SimTime, Workload};

use super::core::{Builder, Parsed, err_at, name_of, namespace_of};
use crate::error::ScenarioError;
use crate::wire;

/// (namespace, kind, name) of an owner.
pub(super) type OwnerKey = (String, String, String);

/// A running Pod of the input that a job or Workload of the input owns.
#[derive(Debug)]
pub(super) struct OwnedPod {
    pub(super) name: String,
    pub(super) node: NodeId,
    /// Kueue's `kueue.x-k8s.io/podset` label: the pod set it belongs to.
    pub(super) pod_set: Option<String>,
    pub(super) info: Arc<PodInfo>,
    pub(super) gpu_group: Option<String>,
}

impl Builder<'_> {
    /// The owners of the input's Workloads, and the job objects they stand for left out of
    /// the build (the Workload is the state Kueue keeps of its job); finished jobs and
    /// Workloads left out too (`Finished`, `Complete`, `Failed`, … conditions). Then the
    /// owners a running Pod may have: those, and every job object still read.
    pub(super) fn resolve_owners(&mut self) {
        let mut owned: BTreeSet<OwnerKey> = BTreeSet::new();
        for p in &self.workloads {
            let meta = &p.obj.metadata;
            if let Some((kind, name)) = meta.controller() {
                owned.insert((namespace_of(meta), kind.to_string(), name.to_string()));
            }
        }
        // Kueue's `Finished` condition: the Workload's job ended and its quota is released.
        self.workloads.retain(|p| {
            !p.obj
                .status
                .conditions
                .iter()
                .any(|c| c.kind == "Finished" && c.status == "True")
        });
        let key_of = |kind: &str, meta: &wire::ObjectMeta| -> OwnerKey {
            (
                namespace_of(meta),
                kind.to_string(),
                meta.name
                    .as_ref()
                    .map_or(String::new(), |n| n.value.clone()),
            )
        };
        // A job stays unless its Workload stands for it or it has finished; every job is an
        // owner its pods may name.
        let mut jobs: BTreeSet<OwnerKey> = BTreeSet::new();
        let mut keep = |key: OwnerKey, finished: bool| -> bool {
            let stays = !finished && !owned.contains(&key);
            jobs.insert(key);
            stays
        };
        self.jobs
            .retain(|p| keep(key_of("Job", &p.obj.metadata), p.obj.status.finished()));
        self.jobsets
            .retain(|p| keep(key_of("JobSet", &p.obj.metadata), p.obj.status.finished()));
        self.train_jobs
            .retain(|p| keep(key_of("TrainJob", &p.obj.metadata), p.obj.status.finished()));
        self.kubeflow_jobs
            .retain(|(kind, p)| keep(key_of(kind, &p.obj.metadata), p.obj.status.finished()));
        self.ray_jobs
            .retain(|p| keep(key_of("RayJob", &p.obj.metadata), false));
        self.ray_clusters
            .retain(|p| keep(key_of("RayCluster", &p.obj.metadata), false));
        self.statefulsets
            .retain(|p| keep(key_of("StatefulSet", &p.obj.metadata), false));
        self.leader_worker_sets
            .retain(|p| keep(key_of("LeaderWorkerSet", &p.obj.metadata), false));
        // Kueue's pod integration serves a Deployment pod by pod: when the input has the
        // Workload of one of its pods, it has them all, and they stand for the Deployment.
        let per_pod: BTreeSet<OwnerKey> = self
            .pods
            .iter()
            .filter_map(|p| {
                let meta = &p.obj.metadata;
                let ns = namespace_of(meta);
                let name = meta.name.as_ref()?.value.clone();
                if !owned.contains(&(ns.clone(), "Pod".to_string(), name)) {
                    return None;
                }
                let (kind, rs) = meta.controller()?;
                let d = self
                    .deployment_of(&ns, rs, meta)
                    .filter(|_| kind == "ReplicaSet")?;
                Some((ns, "Deployment".to_string(), d))
            })
            .collect();
        self.deployments.retain(|p| {
            let key = key_of("Deployment", &p.obj.metadata);
            let by_pods = per_pod.contains(&key);
            keep(key, by_pods)
        });
        owned.extend(jobs);
        self.pod_owners = owned;
    }

    /// The owner of a Pod among the input's jobs and Workloads (`resolve_owners`), if any:
    /// the pod itself when a Workload of the input is its (Kueue's pod integration), else
    /// its controller (a ReplicaSet's pods are its Deployment's), else its JobSet.
    pub(super) fn pod_owner(&self, meta: &wire::ObjectMeta) -> Option<OwnerKey> {
        let ns = namespace_of(meta);
        let itself = meta
            .name
            .as_ref()
            .map(|n| (ns.clone(), "Pod".to_string(), n.value.clone()));
        let by_ref = meta.controller().map(|(kind, name)| {
            match (kind, self.deployment_of(&ns, name, meta)) {
                ("ReplicaSet", Some(d)) => (ns.clone(), "Deployment".to_string(), d),
                _ => (ns.clone(), kind.to_string(), name.to_string()),
            }
        });
        let by_jobset = meta
            .labels
            .get("jobset.sigs.k8s.io/jobset-name")
            .map(|n| (ns, "JobSet".to_string(), n.clone()));
        [itself, by_ref, by_jobset]
            .into_iter()
            .flatten()
            .find(|k| self.pod_owners.contains(k))
    }

    /// The Deployment owning ReplicaSet `namespace/name`: the controller of the ReplicaSet
    /// of the input, else (no such ReplicaSet) the name less the pod's `pod-template-hash`
    /// suffix, as the Deployment controller names its ReplicaSets.
    fn deployment_of(&self, namespace: &str, name: &str, pod: &wire::ObjectMeta) -> Option<String> {
        match self
            .replica_sets
            .get(&(namespace.to_string(), name.to_string()))
        {
            Some(owner) => owner.clone(),
            None => {
                let hash = pod.labels.get("pod-template-hash")?;
                name.strip_suffix(hash.as_str())?
                    .strip_suffix('-')
                    .map(str::to_string)
            }
        }
    }

    /// The DaemonSet controlling a Pod, if its controller is one (its pods run where they
    /// are, and `describe pod` names it).
    pub(super) fn daemon_set_of(&self, meta: &wire::ObjectMeta) -> Option<String> {
        let (kind, name) = meta.controller()?;
        (kind == "DaemonSet").then(|| name.to_string())
    }

    /// Keeps an owned Pod that runs (bound to a node, not finished) for its owner's workload;
    /// the others are their owner's pods still to come and need nothing.
    pub(super) fn keep_owned_pod(
        &mut self,
        owner: OwnerKey,
        p: &Parsed<'_, wire::PodTemplateSpec>,
        runs: bool,
    ) -> Result<(), ScenarioError> {
        let Some(node) = p.obj.spec.node_name.as_ref().filter(|_| runs) else {
            return Ok(());
        };
        let Some(&i) = self.index.nodes.get(&node.value) else {
            return Err(err_at(
                p.src,
                node,
                format!(
                    "spec.nodeName {:?} is not a node of the input: expected a Node or NodePool node",
                    node.value
                ),
            ));
        };
        let meta = &p.obj.metadata;
        let pod = OwnedPod {
            name: name_of(p.src, meta)?.to_string(),
            node: NodeId::from_index(i),
            pod_set: meta.labels.get("kueue.x-k8s.io/podset").cloned(),
            info: super::pod_spec::pod_info(&p.obj),
            gpu_group: meta.labels.get("runai-gpu-group").cloned(),
        };
        self.owned_pods.entry(owner).or_default().push(pod);
        Ok(())
    }

    /// Gives each workload the running Pods its job or Workload owns: bound first in their
    /// pod set (by Kueue's `podset` label, else the first with room), under their own
    /// names, in name order; the workloads of one owner (a Deployment's, one per replica)
    /// take them in turn. A managed workload without quota in the input cannot run pods:
    /// they are left out, with a warning.
    pub(super) fn attach_owned_pods(&mut self, out: &mut [(usize, Workload)]) {
        let mut owned = std::mem::take(&mut self.owned_pods);
        for pods in owned.values_mut() {
            pods.sort_by(|a, b| a.name.cmp(&b.name));
        }
        // Owners with a workload here: the name of the first, for a warning.
        let mut with_workload: BTreeMap<OwnerKey, String> = BTreeMap::new();
        for (_, w) in out.iter_mut() {
            let Some((kind, name)) = &w.owner else {
                continue;
            };
            let key = (w.namespace.clone(), kind.clone(), name.clone());
            let Some(pods) = owned.get_mut(&key) else {
                continue;
            };
            with_workload
                .entry(key)
                .or_insert_with(|| format!("{}/{}", w.namespace, w.name));
            if pods.is_empty() {
                continue;
            }
            if w.queue != QueueRef::Unmanaged && w.initial_admission.is_none() {
                self.warnings.push(format!(
                    "{}/{} runs {} pod(s) in the input but holds no quota there (no Workload with status.admission): they are left out, and its pods start when Kueue admits it",
                    w.namespace,
                    w.name,
                    pods.len()
                ));
                pods.clear();
                continue;
            }
            let n = w.pod_sets.len();
            let room: Vec<usize> = (0..n)
                .map(|ps| {
                    let admitted = w
                        .initial_admission
                        .as_ref()
                        .and_then(|a| a.pod_sets.get(ps))
                        .map(|a| a.count);
                    admitted.unwrap_or(w.pod_sets[ps].count) as usize
                })
                .collect();
            let mut sets: Vec<Vec<OwnedPod>> = (0..n).map(|_| Vec::new()).collect();
            let mut rest = Vec::new();
            for pod in pods.drain(..) {
                let named = pod
                    .pod_set
                    .as_ref()
                    .and_then(|l| w.pod_sets.iter().position(|ps| &ps.name == l))
                    .filter(|&ps| sets[ps].len() < room[ps]);
                match named.or_else(|| (0..n).find(|&ps| sets[ps].len() < room[ps])) {
                    Some(ps) => sets[ps].push(pod),
                    None => rest.push(pod),
                }
            }
            *pods = rest;
            let g = Arc::make_mut(&mut w.gang);
            g.bound_nodes = sets
                .iter()
                .map(|s| s.iter().map(|p| p.node).collect())
                .collect();
            // Named pods first, then as their controller names the others.
            g.pod_names = sets
                .iter()
                .map(|s| s.iter().map(|p| p.name.clone()).collect())
                .collect();
            if sets.iter().flatten().any(|p| p.gpu_group.is_some()) {
                g.bound_gpu_groups = sets
                    .iter()
                    .map(|s| s.iter().map(|p| p.gpu_group.clone()).collect())
                    .collect();
            }
            // The pod views read a pod's own info, then its pod set's template.
            g.pod_info = sets
                .iter()
                .map(|s| s.iter().map(|p| p.info.clone()).collect())
                .collect();
            if g.pre_bound() > 0 {
                w.arrival = SimTime::ZERO;
            }
            // A pod Kueue does not manage is its own workload (a Deployment's replica): it
            // goes by the running pod's name, as the other views name it.
            if w.queue == QueueRef::Unmanaged
                && w.kind == "Pod"
                && let Some(pod) = sets.first().and_then(|s| s.first())
            {
                w.name = pod.name.clone();
            }
            // Every admitted pod runs: the workload's pods are ready at the start.
            let bound = g.pre_bound();
            if let Some(a) = &mut w.initial_admission
                && bound >= a.pod_sets.iter().map(|p| p.count as usize).sum::<usize>()
            {
                a.pods_ready = true;
            }
        }
        let mut left: Vec<String> = Vec::new();
        let mut left_count = 0;
        for (key, pods) in &owned {
            if pods.is_empty() {
                continue;
            }
            match with_workload.get(key) {
                Some(workload) => self.warnings.push(format!(
                    "{workload} runs {} pod(s) more than its pod sets admit: they are left out",
                    pods.len()
                )),
                None => {
                    let (ns, kind, name) = key;
                    left.push(format!("{kind} {ns}/{name}"));
                    left_count += pods.len();
                }
            }
        }
        if left_count > 0 {
            self.warnings.push(format!(
                "{left_count} running pod(s) of {} are not simulated: their owner makes no workload here",
                left.join(", ")
            ));
        }
    }
}

/// Owned pods by owner, kept between the pods' build and the attachment.
pub(super) type OwnedPods = BTreeMap<OwnerKey, Vec<OwnedPod>>;
