//! The generated CUDA C run on the host, so that a machine without a GPU checks what the
//! kernels compute, not only that they compile (`QUABLA_CUDA_EMULATE=1`): a program's kernels
//! are compiled by the system's C++ compiler against `emulate_prelude.h` (CUDA's math
//! functions as the C library's, PTX's conversion rules) into a shared library, each behind
//! a host wrapper taking its pointers as an array. Every launch runs as one block of
//! several host threads with a real barrier ([`BLOCK_THREADS`]; a power of two where the
//! kernel folds in shared memory, which is then a static array of its function, the
//! launches of one program running one at a time), so how a kernel shares work out among
//! threads and where it waits is checked too, not only what one thread computes. The
//! conformance suite runs on it (`tests/conformance/tests/cuda_emulated.rs`).

use crate::elementwise::c_type;
use crate::fusion::Kernel;
use crate::plan::{plan_with, Executor, Plan};
use quabla_abi::abi::AbiError;
use quabla_abi::qir::Program;
use quabla_abi::TensorType;
use std::collections::HashMap;
use std::ffi::c_void;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Whether `QUABLA_CUDA_EMULATE=1` asks for host emulation.
pub fn requested() -> bool {
    std::env::var("QUABLA_CUDA_EMULATE").is_ok_and(|v| v == "1")
}

type Entry = unsafe extern "C" fn(*const *mut c_void, u64, u32);

/// The host threads a launch's block runs with, by default: an odd count, so shares of
/// unequal size are checked too (a kernel folding in shared memory takes the power of two
/// below, 2). `QUABLA_CUDA_EMULATE_THREADS` sets it.
pub const BLOCK_THREADS: u32 = 3;

/// The host threads in force for a launch's block.
fn block_threads() -> u32 {
    std::env::var("QUABLA_CUDA_EMULATE_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&t| t > 0)
        .unwrap_or(BLOCK_THREADS)
}

/// A value in host memory, 8-byte aligned for the kernels' typed loads.
#[derive(Clone)]
pub struct Storage {
    words: Vec<u64>,
    len: usize,
}

impl Storage {
    pub fn zeroed(len: usize) -> Storage {
        Storage {
            words: vec![0; len.div_ceil(8)],
            len,
        }
    }

    pub fn from_bytes(bytes: &[u8]) -> Storage {
        let mut s = Storage::zeroed(bytes.len());
        s.bytes_mut().copy_from_slice(bytes);
        s
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `words` holds at least `len` initialised bytes.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr() as *const u8, self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr() as *mut u8, self.len) }
    }
}

/// The host wrapper of a kernel: its pointers from an array, then the element count, then
/// the threads of the block (cut to a power of two for a kernel with shared arrays, whose
/// folds halve the block).
fn wrapper(k: &Kernel) -> String {
    let args: Vec<String> = k
        .param_types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let constness = if i < k.reads.len() { "const " } else { "" };
            format!("({constness}{}*)a[{i}]", c_type(*t))
        })
        .collect();
    let call = format!("{}({}, n)", k.name, args.join(", "));
    let folds = k.body.contains("__shared__");
    let body = format!("quabla_block(threads, {folds}, [&] {{ {call}; }});");
    format!(
        "extern \"C\" void {}_host(void** a, unsigned long long n, unsigned int threads) {{ {body} }}\n",
        k.name
    )
}

