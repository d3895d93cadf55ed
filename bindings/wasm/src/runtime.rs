//! Choosing a backend: `init({ backend })` registers the CPU plugin, or opens WebGPU and
//! registers the wgpu plugin, as the one backend of this page.

use crate::errors::{js_msg, IntoJsResult};
use js_sys::{Promise, Reflect};
use quabla::Array;
use quabla_abi::host::Plugin;
use quabla_abi::HostArray;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

thread_local! {
    static CHOSEN: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Which backend runs arrays: `"cpu"`, `"webgpu"`, or `"auto"` (WebGPU when the browser has
/// an adapter, else the CPU). Resolves to the backend's description. Call once per page,
/// before creating arrays; a second call with another backend is an error (arrays already
/// made live on the first).
#[wasm_bindgen(js_name = init)]
pub async fn init_backend(options: JsValue) -> Result<String, JsValue> {
    let wanted = if options.is_undefined() || options.is_null() {
        "auto".to_string()
    } else {
        Reflect::get(&options, &"backend".into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_else(|| "auto".into())
    };
    if let Some(prev) = CHOSEN.with(|c| c.borrow().clone()) {
        if wanted == "auto" || platform_of(&wanted)? == prev {
            return describe(&prev);
        }
        return Err(js_msg(&format!(
            "quabla is already running on `{prev}`; init() chooses the backend once per page"
        )));
    }
    let platform = match wanted.as_str() {
        "cpu" => "cpu",
        "webgpu" | "wgpu" => {
            quabla_wgpu::init_webgpu().await.map_err(|e| js_msg(&e))?;
            "wgpu"
        }
        "auto" => {
            if quabla_wgpu::init_webgpu().await.is_ok() {
                "wgpu"
            } else {
                "cpu"
            }
        }
        other => return Err(js_msg(&unknown_backend(other))),
    };
    register(platform);
    CHOSEN.with(|c| *c.borrow_mut() = Some(platform.to_string()));
    describe(platform)
}

fn unknown_backend(name: &str) -> String {
    format!("unknown backend `{name}`: use \"cpu\", \"webgpu\" or \"auto\"")
}

fn platform_of(name: &str) -> Result<&'static str, JsValue> {
    match name {
        "cpu" => Ok("cpu"),
        "webgpu" | "wgpu" => Ok("wgpu"),
        other => Err(js_msg(&unknown_backend(other))),
    }
}

fn register(platform: &str) {
    match platform {
        "wgpu" => quabla::runtime::register_static("wgpu", quabla_wgpu::backend_module),
        _ => quabla::runtime::register_static("cpu", quabla_cpu::backend_module),
    }
}

fn describe(platform: &str) -> Result<String, JsValue> {
    let d = quabla::device(platform).js()?;
    let what = d
        .plugin()
        .info()
        .devices
        .first()
        .map(|x| x.name.to_string())
        .unwrap_or_default();
    Ok(format!("{platform}: {what}"))
}

/// Makes sure a backend is chosen before the first array: the CPU when `init` was not called
/// (arrays made before `init` would otherwise have no device).
pub(crate) fn ensure_backend() {
    let chosen = CHOSEN.with(|c| c.borrow().is_some());
    if !chosen {
        register("cpu");
        CHOSEN.with(|c| *c.borrow_mut() = Some("cpu".into()));
    }
}

/// The name of the running backend (`"cpu"` or `"wgpu"`), or `undefined` before `init`.
#[wasm_bindgen(js_name = backendName)]
pub fn backend_name() -> Option<String> {
    CHOSEN.with(|c| c.borrow().clone())
}

/// Resolves after the browser has run its event loop once (where WebGPU completes work).
pub async fn next_tick() {
    let p = Promise::new(&mut |resolve, _| {
        let global = js_sys::global();
        let set_timeout = Reflect::get(&global, &"setTimeout".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        match set_timeout {
            Some(f) => {
                let _ = f.call2(&JsValue::NULL, &resolve, &JsValue::from(0));
            }
            None => {
                let _ = resolve.call0(&JsValue::NULL);
            }
        }
    });
    let _ = JsFuture::from(p).await;
}

/// Reads an array without blocking: starts the copy, yields to the event loop until the
/// bytes are there.
pub async fn download(a: &Array) -> Result<HostArray, JsValue> {
    let ev = a.start_download().js()?;
    while !ev.is_ready().map_err(|e| js_msg(&e.to_string()))? {
        next_tick().await;
    }
    ev.wait().map_err(|e| js_msg(&e.to_string()))
}

/// A statically linked plugin as the conformance runner sees it (`"cpu"` or `"wgpu"`; the
/// latter needs WebGPU opened first).
pub async fn conformance_plugin(platform: &str) -> Result<Plugin, String> {
    let module = match platform {
        "cpu" => quabla_cpu::backend_module(),
        "wgpu" => {
            quabla_wgpu::init_webgpu().await?;
            quabla_wgpu::backend_module()
        }
        other => return Err(unknown_backend(other)),
    };
    Plugin::from_module(module).map_err(|e| e.to_string())
}
