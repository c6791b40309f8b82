//! Where pods go: node and topology-domain capacity bookkeeping, and the placement policies
//! of the three schedulers (kube-scheduler, Volcano, KAI), which return bindings as data.
//!
//! Layout: the files of this folder are the shared bookkeeping (`Cluster`, node capacity and
//! its occupancy classes, the filters, GPU devices and Volcano's vGPU devices, the lazily
//! kept indexes, the `fill` loop and the node search kube-scheduler and Volcano share), and
//! each scheduler has a folder below it (`kube/`, `volcano/`, `kai/`). A scheduler folder
//! uses the shared files and never another scheduler's folder; the shared files use no
//! scheduler folder (what a scheduler keeps in the `Cluster` is declared here, `scratch`,
//! `fit_counts`, `domain_order`). The test `layering` of the engine's integration tests reads
//! the sources and holds both rules.
//!
//! The filters mirror kube-scheduler's default plugins in their order (NodeUnschedulable,
//! TaintToleration, NodeAffinity, NodeResourcesFit) so a failure is explained with
//! kube-scheduler's own `FitError` wording; Volcano's `predicates` plugin and KAI reuse the
//! same filters. Each scheduler then scores the feasible nodes its own way (`kube`, `volcano`,
//! `kai` submodules) and the shared `fill` loop binds pod after pod to the best node.
//!
//! Speed: every topology keeps per-domain free capacity, updated on each bind and release by
//! walking the node's ancestor chain, so a domain that cannot hold a gang is rejected in
//! O(resources) without looking at its nodes; `fill` scores each candidate node once and keeps
//! one max-heap per scoring group (leaf or preferred subdomain), so a gang of p pods in a domain
//! of n nodes costs O(n + p·(groups + log n)).
//! KAI's topology plugin also gets, per task shape, each domain's count of task copies that
//! fit, kept in step the same way (`fit_counts`), instead of a pass over the nodes of the
//! lowest common domain per decision; and its bin-pack dry run of alike GPU pods reads each
//! domain's nodes in (free GPUs, name) order from per-domain bitsets (`domain_order`) instead
//! of scoring every node of the domain.

mod ancestors;
mod capacity;
mod cluster;
mod commit;
pub mod devices;
mod domain_order;
mod filters;
pub mod fit_counts;
mod gpu_order;
pub mod kai;
pub mod kube;
mod node_classes;
mod node_search;
mod noted;
mod scratch;
mod tier_index;
pub mod vgpu_book;
pub mod volcano;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use kueuesim_model::{Labels, NodeId, ResourceList, Toleration, Topology, World};

pub use capacity::*;
pub use cluster::*;
pub use filters::*;
// The paths the simulation (`sim/`) names kube-scheduler's variants and Volcano's vGPU by,
// from before the scheduler folders: re-exports, not dependencies of this module.
pub use kube::{gpu_share, hooked};
/// The multiplicative hash step the occupancy classes use, shared with the shape classes.
pub(crate) use node_classes::mix;
/// Volcano vGPU by the path the simulation names it: the device book and Volcano's allocation.
pub mod volcano_vgpu {
    pub use super::vgpu_book::*;
    pub use super::volcano::vgpu::place;
}

/// The topologies in `Cluster` index order: the HyperNode tree, then `world.topologies`.
pub fn topologies(world: &World) -> impl Iterator<Item = &Topology> {
    std::iter::once(&world.hypernodes).chain(world.topologies.iter())
}

/// What a pod of one pod set needs from a node: its requests, the nodeSelector (its own plus
/// its flavors' nodeLabels, which Kueue injects), and its tolerations (plus the flavors').
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodNeeds {
    /// Requests of one pod.
    pub requests: ResourceList,
    /// Required node labels.
    pub node_selector: Labels,
    /// Tolerations.
    pub tolerations: Vec<Toleration>,
}

/// The pods of one workload as its scheduler sees them: per pod set, what a pod needs and
/// where each pod is bound (None: pending).
pub type GangPods = [(PodNeeds, Vec<Option<NodeId>>)];

