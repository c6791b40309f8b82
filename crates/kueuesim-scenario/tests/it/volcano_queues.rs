//! Volcano's own queues with a volcano-scheduler.conf: Queue objects and the conf's actions
//! and plugins as read (misspellings are errors naming the closest), and cases transcribed
//! from upstream's unit tests (volcano ed72c7c8: `proportion_test.go`
//! TestEnqueueAndAllocable and TestJobEnqueuedOnOtherPluginsReject, `enqueue_test.go`
//! TestEnqueue, `overcommit_test.go` TestOvercommitPlugin, `capacity_test.go`,
//! `allocate_test.go`'s queue cases, the allocate queue order): where each pod binds,
//! or that its PodGroup stays Pending with the event upstream records. The preempt and
//! reclaim actions' cases are `volcano_evictions.rs`.

use kueuesim_engine::Simulation;
use kueuesim_report::output::{SimulationResult, WorkloadOut, result};

use crate::util::{load_error, load_text, run_dir, wl};
use crate::volcano_evictions::pods;

/// Loads and runs `text` as `t.yaml`.
pub(crate) fn run_text(text: &str) -> SimulationResult {
    let loaded = load_text("t.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    result(&loaded.world, &Simulation::new(&loaded.world).run())
}

/// The nodes of every pod of `w`.
fn nodes(w: &WorkloadOut) -> Vec<&str> {
    w.pod_sets
        .iter()
        .flat_map(|p| p.nodes.iter().map(String::as_str))
        .collect()
}

/// Volcano's events on `w`: (type, reason, message).
pub(crate) fn volcano_events(w: &WorkloadOut) -> Vec<(&str, &str, &str)> {
    w.events
        .iter()
        .filter(|e| e.source == "volcano")
        .map(|e| (e.kind, e.reason, e.message.as_str()))
        .collect()
}

/// The gang Warning upstream's cache records at session close for a PodGroup still Pending
/// (`RecordJobStatusEvent`): none of its pods was tried, so no origin reason. The PodGroups
/// of these tests have minMember 1; the histogram is sorted as strings.
fn held_warning(w: &WorkloadOut) -> String {
    let total: usize = w.pod_sets.iter().map(|p| p.count as usize).sum();
    let pending = total - nodes(w).len();
    let hist = if pending < 2 {
        format!("{pending} Pending, 1 minAvailable")
    } else {
        format!("1 minAvailable, {pending} Pending")
    };
    format!(
        "{pending}/{total} tasks in gang unschedulable: pod group is not ready, {hist}; Pending: {pending} Unschedulable"
    )
}

const SIM: &str = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: t}
spec:
  until: 10m
  volcano:
    configuration: |
      actions: \"ACTIONS\"
      tiers:
      - plugins:
        PLUGINS
";

/// A Simulation whose conf lists `actions` and the plugins `plugins` (one tier).
fn sim(actions: &str, plugins: &[&str]) -> String {
    let list: Vec<String> = plugins.iter().map(|p| format!("- name: {p}")).collect();
    SIM.replace("ACTIONS", actions)
        .replace("PLUGINS", &list.join("\n        "))
}

/// A node of `cpu` and `memory`.
fn node(name: &str, cpu: &str, memory: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus:\n  allocatable: {{cpu: '{cpu}', memory: {memory}, pods: '10'}}\n"
    )
}

/// A PodGroup of minMember 1 in `queue`, with `min` as its minResources (or none), and its
/// one pending pod of `cpu`/`memory`.
fn gang(name: &str, queue: &str, min: Option<&str>, cpu: &str, memory: &str) -> String {
    let min = min.map_or(String::new(), |m| format!("\n  minResources: {m}"));
    format!(
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ns1}}\nspec:\n  minMember: 1\n  queue: {queue}{min}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}-p\n  namespace: ns1\n  annotations: {{kueuesim.io/duration: 1h, scheduling.k8s.io/group-name: {name}}}\nspec:\n  schedulerName: volcano\n  containers:\n  - resources:\n      requests: {{cpu: '{cpu}', memory: {memory}}}\n"
    )
}

#[test]
fn proportion_cases_0_and_1_bind_within_the_deserved_share() {
    // Case 0: pod3 asks only for cpu, within q1's deserved 2 cpu; case 1: pod4 asks only
    // for memory, within q2's deserved 2G.
    let r = run_dir("volcano/proportion");
    assert_eq!(nodes(wl(&r, "ns1", "pg3")), ["n1"]);
    assert_eq!(nodes(wl(&r, "ns1", "pg4")), ["n2"]);
    assert_eq!(wl(&r, "ns1", "pg3").state, "Running");
    // Let in at once: no enqueue event, no inqueueAt.
    assert!(volcano_events(wl(&r, "ns1", "pg3")).is_empty());
    assert_eq!(wl(&r, "ns1", "pg3").inqueue_at, None);
    insta::assert_snapshot!(kueuesim_report::output::to_json(&r));
}

#[test]
fn proportion_case_2_over_capability_is_not_enqueued() {
    let r = run_dir("volcano/enqueue-over-capability");
    let pg5 = wl(&r, "ns1", "pg5");
    assert!(nodes(pg5).is_empty());
    assert_eq!(pg5.state, "Pending");
    assert_eq!(
        volcano_events(pg5),
        [
            (
                "Normal",
                "Unschedulable",
                "queue resource quota insufficient: insufficient memory"
            ),
            ("Warning", "Unschedulable", &*held_warning(pg5)),
        ]
    );
    assert_eq!(pg5.inqueue_at, None);
    insta::assert_snapshot!(kueuesim_report::output::to_json(&r));
}

