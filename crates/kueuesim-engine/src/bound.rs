//! What held pending workloads back (`pendingBoundBy`): the vocabulary of constraints
//! (`Constraint`), the set reported at one moment (`BoundSet`), and a run's pending
//! workload-milliseconds per ClusterQueue and LocalQueue and set (`PendingBound`), from which
//! each constraint's share follows (`shares`).
//!
//! The constraints are kueuesim's own reading of what Kueue's flavor assignment
//! (`fitsResourceQuota`'s two failures: `insufficient quota`, `insufficient unused quota`,
//! classified against the quota tree) and the gang schedulers report; the engine's `sim`
//! integrates them over time (docs/output.md, "pendingBoundBy").

use std::collections::BTreeMap;

use kueuesim_model::{ResourceId, World};

/// One constraint a pending workload can be held back by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Constraint {
    /// `quota:<resource>`: the ClusterQueue's own nominal quota is too small for the request
    /// (its own workloads use it), and nothing could be borrowed.
    Quota(ResourceId),
    /// `borrowingLimit:<resource>`: the cohort has room, the ClusterQueue's borrowingLimit
    /// (or a parent cohort's) stops it from taking it.
    BorrowingLimit(ResourceId),
    /// `lendingLimit:<resource>`: the cohort would have room but for the quota other
    /// ClusterQueues keep back with their lendingLimit.
    LendingLimit(ResourceId),
    /// `cohort:<resource>`: the ClusterQueue's nominal quota would hold the request; other
    /// members of the cohort borrowed it.
    Cohort(ResourceId),
    /// `nodes`: quota reserved, but the gang scheduler found no nodes for its pods.
    Nodes,
    /// `topology`: quota reserved (or Kueue TAS's placement failed), the cluster's free
    /// capacity as a whole would hold the pods, but not within one domain of the required
    /// topology level.
    Topology,
    /// `strictFIFO`: behind the blocked head of a StrictFIFO ClusterQueue.
    StrictFifo,
    /// `stopped`: its ClusterQueue or LocalQueue is stopped (`stopPolicy`).
    Stopped,
    /// `podsReady`: evicted by `waitForPodsReady` and backing off, or its admission blocked
    /// until the admitted workloads' pods are ready (`blockAdmission`).
    PodsReady,
    /// `preempting`: admitted once the workloads it preempted are gone.
    Preempting,
    /// `misconfigured`: its ClusterQueue cannot admit it whatever the load (a namespace its
    /// selector does not match, a resource or flavor it does not offer, a cohort cycle).
    Misconfigured,
    /// `untried`: waiting for its first scheduling cycle, no workload of its shape having
    /// been found inadmissible in its ClusterQueue yet.
    Untried,
}

impl Constraint {
    /// Its key in `pendingBoundBy` (`quota:nvidia.com/gpu`, `nodes`, …).
    pub fn name(self, world: &World) -> String {
        let with = |kind: &str, r: ResourceId| format!("{kind}:{}", world.resources.name(r));
        match self {
            Constraint::Quota(r) => with("quota", r),
            Constraint::BorrowingLimit(r) => with("borrowingLimit", r),
            Constraint::LendingLimit(r) => with("lendingLimit", r),
            Constraint::Cohort(r) => with("cohort", r),
            Constraint::Nodes => "nodes".into(),
            Constraint::Topology => "topology".into(),
            Constraint::StrictFifo => "strictFIFO".into(),
            Constraint::Stopped => "stopped".into(),
            Constraint::PodsReady => "podsReady".into(),
            Constraint::Preempting => "preempting".into(),
            Constraint::Misconfigured => "misconfigured".into(),
            Constraint::Untried => "untried".into(),
        }
    }

    /// Whether the constraint belongs to one workload rather than to every pending workload
    /// of its shape (`sim`: those of a shape share the last set a head of theirs was found
    /// inadmissible for; these are the workload's alone).
    pub fn own(self) -> bool {
        matches!(
            self,
            Constraint::PodsReady
                | Constraint::Preempting
                | Constraint::Misconfigured
                | Constraint::Stopped
                | Constraint::StrictFifo
        )
    }
}

