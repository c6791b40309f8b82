//! `spec.search`: bisection over an integer parameter (assumed monotone: once the target is
//! met, every larger value meets it) for the smallest value whose runs over the sweep's seeds
//! meet a figure's bound, by their mean or on every seed; a warning when the probes show the
//! figure going up and down.

use kueuesim_report::figures::{Stats, human};
use kueuesim_scenario::overlay::closest_hint;
use kueuesim_scenario::{ScenarioError, SourceFile};

use super::run::{Prepared, Row, Runner};
use super::spec::{Scalar, Search, Sweep, Variant, variant_of};
use crate::Failure;

/// One evaluated value.
struct Step {
    value: i64,
    meets: bool,
    stats: Option<Stats>,
    failed: usize,
}

/// The variants of the search, checked at its smallest and largest values.
fn variant_at(sweep: &Sweep, s: &Search, v: i64) -> Variant {
    let values: Vec<Scalar> = sweep
        .parameters
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i == s.parameter {
                Scalar::Int(v)
            } else {
                p.values[0].clone()
            }
        })
        .collect();
    variant_of(&sweep.parameters, values)
}

/// Checks the search's templates at both ends of its range before any run.
pub(crate) fn check(sweep: &Sweep, base: &[SourceFile]) -> Result<(), Failure> {
    let s = sweep.search.as_ref().expect("a search");
    for v in [s.min, s.max] {
        Prepared::new(sweep, &variant_at(sweep, s, v)).check(sweep, base)?;
    }
    Ok(())
}

/// Runs the search; its rows (in step order) and the answer as text.
pub(crate) fn search(runner: &Runner<'_>) -> Result<(Vec<Row>, String), Failure> {
    let sweep = runner.sweep;
    let s = sweep.search.as_ref().expect("a search");
    let count = (s.max - s.min) / s.step + 1;
    let value = |k: i64| s.min + k * s.step;
    let mut rows: Vec<Row> = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    let eval = |k: i64, rows: &mut Vec<Row>, steps: &mut Vec<Step>| -> Result<bool, Failure> {
        let v = value(k);
        let p = Prepared::new(sweep, &variant_at(sweep, s, v));
        let got = runner.run(&[(p, Some(steps.len() + 1))]);
        let step = judge(s, &sweep.file.text, v, &got)?;
        let meets = step.meets;
        steps.push(step);
        rows.extend(got);
        Ok(meets)
    };
    // The largest value first: if it misses, nothing in range meets the target.
    let answer = if !eval(count - 1, &mut rows, &mut steps)? {
        None
    } else if count == 1 || eval(0, &mut rows, &mut steps)? {
        Some(value(if count == 1 { count - 1 } else { 0 }))
    } else {
        let (mut lo, mut hi) = (0, count - 1);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if eval(mid, &mut rows, &mut steps)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(value(hi))
    };
    let mut out = text(runner, s, answer, &steps);
    if let Some(w) = not_one_way(sweep, s, &steps) {
        eprintln!("warning: {w}");
        out.push_str(&format!("\nwarning: {w}\n"));
    }
    Ok((rows, out))
}

/// Bisection assumes the figure moves one way as the parameter grows (so that once a value
/// meets the target every larger one does): when the probes' means, in the order of their
/// values, go up and down, what that says (the answer may then not be the smallest value
/// that meets the target, or a value may meet it that the search never tried).
fn not_one_way(sweep: &Sweep, s: &Search, steps: &[Step]) -> Option<String> {
    let mut probes: Vec<(i64, f64)> = steps
        .iter()
        .filter_map(|st| Some((st.value, st.stats.as_ref()?.mean)))
        .collect();
    probes.sort_by_key(|p| p.0);
    let rises = probes.windows(2).any(|w| w[1].1 > w[0].1);
    let falls = probes.windows(2).any(|w| w[1].1 < w[0].1);
    // Whether a value that met the target lies below one that did not.
    let mut met: Vec<(i64, bool)> = steps.iter().map(|st| (st.value, st.meets)).collect();
    met.sort_by_key(|m| m.0);
    let broken = met.windows(2).any(|w| w[0].1 && !w[1].1);
    let one_way = !(rises && falls);
    if one_way && !broken {
        return None;
    }
    let param = &sweep.parameters[s.parameter].name;
    let seen: Vec<String> = probes
        .iter()
        .map(|(v, m)| format!("{} at {v}", human(&s.figure, *m)))
        .collect();
    Some(format!(
        "search: {} does not move one way as {param} grows across the probes ({}): bisection \
         assumes it does, so the answer may not be the smallest {param} that meets the target \
         (a sweep over spec.parameters[].values shows the whole curve)",
        s.figure,
        seen.join(", ")
    ))
}