#[test]
fn proportion_case_4_closed_queue_is_not_enqueued() {
    let r = run_dir("volcano/closed-queue");
    let pg6 = wl(&r, "ns1", "pg6");
    assert!(nodes(pg6).is_empty());
    // Upstream only logs the closed queue; its cache's gang Warning follows at session close.
    assert_eq!(
        volcano_events(pg6),
        [("Warning", "Unschedulable", &*held_warning(pg6))]
    );
}

#[test]
fn enqueue_rejects_min_resources_above_the_queue_capability() {
    // enqueue_test.go "pggroup cannot enqueue because queue resources are less than
    // podgroup MinResources": queue c1 (capability 1 cpu/1G), pg1 minResources 8 cpu/8G.
    let text = format!(
        "{}{}---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: c1}}\nspec: {{weight: 1, capability: {{cpu: '1', memory: 1G}}}}\n{}",
        sim("enqueue, allocate", &["drf", "proportion", "sla", "gang"]),
        node("n1", "16", "16G"),
        gang("pg1", "c1", Some("{cpu: '8', memory: 8G}"), "1", "1G"),
    );
    let r = run_text(&text);
    let pg1 = wl(&r, "ns1", "pg1");
    assert!(nodes(pg1).is_empty());
    assert_eq!(
        volcano_events(pg1),
        [
            (
                "Normal",
                "Unschedulable",
                "queue resource quota insufficient: insufficient cpu, insufficient memory"
            ),
            ("Warning", "Unschedulable", &*held_warning(pg1)),
        ]
    );
}

#[test]
fn enqueue_lets_in_pod_groups_without_min_resources() {
    // enqueue_test.go "when podgroup status is pending": pg1 (3 cpu) in c1, pg2 (1 cpu) in
    // c2, both without minResources, each queue capped at 4 cpu/4G: both are let in.
    let queues = "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: c1}\nspec: {weight: 1, capability: {cpu: '4', memory: 4G}}\n---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: c2}\nspec: {weight: 1, capability: {cpu: '4', memory: 4G}}\n";
    let text = format!(
        "{}{}{queues}{}{}",
        sim("enqueue, allocate", &["drf", "proportion", "sla", "gang"]),
        node("n1", "8", "8G"),
        gang("pg1", "c1", None, "3", "1G"),
        gang("pg2", "c2", None, "1", "1G"),
    );
    let r = run_text(&text);
    assert_eq!(nodes(wl(&r, "ns1", "pg1")), ["n1"]);
    assert_eq!(nodes(wl(&r, "ns1", "pg2")), ["n1"]);
}

#[test]
fn overcommit_rejects_min_resources_above_idle_times_the_factor() {
    // overcommit_test.go "when the required resources of pg are too large": nodes 2 cpu/4Gi
    // and 4 cpu/16Gi, pg2 minResources 20 cpu/20G, factor 1.2: 7.2 cpu idle.
    let text = format!(
        "{}{}{}{}",
        sim("enqueue, allocate", &["overcommit", "gang"]),
        node("n1", "2", "4Gi"),
        node("n2", "4", "16Gi"),
        gang(
            "pg2",
            "default",
            Some("{cpu: 20000m, memory: 20G}"),
            "1",
            "1G"
        ),
    );
    let r = run_text(&text);
    let pg2 = wl(&r, "ns1", "pg2");
    assert!(nodes(pg2).is_empty());
    assert_eq!(
        volcano_events(pg2),
        [
            (
                "Normal",
                "Unschedulable",
                "resource in cluster is overused: overused cpu"
            ),
            ("Warning", "Unschedulable", &*held_warning(pg2)),
        ]
    );
    // "overCommitFactor is more than 0": 2 cpu/2G fits.
    let text = text.replace("{cpu: 20000m, memory: 20G}", "{cpu: 2000m, memory: 2G}");
    assert_eq!(nodes(wl(&run_text(&text), "ns1", "pg2")).len(), 1);
    // "overCommitFactor is less than 0" (factor 0.8): taken as the default 1.2, as
    // upstream's plugin does; 2 cpu/2G fits either way.
    let below_one = text.replace(
        "- name: overcommit",
        "- name: overcommit\n          arguments: {overcommit-factor: 0.8}",
    );
    assert!(below_one.contains("overcommit-factor: 0.8"), "{below_one}");
    assert_eq!(nodes(wl(&run_text(&below_one), "ns1", "pg2")).len(), 1);
}

#[test]
fn overcommit_lets_in_a_pod_group_without_min_resources() {
    // overcommit_test.go "when pg does not fill MinResources": pg3 has no minResources, its
    // queue c1 a capability of 200m/0.5G that overcommit does not read: let in at once.
    let text = format!(
        "{}{}{}{}{}",
        sim("enqueue, allocate", &["overcommit", "gang"]),
        node("n1", "2", "4Gi"),
        node("n2", "4", "16Gi"),
        queue(
            "c1",
            "weight: 1, capability: {cpu: 200m, memory: 0.5G}",
            None
        ),
        gang("pg3", "c1", None, "100m", "100M"),
    );
    let r = run_text(&text);
    let pg3 = wl(&r, "ns1", "pg3");
    assert_eq!(nodes(pg3).len(), 1);
    assert!(volcano_events(pg3).is_empty(), "{:?}", volcano_events(pg3));
    assert_eq!(pg3.inqueue_at, None);
}

