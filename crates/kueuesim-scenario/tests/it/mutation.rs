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

/// Loads `bytes` as the file `t.yaml`, streamed as a summary run loads.
fn load_mutant(bytes: Vec<u8>) -> Result<kueuesim_scenario::Loaded, ScenarioError> {
    let text = decode("t.yaml", bytes)?;
    let files = [SourceFile {
        name: "t.yaml".into(),
        text,
    }];
    let opts = LoadOptions {
        stream: true,
        ..LoadOptions::default()
    };
    load(&files, opts)
}

/// Loads `bytes` as `t.yaml` and pulls a bounded number of its workloads (a mutant may ask
/// for millions, which is allowed; their checks run as they are pulled).
fn load_bytes(bytes: Vec<u8>) -> Result<(), ScenarioError> {
    let mut loaded = load_mutant(bytes)?;
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

/// Every scenario of `scenarios/` a mutant may start from, one text per scenario (a
/// directory's files joined as one file): Kueue features, placement cases, golden runs,
/// job kinds, the platform. Traces, sweeps and the million-workload scale run are left out
/// (they name files beside them, are not scenarios, or load for seconds).
fn campaign_seeds() -> Vec<(String, String)> {
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios"));
    let mut dirs = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let rel = dir
            .strip_prefix(&root)
            .expect("under root")
            .to_string_lossy()
            .into_owned();
        if ["traces", "sweeps", "scale"]
            .iter()
            .any(|x| rel.starts_with(x))
        {
            continue;
        }
        let mut files = Vec::new();
        for e in std::fs::read_dir(&dir).expect("scenario dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                files.push(p);
            }
        }
        files.sort();
        if files.is_empty() {
            continue;
        }
        // Directories whose files are each a scenario of their own.
        if rel.starts_with("kueue-perf") {
            for f in files {
                let name = f.display().to_string();
                dirs.push((name, std::fs::read_to_string(&f).expect("readable")));
            }
            continue;
        }
        let text: Vec<String> = files
            .iter()
            .map(|f| std::fs::read_to_string(f).expect("readable"))
            .collect();
        dirs.push((rel, text.join("\n---\n")));
    }
    dirs.sort();
    dirs
}

/// SplitMix64: the campaign's random numbers, reproducible from one seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The mutant of case `case`: a seed scenario and one to three mutations, among them lines
/// taken from another seed (so objects of different scenarios meet).
fn campaign_mutant(seeds: &[(String, String)], case: u64) -> (String, Vec<String>, Vec<u8>) {
    let mut rng = Rng(case);
    let (name, text) = &seeds[rng.below(seeds.len())];
    let mut bytes = text.clone().into_bytes();
    let mut said = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let s = String::from_utf8_lossy(&bytes).into_owned();
        let m = match rng.below(8) {
            0..=3 => Mutation::Number(rng.next() as usize, rng.below(EXTREMES.len())),
            4 => Mutation::DeleteLine(rng.next() as usize),
            5 => Mutation::DuplicateLine(rng.next() as usize),
            6 => Mutation::FlipByte(rng.next() as usize, 1 + rng.below(255) as u8),
            _ => {
                // A line of another seed, at the same place in this one.
                let other = &seeds[rng.below(seeds.len())].1;
                let lines: Vec<&str> = other.lines().collect();
                let line = lines[rng.below(lines.len())];
                let mut mine: Vec<&str> = s.lines().collect();
                let at = rng.below(mine.len() + 1);
                mine.insert(at, line);
                said.push(format!("insert {line:?} at line {}", at + 1));
                bytes = mine.join("\n").into_bytes();
                continue;
            }
        };
        said.push(format!("{m:?}"));
        bytes = apply(&s, &m);
    }
    (name.clone(), said, bytes)
}

/// Loads `bytes` as `t.yaml` and runs it as `kueuesim run --out DIR` would, bounded by an
/// event budget: the summary, the JSON document and every file of `--out` (into `dir`).
fn load_and_run(bytes: Vec<u8>, dir: &std::path::Path) -> Result<(), ScenarioError> {
    use kueuesim_engine::Simulation;
    use kueuesim_model::SimDuration;
    use kueuesim_report::outdir::{OutDir, parse_write};
    let mut loaded = load_mutant(bytes)?;
    let stream = loaded.stream.take();
    let world = &loaded.world;
    let step = SimDuration::from_secs(600);
    let mut sim = Simulation::new(world)
        .with_time_series(step)
        .with_event_budget(20_000);
    let mut error = None;
    if let Some(stream) = stream {
        error = Some(stream.error());
        sim = sim.with_stream(stream);
    }
    let all = parse_write("all").expect("all files");
    let mut sink = OutDir::create(dir, world, &all).expect("an --out directory");
    let outcome = sim.run_with_sink(|_, _| std::ops::ControlFlow::Continue(()), &mut sink);
    if let Some(e) = error.and_then(|e| e.borrow_mut().take()) {
        return Err(e);
    }
    let mut doc = kueuesim_report::output::result_with(world, &outcome, true);
    let _ = kueuesim_report::output::summary_text(world, &doc);
    let _ = kueuesim_report::output::to_json(&doc);
    sink.finish(&mut doc, &outcome)
        .expect("the --out files written");
    Ok(())
}

