//! `kueuesim compare A B`: two results side by side, every summary figure with A, B, their
//! difference (B − A) and relative change, and with replicates on both sides whether the 95 %
//! confidence intervals overlap and a p-value for equal means (a paired t-test when both
//! sides ran the same seeds, else Welch's), and which policies differ (`policy_diff`);
//! `--html` writes the same table as a self-contained page.

use std::path::{Path, PathBuf};

use serde_json::Value;

use std::collections::BTreeMap;

use kueuesim_report::figures::{
    BOUND_BY, Stats, fill_bound_by_zeros, flatten, human, paired_p, renamed, welch_p,
};

use crate::Failure;
use crate::sweep::run::read_rows;

/// The options of `kueuesim compare`.
#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// A `run --out` directory (its summary.json, else its result.json; `run --seeds --out`'s
    /// too), a `-o json` document of `run` or `run --seeds`, or VARIANT@SWEEP-DIR (a sweep's
    /// variant, from its sweep.csv).
    a: String,
    /// The other side, in the same forms.
    b: String,
    /// Also write the table as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Only the figures matching these patterns (`*` any run of characters, as a Sweep's
    /// `figures`), e.g. `waitSecondsInclPending.*,gpu.utilization`; repeatable. A pattern that matches
    /// no figure of either side is an error.
    #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
    figures: Vec<String>,
}

/// One side: its label and, per figure, its statistics (n = 1 for a single run).
pub(crate) struct Side {
    pub(crate) label: String,
    pub(crate) figures: Vec<(String, Stats)>,
    /// Each run's seed (when known) and figures, for the paired test.
    runs: Vec<Run>,
    /// The policies of its (first) run: `summary.policies` (None: a sweep's variant, or a
    /// document from before they were recorded).
    policies: Option<Value>,
    /// Each run's `summary.variation` (what its seeds vary, its workload fingerprint), when
    /// the document has it.
    variation: Vec<RunVariation>,
}

/// What a run's `summary.variation` says: what the seeds vary, and the run's workload
/// fingerprint (absent from summaries written before they were recorded).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RunVariation {
    pub(crate) seeds_vary: Option<Vec<String>>,
    pub(crate) fingerprint: Option<String>,
}

impl RunVariation {
    fn of(summary: &Value) -> Self {
        let v = summary.get("variation");
        RunVariation {
            seeds_vary: v
                .and_then(|v| v.get("seedsVary"))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                }),
            fingerprint: v
                .and_then(|v| v.get("workloadFingerprint"))
                .and_then(Value::as_str)
                .map(String::from),
        }
    }
}

impl Side {
    /// What its seeds vary, in words (its first run's: every run of a side loads the same
    /// scenario).
    fn seeds_vary(&self) -> String {
        match self.variation.iter().find_map(|v| v.seeds_vary.as_ref()) {
            Some(items) => kueuesim_report::output::seeds_vary_text(items),
            None => "not recorded (a result from before kueuesim recorded it)".into(),
        }
    }

    /// Why the spread across its runs is not a day's variation, if it is not (with two runs
    /// or more: one run has no spread to read).
    fn seeds_warning(&self) -> Option<String> {
        if self.runs.len() < 2 {
            return None;
        }
        let items = self.variation.iter().find_map(|v| v.seeds_vary.as_ref())?;
        let prints: Option<Vec<&str>> = self
            .variation
            .iter()
            .map(|v| v.fingerprint.as_deref())
            .collect();
        kueuesim_report::output::seeds_warning(items, &prints.unwrap_or_default())
    }
}

/// A run's seed (when known) and its figures.
type Run = (Option<u64>, Vec<(String, Option<f64>)>);

/// Which test gives the `P` column.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Test {
    /// Both sides ran the same seeds, each once (at least two): B − A per seed, so what the
    /// seeds share (the same arrivals, durations and tie-breaks: common random numbers)
    /// cancels out.
    Paired(usize),
    /// Otherwise Welch's t-test of the two means.
    Welch,
}

