//! Topologies: Kueue and KAI `Topology` level trees (and KAI's default one-level topology)
//! and the Volcano HyperNode tree (HyperNode objects plus those NodePools generate).

use std::collections::BTreeMap;

use kueuesim_model::topology::{HyperNodeError, TopologySource};
use kueuesim_model::{HyperNodeMember, HyperNodeSpec, NodeId, Topology};

use super::core::{Builder, err_at, err_obj, name_of, one_of, pos_of, selector};
use crate::error::ScenarioError;
use crate::source::ObjectText;

impl Builder<'_> {
    /// Kueue/KAI Topologies as level trees, and the Volcano HyperNode tree (HyperNode objects
    /// plus those NodePools generate), with members resolved against the nodes.
    pub(super) fn build_topologies(&mut self) -> Result<(), ScenarioError> {
        let topologies = std::mem::take(&mut self.topologies);
        let mut trees: Vec<(Topology, &ObjectText<'_>)> = Vec::new();
        for (kai, p) in &topologies {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            // Kueue and KAI Topologies of one name may both exist (KAI's Helm hook copies
            // Kueue's): only a duplicate within one API group is an error.
            let key = if *kai {
                "Topology (kai.scheduler)"
            } else {
                "Topology"
            };
            let dup = (String::new(), key.to_string(), String::new(), name.clone());
            if let Some(first) = self.seen.get(&dup) {
                return Err(err_obj(
                    src,
                    format!("duplicate {key} {name:?}: first defined at {first}"),
                ));
            }
            self.seen.insert(dup, src.kind_pos.clone());
            let levels = &p.obj.spec.levels;
            if levels.is_empty() || levels.len() > 16 {
                return Err(err_obj(
                    src,
                    format!(
                        "Topology {name:?} has {} levels: expected 1 to 16 spec.levels",
                        levels.len()
                    ),
                ));
            }
            let mut labels = Vec::new();
            for (i, l) in levels.iter().enumerate() {
                let Some(label) = l.node_label.as_ref().filter(|l| !l.value.is_empty()) else {
                    return Err(err_obj(
                        src,
                        format!(
                            "Topology {name:?} level {i} has no nodeLabel: expected a node label key"
                        ),
                    ));
                };
                // Kueue's Topology CRD pattern for nodeLabel: a qualified name.
                super::names::label_key(src, label, "nodeLabel")?;
                if labels.contains(&label.value) {
                    return Err(err_at(
                        src,
                        label,
                        format!(
                            "nodeLabel {:?} is listed twice: expected each level once",
                            label.value
                        ),
                    ));
                }
                if label.value == "kubernetes.io/hostname" && i + 1 != levels.len() {
                    return Err(err_at(
                        src,
                        label,
                        "kubernetes.io/hostname is not the last level: expected it only as the narrowest level",
                    ));
                }
                labels.push(label.value.clone());
            }
            if let Some((other, osrc)) = trees.iter().find(|(t, _)| t.name == name) {
                let TopologySource::Levels { labels: ol } = &other.source else {
                    unreachable!("level topologies only")
                };
                if *ol != labels {
                    return Err(err_obj(
                        src,
                        format!(
                            "Topology {name:?} has levels {labels:?} but the Topology of the same name at {} has {ol:?}: expected the Kueue and KAI copies to agree",
                            osrc.kind_pos
                        ),
                    ));
                }
                continue;
            }
            trees.push((
                Topology::from_levels(&name, &labels, &self.world.nodes),
                src,
            ));
        }
        let mut level_trees: Vec<Topology> = trees.into_iter().map(|(t, _)| t).collect();
        // The platform default "KAI prefers the same spine" without a named Topology: a
        // one-level topology over that label.
        let kai = &self.world.config.kai;
        if let Some(level) = &kai.default_preferred_level {
            match &kai.default_topology {
                Some(t) => {
                    let ok = level_trees.iter().any(|x| {
                        x.name == *t && matches!(&x.source, TopologySource::Levels { labels } if labels.contains(level))
                    });
                    if !ok {
                        let sim = self
                            .simulation
                            .as_ref()
                            .expect("spec.kai comes from a Simulation");
                        return Err(err_obj(
                            sim.src,
                            format!(
                                "spec.kai.defaultTopology {t:?} is not a Topology with level {level:?}: expected a Topology object listing that node label"
                            ),
                        ));
                    }
                }
                None => {
                    let name = format!("kueuesim-default-{level}");
                    level_trees.push(Topology::from_levels(
                        &name,
                        std::slice::from_ref(level),
                        &self.world.nodes,
                    ));
                    self.world.config.kai.default_topology = Some(name);
                }
            }
        }
        level_trees.sort_by(|a, b| a.name.cmp(&b.name));
        self.world.topologies = level_trees;

        // Volcano HyperNodes.
        let nodes = std::mem::take(&mut self.world.nodes);
        let node_index: BTreeMap<&str, NodeId> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), NodeId::from_index(i)))
            .collect();
        let (mut specs, mut origin): (Vec<HyperNodeSpec>, Vec<&ObjectText<'_>>) =
            std::mem::take(&mut self.generated_hypernodes)
                .into_iter()
                .unzip();
        let hypernodes = std::mem::take(&mut self.hypernodes);
        for p in &hypernodes {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            self.remember(src, "", &name)?;
            if specs.iter().any(|s| s.name == name) {
                return Err(err_obj(
                    src,
                    format!("duplicate HyperNode {name:?}: a NodePool already generates it"),
                ));
            }
            let tier = match &p.obj.spec.tier {
                Some(t) if t.value >= 0 && t.value <= i64::from(i32::MAX) => t.value as i32,
                Some(t) => {
                    return Err(err_at(
                        src,
                        t,
                        format!(
                            "tier {}: expected an integer from 0 to {}",
                            t.value,
                            i32::MAX
                        ),
                    ));
                }
                None => {
                    return Err(err_obj(
                        src,
                        format!("HyperNode {name:?} has no spec.tier: expected an integer ≥ 0"),
                    ));
                }
            };
            let mut members = Vec::new();
            for m in &p.obj.spec.members {
                let sel = &m.selector;
                let n_sel = usize::from(sel.exact_match.is_some())
                    + usize::from(sel.regex_match.is_some())
                    + usize::from(sel.label_match.is_some());
                let kind_pos = m.kind.as_ref();
                if n_sel != 1 {
                    let msg = format!(
                        "HyperNode {name:?} member has {n_sel} selectors: expected exactly one of exactMatch, regexMatch, labelMatch"
                    );
                    return Err(match kind_pos {
                        Some(k) => err_at(src, k, msg),
                        None => err_obj(src, msg),
                    });
                }
                let is_node = match kind_pos {
                    Some(k) => one_of(
                        src,
                        k,
                        "member type",
                        &[("Node", true), ("HyperNode", false)],
                    )?,
                    None => {
                        return Err(err_obj(
                            src,
                            format!(
                                "HyperNode {name:?} member has no type: expected Node or HyperNode"
                            ),
                        ));
                    }
                };
                if let Some(e) = &sel.exact_match {
                    let Some(target) = e.name.as_ref().filter(|n| !n.value.is_empty()) else {
                        return Err(err_obj(
                            src,
                            format!("HyperNode {name:?} exactMatch has no name: expected a name"),
                        ));
                    };
                    if is_node {
                        match node_index.get(target.value.as_str()) {
                            Some(&n) => members.push(HyperNodeMember::Node(n)),
                            None => self.warnings.push(format!(
                                "{}: HyperNode {name:?} lists node {:?}, which does not exist; the member is ignored",
                                pos_of(src, target),
                                target.value
                            )),
                        }
                    } else {
                        members.push(HyperNodeMember::HyperNode(target.value.clone()));
                    }
                    continue;
                }
                if !is_node {
                    return Err(err_obj(
                        src,
                        format!(
                            "HyperNode {name:?} has a HyperNode member with regexMatch or labelMatch: expected exactMatch (Volcano matches HyperNodes by name only)"
                        ),
                    ));
                }
                if let Some(r) = &sel.regex_match {
                    let Some(pat) = &r.pattern else {
                        return Err(err_obj(
                            src,
                            format!(
                                "HyperNode {name:?} regexMatch has no pattern: expected a regular expression"
                            ),
                        ));
                    };
                    let re = regex::Regex::new(&pat.value).map_err(|e| {
                        err_at(
                            src,
                            pat,
                            format!("invalid regexMatch pattern {:?}: {e}", pat.value),
                        )
                    })?;
                    members.extend(
                        node_index
                            .iter()
                            .filter(|(n, _)| re.is_match(n))
                            .map(|(_, &id)| HyperNodeMember::Node(id)),
                    );
                } else if let Some(l) = &sel.label_match {
                    let ls = selector(src, l)?;
                    members.extend(
                        nodes
                            .iter()
                            .enumerate()
                            .filter(|(_, n)| ls.matches(&n.labels))
                            .map(|(i, _)| HyperNodeMember::Node(NodeId::from_index(i))),
                    );
                }
            }
            specs.push(HyperNodeSpec {
                name,
                tier,
                tier_name: p.obj.spec.tier_name.clone(),
                members,
            });
            origin.push(src);
        }
        let at = |name: &str| -> &ObjectText<'_> {
            let i = specs
                .iter()
                .position(|s| s.name == name)
                .expect("culprit is a HyperNode");
            origin[i]
        };
        drop(node_index);
        self.world.nodes = nodes;
        self.world.hypernodes = Topology::from_hypernodes(&specs, self.world.nodes.len())
            .map_err(|e| {
                let (culprit, msg) = match &e {
                    HyperNodeError::MissingMember(p, m) => (p.clone(), format!("HyperNode {p:?} lists HyperNode {m:?}, which does not exist: expected an existing HyperNode name")),
                    HyperNodeError::TwoParents(c, a, b) => (b.clone(), format!("HyperNode {c:?} has two parents, {a:?} and {b:?}: expected a tree (each HyperNode in at most one parent)")),
                    HyperNodeError::Cycle(c) => (c.clone(), format!("HyperNode {c:?} contains itself through its members: expected a tree")),
                };
                err_obj(at(&culprit), msg)
            })?;
        Ok(())
    }
}
