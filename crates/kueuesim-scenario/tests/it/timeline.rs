//! A living cluster: the golden scenarios of `scenarios/timeline/` (a Timeline's drain and
//! remove, node and GPU failures, restarts from checkpoints, a JobSet's failurePolicy), each
//! asserting the hand-computed outcome of its header comment; the loader's errors for
//! Timelines and `spec.failures`; seeded reruns.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result, to_json};

use crate::util::{FLAVOR, condition, load_dir, load_error, run_dir, times};

const H: f64 = 3600.0;

/// The workload of job `name` in `namespace` (`<kind>-<name>-<hash>`, or `name` itself).
fn wl<'a>(r: &'a SimulationResult, namespace: &str, name: &str) -> &'a WorkloadOut {
    let infix = format!("-{name}-");
    r.workloads
        .iter()
        .find(|w| w.namespace == namespace && (w.name == name || w.name.contains(&infix)))
        .unwrap_or_else(|| panic!("no workload {namespace}/{name}"))
}

/// (restarts, useful seconds, effective training time ratio) of `w`.
fn failures_of(w: &WorkloadOut) -> (u32, f64, Option<f64>) {
    let f = w
        .failures
        .as_ref()
        .expect("a living cluster reports each workload's failures");
    (
        f.restarts,
        f.useful_seconds,
        f.effective_training_time_ratio,
    )
}

/// (nodeFailures, gpuFailures, podsLost, restarts, jobsFailed, lost GPU-hours).
fn summary_failures(r: &SimulationResult) -> (u64, u64, u64, u64, u64, f64) {
    let f = r.summary.failures.as_ref().expect("summary.failures");
    (
        f.node_failures,
        f.gpu_failures,
        f.pods_lost,
        f.restarts,
        f.jobs_failed,
        f.lost_gpu_seconds / H,
    )
}

fn goodput(r: &SimulationResult) -> f64 {
    r.summary.goodput.flatten().expect("GPUs were allocated")
}

/// The events `source` wrote on `w`, as (at, reason, message).
fn events_from<'a>(w: &'a WorkloadOut, source: &str) -> Vec<(f64, &'a str, &'a str)> {
    w.events
        .iter()
        .filter(|e| e.source == source)
        .map(|e| (e.at, e.reason, e.message.as_str()))
        .collect()
}

#[test]
fn drain_replaces_the_pod_and_restarts_from_the_checkpoint() {
    let r = run_dir("timeline/drain");
    let train = wl(&r, "team", "train");
    // Evicted by the drain at 2h30m, replaced on node-b at once; 10m restart cost + the 2h
    // the checkpoints did not keep: done at 4h40m.
    assert_eq!(train.finished_at, Some(4.0 * H + 40.0 * 60.0));
    assert_eq!(train.pod_sets[0].nodes, ["node-b"]);
    // 30m × 8 GPUs beyond the 2h checkpoint.
    assert_eq!(train.lost_gpu_seconds, 4.0 * H);
    // Kueue kept it admitted: no eviction, the same admission, PodsReady recovered.
    assert!(train.evictions.is_empty());
    assert_eq!(train.admitted_at, Some(0.0));
    let ready = condition(train, "PodsReady");
    assert_eq!(
        (ready.status, ready.reason, ready.at),
        ("True", "Recovered", 2.5 * H)
    );
    assert_eq!(condition(train, "Finished").reason, "Succeeded");
    assert_eq!(
        events_from(train, "kueuesim-timeline"),
        [(
            2.5 * H,
            "PodsEvicted",
            "Pods train-wdg2b evicted from node node-a (kubectl drain)"
        )]
    );
    assert_eq!(
        failures_of(train),
        (1, 4.0 * H, Some(4.0 / (4.0 + 40.0 / 60.0)))
    );
    assert_eq!(summary_failures(&r), (0, 0, 1, 1, 0, 4.0));
    // Useful 4h × 8 over allocated 4h40m × 8.
    assert!((goodput(&r) - 6.0 / 7.0).abs() < 1e-12, "{}", goodput(&r));
    // No quota was held without running pods: the replacement ran at once.
    assert_eq!(train.held_not_running_gpu_seconds, 0.0);
}

