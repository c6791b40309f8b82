//! Per-domain counts of how many copies of a task fit (the topology plugin's
//! `AllocatablePods`), kept in step with every bind and release instead of recounted over the
//! domain's nodes on every decision.
//!
//! KAI's `calcSubTreeAllocatable` sums, over a domain's nodes, how many copies of the job's
//! largest task (`maxPodResources`) each node can still take (`calcNodeAccommodation`).
//! Upstream recomputes it per job and cycle; here the counts are kept per task shape (the
//! resources a task asks for), built over every node the first time a shape is asked about
//! and then updated on each bind and release by walking the node's ancestor chain, as the
//! per-domain free capacity is. A few shapes are kept (the most recently used); one that falls
//! out is rebuilt when it comes back, so the counts are always exact and decisions never
//! depend on which shapes happen to be kept.

use kueuesim_model::{DomainId, NodeId, ResourceList, Topology, World};

use super::commit::NodeBinds;
use crate::placement::NodeCapacity;

/// How many task shapes are kept: enough for the distinct task sizes a run's KAI jobs use at
/// once (each bind and release updates every kept shape).
const MAX_SHAPES: usize = 16;

/// A node's count is capped here, so that a domain's sum cannot overflow. A count at the cap
/// is at least as large as any number of pods a job asks for, so every comparison (and every
/// count reported in a message, which is below the number asked for) is unchanged.
const NODE_CAP: u64 = u32::MAX as u64;

/// A task shape: per resource index asked for, the amount (positive), by resource index.
pub type Shape = [(usize, i64)];

/// A domain's counts for one shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FitCount {
    /// Copies of the task the domain's nodes can take by resources (`AllocatablePods`).
    pub copies: u64,
    /// The same, each node's copies also capped by its free pod slots: how many identical
    /// pods `fill` would bind in the domain when every node passes the static filters.
    pub within_pod_slots: u64,
}

/// The counts of one kept shape.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    shape: Box<Shape>,
    /// When it was last asked about (`TaskFitCounts::clock`), for the least recently used
    /// shape to make room.
    last_used: u64,
    /// Per topology (`world.topologies` index), per domain.
    counts: Vec<Vec<FitCount>>,
}

/// The kept shapes and their per-domain counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskFitCounts {
    entries: Vec<Entry>,
    clock: u64,
}

/// What one node holds of a shape.
#[inline]
fn node_fit(nodes: &NodeCapacity, n: NodeId, shape: &Shape) -> FitCount {
    let copies = shape
        .iter()
        .map(|&(r, a)| (nodes.free(n, r).max(0) / a) as u64)
        .min()
        .unwrap_or(NODE_CAP)
        .min(NODE_CAP);
    FitCount {
        copies,
        within_pod_slots: copies.min(nodes.free_pods(n).max(0) as u64),
    }
}

/// Adds (`copies`, `within_pod_slots`) changes to domain `from` and its ancestors.
fn add_up(t: &Topology, counts: &mut [FitCount], from: DomainId, copies: i64, within: i64) {
    if (copies, within) == (0, 0) {
        return;
    }
    let mut x = from;
    loop {
        let c = &mut counts[x.index()];
        c.copies = c.copies.wrapping_add_signed(copies);
        c.within_pod_slots = c.within_pod_slots.wrapping_add_signed(within);
        match t.domain(x).parent {
            Some(p) => x = p,
            None => break,
        }
    }
}

/// Every domain's counts of topology `t` for `shape`, from the nodes: each domain's nodes are
/// one range of the depth-first node order, so a prefix sum gives them all in O(nodes +
/// domains).
fn recount_topology(t: &Topology, nodes: &NodeCapacity, shape: &Shape) -> Vec<FitCount> {
    let mut prefix = Vec::with_capacity(t.node_order.len() + 1);
    let mut acc = FitCount::default();
    prefix.push(acc);
    for &n in &t.node_order {
        let f = node_fit(nodes, n, shape);
        acc.copies += f.copies;
        acc.within_pod_slots += f.within_pod_slots;
        prefix.push(acc);
    }
    t.domains
        .iter()
        .map(|d| {
            let (a, b) = (prefix[d.nodes.start as usize], prefix[d.nodes.end as usize]);
            FitCount {
                copies: b.copies - a.copies,
                within_pod_slots: b.within_pod_slots - a.within_pod_slots,
            }
        })
        .collect()
}

/// The counts of `shape` for every domain of every topology, from scratch (what the kept
/// counts must equal).
pub fn recount(world: &World, nodes: &NodeCapacity, shape: &Shape) -> Vec<Vec<FitCount>> {
    world
        .topologies
        .iter()
        .map(|t| recount_topology(t, nodes, shape))
        .collect()
}

impl TaskFitCounts {
    /// Domain `d` of topology `t`'s counts for `shape` (non-empty, amounts positive), building
    /// the shape's counts if it is not kept.
    pub fn get(
        &mut self,
        world: &World,
        nodes: &NodeCapacity,
        shape: &Shape,
        t: usize,
        d: DomainId,
    ) -> FitCount {
        let i = self.keep(world, nodes, shape);
        self.entries[i].counts[t][d.index()]
    }

    /// Whether no shape is kept (then a bind or release has no counts to change).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The slot of `shape`'s counts (for `of`), building them if the shape is not kept, and
    /// marking it used now.
    pub fn keep(&mut self, world: &World, nodes: &NodeCapacity, shape: &Shape) -> usize {
        self.clock += 1;
        let i = match self.entries.iter().position(|e| *e.shape == *shape) {
            Some(i) => i,
            None => self.insert(world, nodes, shape),
        };
        self.entries[i].last_used = self.clock;
        i
    }

