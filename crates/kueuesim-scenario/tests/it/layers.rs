//! Both layers at once (`scenarios/layers/`): Kueue admits, then the gang scheduler's own
//! queue decides placement; and each gang scheduler alone (`spec.kueue.enabled: false`).
//! The outcomes computed by hand in the scenario's header and in docs/what-if.md ("Do we
//! need Kueue in front of KAI?") are asserted workload by workload.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result, to_json};
use kueuesim_scenario::{LoadOptions, load};

use crate::util::{load_error, scenarios_dir, times, wl};

/// Runs `scenarios/layers` with `sets` (`--set` overrides).
fn run_layers(sets: &[&str]) -> SimulationResult {
    let files = kueuesim_scenario::embedded::read_paths(&[scenarios_dir().join("layers")])
        .expect("readable");
    let opts = LoadOptions {
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let loaded = load(&files, opts).unwrap_or_else(|e| panic!("{e}"));
    result(&loaded.world, &Simulation::new(&loaded.world).run())
}

const NO_KUEUE: &str = "simulation/layers:spec.kueue.enabled=false";
const VOLCANO: &str = "simulation/layers:spec.schedulers.gang-scheduler=volcano";

/// (runningAt, finishedAt) of team `t`'s job `name`.
fn ran(r: &SimulationResult, t: &str, name: &str) -> (Option<f64>, Option<f64>) {
    let (_, run, fin) = times(wl(r, t, name));
    (run, fin)
}

/// The first event of `w` from `source` with `reason`: (at, message).
fn event<'a>(w: &'a WorkloadOut, source: &str, reason: &str) -> Option<(f64, &'a str)> {
    w.events
        .iter()
        .find(|e| e.source == source && e.reason == reason)
        .map(|e| (e.at, e.message.as_str()))
}

const H: f64 = 3600.0;

/// Kueue + KAI and Kueue + Volcano: Kueue admits all four of team-a's jobs at 0s (team-a
/// borrows team-b's idle 16 GPUs), but the gang scheduler's queue caps team-a at 24 GPUs:
/// a-3 is admitted and waits in the second layer. At 10m team-b's jobs arrive; Kueue
/// reclaims its lent quota by preempting two of team-a's admitted jobs, a-0 and a-1 (running
/// ones: a-3 holds quota without running, and Kueue does not know why). Their GPUs go to
/// b-0, b-1 and, now within team-a's cap, a-3. a-0 is admitted again when a-2 finishes (1h),
/// a-1 when a-3 does (1h10m).
fn assert_kueue_in_front(r: &SimulationResult) {
    let a3 = wl(r, "team-a", "a-3");
    assert_eq!(a3.admitted_at, Some(0.0), "Kueue admits a-3 at once");
    assert_eq!(ran(r, "team-a", "a-3"), (Some(600.0), Some(600.0 + H)));
    assert_eq!(ran(r, "team-a", "a-2"), (Some(0.0), Some(H)));
    for b in ["b-0", "b-1"] {
        assert_eq!(ran(r, "team-b", b), (Some(600.0), Some(600.0 + H)), "{b}");
    }
    assert_eq!(
        ran(r, "team-a", "a-0"),
        (Some(H + 1.0), Some(2.0 * H + 1.0))
    );
    assert_eq!(
        ran(r, "team-a", "a-1"),
        (Some(H + 601.0), Some(2.0 * H + 601.0))
    );
    for a in ["a-0", "a-1"] {
        let w = wl(r, "team-a", a);
        assert_eq!(w.evictions.len(), 1, "{a}");
        assert_eq!(w.evictions[0].reason, "Preempted", "{a}");
    }
}

#[test]
fn kueue_then_kai_a_kueue_admitted_job_waits_over_its_kai_queue_limit() {
    let r = run_layers(&[]);
    assert_kueue_in_front(&r);
    // The second layer's queue applies to a job Kueue admitted.
    assert_eq!(
        event(wl(&r, "team-a", "a-3"), "kai-scheduler", "Unschedulable"),
        Some((
            0.0,
            "OverLimit: team-a quota has reached the allowable limit of GPUs. Limit is 24 GPUs, currently 24 GPUs allocated and workload requested 8 GPUs."
        ))
    );
    insta::assert_snapshot!(to_json(&r));
}

#[test]
fn kueue_then_volcano_a_kueue_admitted_job_waits_over_its_volcano_capability() {
    let r = run_layers(&[VOLCANO]);
    assert_kueue_in_front(&r);
    assert_eq!(
        event(wl(&r, "team-a", "a-3"), "volcano", "Unschedulable"),
        Some((
            0.0,
            "queue resource quota insufficient: insufficient nvidia.com/gpu"
        ))
    );
}

