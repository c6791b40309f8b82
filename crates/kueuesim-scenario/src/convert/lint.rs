//! Lint for likely typos (issue 17 item 3): label and annotation keys under the prefixes of
//! Kueue, kueuesim, KAI and Volcano that nothing knows, and fields of Kueue's kinds that
//! neither API version has (`kueue_fields`), each a warning naming the closest known key or
//! field, an error with `--strict`.
//!
//! Positions come from the overlay's position-keeping tree (`overlay::tree::parse_mapped`
//! with the object's line map), which maps a place in an object's text exactly as
//! `ObjectText::pos` does, so an object changed by `--patch` or `--set` points into the patch
//! or argument that wrote the key.

use std::collections::BTreeMap;

use crate::error::{Pos, ScenarioError};
use crate::overlay::tree::{Node, Value, parse_mapped};
use crate::source::ObjectText;

use super::kueue_fields::{
    Problem, UnknownField, may_have_unknown_field, root_type, unknown_fields,
};

/// The prefixes (domains) whose label and annotation keys are linted. `volcano.sh/` is also
/// the end of other Volcano domains (`batch.volcano.sh/`, `topology.volcano.sh/`): those are
/// not linted, the domain must be one of these exactly.
const DOMAINS: &[&str] = &[
    "kai.scheduler",
    "kueue.x-k8s.io",
    "kueuesim.io",
    "scheduling.volcano.sh",
    "volcano.sh",
];

