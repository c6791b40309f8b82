//! KAI's allocate action over whole clusters: the cases of upstream's
//! `pkg/scheduler/actions/allocate/allocateFractionalGpu_test.go`, `allocateGpuMemory_test.go`
//! and of `pkg/scheduler/actions/integration_tests/allocate/` (`allocate_test.go`,
//! `allocate_topology_test.go`, `allocateFractionalGpu_test.go`), each written from a table
//! (nodes, KAI queues and departments, PodGroups of bare Pods, running ones bound from the
//! start with their GPU groups) as upstream's `TestTopologyBasic` gives it, run until the
//! cluster settles, and checked for which jobs run on which nodes from when, which wait, and
//! how many GPU devices end up held.

use kueuesim_report::output::{SimulationResult, WorkloadOut};

use crate::kai_harness::{self, priority_classes, simulation};
use crate::util::wl;

/// KAI's priority classes of upstream's tests (`pkg/scheduler/constants/priorities.go`):
/// train 50, interactive-preemptible 75, build 100, inference 125. Build and inference are not
/// preemptible (priority 100 and above).
const PRIORITY_CLASSES: [(&str, i32); 4] = [
    ("train", 50),
    ("interactive-preemptible", 75),
    ("build", 100),
    ("inference", 125),
];

/// A node of upstream's `nodes_fake.TestNodeBasic`: GPUs, CPU in millicores, memory in bytes,
/// labels (topology levels), and a GPU memory label in MiB for `gpu-memory` requests.
#[derive(Clone)]
struct Node {
    name: &'static str,
    gpus: u32,
    cpu_millis: u64,
    memory: u64,
    labels: Vec<(&'static str, &'static str)>,
    gpu_memory_mib: Option<u64>,
}

/// Upstream's default fake node: `cpuMilliAllocatable` 20000 read as cores (as the fake
/// nodes of KAI's tests offer them) and 100 GB of memory, so neither binds.
fn node(name: &'static str, gpus: u32) -> Node {
    Node {
        name,
        gpus,
        cpu_millis: 20_000_000,
        memory: 100_000_000_000,
        labels: Vec::new(),
        gpu_memory_mib: None,
    }
}

impl Node {
    fn label(mut self, key: &'static str, value: &'static str) -> Self {
        self.labels.push((key, value));
        self
    }
    fn cpu_millis(mut self, millis: u64) -> Self {
        self.cpu_millis = millis;
        self
    }
    fn gpu_memory(mut self, mib: u64) -> Self {
        self.gpu_memory_mib = Some(mib);
        self
    }
}

/// A KAI Queue (or department: a queue others name as parent) with its GPU quota,
/// over-quota weight and limit, and CPU (millicores) and memory (MB) quotas and limits,
/// `None` for upstream's unlimited.
#[derive(Clone)]
struct Queue {
    name: &'static str,
    parent: Option<&'static str>,
    gpus: f64,
    weight: f64,
    limit: f64,
    cpu: Option<(f64, f64)>,
    priority: Option<u32>,
}

/// A queue deserving `gpus` GPUs at upstream's test defaults: over-quota weight 0
/// (`GPUOverQuotaWeight` unset), no limit; CPU and memory unlimited. A department's weight is
/// its deserved GPUs (`BuildDepartmentInfoMap`); upstream's implicit `default` department of
/// unlimited quota is left out.
fn queue(name: &'static str, gpus: f64) -> Queue {
    Queue {
        name,
        parent: None,
        gpus,
        weight: 0.0,
        limit: -1.0,
        cpu: None,
        priority: None,
    }
}

impl Queue {
    fn parent(mut self, parent: &'static str) -> Self {
        self.parent = Some(parent);
        self
    }
    fn priority(mut self, priority: u32) -> Self {
        self.priority = Some(priority);
        self
    }
    fn weight(mut self, weight: f64) -> Self {
        self.weight = weight;
        self
    }
    fn limit(mut self, limit: f64) -> Self {
        self.limit = limit;
        self
    }
    /// CPU quota and limit in millicores (-1: none).
    fn cpu(mut self, quota: f64, limit: f64) -> Self {
        self.cpu = Some((quota, limit));
        self
    }
}

