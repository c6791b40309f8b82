//! The fields of the Kubernetes kinds an override most often changes — Job, Pod, Deployment,
//! StatefulSet, Node, Namespace, PriorityClass — down to the pod template's containers and
//! their resources, as upstream declares them (the json names of `k8s.io/api` `batch/v1`,
//! `core/v1`, `apps/v1`, `scheduling/v1` and apimachinery's `ObjectMeta`, read off
//! kubernetes/api commit 10b39a39), for strict field validation of overrides
//! (`lint::check_override`). A field whose type is not listed here (`status`, `affinity`,
//! `volumes`, a `ResourceList`, …) is accepted with anything under it; the other kinds (JobSet,
//! the Kubeflow jobs, RayJob, …) are not checked.
//!
//! Only fields an override writes are checked against this table: a scenario file's own
//! Kubernetes fields are not linted (real manifests carry fields of newer Kubernetes versions).

use crate::overlay::tree::{Node, Origin, Value};

/// The root type of each checked kind (`group`, `kind`).
const ROOTS: [(&str, &str, &str); 7] = [
    ("batch", "Job", "Job"),
    ("", "Pod", "Pod"),
    ("apps", "Deployment", "Deployment"),
    ("apps", "StatefulSet", "StatefulSet"),
    ("", "Node", "Node"),
    ("", "Namespace", "Namespace"),
    ("scheduling.k8s.io", "PriorityClass", "PriorityClass"),
];

/// Per type (sorted by name): its json field names and each field's type in this table (""
/// for any other: anything under it is accepted).
#[rustfmt::skip]
static TYPES: &[(&str, &[(&str, &str)])] = &[
    ("Container", &[
        ("args", ""), ("command", ""), ("env", ""), ("envFrom", ""), ("image", ""),
        ("imagePullPolicy", ""), ("lifecycle", ""), ("livenessProbe", ""), ("name", ""),
        ("ports", ""), ("readinessProbe", ""), ("resizePolicy", ""),
        ("resources", "ResourceRequirements"), ("restartPolicy", ""), ("restartPolicyRules", ""),
        ("securityContext", ""), ("startupProbe", ""), ("stdin", ""), ("stdinOnce", ""),
        ("terminationMessagePath", ""), ("terminationMessagePolicy", ""), ("tty", ""),
        ("volumeDevices", ""), ("volumeMounts", ""), ("workingDir", ""),
    ]),
    ("Deployment", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", "ObjectMeta"), ("spec", "DeploymentSpec"),
        ("status", ""),
    ]),
    ("DeploymentSpec", &[
        ("minReadySeconds", ""), ("paused", ""), ("progressDeadlineSeconds", ""), ("replicas", ""),
        ("revisionHistoryLimit", ""), ("selector", ""), ("strategy", ""),
        ("template", "PodTemplateSpec"),
    ]),
    ("Job", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", "ObjectMeta"), ("spec", "JobSpec"),
        ("status", ""),
    ]),
    ("JobSpec", &[
        ("activeDeadlineSeconds", ""), ("backoffLimit", ""), ("backoffLimitPerIndex", ""),
        ("completionMode", ""), ("completions", ""), ("managedBy", ""), ("manualSelector", ""),
        ("maxFailedIndexes", ""), ("parallelism", ""), ("podFailurePolicy", ""),
        ("podReplacementPolicy", ""), ("scheduling", ""), ("selector", ""), ("successPolicy", ""),
        ("suspend", ""), ("template", "PodTemplateSpec"), ("ttlSecondsAfterFinished", ""),
    ]),
    ("Namespace", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", "ObjectMeta"), ("spec", ""), ("status", ""),
    ]),
    ("Node", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", "ObjectMeta"), ("spec", "NodeSpec"),
        ("status", "NodeStatus"),
    ]),
    ("NodeSpec", &[
        ("configSource", ""), ("externalID", ""), ("podCIDR", ""), ("podCIDRs", ""),
        ("podPreemptionPolicy", ""), ("providerID", ""), ("taints", "Taint"),
        ("unschedulable", ""),
    ]),
    ("NodeStatus", &[
        ("addresses", ""), ("allocatable", ""), ("capacity", ""), ("conditions", ""),
        ("config", ""), ("daemonEndpoints", ""), ("declaredFeatures", ""), ("features", ""),
        ("images", ""), ("nodeInfo", ""), ("phase", ""), ("runtimeHandlers", ""),
        ("volumesAttached", ""), ("volumesInUse", ""),
    ]),
    ("ObjectMeta", &[
        ("annotations", ""), ("creationTimestamp", ""), ("deletionGracePeriodSeconds", ""),
        ("deletionTimestamp", ""), ("finalizers", ""), ("generateName", ""), ("generation", ""),
        ("labels", ""), ("managedFields", ""), ("name", ""), ("namespace", ""),
        ("ownerReferences", ""), ("resourceVersion", ""), ("selfLink", ""), ("uid", ""),
    ]),
    ("Pod", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", "ObjectMeta"), ("spec", "PodSpec"),
        ("status", ""),
    ]),
    ("PodSpec", &[
        ("activeDeadlineSeconds", ""), ("affinity", ""), ("automountServiceAccountToken", ""),
        ("containers", "Container"), ("dnsConfig", ""), ("dnsPolicy", ""),
        ("enableServiceLinks", ""), ("ephemeralContainers", ""), ("evictionResponders", ""),
        ("hostAliases", ""), ("hostIPC", ""), ("hostNetwork", ""), ("hostPID", ""),
        ("hostUsers", ""), ("hostname", ""), ("hostnameOverride", ""), ("imagePullSecrets", ""),
        ("initContainers", "Container"), ("nodeName", ""), ("nodeSelector", ""), ("os", ""),
        ("overhead", ""), ("preemptionPolicy", ""), ("priority", ""), ("priorityClassName", ""),
        ("readinessGates", ""), ("resourceClaims", ""), ("resources", "ResourceRequirements"),
        ("restartPolicy", ""), ("runtimeClassName", ""), ("schedulerName", ""),
        ("schedulingGates", ""), ("schedulingGroup", ""), ("securityContext", ""),
        ("serviceAccount", ""), ("serviceAccountName", ""), ("setHostnameAsFQDN", ""),
        ("shareProcessNamespace", ""), ("subdomain", ""), ("terminationGracePeriodSeconds", ""),
        ("tolerations", "Toleration"), ("topologySpreadConstraints", ""), ("volumes", ""),
    ]),
    ("PodTemplateSpec", &[
        ("metadata", "ObjectMeta"), ("spec", "PodSpec"),
    ]),
    ("PriorityClass", &[
        ("apiVersion", ""), ("description", ""), ("globalDefault", ""), ("kind", ""),
        ("metadata", "ObjectMeta"), ("preemptionPolicy", ""), ("value", ""),
    ]),
    ("ResourceRequirements", &[
        ("claims", ""), ("limits", ""), ("requests", ""),
    ]),
    ("StatefulSet", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", "ObjectMeta"), ("spec", "StatefulSetSpec"),
        ("status", ""),
    ]),
    ("StatefulSetSpec", &[
        ("minReadySeconds", ""), ("ordinals", ""), ("persistentVolumeClaimRetentionPolicy", ""),
        ("podManagementPolicy", ""), ("replicas", ""), ("revisionHistoryLimit", ""),
        ("selector", ""), ("serviceName", ""), ("template", "PodTemplateSpec"),
        ("updateStrategy", ""), ("volumeClaimTemplates", ""),
    ]),
    ("Taint", &[
        ("effect", ""), ("key", ""), ("timeAdded", ""), ("value", ""),
    ]),
    ("Toleration", &[
        ("effect", ""), ("key", ""), ("operator", ""), ("tolerationSeconds", ""), ("value", ""),
    ]),
];

