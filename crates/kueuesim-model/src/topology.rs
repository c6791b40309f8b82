//! The network topology: one rooted tree of domains over the nodes, built either from Volcano
//! HyperNodes (tiers and members) or from the levels of a Kueue/KAI `Topology` (node-label
//! keys, broadest first), with a virtual root over everything.
//!
//! One representation serves every scheduler (Volcano HyperNodes, Kueue and KAI Topology levels): a domain has a
//! `tier` (Volcano's number: lower is closer; level topologies number their narrowest level 1)
//! and its nodes form one contiguous range of `node_order` (a depth-first order), so "the nodes
//! of a domain" is a slice and per-domain sums can be kept incrementally by walking a node's
//! ancestor chain.

use std::ops::Range;

use crate::ids::NodeId;
use crate::objects::Node;

/// A domain of a topology (a HyperNode, a level value, or the virtual root).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DomainId(pub u32);

impl DomainId {
    /// The virtual root of every topology.
    pub const ROOT: DomainId = DomainId(0);

    /// Position in `Topology::domains`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The id of the domain at position `i`.
    #[inline]
    pub fn from_index(i: usize) -> Self {
        DomainId(u32::try_from(i).expect("DomainId overflow"))
    }
}

/// One domain of the tree.
#[derive(Clone, Debug)]
pub struct Domain {
    /// The HyperNode name, or the level values joined by `.` from the top level down (KAI's
    /// domain id, so equal rack names under different spines stay distinct).
    pub name: String,
    /// The value of this domain's own level label (level topologies; the name otherwise).
    pub value: String,
    /// Volcano tier: lower is closer. The virtual root has the highest tier.
    pub tier: i32,
    /// Distance from the root (root 0).
    pub depth: u32,
    /// Parent (None for the root).
    pub parent: Option<DomainId>,
    /// Child domains, in name order.
    pub children: Vec<DomainId>,
    /// Its nodes (direct members and those of its children): a range of `node_order`.
    pub nodes: Range<u32>,
}

/// How the tree was described.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopologySource {
    /// Volcano HyperNodes; `tier_names` maps `spec.tierName` to tier numbers.
    HyperNodes {
        /// `(tierName, tier)`, sorted by name.
        tier_names: Vec<(String, i32)>,
    },
    /// A Kueue or KAI `Topology`: node-label keys, broadest level first.
    Levels {
        /// `spec.levels[].nodeLabel`.
        labels: Vec<String>,
    },
}

/// A rooted tree of domains over the nodes.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Object name (`volcano-hypernodes` for the HyperNode tree).
    pub name: String,
    /// What described it.
    pub source: TopologySource,
    /// Domains by `DomainId`; index 0 is the virtual root.
    pub domains: Vec<Domain>,
    /// Every node of the tree, depth-first: each domain's nodes are one range of it.
    pub node_order: Vec<NodeId>,
    /// Per node (by `NodeId`): the lowest domain holding it, or None when the node is not in
    /// the tree (a level topology excludes nodes missing a level label).
    pub node_domain: Vec<Option<DomainId>>,
    /// The domains of each tier in depth-first order, tiers ascending (the virtual root last).
    pub by_tier: Vec<(i32, Vec<DomainId>)>,
}

/// A HyperNode member, resolved by the loader (regex and label selectors expanded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HyperNodeMember {
    /// A node.
    Node(NodeId),
    /// Another HyperNode, by name.
    HyperNode(String),
}

/// A Volcano HyperNode with its members resolved.
#[derive(Clone, Debug)]
pub struct HyperNodeSpec {
    /// Object name.
    pub name: String,
    /// `spec.tier`.
    pub tier: i32,
    /// `spec.tierName`.
    pub tier_name: Option<String>,
    /// `spec.members`, resolved.
    pub members: Vec<HyperNodeMember>,
}

/// Why a set of HyperNodes does not form a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HyperNodeError {
    /// A member names a HyperNode that does not exist: (parent, missing member).
    MissingMember(String, String),
    /// A HyperNode is a member of two parents: (child, first parent, second parent).
    TwoParents(String, String, String),
    /// A HyperNode contains itself through its members.
    Cycle(String),
}

/// The name Volcano gives its virtual root (framework/session.go).
pub const VIRTUAL_ROOT: &str = "<cluster-top-hypernode>";

