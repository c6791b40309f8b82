//! Streamed runs (`LoadOptions::stream`, `Simulation::with_stream`): the engine pulls each
//! workload when the one before it arrives and lets go of it when it finishes. The summary
//! must be the full run's, byte for byte, and memory must follow the live workloads.

use std::path::PathBuf;

use kueuesim_engine::outcome::{Event, Sample};
use kueuesim_engine::{RunSink, Simulation, WorkloadRecord};
use kueuesim_model::{SimDuration, SimTime, Workload, WorkloadId, World};
use kueuesim_report::output::{json_workload, result_with, summary_text, to_json, workload_out};
use kueuesim_scenario::embedded::read_paths;
use kueuesim_scenario::{LoadOptions, SourceFile, load};

use crate::util::{FLAVOR, cq, load_text_with, scenarios_dir};

/// Every scenario that runs in well under a second: each directory (or single file) under
/// these folders of `scenarios/`.
fn small_scenarios() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for group in [
        "cases",
        "examples",
        "golden",
        "kueue",
        "kueue-perf",
        "placement",
        "platform",
    ] {
        let dir = scenarios_dir().join(group);
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("entry").path())
            .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        entries.sort();
        out.extend(entries);
    }
    out
}

/// The JSON document and summary text of a full run and of a streamed run of `files` (with
/// `respace`, respacing UID labels on every arrival of the streamed run).
fn both_ways(files: &[SourceFile], until: Option<SimTime>, respace: bool) -> [(String, String); 2] {
    [false, true].map(|stream| run_once(files, until, respace, stream, false))
}

/// One run of `files`: streamed or full, and keeping only each workload's newest event per
/// source (`Simulation::last_events_only`, the CLI's summary run) or every event.
fn run_once(
    files: &[SourceFile],
    until: Option<SimTime>,
    respace: bool,
    stream: bool,
    last_events_only: bool,
) -> (String, String) {
    {
        let opts = LoadOptions {
            stream,
            ..LoadOptions::default()
        };
        let mut loaded = load(files, opts).unwrap_or_else(|e| panic!("{e}"));
        if until.is_some() {
            loaded.world.config.until = until;
        }
        let world = &loaded.world;
        let mut sim = Simulation::new(world);
        match loaded.stream.take() {
            Some(s) => {
                assert!(stream && world.workloads.is_empty());
                // Respacing UID labels on every arrival also checks that no workload let go
                // of is still referred to (respacing reaches every kept label).
                sim = sim.with_stream(s);
                if respace {
                    sim = sim.with_uid_respacing();
                }
            }
            None => assert!(!stream),
        }
        if last_events_only {
            sim = sim.last_events_only();
        }
        let outcome = sim.run();
        assert_eq!(outcome.lean.is_some(), stream);
        let doc = result_with(world, &outcome, false);
        (to_json(&doc), summary_text(world, &doc))
    }
}

#[test]
fn a_streamed_run_reports_what_the_full_run_does() {
    let scenarios = small_scenarios();
    assert!(scenarios.len() > 60, "found {}", scenarios.len());
    let mut with_waiting = 0;
    let mut with_cut_history = 0;
    for path in &scenarios {
        let files = read_paths(std::slice::from_ref(path)).expect("readable");
        // Respacing tens of thousands of labels on each arrival of Kueue's perf scenarios
        // would take minutes.
        let respace = !path.to_string_lossy().contains("kueue-perf");
        let [full, streamed] = both_ways(&files, None, respace);
        assert_eq!(full.0, streamed.0, "{}: -o json summary", path.display());
        assert_eq!(full.1, streamed.1, "{}: summary text", path.display());
        with_waiting += usize::from(full.1.contains("Waiting at the end"));
        // The CLI's summary run also keeps only each workload's newest event per source:
        // the same summary text, though the unfinished workloads' histories are cut.
        let last_only = run_once(&files, None, false, true, true);
        assert_eq!(full.1, last_only.1, "{}: summary text", path.display());
        with_cut_history += usize::from(full.0 != last_only.0);
    }
    assert!(
        with_cut_history >= 3,
        "{with_cut_history} scenarios end with a history to cut"
    );
    // The comparison covers the listing of workloads still waiting, not only counts.
    assert!(
        with_waiting >= 5,
        "{with_waiting} scenarios end with waiting workloads"
    );
}

