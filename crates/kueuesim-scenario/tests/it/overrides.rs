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

#[test]
fn an_override_that_writes_an_unknown_field_is_an_error_naming_the_closest() {
    // A misspelt leaf under a selector path, and one under an index path: exit-2 errors at the
    // field's column of the argument, naming the field it should be (strict field validation,
    // kubectl's default), where the scenario file's own unknown fields stay warnings.
    let cases = [
        (
            "cq/cq:spec.resourceGroups[0].flavors[name=default].resources[name=nvidia.com/gpu].nominalQuot=24",
            "--set[1]:1:83: ClusterQueue field spec.resourceGroups[0].flavors[0].resources[0].nominalQuot is not a field of kueue.x-k8s.io v1beta1 or v1beta2 (closest: nominalQuota); an override must name a field the kind has",
        ),
        (
            "cq/cq:spec.queueingStrateg=StrictFIFO",
            "--set[1]:1:12: ClusterQueue field spec.queueingStrateg is not a field of kueue.x-k8s.io v1beta1 or v1beta2 (closest: queueingStrategy)",
        ),
        // A new mapping on the way to a field: the first unknown key is the one named.
        (
            "cq/cq:spec.fairSharng.weight=2",
            "--set[1]:1:12: ClusterQueue field spec.fairSharng is not a field of kueue.x-k8s.io v1beta1 or v1beta2 (closest: fairSharing)",
        ),
        // A field of the other API version that the loader reads all the same: the
        // AdmissionCheck it names must exist.
        (
            "cq/cq:spec.admissionChecks=[a]",
            "--set[1]:1:29: admission check \"a\": no such AdmissionCheck; expected one defined in the input",
        ),
        // A Kubernetes kind's field, at the top of its spec and in a container.
        (
            "job/train:spec.paralelism=3",
            "--set[1]:1:16: Job field spec.paralelism is not a field of batch/v1 Job (closest: parallelism); an override must name a field the kind has",
        ),
        (
            "job/train:spec.template.spec.containers[name=main].resources.request.cpu=2",
            "--set[1]:1:62: Job field spec.template.spec.containers[0].resources.request is not a field of batch/v1 Job (closest: requests)",
        ),
        // An annotation under a simulator's domain that nothing reads.
        (
            "job/train:metadata.annotations.kueuesim\\.io/duraton=2h",
            "--set[1]:1:32: annotation kueuesim.io/duraton is neither read by the simulator nor a known Kueue, KAI or Volcano key (closest: kueuesim.io/duration); an override must name a field the kind has",
        ),
    ];
    for (arg, want) in cases {
        let e = with(&[], &[arg]).unwrap_err().to_string();
        assert!(e.starts_with(want), "{arg}:\n{e}\nwanted {want}");
    }
    // The same in a patch: at the patch file's line and column.
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
        nominalQuot: 24
";
    let e = with(&[patch], &[]).unwrap_err().to_string();
    assert!(
        e.starts_with("patch1.yaml:11:9: ClusterQueue field spec.resourceGroups[0].flavors[0].resources[0].nominalQuot is not a field of kueue.x-k8s.io v1beta1 or v1beta2 (closest: nominalQuota)"),
        "{e}"
    );
    // A patch that adds an object is checked whole.
    let added = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq2, namespace: default}\nspec: {clusterQueu: cq}\n";
    let e = with(&[added], &[]).unwrap_err().to_string();
    assert!(
        e.starts_with("patch1.yaml:4:8: LocalQueue field spec.clusterQueu is not a field of kueue.x-k8s.io v1beta1 or v1beta2 (closest: clusterQueue)"),
        "{e}"
    );
    // A field of the other version that the loader reads all the same stays the lint's
    // warning; a right field is no error; a kueuesim kind's unknown field names the closest.
    let l = with(&[], &["cq/cq:spec.cohort=org"]).expect("read all the same");
    assert!(
        l.warnings
            .iter()
            .any(|w| w.contains("spec.cohort is a field of kueue.x-k8s.io/v1beta1")),
        "{:?}",
        l.warnings
    );
    let base_unknown = load(
        &[SourceFile {
            name: "base.yaml".into(),
            text: base().text.replace("namespaceSelector", "namespaceSelectr"),
        }],
        LoadOptions {
            sets: vec!["cq/cq:spec.queueingStrategy=StrictFIFO".into()],
            ..Default::default()
        },
    )
    .expect("the scenario's own unknown field is a warning");
    assert!(
        base_unknown
            .warnings
            .iter()
            .any(|w| w.starts_with("base.yaml:") && w.contains("namespaceSelectr")),
        "{:?}",
        base_unknown.warnings
    );
    let sim = "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {podStartup: 1s}\n";
    let e = load(
        &[SourceFile {
            name: "base.yaml".into(),
            text: format!("{}---\n{sim}", base().text),
        }],
        LoadOptions {
            sets: vec!["simulation/s:spec.podStartp=4s".into()],
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("--set[1]:1:19: unknown field `podStartp`, expected one of")
            && e.contains("(closest: \"podStartup\")"),
        "{e}"
    );
}

