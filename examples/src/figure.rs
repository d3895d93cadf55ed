//! The PINN's figure as a scientist reads one: the prediction and the pointwise error on the
//! unit square with coordinate axes, colour bars with values and titles (the error's with
//! its maximum), and the training loss on a log scale.
//!
//! Text is drawn with the Ubuntu font `epaint_default_fonts` embeds, so the figure looks the
//! same on a machine without fonts installed.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::error::Error;

type Res<T> = std::result::Result<T, Box<dyn Error>>;

/// The loss history: `(step, loss)` pairs per optimizer, in order.
pub struct LossCurve<'a> {
    pub label: &'a str,
    pub points: &'a [(usize, f64)],
}

/// A field sampled on a `side` x `side` grid of the unit square: value `k` is at
/// `x = (k / side) / (side - 1)`, `y = (k % side) / (side - 1)`.
pub struct Field<'a> {
    pub title: String,
    pub values: &'a [f64],
    pub side: usize,
    /// Colours from white to red over `[0, max]` (magnitudes) instead of blue-white-red
    /// over the values' range.
    pub magnitude: bool,
}

const FONT: &str = "sans-serif";

fn register_font() -> Res<()> {
    static ONCE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *ONCE.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT)
            .is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err("the embedded Ubuntu font did not load".into())
    }
}

/// A blue-white-red colour for `t` in [0, 1].
pub fn colour(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let (lo, mid, hi) = (
        (59.0, 76.0, 192.0),
        (240.0, 240.0, 240.0),
        (180.0, 4.0, 38.0),
    );
    let (a, b, u) = if t < 0.5 {
        (lo, mid, t * 2.0)
    } else {
        (mid, hi, t * 2.0 - 1.0)
    };
    let mix = |x: f64, y: f64| (x + (y - x) * u) as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

impl Field<'_> {
    /// The colour range and the map from a value to a colour.
    fn scale(&self) -> (f64, f64, impl Fn(f64) -> RGBColor) {
        let finite = self.values.iter().copied().filter(|v| v.is_finite());
        let (mut lo, mut hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        if self.magnitude {
            lo = 0.0;
        }
        if hi <= lo {
            hi = lo + 1.0;
        }
        let magnitude = self.magnitude;
        let map = move |v: f64| {
            let t = (v - lo) / (hi - lo);
            colour(if magnitude { 0.5 + 0.5 * t } else { t })
        };
        (lo, hi, map)
    }
}

fn heat_map(area: &DrawingArea<BitMapBackend, plotters::coord::Shift>, f: &Field) -> Res<()> {
    let (lo, hi, map) = f.scale();
    let (plot, bar) = area.split_horizontally(area.dim_in_pixel().0 - 95);
    let mut chart = ChartBuilder::on(&plot)
        .caption(&f.title, (FONT, 20))
        .margin(8)
        .x_label_area_size(40)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0f64..1.0, 0.0f64..1.0)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("x")
        .y_desc("y")
        .x_labels(6)
        .y_labels(6)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .draw()?;
    let n = f.side;
    let h = 1.0 / (n - 1) as f64;
    chart.draw_series(f.values.iter().enumerate().map(|(k, &v)| {
        let (x, y) = ((k / n) as f64 * h, (k % n) as f64 * h);
        let corner = |d: f64| d.clamp(0.0, 1.0);
        Rectangle::new(
            [
                (corner(x - h / 2.0), corner(y - h / 2.0)),
                (corner(x + h / 2.0), corner(y + h / 2.0)),
            ],
            map(v).filled(),
        )
    }))?;
    colour_bar(&bar, lo, hi, &map)
}

fn colour_bar(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    lo: f64,
    hi: f64,
    map: &dyn Fn(f64) -> RGBColor,
) -> Res<()> {
    let mut bar: ChartContext<BitMapBackend, Cartesian2d<RangedCoordf64, RangedCoordf64>> =
        ChartBuilder::on(area)
            .margin_top(36)
            .margin_bottom(48)
            .margin_right(4)
            .set_label_area_size(LabelAreaPosition::Right, 66)
            .build_cartesian_2d(0.0f64..1.0, lo..hi)?;
    let steps = 120;
    let dv = (hi - lo) / steps as f64;
    bar.draw_series((0..steps).map(|i| {
        let v = lo + i as f64 * dv;
        Rectangle::new([(0.0, v), (1.0, v + dv)], map(v + dv / 2.0).filled())
    }))?;
    // The axis after the colours, so the colours never cover its tick labels.
    let small = hi.abs().max(lo.abs()) < 1e-2;
    bar.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(6)
        .y_label_formatter(&|v| {
            // A tick at zero can come out as -0.00 from rounding.
            let v = if v.abs() < (hi - lo) * 1e-9 { 0.0 } else { *v };
            if small {
                format!("{v:.1e}")
            } else {
                format!("{v:.2}")
            }
        })
        .label_style((FONT, 13))
        .draw()?;
    Ok(())
}

