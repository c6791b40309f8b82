//! `kueuesim compare A B`: two results side by side, every summary figure with A, B, their
//! difference (B − A) and relative change, and with replicates on both sides whether the 95 %
//! confidence intervals overlap and Welch's p-value for equal means; `--html` writes the
//! same table as a self-contained page.

use std::path::{Path, PathBuf};

use serde_json::Value;

use kueuesim_report::figures::{Stats, flatten, human, welch_p};

use crate::Failure;
use crate::sweep::run::read_rows;

/// The options of `kueuesim compare`.
#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// A `run --out` directory (its result.json), a `-o json` document of `run` or
    /// `run --seeds`, or VARIANT@SWEEP-DIR (a sweep's variant, from its sweep.csv).
    a: String,
    /// The other side, in the same forms.
    b: String,
    /// Also write the table as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Only the figures matching these patterns (`*` any run of characters, as a Sweep's
    /// `figures`), e.g. `waitSeconds.*,gpu.utilization`; repeatable. A pattern that matches
    /// no figure of either side is an error.
    #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
    figures: Vec<String>,
}

/// One side: its label and, per figure, its statistics (n = 1 for a single run).
pub(crate) struct Side {
    pub(crate) label: String,
    pub(crate) figures: Vec<(String, Stats)>,
}

fn bad(message: String) -> Failure {
    Failure { code: 2, message }
}

fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| Failure {
        code: 1,
        message: format!("{}: {e}", path.display()),
    })
}

/// Reads one side of the comparison.
pub(crate) fn side(arg: &str) -> Result<Side, Failure> {
    let path = Path::new(arg);
    if !path.exists()
        && let Some((variant, dir)) = arg.rsplit_once('@')
    {
        return sweep_variant(variant, Path::new(dir), arg);
    }
    if path.is_dir() {
        // The summary alone when the run wrote it: the same figures as result.json's, without
        // parsing every workload (gigabytes on a large run). A run does not clear its
        // directory, so a summary.json older than the result.json beside it is a former
        // run's: the result then speaks for the directory.
        let summary = path.join("summary.json");
        let result = path.join("result.json");
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        if summary.is_file() && !(result.is_file() && modified(&result) > modified(&summary)) {
            return document(&read(&summary)?, arg);
        }
        if result.is_file() {
            return document(&read(&result)?, arg);
        }
        if path.join("sweep.csv").is_file() {
            return Err(bad(format!(
                "{arg} is a sweep's directory: expected VARIANT@{arg} (a variant of sweep.csv)"
            )));
        }
        return Err(bad(format!(
            "{arg}: no summary.json or result.json in it: expected a `run --out` directory whose --write included summary or result (the default, all, does)"
        )));
    }
    if !path.exists() {
        return Err(Failure {
            code: 1,
            message: format!("{arg}: no such file or directory"),
        });
    }
    document(&read(path)?, arg)
}

/// A SimulationResult or ReplicateResults document (JSON, or YAML).
fn document(text: &str, label: &str) -> Result<Side, Failure> {
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(_) => kueuesim_scenario::source::from_yaml(text).map_err(|e| {
            bad(format!(
                "{label}: not a JSON or YAML document: {}",
                kueuesim_scenario::source::yaml_message(&e)
            ))
        })?,
    };
    let summaries: Vec<&Value> = match v.get("kind").and_then(Value::as_str) {
        Some("ReplicateResults") => v
            .get("runs")
            .and_then(Value::as_array)
            .map(|runs| runs.iter().filter_map(|r| r.get("summary")).collect())
            .unwrap_or_default(),
        _ => v.get("summary").into_iter().collect(),
    };
    if summaries.is_empty() {
        return Err(bad(format!(
            "{label}: expected a SimulationResult (run -o json, run --out's result.json), SimulationSummary (run --out's summary.json) or ReplicateResults (run --seeds -o json) document"
        )));
    }
    let runs: Vec<Vec<(String, Option<f64>)>> = summaries.into_iter().map(flatten).collect();
    Ok(Side {
        label: label.to_string(),
        figures: across(&runs),
    })
}