/// KAI alone: team-a's a-0..a-2 run at 0s, a-3 waits at the limit of 24. At 10m b-0 takes
/// the free node; b-1 reclaims (team-b is below its fair share of 16, team-a above its
/// deserved 16): KAI evicts a-2, the youngest of the newest jobs, and b-1 binds there at
/// once. a-2 and a-3 run when a-0 and a-1 finish (1h).
#[test]
fn kai_alone_reclaims_by_fair_share() {
    let r = run_layers(&[NO_KUEUE]);
    for w in &r.workloads {
        assert_eq!(w.admitted_at, None, "{}: no Kueue, no admission", w.name);
    }
    assert_eq!(r.summary.policies.kueue_enabled, Some(false));
    assert_eq!(
        kueuesim_report::policies::header_lines(&r.summary.policies),
        [
            "Policies:     Kueue off (spec.kueue.enabled: false): every job goes to its scheduler directly"
        ]
    );
    assert!(
        r.summary.checks.is_empty(),
        "nothing bypasses a Kueue that is not there"
    );
    assert_eq!(ran(&r, "team-a", "a-0"), (Some(0.0), Some(H)));
    assert_eq!(ran(&r, "team-a", "a-1"), (Some(0.0), Some(H)));
    assert_eq!(ran(&r, "team-b", "b-0"), (Some(600.0), Some(600.0 + H)));
    assert_eq!(ran(&r, "team-b", "b-1"), (Some(600.0), Some(600.0 + H)));
    let a2 = wl(&r, "team-a", "a-2");
    assert_eq!(a2.evictions.len(), 1);
    assert_eq!(a2.evictions[0].reason, "Reclaim");
    assert_eq!(ran(&r, "team-a", "a-2"), (Some(H), Some(2.0 * H)));
    assert_eq!(ran(&r, "team-a", "a-3"), (Some(H), Some(2.0 * H)));
    assert_eq!(
        event(wl(&r, "team-a", "a-3"), "kai-scheduler", "Unschedulable"),
        Some((
            0.0,
            "OverLimit: team-a quota has reached the allowable limit of GPUs. Limit is 24 GPUs, currently 24 GPUs allocated and workload requested 8 GPUs."
        ))
    );
    insta::assert_snapshot!(to_json(&r));
}

/// Volcano alone (enqueue, allocate, proportion; no reclaim action, as upstream's default
/// conf): team-a's a-0..a-2 run, a-3 is held at enqueue by the capability of 24. At 10m b-0
/// takes the free node; b-1 waits for nodes until a-0..a-2 finish at 1h, as does a-3.
#[test]
fn volcano_alone_does_not_reclaim() {
    let r = run_layers(&[VOLCANO, NO_KUEUE]);
    for a in ["a-0", "a-1", "a-2"] {
        assert_eq!(ran(&r, "team-a", a), (Some(0.0), Some(H)), "{a}");
    }
    assert_eq!(ran(&r, "team-b", "b-0"), (Some(600.0), Some(600.0 + H)));
    assert_eq!(ran(&r, "team-b", "b-1"), (Some(H), Some(2.0 * H)));
    assert_eq!(ran(&r, "team-a", "a-3"), (Some(H), Some(2.0 * H)));
    assert!(r.workloads.iter().all(|w| w.evictions.is_empty()));
}

/// KAI's and Volcano's `Queue` (and `PodGroup`) are kinds of different API groups: one name
/// in each is two objects, as the API server keeps them, not a duplicate.
#[test]
fn a_kai_queue_and_a_volcano_queue_may_share_a_name() {
    let text = "apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team}
spec:
  resources:
    gpu: {quota: 1}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team}
spec:
  weight: 1
";
    let loaded = crate::util::load_text("t.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.world.kai_queues.len(), 1);
    // The same kind twice in one group is still a duplicate.
    let twice = format!(
        "{text}---\n{}",
        &text[..text.find("---").expect("two documents")]
    );
    assert!(load_error(&twice).contains("duplicate Queue \"team\""));
}

/// Without Kueue a job naming a LocalQueue that does not exist runs: the load does not warn
/// that it will stay pending (the platform's research/experiment).
#[test]
fn without_kueue_a_missing_local_queue_is_no_warning() {
    let load_platform = |sets: &[&str]| {
        let files = kueuesim_scenario::embedded::read_paths(&[scenarios_dir().join("platform")])
            .expect("readable");
        let opts = LoadOptions {
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        load(&files, opts).unwrap_or_else(|e| panic!("{e}"))
    };
    let missing = |w: &[String]| {
        w.iter()
            .any(|w| w.contains("LocalQueue research/experiment"))
    };
    assert!(missing(&load_platform(&[]).warnings));
    let off = load_platform(&["simulation/platform-day:spec.kueue.enabled=false"]);
    assert!(!missing(&off.warnings), "{:?}", off.warnings);
}

#[test]
fn kueue_enabled_takes_true_or_false() {
    let text = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: t}
spec:
  kueue:
    enabled: flase
";
    let e = load_error(text);
    assert!(
        e.starts_with(
            "t.yaml:6:14: invalid kueue.enabled \"flase\": expected one of true, false\n"
        ),
        "{e}"
    );
}

