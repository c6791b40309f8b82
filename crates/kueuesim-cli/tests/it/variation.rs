//! What the seeds vary, as a user meets it: the reference platform's day varies per seed
//! (arrivals and durations, not only tie-breaks), the same seed gives the same bytes, and
//! the summary, `--seeds`, `compare` and the result JSON say what the seeds vary, with a
//! warning where the spread across seeds is tie-break noise.

use std::collections::BTreeMap;

use super::{kueuesim, scenario, stderr, stdout, temp_dir};

/// The platform's day as its file writes it: no variation but the tie-breaks.
const AS_WRITTEN: [&str; 4] = [
    "--set",
    "Simulation/platform-day:spec.variation.arrivals=keep",
    "--set",
    "Simulation/platform-day:spec.variation.durations=keep",
];

fn platform_json(seed: &str, extra: &[&str]) -> serde_json::Value {
    let platform = scenario("platform");
    let args = [&["run", &platform, "--seed", seed, "-o", "json"][..], extra].concat();
    let o = kueuesim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("json")
}

/// Each workload's name and createdAt, but the serving replicas of the inference namespace:
/// the variation keeps them as written (their arrivals are their objects' scale-ups).
fn created(doc: &serde_json::Value) -> BTreeMap<String, f64> {
    doc["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .filter(|w| w["namespace"] != "inference")
        .map(|w| {
            (
                format!(
                    "{}/{}",
                    w["namespace"].as_str().expect("ns"),
                    w["name"].as_str().expect("name")
                ),
                w["createdAt"].as_f64().expect("createdAt"),
            )
        })
        .collect()
}

/// Per job of the input (a copy's `-copy<k>` dropped), the times its workloads were created.
fn arrivals_per_job(doc: &serde_json::Value) -> BTreeMap<String, Vec<f64>> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (name, at) in created(doc) {
        let job = match name.rsplit_once("-copy") {
            Some((base, k)) if k.parse::<u32>().is_ok() => base.to_string(),
            _ => name,
        };
        out.entry(job).or_default().push(at);
    }
    for v in out.values_mut() {
        v.sort_by(f64::total_cmp);
    }
    out
}

#[test]
fn on_the_platform_seeds_1_and_2_give_most_workloads_other_arrivals() {
    let (one, two) = (platform_json("1", &[]), platform_json("2", &[]));
    // Each job of the file is a Poisson count of arrivals in its hour: on another seed it
    // comes at other instants, another number of times, or (both times) not at all.
    let (a, b) = (arrivals_per_job(&one), arrivals_per_job(&two));
    let jobs: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let none = Vec::new();
    let differ = jobs
        .iter()
        .filter(|j| a.get(**j).unwrap_or(&none) != b.get(**j).unwrap_or(&none))
        .count();
    assert!(jobs.len() >= 70, "{} jobs came on either seed", jobs.len());
    assert_eq!(
        differ,
        jobs.len(),
        "every job that came arrives otherwise on the other seed"
    );
    assert!(
        differ * 4 > 80 * 3,
        "{differ} of the file's 80 jobs arrive otherwise"
    );
    // The serving objects' replicas arrive at their scale-ups on every seed.
    let serving = |doc: &serde_json::Value| -> Vec<(String, f64)> {
        doc["workloads"]
            .as_array()
            .expect("workloads")
            .iter()
            .filter(|w| w["namespace"] == "inference")
            .map(|w| {
                (
                    w["name"].as_str().expect("name").to_string(),
                    w["createdAt"].as_f64().expect("createdAt"),
                )
            })
            .collect()
    };
    assert_eq!(serving(&one), serving(&two));
    assert_eq!(serving(&one).len(), 16);
    let (ca, cb) = (created(&one), created(&two));
    let shared = ca.keys().filter(|k| cb.contains_key(*k)).count();
    let moved = ca
        .keys()
        .filter(|k| cb.get(*k).is_some_and(|t| *t != ca[*k]))
        .count();
    assert_eq!(
        moved, shared,
        "a workload of both seeds arrives at another time"
    );
    // The variation is said in the document, and so is what it replayed.
    let v = &one["summary"]["variation"];
    assert_eq!(v["arrivals"], "poisson");
    assert_eq!(v["durations"], "lognormal sigma 0.35");
    assert_eq!(
        v["seedsVary"],
        serde_json::json!([
            "arrivals (poisson at the input's hourly rate)",
            "durations (lognormal σ 0.35)",
            "tie-breaks"
        ])
    );
    assert_ne!(
        v["workloadFingerprint"],
        two["summary"]["variation"]["workloadFingerprint"]
    );
    // As written, only the tie-breaks vary: the same workloads for every seed.
    let (k1, k2) = (
        platform_json("1", &AS_WRITTEN),
        platform_json("2", &AS_WRITTEN),
    );
    assert_eq!(created(&k1), created(&k2));
    assert_eq!(
        k1["summary"]["variation"]["seedsVary"],
        serde_json::json!(["tie-breaks"])
    );
    assert_eq!(
        k1["summary"]["variation"]["workloadFingerprint"],
        k2["summary"]["variation"]["workloadFingerprint"]
    );
}

