//! Kubernetes core objects of the cluster: Namespaces, Nodes (allocatable, labels, taints)
//! and PriorityClasses (with Kueue's WorkloadPriorityClasses, which share the list).

use kueuesim_model::labels::{Taint, TaintEffect};
use kueuesim_model::{Labels, Namespace, Node, PriorityClass};

use super::core::{Builder, err_obj, name_of, quantity, taints};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

/// The taint of a node whose `Ready` condition is not `True`, as the node lifecycle
/// controller sets it (`TaintNodesByCondition`): `node.kubernetes.io/not-ready` for `False`,
/// `node.kubernetes.io/unreachable` for `Unknown`, effect `NoSchedule`, unless the input
/// has a taint of that key already (a dump has it). No new pod is placed there but one
/// tolerating it; the pods running there go on (the `NoExecute` evictions after
/// `tolerationSeconds` are not simulated).
fn not_ready_taint(conditions: &[wire::StatusCondition], taints: &mut Vec<Taint>) {
    let Some(ready) = conditions.iter().find(|c| c.kind == "Ready") else {
        return;
    };
    let key = match ready.status.as_str() {
        "False" => "node.kubernetes.io/not-ready",
        "Unknown" => "node.kubernetes.io/unreachable",
        _ => return,
    };
    if !taints.iter().any(|t| t.key == key) {
        taints.push(Taint {
            key: key.into(),
            value: String::new(),
            effect: TaintEffect::NoSchedule,
        });
    }
}

impl Builder<'_> {
    pub(super) fn build_namespaces(&mut self) -> Result<(), ScenarioError> {
        let namespaces = std::mem::take(&mut self.namespaces);
        for p in &namespaces {
            let (src, name) = (p.src, name_of(p.src, &p.obj.metadata)?.to_string());
            let mut l: Vec<(String, String)> = p
                .obj
                .metadata
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            // The API server sets this label on every namespace.
            l.push(("kubernetes.io/metadata.name".into(), name.clone()));
            self.remember(src, "", &name)?;
            self.world.add_namespace(Namespace {
                name,
                labels: Labels::new(l),
            });
        }
        Ok(())
    }

    pub(super) fn build_priority_classes(&mut self) -> Result<(), ScenarioError> {
        let wpcs = std::mem::take(&mut self.wpcs);
        for p in &wpcs {
            let name = name_of(p.src, &p.obj.metadata)?.to_string();
            self.remember(p.src, "", &name)?;
            self.world.priority_classes.push(PriorityClass {
                name,
                value: p.obj.value,
                is_pod_priority_class: false,
                global_default: false,
                preempt_never: false,
            });
        }
        let pcs = std::mem::take(&mut self.pcs);
        for p in &pcs {
            let name = name_of(p.src, &p.obj.metadata)?.to_string();
            self.remember(p.src, "", &name)?;
            let preempt_never = preempt_never(p.src, p.obj.preemption_policy.as_ref())?;
            self.world.priority_classes.push(PriorityClass {
                name,
                value: p.obj.value,
                is_pod_priority_class: true,
                global_default: p.obj.global_default,
                preempt_never: preempt_never.unwrap_or(false),
            });
        }
        Ok(())
    }

    pub(super) fn allocatable(
        &mut self,
        src: &ObjectText<'_>,
        map: &wire::ResourceMap,
    ) -> Result<Vec<(usize, i64)>, ScenarioError> {
        super::names::resource_names(src, map)?;
        let mut out = Vec::new();
        for (r, q) in map {
            let amount = quantity(src, r, q)?;
            out.push((self.world.resources.intern(r).index(), amount));
        }
        Ok(out)
    }

    pub(super) fn build_nodes(&mut self) -> Result<(), ScenarioError> {
        // Resources are interned as nodes are read; allocatable vectors are widened at the end.
        let mut built: Vec<(Node, Vec<(usize, i64)>)> = Vec::new();
        let nodes = std::mem::take(&mut self.nodes);
        for p in &nodes {
            let src = p.src;
            let name = name_of(src, &p.obj.metadata)?.to_string();
            let st = &p.obj.status;
            let map = if st.allocatable.is_empty() {
                &st.capacity
            } else {
                &st.allocatable
            };
            let alloc = self.allocatable(src, map)?;
            let mut l: Vec<(String, String)> = p
                .obj
                .metadata
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !p.obj.metadata.labels.contains_key("kubernetes.io/hostname") {
                l.push(("kubernetes.io/hostname".into(), name.clone()));
            }
            let mut node_taints = taints(src, &p.obj.spec.taints)?;
            not_ready_taint(&st.conditions, &mut node_taints);
            let node = Node {
                name: name.clone(),
                labels: Labels::new(l),
                allocatable: Vec::new(),
                taints: node_taints,
                unschedulable: p.obj.spec.unschedulable,
            };
            self.remember(src, "", &name)?;
            if built.len() as i64 >= kueuesim_model::limits::MAX_NODES {
                return Err(err_obj(
                    src,
                    format!(
                        "more than {} Nodes: expected at most {} nodes",
                        kueuesim_model::limits::MAX_NODES,
                        kueuesim_model::limits::MAX_NODES
                    ),
                ));
            }
            built.push((node, alloc));
        }
        self.build_node_pools(&mut built)?;
        // The nodes a Timeline change adds later: in the world from the start, not there
        // until then (`World::late_nodes`), so every epoch has the same node ids.
        let mut late = 0;
        if let Some(plan) = self.epoch_plan {
            let own: std::collections::BTreeSet<&str> =
                built.iter().map(|(n, _)| n.name.as_str()).collect();
            let extra: Vec<(Node, Vec<(usize, i64)>)> = plan
                .late_nodes
                .iter()
                .filter(|(n, _)| !own.contains(n.name.as_str()))
                .map(|(n, alloc)| {
                    let alloc = alloc
                        .iter()
                        .map(|(r, v)| (self.world.resources.intern(r).index(), *v))
                        .collect();
                    (n.clone(), alloc)
                })
                .collect();
            late = extra.len();
            built.extend(extra);
        }
        let first_late = built.len() - late;
        let n_res = self.world.resources.len();
        for (mut node, alloc) in built {
            if self.world.nodes.len() >= first_late {
                self.world
                    .late_nodes
                    .push(kueuesim_model::NodeId::from_index(self.world.nodes.len()));
            }
            node.allocatable = vec![0; n_res];
            for (r, a) in alloc {
                node.allocatable[r] = a;
            }
            self.index
                .nodes
                .insert(node.name.clone(), self.world.nodes.len());
            self.world.nodes.push(node);
        }
        Ok(())
    }

    pub(super) fn pod_pc(&self, name: &str) -> Option<&PriorityClass> {
        self.world
            .priority_classes
            .iter()
            .find(|p| p.is_pod_priority_class && p.name == name)
    }
}

/// A `preemptionPolicy` (a Pod's or a PriorityClass's): Some(true) for `Never`, Some(false)
/// for `PreemptLowerPriority`, None when unset; another value is an error at it, as the API
/// server's validation refuses it.
pub(super) fn preempt_never(
    src: &ObjectText<'_>,
    policy: Option<&wire::S>,
) -> Result<Option<bool>, ScenarioError> {
    policy
        .map(|p| {
            super::core::one_of(
                src,
                p,
                "preemptionPolicy",
                &[("Never", true), ("PreemptLowerPriority", false)],
            )
        })
        .transpose()
}
