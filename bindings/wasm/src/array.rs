//! `NDArray`, the JavaScript face of `quabla::Array`, and reading arrays back.

use crate::errors::{js_msg, IntoJsResult};
use crate::runtime::{download, ensure_backend};
use js_sys::{Float32Array, Float64Array, Int32Array, Promise, Reflect, Uint32Array, Uint8Array};
use quabla::{Array, DType, HostArray};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

thread_local! {
    // Every live NDArray by id, so that a JS value (an NDArray inside a list, or an argument
    // typed `any`) can be turned back into its array without taking it from its owner.
    static LIVE: RefCell<HashMap<u32, Array>> = RefCell::new(HashMap::new());
    static NEXT_ID: Cell<u32> = const { Cell::new(1) };
}

/// An n-dimensional array on the chosen backend (or a traced value inside `jit`, `grad`...).
/// Freed when garbage-collected, or at once with `free()`.
#[wasm_bindgen]
pub struct NDArray {
    id: u32,
}

impl From<Array> for NDArray {
    fn from(a: Array) -> NDArray {
        let id = NEXT_ID.with(|n| {
            let id = n.get();
            n.set(id.wrapping_add(1).max(1));
            id
        });
        LIVE.with(|l| l.borrow_mut().insert(id, a));
        NDArray { id }
    }
}

impl Drop for NDArray {
    fn drop(&mut self) {
        LIVE.with(|l| l.borrow_mut().remove(&self.id));
    }
}

impl NDArray {
    /// The array behind this handle.
    pub fn array(&self) -> Result<Array, JsValue> {
        LIVE.with(|l| l.borrow().get(&self.id).cloned())
            .ok_or_else(|| js_msg("this NDArray was freed"))
    }
}

impl NDArray {
    /// A second handle to the same array (for Rust callers; JS shares objects instead).
    pub fn clone_handle(&self) -> Result<NDArray, JsValue> {
        Ok(NDArray::from(self.array()?))
    }

    /// A handle to the array of a JS value that is an `NDArray`.
    pub fn from_js(v: &JsValue) -> Result<NDArray, JsValue> {
        match array_of(v).map_err(|e| js_msg(&e))? {
            Some(a) => Ok(NDArray::from(a)),
            None => Err(js_msg("expected an NDArray")),
        }
    }
}

/// The array of a JS value when it is an `NDArray` (`None` for anything else).
pub fn array_of(v: &JsValue) -> Result<Option<Array>, String> {
    if !v.is_object() {
        return Ok(None);
    }
    let Some(id) = Reflect::get(v, &"__quablaId".into())
        .ok()
        .and_then(|x| x.as_f64())
    else {
        return Ok(None);
    };
    LIVE.with(|l| l.borrow().get(&(id as u32)).cloned())
        .map(Some)
        .ok_or_else(|| "an NDArray that was freed".to_string())
}

/// A JS value that must be an `NDArray`, or a number (a 0-d f32 array).
pub fn expect_array(v: &JsValue, what: &str) -> Result<Array, JsValue> {
    if let Some(a) = array_of(v).map_err(|e| js_msg(&e))? {
        return Ok(a);
    }
    if let Some(x) = v.as_f64() {
        ensure_backend();
        return Ok(Array::scalar(x as f32).js()?);
    }
    Err(js_msg(&format!("{what}: expected an NDArray or a number")))
}

/// Parses a dtype name: numpy's (`float32`, `int32`, `uint32`, `bool`) or QIR's (`f32`...).
pub fn parse_dtype(name: &str) -> Result<DType, JsValue> {
    DType::from_numpy_name(name).ok_or_else(|| {
        js_msg(&format!(
            "unknown dtype `{name}`: use float32, int32, uint32 or bool"
        ))
    })
}

/// A host array as the matching typed array (bool as `Uint8Array` of 0/1).
pub fn typed_array(h: &HostArray) -> Result<JsValue, JsValue> {
    let err = |e: String| js_msg(&e);
    Ok(match h.ty.dtype {
        DType::F32 => Float32Array::from(h.to_vec::<f32>().map_err(err)?.as_slice()).into(),
        DType::F64 => Float64Array::from(h.to_vec::<f64>().map_err(err)?.as_slice()).into(),
        DType::I32 => Int32Array::from(h.to_vec::<i32>().map_err(err)?.as_slice()).into(),
        DType::U32 => Uint32Array::from(h.to_vec::<u32>().map_err(err)?.as_slice()).into(),
        DType::Bool => Uint8Array::from(h.bytes.as_slice()).into(),
    })
}

