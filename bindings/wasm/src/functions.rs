//! The numpy-style surface: array creation, elementwise math, reductions, shapes and
//! products, each as a free function (`q.exp(x)`) and, where numpy has one, as a method
//! (`x.exp()`). Binary operations take an `NDArray` or a number (a weak scalar: it takes the
//! array's dtype, as in JAX).

use crate::array::{expect_array, parse_dtype, usize_list, NDArray};
use crate::errors::{js_msg, IntoJsResult};
use crate::runtime::ensure_backend;
use quabla::{Array, Axes, DType, HostArray, Operand, TensorType};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

type R<T> = Result<T, JsValue>;

fn wrap(a: quabla::Result<Array>) -> R<NDArray> {
    Ok(NDArray::from(a.js()?))
}

/// The right-hand side of a binary operation: an array, or a number kept weak.
fn with_operand(
    other: &JsValue,
    f: impl FnOnce(Operand<'_>) -> quabla::Result<Array>,
) -> R<NDArray> {
    if let Some(x) = other.as_f64() {
        // JS has one number type: an integral value is a weak integer (int32 + 1 stays
        // int32, float32 + 1 stays float32), any other a weak float.
        if x.fract() == 0.0 && x.abs() < 9.0e15 {
            return wrap(f(Operand::from(x as i64)));
        }
        return wrap(f(Operand::from(x)));
    }
    let b = expect_array(other, "operand")?;
    wrap(f(Operand::Array(&b)))
}

/// Reduction axes: `undefined`/`null` for all, a number, or a list (negative from the end).
fn axes_of(v: &JsValue) -> R<Option<Vec<isize>>> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    let one = |x: JsValue| {
        x.as_f64()
            .filter(|x| x.fract() == 0.0)
            .map(|x| x as isize)
            .ok_or_else(|| js_msg("axis: expected an integer or a list of integers"))
    };
    if js_sys::Array::is_array(v) {
        let list: &js_sys::Array = v.unchecked_ref();
        return list.iter().map(one).collect::<R<Vec<_>>>().map(Some);
    }
    one(v.clone()).map(|a| Some(vec![a]))
}

