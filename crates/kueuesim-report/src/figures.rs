//! A run's summary as named figures (`workloads.finished`, `waitSecondsInclPending.p90`,
//! `clusterQueues[ml-team].gpuSeconds`, …), and their statistics across replicate runs: what
//! seeds, sweeps and `compare` print and write.

use serde_json::Value;

/// One named figure of a run; `None` where the summary has no value (e.g. a percentile of no
/// workloads).
pub type Figure = (String, Option<f64>);

/// Every number of a summary document, flattened in document order: mappings by `.`, lists
/// of named items by `[name]`, or `[namespace/name]` for namespaced items (LocalQueues of
/// the same name in two namespaces are two figures). Lists of plain numbers (the per-hour
/// series) and strings are not figures and are left out, and so are the `policies` (the
/// settings the run had, which `compare` shows on a line of their own) and the `variation`
/// (what the seed changes: a description of the input, the same in every run of it).
pub fn flatten(summary: &Value) -> Vec<Figure> {
    let mut out = Vec::new();
    walk(summary, &mut String::new(), &mut out);
    out
}

fn walk(v: &Value, path: &mut String, out: &mut Vec<Figure>) {
    match v {
        Value::Number(n) => out.push((path.clone(), n.as_f64())),
        Value::Null => out.push((path.clone(), None)),
        Value::Object(m) => {
            for (k, x) in m {
                if path.is_empty() && (k == "policies" || k == "variation") {
                    continue;
                }
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                walk(x, path, out);
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for item in items {
                let Some(name) = item.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let len = path.len();
                path.push('[');
                if let Some(ns) = item.get("namespace").and_then(Value::as_str) {
                    path.push_str(ns);
                    path.push('/');
                }
                path.push_str(name);
                path.push(']');
                walk(item, path, out);
                path.truncate(len);
            }
        }
        Value::Bool(_) | Value::String(_) => {}
    }
}

/// The distributions renamed so that a figure's name says which workloads it counts (the
/// old name, the new one, what the new one counts, and the family that counts the
/// still-pending workloads too, if any).
const RENAMED: [(&str, &str, &str, Option<&str>); 4] = [
    (
        "waitSeconds",
        "waitSecondsAdmitted",
        "admitted",
        Some("waitSecondsInclPending"),
    ),
    (
        "timeInQueueSeconds",
        "timeInQueueSecondsAdmitted",
        "admitted",
        Some("timeInQueueSecondsInclPending"),
    ),
    ("jctSeconds", "jctSecondsFinished", "finished", None),
    (
        "boundedSlowdown",
        "boundedSlowdownFinished",
        "finished",
        None,
    ),
];

/// For a figure name or pattern that names a renamed distribution (`waitSeconds.p95`,
/// `clusterQueues[*].waitSeconds.*`), what to write instead:
/// `"renamed to waitSecondsAdmitted.p95 (the admitted workloads alone); waitSecondsInclPending.p95
/// counts the still-pending"`. A name whose part between dots (outside `[...]`) is an old
/// name is one; `waitSecondsInclPending` is not.
pub fn renamed(pattern: &str) -> Option<String> {
    // The parts between the dots outside brackets, as byte ranges.
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in pattern.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '.' if depth == 0 => {
                parts.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(start..pattern.len());
    for range in parts {
        let part = &pattern[range.clone()];
        let Some(&(_, new, counts, pending)) = RENAMED.iter().find(|(o, ..)| *o == part) else {
            continue;
        };
        let with =
            |name: &str| format!("{}{name}{}", &pattern[..range.start], &pattern[range.end..]);
        let also = pending.map_or(String::new(), |p| {
            format!("; {} counts the still-pending", with(p))
        });
        return Some(format!(
            "renamed to {} (the {counts} workloads alone){also}",
            with(new)
        ));
    }
    None
}

/// What marks a `pendingBoundBy` share in a figure's name: the queue's figures before it,
/// the constraint after it (`clusterQueues[ml-team].pendingBoundBy.quota:cpu`).
pub const BOUND_BY: &str = ".pendingBoundBy.";

/// The summary figure of KAI's consolidation evictions, which a summary lists only where the
/// action moved pods (so that runs without it read as before it was modelled).
pub const CONSOLIDATION_EVICTIONS: &str = "evictions.Consolidation";

/// Gives each run the `pendingBoundBy` shares another run has and it lacks, as 0, where its
/// queue had pending time (some share of its own); a queue that never waited has no shares
/// to give. A run lists only the constraints that bound it, so without this a mean across
/// seeds would count a constraint only over the seeds it bound in (an eviction reason is a
/// count of 0 in every summary for the same reason). Likewise KAI's `Consolidation`
/// evictions ([`CONSOLIDATION_EVICTIONS`]), listed only by runs where it moved pods: 0 in the
/// others.
pub fn fill_bound_by_zeros(runs: &mut [Vec<Figure>]) {
    if runs
        .iter()
        .any(|r| r.iter().any(|(n, _)| n == CONSOLIDATION_EVICTIONS))
    {
        for r in runs.iter_mut() {
            if !r.iter().any(|(n, _)| n == CONSOLIDATION_EVICTIONS) {
                r.push((CONSOLIDATION_EVICTIONS.to_string(), Some(0.0)));
            }
        }
    }
    let queue = |n: &str| n.find(BOUND_BY).map(|i| n[..i].to_string());
    let mut seen = std::collections::BTreeSet::new();
    let mut names: Vec<String> = Vec::new();
    for r in runs.iter() {
        for (n, _) in r {
            if n.contains(BOUND_BY) && seen.insert(n.clone()) {
                names.push(n.clone());
            }
        }
    }
    if names.is_empty() {
        return;
    }
    for r in runs.iter_mut() {
        let waited: std::collections::BTreeSet<String> =
            r.iter().filter_map(|(n, _)| queue(n)).collect();
        let has: std::collections::BTreeSet<String> = r
            .iter()
            .filter(|(n, _)| n.contains(BOUND_BY))
            .map(|(n, _)| n.clone())
            .collect();
        for n in &names {
            if !has.contains(n) && queue(n).is_some_and(|q| waited.contains(&q)) {
                r.push((n.clone(), Some(0.0)));
            }
        }
    }
}

/// Mean, spread and 95 % confidence interval of one figure across replicate runs.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Runs with a value.
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for one run.
    pub sd: f64,
    /// Half-width of the 95 % confidence interval of the mean (Student's t, n − 1 degrees of
    /// freedom); `None` for fewer than two runs.
    pub ci95: Option<f64>,
    pub min: f64,
    pub max: f64,
}

impl Stats {
    /// The statistics of `values` (runs without a value left out); `None` if none has one.
    pub fn of(values: impl IntoIterator<Item = Option<f64>>) -> Option<Stats> {
        let xs: Vec<f64> = values.into_iter().flatten().collect();
        let n = xs.len();
        if n == 0 {
            return None;
        }
        // Summed in the given order: the same runs give the same bits.
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let ci95 = (n > 1).then(|| t95(n - 1) * sd / (n as f64).sqrt());
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Stats {
            n,
            mean,
            sd,
            ci95,
            min,
            max,
        })
    }

    /// The confidence interval, or the single value.
    pub fn interval(&self) -> (f64, f64) {
        let h = self.ci95.unwrap_or(0.0);
        (self.mean - h, self.mean + h)
    }

    /// Whether the two confidence intervals overlap.
    pub fn overlaps(&self, other: &Stats) -> bool {
        let (a0, a1) = self.interval();
        let (b0, b1) = other.interval();
        a0 <= b1 && b0 <= a1
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (two-sided 95 %).
pub fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    // Past 30 degrees of freedom the table's next entries (40, 60, 120, ∞) are used for
    // every df at or above them: the interval is never narrower than the exact one.
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        31..=39 => T[29],
        40..=59 => 2.021,
        60..=119 => 2.000,
        120..=999 => 1.980,
        _ => 1.962,
    }
}

