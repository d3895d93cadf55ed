//! Quabla: a differentiable array runtime for scientific machine learning, whose backends
//! are plugins loaded at run time.
//!
//! # A tour
//! - [`Array`]: arrays on a device; operations run eagerly through cached single-op
//!   executables, with numpy broadcasting and JAX dtype promotion (Rust scalars are weakly
//!   typed, so `f32_array * 2.0` and `2.0 * &f32_array` stay f32). Operators return
//!   [`Result`]: `(&a + &b)?`; for a longer formula, [`Array::ex`] makes an [`Expr`], whose
//!   operators and methods carry the first error to one `?` at the end:
//!   `(2.0 * a.ex() + &b - b.ex().exp()).get()?`, and a tuple of formulas resolves at once
//!   through [`ExprTree`]: `(x * (1.5 - z.ex()), z * (x.ex() - 3.0)).get()`. `{}` prints
//!   the values as numpy does, `{:?}` as JAX's `repr`. Creation: [`Array::from_slice`],
//!   [`Array::scalars`], [`Array::zeros`], [`Array::eye`], [`Array::linspace`],
//!   [`Array::arange`]. Indexing as numpy's `x[...]`:
//!   `x.index(&s![.., -1])`, `x.at(0)` ([`Array::index`], [`s!`]).
//! - Transformations: [`grad`], [`value_and_grad`], [`jvp`], [`vjp`], [`jacfwd`],
//!   [`jacrev`], [`hessian`] (all in [`ad`]), [`vmap`], [`jit`], [`checkpoint`],
//!   [`custom_vjp`] / [`custom_jvp`]. Functions take and return `&[Array]` / `Vec<Array>`;
//!   `argnums` pick the inputs to differentiate.
//! - [`tree`]: the same over your own types: structs deriving [`tree::Tree`], tuples,
//!   `Vec`s and maps of arrays through `tree::{value_and_grad, grad, jacfwd, jacrev, vmap,
//!   jit}`, `tree::{fori_loop, while_loop, scan, cond}`, `tree::odeint`, `tree::{cg,
//!   gmres}` and `tree::Trainer`.
//! - [`lax`]: structured control flow (`cond`, `switch`, `while_loop`,
//!   `bounded_while_loop`, `fori_loop`, `scan`), `sort`, convolutions.
//! - [`random`]: JAX's counter-based threefry keys (`key`, `split`, `uniform`, `normal`,
//!   ...), bit for bit JAX's numbers.
//! - [`nn`]: the layers of a PINN's or a neural ODE's network: [`nn::Linear`] and
//!   [`nn::Mlp`] (equinox's initialisation), parameter trees as they are.
//! - [`optim`]: optax-style optimizers (`adam(1e-3)`, `opt.init(..)`, `opt.update(..)`,
//!   [`optim::apply_updates`]) and a [`optim::Trainer`].
//! - [`ode`]: `odeint` (dopri5, tsit5, rk4, rosenbrock23) with direct and adjoint gradients;
//!   options as one expression: `OdeOptions::default().rtol(1e-10).atol(1e-10)`.
//! - [`linalg`]: dense factorizations and solves, CG and GMRES; [`root_finding`]: Newton and
//!   implicit differentiation; [`distributed`]: data parallelism over MPI or NCCL.
//! - [`runtime`]: the plugin host (discovery through `QUABLA_PLUGIN_PATH`, a `plugins`
//!   folder beside the executable, static registration; selection through
//!   `QUABLA_PLATFORMS`).
//!
//! # Using Quabla from your crate
//! Depend on the core with the CPU backend linked in, so nothing has to be installed or
//! set at run time:
//! ```toml
//! [dependencies]
//! quabla = { path = "../quabla/core", features = ["static-cpu"] }
//!
//! # The backend does the arithmetic: optimise it in debug builds too (2-8x faster).
//! [profile.dev.package."*"]
//! opt-level = 3
//! ```
//! Without `static-cpu` the core looks for backend plugins at run time (the order is in
//! [`runtime`]): build one with `cargo build --release -p quabla-cpu` in Quabla's
//! workspace and put `libquabla_cpu.so` on `QUABLA_PLUGIN_PATH` or in a `plugins` folder
//! beside your executable.
//!
//! ```no_run
//! use quabla::{grad, jit, Array, Axes};
//! let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
//! let f = |a: &[Array]| Ok(vec![(a[0].tanh()? * 2.0)?.sum(Axes::All, false)?]);
//! let y = jit(f).call(std::slice::from_ref(&x))?;
//! let g = jit(grad(f, &[0])).call(&[x])?;
//! println!("{} {}", y[0], g[0]); // 5.44... [0.84..., 0.14..., 0.019...]
//! # Ok::<(), quabla::Error>(())
//! ```

