//! Volcano's explanation of a gang that fits under no HyperNode: the dry run on the last
//! HyperNode in search order whose failure the gang's `Unschedulable` message quotes, kept
//! with the capacity state of that HyperNode's nodes and served again while the state holds.
//!
//! A gang that fits nowhere is explained again after every release (the million-workload run
//! did so 122,642 times in its first 200 hours), mostly on a HyperNode the release did not
//! touch; the dry run on a 128-node spine and its FitError were most of that work.

use kueuesim_model::{DomainId, NodeId, World};

use super::messages::{fit_error, fit_text, hypernode_name, short_order, volcano_fit};
use super::{Failure, TopologyScorer};
use crate::placement::scratch::{Explained, KeptExplanations};
use crate::placement::{Binding, Cluster, GangPods, NodeCapacity, fill, undo, with_bindings};

/// How many explaining dry runs are kept.
const KEPT: usize = 32;

impl KeptExplanations {
    /// The dry run that explains a gang fitting nowhere: `need` of `pods` on `d`'s nodes, the
    /// pod it stops at, and the FitError of that pod there with the others bound, prefixed
    /// with the HyperNode (`volcano_fit`).
    ///
    /// When one pod set alone has pods pending and the run fails, its outcome is a function
    /// of the nodes' capacity state: `fill` gives each node pods while one more fits (a node
    /// stays a candidate until then), so every feasible node ends full for this pod
    /// whichever order the pods took them, the count bound is the sum of what each node
    /// holds, and the FitError counts the same full nodes. Such an outcome is kept with the
    /// cluster's `rows_version` it was worked out at and served again while no committed bind
    /// or release has touched `d` since (its `Cluster::hypernode_changed`: one compare, not
    /// one per node), whatever the attempt's seed. The dry runs in between (this one's, the
    /// gradient's) bind on the nodes alone and are undone before the search explains, so the
    /// nodes are then as the committed binds and releases left them. A run that succeeds (its bindings depend on the order) or that has
    /// several pod sets pending (the first set's choices shape the next's) is worked out
    /// afresh every time. Debug builds work a served outcome out afresh and compare.
    ///
    /// `scorer_base` makes the dry run's scorer when first asked: a served or counted outcome
    /// needs none.
    pub(super) fn explain<'s, 'w: 's>(
        &mut self,
        world: &World,
        cluster: &mut Cluster,
        pods: &GangPods,
        need: usize,
        d: DomainId,
        scorer_base: &dyn Fn() -> &'s TopologyScorer<'w>,
    ) -> Failure {
        let nodes = world.hypernodes.nodes_of(d);
        let changed = cluster.hypernode_changed[d.index()];
        let one_set = pods
            .iter()
            .filter(|(_, slots)| slots.iter().any(Option::is_none))
            .count()
            == 1;
        if one_set
            && let Some(e) = self.entries.iter().find(|e| {
                e.d == d && e.need == need && e.pods[..] == pods[..] && changed <= e.version
            })
        {
            let kept = e.failure.clone();
            #[cfg(debug_assertions)]
            {
                // On a clone: the check leaves the cluster as the attempt has it, whatever
                // it does.
                let fresh = KeptExplanations::default().explain(
                    world,
                    &mut cluster.clone(),
                    pods,
                    need,
                    d,
                    scorer_base,
                );
                assert_eq!(
                    (&kept.pod, &kept.fit, kept.schedulable),
                    (&fresh.pod, &fresh.fit, fresh.schedulable),
                    "a kept explanation is the dry run on the unchanged nodes"
                );
            }
            return kept;
        }
        // One pod set pending: each node filled while one more pod fits, without the
        // scoring (the outcome does not depend on the order, as above); the real dry run
        // only when that places them all (then the bindings are the scorer's).
        let mut counted = if one_set {
            explain_one_set(world, &mut cluster.nodes, nodes, pods, need)
        } else {
            None
        };
        #[cfg(debug_assertions)]
        if let Some(f) = &counted {
            // The dry run it stands for fails at the same pod, having bound as many, and
            // leaves the nodes where the same FitError is read.
            let mut cap = cluster.nodes.clone();
            let run = fill(
                world,
                &mut cap,
                nodes,
                pods,
                need,
                &mut scorer_base().clone(),
            );
            let Err((rb, rpod)) = run else {
                panic!("the counted explanation failed where fill succeeds")
            };
            assert_eq!(
                (rb.len(), rpod),
                (f.schedulable, f.pod),
                "the counted explanation stops as fill"
            );
            assert_eq!(
                fit_error(world, &cap, &pods[rpod.0].0, nodes),
                f.fit,
                "the counted explanation's FitError is the one on fill's nodes"
            );
        }
        if let Some(f) = &mut counted {
            f.fit = volcano_fit(&f.fit, hypernode_name(&world.hypernodes, d));
        }
        let (failure, failed_run) = match counted {
            Some(f) => (f, true),
            None => {
                let mut scorer = scorer_base().clone();
                let (b, pod, failed_run) =
                    match fill(world, &mut cluster.nodes, nodes, pods, need, &mut scorer) {
                        Ok(b) => (
                            b,
                            crate::placement::first_pending(pods).unwrap_or((0, 0)),
                            false,
                        ),
                        Err((b, pod)) => (b, pod, true),
                    };
                let failed = with_bindings(pods, &b);
                let fit = volcano_fit(
                    &fit_error(world, &cluster.nodes, &failed[pod.0].0, nodes),
                    hypernode_name(&world.hypernodes, d),
                );
                undo(&mut cluster.nodes, pods, &b);
                let failure = Failure {
                    pod,
                    fit,
                    schedulable: b.len(),
                };
                (failure, failed_run)
            }
        };
        if one_set && failed_run {
            self.keep(cluster.rows_version, (d, need, pods), &failure);
        }
        failure
    }

    /// Keeps `failure` of `(d, need, pods)` at the cluster's `rows_version` `version`: a new
    /// entry until `KEPT`, then the oldest one's buffers refilled.
    fn keep(
        &mut self,
        version: u64,
        (d, need, pods): (DomainId, usize, &GangPods),
        failure: &Failure,
    ) {
        let i = if self.entries.len() < KEPT {
            self.entries.push(Explained {
                d,
                need,
                pods: Vec::new(),
                version: 0,
                failure: failure.clone(),
            });
            self.entries.len() - 1
        } else {
            let i = self.next;
            self.next = (i + 1) % KEPT;
            i
        };
        let e = &mut self.entries[i];
        e.d = d;
        e.need = need;
        e.pods.clear();
        e.pods.extend_from_slice(pods);
        e.version = version;
        e.failure.clone_from(failure);
    }
}

