//! The core's optimizers (optax-style gradient transformations) and learning-rate schedules
//! over flat lists of arrays; `quabla.optim` (Python) adds pytrees.

use crate::array::{dtype_from_name, RawArray};
use crate::errors::IntoPyResult;
use crate::transforms::{inners, raws};
use pyo3::prelude::*;
use quabla::optim::{self, LearningRate, Optimizer};

/// A learning-rate schedule: `schedule(count, dtype)` is the rate at an int32 step count.
#[pyclass(frozen, from_py_object, module = "quabla._quabla")]
#[derive(Clone)]
pub struct Schedule(optim::Schedule);

#[pymethods]
impl Schedule {
    fn __call__(&self, count: &RawArray, dtype: &str) -> PyResult<RawArray> {
        Ok((self.0)(&count.inner, dtype_from_name(dtype)?).py()?.into())
    }
}

/// A learning rate from Python: a number or a `Schedule`.
#[derive(FromPyObject)]
enum Rate {
    Schedule(Schedule),
    Value(f64),
}

impl Rate {
    fn core(self) -> LearningRate {
        match self {
            Rate::Schedule(s) => LearningRate::Schedule(s.0),
            Rate::Value(v) => LearningRate::Constant(v),
        }
    }
}

/// A gradient transformation over flat lists: `init(params) -> state`,
/// `update(grads, state, params) -> (updates, state)`.
#[pyclass(frozen, from_py_object, module = "quabla._quabla")]
#[derive(Clone)]
pub struct GradientTransformation(Optimizer);

#[pymethods]
impl GradientTransformation {
    fn init(&self, params: Vec<RawArray>) -> PyResult<Vec<RawArray>> {
        Ok(raws(self.0.init(&inners(&params)).py()?))
    }

    fn update(
        &self,
        grads: Vec<RawArray>,
        state: Vec<RawArray>,
        params: Vec<RawArray>,
    ) -> PyResult<(Vec<RawArray>, Vec<RawArray>)> {
        let (u, s) = self
            .0
            .update(&inners(&grads), &inners(&state), &inners(&params))
            .py()?;
        Ok((raws(u), raws(s)))
    }
}

fn gt(o: Optimizer) -> GradientTransformation {
    GradientTransformation(o)
}

#[pyfunction]
#[pyo3(signature = (learning_rate, momentum = None, nesterov = false))]
fn sgd(learning_rate: Rate, momentum: Option<f64>, nesterov: bool) -> GradientTransformation {
    gt(optim::sgd(learning_rate.core(), momentum, nesterov))
}

#[pyfunction]
#[pyo3(signature = (learning_rate, b1 = 0.9, b2 = 0.999, eps = 1e-8))]
fn adam(learning_rate: Rate, b1: f64, b2: f64, eps: f64) -> GradientTransformation {
    gt(optim::adam_with(learning_rate.core(), b1, b2, eps))
}

#[pyfunction]
#[pyo3(signature = (learning_rate, weight_decay = 1e-4))]
fn adamw(learning_rate: Rate, weight_decay: f64) -> GradientTransformation {
    gt(optim::adamw(learning_rate.core(), weight_decay))
}

#[pyfunction]
#[pyo3(signature = (learning_rate, decay = 0.9, eps = 1e-8))]
fn rmsprop(learning_rate: Rate, decay: f64, eps: f64) -> GradientTransformation {
    gt(optim::rmsprop(learning_rate.core(), decay, eps))
}

#[pyfunction]
fn clip_by_global_norm(max_norm: f64) -> GradientTransformation {
    gt(optim::clip_by_global_norm(max_norm))
}

#[pyfunction]
fn scale(factor: f64) -> GradientTransformation {
    gt(optim::scale(factor))
}

#[pyfunction]
#[pyo3(signature = (b1 = 0.9, b2 = 0.999, eps = 1e-8, eps_root = 0.0))]
fn scale_by_adam(b1: f64, b2: f64, eps: f64, eps_root: f64) -> GradientTransformation {
    gt(optim::scale_by_adam(b1, b2, eps, eps_root))
}

#[pyfunction]
fn scale_by_learning_rate(learning_rate: Rate) -> GradientTransformation {
    gt(optim::scale_by_learning_rate(learning_rate.core()))
}

#[pyfunction]
fn add_decayed_weights(weight_decay: f64) -> GradientTransformation {
    gt(optim::add_decayed_weights(weight_decay))
}

#[pyfunction]
#[pyo3(signature = (decay, nesterov = false))]
fn trace(decay: f64, nesterov: bool) -> GradientTransformation {
    gt(optim::trace(decay, nesterov))
}

