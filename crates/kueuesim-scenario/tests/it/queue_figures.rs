//! The summary's queue figures (`summary.clusterQueues[]` / `localQueues[]`) and the
//! capacity checks, on golden scenarios of `scenarios/kueue/` with hand-computed values.

use kueuesim_engine::Simulation;
use kueuesim_report::output::result;

use crate::kueue_features::run;
use crate::util::run_dir;

// ---- queue figures (summary.clusterQueues[] / localQueues[]) ----

#[test]
fn queue_figures_match_the_hand_computation() {
    // scenarios/kueue/queue-figures/scenario.yaml has the hand computation.
    let r = run("queue-figures");
    let s = &r.summary;
    let cq = &s.cluster_queues[0].figures;
    let (a, b) = (&s.local_queues[0], &s.local_queues[1]);
    assert_eq!((a.name.as_str(), b.name.as_str()), ("a", "b"));
    let (a, b) = (&a.figures, &b.figures);
    assert_eq!(
        (cq.workloads, cq.finished_workloads, cq.pending_workloads),
        (4, 2, 1)
    );
    // Creation to latest admission: long's 50 minutes of running count.
    assert_eq!(a.wait_seconds_admitted.max, Some(4861.0));
    assert_eq!(a.wait_seconds_admitted.count, 1);
    // late, pending at the end, counts at 18000 − 7200.
    assert_eq!(a.wait_seconds_incl_pending.count, 2);
    assert_eq!(a.wait_seconds_incl_pending.max, Some(10800.0));
    // Time in queue across the readmission: 0 + (4861 − 3060).
    assert_eq!(a.time_in_queue_seconds_admitted.max, Some(1801.0));
    assert_eq!(a.time_in_queue_seconds_incl_pending.max, Some(10800.0));
    assert_eq!(b.wait_seconds_admitted.p50, Some(60.0));
    assert_eq!(b.wait_seconds_admitted.max, Some(8462.0));
    assert_eq!(b.time_in_queue_seconds_admitted.max, Some(8462.0));
    assert_eq!(cq.wait_seconds_admitted.p95, Some(8462.0));
    assert_eq!(cq.wait_seconds_incl_pending.p95, Some(10800.0));
    // JCT and bounded slowdown of the finished ones.
    assert_eq!(a.jct_seconds_finished.max, Some(12061.0));
    assert_eq!(b.jct_seconds_finished.max, Some(1860.0));
    assert!((a.bounded_slowdown_finished.max.unwrap() - 12061.0 / 7200.0).abs() < 1e-12);
    assert!((b.bounded_slowdown_finished.max.unwrap() - 1860.0 / 1800.0).abs() < 1e-12);
    // GPU-hours.
    assert!((a.gpu_hours_used - 82080.0 / 3600.0).abs() < 1e-9);
    assert!((b.gpu_hours_used - 61904.0 / 3600.0).abs() < 1e-9);
    assert!((a.gpu_hours_lost - 24000.0 / 3600.0).abs() < 1e-9);
    assert_eq!(
        (b.gpu_hours_lost, cq.gpu_hours_held_not_running),
        (0.0, 0.0)
    );
    assert!(
        (cq.gpu_utilization_of_nominal_quota.unwrap() - 143984.0 / (8.0 * 18000.0)).abs() < 1e-12
    );
    assert_eq!(
        cq.gpu_utilization_of_capacity,
        cq.gpu_utilization_of_nominal_quota
    );
    // Preemptions: suffered by a (long), caused by b (urgent).
    assert_eq!((a.preemptions_suffered, a.preemptions_caused), (1, 0));
    assert_eq!((b.preemptions_suffered, b.preemptions_caused), (0, 1));
    // Run-wide: p95 and the censored and time-in-queue distributions.
    assert_eq!(s.wait_seconds_admitted.p95, Some(8462.0));
    assert_eq!(s.wait_seconds_incl_pending.count, 4);
    assert_eq!(s.time_in_queue_seconds_admitted.p50, Some(1801.0));
    // queues.csv has one row per ClusterQueue and LocalQueue, with the same figures.
    let csv = kueuesim_report::export::queues_csv(&r);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4);
    let header: Vec<&str> = lines[0].split(',').collect();
    let col = |row: &str, name: &str| {
        let i = header.iter().position(|h| *h == name).expect(name);
        row.split(',').nth(i).expect("cell").to_string()
    };
    assert_eq!(col(lines[1], "scope"), "ClusterQueue");
    assert_eq!(col(lines[2], "scope"), "LocalQueue");
    assert_eq!(col(lines[2], "waitSecondsInclPendingMax"), "10800");
    assert_eq!(col(lines[2], "timeInQueueSecondsAdmittedMax"), "1801");
    assert_eq!(col(lines[3], "preemptionsCaused"), "1");
}

