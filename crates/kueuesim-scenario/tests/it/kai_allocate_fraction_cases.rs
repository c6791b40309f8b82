//! KAI's allocate action over whole clusters: the cases of upstream's
//! `pkg/scheduler/actions/allocate/allocateFractionalGpu_test.go`, `allocateGpuMemory_test.go`
//! and of `pkg/scheduler/actions/integration_tests/allocate/` (`allocate_test.go`,
//! `allocate_topology_test.go`, `allocateFractionalGpu_test.go`), each written from a table
//! (nodes, KAI queues and departments, PodGroups of bare Pods, running ones bound from the
//! start with their GPU groups) as upstream's `TestTopologyBasic` gives it, run until the
//! cluster settles, and checked for which jobs run on which nodes from when, which wait, and
//! how many GPU devices end up held.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result};

use crate::util::{load_text, wl};

/// KAI's priority classes of upstream's tests (`pkg/scheduler/constants/priorities.go`):
/// train 50, interactive-preemptible 75, build 100, inference 125. Build and inference are not
/// preemptible (priority 100 and above).
const PRIORITY_CLASSES: [(&str, u32); 4] = [
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
        let kai = match self.placement {
            Some(p) => format!(", kai: {{placementStrategy: {p}}}"),
            None => String::new(),
        };
        let mut s = format!(
            "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec: {{until: 10m, podTermination: 30s, gpuPlacement: {{devices: true}}{kai}}}\n"
        );
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
            s += &format!(
                "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {}\n  labels: {{{}}}\nstatus:\n  allocatable: {{nvidia.com/gpu: '{}', cpu: '{}m', memory: '{}', pods: '110'}}\n",
                n.name,
                labels.join(", "),
                n.gpus,
                n.cpu_millis,
                n.memory
            );
        }
        for (name, value) in PRIORITY_CLASSES {
            s += &format!(
                "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}\n"
            );
        }
        for q in &self.queues {
            s += &format!(
                "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: {}}}\nspec:\n",
                q.name
            );
            if let Some(p) = q.parent {
                s += &format!("  parentQueue: {p}\n");
            }
            if let Some(p) = q.priority {
                s += &format!("  priority: {p}\n");
            }
            s += &format!(
                "  resources:\n    gpu: {{quota: {}, overQuotaWeight: {}, limit: {}}}\n",
                q.gpus, q.weight, q.limit
            );
            if let Some((quota, limit)) = q.cpu {
                s += &format!("    cpu: {{quota: {quota}, overQuotaWeight: 1, limit: {limit}}}\n");
            }
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
        let text = self.text();
        let loaded = load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
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
        let w = self.job(name);
        assert!(w.evictions.is_empty(), "{name} evicted; {}", self.all());
        assert_eq!(
            (w.state, w.running_at),
            ("Running", Some(at)),
            "{name}; {}",
            self.all()
        );
        assert_eq!(self.nodes(name), nodes, "{name}; {}", self.all());
        self
    }

    /// `name` runs since `at` (s), never evicted, every pod on one of `nodes`.
    fn runs_within(&self, name: &str, at: f64, pods: usize, nodes: &[&str]) -> &Self {
        let w = self.job(name);
        assert!(w.evictions.is_empty(), "{name} evicted; {}", self.all());
        assert_eq!(
            (w.state, w.running_at),
            ("Running", Some(at)),
            "{name}; {}",
            self.all()
        );
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

// allocate/allocateFractionalGpu_test.go

/// A department `department-a` deserving 1 GPU with a limit of 1, and queue0 in it.
fn department_of_one_gpu(queue0: Queue) -> Vec<Queue> {
    vec![
        queue("department-a", 1.0).weight(1.0).limit(1.0),
        queue0.parent("department-a"),
    ]
}

#[test]
fn fractions_over_the_projects_limit_are_not_allocated() {
    // allocateFractionalGpu_test.go, "allocate job with multiple pods but does not allow it
    // because project goes over allowance": 3 × 0.5 GPU against queue0's limit of 1.
    let c = case(
        vec![node("node0", 4)],
        department_of_one_gpu(queue("queue0", 1.0).weight(1.0).limit(1.0)),
        vec![job("pending_job0", "queue0", TRAIN, Gpu::Fraction(0.5)).pending(3)],
    );
    c.run().waits("pending_job0");
}

#[test]
fn fractions_over_the_departments_limit_are_not_allocated() {
    // allocateFractionalGpu_test.go, "allocate job with multiple pods but does not allow it
    // because department to go over allowance": 3 × 0.5 GPU against department-a's limit of 1.
    let c = case(
        vec![node("node0", 4)],
        department_of_one_gpu(queue("queue0", 1.0).weight(1.0)),
        vec![job("pending_job0", "queue0", TRAIN, Gpu::Fraction(0.5)).pending(3)],
    );
    c.run().waits("pending_job0");
}

#[test]
fn a_share_goes_to_the_shared_gpu_it_fits() {
    // allocateFractionalGpu_test.go, "1 shared gpu job running, 1 pending interactive shared
    // gpu job, allocate to same gpu": one device ends up held by both halves.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            job(
                "running_shared_gpu_job0",
                "queue0",
                BUILD,
                Gpu::Fraction(0.5),
            )
            .on_group("node0", "1"),
            job(
                "pending_shared_gpu_job1",
                "queue0",
                BUILD,
                Gpu::Fraction(0.5),
            )
            .pending(1),
        ],
    );
    c.run()
        .stays("running_shared_gpu_job0", &["node0"])
        .runs("pending_shared_gpu_job1", 60.0, &["node0"])
        .devices_held(1);
}

