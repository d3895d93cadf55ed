//! Pytrees of JavaScript values: an `NDArray` (or a number, as a weak f32 scalar) is a leaf;
//! JS arrays and plain objects (keys in sorted order, as JAX sorts dict keys) are nodes.
//! Transformations flatten their arguments to a list of arrays and rebuild the results.

use crate::array::{array_of, NDArray};
use js_sys::{Object, Reflect};
use quabla::Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The structure of a pytree without its leaves.
#[derive(Clone, Debug, PartialEq)]
pub enum Tree {
    Leaf,
    List(Vec<Tree>),
    Dict(Vec<(String, Tree)>),
}

impl Tree {
    /// How many leaves the structure holds.
    pub fn leaves(&self) -> usize {
        match self {
            Tree::Leaf => 1,
            Tree::List(v) => v.iter().map(Tree::leaves).sum(),
            Tree::Dict(v) => v.iter().map(|(_, t)| t.leaves()).sum(),
        }
    }
}

/// Splits `v` into its structure and its leaves (appended to `out`).
pub fn flatten(v: &JsValue, out: &mut Vec<Array>) -> Result<Tree, String> {
    if let Some(a) = array_of(v)? {
        out.push(a);
        return Ok(Tree::Leaf);
    }
    if let Some(x) = v.as_f64() {
        crate::runtime::ensure_backend();
        out.push(Array::scalar(x as f32).map_err(|e| e.to_string())?);
        return Ok(Tree::Leaf);
    }
    if js_sys::Array::is_array(v) {
        let list: &js_sys::Array = v.unchecked_ref();
        let mut items = Vec::with_capacity(list.length() as usize);
        for x in list.iter() {
            items.push(flatten(&x, out)?);
        }
        return Ok(Tree::List(items));
    }
    if v.is_object() && !v.is_function() {
        let obj: &Object = v.unchecked_ref();
        let mut keys: Vec<String> = Object::keys(obj)
            .iter()
            .filter_map(|k| k.as_string())
            .collect();
        keys.sort();
        let mut items = Vec::with_capacity(keys.len());
        for k in keys {
            let x = Reflect::get(obj, &JsValue::from_str(&k)).map_err(|_| format!("key `{k}`"))?;
            let t = flatten(&x, out).map_err(|e| format!("{k}: {e}"))?;
            items.push((k, t));
        }
        return Ok(Tree::Dict(items));
    }
    Err(format!(
        "expected an NDArray, a number, or a list/object of them, got {}",
        describe(v)
    ))
}

fn describe(v: &JsValue) -> String {
    if v.is_undefined() {
        "undefined (did the function forget to return?)".into()
    } else if v.is_null() {
        "null".into()
    } else if v.is_function() {
        "a function".into()
    } else if v.as_string().is_some() {
        "a string".into()
    } else {
        format!("{v:?}")
    }
}

/// Rebuilds a value of structure `tree` from `leaves` (taken from the front).
pub fn unflatten(tree: &Tree, leaves: &mut std::vec::IntoIter<Array>) -> JsValue {
    match tree {
        Tree::Leaf => match leaves.next() {
            Some(a) => NDArray::from(a).into(),
            None => JsValue::UNDEFINED,
        },
        Tree::List(items) => {
            let out = js_sys::Array::new();
            for t in items {
                out.push(&unflatten(t, leaves));
            }
            out.into()
        }
        Tree::Dict(items) => {
            let out = Object::new();
            for (k, t) in items {
                let _ = Reflect::set(&out, &JsValue::from_str(k), &unflatten(t, leaves));
            }
            out.into()
        }
    }
}

/// Flattens each argument separately: the structures per argument and all leaves.
pub fn flatten_args(args: &js_sys::Array) -> Result<(Vec<Tree>, Vec<Array>), String> {
    let mut leaves = Vec::new();
    let mut trees = Vec::new();
    for (i, a) in args.iter().enumerate() {
        trees.push(flatten(&a, &mut leaves).map_err(|e| format!("argument {i}: {e}"))?);
    }
    Ok((trees, leaves))
}

/// The JS arguments of structures `trees` rebuilt from the flat `leaves`.
pub fn unflatten_args(trees: &[Tree], leaves: &[Array]) -> js_sys::Array {
    let mut it = leaves.to_vec().into_iter();
    let out = js_sys::Array::new();
    for t in trees {
        out.push(&unflatten(t, &mut it));
    }
    out
}
