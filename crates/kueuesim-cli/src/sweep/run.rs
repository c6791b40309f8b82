//! Running a sweep's variants × seeds in parallel: each variant's overrides made from its
//! templates (errors pointed back into the Sweep file), the rows of `sweep.csv` (written as
//! runs finish, reused by a rerun, rewritten in canonical order at the end) and
//! `sweep-summary.csv`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use kueuesim_model::SimDuration;
use kueuesim_report::escape::CsvColumn::{Number, Text};
use kueuesim_report::escape::{CsvColumn, csv_cell, csv_unguard};
use kueuesim_report::figures::{Stats, flatten};
use kueuesim_scenario::overlay::{Overrides, kind_matches, set_sources};
use kueuesim_scenario::source::split_objects;
use kueuesim_scenario::{LoadOptions, Pos, ScenarioError, SourceFile};

use super::spec::{Sweep, Template, Variant, fill, origin};
use crate::Failure;
use crate::replicates;

/// Where each line and column of a filled template was in the template.
type ColumnMap = Vec<Vec<(u64, u64)>>;

/// A variant's overrides, ready to load, and where each came from.
pub(crate) struct Prepared {
    pub(crate) name: String,
    pub(crate) values: Vec<String>,
    pub(crate) sets: Vec<String>,
    pub(crate) patches: Vec<SourceFile>,
    /// For `--set[k]` (k = index + 1) and each patch's name: its template and position map.
    origins: Vec<(String, Template, ColumnMap, &'static str)>,
}

impl Prepared {
    /// The overrides of `variant`.
    pub(crate) fn new(sweep: &Sweep, variant: &Variant) -> Prepared {
        let mut p = Prepared {
            name: variant.name.clone(),
            values: variant.values.iter().map(ToString::to_string).collect(),
            sets: Vec::new(),
            patches: Vec::new(),
            origins: Vec::new(),
        };
        for (t, value, is_patch) in &variant.applies {
            let (text, map) = fill(&t.text, value.as_ref());
            if *is_patch {
                let name = format!("{}#patch{}", sweep.file.name, p.patches.len() + 1);
                p.origins.push((name.clone(), t.clone(), map, "patch"));
                p.patches.push(SourceFile { name, text });
            } else {
                p.sets.push(text);
                let name = format!("--set[{}]", p.sets.len());
                p.origins.push((name, t.clone(), map, "--set"));
            }
        }
        p
    }

    /// An error in one of the variant's filled templates, pointed at the template in the Sweep
    /// file and naming the variant and what the template belongs to.
    pub(crate) fn remap(&self, sweep: &Sweep, e: ScenarioError) -> ScenarioError {
        if let ScenarioError::At { pos, message, .. } = &e
            && let Some((_, t, map, what)) = self.origins.iter().find(|o| o.0 == pos.file)
        {
            let (line, column) = origin(&t.at, map, pos.line, pos.column);
            return ScenarioError::at(
                Pos {
                    file: sweep.file.name.clone(),
                    line,
                    column,
                },
                format!(
                    "{message} (variant {}: {what} of {})",
                    self.name, t.at.owner
                ),
                &sweep.file.text,
            );
        }
        e
    }

    /// Applies the overrides to the base objects without loading them: a template whose
    /// path or object matches nothing is an error of the sweep, not of one run. A base with
    /// WorkloadTraces (whose generated objects exist only in a full load) is left to the runs.
    pub(crate) fn check(&self, sweep: &Sweep, base: &[SourceFile]) -> Result<(), ScenarioError> {
        let set_files = set_sources(&self.sets);
        let mut overrides =
            Overrides::read(&self.patches, &set_files).map_err(|e| self.remap(sweep, e))?;
        let mut objects = Vec::new();
        for f in base {
            objects.extend(split_objects(f)?);
        }
        if objects
            .iter()
            .any(|o| kind_matches(&o.kind, "WorkloadTrace"))
        {
            return Ok(());
        }
        let mut notes = Vec::new();
        overrides
            .apply(&mut objects, |_| true, &mut notes)
            .map_err(|e| self.remap(sweep, e))
    }
}

/// One row of `sweep.csv`: a run, or the error that stopped it.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    pub(crate) variant: String,
    pub(crate) step: Option<usize>,
    pub(crate) values: Vec<String>,
    pub(crate) seed: u64,
    /// Empty for a run that finished.
    pub(crate) error: String,
    /// Every figure of the run, in its summary's order, as written (empty: no value).
    pub(crate) figures: Vec<(String, String)>,
    /// What the run's seed varies and its workload fingerprint (`summary.variation`;
    /// sweep.csv's `seedsVary` and `workloadFingerprint`).
    pub(crate) variation: crate::compare::RunVariation,
    /// The loader's warnings and the capacity checks of this run (not in sweep.csv: a row
    /// read back from it has none).
    pub(crate) warnings: Vec<String>,
}