/// A field the table does not have: where its key is written, its path
/// (`spec.template.spec.containers[0].resources.request`), and the closest field its type has.
pub(super) struct UnknownKubeField<'f> {
    pub(super) at: Origin<'f>,
    pub(super) path: String,
    pub(super) closest: Option<&'static str>,
}

/// The root type of a checked Kubernetes kind.
pub(super) fn root_type(group: &str, kind: &str) -> Option<&'static str> {
    ROOTS
        .iter()
        .find(|(g, k, _)| *g == group && *k == kind)
        .map(|(_, _, ty)| *ty)
}

fn fields_of(ty: &str) -> Option<&'static [(&'static str, &'static str)]> {
    TYPES
        .binary_search_by(|(name, _)| (*name).cmp(ty))
        .ok()
        .map(|i| TYPES[i].1)
}

/// Every field of `node` (an object of root type `ty`) its type does not have, in document
/// order.
pub(super) fn unknown_fields<'f>(node: &Node<'f>, ty: &str) -> Vec<UnknownKubeField<'f>> {
    let mut out = Vec::new();
    walk(node, ty, &mut String::new(), &mut out);
    out
}

fn walk<'f>(node: &Node<'f>, ty: &str, path: &mut String, out: &mut Vec<UnknownKubeField<'f>>) {
    let Some(fields) = fields_of(ty) else { return };
    match &node.value {
        Value::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(item, ty, path, out);
                path.truncate(len);
            }
        }
        Value::Map(entries) => {
            for e in entries {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&e.key);
                match fields.iter().find(|(f, _)| *f == e.key) {
                    None => out.push(UnknownKubeField {
                        at: e.key_at,
                        path: path.clone(),
                        closest: super::lint::closest(&e.key, fields.iter().map(|(f, _)| *f)),
                    }),
                    Some((_, "")) => {}
                    Some((_, child)) => walk(&e.value, child, path, out),
                }
                path.truncate(len);
            }
        }
        Value::Scalar(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_sorted_and_every_child_is_a_type() {
        assert!(TYPES.windows(2).all(|w| w[0].0 < w[1].0));
        for (ty, fields) in TYPES {
            assert!(fields.windows(2).all(|w| w[0].0 < w[1].0), "{ty}");
            for (f, child) in *fields {
                assert!(child.is_empty() || fields_of(child).is_some(), "{ty}.{f}");
            }
        }
        for (_, _, root) in ROOTS {
            assert!(fields_of(root).is_some(), "{root}");
        }
    }
}
