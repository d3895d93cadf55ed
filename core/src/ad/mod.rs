//! Automatic differentiation as program transformations: a function is traced to QIR, the
//! program is transformed (JVP; linearize + transpose for reverse mode), and the result runs
//! compiled (concrete arguments) or is inlined into the enclosing trace (traced arguments),
//! so every transform nests with every other and with `jit`.
//!
//! Derivative conventions (JAX's): d|x|/dx = +1 at 0 and -0; `maximum`/`minimum` ties and
//! `max`/`min` reduction ties share the gradient equally; `sign`, `floor`, `ceil`, `round` have
//! zero derivative; sqrt'(0) = inf; the product's gradient is exact with zeros (no division);
//! d/dy x^y at x = 0 is 0; gradients have the dtype of their primal; integer and bool inputs
//! have no tangent (asking for their gradient is an error).

mod jacobian;
mod jvp;
pub(crate) mod jvp_support;
mod known_split;
mod linearize;
pub(crate) mod rules;

pub(crate) use linearize::{partial_eval_transpose, transpose_region};

pub use jacobian::{hessian, hvp, jacfwd, jacobian, jacrev};

use crate::array::Array;
use crate::error::Result;
use crate::eval::eval_program;
use crate::runtime::{default_device, Device};

use quabla_abi::qir::Program;
use quabla_abi::TensorType;
use std::sync::Arc;

pub(crate) fn device_of(args: &[Array]) -> Result<Arc<Device>> {
    match args.first() {
        Some(a) => Ok(a.device().clone()),
        None => default_device(),
    }
}

/// Traces `f` at arguments shaped like `args`. Traced values of enclosing traces that `f`
/// closes over become extra program inputs after the arguments; they are returned so the
/// caller passes them along (they are held constant by the transformation).
pub(crate) fn trace_at<F>(f: &F, args: &[Array]) -> Result<(Arc<Device>, Program, Vec<Array>)>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let device = device_of(args)?;
    let (p, captures) = crate::trace::trace_function_at(&device, args, f)?;
    Ok((device, p, captures))
}

fn with_captures(args: &[Array], captures: &[Array]) -> Vec<Array> {
    args.iter().chain(captures).cloned().collect()
}

fn check_differentiable(args: &[Array], argnums: &[usize], what: &str) -> Result<()> {
    for &i in argnums {
        let a = args.get(i).ok_or_else(|| {
            crate::Error::Value(format!(
                "{what}: argnum {i} but only {} arguments",
                args.len()
            ))
        })?;
        if !a.dtype().is_float() {
            return Err(crate::Error::dtype(format!(
                "{what} requires float inputs, but argument {i} is {}; convert it with astype, or leave it out of argnums",
                a.dtype()
            )));
        }
    }
    Ok(())
}

/// Forward mode: the outputs of `f` at `primals` and their directional derivatives along
/// `tangents` (one per primal, same types; tangents of integer inputs are ignored).
///
/// ```no_run
/// # use quabla::{ad::jvp, Array};
/// let x = Array::from_slice(&[0.5f64], &[]).unwrap();
/// let t = Array::from_slice(&[1.0f64], &[]).unwrap();
/// let (y, dy) = jvp(|a: &[Array]| Ok(vec![a[0].sin()?]), &[x], &[t]).unwrap();
/// assert_eq!(dy[0].item::<f64>().unwrap(), 0.5f64.cos());
/// ```
pub fn jvp<F>(f: F, primals: &[Array], tangents: &[Array]) -> Result<(Vec<Array>, Vec<Array>)>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    if tangents.len() != primals.len() {
        return Err(crate::Error::value(format!(
            "jvp: {} primals but {} tangents",
            primals.len(),
            tangents.len()
        )));
    }
    for (i, (p, t)) in primals.iter().zip(tangents).enumerate() {
        if p.tensor_type() != t.tensor_type() {
            return Err(crate::Error::shape(format!(
                "jvp: tangent {i} is {} but its primal is {}",
                t.tensor_type(),
                p.tensor_type()
            )));
        }
    }
    let (device, p, caps) = trace_at(&f, primals)?;
    let active: Vec<usize> = (0..primals.len())
        .filter(|&i| primals[i].dtype().is_float())
        .collect();
    let j = linearize::jvp_program(&device, &p, &active)?;
    let mut args = with_captures(primals, &caps);
    args.extend(active.iter().map(|&i| tangents[i].clone()));
    let mut outs = eval_program(&j, &args)?;
    let touts = outs.split_off(p.outputs.len());
    Ok((outs, touts))
}

/// The pullback of a [`vjp`]: maps output cotangents to input cotangents.
pub struct Pullback {
    backward: Program,
    residuals: Vec<Array>,
    active: Vec<usize>,
    inputs: Vec<Array>,
    output_types: Vec<TensorType>,
}

