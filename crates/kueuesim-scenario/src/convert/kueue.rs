//! Kueue's own kinds: ResourceFlavors, Cohorts, ClusterQueues (resourceGroups, preemption,
//! flavorFungibility, fairSharing, stopPolicy), LocalQueues and the Kueue `Configuration`
//! (the check for fields neither kueue.x-k8s.io v1beta1 nor v1beta2 has: `kueue_fields`).

use serde_saphyr::Spanned;

use kueuesim_model::time::SimDuration;
use kueuesim_model::{
    AdmissionFairSharing, ClusterQueue, ClusterQueueId, Cohort, CohortId, FairSharingStrategy,
    FlavorFungibility, FlavorId, FlavorQuotas, FungibilityPolicy, FungibilityPreference,
    KueueConfig, LocalQueue, LocalQueueId, Preemption, PreemptionPolicy, PriorityClass,
    QueueingStrategy, ResourceFlavor, ResourceGroup, ResourceQuota, StopPolicy, WaitForPodsReady,
};

use super::core::{
    Builder, Parsed, count_in, duration, err_at, err_obj, labels, name_of, namespace_of, one_of,
    quantity, quota, seconds, selector, taints, tolerations,
};
use super::names;
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

fn stop_policy(
    src: &ObjectText<'_>,
    s: &Option<Spanned<String>>,
) -> Result<StopPolicy, ScenarioError> {
    match s {
        None => Ok(StopPolicy::None),
        Some(s) => one_of(
            src,
            s,
            "stopPolicy",
            &[
                ("None", StopPolicy::None),
                ("Hold", StopPolicy::Hold),
                ("HoldAndDrain", StopPolicy::HoldAndDrain),
            ],
        ),
    }
}

/// `fairSharing.weight` in milli-units; 1000 when unset; negative is an error.
fn weight_milli(src: &ObjectText<'_>, fs: &wire::FairSharing) -> Result<i64, ScenarioError> {
    let Some(w) = &fs.weight else { return Ok(1000) };
    let q = kueuesim_model::Quantity::parse(w.value.trim())
        .map_err(|e| err_at(src, w, e.to_string()))?;
    let milli = q.milli_value().map_err(|e| err_at(src, w, e.to_string()))?;
    if milli < 0 {
        return Err(err_at(
            src,
            w,
            format!(
                "fairSharing.weight {:?} is negative: expected a quantity ≥ 0",
                w.value
            ),
        ));
    }
    Ok(milli)
}

fn preemption(
    src: &ObjectText<'_>,
    p: Option<&wire::Preemption>,
) -> Result<Preemption, ScenarioError> {
    let Some(p) = p else {
        return Ok(Preemption::default());
    };
    let policy =
        |s: &Option<Spanned<String>>, what: &str, options: &[(&str, PreemptionPolicy)]| match s {
            None => Ok(PreemptionPolicy::Never),
            Some(s) => one_of(src, s, what, options),
        };
    use PreemptionPolicy as P;
    let within_cluster_queue = policy(
        &p.within_cluster_queue,
        "withinClusterQueue",
        &[
            ("Never", P::Never),
            ("LowerPriority", P::LowerPriority),
            ("LowerOrNewerEqualPriority", P::LowerOrNewerEqualPriority),
        ],
    )?;
    let reclaim_within_cohort = policy(
        &p.reclaim_within_cohort,
        "reclaimWithinCohort",
        &[
            ("Never", P::Never),
            ("LowerPriority", P::LowerPriority),
            ("Any", P::Any),
        ],
    )?;
    let (borrow_within_cohort, borrow_max_priority_threshold) = match &p.borrow_within_cohort {
        None => (P::Never, None),
        Some(b) => (
            policy(
                &b.policy,
                "borrowWithinCohort.policy",
                &[("Never", P::Never), ("LowerPriority", P::LowerPriority)],
            )?,
            b.max_priority_threshold,
        ),
    };
    Ok(Preemption {
        within_cluster_queue,
        reclaim_within_cohort,
        borrow_within_cohort,
        borrow_max_priority_threshold,
    })
}

