//! Results out: the `SimulationResult` document of the output contract (JSON or YAML); the
#![allow(missing_docs)]
//! human summary printed by default is `summary_text`'s.

use serde::Serialize;

use kueuesim_engine::outcome::{Outcome, Tally, WorkloadRecord, WorkloadState};
use kueuesim_engine::preemption::PreemptionReason;
use kueuesim_model::time::format_rfc3339;
use kueuesim_model::{
    ClusterQueueId, QueueRef, SimDuration, SimTime, Workload, WorkloadId, World, format_amount,
};

use crate::hourly::{GpuSecondsByHour, GpuShareByHour};
pub use crate::percentiles::Percentiles;
use crate::percentiles::{percentiles, percentiles_of_millis};
use crate::queues::{FigureMemo, LocalQueueSummary, QueueFigures, Samples};

/// The human summary lives beside the document it reads.
pub use crate::summary_text::summary_text;

/// The document's serialized forms: whole, streamed in pieces, the summary alone.
mod writers;
pub use writers::*;

/// The whole `-o json` document.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulationResult {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub summary: Summary,
    pub workloads: Vec<WorkloadOut>,
}

/// Run-wide figures.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// RFC 3339 instant of simulated time 0.
    pub start_time: String,
    /// Seconds from start the report describes.
    pub end_time: f64,
    pub seed: u64,
    /// What the seed changes in the workloads; not a figure (`figures::flatten` skips it).
    pub variation: VariationOut,
    /// Kueue scheduling cycles run.
    pub cycles: u64,
    pub events_processed: u64,
    /// Set when the run stopped before its end (a `--max-events` or `--max-wall` budget);
    /// every figure then describes the run up to `endTime`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<StoppedEarly>,
    /// The policies in effect (fair sharing, queueing strategies, preemption, …): not
    /// figures, but what `compare` says differs between two runs.
    pub policies: crate::policies::Policies,
    pub workloads: StateCounts,
    /// Admissions made (re-admissions count again).
    pub admissions: u64,
    /// A figure's name says which workloads it counts: `…InclPending` every workload of a
    /// ClusterQueue that arrived, one still Pending at the end counted at its wait so far
    /// (censored at the end of the run: a lower bound of its wait, so a lower bound of the
    /// percentile); `…Admitted` only those admitted (a change that admits more of the long
    /// waiters can raise it while every wait shortens); `…Finished` only those finished.
    ///
    /// Creation to the latest admission, over the workloads of ClusterQueues, with each one
    /// Pending at the end at its wait so far (creation to the end).
    pub wait_seconds_incl_pending: Percentiles,
    /// Seconds from creation to the latest admission, over workloads holding (or, finished or
    /// evicted, having held) an admission at the end. A workload preempted and readmitted
    /// counts the time it ran in between: `timeInQueueSecondsAdmitted` does not.
    pub wait_seconds_admitted: Percentiles,
    /// Time in queue (Pending, holding no quota) before the latest admission, summed over
    /// readmissions, over the workloads of ClusterQueues, each one Pending at the end at its
    /// time so far.
    pub time_in_queue_seconds_incl_pending: Percentiles,
    /// `timeInQueueSecondsInclPending` over the admitted workloads of ClusterQueues alone.
    pub time_in_queue_seconds_admitted: Percentiles,
    /// Creation to the pods first all running, over every arrived workload whether Kueue
    /// admits it or not (Kueue left out, workloads it does not manage), but the cluster's
    /// own (DaemonSet pods, system namespaces); one not yet running at the end counted at
    /// its wait so far (a lower bound); one that ended without running, or deactivated, not
    /// counted. The figure that compares runs with and without Kueue.
    pub start_seconds_incl_pending: Percentiles,
    /// Of `startSecondsInclPending`, the workloads still waiting to start at the end.
    pub start_waiting: u64,
    /// Arrived workloads but the cluster's own that no ClusterQueue counts: the summary
    /// prints the time to start when the queue figures miss some (`Tally::outside_queues`).
    #[serde(skip)]
    pub outside_queues: u64,
    /// Creation to finish of the finished workloads of ClusterQueues.
    pub jct_seconds_finished: Percentiles,
    /// (wait + run) / max(run, 10 s) of the finished workloads of ClusterQueues.
    pub bounded_slowdown_finished: Percentiles,
    pub gpu: GpuSummary,
    /// With a Timeline or `spec.failures` (a cluster that changes): what the changes and
    /// failures did. Absent otherwise, so a scenario without them reports as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<FailuresOut>,
    /// With a Timeline or `spec.failures`: useful GPU-seconds over GPU-seconds allocated to
    /// pods (`FailuresOut::useful_gpu_seconds` over `gpu.busyGpuSeconds`); null when no GPU
    /// was allocated. Absent without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goodput: Option<Option<f64>>,
    /// Per serving object that scales (`kueuesim.io/replicas`, a load): replicas wanted
    /// against ready, and how long a scale-up took to be ready. Absent without any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serving: Option<Vec<ServingOut>>,
    /// With an autoscaled NodePool or a ProvisioningRequest admission check: what the
    /// cluster-autoscaler and the check did. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<AutoscalingOut>,
    /// Evictions by the Evicted condition's reason.
    pub evictions: std::collections::BTreeMap<String, u64>,
    /// Preemptions by the Preempted condition's reason.
    pub preemptions: std::collections::BTreeMap<String, u64>,
    /// Per ClusterQueue: admissions, evictions and GPU time of its workloads, and the
    /// planner's figures of `QueueFigures`.
    pub cluster_queues: Vec<ClusterQueueSummary>,
    /// Per LocalQueue: the same figures for the workloads that name it.
    pub local_queues: Vec<LocalQueueSummary>,
    /// Capacity checks of the loaded cluster and workloads (`checks`), also printed as
    /// warnings.
    pub checks: Vec<crate::checks::Check>,
}