#[test]
fn a_removed_node_ends_its_pods_a_job_replaces_them_a_bare_pod_fails() {
    let r = run_dir("timeline/remove");
    let train = wl(&r, "team", "train");
    // No checkpoint: the whole hour of both pods is lost, and the job runs 3h again from 1h.
    assert_eq!(times(train), (Some(0.0), Some(H), Some(4.0 * H)));
    assert_eq!(train.lost_gpu_seconds, 16.0 * H);
    let mut nodes = train.pod_sets[0].nodes.clone();
    nodes.sort();
    assert_eq!(nodes, ["node-b", "node-c"]);
    assert!(train.evictions.is_empty());
    assert_eq!(condition(train, "PodsReady").reason, "Recovered");
    assert_eq!(failures_of(train), (1, 3.0 * H, Some(0.75)));
    let notebook = wl(&r, "team", "notebook");
    assert_eq!(
        (notebook.state, notebook.finished_at),
        ("Finished", Some(H))
    );
    assert_eq!(failures_of(notebook).0, 0);
    assert_eq!(
        events_from(notebook, "kueuesim-timeline"),
        [(
            H,
            "NodeRemoved",
            "Node node-a was deleted: pods notebook are gone"
        )]
    );
    assert_eq!(summary_failures(&r), (0, 0, 2, 1, 1, 16.0));
    assert_eq!(goodput(&r), 0.75);
    assert_eq!(r.summary.end_time, 4.0 * H);
}

#[test]
fn node_failures_lose_the_work_since_the_last_checkpoint() {
    let r = run_dir("timeline/node-failure");
    let ckpt = wl(&r, "team", "ckpt");
    // Failed at 2h with 1h30m checkpointed, repaired at 2h20m, 6m to restart, 1h30m left.
    assert_eq!(
        times(ckpt),
        (
            Some(0.0),
            Some(2.0 * H + 1200.0),
            Some(3.0 * H + 56.0 * 60.0)
        )
    );
    assert_eq!(ckpt.lost_gpu_seconds, 2.0 * H);
    // Quota held without running pods while the node was down: 20m × 4 GPUs.
    assert_eq!(ckpt.held_not_running_gpu_seconds, 1200.0 * 4.0);
    let ready = condition(ckpt, "PodsReady");
    assert_eq!(
        (ready.status, ready.reason, ready.at),
        ("True", "Recovered", 2.0 * H + 1200.0)
    );
    assert_eq!(failures_of(ckpt).0, 1);
    assert_eq!(failures_of(ckpt).1, 3.0 * H);
    let plain = wl(&r, "team", "plain");
    // No checkpoint: 2h lost at each failure (2h and 4h20m); running again from 4h40m.
    assert_eq!(plain.state, "Running");
    assert_eq!(plain.running_at, Some(4.0 * H + 40.0 * 60.0));
    assert_eq!(plain.lost_gpu_seconds, 16.0 * H);
    assert!(plain.evictions.is_empty());
    assert_eq!(failures_of(plain), (2, 1200.0, Some(1200.0 / (5.0 * H))));
    // The second failure's event repeats the first word for word: aggregated, as
    // Kubernetes aggregates repeated events.
    assert_eq!(
        events_from(plain, "kueuesim-failures"),
        [(
            2.0 * H,
            "NodeFailed",
            "Node node-a failed: pods plain-4bv2w are gone"
        )]
    );
    assert_eq!(summary_failures(&r), (2, 0, 3, 3, 0, 18.0));
    // Useful (12 + 4/3) GPU-hours over allocated (14.4 + 52/3).
    let expected = (12.0 + 4.0 / 3.0) / (14.4 + 52.0 / 3.0);
    assert!((goodput(&r) - expected).abs() < 1e-12, "{}", goodput(&r));
}