#[wasm_bindgen]
impl NDArray {
    /// Identifies the array when it is passed inside lists and objects.
    #[wasm_bindgen(getter, js_name = "__quablaId")]
    pub fn quabla_id(&self) -> u32 {
        self.id
    }

    /// The shape, as a list of numbers.
    #[wasm_bindgen(getter, unchecked_return_type = "number[]")]
    pub fn shape(&self) -> Result<JsValue, JsValue> {
        let a = self.array()?;
        Ok(a.shape()
            .iter()
            .map(|&d| JsValue::from(d as f64))
            .collect::<js_sys::Array>()
            .into())
    }

    /// `float32`, `int32`, `uint32` or `bool`.
    #[wasm_bindgen(getter)]
    pub fn dtype(&self) -> Result<String, JsValue> {
        Ok(self.array()?.dtype().numpy_name().into())
    }

    /// The number of elements.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> Result<usize, JsValue> {
        Ok(self.array()?.size())
    }

    /// The number of axes.
    #[wasm_bindgen(getter)]
    pub fn ndim(&self) -> Result<usize, JsValue> {
        Ok(self.array()?.ndim())
    }

    /// The elements, row-major, as a typed array (`Float32Array` for float32). Works on
    /// every backend: on WebGPU it waits for the copy without blocking the page.
    #[wasm_bindgen(
        unchecked_return_type = "Promise<Float32Array | Int32Array | Uint32Array | Uint8Array>"
    )]
    pub fn data(&self) -> Result<Promise, JsValue> {
        let a = self.array()?;
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            let h = download(&a).await.map_err(JsValue::from)?;
            typed_array(&h).map_err(JsValue::from)
        }))
    }

    /// The elements at once; only where reads need not wait (the CPU backend).
    #[wasm_bindgen(js_name = dataSync)]
    pub fn data_sync(&self) -> Result<JsValue, JsValue> {
        typed_array(&self.array()?.to_host().js()?)
    }

    /// The single element of a size-1 array, as a number (CPU backend; else `await data()`).
    pub fn item(&self) -> Result<f64, JsValue> {
        let a = self.array()?;
        if a.size() != 1 {
            return Err(js_msg(&format!(
                "item() needs a size-1 array, this one has shape {:?}",
                a.shape()
            )));
        }
        let h = a.astype(DType::F32).js()?.to_host().js()?;
        Ok(h.to_vec::<f32>().map_err(|e| js_msg(&e))?[0] as f64)
    }

    /// Like `Array(float32[3] on cpu)`.
    #[wasm_bindgen(js_name = toString)]
    pub fn to_string_js(&self) -> String {
        match self.array() {
            Ok(a) => format!("{a:?}"),
            Err(_) => "NDArray(freed)".into(),
        }
    }
}

/// A JS number list (or a single number) as a list of non-negative integers.
pub fn usize_list(v: &JsValue, what: &str) -> Result<Vec<usize>, JsValue> {
    if let Some(x) = v.as_f64() {
        return Ok(vec![non_negative(x, what)?]);
    }
    if !js_sys::Array::is_array(v) {
        return Err(js_msg(&format!("{what}: expected a list of integers")));
    }
    let list: &js_sys::Array = v.unchecked_ref();
    list.iter()
        .map(|x| {
            x.as_f64()
                .ok_or_else(|| js_msg(&format!("{what}: expected numbers")))
                .and_then(|x| non_negative(x, what))
        })
        .collect()
}

fn non_negative(x: f64, what: &str) -> Result<usize, JsValue> {
    if x >= 0.0 && x.fract() == 0.0 && x < 4294967296.0 {
        Ok(x as usize)
    } else {
        Err(js_msg(&format!(
            "{what}: {x} is not a non-negative integer"
        )))
    }
}
