//! Grove (`grove.io/v1alpha1`): a PodCliqueSet expanded as the Grove operator expands it —
//! per replica its PodCliques, their pods and the PodGangs that gang them — into one workload
//! per PodGang, whose gang is the PodGroup KAI's grove pod grouper makes of that PodGang: a
//! subgroup per PodClique (`minReplicas` from the clique's `minAvailable`), a parent subgroup
//! per scaling-group replica with a topology constraint, `minMember` the sum of the
//! subgroups' minimums, and the pack constraints translated from `packDomain` through the
//! ClusterTopology (docs/semantics.md, "Grove").

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_saphyr::Spanned;

use kueuesim_model::names::NameRule;
use kueuesim_model::{
    GangSpec, KaiSubGroup, KaiTopologyConstraint, OnPodLoss, QueueRef, SchedulerKind, Workload,
    limits,
};

mod topology;

use topology::GroveTopology;

use crate::convert::core::{
    Builder, PRIORITY_CLASS_LABEL, QUEUE_LABEL, duration, err_at, err_obj, name_of, namespace_of,
};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

/// Grove's topology domains, broadest first (`TopologyDomain`, `topologyDomainOrder`).
const DOMAINS: [&str; 7] = [
    "region",
    "zone",
    "datacenter",
    "block",
    "rack",
    "host",
    "numa",
];

/// `CliqueStartupType` values.
const STARTUP_TYPES: [&str; 3] = [
    "CliqueStartupTypeAnyOrder",
    "CliqueStartupTypeInOrder",
    "CliqueStartupTypeExplicit",
];

/// The ClusterTopology the operator uses when its configuration names none.
const DEFAULT_TOPOLOGY: &str = "grove-topology";

/// The label Grove's mutating webhook puts on a PodCliqueSet: the ClusterTopology it uses.
const TOPOLOGY_LABEL: &str = "grove.io/cluster-topology-name";

/// The validating webhook's `maxCombinedResourceNameLength`: PodCliqueSet, scaling group and
/// clique names together, so that pod names stay within 63 characters.
const MAX_COMBINED_NAME: usize = 45;

/// KAI's queue label, which its pod grouper reads from the PodGang or the pod.
const KAI_QUEUE_LABEL: &str = "kai.scheduler/queue";

/// A clique as the operator defaults and validates it.
struct Clique {
    name: String,
    /// Its pods' template: the clique's labels and annotations over its `podSpec`.
    template: wire::PodTemplateSpec,
    replicas: u32,
    /// `minAvailable` (default: `replicas`).
    min_available: u32,
    /// Its `packDomain`'s node label key.
    pack: Option<String>,
}

/// A `podCliqueScalingGroups` entry, defaulted and validated.
struct ScalingGroup {
    name: String,
    /// Its cliques, in `cliqueNames` order.
    cliques: Vec<usize>,
    replicas: u32,
    min_available: u32,
    pack: Option<String>,
}

/// One PodGang: its name, its PodGroups (PodClique name, clique, index of its
/// `topologyConstraintGroupConfigs` entry) and those entries (name, scaling group).
struct Gang {
    name: String,
    groups: Vec<(String, usize, Option<usize>)>,
    configs: Vec<(String, usize)>,
}

/// A positive count of at most `limits::MAX_REPLICAS` (`default` when absent).
fn count(
    src: &ObjectText<'_>,
    what: &str,
    v: Option<&Spanned<i64>>,
    default: u32,
) -> Result<u32, ScenarioError> {
    match v {
        None => Ok(default),
        Some(r) if (1..=limits::MAX_REPLICAS).contains(&r.value) => Ok(r.value as u32),
        Some(r) => Err(err_at(
            src,
            r,
            format!(
                "{what} {}: must be greater than 0 (expected an integer from 1 to {})",
                r.value,
                limits::MAX_REPLICAS
            ),
        )),
    }
}

/// A `minAvailable` (`default` when absent): from 1 to `replicas`.
fn min_available(
    src: &ObjectText<'_>,
    v: Option<&Spanned<i64>>,
    default: u32,
    replicas: u32,
) -> Result<u32, ScenarioError> {
    let m = count(src, "minAvailable", v, default)?;
    if m > replicas {
        let at = v.expect("a default is at most replicas");
        return Err(err_at(
            src,
            at,
            format!(
                "minAvailable {m}: minAvailable must not be greater than replicas ({replicas})"
            ),
        ));
    }
    Ok(m)
}

