//! Kueue's Dominant Resource Share (`pkg/cache/scheduler/fair_sharing.go`): how much of what
//! its parent could lend a node of the cohort tree (a ClusterQueue or a cohort) is borrowing,
//! divided by its fair-sharing weight. Fair sharing orders admissions by it (lower first) and
//! picks preemption targets by it (higher first).
//!
//! For a node with a parent, per `Fr` of the node, `borrowed = extra + usage − subtreeQuota`;
//! positive amounts are summed per resource name over flavors. The lendable amount of a
//! resource is the parent's `potentialAvailable` summed over every flavor
//! (`calculateLendable`). The unweighted ratio is the largest `borrowed × 1000 / lendable` over
//! the resources with something lendable (ties: the alphabetically first name), and the share
//! is `ratio / weight`, with a zero-weight borrower infinitely above everybody.
//!
//! Arithmetic, as upstream since the rounding fix of Kueue v0.14 (#6925): amounts are integers
//! (saturating sums, like `resources.Amount`), the ratio is the `f64` expression
//! `borrowed as f64 * 1000.0 / lendable as f64` (no integer division), and the weighted share
//! is that ratio divided by the weight as an `f64`. Comparisons use the unrounded values; only
//! the reported `weightedShare` is rounded up. The weight is kept in thousandths
//! (`fair_sharing_weight_milli`) and converted as `milli as f64 / 1000.0`: upstream's
//! `Quantity.AsFloat64Slow` rounds the same rational twice (to 64 then 53 bits), which gives
//! the same `f64` for every weight from 0.001 to 199.999 (checked exhaustively), so the two
//! agree on every realistic weight.

use std::cmp::Ordering;

use crate::ids::{CohortId, ResourceId};
use crate::quota::{Fr, NodeIdx, QuotaTree};
use crate::world::World;

/// The Dominant Resource Share of one node (upstream `DRS`), with what precise comparisons
/// need.
#[derive(Clone, Debug, PartialEq)]
pub struct Drs {
    /// The node's fair-sharing weight in thousandths (1000 = weight 1).
    weight_milli: i64,
    /// `max_r borrowed_r × 1000 / lendable_r`; 0 when not borrowing (or nothing lendable).
    unweighted_ratio: f64,
    /// The resource that gave the ratio.
    dominant_resource: Option<ResourceId>,
    /// Whether usage (with the extra) exceeds the subtree quota on some `Fr`.
    borrowing: bool,
    /// The `Fr`s it borrows on, ascending.
    borrowed_frs: Vec<Fr>,
}

impl Drs {
    /// `NegativeDRS`: below every real share, a starting point for maximum searches.
    pub fn negative() -> Drs {
        Drs {
            weight_milli: 1000,
            unweighted_ratio: -1.0,
            dominant_resource: None,
            borrowing: false,
            borrowed_frs: Vec::new(),
        }
    }

    /// The share of a node that borrows nothing, with the given weight.
    fn zero(weight_milli: i64) -> Drs {
        Drs {
            weight_milli,
            unweighted_ratio: 0.0,
            dominant_resource: None,
            borrowing: false,
            borrowed_frs: Vec::new(),
        }
    }

    /// `IsZero`: the unweighted ratio is 0 (nothing borrowed, or nothing lendable for it).
    pub fn is_zero(&self) -> bool {
        self.unweighted_ratio == 0.0
    }

    /// `IsBorrowing`: usage exceeds the subtree quota on some `Fr` (even if nothing lendable
    /// makes the ratio positive).
    pub fn is_borrowing(&self) -> bool {
        self.borrowing
    }

    /// `IsBorrowingOn`: borrows on some `Fr` that `requested` asks a positive amount of.
    pub fn is_borrowing_on(&self, requested: &[(Fr, i64)]) -> bool {
        self.borrowed_frs
            .iter()
            .any(|fr| requested.iter().any(|&(r, v)| r == *fr && v > 0))
    }

    /// The `Fr`s the node borrows on, ascending.
    pub fn borrowed_frs(&self) -> &[Fr] {
        &self.borrowed_frs
    }

    /// The unweighted ratio (per mille of the lendable amount).
    pub fn unweighted_ratio(&self) -> f64 {
        self.unweighted_ratio
    }

