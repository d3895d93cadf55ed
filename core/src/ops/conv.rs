//! `conv_general_dilated`, as `jax.lax`'s, composed of primitives that carry every rule:
//! a `pad` (borders and lhs dilation), then for each kernel tap a strided `slice` of the
//! input and a `dot_general` with that tap's weights (batched over feature or batch groups),
//! summed. JVP, transpose (a slice's transpose is a pad, so the input gradient adds shifted
//! products) and batching come from those primitives, and every backend runs it.

use crate::array::Array;
use crate::error::{Error, Result};
use quabla_abi::qir::DotDims;

/// Where the batch, feature and spatial axes of each operand are, as JAX's
/// `ConvDimensionNumbers`: `lhs_spec = [batch, feature, spatial...]`,
/// `rhs_spec = [out feature, in feature, spatial...]`, `out_spec = [batch, feature,
/// spatial...]`, each entry an axis of that array.
///
/// ```
/// use quabla::lax::ConvDimensionNumbers;
/// let nhwc = ConvDimensionNumbers::from_layouts("NHWC", "HWIO", "NHWC").unwrap();
/// assert_eq!(nhwc.lhs_spec, vec![0, 3, 1, 2]);
/// assert_eq!(nhwc.rhs_spec, vec![3, 2, 0, 1]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvDimensionNumbers {
    pub lhs_spec: Vec<usize>,
    pub rhs_spec: Vec<usize>,
    pub out_spec: Vec<usize>,
}

impl ConvDimensionNumbers {
    /// `NCHW`, `OIHW`, `NCHW` (any number of spatial axes): JAX's default.
    ///
    /// ```no_run
    /// # use quabla::lax::ConvDimensionNumbers;
    /// let dn = ConvDimensionNumbers::channels_first(4); // NCHW, OIHW, NCHW
    /// ```
    pub fn channels_first(rank: usize) -> ConvDimensionNumbers {
        let spec: Vec<usize> = (0..rank).collect();
        ConvDimensionNumbers {
            lhs_spec: spec.clone(),
            rhs_spec: spec.clone(),
            out_spec: spec,
        }
    }

    /// From layout strings as JAX's (`"NHWC"`, `"HWIO"`, `"NHWC"`): `N`/`C` (lhs and
    /// output) and `O`/`I` (kernel) name the batch and feature axes; every other letter is a
    /// spatial axis, matched between the three strings by letter.
    ///
    /// ```no_run
    /// # use quabla::lax::{ConvDimensionNumbers, ConvOptions};
    /// let mut opts = ConvOptions::new(2);
    /// opts.dimension_numbers = Some(ConvDimensionNumbers::from_layouts("NHWC", "HWIO", "NHWC")?);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn from_layouts(lhs: &str, rhs: &str, out: &str) -> Result<ConvDimensionNumbers> {
        let (l, r, o): (Vec<char>, Vec<char>, Vec<char>) = (
            lhs.chars().collect(),
            rhs.chars().collect(),
            out.chars().collect(),
        );
        if l.len() != r.len() || l.len() != o.len() {
            return Err(Error::value(format!(
                "conv: layouts {lhs:?}, {rhs:?}, {out:?} must have one length"
            )));
        }
        let spatial: Vec<char> = r.iter().copied().filter(|c| !"OI".contains(*c)).collect();
        let spec = |s: &[char], first: char, second: char, name: &str| -> Result<Vec<usize>> {
            let at = |c: char| {
                s.iter().position(|x| *x == c).ok_or_else(|| {
                    Error::value(format!(
                        "conv: layout {name} {:?} has no axis '{c}' (it needs {first}, \
                         {second} and the kernel's spatial letters {spatial:?})",
                        s.iter().collect::<String>()
                    ))
                })
            };
            let mut v = vec![at(first)?, at(second)?];
            for c in &spatial {
                v.push(at(*c)?);
            }
            let mut seen = v.clone();
            seen.sort_unstable();
            seen.dedup();
            if seen.len() != s.len() {
                return Err(Error::value(format!(
                    "conv: layout {name} {:?} repeats a letter",
                    s.iter().collect::<String>()
                )));
            }
            Ok(v)
        };
        Ok(ConvDimensionNumbers {
            lhs_spec: spec(&l, 'N', 'C', "lhs")?,
            rhs_spec: spec(&r, 'O', 'I', "rhs")?,
            out_spec: spec(&o, 'N', 'C', "out")?,
        })
    }
}

