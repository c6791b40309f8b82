//! Per node, the topology domains a bind or release on it changes: its domain and every
//! ancestor up to the root, in every topology, worked out once from the parent links.
//!
//! `Cluster::apply` runs on every bind and release of every placement and dry run (millions
//! of times in the scale scenarios) and used to find the chain per call, topology by topology
//! (the node's domain, then parent link after parent link in each `Domain`); the chains never
//! change (neither the nodes nor the topologies do during a run), so they are read here as one
//! flat list instead.

use kueuesim_model::{DomainId, NodeId, World};

use super::topologies;

/// Invariant: node `n`'s domains in topology `t` (`Cluster` index order, `topologies`) are
/// `entries[at[n·T + t]..at[n·T + t + 1]]` for `T` topologies: the node's domain then each
/// parent up to the root, as domain indices (`check` compares them with a walk of the parent
/// links). Kept per topology so that `Cluster::apply` takes each topology's rows once and
/// runs over its few domains without a topology index per entry.
#[derive(Debug, Default)]
pub(super) struct AncestorChains {
    topologies: usize,
    at: Vec<u32>,
    entries: Vec<u32>,
}

impl AncestorChains {
    /// The chains of every node of `world`.
    pub(super) fn new(world: &World) -> Self {
        let topologies = topologies(world).count();
        let mut chains = AncestorChains {
            topologies,
            at: Vec::with_capacity(world.nodes.len() * topologies + 1),
            entries: Vec::new(),
        };
        chains.at.push(0);
        for n in 0..world.nodes.len() {
            let mut next_t = 0;
            walk(world, NodeId::from_index(n), |t, d| {
                // Close the segments of the topologies before `t` (none of them past it).
                while next_t < t {
                    chains.at.push(chains.entries.len() as u32);
                    next_t += 1;
                }
                chains.entries.push(d.index() as u32);
            });
            while next_t < topologies {
                chains.at.push(chains.entries.len() as u32);
                next_t += 1;
            }
        }
        chains
    }

    /// The domains above `node` (its own included) in topology `t`, lowest first, as domain
    /// indices.
    #[inline(always)]
    pub(super) fn of(&self, node: NodeId, t: usize) -> &[u32] {
        let i = node.index() * self.topologies + t;
        &self.entries[self.at[i] as usize..self.at[i + 1] as usize]
    }