/// A job whose KAI queue's limit held it back starts when the job holding the limit
/// finishes: the finishing job no longer counts while its release retries the waiting ones.
#[test]
fn a_job_held_at_its_kai_limit_starts_when_the_holder_finishes() {
    let text = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: t}
spec:
  until: 1h
---
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {nvidia.com/gpu: \"4\", pods: \"110\"}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: vision}
spec:
  resources:
    gpu: {quota: 1, overQuotaWeight: 1, limit: 1}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: train}
value: 50
---
JOBS";
    let job = |name: &str| {
        format!(
            "apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: team
  labels: {{kai.scheduler/queue: vision}}
  annotations: {{kueuesim.io/duration: 10m}}
spec:
  template:
    spec:
      schedulerName: kai-scheduler
      priorityClassName: train
      containers:
      - resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}
"
        )
    };
    let text = text.replace("JOBS", &format!("{}---\n{}", job("x"), job("y")));
    let loaded = crate::util::load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    assert_eq!(ran(&r, "team", "x"), (Some(0.0), Some(600.0)));
    assert_eq!(ran(&r, "team", "y"), (Some(600.0), Some(1200.0)));
}

/// Time to start (`startSecondsInclPending`), the figure that compares the layers: creation
/// to all pods first running, over every job whether Kueue admits it or not. Kueue + KAI:
/// a-3 starts at 10m (when Kueue's preemptions free its KAI queue's room), the others at
/// once (b-0 and b-1 at their 10m arrival). KAI alone: a-3 waits at its limit until 1h.
/// Volcano alone: a-3 and b-1 (created at 10m) start at 1h. Without Kueue the queue waits
/// count nothing, and the summary says how long the jobs took to start instead.
#[test]
fn time_to_start_counts_every_job_with_or_without_kueue() {
    let starts = |r: &SimulationResult| {
        let s = &r.summary.start_seconds_incl_pending;
        (s.count, s.p50, s.max, r.summary.start_waiting)
    };
    let with = run_layers(&[]);
    assert_eq!(starts(&with), (6, Some(0.0), Some(600.0), 0));
    let kai = run_layers(&[NO_KUEUE]);
    assert_eq!(starts(&kai), (6, Some(0.0), Some(H), 0));
    assert_eq!(kai.summary.wait_seconds_incl_pending.count, 0);
    let volcano = run_layers(&[VOLCANO, NO_KUEUE]);
    assert_eq!(volcano.summary.start_seconds_incl_pending.max, Some(H));
    assert_eq!(
        volcano.summary.start_seconds_incl_pending.mean,
        Some((H + (H - 600.0)) / 6.0),
        "a-3 and b-1 (created at 10m) start at 1h, the others at once"
    );
    // The summary prints it where the queue figures miss jobs, and only there.
    let text = |r: &SimulationResult, sets: &[&str]| {
        let files = kueuesim_scenario::embedded::read_paths(&[scenarios_dir().join("layers")])
            .expect("readable");
        let opts = LoadOptions {
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        let loaded = load(&files, opts).unwrap_or_else(|e| panic!("{e}"));
        kueuesim_report::summary_text::summary_text(&loaded.world, r)
    };
    let (kai_text, with_text) = (text(&kai, &[NO_KUEUE]), text(&with, &[]));
    assert!(
        kai_text.contains(
            "To start:     p50 0s, p90 1h0m0s, p95 1h0m0s, p99 1h0m0s, max 1h0m0s (creation to all pods running, 6 workloads with or without Kueue, 6 outside its ClusterQueues; none still waiting)"
        ),
        "{kai_text}"
    );
    assert!(!with_text.contains("To start:"), "{with_text}");
    // Without Kueue there is no queue wait to print.
    assert!(!kai_text.contains("Queue wait:"), "{kai_text}");
    assert!(with_text.contains("Queue wait:"), "{with_text}");
}

#[test]
fn a_pod_bound_at_the_start_waited_nothing_whatever_its_creation_time() {
    // Bound at the start (spec.nodeName), created at 1s by its arrival annotation (which
    // then only orders it by age): it runs from 0, and its time to start is 0, not -1s.
    let text = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: bound}
spec: {until: 1m}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: '4', memory: 4G, pods: '10'}
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: team
  annotations: {kueuesim.io/arrival: 1s, kueuesim.io/duration: 1h}
spec:
  nodeName: n1
  containers:
  - resources: {requests: {cpu: '1'}}
";
    let loaded = crate::util::load_text("t.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    let outcome = Simulation::new(&loaded.world).run();
    let r = result(&loaded.world, &outcome);
    let s = &r.summary.start_seconds_incl_pending;
    assert_eq!((s.count, s.p50, s.max), (1, Some(0.0), Some(0.0)));
}
