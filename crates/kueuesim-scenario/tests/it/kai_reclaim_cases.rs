//! KAI's reclaim over whole clusters: the cases of upstream's
//! `pkg/scheduler/actions/integration_tests/reclaim/reclaim_test.go` with CPU-only or mixed CPU
//! and GPU tasks, each written from a table (one node, KAI queues, batch Jobs) as upstream's
//! `TestTopologyBasic` gives it, run until the cluster settles as upstream's integration tests
//! run the actions, and checked for which jobs were reclaimed, when and for whom, and which
//! pending jobs run from when.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, result};

use crate::util::{load_text, wl};

/// A KAI queue of the test: its GPU quota and over-quota weight, and its CPU (millicores, as
/// a Queue's quota counts them) and memory (bytes) quotas, `None` for upstream's default of
/// unlimited (`NoMaxAllowedResource`, -1).
struct Queue {
    name: &'static str,
    gpus: f64,
    gpu_weight: f64,
    cpu: Option<f64>,
    memory: Option<f64>,
}

/// One job of one pod: `gpus`, `cpu` cores and `memory` bytes per pod, at PriorityClass `pc`
/// (`train` 50, preemptible; `build` 100, not preemptible); `running` jobs are placed by KAI
/// at the start (one second apart, in the test's order, so the first is the oldest as
/// upstream's `BuildJobsAndTasksMaps` dates them), the others arrive at 1m.
struct Job {
    name: &'static str,
    queue: &'static str,
    gpus: u32,
    cpu: u32,
    memory: u64,
    pc: &'static str,
    running: bool,
}

/// Upstream's fake node: `gpus` GPUs, `memory` bytes and 20000 CPU (`cpuMilliAllocatable`,
/// read as cores where a test does not give `CPUMillis`).
struct Node {
    gpus: u32,
    cpu: u32,
    memory: u64,
}

/// The scenario text of a case: a Simulation of 10m with a podTermination of 30s, node0,
/// PriorityClasses `train` and `build`, the queues (KAI's test builder gives CPU and memory an
/// over-quota weight of 1; the default department of unlimited quota is left out) and the jobs.
fn scenario(node: &Node, queues: &[Queue], jobs: &[Job]) -> String {
    let mut s = format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec: {{until: 10m, podTermination: 30s}}\n---\napiVersion: v1\nkind: Node\nmetadata: {{name: node0}}\nstatus:\n  allocatable: {{nvidia.com/gpu: '{}', cpu: '{}', memory: '{}', pods: '110'}}\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: train}}\nvalue: 50\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: build}}\nvalue: 100\n",
        node.gpus, node.cpu, node.memory
    );
    let quota = |q: Option<f64>| q.unwrap_or(-1.0);
    for q in queues {
        s += &format!(
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: {}}}\nspec:\n  resources:\n    gpu: {{quota: {}, overQuotaWeight: {}, limit: -1}}\n    cpu: {{quota: {}, overQuotaWeight: 1, limit: -1}}\n    memory: {{quota: {}, overQuotaWeight: 1, limit: -1}}\n",
            q.name,
            q.gpus,
            q.gpu_weight,
            quota(q.cpu),
            quota(q.memory)
        );
    }
    let mut started = 0;
    for j in jobs {
        let arrival = if j.running {
            started += 1;
            format!("{}s", started - 1)
        } else {
            "1m".to_string()
        };
        let mut requests = format!("cpu: '{}', memory: '{}'", j.cpu, j.memory);
        if j.gpus > 0 {
            requests += &format!(", nvidia.com/gpu: '{}'", j.gpus);
        }
        s += &format!(
            "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {}\n  namespace: team\n  labels: {{kai.scheduler/queue: {}}}\n  annotations: {{kueuesim.io/arrival: {arrival}}}\nspec:\n  template:\n    spec:\n      schedulerName: kai-scheduler\n      priorityClassName: {}\n      containers:\n      - resources: {{limits: {{{requests}}}}}\n",
            j.name, j.queue, j.pc
        );
    }
    s
}

