//! WorkloadGenerator: determinism per seed, arrival processes, distributions, mixes,
//! per-LocalQueue replication, and bad settings reported at file:line:column.

use kueuesim_model::{QueueRef, TopologyRequest, Workload};
use kueuesim_scenario::{LoadOptions, SourceFile, load};

use crate::util::{load_error, load_text};

/// A flavor, two ClusterQueues in one cohort with a LocalQueue each, two
/// WorkloadPriorityClasses; `generator` is appended as its own document.
fn with_queues(generator: &str) -> String {
    let mut s = String::from(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: rf}\n",
    );
    for q in ["a", "b"] {
        s.push_str(&format!(
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: cq-{q}}}\nspec:\n  cohortName: c\n  namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n    - name: rf\n      resources:\n      - {{name: cpu, nominalQuota: 1000}}\n      - {{name: nvidia.com/gpu, nominalQuota: 1000}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq-{q}, namespace: ns-{q}}}\nspec: {{clusterQueue: cq-{q}}}\n"
        ));
    }
    s.push_str("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: low}\nvalue: 10\n");
    s.push_str("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: high}\nvalue: 1000\n");
    s.push_str("---\n");
    s.push_str(generator);
    s
}

fn generated(text: &str, seed: Option<u64>) -> Vec<Workload> {
    load(
        &[SourceFile {
            name: "t.yaml".into(),
            text: text.into(),
        }],
        LoadOptions {
            seed,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .world
    .workloads
}

const MIXED: &str = "apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {name: mix, namespace: ns-a}
spec:
  count: 4000
  arrival: {rate: 2/s}
  pods: {uniform: {min: 1, max: 8}}
  requests:
    cpu: {logNormal: {median: 2, sigma: 0.5, min: 500m, max: 16}}
    nvidia.com/gpu: {fixed: 8}
  duration: {uniform: {min: 1m, max: 10m}}
  queues:
  - {name: lq-a, weight: 3}
  - {name: lq-b, namespace: ns-b, weight: 1}
  priorities:
  - {className: low, weight: 1}
  - {className: high, weight: 1}
  topologies:
  - {weight: 1, kueue: {required: rack}}
  - {weight: 1}
";

fn arrivals(ws: &[Workload]) -> Vec<i64> {
    ws.iter().map(|w| w.arrival.millis()).collect()
}

#[test]
fn same_seed_same_workloads_other_seed_other_arrivals() {
    let text = with_queues(MIXED);
    let a = generated(&text, None);
    let b = generated(&text, None);
    assert_eq!(a.len(), 4000);
    assert_eq!(
        format!("{a:?}"),
        format!("{b:?}"),
        "same seed, same workloads"
    );
    let c = generated(&text, Some(12345));
    assert_ne!(arrivals(&a), arrivals(&c), "--seed changes the arrivals");
    // Names are <generator>-<index> in arrival order; arrivals never decrease.
    for (i, w) in a.iter().enumerate() {
        assert_eq!(w.name, format!("mix-{i}"));
        assert_eq!(w.kind, "Workload");
    }
    assert!(a.windows(2).all(|p| p[0].arrival <= p[1].arrival));
}

#[test]
fn poisson_rate_distributions_and_mix_weights() {
    let ws = generated(&with_queues(MIXED), None);
    let n = ws.len() as f64;
    // Poisson at 2/s: the mean gap is 500 ms (within 5% over 4,000 arrivals; sd ≈ 1.6%).
    let last = ws.last().expect("some").arrival.millis() as f64;
    let mean_gap = last / n;
    assert!(
        (mean_gap - 500.0).abs() < 25.0,
        "mean inter-arrival {mean_gap} ms"
    );
    // Uniform pods in [1, 8], mean 4.5.
    let pods: Vec<u32> = ws.iter().map(|w| w.pod_sets[0].count).collect();
    assert!(pods.iter().all(|&p| (1..=8).contains(&p)));
    assert!((1..=8).all(|v| pods.contains(&v)), "every value drawn");
    let mean_pods = pods.iter().map(|&p| f64::from(p)).sum::<f64>() / n;
    assert!((mean_pods - 4.5).abs() < 0.15, "mean pods {mean_pods}");
    // Log-normal cpu: median 2 cores (2000m), clamped to [500m, 16].
    let r = |w: &Workload, i: usize| w.pod_sets[0].requests.iter().nth(i).map(|p| p.1);
    let mut cpu: Vec<i64> = ws.iter().map(|w| r(w, 0).expect("cpu")).collect();
    assert!(cpu.iter().all(|&c| (500..=16_000).contains(&c)));
    cpu.sort_unstable();
    let median = cpu[cpu.len() / 2];
    assert!((1900..=2100).contains(&median), "median cpu {median}m");
    // Fixed GPUs.
    assert!(ws.iter().all(|w| r(w, 1) == Some(8)));
    // Uniform duration in [1m, 10m], mean 5.5m.
    let d: Vec<i64> = ws
        .iter()
        .map(|w| w.duration.expect("duration").millis())
        .collect();
    assert!(d.iter().all(|&x| (60_000..=600_000).contains(&x)));
    let mean_d = d.iter().sum::<i64>() as f64 / n;
    assert!(
        (mean_d - 330_000.0).abs() < 8_000.0,
        "mean duration {mean_d}"
    );
    // Queue weights 3:1 and the queue's namespace.
    let to_a = ws.iter().filter(|w| w.namespace == "ns-a").count() as f64 / n;
    assert!((to_a - 0.75).abs() < 0.03, "share to lq-a {to_a}");
    assert!(ws.iter().all(|w| match (&w.queue, w.namespace.as_str()) {
        (QueueRef::Local(_), "ns-a") => w.queue_name.as_deref() == Some("lq-a"),
        (QueueRef::Local(_), "ns-b") => w.queue_name.as_deref() == Some("lq-b"),
        _ => false,
    }));
    // Priorities by class, 1:1.
    let high = ws.iter().filter(|w| w.priority == 1000).count() as f64 / n;
    assert!((high - 0.5).abs() < 0.03, "share high {high}");
    assert!(ws.iter().all(|w| match w.priority_class.as_deref() {
        Some("low") => w.priority == 10,
        Some("high") => w.priority == 1000,
        _ => false,
    }));
    // Topology 1:1 between required rack and none.
    let req = ws
        .iter()
        .filter(|w| {
            w.pod_sets[0].topology_request == Some(TopologyRequest::Required("rack".into()))
        })
        .count() as f64
        / n;
    assert!((req - 0.5).abs() < 0.03, "share required {req}");
}

#[test]
fn fixed_interval_per_local_queue_copies_and_until() {
    let text = with_queues(
        "apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {name: small}
spec:
  count: 350
  arrival: {start: 100ms, interval: 100ms}
  requests: {cpu: {fixed: '1'}}
  duration: {fixed: 200ms}
  perLocalQueue: true
  priorities: [{value: 50}]
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {name: big}
spec:
  until: 10s
  arrival: {start: 0s, interval: 1200ms}
  requests: {cpu: {fixed: '20'}}
  duration: {fixed: 1s}
  perLocalQueue: true
  priorities: [{value: 200}]
",
    );
    let ws = generated(&text, None);
    let small: Vec<&Workload> = ws.iter().filter(|w| w.name.starts_with("small-")).collect();
    let big: Vec<&Workload> = ws.iter().filter(|w| w.name.starts_with("big-")).collect();
    // One copy of each set per LocalQueue.
    for ns in ["ns-a", "ns-b"] {
        let mine: Vec<i64> = small
            .iter()
            .filter(|w| w.namespace == ns)
            .map(|w| w.arrival.millis())
            .collect();
        assert_eq!(mine.len(), 350, "{ns}");
        assert_eq!(mine[0], 100);
        assert_eq!(mine[349], 35_000);
        assert!(mine.windows(2).all(|p| p[1] - p[0] == 100));
        // 0, 1.2, …, 9.6 s: 9 arrivals up to 10 s.
        assert_eq!(big.iter().filter(|w| w.namespace == ns).count(), 9, "{ns}");
    }
    assert!(
        small
            .iter()
            .all(|w| w.priority == 50 && w.priority_class.is_none())
    );
    assert!(big.iter().all(|w| w.priority == 200));
    // The merged list is in arrival order; ties go by the generators' names (big before
    // small), whatever their document order.
    assert!(ws.windows(2).all(|p| p[0].arrival <= p[1].arrival));
    let at_1200: Vec<&str> = ws
        .iter()
        .filter(|w| w.arrival.millis() == 1200)
        .map(|w| w.name.as_str())
        .collect();
    assert_eq!(at_1200.len(), 4);
    assert!(at_1200[0].starts_with("big-") && at_1200[3].starts_with("small-"));
    let mut names: Vec<(&str, &str)> = ws
        .iter()
        .map(|w| (w.namespace.as_str(), w.name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), ws.len(), "names are unique");
}

#[test]
fn empirical_and_trace_arrivals_from_csv() {
    let dir = std::env::temp_dir().join(format!("kueuesim-gen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("jobs.csv"),
        "gap,gpus,secs\n0,1,60\n2.5,2,120\n1,4,30\n",
    )
    .expect("write csv");
    let text = with_queues(
        "apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {name: tr, namespace: ns-a}
spec:
  arrival: {interArrival: {path: jobs.csv, column: gap}}
  requests: {nvidia.com/gpu: {empirical: {path: jobs.csv, column: gpus}}}
  duration: {empirical: {path: jobs.csv, column: secs, unit: s}}
  queues: [{name: lq-a}]
",
    );
    let path = dir.join("t.yaml");
    std::fs::write(&path, &text).expect("write yaml");
    let files = kueuesim_scenario::embedded::read_paths(&[path]).expect("readable");
    let ws = load(&files, LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .world
        .workloads;
    // The trace column's gaps, in order; the generator ends with the column.
    assert_eq!(arrivals(&ws), vec![0, 2500, 3500]);
    for w in &ws {
        let g = w.pod_sets[0].requests.iter().next().expect("gpu").1;
        assert!([1, 2, 4].contains(&g));
        let d = w.duration.expect("duration").millis();
        assert!([60_000, 120_000, 30_000].contains(&d));
    }
    // A bad CSV value is reported at its CSV line and column.
    std::fs::write(dir.join("jobs.csv"), "gap,gpus,secs\n0,1,60\n1,x,60\n").expect("write");
    let files = kueuesim_scenario::embedded::read_paths(&[dir.join("t.yaml")]).expect("readable");
    let e = load(&files, LoadOptions::default())
        .expect_err("bad csv")
        .to_string();
    assert!(e.contains("jobs.csv:3:3:"), "{e}");
    assert!(
        e.contains("expected an integer from 1 to") || e.contains("\"x\""),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_settings_name_file_line_column() {
    let base = "apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {name: g, namespace: ns-a}
spec:
  count: 3
  arrival: {interval: 1s}
  duration: {fixed: 1m}
";
    let cases: &[(&str, &str, &str, &str)] = &[
        // (replace, with, error position at, message part)
        (
            "count: 3",
            "count: 0",
            "0\n",
            "count 0: expected an integer from 1 to 10000000",
        ),
        ("interval: 1s", "interval: soon", "soon", "soon"),
        (
            "interval: 1s",
            "interval: 1s, rate: 2/s",
            "{interval",
            "expected exactly one of interval, rate, interArrival",
        ),
        (
            "interval: 1s",
            "rate: 2/fortnight",
            "2/fortnight",
            "expected arrivals per second",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m, uniform: {min: 1s, max: 2s}}",
            "{fixed",
            "expected exactly one of fixed, uniform, logNormal, empirical",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {uniform: {min: 2m, max: 1m}}",
            "1m}}",
            "expected min ≤ max",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m}\n  pods: {fixed: 0}",
            "0}",
            "expected an integer from 1 to 100000",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m}\n  pods: {fixed: 4294967296}",
            "4294967296",
            "expected an integer from 1 to 100000",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1000000h}",
            "1000000h",
            "is too long: expected at most 87600h0m0s (10 years)",
        ),
        (
            "  count: 3\n  arrival: {interval: 1s}",
            "  until: 1h\n  arrival: {interval: 0s}",
            "0s}",
            "interval 0s without a count",
        ),
        (
            "interval: 1s",
            "rate: 1e-300",
            "1e-300",
            "expected a number of arrivals from one per 87600h0m0s to 1000000 per second",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m}\n  requests: {cpu: {fixed: lots}}",
            "lots",
            "lots",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m}\n  queues: [{name: nope}]",
            "nope",
            "LocalQueue ns-a/nope does not exist",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m}\n  priorities: [{className: mid}]",
            "mid",
            "priority class \"mid\" does not exist",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m}\n  schedulerNames: [{name: slurm}]",
            "slurm",
            "schedulerName \"slurm\" is run by no scheduler",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m}\n  queues: [{name: lq-a, weight: heavy}]",
            "heavy",
            "expected a non-negative number",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m}\n  topologies: [{volcano: {mode: strict}}]",
            "strict",
            "expected hard or soft",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m}\n  topologies: [{kueue: {sliceRequired: rack}}]",
            "rack",
            "sliceRequired without sliceSize",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m}\n  topologies: [{kueue: {sliceRequired: rack, sliceSize: 0}}]",
            "0}",
            "sliceSize \"0\": expected an integer of at least 1",
        ),
        (
            "duration: {fixed: 1m}",
            "duration: {fixed: 1m}\n  pods: {empirical: {path: missing.csv, column: n}}",
            "missing.csv",
            "cannot read CSV",
        ),
    ];
    for (from, to, at, msg) in cases {
        let g = base.replace(from, to);
        let text = with_queues(&g);
        let e = load_error(&text);
        // The expected position: the first `at` within the generator document.
        let g_at = text.find(&g).expect("generator in text");
        let line_col = {
            let abs = g_at + g.find(at).expect("marker");
            let line = text[..abs].matches('\n').count() + 1;
            let col = abs - text[..abs].rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("t.yaml:{line}:{col}:")
        };
        assert!(e.starts_with(&line_col), "{to}: want {line_col}, got {e}");
        assert!(e.contains(msg), "{to}: want {msg:?} in {e}");
    }
    // Arrivals that would run past 10 years: an error at the generator, not a time overflow.
    let text = with_queues(
        &base
            .replace("interval: 1s", "interval: 8760h")
            .replace("count: 3", "count: 20"),
    );
    let e = load_error(&text);
    assert!(
        e.contains("would arrive more than 87600h0m0s after the start"),
        "{e}"
    );
    assert!(e.starts_with("t.yaml:"), "{e}");
    // No count and no until: the generator would never end.
    let text = with_queues(&base.replace("  count: 3\n", ""));
    let e = load_error(&text);
    assert!(e.contains("neither spec.count nor spec.until"), "{e}");
    // An unknown field of a simulator kind is an error.
    let e = load_error(&with_queues(
        &base.replace("count: 3", "count: 3\n  burst: 2"),
    ));
    assert!(e.contains("burst"), "{e}");
    // A generator-only input loads (workloads not managed by Kueue without queues).
    let only = load_text("t.yaml", base).expect("loads");
    assert!(
        only.world
            .workloads
            .iter()
            .all(|w| w.queue == QueueRef::Unmanaged)
    );
}