/// How a convolution pads its input's spatial axes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Padding {
    /// No padding: only windows that fit.
    Valid,
    /// `ceil(in / stride)` outputs; the odd pad at the end (`SAME_LOWER`: at the start).
    Same,
    SameLower,
    /// `(low, high)` per spatial axis; negative values crop.
    Explicit(Vec<(i64, i64)>),
}

/// Options of [`conv_general_dilated`]; [`ConvOptions::new`] gives unit strides and
/// dilations, `VALID` padding, channels-first layouts and no groups.
#[derive(Clone, Debug)]
pub struct ConvOptions {
    pub window_strides: Vec<usize>,
    pub padding: Padding,
    pub lhs_dilation: Vec<usize>,
    pub rhs_dilation: Vec<usize>,
    /// `None`: channels first (`NCHW`, `OIHW`, `NCHW`).
    pub dimension_numbers: Option<ConvDimensionNumbers>,
    pub feature_group_count: usize,
    pub batch_group_count: usize,
}

impl ConvOptions {
    /// Defaults for `spatial` spatial axes.
    ///
    /// ```no_run
    /// # use quabla::lax::{ConvOptions, Padding};
    /// let mut opts = ConvOptions::new(2); // stride 1, no padding or dilation, one group
    /// opts.padding = Padding::Same;
    /// ```
    pub fn new(spatial: usize) -> ConvOptions {
        ConvOptions {
            window_strides: vec![1; spatial],
            padding: Padding::Valid,
            lhs_dilation: vec![1; spatial],
            rhs_dilation: vec![1; spatial],
            dimension_numbers: None,
            feature_group_count: 1,
            batch_group_count: 1,
        }
    }
}

/// The sizes a convolution works with, in channels-first order.
struct Geometry {
    batch: usize,
    features: usize,
    out_features: usize,
    taps: Vec<usize>,
    pads: Vec<(i64, i64)>,
    out: Vec<usize>,
}

/// `(low, high)` pads for `padding`, JAX's `padtype_to_pads` for the named ones (on the
/// undilated input and the dilated kernel).
fn resolve_padding(
    padding: &Padding,
    input: &[usize],
    kernel: &[usize],
    strides: &[usize],
) -> Result<Vec<(i64, i64)>> {
    let d = input.len();
    match padding {
        Padding::Valid => Ok(vec![(0, 0); d]),
        Padding::Explicit(p) if p.len() == d => Ok(p.clone()),
        Padding::Explicit(p) => Err(Error::value(format!(
            "conv: padding has {} (low, high) pairs for {d} spatial axes",
            p.len()
        ))),
        Padding::Same | Padding::SameLower => Ok((0..d)
            .map(|i| {
                let out = input[i].div_ceil(strides[i]);
                let need = ((out.max(1) - 1) * strides[i] + kernel[i]) as i64 - input[i] as i64;
                let total = need.max(0);
                let small = total / 2;
                if *padding == Padding::Same {
                    (small, total - small)
                } else {
                    (total - small, small)
                }
            })
            .collect()),
    }
}

fn check_spec(spec: &[usize], rank: usize, what: &str) -> Result<()> {
    let mut seen = vec![false; rank];
    let ok = spec.len() == rank
        && spec
            .iter()
            .all(|&a| a < rank && !std::mem::replace(&mut seen[a], true));
    if ok {
        Ok(())
    } else {
        Err(Error::value(format!(
            "conv: {what} {spec:?} is not a permutation of the {rank} axes"
        )))
    }
}

