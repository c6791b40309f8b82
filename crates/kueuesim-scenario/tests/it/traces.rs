//! WorkloadTrace: the native CSV format (every column, errors at file:line:column, arrival
//! order), the trace root, mappings by column and seeded random ones, and the public traces
//! replayed whole (conservation) and over a prefix with the engine's invariants checked after
//! every event.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kueuesim_engine::Simulation;
use kueuesim_model::{QueueRef, SimDuration, SimTime, TopologyRequest, World};
use kueuesim_report::output::result;
use kueuesim_scenario::trace::default_trace_root;
use kueuesim_scenario::{LoadOptions, Loaded, ScenarioError, SourceFile, load};

/// The name a trace cell becomes (`kueuesim_model::names::from_trace`, a DNS-1123
/// subdomain).
fn trace_name(cell: &str) -> String {
    kueuesim_model::names::from_trace(cell, kueuesim_model::names::NameRule::Dns1123Subdomain, 253)
        .into_owned()
}

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kueuesim-traces-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Writes `csv` as `dir/trace.csv` and loads `yaml` as `dir/scenario.yaml`.
fn load_with(
    dir: &Path,
    csv: &str,
    yaml: &str,
    opts: LoadOptions,
) -> Result<Loaded, ScenarioError> {
    std::fs::write(dir.join("trace.csv"), csv).expect("write csv");
    let name = dir.join("scenario.yaml").display().to_string();
    std::fs::write(&name, yaml).expect("write yaml");
    load(
        &[SourceFile {
            name,
            text: yaml.to_string(),
        }],
        opts,
    )
}

/// A small cluster: queues `training`/`interactive` in `research`, priority classes, schedulers.
const CLUSTER: &str = "\
apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: t}
spec:
  seed: 7
  schedulers: {kai-scheduler: kai, volcano: volcano}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: research}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: memory, nominalQuota: 512Gi}
      - {name: nvidia.com/gpu, nominalQuota: 16}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: training, namespace: research}
spec: {clusterQueue: research}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: interactive, namespace: research}
spec: {clusterQueue: research}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"16\"}}
";

/// CLUSTER plus a native WorkloadTrace of `trace.csv` with `extra` spec lines.
fn native_yaml(extra: &str) -> String {
    format!(
        "{CLUSTER}---\napiVersion: kueuesim.io/v1alpha1\nkind: WorkloadTrace\nmetadata: {{name: tr}}\nspec:\n  format: native\n  path: trace.csv\n{extra}"
    )
}

fn lq_name(world: &World, q: &QueueRef) -> String {
    match q {
        QueueRef::Local(id) => world.local_queues[id.index()].name.clone(),
        QueueRef::Missing(n) => format!("missing:{n}"),
        QueueRef::Unmanaged => "unmanaged".into(),
    }
}

const FULL_HEADER: &str = "arrival,name,namespace,queue,priorityClass,scheduler,pods,minMember,requests.cpu,requests.memory,requests.nvidia.com/gpu,duration,topology\n";

#[test]
fn native_format_reads_every_column() {
    let dir = scratch("every-column");
    let csv = format!(
        "{FULL_HEADER}0,a,research,training,high,kai-scheduler,4,2,500m,16Gi,2,2h,required:rack\n\n90.5,b,research,interactive,low,volcano,1,,1,1Gi,,1h30m,preferred:block\n2m,,research,,,,,,2,,1,,unconstrained\n"
    );
    let loaded = load_with(&dir, &csv, &native_yaml(""), LoadOptions::default()).expect("loads");
    let w = &loaded.world;
    assert_eq!(w.workloads.len(), 3);
    let (a, b, c) = (&w.workloads[0], &w.workloads[1], &w.workloads[2]);
    assert_eq!((a.namespace.as_str(), a.name.as_str()), ("research", "a"));
    assert_eq!(lq_name(w, &a.queue), "training");
    assert_eq!(
        (a.priority_class.as_deref(), a.priority),
        (Some("high"), 1000)
    );
    assert_eq!(a.scheduler_name, "kai-scheduler");
    assert_eq!(a.pod_sets[0].count, 4);
    assert_eq!(a.gang.min_member, Some(2));
    let cpu = w.resources.lookup("cpu").expect("cpu");
    let mem = w.resources.lookup("memory").expect("memory");
    let gpu = w.resources.lookup("nvidia.com/gpu").expect("gpu");
    assert_eq!(a.pod_sets[0].requests.get(cpu), 500);
    assert_eq!(a.pod_sets[0].requests.get(mem), 16 << 30);
    assert_eq!(a.pod_sets[0].requests.get(gpu), 2);
    assert_eq!(a.duration, Some(SimDuration::from_secs(7200)));
    assert_eq!(
        a.pod_sets[0].topology_request,
        Some(TopologyRequest::Required("rack".into()))
    );
    assert_eq!(a.arrival, SimTime::ZERO);
    assert_eq!(b.arrival, SimTime::from_millis(90_500));
    assert_eq!(b.created_at, b.arrival);
    assert_eq!(lq_name(w, &b.queue), "interactive");
    assert_eq!(b.scheduler_name, "volcano");
    assert_eq!(b.gang.min_member, None);
    assert_eq!(b.pod_sets[0].requests.get(gpu), 0);
    assert_eq!(b.duration, Some(SimDuration::from_secs(5400)));
    assert_eq!(
        b.pod_sets[0].topology_request,
        Some(TopologyRequest::Preferred("block".into()))
    );
    // The iterator gives the same workloads again, one at a time, in arrival order.
    let mut world = loaded.world.clone();
    let again: Vec<String> = kueuesim_scenario::trace::open(&loaded.traces[0], &mut world)
        .expect("opens")
        .map(|w| w.expect("row").name)
        .collect();
    assert_eq!(again, ["a", "b", "tr-000002"]);
    // Empty cells: name from the trace and row index, no queue (no `default` LocalQueue in
    // the namespace: not managed by Kueue), no class, kube's scheduler, no end.
    assert_eq!(c.name, "tr-000002");
    assert_eq!(c.arrival, SimTime::from_secs(120));
    assert_eq!(c.queue, QueueRef::Unmanaged);
    assert_eq!((c.priority_class.as_deref(), c.priority), (None, 0));
    assert_eq!(c.scheduler_name, "default-scheduler");
    assert_eq!(c.duration, None);
    assert_eq!(
        c.pod_sets[0].topology_request,
        Some(TopologyRequest::Unconstrained)
    );
    // A LocalQueue named but not defined: pending with Kueue's message, as for a job.
    let csv = "arrival,queue,requests.cpu\n0,nope,1\n";
    let loaded = load_with(&dir, csv, &native_yaml(""), LoadOptions::default()).expect("loads");
    let q = &loaded.world.workloads[0];
    assert_eq!(q.namespace, "default");
    assert_eq!(q.queue, QueueRef::Missing("nope".into()));
}

