//! `--plot DIR`: SVG plots of a result, drawn with `plotters`' SVG backend (docs/outputs.md).
//!
//! Rendered from the result's JSON form. Each plot is a [`Chart`] (title, axes with units, lines) built
//! from the document by one function per kind of plot, then drawn by [`draw`]; a new kind of plot (the
//! scenario's `[[plot]]` tables, later) only has to build a `Chart`.

use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;

use crate::names;

/// One plot: its file stem, its title, and the SVG text.
#[derive(Debug, Clone)]
pub struct Plot {
    pub name: String,
    pub title: String,
    pub svg: String,
    /// The point whose time series or CDF it draws (`points[i]`); `None` for a plot across points.
    pub point: Option<usize>,
}

/// What to draw: lines of (x, y) points on axes named with their units.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    /// Label of each integer x position when x is categorical (sweeps over non-numeric values).
    pub x_categories: Option<Vec<String>>,
    /// A logarithmic x axis (latencies spanning decades); x values must be positive.
    pub log_x: bool,
    /// The y axis' range; `None`: from the data (from 0 for non-negative values).
    pub y_range: Option<(f64, f64)>,
    /// An x span shaded, named in the legend (the measurement window on a time axis).
    pub band: Option<(f64, f64, String)>,
    /// The point the chart is about (its time series, its CDF); `None` for a chart across points.
    pub point: Option<usize>,
}

/// One line of a chart.
#[derive(Debug, Clone, Default)]
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Draw dashed, in the colour of the line before it (ssthresh beside its cwnd).
    pub dashed: bool,
    /// Mark each point (few points: sweeps).
    pub markers: bool,
    /// Error bars `(x, low, high)` around points, e.g. confidence intervals.
    pub errors: Vec<(f64, f64, f64)>,
    /// Figures from elsewhere (a publication's): crosses at the points, no line between them.
    pub published: bool,
    /// Drawn in the colour of the chart's line at this index (a published series beside the lab's line
    /// it is compared with) rather than the next one.
    pub colour_of: Option<usize>,
    /// Published crosses drawn upright (+) rather than diagonal (×): figures from a second source (a
    /// kernel's measurement beside a report's), which share the colour of the lab's line they go with.
    pub upright: bool,
    /// A sweep line's swept keys and the value each has on every point of it (its lines axis, and any
    /// other swept key that is not the x axis): what a published series' `where` is matched against.
    pub at: Vec<(String, Value)>,
}
/// Tableau's ten colours: distinct, and readable on white.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Size of every plot, pixels (the SVG's width and height).
pub const SIZE: (u32, u32) = (960, 540);

/// Most lines of one kind in a time-series plot; more ends than that are left out, with a note.
const MAX_ENDS: usize = 8;

/// Most points whose latency CDFs are drawn together in `sweep-cdf.svg`.
const MAX_CDF_OVERLAY: usize = 6;

/// Range of `values` with a margin, from 0 when every value is non-negative.
fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) =
        values.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero && lo >= 0.0 {
        lo = 0.0;
        hi = if hi > 0.0 { hi * 1.08 } else { 1.0 };
        return (lo, hi);
    }
    let pad = if hi > lo { (hi - lo) * 0.05 } else { lo.abs().max(1.0) * 0.5 };
    lo -= pad;
    hi += pad;
    (lo, hi)
}

/// The x axis' range: categories around their indices; time-like axes from the first to the last value;
/// sweeps with a margin; a logarithmic axis from a little below the least to a little above the greatest.
fn x_range(c: &Chart) -> (f64, f64) {
    if let Some(cats) = &c.x_categories {
        return (-0.5, cats.len() as f64 - 0.5);
    }
    let xs = || c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).filter(|x| x.is_finite());
    let (lo, hi) = xs().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(x), h.max(x)));
    if c.log_x {
        return if lo.is_finite() && lo > 0.0 { (nice_below(lo / 1.1), nice_above(hi * 1.1)) } else { (1.0, 10.0) };
    }
    if lo < hi && !c.lines.iter().any(|l| l.markers) {
        (lo, hi)
    } else {
        range(xs(), false)
    }
}

/// The largest 1, 2 or 5 times a power of ten at or below `v` (> 0): where a log axis starts.
fn nice_below(v: f64) -> f64 {
    let d = 10f64.powf(v.log10().floor());
    [5.0, 2.0, 1.0].into_iter().map(|m| m * d).find(|&n| n <= v).unwrap_or(d)
}

/// The smallest 1, 2 or 5 times a power of ten at or above `v` (> 0): where a log axis ends.
fn nice_above(v: f64) -> f64 {
    let d = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * d).find(|&n| n >= v).unwrap_or(10.0 * d)
}

/// Height of the plotting region below the title and above the legend, px (with the title's first line
/// and no legend, a plot is [`SIZE`]).
const CHART_HEIGHT: u32 = SIZE.1 - TITLE_LINE - 14;

/// Height of one line of the title, px; its font size.
const TITLE_LINE: u32 = 26;
const TITLE_FONT: u32 = 22;

/// Most characters on one line of the title; a longer title is wrapped after a comma or a space.
const TITLE_CHARS: usize = 84;

/// The legend's font size and row height, px, and the width estimated for one character of its text
/// (DejaVu Sans, the sans-serif of Debian's browsers, averages about 0.58 em).
const LEGEND_FONT: u32 = 13;
const LEGEND_ROW: u32 = 22;
const LEGEND_CHAR: f64 = 7.2;

/// Width of a legend entry's sample (line, cross or shading) and the gap after it, px.
const SWATCH: u32 = 30;

