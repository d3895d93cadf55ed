//! The ABI layout golden: field order, offsets and sizes of every type that crosses the
//! boundary. An accidental change fails here; an intended one (appending a field, which
//! needs an ABI minor bump) is recorded with `QUABLA_BLESS=1 cargo test -p quabla-abi`.

use quabla_abi::abi::*;
use std::mem::{align_of, offset_of, size_of};

macro_rules! layout {
    ($out:ident, $t:ty { $($f:ident),* }) => {{
        $out.push_str(&format!("{} size={} align={}\n", stringify!($t), size_of::<$t>(), align_of::<$t>()));
        $( $out.push_str(&format!("  {} @{}\n", stringify!($f), offset_of!($t, $f))); )*
    }};
}

fn current() -> String {
    let mut s = format!("ABI {ABI_MAJOR}.{ABI_MINOR}\n");
    layout!(
        s,
        BackendMod {
            abi_version,
            info,
            compile,
            upload,
            buffer_info,
            execute,
            download,
            event_is_ready,
            event_on_ready,
            event_wait,
            release_buffer,
            release_executable,
            release_event,
            accuracy,
            buffer_ready,
            export_buffer,
            allocate,
            collectives,
            set_host_callback
        }
    );
    layout!(
        s,
        CollectivesMod {
            unique_id,
            comm_init,
            collective,
            group,
            comm_release
        }
    );
    layout!(
        s,
        BufferExport {
            device_kind,
            ordinal,
            address,
            byte_size,
            dtype,
            shape,
            ready_event
        }
    );
    layout!(
        s,
        CommInfo {
            handle,
            rank,
            size,
            device_kind
        }
    );
    layout!(
        s,
        CollectiveCall {
            kind,
            op,
            root,
            src,
            dst
        }
    );
    layout!(s, AbiVersion { major, minor });
    layout!(s, AbiError { code, message });
    layout!(
        s,
        DeviceDescription {
            id,
            kind,
            name,
            memory_bytes
        }
    );
    layout!(
        s,
        Capabilities {
            ops,
            dtypes,
            region_kinds,
            f64,
            synchronous_readback,
            extensions
        }
    );
    layout!(
        s,
        BackendInfo {
            name,
            version,
            qir_min,
            qir_max,
            devices,
            capabilities
        }
    );
    layout!(s, BufferInfo { dtype, shape });
    layout!(s, ReadyCallback { func });
    layout!(s, HostCallbackFn { func });
    s
}

#[test]
fn abi_layout_matches_the_golden() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/abi-layout.golden");
    let now = current();
    if std::env::var_os("QUABLA_BLESS").is_some() {
        std::fs::write(path, &now).unwrap();
    }
    let golden = std::fs::read_to_string(path)
        .expect("abi-layout.golden exists (create it with QUABLA_BLESS=1)");
    assert_eq!(
        now, golden,
        "the ABI layout changed: if intended, append fields only, bump ABI_MINOR, and re-bless"
    );
}
