//! Volcano's own queueing: `scheduling.volcano.sh/v1beta1` Queues and what a
//! volcano-scheduler.conf turns on for them (its actions and the queue plugins `proportion`,
//! `capacity` and `overcommit`).

use crate::resources::ResourceList;

/// A Volcano `Queue` (cluster-scoped), as the queue plugins read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VolcanoQueue {
    /// Object name.
    pub name: String,
    /// `spec.weight` (the admission webhook's default 1): proportion's share of the cluster.
    pub weight: i64,
    /// `spec.capability`: a hard cap on the resources it lists (others are unbounded); None
    /// when unset.
    pub capability: Option<ResourceList>,
    /// `spec.deserved` (capacity plugin): what the queue is owed; None when unset.
    pub deserved: Option<ResourceList>,
    /// `spec.guarantee.resource`: reserved for the queue alone (empty when unset).
    pub guarantee: ResourceList,
    /// `spec.parent`, resolved (capacity plugin's hierarchy); None: under `root`.
    pub parent: Option<usize>,
    /// `status.state` is `Open` (the default); `Closed` and `Closing` take no new jobs.
    pub open: bool,
    /// `spec.reclaimable` (default true): whether other queues may reclaim from it.
    pub reclaimable: bool,
    /// `spec.priority`: higher is ordered first and reclaimed last.
    pub priority: i32,
}

impl VolcanoQueue {
    /// The queue Volcano creates itself (`default`: weight 1, reclaimable, open), standing in
    /// when the input has no Queue of that name.
    pub fn implicit_default() -> Self {
        VolcanoQueue {
            name: "default".into(),
            weight: 1,
            capability: None,
            deserved: None,
            guarantee: ResourceList::default(),
            parent: None,
            open: true,
            reclaimable: true,
            priority: 0,
        }
    }
}

/// A scheduling action of a volcano-scheduler.conf `actions` list (the names upstream's
/// `framework.RegisterAction` knows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VolcanoAction {
    /// `enqueue`: PodGroup Pending → Inqueue when the queue plugins permit.
    Enqueue,
    /// `allocate`: place Inqueue jobs, queue by queue.
    Allocate,
    /// `backfill`: BestEffort pods (no requests), which allocate skips.
    Backfill,
    /// `preempt`: within a queue, by priority.
    Preempt,
    /// `reclaim`: across queues, from queues above their deserved share.
    Reclaim,
    /// `shuffle`: the rescheduling plugin's evictions (not modelled).
    Shuffle,
    /// `gangpreempt`: preemption by HyperNode domain (not modelled).
    GangPreempt,
    /// `gangreclaim`: reclaim by HyperNode domain (not modelled).
    GangReclaim,
}

impl VolcanoAction {
    /// Every action with its conf name, in upstream's registration order.
    pub const ALL: [(&'static str, VolcanoAction); 8] = [
        ("reclaim", VolcanoAction::Reclaim),
        ("allocate", VolcanoAction::Allocate),
        ("backfill", VolcanoAction::Backfill),
        ("preempt", VolcanoAction::Preempt),
        ("gangpreempt", VolcanoAction::GangPreempt),
        ("gangreclaim", VolcanoAction::GangReclaim),
        ("enqueue", VolcanoAction::Enqueue),
        ("shuffle", VolcanoAction::Shuffle),
    ];
}

/// Which plugin divides the cluster among the queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueuePlugin {
    /// `proportion`: deserved by weight, water-filled, capped by capability.
    Proportion,
    /// `capacity`: the Queues' own `deserved`, optionally hierarchical (`enableHierarchy`).
    Capacity {
        /// `enableHierarchy: true` on the plugin.
        hierarchy: bool,
    },
}

