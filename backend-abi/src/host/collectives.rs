//! The host side of the collectives extension and of buffer export (ABI 1.3): a safe
//! communicator over a collectives plugin's table, and collectives on any compute plugin's
//! buffers, zero-copy where the compute plugin exports memory of the communicator's kind and
//! staged through host memory where it cannot.

use super::client::{Buffer, Plugin};
use crate::abi::*;
use crate::plugin::dst_shape;
use crate::{HostArray, TensorType};
use abi_stable::std_types::{RResult, RSlice};
use std::time::Duration;

fn ok<T>(r: RResult<T, AbiError>) -> Result<T, AbiError> {
    r.into_result()
}

impl Plugin {
    /// The plugin's collectives table, when it has one (an ABI 1.3 plugin listing
    /// `collectives` among its extensions).
    pub fn collectives(&self) -> Option<CollectivesModRef> {
        let listed = self
            .info()
            .capabilities
            .extensions
            .iter()
            .any(|e| e.as_str() == "collectives");
        let get = self.module().collectives()?;
        listed.then(|| get()).and_then(|t| t.into_option())
    }

    /// A zero-filled buffer of type `ty` on device 0 that may be written through its export
    /// until first used; `None` when the plugin cannot make one (older than ABI 1.3, or it
    /// declines).
    pub fn allocate(&self, ty: &TensorType) -> Result<Option<Buffer>, AbiError> {
        let Some(allocate) = self.module().allocate() else {
            return Ok(None);
        };
        let shape: Vec<u64> = ty.shape.iter().map(|&d| d as u64).collect();
        match ok(allocate(0, ty.dtype as u8, RSlice::from_slice(&shape))) {
            Ok(h) => {
                let b = self.adopt(h)?;
                if b.ty() != ty {
                    return Err(self.broken(format!("allocated {} when asked for {ty}", b.ty())));
                }
                Ok(Some(b))
            }
            Err(e) if e.code() == ErrorCode::Unimplemented => Ok(None),
            Err(e) => Err(self.named(e)),
        }
    }
}

impl Buffer {
    /// The buffer's memory, valid while `self` lives; `None` when the plugin does not export
    /// (older than ABI 1.3, or it declines). The export is checked against the buffer's type.
    pub fn export(&self) -> Result<Option<BufferExport>, AbiError> {
        let plugin = self.plugin();
        let Some(export) = plugin.module().export_buffer() else {
            return Ok(None);
        };
        let e = match ok(export(self.handle())) {
            Ok(e) => e,
            Err(e) if e.code() == ErrorCode::Unimplemented => return Ok(None),
            Err(e) => return Err(plugin.named(e)),
        };
        let ty = self.ty();
        let shape: Vec<u64> = ty.shape.iter().map(|&d| d as u64).collect();
        let bytes = ty.size_bytes() as u64;
        if e.dtype != ty.dtype as u8 || e.shape.as_slice() != shape || e.byte_size != bytes {
            return Err(plugin.broken(format!(
                "exported a buffer of {ty} as dtype code {}, shape {:?}, {} bytes",
                e.dtype, e.shape, e.byte_size
            )));
        }
        if e.address == 0 && bytes != 0 {
            return Err(plugin.broken("exported a null address".into()));
        }
        Ok(Some(e))
    }
}

/// One rank's end of a communicator; released when dropped.
///
/// ```ignore
/// let mpi = quabla_abi::host::Plugin::load("target/debug/libquabla_mpi.so".as_ref())?;
/// let comm = quabla_abi::host::Communicator::init(&mpi, 0, 0, &[], None)?; // from mpirun
/// let mean = comm.on_buffers(CollectiveKind::AllReduce, ReduceOp::Mean, 0, &grad)?;
/// ```
pub struct Communicator {
    plugin: Plugin,
    table: CollectivesModRef,
    info: CommInfo,
}

impl Communicator {
    /// Joins a communicator through `plugin`'s collectives (see [`CollectivesMod::comm_init`]);
    /// `timeout` bounds every later call (`None`: the plugin's default).
    pub fn init(
        plugin: &Plugin,
        world_size: u32,
        rank: u32,
        id: &[u8],
        timeout: Option<Duration>,
    ) -> Result<Communicator, AbiError> {
        let table = plugin.collectives().ok_or_else(|| {
            AbiError::unimplemented(format!(
                "plugin `{}` has no collectives extension; load a collectives plugin (mpi, nccl)",
                plugin.name()
            ))
        })?;
        let ms = timeout.map_or(0, |t| t.as_millis().clamp(1, u64::MAX as u128) as u64);
        let info = ok((table.comm_init())(
            world_size,
            rank,
            RSlice::from_slice(id),
            ms,
        ))
        .map_err(|e| plugin.named(e))?;
        if info.size == 0 || info.rank >= info.size {
            return Err(plugin.broken(format!(
                "joined a communicator as rank {} of {}",
                info.rank, info.size
            )));
        }
        Ok(Communicator {
            plugin: plugin.clone(),
            table,
            info,
        })
    }

