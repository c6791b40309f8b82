//! `sweep.html`: one self-contained page (inline SVG and CSS; no script, no network) of small
//! multiples — a panel per kept figure that differs between variants, the constant ones named
//! in one line. Numeric parameters are lines over the value with a band for the 95 %
//! confidence interval across seeds; variants of a list, or non-numeric values, are points
//! with interval bars; a search's target is a line and its answer marked.

use std::fmt::Write as _;

use kueuesim_report::figures::{Stats, human};

use super::run::Row;
use super::spec::{Search, Sweep};

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];
/// At most this many panels (sweep.csv and sweep-summary.csv have every figure).
const MAX_PLOTS: usize = 24;
/// The plot area of a panel (CSS pixels) before it widens for its labels.
const PLOT_W: f64 = 280.0;
const PLOT_H: f64 = 160.0;
const TOP: f64 = 12.0;
const RIGHT: f64 = 16.0;
/// Space between the y axis and the first and last x value of a numeric panel, so the
/// points clear the axis and the corner's labels clear each other.
const PAD: f64 = 12.0;
/// The font size of every label in the panels (CSS below).
const FONT: f64 = 11.0;
/// A label's box height at FONT (DejaVu Sans' ascent + descent ≈ 1.17 em), and the gap kept
/// between labels.
const LINE: f64 = 13.0;
const GAP: f64 = 4.0;
/// Category labels longer than this (estimated pixels) are cut with "…"; the whole name is
/// the label's tooltip.
const MAX_LABEL: f64 = 130.0;
/// Category labels side by side wrap at this width (estimated pixels) when their slots are
/// narrower.
const WRAP: f64 = 100.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The width of `s` at `size` pixels, estimated from DejaVu Sans' advance widths (the
/// sans-serif of Debian's Chromium, wider than Helvetica or Arial, so an estimate that fits
/// there fits elsewhere), with 5 % to spare.
fn text_width(s: &str, size: f64) -> f64 {
    let em: f64 = s
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '\'' | '|' | '.' | ',' | ':' | ';' | '!' => 0.32,
            'f' | 't' | 'r' | ' ' | '(' | ')' | '[' | ']' | '-' | '/' | 'I' => 0.42,
            'm' | 'w' | 'M' | 'W' | '%' | '@' | '…' | '=' | '+' | '±' | '≤' | '≥' | '—' => {
                1.0
            }
            c if c.is_ascii_uppercase() => 0.78,
            _ => 0.65,
        })
        .sum();
    em * size * 1.05
}

/// `s`, cut with "…" to at most `max` estimated pixels.
fn truncate(s: &str, max: f64) -> String {
    if text_width(s, FONT) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    for c in s.chars() {
        out.push(c);
        if text_width(&format!("{out}…"), FONT) > max {
            out.pop();
            break;
        }
    }
    out.push('…');
    out
}

/// `s` on lines of at most `max` estimated pixels, broken after `-`, `_`, `.`, `,`, `=`, `/`,
/// `:` or a space (a longer piece is cut where it must); past `lines` lines the last is cut
/// with "…".
fn wrap(s: &str, max: f64, lines: usize) -> Vec<String> {
    let mut pieces: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in s.chars() {
        cur.push(c);
        if matches!(c, '-' | '_' | '.' | ',' | '=' | '/' | ':' | ' ') {
            pieces.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        pieces.push(cur);
    }
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for p in pieces {
        if text_width(&format!("{line}{p}"), FONT) <= max {
            line.push_str(&p);
            continue;
        }
        if !line.is_empty() {
            out.push(std::mem::take(&mut line));
        }
        for c in p.chars() {
            if !line.is_empty() && text_width(&format!("{line}{c}"), FONT) > max {
                out.push(std::mem::take(&mut line));
            }
            line.push(c);
        }
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    if out.len() > lines {
        let rest = out[lines - 1..].concat();
        out.truncate(lines - 1);
        out.push(truncate(&rest, max));
    }
    out
}

/// `s` cut in the middle with "…" to at most `max` estimated pixels, keeping both ends (where
/// names of variants differ).
fn truncate_middle(s: &str, max: f64) -> String {
    if text_width(s, FONT) <= max {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    let (mut head, mut tail) = (0, 0);
    loop {
        let (h, t) = if head <= tail {
            (head + 1, tail)
        } else {
            (head, tail + 1)
        };
        if h + t >= chars.len() {
            break;
        }
        let cut: String = chars[..h]
            .iter()
            .chain(std::iter::once(&'…'))
            .chain(&chars[chars.len() - t..])
            .collect();
        if text_width(&cut, FONT) > max {
            break;
        }
        (head, tail) = (h, t);
    }
    chars[..head]
        .iter()
        .chain(std::iter::once(&'…'))
        .chain(&chars[chars.len() - tail..])
        .collect()
}

/// The smallest 1-2-5 step (…, 0.1, 0.2, 0.5, 1, 2, 5, 10, …) of at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    // A relative slack so that 0.3/0.1 = 2.9999999999999996 does not pick the next step.
    let m = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|m| raw / mag <= m * (1.0 + 1e-9))
        .unwrap_or(10.0);
    m * mag
}

/// The 1-2-5 step below `step` (5 → 2 → 1 → 0.5).
fn smaller_step(step: f64) -> f64 {
    let mag = 10f64.powf((step.log10() + 1e-9).floor());
    let m = (step / mag).round();
    if m >= 5.0 {
        2.0 * mag
    } else if m >= 2.0 {
        mag
    } else {
        0.5 * mag
    }
}

/// Ticks of a value axis covering `lo..hi`: multiples of a 1-2-5 step, at least four and
/// about six, the first at or below `lo` and the last at or above `hi` (the axis runs from
/// tick to tick, so both ends are labelled); whole steps when `integer`.
fn extended_ticks(lo: f64, hi: f64, integer: bool) -> Vec<f64> {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (0.0, 1.0)
    } else {
        let d = lo.abs() * 0.1;
        (lo - d, hi + d)
    };
    let mut step = nice_step((hi - lo) / 5.0);
    loop {
        if integer && step < 1.0 {
            step = 1.0;
        }
        let a = (lo / step + 1e-9).floor();
        let b = (hi / step - 1e-9).ceil();
        if b - a >= 3.0 || (integer && step <= 1.0) {
            return multiples(a, b.max(a + 3.0), step).unwrap_or_else(|| even(lo, hi));
        }
        step = smaller_step(step);
    }
}

