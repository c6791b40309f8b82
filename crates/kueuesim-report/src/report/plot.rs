//! The drawing kit of report.html: the palette, a plot frame with its axes and grid, SVG
//! paths, legends, and the bounds that keep the page small on any trace (min/max-preserving
//! buckets for time series, at most `MAX_LINES` series a plot).

use std::fmt::Write;
use std::ops::Range;

use super::axis::Tick;

pub(super) const W: f64 = 720.0;
pub(super) const H: f64 = 260.0;
const PAD_L: f64 = 56.0;
const PAD_B: f64 = 30.0;
// Room above the top tick for the y axis label.
const PAD_T: f64 = 26.0;
const PAD_R: f64 = 16.0;

/// Buckets of a time series: the plot is ~650 px wide, so 600 buckets (at most two points
/// each, their min and max) lose nothing the eye can see, and a series costs at most ~15 KB
/// whatever the run's length.
pub(super) const BUCKETS: usize = 600;

/// Series a line plot draws; the rest are folded into one "others" series. 24 lets the
/// dashed second round of the palette show while keeping a plot readable and bounded.
pub(super) const MAX_LINES: usize = 24;

/// Areas a stacked plot draws (the palette's distinct colours; dashes do not show on fills).
pub(super) const MAX_AREAS: usize = PALETTE.len();

/// 20 colours, the first 8 colour-blind safe (Okabe and Ito's set, black left for the
/// reference lines and yellow darkened to read on white), the rest picked to stay apart
/// from those and from each other; the 20th, grey, is the "others" series of a plot with
/// more than 20 queues.
const PALETTE: [&str; 20] = [
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#c9a800", "#882255",
    "#332288", "#999933", "#44aa99", "#8c564b", "#aa4499", "#17becf", "#7cb342", "#f781bf",
    "#b15928", "#6a3d9a", "#fb9a99", "#8c8c8c",
];

/// Dash patterns for each round through the palette: solid, then dashed, dotted, dash-dot.
const DASHES: [&str; 4] = ["", "6 3", "2 2", "8 3 2 3"];

/// How series `k` is drawn: a colour, and past the palette's length a dash pattern.
#[derive(Clone, Copy)]
pub(super) struct Style {
    pub(super) color: &'static str,
    pub(super) dash: &'static str,
}

pub(super) fn style(k: usize) -> Style {
    Style {
        color: PALETTE[k % PALETTE.len()],
        dash: DASHES[(k / PALETTE.len()) % DASHES.len()],
    }
}

/// The colour of reference lines (capacity, nominal quota), apart from every series colour.
pub(super) const REF: &str = "#222";

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A plot frame: data extents, ticks, and the mapping to SVG coordinates.
pub(super) struct Frame {
    pub(super) x_max: f64,
    pub(super) y_max: f64,
    pub(super) x_ticks: Vec<Tick>,
    pub(super) y_ticks: Vec<Tick>,
}

impl Frame {
    /// A frame whose y axis ends at its last tick.
    pub(super) fn new(x_max: f64, x_ticks: Vec<Tick>, y_ticks: Vec<Tick>) -> Frame {
        let y_max = y_ticks.last().map_or(1.0, |t| t.0);
        Frame {
            x_max,
            y_max,
            x_ticks,
            y_ticks,
        }
    }
    pub(super) fn x(&self, v: f64) -> f64 {
        PAD_L + v / self.x_max.max(1e-9) * (W - PAD_L - PAD_R)
    }
    pub(super) fn y(&self, v: f64) -> f64 {
        H - PAD_B - v / self.y_max.max(1e-9) * (H - PAD_B - PAD_T)
    }
    pub(super) fn right(&self) -> f64 {
        W - PAD_R
    }
    /// Axes, grid lines at the y ticks, tick labels and the axis labels.
    pub(super) fn axes(&self, x_label: &str, y_label: &str) -> String {
        let mut s = String::new();
        let b = H - PAD_B;
        for (v, label) in &self.y_ticks {
            let y = self.y(*v);
            if *v > 0.0 {
                let _ = write!(
                    s,
                    r##"<line class="grid" x1="{PAD_L}" y1="{y:.1}" x2="{}" y2="{y:.1}"/>"##,
                    W - PAD_R
                );
            }
            let _ = write!(
                s,
                r##"<text class="tick" x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                PAD_L - 6.0,
                y + 3.5,
                esc(label)
            );
        }
        for (v, label) in &self.x_ticks {
            let x = self.x(*v);
            let _ = write!(
                s,
                r##"<line class="axis" x1="{x:.1}" y1="{b}" x2="{x:.1}" y2="{}"/><text class="tick" x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
                b + 4.0,
                b + 15.0,
                esc(label)
            );
        }
        let _ = write!(
            s,
            r##"<line class="axis" x1="{PAD_L}" y1="{b}" x2="{r}" y2="{b}"/><line class="axis" x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{b}"/><text class="label" x="{r}" y="{}" text-anchor="end">{}</text><text class="label" x="4" y="12">{}</text>"##,
            H - 2.0,
            esc(x_label),
            esc(y_label),
            r = W - PAD_R,
        );
        s
    }
}

