//! Learning-rate schedules (optax's), as functions of the step count (an i32 scalar array).

use crate::array::Array;
use crate::error::Result;
use quabla_abi::DType;
use std::sync::Arc;

/// A schedule: the learning rate at a step count (i32 scalar) in the given float dtype.
pub type Schedule = Arc<dyn Fn(&Array, DType) -> Result<Array> + Send + Sync>;

/// A fixed learning rate or a schedule of the step count.
#[derive(Clone)]
pub enum LearningRate {
    Constant(f64),
    Schedule(Schedule),
}

impl From<f64> for LearningRate {
    fn from(v: f64) -> Self {
        LearningRate::Constant(v)
    }
}

impl From<Schedule> for LearningRate {
    fn from(s: Schedule) -> Self {
        LearningRate::Schedule(s)
    }
}

fn count_as(count: &Array, dtype: DType) -> Result<Array> {
    count.astype(dtype)
}

/// Always `value`.
///
/// ```no_run
/// # use quabla::optim;
/// let opt = optim::sgd(optim::constant(0.1), None, false); // the same as sgd(0.1, ..)
/// ```
pub fn constant(value: f64) -> Schedule {
    Arc::new(move |count, d| count_as(count, d)?.full_like(value))
}

/// `init * rate^(count / transition_steps)` (the exponent floored when `staircase`).
///
/// ```no_run
/// # use quabla::optim;
/// // Halves every 1000 steps.
/// let opt = optim::adam(optim::exponential_decay(1e-3, 1000, 0.5, false));
/// ```
pub fn exponential_decay(
    init: f64,
    transition_steps: usize,
    decay_rate: f64,
    staircase: bool,
) -> Schedule {
    Arc::new(move |count, d| {
        let mut p = (count_as(count, d)? / transition_steps as f64)?;
        if staircase {
            p = p.floor()?;
        }
        p.full_like(decay_rate)?.pow(&p)? * init
    })
}

/// `init * ((1 - alpha) * 0.5 * (1 + cos(pi * min(count, steps) / steps)) + alpha)`.
///
/// ```no_run
/// # use quabla::optim;
/// let opt = optim::adam(optim::cosine_decay(1e-3, 5000, 0.01));
/// ```
pub fn cosine_decay(init: f64, decay_steps: usize, alpha: f64) -> Schedule {
    Arc::new(move |count, d| {
        let c = count_as(count, d)?.minimum(decay_steps as f64)?;
        let cosine = (((&c * (std::f64::consts::PI / decay_steps as f64))?.cos()? + 1.0)? * 0.5)?;
        ((cosine * (1.0 - alpha))? + alpha)? * init
    })
}

/// Linear warmup from `init` to `peak` over `warmup_steps`, then cosine decay to `end` at
/// `decay_steps` (counted from the start, as optax).
///
/// ```no_run
/// # use quabla::optim;
/// // 0 -> 1e-3 over 100 steps, then down to 1e-5 at step 10,000.
/// let opt = optim::adam(optim::warmup_cosine_decay(0.0, 1e-3, 100, 10_000, 1e-5));
/// ```
pub fn warmup_cosine_decay(
    init: f64,
    peak: f64,
    warmup_steps: usize,
    decay_steps: usize,
    end: f64,
) -> Schedule {
    let cos = cosine_decay(
        peak,
        decay_steps.saturating_sub(warmup_steps).max(1),
        if peak != 0.0 { end / peak } else { 0.0 },
    );
    Arc::new(move |count, d| {
        let c = count_as(count, d)?;
        let warm = ((&c * ((peak - init) / warmup_steps.max(1) as f64))? + init)?;
        let after = cos(&(count - warmup_steps as i32)?, d)?;
        c.lt(warmup_steps as f64)?.select(&warm, &after)
    })
}

/// `init` scaled by each `scale` whose `boundary` the count has reached.
///
/// ```no_run
/// # use quabla::optim;
/// // 1e-2, then 1e-3 from step 500, then 1e-4 from step 2000.
/// let opt = optim::adam(optim::piecewise_constant(1e-2, vec![(500, 0.1), (2000, 0.1)]));
/// ```
pub fn piecewise_constant(init: f64, boundaries_and_scales: Vec<(usize, f64)>) -> Schedule {
    Arc::new(move |count, d| {
        let mut v = count_as(count, d)?.full_like(init)?;
        for (b, s) in &boundaries_and_scales {
            v = count.lt(*b as i32)?.select(&v, &(&v * *s)?)?;
        }
        Ok(v)
    })
}