impl Row {
    pub(crate) fn figure(&self, name: &str) -> Option<f64> {
        match self.figures.iter().find(|(n, _)| n == name) {
            Some((_, v)) => v.parse().ok(),
            // KAI's consolidation evictions, listed only where it moved pods: 0 elsewhere.
            None if name == kueuesim_report::figures::CONSOLIDATION_EVICTIONS => Some(0.0),
            // A `pendingBoundBy` share the run lacks is 0 where its queue waited (some share
            // of its own), as `fill_bound_by_zeros` makes it for `run --seeds` and compare.
            None => {
                let i = name.find(kueuesim_report::figures::BOUND_BY)?;
                let queue = &name[..i + kueuesim_report::figures::BOUND_BY.len()];
                self.figures
                    .iter()
                    .any(|(n, _)| n.starts_with(queue))
                    .then_some(0.0)
            }
        }
    }
}

/// What runs need besides the variant: the base, the run options.
pub(crate) struct Runner<'a> {
    pub(crate) sweep: &'a Sweep,
    pub(crate) base: Vec<SourceFile>,
    pub(crate) opts: LoadOptions,
    pub(crate) until: Option<SimDuration>,
    pub(crate) jobs: usize,
    pub(crate) progress: super::Progress,
    /// Rows already written (a rerun), by (variant, seed).
    pub(crate) done: BTreeMap<(String, u64), Row>,
    /// `sweep.csv` as it grows (rows appended as runs finish), and its columns.
    pub(crate) journal: Mutex<Journal>,
}

/// The file rows are appended to while runs finish.
pub(crate) struct Journal {
    pub(crate) path: PathBuf,
    pub(crate) columns: Option<Vec<String>>,
    pub(crate) params: Vec<String>,
    pub(crate) search: bool,
    /// Failed runs finished before any run gave the figure columns.
    pub(crate) pending: Vec<Row>,
}

impl Journal {
    pub(crate) fn append(&mut self, row: &Row) {
        if self.columns.is_none() && row.figures.is_empty() {
            self.pending.push(row.clone());
            return;
        }
        let fresh = self.columns.is_none();
        let columns = self
            .columns
            .get_or_insert_with(|| row.figures.iter().map(|(n, _)| n.clone()).collect());
        let mut text = String::new();
        if fresh {
            text.push_str(&header(&self.params, self.search, columns));
        }
        for r in self.pending.drain(..) {
            text.push_str(&line(&r, self.search, columns));
        }
        text.push_str(&line(row, self.search, columns));
        // A journal that cannot be appended to only costs a rerun its reuse; the final
        // rewrite reports the failure. One that is a symbolic link is not written through
        // (no output leaves `--out`): the final rewrite replaces the link.
        let link = std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_symlink());
        if !link
            && let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
        {
            let _ = f.write_all(text.as_bytes());
        }
    }
}

