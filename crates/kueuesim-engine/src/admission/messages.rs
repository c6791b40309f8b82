//! What the flavor assigner says about a workload it could not simply fit: the flavors
//! considered (`FormatFlavorAssignmentAttemptsForEvents`), the pod sets' messages and the
//! granular reason (`resolveNoFitReason`).
//!
//! Reasons are kept as data (`Reason`) and worded only when a message that holds them is
//! written: under overload most attempts' reasons are dropped (a flavor passed over, an
//! assignment the cycle does not keep), and formatting them was a tenth of the run.

use std::fmt::Write as _;

use kueuesim_model::objects::push_decimal;
use kueuesim_model::{Amount, FlavorId, ResourceId, Workload, World};

use crate::bound::Constraint;

use super::flavors::PMode;
use super::{
    NotAdmitted, REASON_EXCEEDS_MAX_QUOTA, REASON_NO_MATCHING_FLAVOR,
    REASON_TOPOLOGY_PLACEMENT_FAILED, REASON_WAITING_FOR_QUOTA,
};

/// Reason severities of `resolveNoFitReason`.
fn severity(reason: &str) -> u8 {
    match reason {
        REASON_NO_MATCHING_FLAVOR => 4,
        REASON_EXCEEDS_MAX_QUOTA => 3,
        REASON_WAITING_FOR_QUOTA => 2,
        REASON_TOPOLOGY_PLACEMENT_FAILED => 1,
        _ => 0,
    }
}

pub(super) fn most_severe(a: &'static str, b: &'static str) -> &'static str {
    if severity(a) >= severity(b) { a } else { b }
}

/// Why a flavor did not simply fit one resource, as the numbers the message needs
/// (`fitsResourceQuota`'s two messages), or, for the rare reasons, the words themselves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Reason {
    /// `insufficient quota for R in flavor F, previously considered podsets requests (A) +
    /// current podset request (Q) > maximum capacity (M)`.
    ExceedsMax {
        flavor: FlavorId,
        resource: ResourceId,
        assumed: i64,
        request: i64,
        max: i64,
    },
    /// `insufficient unused quota for R in flavor F, N more needed`; `requested` is what was
    /// asked in all (the earlier pod sets' and this one's), which `pendingBoundBy` reads
    /// against the quota tree.
    Unused {
        flavor: FlavorId,
        resource: ResourceId,
        needed: i64,
        requested: i64,
    },
    /// Worded already: flavor mismatches, skipped flavors, missing resources, TAS placement;
    /// with the constraint it stands for in `pendingBoundBy`, if any (a flavor that does not
    /// match the workload is no constraint: another flavor may).
    Text(Option<Constraint>, String),
}

impl Reason {
    /// Appends the reason's words to `out`.
    pub(super) fn write(&self, world: &World, out: &mut String) {
        match *self {
            Reason::ExceedsMax {
                flavor,
                resource,
                assumed,
                request,
                max,
            } => {
                let r = world.resources.name(resource);
                let _ = write!(
                    out,
                    "insufficient quota for {r} in flavor {}, previously considered podsets requests ({}) + current podset request ({}) > maximum capacity ({})",
                    world.flavor(flavor).name,
                    Amount(r, assumed),
                    Amount(r, request),
                    Amount(r, max)
                );
            }
            Reason::Unused {
                flavor,
                resource,
                needed,
                ..
            } => {
                // The fixed words are pushed as they are; only the amount needs formatting.
                let r = world.resources.name(resource);
                out.push_str("insufficient unused quota for ");
                out.push_str(r);
                out.push_str(" in flavor ");
                out.push_str(&world.flavor(flavor).name);
                out.push_str(", ");
                Amount(r, needed).push_to(out);
                out.push_str(" more needed");
            }
            Reason::Text(_, ref text) => out.push_str(text),
        }
    }

    fn text(&self, world: &World) -> String {
        let mut out = String::new();
        self.write(world, &mut out);
        out
    }
}

/// Sorts reasons by their words, as upstream sorts its message strings. One reason, the
/// common case, is worded nowhere here.
pub(super) fn sort_reasons(world: &World, reasons: &mut [Reason]) {
    if reasons.len() > 1 {
        reasons.sort_by_cached_key(|r| r.text(world));
    }
}

/// One flavor tried for a resource group: its mode and, for NoFit, its reason.
pub(super) struct Attempt {
    pub(super) flavor: FlavorId,
    pub(super) mode: PMode,
    pub(super) borrow: u32,
    /// Sorted.
    pub(super) reasons: Vec<Reason>,
    pub(super) no_fit_reason: &'static str,
}