/// Per figure (first-seen order, `seed` left out), its statistics across runs.
fn across(runs: &[Vec<(String, Option<f64>)>]) -> Vec<(String, Stats)> {
    let mut names: Vec<&str> = Vec::new();
    for r in runs {
        for (n, _) in r {
            if n != "seed" && !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
    }
    names
        .into_iter()
        .filter_map(|n| {
            let xs = runs
                .iter()
                .map(|r| r.iter().find(|(m, _)| m == n).and_then(|(_, x)| *x));
            Stats::of(xs).map(|s| (n.to_string(), s))
        })
        .collect()
}

/// A variant of a sweep: its runs that finished, from sweep.csv.
fn sweep_variant(variant: &str, dir: &Path, label: &str) -> Result<Side, Failure> {
    let rows = read_rows(&read(&dir.join("sweep.csv"))?);
    let mine: Vec<_> = rows
        .iter()
        .filter(|r| r.variant == variant && r.error.is_empty())
        .collect();
    if mine.is_empty() {
        let mut names: Vec<&str> = rows.iter().map(|r| r.variant.as_str()).collect();
        names.dedup();
        return Err(bad(format!(
            "{label}: no finished run of variant {variant:?} in {}: its variants are {}",
            dir.join("sweep.csv").display(),
            names.join(" ")
        )));
    }
    let runs: Vec<Vec<(String, Option<f64>)>> = mine
        .iter()
        .map(|r| {
            r.figures
                .iter()
                .map(|(n, v)| (n.clone(), v.parse().ok()))
                .collect()
        })
        .collect();
    Ok(Side {
        label: label.to_string(),
        figures: across(&runs),
    })
}

/// One line of the comparison.
pub(crate) struct Line {
    pub(crate) figure: String,
    pub(crate) a: Option<Stats>,
    pub(crate) b: Option<Stats>,
}

impl Line {
    /// B − A of the means.
    pub(crate) fn diff(&self) -> Option<f64> {
        Some(self.b.as_ref()?.mean - self.a.as_ref()?.mean)
    }

    fn relative(&self) -> Option<f64> {
        let a = self.a.as_ref()?.mean;
        (a != 0.0).then(|| self.diff().map(|d| d / a.abs() * 100.0))?
    }

    /// With replicates on both sides, whether the 95 % intervals overlap.
    fn overlap(&self) -> Option<bool> {
        let (a, b) = (self.a.as_ref()?, self.b.as_ref()?);
        (a.n > 1 && b.n > 1).then(|| a.overlaps(b))
    }

    /// With replicates on both sides, Welch's two-sided p-value for equal means.
    fn p_value(&self) -> Option<f64> {
        welch_p(self.a.as_ref()?, self.b.as_ref()?)
    }

    /// Whether the difference is significant at 5 % (Welch), or the intervals are apart.
    fn differs(&self) -> bool {
        self.overlap() == Some(false) || self.p_value().is_some_and(|p| p < 0.05)
    }

    fn cells(&self) -> [String; 7] {
        let show = |s: &Option<Stats>| match s {
            None => "-".to_string(),
            Some(s) => match s.ci95 {
                Some(h) => format!(
                    "{} ± {}",
                    human(&self.figure, s.mean),
                    human(&self.figure, h)
                ),
                None => human(&self.figure, s.mean),
            },
        };
        let diff = self.diff().map_or("-".into(), |d| {
            let sign = if d > 0.0 { "+" } else { "" };
            format!("{sign}{}", human(&self.figure, d))
        });
        let rel = self.relative().map_or("-".into(), |r| format!("{r:+.1} %"));
        let overlap = match self.overlap() {
            None => String::new(),
            Some(true) => "yes".into(),
            Some(false) => "no".into(),
        };
        let p = match self.p_value() {
            None => String::new(),
            Some(p) if p < 0.001 => "<0.001".into(),
            Some(p) => format!("{p:.3}"),
        };
        [
            self.figure.clone(),
            show(&self.a),
            show(&self.b),
            diff,
            rel,
            overlap,
            p,
        ]
    }
}

/// Every figure of either side: A's order, then B's others.
pub(crate) fn lines(a: &Side, b: &Side) -> Vec<Line> {
    let mut out: Vec<Line> = a
        .figures
        .iter()
        .map(|(n, s)| Line {
            figure: n.clone(),
            a: Some(s.clone()),
            b: b.figures
                .iter()
                .find(|(m, _)| m == n)
                .map(|(_, s)| s.clone()),
        })
        .collect();
    for (n, s) in &b.figures {
        if !a.figures.iter().any(|(m, _)| m == n) {
            out.push(Line {
                figure: n.clone(),
                a: None,
                b: Some(s.clone()),
            });
        }
    }
    out
}

const HEAD: [&str; 7] = [
    "FIGURE",
    "A",
    "B",
    "B − A",
    "REL",
    "CI OVERLAP",
    "P (WELCH)",
];

fn text(a: &Side, b: &Side, lines: &[Line]) -> String {
    let rows: Vec<[String; 7]> = std::iter::once(HEAD.map(String::from))
        .chain(lines.iter().map(Line::cells))
        .collect();
    let widths: Vec<usize> = (0..HEAD.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!("A: {}\nB: {}\n\n", a.label, b.label);
    for r in &rows {
        let mut l = String::from(" ");
        for (i, c) in r.iter().enumerate() {
            let pad = widths[i] - c.chars().count();
            l.push(' ');
            if i == 0 {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            } else {
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            }
            l.push(' ');
        }
        out.push_str(l.trim_end());
        out.push('\n');
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The table as a self-contained page.
fn html(a: &Side, b: &Side, lines: &[Line]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kueuesim compare</title>\n<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left;font-family:monospace}tr.no td{background:#fde8e8}</style></head><body>\n<h1>kueuesim compare</h1>\n",
    );
    out.push_str(&format!(
        "<p>A: <code>{}</code><br>B: <code>{}</code></p>\n<table>\n<tr>",
        escape(&a.label),
        escape(&b.label)
    ));
    for h in HEAD {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr>\n");
    for l in lines {
        let class = if l.differs() { " class=\"no\"" } else { "" };
        out.push_str(&format!("<tr{class}>"));
        for c in l.cells() {
            out.push_str(&format!("<td>{}</td>", escape(&c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n</body></html>\n");
    out
}

/// `kueuesim compare A B [--html FILE]`.
pub(crate) fn compare(args: &CompareArgs) -> Result<(), Failure> {
    let a = side(&args.a)?;
    let b = side(&args.b)?;
    let mut lines = lines(&a, &b);
    if let Some(p) = args
        .figures
        .iter()
        .find(|p| !lines.iter().any(|l| crate::sweep::glob(p, &l.figure)))
    {
        return Err(bad(format!(
            "--figures {p}: no figure of either side matches it (the figures are the names \
             in the first column without --figures)"
        )));
    }
    lines.retain(|l| crate::sweep::keep(&args.figures, &l.figure));
    if let Some(path) = &args.html {
        std::fs::write(path, html(&a, &b, &lines)).map_err(|e| Failure {
            code: 1,
            message: format!("{}: {e}", path.display()),
        })?;
    }
    crate::print_out(&text(&a, &b, &lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_subtract_a_from_b_and_ci_overlap_needs_replicates() {
        let one = |x: f64| Stats::of([Some(x)]).unwrap();
        let many = |xs: &[f64]| Stats::of(xs.iter().map(|x| Some(*x))).unwrap();
        let a = Side {
            label: "a".into(),
            figures: vec![("w".into(), one(10.0)), ("only.a".into(), one(1.0))],
        };
        let b = Side {
            label: "b".into(),
            figures: vec![("w".into(), one(15.0)), ("only.b".into(), one(2.0))],
        };
        let l = lines(&a, &b);
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].diff(), Some(5.0));
        assert_eq!(l[0].relative(), Some(50.0));
        assert_eq!(l[0].overlap(), None);
        assert!(l[1].b.is_none() && l[2].a.is_none());
        let far = Line {
            figure: "x".into(),
            a: Some(many(&[1.0, 1.1, 0.9])),
            b: Some(many(&[5.0, 5.1, 4.9])),
        };
        assert_eq!(far.overlap(), Some(false));
        assert!(far.p_value().unwrap() < 0.001 && far.differs());
        assert_eq!(far.cells()[6], "<0.001");
        // Intervals that overlap while Welch's test tells the means apart.
        let close = Line {
            figure: "x".into(),
            a: Some(many(&[10.0, 11.0, 9.5, 10.5])),
            b: Some(many(&[12.0, 12.5, 11.0, 13.0])),
        };
        assert_eq!(close.overlap(), Some(true));
        let p = close.p_value().unwrap();
        assert!(p < 0.05 && close.differs(), "{p}");
        assert_eq!(close.cells()[6], format!("{p:.3}"));
        assert_eq!(l[0].p_value(), None);
        assert_eq!(l[0].cells()[6], "");
        let page = html(&a, &b, &l);
        assert!(page.contains("<td>+5</td>") && !page.contains("http"));
    }
}