impl Runner<'_> {
    /// Runs (or reuses) every seed of each of `variants`; rows in variant, then seed order.
    pub(crate) fn run(&self, variants: &[(Prepared, Option<usize>)]) -> Vec<Row> {
        let seeds = &self.sweep.seeds;
        let keys: Vec<(usize, u64)> = (0..variants.len())
            .flat_map(|v| seeds.iter().map(move |s| (v, *s)))
            .collect();
        let todo: Vec<usize> = (0..keys.len())
            .filter(|&i| {
                let (v, s) = keys[i];
                !self.done.contains_key(&(variants[v].0.name.clone(), s))
            })
            .collect();
        self.progress.add(todo.len());
        let computed = replicates::in_parallel(
            todo.len(),
            self.jobs,
            |i| {
                let (v, seed) = keys[todo[i]];
                let row = self.one(&variants[v].0, variants[v].1, seed);
                self.journal
                    .lock()
                    .expect("no run panics holding the lock")
                    .append(&row);
                row
            },
            |_| self.progress.tick(),
        );
        let mut computed = computed.into_iter();
        let mut todo = todo.into_iter().peekable();
        (0..keys.len())
            .map(|i| {
                if todo.peek() == Some(&i) {
                    todo.next();
                    return computed.next().expect("one row per run");
                }
                let (v, seed) = keys[i];
                let mut row = self.done[&(variants[v].0.name.clone(), seed)].clone();
                row.step = variants[v].1;
                row
            })
            .collect()
    }

    /// The first seed of every variant not yet done, in parallel, before any other run: a
    /// variant that does not load (a value its field cannot take, `nominalQuota=12x8`) is
    /// an input error of the Sweep, the same for every seed — the sweep stops with it (exit 2)
    /// before writing anything, at no cost over the runs themselves. The rows made are kept as
    /// done and returned, for the journal.
    pub(crate) fn first_seeds(
        &mut self,
        variants: &[(Prepared, Option<usize>)],
    ) -> Result<Vec<Row>, Failure> {
        let Some(&seed) = self.sweep.seeds.first() else {
            return Ok(Vec::new());
        };
        let todo: Vec<usize> = (0..variants.len())
            .filter(|&v| !self.done.contains_key(&(variants[v].0.name.clone(), seed)))
            .collect();
        self.progress.add(todo.len());
        let results = replicates::in_parallel(
            todo.len(),
            self.jobs,
            |i| {
                let (p, step) = &variants[todo[i]];
                self.checked(p, *step, seed)
            },
            |_| self.progress.tick(),
        );
        let mut rows = Vec::new();
        for r in results {
            let row = r?;
            self.done
                .insert((row.variant.clone(), row.seed), row.clone());
            rows.push(row);
        }
        Ok(rows)
    }

    /// One run of variant `p` with `seed`, as its row.
    pub(crate) fn one(&self, p: &Prepared, step: Option<usize>, seed: u64) -> Row {
        match self.checked(p, step, seed) {
            Ok(row) => row,
            Err(f) => Row {
                variant: p.name.clone(),
                step,
                values: p.values.clone(),
                seed,
                error: f.message.lines().next().unwrap_or("failed").to_string(),
                figures: Vec::new(),
                variation: Default::default(),
                warnings: Vec::new(),
            },
        }
    }

    /// One run of variant `p` with `seed`: its row (a failure while running is an error row),
    /// or the failure of its load.
    fn checked(&self, p: &Prepared, step: Option<usize>, seed: u64) -> Result<Row, Failure> {
        let opts = LoadOptions {
            seed: Some(seed),
            patches: p.patches.clone(),
            sets: p.sets.clone(),
            ..self.opts.clone()
        };
        let r = replicates::simulate_staged(&self.base, opts, self.until, false, None, |e| {
            Failure::from(p.remap(self.sweep, e))
        });
        let r = match r {
            Err(e) if e.at_load => return Err(e.failure),
            r => r.map_err(|e| e.failure),
        };
        let mut warnings = Vec::new();
        let mut variation = crate::compare::RunVariation::default();
        let (error, figures) = match r {
            Ok((doc, loaded)) => {
                let v = &doc.summary.variation;
                variation = crate::compare::RunVariation {
                    seeds_vary: Some(v.seeds_vary.clone()),
                    fingerprint: Some(v.workload_fingerprint.clone()),
                };
                warnings = loaded;
                // A missing LocalQueue is already the loader's warning, with its position.
                warnings.extend(
                    doc.summary
                        .checks
                        .iter()
                        .filter(|c| c.kind != "WorkloadsNameMissingLocalQueue")
                        .map(|c| c.message.clone()),
                );
                let v = serde_json::to_value(&doc.summary).expect("the summary serializes");
                let figures = flatten(&v)
                    .into_iter()
                    .filter(|(n, _)| n != "seed" && super::keep(&self.sweep.figures, n))
                    .map(|(n, x)| (n, x.map_or(String::new(), |x| format!("{x}"))))
                    .collect();
                (String::new(), figures)
            }
            Err(f) => (
                f.message.lines().next().unwrap_or("failed").to_string(),
                Vec::new(),
            ),
        };
        Ok(Row {
            variant: p.name.clone(),
            step,
            values: p.values.clone(),
            seed,
            error,
            figures,
            variation,
            warnings,
        })
    }
}

