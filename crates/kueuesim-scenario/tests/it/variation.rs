//! `Simulation.spec.variation`: what a seed changes in the workloads. Each setting against
//! the same input loaded without it (jitter within its width, Poisson counts and hours,
//! thinning and copies with valid distinct names, mean-preserving duration noise, whole days
//! resampled), determinism, the streamed path, objects that exist at the start, and bad
//! settings reported at file:line:column.

use std::collections::{BTreeMap, BTreeSet};

use kueuesim_model::{SimDuration, Workload};
use kueuesim_scenario::{LoadOptions, SourceFile, load};

use crate::util::{FLAVOR, cq, load_error};

/// A cluster with a LocalQueue `lq` in namespace `ns`, a Simulation (seed 5) with
/// `variation` under its spec (YAML lines indented by four), and `rest` after it.
fn scenario(variation: &str, rest: &str) -> String {
    let variation = if variation.is_empty() {
        String::new()
    } else {
        format!("  variation:\n{variation}")
    };
    format!(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: sim}}\nspec:\n  seed: 5\n{variation}---\n{FLAVOR}---\n{}---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: lq, namespace: ns}}\nspec: {{clusterQueue: cq}}\n---\n{rest}",
        cq("1000")
    )
}

/// A generator of `count` one-GPU workloads, Poisson arrivals at `rate`, durations log-normal
/// around 30 minutes.
fn generator(count: u32, rate: &str) -> String {
    format!(
        "apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {{name: gen, namespace: ns}}
spec:
  count: {count}
  arrival: {{rate: {rate}}}
  requests: {{nvidia.com/gpu: {{fixed: 1}}}}
  duration: {{logNormal: {{median: 30m, sigma: 1, min: 1m, max: 10h}}}}
  queues: [{{name: lq}}]
"
    )
}

fn loaded_with(text: &str, opts: LoadOptions) -> Vec<Workload> {
    let files = [SourceFile {
        name: "t.yaml".into(),
        text: text.into(),
    }];
    let mut loaded = load(&files, opts).unwrap_or_else(|e| panic!("{e}"));
    match loaded.stream.take() {
        Some(s) => s.collect(),
        None => loaded.world.workloads,
    }
}

fn loaded(text: &str, seed: Option<u64>) -> Vec<Workload> {
    loaded_with(
        text,
        LoadOptions {
            seed,
            ..Default::default()
        },
    )
}

fn by_name(ws: &[Workload]) -> BTreeMap<&str, &Workload> {
    ws.iter().map(|w| (w.name.as_str(), w)).collect()
}

/// The name a copy was made from (`-copy<k>` dropped).
fn original(name: &str) -> &str {
    match name.rsplit_once("-copy") {
        Some((base, k)) if k.parse::<u32>().is_ok() => base,
        _ => name,
    }
}

fn assert_in_arrival_order(ws: &[Workload]) {
    assert!(
        ws.windows(2).all(|p| p[0].arrival <= p[1].arrival),
        "arrival order"
    );
}

/// Kubernetes' IsDNS1123Subdomain: lowercase alphanumerics, `-` and `.`, starting and ending
/// alphanumeric, at most `max` characters.
fn is_dns1123(name: &str, max: usize) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    name.len() <= max
        && name.chars().all(|c| ok(c) || c == '-' || c == '.')
        && name.starts_with(ok)
        && name.ends_with(ok)
}

#[test]
fn jitter_moves_each_arrival_within_its_width_and_nothing_else() {
    let base = loaded(&scenario("", &generator(500, "50/h")), None);
    let varied = loaded(
        &scenario("    arrivals: {jitter: 10m}\n", &generator(500, "50/h")),
        None,
    );
    assert_eq!(varied.len(), 500);
    assert_in_arrival_order(&varied);
    let before = by_name(&base);
    let mut moved = 0;
    for w in &varied {
        let b = before[w.name.as_str()];
        let shift = (w.arrival - b.arrival).millis().abs();
        assert!(shift <= 600_000, "{}: moved {shift} ms", w.name);
        assert_eq!(w.created_at, w.arrival, "created when it arrives");
        assert_eq!(w.duration, b.duration, "{}: durations kept", w.name);
        assert_eq!(w.uid, b.uid);
        moved += usize::from(shift > 0);
    }
    assert!(moved > 490, "{moved} of 500 moved");
}

