//! Kueue TAS failed-node replacement (`TASFailedNodeReplacement`,
//! `TASFailedNodeReplacementFailFast`): when a node of a TAS workload's topology assignment
//! fails (deleted, failed, or drained: cordoned with its pods gone), Kueue's TAS node
//! controller marks it in the workload's `status.unhealthyNodes` (`addUnhealthyNode`; a
//! second failed node evicts the workload, `evictWorkloadIfNeeded`), and the scheduler's
//! second pass looks for a replacement (`findReplacementAssignment`): the failed node's pods
//! go elsewhere in the same required domain, the others keep their nodes. When none fits,
//! FailFast evicts the workload (`evictWorkloadAfterFailedTASReplacement`); without it the
//! replacement is tried again whenever nodes free up.
//!
//! Only a topology whose lowest level is `kubernetes.io/hostname` names nodes in its
//! assignments (upstream finds the affected workloads by the hostname of their assignment);
//! with a coarser lowest level a replacement pod is pinned to its domain as before.

use kueuesim_model::topology::TopologySource;
use kueuesim_model::{DomainId, NodeId, TopologyRequest, WorkloadId};

use crate::admission::{tas_flavor_of, tas_request, topology_assignment_within};
use crate::outcome::WorkloadState;

use super::Simulation;
use super::pod_loss::Loss;

/// The hostname label that names a node in a topology assignment.
const HOSTNAME: &str = "kubernetes.io/hostname";

impl<'w> Simulation<'w> {
    /// Pods of `w` on `nodes` ended because the nodes failed (`loss`): the nodes of its
    /// topology assignment among them become unhealthy, or, with one already unhealthy, the
    /// workload is evicted.
    pub(super) fn tas_nodes_failed(&mut self, w: WorkloadId, nodes: &[NodeId], loss: Loss) {
        let world = self.world;
        // A failed GPU, or KAI evicting a stale gang, leaves the node healthy.
        if !world.config.kueue_gates.tas_failed_node_replacement
            || matches!(
                loss,
                Loss::GpuFailed | Loss::StaleGang | Loss::VolcanoEvicted
            )
        {
            return;
        }
        let rt = &self.runtimes[w.index()];
        if rt.record.state != WorkloadState::Admitted {
            return;
        }
        let Some(adm) = &rt.record.admission else {
            return;
        };
        let hit: Vec<NodeId> = nodes
            .iter()
            .copied()
            .filter(|&n| {
                adm.pod_sets.iter().any(|psa| {
                    psa.topology.as_ref().is_some_and(|topo| {
                        leaf_of(world, topo.topology, n)
                            .is_some_and(|leaf| topo.domains.iter().any(|&(d, _)| d == leaf))
                    })
                })
            })
            .collect();
        let Some(&first) = hit.first() else {
            return;
        };
        let mut unhealthy: Vec<NodeId> = rt.unhealthy_node.into_iter().collect();
        for n in hit {
            if !unhealthy.contains(&n) {
                unhealthy.push(n);
            }
        }
        if unhealthy.len() > 1 {
            let names: Vec<&str> = unhealthy
                .iter()
                .map(|&n| world.node(n).name.as_str())
                .collect();
            self.runtimes[w.index()].unhealthy_node = None;
            self.evict(
                w,
                "NodeFailures",
                None,
                None,
                format!(
                    "Workload eviction triggered due to multiple TAS assigned node failures, including: {}",
                    names.join(", ")
                ),
                None,
            );
            return;
        }
        self.runtimes[w.index()].unhealthy_node = Some(first);
        self.kueue.tas_replacements.insert(w);
    }

    /// The scheduler's second pass for the workloads with an unhealthy node: a replacement
    /// in the required domain, or (FailFast) their eviction. Runs before the schedulers place
    /// pods, so the replacements are placed on the nodes found.
    pub(super) fn replace_failed_nodes(&mut self) {
        if self.kueue.tas_replacements.is_empty() {
            return;
        }
        let world = self.world;
        let pending = std::mem::take(&mut self.kueue.tas_replacements);
        let mut tas = None;
        for w in pending {
            let Some(rt) = self.runtimes.get(w.index()) else {
                continue;
            };
            let Some(node) = rt.unhealthy_node else {
                continue;
            };
            let Some(mut adm) = rt
                .record
                .admission
                .clone()
                .filter(|_| rt.record.state == WorkloadState::Admitted)
            else {
                self.runtimes[w.index()].unhealthy_node = None;
                continue;
            };
            let spec = self.spec(w);
            let tas = tas.get_or_insert_with(|| self.tas_capacity());
            let mut failure = None;
            for (ps, psa) in adm.pod_sets.iter_mut().enumerate() {
                let Some(flavor) = tas_flavor_of(world, psa) else {
                    continue;
                };
                let Some(topo) = &mut psa.topology else {
                    continue;
                };
                let Some(leaf) = leaf_of(world, topo.topology, node) else {
                    continue;
                };
                let Some(pos) = topo.domains.iter().position(|&(d, _)| d == leaf) else {
                    continue;
                };
                let (_, count) = topo.domains.remove(pos);
                let pod_set = &spec.pod_sets[ps];
                let req = tas_request(world, adm.cluster_queue, pod_set)
                    .unwrap_or(TopologyRequest::Unconstrained);
                // `requiredReplacementDomain`: a required request keeps the pods in the domain
                // of its level holding the first node left; otherwise anywhere.
                let t = &world.topologies[topo.topology];
                let within = match (&req, topo.domains.first()) {
                    (TopologyRequest::Required(level), Some(&(d, _))) => {
                        let depth = t
                            .tier_of_level(level)
                            .map_or(1, |tier| (t.root_tier() - tier) as u32);
                        t.ancestors(d).find(|&a| t.domain(a).depth == depth)
                    }
                    _ => None,
                };
                match topology_assignment_within(world, tas, flavor, pod_set, count, &req, within) {
                    Ok(found) => {
                        tas.apply(world, &found, &pod_set.requests, 1);
                        // In the failed node's place: its pods' slots are that part of the
                        // assignment (the ungater releases the pods domain by domain).
                        for (i, &d) in found.domains.iter().enumerate() {
                            topo.domains.insert(pos + i, d);
                        }
                    }
                    Err(_) => {
                        failure = Some(node);
                        break;
                    }
                }
            }
            match failure {
                None => {
                    let rt = &mut self.runtimes[w.index()];
                    rt.record.admission = Some(adm);
                    rt.unhealthy_node = None;
                }
                Some(n)
                    if world
                        .config
                        .kueue_gates
                        .tas_failed_node_replacement_fail_fast =>
                {
                    self.runtimes[w.index()].unhealthy_node = None;
                    self.evict(
                        w,
                        "NodeFailures",
                        None,
                        None,
                        format!(
                            "Workload was evicted as there was no replacement for unhealthy node(s): {}",
                            world.node(n).name
                        ),
                        None,
                    );
                }
                // Tried again when nodes free up.
                Some(_) => {
                    self.kueue.tas_replacements.insert(w);
                }
            }
        }
    }
}

/// The leaf domain of node `n` in topology `topology`, when its lowest level is the hostname.
fn leaf_of(world: &kueuesim_model::World, topology: usize, n: NodeId) -> Option<DomainId> {
    let t = &world.topologies[topology];
    let TopologySource::Levels { labels } = &t.source else {
        return None;
    };
    if labels.last().map(String::as_str) != Some(HOSTNAME) {
        return None;
    }
    t.domain_of(n)
}