/// Draws `c` as SVG text: the title (wrapped when long), the axes and the lines, and below the plotting
/// area the legend, so that it never covers a point, a line or a published figure. A line with no label
/// has no legend entry, and a chart whose lines have no labels has no legend.
pub fn draw(c: &Chart) -> Result<String, String> {
    let title = wrap(&c.title, TITLE_CHARS);
    let title_h = 14 + TITLE_LINE * title.len() as u32;
    let legend = Legend::layout(legend_entries(c), SIZE.0);
    let height = title_h + CHART_HEIGHT + legend.height;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (SIZE.0, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let font = TextStyle::from(("sans-serif", TITLE_FONT).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        for (i, line) in title.iter().enumerate() {
            let at = (SIZE.0 as i32 / 2, 12 + (i as u32 * TITLE_LINE) as i32);
            root.draw(&Text::new(line.as_str(), at, font.clone())).map_err(|e| e.to_string())?;
        }
        let area = root.clone().shrink((0, title_h), (SIZE.0, CHART_HEIGHT));
        let (x0, x1) = x_range(c);
        let ys =
            c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.1).chain(l.errors.iter().flat_map(|e| [e.1, e.2])));
        let (y0, y1) = c.y_range.unwrap_or_else(|| range(ys, true));
        let mut builder = ChartBuilder::on(&area);
        builder.margin_top(6).margin_bottom(4).margin_left(18).margin_right(26);
        builder.x_label_area_size(52).y_label_area_size(86);
        if c.log_x {
            // Labels at 1, 2, 5 × 10^k, grid lines at every integer × 10^k: plotters' own log ticks skip the
            // part of the axis below its first power of ten.
            let ticks = |ms: &[f64]| {
                let mut d = 10f64.powf(x0.log10().floor());
                let mut out = Vec::new();
                while d <= x1 {
                    out.extend(ms.iter().map(|m| m * d).filter(|&v| v >= x0 * (1.0 - 1e-9) && v <= x1 * (1.0 + 1e-9)));
                    d *= 10.0;
                }
                out
            };
            let bold = ticks(&[1.0, 2.0, 5.0]);
            let light = ticks(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
            let x = (x0..x1).log_scale().with_key_points(bold).with_light_points(light);
            let chart = builder.build_cartesian_2d(x, y0..y1).map_err(|e| e.to_string())?;
            paint(chart, c, (x0, x1), (y0, y1))?;
        } else {
            let chart = builder.build_cartesian_2d(x0..x1, y0..y1).map_err(|e| e.to_string())?;
            paint(chart, c, (x0, x1), (y0, y1))?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    let end = svg.rfind("</svg>").ok_or("the SVG backend wrote no </svg>")?;
    svg.insert_str(end, &legend.svg(title_h + CHART_HEIGHT));
    Ok(svg)
}

/// `text` in lines of at most `width` characters, broken after ", " or at a space where it can be.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut rest = text.trim();
    while rest.chars().count() > width {
        let cut = rest.char_indices().nth(width).map_or(rest.len(), |(i, _)| i);
        let head = &rest[..cut];
        let at = head.rfind(", ").map(|i| i + 1).or_else(|| head.rfind(' ')).filter(|&i| i > width / 3).unwrap_or(cut);
        lines.push(rest[..at].trim_end().to_string());
        rest = rest[at..].trim_start();
    }
    lines.push(rest.to_string());
    lines
}

/// The colour of each line: the next of [`PALETTE`], a dashed line's that of the line before it, or that
/// of the line `colour_of` names.
pub fn colours(c: &Chart) -> Vec<RGBColor> {
    let mut next = 0usize;
    let mut out = Vec::with_capacity(c.lines.len());
    for (i, l) in c.lines.iter().enumerate() {
        if !(l.dashed && i > 0) {
            next = if i == 0 { 0 } else { next + 1 };
        }
        out.push(PALETTE[next % PALETTE.len()]);
    }
    // The colour the named line got, not the palette's entry at its index: a dashed line or a reference
    // before it shifts the two apart.
    for (i, l) in c.lines.iter().enumerate() {
        if let Some(k) = l.colour_of.filter(|&k| k < out.len()) {
            out[i] = out[k];
        }
    }
    out
}

/// What a legend entry shows before its label.
#[derive(Debug, Clone, Copy)]
enum Swatch {
    Line {
        colour: RGBColor,
        dashed: bool,
        marker: bool,
    },
    /// A published series' cross; upright (+) for a second source's (`Line::upright`).
    Cross(RGBColor, bool),
    Band,
}

/// The legend's entries: each labelled line (empty labels have none), and the shaded measurement window.
fn legend_entries(c: &Chart) -> Vec<(String, Swatch)> {
    let colours = colours(c);
    let mut out: Vec<(String, Swatch)> = c
        .lines
        .iter()
        .zip(colours)
        .filter(|(l, _)| !l.label.trim().is_empty())
        .map(|(l, colour)| {
            let swatch = if l.published {
                Swatch::Cross(colour, l.upright)
            } else {
                Swatch::Line { colour, dashed: l.dashed, marker: l.markers }
            };
            (l.label.clone(), swatch)
        })
        .collect();
    if let Some((_, _, label)) = c.band.as_ref().filter(|b| !b.2.is_empty()) {
        // Only beside lines the legend names: a lone unlabelled line needs no legend for the band either.
        if !out.is_empty() {
            out.push((label.clone(), Swatch::Band));
        }
    }
    out
}

/// The legend laid out below the plotting area: entries in rows, in as many columns as fit the width (at
/// most four), each column as wide as its longest label, the whole centred.
struct Legend {
    entries: Vec<(String, Swatch)>,
    /// The left edge of each column, from the legend's left edge, and the legend's width, px.
    columns: Vec<u32>,
    legend_width: u32,
    /// Most characters of a label in each column (longer labels are cut with an ellipsis).
    max_chars: Vec<usize>,
    /// Height added below the plotting area, px (0 without entries).
    height: u32,
    width: u32,
}

/// The gap between legend columns, and the legend's padding, px.
const LEGEND_GAP: u32 = 26;
const LEGEND_PAD: u32 = 12;

impl Legend {
    fn layout(entries: Vec<(String, Swatch)>, width: u32) -> Legend {
        let empty =
            Legend { entries: Vec::new(), columns: vec![0], legend_width: 0, max_chars: vec![0], height: 0, width };
        if entries.is_empty() {
            return empty;
        }
        let room = width - 40;
        let max_text = room - 2 * LEGEND_PAD - SWATCH - 4;
        let text_w = |s: &str| ((s.chars().count() as f64 * LEGEND_CHAR).ceil() as u32).min(max_text);
        for n in (1..=entries.len().min(4)).rev() {
            let rows = entries.len().div_ceil(n);
            let n = entries.len().div_ceil(rows);
            let texts: Vec<u32> = (0..n)
                .map(|col| entries.iter().skip(col).step_by(n).map(|(l, _)| text_w(l)).max().unwrap_or(0))
                .collect();
            let total =
                texts.iter().map(|t| SWATCH + 4 + t).sum::<u32>() + LEGEND_GAP * (n as u32 - 1) + 2 * LEGEND_PAD;
            if total <= room || n == 1 {
                let mut columns = Vec::new();
                let mut x = LEGEND_PAD;
                for t in &texts {
                    columns.push(x);
                    x += SWATCH + 4 + t + LEGEND_GAP;
                }
                let max_chars = texts.iter().map(|t| (*t as f64 / LEGEND_CHAR).floor() as usize).collect();
                let height = 8 + rows as u32 * LEGEND_ROW + 12;
                return Legend { entries, columns, legend_width: total.min(room), max_chars, height, width };
            }
        }
        empty
    }

    /// The legend as an SVG group `<g class="legend">` whose first element is its frame, at `top`.
    fn svg(&self, top: u32) -> String {
        if self.entries.is_empty() {
            return String::new();
        }
        let ncols = self.columns.len();
        let rows = self.entries.len().div_ceil(ncols) as u32;
        let w = self.legend_width;
        let x0 = (self.width - w) / 2;
        let y0 = top + 4;
        let h = rows * LEGEND_ROW + 8;
        let hex = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        let mut out = format!(
            "<g class=\"legend\">\n<rect x=\"{x0}\" y=\"{y0}\" width=\"{w}\" height=\"{h}\" fill=\"#FFFFFF\" \
             stroke=\"#C8C8C8\" stroke-width=\"1\"/>\n"
        );
        for (k, (label, swatch)) in self.entries.iter().enumerate() {
            let (col, row) = (k % ncols, (k / ncols) as u32);
            let x = x0 + self.columns[col];
            let max_chars = self.max_chars[col].max(2);
            let y = y0 + 4 + row * LEGEND_ROW + LEGEND_ROW / 2;
            out += "<g class=\"legend-entry\">";
            match *swatch {
                Swatch::Line { colour, dashed, marker } => {
                    let dash = if dashed { " stroke-dasharray=\"7 5\"" } else { "" };
                    out += &format!(
                        "<line x1=\"{x}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{}\" stroke-width=\"2\"{dash}/>",
                        x + SWATCH - 6,
                        hex(colour)
                    );
                    if marker {
                        out += &format!(
                            "<circle cx=\"{}\" cy=\"{y}\" r=\"4\" fill=\"{}\"/>",
                            x + (SWATCH - 6) / 2,
                            hex(colour)
                        );
                    }
                }
                Swatch::Cross(colour, upright) => {
                    let (cx, d) = (x + (SWATCH - 6) / 2, 6);
                    let strokes: [(i32, i32, i32, i32); 2] =
                        if upright { [(-d, 0, d, 0), (0, -d, 0, d)] } else { [(-d, -d, d, d), (-d, d, d, -d)] };
                    for (x1, y1, x2, y2) in strokes {
                        out += &format!(
                            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"/>",
                            cx as i32 + x1,
                            y as i32 + y1,
                            cx as i32 + x2,
                            y as i32 + y2,
                            hex(colour)
                        );
                    }
                }
                Swatch::Band => {
                    out += &format!(
                        "<rect x=\"{x}\" y=\"{}\" width=\"{}\" height=\"14\" fill=\"#1F77B4\" fill-opacity=\"0.12\" \
                         stroke=\"#1F77B4\" stroke-opacity=\"0.45\" stroke-dasharray=\"4 4\"/>",
                        y - 7,
                        SWATCH - 6
                    );
                }
            }
            let shown: String = if label.chars().count() > max_chars {
                label.chars().take(max_chars.saturating_sub(1)).collect::<String>() + "\u{2026}"
            } else {
                label.clone()
            };
            out += &format!(
                "<text x=\"{}\" y=\"{y}\" dy=\"0.35em\" font-family=\"sans-serif\" font-size=\"{LEGEND_FONT}\" \
                 fill=\"#222222\">{}",
                x + SWATCH + 4,
                crate::html::esc(&shown)
            );
            if shown != *label {
                out += &format!("<title>{}</title>", crate::html::esc(label));
            }
            out += "</text></g>\n";
        }
        out + "</g>\n"
    }
}

/// Draws the mesh, the band, the lines, markers, error bars and published crosses (last, on top) on a
/// chart whose x axis is linear or logarithmic.
fn paint<'a, X>(
    mut chart: ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, plotters::coord::types::RangedCoordf64>>,
    c: &Chart,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Result<(), String>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let err = |e: DrawingAreaErrorKind<_>| e.to_string();
    let cats = c.x_categories.clone();
    let x_step = (x1 - x0) / 10.0;
    let log_x = c.log_x;
    let fmt_x = move |x: &f64| match &cats {
        Some(cats) => {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 {
                cats.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        }
        None if log_x => short(*x),
        None => tick(*x, x_step),
    };
    let y_step = (y1 - y0) / 10.0;
    let fmt_y = move |y: &f64| tick(*y, y_step);
    // A count over a short range (classic/txqueuelen's DupAcksIn, 1 at every point) is labelled at whole
    // numbers only: ticks at 0.1, 0.2 … would claim fractions a counter never takes. (Not on an axis whose
    // range the chart sets: a CDF's fractions.)
    let whole =
        c.y_range.is_none() && y1 - y0 <= 10.0 && c.lines.iter().flat_map(|l| &l.points).all(|p| p.1.fract() == 0.0);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(c.x_label.as_str())
        .y_desc(c.y_label.as_str())
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(RGBColor(238, 238, 238))
        .bold_line_style(RGBColor(215, 215, 215))
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&fmt_y);
    if let Some(cats) = &c.x_categories {
        mesh.x_labels(cats.len() * 2 + 1);
    }
    if whole {
        mesh.y_labels((y1 - y0).floor() as usize + 1);
    }
    mesh.draw().map_err(err)?;
    if let Some((a, b)) = c.band.as_ref().map(|(a, b, _)| (a.max(x0), b.min(x1))).filter(|(a, b)| a < b) {
        let shade = RGBColor(31, 119, 180).mix(0.07);
        chart.draw_series(std::iter::once(Rectangle::new([(a, y0), (b, y1)], shade.filled()))).map_err(err)?;
        let edge = RGBColor(31, 119, 180).mix(0.45).stroke_width(1);
        for x in [a, b] {
            chart.draw_series(DashedLineSeries::new([(x, y0), (x, y1)], 4, 4, edge)).map_err(err)?;
        }
    }
    let colours = colours(c);
    for (l, &col) in c.lines.iter().zip(&colours).filter(|(l, _)| !l.published) {
        let style = col.stroke_width(2);
        if l.dashed {
            chart.draw_series(DashedLineSeries::new(l.points.iter().copied(), 7, 5, style)).map_err(err)?;
        } else {
            chart.draw_series(LineSeries::new(l.points.iter().copied(), style)).map_err(err)?;
        }
        if l.markers {
            chart.draw_series(l.points.iter().map(|&p| Circle::new(p, 4, col.filled()))).map_err(err)?;
        }
        if !l.errors.is_empty() {
            let mid = |x: f64| l.points.iter().find(|p| p.0 == x).map_or(f64::NAN, |p| p.1);
            chart
                .draw_series(l.errors.iter().map(|&(x, lo, hi)| ErrorBar::new_vertical(x, lo, mid(x), hi, style, 12)))
                .map_err(err)?;
        }
    }
    // Published figures last, so that the lab's lines and markers never hide them; a white halo keeps a
    // cross readable where it sits on a line of its own colour.
    for (l, &col) in c.lines.iter().zip(&colours).filter(|(l, _)| l.published) {
        if l.upright {
            chart
                .draw_series(l.points.iter().map(|&p| Plus { at: p, size: 9, style: WHITE.stroke_width(6) }))
                .map_err(err)?;
            chart
                .draw_series(l.points.iter().map(|&p| Plus { at: p, size: 8, style: col.stroke_width(3) }))
                .map_err(err)?;
            continue;
        }
        chart.draw_series(l.points.iter().map(|&p| Cross::new(p, 8, WHITE.stroke_width(6)))).map_err(err)?;
        chart.draw_series(l.points.iter().map(|&p| Cross::new(p, 7, col.stroke_width(3)))).map_err(err)?;
    }
    Ok(())
}