/// What a run's seed changes in its workloads (`Simulation.spec.variation`), and a
/// fingerprint of the workloads it replayed.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VariationOut {
    /// `keep`, `jitter <duration>` or `poisson`.
    pub arrivals: String,
    /// `keep` or `lognormal sigma <σ>`.
    pub durations: String,
    pub load: f64,
    /// `none` or `days`.
    pub resample: String,
    /// What differs from one seed to the next, `tie-breaks` last; `tie-breaks` alone: every
    /// seed replays the same workloads.
    pub seeds_vary: Vec<String>,
    /// 16 hex digits hashing every arrived workload's name, arrival, duration and size
    /// (`RunStats::workload_fingerprint`): equal across seeds that replayed the same workloads.
    pub workload_fingerprint: String,
}

impl VariationOut {
    /// The loader's note and the run's fingerprint.
    pub fn of(note: &kueuesim_model::VariationNote, fingerprint: u64) -> Self {
        VariationOut {
            arrivals: note.arrivals.clone(),
            durations: note.durations.clone(),
            load: note.load,
            resample: note.resample.clone(),
            seeds_vary: note.seeds_vary.clone(),
            workload_fingerprint: format!("{fingerprint:016x}"),
        }
    }

    /// What the seeds vary, in one line: `arrivals (…), durations (…), tie-breaks`, or
    /// `tie-breaks only`.
    pub fn seeds_vary_text(&self) -> String {
        seeds_vary_text(&self.seeds_vary)
    }
}

/// `seedsVary` as one line: the items joined, or `tie-breaks only` when that is all.
pub fn seeds_vary_text(items: &[String]) -> String {
    match items {
        [one] if one == "tie-breaks" => "tie-breaks only".into(),
        [] => "nothing".into(),
        _ => items.join(", "),
    }
}

/// Why the spread across runs of several seeds is not the variation of a day's workload, if
/// it is not: their seeds vary tie-breaks only (`seeds_vary` of the runs), or every run
/// replayed the same workloads (one `workload_fingerprint` among two runs or more).
pub fn seeds_warning(seeds_vary: &[String], fingerprints: &[&str]) -> Option<String> {
    const ASK: &str =
        "Simulation spec.variation varies arrivals, durations and load (docs/what-if.md)";
    if matches!(seeds_vary, [one] if one == "tie-breaks") {
        return Some(format!(
            "the seeds vary tie-breaks only: every seed replays the same workloads, so the spread across seeds is tie-break noise, not how much a day varies; {ASK}"
        ));
    }
    let one = fingerprints.first()?;
    (fingerprints.len() > 1 && fingerprints.iter().all(|f| f == one)).then(|| {
        format!(
            "all {} seeds replayed the same workloads (workload fingerprint {one}): the spread across seeds is tie-break noise, not how much a day varies; {ASK}",
            fingerprints.len()
        )
    })
}

/// Why a run stopped before its end (`Summary::stopped_early`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoppedEarly {
    /// `MaxEvents` (its event budget), `MaxWallTime` (its wall-time budget), `Livelock`
    /// (simulated time stopped advancing while decisions repeat) or `Interrupted` (its
    /// caller stopped it).
    pub reason: &'static str,
    /// What stopped it, in words.
    pub message: String,
}

impl StoppedEarly {
    /// The stop an engine outcome reports, the run having reached `end`; the caller that
    /// stopped a run names its reason.
    pub fn of(stopped: &kueuesim_engine::outcome::Stopped, end: SimTime) -> StoppedEarly {
        use kueuesim_engine::outcome::Stopped;
        let end = SimDuration::from_millis(end.millis());
        match stopped {
            Stopped::Livelock {
                events, evicted, ..
            } => {
                let who: Vec<String> = evicted
                    .iter()
                    .map(|(w, n)| format!("{w} evicted {n} times"))
                    .collect();
                let who = if who.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", who.join(", "))
                };
                StoppedEarly {
                    reason: "Livelock",
                    message: format!(
                        "simulated time stopped at {end}: {events} events at that one instant while decisions repeat{who}, a livelock no cluster has, as every Kueue scheduling cycle takes time (a controllerLatency or podTermination above zero lets time advance)"
                    ),
                }
            }
            Stopped::EventBudget(n) => StoppedEarly {
                reason: "MaxEvents",
                message: format!("the run processed its budget of {n} events at simulated {end}"),
            },
            Stopped::ByCaller => StoppedEarly {
                reason: "Interrupted",
                message: format!("the run was stopped by its caller at simulated {end}"),
            },
            Stopped::FailuresWithoutEnd { for_ } => StoppedEarly {
                reason: "FailuresWithoutEnd",
                message: format!(
                    "the run has no horizon and, with spec.failures, nothing finished for {for_} while failures kept ending pods (a job that loses its work faster than it does it never finishes): stopped at simulated {end}; give spec.until or --until, or checkpoints (kueuesim.io/checkpoint-interval)"
                ),
            },
        }
    }
}

