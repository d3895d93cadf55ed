//! The CUDA plugin's compiler on arbitrary QIR binary, without a GPU: every program that
//! decodes (so is valid) must plan (`plan_with`, device loops included) and emit its
//! kernels' CUDA C, or return an error; a panic or overflow in the planner or an emitter is
//! a crash here. On a GPU the same code runs inside `compile`, behind the plugin kit's
//! `catch_unwind`, where a panic would turn a valid program into an internal error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quabla_abi::qir;

fuzz_target!(|data: &[u8]| {
    let Ok(p) = qir::decode(data) else {
        return;
    };
    let _ = quabla_cuda::plan::plan_with(&p, "f", 0);
    let _ = quabla_cuda::plan::plan_with(&p, "g", quabla_cuda::one_block::MAX_ELEMENTS);
    let _ = quabla_cuda::plan::kernels(&p, "k");
});