fn geometry(x: &[usize], w: &[usize], o: &ConvOptions) -> Result<Geometry> {
    let d = x.len() - 2;
    let per_axis = [
        ("window_strides", &o.window_strides),
        ("lhs_dilation", &o.lhs_dilation),
        ("rhs_dilation", &o.rhs_dilation),
    ];
    for (name, v) in per_axis {
        if v.len() != d || v.contains(&0) {
            return Err(Error::value(format!(
                "conv: {name} {v:?} needs {d} positive entries (one per spatial axis)"
            )));
        }
    }
    let (g, b) = (o.feature_group_count, o.batch_group_count);
    if g == 0 || b == 0 || (g > 1 && b > 1) {
        return Err(Error::value(format!(
            "conv: feature_group_count ({g}) and batch_group_count ({b}) must be positive, \
             and at most one of them above 1"
        )));
    }
    let (batch, features, out_features, in_features) = (x[0], x[1], w[0], w[1]);
    if features != in_features * g || out_features % g != 0 {
        return Err(Error::shape(format!(
            "conv: lhs features ({features}) must be feature_group_count ({g}) x the kernel's \
             input features ({in_features}), and the kernel's output features \
             ({out_features}) a multiple of it"
        )));
    }
    if batch % b != 0 || out_features % b != 0 {
        return Err(Error::shape(format!(
            "conv: batch_group_count ({b}) must divide the batch ({batch}) and the output \
             features ({out_features})"
        )));
    }
    let taps = w[2..].to_vec();
    let dilated_kernel: Vec<usize> = (0..d)
        .map(|i| (taps[i].max(1) - 1) * o.rhs_dilation[i] + 1)
        .collect();
    let pads = resolve_padding(&o.padding, &x[2..], &dilated_kernel, &o.window_strides)?;
    let out = (0..d)
        .map(|i| {
            let dilated = ((x[2 + i].max(1) - 1) * o.lhs_dilation[i] + 1) as i64;
            let dilated = if x[2 + i] == 0 { 0 } else { dilated };
            let padded = dilated + pads[i].0 + pads[i].1;
            let span = padded - dilated_kernel[i] as i64;
            if taps[i] == 0 || span < 0 {
                0
            } else {
                span as usize / o.window_strides[i] + 1
            }
        })
        .collect();
    Ok(Geometry {
        batch,
        features,
        out_features,
        taps,
        pads,
        out,
    })
}

/// The padded (and lhs-dilated) input.
fn padded_input(x: &Array, g: &Geometry, o: &ConvOptions) -> Result<Array> {
    let mut low = vec![0i64, 0];
    let mut high = vec![0i64, 0];
    let mut interior = vec![0usize, 0];
    for i in 0..g.taps.len() {
        low.push(g.pads[i].0);
        high.push(g.pads[i].1);
        interior.push(o.lhs_dilation[i] - 1);
    }
    x.pad(0, &low, &high, &interior)
}

/// Kernel tap `t` (row-major over the kernel's spatial axes) as a multi-index.
fn tap_index(t: usize, taps: &[usize]) -> Vec<usize> {
    let mut rest = t;
    let mut tap = vec![0usize; taps.len()];
    for i in (0..taps.len()).rev() {
        tap[i] = rest % taps[i];
        rest /= taps[i];
    }
    tap
}

/// The input elements kernel tap `tap` meets at every output position: `(N, C, out...)`.
fn window(padded: &Array, tap: &[usize], g: &Geometry, o: &ConvOptions) -> Result<Array> {
    let mut start = vec![0usize, 0];
    let mut limit = vec![g.batch, g.features];
    let mut strides = vec![1usize, 1];
    for (i, &k) in tap.iter().enumerate() {
        let s = k * o.rhs_dilation[i];
        start.push(s);
        limit.push(match g.out[i] {
            0 => s,
            n => s + (n - 1) * o.window_strides[i] + 1,
        });
        strides.push(o.window_strides[i]);
    }
    padded.slice(&start, &limit, &strides)
}

/// A transpose that moves only axes of extent 1 keeps the row-major order: a reshape then.
fn relayout(a: &Array, perm: &[usize]) -> Result<Array> {
    let moved: Vec<usize> = perm
        .iter()
        .copied()
        .filter(|&d| a.shape()[d] != 1)
        .collect();
    if moved.windows(2).all(|w| w[0] < w[1]) {
        let shape: Vec<isize> = perm.iter().map(|&d| a.shape()[d] as isize).collect();
        a.reshape(&shape)
    } else {
        a.transpose(perm)
    }
}