    /// Whether every node's chain is the one the parent links give now.
    pub(super) fn check(&self, world: &World) -> Result<(), String> {
        let topologies = topologies(world).count();
        if self.topologies != topologies || self.at.len() != world.nodes.len() * topologies + 1 {
            return Err(format!(
                "ancestor chains of {} entries over {} topologies, the world has {} nodes and {topologies} topologies",
                self.at.len(),
                self.topologies,
                world.nodes.len()
            ));
        }
        for n in 0..world.nodes.len() {
            let node = NodeId::from_index(n);
            let mut walked = vec![Vec::new(); topologies];
            walk(world, node, |t, d| walked[t].push(d.index() as u32));
            for (t, want) in walked.iter().enumerate() {
                if self.of(node, t) != &want[..] {
                    return Err(format!(
                        "node {} topology {t}: ancestor chain {:?} is not the parent links' walk {want:?}",
                        world.node(node).name,
                        self.of(node, t)
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Calls `f(topology index, domain)` for `node`'s domain and each ancestor, topology after
/// topology, by the parent links.
fn walk(world: &World, node: NodeId, mut f: impl FnMut(usize, DomainId)) {
    for (ti, t) in topologies(world).enumerate() {
        let mut next = t.domain_of(node);
        while let Some(d) = next {
            f(ti, d);
            next = t.domain(d).parent;
        }
    }
}

#[cfg(test)]
mod tests {
    use kueuesim_model::{DomainId, NodeId, ResourceId, ResourceList, Topology};

    use super::super::{Cluster, test_nodes, topologies};

    /// Both kinds of topology over the nodes' `zone` and `rack` labels: a level Topology
    /// (zone, rack) and a HyperNode tree (rack).
    fn zone_rack_topologies(w: &mut kueuesim_model::World) {
        w.topologies = vec![Topology::from_levels(
            "t",
            &["zone".into(), "rack".into()],
            &w.nodes,
        )];
        w.hypernodes = Topology::from_levels("h", &["rack".into()], &w.nodes);
    }

    /// Binds and releases through the chains leave every domain's free capacity equal to the
    /// sum over its nodes, in both topologies (a level Topology and a HyperNode tree).
    #[test]
    fn apply_by_chains_keeps_domain_sums() {
        let mut w = test_nodes(&[
            (8, 16, 4, 0, 0),
            (8, 16, 4, 0, 1),
            (4, 8, 4, 1, 2),
            (8, 16, 4, 1, 2),
            (2, 4, 4, 0, 1),
        ]);
        zone_rack_topologies(&mut w);
        let mut c = Cluster::new(&w);
        assert_eq!(c.check_indexes(&w), Ok(()));
        let pod = ResourceList::from_pairs(vec![
            (ResourceId::from_index(0), 2),
            (ResourceId::from_index(1), 3),
        ]);
        for (n, sign) in [(0, 1), (3, 1), (3, 1), (4, 1), (0, -1), (2, 1)] {
            c.apply(&w, NodeId::from_index(n), &pod, sign);
        }
        for (ti, t) in topologies(&w).enumerate() {
            for d in 0..t.domains.len() {
                let d = DomainId::from_index(d);
                for r in 0..c.nodes.n_resources {
                    let sum: i64 = t.nodes_of(d).iter().map(|&n| c.nodes.free(n, r)).sum();
                    assert_eq!(c.domain_free(ti, d, r), sum, "topology {ti} domain {d:?}");
                }
            }
        }
        assert_eq!(c.check_indexes(&w), Ok(()));
    }

    /// `Cluster::apply` adds a pod's change as a fixed-size row for worlds of 1 to 8
    /// resources (one arm each) and per pair above: every arm, and the fallback, keeps each
    /// domain's row the sum of its nodes (`check_indexes` recounts them), with requests that
    /// name some resources only, in any order.
    #[test]
    fn apply_keeps_domain_rows_for_every_resource_count() {
        use kueuesim_model::{Labels, Node, World};
        for n_res in 1..=10usize {
            let mut w = World::default();
            let ids: Vec<ResourceId> = (0..n_res)
                .map(|r| w.resources.intern(&format!("r{r}")))
                .collect();
            for i in 0..6usize {
                w.nodes.push(Node {
                    name: format!("n{i}"),
                    labels: Labels::new(vec![
                        ("zone".into(), format!("z{}", i % 2)),
                        ("rack".into(), format!("r{}", i % 3)),
                    ]),
                    allocatable: (0..n_res).map(|r| 100 + (i * 7 + r * 3) as i64).collect(),
                    taints: vec![],
                    unschedulable: false,
                });
            }
            zone_rack_topologies(&mut w);
            let mut c = Cluster::new(&w);
            // Pods asking for every other resource, the last first, with distinct amounts,
            // so a row written at the wrong offset or width shows in the recount.
            let pairs: Vec<(ResourceId, i64)> = ids
                .iter()
                .enumerate()
                .rev()
                .filter(|(r, _)| r % 2 == 0 || *r + 1 == n_res)
                .map(|(r, &id)| (id, 1 + r as i64))
                .collect();
            let pod = ResourceList::from_pairs(pairs);
            for (n, sign) in [(0, 1), (5, 1), (3, 1), (5, 1), (0, -1), (2, 1), (5, -1)] {
                c.apply(&w, NodeId::from_index(n), &pod, sign);
                assert_eq!(c.check_indexes(&w), Ok(()), "{n_res} resources");
            }
            assert_ne!(
                c.domain_free,
                Cluster::new(&w).domain_free,
                "{n_res} resources: nothing bound"
            );
        }
    }
}
