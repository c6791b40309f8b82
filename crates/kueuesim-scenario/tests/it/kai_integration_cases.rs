//! KAI's actions over whole clusters with GPU jobs: the cases of upstream's
//! `pkg/scheduler/actions/integration_tests/` for reclaim, preempt, consolidation and
//! consolidation with reclaim, each written from a table (nodes, KAI queues and departments,
//! jobs with their running pods' nodes) as upstream's `TestTopologyBasic` gives it, run until
//! the cluster settles as upstream's `RunTests` runs the session's actions round after round,
//! and checked against upstream's expected end state: which jobs were evicted (by which action,
//! for whom, when), which moved where, which pending jobs run where and from when.

use kueuesim_report::output::SimulationResult;

use crate::kai_harness::{self, PRIORITY_CLASSES, evictions, priority_classes, simulation};
use crate::util::wl;
use Task::{On, Pending, Share};
use Want::{Evicted, EvictedThenRuns, Moves, Runs};

/// Upstream's fake node: its GPUs and topology labels (CPU and memory are left out: upstream's
/// GPU tasks ask none here).
struct Node {
    name: &'static str,
    gpus: u32,
    labels: Vec<(&'static str, &'static str)>,
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
#[derive(Clone, Copy)]
enum Task {
    Pending,
    On(&'static str),
    Share(&'static str, &'static str),
}

/// A job (`TestJobBasic`): `gpus` per pod (below 1 a `gpu-fraction` share) at PriorityClass
/// `pc` (`train` 50, `interactive` 75, `build` 100, `inference` 125, as KAI's constants), its
/// pods, and a required topology level for all of them. A job of several pods is a gang (a KAI
/// PodGroup with minMember the pod count, upstream's default subgroup).
struct Job {
    name: &'static str,
    queue: &'static str,
    pc: &'static str,
    gpus: f64,
    tasks: Vec<Task>,
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
    jobs: &'a [Job],
    /// The levels (node labels, top first) of KAI Topology `cluster-topology`, if any.
    topology: &'a [&'a str],
    /// What upstream expects of the jobs it names; a job left out keeps what it had: a job
    /// running from the start `Stays`, a pending one `Waits` (upstream's tables list those
    /// too, and they are checked all the same).
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
    let mut s = simulation(shares, None);
    for n in case.nodes {
        let mut labels: Vec<String> = n.labels.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        if memory {
            labels.push("nvidia.com/gpu.memory: '100'".to_string());
        }
        let allocatable = [
            format!("nvidia.com/gpu: '{}'", n.gpus),
            "cpu: '100'".to_string(),
        ];
        s += &kai_harness::node(n.name, &labels, &allocatable);
    }
    s += &priority_classes(&PRIORITY_CLASSES);
    if !case.topology.is_empty() {
        s += "---\napiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: cluster-topology}\nspec:\n  levels:\n";
        for level in case.topology {
            s += &format!("  - nodeLabel: {level}\n");
        }
    }
    for q in case.queues {
        let gpu = [q.quota, q.weight, q.limit.unwrap_or(-1.0)];
        let priority = q.priority.map(i64::from);
        s += &kai_harness::queue(q.name, q.parent, priority, gpu, "");
    }
    for (i, j) in case.jobs.iter().enumerate() {
        s += &job_text(i, j);
    }
    s
}

/// A job's objects: its batch Job (with a KAI PodGroup when it has several pods), and the
/// running pods: `kueuesim.io/bound-nodes` for whole GPUs, Pods owned by the Job (carrying
/// their GPU group) for shares.
fn job_text(index: usize, j: &Job) -> String {
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

/// Runs a case of `nodes`, `queues` and `jobs` without a KAI Topology and checks every job
/// against `want` (see `Case::want`).
fn check(nodes: &[Node], queues: &[Queue], jobs: &[Job], want: &[(&'static str, Want)]) {
    check_topology(&[], nodes, queues, jobs, want);
}

/// `check` with KAI Topology `cluster-topology` of `levels` (node labels, top first).
fn check_topology(
    levels: &[&str],
    nodes: &[Node],
    queues: &[Queue],
    jobs: &[Job],
    want: &[(&'static str, Want)],
) {
    check_case(&Case {
        nodes,
        queues,
        jobs,
        topology: levels,
        want,
    });
}

/// Runs the case and checks every job against its want.
fn check_case(case: &Case<'_>) {
    let text = scenario(case);
    let r = kai_harness::run(&text);
    // Every job's state, bind time, nodes and evictions, for a failure's message.
    let all: Vec<String> = case
        .jobs
        .iter()
        .map(|j| {
            let w = wl(&r, "team", j.name);
            let ev = evictions(w);
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
    for (name, _) in case.want {
        assert!(case.jobs.iter().any(|j| j.name == *name), "no job {name}");
    }
    for j in case.jobs {
        let want = match case.want.iter().find(|(n, _)| *n == j.name) {
            Some((_, want)) => want,
            None if j.tasks.iter().any(|t| !matches!(t, Task::Pending)) => &Want::Stays,
            None => &Want::Waits,
        };
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
        labels: Vec::new(),
    }
}

/// A node of `gpus` GPUs in topology `zone` and `rack` (node labels of those names).
fn racked(name: &'static str, gpus: u32, zone: &'static str, rack: &'static str) -> Node {
    Node {
        labels: vec![("zone", zone), ("rack", rack)],
        ..node(name, gpus)
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
fn job(
    name: &'static str,
    queue: &'static str,
    pc: &'static str,
    gpus: f64,
    tasks: &[Task],
) -> Job {
    Job {
        name,
        queue,
        pc,
        gpus,
        tasks: tasks.to_vec(),
        required_level: None,
        gpu_memory: None,
    }
}

/// A job of one pod of `gpus` running on `node` from the start.
fn on(
    name: &'static str,
    queue: &'static str,
    pc: &'static str,
    gpus: f64,
    node: &'static str,
) -> Job {
    job(name, queue, pc, gpus, &[On(node)])
}

/// A job of one pod of `gpus`, pending.
fn pending(name: &'static str, queue: &'static str, pc: &'static str, gpus: f64) -> Job {
    job(name, queue, pc, gpus, &[Pending])
}

/// A job of one share of `gpus` (below 1) running on `node`'s GPU group `group`.
fn share(
    name: &'static str,
    queue: &'static str,
    pc: &'static str,
    gpus: f64,
    node: &'static str,
    group: &'static str,
) -> Job {
    job(name, queue, pc, gpus, &[Share(node, group)])
}

impl Job {
    /// The same job with its pods required within one `level` of the cluster's topology.
    fn required(self, level: &'static str) -> Job {
        Job {
            required_level: Some(level),
            ..self
        }
    }

    /// The same job asking a `gpu-memory` share of `mib` per pod in place of its GPUs (which
    /// must be 0, so that the pods are shares).
    fn memory(self, mib: u32) -> Job {
        assert_eq!(self.gpus, 0.0, "{}: a memory share asks no GPUs", self.name);
        Job {
            gpu_memory: Some(mib),
            ..self
        }
    }
}

/// Reclaimed for `by` when it arrives (1m), its new pods finding no room.
fn reclaimed(by: &'static str) -> Want {
    Evicted("Reclaim", by, 60.0)
}

/// Preempted for `by` when it arrives (1m), its new pods finding no room.
fn preempted(by: &'static str) -> Want {
    Evicted("Preempt", by, 60.0)
}

mod consolidation;
mod preempt;
mod reclaim;
