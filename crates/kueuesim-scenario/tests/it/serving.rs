//! Serving that scales: the golden scenarios of `scenarios/serving/` (a Deployment's scale-up
//! preempting training and its ReplicaSet's choice at the scale-down; a LeaderWorkerSet's and
//! a StatefulSet's scaling; a Deployment following its load as an HPA would), each asserting
//! the hand-computed outcome of its header comment; the loader's errors for scaling objects.

use kueuesim_report::output::{ServingOut, SimulationResult, WorkloadOut, to_json};

use crate::util::{FLAVOR, cq, load_error, run_dir};

const H: f64 = 3600.0;

/// The workloads whose name contains `part`, in output order.
fn named<'a>(r: &'a SimulationResult, part: &str) -> Vec<&'a WorkloadOut> {
    r.workloads
        .iter()
        .filter(|w| w.name.contains(part))
        .collect()
}

fn only<'a>(r: &'a SimulationResult, part: &str) -> &'a WorkloadOut {
    let v = named(r, part);
    assert_eq!(v.len(), 1, "one workload named *{part}*");
    v[0]
}

fn serving<'a>(r: &'a SimulationResult, name: &str) -> &'a ServingOut {
    r.summary
        .serving
        .as_ref()
        .expect("summary.serving")
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no serving object {name}"))
}

/// (wanted, ready replica-seconds, created, never ready, time to ready p50, p95).
fn figures(s: &ServingOut) -> (f64, f64, u32, u32, Option<f64>, Option<f64>) {
    (
        s.replica_seconds_wanted,
        s.replica_seconds_ready,
        s.replicas_created,
        s.replicas_never_ready,
        s.time_to_ready_seconds.p50,
        s.time_to_ready_seconds.p95,
    )
}

/// (admitted, running, finished) of `w`.
fn times(w: &WorkloadOut) -> (Option<f64>, Option<f64>, Option<f64>) {
    (w.admitted_at, w.running_at, w.finished_at)
}

#[test]
fn a_scale_up_preempts_training_and_the_scale_down_gives_it_back() {
    let r = run_dir("serving/scale-up-preempts-training");
    let (zzvjc, t669, b9m6s) = (
        only(&r, "vllm-7d56675bf6-zzvjc"),
        only(&r, "vllm-7d56675bf6-669t4"),
        only(&r, "vllm-7d56675bf6-b9m6s"),
    );
    // The scale-up at 2h created two pods, each its own Workload.
    assert_eq!((t669.created_at, b9m6s.created_at), (2.0 * H, 2.0 * H));
    let (train_a, train_b) = (only(&r, "train-a"), only(&r, "train-b"));
    // Kueue's own preemption: train-b (admitted last) for 669t4, then train-a for b9m6s.
    fn evicted(w: &WorkloadOut) -> Vec<(f64, &str, Option<&str>)> {
        w.evictions
            .iter()
            .map(|e| (e.at, e.reason, e.preemptor.as_deref()))
            .collect()
    }
    assert_eq!(
        evicted(train_b),
        [(
            2.0 * H,
            "Preempted",
            Some(format!("team/{}", t669.name).as_str())
        )]
    );
    assert_eq!(
        evicted(train_a),
        [(
            2.0 * H + 30.0,
            "Preempted",
            Some(format!("team/{}", b9m6s.name).as_str())
        )]
    );
    assert_eq!(
        times(t669),
        (Some(2.0 * H + 30.0), Some(2.0 * H + 90.0), Some(6.0 * H))
    );
    assert_eq!(
        times(b9m6s),
        (Some(2.0 * H + 60.0), Some(2.0 * H + 120.0), None)
    );
    // train-b came back into the GPUs train-a left; train-a after the scale-down.
    assert_eq!(
        times(train_b),
        (
            Some(2.0 * H + 60.0),
            Some(2.0 * H + 120.0),
            Some(5.0 * H + 120.0)
        )
    );
    assert_eq!(times(train_a).0, Some(6.0 * H + 1.0));
    assert_eq!(
        (train_a.lost_gpu_seconds, train_b.lost_gpu_seconds),
        (14_160.0, 26_160.0)
    );
    // The ReplicaSet deleted the two pods sharing node-a (ActivePodsWithRanks), not the newest.
    assert_eq!(zzvjc.state, "Finished");
    assert_eq!(zzvjc.finished_at, Some(6.0 * H));
    assert_eq!(b9m6s.state, "Running");
    assert_eq!(b9m6s.pod_sets[0].nodes, ["node-b"]);
    assert_eq!(train_a.pod_sets[0].nodes, ["node-a"]);
    let scaled: Vec<(f64, &str)> = zzvjc
        .events
        .iter()
        .filter(|e| e.source == "kueuesim-serving")
        .map(|e| (e.at, e.message.as_str()))
        .collect();
    assert_eq!(
        scaled,
        [(
            6.0 * H,
            "Deployment team/vllm scaled from 3 to 1 replicas: pod vllm-7d56675bf6-zzvjc deleted"
        )]
    );
    assert_eq!(
        figures(serving(&r, "vllm")),
        (57_600.0, 57_330.0, 3, 0, Some(90.0), Some(120.0))
    );
    assert_eq!(serving(&r, "vllm").kind, "Deployment");
}