/// The figure columns of `rows`: with patterns, in pattern order, each pattern's matches in
/// first-seen order; else every figure in first-seen order.
pub(crate) fn columns(patterns: &[String], rows: &[Row]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for r in rows {
        for (n, _) in &r.figures {
            if !seen.contains(n) {
                seen.push(n.clone());
            }
        }
    }
    if patterns.is_empty() {
        return seen;
    }
    let mut out: Vec<String> = Vec::new();
    for p in patterns {
        for n in &seen {
            if super::glob(p, n) && !out.contains(n) {
                out.push(n.clone());
            }
        }
    }
    out
}

/// A cell of `sweep.csv`, `sweep-summary.csv` or an index's row: the rule of every CSV file
/// kueuesim writes (`escape::csv_cell`: text never starts a formula, holds no control
/// character); a parameter's values are numbers when they are ones.
fn csv_field(s: &str, column: CsvColumn) -> String {
    csv_cell(s, column).into_owned()
}

/// The columns after `error` that say what the run's seed varies: not figures.
const VARIATION_COLUMNS: [&str; 2] = ["seedsVary", "workloadFingerprint"];

fn header(params: &[String], search: bool, columns: &[String]) -> String {
    let mut h: Vec<String> = vec!["variant".into()];
    if search {
        h.push("step".into());
    }
    h.extend(params.iter().cloned());
    h.extend(["seed", "status", "error"].map(String::from));
    h.extend(VARIATION_COLUMNS.map(String::from));
    h.extend(columns.iter().cloned());
    let h: Vec<String> = h.iter().map(|s| csv_field(s, Text)).collect();
    format!("{}\n", h.join(","))
}

fn line(r: &Row, search: bool, columns: &[String]) -> String {
    let mut f: Vec<String> = vec![csv_field(&r.variant, Text)];
    if search {
        f.push(r.step.map_or(String::new(), |s| s.to_string()));
    }
    f.extend(r.values.iter().map(|v| csv_field(v, Number)));
    f.push(r.seed.to_string());
    f.push(if r.error.is_empty() { "ok" } else { "error" }.into());
    f.push(csv_field(&r.error, Text));
    // The items of seedsVary joined by `; ` (an item may hold a comma).
    let vary = r.variation.seeds_vary.as_ref().map(|v| v.join("; "));
    f.push(csv_field(vary.as_deref().unwrap_or_default(), Text));
    f.push(csv_field(
        r.variation.fingerprint.as_deref().unwrap_or_default(),
        Text,
    ));
    for c in columns {
        let v = r.figures.iter().find(|(n, _)| n == c);
        f.push(v.map_or(String::new(), |(_, v)| csv_field(v, Number)));
    }
    format!("{}\n", f.join(","))
}

/// `sweep.csv`'s text.
pub(crate) fn sweep_csv(
    params: &[String],
    search: bool,
    columns: &[String],
    rows: &[Row],
) -> String {
    let mut out = header(params, search, columns);
    for r in rows {
        out.push_str(&line(r, search, columns));
    }
    out
}

/// Splits CSV text kueuesim wrote into records (RFC 4180 quoting), each value as it was
/// before `csv_cell` wrote it (`csv_unguard`).
pub(crate) fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut rec = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            ',' => rec.push(std::mem::take(&mut field)),
            '\n' => {
                rec.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut rec));
            }
            '\r' => {}
            _ => field.push(c),
        }
    }
    if !field.is_empty() || !rec.is_empty() {
        rec.push(field);
        records.push(rec);
    }
    // The values as they were before `csv_cell` guarded them against formulas.
    for field in records.iter_mut().flatten() {
        if csv_unguard(field).len() != field.len() {
            // The guard is the one quote before the value.
            field.remove(0);
        }
    }
    records
}

