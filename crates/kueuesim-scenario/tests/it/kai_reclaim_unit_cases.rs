//! KAI's reclaim action against upstream's unit tests: the cases of
//! `pkg/scheduler/actions/reclaim/reclaim_test.go`, `reclaimDepartments_test.go`,
//! `reclaim_sub_group_test.go` and `reclaimGang_test.go` (`TestTopologyBasic` tables), each
//! written from a table of nodes, queues (departments are parent Queues) and jobs, run until
//! the cluster settles, and checked job by job: which were evicted, when, why and for whom,
//! and where each pod ends, bound since when.
//!
//! Every job is a KAI PodGroup (upstream's fake jobs: one PodGroup, a gang of all its tasks
//! unless the test gives a smaller minimum) with a batch Job, whose running pods are bound
//! from its arrival (`kueuesim.io/bound-nodes`) and replaced when evicted or moved; a job
//! whose tasks have subgroups or node constraints of their own has bare Pods instead, named
//! as upstream names its tasks (`<job>-<index>`), the running ones bound from time 0
//! (`spec.nodeName`). `_` in upstream's names is `-` here (a DNS-1123 name). The running
//! jobs arrive in upstream's creation order (`BuildJobsAndTasksMaps`: sorted by priority,
//! highest first, then in the test's order, the first the oldest), one second apart, which
//! dates them for KAI's job order; the pending ones arrive at 1m.
//! Upstream's `Releasing` victim is an eviction at 1m here, and its `Pipelined` job binds
//! once the victims are gone (`podTermination` 30s: at 1m30s).

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, result};

use crate::util::{load_text, wl};

/// A KAI queue of the test: deserved GPUs (-1: unlimited), GPU over-quota weight and parent
/// (a department). CPU and memory are left unlimited, as upstream's test builder leaves them.
struct Queue {
    name: &'static str,
    gpus: f64,
    weight: f64,
    parent: Option<&'static str>,
}

/// A queue of `gpus` deserved GPUs at weight `weight` (upstream's `GPUOverQuotaWeight`,
/// 0 where a test leaves it out) without a department.
fn q(name: &'static str, gpus: f64, weight: f64) -> Queue {
    Queue {
        name,
        gpus,
        weight,
        parent: None,
    }
}

/// A queue of department `parent`.
fn qd(name: &'static str, gpus: f64, weight: f64, parent: &'static str) -> Queue {
    Queue {
        parent: Some(parent),
        ..q(name, gpus, weight)
    }
}

/// A department of upstream's test builder (`BuildDepartmentInfoMap`): a Queue whose GPU
/// over-quota weight is its deserved GPUs.
fn dept(name: &'static str, gpus: f64) -> Queue {
    q(name, gpus, gpus)
}

/// Upstream's PriorityClass of a job.
#[derive(Clone, Copy, PartialEq)]
enum Pc {
    /// `PriorityTrainNumber`, 50 (preemptible).
    Train,
    /// `PriorityTrainNumber - 1`.
    TrainMinusOne,
    /// `PriorityInteractivePreemptibleNumber`, 75 (preemptible).
    InteractivePreemptible,
    /// `PriorityBuildNumber`, 100 (not preemptible).
    Build,
    /// `PriorityInferenceNumber`, 125 (not preemptible).
    Inference,
}

impl Pc {
    fn name(self) -> &'static str {
        match self {
            Pc::Train => "train",
            Pc::TrainMinusOne => "train-minus-one",
            Pc::InteractivePreemptible => "interactive-preemptible",
            Pc::Build => "build",
            Pc::Inference => "inference",
        }
    }

    fn value(self) -> i32 {
        match self {
            Pc::Train => 50,
            Pc::TrainMinusOne => 49,
            Pc::InteractivePreemptible => 75,
            Pc::Build => 100,
            Pc::Inference => 125,
        }
    }
}

const ALL_PCS: [Pc; 5] = [
    Pc::Train,
    Pc::TrainMinusOne,
    Pc::InteractivePreemptible,
    Pc::Build,
    Pc::Inference,
];

/// One task: the node it runs on (`None`: pending), its subgroup, and whether it asks a node
/// label no node has (upstream's `NodeAffinityNames: ["unexisting-node-affinity"]`).
#[derive(Clone, Copy)]
struct Task {
    node: Option<&'static str>,
    subgroup: Option<&'static str>,
    unplaceable: bool,
}

/// A task running on `node`.
const fn on(node: &'static str) -> Task {
    Task {
        node: Some(node),
        subgroup: None,
        unplaceable: false,
    }
}

/// A pending task.
const P: Task = Task {
    node: None,
    subgroup: None,
    unplaceable: false,
};

/// A job: its queue, PriorityClass, GPUs per task (a fraction: a `gpu-fraction` share),
/// tasks, gang minimum (`None`: all its tasks) and subgroups (name, minimum).
struct Job {
    name: &'static str,
    queue: &'static str,
    pc: Pc,
    gpus: f64,
    tasks: Vec<Task>,
    min: Option<usize>,
    subgroups: &'static [(&'static str, usize)],
}

/// A job of `tasks`.
fn job(name: &'static str, queue: &'static str, pc: Pc, gpus: f64, tasks: &[Task]) -> Job {
    Job {
        name,
        queue,
        pc,
        gpus,
        tasks: tasks.to_vec(),
        min: None,
        subgroups: &[],
    }
}

impl Job {
    fn running(&self) -> bool {
        self.tasks.iter().any(|t| t.node.is_some())
    }

    /// Whether the job is written as bare Pods (tasks of subgroups, or of node constraints of
    /// their own), else as a batch Job whose pods its controller replaces when they are
    /// evicted or moved (upstream's tests leave that to the next session).
    fn bare_pods(&self) -> bool {
        !self.subgroups.is_empty() || self.tasks.iter().any(|t| t.unplaceable)
    }
}

/// The jobs in upstream's creation order (oldest first): by priority, highest first, stable.
fn creation_order(jobs: &[Job]) -> Vec<&Job> {
    let mut order: Vec<&Job> = jobs.iter().collect();
    order.sort_by_key(|j| std::cmp::Reverse(j.pc.value()));
    order
}