#[test]
fn the_same_seed_gives_the_same_bytes_with_the_variation_on() {
    let platform = scenario("platform");
    let run = || kueuesim(&["run", &platform, "--seed", "9", "-o", "json"]);
    let (a, b) = (run(), run());
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(a.stdout, b.stdout);
    // The summary run (streamed) and the full run replay the same workloads.
    let text = kueuesim(&["run", &platform, "--seed", "9"]);
    let doc: serde_json::Value = serde_json::from_slice(&a.stdout).expect("json");
    let total = doc["summary"]["workloads"]["total"]
        .as_u64()
        .expect("total");
    assert!(
        stdout(&text).contains(&format!("Workloads:    {total} total,")),
        "{}",
        stdout(&text)
    );
}

#[test]
fn the_summary_seeds_and_compare_say_what_the_seeds_vary() {
    let platform = scenario("platform");
    let one = kueuesim(&["run", &platform, "--until", "2h"]);
    assert!(stdout(&one).starts_with(
        "Seeds vary:   arrivals (poisson at the input's hourly rate), durations (lognormal σ 0.35), tie-breaks\n"
    ), "{}", stdout(&one));
    let fixed = kueuesim(&[&["run", &platform, "--until", "2h"][..], &AS_WRITTEN].concat());
    assert!(
        stdout(&fixed).starts_with("Seeds vary:   tie-breaks only\n"),
        "{}",
        stdout(&fixed)
    );

    // Replicates of the varied day: said above the table, no warning; as written, a warning
    // that the spread is tie-break noise.
    let seeds = kueuesim(&["run", &platform, "--seeds", "1..3", "--until", "6h"]);
    assert!(
        stdout(&seeds).contains("\nSeeds vary: arrivals (poisson at the input's hourly rate), durations (lognormal σ 0.35), tie-breaks\n"),
        "{}",
        stdout(&seeds)
    );
    assert!(
        !stderr(&seeds).contains("tie-break noise"),
        "{}",
        stderr(&seeds)
    );
    let fixed_seeds = kueuesim(
        &[
            &["run", &platform, "--seeds", "1..3", "--until", "6h"][..],
            &AS_WRITTEN,
        ]
        .concat(),
    );
    assert!(stdout(&fixed_seeds).contains("\nSeeds vary: tie-breaks only\n"));
    assert!(
        stderr(&fixed_seeds).contains("warning: the seeds vary tie-breaks only: every seed replays the same workloads, so the spread across seeds is tie-break noise"),
        "{}",
        stderr(&fixed_seeds)
    );

    // Two policies compared over the same seeds: the varied day's intervals hold the day's
    // own variation (how many workloads came differs by seed: a count with an interval),
    // where the day as written has none but tie-breaks.
    let dir = temp_dir("variation-compare");
    let out = |name: &str, extra: &[&str]| {
        let d = dir.join(name);
        let args = [
            &[
                "run",
                &platform,
                "--seeds",
                "1..4",
                "--until",
                "12h",
                "--out",
                d.to_str().unwrap(),
                "--write",
                "summary",
                "-q",
            ][..],
            extra,
        ]
        .concat();
        let o = kueuesim(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        d.display().to_string()
    };
    let quota = "cq/ml-team:spec.resourceGroups[0].flavors[0].resources[name=nvidia.com/gpu].nominalQuota=192";
    let (a, b) = (out("a", &[]), out("b", &["--set", quota]));
    let o = kueuesim(&[
        "compare",
        &a,
        &b,
        "--figures",
        "workloads.total,waitSecondsInclPending.p95",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with(&format!("A: {a} (seeds vary: arrivals (poisson at the input's hourly rate), durations (lognormal σ 0.35), tie-breaks)\n")),
        "{text}"
    );
    assert!(!stderr(&o).contains("tie-break"), "{}", stderr(&o));
    let total = text
        .lines()
        .find(|l| l.trim_start().starts_with("workloads.total"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        total.contains(" ± "),
        "an interval of the day's count: {total}"
    );

    let (fa, fb) = (
        out("fa", &AS_WRITTEN),
        out("fb", &[&AS_WRITTEN[..], &["--set", quota]].concat()),
    );
    let o = kueuesim(&["compare", &fa, &fb, "--figures", "workloads.total"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("(seeds vary: tie-breaks only)"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("warning: on both sides, the seeds vary tie-breaks only"),
        "{}",
        stderr(&o)
    );
}