#[test]
fn a_share_goes_to_the_node_of_the_shared_gpu_it_fits() {
    // allocateFractionalGpu_test.go, "1 shared gpu job running, 1 pending interactive shared
    // gpu job, allocate to same gpu - even if multiple nodes, to check gpusharingorder
    // plugin" (queue0 deserves 2), and integration_tests/allocate/allocateFractionalGpu_test.go,
    // "test gpuSharingOrder - one node empty and one node with already running frac job -
    // allocate to the node with already running job" (3): node1's shared device wins over
    // node0's idle ones.
    for deserved in [2.0, 3.0] {
        let c = case(
            vec![node("node0", 2), node("node1", 2)],
            vec![queue("queue0", deserved)],
            vec![
                job(
                    "running_shared_gpu_job0",
                    "queue0",
                    BUILD,
                    Gpu::Fraction(0.5),
                )
                .on_group("node1", "1"),
                job(
                    "pending_shared_gpu_job1",
                    "queue0",
                    BUILD,
                    Gpu::Fraction(0.5),
                )
                .pending(1),
            ],
        );
        c.run()
            .stays("running_shared_gpu_job0", &["node1"])
            .runs("pending_shared_gpu_job1", 60.0, &["node1"])
            .devices_held(1);
    }
}

/// 0.6 of a GPU running on node0 (2 GPUs) and 0.5 pending, queue0 deserving `deserved`.
fn six_tenths_and_a_half(deserved: f64) -> Case {
    case(
        vec![node("node0", 2)],
        vec![queue("queue0", deserved)],
        vec![
            job(
                "running_shared_gpu_job0",
                "queue0",
                BUILD,
                Gpu::Fraction(0.6),
            )
            .on_group("node0", "0"),
            job(
                "pending_shared_gpu_job1",
                "queue0",
                BUILD,
                Gpu::Fraction(0.5),
            )
            .pending(1),
        ],
    )
}

