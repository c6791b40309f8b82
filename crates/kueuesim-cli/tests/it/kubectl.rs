//! The kubectl views of pods, nodes and queues (`get pod`, `describe pod|node|clusterqueue|
//! localqueue`, `get node`): golden snapshots, hand-checked pod statuses and event folding.

use super::{kueuesim, scenario, stderr, stdout};

/// Runs `kueuesim ARGS`, asserts success and returns stdout.
fn ok(args: &[&str]) -> String {
    let o = kueuesim(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// NAME → STATUS of `get pod -n team` on scenarios/golden/kubectl-pods at `at`.
fn statuses(at: &str) -> Vec<(String, String)> {
    let dir = scenario("golden/kubectl-pods");
    ok(&["get", "pod", "-n", "team", &dir, "--at", at])
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            (c[0].to_string(), format!("{} {}", c[1], c[2]))
        })
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// Every STATUS, at the times the scenario's header computes by hand: a Job's pod starts
/// (ContainerCreating, podStartup 10s) and runs; a plain Pod waits behind Kueue's scheduling
/// gate; a preempted Job's pod terminates for podTermination (30s) and the suspended Job then
/// has no pods; the preemptor's pod completes; the unadmitted Volcano Job never has pods.
#[test]
fn pod_statuses_follow_kueue_and_the_kubelet() {
    // A plain Pod is its own name (it was `<workload>-main-0` before).
    const NOTEBOOK: &str = "notebook";
    assert_eq!(
        statuses("5s"),
        pairs(&[("low-76lkf", "0/1 ContainerCreating")])
    );
    assert_eq!(
        statuses("5m"),
        pairs(&[
            ("low-76lkf", "1/1 Running"),
            (NOTEBOOK, "0/1 SchedulingGated")
        ])
    );
    assert_eq!(
        statuses("10m15s"),
        pairs(&[
            ("low-76lkf", "1/1 Terminating"),
            (NOTEBOOK, "0/1 SchedulingGated")
        ])
    );
    assert_eq!(
        statuses("10m35s"),
        pairs(&[
            (NOTEBOOK, "0/1 SchedulingGated"),
            ("urgent-sx5zw", "0/1 ContainerCreating")
        ])
    );
    assert_eq!(
        statuses("45m"),
        pairs(&[
            ("low-76lkf", "1/1 Running"),
            (NOTEBOOK, "0/1 SchedulingGated"),
            ("urgent-sx5zw", "0/1 Completed")
        ])
    );
    // Admitted by Kueue, unplaceable for Volcano: the gang's pods exist and are Pending.
    let dir = scenario("golden/first-fit-nodes");
    let out = ok(&["get", "pod", "-n", "team", &dir, "--at", "5m"]);
    assert!(
        out.contains("gang-jbwps     0/1     Pending   0          4m\n"),
        "{out}"
    );
}

#[test]
fn get_pod_wide_on_the_platform_at_6h() {
    let dir = scenario("platform");
    insta::assert_snapshot!(ok(&["get", "pod", "-A", "-o", "wide", &dir, "--at", "6h"]));
}

#[test]
fn get_node_shows_gpu_requests_and_allocatable() {
    let dir = scenario("platform");
    insta::assert_snapshot!(ok(&["get", "node", &dir, "--at", "6h"]));
}

#[test]
fn describe_pod_of_an_unplaceable_gang_shows_failed_scheduling() {
    let dir = scenario("golden/first-fit-nodes");
    insta::assert_snapshot!(ok(&[
        "describe",
        "pod",
        "gang-jbwps",
        "-n",
        "team",
        &dir,
        "--at",
        "5m"
    ]));
}

#[test]
fn describe_pod_gated_running_and_terminating() {
    let dir = scenario("golden/kubectl-pods");
    let gated = ok(&[
        "describe", "pod", "notebook", "-n", "team", &dir, "--at", "5m",
    ]);
    assert!(
        gated.contains("Scheduling Gates:\n  kueue.x-k8s.io/admission\n"),
        "{gated}"
    );
    insta::assert_snapshot!("describe_pod_gated", gated);
    insta::assert_snapshot!(
        "describe_pod_terminating",
        ok(&[
            "describe",
            "pod",
            "low-76lkf",
            "-n",
            "team",
            &dir,
            "--at",
            "10m15s"
        ])
    );
    insta::assert_snapshot!(
        "describe_pod_running",
        ok(&[
            "describe",
            "pod",
            "urgent-sx5zw",
            "-n",
            "team",
            &dir,
            "--at",
            "11m"
        ])
    );
}

#[test]
fn describe_node_and_queues_on_the_platform_at_6h() {
    let dir = scenario("platform");
    insta::assert_snapshot!(
        "describe_node",
        ok(&["describe", "node", "gpu-h100-01", &dir, "--at", "6h"])
    );
    insta::assert_snapshot!(
        "describe_clusterqueue",
        ok(&["describe", "clusterqueue", "ml-team", &dir, "--at", "6h"])
    );
    insta::assert_snapshot!(
        "describe_localqueue",
        ok(&[
            "describe",
            "localqueue",
            "training",
            "-n",
            "ml-team",
            &dir,
            "--at",
            "6h"
        ])
    );
}

/// The node's Allocated resources agree with the pods `get pod` places on it.
#[test]
fn describe_node_counts_the_pods_bound_to_it() {
    let dir = scenario("golden/first-fit-nodes");
    let out = ok(&["describe", "node", "node-a", &dir, "--at", "5m"]);
    // spread's pods 0 and 2 (4 GPUs, 1 cpu each) run on node-a.
    assert!(
        out.contains("Non-terminated Pods:  (2 in total)\n"),
        "{out}"
    );
    assert!(out.contains("  nvidia.com/gpu  8         8\n"), "{out}");
    assert!(
        out.contains("  cpu             2 (3%)    <unknown>\n"),
        "{out}"
    );
}

/// Repeated events fold as client-go's correlator counts them: preemptor-thrash's wl2 is
/// turned down, preempts and waits 26 times in 8m35s.
#[test]
fn repeated_events_fold_into_one_line_with_a_count() {
    let dir = scenario("kueue/preemptor-thrash");
    let out = ok(&["describe", "workload", "wl2", "-n", "ns1", &dir]);
    let events: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Events:"))
        .skip(3)
        .collect();
    assert_eq!(events.len(), 3, "{out}");
    for e in &events {
        assert!(e.contains(" 15s (x26 over 8m35s) "), "{e}");
    }
}

/// Positional paths work as for `run` and agree with `-f`; a positional that is no path is an
/// object name; `--at` takes days.
#[test]
fn views_take_positional_paths_and_days() {
    let dir = scenario("golden/first-fit-nodes");
    let positional = ok(&["get", "workload", "-n", "team", &dir, "--at", "5m"]);
    let flag = ok(&["get", "workload", "-n", "team", "-f", &dir, "--at", "5m"]);
    assert_eq!(positional, flag);
    let days = ok(&["get", "workload", "-n", "team", &dir, "--at", "1d"]);
    let hours = ok(&["get", "workload", "-n", "team", &dir, "--at", "24h"]);
    assert_eq!(days, hours);
    let mixed = ok(&["get", "workload", "-n", "team", &dir, "--at", "0.5d1h"]);
    let plain = ok(&["get", "workload", "-n", "team", &dir, "--at", "13h"]);
    assert_eq!(mixed, plain);
    assert_eq!(
        kueuesim(&["get", "workload", &dir, "--at", "1x"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn describe_all_namespaces_describes_each_object_of_the_name() {
    // The platform has a LocalQueue `default` in ml-team and in research.
    let platform = scenario("platform");
    let all = ok(&["describe", "localqueue", "default", "-A", &platform]);
    let namespaces: Vec<&str> = all
        .lines()
        .filter_map(|l| l.strip_prefix("Namespace:"))
        .map(str::trim)
        .collect();
    assert_eq!(namespaces, ["ml-team", "research"], "{all}");
    let one = ok(&[
        "describe",
        "localqueue",
        "default",
        "-n",
        "research",
        &platform,
    ]);
    assert!(all.ends_with(&one), "{all}\n---\n{one}");
    // A cluster-scoped object once, not once per namespace.
    let cq = ok(&["describe", "clusterqueue", "ml-team", "-A", &platform]);
    assert_eq!(
        cq.matches("\nName:").count() + usize::from(cq.starts_with("Name:")),
        1
    );
    let o = kueuesim(&["describe", "pod", "nope", "-A", &platform]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("pods \"nope\" not found"),
        "{}",
        stderr(&o)
    );
}

/// `describe workload` lists the provisioning admission check controller's events with the
/// scheduler's and the workload controller's: all three record on the Workload upstream.
#[test]
fn describe_workload_shows_the_provisioning_check_events() {
    let dir = scenario("autoscale/provisioning");
    let out = ok(&[
        "describe",
        "workload",
        "job-b-43aca",
        "-n",
        "team",
        &dir,
        "--at",
        "1m",
    ]);
    for line in [
        "Normal  ProvisioningRequestCreated  60s   kueue-provisioning-request-controller  Created ProvisioningRequest: \"job-b-43aca-capacity-1\"",
        "Normal  AdmissionCheckUpdated       60s   kueue-provisioning-request-controller  Admission check capacity updated state from Pending to Ready with message: Capacity is found in the cluster",
        "Normal  Admitted                    60s   kueue-workload-controller              Admitted by ClusterQueue cq, wait time since reservation was 0s",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
}
