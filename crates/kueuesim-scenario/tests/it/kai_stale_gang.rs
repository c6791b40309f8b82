//! KAI's `staleGangEviction` action: a gang below its minMember for the staleness grace
//! period has its remaining pods evicted (`scenarios/kai/stale-gang-eviction`, computed by
//! hand in its header).

use crate::util::{condition, run_dir, wl};

#[test]
fn stale_gang_is_evicted_after_the_grace_period() {
    let r = run_dir("kai/stale-gang-eviction");
    let gang = wl(&r, "team", "gang");
    // node-b fails at 10m; 60 s later KAI evicts the pod left on node-a.
    let at = |reason: &str| -> Vec<(f64, &str, String)> {
        gang.events
            .iter()
            .filter(|e| e.reason == reason)
            .map(|e| (e.at, e.source, e.message.clone()))
            .collect()
    };
    assert_eq!(at("NodeFailed").len(), 1, "{:?}", gang.events);
    assert_eq!(at("NodeFailed")[0].0, 600.0);
    let evict = at("Evict");
    assert_eq!(evict.len(), 1, "{:?}", gang.events);
    let (t, source, message) = &evict[0];
    assert_eq!((*t, *source), (660.0, "kai-scheduler"));
    // `GetGangEvictionMessage`, naming the pod left on node-a.
    let survivor = gang.pod_sets[0]
        .pods
        .iter()
        .find(|p| !at("NodeFailed")[0].2.contains(p.name.as_str()))
        .map(|p| p.name.clone());
    assert_eq!(
        Some(message.clone()),
        survivor.map(|p| format!(
            "Workload doesn't meet the minimum required number of pods (2), evicting remaining pod: team/{p}"
        ))
    );
    assert_eq!(
        at("StaleJob"),
        vec![(
            660.0,
            "kai-scheduler",
            "Job is stale. 1 pods are active, minMember is 2".to_string()
        )]
    );
    // The Job controller replaces the evicted pod; Kueue keeps the workload admitted while
    // it waits for recovery (no Kueue eviction).
    assert_eq!(gang.state, "Admitted");
    assert!(gang.evictions.is_empty(), "{:?}", gang.evictions);
    assert_eq!(condition(gang, "PodsReady").reason, "WaitForRecovery");
    assert_eq!(gang.failures.as_ref().map(|f| f.restarts), Some(2));
    let failures = r.summary.failures.as_ref().expect("failures");
    assert_eq!((failures.pods_lost, failures.restarts), (2, 2));
    // node-a is free: other, waiting since 5m, runs from the eviction.
    let other = wl(&r, "team", "other");
    assert_eq!(other.running_at, Some(660.0));
    assert_eq!(other.state, "Running");
    // 2 GPUs × 10m, the survivor's 1m, other's 19m.
    assert_eq!(r.summary.gpu.busy_gpu_seconds, 2400.0);
}
