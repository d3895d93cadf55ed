//! `jit`: trace a Rust closure over arrays into QIR once per input signature, compile it on
//! the target device, and run the compiled executable on later calls.

use crate::array::Array;
use crate::error::Result;
use crate::runtime::BoundedCache;
use crate::runtime::{default_device, Device};
use crate::trace::trace_function;
use quabla_abi::host::Executable;
use quabla_abi::qir::Program;
use quabla_abi::TensorType;
use std::sync::Arc;

type Signature = (String, Vec<TensorType>);

/// A function compiled per input signature. Made by [`jit`].
pub struct Jit<F> {
    f: F,
    device: Option<Arc<Device>>,
    /// Per signature (bounded, LRU: see [`cache_capacity`](crate::runtime::cache_capacity)).
    /// Only the executable is kept: a cached call clones nothing of the program (its
    /// captured constants can be large), and the output types come from the executable.
    cache: BoundedCache<Signature, Arc<Executable>>,
}

/// Wraps `f` so that calls trace it once per input signature (dtypes and shapes) and then
/// run the compiled program.
///
/// Inside `f` the arrays are traced: operations record a program, and reading their data is
/// an error ([`Error::TracedValue`](crate::Error::TracedValue)). Concrete arrays captured
/// from outside become constants of the program.
///
/// ```no_run
/// use quabla::{jit, Array};
/// let f = jit(|xs: &[Array]| Ok(vec![(xs[0].sin()? * &xs[1])?]));
/// let x = Array::from_slice(&[0.5f32, 1.0], &[2]).unwrap();
/// let y = f.call(&[x.clone(), x]).unwrap();
/// ```
pub fn jit<F>(f: F) -> Jit<F>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    Jit {
        f,
        device: None,
        cache: BoundedCache::new(),
    }
}

impl<F> Jit<F>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    /// Compiles for `device` instead of the arguments' (or the default) device.
    ///
    /// ```no_run
    /// # use quabla::{jit, Array};
    /// let f = jit(|a: &[Array]| Ok(vec![a[0].exp()?])).on(quabla::device("cpu")?);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn on(mut self, device: Arc<Device>) -> Self {
        self.device = Some(device);
        self
    }

    fn target(&self, args: &[Array]) -> Result<Arc<Device>> {
        match (&self.device, args.first()) {
            (Some(d), _) => Ok(d.clone()),
            (None, Some(a)) => Ok(a.device().clone()),
            (None, None) => default_device(),
        }
    }

    /// Traces `f` for arguments shaped like `args` and returns the program (the text of
    /// `program.to_text()` is what JAX's `.lower()` shows).
    ///
    /// ```no_run
    /// # use quabla::{jit, Array};
    /// let f = jit(|a: &[Array]| Ok(vec![a[0].exp()?]));
    /// let program = f.lower(&[Array::from_slice(&[1.0f32], &[1])?])?;
    /// println!("{program}");
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn lower(&self, args: &[Array]) -> Result<Program> {
        let device = self.target(args)?;
        let types: Vec<TensorType> = args.iter().map(|a| a.ty.clone()).collect();
        trace_function(&device, &types, &self.f)
    }

    /// Calls the function: traces and compiles on the first call with a new signature, then
    /// runs the compiled program.
    ///
    /// ```no_run
    /// # use quabla::{jit, Array};
    /// let f = jit(|a: &[Array]| Ok(vec![(&a[0] * &a[1])?]));
    /// let x = Array::from_slice(&[2.0f32], &[1])?;
    /// let y = f.call(&[x.clone(), x])?; // [4.0]
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn call(&self, args: &[Array]) -> Result<Vec<Array>> {
        if args.iter().any(|a| a.is_traced()) {
            // Inside another trace: inline.
            return (self.f)(args);
        }
        let (device, exe) = self.compiled(args)?;
        let refs: Vec<&Array> = args.iter().collect();
        crate::eval::run_executable(&device, &exe, &refs, exe.output_types().to_vec())
    }

    /// Traces and compiles for `args`' signature now (a no-op when already compiled), so
    /// tracing and compilation errors surface before any argument is donated.
    ///
    /// ```no_run
    /// # use quabla::{jit, Array};
    /// let f = jit(|a: &[Array]| Ok(vec![a[0].exp()?]));
    /// let x = Array::from_slice(&[1.0f32], &[1])?;
    /// f.compile_for(std::slice::from_ref(&x))?; // errors here, before any donation
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn compile_for(&self, args: &[Array]) -> Result<()> {
        if args.iter().any(|a| a.is_traced()) {
            return Ok(());
        }
        self.compiled(args).map(|_| ())
    }

    /// Like [`Jit::call`], consuming the arguments and donating those marked in `donate`
    /// that nothing else holds, so the backend may reuse their memory for the outputs.
    ///
    /// ```no_run
    /// # use quabla::{jit, Array};
    /// let step = jit(|a: &[Array]| Ok(vec![(&a[0] * 0.5)?]));
    /// let w = Array::from_slice(&[1.0f32; 1024], &[1024])?;
    /// let w = step.call_donating(vec![w], &[true])?.remove(0); // w's buffer may be reused
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn call_donating(&self, args: Vec<Array>, donate: &[bool]) -> Result<Vec<Array>> {
        if args.iter().any(|a| a.is_traced()) {
            return (self.f)(&args);
        }
        let (device, exe) = self.compiled(&args)?;
        let out_types = exe.output_types().to_vec();
        crate::eval::run_executable_donating(&device, &exe, args, donate, out_types)
    }

    /// The compiled program for `args`' signature (traced and compiled on first use).
    fn compiled(&self, args: &[Array]) -> Result<(Arc<Device>, Arc<Executable>)> {
        let device = self.target(args)?;
        let key: Signature = (
            device.platform().to_string(),
            args.iter().map(|a| a.ty.clone()).collect(),
        );
        let cached = self.cache.get(&key);
        let exe = match cached {
            Some(c) => c,
            None => {
                let program = self.lower(args)?;
                let exe = device.compile(&program)?;
                self.cache.insert(key, exe.clone());
                exe
            }
        };
        Ok((device, exe))
    }

    /// Number of signatures in the cache (at most
    /// [`cache_capacity`](crate::runtime::cache_capacity)).
    ///
    /// ```no_run
    /// # use quabla::{jit, Array};
    /// let f = jit(|a: &[Array]| Ok(vec![a[0].exp()?]));
    /// f.call(&[Array::from_slice(&[1.0f32], &[1])?])?;
    /// f.call(&[Array::from_slice(&[1.0f32, 2.0], &[2])?])?;
    /// assert_eq!(f.cache_size(), 2); // one per signature
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn cache_size(&self) -> usize {
        self.cache.len()
    }
}