impl Builder<'_> {
    /// PodCliqueSets, each one workload per PodGang.
    pub(super) fn build_pod_clique_sets(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let sets = std::mem::take(&mut self.pod_clique_sets);
        for mut p in sets {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let namespace = namespace_of(&p.obj.metadata);
            self.remember(src, &namespace, &name)?;
            let template = std::mem::take(&mut p.obj.spec.template);
            let replicas = match &p.obj.spec.replicas {
                None => 0,
                Some(r) if (0..=limits::MAX_REPLICAS).contains(&r.value) => r.value as u32,
                Some(r) => {
                    return Err(err_at(
                        src,
                        r,
                        format!(
                            "replicas {}: expected an integer from 0 to {}",
                            r.value,
                            limits::MAX_REPLICAS
                        ),
                    ));
                }
            };
            if replicas == 0 {
                self.warnings.push(format!(
                    "{}: PodCliqueSet {namespace}/{name} has 0 replicas (spec.replicas, whose default is 0): no PodGang, nothing to schedule",
                    src.kind_pos
                ));
            }
            self.pod_clique_set(
                src,
                &p.obj.metadata,
                &name,
                &namespace,
                template,
                replicas,
                out,
            )?;
        }
        Ok(())
    }

    /// One PodCliqueSet: validated as Grove's webhooks validate it, defaulted as they
    /// default it, and expanded into its PodGangs.
    #[allow(clippy::too_many_arguments)]
    fn pod_clique_set(
        &mut self,
        src: &ObjectText<'_>,
        meta: &wire::ObjectMeta,
        name: &str,
        namespace: &str,
        template: wire::PodCliqueSetTemplate,
        replicas: u32,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let topology = self.grove_topology(src, meta, &template)?;
        let pack = |c: &Option<wire::GroveTopologyConstraint>,
                    parent: Option<&(usize, Spanned<String>)>|
         -> Result<Option<(usize, Spanned<String>)>, ScenarioError> {
            let Some(d) = c.as_ref().and_then(|c| c.pack_domain.as_ref()) else {
                return Ok(None);
            };
            let Some(rank) = DOMAINS.iter().position(|x| *x == d.value) else {
                return Err(err_at(
                    src,
                    d,
                    format!(
                        "packDomain {:?}: expected one of {}",
                        d.value,
                        DOMAINS.join(", ")
                    ),
                ));
            };
            if let Some((pr, pd)) = parent
                && rank < *pr
            {
                return Err(err_at(
                    src,
                    d,
                    format!(
                        "packDomain {:?} is broader than its parent's {:?}: expected a domain equal to or stricter than the parent's",
                        d.value, pd.value
                    ),
                ));
            }
            Ok(Some((rank, d.clone())))
        };
        // A packDomain's node label key in the ClusterTopology.
        let key_of =
            |p: &Option<(usize, Spanned<String>)>| -> Result<Option<String>, ScenarioError> {
                let Some((rank, d)) = p else { return Ok(None) };
                let Some(t) = &topology else {
                    return Err(err_at(
                        src,
                        d,
                        format!(
                            "packDomain {:?} while topology support is not enabled in the operator: expected a grove.io ClusterTopology named {:?} (the PodCliqueSet's label {TOPOLOGY_LABEL}, else {DEFAULT_TOPOLOGY})",
                            d.value,
                            meta.labels
                                .get(TOPOLOGY_LABEL)
                                .map_or(DEFAULT_TOPOLOGY, String::as_str)
                        ),
                    ));
                };
                match t.levels.iter().find(|(r, _)| r == rank) {
                    Some((_, key)) => Ok(Some(key.clone())),
                    None => Err(err_at(
                        src,
                        d,
                        format!(
                            "packDomain {:?} is not a level of ClusterTopology {}: expected one of {}",
                            d.value,
                            t.name,
                            t.levels
                                .iter()
                                .map(|(r, _)| DOMAINS[*r])
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )),
                }
            };
        let set_pack = pack(&template.topology_constraint, None)?;
        let set_key = key_of(&set_pack)?;
        if let Some(d) = &template.termination_delay
            && duration(src, d)?.millis() <= 0
        {
            return Err(err_at(src, d, "terminationDelay must be greater than 0"));
        }
        let startup = match &template.clique_startup_type {
            None => STARTUP_TYPES[0],
            Some(t) => match STARTUP_TYPES.iter().find(|s| **s == t.value) {
                Some(s) => s,
                None => {
                    return Err(err_at(
                        src,
                        t,
                        format!(
                            "cliqueStartupType {:?}: expected one of {}",
                            t.value,
                            STARTUP_TYPES.join(", ")
                        ),
                    ));
                }
            },
        };
        if template.cliques.is_empty() {
            return Err(err_obj(
                src,
                "spec.template.cliques: at least one PodClique must be defined",
            ));
        }
        // The cliques' names first: the scaling groups and startsAfter refer to them.
        let mut names: Vec<String> = Vec::with_capacity(template.cliques.len());
        let mut roles: Vec<&str> = Vec::new();
        for c in &template.cliques {
            let Some(n) = c.name.as_ref().filter(|n| !n.value.is_empty()) else {
                return Err(err_obj(
                    src,
                    "a clique has no name: expected spec.template.cliques[].name",
                ));
            };
            crate::convert::names::name(src, n, "clique name", NameRule::Dns1123Label)?;
            if names.contains(&n.value) {
                return Err(err_at(
                    src,
                    n,
                    format!(
                        "clique name {:?} is used twice: cliqueTemplateSpec names must be unique",
                        n.value
                    ),
                ));
            }
            if let Some(r) = &c.spec.role_name {
                if roles.contains(&r.value.as_str()) {
                    return Err(err_at(
                        src,
                        r,
                        format!(
                            "roleName {:?} is used twice: cliqueTemplateSpec.Spec roleNames must be unique",
                            r.value
                        ),
                    ));
                }
                roles.push(&r.value);
            }
            names.push(n.value.clone());
        }
        // Scaling groups.
        let mut groups: Vec<ScalingGroup> = Vec::new();
        let mut group_of: Vec<Option<usize>> = vec![None; names.len()];
        let mut group_packs: Vec<Option<(usize, Spanned<String>)>> = Vec::new();
        for g in &template.pod_clique_scaling_groups {
            let Some(gname) = g.name.as_ref().filter(|n| !n.value.is_empty()) else {
                return Err(err_obj(
                    src,
                    "a scaling group has no name: expected spec.template.podCliqueScalingGroups[].name",
                ));
            };
            crate::convert::names::name(src, gname, "scaling group name", NameRule::Dns1123Label)?;
            if groups.iter().any(|x| x.name == gname.value) {
                return Err(err_at(
                    src,
                    gname,
                    format!("scaling group name {:?} is used twice", gname.value),
                ));
            }
            if g.clique_names.is_empty() {
                return Err(err_at(
                    src,
                    gname,
                    format!(
                        "scaling group {:?} has no cliqueNames: expected the cliques it scales",
                        gname.value
                    ),
                ));
            }
            let gi = groups.len();
            let mut members = Vec::new();
            for c in &g.clique_names {
                let Some(ci) = names.iter().position(|n| *n == c.value) else {
                    return Err(err_at(
                        src,
                        c,
                        format!(
                            "cliqueNames names {:?}: unidentified PodClique names found (expected one of {names:?})",
                            c.value
                        ),
                    ));
                };
                if let Some(other) = group_of[ci] {
                    return Err(err_at(
                        src,
                        c,
                        format!(
                            "clique {:?} is already in scaling group {:?}: expected each clique in at most one scaling group",
                            c.value, groups[other].name
                        ),
                    ));
                }
                if name.len() + gname.value.len() + c.value.len() > MAX_COMBINED_NAME {
                    return Err(err_at(
                        src,
                        c,
                        format!(
                            "combined resource name length {} exceeds 45-character limit required for pod naming. Consider shortening: PodCliqueSet '{name}', PodCliqueScalingGroup '{}', or PodClique '{}'",
                            name.len() + gname.value.len() + c.value.len(),
                            gname.value,
                            c.value
                        ),
                    ));
                }
                group_of[ci] = Some(gi);
                members.push(ci);
            }
            let replicas = count(src, "replicas", g.replicas.as_ref(), 1)?;
            let min = min_available(src, g.min_available.as_ref(), 1, replicas)?;
            let gp = pack(&g.topology_constraint, set_pack.as_ref())?;
            groups.push(ScalingGroup {
                name: gname.value.clone(),
                cliques: members,
                replicas,
                min_available: min,
                pack: key_of(&gp)?,
            });
            group_packs.push(gp);
        }
        // Cliques, defaulted (`defaultPodCliqueTemplateSpecs`) and validated.
        let mut scheduler: Option<String> = None;
        let mut cliques: Vec<Clique> = Vec::with_capacity(names.len());
        for (ci, c) in template.cliques.iter().enumerate() {
            let cname = &names[ci];
            if group_of[ci].is_none() && name.len() + cname.len() > MAX_COMBINED_NAME {
                return Err(err_at(
                    src,
                    c.name.as_ref().expect("named above"),
                    format!(
                        "combined resource name length {} exceeds 45-character limit required for pod naming. Consider shortening: PodCliqueSet '{name}' or PodClique '{cname}'",
                        name.len() + cname.len()
                    ),
                ));
            }
            // `replicas` is required by the PodClique CRD.
            let Some(r) = &c.spec.replicas else {
                return Err(err_obj(
                    src,
                    format!(
                        "clique {cname:?} has no spec.replicas: expected its pod count (required)"
                    ),
                ));
            };
            let replicas = count(src, "replicas", Some(r), 1)?;
            let min = min_available(src, c.spec.min_available.as_ref(), replicas, replicas)?;
            let parent = match group_of[ci] {
                Some(g) => group_packs[g].as_ref().or(set_pack.as_ref()),
                None => set_pack.as_ref(),
            };
            let cp = pack(&c.topology_constraint, parent)?;
            // The validating webhook: the same schedulerName on every clique; KAI's pod
            // grouper reads the PodGang only for pods KAI schedules.
            let sn = c.spec.pod_spec.scheduler_name.as_ref();
            let at = |e: String| match sn {
                Some(s) => err_at(src, s, e),
                None => err_obj(src, e),
            };
            let sname = self.scheduler_name(src, sn)?;
            match &scheduler {
                None if self.world.config.scheduler(&sname) != Some(SchedulerKind::Kai) => {
                    return Err(at(format!(
                        "schedulerName {sname:?} is not a KAI scheduler: expected the cliques' pods on KAI (Grove's PodGang is read by KAI's pod grouper; map the name to kai in Simulation spec.schedulers)"
                    )));
                }
                None => scheduler = Some(sname),
                Some(first) if *first != sname => {
                    return Err(at(format!(
                        "schedulerName {sname:?} differs from {first:?}: the schedulerName for all pods have to be the same"
                    )));
                }
                Some(_) => {}
            }
            if startup == "CliqueStartupTypeExplicit" {
                for dep in &c.spec.starts_after {
                    if dep.value.is_empty() {
                        return Err(err_at(src, dep, "clique dependency must not be empty"));
                    }
                    if dep.value == *cname {
                        return Err(err_at(src, dep, "clique dependency cannot refer to itself"));
                    }
                    if !names.contains(&dep.value) {
                        return Err(err_at(
                            src,
                            dep,
                            format!(
                                "startsAfter names {:?}, which is not a clique of this PodCliqueSet: expected one of {names:?}",
                                dep.value
                            ),
                        ));
                    }
                }
            }
            let pod = wire::PodTemplateSpec {
                metadata: wire::ObjectMeta {
                    labels: c.labels.clone(),
                    annotations: c.annotations.clone(),
                    ..Default::default()
                },
                spec: wire::PodSpec::default(),
                status: wire::PodStatus::default(),
            };
            cliques.push(Clique {
                name: cname.clone(),
                template: pod,
                replicas,
                min_available: min,
                pack: key_of(&cp)?,
            });
        }
        if startup == "CliqueStartupTypeExplicit" {
            startup_cycle(src, &template, &names)?;
        }
        // The pod specs, moved into the templates (read once, shared by every replica).
        let mut template = template;
        for (c, t) in cliques.iter_mut().zip(template.cliques.iter_mut()) {
            c.template.spec = std::mem::take(&mut t.spec.pod_spec);
        }
        if meta.labels.contains_key(KAI_QUEUE_LABEL)
            && cliques
                .iter()
                .all(|c| !c.template.metadata.labels.contains_key(KAI_QUEUE_LABEL))
        {
            self.warnings.push(format!(
                "{}: label {KAI_QUEUE_LABEL} on the PodCliqueSet is not read by KAI's grove pod grouper (it reads the PodGang's and the pods' labels): put it on the cliques' labels",
                src.kind_pos
            ));
        }
        let gangs = expand(name, replicas, &cliques, &groups, &group_of);
        super::pods::too_many_workloads(src, out.len() + gangs.len())?;
        let count = gangs.len();
        for gang in gangs {
            let w = self.gang_workload(
                src,
                meta,
                namespace,
                &template,
                &cliques,
                &groups,
                topology.as_ref(),
                &set_key,
                gang,
                count,
            )?;
            out.push((src.order, w));
        }
        Ok(())
    }

    /// The Kueue pod group a Kueue-managed PodGang's pods must form (Kueue has no Grove
    /// integration, and its pod integration admits a plain Pod alone, a split of the gang
    /// kueuesim does not model): every clique's label `kueue.x-k8s.io/pod-group-name` and
    /// annotation `kueue.x-k8s.io/pod-group-total-count` (the PodGang's pods), and the
    /// PodCliqueSet one PodGang (the labels are the same on every replica's pods). Its name is
    /// the Workload's, as Kueue names a pod group's.
    fn kueue_pod_group(
        &self,
        src: &ObjectText<'_>,
        members: &[&Clique],
        queue_name: &Option<String>,
        gangs_of_set: usize,
        pods: u32,
    ) -> Result<String, ScenarioError> {
        let lq = queue_name.as_deref().unwrap_or_default();
        let Some(group) = agreed(src, members, "kueue.x-k8s.io/pod-group-name", false)? else {
            return Err(err_obj(
                src,
                format!(
                    "the PodCliqueSet's pods are managed by Kueue (LocalQueue {lq:?}) as plain Pods (Kueue has no Grove integration): Kueue would admit each pod as a Workload of its own while KAI waits for the PodGang; expected the cliques in one Kueue pod group (label kueue.x-k8s.io/pod-group-name, annotation kueue.x-k8s.io/pod-group-total-count) or no queue-name label"
                ),
            ));
        };
        if gangs_of_set != 1 {
            return Err(err_obj(
                src,
                format!(
                    "Kueue pod group {group:?} would hold the pods of {gangs_of_set} PodGangs (every replica's and scaled PodGang's pods carry the cliques' labels): a Kueue Workload over several KAI gangs is not modelled; expected one replica and no scaling-group replicas above minAvailable"
                ),
            ));
        }
        let total = agreed(src, members, "kueue.x-k8s.io/pod-group-total-count", true)?;
        if total.as_deref().map(str::trim) != Some(pods.to_string().as_str()) {
            return Err(err_obj(
                src,
                format!(
                    "Kueue pod group {group:?} has annotation kueue.x-k8s.io/pod-group-total-count {}: expected {pods}, the PodGang's pods (Kueue waits for that many)",
                    total
                        .as_deref()
                        .map_or("missing".to_string(), |t| format!("{t:?}"))
                ),
            ));
        }
        Ok(group)
    }

    /// The workload of one PodGang: its PodCliques as pod sets, and the KAI PodGroup KAI's
    /// grove pod grouper makes of it.
    #[allow(clippy::too_many_arguments)]
    fn gang_workload(
        &mut self,
        src: &ObjectText<'_>,
        meta: &wire::ObjectMeta,
        namespace: &str,
        template: &wire::PodCliqueSetTemplate,
        cliques: &[Clique],
        groups: &[ScalingGroup],
        topology: Option<&GroveTopology>,
        set_key: &Option<String>,
        gang: Gang,
        gangs_of_set: usize,
    ) -> Result<Workload, ScenarioError> {
        let mut pod_sets = Vec::with_capacity(gang.groups.len());
        for (pclq, ci, _) in &gang.groups {
            let c = &cliques[*ci];
            pod_sets.push(self.pod_set(src, pclq.clone(), c.replicas, None, &c.template)?);
        }
        let members: Vec<&Clique> = gang.groups.iter().map(|g| &cliques[g.1]).collect();
        // Kueue has no Grove integration: a clique's pods are plain Pods, served by Kueue's
        // pod integration when they carry its queue label (or a `default` LocalQueue exists).
        let kueue_queue = agreed(src, &members, QUEUE_LABEL, false)?;
        let (queue, queue_name, _) = self.job_queue(namespace, kueue_queue.as_deref(), "Pod");
        if let QueueRef::Missing(q) = &queue {
            self.note_missing_queue(src, namespace, q);
        }
        let managed = queue != QueueRef::Unmanaged;
        // Managed plain Pods are a Workload each unless they form one of Kueue's pod groups:
        // the PodGang is one gang for KAI only if Kueue admits its pods together.
        let report_name = if managed {
            let pods: u32 = gang.groups.iter().map(|g| cliques[g.1].replicas).sum();
            self.kueue_pod_group(src, &members, &queue_name, gangs_of_set, pods)?
        } else {
            gang.name.clone()
        };
        // The PodGang's priorityClassName is the template's; a pod's own class stands in
        // when the template names none.
        let pod_pc = template.priority_class_name.as_ref().or_else(|| {
            members
                .iter()
                .find_map(|c| c.template.spec.priority_class_name.as_ref())
        });
        let (priority_class, priority, creation_blocked) = if managed {
            let wpc = agreed(src, &members, PRIORITY_CLASS_LABEL, false)?;
            self.job_priority(wpc.as_deref(), pod_pc, src)?
        } else {
            self.pod_priority(pod_pc, src)?
        };
        let scheduler_name =
            self.scheduler_name(src, members[0].template.spec.scheduler_name.as_ref())?;
        // KAI's queue: the pod grouper reads it from the PodGang's labels (Grove's own) or
        // the pod's, which are the clique's.
        let kai_queue = match agreed(src, &members, KAI_QUEUE_LABEL, false)?.as_deref() {
            None | Some("default-queue") => None,
            Some(q) => match self.index.kai_queues.get(q) {
                Some(&i) => Some(i),
                None => {
                    return Err(err_obj(
                        src,
                        format!(
                            "label {KAI_QUEUE_LABEL} {q:?} names no KAI Queue in the input: expected a scheduling.run.ai Queue of that name, or default-queue"
                        ),
                    ));
                }
            },
        };
        // The subgroups: the group configs (parents, minimum 0) first, then one per PodClique.
        let mut subgroups: Vec<KaiSubGroup> = gang
            .configs
            .iter()
            .map(|(n, g)| KaiSubGroup {
                name: n.clone(),
                parent: None,
                min_member: 0,
                constraint: topology.map(|t| t.constraint(&groups[*g].pack)),
            })
            .collect();
        let first_leaf = subgroups.len();
        for (pclq, ci, parent) in &gang.groups {
            subgroups.push(KaiSubGroup {
                name: pclq.clone(),
                parent: *parent,
                min_member: cliques[*ci].min_available,
                constraint: topology.map(|t| t.constraint(&cliques[*ci].pack)),
            });
        }
        let min_member: u32 = subgroups.iter().map(|g| g.min_member).sum();
        // Without Grove's constraint, KAI falls back to the top owner's topology annotations
        // (`parseMetadataFromTopOwner`).
        let kai_topology = match topology {
            Some(t) => Some(t.constraint(set_key)),
            None => {
                let get = |k: &str| meta.annotations.get(k).map(|v| v.value.trim().to_string());
                get("kai.scheduler/topology").map(|t| KaiTopologyConstraint {
                    topology: t,
                    required: get("kai.scheduler/topology-required-placement"),
                    preferred: get("kai.scheduler/topology-preferred-placement"),
                })
            }
        };
        let spec = GangSpec {
            min_member: Some(min_member),
            kai_topology,
            kai_subgroups: subgroups,
            pod_set_subgroup: (0..gang.groups.len())
                .map(|i| Some(first_leaf + i))
                .collect(),
            kai_queue,
            // The PodGroup KAI's grouper makes is named after the PodGang
            // (`pg-<podgang>-<uid>` upstream; kueuesim leaves out the UID, as for every
            // PodGroup it names), whatever Kueue names its Workload.
            pod_group: Some(format!("pg-{}", gang.name)),
            ..Default::default()
        };
        let (created_at, arrival) = self.times(src, meta)?;
        self.ensure_namespace(namespace);
        Ok(Workload {
            namespace: namespace.to_string(),
            name: report_name,
            kind: if managed { "Workload" } else { "PodGang" }.into(),
            owner: Some(("PodGang".into(), gang.name.clone())),
            uid: format!("{namespace}/{}", gang.name),
            job_uid: meta.uid.clone(),
            queue,
            queue_name,
            priority_class,
            priority,
            scheduler_name,
            created_at,
            arrival,
            duration: self.workload_duration(src, meta, false)?,
            pod_sets,
            active: true,
            max_execution_time: None,
            initial_admission: None,
            last_eviction: None,
            creation_blocked,
            requeue_state: None,
            suspended: false,
            gang: Arc::new(spec),
            // The PodClique controller recreates lost pods, with no limit.
            resilience: self.resilience(
                src,
                meta,
                OnPodLoss::Replace {
                    backoff_limit: None,
                    never_restarted: 0,
                },
            )?,
            serving: None,
        })
    }
}

