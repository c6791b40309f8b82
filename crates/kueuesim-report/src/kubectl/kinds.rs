//! The kinds `get` and `describe` know, by kubectl's names: the resource (plural), the
//! singular, the short names of the CRDs and core types (`shortNames` of Kueue's and
//! Volcano's CRDs, kubectl's own for core types), and `<plural>.<group>`.

/// A kind of object the kubectl views show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Kueue LocalQueue.
    LocalQueue,
    /// Kueue ClusterQueue.
    ClusterQueue,
    /// Kueue Cohort.
    Cohort,
    /// Kueue ResourceFlavor.
    ResourceFlavor,
    /// Kueue Workload.
    Workload,
    /// Volcano or KAI PodGroup.
    PodGroup,
    /// core/v1 Pod.
    Pod,
    /// core/v1 Node.
    Node,
    /// core/v1 Event.
    Event,
}

/// Every kind, with its names: singular, plural, short names and the `<plural>.<group>` form.
const NAMES: &[(Kind, &[&str])] = &[
    (
        Kind::LocalQueue,
        &[
            "localqueue",
            "localqueues",
            "lq",
            "queue",
            "queues",
            "localqueues.kueue.x-k8s.io",
        ],
    ),
    (
        Kind::ClusterQueue,
        &[
            "clusterqueue",
            "clusterqueues",
            "cq",
            "clusterqueues.kueue.x-k8s.io",
        ],
    ),
    (
        Kind::Cohort,
        &["cohort", "cohorts", "co", "cohorts.kueue.x-k8s.io"],
    ),
    (
        Kind::ResourceFlavor,
        &[
            "resourceflavor",
            "resourceflavors",
            "rf",
            "flavor",
            "flavors",
            "resourceflavors.kueue.x-k8s.io",
        ],
    ),
    (
        Kind::Workload,
        &[
            "workload",
            "workloads",
            "kwl",
            "kueueworkload",
            "kueueworkloads",
            // Not a short name of Kueue's CRD; kueuesim's since its first release.
            "wl",
            "workloads.kueue.x-k8s.io",
        ],
    ),
    (
        Kind::PodGroup,
        &[
            "podgroup",
            "podgroups",
            "pg",
            "podgroups.scheduling.volcano.sh",
            "podgroups.scheduling.run.ai",
        ],
    ),
    (Kind::Pod, &["pod", "pods", "po"]),
    (Kind::Node, &["node", "nodes", "no"]),
    (Kind::Event, &["event", "events", "ev"]),
];

impl Kind {
    /// The kind a command-line word names (case-insensitive, as kubectl matches resources).
    pub fn parse(word: &str) -> Option<Kind> {
        let w = word.to_ascii_lowercase();
        NAMES
            .iter()
            .find(|(_, names)| names.contains(&w.as_str()))
            .map(|(k, _)| *k)
    }

    /// The kinds `get` lists, as a usage message names them.
    pub const GET_KINDS: &'static str =
        "localqueue, clusterqueue, cohort, resourceflavor, workload, podgroup, pod, node or event";

    /// The kinds `describe` describes.
    pub const DESCRIBE_KINDS: &'static str =
        "workload, pod, node, clusterqueue, localqueue, podgroup, cohort or resourceflavor";

    /// Whether `describe` describes it (events are listed, not described).
    pub fn describable(self) -> bool {
        self != Kind::Event
    }

    /// The singular, lower-case name.
    pub fn singular(self) -> &'static str {
        NAMES
            .iter()
            .find(|(k, _)| *k == self)
            .map(|(_, n)| n[0])
            .expect("every kind has names")
    }

    /// The resource as kubectl's `not found` error names it (`workloads.kueue.x-k8s.io`,
    /// `pods`).
    pub fn resource(self) -> &'static str {
        match self {
            Kind::LocalQueue => "localqueues.kueue.x-k8s.io",
            Kind::ClusterQueue => "clusterqueues.kueue.x-k8s.io",
            Kind::Cohort => "cohorts.kueue.x-k8s.io",
            Kind::ResourceFlavor => "resourceflavors.kueue.x-k8s.io",
            Kind::Workload => "workloads.kueue.x-k8s.io",
            Kind::PodGroup => "podgroups.scheduling.volcano.sh",
            Kind::Pod => "pods",
            Kind::Node => "nodes",
            Kind::Event => "events",
        }
    }

    /// Whether objects of the kind live in a namespace.
    pub fn namespaced(self) -> bool {
        matches!(
            self,
            Kind::LocalQueue | Kind::Workload | Kind::PodGroup | Kind::Pod | Kind::Event
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_names_and_short_names_resolve() {
        for (word, kind) in [
            ("wl", Kind::Workload),
            ("kwl", Kind::Workload),
            ("Workloads", Kind::Workload),
            ("cq", Kind::ClusterQueue),
            ("lq", Kind::LocalQueue),
            ("queue", Kind::LocalQueue),
            ("po", Kind::Pod),
            ("no", Kind::Node),
            ("pg", Kind::PodGroup),
            ("podgroups", Kind::PodGroup),
            ("ev", Kind::Event),
            ("events", Kind::Event),
            ("rf", Kind::ResourceFlavor),
            ("flavors", Kind::ResourceFlavor),
            ("resourceflavors", Kind::ResourceFlavor),
            ("cohorts", Kind::Cohort),
            ("co", Kind::Cohort),
            ("workloads.kueue.x-k8s.io", Kind::Workload),
        ] {
            assert_eq!(Kind::parse(word), Some(kind), "{word}");
        }
        assert_eq!(Kind::parse("widgets"), None);
    }
}
