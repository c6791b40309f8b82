//! A live cluster's dump as a new user would use it (scenarios/dump/gpu-cluster): it loads
//! without a word, and the seed guide's status commands read like the cluster's own.

use super::{kueuesim, scenario, stderr, stdout};

/// Runs `kueuesim ARGS` on the dump at one minute in, asserts success and returns stdout.
fn at_1m(args: &[&str]) -> String {
    let dir = scenario("dump/gpu-cluster");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-f", &dir, "--at", "1m"]);
    let o = kueuesim(&all);
    assert!(o.status.success(), "{all:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn the_dump_loads_without_warnings() {
    let o = kueuesim(&["validate", "--strict", &scenario("dump/gpu-cluster")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert!(stdout(&o).starts_with("ok: "), "{}", stdout(&o));
}

/// Cordoned and NotReady nodes show as kubectl shows them; the running job's pods, the
/// DaemonSets' and CoreDNS's pods are where the dump has them, under their own names.
#[test]
fn nodes_and_pods_read_as_the_cluster_has_them() {
    let nodes = at_1m(&["get", "node"]);
    let status: Vec<(&str, &str)> = nodes
        .lines()
        .skip(1)
        .map(|l| {
            let mut cells = l.split_whitespace();
            (cells.next().unwrap_or(""), cells.next().unwrap_or(""))
        })
        .collect();
    assert_eq!(
        status,
        [
            ("cpu-1", "Ready"),
            ("gpu-1", "Ready"),
            ("gpu-2", "Ready"),
            ("gpu-3", "Ready,SchedulingDisabled"),
            ("gpu-4", "NotReady"),
            ("gpu-5", "Ready")
        ]
    );
    let down = at_1m(&["get", "node", "gpu-4", "-o", "yaml"]);
    assert!(
        down.contains("    reason: NodeStatusUnknown\n    status: Unknown\n    type: Ready\n"),
        "{down}"
    );
    let pods = at_1m(&["get", "pod", "-A", "-o", "wide"]);
    for (ns, pod, node) in [
        ("team-a", "pretrain-17-x7k2p", "gpu-1"),
        ("team-a", "pretrain-17-b9q4m", "gpu-5"),
        ("team-a", "eval-9-x7k2p", "gpu-3"),
        ("kube-system", "kube-proxy-m8v6d", "gpu-4"),
        ("kube-system", "coredns-5d78c9869d-h5n3c", "cpu-1"),
    ] {
        assert!(
            pods.lines().any(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                c.len() > 7 && c[0] == ns && c[1] == pod && c[3] == "Running" && c[7] == node
            }),
            "{ns}/{pod} not running on {node}:\n{pods}"
        );
    }
    let proxy = at_1m(&["describe", "pod", "-n", "kube-system", "kube-proxy-m8v6d"]);
    assert!(
        proxy.contains("Controlled By:        DaemonSet/kube-proxy"),
        "{proxy}"
    );
    let dns = at_1m(&[
        "describe",
        "pod",
        "-n",
        "kube-system",
        "coredns-5d78c9869d-h5n3c",
    ]);
    assert!(
        dns.contains("Controlled By:        ReplicaSet/coredns-5d78c9869d"),
        "{dns}"
    );
}

/// The events since the dump are the run's: what was running before has no `Scheduled`
/// event now, the pending sweep's admission and binding do.
#[test]
fn events_are_those_of_the_run() {
    let events = at_1m(&["get", "events", "-A"]);
    assert!(!events.contains("pod/pretrain-17-"), "{events}");
    assert!(!events.contains("pod/kube-proxy-"), "{events}");
    assert!(
        events.contains("Admitted           workload/job-sweep-4-c03d1"),
        "{events}"
    );
    assert!(
        events.contains("Scheduled          pod/sweep-4-"),
        "{events}"
    );
}

/// `get pod -o yaml` shows the pod's own fields: its labels, its containers (and their
/// statuses) by their own names, its tolerations, its controller.
#[test]
fn get_pod_yaml_shows_the_pods_own_fields() {
    let y = at_1m(&[
        "get",
        "pod",
        "-n",
        "kube-system",
        "kube-proxy-m8v6d",
        "-o",
        "yaml",
    ]);
    for want in [
        "    k8s-app: kube-proxy\n",
        "    kind: DaemonSet\n    name: kube-proxy\n",
        "  containers:\n  - name: kube\n",
        "  tolerations:\n  - operator: Exists\n",
        "  containerStatuses:\n  - name: kube\n",
    ] {
        assert!(y.contains(want), "no {want:?} in\n{y}");
    }
    assert!(!y.contains("name: main"), "{y}");
}