#[test]
fn poisson_redraws_each_hour_at_its_rate_with_valid_distinct_copies() {
    let text = scenario("    arrivals: poisson\n", &generator(2000, "100/h"));
    let base = loaded(&scenario("", &generator(2000, "100/h")), None);
    let varied = loaded(&text, None);
    assert_in_arrival_order(&varied);
    // Poisson(1) copies of each: 2000 ± 5 standard deviations (√2000 ≈ 45).
    assert!(
        (1775..=2225).contains(&varied.len()),
        "{} arrivals",
        varied.len()
    );
    let before = by_name(&base);
    let hour = |w: &Workload| w.arrival.millis() / 3_600_000;
    for w in &varied {
        let b = before[original(&w.name)];
        assert_eq!(hour(w), hour(b), "{}: stays in its hour", w.name);
        assert!(is_dns1123(&w.name, 253), "{}", w.name);
    }
    let names: BTreeSet<&str> = varied.iter().map(|w| w.name.as_str()).collect();
    let uids: BTreeSet<&str> = varied.iter().map(|w| w.uid.as_str()).collect();
    assert_eq!(names.len(), varied.len(), "distinct names");
    assert_eq!(uids.len(), varied.len(), "distinct uids");
    // e^-1 = 37 % of the input does not come.
    let absent = base
        .iter()
        .filter(|b| !names.contains(b.name.as_str()))
        .count();
    assert!((600..=880).contains(&absent), "{absent} of 2000 absent");
    // Every hour keeps its rate: no hour of 100 expected arrivals is empty or doubled.
    let mut per_hour: BTreeMap<i64, usize> = BTreeMap::new();
    for w in &varied {
        *per_hour.entry(hour(w)).or_default() += 1;
    }
    assert!(
        per_hour.values().all(|&n| (50..=150).contains(&n)),
        "{per_hour:?}"
    );
}

#[test]
fn load_thins_or_copies_the_arrivals() {
    let base = loaded(&scenario("", &generator(1000, "100/h")), None);
    let half = loaded(
        &scenario("    load: 0.5\n", &generator(1000, "100/h")),
        None,
    );
    assert!((420..=580).contains(&half.len()), "{}", half.len());
    let before = by_name(&base);
    for w in &half {
        let b = before[w.name.as_str()];
        assert_eq!((w.arrival, w.duration), (b.arrival, b.duration));
    }
    let double = loaded(&scenario("    load: 2\n", &generator(1000, "100/h")), None);
    assert_eq!(double.len(), 2000, "two of each, exactly");
    assert_in_arrival_order(&double);
    for b in &base {
        let copy = double
            .iter()
            .find(|w| w.name == format!("{}-copy1", b.name))
            .unwrap_or_else(|| panic!("no copy of {}", b.name));
        assert_eq!((copy.arrival, copy.duration), (b.arrival, b.duration));
        assert_ne!(copy.uid, b.uid);
    }
}

#[test]
fn lognormal_noise_keeps_the_mean_and_draws_from_the_seed() {
    let text = scenario(
        "    durations: {lognormal: {sigma: 0.5}}\n",
        &generator(3000, "100/h"),
    );
    let base = loaded(&scenario("", &generator(3000, "100/h")), None);
    let varied = loaded(&text, None);
    let before = by_name(&base);
    let logs: Vec<f64> = varied
        .iter()
        .map(|w| {
            let b = before[w.name.as_str()];
            assert_eq!(w.arrival, b.arrival);
            let (d, e) = (w.duration.expect("d"), b.duration.expect("d"));
            (d.millis() as f64 / e.millis() as f64).ln()
        })
        .collect();
    let n = logs.len() as f64;
    let mean_factor = logs.iter().map(|l| l.exp()).sum::<f64>() / n;
    assert!(
        (mean_factor - 1.0).abs() < 0.03,
        "mean factor {mean_factor}"
    );
    let mean = logs.iter().sum::<f64>() / n;
    let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    assert!((sd - 0.5).abs() < 0.03, "σ {sd}");
    // The same seed draws the same noise; another seed, other noise.
    assert_eq!(format!("{varied:?}"), format!("{:?}", loaded(&text, None)));
    let other = loaded(&text, Some(6));
    let base6 = loaded(&scenario("", &generator(3000, "100/h")), Some(6));
    let changed = other
        .iter()
        .zip(&varied)
        .filter(|(a, b)| a.duration != b.duration)
        .count();
    assert!(changed > 2900, "{changed}");
    // The variation's draws do not shift the generator's: seed 6's arrivals are unchanged.
    let arrivals = |ws: &[Workload]| ws.iter().map(|w| w.arrival).collect::<Vec<_>>();
    assert_eq!(arrivals(&other), arrivals(&base6));
}