/// `a·step, (a+1)·step, …, b·step`, unless that is not a handful of distinct numbers (a
/// spread too small for the values' magnitude to show in f64).
fn multiples(a: f64, b: f64, step: f64) -> Option<Vec<f64>> {
    let n = b - a;
    if !(n.is_finite() && (0.0..=50.0).contains(&n)) {
        return None;
    }
    let v: Vec<f64> = (0..=n as usize).map(|i| (a + i as f64) * step).collect();
    v.windows(2).all(|w| w[1] > w[0]).then_some(v)
}

/// Five evenly spaced values from `lo` to `hi` (when no 1-2-5 step fits).
fn even(lo: f64, hi: f64) -> Vec<f64> {
    (0..5).map(|i| lo + (hi - lo) * i as f64 / 4.0).collect()
}

/// Ticks inside `lo..hi` (a numeric parameter's range, drawn as it is): at least four
/// multiples of a 1-2-5 step.
fn inner_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut step = nice_step((hi - lo) / 5.0);
    for _ in 0..60 {
        let a = (lo / step - 1e-9).ceil();
        let b = (hi / step + 1e-9).floor();
        if b - a >= 3.0 {
            return multiples(a, b, step).unwrap_or_else(|| even(lo, hi));
        }
        step = smaller_step(step);
    }
    even(lo, hi)
}

/// How a figure's axis reads: where it starts and in what unit it is labelled.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scale {
    /// `…Seconds` (not a `.count`): from 0, in h, min or s (by the axis' top).
    Duration,
    /// GPU-seconds and GPU-hours: from 0, in GPU-h.
    GpuHours { per_second: bool },
    /// Utilisations and shares (in %) and ratios: from 0.
    Share { percent: bool },
    /// `.count`, or every value a whole number: from 0, whole steps.
    Count,
    /// Anything else (bounded slowdown, ≥ 1): spans its intervals.
    Other,
}

/// The rule of the y axis, from the figure's name (and its values for counts).
fn scale(figure: &str, values: &[f64]) -> Scale {
    let leaf = figure.rsplit('.').next().unwrap_or(figure);
    if leaf.contains("GpuSeconds") || leaf.contains("gpuSeconds") {
        return Scale::GpuHours { per_second: true };
    }
    if leaf.contains("GpuHours") || leaf.contains("gpuHours") {
        return Scale::GpuHours { per_second: false };
    }
    // As `figures::human` words them: its durations and percentages.
    if figure.contains("Seconds") && !leaf.starts_with("count") {
        return Scale::Duration;
    }
    let percent = human(figure, 0.5).ends_with('%');
    if percent || leaf.ends_with("Ratio") {
        return Scale::Share { percent };
    }
    if leaf == "count" || values.iter().all(|v| v.fract() == 0.0) {
        return Scale::Count;
    }
    Scale::Other
}

/// One labelled tick: its value in the figure's units and its label.
struct Tick {
    value: f64,
    label: String,
}

/// `v` (in display units, a multiple of `step`) with the decimals the step needs, and "k" or
/// "M" past ten thousand.
fn number_label(v: f64, step: f64, big: f64) -> String {
    let (div, suffix) = if big >= 1e7 {
        (1e6, "M")
    } else if big >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    if v == 0.0 {
        return "0".into();
    }
    let decimals = (-(step / div).log10() - 1e-9).ceil().max(0.0) as usize;
    format!("{:.*}{suffix}", decimals, v / div)
}

/// The y axis of values spanning `lo..hi` under `scale`: ticks and the axis' ends.
fn y_axis(scale: Scale, lo: f64, hi: f64) -> (Vec<Tick>, f64, f64) {
    let zero = !matches!(scale, Scale::Other);
    let (lo, hi) = if zero {
        (lo.min(0.0), hi.max(0.0))
    } else {
        (lo, hi)
    };
    let (div, suffix) = match scale {
        Scale::Duration if hi.max(-lo) >= 7200.0 => (3600.0, " h"),
        Scale::Duration if hi.max(-lo) >= 120.0 => (60.0, " min"),
        Scale::Duration => (1.0, " s"),
        Scale::GpuHours { per_second: true } => (3600.0, " GPU-h"),
        Scale::GpuHours { per_second: false } => (1.0, " GPU-h"),
        Scale::Share { percent: true } => (0.01, " %"),
        _ => (1.0, ""),
    };
    let values = extended_ticks(lo / div, hi / div, scale == Scale::Count);
    let step = if values.len() > 1 {
        values[1] - values[0]
    } else {
        1.0
    };
    let big = values.iter().fold(0f64, |m, v| m.max(v.abs()));
    let ticks: Vec<Tick> = values
        .iter()
        .map(|&v| {
            let label = number_label(v, step, big);
            Tick {
                value: v * div,
                label: if v == 0.0 || suffix.is_empty() {
                    label
                } else {
                    format!("{label}{suffix}")
                },
            }
        })
        .collect();
    let (y0, y1) = (ticks[0].value, ticks[ticks.len() - 1].value);
    (ticks, y0, y1)
}