fn loss_panel(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    curves: &[LossCurve],
) -> Res<()> {
    let all = || curves.iter().flat_map(|c| c.points.iter());
    let last = all().map(|p| p.0).max().unwrap_or(1).max(1);
    let positive = || all().map(|p| p.1).filter(|v| *v > 0.0 && v.is_finite());
    let lo = positive().fold(f64::INFINITY, f64::min);
    let hi = positive().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo < hi {
        (lo / 2.0, hi * 2.0)
    } else {
        (1e-8, 1.0)
    };
    let mut chart = ChartBuilder::on(area)
        .caption("Training loss", (FONT, 20))
        .margin(8)
        .margin_right(20)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..last as f64, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("step")
        .y_desc("loss")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let palette = [RGBColor(59, 76, 192), RGBColor(180, 4, 38)];
    for (c, colour) in curves.iter().zip(palette.iter().cycle()) {
        let colour = *colour;
        chart
            .draw_series(LineSeries::new(
                c.points
                    .iter()
                    .filter(|p| p.1 > 0.0 && p.1.is_finite())
                    .map(|p| (p.0 as f64, p.1)),
                colour.stroke_width(2),
            ))?
            .label(c.label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], colour.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .label_font((FONT, 14))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// Writes the three panels (two fields with colour bars, the loss curves) to `path` (PNG).
pub fn write_figure(path: &str, fields: [&Field; 2], curves: &[LossCurve]) -> Res<()> {
    draw(
        BitMapBackend::new(path, SIZE).into_drawing_area(),
        fields,
        curves,
    )
}

/// The figure's size in pixels.
pub const SIZE: (u32, u32) = (1620, 540);

fn draw(
    root: DrawingArea<BitMapBackend, plotters::coord::Shift>,
    fields: [&Field; 2],
    curves: &[LossCurve],
) -> Res<()> {
    register_font()?;
    for f in fields {
        if f.side < 2 || f.values.len() != f.side * f.side {
            return Err(format!(
                "a field of {} values is not a grid of side {} (at least 2)",
                f.values.len(),
                f.side
            )
            .into());
        }
    }
    root.fill(&WHITE)?;
    let panels = root.split_evenly((1, 3));
    heat_map(&panels[0], fields[0])?;
    heat_map(&panels[1], fields[1])?;
    loss_panel(&panels[2], curves)?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figure_has_its_panels_text_and_colour_bars() {
        let side = 11;
        let values: Vec<f64> = (0..side * side).map(|k| (k as f64 * 0.1).sin()).collect();
        let errors: Vec<f64> = values.iter().map(|v| v.abs() * 1e-3).collect();
        let adam: Vec<(usize, f64)> = (0..50).map(|k| (k, 1.0 / (1.0 + k as f64))).collect();
        let fine = [(50, 1e-3), (60, 1e-4)];
        let prediction = Field {
            title: "Prediction u(x, y)".into(),
            values: &values,
            side,
            magnitude: false,
        };
        let error = Field {
            title: "Pointwise error |u - u*| (max 1.0e-3)".into(),
            values: &errors,
            side,
            magnitude: true,
        };
        let curves = [
            LossCurve {
                label: "Adam",
                points: &adam,
            },
            LossCurve {
                label: "L-BFGS",
                points: &fine,
            },
        ];
        let (w, h) = (SIZE.0 as usize, SIZE.1 as usize);
        let mut rgb = vec![0u8; w * h * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
            draw(root, [&prediction, &error], &curves).unwrap();
        }
        let pixel = |x: usize, y: usize| {
            let k = 3 * (y * w + x);
            (rgb[k], rgb[k + 1], rgb[k + 2])
        };
        let count =
            |x0: usize, x1: usize, y0: usize, y1: usize, f: &dyn Fn((u8, u8, u8)) -> bool| {
                (y0..y1)
                    .flat_map(|y| (x0..x1).map(move |x| (x, y)))
                    .filter(|&(x, y)| f(pixel(x, y)))
                    .count()
            };
        let dark = |p: (u8, u8, u8)| p.0 < 100 && p.1 < 100 && p.2 < 100;
        let red = |p: (u8, u8, u8)| p.0 > 150 && p.1 < 60 && p.2 < 80;
        let blue = |p: (u8, u8, u8)| p.2 > 150 && p.0 < 100;
        // Each panel's title is text: dark glyph pixels along its top.
        for panel in 0..3 {
            assert!(
                count(panel * 540 + 60, panel * 540 + 480, 4, 30, &dark) > 50,
                "{panel}"
            );
        }
        // The colour bars (right of each map) run from one end of their scale to the other.
        assert!(count(445, 470, 40, 480, &blue) > 100 && count(445, 470, 40, 480, &red) > 100);
        assert!(count(985, 1010, 40, 480, &red) > 100);
        // The loss curves are drawn in the right panel.
        assert!(count(1160, 1600, 40, 480, &blue) > 50);
        let bad = Field {
            title: String::new(),
            values: &values[..10],
            side,
            magnitude: false,
        };
        let mut scratch = vec![0u8; w * h * 3];
        let root = BitMapBackend::with_buffer(&mut scratch, SIZE).into_drawing_area();
        assert!(draw(root, [&bad, &bad], &[]).is_err());
    }
}
