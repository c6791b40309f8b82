//! KAI's reclaim, preempt, consolidation and queue limits with GPU shares (`gpu-fraction`,
//! `gpu-memory`): upstream's cases as scenarios (`scenarios/kai/fractions/`, computed by hand
//! in their headers), where a queue's GPUs count its shares as fractions, a fractional victim
//! frees its share of a device, and a fractional job needs only its share.

use kueuesim_report::output::{SimulationResult, WorkloadOut};

use crate::util::{run_dir, wl};

/// The job `name` of namespace `team`.
fn job<'a>(r: &'a SimulationResult, name: &str) -> &'a WorkloadOut {
    wl(r, "team", name)
}

/// `name` runs on node0 from the start, never evicted.
fn untouched(r: &SimulationResult, name: &str) {
    let w = job(r, name);
    assert!(w.evictions.is_empty(), "{name}: {:?}", w.evictions);
    assert_eq!((w.state, w.running_at), ("Running", Some(0.0)), "{name}");
}

/// `name` was evicted once at 1m by `action` for `by`, and its new pod waits.
fn victim(r: &SimulationResult, name: &str, action: &str, by: &str) {
    let w = job(r, name);
    let got: Vec<(f64, &str, Option<&str>)> = w
        .evictions
        .iter()
        .map(|e| (e.at, e.reason, e.preemptor.as_deref()))
        .collect();
    assert_eq!(got, vec![(60.0, action, Some(by))], "{name}");
    assert_eq!(w.state, "Pending", "{name}");
}

/// `name` binds on node0 once its victims' pods are gone (1m30s, podTermination 30s).
fn placed_after_victims(r: &SimulationResult, name: &str) {
    let w = job(r, name);
    assert_eq!((w.state, w.running_at), ("Running", Some(90.0)), "{name}");
    assert_eq!(w.pod_sets[0].nodes, ["node0"], "{name}");
}

/// The scenario `scenarios/kai/fractions/<case>`.
fn case(name: &str) -> SimulationResult {
    run_dir(&format!("kai/fractions/{name}"))
}

#[test]
fn reclaim_a_fractional_job_for_a_whole_gpu() {
    // reclaimFractional_test.go, "reclaim fractional train by whole GPU job".
    let r = case("reclaim-whole-gpu-job");
    untouched(&r, "running-job0");
    victim(&r, "running-job1", "Reclaim", "team/pending-job0");
    placed_after_victims(&r, "pending-job0");
}

#[test]
fn reclaim_only_the_share_a_fractional_job_needs() {
    // "reclaim fractional train by fractional train GPU job - reclaim only part of
    // fractional jobs".
    let r = case("reclaim-part-of-the-shares");
    untouched(&r, "running-job0");
    untouched(&r, "running-job1");
    victim(&r, "running-job2", "Reclaim", "team/pending-job0");
    placed_after_victims(&r, "pending-job0");
}

#[test]
fn reclaim_every_share_of_a_device() {
    // "reclaim fractional train by fractional GPU job, reclaim all fractional jobs of 1 GPU":
    // the first victim's release alone does not let the job fit; its new pod does not take
    // its share back before the second victim's release.
    let r = case("reclaim-all-shares-of-a-gpu");
    untouched(&r, "running-job0");
    victim(&r, "running-job1", "Reclaim", "team/pending-job0");
    victim(&r, "running-job2", "Reclaim", "team/pending-job0");
    placed_after_victims(&r, "pending-job0");
}

#[test]
fn no_reclaim_over_the_fair_share_with_fractions() {
    // "reclaim fractional train by fractional GPU job will go over quota - don't reclaim":
    // queue1 would hold 1.3 GPUs of its fair share 1. A guard: the main branch before
    // fractions were counted took no action for a job with GPU shares either.
    let r = case("reclaim-over-quota");
    for name in ["running-job0", "running-job1", "running-job2"] {
        untouched(&r, name);
    }
    let w = job(&r, "pending-job0");
    assert_eq!((w.state, w.running_at), ("Pending", None));
}

#[test]
fn reclaim_a_share_from_the_queue_over_its_fair_share() {
    // reclaim_test.go, "queue0 is under fair share, queue1 is over fair share - reclaim".
    let r = case("reclaim-from-the-queue-over-its-share");
    for name in ["q0-job0", "q0-job1", "q1-job0"] {
        untouched(&r, name);
    }
    victim(&r, "q1-job1", "Reclaim", "team/q0-job2");
    placed_after_victims(&r, "q0-job2");
}