/// The failed `fill` of a gang with one pod set pending on `nodes` and its FitError, worked
/// out without the scorer (see `fill_by_counts`); None when the pods all fit (`fill` then
/// succeeds with the scorer's choice of nodes). The nodes are left as they were.
fn explain_one_set(
    world: &World,
    cap: &mut NodeCapacity,
    nodes: &[NodeId],
    pods: &GangPods,
    need: usize,
) -> Option<Failure> {
    let (ps, (needs, _)) = pods
        .iter()
        .enumerate()
        .find(|(_, (_, slots))| slots.iter().any(Option::is_none))?;
    if cap.statically_plain(needs) {
        return count_failure(world, cap, nodes, (ps, &pods[ps]), need);
    }
    let (b, pod) = fill_by_counts(world, cap, nodes, pods, need)?;
    let fit = fit_error(world, cap, needs, nodes);
    undo(cap, pods, &b);
    Some(Failure {
        pod,
        fit,
        schedulable: b.len(),
    })
}

/// `fill_by_counts` and the FitError over the filled nodes in one pass, without binding, for
/// a pod that passes the static filters on every node (`statically_plain`): a node that fits
/// the pod takes as many as its free pod slots and each requested resource allow
/// (`fill`'s loop binds while one more fits), and its reason in the FitError is then the
/// first resource short (`ShortOrder`), or its pod slots, after those pods; a node that does
/// not fit gives its reason as it is. None when the pending pods (at most `need`) all fit.
fn count_failure(
    world: &World,
    cap: &NodeCapacity,
    nodes: &[NodeId],
    (ps, (needs, slots)): (usize, &(crate::placement::PodNeeds, Vec<Option<NodeId>>)),
    need: usize,
) -> Option<Failure> {
    // `fill` takes at most `need` pending slots, in slot order.
    let pending = slots.iter().filter(|s| s.is_none()).count().min(need);
    let short = short_order(world, needs);
    let mut insufficient = vec![0usize; short.len()];
    let mut too_many = 0usize;
    let mut bound = 0usize;
    // The pod's requests in `ShortOrder` as (resource index, amount), read against each node's
    // row of free capacity: this runs for every node of a spine on each explanation worked out
    // afresh, and most nodes of a busy spine cannot take the pod.
    let asked: Vec<(usize, i64)> = short.iter().map(|&(_, _, r, a)| (r.index(), a)).collect();
    let n_res = cap.n_resources;
    for &n in nodes {
        let free = &cap.free[n.index() * n_res..][..n_res];
        let pods = cap.free_pods[n.index()];
        // The first resource short in Volcano's order. With none and a pod slot free the node
        // fits the pod (`NodeCapacity::fits`: the same comparisons, in another order) and
        // takes as many as fit; otherwise it takes none, and its reason is that resource
        // (with none short, its pod slots).
        let first_short = asked.iter().position(|&(r, a)| a > free[r]);
        debug_assert_eq!(
            pods >= 1 && first_short.is_none(),
            cap.fits(n, &needs.requests),
            "no resource short and a pod slot free is `fits`"
        );
        let reason = if pods >= 1 && first_short.is_none() {
            // At least one: it fits.
            let mut k = pods;
            for &(r, a) in &asked {
                if a > 0 {
                    k = k.min(free[r] / a);
                }
            }
            bound += k as usize;
            if bound >= pending {
                return None;
            }
            asked.iter().position(|&(r, a)| a > free[r] - k * a)
        } else {
            first_short
        };
        match reason {
            Some(i) => insufficient[i] += 1,
            None => too_many += 1,
        }
    }
    let at = slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .nth(bound)
        .map(|(i, _)| i)?;
    Some(Failure {
        pod: (ps, at),
        fit: fit_text(Vec::new(), &short, &insufficient, too_many),
        schedulable: bound,
    })
}

