//! Kueue admission, one scheduling cycle (`run_cycle`): nominate heads (flavor assignment with
//! the preemption oracle), order them, and process them against a snapshot whose usage
//! accumulates.
//!
//! Follows `pkg/scheduler/scheduler.go` (`schedule`, `nominate`, `getInitialAssignments`,
//! `processEntry`, `makeClassicalIterator`) and `pkg/scheduler/flavorassigner/flavorassigner.go`
//! (`assignFlavors`, `findFlavorForPodSets`, `fitsResourceQuota`, `isPreferred`,
//! `shouldTryNextFlavor`, `resolveNoFitReason`). The cycle is a function of the world, the
//! quota tree and the admitted workloads: it changes the tree only inside an undo mark, and
//! returns its decisions as data for the engine to apply.
//!
//! This file holds the cycle's vocabulary (heads, decisions, assignments, reasons);
//! `cycle` nominates, orders and processes the heads, `flavors` assigns flavors (with the
//! preemption oracle and TAS), and `messages` words what did not fit.

mod binding;
mod cycle;
mod flavors;
mod messages;
mod one_flavor;
mod pod_set_fit;
mod tas_fit;

pub use cycle::run_cycle;
pub(crate) use flavors::topology_assignment_within;
pub use flavors::{Scratch as CycleScratch, usage_of};
pub use messages::Unfit;
pub(crate) use pod_set_fit::tas_request;
pub(crate) use tas_fit::tas_flavor_of;

use kueuesim_model::quota::Fr;
use kueuesim_model::{ClusterQueueId, ResourceId, Workload, WorkloadId};

use crate::bound::BoundSet;
use crate::outcome::PodSetAssignment;
use crate::preemption::Target;
use crate::queues::{QueueKey, RequeueReason};

/// `WaitingForQuota`.
pub const REASON_WAITING_FOR_QUOTA: &str = "WaitingForQuota";
/// `ExceedsMaxQuota`.
pub const REASON_EXCEEDS_MAX_QUOTA: &str = "ExceedsMaxQuota";
/// `NoMatchingFlavor`.
pub const REASON_NO_MATCHING_FLAVOR: &str = "NoMatchingFlavor";
/// `TopologyPlacementFailed`: the pod set does not fit its TAS flavor's topology even on an
/// empty cluster (`WithSimulateEmpty`).
pub const REASON_TOPOLOGY_PLACEMENT_FAILED: &str = "TopologyPlacementFailed";
/// `Misconfigured`.
pub const REASON_MISCONFIGURED: &str = "Misconfigured";
/// `Suspended`.
pub const REASON_SUSPENDED: &str = "Suspended";
/// `WaitingForPreemptedWorkloads`.
pub const REASON_WAITING_FOR_PREEMPTED: &str = "WaitingForPreemptedWorkloads";

/// Why a workload did not get quota, as the `QuotaReserved=False` condition says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAdmitted {
    /// The granular reason (`UnadmittedWorkloadsObservability`).
    pub reason: &'static str,
    /// Kueue's message.
    pub message: String,
    /// What held it back (`pendingBoundBy`); empty when the decision says nothing new (a
    /// head skipped because another entry of the cycle took the quota first).
    pub bound: BoundSet,
}

/// The representative mode of an assignment (`FlavorAssignmentMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Cannot be admitted now.
    NoFit,
    /// Can be admitted after preempting (or, with no targets, not at all this cycle).
    Preempt,
    /// Fits.
    Fit,
}

/// A flavor assignment of a whole workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// Per pod set (up to the first that failed), the flavors and counts.
    pub pod_sets: Vec<PodSetAssignment>,
    /// The quota it uses, per `Fr` (sorted, merged).
    pub usage: Vec<(Fr, i64)>,
    /// The representative mode.
    pub mode: Mode,
    /// The borrowing level: 0 within nominal, else the height of the subtree it borrows from.
    pub borrowing: u32,
    /// The `Fr`s assigned in preempt mode (`frsNeedPreemption`).
    pub contested: Vec<Fr>,
    /// For a mode other than `Fit`: the condition reason and what Kueue's message says, as
    /// data (the cycle words it for the assignment it keeps: `Unfit::not_admitted`).
    pub not_admitted: Option<Unfit>,
    /// The flavors considered that did not simply fit, for the QuotaReserved event
    /// (`FormatFlavorAssignmentAttemptsForEvents`); empty when there is nothing to say.
    pub considered: String,
    /// How far the flavor scan got, per pod set (`Assignment.LastState.LastTriedFlavorIdx`).
    pub last_tried: Vec<Vec<(ResourceId, i32)>>,
}