/// The result of one placement attempt.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Placement {
    /// New bindings: (pod set, pod index, node).
    pub bound: Vec<(usize, usize, NodeId)>,
    /// Why not every pending pod was bound (the first pod left pending and the scheduler's
    /// explanation, worded as that scheduler words it).
    pub unplaced: Option<(usize, usize, String)>,
    /// The topology domain the gang was placed in (Volcano's `job-allocated-hypernode`, KAI's
    /// chosen domain), if a topology constraint applied.
    pub domain: Option<String>,
    /// With GPU devices: the devices each new binding of a GPU pod holds, (pod set, pod
    /// index, claim).
    pub claims: Vec<(usize, usize, devices::Claim)>,
    /// With Volcano vGPU: the vGPU devices each new binding of a vGPU pod holds, (pod set,
    /// pod index, claim).
    pub vgpu: Vec<(usize, usize, vgpu_book::VgpuClaim)>,
}

/// A score as the schedulers compute it (a float sum of plugin scores), totally ordered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score(pub f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A per-attempt pseudo-random key of a node, for "pick at random among the best" where
/// upstream does (kube-scheduler's `selectHost`, Volcano's `SelectBestNode`): deterministic
/// in (seed, node), so runs repeat exactly.
#[inline]
pub fn tie_key(seed: u64, node: NodeId) -> u64 {
    tie_key_at(seed, u64::from(node.0))
}

/// `tie_key` of the node with index `at`, for scans that walk node indexes in bitsets.
#[inline(always)]
pub(crate) fn tie_key_at(seed: u64, at: u64) -> u64 {
    tie_key_finish(tie_key_mixed(seed, at))
}

/// splitmix64 over the pair (seed, node index) up to its last step (`tie_key_finish`):
/// `selectHost`'s scan over many nodes compares this value's top bits first
/// (`TIE_KEY_TOP`), which the last step leaves as they are.
#[inline(always)]
pub(crate) fn tie_key_mixed(seed: u64, at: u64) -> u64 {
    let mut z = seed ^ at.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb)
}

/// splitmix64's last step: `z ^ (z >> 31)`, which changes only bits 0..=32 (the shifted
/// value has no higher bit), so `tie_key_finish(z) & TIE_KEY_TOP == z & TIE_KEY_TOP`.
#[inline(always)]
pub(crate) fn tie_key_finish(z: u64) -> u64 {
    z ^ (z >> 31)
}

/// The bits of a tie key that splitmix64's last step leaves alone (bits 33..=63).
pub(crate) const TIE_KEY_TOP: u64 = !((1u64 << 33) - 1);

/// How `fill` ranks nodes: a node's score is its group's score plus its own. Groups let a
/// policy express "stay in the same leaf" (Volcano) or "roomiest preferred subdomain first"
/// (KAI) without rescoring every node after every bind.
pub trait Scorer {
    /// The scoring group of `node` (a small dense index).
    fn group(&self, node: NodeId) -> usize;
    /// The group's score for the next pod.
    fn group_score(&mut self, group: usize) -> f64;
    /// The node's own score for one more pod of `pod` given its free capacity.
    fn node_score(&self, cap: &NodeCapacity, node: NodeId, pod: &PodNeeds) -> f64;
    /// Tie-break among equal totals: higher wins.
    fn tie(&self, node: NodeId) -> u64;
    /// Whether every candidate is known to pass the static filters for `pod` (none
    /// unschedulable or with a blocking taint, and `pod` has no node selector), so that
    /// `fill` checks only capacity; false (check everything) unless a scorer knows.
    fn statically_plain(&self, _pod: &PodNeeds) -> bool {
        false
    }
    /// Whether `node_score` depends on the node's capacity state only (free, free pod slots,
    /// allocatable; `NodeCapacity::same_state`), so `fill` may score one node per state; false
    /// unless a scorer knows. Saying true also promises what `fill_in`'s kept scores
    /// (`FillBuffers`) rely on: the score reads the pod only through its `requests` (not its
    /// node selector or tolerations), the allocatable it reads is `NodeCapacity::alloc` (set
    /// once from the world, never written), and the score function is the same on every call
    /// with the same buffers.
    fn score_is_per_state(&self) -> bool {
        false
    }
    /// A pod was bound to `node`.
    fn bound(&mut self, node: NodeId);
    /// `bound` for a `node` whose group `fill` already knows (`group(node)`): a scorer that
    /// counts binds per group need not look it up again.
    fn bound_in(&mut self, node: NodeId, _group: usize) {
        self.bound(node);
    }
    /// A version of the group scores: while it stays the same (`Some` and equal), every
    /// `group_score` answers as before, so `fill` keeps the scores it asked for the last pod
    /// instead of asking again per pod. None (the default): any bind may move them, and
    /// `fill` asks for every group's score before every pod.
    fn group_scores_version(&self) -> Option<u64> {
        None
    }
    /// Whether groups tied at the highest group score get `tie_bonus` for this pod (Volcano's
    /// network-topology-aware task-count bonus); false for every other scheduler.
    fn has_tie_bonus(&self) -> bool {
        false
    }
    /// The bonus of `group` when it is tied at the highest group score with more than one
    /// feasible node among the tied groups.
    fn tie_bonus(&self, _group: usize) -> f64 {
        0.0
    }
}

