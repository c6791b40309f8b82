//! kubectl as people type it: `get KIND NAME`, `KIND/NAME`, `-l`, `--sort-by`, `-o name`,
//! `-o jsonpath=`, `-o custom-columns=`, `get events`, `describe podgroup|cohort|
//! resourceflavor`, kind aliases, name order, `not found` with what was meant, and pods named
//! as their controllers name them.

use super::{kueuesim, scenario, stderr, stdout};

/// Runs `kueuesim ARGS`, asserts success and returns stdout.
fn ok(args: &[&str]) -> String {
    let o = kueuesim(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// Runs `kueuesim ARGS`, asserts the exit code and returns stderr.
fn fails(code: i32, args: &[&str]) -> String {
    let o = kueuesim(args);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
    stderr(&o)
}

const GANG: &str = "job-gang-a59a5";

#[test]
fn get_takes_names_after_the_kind_and_kind_slash_name() {
    let dir = scenario("golden/first-fit-nodes");
    let one = ok(&["get", "workload", GANG, "-n", "team", &dir, "--at", "5m"]);
    assert_eq!(
        one,
        "NAME             QUEUE   RESERVED IN   ADMITTED   FINISHED   AGE\n\
         job-gang-a59a5   q       team          True                  4m\n"
    );
    let slash = ok(&[
        "get",
        &format!("wl/{GANG}"),
        "-n",
        "team",
        &dir,
        "--at",
        "5m",
    ]);
    assert_eq!(slash, one);
    // With -f every positional is a name, in the order given.
    let two = ok(&[
        "get",
        "wl",
        "job-spread-4f17d",
        GANG,
        "-n",
        "team",
        "-f",
        &dir,
        "--at",
        "5m",
        "-o",
        "name",
    ]);
    assert_eq!(
        two,
        "workload.kueue.x-k8s.io/job-spread-4f17d\nworkload.kueue.x-k8s.io/job-gang-a59a5\n"
    );
    // A missing name: the others are printed, then kubectl's error (exit 1).
    let o = kueuesim(&[
        "get", "wl", GANG, "nope", "-n", "team", "-f", &dir, "--at", "5m",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains(GANG), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("workloads.kueue.x-k8s.io \"nope\" not found"),
        "{}",
        stderr(&o)
    );
    // Something that looks like a path but is none is not taken for a name.
    let e = fails(2, &["get", "wl", "no/such/dir", "-n", "team"]);
    assert!(e.contains("no/such/dir: no such file or directory"), "{e}");
    // By name across all namespaces is refused, as kubectl refuses it.
    let e = fails(2, &["get", "wl", GANG, "-A", &dir]);
    assert!(e.contains("across all namespaces"), "{e}");
}

/// A positional that is a file or directory here and also the name of an object is
/// ambiguous: kueuesim says so instead of guessing.
#[test]
fn a_name_that_is_also_a_path_fails_loudly() {
    let dir = std::env::temp_dir().join(format!("kueuesim-ambiguous-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("team")).expect("dir");
    let src = std::fs::canonicalize(scenario("golden/first-fit-nodes")).expect("scenario");
    let src = src.to_str().expect("utf-8");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kueuesim"))
            .current_dir(&dir)
            .args(args)
            .output()
            .expect("runs")
    };
    // `team` is a ClusterQueue of the scenario and a directory here that is no scenario.
    let o = run(&["get", "cq", "team", src]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "if \"team\" is an object's name rather than a scenario path, give the scenario with -f"
        ),
        "{}",
        stderr(&o)
    );
    // A directory that loads: both readings make sense, so neither is taken.
    std::fs::write(
        dir.join("team/ns.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: extra}\n",
    )
    .expect("yaml");
    let o = run(&["get", "cq", "team", src]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("\"team\" is both a file or directory here and the name of a clusterqueue"),
        "{}",
        stderr(&o)
    );
    let o = run(&["get", "cq", "team", "-f", src]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("NAME   COHORT"), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn label_selectors_use_kubectls_syntax() {
    let dir = scenario("golden/first-fit-nodes");
    let names = |sel: &str| {
        ok(&[
            "get", "pod", "-n", "team", "-l", sel, &dir, "--at", "5m", "-o", "name",
        ])
    };
    assert_eq!(names("job-name=gang"), "pod/gang-jbwps\npod/gang-ngb2k\n");
    assert_eq!(
        names("job-name!=gang"),
        "pod/spread-8nnvp\npod/spread-ds28g\npod/spread-tnj7h\n"
    );
    assert_eq!(
        names("job-name in (gang,other),kueue.x-k8s.io/podset"),
        "pod/gang-jbwps\npod/gang-ngb2k\n"
    );
    assert_eq!(names("job-name notin (gang)"), names("job-name=spread"));
    let o = kueuesim(&[
        "get",
        "pod",
        "-n",
        "team",
        "-l",
        "!job-name",
        &dir,
        "--at",
        "5m",
    ]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "");
    assert_eq!(stderr(&o), "No resources found in team namespace.\n");
    let platform = scenario("platform");
    let spine = ok(&[
        "get",
        "no",
        "-l",
        "topology.kueuesim.io/spine=spine-1",
        &platform,
        "--at",
        "1m",
        "-o",
        "name",
    ]);
    assert_eq!(spine.lines().count(), 16, "{spine}");
    assert!(
        spine.lines().all(|l| l.starts_with("node/gpu-h100-")),
        "{spine}"
    );
    let e = fails(2, &["get", "pod", "-l", "app in web", &dir]);
    assert!(e.contains("expected the values in parentheses"), "{e}");
    let e = fails(
        2,
        &["get", "wl", GANG, "-l", "a=b", "-n", "team", "-f", &dir],
    );
    assert!(e.contains("names or a selector"), "{e}");
}

#[test]
fn sort_by_takes_a_jsonpath_as_kubectl_does() {
    let dir = scenario("golden/first-fit-nodes");
    // By name (the API server's order) without --sort-by, by creation with it.
    let by_name = ok(&["get", "wl", "-A", &dir, "-o", "name"]);
    assert_eq!(
        by_name,
        "workload.kueue.x-k8s.io/job-gang-a59a5\nworkload.kueue.x-k8s.io/job-spread-4f17d\n"
    );
    for path in [
        ".metadata.creationTimestamp",
        "{.metadata.creationTimestamp}",
        "metadata.creationTimestamp",
    ] {
        let sorted = ok(&["get", "wl", "-A", &dir, "-o", "name", "--sort-by", path]);
        assert_eq!(
            sorted,
            "workload.kueue.x-k8s.io/job-spread-4f17d\nworkload.kueue.x-k8s.io/job-gang-a59a5\n",
            "{path}"
        );
    }
    // Quantities compare by amount: 8 GPUs after 1, as kubectl compares them.
    let platform = scenario("platform");
    let pods = ok(&[
        "get",
        "po",
        "-n",
        "inference",
        &platform,
        "--at",
        "6h",
        "--sort-by",
        ".spec.containers[0].resources.requests.nvidia\\.com/gpu",
        "-o",
        "custom-columns=GPU:.spec.containers[0].resources.requests.nvidia\\.com/gpu",
        "--no-headers",
    ]);
    let gpus: Vec<&str> = pods.lines().map(str::trim).collect();
    let mut sorted = gpus.clone();
    sorted.sort_by_key(|g| g.parse::<u32>().unwrap_or(0));
    assert_eq!(gpus, sorted);
    let e = fails(2, &["get", "wl", "-A", &dir, "--sort-by", ".spec.nothing"]);
    assert!(e.contains("couldn't find any field with path"), "{e}");
}

#[test]
fn output_name_jsonpath_and_custom_columns() {
    let dir = scenario("golden/first-fit-nodes");
    let at = ["-n", "team", &dir, "--at", "5m"];
    let get = |kind: &str, o: &str| {
        let mut args = vec!["get", kind, "-o", o];
        args.extend(at);
        ok(&args)
    };
    assert_eq!(get("cq", "name"), "clusterqueue.kueue.x-k8s.io/team\n");
    assert_eq!(get("lq", "name"), "localqueue.kueue.x-k8s.io/q\n");
    assert_eq!(get("rf", "name"), "resourceflavor.kueue.x-k8s.io/default\n");
    assert_eq!(
        get("pg", "name"),
        "podgroup.scheduling.volcano.sh/podgroup-gang\n"
    );
    assert_eq!(get("no", "name"), "node/node-a\nnode/node-b\n");
    assert_eq!(
        get("wl", "jsonpath={.items[*].metadata.name}"),
        "job-gang-a59a5 job-spread-4f17d"
    );
    assert_eq!(
        get(
            "wl",
            "jsonpath={range .items[*]}{.metadata.name}{\"\\t\"}{.status.conditions[?(@.type==\"Admitted\")].status}{\"\\n\"}{end}"
        ),
        "job-gang-a59a5\tTrue\njob-spread-4f17d\tTrue\n"
    );
    // One name: the object itself, not a List.
    let one = ok(&[
        "get",
        "po",
        "gang-jbwps",
        "-n",
        "team",
        &dir,
        "--at",
        "5m",
        "-o",
        "jsonpath={.spec.schedulerName} {.status.phase} {.status.conditions[0].reason}",
    ]);
    assert_eq!(one, "volcano Pending Unschedulable");
    insta::assert_snapshot!(
        "custom_columns",
        get(
            "po",
            "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,JOB:.metadata.labels.job-name,GPU:.spec.containers[*].resources.requests.nvidia\\.com/gpu"
        )
    );
    // json and yaml for every kind (workloads only before).
    let cq: serde_json::Value = serde_json::from_str(&get("cq", "json")).expect("json");
    assert_eq!(cq["items"][0]["kind"], "ClusterQueue");
    assert_eq!(cq["items"][0]["status"]["admittedWorkloads"], 2);
    assert!(get("node", "yaml").contains("kind: Node"));
    // What the subset leaves out is named, exit 2.
    for (o, says) in [
        ("jsonpath={.items[?(@.a==1 && @.b==2)]}", "&&"),
        ("jsonpath={.items[*]", "unclosed action"),
        ("go-template={{.metadata.name}}", "go-template"),
        ("custom-columns=NAME", "expected <header>:<json-path-expr>"),
        ("table", "expected wide, name, json, yaml"),
    ] {
        let e = fails(2, &["get", "wl", "-A", &dir, "-o", o]);
        assert!(e.contains(says), "{o}: {e}");
    }
}

#[test]
fn get_events_lists_each_event_on_its_object() {
    let dir = scenario("golden/first-fit-nodes");
    let events = ok(&["get", "events", "-n", "team", &dir, "--at", "5m"]);
    insta::assert_snapshot!("get_events", events);
    // Volcano's reason for the gang is on its PodGroup and its pods, Kueue's on the Workload.
    assert!(
        events.contains("Warning   Unschedulable      podgroup/podgroup-gang"),
        "{events}"
    );
    assert!(
        events.contains("Warning   FailedScheduling   pod/gang-jbwps"),
        "{events}"
    );
    assert!(
        events.contains("Normal    Admitted           workload/job-gang-a59a5"),
        "{events}"
    );
    let all = ok(&["get", "ev", "-A", &dir, "--at", "5m"]);
    assert!(all.starts_with("NAMESPACE   LAST SEEN   TYPE"), "{all}");
    // Repeats fold into one Event with a count, as client-go records them: preemptor-thrash's
    // wl2 is turned down, preempts and waits 26 times.
    let thrash = scenario("kueue/preemptor-thrash");
    let counts = ok(&[
        "get",
        "events",
        "-n",
        "ns1",
        &thrash,
        "-l",
        "",
        "-o",
        "jsonpath={range .items[?(@.involvedObject.name==\"wl2\")]}{.reason}={.count} {end}",
    ]);
    assert_eq!(counts.split_whitespace().count(), 3, "{counts}");
    assert!(
        counts.split_whitespace().all(|c| c.ends_with("=26")),
        "{counts}"
    );
    let wide = ok(&["get", "events", "-n", "ns1", &thrash, "-o", "wide"]);
    assert!(wide.starts_with("LAST SEEN   TYPE      REASON"), "{wide}");
    assert!(
        wide.lines()
            .next()
            .is_some_and(|h| h.ends_with("FIRST SEEN   COUNT   NAME")),
        "{wide}"
    );
}

#[test]
fn describe_podgroup_cohort_and_resourceflavor() {
    let dir = scenario("golden/first-fit-nodes");
    insta::assert_snapshot!(
        "describe_podgroup",
        ok(&[
            "describe",
            "pg",
            "podgroup-gang",
            "-n",
            "team",
            &dir,
            "--at",
            "5m"
        ])
    );
    let cohorts = scenario("cases/S-05-hierarchical-lending-limit-respected");
    insta::assert_snapshot!(
        "describe_cohort",
        ok(&["describe", "cohort", "child", &cohorts])
    );
    let platform = scenario("platform");
    insta::assert_snapshot!(
        "describe_resourceflavor",
        ok(&[
            "describe",
            "resourceflavors",
            "h100",
            &platform,
            "--at",
            "1m"
        ])
    );
    // No name: every object of the kind, as kubectl describe does.
    let both = ok(&["describe", "co", &cohorts]);
    assert_eq!(both.matches("Kind:         Cohort").count(), 2, "{both}");
}

#[test]
fn kind_aliases_as_kubectl_has_them() {
    let dir = scenario("golden/first-fit-nodes");
    for (alias, kind) in [
        ("workloads", "wl"),
        ("kwl", "wl"),
        ("podgroups", "pg"),
        ("events", "ev"),
        ("resourceflavors", "rf"),
        ("flavors", "rf"),
        ("cohorts", "co"),
        ("pods", "po"),
        ("nodes", "no"),
        ("clusterqueues", "cq"),
        ("localqueues", "lq"),
    ] {
        let a = ok(&["get", alias, "-n", "team", &dir, "--at", "5m"]);
        let b = ok(&["get", kind, "-n", "team", &dir, "--at", "5m"]);
        assert_eq!(a, b, "{alias} vs {kind}");
    }
    let e = fails(2, &["get", "widgets", &dir]);
    assert!(
        e.contains("doesn't have a resource type \"widgets\""),
        "{e}"
    );
    let e = fails(2, &["describe", "events", &dir]);
    assert!(e.contains("expected workload"), "{e}");
}

/// `describe wl job-pretrain-17` (Kueue adds a hash to a job's Workload) is not found, and
/// says what was meant without using it.
#[test]
fn not_found_says_what_was_meant() {
    let dir = scenario("golden/first-fit-nodes");
    let e = fails(1, &["describe", "wl", "job-gang", "-n", "team", &dir]);
    assert!(
        e.contains("workloads.kueue.x-k8s.io \"job-gang\" not found; did you mean \"job-gang-a59a5\"? (the only workload whose name starts with \"job-gang\")"),
        "{e}"
    );
    let e = fails(1, &["describe", "wl", "job", "-n", "team", &dir]);
    assert!(
        e.contains("2 names start with \"job\": \"job-gang-a59a5\", \"job-spread-4f17d\""),
        "{e}"
    );
    let e = fails(1, &["describe", "wl", "gang", "-n", "team", &dir]);
    assert!(
        e.contains("\"job-gang-a59a5\" is the Workload Kueue made for the job \"gang\""),
        "{e}"
    );
    let e = fails(
        1,
        &["get", "pod", "gang-jbwpz", "-n", "team", &dir, "--at", "5m"],
    );
    assert!(
        e.contains("pods \"gang-jbwpz\" not found (closest: \"gang-jbwps\")"),
        "{e}"
    );
    let e = fails(1, &["describe", "wl", GANG, &dir]);
    assert!(
        e.contains("a workload of that name is in namespace team (-n team)"),
        "{e}"
    );
}

/// Pods carry the names their controllers give them, the same in result.json and in `get pod`:
/// a plain Pod its own, a StatefulSet's `<sts>-<ordinal>`, a Deployment's
/// `<deployment>-<pod-template-hash>-<5>`, a LeaderWorkerSet group's leader `<lws>-<group>` and
/// workers `<lws>-<group>-<i>`, a PyTorchJob's `<job>-<type>-<i>` (the training operator's),
/// an MPIJob's launcher `<job>-launcher-<5>` (a Job's pod) and workers `<job>-worker-<i>`.
#[test]
fn pods_are_named_as_their_controllers_name_them() {
    let dir = scenario("examples/job-kinds");
    let names = ok(&[
        "get", "po", "-n", "research", &dir, "--at", "1h", "-o", "name",
    ]);
    let names: Vec<&str> = names
        .lines()
        .map(|l| l.trim_start_matches("pod/"))
        .collect();
    for want in [
        "notebook",
        "vector-db-0",
        "vector-db-2",
        "llm-serve-0",
        "llm-serve-0-1",
        "llm-serve-1-2",
        "resnet-ddp-master-0",
        "resnet-ddp-worker-2",
        "hpl-worker-1",
    ] {
        assert!(names.contains(&want), "{want}: {names:?}");
    }
    let embedder: Vec<&&str> = names
        .iter()
        .filter(|n| n.starts_with("embedder-"))
        .collect();
    assert_eq!(embedder.len(), 2, "{names:?}");
    for e in &embedder {
        let parts: Vec<&str> = e.split('-').collect();
        assert_eq!(parts.len(), 3, "{e}");
        assert_eq!(parts[2].len(), 5, "{e}");
    }
    assert!(!names.iter().any(|n| n.contains("-main-")), "{names:?}");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("hpl-launcher-") && n.len() == "hpl-launcher-".len() + 5),
        "{names:?}"
    );
    // result.json names the same pods.
    let o = kueuesim(&["run", &dir, "-o", "json", "--until", "1h"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let mut in_doc: Vec<String> = doc["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .filter(|w| w["namespace"] == "research")
        .flat_map(|w| w["podSets"].as_array().cloned().unwrap_or_default())
        .flat_map(|p| p["pods"].as_array().cloned().unwrap_or_default())
        .map(|p| p["name"].as_str().unwrap_or_default().to_string())
        .collect();
    in_doc.sort();
    for n in &names {
        assert!(
            in_doc.iter().any(|d| d == n),
            "{n} not in result.json: {in_doc:?}"
        );
    }
    // The Deployment's pods are its ReplicaSet's.
    let d = ok(&[
        "describe",
        "po",
        *embedder[0],
        "-n",
        "research",
        &dir,
        "--at",
        "1h",
    ]);
    let rs = embedder[0].rsplit_once('-').expect("suffix").0;
    assert!(
        d.contains(&format!("Controlled By:    ReplicaSet/{rs}\n")),
        "{d}"
    );
    assert!(d.contains("pod-template-hash="), "{d}");
}

/// ADMITTED is Kueue's printer column `.status.conditions[?(@.type=='Admitted')].status`: blank
/// while the condition is absent, which with Kueue's default gates
/// (UnadmittedWorkloadsObservability on, UnadmittedWorkloadsExplicitStatus off) is until the
/// scheduler first evaluates the workload; `False` (NoReservation) once it has.
#[test]
fn admitted_column_is_kueues_printer_column() {
    let dir = scenario("golden/fifo-strategies");
    let out = ok(&["get", "wl", "-n", "strict", &dir, "--at", "5m"]);
    assert_eq!(
        out,
        "NAME          QUEUE   RESERVED IN   ADMITTED   FINISHED   AGE\n\
         job-a-f4747   q       strict        True                  5m\n\
         job-b-6075d   q                     False                 5m\n\
         job-c-890b9   q                                           5m\n"
    );
    // The same as the column's JSONPath over the objects.
    let path = ok(&[
        "get",
        "wl",
        "-n",
        "strict",
        &dir,
        "--at",
        "5m",
        "-o",
        "custom-columns=NAME:.metadata.name,ADMITTED:.status.conditions[?(@.type=='Admitted')].status,REASON:.status.conditions[?(@.type=='Admitted')].reason",
    ]);
    assert_eq!(
        path,
        "NAME          ADMITTED   REASON\n\
         job-a-f4747   True       Admitted\n\
         job-b-6075d   False      NoReservation\n\
         job-c-890b9   <none>     <none>\n"
    );
}

#[test]
fn volcano_pod_group_held_by_enqueue_shows_pending_with_its_event() {
    // scenarios/volcano/enqueue-over-capability: q1's capability keeps pg5 Pending.
    let dir = scenario("volcano/enqueue-over-capability");
    let got = ok(&["get", "podgroup", "-n", "ns1", "-o", "wide", &dir]);
    let row = |name: &str| {
        got.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .unwrap_or_else(|| panic!("no {name}: {got}"))
    };
    assert_eq!(row("pg5")[1], "Pending", "{got}");
    assert_eq!(row("pg5").last(), Some(&"q1"), "{got}");
    assert_eq!(row("pg1")[1], "Running", "{got}");
    assert_eq!(row("pg2").last(), Some(&"q2"), "{got}");
    let described = ok(&["describe", "podgroup", "pg5", "-n", "ns1", &dir]);
    // The enqueue vote's Normal event, then the gang Warning upstream's cache records at
    // session close for a Pending PodGroup (`RecordJobStatusEvent`).
    assert!(
        described.contains(
            "  Normal   Unschedulable  10m   volcano  queue resource quota insufficient: insufficient memory\n  Warning  Unschedulable  10m   volcano  1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; Pending: 1 Unschedulable\n"
        ),
        "{described}"
    );
    assert!(
        described.contains("Phase:                   Pending"),
        "{described}"
    );
}

#[test]
fn volcano_pod_group_phase_follows_the_enqueue_action_over_time() {
    // scenarios/volcano/weighted-queues: research-3 is held until 1h, then Inqueue until
    // it runs at 2h.
    let dir = scenario("volcano/weighted-queues");
    let phase = |at: &str| {
        let got = ok(&["get", "podgroup", "-n", "team", &dir, "--at", at]);
        got.lines()
            .find(|l| l.starts_with("podgroup-research-3 "))
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or_else(|| panic!("{got}"))
            .to_string()
    };
    assert_eq!(phase("30m"), "Pending");
    assert_eq!(phase("90m"), "Inqueue");
    assert_eq!(phase("150m"), "Running");
}
