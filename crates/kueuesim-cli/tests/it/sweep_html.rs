//! sweep.html as a browser draws it: headless Chromium loads the page with a measuring script
//! appended (the page itself has none) and the test reads the measurements back from the DOM —
//! a panel only for each figure that differs between variants, at least four ticks per value
//! axis, count and share axes from 0, no two labels overlapping, categories as points with
//! interval bars, numeric parameters as lines with bands, a search's target and answer marked.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::out::{chromium, headless};
use super::{csv_cells, kueuesim, scenario, stderr, stdout, temp_dir};

const GPU: &str = "cq/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota";
const CPU: &str =
    "cq/ml-team:spec.resourceGroups[0].flavors[name=h100].resources[name=cpu].nominalQuota=100000";
/// Figures that differ between the variants below and figures that do not (the eviction
/// reasons stay 0, the workload total is the scenario's).
const FIGURES: &str = "[\"clusterQueues[*].gpuShare\", waitSecondsInclPending.p95, gpu.utilization, workloads.total, workloads.finished, \"evictions.*\"]";

/// Runs a Sweep of scenarios/platform (`spec` below `spec.base`) into `dir/out`; its stdout.
fn sweep(dir: &Path, spec: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join("s.yaml");
    std::fs::write(
        &file,
        format!(
            "apiVersion: kueuesim.io/v1alpha1\nkind: Sweep\nmetadata:\n  name: s\nspec:\n  base: {}\n{spec}",
            scenario("platform")
        ),
    )
    .unwrap();
    let o = kueuesim(&[
        "sweep",
        file.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// Per panel (an `svg.panel`): its figure and axis kind, every pair of its labels whose boxes
/// overlap and every label outside it, its y ticks' values, where its lowest y tick and its
/// x axis are, its x ticks, and its marks by class.
const MEASURE: &str = r#"<script>
(function () {
  function box(e) { var r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }
  function count(svg, sel) { return svg.querySelectorAll(sel).length; }
  var out = { requests: performance.getEntriesByType("resource").length, panels: [] };
  document.querySelectorAll("svg.panel").forEach(function (svg) {
    var texts = Array.prototype.slice.call(svg.querySelectorAll("text"));
    var boxes = texts.map(box), frame = box(svg), overlaps = [], outside = [];
    for (var i = 0; i < boxes.length; i++) {
      var a = boxes[i];
      if (a[0] < frame[0] - 0.5 || a[1] < frame[1] - 0.5 || a[2] > frame[2] + 0.5 || a[3] > frame[3] + 0.5)
        outside.push(texts[i].textContent);
      for (var j = i + 1; j < boxes.length; j++) {
        var b = boxes[j];
        if (Math.min(a[2], b[2]) - Math.max(a[0], b[0]) > 0.5 && Math.min(a[3], b[3]) - Math.max(a[1], b[1]) > 0.5)
          overlaps.push(texts[i].textContent + " | " + texts[j].textContent);
      }
    }
    var yt = Array.prototype.map.call(svg.querySelectorAll("text.tick.y"), function (t) { return Number(t.getAttribute("data-v")); });
    var low = yt.indexOf(Math.min.apply(null, yt));
    var grid = svg.querySelectorAll("line.grid")[low], axis = svg.querySelector("line.axis.x");
    var answer = svg.querySelector("line.answer"), target = svg.querySelector("line.target");
    var label = function (sel) { var e = svg.querySelector(sel); return e ? e.textContent : null; };
    out.panels.push({
      figure: svg.getAttribute("data-figure"), x: svg.getAttribute("data-x"),
      overlaps: overlaps, outside: outside, yTicks: yt,
      lowestTickY: grid ? grid.getBoundingClientRect().top : null,
      axisY: axis ? axis.getBoundingClientRect().top : null,
      xTicks: count(svg, "text.tick.x"), points: count(svg, ".point"), intervals: count(svg, ".interval"),
      polylines: count(svg, "polyline"), bands: count(svg, ".band"),
      drawn: Array.prototype.every.call(svg.querySelectorAll(".point"), function (c) { return c.getBBox().width > 0; }),
      target: target ? Number(target.getAttribute("data-v")) : null, targetLabel: label(".target-label"),
      answer: answer ? Number(answer.getAttribute("data-v")) : null, answerLabel: label(".answer-label"),
      answerLines: count(svg, "line.answer")
    });
  });
  var pre = document.createElement("pre");
  pre.id = "check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"#;

/// sweep.html of `dir/out`, checked self-contained, then measured in Chromium (None when
/// Chromium is not installed and not required).
fn measure(dir: &Path) -> Option<Value> {
    let html = std::fs::read_to_string(dir.join("out/sweep.html")).expect("sweep.html");
    for needle in ["<script", "http", " src=", "<link", "@import", "url("] {
        assert!(!html.contains(needle), "sweep.html has {needle:?}");
    }
    let chromium = chromium()?;
    let page: PathBuf = dir.join("measured.html");
    std::fs::write(&page, html.replace("</body>", &format!("{MEASURE}</body>"))).unwrap();
    let o = headless(
        &chromium,
        &dir.join("profile"),
        &["--dump-dom", &format!("file://{}", page.display())],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let dom = stdout(&o);
    let from = dom.find("<pre id=\"check\">").expect("the script ran") + 16;
    let json = dom[from..from + dom[from..].find("</pre>").expect("</pre>")]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    Some(serde_json::from_str(&json).expect("measurements"))
}

/// sweep-summary.csv's figures: (name, whether its mean differs between variants). Equal
/// means are equal numbers: the file writes each in its shortest exact form.
fn varying(dir: &Path) -> Vec<(String, bool)> {
    let csv = std::fs::read_to_string(dir.join("out/sweep-summary.csv")).unwrap();
    let mut lines = csv.lines();
    let head = csv_cells(lines.next().unwrap());
    let rows: Vec<Vec<String>> = lines.map(csv_cells).collect();
    head.iter()
        .enumerate()
        .filter_map(|(i, h)| Some((i, h.strip_suffix(":mean")?)))
        .filter(|(i, _)| rows.iter().any(|r| !r[*i].is_empty()))
        .map(|(i, h)| (h.to_string(), rows.iter().any(|r| r[i] != rows[0][i])))
        .collect()
}

/// A figure counted in whole units or a share: its axis starts at 0.
fn count_or_share(figure: &str) -> bool {
    figure.ends_with("Share")
        || figure.ends_with("utilization")
        || ["workloads.", "evictions.", "preemptions."]
            .iter()
            .any(|p| figure.starts_with(p))
        || figure.ends_with("Workloads")
        || figure.ends_with("GpuQuota")
}

fn list(v: &Value, key: &str) -> Vec<f64> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key}: {v}"))
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// What every panel owes its reader, and the panels are exactly `want`; returns the panels.
fn check_panels(m: &Value, want: &[String]) -> Vec<Value> {
    assert_eq!(m["requests"], 0, "the page fetched nothing");
    let panels = m["panels"].as_array().expect("panels").clone();
    let figures: Vec<&str> = panels
        .iter()
        .map(|p| p["figure"].as_str().unwrap())
        .collect();
    assert_eq!(
        figures, want,
        "a panel for each figure that varies, no other"
    );
    for p in &panels {
        let f = p["figure"].as_str().unwrap();
        assert_eq!(
            p["overlaps"],
            Value::Array(vec![]),
            "{f}: overlapping labels"
        );
        assert_eq!(
            p["outside"],
            Value::Array(vec![]),
            "{f}: labels outside the panel"
        );
        assert!(p["drawn"].as_bool().unwrap(), "{f}: points drawn");
        let y = list(p, "yTicks");
        assert!(y.len() >= 4, "{f}: y ticks {y:?}");
        if p["x"] == "numeric" {
            assert!(p["xTicks"].as_u64().unwrap() >= 4, "{f}: {p}");
        }
        if count_or_share(f) {
            assert_eq!(y[0], 0.0, "{f}: from 0: {y:?}");
            let (tick, axis) = (p["lowestTickY"].as_f64(), p["axisY"].as_f64());
            assert!(tick.is_some() && tick == axis, "{f}: 0 on the x axis: {p}");
        }
    }
    panels
}

#[test]
fn sweep_html_draws_variants_as_points_with_bars_and_only_the_figures_that_differ() {
    let dir = temp_dir("sweep-html-variants");
    let long = "strict-fifo-everywhere-and-a-name-much-longer-than-its-slot-on-the-axis";
    sweep(
        &dir,
        &format!(
            "  seeds: 1..3\n  figures: {FIGURES}\n  variants:\n  - name: baseline\n    set: ['cq/ml-team:spec.queueingStrategy=BestEffortFIFO']\n  - name: {long}\n    set: ['cq/ml-team:spec.queueingStrategy=StrictFIFO', 'cq/research:spec.queueingStrategy=StrictFIFO']\n  - name: ml-team-192-gpus\n    set: ['{GPU}=192']\n"
        ),
    );
    let html = std::fs::read_to_string(dir.join("out/sweep.html")).unwrap();
    let figures = varying(&dir);
    let constant: Vec<&str> = figures
        .iter()
        .filter(|f| !f.1)
        .map(|f| f.0.as_str())
        .collect();
    assert!(constant.contains(&"evictions.Preempted"), "{figures:?}");
    // The constant figures are named in one line, none plotted.
    let line = html
        .lines()
        .find(|l| l.starts_with("<p class=\"constant\">Not plotted, the same in every variant: "))
        .expect("the line of constant figures");
    for f in &constant {
        assert!(line.contains(f), "{f} in {line}");
    }
    // The long name is cut on the axis, whole in its tooltip.
    assert!(html.contains(&format!("<title>{long}</title>")), "{html}");
    let Some(m) = measure(&dir) else { return };
    let want: Vec<String> = figures.into_iter().filter(|f| f.1).map(|f| f.0).collect();
    assert!(want.len() >= 4, "{want:?}");
    for p in check_panels(&m, &want) {
        assert_eq!(p["x"], "categories", "{p}");
        assert_eq!(p["xTicks"], 3, "a label per variant: {p}");
        assert_eq!(p["points"], 3, "{p}");
        assert_eq!(p["intervals"], 3, "a 95 % interval bar per point: {p}");
        assert_eq!(
            (&p["polylines"], &p["bands"]),
            (&0.into(), &0.into()),
            "{p}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweep_html_draws_numeric_values_as_lines_with_bands_and_words_as_points() {
    let dir = temp_dir("sweep-html-grid");
    let gpus = format!(
        "  - name: gpus\n    values: [128, 192, 256]\n    set: ['{GPU}={{{{value}}}}', '{CPU}']\n"
    );
    let strategy = "  - name: strategy\n    values: [BestEffortFIFO, StrictFIFO]\n    set: ['cq/ml-team:spec.queueingStrategy={{value}}']\n";
    sweep(
        &dir,
        &format!("  seeds: 1..2\n  figures: {FIGURES}\n  parameters:\n{gpus}{strategy}"),
    );
    let html = std::fs::read_to_string(dir.join("out/sweep.html")).unwrap();
    assert!(html.contains("strategy=BestEffortFIFO") && html.contains("strategy=StrictFIFO"));
    if let Some(m) = measure(&dir) {
        let want: Vec<String> = varying(&dir)
            .into_iter()
            .filter(|f| f.1)
            .map(|f| f.0)
            .collect();
        for p in check_panels(&m, &want) {
            assert_eq!(p["x"], "numeric", "{p}");
            assert_eq!(p["points"], 6, "{p}");
            assert_eq!(p["polylines"], 2, "a line per strategy: {p}");
            assert_eq!(p["bands"], 2, "{p}");
        }
    }
    // The words first: categories on the x axis, a point and bar per GPU quota in each.
    let words = dir.join("words");
    sweep(
        &words,
        &format!("  seeds: 1..2\n  figures: {FIGURES}\n  parameters:\n{strategy}{gpus}"),
    );
    if let Some(m) = measure(&words) {
        let want: Vec<String> = varying(&words)
            .into_iter()
            .filter(|f| f.1)
            .map(|f| f.0)
            .collect();
        for p in check_panels(&m, &want) {
            assert_eq!(p["x"], "categories", "{p}");
            assert_eq!(p["xTicks"], 2, "{p}");
            assert_eq!(p["points"], 6, "{p}");
            assert_eq!(p["intervals"], 6, "{p}");
            assert_eq!(p["polylines"], 0, "not joined: {p}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweep_html_marks_the_search_target_and_its_answer() {
    let dir = temp_dir("sweep-html-search");
    // The quota itself as the target: met from 150 on, so the answer is 160 of 64..256.
    let figure = "clusterQueues[ml-team].nominalGpuQuota";
    let out = sweep(
        &dir,
        &format!(
            "  seeds: 1..2\n  figures: [{}, \"{figure}\"]\n  parameters:\n  - name: quota\n    set: ['{GPU}={{{{value}}}}', '{CPU}']\n  search:\n    parameter: quota\n    min: 64\n    max: 256\n    step: 32\n    target: {{figure: \"{figure}\", atLeast: 150}}\n",
            &FIGURES[1..FIGURES.len() - 1]
        ),
    );
    assert!(out.starts_with("search: the smallest quota with "), "{out}");
    assert!(out.contains("≥ 150 (mean over 2 seeds): 160\n"), "{out}");
    let Some(m) = measure(&dir) else { return };
    // The target's figure first, then the others that differ.
    let mut want = vec![figure.to_string()];
    want.extend(
        varying(&dir)
            .into_iter()
            .filter(|f| f.1 && f.0 != figure)
            .map(|f| f.0),
    );
    let panels = check_panels(&m, &want);
    let t = &panels[0];
    assert_eq!(t["target"], 150.0, "{t}");
    assert_eq!(t["targetLabel"], "target ≥ 150", "{t}");
    assert_eq!(t["answer"], 160.0, "{t}");
    assert_eq!(t["answerLabel"], "quota = 160", "{t}");
    for p in &panels {
        assert_eq!(p["x"], "numeric", "{p}");
        assert_eq!(p["answerLines"], 1, "the answer in every panel: {p}");
        assert!(p["bands"].as_u64().unwrap() >= 1, "{p}");
    }
    assert!(panels[1..].iter().all(|p| p["target"].is_null()));
    let _ = std::fs::remove_dir_all(&dir);
}