/// An upright cross (+) of `size` pixels each way: plotters has only the diagonal one ([`Cross`]). Drawn as
/// two straight lines, as `Cross` is, so the SVG holds the same kind of element for either.
struct Plus {
    at: (f64, f64),
    size: i32,
    style: ShapeStyle,
}

impl<'a> plotters::element::PointCollection<'a, (f64, f64)> for &'a Plus {
    type Point = &'a (f64, f64);
    type IntoIter = std::iter::Once<&'a (f64, f64)>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<DB: DrawingBackend> plotters::element::Drawable<DB> for Plus {
    fn draw<I: Iterator<Item = (i32, i32)>>(
        &self,
        mut points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), plotters_backend::DrawingErrorKind<DB::ErrorType>> {
        if let Some((x, y)) = points.next() {
            backend.draw_line((x - self.size, y), (x + self.size, y), &self.style)?;
            backend.draw_line((x, y - self.size), (x, y + self.size), &self.style)?;
        }
        Ok(())
    }
}

/// A tick label on a linear axis whose ticks are about `step` apart: as many decimals as the step needs
/// (so that neighbouring ticks never read the same), no trailing zeros.
fn tick(v: f64, step: f64) -> String {
    if v == 0.0 || !step.is_finite() || step <= 0.0 {
        return short(v);
    }
    let decimals = (-step.log10().floor()).clamp(0.0, 9.0) as usize;
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// A tick label: few digits, no trailing zeros.
fn short(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    let s = if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 0.1 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The scenario's name, for titles.
pub(crate) fn scenario_name(doc: &Value) -> String {
    doc["scenario"]["name"].as_str().unwrap_or("tcplab").to_string()
}

fn kind(doc: &Value) -> &str {
    doc["scenario"]["test"]["kind"].as_str().unwrap_or("")
}

/// One connection end's table of samples: a label, the columns and the rows.
struct EndTable<'a> {
    label: String,
    side: &'a str,
    columns: Vec<&'a str>,
    rows: &'a [Value],
}

impl EndTable<'_> {
    /// The points (t_s, column × scale), leaving out nulls (a variable without a value yet).
    fn line(&self, col: &str, scale: f64) -> Option<Vec<(f64, f64)>> {
        let t = self.columns.iter().position(|c| *c == "t_s")?;
        let i = self.columns.iter().position(|c| *c == col)?;
        Some(self.rows.iter().filter_map(|r| Some((r.get(t)?.as_f64()?, r.get(i)?.as_f64()? * scale))).collect())
    }
}

