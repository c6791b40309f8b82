//! Bare Pods: alone (Kueue's pod integration, a Workload per pod), or one gang per group —
//! a Kueue pod group (label `kueue.x-k8s.io/pod-group-name`), a Volcano PodGroup (annotation
//! `scheduling.k8s.io/group-name`) or a KAI PodGroup (annotation `pod-group-name`) — with
//! every pod's own name, and the members already bound (`spec.nodeName`) on their nodes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kueuesim_model::{NodeId, QueueRef, SchedulerKind, SimTime, Workload};

use super::JobKind;
use crate::convert::core::{Builder, Parsed, err_at, err_obj, name_of, namespace_of, spec_shape};
use crate::convert::pod_spec::pod_info;
use crate::error::ScenarioError;
use crate::wire;

/// The gang a bare Pod belongs to, by who groups it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(in crate::convert) enum PodGang {
    /// Kueue's plain pod group: one Workload once all `pod-group-total-count` pods exist.
    Kueue,
    /// Volcano's scheduler groups pods by `scheduling.k8s.io/group-name`
    /// (`KubeGroupNameAnnotationKey`, `getJobID` in Volcano's `job_info.go`).
    Volcano,
    /// KAI's scheduler groups pods by `pod-group-name` (`PodGroupAnnotationForPod`).
    Kai,
}

impl PodGang {
    /// The key that names the group on a pod.
    fn key(self) -> &'static str {
        match self {
            PodGang::Kueue => "kueue.x-k8s.io/pod-group-name",
            PodGang::Volcano => "scheduling.k8s.io/group-name",
            PodGang::Kai => "pod-group-name",
        }
    }

    /// The group as a reported kind: a Kueue pod group is a Workload of kind Pod; a
    /// scheduler's gang is its PodGroup.
    fn kind(self) -> JobKind {
        let (kind, group) = match self {
            PodGang::Kueue => ("Pod", ""),
            PodGang::Volcano => ("PodGroup", "scheduling.volcano.sh"),
            PodGang::Kai => ("PodGroup", "scheduling.run.ai"),
        };
        JobKind {
            kind,
            group,
            is_batch_job: false,
        }
    }
}

/// Labels that differ from pod to pod of one role by construction (an index, the pod's
/// name, the GPU a share was given), left out when pods are grouped into pod sets, so that
/// one role stays one pod set.
const PER_POD_LABELS: &[&str] = &[
    "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index",
    "batch.kubernetes.io/job-completion-index",
    "controller-uid",
    "batch.kubernetes.io/controller-uid",
    GPU_GROUP_LABEL,
];

/// KAI's label of a pod holding a GPU share: the GPU group (one device) it was given
/// (`runai-gpu-group`, KAI's `GPUGroup`).
const GPU_GROUP_LABEL: &str = "runai-gpu-group";

/// Whether a Pod of the input holds (or will hold) capacity: not one that has finished
/// (`status.phase` `Succeeded` or `Failed`: a dump keeps them until they are deleted, and
/// they hold nothing), and not KAI's GPU reservation pod (label `app:
/// kai-resource-reservation`), whose GPU the shares on its device hold here
/// (`Cluster::apply_claim`), as KAI counts it (`IsResourceReservationTask`).
fn holds_capacity(pod: &wire::PodTemplateSpec) -> bool {
    let finished = pod
        .status
        .phase
        .as_ref()
        .is_some_and(|p| matches!(p.value.as_str(), "Succeeded" | "Failed"));
    let reservation =
        pod.metadata.labels.get("app").map(String::as_str) == Some("kai-resource-reservation");
    !finished && !reservation
}