#[pyfunction]
#[pyo3(signature = (*parts))]
fn chain(parts: Vec<GradientTransformation>) -> GradientTransformation {
    gt(optim::chain(parts.into_iter().map(|p| p.0).collect()))
}

#[pyfunction]
fn constant_schedule(value: f64) -> Schedule {
    Schedule(optim::constant(value))
}

#[pyfunction]
#[pyo3(signature = (init_value, transition_steps, decay_rate, staircase = false))]
fn exponential_decay(
    init_value: f64,
    transition_steps: usize,
    decay_rate: f64,
    staircase: bool,
) -> Schedule {
    Schedule(optim::exponential_decay(
        init_value,
        transition_steps,
        decay_rate,
        staircase,
    ))
}

#[pyfunction]
#[pyo3(signature = (init_value, decay_steps, alpha = 0.0))]
fn cosine_decay_schedule(init_value: f64, decay_steps: usize, alpha: f64) -> Schedule {
    Schedule(optim::cosine_decay(init_value, decay_steps, alpha))
}

#[pyfunction]
#[pyo3(signature = (init_value, peak_value, warmup_steps, decay_steps, end_value = 0.0))]
fn warmup_cosine_decay_schedule(
    init_value: f64,
    peak_value: f64,
    warmup_steps: usize,
    decay_steps: usize,
    end_value: f64,
) -> Schedule {
    Schedule(optim::warmup_cosine_decay(
        init_value,
        peak_value,
        warmup_steps,
        decay_steps,
        end_value,
    ))
}

#[pyfunction]
fn piecewise_constant_schedule(
    init_value: f64,
    boundaries_and_scales: Vec<(usize, f64)>,
) -> Schedule {
    Schedule(optim::piecewise_constant(init_value, boundaries_and_scales))
}

/// L-BFGS settings (`optim::Lbfgs`).
#[pyclass(frozen, from_py_object, module = "quabla._quabla")]
#[derive(Clone)]
pub struct Lbfgs(optim::Lbfgs);

#[pymethods]
impl Lbfgs {
    #[new]
    #[pyo3(signature = (memory_size = 10, max_linesearch_steps = 20, c1 = 1e-4, c2 = 0.9))]
    fn new(memory_size: usize, max_linesearch_steps: usize, c1: f64, c2: f64) -> Self {
        Lbfgs(optim::Lbfgs {
            memory: memory_size,
            max_linesearch_steps,
            c1,
            c2,
            ..optim::Lbfgs::default()
        })
    }

    fn init(&self, params: Vec<RawArray>) -> PyResult<Vec<RawArray>> {
        Ok(raws(self.0.init(&inners(&params)).py()?))
    }

    /// One step: `(params, state, value, step_size)`; `value_fn(params) -> scalar`.
    fn step(
        &self,
        value_fn: Py<PyAny>,
        params: Vec<RawArray>,
        state: Vec<RawArray>,
    ) -> PyResult<(Vec<RawArray>, Vec<RawArray>, RawArray, RawArray)> {
        let f = |p: &[quabla::Array]| -> quabla::Result<quabla::Array> {
            let mut out = crate::transforms::call_flat(&value_fn, p)?;
            out.pop()
                .ok_or_else(|| quabla::Error::Value("lbfgs: value_fn returned nothing".into()))
        };
        let s = self.0.step(&f, &inners(&params), &inners(&state)).py()?;
        Ok((
            raws(s.params),
            raws(s.state),
            s.value.into(),
            s.step_size.into(),
        ))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Lbfgs>()?;
    m.add_class::<Schedule>()?;
    m.add_class::<GradientTransformation>()?;
    m.add_function(wrap_pyfunction!(sgd, m)?)?;
    m.add_function(wrap_pyfunction!(adam, m)?)?;
    m.add_function(wrap_pyfunction!(adamw, m)?)?;
    m.add_function(wrap_pyfunction!(rmsprop, m)?)?;
    m.add_function(wrap_pyfunction!(clip_by_global_norm, m)?)?;
    m.add_function(wrap_pyfunction!(scale, m)?)?;
    m.add_function(wrap_pyfunction!(scale_by_adam, m)?)?;
    m.add_function(wrap_pyfunction!(scale_by_learning_rate, m)?)?;
    m.add_function(wrap_pyfunction!(add_decayed_weights, m)?)?;
    m.add_function(wrap_pyfunction!(trace, m)?)?;
    m.add_function(wrap_pyfunction!(chain, m)?)?;
    m.add_function(wrap_pyfunction!(constant_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(exponential_decay, m)?)?;
    m.add_function(wrap_pyfunction!(cosine_decay_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(warmup_cosine_decay_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(piecewise_constant_schedule, m)?)?;
    Ok(())
}