impl Pullback {
    /// Cotangents of every input (zeros for integer inputs), given one cotangent per output.
    ///
    /// ```no_run
    /// # use quabla::{ad::vjp, Array};
    /// let (out, pullback) = vjp(|a: &[Array]| Ok(vec![a[0].sin()?]), &[Array::from_slice(&[0.0f64, 1.0], &[2])?])?;
    /// let ct = pullback.call(&[out[0].ones_like()?])?; // [cos 0, cos 1]
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn call(&self, cotangents: &[Array]) -> Result<Vec<Array>> {
        if cotangents.len() != self.output_types.len() {
            return Err(crate::Error::value(format!(
                "pullback: {} outputs but {} cotangents",
                self.output_types.len(),
                cotangents.len()
            )));
        }
        for (i, (c, t)) in cotangents.iter().zip(&self.output_types).enumerate() {
            if c.tensor_type() != t {
                return Err(crate::Error::shape(format!(
                    "pullback: cotangent {i} must be {t}, got {}",
                    c.tensor_type()
                )));
            }
        }
        let mut args = self.residuals.clone();
        args.extend(cotangents.iter().cloned());
        let cts = eval_program(&self.backward, &args)?;
        let mut out: Vec<Option<Array>> = vec![None; self.inputs.len()];
        for (k, &i) in self.active.iter().enumerate() {
            out[i] = Some(cts[k].clone());
        }
        out.into_iter()
            .zip(&self.inputs)
            .map(|(c, x)| c.map(Ok).unwrap_or_else(|| x.zeros_like()))
            .collect()
    }
}

/// Reverse mode: the outputs of `f` at `primals` and a [`Pullback`].
///
/// ```no_run
/// # use quabla::{ad::vjp, Array};
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let (y, pb) = vjp(|a: &[Array]| Ok(vec![(&a[0] * &a[0])?]), &[x]).unwrap();
/// let ct = Array::from_slice(&[1.0f32, 1.0], &[2]).unwrap();
/// assert_eq!(pb.call(&[ct]).unwrap()[0].to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
/// ```
pub fn vjp<F>(f: F, primals: &[Array]) -> Result<(Vec<Array>, Pullback)>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let (device, p, caps) = trace_at(&f, primals)?;
    let active: Vec<usize> = (0..primals.len())
        .filter(|&i| primals[i].dtype().is_float())
        .collect();
    vjp_of_program(&device, &p, primals, &caps, active)
}

fn vjp_of_program(
    device: &Arc<Device>,
    p: &Program,
    primals: &[Array],
    captures: &[Array],
    active: Vec<usize>,
) -> Result<(Vec<Array>, Pullback)> {
    let v = linearize::vjp_programs(device, p, &active)?;
    let mut outs = eval_program(&v.forward, &with_captures(primals, captures))?;
    let residuals = outs.split_off(v.num_outputs);
    let pb = Pullback {
        backward: v.backward,
        residuals,
        active,
        inputs: primals.to_vec(),
        output_types: p.output_types(),
    };
    Ok((outs, pb))
}

/// `value_and_grad` as a function: returns `[value, aux..., grads...]` (one gradient per
/// argnum). The first output of `f` must be a float scalar; with `has_aux` the others are
/// returned alongside, undifferentiated.
///
/// ```no_run
/// # use quabla::{ad::value_and_grad, Array, Axes};
/// let loss = |a: &[Array]| Ok(vec![(&a[0] * &a[1])?.sum(Axes::All, false)?]);
/// let w = Array::from_slice(&[1.0f64, 2.0], &[2])?;
/// let x = Array::from_slice(&[3.0f64, 4.0], &[2])?;
/// let out = value_and_grad(loss, &[0], false)(&[w, x])?; // [11, [3, 4]]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn value_and_grad<F>(
    f: F,
    argnums: &[usize],
    has_aux: bool,
) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let argnums = argnums.to_vec();
    move |args: &[Array]| {
        check_differentiable(args, &argnums, "grad")?;
        let (device, p, caps) = trace_at(&f, args)?;
        let out_types = p.output_types();
        match out_types.first() {
            Some(t) if t.rank() == 0 && t.dtype.is_float() => {}
            Some(t) => {
                return Err(crate::Error::dtype(format!(
                "grad needs a float scalar output, got {t}; use vjp or jacrev for other outputs"
            )))
            }
            None => return Err(crate::Error::value("grad of a function without outputs")),
        }
        if !has_aux && out_types.len() > 1 {
            return Err(crate::Error::shape(format!(
                "grad: the function returns {} outputs; pass has_aux to return the others as aux",
                out_types.len()
            )));
        }
        let (outs, pb) = vjp_of_program(&device, &p, args, &caps, argnums.clone())?;
        let mut cts = vec![outs[0].ones_like()?];
        for o in &outs[1..] {
            cts.push(o.zeros_like()?);
        }
        let grads = pb.call(&cts)?;
        let mut res = outs;
        res.extend(argnums.iter().map(|&i| grads[i].clone()));
        Ok(res)
    }
}

/// The gradient of a scalar function with respect to the inputs `argnums`.
///
/// ```no_run
/// # use quabla::{ad::grad, Array, Axes};
/// let g = grad(|a: &[Array]| Ok(vec![a[0].sin()?.sum(Axes::All, false)?]), &[0]);
/// let x = Array::from_slice(&[0.0f64, 1.0], &[2]).unwrap();
/// assert_eq!(g(&[x]).unwrap()[0].to_vec::<f64>().unwrap(), vec![1.0, 1f64.cos()]);
/// ```
pub fn grad<F>(f: F, argnums: &[usize]) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let vg = value_and_grad(f, argnums, false);
    move |args: &[Array]| {
        let mut r = vg(args)?;
        Ok(r.split_off(1))
    }
}