/// The value the cliques of one PodGang give a label (an annotation with `annotation`): all
/// the same, or none of them.
fn agreed(
    src: &ObjectText<'_>,
    members: &[&Clique],
    key: &str,
    annotation: bool,
) -> Result<Option<String>, ScenarioError> {
    let values: Vec<Option<&String>> = members
        .iter()
        .map(|c| {
            let m = &c.template.metadata;
            if annotation {
                m.annotations.get(key).map(|v| &v.value)
            } else {
                m.labels.get(key)
            }
        })
        .collect();
    let what = if annotation { "annotation" } else { "label" };
    match values.iter().find(|v| **v != values[0]) {
        None => Ok(values[0].cloned()),
        Some(_) => Err(err_obj(
            src,
            format!(
                "the cliques of one PodGang give {what} {key} different values ({}): expected the same value on every clique, or on none",
                members
                    .iter()
                    .zip(&values)
                    .map(|(c, v)| format!("{}: {}", c.name, v.map_or("none", String::as_str)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The validating webhook's `validateCliqueDependencies`: startsAfter must form no cycle.
fn startup_cycle(
    src: &ObjectText<'_>,
    template: &wire::PodCliqueSetTemplate,
    names: &[String],
) -> Result<(), ScenarioError> {
    let deps: Vec<Vec<usize>> = template
        .cliques
        .iter()
        .map(|c| {
            c.spec
                .starts_after
                .iter()
                .filter_map(|d| names.iter().position(|n| *n == d.value))
                .collect()
        })
        .collect();
    // Depth-first: 0 not seen, 1 on the path, 2 done.
    fn visit(i: usize, deps: &[Vec<usize>], state: &mut [u8], path: &mut Vec<usize>) -> bool {
        match state[i] {
            1 => {
                path.push(i);
                return true;
            }
            2 => return false,
            _ => {}
        }
        state[i] = 1;
        path.push(i);
        for &d in &deps[i] {
            if visit(d, deps, state, path) {
                return true;
            }
        }
        path.pop();
        state[i] = 2;
        false
    }
    let mut state = vec![0u8; names.len()];
    for i in 0..names.len() {
        let mut path = Vec::new();
        if visit(i, &deps, &mut state, &mut path) {
            let last = *path.last().expect("a cycle");
            let from = path.iter().position(|&p| p == last).unwrap_or(0);
            let cycle: Vec<&str> = path[from..].iter().map(|&p| names[p].as_str()).collect();
            let at = template.cliques[path[from]].name.as_ref().expect("named");
            return Err(err_at(
                src,
                at,
                format!(
                    "clique must not have circular dependencies (startsAfter: {})",
                    cycle.join(" → ")
                ),
            ));
        }
    }
    Ok(())
}

/// The PodGangs of a PodCliqueSet, as the operator's `computeExpectedPodGangs` lists them:
/// per replica `r` the base PodGang `<pcs>-<r>` (its standalone PodCliques `<pcs>-<r>-<clique>`
/// and the scaling groups' replicas below their `minAvailable`, PodCliques
/// `<pcs>-<r>-<group>-<j>-<clique>`, in the cliques' order), then per scaling group its
/// replicas from `minAvailable` on, each its own PodGang `<pcs>-<r>-<group>-<k>` (k from 0).
/// Each scaling-group replica with a topology constraint is a `topologyConstraintGroupConfigs`
/// entry named `<pcs>-<r>-<group>-<j>` over its PodCliques.
fn expand(
    pcs: &str,
    replicas: u32,
    cliques: &[Clique],
    groups: &[ScalingGroup],
    group_of: &[Option<usize>],
) -> Vec<Gang> {
    let mut out = Vec::new();
    for r in 0..replicas {
        let mut base = Gang {
            name: format!("{pcs}-{r}"),
            groups: Vec::new(),
            configs: Vec::new(),
        };
        // (group, replica) → its config's index in this gang.
        let mut config_of: BTreeMap<(usize, u32), usize> = BTreeMap::new();
        for (ci, c) in cliques.iter().enumerate() {
            match group_of[ci] {
                None => base
                    .groups
                    .push((format!("{pcs}-{r}-{}", c.name), ci, None)),
                Some(g) => {
                    let sg = &groups[g];
                    for j in 0..sg.min_available {
                        let fqn = format!("{pcs}-{r}-{}", sg.name);
                        let parent = sg.pack.as_ref().map(|_| {
                            *config_of.entry((g, j)).or_insert_with(|| {
                                base.configs.push((format!("{fqn}-{j}"), g));
                                base.configs.len() - 1
                            })
                        });
                        base.groups
                            .push((format!("{fqn}-{j}-{}", c.name), ci, parent));
                    }
                }
            }
        }
        out.push(base);
        for (g, sg) in groups.iter().enumerate() {
            let fqn = format!("{pcs}-{r}-{}", sg.name);
            for (k, j) in (sg.min_available..sg.replicas).enumerate() {
                let mut gang = Gang {
                    name: format!("{fqn}-{k}"),
                    groups: Vec::new(),
                    configs: Vec::new(),
                };
                if sg.pack.is_some() {
                    gang.configs.push((format!("{fqn}-{j}"), g));
                }
                for &ci in &sg.cliques {
                    let parent = sg.pack.as_ref().map(|_| 0);
                    gang.groups
                        .push((format!("{fqn}-{j}-{}", cliques[ci].name), ci, parent));
                }
                out.push(gang);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clique(name: &str, replicas: u32, min: u32) -> Clique {
        Clique {
            name: name.into(),
            template: wire::PodTemplateSpec::default(),
            replicas,
            min_available: min,
            pack: None,
        }
    }

    /// Grove's names: the base PodGang holds the standalone cliques and the scaling group's
    /// replicas below minAvailable; the replicas above get a PodGang each, numbered from 0
    /// (`GeneratePodGangNameForPodCliqueOwnedByPCSG`).
    #[test]
    fn podgangs_are_named_and_filled_as_the_operator_does() {
        let cliques = vec![
            clique("frontend", 1, 1),
            clique("prefill", 2, 2),
            clique("decode", 2, 1),
        ];
        let groups = vec![ScalingGroup {
            name: "workers".into(),
            cliques: vec![1, 2],
            replicas: 3,
            min_available: 1,
            pack: Some("rack".into()),
        }];
        let group_of = vec![None, Some(0), Some(0)];
        let gangs = expand("dyn", 1, &cliques, &groups, &group_of);
        let names: Vec<&str> = gangs.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["dyn-0", "dyn-0-workers-0", "dyn-0-workers-1"]);
        let base: Vec<&str> = gangs[0].groups.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(
            base,
            [
                "dyn-0-frontend",
                "dyn-0-workers-0-prefill",
                "dyn-0-workers-0-decode"
            ]
        );
        assert_eq!(gangs[0].configs, vec![("dyn-0-workers-0".to_string(), 0)]);
        assert_eq!(gangs[0].groups[1].2, Some(0));
        assert_eq!(gangs[0].groups[0].2, None);
        // The first scaled PodGang holds scaling-group replica 1 (minAvailable 1).
        let scaled: Vec<&str> = gangs[1].groups.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(
            scaled,
            ["dyn-0-workers-1-prefill", "dyn-0-workers-1-decode"]
        );
        assert_eq!(gangs[2].configs[0].0, "dyn-0-workers-2");
    }
}