/// What one ClusterQueue's workloads did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterQueueSummary {
    pub name: String,
    pub cohort: Option<String>,
    /// Workloads that held its quota at least once.
    pub admitted_workloads: u64,
    pub evictions: u64,
    /// GPU-seconds its workloads' pods held.
    pub gpu_seconds: f64,
    /// Share of all GPU-seconds held.
    pub gpu_share: Option<f64>,
    /// GPU-seconds held in each hour of the run (a view of the run's series, serialized as
    /// the array; `hourly`).
    pub gpu_seconds_by_hour: GpuSecondsByHour,
    /// Its share of the GPU-seconds all ClusterQueues held in each hour (null: none held).
    pub gpu_share_by_hour: GpuShareByHour,
    #[serde(flatten)]
    pub figures: QueueFigures,
    /// What held its workloads back: each constraint's share of their pending
    /// workload-seconds (`queues::pending_bound_by`; docs/output.md).
    pub pending_bound_by: std::collections::BTreeMap<String, f64>,
    /// Its quota per resource, summed over its flavors.
    pub quota: std::collections::BTreeMap<String, crate::queues::QuotaOut>,
}

/// How many workloads are in each state at the end.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StateCounts {
    pub total: u64,
    pub pending: u64,
    pub quota_reserved: u64,
    pub admitted: u64,
    pub running: u64,
    pub evicted: u64,
    pub inactive: u64,
    pub finished: u64,
    /// Workloads of the input whose arrival is after the end.
    pub not_arrived: u64,
    /// Workloads not managed by Kueue (no queue).
    pub unmanaged: u64,
}

/// One serving object of `summary.serving`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServingOut {
    /// Deployment, StatefulSet or LeaderWorkerSet.
    pub kind: &'static str,
    pub namespace: String,
    pub name: String,
    /// Replica-seconds its replicas count asked for, from its arrival to the end.
    pub replica_seconds_wanted: f64,
    /// Replica-seconds its replicas were ready (every pod of the replica running).
    pub replica_seconds_ready: f64,
    /// `replicaSecondsReady / replicaSecondsWanted`; null when nothing was wanted.
    pub ready_fraction: Option<f64>,
    /// Replicas its scale-ups created (its first replicas included).
    pub replicas_created: u32,
    /// Replicas deleted by a scale-down, or still there at the end, without ever being ready.
    pub replicas_never_ready: u32,
    /// Seconds from the scale-up that created a replica to its being ready, over the
    /// replicas that became ready.
    pub time_to_ready_seconds: Percentiles,
}

/// `summary.autoscaling`: what the cluster-autoscaler and the ProvisioningRequest check did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AutoscalingOut {
    /// Scale-ups: for pods pending unschedulable, or for a ProvisioningRequest.
    pub scale_ups: u64,
    /// Nodes that joined after a scale-up.
    pub nodes_added: u64,
    /// Nodes a scale-down removed (empty for `scaleDownUnneeded`).
    pub nodes_removed: u64,
    /// Most nodes of the autoscaled NodePools there at once.
    pub peak_nodes: u64,
    /// Nodes of the autoscaled NodePools there at the end.
    pub nodes_at_end: u64,
    /// Node-hours of the autoscaled NodePools' nodes, from the start to the end of the run.
    pub node_hours: f64,
    /// GPU-hours of those nodes (what the capacity cost, used or not).
    pub gpu_hours: f64,
    /// ProvisioningRequests Kueue created.
    pub provisioning_requests: u64,
    /// ProvisioningRequests that failed (no room to grow).
    pub provisioning_failed: u64,
    /// Workloads deactivated when their last retry failed (the check Rejected).
    pub provisioning_rejected: u64,
}

/// `summary.failures`: what a Timeline's node operations and `spec.failures` did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailuresOut {
    /// Node failures (`spec.failures.nodes`).
    pub node_failures: u64,
    /// GPU failures (`spec.failures.gpus`).
    pub gpu_failures: u64,
    /// Pods that ended before they finished: drained, on a removed or failed node, on a
    /// failed GPU.
    pub pods_lost: u64,
    /// Times a job went on after losing pods: the lost pods replaced, or a JobSet restarted.
    pub restarts: u64,
    /// Jobs that failed after losing pods (past their backoffLimit or maxRestarts, a bare
    /// Pod, a replica with restartPolicy Never).
    pub jobs_failed: u64,
    /// GPU-seconds of work lost when pods ended early: the work since the job's last
    /// checkpoint (part of `gpu.lostGpuHours`).
    pub lost_gpu_seconds: f64,
    /// GPU-seconds of useful work: every run's work up to its finish or its last checkpoint
    /// (restart costs excluded), and the runs going on at the end up to the end.
    pub useful_gpu_seconds: f64,
    /// Each failure and each loss of work with its time (seconds), for report.html's plot of
    /// failures and lost work over time; not written to the summary.
    #[serde(skip)]
    pub over_time: Vec<(f64, kueuesim_engine::outcome::FailureCause, f64)>,
}

/// A workload's part in `summary.failures` (present with a Timeline or `spec.failures`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadFailuresOut {
    /// Times its job went on after losing pods.
    pub restarts: u32,
    /// Seconds of useful running time (its GPU-seconds of useful work per GPU).
    pub useful_seconds: f64,
    /// Effective training time ratio (Kokolis et al., HPCA 2025): useful running time over
    /// the wall time from its first start to its finish (or the end); null if it never ran.
    pub effective_training_time_ratio: Option<f64>,
}