/// A pod binding: (pod set, pod index, node).
pub type Binding = (usize, usize, NodeId);

/// An entry of one of `fill`'s per-group heaps: the node's own score, its tie key, the node.
type FillEntry = (Score, u64, NodeId);

/// `fill`'s working vectors and per-group heaps, kept by a caller that fills often (Volcano's
/// gradient search, once per placed gang) so that they are not allocated and grown afresh on
/// every call (about seven vector growths a call on the million-workload run). No meaning
/// between calls: `fill_in` clears what it reads, except `states`.
///
/// `states` keeps node scores across calls, by capacity state and pod, for a scorer whose
/// `node_score` is per state (`Scorer::score_is_per_state`). The caller vouches that every
/// call with the same buffers scores nodes with the same function of (state, pod): Volcano's
/// gradient, whose node score is its node-order plugins' (`Scoring::node_order`), resolved
/// from the world's configuration and fixed for the run. Debug builds score afresh every
/// node served from it and compare. A one-off `fill` sets `score_afresh` and keeps nothing:
/// its buffers die with the call, so a kept score would be an allocation never read.
#[derive(Clone, Debug, Default)]
pub(crate) struct FillBuffers {
    states: StateScores,
    /// Score every state with the scorer and keep no score (`fill`'s one-off buffers).
    score_afresh: bool,
    /// The heaps of the pod set at hand are the first ones (`fill_in`'s `used`); the rest are
    /// kept for their allocations.
    heaps: Vec<(usize, BinaryHeap<FillEntry>)>,
    slot_of: Vec<u32>,
    open: Vec<(NodeId, usize)>,
    check: FitCheck,
    group_scores: Vec<f64>,
}

/// Binds up to `limit` pending pods of `pods`, pod set by pod set, each to the best-scoring
/// feasible node among `candidates`, updating `cap`. Stops at the first pod no candidate can
/// take and returns it as `Err((bound so far, (pod set, index)))`; the caller undoes or keeps
/// the partial bindings.
#[allow(clippy::type_complexity)]
pub fn fill<S: Scorer>(
    world: &World,
    cap: &mut NodeCapacity,
    candidates: &[NodeId],
    pods: &GangPods,
    limit: usize,
    scorer: &mut S,
) -> Result<Vec<Binding>, (Vec<Binding>, (usize, usize))> {
    fill_in(
        world,
        cap,
        candidates,
        pods,
        limit,
        scorer,
        &mut FillBuffers {
            score_afresh: true,
            ..FillBuffers::default()
        },
    )
}

