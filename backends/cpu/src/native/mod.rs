//! The compiled tier: loop-IR functions (`quabla_abi::loop_ir`) emitted as native code with
//! Cranelift. The interpreter stays the reference: every instruction here either is an exact
//! IEEE / two's-complement operation or calls the interpreter's own scalar function
//! (`callouts.rs`), so both tiers give the same bits. `QUABLA_CPU_JIT=0` turns the tier off
//! (`plan::Tier`).

#[cfg(test)]
mod array_tests;
mod callouts;
mod emit;
#[cfg(test)]
mod linalg_tests;
#[cfg(test)]
mod program_tests;
#[cfg(test)]
mod stencil_tests;
#[cfg(test)]
mod tests;

use crate::tensor::Storage;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module};
use quabla_abi::loop_ir::{fuse, ArrayDecl, ArrayId, ArrayRole, Function, Operand};
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// Native code for one loop-IR function: `entry(slots, arrays)` reads the scalar
/// parameters' bits from `slots[..params]`, reads and updates the arrays `arrays` points at,
/// and writes the scalar results' bits to `slots[..results]`.
pub struct NativeFunction {
    module: ManuallyDrop<JITModule>,
    entry: unsafe extern "C" fn(*mut u64, *const *mut u8),
    slots: usize,
    operands: Vec<Operand>,
    outputs: Vec<Operand>,
    arrays: Vec<ArrayDecl>,
    /// The elements of each constant array, converted once.
    constants: Vec<Option<Arc<Storage>>>,
    /// Where each scratch array that is no output lives in the call's one arena (its
    /// first f64 word): a call makes one allocation for all of them, not one each.
    arena: Vec<Option<usize>>,
    /// The arena's length in f64 words.
    arena_words: usize,
}

// SAFETY: after `finalize_definitions` the module is only read (its code is immutable and
// position-fixed) until `Drop` frees it, so sharing the function pointer across threads is
// sound; the emitted code keeps no state between calls.
unsafe impl Send for NativeFunction {}
unsafe impl Sync for NativeFunction {}

impl Drop for NativeFunction {
    fn drop(&mut self) {
        // SAFETY: `entry` points into this module and dies with `self`; no call is running,
        // since calls borrow `self`.
        unsafe { ManuallyDrop::take(&mut self.module).free_memory() }
    }
}

impl NativeFunction {
    /// Compiles `f`, or says why not (an unsupported host, or no executable memory); the
    /// caller then keeps the interpreter.
    pub fn compile(mut f: Function) -> Result<NativeFunction, String> {
        // The emitted code trusts every element index: prove them first (and again after
        // fusion, which moves them).
        f.check()?;
        fuse(&mut f, &emit::fusible);
        let f = &f;
        f.check()
            .map_err(|e| format!("fusion broke an invariant (a bug): {e}"))?;
        if let Some(n) = emit::long_scalar_loop(f) {
            return Err(format!(
                "a {n}-element loop would run as scalar code, slower than interpreted"
            ));
        }
        // A host refusing executable memory makes cranelift-jit panic in places; that is a
        // reason to interpret, not to fail the user's compile.
        std::panic::catch_unwind(|| compile_unguarded(f))
            .unwrap_or_else(|_| Err("the JIT panicked (no executable memory?)".into()))
    }

    /// How each operand of the node enters the code (`loop_ir::Function::operands`).
    pub fn operands(&self) -> &[Operand] {
        &self.operands
    }

    /// How each result leaves (`loop_ir::Function::outputs`).
    pub fn outputs(&self) -> &[Operand] {
        &self.outputs
    }

    /// The arrays the code reads, and which of them it updates in place.
    pub fn arrays(&self) -> &[ArrayDecl] {
        &self.arrays
    }

    /// The first f64 word of array `k` in the call's arena, if it lives there (a scratch
    /// array no output is).
    pub fn arena_offset(&self, k: usize) -> Option<usize> {
        self.arena.get(k).copied().flatten()
    }

    /// The length in f64 words of the arena a call provides (not zeroed: the code writes
    /// each element before reading it).
    pub fn arena_words(&self) -> usize {
        self.arena_words
    }

    /// The elements of array `k` if it is a constant.
    pub fn constant(&self, k: usize) -> Option<Arc<Storage>> {
        self.constants.get(k).cloned().flatten()
    }

