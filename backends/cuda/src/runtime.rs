//! Running a plan on a GPU: the plan's kernels compiled together by NVRTC for the device's
//! own SM and loaded as a cubin; values in device memory (bytes as the ABI lays them out);
//! kernels launched on the device's stream with their block size capped by the kernel's
//! `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`; `cond`/`while` read their predicate back.
//! Compiled in CI, run only where a driver and a GPU exist (`gpu-check.sh` on an H200: the
//! conformance suite passes; the emulation checks the same plans' kernels in CI).

use crate::download::{Download, PinnedCopy, StagingPool};
use crate::fusion::Kernel;
use crate::plan::{plan, Executor, Plan, Step};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig,
    PinnedHostSlice, PushKernelArg,
};
use quabla_abi::abi::{AbiError, ErrorCode};
use quabla_abi::plugin::{DownloadEvent, ReadyEvent};
use quabla_abi::qir::LinalgOp;
use quabla_abi::qir::Program;
use quabla_abi::TensorType;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

fn driver(e: cudarc::driver::DriverError) -> AbiError {
    AbiError::internal(format!("the CUDA driver: {e}"))
}

fn out_of_memory(bytes: usize, e: cudarc::driver::DriverError) -> AbiError {
    AbiError::new(
        ErrorCode::ResourceExhausted,
        format!("allocating {bytes} bytes on the GPU: {e}"),
    )
}

/// The device the plugin runs on (the first GPU), its stream and SM, cuBLAS where the
/// library is found, cuSOLVER (or why not) for the factorizations, and the lane CUDA graphs
/// are captured on.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    sm: u32,
    blas: Option<Mutex<crate::blas::Blas>>,
    solver: Result<Mutex<crate::solver::Solver>, String>,
    /// A stream and cuBLAS handle of their own for captures (`graph.rs`): work another
    /// thread queues on `stream` meanwhile (an upload, a free, another program) is never
    /// captured. One capture at a time (the `Mutex`).
    capture: Mutex<(Arc<CudaStream>, Option<crate::blas::Blas>)>,
    /// Pinned buffers downloads stage in (`download.rs`), kept for reuse.
    staging: Arc<StagingPool<PinnedHostSlice<u8>>>,
}

/// Where kernels are queued: a stream and the cuBLAS handle bound to it (`None`: the
/// plugin's own kernels for products).
pub(crate) struct Lane<'a> {
    pub stream: &'a Arc<CudaStream>,
    pub blas: Option<&'a crate::blas::Blas>,
}

impl Gpu {
    /// Opens GPU 0 (only call where `driver::devices()` found one).
    pub fn open(compute_capability: (i32, i32)) -> Result<Arc<Gpu>, AbiError> {
        let ctx = CudaContext::new(0).map_err(driver)?;
        // SAFETY: everything runs on the one stream below (kernels, cuBLAS, copies), and a
        // buffer handed to another stream (NCCL's) is exported only after a synchronize
        // (`address`): cudarc's per-argument events, two driver calls per buffer per launch,
        // would order nothing.
        unsafe { ctx.disable_event_tracking() };
        // A stream of its own, not the legacy default one, which cannot be captured into a
        // graph (`graph.rs`).
        let stream = ctx.new_stream().map_err(driver)?;
        let (major, minor) = compute_capability;
        // Without cuBLAS (or with QUABLA_CUDA_CUBLAS=0) matrix products run as kernels.
        let blas = crate::blas::Blas::open(&ctx, &stream).map(Mutex::new);
        let solver = crate::solver::Solver::open(&ctx, &stream).map(Mutex::new);
        let capture_stream = ctx.new_stream().map_err(driver)?;
        let capture_blas = crate::blas::Blas::open(&ctx, &capture_stream);
        Ok(Arc::new(Gpu {
            ctx,
            stream,
            sm: (major * 10 + minor) as u32,
            blas,
            solver,
            capture: Mutex::new((capture_stream, capture_blas)),
            staging: Arc::default(),
        }))
    }

