//! The fields of Kueue's kinds as upstream declares them, for the unknown-field lint: every
//! json name of the Go API types of `kueue.x-k8s.io` (kueue `apis/kueue/v1beta1` and
//! `apis/kueue/v1beta2`, `*_types.go`) and of the Kueue `Configuration`
//! (`apis/config/v1beta1`, `apis/config/v1beta2`), both versions united, as a static table
//! (read off kueue commit ff69552e), and the walk that checks an object's tree against it.
//!
//! A field whose Go type is not a Kueue type (`metav1.ObjectMeta`, `corev1.PodTemplateSpec`,
//! `metav1.Condition`, `resource.Quantity`, maps, …) is accepted with anything under it.

use crate::overlay::tree::{Node, Origin, Value};

/// An unknown field: where its key is written, its path from the object's root
/// (`spec.resourceGroups[0].flavors[0].resources[0].nominalQouta`), and what is wrong.
pub(super) struct UnknownField<'f> {
    pub(super) at: Origin<'f>,
    pub(super) path: String,
    pub(super) problem: Problem,
}

/// Why a field is reported.
pub(super) enum Problem {
    /// Neither API version has it; the closest field the type has.
    Unknown { closest: Option<&'static str> },
    /// Only the other API version has it (`VERSION_ONLY`): an API server refuses it in this
    /// one (strict field validation, `kubectl`'s default).
    OtherVersion(&'static VersionOnly),
}

/// A field that one API version of `kueue.x-k8s.io` has and the other does not.
pub(super) struct VersionOnly {
    /// The Go type (as in `TYPES`).
    pub(super) ty: &'static str,
    pub(super) field: &'static str,
    /// The version that has it.
    pub(super) version: &'static str,
    /// What the other version writes instead ("" if nothing).
    pub(super) instead: &'static str,
    /// Whether the loader reads it whatever the object's version (so the object means what
    /// its author meant), or ignores it.
    pub(super) read: bool,
}

/// Every field of the types the walk checks that only one of `v1beta1` and `v1beta2` has,
/// read off kueue `apis/kueue/v1beta1` and `apis/kueue/v1beta2` (`*_types.go`) at commit
/// ff69552e: the json names of each struct in one version and not in the other. Left out:
/// the status of fair sharing, whose types the table merges (`TYPES`' note on
/// LocalQueueStatus.fairSharing), and the kinds the loader does not read (AdmissionCheck,
/// MultiKueue).
#[rustfmt::skip]
pub(super) static VERSION_ONLY: &[VersionOnly] = &[
    VersionOnly { ty: "ClusterQueueSpec", field: "cohort", version: "v1beta1", instead: "cohortName", read: true },
    VersionOnly { ty: "ClusterQueueSpec", field: "cohortName", version: "v1beta2", instead: "cohort", read: true },
    VersionOnly { ty: "ClusterQueueSpec", field: "admissionChecks", version: "v1beta1", instead: "admissionChecksStrategy", read: true },
    VersionOnly { ty: "ClusterQueueSpec", field: "concurrentAdmissionPolicy", version: "v1beta2", instead: "", read: false },
    VersionOnly { ty: "WorkloadSpec", field: "priorityClassName", version: "v1beta1", instead: "priorityClassRef", read: true },
    VersionOnly { ty: "WorkloadSpec", field: "priorityClassSource", version: "v1beta1", instead: "priorityClassRef", read: true },
    VersionOnly { ty: "WorkloadSpec", field: "priorityClassRef", version: "v1beta2", instead: "priorityClassName and priorityClassSource", read: true },
    VersionOnly { ty: "WorkloadSpec", field: "preemptionGates", version: "v1beta2", instead: "", read: false },
    VersionOnly { ty: "PodSetTopologyRequest", field: "podsetSliceRequiredTopologyConstraints", version: "v1beta2", instead: "", read: false },
    VersionOnly { ty: "WorkloadStatus", field: "accumulatedPastExexcutionTimeSeconds", version: "v1beta1", instead: "accumulatedPastExecutionTimeSeconds", read: false },
    VersionOnly { ty: "WorkloadStatus", field: "accumulatedPastExecutionTimeSeconds", version: "v1beta2", instead: "accumulatedPastExexcutionTimeSeconds", read: false },
    VersionOnly { ty: "WorkloadStatus", field: "preemptionGates", version: "v1beta2", instead: "", read: false },
    VersionOnly { ty: "ClusterQueueStatus", field: "pendingWorkloadsStatus", version: "v1beta1", instead: "", read: false },
    VersionOnly { ty: "LocalQueueStatus", field: "flavorUsage", version: "v1beta1", instead: "flavorsUsage", read: false },
    VersionOnly { ty: "LocalQueueStatus", field: "flavors", version: "v1beta1", instead: "", read: false },
    VersionOnly { ty: "LocalQueueStatus", field: "flavorsUsage", version: "v1beta2", instead: "flavorUsage", read: false },
    VersionOnly { ty: "TopologyAssignment", field: "domains", version: "v1beta1", instead: "slices", read: false },
    VersionOnly { ty: "TopologyAssignment", field: "slices", version: "v1beta2", instead: "domains", read: false },
];

/// The `VERSION_ONLY` entry of field `field` of type `ty` when `version` does not have it.
fn other_version_only(ty: &str, field: &str, version: &str) -> Option<&'static VersionOnly> {
    VERSION_ONLY
        .iter()
        .find(|v| v.ty == ty && v.field == field && v.version != version)
}

/// The Kueue kinds the loader reads (`group`, `kind`) and the root type of each object's
/// tree; AdmissionCheck, MultiKueue and ProvisioningRequestConfig objects are not read
/// (skipped kinds), so not checked.
const ROOTS: [(&str, &str, &str); 8] = [
    ("kueue.x-k8s.io", "ClusterQueue", "ClusterQueue"),
    ("kueue.x-k8s.io", "LocalQueue", "LocalQueue"),
    ("kueue.x-k8s.io", "ResourceFlavor", "ResourceFlavor"),
    ("kueue.x-k8s.io", "Cohort", "Cohort"),
    (
        "kueue.x-k8s.io",
        "WorkloadPriorityClass",
        "WorkloadPriorityClass",
    ),
    ("kueue.x-k8s.io", "Workload", "Workload"),
    ("kueue.x-k8s.io", "Topology", "Topology"),
    (
        "config.kueue.x-k8s.io",
        "Configuration",
        "config.Configuration",
    ),
];

/// The field names that, in an object of root type `root` and API `version`, may be a field
/// of the other version only (`cohort` in a v1beta2 ClusterQueue, `flavors` in a v1beta1
/// LocalQueue's status): the `VERSION_ONLY` fields of the types an object of `root` holds. A
/// key with such a name sends the object to the walk, which tells by the key's place whether
/// it is one (a v1beta2 ClusterQueue's `admissionChecksStrategy.admissionChecks` is not).
/// Per root, so that `flavors`, every ClusterQueue's, walks only LocalQueues.
fn other_version_names(version: &str, root: &str) -> &'static [&'static str] {
    type Names = Vec<(&'static str, &'static str, Vec<&'static str>)>;
    static NAMES: std::sync::OnceLock<Names> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        let mut out = Vec::new();
        for (_, _, root) in ROOTS {
            // The types an object of `root` holds, at any depth.
            let mut reach = vec![root];
            let mut i = 0;
            while i < reach.len() {
                for (_, child) in fields_of(reach[i]).unwrap_or(&[]) {
                    let child = child.strip_prefix("MAP:").unwrap_or(child);
                    if !child.is_empty() && !reach.contains(&child) {
                        reach.push(child);
                    }
                }
                i += 1;
            }
            for version in ["v1beta1", "v1beta2"] {
                let mut v: Vec<&'static str> = VERSION_ONLY
                    .iter()
                    .filter(|o| o.version != version && reach.contains(&o.ty))
                    .map(|o| o.field)
                    .collect();
                v.sort_unstable();
                v.dedup();
                out.push((root, version, v));
            }
        }
        out
    });
    names
        .iter()
        .find(|(r, v, _)| *r == root && *v == version)
        .map_or(&[], |(_, _, n)| n.as_slice())
}