/// The scenario text: a Simulation of 10m with a podTermination of 30s, the nodes (GPUs
/// only, as upstream's tasks ask nothing else), the PriorityClasses, the queues and the jobs.
fn scenario(nodes: &[(&str, u32)], queues: &[Queue], jobs: &[Job]) -> String {
    // GPU shares need KAI's GPU sharing (`gpuPlacement.devices`).
    let sharing = if jobs.iter().any(|j| j.gpus.fract() != 0.0) {
        ", gpuPlacement: {devices: true}"
    } else {
        ""
    };
    let mut s = format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec: {{until: 10m, podTermination: 30s{sharing}}}\n"
    );
    for (name, gpus) in nodes {
        s += &format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus:\n  allocatable: {{nvidia.com/gpu: '{gpus}', pods: '110'}}\n"
        );
    }
    for pc in ALL_PCS {
        s += &format!(
            "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {}}}\nvalue: {}\n",
            pc.name(),
            pc.value()
        );
    }
    for q in queues {
        let parent = q
            .parent
            .map(|p| format!("  parentQueue: {p}\n"))
            .unwrap_or_default();
        s += &format!(
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: {}}}\nspec:\n{parent}  resources:\n    gpu: {{quota: {}, overQuotaWeight: {}, limit: -1}}\n",
            q.name, q.gpus, q.weight
        );
    }
    let mut started = 0;
    for j in creation_order(jobs) {
        let arrival = if j.running() {
            started += 1;
            format!("{}s", started - 1)
        } else {
            "1m".to_string()
        };
        let min = j.min.unwrap_or(j.tasks.len());
        let mut groups = String::new();
        if !j.subgroups.is_empty() {
            groups += "\n  subGroups:";
            for (name, m) in j.subgroups {
                groups += &format!("\n  - {{name: {name}, minMember: {m}}}");
            }
        }
        s += &format!(
            "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: {}, namespace: team}}\nspec:\n  queue: {}\n  minMember: {min}{groups}\n",
            j.name, j.queue
        );
        let (limits, fraction) = if j.gpus.fract() == 0.0 {
            (format!("{{nvidia.com/gpu: '{}'}}", j.gpus), String::new())
        } else {
            // A share asks no resource of the node's (its fraction is in the annotation).
            ("{}".to_string(), format!("gpu-fraction: '{}'", j.gpus))
        };
        if !j.bare_pods() {
            // A batch Job of the PodGroup, its running pods bound from the start.
            let bound: Vec<&str> = j.tasks.iter().filter_map(|t| t.node).collect();
            let bound = if bound.is_empty() {
                String::new()
            } else {
                format!(", kueuesim.io/bound-nodes: '{}'", bound.join(","))
            };
            s += &format!(
                "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: team\n  labels: {{kai.scheduler/queue: {}}}\n  annotations: {{pod-group-name: {name}, kueuesim.io/arrival: {arrival}{bound}}}\nspec:\n  parallelism: {n}\n  completions: {n}\n  template:\n    metadata: {{annotations: {{{fraction}}}}}\n    spec:\n      schedulerName: kai-scheduler\n      priorityClassName: {}\n      containers:\n      - resources: {{limits: {limits}}}\n",
                j.queue,
                j.pc.name(),
                name = j.name,
                n = j.tasks.len(),
            );
            continue;
        }
        let fraction = if fraction.is_empty() {
            fraction
        } else {
            format!(", {fraction}")
        };
        for (i, t) in j.tasks.iter().enumerate() {
            let labels = t
                .subgroup
                .map(|g| format!("{{kai.scheduler/subgroup-name: {g}}}"))
                .unwrap_or_else(|| "{}".to_string());
            let node = t
                .node
                .map(|n| format!("  nodeName: {n}\n"))
                .unwrap_or_default();
            let selector = if t.unplaceable {
                "  nodeSelector: {unexisting-node-affinity: 'true'}\n"
            } else {
                ""
            };
            s += &format!(
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {}-{i}\n  namespace: team\n  labels: {labels}\n  annotations: {{pod-group-name: {}, kueuesim.io/arrival: {arrival}{fraction}}}\nspec:\n  schedulerName: kai-scheduler\n  priorityClassName: {}\n{node}{selector}  containers:\n  - resources: {{limits: {limits}}}\n",
                j.name,
                j.name,
                j.pc.name()
            );
        }
    }
    s
}

/// What a job shows once the cluster settles: its evictions (time, reason, preemptor job)
/// and, per pod in task order, its node and since when it is bound (`None`: unbound).
struct Expect {
    evictions: Vec<(f64, &'static str, &'static str)>,
    pods: Vec<Option<(&'static str, f64)>>,
}

/// An eviction as the result shows it: time, reason, preemptor (`<namespace>/<job>`).
type EvictionSeen<'a> = (f64, &'a str, String);

/// A pod as the result shows it: its node and since when it is bound, `None` unbound.
type PodSeen = Option<(String, f64)>;

/// Reclaimed whole at `at` for `by`; its pods find no room again.
fn reclaimed(by: &'static str, at: f64, pods: usize) -> Expect {
    Expect {
        evictions: vec![(at, "Reclaim", by)],
        pods: vec![None; pods],
    }
}

/// A pending job whose pods bind at `at` on `nodes` (in task order).
fn binds(at: f64, nodes: &[&'static str]) -> Expect {
    Expect {
        evictions: vec![],
        pods: nodes.iter().map(|n| Some((*n, at))).collect(),
    }
}

/// Runs the case and checks every job: those `expect` names as it says, every other running
/// job never evicted and on its nodes since it started, every other pending job unbound.
fn check(nodes: &[(&str, u32)], queues: &[Queue], jobs: &[Job], expect: &[(&str, Expect)]) {
    for (name, _) in expect {
        assert!(jobs.iter().any(|j| j.name == *name), "no job {name}");
    }
    let text = scenario(nodes, queues, jobs);
    let loaded = load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let r: SimulationResult = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let got = |j: &Job| {
        let w = wl(&r, "team", j.name);
        let evictions: Vec<EvictionSeen> = w
            .evictions
            .iter()
            .map(|e| (e.at, e.reason, e.preemptor.clone().unwrap_or_default()))
            .collect();
        // A bare Pod by its name, a batch Job's pods in order.
        let all_pods: Vec<_> = w.pod_sets.iter().flat_map(|ps| &ps.pods).collect();
        let pods: Vec<PodSeen> = (0..j.tasks.len())
            .map(|i| {
                let p = if j.bare_pods() {
                    let name = format!("{}-{i}", j.name);
                    all_pods
                        .iter()
                        .find(|p| p.name == name)
                        .unwrap_or_else(|| panic!("{name}: no such pod"))
                } else {
                    all_pods[i]
                };
                p.node.clone().zip(p.bound_at)
            })
            .collect();
        // A bound bare Pod occupies its node from time 0; a batch Job's pods from its
        // arrival.
        let start = if j.bare_pods() { 0.0 } else { w.created_at };
        (evictions, pods, start)
    };
    let all: Vec<String> = jobs
        .iter()
        .map(|j| {
            let (e, p, _) = got(j);
            format!("{}: {e:?} {p:?}", j.name)
        })
        .collect();
    let all = all.join("\n");
    for j in jobs {
        let (evictions, pods, start) = got(j);
        let (want_evictions, want_pods): (Vec<EvictionSeen>, Vec<PodSeen>) =
            match expect.iter().find(|(n, _)| *n == j.name) {
                Some((_, e)) => (
                    e.evictions
                        .iter()
                        .map(|(at, reason, by)| (*at, *reason, format!("team/{by}")))
                        .collect(),
                    e.pods
                        .iter()
                        .map(|p| p.map(|(n, at)| (n.to_string(), at)))
                        .collect(),
                ),
                None => (
                    vec![],
                    j.tasks
                        .iter()
                        .map(|t| t.node.map(|n| (n.to_string(), start)))
                        .collect(),
                ),
            };
        assert_eq!(
            evictions, want_evictions,
            "{} evictions; all:\n{all}",
            j.name
        );
        assert_eq!(pods, want_pods, "{} pods; all:\n{all}", j.name);
    }
}

// reclaimGang_test.go (TestHandleGangReclaim).

#[test]
fn gang_reclaim_other_job_and_pipeline_all_tasks_of_job() {
    // reclaimGang_test.go "Reclaim other job and pipeline all tasks of job".
    check(
        &[("node0", 2)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 2.0)],
        &[
            job("running-job0", "queue0", Pc::Train, 1.0, &[on("node0")]),
            job("pending-job0", "queue1", Pc::Build, 1.0, &[P, P]),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0", "node0"])),
        ],
    );
}