    /// Runs `f` with the capture lane to itself (its stream and cuBLAS handle); an error
    /// where the plugin's products run on cuBLAS but the capture lane has no handle (a graph
    /// must compute what a launch-by-launch run does, bit for bit).
    pub(crate) fn with_capture_lane<T>(
        &self,
        f: impl FnOnce(&Lane<'_>) -> Result<T, AbiError>,
    ) -> Result<T, AbiError> {
        let lane = self
            .capture
            .lock()
            .map_err(|_| AbiError::internal("the capture lane's lock is poisoned"))?;
        if self.blas.is_some() && lane.1.is_none() {
            return Err(AbiError::internal("cuBLAS has no handle to capture with"));
        }
        f(&Lane {
            stream: &lane.0,
            blas: lane.1.as_ref(),
        })
    }

    /// A value's memory, zero-filled (at least one byte: an empty allocation is not one).
    fn alloc(&self, bytes: usize) -> Result<CudaSlice<u8>, AbiError> {
        self.stream
            .alloc_zeros::<u8>(bytes.max(1))
            .map_err(|e| out_of_memory(bytes, e))
    }

    /// A kernel's output memory, left unset: every kernel writes each element of each of its
    /// outputs (the kernel generators' contract: a grid-stride loop over all of them, or a
    /// block per element whose thread 0 stores it), and cuBLAS with beta = 0 reads none, so
    /// a zero fill would be a wasted launch per kernel.
    pub(crate) fn alloc_output(&self, bytes: usize) -> Result<CudaSlice<u8>, AbiError> {
        // SAFETY: the memory is only read after a kernel or cuBLAS has written all of it
        // (above); `u8` has no invalid bit patterns.
        unsafe { self.stream.alloc::<u8>(bytes.max(1)) }.map_err(|e| out_of_memory(bytes, e))
    }

    pub fn upload(&self, bytes: &[u8]) -> Result<CudaSlice<u8>, AbiError> {
        if bytes.is_empty() {
            return self.alloc(0);
        }
        self.stream.clone_htod(bytes).map_err(driver)
    }

    /// The first `len` bytes of a value (blocks until the stream has computed it).
    pub fn download(&self, slice: &CudaSlice<u8>, len: usize) -> Result<Vec<u8>, AbiError> {
        let mut all = self.stream.clone_dtoh(slice).map_err(driver)?;
        all.truncate(len);
        Ok(all)
    }

    /// Starts copying the first `len` bytes of a value to the host, behind the work already
    /// queued, and returns without waiting: the event is a CUDA event recorded after the
    /// copy into a pinned staging buffer (`download.rs`). Past
    /// [`crate::download::MAX_STAGING_BYTES`] the copy is made at once instead.
    pub fn start_download(
        &self,
        slice: &CudaSlice<u8>,
        len: usize,
    ) -> Result<Box<dyn DownloadEvent>, AbiError> {
        if len == 0 {
            return Ok(Box::new(ReadyEvent(Vec::new())));
        }
        let class = StagingPool::<PinnedHostSlice<u8>>::class(len);
        let (Some(class), Some(view)) = (class, slice.try_slice(..len)) else {
            return Ok(Box::new(ReadyEvent(self.download(slice, len)?)));
        };
        let mut host = match self.staging.take(class) {
            Some(host) => host,
            // SAFETY: only the `len` bytes the copy below writes are ever read. Flags 0, not
            // cudarc's default write-combined memory, which the host reads slowly.
            None => unsafe { self.ctx.alloc_pinned_with_flags::<u8>(class, 0) }.map_err(|e| {
                AbiError::new(
                    ErrorCode::ResourceExhausted,
                    format!("allocating {class} bytes of pinned host memory: {e}"),
                )
            })?,
        };
        self.stream.memcpy_dtoh(&view, &mut host).map_err(driver)?;
        let event = self.stream.record_event(None).map_err(driver)?;
        Ok(Box::new(Download::new(PinnedCopy {
            host: Mutex::new(Some(host)),
            event,
            len,
            class,
            pool: self.staging.clone(),
        })))
    }

    pub fn synchronize(&self) -> Result<(), AbiError> {
        self.stream.synchronize().map_err(driver)
    }

    /// A zero-filled value of `bytes` bytes.
    pub fn zeros(&self, bytes: usize) -> Result<CudaSlice<u8>, AbiError> {
        self.alloc(bytes)
    }

    /// A value's device address once everything queued before has run (so a reader on
    /// another stream, NCCL's, needs no event).
    pub fn address(&self, slice: &CudaSlice<u8>) -> Result<u64, AbiError> {
        self.synchronize()?;
        let (ptr, _recorded) = slice.device_ptr(&self.stream);
        Ok(ptr)
    }
}

/// A bool's or an i32's value from its bytes (a branch index, a loop's predicate).
pub(crate) fn scalar_of(b: &[u8]) -> i64 {
    match b.len() {
        1 => b[0] as i64,
        n if n >= 4 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64,
        _ => 0,
    }
}

/// The name NVRTC compiles a program's kernels under (part of the cubin cache's key).
pub const PROGRAM_NAME: &str = "program";

/// One CUDA C source holding every kernel of `plan` (its regions' too), as the GPU runtime
/// compiles it: `None` when the plan launches nothing. Public so that cubins can be compiled
/// ahead of time, without a GPU, into the cache the runtime reads (`examples/prewarm_cubins.rs`).
///
/// ```
/// use quabla_abi::qir::Program;
/// let p = Program::parse("program(%0: f32[4]) {\n  %1 = exp(%0) : f32[4]\n  return %1\n}").unwrap();
/// let plan = quabla_cuda::plan::plan(&p, "k").unwrap();
/// assert!(quabla_cuda::runtime::program_source(&plan).unwrap().contains("__global__"));
/// ```
pub fn program_source(plan: &Plan) -> Option<String> {
    let kernels = plan.kernels();
    let factors = factors(plan);
    if kernels.is_empty() && !factors {
        return None;
    }
    let mut source = String::from(crate::elementwise::PRELUDE);
    for k in &kernels {
        source.push_str(&k.body);
    }
    if factors {
        source.push_str(crate::linalg::HELPERS);
    }
    Some(source)
}

/// Whether `plan` (or a region's) runs a factorization, whose helper kernels it then needs.
fn factors(plan: &Plan) -> bool {
    let mut stack = vec![plan];
    while let Some(p) = stack.pop() {
        for s in &p.steps {
            match s {
                Step::Linalg { .. } => return true,
                Step::Cond { branches, .. } | Step::Speculate { branches, .. } => {
                    stack.extend(branches.iter())
                }
                Step::While {
                    cond,
                    body,
                    in_place,
                    ..
                } => {
                    stack.push(cond);
                    stack.push(body);
                    stack.extend(in_place.body.as_ref());
                }
                Step::Constant { .. }
                | Step::Kernel(_)
                | Step::Update { .. }
                | Step::Alias { .. }
                | Step::HostCallback { .. } => {}
            }
        }
    }
    false
}

/// A value on the GPU.
pub type Value = Arc<CudaSlice<u8>>;

/// A program compiled for the GPU.
pub struct Compiled {
    gpu: Arc<Gpu>,
    /// Boxed: constants are keyed by their plan's address, which must not move.
    plan: Box<Plan>,
    functions: HashMap<String, (CudaFunction, u32)>,
    constants: HashMap<(usize, usize), Value>,
    /// The program as one CUDA graph, once captured (`graph.rs`).
    replay: Mutex<crate::graph::Replay<crate::graph::Captured>>,
    /// Each kernels-only `while` loop as a CUDA graph per iteration, by step
    /// (`loop_graph.rs`).
    loops: Mutex<HashMap<usize, crate::graph::Replay<crate::loop_graph::LoopGraph>>>,
}

impl Compiled {
    pub fn new(gpu: &Arc<Gpu>, p: &Program) -> Result<Compiled, AbiError> {
        let plan = Box::new(plan(p, "k").map_err(|op| {
            AbiError::unimplemented(format!("the CUDA plugin has no kernel for `{op}` yet"))
        })?);
        let kernels: Vec<&Kernel> = plan.kernels();
        let mut functions = HashMap::new();
        if let Some(source) = program_source(&plan) {
            let (cubin, _) = crate::cubin_cache::cubin(&source, PROGRAM_NAME, gpu.sm)
                .map_err(|e| AbiError::internal(format!("compiling the program's kernels: {e}")))?;
            let module = gpu
                .ctx
                .load_module(cudarc::nvrtc::Ptx::from_binary(cubin.bytes))
                .map_err(driver)?;
            let helpers = if factors(&plan) {
                &crate::linalg::HELPER_NAMES[..]
            } else {
                &[]
            };
            let names = kernels
                .iter()
                .map(|k| k.name.as_str())
                .chain(helpers.iter().copied());
            for name in names {
                let f = module.load_function(name).map_err(driver)?;
                // A launch must fit the kernel's registers: the block size comes from it.
                let most = f.max_threads_per_block().map_err(driver)?.clamp(32, 256) as u32;
                functions.insert(name.to_string(), (f, most));
            }
        }
        let mut constants = HashMap::new();
        let mut stack: Vec<&Plan> = vec![&plan];
        while let Some(q) = stack.pop() {
            for s in &q.steps {
                match s {
                    Step::Constant { value, bytes } => {
                        // Regions number their values afresh: the key pairs the plan's
                        // address (stable: plans live in boxes and vectors) with the id.
                        constants.insert(
                            (q as *const Plan as usize, *value),
                            Arc::new(gpu.upload(bytes)?),
                        );
                    }
                    Step::Cond { branches, .. } | Step::Speculate { branches, .. } => {
                        stack.extend(branches.iter())
                    }
                    Step::While {
                        cond,
                        body,
                        in_place,
                        ..
                    } => {
                        stack.push(cond);
                        stack.push(body);
                        stack.extend(in_place.body.as_ref());
                    }
                    Step::Kernel(_)
                    | Step::Update { .. }
                    | Step::Alias { .. }
                    | Step::Linalg { .. }
                    | Step::HostCallback { .. } => {}
                }
            }
        }
        let replay = Mutex::new(crate::graph::Replay::new(
            &[&plan],
            crate::graph::Policy::from_env(),
        ));
        Ok(Compiled {
            gpu: gpu.clone(),
            plan,
            functions,
            constants,
            replay,
            loops: Mutex::new(HashMap::new()),
        })
    }

