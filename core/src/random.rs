//! Counter-based random numbers from threefry-2x32, as `jax.random` (JAX 0.10 with
//! `jax_threefry_partitionable`, its default).
//!
//! A key is a `u32[2]` array ([`key`]). The same key gives the same numbers on every
//! backend (to each backend's rounding of transcendental functions), in Rust and in Python
//! (`quabla.random` calls these functions), and JAX's numbers: [`split`], [`fold_in`],
//! [`bits`], [`uniform`] on `[0, 1)` and, on the CPU backend, [`normal`] bit for bit (its
//! inverse error function is the `erf_inv` primitive, whose CPU kernel is XLA's);
//! [`uniform_range`] to an ulp (XLA fuses the scaling into a fused multiply-add, an
//! operation QIR does not have).
//!
//! Everything is array operations, so keys may be traced: inside `jit`, `vmap` and loops.
//!
//! ```no_run
//! use quabla::{random, DType};
//! let k = random::key(0)?;
//! let [k1, k2] = random::split2(&k)?;
//! let x = random::normal(&k1, &[3, 2], DType::F32)?;
//! let u = random::uniform(&k2, &[5], DType::F64)?;
//! println!("{x}\n{u}");
//! # Ok::<(), quabla::Error>(())
//! ```

use crate::array::Array;
use crate::error::{Error, Result};
use crate::jit::{jit, Jit};
use crate::runtime::{default_device, Device};
use quabla_abi::DType;
use std::sync::{Arc, OnceLock};

/// Threefry's rotation amounts, even and odd groups of four rounds.
const ROTATIONS: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];
/// Threefry's key-schedule parity constant.
const PARITY: u32 = 0x1BD1_1BDA;

fn rotl(v: &Array, r: u32) -> Result<Array> {
    v.shift_left(r)?.bitwise_or(&v.shift_right_logical(32 - r)?)
}

/// Threefry-2x32 with 20 rounds (Salmon et al. 2011), as JAX's `threefry2x32_p`: `a` is
/// `[k1, k2, x0, x1]` (u32; the key words 0-d), the result `[y0, y1]`.
fn threefry2x32(a: &[Array]) -> Result<Vec<Array>> {
    let (k1, k2) = (&a[0], &a[1]);
    let ks = [
        k1.clone(),
        k2.clone(),
        k1.bitwise_xor(k2)?.bitwise_xor(PARITY)?,
    ];
    let mut x0 = (&a[2] + &ks[0])?;
    let mut x1 = (&a[3] + &ks[1])?;
    for i in 0..5 {
        for r in ROTATIONS[i % 2] {
            x0 = (&x0 + &x1)?;
            x1 = rotl(&x1, r)?.bitwise_xor(&x0)?;
        }
        x0 = (&x0 + &ks[(i + 1) % 3])?;
        x1 = ((&x1 + &ks[(i + 2) % 3])? + (i as u32 + 1))?;
    }
    Ok(vec![x0, x1])
}

/// The threefry-2x32 hash of the counter words `(x0, x1)` under the key words `(k1, k2)`
/// (all u32; the key words broadcast), as JAX's `threefry_2x32`: the building block of
/// every function here, for front ends that compose their own draws (Python's `fold_in`
/// of a traced integer).
///
/// ```no_run
/// # use quabla::{random, Array};
/// let w = |v: u32| Array::from_slice(&[v], &[]).unwrap();
/// let (y0, y1) = random::threefry_2x32(&w(0), &w(42), &w(0), &w(7)).unwrap();
/// ```
pub fn threefry_2x32(k1: &Array, k2: &Array, x0: &Array, x1: &Array) -> Result<(Array, Array)> {
    for (a, what) in [(k1, "k1"), (k2, "k2"), (x0, "x0"), (x1, "x1")] {
        if a.dtype() != DType::U32 {
            return Err(Error::dtype(format!(
                "threefry_2x32: {what} must be u32, got {}",
                a.tensor_type()
            )));
        }
    }
    if x0.shape() != x1.shape() || !k1.shape().is_empty() || !k2.shape().is_empty() {
        return Err(Error::shape(format!(
            "threefry_2x32: the key words must be 0-d and the counters one shape, got {}, {}, \
             {}, {}",
            k1.tensor_type(),
            k2.tensor_type(),
            x0.tensor_type(),
            x1.tensor_type()
        )));
    }
    let args = [k1.clone(), k2.clone(), x0.clone(), x1.clone()];
    let mut out = threefry().call(&args)?;
    let b = out
        .pop()
        .ok_or_else(|| Error::internal("threefry gave no words"))?;
    let a = out
        .pop()
        .ok_or_else(|| Error::internal("threefry gave one word"))?;
    Ok((a, b))
}

