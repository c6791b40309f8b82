//! The table harness of the KAI action cases transcribed from upstream's unit tests
//! (`kai_preempt_unit_cases`, `kai_allocate_cases`): upstream's `TestTopologyBasic` (nodes,
//! queues, jobs of tasks running on a node or pending) written as a scenario of KAI
//! PodGroups with bare Pods, run until the cluster settles, and each pod's end checked: its
//! node, when it was bound, which pods were evicted, by which action and for whom.

use std::borrow::Cow;

use kueuesim_report::output::{SimulationResult, WorkloadOut};

use crate::kai_harness::{self, PRIORITY_CLASSES, evictions, priority_classes, simulation};
use crate::util::wl;

/// A KAI queue of the test: deserved GPUs, GPU over-quota weight (upstream's test queues
/// leave `GPUOverQuotaWeight` at 0), GPU limit (`MaxAllowedGPUs`, `None`: unlimited), its
/// parent department and its priority. CPU and memory are left unbounded, as upstream's test
/// builder sets them (`NoMaxAllowedResource`).
#[derive(Clone, Copy)]
pub(crate) struct Queue {
    pub name: &'static str,
    pub gpus: f64,
    pub weight: f64,
    pub limit: Option<f64>,
    pub parent: Option<&'static str>,
    pub priority: Option<u32>,
    /// Deserved CPU (millicores, as a Queue counts it) and memory (MB), upstream's
    /// `DeservedCPUs` and `DeservedMemory`; `None`: unlimited.
    pub cpu: Option<f64>,
    pub memory: Option<f64>,
}

/// A queue of `gpus` deserved GPUs, weight 0, no limit, no parent.
pub(crate) const fn q(name: &'static str, gpus: f64) -> Queue {
    Queue {
        name,
        gpus,
        weight: 0.0,
        limit: None,
        parent: None,
        priority: None,
        cpu: None,
        memory: None,
    }
}

/// One task of a job: running on `node` from the start, or pending (`node` `None`), in KAI
/// subgroup `sub` when the job has subgroups.
#[derive(Clone, Copy)]
pub(crate) struct Task {
    pub node: Option<&'static str>,
    pub sub: Option<&'static str>,
    /// A node the task must run on (upstream's `NodeAffinityNames`, a nodeSelector here).
    pub pin: Option<&'static str>,
    /// The task's own GPUs (upstream's `RequiredGPUs`), else the job's.
    pub gpus: Option<u32>,
}

/// A task running on `node` from the start.
pub(crate) const fn on(node: &'static str) -> Task {
    Task {
        node: Some(node),
        sub: None,
        pin: None,
        gpus: None,
    }
}

/// A pending task.
pub(crate) const P: Task = Task {
    node: None,
    sub: None,
    pin: None,
    gpus: None,
};

impl Task {
    /// The same task in subgroup `sub`.
    pub(crate) const fn sub(self, sub: &'static str) -> Task {
        Task {
            sub: Some(sub),
            ..self
        }
    }

    /// The same task asking `gpus` GPUs.
    pub(crate) const fn gpus(self, gpus: u32) -> Task {
        Task {
            gpus: Some(gpus),
            ..self
        }
    }

    /// The same task pinned to `node` (upstream's `NodeAffinityNames`).
    pub(crate) const fn pin(self, node: &'static str) -> Task {
        Task {
            pin: Some(node),
            ..self
        }
    }
}

/// A job of the test: a KAI PodGroup of queue `queue` at PriorityClass `pc` (`train` 50,
/// `interactive` 75 (upstream's `PriorityInteractivePreemptibleNumber`), `build` 100,
/// `inference` 125; preemptible below 100, as `CalculatePreemptibility` decides unless
/// `preemptible` says), `gpus` and `cpu` (millicores) per task; `min` is the PodGroup's
/// minMember (upstream's default: every task, a gang), `subgroups` its subgroups (name,
/// minMember).
#[derive(Clone)]
pub(crate) struct Job {
    pub name: &'static str,
    pub queue: &'static str,
    pub pc: &'static str,
    pub gpus: u32,
    pub cpu: u32,
    pub memory: u64,
    pub min: Option<u32>,
    pub preemptible: Option<bool>,
    pub subgroups: Vec<(&'static str, u32)>,
    /// Subgroups of subgroups: (child, parent).
    pub parents: Vec<(&'static str, &'static str)>,
    pub tasks: Vec<Task>,
}

/// A job of `tasks` of `gpus` GPUs each, a gang of all its tasks.
pub(crate) fn job(
    name: &'static str,
    queue: &'static str,
    pc: &'static str,
    gpus: u32,
    tasks: &[Task],
) -> Job {
    Job {
        name,
        queue,
        pc,
        gpus,
        cpu: 0,
        memory: 0,
        min: None,
        preemptible: None,
        subgroups: Vec::new(),
        parents: Vec::new(),
        tasks: tasks.to_vec(),
    }
}

impl Job {
    /// The same job with minMember `min` (upstream's `DefaultSubGroup(min)`: elastic below
    /// its task count).
    pub(crate) fn min(self, min: u32) -> Job {
        Job {
            min: Some(min),
            ..self
        }
    }

