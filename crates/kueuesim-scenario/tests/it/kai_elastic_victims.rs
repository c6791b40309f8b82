//! KAI's reclaim and preempt take an elastic victim above its minimum pod by pod
//! (`GetTasksToEvict`): the cases of upstream's `reclaim_elastic_test.go` and
//! `preempt_elastic_test.go` as scenarios (`scenarios/placement/K37`–`K45`, `K52`, `K53`:
//! every job placed by KAI at the start, the pending job arriving at 1m; in K53 the
//! reclaimer's first pod is bound from the start), each under ten seeds: which pods were
//! evicted, which kept running from the start, and where the pending job runs.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result};

use crate::util::{load_dir, wl};

/// Runs `check` on `world` under seeds 1 to 10, naming the case and seed of a failure.
fn seeds(case: &str, world: &kueuesim_model::World, check: impl Fn(&SimulationResult)) {
    for seed in 1..=10 {
        let mut world = world.clone();
        world.config.seed = seed;
        let r = result(&world, &Simulation::new(&world).run());
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| check(&r))) {
            eprintln!("{case}: failed under seed {seed}");
            resume_unwind(e);
        }
    }
}

/// Runs `check` on `scenarios/placement/<case>` under seeds 1 to 10.
fn each(case: &str, check: impl Fn(&SimulationResult)) {
    seeds(case, &load_dir(&format!("placement/{case}")).world, check);
}

/// The job `name` of namespace `team`.
fn job<'a>(r: &'a SimulationResult, name: &str) -> &'a WorkloadOut {
    wl(r, "team", name)
}

/// `name` lost its last pods to one eviction for `by` (reason `reason`) at 1m and kept its
/// first `kept` pods on node0, bound there since it arrived; the evicted pods' replacements
/// find no room (`Pending`).
fn lost_pods(r: &SimulationResult, name: &str, kept: usize, reason: &str, by: &str) {
    let w = job(r, name);
    assert_eq!(w.evictions.len(), 1, "{name}: {:?}", w.evictions);
    assert_eq!(w.evictions[0].reason, reason, "{name}");
    assert_eq!(w.evictions[0].at, 60.0, "{name}");
    assert_eq!(w.evictions[0].preemptor.as_deref(), Some(by), "{name}");
    let pods: Vec<(Option<&str>, Option<f64>)> = w.pod_sets[0]
        .pods
        .iter()
        .map(|p| (p.node.as_deref(), p.bound_at))
        .collect();
    let mut want = vec![(Some("node0"), Some(w.created_at)); kept];
    want.resize(pods.len(), (None, None));
    assert_eq!(pods, want, "{name}: the first {kept} pods keep running");
    assert_eq!(w.state, "Pending", "{name}: its replacements wait");
}

/// `name` (a job of one pod) was evicted whole for `by` at 1m and waits again.
fn evicted_whole(r: &SimulationResult, name: &str, reason: &str, by: &str) {
    let w = job(r, name);
    assert_eq!(w.evictions.len(), 1, "{name}: {:?}", w.evictions);
    assert_eq!(w.evictions[0].reason, reason, "{name}");
    assert_eq!(w.evictions[0].at, 60.0, "{name}");
    assert_eq!(w.evictions[0].preemptor.as_deref(), Some(by), "{name}");
    assert_eq!(w.state, "Pending", "{name}");
    assert!(w.pod_sets[0].nodes.is_empty(), "{name}: {:?}", w.pod_sets);
}

/// `name` was pipelined onto the evicted pods' GPUs and runs on node0 once they are gone
/// (podTermination 30s after 1m).
fn pipelined(r: &SimulationResult, name: &str) {
    let w = job(r, name);
    assert!(w.evictions.is_empty(), "{name}: {:?}", w.evictions);
    assert_eq!(w.pod_sets[0].nodes, ["node0"], "{name}");
    assert_eq!(w.running_at, Some(90.0), "{name}");
}