/// The tables of samples of a point: the `logvars` ends, or the `series` of the first sender.
fn end_tables(p: &Value) -> Vec<EndTable<'_>> {
    fn strs(v: &Value) -> Vec<&str> {
        v.as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
    }
    if let Some(lv) = p.get("logvars") {
        let columns = strs(&lv["columns"]);
        return lv["ends"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|e| EndTable {
                label: format!("{} {}\u{2192}{}", e["side"].as_str().unwrap_or("?"), e["local_port"], e["remote_port"]),
                side: e["side"].as_str().unwrap_or(""),
                columns: columns.clone(),
                rows: e["rows"].as_array().map(Vec::as_slice).unwrap_or_default(),
            })
            .collect();
    }
    if let Some(s) = p.get("series") {
        return vec![EndTable {
            label: "first sender".into(),
            side: "sender",
            columns: strs(&s["columns"]),
            rows: s["rows"].as_array().map(Vec::as_slice).unwrap_or_default(),
        }];
    }
    Vec::new()
}

/// The ends whose sending state is worth drawing: the sending side of a bulk test, every end of a
/// request/response test; at most [`MAX_ENDS`].
fn senders<'a, 'b>(
    doc: &Value,
    tables: &'b [EndTable<'a>],
    notes: &mut Vec<String>,
    what: &str,
) -> Vec<&'b EndTable<'a>> {
    let side = match kind(doc) {
        "tcp_stream" => Some("client"),
        "tcp_maerts" => Some("server"),
        _ => None,
    };
    let all: Vec<&EndTable> =
        tables.iter().filter(|t| t.side == "sender" || side.is_none_or(|s| t.side == s)).collect();
    if all.len() > MAX_ENDS {
        notes.push(format!("{what}: the first {MAX_ENDS} of {} connection ends are drawn", all.len()));
    }
    all.into_iter().take(MAX_ENDS).collect()
}