/// The paired test when both sides ran the same seeds, each once; else Welch's.
fn test_for(a: &Side, b: &Side) -> Test {
    let seeds = |s: &Side| -> Option<Vec<u64>> {
        let mut v: Vec<u64> = s.runs.iter().map(|r| r.0).collect::<Option<_>>()?;
        v.sort_unstable();
        v.windows(2).all(|w| w[0] != w[1]).then_some(v)
    };
    match (seeds(a), seeds(b)) {
        (Some(x), Some(y)) if x == y && x.len() >= 2 => Test::Paired(x.len()),
        _ => Test::Welch,
    }
}

/// A side from its runs' figures and variations.
fn side_of(label: &str, runs: Vec<Run>, variation: Vec<RunVariation>) -> Side {
    let figures: Vec<Vec<(String, Option<f64>)>> = runs.iter().map(|r| r.1.clone()).collect();
    Side {
        label: label.to_string(),
        figures: across(&figures),
        runs,
        policies: None,
        variation,
    }
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

/// The two sides with every `pendingBoundBy` share a run of either side lacks given as 0
/// where its queue waited in that run (`fill_bound_by_zeros`): a constraint that bound a
/// queue on one side only, or in some seeds only, is a share of 0 in the other runs, which
/// the means and the pairs count.
fn with_bound_by_zeros(a: Side, b: Side) -> (Side, Side) {
    let n = a.runs.len();
    let (la, lb) = (a.label, b.label);
    let (pa, pb) = (a.policies, b.policies);
    let (va, vb) = (a.variation, b.variation);
    let mut runs: Vec<Run> = a.runs.into_iter().chain(b.runs).collect();
    let mut figures: Vec<Vec<(String, Option<f64>)>> =
        runs.iter_mut().map(|r| std::mem::take(&mut r.1)).collect();
    fill_bound_by_zeros(&mut figures);
    for (r, f) in runs.iter_mut().zip(figures) {
        r.1 = f;
    }
    let rb = runs.split_off(n);
    (
        Side {
            policies: pa,
            ..side_of(&la, runs, va)
        },
        Side {
            policies: pb,
            ..side_of(&lb, rb, vb)
        },
    )
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
    let policies = summaries.first().and_then(|s| s.get("policies")).cloned();
    let variation = summaries.iter().map(|s| RunVariation::of(s)).collect();
    let runs: Vec<Run> = summaries
        .into_iter()
        .map(|s| (s.get("seed").and_then(Value::as_u64), flatten(s)))
        .collect();
    Ok(Side {
        policies,
        ..side_of(label, runs, variation)
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
    let runs: Vec<Run> = mine
        .iter()
        .map(|r| {
            let figures = r
                .figures
                .iter()
                .map(|(n, v)| (n.clone(), v.parse().ok()))
                .collect();
            (Some(r.seed), figures)
        })
        .collect();
    let variation = mine.iter().map(|r| r.variation.clone()).collect();
    Ok(side_of(label, runs, variation))
}

/// One line of the comparison.
pub(crate) struct Line {
    pub(crate) figure: String,
    pub(crate) a: Option<Stats>,
    pub(crate) b: Option<Stats>,
    /// The p-value of the comparison's test (`Test`), with replicates on both sides.
    pub(crate) p: Option<f64>,
    /// A paired comparison's line whose figure some seed lacks: its `p` is Welch's.
    pub(crate) unpaired: bool,
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

    /// Whether the difference is significant at 5 %, or the intervals are apart.
    fn differs(&self) -> bool {
        self.overlap() == Some(false) || self.p.is_some_and(|p| p < 0.05)
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
        let mark = if self.unpaired { " (W)" } else { "" };
        let p = match self.p {
            None => String::new(),
            Some(p) if p < 0.001 => format!("<0.001{mark}"),
            Some(p) => format!("{p:.3}{mark}"),
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

/// Every figure of either side: A's order, then B's others; the p-values by `test`.
fn lines(a: &Side, b: &Side, test: Test) -> Vec<Line> {
    let stats = |s: &Side, n: &str| {
        s.figures
            .iter()
            .find(|(m, _)| m == n)
            .map(|(_, x)| x.clone())
    };
    let names = a.figures.iter().map(|(n, _)| n).chain(
        b.figures
            .iter()
            .map(|(n, _)| n)
            .filter(|n| stats(a, n).is_none()),
    );
    names
        .map(|n| {
            let (sa, sb) = (stats(a, n), stats(b, n));
            let (p, unpaired) = p_value(a, b, test, n, sa.as_ref().zip(sb.as_ref()));
            Line {
                figure: n.clone(),
                a: sa,
                b: sb,
                p,
                unpaired,
            }
        })
        .collect()
}

/// A figure's p-value by `test` (with its statistics on both sides), and whether a paired
/// comparison fell back to Welch's test for it.
fn p_value(
    a: &Side,
    b: &Side,
    test: Test,
    figure: &str,
    both: Option<(&Stats, &Stats)>,
) -> (Option<f64>, bool) {
    let welch = both.and_then(|(x, y)| welch_p(x, y));
    let Test::Paired(n) = test else {
        return (welch, false);
    };
    // Every seed with a value on both sides, or the pairs would describe other runs than
    // the A and B columns average (a percentile of no workloads; a summary from before
    // every eviction reason was counted): then Welch's test of those columns.
    let value = |r: &Run| r.1.iter().find(|(m, _)| m == figure).and_then(|(_, x)| *x);
    let pairs: Vec<(f64, f64)> = a
        .runs
        .iter()
        .filter_map(|ra| {
            let rb = b.runs.iter().find(|rb| rb.0 == ra.0)?;
            Some((value(ra)?, value(rb)?))
        })
        .collect();
    if pairs.len() == n {
        (paired_p(&pairs), false)
    } else {
        (welch, welch.is_some())
    }
}

const HEAD: [&str; 7] = ["FIGURE", "A", "B", "B − A", "REL", "CI OVERLAP", "P"];

/// What the `P` column is, when some line has one.
fn test_note(test: Test, lines: &[Line]) -> Option<String> {
    lines.iter().any(|l| l.p.is_some()).then(|| match test {
        Test::Paired(n) => format!(
            "P: paired t-test of B − A over the {n} seeds both sides ran (two-sided; each seed's \
             random draws are the same on both sides){}",
            if lines.iter().any(|l| l.unpaired) {
                "; (W): Welch's t-test, where some seed has no value"
            } else {
                ""
            }
        ),
        Test::Welch => "P: Welch's t-test of the means (two-sided, unequal variances)".into(),
    })
}

fn text(a: &Side, b: &Side, lines: &[Line], test: Test) -> String {
    let rows: Vec<[String; 7]> = std::iter::once(HEAD.map(String::from))
        .chain(lines.iter().map(Line::cells))
        .collect();
    let widths: Vec<usize> = (0..HEAD.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!(
        "A: {} (seeds vary: {})\nB: {} (seeds vary: {})\n{}\n",
        a.label,
        a.seeds_vary(),
        b.label,
        b.seeds_vary(),
        crate::policy_diff::line(a.policies.as_ref(), b.policies.as_ref())
    );
    if let Some(note) = test_note(test, lines) {
        out.push_str(&note);
        out.push('\n');
    }
    out.push('\n');
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
/// `note`, if any, goes under the table (the count of lines left out).
fn html(a: &Side, b: &Side, lines: &[Line], test: Test, note: Option<&str>) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kueuesim compare</title>\n<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left;font-family:monospace}tr.differs td{background:#fde8e8}</style></head><body>\n<h1>kueuesim compare</h1>\n",
    );
    out.push_str(&format!(
        "<p>A: <code>{}</code> (seeds vary: {})<br>B: <code>{}</code> (seeds vary: {})<br>{}{}</p>\n",
        escape(&a.label),
        escape(&a.seeds_vary()),
        escape(&b.label),
        escape(&b.seeds_vary()),
        escape(&crate::policy_diff::line(
            a.policies.as_ref(),
            b.policies.as_ref()
        )),
        test_note(test, lines).map_or(String::new(), |n| format!("<br>{}", escape(&n)))
    ));
    for w in seeds_warnings(a, b) {
        out.push_str(&format!(
            "<p><strong>Warning:</strong> {}</p>\n",
            escape(&w)
        ));
    }
    out.push_str("<table>\n<tr>");
    for h in HEAD {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr>\n");
    for l in lines {
        let class = if l.differs() {
            " class=\"differs\""
        } else {
            ""
        };
        out.push_str(&format!("<tr{class}>"));
        for c in l.cells() {
            out.push_str(&format!("<td>{}</td>", escape(&c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    if let Some(n) = note {
        out.push_str(&format!("<p>{}</p>\n", escape(n)));
    }
    out.push_str("</body></html>\n");
    out
}

/// The warnings of a comparison whose sides' seeds do not vary the workload: one for both
/// sides when both say the same, else one per side that does.
fn seeds_warnings(a: &Side, b: &Side) -> Vec<String> {
    match (a.seeds_warning(), b.seeds_warning()) {
        (Some(x), Some(y)) if x == y => vec![format!("on both sides, {x}")],
        (x, y) => x
            .map(|w| format!("A: {w}"))
            .into_iter()
            .chain(y.map(|w| format!("B: {w}")))
            .collect(),
    }
}

/// `kueuesim compare A B [--html FILE]`.
pub(crate) fn compare(args: &CompareArgs) -> Result<(), Failure> {
    let (a, b) = with_bound_by_zeros(side(&args.a)?, side(&args.b)?);
    // The intervals and P below read the spread across seeds: say when that is not a day's.
    for w in seeds_warnings(&a, &b) {
        crate::warnings::warn(&w);
    }
    let test = test_for(&a, &b);
    let mut lines = lines(&a, &b, test);
    if let Some(p) = args
        .figures
        .iter()
        .find(|p| !lines.iter().any(|l| crate::sweep::glob(p, &l.figure)))
    {
        // A name from before the figures said which workloads they count says so.
        let hint = renamed(p).map_or(String::new(), |r| format!(": it was {r}"));
        return Err(bad(format!(
            "--figures {p}: no figure of either side matches it (the figures are the names \
             in the first column without --figures){hint}"
        )));
    }
    lines.retain(|l| crate::sweep::keep(&args.figures, &l.figure));
    let zeros = fold_zeros(&mut lines, &args.figures, (a.runs.len(), b.runs.len()));
    // What held each queue back, on both sides: with every figure, or when `--figures` kept
    // some `pendingBoundBy` share; the notes on a quota change that did not bind, always.
    let bound = (args.figures.is_empty() || lines.iter().any(|l| l.figure.contains(BOUND_BY)))
        .then(|| bound_by_text(&a, &b))
        .flatten();
    let notes = binding_notes(&a, &b);
    if let Some(path) = &args.html {
        let mut under = zeros.clone().unwrap_or_default();
        for extra in bound.iter().chain(&notes) {
            if !under.is_empty() {
                under.push_str("\n\n");
            }
            under.push_str(extra);
        }
        let under = (!under.is_empty()).then_some(under);
        std::fs::write(path, html(&a, &b, &lines, test, under.as_deref())).map_err(|e| {
            Failure {
                code: 1,
                message: format!("{}: {e}", path.display()),
            }
        })?;
    }
    let mut out = text(&a, &b, &lines, test);
    for extra in zeros.iter().chain(&bound).chain(&notes) {
        out.push('\n');
        out.push_str(extra);
        out.push('\n');
    }
    crate::print_out(&out)
}

/// Per queue (its figures' prefix: `clusterQueues[ml-team]`, `localQueues[ns/name]`), the
/// `pendingBoundBy` shares of a side (means across its runs), by constraint.
fn bound_by(side: &Side) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut out: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for (name, stats) in &side.figures {
        if let Some(i) = name.find(BOUND_BY) {
            out.entry(name[..i].to_string())
                .or_default()
                .insert(name[i + BOUND_BY.len()..].to_string(), stats.mean);
        }
    }
    out
}

/// A queue's largest shares, at most `n`, as `key 12.3 %` joined by commas (`skip` left out).
fn top_shares(shares: &BTreeMap<String, f64>, n: usize, skip: Option<&str>) -> String {
    let mut v: Vec<(&String, f64)> = shares
        .iter()
        .filter(|(k, _)| Some(k.as_str()) != skip)
        .map(|(k, &x)| (k, x))
        .collect();
    v.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(y.0)));
    v.iter()
        .take(n)
        .map(|(k, x)| format!("{k} {:.1} %", x * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The queue a figure prefix names: `ml-team` for `clusterQueues[ml-team]`.
fn queue_name(prefix: &str) -> &str {
    prefix
        .split_once('[')
        .and_then(|(_, rest)| rest.strip_suffix(']'))
        .unwrap_or(prefix)
}

/// Both sides' `pendingBoundBy`, per queue that waited on either side (its three largest
/// shares), or None when neither side has any.
fn bound_by_text(a: &Side, b: &Side) -> Option<String> {
    let (ba, bb) = (bound_by(a), bound_by(b));
    let mut queues: Vec<&String> = ba.keys().chain(bb.keys()).collect();
    queues.sort();
    queues.dedup();
    let shown = |m: &BTreeMap<String, BTreeMap<String, f64>>, q: &String| match m.get(q) {
        Some(s) if s.values().any(|&x| x > 0.0) => top_shares(s, 3, None),
        _ => "no pending time".to_string(),
    };
    let rows: Vec<(String, String, String)> = queues
        .into_iter()
        .filter(|q| {
            let waited = |m: &BTreeMap<String, BTreeMap<String, f64>>| {
                m.get(*q).is_some_and(|s| s.values().any(|&x| x > 0.0))
            };
            waited(&ba) || waited(&bb)
        })
        // ClusterQueues by name, then LocalQueues as `namespace/name`.
        .map(|q| (queue_name(q).to_string(), shown(&ba, q), shown(&bb, q)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let mut out = String::from(
        "What held each queue back (pendingBoundBy: shares of its pending workload-seconds; \
         ClusterQueues, then LocalQueues as namespace/name):\n",
    );
    for (name, sa, sb) in rows {
        out.push_str(&format!(
            "  {name:width$}  A: {sa}\n  {:width$}  B: {sb}\n",
            ""
        ));
    }
    out.pop();
    Some(out)
}

/// Per ClusterQueue, its quota figures of a side (`clusterQueues[q].quota.<resource>.<field>`),
/// as (queue, resource, field) → value.
fn quotas(side: &Side) -> BTreeMap<(String, String, &'static str), f64> {
    let mut out = BTreeMap::new();
    for (name, stats) in &side.figures {
        let Some(rest) = name.strip_prefix("clusterQueues[") else {
            continue;
        };
        let Some((queue, rest)) = rest.split_once("].quota.") else {
            continue;
        };
        for field in ["nominal", "borrowingLimit", "lendingLimit"] {
            if let Some(resource) = rest.strip_suffix(field).and_then(|r| r.strip_suffix('.')) {
                out.insert((queue.to_string(), resource.to_string(), field), stats.mean);
            }
        }
    }
    out
}

/// A quota figure in Kueue's words (`128`, `32000Gi`, `1792`).
fn amount(resource: &str, v: f64) -> String {
    // The figure has cpu in cores; Kueue counts millicores.
    let units = if resource == "cpu" { v * 1000.0 } else { v };
    kueuesim_model::format_amount(resource, units.round() as i64)
}

/// The share below which a constraint is taken not to bind a queue.
const NOT_BINDING: f64 = 0.05;

/// For each ClusterQueue whose nominal quota or borrowing limit of a resource differs between
/// the sides: when on the side where it is higher the queue still waited and that limit's
/// constraint held back under `NOT_BINDING` of its pending time, a note that the change did
/// not bind there, and what did.
fn binding_notes(a: &Side, b: &Side) -> Option<String> {
    let (qa, qb) = (quotas(a), quotas(b));
    let (ba, bb) = (bound_by(a), bound_by(b));
    let mut notes = Vec::new();
    for ((queue, resource, field), &va) in &qa {
        let Some(&vb) = qb.get(&(queue.clone(), resource.clone(), field)) else {
            continue;
        };
        let (key, what) = match *field {
            "nominal" => (format!("quota:{resource}"), "nominal quota"),
            "borrowingLimit" => (format!("borrowingLimit:{resource}"), "borrowingLimit"),
            _ => continue,
        };
        if va == vb {
            continue;
        }
        let raised = vb > va;
        let (high, high_side, low_side) = if raised {
            (&bb, "B", &ba)
        } else {
            (&ba, "A", &bb)
        };
        let (high_value, low_value) = if raised {
            (amount(resource, vb), amount(resource, va))
        } else {
            (amount(resource, va), amount(resource, vb))
        };
        let prefix = format!("clusterQueues[{queue}]");
        let Some(shares) = high.get(&prefix).filter(|s| s.values().any(|&x| x > 0.0)) else {
            continue;
        };
        let share = shares.get(&key).copied().unwrap_or(0.0);
        if share >= NOT_BINDING {
            continue;
        }
        let other = low_side
            .get(&prefix)
            .and_then(|s| s.get(&key))
            .map_or(String::new(), |x| {
                let low = if raised { "A" } else { "B" };
                format!("; at {low_value} ({low}) {:.1} %", x * 100.0)
            });
        // Raised: the new value did not bind. Lowered: the old one did not.
        notes.push(format!(
            "Note: {queue}: {resource} {what} {} → {}{} at {high_value} ({high_side}) its pending time is bound by {} ({key} {:.1} %{other}): the {resource} {what} does not bind at {high_value}",
            amount(resource, va),
            amount(resource, vb),
            if raised { ", but" } else { ";" },
            top_shares(shares, 3, Some(&key)),
            share * 100.0,
        ));
    }
    (!notes.is_empty()).then(|| notes.join("\n"))
}

/// Takes out the lines that are 0 in every run of both sides (an eviction reason neither
/// side saw, a ClusterQueue that preempted nothing): they say nothing about B against A, and
/// a summary lists every eviction and preemption reason. A figure some run lacks stays (the
/// `runs` of each side must all have it), and so does one `--figures` names exactly (no
/// `*`). Returns the sentence that counts them, if any were taken out.
fn fold_zeros(lines: &mut Vec<Line>, patterns: &[String], runs: (usize, usize)) -> Option<String> {
    let zero = |s: &Option<Stats>, n: usize| {
        s.as_ref()
            .is_some_and(|s| s.n == n && s.min == 0.0 && s.max == 0.0)
    };
    let named = |f: &str| patterns.iter().any(|p| !p.contains('*') && p == f);
    let mut folded: Vec<String> = Vec::new();
    lines.retain(|l| {
        let fold = zero(&l.a, runs.0) && zero(&l.b, runs.1) && !named(&l.figure);
        if fold {
            folded.push(l.figure.clone());
        }
        !fold
    });
    let n = folded.len();
    // A few are named (the reasons of `evictions.*`); a whole summary's are only counted.
    let which = if n <= FOLDED_NAMED {
        format!(": {}", folded.join(", "))
    } else {
        " (name one in --figures to show it)".to_string()
    };
    (n > 0).then(|| {
        format!(
            "{n} more figure{} 0 in every run of both sides{which}",
            if n == 1 { " is" } else { "s are" }
        )
    })
}

/// Up to this many folded figures are named under the table.
const FOLDED_NAMED: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    /// A side of runs `(seed, value of figure "x")`; a run without a value lacks the figure.
    fn with_gaps(label: &str, xs: &[(Option<u64>, Option<f64>)]) -> Side {
        let run = |&(seed, x): &(Option<u64>, Option<f64>)| {
            (
                seed,
                x.map(|x| ("x".to_string(), Some(x))).into_iter().collect(),
            )
        };
        side_of(label, xs.iter().map(run).collect(), Vec::new())
    }

    /// A side of runs `(seed, value of figure "x")`.
    fn runs(label: &str, xs: &[(Option<u64>, f64)]) -> Side {
        let xs: Vec<_> = xs.iter().map(|&(seed, x)| (seed, Some(x))).collect();
        with_gaps(label, &xs)
    }

    #[test]
    fn differences_subtract_a_from_b_and_ci_overlap_needs_replicates() {
        let one = |label: &str, w: f64, only: &str| {
            side_of(
                label,
                vec![(
                    Some(1),
                    vec![("w".to_string(), Some(w)), (only.to_string(), Some(1.0))],
                )],
                Vec::new(),
            )
        };
        let (a, b) = (one("a", 10.0, "only.a"), one("b", 15.0, "only.b"));
        let test = test_for(&a, &b);
        assert_eq!(test, Test::Welch, "one run a side pairs nothing");
        let l = lines(&a, &b, test);
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].diff(), Some(5.0));
        assert_eq!(l[0].relative(), Some(50.0));
        assert_eq!(l[0].overlap(), None);
        assert!(l[1].b.is_none() && l[2].a.is_none());
        assert_eq!(l[0].p, None);
        assert_eq!(l[0].cells()[6], "");
        let page = html(&a, &b, &l, test, None);
        assert!(page.contains("<td>+5</td>") && !page.contains("http"));
        // Far apart: the intervals do not overlap and p is tiny.
        let (a, b) = (
            runs("a", &[(None, 1.0), (None, 1.1), (None, 0.9)]),
            runs("b", &[(None, 5.0), (None, 5.1), (None, 4.9)]),
        );
        assert_eq!(test_for(&a, &b), Test::Welch, "no seeds, no pairs");
        let far = &lines(&a, &b, Test::Welch)[0];
        assert_eq!(far.overlap(), Some(false));
        assert!(far.p.unwrap() < 0.001 && far.differs());
        assert_eq!(far.cells()[6], "<0.001");
    }

    #[test]
    fn lines_zero_in_every_run_of_both_sides_are_counted_not_shown() {
        let side = |label: &str, runs: &[[f64; 3]]| {
            let runs = runs
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let names = ["both.zero", "one.zero", "zero.mean"];
                    let figures = names.iter().zip(v).map(|(n, x)| (n.to_string(), Some(*x)));
                    (Some(i as u64 + 1), figures.collect())
                })
                .collect();
            side_of(label, runs, Vec::new())
        };
        // "zero.mean" averages 0 on A (-1 and 1) but is not 0 in every run: it stays.
        let a = side("a", &[[0.0, 0.0, -1.0], [0.0, 0.0, 1.0]]);
        let b = side("b", &[[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]]);
        let test = test_for(&a, &b);
        let names = |patterns: &[&str]| {
            let mut l = lines(&a, &b, test);
            let patterns: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
            l.retain(|l| crate::sweep::keep(&patterns, &l.figure));
            let note = fold_zeros(&mut l, &patterns, (2, 2));
            (l.into_iter().map(|l| l.figure).collect::<Vec<_>>(), note)
        };
        let (shown, note) = names(&[]);
        assert_eq!(shown, ["one.zero", "zero.mean"]);
        assert_eq!(
            note.as_deref(),
            Some("1 more figure is 0 in every run of both sides: both.zero")
        );
        // Named exactly, it is shown; through a pattern, it is folded.
        assert_eq!(names(&["both.zero"]), (vec!["both.zero".to_string()], None));
        assert_eq!(names(&["both.*"]).0, Vec::<String>::new());
        assert_eq!(names(&["one.*"]), (vec!["one.zero".to_string()], None));
        // 0 where A's second run has no value at all (a percentile of no workloads, an
        // older summary): not "0 in every run", so it stays.
        let gap = with_gaps("a", &[(Some(1), Some(0.0)), (Some(2), None)]);
        let zeros = runs("b", &[(Some(1), 0.0), (Some(2), 0.0)]);
        let mut l = lines(&gap, &zeros, test_for(&gap, &zeros));
        assert_eq!(fold_zeros(&mut l, &[], (2, 2)), None);
        assert_eq!(l.len(), 1);
        // The count goes under the HTML table too.
        let mut l = lines(&a, &b, test);
        let note = fold_zeros(&mut l, &[], (2, 2)).expect("one folded");
        let page = html(&a, &b, &l, test, Some(&note));
        assert!(
            page.contains(&format!("</table>\n<p>{note}</p>\n</body>")),
            "{page}"
        );
    }

    #[test]
    fn the_same_seeds_on_both_sides_are_compared_in_pairs() {
        // Seeds far apart, each B a little above its A: the intervals overlap and Welch's
        // test sees the spread between seeds; the pairs see a steady difference.
        let a = runs(
            "a",
            &[
                (Some(1), 10.0),
                (Some(2), 20.0),
                (Some(3), 30.0),
                (Some(4), 40.0),
            ],
        );
        // B's runs in another order: pairs go by seed, not by position.
        let b = runs(
            "b",
            &[
                (Some(3), 30.4),
                (Some(1), 10.5),
                (Some(4), 40.6),
                (Some(2), 20.7),
            ],
        );
        let test = test_for(&a, &b);
        assert_eq!(test, Test::Paired(4));
        let paired = &lines(&a, &b, test)[0];
        assert_eq!(paired.overlap(), Some(true));
        let p = paired.p.unwrap();
        assert!((p - 0.003_395_777_063_859).abs() < 1e-9, "{p}");
        assert!(paired.differs());
        let welch = &lines(&a, &b, Test::Welch)[0];
        assert!(welch.p.unwrap() > 0.9 && !welch.differs());
        let text = text(&a, &b, &lines(&a, &b, test), test);
        assert!(
            text.contains("P: paired t-test of B − A over the 4 seeds"),
            "{text}"
        );
        // A figure some seed lacks (a percentile of no workloads) on one side: that line
        // is Welch's test of the A and B columns, marked, and the note says so.
        let ga = with_gaps(
            "a",
            &[
                (Some(1), Some(10.0)),
                (Some(2), Some(12.0)),
                (Some(3), None),
            ],
        );
        let gb = with_gaps(
            "b",
            &[
                (Some(1), Some(11.0)),
                (Some(2), Some(13.0)),
                (Some(3), Some(1.0)),
            ],
        );
        let test = test_for(&ga, &gb);
        assert_eq!(test, Test::Paired(3));
        let l = lines(&ga, &gb, test);
        assert!(l[0].unpaired);
        assert_eq!(
            l[0].p,
            welch_p(l[0].a.as_ref().unwrap(), l[0].b.as_ref().unwrap())
        );
        assert!(l[0].cells()[6].ends_with(" (W)"), "{:?}", l[0].cells());
        assert!(super::text(&ga, &gb, &l, test).contains("(W): Welch's t-test"));
        // Other seeds, or a seed twice, and the test is Welch's.
        let other = runs(
            "c",
            &[
                (Some(1), 10.5),
                (Some(2), 20.7),
                (Some(3), 30.4),
                (Some(5), 1.0),
            ],
        );
        assert_eq!(test_for(&a, &other), Test::Welch);
        let twice = runs(
            "d",
            &[
                (Some(1), 1.0),
                (Some(1), 2.0),
                (Some(2), 3.0),
                (Some(3), 4.0),
            ],
        );
        assert_eq!(test_for(&twice, &twice), Test::Welch);
        let text = super::text(&a, &other, &lines(&a, &other, Test::Welch), Test::Welch);
        assert!(text.contains("P: Welch's t-test"), "{text}");
    }
}
