//! kueuesim-model: the pure data of a simulated Kubernetes GPU platform and pure functions over it.
//!
//! This crate knows nothing of YAML, files, randomness or logging. The scenario crate converts
//! manifests into these types (names resolved into dense ids once, at load), and the engine
//! simulates them. Everything here is deterministic: no hash-map iteration reaches a decision.
#![warn(missing_docs)]

pub mod autoscale;
pub mod change;
pub mod fair_sharing;
pub mod gpu;
pub mod ids;
pub mod labels;
pub mod limits;
pub mod names;
pub mod objects;
pub mod quantity;
pub mod quota;
pub mod resources;
pub mod serving;
pub mod time;
pub mod topology;
pub mod volcano;
pub mod world;

pub use change::{
    Change, DurationDist, FailureConfig, GpuFailures, NodeFailures, NodeOp, OnPodLoss, Resilience,
};
pub use ids::*;
pub use labels::{
    LabelSelector, Labels, NodeAffinity, NodeSelectorOp, NodeSelectorRequirement, SelectorOp,
    SelectorRequirement, Taint, TaintEffect, Toleration, TolerationOp,
};
pub use objects::*;
pub use quantity::{
    Amount, Quantity, QuantityError, decimal_digits, format_amount, resource_amount,
};
pub use resources::{ResourceList, ResourceTable};
pub use serving::{ServingKind, ServingObject, ServingRef};
pub use time::{SimDuration, SimTime};
pub use topology::{DomainId, HyperNodeMember, HyperNodeSpec, Topology};
pub use volcano::{
    EnqueueVoter, EvictVoter, MinResources, QueuePlugin, VolcanoAction, VolcanoQueue,
    VolcanoQueueing,
};
pub use world::{
    AdmissionFairSharing, BinpackArgs, ControllerLatency, CycleWork, DeviceShareArgs,
    FairSharingStrategy, KaiConfig, KueueConfig, KueueGates, NetworkTopologyAwareArgs,
    NodeOrderWeights, PlacementStrategy, PolicyNames, PolicyRef, ProgressPolicy, ResourceConfig,
    ResourceTransformation, SchedulerKind, SimConfig, VariationNote, VgpuPolicy, VolcanoConfig,
    WaitForPodsReady, World,
};