impl Topology {
    /// The domain `id`.
    #[inline]
    pub fn domain(&self, id: DomainId) -> &Domain {
        &self.domains[id.index()]
    }

    /// The nodes of domain `id`.
    #[inline]
    pub fn nodes_of(&self, id: DomainId) -> &[NodeId] {
        let r = &self.domains[id.index()].nodes;
        &self.node_order[r.start as usize..r.end as usize]
    }

    /// The tier of the virtual root (Volcano: highest real tier + 1, at least 1).
    pub fn root_tier(&self) -> i32 {
        self.domains[0].tier
    }

    /// The lowest domain holding `node`, if the node is in the tree. (A tree built for fewer
    /// nodes than the world has, e.g. a hand-made `World` with the default empty HyperNode
    /// tree, simply does not hold the rest.)
    #[inline]
    pub fn domain_of(&self, node: NodeId) -> Option<DomainId> {
        self.node_domain.get(node.index()).copied().flatten()
    }

    /// The lowest common ancestor of two domains.
    pub fn lca(&self, mut a: DomainId, mut b: DomainId) -> DomainId {
        while self.domain(a).depth > self.domain(b).depth {
            a = self.domain(a).parent.expect("non-root has a parent");
        }
        while self.domain(b).depth > self.domain(a).depth {
            b = self.domain(b).parent.expect("non-root has a parent");
        }
        while a != b {
            a = self.domain(a).parent.expect("non-root has a parent");
            b = self.domain(b).parent.expect("non-root has a parent");
        }
        a
    }

