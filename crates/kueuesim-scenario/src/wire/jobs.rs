//! The job kinds besides batch/v1 Job: JobSet, the Kubeflow and Ray jobs, Volcano Job, and
//! the rest Kueue integrates.

use super::*;

// ---- other job kinds ---------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobTemplateSpec {
    pub metadata: ObjectMeta,
    pub spec: JobSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicatedJob {
    pub name: Option<S>,
    pub replicas: Option<Spanned<i64>>,
    pub template: JobTemplateSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobSetSpec {
    pub replicated_jobs: Vec<ReplicatedJob>,
    pub failure_policy: Option<JobSetFailurePolicy>,
    pub suspend: Option<bool>,
}

/// A JobSet's `spec.failurePolicy`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobSetFailurePolicy {
    /// How often the JobSet recreates its Jobs after one fails (default 0).
    pub max_restarts: Option<Spanned<i64>>,
}

/// `jobset.x-k8s.io/v1alpha2` JobSet.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobSet {
    pub metadata: ObjectMeta,
    pub spec: JobSetSpec,
    pub status: JobStatus,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicaSpec {
    pub replicas: Option<Spanned<i64>>,
    pub template: PodTemplateSpec,
    /// `Always`, `OnFailure` (the training operator's default), `ExitCode` or `Never`.
    pub restart_policy: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SchedulingPolicy {
    pub priority_class: Option<S>,
    pub min_available: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RunPolicy {
    pub scheduling_policy: Option<SchedulingPolicy>,
    pub suspend: Option<bool>,
    /// Restarts the job survives (no limit when unset).
    pub backoff_limit: Option<Spanned<i64>>,
}

/// Kubeflow `kubeflow.org/v1` PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob and
/// `kubeflow.org/v2beta1` MPIJob: replica specs under one of these keys.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KubeflowSpec {
    pub pytorch_replica_specs: Option<BTreeMap<String, ReplicaSpec>>,
    pub tf_replica_specs: Option<BTreeMap<String, ReplicaSpec>>,
    pub xgb_replica_specs: Option<BTreeMap<String, ReplicaSpec>>,
    pub paddle_replica_specs: Option<BTreeMap<String, ReplicaSpec>>,
    pub jax_replica_specs: Option<BTreeMap<String, ReplicaSpec>>,
    pub mpi_replica_specs: Option<BTreeMap<String, ReplicaSpec>>,
    pub run_policy: Option<RunPolicy>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KubeflowJob {
    pub metadata: ObjectMeta,
    pub spec: KubeflowSpec,
    pub status: JobStatus,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RayHeadGroup {
    pub template: PodTemplateSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RayWorkerGroup {
    pub group_name: Option<S>,
    pub replicas: Option<Spanned<i64>>,
    pub num_of_hosts: Option<Spanned<i64>>,
    pub template: PodTemplateSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RayClusterSpec {
    pub head_group_spec: RayHeadGroup,
    pub worker_group_specs: Vec<RayWorkerGroup>,
    pub enable_in_tree_autoscaling: Option<bool>,
    /// A RayCluster's own `spec.suspend`.
    pub suspend: Option<bool>,
}

/// `ray.io/v1` RayJob (`spec.rayClusterSpec`) or RayCluster (`spec` itself).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RayJobSpec {
    pub ray_cluster_spec: Option<RayClusterSpec>,
    pub submission_mode: Option<String>,
    pub submitter_pod_template: Option<PodTemplateSpec>,
    pub suspend: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RayJob {
    pub metadata: ObjectMeta,
    pub spec: RayJobSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RayCluster {
    pub metadata: ObjectMeta,
    pub spec: RayClusterSpec,
}

/// `apps/v1` Deployment or StatefulSet.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicatedPodsSpec {
    pub replicas: Option<Spanned<i64>>,
    pub template: PodTemplateSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicatedPods {
    pub metadata: ObjectMeta,
    pub spec: ReplicatedPodsSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LeaderWorkerTemplate {
    pub leader_template: Option<PodTemplateSpec>,
    pub worker_template: PodTemplateSpec,
    pub size: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LeaderWorkerSetSpec {
    pub replicas: Option<Spanned<i64>>,
    pub leader_worker_template: LeaderWorkerTemplate,
}

/// `leaderworkerset.x-k8s.io/v1` LeaderWorkerSet.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LeaderWorkerSet {
    pub metadata: ObjectMeta,
    pub spec: LeaderWorkerSetSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RuntimeRef {
    pub name: Option<S>,
    pub api_group: Option<String>,
    pub kind: Option<S>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrainerSpec {
    pub num_nodes: Option<Spanned<i64>>,
    pub resources_per_node: Option<ResourceRequirements>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrainJobSpec {
    pub runtime_ref: RuntimeRef,
    pub trainer: Option<TrainerSpec>,
    pub suspend: Option<bool>,
}

/// `trainer.kubeflow.org/v1alpha1` TrainJob.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrainJob {
    pub metadata: ObjectMeta,
    pub spec: TrainJobSpec,
    pub status: JobStatus,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MlPolicy {
    pub num_nodes: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoPodGroupPolicy {
    pub network_topology: Option<VolcanoNetworkTopology>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodGroupPolicy {
    pub coscheduling: Option<BTreeMap<String, serde_json::Value>>,
    pub volcano: Option<VolcanoPodGroupPolicy>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RuntimeTemplate {
    pub metadata: ObjectMeta,
    pub spec: JobSetSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrainingRuntimeSpec {
    pub ml_policy: Option<MlPolicy>,
    pub pod_group_policy: Option<PodGroupPolicy>,
    pub template: RuntimeTemplate,
}

/// `trainer.kubeflow.org/v1alpha1` ClusterTrainingRuntime or TrainingRuntime.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TrainingRuntime {
    pub metadata: ObjectMeta,
    pub spec: TrainingRuntimeSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PartitionPolicy {
    pub total_partitions: Option<Spanned<i64>>,
    pub partition_size: Option<Spanned<i64>>,
    pub min_partitions: Option<Spanned<i64>>,
    pub network_topology: Option<VolcanoNetworkTopology>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoTask {
    pub name: Option<S>,
    pub replicas: Option<Spanned<i64>>,
    pub min_available: Option<Spanned<i64>>,
    pub template: PodTemplateSpec,
    pub partition_policy: Option<PartitionPolicy>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoJobSpec {
    pub scheduler_name: Option<S>,
    pub min_available: Option<Spanned<i64>>,
    pub queue: Option<S>,
    pub network_topology: Option<VolcanoNetworkTopology>,
    pub tasks: Vec<VolcanoTask>,
}

/// `batch.volcano.sh/v1alpha1` Job.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoJob {
    pub metadata: ObjectMeta,
    pub spec: VolcanoJobSpec,
}