/// Every key under `DOMAINS` that is known, sorted: the ones the loader reads
/// (`convert::core` constants, `convert/jobs`, `convert/gang.rs`, `convert/workload.rs`, the
/// trace adapters' `kueuesim.io/gpu-model` and `kueuesim.io/gpu-milli`) and the ones a real
/// cluster's objects carry that the simulator deliberately ignores: the label, annotation and
/// finalizer names of kueue `pkg/controller/constants`, `pkg/controller/jobframework`,
/// `pkg/controller/jobs/*` and `apis/kueue/*/constants.go`, of Volcano's `pkg/` and
/// `volcano.sh/apis` (`scheduling/v1beta1` and `batch/v1alpha1` label keys), and of KAI
/// Scheduler's `pkg/common/constants` (read off kueue ff69552e, volcano ed72c7c8 and
/// KAI-Scheduler 72de64fc), so that `kubectl get -o yaml` dumps load without warnings. One key
/// no upstream defines is known too: `kai.scheduler/enabled`, the label the reference
/// platform's guide puts on KAI jobs (KAI itself picks its jobs by `schedulerName`), so that
/// a scenario written from that guide loads without warnings.
#[rustfmt::skip]
const KNOWN_KEYS: &[&str] = &[
    "kai.scheduler/accounting", "kai.scheduler/enabled", "kai.scheduler/last-start-timestamp", "kai.scheduler/node-pool",
    "kai.scheduler/preemptibility", "kai.scheduler/queue", "kai.scheduler/segment-size",
    "kai.scheduler/segment-topology-preferred-placement",
    "kai.scheduler/segment-topology-required-placement", "kai.scheduler/stale-podgroup-timestamp",
    "kai.scheduler/subgroup-name", "kai.scheduler/task-priority", "kai.scheduler/top-owner-metadata",
    "kai.scheduler/topology", "kai.scheduler/topology-preferred-placement",
    "kai.scheduler/topology-required-placement", "kai.scheduler/type",
    "kueue.x-k8s.io/admission", "kueue.x-k8s.io/admission-gated-by",
    "kueue.x-k8s.io/auto-generated", "kueue.x-k8s.io/cluster-queue-name",
    "kueue.x-k8s.io/component-workload-index", "kueue.x-k8s.io/concurrent-admission",
    "kueue.x-k8s.io/concurrent-admission-parent", "kueue.x-k8s.io/elastic-job",
    "kueue.x-k8s.io/is-group-workload", "kueue.x-k8s.io/job-completions-equal-parallelism",
    "kueue.x-k8s.io/job-min-parallelism", "kueue.x-k8s.io/job-owner-gvk",
    "kueue.x-k8s.io/job-owner-name", "kueue.x-k8s.io/job-uid", "kueue.x-k8s.io/local-queue-name",
    "kueue.x-k8s.io/managed", "kueue.x-k8s.io/manager", "kueue.x-k8s.io/max-exec-time-seconds",
    "kueue.x-k8s.io/multikueue", "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
    "kueue.x-k8s.io/multikueue-dispatcher-incremental", "kueue.x-k8s.io/multikueue-origin",
    "kueue.x-k8s.io/multikueue-origin-uid", "kueue.x-k8s.io/multikueue-worker-workload-pod",
    "kueue.x-k8s.io/pod-group-fast-admission", "kueue.x-k8s.io/pod-group-name",
    "kueue.x-k8s.io/pod-group-pod-index", "kueue.x-k8s.io/pod-group-pod-index-label",
    "kueue.x-k8s.io/pod-group-serving", "kueue.x-k8s.io/pod-group-total-count",
    "kueue.x-k8s.io/pod-index-offset", "kueue.x-k8s.io/pod-suspending-parent",
    "kueue.x-k8s.io/podset", "kueue.x-k8s.io/podset-group-name",
    "kueue.x-k8s.io/podset-preferred-topology", "kueue.x-k8s.io/podset-required-topology",
    "kueue.x-k8s.io/podset-slice-required-topology",
    "kueue.x-k8s.io/podset-slice-required-topology-constraints",
    "kueue.x-k8s.io/podset-slice-size", "kueue.x-k8s.io/podset-unconstrained-topology",
    "kueue.x-k8s.io/prebuilt-workload-name", "kueue.x-k8s.io/priority-boost",
    "kueue.x-k8s.io/priority-class", "kueue.x-k8s.io/provisioning-request",
    "kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/raycluster-generation",
    "kueue.x-k8s.io/raycluster-podset-replica-sizes", "kueue.x-k8s.io/resource-in-use",
    "kueue.x-k8s.io/retriable-in-group", "kueue.x-k8s.io/role-hash",
    "kueue.x-k8s.io/safe-to-forcefully-delete", "kueue.x-k8s.io/stopping",
    "kueue.x-k8s.io/topology", "kueue.x-k8s.io/workload",
    "kueue.x-k8s.io/workload-allowed-resource-flavors", "kueue.x-k8s.io/workload-slice-name",
    "kueue.x-k8s.io/workload-slice-replacement-for", "kueue.x-k8s.io/workloadpriorityclass",
    "kueuesim.io/arrival", "kueuesim.io/bound-nodes", "kueuesim.io/checkpoint-interval",
    "kueuesim.io/duration", "kueuesim.io/gpu-milli", "kueuesim.io/gpu-model",
    "kueuesim.io/load", "kueuesim.io/load-per-replica", "kueuesim.io/load-trace",
    "kueuesim.io/max-replicas", "kueuesim.io/min-replicas",
    "kueuesim.io/network-topology-highest-tier-name", "kueuesim.io/remaining",
    "kueuesim.io/replicas", "kueuesim.io/restart-cost", "kueuesim.io/scale-down-stabilization",
    "kueuesim.io/scale-up-stabilization",
    "scheduling.volcano.sh/group-min-member", "scheduling.volcano.sh/group-name",
    "scheduling.volcano.sh/queue-allocation-gate", "scheduling.volcano.sh/queue-name",
    "volcano.sh/bind-phase", "volcano.sh/bind-time", "volcano.sh/burst-name",
    "volcano.sh/closed-by-parent", "volcano.sh/colocation", "volcano.sh/colocation-config",
    "volcano.sh/colocation-config-name", "volcano.sh/controller-out-of-sync",
    "volcano.sh/cooldown-time", "volcano.sh/createdByJobFlow", "volcano.sh/createdByJobTemplate",
    "volcano.sh/cronjob-scheduled-timestamp", "volcano.sh/devices-to-allocate",
    "volcano.sh/enable-quota-burst", "volcano.sh/evicting-cpu-high-watermark",
    "volcano.sh/evicting-cpu-low-watermark", "volcano.sh/evicting-memory-high-watermark",
    "volcano.sh/evicting-memory-low-watermark", "volcano.sh/forward-cluster",
    "volcano.sh/gpu-index", "volcano.sh/gpu-memory", "volcano.sh/gpu-number",
    "volcano.sh/gpu-unhealthy-ids", "volcano.sh/hierarchy", "volcano.sh/hierarchy-weights",
    "volcano.sh/hypercluster", "volcano.sh/hypernode", "volcano.sh/jdb-max-unavailable",
    "volcano.sh/jdb-min-available", "volcano.sh/job-allocated-hypernode",
    "volcano.sh/job-forwarding", "volcano.sh/job-name", "volcano.sh/job-namespace",
    "volcano.sh/job-retry-count", "volcano.sh/job-type", "volcano.sh/job-version",
    "volcano.sh/network-bandwidth-rate", "volcano.sh/network-topology-highest-tier",
    "volcano.sh/network-topology-mode", "volcano.sh/network-topology-source",
    "volcano.sh/node-vgpu-register", "volcano.sh/nodegroup-name",
    "volcano.sh/nodegroup-resource-limits", "volcano.sh/numa-topology-policy",
    "volcano.sh/offline-job-evicting", "volcano.sh/oversubscription",
    "volcano.sh/oversubscription-cpu", "volcano.sh/oversubscription-evicting-cpu-high-watermark",
    "volcano.sh/oversubscription-evicting-cpu-low-watermark",
    "volcano.sh/oversubscription-evicting-memory-high-watermark",
    "volcano.sh/oversubscription-evicting-memory-low-watermark",
    "volcano.sh/oversubscription-memory", "volcano.sh/oversubscription-types",
    "volcano.sh/partition-id", "volcano.sh/predicate-time", "volcano.sh/preemptable",
    "volcano.sh/qos-level", "volcano.sh/queue-name", "volcano.sh/quota-burst-time",
    "volcano.sh/resource-group", "volcano.sh/resource-strategy-scoring-type",
    "volcano.sh/resource-strategy-weight", "volcano.sh/revocable-zone",
    "volcano.sh/scheduling-priority", "volcano.sh/scheduling-priority-reason",
    "volcano.sh/scheduling-priority-timestamp", "volcano.sh/silo-resource",
    "volcano.sh/sla-waiting-time", "volcano.sh/task-index", "volcano.sh/task-priority",
    "volcano.sh/task-spec", "volcano.sh/task-topology", "volcano.sh/task-topology-affinity",
    "volcano.sh/task-topology-anti-affinity", "volcano.sh/task-topology-task-order",
    "volcano.sh/template-uid", "volcano.sh/topology-decision", "volcano.sh/tor",
    "volcano.sh/vgpu-cores", "volcano.sh/vgpu-ids-new", "volcano.sh/vgpu-memory",
    "volcano.sh/vgpu-memory-percentage", "volcano.sh/vgpu-mode", "volcano.sh/vgpu-node",
    "volcano.sh/vgpu-nouse-gpuuuid", "volcano.sh/vgpu-number", "volcano.sh/vgpu-podgroup-policy",
    "volcano.sh/vgpu-time", "volcano.sh/vgpu-use-gpuuuid",
];