#[test]
fn a_configuration_patch_needs_no_name_and_a_star_patches_every_object() {
    let fair = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare]\n";
    // No Configuration in the scenario: the patch adds one, without a warning (there is no
    // name to mistype), and fair sharing is on.
    let l = with(&[fair], &[]).expect("loads");
    assert!(l.world.config.kueue.fair_sharing.is_some());
    assert!(
        !l.warnings.iter().any(|w| w.contains("Configuration")),
        "{:?}",
        l.warnings
    );
    // With one in the scenario (named or not), the patch merges into it.
    let config = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady: {timeout: 7m}\n";
    let files = [SourceFile {
        name: "base.yaml".into(),
        text: format!("{}---\n{config}", base().text),
    }];
    let patch = SourceFile {
        name: "patch1.yaml".into(),
        text: format!("{fair}metadata: {{name: kueue-config}}\n"),
    };
    let l = load(
        &files,
        LoadOptions {
            patches: vec![patch],
            ..Default::default()
        },
    );
    // A Configuration has no metadata: a patch that writes one is refused as any unknown
    // field of an override is.
    let e = l.unwrap_err().to_string();
    assert!(
        e.starts_with(
            "patch1.yaml:5:1: Configuration field metadata is not a field of config.kueue.x-k8s.io"
        ),
        "{e}"
    );
    let l = load(
        &files,
        LoadOptions {
            patches: vec![SourceFile {
                name: "patch1.yaml".into(),
                text: fair.into(),
            }],
            ..Default::default()
        },
    )
    .expect("loads");
    assert!(l.world.config.kueue.fair_sharing.is_some());
    let ready = l.world.config.kueue.wait_for_pods_ready.as_ref();
    assert_eq!(
        ready.map(|w| w.timeout),
        Some(kueuesim_model::SimDuration::from_secs(420)),
        "the scenario's own settings stay"
    );
    // `metadata.name: "*"` patches every ClusterQueue; a pattern that matches none is an
    // error (it cannot add an object).
    let two = SourceFile {
        name: "two.yaml".into(),
        text: format!(
            "{FLAVOR}---\n{}---\n{}---\n{LQ}",
            cq("8"),
            cq("8").replace("name: cq", "name: cq-b")
        ),
    };
    let star = |name: &str| SourceFile {
        name: "patch1.yaml".into(),
        text: format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: \"{name}\"}}\nspec: {{queueingStrategy: StrictFIFO}}\n"
        ),
    };
    let l = load(
        std::slice::from_ref(&two),
        LoadOptions {
            patches: vec![star("*")],
            ..Default::default()
        },
    )
    .expect("loads");
    assert!(
        l.world
            .cluster_queues
            .iter()
            .all(|c| c.queueing_strategy == kueuesim_model::QueueingStrategy::StrictFIFO)
    );
    let e = load(
        std::slice::from_ref(&two),
        LoadOptions {
            patches: vec![star("team-*")],
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("patch1.yaml:1:1: a patch of every ClusterQueue matching \"team-*\", but the scenario has none"),
        "{e}"
    );
}

/// A `--set` on a kind whose name two API groups share (KAI's and Volcano's `Queue`) takes
/// `KIND.GROUP`, as kubectl's RESOURCE.GROUP; the bare kind names every such object and the
/// error says how to tell them apart.
#[test]
fn set_tells_kinds_of_one_name_apart_by_api_group() {
    let queues = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team}\nspec:\n  resources:\n    gpu: {quota: 4}\n---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: team}\nspec: {weight: 1}\n";
    let load_with = |set: &str| {
        load(
            &[
                base(),
                SourceFile {
                    name: "queues.yaml".into(),
                    text: queues.into(),
                },
            ],
            LoadOptions {
                sets: vec![set.into()],
                ..Default::default()
            },
        )
    };
    let l = load_with("queue.scheduling.run.ai/team:spec.resources.gpu.quota=12.5")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.world.kai_queues[0].gpu_quota, Some(12_500));
    let l = load_with("queues.scheduling.volcano.sh/team:spec.weight=3")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.world.kai_queues[0].gpu_quota, Some(4_000));
    let e = load_with("queue/team:spec.weight=3").expect_err("two Queues named team");
    assert!(
        e.to_string()
            .contains("with KIND.GROUP (queue.scheduling.run.ai) for kinds of one name"),
        "{e}"
    );
}