/// The first line of the error of loading `csv` with the native trace.
fn native_error(dir: &Path, csv: &str) -> String {
    match load_with(dir, csv, &native_yaml(""), LoadOptions::default()) {
        Ok(_) => panic!("expected an error for:\n{csv}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn native_bad_cells_are_errors_at_their_line_and_column() {
    let dir = scratch("bad-cells");
    let file = dir.join("trace.csv").display().to_string();
    let cases: &[(&str, &str, &str)] = &[
        ("arrival,pods\n0,1\nsoon,1\n", "3:1", "arrival \"soon\""),
        (
            "arrival,pods\n0,x\n",
            "2:3",
            "pods \"x\": expected an integer",
        ),
        (
            "arrival,pods\n0,0\n",
            "2:3",
            "pods 0: expected an integer from 1 to 100000",
        ),
        (
            "arrival,pods,minMember\n0,2,3\n",
            "2:5",
            "minMember \"3\": expected an integer from 0 to 2",
        ),
        ("arrival,requests.cpu\n0,lots\n", "2:3", "cpu \"lots\""),
        (
            "arrival,duration\n0,forever\n",
            "2:3",
            "duration \"forever\"",
        ),
        (
            "arrival,priorityClass\n0,urgent\n",
            "2:3",
            "priority class \"urgent\" is no WorkloadPriorityClass of the scenario: expected one of high, low",
        ),
        (
            "arrival,scheduler\n0,slurm\n",
            "2:3",
            "schedulerName \"slurm\" is run by no scheduler",
        ),
        (
            "arrival,topology\n0,rack\n",
            "2:3",
            "topology \"rack\": expected required:<level label>",
        ),
        ("arrival,team\n0,a\n", "1:9", "unknown column \"team\""),
        (
            "arrival,pods\n0,1,2\n",
            "2:5",
            "3 cells: expected 2 as in the header (line 1)",
        ),
        // A missing cell is pointed at the line's last byte, never past its end.
        ("arrival,pods\n0\n", "2:1", "1 cells: expected 2"),
        ("arrival,name\n0,\"a\"\n", "2:3", "a quoted CSV cell"),
        ("name,pods\na,1\n", "1:1", "no column \"arrival\""),
        (
            "arrival,pods,pods\n0,1,2\n",
            "1:14",
            "column \"pods\" appears twice (also column 2)",
        ),
    ];
    for (csv, at, msg) in cases {
        let e = native_error(&dir, csv);
        assert!(
            e.starts_with(&format!("{file}:{at}: ")) && e.contains(msg),
            "for {csv:?} expected {at} and {msg:?}, got:\n{e}"
        );
    }
    // The code frame shows the CSV line with a caret under the cell.
    let e = native_error(&dir, "arrival,pods\n0,1\n5,x\n");
    assert!(e.ends_with("3 | 5,x\n  |   ^"), "{e}");
}

#[test]
fn native_rows_out_of_arrival_order_are_an_error() {
    let dir = scratch("order");
    let file = dir.join("trace.csv").display().to_string();
    let e = native_error(&dir, "arrival,name\n0,a\n1h,b\n30m,c\n2h,d\n");
    assert!(
        e.starts_with(&format!(
            "{file}:4:1: arrival \"30m\" is before the previous row's (line 3): expected the native format's rows in arrival order"
        )),
        "{e}"
    );
    // Equal arrivals keep file order.
    let loaded = load_with(
        &dir,
        "arrival,name\n0,a\n60,b\n1m,c\n",
        &native_yaml(""),
        LoadOptions::default(),
    )
    .expect("loads");
    let names: Vec<&str> = loaded
        .world
        .workloads
        .iter()
        .map(|w| w.name.as_str())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
}

#[test]
fn a_missing_trace_file_names_every_place_looked() {
    let dir = scratch("missing");
    let root = dir.join("root");
    let yaml = native_yaml("").replace("path: trace.csv", "path: nowhere/trace.csv");
    let opts = LoadOptions {
        trace_root: Some(root.clone()),
        ..Default::default()
    };
    let e = match load_with(&dir, "arrival\n0\n", &yaml, opts) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    let scenario = dir.join("scenario.yaml").display().to_string();
    let line = yaml
        .lines()
        .position(|l| l.contains("path: nowhere"))
        .expect("path line")
        + 1;
    assert!(
        e.starts_with(&format!(
            "{scenario}:{line}:9: trace file \"nowhere/trace.csv\" not found; looked in:"
        )),
        "{e}"
    );
    for place in [
        format!(
            "{} (the scenario file's directory)",
            dir.join("nowhere/trace.csv").display()
        ),
        format!(
            "{} (--trace-root)",
            root.join("nowhere/trace.csv").display()
        ),
        format!(
            "{} (the default trace root beside the checkout)",
            default_trace_root()
                .expect("the tests run in a checkout")
                .join("nowhere/trace.csv")
                .display()
        ),
    ] {
        assert!(e.contains(&place), "missing {place:?} in:\n{e}");
    }
    assert!(
        e.contains("pass --trace-root DIR or set KUEUESIM_TRACE_ROOT"),
        "{e}"
    );
    assert!(e.contains("docs/traces.md"), "{e}");
    // Found under --trace-root when not beside the scenario.
    std::fs::create_dir_all(root.join("nowhere")).expect("dir");
    std::fs::write(root.join("nowhere/trace.csv"), "arrival,name\n0,x\n").expect("write");
    let opts = LoadOptions {
        trace_root: Some(root),
        ..Default::default()
    };
    let loaded = load_with(&dir, "arrival\n0\n", &yaml, opts).expect("found under the root");
    assert_eq!(loaded.world.workloads[0].name, "x");
}

#[test]
fn the_default_trace_root_is_shared_traces_beside_the_checkout() {
    let root = default_trace_root().expect("the tests run in a checkout");
    // That is the sibling `shared/traces` of the checkout (…/<checkout>/crates/<crate>).
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("checkout");
    if let Ok(found) = root.canonicalize() {
        assert_eq!(
            Some(found.as_path()),
            checkout
                .parent()
                .map(|p| p.join("shared/traces"))
                .as_deref()
        );
    }
}

#[test]
fn mappings_by_column_and_by_seeded_random_draw() {
    let dir = scratch("mappings");
    let mut csv = String::from("arrival,team,tier\n");
    for i in 0..400 {
        let team = ["alpha", "beta", "gamma"][i % 3];
        csv.push_str(&format!(
            "{i},{team},{}\n",
            if i % 2 == 0 { "t1" } else { "" }
        ));
    }
    let yaml = native_yaml(
        "  namespace: {value: research}
  localQueue:
    column: team
    map: {alpha: training, beta: interactive}
    default: training
  topology:
    column: tier
    map: {t1: \"required:rack\"}
  priorityClass:
    random:
    - {value: high, weight: 1}
    - {value: low, weight: 3}
  schedulerName:
    random:
    - {value: kai-scheduler}
    - {value: volcano}
",
    );
    let classes = |seed: Option<u64>| -> Vec<String> {
        let opts = LoadOptions {
            seed,
            ..Default::default()
        };
        let loaded = load_with(&dir, &csv, &yaml, opts).expect("loads");
        let w = &loaded.world;
        for (i, wl) in w.workloads.iter().enumerate() {
            assert_eq!(wl.namespace, "research");
            let want = if i % 3 == 1 {
                "interactive"
            } else {
                "training"
            };
            assert_eq!(lq_name(w, &wl.queue), want, "row {i}");
            let topo = if i % 2 == 0 {
                Some(TopologyRequest::Required("rack".into()))
            } else {
                None
            };
            assert_eq!(wl.pod_sets[0].topology_request, topo, "row {i}");
        }
        w.workloads
            .iter()
            .map(|wl| {
                format!(
                    "{}/{}",
                    wl.priority_class.clone().unwrap_or_default(),
                    wl.scheduler_name
                )
            })
            .collect()
    };
    let a = classes(None);
    assert_eq!(a, classes(None), "same seed, same draws");
    let b = classes(Some(8));
    assert_ne!(a, b, "another seed, other draws");
    // The weights show: about a quarter high.
    let high = a.iter().filter(|c| c.starts_with("high/")).count();
    assert!((70..=130).contains(&high), "{high} of 400 high");
    let kai = a.iter().filter(|c| c.ends_with("/kai-scheduler")).count();
    assert!((160..=240).contains(&kai), "{kai} of 400 on KAI");
    // Unmapped values of a mapped column are checked at their cell.
    let e = match load_with(
        &dir,
        "arrival,team\n0,alpha\n",
        &native_yaml("  priorityClass: {column: team}\n"),
        LoadOptions::default(),
    ) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("trace.csv:2:3: priority class \"alpha\" is no WorkloadPriorityClass"),
        "{e}"
    );
}

#[test]
fn mapping_settings_are_checked_where_written() {
    let dir = scratch("mapping-errors");
    let err = |extra: &str| -> String {
        match load_with(
            &dir,
            "arrival,team\n0,a\n",
            &native_yaml(extra),
            LoadOptions::default(),
        ) {
            Ok(_) => panic!("loads with {extra}"),
            Err(e) => e.to_string(),
        }
    };
    let yaml_line = |extra: &str, needle: &str| -> usize {
        native_yaml(extra)
            .lines()
            .position(|l| l.contains(needle))
            .expect("line")
            + 1
    };
    let extra = "  localQueue: {column: squad}\n";
    let e = err(extra);
    assert!(
        e.contains(&format!("scenario.yaml:{}:", yaml_line(extra, "squad")))
            && e.contains("column \"squad\" is not in the header"),
        "{e}"
    );
    let extra = "  localQueue: {value: a, column: team}\n";
    assert!(err(extra).contains("sets more than one of value, column, random"));
    let extra = "  priorityClass: {value: urgent}\n";
    let e = err(extra);
    assert!(
        e.contains(&format!("scenario.yaml:{}:", yaml_line(extra, "urgent")))
            && e.contains("priority class \"urgent\" is no WorkloadPriorityClass"),
        "{e}"
    );
    let extra = "  priorityClass:\n    random:\n    - {value: high, weight: 0}\n";
    assert!(err(extra).contains("weight 0: expected an integer ≥ 1"));
    let extra = "  schedulerName: {column: team, map: {a: slurm}}\n";
    assert!(err(extra).contains("schedulerName \"slurm\" is run by no scheduler"));
    let extra = "  typo: 1\n";
    assert!(err(extra).contains("typo"));
    let e = match load_with(
        &dir,
        "arrival\n0\n",
        &native_yaml("").replace("format: native", "format: slurm"),
        LoadOptions::default(),
    ) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains(
            "invalid format \"slurm\": expected one of native, alibaba-openb, philly, alibaba-dlrm"
        ),
        "{e}"
    );
    // A limit reads the first rows only.
    let loaded = load_with(
        &dir,
        "arrival,team\n0,a\n1,b\n2,c\n",
        &native_yaml("  limit: 2\n  localQueue: {column: team, default: training}\n"),
        LoadOptions::default(),
    )
    .expect("loads");
    assert_eq!(loaded.world.workloads.len(), 2);
}

#[test]
fn the_native_example_scenario_runs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/trace-native");
    let files = kueuesim_scenario::embedded::read_paths(&[dir]).expect("readable");
    let loaded = load(&files, LoadOptions::default()).expect("loads");
    assert_eq!(loaded.world.workloads.len(), 10);
    let outcome = Simulation::new(&loaded.world).run();
    let doc = result(&loaded.world, &outcome);
    let finished = doc
        .workloads
        .iter()
        .filter(|w| w.state == "Finished")
        .count();
    assert_eq!(finished, 9, "all but the endless serve-e finish");
}