    pub fn output_types(&self) -> Vec<TensorType> {
        self.plan
            .outputs
            .iter()
            .map(|&o| self.plan.types[o].clone())
            .collect()
    }

    /// Runs the program: as its CUDA graph where it has one (captured at the run the
    /// policy says), else launch by launch.
    pub fn run(&self, inputs: Vec<Value>) -> Result<Vec<Value>, AbiError> {
        use crate::graph::Replay;
        let mut replay = self
            .replay
            .lock()
            .map_err(|_| AbiError::internal("a CUDA graph's lock is poisoned"))?;
        if let Replay::Cold(runs) = &mut *replay {
            if *runs == 0 {
                *runs += 1;
            } else {
                *replay = match crate::graph::capture(self, &self.plan) {
                    Ok(c) => Replay::Ready(Box::new(c)),
                    Err(e) => {
                        // Slower, not wrong: say so once for this program.
                        eprintln!("quabla-cuda: running launch by launch ({e})");
                        Replay::Off(e.to_string())
                    }
                };
            }
        }
        if let Replay::Ready(c) = &mut *replay {
            return c.run(self, &self.plan, &self.gpu.stream, &inputs);
        }
        drop(replay);
        crate::plan::run(self, &self.plan, inputs)
    }

    /// The GPU the program runs on.
    pub(crate) fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Constant `value` of `plan` (a plan of this program or one of its regions), uploaded.
    pub(crate) fn uploaded(&self, plan: &Plan, value: usize) -> Result<Value, AbiError> {
        self.constants
            .get(&(plan as *const Plan as usize, value))
            .cloned()
            .ok_or_else(|| AbiError::internal("a constant that was not uploaded"))
    }
}

impl Compiled {
    /// Queues kernel `k` (or its cuBLAS product) on `reads`, writing `writes` (one buffer per
    /// value the kernel writes, of its full size), on the plugin's stream.
    pub(crate) fn enqueue(
        &self,
        k: &Kernel,
        reads: &[&CudaSlice<u8>],
        writes: &mut [&mut CudaSlice<u8>],
    ) -> Result<(), AbiError> {
        let blas = match &self.gpu.blas {
            Some(b) => Some(
                b.lock()
                    .map_err(|_| AbiError::internal("the cuBLAS handle's lock is poisoned"))?,
            ),
            None => None,
        };
        let lane = Lane {
            stream: &self.gpu.stream,
            blas: blas.as_deref(),
        };
        self.enqueue_on(&lane, k, reads, writes)
    }