/// Time-series charts of one point: cwnd and ssthresh, smoothed RTT, throughput per interval.
pub fn time_series_charts(doc: &Value, p: &Value, notes: &mut Vec<String>) -> Vec<(String, Chart)> {
    let name = scenario_name(doc);
    let tables = end_tables(p);
    if tables.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<(String, Chart)> = Vec::new();
    // cwnd and ssthresh, KiB.
    let mut lines = Vec::new();
    for t in senders(doc, &tables, notes, "cwnd") {
        if let Some(pts) = t.line("CurCwnd", 1.0 / 1024.0) {
            lines.push(Line { label: format!("cwnd, {}", t.label), points: pts, ..Line::default() });
            if let Some(pts) = t.line("CurSsthresh", 1.0 / 1024.0).filter(|p| !p.is_empty()) {
                lines.push(Line {
                    label: format!("ssthresh, {}", t.label),
                    points: pts,
                    dashed: true,
                    ..Line::default()
                });
            }
        }
    }
    if !lines.is_empty() {
        // ssthresh has no value until the first loss: named only when drawn.
        let ssthresh = lines.iter().any(|l| l.dashed);
        let title = if ssthresh {
            format!("{name}: congestion window and slow-start threshold")
        } else {
            format!("{name}: congestion window")
        };
        let shown = names::variable("CurCwnd", largest(&lines) * 1024.0);
        rescale(&mut lines, shown.scale * 1024.0);
        out.push((
            "cwnd".into(),
            Chart {
                title,
                x_label: TIME_AXIS.into(),
                y_label: format!("{} ({})", if ssthresh { "cwnd and ssthresh" } else { "cwnd" }, shown.unit),
                lines,
                ..Chart::default()
            },
        ));
    }
    // Smoothed RTT, ms; 0 before the first sample is not an RTT.
    let mut lines = Vec::new();
    for t in senders(doc, &tables, notes, "SmoothedRTT") {
        if let Some(pts) = t.line("SmoothedRTT", 1.0) {
            let pts: Vec<_> = pts.into_iter().filter(|p| p.1 > 0.0).collect();
            lines.push(Line { label: format!("SRTT, {}", t.label), points: pts, ..Line::default() });
        }
    }
    if !lines.is_empty() {
        let title = format!("{name}: smoothed RTT (the end's own RTO estimator)");
        let shown = names::variable("SmoothedRTT", largest(&lines));
        rescale(&mut lines, shown.scale);
        out.push((
            "rtt".into(),
            Chart { title, x_label: TIME_AXIS.into(), y_label: shown.label(), lines, ..Chart::default() },
        ));
    }
    // Throughput per interval, Mbit/s: delivered to each receiving application (logvars), or acknowledged
    // to the first sender (series).
    let mut lines = Vec::new();
    let mut total: std::collections::BTreeMap<i64, f64> = std::collections::BTreeMap::new();
    let receiving: Vec<&EndTable> = tables
        .iter()
        .filter(|t| t.line("throughput_bps", 1.0).is_some_and(|pts| pts.iter().any(|p| p.1 > 0.0)))
        .collect();
    for t in receiving.iter().take(MAX_ENDS) {
        let pts = t.line("throughput_bps", 1e-6).unwrap_or_default();
        lines.push(Line { label: format!("delivered to {}", t.label), points: pts, ..Line::default() });
    }
    for t in &receiving {
        for (x, y) in t.line("throughput_bps", 1e-6).unwrap_or_default() {
            *total.entry((x * 1e9).round() as i64).or_default() += y;
        }
    }
    if receiving.len() > 1 {
        let points = total.iter().map(|(&t, &y)| (t as f64 / 1e9, y)).collect();
        lines.push(Line { label: "total delivered".into(), points, ..Line::default() });
    }
    if lines.is_empty() {
        if let Some(t) = tables.iter().find(|t| t.side == "sender") {
            let interval = p["series"]["interval_s"].as_f64().unwrap_or(1.0);
            if let Some(acked) = t.line("ThruOctetsAcked", 1.0) {
                let points = acked.windows(2).map(|w| (w[1].0, (w[1].1 - w[0].1) * 8.0 / interval / 1e6)).collect();
                lines.push(Line { label: "acknowledged to the first sender".into(), points, ..Line::default() });
            }
        }
    }
    if !lines.is_empty() {
        let title = format!("{name}: throughput per interval");
        // Drawn from Mbit/s: the unit is chosen from the largest rate in bit/s.
        let shown = names::metric("throughput_bps", largest(&lines) * 1e6);
        rescale(&mut lines, shown.scale * 1e6);
        let y_label = shown.label();
        out.push(("throughput".into(), Chart { title, x_label: TIME_AXIS.into(), y_label, lines, ..Chart::default() }));
    }
    let band = window_band(p, &tables);
    for (_, c) in &mut out {
        c.band.clone_from(&band);
    }
    out
}

/// The label of every time axis.
pub const TIME_AXIS: &str = "time since the start of the run (s)";

/// The largest y of the lines (0 without points).
pub fn largest(lines: &[Line]) -> f64 {
    lines.iter().flat_map(|l| l.points.iter().map(|p| p.1.abs())).filter(|v| v.is_finite()).fold(0.0, f64::max)
}

/// Multiplies every y of the lines by `k` (a change of the unit drawn).
pub fn rescale(lines: &mut [Line], k: f64) {
    if k != 1.0 {
        for p in lines.iter_mut().flat_map(|l| l.points.iter_mut()) {
            p.1 *= k;
        }
    }
}

/// The measurement window as a band on a time axis, when some samples lie outside it (the handshake
/// before, the drain after); `None` when every sample is inside (nothing to tell apart).
fn window_band(p: &Value, tables: &[EndTable]) -> Option<(f64, f64, String)> {
    let src = p.get("logvars").or_else(|| p.get("series"))?;
    let (start, end) = (src["measure_start_s"].as_f64()?, src["measure_end_s"].as_f64()?);
    let t = |r: &Value| r.get(0).and_then(Value::as_f64);
    let outside = tables.iter().flat_map(|e| e.rows.iter().filter_map(t)).any(|x| x < start || x > end);
    outside.then(|| (start, end, "measurement window".to_string()))
}

/// The metrics drawn against a sweep's axis by default, for the test kind.
fn sweep_metrics(doc: &Value) -> &'static [&'static str] {
    match kind(doc) {
        "tcp_rr" | "tcp_crr" => &["transactions_per_s", "latency_us.p99"],
        "tcp_msg" => &["messages_per_s", "time_per_message_us.p99"],
        _ => &["throughput_bps"],
    }
}

/// How `metric` is shown across the points of `doc`: its unit chosen from the largest value any point has.
pub fn shown_metric(doc: &Value, metric: &str) -> names::Shown {
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    let largest = points.iter().filter_map(|p| point_value(p, metric)).map(f64::abs).fold(0.0, f64::max);
    names::metric(metric, largest)
}

/// The legend label of the line of `value` of the swept key `axis`: "client TCP_NODELAY = off".
fn line_label(axis: &str, value: &Value) -> String {
    format!("{} = {}", names::key_name(axis), names::value_text(value))
}

use tcplab_lab::published::point_value;

/// A parameter value as a label (`"10mbit"`, `on`, `4`).
fn label(v: &Value) -> String {
    names::value_text(v)
}

/// The error bar of `metric` at a point: from `confidence` when the interval is about that metric (the
/// point's value is the mean of its iterations, and the interval is symmetric: mean ± `interval`/2 · mean).
fn error_bar(p: &Value, metric: &str, mean: f64) -> Option<(f64, f64)> {
    let c = p.get("confidence")?;
    if c["metric"].as_str()? != metric {
        return None;
    }
    let half = c["interval"].as_f64()? / 2.0 * mean.abs();
    half.is_finite().then_some((mean - half, mean + half))
}

/// What a sweep chart draws: `metric` (a dotted path in `metrics`, times `scale`) against the parameter
/// `x_axis`, one line per value of `line_axis`.
pub struct SweepSpec<'a> {
    pub x_axis: &'a str,
    pub line_axis: Option<&'a str>,
    pub metric: &'a str,
    pub y_label: &'a str,
    pub scale: f64,
    pub title: Option<&'a str>,
}

