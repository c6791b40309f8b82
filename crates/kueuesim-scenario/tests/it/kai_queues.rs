//! KAI's queue actions as upstream (KAI-Scheduler 72de64fc) runs them: a PodGroup's
//! preemptibility (`IsPreemptibleJob`), `LastStartTimestamp` for the min-runtimes (allocate's
//! `setLastStartTimestamp`, the `kai.scheduler/last-start-timestamp` annotation), the
//! victim order of the default tiers (priority, then the elastic plugin's job order) and the
//! session's action order (allocate over every job in `JobsOrderByQueues` order, then each
//! eviction action over those still pending).

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, result};

use crate::util::{load_error, load_text, wl};

/// Loads and runs `text` as `t.yaml`.
fn run_text(text: &str) -> SimulationResult {
    let loaded = load_text("t.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    result(&loaded.world, &Simulation::new(&loaded.world).run())
}

/// A Simulation (`spec` extra lines), node0 of `gpus` GPUs, PriorityClasses `train` (50)
/// and `build` (100), and KAI queues queue0 and queue1 (quota 1 each, `queue0` extra spec).
fn cluster(spec: &str, gpus: u32, queue0: &str) -> String {
    format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: t}}\nspec: {{until: 30m, podTermination: 30s{spec}}}\n---\napiVersion: v1\nkind: Node\nmetadata: {{name: node0}}\nstatus:\n  allocatable: {{nvidia.com/gpu: '{gpus}', pods: '110'}}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: queue0}}\nspec:\n  {queue0}resources:\n    gpu: {{quota: 1, overQuotaWeight: 1, limit: -1}}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: queue1}}\nspec:\n  resources:\n    gpu: {{quota: 1, overQuotaWeight: 1, limit: -1}}\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: train}}\nvalue: 50\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: build}}\nvalue: 100\n"
    )
}

/// A job `name` of `queue`: `pods` bare Pods of 1 GPU at PriorityClass `pc`, arriving at
/// `arrival`, labelled `labels` (extra flow-mapping entries). `pod_group`: the KAI PodGroup
/// they name, as (minMember, extra spec entries); None: a single bare Pod, whose PodGroup
/// KAI's pod grouper creates.
fn job(
    name: &str,
    queue: &str,
    pods: u32,
    pc: &str,
    arrival: &str,
    labels: &str,
    pod_group: Option<(u32, &str)>,
) -> String {
    let mut s = String::new();
    let mut named = String::new();
    if let Some((min, extra)) = pod_group {
        s += &format!(
            "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: {name}, namespace: team}}\nspec: {{minMember: {min}, queue: {queue}{extra}}}\n"
        );
        named = format!(", pod-group-name: {name}");
    }
    for i in 0..pods {
        let pod = if pod_group.is_some() {
            format!("{name}-{i}")
        } else {
            name.to_string()
        };
        s += &format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {pod}\n  namespace: team\n  labels: {{kai.scheduler/queue: {queue}{labels}}}\n  annotations: {{kueuesim.io/arrival: {arrival}, kueuesim.io/duration: 1h{named}}}\nspec:\n  schedulerName: kai-scheduler\n  priorityClassName: {pc}\n  containers:\n  - resources:\n      limits: {{nvidia.com/gpu: '1'}}\n"
        );
    }
    s
}

/// The times (s) `name` was evicted at.
fn evicted_at(r: &SimulationResult, name: &str) -> Vec<f64> {
    wl(r, "team", name).evictions.iter().map(|e| e.at).collect()
}

/// The names of the workloads KAI evicted, in name order.
fn victims(r: &SimulationResult) -> Vec<&str> {
    let mut v: Vec<&str> = r
        .workloads
        .iter()
        .filter(|w| !w.evictions.is_empty())
        .map(|w| w.name.as_str())
        .collect();
    v.sort_unstable();
    v
}

/// K22's reclaim (queue0 runs two 1-GPU jobs, over its fair share of 1; queue1's job arrives
/// at 2m) where the younger running job is labelled `preemptibility` (a bare Pod, whose
/// PodGroup KAI's pod grouper creates with the label's preemptibility).
fn reclaim_with_young_label(preemptibility: &str) -> SimulationResult {
    let label = format!(", kai.scheduler/preemptibility: {preemptibility}");
    run_text(
        &(cluster("", 2, "")
            + &job("old", "queue0", 1, "train", "0s", "", None)
            + &job("young", "queue0", 1, "train", "1m", &label, None)
            + &job("pending", "queue1", 1, "train", "2m", "", None)),
    )
}