#[test]
fn quota_held_until_pods_ready_timeout_is_counted_and_flagged() {
    // pods-ready-backoff: the gang (2 × 4 GPUs) holds quota 4 times for 600 s without its pods
    // ever running, then is deactivated: 4 × 600 s × 8 GPUs held, no work lost.
    let r = run("pods-ready-backoff");
    let s = &r.summary;
    let f = &s.cluster_queues[0].figures;
    assert!((f.gpu_hours_held_not_running - 4.0 * 600.0 * 8.0 / 3600.0).abs() < 1e-9);
    assert_eq!(f.gpu_hours_lost, 0.0);
    assert!((s.gpu.held_not_running_gpu_hours - f.gpu_hours_held_not_running).abs() < 1e-9);
    // Time in queue across requeues: stretches 1→1, then from each requeue (pods gone)
    // to the next admission; the gang ends Inactive, so in no wait distribution.
    assert_eq!(f.wait_seconds_admitted.count, 0);
    // The checks: 16 GPUs of quota on an 8-GPU node; hog bypasses Kueue.
    let kinds: Vec<(&str, &str)> = s
        .checks
        .iter()
        .map(|c| (c.kind, c.object.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("QuotaAboveNodeCapacity", "ResourceFlavor/default"),
            ("WorkloadsBypassKueue", "Namespace/other")
        ]
    );
    assert!(
        s.checks[0]
            .message
            .contains("nominal GPU quota 16 exceeds the 8 GPUs")
    );
}

#[test]
fn capacity_checks_flag_unreachable_nodes_and_oversized_workloads() {
    // Two 8-GPU nodes under 8 GPUs of quota: 8 GPUs no quota reaches. A 2 × 8-GPU job can
    // never be admitted (16 > 8, no cohort) and a 16-GPU pod fits no node.
    let node = |n: &str| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {n}}}\nstatus:\n  allocatable: {{cpu: \"64\", nvidia.com/gpu: \"8\", pods: \"110\"}}\n---\n"
        )
    };
    let job = |name: &str, pods: u32, gpus: u32| {
        format!(
            "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: team\n  labels: {{kueue.x-k8s.io/queue-name: q}}\n  annotations: {{kueuesim.io/duration: 1m}}\nspec:\n  parallelism: {pods}\n  template:\n    spec:\n      containers:\n      - resources: {{limits: {{nvidia.com/gpu: \"{gpus}\"}}}}\n"
        )
    };
    let text = format!(
        "{}{}{}---\n{}---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: q, namespace: team}}\nspec: {{clusterQueue: cq}}\n{}{}",
        node("n1"),
        node("n2"),
        crate::util::FLAVOR,
        crate::util::cq("8"),
        job("wide", 2, 8),
        job("fat", 1, 16),
    );
    let loaded = crate::util::load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    let got: Vec<(&str, &str)> = r
        .summary
        .checks
        .iter()
        .map(|c| (c.kind, c.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "CapacityWithoutQuota",
                "ResourceFlavor default: its nodes have 16 GPUs but nominal GPU quota totals 8: 8 GPUs no ClusterQueue can reach"
            ),
            (
                "WorkloadExceedsQuota",
                "ClusterQueue cq: its largest workload team/job-wide-d13fe asks for 16 GPUs, more than its quota can reach in any flavor (8, borrowing included): it can never be admitted"
            ),
            (
                "PodExceedsNodes",
                "ClusterQueue cq: a pod of team/job-fat-da4cb asks for 16 GPUs, more than any node has (8): it can never be placed"
            ),
        ]
    );
}

/// A Timeline's later nodes arrive with their own quota: the capacity check compares the
/// quota and the nodes of the start. scenarios/timeline/new-nodepool has one 8-GPU node and
/// 8 GPUs of quota at the start, and a second node with 16 GPUs of quota at 2h: nothing is
/// out of reach at either time (the late node counted at the start read "its nodes have 16
/// GPUs but nominal GPU quota totals 8").
#[test]
fn capacity_check_leaves_out_the_nodes_a_timeline_adds_later() {
    let r = run_dir("timeline/new-nodepool");
    let kinds: Vec<&str> = r.summary.checks.iter().map(|c| c.kind).collect();
    assert!(
        !kinds.contains(&"CapacityWithoutQuota"),
        "{:?}",
        r.summary.checks
    );
}