    /// `enqueue` on `lane`: nothing is allocated, so a graph capture can record it.
    pub(crate) fn enqueue_on(
        &self,
        lane: &Lane<'_>,
        k: &Kernel,
        reads: &[&CudaSlice<u8>],
        writes: &mut [&mut CudaSlice<u8>],
    ) -> Result<(), AbiError> {
        let stream = lane.stream;
        if let (Some(g), Some(blas)) = (&k.gemm, lane.blas) {
            let operand = |v: usize| {
                k.reads
                    .iter()
                    .position(|&r| r == v)
                    .map(|at| reads[at])
                    .ok_or_else(|| AbiError::internal("a matrix product's operand is not read"))
            };
            let (lhs, _l) = operand(g.lhs)?.device_ptr(stream);
            let (rhs, _r) = operand(g.rhs)?.device_ptr(stream);
            let out = writes
                .first_mut()
                .ok_or_else(|| AbiError::internal("a matrix product without its result"))?;
            let (dst, _o) = out.device_ptr_mut(stream);
            return blas.gemm(g, lhs, rhs, dst);
        }
        let mut pointers: Vec<u64> = reads.iter().map(|r| r.device_ptr(stream).0).collect();
        pointers.extend(writes.iter_mut().map(|w| w.device_ptr_mut(stream).0));
        self.launch_pointers(stream, k, &pointers)
    }

