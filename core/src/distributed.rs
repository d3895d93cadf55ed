//! Data parallelism across processes: collectives on arrays through a collectives plugin
//! (`mpi` for CPU clusters), and gradients averaged across ranks.
//!
//! Every rank runs the same program on its shard of the batch (axis 0) with a replica of the
//! parameters; [`Communicator::all_reduce`] with [`ReduceOp::Mean`] averages the gradients.
//! Collectives run on concrete arrays, between compiled programs (not inside `jit`): a
//! compute plugin that exports its buffers' memory (the CPU plugin) hands it to the
//! collectives plugin without a copy; others are staged through the host.
//!
//! ```no_run
//! // mpirun -np 2 ./my_training
//! use quabla::{distributed, Array};
//! let comm = distributed::initialize()?;
//! let x = Array::from_slice(&[comm.rank() as f32], &[1])?;
//! let total = comm.all_reduce(&x, distributed::ReduceOp::Sum)?; // 0 + 1 on both ranks
//! assert_eq!(total.to_vec::<f32>()?, [1.0]);
//! # Ok::<(), quabla::Error>(())
//! ```

use crate::array::{Array, Repr};
use crate::error::{Error, Result};
use crate::runtime::Registry;
use quabla_abi::abi::CollectiveKind;
use quabla_abi::host;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub use quabla_abi::abi::ReduceOp;

/// How to join a communicator (see [`initialize_with`]).
#[derive(Clone, Debug)]
pub struct Options {
    /// The collectives plugin's platform name: `QUABLA_COLLECTIVES`, else `mpi`.
    pub platform: String,
    /// 0 (the default) takes the world size and rank from the launcher (`mpirun`).
    pub world_size: u32,
    pub rank: u32,
    /// The communicator's unique id (NCCL-style plugins); empty for MPI.
    pub unique_id: Vec<u8>,
    /// How long any collective waits for its peers before failing with a typed error:
    /// `QUABLA_COLLECTIVE_TIMEOUT` seconds, else the plugin's default (300 s).
    pub timeout: Option<Duration>,
}

impl Default for Options {
    fn default() -> Self {
        let timeout = std::env::var("QUABLA_COLLECTIVE_TIMEOUT")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64);
        Options {
            platform: std::env::var("QUABLA_COLLECTIVES").unwrap_or_else(|_| "mpi".into()),
            world_size: 0,
            rank: 0,
            unique_id: Vec::new(),
            timeout,
        }
    }
}

/// One process's end of a communicator.
pub struct Communicator {
    inner: host::Communicator,
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Communicator({} rank {} of {})",
            self.inner.plugin().name(),
            self.rank(),
            self.world_size()
        )
    }
}

/// The process's communicator from its launcher (`mpirun`), made at the first call and
/// shared by later ones (as `jax.distributed.initialize`, once per process).
///
/// ```no_run
/// # use quabla::{distributed, Array};
/// let comm = distributed::initialize()?;
/// println!("rank {} of {}", comm.rank(), comm.world_size());
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn initialize() -> Result<Arc<Communicator>> {
    static WORLD: Mutex<Option<Arc<Communicator>>> = Mutex::new(None);
    let mut w = WORLD.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = &*w {
        return Ok(c.clone());
    }
    let c = Arc::new(initialize_with(&Options::default())?);
    *w = Some(c.clone());
    Ok(c)
}

/// A new communicator as `options` say (every rank must call it, in the same order as its
/// other collectives).
///
/// ```no_run
/// # use quabla::distributed::{self, Options};
/// let comm = distributed::initialize_with(&Options { platform: "mpi".into(), ..Default::default() })?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn initialize_with(options: &Options) -> Result<Communicator> {
    let plugin = collectives_plugin(&options.platform)?;
    // A world of one needs nobody to share the id with: make it here.
    let id = if options.unique_id.is_empty() && options.world_size == 1 {
        unique_id(&options.platform)?
    } else {
        options.unique_id.clone()
    };
    let inner = host::Communicator::init(
        &plugin,
        options.world_size,
        options.rank,
        &id,
        options.timeout,
    )
    .map_err(|e| Error::backend(&options.platform, e))?;
    Ok(Communicator { inner })
}