fn is_known(key: &str) -> bool {
    KNOWN_KEYS.binary_search(&key).is_ok()
}

/// The linted domain of `key` (`kueue.x-k8s.io` of `kueue.x-k8s.io/queue-name`), if any.
fn linted_domain(key: &str) -> Option<&str> {
    let (domain, _) = key.split_once('/')?;
    DOMAINS.contains(&domain).then_some(domain)
}

/// Levenshtein distance (by chars).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The candidate closest to `word` by edit distance (the first of equals).
pub(super) fn closest<'c>(
    word: &str,
    candidates: impl Iterator<Item = &'c str>,
) -> Option<&'c str> {
    candidates.min_by_key(|c| distance(word, c))
}

/// Whether objects of `kind` in `group` are Kueue kinds whose fields are checked.
pub(super) fn is_kueue_kind(group: &str, kind: &str) -> bool {
    root_type(group, kind).is_some()
}

/// One lint finding, in document order.
struct Finding<'f> {
    pos: Pos,
    frame: &'f str,
    message: String,
    /// A label or annotation key (warnings are folded per key).
    key: Option<String>,
    /// A label: not a finding if some selector of the input names the key.
    label: bool,
    /// What the loader does with it, said after the message: "ignored", or a field of the
    /// other API version that it reads all the same.
    outcome: &'static str,
}

/// The lint over every object the loader reads.
#[derive(Default)]
pub(super) struct Lint<'f> {
    findings: Vec<Finding<'f>>,
    /// Label keys that selectors of the input name (ResourceFlavor `nodeLabels`, pod
    /// `nodeSelector`, Topology `nodeLabel`, `matchLabels`, `matchExpressions[].key`, Volcano
    /// `matchLabelKeys`, affinity `topologyKey`): a label under a linted domain that one of
    /// them names is the user's own (the node label `kueuesim.io/pool` of
    /// scenarios/kueue-perf/tas.yaml, the pod label `volcano.sh/task-instance` a Volcano
    /// subGroupPolicy selects in scenarios/placement/V18-…), not a typo.
    selector_keys: Vec<String>,
}

