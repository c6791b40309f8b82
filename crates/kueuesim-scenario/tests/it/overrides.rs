//! `--patch` and `--set` (what-if overrides): strategic merge into the scenario's objects,
//! objects added and removed, generated trace objects overridden, and every error pointing
//! into the patch file or `--set` argument that caused it.

use kueuesim_model::World;
use kueuesim_scenario::{LoadOptions, Loaded, ScenarioError, SourceFile, load};

use crate::util::{FLAVOR, cq};

const JOB: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {kueuesim.io/duration: 1h}
spec:
  parallelism: 2
  template:
    spec:
      containers:
      - name: main
        resources:
          requests: {nvidia.com/gpu: 4}
";

const LQ: &str = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: default}\nspec: {clusterQueue: cq}\n";

fn base() -> SourceFile {
    SourceFile {
        name: "base.yaml".into(),
        text: format!("{FLAVOR}---\n{}---\n{LQ}---\n{JOB}", cq("8")),
    }
}

fn with(patches: &[&str], sets: &[&str]) -> Result<Loaded, ScenarioError> {
    let patches = patches
        .iter()
        .enumerate()
        .map(|(i, t)| SourceFile {
            name: format!("patch{}.yaml", i + 1),
            text: t.to_string(),
        })
        .collect();
    load(
        &[base()],
        LoadOptions {
            patches,
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        },
    )
}

fn gpu_quota(w: &World, cq: &str) -> i64 {
    let c = w.cluster_queues.iter().find(|c| c.name == cq).expect("cq");
    c.resource_groups[0].flavors[0].resources[0].nominal
}

#[test]
fn set_changes_one_field_of_one_object() {
    let base = with(&[], &[]).expect("loads");
    assert_eq!(gpu_quota(&base.world, "cq"), 8);
    let l = with(
        &[],
        &["clusterqueue/cq:spec.resourceGroups[0].flavors[name=default].resources[name=nvidia.com/gpu].nominalQuota=24"],
    )
    .expect("loads");
    assert_eq!(gpu_quota(&l.world, "cq"), 24);
    // Short names, a namespace, a new field, and a flow value.
    let l = with(
        &[],
        &[
            "job/default/train:spec.parallelism=3",
            "cq/cq:spec.preemption={withinClusterQueue: LowerPriority}",
        ],
    )
    .expect("loads");
    assert_eq!(l.world.workloads[0].pod_sets[0].count, 3);
}

#[test]
fn patch_merges_by_name_and_covered_resources() {
    let patch = "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 16
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: default}
spec:
  template:
    spec:
      containers:
      - name: main
        resources:
          requests: {nvidia.com/gpu: 2}
";
    let l = with(&[patch], &[]).expect("loads");
    assert_eq!(gpu_quota(&l.world, "cq"), 16);
    let w = &l.world.workloads[0];
    let gpu = l.world.resources.lookup("nvidia.com/gpu").expect("gpu");
    // The container merged by name: its requests changed, the Job's parallelism stayed.
    assert_eq!(w.pod_sets[0].requests.get(gpu), 2);
    assert_eq!(w.pod_sets[0].count, 2);
}

#[test]
fn patch_adds_and_deletes_objects() {
    let patch = "apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: default}
$patch: delete
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq2, namespace: default}
spec: {clusterQueue: cq}
";
    let l = with(&[patch], &[]).expect("loads");
    assert!(l.world.workloads.is_empty());
    assert_eq!(l.world.local_queues.len(), 2);
    assert!(
        l.warnings.iter().any(|w| w.starts_with(
            "patch1.yaml:7:7: LocalQueue \"lq2\" is not in the scenario: the patch adds it"
        )),
        "{:?}",
        l.warnings
    );
    let e = with(&[&patch.replace("train", "trian")], &[])
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("patch1.yaml:1:1: `$patch: delete` of Job \"trian\", but the scenario has none (closest: \"train\")"), "{e}");
}