/// `IsPreemptibleJob` reads the PodGroup's preemptibility, which the pod grouper takes from
/// the `kai.scheduler/preemptibility` label: a priority-50 job labelled non-preemptible is no
/// victim, so reclaim takes the older job instead.
#[test]
fn a_non_preemptible_label_keeps_a_low_priority_job_from_reclaim() {
    let r = reclaim_with_young_label("preemptible");
    assert_eq!(victims(&r), ["young"], "the younger job by default");
    let r = reclaim_with_young_label("non-preemptible");
    assert_eq!(victims(&r), ["old"]);
    assert_eq!(wl(&r, "team", "pending").state, "Running");
}

/// A PodGroup's `spec.preemptibility: preemptible` makes a priority-100 job a victim of
/// preempt by a priority-200 job of its queue.
#[test]
fn a_pod_group_spec_preemptibility_makes_a_build_job_a_victim() {
    let text = |spec: &str| {
        cluster("", 1, "")
            + "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: urgent}\nvalue: 200\n"
            + &job("build", "queue0", 1, "build", "0s", "", Some((1, spec)))
            + &job("urgent", "queue0", 1, "urgent", "1m", "", Some((1, "")))
    };
    let r = run_text(&text(""));
    assert!(victims(&r).is_empty(), "priority 100 is not preemptible");
    let r = run_text(&text(", preemptibility: preemptible"));
    assert_eq!(victims(&r), ["build"]);
    assert_eq!(evicted_at(&r, "build"), [60.0]);
}

/// A bad preemptibility is an error at its place.
#[test]
fn a_bad_preemptibility_is_an_error() {
    let text = cluster("", 1, "")
        + &job(
            "build",
            "queue0",
            1,
            "build",
            "0s",
            "",
            Some((1, ", preemptibility: never")),
        );
    let e = load_error(&text);
    assert!(e.starts_with("t.yaml:"), "{e}");
    assert!(
        e.contains("spec.preemptibility \"never\": expected preemptible or non-preemptible"),
        "{e}"
    );
    // The label's bad value, at the value's place (it was at the object's kind).
    let text = cluster("", 1, "")
        + &job(
            "build",
            "queue0",
            1,
            "build",
            "0s",
            ", kai.scheduler/preemptibility: never",
            None,
        );
    let e = load_error(&text);
    let value_column = text
        .lines()
        .find(|l| l.contains("preemptibility: never"))
        .and_then(|l| l.find("never"))
        .expect("the label")
        + 1;
    assert!(
        e.contains(&format!(
            ":{value_column}: label kai.scheduler/preemptibility \"never\""
        )),
        "{e}"
    );
}

/// Allocate's `setLastStartTimestamp`: a job's start is when KAI allocates it, not when its
/// pods run (podStartup 30s). Both queue0 jobs are allocated at 0s, so queue0's 5m
/// reclaimMinRuntime protects them until 5m although queue1's job arrives at 10s.
#[test]
fn last_start_is_the_allocation_time() {
    let r = run_text(
        &(cluster(", podStartup: 30s", 2, "reclaimMinRuntime: 5m\n  ")
            + &job("a", "queue0", 1, "train", "0s", "", Some((1, "")))
            + &job("b", "queue0", 1, "train", "0s", "", Some((1, "")))
            + &job("pending", "queue1", 1, "train", "10s", "", Some((1, "")))),
    );
    // The pending job tries again the instant the protection ends (upstream tries every
    // session): one of them is reclaimed at 5m, not when one finishes at 1h.
    let at: Vec<f64> = ["a", "b"].iter().flat_map(|n| evicted_at(&r, n)).collect();
    assert_eq!(at, [300.0], "protected until 5m, evicted at {at:?}");
    assert_eq!(wl(&r, "team", "pending").state, "Running");
}