/// The x axis: a numeric parameter's range, or one slot per category.
enum XAxis {
    Numeric {
        lo: f64,
        hi: f64,
        ticks: Vec<Tick>,
    },
    /// `names` in first-seen order, `shown` without the `common` start they share (to the last
    /// `-`, `_`, `.`, `,`, `=`, `/`, `:` or space in it), which the axis' title says once.
    Categories {
        names: Vec<String>,
        shown: Vec<String>,
        common: String,
    },
}

const BREAKS: [char; 8] = ['-', '_', '.', ',', '=', '/', ':', ' '];

/// The start `names` share up to a break character, if at least four characters long and
/// every name goes on past it.
fn common_start(names: &[String]) -> String {
    let Some(first) = names.first() else {
        return String::new();
    };
    if names.len() < 2 {
        return String::new();
    }
    let mut len = first.len();
    for n in &names[1..] {
        len = first
            .char_indices()
            .zip(n.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, a), _)| i + a.len_utf8())
            .min(len);
    }
    let cut = first[..len]
        .char_indices()
        .rfind(|(_, c)| BREAKS.contains(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    if cut >= 4 && names.iter().all(|n| n.len() > cut) {
        first[..cut].to_string()
    } else {
        String::new()
    }
}

/// One variant: where it sits on the x axis, its series (the other parameters' values) and
/// its runs.
struct Variant<'a> {
    name: &'a str,
    x: String,
    series: usize,
    rows: Vec<&'a Row>,
}

/// A search's target as the page draws it, and its answer (the smallest probed value whose
/// runs meet the target, which is what the bisection answers: search.txt).
struct Marks<'a> {
    search: &'a Search,
    param: &'a str,
    seeds: usize,
    answer: Option<f64>,
}

/// Whether `rows` meet the search's target, as `search::judge` decides it: no failed run,
/// every run with a value, and the mean (or every seed) within the bound.
fn meets(s: &Search, rows: &[&Row]) -> bool {
    let xs: Vec<Option<f64>> = rows.iter().map(|r| r.figure(&s.figure)).collect();
    let within = |x: f64| {
        if s.at_most {
            x <= s.bound
        } else {
            x >= s.bound
        }
    };
    rows.iter().all(|r| r.error.is_empty())
        && xs.iter().all(Option::is_some)
        && if s.over_mean {
            Stats::of(xs.iter().copied()).is_some_and(|st| within(st.mean))
        } else {
            xs.iter().flatten().all(|&x| within(x))
        }
}

