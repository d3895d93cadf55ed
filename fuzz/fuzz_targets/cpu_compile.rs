//! The CPU plugin's `compile` entry point, called through the ABI exactly as a host calls a
//! loaded plugin, on arbitrary bytes: it must return an executable or an `AbiError`; a
//! panic, abort or overflow inside the plugin is a crash here.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quabla_abi::host::Plugin;
use quabla_abi::qir::QIR_VERSION;
use std::sync::OnceLock;

fn plugin() -> &'static Plugin {
    static PLUGIN: OnceLock<Plugin> = OnceLock::new();
    PLUGIN.get_or_init(|| {
        Plugin::from_module(quabla_cpu::backend_module()).expect("the CPU plugin's module loads")
    })
}

fuzz_target!(|data: &[u8]| {
    // The host-side signature is not what is under test: the plugin decodes the bytes itself.
    let _ = plugin().compile_bytes(data, QIR_VERSION, Vec::new(), Vec::new());
});
