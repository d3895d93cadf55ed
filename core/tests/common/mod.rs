//! Test helpers: the CPU backend registered in-process.

use quabla::Device;
use std::sync::{Arc, Once};

#[allow(dead_code)] // not every test file uses it
pub fn cpu() -> Arc<Device> {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| quabla::runtime::register_static("cpu", quabla_cpu::backend_module));
    quabla::device("cpu").expect("the statically linked CPU backend loads")
}

/// A plugin library built beside this test binary (`target/<profile>/lib<name>.so` for
/// `target/<profile>/deps/<test>`); `cargo xtask test` builds them first.
#[allow(dead_code)] // not every test file uses it
pub fn built_library(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("a test binary knows its path");
    let dir = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("test binaries live in target/<profile>/deps");
    let p = dir.join(format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(
        p.is_file(),
        "{} is missing: build it first (`cargo xtask test` does)",
        p.display()
    );
    p
}

/// Deterministic pseudo-random values in [-1, 1).
#[allow(dead_code)] // not every test file uses it
pub fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}