/// A job running at the start has the `LastStartTimestamp` its PodGroup's
/// `kai.scheduler/last-start-timestamp` annotation gives, and none without it: upstream's
/// minruntime plugin then does not protect it, whatever its pods' `status.startTime`.
#[test]
fn a_running_job_without_the_annotation_is_unprotected() {
    let text = |annotation: &str| {
        cluster(
            ", startTime: \"2026-01-01T12:00:00Z\"",
            1,
            "preemptMinRuntime: 10m\n  ",
        ) + &format!(
            "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {{name: train, namespace: team{annotation}}}\nspec: {{minMember: 1, queue: queue0}}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: train-0\n  namespace: team\n  labels: {{kai.scheduler/queue: queue0}}\n  annotations: {{pod-group-name: train}}\nspec:\n  schedulerName: kai-scheduler\n  priorityClassName: train\n  nodeName: node0\n  containers:\n  - resources:\n      limits: {{nvidia.com/gpu: '1'}}\nstatus: {{phase: Running, startTime: \"2026-01-01T11:58:00Z\"}}\n"
        ) + &job("build", "queue0", 1, "build", "1m", "", None)
    };
    let r = run_text(&text(""));
    assert_eq!(evicted_at(&r, "train"), [60.0], "unprotected");
    let r = run_text(&text(
        ", annotations: {kai.scheduler/last-start-timestamp: \"2026-01-01T11:58:00Z\"}",
    ));
    // Protected at 1m; preempted when the 10m from its start at 11:58 end (8m into the run).
    assert_eq!(
        evicted_at(&r, "train"),
        [480.0],
        "protected at 1m, until 8m"
    );
}

/// The default tiers order jobs by priority and then by the elastic plugin (`JobOrderFn`:
/// below minAvailable, exactly at it, above it), then by creation; victims are taken from
/// the end. Among two train jobs of queue0, the older one runs above its minimum (2 pods,
/// minMember 1) and goes before the younger one, exactly at its minimum.
#[test]
fn preempt_takes_a_job_above_its_minimum_before_a_younger_one() {
    let r = run_text(
        &(cluster("", 3, "")
            + &job("elastic", "queue0", 2, "train", "0s", "", Some((1, "")))
            + &job("young", "queue0", 1, "train", "30s", "", Some((1, "")))
            // Preemptible, so that its queue's quota of 1 does not bind it.
            + &job("build", "queue0", 1, "build", "1m", "", Some((1, ", preemptibility: preemptible")))),
    );
    assert_eq!(victims(&r), ["elastic"]);
    assert_eq!(wl(&r, "team", "build").state, "Running");
}

/// A queue of unlimited deserved quota (-1) with a `limit` is reclaimable above that limit:
/// its allocatable share is the limit (`GetAllocatableShare` returns MaxAllowed). Here a dump
/// has queue0 (quota -1, limit 2) running three 1-GPU pods; queue1's job reclaims one.
#[test]
fn an_unlimited_queue_above_its_limit_is_reclaimable() {
    let mut text = cluster("", 3, "")
        .replace("gpu: {quota: 1, overQuotaWeight: 1, limit: -1}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: queue1}", "gpu: {quota: -1, overQuotaWeight: 1, limit: 2}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: queue1}");
    assert!(text.contains("quota: -1"));
    for name in ["r0", "r1", "r2"] {
        text += &job(name, "queue0", 1, "train", "0s", "", None).replace(
            "  priorityClassName: train\n",
            "  priorityClassName: train\n  nodeName: node0\n",
        );
    }
    text += &job("pending", "queue1", 1, "train", "1m", "", None);
    let r = run_text(&text);
    assert_eq!(victims(&r).len(), 1, "{:?}", victims(&r));
    assert_eq!(wl(&r, "team", "pending").state, "Running");
}

/// `IsJobOverQueueCapacity` for a job with subgroups, pass by pass as for any job: queue0's
/// limit is 3 GPUs, the job's two subgroups (minMember 1, two 1-GPU pods each) ask one task
/// each in the first pass (2 GPUs), then one more (3 GPUs); the fourth pod would take the
/// queue to 4, so it waits with upstream's `OverLimit` message while three run.
#[test]
fn a_job_with_subgroups_stops_at_its_queue_limit() {
    let mut text = cluster("", 4, "").replace(
        "gpu: {quota: 1, overQuotaWeight: 1, limit: -1}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: queue1}",
        "gpu: {quota: 1, overQuotaWeight: 1, limit: 3}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: queue1}",
    );
    assert!(text.contains("limit: 3"));
    text += "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: pg, namespace: team}\nspec:\n  queue: queue0\n  subGroups:\n  - {name: subgroup-a, minMember: 1}\n  - {name: subgroup-b, minMember: 1}\n";
    for (pod, group) in [
        ("a-0", "subgroup-a"),
        ("a-1", "subgroup-a"),
        ("b-0", "subgroup-b"),
        ("b-1", "subgroup-b"),
    ] {
        text += &format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {pod}\n  namespace: team\n  labels: {{kai.scheduler/queue: queue0, kai.scheduler/subgroup-name: {group}}}\n  annotations: {{kueuesim.io/duration: 1h, pod-group-name: pg}}\nspec:\n  schedulerName: kai-scheduler\n  priorityClassName: train\n  containers:\n  - resources:\n      limits: {{nvidia.com/gpu: '1'}}\n"
        );
    }
    let r = run_text(&text);
    let w = r
        .workloads
        .iter()
        .find(|w| {
            w.pod_sets
                .iter()
                .flat_map(|ps| &ps.pods)
                .any(|p| p.name.starts_with("a-"))
        })
        .unwrap_or_else(|| {
            panic!(
                "the PodGroup's workload: {:?}",
                r.workloads.iter().map(|w| &w.name).collect::<Vec<_>>()
            )
        });
    let pods: Vec<_> = w.pod_sets.iter().flat_map(|ps| &ps.pods).collect();
    let bound = pods.iter().filter(|p| p.node.is_some()).count();
    assert_eq!(bound, 3, "{pods:?}");
    let refused = w
        .events
        .iter()
        .find(|e| e.reason == "Unschedulable")
        .map(|e| e.message.as_str());
    assert_eq!(
        refused,
        Some(
            "OverLimit: queue0 quota has reached the allowable limit of GPUs. Limit is 3 GPUs, currently 3 GPUs allocated and workload requested 1 GPUs."
        )
    );
}

