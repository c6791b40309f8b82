//! What held a head back, as constraints (`bound::BoundSet`, `pendingBoundBy`): the reasons
//! of its flavor assignment read against the quota tree at that moment.
//!
//! `fitsResourceQuota` fails a resource in two ways: the request exceeds what the
//! ClusterQueue could ever hold with the whole tree idle (`potentialAvailable`: "insufficient
//! quota"), or what it can hold now (`available`: "insufficient unused quota"). Neither
//! message says which limit stops it; this reads the tree the way the two figures are
//! computed, lifting one limit at a time.

use kueuesim_model::ClusterQueueId;
use kueuesim_model::quota::{Fr, QuotaTree};

use crate::bound::{BoundSet, Constraint, WEIGHT_ONE};

use super::REASON_TOPOLOGY_PLACEMENT_FAILED;
use super::messages::{Reason, Unfit};

/// The constraints `unfit`'s reasons report for a head of `cq`: every resource short is one
/// (`cpu`, `memory` and `nvidia.com/gpu` all short are three, not the first of a message
/// sorted by its words), weighed by how short it is (`quota_constraint`); the rest weigh
/// `WEIGHT_ONE`. Reasons that are no constraint of their own (a
/// flavor the workload does not match, while another flavor failed on quota) add nothing;
/// with nothing else, the condition's reason says what it is: a topology that can never
/// hold the pod set (`TopologyPlacementFailed`), else a workload no flavor of its
/// ClusterQueue can take (`misconfigured`).
pub(super) fn bound_of(tree: &QuotaTree, cq: ClusterQueueId, unfit: &Unfit) -> BoundSet {
    // A constraint alone takes the whole of its time, whatever its weight: most heads report
    // one, and their weights are not worked out (a walk of the tree per resource).
    let weigh = unfit.pod_sets.iter().map(|p| p.1.len()).sum::<usize>() > 1;
    let mut set = BoundSet::EMPTY;
    for (_, reasons) in &unfit.pod_sets {
        for r in reasons {
            let (c, weight) = match *r {
                Reason::ExceedsMax {
                    flavor,
                    resource,
                    assumed,
                    request,
                    max,
                } => {
                    let (fr, val) = (tree.fr(flavor, resource), assumed + request);
                    // `max` is `potentialAvailable`.
                    let weight = if weigh {
                        weight(val - max, max)
                    } else {
                        WEIGHT_ONE
                    };
                    (quota_constraint(tree, cq, fr, val, true), weight)
                }
                Reason::Unused {
                    flavor,
                    resource,
                    needed,
                    requested,
                } => {
                    let fr = tree.fr(flavor, resource);
                    let weight = if weigh {
                        weight(needed, tree.potential_available(tree.cq_node(cq), fr))
                    } else {
                        WEIGHT_ONE
                    };
                    (quota_constraint(tree, cq, fr, requested, false), weight)
                }
                Reason::Text(Some(c), _) => (c, WEIGHT_ONE),
                Reason::Text(None, _) => continue,
            };
            set.insert(c, weight);
        }
    }
    if set.is_empty() {
        let c = if unfit.reason == REASON_TOPOLOGY_PLACEMENT_FAILED {
            Constraint::Topology
        } else {
            Constraint::Misconfigured
        };
        set.insert(c, WEIGHT_ONE);
    }
    set
}

/// A resource's weight in a set: `short` (how much more it needs, as the message says: over
/// `potentialAvailable`, or "N more needed") relative to `most`, the most the ClusterQueue
/// could ever hold of it (`potentialAvailable`), in thousandths, rounded up so that a
/// resource short at all weighs something.
fn weight(short: i64, most: i64) -> u32 {
    let (num, den) = (
        i128::from(short.max(1)) * i128::from(WEIGHT_ONE),
        i128::from(most.max(1)),
    );
    ((num + den - 1) / den).clamp(1, i128::from(u32::MAX)) as u32
}

/// Which limit stops `val` of `fr` (the pod sets' request so far) for `cq`: `never` for
/// `fitsResourceQuota`'s first failure (over `potentialAvailable`), else its second (over
/// `available`).
///
/// Without a cohort it is the ClusterQueue's own nominal quota. In a cohort, for a request
/// that can never fit: the borrowingLimit if lifting the limits on the path would hold it
/// (`potentialAvailable` caps by them), then the lendingLimit if the other members' private
/// quota would, else the quota. For one that does not fit now: the cohort when the
/// ClusterQueue's own unused nominal quota would hold it (others borrowed the part it
/// lends), then the borrowingLimit if the cohort has the room, then the lendingLimit if the
/// others' unused private quota would, else the quota (the cohort is full and the
/// ClusterQueue's own nominal too small).
pub(super) fn quota_constraint(
    tree: &QuotaTree,
    cq: ClusterQueueId,
    fr: Fr,
    val: i64,
    never: bool,
) -> Constraint {
    let n = tree.cq_node(cq);
    let (_, r) = tree.split(fr);
    if tree.parent(n).is_none() {
        Constraint::Quota(r)
    } else if never {
        let unlimited = tree.potential_available_without_borrowing_limits(n, fr);
        if val <= unlimited {
            Constraint::BorrowingLimit(r)
        } else if val <= unlimited + tree.withheld_by_lending_limits(n, fr, true) {
            Constraint::LendingLimit(r)
        } else {
            Constraint::Quota(r)
        }
    } else if val <= tree.nominal(n, fr) - tree.usage(n, fr) {
        Constraint::Cohort(r)
    } else {
        let unlimited = tree.available_without_borrowing_limits(n, fr);
        if val <= unlimited {
            Constraint::BorrowingLimit(r)
        } else if val <= unlimited + tree.withheld_by_lending_limits(n, fr, false) {
            Constraint::LendingLimit(r)
        } else {
            Constraint::Quota(r)
        }
    }
}