/// Whether an attempt is told of in the message: all but a plain fit without borrowing.
fn is_shown(a: &Attempt) -> bool {
    !(a.mode == PMode::Fit && a.borrow == 0)
}

/// `FormatFlavorAssignmentAttemptsForEvents` for one pod set: every flavor considered that did
/// not simply fit without borrowing, sorted by flavor name:
/// `flavor(Mode[;borrow=N][;reasons])`, or `flavor(preemptionMode=P;...)` when preemption
/// was considered. Appended to `out`; nothing when every attempt is a plain fit.
fn write_attempts(world: &World, attempts: &[Attempt], out: &mut String) {
    let shown = |a: &&Attempt| is_shown(a);
    // Most admissions fit their one flavor without borrowing: nothing to say, no vector;
    // and most of the others (a ClusterQueue borrowing) have one flavor to tell of, which
    // needs no sorting either.
    let mut shown_ones = attempts.iter().filter(shown);
    let Some(first) = shown_ones.next() else {
        return;
    };
    if shown_ones.next().is_none() {
        write_attempt(world, first, out);
        return;
    }
    let mut sorted: Vec<&Attempt> = attempts.iter().filter(shown).collect();
    sorted.sort_by(|a, b| {
        world
            .flavor(a.flavor)
            .name
            .cmp(&world.flavor(b.flavor).name)
    });
    for (i, a) in sorted.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_attempt(world, a, out);
    }
}

/// One attempt of `write_attempts`: `flavor(Mode[;borrow=N][;reasons])`.
fn write_attempt(world: &World, a: &Attempt, out: &mut String) {
    out.push_str(&world.flavor(a.flavor).name);
    out.push('(');
    out.push_str(match a.mode {
        PMode::NoFit => "NoFit",
        PMode::Fit => "Fit",
        PMode::NoCandidates => "preemptionMode=NoCandidates",
        PMode::Preempt => "preemptionMode=Preempt",
        PMode::Reclaim => "preemptionMode=Reclaim",
    });
    if a.borrow > 0 {
        out.push_str(";borrow=");
        push_decimal(out, a.borrow as usize);
    }
    for r in &a.reasons {
        out.push(';');
        r.write(world, out);
    }
    out.push(')');
}

/// The flavors considered for each pod set, for the QuotaReserved event: `<pod set>: <attempts>`
/// joined by ` | ` over the pod sets with something to say.
/// `considered` holds each pod set's index in `pod_sets` and its attempts.
/// Written into `out`, an emptied string (a recycled one: this runs for every admission, and
/// the admission's event hands it back once copied).
pub(super) fn considered_message(
    world: &World,
    pod_sets: &[kueuesim_model::PodSet],
    considered: &[(usize, Vec<Attempt>)],
    mut out: String,
) -> String {
    // Written in place, each pod set's part taken back when its attempts say nothing.
    debug_assert!(out.is_empty());
    for (ps, attempts) in considered {
        let start = out.len();
        if start > 0 {
            out.push_str(" | ");
        }
        out.push_str(&pod_sets[*ps].name);
        out.push_str(": ");
        let text_at = out.len();
        write_attempts(world, attempts, &mut out);
        if out.len() == text_at {
            out.truncate(start);
        }
    }
    out
}

/// `considered_message` for one pod set with one flavor attempt (`assign_one_flavor`):
/// `<pod set>: <attempt>`, or nothing when the attempt is a plain fit without borrowing.
pub(super) fn considered_message_one(
    world: &World,
    pod_set: &str,
    attempt: &Attempt,
    mut out: String,
) -> String {
    debug_assert!(out.is_empty());
    if !is_shown(attempt) {
        return out;
    }
    out.push_str(pod_set);
    out.push_str(": ");
    write_attempt(world, attempt, &mut out);
    out
}

/// `resolveNoFitReason` for a pod set that failed, over the flavor attempts of every resource
/// group processed for it: within a group the least severe NoFit attempt stands for the group
/// (an alternative was closer), across groups the most severe wins (co-requisites). With no
/// attempt at all it is `NoMatchingFlavor`; with no NoFit attempt upstream computes an empty
/// reason, which the API would reject: kueuesim writes `Pending`, the reason Kueue used before
/// `UnadmittedWorkloadsObservability`.
pub(super) fn resolve_no_fit_reason(
    queue: &kueuesim_model::ClusterQueue,
    attempts: &[Attempt],
) -> &'static str {
    if attempts.is_empty() {
        return REASON_NO_MATCHING_FLAVOR;
    }
    // Group by group (a flavor belongs to the first group listing it), without a vector:
    // this runs for every pod set that fails, and a ClusterQueue has few groups.
    let group_of = |f: FlavorId| {
        queue
            .resource_groups
            .iter()
            .position(|g| g.flavors.iter().any(|x| x.flavor == f))
    };
    let mut reason = "";
    for g in 0..queue.resource_groups.len() {
        let mut least: Option<&'static str> = None;
        for a in attempts.iter().filter(|a| a.mode == PMode::NoFit) {
            if group_of(a.flavor) != Some(g) {
                continue;
            }
            least = Some(match least {
                Some(r) if severity(r) <= severity(a.no_fit_reason) => r,
                _ => a.no_fit_reason,
            });
        }
        if let Some(least) = least {
            reason = most_severe(reason, least);
        }
    }
    if reason.is_empty() { "Pending" } else { reason }
}