impl<'f> Lint<'f> {
    /// Lints one object of a kind the loader reads: its label and annotation keys and, for
    /// Kueue's kinds, its fields. Only objects whose text may hold a finding are parsed into a
    /// tree (a Kueue object with a key that is no Kueue field name, any other with a key
    /// under a linted domain that is not known); the others cost a text scan.
    /// With `strict`, an unknown field of a Kueue kind is an error right away (a label key
    /// waits for `finish`: a Node label may be named by a selector further on).
    pub(super) fn object(
        &mut self,
        src: &ObjectText<'f>,
        group: &str,
        strict: bool,
    ) -> Result<(), ScenarioError> {
        let root = root_type(group, &src.kind);
        // The API version, for the fields only the other one has (Kueue's kinds; the
        // Configuration's versions are not told apart).
        let version = src
            .api_version
            .strip_prefix("kueue.x-k8s.io/")
            .filter(|v| matches!(*v, "v1beta1" | "v1beta2"));
        let may = match root {
            // A Topology level's `nodeLabel` under a linted domain is a value, not a key: the
            // second scan sees it, so that the selector keys are complete.
            Some(ty) => {
                may_have_unknown_field(&src.text, version, ty) || may_have_unknown_key(&src.text)
            }
            None => may_have_unknown_key(&src.text),
        };
        if !may {
            return Ok(());
        }
        let tree = parse_mapped(src.file, &src.text, src.line_offset, src.origins.as_deref())?;
        if let Some(ty) = root {
            let api = api_of(group);
            for u in unknown_fields(&tree, ty, version) {
                let pos = u.at.pos();
                let (message, outcome) = field_message(&src.kind, &src.api_version, api, &u);
                self.findings.push(Finding {
                    frame: u.at.file.text.as_str(),
                    message,
                    pos,
                    key: None,
                    label: false,
                    outcome,
                });
            }
            if strict && let Some(f) = self.findings.iter().find(|f| f.key.is_none()) {
                return Err(ScenarioError::at(
                    f.pos.clone(),
                    format!("{} (--strict)", f.message),
                    f.frame,
                ));
            }
        }
        self.keys(&tree);
        Ok(())
    }

    /// Walks `node` for `metadata.labels` and `metadata.annotations` at any depth (pod
    /// templates included) and for keys that selectors name.
    fn keys(&mut self, node: &Node<'f>) {
        match &node.value {
            Value::Seq(items) => items.iter().for_each(|i| self.keys(i)),
            Value::Scalar(_) => {}
            Value::Map(entries) => {
                for e in entries {
                    match (e.key.as_str(), &e.value.value) {
                        ("metadata", Value::Map(meta)) => {
                            for m in meta {
                                let what = match m.key.as_str() {
                                    "labels" => "label",
                                    "annotations" => "annotation",
                                    _ => continue,
                                };
                                let Value::Map(keys) = &m.value.value else {
                                    continue;
                                };
                                for k in keys {
                                    self.key(&k.key, what, k.key_at);
                                }
                            }
                        }
                        ("nodeLabels" | "nodeSelector" | "matchLabels", Value::Map(m)) => {
                            self.selector_keys.extend(m.iter().map(|k| k.key.clone()));
                        }
                        ("nodeLabel" | "key" | "topologyKey", Value::Scalar(s)) => {
                            self.selector_keys.push(s.as_text())
                        }
                        ("matchLabelKeys" | "mismatchLabelKeys", Value::Seq(items)) => {
                            for i in items {
                                if let Value::Scalar(s) = &i.value {
                                    self.selector_keys.push(s.as_text());
                                }
                            }
                        }
                        _ => {}
                    }
                    self.keys(&e.value);
                }
            }
        }
    }

    fn key(&mut self, key: &str, what: &'static str, at: crate::overlay::tree::Origin<'f>) {
        let Some(domain) = linted_domain(key) else {
            return;
        };
        if is_known(key) {
            return;
        }
        let same_domain = KNOWN_KEYS
            .iter()
            .copied()
            .filter(|k| linted_domain(k) == Some(domain));
        let closest = closest(key, same_domain).unwrap_or("");
        self.findings.push(Finding {
            pos: at.pos(),
            frame: at.file.text.as_str(),
            message: format!(
                "{what} {} is neither read by the simulator nor a known Kueue, KAI or Volcano key (closest: {closest})",
                kueuesim_model::names::escaped(key)
            ),
            key: Some(key.to_string()),
            label: what == "label",
            outcome: "ignored",
        });
    }

