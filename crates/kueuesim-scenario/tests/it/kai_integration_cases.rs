//! KAI's actions over whole clusters with GPU jobs: the cases of upstream's
//! `pkg/scheduler/actions/integration_tests/` for reclaim, preempt, consolidation and
//! consolidation with reclaim, each written from a table (nodes, KAI queues and departments,
//! jobs with their running pods' nodes) as upstream's `TestTopologyBasic` gives it, run until
//! the cluster settles as upstream's `RunTests` runs the session's actions round after round,
//! and checked against upstream's expected end state: which jobs were evicted (by which action,
//! for whom, when), which moved where, which pending jobs run where and from when.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, result};

use crate::util::{load_text, wl};
use Task::{On, Pending, Share};
use Want::{Evicted, EvictedThenRuns, Moves, Runs, Stays, Waits};

/// Upstream's fake node: its GPUs and topology labels (CPU and memory are left out: upstream's
/// GPU tasks ask none here).
struct Node {
    name: &'static str,
    gpus: u32,
    labels: &'static [(&'static str, &'static str)],
}

/// A KAI queue or department (`TestQueueBasic`, `TestDepartmentBasic`): its GPU quota,
/// over-quota weight (upstream's queues leave it 0 unless the test gives it; a department's is
/// its quota), limit (`MaxAllowedGPUs`, `None` for unlimited), parent and queue priority (`None`
/// for KAI's default, 100).
struct Queue {
    name: &'static str,
    quota: f64,
    weight: f64,
    limit: Option<f64>,
    parent: Option<&'static str>,
    priority: Option<i32>,
}

/// One pod of a job as the test starts: pending, running on a node, or (a GPU share) running
/// on a node's GPU group.
enum Task {
    Pending,
    On(&'static str),
    Share(&'static str, &'static str),
}

/// A job (`TestJobBasic`): `gpus` per pod (below 1 a `gpu-fraction` share) at PriorityClass
/// `pc` (`train` 50, `interactive` 75, `build` 100, `inference` 125, as KAI's constants), its
/// pods, and a required topology level for all of them. A job of several pods is a gang (a KAI
/// PodGroup with minMember the pod count, upstream's default subgroup).
struct Job<'a> {
    name: &'static str,
    queue: &'static str,
    pc: &'static str,
    gpus: f64,
    tasks: &'a [Task],
    required_level: Option<&'static str>,
    /// A `gpu-memory` share (MiB of a device of 100 MiB, upstream's `RequiredGpuMemory` and
    /// the `DefaultGpuMemory` of its fake nodes) in place of `gpus`.
    gpu_memory: Option<u32>,
}

/// What upstream expects of a job once the cluster settles.
enum Want {
    /// Runs on where it ran, never evicted.
    Stays,
    /// Evicted once, at `at` (s), by `reason` (`Reclaim`, `Preempt`, `Consolidation`) for
    /// `by`; its new pods find no room (`Pending`).
    Evicted(&'static str, &'static str, f64),
    /// Evicted by consolidation for `by` at `at` (s), its pods bound again on `on` (sorted).
    Moves(&'static str, f64, &'static [&'static str]),
    /// Evicted once, at `at` (s), by `reason` for `by`, then bound again from `again` (s)
    /// (a later session's action makes room for its new pods).
    EvictedThenRuns(&'static str, &'static str, f64, f64),
    /// A pending job: runs from `at` (s) on `on` (sorted node per pod), never evicted.
    Runs(f64, &'static [&'static str]),
    /// A pending job still pending at the end.
    Waits,
}

/// One upstream case.
struct Case<'a> {
    nodes: &'a [Node],
    queues: &'a [Queue],
    jobs: &'a [Job<'a>],
    /// The levels (node labels, top first) of KAI Topology `cluster-topology`, if any.
    topology: &'static [&'static str],
    want: &'a [(&'static str, Want)],
}

/// The scenario text of a case: a Simulation of 10m with a podTermination of 30s (GPU devices
/// bookkept when a job asks a share), the nodes, the four PriorityClasses, the queues (CPU and
/// memory unlimited, as upstream's test queues; the default department of unlimited quota is
/// left out), and the jobs: the running ones from the start, one second apart in the test's
/// order (so the first is the oldest, as `BuildJobsAndTasksMaps` dates them), the pending ones
/// at 1m.
fn scenario(case: &Case<'_>) -> String {
    let shares = case.jobs.iter().any(|j| j.gpus < 1.0);
    let memory = case.jobs.iter().any(|j| j.gpu_memory.is_some());
    let devices = if shares {
        ", gpuPlacement: {devices: true}"
    } else {
        ""
    };
    let mut s = format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec: {{until: 10m, podTermination: 30s{devices}}}\n"
    );
    for n in case.nodes {
        let mut labels: Vec<String> = n.labels.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        if memory {
            labels.push("nvidia.com/gpu.memory: '100'".to_string());
        }
        s += &format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {}, labels: {{{}}}}}\nstatus:\n  allocatable: {{nvidia.com/gpu: '{}', cpu: '100', pods: '110'}}\n",
            n.name,
            labels.join(", "),
            n.gpus
        );
    }
    for (pc, value) in [
        ("train", 50),
        ("interactive", 75),
        ("build", 100),
        ("inference", 125),
    ] {
        s += &format!(
            "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {pc}}}\nvalue: {value}\n"
        );
    }
    if !case.topology.is_empty() {
        s += "---\napiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: cluster-topology}\nspec:\n  levels:\n";
        for level in case.topology {
            s += &format!("  - nodeLabel: {level}\n");
        }
    }
    for q in case.queues {
        let parent = q
            .parent
            .map(|p| format!("  parentQueue: {p}\n"))
            .unwrap_or_default();
        let priority = q
            .priority
            .map(|p| format!("  priority: {p}\n"))
            .unwrap_or_default();
        s += &format!(
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: {}}}\nspec:\n{parent}{priority}  resources:\n    gpu: {{quota: {}, overQuotaWeight: {}, limit: {}}}\n",
            q.name,
            q.quota,
            q.weight,
            q.limit.unwrap_or(-1.0)
        );
    }
    for (i, j) in case.jobs.iter().enumerate() {
        s += &job_text(i, j);
    }
    s
}

