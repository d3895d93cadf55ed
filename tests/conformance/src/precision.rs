//! Per-function accuracy profiles: how far a backend's float results may be from the
//! correctly rounded goldens, by the ops a case uses.
//!
//! The goldens are correctly rounded (numpy / mpmath in f64, then rounded), and the CPU
//! backend meets them to the case's own tolerance ([`Precision::exact`]). Shading languages
//! do not promise that: WGSL allows `exp` 3 + 2|x| ulp, `log` 3 ulp, `x / y` 2.5 ulp and `sqrt`
//! 2.5 ulp, so a GPU backend is checked against the bounds it states per function
//! ([`Precision::wgsl`]), never by skipping cases.

use crate::case::{Case, Tolerance};

/// How much one op may widen a case's tolerance.
#[derive(Clone, Copy, Debug)]
pub struct FunctionTolerance {
    pub op: &'static str,
    /// Floor for `ulp` tolerances.
    pub ulp: u64,
    /// Floor for the `rtol` of `rtol + atol` tolerances (multi-step programs such as the
    /// Adam trajectories, where per-op errors accumulate).
    pub rtol: f64,
}

/// A backend's accuracy profile: the widest [`FunctionTolerance`] among a case's ops
/// applies to its float outputs.
#[derive(Clone, Debug, Default)]
pub struct Precision {
    pub name: &'static str,
    pub functions: Vec<FunctionTolerance>,
    /// The device may flush f32 subnormals to zero, as WGSL allows (SwiftShader's WebGPU
    /// does): an element whose expected value, or whose same-shaped input at that index, is
    /// subnormal is not checked.
    pub flush_subnormals: bool,
}

impl Precision {
    /// The cases' own tolerances, unchanged.
    pub fn exact() -> Precision {
        Precision {
            name: "exact",
            functions: Vec::new(),
            flush_subnormals: false,
        }
    }

    /// The bounds the wgpu backend states for its f32 kernels (its `wgsl.rs` documents how
    /// each function is computed). Measured on lavapipe (LLVM) and SwiftShader, with margin;
    /// all are far inside WGSL's own accuracy requirements.
    pub fn wgsl() -> Precision {
        let f = |op, ulp, rtol| FunctionTolerance { op, ulp, rtol };
        Precision {
            name: "wgsl",
            flush_subnormals: false,
            functions: vec![
                f("div", 2, 2e-6),
                f("sqrt", 2, 2e-6),
                f("rsqrt", 3, 2e-6),
                f("exp", 4, 1e-5),
                f("exp2", 4, 1e-5),
                f("expm1", 4, 1e-5),
                f("log", 4, 1e-5),
                f("log1p", 4, 1e-5),
                f("pow", 32, 1e-5),
                f("sin", 4, 1e-5),
                f("cos", 4, 1e-5),
                f("tan", 4, 1e-5),
                f("asin", 4, 1e-5),
                f("acos", 4, 1e-5),
                f("atan", 4, 1e-5),
                f("atan2", 4, 1e-5),
                f("sinh", 8, 1e-5),
                f("cosh", 8, 1e-5),
                f("tanh", 8, 1e-5),
                f("asinh", 8, 1e-5),
                f("acosh", 8, 1e-5),
                f("atanh", 8, 1e-5),
                f("erf", 16, 1e-5),
                f("erfc", 32, 1e-5),
                f("logistic", 8, 1e-5),
                f("cbrt", 4, 1e-5),
            ],
        }
    }

    /// [`Precision::wgsl`] on a device that flushes subnormals (WebGPU in a browser).
    pub fn webgpu() -> Precision {
        Precision {
            name: "webgpu",
            flush_subnormals: true,
            ..Precision::wgsl()
        }
    }

    /// The profile of this name (`exact`, `wgsl`, `webgpu`), as plugins declare it.
    ///
    /// ```
    /// use quabla_conformance::Precision;
    /// assert_eq!(Precision::named("wgsl").unwrap().name, "wgsl");
    /// assert!(Precision::named("sloppy").is_err());
    /// ```
    pub fn named(name: &str) -> Result<Precision, String> {
        match name {
            "exact" => Ok(Precision::exact()),
            "wgsl" => Ok(Precision::wgsl()),
            "webgpu" => Ok(Precision::webgpu()),
            other => Err(format!(
                "unknown accuracy profile `{other}`; the suite knows exact, wgsl and webgpu"
            )),
        }
    }

    /// The profile a plugin declares in its table (`exact` for ABI 1.0 plugins).
    pub fn declared_by(plugin: &quabla_abi::host::Plugin) -> Result<Precision, String> {
        Precision::named(&plugin.accuracy())
            .map_err(|e| format!("plugin `{}` declares {e}", plugin.name()))
    }

    /// The tolerance for an output of `case` whose golden states `tol`.
    pub fn widen(&self, case: &Case, tol: Tolerance) -> Tolerance {
        let used: Vec<&FunctionTolerance> = self
            .functions
            .iter()
            .filter(|f| case.requires.ops.iter().any(|o| o == f.op))
            .collect();
        if used.is_empty() {
            return tol;
        }
        match tol {
            Tolerance::Ulp { ulp } => Tolerance::Ulp {
                ulp: used.iter().map(|f| f.ulp).fold(ulp, u64::max),
            },
            Tolerance::Close { rtol, atol } => Tolerance::Close {
                rtol: used.iter().map(|f| f.rtol).fold(rtol, f64::max),
                atol,
            },
        }
    }
}
