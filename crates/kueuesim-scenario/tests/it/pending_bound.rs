//! `pendingBoundBy`: what held each queue's pending workloads back, one small scenario per
//! constraint with its pending time computed by hand, and the platform's ml-team moving
//! from GPU quota to CPU and memory quota as its GPU quota grows.

use std::collections::BTreeMap;

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, result};

use crate::util::{load_dir, load_text};

/// Runs `text` (one file) to its horizon.
fn run(text: &str) -> SimulationResult {
    let loaded = load_text("t.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    let outcome = Simulation::new(&loaded.world).run();
    result(&loaded.world, &outcome)
}

/// ClusterQueue `name`'s `pendingBoundBy`.
fn cq_bound(r: &SimulationResult, name: &str) -> BTreeMap<String, f64> {
    r.summary
        .cluster_queues
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no ClusterQueue {name}"))
        .pending_bound_by
        .clone()
}

/// LocalQueue `ns/name`'s `pendingBoundBy`.
fn lq_bound(r: &SimulationResult, ns: &str, name: &str) -> BTreeMap<String, f64> {
    r.summary
        .local_queues
        .iter()
        .find(|l| l.namespace == ns && l.name == name)
        .unwrap_or_else(|| panic!("no LocalQueue {ns}/{name}"))
        .pending_bound_by
        .clone()
}

/// `got` has exactly the keys of `want`, each share within 1e-9 (whole milliseconds split).
fn assert_shares(got: &BTreeMap<String, f64>, want: &[(&str, f64)]) {
    let keys: Vec<&str> = got.keys().map(String::as_str).collect();
    let want_keys: Vec<&str> = want.iter().map(|w| w.0).collect();
    assert_eq!(keys, want_keys, "keys of {got:?}");
    for &(k, v) in want {
        assert!(
            (got[k] - v).abs() < 1e-9,
            "{k}: {} (want {v}) in {got:?}",
            got[k]
        );
    }
    let sum: f64 = got.values().sum();
    assert!((sum - 1.0).abs() < 1e-9, "shares sum to {sum}");
}

const HEAD: &str = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: bound}
spec: {until: 1h}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
";

/// A ClusterQueue `name` taking every namespace: `cohort` (or none), `strategy`, and its
/// quotas as `resource: [nominal, borrowingLimit, lendingLimit]` (`~`: unset).
fn cq(name: &str, cohort: Option<&str>, strategy: &str, quotas: &[(&str, [&str; 3])]) -> String {
    let cohort = cohort.map_or(String::new(), |c| format!("  cohortName: {c}\n"));
    let covered: Vec<&str> = quotas.iter().map(|q| q.0).collect();
    let mut resources = String::new();
    for (r, [nominal, bl, ll]) in quotas {
        resources.push_str(&format!(
            "      - name: {r}\n        nominalQuota: {nominal}\n"
        ));
        if *bl != "~" {
            resources.push_str(&format!("        borrowingLimit: {bl}\n"));
        }
        if *ll != "~" {
            resources.push_str(&format!("        lendingLimit: {ll}\n"));
        }
    }
    format!(
        "---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
{cohort}  namespaceSelector: {{}}
  queueingStrategy: {strategy}
  resourceGroups:
  - coveredResources: [{}]
    flavors:
    - name: default
      resources:
{resources}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: {name}}}
spec: {{clusterQueue: {name}}}
",
        covered.join(", ")
    )
}

/// A one-pod Job in LocalQueue `q` of namespace `ns`, arriving at `at`, running 100 s, with
/// `limits` (a flow mapping's body).
fn job(name: &str, ns: &str, at: &str, limits: &str) -> String {
    format!(
        "---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {ns}
  labels: {{kueue.x-k8s.io/queue-name: q}}
  annotations: {{kueuesim.io/arrival: {at}, kueuesim.io/duration: 100s}}
spec:
  template:
    spec:
      containers:
      - resources: {{limits: {{{limits}}}}}
"
    )
}