/// What one pod of a job asks of the GPUs.
#[derive(Clone, Copy)]
enum Gpu {
    Whole(u32),
    Fraction(f64),
    MemoryMib(u64),
}

/// A task: bound from the start on a node (with its GPU group for a share), or pending.
#[derive(Clone)]
enum Task {
    Running(&'static str, Option<&'static str>),
    Pending,
}

/// A job: one KAI PodGroup of bare Pods, all of one request, a gang of all its pods
/// (upstream's default `MinAvailable`).
#[derive(Clone)]
struct Job {
    name: &'static str,
    queue: &'static str,
    pc: &'static str,
    gpu: Gpu,
    cpu_millis: u64,
    memory: u64,
    tasks: Vec<Task>,
    /// (topology, required level, preferred level).
    topology: Option<(&'static str, Option<&'static str>, Option<&'static str>)>,
    /// An arrival other than the default (a probe job arriving after the case's session).
    arrival: Option<&'static str>,
}

fn job(name: &'static str, queue: &'static str, pc: &'static str, gpu: Gpu) -> Job {
    Job {
        name,
        queue,
        pc,
        gpu,
        cpu_millis: 0,
        memory: 0,
        tasks: Vec::new(),
        topology: None,
        arrival: None,
    }
}

/// A job of `gpus` whole GPUs per pod.
fn whole(name: &'static str, queue: &'static str, pc: &'static str, gpus: u32) -> Job {
    job(name, queue, pc, Gpu::Whole(gpus))
}

/// A job of a `gpu-fraction` share of `fraction` per pod.
fn frac(name: &'static str, queue: &'static str, pc: &'static str, fraction: f64) -> Job {
    job(name, queue, pc, Gpu::Fraction(fraction))
}

impl Job {
    /// A task bound from the start on `node`.
    fn on(mut self, node: &'static str) -> Self {
        self.tasks.push(Task::Running(node, None));
        self
    }
    /// A share bound from the start on `node`'s GPU group `group`.
    fn on_group(mut self, node: &'static str, group: &'static str) -> Self {
        self.tasks.push(Task::Running(node, Some(group)));
        self
    }
    /// `n` pending tasks.
    fn pending(mut self, n: usize) -> Self {
        self.tasks.extend((0..n).map(|_| Task::Pending));
        self
    }
    fn cpu(mut self, millis: u64, memory: u64) -> Self {
        self.cpu_millis = millis;
        self.memory = memory;
        self
    }
    fn topology(
        mut self,
        topology: &'static str,
        required: Option<&'static str>,
        preferred: Option<&'static str>,
    ) -> Self {
        self.topology = Some((topology, required, preferred));
        self
    }
    fn arrives(mut self, at: &'static str) -> Self {
        self.arrival = Some(at);
        self
    }
    fn running(&self) -> bool {
        self.tasks.iter().any(|t| matches!(t, Task::Running(..)))
    }
}

/// A case: the cluster and the jobs; `topologies` are (name, levels).
struct Case {
    nodes: Vec<Node>,
    queues: Vec<Queue>,
    jobs: Vec<Job>,
    topologies: Vec<(&'static str, Vec<&'static str>)>,
    placement: Option<&'static str>,
}

fn case(nodes: Vec<Node>, queues: Vec<Queue>, jobs: Vec<Job>) -> Case {
    Case {
        nodes,
        queues,
        jobs,
        topologies: Vec::new(),
        placement: None,
    }
}

impl Case {
    fn topology(mut self, name: &'static str, levels: Vec<&'static str>) -> Self {
        self.topologies.push((name, levels));
        self
    }
    fn placement(mut self, strategy: &'static str) -> Self {
        self.placement = Some(strategy);
        self
    }

