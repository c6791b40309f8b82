//! The KAI PodGroup a workload names: its minMember, preemptibility, topology constraint
//! and subgroups, as `GangSpec` fields (the rest of the gang objects are `gang.rs`'s).

use kueuesim_model::{GangSpec, KaiSubGroup, KaiTopologyConstraint};

use super::core::{Builder, err_at, err_obj, namespace_of};
use super::gang::min_member;
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

impl Builder<'_> {
    /// The KAI PodGroup a workload names (`pod-group-name`): its minMember, topology
    /// constraint and subgroups, with each pod set in the subgroup its template's
    /// `kai.scheduler/subgroup-name` label names.
    pub(super) fn kai_pod_group(
        &mut self,
        src: &ObjectText<'_>,
        pg_name: &wire::S,
        meta: &wire::ObjectMeta,
        templates: &[&wire::ObjectMeta],
        gang: &mut GangSpec,
    ) -> Result<(), ScenarioError> {
        let ns = namespace_of(meta);
        self.pod_groups_named
            .insert((true, ns.clone(), pg_name.value.clone()));
        let Some(pg) = self
            .kai_pod_groups
            .get(&(ns.clone(), pg_name.value.clone()))
        else {
            return Err(err_at(
                src,
                pg_name,
                format!(
                    "pod-group-name {:?}: no KAI PodGroup {ns}/{} in the input: expected a scheduling.run.ai PodGroup of that name",
                    pg_name.value, pg_name.value
                ),
            ));
        };
        let psrc = pg.src;
        let spec = &pg.obj.spec;
        gang.pod_group = Some(pg_name.value.clone());
        gang.pod_group_per_pod = false;
        // The scheduler reads the queue from the PodGroup (`spec.queue`, which KAI's pod
        // grouper copies from the `kai.scheduler/queue` label when it creates one).
        if let Some(q) = spec
            .queue
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty())
        {
            gang.kai_queue = match q {
                "default-queue" => None,
                q => match self.index.kai_queues.get(q) {
                    Some(&i) => Some(i),
                    None => {
                        return Err(err_obj(
                            psrc,
                            format!(
                                "spec.queue {q:?} names no KAI Queue in the input: expected a scheduling.run.ai Queue of that name, or default-queue"
                            ),
                        ));
                    }
                },
            };
        }
        if let Some(m) = &spec.min_member {
            gang.min_member = Some(min_member(psrc, m)?);
        }
        if let Some(t) = self.kai_last_start(psrc, &pg.obj.metadata.annotations)? {
            gang.bound_started = Some(t);
        }
        // The scheduler reads the PodGroup's own preemptibility; unset, the priority decides.
        gang.kai_preemptible = match &spec.preemptibility {
            Some(p) if !p.value.is_empty() => match preemptibility(&p.value) {
                Some(b) => Some(b),
                None => {
                    return Err(err_at(
                        psrc,
                        p,
                        format!(
                            "spec.preemptibility {:?}: expected preemptible or non-preemptible",
                            p.value
                        ),
                    ));
                }
            },
            _ => None,
        };
        let pg_topology = spec
            .topology_constraint
            .as_ref()
            .and_then(|t| t.topology.clone());
        let constraint =
            |t: &Option<wire::KaiTopologyConstraint>| -> Option<KaiTopologyConstraint> {
                let t = t.as_ref()?;
                let topology = t.topology.clone().or_else(|| pg_topology.clone())?;
                (t.required_topology_level.is_some() || t.preferred_topology_level.is_some()).then(
                    || KaiTopologyConstraint {
                        topology,
                        required: t.required_topology_level.clone(),
                        preferred: t.preferred_topology_level.clone(),
                    },
                )
            };
        if gang.kai_topology.is_none() {
            gang.kai_topology = constraint(&spec.topology_constraint);
        }
        // Subgroups, parents resolved by name; listed parents-first for the engine.
        let names: Vec<&str> = spec
            .sub_groups
            .iter()
            .map(|g| g.name.as_ref().map_or("", |n| n.value.as_str()))
            .collect();
        let mut order: Vec<usize> = Vec::new();
        let mut placed = vec![false; names.len()];
        while order.len() < names.len() {
            let before = order.len();
            for (i, g) in spec.sub_groups.iter().enumerate() {
                if placed[i] {
                    continue;
                }
                let ready = match &g.parent {
                    None => true,
                    Some(p) => match names.iter().position(|n| *n == p.value) {
                        Some(pi) => placed[pi],
                        None => {
                            return Err(err_at(
                                psrc,
                                p,
                                format!(
                                    "subgroup parent {:?} is not a subgroup of this PodGroup: expected one of {names:?}",
                                    p.value
                                ),
                            ));
                        }
                    },
                };
                if ready {
                    placed[i] = true;
                    order.push(i);
                }
            }
            if order.len() == before {
                return Err(err_obj(
                    psrc,
                    "subGroups form a cycle through their parents: expected a tree",
                ));
            }
        }
        for &i in &order {
            let g = &spec.sub_groups[i];
            let Some(name) = g.name.as_ref().filter(|n| !n.value.is_empty()) else {
                return Err(err_obj(
                    psrc,
                    "a subgroup has no name: expected spec.subGroups[].name",
                ));
            };
            let parent = g.parent.as_ref().map(|p| {
                let pi = names
                    .iter()
                    .position(|n| *n == p.value)
                    .expect("resolved above");
                order.iter().position(|&o| o == pi).expect("parents first")
            });
            let min_member = match &g.min_member {
                Some(m) => min_member(psrc, m)?.max(1),
                None => 1,
            };
            gang.kai_subgroups.push(KaiSubGroup {
                name: name.value.clone(),
                parent,
                min_member,
                constraint: constraint(&g.topology_constraint),
            });
        }
        for t in templates {
            let sg = match t.labels.get("kai.scheduler/subgroup-name") {
                None => None,
                Some(n) => match gang.kai_subgroups.iter().position(|g| g.name == *n) {
                    Some(i) => Some(i),
                    None => {
                        return Err(err_at(
                            src,
                            pg_name,
                            format!(
                                "a pod set's kai.scheduler/subgroup-name {n:?} is not a subgroup of PodGroup {}: expected one of {names:?}",
                                pg_name.value
                            ),
                        ));
                    }
                },
            };
            gang.pod_set_subgroup.push(sg);
        }
        Ok(())
    }
}

/// A KAI preemptibility (`ParsePreemptibility`): `preemptible` is true, `non-preemptible`
/// false; None for anything else, which the caller reports (upstream's CRD refuses it on a
/// PodGroup; its pod grouper ignores it on a label, which here is an error so that a typo is
/// not silently dropped).
pub(super) fn preemptibility(value: &str) -> Option<bool> {
    match value.trim() {
        "preemptible" => Some(true),
        "non-preemptible" => Some(false),
        _ => None,
    }
}