#[test]
fn preempt_the_whole_gpu_job_and_spare_the_shares() {
    // preempt_test.go, "3 train job running, 1 build job pending for the same queue - no
    // need to preempt both". A guard: the main branch before fractions were counted gives
    // the same, as it left the shares' jobs out of the victims altogether.
    let r = case("preempt-one-of-three");
    untouched(&r, "running-job0");
    untouched(&r, "running-job2");
    victim(&r, "running-job1", "Preempt", "team/pg-pending-job0");
    let evict: Vec<&str> = job(&r, "running-job1")
        .events
        .iter()
        .filter(|e| e.reason == "Evict")
        .map(|e| e.message.as_str())
        .collect();
    assert_eq!(
        evict,
        ["Pod team/running-job1 was preempted by higher priority workload team/pg-pending-job0"]
    );
    placed_after_victims(&r, "pending-job0");
}

#[test]
fn preempt_a_share_for_a_whole_gpu() {
    // preemptFractional_test.go, "Preempt fractional train by whole GPU job": the share's
    // job is the youngest victim and frees a whole device.
    let r = case("preempt-a-share-for-a-whole-gpu");
    untouched(&r, "running-job0");
    victim(&r, "running-job1", "Preempt", "team/pg-pending-job0");
    placed_after_victims(&r, "pending-job0");
}