/// The weight of a constraint that is all or nothing (`nodes`, `topology`, `stopped`, …),
/// and of a resource short by all of its limit: 1000 stands for 100 %.
pub const WEIGHT_ONE: u32 = 1000;

/// The constraints reported together at one moment, each with its weight, sorted and without
/// repeats. Every one is necessary to lift; a millisecond bound by a set is split among its
/// members in proportion to their weights: a resource's weight is how short it is relative
/// to its limit (`needed / limit`, in thousandths), so a gang too large for what is left of
/// every resource counts mostly against the one furthest from fitting (the one whose limit
/// binds first as the load grows), and the others' weight is `WEIGHT_ONE`. At most
/// `BoundSet::MAX` members: a flavor assignment short of more resources at once keeps the
/// first in `Constraint` order. Kept inline, as it travels with every decision of a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BoundSet {
    len: u8,
    keys: [Constraint; BoundSet::MAX],
    weights: [u32; BoundSet::MAX],
}

impl Default for BoundSet {
    fn default() -> Self {
        BoundSet::EMPTY
    }
}

impl BoundSet {
    /// The most constraints a set holds.
    pub const MAX: usize = 8;

    /// No constraint.
    pub const EMPTY: BoundSet = BoundSet {
        len: 0,
        // Unused slots hold fixed values, so that derived equality reads `len` and the used
        // slots alone.
        keys: [Constraint::Untried; BoundSet::MAX],
        weights: [0; BoundSet::MAX],
    };

    /// The set of `c` alone.
    pub fn one(c: Constraint) -> BoundSet {
        let mut s = BoundSet::EMPTY;
        s.insert(c, WEIGHT_ONE);
        s
    }

    /// Adds `c` with `weight` (at least 1), keeping the set sorted; a member already there
    /// keeps the larger weight (the same resource short in two pod sets or flavors). Nothing
    /// when the set is full and `c` comes after every member.
    pub fn insert(&mut self, c: Constraint, weight: u32) {
        let weight = weight.max(1);
        let used = &self.keys[..self.len as usize];
        let at = match used.binary_search(&c) {
            Ok(i) => {
                self.weights[i] = self.weights[i].max(weight);
                return;
            }
            Err(at) => at,
        };
        if at == BoundSet::MAX {
            return;
        }
        let end = (self.len as usize).min(BoundSet::MAX - 1);
        self.keys.copy_within(at..end, at + 1);
        self.weights.copy_within(at..end, at + 1);
        self.keys[at] = c;
        self.weights[at] = weight;
        self.len = (end + 1) as u8;
    }

    /// Its constraints with their weights, in order.
    pub fn iter(&self) -> impl Iterator<Item = (Constraint, u32)> + '_ {
        let n = self.len as usize;
        self.keys[..n]
            .iter()
            .copied()
            .zip(self.weights[..n].iter().copied())
    }

    /// Its constraints, in order.
    pub fn constraints(&self) -> impl Iterator<Item = Constraint> + '_ {
        self.keys[..self.len as usize].iter().copied()
    }

    /// Whether it holds no constraint.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many constraints it holds.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether it is one workload's own (`Constraint::own`) rather than its shape's.
    pub fn own(&self) -> bool {
        self.constraints().any(Constraint::own)
    }

    /// Splits `ms` among the members by weight, handing each its part (integer milliseconds,
    /// rounded down: a part of a millisecond is lost, the same in every run).
    pub fn split(&self, ms: u64, mut part: impl FnMut(Constraint, u64)) {
        if self.len == 1 {
            part(self.keys[0], ms);
            return;
        }
        let total: u64 = self.iter().map(|(_, w)| u64::from(w)).sum();
        if total == 0 {
            return;
        }
        for (c, w) in self.iter() {
            part(
                c,
                (u128::from(ms) * u128::from(w) / u128::from(total)) as u64,
            );
        }
    }
}

