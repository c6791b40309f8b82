//! What Kueue and the schedulers write on a workload: its conditions (as
//! `apimeta.SetStatusCondition` sets them) and its events, with their sources and reasons.

use kueuesim_model::{SimTime, WorkloadId};

use crate::outcome::{Condition, ConditionType, Event, EventType};
use crate::preemption::PreemptionReason;

use super::Simulation;

/// The event source of Kueue's scheduler.
pub(super) const KUEUE_ADMISSION: &str = "kueue-admission";

/// The event source of Kueue's workload controller.
pub(super) const KUEUE_WORKLOAD_CONTROLLER: &str = "kueue-workload-controller";

impl<'w> Simulation<'w> {
    /// `QuotaReserved=False` with `reason`, and `Admitted=False` (`NoReservation`), as
    /// `UnsetQuotaReservationWithCondition` writes them.
    pub(super) fn set_pending_condition(
        &mut self,
        w: WorkloadId,
        reason: &'static str,
        message: impl Into<std::borrow::Cow<'static, str>>,
    ) {
        self.set_condition(w, ConditionType::QuotaReserved, false, reason, message);
        // Already so after every failed attempt but the first: skip building the message.
        let already =
            self.runtimes[w.index()].record.conditions.iter().any(|c| {
                c.kind == ConditionType::Admitted && !c.status && c.reason == "NoReservation"
            });
        if !already {
            self.set_condition(
                w,
                ConditionType::Admitted,
                false,
                "NoReservation",
                "The workload has no reservation",
            );
        }
    }

    pub(super) fn set_condition(
        &mut self,
        w: WorkloadId,
        kind: ConditionType,
        status: bool,
        reason: &'static str,
        message: impl Into<std::borrow::Cow<'static, str>>,
    ) {
        self.set_condition_at(w, kind, status, reason, message, self.now);
    }

    /// Sets a condition the way `apimeta.SetStatusCondition` does: lastTransitionTime moves
    /// only when the status changes.
    pub(super) fn set_condition_at(
        &mut self,
        w: WorkloadId,
        kind: ConditionType,
        status: bool,
        reason: &'static str,
        message: impl Into<std::borrow::Cow<'static, str>>,
        at: SimTime,
    ) {
        let message = message.into();
        let conds = &mut self.runtimes[w.index()].record.conditions;
        match conds.iter_mut().find(|c| c.kind == kind) {
            Some(c) => {
                if c.status != status {
                    c.at = at;
                }
                c.status = status;
                c.reason = reason;
                // The replaced message's string serves a later message (under overload
                // every failed attempt rewrites its condition); fixed words are borrowed.
                if let std::borrow::Cow::Owned(old) = std::mem::replace(&mut c.message, message) {
                    self.kueue.cycle_scratch.give_string(old);
                }
            }
            None => conds.push(Condition {
                kind,
                status,
                reason,
                message,
                at,
            }),
        }
        if kind == ConditionType::PodsReady {
            self.track_ready(w);
        }
    }

    /// Records an event, folding an exact repeat of the workload's previous event of the same
    /// source into it (as the event recorder aggregates repeats into a count). A borrowed
    /// message is copied only if the event is kept (a head requeued with the message of its
    /// previous attempt, as under overload, then costs no copy).
    pub(super) fn record_event<'m>(
        &mut self,
        w: WorkloadId,
        kind: EventType,
        source: &'static str,
        reason: &'static str,
        message: impl Into<std::borrow::Cow<'m, str>>,
        cycle: Option<u64>,
    ) {
        let message = message.into();
        let events = &mut self.runtimes[w.index()].record.events;
        let previous = events.iter().rposition(|e| e.source == source);
        if let Some(last) = previous.map(|i| &events[i])
            && last.kind == kind
            && last.reason == reason
            && last.message == *message
        {
            return;
        }
        // The newest event stays last: in a run that keeps only the last event per source, the
        // source's older one goes, and its string takes the new message.
        let mut recycled = None;
        if self.rec.last_events_only
            && let Some(i) = previous
        {
            recycled = Some(events.remove(i).message);
        }
        let message = match message {
            std::borrow::Cow::Owned(s) => {
                if let Some(r) = recycled {
                    self.kueue.cycle_scratch.give_string(r);
                }
                s
            }
            std::borrow::Cow::Borrowed(text) => match recycled {
                Some(mut s) => {
                    s.clear();
                    s.push_str(text);
                    s
                }
                // Exactly as long as the text: a run that keeps every event holds it.
                None => text.to_owned(),
            },
        };
        let e = Event {
            at: self.now,
            kind,
            source,
            reason,
            message,
            cycle,
        };
        if let Some(out) = self.outbox.as_mut().filter(|o| o.wants_events()) {
            out.push_event(w, self.runtimes[w.index()].spec.clone(), e.clone());
        }
        self.runtimes[w.index()].record.events.push(e);
    }
}

/// `HumanReadablePreemptionReasons`.
pub(super) fn human_reason(r: PreemptionReason) -> &'static str {
    match r {
        PreemptionReason::InClusterQueue => "prioritization in the ClusterQueue",
        PreemptionReason::InCohortReclamation => "reclamation within the cohort",
        PreemptionReason::InCohortFairSharing => "Fair Sharing within the cohort",
        PreemptionReason::InCohortReclaimWhileBorrowing => {
            "reclamation within the cohort while borrowing"
        }
    }
}

/// The event reason of an eviction: `Evicted` + `DueTo` + the Evicted condition's reason.
pub(super) fn evicted_event_reason(reason: &str) -> &'static str {
    match reason {
        "Preempted" => "EvictedDueToPreempted",
        "PodsReadyTimeout" => "EvictedDueToPodsReadyTimeout",
        "ClusterQueueStopped" => "EvictedDueToClusterQueueStopped",
        "LocalQueueStopped" => "EvictedDueToLocalQueueStopped",
        "NodeFailures" => "EvictedDueToNodeFailures",
        "Deactivated" => "EvictedDueToDeactivated",
        "DeactivatedDueToMaximumExecutionTimeExceeded" => {
            "EvictedDueToDeactivatedDueToMaximumExecutionTimeExceeded"
        }
        "DeactivatedDueToRequeuingLimitExceeded" => {
            "EvictedDueToDeactivatedDueToRequeuingLimitExceeded"
        }
        "AdmissionCheck" => "EvictedDueToAdmissionCheck",
        "DeactivatedDueToAdmissionCheck" => "EvictedDueToDeactivatedDueToAdmissionCheck",
        _ => "Evicted",
    }
}