    /// Runs the function on the scalar parameters' bits `args` (as `Storage::bits_at`) and
    /// the arrays `arrays`; returns the scalar results' bits.
    ///
    /// # Safety
    /// `arrays[k]` points at `self.arrays()[k].len` elements of its dtype, valid for the
    /// call; an array declared `written` is memory no one else reads or writes during it.
    pub unsafe fn call(&self, args: &[u64], arrays: &[*mut u8]) -> Vec<u64> {
        assert_eq!(arrays.len(), self.arrays.len(), "one pointer per array");
        let mut slots = vec![0u64; self.slots.max(args.len())];
        slots[..args.len()].copy_from_slice(args);
        // SAFETY: the code reads and writes `self.slots` words, which `slots` holds, and
        // the elements `Function::check` bounded inside each array, which the caller
        // vouches for; it was emitted for this signature.
        unsafe { (self.entry)(slots.as_mut_ptr(), arrays.as_ptr()) };
        slots
    }
}

/// Loop-IR instructions past which a function is compiled for compile time first.
const HUGE_FUNCTION: usize = 2048;

fn compile_unguarded(f: &Function) -> Result<NativeFunction, String> {
    let mut flags = settings::builder();
    let set = |flags: &mut settings::Builder, k: &str, v: &str| {
        flags
            .set(k, v)
            .map_err(|e| format!("cranelift flag {k}: {e}"))
    };
    set(&mut flags, "opt_level", "speed")?;
    // Backtracking register allocation grows faster than the function: past this size it
    // dominated compile time (the neural ODE adjoint's loop: 40k instructions, 160 ms of
    // allocation) while the single-pass allocator's code ran as fast there.
    let huge = f.body.instructions().len() > HUGE_FUNCTION;
    set(
        &mut flags,
        "regalloc_algorithm",
        if huge { "single_pass" } else { "backtracking" },
    )?;
    // The verifier costs more than the compile on large functions; debug builds keep it.
    set(
        &mut flags,
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    let isa = cranelift_native::builder()
        .map_err(|e| format!("host not supported by cranelift: {e}"))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| format!("cranelift ISA: {e}"))?;
    let mut jb = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    for (name, ptr) in callouts::symbols() {
        jb.symbol(name, ptr);
    }
    let (arena, arena_words) = arena_layout(f);
    let mut module = JITModule::new(jb);
    match define(&mut module, f) {
        Ok(id) => {
            let code = module.get_finalized_function(id);
            // SAFETY: `code` is the finalized function of signature `fn(*mut u64, *const *mut u8)`.
            let entry = unsafe {
                std::mem::transmute::<*const u8, unsafe extern "C" fn(*mut u64, *const *mut u8)>(
                    code,
                )
            };
            Ok(NativeFunction {
                module: ManuallyDrop::new(module),
                entry,
                slots: f.params.len().max(f.results.len()),
                operands: f.operands.clone(),
                outputs: f.outputs.clone(),
                arrays: f.arrays.clone(),
                constants: f
                    .arrays
                    .iter()
                    .map(|a| match &a.role {
                        ArrayRole::Constant(h) => Some(Arc::new(Storage::from_host(&h.view()))),
                        ArrayRole::Operand | ArrayRole::Scratch => None,
                    })
                    .collect(),
                arena,
                arena_words,
            })
        }
        Err(e) => {
            // SAFETY: nothing of this module was handed out.
            unsafe { module.free_memory() };
            Err(e)
        }
    }
}

/// The arena offset of each scratch array no output is, each starting on a 16-byte
/// boundary, and the arena's length (both in f64 words).
fn arena_layout(f: &Function) -> (Vec<Option<usize>>, usize) {
    let mut words = 0usize;
    let offsets = f
        .arrays
        .iter()
        .enumerate()
        .map(|(k, a)| {
            let output = f.outputs.contains(&Operand::Array(ArrayId(k as u32)));
            if !a.is_scratch() || output {
                return None;
            }
            let at = words;
            let bytes = a.len * a.dtype.size_bytes();
            words += bytes.div_ceil(16) * 2;
            Some(at)
        })
        .collect();
    (offsets, words)
}

fn define(module: &mut JITModule, f: &Function) -> Result<cranelift_module::FuncId, String> {
    let mut ctx = module.make_context();
    let pointer = cranelift_codegen::ir::AbiParam::new(module.target_config().pointer_type());
    ctx.func.signature.params.push(pointer);
    ctx.func.signature.params.push(pointer);
    emit::function(module, &mut ctx.func, f)?;
    let id = module
        .declare_function("quabla_loop", Linkage::Export, &ctx.func.signature)
        .map_err(|e| format!("declare: {e}"))?;
    module
        .define_function(id, &mut ctx)
        .map_err(|e| format!("cranelift could not compile the loop: {e:?}"))?;
    module.clear_context(&mut ctx);
    module
        .finalize_definitions()
        .map_err(|e| format!("finalize: {e}"))?;
    Ok(id)
}