/// What a case expects once the cluster settles.
struct Expect {
    /// Running jobs reclaimed, each with the pending job it was reclaimed for and when (s);
    /// their new pods find no room (`Pending`).
    reclaimed: &'static [(&'static str, &'static str, f64)],
    /// Pending jobs that run, and since when (s).
    runs: &'static [(&'static str, f64)],
    /// Pending jobs that still wait at the end.
    waits: &'static [&'static str],
}

/// Runs the case and checks `expect`; every running job not reclaimed runs on, never evicted.
fn check(node: &Node, queues: &[Queue], jobs: &[Job], expect: &Expect) {
    let text = scenario(node, queues, jobs);
    let loaded = load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let r: SimulationResult = result(&loaded.world, &Simulation::new(&loaded.world).run());
    // Every job's state, bind time and evictions, for a failure's message.
    let all: Vec<String> = jobs
        .iter()
        .map(|j| {
            let w = wl(&r, "team", j.name);
            let ev: Vec<(f64, Option<&str>)> = w
                .evictions
                .iter()
                .map(|e| (e.at, e.preemptor.as_deref()))
                .collect();
            format!("{} {} {:?} {ev:?}", j.name, w.state, w.running_at)
        })
        .collect();
    let all = all.join("; ");
    for j in jobs {
        let w = wl(&r, "team", j.name);
        let evictions: Vec<(f64, &str, Option<&str>)> = w
            .evictions
            .iter()
            .map(|e| (e.at, e.reason, e.preemptor.as_deref()))
            .collect();
        if let Some((_, by, at)) = expect.reclaimed.iter().find(|(v, ..)| *v == j.name) {
            let by = format!("team/{by}");
            assert_eq!(
                evictions,
                [(*at, "Reclaim", Some(by.as_str()))],
                "{} reclaimed; {all}",
                j.name
            );
            assert_eq!(w.state, "Pending", "{}: its new pod waits; {all}", j.name);
            continue;
        }
        assert!(evictions.is_empty(), "{}: {all}", j.name);
        if j.running {
            assert_eq!(w.state, "Running", "{} runs on; {all}", j.name);
            assert_eq!(w.running_at, Some(w.created_at), "{}; {all}", j.name);
        } else if let Some((_, at)) = expect.runs.iter().find(|(n, _)| *n == j.name) {
            assert_eq!(
                (w.state, w.running_at),
                ("Running", Some(*at)),
                "{}; {all}",
                j.name
            );
        } else {
            assert!(expect.waits.contains(&j.name), "{}: {all}", j.name);
            assert_eq!(w.state, "Pending", "{} waits; {all}", j.name);
        }
    }
}

/// A queue of `gpus` deserved GPUs at over-quota weight `weight`, CPU and memory quotas
/// `cpu_memory` (`None`: unlimited, upstream's default; `Some(0.0)`: `DeservedCPUs` and
/// `DeservedMemory` of 0).
fn queue(name: &'static str, gpus: f64, weight: f64, cpu_memory: Option<f64>) -> Queue {
    Queue {
        name,
        gpus,
        gpu_weight: weight,
        cpu: cpu_memory,
        memory: cpu_memory,
    }
}

/// A running job (placed by KAI at the start).
fn running(
    name: &'static str,
    queue: &'static str,
    (gpus, cpu, memory): (u32, u32, u64),
    pc: &'static str,
) -> Job {
    Job {
        name,
        queue,
        gpus,
        cpu,
        memory,
        pc,
        running: true,
    }
}

/// A job arriving at 1m.
fn pending(
    name: &'static str,
    queue: &'static str,
    (gpus, cpu, memory): (u32, u32, u64),
    pc: &'static str,
) -> Job {
    Job {
        running: false,
        ..running(name, queue, (gpus, cpu, memory), pc)
    }
}

/// Upstream's fake node: `gpus` GPUs, `memory` bytes, 20000 CPU unless the test gives
/// `CPUMillis`.
fn node(gpus: u32, memory: u64) -> Node {
    Node {
        gpus,
        cpu: 20000,
        memory,
    }
}