/// No cohort: a second 8-GPU job waits 100 s for the first one's quota (quota-only run).
/// With two resources short at once, each counts by how short it is relative to its quota:
/// c needs 2 of 8 cpu (a holds 8) and 8 of 8 GPUs (a holds 6): 2/8 against 6/8.
#[test]
fn a_clusterqueue_without_a_cohort_is_bound_by_its_own_quota() {
    let text = [
        HEAD.to_string(),
        cq(
            "gpus",
            None,
            "BestEffortFIFO",
            &[("nvidia.com/gpu", ["8", "~", "~"])],
        ),
        job("a", "gpus", "0s", "nvidia.com/gpu: 8"),
        job("b", "gpus", "0s", "nvidia.com/gpu: 8"),
        cq(
            "two",
            None,
            "BestEffortFIFO",
            &[
                ("cpu", ["8", "~", "~"]),
                ("nvidia.com/gpu", ["8", "~", "~"]),
            ],
        ),
        job("a", "two", "0s", "cpu: 8, nvidia.com/gpu: 6"),
        job("c", "two", "0s", "cpu: 2, nvidia.com/gpu: 8"),
    ]
    .concat();
    let r = run(&text);
    assert_shares(&cq_bound(&r, "gpus"), &[("quota:nvidia.com/gpu", 1.0)]);
    assert_shares(&lq_bound(&r, "gpus", "q"), &[("quota:nvidia.com/gpu", 1.0)]);
    assert_shares(
        &cq_bound(&r, "two"),
        &[("quota:cpu", 0.25), ("quota:nvidia.com/gpu", 0.75)],
    );
}

/// Cohort pool: cq-a 2 cpu with borrowingLimit 1, cq-b 6 cpu. a2 needs 2 cpu while a1 holds
/// cq-a's 2: the pool has 6 free, the borrowing limit lets cq-a take 1 (available 1 < 2),
/// so it waits for a1 (done at 100 s; the cohort's inadmissible workloads return 1 s later,
/// `requeueBatchPeriod`), bound by `borrowingLimit:cpu`.
#[test]
fn a_borrowing_limit_that_stops_a_workload_binds_it() {
    let text = [
        HEAD.to_string(),
        cq(
            "cq-a",
            Some("pool"),
            "BestEffortFIFO",
            &[("cpu", ["2", "1", "~"])],
        ),
        cq(
            "cq-b",
            Some("pool"),
            "BestEffortFIFO",
            &[("cpu", ["6", "~", "~"])],
        ),
        job("a1", "cq-a", "0s", "cpu: 2"),
        job("a2", "cq-a", "0s", "cpu: 2"),
    ]
    .concat();
    let r = run(&text);
    assert_shares(&cq_bound(&r, "cq-a"), &[("borrowingLimit:cpu", 1.0)]);
    assert!(cq_bound(&r, "cq-b").is_empty());
    let a2 = r.workloads.iter().find(|w| w.name.contains("a2")).unwrap();
    assert_eq!(a2.admitted_at, Some(101.0));
}

/// Cohort pool: cq-a and cq-b 4 cpu each. b1 (8 cpu) borrows cq-a's 4 at 0; a1 (2 cpu) at
/// 10 s fits cq-a's own nominal quota (4 unused) but the cohort is used up, and cq-a does not
/// reclaim (reclaimWithinCohort: Never): bound by `cohort:cpu` until b1 is done (100 s, and
/// the 1 s `requeueBatchPeriod`).
#[test]
fn a_cohort_used_up_by_a_borrower_binds_the_lender() {
    let text = [
        HEAD.to_string(),
        cq(
            "cq-a",
            Some("pool"),
            "BestEffortFIFO",
            &[("cpu", ["4", "~", "~"])],
        ),
        cq(
            "cq-b",
            Some("pool"),
            "BestEffortFIFO",
            &[("cpu", ["4", "~", "~"])],
        ),
        job("b1", "cq-b", "0s", "cpu: 8"),
        job("a1", "cq-a", "10s", "cpu: 2"),
    ]
    .concat();
    let r = run(&text);
    assert_shares(&cq_bound(&r, "cq-a"), &[("cohort:cpu", 1.0)]);
    let a1 = r.workloads.iter().find(|w| w.name.contains("a1")).unwrap();
    assert_eq!(a1.admitted_at, Some(101.0));
}