    /// The scenario text: a Simulation of 10m with a podTermination of 30s and GPU devices
    /// bookkept (KAI's GPU sharing), the nodes, queues, priority classes and jobs. Jobs with a
    /// task bound from the start arrive at 0s, one second apart in the table's order (upstream
    /// dates them so); the pending ones all arrive at 1m, in the table's order.
    fn text(&self) -> String {
        let mut s = simulation(true, self.placement);
        for (name, levels) in &self.topologies {
            s += &format!(
                "---\napiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {{name: {name}}}\nspec:\n  levels:\n"
            );
            for l in levels {
                s += &format!("  - nodeLabel: {l}\n");
            }
        }
        for n in &self.nodes {
            let mut labels: Vec<String> =
                n.labels.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            if let Some(mib) = n.gpu_memory_mib {
                labels.push(format!("nvidia.com/gpu.memory: '{mib}'"));
            }
            let allocatable = [
                format!("nvidia.com/gpu: '{}'", n.gpus),
                format!("cpu: '{}m'", n.cpu_millis),
                format!("memory: '{}'", n.memory),
            ];
            s += &kai_harness::node(n.name, &labels, &allocatable);
        }
        s += &priority_classes(&PRIORITY_CLASSES);
        for q in &self.queues {
            let cpu = q
                .cpu
                .map(|(quota, limit)| {
                    format!("    cpu: {{quota: {quota}, overQuotaWeight: 1, limit: {limit}}}\n")
                })
                .unwrap_or_default();
            let gpu = [q.gpus, q.weight, q.limit];
            let priority = q.priority.map(i64::from);
            s += &kai_harness::queue(q.name, q.parent, priority, gpu, &cpu);
        }
        let mut started = 0;
        for j in &self.jobs {
            let arrival = if let Some(at) = j.arrival {
                at.to_string()
            } else if j.running() {
                started += 1;
                format!("{}s", started - 1)
            } else {
                "1m".to_string()
            };
            let mut pg = format!("minMember: {}, queue: {}", j.tasks.len(), j.queue);
            if let Some((topology, required, preferred)) = j.topology {
                let mut c = format!("topology: {topology}");
                if let Some(r) = required {
                    c += &format!(", requiredTopologyLevel: {r}");
                }
                if let Some(p) = preferred {
                    c += &format!(", preferredTopologyLevel: {p}");
                }
                pg += &format!(", topologyConstraint: {{{c}}}");
            }
            s += &format!(
                "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: {}, namespace: team}}\nspec: {{{pg}}}\n",
                k8s(j.name)
            );
            let mut limits = Vec::new();
            if j.cpu_millis > 0 {
                limits.push(format!("cpu: '{}m'", j.cpu_millis));
            }
            if j.memory > 0 {
                limits.push(format!("memory: '{}'", j.memory));
            }
            let mut annotations = vec![
                format!("kueuesim.io/arrival: {arrival}"),
                format!("pod-group-name: {}", k8s(j.name)),
            ];
            match j.gpu {
                Gpu::Whole(0) => {}
                Gpu::Whole(n) => limits.push(format!("nvidia.com/gpu: '{n}'")),
                Gpu::Fraction(f) => annotations.push(format!("gpu-fraction: '{f}'")),
                Gpu::MemoryMib(m) => annotations.push(format!("gpu-memory: '{m}'")),
            }
            for (i, t) in j.tasks.iter().enumerate() {
                let mut labels = vec![format!("kai.scheduler/queue: {}", j.queue)];
                let mut spec = String::new();
                if let Task::Running(node, group) = t {
                    spec += &format!("  nodeName: {node}\n");
                    if let Some(g) = group {
                        labels.push(format!("runai-gpu-group: '{g}'"));
                    }
                }
                s += &format!(
                    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {}-{i}\n  namespace: team\n  labels: {{{}}}\n  annotations: {{{}}}\nspec:\n  schedulerName: kai-scheduler\n  priorityClassName: {}\n{spec}  containers:\n  - resources: {{limits: {{{}}}}}\n",
                    k8s(j.name),
                    labels.join(", "),
                    annotations.join(", "),
                    j.pc,
                    limits.join(", ")
                );
            }
        }
        s
    }

