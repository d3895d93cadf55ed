//! Quabla's MPI collectives plugin: the ABI's collectives extension over MPI, for
//! data-parallel training across processes started by `mpirun` (CPU clusters).
//!
//! It computes nothing itself: it has no devices and compiles no programs. Collectives run on
//! host memory, which the CPU plugin exports without a copy (other compute plugins' buffers
//! are staged through the host by the core). Reductions add in rank order, so results are
//! identical on every rank and from run to run. A peer that dies or never arrives ends a call
//! with `Unavailable` or `DeadlineExceeded` (MPI's error handler is set to return, and every
//! call has a deadline), never a hang.
//!
//! Built without the `mpi` feature (the workspace default, so a machine without MPI builds
//! the workspace), the plugin loads and refuses to make a communicator, saying how to get a
//! working one.
//!
//! ```ignore
//! // Under `mpirun -np 2`, through the core:
//! let comm = quabla::distributed::initialize()?;
//! let mean = comm.all_reduce(&grad, quabla::distributed::ReduceOp::Mean)?;
//! ```

#[cfg(feature = "mpi")]
mod engine;
pub mod reduce;

use quabla_abi::abi::AbiError;
#[cfg(not(feature = "mpi"))]
use quabla_abi::abi::ErrorCode;
#[cfg(not(feature = "mpi"))]
use quabla_abi::plugin::Communicator;
use quabla_abi::plugin::{Backend, Collectives, DeviceBuffer, Executable, PluginInfo};
use quabla_abi::qir::Program;
use quabla_abi::HostView;
use std::sync::Arc;
#[cfg(not(feature = "mpi"))]
use std::time::Duration;

/// The plugin: a collectives engine with no devices.
pub struct MpiBackend {
    engine: Box<dyn Collectives>,
}

impl Default for MpiBackend {
    fn default() -> Self {
        #[cfg(feature = "mpi")]
        let engine: Box<dyn Collectives> = Box::new(engine::Mpi);
        #[cfg(not(feature = "mpi"))]
        let engine: Box<dyn Collectives> = Box::new(NoMpi);
        MpiBackend { engine }
    }
}

/// The engine of a build without MPI: every communicator is refused, saying how to build one.
#[cfg(not(feature = "mpi"))]
struct NoMpi;

#[cfg(not(feature = "mpi"))]
impl Collectives for NoMpi {
    fn unique_id(&self) -> Result<Vec<u8>, AbiError> {
        Err(no_mpi())
    }
    fn comm_init(
        &self,
        _world_size: u32,
        _rank: u32,
        _id: &[u8],
        _timeout: Duration,
    ) -> Result<Box<dyn Communicator>, AbiError> {
        Err(no_mpi())
    }
}

#[cfg(not(feature = "mpi"))]
fn no_mpi() -> AbiError {
    AbiError::new(
        ErrorCode::FailedPrecondition,
        "this quabla-mpi was built without MPI: install an MPI (Debian: `apt install \
         libopenmpi-dev openmpi-bin libclang1-14 libclang-common-14-dev`) and rebuild with \
         `cargo xtask mpi` (or `cargo build -p quabla-mpi --features mpi`)",
    )
}

fn no_compute() -> AbiError {
    AbiError::unimplemented(
        "the `mpi` plugin runs collectives only; compute on a device of a compute plugin \
         (`cpu`) and pass its arrays to the collectives",
    )
}

impl Backend for MpiBackend {
    fn info(&self) -> PluginInfo {
        PluginInfo::collectives_only("mpi", env!("CARGO_PKG_VERSION"))
    }

    fn compile(&self, _program: Program) -> Result<Arc<dyn Executable>, AbiError> {
        Err(no_compute())
    }

    fn upload(
        &self,
        _device: u32,
        _array: HostView<'_>,
    ) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        Err(no_compute())
    }

    fn collectives(&self) -> Option<&dyn Collectives> {
        Some(self.engine.as_ref())
    }
}

quabla_abi::export_backend!(MpiBackend::default());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_is_a_collectives_plugin_without_devices() {
        let b = MpiBackend::default();
        let info = b.info();
        assert!(info.devices.is_empty());
        assert_eq!(info.extensions, ["collectives"]);
        assert!(b
            .compile(Program::parse("program() {\n  return\n}\n").unwrap())
            .is_err());
        assert!(b.collectives().is_some());
    }

    /// Built without MPI, the plugin loads and says how to get a working one.
    #[cfg(not(feature = "mpi"))]
    #[test]
    fn without_mpi_a_communicator_is_refused_with_the_way_to_build_one() {
        let b = MpiBackend::default();
        let e = b
            .collectives()
            .unwrap()
            .comm_init(0, 0, &[], Duration::from_secs(1))
            .err()
            .unwrap();
        assert_eq!(e.code(), ErrorCode::FailedPrecondition);
        assert!(e.message().contains("cargo xtask mpi"), "{e}");
    }
}
