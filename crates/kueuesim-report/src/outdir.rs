//! The files of `run --out DIR`, written as the run goes: which files exist and how
//! `--write` names them (`OutFile`, `parse_write`), and `OutDir`, the engine's `RunSink` that
//! streams events, samples and finished workloads to them, so a lean run keeps only
//! aggregates and each file's memory does not grow with the trace.
//!
//! `result.json` opens with the summary, known only at the end: each finished workload's
//! entry (and its `workloads.csv` row) goes to a spill file as it finishes, with an index by
//! workload id, and the end writes the document in id order (the order of `-o json`) from it.
//!
//! No file is written through a path that was already there: each is written under a
//! temporary name (`.NAME.part`, created afresh with `O_EXCL`: `create_part`) and renamed to
//! its name when complete (`PartFile`), which replaces whatever was at the name, a symlink
//! included, rather than writing to what it points at. A run that fails leaves the directory
//! as it was.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use kueuesim_engine::outcome::{Event, Sample, WorkloadRecord};
use kueuesim_engine::{Outcome, RunSink};
use kueuesim_model::{SimDuration, Workload, WorkloadId, World};

use crate::export::{
    TimeseriesColumns, event_line, queues_csv, timeseries_csv_header, timeseries_csv_row,
    timeseries_csv_time, workloads_csv_header, workloads_csv_row,
};
use crate::metrics::PromMetrics;
use crate::openmetrics::OpenMetricsWriter;
use crate::output::{
    SimulationResult, json_tail, json_workload, write_json_head, write_summary_json,
};
use crate::report::{Folded, PlottedSeries};

/// The buffer of each file written: large writes, few system calls (the files of a long
/// trace run to hundreds of megabytes).
pub(crate) const BUFFER: usize = 256 * 1024;

/// The ids of the workloads of `result_with(world, outcome, true)`'s document, in its order:
/// a lean run's unfinished workloads, else every arrived one.
pub fn document_ids(outcome: &Outcome) -> Vec<WorkloadId> {
    match &outcome.lean {
        Some(lean) => lean.unfinished.iter().map(|(w, _, _)| *w).collect(),
        None => outcome
            .workloads
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_some())
            .map(|(i, _)| WorkloadId::from_index(i))
            .collect(),
    }
}

/// One file of `run --out DIR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OutFile {
    /// `result.json`: the `-o json` document.
    Result,
    /// `workloads.csv`: one row per workload.
    Workloads,
    /// `queues.csv`: one row per ClusterQueue and LocalQueue.
    Queues,
    /// `events.jsonl`: every event, in time order.
    Events,
    /// `timeseries.csv`: the sampled state.
    Timeseries,
    /// `metrics.prom`: Kueue's metrics at the end.
    Metrics,
    /// `metrics.om`: Kueue's metrics over time (OpenMetrics with timestamps).
    Om,
    /// `report.html`: the plots.
    Report,
    /// `summary.json`: the document's summary alone (what `kueuesim compare` reads).
    Summary,
}

impl OutFile {
    /// Every file, in the order `--write` lists them.
    pub const ALL: [OutFile; 9] = [
        OutFile::Result,
        OutFile::Workloads,
        OutFile::Events,
        OutFile::Timeseries,
        OutFile::Metrics,
        OutFile::Report,
        OutFile::Queues,
        OutFile::Om,
        OutFile::Summary,
    ];

