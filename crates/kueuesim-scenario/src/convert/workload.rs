//! Kueue `Workload` objects in the input: pod sets as written, queue and priority as the
//! Workload names them, and `status.admission` for a workload already holding quota.

use std::sync::Arc;

use kueuesim_model::names::NameRule;
use kueuesim_model::time::{SimDuration, SimTime, parse_rfc3339};
use kueuesim_model::topology::{DomainId, TopologySource};
use kueuesim_model::{
    ClusterQueueId, InitialAdmission, PodSet, PodSetAdmission, QueueRef, TopologyRequest, Workload,
};

use super::core::{
    Builder, PRIORITY_CLASS_LABEL, QUEUE_LABEL, count_in, err_at, err_obj, name_of, namespace_of,
    pos_of, topology_slice,
};
use super::names;
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

impl Builder<'_> {
    /// Kueue Workload objects, each as written (a Workload is never defaulted to a queue).
    pub(super) fn build_workload_objects(
        &mut self,
        out: &mut Vec<(usize, Workload)>,
    ) -> Result<(), ScenarioError> {
        let workloads = std::mem::take(&mut self.workloads);
        for p in &workloads {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let namespace = namespace_of(&p.obj.metadata);
            let meta = &p.obj.metadata;
            let spec = &p.obj.spec;
            self.remember(src, &namespace, &name)?;
            // Kueue's CRD patterns: LocalQueueName and the priority class a DNS-1123
            // subdomain, a PodSetReference a DNS-1123 label.
            names::optional_reference(src, spec.queue_name.as_ref(), "spec.queueName")?;
            names::optional_reference(
                src,
                spec.priority_class_name.as_ref(),
                "spec.priorityClassName",
            )?;
            names::optional_reference(
                src,
                spec.priority_class_ref
                    .as_ref()
                    .and_then(|r| r.name.as_ref()),
                "spec.priorityClassRef.name",
            )?;
            for ps in &spec.pod_sets {
                names::name(src, &ps.name, "pod set name", NameRule::Dns1123Label)?;
            }
            if spec.pod_sets.is_empty() {
                return Err(err_obj(
                    src,
                    format!(
                        "Workload {namespace}/{name} has no spec.podSets: expected 1 to 18 pod sets"
                    ),
                ));
            }
            if spec.pod_sets.len() > 18 {
                return Err(err_obj(
                    src,
                    format!(
                        "Workload {namespace}/{name} has {} pod sets: expected 1 to 18",
                        spec.pod_sets.len()
                    ),
                ));
            }
            let mut pod_sets: Vec<PodSet> = Vec::new();
            for ps in &spec.pod_sets {
                if pod_sets.iter().any(|p| p.name == ps.name.value) {
                    return Err(err_at(
                        src,
                        &ps.name,
                        format!(
                            "pod set name {:?} is used twice: expected unique pod set names",
                            ps.name.value
                        ),
                    ));
                }
                count_in(
                    src,
                    &ps.count,
                    "count",
                    0,
                    kueuesim_model::limits::MAX_PODS_PER_WORKLOAD,
                )?;
                // The CRD's `+kubebuilder:validation:Minimum=1` on minCount, and the
                // webhook's "at most one podSet can use minCount".
                let min_count = match &ps.min_count {
                    None => None,
                    Some(m) if m.value >= 1 && m.value <= ps.count.value => Some(m.value as u32),
                    Some(m) => {
                        return Err(err_at(
                            src,
                            m,
                            format!(
                                "minCount {} is out of range: expected 1 ≤ minCount ≤ count",
                                m.value
                            ),
                        ));
                    }
                };
                if let Some(m) = &ps.min_count
                    && spec
                        .pod_sets
                        .iter()
                        .filter(|p| p.min_count.is_some())
                        .nth(1)
                        .is_some_and(|p| std::ptr::eq(p, ps))
                {
                    return Err(err_at(
                        src,
                        m,
                        "a second pod set with minCount: expected at most one podSet to use minCount (partial admission)".to_string(),
                    ));
                }
                let mut pod_set = self.pod_set_of(
                    src,
                    ps.name.value.clone(),
                    ps.count.value as u32,
                    min_count,
                    &ps.template,
                    false,
                )?;
                let tr = ps.topology_request.as_ref();
                pod_set.topology_slice = topology_slice(
                    src,
                    tr.and_then(|tr| tr.pod_set_slice_required_topology.as_ref()),
                    tr.and_then(|tr| tr.pod_set_slice_size.as_ref())
                        .map(|s| (pos_of(src, s), Some(s.value), s.value.to_string())),
                    ("podSetSliceRequiredTopology", "podSetSliceSize"),
                )?;
                pod_set.topology_request = self.workload_topology_request(src, ps, &pod_set);
                pod_sets.push(pod_set);
            }
            // Kueue's CRD allows count 0 per pod set, but a Workload whose pod sets all
            // count 0 runs nothing: almost surely a mistake in the input (docs/semantics.md).
            if let Some(first) = spec.pod_sets.first()
                && spec.pod_sets.iter().all(|p| p.count.value == 0)
            {
                return Err(err_at(
                    src,
                    &first.count,
                    "every pod set has count 0, so the Workload runs no pods: expected a count ≥ 1"
                        .to_string(),
                ));
            }
            let pods: i64 = spec.pod_sets.iter().map(|p| p.count.value).sum();
            if pods > kueuesim_model::limits::MAX_PODS_PER_WORKLOAD {
                return Err(err_obj(
                    src,
                    format!(
                        "the Workload has {pods} pods in all: expected at most {} pods in a workload",
                        kueuesim_model::limits::MAX_PODS_PER_WORKLOAD
                    ),
                ));
            }
            // spec.queueName, or the queue-name label; a Workload is never defaulted.
            let qn = spec
                .queue_name
                .as_ref()
                .map(|q| q.value.clone())
                .or_else(|| meta.labels.get(QUEUE_LABEL).cloned())
                .unwrap_or_default();
            let queue = match self.lq_id(&namespace, &qn) {
                Some(id) => QueueRef::Local(id),
                None => {
                    if !qn.is_empty() {
                        self.note_missing_queue(src, &namespace, &qn);
                    }
                    QueueRef::Missing(qn.clone())
                }
            };
            // spec.priority wins (a pre-built Workload carries it); else its class reference.
            let class = spec
                .priority_class_ref
                .as_ref()
                .and_then(|r| {
                    r.name
                        .as_ref()
                        .map(|n| (n.value.clone(), r.kind.as_deref() == Some("PriorityClass")))
                })
                .or_else(|| {
                    spec.priority_class_name.as_ref().map(|n| {
                        (
                            n.value.clone(),
                            spec.priority_class_source.as_deref()
                                == Some("scheduling.k8s.io/priorityclass"),
                        )
                    })
                })
                .or_else(|| {
                    meta.labels
                        .get(PRIORITY_CLASS_LABEL)
                        .map(|n| (n.clone(), false))
                });
            let class_value = class
                .as_ref()
                .and_then(|(n, pod)| if *pod { self.pod_pc(n) } else { self.wpc(n) })
                .map(|p| p.value);
            let priority = spec.priority.or(class_value).unwrap_or(0);
            let uid = meta
                .uid
                .clone()
                .unwrap_or_else(|| format!("{namespace}/{name}"));
            let (created_at, arrival) = self.times(src, meta)?;
            let initial_admission = match &p.obj.status.admission {
                None => None,
                Some(a) => Some(self.initial_admission(
                    src,
                    a,
                    &p.obj.status.conditions,
                    &spec.pod_sets,
                )?),
            };
            // A workload holding quota in the input is running at time 0, whatever its
            // creation time (a `kubectl get` snapshot continued from its start time).
            let arrival = if initial_admission.is_some() {
                SimTime::ZERO
            } else {
                arrival
            };
            // An Evicted=True condition without an admission: requeued before the start.
            let last_eviction = match p
                .obj
                .status
                .conditions
                .iter()
                .find(|c| c.kind == "Evicted" && c.status == "True")
            {
                Some(c) if initial_admission.is_none() => match &c.last_transition_time {
                    Some(ts) => {
                        let ms = parse_rfc3339(ts.value.trim())
                            .map_err(|e| err_at(src, ts, e.to_string()))?;
                        Some((
                            c.reason.clone(),
                            SimTime::from_millis(ms - self.world.config.start_unix_ms),
                        ))
                    }
                    None => None,
                },
                _ => None,
            };
            let requeue_state =
                self.requeue_state(src, &p.obj.status, initial_admission.is_some())?;
            let scheduler_name =
                self.scheduler_name(src, spec.pod_sets[0].template.spec.scheduler_name.as_ref())?;
            let templates: Vec<&wire::ObjectMeta> =
                spec.pod_sets.iter().map(|p| &p.template.metadata).collect();
            let gang = self.gang_spec(src, &scheduler_name, meta, &templates, &pod_sets, false)?;
            self.ensure_namespace(&namespace);
            out.push((
                src.order,
                Workload {
                    namespace,
                    name,
                    kind: "Workload".into(),
                    // The job it stands for (`ownerReferences`), whose running pods are its.
                    owner: meta
                        .controller()
                        .map(|(k, n)| (k.to_string(), n.to_string())),
                    uid,
                    queue,
                    queue_name: Some(qn),
                    priority_class: class.map(|(n, _)| n),
                    priority,
                    scheduler_name,
                    created_at,
                    arrival,
                    duration: self.workload_duration(src, meta, initial_admission.is_some())?,
                    pod_sets,
                    active: spec.active.unwrap_or(true),
                    initial_admission,
                    last_eviction,
                    job_uid: meta.labels.get("kueue.x-k8s.io/job-uid").cloned(),
                    max_execution_time: match &spec.maximum_execution_time_seconds {
                        None => None,
                        Some(m) => Some(
                            count_in(
                                src,
                                m,
                                "maximumExecutionTimeSeconds",
                                1,
                                kueuesim_model::limits::MAX_DURATION.millis() / 1000,
                            )
                            .map(SimDuration::from_secs)?,
                        ),
                    },
                    creation_blocked: None,
                    suspended: false,
                    requeue_state,
                    gang: Arc::new(gang),
                    resilience: Default::default(),
                    serving: None,
                },
            ));
        }
        Ok(())
    }

    fn initial_admission(
        &mut self,
        src: &ObjectText<'_>,
        a: &wire::Admission,
        conditions: &[wire::StatusCondition],
        pod_sets: &[wire::WorkloadPodSet],
    ) -> Result<InitialAdmission, ScenarioError> {
        let Some(cq_name) = &a.cluster_queue else {
            return Err(err_obj(
                src,
                "status.admission has no clusterQueue: expected the ClusterQueue holding the quota",
            ));
        };
        names::reference(src, cq_name, "status.admission.clusterQueue")?;
        let Some(cq) = self
            .world
            .cluster_queues
            .iter()
            .position(|c| c.name == cq_name.value)
        else {
            return Err(err_at(
                src,
                cq_name,
                format!(
                    "status.admission names ClusterQueue {:?}, which does not exist: expected a ClusterQueue defined in the input",
                    cq_name.value
                ),
            ));
        };
        let mut out = Vec::new();
        for (i, ps) in pod_sets.iter().enumerate() {
            // Assignments are matched by name, falling back to position.
            let psa = a
                .pod_set_assignments
                .iter()
                .find(|x| x.name.as_ref().is_some_and(|n| n.value == ps.name.value))
                .or_else(|| a.pod_set_assignments.get(i));
            let Some(psa) = psa else {
                return Err(err_at(
                    src,
                    &ps.name,
                    format!(
                        "status.admission has no podSetAssignment for pod set {:?}: expected one per pod set",
                        ps.name.value
                    ),
                ));
            };
            let mut flavors = Vec::new();
            names::resource_names(src, &psa.flavors)?;
            for (_, f) in &psa.flavors {
                names::reference(src, f, "flavor name")?;
            }
            for (r, f) in &psa.flavors {
                let Some(fid) = self.flavor_id(&f.value) else {
                    return Err(err_at(
                        src,
                        f,
                        format!(
                            "status.admission names ResourceFlavor {:?}, which does not exist: expected a ResourceFlavor defined in the input",
                            f.value
                        ),
                    ));
                };
                flavors.push((self.world.resources.intern(r), fid));
            }
            flavors.sort();
            let count = match &psa.count {
                None => ps.count.value as u32,
                Some(c) if c.value >= 0 && c.value <= ps.count.value => c.value as u32,
                Some(c) => {
                    return Err(err_at(
                        src,
                        c,
                        format!(
                            "admitted count {} is out of range: expected 0 ≤ count ≤ the pod set's count",
                            c.value
                        ),
                    ));
                }
            };
            let topology = match &psa.topology_assignment {
                None => None,
                Some(ta) => Some(self.initial_topology(src, ta, &flavors, count)?),
            };
            out.push(PodSetAdmission {
                flavors,
                count,
                topology,
            });
        }
        let mut reserved_at = None;
        if let Some(c) = conditions
            .iter()
            .find(|c| c.kind == "QuotaReserved" && c.status == "True")
            && let Some(ts) = &c.last_transition_time
        {
            let ms = parse_rfc3339(ts.value.trim()).map_err(|e| err_at(src, ts, e.to_string()))?;
            reserved_at = Some(SimTime::from_millis(ms - self.world.config.start_unix_ms));
        }
        let pods_ready = conditions
            .iter()
            .any(|c| c.kind == "PodsReady" && c.status == "True");
        Ok(InitialAdmission {
            cluster_queue: ClusterQueueId::from_index(cq),
            pod_sets: out,
            reserved_at,
            pods_ready,
        })
    }
}

