//! In headless Chromium (wasm-bindgen-test): the conformance suite on the statically linked
//! CPU and wgpu (WebGPU, SwiftShader's adapter in CI) plugins, and the JS API on WebGPU.
//! Run by `cargo xtask wasm-test`.
#![cfg(target_arch = "wasm32")]

use quabla_conformance::{embedded_cases, start_case_with, Outcome, Precision};
use quabla_wasm::{conformance_plugin, next_tick};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Runs every case on `platform`, held to the accuracy profile the plugin declares (it must
/// be `expected`); returns the failures and the reasons cases did not apply.
async fn suite(platform: &str, expected: &str) -> (usize, Vec<String>, Vec<String>) {
    let plugin = conformance_plugin(platform)
        .await
        .unwrap_or_else(|e| panic!("{platform}: {e}"));
    let precision = &Precision::declared_by(&plugin).unwrap();
    assert_eq!(
        precision.name, expected,
        "{platform} declares its accuracy profile"
    );
    let cases = embedded_cases().unwrap();
    let (mut passed, mut failed, mut not_applicable) = (0, Vec::new(), Vec::new());
    for case in &cases {
        let outcome = match start_case_with(&plugin, case, precision) {
            Err(o) => o,
            Ok(pending) => {
                while !pending.is_ready() {
                    next_tick().await;
                }
                pending.finish()
            }
        };
        match outcome {
            Outcome::Passed(_) => passed += 1,
            Outcome::Failed(m) => failed.push(format!("{}: {m}", case.name)),
            Outcome::NotApplicable(why) => not_applicable.push(why.join(", ")),
        }
    }
    console_log!(
        "{platform}: {passed} passed, {} failed, {} not applicable (of {})",
        failed.len(),
        not_applicable.len(),
        cases.len()
    );
    (passed, failed, not_applicable)
}

#[wasm_bindgen_test]
async fn conformance_suite_on_the_cpu_plugin() {
    let (passed, failed, na) = suite("cpu", "exact").await;
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(na.is_empty(), "the CPU plugin declares everything: {na:?}");
    assert!(passed > 500);
}

#[wasm_bindgen_test]
async fn conformance_suite_on_webgpu() {
    let (passed, failed, na) = suite("wgpu", "webgpu").await;
    assert!(failed.is_empty(), "{failed:#?}");
    // Declared by capabilities: f64, the factorizations, host calls and (in the browser)
    // the host-driven regions; nothing else may be missing.
    let allowed = |why: &String| {
        why.contains("dtype f64")
            || [
                "cholesky",
                "lu",
                "triangular_solve",
                "eigh",
                "qr",
                "svd",
                "cond",
                "while",
                "host_callback",
            ]
            .iter()
            .any(|op| why.contains(&format!("op `{op}`")))
    };
    let other: Vec<_> = na.iter().filter(|w| !allowed(w)).collect();
    assert!(other.is_empty(), "{other:?}");
    assert!(passed > 250);
}

async fn data(x: &quabla_wasm::NDArray) -> Vec<f32> {
    let v = JsFuture::from(x.data().map_err(JsValue::from).unwrap())
        .await
        .unwrap();
    js_sys::Float32Array::from(v).to_vec()
}

/// The JS API end to end on WebGPU: arrays in, a jitted gradient, an asynchronous read out.
#[wasm_bindgen_test]
async fn js_api_on_webgpu() {
    use quabla_wasm::functions::array;
    use quabla_wasm::transforms::{grad, jit};
    let backend = quabla_wasm::init_backend(JsValue::UNDEFINED)
        .await
        .map_err(JsValue::from)
        .unwrap();
    assert!(backend.starts_with("wgpu"), "{backend}");
    let xs = [0.5f32, -1.0, 2.0];
    let x = array(
        &js_sys::Float32Array::from(&xs[..]).into(),
        JsValue::UNDEFINED,
        None,
    )
    .map_err(JsValue::from)
    .unwrap();
    // f(x) = sum(x * sin(x)), written in JavaScript
    let f = js_sys::Function::new_with_args("x", "return x.mul(x.sin()).sum();");
    let df = jit(grad(f, JsValue::UNDEFINED).map_err(JsValue::from).unwrap())
        .map_err(JsValue::from)
        .unwrap();
    let out = df.call1(&JsValue::NULL, &JsValue::from(x)).unwrap();
    let out = quabla_wasm::NDArray::from_js(&out)
        .map_err(JsValue::from)
        .unwrap();
    let g = data(&out).await;
    for (got, x) in g.iter().zip(xs) {
        let want = x.sin() + x * x.cos();
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    }
    // a synchronous read of a computed WebGPU array is refused with a way out
    assert!(out.data_sync().is_err());
}