#[test]
fn gpu_failures_fail_pods_in_place_and_the_recovery_timeout_requeues() {
    let r = run_dir("timeline/gpu-failure");
    let pt = wl(&r, "team", "pt");
    // restartPolicy Never: the PyTorchJob fails with its pod.
    assert_eq!((pt.state, pt.finished_at), ("Finished", Some(H + 60.0)));
    let finished = condition(pt, "Finished");
    assert_eq!(
        (finished.reason, finished.message.as_str()),
        ("Failed", "A replica with restartPolicy Never failed")
    );
    assert_eq!(pt.lost_gpu_seconds, 4.0 * H);
    let gpujob = wl(&r, "team", "gpujob");
    // The replacement fits nowhere: evicted at the recovery timeout (30m after 1h1m),
    // readmitted after its 1m back-off, placed on node-b when blocker ends at 2h.
    assert_eq!(gpujob.evictions.len(), 1);
    assert_eq!(
        (gpujob.evictions[0].at, gpujob.evictions[0].reason),
        (H + 31.0 * 60.0, "PodsReadyTimeout")
    );
    assert_eq!(gpujob.requeue_count, 1);
    assert_eq!(
        times(gpujob),
        (Some(H + 32.0 * 60.0), Some(2.0 * H), Some(4.0 * H))
    );
    assert_eq!(gpujob.pod_sets[0].nodes, ["node-b"]);
    assert_eq!(gpujob.lost_gpu_seconds, 4.0 * H);
    assert_eq!(
        events_from(gpujob, "kueuesim-failures"),
        [(
            H + 60.0,
            "GPUFailed",
            "A GPU of node node-a failed: pod gpujob-dmsr2 failed"
        )]
    );
    assert_eq!(failures_of(gpujob).0, 1);
    assert_eq!(summary_failures(&r), (0, 8, 2, 1, 1, 8.0));
    assert_eq!(r.summary.evictions["PodsReadyTimeout"], 1);
    assert_eq!(goodput(&r), 0.75);
}

#[test]
fn a_jobset_restarts_all_its_jobs_then_fails_past_max_restarts() {
    let r = run_dir("timeline/jobset-restart");
    let js = wl(&r, "team", "js");
    // Restarted at 1h (both pods anew on node-b and node-c), failed at 2h.
    assert_eq!(times(js), (Some(0.0), Some(H), Some(2.0 * H)));
    let finished = condition(js, "Finished");
    assert_eq!(
        (finished.reason, finished.message.as_str()),
        (
            "Failed",
            "jobset failed due to reaching max number of restarts"
        )
    );
    assert_eq!(js.lost_gpu_seconds, 32.0 * H);
    assert_eq!(failures_of(js), (1, 0.0, Some(0.0)));
    assert_eq!(summary_failures(&r), (0, 0, 2, 1, 1, 32.0));
    assert_eq!(goodput(&r), 0.0);
}