/// The page for `rows` (canonical order: variants as the grid or list gives them, or a
/// search's steps) and the kept figure `columns`.
pub(crate) fn sweep_html(
    sweep: &Sweep,
    params: &[String],
    columns: &[String],
    rows: &[Row],
) -> String {
    let search = sweep.search.as_ref();
    // The x axis is the searched parameter, else the first; the others make the series.
    let xi = search.map_or(0, |s| s.parameter);
    let mut series: Vec<String> = Vec::new();
    let mut variants: Vec<Variant<'_>> = Vec::new();
    for r in rows {
        if let Some(v) = variants.last_mut()
            && v.name == r.variant
        {
            v.rows.push(r);
            continue;
        }
        let (x, s) = if params.is_empty() {
            (r.variant.clone(), String::new())
        } else {
            let others: Vec<String> = params
                .iter()
                .zip(&r.values)
                .enumerate()
                .filter(|(i, _)| *i != xi)
                .map(|(_, (p, v))| format!("{p}={v}"))
                .collect();
            (
                r.values.get(xi).cloned().unwrap_or_default(),
                others.join(", "),
            )
        };
        let si = series.iter().position(|x| *x == s).unwrap_or_else(|| {
            series.push(s);
            series.len() - 1
        });
        variants.push(Variant {
            name: &r.variant,
            x,
            series: si,
            rows: vec![r],
        });
    }
    let mut xs: Vec<String> = Vec::new();
    for v in &variants {
        if !xs.contains(&v.x) {
            xs.push(v.x.clone());
        }
    }
    let x_name = if params.is_empty() {
        "variant"
    } else {
        params[xi].as_str()
    };
    // Numbers are a scale when there are two or more (a search's range counts); a list of
    // variants, words, or a single value are categories.
    let numbers: Option<Vec<f64>> = xs
        .iter()
        .map(|x| x.parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect();
    let x_axis = match numbers {
        Some(ns) if !params.is_empty() && (ns.len() >= 2 || search.is_some()) => {
            let mut lo = ns.iter().copied().fold(f64::INFINITY, f64::min);
            let mut hi = ns.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if let Some(s) = search {
                lo = lo.min(s.min as f64);
                hi = hi.max(s.max as f64);
            }
            if hi <= lo {
                (lo, hi) = (lo - 1.0, hi + 1.0);
            }
            let values = inner_ticks(lo, hi);
            let step = if values.len() > 1 {
                values[1] - values[0]
            } else {
                1.0
            };
            let big = values.iter().fold(0f64, |m, v| m.max(v.abs()));
            let ticks = values
                .iter()
                .map(|&v| Tick {
                    value: v,
                    label: number_label(v, step, big),
                })
                .collect();
            XAxis::Numeric { lo, hi, ticks }
        }
        _ => {
            let common = common_start(&xs);
            XAxis::Categories {
                shown: xs.iter().map(|x| x[common.len()..].to_string()).collect(),
                names: xs.clone(),
                common,
            }
        }
    };
    let marks = search.map(|s| {
        let answer = variants
            .iter()
            .filter(|v| meets(s, &v.rows))
            .filter_map(|v| v.x.parse::<f64>().ok())
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))));
        Marks {
            search: s,
            param: x_name,
            seeds: sweep.seeds.len(),
            answer,
        }
    });

    // The figures to plot: the search's first (even when `figures` leaves it out), then each
    // kept figure whose mean differs between variants; the others are named in one line.
    let mut figures: Vec<&str> = Vec::new();
    if let Some(s) = search {
        figures.push(&s.figure);
    }
    let mut constant: Vec<(&str, String)> = Vec::new();
    let mut empty: Vec<&str> = Vec::new();
    let mut plotted: Vec<(&str, Vec<Option<Stats>>)> = Vec::new();
    for f in columns.iter().map(String::as_str) {
        if !figures.contains(&f) {
            figures.push(f);
        }
    }
    for f in figures {
        // Only finite numbers can be drawn (sweep.csv keeps whatever the runs gave).
        let stats: Vec<Option<Stats>> = variants
            .iter()
            .map(|v| {
                Stats::of(v.rows.iter().map(|r| r.figure(f).filter(|x| x.is_finite())))
                    .filter(|s| s.interval().0.is_finite() && s.interval().1.is_finite())
            })
            .collect();
        let means: Vec<Option<f64>> = stats.iter().map(|s| s.as_ref().map(|s| s.mean)).collect();
        let is_target = search.is_some_and(|s| s.figure == f);
        if means.iter().all(Option::is_none) && !is_target {
            empty.push(f);
        } else if !is_target && variants.len() > 1 && means.iter().all(|m| *m == means[0]) {
            // Exactly equal: the same runs give the same bits, and sweep-summary.csv's
            // shortest round-trip numbers show the same equality.
            let m = means[0].expect("not all none");
            constant.push((f, human(f, m)));
        } else {
            plotted.push((f, stats));
        }
    }
    let left_over = plotted.len().saturating_sub(MAX_PLOTS);
    plotted.truncate(MAX_PLOTS);

    let failed = rows.iter().filter(|r| !r.error.is_empty()).count();
    let mut out = format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>sweep {name}</title>
