//! What a pod spec says beyond its requests: its required node affinity (read as
//! kube-scheduler's NodeAffinity filter reads it) and, for the pod views, its labels,
//! annotations, containers, nodeSelector and tolerations as written.
//!
//! A required node affinity is given to the schedulers as a nodeSelector: the nodes of the
//! input never change, so every distinct affinity is worked out once, after the load, into
//! a label (`kueuesim.io/node-affinity-<digest>: "true"`) on the nodes it matches, and the
//! pods that carry it select that label. Every filter that reads a nodeSelector (kube-
//! scheduler's NodeAffinity, Volcano's and KAI's predicates, Kueue TAS's node exclusions)
//! then reads the affinity too, with the same "didn't match Pod's node affinity/selector".

use std::sync::Arc;

use kueuesim_model::labels::NODE_AFFINITY_LABEL_PREFIX;
use kueuesim_model::{
    ContainerInfo, Labels, NodeAffinity, NodeSelectorOp, NodeSelectorRequirement, PodInfo,
};

use super::core::{Builder, err_at, one_of};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

impl Builder<'_> {
    /// The nodeSelector label standing for `spec`'s required node affinity, if it has one:
    /// the affinity is checked (operators, `Gt`/`Lt` values, `matchFields` keys) and kept
    /// until `apply_node_affinities` labels the nodes.
    pub(super) fn node_affinity_label(
        &mut self,
        src: &ObjectText<'_>,
        spec: &wire::PodSpec,
    ) -> Result<Option<(String, String)>, ScenarioError> {
        let Some(required) = spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|n| {
                n.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
        else {
            return Ok(None);
        };
        let mut terms = Vec::with_capacity(required.node_selector_terms.len());
        for term in &required.node_selector_terms {
            let mut reqs = Vec::new();
            for (field, list) in [(false, &term.match_expressions), (true, &term.match_fields)] {
                for r in list {
                    reqs.push(requirement(src, r, field)?);
                }
            }
            terms.push(reqs);
        }
        let affinity = NodeAffinity { terms };
        let text = format!("{affinity:?}");
        let mut h = sha1_smol::Sha1::new();
        h.update(text.as_bytes());
        let label = format!(
            "{NODE_AFFINITY_LABEL_PREFIX}{}",
            &h.digest().to_string()[..10]
        );
        self.node_affinities
            .entry(label.clone())
            .or_insert(affinity);
        Ok(Some((label, "true".into())))
    }

    /// Labels every node with the affinities it matches (see the module doc); called once,
    /// after every pod template is read.
    pub(super) fn apply_node_affinities(&mut self) {
        if self.node_affinities.is_empty() {
            return;
        }
        for node in &mut self.world.nodes {
            let mut pairs: Vec<(String, String)> = node
                .labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let before = pairs.len();
            for (label, affinity) in &self.node_affinities {
                if affinity.matches(&node.name, &node.labels) {
                    pairs.push((label.clone(), "true".into()));
                }
            }
            if pairs.len() != before {
                node.labels = Labels::new(pairs);
            }
        }
    }
}

/// One requirement of a node selector term, checked as the API server checks it
/// (`ValidateNodeSelectorRequirement`, `validateNodeFieldSelectorRequirement`).
fn requirement(
    src: &ObjectText<'_>,
    r: &wire::SelectorRequirement,
    field: bool,
) -> Result<NodeSelectorRequirement, ScenarioError> {
    use NodeSelectorOp::*;
    let options: &[(&str, NodeSelectorOp)] = if field {
        &[("In", In), ("NotIn", NotIn)]
    } else {
        &[
            ("In", In),
            ("NotIn", NotIn),
            ("Exists", Exists),
            ("DoesNotExist", DoesNotExist),
            ("Gt", Gt),
            ("Lt", Lt),
        ]
    };
    let what = if field {
        "node affinity matchFields operator"
    } else {
        "node affinity operator"
    };
    let op = one_of(src, &r.operator, what, options)?;
    let expected = match op {
        In | NotIn if r.values.is_empty() => Some("at least one value"),
        Exists | DoesNotExist if !r.values.is_empty() => Some("no values"),
        Gt | Lt if r.values.len() != 1 || r.values[0].trim().parse::<i64>().is_err() => {
            Some("one integer value")
        }
        _ if field && r.key != "metadata.name" => Some("key metadata.name"),
        _ if field && r.values.len() != 1 => Some("one value (a node name)"),
        _ => None,
    };
    if let Some(expected) = expected {
        return Err(err_at(
            src,
            &r.operator,
            format!(
                "node affinity requirement on {:?} with {} {} value(s): expected {expected}",
                r.key,
                r.operator.value,
                r.values.len()
            ),
        ));
    }
    Ok(NodeSelectorRequirement {
        key: r.key.clone(),
        op,
        values: r.values.clone(),
        field,
    })
}

/// The pod (template) as written, for the pod views.
pub(super) fn pod_info(t: &wire::PodTemplateSpec) -> Arc<PodInfo> {
    let m = &t.metadata;
    let quantities = |c: &wire::Container| -> Vec<(String, String)> {
        let r = &c.resources;
        let mut out: Vec<(String, String)> = r
            .requests
            .iter()
            .map(|(k, v)| (k.clone(), v.value.trim().to_string()))
            .collect();
        for (k, v) in &r.limits {
            if !r.requests.contains_key(k) {
                out.push((k.clone(), v.value.trim().to_string()));
            }
        }
        out.sort();
        out
    };
    Arc::new(PodInfo {
        labels: m
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        annotations: m
            .annotations
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect(),
        containers: t
            .spec
            .containers
            .iter()
            .map(|c| ContainerInfo {
                name: c.name.clone().unwrap_or_default(),
                requests: quantities(c),
            })
            .collect(),
        node_selector: t
            .spec
            .node_selector
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        tolerations: t
            .spec
            .tolerations
            .iter()
            .map(|x| {
                // kubectl's `printTolerationsMultilineWithIndent`.
                let mut s = x.key.clone().unwrap_or_default();
                if let Some(v) = x.value.as_deref().filter(|v| !v.is_empty()) {
                    s.push('=');
                    s.push_str(v);
                }
                if let Some(e) = x.effect.as_ref().filter(|e| !e.value.is_empty()) {
                    s.push(':');
                    s.push_str(&e.value);
                }
                if x.operator.as_ref().is_some_and(|o| o.value == "Exists") {
                    s.push_str(" op=Exists");
                }
                if let Some(secs) = x.toleration_seconds {
                    s.push_str(&format!(" for {secs}s"));
                }
                s
            })
            .collect(),
    })
}