/// Whether one value's runs meet the target.
fn judge(s: &Search, file_text: &str, value: i64, rows: &[Row]) -> Result<Step, Failure> {
    let ok: Vec<&Row> = rows.iter().filter(|r| r.error.is_empty()).collect();
    if let Some(r) = ok.first()
        && !r.figures.iter().any(|(n, _)| *n == s.figure)
    {
        let hint = closest_hint(&s.figure, r.figures.iter().map(|(n, _)| n.as_str()));
        return Err(ScenarioError::at(
            s.figure_pos.clone(),
            format!(
                "search.target.figure {:?} is not a figure of the run's summary{hint}",
                s.figure
            ),
            file_text,
        )
        .into());
    }
    let xs: Vec<Option<f64>> = rows.iter().map(|r| r.figure(&s.figure)).collect();
    let failed = rows.len() - ok.len();
    let stats = Stats::of(xs.iter().copied());
    let meet = |x: f64| {
        if s.at_most {
            x <= s.bound
        } else {
            x >= s.bound
        }
    };
    // A failed run, or one without a value, never counts as meeting the target.
    let meets = failed == 0
        && xs.iter().all(Option::is_some)
        && if s.over_mean {
            stats.as_ref().is_some_and(|st| meet(st.mean))
        } else {
            xs.iter().flatten().all(|&x| meet(x))
        };
    Ok(Step {
        value,
        meets,
        stats,
        failed,
    })
}

fn text(runner: &Runner<'_>, s: &Search, answer: Option<i64>, steps: &[Step]) -> String {
    let sweep = runner.sweep;
    let param = &sweep.parameters[s.parameter].name;
    let cmp = if s.at_most { "≤" } else { "≥" };
    let over = if s.over_mean {
        "mean over"
    } else {
        "on every one of"
    };
    let target = format!(
        "{} {cmp} {} ({over} {} seeds)",
        s.figure,
        human(&s.figure, s.bound),
        sweep.seeds.len()
    );
    let mut out = match answer {
        Some(v) => format!("search: the smallest {param} with {target}: {v}\n\n"),
        None => format!(
            "search: no {param} in {}..{} (step {}) gives {target}\n\n",
            s.min, s.max, s.step
        ),
    };
    out.push_str(&format!(
        "  {:>4}  {:>10}  {:>12}  {:>12}  {:>12}  {:>6}  MEETS\n",
        "STEP", param, "MEAN", "±95% CI", "MAX", "FAILED"
    ));
    for (i, st) in steps.iter().enumerate() {
        let f = |x: Option<f64>| x.map_or("-".to_string(), |x| human(&s.figure, x));
        out.push_str(&format!(
            "  {:>4}  {:>10}  {:>12}  {:>12}  {:>12}  {:>6}  {}\n",
            i + 1,
            st.value,
            f(st.stats.as_ref().map(|x| x.mean)),
            f(st.stats.as_ref().and_then(|x| x.ci95)),
            f(st.stats.as_ref().map(|x| x.max)),
            st.failed,
            if st.meets { "yes" } else { "no" }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep() -> Sweep {
        let text = "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata: {name: q}\nspec:\n  base: ../platform\n  seeds: 1..2\n  parameters:\n  - name: gpus\n    set: 'cq/a:spec.x={{value}}'\n  search:\n    parameter: gpus\n    min: 0\n    max: 100\n    step: 10\n    target: {figure: waitSecondsInclPending.p95, atMost: 3600}\n";
        super::super::spec::parse(
            SourceFile {
                name: "s.yaml".into(),
                text: text.into(),
            },
            std::path::Path::new("dir"),
            "s",
        )
        .expect("a sweep")
    }

    fn step(value: i64, mean: f64, meets: bool) -> Step {
        Step {
            value,
            meets,
            stats: Stats::of([Some(mean)]),
            failed: 0,
        }
    }

    #[test]
    fn a_figure_that_goes_up_and_down_across_the_probes_is_said() {
        let sw = sweep();
        let s = sw.search.as_ref().expect("a search");
        // In the order run: the largest, the smallest, then the middles.
        let falling = [
            step(100, 600.0, true),
            step(0, 9000.0, false),
            step(50, 3000.0, true),
        ];
        assert_eq!(not_one_way(&sw, s, &falling), None);
        let bumpy = [
            step(100, 600.0, true),
            step(0, 9000.0, false),
            step(50, 200.0, true),
            step(20, 7200.0, false),
        ];
        let w = not_one_way(&sw, s, &bumpy).expect("a warning");
        assert!(
            w.starts_with(
                "search: waitSecondsInclPending.p95 does not move one way as gpus grows across \
                 the probes (2.50 h at 0, 2.00 h at 20, 3.3 min at 50, 10.0 min at 100)"
            ),
            "{w}"
        );
    }
}
