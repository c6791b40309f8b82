//! The whole input of one simulation: every object, resolved, plus the simulator settings.

use crate::ids::{ClusterQueueId, FlavorId, LocalQueueId, NodeId, WorkloadId};
use crate::objects::{
    ClusterQueue, Cohort, LocalQueue, Namespace, Node, PriorityClass, ResourceFlavor, Workload,
};
use crate::resources::ResourceTable;
use crate::time::{SimDuration, SimTime};

/// Which gang/topology scheduler places a workload's pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchedulerKind {
    /// The default kube-scheduler: pods are placed one by one, no gang.
    Kube,
    /// KAI Scheduler: the whole gang or nothing.
    Kai,
    /// Volcano: the whole gang (minMember) or nothing.
    Volcano,
}

impl SchedulerKind {
    /// The event source name the scheduler writes (`From` in kubectl describe).
    pub fn event_source(self) -> &'static str {
        match self {
            SchedulerKind::Kube => "default-scheduler",
            SchedulerKind::Kai => "kai-scheduler",
            SchedulerKind::Volcano => "volcano",
        }
    }

    /// Whether pods are placed all-or-nothing.
    pub fn is_gang(self) -> bool {
        !matches!(self, SchedulerKind::Kube)
    }
}

/// Simulator settings (the `Simulation` object), with defaults applied.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Seed of the random streams.
    pub seed: u64,
    /// Wall-clock instant of simulated time 0, Unix milliseconds.
    pub start_unix_ms: i64,
    /// Horizon: events after it are not simulated.
    pub until: Option<SimTime>,
    /// Delay from a pod's binding to its running.
    pub pod_startup: SimDuration,
    /// Delay from a pod's termination request to its being gone.
    pub pod_termination: SimDuration,
    /// `schedulerName` → scheduler, sorted by name.
    pub schedulers: Vec<(String, SchedulerKind)>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 0,
            start_unix_ms: 0,
            until: None,
            pod_startup: SimDuration::ZERO,
            pod_termination: SimDuration::ZERO,
            schedulers: default_schedulers(),
        }
    }
}

/// DESIGN.md §4: `default-scheduler: kube, kai-scheduler: kai, volcano: volcano,
/// volcano-scheduler: volcano`.
pub fn default_schedulers() -> Vec<(String, SchedulerKind)> {
    let mut v = vec![
        ("default-scheduler".to_string(), SchedulerKind::Kube),
        ("kai-scheduler".to_string(), SchedulerKind::Kai),
        ("volcano".to_string(), SchedulerKind::Volcano),
        ("volcano-scheduler".to_string(), SchedulerKind::Volcano),
    ];
    v.sort();
    v
}

impl SimConfig {
    /// The scheduler running pods named `scheduler_name`, if any (the loader rejects names
    /// no scheduler runs).
    pub fn scheduler(&self, scheduler_name: &str) -> Option<SchedulerKind> {
        self.schedulers
            .binary_search_by(|(n, _)| n.as_str().cmp(scheduler_name))
            .ok()
            .map(|i| self.schedulers[i].1)
    }
}

/// Every object of one scenario, names resolved into dense ids.
#[derive(Clone, Debug, Default)]
pub struct World {
    /// Interned resource names.
    pub resources: ResourceTable,
    /// ResourceFlavors by `FlavorId`.
    pub flavors: Vec<ResourceFlavor>,
    /// ClusterQueues by `ClusterQueueId`.
    pub cluster_queues: Vec<ClusterQueue>,
    /// Cohorts by `CohortId` (declared and implicit).
    pub cohorts: Vec<Cohort>,
    /// LocalQueues by `LocalQueueId`.
    pub local_queues: Vec<LocalQueue>,
    /// Priority classes (Workload and pod), in input order.
    pub priority_classes: Vec<PriorityClass>,
    /// Namespaces, in input order.
    pub namespaces: Vec<Namespace>,
    /// Nodes by `NodeId`; empty means a quota-only simulation.
    pub nodes: Vec<Node>,
    /// Workloads by `WorkloadId`, in arrival-then-document order.
    pub workloads: Vec<Workload>,
    /// Settings.
    pub config: SimConfig,
}

impl World {
    /// The flavor `id`.
    pub fn flavor(&self, id: FlavorId) -> &ResourceFlavor {
        &self.flavors[id.index()]
    }
    /// The ClusterQueue `id`.
    pub fn cluster_queue(&self, id: ClusterQueueId) -> &ClusterQueue {
        &self.cluster_queues[id.index()]
    }
    /// The LocalQueue `id`.
    pub fn local_queue(&self, id: LocalQueueId) -> &LocalQueue {
        &self.local_queues[id.index()]
    }
    /// The node `id`.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }
    /// The workload `id`.
    pub fn workload(&self, id: WorkloadId) -> &Workload {
        &self.workloads[id.index()]
    }
    /// Whether the simulation places pods on nodes (otherwise it is quota-only).
    pub fn has_nodes(&self) -> bool {
        !self.nodes.is_empty()
    }
    /// The namespace named `name`, if declared.
    pub fn namespace(&self, name: &str) -> Option<&Namespace> {
        self.namespaces.iter().find(|n| n.name == name)
    }
}
