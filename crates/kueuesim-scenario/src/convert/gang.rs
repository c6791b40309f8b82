//! Gang scheduler objects and what a workload's scheduler makes of it: schedulerName
//! resolution, the `GangSpec` (Volcano and KAI PodGroups, their subgroups and topology
//! constraints, bound nodes) and KAI Queues.

use serde_saphyr::Spanned;

use kueuesim_model::{
    GangSpec, KaiQueue, KaiQueueResource, KaiTopologyConstraint, MinResources, NetworkTopology,
    NodeId, PodSet, ResourceList, SchedulerKind, TierRef, VolcanoSubGroup,
};

use super::core::{Builder, err_at, err_obj, labels, name_of, namespace_of, one_of, selector};
use super::kai_pod_group::preemptibility;
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

/// A PodGroup's (or subgroup's) `minMember` as a pod count.
pub(super) fn min_member(src: &ObjectText<'_>, m: &Spanned<i64>) -> Result<u32, ScenarioError> {
    let max = kueuesim_model::limits::MAX_PODS_PER_WORKLOAD;
    if !(0..=max).contains(&m.value) {
        return Err(err_at(
            src,
            m,
            format!("minMember {}: expected an integer from 0 to {max}", m.value),
        ));
    }
    Ok(m.value as u32)
}