type Threefry = Jit<fn(&[Array]) -> Result<Vec<Array>>>;

/// The hash compiled once a signature (each call would otherwise be ~100 single ops).
fn threefry() -> &'static Threefry {
    static JITTED: OnceLock<Threefry> = OnceLock::new();
    JITTED.get_or_init(|| jit(threefry2x32 as fn(&[Array]) -> Result<Vec<Array>>))
}

fn check_key(key: &Array) -> Result<()> {
    if key.dtype() != DType::U32 || key.shape() != [2] {
        return Err(Error::dtype(format!(
            "a PRNG key is a u32[2] array (from random::key), got {}",
            key.tensor_type()
        )));
    }
    Ok(())
}

/// Word `i` of a key, as a 0-d array.
fn word(key: &Array, i: usize) -> Result<Array> {
    key.slice(&[i], &[i + 1], &[1])?.reshape(&[])
}

/// A key from a 64-bit seed: `[seed >> 32, seed & 0xFFFFFFFF]` (JAX's `PRNGKey` with x64;
/// a negative seed is its two's complement), on the default device.
///
/// ```no_run
/// let k = quabla::random::key(42).unwrap();
/// assert_eq!(k.to_vec::<u32>().unwrap(), vec![0, 42]);
/// ```
pub fn key(seed: i64) -> Result<Array> {
    key_on(&default_device()?, seed)
}

/// [`key`] on `device`.
///
/// ```no_run
/// # use quabla::random;
/// let k = random::key_on(&quabla::device("cpu")?, 42)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn key_on(device: &Arc<Device>, seed: i64) -> Result<Array> {
    let s = seed as u64;
    Array::from_slice_on(device, &[(s >> 32) as u32, s as u32], &[2])
}

/// The two threefry words for every position of `shape` (the counter is a 64-bit iota
/// whose high words are zero).
///
/// ```no_run
/// # use quabla::random;
/// let (hi, lo) = random::bits_pair(&random::key(0)?, &[4])?; // two u32[4]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn bits_pair(key: &Array, shape: &[usize]) -> Result<(Array, Array)> {
    check_key(key)?;
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .unwrap_or(usize::MAX);
    if n as u64 >= 1 << 32 {
        return Err(Error::value(format!(
            "random: at most 2^32 - 1 values per call, asked for {shape:?}"
        )));
    }
    let dims: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    let counts = key.iota_beside(DType::U32, &[n], 0)?.reshape(&dims)?;
    let zeros = counts.bitwise_and(0u32)?;
    threefry_2x32(&word(key, 0)?, &word(key, 1)?, &zeros, &counts)
}

/// `shape` new keys from `key`, as JAX's `split`: a `u32[shape..., 2]` array.
///
/// ```no_run
/// let k = quabla::random::key(0).unwrap();
/// let keys = quabla::random::split(&k, &[3]).unwrap();
/// assert_eq!(keys.shape(), &[3, 2]);
/// ```
pub fn split(key: &Array, shape: &[usize]) -> Result<Array> {
    let (a, b) = bits_pair(key, shape)?;
    stack_last(&a, &b)
}

/// Two new keys from `key` (JAX's `split(key)`, unpacked).
///
/// ```no_run
/// let k = quabla::random::key(0).unwrap();
/// let [k1, k2] = quabla::random::split2(&k).unwrap();
/// ```
pub fn split2(key: &Array) -> Result<[Array; 2]> {
    let keys = split(key, &[2])?;
    let row = |i: usize| keys.slice(&[i, 0], &[i + 1, 2], &[1, 1])?.reshape(&[2]);
    Ok([row(0)?, row(1)?])
}