/// A new communicator id from `platform`'s plugin (NCCL's way to meet: made on rank 0 and
/// sent to the others by the launcher's own means); empty for MPI, whose launcher does that.
///
/// ```no_run
/// # use quabla::distributed;
/// let id = distributed::unique_id("nccl")?; // rank 0 makes it, the launcher shares it
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn unique_id(platform: &str) -> Result<Vec<u8>> {
    let plugin = collectives_plugin(platform)?;
    host::Communicator::unique_id(&plugin).map_err(|e| Error::backend(platform, e))
}

fn collectives_plugin(platform: &str) -> Result<host::Plugin> {
    let plugin = Registry::global().device(platform).map_err(|e| {
        Error::NoBackend(format!(
            "no collectives plugin `{platform}`: {e}. Build it with `cargo xtask mpi` (or \
             `pip install quabla-mpi`) and put it on QUABLA_PLUGIN_PATH"
        ))
    })?;
    let plugin = plugin.plugin().clone();
    if plugin.collectives().is_none() {
        return Err(Error::NoBackend(format!(
            "plugin `{platform}` has no collectives extension; name a collectives plugin \
             (`mpi`) in QUABLA_COLLECTIVES"
        )));
    }
    Ok(plugin)
}

/// Whether this process was started by an MPI launcher (`mpirun`, `srun`), from the
/// environment variables OpenMPI, MPICH and Slurm set.
///
/// ```no_run
/// # use quabla::distributed;
/// if distributed::launched_by_mpi() {
///     let comm = distributed::initialize()?;
/// }
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn launched_by_mpi() -> bool {
    static LAUNCHED: OnceLock<bool> = OnceLock::new();
    *LAUNCHED.get_or_init(|| {
        [
            "OMPI_COMM_WORLD_SIZE",
            "PMI_SIZE",
            "PMIX_RANK",
            "SLURM_NTASKS",
        ]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
    })
}