#[test]
fn a_streamed_load_gives_the_collected_workloads() {
    let text = scenario(
        "    arrivals: poisson\n    durations: {lognormal: {sigma: 0.3}}\n    load: 1.3\n",
        &generator(800, "60/h"),
    );
    let collected = loaded(&text, None);
    let streamed = loaded_with(
        &text,
        LoadOptions {
            stream: true,
            ..Default::default()
        },
    );
    assert!(collected.len() > 900);
    assert_eq!(format!("{collected:?}"), format!("{streamed:?}"));
}

/// Four days of a Job each hour from 1h: `day<d>-<h>`, the day's number in its requests
/// (`cpu: <d+1>`), so each moved day shows where it came from.
fn four_days() -> String {
    let mut s = String::new();
    for d in 0..4 {
        for h in [1, 7, 13] {
            s.push_str(&format!(
                "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: day{d}-{h}\n  namespace: ns\n  labels: {{kueue.x-k8s.io/queue-name: lq}}\n  annotations: {{kueuesim.io/arrival: {}h, kueuesim.io/duration: 1h}}\nspec:\n  template:\n    spec:\n      containers:\n      - resources: {{requests: {{cpu: \"{}\"}}}}\n",
                d * 24 + h,
                d + 1
            ));
        }
    }
    s
}

#[test]
fn resampling_draws_whole_days_with_replacement() {
    let text = scenario(
        "    resample: days\n",
        four_days().trim_start_matches("---\n"),
    );
    let mut maps = BTreeSet::new();
    for seed in 1..=6 {
        let ws = loaded(&text, Some(seed));
        assert_in_arrival_order(&ws);
        assert_eq!(ws.len(), 12, "four days of three");
        let mut map = Vec::new();
        for d in 0..4i64 {
            let day: Vec<&Workload> = ws
                .iter()
                .filter(|w| w.arrival.millis() / 86_400_000 == d)
                .collect();
            assert_eq!(day.len(), 3, "seed {seed}: day {d} is a whole day");
            // Every workload of the day comes from one input day, at its hour of that day.
            let from: BTreeSet<i64> = day
                .iter()
                .map(|w| w.pod_sets[0].requests.iter().next().expect("cpu").1 / 1000 - 1)
                .collect();
            assert_eq!(from.len(), 1, "seed {seed}: day {d} from {from:?}");
            let k = *from.iter().next().expect("one");
            for w in &day {
                let hour = (w.arrival.millis() % 86_400_000) / 3_600_000;
                assert!(w.name.contains(&format!("day{k}-{hour}")), "{}", w.name);
                assert_eq!(w.name.ends_with(&format!("-day{d}")), k != d, "{}", w.name);
                assert!(is_dns1123(&w.name, 253), "{}", w.name);
                let (_, owner) = w.owner.as_ref().expect("a Job's");
                assert!(is_dns1123(owner, 63), "{owner}");
            }
            map.push(k);
        }
        maps.insert(map);
    }
    assert!(maps.len() > 1, "seeds draw other days: {maps:?}");
    assert!(
        maps.iter()
            .any(|m| m.iter().collect::<BTreeSet<_>>().len() < 4),
        "with replacement: some seed draws a day twice: {maps:?}"
    );
}

