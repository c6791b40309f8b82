//! A living cluster's settings: `Simulation.spec.failures` and the Timeline kind.

use super::*;

// ---- a living cluster: Timeline, failures -------------------------------------------------

/// `spec.failures`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct FailureSettings {
    /// Node failures (every node, or those of `pools` / `selector`).
    pub nodes: Option<Spanned<NodeFailureSettings>>,
    /// GPU failures.
    pub gpus: Option<Spanned<NodeFailureSettings>>,
}

/// `spec.failures.nodes` or `.gpus`: when a node (a GPU) fails and how long its repair takes,
/// on which nodes.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct NodeFailureSettings {
    /// Time between failures of one node (one GPU): a duration (an exponential's mean) or a
    /// WorkloadGenerator distribution.
    pub mtbf: Option<Spanned<DistOrDuration>>,
    /// Time to repair: the same forms.
    pub repair: Option<Spanned<DistOrDuration>>,
    /// Only the nodes of these NodePools.
    pub pools: Vec<S>,
    /// Only the nodes this selector matches.
    pub selector: Option<Spanned<LabelSelector>>,
}

/// A duration written alone (the mean of an exponential distribution) or a WorkloadGenerator
/// distribution (`fixed`, `uniform`, `logNormal`, `empirical`).
#[derive(Debug)]
pub enum DistOrDuration {
    Duration(String),
    /// Boxed: a distribution's settings are large, and a duration is the common case.
    Dist(Box<GenDist>),
}

impl<'de> Deserialize<'de> for DistOrDuration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = DistOrDuration;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a duration (e.g. 8000h) or a distribution (fixed, uniform, logNormal, empirical)",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<DistOrDuration, E> {
                Ok(DistOrDuration::Duration(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<DistOrDuration, A::Error> {
                GenDist::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(|g| DistOrDuration::Dist(Box::new(g)))
            }
        }
        d.deserialize_any(V)
    }
}

/// `kueuesim.io/v1alpha1` Timeline.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Timeline {
    pub metadata: ObjectMeta,
    pub spec: TimelineSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct TimelineSpec {
    pub changes: Vec<Spanned<TimelineChange>>,
}

/// One change: at an offset, `--set` expressions, strategic-merge patches, node operations.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct TimelineChange {
    pub at: Option<S>,
    pub set: Vec<S>,
    /// Objects merged as `--patch` merges them (read from the object's text with positions,
    /// by the overlay).
    pub patch: Option<Spanned<serde::de::IgnoredAny>>,
    pub nodes: Option<Spanned<TimelineNodes>>,
}

/// A change's node operations, each on nodes by name or by selector.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct TimelineNodes {
    pub cordon: Option<Spanned<NodeTargets>>,
    pub uncordon: Option<Spanned<NodeTargets>>,
    pub drain: Option<Spanned<NodeTargets>>,
    pub remove: Option<Spanned<NodeTargets>>,
}

/// Nodes by name (a list) or by label selector (`matchLabels`, `matchExpressions`).
#[derive(Debug)]
pub enum NodeTargets {
    Names(Vec<S>),
    Selector(LabelSelector),
}

impl<'de> Deserialize<'de> for NodeTargets {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = NodeTargets;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a list of node names or a label selector (matchLabels, matchExpressions)",
                )
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<NodeTargets, A::Error> {
                let mut names = Vec::new();
                while let Some(n) = seq.next_element::<S>()? {
                    names.push(n);
                }
                Ok(NodeTargets::Names(names))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<NodeTargets, A::Error> {
                #[derive(Deserialize)]
                #[serde(rename_all = "camelCase", deny_unknown_fields, default)]
                #[derive(Default)]
                struct Strict {
                    match_labels: Keyed<String>,
                    match_expressions: Vec<SelectorRequirement>,
                }
                let s = Strict::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(NodeTargets::Selector(LabelSelector {
                    match_labels: s.match_labels,
                    match_expressions: s.match_expressions,
                }))
            }
        }
        d.deserialize_any(V)
    }
}
