//! The HyperNode whose dry run explains a gang that fits nowhere: of the last tier (in search
//! order) with HyperNodes passing the network-topology-aware plugin's resource pre-filter, the
//! last the gradient would try (the lowest bin-pack key), each tier's verdicts and scores kept
//! with the free capacity they were worked out on.
//!
//! A gang that fits nowhere is retried after every release: in the million-workload run
//! 395,816 failed attempts each filtered the 80 spines and scored the ~67 that passed
//! (`tier_passing` 2.1 G instructions, `hypernode_binpack_for` 2.3 G), while a release moves
//! the free capacity of one spine or a few. Kept per tier with each HyperNode's free row,
//! only the HyperNodes whose row moved are filtered and scored again, and the lowest key with
//! the HyperNodes holding it is kept too: a failure whose moved HyperNodes neither held it
//! nor went below it reads the answer from those few instead of the whole tier. Which rows
//! moved is read from the HyperNodes' change versions (`Cluster::hypernode_changed`): one
//! compare per HyperNode, its row compared only when a committed bind or release touched it.

use std::cmp::Ordering;

use kueuesim_model::{DomainId, NodeId, World};

use super::{hypernode_binpack_for, tie_key};
use crate::placement::Cluster;
use crate::placement::scratch::{TierMemo, TierMemos};

/// How many (tier, root, request) memos are kept: the million's gangs come in nine sizes.
const KEPT: usize = 16;