#[test]
fn a_horizon_counts_the_rest_of_the_stream_as_not_arrived() {
    let path = scenarios_dir().join("kueue-perf/baseline.yaml");
    let files = read_paths(&[path]).expect("readable");
    let until = Some(SimTime::from_secs(20));
    let [full, streamed] = both_ways(&files, until, false);
    assert_eq!(full, streamed);
    let doc: serde_json::Value = serde_json::from_str(&full.0).expect("json");
    let not_arrived = doc["summary"]["workloads"]["notArrived"]
        .as_u64()
        .expect("count");
    assert!(
        not_arrived > 0,
        "the horizon cuts the arrivals: {not_arrived}"
    );
}

/// A generator of `n` one-pod workloads, one a second, each running a minute, on a queue
/// with room for all of them.
fn steady_generator(n: u32) -> String {
    format!(
        r#"{FLAVOR}---
{}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: team}}
spec: {{clusterQueue: cq}}
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {{name: steady, namespace: team}}
spec:
  count: {n}
  arrival: {{interval: 1s}}
  queues: [{{name: q}}]
  pods: {{fixed: 1}}
  requests: {{nvidia.com/gpu: {{fixed: 1}}}}
  duration: {{fixed: 60s}}
"#,
        cq("1000")
    )
}

#[test]
fn a_streamed_run_holds_only_the_live_workloads() {
    let n = 20_000;
    let text = steady_generator(n);
    let opts = LoadOptions {
        stream: true,
        ..LoadOptions::default()
    };
    let mut loaded = load_text_with("t.yaml", &text, opts).unwrap_or_else(|e| panic!("{e}"));
    let stream = loaded.stream.take().expect("streamed");
    let mut sim = Simulation::new(&loaded.world).with_stream(stream);
    let mut most = 0;
    while sim.step(None) {
        most = most.max(sim.live_workloads());
    }
    // About 61 workloads overlap at any time (a minute each, one a second); the run holds
    // no more than a small multiple of that, whatever the length of the stream.
    assert!(
        (60..200).contains(&most),
        "held up to {most} workloads at once"
    );
    let outcome = sim.run();
    // Nothing per admission either: the reservation waits are only for metrics.prom.
    assert!(outcome.stats.quota_reserved_waits.is_empty());
    let lean = outcome.lean.expect("a streamed run is lean");
    assert_eq!(
        lean.tally
            .count(kueuesim_engine::outcome::WorkloadState::Finished),
        u64::from(n)
    );
    assert!(lean.unfinished.is_empty());
}