/// `fill` with its working buffers kept by the caller (`FillBuffers`).
#[allow(clippy::type_complexity)]
pub(crate) fn fill_in<S: Scorer>(
    world: &World,
    cap: &mut NodeCapacity,
    candidates: &[NodeId],
    pods: &GangPods,
    limit: usize,
    scorer: &mut S,
    buffers: &mut FillBuffers,
) -> Result<Vec<Binding>, (Vec<Binding>, (usize, usize))> {
    let pending_total: usize = pods.iter().map(|(_, s)| s.len()).sum();
    let mut bound = Vec::with_capacity(limit.min(pending_total));
    let FillBuffers {
        // One heap per scoring group of the pod set at hand: `heaps[..used]`.
        heaps,
        // Group - lo → slot in `heaps`, created on first use, so only groups with a node that
        // can take the pod are looked at per pod. Candidates of one domain have groups in a
        // narrow id range.
        slot_of,
        // The candidates that can take a pod of the pod set, with their groups: most nodes of
        // a busy domain cannot, and they cost one capacity comparison (`FitCheck`) and nothing
        // more.
        open,
        check,
        // Per heap, its group's score for the pod at hand (read twice per pod: the tie bonus
        // and the totals).
        group_scores,
        states,
        score_afresh,
    } = buffers;
    for (ps, (needs, slots)) in pods.iter().enumerate() {
        if bound.len() >= limit {
            break;
        }
        let mut pending = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_none())
            .map(|(i, _)| i)
            .take(limit - bound.len())
            .peekable();
        if pending.peek().is_none() {
            continue;
        }
        let mut used = 0;
        check.set(&needs.requests);
        // Static filters pass everywhere when the scorer or the capacity knows (no node
        // unschedulable or tainted, no node selector): `feasible` is then `fits` alone.
        let plain = scorer.statically_plain(needs) || cap.statically_plain(needs);
        open.clear();
        let (mut lo, mut hi) = (usize::MAX, 0);
        for &n in candidates {
            let ok = check.fits(cap, n) && (plain || statically_feasible(world, n, needs));
            debug_assert_eq!(
                ok,
                feasible(world, cap, n, needs),
                "fill's filter is `feasible`"
            );
            if ok {
                let g = scorer.group(n);
                (lo, hi) = (lo.min(g), hi.max(g));
                open.push((n, g));
            }
        }
        slot_of.clear();
        if !open.is_empty() {
            slot_of.resize(hi - lo + 1, u32::MAX);
        }
        // With scores per capacity state, the last few states scored, each with a node in
        // that state: a domain's nodes are mostly in a handful of states (empty, full, one
        // pod in), so most candidates reuse a score. Valid for this loop only (nothing is
        // bound during it).
        let per_state = scorer.score_is_per_state();
        let mut scored: [(NodeId, Score); STATES_KEPT] =
            [(NodeId(u32::MAX), Score(0.0)); STATES_KEPT];
        let mut next_slot = 0;
        for &(n, g) in open.iter() {
            if slot_of[g - lo] == u32::MAX {
                slot_of[g - lo] = used as u32;
                // A kept heap is emptied; its order is its entries' alone (every entry is
                // distinct, ending with its node), whatever its capacity or past.
                if used == heaps.len() {
                    heaps.push((g, BinaryHeap::new()));
                } else {
                    heaps[used].0 = g;
                    heaps[used].1.clear();
                }
                // The first group's heap has room for every node that fits: with one group
                // (KAI without a preferred level) it never grows.
                if used == 0 {
                    heaps[0].1.reserve(open.len());
                }
                used += 1;
            }
            let score = if per_state {
                match scored
                    .iter()
                    .find(|&&(m, _)| m.0 != u32::MAX && cap.same_state(m, n))
                {
                    Some(&(_, s)) => s,
                    None => {
                        let s = if *score_afresh {
                            Score(scorer.node_score(cap, n, needs))
                        } else {
                            states.score(cap, n, needs, || Score(scorer.node_score(cap, n, needs)))
                        };
                        scored[next_slot] = (n, s);
                        next_slot = (next_slot + 1) % STATES_KEPT;
                        s
                    }
                }
            } else {
                Score(scorer.node_score(cap, n, needs))
            };
            heaps[slot_of[g - lo] as usize]
                .1
                .push((score, scorer.tie(n), n));
        }
        // The version of the group scores in `group_scores` (None: not asked for this pod
        // set yet). Between two pods of one pod set only the heap popped from changes, so
        // while the scorer's version stays, the kept scores are what asking again gives, the
        // popped heap's made NaN below if the pop emptied it (Volcano: the LCA score moves
        // only with the subjob's allocated HyperNode, a few times a gang).
        let mut scores_version = None;
        for idx in pending {
            let heaps = &mut heaps[..used];
            let version = scorer.group_scores_version();
            if version.is_none() || version != scores_version {
                group_scores.clear();
                group_scores.extend(heaps.iter().map(|(g, h)| {
                    if h.is_empty() {
                        f64::NAN
                    } else {
                        scorer.group_score(*g)
                    }
                }));
                scores_version = version;
            }
            #[cfg(debug_assertions)]
            for ((g, h), &kept) in heaps.iter().zip(group_scores.iter()) {
                let asked = if h.is_empty() {
                    f64::NAN
                } else {
                    scorer.group_score(*g)
                };
                debug_assert_eq!(
                    kept.to_bits(),
                    asked.to_bits(),
                    "a kept group score is what asking again gives"
                );
            }
            // The highest group score among groups with a feasible node, when more than one
            // node shares it (the only case the tie bonus applies).
            let tied_max = if scorer.has_tie_bonus() {
                let mut max = f64::NEG_INFINITY;
                let mut nodes = 0;
                for ((_, h), &s) in heaps.iter().zip(group_scores.iter()) {
                    if h.is_empty() {
                        continue;
                    }
                    match s.total_cmp(&max) {
                        std::cmp::Ordering::Greater => (max, nodes) = (s, h.len()),
                        std::cmp::Ordering::Equal => nodes += h.len(),
                        std::cmp::Ordering::Less => {}
                    }
                }
                (nodes > 1).then_some(max)
            } else {
                None
            };
            // The best node of each group, then the best group total.
            let mut best: Option<(Score, u64, usize, NodeId)> = None;
            for (k, ((g, h), &group)) in heaps.iter().zip(group_scores.iter()).enumerate() {
                let Some(&(s, t, n)) = h.peek() else { continue };
                let bonus = match tied_max {
                    Some(m) if group.total_cmp(&m).is_eq() => scorer.tie_bonus(*g),
                    _ => 0.0,
                };
                let total = Score(group + bonus + s.0);
                if best.is_none_or(|b| (total, t) > (b.0, b.1)) {
                    best = Some((total, t, k, n));
                }
            }
            let Some((_, _, g, node)) = best else {
                return Err((bound, (ps, idx)));
            };
            heaps[g].1.pop();
            cap.apply(node, &needs.requests, 1);
            bound.push((ps, idx, node));
            scorer.bound_in(node, heaps[g].0);
            let fits = check.fits(cap, node);
            debug_assert_eq!(fits, cap.fits(node, &needs.requests), "FitCheck is `fits`");
            if fits {
                heaps[g].1.push((
                    Score(scorer.node_score(cap, node, needs)),
                    scorer.tie(node),
                    node,
                ));
            } else if heaps[g].1.is_empty() {
                // An emptied group is asked no score (NaN, as the pass above gives it).
                group_scores[g] = f64::NAN;
            }
        }
    }
    Ok(bound)
}