/// The rows of a `sweep.csv` (a row cut short by an interrupted write is left out).
pub(crate) fn read_rows(text: &str) -> Vec<Row> {
    let records = parse_csv(text);
    let Some((head, rest)) = records.split_first() else {
        return Vec::new();
    };
    let col = |n: &str| head.iter().position(|h| h == n);
    let (Some(seed_at), Some(status_at), Some(error_at)) =
        (col("seed"), col("status"), col("error"))
    else {
        return Vec::new();
    };
    let step_at = col("step");
    let first_param = if step_at.is_some() { 2 } else { 1 };
    // A sweep.csv written before the variation columns has its figures right after `error`.
    let (vary_at, print_at) = (col(VARIATION_COLUMNS[0]), col(VARIATION_COLUMNS[1]));
    let first_figure = print_at.map_or(error_at, |i| i.max(error_at)) + 1;
    let mut rows = Vec::new();
    for r in rest {
        if r.len() != head.len() {
            continue;
        }
        let Ok(seed) = r[seed_at].parse() else {
            continue;
        };
        let ok = r[status_at] == "ok";
        rows.push(Row {
            variant: r[0].clone(),
            step: step_at.and_then(|i| r[i].parse().ok()),
            values: r[first_param..seed_at].to_vec(),
            seed,
            error: if ok {
                String::new()
            } else {
                r[error_at].clone()
            },
            figures: if ok {
                head[first_figure..]
                    .iter()
                    .cloned()
                    .zip(r[first_figure..].iter().cloned())
                    .collect()
            } else {
                Vec::new()
            },
            variation: crate::compare::RunVariation {
                seeds_vary: vary_at
                    .map(|i| &r[i])
                    .filter(|v| !v.is_empty())
                    .map(|v| v.split("; ").map(String::from).collect()),
                fingerprint: print_at.map(|i| r[i].clone()).filter(|v| !v.is_empty()),
            },
            warnings: Vec::new(),
        });
    }
    rows
}

/// `sweep-summary.csv`: per variant, its runs, failures, and per figure the mean and the
/// half-width of its 95 % confidence interval.
pub(crate) fn summary_csv(
    params: &[String],
    search: bool,
    columns: &[String],
    rows: &[Row],
) -> String {
    let mut h: Vec<String> = vec!["variant".into()];
    if search {
        h.push("step".into());
    }
    h.extend(params.iter().cloned());
    h.extend(["runs", "failed"].map(String::from));
    for c in columns {
        h.push(format!("{c}:mean"));
        h.push(format!("{c}:ci95"));
    }
    let mut out = h
        .iter()
        .map(|s| csv_field(s, Text))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    let mut i = 0;
    while i < rows.len() {
        let j = i + rows[i..]
            .iter()
            .take_while(|r| r.variant == rows[i].variant)
            .count();
        let group = &rows[i..j];
        let first = &group[0];
        let mut f: Vec<String> = vec![csv_field(&first.variant, Text)];
        if search {
            f.push(first.step.map_or(String::new(), |s| s.to_string()));
        }
        f.extend(first.values.iter().map(|v| csv_field(v, Number)));
        f.push(group.len().to_string());
        f.push(
            group
                .iter()
                .filter(|r| !r.error.is_empty())
                .count()
                .to_string(),
        );
        for c in columns {
            match Stats::of(group.iter().map(|r| r.figure(c))) {
                Some(s) => {
                    f.push(format!("{}", s.mean));
                    f.push(s.ci95.map_or(String::new(), |h| format!("{h}")));
                }
                None => f.extend([String::new(), String::new()]),
            }
        }
        out.push_str(&f.join(","));
        out.push('\n');
        i = j;
    }
    out
}