    /// The same job with KAI subgroups (name, minMember).
    pub(crate) fn subgroups(self, subgroups: &[(&'static str, u32)]) -> Job {
        Job {
            subgroups: subgroups.to_vec(),
            ..self
        }
    }

    /// The same job with `cores` CPU and `memory` bytes per task.
    pub(crate) fn cpu_memory(self, cores: u32, memory: u64) -> Job {
        Job {
            cpu: cores,
            memory,
            ..self
        }
    }

    /// The same job whose subgroups `(child, parent)` are children of other subgroups.
    pub(crate) fn parents(self, parents: &[(&'static str, &'static str)]) -> Job {
        Job {
            parents: parents.to_vec(),
            ..self
        }
    }

    fn running(&self) -> bool {
        self.tasks.iter().any(|t| t.node.is_some())
    }
}

/// A case: its nodes (name, GPUs, CPU millicores), departments (name, deserved GPUs; their
/// over-quota weight is their deserved GPUs, as upstream's builder sets it), queues and jobs.
pub(crate) struct Case {
    /// Name, GPUs, CPU cores, memory bytes.
    pub nodes: Vec<(&'static str, u32, u32, u64)>,
    pub departments: Vec<(&'static str, f64)>,
    pub queues: Vec<Queue>,
    pub jobs: Vec<Job>,
    /// `spec.kai.placementStrategy` when the case sets one (`spread`).
    pub placement: Option<&'static str>,
}

/// A case of the nodes `list` (name, GPUs; see `nodes`), the queues and the jobs, no
/// department and the default placement.
pub(crate) fn case(list: &[(&'static str, u32)], queues: &[Queue], jobs: Vec<Job>) -> Case {
    Case {
        nodes: nodes(list),
        departments: Vec::new(),
        queues: queues.to_vec(),
        jobs,
        placement: None,
    }
}

/// Nodes of `gpus` GPUs each, with upstream's fake node's CPU and memory
/// (`cpuMilliAllocatable` "20000" and `memoryAllocatable` "20G", read by `MustParse` as
/// 20000 cores and 20 GB).
pub(crate) fn nodes(list: &[(&'static str, u32)]) -> Vec<(&'static str, u32, u32, u64)> {
    list.iter()
        .map(|&(n, g)| (n, g, 20_000, 20_000_000_000))
        .collect()
}

/// When the jobs with nothing running arrive (s): a job with some running task is in the
/// input from the start, its pending tasks too.
pub(crate) const ARRIVAL: f64 = 60.0;

fn secs(t: f64) -> String {
    format!("{}s", t)
}

/// The scenario text of `case`: a Simulation of 10m (podTermination 30s), the nodes, the
/// PriorityClasses, the departments and queues, and one KAI PodGroup with bare Pods per job,
/// in upstream's job order (`BuildJobsAndTasksMaps` sorts the jobs by priority, highest
/// first, and dates them oldest first in that order; here a running job's pods are in the
/// input from the start and a pending job's arrive at 1m, ties by input order).
pub(crate) fn scenario(case: &Case) -> String {
    let mut s = simulation(false, case.placement);
    for &(n, g, cpu, memory) in &case.nodes {
        let allocatable = [
            format!("nvidia.com/gpu: '{g}'"),
            format!("cpu: '{cpu}'"),
            format!("memory: '{memory}'"),
        ];
        s += &kai_harness::node(n, &[format!("test/node: {n}")], &allocatable);
    }
    s += &priority_classes(&PRIORITY_CLASSES);
    for &(d, gpus) in &case.departments {
        s += &kai_harness::queue(d, None, None, [gpus, gpus, -1.0], "");
    }
    for qu in &case.queues {
        let cpu_memory = format!(
            "    cpu: {{quota: {}, overQuotaWeight: 1, limit: -1}}\n    memory: {{quota: {}, overQuotaWeight: 1, limit: -1}}\n",
            qu.cpu.unwrap_or(-1.0),
            qu.memory.unwrap_or(-1.0)
        );
        let gpu = [qu.gpus, qu.weight, qu.limit.unwrap_or(-1.0)];
        let priority = qu.priority.map(i64::from);
        s += &kai_harness::queue(qu.name, qu.parent, priority, gpu, &cpu_memory);
    }
    let mut jobs: Vec<&Job> = case.jobs.iter().collect();
    jobs.sort_by_key(|j| std::cmp::Reverse(priority(j.pc)));
    for j in jobs {
        let min = j.min.unwrap_or(j.tasks.len() as u32);
        s += &format!(
            "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: {}, namespace: team}}\nspec:\n  queue: {}\n",
            j.name, j.queue
        );
        if j.subgroups.is_empty() {
            s += &format!("  minMember: {min}\n");
        } else {
            // The root's minimum is its subgroups' (upstream's `SubGroupSet` sums its
            // children's); left out, kueuesim would read every pod.
            let sum: u32 = j
                .subgroups
                .iter()
                .filter(|(n, _)| !j.parents.iter().any(|(c, _)| c == n))
                .map(|(_, m)| m)
                .sum();
            s += &format!("  minMember: {}\n  subGroups:\n", j.min.unwrap_or(sum));
            for (n, m) in &j.subgroups {
                let parent = j
                    .parents
                    .iter()
                    .find(|(c, _)| c == n)
                    .map(|(_, p)| format!(", parent: {p}"))
                    .unwrap_or_default();
                s += &format!("  - {{name: {n}, minMember: {m}{parent}}}\n");
            }
        }
        if let Some(p) = j.preemptible {
            let p = if p { "preemptible" } else { "non-preemptible" };
            s += &format!("  preemptibility: {p}\n");
        }
        let arrival = if j.running() { 0.0 } else { ARRIVAL };
        for (i, t) in j.tasks.iter().enumerate() {
            let mut labels = String::new();
            if let Some(sub) = t.sub {
                labels = format!("\n  labels: {{kai.scheduler/subgroup-name: {sub}}}");
            }
            let node = t
                .node
                .map(|n| format!("  nodeName: {n}\n"))
                .unwrap_or_default();
            let pin = t
                .pin
                .map(|n| format!("  nodeSelector: {{test/node: {n}}}\n"))
                .unwrap_or_default();
            let mut limits = Vec::new();
            let gpus = t.gpus.unwrap_or(j.gpus);
            if gpus > 0 {
                limits.push(format!("nvidia.com/gpu: '{gpus}'"));
            }
            if j.cpu > 0 {
                limits.push(format!("cpu: '{}'", j.cpu));
            }
            if j.memory > 0 {
                limits.push(format!("memory: '{}'", j.memory));
            }
            let limits = limits.join(", ");
            s += &format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {}-{i}\n  namespace: team{labels}\n  annotations: {{pod-group-name: {}, kueuesim.io/arrival: {}}}\nspec:\n  schedulerName: kai-scheduler\n  priorityClassName: {}\n{node}{pin}  containers:\n  - resources: {{limits: {{{limits}}}}}\n",
                j.name,
                j.name,
                secs(arrival),
                j.pc
            );
        }
    }
    s
}

fn priority(pc: &str) -> u32 {
    match pc {
        "train" => 50,
        "interactive" => 75,
        "build" => 100,
        "inference" => 125,
        other => panic!("unknown priority class {other}"),
    }
}

/// What a job is at the end of the run.
pub(crate) struct Expect {
    pub job: &'static str,
    /// Each pod's node at the end, `-` for a pod pending.
    pub nodes: Cow<'static, [&'static str]>,
    /// The pods evicted (indices), with the eviction's reason (`Preempt`, `Reclaim`,
    /// `Consolidation`) and the job they were evicted for, at `at`.
    pub evicted: Option<(&'static [usize], &'static str, &'static str)>,
    /// When the pods that were pending (or evicted) bound, for those on a node at the end.
    pub bound_at: Option<f64>,
}

/// `job` ends with its pods on `nodes`, nothing evicted; pods it had running stay since the
/// start, the others bound at `at` (if any bind).
pub(crate) const fn ends(job: &'static str, nodes: &'static [&'static str], at: f64) -> Expect {
    Expect {
        job,
        nodes: Cow::Borrowed(nodes),
        evicted: None,
        bound_at: Some(at),
    }
}

/// What `check` expects of a job the case does not name: it keeps its running pods where
/// they run since the start, its pending pods pending, nothing evicted.
fn kept(job: &Job) -> Expect {
    Expect {
        job: job.name,
        nodes: job.tasks.iter().map(|t| t.node.unwrap_or("-")).collect(),
        evicted: None,
        bound_at: None,
    }
}

/// `job` loses `pods` to `by`'s `reason`; at the end its pods are on `nodes`.
pub(crate) const fn evicted(
    job: &'static str,
    pods: &'static [usize],
    reason: &'static str,
    by: &'static str,
    nodes: &'static [&'static str],
) -> Expect {
    Expect {
        job,
        nodes: Cow::Borrowed(nodes),
        evicted: Some((pods, reason, by)),
        bound_at: None,
    }
}

/// Runs `case` and returns its result, panicking with the scenario on a load error.
pub(crate) fn run(case: &Case) -> (SimulationResult, String) {
    let text = scenario(case);
    (kai_harness::run(&text), text)
}

/// Each pod of `w` with its node and bind time, in pod name order.
fn pods(w: &WorkloadOut) -> Vec<(String, Option<String>, Option<f64>)> {
    let mut v: Vec<_> = w
        .pod_sets
        .iter()
        .flat_map(|p| p.pods.iter())
        .map(|p| (p.name.clone(), p.node.clone(), p.bound_at))
        .collect();
    v.sort_by_key(|(n, ..)| pod_index(n));
    v
}

fn pod_index(name: &str) -> usize {
    name.rsplit('-')
        .next()
        .and_then(|i| i.parse().ok())
        .unwrap_or(0)
}

/// A line per job of what happened, for a failure's message.
fn describe(r: &SimulationResult, case: &Case) -> String {
    case.jobs
        .iter()
        .map(|j| {
            let w = wl(r, "team", j.name);
            let ev = evictions(w);
            format!("\n  {} {} {:?} ev={ev:?}", j.name, w.state, pods(w))
        })
        .collect()
}

/// Runs `case` and checks every job of it against `expect` (a job left out is `kept`: upstream's
/// tables list those too, and they are checked all the same), the action at `at` (s) and the
/// bindings after it at `bound` (s) unless an `Expect` says.
pub(crate) fn check(case: &Case, expect: &[Expect], at: f64) {
    let (r, text) = run(case);
    let all = describe(&r, case);
    let ctx = || format!("{all}\n--- scenario:\n{text}");
    for e in expect {
        assert!(
            case.jobs.iter().any(|j| j.name == e.job),
            "no job {}{}",
            e.job,
            ctx()
        );
    }
    let kept: Vec<Expect> = case
        .jobs
        .iter()
        .filter(|j| !expect.iter().any(|e| e.job == j.name))
        .map(kept)
        .collect();
    for e in expect.iter().chain(&kept) {
        let j = case
            .jobs
            .iter()
            .find(|j| j.name == e.job)
            .unwrap_or_else(|| panic!("no job {}", e.job));
        let w = wl(&r, "team", e.job);
        let ps = pods(w);
        let got: Vec<&str> = ps
            .iter()
            .map(|(_, n, _)| n.as_deref().unwrap_or("-"))
            .collect();
        assert_eq!(got, *e.nodes, "{}: nodes{}", e.job, ctx());
        // The pods evicted: those with KAI's `Evict` event.
        let mut evicted_pods: Vec<usize> = w
            .events
            .iter()
            .filter(|ev| ev.reason == "Evict")
            .filter_map(|ev| {
                ps.iter()
                    .map(|(n, ..)| n)
                    .position(|n| ev.message.starts_with(&format!("Pod team/{n} ")))
            })
            .collect();
        evicted_pods.sort_unstable();
        evicted_pods.dedup();
        let evictions = evictions(w);
        match e.evicted {
            None => {
                assert!(evictions.is_empty(), "{}: no eviction{}", e.job, ctx());
                assert!(evicted_pods.is_empty(), "{}: no Evict{}", e.job, ctx());
            }
            Some((pods_out, reason, by)) => {
                let by = format!("team/{by}");
                assert_eq!(
                    evictions,
                    [(at, reason, Some(by.as_str()))],
                    "{}: evicted{}",
                    e.job,
                    ctx()
                );
                // Reclaim's `Evict` event names the job, not its pods.
                if reason != "Reclaim" {
                    assert_eq!(evicted_pods, pods_out, "{}: pods evicted{}", e.job, ctx());
                } else {
                    let n = w.events.iter().filter(|ev| ev.reason == "Evict").count();
                    assert_eq!(n, 1, "{}: one Evict event{}", e.job, ctx());
                }
            }
        }
        // Pods running from the start and not evicted stay bound since 0.
        for (i, t) in j.tasks.iter().enumerate() {
            let (name, node, bound) = &ps[i];
            let was_evicted = e.evicted.is_some_and(|(p, ..)| p.contains(&i));
            if t.node.is_some() && !was_evicted {
                assert_eq!(
                    (node.as_deref(), *bound),
                    (t.node, Some(0.0)),
                    "{name} runs on since the start{}",
                    ctx()
                );
            } else if node.is_some()
                && let Some(b) = e.bound_at
            {
                assert_eq!(*bound, Some(b), "{name} bound at{}", ctx());
            }
        }
    }
}
