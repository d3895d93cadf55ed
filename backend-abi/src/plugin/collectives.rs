//! The plugin kit's side of the collectives extension: what a collectives plugin implements
//! ([`Collectives`], [`Communicator`]), the checks every one needs (shapes, dtypes and byte
//! sizes of each call, done once here), and the `extern "C"` table.

use super::entry::{guard, lock, PluginEntry};
use crate::abi::*;
use crate::{DType, TensorType};
use abi_stable::prefix_type::PrefixTypeTrait;
use abi_stable::std_types::{RResult, RSlice, RVec};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a collective waits for its peers when the host does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// A collectives engine (MPI, NCCL), as a plugin author writes it.
pub trait Collectives: Send + Sync {
    /// See [`CollectivesMod::unique_id`].
    fn unique_id(&self) -> Result<Vec<u8>, AbiError>;
    /// Joins a communicator (`world_size` 0: from the launcher). Every later call on it gives
    /// up after `timeout`.
    fn comm_init(
        &self,
        world_size: u32,
        rank: u32,
        id: &[u8],
        timeout: Duration,
    ) -> Result<Box<dyn Communicator>, AbiError>;
}

/// One rank's end of a communicator.
pub trait Communicator: Send + Sync {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// The memory it works on (`DEVICE_KIND_*`).
    fn device_kind(&self) -> u32;
    /// Runs a call the kit has checked (see [`Collective`]).
    fn run(&self, call: &Collective) -> Result<(), AbiError>;
    /// Group start/end; the default runs every call at once, which is always correct.
    fn group(&self, _start: bool) -> Result<(), AbiError> {
        Ok(())
    }
}

/// A checked collective call: its kind, op and root are valid, `src` and `dst` have the
/// dtype, shapes and byte sizes the kind needs and the communicator's memory kind.
#[derive(Clone, Debug)]
pub struct Collective {
    pub kind: CollectiveKind,
    pub op: ReduceOp,
    pub root: u32,
    pub dtype: DType,
    pub src: BufferExport,
    pub dst: BufferExport,
}

impl Collective {
    /// Checks `call` for a communicator of `size` ranks working on `device_kind` memory.
    pub fn check(call: &CollectiveCall, size: u32, device_kind: u32) -> Result<Self, AbiError> {
        let kind = CollectiveKind::from_u32(call.kind)
            .ok_or_else(|| AbiError::invalid(format!("unknown collective kind {}", call.kind)))?;
        let op = ReduceOp::from_u32(call.op)
            .ok_or_else(|| AbiError::invalid(format!("unknown reduction op {}", call.op)))?;
        let src = typed(&call.src, "source")?;
        let dst = typed(&call.dst, "destination")?;
        if src.dtype != dst.dtype {
            return Err(AbiError::invalid(format!(
                "{kind:?}: the destination is {} but the source is {}",
                dst.dtype, src.dtype
            )));
        }
        for (what, e) in [("source", &call.src), ("destination", &call.dst)] {
            if e.device_kind != device_kind {
                return Err(AbiError::invalid(format!(
                    "{kind:?}: the {what} is memory of device kind {} but this communicator works \
                     on kind {device_kind}; stage it through memory of that kind",
                    e.device_kind
                )));
            }
        }
        if kind == CollectiveKind::Broadcast && call.root >= size {
            return Err(AbiError::invalid(format!(
                "broadcast from rank {} in a communicator of {size} ranks",
                call.root
            )));
        }
        let reduces = matches!(
            kind,
            CollectiveKind::AllReduce | CollectiveKind::ReduceScatter
        );
        if reduces && op == ReduceOp::Mean && !src.dtype.is_float() {
            return Err(AbiError::invalid(format!(
                "a mean over ranks needs a floating dtype, not {}; sum and divide instead",
                src.dtype
            )));
        }
        if reduces && src.dtype == DType::Bool && op == ReduceOp::Sum {
            return Err(AbiError::invalid(
                "a sum of bool over ranks is not defined; use max (any) or min (all)",
            ));
        }
        let want = dst_shape(kind, &src.shape, size)?;
        if dst.shape != want {
            return Err(AbiError::invalid(format!(
                "{kind:?} of {} over {size} ranks writes shape {want:?}, but the destination is {:?}",
                src,
                dst.shape
            )));
        }
        Ok(Collective {
            kind,
            op,
            root: call.root,
            dtype: src.dtype,
            src: call.src.clone(),
            dst: call.dst.clone(),
        })
    }
}