/// The failed `fill` of a gang with one pod set pending on `nodes`, worked out node by node:
/// `fill` gives each feasible node pods while one more fits (a node stays in its heap until
/// then) and fails only once every node is full for the pod, so when it fails the nodes hold
/// what they hold here, whatever order the scorer took them in, and it stops at the pending
/// slot after the last one bound. The pods are left bound (for the FitError; the caller
/// undoes them) and returned with the slot it stops at. None, with nothing bound, when the
/// pods all fit: `fill` then succeeds with the scorer's choice of nodes.
fn fill_by_counts(
    world: &World,
    cap: &mut NodeCapacity,
    nodes: &[NodeId],
    pods: &GangPods,
    need: usize,
) -> Option<(Vec<Binding>, (usize, usize))> {
    let (ps, (needs, slots)) = pods
        .iter()
        .enumerate()
        .find(|(_, (_, slots))| slots.iter().any(Option::is_none))?;
    // `fill` takes at most `need` pending slots, in slot order.
    let pending: Vec<usize> = slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| i)
        .take(need)
        .collect();
    // `fill`'s first filter is `feasible`; on plain nodes its static part passes everywhere.
    let static_ok = cap.statically_plain(needs);
    let mut bound: Vec<Binding> = Vec::new();
    for &n in nodes {
        if !(cap.fits(n, &needs.requests)
            && (static_ok || crate::placement::statically_feasible(world, n, needs)))
        {
            continue;
        }
        loop {
            if bound.len() == pending.len() {
                undo(cap, pods, &bound);
                return None;
            }
            cap.apply(n, &needs.requests, 1);
            bound.push((ps, pending[bound.len()], n));
            if !cap.fits(n, &needs.requests) {
                break;
            }
        }
    }
    if bound.len() == pending.len() {
        undo(cap, pods, &bound);
        return None;
    }
    let at = (ps, pending[bound.len()]);
    Some((bound, at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::PodNeeds;
    use crate::placement::volcano::{OUTSIDE, Scoring};
    use kueuesim_model::{HyperNodeMember, HyperNodeSpec, Labels, Node, Topology};

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(8192))]
        /// `KeptExplanations::explain` with its kept dry runs answers as a fresh dry run with the attempt's own
        /// seed, attempt after attempt, as pods are bound and released between them (or not):
        /// on two leaves and their spine, with one or two pod sets pending, pods that take
        /// whole or part nodes, and some nodes already busy.
        #[test]
        fn a_kept_explanation_is_a_fresh_dry_run(
            leaves in (1usize..10, 1usize..10),
            busy in proptest::collection::vec((0usize..20, 0i64..9), 0..12),
            sets in proptest::collection::vec((1usize..6, 0i64..9, 1i64..5, proptest::bool::ANY), 1..3),
            need_frac in 1usize..4,
            steps in proptest::collection::vec(
                (0u8..3, 0u64..1000, 0u8..3, 0usize..20, 1i64..5), 1..10,
            ),
        ) {
            let mut w = World::default();
            let cpu = w.resources.intern("cpu");
            let gpu = w.resources.intern(kueuesim_model::resources::GPU);
            let mut hns = Vec::new();
            for (leaf, count) in [("l0", leaves.0), ("l1", leaves.1)] {
                let mut members = Vec::new();
                for _ in 0..count {
                    members.push(HyperNodeMember::Node(NodeId::from_index(w.nodes.len())));
                    w.nodes.push(Node {
                        name: format!("n{:02}", w.nodes.len()),
                        labels: Labels::default(),
                        allocatable: vec![8_000, 8],
                        taints: vec![],
                        unschedulable: false,
                    });
                }
                hns.push(HyperNodeSpec { name: leaf.into(), tier: 1, tier_name: None, members });
            }
            hns.push(HyperNodeSpec {
                name: "s".into(),
                tier: 2,
                tier_name: None,
                members: vec![
                    HyperNodeMember::HyperNode("l0".into()),
                    HyperNodeMember::HyperNode("l1".into()),
                ],
            });
            w.hypernodes = Topology::from_hypernodes(&hns, w.nodes.len()).unwrap();
            let n = w.nodes.len();
            let mut cluster = Cluster::new(&w);
            let load = |c: i64, g: i64| {
                kueuesim_model::ResourceList::from_pairs(vec![(cpu, c * 1_000), (gpu, g)])
            };
            for &(node, g) in &busy {
                let node = NodeId::from_index(node % n);
                let l = load(1, g.min(8));
                if cluster.nodes.fits(node, &l) {
                    cluster.apply(&w, node, &l, 1);
                }
            }
            // Pod sets: (pods, GPUs and cpu per pod, whether already bound elsewhere; the
            // first never is).
            let pods: Vec<(PodNeeds, Vec<Option<NodeId>>)> = sets
                .iter()
                .enumerate()
                .map(|(i, &(count, g, c, bound))| {
                    let needs = PodNeeds {
                        requests: load(c, g),
                        node_selector: Labels::default(),
                        tolerations: vec![],
                    };
                    (needs, vec![(bound && i > 0).then_some(OUTSIDE); count])
                })
                .collect();
            let pending: usize = pods.iter().map(|(_, s)| s.iter().filter(|x| x.is_none()).count()).sum();
            let need = pending.div_ceil(need_frac);
            let scoring = Scoring::new(&w, cluster.res);
            let t = &w.hypernodes;
            let scorer = |seed| TopologyScorer::new(&w, &scoring, None, seed).for_subjob(&pods, None);
            let mut kept = KeptExplanations::default();
            for &(which, seed, op, node, g) in &steps {
                let d = t.by_tier.iter().flat_map(|(_, ds)| ds.iter().copied()).nth(which as usize).unwrap_or(DomainId::ROOT);
                let base = scorer(seed);
                let got = kept.explain(&w, &mut cluster, &pods, need, d, &|| &base);
                // On the cluster itself: its dry run binds and undoes pods on the nodes, as
                // the gradient's do between two explanations, and the kept ones stay served.
                let want = KeptExplanations::default().explain(&w, &mut cluster, &pods, need, d, &|| &base);
                proptest::prop_assert_eq!(
                    (got.pod, &got.fit, got.schedulable),
                    (want.pod, &want.fit, want.schedulable)
                );
                // Between attempts: a pod bound, a pod's worth released, or nothing.
                let node = NodeId::from_index(node % n);
                let l = load(1, g);
                match op {
                    0 if cluster.nodes.fits(node, &l) => cluster.apply(&w, node, &l, 1),
                    1 if cluster.nodes.free(node, gpu.index()) + g <= 8
                        && cluster.nodes.free(node, cpu.index()) + 1_000 <= 8_000 =>
                    {
                        cluster.apply(&w, node, &l, -1)
                    }
                    _ => {}
                }
            }
        }
    }
}