// ---- the public traces -------------------------------------------------------------------

/// The trace root, or None (with a note) when it is missing and not required.
fn trace_root() -> Option<PathBuf> {
    let root = std::env::var_os("KUEUESIM_TRACE_ROOT")
        .map(PathBuf::from)
        .or_else(default_trace_root)
        .unwrap_or_else(|| PathBuf::from("(no checkout: set KUEUESIM_TRACE_ROOT)"));
    if root.is_dir() {
        return Some(root);
    }
    if std::env::var("KUEUESIM_REQUIRE_TRACES").is_ok_and(|v| v == "1") {
        panic!(
            "KUEUESIM_REQUIRE_TRACES=1 but the trace root {} is missing (docs/traces.md)",
            root.display()
        );
    }
    eprintln!(
        "note: skipping a public-trace test: no trace root at {} (set KUEUESIM_TRACE_ROOT; docs/traces.md)",
        root.display()
    );
    None
}

/// The values of column `col` of every data row of a CSV file, read independently of the
/// simulator's reader.
fn column_values(path: &Path, col: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("readable trace");
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let i = header.iter().position(|h| *h == col).expect("column");
    lines
        .map(|l| l.split(',').nth(i).expect("cell").to_string())
        .collect()
}

/// Loads `scenarios/traces/<name>.yaml`, with `patch` applied to its text.
fn load_trace_scenario(name: &str, patch: impl Fn(String) -> String) -> Loaded {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/traces")
        .join(format!("{name}.yaml"));
    let text = patch(std::fs::read_to_string(&path).expect("scenario"));
    load(
        &[SourceFile {
            name: path.display().to_string(),
            text,
        }],
        LoadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every trace row is one workload of the run's result, under its own name when the trace
/// names rows (`names`). With a horizon (`until`), rows arriving after it are counted as not
/// yet arrived and the rest must be in the result.
fn assert_conserved(
    loaded: &mut Loaded,
    rows: usize,
    names: Option<Vec<String>>,
    until: Option<SimTime>,
) {
    assert_eq!(
        loaded.world.workloads.len(),
        rows,
        "one workload per trace row"
    );
    if let Some(names) = &names {
        let mut loaded_names: Vec<&str> = loaded
            .world
            .workloads
            .iter()
            .map(|w| w.name.as_str())
            .collect();
        let mut want: Vec<&str> = names.iter().map(String::as_str).collect();
        loaded_names.sort_unstable();
        want.sort_unstable();
        assert_eq!(
            loaded_names, want,
            "the loaded workloads are the trace's rows"
        );
    }
    if until.is_some() {
        loaded.world.config.until = until;
    }
    let world = &loaded.world;
    let outcome = Simulation::new(world).run();
    let doc = result(world, &outcome);
    let late = world
        .workloads
        .iter()
        .filter(|w| until.is_some_and(|u| w.arrival > u))
        .count();
    assert_eq!(doc.summary.workloads.not_arrived as usize, late);
    assert_eq!(
        doc.workloads.len() + late,
        rows,
        "one result entry per arrived trace row"
    );
    if let Some(names) = names.filter(|_| until.is_none()) {
        let mut want: BTreeMap<String, usize> = BTreeMap::new();
        for n in names {
            *want.entry(n).or_default() += 1;
        }
        let mut got: BTreeMap<String, usize> = BTreeMap::new();
        for w in &doc.workloads {
            *got.entry(w.name.clone()).or_default() += 1;
        }
        assert_eq!(got, want, "the result's workloads are the trace's rows");
    }
    let states: BTreeMap<&str, usize> = doc.workloads.iter().fold(BTreeMap::new(), |mut m, w| {
        *m.entry(w.state).or_default() += 1;
        m
    });
    eprintln!("{rows} rows: {states:?}");
}

/// Runs the first `limit` rows, checking the engine's invariants after every event.
fn assert_invariants(loaded: &Loaded) {
    let mut sim = Simulation::new(&loaded.world).with_audit();
    let mut steps = 0u64;
    while sim.step(None) && !sim.only_futile_loops_left() {
        steps += 1;
        if let Err(e) = sim.check_invariants() {
            panic!("after event {steps} at {:?}: {e}", sim.now());
        }
    }
    assert!(steps > 0);
}

fn with_limit(format: &'static str, n: u32) -> impl Fn(String) -> String {
    move |t: String| {
        t.replacen(
            &format!("  format: {format}\n"),
            &format!("  format: {format}\n  limit: {n}\n"),
            1,
        )
    }
}

#[test]
fn openb_replays_every_pod_once() {
    let Some(root) = trace_root() else { return };
    let path = root.join("alibaba-gpu-v2023-openb/openb_pod_list_default.csv");
    let names = column_values(&path, "name");
    let mut loaded = load_trace_scenario("openb", |t| t);
    assert_eq!(
        loaded.world.nodes.len(),
        1523,
        "one node per row of the node list"
    );
    assert_conserved(&mut loaded, names.len(), Some(names), None);
}

#[test]
fn openb_prefix_keeps_the_invariants() {
    if trace_root().is_none() {
        return;
    }
    assert_invariants(&load_trace_scenario(
        "openb",
        with_limit("alibaba-openb", 300),
    ));
}

#[test]
fn openb_extra_nodes_is_a_one_line_what_if() {
    if trace_root().is_none() {
        return;
    }
    let base = load_trace_scenario("openb", with_limit("alibaba-openb", 10));
    let more = load_trace_scenario("openb", |t| {
        with_limit("alibaba-openb", 10)(t.replace("extraNodes: {}", "extraNodes: {G2: 64}"))
    });
    assert_eq!(more.world.nodes.len(), base.world.nodes.len() + 64);
    let gpu = |l: &Loaded| -> i64 {
        let g = l.world.resources.lookup("nvidia.com/gpu").expect("gpu");
        l.world.cluster_queues[0]
            .resource_groups
            .iter()
            .flat_map(|rg| rg.flavors.iter())
            .flat_map(|f| f.resources.iter())
            .filter(|r| r.resource == g)
            .map(|r| r.nominal)
            .sum()
    };
    assert_eq!(gpu(&more), gpu(&base) + 64 * 8, "G2 nodes have 8 GPUs");
}

#[test]
fn philly_replays_every_job_once() {
    let Some(root) = trace_root() else { return };
    let rows = column_values(&root.join("philly-pollux/philly.csv"), "cluster");
    let mut loaded = load_trace_scenario("philly", |t| t);
    // 15 virtual clusters, one ClusterQueue each; 11 from the table, 4 at the default size.
    assert_eq!(loaded.world.cluster_queues.len(), 15);
    // Arrival order (the file is not sorted).
    assert!(
        loaded
            .world
            .workloads
            .windows(2)
            .all(|w| w[0].arrival <= w[1].arrival)
    );
    // Every job's GPUs are in its pods, ≤ 8 per pod.
    let gpu = loaded
        .world
        .resources
        .lookup("nvidia.com/gpu")
        .expect("gpu");
    let gpus = column_values(&root.join("philly-pollux/philly.csv"), "num_gpus");
    let total_trace: i64 = gpus.iter().map(|g| g.parse::<i64>().expect("int")).sum();
    let total_sim: i64 = loaded
        .world
        .workloads
        .iter()
        .flat_map(|w| w.pod_sets.iter())
        .map(|p| {
            assert!(p.requests.get(gpu) <= 8);
            i64::from(p.count) * p.requests.get(gpu)
        })
        .sum();
    assert_eq!(total_sim, total_trace);
    assert_conserved(&mut loaded, rows.len(), None, None);
}

#[test]
fn philly_prefix_keeps_the_invariants() {
    if trace_root().is_none() {
        return;
    }
    assert_invariants(&load_trace_scenario("philly", with_limit("philly", 1000)));
}

#[test]
fn dlrm_replays_every_instance_once() {
    let Some(root) = trace_root() else { return };
    let path = root.join("alibaba-gpu-v2025-dlrm/disaggregated_DLRM_trace.csv");
    // `instance_0` is no DNS-1123 subdomain: each name is the cell mapped (docs/traces.md,
    // "Names").
    let names: Vec<String> = column_values(&path, "instance_sn")
        .iter()
        .map(|n| trace_name(n))
        .collect();
    let mut loaded = load_trace_scenario("dlrm", |t| t);
    // The whole month takes over a minute in the debug test profile (17 s in release, see
    // docs/traces.md): every instance is loaded, the run covers the first 5 days.
    assert_conserved(
        &mut loaded,
        names.len(),
        Some(names),
        Some(SimTime::from_secs(5 * 86_400)),
    );
}

#[test]
fn dlrm_prefix_keeps_the_invariants() {
    if trace_root().is_none() {
        return;
    }
    assert_invariants(&load_trace_scenario(
        "dlrm",
        with_limit("alibaba-dlrm", 800),
    ));
}

// ---- adapters on small synthetic files in the public formats ---------------------------

/// Loads `yaml` (as `dir/scenario.yaml`) after writing `files` into `dir`.
fn load_files(dir: &Path, files: &[(&str, &str)], yaml: &str) -> Result<Loaded, ScenarioError> {
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("write");
    }
    let name = dir.join("scenario.yaml").display().to_string();
    load(
        &[SourceFile {
            name,
            text: yaml.to_string(),
        }],
        LoadOptions::default(),
    )
}

const OPENB_NODES: &str = "sn,cpu_milli,memory_mib,gpu,model\ncpu-0,32000,65536,0,\ng-0,96000,393216,8,G2\ng-1,96000,393216,8,G2\nt-0,64000,262144,2,T4\n";

fn openb_yaml(extra: &str) -> String {
    format!(
        "apiVersion: kueuesim.io/v1alpha1
kind: WorkloadTrace
metadata: {{name: ob}}
spec:
  format: alibaba-openb
  path: pods.csv
  openb:
    nodes: nodes.csv
    clusterQueue: openb
{extra}"
    )
}

#[test]
fn openb_adapter_generates_the_cluster_and_maps_pods() {
    let dir = scratch("openb");
    let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np0,4000,8192,1,500,,LS,Running,0,100,10\np1,8000,16384,2,1000,T4,BE,Failed,5,50,\np2,1000,1024,0,0,,BE,Pending,7,20,\n";
    let loaded = load_files(
        &dir,
        &[("pods.csv", pods), ("nodes.csv", OPENB_NODES)],
        &openb_yaml(""),
    )
    .expect("loads");
    let w = &loaded.world;
    assert_eq!(w.nodes.len(), 4);
    let flavors: Vec<&str> = w.flavors.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(flavors, ["cpu-only", "g2", "t4"]);
    let gpu = w.resources.lookup("nvidia.com/gpu").expect("gpu");
    let cpu = w.resources.lookup("cpu").expect("cpu");
    let mem = w.resources.lookup("memory").expect("memory");
    // Quota: the nodes' capacity, per flavor, CPU-only first.
    let cq = &w.cluster_queues[0];
    let quota = |flavor: usize, r| {
        cq.resource_groups[0].flavors[flavor]
            .resources
            .iter()
            .find(|q| q.resource == r)
            .map(|q| q.nominal)
    };
    assert_eq!(quota(0, cpu), Some(32_000));
    assert_eq!(quota(1, gpu), Some(16));
    assert_eq!(quota(1, mem), Some((2 * 393_216) << 20));
    assert_eq!(quota(2, gpu), Some(2));
    let (p0, p1, p2) = (&w.workloads[0], &w.workloads[1], &w.workloads[2]);
    assert_eq!(p0.name, "p0");
    assert_eq!(p0.owner, Some(("Pod".to_string(), "p0".to_string())));
    // A GPU-sharing pod takes a whole GPU by default; it ran from scheduled to deletion.
    assert_eq!(p0.pod_sets[0].requests.get(gpu), 1);
    assert_eq!(p0.pod_sets[0].requests.get(cpu), 4000);
    assert_eq!(p0.pod_sets[0].requests.get(mem), 8192 << 20);
    assert_eq!(p0.duration, Some(SimDuration::from_secs(90)));
    // One model: a nodeSelector on the generated label; never scheduled: from creation.
    assert_eq!(p1.arrival, SimTime::from_secs(5));
    assert_eq!(p1.duration, Some(SimDuration::from_secs(45)));
    assert_eq!(
        p1.pod_sets[0].node_selector,
        kueuesim_model::Labels::new(vec![("kueuesim.io/gpu-model".into(), "T4".into())])
    );
    assert_eq!(p2.pod_sets[0].requests.get(gpu), 0);
    // gpuSharing milli: shares in thousandths, nodes offer 1000 per GPU.
    let loaded = load_files(
        &dir,
        &[("pods.csv", pods)],
        &openb_yaml("    gpuSharing: milli\n"),
    )
    .expect("loads");
    let w = &loaded.world;
    let milli = w
        .resources
        .lookup("kueuesim.io/gpu-milli")
        .expect("gpu-milli");
    assert_eq!(w.workloads[0].pod_sets[0].requests.get(milli), 500);
    assert_eq!(w.workloads[1].pod_sets[0].requests.get(milli), 2000);
    assert_eq!(
        w.nodes[1].allocatable.get(milli.index()).copied(),
        Some(8000)
    );
    // Several models: an error at the cell unless gpuSpec says what to do.
    let multi =
        "name,cpu_milli,memory_mib,num_gpu,gpu_spec,creation_time\nq0,1000,1024,1,V100M16|T4,0\n";
    let e = match load_files(&dir, &[("pods.csv", multi)], &openb_yaml("")) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("pods.csv:2:16: gpu_spec \"V100M16|T4\" allows several GPU models"),
        "{e}"
    );
    let loaded = load_files(&dir, &[], &openb_yaml("    gpuSpec: first\n")).expect("loads");
    assert_eq!(
        loaded.world.workloads[0].pod_sets[0].node_selector,
        kueuesim_model::Labels::new(vec![("kueuesim.io/gpu-model".into(), "V100M16".into())])
    );
    // extraNodes of a model the node list lacks: an error at the setting.
    let e = match load_files(&dir, &[], &openb_yaml("    extraNodes: {H100: 4}\n")) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("extraNodes names GPU model \"H100\", which no node of"),
        "{e}"
    );
    let no_nodes = openb_yaml("    extraNodes: {G2: 4}\n")
        .replace("    nodes: nodes.csv\n    clusterQueue: openb\n", "");
    let e = match load_files(&dir, &[], &no_nodes) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("openb.extraNodes needs openb.nodes"), "{e}");
    // A bad node-list cell points into the node list.
    let e = match load_files(
        &dir,
        &[(
            "nodes.csv",
            "sn,cpu_milli,memory_mib,gpu,model\nn0,lots,1,0,\n",
        )],
        &openb_yaml(""),
    ) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("nodes.csv:2:4: cpu_milli \"lots\": expected an integer from 0 to"),
        "{e}"
    );
}