    fn run(&self) -> Run {
        let r = kai_harness::run(&self.text());
        let names = self.jobs.iter().map(|j| j.name).collect();
        Run { r, names }
    }
}

/// A case's result, with its jobs' names for failure messages.
struct Run {
    r: SimulationResult,
    names: Vec<&'static str>,
}

impl Run {
    fn job(&self, name: &str) -> &WorkloadOut {
        wl(&self.r, "team", &k8s(name))
    }

    /// Every job's state, start, nodes and evictions.
    fn all(&self) -> String {
        self.names
            .iter()
            .map(|n| {
                let w = self.job(n);
                let ev: Vec<(f64, &str)> = w.evictions.iter().map(|e| (e.at, e.reason)).collect();
                format!(
                    "{n} {} {:?} {:?} {ev:?}",
                    w.state,
                    w.running_at,
                    self.nodes(n)
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The nodes of `name`'s bound pods, in pod order.
    fn nodes(&self, name: &str) -> Vec<String> {
        self.job(name)
            .pod_sets
            .iter()
            .flat_map(|ps| ps.pods.iter().filter_map(|p| p.node.clone()))
            .collect()
    }

    /// `name` runs since `at` (s) with its pods on `nodes` (in pod order), never evicted.
    fn runs(&self, name: &str, at: f64, nodes: &[&str]) -> &Self {
        self.running_since(name, at);
        assert_eq!(self.nodes(name), nodes, "{name}; {}", self.all());
        self
    }

    /// `name` was never evicted and runs since `at` (s).
    fn running_since(&self, name: &str, at: f64) {
        let w = self.job(name);
        assert!(w.evictions.is_empty(), "{name} evicted; {}", self.all());
        assert_eq!(
            (w.state, w.running_at),
            ("Running", Some(at)),
            "{name}; {}",
            self.all()
        );
    }

    /// `name` runs since `at` (s), never evicted, every pod on one of `nodes`.
    fn runs_within(&self, name: &str, at: f64, pods: usize, nodes: &[&str]) -> &Self {
        self.running_since(name, at);
        let on = self.nodes(name);
        assert_eq!(on.len(), pods, "{name}; {}", self.all());
        assert!(
            on.iter().all(|n| nodes.contains(&n.as_str())),
            "{name} outside {nodes:?}; {}",
            self.all()
        );
        self
    }

    /// `name` runs since the start on `nodes`, untouched (bound pods are booked at 0s).
    fn stays(&self, name: &str, nodes: &[&str]) -> &Self {
        self.runs(name, 0.0, nodes)
    }

    /// `name` waits at the end with no pod bound and was never evicted.
    fn waits(&self, name: &str) -> &Self {
        let w = self.job(name);
        assert!(w.evictions.is_empty(), "{name} evicted; {}", self.all());
        assert_eq!(w.state, "Pending", "{name}; {}", self.all());
        assert!(self.nodes(name).is_empty(), "{name}; {}", self.all());
        self
    }

    /// `name` was evicted once at `at` by `reason` for `by`, and its new pod waits.
    fn evicted(&self, name: &str, reason: &str, by: &str, at: f64) -> &Self {
        let w = self.job(name);
        let got: Vec<(f64, &str, Option<&str>)> = w
            .evictions
            .iter()
            .map(|e| (e.at, e.reason, e.preemptor.as_deref()))
            .collect();
        let by = format!("team/{}", k8s(by));
        assert_eq!(
            got,
            [(at, reason, Some(by.as_str()))],
            "{name}; {}",
            self.all()
        );
        assert_eq!(w.state, "Pending", "{name}; {}", self.all());
        self
    }

    /// GPU devices some pod holds (all or part of) at the end.
    fn devices_held(&self, n: i64) -> &Self {
        let sharing = self
            .r
            .summary
            .gpu
            .sharing
            .as_ref()
            .expect("GPU devices bookkept");
        assert_eq!(sharing.gpus_allocated, n, "devices held; {}", self.all());
        self
    }
}

/// Upstream's job names have underscores, which Kubernetes names may not: they become '-'.
fn k8s(name: &str) -> String {
    name.replace('_', "-")
}

const TRAIN: &str = "train";
const BUILD: &str = "build";

mod fractions;
mod gpu_memory;
mod integration;
mod topology;