impl Communicator {
    /// This process's rank, `0..world_size()`.
    ///
    /// ```no_run
    /// # use quabla::{distributed, Array};
    /// let comm = distributed::initialize()?;
    /// let mine = Array::scalar(comm.rank() as f32)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn rank(&self) -> usize {
        self.inner.rank() as usize
    }

    /// The number of ranks.
    ///
    /// ```no_run
    /// # use quabla::{distributed, Array};
    /// let comm = distributed::initialize()?;
    /// let shards = comm.world_size();
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn world_size(&self) -> usize {
        self.inner.size() as usize
    }

    fn run(&self, kind: CollectiveKind, op: ReduceOp, root: u32, x: &Array) -> Result<Array> {
        let Repr::Concrete { device, buffer } = &x.repr else {
            return Err(Error::value(format!(
                "{kind:?} works on concrete arrays, between compiled programs; it cannot run \
                 inside `jit` or a transformation: call it on the function's results"
            )));
        };
        let out = self
            .inner
            .on_buffers(kind, op, root, buffer)
            .map_err(|e| Error::backend(self.inner.plugin().name(), e))?;
        Ok(Array {
            ty: out.ty().clone(),
            repr: Repr::Concrete {
                device: device.clone(),
                buffer: Arc::new(out),
            },
        })
    }

    /// Every rank gets the reduction of every rank's `x` (added in rank order, so the result
    /// is identical on every rank and in every run).
    ///
    /// ```no_run
    /// # use quabla::{distributed, Array};
    /// let comm = distributed::initialize()?;
    /// let g = Array::from_slice(&[1.0f32, 2.0], &[2])?;
    /// let mean = comm.all_reduce(&g, distributed::ReduceOp::Mean)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn all_reduce(&self, x: &Array, op: ReduceOp) -> Result<Array> {
        self.run(CollectiveKind::AllReduce, op, 0, x)
    }

    /// Every rank gets every rank's `x`, stacked on a new leading axis in rank order.
    ///
    /// ```no_run
    /// # use quabla::{distributed, Array};
    /// let comm = distributed::initialize()?;
    /// let x = Array::scalar(comm.rank() as f32)?;
    /// let every = comm.all_gather(&x)?; // [0, 1, ..., world_size - 1]
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn all_gather(&self, x: &Array) -> Result<Array> {
        self.run(CollectiveKind::AllGather, ReduceOp::Sum, 0, x)
    }

    /// Every rank gets rank `root`'s `x`.
    ///
    /// ```no_run
    /// # use quabla::{distributed, Array};
    /// let comm = distributed::initialize()?;
    /// let seed = Array::scalar(comm.rank() as i32)?;
    /// let seed = comm.broadcast(&seed, 0)?; // rank 0's value everywhere
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn broadcast(&self, x: &Array, root: usize) -> Result<Array> {
        let root = u32::try_from(root)
            .ok()
            .filter(|&r| (r as usize) < self.world_size())
            .ok_or_else(|| {
                Error::value(format!(
                    "broadcast from rank {root}: the world has ranks 0..{}",
                    self.world_size()
                ))
            })?;
        self.run(CollectiveKind::Broadcast, ReduceOp::Sum, root, x)
    }

    /// The reduction of every rank's `x` split on axis 0: rank `r` keeps the `r`-th of
    /// `world_size()` equal parts.
    ///
    /// ```no_run
    /// # use quabla::{distributed, Array};
    /// let comm = distributed::initialize()?;
    /// let x = Array::from_slice(&vec![1.0f32; 4 * comm.world_size()], &[4 * comm.world_size()])?;
    /// let part = comm.reduce_scatter(&x, distributed::ReduceOp::Sum)?; // 4 elements per rank
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn reduce_scatter(&self, x: &Array, op: ReduceOp) -> Result<Array> {
        self.run(CollectiveKind::ReduceScatter, op, 0, x)
    }

    /// [`Communicator::all_reduce`] of several arrays, as one group.
    ///
    /// ```no_run
    /// # use quabla::{distributed, Array};
    /// let comm = distributed::initialize()?;
    /// let grads = vec![Array::from_slice(&[1.0f32], &[1])?, Array::from_slice(&[2.0f32; 3], &[3])?];
    /// let averaged = comm.all_reduce_many(&grads, distributed::ReduceOp::Mean)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn all_reduce_many(&self, xs: &[Array], op: ReduceOp) -> Result<Vec<Array>> {
        let named = |e| Error::backend(self.inner.plugin().name(), e);
        self.inner.group(true).map_err(named)?;
        let out: Result<Vec<Array>> = xs.iter().map(|x| self.all_reduce(x, op)).collect();
        self.inner.group(false).map_err(named)?;
        out
    }

    /// Makes `xs` equal on every rank: rank 0's values (replicated parameters start so).
    ///
    /// ```no_run
    /// # use quabla::{distributed, Array};
    /// let comm = distributed::initialize()?;
    /// let params = vec![Array::from_slice(&[0.1f32; 8], &[8])?];
    /// let params = comm.broadcast_many(&params)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn broadcast_many(&self, xs: &[Array]) -> Result<Vec<Array>> {
        xs.iter().map(|x| self.broadcast(x, 0)).collect()
    }
}

/// `value_and_grad` for data parallelism: `f`'s value and gradients on this rank's shard,
/// then both averaged over the ranks of `comm` (so with a loss that is a mean over equal
/// shards, the result is the full batch's value and gradient). Returns what
/// [`crate::ad::value_and_grad`] returns (`[value, grads...]`), every entry the mean across
/// ranks.
///
/// ```no_run
/// # use quabla::{distributed, Array, Axes};
/// let comm = distributed::initialize()?;
/// let loss = |a: &[Array]| Ok(vec![(&a[0] * &a[1])?.mean(Axes::All, false)?]);
/// let vg = distributed::value_and_grad(comm, loss, &[0]);
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn value_and_grad<F>(
    comm: Arc<Communicator>,
    f: F,
    argnums: &[usize],
) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + 'static,
{
    let local = crate::jit(crate::ad::value_and_grad(f, argnums, false));
    move |args: &[Array]| {
        let r = local.call(args)?;
        comm.all_reduce_many(&r, ReduceOp::Mean)
    }
}