/// Invokes `$m!(A.0)`, `$m!(A.0, B.1)`, ... up to eight: the tuple arities every trait over
/// tuples here implements (`Tree`, `ExprTree`), in one list.
macro_rules! for_each_tuple_arity {
    ($m:ident) => {
        $m!(A.0);
        $m!(A.0, B.1);
        $m!(A.0, B.1, C.2);
        $m!(A.0, B.1, C.2, D.3);
        $m!(A.0, B.1, C.2, D.3, E.4);
        $m!(A.0, B.1, C.2, D.3, E.4, F.5);
        $m!(A.0, B.1, C.2, D.3, E.4, F.5, G.6);
        $m!(A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7);
    };
}

pub mod ad;
mod array;
mod array_display;
pub mod batching;
pub mod distributed;
mod error;
mod eval;
mod expr;
mod jit;
pub mod linalg;
pub mod nn;
pub mod ode;
mod ops;
pub mod optim;
pub mod passes;
mod promotion;
pub mod random;
pub mod root_finding;
pub mod runtime;
pub mod tensor_file;
pub mod test_util;
mod trace;
pub mod tree;

// `#[derive(Tree)]` writes `::quabla::...` paths; inside this crate they name itself.
extern crate self as quabla;

pub use ad::{grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp};
pub use array::Array;
pub use batching::vmap;
pub use error::{Error, Result};
pub use expr::{Expr, ExprOperand, ExprTree};
pub use jit::{jit, Jit};
pub use ops::custom::{checkpoint, custom_jvp, custom_vjp};
pub use ops::host_callback::{host_callback, HostCallbackOptions, HostFn, VmapMethod};
pub use ops::Operand;
pub use promotion::{promote_types, Scalar};
pub use quabla_abi::abi::{BufferExport, ErrorCode, DEVICE_KIND_HOST};
/// A download in flight ([`Array::start_download`]): `is_ready` polls, `wait` takes the bytes.
pub use quabla_abi::host::Event as DownloadEvent;
pub use quabla_abi::{qir, DType, Element, HostArray, HostView, TensorType};
pub use root_finding::{custom_root, newton};
pub use runtime::{default_device, device, Device};

pub use ops::basic_index::Index;
pub use ops::Axes;

/// Traces `f` at arguments shaped like `args` and returns its QIR program, as
/// `jax.make_jaxpr` does; works on transformed functions too (`grad(f, ..)`), so the IR of
/// each stage can be read with `program.to_text()`.
///
/// ```no_run
/// # use quabla::{make_program, Array};
/// let x = Array::from_slice(&[1.0f32], &[1]).unwrap();
/// println!("{}", make_program(|a: &[Array]| Ok(vec![a[0].sin()?]), &[x]).unwrap());
/// ```
pub fn make_program<F>(f: F, args: &[Array]) -> Result<qir::Program>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    // Traced on types alone: the program serves any values of them, so it must not
    // depend on these ones.
    let device = ad::device_of(args)?;
    let types: Vec<TensorType> = args.iter().map(|a| a.tensor_type().clone()).collect();
    Ok(trace::trace_function_capturing(&device, &types, &f)?.0)
}