#[test]
fn philly_adapter_sorts_jobs_splits_gangs_and_generates_queues() {
    let dir = scratch("philly");
    let jobs = "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-01 00:01:00,60.0,12,720.0,vc1\n2017-10-01 00:00:00,30.0,1,30.0,vc2\n2017-10-01 00:00:30,10.0,16,160.0,zz9\n";
    let vcs = "vc,node num\nvc1,2\nvc2,1\n";
    let yaml = "apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: p}
value: 5
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadTrace
metadata: {name: ph}
spec:
  format: philly
  path: jobs.csv
  philly: {vcNodes: vcs.csv, defaultVcNodes: 3, extraNodes: 2}
  priorityClass: {value: p}
";
    let loaded = load_files(&dir, &[("jobs.csv", jobs), ("vcs.csv", vcs)], yaml).expect("loads");
    let w = &loaded.world;
    let cqs: Vec<&str> = w.cluster_queues.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(cqs, ["vc1", "vc2", "zz9"]);
    assert_eq!(w.nodes.len(), 2 + 1 + 3 + 2);
    let gpu = w.resources.lookup("nvidia.com/gpu").expect("gpu");
    let nominal: Vec<i64> = w
        .cluster_queues
        .iter()
        .map(|c| c.resource_groups[0].flavors[0].resources[0].nominal)
        .collect();
    assert_eq!(nominal, [16, 8, 24]);
    // The cohort holds the extra nodes' GPUs.
    let cohort = w
        .cohorts
        .iter()
        .find(|c| c.name == "philly")
        .expect("cohort");
    assert_eq!(
        cohort.resource_groups[0].flavors[0].resources[0].nominal,
        16
    );
    // Arrival order, from the earliest submit time; names keep the file's row index.
    let rows: Vec<(&str, i64)> = w
        .workloads
        .iter()
        .map(|x| (x.name.as_str(), x.arrival.millis()))
        .collect();
    assert_eq!(
        rows,
        [
            ("ph-000001", 0),
            ("ph-000002", 30_000),
            ("ph-000000", 60_000)
        ]
    );
    let twelve = &w.workloads[2];
    assert_eq!(lq_name(w, &twelve.queue), "vc1");
    assert_eq!(twelve.priority, 5);
    let sets: Vec<(&str, u32, i64)> = twelve
        .pod_sets
        .iter()
        .map(|p| (p.name.as_str(), p.count, p.requests.get(gpu)))
        .collect();
    assert_eq!(sets, [("workers", 1, 8), ("rest", 1, 4)]);
    assert_eq!(w.workloads[1].pod_sets[0].count, 2);
    assert_eq!(twelve.duration, Some(SimDuration::from_secs(60)));
    // Every job runs to completion.
    let outcome = Simulation::new(w).run();
    let doc = result(w, &outcome);
    assert!(
        doc.workloads.iter().all(|x| x.state == "Finished"),
        "{:?}",
        doc.workloads.iter().map(|x| x.state).collect::<Vec<_>>()
    );
    let e = match load_files(
        &dir,
        &[],
        &yaml.replace("vcNodes: vcs.csv, defaultVcNodes: 3, ", ""),
    ) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("philly.extraNodes needs philly.vcNodes"), "{e}");
    // nodePercent scales every virtual cluster's nodes and quota (half up, at least one
    // node); the extra nodes stay as given. 50 %: vc1 2 → 1, vc2 1 → 1 (not 0), zz9 3 → 2.
    let half = load_files(
        &dir,
        &[("jobs.csv", jobs), ("vcs.csv", vcs)],
        &yaml.replace("extraNodes: 2}", "extraNodes: 2, nodePercent: 50}"),
    )
    .expect("loads");
    let nominal: Vec<i64> = half
        .world
        .cluster_queues
        .iter()
        .map(|c| c.resource_groups[0].flavors[0].resources[0].nominal)
        .collect();
    assert_eq!(nominal, [8, 8, 16]);
    assert_eq!(half.world.nodes.len(), 1 + 1 + 2 + 2);
    let e = match load_files(
        &dir,
        &[("jobs.csv", jobs), ("vcs.csv", vcs)],
        &yaml.replace("extraNodes: 2}", "extraNodes: 2, nodePercent: 0}"),
    ) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("philly.nodePercent 0: expected 1 to 1000"),
        "{e}"
    );
    // A bad timestamp points at its cell, even though the file is sorted after reading.
    let e = match load_files(
        &dir,
        &[(
            "jobs.csv",
            "timestamp,duration,num_gpus,gpu_time,cluster\nyesterday,1,1,1,vc1\n",
        )],
        yaml,
    ) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("jobs.csv:2:1: timestamp \"yesterday\": expected YYYY-MM-DD HH:MM:SS"),
        "{e}"
    );
    // A virtual cluster of absurd size is an error at its cell, not billions of nodes.
    let e = match load_files(
        &dir,
        &[("vcs.csv", "vc,node num\nvc1,9223372036854775807\n")],
        yaml,
    ) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains(
            "vcs.csv:2:5: node num \"9223372036854775807\": expected an integer from 0 to 100000"
        ),
        "{e}"
    );
}

