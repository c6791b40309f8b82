//! A cluster dump's objects by who owns them: a job (Job, JobSet, …) whose Kueue Workload is
//! in the input is that Workload (which carries the admission), and the running Pods a job
//! or Workload owns are its pods on their nodes, not bare Pods of their own.
//!
//! Ownership is read from `metadata.ownerReferences` (the controller, else the only owner),
//! as Kueue's jobframework and the garbage collector read it: a Workload's owner is its job
//! (`ownerReferences` kind and name), a Pod's is the job that created it; JobSet pods are
//! owned by its child Jobs and carry the label `jobset.sigs.k8s.io/jobset-name`.

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
    /// the build (the Workload is the state Kueue keeps of its job). Then the owners a
    /// running Pod may have: those, and every job object still read.
    pub(super) fn resolve_owners(&mut self) {
        let mut owned: BTreeSet<OwnerKey> = BTreeSet::new();
        for p in &self.workloads {
            let meta = &p.obj.metadata;
            if let Some((kind, name)) = meta.controller() {
                owned.insert((namespace_of(meta), kind.to_string(), name.to_string()));
            }
        }
        fn keep<T: wire::HasMeta>(
            list: &mut Vec<Parsed<'_, T>>,
            kind: &str,
            owned: &BTreeSet<OwnerKey>,
            jobs: &mut BTreeSet<OwnerKey>,
        ) {
            list.retain(|p| {
                let Some(meta) = p.obj.meta() else {
                    return true;
                };
                let key = (
                    namespace_of(meta),
                    kind.to_string(),
                    meta.name
                        .as_ref()
                        .map_or(String::new(), |n| n.value.clone()),
                );
                let stays = !owned.contains(&key);
                if stays {
                    jobs.insert(key);
                }
                stays
            });
        }
        let mut jobs: BTreeSet<OwnerKey> = BTreeSet::new();
        keep(&mut self.jobs, "Job", &owned, &mut jobs);
        keep(&mut self.jobsets, "JobSet", &owned, &mut jobs);
        keep(&mut self.ray_jobs, "RayJob", &owned, &mut jobs);
        keep(&mut self.train_jobs, "TrainJob", &owned, &mut jobs);
        keep(&mut self.ray_clusters, "RayCluster", &owned, &mut jobs);
        keep(&mut self.statefulsets, "StatefulSet", &owned, &mut jobs);
        keep(
            &mut self.leader_worker_sets,
            "LeaderWorkerSet",
            &owned,
            &mut jobs,
        );
        self.kubeflow_jobs.retain(|(kind, p)| {
            let meta = &p.obj.metadata;
            let key = (
                namespace_of(meta),
                kind.to_string(),
                meta.name
                    .as_ref()
                    .map_or(String::new(), |n| n.value.clone()),
            );
            let stays = !owned.contains(&key);
            if stays {
                jobs.insert(key);
            }
            stays
        });
        owned.extend(jobs);
        self.pod_owners = owned;
    }

    /// The owner of a Pod among the input's jobs and Workloads (`resolve_owners`), if any.
    pub(super) fn pod_owner(&self, meta: &wire::ObjectMeta) -> Option<OwnerKey> {
        let ns = namespace_of(meta);
        let by_ref = meta
            .controller()
            .map(|(k, n)| (ns.clone(), k.to_string(), n.to_string()));
        let by_jobset = meta
            .labels
            .get("jobset.sigs.k8s.io/jobset-name")
            .map(|n| (ns, "JobSet".to_string(), n.clone()));
        [by_ref, by_jobset]
            .into_iter()
            .flatten()
            .find(|k| self.pod_owners.contains(k))
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
    /// names. A managed workload without quota in the input cannot run pods: they are left
    /// out, with a warning.
    pub(super) fn attach_owned_pods(&mut self, out: &mut [(usize, Workload)]) {
        let mut owned = std::mem::take(&mut self.owned_pods);
        for (_, w) in out.iter_mut() {
            let Some((kind, name)) = &w.owner else {
                continue;
            };
            let key = (w.namespace.clone(), kind.clone(), name.clone());
            let Some(mut pods) = owned.remove(&key) else {
                continue;
            };
            if w.queue != QueueRef::Unmanaged && w.initial_admission.is_none() {
                self.warnings.push(format!(
                    "{}/{} runs {} pod(s) in the input but holds no quota there (no Workload with status.admission): they are left out, and its pods start when Kueue admits it",
                    w.namespace,
                    w.name,
                    pods.len()
                ));
                continue;
            }
            pods.sort_by(|a, b| a.name.cmp(&b.name));
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
            let mut extra = 0usize;
            for pod in pods {
                let named = pod
                    .pod_set
                    .as_ref()
                    .and_then(|l| w.pod_sets.iter().position(|ps| &ps.name == l))
                    .filter(|&ps| sets[ps].len() < room[ps]);
                match named.or_else(|| (0..n).find(|&ps| sets[ps].len() < room[ps])) {
                    Some(ps) => sets[ps].push(pod),
                    None => extra += 1,
                }
            }
            if extra > 0 {
                self.warnings.push(format!(
                    "{}/{} runs {extra} pod(s) more than its pod sets admit: they are left out",
                    w.namespace, w.name
                ));
            }
            let g = Arc::make_mut(&mut w.gang);
            g.bound_nodes = sets
                .iter()
                .map(|s| s.iter().map(|p| p.node).collect())
                .collect();
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
        }
        let left: usize = owned.values().map(Vec::len).sum();
        if left > 0 {
            let owners: Vec<String> = owned
                .keys()
                .map(|(ns, k, n)| format!("{k} {ns}/{n}"))
                .collect();
            self.warnings.push(format!(
                "{left} running pod(s) of {} are not simulated: their owner makes no workload here",
                owners.join(", ")
            ));
        }
    }
}

/// Owned pods by owner, kept between the pods' build and the attachment.
pub(super) type OwnedPods = BTreeMap<OwnerKey, Vec<OwnedPod>>;