    /// The file's name in the directory.
    pub fn file_name(self) -> &'static str {
        match self {
            OutFile::Result => "result.json",
            OutFile::Workloads => "workloads.csv",
            OutFile::Queues => "queues.csv",
            OutFile::Events => "events.jsonl",
            OutFile::Timeseries => "timeseries.csv",
            OutFile::Metrics => "metrics.prom",
            OutFile::Om => "metrics.om",
            OutFile::Report => "report.html",
            OutFile::Summary => "summary.json",
        }
    }

    /// The `--write` word for this file alone.
    pub fn word(self) -> &'static str {
        match self {
            OutFile::Result => "result",
            OutFile::Workloads => "workloads",
            OutFile::Queues => "queues",
            OutFile::Events => "events",
            OutFile::Timeseries => "timeseries",
            OutFile::Metrics => "metrics",
            OutFile::Om => "om",
            OutFile::Report => "report",
            OutFile::Summary => "summary",
        }
    }

    /// Whether it is written from the time series (the run samples only when one is asked).
    pub fn needs_samples(self) -> bool {
        matches!(self, OutFile::Timeseries | OutFile::Om | OutFile::Report)
    }
}

/// The `--write` words that name several files: `all`, and the files of one format.
const GROUPS: &[(&str, &[OutFile])] = &[
    ("all", &OutFile::ALL),
    (
        "csv",
        &[OutFile::Workloads, OutFile::Queues, OutFile::Timeseries],
    ),
    (
        "json",
        &[OutFile::Result, OutFile::Events, OutFile::Summary],
    ),
    ("prometheus", &[OutFile::Metrics, OutFile::Om]),
];

/// The files a `--write` value asks for: comma-separated words, each a file's word
/// (`result`, `workloads`, …), its file name (`metrics.om`) or a group (`all`, `csv`, `json`,
/// `prometheus`). An unknown word is an error naming the closest valid one.
pub fn parse_write(spec: &str) -> Result<BTreeSet<OutFile>, String> {
    let mut files = BTreeSet::new();
    for word in spec.split(',').map(str::trim) {
        if let Some((_, group)) = GROUPS.iter().find(|(g, _)| *g == word) {
            files.extend(group.iter().copied());
            continue;
        }
        match OutFile::ALL
            .iter()
            .find(|f| f.word() == word || f.file_name() == word)
        {
            Some(f) => {
                files.insert(*f);
            }
            None => {
                let valid: Vec<&str> = OutFile::ALL
                    .iter()
                    .map(|f| f.word())
                    .chain(GROUPS.iter().map(|(g, _)| *g))
                    .collect();
                let closest = valid
                    .iter()
                    .min_by_key(|v| edit_distance(word, v))
                    .expect("words exist");
                return Err(format!(
                    "unknown file {word:?} (did you mean {closest:?}?): expected a comma-separated list of {}",
                    valid.join(", ")
                ));
            }
        }
    }
    Ok(files)
}

/// Levenshtein distance, for the closest valid word.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// An I/O failure on one file of the directory.
#[derive(Debug)]
pub struct OutError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub error: std::io::Error,
}

impl std::fmt::Display for OutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.error)
    }
}