impl TierMemos {
    /// The lowest gradient key (bin-pack score, then the seeded tie key; the first of equal
    /// keys in the tier's order) among the HyperNodes of tier `ti` (`domains`) under `root`
    /// that hold `pending` free (`tier_passing`'s list); None when none does.
    ///
    /// Invariant: an entry's `keys[i]` is what `tier_passing` and `hypernode_binpack_for` give
    /// for the tier's i-th HyperNode when its free row is `rows[i]` (both read only that row,
    /// the fixed allocatable and the fixed tree), so refreshing the entries whose row moved
    /// makes the entry the current answer. `lowest` is the lowest of `keys` and every position
    /// holding it: a refresh that moves no holder's key keeps it but for the moved keys that
    /// reach it (added) or go below it (replacing it), and one that moves a holder's row
    /// (whether or not its key changes) works it out again from `keys`. The answer is then `first_lowest` over the holders alone,
    /// which is `first_lowest` over the whole tier: every other HyperNode scores higher, and
    /// the holders come in the tier's order. Debug builds compare it with a recomputation.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lowest(
        &mut self,
        world: &World,
        cluster: &Cluster,
        (ti, domains): (usize, &[DomainId]),
        root: DomainId,
        pending: &[(usize, i64)],
        request: &[Option<(usize, i64)>; 2],
        seed: u64,
    ) -> Option<DomainId> {
        let t = &world.hypernodes;
        let n = cluster.nodes.n_resources;
        let free = &cluster.domain_free[0];
        let at = self.entries.iter().position(|e| {
            e.ti == ti && e.root == root && e.request == *request && e.pending[..] == *pending
        });
        let i = match at {
            Some(i) => i,
            None => {
                let fresh = TierMemo {
                    ti,
                    root,
                    pending: pending.to_vec(),
                    request: *request,
                    rows: Vec::new(),
                    seen: 0,
                    keys: Vec::new(),
                    lowest: None,
                };
                if self.entries.len() < KEPT {
                    self.entries.push(fresh);
                    self.entries.len() - 1
                } else {
                    let i = self.next;
                    self.next = (i + 1) % KEPT;
                    self.entries[i] = fresh;
                    i
                }
            }
        };
        let e = &mut self.entries[i];
        let key = |d: DomainId| {
            (t.within(d, root) && super::may_hold(cluster, d, pending))
                .then(|| hypernode_binpack_for(cluster, d, request))
        };
        let mut recount = false;
        let (version, changed) = (cluster.rows_version, &cluster.hypernode_changed);
        if e.keys.len() != domains.len() {
            e.rows.clear();
            e.keys.clear();
            for &d in domains {
                e.rows.extend_from_slice(&free[d.index() * n..][..n]);
                e.keys.push(key(d));
            }
            recount = true;
        } else if e.seen != version {
            // Only the HyperNodes a committed bind or release touched since the last look
            // (`hypernode_changed` past `seen`) can have moved; no committed change at all
            // (another gang of the same shape failing in the same cycle) skips the loop.
            let seen = e.seen;
            // The stamp first, and the rows (kept and current) sliced only for a stamped
            // HyperNode: every failure passes the whole tier, and few HyperNodes are stamped.
            for (pos, &d) in domains.iter().enumerate() {
                if changed[d.index()] <= seen {
                    debug_assert_eq!(
                        &e.rows[pos * n..][..n],
                        &free[d.index() * n..][..n],
                        "an unstamped HyperNode's row has not moved"
                    );
                    continue;
                }
                let now = &free[d.index() * n..][..n];
                let row = &mut e.rows[pos * n..][..n];
                let k = &mut e.keys[pos];
                // Element by element: a few resources (a slice `!=` calls memcmp for each).
                // A stamped row may be back where it was (a bind and a release).
                if row.iter().zip(now).all(|(a, b)| a == b) {
                    continue;
                }
                row.copy_from_slice(now);
                let was = std::mem::replace(k, key(d));
                if recount {
                    continue;
                }
                // A holder moved: the lowest may have gone up, work it out again.
                let low = e.lowest.as_ref().map(|l| l.0);
                if matches!((was, low), (Some(w), Some(l)) if w.total_cmp(&l).is_eq()) {
                    recount = true;
                    continue;
                }
                let Some(s) = *k else { continue };
                match (&mut e.lowest, low.map(|l| s.total_cmp(&l))) {
                    (Some((_, at)), Some(Ordering::Equal)) => {
                        // Kept in the tier's order.
                        let i = at.partition_point(|&p| p < pos as u32);
                        at.insert(i, pos as u32);
                    }
                    (_, Some(Ordering::Greater)) => {}
                    // Below the lowest, or the first to pass.
                    (lowest, _) => {
                        let mut at = lowest.take().map(|l| l.1).unwrap_or_default();
                        at.clear();
                        at.push(pos as u32);
                        *lowest = Some((s, at));
                    }
                }
            }
        }
        #[cfg(debug_assertions)]
        for (&d, row) in domains.iter().zip(e.rows.chunks_exact(n)) {
            assert_eq!(
                row,
                &free[d.index() * n..][..n],
                "the tier memo's rows are the HyperNodes' rows after a look"
            );
        }
        e.seen = version;
        if recount {
            let at = e.lowest.take().map(|l| l.1).unwrap_or_default();
            e.lowest = lowest_of(&e.keys, at);
        }
        let lowest = e
            .lowest
            .as_ref()
            .and_then(|(l, at)| first_lowest(at.iter().map(|&p| (domains[p as usize], *l)), seed));
        debug_assert_eq!(
            lowest,
            first_lowest(domains.iter().filter_map(|&d| key(d).map(|s| (d, s))), seed),
            "the kept tier memo is the tier's pre-filter and scores"
        );
        lowest
    }
}

/// The lowest of `keys` (by `total_cmp`) and the positions holding it, in order (into `at`,
/// cleared first); None when every key is None.
fn lowest_of(keys: &[Option<f64>], mut at: Vec<u32>) -> Option<(f64, Vec<u32>)> {
    at.clear();
    let mut low: Option<f64> = None;
    for (pos, k) in keys.iter().enumerate() {
        let Some(s) = *k else { continue };
        match low.map(|l| s.total_cmp(&l)) {
            Some(Ordering::Greater) => {}
            Some(Ordering::Equal) => at.push(pos as u32),
            Some(Ordering::Less) | None => {
                low = Some(s);
                at.clear();
                at.push(pos as u32);
            }
        }
    }
    low.map(|l| (l, at))
}

