//! A living cluster: changes at offsets (the `Timeline` kind), random node and GPU failures
//! (`Simulation` `spec.failures`), and what a job's controller does when its pods end early
//! (`Resilience`: a Job's `backoffLimit`, a JobSet's `failurePolicy`, a Kubeflow job's
//! `restartPolicy`, and the work a failure loses, `kueuesim.io/checkpoint-interval`).

use std::sync::Arc;

use crate::ids::NodeId;
use crate::time::{SimDuration, SimTime};

/// What a job's controller does when some of its pods end before they finish (their node
/// was drained, removed or failed, or their GPU failed), and how much work that costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resilience {
    /// The controller's reaction.
    pub on_pod_loss: OnPodLoss,
    /// `kueuesim.io/checkpoint-interval`: work is saved every so much running time, and only
    /// the work since the last checkpoint is lost (None: the simulation's
    /// `spec.preemption.progress`, which by default keeps nothing).
    pub checkpoint_interval: Option<SimDuration>,
    /// `kueuesim.io/restart-cost`: running time a restart spends before it does new work
    /// (loading the checkpoint, warming up), at every start after the first.
    pub restart_cost: SimDuration,
}

/// A job controller's reaction to pods that end early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnPodLoss {
    /// The lost pods are replaced (batch/v1 Job: `backoffLimit`, default 6; a Kubeflow job:
    /// `runPolicy.backoffLimit`; Deployment, StatefulSet, LeaderWorkerSet: no limit): once more
    /// than `backoff_limit` pods were lost the job fails.
    Replace {
        /// Lost pods the job survives (None: any number).
        backoff_limit: Option<u32>,
        /// The pod sets (bit i: pod set i) whose pod failing in place (its GPU failed; not
        /// deleted with its node) ends the job: Kubeflow replica types with
        /// `restartPolicy: Never`.
        never_restarted: u32,
    },
    /// JobSet: a child Job fails once more than `backoff_limit` of its pods were lost
    /// (the child template's `backoffLimit`), and the JobSet then recreates all its Jobs, at
    /// most `max_restarts` times (`failurePolicy.maxRestarts`, default 0), then fails.
    RestartAll {
        /// The child Jobs' `backoffLimit`.
        backoff_limit: u32,
        /// `failurePolicy.maxRestarts`.
        max_restarts: u32,
    },
    /// Nothing replaces a lost pod: the workload fails (a bare Pod).
    Fail,
}

impl Default for OnPodLoss {
    /// A controller that always replaces (the workloads of generators and traces, which stand
    /// for jobs whose controller retries until they are done).
    fn default() -> Self {
        OnPodLoss::Replace {
            backoff_limit: None,
            never_restarted: 0,
        }
    }
}

/// A node operation of a Timeline change (`spec.changes[].nodes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NodeOp {
    /// `kubectl cordon`: `spec.unschedulable: true`; its pods keep running.
    Cordon,
    /// `kubectl uncordon`.
    Uncordon,
    /// `kubectl drain`: cordon, then evict every pod (their controllers replace them
    /// elsewhere).
    Drain,
    /// The Node object is deleted: its pods end at once.
    Remove,
    /// The Node object is created (a Timeline patch added it, or a NodePool grew): the node
    /// takes pods from now on. Written by the loader, never in a Timeline's `nodes`.
    Add,
}

impl NodeOp {
    /// The word the Timeline uses.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeOp::Cordon => "cordon",
            NodeOp::Uncordon => "uncordon",
            NodeOp::Drain => "drain",
            NodeOp::Remove => "remove",
            NodeOp::Add => "add",
        }
    }
}

/// One change of the cluster at an offset from the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// When it applies.
    pub at: SimTime,
    /// The objects as its `set` and `patch` leave them: an index into `World::epochs`, the
    /// world from this change on (None: the change changes no object).
    pub epoch: Option<usize>,
    /// The ClusterQueues whose quota or policies the change altered, directly or through a
    /// Cohort of theirs: Kueue requeues the inadmissible workloads of their cohort trees.
    pub updated: Vec<crate::ids::ClusterQueueId>,
    /// Node operations, in the order they apply (after the objects changed: the nodes a
    /// patch adds or takes away come first, as `Add` and `Remove`).
    pub nodes: Vec<(NodeOp, Vec<NodeId>)>,
    /// Where the change is written (`file:line:column`), for messages.
    pub source: String,
}

/// A distribution of durations in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub enum DurationDist {
    /// Exponential with this mean: a memoryless failure process (a duration written alone).
    Exponential {
        /// The mean.
        mean_ms: f64,
    },
    /// Always this long.
    Fixed(i64),
    /// Uniform over [min, max].
    Uniform {
        /// Shortest.
        min: i64,
        /// Longest.
        max: i64,
    },
    /// exp(N(mu, sigma²)), clamped to [min, max].
    LogNormal {
        /// ln of the median.
        mu: f64,
        /// Standard deviation of the logarithm.
        sigma: f64,
        /// Lower clamp.
        min: i64,
        /// Upper clamp.
        max: i64,
    },
    /// A value of a column, each equally likely.
    Empirical(Arc<[i64]>),
}

impl DurationDist {
    /// The mean, in milliseconds (the empirical one's average; the log-normal's before its
    /// clamp).
    pub fn mean_ms(&self) -> f64 {
        match self {
            DurationDist::Exponential { mean_ms } => *mean_ms,
            DurationDist::Fixed(v) => *v as f64,
            DurationDist::Uniform { min, max } => (*min as f64 + *max as f64) / 2.0,
            DurationDist::LogNormal { mu, sigma, .. } => (mu + sigma * sigma / 2.0).exp(),
            DurationDist::Empirical(v) => {
                v.iter().map(|&x| x as f64).sum::<f64>() / v.len().max(1) as f64
            }
        }
    }
}

/// Random failures of one set of nodes (`spec.failures.nodes`, or one of its `pools`).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeFailures {
    /// The nodes this applies to, by id (every node, a NodePool's, or a selector's).
    pub nodes: Vec<NodeId>,
    /// Time from a node's start or repair to its next failure, per node.
    pub mtbf: DurationDist,
    /// Time from a failure to the node's return.
    pub repair: DurationDist,
}

/// Random failures of single GPUs (`spec.failures.gpus`).
#[derive(Clone, Debug, PartialEq)]
pub struct GpuFailures {
    /// The nodes whose GPUs fail, by id.
    pub nodes: Vec<NodeId>,
    /// Time from a GPU's start or repair to its next failure, per GPU.
    pub mtbf: DurationDist,
    /// Time from a GPU's failure to its return.
    pub repair: DurationDist,
}

/// `Simulation` `spec.failures`: seeded random failures of nodes and GPUs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FailureConfig {
    /// Node failures, per set of nodes (a node in several sets fails by each).
    pub nodes: Vec<NodeFailures>,
    /// GPU failures, per set of nodes.
    pub gpus: Vec<GpuFailures>,
}

impl FailureConfig {
    /// Whether any failure is configured.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty() && self.gpus.is_empty()
    }
}