#[test]
fn without_enqueue_allocate_lets_the_pod_group_in_itself() {
    // Only `allocate`: no enqueue vote, so overcommit's limit does not apply (upstream's
    // allocate moves a Pending PodGroup to Inqueue itself).
    let text = format!(
        "{}{}{}",
        sim("allocate", &["overcommit", "gang"]),
        node("n1", "2", "4Gi"),
        gang(
            "pg2",
            "default",
            Some("{cpu: 20000m, memory: 20G}"),
            "1",
            "1G"
        ),
    );
    let r = run_text(&text);
    assert_eq!(nodes(wl(&r, "ns1", "pg2")), ["n1"]);
}

#[test]
fn a_misspelt_queue_field_names_the_closest() {
    let e = load_error(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec:\n  weight: 1\n  capabilty: {cpu: '2'}\n",
    );
    assert!(e.starts_with("t.yaml:6:3: "), "{e}");
    assert!(e.contains("capabilty"), "{e}");
    assert!(e.contains("(closest: \"capability\")"), "{e}");
}

#[test]
fn a_bad_queue_quantity_and_state_are_errors_at_their_place() {
    let e = load_error(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec:\n  deserved: {cpu: lots}\n",
    );
    assert!(e.starts_with("t.yaml:5:"), "{e}");
    let e = load_error(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nstatus: {state: Opened}\n",
    );
    assert!(e.starts_with("t.yaml:4:"), "{e}");
    assert!(e.contains("expected Open, Closed"), "{e}");
    let e = load_error(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: {weight: 70000}\n",
    );
    assert!(e.contains("expected an integer from 1 to 65535"), "{e}");
}

#[test]
fn a_missing_parent_or_queue_names_the_closest() {
    let e = load_error(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: research}\n---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: {parent: reserch}\n",
    );
    assert!(e.contains("(closest: \"research\")"), "{e}");
    let text = format!(
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: research}}\n{}",
        gang("pg1", "reserch", None, "1", "1G")
    );
    let e = load_error(&text);
    assert!(e.starts_with("t.yaml:"), "{e}");
    assert!(
        e.contains("queue \"reserch\" is not a Volcano Queue"),
        "{e}"
    );
    assert!(e.contains("(closest: \"research\")"), "{e}");
}

#[test]
fn unknown_actions_and_plugins_name_the_closest() {
    let e = load_error(&sim("enqeue, allocate", &["gang"]));
    assert!(e.starts_with("t.yaml:8:"), "{e}");
    assert!(e.contains("action \"enqeue\""), "{e}");
    assert!(e.contains("(closest: \"enqueue\")"), "{e}");
    let e = load_error(&sim("enqueue, allocate", &["proportoin"]));
    assert!(e.contains("plugin \"proportoin\""), "{e}");
    assert!(e.contains("(closest: \"proportion\")"), "{e}");
}

/// Confs upstream takes without a word but that cannot mean what they say: no `actions`
/// (upstream keeps its whole default conf, these tiers ignored) and no `allocate` (nothing
/// with requests is ever placed). Both are load errors at the conf.
#[test]
fn a_conf_without_actions_or_without_allocate_is_refused() {
    let e = load_error(
        &sim("enqueue, allocate", &["gang"]).replace("      actions: \"enqueue, allocate\"\n", ""),
    );
    assert!(e.starts_with("t.yaml:"), "{e}");
    assert!(e.contains("has no `actions`"), "{e}");
    let e = load_error(&sim("enqueue, backfill", &["gang"]));
    assert!(e.starts_with("t.yaml:"), "{e}");
    assert!(e.contains("lack \"allocate\""), "{e}");
}

#[test]
fn kueue_admits_first_then_the_volcano_queue_holds_the_job() {
    // Both layers: a Kueue-admitted Job (queue-name label, ClusterQueue with room) whose
    // Volcano queue is capped below its pods stays Pending in Volcano's enqueue.
    let text = format!(
        "{}{}{}---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: small}}\nspec: {{weight: 1, capability: {{cpu: 500m}}}}\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: ns1\n  labels: {{kueue.x-k8s.io/queue-name: lq}}\n  annotations: {{kueuesim.io/duration: 1h, scheduling.volcano.sh/queue-name: small}}\nspec:\n  parallelism: 2\n  completions: 2\n  template:\n    spec:\n      schedulerName: volcano\n      containers:\n      - resources:\n          requests: {{cpu: '1'}}\n",
        sim("enqueue, allocate", &["gang", "proportion"]),
        node("n1", "8", "8G"),
        KUEUE,
    );
    let r = run_text(&text);
    let j = wl(&r, "ns1", "j");
    assert!(j.admitted_at.is_some(), "Kueue admits it");
    assert!(nodes(j).is_empty());
    assert_eq!(
        volcano_events(j),
        [
            (
                "Normal",
                "Unschedulable",
                "queue resource quota insufficient: insufficient cpu"
            ),
            ("Warning", "Unschedulable", &*held_warning(j)),
        ]
    );
}