    /// Launches kernel `k` (no cuBLAS product) on `stream` with `pointers`, one per value
    /// parameter (its reads, then its writes), then the element count.
    fn launch_pointers(
        &self,
        stream: &Arc<CudaStream>,
        k: &Kernel,
        pointers: &[u64],
    ) -> Result<(), AbiError> {
        let (f, threads) = self
            .functions
            .get(&k.name)
            .ok_or_else(|| AbiError::internal(format!("kernel `{}` not loaded", k.name)))?;
        k.check_pointers(pointers.len())?;
        if k.elements == 0 {
            return Ok(());
        }
        let n = k.elements as u64;
        // The grid-stride loop covers what a capped grid does not.
        let (blocks, threads) = if k.single_block {
            // A power of two, as its folds' trees halve (`one_block.rs`).
            let fit = (*threads).min(crate::kernels::FOLD_BLOCK as u32);
            (1, 1 << (31 - fit.leading_zeros()))
        } else if k.block_per_element {
            // A power of two the fold's tree halves, fitting its shared arrays.
            let fit = (*threads).min(crate::kernels::FOLD_BLOCK as u32);
            (n.min(1 << 20) as u32, 1 << (31 - fit.leading_zeros()))
        } else {
            (n.div_ceil(*threads as u64).min(1 << 20) as u32, *threads)
        };
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(f);
        for p in pointers {
            launch.arg(p);
        }
        launch.arg(&n);
        // SAFETY: one device pointer per kernel parameter, each to memory of its value's full
        // size (bytes in the ABI's layout, as the kernel's types read them), and the element
        // count the kernel's loop expects.
        unsafe { launch.launch(cfg) }.map_err(driver)?;
        Ok(())
    }
}

impl Compiled {
    /// The loop at step `key` run as its graph (captured here at the run the graph policy
    /// says); `None` where it has none (yet).
    fn loop_graph(
        &self,
        key: usize,
        cond: &Plan,
        body: &Plan,
        in_place: &crate::in_place::InPlaceLoop,
        carry: &[Value],
    ) -> Option<Result<Vec<Value>, AbiError>> {
        use crate::graph::{Policy, Replay};
        let mut loops = match self.loops.lock() {
            Ok(l) => l,
            Err(_) => return Some(Err(AbiError::internal("a loop graph's lock is poisoned"))),
        };
        let state = loops
            .entry(key)
            .or_insert_with(|| Replay::new(&[cond, in_place.body(body)], Policy::from_env()));
        if let Replay::Cold(runs) = state {
            if *runs == 0 {
                *runs += 1;
                return None;
            }
            *state = match crate::loop_graph::capture_loop(self, cond, body, in_place) {
                Ok(g) => Replay::Ready(Box::new(g)),
                Err(e) => {
                    // Slower, not wrong: say so once for this loop.
                    eprintln!("quabla-cuda: a loop runs step by step ({e})");
                    Replay::Off(e.to_string())
                }
            };
        }
        match state {
            Replay::Ready(g) => Some(g.run(self, &self.gpu.stream, carry)),
            Replay::Cold(_) | Replay::Off(_) => None,
        }
    }
}

impl Executor for Compiled {
    type Value = Value;

