//! The ClusterTopology a PodCliqueSet packs its PodGangs by (`grove.io` ClusterTopology):
//! which one it uses, its levels broadest first, and a pack constraint as the PodGang
//! carries it.

use kueuesim_model::KaiTopologyConstraint;

use crate::convert::core::{Builder, err_at, err_obj};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

use super::{DEFAULT_TOPOLOGY, DOMAINS, TOPOLOGY_LABEL};

/// The ClusterTopology a PodCliqueSet uses: its name and its levels' node label keys by
/// domain rank (`DOMAINS`), in Grove's order (the mutating webhook sorts them broadest first).
pub(super) struct GroveTopology {
    pub(super) name: String,
    pub(super) levels: Vec<(usize, String)>,
}

impl GroveTopology {
    /// The narrowest level's key: the operator's preferred level at every constraint.
    pub(super) fn narrowest(&self) -> &str {
        &self.levels.last().expect("at least one level").1
    }

    /// A pack constraint as the PodGang carries it (`packConstraint`): required the
    /// `packDomain`'s key, preferred the narrowest level's.
    pub(super) fn constraint(&self, required: &Option<String>) -> KaiTopologyConstraint {
        KaiTopologyConstraint {
            topology: self.name.clone(),
            required: required.clone(),
            preferred: Some(self.narrowest().to_string()),
        }
    }
}

impl Builder<'_> {
    /// The ClusterTopology the PodCliqueSet uses, if the input has it (Grove's topology
    /// support enabled): the one its label `grove.io/cluster-topology-name` names (the
    /// mutating webhook sets it to the operator's configured name), else `grove-topology`.
    pub(super) fn grove_topology(
        &mut self,
        src: &ObjectText<'_>,
        meta: &wire::ObjectMeta,
        template: &wire::PodCliqueSetTemplate,
    ) -> Result<Option<GroveTopology>, ScenarioError> {
        let name = meta
            .labels
            .get(TOPOLOGY_LABEL)
            .map_or(DEFAULT_TOPOLOGY, String::as_str);
        let Some(t) = self.grove_topologies.get(name) else {
            if meta.labels.contains_key(TOPOLOGY_LABEL) {
                return Err(err_obj(
                    src,
                    format!(
                        "label {TOPOLOGY_LABEL} names ClusterTopology {name:?}, which is not in the input: expected a grove.io ClusterTopology of that name"
                    ),
                ));
            }
            return Ok(None);
        };
        let tsrc = t.src;
        if t.obj.spec.levels.is_empty() {
            return Err(err_obj(
                tsrc,
                "spec.levels is empty: expected at least one level",
            ));
        }
        let mut levels: Vec<(usize, String)> = Vec::new();
        for l in &t.obj.spec.levels {
            let (Some(d), Some(k)) = (&l.domain, &l.key) else {
                return Err(err_obj(
                    tsrc,
                    "a level lacks domain or key: expected spec.levels[].domain and .key",
                ));
            };
            let Some(rank) = DOMAINS.iter().position(|x| *x == d.value) else {
                return Err(err_at(
                    tsrc,
                    d,
                    format!(
                        "domain {:?}: expected one of {}",
                        d.value,
                        DOMAINS.join(", ")
                    ),
                ));
            };
            // A node label key, printed in warnings and matched against nodes' labels.
            if !k.value.is_empty() {
                crate::convert::names::label_key(tsrc, k, "key")?;
            }
            if k.value.is_empty() || levels.iter().any(|(r, key)| *r == rank || *key == k.value) {
                return Err(err_at(
                    tsrc,
                    k,
                    "each level's domain and key must be unique and not empty",
                ));
            }
            levels.push((rank, k.value.clone()));
        }
        // The mutating webhook reorders the levels broadest first.
        levels.sort();
        let topology = GroveTopology {
            name: name.to_string(),
            levels,
        };
        // KAI finds the topology by the PodGang's `grove.io/topology-name`: a KAI (or Kueue)
        // Topology of the same name, whose levels must hold the keys used.
        let used: Vec<&str> = std::iter::once(topology.narrowest())
            .chain(
                template
                    .topology_constraint
                    .iter()
                    .chain(
                        template
                            .cliques
                            .iter()
                            .filter_map(|c| c.topology_constraint.as_ref()),
                    )
                    .chain(
                        template
                            .pod_clique_scaling_groups
                            .iter()
                            .filter_map(|g| g.topology_constraint.as_ref()),
                    )
                    .filter_map(|c| c.pack_domain.as_ref())
                    .filter_map(|d| {
                        let rank = DOMAINS.iter().position(|x| *x == d.value)?;
                        topology
                            .levels
                            .iter()
                            .find(|(r, _)| *r == rank)
                            .map(|(_, k)| k.as_str())
                    }),
            )
            .collect();
        match self.world.topologies.iter().find(|t| t.name == name) {
            None => self.warnings.push(format!(
                "{}: ClusterTopology {name} has no KAI Topology of the same name: KAI's grove pod grouper names it in the PodGroup, and the PodCliqueSet's pods cannot be placed (expected a kai.scheduler or kueue.x-k8s.io Topology {name} with the levels {})",
                src.kind_pos,
                topology.levels.iter().map(|(_, k)| k.as_str()).collect::<Vec<_>>().join(", ")
            )),
            Some(kt) => {
                if let Some(missing) = used.iter().find(|k| kt.tier_of_level(k).is_none()) {
                    self.warnings.push(format!(
                        "{}: Topology {name} has no level {missing}, which the PodCliqueSet's pack constraints use: its pods cannot be placed",
                        src.kind_pos
                    ));
                }
            }
        }
        Ok(Some(topology))
    }
}
