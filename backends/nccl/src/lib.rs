//! Quabla's NCCL collectives plugin: the ABI's collectives extension over NCCL, on CUDA
//! device memory that the CUDA plugin exports. NCCL and the CUDA driver are opened at run
//! time (`library.rs`): the plugin builds and loads anywhere, and says what is missing (no
//! libnccl, no driver, no GPU) when a communicator is asked for.
//!
//! Ranks meet through a unique id (NCCL's way): rank 0 makes it, the launcher's own means
//! carry it to the others (for instance the `mpi` plugin's broadcast), every rank joins with
//! its world size and rank.
//!
//! ```ignore
//! let id = quabla_abi::host::Communicator::unique_id(&nccl)?;           // on rank 0
//! let comm = quabla_abi::host::Communicator::init(&nccl, 2, rank, &id, None)?;
//! ```

mod engine;
pub mod library;

use quabla_abi::abi::AbiError;
use quabla_abi::plugin::{Backend, Collectives, DeviceBuffer, Executable, PluginInfo};
use quabla_abi::qir::Program;
use quabla_abi::HostView;
use std::sync::Arc;

/// The plugin: a collectives engine with no devices of its own.
pub struct NcclBackend;

fn no_compute() -> AbiError {
    AbiError::unimplemented(
        "the `nccl` plugin runs collectives only; compute on the `cuda` plugin's device and \
         pass its arrays to the collectives",
    )
}

impl Backend for NcclBackend {
    fn info(&self) -> PluginInfo {
        PluginInfo::collectives_only("nccl", env!("CARGO_PKG_VERSION"))
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
        Some(&engine::NcclEngine)
    }
}

quabla_abi::export_backend!(NcclBackend);

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_abi::abi::ErrorCode;
    use std::time::Duration;

    /// Where there is no libnccl (CI, any machine without NVIDIA's NCCL), the plugin loads
    /// and every way to a communicator says what is missing and how to get it.
    #[test]
    fn without_nccl_the_plugin_says_how_to_get_it() {
        if library::nccl().is_ok() {
            eprintln!("skipped: this machine has NCCL (the absent path cannot be seen here)");
            return;
        }
        let c = NcclBackend.collectives().unwrap();
        let e = c.unique_id().unwrap_err();
        assert_eq!(e.code(), ErrorCode::FailedPrecondition);
        assert!(e.message().contains("nvidia-nccl-cu13"), "{e}");
        assert!(e.message().contains("libnccl.so.2"), "{e}");
        let e = c
            .comm_init(2, 0, &[0; 128], Duration::from_secs(1))
            .err()
            .unwrap();
        assert!(e.message().contains("QUABLA_NCCL_DIR"), "{e}");
    }

    #[test]
    fn the_plugin_has_no_devices_and_no_programs() {
        let info = NcclBackend.info();
        assert!(info.devices.is_empty());
        assert_eq!(info.extensions, ["collectives"]);
        let e = NcclBackend
            .compile(Program::parse("program() {\n  return\n}\n").unwrap())
            .err()
            .unwrap();
        assert!(e.message().contains("`cuda` plugin"), "{e}");
    }
}