/// The first HyperNode of the lowest gradient key among `scored` (HyperNode, bin-pack score)
/// in order: scores by `total_cmp`, equal scores by the seeded tie key, worked out only for
/// them (as a `min_by` of the (score, tie) pairs gives it).
pub(super) fn first_lowest(
    scored: impl Iterator<Item = (DomainId, f64)>,
    seed: u64,
) -> Option<DomainId> {
    let tie = |d: DomainId| tie_key(seed ^ 0x5eed, NodeId(d.0));
    let mut best: Option<(DomainId, f64, Option<u64>)> = None;
    for (d, s) in scored {
        match &mut best {
            None => best = Some((d, s, None)),
            Some((bd, bs, bt)) => match s.total_cmp(bs) {
                Ordering::Less => best = Some((d, s, None)),
                Ordering::Equal => {
                    let known = *bt.get_or_insert_with(|| tie(*bd));
                    let mine = tie(d);
                    if mine < known {
                        best = Some((d, s, Some(mine)));
                    }
                }
                Ordering::Greater => {}
            },
        }
    }
    best.map(|b| b.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::{HyperNodeMember, HyperNodeSpec, Labels, Node, ResourceList, Topology};

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        /// A kept tier memo answers as a fresh one, attempt after attempt, as pods are bound
        /// and released between attempts: on six leaves of two nodes under three spines,
        /// with nodes of equal free capacity common (so equal keys, several holders of the
        /// lowest, holders moving and keys going below the lowest all occur), for several
        /// requests whose memos share the ring.
        #[test]
        fn a_kept_tier_memo_answers_as_a_fresh_one(
            steps in proptest::collection::vec(
                (0usize..12, 1i64..5, proptest::bool::ANY, 0usize..3, 0u64..4), 1..40,
            ),
        ) {
            let mut w = World::default();
            let gpu = w.resources.intern(kueuesim_model::resources::GPU);
            let mut hns = Vec::new();
            for leaf in 0..6 {
                let mut members = Vec::new();
                for _ in 0..2 {
                    members.push(HyperNodeMember::Node(NodeId::from_index(w.nodes.len())));
                    w.nodes.push(Node {
                        name: format!("n{:02}", w.nodes.len()),
                        labels: Labels::default(),
                        allocatable: vec![8],
                        taints: vec![],
                        unschedulable: false,
                    });
                }
                hns.push(HyperNodeSpec { name: format!("l{leaf}"), tier: 1, tier_name: None, members });
            }
            for spine in 0..3 {
                hns.push(HyperNodeSpec {
                    name: format!("s{spine}"),
                    tier: 2,
                    tier_name: None,
                    members: vec![
                        HyperNodeMember::HyperNode(format!("l{}", 2 * spine)),
                        HyperNodeMember::HyperNode(format!("l{}", 2 * spine + 1)),
                    ],
                });
            }
            w.hypernodes = Topology::from_hypernodes(&hns, w.nodes.len()).unwrap();
            let mut cluster = Cluster::new(&w);
            let mut kept = TierMemos::default();
            let g = gpu.index();
            for &(node, amount, bind, size, seed) in &steps {
                let node = NodeId::from_index(node);
                let l = ResourceList::from_pairs(vec![(gpu, amount)]);
                if bind && cluster.nodes.fits(node, &l) {
                    cluster.apply(&w, node, &l, 1);
                } else if !bind && cluster.nodes.free(node, g) + amount <= 8 {
                    cluster.apply(&w, node, &l, -1);
                }
                // Gangs of one to three pods of two GPUs.
                let pending = [(g, 2 * (size as i64 + 1))];
                let request = [Some((g, 2)), None];
                for (ti, (_, domains)) in w.hypernodes.by_tier.iter().enumerate() {
                    let got = kept.lowest(&w, &cluster, (ti, domains), DomainId::ROOT, &pending, &request, seed);
                    let want = TierMemos::default().lowest(&w, &cluster, (ti, domains), DomainId::ROOT, &pending, &request, seed);
                    proptest::prop_assert_eq!(got, want);
                }
            }
        }
    }
}