/// `name`'s preempt `Evict` events (`GetPreemptMessage`): one per evicted pod, the last pod
/// first, naming the preemptor's PodGroup (KAI's grouper's `pg-<job>`).
fn preempt_events(r: &SimulationResult, name: &str, evicted: usize) {
    let w = job(r, name);
    let pods = &w.pod_sets[0].pods;
    let want: Vec<String> = pods
        .iter()
        .rev()
        .take(evicted)
        .map(|p| {
            format!(
                "Pod team/{} was preempted by higher priority workload team/pg-pending-job0",
                p.name
            )
        })
        .collect();
    let got: Vec<&str> = w
        .events
        .iter()
        .filter(|e| e.reason == "Evict")
        .map(|e| e.message.as_str())
        .collect();
    assert_eq!(got, want, "{name}");
}

#[test]
fn k37_reclaim_takes_one_pod_of_an_elastic_job() {
    each("K37-reclaim-one-pod-of-an-elastic-job", |r| {
        lost_pods(r, "running-job", 1, "Reclaim", "team/pending-job");
        pipelined(r, "pending-job");
    });
}

#[test]
fn k38_reclaim_takes_the_pods_an_elastic_job_has_above_what_the_reclaimer_needs() {
    each("K38-reclaim-pods-of-an-elastic-job", |r| {
        lost_pods(r, "running-job", 2, "Reclaim", "team/pending-job");
        pipelined(r, "pending-job");
    });
}

#[test]
fn k39_reclaim_takes_a_job_and_one_pod_of_an_elastic_job() {
    each("K39-reclaim-a-job-and-one-elastic-pod", |r| {
        lost_pods(r, "running-job0", 1, "Reclaim", "team/pending-job");
        evicted_whole(r, "running-job1", "Reclaim", "team/pending-job");
        pipelined(r, "pending-job");
    });
}

#[test]
fn k40_reclaim_takes_one_pod_of_each_elastic_job() {
    each("K40-reclaim-one-pod-of-each-elastic-job", |r| {
        lost_pods(r, "running-job0", 1, "Reclaim", "team/pending-job");
        lost_pods(r, "running-job1", 1, "Reclaim", "team/pending-job");
        pipelined(r, "pending-job");
    });
}

#[test]
fn k41_reclaim_spares_an_elastic_job_whose_minimum_is_within_its_quota() {
    each("K41-reclaim-spares-an-elastic-job-in-quota", |r| {
        let w = job(r, "running-job");
        assert!(w.evictions.is_empty(), "{:?}", w.evictions);
        assert_eq!(w.state, "Running");
        assert_eq!(w.pod_sets[0].nodes, ["node0", "node0", "node0"]);
        let p = job(r, "pending-job");
        assert_eq!(p.state, "Pending");
        assert!(p.pod_sets[0].nodes.is_empty(), "{:?}", p.pod_sets[0].nodes);
    });
}

#[test]
fn k42_preempt_takes_one_pod_of_an_elastic_job() {
    each("K42-preempt-one-pod-of-an-elastic-job", |r| {
        lost_pods(r, "running-job0", 1, "Preempt", "team/pg-pending-job0");
        preempt_events(r, "running-job0", 1);
        pipelined(r, "pending-job0");
    });
}

#[test]
fn k43_preempt_takes_the_pods_an_elastic_job_has_above_what_the_preemptor_needs() {
    each("K43-preempt-pods-of-an-elastic-job", |r| {
        lost_pods(r, "running-job0", 2, "Preempt", "team/pg-pending-job0");
        preempt_events(r, "running-job0", 2);
        pipelined(r, "pending-job0");
    });
}

#[test]
fn k44_preempt_takes_a_job_and_one_pod_of_an_elastic_job() {
    each("K44-preempt-a-job-and-one-elastic-pod", |r| {
        lost_pods(r, "running-job0", 1, "Preempt", "team/pg-pending-job0");
        preempt_events(r, "running-job0", 1);
        evicted_whole(r, "running-job1", "Preempt", "team/pg-pending-job0");
        pipelined(r, "pending-job0");
    });
}