    /// Domain `d` and its ancestors up to the root, lowest first.
    pub fn ancestors(&self, d: DomainId) -> impl Iterator<Item = DomainId> + '_ {
        std::iter::successors(Some(d), |&x| self.domain(x).parent)
    }

    /// The tier of a HyperNode `tierName`, if any (HyperNode trees only).
    pub fn tier_of_name(&self, name: &str) -> Option<i32> {
        match &self.source {
            TopologySource::HyperNodes { tier_names } => tier_names
                .binary_search_by(|(n, _)| n.as_str().cmp(name))
                .ok()
                .map(|i| tier_names[i].1),
            TopologySource::Levels { .. } => None,
        }
    }

    /// The tier of the level labelled `label`, if the topology has it (level trees only):
    /// the narrowest level is tier 1.
    pub fn tier_of_level(&self, label: &str) -> Option<i32> {
        match &self.source {
            TopologySource::Levels { labels } => labels
                .iter()
                .position(|l| l == label)
                .map(|i| (labels.len() - i) as i32),
            TopologySource::HyperNodes { .. } => None,
        }
    }

    /// Whether domain `d` lies in the subtree of `root` (its node range is inside root's).
    #[inline]
    pub fn within(&self, d: DomainId, root: DomainId) -> bool {
        let (a, b) = (&self.domain(d).nodes, &self.domain(root).nodes);
        d == root
            || (self.domain(d).depth > self.domain(root).depth
                && a.start >= b.start
                && a.end <= b.end
                && !a.is_empty())
    }

    /// Fills `by_tier` from the domains.
    fn index_tiers(&mut self) {
        let mut by_tier: Vec<(i32, Vec<DomainId>)> = Vec::new();
        let order: Vec<DomainId> = self.dfs().collect();
        for d in order {
            let tier = self.domain(d).tier;
            match by_tier.iter_mut().find(|(t, _)| *t == tier) {
                Some((_, v)) => v.push(d),
                None => by_tier.push((tier, vec![d])),
            }
        }
        by_tier.sort_by_key(|(t, _)| *t);
        self.by_tier = by_tier;
    }

    /// Every domain in depth-first order, root first, children in name order.
    pub fn dfs(&self) -> impl Iterator<Item = DomainId> + '_ {
        let mut stack = vec![DomainId::ROOT];
        std::iter::from_fn(move || {
            let d = stack.pop()?;
            stack.extend(self.domain(d).children.iter().rev());
            Some(d)
        })
    }

    /// A tree from a Kueue/KAI `Topology`: one level per label, broadest first. Nodes missing
    /// any level label are left out (KAI: "not in the tree"; Kueue TAS: not a leaf).
    pub fn from_levels(name: &str, labels: &[String], nodes: &[Node]) -> Topology {
        let n_levels = labels.len();
        let mut domains = vec![Domain {
            name: String::new(),
            value: String::new(),
            tier: n_levels as i32 + 1,
            depth: 0,
            parent: None,
            children: Vec::new(),
            nodes: 0..0,
        }];
        // Each node's path of level values; the tree is built over the sorted paths so
        // children come out in name order and every domain's nodes are contiguous.
        let mut paths: Vec<(Vec<&str>, NodeId)> = nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| {
                let path: Option<Vec<&str>> = labels.iter().map(|l| n.labels.get(l)).collect();
                path.map(|p| (p, NodeId::from_index(i)))
            })
            .collect();
        paths.sort();
        let mut node_domain = vec![None; nodes.len()];
        let mut node_order = Vec::with_capacity(paths.len());
        // The open domain at each depth while walking the sorted paths.
        let mut open: Vec<DomainId> = vec![DomainId::ROOT];
        let mut prev: Option<&Vec<&str>> = None;
        for (path, node) in &paths {
            let common = prev.map_or(0, |p| {
                p.iter().zip(path).take_while(|(a, b)| a == b).count()
            });
            for d in open.iter().skip(common + 1) {
                domains[d.index()].nodes.end = node_order.len() as u32;
            }
            open.truncate(common + 1);
            for depth in common..n_levels {
                let parent = open[depth];
                let id = DomainId::from_index(domains.len());
                let pname = &domains[parent.index()].name;
                let name = if pname.is_empty() {
                    path[depth].to_string()
                } else {
                    format!("{pname}.{}", path[depth])
                };
                domains.push(Domain {
                    name,
                    value: path[depth].to_string(),
                    tier: (n_levels - depth) as i32,
                    depth: depth as u32 + 1,
                    parent: Some(parent),
                    children: Vec::new(),
                    nodes: node_order.len() as u32..0,
                });
                domains[parent.index()].children.push(id);
                open.push(id);
            }
            node_domain[node.index()] = Some(*open.last().expect("root"));
            node_order.push(*node);
            prev = Some(path);
        }
        let end = node_order.len() as u32;
        for d in &open {
            domains[d.index()].nodes.end = end;
        }
        domains[0].nodes = 0..end;
        let mut t = Topology {
            name: name.to_string(),
            source: TopologySource::Levels {
                labels: labels.to_vec(),
            },
            domains,
            node_order,
            node_domain,
            by_tier: Vec::new(),
        };
        t.index_tiers();
        t
    }

    /// The Volcano HyperNode tree, with the virtual root Volcano adds every session: tier =
    /// highest tier + 1 (at least 1), parent of every parentless HyperNode, and holding the
    /// nodes that are in no HyperNode. A node that is a member of several HyperNodes belongs
    /// to the lowest-tier one (`FindHyperNodeForNode`; ties: name order).
    pub fn from_hypernodes(
        hns: &[HyperNodeSpec],
        n_nodes: usize,
    ) -> Result<Topology, HyperNodeError> {
        let mut order: Vec<usize> = (0..hns.len()).collect();
        order.sort_by(|&a, &b| hns[a].name.cmp(&hns[b].name));
        let index_of = |name: &str| {
            order
                .binary_search_by(|&i| hns[i].name.as_str().cmp(name))
                .ok()
                .map(|k| order[k])
        };
        let mut parent: Vec<Option<usize>> = vec![None; hns.len()];
        for (p, hn) in hns.iter().enumerate() {
            for m in &hn.members {
                if let HyperNodeMember::HyperNode(child) = m {
                    let c = index_of(child).ok_or_else(|| {
                        HyperNodeError::MissingMember(hn.name.clone(), child.clone())
                    })?;
                    if let Some(first) = parent[c]
                        && first != p
                    {
                        let (a, b) = if hns[first].name <= hn.name {
                            (first, p)
                        } else {
                            (p, first)
                        };
                        return Err(HyperNodeError::TwoParents(
                            child.clone(),
                            hns[a].name.clone(),
                            hns[b].name.clone(),
                        ));
                    }
                    parent[c] = Some(p);
                }
            }
        }
        // With one parent each, a cycle is a loop of HyperNodes that never reaches a root.
        for start in 0..hns.len() {
            let mut x = start;
            let mut steps = 0;
            while let Some(p) = parent[x] {
                x = p;
                steps += 1;
                if steps > hns.len() {
                    return Err(HyperNodeError::Cycle(hns[start].name.clone()));
                }
            }
        }
        // A node's own HyperNode: the lowest tier among those listing it directly.
        let mut owner: Vec<Option<usize>> = vec![None; n_nodes];
        for &i in &order {
            for m in &hns[i].members {
                if let HyperNodeMember::Node(n) = m {
                    let slot = &mut owner[n.index()];
                    match *slot {
                        Some(o) if hns[o].tier <= hns[i].tier => {}
                        _ => *slot = Some(i),
                    }
                }
            }
        }
        let max_tier = hns.iter().map(|h| h.tier).max().unwrap_or(0);
        let mut topo = Topology {
            name: "volcano-hypernodes".to_string(),
            source: TopologySource::HyperNodes {
                tier_names: {
                    let mut v: Vec<(String, i32)> = hns
                        .iter()
                        .filter_map(|h| h.tier_name.clone().map(|n| (n, h.tier)))
                        .collect();
                    v.sort();
                    v.dedup_by(|a, b| a.0 == b.0);
                    v
                },
            },
            domains: Vec::with_capacity(hns.len() + 1),
            node_order: Vec::with_capacity(n_nodes),
            node_domain: vec![None; n_nodes],
            by_tier: Vec::new(),
        };
        topo.domains.push(Domain {
            name: VIRTUAL_ROOT.to_string(),
            value: VIRTUAL_ROOT.to_string(),
            tier: (max_tier + 1).max(1),
            depth: 0,
            parent: None,
            children: Vec::new(),
            nodes: 0..0,
        });
        // Children lists in name order; nodes per HyperNode in id order.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); hns.len()];
        let mut roots = Vec::new();
        for &i in &order {
            match parent[i] {
                Some(p) => children[p].push(i),
                None => roots.push(i),
            }
        }
        let mut direct_nodes: Vec<Vec<NodeId>> = vec![Vec::new(); hns.len()];
        let mut loose = Vec::new();
        for (n, o) in owner.iter().enumerate() {
            match o {
                Some(h) => direct_nodes[*h].push(NodeId::from_index(n)),
                None => loose.push(NodeId::from_index(n)),
            }
        }
        // Depth-first: a domain's direct nodes, then its children's subtrees.
        fn build(
            topo: &mut Topology,
            hns: &[HyperNodeSpec],
            children: &[Vec<usize>],
            direct_nodes: &[Vec<NodeId>],
            h: usize,
            parent: DomainId,
        ) {
            let id = DomainId::from_index(topo.domains.len());
            let depth = topo.domain(parent).depth + 1;
            let start = topo.node_order.len() as u32;
            topo.domains.push(Domain {
                name: hns[h].name.clone(),
                value: hns[h].name.clone(),
                tier: hns[h].tier,
                depth,
                parent: Some(parent),
                children: Vec::new(),
                nodes: start..start,
            });
            topo.domains[parent.index()].children.push(id);
            for &n in &direct_nodes[h] {
                topo.node_domain[n.index()] = Some(id);
                topo.node_order.push(n);
            }
            for &c in &children[h] {
                build(topo, hns, children, direct_nodes, c, id);
            }
            topo.domains[id.index()].nodes.end = topo.node_order.len() as u32;
        }
        for &n in &loose {
            topo.node_domain[n.index()] = Some(DomainId::ROOT);
            topo.node_order.push(n);
        }
        for &r in &roots {
            build(&mut topo, hns, &children, &direct_nodes, r, DomainId::ROOT);
        }
        topo.domains[0].nodes = 0..topo.node_order.len() as u32;
        topo.index_tiers();
        Ok(topo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::Labels;

    fn node(name: &str, labels: &[(&str, &str)]) -> Node {
        Node {
            name: name.into(),
            labels: Labels::new(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            allocatable: vec![],
            taints: vec![],
            unschedulable: false,
        }
    }

    fn names(t: &Topology, d: DomainId) -> Vec<u32> {
        t.nodes_of(d).iter().map(|n| n.0).collect()
    }

    #[test]
    fn levels_build_contiguous_domains_and_skip_unlabelled_nodes() {
        let nodes = vec![
            node("a", &[("spine", "s2"), ("rack", "r1")]),
            node("b", &[("spine", "s1"), ("rack", "r1")]),
            node("c", &[("spine", "s1"), ("rack", "r2")]),
            node("d", &[("spine", "s1")]),
            node("e", &[("spine", "s1"), ("rack", "r1")]),
        ];
        let t = Topology::from_levels("t", &["spine".into(), "rack".into()], &nodes);
        assert_eq!(t.root_tier(), 3);
        let spines: Vec<&str> = t
            .domain(DomainId::ROOT)
            .children
            .iter()
            .map(|&d| t.domain(d).name.as_str())
            .collect();
        assert_eq!(spines, ["s1", "s2"]);
        let s1 = t.domain(DomainId::ROOT).children[0];
        let racks: Vec<&str> = t
            .domain(s1)
            .children
            .iter()
            .map(|&d| t.domain(d).name.as_str())
            .collect();
        assert_eq!(racks, ["s1.r1", "s1.r2"]);
        assert_eq!(names(&t, s1), [1, 4, 2]);
        assert_eq!(names(&t, t.domain(s1).children[0]), [1, 4]);
        assert_eq!(names(&t, DomainId::ROOT).len(), 4, "d has no rack label");
        assert_eq!(t.node_domain[3], None);
        assert_eq!(t.domain(t.domain(s1).children[1]).tier, 1);
        assert_eq!(t.tier_of_level("spine"), Some(2));
    }

    fn hn(name: &str, tier: i32, members: Vec<HyperNodeMember>) -> HyperNodeSpec {
        HyperNodeSpec {
            name: name.into(),
            tier,
            tier_name: None,
            members,
        }
    }

    fn n(i: u32) -> HyperNodeMember {
        HyperNodeMember::Node(NodeId(i))
    }

    fn h(s: &str) -> HyperNodeMember {
        HyperNodeMember::HyperNode(s.into())
    }

    /// V20 (volcano-kai-cases.md, TestGetLCAHyperNode): LCAs inside the tree; an orphan's
    /// only common ancestor is the virtual root.
    #[test]
    fn v20_lca() {
        let hns = vec![
            hn("s0", 1, vec![n(0), n(1)]),
            hn("s1", 1, vec![n(2), n(3)]),
            hn("s2", 1, vec![n(4), n(5)]),
            hn("s3", 1, vec![n(6), n(7)]),
            hn("s4", 2, vec![h("s0"), h("s1")]),
            hn("s5", 2, vec![h("s2"), h("s3")]),
            hn("s6", 3, vec![h("s4"), h("s5")]),
            hn("s-orphan", 1, vec![n(8), n(9)]),
        ];
        let t = Topology::from_hypernodes(&hns, 11).unwrap();
        let id = |name: &str| {
            DomainId::from_index(t.domains.iter().position(|d| d.name == name).unwrap())
        };
        assert_eq!(t.lca(id("s0"), id("s1")), id("s4"));
        assert_eq!(t.lca(id("s4"), id("s0")), id("s4"));
        assert_eq!(t.lca(id("s2"), id("s2")), id("s2"));
        assert_eq!(t.lca(id("s0"), id("s-orphan")), DomainId::ROOT);
        assert_eq!(t.root_tier(), 4);
        assert_eq!(
            t.node_domain[10],
            Some(DomainId::ROOT),
            "node 10 is in no HyperNode"
        );
        assert_eq!(names(&t, id("s4")), [0, 1, 2, 3]);
        assert_eq!(names(&t, DomainId::ROOT).len(), 11);
    }

    #[test]
    fn hypernode_errors() {
        let two = vec![
            hn("leaf", 1, vec![n(0)]),
            hn("a", 2, vec![h("leaf")]),
            hn("b", 2, vec![h("leaf")]),
        ];
        assert_eq!(
            Topology::from_hypernodes(&two, 1).unwrap_err(),
            HyperNodeError::TwoParents("leaf".into(), "a".into(), "b".into())
        );
        let missing = vec![hn("a", 2, vec![h("nope")])];
        assert!(matches!(
            Topology::from_hypernodes(&missing, 0),
            Err(HyperNodeError::MissingMember(..))
        ));
        let cycle = vec![hn("a", 1, vec![h("b")]), hn("b", 2, vec![h("a")])];
        assert!(matches!(
            Topology::from_hypernodes(&cycle, 1),
            Err(HyperNodeError::Cycle(..))
        ));
    }

    #[test]
    fn no_hypernodes_is_a_tier_one_root_over_every_node() {
        let t = Topology::from_hypernodes(&[], 3).unwrap();
        assert_eq!(t.root_tier(), 1);
        assert_eq!(names(&t, DomainId::ROOT), [0, 1, 2]);
    }
}