    /// The findings as warnings (label and annotation keys folded: the first place and how
    /// many more), or with `strict` the first as an error.
    pub(super) fn finish(
        self,
        strict: bool,
        warnings: &mut Vec<String>,
    ) -> Result<(), ScenarioError> {
        let selector_keys = self.selector_keys;
        let findings: Vec<Finding<'f>> = self
            .findings
            .into_iter()
            .filter(|f| !(f.label && f.key.as_ref().is_some_and(|k| selector_keys.contains(k))))
            .collect();
        if strict && let Some(f) = findings.first() {
            return Err(ScenarioError::at(
                f.pos.clone(),
                format!("{} (--strict)", f.message),
                f.frame,
            ));
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for f in &findings {
            if let Some(k) = &f.key {
                *counts.entry(k).or_default() += 1;
            }
        }
        for f in &findings {
            match &f.key {
                None => warnings.push(format!("{}: {}; {}", f.pos, f.message, f.outcome)),
                Some(k) => {
                    // The first place of each key only.
                    let Some(n) = counts.remove(k.as_str()) else {
                        continue;
                    };
                    let more = if n > 1 {
                        format!(" (and {} more)", n - 1)
                    } else {
                        String::new()
                    };
                    warnings.push(format!("{}: {}; {}{more}", f.pos, f.message, f.outcome));
                }
            }
        }
        Ok(())
    }
}

/// The API group a finding names: Kueue's, or its Configuration's.
fn api_of(group: &str) -> &'static str {
    if group == "kueue.x-k8s.io" {
        "kueue.x-k8s.io"
    } else {
        "config.kueue.x-k8s.io"
    }
}

/// What is wrong with an unknown field of an object of `kind` in `api_version` (`api`: its
/// group as `api_of` names it), and what the loader does with it: `ignored`, or `read all
/// the same` (a field of the other API version that the loader reads).
fn field_message(
    kind: &str,
    api_version: &str,
    api: &str,
    u: &UnknownField<'_>,
) -> (String, &'static str) {
    match u.problem {
        Problem::Unknown { closest } => (
            format!(
                "{kind} field {} is not a field of {api} v1beta1 or v1beta2{}",
                u.path,
                closest.map_or(String::new(), |c| format!(" (closest: {c})"))
            ),
            "ignored",
        ),
        Problem::OtherVersion(o) => (
            format!(
                "{kind} field {} is a field of {api}/{}, not of {api_version} (an API server \
                 refuses it under strict field validation, kubectl's default){}",
                u.path,
                o.version,
                if o.instead.is_empty() {
                    String::new()
                } else {
                    format!("; {api_version} writes {}", o.instead)
                }
            ),
            if o.read {
                "read all the same"
            } else {
                "ignored"
            },
        ),
    }
}

/// Strict field validation of an override, as an API server applies it to a request under
/// kubectl's default `--validate=strict` (`fieldValidation=Strict`): the first field of a
/// Kueue kind that `written_by` (a `--patch` file or a `--set` argument) wrote into `tree`
/// (the whole object after the override) and that the kind does not have, or whose value
/// the loader would ignore (a field of the other API version it does not read), is an
/// error at that place of the override; so is a field of the Kubernetes kinds of
/// `kube_fields` that upstream does not declare, and an annotation key under a linted
/// domain that nothing knows. A scenario file's own unknown fields stay warnings (`Lint`): a what-if
/// that silently changes nothing would print the baseline's figures as the variant's.
pub(crate) fn check_override(
    tree: &Node<'_>,
    api_version: &str,
    kind: &str,
    written_by: &crate::source::SourceFile,
) -> Result<(), ScenarioError> {
    let by_override = |at: &crate::overlay::tree::Origin<'_>| std::ptr::eq(at.file, written_by);
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    if let Some(ty) = root_type(group, kind) {
        let version = api_version
            .strip_prefix("kueue.x-k8s.io/")
            .filter(|v| matches!(*v, "v1beta1" | "v1beta2"));
        for u in unknown_fields(tree, ty, version) {
            if !by_override(&u.at) {
                continue;
            }
            let (message, outcome) = field_message(kind, api_version, api_of(group), &u);
            if outcome == "ignored" {
                return Err(u.at.error(format!("{message}{STRICT}")));
            }
        }
    }
    if let Some(ty) = super::kube_fields::root_type(group, kind) {
        let unknown = super::kube_fields::unknown_fields(tree, ty);
        if let Some(u) = unknown.into_iter().find(|u| by_override(&u.at)) {
            return Err(u.at.error(format!(
                "{kind} field {} is not a field of {api_version} {kind}{}{STRICT}",
                u.path,
                u.closest
                    .map_or(String::new(), |c| format!(" (closest: {c})"))
            )));
        }
    }
    let mut bad = None;
    annotation_keys(tree, &mut |key, at| {
        if bad.is_none()
            && by_override(&at)
            && let Some(domain) = linted_domain(key)
            && !is_known(key)
        {
            let same = KNOWN_KEYS
                .iter()
                .copied()
                .filter(|k| linted_domain(k) == Some(domain));
            let hint = closest(key, same).map_or(String::new(), |c| format!(" (closest: {c})"));
            bad = Some(at.error(format!(
                "annotation {key} is neither read by the simulator nor a known Kueue, KAI or \
                 Volcano key{hint}{STRICT}"
            )));
        }
    });
    bad.map_or(Ok(()), Err)
}