const KUEUE: &str = "---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: '8'}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: ns1}
spec: {clusterQueue: cq}
";

#[test]
fn weighted_queues_leave_a_node_idle_while_shares_do_not_fit_whole_node_gangs() {
    let r = run_dir("volcano/weighted-queues");
    let start = |name: &str| wl(&r, "team", name).running_at;
    let h = 3600.0;
    assert_eq!(start("research-0"), Some(0.0));
    assert_eq!(start("research-1"), Some(0.0));
    assert_eq!(start("research-2"), Some(h));
    assert_eq!(start("research-3"), Some(2.0 * h));
    assert_eq!(start("dev-0"), Some(2.0 * h));
    assert_eq!(start("dev-1"), Some(3.0 * h));
    assert_eq!(start("dev-2"), Some(3.0 * h));
    assert_eq!(start("dev-3"), Some(4.0 * h));
    // research-3 is let in at 1h, but waits for its share; dev-0 is let in at 2h.
    assert_eq!(wl(&r, "team", "research-3").inqueue_at, Some(h));
    assert_eq!(wl(&r, "team", "dev-0").inqueue_at, Some(2.0 * h));
    assert_eq!(
        volcano_events(wl(&r, "team", "dev-0"))[0],
        (
            "Normal",
            "Unschedulable",
            "resource in cluster is overused: overused nvidia.com/gpu"
        )
    );
    // Eight jobs × 8 GPUs × 1 h; one node idles from 1h to 2h and from 4h to 5h.
    assert_eq!(r.summary.gpu.busy_gpu_seconds, 8.0 * 8.0 * h);
    insta::assert_snapshot!(kueuesim_report::output::to_json(&r));
}

/// proportion_test.go TestJobEnqueuedOnOtherPluginsReject ("phantom inqueue reservation:
/// rejecter blocks pgA, pgB must still be admitted"), with overcommit in the test-only
/// rejecter's place in the same tier: proportion counts a PodGroup's minResources as its
/// queue's inqueue only once every plugin has let it in (`JobEnqueued`), so pg-a
/// (upstream's pgA), which proportion permits and overcommit vetoes, takes none of q1's
/// 1 cpu and pg-b is let in. n1 has 4 cpu and 10G, of which q2's pod uses 8G: overcommit's
/// memory left is 12G - 8G = 4G, under pg-a's 5G; q1's real capability (10G) holds it.
#[test]
fn proportion_counts_a_pod_group_inqueue_only_once_every_plugin_lets_it_in() {
    let text = sim("enqueue, allocate", &["gang", "proportion", "overcommit"])
        + &node("n1", "4", "10G")
        + &queue("q1", "weight: 1, capability: {cpu: '1', memory: 10G}", None)
        + &queue("q2", "weight: 1", None)
        + &running("pg-q2", "q2", "{cpu: 100m, memory: 8G}", "100m", "8G", "n1")
        + &gang("pg-a", "q1", Some("{cpu: '1', memory: 5G}"), "1", "1G")
        + &gang("pg-b", "q1", Some("{cpu: '1', memory: 1G}"), "1", "1G");
    let r = run_text(&text);
    let pga = wl(&r, "ns1", "pg-a");
    assert!(nodes(pga).is_empty());
    assert_eq!(
        volcano_events(pga)[0],
        (
            "Normal",
            "Unschedulable",
            "resource in cluster is overused: overused memory"
        )
    );
    assert_eq!(nodes(wl(&r, "ns1", "pg-b")), ["n1"]);
    // Guard: without pg-a's veto (minResources within overcommit's 4G) proportion lets pg-a
    // in first, and q1's 1 cpu is then taken: pg-b waits on proportion.
    let fits = text.replace("{cpu: '1', memory: 5G}", "{cpu: '1', memory: 2G}");
    let r = run_text(&fits);
    assert_eq!(nodes(wl(&r, "ns1", "pg-a")), ["n1"]);
    let pgb = wl(&r, "ns1", "pg-b");
    assert!(nodes(pgb).is_empty());
    assert_eq!(
        volcano_events(pgb)[0],
        (
            "Normal",
            "Unschedulable",
            "queue resource quota insufficient: insufficient cpu"
        )
    );
}

#[test]
fn proportion_case_3_over_deserved_is_not_allocated_with_only_allocatable_on() {
    // TestEnqueueAndAllocable case 3 ("exceed deserved, can not allocate"): the plugin with
    // `enabledAllocatable: true`, `enabledOverused: false`, `enableJobEnqueued: false`:
    // nothing votes, so pg5 is let in; q1's deserved is 2 cpu/2G and 1 cpu/2G + 1 cpu/1G
    // exceeds it in memory: it is not allocated.
    let text = std::fs::read_to_string(
        crate::util::scenarios_dir().join("volcano/enqueue-over-capability/scenario.yaml"),
    )
    .expect("readable")
    .replace(
        "        - name: proportion\n",
        "        - name: proportion\n          enabledAllocatable: true\n          enabledOverused: false\n          enableJobEnqueued: false\n",
    );
    let r = run_text(&text);
    let pg5 = wl(&r, "ns1", "pg5");
    assert!(nodes(pg5).is_empty());
    assert_eq!(
        volcano_events(pg5),
        [(
            "Warning",
            "Unschedulable",
            "1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; Pending: 1 Unschedulable"
        )]
    );
    // With the plugin's allocatable check off as well, nothing holds it back but the nodes
    // (n1 has 1 cpu and no memory left, n2 no cpu): the gang's own fit error.
    let open = text.replace("enabledAllocatable: true", "enabledAllocatable: false");
    let r = run_text(&open);
    let events = volcano_events(wl(&r, "ns1", "pg5"));
    assert!(events[0].2.contains("Origin reason is"), "{events:?}");
}