/// GPU capacity and use.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuSummary {
    /// Allocatable GPUs of all nodes, or the nominal GPU quota of all ClusterQueues when the
    /// simulation is quota-only.
    pub capacity: i64,
    /// GPU-seconds allocated to pods.
    pub busy_gpu_seconds: f64,
    /// busy / (capacity × end time); null when either is 0.
    pub utilization: Option<f64>,
    /// GPU-hours of work lost to evictions (not checkpointed).
    pub lost_gpu_hours: f64,
    /// GPU-hours of admitted GPU quota held while the workload's pods were not all running
    /// (`QueueFigures::gpu_hours_held_not_running`, all ClusterQueues).
    pub held_not_running_gpu_hours: f64,
    /// With GPU devices (`spec.gpuPlacement`, openb `gpuSharing: device`): allocation and
    /// fragmentation at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing: Option<GpuSharingOut>,
}

/// GPU devices at the end of the run: allocation and fragmentation as Weng et al. (USENIX ATC
/// 2023) define them (docs/output.md).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuSharingOut {
    /// kube-scheduler's policy for GPU pods (`spec.gpuPlacement.policy`).
    pub policy: &'static str,
    /// GPU devices.
    pub gpus: i64,
    /// Devices some pod holds all or part of.
    pub gpus_allocated: i64,
    /// gpusAllocated / gpus.
    pub gpu_allocation_ratio: Option<f64>,
    /// Milli-GPUs held / (1000 × gpus): the paper's GPU allocation ratio.
    pub milli_gpu_allocation_ratio: Option<f64>,
    /// Free milli-GPUs.
    pub idle_milli_gpus: i64,
    /// Free milli-GPUs the target workload cannot use (null without a target workload).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragmented_milli_gpus: Option<f64>,
    /// fragmentedMilliGpus / idleMilliGpus: the paper's fragmentation rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragmentation_rate: Option<f64>,
    /// fragmentedMilliGpus / (1000 × gpus): fragmented GPUs as a share of all GPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragmented_gpu_ratio: Option<f64>,
}

impl GpuSharingOut {
    /// The figures of an engine's `GpuSharingFigures` under `policy`.
    pub fn of(
        policy: kueuesim_model::gpu::GpuPolicy,
        f: &kueuesim_engine::outcome::GpuSharingFigures,
    ) -> Self {
        let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        let all_milli = (f.gpus * 1000) as f64;
        GpuSharingOut {
            policy: policy.name(),
            gpus: f.gpus,
            gpus_allocated: f.gpus_allocated,
            gpu_allocation_ratio: ratio(f.gpus_allocated as f64, f.gpus as f64),
            milli_gpu_allocation_ratio: ratio(f.milli_allocated as f64, all_milli),
            idle_milli_gpus: f.milli_idle,
            fragmented_milli_gpus: f.milli_fragmented,
            fragmentation_rate: f
                .milli_fragmented
                .and_then(|x| ratio(x, f.milli_idle as f64)),
            fragmented_gpu_ratio: f.milli_fragmented.and_then(|x| ratio(x, all_milli)),
        }
    }
}

/// One workload of the report.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadOut {
    pub namespace: String,
    pub name: String,
    pub kind: String,
    pub local_queue: Option<String>,
    pub cluster_queue: Option<String>,
    pub priority_class: Option<String>,
    pub priority: i32,
    pub scheduler_name: String,
    pub state: &'static str,
    /// For a pending workload managed by Kueue: `active` (in its ClusterQueue's heap) or
    /// `inadmissible` (parked until capacity may have been freed).
    pub queue_status: Option<String>,
    pub created_at: f64,
    pub admitted_at: Option<f64>,
    pub running_at: Option<f64>,
    pub finished_at: Option<f64>,
    /// GPU-seconds its pods held.
    pub gpu_seconds: f64,
    /// GPU-seconds of work lost to its evictions.
    pub lost_gpu_seconds: f64,
    /// Requeues after PodsReady timeouts (`requeueState.count`).
    pub requeue_count: u32,
    /// Time in queue: seconds Pending (holding no quota) before its latest admission, summed
    /// over readmissions; for a workload Pending at the end, up to the end. Unlike
    /// `admittedAt - createdAt`, time spent running before a preemption does not count.
    pub time_in_queue_seconds: f64,
    /// GPU-seconds of admitted GPU quota held while its pods were not all running.
    pub held_not_running_gpu_seconds: f64,
    /// With a Timeline or `spec.failures`: its restarts and useful work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<WorkloadFailuresOut>,
    /// Volcano: when the enqueue action let its PodGroup in (Pending → Inqueue), for a
    /// PodGroup it held back first; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inqueue_at: Option<f64>,
    pub pod_sets: Vec<PodSetOut>,
    /// The topology domain its gang scheduler placed it in (Volcano's allocated HyperNode,
    /// KAI's domain), when a topology constraint applied.
    pub topology_domain: Option<String>,
    pub evictions: Vec<EvictionOut>,
    pub conditions: Vec<ConditionOut>,
    pub events: Vec<EventOut>,
    /// A serving replica a scale-down deleted (at `finishedAt`): upstream its Workload is
    /// gone, so the kubectl views leave it out. Absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub scaled_down: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSetOut {
    pub name: String,
    pub count: u32,
    pub admitted_count: Option<u32>,
    pub min_count: Option<u32>,
    pub requests: std::collections::BTreeMap<String, String>,
    pub flavors: std::collections::BTreeMap<String, String>,
    pub nodes: Vec<String>,
    pub pods: Vec<PodOut>,
    /// Kueue TAS: `status.admission.podSetAssignments[].topologyAssignment` (only for a pod
    /// set admitted on a TAS flavor).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology_assignment: Option<TopologyAssignmentOut>,
}

