//! The CUDA plugin's compiler on arbitrary QIR binary, without a GPU: every program that
//! decodes (so is valid) must plan (`plan_with`, with device loops and without) and emit its
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
    // Every loop decided on the host, as a GPU plans it with device loops off or past their
    // bounds: its in-place body (without its windows) and freeze kernel. The planner reads
    // the variable on each call; libFuzzer runs inputs on one thread.
    std::env::set_var("QUABLA_CUDA_DEVICE_LOOPS", "0");
    let _ = quabla_cuda::plan::plan_with(&p, "h", 0);
    std::env::remove_var("QUABLA_CUDA_DEVICE_LOOPS");
    let _ = quabla_cuda::plan::kernels(&p, "k");
});