#[test]
fn errors_point_into_the_patch_or_the_argument() {
    // A bad value set by a patch is reported in the patch file, with its line.
    let patch = "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  queueingStrategy: StrictFIF
";
    let e = with(&[patch], &[]).unwrap_err().to_string();
    assert!(
        e.starts_with("patch1.yaml:5:21: invalid queueingStrategy \"StrictFIF\""),
        "{e}"
    );
    assert!(e.contains("5 |   queueingStrategy: StrictFIF"), "{e}");
    // ... and one set by --set in the argument, at its column.
    let e = with(
        &[],
        &["cq/cq:spec.resourceGroups[0].flavors[0].resources[0].nominalQuota=lots"],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("--set[1]:1:67: invalid quantity \"lots\""),
        "{e}"
    );
    // Columns count characters: the two-byte `é`s before the value do not shift it.
    let e = with(&[], &["cq/cq:metadata.labels.équipe=é: ["])
        .unwrap_err()
        .to_string();
    // (33: the `[`, the 33rd character.)
    assert!(e.starts_with("--set[1]:1:33: unclosed bracket"), "{e}");
    // A value the patch left alone is still reported in the base file.
    let e = with(&[], &["job/train:spec.parallelism=-1"])
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("--set[1]:1:"), "{e}");
    let e = load(
        &[SourceFile {
            name: "base.yaml".into(),
            text: base().text.replace("nominalQuota: 8", "nominalQuota: x8"),
        }],
        LoadOptions {
            sets: vec!["job/train:spec.parallelism=1".into()],
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("base.yaml:18:23: invalid quantity \"x8\""),
        "{e}"
    );
}

#[test]
fn a_set_that_matches_nothing_names_the_closest() {
    let cases = [
        (
            "cq/cq:spec.resourceGroups[0].flavors[name=defualt].nominalQuota=1",
            "--set[1]:1:37: spec.resourceGroups[0].flavors[name=defualt] matches nothing: no item with name=defualt (closest: \"default\")",
        ),
        (
            "cq/cq:spec.resourceGroups[3].flavors=[]",
            "--set[1]:1:26: spec.resourceGroups[3] matches nothing: the list has 1 item (indexes from 0)",
        ),
        (
            "cq/qc:spec.cohort=x",
            "--set[1]:1:1: the scenario has no ClusterQueue named \"qc\" (closest: \"cq\")",
        ),
        (
            "clusterqeue/cq:spec.cohort=x",
            "--set[1]:1:1: the scenario has no object of kind \"clusterqeue\" (closest: \"ClusterQueue\")",
        ),
        (
            "cq/cq:spec.namespaceSelector[0]=x",
            "--set[1]:1:29: spec.namespaceSelector[0] matches nothing: spec.namespaceSelector is a mapping, not a list",
        ),
        (
            "cq/cq spec.cohort=x",
            "--set[1]:1:1: no `:` after the object",
        ),
        (
            "cq/cq:spec.cohort",
            "--set[1]:1:18: no `=VALUE` after the path",
        ),
    ];
    for (arg, want) in cases {
        let e = with(&[], &[arg]).unwrap_err().to_string();
        assert!(e.starts_with(want), "{arg}:\n{e}\nwanted {want}");
    }
}