/// Cohort pool: cq-x 2 cpu, cq-y 10 cpu lending 2 (8 private, unused). x1 needs 6: the
/// pool holds 4 at most ("insufficient quota … maximum capacity (4)"), the 8 cq-y keeps back
/// would hold it: bound by `lendingLimit:cpu` until the horizon.
#[test]
fn a_lending_limit_that_keeps_idle_quota_back_binds_the_borrower() {
    let text = [
        HEAD.to_string(),
        cq(
            "cq-x",
            Some("pool"),
            "BestEffortFIFO",
            &[("cpu", ["2", "~", "~"])],
        ),
        cq(
            "cq-y",
            Some("pool"),
            "BestEffortFIFO",
            &[("cpu", ["10", "~", "2"])],
        ),
        job("x1", "cq-x", "0s", "cpu: 6"),
    ]
    .concat();
    let r = run(&text);
    assert_shares(&cq_bound(&r, "cq-x"), &[("lendingLimit:cpu", 1.0)]);
}

/// StrictFIFO, 8 GPUs: w1 runs 0–100 s; w2 (8 GPUs, at 1 s) heads the queue and waits for
/// quota until 100 s (99 s); w3 (at 2 s) is behind it until then (98 s, `strictFIFO`), then
/// heads the queue and waits for w2's quota until 200 s (100 s).
#[test]
fn a_workload_behind_a_blocked_strict_fifo_head_is_bound_by_strict_fifo() {
    let text = [
        HEAD.to_string(),
        cq(
            "fifo",
            None,
            "StrictFIFO",
            &[("nvidia.com/gpu", ["8", "~", "~"])],
        ),
        job("w1", "fifo", "0s", "nvidia.com/gpu: 8"),
        job("w2", "fifo", "1s", "nvidia.com/gpu: 8"),
        job("w3", "fifo", "2s", "nvidia.com/gpu: 8"),
    ]
    .concat();
    let r = run(&text);
    let total = 99.0 + 98.0 + 100.0;
    assert_shares(
        &cq_bound(&r, "fifo"),
        &[
            ("quota:nvidia.com/gpu", 199.0 / total),
            ("strictFIFO", 98.0 / total),
        ],
    );
}