/// An SVG path through `points` (already in SVG coordinates), to 0.1 px; the middle points
/// of a horizontal run are left out (a queue that stays at 4 for a day is two points).
pub(super) fn path(points: impl IntoIterator<Item = (f64, f64)>) -> String {
    let pts: Vec<(f64, f64)> = points
        .into_iter()
        .map(|(x, y)| ((x * 10.0).round() / 10.0, (y * 10.0).round() / 10.0))
        .collect();
    let mut d = String::new();
    for (i, &(x, y)) in pts.iter().enumerate() {
        let flat_run = i > 0 && i + 1 < pts.len() && pts[i - 1].1 == y && pts[i + 1].1 == y;
        if flat_run {
            continue;
        }
        let _ = write!(d, "{}{x:.1},{y:.1}", if i == 0 { "M" } else { "L" });
    }
    d
}

/// `n` samples in at most `BUCKETS` consecutive index ranges of near-equal length (one a
/// sample when there are fewer).
pub(super) fn buckets(n: usize) -> Vec<Range<usize>> {
    let k = n.min(BUCKETS);
    (0..k).map(|b| b * n / k..(b + 1) * n / k).collect()
}

/// The samples of `values` (read once, in order; `buckets` are consecutive from 0) a line
/// keeps, with their values: per bucket its minimum and maximum (the first sample of each),
/// in time order (one when they are the same sample), so a spike survives any downsampling.
pub(super) fn min_max(
    values: impl IntoIterator<Item = f64>,
    buckets: &[Range<usize>],
) -> Vec<(usize, f64)> {
    let mut values = values.into_iter();
    let mut keep = Vec::with_capacity(buckets.len() * 2);
    for r in buckets {
        let mut lo: Option<(usize, f64)> = None;
        let mut hi: Option<(usize, f64)> = None;
        for (i, v) in r.clone().zip(values.by_ref()) {
            if lo.is_none_or(|(_, l)| v < l) {
                lo = Some((i, v));
            }
            if hi.is_none_or(|(_, h)| v > h) {
                hi = Some((i, v));
            }
        }
        let (Some(lo), Some(hi)) = (lo, hi) else {
            continue;
        };
        keep.push(if lo.0 <= hi.0 { lo } else { hi });
        if lo.0 != hi.0 {
            keep.push(if lo.0 <= hi.0 { hi } else { lo });
        }
    }
    keep
}

/// The bucket means of `values` (read once, in order; `buckets` are consecutive from 0):
/// for a stack, so that the layers still add up to the total (means add; minima and maxima
/// do not).
pub(super) fn means(values: impl IntoIterator<Item = f64>, buckets: &[Range<usize>]) -> Vec<f64> {
    let mut values = values.into_iter();
    buckets
        .iter()
        .map(|r| values.by_ref().take(r.len()).sum::<f64>() / r.len().max(1) as f64)
        .collect()
}

/// Which of `n` series a plot draws on its own, at most `max` with the last slot for the
/// rest when there are more: the `max - 1` ranking first by `rank` (largest first, ties by
/// index), kept in their original order so colours follow the input's order.
pub(super) fn keep_top(n: usize, max: usize, rank: impl Fn(usize) -> f64) -> Vec<usize> {
    if n <= max {
        return (0..n).collect();
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| rank(b).total_cmp(&rank(a)).then(a.cmp(&b)));
    let mut kept = order[..max - 1].to_vec();
    kept.sort_unstable();
    kept
}