    /// The resource that gave the ratio (`None` when the ratio is 0).
    pub fn dominant_resource(&self) -> Option<ResourceId> {
        self.dominant_resource
    }

    /// The weight in thousandths.
    pub fn weight_milli(&self) -> i64 {
        self.weight_milli
    }

    /// The weight as upstream's `fairWeight()` float.
    pub fn weight(&self) -> f64 {
        self.weight_milli as f64 / 1000.0
    }

    /// `zeroWeightBorrows`: a zero weight and a positive ratio (an infinite share).
    pub fn zero_weight_borrows(&self) -> bool {
        self.weight_milli == 0 && !self.is_zero()
    }

    /// `PreciseWeightedShare`: 0 when the ratio is 0, +∞ for a zero-weight borrower, else
    /// `ratio / weight`.
    pub fn precise_weighted_share(&self) -> f64 {
        if self.is_zero() {
            0.0
        } else if self.weight_milli == 0 {
            f64::INFINITY
        } else {
            self.unweighted_ratio / self.weight()
        }
    }

    /// `roundedWeightedShare`: the ClusterQueue/Cohort `status.fairSharing.weightedShare` and
    /// the `kueue_cluster_queue_weighted_share` metric: the precise share rounded up, and
    /// `i64::MAX` for a zero-weight borrower.
    pub fn weighted_share(&self) -> i64 {
        if self.zero_weight_borrows() {
            i64::MAX
        } else {
            // `as` saturates, like the int64 conversion of any realistic share.
            self.precise_weighted_share().ceil() as i64
        }
    }
}

/// `cmp.Compare` on floats: NaN (which no share produces) below everything.
fn compare_f64(a: f64, b: f64) -> Ordering {
    match a.partial_cmp(&b) {
        Some(o) => o,
        None => a.is_nan().cmp(&b.is_nan()).reverse(),
    }
}

/// `CompareDRS`: two zero-weight borrowers compare by their unweighted ratios; a zero-weight
/// borrower is above anything else; otherwise the precise weighted shares compare. Lower is
/// preferred for admission, higher for preemption.
pub fn compare(a: &Drs, b: &Drs) -> Ordering {
    match (a.zero_weight_borrows(), b.zero_weight_borrows()) {
        (true, true) => compare_f64(a.unweighted_ratio, b.unweighted_ratio),
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => compare_f64(a.precise_weighted_share(), b.precise_weighted_share()),
    }
}

/// The fair-sharing weight of a node, in thousandths.
pub fn node_weight_milli(world: &World, tree: &QuotaTree, node: NodeIdx) -> i64 {
    match tree.as_cq(node) {
        Some(cq) => world.cluster_queue(cq).fair_sharing_weight_milli,
        None => {
            let c = CohortId::from_index(node.0 as usize - world.cluster_queues.len());
            debug_assert_eq!(tree.cohort_node(c), node);
            world.cohorts[c.index()].fair_sharing_weight_milli
        }
    }
}