/// A metric against a swept parameter, one line per value of a second parameter, with the confidence
/// interval as error bars where the point has one about that metric. Numeric parameter values make a
/// numeric axis; others are categories in order of appearance. `None` when no point has the metric.
pub fn sweep_chart(doc: &Value, spec: &SweepSpec) -> Option<Chart> {
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    let xs: Vec<&Value> = points.iter().map(|p| &p["params"][spec.x_axis]).collect();
    let numeric = xs.iter().all(|v| v.is_number());
    let mut cats: Vec<String> = Vec::new();
    if !numeric {
        for v in &xs {
            let l = label(v);
            if !cats.contains(&l) {
                cats.push(l);
            }
        }
    }
    let x_of = |v: &Value| -> f64 {
        if numeric {
            v.as_f64().unwrap_or(f64::NAN)
        } else {
            cats.iter().position(|c| *c == label(v)).unwrap_or(0) as f64
        }
    };
    // One line per value of the lines axis and of every other swept key that varies: points that differ in
    // a key the chart does not name are not one curve (classic/small-messages sweeps the client's stack
    // beside the server's, its lines axis).
    let mut line_by: Vec<&str> = spec.line_axis.into_iter().collect();
    if let Some(first) = points.first().and_then(|p| p["params"].as_object()) {
        for k in first.keys().map(String::as_str) {
            let varies = points.iter().any(|p| label(&p["params"][k]) != label(&first[k]));
            if k != spec.x_axis && !line_by.contains(&k) && varies {
                line_by.push(k);
            }
        }
    }
    let key_of = |p: &Value| line_by.iter().map(|a| label(&p["params"][*a])).collect::<Vec<_>>();
    let mut line_keys: Vec<Vec<String>> = Vec::new();
    for p in points {
        let k = key_of(p);
        if !line_keys.contains(&k) {
            line_keys.push(k);
        }
    }
    let mut lines = Vec::new();
    for key in &line_keys {
        let mut pts = Vec::new();
        let mut errors = Vec::new();
        for p in points {
            if key_of(p) != *key {
                continue;
            }
            let Some(y) = point_value(p, spec.metric) else { continue };
            let x = x_of(&p["params"][spec.x_axis]);
            pts.push((x, y * spec.scale));
            if let Some((lo, hi)) = error_bar(p, spec.metric, y) {
                errors.push((x, lo * spec.scale, hi * spec.scale));
            }
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        // The line's label from a point of it: the value as the key's words write it.
        let at: Vec<(String, Value)> = points
            .iter()
            .find(|p| key_of(p) == *key)
            .map(|p| line_by.iter().map(|a| (a.to_string(), p["params"][*a].clone())).collect())
            .unwrap_or_default();
        let label = at.iter().map(|(a, v)| line_label(a, v)).collect::<Vec<_>>().join(", ");
        lines.push(Line { label, points: pts, markers: true, errors, at, ..Line::default() });
    }
    if lines.iter().all(|l| l.points.is_empty()) {
        return None;
    }
    let name = scenario_name(doc);
    let title = match spec.title {
        Some(t) => format!("{name}: {t}"),
        None => format!("{name}: {} against {}", names::metric_name(spec.metric), names::key_name(spec.x_axis)),
    };
    Some(Chart {
        title,
        x_label: names::key_label(spec.x_axis),
        y_label: spec.y_label.into(),
        lines,
        x_categories: (!numeric).then_some(cats),
        ..Chart::default()
    })
}

/// A latency in µs as a label: `850 µs`, `20.59 ms`, `1.2 s`.
fn show_us(us: f64) -> String {
    if us >= 1e6 {
        format!("{} s", short(us / 1e6))
    } else if us >= 1e3 {
        format!("{} ms", short(us / 1e3))
    } else {
        format!("{} \u{b5}s", short(us))
    }
}

/// The swept parameters in order (the first point's `params`), when the result has two or more points.
fn swept(doc: &Value) -> Vec<String> {
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    if points.len() < 2 {
        return Vec::new();
    }
    points[0]["params"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

/// Sweep charts: each main metric against the first swept axis, one line per value of the second axis;
/// error bars from the points' confidence intervals. Empty without a sweep (fewer than two points or no
/// `params`).
pub fn sweep_charts(doc: &Value) -> Vec<(String, Chart)> {
    let axes = swept(doc);
    let Some(x_axis) = axes.first() else { return Vec::new() };
    let mut out = Vec::new();
    for &metric in sweep_metrics(doc) {
        let shown = shown_metric(doc, metric);
        let y_label = shown.label();
        let line_axis = axes.get(1).map(String::as_str);
        let spec = SweepSpec { x_axis, line_axis, metric, y_label: &y_label, scale: shown.scale, title: None };
        if let Some(chart) = sweep_chart(doc, &spec) {
            out.push((format!("sweep-{}", metric.replace('.', "-")), chart));
        }
    }
    out
}

/// The latency CDF of each point's metrics (`latency_us.cdf`, `time_per_message_us.cdf`): the fraction of
/// transactions (messages) at or below a value, drawn as the staircase it is; µs below 1 ms, else ms; a
/// logarithmic axis when the steps span a decade or more. With 2 to [`MAX_CDF_OVERLAY`] points, also one
/// chart of all of them, labelled by their parameters (more lines than that are a tangle).
pub fn cdf_charts(doc: &Value) -> Vec<(String, Chart)> {
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    let name = scenario_name(doc);
    let mut per_point = Vec::new();
    for (i, p) in points.iter().enumerate() {
        for (metric, steps) in crate::csv::latency_cdfs(&p["metrics"]) {
            let steps: Vec<(f64, f64)> = steps
                .iter()
                .filter_map(|s| Some((s.get(0)?.as_f64()?, s.get(1)?.as_f64()?)))
                .filter(|s| s.0 > 0.0)
                .collect();
            if steps.is_empty() {
                continue;
            }
            let params = names::params_text(&p["params"]);
            let pct = |k: &str| p["metrics"][metric][k].as_f64();
            let summary = match (pct("p50"), pct("p99")) {
                (Some(a), Some(b)) => format!("median {}, 99th percentile {}", show_us(a), show_us(b)),
                _ => format!("{} steps", steps.len()),
            };
            let what = names::metric_name(metric);
            per_point.push((i, format!("{what}: {summary}"), metric.to_string(), params, steps));
        }
    }
    let chart = |lines: Vec<(String, &[(f64, f64)])>, metric: &str, what: &str| {
        let lo = lines.iter().flat_map(|l| l.1.iter().map(|s| s.0)).fold(f64::INFINITY, f64::min);
        let hi = lines.iter().flat_map(|l| l.1.iter().map(|s| s.0)).fold(0.0, f64::max);
        let (unit, scale) = if hi >= 1000.0 { ("ms", 1e-3) } else { ("\u{b5}s", 1.0) };
        let lines = lines
            .into_iter()
            .map(|(label, steps)| {
                // The staircase: up at each step's value, flat to the next.
                let mut pts = vec![(steps[0].0 * scale, 0.0)];
                let mut f = 0.0;
                for &(v, frac) in steps {
                    pts.push((v * scale, f));
                    pts.push((v * scale, frac));
                    f = frac;
                }
                Line { label, points: pts, ..Line::default() }
            })
            .collect();
        let quantity = names::metric_name(metric);
        let counted = if metric == "latency_us" { "transactions" } else { "messages" };
        Chart {
            title: format!("{name}: {what}"),
            x_label: format!("{quantity} ({unit}){}", if hi >= 10.0 * lo { ", log scale" } else { "" }),
            y_label: format!("fraction of {counted} at or below"),
            lines,
            log_x: hi >= 10.0 * lo,
            y_range: Some((0.0, 1.04)),
            ..Chart::default()
        }
    };
    let several = points.len() > 1;
    let mut out = Vec::new();
    for (i, label, metric, params, steps) in &per_point {
        let quantity = names::metric_name(metric);
        let what = if params.is_empty() { format!("{quantity} CDF") } else { format!("{quantity} CDF, {params}") };
        let stem = if metric == "latency_us" { "cdf".to_string() } else { format!("cdf-{metric}") };
        let file = if several { format!("p{i}-{stem}") } else { stem };
        let mut c = chart(vec![(label.clone(), steps)], metric, &what);
        c.point = several.then_some(*i);
        out.push((file, c));
    }
    // The overlay of every point's latency CDF (each point's first distribution: latency_us).
    let first: Vec<_> = per_point.iter().filter(|(_, _, m, _, _)| *m == per_point[0].2).collect();
    if several && first.len() > 1 && first.len() <= MAX_CDF_OVERLAY {
        let metric = per_point[0].2.as_str();
        let lines =
            first.iter().map(|(i, _, _, params, steps)| (format!("p{i}: {params}"), steps.as_slice())).collect();
        let what = format!("{} CDF of each point", names::metric_name(metric));
        out.push(("sweep-cdf".into(), chart(lines, metric, &what)));
    }
    out
}

/// The charts of the scenario's `[[plot]]` tables (docs/scenario.md § Plots); notes say what could not be
/// drawn (an axis the result does not sweep, a metric no point has).
pub fn scenario_charts(doc: &Value, notes: &mut Vec<String>) -> Vec<(String, Chart)> {
    let specs: Vec<tcplab_lab::scenario::PlotSpec> =
        serde_json::from_value(doc["scenario"]["plot"].clone()).unwrap_or_default();
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    let swept = swept(doc);
    let mut out = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let name = spec.name.clone().unwrap_or_else(|| format!("plot-{}", i + 1));
        if let (Some(x), Some(y)) = (&spec.x, &spec.y) {
            if !swept.contains(x) {
                notes.push(format!(
                    "plot {name}: not drawn: x = {x} is not swept ({} point(s)); sweep it with [sweep] or --sweep {x}=...",
                    points.len()
                ));
                continue;
            }
            let mut line_axis = spec.lines.as_deref();
            if let Some(l) = line_axis.filter(|l| !swept.iter().any(|s| s == l)) {
                notes.push(format!("plot {name}: lines = {l} is not swept: drawn as one line"));
                line_axis = None;
            }
            let shown = shown_metric(doc, y);
            let (y_label, scale) = (shown.label(), shown.scale);
            let spec =
                SweepSpec { x_axis: x, line_axis, metric: y, y_label: &y_label, scale, title: spec.title.as_deref() };
            let reference = specs[i].reference.as_ref();
            match sweep_chart(doc, &spec) {
                Some(mut c) => {
                    if let Some(r) = reference {
                        let xs = c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
                        let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
                        let y = r.value * scale;
                        let label = if r.label.trim().is_empty() {
                            format!("reference, {} {}", short(y), shown.unit)
                        } else {
                            r.label.clone()
                        };
                        c.lines.push(Line { label, points: vec![(lo, y), (hi, y)], ..Line::default() });
                    }
                    let published = published_lines(doc, x, y, scale, &c);
                    c.lines.extend(published);
                    // Beside a reference or a publication, the lab's one line needs a name in the legend.
                    if c.lines.len() > 1 {
                        for l in c.lines.iter_mut().filter(|l| l.label.is_empty()) {
                            l.label = "tcplab".into();
                        }
                    }
                    out.push((name, c))
                }
                None => notes.push(format!("plot {name}: not drawn: no point has the metric {y}")),
            }
            continue;
        }
        let Some(vars) = &spec.series else { continue };
        // Held units (bytes, ms, bit/s) here; the unit drawn is chosen per chart from its largest value.
        let (unit, scale) = (tcplab_lab::scenario::series_unit(&vars[0]), 1.0);
        let several = points.len() > 1;
        let mut drawn = false;
        for (k, p) in points.iter().enumerate() {
            let tables = end_tables(p);
            let mut lines = Vec::new();
            let mut ends = 0;
            for t in &tables {
                let mut any = false;
                for v in vars {
                    let Some(pts) = t.line(v, scale) else { continue };
                    // A variable that stays 0 at an end (the receiver's cwnd is not drawn, an RTT before its
                    // first sample is not an RTT) is left out.
                    let pts: Vec<_> = pts.into_iter().filter(|q| !(unit == "ms" && q.1 == 0.0)).collect();
                    if pts.iter().all(|q| q.1 == 0.0) {
                        continue;
                    }
                    lines.push(Line { label: format!("{v}, {}", t.label), points: pts, ..Line::default() });
                    any = true;
                }
                ends += usize::from(any);
                if ends == MAX_ENDS {
                    break;
                }
            }
            if lines.is_empty() {
                continue;
            }
            let title = match &spec.title {
                Some(t) => format!("{}: {t}", scenario_name(doc)),
                None => format!("{}: {}", scenario_name(doc), vars.join(", ")),
            };
            let shown = names::variable(&vars[0], largest(&lines));
            rescale(&mut lines, shown.scale);
            let y_label =
                if shown.unit.is_empty() { vars.join(", ") } else { format!("{} ({})", vars.join(", "), shown.unit) };
            let chart = Chart {
                title,
                x_label: TIME_AXIS.into(),
                y_label,
                lines,
                band: window_band(p, &tables),
                point: Some(k),
                ..Chart::default()
            };
            out.push((if several { format!("p{k}-{name}") } else { name.clone() }, chart));
            drawn = true;
        }
        if !drawn {
            notes.push(format!(
                "plot {name}: not drawn: no connection end has a non-zero sample of {}",
                vars.join(", ")
            ));
        }
    }
    out
}

/// The scenario's `[[published]]` series of metric `y` against `x`, each a line of crosses (in the plot's
/// unit, `scale` from the metric's own; in the colour of the lab's line its `where` picks): figures at x
/// values the run has no point for are drawn too, on a numeric axis; on a categorical one only where a
/// category matches. A single figure without `x` is a cross at every x of its lab line.
fn published_lines(doc: &Value, x: &str, y: &str, scale: f64, chart: &Chart) -> Vec<Line> {
    let cats = chart.x_categories.as_deref();
    use tcplab_lab::published::{factor, PublishedSeries};
    let series: Vec<PublishedSeries> = serde_json::from_value(doc["scenario"]["published"].clone()).unwrap_or_default();
    let mut out = Vec::new();
    // The chart's first source keeps the diagonal crosses; any other source's are upright.
    let first_source = series.iter().find(|s| s.metric == y && s.x.as_deref() == Some(x)).map(|s| s.source.clone());
    for s in series.iter().filter(|s| s.metric == y && s.x.as_deref() == Some(x)) {
        let factor = factor(y, &s.unit);
        let points = s
            .x_values
            .iter()
            .zip(&s.y_values)
            .filter_map(|(xv, yv)| {
                let at = match cats {
                    Some(cats) => cats.iter().position(|c| *c == label(xv))? as f64,
                    None => xv.as_f64()?,
                };
                Some((at, yv * factor * scale))
            })
            .collect::<Vec<_>>();
        // The lab's line it is compared with lends its colour: the first sweep line whose swept values agree
        // with the series' `where` (the chart's one lab line when nothing tells the lines apart).
        let colour_of = chart.lines.iter().position(|l| {
            !l.published && l.markers && l.at.iter().all(|(k, v)| s.at.get(k).is_none_or(|w| label(w) == label(v)))
        });
        if !points.is_empty() {
            let upright = first_source.as_ref() != Some(&s.source);
            out.push(Line { label: s.name(), points, published: true, colour_of, upright, ..Line::default() });
        }
    }
    // A figure the source gives for every point (no `x`: classic/txqueuelen's steady ~941 Mbit/s, the RDP
    // report's worst SmoothedRTT of five transfers, which names no transfer) is compared at every point (the
    // table's and the JSON's rows): a cross at each x of the lab's line it goes with.
    for s in series.iter().filter(|s| s.metric == y && s.x.is_none() && s.y_values.len() == 1) {
        let level = s.y_values[0] * factor(y, &s.unit) * scale;
        let colour_of = chart.lines.iter().position(|l| {
            !l.published && l.markers && l.at.iter().all(|(k, v)| s.at.get(k).is_none_or(|w| label(w) == label(v)))
        });
        let points: Vec<(f64, f64)> =
            colour_of.map(|k| chart.lines[k].points.iter().map(|p| (p.0, level)).collect()).unwrap_or_default();
        if !points.is_empty() {
            let upright = first_source.as_ref().is_some_and(|f| *f != s.source);
            out.push(Line { label: s.name(), points, published: true, colour_of, upright, ..Line::default() });
        }
    }
    out
}

/// Every chart of the result, before drawing (a [`Chart`] and its file stem each, in the order of
/// [`plots`]), and notes on what was not drawn and why. The Python package draws these with matplotlib.
pub fn charts(doc: &Value) -> (Vec<(String, Chart)>, Vec<String>) {
    let mut notes = Vec::new();
    let mut charts = scenario_charts(doc, &mut notes);
    // The scenario's own plots of metrics against swept keys take the place of the default ones.
    let named = doc["scenario"]["plot"].as_array().is_some_and(|a| a.iter().any(|p| p.get("x").is_some()));
    if !named {
        charts.extend(sweep_charts(doc));
        charts.extend(crate::plot_flows::sweep_flows_chart(doc, &mut notes));
    }
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    for (i, p) in points.iter().enumerate() {
        let prefix = if points.len() > 1 { format!("p{i}-") } else { String::new() };
        let mut per_point = time_series_charts(doc, p, &mut notes);
        per_point.extend(crate::plot_flows::flow_series_charts(doc, p, &mut notes));
        per_point.extend(crate::plot_flows::queue_charts(doc, p, &mut notes));
        for (n, mut c) in per_point {
            c.point = (points.len() > 1).then_some(i);
            charts.push((format!("{prefix}{n}"), c));
        }
    }
    if points.iter().all(|p| p.get("series").is_none() && p.get("logvars").is_none() && p.get("flow_series").is_none())
    {
        notes.push("time series: not drawn: the run has no test.series".into());
    }
    let cdfs = cdf_charts(doc);
    if cdfs.is_empty() && matches!(kind(doc), "tcp_rr" | "tcp_crr") {
        notes.push("latency CDF: not drawn: no point has latency_us.cdf (no transaction completed)".into());
    }
    charts.extend(cdfs);
    // A scenario's [[plot]] may carry a built-in plot's name (bbr-startup's `cwnd` beside the time series
    // of cwnd): the later one is renamed, so that `--plot` never writes one file twice and loses a plot.
    let mut taken = std::collections::HashSet::new();
    for (name, _) in &mut charts {
        if !taken.insert(name.clone()) {
            let renamed = (2..).map(|k| format!("{name}-{k}")).find(|n| !taken.contains(n)).unwrap_or_default();
            notes.push(format!("plot {name}: another plot has this name; this one is written as {renamed}"));
            taken.insert(renamed.clone());
            *name = renamed;
        }
    }
    (charts, notes)
}

/// Every plot of the result, and notes on what was not drawn and why.
pub fn plots(doc: &Value) -> (Vec<Plot>, Vec<String>) {
    let (charts, mut notes) = charts(doc);
    let mut out = Vec::new();
    for (name, c) in charts {
        match draw(&c) {
            Ok(svg) => out.push(Plot { name, title: c.title, svg, point: c.point }),
            Err(e) => notes.push(format!("{name}: not drawn: {e}")),
        }
    }
    (out, notes)
}

/// Writes [`plots`] into `dir` (created if missing) as `NAME.svg`, each atomically; returns the paths
/// and the notes.
pub fn write_dir(doc: &Value, dir: &Path) -> std::io::Result<(Vec<PathBuf>, Vec<String>)> {
    std::fs::create_dir_all(dir)?;
    let (plots, notes) = plots(doc);
    let mut written = Vec::new();
    for p in plots {
        let path = dir.join(format!("{}.svg", p.name));
        crate::write_atomic(&path.to_string_lossy(), &p.svg)?;
        written.push(path);
    }
    Ok((written, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(short(0.0), "0");
        assert_eq!(short(1500.0), "1500");
        assert_eq!(short(12.5), "12.5");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(2.0), "2");
    }

    #[test]
    fn ranges_start_at_zero_for_quantities_and_never_collapse() {
        assert_eq!(range([2.0, 10.0].into_iter(), true), (0.0, 10.8));
        assert_eq!(range([0.0, 0.0].into_iter(), true), (0.0, 1.0));
        let (lo, hi) = range([5.0].into_iter(), false);
        assert!(lo < 5.0 && hi > 5.0);
        assert_eq!(range(std::iter::empty(), true), (0.0, 1.0));
    }
}