const MB50: u64 = 50_000_000;
const MB40: u64 = 40_000_000;

#[test]
fn cpu_only_jobs_of_a_queue_of_unlimited_cpu_and_memory_are_not_reclaimed() {
    // "[useOnlyFreeResources OFF sanity] q0 allocated only cpu tasks, has 0 deserved GPUs and
    // useOnlyFreeResources=false (implicit). q1 requires cpu only tasks of same priority to be
    // allocated and does not reclaim from q0 jobs": queue0's quota of CPU and memory is
    // unlimited, so it deserves the node's whole 100 MB and holds no more: no victim.
    check(
        &node(1, 100_000_000),
        &[
            queue("queue0", 0.0, 0.0, None),
            queue("queue1", 1.0, 1.0, None),
        ],
        &[
            running("running-job0", "queue0", (0, 2, MB50), "train"),
            running("running-job1", "queue0", (0, 2, MB50), "train"),
            pending("pending-job0", "queue1", (0, 2, MB50), "train"),
            pending("pending-job1", "queue1", (0, 2, MB50), "train"),
        ],
        &Expect {
            reclaimed: &[],
            runs: &[],
            waits: &["pending-job0", "pending-job1"],
        },
    );
}

#[test]
fn a_gpu_job_is_reclaimed_and_the_cpu_only_job_before_it_takes_the_memory() {
    // "[useOnlyFreeResources OFF sanity] q0 allocated CPU and GPU tasks, has 0 deserved GPUs
    // and useOnlyFreeResources=false (implicit). q1 requires cpu+gpu tasks of same priority to
    // be allocated and reclaims the resources of the GPU job from q0. the cpu only job from q1
    // is scheduled because it is defined before the GPU+CPU task": queue0 is above its GPU
    // share of 0, so any of its jobs may be reclaimed; pending-job0, first in the job order,
    // reclaims the younger running-job1 for its memory, and pending-job1 then finds no victim
    // (queue0's running-job0 holds no GPU, and its memory is within queue0's unlimited share).
    // The end state is upstream's: running-job1 and pending-job1 pending, the others running.
    check(
        &node(1, 100_000_000),
        &[
            queue("queue0", 0.0, 0.0, None),
            queue("queue1", 1.0, 1.0, None),
        ],
        &[
            running("running-job0", "queue0", (0, 2, MB50), "train"),
            running("running-job1", "queue0", (1, 2, MB50), "train"),
            pending("pending-job0", "queue1", (0, 2, MB50), "train"),
            pending("pending-job1", "queue1", (1, 2, MB50), "train"),
        ],
        &Expect {
            reclaimed: &[("running-job1", "pending-job0", 60.0)],
            runs: &[("pending-job0", 90.0)],
            waits: &["pending-job1"],
        },
    );
}

#[test]
fn both_jobs_of_a_queue_above_its_gpu_share_are_reclaimed_for_memory() {
    // "[useOnlyFreeResources OFF sanity] q0,q1 allocated both gpu and cpu tasks, q1 has 0
    // deserved gpus and useOnlyFreeResources=false. when tasks from q2 with higher priority
    // require cpu + gpu, it reclaims both jobs from q1 despite only 1 of them having requested
    // GPU because 2 jobs from q2 require GPU and memory limit on node allows 4 jobs total".
    check(
        &node(10, 200_000_000),
        &[
            queue("queue0", 5.0, 5.0, None),
            queue("queue1", 0.0, 0.0, None),
            queue("queue2", 5.0, 5.0, None),
        ],
        &[
            running("running-job0", "queue0", (2, 2, MB50), "build"),
            running("running-job1", "queue0", (3, 3, MB50), "build"),
            running("running-job2", "queue1", (1, 1, MB50), "train"),
            running("running-job3", "queue1", (0, 4, MB50), "train"),
            pending("pending-job0", "queue2", (3, 1, MB50), "build"),
            pending("pending-job1", "queue2", (0, 3, MB50), "build"),
            pending("pending-job2", "queue2", (2, 1, MB50), "build"),
        ],
        &Expect {
            reclaimed: &[
                ("running-job3", "pending-job0", 60.0),
                ("running-job2", "pending-job1", 60.0),
            ],
            runs: &[("pending-job0", 90.0), ("pending-job1", 90.0)],
            waits: &["pending-job2"],
        },
    );
}

