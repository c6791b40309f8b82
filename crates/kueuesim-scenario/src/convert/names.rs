//! Names checked as the Kubernetes API server and Kueue's webhooks check them, at load, each
//! at the place it was written: an object's `metadata` (name, namespace, labels,
//! annotations, as apimachinery's `ValidateObjectMeta`), references to other objects by name
//! (a ClusterQueue's cohort and flavors, a pod's schedulerName), and resource names. The
//! rules themselves are `kueuesim_model::names`; docs/scenario-format.md ("Names") lists
//! which field follows which.

use serde_saphyr::Location;

use kueuesim_model::names::{self, NameRule, shown};

use super::core::{QUEUE_LABEL, err_at};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire::{self, Keyed, S};

/// Labels whose value names an object, which Kueue's webhooks check as a name
/// (`ValidateLabelAsCRDName`): the LocalQueue of a job, the pod group of a pod.
const CRD_NAME_LABELS: [&str; 2] = [QUEUE_LABEL, "kueue.x-k8s.io/pod-group-name"];

/// The rule of `metadata.name` for an object of `src`'s kind: `IsDNS1123Label` for a
/// Namespace (`ValidateNamespaceName`), `IsDNS1123Subdomain` for every other kind the
/// loader reads (`NameIsDNSSubdomain`, which the API server applies to Nodes, Pods, Jobs,
/// PriorityClasses and to every custom resource: Kueue's, JobSet's, KAI's, Volcano's and
/// kueuesim's own kinds).
fn name_rule(src: &ObjectText<'_>) -> NameRule {
    if src.kind == "Namespace" && src.api_version == "v1" {
        NameRule::Dns1123Label
    } else {
        NameRule::Dns1123Subdomain
    }
}

/// An error at `loc` of `src`'s text.
fn error_at_location(src: &ObjectText<'_>, loc: &Location, message: String) -> ScenarioError {
    if loc.line() == 0 {
        return super::core::err_obj(src, message);
    }
    src.error_at(loc.line(), loc.column(), message)
}

/// `s` (the field `what`) follows `rule`.
pub(crate) fn name(
    src: &ObjectText<'_>,
    s: &S,
    what: &str,
    rule: NameRule,
) -> Result<(), ScenarioError> {
    rule.check(&s.value)
        .map_err(|e| err_at(src, s, format!("{what} {}: {e}", shown(&s.value))))
}

/// `s` (the field `what`) is a DNS-1123 subdomain: the name of an object of any kind but
/// Namespace, where another object refers to it.
pub(crate) fn reference(src: &ObjectText<'_>, s: &S, what: &str) -> Result<(), ScenarioError> {
    name(src, s, what, NameRule::Dns1123Subdomain)
}

/// A reference that may be empty (an empty cohort is none, as upstream reads it).
pub(crate) fn optional_reference(
    src: &ObjectText<'_>,
    s: Option<&S>,
    what: &str,
) -> Result<(), ScenarioError> {
    match s {
        Some(s) if !s.value.is_empty() => reference(src, s, what),
        _ => Ok(()),
    }
}

/// An object's `metadata` as `ValidateObjectMeta` checks it: the name by its kind's rule
/// (a missing name is the loader's to report where it needs one), the namespace a
/// DNS-1123 label (`ValidateNamespaceName`), the labels and the annotations.
pub(crate) fn object_meta(
    src: &ObjectText<'_>,
    meta: &wire::ObjectMeta,
) -> Result<(), ScenarioError> {
    if let Some(n) = meta.name.as_ref().filter(|n| !n.value.is_empty()) {
        name(src, n, "metadata.name", name_rule(src))?;
    }
    if let Some(ns) = &meta.namespace {
        name(src, ns, "metadata.namespace", NameRule::Dns1123Label)?;
    }
    labels(src, &meta.labels, "label")?;
    annotations(src, &meta.annotations)
}

/// An error about the value of label `key` of `map`, at that value's place (at the object
/// when the label is not in `map`).
pub(crate) fn at_label_value(
    src: &ObjectText<'_>,
    map: &Keyed<String>,
    key: &str,
    message: String,
) -> ScenarioError {
    match map.entries.iter().find(|(k, _)| k.value == key) {
        Some((_, at)) => error_at_location(src, at, message),
        None => super::core::err_obj(src, message),
    }
}