/// Whole GPUs in `dense` against the 0.1 `minResource`: upstream counts GPUs in milli
/// (`NewResource`, `MilliValue`) and `LessEqualWithDimensionAndResourcesName` has no
/// tolerance. Queues of weight 79 and 121 share 10 GPUs, so qa deserves 3.95 GPUs
/// (3950 milli): a fourth one-GPU job (4000 > 3950) is refused.
#[test]
fn proportion_counts_gpus_in_milli_units_without_tolerance() {
    let mut text = sim("enqueue, allocate", &["gang", "proportion"])
        + "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: '64', memory: 256Gi, pods: '110', nvidia.com/gpu: '10'}\n"
        + &queue("qa", "weight: 79", None)
        + &queue("qb", "weight: 121", None)
        + &queue("qc", "weight: 1", None)
        // Holds every GPU for a minute, so that the jobs below are all in the session that
        // places them (qc's job is done by then and counts for nothing).
        + &pod_group("blocker", "qc", 1)
        + &gpu_pod("blocker-p", "blocker", "100m", "100Mi", "10")
            .replace("duration: 1h", "duration: 1m");
    for (q, jobs) in [("qa", 10), ("qb", 7)] {
        for i in 0..jobs {
            let pg = format!("{q}-{i}");
            text += &pod_group(&pg, q, 1);
            text += &gpu_pod(&format!("{pg}-p"), &pg, "100m", "100Mi", "1");
        }
    }
    let r = run_text(&text);
    let bound = |q: &str, jobs: usize| {
        (0..jobs)
            .filter(|i| !nodes(wl(&r, "ns1", &format!("{q}-{i}"))).is_empty())
            .count()
    };
    // qb deserves 6.05 GPUs: 6 run in both counts.
    assert_eq!((bound("qa", 10), bound("qb", 7)), (3, 6));
}

/// Allocate skips a task its queue refuses and tries the rest (`allocateResourcesForTasks`:
/// `if !ssn.Allocatable(queue, task) { continue }`), then JobReady decides: with qa's
/// GPU capability 0 the worker is refused, the cpu-only launcher is enough for minMember 1.
#[test]
fn allocate_skips_a_refused_task_and_binds_the_rest() {
    let text = sim("enqueue, allocate", &["gang", "proportion"])
        + "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: '64', memory: 256Gi, pods: '110', nvidia.com/gpu: '8'}\n"
        + &queue("qa", "weight: 1, capability: {nvidia.com/gpu: '0'}", None)
        + &pod_group("job", "qa", 1)
        // Named so that the worker comes first, as the task the queue meets first.
        + &gpu_pod("a-worker", "job", "1", "1Gi", "1")
        + &gpu_pod("b-launcher", "job", "1", "1Gi", "0").replace(", nvidia.com/gpu: '0'", "");
    let r = run_text(&text);
    let job = wl(&r, "ns1", "job");
    // (asks for a GPU, pods bound) by pod set: the launcher only.
    let bound: Vec<(bool, usize)> = job
        .pod_sets
        .iter()
        .map(|p| (p.requests.contains_key("nvidia.com/gpu"), p.nodes.len()))
        .collect();
    assert_eq!(bound, [(true, 0), (false, 1)]);
    assert!(
        volcano_events(job).iter().all(|e| e.0 != "Warning"),
        "{:?}",
        volcano_events(job)
    );
}

/// A Volcano Job in queue `qa` (`minAvailable` line `job_min`, may be empty) with a `worker`
/// task (4 replicas, minAvailable 1, one GPU each) and a cpu-only `ps` task (2 replicas,
/// minAvailable 2, PriorityClass `ps_pc` when given).
fn volcano_job(job_min: &str, ps_pc: Option<&str>) -> String {
    let pc = ps_pc.map_or(String::new(), |p| {
        format!("\n        priorityClassName: {p}")
    });
    format!(
        "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: job, namespace: ns1, annotations: {{kueuesim.io/duration: 1h}}}}\nspec:\n  schedulerName: volcano\n  queue: qa{job_min}\n  tasks:\n  - name: worker\n    replicas: 4\n    minAvailable: 1\n    template:\n      spec:\n        containers:\n        - resources: {{requests: {{cpu: '1', memory: 1Gi, nvidia.com/gpu: '1'}}}}\n  - name: ps\n    replicas: 2\n    minAvailable: 2\n    template:\n      spec:{pc}\n        containers:\n        - resources: {{requests: {{cpu: '1', memory: 1Gi}}}}\n"
    )
}

/// A node of 64 cpu and 8 GPUs, and queue `qa` capped at `gpus` GPUs.
fn gpu_node_and_queue(gpus: u32) -> String {
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: '64', memory: 256Gi, pods: '110', nvidia.com/gpu: '8'}\n".to_string()
        + &queue("qa", &format!("weight: 1, capability: {{nvidia.com/gpu: '{gpus}'}}"), None)
}