#[test]
fn a_queue_deserving_no_cpu_or_memory_loses_both_jobs() {
    // "q0 allocated CPU and GPU tasks, has 0 deserved GPUs and useOnlyFreeResources=true. q1
    // requires cpu+gpu tasks of same priority to be allocated and reclaim from q0 jobs":
    // pending-job0 reclaims running-job1 at 1m. Upstream's session pipelines pending-job1 onto
    // running-job1's releasing GPU and reclaims running-job0's memory for it in the same
    // session; kueuesim's victim search counts the terminating pod as used, so pending-job1
    // reclaims running-job0 in the session after it is gone (1m30s) and runs at 2m
    // (docs/semantics.md, reclaim). The end state is upstream's.
    check(
        &node(1, 100_000_000),
        &[
            queue("queue0", 0.0, 0.0, Some(0.0)),
            queue("queue1", 1.0, 1.0, None),
        ],
        &[
            running("running-job0", "queue0", (0, 2, MB50), "train"),
            running("running-job1", "queue0", (1, 2, MB50), "train"),
            pending("pending-job0", "queue1", (0, 2, MB50), "train"),
            pending("pending-job1", "queue1", (1, 2, MB50), "train"),
        ],
        &Expect {
            reclaimed: &[
                ("running-job1", "pending-job0", 60.0),
                ("running-job0", "pending-job1", 90.0),
            ],
            runs: &[("pending-job0", 90.0), ("pending-job1", 120.0)],
            waits: &[],
        },
    );
}

/// The jobs of the two cases of three queues with 40 MB tasks (upstream's "q0,q1 allocated
/// both gpu and cpu tasks, …") on a node of 10 GPUs and 200 MB.
fn three_queue_jobs() -> [Job; 7] {
    [
        running("running-job0", "queue0", (2, 2, MB40), "build"),
        running("running-job1", "queue0", (3, 3, MB40), "build"),
        running("running-job2", "queue1", (1, 1, MB40), "train"),
        running("running-job3", "queue1", (0, 4, MB40), "train"),
        pending("pending-job0", "queue2", (3, 1, MB40), "build"),
        pending("pending-job1", "queue2", (0, 3, MB40), "build"),
        pending("pending-job2", "queue2", (2, 1, MB40), "build"),
    ]
}

#[test]
fn a_queue_deserving_nothing_loses_both_jobs_to_higher_priority_tasks() {
    // "q0,q1 allocated both gpu and cpu tasks, q1 has 0 deserved resources and
    // useOnlyFreeResources=true. when tasks from q2 with higher priority require cpu, it
    // reclaim from q1".
    check(
        &node(10, 200_000_000),
        &[
            queue("queue0", 5.0, 5.0, None),
            queue("queue1", 0.0, 0.0, Some(0.0)),
            queue("queue2", 5.0, 5.0, None),
        ],
        &three_queue_jobs(),
        &Expect {
            reclaimed: &[
                ("running-job3", "pending-job1", 60.0),
                ("running-job2", "pending-job2", 60.0),
            ],
            runs: &[
                ("pending-job0", 60.0),
                ("pending-job1", 90.0),
                ("pending-job2", 90.0),
            ],
            waits: &[],
        },
    );
}