/// Writes `text` to `dir/name` through a new temporary file beside it (created exclusively:
/// never through a path that exists), renamed over the name: a symbolic link already at
/// `dir/name` is replaced, never written through, so no output of a sweep leaves its
/// directory; and a reader (`sweep collect` beside running indexes) never sees half a file.
pub(crate) fn write(dir: &Path, name: &str, text: &str) -> Result<(), Failure> {
    let fail = |p: &Path, e: std::io::Error| Failure {
        code: 1,
        message: format!("{}: {e}", p.display()),
    };
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.{:016x}.tmp", unique()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| fail(&tmp, e))?;
    let written = file.write_all(text.as_bytes());
    drop(file);
    let done = written
        .map_err(|e| fail(&tmp, e))
        .and_then(|()| std::fs::rename(&tmp, &path).map_err(|e| fail(&path, e)));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// A number no other writer of the same directory uses at the same time: random per
/// process (std's hasher keys come from the OS), counted within it. Index runs in different
/// pods share a results volume and often a pid (1 in each container).
fn unique() -> u64 {
    use std::hash::BuildHasher;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static KEY: OnceLock<u64> = OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let key = *KEY.get_or_init(|| std::hash::RandomState::new().hash_one(std::process::id()));
    key.wrapping_add(COUNT.fetch_add(1, Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A share a seed lacks counts 0 in its variant's statistics where its queue waited.
    #[test]
    fn a_missing_bound_by_share_is_zero_where_the_queue_waited() {
        let row = Row {
            variant: "v".into(),
            step: None,
            values: Vec::new(),
            seed: 1,
            error: String::new(),
            variation: Default::default(),
            figures: vec![
                (
                    "clusterQueues[a].pendingBoundBy.quota:cpu".into(),
                    "1".into(),
                ),
                ("clusterQueues[a].waitSeconds.p95".into(), String::new()),
            ],
            warnings: Vec::new(),
        };
        assert_eq!(
            row.figure("clusterQueues[a].pendingBoundBy.quota:cpu"),
            Some(1.0)
        );
        assert_eq!(
            row.figure("clusterQueues[a].pendingBoundBy.nodes"),
            Some(0.0)
        );
        assert_eq!(row.figure("clusterQueues[b].pendingBoundBy.nodes"), None);
        assert_eq!(row.figure("clusterQueues[a].waitSeconds.p95"), None);
    }

    #[test]
    fn rows_round_trip_through_csv() {
        let rows = vec![
            Row {
                variant: "a=1,b=x".into(),
                step: None,
                values: vec!["1".into(), "x".into()],
                seed: 3,
                error: String::new(),
                figures: vec![("w.p90".into(), "1.5".into()), ("n".into(), String::new())],
                variation: crate::compare::RunVariation {
                    seeds_vary: Some(vec!["arrivals (jitter ±10m)".into(), "tie-breaks".into()]),
                    fingerprint: Some("00000000000000ff".into()),
                },
                warnings: Vec::new(),
            },
            Row {
                variant: "a=2,b=x".into(),
                step: None,
                values: vec!["2".into(), "x".into()],
                seed: 3,
                error: "s.yaml:1:2: bad \"thing\"".into(),
                figures: Vec::new(),
                variation: Default::default(),
                warnings: Vec::new(),
            },
        ];
        let params = vec!["a".to_string(), "b".to_string()];
        let cols = columns(&[], &rows);
        let text = sweep_csv(&params, false, &cols, &rows);
        let back = read_rows(&text);
        assert_eq!(sweep_csv(&params, false, &columns(&[], &back), &back), text);
        assert_eq!(back[1].error, rows[1].error);
        assert_eq!(back[0].figure("w.p90"), Some(1.5));
        assert_eq!(back[0].variation, rows[0].variation);
        // A sweep.csv from before the variation columns: figures right after `error`.
        let old = "variant,a,seed,status,error,w.p90\na=1,1,3,ok,,2.5\n";
        let rows = read_rows(old);
        assert_eq!(rows[0].figure("w.p90"), Some(2.5));
        assert_eq!(rows[0].variation, Default::default());
    }

    #[test]
    fn no_text_cell_starts_a_formula_and_every_value_reads_back() {
        let rows = vec![Row {
            variant: "=HYPERLINK(\"http://x\",\"y\")".into(),
            step: None,
            values: vec!["-2".into(), "@SUM(A1)".into(), "-1+2".into()],
            seed: 1,
            error: String::new(),
            figures: vec![("-w".into(), "-1.5".into())],
            variation: Default::default(),
            warnings: Vec::new(),
        }];
        let params = vec!["a".to_string(), "+b".to_string(), "c".to_string()];
        let cols = columns(&[], &rows);
        let text = sweep_csv(&params, false, &cols, &rows);
        assert_eq!(
            text,
            "variant,a,'+b,c,seed,status,error,seedsVary,workloadFingerprint,'-w\n\
             \"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",-2,'@SUM(A1),'-1+2,1,ok,,,,-1.5\n"
        );
        let back = read_rows(&text);
        assert_eq!(back[0].variant, rows[0].variant);
        assert_eq!(back[0].values, rows[0].values);
        assert_eq!(back[0].figure("-w"), Some(-1.5));
        assert_eq!(sweep_csv(&params, false, &columns(&[], &back), &back), text);
        let summary = summary_csv(&params, false, &cols, &rows);
        assert_eq!(
            summary.lines().nth(1),
            Some("\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",-2,'@SUM(A1),'-1+2,1,0,-1.5,")
        );
    }
}