/// The root type of a Kueue kind the loader reads (`ROOTS`).
pub(super) fn root_type(group: &str, kind: &str) -> Option<&'static str> {
    ROOTS
        .iter()
        .find(|(g, k, _)| *g == group && *k == kind)
        .map(|(_, _, ty)| *ty)
}

/// Every field name of every type, sorted and without repeats.
fn all_field_names() -> &'static [&'static str] {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let mut v: Vec<&'static str> = TYPES
            .iter()
            .flat_map(|(_, fields)| fields.iter().map(|(f, _)| *f))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    })
}

/// Whether `text` may hold a key that is no field of any Kueue type: a cheap scan, so that
/// an object whose every key is some field name (the common case: Kueue's perf scenario has
/// 2,000 such objects) is not parsed again. It never says no for a key: every mapping key,
/// plain or quoted, block or flow, is written right before a `:` that a space, a line end,
/// `,`, `}` or `]` follows (or, quoted, any character); anything it cannot read that way (an
/// explicit `?` key, a colon inside a value) makes it say yes, and the tree walk decides.
///
/// With the object's API `version` (`v1beta1`, `v1beta2`) and root type, a key that may
/// be a field of the other version only (`other_version_names`) makes it say yes too.
pub(super) fn may_have_unknown_field(text: &str, version: Option<&str>, root: &str) -> bool {
    let names = all_field_names();
    let other = version.map_or(&[][..], |v| other_version_names(v, root));
    let b = text.as_bytes();
    if text.contains("? ") || text.contains("?\n") {
        return true;
    }
    for (i, _) in text.match_indices(':') {
        let next = b.get(i + 1).copied();
        let quoted = i > 0 && matches!(b[i - 1], b'"' | b'\'');
        if !quoted
            && !matches!(
                next,
                None | Some(b' ' | b'\n' | b'\r' | b'\t' | b',' | b'}' | b']')
            )
        {
            continue;
        }
        let mut start = i;
        while start > 0 && !matches!(b[start - 1], b' ' | b'\n' | b'\t' | b'{' | b'[' | b',') {
            start -= 1;
        }
        let token = &text[start..i];
        if names.binary_search(&token).is_err() || other.binary_search(&token).is_ok() {
            return true;
        }
    }
    false
}

