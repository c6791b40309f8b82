//! Capacity on demand: NodePools the cluster-autoscaler grows and shrinks between a minimum
//! and a maximum (`spec.autoscaling` of a NodePool), and Kueue's `ProvisioningRequest`
//! admission check (AdmissionCheck with controllerName
//! `kueue.x-k8s.io/provisioning-request`, its ProvisioningRequestConfig) in front of them.

use crate::ids::{ClusterQueueId, NodeId};
use crate::time::SimDuration;

/// The cluster-autoscaler's `--scale-down-unneeded-time` default: how long a node stays
/// empty before it is removed.
pub const DEFAULT_SCALE_DOWN_UNNEEDED: SimDuration = SimDuration::from_secs(600);
/// The cluster-autoscaler's `--scale-down-delay-after-add` default: no scale-down this long
/// after a scale-up.
pub const SCALE_DOWN_DELAY_AFTER_ADD: SimDuration = SimDuration::from_secs(600);
/// kueuesim's default time from a scale-up to the new node being Ready (a cloud VM's boot and
/// registration; upstream this is the cloud provider's, not the autoscaler's).
pub const DEFAULT_PROVISIONING_DELAY: SimDuration = SimDuration::from_secs(300);

/// One NodePool with `spec.autoscaling`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoscaledPool {
    /// The NodePool's name.
    pub name: String,
    /// Its nodes in index order, `max` of them; those from `min` on are away at the start.
    pub nodes: Vec<NodeId>,
    /// The nodes the pool lays out (its levels and `nodesPerDomain`), consecutive ids from
    /// the first: those from `max` on never join.
    pub laid_out: u32,
    /// `autoscaling.min`: nodes there at the start, and the floor of a scale-down.
    pub min: u32,
    /// `autoscaling.provisioningDelay`: from the scale-up to the node taking pods.
    pub provisioning_delay: SimDuration,
    /// `autoscaling.scaleDownUnneeded`: how long a node stays empty before it goes.
    pub scale_down_unneeded: SimDuration,
}

/// `ProvisioningRequestConfig.spec.provisioningClassName`, the classes the cluster-autoscaler
/// implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProvisioningClass {
    /// `check-capacity.autoscaling.x-k8s.io`: capacity that is there now, no scale-up.
    CheckCapacity,
    /// `best-effort-atomic-scale-up.autoscaling.x-k8s.io`: a scale-up of every node the
    /// pods need, or none.
    BestEffortAtomic,
}

impl ProvisioningClass {
    /// The class names, in the order of the variants.
    pub const NAMES: [&'static str; 2] = [
        "check-capacity.autoscaling.x-k8s.io",
        "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
    ];

    /// The class name as written.
    pub fn as_str(self) -> &'static str {
        match self {
            ProvisioningClass::CheckCapacity => Self::NAMES[0],
            ProvisioningClass::BestEffortAtomic => Self::NAMES[1],
        }
    }
}

/// A ClusterQueue's ProvisioningRequest admission check, with its config resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvisioningCheck {
    /// The AdmissionCheck's name.
    pub name: String,
    /// The config's `provisioningClassName`.
    pub class: ProvisioningClass,
    /// `retryStrategy.backoffLimitCount` (default 3): failed requests retried.
    pub backoff_limit_count: u32,
    /// `retryStrategy.backoffBaseSeconds` (default 60).
    pub backoff_base: SimDuration,
    /// `retryStrategy.backoffMaxSeconds` (default 1800).
    pub backoff_max: SimDuration,
    /// `admissionChecksStrategy.admissionChecks[].onFlavors`: the check applies only to a
    /// workload assigned one of these flavors (empty: to every workload).
    pub on_flavors: Vec<crate::ids::FlavorId>,
}

impl ProvisioningCheck {
    /// The wait before retry `n` (1-based): `backoffBaseSeconds·2^(n−1)` capped at
    /// `backoffMaxSeconds` (`UpdateAdmissionCheckRequeueState`; its jitter of 0.0001 is
    /// truncated away with the sub-second part).
    pub fn backoff(&self, n: u32) -> SimDuration {
        let base = self.backoff_base.millis();
        let factor = 1i64.checked_shl(n.saturating_sub(1)).unwrap_or(i64::MAX);
        SimDuration::from_millis(base.saturating_mul(factor).min(self.backoff_max.millis()))
    }
}

/// Everything autoscaled in a world.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Autoscaling {
    /// The autoscaled NodePools, in name order.
    pub pools: Vec<AutoscaledPool>,
    /// Per ClusterQueue (by index), its ProvisioningRequest check, if it has one.
    pub checks: Vec<Option<ProvisioningCheck>>,
}

impl Autoscaling {
    /// The check of ClusterQueue `cq`, if it has one.
    pub fn check(&self, cq: ClusterQueueId) -> Option<&ProvisioningCheck> {
        self.checks.get(cq.index()).and_then(Option::as_ref)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let c = ProvisioningCheck {
            name: "p".into(),
            class: ProvisioningClass::BestEffortAtomic,
            backoff_limit_count: 3,
            backoff_base: SimDuration::from_secs(60),
            backoff_max: SimDuration::from_secs(1800),
            on_flavors: Vec::new(),
        };
        let secs: Vec<i64> = (1..=7).map(|n| c.backoff(n).millis() / 1000).collect();
        assert_eq!(secs, [60, 120, 240, 480, 960, 1800, 1800]);
    }
}