/// Why an assignment is not a plain fit (`Assignment.Message` and the condition reason),
/// kept as data: the cycle words it only for the assignment it keeps
/// (`Unfit::not_admitted`), not for the partial-admission attempts it drops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfit {
    /// The granular reason (`UnadmittedWorkloadsObservability`).
    pub(super) reason: &'static str,
    /// Per pod set with something to say (its index in the workload), its sorted reasons.
    pub(super) pod_sets: Vec<(usize, Vec<Reason>)>,
}

/// What a message's `String` starts with: a one-reason message ("couldn't assign flavors to
/// pod set main: insufficient unused quota for nvidia.com/gpu in flavor default, 8 more
/// needed") is about 120 bytes.
pub(super) const MESSAGE_CAPACITY: usize = 192;

impl Unfit {
    /// `Assignment.Message` of workload `wl`: `couldn't assign flavors to pod set <ps>:
    /// <reasons>` joined by `; `, written into `out`.
    pub(super) fn write_message(&self, world: &World, wl: &Workload, out: &mut String) {
        for (i, (ps, reasons)) in self.pod_sets.iter().enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            out.push_str("couldn't assign flavors to pod set ");
            out.push_str(&wl.pod_sets[*ps].name);
            out.push_str(": ");
            for (j, r) in reasons.iter().enumerate() {
                if j > 0 {
                    out.push_str(", ");
                }
                r.write(world, out);
            }
        }
    }

    /// The `QuotaReserved=False` condition of workload `wl` this stands for, with what held
    /// it back (`bound`). The message is written into `message`, an emptied string the
    /// caller recycles.
    pub(super) fn not_admitted(
        &self,
        world: &World,
        wl: &Workload,
        mut message: String,
        bound: crate::bound::BoundSet,
    ) -> NotAdmitted {
        self.write_message(world, wl, &mut message);
        NotAdmitted {
            reason: self.reason,
            message,
            bound,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::ResourceFlavor;

    /// `push_decimal` writes what `{}` formats, for every borrowing level a message names.
    #[test]
    fn decimal_digits_as_formatted() {
        for n in [0, 1, 9, 10, 99, 100, 12345, 4_000_000_000, u32::MAX] {
            let mut out = String::from("x");
            push_decimal(&mut out, n as usize);
            assert_eq!(out, format!("x{n}"));
        }
    }

    /// Reasons are kept as data but ordered by their words, as upstream sorts its message
    /// strings: here the data's order (variant, flavor id) is not the words' order.
    #[test]
    fn reasons_sort_by_their_words_not_their_data() {
        let mut w = World::default();
        let cpu = w.resources.intern("cpu");
        let gpu = w.resources.intern("nvidia.com/gpu");
        for name in ["zeta", "alpha"] {
            w.flavors.push(ResourceFlavor {
                name: name.into(),
                ..Default::default()
            });
        }
        let (zeta, alpha) = (FlavorId::from_index(0), FlavorId::from_index(1));
        let mut reasons = vec![
            Reason::Unused {
                flavor: zeta,
                resource: cpu,
                needed: 2000,
                requested: 4000,
            },
            Reason::Unused {
                flavor: alpha,
                resource: gpu,
                needed: 1,
                requested: 8,
            },
            Reason::Text(None, "flavor alpha skipped".into()),
            Reason::ExceedsMax {
                flavor: zeta,
                resource: cpu,
                assumed: 0,
                request: 3000,
                max: 1000,
            },
        ];
        sort_reasons(&w, &mut reasons);
        let words: Vec<String> = reasons.iter().map(|r| r.text(&w)).collect();
        assert_eq!(
            words,
            [
                "flavor alpha skipped",
                "insufficient quota for cpu in flavor zeta, previously considered podsets requests (0) + current podset request (3) > maximum capacity (1)",
                "insufficient unused quota for cpu in flavor zeta, 2 more needed",
                "insufficient unused quota for nvidia.com/gpu in flavor alpha, 1 more needed",
            ]
        );
    }
}