/// The fields of the type named `ty`.
fn fields_of(ty: &str) -> Option<&'static [(&'static str, &'static str)]> {
    TYPES
        .binary_search_by(|(name, _)| (*name).cmp(ty))
        .ok()
        .map(|i| TYPES[i].1)
}

/// Every field of `node` (an object of root type `ty`) that its type does not have, at any
/// depth, in document order: in neither API version, or, with the object's `version`, only
/// in the other one.
pub(super) fn unknown_fields<'f>(
    node: &Node<'f>,
    ty: &str,
    version: Option<&str>,
) -> Vec<UnknownField<'f>> {
    let mut out = Vec::new();
    walk(node, ty, version, &mut String::new(), &mut out);
    out
}

fn walk<'f>(
    node: &Node<'f>,
    ty: &str,
    version: Option<&str>,
    path: &mut String,
    out: &mut Vec<UnknownField<'f>>,
) {
    let Some(fields) = fields_of(ty) else { return };
    match &node.value {
        Value::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(item, ty, version, path, out);
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
                let other = version.and_then(|v| other_version_only(ty, &e.key, v));
                if let Some(o) = other {
                    out.push(UnknownField {
                        at: e.key_at,
                        path: path.clone(),
                        problem: Problem::OtherVersion(o),
                    });
                }
                match fields.iter().find(|(f, _)| *f == e.key) {
                    None => out.push(UnknownField {
                        at: e.key_at,
                        path: path.clone(),
                        problem: Problem::Unknown {
                            // Among this version's fields: the other's would be a finding too.
                            closest: super::lint::closest(
                                &e.key,
                                fields.iter().map(|(f, _)| *f).filter(|f| {
                                    version.is_none_or(|v| other_version_only(ty, f, v).is_none())
                                }),
                            ),
                        },
                    }),
                    Some((_, "")) => {}
                    Some((_, child)) => match child.strip_prefix("MAP:") {
                        // map[string]T: every value a T.
                        Some(t) => {
                            if let Value::Map(values) = &e.value.value {
                                for v in values {
                                    let l = path.len();
                                    path.push_str(&format!("[{}]", v.key));
                                    walk(&v.value, t, version, path, out);
                                    path.truncate(l);
                                }
                            }
                        }
                        None => walk(&e.value, child, version, path, out),
                    },
                }
                path.truncate(len);
            }
        }
        Value::Scalar(_) => {}
    }
}