#[test]
fn objects_that_exist_at_the_start_are_kept_as_written() {
    let admitted = "apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: running, namespace: ns, creationTimestamp: \"2026-01-01T00:00:00Z\"}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{resources: {requests: {nvidia.com/gpu: \"1\"}}}]}}
status:
  admission:
    clusterQueue: cq
    podSetAssignments:
    - {name: main, count: 1, flavors: {nvidia.com/gpu: default}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: old, namespace: ns, labels: {kueue.x-k8s.io/queue-name: lq}, creationTimestamp: \"2026-01-01T00:00:00Z\"}
spec:
  template:
    spec:
      containers:
      - resources: {requests: {cpu: \"1\"}}
---
";
    let start = "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec:\n  startTime: \"2026-01-02T00:00:00Z\"\n";
    let text = scenario(
        "",
        &format!("{admitted}{}", generator(200, "50/h")),
    )
    .replacen(
        "apiVersion: kueuesim.io/v1alpha1\nkind: Simulation\nmetadata: {name: sim}\nspec:\n  seed: 5\n",
        &format!("{start}  seed: 5\n  defaultRemaining: 2h\n  variation: {{arrivals: poisson, load: 0.3, durations: {{lognormal: {{sigma: 2}}}}}}\n"),
        1,
    );
    for seed in 1..=5 {
        let ws = loaded(&text, Some(seed));
        let running = ws.iter().find(|w| w.name == "running").expect("kept");
        assert!(running.initial_admission.is_some());
        assert_eq!(running.duration, Some(SimDuration::from_secs(7200)));
        let old = ws
            .iter()
            .find(|w| w.name.starts_with("job-old-"))
            .expect("kept");
        assert!(old.created_at.millis() < 0 && old.arrival.millis() == 0);
        assert_eq!(
            ws.iter().filter(|w| w.name.starts_with("job-old-")).count(),
            1
        );
    }
}

#[test]
fn long_names_stay_within_their_kinds_limits() {
    let name = format!("a{}", "b".repeat(62));
    let job = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: ns\n  labels: {{kueue.x-k8s.io/queue-name: lq}}\n  annotations: {{kueuesim.io/arrival: 1h, kueuesim.io/duration: 1h}}\nspec:\n  template:\n    spec:\n      containers:\n      - resources: {{requests: {{cpu: \"1\"}}}}\n"
    );
    let ws = loaded(&scenario("    load: 3\n", &job), None);
    assert_eq!(ws.len(), 3);
    let owners: BTreeSet<&str> = ws
        .iter()
        .map(|w| w.owner.as_ref().expect("job").1.as_str())
        .collect();
    assert_eq!(owners.len(), 3);
    for w in &ws {
        let owner = &w.owner.as_ref().expect("job").1;
        assert!(is_dns1123(owner, 63), "{owner}");
        assert!(is_dns1123(&w.name, 253), "{}", w.name);
    }
    assert!(owners.contains(name.as_str()), "the first keeps its name");
    assert!(
        owners
            .iter()
            .any(|o| o.ends_with("-copy2") && o.len() == 63)
    );
}

#[test]
fn bad_settings_are_errors_at_their_place() {
    let cases = [
        ("    arival: poisson\n", "t.yaml:7:5", "arival"),
        (
            "    arrivals: poison\n",
            "t.yaml:7:15",
            "expected keep, poisson or {jitter: <duration>}",
        ),
        (
            "    arrivals: jitter\n",
            "t.yaml:7:15",
            "jitter needs its width",
        ),
        ("    arrivals: {jiter: 5m}\n", "t.yaml:7:16", "jiter"),
        ("    arrivals: {jitter: -5m}\n", "t.yaml:7:24", "negative"),
        (
            "    arrivals: {jitter: soon}\n",
            "t.yaml:7:24",
            "arrivals.jitter",
        ),
        (
            "    durations: {lognormal: {sigmaa: 1}}\n",
            "t.yaml:7:29",
            "sigmaa",
        ),
        (
            "    durations: {lognormal: {sigma: -0.1}}\n",
            "t.yaml:7:36",
            "expected a number from 0 to 10",
        ),
        (
            "    durations: {lognormal: {sigma: .nan}}\n",
            "t.yaml:7:36",
            "sigma",
        ),
        (
            "    durations: lognormal\n",
            "t.yaml:7:16",
            "needs its sigma",
        ),
        ("    load: 0\n", "t.yaml:7:11", "expected a number above 0"),
        ("    load: -2\n", "t.yaml:7:11", "expected a number above 0"),
        (
            "    load: nan\n",
            "t.yaml:7:11",
            "expected a number above 0",
        ),
        ("    load: 101\n", "t.yaml:7:11", "at most 100"),
        (
            "    resample: weeks\n",
            "t.yaml:7:15",
            "expected days or none",
        ),
    ];
    for (variation, at, what) in cases {
        let e = load_error(&scenario(variation, &generator(3, "1/h")));
        assert!(
            e.contains(at) && e.contains(what),
            "{variation:?}: expected {what:?} at {at}, got: {e}"
        );
    }
}
