//! What Volcano keeps in the `Cluster` from one attempt to the next, as data: the gradient
//! search's buffers (refilled by every attempt, kept so that a million attempts do not
//! allocate them afresh) and the explanations of gangs that fit nowhere (`KeptExplanations`,
//! served again while no node they ran on is bound or released on). Declared here, below the
//! scheduler folders, so that the `Cluster` owns them without depending on Volcano's folder;
//! what they mean and the code that fills and reads them are Volcano's (the gradient search
//! in `volcano/mod.rs`, `volcano/explain.rs`).

use std::cmp::Reverse;

use kueuesim_model::{DomainId, NodeId};

use super::{FillBuffers, PodNeeds, Score};

/// A failed statement: the pod that could not be placed, why, and how many were placed
/// (also the vGPU path's, `volcano::vgpu`).
#[derive(Clone, Debug)]
pub(super) struct Failure {
    pub(super) pod: (usize, usize),
    pub(super) fit: String,
    pub(super) schedulable: usize,
}

/// The buffers of one gradient search (`topology_attempt`), refilled by every attempt.
#[derive(Clone, Debug, Default)]
pub(super) struct GradientScratch {
    /// A tier's HyperNodes with enough GPUs free (the tier index's answer).
    pub(super) with_room: Vec<DomainId>,
    /// A tier's HyperNodes that pass the resource pre-filter.
    pub(super) passing: Vec<DomainId>,
    /// `passing` of the last tier that had any.
    pub(super) last_tier: Vec<DomainId>,
    /// A tier's HyperNodes worth a dry run, with their gradient keys.
    pub(super) candidates: Vec<(Score, u64, Reverse<usize>, DomainId)>,
    /// The last few failed dry runs that explained a gang that fits nowhere.
    pub(super) explained: KeptExplanations,
    /// The resource pre-filter and bin-pack keys of a few tiers, for the gangs that fit
    /// nowhere (`volcano/last_tier.rs`).
    pub(super) tiers: TierMemos,
    /// The pending pods' requests (`pending_total`).
    pub(super) pending: Vec<(usize, i64)>,
    /// The pending pods' GPUs per pod and count, per pod set (`Cluster::pending_gpu_pods`).
    pub(super) gpu_sets: Vec<(i64, u64)>,
    /// The dry runs' working buffers (`fill_in`).
    pub(super) fill_buffers: FillBuffers,
}

/// The resource pre-filter's verdict and the bin-pack score of every HyperNode of a tier, for
/// a few (tier, search root, pending request, bin-pack request) asked about, each with the free
/// capacity rows they were worked out on; replaced oldest first.
#[derive(Clone, Debug, Default)]
pub(super) struct TierMemos {
    pub(super) entries: Vec<TierMemo>,
    /// The entry to replace next once the most are kept.
    pub(super) next: usize,
}

/// One tier's pre-filter and scores for one request (`TierMemos`).
#[derive(Clone, Debug)]
pub(super) struct TierMemo {
    /// The tier's position in `by_tier`.
    pub(super) ti: usize,
    pub(super) root: DomainId,
    /// The pending pods' requests (the pre-filter).
    pub(super) pending: Vec<(usize, i64)>,
    /// The job's cpu and memory (the bin-pack score).
    pub(super) request: [Option<(usize, i64)>; 2],
    /// Per HyperNode of the tier, in the tier's order: its free row (every resource) as of the
    /// last look.
    pub(super) rows: Vec<i64>,
    /// The cluster's `rows_version` at the last look: a HyperNode whose
    /// `Cluster::hypernode_changed` is at most this still has its row in `rows`.
    pub(super) seen: u64,
    /// Per HyperNode of the tier: its bin-pack score if it passes the pre-filter under `root`.
    pub(super) keys: Vec<Option<f64>>,
    /// The lowest of `keys` (by `total_cmp`) and the positions holding it, in the tier's
    /// order; None when no HyperNode passes.
    pub(super) lowest: Option<(f64, Vec<u32>)>,
}

/// The last few failed dry runs that explained a gang fitting nowhere, replaced oldest first.
#[derive(Clone, Debug, Default)]
pub(super) struct KeptExplanations {
    pub(super) entries: Vec<Explained>,
    /// The entry to replace next once `KEPT` are kept.
    pub(super) next: usize,
}

/// A failed dry run of one pod set's pods on a HyperNode's nodes, and when it was worked out.
#[derive(Clone, Debug)]
pub(super) struct Explained {
    pub(super) d: DomainId,
    pub(super) need: usize,
    pub(super) pods: Vec<(PodNeeds, Vec<Option<NodeId>>)>,
    /// The cluster's `rows_version` it was worked out at: it holds while no committed bind
    /// or release has touched `d`'s nodes since (`Cluster::hypernode_changed` of `d` at most
    /// this).
    pub(super) version: u64,
    /// The outcome, its FitError prefixed with the HyperNode as the message quotes it.
    pub(super) failure: Failure,
}