/// Per Go type (sorted by name; `config.` for the Configuration's package): its json field
/// names and each field's Kueue type ("" for a type not of Kueue's API packages, `MAP:T` for
/// `map[string]T`). LocalQueueStatus.fairSharing is v1beta1's FairSharingStatus and v1beta2's
/// LocalQueueFairSharingStatus: the latter has the fields of both.
#[rustfmt::skip]
static TYPES: &[(&str, &[(&str, &str)])] = &[
    ("Admission", &[
        ("clusterQueue", ""), ("podSetAssignments", "PodSetAssignment"),
    ]),
    ("AdmissionCheckState", &[
        ("lastTransitionTime", ""), ("message", ""), ("name", ""),
        ("podSetUpdates", "PodSetUpdate"), ("requeueAfterSeconds", ""), ("retryCount", ""),
        ("state", ""),
    ]),
    ("AdmissionCheckStrategyRule", &[
        ("name", ""), ("onFlavors", ""),
    ]),
    ("AdmissionChecksStrategy", &[
        ("admissionChecks", "AdmissionCheckStrategyRule"),
    ]),
    ("AdmissionFairSharingStatus", &[
        ("consumedResources", ""), ("lastUpdate", ""),
    ]),
    ("AdmissionScope", &[
        ("admissionMode", ""),
    ]),
    ("BorrowWithinCohort", &[
        ("maxPriorityThreshold", ""), ("policy", ""),
    ]),
    ("ClusterQueue", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", ""), ("spec", "ClusterQueueSpec"),
        ("status", "ClusterQueueStatus"),
    ]),
    ("ClusterQueuePendingWorkload", &[
        ("name", ""), ("namespace", ""),
    ]),
    ("ClusterQueuePendingWorkloadsStatus", &[
        ("clusterQueuePendingWorkload", "ClusterQueuePendingWorkload"), ("lastChangeTime", ""),
    ]),
    ("ClusterQueuePreemption", &[
        ("borrowWithinCohort", "BorrowWithinCohort"), ("reclaimWithinCohort", ""),
        ("withinClusterQueue", ""),
    ]),
    ("ClusterQueueSpec", &[
        ("admissionChecks", ""), ("admissionChecksStrategy", "AdmissionChecksStrategy"),
        ("admissionScope", "AdmissionScope"), ("cohort", ""), ("cohortName", ""),
        ("concurrentAdmissionPolicy", "ConcurrentAdmissionPolicy"),
        ("fairSharing", "FairSharing"), ("flavorFungibility", "FlavorFungibility"),
        ("namespaceSelector", ""), ("preemption", "ClusterQueuePreemption"),
        ("queueingStrategy", ""), ("resourceGroups", "ResourceGroup"), ("stopPolicy", ""),
    ]),
    ("ClusterQueueStatus", &[
        ("admittedWorkloads", ""), ("conditions", ""), ("fairSharing", "FairSharingStatus"),
        ("flavorsReservation", "FlavorUsage"), ("flavorsUsage", "FlavorUsage"),
        ("pendingWorkloads", ""),
        ("pendingWorkloadsStatus", "ClusterQueuePendingWorkloadsStatus"),
        ("reservingWorkloads", ""),
    ]),
    ("Cohort", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", ""), ("spec", "CohortSpec"),
        ("status", "CohortStatus"),
    ]),
    ("CohortSpec", &[
        ("fairSharing", "FairSharing"), ("parentName", ""), ("resourceGroups", "ResourceGroup"),
    ]),
    ("CohortStatus", &[
        ("fairSharing", "FairSharingStatus"),
    ]),
    ("ConcurrentAdmissionConstraints", &[
        ("lastAcceptableFlavorName", ""),
    ]),
    ("ConcurrentAdmissionMigration", &[
        ("constraints", "ConcurrentAdmissionConstraints"), ("mode", ""),
    ]),
    ("ConcurrentAdmissionPolicy", &[
        ("migration", "ConcurrentAdmissionMigration"),
    ]),
    ("FairSharing", &[
        ("weight", ""),
    ]),
    ("FairSharingStatus", &[
        ("admissionFairSharingStatus", "AdmissionFairSharingStatus"), ("weightedShare", ""),
    ]),
    ("FlavorFungibility", &[
        ("preference", ""), ("whenCanBorrow", ""), ("whenCanPreempt", ""),
    ]),
    ("FlavorQuotas", &[
        ("name", ""), ("resources", "ResourceQuota"),
    ]),
    ("FlavorUsage", &[
        ("name", ""), ("resources", "ResourceUsage"),
    ]),
    ("LocalQueue", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", ""), ("spec", "LocalQueueSpec"),
        ("status", "LocalQueueStatus"),
    ]),
    ("LocalQueueAdmissionFairSharingStatus", &[
        ("consumedResources", ""), ("lastUpdate", ""),
    ]),
    ("LocalQueueFairSharingStatus", &[
        ("admissionFairSharingStatus", "LocalQueueAdmissionFairSharingStatus"),
        ("weightedShare", ""),
    ]),
    ("LocalQueueFlavorStatus", &[
        ("name", ""), ("nodeLabels", ""), ("nodeTaints", ""), ("resources", ""),
        ("topology", "TopologyInfo"),
    ]),
    ("LocalQueueFlavorUsage", &[
        ("name", ""), ("resources", "LocalQueueResourceUsage"),
    ]),
    ("LocalQueueResourceUsage", &[
        ("name", ""), ("total", ""),
    ]),
    ("LocalQueueSpec", &[
        ("clusterQueue", ""), ("fairSharing", "FairSharing"), ("stopPolicy", ""),
    ]),
    ("LocalQueueStatus", &[
        ("admittedWorkloads", ""), ("conditions", ""),
        ("fairSharing", "LocalQueueFairSharingStatus"), ("flavorUsage", "LocalQueueFlavorUsage"),
        ("flavors", "LocalQueueFlavorStatus"), ("flavorsReservation", "LocalQueueFlavorUsage"),
        ("flavorsUsage", "LocalQueueFlavorUsage"), ("pendingWorkloads", ""),
        ("reservingWorkloads", ""),
    ]),
    ("PodSet", &[
        ("count", ""), ("minCount", ""), ("name", ""), ("template", ""),
        ("topologyRequest", "PodSetTopologyRequest"),
    ]),
    ("PodSetAssignment", &[
        ("count", ""), ("delayedTopologyRequest", ""), ("flavors", ""), ("name", ""),
        ("resourceUsage", ""), ("topologyAssignment", "TopologyAssignment"),
    ]),
    ("PodSetRequest", &[
        ("name", ""), ("resources", ""),
    ]),
    ("PodSetTopologyRequest", &[
        ("podIndexLabel", ""), ("podSetGroupName", ""), ("podSetSliceRequiredTopology", ""),
        ("podSetSliceSize", ""),
        ("podsetSliceRequiredTopologyConstraints", "PodsetSliceRequiredTopologyConstraint"),
        ("preferred", ""), ("required", ""), ("subGroupCount", ""), ("subGroupIndexLabel", ""),
        ("unconstrained", ""),
    ]),
    ("PodSetUpdate", &[
        ("annotations", ""), ("labels", ""), ("name", ""), ("nodeSelector", ""),
        ("tolerations", ""),
    ]),
    ("PodsetSliceRequiredTopologyConstraint", &[
        ("size", ""), ("topology", ""),
    ]),
    ("PreemptionGate", &[
        ("name", ""),
    ]),
    ("PreemptionGateState", &[
        ("lastTransitionTime", ""), ("name", ""), ("position", ""),
    ]),
    ("PriorityClassRef", &[
        ("group", ""), ("kind", ""), ("name", ""),
    ]),
    ("ReclaimablePod", &[
        ("count", ""), ("name", ""),
    ]),
    ("RequeueState", &[
        ("count", ""), ("requeueAt", ""),
    ]),
    ("ResourceFlavor", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", ""), ("spec", "ResourceFlavorSpec"),
    ]),
    ("ResourceFlavorSpec", &[
        ("nodeLabels", ""), ("nodeTaints", ""), ("tolerations", ""), ("topologyName", ""),
    ]),
    ("ResourceGroup", &[
        ("coveredResources", ""), ("flavors", "FlavorQuotas"),
    ]),
    ("ResourceQuota", &[
        ("borrowingLimit", ""), ("lendingLimit", ""), ("name", ""), ("nominalQuota", ""),
    ]),
    ("ResourceUsage", &[
        ("borrowed", ""), ("name", ""), ("total", ""),
    ]),
    ("SchedulingStats", &[
        ("evictions", "WorkloadSchedulingStatsEviction"),
    ]),
    ("Topology", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", ""), ("spec", "TopologySpec"),
    ]),
    ("TopologyAssignment", &[
        ("domains", "TopologyDomainAssignment"), ("levels", ""),
        ("slices", "TopologyAssignmentSlice"),
    ]),
    ("TopologyAssignmentSlice", &[
        ("domainCount", ""), ("podCounts", "TopologyAssignmentSlicePodCounts"),
        ("valuesPerLevel", "TopologyAssignmentSliceLevelValues"),
    ]),
    ("TopologyAssignmentSliceLevelIndividualValues", &[
        ("prefix", ""), ("roots", ""), ("suffix", ""),
    ]),
    ("TopologyAssignmentSliceLevelValues", &[
        ("individual", "TopologyAssignmentSliceLevelIndividualValues"), ("universal", ""),
    ]),
    ("TopologyAssignmentSlicePodCounts", &[
        ("individual", ""), ("universal", ""),
    ]),
    ("TopologyDomainAssignment", &[
        ("count", ""), ("values", ""),
    ]),
    ("TopologyInfo", &[
        ("levels", ""), ("name", ""),
    ]),
    ("TopologyLevel", &[
        ("nodeLabel", ""),
    ]),
    ("TopologySpec", &[
        ("levels", "TopologyLevel"),
    ]),
    ("UnhealthyNode", &[
        ("name", ""),
    ]),
    ("Workload", &[
        ("apiVersion", ""), ("kind", ""), ("metadata", ""), ("spec", "WorkloadSpec"),
        ("status", "WorkloadStatus"),
    ]),
    ("WorkloadPriorityClass", &[
        ("apiVersion", ""), ("description", ""), ("kind", ""), ("metadata", ""), ("value", ""),
    ]),
    ("WorkloadSchedulingStatsEviction", &[
        ("count", ""), ("reason", ""), ("underlyingCause", ""),
    ]),
    ("WorkloadSpec", &[
        ("active", ""), ("maximumExecutionTimeSeconds", ""), ("podSets", "PodSet"),
        ("preemptionGates", "PreemptionGate"), ("priority", ""), ("priorityClassName", ""),
        ("priorityClassRef", "PriorityClassRef"), ("priorityClassSource", ""), ("queueName", ""),
    ]),
    ("WorkloadStatus", &[
        ("accumulatedPastExecutionTimeSeconds", ""),
        ("accumulatedPastExexcutionTimeSeconds", ""), ("admission", "Admission"),
        ("admissionChecks", "AdmissionCheckState"), ("clusterName", ""), ("conditions", ""),
        ("nominatedClusterNames", ""), ("preemptionGates", "PreemptionGateState"),
        ("reclaimablePods", "ReclaimablePod"), ("requeueState", "RequeueState"),
        ("resourceRequests", "PodSetRequest"), ("schedulingStats", "SchedulingStats"),
        ("unhealthyNodes", "UnhealthyNode"),
    ]),
    ("config.AdmissionFairSharing", &[
        ("resourceWeights", ""), ("usageHalfLifeTime", ""), ("usageSamplingInterval", ""),
    ]),
    ("config.ClientConnection", &[
        ("burst", ""), ("qps", ""),
    ]),
    ("config.ClusterProfile", &[
        ("accessProviders", "config.ClusterProfileAccessProvider"), ("credentialsProviders", ""),
    ]),
    ("config.ClusterProfileAccessProvider", &[
        ("execConfig", ""), ("name", ""),
    ]),
    ("config.ClusterQueueVisibility", &[
        ("maxCount", ""),
    ]),
    ("config.Configuration", &[
        ("admissionFairSharing", "config.AdmissionFairSharing"), ("apiVersion", ""),
        ("clientConnection", "config.ClientConnection"),
        ("controller", "config.ControllerConfigurationSpec"),
        ("fairSharing", "config.FairSharing"), ("featureGates", ""),
        ("health", "config.ControllerHealth"), ("integrations", "config.Integrations"),
        ("internalCertManagement", "config.InternalCertManagement"), ("kind", ""),
        ("leaderElection", ""), ("manageJobsWithoutQueueName", ""),
        ("managedJobsNamespaceSelector", ""), ("metrics", "config.ControllerMetrics"),
        ("multiKueue", "config.MultiKueue"), ("namespace", ""),
        ("objectRetentionPolicies", "config.ObjectRetentionPolicies"), ("pprofBindAddress", ""),
        ("queueVisibility", "config.QueueVisibility"), ("resources", "config.Resources"),
        ("tls", "config.TLSOptions"),
        ("visibilityServer", "config.VisibilityServerConfiguration"),
        ("waitForPodsReady", "config.WaitForPodsReady"), ("webhook", "config.ControllerWebhook"),
    ]),
    ("config.ControllerConfigurationSpec", &[
        ("cacheSyncTimeout", ""), ("groupKindConcurrency", ""),
    ]),
    ("config.ControllerHealth", &[
        ("healthProbeBindAddress", ""), ("livenessEndpointName", ""),
        ("readinessEndpointName", ""),
    ]),
    ("config.ControllerMetrics", &[
        ("bindAddress", ""), ("customLabels", "config.ControllerMetricsCustomLabel"),
        ("enableClusterQueueResources", ""), ("localQueueMetrics", "config.LocalQueueMetrics"),
    ]),
    ("config.ControllerMetricsCustomLabel", &[
        ("name", ""), ("sourceAnnotationKey", ""), ("sourceKind", ""), ("sourceLabelKey", ""),
        ("trackedValues", ""),
    ]),
    ("config.ControllerWebhook", &[
        ("certDir", ""), ("host", ""), ("port", ""),
    ]),
    ("config.DeviceClassCapacitySource", &[
        ("deviceSelector", ""), ("driver", ""), ("name", ""),
    ]),
    ("config.DeviceClassCounterSource", &[
        ("deviceSelector", ""), ("driver", ""), ("name", ""),
    ]),
    ("config.DeviceClassMapping", &[
        ("deviceClassNames", ""), ("name", ""), ("sources", "config.DeviceClassSourceConfig"),
    ]),
    ("config.DeviceClassSourceConfig", &[
        ("capacity", "config.DeviceClassCapacitySource"),
        ("counter", "config.DeviceClassCounterSource"),
    ]),
    ("config.FairSharing", &[
        ("enable", ""), ("preemptionStrategies", ""),
    ]),
    ("config.IncrementalDispatcherConfig", &[
        ("stepSize", ""),
    ]),
    ("config.Integrations", &[
        ("externalFrameworks", ""), ("frameworks", ""), ("labelKeysToCopy", ""),
        ("podOptions", "config.PodIntegrationOptions"),
    ]),
    ("config.InternalCertManagement", &[
        ("enable", ""), ("webhookSecretName", ""), ("webhookServiceName", ""),
    ]),
    ("config.LocalQueueMetrics", &[
        ("enable", ""), ("localQueueSelector", ""),
    ]),
    ("config.MultiKueue", &[
        ("clusterProfile", "config.ClusterProfile"), ("dispatcherName", ""),
        ("externalFrameworks", "config.MultiKueueExternalFramework"), ("gcInterval", ""),
        ("incrementalDispatcherConfig", "config.IncrementalDispatcherConfig"), ("origin", ""),
        ("workerLostTimeout", ""),
    ]),
    ("config.MultiKueueExternalFramework", &[
        ("name", ""),
    ]),
    ("config.ObjectRetentionPolicies", &[
        ("workloads", "config.WorkloadRetentionPolicy"),
    ]),
    ("config.PodIntegrationOptions", &[
        ("namespaceSelector", ""), ("podSelector", ""),
    ]),
    ("config.QueueVisibility", &[
        ("clusterQueues", "config.ClusterQueueVisibility"), ("updateIntervalSeconds", ""),
    ]),
    ("config.RequeuingStrategy", &[
        ("backoffBaseSeconds", ""), ("backoffLimitCount", ""), ("backoffMaxSeconds", ""),
        ("timestamp", ""),
    ]),
    ("config.ResourceTransformation", &[
        ("input", ""), ("multiplyBy", ""), ("outputs", ""), ("strategy", ""),
    ]),
    ("config.Resources", &[
        ("deviceClassMappings", "config.DeviceClassMapping"), ("excludeResourcePrefixes", ""),
        ("quotaCheckStrategy", ""), ("transformations", "config.ResourceTransformation"),
    ]),
    ("config.TLSOptions", &[
        ("cipherSuites", ""), ("curvePreferences", ""), ("minVersion", ""),
    ]),
    ("config.VisibilityServerConfiguration", &[
        ("bindAddress", ""), ("bindPort", ""),
    ]),
    ("config.WaitForPodsReady", &[
        ("blockAdmission", ""), ("enable", ""), ("recoveryTimeout", ""),
        ("requeuingStrategy", "config.RequeuingStrategy"), ("timeout", ""),
    ]),
    ("config.WorkloadRetentionPolicy", &[
        ("afterDeactivatedByKueue", ""), ("afterFinished", ""),
    ]),
];

