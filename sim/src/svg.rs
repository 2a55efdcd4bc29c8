//! Hand-written SVG line plots for the sweep report: per trace, slowdown
//! (log scale) and MLB hit rate against MLB entries, one line per structure
//! (solid: compiler mode, dashed: HWONLY). No plotting dependency: the
//! output is plain SVG 1.1 that browsers and GitHub render.
use crate::sweep::Point;

/// One line of a panel.
pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub dashed: bool,
    pub y: Vec<f64>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// One panel at (x0, y0) of size w x h: categorical x axis `xs`, y axis
/// linear in [0, 1] as percent (`log` = false) or log10 from 1 (`log`).
#[allow(clippy::too_many_arguments)]
fn panel(out: &mut String, x0: f64, y0: f64, w: f64, h: f64, title: &str, xs: &[String], series: &[Series], log: bool) {
    let (l, r, t, b) = (60.0, 10.0, 28.0, 40.0);
    let (pw, ph) = (w - l - r, h - t - b);
    let px = |i: usize| x0 + l + if xs.len() > 1 { pw * i as f64 / (xs.len() - 1) as f64 } else { pw / 2.0 };
    // y range
    let all: Vec<f64> = series.iter().flat_map(|s| s.y.iter().copied()).filter(|v| v.is_finite()).collect();
    let (ymin, ymax, ticks): (f64, f64, Vec<(f64, String)>) = if log {
        let hi = all.iter().cloned().fold(1.0f64, f64::max).max(1.01);
        let top = hi.log10().max(0.0043);
        // Ticks at 1, 1.01, 1.1, 2, 10, 100 ... below the top.
        let mut ticks = Vec::new();
        for v in [1.0, 1.01, 1.02, 1.05, 1.1, 1.2, 1.5, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0] {
            if v <= hi * 1.05 {
                ticks.push((v, format!("{v}x")));
            }
        }
        // Keep about 6 ticks.
        while ticks.len() > 7 {
            let keep: Vec<_> = ticks.iter().enumerate().filter(|(i, _)| i % 2 == 0).map(|(_, t)| t.clone()).collect();
            ticks = keep;
        }
        let _ = top;
        (0.0, (hi * 1.05).log10(), ticks.into_iter().map(|(v, s)| (v.log10(), s)).collect())
    } else {
        (0.0, 1.0, (0..=5).map(|i| (i as f64 / 5.0, format!("{}%", i * 20))).collect())
    };
    let py = |v: f64| {
        let v = if log { v.max(1.0).log10() } else { v };
        y0 + t + ph - ph * ((v - ymin) / (ymax - ymin).max(1e-12))
    };
    let py_raw = |u: f64| y0 + t + ph - ph * ((u - ymin) / (ymax - ymin).max(1e-12));
    out.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"14\" text-anchor=\"middle\">{}</text>\n",
        x0 + l + pw / 2.0,
        y0 + 18.0,
        esc(title)
    ));
    out.push_str(&format!(
        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{pw:.1}\" height=\"{ph:.1}\" fill=\"none\" stroke=\"#888\"/>\n",
        x0 + l,
        y0 + t
    ));
    for (u, label) in &ticks {
        let y = py_raw(*u);
        out.push_str(&format!(
            "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n",
            x0 + l,
            x0 + l + pw,
            x0 + l - 4.0,
            y + 4.0,
            esc(label)
        ));
    }
    for (i, x) in xs.iter().enumerate() {
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
            px(i),
            y0 + t + ph + 15.0,
            esc(x)
        ));
    }
    out.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">MLB entries</text>\n",
        x0 + l + pw / 2.0,
        y0 + h - 8.0
    ));
    for s in series {
        let pts: Vec<String> = s
            .y
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(i, v)| format!("{:.1},{:.1}", px(i), py(*v)))
            .collect();
        out.push_str(&format!(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
            pts.join(" "),
            s.color,
            if s.dashed { " stroke-dasharray=\"6,4\"" } else { "" }
        ));
        for p in &pts {
            let (x, y) = p.split_once(',').unwrap();
            out.push_str(&format!("<circle cx=\"{x}\" cy=\"{y}\" r=\"2.5\" fill=\"{}\"/>\n", s.color));
        }
    }
}

fn color(structure: &str) -> &'static str {
    match structure {
        "list" => "#d62728",
        "bst" => "#1f77b4",
        "sol" => "#2ca02c",
        _ => "#7f7f7f",
    }
}

/// The plot of one workload's points: slowdown (log) and hit rate panels.
pub fn workload_plot(workload: &str, points: &[Point]) -> String {
    let pts: Vec<&Point> = points.iter().filter(|p| p.workload == workload).collect();
    let mut entries: Vec<usize> = pts.iter().map(|p| p.entries).collect();
    entries.sort_unstable();
    entries.dedup();
    let mut keys: Vec<(String, String)> = Vec::new();
    for p in &pts {
        let k = (p.structure.clone(), p.mode.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let series = |f: &dyn Fn(&Point) -> f64| -> Vec<Series> {
        keys.iter()
            .map(|(s, m)| Series {
                name: format!("{s} {m}"),
                color: color(s),
                dashed: m == "hwonly",
                y: entries
                    .iter()
                    .map(|e| {
                        pts.iter()
                            .find(|p| &p.structure == s && &p.mode == m && p.entries == *e)
                            .map(|p| f(p))
                            .unwrap_or(f64::NAN)
                    })
                    .collect(),
            })
            .collect()
    };
    let xs: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
    let slow = series(&|p| p.slowdown);
    let hit = series(&|p| p.hit_rate);
    let (w, h) = (900.0, 340.0);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{}\" viewBox=\"0 0 {w} {}\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        h + 40.0,
        h + 40.0
    );
    panel(&mut out, 0.0, 0.0, w / 2.0, h, &format!("{workload}: slowdown (log)"), &xs, &slow, true);
    panel(&mut out, w / 2.0, 0.0, w / 2.0, h, &format!("{workload}: MLB hit rate"), &xs, &hit, false);
    // Legend.
    for (i, s) in slow.iter().enumerate() {
        let x = 20.0 + 140.0 * i as f64;
        let y = h + 20.0;
        out.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\">{}</text>\n",
            x + 28.0,
            s.color,
            if s.dashed { " stroke-dasharray=\"6,4\"" } else { "" },
            x + 34.0,
            y + 4.0,
            esc(&s.name)
        ));
    }
    out.push_str("</svg>\n");
    out
}
