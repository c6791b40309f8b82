//! The `Cluster`'s self-checks: every kept index and row recounted from the nodes
//! (`check_indexes`, which the property tests call after every step through
//! `Simulation::check_invariants`).

use kueuesim_model::{DomainId, NodeId, World};

use super::Cluster;
use crate::placement::topologies;

impl Cluster {
    /// The first part of what a committed bind or release keeps in step in which `self` and
    /// `other` differ (None: none): the nodes' rows and pod slots, the domain rows and GPU
    /// histograms, the change versions, KAI's kept fit counts and the nodes noted for each
    /// lazily kept index (the GPU order, Volcano's tier index, KAI's bin-pack order). Debug
    /// builds compare a commit made a faster way with the plain `apply`s (Volcano's
    /// `commit_kept`).
    #[cfg(debug_assertions)]
    pub(crate) fn commit_differs(&self, other: &Cluster) -> Option<&'static str> {
        let parts: [(&'static str, bool); 10] = [
            ("node free rows", self.nodes.free == other.nodes.free),
            (
                "node pod slots",
                self.nodes.free_pods == other.nodes.free_pods,
            ),
            ("domain free rows", self.domain_free == other.domain_free),
            ("GPU histograms", self.gpu_hist == other.gpu_hist),
            ("rows version", self.rows_version == other.rows_version),
            (
                "HyperNode change versions",
                self.hypernode_changed == other.hypernode_changed,
            ),
            ("KAI fit counts", self.kai_counts == other.kai_counts),
            ("GPU order notes", self.gpu_stale == other.gpu_stale),
            (
                "tier index notes",
                self.tier_gpu.noted() == other.tier_gpu.noted(),
            ),
            (
                "KAI bin-pack order notes",
                self.kai_order.as_ref().map(|o| o.noted())
                    == other.kai_order.as_ref().map(|o| o.noted()),
            ),
        ];
        parts.iter().find(|(_, same)| !same).map(|&(part, _)| part)
    }

    /// Whether every domain's free row (every topology, every resource) is the sum of its
    /// nodes' free capacity, as `new` made it and `apply`'s dense rows keep it.
    fn check_domain_free(&self, world: &World) -> Result<(), String> {
        let n_res = self.nodes.n_resources;
        for (ti, t) in topologies(world).enumerate() {
            for d in 0..t.domains.len() {
                let dom = DomainId::from_index(d);
                for r in 0..n_res {
                    let sum: i64 = t.nodes_of(dom).iter().map(|&n| self.nodes.free(n, r)).sum();
                    let kept = self.domain_free[ti][d * n_res + r];
                    if kept != sum {
                        return Err(format!(
                            "topology {ti} domain {d} resource {r}: {kept} free kept, its nodes have {sum}"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the HyperNodes' change versions say what they can of themselves: none is past
    /// `rows_version`, a bind or release stamps a node's whole chain so a HyperNode's is at
    /// least each child's, and one whose nodes are all under its children (none of its own)
    /// was stamped last by a change under one of them, so it is the latest of theirs.
    fn check_hypernode_changed(&self, world: &World) -> Result<(), String> {
        let t = &world.hypernodes;
        let changed = &self.hypernode_changed;
        if changed.len() != t.domains.len() {
            return Err(format!(
                "{} HyperNode change versions for {} HyperNodes",
                changed.len(),
                t.domains.len()
            ));
        }
        for (i, &at) in changed.iter().enumerate() {
            let d = DomainId::from_index(i);
            let name = &t.domain(d).name;
            if at > self.rows_version {
                return Err(format!(
                    "HyperNode {name:?} changed at {at}, past the rows' version {}",
                    self.rows_version
                ));
            }
            let children = &t.domain(d).children;
            let latest = children
                .iter()
                .map(|c| changed[c.index()])
                .max()
                .unwrap_or(0);
            let under: usize = children.iter().map(|&c| t.nodes_of(c).len()).sum();
            if at < latest || (under == t.nodes_of(d).len() && at != latest) {
                return Err(format!(
                    "HyperNode {name:?} changed at {at}, its children last at {latest}"
                ));
            }
        }
        Ok(())
    }

    /// Whether every domain's free row, the GPU order, the per-domain GPU histograms,
    /// Volcano's per-tier free GPUs and KAI's kept counts and bin-pack order agree with the
    /// nodes' free capacity, and the HyperNodes' change versions with each other (an
    /// invariant `Simulation::check_invariants` states).
    pub fn check_indexes(&self, world: &World) -> Result<(), String> {
        self.ancestors.check(world)?;
        self.kai_counts.check(world, &self.nodes)?;
        self.nodes.check_classes()?;
        self.check_domain_free(world)?;
        self.check_hypernode_changed(world)?;
        let Some(g) = self.res.gpu else { return Ok(()) };
        if let Some(order) = &self.kai_order {
            order.check(world, &self.nodes, g)?;
        }
        let n_res = self.nodes.n_resources;
        self.tier_gpu.check(
            &world.hypernodes,
            |d| self.domain_free[0][d.index() * n_res + g],
            |d, k| self.domain_gpu_pods(0, d, k).unwrap_or(0),
        )?;
        let with_gpus = (0..world.nodes.len())
            .map(NodeId::from_index)
            .filter(|&n| world.node(n).allocatable.get(g).copied().unwrap_or(0) > 0);
        let mut count = 0;
        for n in with_gpus {
            count += 1;
            // A node noted stale may sit under an older count until the next sync; every
            // other node's entry carries its current count.
            let keyed = self.gpu_keyed[n.index()];
            if !self.gpu_stale.contains(n) && keyed != self.nodes.free(n, g) {
                return Err(format!(
                    "node {} has {} GPUs free but the GPU order says {keyed} and it is not noted stale",
                    world.node(n).name,
                    self.nodes.free(n, g)
                ));
            }
            let key = (keyed, self.name_rank[n.index()], n);
            if !self.gpu_order.contains(key) {
                return Err(format!(
                    "node {} is not in the GPU order at {key:?}",
                    world.node(n).name
                ));
            }
        }
        if count != self.gpu_order.len() {
            return Err(format!(
                "the GPU order has {} nodes, not {count}",
                self.gpu_order.len()
            ));
        }
        if self.gpu_buckets == 0 {
            return Ok(());
        }
        for ((ti, t), hist) in topologies(world).enumerate().zip(&self.gpu_hist) {
            for d in 0..t.domains.len() {
                let mut expect = vec![0u32; self.gpu_buckets];
                for &n in t.nodes_of(DomainId::from_index(d)) {
                    expect[self.nodes.free(n, g).clamp(0, self.gpu_buckets as i64 - 1) as usize] +=
                        1;
                }
                if expect[..] != hist[d * self.gpu_buckets..][..self.gpu_buckets] {
                    return Err(format!(
                        "topology {ti} domain {} GPU histogram is stale",
                        t.domain(DomainId::from_index(d)).name
                    ));
                }
            }
        }
        Ok(())
    }
}
