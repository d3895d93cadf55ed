//! `grad`, `valueAndGrad`, `vmap`, `jit`, `jvp`, `hessian` over JavaScript functions.
//!
//! A JS function is traced like a Rust closure: the core hands it `NDArray`s wrapping traced
//! values, it returns arrays (or a pytree of them), and the transformation works on the
//! recorded program. Arguments and results are flattened to lists of arrays on the way in
//! and rebuilt on the way out (`tree.rs`).

use crate::array::NDArray;
use crate::errors::{js_msg, IntoJsResult, JsException};
use crate::tree::{flatten, flatten_args, unflatten, unflatten_args, Tree};
use js_sys::Function;
use quabla::Array;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

type R<T> = Result<T, JsValue>;

fn callback_error(msg: String) -> quabla::Error {
    quabla::Error::Callback(Box::new(JsException::message(msg)))
}

fn exception_message(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// The structure of the last result of a traced function.
type OutTree = Rc<RefCell<Option<Tree>>>;

/// `f` as a function of flat arrays: rebuilds the JS arguments of structures `trees`, calls
/// `f`, and flattens what it returns (recording that structure in `out`).
fn flat_fn(
    f: Function,
    trees: Vec<Tree>,
    out: OutTree,
) -> impl Fn(&[Array]) -> quabla::Result<Vec<Array>> {
    move |leaves: &[Array]| {
        let args = unflatten_args(&trees, leaves);
        let r = f
            .apply(&JsValue::NULL, &args)
            .map_err(|e| JsException::carry(exception_message(&e), e))?;
        let mut flat = Vec::new();
        let tree = flatten(&r, &mut flat)
            .map_err(|e| callback_error(format!("the function's result: {e}")))?;
        *out.borrow_mut() = Some(tree);
        Ok(flat)
    }
}

/// A transformed function; JavaScript sees it as a plain variadic function.
#[wasm_bindgen]
pub struct Transformed {
    call: Rc<dyn Fn(js_sys::Array) -> R<JsValue>>,
}

#[wasm_bindgen]
impl Transformed {
    /// Calls the function with a list of arguments.
    pub fn call(&self, args: js_sys::Array) -> R<JsValue> {
        (self.call)(args)
    }
}

fn as_function(call: impl Fn(js_sys::Array) -> R<JsValue> + 'static) -> R<Function> {
    let t = JsValue::from(Transformed {
        call: Rc::new(call),
    });
    let make = Function::new_with_args("t", "return (...args) => t.call(args);");
    make.call1(&JsValue::NULL, &t)
        .map_err(|e| js_msg(&exception_message(&e)))?
        .dyn_into::<Function>()
        .map_err(|_| js_msg("could not make a JS function"))
}

/// Which arguments to differentiate: a number (the result mirrors that argument) or a list
/// (the result is a list).
struct ArgNums {
    list: Vec<usize>,
    single: bool,
}

fn argnums_of(v: &JsValue) -> R<ArgNums> {
    if v.is_undefined() || v.is_null() {
        return Ok(ArgNums {
            list: vec![0],
            single: true,
        });
    }
    let list = crate::array::usize_list(v, "argnums")?;
    Ok(ArgNums {
        single: !js_sys::Array::is_array(v),
        list,
    })
}

/// The flat leaf indices of the arguments `argnums`.
fn leaf_indices(trees: &[Tree], argnums: &[usize]) -> R<Vec<usize>> {
    let mut starts = Vec::with_capacity(trees.len());
    let mut at = 0;
    for t in trees {
        starts.push(at);
        at += t.leaves();
    }
    let mut out = Vec::new();
    for &k in argnums {
        let t = trees.get(k).ok_or_else(|| {
            js_msg(&format!(
                "argnums: argument {k} does not exist (the function got {})",
                trees.len()
            ))
        })?;
        out.extend(starts[k]..starts[k] + t.leaves());
    }
    Ok(out)
}

/// Gradients (flat, in `argnums` order) rebuilt into the structures of those arguments.
fn gradients_js(trees: &[Tree], argnums: &ArgNums, flat: Vec<Array>) -> JsValue {
    let mut it = flat.into_iter();
    if argnums.single {
        return unflatten(&trees[argnums.list[0]], &mut it);
    }
    let out = js_sys::Array::new();
    for &k in &argnums.list {
        out.push(&unflatten(&trees[k], &mut it));
    }
    out.into()
}

/// `f`'s value and its gradients (in the structure of the `argnums` arguments) at `args`.
fn value_and_gradients(
    f: &Function,
    argnums: &ArgNums,
    args: &js_sys::Array,
) -> R<(Array, JsValue)> {
    let (trees, leaves) = flatten_args(args).map_err(|e| js_msg(&e))?;
    let idx = leaf_indices(&trees, &argnums.list)?;
    let g = flat_fn(f.clone(), trees.clone(), OutTree::default());
    let mut r = quabla::ad::value_and_grad(g, &idx, false)(&leaves).js()?;
    let grads = r.split_off(1);
    Ok((r.remove(0), gradients_js(&trees, argnums, grads)))
}

/// The gradient of a scalar-valued `f` with respect to argument `argnums` (default 0; a list
/// gives a list of gradients), as `jax.grad`.
#[wasm_bindgen(unchecked_return_type = "(...args: any[]) => any")]
pub fn grad(f: Function, argnums: JsValue) -> R<Function> {
    let argnums = argnums_of(&argnums)?;
    as_function(move |args| Ok(value_and_gradients(&f, &argnums, &args)?.1))
}

/// `[f(x), grad f(x)]` in one pass, as `jax.value_and_grad`.
#[wasm_bindgen(js_name = valueAndGrad, unchecked_return_type = "(...args: any[]) => any")]
pub fn value_and_grad(f: Function, argnums: JsValue) -> R<Function> {
    let argnums = argnums_of(&argnums)?;
    as_function(move |args| {
        let (value, grads) = value_and_gradients(&f, &argnums, &args)?;
        let out = js_sys::Array::new();
        out.push(&NDArray::from(value).into());
        out.push(&grads);
        Ok(out.into())
    })
}

/// The Hessian of a scalar-valued `f` with respect to argument `argnum` (default 0), which
/// must be a single array; as `jax.hessian` (forward over reverse).
#[wasm_bindgen(unchecked_return_type = "(...args: any[]) => any")]
pub fn hessian(f: Function, argnum: Option<usize>) -> R<Function> {
    let k = argnum.unwrap_or(0);
    as_function(move |args| {
        let (trees, leaves) = flatten_args(&args).map_err(|e| js_msg(&e))?;
        if trees.get(k) != Some(&Tree::Leaf) {
            return Err(js_msg(
                "hessian: the differentiated argument must be one NDArray",
            ));
        }
        let idx = leaf_indices(&trees, &[k])?;
        let g = flat_fn(f.clone(), trees.clone(), OutTree::default());
        let mut h = quabla::ad::hessian(g, &idx)(&leaves).js()?;
        h.truncate(1);
        Ok(h.pop()
            .map(|a| NDArray::from(a).into())
            .unwrap_or(JsValue::UNDEFINED))
    })
}

/// `[f(primals), J f(primals) · tangents]`, as `jax.jvp`: `primals` and `tangents` are lists
/// of the arguments and their tangents (same structures).
#[wasm_bindgen]
pub fn jvp(f: Function, primals: js_sys::Array, tangents: js_sys::Array) -> R<js_sys::Array> {
    let (trees, leaves) = flatten_args(&primals).map_err(|e| js_msg(&e))?;
    let (ttrees, tleaves) = flatten_args(&tangents).map_err(|e| js_msg(&e))?;
    if ttrees != trees {
        return Err(js_msg(
            "jvp: tangents must have the structure of the primals",
        ));
    }
    let out_tree = OutTree::default();
    let g = flat_fn(f, trees, out_tree.clone());
    let (p, t) = quabla::ad::jvp(g, &leaves, &tleaves).js()?;
    let tree = out_tree
        .borrow()
        .clone()
        .ok_or_else(|| js_msg("jvp: the function returned nothing"))?;
    let out = js_sys::Array::new();
    out.push(&unflatten(&tree, &mut p.into_iter()));
    out.push(&unflatten(&tree, &mut t.into_iter()));
    Ok(out)
}

/// Per-argument batch axes (a number or null for every argument, or a list per argument)
/// expanded to one per leaf.
fn leaf_axes(spec: &JsValue, trees: &[Tree], what: &str) -> R<Vec<Option<usize>>> {
    let one = |v: &JsValue| -> R<Option<usize>> {
        if v.is_null() {
            return Ok(None);
        }
        match v.as_f64() {
            Some(x) if x >= 0.0 && x.fract() == 0.0 => Ok(Some(x as usize)),
            _ => Err(js_msg(&format!(
                "{what}: expected a non-negative integer or null per argument"
            ))),
        }
    };
    let per_arg: Vec<Option<usize>> = if spec.is_undefined() {
        vec![Some(0); trees.len()]
    } else if js_sys::Array::is_array(spec) {
        let list: &js_sys::Array = spec.unchecked_ref();
        if list.length() as usize != trees.len() {
            return Err(js_msg(&format!(
                "{what}: {} entries for {} arguments",
                list.length(),
                trees.len()
            )));
        }
        list.iter().map(|v| one(&v)).collect::<R<_>>()?
    } else {
        vec![one(spec)?; trees.len()]
    };
    Ok(trees
        .iter()
        .zip(per_arg)
        .flat_map(|(t, a)| std::iter::repeat_n(a, t.leaves()))
        .collect())
}

/// `f` mapped over a batch axis of its arguments, as `jax.vmap`. `inAxes`: a number or null
/// for all arguments, or a list per argument (default 0); `outAxes`: a number (default 0)
/// or null, for every output.
#[wasm_bindgen(unchecked_return_type = "(...args: any[]) => any")]
pub fn vmap(f: Function, in_axes: JsValue, out_axes: JsValue) -> R<Function> {
    let out_axis = if out_axes.is_undefined() {
        Some(0)
    } else if out_axes.is_null() {
        None
    } else {
        Some(crate::array::usize_list(&out_axes, "outAxes")?[0])
    };
    as_function(move |args| {
        let (trees, leaves) = flatten_args(&args).map_err(|e| js_msg(&e))?;
        let axes = leaf_axes(&in_axes, &trees, "inAxes")?;
        let out_tree = OutTree::default();
        let g = flat_fn(f.clone(), trees, out_tree.clone());
        let mapped = quabla::batching::vmap_with_out_axes(g, &axes, move |n| Ok(vec![out_axis; n]));
        let outs = mapped(&leaves).js()?;
        let tree = out_tree.borrow().clone().unwrap_or(Tree::List(vec![]));
        Ok(unflatten(&tree, &mut outs.into_iter()))
    })
}

type JitFn = quabla::Jit<Box<dyn Fn(&[Array]) -> quabla::Result<Vec<Array>>>>;

/// `f` compiled: traced once per argument signature (structure, shapes, dtypes) into one
/// program that runs on the backend as a whole, as `jax.jit`.
#[wasm_bindgen(unchecked_return_type = "(...args: any[]) => any")]
pub fn jit(f: Function) -> R<Function> {
    // One compiled function per argument structure; the core caches per shapes within it.
    let per_structure: RefCell<HashMap<String, (Rc<JitFn>, OutTree)>> = Default::default();
    as_function(move |args| {
        let (trees, leaves) = flatten_args(&args).map_err(|e| js_msg(&e))?;
        let key = format!("{trees:?}");
        let (compiled, out_tree) = {
            let mut m = per_structure.borrow_mut();
            m.entry(key)
                .or_insert_with(|| {
                    let out = OutTree::default();
                    let g: Box<dyn Fn(&[Array]) -> quabla::Result<Vec<Array>>> =
                        Box::new(flat_fn(f.clone(), trees.clone(), out.clone()));
                    (Rc::new(quabla::jit(g)), out)
                })
                .clone()
        };
        let outs = compiled.call(&leaves).js()?;
        let tree = out_tree
            .borrow()
            .clone()
            .ok_or_else(|| js_msg("jit: the function returned nothing"))?;
        Ok(unflatten(&tree, &mut outs.into_iter()))
    })
}