#[test]
fn a_leader_worker_set_deletes_its_highest_groups_and_a_statefulset_scales_to_zero_and_back() {
    let r = run_dir("serving/lws-and-statefulset");
    let group = |g: &str| named(&r, &format!("leaderworkerset-llm-{g}-"));
    assert_eq!(group("0").len(), 1);
    assert_eq!(
        (group("0")[0].state, group("0")[0].finished_at),
        ("Running", None)
    );
    assert_eq!(group("2").len(), 1);
    assert_eq!(group("2")[0].finished_at, Some(H));
    // Group 1 ended at 1h and was made again, under the same name, at 2h.
    let g1: Vec<(f64, Option<f64>)> = group("1")
        .iter()
        .map(|w| (w.created_at, w.finished_at))
        .collect();
    assert_eq!(g1, [(0.0, Some(H)), (2.0 * H, None)]);
    // The StatefulSet's pod group: ended at 30m, back at 90m with its creation time.
    let cache: Vec<(f64, Option<f64>, Option<f64>)> = named(&r, "statefulset-cache-")
        .iter()
        .map(|w| (w.created_at, w.admitted_at, w.finished_at))
        .collect();
    assert_eq!(
        cache,
        [(0.0, Some(0.0), Some(0.5 * H)), (0.0, Some(1.5 * H), None)]
    );
    assert_eq!(
        figures(serving(&r, "llm")),
        (6.0 * H, 6.0 * H, 4, 0, Some(0.0), Some(0.0))
    );
    assert_eq!(
        figures(serving(&r, "cache")),
        (4.0 * H, 4.0 * H, 4, 0, Some(0.0), Some(0.0))
    );
}

#[test]
fn a_deployment_follows_its_load_as_the_hpa_would() {
    let r = run_dir("serving/autoscaled");
    let pods = named(&r, "pod-api-");
    let created: Vec<f64> = pods.iter().map(|w| w.created_at).collect();
    // No `behavior` (no stabilization annotation): up to max(2 × current, 4) per sync, so
    // 4 at 1h and 6 at 1h0m15s (`calculateScaleUpLimit`).
    assert_eq!(created, [0.0, 0.0, H, H, H + 15.0, H + 15.0]);
    // The scale-down after the 5m window, which counts a proposal exactly 5m old
    // (`stabilizeRecommendation`): 1 at 3h5m0s; the five newest go, the first pod stays.
    let ended: Vec<Option<f64>> = pods.iter().map(|w| w.finished_at).collect();
    let down = Some(3.0 * H + 5.0 * 60.0);
    assert_eq!(ended, [None, down, down, down, down, down]);
    assert_eq!(
        figures(serving(&r, "api")),
        (55_470.0, 55_470.0, 6, 0, Some(0.0), Some(0.0))
    );
}

#[test]
fn serving_runs_are_deterministic() {
    let a = to_json(&run_dir("serving/scale-up-preempts-training"));
    let b = to_json(&run_dir("serving/scale-up-preempts-training"));
    assert_eq!(a, b);
}

/// A scenario with one serving object `kind` written as `object` (its spec's body).
fn with_object(kind_head: &str, annotations: &str, spec: &str) -> String {
    format!(
        "{FLAVOR}---\n{}---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: q, namespace: s}}\nspec: {{clusterQueue: cq}}\n---\n{kind_head}\nmetadata:\n  name: x\n  namespace: s\n  labels: {{kueue.x-k8s.io/queue-name: q}}\n  annotations:\n{annotations}spec:\n{spec}",
        cq("8")
    )
}

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment";
const STATEFULSET: &str = "apiVersion: apps/v1\nkind: StatefulSet";
const POD_SPEC: &str = "  template:\n    spec:\n      containers:\n      - resources: {limits: {nvidia.com/gpu: \"1\"}}\n";