/// How many capacity states `fill` keeps scores of (`Scorer::score_is_per_state`).
const STATES_KEPT: usize = 4;

/// Node scores by (capacity state, pod) kept across `fill_in` calls (`FillBuffers`): on the
/// million-workload run every dry run scores the one state of an empty node for one of a few
/// pod shapes, a 755-instruction `Scoring::node_order` per placed gang.
#[derive(Clone, Debug, Default)]
struct StateScores {
    /// (free row, free pod slots, allocatable row) of a node, its pod's requests, the score.
    entries: Vec<(Vec<i64>, ResourceList, Score)>,
    /// The entry to replace next once `STATE_SCORES_KEPT` are kept.
    next: usize,
}

/// How many (state, pod) scores `StateScores` keeps.
const STATE_SCORES_KEPT: usize = 8;

impl StateScores {
    /// The score of one more `pod` on `node` in its state now: a kept one, else `score()`
    /// (kept from now on).
    #[inline]
    fn score(
        &mut self,
        cap: &NodeCapacity,
        node: NodeId,
        pod: &PodNeeds,
        score: impl FnOnce() -> Score,
    ) -> Score {
        let n = cap.n_resources;
        let i = node.index();
        let (free, alloc) = (&cap.free[i * n..][..n], &cap.alloc[i * n..][..n]);
        let pods = cap.free_pods[i];
        // The state as `NodeCapacity::same_state` compares it: what a per-state score reads.
        let same = |key: &[i64]| {
            key.len() == 2 * n + 1
                && key[..n].iter().zip(free).all(|(a, b)| a == b)
                && key[n] == pods
                && key[n + 1..].iter().zip(alloc).all(|(a, b)| a == b)
        };
        if let Some(&(_, _, s)) = self
            .entries
            .iter()
            .find(|(key, requests, _)| same(key) && *requests == pod.requests)
        {
            debug_assert!(
                s.cmp(&score()).is_eq(),
                "a kept score of a state is the scorer's"
            );
            return s;
        }
        let s = score();
        let mut key = Vec::with_capacity(2 * n + 1);
        key.extend_from_slice(free);
        key.push(pods);
        key.extend_from_slice(alloc);
        let entry = (key, pod.requests.clone(), s);
        if self.entries.len() < STATE_SCORES_KEPT {
            self.entries.push(entry);
        } else {
            self.entries[self.next] = entry;
            self.next = (self.next + 1) % STATE_SCORES_KEPT;
        }
        s
    }
}

