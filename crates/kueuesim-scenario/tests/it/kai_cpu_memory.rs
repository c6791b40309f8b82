//! KAI's queues over CPU and memory as well as GPUs: upstream's cases whose outcome depends
//! on a queue's CPU or memory share or limit (`scenarios/kai/cpu-memory/`, computed by hand in
//! their headers), where the proportion plugin divides each resource on its own, a queue may
//! reclaim only within its fair share of every resource, and one above its share of any
//! resource may be reclaimed from.

use kueuesim_report::output::{SimulationResult, WorkloadOut};

use crate::util::{run_dir, wl};

/// The job `name` of namespace `team`.
fn job<'a>(r: &'a SimulationResult, name: &str) -> &'a WorkloadOut {
    wl(r, "team", name)
}

/// The scenario `scenarios/kai/cpu-memory/<case>`.
fn case(name: &str) -> SimulationResult {
    run_dir(&format!("kai/cpu-memory/{name}"))
}

/// (at, reason, preemptor) of every eviction of `name`.
fn evictions<'a>(r: &'a SimulationResult, name: &str) -> Vec<(f64, &'a str, Option<&'a str>)> {
    job(r, name)
        .evictions
        .iter()
        .map(|e| (e.at, e.reason, e.preemptor.as_deref()))
        .collect()
}

/// The `kai-scheduler` `Unschedulable` events of `name`, as (at, message).
fn unschedulable<'a>(r: &'a SimulationResult, name: &str) -> Vec<(f64, &'a str)> {
    job(r, name)
        .events
        .iter()
        .filter(|e| e.source == "kai-scheduler" && e.reason == "Unschedulable")
        .map(|e| (e.at, e.message.as_str()))
        .collect()
}

#[test]
fn reclaim_from_the_queue_over_its_memory_share() {
    // reclaim_test.go "DRF - reclaim from queue that has one resource over fair share".
    let r = case("reclaim-by-memory");
    for name in ["a-0", "b-0"] {
        assert!(evictions(&r, name).is_empty(), "{name}");
        assert_eq!(job(&r, name).state, "Running", "{name}");
    }
    assert_eq!(
        evictions(&r, "a-1"),
        [(60.0, "Reclaim", Some("team/b-1"))],
        "the younger job of queue0, over its memory share"
    );
    assert_eq!(job(&r, "a-1").state, "Pending");
    let b1 = job(&r, "b-1");
    assert_eq!((b1.state, b1.running_at), ("Running", Some(90.0)));
}

#[test]
fn reclaim_one_pod_under_a_departments_cpu_limit() {
    // reclaim_elastic_test.go "Elastic job reclaims single task from another elastic job -
    // equal queues".
    let r = case("reclaim-under-a-cpu-limit");
    assert_eq!(
        unschedulable(&r, "pending-job").first(),
        Some(&(
            60.0,
            "OverLimit: department-a quota has reached the allowable limit of CPU cores. Limit is 4 cores, currently 4 cores allocated and workload requested 1 cores."
        )),
        "the department's CPU limit holds the second pod back"
    );
    assert_eq!(
        evictions(&r, "running-job0"),
        [(60.0, "Reclaim", Some("team/pending-job"))]
    );
    let victim = job(&r, "running-job0");
    let nodes: Vec<&str> = victim.pod_sets[0]
        .nodes
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        nodes,
        ["node0", "node0"],
        "it keeps two pods; the third waits"
    );
    let reclaimer = job(&r, "pending-job");
    let nodes: Vec<&str> = reclaimer.pod_sets[0]
        .nodes
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(nodes, ["node0", "node0"], "two pods bound, the third waits");
}

#[test]
fn reclaim_between_jobs_without_gpus_by_memory() {
    // integration_tests/reclaim/reclaim_test.go "q0 allocated only cpu tasks, has 0 deserved
    // resources ... q1 requires cpu only tasks of same priority to be allocated and reclaims
    // from q0 jobs".
    let r = case("reclaim-cpu-only-jobs");
    assert_eq!(
        evictions(&r, "running-job1"),
        [(60.0, "Reclaim", Some("team/pending-job0"))]
    );
    assert_eq!(
        evictions(&r, "running-job0"),
        [(60.0, "Reclaim", Some("team/pending-job1"))]
    );
    for name in ["running-job0", "running-job1"] {
        assert_eq!(job(&r, name).state, "Pending", "{name}'s new pod waits");
    }
    for name in ["pending-job0", "pending-job1"] {
        let w = job(&r, name);
        assert_eq!((w.state, w.running_at), ("Running", Some(90.0)), "{name}");
    }
}