#[test]
fn k45_preempt_takes_one_pod_of_each_elastic_job() {
    each("K45-preempt-one-pod-of-each-elastic-job", |r| {
        lost_pods(r, "running-job0", 1, "Preempt", "team/pg-pending-job0");
        lost_pods(r, "running-job1", 1, "Preempt", "team/pg-pending-job0");
        pipelined(r, "pending-job0");
    });
}

#[test]
fn a_protected_elastic_job_loses_pods_above_its_minimum_only() {
    // K42 with queue0's preemptMinRuntime of 5m: running-job0 (started at 0s) is protected
    // at 1m, but upstream's filter lets an elastic job through and its validator refuses
    // only a solution taking it below its minAvailable: its second pod goes at 1m.
    let mut loaded = load_dir("placement/K42-preempt-one-pod-of-an-elastic-job");
    loaded.world.kai_queues[0].preempt_min_runtime =
        Some(kueuesim_model::SimDuration::from_secs(300));
    seeds("K42 protected", &loaded.world, |r| {
        lost_pods(r, "running-job0", 1, "Preempt", "team/pg-pending-job0");
        pipelined(r, "pending-job0");
    });
    // K43 with minMember 3 and the same protection: pending-job0's 2 GPUs need a pod of the
    // minimum, so nothing goes until the protection ends at 5m; then the whole job goes
    // (its minimum does not fit back beside the preemptor).
    let mut loaded = load_dir("placement/K43-preempt-pods-of-an-elastic-job");
    loaded.world.kai_queues[0].preempt_min_runtime =
        Some(kueuesim_model::SimDuration::from_secs(300));
    let victim = loaded
        .world
        .workloads
        .iter_mut()
        .find(|w| w.name == "running-job0")
        .expect("running-job0");
    std::sync::Arc::make_mut(&mut victim.gang).min_member = Some(3);
    seeds("K43 protected, minMember 3", &loaded.world, |r| {
        let w = job(r, "running-job0");
        let at: Vec<f64> = w.evictions.iter().map(|e| e.at).collect();
        assert_eq!(at, [300.0], "{:?}", w.evictions);
        assert!(w.pod_sets[0].nodes.is_empty(), "{:?}", w.pod_sets[0].nodes);
        assert_eq!(job(r, "pending-job0").running_at, Some(330.0));
    });
}

/// (node, bound_at) of every pod of `name`, in pod order.
fn pods<'a>(r: &'a SimulationResult, name: &str) -> Vec<(Option<&'a str>, Option<f64>)> {
    job(r, name).pod_sets[0]
        .pods
        .iter()
        .map(|p| (p.node.as_deref(), p.bound_at))
        .collect()
}

#[test]
fn k52_an_elastic_job_reclaims_a_whole_job() {
    each("K52-elastic-job-reclaims-a-whole-job", |r| {
        evicted_whole(r, "running-job0", "Reclaim", "team/pending-job");
        let w = job(r, "pending-job");
        assert!(w.evictions.is_empty(), "{:?}", w.evictions);
        assert_eq!(
            pods(r, "pending-job"),
            [(Some("node0"), Some(90.0)), (Some("node0"), Some(90.0))],
            "both pods bind once running-job0's pod is gone"
        );
    });
}

#[test]
fn k53_an_elastic_job_reclaims_one_pod_of_another_for_its_pending_pod() {
    each("K53-elastic-job-reclaims-one-pod-of-an-elastic-job", |r| {
        let w = job(r, "running-job0");
        let evictions: Vec<(f64, &str, Option<&str>)> = w
            .evictions
            .iter()
            .map(|e| (e.at, e.reason, e.preemptor.as_deref()))
            .collect();
        assert_eq!(evictions, [(0.0, "Reclaim", Some("team/pending-job"))]);
        assert_eq!(
            pods(r, "running-job0"),
            [(Some("node0"), Some(0.0)), (None, None)],
            "its first pod keeps running, its second's replacement waits"
        );
        assert!(job(r, "pending-job").evictions.is_empty());
        assert_eq!(
            pods(r, "pending-job"),
            [(Some("node0"), Some(0.0)), (Some("node0"), Some(30.0))],
            "the first pod runs on, the second binds once the victim is gone"
        );
    });
}