/// Volcano's job controller (`calcPGMinResources`, `CalcPGMinResources`): with the job's
/// minAvailable at its default (the tasks' sum, 3), the PodGroup's minResources are each
/// task's own minAvailable pods, 1 worker and 2 ps: 1 GPU, within qa's capability of 2.
#[test]
fn volcano_job_min_resources_count_each_tasks_min_available() {
    let text = sim("enqueue, allocate", &["gang", "proportion"])
        + &gpu_node_and_queue(2)
        + &volcano_job("", None);
    let r = run_text(&text);
    let job = wl(&r, "ns1", "job");
    assert!(volcano_events(job).is_empty(), "{:?}", volcano_events(job));
    // Two workers (qa's capability) and both ps.
    let bound: Vec<usize> = job.pod_sets.iter().map(|p| p.nodes.len()).collect();
    assert_eq!(bound, [2, 2]);
}

/// `CalcFirstCountResources`: a job minAvailable (2) below the tasks' sum (3) counts the
/// first 2 pods by task PriorityClass, highest first: the ps task's, no GPU.
#[test]
fn volcano_job_min_resources_take_tasks_by_priority() {
    let text = sim("enqueue, allocate", &["gang", "proportion"])
        + "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
        + &gpu_node_and_queue(1)
        + &volcano_job("\n  minAvailable: 2", Some("high"));
    let r = run_text(&text);
    let job = wl(&r, "ns1", "job");
    assert!(volcano_events(job).is_empty(), "{:?}", volcano_events(job));
    let bound: Vec<usize> = job.pod_sets.iter().map(|p| p.nodes.len()).collect();
    assert_eq!(bound, [1, 2]);
}

/// A Queue's fields that are read but not simulated (node affinity, extendClusters, type,
/// dequeueStrategy) are a warning naming them, not dropped unseen.
#[test]
fn unsimulated_queue_fields_are_a_warning() {
    let text = format!(
        "{}{}{}{}",
        sim("enqueue, allocate", &["proportion"]),
        node("n1", "4", "4G"),
        queue(
            "q1",
            "weight: 1, dequeueStrategy: fifo, affinity: {nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [g1]}}",
            None
        ),
        gang("pg1", "q1", None, "1", "1G"),
    );
    let loaded = crate::util::load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        loaded.warnings.iter().any(|w| w.contains(
            "Volcano Queue \"q1\": spec.affinity, spec.dequeueStrategy not simulated yet"
        )),
        "{:?}",
        loaded.warnings
    );
}

/// The job webhook's bounds (`validateJobCreate`, `validateTaskTemplate`): a task's
/// minAvailable from 0 to its replicas, the job's from 0 to the tasks' total; each out of
/// range is an error at its place (they were clamped to 0, or let through).
#[test]
fn volcano_job_min_available_out_of_range_is_an_error() {
    let base = sim("enqueue, allocate", &["gang", "proportion"]) + &gpu_node_and_queue(8);
    let task_over = volcano_job("", None).replace(
        "replicas: 4\n    minAvailable: 1",
        "replicas: 4\n    minAvailable: 5",
    );
    let e = crate::util::load_error(&(base.clone() + &task_over));
    assert!(
        e.contains("task minAvailable 5: expected an integer from 0 to 4"),
        "{e}"
    );
    let task_negative = volcano_job("", None).replace(
        "replicas: 2\n    minAvailable: 2",
        "replicas: 2\n    minAvailable: -1",
    );
    let e = crate::util::load_error(&(base.clone() + &task_negative));
    assert!(
        e.contains("task minAvailable -1: expected an integer from 0 to 2"),
        "{e}"
    );
    let e = crate::util::load_error(&(base + &volcano_job("\n  minAvailable: 7", None)));
    assert!(
        e.contains("minAvailable 7: expected an integer from 0 to 6"),
        "{e}"
    );
}

/// An overcommit-factor below 1 is taken as the default 1.2, as upstream's plugin does, and
/// said in a warning, as upstream logs it (it was taken silently).
#[test]
fn an_overcommit_factor_below_one_is_a_warning() {
    let text = sim(
        "enqueue, allocate",
        &[
            "proportion",
            "overcommit\n          arguments: {overcommit-factor: 0.5}",
        ],
    ) + &node("n1", "4", "4G")
        + &queue("q1", "weight: 1", None)
        + &gang("pg1", "q1", None, "1", "1G");
    let loaded = crate::util::load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("overcommit-factor 0.5 is below 1")),
        "{:?}",
        loaded.warnings
    );
}

