//! The collectives extension (ABI 1.3): communicators and collective operations over buffers
//! that compute plugins export (`BackendMod::export_buffer`). A plugin offers it by listing
//! `collectives` in its capabilities' extensions and returning the table from
//! `BackendMod::collectives`; a host finds none on older plugins.
//!
//! Every call is blocking and collective: each rank of the communicator makes the same calls
//! in the same order, with the same kinds, ops, dtypes and shapes. A peer that fails or never
//! arrives ends the call with `Unavailable` or `DeadlineExceeded`, never a hang.

use super::{AbiError, BufferExport};
use abi_stable::{
    std_types::{RResult, RSlice, RVec},
    StableAbi,
};

/// Which collective (`CollectiveCall::kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollectiveKind {
    /// Every rank gets the reduction of every rank's buffer; `dst` has `src`'s shape.
    AllReduce = 0,
    /// Every rank gets every rank's buffer stacked in rank order: `dst` is `[size, *src]`.
    AllGather = 1,
    /// Every rank gets `root`'s buffer; `dst` has `src`'s shape.
    Broadcast = 2,
    /// The reduction of every rank's `[size * k, ...]` buffer, rank `r` keeping rows
    /// `r*k..(r+1)*k`: `dst` is `[k, ...]`.
    ReduceScatter = 3,
}

impl CollectiveKind {
    pub fn from_u32(c: u32) -> Option<CollectiveKind> {
        Some(match c {
            0 => CollectiveKind::AllReduce,
            1 => CollectiveKind::AllGather,
            2 => CollectiveKind::Broadcast,
            3 => CollectiveKind::ReduceScatter,
            _ => return None,
        })
    }
}

/// How `AllReduce` and `ReduceScatter` combine ranks (`CollectiveCall::op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum = 0,
    /// The sum divided by the world size (floating dtypes only).
    Mean = 1,
    /// NaN wins, as `jnp.maximum`.
    Max = 2,
    /// NaN wins, as `jnp.minimum`.
    Min = 3,
}

impl ReduceOp {
    pub fn from_u32(c: u32) -> Option<ReduceOp> {
        Some(match c {
            0 => ReduceOp::Sum,
            1 => ReduceOp::Mean,
            2 => ReduceOp::Max,
            3 => ReduceOp::Min,
            _ => return None,
        })
    }
}

/// A communicator as `comm_init` returns it.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommInfo {
    pub handle: u64,
    pub rank: u32,
    pub size: u32,
    /// The memory the communicator reads and writes (a `DEVICE_KIND_*`): a host stages
    /// buffers of other kinds through host memory.
    pub device_kind: u32,
}

/// One collective operation.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct CollectiveCall {
    /// A [`CollectiveKind`] code.
    pub kind: u32,
    /// A [`ReduceOp`] code (read by `AllReduce` and `ReduceScatter` only).
    pub op: u32,
    /// The source rank of `Broadcast`.
    pub root: u32,
    pub src: BufferExport,
    /// Written by the call; the shapes each kind needs are on [`CollectiveKind`].
    pub dst: BufferExport,
}

/// The collectives table.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = CollectivesModRef)))]
pub struct CollectivesMod {
    /// Bytes that name a new communicator: made by one rank, sent to the others by the
    /// launcher's own means, passed to every rank's `comm_init`. Empty when the plugin takes
    /// its peers from its launcher (MPI).
    pub unique_id: extern "C" fn() -> RResult<RVec<u8>, AbiError>,
    /// Joins a communicator: `(world size, rank, unique id, timeout in milliseconds for every
    /// later call; 0 for the plugin's default)`. A world size of 0 takes the size and rank
    /// from the launcher (`mpirun`).
    pub comm_init: extern "C" fn(u32, u32, RSlice<'_, u8>, u64) -> RResult<CommInfo, AbiError>,
    /// Runs one collective on a communicator.
    pub collective: extern "C" fn(u64, &CollectiveCall) -> RResult<(), AbiError>,
    /// Starts (`true`) or ends (`false`) a group: the calls in between may be fused and run
    /// at its end (NCCL's group calls); a plugin may also run them at once.
    pub group: extern "C" fn(u64, bool) -> RResult<(), AbiError>,
    #[sabi(last_prefix_field)]
    pub comm_release: extern "C" fn(u64) -> RResult<(), AbiError>,
}