/// What a volcano-scheduler.conf turns on for Volcano's queues. Present only when the
/// Simulation gives a configuration: without one, Volcano places gangs as they come (the
/// queues are read but take no part), as kueuesim always did.
#[derive(Clone, Debug, PartialEq)]
pub struct VolcanoQueueing {
    /// The `actions` list, in its order.
    pub actions: Vec<VolcanoAction>,
    /// The queue plugin listed (proportion or capacity), if any.
    pub plugin: Option<QueuePlugin>,
    /// `overcommit` with its `overcommit-factor` (default 1.2; below 1 falls back to 1.2),
    /// None when the plugin is not listed.
    pub overcommit_factor: Option<f64>,
    /// The plugins that vote in the enqueue action, tier by tier in conf order
    /// (`Session.JobEnqueueable`: the first veto rejects; a tier with a permit ends the vote).
    pub enqueue_tiers: Vec<Vec<EnqueueVoter>>,
    /// The queue plugin's `enabledAllocatable` (default true): allocate checks its room.
    pub allocatable: bool,
    /// The queue plugin's `enabledOverused` (default true): allocate skips an overused queue.
    pub overused: bool,
    /// The queue plugin's `enableQueueOrder` (default true): allocate takes the queues by
    /// the plugin's `QueueOrderFn` (priority, then share); off, by creation (input order).
    pub queue_order: bool,
    /// The plugins that vote on victims in the `preempt` action (`Session.Preemptable`),
    /// tier by tier in conf order, without those whose `enablePreemptable` is false: within
    /// a tier the victims are the intersection of the voters' lists, and the first tier that
    /// leaves victims decides.
    pub preempt_tiers: Vec<Vec<EvictVoter>>,
    /// The voters of `Session.Reclaimable`: the same without the plugins whose
    /// `enableReclaimable` is false.
    pub reclaim_tiers: Vec<Vec<EvictVoter>>,
    /// The plugins asked `JobStarving` (gang, priority), without those whose
    /// `enableJobStarving` is false: the first tier with one decides.
    pub starving_tiers: Vec<Vec<EvictVoter>>,
    /// Whether gang decides `JobPipelined` (listed; its `enableJobPipelined`, which allocate
    /// reads too, is not simulated); without it every statement is pipelined.
    pub gang_pipelined: bool,
    /// The capacity plugin's `ancestorReclaimLevel` argument (default 0; negative reads as
    /// 0, as upstream's `parseArguments`): with `enableHierarchy`, how many ancestor levels
    /// reclaim checks.
    pub ancestor_reclaim_level: u32,
}

/// A plugin with a say in the `preempt` and `reclaim` actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvictVoter {
    /// `conformance`: critical pods and kube-system pods are never victims.
    Conformance,
    /// `gang`: a victim job keeps its minAvailable; a job is starving below it.
    Gang,
    /// `priority`: only lower-priority jobs are preempted (no reclaim vote); a job is starving
    /// while some task is neither ready nor pipelined.
    Priority,
    /// The queue plugin (`proportion` or `capacity`): only queues above their deserved share
    /// are reclaimed from (no preempt vote).
    Queue,
    /// `drf`: a victim's job keeps a dominant share at least the preemptor's job's with the
    /// task (preempt only; its reclaim vote needs `enableHierarchy`, not simulated).
    Drf,
}

/// A plugin with a say in the enqueue action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnqueueVoter {
    /// `overcommit`: the cluster's idle resources times the factor.
    Overcommit,
    /// The queue plugin (`proportion` or `capacity`): the queue's capability.
    Queue,
}

impl VolcanoQueueing {
    /// Whether the conf lists `action`.
    pub fn has(&self, action: VolcanoAction) -> bool {
        self.actions.contains(&action)
    }
}

/// A Volcano PodGroup's `spec.minResources`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum MinResources {
    /// Set by Volcano's PodGroup controller (`CalTaskRequests`): the requests of the first
    /// `minMember` pods.
    #[default]
    Derived,
    /// Set by Volcano's job controller (`calcPGMinResources`): the requests of this many pods
    /// of each pod set, counted per task in PriorityClass order (each task's `minAvailable`
    /// first, then its other replicas).
    Counted(Vec<u32>),
    /// Written on the input's PodGroup.
    Given(ResourceList),
    /// Not set on the input's PodGroup: the enqueue action lets it in at once.
    Unset,
}