/// Welch's two-sided t-test of equal means: the probability of a difference of the means at
/// least as large as the one seen if the two sides' runs came from distributions with the
/// same mean, without assuming equal variances (Welch–Satterthwaite degrees of freedom).
/// `None` unless both sides have two runs or more, and when neither side has any spread but
/// the means differ (1 for equal means).
pub fn welch_p(a: &Stats, b: &Stats) -> Option<f64> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (va, vb) = (a.sd * a.sd / a.n as f64, b.sd * b.sd / b.n as f64);
    let se2 = va + vb;
    if se2 == 0.0 {
        // No spread on either side: equal means are no difference; different ones leave the
        // test without a scale to judge them by (the `REL` column still shows them).
        return (a.mean == b.mean).then_some(1.0);
    }
    let t = (b.mean - a.mean) / se2.sqrt();
    let df = se2 * se2 / (va * va / (a.n - 1) as f64 + vb * vb / (b.n - 1) as f64);
    Some(student_t_tails(t, df))
}

/// The paired t-test of `pairs` (A, B) — the same seed on both sides, so the same random
/// draws: the two-sided p-value of a mean B − A difference at least as large as the one
/// seen if the true mean difference were zero. `None` for fewer than two pairs, and when
/// every pair differs by the same nonzero amount (1 when none differs).
pub fn paired_p(pairs: &[(f64, f64)]) -> Option<f64> {
    let n = pairs.len();
    if n < 2 {
        return None;
    }
    let d = Stats::of(pairs.iter().map(|&(a, b)| Some(b - a)))?;
    if d.sd == 0.0 {
        // The same difference in every pair (or none): no scale to judge it by.
        return (d.mean == 0.0).then_some(1.0);
    }
    let t = d.mean / (d.sd / (n as f64).sqrt());
    Some(student_t_tails(t, (n - 1) as f64))
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
fn student_t_tails(t: f64, df: f64) -> f64 {
    incomplete_beta(df / (df + t * t), df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The regularized incomplete beta function I_x(a, b), from its continued fraction (modified
/// Lentz), on the side of x where the fraction converges fast.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let step = |num: f64, c: &mut f64, d: &mut f64| {
            *d = 1.0 + num * *d;
            if d.abs() < TINY {
                *d = TINY;
            }
            *c = 1.0 + num / *c;
            if c.abs() < TINY {
                *c = TINY;
            }
            *d = 1.0 / *d;
            *c * *d
        };
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        h *= step(even, &mut c, &mut d);
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        let delta = step(odd, &mut c, &mut d);
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms: about 15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// A figure's value as a person reads it: durations (`…Seconds` figures) in s, min or h,
/// shares and utilisations as percentages, counts as integers.
pub fn human(name: &str, v: f64) -> String {
    let leaf = name.rsplit('.').next().unwrap_or(name);
    if name.contains(BOUND_BY) {
        // A share; its key may hold dots (`quota:nvidia.com/gpu`).
        format!("{:.1} %", v * 100.0)
    } else if name.contains("Seconds") && !leaf.starts_with("count") {
        let a = v.abs();
        if a >= 3600.0 {
            format!("{:.2} h", v / 3600.0)
        } else if a >= 60.0 {
            format!("{:.1} min", v / 60.0)
        } else {
            format!("{v:.1} s")
        }
    } else if leaf.contains("utilization")
        || leaf.contains("Utilization")
        || leaf.ends_with("Share")
        || leaf == "share"
    {
        format!("{:.1} %", v * 100.0)
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// KAI's consolidation evictions, listed only by the runs where it moved pods, are 0 in
    /// the other runs (a mean across seeds counts them), and absent where no run has them.
    #[test]
    fn missing_consolidation_evictions_are_zero() {
        let f = |n: &str, v: f64| (n.to_string(), Some(v));
        let mut runs = vec![
            vec![f(CONSOLIDATION_EVICTIONS, 2.0)],
            vec![f("evictions.Reclaim", 1.0)],
        ];
        fill_bound_by_zeros(&mut runs);
        assert!(
            runs[1].contains(&f(CONSOLIDATION_EVICTIONS, 0.0)),
            "{runs:?}"
        );
        let mut none = vec![vec![f("evictions.Reclaim", 1.0)]];
        fill_bound_by_zeros(&mut none);
        assert_eq!(none, [vec![f("evictions.Reclaim", 1.0)]]);
    }

    /// A share one run lacks is 0 there when its queue waited, and stays missing when the
    /// queue never did (no shares at all).
    #[test]
    fn missing_shares_are_zero_where_the_queue_waited() {
        let f = |n: &str, v: f64| (n.to_string(), Some(v));
        let mut runs = vec![
            vec![
                f("clusterQueues[a].pendingBoundBy.quota:nvidia.com/gpu", 1.0),
                f("clusterQueues[b].pendingBoundBy.nodes", 1.0),
            ],
            vec![
                f("clusterQueues[a].pendingBoundBy.quota:cpu", 0.6),
                f("clusterQueues[a].pendingBoundBy.topology", 0.4),
            ],
        ];
        fill_bound_by_zeros(&mut runs);
        let names = |r: &[Figure]| {
            let mut v: Vec<(String, Option<f64>)> = r.to_vec();
            v.sort_by(|x, y| x.0.cmp(&y.0));
            v
        };
        assert_eq!(
            names(&runs[0]),
            [
                f("clusterQueues[a].pendingBoundBy.quota:cpu", 0.0),
                f("clusterQueues[a].pendingBoundBy.quota:nvidia.com/gpu", 1.0),
                f("clusterQueues[a].pendingBoundBy.topology", 0.0),
                f("clusterQueues[b].pendingBoundBy.nodes", 1.0),
            ]
        );
        // Queue b did not wait in the second run: no share of it there.
        assert_eq!(
            names(&runs[1]),
            [
                f("clusterQueues[a].pendingBoundBy.quota:cpu", 0.6),
                f("clusterQueues[a].pendingBoundBy.quota:nvidia.com/gpu", 0.0),
                f("clusterQueues[a].pendingBoundBy.topology", 0.4),
            ]
        );
        assert_eq!(
            human("clusterQueues[a].pendingBoundBy.quota:nvidia.com/gpu", 0.25),
            "25.0 %"
        );
    }

    /// Two-sided p-values of Student's t through the incomplete beta function Welch's test
    /// uses: against the closed forms for 1 and 3 degrees of freedom, else against the density
    /// integrated numerically (Simpson's rule over atan(x), 200,000 steps); the tables' 5 %
    /// points come back.
    #[test]
    fn old_figure_names_say_what_they_were_renamed_to() {
        assert_eq!(
            renamed("waitSeconds.p95").as_deref(),
            Some(
                "renamed to waitSecondsAdmitted.p95 (the admitted workloads alone); \
                 waitSecondsInclPending.p95 counts the still-pending"
            )
        );
        assert_eq!(
            renamed("clusterQueues[a.b].timeInQueueSeconds.*").as_deref(),
            Some(
                "renamed to clusterQueues[a.b].timeInQueueSecondsAdmitted.* (the admitted \
                 workloads alone); clusterQueues[a.b].timeInQueueSecondsInclPending.* counts \
                 the still-pending"
            )
        );
        assert_eq!(
            renamed("localQueues[ns/q].jctSeconds.p50").as_deref(),
            Some(
                "renamed to localQueues[ns/q].jctSecondsFinished.p50 (the finished workloads alone)"
            )
        );
        for fine in [
            "waitSecondsInclPending.p95",
            "waitSecondsAdmitted.p95",
            "wait*.p95",
            "clusterQueues[waitSeconds].gpuShare",
            "gpu.utilization",
        ] {
            assert_eq!(renamed(fine), None, "{fine}");
        }
    }

    #[test]
    fn student_t_tails_match_the_integrated_density() {
        let p = student_t_tails;
        for (t, df, want) in [
            (12.706, 1.0, 0.050_000_802_358_133),
            (3.182, 3.0, 0.050_017_136_543_314),
            (2.228, 10.0, 0.050_011_771_817_108),
            (1.96, 1e7, 0.049_995_818_117_705),
            (1.0, 5.0, 0.363_217_467_649_115),
            (3.25, 4.6, 0.025_611_219_734_967),
            (10.0, 2.5, 0.004_441_495_767_307),
            (0.0, 7.0, 1.0),
        ] {
            let got = p(t, df);
            assert!(
                (got - want).abs() < 1e-9,
                "t {t}, df {df}: {got} for {want}"
            );
        }
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }

    #[test]
    fn paired_differences_remove_what_the_seeds_share() {
        assert_eq!(paired_p(&[(1.0, 2.0)]), None);
        assert_eq!(paired_p(&[(1.0, 2.0), (5.0, 6.0)]), None);
        assert_eq!(paired_p(&[(1.0, 1.0), (5.0, 5.0)]), Some(1.0));
        // Seeds far apart, each B a little above its A: Welch sees the spread between seeds,
        // the pairs see a steady difference. Differences 0.5, 0.7, 0.4, 0.6: mean 0.55,
        // sd 0.1291, t = 8.5206 with 3 degrees of freedom (closed form for df = 3).
        let pairs = [(10.0, 10.5), (20.0, 20.7), (30.0, 30.4), (40.0, 40.6)];
        let p = paired_p(&pairs).unwrap();
        assert!((p - 0.003_395_777_063_859).abs() < 1e-9, "{p}");
        let side = |f: fn(&(f64, f64)) -> f64| Stats::of(pairs.iter().map(|x| Some(f(x)))).unwrap();
        assert!(welch_p(&side(|x| x.0), &side(|x| x.1)).unwrap() > 0.9);
    }

    #[test]
    fn welch_needs_replicates_and_tells_apart_what_differs() {
        let s = |xs: &[f64]| Stats::of(xs.iter().map(|x| Some(*x))).unwrap();
        assert_eq!(welch_p(&s(&[1.0]), &s(&[2.0, 3.0])), None);
        assert_eq!(welch_p(&s(&[1.0, 1.0]), &s(&[1.0, 1.0])), Some(1.0));
        assert_eq!(welch_p(&s(&[1.0, 1.0]), &s(&[2.0, 2.0])), None);
        // Symmetric, and far apart means a small p.
        let (a, b) = (s(&[10.0, 11.0, 9.5, 10.5]), s(&[12.0, 12.5, 11.0, 13.0]));
        let p = welch_p(&a, &b).unwrap();
        assert_eq!(Some(p), welch_p(&b, &a));
        // t = 3.5032, 5.5846 degrees of freedom (Welch–Satterthwaite); the tail from the
        // density integrated numerically (400,000 Simpson steps).
        assert!((p - 0.014_366_522_791_264).abs() < 1e-9, "{p}");
        assert!(welch_p(&a, &s(&[10.2, 10.4, 9.9, 10.9])).unwrap() > 0.5);
    }

    #[test]
    fn flatten_names_nested_and_listed_figures() {
        let v: Value = serde_json::from_str(
            r#"{"seed": 3, "startTime": "x", "waitSecondsAdmitted": {"count": 2, "p50": null},
                "clusterQueues": [{"name": "a", "evictions": 1, "gpuSecondsByHour": [1, 2]}],
                "localQueues": [{"namespace": "x", "name": "d", "pending": 1},
                                {"namespace": "y", "name": "d", "pending": 2}],
                "evictions": {"Preempted": 4}}"#,
        )
        .unwrap();
        let f = flatten(&v);
        let names: Vec<&str> = f.iter().map(|(n, _)| n.as_str()).collect();
        // serde_json orders an object's keys by name; lists keep their order.
        assert_eq!(
            names,
            [
                "clusterQueues[a].evictions",
                "evictions.Preempted",
                "localQueues[x/d].pending",
                "localQueues[y/d].pending",
                "seed",
                "waitSecondsAdmitted.count",
                "waitSecondsAdmitted.p50"
            ]
        );
        assert_eq!(f[0].1, Some(1.0));
        assert_eq!(f[3].1, Some(2.0));
        assert_eq!(f[6].1, None);
    }

    #[test]
    fn stats_give_students_t_interval() {
        // 2, 4, 6: mean 4, sd 2, t(2) = 4.303, half-width 4.303 * 2 / sqrt(3).
        let s = Stats::of([Some(2.0), Some(4.0), None, Some(6.0)]).unwrap();
        assert_eq!(s.n, 3);
        assert_eq!(s.mean, 4.0);
        assert!((s.sd - 2.0).abs() < 1e-12);
        assert!((s.ci95.unwrap() - 4.303 * 2.0 / 3f64.sqrt()).abs() < 1e-9);
        assert_eq!((s.min, s.max), (2.0, 6.0));
        let one = Stats::of([Some(5.0)]).unwrap();
        assert_eq!(one.ci95, None);
        assert!(Stats::of([None]).is_none());
        let far = Stats::of([Some(100.0), Some(101.0)]).unwrap();
        assert!(!s.overlaps(&far) && s.overlaps(&s));
        assert!(t95(35) >= 2.030 && t95(10_000) > 1.959);
    }

    #[test]
    fn human_units() {
        assert_eq!(human("waitSecondsInclPending.p90", 15516.0), "4.31 h");
        assert_eq!(human("waitSecondsInclPending.count", 12.0), "12");
        assert_eq!(human("gpu.utilization", 0.677), "67.7 %");
        assert_eq!(human("workloads.finished", 85.0), "85");
    }
}