#[cfg(test)]
mod tests {
    use super::{TYPES, may_have_unknown_field};

    #[test]
    fn the_prefilter_never_misses_a_key() {
        for text in [
            "spec: {nominalQouta: 1}",
            "spec:\n  x: 1",
            "\"spec\":{\"x\":1}",
            "spec: {'x': 1}",
            "metadata: {labels: {kueue.x-k8s.io/queue-nme: a}}",
            "? spec\n: 1",
        ] {
            assert!(
                may_have_unknown_field(text, None, "ClusterQueue"),
                "{text:?}"
            );
        }
        let cq = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  cohortName: c\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{name: f, resources: [{name: cpu, nominalQuota: 1}]}]\n";
        assert!(!may_have_unknown_field(cq, None, "ClusterQueue"));
        assert!(!may_have_unknown_field(cq, Some("v1beta2"), "ClusterQueue"));
        // v1beta1 names the cohort `cohort`: its `cohortName` is the other version's.
        assert!(may_have_unknown_field(cq, Some("v1beta1"), "ClusterQueue"));
        let old = cq.replace("cohortName", "cohort");
        assert!(!may_have_unknown_field(
            &old,
            Some("v1beta1"),
            "ClusterQueue"
        ));
        assert!(may_have_unknown_field(
            &old,
            Some("v1beta2"),
            "ClusterQueue"
        ));
    }

    #[test]
    fn version_only_fields_are_fields_of_the_table() {
        for o in super::VERSION_ONLY {
            let fields = super::fields_of(o.ty).unwrap_or_else(|| panic!("{}", o.ty));
            assert!(
                fields.iter().any(|(f, _)| *f == o.field),
                "{}.{}",
                o.ty,
                o.field
            );
            assert!(matches!(o.version, "v1beta1" | "v1beta2"));
        }
        // Per root: `flavors` (v1beta1's LocalQueue status) is scanned for in LocalQueues
        // only, not in every ClusterQueue's resource groups; `admissionChecks` in
        // ClusterQueues, where v1beta1's spec has it.
        let cq = super::other_version_names("v1beta2", "ClusterQueue");
        assert!(
            cq.contains(&"cohort") && cq.contains(&"admissionChecks"),
            "{cq:?}"
        );
        assert!(!cq.contains(&"flavors"), "{cq:?}");
        let lq = super::other_version_names("v1beta2", "LocalQueue");
        assert!(
            lq.contains(&"flavors") && lq.contains(&"flavorUsage"),
            "{lq:?}"
        );
        assert!(super::other_version_names("v1beta2", "Workload").contains(&"priorityClassName"));
        assert!(super::other_version_names("v1beta1", "ClusterQueue").contains(&"cohortName"));
        for (group, kind, root) in super::ROOTS {
            assert!(super::fields_of(root).is_some(), "{root}");
            assert_eq!(super::root_type(group, kind), Some(root));
        }
    }

    #[test]
    fn types_are_sorted_and_every_child_is_a_type() {
        assert!(TYPES.windows(2).all(|w| w[0].0 < w[1].0));
        for (name, fields) in TYPES {
            for (f, child) in *fields {
                let child = child.strip_prefix("MAP:").unwrap_or(child);
                assert!(
                    child.is_empty() || super::fields_of(child).is_some(),
                    "{name}.{f}: {child}"
                );
            }
        }
    }
}