fn compile_library(source: &str) -> Result<libloading::Library, AbiError> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "quabla-cuda-emulate-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let fail = |what: String| AbiError::internal(format!("CUDA emulation: {what}"));
    std::fs::create_dir_all(&dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
    let (cpp, so) = (dir.join("kernels.cpp"), dir.join("kernels.so"));
    std::fs::write(&cpp, source).map_err(|e| fail(format!("{}: {e}", cpp.display())))?;
    let cxx = std::env::var_os("CXX").unwrap_or_else(|| "c++".into());
    // No contraction into FMAs and no fast math: each op rounds once, as `--fmad=false`.
    let out = Command::new(&cxx)
        .args([
            "-std=c++17",
            "-O1",
            "-shared",
            "-fPIC",
            "-pthread",
            "-ffp-contract=off",
        ])
        .arg(&cpp)
        .arg("-o")
        .arg(&so)
        .output()
        .map_err(|e| fail(format!("cannot run {cxx:?}: {e}")))?;
    if !out.status.success() {
        return Err(fail(format!(
            "the host compiler refused the kernels:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    // SAFETY: a library of plain C functions we just compiled.
    let lib = unsafe { libloading::Library::new(&so) }.map_err(|e| fail(e.to_string()))?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(lib)
}

/// A program's kernels compiled for the host, and its plan.
pub struct Emulated {
    plan: Plan,
    entries: HashMap<String, Entry>,
    _library: Option<libloading::Library>,
    /// The host threads a launch's block runs with.
    threads: u32,
    /// Held through each launch: shared arrays are the library's statics, one block's at a
    /// time.
    launching: std::sync::Mutex<()>,
    /// Writes computed into a read's memory so far (`launch_reusing`).
    reused: std::sync::atomic::AtomicUsize,
}

type Value = std::sync::Arc<Storage>;

impl Emulated {
    /// Compiles `p` for the host (the ops `plan.rs` covers).
    pub fn new(p: &Program) -> Result<Emulated, AbiError> {
        Emulated::new_with(p, crate::one_block::max_elements())
    }

    /// `new`, with small kernels merged as `plan::plan_with`'s `one_block` says.
    pub fn new_with(p: &Program, one_block: usize) -> Result<Emulated, AbiError> {
        let plan = plan_with(p, "k", one_block).map_err(|op| {
            AbiError::unimplemented(format!("CUDA emulation has no kernel for `{op}` yet"))
        })?;
        Emulated::of_plan(plan)
    }

    /// `plan`'s kernels compiled for the host.
    pub(crate) fn of_plan(plan: Plan) -> Result<Emulated, AbiError> {
        let kernels = plan.kernels();
        let mut source = String::from(include_str!("emulate_prelude.h"));
        source.push_str(crate::elementwise::PRELUDE);
        for k in &kernels {
            source.push_str(&k.body);
            source.push_str(&wrapper(k));
        }
        let library = if kernels.is_empty() {
            None
        } else {
            Some(compile_library(&source)?)
        };
        let mut entries = HashMap::new();
        for k in &kernels {
            let lib = library
                .as_ref()
                .ok_or_else(|| AbiError::internal("kernels without a library"))?;
            let symbol = format!("{}_host", k.name);
            // SAFETY: the wrapper's signature is `Entry`, as generated above.
            let entry: Entry = unsafe { lib.get::<Entry>(symbol.as_bytes()) }
                .map(|s| *s)
                .map_err(|e| AbiError::internal(format!("CUDA emulation: {symbol}: {e}")))?;
            entries.insert(k.name.clone(), entry);
        }
        Ok(Emulated {
            plan,
            entries,
            _library: library,
            threads: block_threads(),
            launching: std::sync::Mutex::new(()),
            reused: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// Runs each launch's block with `threads` host threads from now on.
    pub fn set_threads(&mut self, threads: u32) {
        self.threads = threads.max(1);
    }

    pub fn output_types(&self) -> Vec<TensorType> {
        self.plan
            .outputs
            .iter()
            .map(|&o| self.plan.types[o].clone())
            .collect()
    }

    /// How many writes have been computed into a read's memory so far
    /// ([`crate::plan::Executor::launch_reusing`]).
    pub fn reused(&self) -> usize {
        self.reused.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs on `inputs` (the program's inputs, in order).
    pub fn run(&self, inputs: Vec<Value>) -> Result<Vec<Value>, AbiError> {
        crate::plan::run(self, &self.plan, inputs)
    }
}

impl Executor for Emulated {
    type Value = Value;

    fn constant(&self, _plan: &Plan, _value: usize, bytes: &[u8]) -> Result<Value, AbiError> {
        Ok(std::sync::Arc::new(Storage::from_bytes(bytes)))
    }

    fn scalar(&self, v: &Value, _ty: &TensorType) -> Result<i64, AbiError> {
        Ok(crate::runtime::scalar_of(v.bytes()))
    }

    /// Loops of kernels alone run in place with the freeze kernel (`in_place.rs`), as a GPU
    /// runs them in CUDA graphs: CI checks the freeze kernel and the frozen carry on every
    /// such loop of the suite.
    fn whole_loop(
        &self,
        _key: usize,
        cond: &Plan,
        body: &Plan,
        in_place: &crate::in_place::InPlaceLoop,
        carry: &[Value],
    ) -> Option<Result<Vec<Value>, AbiError>> {
        crate::in_place::run_step_by_step(self, cond, body, in_place, carry)
    }

    fn read(&self, v: &Value, _ty: &TensorType) -> Result<Vec<u8>, AbiError> {
        Ok(v.bytes().to_vec())
    }

    fn write(&self, bytes: &[u8]) -> Result<Value, AbiError> {
        Ok(std::sync::Arc::new(Storage::from_bytes(bytes)))
    }

    fn launch(
        &self,
        k: &Kernel,
        types: &[TensorType],
        reads: &[Value],
    ) -> Result<Vec<(usize, Value)>, AbiError> {
        self.launch_into(k, types, reads, &mut [])
    }

    fn launch_updating(
        &self,
        k: &Kernel,
        types: &[TensorType],
        reads: &[Value],
        updated: &mut [Value],
    ) -> Result<Vec<(usize, Value)>, AbiError> {
        let mut own: Vec<&mut Storage> = updated.iter_mut().map(std::sync::Arc::make_mut).collect();
        self.launch_into(k, types, reads, &mut own)
    }

    /// As on a GPU: a write takes its read's memory where `reads` holds it alone, and the
    /// kernel gets that pointer for both parameters.
    fn launch_reusing(
        &self,
        k: &Kernel,
        types: &[TensorType],
        mut reads: Vec<Value>,
    ) -> Result<Vec<(usize, Value)>, AbiError> {
        let into =
            crate::plan::reused_reads(k, types, |r| std::sync::Arc::strong_count(&reads[r]) == 1);
        if into.iter().all(Option::is_none) {
            return self.launch(k, types, &reads);
        }
        let mut ptrs = Vec::with_capacity(k.param_types.len());
        for (r, s) in reads.iter_mut().enumerate() {
            // A reused read's pointer comes from its only holder, as it is written through.
            ptrs.push(if into.contains(&Some(r)) {
                std::sync::Arc::get_mut(s)
                    .ok_or_else(|| AbiError::internal("a reused value is held twice"))?
                    .words
                    .as_mut_ptr() as *mut c_void
            } else {
                s.words.as_ptr() as *mut c_void
            });
        }
        let mut fresh: Vec<Storage> = Vec::new();
        for (&w, r) in k.writes.iter().zip(&into) {
            match r {
                Some(r) => ptrs.push(ptrs[*r]),
                None => {
                    let mut s = Storage::zeroed(types[w].size_bytes());
                    // The heap block stays where it is as `s` moves into `fresh`.
                    ptrs.push(s.words.as_mut_ptr() as *mut c_void);
                    fresh.push(s);
                }
            }
        }
        self.call(k, &ptrs)?;
        let taken = into.iter().filter(|r| r.is_some()).count();
        self.reused
            .fetch_add(taken, std::sync::atomic::Ordering::Relaxed);
        let mut fresh = fresh.into_iter();
        k.writes
            .iter()
            .zip(&into)
            .map(|(&w, r)| match r {
                Some(r) => Ok((w, reads[*r].clone())),
                None => fresh
                    .next()
                    .map(|s| (w, std::sync::Arc::new(s)))
                    .ok_or_else(|| AbiError::internal("a write without memory")),
            })
            .collect()
    }
}

impl Emulated {
    /// Runs `k` on `reads`: its `writes` in fresh zeroed memory, returned by value id, and
    /// its parameters after those written into `updated` where they are.
    fn launch_into(
        &self,
        k: &Kernel,
        types: &[TensorType],
        reads: &[Value],
        updated: &mut [&mut Storage],
    ) -> Result<Vec<(usize, Value)>, AbiError> {
        let mut writes: Vec<Storage> = k
            .writes
            .iter()
            .map(|&v| Storage::zeroed(types[v].size_bytes()))
            .collect();
        let mut ptrs: Vec<*mut c_void> = reads
            .iter()
            .map(|s| s.words.as_ptr() as *mut c_void)
            .collect();
        ptrs.extend(
            writes
                .iter_mut()
                .chain(updated.iter_mut().map(|s| &mut **s))
                .map(|s| s.words.as_mut_ptr() as *mut c_void),
        );
        self.call(k, &ptrs)?;
        Ok(k.writes
            .iter()
            .copied()
            .zip(writes.into_iter().map(std::sync::Arc::new))
            .collect())
    }

    /// Runs `k`'s block on `ptrs`, one per value parameter.
    fn call(&self, k: &Kernel, ptrs: &[*mut c_void]) -> Result<(), AbiError> {
        let entry = self
            .entries
            .get(&k.name)
            .ok_or_else(|| AbiError::internal(format!("kernel `{}` not linked", k.name)))?;
        k.check_pointers(ptrs.len())?;
        if k.elements > 0 {
            let _one_at_a_time = self
                .launching
                .lock()
                .map_err(|_| AbiError::internal("the emulation's launch lock is poisoned"))?;
            // SAFETY: one pointer per parameter, each to memory of its value's full size,
            // written only through the output pointers (fresh, or memory held uniquely by
            // the caller: `updated`'s, a reused read's).
            unsafe { entry(ptrs.as_ptr(), k.elements as u64, self.threads) };
        }
        Ok(())
    }
}

/// What the emulation's tests share: values from and to typed elements, and a plan run at
/// several block sizes.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Emulated, Storage};
    use crate::plan::Plan;
    use std::sync::Arc;

    /// A value holding `xs`, each element's little-endian bytes from `to`.
    pub fn storage<T: Copy, const N: usize>(xs: &[T], to: fn(T) -> [u8; N]) -> Arc<Storage> {
        let b: Vec<u8> = xs.iter().flat_map(|&v| to(v)).collect();
        Arc::new(Storage::from_bytes(&b))
    }

    /// A value's elements of `N` bytes each, read by `from`.
    pub fn elements<T, const N: usize>(s: &Storage, from: fn([u8; N]) -> T) -> Vec<T> {
        s.bytes()
            .chunks_exact(N)
            .map(|c| from(c.try_into().expect("chunks of N bytes")))
            .collect()
    }

    /// `plan`'s outputs on `inputs`, run with each block size of `threads`: every output's
    /// bytes must be the same at each.
    pub fn at_block_sizes(
        plan: Plan,
        inputs: &[Arc<Storage>],
        threads: &[u32],
    ) -> Vec<Arc<Storage>> {
        let mut exe = Emulated::of_plan(plan).expect("the plan's kernels compile for the host");
        let mut first: Option<Vec<Arc<Storage>>> = None;
        for &t in threads {
            exe.set_threads(t);
            let outs = exe.run(inputs.to_vec()).expect("the plan runs");
            match &first {
                None => first = Some(outs),
                Some(f) => {
                    for (a, b) in f.iter().zip(&outs) {
                        assert_eq!(a.bytes(), b.bytes(), "{t} threads gave other bits");
                    }
                }
            }
        }
        first.expect("at least one block size")
    }
}
