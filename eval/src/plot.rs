//! The sweep report's plots (`mlugen sweep --svg DIR`), drawn with plotters'
//! SVG backend. One SVG per workload (the points of one walker count) with
//! two panels against the swept MLB sizes, one line per structure x mode (colour = structure, solid line and
//! filled circles = compiler mode, dashed line and open triangles = HWONLY):
//!
//! - (a) slowdown (checked / unchecked cycles) on a log axis labelled at
//!   every decade, with minor grid lines at 2..9 x each decade; the x axis is
//!   categorical over the swept entry counts, 0 = no MLB;
//! - (b) MLB miss rate (1 - hit rate) on a log axis, for MLB sizes >= 1
//!   only: with no MLB there is no hit rate (the sweep records 0). A point
//!   with no MLB lookups, or with no miss at all (which a log axis cannot
//!   show), is left out.
//!
//! Under the panels: the legend and a caption with the run's parameters
//! ([`caption`]). plotters is built without its `ttf`/`ab_glyph` features, so
//! text sizes are plotters' own estimate and the SVG carries `<text>`
//! elements that the viewer renders in its sans-serif font: no system font is
//! read at build or run time.
use plotters::coord::combinators::{BindKeyPoints, IntoLogRange};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::mlu_model::CheckParams;
use crate::sm_model::GpuParams;
use crate::sweep::Point;

const W: u32 = 1000;
const TITLE_H: u32 = 34;
const PANEL_H: u32 = 400;
const LEGEND_H: u32 = 34;
const CAPTION_LINE_H: u32 = 18;
const FONT: &str = "sans-serif";
/// The x axis is categorical: the i-th swept entry count sits at X_SCALE x i
/// (integer coordinates, which plotters' custom tick lists can format).
const X_SCALE: i32 = 10;

/// The caption of the plots of a sweep: what the points depend on besides
/// the axes, two lines ('\n' between them).
pub fn caption(g: &GpuParams, c: &CheckParams, walkers: usize) -> String {
    format!(
        "Calibrated H200 SM model (eval::sm_model): {} GHz, L1/L2/DRAM {}/{}/{} cycles, iteration 2's kernels, \
         checked / unchecked iteration time\n\
         MLU: {walkers} walkers, hit latency {} cycles, MLB replacement {}, {} root pointers per CTA, \
         metadata L1/L2 {}/{} sectors",
        g.clock_ghz,
        g.l1_latency,
        g.l2_latency,
        g.dram_latency,
        c.hit_latency,
        c.replacement.name(),
        c.blocks_per_cta,
        c.meta_l1_sectors,
        c.meta_l2_sectors
    )
}

/// The label of a legend entry: "<structure>, <mode>".
pub fn legend_label(structure: &str, mode: &str) -> String {
    format!("{structure}, {mode}")
}