    /// A new unique id from `plugin` (see [`CollectivesMod::unique_id`]).
    pub fn unique_id(plugin: &Plugin) -> Result<Vec<u8>, AbiError> {
        let table = plugin.collectives().ok_or_else(|| {
            AbiError::unimplemented(format!("plugin `{}` has no collectives", plugin.name()))
        })?;
        Ok(ok((table.unique_id())())
            .map_err(|e| plugin.named(e))?
            .into_vec())
    }

    pub fn rank(&self) -> u32 {
        self.info.rank
    }

    pub fn size(&self) -> u32 {
        self.info.size
    }

    /// The memory kind it works on (`DEVICE_KIND_*`).
    pub fn device_kind(&self) -> u32 {
        self.info.device_kind
    }

    /// The collectives plugin.
    pub fn plugin(&self) -> &Plugin {
        &self.plugin
    }

    /// Runs one collective on exported memory.
    ///
    /// # Safety
    /// `src` and `dst` must describe live memory of their byte sizes, of the communicator's
    /// kind, that stays alive for the call; `dst` is written and must be no other value's
    /// (exports of live buffers, `dst` from [`Plugin::allocate`], as
    /// [`Communicator::on_buffers`] passes them).
    pub unsafe fn run(
        &self,
        kind: CollectiveKind,
        op: ReduceOp,
        root: u32,
        src: BufferExport,
        dst: BufferExport,
    ) -> Result<(), AbiError> {
        let call = CollectiveCall {
            kind: kind as u32,
            op: op as u32,
            root,
            src,
            dst,
        };
        ok((self.table.collective())(self.info.handle, &call)).map_err(|e| self.plugin.named(e))
    }

    /// Starts (`true`) or ends (`false`) a group of calls.
    pub fn group(&self, start: bool) -> Result<(), AbiError> {
        ok((self.table.group())(self.info.handle, start)).map_err(|e| self.plugin.named(e))
    }

    /// `kind` on a compute plugin's buffer, the result a new buffer of that plugin. Memory
    /// the compute plugin exports in the communicator's kind is used in place; otherwise
    /// the source is downloaded and the result uploaded (host-memory communicators only).
    pub fn on_buffers(
        &self,
        kind: CollectiveKind,
        op: ReduceOp,
        root: u32,
        src: &Buffer,
    ) -> Result<Buffer, AbiError> {
        let compute = src.plugin();
        let out_ty = TensorType::new(
            src.ty().dtype,
            dst_shape(kind, &src.ty().shape, self.size())?,
        );
        let src_export = src
            .export()?
            .filter(|e| e.device_kind == self.device_kind());
        let staged_src;
        let src_mem = match src_export {
            Some(e) => e,
            None => {
                staged_src = self.stage(src.to_host()?)?;
                staged_src.1.clone()
            }
        };
        if let Some(dst) = compute.allocate(&out_ty)? {
            if let Some(dst_mem) = dst
                .export()?
                .filter(|e| e.device_kind == self.device_kind())
            {
                // SAFETY: both exports are of buffers alive here (`src` or the staged host
                // copy, and `dst`), checked against their types; `dst` is fresh.
                unsafe { self.run(kind, op, root, src_mem, dst_mem)? };
                return Ok(dst);
            }
        }
        let mut out = vec![0u8; out_ty.size_bytes()];
        let dst_mem = BufferExport::host(
            out.as_mut_ptr() as usize,
            out.len() as u64,
            out_ty.dtype as u8,
            &shape64(&out_ty),
        );
        self.stage_kind()?;
        // SAFETY: `out` lives to the end of this function and is nobody else's.
        unsafe { self.run(kind, op, root, src_mem, dst_mem)? };
        let host = HostArray::new(out_ty, out).map_err(AbiError::internal)?;
        compute.upload(host.view())
    }

    /// A host array and its export, for a host-memory communicator.
    fn stage(&self, a: HostArray) -> Result<(HostArray, BufferExport), AbiError> {
        self.stage_kind()?;
        let e = BufferExport::host(
            a.bytes.as_ptr() as usize,
            a.bytes.len() as u64,
            a.ty.dtype as u8,
            &shape64(&a.ty),
        );
        Ok((a, e))
    }

    fn stage_kind(&self) -> Result<(), AbiError> {
        if self.device_kind() == DEVICE_KIND_HOST {
            return Ok(());
        }
        Err(AbiError::invalid(format!(
            "plugin `{}` runs collectives on device memory of kind {}, which the buffer's \
             plugin does not export; put the arrays on a device that plugin serves",
            self.plugin.name(),
            self.device_kind()
        )))
    }
}

fn shape64(ty: &TensorType) -> Vec<u64> {
    ty.shape.iter().map(|&d| d as u64).collect()
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // A failed release leaks one communicator in the plugin; nothing the host could do.
        let _ = (self.table.comm_release())(self.info.handle);
    }
}