/// Job `name` of namespace `team`: its state, when it last started running (s) and its nodes.
fn placed(r: &SimulationResult, name: &str) -> (String, Option<f64>, Vec<String>) {
    let w = wl(r, "team", name);
    let nodes = w.pod_sets.iter().flat_map(|p| p.nodes.clone()).collect();
    (w.state.to_string(), w.running_at, nodes)
}

/// Running since `at` on `node`.
fn running(at: f64, node: &str) -> (String, Option<f64>, Vec<String>) {
    ("Running".into(), Some(at), vec![node.into()])
}

/// Never placed.
fn pending() -> (String, Option<f64>, Vec<String>) {
    ("Pending".into(), None, Vec::new())
}

// KAI's session: allocate over every pending job in `JobsOrderByQueues` order, then
// consolidation, reclaim and preempt over those still pending (`scenarios/kai/action-order/`).
// Per job (kueuesim before the session) each of these ended with an eviction.

#[test]
fn allocate_takes_the_queues_in_turn_as_their_shares_grow() {
    // Upstream's "6 pending train jobs - allocate the 1st 2 of each queue (verify the share is
    // being updated during the allocation)": two jobs of each queue bind, in turns.
    let r = crate::util::run_dir("kai/action-order/allocate-by-queue-share");
    for name in [
        "pending-job0",
        "pending-job1",
        "pending-job3",
        "pending-job4",
    ] {
        assert_eq!(placed(&r, name), running(60.0, "node0"), "{name}");
    }
    for name in ["pending-job2", "pending-job5"] {
        assert_eq!(placed(&r, name), pending(), "{name}");
    }
    assert!(victims(&r).is_empty(), "{:?}", victims(&r));
}

#[test]
fn allocate_serves_the_queue_its_job_keeps_within_its_deserved_quota_first() {
    // Upstream's "Both queues have deserved of 2, overall 4 gpus, queue0 will pass the
    // deserved if its pending jobs will be allocated - allocate a job from queue1".
    let r = crate::util::run_dir("kai/action-order/allocate-within-deserved-quota-first");
    assert_eq!(placed(&r, "pending-job1"), running(60.0, "node0"));
    assert_eq!(placed(&r, "pending-job0"), pending());
    assert_eq!(placed(&r, "running-job0"), running(0.0, "node0"));
    assert_eq!(placed(&r, "running-job1"), running(0.0, "node0"));
    assert!(victims(&r).is_empty(), "{:?}", victims(&r));
}

#[test]
fn reclaim_runs_after_allocate_placed_every_job() {
    // Built from the action order (no upstream test found): the later small job binds before
    // the big one reclaims, so the big one takes the victim that frees a whole node.
    let r = crate::util::run_dir("kai/action-order/allocate-before-reclaim");
    assert_eq!(placed(&r, "small"), running(60.0, "node0"));
    assert_eq!(placed(&r, "big"), running(90.0, "node1"));
    assert_eq!(placed(&r, "running-b2"), running(0.0, "node0"));
    assert_eq!(victims(&r), ["running-b1"]);
    let e = &wl(&r, "team", "running-b1").evictions[0];
    assert_eq!(
        (e.reason, e.at, e.preemptor.as_deref()),
        ("Reclaim", 60.0, Some("team/big"))
    );
}