    /// Every domain's counts of topology `t` for the shape in slot `i` (from `keep`, with no
    /// other shape asked about since: a new one may take the slot).
    pub fn of(&self, i: usize, t: usize) -> &[FitCount] {
        &self.entries[i].counts[t]
    }

    fn insert(&mut self, world: &World, nodes: &NodeCapacity, shape: &Shape) -> usize {
        let entry = Entry {
            shape: shape.into(),
            last_used: self.clock,
            counts: recount(world, nodes, shape),
        };
        if self.entries.len() < MAX_SHAPES {
            self.entries.push(entry);
            return self.entries.len() - 1;
        }
        let (i, _) = self
            .entries
            .iter()
            .enumerate()
            .min_by_key(|(_, e)| e.last_used)
            .expect("MAX_SHAPES > 0");
        self.entries[i] = entry;
        i
    }

    /// One pod of `requests` was bound (sign 1) or released (sign -1) on `node`, already
    /// applied to `nodes`: every kept shape's counts of the node's domains move by the change
    /// in the node's fit. The fit before the change is worked out from the one after it and
    /// the change itself, so nothing has to be taken beforehand.
    pub fn changed(
        &mut self,
        world: &World,
        nodes: &NodeCapacity,
        node: NodeId,
        requests: &ResourceList,
        sign: i64,
    ) {
        let pods_after = nodes.free_pods(node).max(0) as u64;
        let pods_before = (nodes.free_pods(node) + sign).max(0) as u64;
        for e in &mut self.entries {
            // The node's copies after and before, in one pass over the shape (a plain loop:
            // this runs on every bind and release for every kept shape).
            let (mut after, mut before) = (NODE_CAP, NODE_CAP);
            for &(r, amount) in e.shape.iter() {
                let free = nodes.free(node, r);
                let delta: i64 = requests
                    .iter()
                    .filter(|&(x, _)| x.index() == r)
                    .map(|(_, q)| sign * q)
                    .sum();
                after = after.min((free.max(0) / amount) as u64);
                before = before.min(((free + delta).max(0) / amount) as u64);
            }
            let a = FitCount {
                copies: after,
                within_pod_slots: after.min(pods_after),
            };
            let b = FitCount {
                copies: before,
                within_pod_slots: before.min(pods_before),
            };
            if a == b {
                continue;
            }
            for (t, counts) in world.topologies.iter().zip(&mut e.counts) {
                let Some(mut x) = t.domain_of(node) else {
                    continue;
                };
                loop {
                    let c = &mut counts[x.index()];
                    c.copies = c.copies - b.copies + a.copies;
                    c.within_pod_slots =
                        c.within_pod_slots - b.within_pod_slots + a.within_pod_slots;
                    match t.domain(x).parent {
                        Some(p) => x = p,
                        None => break,
                    }
                }
            }
        }
    }

    /// A batch of binds whose pods `nodes` already carries (`Cluster::commit_bound`): per
    /// node of `batch` its change in fit from its fit before the batch (its free capacity
    /// plus what the batch took) to its fit now, summed per run of nodes sharing their lowest
    /// domain and carried up the tree once per run. The same counts as `changed` per pod:
    /// a node's changes telescope to the one from before the batch to after it.
    /// `deltas` is scratch.
    pub(crate) fn bound_many(
        &mut self,
        world: &World,
        nodes: &NodeCapacity,
        batch: &NodeBinds,
        deltas: &mut Vec<(i64, i64)>,
    ) {
        let n_res = nodes.n_resources;
        deltas.reserve(batch.nodes.len());
        for e in &mut self.entries {
            deltas.clear();
            let mut any = false;
            for (i, &n) in batch.nodes.iter().enumerate() {
                let took = &batch.requests[i * n_res..][..n_res];
                let pods_after = nodes.free_pods(n).max(0) as u64;
                let pods_before = (nodes.free_pods(n) + batch.pods[i]).max(0) as u64;
                let (mut after, mut before) = (NODE_CAP, NODE_CAP);
                for &(r, amount) in e.shape.iter() {
                    let free = nodes.free(n, r);
                    after = after.min((free.max(0) / amount) as u64);
                    before = before.min(((free + took[r]).max(0) / amount) as u64);
                }
                let d = (
                    after as i64 - before as i64,
                    after.min(pods_after) as i64 - before.min(pods_before) as i64,
                );
                any |= d != (0, 0);
                deltas.push(d);
            }
            if !any {
                continue;
            }
            for (t, counts) in world.topologies.iter().zip(&mut e.counts) {
                let mut run: Option<(DomainId, i64, i64)> = None;
                for (&n, &(dc, dw)) in batch.nodes.iter().zip(deltas.iter()) {
                    let Some(d) = t.domain_of(n) else { continue };
                    match &mut run {
                        Some((x, c, w)) if *x == d => (*c, *w) = (*c + dc, *w + dw),
                        _ => {
                            if let Some((x, c, w)) = run {
                                add_up(t, counts, x, c, w);
                            }
                            run = Some((d, dc, dw));
                        }
                    }
                }
                if let Some((x, c, w)) = run {
                    add_up(t, counts, x, c, w);
                }
            }
        }
    }

    /// Whether every kept shape's counts equal a recount from the nodes.
    pub fn check(&self, world: &World, nodes: &NodeCapacity) -> Result<(), String> {
        for e in &self.entries {
            if e.counts != recount(world, nodes, &e.shape) {
                return Err(format!(
                    "KAI fit counts of task shape {:?} are stale",
                    e.shape
                ));
            }
        }
        Ok(())
    }

    /// The kept shapes, least recently used first.
    pub fn shapes(&self) -> Vec<&Shape> {
        let mut v: Vec<&Entry> = self.entries.iter().collect();
        v.sort_by_key(|e| e.last_used);
        v.into_iter().map(|e| &*e.shape).collect()
    }
}