/// Two spines of two 2-cpu nodes; a bare Pod runs on one node of each until 600 s. A
/// Kueue-admitted Volcano gang of 2 × 2 cpu with a hard tier-1 constraint finds two free
/// nodes, but not in one spine: `topology` for 600 s. With a third bare Pod only one node is
/// free in all: `nodes`.
#[test]
fn a_hard_topology_gang_on_a_fragmented_cluster_is_bound_by_topology() {
    let node = |name: &str| {
        format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus:\n  allocatable: {{cpu: \"2\", memory: 4Gi, pods: \"110\"}}\n"
        )
    };
    let spine = |name: &str, a: &str, b: &str| {
        format!(
            "---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {{name: {name}}}
spec:
  tier: 1
  members:
  - {{type: Node, selector: {{exactMatch: {{name: {a}}}}}}}
  - {{type: Node, selector: {{exactMatch: {{name: {b}}}}}}}
"
        )
    };
    let busy = |name: &str, on: &str| {
        format!(
            "---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: other
  annotations: {{kueuesim.io/duration: 600s}}
spec:
  nodeName: {on}
  containers:
  - name: c
    resources: {{requests: {{cpu: \"2\"}}}}
"
        )
    };
    let gang = "---
apiVersion: batch/v1
kind: Job
metadata:
  name: gang
  namespace: vc
  labels: {kueue.x-k8s.io/queue-name: q}
  annotations: {kueuesim.io/duration: 100s, scheduling.volcano.sh/group-min-member: \"2\"}
spec:
  parallelism: 2
  template:
    metadata:
      annotations: {volcano.sh/network-topology-mode: hard, volcano.sh/network-topology-highest-tier: \"1\"}
    spec:
      schedulerName: volcano
      containers:
      - resources: {requests: {cpu: \"2\"}}
";
    let cluster = [
        HEAD.to_string(),
        node("s0-n1"),
        node("s0-n2"),
        node("s1-n3"),
        node("s1-n4"),
        spine("s0", "s0-n1", "s0-n2"),
        spine("s1", "s1-n3", "s1-n4"),
        "---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: top}
spec:
  tier: 2
  members:
  - {type: HyperNode, selector: {exactMatch: {name: s0}}}
  - {type: HyperNode, selector: {exactMatch: {name: s1}}}
"
        .to_string(),
        cq("vc", None, "BestEffortFIFO", &[("cpu", ["8", "~", "~"])]),
        busy("busy-0", "s0-n1"),
        busy("busy-1", "s1-n3"),
        gang.to_string(),
    ]
    .concat();
    let r = run(&cluster);
    let g = r
        .workloads
        .iter()
        .find(|w| w.name.contains("gang"))
        .unwrap();
    assert_eq!((g.admitted_at, g.running_at), (Some(0.0), Some(600.0)));
    assert_shares(&cq_bound(&r, "vc"), &[("topology", 1.0)]);
    let full = [cluster, busy("busy-2", "s0-n2")].concat();
    assert_shares(&cq_bound(&run(&full), "vc"), &[("nodes", 1.0)]);
}

/// `scenarios/kueue/pods-ready-backoff`: the gang is admitted at 1 s and never placed (the
/// node is taken): `nodes` from each admission to its PodsReady timeout (4 × 600 s, the
/// first from 1 s), `podsReady` from each eviction to the end of its back-off (60 + 120 +
/// 240 s); deactivated at 2821 s, it waits no more.
#[test]
fn a_pods_ready_back_off_is_bound_by_pods_ready() {
    let r = crate::util::run_dir("kueue/pods-ready-backoff");
    let total = 2400.0 + 420.0;
    assert_shares(
        &cq_bound(&r, "cq"),
        &[("nodes", 2400.0 / total), ("podsReady", 420.0 / total)],
    );
}

/// The platform of `scenarios/platform` (ml-team without a cohort, 128 GPUs, 1792 cpu,
/// 32000Gi; its jobs' pods ask 96 cpu, 1600Gi and 8 GPUs, so cpu caps it at 149 GPUs and
/// memory at 160): at 128 GPUs its pending time is mostly GPU quota; at 192 it is cpu and
/// memory quota, the GPU quota all but gone.
#[test]
fn ml_team_moves_from_gpu_quota_to_cpu_and_memory_quota_as_its_gpus_grow() {
    let at = |gpus: i64| {
        let mut loaded = load_dir("platform");
        let world = &mut loaded.world;
        let ml = world
            .cluster_queues
            .iter_mut()
            .find(|c| c.name == "ml-team")
            .unwrap();
        let gpu = world.resources.lookup("nvidia.com/gpu").unwrap();
        for rq in ml.resource_groups[0].flavors[0].resources.iter_mut() {
            if rq.resource == gpu {
                rq.nominal = gpus;
            }
        }
        let outcome = Simulation::new(&loaded.world).lean().run();
        cq_bound(&result(&loaded.world, &outcome), "ml-team")
    };
    let share = |m: &BTreeMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
    let low = at(128);
    assert!(share(&low, "quota:nvidia.com/gpu") > 0.5, "{low:?}");
    let high = at(192);
    assert!(share(&high, "quota:nvidia.com/gpu") < 0.05, "{high:?}");
    assert!(
        share(&high, "quota:cpu") + share(&high, "quota:memory") > 0.8,
        "{high:?}"
    );
    assert!(share(&high, "quota:cpu") > share(&high, "quota:memory"));
}

/// The keys that name no limit, on scenarios of their own: a stopped ClusterQueue
/// (`stopped`), a head waiting for its victims to terminate (`preempting`, beside the quota
/// it preempts for), a namespace the selector does not match and a resource the ClusterQueue
/// does not cover (`misconfigured`).
#[test]
fn stopped_preempting_and_misconfigured_queues_say_so() {
    let keys = |dir: &str, cq: &str| -> Vec<String> {
        cq_bound(&crate::util::run_dir(dir), cq)
            .into_keys()
            .collect()
    };
    assert_eq!(keys("kueue/stop-policy", "held"), ["stopped"]);
    assert_eq!(keys("kueue/stop-policy", "running"), ["stopped"]);
    assert_eq!(
        keys("kueue/within-cq-preemption", "lower"),
        ["preempting", "quota:cpu"]
    );
    assert_eq!(
        keys("cases/S-11-namespace-selector-mismatch", "eng-alpha"),
        ["misconfigured"]
    );
    assert_eq!(
        keys("kueue/resource-unavailable-reason", "cq"),
        ["misconfigured"]
    );
}