fn fungibility(
    src: &ObjectText<'_>,
    f: Option<&wire::FlavorFungibility>,
) -> Result<FlavorFungibility, ScenarioError> {
    let mut out = FlavorFungibility::default();
    let Some(f) = f else { return Ok(out) };
    use FungibilityPolicy as F;
    // v1beta1 spelled MayStopSearch as `Borrow` / `Preempt`.
    if let Some(s) = &f.when_can_borrow {
        out.when_can_borrow = one_of(
            src,
            s,
            "whenCanBorrow",
            &[
                ("MayStopSearch", F::MayStopSearch),
                ("Borrow", F::MayStopSearch),
                ("TryNextFlavor", F::TryNextFlavor),
            ],
        )?;
    }
    if let Some(s) = &f.when_can_preempt {
        out.when_can_preempt = one_of(
            src,
            s,
            "whenCanPreempt",
            &[
                ("MayStopSearch", F::MayStopSearch),
                ("Preempt", F::MayStopSearch),
                ("TryNextFlavor", F::TryNextFlavor),
            ],
        )?;
    }
    if let Some(s) = &f.preference {
        out.preference = one_of(
            src,
            s,
            "preference",
            &[
                (
                    "BorrowingOverPreemption",
                    FungibilityPreference::BorrowingOverPreemption,
                ),
                (
                    "PreemptionOverBorrowing",
                    FungibilityPreference::PreemptionOverBorrowing,
                ),
            ],
        )?;
    }
    Ok(out)
}