/// What an override's unknown field is told, after what is wrong with it.
const STRICT: &str =
    "; an override must name a field the kind has (strict field validation, kubectl's default)";

/// Every `metadata.annotations` key of `node`, at any depth (pod templates included).
fn annotation_keys<'f>(
    node: &Node<'f>,
    f: &mut impl FnMut(&str, crate::overlay::tree::Origin<'f>),
) {
    match &node.value {
        Value::Scalar(_) => {}
        Value::Seq(items) => items.iter().for_each(|i| annotation_keys(i, f)),
        Value::Map(entries) => {
            for e in entries {
                if e.key == "metadata"
                    && let Some(Value::Map(keys)) = e.value.get("annotations").map(|a| &a.value)
                {
                    for k in keys {
                        f(&k.key, k.key_at);
                    }
                }
                annotation_keys(&e.value, f);
            }
        }
    }
}

/// Whether `text` names a key under a linted domain that is not known (a cheap scan that may
/// say yes for a value, never no for a key written plainly or quoted without escapes; an
/// escape makes it say yes).
fn may_have_unknown_key(text: &str) -> bool {
    let b = text.as_bytes();
    let key_char = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'/');
    for needle in [
        "kueue.x-k8s.io/",
        "kueuesim.io/",
        "kai.scheduler/",
        "volcano.sh/",
    ] {
        for (i, _) in text.match_indices(needle) {
            let mut start = i;
            while start > 0
                && (b[start - 1].is_ascii_alphanumeric() || matches!(b[start - 1], b'.' | b'-'))
            {
                start -= 1;
            }
            let mut end = i + needle.len();
            while end < b.len() && key_char(b[end]) {
                end += 1;
            }
            let word = &text[start..end];
            if linted_domain(word).is_none() || is_known(word) {
                continue;
            }
            // An apiVersion (`kueue.x-k8s.io/v1beta2`) is not a key.
            let name = &word[word.find('/').map_or(0, |s| s + 1)..];
            if name.starts_with('v') && name[1..].starts_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            return true;
        }
    }
    text.contains('\\')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_keys_are_sorted_and_linted() {
        assert!(KNOWN_KEYS.windows(2).all(|w| w[0] < w[1]));
        assert!(KNOWN_KEYS.iter().all(|k| linted_domain(k).is_some()));
        for k in [
            super::super::QUEUE_LABEL,
            super::super::PRIORITY_CLASS_LABEL,
            super::super::DURATION_ANNOTATION,
            super::super::REMAINING_ANNOTATION,
            super::super::ARRIVAL_ANNOTATION,
            crate::trace::GPU_MODEL_LABEL,
            crate::trace::GPU_MILLI,
        ] {
            assert!(is_known(k), "{k}");
        }
    }

    #[test]
    fn closest_and_prefilter() {
        assert_eq!(
            closest("kueue.x-k8s.io/queue-nme", KNOWN_KEYS.iter().copied()),
            Some("kueue.x-k8s.io/queue-name")
        );
        assert!(!may_have_unknown_key(
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {labels: {kueue.x-k8s.io/queue-name: a}}"
        ));
        assert!(!may_have_unknown_key(
            "apiVersion: batch.volcano.sh/v1alpha1\n  topology.kueuesim.io/rack: r"
        ));
        assert!(may_have_unknown_key("labels: {kueuesim.io/duraton: 1h}"));
        assert!(may_have_unknown_key(
            "labels: {\"kueue.x-k8s.io/queue-nme\": a}"
        ));
    }
}