/// `lhs` convolved with `rhs` (cross-correlation, as XLA's and JAX's
/// `conv_general_dilated`): strides, padding, input (`lhs_dilation`, a transposed
/// convolution) and kernel (`rhs_dilation`, atrous) dilation, feature and batch groups, any
/// layout. Differentiable in both operands, batched by `vmap`, run by every backend.
///
/// ```no_run
/// use quabla::lax::{conv_general_dilated, ConvOptions, Padding};
/// use quabla::Array;
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[1, 1, 4]).unwrap();
/// let w = Array::from_slice(&[1.0f32, -1.0], &[1, 1, 2]).unwrap();
/// let mut o = ConvOptions::new(1);
/// o.padding = Padding::Same;
/// let y = conv_general_dilated(&x, &w, &o).unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![-1.0, -1.0, -1.0, 4.0]);
/// ```
pub fn conv_general_dilated(lhs: &Array, rhs: &Array, opts: &ConvOptions) -> Result<Array> {
    let rank = lhs.ndim();
    if rank < 2 || rhs.ndim() != rank {
        return Err(Error::shape(format!(
            "conv: lhs and rhs need one rank of at least 2 (batch and feature axes), got \
             {:?} and {:?}",
            lhs.shape(),
            rhs.shape()
        )));
    }
    let dn = opts
        .dimension_numbers
        .clone()
        .unwrap_or_else(|| ConvDimensionNumbers::channels_first(rank));
    check_spec(&dn.lhs_spec, rank, "lhs_spec")?;
    check_spec(&dn.rhs_spec, rank, "rhs_spec")?;
    check_spec(&dn.out_spec, rank, "out_spec")?;
    let x = lhs.transpose(&dn.lhs_spec)?;
    let w = rhs.transpose(&dn.rhs_spec)?;
    let g = geometry(x.shape(), w.shape(), opts)?;
    let padded = padded_input(&x, &g, opts)?;
    let n_taps: usize = g.taps.iter().product();
    let positions: usize = g.out.iter().product();
    let (fg, bg) = (opts.feature_group_count, opts.batch_group_count);
    let i = |v: usize| v as isize;
    // One product per kernel tap, summed: (groups, per-group out features, N', positions).
    // Groups are the dot's batch axis; the input's windows are read once each, never
    // gathered into one (taps x) larger im2col array.
    let (groups, in_per_group) = if bg > 1 {
        (bg, g.features)
    } else {
        (fg, g.features / fg)
    };
    let window_shape = if bg > 1 {
        [i(bg), i(g.batch / bg), i(g.features), i(positions)]
    } else {
        [i(g.batch), i(fg), i(in_per_group), i(positions)]
    };
    let (rhs_batch, rhs_contract) = if bg > 1 { (0, 2) } else { (1, 2) };
    let dims = DotDims {
        lhs_batch: vec![0],
        rhs_batch: vec![rhs_batch],
        lhs_contract: vec![2],
        rhs_contract: vec![rhs_contract],
    };
    let kernel = w.reshape(&[i(g.out_features), i(in_per_group), i(n_taps)])?;
    let mut total: Option<Array> = None;
    for t in 0..n_taps {
        let cols = window(&padded, &tap_index(t, &g.taps), &g, opts)?.reshape(&window_shape)?;
        let k = kernel.slice(
            &[0, 0, t],
            &[g.out_features, in_per_group, t + 1],
            &[1, 1, 1],
        )?;
        let k = k.reshape(&[i(groups), i(g.out_features / groups), i(in_per_group)])?;
        let part = k.dot_general(&cols, dims.clone())?;
        total = Some(match total {
            None => part,
            Some(acc) => (&acc + &part)?,
        });
    }
    let out_batch = if bg > 1 { g.batch / bg } else { g.batch };
    let y = match total {
        Some(y) => y,
        None => x.filled_beside(
            &[groups, g.out_features / groups, out_batch, positions],
            0,
            x.dtype(),
        )?,
    };
    // (groups, per-group features, N', positions) -> (N', features, out...).
    let mut shape = vec![i(out_batch), i(g.out_features)];
    shape.extend(g.out.iter().map(|&s| i(s)));
    let canonical = relayout(&y, &[2, 0, 1, 3])?.reshape(&shape)?;
    let mut perm = vec![0usize; rank];
    for (j, &axis) in dn.out_spec.iter().enumerate() {
        perm[axis] = j;
    }
    relayout(&canonical, &perm)
}
