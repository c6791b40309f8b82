//! Labels, label selectors, taints and tolerations, with Kubernetes' matching rules.

/// A set of labels, kept sorted by key so lookups are a binary search and iteration is ordered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels(Vec<(String, String)>);

impl Labels {
    /// Builds a label set; a later duplicate key replaces an earlier one, as in a YAML map.
    pub fn new(mut pairs: Vec<(String, String)>) -> Self {
        // Stable sort keeps document order among equal keys, then `dedup_by` keeps the last.
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(String, String)> = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = v,
                _ => out.push((k, v)),
            }
        }
        Labels(out)
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| self.0[i].1.as_str())
    }

    /// All pairs, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether there are no labels.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether every pair of `required` is present here with the same value (a nodeSelector).
    pub fn contains_all(&self, required: &Labels) -> bool {
        required.iter().all(|(k, v)| self.get(k) == Some(v))
    }
}

/// The operator of a label selector requirement (`matchExpressions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectorOp {
    /// The label's value is one of the values.
    In,
    /// The label is absent or its value is none of the values.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

/// One `matchExpressions` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectorRequirement {
    /// The label key.
    pub key: String,
    /// How the key's value is tested.
    pub op: SelectorOp,
    /// The values for `In` and `NotIn`.
    pub values: Vec<String>,
}

/// A Kubernetes label selector (`matchLabels` and `matchExpressions`, ANDed).
///
/// The empty selector matches everything; "no selector at all" is modelled by the caller as
/// `Option::None` because Kueue gives nil and `{}` different meanings (namespaceSelector).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// Exact key/value pairs.
    pub match_labels: Labels,
    /// Set-based requirements.
    pub match_expressions: Vec<SelectorRequirement>,
}

impl LabelSelector {
    /// Whether this selector has no requirement, so it selects everything (`{}`).
    pub fn selects_everything(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    /// Whether `labels` satisfy every requirement of this selector.
    pub fn matches(&self, labels: &Labels) -> bool {
        labels.contains_all(&self.match_labels)
            && self.match_expressions.iter().all(|r| {
                let v = labels.get(&r.key);
                match r.op {
                    SelectorOp::In => v.is_some_and(|v| r.values.iter().any(|x| x == v)),
                    SelectorOp::NotIn => v.is_none_or(|v| r.values.iter().all(|x| x != v)),
                    SelectorOp::Exists => v.is_some(),
                    SelectorOp::DoesNotExist => v.is_none(),
                }
            })
    }
}

/// The prefix of the node labels the loader gives the nodes a pod's required node affinity
/// matches (`kueuesim.io/node-affinity-<digest>: "true"`, which the pod then selects): the
/// nodes never change, so an affinity is a nodeSelector on them. Views leave them out.
pub const NODE_AFFINITY_LABEL_PREFIX: &str = "kueuesim.io/node-affinity-";

/// The operator of a node selector requirement (`NodeSelectorOperator`): a label
/// selector's, and `Gt` and `Lt`, which compare the label's value as an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeSelectorOp {
    /// The value is one of the values.
    In,
    /// The label is absent or its value is none of the values.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The value, an integer, is greater than the one value.
    Gt,
    /// The value, an integer, is less than the one value.
    Lt,
}

/// One requirement of a node selector term: on a label (`matchExpressions`) or on the
/// node's name (`matchFields` with key `metadata.name`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NodeSelectorRequirement {
    /// The label key (`metadata.name` for a field requirement).
    pub key: String,
    /// How the value is tested.
    pub op: NodeSelectorOp,
    /// The values (one integer for `Gt` and `Lt`, none for `Exists` and `DoesNotExist`).
    pub values: Vec<String>,
    /// A `matchFields` requirement: tests the node's name.
    pub field: bool,
}

/// A pod's required node affinity (`requiredDuringSchedulingIgnoredDuringExecution`): a
/// node matches if it matches any term, and a term if it meets all its requirements (a
/// term without any matches no node), as kube-scheduler's NodeAffinity filter reads it
/// (`MatchNodeSelectorTerms`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeAffinity {
    /// `nodeSelectorTerms`, each a list of requirements.
    pub terms: Vec<Vec<NodeSelectorRequirement>>,
}

impl NodeAffinity {
    /// Whether the node `name` with `labels` matches.
    pub fn matches(&self, name: &str, labels: &Labels) -> bool {
        self.terms.iter().any(|term| {
            !term.is_empty()
                && term.iter().all(|r| {
                    let v = if r.field {
                        Some(name)
                    } else {
                        labels.get(&r.key)
                    };
                    let int = |x: &str| x.trim().parse::<i64>().ok();
                    match r.op {
                        NodeSelectorOp::In => v.is_some_and(|v| r.values.iter().any(|x| x == v)),
                        NodeSelectorOp::NotIn => v.is_none_or(|v| r.values.iter().all(|x| x != v)),
                        NodeSelectorOp::Exists => v.is_some(),
                        NodeSelectorOp::DoesNotExist => v.is_none(),
                        NodeSelectorOp::Gt | NodeSelectorOp::Lt => {
                            match (v.and_then(int), r.values.first().and_then(|x| int(x))) {
                                (Some(v), Some(bound)) => {
                                    if r.op == NodeSelectorOp::Gt {
                                        v > bound
                                    } else {
                                        v < bound
                                    }
                                }
                                _ => false,
                            }
                        }
                    }
                })
        })
    }
}