#[test]
fn overrides_reach_the_objects_a_trace_generates() {
    let dir = std::env::temp_dir().join(format!("kueuesim-overrides-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("jobs.csv"),
        "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-01 00:00:00,30.0,1,30.0,vc1\n",
    )
    .expect("write");
    std::fs::write(dir.join("vcs.csv"), "vc,node num\nvc1,2\nvc2,1\n").expect("write");
    let yaml = "apiVersion: kueuesim.io/v1alpha1
kind: WorkloadTrace
metadata: {name: ph}
spec:
  format: philly
  path: jobs.csv
  philly: {vcNodes: vcs.csv}
";
    let path = dir.join("scenario.yaml");
    std::fs::write(&path, yaml).expect("write");
    let files = kueuesim_scenario::embedded::read_paths(&[path]).expect("readable");
    let load_with = |sets: &[&str]| {
        load(
            &files,
            LoadOptions {
                sets: sets.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            },
        )
    };
    let l = load_with(&[]).expect("loads");
    assert_eq!(gpu_quota(&l.world, "vc1"), 16);
    // The WorkloadTrace first (its adapter then generates one node more), then the
    // ClusterQueue the adapter generated.
    let l = load_with(&[
        "workloadtrace/ph:spec.philly.defaultVcNodes=1",
        "cq/vc1:spec.resourceGroups[0].flavors[0].resources[0].nominalQuota=24",
    ])
    .expect("loads");
    assert_eq!(gpu_quota(&l.world, "vc1"), 24);
    assert_eq!(gpu_quota(&l.world, "vc2"), 8);
    // A name pattern sets the field in every generated ClusterQueue it matches.
    let l = load_with(&["cq/vc*:spec.resourceGroups[0].flavors[0].resources[0].nominalQuota=40"])
        .expect("loads");
    assert_eq!(gpu_quota(&l.world, "vc1"), 40);
    assert_eq!(gpu_quota(&l.world, "vc2"), 40);
    let l = load_with(&["cq/*2:spec.resourceGroups[0].flavors[0].resources[0].nominalQuota=40"])
        .expect("loads");
    assert_eq!(gpu_quota(&l.world, "vc1"), 16);
    assert_eq!(gpu_quota(&l.world, "vc2"), 40);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_set_with_a_pattern_sets_every_object_it_matches() {
    let two = SourceFile {
        name: "two.yaml".into(),
        text: format!(
            "{FLAVOR}---\n{}---\n{}---\n{LQ}---\n{JOB}",
            cq("8"),
            cq("8").replace("name: cq", "name: cq-b")
        ),
    };
    let load_with = |sets: &[&str]| {
        load(
            std::slice::from_ref(&two),
            LoadOptions {
                sets: sets.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            },
        )
    };
    let l = load_with(&[]).expect("loads");
    assert_eq!(
        (gpu_quota(&l.world, "cq"), gpu_quota(&l.world, "cq-b")),
        (8, 8)
    );
    let set = "cq/*:spec.resourceGroups[0].flavors[name=default].resources[name=nvidia.com/gpu].nominalQuota=24";
    let l = load_with(&[set]).expect("loads");
    assert_eq!(
        (gpu_quota(&l.world, "cq"), gpu_quota(&l.world, "cq-b")),
        (24, 24)
    );
    // A namespace pattern, and a pattern that matches one object alone.
    let l = load_with(&[
        "job/*/tr*:spec.parallelism=3",
        "cq/*-b:spec.resourceGroups[0].flavors[0].resources[0].nominalQuota=2",
    ])
    .expect("loads");
    assert_eq!(l.world.workloads[0].pod_sets[0].count, 3);
    assert_eq!(
        (gpu_quota(&l.world, "cq"), gpu_quota(&l.world, "cq-b")),
        (8, 2)
    );
    // Errors: a pattern that matches nothing lists the names; a path that fails on one of
    // the objects names it.
    let e = load_with(&["cq/x*:spec.cohort=y"]).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "--set[1]:1:1: the scenario has no ClusterQueue matching \"x*\" (its objects: cq, cq-b)"
        ),
        "{e}"
    );
    let e = load_with(&["lq/x*/*:spec.clusterQueue=cq"])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "has no LocalQueue matching \"*\" in namespace \"x*\" (its objects: default/lq)"
        ),
        "{e}"
    );
    // A patch's namespace is a name, not a pattern: it adds the object, as before.
    let patched = load(
        std::slice::from_ref(&two),
        LoadOptions {
            patches: vec![SourceFile {
                name: "p.yaml".into(),
                text: "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: \"def*\"}\nspec: {clusterQueue: cq-b}\n".into(),
            }],
            ..Default::default()
        },
    );
    let warned = match &patched {
        Ok(l) => l
            .warnings
            .iter()
            .any(|w| w.contains("is not in the scenario: the patch adds it")),
        Err(_) => true,
    };
    assert!(
        warned,
        "a patch namespace with * must not match namespace default"
    );
    let e = load_with(&["cq/*:spec.resourceGroups[0].flavors[name=nope].nominalQuota=1"])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("--set[1]:1:36: ClusterQueue \"cq\": spec.resourceGroups[0].flavors[name=nope] matches nothing"),
        "{e}"
    );
}