/// Labels (or a nodeSelector, a flavor's nodeLabels, a selector's matchLabels; `what`
/// names them in messages) as `ValidateLabels` checks them: each key a qualified name
/// (`IsQualifiedName`), each value a label value (`IsValidLabelValue`). Kueue's queue-name
/// and pod-group-name labels name a LocalQueue and a Workload, and Kueue's webhooks check
/// them as such names (`ValidateLabelAsCRDName`: `IsDNS1123Subdomain`).
pub(crate) fn labels(
    src: &ObjectText<'_>,
    map: &Keyed<String>,
    what: &str,
) -> Result<(), ScenarioError> {
    for (key, value_at) in &map.entries {
        names::qualified_name(&key.value)
            .map_err(|e| err_at(src, key, format!("{what} key {}: {e}", shown(&key.value))))?;
        let value = map.get(&key.value).map_or("", String::as_str);
        let problem = names::label_value(value).err().or_else(|| {
            CRD_NAME_LABELS
                .contains(&key.value.as_str())
                .then(|| names::dns1123_subdomain(value).err())
                .flatten()
        });
        if let Some(e) = problem {
            return Err(error_at_location(
                src,
                value_at,
                format!("{what} {} value {}: {e}", key.value, shown(value)),
            ));
        }
    }
    Ok(())
}

/// A label key written as a value (a topology level's node label): a qualified name.
pub(crate) fn label_key(src: &ObjectText<'_>, s: &S, what: &str) -> Result<(), ScenarioError> {
    names::qualified_name(&s.value)
        .map_err(|e| err_at(src, s, format!("{what} {}: {e}", shown(&s.value))))
}

/// Annotations as `ValidateAnnotations` checks them: each key a qualified name (upstream
/// checks it lower-cased, so upper case is allowed), and all keys and values together at
/// most 256 KiB (`ValidateAnnotationsSize`).
pub(crate) fn annotations(src: &ObjectText<'_>, map: &Keyed<S>) -> Result<(), ScenarioError> {
    let mut total = 0usize;
    for (key, _) in &map.entries {
        names::qualified_name(&key.value.to_ascii_lowercase()).map_err(|e| {
            err_at(
                src,
                key,
                format!("annotation key {}: {e}", shown(&key.value)),
            )
        })?;
        total += key.value.len() + map.get(&key.value).map_or(0, |v| v.value.len());
    }
    if let Err(e) = names::annotations_size(total)
        && let Some((first, _)) = map.entries.first()
    {
        return Err(err_at(src, first, e));
    }
    Ok(())
}

/// A pod template as `ValidatePodTemplateSpec` checks its names: the template's labels and
/// annotations, the nodeSelector (`ValidateLabels`), and the schedulerName, priorityClassName
/// and nodeName (`IsDNS1123Subdomain`, the names of a scheduler profile, a PriorityClass and
/// a Node). Resource names are checked where requests are read (`resource_names`).
pub(crate) fn pod_template(
    src: &ObjectText<'_>,
    t: &wire::PodTemplateSpec,
) -> Result<(), ScenarioError> {
    labels(src, &t.metadata.labels, "pod template label")?;
    annotations(src, &t.metadata.annotations)?;
    labels(src, &t.spec.node_selector, "nodeSelector")?;
    optional_reference(src, t.spec.scheduler_name.as_ref(), "schedulerName")?;
    optional_reference(
        src,
        t.spec.priority_class_name.as_ref(),
        "priorityClassName",
    )?;
    optional_reference(src, t.spec.node_name.as_ref(), "nodeName")
}

/// A resource name: a qualified name, as apimachinery's `validateResourceName` requires of
/// every resource name (of a container's requests, a node's capacity, a quota).
pub(crate) fn resource_name(src: &ObjectText<'_>, s: &S) -> Result<(), ScenarioError> {
    names::qualified_name(&s.value)
        .map_err(|e| err_at(src, s, format!("resource name {}: {e}", shown(&s.value))))
}

/// Every key of a resource list (`requests`, `limits`, `allocatable`) is a resource name.
pub(crate) fn resource_names<V>(src: &ObjectText<'_>, map: &Keyed<V>) -> Result<(), ScenarioError> {
    map.entries
        .iter()
        .try_for_each(|(key, _)| resource_name(src, key))
}

/// A name the loader makes (`example`, one of `what`, e.g. the longest of a NodePool's node
/// names) from a value written at `from`: it follows `check` too, or the error is at `from`.
pub(crate) fn generated(
    src: &ObjectText<'_>,
    from: &S,
    what: &str,
    example: &str,
    check: impl Fn(&str) -> Result<(), String>,
) -> Result<(), ScenarioError> {
    check(example).map_err(|e| {
        err_at(
            src,
            from,
            format!(
                "{what} made from {} would be {}: {e}",
                shown(&from.value),
                shown(example)
            ),
        )
    })
}