#[test]
fn scaling_errors_name_the_place() {
    // A StatefulSet resized other than to zero and back (Kueue's webhook refuses it).
    let e = load_error(&with_object(
        STATEFULSET,
        "    kueuesim.io/replicas: \"0s=2,1h=3\"\n",
        POD_SPEC,
    ));
    assert!(
        e.starts_with("t.yaml:32:27: a StatefulSet managed by Kueue scales only to zero and back"),
        "{e}"
    );
    // A schedule out of order.
    let e = load_error(&with_object(
        DEPLOYMENT,
        "    kueuesim.io/replicas: \"1h=2,30m=3\"\n",
        POD_SPEC,
    ));
    assert!(e.starts_with("t.yaml:32:27: annotation kueuesim.io/replicas: step \"30m=3\": expected offsets in increasing order"), "{e}");
    // A load without its load per replica, and the reverse.
    let e = load_error(&with_object(
        DEPLOYMENT,
        "    kueuesim.io/load: \"0s=5\"\n",
        POD_SPEC,
    ));
    assert!(
        e.contains("a load without kueuesim.io/load-per-replica"),
        "{e}"
    );
    let e = load_error(&with_object(
        DEPLOYMENT,
        "    kueuesim.io/load-per-replica: \"5\"\n",
        POD_SPEC,
    ));
    assert!(e.contains("expected a load with it"), "{e}");
    // Both a schedule and a load.
    let e = load_error(&with_object(
        DEPLOYMENT,
        "    kueuesim.io/replicas: \"0s=1\"\n    kueuesim.io/load: \"0s=5\"\n    kueuesim.io/load-per-replica: \"5\"\n",
        POD_SPEC,
    ));
    assert!(
        e.contains("expected either a step schedule or a load"),
        "{e}"
    );
    // A duration on a serving object that scales.
    let e = load_error(&with_object(
        DEPLOYMENT,
        "    kueuesim.io/replicas: \"0s=1\"\n    kueuesim.io/duration: 1h\n",
        POD_SPEC,
    ));
    assert!(
        e.contains("serving pods run until a scale-down deletes them"),
        "{e}"
    );
    // A load trace that cannot be read names the file.
    let e = load_error(&with_object(
        DEPLOYMENT,
        "    kueuesim.io/load-trace: missing.csv\n    kueuesim.io/load-per-replica: \"5\"\n",
        POD_SPEC,
    ));
    assert!(e.contains("cannot read CSV missing.csv"), "{e}");
}

#[test]
fn a_scale_down_deletes_replicas_in_any_state_unscheduled_ones_first() {
    let r = run_dir("serving/pending-replicas-go-first");
    let pod = |name: &str| only(&r, &format!("pod-d-7cc9bbf7b7-{name}-"));
    // The running pod stays; the three on no node (pending or admitted) go at 1h30m.
    assert_eq!(
        (pod("9759h").state, pod("9759h").running_at),
        ("Running", Some(H))
    );
    assert!(!pod("9759h").scaled_down);
    for name in ["2cct2", "kgtvx", "fchk8"] {
        let w = pod(name);
        assert_eq!(
            (w.state, w.finished_at, w.running_at),
            ("Finished", Some(1.5 * H), None)
        );
        assert!(w.scaled_down, "{name}");
        assert!(w.pod_sets[0].nodes.is_empty(), "{name}");
    }
    // LeaderWorkerSet: group 2 (never placed) and group 1 (running) went at 1h.
    let groups: Vec<(&str, Option<f64>, bool)> = named(&r, "leaderworkerset-big-")
        .iter()
        .map(|w| (w.state, w.finished_at, w.scaled_down))
        .collect();
    assert_eq!(
        groups,
        [
            ("Running", None, false),
            ("Finished", Some(H), true),
            ("Finished", Some(H), true),
            ("Admitted", None, false)
        ]
    );
    let d = serving(&r, "d");
    // 4 wanted for 1h30m, 1 for 1h30m; only 9759h was ever ready (from 1h, 1h after its
    // scale-up).
    assert_eq!(figures(d), (7.5 * H, 2.0 * H, 4, 3, Some(H), Some(H)));
}