impl Builder<'_> {
    /// `status.requeueState` of a Workload waiting in the input (an admitted one's is
    /// history): its count and `requeueAt`, with the `Requeued` condition's words.
    fn requeue_state(
        &self,
        src: &ObjectText<'_>,
        status: &wire::WorkloadStatus,
        admitted: bool,
    ) -> Result<Option<kueuesim_model::RequeueState>, ScenarioError> {
        let Some(rs) = status.requeue_state.as_ref().filter(|_| !admitted) else {
            return Ok(None);
        };
        let count = match &rs.count {
            None => 0,
            Some(c) => count_in(src, c, "requeueState.count", 0, i64::from(u32::MAX))? as u32,
        };
        let requeue_at = match &rs.requeue_at {
            None => None,
            Some(ts) => {
                let ms =
                    parse_rfc3339(ts.value.trim()).map_err(|e| err_at(src, ts, e.to_string()))?;
                Some(SimTime::from_millis(ms - self.world.config.start_unix_ms))
            }
        };
        let condition = status
            .conditions
            .iter()
            .find(|c| c.kind == "Requeued")
            .map(|c| (c.reason.clone(), c.message.clone()));
        Ok(Some(kueuesim_model::RequeueState {
            count,
            requeue_at,
            condition,
        }))
    }

    /// An admitted pod set's `topologyAssignment` (v1beta1 `domains`, v1beta2 `slices`), as
    /// Kueue's TAS cache reads it: per domain of the levels given (down to the lowest level
    /// of the Topology of the pod set's TAS flavor, alone or with the levels above), its pods.
    fn initial_topology(
        &self,
        src: &ObjectText<'_>,
        ta: &serde_saphyr::Spanned<wire::TopologyAssignment>,
        flavors: &[(kueuesim_model::ResourceId, kueuesim_model::FlavorId)],
        count: u32,
    ) -> Result<(usize, Vec<(DomainId, u32)>), ScenarioError> {
        let bad = |msg: String| err_at(src, ta, msg);
        let Some(name) = flavors
            .iter()
            .find_map(|&(_, f)| self.world.flavors[f.index()].topology_name.as_ref())
        else {
            return Err(bad(
                "topologyAssignment of a pod set without a TAS flavor: expected one of its flavors to have a topologyName".into(),
            ));
        };
        let Some(t) = self.world.topologies.iter().position(|t| &t.name == name) else {
            return Err(bad(format!(
                "topologyAssignment: the Topology {name:?} of the pod set's flavor is not in the input"
            )));
        };
        let topo = &self.world.topologies[t];
        let TopologySource::Levels { labels } = &topo.source else {
            return Err(bad(format!(
                "topologyAssignment: {name:?} is not a Kueue Topology"
            )));
        };
        let ta = &ta.value;
        // Each given level's depth in the topology; the last must be the lowest.
        let mut depths = Vec::with_capacity(ta.levels.len());
        for l in &ta.levels {
            match labels.iter().position(|x| x == l) {
                Some(i) if depths.last().is_none_or(|&d| d < i + 1) => depths.push(i + 1),
                _ => {
                    return Err(bad(format!(
                        "topologyAssignment level {l:?}: expected the levels of Topology {name:?} ({}), broadest first",
                        labels.join(", ")
                    )));
                }
            }
        }
        if depths.last() != Some(&labels.len()) {
            return Err(bad(format!(
                "topologyAssignment levels [{}]: expected them to end with the lowest level of Topology {name:?}, {:?}",
                ta.levels.join(", "),
                labels.last().map_or("", String::as_str)
            )));
        }
        // Every (values, pods) entry, from either form.
        let mut entries: Vec<(Vec<String>, i64)> = ta
            .domains
            .iter()
            .map(|d| (d.values.clone(), d.count))
            .collect();
        for sl in &ta.slices {
            let n = usize::try_from(sl.domain_count).unwrap_or(0);
            if n == 0 || n > kueuesim_model::limits::MAX_PODS_PER_WORKLOAD as usize {
                return Err(bad(format!(
                    "topologyAssignment slice domainCount {}: expected at least 1",
                    sl.domain_count
                )));
            }
            for i in 0..n {
                let mut values = Vec::with_capacity(sl.values_per_level.len());
                for v in &sl.values_per_level {
                    let value = match (&v.universal, &v.individual) {
                        (Some(u), None) => u.clone(),
                        (None, Some(ind)) if ind.roots.len() == n => format!(
                            "{}{}{}",
                            ind.prefix.as_deref().unwrap_or(""),
                            ind.roots[i],
                            ind.suffix.as_deref().unwrap_or("")
                        ),
                        _ => {
                            return Err(bad(
                                "topologyAssignment slice valuesPerLevel: expected exactly one of universal or individual (with domainCount roots)".into(),
                            ));
                        }
                    };
                    values.push(value);
                }
                let pods = match (sl.pod_counts.universal, sl.pod_counts.individual.get(i)) {
                    (Some(u), _) if sl.pod_counts.individual.is_empty() => u,
                    (None, Some(&c)) if sl.pod_counts.individual.len() == n => c,
                    _ => {
                        return Err(bad(
                            "topologyAssignment slice podCounts: expected exactly one of universal or individual (domainCount counts)".into(),
                        ));
                    }
                };
                entries.push((values, pods));
            }
        }
        let mut domains: Vec<(DomainId, u32)> = Vec::new();
        let mut total: i64 = 0;
        for (values, pods) in entries {
            if values.len() != depths.len() || pods < 1 {
                return Err(bad(format!(
                    "topologyAssignment domain [{}] with {pods} pod(s): expected one value per level and at least 1 pod",
                    values.join(", ")
                )));
            }
            // The lowest-level domain whose ancestors carry these values.
            let found = topo.domains.iter().enumerate().find(|(id, d)| {
                d.depth as usize == labels.len()
                    && topo
                        .ancestors(DomainId::from_index(*id))
                        .filter_map(|a| {
                            let dom = topo.domain(a);
                            depths
                                .iter()
                                .position(|&x| x == dom.depth as usize)
                                .map(|i| (i, dom))
                        })
                        .all(|(i, dom)| dom.value == values[i])
            });
            let Some((id, _)) = found else {
                return Err(bad(format!(
                    "topologyAssignment domain [{}] is not a domain of Topology {name:?}: expected node label values of its nodes",
                    values.join(", ")
                )));
            };
            total += pods;
            let id = DomainId::from_index(id);
            match domains.iter_mut().find(|(d, _)| *d == id) {
                Some(e) => e.1 += pods as u32,
                None => domains.push((id, pods as u32)),
            }
        }
        if total != i64::from(count) {
            return Err(bad(format!(
                "topologyAssignment places {total} pod(s): expected the pod set's admitted count, {count}"
            )));
        }
        domains.sort();
        Ok((t, domains))
    }

    /// A Workload pod set's Kueue TAS request: its `spec.podSets[].topologyRequest`, as the
    /// scheduler reads it (`IsExplicitlyRequestingTAS`, `levelKey` in upstream's
    /// `tas_flavor_snapshot.go`): `required`, else `preferred`, else `unconstrained: true`.
    /// The pod template's `podset-*-topology` annotations are what the Job integration
    /// copies into the field (`jobframework.NewPodSetTopologyRequest`); on a Workload itself
    /// Kueue does not read them, so without the field they are a warning and have no effect.
    /// `from_annotations` is the pod set as built, with its template's annotations read and
    /// its `topology_slice` already taken from the field.
    fn workload_topology_request(
        &mut self,
        src: &ObjectText<'_>,
        ps: &wire::WorkloadPodSet,
        from_annotations: &PodSet,
    ) -> Option<TopologyRequest> {
        match &ps.topology_request {
            Some(tr) => match (&tr.required, &tr.preferred, &tr.unconstrained) {
                (Some(r), _, _) => Some(TopologyRequest::Required(r.value.trim().to_string())),
                (None, Some(p), _) => Some(TopologyRequest::Preferred(p.value.trim().to_string())),
                (None, None, Some(u)) if u.value => Some(TopologyRequest::Unconstrained),
                // A slice-only request (`isSliceTopologyOnlyRequest`).
                _ if from_annotations.topology_slice.is_some() => {
                    Some(TopologyRequest::Unconstrained)
                }
                _ => None,
            },
            None => {
                if from_annotations.topology_request.is_some() {
                    let key = [
                        "kueue.x-k8s.io/podset-required-topology",
                        "kueue.x-k8s.io/podset-preferred-topology",
                        "kueue.x-k8s.io/podset-unconstrained-topology",
                    ]
                    .into_iter()
                    .find(|k| ps.template.metadata.annotations.contains_key(*k))
                    .unwrap_or_default();
                    let pos = ps
                        .template
                        .metadata
                        .annotations
                        .get(key)
                        .map_or_else(|| src.kind_pos.clone(), |a| pos_of(src, a));
                    self.warnings.push(format!(
                        "{pos}: Workload pod set {:?}: Kueue reads a Workload's topology request from spec.podSets[].topologyRequest (the Job integration copies it there from this annotation), not from the pod template's {key} annotation; the pod set has no topology request",
                        ps.name.value
                    ));
                }
                None
            }
        }
    }
}