impl Builder<'_> {
    /// Pods, alone or in groups (see the module doc).
    pub(super) fn build_pods(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let pods = std::mem::take(&mut self.pods);
        let mut groups: BTreeMap<(String, PodGang, String), Vec<usize>> = BTreeMap::new();
        for (i, p) in pods.iter().enumerate() {
            let src = p.src;
            let meta = &p.obj.metadata;
            let name = name_of(src, meta)?.to_string();
            let namespace = namespace_of(meta);
            self.remember(src, &namespace, &name)?;
            // A pod of a job or Workload of the input is one of its pods (`owners`).
            if let Some(owner) = self.pod_owner(meta) {
                self.keep_owned_pod(owner, p, holds_capacity(&p.obj))?;
                continue;
            }
            if !holds_capacity(&p.obj) {
                continue;
            }
            if let Some((gang, group)) = self.pod_gang(p)? {
                groups.entry((namespace, gang, group)).or_default().push(i);
                continue;
            }
            let pod = &p.obj;
            let ps = self.pod_set(src, "main".into(), 1, None, pod)?;
            let kind = JobKind {
                kind: "Pod",
                group: "",
                is_batch_job: false,
            };
            let mut w =
                self.job_workload(src, meta, kind, &name, &namespace, vec![ps], &[pod], None)?;
            // A DaemonSet's pod: `describe pod` names its controller.
            if let Some(ds) = self.daemon_set_of(meta) {
                w.owner = Some(("DaemonSet".into(), ds));
            }
            // A bare Pod keeps its own name (and what it says, for the pod views).
            {
                let g = Arc::make_mut(&mut w.gang);
                g.pod_names = vec![vec![name.clone()]];
                g.pod_info = vec![vec![pod_info(pod)]];
            }
            // No controller replaces a bare Pod that ends early.
            w.resilience.on_pod_loss = kueuesim_model::OnPodLoss::Fail;
            // A Pod already bound (`spec.nodeName`) occupies its node from time 0.
            if let Some(node) = self.bound_node(p, &w)? {
                let g = Arc::make_mut(&mut w.gang);
                g.bound_nodes = vec![vec![node]];
                if let Some(group) = meta.labels.get(GPU_GROUP_LABEL) {
                    g.bound_gpu_groups = vec![vec![Some(group.clone())]];
                }
                // Running at the start, whatever its creation time (a snapshot's state).
                w.arrival = SimTime::ZERO;
            }
            out.push((src.order, w));
        }
        for ((namespace, gang, group), members) in groups {
            if let Some(w) = self.pod_group(&pods, &namespace, gang, &group, &members)? {
                out.push((pods[members[0]].src.order, w));
            }
        }
        Ok(())
    }

    /// The group a pod is a member of, if any. Volcano and KAI group only the pods they
    /// schedule: a pod that names a PodGroup of a scheduler it is not scheduled by is a pod
    /// of its own (with a warning).
    fn pod_gang(
        &mut self,
        p: &Parsed<'_, wire::PodTemplateSpec>,
    ) -> Result<Option<(PodGang, String)>, ScenarioError> {
        let meta = &p.obj.metadata;
        if let Some(g) = meta.labels.get(PodGang::Kueue.key()) {
            return Ok(Some((PodGang::Kueue, g.clone())));
        }
        let scheduler = p
            .obj
            .spec
            .scheduler_name
            .as_ref()
            .map_or("default-scheduler", |s| s.value.as_str());
        let kind = self.world.config.scheduler(scheduler);
        for (gang, by) in [
            (PodGang::Volcano, SchedulerKind::Volcano),
            (PodGang::Kai, SchedulerKind::Kai),
        ] {
            let Some(g) = meta.annotations.get(gang.key()) else {
                continue;
            };
            let group = g.value.trim();
            if group.is_empty() {
                continue;
            }
            if kind == Some(by) {
                // It names a PodGroup (and the workload made of its pods): a DNS-1123
                // subdomain.
                crate::convert::names::reference(p.src, g, gang.key())?;
                return Ok(Some((gang, group.to_string())));
            }
            // Named, so not also reported as a PodGroup without pods.
            self.pod_groups_named.insert((
                gang == PodGang::Kai,
                namespace_of(meta),
                group.to_string(),
            ));
            let by = if gang == PodGang::Kai {
                "KAI"
            } else {
                "Volcano"
            };
            self.warnings.push(format!(
                "{}: pod {}/{} names {by} PodGroup {group:?} ({}) but is scheduled by {scheduler:?}: {by} groups only the pods it schedules, so this pod is placed on its own",
                p.src.kind_pos,
                namespace_of(meta),
                name_of(p.src, meta)?,
                gang.key(),
            ));
        }
        Ok(None)
    }

    /// The node a bare pod is bound to (`spec.nodeName`), if any; a bound pod of Kueue's is
    /// an error (Kueue's state lives in its Workload, which the input must carry instead).
    fn bound_node(
        &self,
        p: &Parsed<'_, wire::PodTemplateSpec>,
        w: &Workload,
    ) -> Result<Option<NodeId>, ScenarioError> {
        let Some(node) = &p.obj.spec.node_name else {
            return Ok(None);
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
        if w.queue != QueueRef::Unmanaged {
            return Err(err_at(
                p.src,
                node,
                "a bound Pod managed by Kueue: expected its admitted Workload in the input instead (kueuesim continues Kueue's pods from their Workloads)",
            ));
        }
        Ok(Some(NodeId::from_index(i)))
    }

    /// One group's Workload: pod sets by role (pods of one task and shape), each pod under
    /// its own name, bound members first in their pod set. `None` when Kueue would not create
    /// the Workload yet (a Kueue pod group with pods missing).
    fn pod_group(
        &mut self,
        pods: &[Parsed<'_, wire::PodTemplateSpec>],
        namespace: &str,
        gang: PodGang,
        group: &str,
        members: &[usize],
    ) -> Result<Option<Workload>, ScenarioError> {
        let first = &pods[members[0]];
        let src = first.src;
        let meta = &first.obj.metadata;
        match gang {
            PodGang::Kueue => {
                if !self.kueue_group_complete(first, namespace, group, members.len())? {
                    return Ok(None);
                }
            }
            PodGang::Volcano | PodGang::Kai => {
                let key = (namespace.to_string(), group.to_string());
                let exists = match gang {
                    PodGang::Volcano => self.volcano_pod_groups.contains_key(&key),
                    _ => self.kai_pod_groups.contains_key(&key),
                };
                if !exists {
                    let at = meta.annotations.get(gang.key()).expect("grouped by it");
                    let (what, api) = match gang {
                        PodGang::Volcano => ("Volcano", "scheduling.volcano.sh"),
                        _ => ("KAI", "scheduling.run.ai"),
                    };
                    // The scheduler keeps such pods pending for ever (no PodGroup, no job
                    // to schedule); an input without the PodGroup is most likely incomplete.
                    return Err(err_at(
                        src,
                        at,
                        format!(
                            "{} {group:?}: no {what} PodGroup {namespace}/{group} in the input: expected a {api} PodGroup of that name",
                            gang.key()
                        ),
                    ));
                }
            }
        }
        // One scheduler per group: a gang is placed by one scheduler in one pass.
        let scheduler_of = |m: usize| {
            pods[m]
                .obj
                .spec
                .scheduler_name
                .as_ref()
                .map_or("default-scheduler", |s| s.value.as_str())
        };
        if let Some(&other) = members
            .iter()
            .find(|&&m| scheduler_of(m) != scheduler_of(members[0]))
        {
            return Err(err_obj(
                pods[other].src,
                format!(
                    "pod {} of group {namespace}/{group} has schedulerName {:?}, pod {} {:?}: expected one scheduler for the pods of a group",
                    name_of(pods[other].src, &pods[other].obj.metadata)?,
                    scheduler_of(other),
                    name_of(src, meta)?,
                    scheduler_of(members[0]),
                ),
            ));
        }
        // Roles: pods of one spec shape (and, for Volcano and KAI, one task and one set of
        // labels, which subgroup policies and `kai.scheduler/subgroup-name` select on),
        // in the order of their first pod (the members are in name order), then as each
        // grouper orders them.
        let mut by_key: Vec<(String, String, Vec<usize>)> = Vec::new();
        let mut role_of: BTreeMap<String, usize> = BTreeMap::new();
        for &m in members {
            let key = role_key(gang, &pods[m].obj);
            let r = *role_of.entry(key.clone()).or_insert_with(|| {
                by_key.push((key, role_name(gang, &pods[m].obj), Vec::new()));
                by_key.len() - 1
            });
            by_key[r].2.push(m);
        }
        match gang {
            // Kueue's pod sets of a pod group, in role-hash order.
            PodGang::Kueue => by_key.sort_by(|a, b| a.0.cmp(&b.0)),
            // Volcano's task order (`TaskOrderFn` without a plugin's answer): the earlier
            // created first, equal times by name (the members are in name order).
            PodGang::Volcano => {
                let created = |m: usize| {
                    pods[m]
                        .obj
                        .metadata
                        .creation_timestamp
                        .as_ref()
                        .and_then(|t| kueuesim_model::time::parse_rfc3339(t.value.trim()).ok())
                };
                by_key.sort_by_key(|(_, _, ms)| created(ms[0]));
            }
            // KAI: in the order of the PodGroup's subgroups (pods of none last).
            PodGang::Kai => {
                let key = (namespace.to_string(), group.to_string());
                let order: Vec<String> = self
                    .kai_pod_groups
                    .get(&key)
                    .map(|pg| {
                        pg.obj
                            .spec
                            .sub_groups
                            .iter()
                            .filter_map(|g| g.name.as_ref().map(|n| n.value.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                by_key.sort_by_key(|(_, _, ms)| {
                    let sub = pods[ms[0]]
                        .obj
                        .metadata
                        .labels
                        .get("kai.scheduler/subgroup-name");
                    sub.and_then(|s| order.iter().position(|o| o == s))
                        .unwrap_or(order.len())
                });
            }
        }
        let mut roles: Vec<(String, Vec<usize>)> =
            by_key.into_iter().map(|(_, n, ms)| (n, ms)).collect();
        // Pod set names are unique: a second role of the same task gets a suffix.
        let mut taken: BTreeSet<String> = BTreeSet::new();
        for (name, _) in &mut roles {
            let base = name.clone();
            let mut k = 1;
            while !taken.insert(name.clone()) {
                k += 1;
                *name = format!("{base}-{k}");
            }
        }
        // Bound members first in each pod set (`GangSpec::bound_nodes` are the first pods).
        for (_, ms) in &mut roles {
            ms.sort_by_key(|&m| pods[m].obj.spec.node_name.is_none());
        }
        let mut pod_sets = Vec::new();
        let mut templates = Vec::new();
        for (name, ms) in &roles {
            let t = &pods[ms[0]].obj;
            pod_sets.push(self.pod_set(src, name.clone(), ms.len() as u32, None, t)?);
            templates.push(t);
        }
        let mut w = self.job_workload(
            src,
            meta,
            gang.kind(),
            group,
            namespace,
            pod_sets,
            &templates,
            None,
        )?;
        if gang != PodGang::Kueue && w.queue != QueueRef::Unmanaged {
            // Kueue's pod integration would make each pod a Workload of its own while the
            // scheduler waits for the gang: a split kueuesim does not model.
            return Err(err_obj(
                src,
                format!(
                    "the pods of PodGroup {namespace}/{group} are managed by Kueue (LocalQueue {:?}) without kueue.x-k8s.io/pod-group-name: Kueue would admit each pod as a Workload of its own; expected the pods in a Kueue pod group (label kueue.x-k8s.io/pod-group-name, annotation kueue.x-k8s.io/pod-group-total-count) or no queue-name label",
                    w.queue_name.as_deref().unwrap_or("")
                ),
            ));
        }
        // Nothing replaces a lost pod of a group of bare Pods.
        w.resilience.on_pod_loss = kueuesim_model::OnPodLoss::Fail;
        // A Kueue pod group's Workload is named after the group.
        w.name = group.to_string();
        let mut names = Vec::with_capacity(roles.len());
        let mut infos = Vec::with_capacity(roles.len());
        let mut bound = Vec::with_capacity(roles.len());
        let mut groups = Vec::with_capacity(roles.len());
        for (_, ms) in &roles {
            infos.push(ms.iter().map(|&m| pod_info(&pods[m].obj)).collect());
            let mut set_names = Vec::with_capacity(ms.len());
            let mut set_bound = Vec::new();
            let mut set_groups = Vec::new();
            for &m in ms {
                set_names.push(name_of(pods[m].src, &pods[m].obj.metadata)?.to_string());
                if let Some(node) = self.bound_node(&pods[m], &w)? {
                    set_bound.push(node);
                    set_groups.push(pods[m].obj.metadata.labels.get(GPU_GROUP_LABEL).cloned());
                }
            }
            names.push(set_names);
            bound.push(set_bound);
            groups.push(set_groups);
        }
        let g = Arc::make_mut(&mut w.gang);
        g.pod_names = names;
        g.pod_info = infos;
        if bound.iter().any(|b| !b.is_empty()) {
            g.bound_nodes = bound;
            if groups.iter().flatten().any(Option::is_some) {
                g.bound_gpu_groups = groups;
            }
            w.arrival = SimTime::ZERO;
        }
        Ok(Some(w))
    }

    /// Whether a Kueue pod group has all its pods (`kueue.x-k8s.io/pod-group-total-count`):
    /// Kueue creates the group's Workload only then (a warning otherwise).
    fn kueue_group_complete(
        &mut self,
        first: &Parsed<'_, wire::PodTemplateSpec>,
        namespace: &str,
        group: &str,
        members: usize,
    ) -> Result<bool, ScenarioError> {
        let src = first.src;
        let max = kueuesim_model::limits::MAX_PODS_PER_WORKLOAD as usize;
        let total = match first
            .obj
            .metadata
            .annotations
            .get("kueue.x-k8s.io/pod-group-total-count")
        {
            Some(t) => match t.value.trim().parse::<usize>() {
                Ok(n) if (1..=max).contains(&n) => n,
                _ => {
                    return Err(err_at(
                        src,
                        t,
                        format!(
                            "pod-group-total-count {:?}: expected an integer from 1 to {max}",
                            t.value
                        ),
                    ));
                }
            },
            None => {
                return Err(err_obj(
                    src,
                    format!(
                        "pod group {namespace}/{group} has no kueue.x-k8s.io/pod-group-total-count annotation: expected the number of pods in the group"
                    ),
                ));
            }
        };
        if members != total {
            self.warnings.push(format!(
                "{}: pod group {namespace}/{group} has {members} of its {total} pods in the input; Kueue waits for all of them, so it is not simulated",
                src.kind_pos,
            ));
            return Ok(false);
        }
        Ok(true)
    }
}

/// Volcano's task of a pod (`getTaskRole`: annotation, then label `volcano.sh/task-spec`).
fn volcano_task(pod: &wire::PodTemplateSpec) -> Option<&str> {
    let m = &pod.metadata;
    m.annotations
        .get("volcano.sh/task-spec")
        .map(|s| s.value.as_str())
        .or_else(|| m.labels.get("volcano.sh/task-spec").map(String::as_str))
        .filter(|t| !t.is_empty())
}

/// What puts two pods of a group in one pod set.
fn role_key(gang: PodGang, pod: &wire::PodTemplateSpec) -> String {
    use std::fmt::Write;
    let m = &pod.metadata;
    if gang == PodGang::Kueue {
        // Kueue's role hash (annotation `kueue.x-k8s.io/role-hash`), else the spec shape.
        return match m.annotations.get("kueue.x-k8s.io/role-hash") {
            Some(h) => h.value.clone(),
            None => format!("{:08x}", spec_shape(&pod.spec) as u32),
        };
    }
    let mut key = format!("{:016x}|", spec_shape(&pod.spec));
    if let Some(t) = volcano_task(pod) {
        let _ = write!(key, "task={t}|");
    }
    for (k, v) in &m.labels {
        if !PER_POD_LABELS.contains(&k.as_str()) {
            let _ = write!(key, "{k}={v};");
        }
    }
    key
}

/// A role's pod set name: Volcano's task (which `minTaskMember` names), KAI's subgroup, else
/// the digest of the pods' shape.
fn role_name(gang: PodGang, pod: &wire::PodTemplateSpec) -> String {
    let m = &pod.metadata;
    let named = match gang {
        PodGang::Kueue => None,
        PodGang::Volcano => volcano_task(pod).map(str::to_string),
        PodGang::Kai => m.labels.get("kai.scheduler/subgroup-name").cloned(),
    };
    named.unwrap_or_else(|| match m.annotations.get("kueue.x-k8s.io/role-hash") {
        Some(h) if gang == PodGang::Kueue => h.value.clone(),
        _ => format!("{:08x}", spec_shape(&pod.spec) as u32),
    })
}
