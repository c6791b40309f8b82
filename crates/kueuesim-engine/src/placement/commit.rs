//! Committing an allocation whose pods the node capacity already carries (the winning dry
//! run's bindings, kept): the per-domain indexes brought up to date in one batch instead of
//! undoing the dry run and binding its pods again one by one.
//!
//! KAI's allocate action (`pkg/scheduler/actions/common/allocate`) keeps the statement of the
//! job's successful allocation and commits it; only a failed attempt is rolled back
//! (`Statement.Discard`). Here the dry run is that statement: when its domain wins, its
//! bindings stay on the nodes and `Cluster::commit_bound` brings the rest of the cluster in
//! step. Per pod, `Cluster::apply` walks the node's ancestors in every tree for the free
//! capacity, the GPU histogram and each kept shape's task-copy counts; a gang lands on a few
//! leaves, so summing its nodes' changes per leaf and walking each leaf's ancestors once gives
//! the same sums for a fraction of the walks.

use kueuesim_model::{DomainId, NodeId, Topology, World};

use crate::placement::{Binding, Cluster, GangPods, topologies};

/// The distinct nodes of a batch of binds, by node id, each with how many pods it took and
/// their summed requests.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeBinds {
    /// The nodes, each once.
    pub(crate) nodes: Vec<NodeId>,
    /// Per node, the pods bound to it.
    pub(crate) pods: Vec<i64>,
    /// Per node, the summed requests of its pods, by resource index (`n_res` per node).
    pub(crate) requests: Vec<i64>,
}

impl NodeBinds {
    /// Sets the batch to `bound` (pods of `pods`), merged per node: several pods on one node
    /// make one change of that node, so that its fit before the batch is its fit now plus
    /// all of them (a pod's fit change alone would need the node's capacity between two
    /// binds). `order` is scratch.
    fn set(&mut self, order: &mut Vec<u64>, pods: &GangPods, bound: &[Binding], n_res: usize) {
        // By node, then binding order (keys are distinct): nodes close in id, as a domain's
        // usually are, end up next to each other.
        order.clear();
        order.reserve(bound.len());
        order.extend(
            bound
                .iter()
                .enumerate()
                .map(|(i, &(_, _, n))| (u64::from(n.0) << 32) | i as u64),
        );
        order.sort_unstable();
        self.nodes.clear();
        self.pods.clear();
        self.requests.clear();
        self.nodes.reserve(bound.len());
        self.pods.reserve(bound.len());
        self.requests.reserve(bound.len() * n_res);
        for &key in order.iter() {
            let (ps, _, n) = bound[(key & u64::from(u32::MAX)) as usize];
            if self.nodes.last() != Some(&n) {
                self.nodes.push(n);
                self.pods.push(0);
                self.requests.resize(self.requests.len() + n_res, 0);
            }
            *self.pods.last_mut().expect("pushed above") += 1;
            let row = self.requests.len() - n_res;
            for (r, a) in pods[ps].0.requests.iter() {
                self.requests[row + r.index()] += a;
            }
        }
    }
}

/// Per-run sums of `Cluster::commit_bound`: what a run of nodes sharing their lowest domain
/// took, carried up that domain's ancestors once.
#[derive(Clone, Debug, Default)]
struct RunSums {
    /// Per resource index, the requests bound.
    requests: Vec<i64>,
    /// Per GPU bucket, the change in node count (`gpu_buckets` entries).
    hist: Vec<i64>,
    /// The buckets `hist` moved (repeats allowed).
    touched: Vec<usize>,
    /// Scratch of `flush`: each moved bucket once, with its net change.
    moved: Vec<(usize, i64)>,
}

impl RunSums {
    /// Adds the sums to domain `from` and its ancestors in `free` and `hist` (one
    /// topology's rows), stamps them in `changed` with the commit's version when given (the
    /// HyperNodes' `Cluster::hypernode_changed`), and clears the sums.
    fn flush(
        &mut self,
        t: &Topology,
        (free, hist): (&mut [i64], &mut [u32]),
        changed: Option<(&mut [u64], u64)>,
        from: DomainId,
    ) {
        let n_res = self.requests.len();
        let buckets = self.hist.len();
        self.moved.clear();
        for b in self.touched.drain(..) {
            let v = std::mem::take(&mut self.hist[b]);
            if v != 0 {
                self.moved.push((b, v));
            }
        }
        let mut changed = changed;
        let mut a = from;
        loop {
            if let Some((changed, version)) = &mut changed {
                changed[a.index()] = *version;
            }
            let row = &mut free[a.index() * n_res..][..n_res];
            for (f, q) in row.iter_mut().zip(&self.requests) {
                *f -= q;
            }
            if !self.moved.is_empty() {
                let h = &mut hist[a.index() * buckets..][..buckets];
                for &(b, v) in &self.moved {
                    h[b] = h[b].wrapping_add_signed(v as i32);
                }
            }
            match t.domain(a).parent {
                Some(p) => a = p,
                None => break,
            }
        }
        self.requests.fill(0);
    }
}