/// `[a, b]` along a new last axis.
fn stack_last(a: &Array, b: &Array) -> Result<Array> {
    let last = a.ndim() as isize;
    Array::concatenate(&[&a.expand_dims(last)?, &b.expand_dims(last)?], -1)
}

/// A new key from `key` and 32 bits of `data`, as JAX's `fold_in`.
///
/// ```no_run
/// let k = quabla::random::key(0).unwrap();
/// let step_key = quabla::random::fold_in(&k, 7).unwrap();
/// ```
pub fn fold_in(key: &Array, data: u32) -> Result<Array> {
    check_key(key)?;
    let d = key.filled_beside(&[], data, DType::U32)?;
    let (a, b) = threefry_2x32(&word(key, 0)?, &word(key, 1)?, &d.bitwise_and(0u32)?, &d)?;
    stack_last(&a, &b)
}

/// Uniform random `u32` bits of `shape`, as JAX's `bits`.
///
/// ```no_run
/// # use quabla::random;
/// let words = random::bits(&random::key(0)?, &[2, 3])?; // u32[2, 3], as jax.random.bits
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn bits(key: &Array, shape: &[usize]) -> Result<Array> {
    let (a, b) = bits_pair(key, shape)?;
    a.bitwise_xor(&b)
}

fn float_dtype(dtype: DType, what: &str) -> Result<()> {
    match dtype {
        DType::F32 | DType::F64 => Ok(()),
        other => Err(Error::dtype(format!(
            "random::{what} makes floats; asked for {other}: use DType::F32 or DType::F64"
        ))),
    }
}

/// Floats in `[0, 1)` from the random bits, as JAX: in f32 the top 23 bits of `b1 ^ b2` as
/// a mantissa in `[1, 2)`, minus 1; in f64 all 64 bits (`b1` high), the top 52 exactly.
fn uniform01(key: &Array, shape: &[usize], dtype: DType) -> Result<Array> {
    float_dtype(dtype, "uniform")?;
    let (b1, b2) = bits_pair(key, shape)?;
    if dtype == DType::F32 {
        let mantissa = b1.bitwise_xor(&b2)?.shift_right_logical(9u32)?;
        return mantissa.bitwise_or(0x3F80_0000u32)?.bitcast(DType::F32)? - 1.0;
    }
    let hi = (b1.astype(DType::F64)? * 2f64.powi(-32))?;
    let lo = (b2.shift_right_logical(12u32)?.astype(DType::F64)? * 2f64.powi(-52))?;
    hi + lo
}

/// Uniform floats in `[0, 1)` of `shape`, as JAX's `uniform` (bit for bit).
///
/// ```no_run
/// # use quabla::{random, DType};
/// let u = random::uniform(&random::key(0).unwrap(), &[4], DType::F32).unwrap();
/// ```
pub fn uniform(key: &Array, shape: &[usize], dtype: DType) -> Result<Array> {
    uniform_range(key, shape, dtype, 0.0, 1.0)
}

/// Uniform floats in `[minval, maxval)`: `max(minval, u * (maxval - minval) + minval)` as
/// JAX computes it.
///
/// ```no_run
/// # use quabla::{random, DType};
/// let u = random::uniform_range(&random::key(0).unwrap(), &[4], DType::F64, -1.0, 4.0).unwrap();
/// ```
pub fn uniform_range(
    key: &Array,
    shape: &[usize],
    dtype: DType,
    minval: f64,
    maxval: f64,
) -> Result<Array> {
    let lo = key.filled_beside(&[], minval, dtype)?;
    let hi = key.filled_beside(&[], maxval, dtype)?;
    uniform_between(key, shape, dtype, &lo, &hi)
}

