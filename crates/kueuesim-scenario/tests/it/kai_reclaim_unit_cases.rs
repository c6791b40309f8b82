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

use crate::kai_harness::{self, priority_classes, simulation};
use crate::util::wl;

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
    let mut s = simulation(jobs.iter().any(|j| j.gpus.fract() != 0.0), None);
    for (name, gpus) in nodes {
        s += &kai_harness::node(name, &[], &[format!("nvidia.com/gpu: '{gpus}'")]);
    }
    s += &priority_classes(&ALL_PCS.map(|pc| (pc.name(), pc.value())));
    for q in queues {
        s += &kai_harness::queue(q.name, q.parent, None, [q.gpus, q.weight, -1.0], "");
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
    let r = kai_harness::run(&scenario(nodes, queues, jobs));
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

mod departments;
/// A job of one task of `gpus` GPUs running on `node`.
fn run1(name: &'static str, queue: &'static str, pc: Pc, gpus: f64, node: &'static str) -> Job {
    job(name, queue, pc, gpus, &[on(node)])
}

/// A job of one pending task of `gpus` GPUs.
fn pend1(name: &'static str, queue: &'static str, pc: Pc, gpus: f64) -> Job {
    job(name, queue, pc, gpus, &[P])
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

mod gang;
mod on_the_cluster;
mod reclaim;
mod sub_groups;