/// Gives back bindings made on `cap` (a discarded dry run).
pub fn undo(cap: &mut NodeCapacity, pods: &GangPods, bound: &[Binding]) {
    for &(ps, _, n) in bound {
        cap.apply(n, &pods[ps].0.requests, -1);
    }
}

/// `pods` with `bound` recorded as bound.
pub fn with_bindings(pods: &GangPods, bound: &[Binding]) -> Vec<(PodNeeds, Vec<Option<NodeId>>)> {
    let mut v = pods.to_vec();
    record_bindings(&mut v, bound);
    v
}

/// Records `bound` as bound in `pods`, in place (`with_bindings` without the copy).
pub fn record_bindings(pods: &mut [(PodNeeds, Vec<Option<NodeId>>)], bound: &[Binding]) {
    for &(ps, idx, n) in bound {
        pods[ps].1[idx] = Some(n);
    }
}

/// Σ over pending pods of their requests, by resource index: what a gang still needs.
pub fn pending_total(pods: &GangPods) -> Vec<(usize, i64)> {
    let mut total = Vec::new();
    pending_total_into(pods, &mut total);
    total
}

/// `pending_total` written into `total` (its vector reused: Volcano's every attempt).
pub fn pending_total_into(pods: &GangPods, total: &mut Vec<(usize, i64)>) {
    // A handful of resources: a vector kept in resource order (as a `BTreeMap` would give
    // them) without the map's node allocations, on every Volcano attempt.
    total.clear();
    for (needs, slots) in pods {
        let pending = slots.iter().filter(|s| s.is_none()).count() as i64;
        for (r, a) in needs.requests.iter() {
            match total.binary_search_by_key(&r.index(), |x| x.0) {
                Ok(i) => total[i].1 += a * pending,
                Err(i) => total.insert(i, (r.index(), a * pending)),
            }
        }
    }
}

/// The number of pods already bound and the number pending.
pub fn counts(pods: &GangPods) -> (usize, usize) {
    let bound = pods
        .iter()
        .flat_map(|(_, s)| s)
        .filter(|s| s.is_some())
        .count();
    let total: usize = pods.iter().map(|(_, s)| s.len()).sum();
    (bound, total - bound)
}

/// The gang's pending pods in order: (pod set, pod index, what each pod of the set needs).
pub fn pending_pods(pods: &GangPods) -> impl Iterator<Item = (usize, usize, &PodNeeds)> + Clone {
    pods.iter().enumerate().flat_map(|(ps, (needs, slots))| {
        slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_none())
            .map(move |(idx, _)| (ps, idx, needs))
    })
}

/// The first pending pod of the gang.
pub fn first_pending(pods: &GangPods) -> Option<(usize, usize)> {
    pods.iter()
        .enumerate()
        .find_map(|(ps, (_, s))| s.iter().position(Option::is_none).map(|i| (ps, i)))
}