<style>
body {{ font-family: sans-serif; margin: 24px; color: #222; }}
h1 {{ font-size: 20px; }} p {{ font-size: 14px; max-width: 60em; }}
.panels {{ display: flex; flex-wrap: wrap; gap: 16px 28px; align-items: flex-start; }}
.panel h2 {{ font-size: 13px; font-family: monospace; margin: 0 0 4px; min-height: 2.4em; display: flex; align-items: flex-end; overflow-wrap: anywhere; }}
.panel p {{ font-size: 12px; color: #555; margin: 2px 0 0; }}
svg text {{ font-family: sans-serif; font-size: {FONT}px; fill: #444; }}
svg .grid {{ stroke: #e8e8e8; }} svg .axis {{ stroke: #888; }}
svg .band {{ fill-opacity: 0.15; stroke: none; }} svg .line {{ fill: none; stroke-width: 2; }}
svg .interval {{ stroke-width: 1.5; }}
svg .target {{ stroke: #222; stroke-dasharray: 6 3; }}
svg .answer {{ stroke: #222; stroke-dasharray: 2 3; }}
svg circle.answer {{ fill: none; stroke-dasharray: none; stroke-width: 1.5; }}
svg text.mark {{ fill: #111; paint-order: stroke; stroke: #fff; stroke-width: 3px; }}
.legend {{ font-size: 13px; }} .key {{ margin-right: 16px; white-space: nowrap; display: inline-block; }}
.constant {{ font-size: 12px; color: #555; }}
</style></head><body>
<h1>sweep {name}</h1>
<p>{variants} variant{plural} × {seeds} seeds{failed}. Each panel is one figure {how}; a point's tooltip has its value. The y axis starts at 0 for counts, shares, GPU-hours and durations.</p>
"#,
        name = esc(&sweep.name),
        variants = variants.len(),
        plural = if variants.len() == 1 { "" } else { "s" },
        seeds = sweep.seeds.len(),
        failed = if failed > 0 {
            format!(" ({failed} runs failed: sweep.csv's error column)")
        } else {
            String::new()
        },
        how = match x_axis {
            XAxis::Numeric { .. } => format!(
                "against {}: the mean over seeds as a line, the 95 % confidence interval of that mean across seeds (Student's t, as in sweep-summary.csv) as a band",
                esc(x_name)
            ),
            XAxis::Categories { .. } => format!(
                "per {}: the mean over seeds as a point, the 95 % confidence interval of that mean across seeds (Student's t, as in sweep-summary.csv) as a bar",
                esc(x_name)
            ),
        },
    );
    if let Some(m) = &marks {
        let s = m.search;
        let answer = match m.answer {
            Some(a) => format!("{}", a),
            None => format!("none in {}..{} (step {})", s.min, s.max, s.step),
        };
        let _ = writeln!(
            out,
            "<p class=\"search\">Search: the smallest {} with {} {} {} ({} {} seeds): <strong>{}</strong>. The dashed line is the target, the dotted line the answer.</p>",
            esc(m.param),
            esc(&s.figure),
            if s.at_most { "≤" } else { "≥" },
            esc(&human(&s.figure, s.bound)),
            if s.over_mean {
                "mean over"
            } else {
                "on every one of"
            },
            m.seeds,
            esc(&answer)
        );
    }
    if series.len() > 1 {
        out.push_str("<p class=\"legend\">");
        for (i, s) in series.iter().enumerate() {
            let _ = write!(
                out,
                "<span class=\"key\"><span style=\"color:{}\">&#9632;</span> {}</span>",
                COLORS[i % COLORS.len()],
                esc(s)
            );
        }
        out.push_str("</p>\n");
    }
    if !constant.is_empty() || !empty.is_empty() {
        let mut parts = Vec::new();
        if !constant.is_empty() {
            parts.push(format!(
                "Not plotted, the same in every variant: {}",
                grouped(&constant)
            ));
        }
        if !empty.is_empty() {
            let none: Vec<(&str, String)> = empty.iter().map(|f| (*f, String::new())).collect();
            let what = if parts.is_empty() { "No" } else { "no" };
            parts.push(format!("{what} value in any run: {}", grouped(&none)));
        }
        let _ = writeln!(out, "<p class=\"constant\">{}.</p>", parts.join("; "));
    }
    out.push_str("<div class=\"panels\">\n");
    for (figure, stats) in &plotted {
        out.push_str(&panel(
            figure,
            &x_axis,
            x_name,
            &series,
            &variants,
            stats,
            marks.as_ref(),
        ));
    }
    out.push_str("</div>\n");
    if left_over > 0 {
        let _ = writeln!(
            out,
            "<p>{left_over} more figures differ between variants: they are in sweep.csv and sweep-summary.csv (keep fewer with spec.figures).</p>"
        );
    }
    out.push_str("</body></html>\n");
    out
}

/// Figure names (with their value as a tooltip) grouped by the ClusterQueue or LocalQueue
/// they belong to: "clusterQueues[a]: evictions, pendingWorkloads; workloads.total".
fn grouped(figures: &[(&str, String)]) -> String {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for (f, value) in figures {
        let (scope, rest) = match f.find("].") {
            Some(i) => (&f[..i + 1], &f[i + 2..]),
            None => ("", *f),
        };
        let item = if value.is_empty() {
            esc(rest)
        } else {
            format!("<span title=\"{}\">{}</span>", esc(value), esc(rest))
        };
        match groups.iter_mut().find(|(s, _)| *s == scope) {
            Some((_, items)) => items.push(item),
            None => groups.push((scope, vec![item])),
        }
    }
    groups
        .into_iter()
        .map(|(scope, items)| {
            if scope.is_empty() {
                items.join(", ")
            } else {
                format!("{}: {}", esc(scope), items.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A figure's name as a heading, with a line-break opportunity after its queue's scope
/// ("clusterQueues[ml-team].⏎waitSeconds.p95").
fn heading(figure: &str) -> String {
    match figure.find("].") {
        Some(i) => format!("{}<wbr>{}", esc(&figure[..i + 2]), esc(&figure[i + 2..])),
        None => esc(figure),
    }
}

/// An axis-aligned box of a label (x, y of the top-left corner, width, height).
type Bbox = (f64, f64, f64, f64);

fn overlap(a: Bbox, b: Bbox) -> bool {
    a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
}

/// The box of a label whose baseline starts at (x, y) with `anchor` start or end.
fn label_box(text: &str, x: f64, y: f64, end: bool) -> Bbox {
    let w = text_width(text, FONT);
    let x0 = if end { x - w } else { x };
    (x0, y - 0.93 * FONT, w, LINE)
}

/// One figure's panel: a heading, the SVG and, for the search's figure, a note.
fn panel(
    figure: &str,
    x_axis: &XAxis,
    x_name: &str,
    series: &[String],
    variants: &[Variant<'_>],
    stats: &[Option<Stats>],
    marks: Option<&Marks<'_>>,
) -> String {
    let target = marks.filter(|m| m.search.figure == figure);
    // The y range: every interval, and the target's bound.
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for s in stats.iter().flatten() {
        let (a, b) = s.interval();
        lo = lo.min(a);
        hi = hi.max(b);
    }
    if let Some(m) = target {
        lo = lo.min(m.search.bound);
        hi = hi.max(m.search.bound);
    }
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    let values: Vec<f64> = variants
        .iter()
        .flat_map(|v| v.rows.iter().filter_map(|r| r.figure(figure)))
        .filter(|x| x.is_finite())
        .collect();
    let scale = scale(figure, &values);
    // A figure that cannot go below 0 keeps its axis at 0 though an interval (mean − t·s/√n
    // of a few seeds) reaches below; the bars and bands are cut at the axis.
    if scale != Scale::Other && values.iter().all(|v| *v >= 0.0) {
        lo = lo.max(0.0);
    }
    let (yticks, y0, y1) = y_axis(scale, lo, hi);
    let sy = |y: f64| TOP + (y1 - y.clamp(y0, y1)) / (y1 - y0) * PLOT_H;
    let left = yticks
        .iter()
        .map(|t| text_width(&t.label, FONT))
        .fold(24f64, f64::max)
        + 10.0;

    // The x axis' width and labels: category names side by side, each wrapped onto at most
    // three lines of its slot (slots widened up to WRAP); when that is too wide they stand
    // upright, cut in the middle at MAX_LABEL.
    let mut wrapped: Vec<Vec<String>> = Vec::new();
    let (plot_w, upright, label_depth) = match x_axis {
        XAxis::Numeric { ticks, .. } => {
            let widest = ticks
                .iter()
                .map(|t| text_width(&t.label, FONT))
                .fold(0f64, f64::max);
            let need = (ticks.len().max(2) - 1) as f64 * (widest + 2.0 * GAP) + 2.0 * PAD;
            (PLOT_W.max(need), false, 0.0)
        }
        XAxis::Categories { shown, .. } => {
            let widest = shown
                .iter()
                .map(|c| text_width(c, FONT))
                .fold(0f64, f64::max);
            let k = shown.len() as f64;
            let inner = (PLOT_W / k - 2.0 * GAP).max(widest.min(WRAP));
            if k * (inner + 2.0 * GAP) <= 760f64.max(PLOT_W) {
                wrapped = shown.iter().map(|c| wrap(c, inner, 3)).collect();
                let lines = wrapped.iter().map(Vec::len).max().unwrap_or(1);
                (k * (inner + 2.0 * GAP), false, (lines - 1) as f64 * LINE)
            } else {
                wrapped = shown
                    .iter()
                    .map(|c| vec![truncate_middle(c, MAX_LABEL)])
                    .collect();
                let longest = wrapped
                    .iter()
                    .map(|l| text_width(&l[0], FONT))
                    .fold(0f64, f64::max);
                let slot = (PLOT_W / k).max(LINE + 2.0 * GAP);
                (k * slot, true, longest)
            }
        }
    };
    let bottom_axis = TOP + PLOT_H;
    let tick_baseline = bottom_axis + 20.0;
    let title_baseline = if upright {
        bottom_axis + 8.0 + label_depth + 18.0
    } else {
        bottom_axis + 40.0 + label_depth
    };
    let width = (left + plot_w + RIGHT).ceil();
    let height = (title_baseline + 8.0).ceil();
    let sx = |x: f64| -> f64 {
        match x_axis {
            XAxis::Numeric { lo, hi, .. } => {
                left + PAD + (x - lo) / (hi - lo) * (plot_w - 2.0 * PAD)
            }
            XAxis::Categories { names, .. } => left + (x + 0.5) * plot_w / names.len() as f64,
        }
    };
    let mut body = String::new();
    // Grid and y axis.
    for t in &yticks {
        let y = sy(t.value);
        let _ = write!(
            body,
            "<line class=\"grid\" x1=\"{left:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text class=\"tick y\" data-v=\"{}\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left + plot_w,
            t.value,
            left - 6.0,
            y + 4.0,
            esc(&t.label)
        );
    }
    let _ = write!(
        body,
        "<line class=\"axis x\" x1=\"{left:.1}\" x2=\"{:.1}\" y1=\"{bottom_axis:.1}\" y2=\"{bottom_axis:.1}\"/><line class=\"axis y\" x1=\"{left:.1}\" x2=\"{left:.1}\" y1=\"{TOP:.1}\" y2=\"{bottom_axis:.1}\"/>",
        left + plot_w
    );
    // X ticks.
    match x_axis {
        XAxis::Numeric { ticks, .. } => {
            for t in ticks {
                let x = sx(t.value);
                let _ = write!(
                    body,
                    "<line class=\"axis\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{bottom_axis:.1}\" y2=\"{:.1}\"/><text class=\"tick x\" data-v=\"{}\" x=\"{x:.1}\" y=\"{tick_baseline:.1}\" text-anchor=\"middle\">{}</text>",
                    bottom_axis + 4.0,
                    t.value,
                    esc(&t.label)
                );
            }
        }
        XAxis::Categories { names, .. } => {
            for (i, (c, lines)) in names.iter().zip(&wrapped).enumerate() {
                let x = sx(i as f64);
                let tip = if lines.concat() == *c {
                    String::new()
                } else {
                    format!("<title>{}</title>", esc(c))
                };
                if upright {
                    // Read bottom to top, hanging from the axis, centred on the slot.
                    let _ = write!(
                        body,
                        "<text class=\"tick x\" transform=\"translate({:.1},{:.1}) rotate(-90)\" text-anchor=\"end\">{tip}{}</text>",
                        x + 4.0,
                        bottom_axis + 8.0,
                        esc(&lines[0])
                    );
                } else {
                    let mut spans = String::new();
                    for (j, l) in lines.iter().enumerate() {
                        let _ = write!(
                            spans,
                            "<tspan x=\"{x:.1}\" y=\"{:.1}\">{}</tspan>",
                            tick_baseline + j as f64 * LINE,
                            esc(l)
                        );
                    }
                    let _ = write!(
                        body,
                        "<text class=\"tick x\" text-anchor=\"middle\">{tip}{spans}</text>"
                    );
                }
            }
        }
    }
    let title = match x_axis {
        XAxis::Categories { common, .. } if !common.is_empty() => {
            truncate_middle(&format!("{x_name}: {common}…"), plot_w)
        }
        _ => x_name.to_string(),
    };
    let _ = write!(
        body,
        "<text class=\"title\" x=\"{:.1}\" y=\"{title_baseline:.1}\" text-anchor=\"middle\">{}</text>",
        left + plot_w / 2.0,
        esc(&title)
    );

    // The data.
    let tip = |v: &Variant<'_>, s: &Stats| {
        let ci = s
            .ci95
            .map_or(String::new(), |h| format!(" ± {}", human(figure, h)));
        esc(&format!(
            "{}: {}{ci} (n = {})",
            v.name,
            human(figure, s.mean),
            s.n
        ))
    };
    match x_axis {
        XAxis::Numeric { .. } => {
            for (si, _) in series.iter().enumerate() {
                let color = COLORS[si % COLORS.len()];
                let mut pts: Vec<(f64, &Variant<'_>, &Stats)> = variants
                    .iter()
                    .zip(stats)
                    .filter(|(v, _)| v.series == si)
                    .filter_map(|(v, s)| Some((v.x.parse::<f64>().ok()?, v, s.as_ref()?)))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                if pts.len() >= 2 {
                    let mut d = String::new();
                    for (i, (x, _, s)) in pts.iter().enumerate() {
                        let _ = write!(
                            d,
                            "{}{:.1},{:.1}",
                            if i == 0 { "M" } else { "L" },
                            sx(*x),
                            sy(s.interval().1)
                        );
                    }
                    for (x, _, s) in pts.iter().rev() {
                        let _ = write!(d, "L{:.1},{:.1}", sx(*x), sy(s.interval().0));
                    }
                    let line: Vec<String> = pts
                        .iter()
                        .map(|(x, _, s)| format!("{:.1},{:.1}", sx(*x), sy(s.mean)))
                        .collect();
                    let _ = write!(
                        body,
                        "<path class=\"band\" fill=\"{color}\" d=\"{d}Z\"/><polyline class=\"line\" stroke=\"{color}\" points=\"{}\"/>",
                        line.join(" ")
                    );
                } else if let Some((x, _, s)) = pts.first() {
                    // One value: its interval as a bar (a band needs two).
                    let (a, b) = s.interval();
                    let _ = write!(
                        body,
                        "<line class=\"interval\" stroke=\"{color}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
                        sy(a),
                        sy(b),
                        x = sx(*x)
                    );
                }
                for (x, v, s) in &pts {
                    let _ = write!(
                        body,
                        "<circle class=\"point\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{}</title></circle>",
                        sx(*x),
                        sy(s.mean),
                        tip(v, s)
                    );
                }
            }
        }
        XAxis::Categories { names: cats, .. } => {
            let slot = plot_w / cats.len() as f64;
            let n = series.len() as f64;
            let dodge = (slot * 0.6 / n).min(12.0);
            for (v, s) in variants.iter().zip(stats) {
                let Some(s) = s else { continue };
                let i = cats.iter().position(|c| *c == v.x).unwrap_or(0) as f64;
                let x = sx(i) + (v.series as f64 - (n - 1.0) / 2.0) * dodge;
                let color = COLORS[v.series % COLORS.len()];
                let (a, b) = s.interval();
                if s.ci95.is_some() {
                    let (ya, yb) = (sy(a), sy(b));
                    let _ = write!(
                        body,
                        "<g class=\"interval\" stroke=\"{color}\"><line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{ya:.1}\" y2=\"{yb:.1}\"/><line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{ya:.1}\" y2=\"{ya:.1}\"/><line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{yb:.1}\" y2=\"{yb:.1}\"/></g>",
                        x - 4.0,
                        x + 4.0,
                        x - 4.0,
                        x + 4.0
                    );
                }
                let _ = write!(
                    body,
                    "<circle class=\"point\" cx=\"{x:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{color}\"><title>{}</title></circle>",
                    sy(s.mean),
                    tip(v, s)
                );
            }
        }
    }

    // The search: its answer as a dotted line in every panel (labelled in the target's
    // panel) and its target as a dashed line.
    let mut note = String::new();
    if let (Some(m), XAxis::Numeric { .. }) = (marks, x_axis) {
        let plot = (left, TOP, plot_w, PLOT_H);
        let mut answer_box: Option<Bbox> = None;
        if let Some(a) = m.answer {
            let x = sx(a);
            let _ = write!(
                body,
                "<line class=\"answer\" data-v=\"{a}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP:.1}\" y2=\"{bottom_axis:.1}\"/>"
            );
            if target.is_some() {
                let label = format!("{} = {a}", m.param);
                // Beside the line, on the side with room.
                let end = x + GAP + text_width(&label, FONT) > left + plot_w;
                let lx = if end { x - GAP } else { x + GAP };
                let ly = TOP + 0.93 * FONT + 2.0;
                answer_box = Some(label_box(&label, lx, ly, end));
                if let Some(s) = variants
                    .iter()
                    .zip(stats)
                    .find(|(v, _)| v.x.parse::<f64>().ok() == Some(a))
                    .and_then(|(_, s)| s.as_ref())
                {
                    let _ = write!(
                        body,
                        "<circle class=\"answer\" cx=\"{x:.1}\" cy=\"{:.1}\" r=\"7\"/>",
                        sy(s.mean)
                    );
                }
                let _ = write!(
                    body,
                    "<text class=\"mark answer-label\" x=\"{lx:.1}\" y=\"{ly:.1}\"{}>{}</text>",
                    if end { " text-anchor=\"end\"" } else { "" },
                    esc(&label)
                );
            }
        }
        if target.is_some() {
            let s = m.search;
            let y = sy(s.bound);
            let _ = write!(
                body,
                "<line class=\"target\" data-v=\"{}\" x1=\"{left:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>",
                s.bound,
                left + plot_w
            );
            let label = format!(
                "target {} {}",
                if s.at_most { "≤" } else { "≥" },
                human(&s.figure, s.bound)
            );
            // Above the line or below it, at the left or the right: the first place inside the
            // plot that the answer's label does not cover.
            let above = y - GAP;
            let below = y + GAP + 0.93 * FONT;
            let candidates = [
                (left + plot_w - GAP, above, true),
                (left + GAP, above, false),
                (left + plot_w - GAP, below, true),
                (left + GAP, below, false),
            ];
            let inside = |b: Bbox| {
                b.0 >= plot.0
                    && b.1 >= plot.1
                    && b.0 + b.2 <= plot.0 + plot.2
                    && b.1 + b.3 <= plot.1 + plot.3 + GAP
            };
            let (lx, ly, end) = candidates
                .iter()
                .copied()
                .find(|&(x, y, end)| {
                    let b = label_box(&label, x, y, end);
                    inside(b) && answer_box.is_none_or(|a| !overlap(a, b))
                })
                .unwrap_or(candidates[0]);
            let _ = write!(
                body,
                "<text class=\"mark target-label\" x=\"{lx:.1}\" y=\"{ly:.1}\"{}>{}</text>",
                if end { " text-anchor=\"end\"" } else { "" },
                esc(&label)
            );
            note = match m.answer {
                Some(a) => format!(
                    "<p>Target met from {} = {a} ({} {} seeds).</p>",
                    esc(m.param),
                    if s.over_mean {
                        "mean over"
                    } else {
                        "every one of"
                    },
                    m.seeds
                ),
                None => format!(
                    "<p>No {} in {}..{} meets the target.</p>",
                    esc(m.param),
                    s.min,
                    s.max
                ),
            };
        }
    }
    format!(
        "<section class=\"panel\" style=\"width:{width}px\"><h2>{}</h2><svg class=\"panel\" data-figure=\"{}\" data-x=\"{}\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"img\">{body}</svg>{note}</section>\n",
        heading(figure),
        esc(figure),
        match x_axis {
            XAxis::Numeric { .. } => "numeric",
            XAxis::Categories { .. } => "categories",
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_axes_have_at_least_four_ticks_in_1_2_5_steps() {
        assert_eq!(
            extended_ticks(0.0, 2.45, false),
            [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
        );
        assert_eq!(extended_ticks(0.0, 1.0, true), [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(
            extended_ticks(0.0, 98.0, true),
            [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(extended_ticks(1.2, 1.4, false).len(), 5);
        assert_eq!(
            inner_ticks(128.0, 256.0),
            [140.0, 160.0, 180.0, 200.0, 220.0, 240.0]
        );
        assert_eq!(inner_ticks(128.0, 512.0), [200.0, 300.0, 400.0, 500.0]);
        assert!(inner_ticks(1.0, 2.0).len() >= 4);
    }

    #[test]
    fn axes_start_at_zero_for_counts_shares_and_durations_in_their_units() {
        let labels = |s: Scale, lo, hi| -> Vec<String> {
            y_axis(s, lo, hi).0.into_iter().map(|t| t.label).collect()
        };
        let wait = scale("clusterQueues[a].waitSecondsInclPending.p95", &[7740.0]);
        assert_eq!(wait, Scale::Duration);
        assert_eq!(
            labels(wait, 6000.0, 9000.0),
            ["0", "0.5 h", "1.0 h", "1.5 h", "2.0 h", "2.5 h"]
        );
        let share = scale("clusterQueues[a].gpuShare", &[0.63]);
        assert_eq!(
            labels(share, 0.62, 0.71),
            ["0", "20 %", "40 %", "60 %", "80 %"]
        );
        assert_eq!(scale("workloads.finished", &[80.0, 81.0]), Scale::Count);
        assert_eq!(scale("waitSeconds.count", &[80.0]), Scale::Count);
        assert_eq!(scale("boundedSlowdown.p90", &[1.7]), Scale::Other);
        assert_eq!(labels(Scale::Other, 1.62, 1.74)[0], "1.60");
    }

    #[test]
    fn category_names_lose_their_shared_start_and_are_cut_in_the_middle() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            common_start(&names(&["ml-team-quota-112", "ml-team-quota-124"])),
            "ml-team-quota-"
        );
        // Only up to a break, only when every name goes on past it.
        assert_eq!(common_start(&names(&["baseline", "base"])), "");
        assert_eq!(common_start(&names(&["fifo-a", "fifo-"])), "");
        assert_eq!(common_start(&names(&["one"])), "");
        let cut = truncate_middle("ml-team-quota-of-112-gpus-with-WWW-12", 80.0);
        assert!(
            cut.starts_with("ml-") && cut.ends_with("-12") && cut.contains('…'),
            "{cut}"
        );
        assert!(text_width(&cut, FONT) <= 80.0);
        assert_eq!(truncate_middle("short", 80.0), "short");
        let lines = wrap("strict-fifo-everywhere-with-a-long-name", 60.0, 3);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            lines.iter().all(|l| text_width(l, FONT) <= 60.0),
            "{lines:?}"
        );
        assert!(
            lines[0].starts_with("strict-") && lines[2].ends_with('…'),
            "{lines:?}"
        );
        assert_eq!(wrap("a-b", 60.0, 3), ["a-b"]);
    }
}