/// Creates the temporary file `path` afresh, never through what is already there: a regular
/// file left by a run that crashed is removed first (removing a name never touches what a
/// hard link shares), anything else at the name (a symlink, a directory) is an error, and the
/// file is created with `O_EXCL` (`create_new`), which does not follow a symlink either.
pub fn create_part(path: &Path) -> std::io::Result<File> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => std::fs::remove_file(path)?,
        Ok(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "exists and is not a regular file (a symlink?): kueuesim creates its temporary \
                 files afresh and writes through nothing already there; remove it",
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// A file written under a temporary name beside its own (`.NAME.part`, `create_part`) and
/// renamed to it by `commit`: the rename replaces whatever had the name (a symlink too, not
/// its target), and an unfinished file never has it (dropped uncommitted, its temporary file
/// is removed).
pub struct PartFile {
    part: PathBuf,
    dest: PathBuf,
    committed: bool,
    /// Where the bytes go.
    pub file: BufWriter<File>,
}

impl PartFile {
    /// Starts writing `dest`.
    pub fn create(dest: &Path) -> Result<Self, OutError> {
        let name = dest.file_name().unwrap_or_default().to_string_lossy();
        let part = dest.with_file_name(format!(".{name}.part"));
        let file = create_part(&part).map_err(|error| OutError {
            path: part.clone(),
            error,
        })?;
        Ok(PartFile {
            part,
            dest: dest.to_path_buf(),
            committed: false,
            file: BufWriter::with_capacity(BUFFER, file),
        })
    }

    /// The file's name once written.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// Flushes the file and gives it its name.
    pub fn commit(mut self) -> Result<(), OutError> {
        let fail = |error| OutError {
            path: self.dest.clone(),
            error,
        };
        self.file.flush().map_err(fail)?;
        std::fs::rename(&self.part, &self.dest).map_err(fail)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for PartFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

/// Writes `text` to `path` as a `PartFile`: complete or not at all, and never through what
/// had the name before.
pub fn write_file(path: &Path, text: &[u8]) -> Result<(), OutError> {
    let mut f = PartFile::create(path)?;
    f.file.write_all(text).map_err(|error| OutError {
        path: path.to_path_buf(),
        error,
    })?;
    f.commit()
}

/// The finished workloads' `result.json` entries and `workloads.csv` rows, in the order they
/// finished, and where each one is.
struct Spill {
    path: PathBuf,
    file: BufWriter<File>,
    written: u64,
    /// (workload, offset, length of the JSON entry, length of the CSV row).
    index: Vec<(WorkloadId, u64, u32, u32)>,
}

/// The sink of a run with `--out`: streams what the run hands out to the files asked for.
pub struct OutDir<'w> {
    world: &'w World,
    dir: PathBuf,
    files: BTreeSet<OutFile>,
    spill: Option<Spill>,
    events: Option<PartFile>,
    timeseries: Option<(PartFile, TimeseriesColumns)>,
    om: Option<OpenMetricsWriter>,
    prom: Option<PromMetrics>,
    /// For report.html: what it reads of the finished workloads, folded in as they finish,
    /// and the samples.
    report: Option<(Folded, PlottedSeries)>,
    /// The first failure; the sink's calls cannot return one, `finish` reports it.
    failed: Option<OutError>,
}

impl<'w> OutDir<'w> {
    /// Creates `dir` (and its parents) and opens the streamed files of `files`.
    pub fn create(
        dir: &Path,
        world: &'w World,
        files: &BTreeSet<OutFile>,
    ) -> Result<Self, OutError> {
        let fail = |path: &Path| {
            let path = path.to_path_buf();
            move |error| OutError { path, error }
        };
        std::fs::create_dir_all(dir).map_err(fail(dir))?;
        let open = |f: OutFile| PartFile::create(&dir.join(f.file_name()));
        let spill = if files.contains(&OutFile::Result) || files.contains(&OutFile::Workloads) {
            let path = dir.join(".workloads.part");
            let file = create_part(&path).map_err(fail(&path))?;
            Some(Spill {
                path,
                file: BufWriter::with_capacity(BUFFER, file),
                written: 0,
                index: Vec::new(),
            })
        } else {
            None
        };
        let events = files
            .contains(&OutFile::Events)
            .then(|| open(OutFile::Events))
            .transpose()?;
        let timeseries = match files.contains(&OutFile::Timeseries) {
            true => {
                let mut file = open(OutFile::Timeseries)?;
                let (header, columns) = timeseries_csv_header(world);
                let path = file.path().to_path_buf();
                file.file
                    .write_all(header.as_bytes())
                    .map_err(fail(&path))?;
                Some((file, columns))
            }
            false => None,
        };
        let om = files
            .contains(&OutFile::Om)
            .then(|| OpenMetricsWriter::create(dir, world))
            .transpose()
            .map_err(fail(dir))?;
        Ok(OutDir {
            world,
            dir: dir.to_path_buf(),
            files: files.clone(),
            spill,
            events,
            timeseries,
            om,
            prom: files
                .contains(&OutFile::Metrics)
                .then(|| PromMetrics::new(world)),
            report: files
                .contains(&OutFile::Report)
                .then(|| (Folded::new(world), PlottedSeries::new(world))),
            failed: None,
        })
    }

    fn keep_error(&mut self, path: &Path, r: std::io::Result<()>) {
        if let Err(error) = r
            && self.failed.is_none()
        {
            self.failed = Some(OutError {
                path: path.to_path_buf(),
                error,
            });
        }
    }

    /// Writes what only the end knows: `result.json` and `workloads.csv` (the finished
    /// workloads from the spill, `doc.workloads` — `result_with(world, outcome, true)`'s,
    /// whose ids `document_ids` gives — merged in id order), `queues.csv`, `metrics.prom`,
    /// `metrics.om` and `report.html`. With report.html, the finished workloads join
    /// `doc.workloads` without their events, conditions, pods and nodes (the report does not
    /// read them).
    pub fn finish(mut self, doc: &mut SimulationResult, outcome: &Outcome) -> Result<(), OutError> {
        let ids = &document_ids(outcome)[..];
        let final_usage = &outcome.stats.final_quota_usage;
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        debug_assert_eq!(doc.workloads.len(), ids.len());
        let dir = self.dir.clone();
        let fail = |path: &Path| {
            let path = path.to_path_buf();
            move |error| OutError { path, error }
        };
        let write = |f: OutFile, text: &str| write_file(&dir.join(f.file_name()), text.as_bytes());
        if let Some(file) = self.events.take() {
            file.commit()?;
        }
        if let Some((file, _)) = self.timeseries.take() {
            file.commit()?;
        }
        if let Some(spill) = self.spill.take() {
            self.write_workloads(spill, doc, ids)?;
        }
        if self.files.contains(&OutFile::Queues) {
            write(OutFile::Queues, &queues_csv(doc))?;
        }
        if self.files.contains(&OutFile::Summary) {
            // Streamed: the hourly series of many queues over a long run are gigabytes.
            let mut file = PartFile::create(&dir.join(OutFile::Summary.file_name()))?;
            let path = file.path().to_path_buf();
            write_summary_json(doc, &mut file.file).map_err(fail(&path))?;
            file.commit()?;
        }
        if let Some(mut prom) = self.prom.take() {
            for w in &doc.workloads {
                prom.add_workload(w);
            }
            write(OutFile::Metrics, &prom.render(self.world, final_usage))?;
        }
        if let Some(om) = self.om.take() {
            let mut file = PartFile::create(&dir.join(OutFile::Om.file_name()))?;
            let path = file.path().to_path_buf();
            om.finish(&mut file.file).map_err(fail(&path))?;
            file.commit()?;
        }
        if let Some((folded, series)) = self.report.take() {
            let html =
                crate::report::report_html_with(self.world, doc, Some(&series), Some(&folded));
            write(OutFile::Report, &html)?;
        }
        Ok(())
    }

    /// `result.json` and `workloads.csv`: the spilled entries and `doc`'s, in id order.
    fn write_workloads(
        &self,
        spill: Spill,
        doc: &SimulationResult,
        ids: &[WorkloadId],
    ) -> Result<(), OutError> {
        let fail = |path: &Path| {
            let path = path.to_path_buf();
            move |error| OutError { path, error }
        };
        let Spill {
            path: spill_path,
            file,
            mut index,
            ..
        } = spill;
        file.into_inner()
            .map_err(|e| e.into_error())
            .map_err(fail(&spill_path))?;
        let mut spilled = std::io::BufReader::with_capacity(
            BUFFER,
            File::open(&spill_path).map_err(fail(&spill_path))?,
        );
        index.sort_by_key(|e| e.0);
        let open = |f: OutFile| -> Result<Option<PartFile>, OutError> {
            if !self.files.contains(&f) {
                return Ok(None);
            }
            PartFile::create(&self.dir.join(f.file_name())).map(Some)
        };
        let mut json = open(OutFile::Result)?;
        let mut csv = open(OutFile::Workloads)?;
        let put = |out: &mut Option<PartFile>, bytes: &[u8]| match out {
            Some(f) => f.file.write_all(bytes).map_err(fail(&f.dest)),
            None => Ok(()),
        };
        if let Some(f) = &mut json {
            write_json_head(doc, &mut f.file).map_err(fail(&f.dest))?;
        }
        put(
            &mut csv,
            workloads_csv_header(doc.summary.failures.is_some()).as_bytes(),
        )?;
        let mut at = 0u64;
        let mut buf = Vec::new();
        let (mut s, mut d) = (
            index.iter().peekable(),
            ids.iter().zip(&doc.workloads).peekable(),
        );
        let mut first = true;
        loop {
            let from_spill = match (s.peek(), d.peek()) {
                (Some(a), Some(b)) => a.0 < *b.0,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let sep: &[u8] = if first { b"\n" } else { b",\n" };
            first = false;
            put(&mut json, sep)?;
            if from_spill {
                let &(_, offset, jlen, clen) = s.next().expect("peeked");
                if offset != at {
                    spilled
                        .seek(SeekFrom::Start(offset))
                        .map_err(fail(&spill_path))?;
                }
                buf.resize(jlen as usize + clen as usize, 0);
                spilled.read_exact(&mut buf).map_err(fail(&spill_path))?;
                at = offset + buf.len() as u64;
                put(&mut json, &buf[..jlen as usize])?;
                put(&mut csv, &buf[jlen as usize..])?;
            } else {
                let (_, w) = d.next().expect("peeked");
                put(&mut json, json_workload(w).as_bytes())?;
                put(&mut csv, workloads_csv_row(w).as_bytes())?;
            }
        }
        put(&mut json, json_tail(!first).as_bytes())?;
        for file in [json, csv].into_iter().flatten() {
            file.commit()?;
        }
        std::fs::remove_file(&spill_path).map_err(fail(&spill_path))
    }
}

/// A run that fails before `finish` (a bad trace row met mid-run) leaves no partial file: the
/// temporary files of what was streamed so far and the spill files are removed, and the
/// files of an earlier run in the directory stay as they were.
impl Drop for OutDir<'_> {
    fn drop(&mut self) {
        if let Some(spill) = self.spill.take() {
            drop(spill.file);
            let _ = std::fs::remove_file(&spill.path);
        }
        if let Some(om) = self.om.take() {
            om.discard();
        }
        // Dropped uncommitted, the streamed files' temporary files go.
        self.events.take();
        self.timeseries.take();
    }
}

impl RunSink for OutDir<'_> {
    fn event(&mut self, _w: WorkloadId, wl: &Workload, e: &Event) {
        if let Some(f) = &mut self.events {
            let r = f.file.write_all(event_line(wl, e).as_bytes());
            let path = f.dest.clone();
            self.keep_error(&path, r);
        }
    }

    fn wants_events(&self) -> bool {
        self.events.is_some()
    }

    fn quota_reserved(&mut self, _w: WorkloadId, wl: &Workload, waited: SimDuration) {
        if let Some(prom) = &mut self.prom {
            prom.observe_wait(self.world, wl, waited);
        }
        if let Some((_, series)) = &mut self.report {
            series.note_admitted(wl);
        }
    }

    fn samples(&mut self, first: &Sample, count: u64, step: SimDuration) {
        if let Some((f, columns)) = &mut self.timeseries {
            // The row is formatted once; the samples of a run differ only in their time.
            let row = timeseries_csv_row(columns, first);
            let rest = &row[row.find(',').unwrap_or(row.len())..];
            let mut r = Ok(());
            for k in 0..count as i64 {
                let at = first.at + SimDuration::from_millis(k * step.millis());
                r = f
                    .file
                    .write_all(timeseries_csv_time(at).as_bytes())
                    .and_then(|()| f.file.write_all(rest.as_bytes()));
                if r.is_err() {
                    break;
                }
            }
            let path = f.dest.clone();
            self.keep_error(&path, r);
        }
        if let Some(om) = &mut self.om {
            let r = om.samples(first, count, step);
            let path = self.dir.join(OutFile::Om.file_name());
            self.keep_error(&path, r);
        }
        if let Some((_, series)) = &mut self.report {
            series.push(first, count, step);
        }
    }

    fn finished(&mut self, w: WorkloadId, wl: &Workload, rec: &WorkloadRecord) {
        if self.spill.is_none() && self.prom.is_none() && self.report.is_none() {
            return;
        }
        // A finished workload's entry does not depend on the end of the run.
        let end = rec.finished_at.unwrap_or_default();
        let out = crate::output::workload_out(self.world, wl, rec, end);
        if let Some(prom) = &mut self.prom {
            prom.add_workload(&out);
        }
        if let Some(spill) = &mut self.spill {
            let json = if self.files.contains(&OutFile::Result) {
                json_workload(&out)
            } else {
                String::new()
            };
            let csv = if self.files.contains(&OutFile::Workloads) {
                workloads_csv_row(&out)
            } else {
                String::new()
            };
            let r = spill
                .file
                .write_all(json.as_bytes())
                .and_then(|()| spill.file.write_all(csv.as_bytes()));
            spill
                .index
                .push((w, spill.written, json.len() as u32, csv.len() as u32));
            spill.written += (json.len() + csv.len()) as u64;
            let path = spill.path.clone();
            self.keep_error(&path, r);
        }
        if let Some((folded, series)) = &mut self.report {
            // A workload that ran without a Kueue admission (no queue, or admitted before
            // the start) counts for the spine panel's largest gang too.
            series.note_admitted(wl);
            // The report reads of a finished workload its ClusterQueue, wait and evictions
            // (`report::Folded`): those are kept, the entry goes.
            folded.add(&out);
        }
    }
}

/// About how many bytes each file of `files` whose size follows the run's length takes for a
/// run ending at `end` sampled every `step`: `timeseries.csv` (a row per sample, a cell per
/// queue), `metrics.om` (a line per series at least every `steady_interval` samples) and the
/// summary's hourly series in `result.json` and `summary.json` (two numbers per ClusterQueue
/// per hour). A lower bound: every value taken as one digit, every series as steady; the
/// files that follow the workloads (their entries, `workloads.csv`, `events.jsonl`) and
/// `report.html` (bounded) are not counted.
pub fn projected_sizes(
    world: &World,
    files: &BTreeSet<OutFile>,
    step: SimDuration,
    end: kueuesim_model::SimTime,
) -> Vec<(OutFile, u64)> {
    let end_ms = end.millis().max(0) as u64;
    let samples = end_ms / step.millis().max(1) as u64 + 1;
    let hours = end_ms.div_ceil(3_600_000);
    let mut out = Vec::new();
    for &f in files {
        let bytes = match f {
            OutFile::Timeseries => {
                let (header, _) = timeseries_csv_header(world);
                let columns = crate::export::timeseries_columns(world).0.len() as u64;
                let time = timeseries_csv_time(end).len() as u64;
                // The time, then "," and a digit per further column, and the line's end.
                header.len() as u64 + samples * (time + 2 * (columns - 1) + 1)
            }
            OutFile::Om => {
                let (series, labels) = crate::openmetrics::series_text(world);
                let lines = samples.div_ceil(crate::openmetrics::steady_interval(step) as u64);
                // Seconds since 1970 (ten digits), with milliseconds when the step has them.
                let ts = if step.millis() % 1000 == 0 { 10 } else { 14 };
                // Each line: the labels, a digit, a space, the timestamp, the line's end.
                lines * (labels as u64 + series as u64 * (3 + ts))
            }
            // Two numbers per ClusterQueue and hour, each at least "          0.0,\n" (a
            // share is null, a byte more, only in an hour no queue held a GPU).
            OutFile::Result | OutFile::Summary => world.cluster_queues.len() as u64 * hours * 30,
            _ => 0,
        };
        if bytes > 0 {
            out.push((f, bytes));
        }
    }
    out
}
