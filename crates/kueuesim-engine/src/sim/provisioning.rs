//! Kueue's ProvisioningRequest admission check (`pkg/controller/admissionchecks/provisioning`)
//! and the cluster-autoscaler's answer to each request (docs/semantics.md, "Capacity on
//! demand"); the autoscaler itself is `autoscale.rs`.

use kueuesim_model::autoscale::{ProvisioningCheck, ProvisioningClass};
use kueuesim_model::{ClusterQueueId, WorkloadId};

use crate::outcome::{AutoscalingStats, ConditionType, EventType, WorkloadState};
use crate::placement::PodNeeds;

use super::autoscale::BOOKING;
use super::record::KUEUE_WORKLOAD_CONTROLLER;
use super::{Ev, Simulation};

/// The event source of Kueue's provisioning admission check controller.
pub(super) const KUEUE_PROVISIONING: &str = "kueue-provisioning-request-controller";

/// The cluster-autoscaler's condition message on a ProvisioningRequest it provisioned
/// (`CapacityIsProvisionedMsg`, the same words as `CapacityIsFoundMsg`).
const PROVISIONED_MSG: &str = "Capacity is found in the cluster";
/// Its `Failed` message when it finds no capacity for a request that does not retry
/// (`setCapacityNotFoundCondition` with `noRetry`).
const FAILED_MSG: &str = "CA could not find requested capacity";

