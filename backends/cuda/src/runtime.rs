//! Running a plan on a GPU: the plan's kernels compiled together by NVRTC for the device's
//! own SM and loaded as a cubin; values in device memory (bytes as the ABI lays them out);
//! kernels launched on the device's stream with their block size capped by the kernel's
//! `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`; `cond`/`while` read their predicate back.
//! Compiled in CI, run only where a driver and a GPU exist: no machine here has one, so
//! this path is unverified until a GPU run (the emulation checks the same plans' kernels).

use crate::fusion::Kernel;
use crate::plan::{plan, Executor, Plan, Step};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg,
};
use quabla_abi::abi::{AbiError, ErrorCode};
use quabla_abi::qir::Program;
use quabla_abi::TensorType;
use std::collections::HashMap;
use std::sync::Arc;

fn driver(e: cudarc::driver::DriverError) -> AbiError {
    AbiError::internal(format!("the CUDA driver: {e}"))
}

/// The device the plugin runs on (the first GPU), its stream and SM.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    sm: u32,
}

impl Gpu {
    /// Opens GPU 0 (only call where `driver::devices()` found one).
    pub fn open(compute_capability: (i32, i32)) -> Result<Arc<Gpu>, AbiError> {
        let ctx = CudaContext::new(0).map_err(driver)?;
        let stream = ctx.default_stream();
        let (major, minor) = compute_capability;
        Ok(Arc::new(Gpu {
            ctx,
            stream,
            sm: (major * 10 + minor) as u32,
        }))
    }

    /// A value's memory (at least one byte: an empty allocation is not one).
    fn alloc(&self, bytes: usize) -> Result<CudaSlice<u8>, AbiError> {
        self.stream.alloc_zeros::<u8>(bytes.max(1)).map_err(|e| {
            AbiError::new(
                ErrorCode::ResourceExhausted,
                format!("allocating {bytes} bytes on the GPU: {e}"),
            )
        })
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

/// A value on the GPU.
pub type Value = Arc<CudaSlice<u8>>;

/// A program compiled for the GPU.
pub struct Compiled {
    gpu: Arc<Gpu>,
    /// Boxed: constants are keyed by their plan's address, which must not move.
    plan: Box<Plan>,
    functions: HashMap<String, (CudaFunction, u32)>,
    constants: HashMap<(usize, usize), Value>,
}

impl Compiled {
    pub fn new(gpu: &Arc<Gpu>, p: &Program) -> Result<Compiled, AbiError> {
        let plan = Box::new(plan(p, "k").map_err(|op| {
            AbiError::unimplemented(format!("the CUDA plugin has no kernel for `{op}` yet"))
        })?);
        let kernels: Vec<&Kernel> = plan.kernels();
        let mut functions = HashMap::new();
        if !kernels.is_empty() {
            let mut source = String::from(crate::elementwise::PRELUDE);
            for k in &kernels {
                source.push_str(&k.body);
            }
            let (cubin, _) = crate::cubin_cache::cubin(&source, "program", gpu.sm)
                .map_err(|e| AbiError::internal(format!("compiling the program's kernels: {e}")))?;
            let module = gpu
                .ctx
                .load_module(cudarc::nvrtc::Ptx::from_binary(cubin.bytes))
                .map_err(driver)?;
            for k in kernels {
                let f = module.load_function(&k.name).map_err(driver)?;
                // A launch must fit the kernel's registers: the block size comes from it.
                let most = f.max_threads_per_block().map_err(driver)?.clamp(32, 256) as u32;
                functions.insert(k.name.clone(), (f, most));
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
                    Step::Cond { branches, .. } => stack.extend(branches.iter()),
                    Step::While { cond, body, .. } => {
                        stack.push(cond);
                        stack.push(body);
                    }
                    Step::Kernel(_) | Step::Alias { .. } => {}
                }
            }
        }
        Ok(Compiled {
            gpu: gpu.clone(),
            plan,
            functions,
            constants,
        })
    }

    pub fn output_types(&self) -> Vec<TensorType> {
        self.plan
            .outputs
            .iter()
            .map(|&o| self.plan.types[o].clone())
            .collect()
    }

    pub fn run(&self, inputs: Vec<Value>) -> Result<Vec<Value>, AbiError> {
        crate::plan::run(self, &self.plan, inputs)
    }
}

impl Executor for Compiled {
    type Value = Value;

    fn constant(&self, plan: &Plan, value: usize, _bytes: &[u8]) -> Result<Value, AbiError> {
        self.constants
            .get(&(plan as *const Plan as usize, value))
            .cloned()
            .ok_or_else(|| AbiError::internal("a constant that was not uploaded"))
    }

    fn scalar(&self, v: &Value, ty: &TensorType) -> Result<i64, AbiError> {
        let b = self.gpu.download(v, ty.size_bytes())?;
        Ok(match b.len() {
            1 => b[0] as i64,
            n if n >= 4 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64,
            _ => 0,
        })
    }

    /// Launches one kernel over its elements: its outputs, by value id.
    fn launch(
        &self,
        k: &Kernel,
        types: &[TensorType],
        reads: &[Value],
    ) -> Result<Vec<(usize, Value)>, AbiError> {
        let (f, threads) = self
            .functions
            .get(&k.name)
            .ok_or_else(|| AbiError::internal(format!("kernel `{}` not loaded", k.name)))?;
        let mut writes = k
            .writes
            .iter()
            .map(|&v| self.gpu.alloc(types[v].size_bytes()))
            .collect::<Result<Vec<_>, _>>()?;
        if k.elements > 0 {
            let n = k.elements as u64;
            // The grid-stride loop covers what a capped grid does not.
            let blocks = (k.elements as u64).div_ceil(*threads as u64).min(1 << 20) as u32;
            let cfg = LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (*threads, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut launch = self.gpu.stream.launch_builder(f);
            for r in reads {
                launch.arg(&**r);
            }
            for w in writes.iter_mut() {
                launch.arg(w);
            }
            launch.arg(&n);
            // SAFETY: one device pointer per kernel parameter, each to memory of its value's
            // full size (bytes in the ABI's layout, as the kernel's types read them), and the
            // element count the kernel's loop expects.
            unsafe { launch.launch(cfg) }.map_err(driver)?;
        }
        Ok(k.writes
            .iter()
            .copied()
            .zip(writes.into_iter().map(Arc::new))
            .collect())
    }
}