/// Kueue's `TopologyAssignment`: the levels and, per domain, its values and pod count; only
/// the hostname level when the hostname is the lowest level.
#[derive(Debug, Serialize)]
pub struct TopologyAssignmentOut {
    pub levels: Vec<String>,
    pub domains: Vec<TopologyDomainOut>,
}

#[derive(Debug, Serialize)]
pub struct TopologyDomainOut {
    pub values: Vec<String>,
    pub count: u32,
}

#[derive(Debug, Serialize)]
pub struct PodOut {
    pub name: String,
    pub node: Option<String>,
    /// When it was bound to `node` (seconds); for the kubectl pod views, not in the document
    /// (the `-o json` contract is unchanged).
    #[serde(skip)]
    pub bound_at: Option<f64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionOut {
    pub at: f64,
    pub reason: &'static str,
    pub preemption_reason: Option<&'static str>,
    pub preemptor: Option<String>,
    /// The ClusterQueue the preemptor was admitted to (Kueue's preemptions): for
    /// `metrics.prom`, not in the document.
    #[serde(skip)]
    pub preemptor_cluster_queue: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ConditionOut {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub status: &'static str,
    pub reason: &'static str,
    pub message: String,
    pub at: f64,
}

#[derive(Debug, Serialize)]
pub struct EventOut {
    pub at: f64,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub source: &'static str,
    pub reason: &'static str,
    pub message: String,
    pub cycle: Option<u64>,
}

fn secs(t: SimTime) -> f64 {
    t.as_secs_f64()
}

/// Whether the cluster changes during the run (a Timeline or `spec.failures`): then the
/// summary reports `failures` and `goodput`, and each workload its `failures`.
pub fn living(world: &World) -> bool {
    !world.timeline.is_empty() || !world.config.failures.is_empty()
}

/// Builds the result document.
pub fn result(world: &World, outcome: &Outcome) -> SimulationResult {
    result_with(world, outcome, true)
}

/// The result document; without `with_workloads`, its `workloads` list has only the
/// workloads still waiting (what the summary shows, for `-o summary` of a long replay).
pub fn result_with(world: &World, outcome: &Outcome, with_workloads: bool) -> SimulationResult {
    // The summary comes from a tally: a lean run folded its finished workloads as they
    // finished; otherwise every record is folded here, the same way (so both agree).
    let waiting = |rec: &WorkloadRecord| {
        matches!(
            rec.state,
            WorkloadState::Pending | WorkloadState::QuotaReserved | WorkloadState::Admitted
        )
    };
    // A lean run's unfinished workloads on top of its tally; else every arrived record, with
    // the others counted as not arrived.
    let (mut tally, arrived): (Tally, Vec<(&Workload, &WorkloadRecord)>) = match &outcome.lean {
        Some(lean) => (
            lean.tally.clone_counts(),
            lean.unfinished
                .iter()
                .map(|(_, wl, rec)| (wl, rec))
                .collect(),
        ),
        None => {
            let mut tally = Tally::new(world);
            let arrived: Vec<_> = outcome
                .workloads
                .iter()
                .enumerate()
                .filter_map(|(i, rec)| {
                    Some((world.workload(WorkloadId::from_index(i)), rec.as_ref()?))
                })
                .collect();
            tally.add_not_arrived((outcome.workloads.len() - arrived.len()) as u64);
            (tally, arrived)
        }
    };
    let mut workloads = Vec::new();
    for (wl, rec) in arrived {
        tally.add(world, wl, rec, outcome.stats.end);
        // The summary lists the workloads still waiting: keep those.
        if with_workloads || waiting(rec) {
            workloads.push(workload_out(world, wl, rec, outcome.stats.end));
        }
    }
    let counts = StateCounts {
        total: tally.total,
        pending: tally.count(WorkloadState::Pending),
        quota_reserved: tally.count(WorkloadState::QuotaReserved),
        admitted: tally.count(WorkloadState::Admitted),
        running: tally.count(WorkloadState::Running),
        evicted: tally.count(WorkloadState::Evicted),
        inactive: tally.count(WorkloadState::Inactive),
        finished: tally.count(WorkloadState::Finished),
        not_arrived: tally.not_arrived,
        unmanaged: tally.unmanaged,
    };
    // A lean run's finished workloads' durations stay in its own tally, read there.
    let samples = Samples::new(&tally, outcome.lean.as_ref().map(|l| &l.tally));
    let mut memo = FigureMemo::default();
    let waits = {
        let mut v = Vec::with_capacity(samples.waits().count());
        v.extend(samples.waits().map(SimDuration::millis));
        percentiles_of_millis(v)
    };
    let starts = {
        let mut v = Vec::with_capacity(samples.starts().count());
        v.extend(samples.starts().map(SimDuration::millis));
        percentiles_of_millis(v)
    };
    let end = outcome.stats.end;
    let busy = outcome.stats.gpu_busy_ms as f64 / 1000.0;
    let cap = outcome.stats.gpu_capacity;
    let utilization = (cap > 0 && end.millis() > 0).then(|| busy / (cap as f64 * secs(end)));
    let failures = living(world).then(|| {
        let f = &outcome.stats.failures;
        FailuresOut {
            node_failures: f.node_failures,
            gpu_failures: f.gpu_failures,
            pods_lost: f.pods_lost,
            restarts: f.restarts,
            jobs_failed: f.jobs_failed,
            lost_gpu_seconds: f.lost_gpu_ms as f64 / 1000.0,
            useful_gpu_seconds: outcome.stats.useful_gpu_ms as f64 / 1000.0,
            over_time: f
                .marks
                .iter()
                .map(|m| (secs(m.at), m.what, m.lost_gpu_ms as f64 / 1000.0))
                .collect(),
        }
    });
    let goodput = failures.as_ref().map(|_| {
        (outcome.stats.gpu_busy_ms > 0)
            .then(|| outcome.stats.useful_gpu_ms as f64 / outcome.stats.gpu_busy_ms as f64)
    });
    let serving = (!world.serving.is_empty()).then(|| {
        world
            .serving
            .iter()
            .zip(&outcome.stats.serving)
            .map(|(obj, s)| ServingOut {
                kind: obj.kind.as_str(),
                namespace: obj.namespace.clone(),
                name: obj.name.clone(),
                replica_seconds_wanted: s.wanted_ms as f64 / 1000.0,
                replica_seconds_ready: s.ready_ms as f64 / 1000.0,
                ready_fraction: (s.wanted_ms > 0).then(|| s.ready_ms as f64 / s.wanted_ms as f64),
                replicas_created: s.replicas_created,
                replicas_never_ready: s
                    .replicas_created
                    .saturating_sub(s.times_to_ready_ms.len() as u32),
                time_to_ready_seconds: percentiles(
                    s.times_to_ready_ms
                        .iter()
                        .map(|&ms| ms as f64 / 1000.0)
                        .collect(),
                ),
            })
            .collect()
    });
    // The run-wide distributions are the ClusterQueues' together: taken from theirs.
    memo.split(
        (0..world.cluster_queues.len())
            .map(|i| {
                samples
                    .cluster_queue(ClusterQueueId::from_index(i))
                    .collect()
            })
            .collect(),
    );
    let all = crate::queues::figures(
        &crate::queues::all_queues(&tally),
        samples.all(),
        0,
        cap,
        secs(end),
        &mut memo,
    );
    SimulationResult {
        api_version: "kueuesim.io/v1alpha1",
        kind: "SimulationResult",
        summary: Summary {
            start_time: format_rfc3339(world.config.start_unix_ms),
            end_time: secs(end),
            seed: world.config.seed,
            variation: VariationOut::of(
                &world.config.variation,
                outcome.stats.workload_fingerprint,
            ),
            cycles: outcome.stats.cycles,
            events_processed: outcome.stats.events_processed,
            stopped_early: outcome
                .stats
                .stopped
                .as_ref()
                .map(|s| StoppedEarly::of(s, end)),
            policies: crate::policies::policies(world),
            workloads: counts,
            admissions: outcome.stats.admissions,
            wait_seconds_incl_pending: all.wait_seconds_incl_pending,
            wait_seconds_admitted: waits,
            time_in_queue_seconds_incl_pending: all.time_in_queue_seconds_incl_pending,
            time_in_queue_seconds_admitted: all.time_in_queue_seconds_admitted,
            start_seconds_incl_pending: starts,
            start_waiting: tally.starts_waiting,
            outside_queues: tally.outside_queues,
            jct_seconds_finished: all.jct_seconds_finished,
            bounded_slowdown_finished: all.bounded_slowdown_finished,
            gpu: GpuSummary {
                capacity: cap,
                busy_gpu_seconds: busy,
                utilization,
                lost_gpu_hours: outcome.stats.lost_gpu_ms as f64 / 3_600_000.0,
                held_not_running_gpu_hours: all.gpu_hours_held_not_running,
                sharing: outcome
                    .stats
                    .gpu_sharing
                    .as_ref()
                    .map(|f| GpuSharingOut::of(world.config.gpu.policy, f)),
            },
            failures,
            goodput,
            serving,
            autoscaling: world.autoscaling.as_ref().map(|_| {
                let a = outcome.stats.autoscaling.clone().unwrap_or_default();
                AutoscalingOut {
                    scale_ups: a.scale_ups,
                    nodes_added: a.nodes_added,
                    nodes_removed: a.nodes_removed,
                    peak_nodes: a.peak_nodes,
                    nodes_at_end: a.nodes_at_end,
                    node_hours: a.node_ms as f64 / 3_600_000.0,
                    gpu_hours: a.gpu_ms as f64 / 3_600_000.0,
                    provisioning_requests: a.provisioning_requests,
                    provisioning_failed: a.provisioning_failed,
                    provisioning_rejected: a.provisioning_rejected,
                }
            }),
            // Every reason, zeros included: across seeds and variants a reason one run never
            // saw is a count of 0 there, not a figure it lacks (which a mean would skip).
            evictions: {
                // `NodeFailures` (Kueue TAS's failed-node eviction) only where nodes fail:
                // a cluster that never changes reports what it always did.
                let reasons: Vec<&str> = kueuesim_engine::outcome::EVICTION_REASONS
                    .iter()
                    .copied()
                    .filter(|&r| r != "NodeFailures" || living(world))
                    // KAI's in-queue `preempt` only where KAI Queues are declared.
                    .filter(|&r| r != "Preempt" || !world.kai_queues.is_empty())
                    // KAI's `consolidation` only where it moved pods: runs it never acted in
                    // report what they did before it was modelled.
                    .filter(|&r| r != "Consolidation" || outcome.stats.evictions.contains_key(r))
                    // The admission check's reasons only where a ClusterQueue has one.
                    .filter(|&r| {
                        !r.ends_with("AdmissionCheck")
                            || world
                                .autoscaling
                                .as_ref()
                                .is_some_and(|a| a.checks.iter().any(Option::is_some))
                    })
                    .collect();
                every_reason(&reasons, &outcome.stats.evictions)
            },
            preemptions: every_reason(
                &PreemptionReason::ALL.map(PreemptionReason::as_str),
                &outcome.stats.preemptions,
            ),
            cluster_queues: cq_summaries(world, outcome, &tally, samples, &mut memo),
            local_queues: {
                let mut lqs = crate::queues::local_queue_summaries(
                    world,
                    &tally,
                    samples,
                    cap,
                    secs(end),
                    &mut memo,
                );
                let ms = &outcome.stats.pending_bound.local_queues;
                for (i, lq) in lqs.iter_mut().enumerate() {
                    lq.pending_bound_by = crate::queues::pending_bound_by(world, ms.get(i));
                }
                lqs
            },
            checks: crate::checks::checks_of(world, &tally),
        },
        workloads,
    }
}

/// One workload of the document; `end` (the time the report describes) counts a Pending
/// workload's time in queue so far.
pub fn workload_out(
    world: &World,
    wl: &Workload,
    rec: &WorkloadRecord,
    end: SimTime,
) -> WorkloadOut {
    let mut queued = rec.queued;
    if rec.state == WorkloadState::Pending {
        queued += (end - rec.pending_since).max(SimDuration::ZERO);
    }
    let (local_queue, cluster_queue) = match &wl.queue {
        QueueRef::Unmanaged => (None, None),
        QueueRef::Missing(n) => (Some(n.clone()), None),
        QueueRef::Local(lq) => {
            let lq = world.local_queue(*lq);
            (
                Some(lq.name.clone()),
                Some(world.cluster_queue(lq.cluster_queue).name.clone()),
            )
        }
    };
    let cluster_queue = rec
        .admission
        .as_ref()
        .map(|a| world.cluster_queue(a.cluster_queue).name.clone())
        .or(cluster_queue);
    let pod_sets = wl
        .pod_sets
        .iter()
        .enumerate()
        .map(|(ps, p)| {
            let assignment = rec.admission.as_ref().map(|a| &a.pod_sets[ps]);
            let slots = &rec.placement[ps];
            PodSetOut {
                name: p.name.clone(),
                count: p.count,
                admitted_count: assignment.map(|a| a.count),
                min_count: p.min_count,
                requests: p
                    .requests
                    .iter()
                    .map(|(r, a)| {
                        let name = world.resources.name(r);
                        (name.to_string(), format_amount(name, a))
                    })
                    .collect(),
                flavors: assignment
                    .map(|a| {
                        a.flavors
                            .iter()
                            .map(|&(r, f)| {
                                (
                                    world.resources.name(r).to_string(),
                                    world.flavor(f).name.clone(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                nodes: slots
                    .iter()
                    .flatten()
                    .map(|n| world.node(*n).name.clone())
                    .collect(),
                pods: slots
                    .iter()
                    .enumerate()
                    .map(|(idx, n)| PodOut {
                        name: wl.pod_name(ps, idx),
                        node: n.map(|n| world.node(n).name.clone()),
                        bound_at: rec
                            .bound_at
                            .get(ps)
                            .and_then(|b| b.get(idx).copied().flatten())
                            .map(secs),
                    })
                    .collect(),
                topology_assignment: assignment
                    .and_then(|a| a.topology.as_ref())
                    .map(|topo| topology_assignment_out(world, topo)),
            }
        })
        .collect();
    WorkloadOut {
        namespace: wl.namespace.clone(),
        name: wl.name.clone(),
        kind: wl.kind.clone(),
        local_queue,
        cluster_queue,
        priority_class: wl.priority_class.clone(),
        priority: wl.priority,
        scheduler_name: wl.scheduler_name.clone(),
        state: rec.state.as_str(),
        queue_status: rec.queue_status.map(|q| q.as_str().to_string()),
        created_at: secs(wl.created_at),
        admitted_at: rec.admitted_at.map(secs),
        running_at: rec.running_at.map(secs),
        finished_at: rec.finished_at.map(secs),
        gpu_seconds: rec.gpu_ms.get() as f64 / 1000.0,
        lost_gpu_seconds: rec.lost_gpu_ms.get() as f64 / 1000.0,
        requeue_count: rec.requeue_count,
        time_in_queue_seconds: queued.as_secs_f64(),
        held_not_running_gpu_seconds: rec.idle_quota_gpu_ms.get() as f64 / 1000.0,
        inqueue_at: rec.inqueue_at.map(secs),
        failures: living(world).then(|| WorkloadFailuresOut {
            restarts: rec.restarts,
            useful_seconds: rec.useful_ms.get() as f64 / 1000.0,
            effective_training_time_ratio: rec.ettr(end),
        }),
        pod_sets,
        topology_domain: rec.topology_domain.clone(),
        evictions: rec
            .evictions
            .iter()
            .map(|e| EvictionOut {
                at: secs(e.at),
                reason: e.reason,
                preemption_reason: e.preemption_reason,
                preemptor: e.preemptor.clone(),
                preemptor_cluster_queue: e
                    .preemptor_cluster_queue
                    .map(|c| world.cluster_queue(c).name.clone()),
            })
            .collect(),
        conditions: rec
            .conditions
            .iter()
            .map(|c| ConditionOut {
                kind: c.kind.as_str(),
                status: if c.status { "True" } else { "False" },
                reason: c.reason,
                message: c.message.to_string(),
                at: secs(c.at),
            })
            .collect(),
        events: rec
            .events
            .iter()
            .map(|e| EventOut {
                at: secs(e.at),
                kind: e.kind.as_str(),
                source: e.source,
                reason: e.reason,
                message: e.message.clone(),
                cycle: e.cycle,
            })
            .collect(),
        scaled_down: rec.scaled_down,
    }
}

/// `counts` by reason with every one of `reasons` present (0 where none happened); a reason
/// outside the list (none today) is kept too.
fn every_reason(
    reasons: &[&str],
    counts: &std::collections::BTreeMap<&'static str, u64>,
) -> std::collections::BTreeMap<String, u64> {
    let mut all: std::collections::BTreeMap<String, u64> =
        reasons.iter().map(|r| (r.to_string(), 0)).collect();
    for (k, v) in counts {
        *all.entry(k.to_string()).or_default() += v;
    }
    all
}

/// Per-ClusterQueue totals: workloads that held its quota (the latest admission of each,
/// or, for a requeued one, the queue it waits in) and their GPU time.
fn cq_summaries<'t>(
    world: &World,
    outcome: &Outcome,
    tally: &Tally,
    samples: Samples<'t>,
    memo: &mut FigureMemo<'t>,
) -> Vec<ClusterQueueSummary> {
    let mut out: Vec<ClusterQueueSummary> = world
        .cluster_queues
        .iter()
        .enumerate()
        .map(|(i, cq)| ClusterQueueSummary {
            name: cq.name.clone(),
            cohort: cq.cohort.map(|c| world.cohorts[c.index()].name.clone()),
            admitted_workloads: 0,
            evictions: 0,
            gpu_seconds: 0.0,
            gpu_share: None,
            gpu_seconds_by_hour: GpuSecondsByHour::default(),
            gpu_share_by_hour: GpuShareByHour::default(),
            figures: QueueFigures::default(),
            pending_bound_by: crate::queues::pending_bound_by(
                world,
                outcome.stats.pending_bound.cluster_queues.get(i),
            ),
            quota: crate::queues::quota_of(world, cq),
        })
        .collect();
    let hours = ((outcome.stats.end.millis().max(0) + 3_599_999) / 3_600_000) as usize;
    let by_hour = crate::hourly::by_hour(&outcome.stats.cq_gpu_seconds_by_hour, hours);
    for (s, (secs, share)) in out.iter_mut().zip(by_hour) {
        s.gpu_seconds_by_hour = secs;
        s.gpu_share_by_hour = share;
    }
    let mut total = 0;
    let nominal = crate::queues::nominal_gpu_quota(world);
    let (cap, end) = (outcome.stats.gpu_capacity, secs(outcome.stats.end));
    for (i, (s, t)) in out.iter_mut().zip(&tally.cluster_queues).enumerate() {
        let of_cq = samples.cluster_queue(ClusterQueueId::from_index(i));
        s.figures = crate::queues::figures(t, of_cq, nominal[i], cap, end, memo);
        s.admitted_workloads = t.admitted_workloads;
        s.evictions = t.evictions;
        s.gpu_seconds = t.gpu_ms as f64 / 1000.0;
        total += t.gpu_ms;
    }
    let total = total as f64 / 1000.0;
    if total > 0.0 {
        for s in &mut out {
            s.gpu_share = Some(s.gpu_seconds / total);
        }
    }
    out
}

/// Kueue's `TopologyAssignment` of a pod set.
fn topology_assignment_out(
    world: &World,
    topo: &kueuesim_engine::tas::TopologyAssignment,
) -> TopologyAssignmentOut {
    let t = &world.topologies[topo.topology];
    let labels = match &t.source {
        kueuesim_model::topology::TopologySource::Levels { labels } => labels.clone(),
        kueuesim_model::topology::TopologySource::HyperNodes { .. } => Vec::new(),
    };
    let hostname_only = labels.last().is_some_and(|l| l == "kubernetes.io/hostname");
    let domains = topo
        .domains
        .iter()
        .map(|&(d, count)| {
            let mut values: Vec<String> = t
                .ancestors(d)
                .filter(|&a| a != kueuesim_model::DomainId::ROOT)
                .map(|a| t.domain(a).value.clone())
                .collect();
            values.reverse();
            if hostname_only {
                values = values.split_off(values.len() - 1);
            }
            TopologyDomainOut { values, count }
        })
        .collect();
    TopologyAssignmentOut {
        levels: if hostname_only {
            vec!["kubernetes.io/hostname".into()]
        } else {
            labels
        },
        domains,
    }
}