/// A run's pending workload-milliseconds (`pendingBoundBy`'s definition: Pending in Kueue,
/// plus admitted while the scheduler cannot place the pods), per ClusterQueue and per
/// LocalQueue (`World` order), per constraint that held them back (a millisecond bound by
/// several split among them: `BoundSet::split`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PendingBound {
    /// Per ClusterQueue.
    pub cluster_queues: Vec<BTreeMap<Constraint, u64>>,
    /// Per LocalQueue.
    pub local_queues: Vec<BTreeMap<Constraint, u64>>,
}

/// Each constraint's share of a queue's pending time (`ms`: milliseconds per constraint).
/// Empty when there was no pending time; else the shares sum to 1 (up to rounding). Summed
/// in the map's order, so the same run gives the same bits.
pub fn shares(ms: &BTreeMap<Constraint, u64>) -> BTreeMap<Constraint, f64> {
    let total: u64 = ms.values().sum();
    if total == 0 {
        return BTreeMap::new();
    }
    ms.iter()
        .filter(|&(_, &t)| t > 0)
        .map(|(&c, &t)| (c, t as f64 / total as f64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_is_sorted_without_repeats_and_bounded() {
        let (cpu, mem) = (ResourceId(0), ResourceId(1));
        let mut s = BoundSet::EMPTY;
        for (c, w) in [
            (Constraint::Quota(mem), 200),
            (Constraint::Nodes, WEIGHT_ONE),
            (Constraint::Quota(cpu), 300),
            (Constraint::Quota(mem), 500),
        ] {
            s.insert(c, w);
        }
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            [
                (Constraint::Quota(cpu), 300),
                (Constraint::Quota(mem), 500),
                (Constraint::Nodes, WEIGHT_ONE)
            ]
        );
        // The same members in another order: the same set.
        let mut t = BoundSet::one(Constraint::Nodes);
        t.insert(Constraint::Quota(mem), 500);
        t.insert(Constraint::Quota(cpu), 300);
        assert_eq!(s, t);
        let mut full = BoundSet::EMPTY;
        for r in (0..12).rev() {
            full.insert(Constraint::Quota(ResourceId(r)), 1);
        }
        assert_eq!(full.len(), BoundSet::MAX);
        assert_eq!(
            full.constraints().collect::<Vec<_>>(),
            (0..8)
                .map(|r| Constraint::Quota(ResourceId(r)))
                .collect::<Vec<_>>()
        );
        assert!(!s.own() && BoundSet::one(Constraint::Preempting).own());
    }

    /// A millisecond bound by several resources goes to each in proportion to how short it
    /// is; one constraint takes it whole.
    #[test]
    fn a_millisecond_bound_by_several_constraints_is_split_by_weight() {
        let (cpu, mem, gpu) = (ResourceId(0), ResourceId(1), ResourceId(2));
        let mut three = BoundSet::EMPTY;
        three.insert(Constraint::Quota(cpu), 390);
        three.insert(Constraint::Quota(mem), 300);
        three.insert(Constraint::Quota(gpu), 10);
        let mut parts = BTreeMap::new();
        three.split(7_000, |c, ms| {
            parts.insert(c, ms);
        });
        assert_eq!(parts[&Constraint::Quota(cpu)], 3_900);
        assert_eq!(parts[&Constraint::Quota(mem)], 3_000);
        assert_eq!(parts[&Constraint::Quota(gpu)], 100);
        let mut whole = 0;
        BoundSet::one(Constraint::Topology).split(1_234, |_, ms| whole += ms);
        assert_eq!(whole, 1_234);
        let s = shares(&parts);
        assert_eq!(s[&Constraint::Quota(cpu)], 3_900.0 / 7_000.0);
        assert!((s.values().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(shares(&BTreeMap::new()).is_empty());
    }
}