/// A plugin key upstream's `PluginOption` does not have is a misspelling, an error (it was
/// dropped unseen, so `enableReclaimabel: false` left the plugin voting); a switch upstream
/// has but kueuesim does not simulate is a warning; the actions' `configurations` too.
#[test]
fn a_misspelt_plugin_switch_is_an_error_and_an_unsimulated_one_a_warning() {
    let base = |plugin: &str| {
        sim("enqueue, allocate, reclaim", &["proportion", plugin])
            + &node("n1", "4", "4G")
            + &queue("q1", "weight: 1", None)
            + &gang("pg1", "q1", None, "1", "1G")
    };
    let e = crate::util::load_error(&base(
        "gang
          enableReclaimabel: false",
    ));
    assert!(
        e.contains("unknown field `enableReclaimabel`") && e.contains("spec.volcano.configuration"),
        "{e}"
    );
    let loaded = crate::util::load_text(
        "t.yaml",
        &base(
            "gang
          enableJobOrder: false",
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        loaded.warnings.iter().any(|w| w.contains(
            "plugin gang: enableJobOrder is not simulated: the plugin takes part as by default"
        )),
        "{:?}",
        loaded.warnings
    );
    // drf's enableHierarchy (hierarchical DRF) is not simulated: a warning, not silence.
    let loaded = crate::util::load_text(
        "t.yaml",
        &base(
            "drf
          enableHierarchy: true",
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("plugin drf: enableHierarchy (hierarchical DRF) is not simulated")),
        "{:?}",
        loaded.warnings
    );
    let text = base("gang").replacen(
        "tiers:",
        "configurations:
      - name: preempt
        arguments: {enableTopologyAwarePreemption: true}
      tiers:",
        1,
    );
    assert!(text.contains("configurations:"), "{text}");
    let loaded = crate::util::load_text("t.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("configurations (the actions' own arguments) are not simulated")),
        "{:?}",
        loaded.warnings
    );
}

/// A cycle of parents is an error at the spec.parent of a queue in the cycle: a queue that
/// only leads into it (a, whose parent b is in the cycle b -> c -> b) is not the one named.
#[test]
fn a_parent_cycle_is_an_error_at_a_queue_in_it() {
    let text = sim("enqueue, allocate", &["capacity"])
        + &node("n1", "4", "4G")
        + &queue("a", "parent: b", None)
        + &queue("b", "parent: c", None)
        + &queue("c", "parent: b", None);
    let e = crate::util::load_error(&text);
    assert!(
        e.contains("Volcano Queue \"b\" is its own ancestor through spec.parent"),
        "{e}"
    );
    let line = text
        .lines()
        .position(|l| l.contains("name: b}"))
        .expect("queue b")
        + 2;
    assert!(e.starts_with(&format!("t.yaml:{line}:")), "{e}");
}

#[test]
fn allocate_takes_the_queues_by_priority() {
    // capacity_test.go Test_capacityPlugin_OnSessionOpenWithoutHierarchy "case4" and
    // proportion_test.go TestAllocate "case0": one node free, a pending job in the queue of
    // priority 1 and one in the queue of priority 10 (listed after it); the second binds.
    let r = run_dir("volcano/capacity-queue-priority");
    assert_eq!(pods(wl(&r, "ns1", "pg12")), [("p15", Some("n6"))]);
    assert_eq!(pods(wl(&r, "ns1", "pg11")), [("p14", None)]);
    let r = run_dir("volcano/proportion-queue-priority");
    assert_eq!(pods(wl(&r, "ns1", "pg3")), [("p3", Some("n2"))]);
    assert_eq!(pods(wl(&r, "ns1", "pg2")), [("p2", None)]);
    // With capacity's `enableQueueOrder: false` nothing orders the queues: the jobs go in
    // kueuesim's placement order, p14 (listed first) binds.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/volcano/capacity-queue-priority/scenario.yaml"),
    )
    .expect("the scenario");
    let off = text.replace(
        "        - name: capacity\n",
        "        - name: capacity\n          enableQueueOrder: false\n",
    );
    assert_ne!(off, text);
    let loaded = load_text("t.yaml", &off).unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let r = result(&loaded.world, &Simulation::new(&loaded.world).run());
    assert_eq!(pods(wl(&r, "ns1", "pg11")), [("p14", Some("n6"))]);
    assert_eq!(pods(wl(&r, "ns1", "pg12")), [("p15", None)]);
}

#[test]
fn allocate_takes_queues_of_equal_priority_by_share() {
    // proportion's QueueOrderFn after the priority: the smaller share first. qa runs 1 cpu
    // and deserves 1 (share 1), qb runs nothing (share 0); of the two 1-cpu jobs, ga listed
    // first, only one fits n1: qb's. The queue checks are off so that only the order decides.
    let conf = SIM.replace("ACTIONS", "allocate").replace(
        "PLUGINS",
        "- name: proportion\n          enabledAllocatable: false\n          enabledOverused: false",
    );
    let text = |qa: &str| {
        conf.clone()
            + &node("n1", "2", "2G")
            + &queue("qa", qa, None)
            + &queue("qb", "weight: 1", None)
            + &running("pa", "qa", "{cpu: '1', memory: 1G}", "1", "1G", "n1")
            + &gang("ga", "qa", None, "1", "1G")
            + &gang("gb", "qb", None, "1", "1G")
    };
    let r = run_text(&text("weight: 1"));
    assert_eq!(nodes(wl(&r, "ns1", "gb")), ["n1"]);
    assert!(nodes(wl(&r, "ns1", "ga")).is_empty());
    // A queue's higher priority goes before its larger share.
    let r = run_text(&text("weight: 1, priority: 1"));
    assert!(nodes(wl(&r, "ns1", "gb")).is_empty());
    assert_eq!(nodes(wl(&r, "ns1", "ga")), ["n1"]);
}

/// The YAML documents of `text` but the objects named `names` (a PodGroup also takes its
/// pods), joined again.
fn without_documents(text: &str, names: &[&str]) -> String {
    let kept = text
        .split("\n---\n")
        .filter(|doc| {
            !names.iter().any(|n| {
                doc.contains(&format!("{{name: {n},"))
                    || doc.contains(&format!("  name: {n}\n"))
                    || doc.contains(&format!("group-name: {n}}}"))
            })
        })
        .collect::<Vec<_>>()
        .join("\n---\n");
    assert!(kept.contains("kind: Simulation"), "{kept}");
    kept
}

#[test]
fn allocate_case_two_jobs_on_one_node_one_pod_per_queue() {
    // allocate_test.go TestAllocate "two Jobs on one node": proportion's allocatable check
    // holds each queue at its deserved half of n1.
    let r = run_dir("volcano/allocate-two-queues");
    assert_eq!(
        pods(wl(&r, "c1", "pg1")),
        [("pg1-p-1", Some("n1")), ("pg1-p-2", None)]
    );
    assert_eq!(
        pods(wl(&r, "c2", "pg2")),
        [("pg2-p-1", Some("n1")), ("pg2-p-2", None)]
    );
    // TestAllocate "high priority queue should not block others": c1's job (3 cpu) does
    // not fit n1, c2's (1 cpu) binds.
    let text = std::fs::read_to_string(
        crate::util::scenarios_dir().join("volcano/allocate-two-queues/scenario.yaml"),
    )
    .expect("readable");
    let text = without_documents(&text, &["pg1-p-2", "pg2-p-2"]).replacen(
        "requests: {cpu: '1', memory: 1G}",
        "requests: {cpu: '3', memory: 1G}",
        1,
    );
    assert!(text.contains("cpu: '3'"), "{text}");
    let r = run_text(&text);
    assert_eq!(pods(wl(&r, "c1", "pg1")), [("pg1-p-1", None)]);
    assert_eq!(pods(wl(&r, "c2", "pg2")), [("pg2-p-1", Some("n1"))]);
}

#[test]
fn allocate_fair_share_cases_take_the_queue_of_the_lowest_share_first() {
    // TestFareShareAllocate "queue's DRF share value will be updated …": q-2 places
    // pod-large-2, then q-1 (share 0.4 against q-2's 0.8) pod-large-1; pod-small-2 waits.
    let r = run_dir("volcano/allocate-queue-share");
    let bound = |r: &SimulationResult, pg: &str| pods(wl(r, "ns-1", pg))[0].1.is_some();
    assert!(bound(&r, "pg-large-1"));
    assert!(bound(&r, "pg-large-2"));
    assert!(!bound(&r, "pg-small-2"));
    let text = std::fs::read_to_string(
        crate::util::scenarios_dir().join("volcano/allocate-queue-share/scenario.yaml"),
    )
    .expect("readable");
    // "queue with low DRF share value has high priority, should allocate first": without
    // pg-small-2 and with pod-large-2 at 3 cpu, q-2 goes first and the node keeps 1 cpu.
    let case_0 = without_documents(&text, &["pg-small-2"]);
    let case_0 = {
        // pod-large-2 is the last document: its request becomes 3 cpu.
        let at = case_0
            .rfind("requests: {cpu: '2'")
            .expect("pod-large-2's request");
        assert!(case_0[..at].contains("name: pod-large-2"), "{case_0}");
        format!(
            "{}requests: {{cpu: '3'{}",
            &case_0[..at],
            &case_0[at + "requests: {cpu: '2'".len()..]
        )
    };
    let r = run_text(&case_0);
    assert!(bound(&r, "pg-large-2"));
    assert!(!bound(&r, "pg-large-1"));
    // "queue's one jobs has no pending tasks, should be put back to queues for next job":
    // q-1 alone, pg-small-1 running and pg-large-1 pending: pod-large-1 binds.
    let case_2 = without_documents(&text, &["pg-small-2", "pg-large-2"]);
    let r = run_text(&case_2);
    assert!(bound(&r, "pg-large-1"));
}

/// A PodGroup of minMember 1 in `queue` (minResources `min`) with one pod of `cpu`/`memory`
/// already running on `node`.
fn running(name: &str, queue: &str, min: &str, cpu: &str, memory: &str, node: &str) -> String {
    gang(name, queue, Some(min), cpu, memory).replace(
        "  schedulerName: volcano\n",
        &format!("  schedulerName: volcano\n  nodeName: {node}\n"),
    ) + "status: {phase: Running}\n"
}

/// A Volcano Queue with `spec` (flow mapping body) and an optional state.
fn queue(name: &str, spec: &str, state: Option<&str>) -> String {
    let state = state.map_or(String::new(), |s| format!("status: {{state: {s}}}\n"));
    format!(
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: {name}}}\nspec: {{{spec}}}\n{state}"
    )
}

/// A pending pod of `cpu`/`memory`/`gpu` in PodGroup `pg` (without the PodGroup).
fn gpu_pod(name: &str, pg: &str, cpu: &str, memory: &str, gpu: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ns1\n  annotations: {{kueuesim.io/duration: 1h, scheduling.k8s.io/group-name: {pg}}}\nspec:\n  schedulerName: volcano\n  containers:\n  - resources:\n      requests: {{cpu: '{cpu}', memory: {memory}, nvidia.com/gpu: '{gpu}'}}\n"
    )
}

/// A PodGroup of `min_member` in `queue`, without minResources.
fn pod_group(name: &str, queue: &str, min_member: u32) -> String {
    format!(
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ns1}}\nspec: {{minMember: {min_member}, queue: {queue}}}\n"
    )
}

mod capacity;