/// The type an export describes, its byte size checked against it.
fn typed(e: &BufferExport, what: &str) -> Result<TensorType, AbiError> {
    let dtype = DType::from_code(e.dtype).ok_or_else(|| {
        AbiError::invalid(format!("the {what} has unknown dtype code {}", e.dtype))
    })?;
    let shape = e
        .shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| AbiError::invalid(format!("the {what}'s shape does not fit this machine")))?;
    let ty = TensorType::new(dtype, shape);
    let bytes = ty
        .checked_size_bytes()
        .map_err(|e| AbiError::invalid(e.to_string()))?;
    if bytes as u64 != e.byte_size {
        return Err(AbiError::invalid(format!(
            "the {what} is {ty} ({bytes} bytes) but its export says {} bytes",
            e.byte_size
        )));
    }
    if e.address == 0 && bytes != 0 {
        return Err(AbiError::invalid(format!("the {what} has a null address")));
    }
    Ok(ty)
}

/// The destination shape of `kind` on a source of `shape` over `size` ranks.
pub fn dst_shape(kind: CollectiveKind, shape: &[usize], size: u32) -> Result<Vec<usize>, AbiError> {
    let n = size as usize;
    Ok(match kind {
        CollectiveKind::AllReduce | CollectiveKind::Broadcast => shape.to_vec(),
        CollectiveKind::AllGather => std::iter::once(n).chain(shape.iter().copied()).collect(),
        CollectiveKind::ReduceScatter => {
            let lead = shape.first().copied().unwrap_or(0);
            if shape.is_empty() || !lead.is_multiple_of(n) {
                return Err(AbiError::invalid(format!(
                    "reduce_scatter splits axis 0 among {n} ranks, so the source needs a leading \
                     axis divisible by {n}; its shape is {shape:?}"
                )));
            }
            std::iter::once(lead / n)
                .chain(shape[1..].iter().copied())
                .collect()
        }
    })
}

struct Comm {
    inner: Arc<dyn Communicator>,
}

/// The communicators of one plugin, by handle.
#[derive(Default)]
pub struct CommTable {
    comms: Mutex<HashMap<u64, Comm>>,
    next: AtomicU64,
}

impl CommTable {
    fn get(&self, h: u64) -> Result<Arc<dyn Communicator>, AbiError> {
        lock(&self.comms)
            .get(&h)
            .map(|c| c.inner.clone())
            .ok_or_else(|| AbiError::invalid(format!("communicator handle {h} is not live")))
    }
}

fn engine<E: PluginEntry>() -> Result<&'static dyn Collectives, AbiError> {
    E::state().collectives().ok_or_else(|| {
        AbiError::unimplemented(
            "this plugin has no collectives; load a collectives plugin (mpi, nccl)",
        )
    })
}

extern "C" fn unique_id<E: PluginEntry>() -> RResult<RVec<u8>, AbiError> {
    guard(|| Ok(engine::<E>()?.unique_id()?.into()))
}

extern "C" fn comm_init<E: PluginEntry>(
    world_size: u32,
    rank: u32,
    id: RSlice<'_, u8>,
    timeout_ms: u64,
) -> RResult<CommInfo, AbiError> {
    guard(|| {
        if world_size != 0 && rank >= world_size {
            return Err(AbiError::invalid(format!(
                "rank {rank} does not exist in a world of {world_size}"
            )));
        }
        let timeout = match timeout_ms {
            0 => DEFAULT_TIMEOUT,
            ms => Duration::from_millis(ms),
        };
        let c = engine::<E>()?.comm_init(world_size, rank, id.as_slice(), timeout)?;
        let table = E::state().comm_table();
        let handle = table.next.fetch_add(1, Ordering::Relaxed) + 1;
        let info = CommInfo {
            handle,
            rank: c.rank(),
            size: c.size(),
            device_kind: c.device_kind(),
        };
        lock(&table.comms).insert(handle, Comm { inner: c.into() });
        Ok(info)
    })
}

extern "C" fn collective<E: PluginEntry>(
    comm: u64,
    call: &CollectiveCall,
) -> RResult<(), AbiError> {
    guard(|| {
        let c = E::state().comm_table().get(comm)?;
        let checked = Collective::check(call, c.size(), c.device_kind())?;
        c.run(&checked)
    })
}

extern "C" fn group<E: PluginEntry>(comm: u64, start: bool) -> RResult<(), AbiError> {
    guard(|| E::state().comm_table().get(comm)?.group(start))
}

extern "C" fn comm_release<E: PluginEntry>(comm: u64) -> RResult<(), AbiError> {
    guard(|| {
        lock(&E::state().comm_table().comms)
            .remove(&comm)
            .map(drop)
            .ok_or_else(|| AbiError::invalid(format!("communicator handle {comm} is not live")))
    })
}

/// The collectives table of plugin `E` (its entries say so when the backend has none).
pub fn collectives_module<E: PluginEntry>() -> CollectivesModRef {
    CollectivesMod {
        unique_id: unique_id::<E>,
        comm_init: comm_init::<E>,
        collective: collective::<E>,
        group: group::<E>,
        comm_release: comm_release::<E>,
    }
    .leak_into_prefix()
}