/// Test nodes of (GPUs, cpu, pod slots, zone, rack) with `zone` and `rack` labels, named so
/// that id order is not name order; the tests add the topologies they need.
#[cfg(test)]
pub(crate) fn test_nodes(nodes: &[(i64, i64, i64, u8, u8)]) -> World {
    use kueuesim_model::{Labels, Node};
    let mut w = World::default();
    let gpu = w.resources.intern(kueuesim_model::resources::GPU);
    let cpu = w.resources.intern("cpu");
    let pods = w.resources.intern("pods");
    for (i, &(g, c, p, zone, rack)) in nodes.iter().enumerate() {
        let mut alloc = vec![0; 3];
        alloc[gpu.index()] = g;
        alloc[cpu.index()] = c;
        alloc[pods.index()] = p;
        w.nodes.push(Node {
            name: format!("n{:03}", (i * 37) % 101),
            labels: Labels::new(vec![
                ("zone".into(), format!("z{zone}")),
                ("rack".into(), format!("r{rack}")),
            ]),
            allocatable: alloc,
            taints: vec![],
            unschedulable: false,
        });
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use kueuesim_model::Node;
    use proptest::prelude::*;

    /// A score read from capacity alone that weighs every part of a node's state (free of
    /// each resource, free pod slots, allocatable), optionally declared per state.
    struct StateScore {
        per_state: bool,
    }

    impl Scorer for StateScore {
        fn group(&self, _: NodeId) -> usize {
            0
        }
        fn group_score(&mut self, _: usize) -> f64 {
            0.0
        }
        fn node_score(&self, cap: &NodeCapacity, n: NodeId, _: &PodNeeds) -> f64 {
            let s = cap.free(n, 0) * 7
                + cap.free(n, 1) * 3
                + cap.free_pods(n) * 11
                + cap.allocatable(n, 0) * 13;
            s as f64
        }
        fn tie(&self, n: NodeId) -> u64 {
            tie_key(5, n)
        }
        fn bound(&mut self, _: NodeId) {}
        fn score_is_per_state(&self) -> bool {
            self.per_state
        }
    }

    proptest! {
        /// `fill` scoring one node per capacity state binds exactly as scoring every node,
        /// whatever states the nodes are in (few allocatable sizes, so many equal states), and
        /// so does `fill_in` served the scores of states a previous call kept.
        #[test]
        fn fill_scoring_per_state_binds_as_scoring_every_node(
            sizes in prop::collection::vec((1i64..4, 1i64..3, 1i64..4), 1..24),
            before in prop::collection::vec((0usize..24, 0i64..2, 0i64..2), 0..30),
            pod in (0i64..2, 0i64..2),
            count in 1usize..12,
        ) {
            let mut w = World::default();
            let cpu = w.resources.intern("cpu");
            let mem = w.resources.intern("memory");
            w.resources.intern("pods");
            for (i, &(c, m, p)) in sizes.iter().enumerate() {
                w.nodes.push(Node {
                    name: format!("n{i}"),
                    labels: Labels::default(),
                    allocatable: vec![c, m, p],
                    taints: vec![],
                    unschedulable: false,
                });
            }
            let mut cap = NodeCapacity::new(&w);
            for &(n, c, m) in &before {
                let node = NodeId::from_index(n % sizes.len());
                let req = ResourceList::from_pairs(vec![(cpu, c), (mem, m)]);
                if cap.fits(node, &req) {
                    cap.apply(node, &req, 1);
                }
            }
            let needs = PodNeeds {
                requests: ResourceList::from_pairs(vec![(cpu, pod.0), (mem, pod.1)]),
                node_selector: Labels::default(),
                tolerations: vec![],
            };
            let pods = vec![(needs, vec![None; count])];
            let nodes = all_nodes(&w);
            let per_state = fill(&w, &mut cap.clone(), &nodes, &pods, count,
                &mut StateScore { per_state: true });
            let per_node = fill(&w, &mut cap.clone(), &nodes, &pods, count,
                &mut StateScore { per_state: false });
            prop_assert_eq!(&per_state, &per_node);
            // Buffers kept across calls: the second fill is served the states the first one
            // scored (`StateScores`), with the same bindings.
            let mut buffers = FillBuffers::default();
            let mut first = cap.clone();
            let _ = fill_in(&w, &mut first, &nodes, &pods, count,
                &mut StateScore { per_state: true }, &mut buffers);
            let kept = fill_in(&w, &mut cap.clone(), &nodes, &pods, count,
                &mut StateScore { per_state: true }, &mut buffers);
            prop_assert_eq!(kept, per_node);
        }
    }
}