/// A job's objects: its batch Job (with a KAI PodGroup when it has several pods), and the
/// running pods: `kueuesim.io/bound-nodes` for whole GPUs, Pods owned by the Job (carrying
/// their GPU group) for shares.
fn job_text(index: usize, j: &Job<'_>) -> String {
    let running = j.tasks.iter().any(|t| !matches!(t, Task::Pending));
    let arrival = if running {
        format!("{index}s")
    } else {
        "1m".to_string()
    };
    let mut annotations = vec![
        format!("kueuesim.io/arrival: {arrival}"),
        "kueuesim.io/duration: 1h".to_string(),
    ];
    let mut s = String::new();
    let pods = j.tasks.len();
    if pods > 1 {
        s += &format!(
            "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: {}, namespace: team}}\nspec: {{minMember: {pods}, queue: {}}}\n",
            j.name, j.queue
        );
        annotations.push(format!("pod-group-name: {}", j.name));
    }
    if let Some(level) = j.required_level {
        annotations.push("kai.scheduler/topology: cluster-topology".to_string());
        annotations.push(format!(
            "kai.scheduler/topology-required-placement: {level}"
        ));
    }
    let bound: Vec<&str> = j
        .tasks
        .iter()
        .filter_map(|t| match t {
            Task::On(n) => Some(*n),
            _ => None,
        })
        .collect();
    if !bound.is_empty() {
        annotations.push(format!("kueuesim.io/bound-nodes: '{}'", bound.join(",")));
    }
    let share = match j.gpu_memory {
        Some(mib) => format!("gpu-memory: '{mib}'"),
        None => format!("gpu-fraction: '{}'", j.gpus),
    };
    let (template_meta, resources) = if j.gpus < 1.0 {
        (
            format!("    metadata:\n      annotations: {{{share}}}\n"),
            "requests: {cpu: '1'}".to_string(),
        )
    } else {
        (
            String::new(),
            format!("limits: {{nvidia.com/gpu: '{}'}}", j.gpus),
        )
    };
    s += &format!(
        "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: team\n  uid: job-{name}\n  labels: {{kai.scheduler/queue: {queue}}}\n  annotations: {{{annotations}}}\nspec:\n  parallelism: {pods}\n  completions: {pods}\n  template:\n{template_meta}    spec:\n      schedulerName: kai-scheduler\n      priorityClassName: {pc}\n      containers:\n      - resources: {{{resources}}}\n",
        name = j.name,
        queue = j.queue,
        annotations = annotations.join(", "),
        pc = j.pc,
    );
    for (i, t) in j.tasks.iter().enumerate() {
        if let Task::Share(node, group) = t {
            s += &format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}-{i}\n  namespace: team\n  labels: {{kai.scheduler/queue: {queue}, runai-gpu-group: '{group}'}}\n  annotations: {{{share}}}\n  ownerReferences:\n  - {{apiVersion: batch/v1, kind: Job, name: {name}, uid: job-{name}, controller: true}}\nspec:\n  schedulerName: kai-scheduler\n  nodeName: {node}\n  priorityClassName: {pc}\n  containers:\n  - resources: {{requests: {{cpu: '1'}}}}\n",
                name = j.name,
                queue = j.queue,
                pc = j.pc,
            );
        }
    }
    s
}

/// The sorted nodes of a job's bound pods.
fn nodes_of(r: &SimulationResult, name: &str) -> Vec<String> {
    let mut nodes: Vec<String> = wl(r, "team", name)
        .pod_sets
        .iter()
        .flat_map(|p| p.pods.iter().filter_map(|pod| pod.node.clone()))
        .collect();
    nodes.sort();
    nodes
}

/// Runs the case and checks every job against `want`.
fn check(case: &Case<'_>) {
    let text = scenario(case);
    let loaded = load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let r: SimulationResult = result(&loaded.world, &Simulation::new(&loaded.world).run());
    // Every job's state, bind time, nodes and evictions, for a failure's message.
    let all: Vec<String> = case
        .jobs
        .iter()
        .map(|j| {
            let w = wl(&r, "team", j.name);
            let ev: Vec<(f64, &str, Option<&str>)> = w
                .evictions
                .iter()
                .map(|e| (e.at, e.reason, e.preemptor.as_deref()))
                .collect();
            format!(
                "{} {} {:?} {:?} {ev:?}",
                j.name,
                w.state,
                w.running_at,
                nodes_of(&r, j.name)
            )
        })
        .collect();
    let all = all.join("\n  ");
    assert_eq!(case.want.len(), case.jobs.len(), "a want per job");
    for j in case.jobs {
        let (_, want) = case
            .want
            .iter()
            .find(|(n, _)| *n == j.name)
            .unwrap_or_else(|| panic!("no want for {}", j.name));
        let w = wl(&r, "team", j.name);
        // The preemptor as its job: preempt and consolidation name the KAI PodGroup, which
        // for a batch Job's pod is `pg-<job>`.
        let evictions: Vec<(f64, &str, Option<String>)> = w
            .evictions
            .iter()
            .map(|e| {
                let by = e.preemptor.as_deref();
                (
                    e.at,
                    e.reason,
                    by.map(|b| b.replacen("team/pg-", "team/", 1)),
                )
            })
            .collect();
        let nodes = nodes_of(&r, j.name);
        let msg = format!("{}:\n  {all}", j.name);
        match want {
            Want::Stays => {
                let mut start: Vec<&str> = j
                    .tasks
                    .iter()
                    .filter_map(|t| match t {
                        Task::On(n) | Task::Share(n, _) => Some(*n),
                        Task::Pending => None,
                    })
                    .collect();
                start.sort();
                assert!(evictions.is_empty(), "{msg}");
                assert_eq!((w.state, nodes), ("Running", start_owned(&start)), "{msg}");
            }
            Want::Evicted(reason, by, at) => {
                let by = format!("team/{by}");
                assert_eq!(evictions, [(*at, *reason, Some(by))], "{msg}");
                assert_eq!(w.state, "Pending", "{msg}");
            }
            Want::EvictedThenRuns(reason, by, at, again) => {
                let by = format!("team/{by}");
                assert_eq!(evictions, [(*at, *reason, Some(by))], "{msg}");
                assert_eq!((w.state, w.running_at), ("Running", Some(*again)), "{msg}");
            }
            Want::Moves(by, at, on) => {
                let by = format!("team/{by}");
                assert_eq!(evictions, [(*at, "Consolidation", Some(by))], "{msg}");
                assert_eq!((w.state, nodes), ("Running", start_owned(on)), "{msg}");
            }
            Want::Runs(at, on) => {
                assert!(evictions.is_empty(), "{msg}");
                assert_eq!(
                    (w.state, w.running_at, nodes),
                    ("Running", Some(*at), start_owned(on)),
                    "{msg}"
                );
            }
            Want::Waits => {
                assert!(evictions.is_empty(), "{msg}");
                assert_eq!(w.state, "Pending", "{msg}");
            }
        }
    }
}