/// [`uniform_range`] with array bounds of `dtype` (broadcasting to `shape`).
///
/// ```no_run
/// # use quabla::{random, Array, DType};
/// let lo = Array::from_slice(&[0.0f32, 10.0], &[2])?;
/// let hi = Array::from_slice(&[1.0f32, 20.0], &[2])?;
/// let u = random::uniform_between(&random::key(1)?, &[3, 2], DType::F32, &lo, &hi)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn uniform_between(
    key: &Array,
    shape: &[usize],
    dtype: DType,
    lo: &Array,
    hi: &Array,
) -> Result<Array> {
    let f = uniform01(key, shape, dtype)?;
    lo.maximum(&((&f * &(hi - lo)?)? + lo)?)
}

/// Standard normal samples of `shape`: `sqrt(2) erf_inv(u)` with `u` uniform in `(-1, 1)`,
/// as JAX (bit for bit on the CPU backend, subnormals aside, which XLA flushes to zero).
///
/// ```no_run
/// # use quabla::{random, DType};
/// let z = random::normal(&random::key(0).unwrap(), &[1000], DType::F32).unwrap();
/// ```
pub fn normal(key: &Array, shape: &[usize], dtype: DType) -> Result<Array> {
    float_dtype(dtype, "normal")?;
    // The float just above -1 in `dtype` (-1 plus half an epsilon: the spacing below 1),
    // and sqrt(2) rounded to it.
    let (lo, sqrt2) = match dtype {
        DType::F32 => (-(1.0f32 - f32::EPSILON / 2.0) as f64, 2f32.sqrt() as f64),
        _ => (-(1.0 - f64::EPSILON / 2.0), 2f64.sqrt()),
    };
    let u = uniform_range(key, shape, dtype, lo, 1.0)?;
    u.erf_inv()? * sqrt2
}

/// The inverse error function of a float array, as accurate as the dtype allows: the
/// `erf_inv` primitive (Giles' polynomials, XLA's and JAX's `lax.erf_inv`), in f64 refined
/// by four Newton steps on `erf` (on `log(erfc)` in the tails, which keeps their relative
/// accuracy), where the polynomial alone is off by up to 1.1e-10 next to `±1`. `±1` map to
/// `±inf`. `scipy.special.erfinv` and `ndtri` in Python use it.
///
/// ```no_run
/// let x = quabla::Array::from_slice(&[0.5f64], &[1]).unwrap();
/// let y = quabla::random::erfinv(&x).unwrap(); // 0.4769362762044699
/// ```
pub fn erfinv(x: &Array) -> Result<Array> {
    float_dtype(x.dtype(), "erfinv")?;
    let y = x.erf_inv()?;
    if x.dtype() != DType::F64 {
        return Ok(y);
    }
    let refined = newton_refined(x, y)?;
    let inf = (x * f64::INFINITY)?;
    x.abs()?.eq(1.0)?.select(&inf, &refined)
}

/// Four Newton steps on `erf(y) = x` near 0, and in the tails (`|x| > 0.5`) on
/// `log(erfc(|y|)) = log(1 - |x|)`, whose terms stay accurate where `erf(y) - x` would
/// cancel to a few ulps of 1, and which is nearly quadratic in `y`, so the far tail (where
/// the f32 polynomial is off by percents) converges in as few steps.
fn newton_refined(x: &Array, mut y: Array) -> Result<Array> {
    let ax = x.abs()?;
    let tail = ax.gt(0.5)?;
    let inside = tail.bitwise_and(&ax.lt(1.0)?)?;
    let log_c = inside.select(&(1.0 - &ax)?, 0.5)?.log()?;
    let slope = 2.0 / std::f64::consts::PI.sqrt();
    for _ in 0..4 {
        let ay = y.abs()?;
        let ec = ay.erfc()?;
        let tail_step = ((&(&x.sign()? * &(&ec.log()? - &log_c)?)? * &ec)?
            / &(slope * &(&ay.neg()? * &ay)?.exp()?)?)?;
        let body_step = (&(&y.erf()? - x)? / &(slope * &(&y.neg()? * &y)?.exp()?)?)?;
        y = (&y + &tail.select(&tail_step, &body_step.neg()?)?)?;
    }
    Ok(y)
}