/// `dominantResourceShare(node, wlReq)`: the share of `node` with `extra` more usage on it
/// (the incoming workload's, for the admission tournament; empty for the current state).
/// `extra` may name an `Fr` more than once; the amounts add up.
pub fn drs(world: &World, tree: &QuotaTree, node: NodeIdx, extra: &[(Fr, i64)]) -> Drs {
    let mut d = Drs::zero(node_weight_milli(world, tree, node));
    let Some(parent) = tree.parent(node) else {
        return d;
    };

    // Borrowed amounts per resource, summed over flavors.
    let mut borrowed: Vec<i64> = Vec::new();
    for i in 0..tree.fr_count() {
        let fr = Fr(i as u32);
        let extra_fr = extra
            .iter()
            .filter(|(f, _)| *f == fr)
            .fold(0i64, |acc, &(_, v)| acc.saturating_add(v));
        let amount = extra_fr
            .saturating_add(tree.usage(node, fr))
            .saturating_sub(tree.subtree_quota(node, fr));
        if amount > 0 {
            let (_, r) = tree.split(fr);
            if borrowed.len() <= r.index() {
                borrowed.resize(r.index() + 1, 0);
            }
            borrowed[r.index()] = borrowed[r.index()].saturating_add(amount);
            d.borrowed_frs.push(fr);
        }
    }
    if d.borrowed_frs.is_empty() {
        return d;
    }
    d.borrowing = true;

    // `calculateLendable(parent)`: the parent's potential availability per resource, over
    // every `Fr` of the tree (the root's subtree quota holds them all).
    let mut lendable: Vec<i64> = vec![0; borrowed.len()];
    for i in 0..tree.fr_count() {
        let fr = Fr(i as u32);
        let (_, r) = tree.split(fr);
        if borrowed.get(r.index()).is_some_and(|&b| b > 0) {
            lendable[r.index()] =
                lendable[r.index()].saturating_add(tree.potential_available(parent, fr));
        }
    }

    for (r, (&b, &lr)) in borrowed.iter().zip(&lendable).enumerate() {
        if b <= 0 || lr <= 0 {
            continue;
        }
        let r = ResourceId::from_index(r);
        let ratio = b as f64 * 1000.0 / lr as f64;
        // Ties go to the alphabetically first resource name, so the result does not depend
        // on iteration order.
        let better = match d.dominant_resource {
            None => ratio > d.unweighted_ratio,
            Some(cur) => {
                ratio > d.unweighted_ratio
                    || (ratio == d.unweighted_ratio
                        && world.resources.name(r) < world.resources.name(cur))
            }
        };
        if better {
            d.unweighted_ratio = ratio;
            d.dominant_resource = Some(r);
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ClusterQueueId, FlavorId};
    use crate::objects::{
        ClusterQueue, Cohort, FlavorQuotas, ResourceFlavor, ResourceGroup, ResourceQuota,
    };

    /// A quota of resource `r` on flavor `f`: (flavor, resource, nominal, borrowingLimit,
    /// lendingLimit).
    type Q = (u16, u16, i64, Option<i64>, Option<i64>);

    fn groups(quotas: &[Q]) -> Vec<ResourceGroup> {
        let mut covered: Vec<ResourceId> = quotas.iter().map(|q| ResourceId(q.1)).collect();
        covered.sort();
        covered.dedup();
        let mut flavors: Vec<FlavorQuotas> = Vec::new();
        for &(f, r, nominal, bl, ll) in quotas {
            let rq = ResourceQuota {
                resource: ResourceId(r),
                nominal,
                borrowing_limit: bl,
                lending_limit: ll,
            };
            match flavors.iter_mut().find(|fq| fq.flavor == FlavorId(f)) {
                Some(fq) => fq.resources.push(rq),
                None => flavors.push(FlavorQuotas {
                    flavor: FlavorId(f),
                    resources: vec![rq],
                }),
            }
        }
        if flavors.is_empty() {
            return Vec::new();
        }
        vec![ResourceGroup { covered, flavors }]
    }

    /// Resources `cpu` (0, millicores) and `example.com/gpu` (1); flavors `default` (0),
    /// `spot` (1). Cohorts: (parent, weight milli, quotas); ClusterQueues: (cohort, weight
    /// milli, quotas).
    fn world(cohorts: &[(Option<u32>, i64, &[Q])], cqs: &[(Option<u32>, i64, &[Q])]) -> World {
        let mut w = World::default();
        w.resources.intern("cpu");
        w.resources.intern("example.com/gpu");
        for name in ["default", "spot"] {
            w.flavors.push(ResourceFlavor {
                name: name.into(),
                ..Default::default()
            });
        }
        for (i, &(parent, weight, q)) in cohorts.iter().enumerate() {
            w.cohorts.push(Cohort {
                name: format!("co{i}"),
                parent: parent.map(CohortId),
                resource_groups: groups(q),
                fair_sharing_weight_milli: weight,
                declared: true,
            });
        }
        for (i, &(cohort, weight, q)) in cqs.iter().enumerate() {
            w.cluster_queues.push(ClusterQueue {
                name: format!("cq{i}"),
                cohort: cohort.map(CohortId),
                resource_groups: groups(q),
                fair_sharing_weight_milli: weight,
                ..Default::default()
            });
        }
        w
    }

    const CPU: u16 = 0;
    const GPU: u16 = 1;
    const DEFAULT: u16 = 0;
    const SPOT: u16 = 1;

    fn fr(t: &QuotaTree, f: u16, r: u16) -> Fr {
        t.fr(FlavorId(f), ResourceId(r))
    }

    fn cq(t: &QuotaTree, i: u32) -> NodeIdx {
        t.cq_node(ClusterQueueId(i))
    }

    /// F's shared setup: three ClusterQueues of 3 cpu in one cohort; DRS = borrowed × 1000 / 9.
    #[test]
    fn share_of_the_fair_sharing_cohort() {
        let q: &[Q] = &[(DEFAULT, CPU, 3000, None, None)];
        let w = world(&[(None, 1000, &[])], &[(Some(0), 1000, q); 3]);
        let mut t = QuotaTree::new(&w);
        let cpu = fr(&t, DEFAULT, CPU);
        t.add_usage(cq(&t, 1), cpu, 5000);
        let b = drs(&w, &t, cq(&t, 1), &[]);
        assert!(b.is_borrowing());
        assert_eq!(b.borrowed_frs(), &[cpu]);
        assert_eq!(b.unweighted_ratio(), 2000.0 * 1000.0 / 9000.0);
        assert_eq!(b.dominant_resource(), Some(ResourceId(CPU)));
        assert_eq!(b.weighted_share(), 223);
        // ClusterQueue a, not borrowing: 0, but with a 2-cpu workload it would tie with b.
        let a = drs(&w, &t, cq(&t, 0), &[]);
        assert!(!a.is_borrowing() && a.is_zero() && a.weighted_share() == 0);
        let a2 = drs(&w, &t, cq(&t, 0), &[(cpu, 1000), (cpu, 4000)]);
        assert_eq!(compare(&a2, &b), Ordering::Equal);
        assert!(a2.is_borrowing_on(&[(cpu, 1)]));
        assert!(!a2.is_borrowing_on(&[(cpu, 0)]));
        // The root cohort has no parent: always 0.
        let root = drs(&w, &t, t.cohort_node(CohortId(0)), &[(cpu, 100_000)]);
        assert!(!root.is_borrowing() && root.is_zero());
    }

    /// Upstream "usage slightly above nominal in a cohort with large quotas": 1 of 1500
    /// lendable rounds up to 1.
    #[test]
    fn reported_share_rounds_up() {
        let w = world(
            &[(None, 1000, &[])],
            &[
                (Some(0), 1000, &[(DEFAULT, GPU, 500, None, None)]),
                (Some(0), 300_000, &[(DEFAULT, GPU, 1000, None, None)]),
            ],
        );
        let mut t = QuotaTree::new(&w);
        let gpu = fr(&t, DEFAULT, GPU);
        t.add_usage(cq(&t, 0), gpu, 501);
        let d = drs(&w, &t, cq(&t, 0), &[]);
        assert_eq!(d.precise_weighted_share(), 1000.0 / 1500.0);
        assert_eq!(d.weighted_share(), 1);
        assert_eq!(drs(&w, &t, cq(&t, 1), &[]).weighted_share(), 0);
    }

    /// Upstream "usage with workload above nominal" and "one resource above nominal": the
    /// dominant resource is the one with the largest ratio; a resource within quota does not
    /// count.
    #[test]
    fn dominant_resource_and_extra_usage() {
        let q0: &[Q] = &[
            (DEFAULT, CPU, 2000, None, None),
            (DEFAULT, GPU, 5, None, None),
        ];
        let q1: &[Q] = &[
            (DEFAULT, CPU, 8000, None, None),
            (DEFAULT, GPU, 5, None, None),
        ];
        let w = world(
            &[(None, 1000, &[])],
            &[(Some(0), 1000, q0), (Some(0), 1000, q1)],
        );
        let mut t = QuotaTree::new(&w);
        let (cpu, gpu) = (fr(&t, DEFAULT, CPU), fr(&t, DEFAULT, GPU));
        t.add_usage(cq(&t, 0), cpu, 3000);
        t.add_usage(cq(&t, 0), gpu, 3);
        let d = drs(&w, &t, cq(&t, 0), &[]);
        assert_eq!(
            (d.weighted_share(), d.dominant_resource()),
            (100, Some(ResourceId(CPU)))
        );
        assert_eq!(d.borrowed_frs(), &[cpu]);
        t.remove_usage(cq(&t, 0), cpu, 2000);
        t.remove_usage(cq(&t, 0), gpu, 1);
        // (1 + 4 − 2) × 1000 / 10 cpu against (2 + 4 − 5) × 1000 / 10 gpu.
        let d = drs(&w, &t, cq(&t, 0), &[(cpu, 4000), (gpu, 4)]);
        assert_eq!(
            (d.weighted_share(), d.dominant_resource()),
            (300, Some(ResourceId(CPU)))
        );
        assert_eq!(d.borrowed_frs(), &[cpu, gpu]);
        // Equal ratios (1 of 10 cpu, 1 of 10 gpu): the alphabetically first name wins,
        // whatever the ids.
        let tie = [(cpu, 2000), (gpu, 4)];
        let d = drs(&w, &t, cq(&t, 0), &tie);
        assert_eq!(
            (d.weighted_share(), d.dominant_resource()),
            (100, Some(ResourceId(CPU)))
        );
        let mut renamed = w.clone();
        renamed.resources = Default::default();
        renamed.resources.intern("zz-cpu");
        renamed.resources.intern("example.com/gpu");
        let d = drs(&renamed, &t, cq(&t, 0), &tie);
        assert_eq!(
            (d.weighted_share(), d.dominant_resource()),
            (100, Some(ResourceId(GPU)))
        );
    }

    /// Upstream "A resource with zero lendable": a resource nobody lends is skipped; and a
    /// node borrowing only such a resource borrows with a zero ratio.
    #[test]
    fn nothing_lendable_gives_a_zero_ratio() {
        let q0: &[Q] = &[
            (DEFAULT, CPU, 2000, None, None),
            (DEFAULT, GPU, 2, None, Some(0)),
        ];
        let q1: &[Q] = &[
            (DEFAULT, CPU, 8000, None, None),
            (DEFAULT, GPU, 64, None, Some(0)),
        ];
        let w = world(&[(None, 0, &[])], &[(Some(0), 0, q0), (Some(0), 1000, q1)]);
        let mut t = QuotaTree::new(&w);
        let (cpu, gpu) = (fr(&t, DEFAULT, CPU), fr(&t, DEFAULT, GPU));
        t.add_usage(cq(&t, 0), cpu, 1000);
        t.add_usage(cq(&t, 0), gpu, 1);
        let d = drs(&w, &t, cq(&t, 0), &[(cpu, 4000), (gpu, 4)]);
        assert_eq!(d.unweighted_ratio(), 300.0);
        assert!(d.zero_weight_borrows());
        let only_gpu = drs(&w, &t, cq(&t, 0), &[(gpu, 4)]);
        assert!(only_gpu.is_borrowing() && only_gpu.is_zero());
        // Weight 0 but a zero ratio: not infinite, reported as 0.
        assert!(!only_gpu.zero_weight_borrows());
        assert_eq!(only_gpu.weighted_share(), 0);
        assert_eq!(only_gpu.dominant_resource(), None);
    }

    /// Upstream "multiple flavors": borrowing and lendable amounts add up over flavors.
    #[test]
    fn flavors_add_up() {
        let w = world(
            &[(None, 1000, &[])],
            &[
                (
                    Some(0),
                    1000,
                    &[
                        (DEFAULT, CPU, 20_000, None, None),
                        (SPOT, CPU, 80_000, None, None),
                    ],
                ),
                (Some(0), 1000, &[(DEFAULT, CPU, 100_000, None, None)]),
            ],
        );
        let mut t = QuotaTree::new(&w);
        let (on_demand, spot) = (fr(&t, DEFAULT, CPU), fr(&t, SPOT, CPU));
        t.add_usage(cq(&t, 0), on_demand, 15_000);
        t.add_usage(cq(&t, 0), spot, 5000);
        // ((15 + 10 − 20) + 0) × 1000 / 200.
        let d = drs(&w, &t, cq(&t, 0), &[(on_demand, 10_000)]);
        assert_eq!(d.weighted_share(), 25);
        assert_eq!(d.borrowed_frs(), &[on_demand]);
    }

    /// Upstream "above nominal with integer/decimal/zero weight".
    #[test]
    fn weights_divide_the_ratio() {
        let share = |weight| {
            let w = world(
                &[(None, 1000, &[])],
                &[
                    (Some(0), weight, &[(DEFAULT, GPU, 5, None, None)]),
                    (Some(0), 1000, &[(DEFAULT, GPU, 5, None, None)]),
                ],
            );
            let mut t = QuotaTree::new(&w);
            let gpu = fr(&t, DEFAULT, GPU);
            t.add_usage(cq(&t, 0), gpu, 7);
            drs(&w, &t, cq(&t, 0), &[])
        };
        assert_eq!(share(1000).weighted_share(), 200);
        assert_eq!(share(2000).weighted_share(), 100);
        assert_eq!(share(500).weighted_share(), 400);
        let zero = share(0);
        assert!(zero.zero_weight_borrows());
        assert_eq!(zero.precise_weighted_share(), f64::INFINITY);
        assert_eq!(zero.weighted_share(), i64::MAX);
        // 0.99: 200 / 0.99 = 202.02…, reported 203.
        assert_eq!(share(990).weighted_share(), 203);
        assert_eq!(share(990).weight(), 0.99);
    }

    /// Upstream "cohort has resource share" and "resource share affected by borrowing limit":
    /// cohorts have shares too, measured against their own parent, and a borrowing limit caps
    /// what the parent can lend.
    #[test]
    fn cohort_shares_and_borrowing_limits() {
        let w = world(
            &[
                (Some(1), 2000, &[]),
                (None, 1000, &[(DEFAULT, GPU, 45, None, None)]),
            ],
            &[(Some(0), 1000, &[(DEFAULT, GPU, 5, None, None)])],
        );
        let mut t = QuotaTree::new(&w);
        let gpu = fr(&t, DEFAULT, GPU);
        t.add_usage(cq(&t, 0), gpu, 10);
        assert_eq!(drs(&w, &t, cq(&t, 0), &[]).weighted_share(), 100);
        let child = drs(&w, &t, t.cohort_node(CohortId(0)), &[]);
        assert_eq!((child.weighted_share(), child.is_borrowing()), (50, true));

        let w = world(
            &[
                (Some(1), 1000, &[(DEFAULT, GPU, 0, Some(10), None)]),
                (None, 1000, &[(DEFAULT, GPU, 50, None, None)]),
            ],
            &[(Some(0), 1000, &[(DEFAULT, GPU, 0, None, None)])],
        );
        let mut t = QuotaTree::new(&w);
        t.add_usage(cq(&t, 0), gpu, 10);
        assert_eq!(drs(&w, &t, cq(&t, 0), &[]).weighted_share(), 1000);
        assert_eq!(
            drs(&w, &t, t.cohort_node(CohortId(0)), &[]).weighted_share(),
            200
        );
    }

    /// `CompareDRS`: zero-weight borrowers above everybody and among themselves by ratio.
    #[test]
    fn comparison_of_zero_weight_borrowers() {
        let mk = |weight_milli, ratio: f64| Drs {
            weight_milli,
            unweighted_ratio: ratio,
            dominant_resource: None,
            borrowing: ratio > 0.0,
            borrowed_frs: Vec::new(),
        };
        use Ordering::{Equal, Greater, Less};
        assert_eq!(compare(&mk(0, 10.0), &mk(1000, 1e12)), Greater);
        assert_eq!(compare(&mk(1000, 1e12), &mk(0, 10.0)), Less);
        assert_eq!(compare(&mk(0, 10.0), &mk(0, 20.0)), Less);
        assert_eq!(compare(&mk(0, 20.0), &mk(0, 20.0)), Equal);
        // A zero-weight node that borrows nothing is just 0.
        assert_eq!(compare(&mk(0, 0.0), &mk(1000, 0.0)), Equal);
        assert_eq!(compare(&mk(0, 0.0), &mk(1000, 1.0)), Less);
        // Weights divide: 300 / 2 = 150 < 200 / 1.
        assert_eq!(compare(&mk(2000, 300.0), &mk(1000, 200.0)), Less);
        assert_eq!(compare(&Drs::negative(), &mk(1000, 0.0)), Less);
        assert_eq!(compare(&mk(0, 5.0), &Drs::negative()), Greater);
    }

    /// The weight conversion matches upstream's `AsFloat64Slow` on simple cases.
    #[test]
    fn weights_in_thousandths() {
        assert_eq!(Drs::zero(1000).weight(), 1.0);
        assert_eq!(Drs::zero(100).weight(), 0.1);
        assert_eq!(Drs::zero(1010).weight(), 1.01);
        assert_eq!(Drs::zero(0).weight(), 0.0);
    }
}