fn start_owned(nodes: &[&str]) -> Vec<String> {
    nodes.iter().map(|n| n.to_string()).collect()
}

/// Upstream's fake node of `gpus` GPUs, no labels.
fn node(name: &'static str, gpus: u32) -> Node {
    Node {
        name,
        gpus,
        labels: &[],
    }
}

/// A queue of `quota` GPUs at over-quota weight `weight`, no limit, no parent.
fn queue(name: &'static str, quota: f64, weight: f64) -> Queue {
    Queue {
        name,
        quota,
        weight,
        limit: None,
        parent: None,
        priority: None,
    }
}

/// A department of `quota` GPUs: upstream's test builder gives it an over-quota weight of its
/// quota.
fn department(name: &'static str, quota: f64) -> Queue {
    queue(name, quota, quota)
}

/// A job of one `gpu-memory` share of `mib` per pod.
fn memory_job<'a>(
    name: &'static str,
    queue: &'static str,
    pc: &'static str,
    mib: u32,
    tasks: &'a [Task],
) -> Job<'a> {
    Job {
        gpu_memory: Some(mib),
        ..job(name, queue, pc, 0.0, tasks)
    }
}

impl Queue {
    fn parent(self, parent: &'static str) -> Queue {
        Queue {
            parent: Some(parent),
            ..self
        }
    }

    fn priority(self, priority: i32) -> Queue {
        Queue {
            priority: Some(priority),
            ..self
        }
    }
}

/// A job of `gpus` per pod with pods `tasks`, no topology constraint.
fn job<'a>(
    name: &'static str,
    queue: &'static str,
    pc: &'static str,
    gpus: f64,
    tasks: &'a [Task],
) -> Job<'a> {
    Job {
        name,
        queue,
        pc,
        gpus,
        tasks,
        required_level: None,
        gpu_memory: None,
    }
}