/// Reductions over `axis` (all axes when omitted), as methods and free functions.
macro_rules! reductions {
    ($($name:ident: $doc:literal),* $(,)?) => {
        fn reduce_with(
            x: &Array,
            axis: &JsValue,
            keepdims: Option<bool>,
            f: impl FnOnce(&Array, Axes<'_>, bool) -> quabla::Result<Array>,
        ) -> R<NDArray> {
            let list = axes_of(axis)?;
            let axes = match &list {
                None => Axes::All,
                Some(l) => Axes::Some(l),
            };
            wrap(f(x, axes, keepdims.unwrap_or(false)))
        }

        #[wasm_bindgen]
        impl NDArray {
            $(
                #[doc = concat!($doc, " over `axis` (all axes when omitted).")]
                pub fn $name(&self, axis: JsValue, keepdims: Option<bool>) -> R<NDArray> {
                    reduce_with(&self.array()?, &axis, keepdims, |a, ax, k| a.$name(ax, k))
                }
            )*
        }

        pub mod reduction_functions {
            use super::*;
            $(
                #[doc = concat!($doc, " of an array over `axis` (all axes when omitted).")]
                #[wasm_bindgen]
                pub fn $name(x: &JsValue, axis: JsValue, keepdims: Option<bool>) -> R<NDArray> {
                    let a = expect_array(x, stringify!($name))?;
                    reduce_with(&a, &axis, keepdims, |a, ax, k| a.$name(ax, k))
                }
            )*
        }
    };
}

reductions!(sum: "Sum", mean: "Mean", max: "Maximum", min: "Minimum");

macro_rules! unary {
    ($($name:ident $(as $js:literal)?),* $(,)?) => {
        #[wasm_bindgen]
        impl NDArray {
            $(
                #[doc = concat!("Elementwise `", stringify!($name), "`.")]
                pub fn $name(&self) -> R<NDArray> {
                    wrap(self.array()?.$name())
                }
            )*
        }
        pub mod unary_functions {
            use super::*;
            $(
                #[doc = concat!("Elementwise `", stringify!($name), "` of an array or number.")]
                #[wasm_bindgen $((js_name = $js))?]
                pub fn $name(x: &JsValue) -> R<NDArray> {
                    wrap(expect_array(x, stringify!($name))?.$name())
                }
            )*
        }
    };
}

unary!(
    exp, exp2, expm1, log, log1p, sqrt, rsqrt, cbrt, sin, cos, tan, asin, acos, atan, sinh, cosh,
    tanh, asinh, acosh, atanh, erf, erfc, floor, ceil, round, neg as "negative", abs, sign,
    logistic as "sigmoid",
);

macro_rules! binary {
    ($($name:ident $(as $js:literal)?),* $(,)?) => {
        #[wasm_bindgen]
        impl NDArray {
            $(
                #[doc = concat!("Elementwise `", stringify!($name), "` with broadcasting.")]
                pub fn $name(&self, other: &JsValue) -> R<NDArray> {
                    let a = self.array()?;
                    with_operand(other, |b| a.$name(b))
                }
            )*
        }
        pub mod binary_functions {
            use super::*;
            $(
                #[doc = concat!("Elementwise `", stringify!($name), "` of two arrays (or numbers).")]
                #[wasm_bindgen $((js_name = $js))?]
                pub fn $name(x: &JsValue, y: &JsValue) -> R<NDArray> {
                    let a = expect_array(x, stringify!($name))?;
                    with_operand(y, |b| a.$name(b))
                }
            )*
        }
    };
}

binary!(
    add, sub as "subtract", mul as "multiply", div as "divide", pow as "power", rem as "remainder",
    maximum, minimum, atan2 as "arctan2", eq as "equal", ne as "notEqual", lt as "less",
    le as "lessEqual", gt as "greater", ge as "greaterEqual",
);

#[wasm_bindgen]
impl NDArray {
    /// `x * x`.
    pub fn square(&self) -> R<NDArray> {
        let a = self.array()?;
        wrap(a.mul(&a))
    }

    /// Matrix product with numpy's `@` rules.
    pub fn matmul(&self, other: &JsValue) -> R<NDArray> {
        wrap(self.array()?.matmul(&expect_array(other, "matmul")?))
    }

    /// The same elements in another shape (one entry may be -1).
    pub fn reshape(&self, shape: &JsValue) -> R<NDArray> {
        let s = axes_of(shape)?.ok_or_else(|| js_msg("reshape: give the new shape"))?;
        wrap(self.array()?.reshape(&s))
    }

    /// Axes permuted (reversed when `perm` is omitted).
    pub fn transpose(&self, perm: JsValue) -> R<NDArray> {
        let a = self.array()?;
        let perm = if perm.is_undefined() || perm.is_null() {
            (0..a.ndim()).rev().collect()
        } else {
            usize_list(&perm, "transpose")?
        };
        wrap(a.transpose(&perm))
    }

    /// The elements from `start` up to `limit` (exclusive) with `strides` (default 1) per
    /// axis, as `lax.slice`.
    pub fn slice(&self, start: &JsValue, limit: &JsValue, strides: JsValue) -> R<NDArray> {
        let a = self.array()?;
        let start = usize_list(start, "slice start")?;
        let limit = usize_list(limit, "slice limit")?;
        let strides = if strides.is_undefined() || strides.is_null() {
            vec![1; start.len()]
        } else {
            usize_list(&strides, "slice strides")?
        };
        wrap(a.slice(&start, &limit, &strides))
    }

    /// Converted to `dtype` (`float32`, `int32`, `uint32`, `bool`).
    pub fn astype(&self, dtype: &str) -> R<NDArray> {
        wrap(self.array()?.astype(parse_dtype(dtype)?))
    }
}

/// An array from a number, a (nested) list of numbers, or a typed array with a `shape`.
/// The dtype follows the data (`Int32Array` gives int32, numbers give float32) unless
/// `dtype` is given.
#[wasm_bindgen]
pub fn array(data: &JsValue, shape: JsValue, dtype: Option<String>) -> R<NDArray> {
    ensure_backend();
    let (values, natural_dtype, nested_shape) = host_values(data)?;
    let shape = if shape.is_undefined() || shape.is_null() {
        nested_shape
    } else {
        usize_list(&shape, "shape")?
    };
    let n: usize = shape.iter().product();
    if n != values.len() {
        return Err(js_msg(&format!(
            "array: {} values do not fill shape {shape:?} ({n} elements)",
            values.len()
        )));
    }
    let dtype = match dtype {
        Some(d) => parse_dtype(&d)?,
        None => natural_dtype,
    };
    let host = host_array(&values, &shape, dtype)?;
    wrap(Array::from_host_on(&quabla::default_device().js()?, &host))
}

fn host_array(values: &[f64], shape: &[usize], dtype: DType) -> R<HostArray> {
    let ty = TensorType::new(dtype, shape.to_vec());
    let bytes: Vec<u8> = match dtype {
        DType::F32 => values
            .iter()
            .flat_map(|v| (*v as f32).to_le_bytes())
            .collect(),
        DType::I32 => values
            .iter()
            .flat_map(|v| (*v as i32).to_le_bytes())
            .collect(),
        DType::U32 => values
            .iter()
            .flat_map(|v| (*v as u32).to_le_bytes())
            .collect(),
        DType::Bool => values.iter().map(|v| u8::from(*v != 0.0)).collect(),
        DType::F64 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    };
    HostArray::new(ty, bytes).map_err(|e| js_msg(&e))
}

/// The numbers of `data`, the dtype they suggest and the shape of their nesting.
fn host_values(data: &JsValue) -> R<(Vec<f64>, DType, Vec<usize>)> {
    if let Some(x) = data.as_f64() {
        return Ok((vec![x], DType::F32, vec![]));
    }
    if let Some(b) = data.as_bool() {
        return Ok((vec![f64::from(u8::from(b))], DType::Bool, vec![]));
    }
    macro_rules! typed {
        ($t:ty, $d:expr) => {
            if let Some(a) = data.dyn_ref::<$t>() {
                let v: Vec<f64> = a.to_vec().into_iter().map(f64::from).collect();
                let n = v.len();
                return Ok((v, $d, vec![n]));
            }
        };
    }
    typed!(js_sys::Float32Array, DType::F32);
    typed!(js_sys::Float64Array, DType::F32);
    typed!(js_sys::Int32Array, DType::I32);
    typed!(js_sys::Uint32Array, DType::U32);
    typed!(js_sys::Uint8Array, DType::Bool);
    if js_sys::Array::is_array(data) {
        let list: &js_sys::Array = data.unchecked_ref();
        let mut values = Vec::new();
        let mut inner: Option<(DType, Vec<usize>)> = None;
        for x in list.iter() {
            let (v, d, s) = host_values(&x)?;
            match &inner {
                Some((_, s0)) if *s0 != s => {
                    return Err(js_msg(
                        "array: nested lists must be rectangular (rows of equal length)",
                    ))
                }
                _ => inner = Some((d, s)),
            }
            values.extend(v);
        }
        let (d, s) = inner.unwrap_or((DType::F32, vec![]));
        let mut shape = vec![list.length() as usize];
        shape.extend(s);
        return Ok((values, d, shape));
    }
    Err(js_msg(
        "array: expected a number, a typed array or a (nested) list of numbers",
    ))
}

fn filled(shape: &JsValue, value: f64, dtype: Option<String>) -> R<NDArray> {
    ensure_backend();
    let shape = usize_list(shape, "shape")?;
    let dtype = match dtype {
        Some(d) => parse_dtype(&d)?,
        None => DType::F32,
    };
    wrap(Array::full(&shape, value, dtype))
}

/// An array of zeros (float32 unless `dtype` says otherwise).
#[wasm_bindgen]
pub fn zeros(shape: &JsValue, dtype: Option<String>) -> R<NDArray> {
    filled(shape, 0.0, dtype)
}

/// An array of ones.
#[wasm_bindgen]
pub fn ones(shape: &JsValue, dtype: Option<String>) -> R<NDArray> {
    filled(shape, 1.0, dtype)
}

/// An array filled with `value`.
#[wasm_bindgen]
pub fn full(shape: &JsValue, value: f64, dtype: Option<String>) -> R<NDArray> {
    filled(shape, value, dtype)
}

/// `num` evenly spaced float32 values from `start` to `stop` inclusive (numpy's linspace).
#[wasm_bindgen]
pub fn linspace(start: f64, stop: f64, num: usize) -> R<NDArray> {
    let step = if num > 1 {
        (stop - start) / (num - 1) as f64
    } else {
        0.0
    };
    let v: Vec<f64> = (0..num)
        .map(|i| {
            if i + 1 == num {
                stop
            } else {
                start + step * i as f64
            }
        })
        .collect();
    ensure_backend();
    let host = host_array(&v, &[num], DType::F32)?;
    wrap(Array::from_host_on(&quabla::default_device().js()?, &host))
}

/// 0, 1, ..., n-1 as int32.
#[wasm_bindgen]
pub fn arange(n: usize) -> R<NDArray> {
    ensure_backend();
    wrap(Array::arange(n))
}

/// `x * x`.
#[wasm_bindgen]
pub fn square(x: &JsValue) -> R<NDArray> {
    let a = expect_array(x, "square")?;
    wrap(a.mul(&a))
}

/// Matrix product with numpy's `@` rules.
#[wasm_bindgen]
pub fn matmul(x: &JsValue, y: &JsValue) -> R<NDArray> {
    wrap(expect_array(x, "matmul")?.matmul(&expect_array(y, "matmul")?))
}

/// `cond ? x : y` elementwise (`cond` a bool array), numpy's `where`.
#[wasm_bindgen(js_name = "where")]
pub fn where_(cond: &JsValue, x: &JsValue, y: &JsValue) -> R<NDArray> {
    let c = expect_array(cond, "where")?;
    let a = expect_array(x, "where")?;
    with_operand(y, |b| c.select(&a, b))
}

/// The arrays joined along `axis`.
#[wasm_bindgen]
pub fn concatenate(arrays: &js_sys::Array, axis: Option<i32>) -> R<NDArray> {
    let list = arrays
        .iter()
        .map(|v| expect_array(&v, "concatenate"))
        .collect::<R<Vec<_>>>()?;
    let refs: Vec<&Array> = list.iter().collect();
    wrap(Array::concatenate(&refs, axis.unwrap_or(0) as isize))
}

/// The arrays stacked along a new `axis`.
#[wasm_bindgen]
pub fn stack(arrays: &js_sys::Array, axis: Option<i32>) -> R<NDArray> {
    let axis = axis.unwrap_or(0) as isize;
    let list = arrays
        .iter()
        .map(|v| expect_array(&v, "stack")?.expand_dims(axis).js())
        .collect::<R<Vec<_>>>()?;
    let refs: Vec<&Array> = list.iter().collect();
    wrap(Array::concatenate(&refs, axis))
}

/// The same elements in another shape.
#[wasm_bindgen]
pub fn reshape(x: &JsValue, shape: &JsValue) -> R<NDArray> {
    let s = axes_of(shape)?.ok_or_else(|| js_msg("reshape: give the new shape"))?;
    wrap(expect_array(x, "reshape")?.reshape(&s))
}

/// The n x n identity matrix (float32).
#[wasm_bindgen]
pub fn eye(n: usize) -> R<NDArray> {
    ensure_backend();
    let v: Vec<f64> = (0..n * n)
        .map(|k| if k / n == k % n { 1.0 } else { 0.0 })
        .collect();
    let host = host_array(&v, &[n, n], DType::F32)?;
    wrap(Array::from_host_on(&quabla::default_device().js()?, &host))
}