#[test]
fn dlrm_adapter_keeps_instances_from_before_and_beyond_the_window() {
    let dir = scratch("dlrm");
    let csv = "instance_sn,role,app_name,cpu_request,cpu_limit,gpu_request,gpu_limit,rdma_request,rdma_limit,memory_request,memory_limit,disk_request,disk_limit,max_instance_per_node,creation_time,scheduled_time,deletion_time\n\
i0,HN,app_0,12,12,1,1,25,25,120.0,120.0,640.0,800.0,8,,,\n\
i1,CN,app_1,64,64,0,0,1,1,256.5,256.5,10,10,-1,100.0000000000001,101.0,\n\
i2,CN,app_1,48,48,0,0,1,1,128,128,10,10,-1,,,3600.0\n\
i3,HN,app_0,8,8,1,1,25,25,60,60,1,1,8,50.0,50.0,80.0\n";
    let yaml = "apiVersion: kueuesim.io/v1alpha1
kind: WorkloadTrace
metadata: {name: d}
spec:
  format: alibaba-dlrm
  path: t.csv
";
    let loaded = load_files(&dir, &[("t.csv", csv)], yaml).expect("loads");
    let w = &loaded.world;
    let rows: Vec<(&str, i64, Option<i64>)> = w
        .workloads
        .iter()
        .map(|x| {
            (
                x.name.as_str(),
                x.arrival.millis(),
                x.duration.map(|d| d.millis()),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("i0", 0, None),
            ("i2", 0, Some(3_600_000)),
            ("i3", 50_000, Some(30_000)),
            ("i1", 100_000, None),
        ]
    );
    let i1 = &w.workloads[3];
    // The owner `app_1` is no DNS-1123 subdomain: mapped (docs/traces.md, "Names").
    let owner = trace_name("app_1");
    assert!(owner.starts_with("app-1-") && owner.len() == 14, "{owner}");
    assert_eq!(i1.owner, Some(("Deployment".to_string(), owner)));
    let cpu = w.resources.lookup("cpu").expect("cpu");
    let mem = w.resources.lookup("memory").expect("memory");
    assert_eq!(i1.pod_sets[0].requests.get(cpu), 64_000);
    assert_eq!(
        i1.pod_sets[0].requests.get(mem),
        256 * (1 << 30) + (1 << 29)
    );
}

#[test]
fn openb_device_sharing_sets_the_target_and_inflate_follows_the_fgd_tuning() {
    use kueuesim_model::gpu::GpuDemand;
    let dir = scratch("openb-device");
    // 18 GPUs in the node list; the pods ask 0.5 + 2 + 0 GPUs.
    let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np0,4000,8192,1,500,,LS,Running,0,100,10\np1,8000,16384,2,1000,,BE,Failed,5,50,\np2,1000,1024,0,0,,BE,Pending,7,20,\n";
    let loaded = load_files(
        &dir,
        &[("pods.csv", pods), ("nodes.csv", OPENB_NODES)],
        &openb_yaml("    gpuSharing: device\n"),
    )
    .expect("loads");
    let w = &loaded.world;
    assert!(w.config.gpu.devices);
    // The summary counts the GPUs as devices; the nodes list no `nvidia.com/gpu` (shares are
    // charged as milli-GPUs), so no "0 GPUs" line.
    let outcome = Simulation::new(w).run();
    let summary = kueuesim_report::output::summary_text(
        w,
        &kueuesim_report::output::result_with(w, &outcome, false),
    );
    assert!(summary.contains("GPU devices:  18 GPUs"), "{summary}");
    assert!(!summary.contains("GPU:          0 GPUs"), "{summary}");
    // Every shape a third of the pods (95 % of 3 pods needs all three).
    let mut target: Vec<_> = w
        .config
        .gpu
        .target
        .iter()
        .map(|t| (t.cpu_milli, t.gpu))
        .collect();
    target.sort();
    assert_eq!(
        target,
        [
            (1000, None),
            (4000, Some(GpuDemand::Share(500))),
            (8000, Some(GpuDemand::Whole(2)))
        ]
    );
    assert!(
        w.config
            .gpu
            .target
            .iter()
            .all(|t| (t.freq - 1.0 / 3.0).abs() < 1e-12)
    );
    // Inflated to 2 × 18 GPUs: the three pods shuffled, then copies drawn until the next would
    // pass 36,000 milli; each at its position's second, named after it, never leaving.
    let loaded = load_files(
        &dir,
        &[("pods.csv", pods)],
        &openb_yaml("    gpuSharing: device\n    inflate: {ratio: \"2\", seed: 7}\n"),
    )
    .expect("loads");
    let w = &loaded.world;
    let milli = w.resources.lookup("kueuesim.io/gpu-milli").expect("milli");
    let total: i64 = w
        .workloads
        .iter()
        .map(|x| x.pod_sets[0].requests.get(milli))
        .sum();
    // Upstream stops when the drawn pod's per-GPU milli would pass the target, so a 2-GPU
    // pod may take it past by up to 1000.
    assert!(total > 35_000 && total <= 37_000, "{total}");
    for (k, x) in w.workloads.iter().enumerate() {
        assert_eq!(x.arrival, SimTime::from_secs(k as i64));
        assert!(x.name.ends_with(&format!("-{k:05}")), "{}", x.name);
        assert_eq!(x.duration, None);
    }
    // The same seed gives the same list; a bad ratio is an error at its place.
    let again = load_files(
        &dir,
        &[],
        &openb_yaml("    gpuSharing: device\n    inflate: {ratio: \"2\", seed: 7}\n"),
    )
    .expect("loads");
    let names = |w: &kueuesim_model::World| -> Vec<String> {
        w.workloads.iter().map(|x| x.name.clone()).collect()
    };
    assert_eq!(names(&again.world), names(w));
    let e = match load_files(&dir, &[], &openb_yaml("    inflate: {ratio: \"-1\"}\n")) {
        Ok(_) => panic!("loads"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("openb.inflate.ratio \"-1\": expected a number above 0"),
        "{e}"
    );
}