impl Builder<'_> {
    /// Kueue's `Configuration`, defaulted as the API version defaults it: with v1beta2
    /// waitForPodsReady is on unless configured otherwise, with v1beta1 only when `enable`.
    pub(super) fn kueue_config(
        &mut self,
        p: &Parsed<'_, wire::Configuration>,
    ) -> Result<KueueConfig, ScenarioError> {
        let src = p.src;
        let v1beta1 = src.api_version == "config.kueue.x-k8s.io/v1beta1";
        if !v1beta1 && src.api_version != "config.kueue.x-k8s.io/v1beta2" {
            return Err(err_obj(
                src,
                format!(
                    "unsupported apiVersion {:?} for Configuration: expected config.kueue.x-k8s.io/v1beta1 or config.kueue.x-k8s.io/v1beta2",
                    src.api_version
                ),
            ));
        }
        let c = &p.obj;
        let fair_sharing = match &c.fair_sharing {
            None => None,
            Some(fs) if v1beta1 && fs.enable != Some(true) => None,
            Some(fs) => {
                let options = [
                    (
                        "LessThanOrEqualToFinalShare",
                        FairSharingStrategy::LessThanOrEqualToFinalShare,
                    ),
                    (
                        "LessThanInitialShare",
                        FairSharingStrategy::LessThanInitialShare,
                    ),
                ];
                match &fs.preemption_strategies {
                    None => Some(vec![
                        FairSharingStrategy::LessThanOrEqualToFinalShare,
                        FairSharingStrategy::LessThanInitialShare,
                    ]),
                    Some(list) => Some(
                        list.iter()
                            .map(|s| one_of(src, s, "preemptionStrategy", &options))
                            .collect::<Result<_, _>>()?,
                    ),
                }
            }
        };
        let admission_fair_sharing = match &c.admission_fair_sharing {
            None => None,
            Some(a) => {
                let half_life = a
                    .usage_half_life_time
                    .as_ref()
                    .map(|d| duration(src, d))
                    .transpose()?
                    .unwrap_or(SimDuration::ZERO);
                let sampling_interval = a
                    .usage_sampling_interval
                    .as_ref()
                    .map(|d| duration(src, d))
                    .transpose()?
                    .unwrap_or(SimDuration::from_secs(300));
                let mut resource_weights_milli = Vec::new();
                for (r, w) in &a.resource_weights {
                    if !w.value.is_finite() || w.value < 0.0 {
                        return Err(err_at(
                            src,
                            w,
                            format!(
                                "resource weight {} for {}: expected a number ≥ 0",
                                w.value,
                                kueuesim_model::names::shown(r)
                            ),
                        ));
                    }
                    resource_weights_milli.push((
                        self.world.resources.intern(r),
                        (w.value * 1000.0).round() as i64,
                    ));
                }
                Some(AdmissionFairSharing {
                    half_life,
                    sampling_interval,
                    resource_weights_milli,
                })
            }
        };
        let wait_for_pods_ready = match &c.wait_for_pods_ready {
            None if v1beta1 => None,
            None => Some(WaitForPodsReady::default()),
            Some(w) if v1beta1 && w.enable != Some(true) => None,
            Some(w) => {
                let mut r = WaitForPodsReady::default();
                if let Some(t) = &w.timeout {
                    r.timeout = duration(src, t)?;
                }
                // `recoveryTimeout` defaults to `timeout`; `0s` turns it off.
                r.recovery_timeout = match &w.recovery_timeout {
                    None => Some(r.timeout),
                    Some(t) => Some(duration(src, t)?).filter(|d| *d > SimDuration::ZERO),
                };
                // v1beta1 defaulted blockAdmission to true when enabled.
                r.block_admission = w.block_admission.unwrap_or(v1beta1);
                if let Some(rs) = &w.requeuing_strategy {
                    if let Some(t) = &rs.timestamp {
                        r.order_by_eviction = one_of(
                            src,
                            t,
                            "requeuingStrategy.timestamp",
                            &[("Eviction", true), ("Creation", false)],
                        )?;
                    }
                    if let Some(b) = &rs.backoff_base_seconds {
                        r.backoff_base = seconds(src, b, "backoffBaseSeconds")?;
                    }
                    if let Some(b) = &rs.backoff_max_seconds {
                        r.backoff_max = seconds(src, b, "backoffMaxSeconds")?;
                    }
                    if let Some(l) = &rs.backoff_limit_count {
                        let n = count_in(src, l, "backoffLimitCount", 0, i64::from(u32::MAX))?;
                        r.backoff_limit = Some(n as u32);
                    }
                }
                Some(r)
            }
        };
        let mut resources = kueuesim_model::ResourceConfig::default();
        if let Some(rc) = &p.obj.resources {
            resources.exclude_prefixes = rc.exclude_resource_prefixes.clone();
            for t in &rc.transformations {
                let Some(input) = t.input.as_ref().filter(|i| !i.value.is_empty()) else {
                    return Err(err_obj(
                        src,
                        "a resources.transformations entry has no input: expected a resource name",
                    ));
                };
                let retain = match &t.strategy {
                    None => true,
                    Some(s) => one_of(src, s, "strategy", &[("Retain", true), ("Replace", false)])?,
                };
                let mut outputs = Vec::new();
                for (name, q) in &t.outputs {
                    let amount = quantity(src, name, q)?;
                    outputs.push((self.world.resources.intern(name), amount));
                }
                resources
                    .transformations
                    .push(kueuesim_model::ResourceTransformation {
                        input: self.world.resources.intern(&input.value),
                        retain,
                        outputs,
                    });
            }
        }
        let kueue_namespace = c
            .namespace
            .as_ref()
            .map_or("kueue-system", |n| n.value.as_str());
        let managed_jobs_namespace_selector = match &c.managed_jobs_namespace_selector {
            Some(sel) => Some(selector(src, sel)?),
            None => Some(
                kueuesim_model::world::default_managed_jobs_namespace_selector(kueue_namespace),
            ),
        };
        Ok(KueueConfig {
            fair_sharing,
            admission_fair_sharing,
            wait_for_pods_ready,
            resources,
            manage_jobs_without_queue_name: c.manage_jobs_without_queue_name.unwrap_or(false),
            managed_jobs_namespace_selector,
            namespace: kueue_namespace.to_string(),
        })
    }

    pub(super) fn build_flavors(&mut self) -> Result<(), ScenarioError> {
        let flavors = std::mem::take(&mut self.flavors);
        for p in &flavors {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let spec = &p.obj.spec;
            names::labels(src, &spec.node_labels, "nodeLabels")?;
            names::optional_reference(src, spec.topology_name.as_ref(), "topologyName")?;
            let flavor = ResourceFlavor {
                name: name.clone(),
                node_labels: labels(&spec.node_labels),
                node_taints: taints(src, &spec.node_taints)?,
                tolerations: tolerations(src, &spec.tolerations)?,
                topology_name: spec.topology_name.as_ref().map(|t| t.value.clone()),
            };
            self.remember(src, "", &name)?;
            self.world.flavors.push(flavor);
        }
        Ok(())
    }

    pub(super) fn flavor_id(&self, name: &str) -> Option<FlavorId> {
        self.world
            .flavors
            .iter()
            .position(|f| f.name == name)
            .map(FlavorId::from_index)
    }

    /// Reads `resourceGroups` of a ClusterQueue or Cohort named `name`: each resource in one
    /// group, each flavor in one group and existing, one quota per covered resource.
    fn resource_groups(
        &mut self,
        src: &ObjectText<'_>,
        name: &str,
        kind: &str,
        spec_groups: &[wire::ResourceGroup],
    ) -> Result<Vec<ResourceGroup>, ScenarioError> {
        let mut groups = Vec::new();
        let mut seen_resources: Vec<String> = Vec::new();
        let mut seen_flavors: Vec<String> = Vec::new();
        for g in spec_groups {
            let mut covered = Vec::new();
            for r in &g.covered_resources {
                names::resource_name(src, r)?;
                if seen_resources.contains(&r.value) {
                    return Err(err_at(
                        src,
                        r,
                        format!(
                            "resource {:?} is covered by two resource groups: expected each resource in exactly one group",
                            r.value
                        ),
                    ));
                }
                seen_resources.push(r.value.clone());
                covered.push(self.world.resources.intern(&r.value));
            }
            let mut flavors = Vec::new();
            for f in &g.flavors {
                // Kueue's ResourceFlavorReference: a DNS-1123 subdomain.
                names::reference(src, &f.name, "flavor name")?;
                for q in &f.resources {
                    names::resource_name(src, &q.name)?;
                }
                let Some(fid) = self.flavor_id(&f.name.value) else {
                    return Err(err_at(
                        src,
                        &f.name,
                        format!(
                            "{kind} {name:?} names ResourceFlavor {:?}, which does not exist: expected a ResourceFlavor defined in the input",
                            f.name.value
                        ),
                    ));
                };
                if seen_flavors.contains(&f.name.value) {
                    return Err(err_at(
                        src,
                        &f.name,
                        format!(
                            "flavor {:?} appears twice: expected each flavor in exactly one resource group",
                            f.name.value
                        ),
                    ));
                }
                seen_flavors.push(f.name.value.clone());
                let mut resources = Vec::new();
                for (k, r) in g.covered_resources.iter().enumerate() {
                    if let Some(dup) = f
                        .resources
                        .iter()
                        .filter(|q| q.name.value == r.value)
                        .nth(1)
                    {
                        return Err(err_at(
                            src,
                            &dup.name,
                            format!(
                                "resource {:?} is listed twice in flavor {:?}: expected one quota per resource",
                                r.value, f.name.value
                            ),
                        ));
                    }
                    let Some(q) = f.resources.iter().find(|q| q.name.value == r.value) else {
                        return Err(err_at(
                            src,
                            &f.name,
                            format!(
                                "flavor {:?} has no quota for covered resource {:?}: expected one entry per coveredResources item",
                                f.name.value, r.value
                            ),
                        ));
                    };
                    let res_name = r.value.clone();
                    resources.push(ResourceQuota {
                        resource: covered[k],
                        nominal: quota(src, &res_name, &q.nominal_quota)?,
                        borrowing_limit: q
                            .borrowing_limit
                            .as_ref()
                            .map(|b| quota(src, &res_name, b))
                            .transpose()?,
                        lending_limit: q
                            .lending_limit
                            .as_ref()
                            .map(|b| quota(src, &res_name, b))
                            .transpose()?,
                    });
                }
                if let Some(extra) = f
                    .resources
                    .iter()
                    .find(|q| !g.covered_resources.iter().any(|r| r.value == q.name.value))
                {
                    return Err(err_at(
                        src,
                        &extra.name,
                        format!(
                            "resource {:?} is not in the group's coveredResources: expected one of {:?}",
                            extra.name.value,
                            g.covered_resources
                                .iter()
                                .map(|r| r.value.as_str())
                                .collect::<Vec<_>>()
                        ),
                    ));
                }
                flavors.push(FlavorQuotas {
                    flavor: fid,
                    resources,
                });
            }
            groups.push(ResourceGroup { covered, flavors });
        }
        Ok(groups)
    }

    /// Reads Cohort objects, then adds the cohorts ClusterQueues and Cohorts name without an
    /// object (implicit cohorts, no quota of their own).
    pub(super) fn build_cohorts(&mut self) -> Result<(), ScenarioError> {
        let cohorts = std::mem::take(&mut self.cohorts);
        for p in &cohorts {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            self.remember(src, "", &name)?;
            let resource_groups =
                self.resource_groups(src, &name, "Cohort", &p.obj.spec.resource_groups)?;
            let weight = weight_milli(src, &p.obj.spec.fair_sharing)?;
            self.index
                .cohorts
                .insert(name.clone(), self.world.cohorts.len());
            self.world.cohorts.push(Cohort {
                name,
                parent: None,
                resource_groups,
                fair_sharing_weight_milli: weight,
                declared: true,
            });
        }
        for (i, p) in cohorts.iter().enumerate() {
            let parent = p
                .obj
                .spec
                .parent_name
                .as_ref()
                .or(p.obj.spec.parent.as_ref())
                .filter(|n| !n.value.is_empty());
            if let Some(parent) = parent {
                names::reference(p.src, parent, "parent cohort")?;
                let id = self.cohort_id(&parent.value);
                self.world.cohorts[i].parent = Some(id);
            }
        }
        Ok(())
    }

    /// The cohort named `name`, created implicitly if no Cohort object declares it.
    fn cohort_id(&mut self, name: &str) -> CohortId {
        match self.index.cohorts.get(name) {
            Some(&i) => CohortId::from_index(i),
            None => {
                self.index
                    .cohorts
                    .insert(name.to_string(), self.world.cohorts.len());
                self.world.cohorts.push(Cohort {
                    name: name.to_string(),
                    parent: None,
                    resource_groups: Vec::new(),
                    fair_sharing_weight_milli: 1000,
                    declared: false,
                });
                CohortId::from_index(self.world.cohorts.len() - 1)
            }
        }
    }

    pub(super) fn build_cluster_queues(&mut self) -> Result<(), ScenarioError> {
        let cluster_queues = std::mem::take(&mut self.cluster_queues);
        for p in &cluster_queues {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let spec = &p.obj.spec;
            let groups = self.resource_groups(src, &name, "ClusterQueue", &spec.resource_groups)?;
            let queueing_strategy = match &spec.queueing_strategy {
                None => QueueingStrategy::BestEffortFIFO,
                Some(s) => one_of(
                    src,
                    s,
                    "queueingStrategy",
                    &[
                        ("BestEffortFIFO", QueueingStrategy::BestEffortFIFO),
                        ("StrictFIFO", QueueingStrategy::StrictFIFO),
                    ],
                )?,
            };
            // Kueue's CohortReference: a DNS-1123 subdomain (its CRD's pattern).
            let cohort = spec.cohort_name.as_ref().or(spec.cohort.as_ref());
            names::optional_reference(src, cohort, "cohort")?;
            let cq = ClusterQueue {
                name: name.clone(),
                cohort: cohort
                    .filter(|c| !c.value.is_empty())
                    .map(|c| self.cohort_id(&c.value)),
                preemption: preemption(src, spec.preemption.as_ref())?,
                flavor_fungibility: fungibility(src, spec.flavor_fungibility.as_ref())?,
                fair_sharing_weight_milli: weight_milli(src, &spec.fair_sharing)?,
                admission_fair_sharing: match spec
                    .admission_scope
                    .as_ref()
                    .and_then(|a| a.admission_mode.as_ref())
                {
                    None => false,
                    Some(m) => one_of(
                        src,
                        m,
                        "admissionScope.admissionMode",
                        &[
                            ("UsageBasedAdmissionFairSharing", true),
                            ("NoAdmissionFairSharing", false),
                        ],
                    )?,
                },
                queueing_strategy,
                namespace_selector: spec
                    .namespace_selector
                    .as_ref()
                    .map(|s| selector(src, s))
                    .transpose()?,
                resource_groups: groups,
                stop_policy: stop_policy(src, &spec.stop_policy)?,
            };
            self.remember(src, "", &name)?;
            // The admission checks, resolved once the AdmissionChecks are read
            // (`build_admission_checks`): v1beta1's list, or the strategy's rules.
            let mut checks: Vec<(wire::S, Vec<wire::S>)> = spec
                .admission_checks
                .iter()
                .map(|c| (c.clone(), Vec::new()))
                .collect();
            if let Some(st) = &spec.admission_checks_strategy {
                checks.extend(
                    st.admission_checks
                        .iter()
                        .map(|r| (r.name.clone(), r.on_flavors.clone())),
                );
            }
            if !checks.is_empty() {
                self.cq_checks
                    .push((self.world.cluster_queues.len(), src, checks));
            }
            self.index
                .cluster_queues
                .insert(name, self.world.cluster_queues.len());
            self.world.cluster_queues.push(cq);
        }
        Ok(())
    }

    pub(super) fn build_local_queues(&mut self) -> Result<(), ScenarioError> {
        let local_queues = std::mem::take(&mut self.local_queues);
        for p in &local_queues {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let namespace = namespace_of(&p.obj.metadata);
            let spec = &p.obj.spec;
            let Some(cq_name) = &spec.cluster_queue else {
                return Err(err_obj(
                    src,
                    format!(
                        "LocalQueue {namespace}/{name} has no spec.clusterQueue: expected the name of a ClusterQueue"
                    ),
                ));
            };
            // Kueue's ClusterQueueReference: a DNS-1123 subdomain.
            names::reference(src, cq_name, "spec.clusterQueue")?;
            let Some(&cq) = self.index.cluster_queues.get(&cq_name.value) else {
                return Err(err_at(
                    src,
                    cq_name,
                    format!(
                        "LocalQueue {namespace}/{name} names ClusterQueue {:?}, which does not exist: expected a ClusterQueue defined in the input",
                        cq_name.value
                    ),
                ));
            };
            let weight = weight_milli(src, &spec.fair_sharing)?;
            let mut afs_consumed = Vec::new();
            if let Some(st) = p
                .obj
                .status
                .fair_sharing
                .as_ref()
                .and_then(|f| f.admission_fair_sharing_status.as_ref())
            {
                names::resource_names(src, &st.consumed_resources)?;
                for (r, q) in &st.consumed_resources {
                    let amount = quota(src, r, q)?;
                    afs_consumed.push((self.world.resources.intern(r), amount));
                }
            }
            let lq = LocalQueue {
                namespace: namespace.clone(),
                name: name.clone(),
                cluster_queue: ClusterQueueId::from_index(cq),
                fair_sharing_weight_milli: weight,
                stop_policy: stop_policy(src, &spec.stop_policy)?,
                afs_consumed,
            };
            self.remember(src, &namespace, &name)?;
            self.ensure_namespace(&namespace);
            self.index
                .local_queues
                .insert((namespace, name), self.world.local_queues.len());
            self.world.local_queues.push(lq);
        }
        Ok(())
    }

    pub(super) fn lq_id(&self, namespace: &str, name: &str) -> Option<LocalQueueId> {
        self.index
            .local_queues
            .get(&(namespace.to_string(), name.to_string()))
            .map(|&i| LocalQueueId::from_index(i))
    }

    pub(super) fn wpc(&self, name: &str) -> Option<&PriorityClass> {
        self.world
            .priority_classes
            .iter()
            .find(|p| !p.is_pod_priority_class && p.name == name)
    }
}
