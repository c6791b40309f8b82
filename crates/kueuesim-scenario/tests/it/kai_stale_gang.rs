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

/// (at, reason, message) of the `kai-scheduler` events `reason` of `w`.
fn kai_events<'a>(
    w: &'a kueuesim_report::output::WorkloadOut,
    reason: &str,
) -> Vec<(f64, &'a str)> {
    w.events
        .iter()
        .filter(|e| e.source == "kai-scheduler" && e.reason == reason)
        .map(|e| (e.at, e.message.as_str()))
        .collect()
}

/// The nodes of `w`'s bound pods, in pod order.
fn bound_nodes(w: &kueuesim_report::output::WorkloadOut) -> Vec<&str> {
    w.pod_sets
        .iter()
        .flat_map(|p| p.nodes.iter().map(String::as_str))
        .collect()
}

/// `name` was never touched by `staleGangEviction`: no `Evict`, no `StaleJob`, still on `on`.
fn not_evicted(r: &kueuesim_report::output::SimulationResult, name: &str, on: &[&str]) {
    let w = wl(r, "team", name);
    assert!(kai_events(w, "Evict").is_empty(), "{name}: {:?}", w.events);
    assert!(
        kai_events(w, "StaleJob").is_empty(),
        "{name}: {:?}",
        w.events
    );
    assert_eq!(bound_nodes(w), on, "{name}");
}

/// `name`'s pods `pods` were evicted at 11m (the 60 s grace period after the loss at 10m)
/// with `GetGangEvictionMessage`'s `evict` wording, then its `StaleJob` event `stale`; its
/// pods are bound on `after` at the end (KAI places the replacements where they fit).
fn evicted(
    r: &kueuesim_report::output::SimulationResult,
    name: &str,
    evict: &[String],
    stale: &str,
    after: &[&str],
) {
    let w = wl(r, "team", name);
    let messages: Vec<(f64, &str)> = evict.iter().map(|m| (660.0, m.as_str())).collect();
    assert_eq!(kai_events(w, "Evict"), messages, "{name}");
    assert_eq!(kai_events(w, "StaleJob"), vec![(660.0, stale)], "{name}");
    assert_eq!(bound_nodes(w), after, "{name}");
}

/// The cases of upstream's `stalegangeviction_test.go` and of its integration test
/// (`scenarios/kai/stale-gang-cases`, computed by hand in its header). They pass on the
/// main branch as well (the action was simulated before they were transcribed): they guard
/// the staleness test (`IsStale`, per subgroup), the grace period, `handleNonStaleJob` and
/// the messages.
#[test]
fn upstream_stale_gang_eviction_cases() {
    let r = run_dir("kai/stale-gang-cases");
    // "sanity": nothing lost, nothing evicted.
    not_evicted(&r, "sanity", &["s-a"]);
    // "Don't evict recently stale job": its replacement binds on r-b at 10m30s, before the
    // grace period ends; the clock stops.
    not_evicted(&r, "recent", &["r-a", "r-b"]);
    // "Evict long-ago stale job".
    evicted(
        &r,
        "long-ago",
        &["Workload doesn't meet the minimum required number of pods (2), evicting remaining pod: team/long-ago-main-0".to_string()],
        "Job is stale. 1 pods are active, minMember is 2",
        &[],
    );
    // "Don't evict non-stale job (has enough minAvailable, even though it has stale duration)".
    not_evicted(&r, "min-one", &["n-a"]);
    // "Stale job with sub groups - evict": the pods of sub-group-0, each message naming its
    // own subgroup's minimum; the StaleJob event names the unsatisfied sub-group-1.
    let sub_stale: Vec<String> = (0..3)
        .map(|i| format!("Workload doesn't meet the minimum required number of pods (2) in sub-group sub-group-0, evicting remaining pod: team/sub-stale-a-{i}"))
        .collect();
    evicted(
        &r,
        "sub-stale",
        &sub_stale,
        "Job is stale. 3 pods are active, minMember is 3, subGroup sub-group-1 minMember is 1 and 0 pods are active",
        // g-a's three GPUs, free again, take the subgroups' minimums (2 + 1).
        &["g-a", "g-a", "g-a"],
    );
    // "Job with sub groups - should not evict".
    not_evicted(&r, "sub-fine", &["h-a", "h-a", "h-a"]);
    // Integration test, "Evict stale gang job of train" and "… of build": job0 evicted and
    // pending (its two pods do not fit the one free GPU), job1 running on.
    for class in ["train", "build"] {
        evicted(
            &r,
            &format!("{class}-job0"),
            &[format!(
                "Workload doesn't meet the minimum required number of pods (2), evicting remaining pod: team/{class}-job0-main-0"
            )],
            "Job is stale. 1 pods are active, minMember is 2",
            &[],
        );
        not_evicted(
            &r,
            &format!("{class}-job1"),
            &[&format!("{}-a", &class[..1])],
        );
        assert_eq!(wl(&r, "team", &format!("{class}-job1")).state, "Running");
    }
}