#[test]
fn gang_if_cant_allocate_all_tasks_dont_reclaim() {
    // reclaimGang_test.go "If can't allocate all tasks, dont' reclaim": the gang of two
    // 1-GPU tasks does not fit node0's one GPU even with running-job0 gone.
    check(
        &[("node0", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 2.0)],
        &[
            job("running-job0", "queue0", Pc::Train, 1.0, &[on("node0")]),
            job("pending-job0", "queue1", Pc::Build, 1.0, &[P, P]),
        ],
        &[],
    );
}

#[test]
fn gang_dont_reclaim_if_will_go_over_quota() {
    // reclaimGang_test.go "dont reclaim if will go over quota": the build job's 4 GPUs take
    // queue1 over its deserved 2 (a non-preemptible job stays within it).
    check(
        &[("node0", 10)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 2.0)],
        &[
            job("running-job0", "queue0", Pc::Train, 10.0, &[on("node0")]),
            job("pending-job0", "queue1", Pc::Build, 2.0, &[P, P]),
        ],
        &[],
    );
}

#[test]
fn gang_reclaim_mpi_job() {
    // reclaimGang_test.go "reclaim mpi job": both tasks of the running gang go.
    check(
        &[("node0", 2)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 2.0)],
        &[
            job(
                "running-job0",
                "queue0",
                Pc::Train,
                1.0,
                &[on("node0"), on("node0")],
            ),
            job("pending-job0", "queue1", Pc::Build, 2.0, &[P]),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 2)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn gang_job_reclaims_from_job_on_two_nodes() {
    // reclaimGang_test.go "job reclaims from job on two nodes": queue0's gang of two tasks
    // (node0, node1) is above its deserved 1; both tasks go (the gang keeps none), and the
    // pending task takes one of the nodes (upstream does not say which).
    check(
        &[("node0", 1), ("node1", 1)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            job(
                "running-job0",
                "queue0",
                Pc::Train,
                1.0,
                &[on("node0"), on("node1")],
            ),
            job("pending-job", "queue1", Pc::Train, 1.0, &[P]),
        ],
        &[
            ("running-job0", reclaimed("pending-job", 60.0, 2)),
            ("pending-job", binds(90.0, &["node0"])),
        ],
    );
}

// reclaim_test.go (TestHandleReclaim).

/// A job of one task of `gpus` GPUs running on `node`.
fn run1(name: &'static str, queue: &'static str, pc: Pc, gpus: f64, node: &'static str) -> Job {
    job(name, queue, pc, gpus, &[on(node)])
}

/// A job of one pending task of `gpus` GPUs.
fn pend1(name: &'static str, queue: &'static str, pc: Pc, gpus: f64) -> Job {
    job(name, queue, pc, gpus, &[P])
}

#[test]
fn reclaim_jobs_according_to_queue_fair_share() {
    // reclaim_test.go "Reclaim jobs according to queue fair share": three queues of
    // department d1; the reclaimer's two tasks take the lowest-priority job of each of the
    // other queues.
    check(
        &[("node0", 6)],
        &[
            dept("d1", 1.0),
            qd("queue0", 1.0, 1.0, "d1"),
            qd("queue1", 1.0, 1.0, "d1"),
            qd("reclaimer-queue", 2.0, 0.0, "d1"),
        ],
        &[
            run1("q0-running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("q0-running-job1", "queue0", Pc::Train, 1.0, "node0"),
            run1("q0-running-job2", "queue0", Pc::TrainMinusOne, 1.0, "node0"),
            run1("q1-running-job0", "queue1", Pc::Train, 1.0, "node0"),
            run1("q1-running-job1", "queue1", Pc::Train, 1.0, "node0"),
            run1("q1-running-job2", "queue1", Pc::TrainMinusOne, 1.0, "node0"),
            job("reclaimer", "reclaimer-queue", Pc::Train, 1.0, &[P, P]),
        ],
        &[
            ("q0-running-job2", reclaimed("reclaimer", 60.0, 1)),
            ("q1-running-job2", reclaimed("reclaimer", 60.0, 1)),
            ("reclaimer", binds(90.0, &["node0", "node0"])),
        ],
    );
}

#[test]
fn reclaim_queue0_over_deserved_quota_will_go_below_quota() {
    // reclaim_test.go "queue1 is under deserved quota, queue0 is over deserved quota and will
    // go below quota - reclaim": queue0's gang of two 10-GPU tasks goes whole.
    check(
        &[("node0", 16), ("node1", 16)],
        &[q("queue0", 10.0, 1.0), q("queue1", 10.0, 1.0)],
        &[
            job(
                "q0-running-job",
                "queue0",
                Pc::Train,
                10.0,
                &[on("node0"), on("node1")],
            ),
            pend1("q1-pending-job", "queue1", Pc::Train, 10.0),
        ],
        &[
            ("q0-running-job", reclaimed("q1-pending-job", 60.0, 2)),
            ("q1-pending-job", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn reclaim_queue0_over_deserved_quota_but_under_fair_share() {
    // reclaim_test.go "queue1 is under deserved quota, queue0 is over deserved quota but
    // under fair share - reclaim": the youngest of queue0's jobs goes; its pending jobs wait.
    check(
        &[
            ("node0", 3),
            ("node1", 3),
            ("node2", 3),
            ("node3", 3),
            ("node4", 3),
            ("node5", 3),
        ],
        &[q("queue0", 2.0, 1.0), q("queue1", 2.0, 1.0)],
        &[
            run1("q0-running-job0", "queue0", Pc::Train, 2.0, "node0"),
            run1("q0-running-job1", "queue0", Pc::Train, 2.0, "node1"),
            run1("q0-running-job2", "queue0", Pc::Train, 2.0, "node2"),
            run1("q0-running-job3", "queue0", Pc::Train, 2.0, "node3"),
            run1("q0-running-job4", "queue0", Pc::Train, 2.0, "node4"),
            run1("q0-running-job5", "queue0", Pc::Train, 2.0, "node5"),
            pend1("q0-pending-job6", "queue0", Pc::Train, 2.0),
            pend1("q0-pending-job7", "queue0", Pc::Train, 2.0),
            pend1("q0-pending-job8", "queue0", Pc::Train, 2.0),
            pend1("q1-pending-job0", "queue1", Pc::Train, 2.0),
        ],
        &[
            ("q0-running-job5", reclaimed("q1-pending-job0", 60.0, 1)),
            ("q1-pending-job0", binds(90.0, &["node5"])),
        ],
    );
}

#[test]
fn reclaim_from_multiple_queues_on_multiple_nodes_for_a_job_with_multiple_tasks() {
    // reclaim_test.go "reclaim from multiple queues running on multiple nodes for a job with
    // multiple tasks": job0, job2 (queue0, deserving nothing) and job3 (queue1, above its 1)
    // go; job1 keeps queue1's deserved GPU.
    check(
        &[("node0", 2), ("node1", 2)],
        &[
            q("queue0", 0.0, 0.0),
            q("queue1", 1.0, 0.0),
            q("queue2", 3.0, 0.0),
        ],
        &[
            run1("job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("job1", "queue1", Pc::Train, 1.0, "node0"),
            run1("job2", "queue0", Pc::Train, 1.0, "node1"),
            run1("job3", "queue1", Pc::Train, 1.0, "node1"),
            job("pending-job", "queue2", Pc::Train, 1.0, &[P, P, P]),
        ],
        &[
            ("job0", reclaimed("pending-job", 60.0, 1)),
            ("job2", reclaimed("pending-job", 60.0, 1)),
            ("job3", reclaimed("pending-job", 60.0, 1)),
            ("pending-job", binds(90.0, &["node0", "node1", "node1"])),
        ],
    );
}

/// Two 1-GPU jobs running on node0 (2 GPUs), one of each queue (1 deserved, weight 1), and
/// a pending job of each: nobody is above its share.
fn two_fair_queues() -> [Job; 4] {
    [
        run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
        run1("running-job1", "queue1", Pc::Train, 1.0, "node0"),
        pend1("pending-job0", "queue0", Pc::Train, 1.0),
        pend1("pending-job1", "queue1", Pc::Train, 1.0),
    ]
}

#[test]
fn dont_reclaim_when_theres_fairness_between_the_queues() {
    // reclaim_test.go "Don't reclaim when there's fairness between the queues".
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &two_fair_queues(),
        &[],
    );
}

#[test]
fn dont_reclaim_when_used_gpus_equal_the_deserved_gpus() {
    // reclaim_test.go "Queues are over provisioned, ratio between queues are equal, yet don't
    // reclaim since number of used GPUs is equal to the deserved GPUs": queue0 deserves 2 and
    // holds 2.
    check(
        &[("node0", 2)],
        &[q("queue0", 2.0, 2.0), q("queue1", 2.0, 2.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue0", Pc::Train, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
            pend1("pending-job1", "queue1", Pc::Train, 1.0),
        ],
        &[],
    );
}

#[test]
fn reclaim_a_2_gpu_train_job_for_the_first_of_two_pending_jobs() {
    // reclaim_test.go "1 train job of 2 GPUs from queue0 running on node0 with deserved of 1,
    // 2 pending jobs from queue1 - reclaim": pending-job0 reclaims running-job0 and is
    // pipelined; upstream's one session leaves pending-job1 pending, and here, the run going
    // on, it takes the GPU running-job0 left at 1m30s (upstream's next session would too:
    // running-job0's new pod asks 2 GPUs, one is free).
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 2.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
            pend1("pending-job1", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
            ("pending-job1", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn reclaim_a_2_gpu_train_job_for_the_build_job_first() {
    // reclaim_test.go "1 train job of 2 GPUs from queue0 running on node0 with deserved of 1,
    // 2 pending jobs (1 build) from queue1 - reclaim": the build job comes first in queue1's
    // job order and is the reclaimer; pending-job0 then takes the GPU left (as above).
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 2.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
            pend1("pending-job1", "queue1", Pc::Build, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job1", 60.0, 1)),
            ("pending-job1", binds(90.0, &["node0"])),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn dont_reclaim_for_a_build_job_above_its_deserved_quota() {
    // reclaim_test.go "2 train job of 1 GPUs from queue0 running on node0 with deserved of 1,
    // 1 pending build job of 2 GPUs from queue1 with deserved of 1 - don't reclaim" (the
    // running job is one of 2 GPUs, as upstream's table gives it).
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 2.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Build, 2.0),
        ],
        &[],
    );
}

#[test]
fn reclaim_the_train_job_before_the_preemptible_interactive_one() {
    // reclaim_test.go "1 train and 1 preemptible interactive are over quota - reclaim train".
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1(
                "running-job1",
                "queue0",
                Pc::InteractivePreemptible,
                1.0,
                "node0",
            ),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn reclaim_the_younger_of_two_preemptible_interactive_jobs() {
    // reclaim_test.go "2 preemptible interactive are over quota - reclaim".
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1(
                "running-job0",
                "queue0",
                Pc::InteractivePreemptible,
                1.0,
                "node0",
            ),
            run1(
                "running-job1",
                "queue0",
                Pc::InteractivePreemptible,
                1.0,
                "node0",
            ),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job1", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn never_reclaim_an_interactive_job() {
    // reclaim_test.go "1 interactive job is running with more GPUs than the quota, 1
    // interactive job form different project is pending - don't reclaim (never kill
    // interactive jobs)": upstream's interactive job is a build job (priority 100, not
    // preemptible).
    check(
        &[("node0", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Build, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Build, 1.0),
        ],
        &[],
    );
}

#[test]
fn interactive_jobs_use_the_deserved_gpus_not_the_reclaimable_share() {
    // reclaim_test.go "Interactive jobs should use the number of deserved GPUs, and not the
    // reclaimable deserved GPUs": queue0's build job holds its deserved GPU, so a second
    // build job of queue0 neither binds nor reclaims.
    check(
        &[("node0", 4)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Build, 1.0, "node0"),
            run1("running-job1", "queue1", Pc::Train, 3.0, "node0"),
            pend1("pending-job0", "queue0", Pc::Build, 1.0),
        ],
        &[],
    );
}

#[test]
fn inactive_queues_dont_affect_the_reclaimable_share() {
    // reclaim_test.go "Verify inactive queues don't affect the reclaimable deserved
    // calculation": queue2 has no job; queue0's youngest job goes.
    check(
        &[("node0", 4)],
        &[
            q("queue0", 1.0, 1.0),
            q("queue1", 1.0, 1.0),
            q("queue2", 1.0, 1.0),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job2", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job3", "queue1", Pc::Train, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job2", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn reclaim_from_a_job_above_its_queues_fair_share_no_remaining() {
    // reclaim_test.go "reclaim from job that allocated more resources than its' fairShare (no
    // remaining)" (the table has this case twice, identical): of node0's 10 GPUs queue0's
    // share is 4 and queue1's 6, so queue1's 6-GPU job reclaims queue0's 8.
    check(
        &[("node0", 10)],
        &[q("queue0", 2.0, 1.0), q("queue1", 2.0, 2.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 8.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 6.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn dont_reclaim_from_a_job_within_its_queues_fair_share() {
    // reclaim_test.go "don't reclaim from job that allocated resources within its' fairShare":
    // queue1's share is 6, its job asks 7.
    check(
        &[("node0", 10)],
        &[q("queue0", 2.0, 1.0), q("queue1", 2.0, 2.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 4.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 7.0),
        ],
        &[],
    );
}

#[test]
fn reclaim_when_the_remaining_gpu_went_to_the_lower_weight_queue() {
    // reclaim_test.go "reclaim from job that allocated more resources than its' fairShare
    // (remaining was given to queue with lower over quota weight)": node0 has 12 GPUs.
    check(
        &[("node0", 12)],
        &[q("queue0", 2.0, 1.0), q("queue1", 2.0, 2.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 10.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 7.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

/// Upstream's pair of nodes for the cases where queue0's 1-GPU job moves from node1 to
/// node0 so queue1's 2-GPU job fits node1: node0 has 3 GPUs, node1 2.
const NODES_3_2: [(&str, u32); 2] = [("node0", 3), ("node1", 2)];

/// q0-job1 moved from node1 to node0 for `by` and bound again at 1m30s; upstream's reclaim
/// pipelines it there (its solver places a victim again where it fits), and here the
/// consolidation action, which the session runs before reclaim, moves it.
fn moved_to_node0(by: &'static str) -> Expect {
    Expect {
        evictions: vec![(60.0, "Consolidation", by)],
        pods: vec![Some(("node0", 90.0))],
    }
}

#[test]
fn reclaim_for_a_queue_under_deserved_quota_moves_a_job() {
    // reclaim_test.go "queue0 is under deserved quota, queue1 is over deserved quota but not
    // over fair share - reclaim": q0-job1 is pipelined to node0, q1-job0 to node1.
    check(
        &NODES_3_2,
        &[q("queue0", 2.0, 1.0), q("queue1", 2.0, 0.0)],
        &[
            run1("q0-job0", "queue0", Pc::Train, 2.0, "node0"),
            run1("q0-job1", "queue0", Pc::Train, 1.0, "node1"),
            pend1("q1-job0", "queue1", Pc::Train, 2.0),
        ],
        &[
            ("q0-job1", moved_to_node0("q1-job0")),
            ("q1-job0", binds(90.0, &["node1"])),
        ],
    );
}

#[test]
fn reclaim_a_single_job_for_a_queue_under_deserved_quota() {
    // reclaim_test.go "queue0 is under deserved quota and submitted multiple jobs, queue1 is
    // over deserved quota but not over fair share - reclaim single job": as above; q1-job1
    // waits.
    check(
        &NODES_3_2,
        &[q("queue0", 2.0, 3.0), q("queue1", 2.0, 0.0)],
        &[
            run1("q0-job0", "queue0", Pc::Train, 2.0, "node0"),
            run1("q0-job1", "queue0", Pc::Train, 1.0, "node1"),
            pend1("q1-job0", "queue1", Pc::Train, 2.0),
            pend1("q1-job1", "queue1", Pc::Train, 2.0),
        ],
        &[
            ("q0-job1", moved_to_node0("q1-job0")),
            ("q1-job0", binds(90.0, &["node1"])),
        ],
    );
}

#[test]
fn a_queue_at_its_deserved_quota_is_consolidated_not_reclaimed() {
    // reclaim_test.go "queue1 is under deserved quota, queue0 has exactly deserved quota -
    // should consolidate q0 to node0 and pipeline q1 to node1".
    check(
        &NODES_3_2,
        &[q("queue0", 3.0, 0.0), q("queue1", 2.0, 0.0)],
        &[
            run1("q0-job0", "queue0", Pc::Train, 2.0, "node0"),
            run1("q0-job1", "queue0", Pc::Train, 1.0, "node1"),
            pend1("q1-job0", "queue1", Pc::Train, 2.0),
        ],
        &[
            ("q0-job1", moved_to_node0("q1-job0")),
            ("q1-job0", binds(90.0, &["node1"])),
        ],
    );
}

#[test]
fn an_inference_job_is_not_reclaimed() {
    // reclaim_test.go "Attempt to reclaim from an inference workload": inference (priority
    // 125) is not preemptible.
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 0.0), q("queue1", 1.0, 0.0)],
        &[
            run1("q0-job0", "queue0", Pc::Inference, 1.0, "node0"),
            run1("q0-job1", "queue0", Pc::Inference, 1.0, "node0"),
            pend1("q1-job0", "queue1", Pc::Inference, 1.0),
        ],
        &[],
    );
}

#[test]
fn unlimited_gpu_quota_should_not_reclaim() {
    // reclaim_test.go "unlimited GPU quota, should not reclaim": queue0 deserves unlimited
    // GPUs (so it is never above its share), queue1 2.
    check(
        &[("node0", 4)],
        &[q("queue0", -1.0, 0.0), q("queue1", 2.0, 0.0)],
        &[
            run1("running-job0", "queue0", Pc::Inference, 4.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 2.0),
        ],
        &[],
    );
}

#[test]
fn unlimited_gpu_quota_first_one_already_running_should_not_reclaim() {
    // reclaim_test.go "unlimited GPU quota, first one is already running, should not
    // reclaim": both queues deserve unlimited GPUs; the running job is inference.
    check(
        &[("node0", 4)],
        &[q("queue0", -1.0, 0.0), q("queue1", -1.0, 0.0)],
        &[
            run1("running-job0", "queue0", Pc::Inference, 4.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 2.0),
        ],
        &[],
    );
}

#[test]
fn unlimited_gpu_quota_using_department_should_not_reclaim() {
    // reclaim_test.go "unlimited GPU quota using department, should not reclaim":
    // department0 deserves unlimited GPUs (upstream's builder gives it an over-quota weight
    // of its deserved -1; here 0).
    check(
        &[("node0", 4)],
        &[
            q("department0", -1.0, 0.0),
            dept("department1", 2.0),
            qd("queue0", -1.0, 0.0, "department0"),
            qd("queue1", 2.0, 0.0, "department1"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Inference, 4.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 2.0),
        ],
        &[],
    );
}

#[test]
fn reclaim_based_on_releasing_resources_with_consolidation() {
    // reclaim_test.go "Reclaim based on releasing resources with consolidation": two shares
    // of 0.5 on node0 and node1; running-job1's moves beside running-job0's, and pending-job
    // takes node1's whole GPU.
    check(
        &[("node0", 1), ("node1", 1)],
        &[
            q("queue0", 0.0, 0.0),
            q("queue1", 0.0, 0.0),
            q("queue2", 2.0, 0.0),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 0.5, "node0"),
            run1("running-job1", "queue1", Pc::Train, 0.5, "node1"),
            pend1("pending-job", "queue2", Pc::Train, 1.0),
        ],
        &[
            (
                "running-job1",
                Expect {
                    evictions: vec![(60.0, "Consolidation", "pending-job")],
                    pods: vec![Some(("node0", 90.0))],
                },
            ),
            ("pending-job", binds(90.0, &["node1"])),
        ],
    );
}

#[test]
fn reclaim_based_on_releasing_resources_without_consolidation() {
    // reclaim_test.go "Reclaim based on releasing resources without consolidation": shares of
    // 0.7 cannot share a GPU; queue1's (the newer queue) is reclaimed.
    check(
        &[("node0", 1), ("node1", 1)],
        &[
            q("queue0", 0.0, 0.0),
            q("queue1", 0.0, 0.0),
            q("queue2", 2.0, 0.0),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 0.7, "node0"),
            run1("running-job1", "queue1", Pc::Train, 0.7, "node1"),
            pend1("pending-job", "queue2", Pc::Train, 1.0),
        ],
        &[
            ("running-job1", reclaimed("pending-job", 60.0, 1)),
            ("pending-job", binds(90.0, &["node1"])),
        ],
    );
}

#[test]
fn reclaim_based_on_releasing_and_idle_resources() {
    // reclaim_test.go "Reclaim based on releasing and idle resources": one task of pending-job
    // takes idle node1, the other node0's GPU running-job's share releases; both bind once
    // the share is gone. Upstream pipelines the first task to node1 and the second to node0;
    // here the first pod binds to node0 and the second to node1 (the job's pods are alike).
    check(
        &[("node0", 1), ("node1", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 0.0)],
        &[
            run1("running-job", "queue0", Pc::Train, 0.7, "node0"),
            job("pending-job", "queue1", Pc::Train, 1.0, &[P, P]),
        ],
        &[
            ("running-job", reclaimed("pending-job", 60.0, 1)),
            ("pending-job", binds(90.0, &["node0", "node1"])),
        ],
    );
}

#[test]
fn reclaim_based_on_releasing_and_idle_resources_with_fractions() {
    // reclaim_test.go "Reclaim based on releasing and idle resources with fractions": the
    // pending job's two 0.7 shares go to node1 (beside running-job1's 0.3) and to node0,
    // whose 0.7 share running-job0 releases.
    check(
        &[("node0", 1), ("node1", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 0.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 0.7, "node0"),
            run1("running-job1", "queue1", Pc::Train, 0.3, "node1"),
            job("pending-job", "queue1", Pc::Train, 0.7, &[P, P]),
        ],
        &[
            ("running-job0", reclaimed("pending-job", 60.0, 1)),
            ("pending-job", binds(90.0, &["node1", "node0"])),
        ],
    );
}

#[test]
fn gang_job_fails_to_allocate_enough_pods() {
    // reclaim_test.go "gang job fails to allocate enough pods": q1-job0 needs 4 of its 5
    // tasks, and two of them ask a node label no node has.
    let unplaceable = Task {
        unplaceable: true,
        ..P
    };
    let mut gang = job(
        "q1-job0",
        "queue1",
        Pc::Train,
        1.0,
        &[P, P, P, unplaceable, unplaceable],
    );
    gang.min = Some(4);
    check(
        &[("node0", 1), ("node1", 1), ("node2", 1), ("node3", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 1.0)],
        &[
            run1("q0-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("q0-job1", "queue0", Pc::Train, 1.0, "node1"),
            run1("q0-job2", "queue0", Pc::Train, 1.0, "node2"),
            run1("q0-job3", "queue0", Pc::Train, 1.0, "node3"),
            gang,
        ],
        &[],
    );
}

#[test]
fn queue_in_deserved_share_is_not_reclaimed_for_multiple_tasks() {
    // reclaim_test.go "queue0 is in deserved share, queue1 is under fair share - do not
    // reclaim - multiple tasks": queue0 holds 16 GPUs where it deserves 12; queue1's gang of 5
    // would leave it 11, below its deserved quota.
    let mut jobs = Vec::new();
    const NAMES: [[&str; 4]; 4] = [
        ["q0-n0-job0", "q0-n0-job1", "q0-n0-job2", "q0-n0-job3"],
        ["q0-n1-job0", "q0-n1-job1", "q0-n1-job2", "q0-n1-job3"],
        ["q0-n2-job0", "q0-n2-job1", "q0-n2-job2", "q0-n2-job3"],
        ["q0-n3-job0", "q0-n3-job1", "q0-n3-job2", "q0-n3-job3"],
    ];
    const NODES: [&str; 4] = ["node0", "node1", "node2", "node3"];
    for (node, names) in NODES.iter().zip(NAMES) {
        for name in names {
            jobs.push(run1(name, "queue0", Pc::Train, 1.0, node));
        }
    }
    jobs.push(job("q1-job1", "queue1", Pc::Train, 1.0, &[P; 5]));
    check(
        &[("node0", 4), ("node1", 4), ("node2", 4), ("node3", 4)],
        &[q("queue0", 12.0, 0.0), q("queue1", 5.0, 1.0)],
        &jobs,
        &[],
    );
}

// reclaimDepartments_test.go (TestHandleDepartmentsReclaim). Upstream's queues there leave
// `GPUOverQuotaWeight` out (0) where the table does not give it.

#[test]
fn departments_classic_reclaim_for_train_jobs() {
    // reclaimDepartments_test.go "Classic reclaim for train jobs between departments".
    check(
        &[("node0", 2)],
        &[
            dept("d1", 1.0),
            dept("d2", 1.0),
            qd("queue0", 1.0, 0.0, "d1"),
            qd("queue1", 1.0, 0.0, "d2"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue0", Pc::Build, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn departments_classic_interactive_job_reclaims_a_train_job() {
    // reclaimDepartments_test.go "Classic interactive job reclaim train job from different
    // department": the reclaimer is a build job.
    check(
        &[("node0", 2)],
        &[
            dept("d1", 1.0),
            dept("d2", 1.0),
            qd("queue0", 1.0, 1.0, "d1"),
            qd("queue1", 1.0, 1.0, "d2"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue0", Pc::Build, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Build, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn departments_dont_reclaim_if_the_department_will_be_over_quota() {
    // reclaimDepartments_test.go "Don't reclaim if department will be overquota": d2 holds 1
    // of its 2 and the job asks 2 more.
    check(
        &[("node0", 4)],
        &[
            dept("d1", 2.0),
            dept("d2", 2.0),
            qd("queue0", 1.0, 1.0, "d1"),
            qd("queue1", 1.0, 1.0, "d2"),
            qd("queue2", 1.0, 1.0, "d2"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 3.0, "node0"),
            run1("running-job1", "queue1", Pc::Build, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 2.0),
        ],
        &[],
    );
}

#[test]
fn departments_reclaim_trains_according_to_deserved_quota() {
    // reclaimDepartments_test.go "Reclaim trains according to deserved quota": the 1-GPU job
    // is enough with node0's 3 free GPUs.
    check(
        &[("node0", 8)],
        &[
            dept("d1", 1.0),
            dept("d2", 1.0),
            qd("queue0", 1.0, 1.0, "d1"),
            qd("queue1", 1.0, 1.0, "d2"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 4.0, "node0"),
            run1("running-job1", "queue0", Pc::Train, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 4.0),
        ],
        &[
            ("running-job1", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn departments_reclaim_from_a_different_and_the_same_department() {
    // reclaimDepartments_test.go "Reclaim from different department and same department".
    check(
        &[("node0", 4)],
        &[
            dept("d1", 0.0),
            dept("d2", 4.0),
            qd("queue0", 1.0, 1.0, "d1"),
            qd("queue1", 0.0, 0.0, "d2"),
            qd("queue2", 4.0, 4.0, "d2"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 2.0, "node0"),
            run1("running-job1", "queue1", Pc::Train, 2.0, "node0"),
            pend1("pending-job0", "queue2", Pc::Train, 4.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("running-job1", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn departments_no_reclaim_between_departments_by_fairness() {
    // reclaimDepartments_test.go "Verify reclaim doesn't happen between department by
    // fairness": each department holds its fair share of node0.
    check(
        &[("node0", 4)],
        &[
            dept("d0", 1.0),
            dept("d1", 1.0),
            qd("queue0", 3.0, 3.0, "d0"),
            qd("queue1", 1.0, 1.0, "d1"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 2.0, "node0"),
            run1("running-job1", "queue1", Pc::Train, 2.0, "node0"),
            pend1("pending-job0", "queue0", Pc::Train, 1.0),
        ],
        &[],
    );
}

#[test]
fn departments_interactive_job_stays_within_the_department_quota() {
    // reclaimDepartments_test.go "Verify department interactive will not go over quota even if
    // department has enough reclaimable deserved": d0 deserves 1 and its build job holds it.
    check(
        &[("node0", 4)],
        &[
            dept("d0", 1.0),
            dept("d1", 1.0),
            qd("queue0", 3.0, 3.0, "d0"),
            qd("queue1", 3.0, 3.0, "d1"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Build, 1.0, "node0"),
            run1("running-job1", "queue1", Pc::Train, 3.0, "node0"),
            pend1("pending-job0", "queue0", Pc::Build, 1.0),
        ],
        &[],
    );
}

#[test]
fn departments_train_job_reclaims_within_the_department_fair_share() {
    // reclaimDepartments_test.go "Verify department train will not go over quota even if
    // department has enough reclaimable deserved": d1 holds 3 of node0's 4 GPUs where its
    // fair share is 2, so d0's train job reclaims running-job1.
    check(
        &[("node0", 4)],
        &[
            dept("d0", 1.0),
            dept("d1", 1.0),
            qd("queue0", 1.0, 1.0, "d0"),
            qd("queue1", 1.0, 1.0, "d1"),
        ],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue1", Pc::Train, 3.0, "node0"),
            pend1("pending-job0", "queue0", Pc::Train, 1.0),
        ],
        &[
            ("running-job1", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn departments_reclaim_from_the_department_over_quota() {
    // reclaimDepartments_test.go "Reclaim from overquota department with multiple
    // departments": of four departments deserving 4 GPUs each of node0's 16, d2 holds 8; d1's
    // inference job reclaims d2's youngest job. Upstream checks only those two jobs; here
    // d4's 5-GPU job waits (d4's share is 4) and every other job runs on.
    let mut jobs = vec![pend1(
        "d1-p1-pending-job",
        "d1-project1",
        Pc::Inference,
        1.0,
    )];
    for name in ["d1-p2-job1", "d1-p2-job2", "d1-p2-job3", "d1-p2-job4"] {
        jobs.push(run1(name, "d1-project2", Pc::Train, 1.0, "node0"));
    }
    for name in [
        "d2-job1", "d2-job2", "d2-job3", "d2-job4", "d2-job5", "d2-job6", "d2-job7", "d2-job8",
    ] {
        jobs.push(run1(name, "d2-project1", Pc::Train, 1.0, "node0"));
    }
    for name in ["d3-job1", "d3-job2", "d3-job3", "d3-job4"] {
        jobs.push(run1(name, "d3-project1", Pc::Train, 1.0, "node0"));
    }
    jobs.push(pend1("d4-job1", "d4-project1", Pc::Train, 5.0));
    check(
        &[("node0", 16)],
        &[
            dept("d1", 4.0),
            dept("d2", 4.0),
            dept("d3", 4.0),
            dept("d4", 4.0),
            qd("d1-project1", 3.0, 3.0, "d1"),
            qd("d1-project2", 1.0, 1.0, "d1"),
            qd("d2-project1", 4.0, 4.0, "d2"),
            qd("d3-project1", 4.0, 4.0, "d3"),
            qd("d4-project1", 4.0, 4.0, "d4"),
        ],
        &jobs,
        &[
            ("d2-job8", reclaimed("d1-p1-pending-job", 60.0, 1)),
            ("d1-p1-pending-job", binds(90.0, &["node0"])),
        ],
    );
}

// reclaim_sub_group_test.go (TestHandleReclaimSubGroups). The queues leave
// `GPUOverQuotaWeight` out (0); a job's subgroups are KAI PodGroup subgroups, its tasks bare
// Pods labelled with theirs.

/// A task of subgroup `group`, running on `node` or pending.
const fn sg(node: Option<&'static str>, group: &'static str) -> Task {
    Task {
        node,
        subgroup: Some(group),
        unplaceable: false,
    }
}

/// A job of `tasks` in subgroups `groups` (name, minimum); its gang minimum is theirs summed.
fn grouped(
    name: &'static str,
    queue: &'static str,
    gpus: f64,
    groups: &'static [(&'static str, usize)],
    tasks: &[Task],
) -> Job {
    Job {
        min: Some(groups.iter().map(|(_, m)| m).sum()),
        subgroups: groups,
        ..job(name, queue, Pc::Train, gpus, tasks)
    }
}

const SUB_MIN_1: &[(&str, usize)] = &[("sub-0", 1), ("sub-1", 1)];

/// queue0 (deserving nothing) runs a gang of two 1-GPU tasks on node0 (2 GPUs); queue1
/// deserves 2.
fn subgroup_victim_cluster() -> ([(&'static str, u32); 1], [Queue; 2], Job) {
    (
        [("node0", 2)],
        [q("queue0", 0.0, 0.0), q("queue1", 2.0, 0.0)],
        job(
            "running-job",
            "queue0",
            Pc::Train,
            1.0,
            &[on("node0"), on("node0")],
        ),
    )
}

#[test]
fn subgroups_reclaim_resources_for_job_with_sub_groups() {
    // reclaim_sub_group_test.go "Reclaim resources for job with sub groups".
    let (nodes, queues, victim) = subgroup_victim_cluster();
    check(
        &nodes,
        &queues,
        &[
            victim,
            grouped(
                "pending-job",
                "queue1",
                1.0,
                SUB_MIN_1,
                &[sg(None, "sub-0"), sg(None, "sub-1")],
            ),
        ],
        &[
            ("running-job", reclaimed("pending-job", 60.0, 2)),
            ("pending-job", binds(90.0, &["node0", "node0"])),
        ],
    );
}

#[test]
fn subgroups_reclaim_for_a_partial_allocation_of_the_pending_job() {
    // reclaim_sub_group_test.go "Reclaim resources for job with sub groups - partial
    // allocation of the pending job" (two cases of that name; the second gives the pending
    // tasks a NodeName, which a pending task does not use): one task of each subgroup binds
    // (pending-job-0 and pending-job-2), the others wait.
    let (nodes, queues, victim) = subgroup_victim_cluster();
    check(
        &nodes,
        &queues,
        &[
            victim,
            grouped(
                "pending-job",
                "queue1",
                1.0,
                SUB_MIN_1,
                &[
                    sg(None, "sub-0"),
                    sg(None, "sub-0"),
                    sg(None, "sub-1"),
                    sg(None, "sub-1"),
                ],
            ),
        ],
        &[
            ("running-job", reclaimed("pending-job", 60.0, 2)),
            (
                "pending-job",
                Expect {
                    evictions: vec![],
                    pods: vec![Some(("node0", 90.0)), None, Some(("node0", 90.0)), None],
                },
            ),
        ],
    );
}

#[test]
fn subgroups_cannot_reclaim_when_a_sub_group_gang_cannot_be_satisfied() {
    // reclaim_sub_group_test.go "Job with sub groups cannot reclaim resources - cannot satisfy
    // sub group gang": two 2-GPU tasks, one per subgroup, on a node of 2 GPUs.
    let (nodes, queues, victim) = subgroup_victim_cluster();
    check(
        &nodes,
        &queues,
        &[
            victim,
            grouped(
                "pending-job",
                "queue1",
                2.0,
                SUB_MIN_1,
                &[sg(None, "sub-0"), sg(None, "sub-1")],
            ),
        ],
        &[],
    );
}

/// queue0's job of four 1-GPU tasks on node0 (4 GPUs), two per subgroup of minimum `min`,
/// and queue1's pending job of one 2-GPU task; both queues deserve 2.
fn subgroup_victim_of_four(groups: &'static [(&'static str, usize)]) -> [Job; 2] {
    [
        grouped(
            "running-job",
            "queue0",
            1.0,
            groups,
            &[
                sg(Some("node0"), "sub-0"),
                sg(Some("node0"), "sub-0"),
                sg(Some("node0"), "sub-1"),
                sg(Some("node0"), "sub-1"),
            ],
        ),
        pend1("pending-job", "queue1", Pc::Train, 2.0),
    ]
}

#[test]
fn subgroups_partial_eviction_of_a_job_with_sub_groups() {
    // reclaim_sub_group_test.go "Reclaim resources from job with sub groups - partial
    // eviction": each subgroup (minimum 1) gives its last task, running-job-1 and -3; the
    // others stay bound (kueuesim runs a job only with all its pods, so they wait there for
    // the replacements, which find no room).
    check(
        &[("node0", 4)],
        &[q("queue0", 2.0, 0.0), q("queue1", 2.0, 0.0)],
        &subgroup_victim_of_four(SUB_MIN_1),
        &[
            (
                "running-job",
                Expect {
                    evictions: vec![(60.0, "Reclaim", "pending-job")],
                    pods: vec![Some(("node0", 0.0)), None, Some(("node0", 0.0)), None],
                },
            ),
            ("pending-job", binds(90.0, &["node0"])),
        ],
    );
}

#[test]
fn subgroups_complete_eviction_of_a_job_with_sub_groups() {
    // reclaim_sub_group_test.go "Reclaim resources from job with sub groups - complete
    // eviction": each subgroup needs both its tasks, so the whole job goes.
    check(
        &[("node0", 4)],
        &[q("queue0", 2.0, 0.0), q("queue1", 2.0, 0.0)],
        &subgroup_victim_of_four(&[("sub-0", 2), ("sub-1", 2)]),
        &[
            ("running-job", reclaimed("pending-job", 60.0, 4)),
            ("pending-job", binds(90.0, &["node0"])),
        ],
    );
}

// reclaim_test.go cases validation.md already names as checked on the solver alone, run here
// over the whole cluster too.

#[test]
fn reclaim_for_a_job_with_multiple_tasks_from_four_jobs() {
    // reclaim_test.go "queue0 is over fair share, queue1 is under fair share - reclaim for job
    // with multiple tasks": the four running jobs are all queue0's (upstream's "q1_job0" too),
    // which deserves nothing; q1-job1's four tasks take all four nodes.
    check(
        &[("node0", 1), ("node1", 1), ("node2", 1), ("node3", 1)],
        &[q("queue0", 0.0, 0.0), q("queue1", 2.0, 1.0)],
        &[
            run1("q0-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("q0-job1", "queue0", Pc::Train, 1.0, "node1"),
            run1("q0-job2", "queue0", Pc::Train, 1.0, "node2"),
            run1("q1-job0", "queue0", Pc::Train, 1.0, "node3"),
            job("q1-job1", "queue1", Pc::Train, 1.0, &[P, P, P, P]),
        ],
        &[
            ("q0-job0", reclaimed("q1-job1", 60.0, 1)),
            ("q0-job1", reclaimed("q1-job1", 60.0, 1)),
            ("q0-job2", reclaimed("q1-job1", 60.0, 1)),
            ("q1-job0", reclaimed("q1-job1", 60.0, 1)),
            (
                "q1-job1",
                binds(90.0, &["node0", "node1", "node2", "node3"]),
            ),
        ],
    );
}

#[test]
fn dont_reclaim_one_job_of_each_queue() {
    // reclaim_test.go "1 job from queue0 and 1 job from queue1 running on node0 - don't
    // reclaim" (the same table as "Don't reclaim when there's fairness between the queues").
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &two_fair_queues(),
        &[],
    );
}

#[test]
fn reclaim_the_train_job_not_the_build_job() {
    // reclaim_test.go "2 jobs from queue0 running on node0 (1 train, 1 build)- 2 pending jobs
    // from queue1 - reclaim train": the build job is not preemptible. pending-job1 waits
    // (queue1 at its fair share of 1).
    check(
        &[("node0", 2)],
        &[q("queue0", 1.0, 1.0), q("queue1", 1.0, 1.0)],
        &[
            run1("running-job0", "queue0", Pc::Train, 1.0, "node0"),
            run1("running-job1", "queue0", Pc::Build, 1.0, "node0"),
            pend1("pending-job0", "queue1", Pc::Train, 1.0),
            pend1("pending-job1", "queue1", Pc::Train, 1.0),
        ],
        &[
            ("running-job0", reclaimed("pending-job0", 60.0, 1)),
            ("pending-job0", binds(90.0, &["node0"])),
        ],
    );
}