/// A legend entry: a line (with its dash), a filled area, or a dot.
pub(super) enum Mark {
    Line(Style),
    Area(&'static str),
    /// A reference line: dark, with this dash.
    Ref(&'static str),
}

pub(super) fn legend(keys: &[(String, Mark)]) -> String {
    let mut l = String::new();
    for (name, mark) in keys {
        let swatch = match mark {
            Mark::Line(s) => format!(
                r##"<line x1="0" y1="5" x2="22" y2="5" stroke="{}" stroke-width="2.5" stroke-dasharray="{}"/>"##,
                s.color, s.dash
            ),
            Mark::Ref(dash) => format!(
                r##"<line x1="0" y1="5" x2="22" y2="5" stroke="{REF}" stroke-width="1.5" stroke-dasharray="{dash}"/>"##
            ),
            Mark::Area(color) => {
                format!(r##"<rect x="4" y="0" width="14" height="10" fill="{color}"/>"##)
            }
        };
        let _ = write!(
            l,
            r##"<span class="key"><svg class="swatch" width="22" height="10">{swatch}</svg>{}</span>"##,
            esc(name)
        );
    }
    l
}

/// One panel: a heading, the plot, its legend and a note saying how to read it.
pub(super) fn section(
    id: &str,
    title: &str,
    height: f64,
    body: &str,
    keys: &[(String, Mark)],
    note: &str,
) -> String {
    let note = if note.is_empty() {
        String::new()
    } else {
        format!(r##"<p class="note">{}</p>"##, esc(note))
    };
    format!(
        r##"<section><h2>{}</h2><svg class="plot" id="{id}" viewBox="0 0 {W} {height:.0}" width="{W}" height="{height:.0}" role="img">{body}</svg><div class="legend">{}</div>{note}</section>"##,
        esc(title),
        legend(keys)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_palette_has_twenty_distinct_colours_then_dashes() {
        let mut colours: Vec<&str> = PALETTE.to_vec();
        colours.sort_unstable();
        colours.dedup();
        assert_eq!(colours.len(), 20);
        assert!(!PALETTE.contains(&REF));
        assert_eq!(style(3).dash, "");
        assert_eq!((style(20).color, style(20).dash), (PALETTE[0], "6 3"));
        assert_eq!(style(45).dash, "2 2");
    }

    #[test]
    fn min_max_buckets_keep_every_spike_and_bound_the_points() {
        let mut v = vec![1.0; 100_000];
        v[31_337] = 50.0;
        v[77_000] = -3.0;
        let b = buckets(v.len());
        assert_eq!(b.len(), BUCKETS);
        assert_eq!(b.first().map(|r| r.start), Some(0));
        assert_eq!(b.last().map(|r| r.end), Some(v.len()));
        let keep: Vec<usize> = min_max(v.iter().copied(), &b)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        assert!(keep.len() <= 2 * BUCKETS);
        assert!(keep.contains(&31_337) && keep.contains(&77_000));
        assert!(keep.windows(2).all(|w| w[0] < w[1]), "in time order");
        // Short series are drawn whole.
        assert_eq!(
            min_max([3.0, 1.0, 2.0], &buckets(3)),
            [(0, 3.0), (1, 1.0), (2, 2.0)]
        );
    }

    #[test]
    fn reading_a_series_once_keeps_what_indexing_it_kept() {
        // The slice versions these replaced, as references: the streamed ones must pick the
        // same samples and the same means, bit for bit, ties and all.
        fn min_max_of(values: &[f64], buckets: &[Range<usize>]) -> Vec<usize> {
            let mut keep = Vec::new();
            for r in buckets {
                let (mut lo, mut hi) = (r.start, r.start);
                for i in r.clone() {
                    if values[i] < values[lo] {
                        lo = i;
                    }
                    if values[i] > values[hi] {
                        hi = i;
                    }
                }
                keep.push(lo.min(hi));
                if lo != hi {
                    keep.push(lo.max(hi));
                }
            }
            keep
        }
        fn means_of(values: &[f64], buckets: &[Range<usize>]) -> Vec<f64> {
            buckets
                .iter()
                .map(|r| values[r.clone()].iter().sum::<f64>() / r.len().max(1) as f64)
                .collect()
        }
        for n in [1, 7, 600, 601, 5_000, 123_457] {
            // Steps with ties, and thirds so that the order of a sum shows in its bits.
            let v: Vec<f64> = (0..n)
                .map(|i| ((i * 7919) % 13 / 3) as f64 / 3.0 + (i / 1000) as f64)
                .collect();
            let b = buckets(n);
            let kept = min_max(v.iter().copied(), &b);
            let idx: Vec<usize> = kept.iter().map(|&(i, _)| i).collect();
            assert_eq!(idx, min_max_of(&v, &b), "n = {n}");
            assert!(kept.iter().all(|&(i, x)| x.to_bits() == v[i].to_bits()));
            let (m, want) = (means(v.iter().copied(), &b), means_of(&v, &b));
            assert_eq!(
                m.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "n = {n}"
            );
        }
    }

    #[test]
    fn bucket_means_of_a_stack_add_up_to_the_means_of_its_total() {
        let a: Vec<f64> = (0..5000).map(|i| f64::from(i % 7)).collect();
        let c: Vec<f64> = (0..5000).map(|i| f64::from(i % 13)).collect();
        let total: Vec<f64> = a.iter().zip(&c).map(|(x, y)| x + y).collect();
        let b = buckets(5000);
        let (ma, mc, mt) = (means(a, &b), means(c, &b), means(total, &b));
        for i in 0..b.len() {
            assert!((ma[i] + mc[i] - mt[i]).abs() < 1e-9);
        }
    }

    #[test]
    fn flat_runs_of_a_path_are_two_points() {
        let d = path([(0.0, 5.0), (1.0, 5.0), (2.0, 5.0), (3.0, 7.0), (4.0, 7.0)]);
        assert_eq!(d, "M0.0,5.0L2.0,5.0L3.0,7.0L4.0,7.0");
    }

    #[test]
    fn keep_top_keeps_the_largest_in_input_order() {
        let peak = [5.0, 1.0, 9.0, 3.0, 7.0];
        assert_eq!(keep_top(5, 5, |i| peak[i]), [0, 1, 2, 3, 4]);
        assert_eq!(keep_top(5, 3, |i| peak[i]), [2, 4]);
    }
}