/// Decimal text of a positive tick value: "1", "10", "0.1", "2", no
/// exponent and no trailing zeros.
fn decimal(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// A log axis covering [min, max] from decade to decade: its range, the
/// labelled ticks (every decade; also 2 and 5 x the decade when the range
/// is a single decade) and the minor ticks (2..9 x every decade).
fn log_axis(min: f64, max: f64) -> (f64, f64, Vec<f64>, Vec<f64>) {
    let lo_k = min.log10().floor() as i32;
    let mut hi_k = max.log10().ceil() as i32;
    if hi_k <= lo_k {
        hi_k = lo_k + 1;
    }
    let mut major: Vec<f64> = (lo_k..=hi_k).map(|k| 10f64.powi(k)).collect();
    let mut minor = Vec::new();
    for k in lo_k..hi_k {
        for m in 2..=9 {
            minor.push(m as f64 * 10f64.powi(k));
        }
    }
    if hi_k - lo_k == 1 {
        let d = 10f64.powi(lo_k);
        major.extend([2.0 * d, 5.0 * d]);
        major.sort_by(f64::total_cmp);
    }
    (10f64.powi(lo_k), 10f64.powi(hi_k), major, minor)
}

struct Line {
    structure: String,
    mode: String,
    color: RGBColor,
    /// (X_SCALE x entry index, value)
    slowdown: Vec<(i32, f64)>,
    miss: Vec<(i32, f64)>,
}

impl Line {
    fn dashed(&self) -> bool {
        self.mode == "hwonly"
    }
}

fn color(structure: &str) -> RGBColor {
    match structure {
        "list" => RGBColor(214, 39, 40),
        "bst" => RGBColor(31, 119, 180),
        "sol" => RGBColor(44, 160, 44),
        _ => RGBColor(127, 127, 127),
    }
}

/// "a = b" for the structures whose lines coincide in a panel (identical
/// points, so only the one drawn last shows), with the mode when they do not
/// coincide in every mode; "" when none do.
fn coinciding(lines: &[Line], pts: impl Fn(&Line) -> &Vec<(i32, f64)>) -> String {
    let modes: Vec<&str> = lines.iter().fold(Vec::new(), |mut v, l| {
        if !v.contains(&l.mode.as_str()) {
            v.push(&l.mode);
        }
        v
    });
    // (structure a, structure b) -> modes where they coincide.
    let mut pairs: Vec<((&str, &str), Vec<&str>)> = Vec::new();
    let mut other = Vec::new();
    for (j, b) in lines.iter().enumerate() {
        if pts(b).is_empty() {
            continue;
        }
        if let Some(a) = lines[..j].iter().find(|a| pts(a) == pts(b)) {
            if a.mode == b.mode {
                let k = (a.structure.as_str(), b.structure.as_str());
                match pairs.iter_mut().find(|(p, _)| *p == k) {
                    Some((_, m)) => m.push(&b.mode),
                    None => pairs.push((k, vec![&b.mode])),
                }
            } else {
                other.push(format!(
                    "{} = {}",
                    legend_label(&a.structure, &a.mode),
                    legend_label(&b.structure, &b.mode)
                ));
            }
        }
    }
    let mut out: Vec<String> = pairs
        .into_iter()
        .map(|((a, b), m)| {
            if m.len() == modes.len() {
                format!("{a} = {b}")
            } else {
                format!("{a} = {b} ({})", m.join(", "))
            }
        })
        .collect();
    out.extend(other);
    out.join("; ")
}

/// An axis title with a note on coinciding lines, if any.
fn with_note(desc: &str, note: &str) -> String {
    if note.is_empty() {
        desc.to_string()
    } else {
        format!("{desc}; lines coincide: {note}")
    }
}

/// Draws a line's path (solid or dashed) and markers on a chart.
fn draw_line<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<impl Ranged<ValueType = i32>, impl Ranged<ValueType = f64>>>,
    line: &Line,
    pts: &[(i32, f64)],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let style = ShapeStyle {
        color: line.color.to_rgba(),
        filled: false,
        stroke_width: 2,
    };
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("plot: {e}");
    if line.dashed() {
        chart
            .draw_series(DashedLineSeries::new(pts.iter().copied(), 7, 5, style))
            .map_err(err)?;
        chart
            .draw_series(pts.iter().map(|p| {
                TriangleMarker::new(
                    *p,
                    5,
                    ShapeStyle {
                        stroke_width: 2,
                        ..style
                    },
                )
            }))
            .map_err(err)?;
    } else {
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), style))
            .map_err(err)?;
        chart
            .draw_series(pts.iter().map(|p| Circle::new(*p, 4, style.filled())))
            .map_err(err)?;
    }
    Ok(())
}

/// One panel of a plot: the `pts` of every line on a log y axis (decades
/// labelled), against the MLB sizes `entries[first..]` on a categorical x axis.
#[allow(clippy::too_many_arguments)]
fn log_panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    caption: &str,
    entries: &[usize],
    first: usize,
    x_desc: String,
    y_desc: &str,
    y_fmt: &dyn Fn(&f64) -> String,
    lines: &[Line],
    pts: &dyn Fn(&Line) -> &Vec<(i32, f64)>,
) -> anyhow::Result<()> {
    let err = |e: DrawingAreaErrorKind<std::io::Error>| anyhow::anyhow!("plot: {e}");
    let (min, max) = lines
        .iter()
        .flat_map(|l| pts(l).iter().map(|p| p.1))
        .fold((f64::INFINITY, 0f64), |(a, b), v| (a.min(v), b.max(v)));
    let (lo, hi, major, minor) = log_axis(min, max);
    let n = entries.len() as i32;
    let xs: Vec<i32> = (first as i32..n).map(|i| X_SCALE * i).collect();
    let x_label = |v: &i32| entries.get((*v / X_SCALE) as usize).map(|e| e.to_string()).unwrap_or_default();
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, 18))
        .margin(10)
        .margin_right(20)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(
            (X_SCALE * first as i32 - 4..X_SCALE * n - 6).with_key_points(xs),
            (lo..hi).log_scale().with_key_points(major).with_light_points(minor),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&x_label)
        .y_label_formatter(y_fmt)
        .label_style((FONT, 15).into_font())
        .axis_desc_style((FONT, 16).into_font())
        .bold_line_style(BLACK.mix(0.25))
        .light_line_style(BLACK.mix(0.08))
        .draw()
        .map_err(err)?;
    for l in lines {
        draw_line(&mut chart, l, pts(l))?;
    }
    Ok(())
}