    fn constant(&self, plan: &Plan, value: usize, _bytes: &[u8]) -> Result<Value, AbiError> {
        self.uploaded(plan, value)
    }

    fn scalar(&self, v: &Value, ty: &TensorType) -> Result<i64, AbiError> {
        Ok(scalar_of(&self.gpu.download(v, ty.size_bytes())?))
    }

    /// A loop of kernels alone as a CUDA graph per iteration (`loop_graph.rs`), captured at
    /// the run the graph policy says. Until then, or where it has no graph, a loop with a
    /// carry updated in a window (a scan's `ys`) runs in place step by step
    /// (`in_place::StepLoop`: each iteration writes the window, where `loops::run_while`
    /// would write the carry whole, and holding a large carry once, it still runs ahead);
    /// others go step by step through `loops::run_while`.
    fn whole_loop(
        &self,
        key: usize,
        cond: &Plan,
        body: &Plan,
        in_place: &crate::in_place::InPlaceLoop,
        carry: &[Value],
    ) -> Option<Result<Vec<Value>, AbiError>> {
        if let Some(graph) = self.loop_graph(key, cond, body, in_place, carry) {
            return Some(graph);
        }
        // Loops without a window keep `run_while`, which writes no carry it need not.
        in_place.windows().next()?;
        crate::in_place::run_step_by_step(self, cond, body, in_place, carry)
    }

    fn read(&self, v: &Value, ty: &TensorType) -> Result<Vec<u8>, AbiError> {
        self.gpu.download(v, ty.size_bytes())
    }

    fn write(&self, bytes: &[u8]) -> Result<Value, AbiError> {
        Ok(Arc::new(self.gpu.upload(bytes)?))
    }

    fn linalg(
        &self,
        op: &LinalgOp,
        operands: &[Value],
        types: &[&TensorType],
        results: &[TensorType],
    ) -> Result<Vec<Value>, AbiError> {
        let solver = self.gpu.solver.as_ref().map_err(|why| {
            AbiError::unimplemented(format!(
                "`{}` runs on cuSOLVER, which could not start: {why}",
                op.name()
            ))
        })?;
        let solver = solver
            .lock()
            .map_err(|_| AbiError::internal("the cuSOLVER handle's lock is poisoned"))?;
        let helper = |name: &str| {
            self.functions
                .get(name)
                .cloned()
                .ok_or_else(|| AbiError::internal(format!("helper kernel `{name}` not loaded")))
        };
        let reads: Vec<&CudaSlice<u8>> = operands.iter().map(|v| &**v).collect();
        Ok(crate::linalg::run(
            &self.gpu.stream,
            &solver,
            &helper,
            op,
            &reads,
            types,
            results,
        )?
        .into_iter()
        .map(Arc::new)
        .collect())
    }