#[test]
fn preempt_a_share_for_a_share() {
    // preemptFractional_test.go, "Preempt fractional train by fractional interactive GPU
    // job": the preemptor needs only its 0.6.
    let r = case("preempt-a-share-for-a-share");
    untouched(&r, "running-job0");
    victim(&r, "running-job1", "Preempt", "team/pg-pending-job0");
    placed_after_victims(&r, "pending-job0");
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
fn queue_limits_count_gpu_shares() {
    // The capacity policy counts a share as its fraction (max_allowed_check_test.go "no
    // allocated under max allowed", "over max allowed only gpu"): queue0 at its limit of 2
    // with 1 + 0.5 + 0.5, queue1's non-preemptible shares at its deserved 1.
    let r = run_dir("kai/fractions/queue-limits");
    for (name, at) in [
        ("a-whole", 0.0),
        ("b-half", 1.0),
        ("d-half", 3.0),
        ("f-half", 5.0),
        ("g-half", 6.0),
    ] {
        let w = job(&r, name);
        assert_eq!((w.state, w.running_at), ("Running", Some(at)), "{name}");
    }
    for name in ["c-whole", "e-half", "h-half"] {
        let w = job(&r, name);
        assert_eq!((w.state, w.running_at), ("Pending", None), "{name}");
    }
    assert_eq!(
        unschedulable(&r, "c-whole"),
        [(
            2.0,
            "OverLimit: queue0 quota has reached the allowable limit of GPUs. Limit is 2 GPUs, currently 1.5 GPUs allocated and workload requested 1 GPUs."
        )]
    );
    assert_eq!(
        unschedulable(&r, "e-half"),
        [(
            4.0,
            "OverLimit: queue0 quota has reached the allowable limit of GPUs. Limit is 2 GPUs, currently 2 GPUs allocated and workload requested 0.5 GPUs."
        )]
    );
    assert_eq!(
        unschedulable(&r, "h-half"),
        [(
            7.0,
            "NonPreemptibleOverQuota: Non-preemptible workload is over quota. Workload requested 0.5 GPUs, but queue1 quota is 1 GPUs, while 1 GPUs are already allocated for non-preemptible pods. Use a preemptible workload to go over quota.."
        )]
    );
}

#[test]
fn consolidate_a_share_onto_the_other_device_of_its_node() {
    // consolidation_test.go, "2 jobs of 0.5 task running on different GPUs, 1 job of 1 gpus
    // is pending - Consolidate and run the pending job": running-job1's share moves from
    // GPU 1 to GPU 0 of node0, and the pending job takes GPU 1.
    let r = case("consolidate-shares");
    untouched(&r, "running-job0");
    let w = job(&r, "running-job1");
    let got: Vec<(f64, &str, Option<&str>)> = w
        .evictions
        .iter()
        .map(|e| (e.at, e.reason, e.preemptor.as_deref()))
        .collect();
    assert_eq!(got, [(60.0, "Consolidation", Some("team/pg-pending-job0"))]);
    let kai: Vec<(f64, &str, &str)> = w
        .events
        .iter()
        .filter(|e| e.source == "kai-scheduler")
        .map(|e| (e.at, e.reason, e.message.as_str()))
        .collect();
    assert_eq!(
        kai,
        [
            (
                60.0,
                "Evict",
                "Pod team/running-job1-a was preempted and rescheduled due to bin packing (resource consolidation) procedure"
            ),
            (
                60.0,
                "Pipelined",
                "Pod team/running-job1-a was pipelined to node node0"
            ),
        ]
    );
    // Its replacement runs again on node0 once the moved pod is gone, beside the pending job.
    assert_eq!((w.state, w.running_at), ("Running", Some(90.0)));
    assert_eq!(w.pod_sets[0].nodes, ["node0"]);
    placed_after_victims(&r, "pending-job0");
}

/// `name` runs on `on` from 1m30s, never evicted (pipelined by an action at 1m, bound once
/// its victims' pods were gone).
fn runs_after_victims_on(r: &SimulationResult, name: &str, on: &[&str]) {
    let w = job(r, name);
    assert!(w.evictions.is_empty(), "{name}: {:?}", w.evictions);
    assert_eq!((w.state, w.running_at), ("Running", Some(90.0)), "{name}");
    let nodes: Vec<&str> = w
        .pod_sets
        .iter()
        .flat_map(|p| p.nodes.iter().map(String::as_str))
        .collect();
    assert_eq!(nodes, on, "{name}");
}

/// `name` was moved once by the consolidation at 1m for `by` and its replacement runs on
/// node0 from 1m30s.
fn moved_to_node0(r: &SimulationResult, name: &str, by: &str) {
    let w = job(r, name);
    let got: Vec<(f64, &str, Option<&str>)> = w
        .evictions
        .iter()
        .map(|e| (e.at, e.reason, e.preemptor.as_deref()))
        .collect();
    assert_eq!(got, [(60.0, "Consolidation", Some(by))], "{name}");
    assert_eq!((w.state, w.running_at), ("Running", Some(90.0)), "{name}");
    assert_eq!(w.pod_sets[0].nodes, ["node0"], "{name}");
}

// `gpu-memory` shares (100-MiB GPUs, as upstream's fake nodes): a pending one counts its
// memory against the smallest GPU memory of the GPU nodes (`MinNodeGPUMemory`). On the main
// branch before, a pending `gpu-memory` job took no part in the actions and waited.

#[test]
fn preempt_a_memory_share_for_a_memory_share() {
    // preemptGpuMemory_test.go, "build preempts train based on gpu memory".
    let r = case("memory-preempt-a-share");
    victim(&r, "running-train", "Preempt", "team/pg-pending-build");
    placed_after_victims(&r, "pending-build");
}

#[test]
fn preempt_the_lowest_priority_memory_share_only() {
    // "minimal victim preemption by priority": without the lower-priority share, 30 + 55 MiB
    // fit.
    let r = case("memory-preempt-the-lowest-priority-share");
    untouched(&r, "running-train-a");
    victim(&r, "running-train-b", "Preempt", "team/pg-pending-build");
    placed_after_victims(&r, "pending-build");
}

#[test]
fn preempt_a_share_of_a_whole_device_for_a_memory_share() {
    // "fractional build preempts whole gpu train" (its train asks the device's 100 MiB).
    let r = case("memory-preempt-a-whole-device-share");
    victim(
        &r,
        "running-whole-train",
        "Preempt",
        "team/pg-pending-build",
    );
    placed_after_victims(&r, "pending-build");
}

#[test]
fn preempt_two_memory_shares_for_a_gang_of_two() {
    // "multi task build preempts across gpus": each task of 80 MiB needs a device freed.
    let r = case("memory-preempt-across-gpus");
    victim(
        &r,
        "running-train-gpu0",
        "Preempt",
        "team/pending-build-two-tasks",
    );
    victim(
        &r,
        "running-train-gpu1",
        "Preempt",
        "team/pending-build-two-tasks",
    );
    runs_after_victims_on(&r, "pending-build-two-tasks", &["node0", "node0"]);
}

#[test]
fn no_memory_share_preempted_at_the_same_priority() {
    // "no preemption on same priority". A guard: the pending memory job now takes part in
    // the actions, and none of them may evict here.
    let r = case("memory-no-preemption-at-the-same-priority");
    untouched(&r, "running-train");
    let w = job(&r, "pending-train");
    assert_eq!((w.state, w.running_at), ("Pending", None));
}

#[test]
fn preempt_a_share_for_a_memory_share() {
    // preemptFractional_test.go (integration), "Preempt fractional train by fractional
    // interactive GPU memory request job".
    let r = case("memory-preempt-a-share-for-a-memory-share");
    untouched(&r, "running-job0");
    victim(&r, "running-job1", "Preempt", "team/pg-pending-job0");
    placed_after_victims(&r, "pending-job0");
}

#[test]
fn reclaim_the_lower_priority_memory_share() {
    // reclaimGpuMemory_test.go, "reclaim minimal lower priority victims across queues":
    // queue1 stays within its fair share with the pending 0.5.
    let r = case("memory-reclaim-the-lower-priority-share");
    for name in ["q0-train-a", "q1-running"] {
        untouched(&r, name);
    }
    victim(&r, "q0-train-b", "Reclaim", "team/q1-pending");
    runs_after_victims_on(&r, "q1-pending", &["node1"]);
}

#[test]
fn reclaim_memory_shares_by_priority_under_fractional_quotas() {
    // reclaimGpuMemory_test.go, "multiple victims reclaimed by priority": queue0 deserves
    // 0.2 GPU and queue1 0.8; q1-pending's 0.8 keeps queue1 at its deserved share, so
    // reclaim takes queue0's two lowest priority shares and leaves q0-train-a. Fails when
    // a Queue's fractional quota is floored to whole GPUs (both 0: no reclaim).
    let r = case("memory-reclaim-victims-by-priority");
    untouched(&r, "q0-train-a");
    victim(&r, "q0-train-b", "Reclaim", "team/q1-pending");
    victim(&r, "q0-train-c", "Reclaim", "team/q1-pending");
    runs_after_victims_on(&r, "q1-pending", &["node0"]);
}

#[test]
fn reclaim_for_a_memory_share_within_half_a_gpu() {
    // reclaimGpuMemory_test.go, "fair share reclaim for pending gpu memory job" and
    // "reclaim whole gpu for fractional request within fair share": queues of 0.5 GPU each;
    // the pending share keeps queue1 within its 0.5, queue0 holds more than its own.
    for (case_name, running) in [
        ("memory-fair-share-reclaim", "q0-running"),
        ("memory-reclaim-a-whole-gpu-for-a-share", "q0-whole-gpu"),
    ] {
        let r = case(case_name);
        victim(&r, running, "Reclaim", "team/q1-pending");
        runs_after_victims_on(&r, "q1-pending", &["node0"]);
    }
}

#[test]
fn no_reclaim_for_a_memory_share_above_half_a_gpu() {
    // "no reclaim when queue at deserved": queue0 at its 0.5, queue1 would be at 0.6.
    let r = case("memory-no-reclaim-at-deserved");
    untouched(&r, "q0-running");
    let w = job(&r, "q1-pending");
    assert_eq!((w.state, w.running_at), ("Pending", None));
}

#[test]
fn consolidate_for_a_memory_share() {
    // consolidationGpuMemory_test.go, "consolidate two memory jobs to free gpu":
    // running-job1's share moves to GPU 0 beside running-job0, the job takes GPU 1.
    let r = case("memory-consolidate-two-shares");
    untouched(&r, "running-job0");
    moved_to_node0(&r, "running-job1", "team/pg-pending-job");
    runs_after_victims_on(&r, "pending-job", &["node0"]);
}

#[test]
fn no_consolidation_when_the_memory_shares_do_not_fit_together() {
    // "no consolidation when memory does not fit". A guard: the pending memory job now
    // takes part in the consolidation, which must find no scenario placing both victims.
    let r = case("memory-no-consolidation-when-memory-does-not-fit");
    untouched(&r, "running-job0");
    untouched(&r, "running-job1");
    let w = job(&r, "pending-job");
    assert_eq!((w.state, w.running_at), ("Pending", None));
}

#[test]
fn consolidate_three_memory_shares_for_two_tasks() {
    // "consolidate three jobs to enable two large tasks": the first task frees node2, the
    // second node1; both victims go to node0 beside running-job0.
    let r = case("memory-consolidate-three-shares-for-two-tasks");
    untouched(&r, "running-job0");
    moved_to_node0(&r, "running-job1", "team/pending-job");
    moved_to_node0(&r, "running-job2", "team/pending-job");
    runs_after_victims_on(&r, "pending-job", &["node1", "node2"]);
}

#[test]
fn consolidate_memory_shares_for_a_whole_gpu() {
    // "consolidate to free gpu for whole job". A guard: running memory shares were
    // consolidation victims before, so the main branch before gives the same.
    let r = case("memory-consolidate-for-a-whole-gpu");
    untouched(&r, "running-small0");
    moved_to_node0(&r, "running-small1", "team/pg-pending-whole");
    runs_after_victims_on(&r, "pending-whole", &["node1"]);
}

/// A KAI Queue's fractional GPU quota is kept (a fraction of a GPU deserved), and a fractional
/// overQuotaWeight, which the over-quota split takes whole, is a warning naming it rather than
/// floored unseen.
#[test]
fn a_fractional_queue_quota_is_kept_and_a_fractional_weight_warns() {
    let text = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q0}\nspec:\n  resources:\n    gpu: {quota: 0.29, overQuotaWeight: 1.5, limit: 2.5}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus:\n  allocatable: {cpu: \"8\", nvidia.com/gpu: \"1\", pods: \"110\"}\n";
    let loaded = crate::util::load_text("q.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    let q = &loaded.world.kai_queues[0];
    assert_eq!((q.gpu_quota, q.gpu_limit), (Some(290), Some(2500)));
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("KAI Queue q0's gpu overQuotaWeight 1.5 is taken as 1")),
        "{:?}",
        loaded.warnings
    );
}