impl<'w> Simulation<'w> {
    /// The check of ClusterQueue `cq` that applies to an assignment of these flavors.
    pub(super) fn provisioning_check(
        &self,
        cq: ClusterQueueId,
        flavors: impl Iterator<Item = kueuesim_model::FlavorId>,
    ) -> Option<&'w ProvisioningCheck> {
        let check = self.origin.autoscaling.as_ref()?.check(cq)?;
        let mut flavors = flavors;
        (check.on_flavors.is_empty() || flavors.any(|f| check.on_flavors.contains(&f)))
            .then_some(check)
    }

    /// Quota reserved under a ProvisioningRequest check: the provisioning controller
    /// creates the request, which the cluster-autoscaler then answers (`Ev::Provision`).
    pub(super) fn provisioning_start(&mut self, w: WorkloadId, check: &'w ProvisioningCheck) {
        let attempt = self
            .autoscale
            .as_ref()
            .and_then(|s| s.retries.get(&w).copied())
            .unwrap_or(0)
            + 1;
        let name = format!("{}-{}-{attempt}", self.spec(w).name, check.name);
        self.record_event(
            w,
            EventType::Normal,
            KUEUE_PROVISIONING,
            "ProvisioningRequestCreated",
            format!("Created ProvisioningRequest: {name:?}"),
            None,
        );
        self.rec
            .stats
            .autoscaling
            .get_or_insert_with(AutoscalingStats::default)
            .provisioning_requests += 1;
        let g = self.runtimes[w.index()].generation;
        self.events.push(self.now, Ev::Provision(w, g));
    }

    /// The cluster-autoscaler answers the ProvisioningRequest of `w`, and Kueue's provisioning
    /// controller and workload controller act on the answer.
    pub(super) fn provision(&mut self, w: WorkloadId) {
        if self.runtimes[w.index()].record.state != WorkloadState::QuotaReserved {
            return;
        }
        let Some(cq) = self.runtimes[w.index()]
            .record
            .admission
            .as_ref()
            .map(|a| a.cluster_queue)
        else {
            return;
        };
        let Some(check) = self.origin.autoscaling.as_ref().and_then(|a| a.check(cq)) else {
            return;
        };
        let needs = self.pod_needs(w);
        let pods: Vec<&PodNeeds> = {
            let rt = &self.runtimes[w.index()];
            let mut pods = Vec::new();
            for (ps, need) in needs.iter().enumerate() {
                let count = rt
                    .record
                    .admission
                    .as_ref()
                    .and_then(|a| a.pod_sets.get(ps))
                    .map_or(rt.spec.pod_sets[ps].count, |a| a.count);
                pods.extend(std::iter::repeat_n(need, count as usize));
            }
            pods
        };
        let plan = if self.autoscale.is_some() && self.world.has_nodes() {
            Some(self.plan_for(w, &pods))
        } else {
            None
        };
        let provisioned = match (&plan, check.class) {
            // Without nodes there is nothing to provision: the capacity is the quota's.
            (None, _) => true,
            (Some(p), ProvisioningClass::CheckCapacity) => p.new_nodes == 0,
            (Some(p), ProvisioningClass::BestEffortAtomic) => {
                p.new_nodes == 0
                    || p.pool
                        .is_some_and(|pool| p.new_nodes <= self.headroom(pool))
            }
        };
        if provisioned {
            if let Some(p) = plan {
                match p.pool {
                    Some(pool) if p.new_nodes > 0 => {
                        self.scale_up(pool, p.new_nodes, w, &p.existing);
                    }
                    _ => {
                        let until = self.now + BOOKING;
                        let st = self.autoscale.as_mut().expect("autoscale state");
                        for &n in &p.existing {
                            st.booked[n.index()] = Some((w, until));
                        }
                    }
                }
            }
            self.record_event(
                w,
                EventType::Normal,
                KUEUE_PROVISIONING,
                "AdmissionCheckUpdated",
                format!(
                    "Admission check {} updated state from Pending to Ready with message: {PROVISIONED_MSG}",
                    check.name
                ),
                None,
            );
            let reserved_at = self.runtimes[w.index()]
                .record
                .conditions
                .iter()
                .find(|c| c.kind == ConditionType::QuotaReserved && c.status)
                .map_or(self.now, |c| c.at);
            let cq_name = &self.world.cluster_queue(cq).name;
            let mut msg =
                format!("Admitted by ClusterQueue {cq_name}, wait time since reservation was ");
            (self.now - reserved_at).push_whole_secs(&mut msg);
            msg.push('s');
            self.record_event(
                w,
                EventType::Normal,
                KUEUE_WORKLOAD_CONTROLLER,
                "Admitted",
                msg,
                None,
            );
            self.complete_admission(w, self.now, false);
            return;
        }
        // Failed: retried with back-off while attempts last, then rejected.
        let st = self.autoscale.as_mut().expect("autoscale state");
        let retries = st.retries.get(&w).copied().unwrap_or(0);
        let attempt = retries + 1;
        let stats = self
            .rec
            .stats
            .autoscaling
            .get_or_insert_with(AutoscalingStats::default);
        stats.provisioning_failed += 1;
        if attempt <= check.backoff_limit_count {
            st.retries.insert(w, attempt);
            let message = format!("Retrying after failure: {FAILED_MSG}");
            self.record_event(
                w,
                EventType::Normal,
                KUEUE_PROVISIONING,
                "AdmissionCheckUpdated",
                format!(
                    "Admission check {} updated state from Pending to Retry with message: {message}",
                    check.name
                ),
                None,
            );
            self.runtimes[w.index()].requeue_at = Some(self.now + check.backoff(attempt));
            self.release_quota(w);
            self.evict(
                w,
                "AdmissionCheck",
                None,
                None,
                format!(
                    "Evicted due to AdmissionCheck in Retry state: {:?} ({message})",
                    check.name
                ),
                None,
            );
        } else {
            stats.provisioning_rejected += 1;
            let detail = format!(
                "AdmissionCheck in Rejected state: {:?} ({FAILED_MSG})",
                check.name
            );
            self.record_event(
                w,
                EventType::Normal,
                KUEUE_PROVISIONING,
                "AdmissionCheckUpdated",
                format!(
                    "Admission check {} updated state from Pending to Rejected with message: {FAILED_MSG}",
                    check.name
                ),
                None,
            );
            self.record_event(
                w,
                EventType::Warning,
                KUEUE_WORKLOAD_CONTROLLER,
                "AdmissionCheckRejected",
                format!("Deactivated due to {detail}"),
                None,
            );
            self.runtimes[w.index()].deactivated = true;
            self.release_quota(w);
            self.evict(
                w,
                "DeactivatedDueToAdmissionCheck",
                None,
                None,
                format!("The workload is deactivated due to {detail}"),
                None,
            );
        }
    }
}