    /// Each scalar's bytes copied on the stream into its own 4-byte slot of one buffer,
    /// which is read back once: one wait for the batch.
    fn scalars(&self, vs: &[(&Value, &TensorType)]) -> Result<Vec<i64>, AbiError> {
        if vs.len() < 2 {
            return vs.iter().map(|(v, ty)| self.scalar(v, ty)).collect();
        }
        let mut slots = self.gpu.alloc_output(4 * vs.len())?;
        for (j, (v, ty)) in vs.iter().enumerate() {
            let n = ty.size_bytes().min(4);
            self.gpu
                .stream
                .memcpy_dtod(&v.slice(0..n), &mut slots.slice_mut(4 * j..4 * j + n))
                .map_err(driver)?;
        }
        let bytes = self.gpu.download(&slots, 4 * vs.len())?;
        Ok(vs
            .iter()
            .enumerate()
            .map(|(j, (_, ty))| scalar_of(&bytes[4 * j..4 * j + ty.size_bytes().min(4)]))
            .collect())
    }

    /// Launches one kernel over its elements: its outputs, by value id.
    fn launch(
        &self,
        k: &Kernel,
        types: &[TensorType],
        reads: &[Value],
    ) -> Result<Vec<(usize, Value)>, AbiError> {
        self.launch_updating(k, types, reads, &mut [])
    }

    fn launch_updating(
        &self,
        k: &Kernel,
        types: &[TensorType],
        reads: &[Value],
        updated: &mut [Value],
    ) -> Result<Vec<(usize, Value)>, AbiError> {
        // A value held elsewhere too (the loop's first carry, still the caller's) is copied
        // once, so that only the loop sees the write.
        for u in updated.iter_mut() {
            if Arc::get_mut(u).is_none() {
                let len = u.len();
                let mut own = self.gpu.alloc_output(len)?;
                if len > 0 {
                    self.gpu
                        .stream
                        .memcpy_dtod(&u.slice(0..len), &mut own.slice_mut(0..len))
                        .map_err(driver)?;
                }
                *u = Arc::new(own);
            }
        }
        let mut writes = k
            .writes
            .iter()
            .map(|&v| self.gpu.alloc_output(types[v].size_bytes()))
            .collect::<Result<Vec<_>, _>>()?;
        let reads: Vec<&CudaSlice<u8>> = reads.iter().map(|r| &**r).collect();
        let mut outs: Vec<&mut CudaSlice<u8>> = writes.iter_mut().collect();
        for u in updated.iter_mut() {
            outs.push(
                Arc::get_mut(u)
                    .ok_or_else(|| AbiError::internal("a window's carry is held twice"))?,
            );
        }
        self.enqueue(k, &reads, &mut outs)?;
        Ok(k.writes
            .iter()
            .copied()
            .zip(writes.into_iter().map(Arc::new))
            .collect())
    }

    /// A write takes its read's memory where the run holds the read alone: the kernel gets
    /// that pointer for both parameters (`Kernel::reuses` says it loads each element before
    /// storing it).
    fn launch_reusing(
        &self,
        k: &Kernel,
        types: &[TensorType],
        reads: Vec<Value>,
    ) -> Result<Vec<(usize, Value)>, AbiError> {
        let into = crate::plan::reused_reads(k, types, |r| Arc::strong_count(&reads[r]) == 1);
        if k.gemm.is_some() || into.iter().all(Option::is_none) {
            return self.launch(k, types, &reads);
        }
        let stream = &self.gpu.stream;
        let mut pointers: Vec<u64> = reads.iter().map(|r| r.device_ptr(stream).0).collect();
        let mut outs = Vec::with_capacity(k.writes.len());
        for (&w, r) in k.writes.iter().zip(&into) {
            let out = match r {
                Some(r) => reads[*r].clone(),
                None => Arc::new(self.gpu.alloc_output(types[w].size_bytes())?),
            };
            pointers.push(out.device_ptr(stream).0);
            outs.push((w, out));
        }
        self.launch_pointers(stream, k, &pointers)?;
        Ok(outs)
    }
}