#[test]
fn failures_are_seeded_and_reruns_are_byte_identical() {
    let text = |seed: u64| {
        format!(
            "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec:
  seed: {seed}
  until: 200h
  failures:
    nodes: {{mtbf: 20h, repair: 2h}}
    gpus: {{mtbf: 100h, repair: {{uniform: {{min: 1h, max: 3h}}}}}}
---
{FLAVOR}---
{}---
apiVersion: kueuesim.io/v1alpha1
kind: NodePool
metadata: {{name: pool}}
spec:
  nodesPerDomain: 8
  template:
    allocatable: {{cpu: \"64\", nvidia.com/gpu: \"8\", pods: \"110\"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: team}}
spec: {{clusterQueue: cq}}
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {{name: gen, namespace: team}}
spec:
  until: 150h
  arrival: {{rate: 2/h}}
  pods: {{uniform: {{min: 1, max: 4}}}}
  requests: {{nvidia.com/gpu: {{fixed: 8}}}}
  duration: {{logNormal: {{median: 3h, sigma: 0.5, min: 10m, max: 20h}}}}
  queues: [{{name: q}}]
  checkpointInterval: 30m
  restartCost: 5m
",
            crate::util::cq("64")
        )
    };
    let run = |seed: u64| {
        let loaded = crate::util::load_text("t.yaml", &text(seed)).expect("loads");
        to_json(&result(
            &loaded.world,
            &Simulation::new(&loaded.world).run(),
        ))
    };
    let a = run(1);
    assert_eq!(a, run(1), "the same seed gives the same bytes");
    let b = run(2);
    assert_ne!(a, b, "another seed fails other nodes at other times");
    let r: serde_json::Value = serde_json::from_str(&a).expect("JSON");
    let f = &r["summary"]["failures"];
    assert!(f["nodeFailures"].as_u64().unwrap() > 0, "{f}");
    assert!(f["gpuFailures"].as_u64().unwrap() > 0, "{f}");
    assert!(f["restarts"].as_u64().unwrap() > 0, "{f}");
}

#[test]
fn a_scenario_without_timeline_or_failures_reports_no_failures() {
    let loaded = load_dir("golden/fifo-strategies");
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    assert!(r.summary.failures.is_none() && r.summary.goodput.is_none());
    assert!(r.workloads.iter().all(|w| w.failures.is_none()));
    assert!(!to_json(&r).contains("failures"));
}

/// A Simulation with `spec` and two nodes, `a` and `b` (label pool: x).
fn with_nodes(spec: &str, rest: &str) -> String {
    format!(
        "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec:
{spec}---
apiVersion: v1
kind: Node
metadata: {{name: a, labels: {{pool: x}}}}
status: {{allocatable: {{nvidia.com/gpu: \"8\"}}}}
---
apiVersion: v1
kind: Node
metadata: {{name: b, labels: {{pool: x}}}}
status: {{allocatable: {{nvidia.com/gpu: \"8\"}}}}
---
{rest}"
    )
}

const TIMELINE_HEAD: &str =
    "apiVersion: kueuesim.io/v1alpha1\nkind: Timeline\nmetadata: {name: t}\nspec:\n  changes:\n";

#[test]
fn timeline_errors_name_the_place() {
    let sim = "  seed: 1\n";
    // An unknown node.
    let e = load_error(&with_nodes(
        sim,
        &format!("{TIMELINE_HEAD}  - at: 1h\n    nodes: {{drain: [a, c]}}\n"),
    ));
    assert!(
        e.starts_with("t.yaml:23:24: node \"c\" does not exist"),
        "{e}"
    );
    // A selector that matches nothing.
    let e = load_error(&with_nodes(
        sim,
        &format!(
            "{TIMELINE_HEAD}  - at: 1h\n    nodes: {{remove: {{matchLabels: {{pool: y}}}}}}\n"
        ),
    ));
    assert!(
        e.starts_with("t.yaml:23:21: the selector of nodes.remove matches no node"),
        "{e}"
    );
    // No `at`.
    let e = load_error(&with_nodes(
        sim,
        &format!("{TIMELINE_HEAD}  - nodes: {{cordon: [a]}}\n"),
    ));
    assert!(e.starts_with("t.yaml:22:5: a change has no `at`"), "{e}");
    // A change that does nothing.
    let e = load_error(&with_nodes(sim, &format!("{TIMELINE_HEAD}  - at: 1h\n")));
    assert!(e.starts_with("t.yaml:22:5: a change does nothing"), "{e}");
    // An unknown operation.
    let e = load_error(&with_nodes(
        sim,
        &format!("{TIMELINE_HEAD}  - at: 1h\n    nodes: {{reboot: [a]}}\n"),
    ));
    assert!(e.starts_with("t.yaml:23:"), "{e}");
    assert!(e.contains("reboot"), "{e}");
}

#[test]
fn failure_errors_name_the_place() {
    // A pool that does not exist.
    let e = load_error(&with_nodes(
        "  failures:\n    nodes: {mtbf: 100h, pools: [gpu]}\n",
        "",
    ));
    assert!(
        e.starts_with("t.yaml:6:33: NodePool \"gpu\" does not exist"),
        "{e}"
    );
    // A zero time between failures.
    let e = load_error(&with_nodes("  failures:\n    nodes: {mtbf: 0s}\n", ""));
    assert!(
        e.starts_with("t.yaml:6:19: mtbf \"0s\": expected a positive duration"),
        "{e}"
    );
    // Not a duration.
    let e = load_error(&with_nodes("  failures:\n    gpus: {mtbf: often}\n", ""));
    assert!(
        e.starts_with("t.yaml:6:18: invalid duration \"often\""),
        "{e}"
    );
    // An unknown field.
    let e = load_error(&with_nodes("  failures:\n    nodes: {mtfb: 100h}\n", ""));
    assert!(e.starts_with("t.yaml:6:"), "{e}");
    assert!(e.contains("mtfb"), "{e}");
    // Failures without nodes.
    let e = load_error(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec:\n  failures:\n    nodes: {mtbf: 100h}\n",
    );
    assert!(
        e.starts_with("t.yaml:6:5: spec.failures needs nodes"),
        "{e}"
    );
    // A bad checkpoint interval.
    let e = load_error(&with_nodes(
        "  seed: 1\n",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations: {kueuesim.io/checkpoint-interval: 0s}\nspec:\n  template:\n    spec:\n      containers: [{name: c}]\n",
    ));
    assert!(
        e.contains("checkpoint interval \"0s\": expected a positive duration"),
        "{e}"
    );
}

#[test]
fn a_set_moves_a_timeline_change_as_a_sweep_would() {
    // The second drain of jobset-restart moved from 2h to 90m: the JobSet fails then.
    let files = kueuesim_scenario::embedded::read_paths(&[
        crate::util::scenarios_dir().join("timeline/jobset-restart")
    ])
    .expect("readable");
    let options = kueuesim_scenario::LoadOptions {
        sets: vec!["Timeline/maintenance:spec.changes[3].at=90m".into()],
        ..Default::default()
    };
    let loaded = kueuesim_scenario::load(&files, options).expect("loads");
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let js = wl(&r, "team", "js");
    assert_eq!(js.finished_at, Some(1.5 * H));
    assert_eq!(js.lost_gpu_seconds, 16.0 * H + 8.0 * H);
}

#[test]
fn a_quota_raised_admits_the_waiting_and_a_quota_lowered_evicts_nobody() {
    let r = run_dir("timeline/quota-change");
    let (a, b, c) = (
        wl(&r, "team", "a"),
        wl(&r, "team", "b"),
        wl(&r, "team", "c"),
    );
    assert_eq!(times(a), (Some(0.0), Some(0.0), Some(4.0 * H)));
    // Raised to 16 at 1h: the ClusterQueue's inadmissible workloads are requeued after the
    // batch period.
    assert_eq!(
        times(b),
        (Some(H + 1.0), Some(H + 1.0), Some(5.0 * H + 1.0))
    );
    // Lowered to 4 at 2h, below the 16 in use: nobody evicted.
    assert!(a.evictions.is_empty() && b.evictions.is_empty());
    // c (4 GPUs) waits while the usage is over the quota: after a ends (8 in use) and
    // until b ends.
    assert_eq!(c.admitted_at, Some(5.0 * H + 2.0));
    assert_eq!(c.finished_at, Some(6.0 * H + 2.0));
}

#[test]
fn nodes_and_quota_that_arrive_later_take_the_waiting_workload() {
    let r = run_dir("timeline/new-nodepool");
    let (a, b) = (wl(&r, "team", "a"), wl(&r, "team", "b"));
    assert_eq!(a.pod_sets[0].nodes, ["node-0"]);
    assert_eq!(
        times(b),
        (
            Some(2.0 * H + 1.0),
            Some(2.0 * H + 1.0),
            Some(6.0 * H + 1.0)
        )
    );
    // On the node the change added, the only one with room.
    assert_eq!(b.pod_sets[0].nodes, ["late-0"]);
    // The late node is not there before its change: the world knows it from the start.
    let loaded = load_dir("timeline/new-nodepool");
    assert_eq!(loaded.world.late_nodes.len(), 1);
    assert_eq!(loaded.world.epochs.len(), 1);
    // A patch that adds an object says so, with the closest name, as `--patch` does: a
    // misspelt NodePool or Cohort must not pass as a new one unseen.
    assert!(
        loaded.warnings.iter().any(|w| w.ends_with(
            "scenario.yaml:25:13: NodePool \"late\" is not in the scenario: the patch adds it (closest: \"node\")"
        )),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn a_sweep_moves_when_the_nodes_arrive() {
    let files = kueuesim_scenario::embedded::read_paths(&[
        crate::util::scenarios_dir().join("timeline/new-nodepool")
    ])
    .expect("readable");
    let options = kueuesim_scenario::LoadOptions {
        sets: vec!["Timeline/capacity:spec.changes[0].at=3h".into()],
        ..Default::default()
    };
    let loaded = kueuesim_scenario::load(&files, options).expect("loads");
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    assert_eq!(wl(&r, "team", "b").admitted_at, Some(3.0 * H + 1.0));
}

/// A node that a Timeline adds later has failures like the others: its clock runs while it
/// is away (a draw that lands then draws again), so it fails once it is there. A repair due
/// while a node is away still clears its failure.
#[test]
fn a_node_added_later_fails_like_the_others() {
    let text = std::fs::read_to_string(
        crate::util::scenarios_dir().join("timeline/new-nodepool/scenario.yaml"),
    )
    .expect("readable")
    .replace(
        "metadata: {name: new-nodepool}\n",
        "metadata: {name: new-nodepool}\nspec:\n  until: 3h\n  failures:\n    nodes: {mtbf: {fixed: 1h}, repair: {fixed: 10m}}\n",
    )
    .replace("  - at: 2h\n", "  - at: 1h30m\n");
    assert!(
        text.contains("failures:") && text.contains("at: 1h30m"),
        "{text}"
    );
    let loaded = crate::util::load_text("t.yaml", &text).expect("loads");
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    // node-0 fails at 1h and 2h10m; late-0, added at 1h30m, at 2h (its draw of 1h landed
    // while it was away and drew again).
    assert_eq!(summary_failures(&r).0, 3);
}

/// A Timeline's offsets take days as the command line's `--until` does (`10d`, `0.1d`,
/// `1d2h`): "64 nodes on the 10th" is written as the planner says it.
#[test]
fn timeline_offsets_take_days() {
    let files = kueuesim_scenario::embedded::read_paths(&[
        crate::util::scenarios_dir().join("timeline/new-nodepool")
    ])
    .expect("readable");
    let options = kueuesim_scenario::LoadOptions {
        sets: vec!["Timeline/capacity:spec.changes[0].at=0.1d".into()],
        ..Default::default()
    };
    let loaded = kueuesim_scenario::load(&files, options).expect("loads");
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    // 0.1 day = 2h24m; the waiting job is admitted 1 s later (Kueue's requeue batch).
    assert_eq!(wl(&r, "team", "b").admitted_at, Some(8_640.0 + 1.0));
}

/// The Simulation's horizon takes days as `--until` does, so a Sweep can vary it in days
/// (`simulation/NAME:spec.until=40d`); a bad one is an error at its place.
#[test]
fn simulation_until_takes_days() {
    let files = kueuesim_scenario::embedded::read_paths(&[
        crate::util::scenarios_dir().join("timeline/new-nodepool")
    ])
    .expect("readable");
    let with = |until: &str| {
        let options = kueuesim_scenario::LoadOptions {
            sets: vec![format!("simulation/new-nodepool:spec.until={until}")],
            ..Default::default()
        };
        kueuesim_scenario::load(&files, options)
    };
    let loaded = with("0.1d").expect("loads");
    assert_eq!(
        loaded.world.config.until,
        Some(kueuesim_model::SimTime::ZERO + kueuesim_model::SimDuration::from_secs(8_640))
    );
    let Err(e) = with("1xd") else {
        panic!("1xd loaded")
    };
    let e = e.to_string();
    assert!(
        e.contains("expected a Go duration (90m, 1h30m) or days first"),
        "{e}"
    );
}

#[test]
fn clusterqueues_that_join_a_cohort_borrow_from_then_on() {
    let r = run_dir("timeline/cohort-join");
    let (a1, a2, b1) = (
        wl(&r, "team", "a1"),
        wl(&r, "team", "a2"),
        wl(&r, "team", "b1"),
    );
    assert_eq!(times(a1), (Some(0.0), Some(0.0), Some(4.0 * H)));
    // Borrows cq-b's idle quota once both are in the Cohort.
    assert_eq!(
        times(a2),
        (Some(H + 1.0), Some(H + 1.0), Some(5.0 * H + 1.0))
    );
    // cq-b's quota is lent out and not reclaimed: b1 waits for a1's release.
    assert_eq!(
        times(b1),
        (
            Some(4.0 * H + 1.0),
            Some(4.0 * H + 1.0),
            Some(5.0 * H + 1.0)
        )
    );
    assert!(a2.evictions.is_empty() && b1.evictions.is_empty());
}

#[test]
fn timeline_set_and_patch_errors_name_the_place() {
    let sim = "  seed: 1\n";
    let cq = "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n";
    // A set naming a ClusterQueue that does not exist: at the set's column.
    let e = load_error(&with_nodes(
        sim,
        &format!(
            "{TIMELINE_HEAD}  - at: 1h\n    set: [\"cq/cx:spec.namespaceSelector={{}}\"]\n{cq}"
        ),
    ));
    assert!(
        e.starts_with("t.yaml:23:12: the scenario has no ClusterQueue named \"cx\""),
        "{e}"
    );
    // A field that does not exist in a patch: at the field.
    let e = load_error(&with_nodes(
        sim,
        &format!(
            "{TIMELINE_HEAD}  - at: 1h\n    patch:\n    - apiVersion: kueue.x-k8s.io/v1beta2\n      kind: ClusterQueue\n      metadata: {{name: cq}}\n      spec: {{quota: 3}}\n{cq}"
        ),
    ));
    assert!(e.starts_with("t.yaml:27:"), "{e}");
    assert!(e.contains("quota"), "{e}");
    // A kind a change cannot change.
    let e = load_error(&with_nodes(
        sim,
        &format!(
            "{TIMELINE_HEAD}  - at: 1h\n    patch:\n    - apiVersion: kueue.x-k8s.io/v1beta2\n      kind: LocalQueue\n      metadata: {{name: q, namespace: n}}\n{cq}"
        ),
    ));
    assert!(
        e.starts_with("t.yaml:25:13: LocalQueue (kueue.x-k8s.io/v1beta2): a Timeline change sets or patches ClusterQueues"),
        "{e}"
    );
    // A ClusterQueue created by a change.
    let e = load_error(&with_nodes(
        sim,
        &format!(
            "{TIMELINE_HEAD}  - at: 1h\n    patch:\n    - apiVersion: kueue.x-k8s.io/v1beta2\n      kind: ClusterQueue\n      metadata: {{name: other}}\n{cq}"
        ),
    ));
    assert!(
        e.starts_with("t.yaml:22:5: the change creates ClusterQueue \"other\""),
        "{e}"
    );
    // A node changed in place.
    let e = load_error(&with_nodes(
        sim,
        &format!(
            "{TIMELINE_HEAD}  - at: 1h\n    set: [\"node/a:status.allocatable.nvidia\\\\.com/gpu=4\"]\n"
        ),
    ));
    assert!(
        e.starts_with("t.yaml:22:5: the change alters node \"a\" in place"),
        "{e}"
    );
    // A stop policy at an offset.
    let e = load_error(&with_nodes(
        sim,
        &format!("{TIMELINE_HEAD}  - at: 1h\n    set: [\"cq/cq:spec.stopPolicy=Hold\"]\n{cq}"),
    ));
    assert!(e.contains("stopPolicy"), "{e}");
}

#[test]
fn tas_replaces_a_failed_node_in_the_required_rack_or_evicts() {
    let r = run_dir("timeline/tas-node-replacement");
    let (train, tight) = (wl(&r, "team", "train"), wl(&r, "team", "tight"));
    // n1 deleted at 1h: its pod replaced on n3 (rack r1), the other kept on n2.
    assert_eq!(train.pod_sets[0].nodes, ["n3", "n2"]);
    assert!(train.evictions.is_empty());
    assert_eq!(times(train), (Some(0.0), Some(H), Some(5.0 * H)));
    assert_eq!(train.lost_gpu_seconds, 16.0 * H);
    // n4 deleted at 2h: no free node in rack r2, FailFast evicts.
    assert_eq!(tight.evictions.len(), 1);
    assert_eq!(tight.evictions[0].at, 2.0 * H);
    assert_eq!(tight.evictions[0].reason, "NodeFailures");
    let evicted = condition(tight, "Evicted");
    assert!(
        evicted.message.ends_with(
            "Workload was evicted as there was no replacement for unhealthy node(s): n4"
        ),
        "{}",
        evicted.message
    );
    assert_eq!(tight.lost_gpu_seconds, 32.0 * H);
    assert_eq!(
        times(tight),
        (
            Some(3.0 * H + 1.0),
            Some(3.0 * H + 1.0),
            Some(7.0 * H + 1.0)
        )
    );
    assert_eq!(tight.pod_sets[0].nodes, ["n5", "n6"]);
    assert_eq!(r.summary.evictions["NodeFailures"], 1);
}

#[test]
fn without_tas_failed_node_replacement_the_pods_stay_pinned_to_the_deleted_node() {
    let files = kueuesim_scenario::embedded::read_paths(&[
        crate::util::scenarios_dir().join("timeline/tas-node-replacement")
    ])
    .expect("readable");
    let options = kueuesim_scenario::LoadOptions {
        sets: vec![
            "Simulation/tas-node-replacement:spec.kueue.featureGates.TASFailedNodeReplacement=false"
                .into(),
        ],
        ..Default::default()
    };
    let loaded = kueuesim_scenario::load(&files, options).expect("loads");
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let train = wl(&r, "team", "train");
    // Its replacement pod waits for n1 until the recovery timeout (30m) evicts it.
    assert_eq!(train.evictions[0].at, 1.5 * H);
    assert_eq!(train.evictions[0].reason, "PodsReadyTimeout");
    assert_eq!(r.summary.evictions["NodeFailures"], 0);
}

#[test]
fn two_failed_nodes_of_one_tas_workload_evict_it() {
    let files = kueuesim_scenario::embedded::read_paths(&[
        crate::util::scenarios_dir().join("timeline/tas-node-replacement")
    ])
    .expect("readable");
    let options = kueuesim_scenario::LoadOptions {
        sets: vec!["Timeline/outages:spec.changes[0].nodes.remove=[n1, n2]".into()],
        ..Default::default()
    };
    let loaded = kueuesim_scenario::load(&files, options).expect("loads");
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let train = wl(&r, "team", "train");
    assert_eq!(train.evictions[0].at, H);
    assert_eq!(train.evictions[0].reason, "NodeFailures");
    assert!(
        condition(train, "Evicted").message.ends_with(
            "Workload eviction triggered due to multiple TAS assigned node failures, including: n1, n2"
        ),
        "{}",
        condition(train, "Evicted").message
    );
}

#[test]
fn a_failed_gpu_device_fails_every_pod_on_it_and_the_node_keeps_the_others() {
    let r = run_dir("timeline/gpu-device-failure");
    for name in ["s1", "s2", "w1"] {
        let w = wl(&r, "team", name);
        // Lost at 1h with its device, replaced on node-b, done 2h later.
        assert_eq!(
            events_from(w, "kueuesim-failures")
                .iter()
                .map(|e| (e.0, e.1))
                .collect::<Vec<_>>(),
            [(H, "GPUFailed")],
            "{name}"
        );
        assert_eq!(w.pod_sets[0].nodes, ["node-b"], "{name}");
        assert_eq!(w.finished_at, Some(3.0 * H), "{name}");
        assert_eq!(failures_of(w).0, 1, "{name}");
    }
    // Two devices failed and three pods with them: both shares of device 0.
    assert_eq!(summary_failures(&r), (0, 2, 3, 3, 0, 1.0));
}

#[test]
fn a_drained_tas_node_is_replaced_as_a_deleted_one() {
    let files = kueuesim_scenario::embedded::read_paths(&[
        crate::util::scenarios_dir().join("timeline/tas-node-replacement")
    ])
    .expect("readable");
    let options = kueuesim_scenario::LoadOptions {
        sets: vec!["Timeline/outages:spec.changes[0].nodes={drain: [n1]}".into()],
        ..Default::default()
    };
    let loaded = kueuesim_scenario::load(&files, options).expect("loads");
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let train = wl(&r, "team", "train");
    // Its pod evicted from n1 at 1h, its replacement placed on n3 in rack r1.
    assert_eq!(train.pod_sets[0].nodes, ["n3", "n2"]);
    assert!(train.evictions.is_empty());
    assert_eq!(train.finished_at, Some(5.0 * H));
}

#[test]
fn a_node_that_joins_requeues_the_tas_workloads_waiting_for_a_domain() {
    // tas-node-replacement with a third change: node n7 joins rack r2 at 2h30m. tight, evicted
    // at 2h and waiting for a rack with two free nodes, finds one (n5, n7): Kueue's TAS
    // ResourceFlavor controller requeues it 1s after the node change, the requeuer 1s later.
    let files = kueuesim_scenario::embedded::read_paths(&[
        crate::util::scenarios_dir().join("timeline/tas-node-replacement")
    ])
    .expect("readable");
    let patch = kueuesim_scenario::SourceFile {
        name: "more.yaml".into(),
        text: "apiVersion: kueuesim.io/v1alpha1
kind: Timeline
metadata: {name: outages}
spec:
  changes:
  - {at: 1h, nodes: {remove: [n1]}}
  - {at: 2h, nodes: {remove: [n4]}}
  - at: 2h30m
    patch:
    - apiVersion: v1
      kind: Node
      metadata: {name: n7, labels: {rack: r2}}
      status: {allocatable: {cpu: \"64\", nvidia.com/gpu: \"8\", pods: \"110\"}}
"
        .into(),
    };
    let options = kueuesim_scenario::LoadOptions {
        patches: vec![patch],
        ..Default::default()
    };
    let loaded = kueuesim_scenario::load(&files, options).expect("loads");
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let tight = wl(&r, "team", "tight");
    assert_eq!(tight.admitted_at, Some(2.5 * H + 2.0));
    assert_eq!(tight.pod_sets[0].nodes, ["n5", "n7"]);
}
