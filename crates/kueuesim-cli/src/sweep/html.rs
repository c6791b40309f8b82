//! `sweep.html`: one self-contained page (inline SVG, no scripts, no network) with a plot per
//! kept figure against the sweep's first parameter: the mean over seeds, a band for its 95 %
//! confidence interval, and a line per value of the other parameters.

use std::fmt::Write as _;

use kueuesim_report::figures::{Stats, human};

use super::run::Row;

const W: f64 = 560.0;
const H: f64 = 300.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 50.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];
/// At most this many figures are plotted (sweep.csv has them all).
const MAX_PLOTS: usize = 24;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One variant's place on the plots: x (its first parameter's value), its series (the other
/// parameters' values) and its rows.
struct Point<'a> {
    x_label: String,
    series: String,
    rows: Vec<&'a Row>,
}

/// The page for `rows` (canonical order) and the kept figure `columns`.
pub(crate) fn sweep_html(
    name: &str,
    params: &[String],
    columns: &[String],
    rows: &[Row],
) -> String {
    let mut points: Vec<Point<'_>> = Vec::new();
    for r in rows {
        match points.last_mut() {
            Some(p) if p.rows[0].variant == r.variant => p.rows.push(r),
            _ => {
                let (x_label, series) = if params.is_empty() {
                    (r.variant.clone(), String::new())
                } else {
                    let others: Vec<String> = params
                        .iter()
                        .zip(&r.values)
                        .skip(1)
                        .map(|(p, v)| format!("{p}={v}"))
                        .collect();
                    (r.values[0].clone(), others.join(","))
                };
                points.push(Point {
                    x_label,
                    series,
                    rows: vec![r],
                });
            }
        }
    }
    // x: the values as numbers when they all are, else evenly spaced in first-seen order.
    let mut xs: Vec<String> = Vec::new();
    for p in &points {
        if !xs.contains(&p.x_label) {
            xs.push(p.x_label.clone());
        }
    }
    let numeric: Option<Vec<f64>> = xs.iter().map(|x| x.parse::<f64>().ok()).collect();
    let x_of = |label: &str| -> f64 {
        match &numeric {
            Some(v) => v[xs.iter().position(|x| x == label).unwrap_or(0)],
            None => xs.iter().position(|x| x == label).unwrap_or(0) as f64,
        }
    };
    let (x0, x1) = xs
        .iter()
        .map(|l| x_of(l))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    let (x0, x1) = if x1 > x0 {
        (x0, x1)
    } else {
        (x0 - 1.0, x0 + 1.0)
    };
    let mut series: Vec<String> = Vec::new();
    for p in &points {
        if !series.contains(&p.series) {
            series.push(p.series.clone());
        }
    }
    let x_name = params.first().map_or("variant", String::as_str);
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sweep {}</title>\n<style>body{{font-family:system-ui,sans-serif;margin:2em}}section{{display:inline-block;margin:0 1em 1em 0}}h2{{font-size:14px;font-family:monospace}}svg text{{font-size:11px}}.legend span{{margin-right:1em}}</style></head><body>\n<h1>sweep {}</h1>\n<p>Mean over seeds against {}; the band is the 95 % confidence interval of the mean (Student's t).</p>\n",
        esc(name),
        esc(name),
        esc(x_name)
    );
    if series.len() > 1 || !series[0].is_empty() {
        out.push_str("<p class=\"legend\">");
        for (i, s) in series.iter().enumerate() {
            let _ = write!(
                out,
                "<span style=\"color:{}\">&#9632; {}</span>",
                COLORS[i % COLORS.len()],
                esc(s)
            );
        }
        out.push_str("</p>\n");
    }
    for figure in columns.iter().take(MAX_PLOTS) {
        let stats: Vec<Option<Stats>> = points
            .iter()
            .map(|p| Stats::of(p.rows.iter().map(|r| r.figure(figure))))
            .collect();
        let (mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY);
        for s in stats.iter().flatten() {
            let (a, b) = s.interval();
            y0 = y0.min(a);
            y1 = y1.max(b);
        }
        if !y0.is_finite() {
            continue;
        }
        if y1 <= y0 {
            (y0, y1) = (y0 - 1.0, y1 + 1.0);
        }
        let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * (W - LEFT - RIGHT);
        let sy = |y: f64| TOP + (y1 - y) / (y1 - y0) * (H - TOP - BOTTOM);
        let mut body = format!(
            "<line x1=\"{LEFT}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#888\"/><line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{b}\" stroke=\"#888\"/>",
            b = H - BOTTOM,
            r = W - RIGHT
        );
        for (v, anchor) in [(y0, H - BOTTOM), (y1, TOP)] {
            let _ = write!(
                body,
                "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                LEFT - 4.0,
                anchor + 4.0,
                esc(&human(figure, v))
            );
        }
        for l in &xs {
            let _ = write!(
                body,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                sx(x_of(l)),
                H - BOTTOM + 16.0,
                esc(l)
            );
        }
        let _ = write!(
            body,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            (LEFT + W - RIGHT) / 2.0,
            H - 10.0,
            esc(x_name)
        );
        for (si, sname) in series.iter().enumerate() {
            let color = COLORS[si % COLORS.len()];
            let mut pts: Vec<(f64, &Stats)> = points
                .iter()
                .zip(&stats)
                .filter(|(p, _)| p.series == *sname)
                .filter_map(|(p, s)| s.as_ref().map(|s| (x_of(&p.x_label), s)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            if pts.is_empty() {
                continue;
            }
            let upper: Vec<String> = pts
                .iter()
                .map(|(x, s)| format!("{:.1},{:.1}", sx(*x), sy(s.interval().1)))
                .collect();
            let lower: Vec<String> = pts
                .iter()
                .rev()
                .map(|(x, s)| format!("{:.1},{:.1}", sx(*x), sy(s.interval().0)))
                .collect();
            let _ = write!(
                body,
                "<polygon points=\"{} {}\" fill=\"{color}\" fill-opacity=\"0.15\" stroke=\"none\"/>",
                upper.join(" "),
                lower.join(" ")
            );
            let line: Vec<String> = pts
                .iter()
                .map(|(x, s)| format!("{:.1},{:.1}", sx(*x), sy(s.mean)))
                .collect();
            let _ = write!(
                body,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"/>",
                line.join(" ")
            );
            for (x, s) in &pts {
                let _ = write!(
                    body,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{}</title></circle>",
                    sx(*x),
                    sy(s.mean),
                    esc(&format!("{} (n = {})", human(figure, s.mean), s.n))
                );
            }
        }
        let _ = writeln!(
            out,
            "<section><h2>{}</h2><svg viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\">{body}</svg></section>",
            esc(figure)
        );
    }
    if columns.len() > MAX_PLOTS {
        let _ = writeln!(
            out,
            "<p>{} more figures in sweep.csv (keep fewer with spec.figures).</p>",
            columns.len() - MAX_PLOTS
        );
    }
    out.push_str("</body></html>\n");
    out
}