/// A workload's flavor-scan progress, kept between its attempts (`Info.LastAssignment`,
/// `AssignmentClusterQueueState` in upstream's `pkg/workload/workload.go`).
///
/// The scheduler equivalence hash upstream also records (`MatchesSchedulingShape`) is not
/// kept: a pending workload's pod sets never change in kueuesim, and an evicted workload
/// starts without progress (upstream builds it a new `Info`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanProgress {
    /// Per pod set, per resource assigned, the index (in its resource group) of the last
    /// flavor the scan tried, or -1 when that was the group's last flavor
    /// (`LastTriedFlavorIdx`). A pod set without a flavor has no entries.
    pub last_tried: Vec<Vec<(ResourceId, i32)>>,
    /// The ClusterQueue's allocatable generation when it was recorded
    /// (`ClusterQueueGeneration`).
    pub cq_generation: u64,
    /// The cycle that recorded it (`SchedulingCycle`).
    pub cycle: u64,
}

impl ScanProgress {
    /// `PendingFlavors`: whether some resource still has flavors after the last one tried.
    pub fn pending_flavors(&self) -> bool {
        self.last_tried.iter().flatten().any(|&(_, idx)| idx != -1)
    }

    /// `NextFlavorToTryForPodSetResource`: where the scan of pod set `ps`'s group that
    /// starts with resource `r` resumes (0 when nothing was recorded for it). Upstream gates
    /// this on `FlavorFungibility`, GA and always on.
    pub fn next_flavor(&self, ps: usize, r: ResourceId) -> usize {
        self.last_tried
            .get(ps)
            .and_then(|m| m.iter().find(|e| e.0 == r))
            .map_or(0, |&(_, idx)| (idx + 1) as usize)
    }

    /// A fingerprint of workload `w` holding this progress (its `LastTriedFlavorIdx`, as a
    /// set per pod set: upstream keeps a map per pod set), for telling whether a run of
    /// cycles at one instant came back to a state it had (`sim::cycle::ScanLoop`). 0 stands
    /// for no progress, so fingerprints of workloads combine by XOR.
    pub fn fingerprint(&self, w: WorkloadId) -> u64 {
        let mut h = mix(0x5CA9_u64 ^ (u64::from(w.0) << 16));
        for (ps, tried) in self.last_tried.iter().enumerate() {
            // Entries of one pod set in any order: their hashes are summed.
            let set = tried.iter().fold(0u64, |acc, &(r, idx)| {
                acc.wrapping_add(mix((u64::from(r.0) << 32) | u64::from(idx.cast_unsigned())))
            });
            h = mix(h ^ set ^ ((ps as u64 + 1) << 48));
        }
        // Never 0, which stands for no progress.
        h | 1
    }

    /// `lastAssignmentOutdated`: whether the progress no longer describes the ClusterQueue,
    /// so the scan starts over. Without `FlavorFungibilityPreserveScanProgress`, any change
    /// of the ClusterQueue's allocatable generation (an admitted workload of it updated or
    /// removed) outdates it; with the gate, progress from this or the previous cycle is kept
    /// regardless, as on a busy cluster the generation moves every cycle.
    pub fn outdated(&self, cq_generation: u64, cycle: u64, preserve_scan_progress: bool) -> bool {
        if preserve_scan_progress && cycle.saturating_sub(self.cycle) <= 1 {
            return false;
        }
        cq_generation > self.cq_generation
    }
}

/// What a cycle needs to resume flavor scans: the cycle's number (upstream's
/// `schedulingCycle`) and each ClusterQueue's allocatable generation
/// (`AllocatableResourceGeneration`), by ClusterQueue id.
#[derive(Clone, Copy, Debug)]
pub struct ScanClock<'a> {
    /// This cycle's number.
    pub cycle: u64,
    /// Per ClusterQueue, its allocatable generation.
    pub cq_generations: &'a [u64],
}

/// Where a cycle reads the spec of a head's workload (the engine's live workloads).
pub trait Specs {
    /// The spec of workload `w`, which has arrived.
    fn spec(&self, w: WorkloadId) -> &Workload;

    /// The flavor-scan progress of pending workload `w` from its earlier attempts
    /// (`LastAssignment`), if any.
    fn last_assignment(&self, _w: WorkloadId) -> Option<&ScanProgress> {
        None
    }

    /// The pod set assignments of workload `w`'s latest admission (what Kueue TAS's
    /// snapshot counts of a workload holding quota: its topology assignments), if any.
    fn admission(&self, _w: WorkloadId) -> Option<&[PodSetAssignment]> {
        None
    }
}

/// A head popped for this cycle.
#[derive(Clone, Copy, Debug)]
pub struct Head {
    /// Its ClusterQueue.
    pub cq: ClusterQueueId,
    /// Its queue position.
    pub key: QueueKey,
}

