//! Mutation fuzzing of the loader: scenarios of the repository with numbers turned into
//! extremes, lines deleted or duplicated and bytes flipped. Whatever the mutant, loading
//! never panics: it loads, or fails with an error at `t.yaml:line:column`.
//!
//! CI runs a few hundred cases; run longer with, e.g.,
//! `PROPTEST_CASES=20000 cargo test -p kueuesim-scenario --test it mutation`.

use kueuesim_scenario::source::decode;
use kueuesim_scenario::{LoadOptions, ScenarioError, SourceFile, load};
use proptest::prelude::*;

/// The seeds: small scenarios covering Kueue, kube-scheduler, KAI subgroups, job kinds and a
/// WorkloadGenerator.
fn seeds() -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/");
    let mut out: Vec<String> = [
        "golden/first-fit-nodes/scenario.yaml",
        "placement/K15-subgroups-required-spine-unconstrained-leaves/scenario.yaml",
        "examples/job-kinds/10-jobset.yaml",
        "examples/job-kinds/50-serving.yaml",
    ]
    .iter()
    .map(|p| std::fs::read_to_string(format!("{root}{p}")).expect("seed scenario"))
    .collect();
    out.push(
        "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {until: 2h, podStartup: 10s, podTermination: 30s}
---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {timeout: 5m, requeuingStrategy: {backoffBaseSeconds: 60, backoffMaxSeconds: 3600}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
---
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: \"64\", nvidia.com/gpu: \"8\"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, labels: {kueue.x-k8s.io/queue-name: lq}}
spec: {replicas: 3, template: {spec: {containers: [{resources: {requests: {nvidia.com/gpu: 1}}}]}}}
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {name: g}
spec: {count: 20, arrival: {rate: 2/m}, pods: {logNormal: {median: 2, sigma: 1}}, duration: {logNormal: {median: 30m, sigma: 1.5}}, queues: [{name: lq}]}
"
        .to_string(),
    );
    out
}

/// What a number may become.
const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "1",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1e308",
    "-1e308",
    ".nan",
    ".inf",
    "NaN",
    "9223372036854775807ms",
    "2562047788015h",
    "9223372036854775807ns",
    "99999999999999999999h",
    "0s",
    "-1h",
    "1e-300",
];

/// One change to a scenario's text.
#[derive(Clone, Debug)]
enum Mutation {
    /// The `n`-th run of digits (wrapping) becomes an extreme.
    Number(usize, usize),
    /// Line `n` (wrapping) goes.
    DeleteLine(usize),
    /// Line `n` (wrapping) is written twice.
    DuplicateLine(usize),
    /// Byte `n` (wrapping) is xor-ed with a non-zero mask.
    FlipByte(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 0..EXTREMES.len()).prop_map(|(n, e)| Mutation::Number(n, e)),
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => (any::<usize>(), 1..=255u8).prop_map(|(n, m)| Mutation::FlipByte(n, m)),
    ]
}

fn apply(text: &str, m: &Mutation) -> Vec<u8> {
    match *m {
        Mutation::Number(n, e) => {
            // Runs of ASCII digits, as byte ranges.
            let b = text.as_bytes();
            let mut runs = Vec::new();
            let mut i = 0;
            while i < b.len() {
                if b[i].is_ascii_digit() {
                    let start = i;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                    runs.push((start, i));
                } else {
                    i += 1;
                }
            }
            if runs.is_empty() {
                return text.as_bytes().to_vec();
            }
            let (a, z) = runs[n % runs.len()];
            format!("{}{}{}", &text[..a], EXTREMES[e], &text[z..]).into_bytes()
        }
        Mutation::DeleteLine(n) | Mutation::DuplicateLine(n) => {
            let mut lines: Vec<&str> = text.lines().collect();
            let i = n % lines.len();
            if matches!(m, Mutation::DeleteLine(_)) {
                lines.remove(i);
            } else {
                lines.insert(i, lines[i]);
            }
            lines.join("\n").into_bytes()
        }
        Mutation::FlipByte(n, mask) => {
            let mut b = text.as_bytes().to_vec();
            let i = n % b.len();
            b[i] ^= mask;
            b
        }
    }
}

/// Loads `bytes` as `t.yaml` and pulls a bounded number of its workloads (a mutant may ask
/// for millions, which is allowed; their checks run as they are pulled).
fn load_bytes(bytes: Vec<u8>) -> Result<(), ScenarioError> {
    let text = decode("t.yaml", bytes)?;
    let files = [SourceFile {
        name: "t.yaml".into(),
        text,
    }];
    let opts = LoadOptions {
        stream: true,
        ..LoadOptions::default()
    };
    let mut loaded = load(&files, opts)?;
    if let Some(mut stream) = loaded.stream.take() {
        for _ in 0..1000 {
            if stream.try_next()?.is_none() {
                break;
            }
        }
    }
    Ok(())
}

/// An error names `t.yaml` at a line and column (1-based), or is one of the errors with no
/// single place in the input (nothing to simulate, and the like).
fn has_position(e: &ScenarioError) -> bool {
    match e {
        ScenarioError::At { pos, .. } => pos.line >= 1 && pos.column >= 1,
        ScenarioError::Invalid(_) => true,
        ScenarioError::Io { .. } => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // Small for CI; PROPTEST_CASES overrides it.
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(300),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutants_load_or_fail_with_a_position(
        seed in 0..5usize,
        muts in prop::collection::vec(mutation(), 1..4),
    ) {
        let seeds = seeds();
        let mut text = seeds[seed].clone().into_bytes();
        for m in &muts {
            let s = String::from_utf8_lossy(&text).into_owned();
            text = apply(&s, m);
        }
        let shown = String::from_utf8_lossy(&text).into_owned();
        let outcome = std::panic::catch_unwind(|| load_bytes(text.clone()));
        match outcome {
            Err(_) => prop_assert!(false, "the loader panicked on {muts:?}:\n{shown}"),
            Ok(Ok(())) => {}
            Ok(Err(e)) => prop_assert!(has_position(&e), "{e} for {muts:?}:\n{shown}"),
        }
    }
}

#[test]
fn every_extreme_in_every_number_of_a_seed_loads_or_fails_with_a_position() {
    // Exhaustive over the small seed: each digit run, each extreme.
    let text = seeds().pop().expect("the generator seed");
    let b = text.as_bytes();
    let runs = (0..b.len())
        .filter(|&i| b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit()))
        .count();
    for n in 0..runs {
        for e in 0..EXTREMES.len() {
            let m = Mutation::Number(n, e);
            let bytes = apply(&text, &m);
            if let Err(err) = load_bytes(bytes) {
                assert!(has_position(&err), "{err} for {m:?}");
            }
        }
    }
}