/// The buffers of `Cluster::commit_bound`, kept in the cluster from one commit to the next
/// so that a commit allocates nothing once they have grown (their contents never outlive a
/// commit).
#[derive(Clone, Debug, Default)]
pub(crate) struct CommitScratch {
    order: Vec<u64>,
    batch: NodeBinds,
    moves: Vec<Option<(usize, usize)>>,
    sums: RunSums,
    deltas: Vec<(i64, i64)>,
}

impl Cluster {
    /// Commits `bound` (pods of `pods`) whose requests `self.nodes` already carries (a kept
    /// dry run): the same cluster as binding each pod with `apply` after undoing the dry
    /// run, i.e. every domain's free capacity and GPU histogram, each kept shape's task-copy
    /// counts, and the nodes whose place in the bin-pack order went stale.
    pub(crate) fn commit_bound(&mut self, world: &World, pods: &GangPods, bound: &[Binding]) {
        if bound.is_empty() {
            return;
        }
        let n_res = self.nodes.n_resources;
        let mut scratch = std::mem::take(&mut self.kai_scratch);
        let CommitScratch {
            order,
            batch,
            moves,
            sums,
            deltas,
        } = &mut scratch;
        batch.set(order, pods, bound, n_res);
        self.kai_counts
            .bound_many(world, &self.nodes, batch, deltas);
        let buckets = self.gpu_buckets;
        let bucket = |free: i64| free.clamp(0, buckets as i64 - 1) as usize;
        // Per node, its GPU histogram move (from the bucket before the batch to the one now),
        // and its stale mark in the bin-pack order as `apply` would leave it.
        moves.clear();
        moves.reserve(batch.nodes.len());
        sums.touched.reserve(2 * batch.nodes.len());
        for (i, &n) in batch.nodes.iter().enumerate() {
            let mut mv = None;
            if let Some(g) = self.res.gpu {
                let after = self.nodes.free(n, g);
                let before = after + batch.requests[i * n_res + g];
                self.note_gpu_move(n, g, before, after);
                if before != after {
                    self.note_tier_chain(n);
                }
                if buckets > 0 && bucket(before) != bucket(after) {
                    mv = Some((bucket(before), bucket(after)));
                }
            }
            moves.push(mv);
        }
        sums.requests.clear();
        sums.requests.resize(n_res, 0);
        sums.hist.clear();
        sums.hist.resize(buckets, 0);
        // One committed change of the rows: the HyperNodes above the batch's nodes are
        // stamped with it (`hypernode_changed`), as `apply` stamps them per pod.
        self.rows_version += 1;
        let version = self.rows_version;
        for (ti, ((t, free), hist)) in topologies(world)
            .zip(&mut self.domain_free)
            .zip(&mut self.gpu_hist)
            .enumerate()
        {
            let mut run: Option<DomainId> = None;
            for (i, &n) in batch.nodes.iter().enumerate() {
                let Some(d) = t.domain_of(n) else { continue };
                if run != Some(d) {
                    if let Some(x) = run {
                        let changed =
                            (ti == 0).then_some((&mut self.hypernode_changed[..], version));
                        sums.flush(t, (free, hist), changed, x);
                    }
                    run = Some(d);
                }
                for (s, q) in sums
                    .requests
                    .iter_mut()
                    .zip(&batch.requests[i * n_res..][..n_res])
                {
                    *s += q;
                }
                if let Some((from, to)) = moves[i] {
                    sums.hist[from] -= 1;
                    sums.hist[to] += 1;
                    sums.touched.extend([from, to]);
                }
            }
            if let Some(x) = run {
                let changed = (ti == 0).then_some((&mut self.hypernode_changed[..], version));
                sums.flush(t, (free, hist), changed, x);
            }
        }
        self.kai_scratch = scratch;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::PodNeeds;
    use kueuesim_model::{Labels, ResourceList};
    use proptest::prelude::*;

    /// Nodes of (GPUs, cpu, pod slots) under zone/rack labels: the KAI Topology is
    /// zone/rack, the HyperNode tree rack alone (its own tree shape and node order). Node
    /// names are shuffled so that id order is not name order.
    fn world(nodes: &[(i64, i64, i64, u8, u8)]) -> World {
        let mut w = crate::placement::test_nodes(nodes);
        w.topologies = vec![Topology::from_levels(
            "t",
            &["zone".into(), "rack".into()],
            &w.nodes,
        )];
        w.hypernodes = Topology::from_levels("h", &["rack".into()], &w.nodes);
        w
    }

    /// Everything `commit_bound` keeps, for comparing two clusters.
    fn indexes(c: &Cluster, w: &World) -> impl PartialEq + std::fmt::Debug {
        let mut stale: Vec<NodeId> = c.gpu_stale.iter().collect();
        stale.sort();
        let counts: Vec<Vec<Vec<crate::placement::fit_counts::FitCount>>> =
            (0..c.kai_counts.shapes().len())
                .map(|slot| {
                    (0..w.topologies.len())
                        .map(|t| c.kai_counts.of(slot, t).to_vec())
                        .collect()
                })
                .collect();
        let tier_notes = c.tier_gpu.noted().to_vec();
        (
            c.domain_free.clone(),
            c.gpu_hist.clone(),
            stale,
            counts,
            tier_notes,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Committing pods the nodes already carry leaves every per-domain index (free
        /// capacity, GPU histograms, task-copy counts of the kept shapes, the bin-pack
        /// order's stale nodes) as binding them one by one with `apply` does, with several
        /// pods on one node, pod sets of different sizes and nodes of a domain not adjacent
        /// in id order; and the indexes agree with a recount.
        #[test]
        fn commit_bound_matches_apply_per_pod(
            nodes in prop::collection::vec((0i64..=8, 1i64..=16, 1i64..=4, 0u8..3, 0u8..4), 1..24),
            busy in prop::collection::vec((0usize..100, 0i64..=8, 0i64..=8), 0..20),
            sets in prop::collection::vec((1usize..8, 0i64..=4, 0i64..=4), 1..4),
            picks in prop::collection::vec(0usize..100, 1..40),
            shapes in prop::collection::vec((0i64..=4, 1i64..=4), 0..3),
        ) {
            let w = world(&nodes);
            let (gpu, cpu) = (
                w.resources.lookup(kueuesim_model::resources::GPU).unwrap(),
                w.resources.lookup("cpu").unwrap(),
            );
            let mut cluster = Cluster::new(&w);
            for &(n, g, c) in &busy {
                let node = NodeId::from_index(n % w.nodes.len());
                let req = ResourceList::from_pairs(vec![(gpu, g), (cpu, c)]);
                if cluster.nodes.fits(node, &req) {
                    cluster.apply(&w, node, &req, 1);
                }
            }
            // Kept task shapes, whose counts every bind moves.
            for &(g, c) in &shapes {
                let shape: Vec<(usize, i64)> = [(gpu.index(), g), (cpu.index(), c)]
                    .into_iter()
                    .filter(|&(_, a)| a > 0)
                    .collect();
                cluster.kai_keep(&w, &shape);
            }
            // Volcano's tier index keeps the rack tier once read: the commit notes the
            // HyperNodes above its nodes (`note_tier_chain`) as `apply` does.
            cluster.hypernodes_with_free_gpus(&w, 0, 1, &mut Vec::new());
            let pods: Vec<(PodNeeds, Vec<Option<NodeId>>)> = sets
                .iter()
                .map(|&(count, g, c)| {
                    (
                        PodNeeds {
                            requests: ResourceList::from_pairs(vec![(gpu, g), (cpu, c)]),
                            node_selector: Labels::default(),
                            tolerations: vec![],
                        },
                        vec![None; count],
                    )
                })
                .collect();
            // Bindings on the picked nodes where the pod fits, as a dry run leaves them.
            let mut kept = cluster.clone();
            let mut bound: Vec<Binding> = Vec::new();
            let mut pick = picks.iter().cycle();
            for (ps, (needs, slots)) in pods.iter().enumerate() {
                for idx in 0..slots.len() {
                    let n = NodeId::from_index(pick.next().unwrap() % w.nodes.len());
                    if kept.nodes.fits(n, &needs.requests) {
                        kept.nodes.apply(n, &needs.requests, 1);
                        bound.push((ps, idx, n));
                    }
                }
            }
            kept.commit_bound(&w, &pods, &bound);
            for &(ps, _, n) in &bound {
                cluster.apply(&w, n, &pods[ps].0.requests, 1);
            }
            prop_assert_eq!(indexes(&kept, &w), indexes(&cluster, &w));
            prop_assert_eq!(kept.check_indexes(&w), Ok(()));
        }
    }
}