/// `queues` ClusterQueues, each with a LocalQueue in its own namespace and one GPU of quota,
/// and one one-GPU Job that runs ten years in the first (scripts/wide-queues.sh, smaller).
fn decade_of_idle_queues(queues: usize) -> String {
    let mut y = format!(
        "{{apiVersion: kueuesim.io/v1alpha1, kind: Simulation, metadata: {{name: decade}}, spec: {{seed: 1}}}}
---
{{apiVersion: v1, kind: Node, metadata: {{name: n0}}, status: {{allocatable: {{nvidia.com/gpu: \"{queues}\", pods: \"110\"}}}}}}
---
{FLAVOR}"
    );
    for q in 0..queues {
        y.push_str(&format!(
            "---
{{apiVersion: v1, kind: Namespace, metadata: {{name: team-{q}}}}}
---
{{apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {{name: team-{q}}}, spec: {{namespaceSelector: {{}}, resourceGroups: [{{coveredResources: [nvidia.com/gpu], flavors: [{{name: default, resources: [{{name: nvidia.com/gpu, nominalQuota: 1}}]}}]}}]}}}}
---
{{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {{name: q, namespace: team-{q}}}, spec: {{clusterQueue: team-{q}}}}}
"
        ));
    }
    y.push_str(
        "---
{apiVersion: batch/v1, kind: Job, metadata: {name: decade, namespace: team-0, labels: {kueue.x-k8s.io/queue-name: q}, annotations: {kueuesim.io/duration: 87600h}}, spec: {suspend: true, template: {spec: {restartPolicy: Never, containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: \"1\"}}}]}}}}
",
    );
    y
}

/// A sink that keeps what report.html reads of the samples and admissions, and counts the
/// calls.
struct Plotted {
    series: kueuesim_report::report::PlottedSeries,
    calls: u64,
    samples: u64,
}

impl RunSink for Plotted {
    fn event(&mut self, _: WorkloadId, _: &Workload, _: &Event) {}
    fn quota_reserved(&mut self, _: WorkloadId, wl: &Workload, _: SimDuration) {
        self.series.note_admitted(wl);
    }
    fn samples(&mut self, first: &Sample, count: u64, step: SimDuration) {
        self.series.push(first, count, step);
        self.calls += 1;
        self.samples += count;
    }
    fn finished(&mut self, _: WorkloadId, _: &Workload, _: &WorkloadRecord) {}
}

#[test]
fn a_decade_of_idle_queues_is_held_as_its_changes() {
    // 200 queues for ten years, one of them busy: what the run, the report's series and
    // the summary hold follows the few changes, not queues × samples or queues × hours
    // (main held 87,601 samples × 400 queue columns for report.html and 87,600 hours × 200
    // ClusterQueues, twice, for the summary).
    let queues = 200;
    let opts = LoadOptions {
        stream: true,
        ..LoadOptions::default()
    };
    let mut loaded = load_text_with("t.yaml", &decade_of_idle_queues(queues), opts)
        .unwrap_or_else(|e| panic!("{e}"));
    let stream = loaded.stream.take().expect("streamed");
    let world = &loaded.world;
    let hour = SimDuration::from_secs(3600);
    let mut sink = Plotted {
        series: kueuesim_report::report::PlottedSeries::new(world),
        calls: 0,
        samples: 0,
    };
    let outcome = Simulation::new(world)
        .with_stream(stream)
        .with_time_series(hour)
        .run_with_sink(|_, _| std::ops::ControlFlow::Continue(()), &mut sink);
    let hours = 87_600;
    assert_eq!(outcome.stats.end, SimTime::from_millis(hours * 3_600_000));
    // Every hour's sample reaches the sink, the quiet decade in one call.
    assert_eq!(sink.samples, hours as u64 + 1);
    assert!(sink.calls <= 4, "{} calls", sink.calls);
    assert_eq!(sink.series.len(), hours as usize + 1);
    // One point per column (GPUs bound, quota per ClusterQueue, pending per LocalQueue,
    // device figures), a few more where the job starts and ends.
    let columns = 1 + 2 * queues + 1;
    assert!(
        sink.series.points() <= columns + 8,
        "{} points for {columns} columns",
        sink.series.points()
    );
    // The hourly GPU-seconds: the busy queue's decade is one run (a few with its edges),
    // each idle queue none.
    let by_hour = &outcome.stats.cq_gpu_seconds_by_hour;
    assert!(by_hour[0].run_count() <= 3, "{}", by_hour[0].run_count());
    assert!(by_hour[1..].iter().all(|s| s.run_count() == 0));
    // The summary reads them as the hours of the run.
    let doc = result_with(world, &outcome, false);
    let busy = &doc.summary.cluster_queues[0];
    assert_eq!(busy.gpu_seconds_by_hour.len(), hours as usize);
    assert!(busy.gpu_seconds_by_hour.iter().all(|s| s == 3600.0));
    assert!(busy.gpu_share_by_hour.iter().all(|s| s == Some(1.0)));
    let idle = &doc.summary.cluster_queues[1];
    assert!(idle.gpu_share_by_hour.iter().all(|s| s == Some(0.0)));
    // And the page draws from them, bounded whatever the run's length.
    let html = kueuesim_report::report::report_html(world, &doc, Some(&sink.series));
    assert!(html.len() < 200_000, "report.html is {} bytes", html.len());
    assert!(html.contains("(181 other ClusterQueues)"), "queues folded");
}

#[test]
fn a_streamed_run_retains_per_workload_only_its_tally_entry() {
    // What a lean run keeps of a finished workload is what exact percentiles need: its wait
    // and its time to start for the run-wide figures and, once for its ClusterQueue and
    // LocalQueue together, its wait, time in queue and completion (JCT and run time), as
    // 32-bit milliseconds: 24 bytes. Held once per ClusterQueue and again per LocalQueue as
    // 8-byte durations it was 72 bytes (with the report's copies, most of the
    // million-workload run's peak memory). The counts are just under powers of two, so list
    // capacity adds 2.4 % to them and a duration held twice, or at 8 bytes, shows. The live
    // state (the window of workloads) does not grow with the stream at all.
    let mut spans = Vec::new();
    for n in [8_000u32, 32_000] {
        let opts = LoadOptions {
            stream: true,
            ..LoadOptions::default()
        };
        let text = steady_generator(n);
        let mut loaded = load_text_with("t.yaml", &text, opts).unwrap_or_else(|e| panic!("{e}"));
        let stream = loaded.stream.take().expect("streamed");
        let mut sim = Simulation::new(&loaded.world).with_stream(stream);
        let mut most = 0;
        while sim.step(None) {
            most = most.max(sim.live_workloads());
        }
        spans.push(most);
        let tally = sim.run().lean.expect("a streamed run is lean").tally;
        let finished = tally.count(kueuesim_engine::outcome::WorkloadState::Finished);
        assert_eq!(finished, u64::from(n));
        let bytes = tally.reserved_bytes();
        let per = bytes as f64 / f64::from(n);
        assert!(
            (24.0..=25.0).contains(&per),
            "{n} workloads: the tally holds {bytes} bytes, {per:.1} per workload"
        );
    }
    assert!(
        spans[1] <= spans[0] + 10,
        "the live window grew with the stream: {spans:?}"
    );
}

#[test]
fn respacing_uid_labels_changes_no_decision() {
    // UIDs break the last ties of queue order and preemption; their labels are respaced
    // when a gap is used up. Respacing on every arrival must decide exactly the same.
    // Kueue's perf scenarios are left out: respacing tens of thousands of live labels on
    // each of their arrivals takes minutes.
    let scenarios = small_scenarios()
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains("kueue-perf"));
    for path in scenarios {
        let files = read_paths(std::slice::from_ref(&path)).expect("readable");
        let loaded = load(&files, LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let world = &loaded.world;
        let [plain, respaced] = [false, true].map(|respace| {
            let mut sim = Simulation::new(world);
            if respace {
                sim = sim.with_uid_respacing();
            }
            to_json(&result_with(world, &sim.run(), true))
        });
        assert!(
            plain == respaced,
            "{}: respacing changed the result",
            path.display()
        );
    }
}

/// Collects what a run hands out (`Simulation::run_with_sink`); finished workloads as their
/// `result.json` entries, rendered when handed out (the run lets go of them after).
struct Collect<'w> {
    world: &'w World,
    events: Vec<(WorkloadId, Event)>,
    waits: Vec<(WorkloadId, SimDuration)>,
    samples: Vec<Sample>,
    finished: Vec<(WorkloadId, String)>,
}

impl RunSink for Collect<'_> {
    fn event(&mut self, w: WorkloadId, _wl: &Workload, e: &Event) {
        self.events.push((w, e.clone()));
    }
    fn quota_reserved(&mut self, w: WorkloadId, _wl: &Workload, waited: SimDuration) {
        self.waits.push((w, waited));
    }
    fn samples(&mut self, first: &Sample, count: u64, step: SimDuration) {
        for k in 0..count as i64 {
            self.samples.push(Sample {
                at: first.at + SimDuration::from_millis(k * step.millis()),
                ..first.clone()
            });
        }
    }
    fn finished(&mut self, w: WorkloadId, wl: &Workload, rec: &WorkloadRecord) {
        let end = rec.finished_at.expect("finished");
        let out = workload_out(self.world, wl, rec, end);
        self.finished.push((w, json_workload(&out)));
    }
}

#[test]
fn a_sink_is_handed_everything_the_full_run_records() {
    let mut finished_somewhere = 0;
    for path in small_scenarios()
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains("kueue-perf"))
    {
        let files = read_paths(std::slice::from_ref(&path)).expect("readable");
        let name = path.display();
        // The full run: every record kept, the time series in the outcome.
        let full = load(&files, LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let step = SimDuration::from_secs(60);
        let outcome = Simulation::new(&full.world).with_time_series(step).run();
        let doc = result_with(&full.world, &outcome, true);
        let ids: Vec<WorkloadId> = (0..outcome.workloads.len())
            .filter(|&i| outcome.workloads[i].is_some())
            .map(WorkloadId::from_index)
            .collect();
        // The streamed run with a sink.
        let opts = LoadOptions {
            stream: true,
            ..LoadOptions::default()
        };
        let mut loaded = load(&files, opts).unwrap_or_else(|e| panic!("{e}"));
        let stream = loaded.stream.take().expect("streamed");
        let world = &loaded.world;
        let mut sink = Collect {
            world,
            events: Vec::new(),
            waits: Vec::new(),
            samples: Vec::new(),
            finished: Vec::new(),
        };
        let lean = Simulation::new(world)
            .with_stream(stream)
            .with_time_series(step)
            .run_with_sink(|_, _| std::ops::ControlFlow::Continue(()), &mut sink);
        // Every sample, none past the end; the outcome keeps none.
        let series = outcome.time_series.expect("series");
        assert_eq!(sink.samples, series.samples, "{name}: samples");
        assert!(
            lean.time_series
                .as_ref()
                .expect("series")
                .samples
                .is_empty()
        );
        // Every quota reservation's wait, in the order the full run kept them.
        assert_eq!(
            sink.waits, outcome.stats.quota_reserved_waits,
            "{name}: waits"
        );
        // Every event of every workload, in time order, each workload's in its own order.
        assert!(
            sink.events.windows(2).all(|p| p[0].1.at <= p[1].1.at),
            "{name}: events out of time order"
        );
        for (i, rec) in outcome.workloads.iter().enumerate() {
            let handed: Vec<&Event> = sink
                .events
                .iter()
                .filter(|(w, _)| w.index() == i)
                .map(|(_, e)| e)
                .collect();
            let kept: Vec<&Event> = rec.iter().flat_map(|r| &r.events).collect();
            assert_eq!(handed, kept, "{name}: events of workload {i}");
        }
        // Finished workloads as they finished, the rest at the end: together, the full
        // run's entries.
        let lean_doc = result_with(world, &lean, true);
        let unfinished = lean.lean.as_ref().expect("lean").unfinished.iter();
        let mut entries: Vec<(WorkloadId, String)> = sink.finished.clone();
        entries.extend(
            unfinished
                .map(|(w, _, _)| *w)
                .zip(lean_doc.workloads.iter().map(json_workload)),
        );
        entries.sort();
        let expected: Vec<(WorkloadId, String)> = ids
            .iter()
            .copied()
            .zip(doc.workloads.iter().map(json_workload))
            .collect();
        assert_eq!(entries, expected, "{name}: workloads");
        finished_somewhere += sink.finished.len();
    }
    assert!(
        finished_somewhere > 100,
        "{finished_somewhere} finished workloads handed out"
    );
}

/// Generators whose arrivals and draws are random (Poisson, uniform, log-normal), one of
/// them ended by time (`until`) rather than by count, so that how many workloads are left
/// depends on every draw made before.
fn random_generators() -> String {
    format!(
        r#"{FLAVOR}---
{}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: team}}
spec: {{clusterQueue: cq}}
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {{name: timed, namespace: team}}
spec:
  until: 30h
  arrival: {{rate: 40/h}}
  queues: [{{name: q}}]
  pods: {{uniform: {{min: 1, max: 4}}}}
  requests: {{nvidia.com/gpu: {{uniform: {{min: 1, max: 8}}}}}}
  duration: {{logNormal: {{median: 1h, sigma: 1, min: 5m, max: 24h}}}}
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {{name: counted, namespace: team}}
spec:
  count: 700
  arrival: {{rate: 30/h}}
  queues: [{{name: q}}]
  pods: {{fixed: 2}}
  requests: {{nvidia.com/gpu: {{uniform: {{min: 1, max: 2}}}}}}
  duration: {{fixed: 10m}}
"#,
        cq("1000")
    )
}

/// The stream of `text`, with its first `skip` workloads pulled.
fn stream_after(text: &str, skip: usize) -> kueuesim_scenario::stream::WorkloadStream {
    let opts = LoadOptions {
        stream: true,
        ..LoadOptions::default()
    };
    let mut loaded = load_text_with("t.yaml", text, opts).unwrap_or_else(|e| panic!("{e}"));
    let mut stream = loaded.stream.take().expect("streamed");
    for _ in 0..skip {
        stream.next().expect("a workload");
    }
    stream
}

#[test]
fn counting_the_rest_of_a_stream_skips_workloads_as_pulling_them_does() {
    use kueuesim_engine::WorkloadFeed;
    let text = random_generators();
    let all = stream_after(&text, 0).count();
    assert!(all > 1_000, "{all} workloads");
    for skip in [0, 1, 17, 400, all - 1, all] {
        let counted = stream_after(&text, skip).count_rest();
        let pulled = stream_after(&text, skip).count() as u64;
        assert_eq!(counted, pulled, "after {skip} workloads");
        assert_eq!(counted, (all - skip) as u64);
    }
    // The counts above agree only if skipping a workload makes the draws building it makes:
    // a copy's arrivals come from the same random stream as its workloads' draws, so one
    // draw more or less moves every later arrival of `timed`, and with them how many fall
    // before its `until: 30h`. The merge starts with the earliest generator's first workload.
    let first = stream_after(&text, 0).next().map(|w| w.name);
    assert!(
        matches!(first.as_deref(), Some("timed-0" | "counted-0")),
        "{first:?}"
    );
}

#[test]
fn counting_the_rest_of_counted_generators_needs_no_draws_and_agrees() {
    use kueuesim_engine::WorkloadFeed;
    // Only counted generators, with arrivals well within range: the count comes from each
    // copy's count (no draw), and must equal pulling every workload.
    let text = format!(
        r#"{FLAVOR}---
{}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: team}}
spec: {{clusterQueue: cq}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: r, namespace: team}}
spec: {{clusterQueue: cq}}
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {{name: poisson, namespace: team}}
spec:
  count: 300
  arrival: {{rate: 50/h}}
  queues: [{{name: q}}, {{name: r}}]
  perLocalQueue: true
  pods: {{uniform: {{min: 1, max: 3}}}}
  requests: {{nvidia.com/gpu: {{uniform: {{min: 1, max: 8}}}}}}
  duration: {{fixed: 10m}}
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {{name: steady, namespace: team}}
spec:
  count: 250
  arrival: {{interval: 7m}}
  queues: [{{name: q}}]
  pods: {{fixed: 1}}
  requests: {{nvidia.com/gpu: {{fixed: 1}}}}
  duration: {{fixed: 10m}}
"#,
        cq("1000")
    );
    let all = stream_after(&text, 0).count();
    assert_eq!(all, 2 * 300 + 250);
    for skip in [0, 1, 33, 500, all - 1, all] {
        let counted = stream_after(&text, skip).count_rest();
        assert_eq!(counted, (all - skip) as u64, "after {skip} workloads");
    }
}

#[test]
fn counting_the_rest_of_a_stream_stops_at_the_same_error() {
    use kueuesim_engine::WorkloadFeed;
    // The fourth arrival is past the ten-year limit of simulated time: the stream ends with
    // an error there, counted or pulled.
    let text = format!(
        r#"{FLAVOR}---
{}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: team}}
spec: {{clusterQueue: cq}}
---
apiVersion: kueuesim.io/v1alpha1
kind: WorkloadGenerator
metadata: {{name: slow, namespace: team}}
spec:
  count: 10
  arrival: {{interval: 30000h}}
  queues: [{{name: q}}]
  pods: {{fixed: 1}}
  requests: {{nvidia.com/gpu: {{fixed: 1}}}}
  duration: {{fixed: 1h}}
"#,
        cq("10")
    );
    let mut counted = stream_after(&text, 0);
    let mut pulled = stream_after(&text, 0);
    let n_counted = counted.count_rest();
    let n_pulled = pulled.by_ref().count() as u64;
    assert_eq!(n_counted, n_pulled);
    assert!(n_counted < 10, "{n_counted}");
    let (ec, ep) = (counted.error(), pulled.error());
    let (ec, ep) = (ec.borrow(), ep.borrow());
    let message = ec.as_ref().expect("an error").to_string();
    assert!(message.contains("workload slow-"), "{message}");
    assert_eq!(Some(message), ep.as_ref().map(|e| e.to_string()));
}

/// 64 spines (Volcano HyperNodes of tier 1) of one 8-GPU node each, and two Volcano jobs
/// that must each fit in one spine: `long` (4 GPUs) runs ten years, `short` (8 GPUs) one day.
const DECADE_OF_SPINES: &str = "apiVersion: kueuesim.io/v1alpha1
kind: Simulation
metadata: {name: spines}
spec: {seed: 1}
---
apiVersion: kueuesim.io/v1alpha1
kind: NodePool
metadata: {name: pool}
spec:
  levels:
  - {nodeLabel: topology.kueuesim.io/spine, count: 64, hyperNodeTier: 1}
  nodesPerDomain: 1
  template:
    allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\", pods: \"110\"}
---
{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: gpu}}
---
{apiVersion: v1, kind: Namespace, metadata: {name: team}}
---
{apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {name: team}, spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 512}]}]}]}}
---
{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: q, namespace: team}, spec: {clusterQueue: team}}
---
{apiVersion: batch/v1, kind: Job, metadata: {name: long, namespace: team, labels: {kueue.x-k8s.io/queue-name: q}, annotations: {kueuesim.io/arrival: 0s, kueuesim.io/duration: 87600h}}, spec: {suspend: true, template: {metadata: {annotations: {volcano.sh/network-topology-mode: hard, volcano.sh/network-topology-highest-tier: \"1\"}}, spec: {schedulerName: volcano-scheduler, restartPolicy: Never, containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: \"4\"}}}]}}}}
---
{apiVersion: batch/v1, kind: Job, metadata: {name: short, namespace: team, labels: {kueue.x-k8s.io/queue-name: q}, annotations: {kueuesim.io/arrival: 1h, kueuesim.io/duration: 24h}}, spec: {suspend: true, template: {metadata: {annotations: {volcano.sh/network-topology-mode: hard, volcano.sh/network-topology-highest-tier: \"1\"}}, spec: {schedulerName: volcano-scheduler, restartPolicy: Never, containers: [{name: main, image: x, resources: {limits: {nvidia.com/gpu: \"8\"}}}]}}}}
";

#[test]
fn a_decade_of_free_gpus_per_spine_is_held_as_its_changes() {
    // report.html's free GPUs per spine, sampled every minute for ten years over 64 spines:
    // the page keeps each spine's changes (one point for an idle spine, a few where a job
    // starts or ends), not 5.3 million samples × 64 spines, and draws every spine's line.
    let opts = LoadOptions {
        stream: true,
        ..LoadOptions::default()
    };
    let mut loaded =
        load_text_with("t.yaml", DECADE_OF_SPINES, opts).unwrap_or_else(|e| panic!("{e}"));
    let stream = loaded.stream.take().expect("streamed");
    let world = &loaded.world;
    let mut sink = Plotted {
        series: kueuesim_report::report::PlottedSeries::new(world),
        calls: 0,
        samples: 0,
    };
    let outcome = Simulation::new(world)
        .with_stream(stream)
        .with_time_series(SimDuration::from_secs(60))
        .run_with_sink(|_, _| std::ops::ControlFlow::Continue(()), &mut sink);
    let minutes = 87_600 * 60;
    assert_eq!(sink.samples, minutes + 1);
    // GPUs bound, quota and pending of one queue, 64 spines: a point each, and a few more
    // where the two jobs start and end.
    let columns = 1 + 1 + 1 + 64;
    assert!(
        sink.series.points() <= columns + 12,
        "{} points for {columns} columns",
        sink.series.points()
    );
    let doc = result_with(world, &outcome, false);
    let html = kueuesim_report::report::report_html(world, &doc, Some(&sink.series));
    assert!(html.len() < 200_000, "report.html is {} bytes", html.len());
    let panel = &html[html
        .find("id=\"free-gpus-by-spine\"")
        .expect("the spine panel")..];
    let panel = &panel[..panel.find("</section>").expect("end")];
    // 23 spines drawn, the other 41 as the most free in any one of them.
    assert_eq!(panel.matches("class=\"data spine\"").count(), 24);
    assert!(panel.contains("(41 other spines: the most free in any one)"));
    // The 8-GPU gang always found a spine with 8 GPUs free.
    assert!(panel.contains("(team's team/job-short-"), "{panel}");
    assert!(
        panel.contains("data-gpus=\"8\" data-short-seconds=\"0\""),
        "{panel}"
    );
}