/// What the cycle decided for one head.
#[derive(Clone, Debug)]
pub enum Decision {
    /// Reserve quota now.
    Admit {
        /// The head.
        head: Head,
        /// Its flavors.
        assignment: Assignment,
    },
    /// Evict `targets` for it; it stays at the head of its queue until they are gone.
    Preempt {
        /// The head.
        head: Head,
        /// The victims.
        targets: Vec<Target>,
        /// Why it is not admitted yet (`WaitingForPreemptedWorkloads`).
        not_admitted: NotAdmitted,
    },
    /// Not admitted this cycle.
    Requeue {
        /// The head.
        head: Head,
        /// Where the queue puts it.
        reason: RequeueReason,
        /// Why.
        not_admitted: NotAdmitted,
        /// The flavor-scan progress it keeps (`LastAssignment` after the cycle); with
        /// pending flavors a BestEffortFIFO head stays active.
        scan: Option<ScanProgress>,
    },
}

impl Decision {
    /// The head the decision is about.
    pub fn head(&self) -> &Head {
        match self {
            Decision::Admit { head, .. }
            | Decision::Preempt { head, .. }
            | Decision::Requeue { head, .. } => head,
        }
    }

    /// The head this decision is about, mutable.
    pub fn head_mut(&mut self) -> &mut Head {
        match self {
            Decision::Admit { head, .. }
            | Decision::Preempt { head, .. }
            | Decision::Requeue { head, .. } => head,
        }
    }
}

/// SplitMix64's finalizer: a fixed mixer, so fingerprints are the same on every run.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(last_tried: Vec<Vec<(ResourceId, i32)>>) -> ScanProgress {
        ScanProgress {
            last_tried,
            cq_generation: 3,
            cycle: 10,
        }
    }

    #[test]
    fn the_scan_resumes_after_the_last_flavor_tried() {
        let (cpu, mem) = (ResourceId(0), ResourceId(1));
        let p = progress(vec![vec![(cpu, 0), (mem, 0)], vec![(cpu, -1)], vec![]]);
        assert!(p.pending_flavors());
        assert_eq!(p.next_flavor(0, cpu), 1);
        // The last flavor was tried: start over; nothing recorded: start at the first.
        assert_eq!(p.next_flavor(1, cpu), 0);
        assert_eq!(p.next_flavor(2, cpu), 0);
        assert_eq!(p.next_flavor(3, cpu), 0);
        assert_eq!(p.next_flavor(1, mem), 0);
        assert!(!progress(vec![vec![(cpu, -1)], vec![]]).pending_flavors());
    }

    #[test]
    fn fingerprints_tell_progress_states_and_workloads_apart() {
        let (cpu, mem) = (ResourceId(0), ResourceId(1));
        let p = |a: i32, b: Option<i32>| {
            progress(vec![
                vec![(cpu, a)],
                b.map(|b| vec![(cpu, b)]).unwrap_or_default(),
            ])
        };
        let w = WorkloadId(7);
        // The two states a workload of two pod sets alternates between when its second pod
        // set fits only on a flavor its scan skips every other attempt.
        assert_ne!(p(-1, Some(1)).fingerprint(w), p(-1, None).fingerprint(w));
        assert_ne!(p(0, None).fingerprint(w), p(0, Some(0)).fingerprint(w));
        assert_ne!(p(0, Some(1)).fingerprint(w), p(1, Some(0)).fingerprint(w));
        // A pod set that failed (no entries) differs from one not tried (absent).
        assert_ne!(
            progress(vec![vec![(cpu, -1)], vec![]]).fingerprint(w),
            progress(vec![vec![(cpu, -1)]]).fingerprint(w)
        );
        assert_ne!(
            p(0, None).fingerprint(w),
            p(0, None).fingerprint(WorkloadId(8))
        );
        assert_eq!(p(1, Some(0)).fingerprint(w), p(1, Some(0)).fingerprint(w));
        // The resources of one pod set are a set: their order does not matter.
        assert_eq!(
            progress(vec![vec![(cpu, 0), (mem, 1)]]).fingerprint(w),
            progress(vec![vec![(mem, 1), (cpu, 0)]]).fingerprint(w)
        );
        assert_ne!(progress(vec![]).fingerprint(w), 0);
    }

    #[test]
    fn progress_outdates_with_the_generation_unless_the_gate_keeps_recent_progress() {
        let p = progress(vec![vec![(ResourceId(0), 0)]]);
        // Gate off (`lastAssignmentOutdated`): only the generation matters.
        assert!(!p.outdated(3, 50, false));
        assert!(p.outdated(4, 11, false));
        // Gate on: this or the previous cycle's progress is kept whatever the generation.
        assert!(!p.outdated(4, 10, true));
        assert!(!p.outdated(4, 11, true));
        assert!(p.outdated(4, 12, true));
        assert!(!p.outdated(3, 12, true));
    }
}