#[test]
fn a_queue_deserving_a_gpu_but_no_memory_loses_both_jobs() {
    // "q0,q1 allocated both gpu and cpu tasks, q1 has deserved GPUs and
    // useOnlyFreeResources=true. when tasks from q2 with higher priority require cpu and gpu,
    // it will reclaim ALL from q1 as memory on the node is not enough for all".
    check(
        &node(10, 200_000_000),
        &[
            queue("queue0", 5.0, 5.0, None),
            queue("queue1", 1.0, 1.0, Some(0.0)),
            queue("queue2", 5.0, 5.0, None),
        ],
        &three_queue_jobs(),
        &Expect {
            reclaimed: &[
                ("running-job3", "pending-job1", 60.0),
                ("running-job2", "pending-job2", 60.0),
            ],
            runs: &[
                ("pending-job0", 60.0),
                ("pending-job1", 90.0),
                ("pending-job2", 90.0),
            ],
            waits: &[],
        },
    );
}

#[test]
fn a_higher_priority_cpu_only_job_reclaims_memory() {
    // "q0 allocated only cpu tasks, has 0 deserved resources and useOnlyFreeResources=true.
    // q1 requires cpu only tasks of higher priority to be allocated and reclaim (memory) from
    // q1 jobs": the node's 40 MB are running-job0's.
    check(
        &node(1, 40_000_000),
        &[
            queue("queue0", 0.0, 0.0, Some(0.0)),
            queue("queue1", 1.0, 1.0, None),
        ],
        &[
            running("running-job0", "queue0", (0, 4, MB40), "train"),
            pending("pending-job0", "queue1", (0, 4, MB40), "build"),
        ],
        &Expect {
            reclaimed: &[("running-job0", "pending-job0", 60.0)],
            runs: &[("pending-job0", 90.0)],
            waits: &[],
        },
    );
}

#[test]
fn cpu_only_jobs_that_fit_are_allocated_without_a_reclaim() {
    // "q0 allocated only cpu tasks, has 0 deserved resources and useOnlyFreeResources=true.
    // q1 requires cpu only tasks of higher priority to be allocated and reclaim (CPU) from q1
    // jobs" (CPUMillis 100000, 5 cores a task) and "… does not reclaim q0 jobs because there
    // are enough cpu and memory resources" (2 cores a task): the node's 200 MB hold all four
    // jobs, which upstream expects running.
    for (cpu, per_task) in [(100_000, 5), (20_000, 2)] {
        check(
            &Node {
                gpus: 1,
                cpu,
                memory: 200_000_000,
            },
            &[
                queue("queue0", 0.0, 0.0, Some(0.0)),
                queue("queue1", 1.0, 1.0, None),
            ],
            &[
                running("running-job0", "queue0", (0, per_task, MB50), "train"),
                running("running-job1", "queue0", (0, per_task, MB50), "train"),
                pending("pending-job0", "queue1", (0, per_task, MB50), "build"),
                pending("pending-job1", "queue1", (0, per_task, MB50), "build"),
            ],
            &Expect {
                reclaimed: &[],
                runs: &[("pending-job0", 60.0), ("pending-job1", 60.0)],
                waits: &[],
            },
        );
    }
}

#[test]
fn a_build_job_above_its_queues_gpu_quota_neither_binds_nor_reclaims() {
    // "q0 allocated cpu and gpu tasks, has 0 deserved gpus and useOnlyFreeResources=true. q1
    // requires cpu only tasks of higher priority to be allocated and does not reclaim q0 jobs
    // because does not deserve enough GPU": the build jobs (not preemptible) ask 2 GPUs each
    // where queue1 deserves 1, so neither is allocated although the node's 2 GPUs are free.
    check(
        &Node {
            gpus: 2,
            cpu: 100_000,
            memory: 200_000_000,
        },
        &[
            queue("queue0", 0.0, 0.0, Some(0.0)),
            queue("queue1", 1.0, 1.0, None),
        ],
        &[
            running("running-job0", "queue0", (0, 5, MB50), "train"),
            running("running-job1", "queue0", (0, 5, MB50), "train"),
            pending("pending-job0", "queue1", (2, 5, MB50), "build"),
            pending("pending-job1", "queue1", (2, 5, MB50), "build"),
        ],
        &Expect {
            reclaimed: &[],
            runs: &[],
            waits: &["pending-job0", "pending-job1"],
        },
    );
}