impl Builder<'_> {
    /// KAI Queues: GPU, CPU and memory quota (deserved), over-quota weight and limit (-1:
    /// unlimited), priority and parent.
    pub(super) fn build_kai_queues(&mut self) -> Result<(), ScenarioError> {
        let queues = std::mem::take(&mut self.kai_queues);
        let names: Vec<String> = queues
            .iter()
            .map(|q| name_of(q.src, &q.obj.metadata).map(str::to_string))
            .collect::<Result<_, _>>()?;
        for (q, name) in queues.iter().zip(&names) {
            self.remember(q.src, "", name)?;
            self.index
                .kai_queues
                .insert(name.clone(), self.index.kai_queues.len());
        }
        for (q, name) in queues.iter().zip(&names) {
            let src = q.src;
            let gpu = q.obj.spec.resources.gpu.as_ref();
            let max = kueuesim_model::limits::MAX_QUANTITY as f64;
            let num = |v: Option<&Spanned<f64>>, default: f64| -> Result<f64, ScenarioError> {
                match v {
                    None => Ok(default),
                    // Bounded like every amount (`limits::MAX_QUANTITY`), so that the
                    // fair-share sums over the queues stay inside i64.
                    Some(x) if x.value >= -1.0 && x.value <= max => Ok(x.value),
                    Some(x) => Err(err_at(
                        src,
                        x,
                        format!(
                            "{}: expected an amount from 0 to {max}, or -1 (unlimited)",
                            x.value
                        ),
                    )),
                }
            };
            let quota = num(gpu.and_then(|g| g.quota.as_ref()), 0.0)?;
            let weight = num(gpu.and_then(|g| g.over_quota_weight.as_ref()), 1.0)?;
            // The over-quota split divides by whole weights: say so rather than drop a
            // fraction unseen.
            if let Some(w) = gpu.and_then(|g| g.over_quota_weight.as_ref())
                && w.value.fract() != 0.0
                && w.value > 0.0
            {
                self.warnings.push(format!(
                    "{}: KAI Queue {name}'s gpu overQuotaWeight {} is taken as {} (kueuesim divides the over-quota GPUs by whole weights)",
                    src.kind_pos,
                    w.value,
                    w.value.floor()
                ));
            }
            let limit = num(gpu.and_then(|g| g.limit.as_ref()), -1.0)?;
            // CPU (millicores) and memory (megabytes of 10^6 bytes, kept in bytes), as the
            // proportion plugin reads them (`createQueueResourceAttrs`): a section the Queue
            // leaves out bounds nothing (unlimited quota and limit, as KAI's quick-start queues
            // set them); within a section the defaults are those of the GPU section.
            let other = |r: Option<&wire::KaiQueueResource>,
                         scale: f64|
             -> Result<KaiQueueResource, ScenarioError> {
                let Some(r) = r else {
                    return Ok(KaiQueueResource::UNLIMITED);
                };
                // `as` saturates: a quota of more bytes than i64 holds is as good as unlimited.
                let amount = |v: f64| (v >= 0.0).then(|| (v * scale).floor() as i64);
                Ok(KaiQueueResource {
                    quota: amount(num(r.quota.as_ref(), 0.0)?),
                    over_quota_weight: num(r.over_quota_weight.as_ref(), 1.0)?.max(0.0).floor()
                        as i64,
                    limit: amount(num(r.limit.as_ref(), -1.0)?),
                })
            };
            let resources = &q.obj.spec.resources;
            let cpu = other(resources.cpu.as_ref(), 1.0)?;
            let memory = other(resources.memory.as_ref(), 1e6)?;
            let parent = match &q.obj.spec.parent_queue {
                None => None,
                Some(p) => match self.index.kai_queues.get(&p.value) {
                    Some(&i) => Some(i),
                    None => {
                        return Err(err_at(
                            src,
                            p,
                            format!(
                                "parentQueue {:?} is not a Queue in the input: expected a KAI Queue name",
                                p.value
                            ),
                        ));
                    }
                },
            };
            self.world.kai_queues.push(KaiQueue {
                name: name.clone(),
                parent,
                // In milli-GPUs, as KAI's actions count GPU shares: a Queue may deserve a
                // fraction of a GPU (`deserved: 0.5`), which upstream keeps as a float.
                gpu_quota: (quota >= 0.0).then_some(milli_gpus(quota)),
                gpu_over_quota_weight: weight.max(0.0).floor() as i64,
                gpu_limit: (limit >= 0.0).then_some(milli_gpus(limit)),
                priority: q.obj.spec.priority.unwrap_or(100),
                preempt_min_runtime: q
                    .obj
                    .spec
                    .preempt_min_runtime
                    .as_ref()
                    .map(|d| super::core::duration(src, d))
                    .transpose()?,
                reclaim_min_runtime: q
                    .obj
                    .spec
                    .reclaim_min_runtime
                    .as_ref()
                    .map(|d| super::core::duration(src, d))
                    .transpose()?,
                cpu,
                memory,
            });
        }
        // KAI's queues form a tree: a parent chain that comes back to a queue (itself
        // included) is refused at the first queue of the cycle met, in linear time (each
        // queue is walked once: 0 not seen, 1 on the current walk, 2 known to reach a root).
        let kq = &self.world.kai_queues;
        let mut state = vec![0u8; kq.len()];
        for start in 0..kq.len() {
            let mut path: Vec<usize> = Vec::new();
            let mut cur = Some(start);
            while let Some(c) = cur {
                match state[c] {
                    2 => break,
                    1 => {
                        let q = &queues[c];
                        let at = q.obj.spec.parent_queue.as_ref().expect("on a cycle");
                        let first = path.iter().position(|&p| p == c).unwrap_or(0);
                        let mut cycle: Vec<&str> =
                            path[first..].iter().map(|&i| names[i].as_str()).collect();
                        cycle.push(&names[c]);
                        return Err(err_at(
                            q.src,
                            at,
                            format!(
                                "parentQueue {:?} makes a cycle ({}): expected the Queues to form a tree",
                                at.value,
                                cycle.join(" → ")
                            ),
                        ));
                    }
                    _ => {
                        state[c] = 1;
                        path.push(c);
                        cur = kq[c].parent;
                    }
                }
            }
            for p in path {
                state[p] = 2;
            }
        }
        Ok(())
    }

    pub(super) fn scheduler_name(
        &self,
        src: &ObjectText<'_>,
        s: Option<&Spanned<String>>,
    ) -> Result<String, ScenarioError> {
        match s {
            None => Ok("default-scheduler".to_string()),
            Some(s) if self.world.config.scheduler(&s.value).is_some() => Ok(s.value.clone()),
            Some(s) => {
                let known: Vec<&str> = self
                    .world
                    .config
                    .schedulers
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect();
                Err(err_at(
                    src,
                    s,
                    format!(
                        "schedulerName {:?} is run by no scheduler: expected one of {} (map more names in Simulation spec.schedulers)",
                        s.value,
                        known.join(", ")
                    ),
                ))
            }
        }
    }

    /// What the workload's gang scheduler makes of it (Volcano's PodGroup `minMember`/`networkTopology`, KAI's PodGroup and its `pod-grouper`):
    /// - Volcano: one PodGroup per owner, `minMember` from the owner's
    ///   `scheduling.volcano.sh/group-min-member` (default 1 for a Job, whose pods Volcano's
    ///   PodGroup controller groups; a bare Workload is one gang of all its pods), the
    ///   network topology from the pod template's `volcano.sh/network-topology-mode` and
    ///   `volcano.sh/network-topology-highest-tier`;
    /// - KAI: a batch Job's pods get one PodGroup each (KAI's job grouper); a bare Workload is
    ///   one gang; the topology constraint from the top owner's `kai.scheduler/topology`,
    ///   `…-required-placement`, `…-preferred-placement`;
    /// - `kueuesim.io/bound-nodes`: pods already running, in pod order.
    pub(super) fn gang_spec(
        &mut self,
        src: &ObjectText<'_>,
        scheduler_name: &str,
        meta: &wire::ObjectMeta,
        templates: &[&wire::ObjectMeta],
        pod_sets: &[PodSet],
        is_job: bool,
    ) -> Result<GangSpec, ScenarioError> {
        let template = templates[0];
        let pod_set_names: Vec<String> = pod_sets.iter().map(|p| p.name.clone()).collect();
        let mut gang = GangSpec::default();
        match self.world.config.scheduler(scheduler_name) {
            Some(SchedulerKind::Volcano) => {
                // Upstream falls back to 1 on a value it cannot parse; here that is an error,
                // so a typo does not silently break a gang.
                gang.min_member = match meta.annotations.get("scheduling.volcano.sh/group-min-member") {
                    Some(v) => Some(v.value.trim().parse::<u32>().map_err(|_| {
                        err_at(src, v, format!("scheduling.volcano.sh/group-min-member {:?}: expected a non-negative integer", v.value))
                    })?),
                    None if is_job => Some(1),
                    None => None,
                };
                let annotations = if is_job {
                    &template.annotations
                } else {
                    &meta.annotations
                };
                let mode = annotations.get("volcano.sh/network-topology-mode");
                let tier = annotations.get("volcano.sh/network-topology-highest-tier");
                // PodGroup spec.networkTopology.highestTierName has no pod annotation upstream;
                // this one stands in for it until Volcano PodGroups load.
                let tier_name = annotations.get("kueuesim.io/network-topology-highest-tier-name");
                if mode.is_some() || tier.is_some() || tier_name.is_some() {
                    // Invalid modes fall back to hard, as the PodGroup controller does.
                    let hard = mode.is_none_or(|m| m.value.trim() != "soft");
                    let highest_tier = match tier {
                        None => tier_name.map(|n| TierRef::Name(n.value.trim().to_string())),
                        Some(t) => Some(TierRef::Number(t.value.trim().parse::<i32>().map_err(|_| {
                            err_at(src, t, format!("volcano.sh/network-topology-highest-tier {:?}: expected an integer tier", t.value))
                        })?)),
                    };
                    gang.network_topology = Some(NetworkTopology { hard, highest_tier });
                }
                // The queue its PodGroup controller copies from the owner's annotation
                // (`scheduling.volcano.sh/queue-name`), else Volcano's `default`; an input
                // PodGroup's `spec.queue` overrides it below.
                let queue = meta.annotations.get("scheduling.volcano.sh/queue-name");
                gang.volcano_queue = Some(self.volcano_queue_named(
                    src,
                    queue,
                    queue.map_or("default", |q| q.value.as_str()),
                )?);
                if let Some(pg) = meta.annotations.get("scheduling.k8s.io/group-name") {
                    self.volcano_pod_group(src, pg, meta, templates, &pod_set_names, &mut gang)?;
                }
            }
            Some(SchedulerKind::Kai) => {
                gang.pod_group_per_pod = is_job;
                // kai.scheduler/queue; KAI's implicit default-queue otherwise.
                gang.kai_queue = match meta.labels.get("kai.scheduler/queue").map(String::as_str) {
                    None | Some("default-queue") => None,
                    Some(q) => match self.index.kai_queues.get(q) {
                        Some(&i) => Some(i),
                        None => {
                            return Err(super::names::at_label_value(
                                src,
                                &meta.labels,
                                "kai.scheduler/queue",
                                format!(
                                    "label kai.scheduler/queue {q:?} names no KAI Queue in the input: expected a scheduling.run.ai Queue of that name, or default-queue"
                                ),
                            ));
                        }
                    },
                };
                // KAI's pod grouper (`calcPodGroupPreemptibilityWithDefaults`): the owner's
                // `kai.scheduler/preemptibility` label, else the pod's.
                let label = "kai.scheduler/preemptibility";
                let written = match meta.labels.get(label) {
                    Some(v) => Some((v, &meta.labels)),
                    None => template.labels.get(label).map(|v| (v, &template.labels)),
                };
                if let Some((v, labels)) = written {
                    let Some(p) = preemptibility(v) else {
                        return Err(super::names::at_label_value(
                            src,
                            labels,
                            label,
                            format!("label {label} {v:?}: expected preemptible or non-preemptible"),
                        ));
                    };
                    gang.kai_preemptible = Some(p);
                }
                // `LastStartTimestamp` of a job running at the start: upstream reads it from
                // the PodGroup's annotation; the owner's stands in for the PodGroup kueuesim
                // creates (an input PodGroup's own annotation overrides it below).
                gang.bound_started = self.kai_last_start(src, &meta.annotations)?;
                if let Some(pg) = meta.annotations.get("pod-group-name") {
                    self.kai_pod_group(src, pg, meta, templates, &mut gang)?;
                }
                let get = |k: &str| meta.annotations.get(k).map(|v| v.value.trim().to_string());
                let required = get("kai.scheduler/topology-required-placement");
                let preferred = get("kai.scheduler/topology-preferred-placement");
                match (
                    get("kai.scheduler/topology"),
                    required.is_some() || preferred.is_some(),
                ) {
                    (Some(topology), _) => {
                        gang.kai_topology = Some(KaiTopologyConstraint {
                            topology,
                            required,
                            preferred,
                        });
                    }
                    (None, true) => {
                        return Err(err_obj(
                            src,
                            "kai.scheduler/topology-required-placement or -preferred-placement without kai.scheduler/topology: expected the Topology's name in kai.scheduler/topology",
                        ));
                    }
                    (None, false) => {}
                }
            }
            _ => {}
        }
        if let Some(b) = meta.annotations.get("kueuesim.io/bound-nodes") {
            // In pod order: the first pods of the first pod set, then of the next.
            let mut sets = pod_sets.iter().map(|p| p.count as usize);
            let mut room = 0;
            for name in b.value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let Some(&i) = self.index.nodes.get(name) else {
                    return Err(err_at(
                        src,
                        b,
                        format!(
                            "kueuesim.io/bound-nodes names node {name:?}, which does not exist: expected node names"
                        ),
                    ));
                };
                while room == 0 {
                    let Some(n) = sets.next() else {
                        return Err(err_at(
                            src,
                            b,
                            format!(
                                "kueuesim.io/bound-nodes names more nodes than the workload has pods ({}): expected one node per running pod",
                                pod_sets.iter().map(|p| p.count as usize).sum::<usize>()
                            ),
                        ));
                    };
                    gang.bound_nodes.push(Vec::new());
                    room = n;
                }
                gang.bound_nodes
                    .last_mut()
                    .expect("pushed above")
                    .push(NodeId::from_index(i));
                room -= 1;
            }
        }
        Ok(gang)
    }

    /// The Volcano PodGroup a workload names (`scheduling.k8s.io/group-name`): its minMember,
    /// networkTopology and `subGroupPolicy` (pod sets matching a policy's labelSelector,
    /// grouped by equal values of its matchLabelKeys).
    fn volcano_pod_group(
        &mut self,
        src: &ObjectText<'_>,
        pg_name: &wire::S,
        meta: &wire::ObjectMeta,
        templates: &[&wire::ObjectMeta],
        pod_set_names: &[String],
        gang: &mut GangSpec,
    ) -> Result<(), ScenarioError> {
        let ns = namespace_of(meta);
        self.pod_groups_named
            .insert((false, ns.clone(), pg_name.value.clone()));
        let Some(pg) = self
            .volcano_pod_groups
            .get(&(ns.clone(), pg_name.value.clone()))
        else {
            return Err(err_at(
                src,
                pg_name,
                format!(
                    "scheduling.k8s.io/group-name {:?}: no Volcano PodGroup {ns}/{} in the input: expected a scheduling.volcano.sh PodGroup of that name",
                    pg_name.value, pg_name.value
                ),
            ));
        };
        let psrc = pg.src;
        let spec = &pg.obj.spec;
        gang.pod_group = Some(pg_name.value.clone());
        if let Some(m) = &spec.min_member {
            gang.min_member = Some(min_member(psrc, m)?);
        }
        // Resolved once the PodGroup is no longer borrowed (below).
        let queue = spec.queue.clone();
        // minResources as written; a PodGroup without it is let in by enqueue at once.
        gang.volcano_min_resources = match &spec.min_resources {
            None => MinResources::Unset,
            Some(map) => {
                super::names::resource_names(psrc, map)?;
                let mut pairs = Vec::new();
                for (r, q) in map {
                    let amount = super::core::quantity(psrc, r, q)?;
                    pairs.push((self.world.resources.intern(r), amount));
                }
                MinResources::Given(ResourceList::from_pairs(pairs))
            }
        };
        let topology =
            |nt: &wire::VolcanoNetworkTopology| -> Result<NetworkTopology, ScenarioError> {
                let hard = match &nt.mode {
                    None => true,
                    Some(m) => one_of(
                        psrc,
                        m,
                        "networkTopology mode",
                        &[("hard", true), ("soft", false)],
                    )?,
                };
                let highest_tier = match (&nt.highest_tier_allowed, &nt.highest_tier_name) {
                    (Some(_), Some(_)) => {
                        return Err(err_obj(
                            psrc,
                            "networkTopology has both highestTierAllowed and highestTierName: expected one of them",
                        ));
                    }
                    (Some(t), None) => {
                        Some(TierRef::Number(i32::try_from(t.value).map_err(|_| {
                            err_at(psrc, t, "highestTierAllowed: expected a tier number")
                        })?))
                    }
                    (None, Some(n)) => Some(TierRef::Name(n.clone())),
                    (None, None) => None,
                };
                Ok(NetworkTopology { hard, highest_tier })
            };
        if let Some(nt) = &spec.network_topology {
            gang.network_topology = Some(topology(nt)?);
        }
        // minTaskMember: task names are the pod set names.
        for (task, m) in &spec.min_task_member {
            let Some(ps) = pod_set_names.iter().position(|n| n == task) else {
                return Err(err_at(
                    psrc,
                    m,
                    format!(
                        "minTaskMember names task {task:?}, which the workload does not have: expected one of {pod_set_names:?}"
                    ),
                ));
            };
            let max = kueuesim_model::limits::MAX_PODS_PER_WORKLOAD;
            if !(0..=max).contains(&m.value) {
                return Err(err_at(
                    psrc,
                    m,
                    format!(
                        "minTaskMember {}: expected an integer from 0 to {max}",
                        m.value
                    ),
                ));
            }
            gang.min_task_member.push((ps, m.value as u32));
        }
        // Each pod set joins the subjob of the first policy that matches it
        // (`getOrCreateSubJob`): its labelSelector matches and every matchLabelKeys label is
        // set and not empty (`getSubJobMatchValues`; a policy without matchLabelKeys matches
        // nothing); pods of no policy are in the job's default subjob.
        let mut policies = Vec::with_capacity(spec.sub_group_policy.len());
        for policy in &spec.sub_group_policy {
            let sel = match &policy.label_selector {
                Some(l) => Some(selector(psrc, l)?),
                None => None,
            };
            let nt = match &policy.network_topology {
                Some(nt) => Some(topology(nt)?),
                None => None,
            };
            // `subGroupSize` (default 1) and `minSubGroups` (default 0: no minimum).
            let bounded = |v: &Option<Spanned<i64>>,
                           what: &str,
                           default: u32|
             -> Result<u32, ScenarioError> {
                let Some(v) = v else { return Ok(default) };
                let max = kueuesim_model::limits::MAX_PODS_PER_WORKLOAD;
                if !(0..=max).contains(&v.value) {
                    return Err(err_at(
                        psrc,
                        v,
                        format!("{what} {}: expected an integer from 0 to {max}", v.value),
                    ));
                }
                Ok(v.value as u32)
            };
            let size = bounded(&policy.sub_group_size, "subGroupSize", 1)?;
            let min = bounded(&policy.min_sub_groups, "minSubGroups", 0)?;
            gang.volcano_min_sub_groups.push(min);
            policies.push((sel, nt, size));
        }
        // (policy, matchLabelKeys values) → pod sets, in the order first met per policy.
        let mut groups: Vec<(usize, Vec<String>, Vec<usize>)> = Vec::new();
        for (ps, t) in templates.iter().enumerate() {
            let l = labels(&t.labels);
            let joined = spec
                .sub_group_policy
                .iter()
                .zip(&policies)
                .enumerate()
                .find_map(|(pi, (policy, (sel, _, _)))| {
                    if sel.as_ref().is_some_and(|s| !s.matches(&l)) {
                        return None;
                    }
                    let values: Vec<String> = policy
                        .match_label_keys
                        .iter()
                        .map(|k| l.get(k).filter(|v| !v.is_empty()).map(str::to_string))
                        .collect::<Option<_>>()?;
                    (!values.is_empty()).then_some((pi, values))
                });
            let Some((pi, values)) = joined else { continue };
            match groups.iter_mut().find(|g| g.0 == pi && g.1 == values) {
                Some(g) => g.2.push(ps),
                None => groups.push((pi, values, vec![ps])),
            }
        }
        // The allocate action takes subjobs in `SubJobOrderFn` order: with equal priorities,
        // by `MatchIndex` (the first matched label value read as an integer, else 0), then by
        // the subjob's UID `<job>/<policy>-<values joined by ->`.
        let policy_name = |pi: usize| {
            spec.sub_group_policy[pi]
                .name
                .as_ref()
                .map_or(String::new(), |n| n.value.clone())
        };
        let order_key = |g: &(usize, Vec<String>, Vec<usize>)| {
            let index = g.1[0].parse::<i64>().unwrap_or(0);
            (index, format!("{}-{}", policy_name(g.0), g.1.join("-")))
        };
        groups.sort_by_cached_key(order_key);
        for (pi, values, pod_sets) in groups {
            gang.volcano_subgroups.push(VolcanoSubGroup {
                name: std::iter::once(policy_name(pi))
                    .chain(values)
                    .collect::<Vec<_>>()
                    .join("/"),
                pod_sets,
                network_topology: policies[pi].1.clone(),
                policy: pi,
                min_available: policies[pi].2,
            });
        }
        if let Some(q) = &queue {
            gang.volcano_queue = Some(self.volcano_queue_named(psrc, Some(q), &q.value)?);
        }
        Ok(())
    }

    /// A PodGroup that no pod and no job names has nothing to schedule: a warning, so that
    /// a dump that lost its pods (or a misspelt group name) is not silently a no-op.
    pub(super) fn warn_unnamed_pod_groups(&mut self) {
        let unnamed: Vec<String> = self
            .volcano_pod_groups
            .iter()
            .map(|((ns, n), p)| (false, ns, n, p.src))
            .chain(
                self.kai_pod_groups
                    .iter()
                    .map(|((ns, n), p)| (true, ns, n, p.src)),
            )
            .filter(|(kai, ns, n, _)| {
                !self
                    .pod_groups_named
                    .contains(&(*kai, (*ns).clone(), (*n).clone()))
            })
            .map(|(kai, ns, n, src)| {
                let (what, key) = if kai {
                    ("KAI", "pod-group-name")
                } else {
                    ("Volcano", "scheduling.k8s.io/group-name")
                };
                format!(
                    "{}: {what} PodGroup {ns}/{n} has no pods in the input (no pod or job names it with {key}): nothing to schedule",
                    src.kind_pos
                )
            })
            .collect();
        self.warnings.extend(unnamed);
    }
}

/// `gpus` GPUs in milli-GPUs, to the nearest thousandth (0.29 is 289.99… as a float).
fn milli_gpus(gpus: f64) -> i64 {
    (gpus * 1000.0).round() as i64
}