/// The effect of a taint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TaintEffect {
    /// New pods are not scheduled unless they tolerate it.
    NoSchedule,
    /// The scheduler tries to avoid the node; never blocks placement.
    PreferNoSchedule,
    /// Like NoSchedule, and running pods that do not tolerate it are evicted.
    NoExecute,
}

impl TaintEffect {
    /// The Kubernetes spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }

    /// Whether a pod that does not tolerate this taint may not be placed (NoSchedule, NoExecute).
    pub fn blocks_scheduling(self) -> bool {
        !matches!(self, TaintEffect::PreferNoSchedule)
    }
}

/// A node or ResourceFlavor taint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint {
    /// The taint key.
    pub key: String,
    /// The taint value (may be empty).
    pub value: String,
    /// The taint effect.
    pub effect: TaintEffect,
}

impl std::fmt::Display for Taint {
    /// Formats as kube-scheduler and Kueue print a taint: `{key: value}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{{{}: {}}}", self.key, self.value)
    }
}

/// The operator of a toleration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TolerationOp {
    /// Key and value must match.
    Equal,
    /// Key must match (an empty key with Exists tolerates everything).
    Exists,
}

/// A pod or ResourceFlavor toleration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toleration {
    /// The taint key tolerated; empty with `Exists` means every key.
    pub key: String,
    /// How the value is compared.
    pub op: TolerationOp,
    /// The value for `Equal`.
    pub value: String,
    /// The effect tolerated; `None` means every effect.
    pub effect: Option<TaintEffect>,
}

impl Toleration {
    /// Kubernetes' `Toleration.ToleratesTaint`.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.is_some_and(|e| e != taint.effect) {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        match self.op {
            TolerationOp::Exists => true,
            TolerationOp::Equal => self.value == taint.value,
        }
    }
}

/// Whether some toleration of either list tolerates `taint`.
pub fn tolerated(taint: &Taint, a: &[Toleration], b: &[Toleration]) -> bool {
    a.iter().chain(b).any(|t| t.tolerates(taint))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(p: &[(&str, &str)]) -> Labels {
        Labels::new(
            p.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    /// Terms are ORed, requirements ANDed, a term without requirements matches nothing;
    /// `Gt`/`Lt` compare integers; `matchFields` test the node's name.
    #[test]
    fn node_affinity_terms() {
        let l = labels(&[("zone", "a"), ("gen", "9")]);
        let r = |key: &str, op, values: &[&str], field| NodeSelectorRequirement {
            key: key.into(),
            op,
            values: values.iter().map(|v| v.to_string()).collect(),
            field,
        };
        use NodeSelectorOp::*;
        let a = |terms: Vec<Vec<NodeSelectorRequirement>>| NodeAffinity { terms };
        assert!(a(vec![vec![r("zone", In, &["a", "b"], false)]]).matches("n", &l));
        assert!(
            !a(vec![vec![
                r("zone", In, &["a"], false),
                r("gen", Lt, &["9"], false)
            ]])
            .matches("n", &l)
        );
        assert!(
            a(vec![
                vec![r("zone", NotIn, &["a"], false)],
                vec![r("gen", Gt, &["8"], false)]
            ])
            .matches("n", &l)
        );
        assert!(!a(vec![vec![r("gen", Gt, &["x"], false)]]).matches("n", &l));
        assert!(a(vec![vec![r("metadata.name", In, &["n"], true)]]).matches("n", &l));
        assert!(!a(vec![vec![]]).matches("n", &l));
        assert!(a(vec![vec![r("rack", DoesNotExist, &[], false)]]).matches("n", &l));
    }

    #[test]
    fn later_duplicate_label_wins_and_lookup_is_sorted() {
        let l = labels(&[("b", "1"), ("a", "2"), ("b", "3")]);
        assert_eq!(l.get("b"), Some("3"));
        assert_eq!(l.iter().map(|(k, _)| k).collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn selector_expressions() {
        let l = labels(&[("team", "ml"), ("tier", "gold")]);
        let req = |key: &str, op, values: &[&str]| SelectorRequirement {
            key: key.into(),
            op,
            values: values.iter().map(|s| s.to_string()).collect(),
        };
        let sel = |r| LabelSelector {
            match_labels: Labels::default(),
            match_expressions: vec![r],
        };
        assert!(sel(req("team", SelectorOp::In, &["ml", "x"])).matches(&l));
        assert!(!sel(req("team", SelectorOp::NotIn, &["ml"])).matches(&l));
        assert!(sel(req("zone", SelectorOp::NotIn, &["a"])).matches(&l));
        assert!(sel(req("tier", SelectorOp::Exists, &[])).matches(&l));
        assert!(!sel(req("tier", SelectorOp::DoesNotExist, &[])).matches(&l));
        assert!(LabelSelector::default().matches(&Labels::default()));
    }

    #[test]
    fn toleration_rules() {
        let taint = Taint {
            key: "gpu".into(),
            value: "a100".into(),
            effect: TaintEffect::NoSchedule,
        };
        let tol = |key: &str, op, value: &str, effect| Toleration {
            key: key.into(),
            op,
            value: value.into(),
            effect,
        };
        assert!(tol("gpu", TolerationOp::Equal, "a100", None).tolerates(&taint));
        assert!(!tol("gpu", TolerationOp::Equal, "h100", None).tolerates(&taint));
        assert!(tol("", TolerationOp::Exists, "", None).tolerates(&taint));
        assert!(
            !tol(
                "gpu",
                TolerationOp::Exists,
                "",
                Some(TaintEffect::NoExecute)
            )
            .tolerates(&taint)
        );
        assert_eq!(taint.to_string(), "{gpu: a100}");
    }
}