/// The plot of one workload's points as an SVG document: slowdown and MLB
/// miss rate against MLB entries (see the module comment), the legend, and
/// `caption` (its lines split at '\n') under them.
pub fn workload_svg(workload: &str, points: &[Point], walkers: usize, caption: &str) -> anyhow::Result<String> {
    let pts: Vec<&Point> = points.iter().filter(|p| p.workload == workload && p.walkers == walkers).collect();
    if pts.is_empty() {
        anyhow::bail!("plot: no points of workload {workload:?}");
    }
    let mut entries: Vec<usize> = pts.iter().map(|p| p.entries).collect();
    entries.sort_unstable();
    entries.dedup();
    let mut lines: Vec<Line> = Vec::new();
    for p in &pts {
        let x = X_SCALE * entries.iter().position(|e| *e == p.entries).unwrap() as i32;
        let i = match lines
            .iter()
            .position(|l| l.structure == p.structure.name() && l.mode == p.mode.name())
        {
            Some(i) => i,
            None => {
                lines.push(Line {
                    structure: p.structure.name().to_string(),
                    mode: p.mode.name().to_string(),
                    color: color(p.structure.name()),
                    slowdown: Vec::new(),
                    miss: Vec::new(),
                });
                lines.len() - 1
            }
        };
        let l = &mut lines[i];
        if p.slowdown.is_finite() && p.slowdown > 0.0 {
            l.slowdown.push((x, p.slowdown));
        }
        let miss = 1.0 - p.mlb_hit_rate;
        if p.entries >= 1 && p.counters.lookups > 0 && miss.is_finite() && miss > 0.0 {
            l.miss.push((x, miss));
        }
    }
    for l in &mut lines {
        l.slowdown.sort_by_key(|p| p.0);
        l.miss.sort_by_key(|p| p.0);
    }
    let cap_lines: Vec<&str> = caption.lines().filter(|l| !l.trim().is_empty()).collect();
    let h = TITLE_H + PANEL_H + LEGEND_H + CAPTION_LINE_H * cap_lines.len() as u32 + 10;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, h)).into_drawing_area();
        let err = |e: DrawingAreaErrorKind<std::io::Error>| anyhow::anyhow!("plot: {e}");
        root.fill(&WHITE).map_err(err)?;
        let (top, rest) = root.split_vertically(TITLE_H);
        let (panels, bottom) = rest.split_vertically(PANEL_H);
        let (legend, cap_area) = bottom.split_vertically(LEGEND_H);
        let (left, right) = panels.split_horizontally(W / 2);
        top.draw(&Text::new(
            format!("{workload}: MLU checking vs. MLB size"),
            ((W / 2) as i32, 8),
            TextStyle::from((FONT, 22).into_font().style(FontStyle::Bold)).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(err)?;

        // (a) slowdown, every MLB size.
        log_panel(
            &left,
            "(a) slowdown against the unchecked run",
            &entries,
            0,
            with_note("MLB entries (0 = no MLB)", &coinciding(&lines, |l| &l.slowdown)),
            "slowdown (checked / unchecked time)",
            &|v| format!("{}x", decimal(*v)),
            &lines,
            &|l| &l.slowdown,
        )?;

        // (b) miss rate, MLB sizes >= 1.
        let any = lines.iter().any(|l| !l.miss.is_empty());
        match entries.iter().position(|e| *e >= 1) {
            Some(first) if any => log_panel(
                &right,
                "(b) MLB miss rate (1 - hit rate)",
                &entries,
                first,
                with_note("MLB entries", &coinciding(&lines, |l| &l.miss)),
                "MLB miss rate (misses / lookups)",
                &|v| format!("{}%", decimal(100.0 * v)),
                &lines,
                &|l| &l.miss,
            )?,
            _ => {
                right
                    .draw(&Text::new(
                        "(b) MLB miss rate: no MLB size >= 1 with lookups and misses",
                        (20, (PANEL_H / 2) as i32),
                        (FONT, 16).into_font(),
                    ))
                    .map_err(err)?;
            }
        }

        // Legend: one entry per line, in the sweep's order.
        let slot = ((W - 40) / lines.len().max(1) as u32).min(170) as i32;
        let y = (LEGEND_H / 2) as i32;
        for (i, l) in lines.iter().enumerate() {
            let x = 20 + slot * i as i32;
            let style = ShapeStyle {
                color: l.color.to_rgba(),
                filled: false,
                stroke_width: 2,
            };
            if l.dashed() {
                legend
                    .draw(&DashedPathElement::new(vec![(x, y), (x + 36, y)], 7, 5, style))
                    .map_err(err)?;
                legend
                    .draw(&TriangleMarker::new(
                        (x + 18, y),
                        5,
                        ShapeStyle {
                            stroke_width: 2,
                            ..style
                        },
                    ))
                    .map_err(err)?;
            } else {
                legend
                    .draw(&PathElement::new(vec![(x, y), (x + 36, y)], style))
                    .map_err(err)?;
                legend.draw(&Circle::new((x + 18, y), 4, style.filled())).map_err(err)?;
            }
            legend
                .draw(&Text::new(
                    legend_label(&l.structure, &l.mode),
                    (x + 44, y),
                    TextStyle::from((FONT, 16).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(err)?;
        }

        for (i, c) in cap_lines.iter().enumerate() {
            cap_area
                .draw(&Text::new(
                    c.to_string(),
                    (20, 4 + (CAPTION_LINE_H * i as u32) as i32),
                    TextStyle::from((FONT, 15).into_font())
                        .color(&RGBColor(60, 60, 60))
                        .pos(Pos::new(HPos::Left, VPos::Top)),
                ))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The baseline's validation plot: every kernel's simulated against its
/// measured time (log-log, one colour per workload) with the line y = x and
/// the +-25% band.
pub fn baseline_svg(baselines: &[crate::baseline::Baseline]) -> anyhow::Result<String> {
    let colors = [RGBColor(31, 119, 180), RGBColor(214, 39, 40), RGBColor(44, 160, 44), RGBColor(148, 103, 189)];
    let all = baselines.iter().flat_map(|b| b.per_kernel.iter().flat_map(|k| [k.measured_ns, k.simulated_ns]));
    let (min, max) = all.fold((f64::INFINITY, 0f64), |(a, b), v| (a.min(v / 1000.0), b.max(v / 1000.0)));
    let (lo, hi, major, minor) = log_axis(min.max(1e-3), max.max(1e-3));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 720)).into_drawing_area();
        let err = |e: DrawingAreaErrorKind<std::io::Error>| anyhow::anyhow!("plot: {e}");
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("Unchecked model against the H200: every kernel of iteration 2", (FONT, 20))
            .margin(14)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (lo..hi).log_scale().with_key_points(major.clone()).with_light_points(minor.clone()),
                (lo..hi).log_scale().with_key_points(major).with_light_points(minor),
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("measured (CUPTI), us")
            .y_desc("simulated, us")
            .x_label_formatter(&|v| decimal(*v))
            .y_label_formatter(&|v| decimal(*v))
            .label_style((FONT, 14).into_font())
            .bold_line_style(BLACK.mix(0.25))
            .light_line_style(BLACK.mix(0.08))
            .draw()
            .map_err(err)?;
        for (f, style) in [(1.0, BLACK.stroke_width(1)), (1.25, BLACK.mix(0.4).stroke_width(1)), (0.75, BLACK.mix(0.4).stroke_width(1))] {
            chart.draw_series(LineSeries::new([(lo, lo * f), (hi, hi * f)], style)).map_err(err)?;
        }
        for (i, b) in baselines.iter().enumerate() {
            let c = colors[i % colors.len()];
            chart
                .draw_series(b.per_kernel.iter().map(|k| Circle::new((k.measured_ns / 1000.0, k.simulated_ns / 1000.0), 2, c.mix(0.6).filled())))
                .map_err(err)?
                .label(b.workload.clone())
                .legend(move |(x, y)| Circle::new((x + 8, y), 4, c.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FONT, 15))
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}