/// The output types `f` gives for inputs of `types` on `device`, found by tracing it without
/// any values (nothing is computed or allocated), as `jax.eval_shape`.
///
/// ```no_run
/// # use quabla::{default_device, eval_shape, Array, Axes, DType, TensorType};
/// let t = TensorType::new(DType::F32, vec![1000, 1000]);
/// let f = |a: &[Array]| Ok(vec![a[0].matmul(&a[0])?.sum(Axes::All, false)?]);
/// let out = eval_shape(f, &[t], &default_device().unwrap()).unwrap();
/// assert_eq!(out[0].shape, Vec::<usize>::new());
/// ```
pub fn eval_shape<F>(
    f: F,
    types: &[TensorType],
    device: &std::sync::Arc<Device>,
) -> Result<Vec<TensorType>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    Ok(trace::trace_function_capturing(device, types, &f)?
        .0
        .output_types())
}

/// `f` traced at arguments typed as `example_args`, with the traced values it captures from
/// enclosing traces (a `grad`'s or `jit`'s) made inputs after its own, as
/// `jax.closure_convert`: the program (run it with [`call_program`] on `(args...,
/// consts...)`) and those values (`consts`). Concrete arrays it captures stay constants of
/// the program, as JAX hoists only tracers. Custom rules that must see every value they
/// differentiate with respect to take the consts as explicit arguments.
///
/// ```no_run
/// # use quabla::{call_program, closure_convert, grad, Array};
/// let scaled = |a: &[Array]| {
///     let theta = &a[0];
///     let f = |x: &[Array]| Ok(vec![(&x[0] * theta)?]);
///     let (p, consts) = closure_convert(f, &[Array::scalar(2.0f32)?])?;
///     assert_eq!(consts.len(), 1); // theta, traced by grad
///     call_program(&p, &[vec![Array::scalar(2.0f32)?], consts].concat())
/// };
/// let g = grad(scaled, &[0])(&[Array::scalar(3.0f32)?])?;
/// assert_eq!(g[0].item::<f32>()?, 2.0);
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn closure_convert<F>(f: F, example_args: &[Array]) -> Result<(qir::Program, Vec<Array>)>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let device = match example_args.first() {
        Some(a) => a.device().clone(),
        None => default_device()?,
    };
    let types: Vec<TensorType> = example_args
        .iter()
        .map(|a| a.tensor_type().clone())
        .collect();
    trace::trace_function_capturing(&device, &types, &f)
}

/// Runs a QIR program on arrays, as `jax.core.eval_jaxpr`: compiled on the device for
/// concrete arrays, inlined into the trace for traced ones (so every transform applies).
///
/// ```no_run
/// # use quabla::{call_program, qir::Program, Array};
/// let p = Program::parse("program(%0: f32[2]) {\n  %1 = exp(%0) : f32[2]\n  return %1\n}\n").unwrap();
/// let y = call_program(&p, &[Array::from_slice(&[0.0f32, 1.0], &[2]).unwrap()]).unwrap();
/// ```
pub fn call_program(p: &qir::Program, args: &[Array]) -> Result<Vec<Array>> {
    p.validate().map_err(|e| Error::Value(e.to_string()))?;
    eval::eval_program(p, args)
}

/// Structured control flow, as `jax.lax`: `cond`, `switch`, `while_loop`, `fori_loop`, `scan`;
/// `sort` (several operands, stable, `num_keys`), `conv_general_dilated`, and the
/// collectives over a named `vmap` axis (`psum`, `pmax`, `pmin`, `axis_index`; see
/// [`batching::vmap_named`]).
pub mod lax {
    pub use crate::ops::control_flow::{
        bounded_while_loop, bounded_while_loop_with, cond, fori_loop, last_scan_tape_bytes, scan,
        switch, take_scan_tape_bytes, while_loop, Bound, BoundedWhileOptions, CheckpointSchedule,
        LoopBody, RegionFn, ScanStep,
    };
    pub use crate::ops::conv::{conv_general_dilated, ConvDimensionNumbers, ConvOptions, Padding};
    pub use crate::ops::named_axis::{axis_index, pmax, pmin, psum};
    pub use crate::ops::sort::sort;
}