#[test]
fn reclaim_1_train_job_running_for_queue0_1_train_job_pending_for_queue1_reclaim() {
    // integration_tests/reclaim/reclaim_test.go: "1 train job running for queue0, 1 train job pending for queue1 - reclaim".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 1.0), queue("queue1", 1.0, 1.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Evicted("Reclaim", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_this_is_used_by_the_demo_2_jobs_running_for_queue0_on_3_gpus_1_job_run() {
    // integration_tests/reclaim/reclaim_test.go: "(This is used by the demo) 2 jobs running for queue0 on 3 GPUs, 1 job running for queue1 on 1 GPU, 1 pending job for queue1 - reclaim".
    check(&Case {
        nodes: &[node("node0", 2), node("node1", 2)],
        queues: &[queue("queue0", 2.0, 2.0), queue("queue1", 2.0, 2.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue1", "train", 2.0, &[On("node1")]),
            job("running-job2", "queue1", "train", 1.0, &[On("node0")]),
            job("pending-job0", "queue0", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("running-job2", Evicted("Reclaim", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_2_jobs_running_for_queue0_on_3_gpus_1_job_running_for_queue1_on_1_gpu() {
    // integration_tests/reclaim/reclaim_test.go: "2 jobs running for queue0 on 3 GPUs, 1 job running for queue1 on 1 GPU, 1 pending job for queue1 - reclaim".
    check(&Case {
        nodes: &[node("node0", 2), node("node1", 2)],
        queues: &[queue("queue0", 2.0, 2.0), queue("queue1", 2.0, 2.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node1")]),
            job("running-job1", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job2", "queue1", "train", 1.0, &[On("node1")]),
            job("pending-job0", "queue1", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Evicted("Reclaim", "pending-job0", 60.0)),
            ("running-job2", Stays),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_2_jobs_running_for_queue0_on_3_gpus_1_job_running_for_queue1_on_1_gpu_2() {
    // integration_tests/reclaim/reclaim_test.go: "2 jobs running for queue0 on 3 GPUs, 1 job running for queue1 on 1 GPU, 1 pending job for queue1, deserved of queue1 is 1 -  don't reclaim".
    check(&Case {
        nodes: &[node("node0", 2), node("node1", 2)],
        queues: &[queue("queue0", 2.0, 2.0), queue("queue1", 1.0, 1.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node1")]),
            job("running-job1", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job2", "queue1", "train", 1.0, &[On("node1")]),
            job("pending-job0", "queue1", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("running-job2", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn reclaim_2_jobs_running_for_queue0_on_3_gpus_1_job_running_for_queue1_on_1_gpu_3() {
    // integration_tests/reclaim/reclaim_test.go: "2 jobs running for queue0 on 3 GPUs, 1 job running for queue1 on 1 GPU, 1 pending job for queue1, deserved of queue1 is 1 -  don't reclaim".
    check(&Case {
        nodes: &[node("node0", 2), node("node1", 2)],
        queues: &[queue("queue0", 2.0, 2.0), queue("queue1", 1.0, 1.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node1")]),
            job("running-job1", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job2", "queue1", "train", 1.0, &[On("node1")]),
            job("pending-job0", "queue1", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("running-job2", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn reclaim_1_running_job_over_quota_but_with_queue_that_has_higher_reclaimable_de() {
    // integration_tests/reclaim/reclaim_test.go: "1 running job over quota but with queue that has higher reclaimable deserved gpus, other job is pending but asks the exact amount of GPUs as in deserved, cluster is in over capacity - reclaim".
    check(&Case {
        nodes: &[node("node0", 8)],
        queues: &[queue("queue0", 6.0, 6.0), queue("queue1", 5.0, 5.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 8.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 5.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Evicted("Reclaim", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_queue0_is_over_quota_queue1_is_under_quota_yet_we_don_t_reclaim_becaus() {
    // integration_tests/reclaim/reclaim_test.go: "queue0 is over quota, queue1 is under quota, yet we don't reclaim because allocate will case a loop (this is a bug in allocate)".
    // DIFFERENCE (docs/semantics.md, KAI reclaim): upstream reclaims nothing (its name calls
    // that outcome a bug in allocate). Here pending-job1 (1 GPU) takes queue1 to its deserved
    // 2, under the guarantee of its deserved quota, and reclaims queue0's youngest job,
    // running-job1, which leaves queue0 at its deserved 2.
    check(&Case {
        nodes: &[node("node0", 4)],
        queues: &[queue("queue0", 2.0, 2.0), queue("queue1", 2.0, 2.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job2", "queue1", "train", 1.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 3.0, &[Pending]),
            job("pending-job1", "queue1", "train", 1.0, &[Pending]),
            job("pending-job2", "queue0", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Evicted("Reclaim", "pending-job1", 60.0)),
            ("running-job2", Stays),
            ("pending-job0", Waits),
            ("pending-job1", Runs(90.0, &["node0"])),
            ("pending-job2", Waits),
        ],
    });
}

#[test]
fn reclaim_2_train_job_for_overquota_project_1_1_job_for_overquota_project_with_d() {
    // integration_tests/reclaim/reclaim_test.go: "2 train job for overquota project 1, 1 job for overquota project with deserved of 0, 1 job recalim from different project - reclaim the job with quota of 0".
    check(&Case {
        nodes: &[node("node0", 4)],
        queues: &[
            queue("queue0", 1.0, 1.0),
            queue("queue1", 1.0, 1.0),
            queue("queue2", 0.0, 0.0),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job2", "queue2", "train", 1.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("running-job2", Evicted("Reclaim", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_2_train_job_for_overquota_project_1_1_job_for_overquota_project_with_d_2() {
    // integration_tests/reclaim/reclaim_test.go: "2 train job for overquota project 1, 1 job for overquota project with deserved of 0, 1 job recalim from different project - reclaim from less prioritized queue".
    // As upstream: running-job1 is reclaimed from queue0, the queue of lower priority: the
    // victim queue order (`prioritizeUnderUtilized`) calls a queue over its fair share only
    // when it is over in GPUs, CPU and memory alike (`FairShare.Less(AllocatedShare)`), which
    // no queue of these CPU-less jobs is, so the queue priority decides. Upstream's case
    // stops after one session; here running-job1's new pod, its queue within its fair share
    // of 2 GPUs with it, reclaims running-job3 of queue2 (over its fair share of 1) at 1m30s
    // and runs from 2m.
    check(&Case {
        nodes: &[node("node0", 4)],
        queues: &[
            queue("queue0", 1.0, 1.0),
            queue("queue1", 1.0, 1.0),
            queue("queue2", 1.0, 0.0).priority(101),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job2", "queue2", "train", 1.0, &[On("node0")]),
            job("running-job3", "queue2", "train", 1.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            (
                "running-job1",
                EvictedThenRuns("Reclaim", "pending-job0", 60.0, 120.0),
            ),
            ("running-job2", Stays),
            ("running-job3", Evicted("Reclaim", "running-job1", 90.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_reclaim_according_to_the_fairness_ratio_more_gpus_then_sum_of_deserved() {
    // integration_tests/reclaim/reclaim_test.go: "Reclaim according to the fairness ratio, more GPUs then sum of deserved GPUs".
    check(&Case {
        nodes: &[node("node0", 8)],
        queues: &[queue("queue0", 1.0, 1.0), queue("queue1", 1.0, 1.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 3.0, &[On("node0")]),
            job("running-job2", "queue0", "train", 4.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 4.0, &[Pending]),
            job("pending-job1", "queue1", "train", 4.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("running-job2", Evicted("Reclaim", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
            ("pending-job1", Waits),
        ],
    });
}

#[test]
fn reclaim_reclaim_according_to_the_reclaimable_deserved_gpus_queue0_has_1_gpu_fr() {
    // integration_tests/reclaim/reclaim_test.go: "Reclaim according to the reclaimable deserved GPUs, queue0 has 1 GPU from remaining from setQueueReclaimableResources remaining logic".
    check(&Case {
        nodes: &[node("node0", 7)],
        queues: &[queue("queue0", 2.0, 2.0), queue("queue1", 1.0, 1.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 4.0, &[On("node0")]),
            job("running-job1", "queue1", "train", 3.0, &[On("node0")]),
            job("pending-job0", "queue0", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Evicted("Reclaim", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_classic_reclaim_for_train_jobs_between_departments() {
    // integration_tests/reclaim/reclaim_test.go: "Classic reclaim for train jobs between departments".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[
            department("d1", 1.0),
            department("d2", 1.0),
            queue("queue0", 1.0, 1.0).parent("d1"),
            queue("queue1", 1.0, 1.0).parent("d2"),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "build", 1.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Evicted("Reclaim", "pending-job0", 60.0)),
            ("running-job1", Stays),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_classic_interactive_job_reclaim_train_job_from_different_department() {
    // integration_tests/reclaim/reclaim_test.go: "Classic interactive job reclaim train job from different department".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[
            department("d1", 1.0),
            department("d2", 1.0),
            queue("queue0", 1.0, 1.0).parent("d1"),
            queue("queue1", 1.0, 1.0).parent("d2"),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "build", 1.0, &[On("node0")]),
            job("pending-job0", "queue1", "build", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Evicted("Reclaim", "pending-job0", 60.0)),
            ("running-job1", Stays),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_don_t_reclaim_if_department_will_be_overquota() {
    // integration_tests/reclaim/reclaim_test.go: "Don't reclaim if department will be overquota".
    check(&Case {
        nodes: &[node("node0", 4)],
        queues: &[
            department("d1", 2.0),
            department("d2", 2.0),
            queue("queue0", 1.0, 1.0).parent("d1"),
            queue("queue1", 1.0, 1.0).parent("d2"),
            queue("queue2", 1.0, 1.0).parent("d2"),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 3.0, &[On("node0")]),
            job("running-job1", "queue1", "build", 1.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 2.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn reclaim_reclaim_trains_according_to_deserved_quota() {
    // integration_tests/reclaim/reclaim_test.go: "Reclaim trains according to deserved quota".
    check(&Case {
        nodes: &[node("node0", 8)],
        queues: &[
            department("d1", 1.0),
            department("d2", 1.0),
            queue("queue0", 1.0, 1.0).parent("d1"),
            queue("queue1", 1.0, 1.0).parent("d2"),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 4.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 1.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 4.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Evicted("Reclaim", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_reclaim_trains_according_to_priority() {
    // integration_tests/reclaim/reclaim_test.go: "Reclaim trains according to priority".
    check(&Case {
        nodes: &[node("node0", 8)],
        queues: &[
            department("d1", 1.0),
            queue("queue0", 1.0, 2.0).parent("d1"),
            queue("queue1", 1.0, 1.0).parent("d1"),
            queue("reclaimer-queue", 0.0, 1.0)
                .parent("d1")
                .priority(101),
        ],
        jobs: &[
            job("q0-running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("q0-running-job1", "queue0", "train", 1.0, &[On("node0")]),
            job("q0-running-job2", "queue0", "train", 1.0, &[On("node0")]),
            job("q0-running-job3", "queue0", "train", 1.0, &[On("node0")]),
            job("q0-running-job4", "queue0", "train", 1.0, &[On("node0")]),
            job("q1-running-job0", "queue1", "train", 1.0, &[On("node0")]),
            job("q1-running-job1", "queue1", "train", 1.0, &[On("node0")]),
            job("q1-running-job2", "queue1", "train", 1.0, &[On("node0")]),
            job("reclaimer", "reclaimer-queue", "train", 3.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("q0-running-job0", Stays),
            ("q0-running-job1", Stays),
            ("q0-running-job2", Stays),
            ("q0-running-job3", Evicted("Reclaim", "reclaimer", 60.0)),
            ("q0-running-job4", Evicted("Reclaim", "reclaimer", 60.0)),
            ("q1-running-job0", Stays),
            ("q1-running-job1", Stays),
            ("q1-running-job2", Evicted("Reclaim", "reclaimer", 60.0)),
            ("reclaimer", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_reclaim_from_different_department_and_same_department() {
    // integration_tests/reclaim/reclaim_test.go: "Reclaim from different department and same department".
    check(&Case {
        nodes: &[node("node0", 4)],
        queues: &[
            department("d1", 0.0),
            department("d2", 4.0),
            queue("queue0", 1.0, 1.0).parent("d1"),
            queue("queue1", 0.0, 0.0).parent("d2"),
            queue("queue2", 4.0, 4.0).parent("d2"),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job1", "queue1", "train", 2.0, &[On("node0")]),
            job("pending-job0", "queue2", "train", 4.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Evicted("Reclaim", "pending-job0", 60.0)),
            ("running-job1", Evicted("Reclaim", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_reclaim_job_when_the_pending_job_with_the_second_highest_priority_job() {
    // integration_tests/reclaim/reclaim_test.go: "Reclaim job when the pending job with the second highest priority job should reclaim (this was a bug)".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 0.0, 0.0), queue("queue1", 1.0, 1.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("pending-job0", "queue1", "build", 2.0, &[Pending]),
            job("pending-job1", "queue1", "build", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Evicted("Reclaim", "pending-job1", 60.0)),
            ("pending-job0", Waits),
            ("pending-job1", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_verify_we_do_only_1_round_of_gpu_allocation_for_whole_gpus_jobs_and_gi() {
    // integration_tests/reclaim/reclaim_test.go: "Verify we do only 1 round of GPU allocation for whole GPUs jobs, and give the GPUs to the one with the bigger remaining - this is a bug we had".
    // queue0 deserves 4 and holds 7, queue1 deserves 2 and asks 3: of the 2 GPUs over quota a
    // round by weight gives queue0 1 (of 1.33) and queue1 none (of 0.67); upstream's
    // `divideUpToFairShare` runs no second round (no queue asked less than its slice), and
    // the GPU left goes to the larger fraction, queue1, whose fair share is then 3. Fails on
    // the main branch before this case, where a second round by weight gave queue0 the GPU
    // and pending-job0 waited.
    check(&Case {
        nodes: &[node("node0", 8)],
        queues: &[queue("queue0", 4.0, 4.0), queue("queue1", 2.0, 2.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 5.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job2", "queue0", "train", 1.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 3.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Evicted("Reclaim", "pending-job0", 60.0)),
            ("running-job2", Evicted("Reclaim", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_1_queue_with_big_quota_will_be_satisfied_with_1_gpu_give_the_rest_of_t() {
    // integration_tests/reclaim/reclaim_test.go: "1 queue with big quota will be satisfied with 1 gpu, give the rest of the gpus according to the last test".
    check(&Case {
        nodes: &[node("node0", 9)],
        queues: &[
            queue("queue0", 4.0, 4.0),
            queue("queue1", 4.0, 4.0),
            queue("queue2", 10.0, 10.0),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 5.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job2", "queue0", "train", 1.0, &[On("node0")]),
            job("pending-job3", "queue2", "train", 1.0, &[Pending]),
            job("pending-job0", "queue1", "train", 3.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Evicted("Reclaim", "pending-job0", 60.0)),
            ("running-job2", Evicted("Reclaim", "pending-job0", 60.0)),
            ("pending-job3", Runs(60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_verify_we_do_only_1_round_of_gpu_allocation_for_whole_gpus_jobs_this_i() {
    // integration_tests/reclaim/reclaim_test.go: "Verify we do only 1 round of GPU allocation for whole GPUs jobs - this is a bug we had".
    check(&Case {
        nodes: &[node("node0", 4)],
        queues: &[queue("queue0", 2.0, 2.0), queue("queue1", 1.0, 1.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 3.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 2.0, &[Pending]),
        ],
        topology: &[],
        want: &[("running-job0", Stays), ("pending-job0", Waits)],
    });
}

#[test]
fn reclaim_d2_is_under_deserved_quota_and_d1_is_over_quota_and_within_fair_share() {
    // integration_tests/reclaim/reclaim_test.go: "d2 is under deserved quota and d1 is over quota and within fair share - reclaim".
    check(&Case {
        nodes: &[node("node0", 3), node("node1", 3)],
        queues: &[
            department("d1", 2.0),
            department("d2", 2.0),
            queue("queue0", 2.0, 3.0).parent("d1"),
            queue("queue1", 2.0, 0.0).parent("d2"),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job1", "queue0", "build", 2.0, &[On("node1")]),
            job("pending-job0", "queue1", "train", 2.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Evicted("Reclaim", "pending-job0", 60.0)),
            ("running-job1", Stays),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_both_departments_got_deserved_quota_a_queue_within_d2_is_under_quota_r() {
    // integration_tests/reclaim/reclaim_test.go: "both departments got deserved quota, a queue within d2 is under quota - reclaim from another queue".
    check(&Case {
        nodes: &[node("node0", 3), node("node1", 3)],
        queues: &[
            department("d1", 3.0),
            department("d2", 3.0),
            queue("queue0", 3.0, 0.0).parent("d1"),
            queue("queue1", 2.0, 0.0).parent("d2"),
            queue("queue2", 1.0, 0.0).parent("d2"),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job1", "queue0", "build", 1.0, &[On("node1")]),
            job("running-job2", "queue1", "train", 2.0, &[On("node1")]),
            job("running-job3", "queue1", "train", 1.0, &[On("node0")]),
            job("pending-job0", "queue2", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("running-job2", Stays),
            ("running-job3", Evicted("Reclaim", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn reclaim_departments_and_queues_are_over_deserved_quota_and_within_fair_share_s() {
    // integration_tests/reclaim/reclaim_test.go: "departments and queues are over deserved quota and within fair share - should not reclaim".
    check(&Case {
        nodes: &[node("node0", 3), node("node1", 3)],
        queues: &[
            department("d1", 1.0),
            department("d2", 1.0),
            queue("queue0", 1.0, 1.0).parent("d1"),
            queue("queue1", 1.0, 1.0).parent("d2"),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job1", "queue0", "build", 1.0, &[On("node1")]),
            job("running-job2", "queue1", "train", 2.0, &[On("node1")]),
            job("running-job3", "queue1", "train", 1.0, &[On("node0")]),
            job("pending-job0", "queue1", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("running-job2", Stays),
            ("running-job3", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn reclaim_both_departments_are_under_deserved_quota_should_not_reclaim() {
    // integration_tests/reclaim/reclaim_test.go: "both departments are under deserved quota - should not reclaim".
    check(&Case {
        nodes: &[node("node0", 1), node("node1", 1)],
        queues: &[
            department("d1", 2.0),
            department("d2", 2.0),
            queue("queue0", 1.0, 0.0).parent("d1"),
            queue("queue1", 1.0, 0.0).parent("d2"),
        ],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue1", "build", 1.0, &[On("node1")]),
            job("pending-job0", "queue1", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn reclaim_reclaim_based_on_releasing_resources_with_consolidation() {
    // integration_tests/reclaim/reclaim_test.go: "Reclaim based on releasing resources with consolidation".
    check(&Case {
        nodes: &[node("node0", 1), node("node1", 1)],
        queues: &[
            queue("queue0", 0.0, 0.0),
            queue("queue1", 0.0, 0.0),
            queue("queue2", 2.0, 0.0),
        ],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "0")],
            ),
            job(
                "running-job1",
                "queue1",
                "train",
                0.5,
                &[Share("node1", "0")],
            ),
            job("pending-job", "queue2", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Moves("pending-job", 60.0, &["node0"])),
            ("pending-job", Runs(90.0, &["node1"])),
        ],
    });
}

#[test]
fn reclaim_reclaim_based_on_releasing_resources_without_consolidation() {
    // integration_tests/reclaim/reclaim_test.go: "Reclaim based on releasing resources without consolidation".
    check(&Case {
        nodes: &[node("node0", 1), node("node1", 1)],
        queues: &[
            queue("queue0", 0.0, 0.0),
            queue("queue1", 0.0, 0.0),
            queue("queue2", 2.0, 0.0),
        ],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.7,
                &[Share("node0", "0")],
            ),
            job(
                "running-job1",
                "queue1",
                "train",
                0.7,
                &[Share("node1", "0")],
            ),
            job("pending-job", "queue2", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Evicted("Reclaim", "pending-job", 60.0)),
            ("pending-job", Runs(90.0, &["node1"])),
        ],
    });
}

#[test]
fn reclaim_reclaim_based_on_releasing_and_idle_resources() {
    // integration_tests/reclaim/reclaim_test.go: "Reclaim based on releasing and idle resources".
    check(&Case {
        nodes: &[node("node0", 1), node("node1", 1)],
        queues: &[queue("queue0", 0.0, 0.0), queue("queue1", 2.0, 0.0)],
        jobs: &[
            job(
                "running-job",
                "queue0",
                "train",
                0.7,
                &[Share("node0", "0")],
            ),
            job("pending-job", "queue1", "train", 1.0, &[Pending, Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job", Evicted("Reclaim", "pending-job", 60.0)),
            ("pending-job", Runs(90.0, &["node0", "node1"])),
        ],
    });
}

#[test]
fn reclaim_reclaim_based_on_releasing_and_idle_resources_with_fractions() {
    // integration_tests/reclaim/reclaim_test.go: "Reclaim based on releasing and idle resources with fractions".
    check(&Case {
        nodes: &[node("node0", 1), node("node1", 1)],
        queues: &[queue("queue0", 0.0, 0.0), queue("queue1", 2.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.7,
                &[Share("node0", "0")],
            ),
            job(
                "running-job1",
                "queue1",
                "train",
                0.3,
                &[Share("node1", "0")],
            ),
            job("pending-job", "queue1", "train", 0.7, &[Pending, Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Evicted("Reclaim", "pending-job", 60.0)),
            ("running-job1", Stays),
            ("pending-job", Runs(90.0, &["node0", "node1"])),
        ],
    });
}

#[test]
fn preempt_3_train_job_running_1_build_job_pending_no_need_to_preempt_two_jobs() {
    // integration_tests/preempt/preempt_test.go: "3 train job running, 1 build job pending - no need to preempt two jobs".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 2.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "0")],
            ),
            job("running-job1", "queue0", "train", 1.0, &[On("node0")]),
            job(
                "running-job2",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "0")],
            ),
            job("pending-job0", "queue0", "build", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Evicted("Preempt", "pending-job0", 60.0)),
            ("running-job2", Stays),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn preempt_1_train_job_running_1_build_job_pending_preempt() {
    // integration_tests/preempt/preempt_test.go: "1 train job running, 1 build job pending - preempt".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("pending-job0", "queue0", "build", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Evicted("Preempt", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn preempt_3_jobs_running_for_queue0_on_4_gpus_1_pending_build_job_for_queue0_des() {
    // integration_tests/preempt/preempt_test.go: "3 jobs running for queue0 on 4 GPUs, 1 pending build job for queue0, deserved of queue1 is 4 - preempt".
    check(&Case {
        nodes: &[node("node0", 4)],
        queues: &[queue("queue0", 4.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job2", "queue0", "train", 1.0, &[On("node0")]),
            job("pending-job0", "queue0", "build", 4.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Evicted("Preempt", "pending-job0", 60.0)),
            ("running-job1", Evicted("Preempt", "pending-job0", 60.0)),
            ("running-job2", Evicted("Preempt", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn preempt_3_jobs_running_for_queue0_on_4_gpus_1_pending_build_job_for_queue0_no() {
    // integration_tests/preempt/preempt_test.go: "3 jobs running for queue0 on 4 GPUs, 1 pending build job for queue0, no node can contain build job - don't preempt".
    check(&Case {
        nodes: &[node("node0", 2), node("node1", 2)],
        queues: &[queue("queue0", 4.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 2.0, &[On("node1")]),
            job("running-job2", "queue0", "train", 1.0, &[On("node0")]),
            job("pending-job0", "queue0", "build", 4.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("running-job2", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn preempt_3_jobs_running_for_queue0_on_4_gpus_1_pending_build_job_for_queue0_des_2() {
    // integration_tests/preempt/preempt_test.go: "3 jobs running for queue0 on 4 GPUs, 1 pending build job for queue0, deserved of queue1 is 3 - don't preempt".
    check(&Case {
        nodes: &[node("node0", 4)],
        queues: &[queue("queue0", 3.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job2", "queue0", "train", 1.0, &[On("node0")]),
            job("pending-job0", "queue0", "build", 4.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("running-job2", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn preempt_no_jobs_pending_don_t_preempt() {
    // integration_tests/preempt/preempt_test.go: "No jobs pending - don't preempt".
    check(&Case {
        nodes: &[node("node0", 4)],
        queues: &[queue("queue0", 3.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "build", 2.0, &[On("node0")]),
            job("running-job2", "queue0", "train", 1.0, &[On("node0")]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("running-job2", Stays),
        ],
    });
}

#[test]
fn preempt_gang_classic_gang_preempt() {
    // integration_tests/preempt/preemptGang_test.go: "Classic gang preempt".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 2.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("pending-job0", "queue0", "build", 1.0, &[Pending, Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Evicted("Preempt", "pending-job0", 60.0)),
            ("pending-job0", Runs(90.0, &["node0", "node0"])),
        ],
    });
}

#[test]
fn preempt_gang_some_of_the_pods_are_running_and_some_are_pending_preempt_those_who_ar() {
    // integration_tests/preempt/preemptGang_test.go: "Some of the pods are running and some are pending- preempt those who are needed in order to allocate all the pods of gang job".
    check(&Case {
        nodes: &[node("node0", 3)],
        queues: &[queue("queue0", 2.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 1.0, &[On("node0")]),
            job(
                "pending-job0",
                "queue0",
                "build",
                1.0,
                &[On("node0"), Pending],
            ),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Evicted("Preempt", "pending-job0", 2.0)),
            ("pending-job0", Runs(32.0, &["node0", "node0"])),
        ],
    });
}

#[test]
fn preempt_gang_preempt_gang_job() {
    // integration_tests/preempt/preemptGang_test.go: "preempt gang job".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-gang-job0",
                "queue0",
                "train",
                1.0,
                &[On("node0"), On("node0")],
            ),
            job("pending-job0", "queue0", "build", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            (
                "running-gang-job0",
                Evicted("Preempt", "pending-job0", 60.0),
            ),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn consolidation_1_train_job_of_1_gpu_running_on_node0_1_train_job_of_1_gpu_running_on() {
    // integration_tests/consolidation/consolidation_test.go: "1 train job of 1 GPU running on node0, 1 train job of 1 GPU running on node 0, 1 pending job of 2 GPUs - consolidate".
    check(&Case {
        nodes: &[node("node0", 2), node("node1", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 1.0, &[On("node1")]),
            job("pending-job0", "queue0", "train", 2.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node1"])),
        ],
    });
}

#[test]
fn consolidation_1_build_job_of_1_gpu_running_on_node0_1_build_job_of_1_gpu_running_on() {
    // integration_tests/consolidation/consolidation_test.go: "1 build job of 1 GPU running on node0, 1 build job of 1 GPU running on node 0, 1 pending job of 2 GPUs - don't consolidate".
    check(&Case {
        nodes: &[node("node0", 2), node("node1", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "build", 1.0, &[On("node0")]),
            job("running-job1", "queue0", "build", 1.0, &[On("node1")]),
            job("pending-job0", "queue0", "train", 2.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn consolidation_topology_consolidation_with_required_simple() {
    // integration_tests/consolidation/consolidation_test.go: "topology consolidation with required - simple".
    check(&Case {
        nodes: &[
            Node {
                name: "zone1-rack1",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack1")],
            },
            Node {
                name: "zone1-rack2",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack2")],
            },
            Node {
                name: "zone1-rack3",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack3")],
            },
            Node {
                name: "zone2-rack1",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack1")],
            },
            Node {
                name: "zone2-rack2",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack2")],
            },
            Node {
                name: "zone2-rack3",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack3")],
            },
        ],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job-zone1-rack1",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack1")],
            ),
            job(
                "running-job-zone1-rack2",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack2")],
            ),
            job(
                "running-job-zone1-rack3",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack3")],
            ),
            job(
                "running-job-zone2-rack1",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack1")],
            ),
            job(
                "running-job-zone2-rack2",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack2")],
            ),
            job(
                "running-job-zone2-rack3",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack3")],
            ),
            Job {
                required_level: Some("zone"),
                ..job("pending-job0", "queue0", "train", 3.0, &[Pending, Pending])
            },
        ],
        topology: &["zone", "rack"],
        want: &[
            ("running-job-zone1-rack1", Stays),
            ("running-job-zone1-rack2", Stays),
            ("running-job-zone1-rack3", Stays),
            ("running-job-zone2-rack1", Stays),
            (
                "running-job-zone2-rack2",
                Moves("pending-job0", 60.0, &["zone1-rack1"]),
            ),
            (
                "running-job-zone2-rack3",
                Moves("pending-job0", 60.0, &["zone1-rack1"]),
            ),
            ("pending-job0", Runs(90.0, &["zone2-rack2", "zone2-rack3"])),
        ],
    });
}

#[test]
fn consolidation_required_topology_consolidation_with_non_feasible_nodes() {
    // integration_tests/consolidation/consolidation_test.go: "required topology consolidation with non-feasible nodes".
    check(&Case {
        nodes: &[
            Node {
                name: "sneaky-node",
                gpus: 0,
                labels: &[("zone", "zone2"), ("rack", "rack3")],
            },
            Node {
                name: "zone1-rack1",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack1")],
            },
            Node {
                name: "zone1-rack2",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack2")],
            },
            Node {
                name: "zone1-rack3",
                gpus: 3,
                labels: &[("zone", "zone1"), ("rack", "rack3")],
            },
            Node {
                name: "zone2-rack1",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack1")],
            },
            Node {
                name: "zone2-rack2",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack2")],
            },
            Node {
                name: "zone2-rack3",
                gpus: 3,
                labels: &[("zone", "zone2"), ("rack", "rack3")],
            },
        ],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job-zone1-rack1",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack1")],
            ),
            job(
                "running-job-zone1-rack2",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack2")],
            ),
            job(
                "running-job-zone1-rack3",
                "queue0",
                "train",
                1.0,
                &[On("zone1-rack3")],
            ),
            job(
                "running-job-zone2-rack1",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack1")],
            ),
            job(
                "running-job-zone2-rack2",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack2")],
            ),
            job(
                "running-job-zone2-rack3",
                "queue0",
                "train",
                1.0,
                &[On("zone2-rack3")],
            ),
            Job {
                required_level: Some("zone"),
                ..job("pending-job0", "queue0", "train", 3.0, &[Pending, Pending])
            },
        ],
        topology: &["zone", "rack"],
        want: &[
            ("running-job-zone1-rack1", Stays),
            ("running-job-zone1-rack2", Stays),
            ("running-job-zone1-rack3", Stays),
            ("running-job-zone2-rack1", Stays),
            (
                "running-job-zone2-rack2",
                Moves("pending-job0", 60.0, &["zone1-rack1"]),
            ),
            (
                "running-job-zone2-rack3",
                Moves("pending-job0", 60.0, &["zone1-rack1"]),
            ),
            ("pending-job0", Runs(90.0, &["zone2-rack2", "zone2-rack3"])),
        ],
    });
}

#[test]
fn consolidation_fractional_consolidate_a_memory_job_for_a_memory_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "consolidate job that requested memory and insert another job that required memory".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            memory_job(
                "running-job0",
                "queue0",
                "train",
                20,
                &[Share("node0", "0")],
            ),
            memory_job(
                "running-job1",
                "queue0",
                "train",
                20,
                &[Share("node0", "1")],
            ),
            memory_job("pending-job0", "queue0", "train", 90, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn consolidation_fractional_consolidate_fractional_gpus_and_insert_a_fractional_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "consolidate fractional GPUs and insert a fractional train job".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "0")],
            ),
            job(
                "running-job1",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "1")],
            ),
            job("pending-job0", "queue0", "train", 0.7, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn consolidation_fractional_consolidate_fractional_gpus_and_insert_a_whole_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "consolidate fractional GPUs and insert a whole train job".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "0")],
            ),
            job(
                "running-job1",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "1")],
            ),
            job("pending-job0", "queue0", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("pending-job0", Runs(90.0, &["node0"])),
        ],
    });
}

#[test]
fn consolidation_fractional_can_t_consolidate_fractional_gpus_and_insert_a_whole_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "can't consolidate fractional GPUs and insert a whole train job".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "0")],
            ),
            job(
                "running-job1",
                "queue0",
                "train",
                0.6,
                &[Share("node0", "1")],
            ),
            job("pending-job0", "queue0", "train", 1.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn consolidation_fractional_can_t_consolidate_fractional_gpus_and_insert_a_fractional_train_job() {
    // integration_tests/consolidation/consolidationFractional_test.go: "can't consolidate fractional GPUs and insert a fractional train job".
    check(&Case {
        nodes: &[node("node0", 2)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                0.5,
                &[Share("node0", "0")],
            ),
            job(
                "running-job1",
                "queue0",
                "train",
                0.6,
                &[Share("node0", "1")],
            ),
            job("pending-job0", "queue0", "train", 0.8, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Stays),
            ("pending-job0", Waits),
        ],
    });
}

#[test]
fn consolidation_gang_consolidate_gang_job_to_be_able_to_allocate_pending_job() {
    // integration_tests/consolidation/consolidationGang_test.go: "consolidate gang job to be able to allocate pending job".
    check(&Case {
        nodes: &[node("node0", 3), node("node1", 3)],
        queues: &[queue("queue0", 1.0, 0.0)],
        jobs: &[
            job(
                "running-job0",
                "queue0",
                "train",
                1.0,
                &[On("node0"), On("node0"), On("node1")],
            ),
            job("pending-job0", "queue0", "train", 3.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            (
                "running-job0",
                Moves("pending-job0", 60.0, &["node0", "node0", "node0"]),
            ),
            ("pending-job0", Runs(90.0, &["node1"])),
        ],
    });
}

#[test]
fn consolidation_and_reclaim_consolidate_then_reclaim() {
    // integration_tests/consolidation_and_reclaim/consolidation_and_reclaim_test.go: "4 jobs of queue0 - 3 running 1 pending will consolidate, 1 pending job from queue1 - reclaim".
    check(&Case {
        nodes: &[node("node0", 4), node("node1", 4)],
        queues: &[queue("queue0", 4.0, 0.0), queue("queue1", 4.0, 0.0)],
        jobs: &[
            job("running-job0", "queue0", "train", 2.0, &[On("node0")]),
            job("running-job1", "queue0", "train", 2.0, &[On("node1")]),
            job("running-job2", "queue0", "train", 1.0, &[On("node1")]),
            job("pending-job0", "queue0", "train", 3.0, &[Pending]),
            job("pending-job1", "queue1", "train", 4.0, &[Pending]),
        ],
        topology: &[],
        want: &[
            ("running-job0", Stays),
            ("running-job1", Moves("pending-job0", 60.0, &["node0"])),
            ("running-job2", Evicted("Reclaim", "pending-job1", 90.0)),
            ("pending-job0", Evicted("Reclaim", "pending-job1", 90.0)),
            ("pending-job1", Runs(120.0, &["node1"])),
        ],
    });
}