/// Resets the process's peak resident size (`VmHWM`; Linux `clear_refs`).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The process's peak resident size since the last reset, in MiB (Linux).
fn peak_rss_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// The mutation campaign: mutants of every scenario, loaded and run (20,000 events at most),
/// for `KUEUESIM_FUZZ_SECONDS` (default 20; CI gives it 60), from `KUEUESIM_FUZZ_SEED`
/// (default 1), each writing every `--out` file. None may panic, fail without a position,
/// or take more than 60 s. A failure
/// names its case; `KUEUESIM_FUZZ_CASE=<case>` reruns just that one. Run it long in release:
/// `KUEUESIM_FUZZ_SECONDS=3600 cargo test --release -p kueuesim-scenario --test it campaign -- --nocapture`,
/// with `KUEUESIM_FUZZ_MAX_RSS_MB=256` to hold every mutant to 256 MiB resident.
// The wall clock bounds the campaign and times each case; it decides nothing simulated.
#[allow(clippy::disallowed_methods)]
#[test]
fn campaign_mutants_load_and_run_or_fail_with_a_position() {
    let env = |k: &str| std::env::var(k).ok();
    let seeds = campaign_seeds();
    assert!(seeds.len() >= 100, "{} seeds", seeds.len());
    let cases: Box<dyn Iterator<Item = u64>> = match env("KUEUESIM_FUZZ_CASE") {
        Some(c) => Box::new(std::iter::once(
            u64::from_str_radix(c.trim_start_matches("0x"), 16).expect("a hex case"),
        )),
        None => {
            let mut rng = Rng(env("KUEUESIM_FUZZ_SEED").map_or(1, |s| s.parse().expect("seed")));
            Box::new(std::iter::repeat_with(move || rng.next()))
        }
    };
    let budget = std::time::Duration::from_secs(
        env("KUEUESIM_FUZZ_SECONDS").map_or(20, |s| s.parse().expect("seconds")),
    );
    let dir = std::env::temp_dir().join(format!("kueuesim-campaign-{}", std::process::id()));
    // A peak resident size per mutant (Linux), when asked: meaningful only when the campaign
    // runs alone in its process (`cargo test … campaign`), as other tests share the count.
    let max_rss: Option<u64> = env("KUEUESIM_FUZZ_MAX_RSS_MB").map(|m| m.parse().expect("MiB"));
    let start = std::time::Instant::now();
    let (mut ran, mut loaded, mut positioned) = (0u64, 0u64, 0u64);
    let mut failures: Vec<String> = Vec::new();
    for case in cases {
        if start.elapsed() >= budget {
            break;
        }
        let (name, muts, bytes) = campaign_mutant(&seeds, case);
        let shown = String::from_utf8_lossy(&bytes).into_owned();
        if max_rss.is_some() {
            reset_peak_rss();
        }
        let t = std::time::Instant::now();
        let r = std::panic::catch_unwind(|| load_and_run(bytes.clone(), &dir));
        let took = t.elapsed();
        let peak = max_rss.and_then(|_| peak_rss_mib());
        let rerun = format!("KUEUESIM_FUZZ_CASE={case:x}: {name} with {muts:?}");
        match r {
            Err(_) => failures.push(format!("panicked on {rerun}:\n{shown}")),
            Ok(Ok(())) => loaded += 1,
            Ok(Err(e)) if has_position(&e) => positioned += 1,
            Ok(Err(e)) => failures.push(format!("{e} on {rerun}:\n{shown}")),
        }
        // A case stuck far past what any scenario costs. The slowest known mutant (of
        // kueue-perf/large-scale: 1,000 ClusterQueues and 50,000 workloads loaded, then
        // 20,000 events, in a debug build) takes 9 s alone and over 20 s beside the other
        // tests on 2 loaded cores, so the bound is 60 s: it catches a run gone quadratic,
        // not a busy machine.
        if took.as_secs() >= 60 {
            failures.push(format!("{took:?} on {rerun}"));
        }
        if let (Some(max), Some(peak)) = (max_rss, peak)
            && peak > max
        {
            failures.push(format!("{peak} MiB resident on {rerun}"));
        }
        ran += 1;
        // Every failure of a long campaign is worth seeing, up to a screenful.
        if failures.len() >= 10 {
            break;
        }
    }
    eprintln!(
        "mutation campaign: {ran} mutants of {} seeds in {:.0?}: {loaded} ran, {positioned} failed at a position",
        seeds.len(),
        start.elapsed()
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