#[test]
fn a_share_that_does_not_fit_the_shared_gpu_opens_a_new_one() {
    // allocateFractionalGpu_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // "1 shared gpu job running, 1 pending interactive shared gpu job - allocate to new gpu".
    six_tenths_and_a_half(2.0)
        .run()
        .stays("running_shared_gpu_job0", &["node0"])
        .runs("pending_shared_gpu_job1", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn a_non_preemptible_share_over_the_queues_quota_is_not_allocated() {
    // allocateFractionalGpu_test.go, both cases "1 shared gpu job running, 1 pending
    // interactive shared gpu job - queue will be overused, don't allocate" (they differ only in
    // the order of a task's fields): 0.6 + 0.5 of a build priority exceeds queue0's 1 GPU.
    six_tenths_and_a_half(1.0)
        .run()
        .stays("running_shared_gpu_job0", &["node0"])
        .waits("pending_shared_gpu_job1")
        .devices_held(1);
}

#[test]
fn a_share_beside_a_whole_gpu_job() {
    // allocateFractionalGpu_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // "1 whole gpu job running, 1 pending interactive shared gpu job - allocate".
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            job("running_job0", "queue0", TRAIN, Gpu::Whole(1)).on("node0"),
            job(
                "pending_shared_gpu_job1",
                "queue0",
                BUILD,
                Gpu::Fraction(0.5),
            )
            .pending(1),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_shared_gpu_job1", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn a_whole_gpu_beside_a_share() {
    // allocateFractionalGpu_test.go, "1 shared gpu interactive job running, 1 pending whole
    // gpu job - allocate".
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            job(
                "running_shared_gpu_job0",
                "queue0",
                BUILD,
                Gpu::Fraction(0.5),
            )
            .on_group("node0", "1"),
            job("pending_whole_gpu_job1", "queue0", TRAIN, Gpu::Whole(1)).pending(1),
        ],
    );
    c.run()
        .stays("running_shared_gpu_job0", &["node0"])
        .runs("pending_whole_gpu_job1", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn three_of_four_shares_fit_beside_a_running_share() {
    // allocateFractionalGpu_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // "1 interactive shared gpu job running, 4 pending interactive shared gpus pending -
    // allocate 3 of the shared GPUs jobs": 0.6 opens GPU 1, 0.5 fills GPU 0, the next 0.5 fits
    // nowhere, 0.3 joins GPU 1.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            job(
                "running_shared_gpu_job0",
                "queue0",
                BUILD,
                Gpu::Fraction(0.5),
            )
            .on_group("node0", "0"),
            job(
                "pending_shared_gpu_job0",
                "queue0",
                BUILD,
                Gpu::Fraction(0.6),
            )
            .pending(1),
            job(
                "pending_shared_gpu_job1",
                "queue0",
                BUILD,
                Gpu::Fraction(0.5),
            )
            .pending(1),
            job(
                "pending_shared_gpu_job2",
                "queue0",
                BUILD,
                Gpu::Fraction(0.5),
            )
            .pending(1),
            job(
                "pending_shared_gpu_job3",
                "queue0",
                BUILD,
                Gpu::Fraction(0.3),
            )
            .pending(1),
        ],
    );
    c.run()
        .stays("running_shared_gpu_job0", &["node0"])
        .runs("pending_shared_gpu_job0", 60.0, &["node0"])
        .runs("pending_shared_gpu_job1", 60.0, &["node0"])
        .waits("pending_shared_gpu_job2")
        .runs("pending_shared_gpu_job3", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn a_share_counts_as_its_fraction_in_the_queues_gpus() {
    // allocateFractionalGpu_test.go, "Verify allocated fractional GPU jobs are counted in the
    // overall number of GPUs the default department will have": 0.5 + 1 of queue0's 2.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            job("running_job0", "queue0", BUILD, Gpu::Fraction(0.5)).on_group("node0", "1"),
            job("pending_job0", "queue0", BUILD, Gpu::Whole(1)).pending(1),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn a_train_share_is_allocated_over_quota_beside_two_shares() {
    // allocateFractionalGpu_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // the first "Allow allocation of fractional training when over quota with fractional jobs":
    // two build halves fill GPU 0 (queue0 deserves 1); a train half, preemptible, may go over
    // quota and opens GPU 1.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 1.0)],
        vec![
            job("running_job0", "queue0", BUILD, Gpu::Fraction(0.5)).on_group("node0", "0"),
            job("running_job1", "queue0", BUILD, Gpu::Fraction(0.5)).on_group("node0", "0"),
            job("pending_job0", "queue0", TRAIN, Gpu::Fraction(0.5)).pending(1),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .stays("running_job1", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn a_train_share_is_allocated_over_quota_beside_a_whole_gpu() {
    // allocateFractionalGpu_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // the second "Allow allocation of fractional training when over quota with fractional
    // jobs": a build job holds queue0's 1 deserved GPU whole.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 1.0)],
        vec![
            job("running_job0", "queue0", BUILD, Gpu::Whole(1)).on("node0"),
            job("pending_job0", "queue0", TRAIN, Gpu::Fraction(0.5)).pending(1),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .devices_held(2);
}

#[test]
fn spread_takes_the_node_without_a_share() {
    // allocateFractionalGpu_test.go, "Spread across nodes, when 1 node has shared GPU"
    // (nodeplacement spread for GPU and CPU, gpuspread: `placementStrategy: spread`).
    let c = case(
        vec![node("node0", 2), node("node1", 2)],
        vec![queue("queue0", 2.0)],
        vec![
            job("running_job0", "queue0", TRAIN, Gpu::Fraction(0.5)).on_group("node0", "0"),
            job("pending_job0", "queue0", TRAIN, Gpu::Fraction(0.2)).pending(1),
        ],
    )
    .placement("spread");
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_job0", 60.0, &["node1"])
        .devices_held(2);
}

#[test]
fn binpack_puts_a_share_on_the_shared_gpu() {
    // allocateFractionalGpu_test.go, "Pack jobs on nodes" (the default configuration).
    let c = case(
        vec![node("node0", 2), node("node1", 2)],
        vec![queue("queue0", 4.0)],
        vec![
            job("running_job0", "queue0", TRAIN, Gpu::Fraction(0.5)).on_group("node0", "0"),
            job("pending_job0", "queue0", TRAIN, Gpu::Fraction(0.2)).pending(1),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .devices_held(1);
}

/// node0's GPU 1 holds 0.5 and GPU 0 0.7 (of `gpus` GPUs); a 0.2 share arrives at 1m, and at
/// 2m a probe of 0.5, which fits beside the other shares only if the 0.2 went to GPU 0 (0.9
/// used, GPU 1 0.5 free) and not to GPU 1 (0.7 used, 0.3 free on each): the output does not
/// name a pod's device, the probe tells which it was.
fn shares_of_a_half_and_seven_tenths(gpus: u32, strategy: &'static str) -> Case {
    case(
        vec![node("node0", gpus)],
        vec![queue("queue0", f64::from(gpus))],
        vec![
            job("running_job0", "queue0", TRAIN, Gpu::Fraction(0.5)).on_group("node0", "1"),
            job("running_job1", "queue0", TRAIN, Gpu::Fraction(0.7)).on_group("node0", "0"),
            job("pending_job0", "queue0", TRAIN, Gpu::Fraction(0.2)).pending(1),
            job("probe", "queue0", TRAIN, Gpu::Fraction(0.5))
                .pending(1)
                .arrives("2m"),
        ],
    )
    .placement(strategy)
}

#[test]
fn gpupack_puts_a_share_on_the_most_used_gpu() {
    // allocateFractionalGpu_test.go, "Pack jobs on GPUs" (gpupack): the 0.2 joins GPU 0's 0.7.
    let r = shares_of_a_half_and_seven_tenths(2, "binpack").run();
    r.stays("running_job0", &["node0"])
        .stays("running_job1", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .runs("probe", 120.0, &["node0"])
        .devices_held(2);
}

#[test]
fn gpuspread_puts_a_share_on_the_least_used_gpu() {
    // allocateFractionalGpu_test.go, "Spread jobs across GPUs" (gpuspread; one node, so the
    // node strategy does not matter): the 0.2 joins GPU 1's 0.5, and the probe finds no room.
    let r = shares_of_a_half_and_seven_tenths(2, "spread").run();
    r.stays("running_job0", &["node0"])
        .stays("running_job1", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .waits("probe")
        .devices_held(2);
}

#[test]
fn gpuspread_opens_an_idle_gpu_before_a_shared_one() {
    // allocateFractionalGpu_test.go, "Spread jobs across free GPUs" (gpuspread, node0 of 8
    // GPUs): gpuspread's order scores an idle device 1 and a shared one 1 − its used portion,
    // so the 0.2 opens a third device and the probe's 0.5 finds room. Upstream's table names
    // group "1", but its `MatchExpectedAndRealTasks` compares groups only when the task's
    // groups equal the expected ones, so a new group passes there.
    let r = shares_of_a_half_and_seven_tenths(8, "spread").run();
    r.stays("running_job0", &["node0"])
        .stays("running_job1", &["node0"])
        .runs("pending_job0", 60.0, &["node0"])
        .runs("probe", 120.0, &["node0"])
        .devices_held(4);
}

// allocate/allocateGpuMemory_test.go (upstream's fake nodes have GPUs of 100 MiB)

/// A job of three pending 40 MiB tasks at priority `pc` on node0 (2 GPUs of 100 MiB), queue0
/// deserving 1 GPU up to `limit`.
fn three_memory_shares(pc: &'static str, limit: f64) -> Case {
    case(
        vec![node("node0", 2).gpu_memory(100)],
        vec![queue("queue0", 1.0).limit(limit)],
        vec![job("pending_job-0", "queue0", pc, Gpu::MemoryMib(40)).pending(3)],
    )
}

#[test]
fn memory_shares_of_a_build_job_over_the_deserved_quota_wait() {
    // allocateGpuMemory_test.go, "Non preemptible job requests gpu memory over deserved
    // quota": 3 × 0.4 GPU of a build job against queue0's 1.
    three_memory_shares(BUILD, -1.0)
        .run()
        .waits("pending_job-0");
}

#[test]
fn memory_shares_over_the_queue_limit_wait() {
    // allocateGpuMemory_test.go, "Preemptible job requests gpu memory over queue limit":
    // 3 × 0.4 GPU of a train job against queue0's limit of 1.
    three_memory_shares(TRAIN, 1.0).run().waits("pending_job-0");
}

#[test]
fn a_memory_share_on_an_empty_cluster() {
    // allocateGpuMemory_test.go and integration_tests/allocate/allocateFractionalGpu_test.go,
    // "Basic request gpu by memory when cluster is empty": 50 MiB of node0's 100 MiB GPU.
    let c = case(
        vec![node("node0", 1).gpu_memory(100)],
        vec![queue("queue0", 1.0)],
        vec![job("pending_job-0", "queue0", BUILD, Gpu::MemoryMib(50)).pending(1)],
    );
    c.run()
        .runs("pending_job-0", 60.0, &["node0"])
        .devices_held(1);
}

// integration_tests/allocate/allocate_test.go

/// Two pending train jobs of 2 GPUs in queue0 (of department-a) on node0 of 4 GPUs.
fn two_jobs_of_two_gpus(queues: Vec<Queue>) -> Case {
    case(
        vec![node("node0", 4)],
        queues,
        vec![
            job("pending_job0", "queue0", TRAIN, Gpu::Whole(2)).pending(1),
            job("pending_job1", "queue0", TRAIN, Gpu::Whole(2)).pending(1),
        ],
    )
}

#[test]
fn the_second_job_would_take_the_project_over_its_limit() {
    // allocate_test.go, "allocate job but does not allow to project to go over allowance".
    two_jobs_of_two_gpus(vec![
        queue("department-a", 2.0).weight(2.0),
        queue("queue0", 2.0)
            .weight(2.0)
            .limit(2.0)
            .parent("department-a"),
    ])
    .run()
    .runs("pending_job0", 60.0, &["node0"])
    .waits("pending_job1");
}

#[test]
fn the_second_job_would_take_the_department_over_its_limit() {
    // allocate_test.go, "allocate job but does not allow to department to go over allowance".
    two_jobs_of_two_gpus(vec![
        queue("department-a", 2.0).weight(2.0).limit(2.0),
        queue("queue0", 2.0).parent("department-a"),
    ])
    .run()
    .runs("pending_job0", 60.0, &["node0"])
    .waits("pending_job1");
}

#[test]
fn a_train_job_goes_over_quota_beside_a_build_job() {
    // allocate_test.go, "allocate pending jobs, allow over quota for train jobs (with
    // interactive jobs)": queue0 deserves 1 of node0's 2 GPUs.
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 1.0), queue("queue1", 1.0)],
        vec![
            job("pending_job0", "queue0", BUILD, Gpu::Whole(1)).pending(1),
            job("pending_job1", "queue0", TRAIN, Gpu::Whole(1)).pending(1),
        ],
    );
    c.run()
        .runs("pending_job0", 60.0, &["node0"])
        .runs("pending_job1", 60.0, &["node0"]);
}

#[test]
fn a_build_job_over_its_queues_quota_waits() {
    // allocate_test.go, "don't allocate over quota build jobs": 2 GPUs against queue0's 1.
    let c = case(
        vec![node("node0", 4)],
        vec![queue("queue0", 1.0), queue("queue1", 1.0)],
        vec![job("pending_job0", "queue0", BUILD, Gpu::Whole(2)).pending(1)],
    );
    c.run().waits("pending_job0");
}

/// Two build jobs of 1 GPU, of queue0 and queue1, for node0's single GPU.
fn two_queues_one_gpu(queue0: Queue, queue1: Queue) -> Case {
    case(
        vec![node("node0", 1)],
        vec![queue0, queue1],
        vec![
            job("pending_job0", "queue0", BUILD, Gpu::Whole(1)).pending(1),
            job("pending_job1", "queue1", BUILD, Gpu::Whole(1)).pending(1),
        ],
    )
}

#[test]
fn equal_shares_allocate_the_older_job_first() {
    // allocate_test.go, "allocate according to creation time when share is equal" (the two
    // jobs arrive together, pending_job0 first in the input).
    two_queues_one_gpu(queue("queue0", 1.0), queue("queue1", 1.0))
        .run()
        .runs("pending_job0", 60.0, &["node0"])
        .waits("pending_job1");
}

#[test]
fn the_queue_of_higher_priority_allocates_first() {
    // allocate_test.go, "allocate according to priority": queue1's priority is 101.
    two_queues_one_gpu(queue("queue0", 1.0), queue("queue1", 1.0).priority(101))
        .run()
        .waits("pending_job0")
        .runs("pending_job1", 60.0, &["node0"]);
}

#[test]
fn the_queue_deserving_more_allocates_first() {
    // allocate_test.go, "1 build job pending for each queue with different share - allocate
    // the second": queue1 deserves 2, queue0 1.
    two_queues_one_gpu(queue("queue0", 1.0), queue("queue1", 2.0))
        .run()
        .waits("pending_job0")
        .runs("pending_job1", 60.0, &["node0"]);
}

#[test]
fn four_queues_share_two_gpus_one_job_each() {
    // allocate_test.go, "Over provisioning with over quota, many queues to few GPUs - verify
    // queue share is updated during the same allocation round": four queues deserving 1 GPU
    // each, node0 of 2; queue0's and queue1's first jobs run, nothing else, and no queue at
    // its deserved share is reclaimed from.
    let c = case(
        vec![node("node0", 2)],
        vec![
            queue("queue0", 1.0),
            queue("queue1", 1.0),
            queue("queue2", 1.0),
            queue("queue3", 1.0),
        ],
        vec![
            job("pending_job0", "queue0", TRAIN, Gpu::Whole(1)).pending(1),
            job("pending_job1", "queue1", TRAIN, Gpu::Whole(1)).pending(1),
            job("pending_job2", "queue2", TRAIN, Gpu::Whole(1)).pending(1),
            job("pending_job3", "queue3", TRAIN, Gpu::Whole(1)).pending(1),
            job("pending_job4", "queue0", TRAIN, Gpu::Whole(1)).pending(1),
            job("pending_job5", "queue1", TRAIN, Gpu::Whole(1)).pending(1),
        ],
    );
    c.run()
        .runs("pending_job0", 60.0, &["node0"])
        .runs("pending_job1", 60.0, &["node0"])
        .waits("pending_job2")
        .waits("pending_job3")
        .waits("pending_job4")
        .waits("pending_job5");
}

#[test]
fn the_department_of_the_smaller_ratio_allocates_first() {
    // allocate_test.go, "Allocate Departments with smaller ratio 1st": d1 deserves 1 (queue0
    // 3, queue1 2), d2 deserves 2 (queue2 1); node0 has 1 GPU.
    let c = case(
        vec![node("node0", 1)],
        vec![
            queue("d1", 1.0).weight(1.0),
            queue("d2", 2.0).weight(2.0),
            queue("queue0", 3.0).parent("d1"),
            queue("queue1", 2.0).parent("d1"),
            queue("queue2", 1.0).parent("d2"),
        ],
        vec![
            job("pending_job0", "queue0", TRAIN, Gpu::Whole(1)).pending(1),
            job("pending_job1", "queue1", TRAIN, Gpu::Whole(1)).pending(1),
            job("pending_job2", "queue2", TRAIN, Gpu::Whole(1)).pending(1),
        ],
    );
    c.run()
        .waits("pending_job0")
        .waits("pending_job1")
        .runs("pending_job2", 60.0, &["node0"]);
}

#[test]
fn a_build_job_over_its_departments_quota_waits() {
    // allocate_test.go, "Don't allow allocation of interactive jobs above the department's
    // deserved GPUs": queue0 deserves 2, its department d1 only 1.
    let c = case(
        vec![node("node0", 4)],
        vec![
            queue("d1", 1.0).weight(1.0),
            queue("d2", 1.0).weight(1.0),
            queue("queue0", 2.0).parent("d1"),
            queue("queue1", 2.0).parent("d2"),
        ],
        vec![job("pending_job0", "queue0", BUILD, Gpu::Whole(2)).pending(1)],
    );
    c.run().waits("pending_job0");
}

#[test]
fn a_build_job_preempts_a_train_job_at_the_queues_limit() {
    // allocate_test.go, "try to allocate interactive after train when over-quota - train
    // should be preempted for interactive to run": queue0 deserves 1 GPU with a limit of 1;
    // the train job is preempted at 1m and the build job binds once it is gone (1m30s).
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 1.0).weight(1.0).limit(1.0)],
        vec![
            job("running_job_train", "queue0", TRAIN, Gpu::Whole(1)).on("node0"),
            job("pending_job_interactive", "queue0", BUILD, Gpu::Whole(1)).pending(1),
        ],
    );
    c.run()
        .evicted(
            "running_job_train",
            "Preempt",
            "pending_job_interactive",
            60.0,
        )
        .runs("pending_job_interactive", 90.0, &["node0"]);
}

#[test]
fn a_train_job_waits_at_the_queues_limit() {
    // allocate_test.go, "try to allocate train after interactive when over-quota - train
    // should not run".
    let c = case(
        vec![node("node0", 2)],
        vec![queue("queue0", 1.0).weight(1.0).limit(1.0)],
        vec![
            job("pending_job_interactive0", "queue0", BUILD, Gpu::Whole(1)).on("node0"),
            job("pending_job_train1", "queue0", TRAIN, Gpu::Whole(1)).pending(1),
        ],
    );
    c.run()
        .stays("pending_job_interactive0", &["node0"])
        .waits("pending_job_train1");
}

/// Two train jobs of 1 GPU and 2000 cores (upstream's fake reads `RequiredCPUsPerTask` as
/// cores) on node0 of 4 GPUs and 5000 cores; `queues` bound CPU to 2500 cores.
fn two_jobs_of_2000_cores(queues: Vec<Queue>) -> Case {
    case(
        vec![node("node0", 4).cpu_millis(5_000_000)],
        queues,
        vec![
            job("pending_job0", "queue0", TRAIN, Gpu::Whole(1))
                .cpu(2_000_000, 0)
                .pending(1),
            job("pending_job1", "queue0", TRAIN, Gpu::Whole(1))
                .cpu(2_000_000, 0)
                .pending(1),
        ],
    )
}

#[test]
fn the_second_job_would_take_the_queue_over_its_cpu_limit() {
    // allocate_test.go, "don't allow job over QUEUE deserved CPU" (queue0's CPU limit
    // 2500 × 1000 millicores).
    two_jobs_of_2000_cores(vec![
        queue("department-a", 2.0).weight(2.0),
        queue("queue0", 2.0)
            .weight(2.0)
            .limit(2.0)
            .cpu(-1.0, 2_500_000.0)
            .parent("department-a"),
    ])
    .run()
    .runs("pending_job0", 60.0, &["node0"])
    .waits("pending_job1");
}

#[test]
fn the_second_job_would_take_the_department_over_its_cpu_limit() {
    // allocate_test.go, "don't allow job over DEPARTMENT deserved CPU".
    two_jobs_of_2000_cores(vec![
        queue("department-a", 2.0)
            .weight(2.0)
            .cpu(-1.0, 2_500_000.0),
        queue("queue0", 2.0)
            .weight(2.0)
            .limit(2.0)
            .parent("department-a"),
    ])
    .run()
    .runs("pending_job0", 60.0, &["node0"])
    .waits("pending_job1");
}

#[test]
fn a_job_of_a_single_level_queue_runs() {
    // allocate_test.go, "single level queue hierarchy - allocate job"
    // (`DisableDefaultDepartment`).
    let c = case(
        vec![node("node0", 2)],
        vec![queue("root-queue", 2.0)],
        vec![job("pending_job0", "root-queue", TRAIN, Gpu::Whole(1)).pending(1)],
    );
    c.run().runs("pending_job0", 60.0, &["node0"]);
}

#[test]
fn jobs_of_two_teams_of_a_three_level_hierarchy_run() {
    // allocate_test.go, "three level queue hierarchy - allocate jobs across teams".
    let c = case(
        vec![node("node0", 4)],
        vec![
            queue("org", 4.0),
            queue("dept1", 2.0).parent("org"),
            queue("team1", 1.0).parent("dept1"),
            queue("team2", 1.0).parent("dept1"),
        ],
        vec![
            job("job_team1", "team1", TRAIN, Gpu::Whole(1)).pending(1),
            job("job_team2", "team2", TRAIN, Gpu::Whole(1)).pending(1),
        ],
    );
    c.run()
        .runs("job_team1", 60.0, &["node0"])
        .runs("job_team2", 60.0, &["node0"]);
}

#[test]
fn a_job_at_the_fourth_level_runs() {
    // allocate_test.go, "four level queue hierarchy - allocate job at deepest level".
    let c = case(
        vec![node("node0", 4)],
        vec![
            queue("company", 10.0),
            queue("division", 5.0).parent("company"),
            queue("department", 3.0).parent("division"),
            queue("project", 2.0).parent("department"),
        ],
        vec![job("deep_job", "project", TRAIN, Gpu::Whole(2)).pending(1)],
    );
    c.run().runs("deep_job", 60.0, &["node0"]);
}

// integration_tests/allocate/allocate_topology_test.go

const ZONE: &str = "topology.kubernetes.io/zone";
const RACK: &str = "topology.kubernetes.io/rack";
const REGION: &str = "topology.kubernetes.io/region";

/// A node of `gpus` GPUs in rack `rack`.
fn in_rack(name: &'static str, gpus: u32, rack: &'static str) -> Node {
    node(name, gpus).label(RACK, rack)
}

/// A Topology `rack-topology` of one level, the rack.
fn racks(nodes: Vec<Node>, queues: Vec<Queue>, jobs: Vec<Job>) -> Case {
    case(nodes, queues, jobs).topology("rack-topology", vec![RACK])
}

#[test]
fn a_job_requiring_a_zone_preferring_a_rack_stays_in_one_zone() {
    // allocate_topology_test.go, "Multi-level topology - pack job in single rack with
    // preferred level": 3 tasks; no rack has 3 GPUs, zone1 (node0, node1) has 4.
    let c = case(
        vec![
            node("node0", 2).label(ZONE, "zone1").label(RACK, "rack1"),
            node("node1", 2).label(ZONE, "zone1").label(RACK, "rack2"),
            node("node2", 2).label(ZONE, "zone2").label(RACK, "rack3"),
        ],
        vec![queue("queue0", 6.0)],
        vec![
            job("pending_job0", "queue0", TRAIN, Gpu::Whole(1))
                .pending(3)
                .topology("datacenter-topology", Some(ZONE), Some(RACK)),
        ],
    )
    .topology("datacenter-topology", vec![ZONE, RACK]);
    c.run()
        .runs_within("pending_job0", 60.0, 3, &["node0", "node1"]);
}

#[test]
fn a_required_rack_prefers_the_rack_already_used() {
    // allocate_topology_test.go, "Topology packing - prefer domains with existing
    // allocations": node0 (rack1) has 1 of 3 GPUs taken, node1 (rack2) none.
    let c = racks(
        vec![in_rack("node0", 3, "rack1"), in_rack("node1", 3, "rack2")],
        vec![queue("queue0", 6.0)],
        vec![
            job("running_job0", "queue0", TRAIN, Gpu::Whole(1))
                .on("node0")
                .topology("rack-topology", Some(RACK), None),
            job("pending_job0", "queue0", TRAIN, Gpu::Whole(1))
                .pending(2)
                .topology("rack-topology", Some(RACK), None),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .runs("pending_job0", 60.0, &["node0", "node0"]);
}

#[test]
fn a_job_no_rack_can_hold_waits() {
    // allocate_topology_test.go, "Topology constraint - job cannot fit in single domain, stays
    // pending": 2 tasks of 2 GPUs; rack1 has two nodes of 1 GPU, rack2 one of 2.
    let c = racks(
        vec![
            in_rack("node0", 1, "rack1"),
            in_rack("node1", 1, "rack1"),
            in_rack("node2", 2, "rack2"),
        ],
        vec![queue("queue0", 4.0)],
        vec![
            job("pending_job0", "queue0", TRAIN, Gpu::Whole(2))
                .pending(2)
                .topology("rack-topology", Some(RACK), None),
        ],
    );
    c.run().waits("pending_job0");
}

#[test]
fn a_job_requiring_a_region_stays_in_it() {
    // allocate_topology_test.go, "Three-level topology - allocate with required and preferred
    // constraints": 4 tasks, required region, preferred rack; us-west holds node0..node2.
    let node_at = |name, zone, rack, region| {
        node(name, 2)
            .label(REGION, region)
            .label(ZONE, zone)
            .label(RACK, rack)
    };
    let c = case(
        vec![
            node_at("node0", "us-west-1a", "rack1", "us-west"),
            node_at("node1", "us-west-1a", "rack2", "us-west"),
            node_at("node2", "us-west-1b", "rack3", "us-west"),
            node_at("node3", "us-east-1a", "rack4", "us-east"),
        ],
        vec![queue("queue0", 8.0)],
        vec![
            job("pending_job0", "queue0", TRAIN, Gpu::Whole(1))
                .pending(4)
                .topology("complex-topology", Some(REGION), Some(RACK)),
        ],
    )
    .topology("complex-topology", vec![REGION, ZONE, RACK]);
    c.run()
        .runs_within("pending_job0", 60.0, 4, &["node0", "node1", "node2"]);
}

#[test]
fn a_job_requiring_a_rack_takes_the_free_one() {
    // allocate_topology_test.go, "Topology with partial allocation - one rack full, allocate
    // remaining in another": queue0's job fills rack1 (node0, node1).
    let c = racks(
        vec![
            in_rack("node0", 1, "rack1"),
            in_rack("node1", 1, "rack1"),
            in_rack("node2", 2, "rack2"),
        ],
        vec![queue("queue0", 2.0), queue("queue1", 2.0)],
        vec![
            job("running_job0", "queue0", TRAIN, Gpu::Whole(1))
                .on("node0")
                .on("node1")
                .topology("rack-topology", Some(RACK), None),
            job("pending_job0", "queue1", TRAIN, Gpu::Whole(1))
                .pending(2)
                .topology("rack-topology", Some(RACK), None),
        ],
    );
    c.run().stays("running_job0", &["node0", "node1"]).runs(
        "pending_job0",
        60.0,
        &["node2", "node2"],
    );
}

#[test]
fn a_preferred_rack_that_cannot_be_had_does_not_block() {
    // allocate_topology_test.go, "Preferred topology only - still allocates when preferred
    // level cannot be satisfied": one GPU free in each rack, 2 tasks.
    let c = racks(
        vec![in_rack("node0", 2, "rack1"), in_rack("node1", 2, "rack2")],
        vec![queue("queue0", 4.0)],
        vec![
            job("running_job0", "queue0", TRAIN, Gpu::Whole(1)).on("node0"),
            job("running_job1", "queue0", TRAIN, Gpu::Whole(1)).on("node1"),
            job("pending_job0", "queue0", TRAIN, Gpu::Whole(1))
                .pending(2)
                .topology("rack-topology", None, Some(RACK)),
        ],
    );
    c.run()
        .stays("running_job0", &["node0"])
        .stays("running_job1", &["node1"])
        .runs_within("pending_job0", 60.0, 2, &["node0", "node1"]);
}

#[test]
fn a_required_rack_with_the_cpu_for_the_job() {
    // allocate_topology_test.go, "Topology with CPU constraints - allocate within topology
    // domain respecting CPU limits": 2 tasks of 1 GPU and 2000 cores; rack2's node1 has 1000.
    let c = racks(
        vec![
            in_rack("node0", 2, "rack1").cpu_millis(5_000_000),
            in_rack("node1", 2, "rack2").cpu_millis(1_000_000),
        ],
        vec![queue("queue0", 4.0)],
        vec![
            job("pending_job0", "queue0", TRAIN, Gpu::Whole(1))
                .cpu(2_000_000, 0)
                .pending(2)
                .topology("rack-topology", Some(RACK), None),
        ],
    );
    c.run().runs("pending_job0", 60.0, &["node0", "node0"]);
}

#[test]
fn a_job_of_four_tasks_waits_when_every_rack_has_two_gpus() {
    // allocate_topology_test.go, "Topology constraint failure - sufficient cluster resources
    // but fragmented across domains": the cluster has 8 GPUs, each rack 2.
    let c = racks(
        vec![
            in_rack("node0", 2, "rack1"),
            in_rack("node1", 2, "rack2"),
            in_rack("node2", 2, "rack3"),
            in_rack("node3", 2, "rack4"),
        ],
        vec![queue("queue0", 8.0)],
        vec![
            job("pending_job0", "queue0", TRAIN, Gpu::Whole(1))
                .pending(4)
                .topology("rack-topology", Some(RACK), None),
        ],
    );
    let r = c.run();
    r.waits("pending_job0");
    // KAI's message names each rack ("node-group rack1 can allocate only 2 of 4 required
    // pods") and the unsatisfied requirement.
    let text = r
        .job("pending_job0")
        .conditions
        .iter()
        .map(|c| c.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
        + &r.job("pending_job0")
            .events
            .iter()
            .map(|e| format!("{e:?}"))
            .collect::<Vec<_>>()
            .join("\n");
    assert!(
        text.contains("node-group rack4 can allocate only 2 of 4 required pods"),
        "{text}"
    );
}
