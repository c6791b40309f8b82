//! Capacity on demand: a NodePool's `spec.autoscaling`, Kueue's AdmissionCheck and
//! ProvisioningRequestConfig kinds, and the ClusterQueues' `admissionChecks` /
//! `admissionChecksStrategy` resolved into `World::autoscaling`.

use kueuesim_model::SimDuration;
use kueuesim_model::autoscale::{
    AutoscaledPool, Autoscaling, DEFAULT_PROVISIONING_DELAY, DEFAULT_SCALE_DOWN_UNNEEDED,
    ProvisioningCheck, ProvisioningClass,
};

use super::core::{Builder, duration, err_at, err_obj, name_of, one_of};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

/// Kueue's `ProvisioningRequestControllerName`.
pub(super) const PROVISIONING_CONTROLLER: &str = "kueue.x-k8s.io/provisioning-request";

/// A NodePool's `spec.autoscaling` over its `total` generated nodes, the first at `node_base`.
pub(super) fn autoscaled_pool(
    src: &ObjectText<'_>,
    pool: &str,
    a: &serde_saphyr::Spanned<wire::PoolAutoscaling>,
    total: i64,
    node_base: usize,
) -> Result<AutoscaledPool, ScenarioError> {
    let spec = &a.value;
    let max = match &spec.max {
        None => total,
        Some(m) if (1..=total).contains(&m.value) => m.value,
        Some(m) => {
            return Err(err_at(
                src,
                m,
                format!(
                    "autoscaling.max {}: expected an integer from 1 to the {total} nodes the pool lays out",
                    m.value
                ),
            ));
        }
    };
    let min = match &spec.min {
        None => 0,
        Some(m) if (0..=max).contains(&m.value) => m.value,
        Some(m) => {
            return Err(err_at(
                src,
                m,
                format!(
                    "autoscaling.min {}: expected an integer from 0 to autoscaling.max ({max})",
                    m.value
                ),
            ));
        }
    };
    let positive = |d: &Option<wire::S>, what: &str, default: SimDuration| match d {
        None => Ok(default),
        Some(d) => {
            let v = duration(src, d)?;
            if v < SimDuration::ZERO {
                return Err(err_at(
                    src,
                    d,
                    format!(
                        "autoscaling.{what} {:?}: expected a duration of at least 0s",
                        d.value
                    ),
                ));
            }
            Ok(v)
        }
    };
    Ok(AutoscaledPool {
        name: pool.to_string(),
        nodes: (0..max as usize)
            .map(|i| kueuesim_model::NodeId::from_index(node_base + i))
            .collect(),
        laid_out: total as u32,
        min: min as u32,
        provisioning_delay: positive(
            &spec.provisioning_delay,
            "provisioningDelay",
            DEFAULT_PROVISIONING_DELAY,
        )?,
        scale_down_unneeded: positive(
            &spec.scale_down_unneeded,
            "scaleDownUnneeded",
            DEFAULT_SCALE_DOWN_UNNEEDED,
        )?,
    })
}

/// A non-negative integer of a ProvisioningRequestConfig's `retryStrategy`.
fn retry_field(
    src: &ObjectText<'_>,
    v: Option<&serde_saphyr::Spanned<i64>>,
    what: &str,
    default: i64,
) -> Result<i64, ScenarioError> {
    match v {
        None => Ok(default),
        Some(v) if (0..=i64::from(i32::MAX)).contains(&v.value) => Ok(v.value),
        Some(v) => Err(err_at(
            src,
            v,
            format!(
                "retryStrategy.{what} {}: expected an integer from 0 to {}",
                v.value,
                i32::MAX
            ),
        )),
    }
}

impl<'a> Builder<'a> {
    /// The AdmissionChecks, their ProvisioningRequestConfigs and the ClusterQueues that list
    /// them, with the autoscaled NodePools, into `World::autoscaling`.
    pub(super) fn build_admission_checks(&mut self) -> Result<(), ScenarioError> {
        let configs = std::mem::take(&mut self.provisioning_configs);
        let mut by_config: Vec<(String, ProvisioningCheck)> = Vec::new();
        for p in &configs {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            self.remember(src, "", &name)?;
            let spec = &p.obj.spec;
            let Some(class) = &spec.provisioning_class_name else {
                return Err(err_obj(
                    src,
                    format!(
                        "ProvisioningRequestConfig {name:?} has no spec.provisioningClassName: expected one of {}",
                        ProvisioningClass::NAMES.join(", ")
                    ),
                ));
            };
            let class = one_of(
                src,
                class,
                "provisioningClassName",
                &[
                    (
                        ProvisioningClass::NAMES[0],
                        ProvisioningClass::CheckCapacity,
                    ),
                    (
                        ProvisioningClass::NAMES[1],
                        ProvisioningClass::BestEffortAtomic,
                    ),
                ],
            )?;
            if !spec.managed_resources.is_empty() {
                let r = &spec.managed_resources[0];
                return Err(err_at(
                    src,
                    r,
                    "managedResources: not simulated yet (every pod set takes part in the request): expected none",
                ));
            }
            if let Some(m) = &spec.pod_set_merge_policy {
                one_of(
                    src,
                    m,
                    "podSetMergePolicy",
                    &[
                        ("IdenticalPodTemplates", ()),
                        ("IdenticalWorkloadSchedulingRequirements", ()),
                    ],
                )?;
            }
            let rs = spec.retry_strategy.as_ref();
            let limit = retry_field(
                src,
                rs.and_then(|r| r.backoff_limit_count.as_ref()),
                "backoffLimitCount",
                3,
            )?;
            let base = retry_field(
                src,
                rs.and_then(|r| r.backoff_base_seconds.as_ref()),
                "backoffBaseSeconds",
                60,
            )?;
            let max = retry_field(
                src,
                rs.and_then(|r| r.backoff_max_seconds.as_ref()),
                "backoffMaxSeconds",
                1800,
            )?;
            by_config.push((
                name,
                ProvisioningCheck {
                    name: String::new(),
                    class,
                    backoff_limit_count: limit as u32,
                    backoff_base: SimDuration::from_secs(base),
                    backoff_max: SimDuration::from_secs(max),
                    on_flavors: Vec::new(),
                },
            ));
        }
        let checks_in = std::mem::take(&mut self.admission_checks);
        let mut checks: Vec<(String, ProvisioningCheck)> = Vec::new();
        for p in &checks_in {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            self.remember(src, "", &name)?;
            let spec = &p.obj.spec;
            let Some(controller) = &spec.controller_name else {
                return Err(err_obj(
                    src,
                    format!(
                        "AdmissionCheck {name:?} has no spec.controllerName: expected {PROVISIONING_CONTROLLER}"
                    ),
                ));
            };
            if controller.value != PROVISIONING_CONTROLLER {
                return Err(err_at(
                    src,
                    controller,
                    format!(
                        "controllerName {:?}: expected {PROVISIONING_CONTROLLER} (the only admission check controller simulated; a workload would wait for any other forever)",
                        controller.value
                    ),
                ));
            }
            // Without parameters the provisioning controller marks the check inactive, and
            // its ClusterQueues admit nothing.
            let Some(params) = &spec.parameters else {
                return Err(err_obj(
                    src,
                    format!(
                        "AdmissionCheck {name:?} has no spec.parameters: expected a reference to a ProvisioningRequestConfig (without one the check is inactive and its ClusterQueues admit nothing)"
                    ),
                ));
            };
            if let Some(k) = &params.kind
                && k.value != "ProvisioningRequestConfig"
            {
                return Err(err_at(
                    src,
                    k,
                    format!(
                        "parameters.kind {:?}: expected ProvisioningRequestConfig",
                        k.value
                    ),
                ));
            }
            if let Some(g) = &params.api_group
                && g.value != "kueue.x-k8s.io"
            {
                return Err(err_at(
                    src,
                    g,
                    format!("parameters.apiGroup {:?}: expected kueue.x-k8s.io", g.value),
                ));
            }
            let Some(config_name) = &params.name else {
                return Err(err_obj(
                    src,
                    format!(
                        "AdmissionCheck {name:?} has no spec.parameters.name: expected the name of a ProvisioningRequestConfig"
                    ),
                ));
            };
            let Some((_, config)) = by_config.iter().find(|(n, _)| *n == config_name.value) else {
                let hint = crate::overlay::closest_hint(
                    &config_name.value,
                    by_config.iter().map(|(n, _)| n.as_str()),
                );
                return Err(err_at(
                    src,
                    config_name,
                    format!(
                        "parameters.name {:?}: no such ProvisioningRequestConfig{hint}; expected one defined in the input",
                        config_name.value
                    ),
                ));
            };
            let mut check = config.clone();
            check.name = name.clone();
            checks.push((name, check));
        }
        let cq_checks = std::mem::take(&mut self.cq_checks);
        let mut per_cq: Vec<Option<ProvisioningCheck>> = Vec::new();
        for (cq, src, listed) in &cq_checks {
            if listed.len() > 1 {
                return Err(err_at(
                    src,
                    &listed[1].0,
                    "a second admission check: expected at most one per ClusterQueue (several checks are not simulated yet)",
                ));
            }
            let (name, on_flavors) = &listed[0];
            let Some((_, check)) = checks.iter().find(|(n, _)| *n == name.value) else {
                let hint = crate::overlay::closest_hint(
                    &name.value,
                    checks.iter().map(|(n, _)| n.as_str()),
                );
                return Err(err_at(
                    src,
                    name,
                    format!(
                        "admission check {:?}: no such AdmissionCheck{hint}; expected one defined in the input (upstream the ClusterQueue stays inactive)",
                        name.value
                    ),
                ));
            };
            let mut check = check.clone();
            for f in on_flavors {
                let Some(i) = self.world.flavors.iter().position(|x| x.name == f.value) else {
                    let hint = crate::overlay::closest_hint(
                        &f.value,
                        self.world.flavors.iter().map(|x| x.name.as_str()),
                    );
                    return Err(err_at(
                        src,
                        f,
                        format!(
                            "onFlavors {:?}: no such ResourceFlavor{hint}; expected one defined in the input",
                            f.value
                        ),
                    ));
                };
                check
                    .on_flavors
                    .push(kueuesim_model::FlavorId::from_index(i));
            }
            if per_cq.len() <= *cq {
                per_cq.resize(*cq + 1, None);
            }
            per_cq[*cq] = Some(check);
        }
        let pools = std::mem::take(&mut self.autoscaled_pools);
        if pools.is_empty() && per_cq.is_empty() {
            return Ok(());
        }
        per_cq.resize(self.world.cluster_queues.len(), None);
        self.world.autoscaling = Some(Box::new(Autoscaling {
            pools,
            checks: per_cq,
        }));
        Ok(())
    }
}
