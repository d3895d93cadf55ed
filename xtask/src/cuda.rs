//! NVRTC for the CUDA plugin's kernel compiler (`backends/cuda`): PyPI's
//! `nvidia-cuda-nvrtc` wheel (`libnvrtc.so.13` and its builtins, no GPU needed), downloaded
//! once with `pip download --no-deps` and unpacked into
//! `~/.cache/quabla/cuda/nvrtc-<version>`, where the plugin looks for it (or wherever
//! `QUABLA_NVRTC_DIR` points).

use std::path::PathBuf;

/// The NVRTC release the kernels are compiled with in CI (CUDA 13.0).
pub const NVRTC_VERSION: &str = "13.0.88";

/// The folder holding `libnvrtc.so.13` once unpacked.
pub fn lib_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| {
        PathBuf::from(h)
            .join(".cache/quabla/cuda")
            .join(format!("nvrtc-{NVRTC_VERSION}"))
            .join("nvidia/cu13/lib")
    })
}

/// Makes sure NVRTC is there; returns its library folder, or `None` with the reason
/// printed (the kernel-compile tests then skip).
pub fn ensure() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("QUABLA_NVRTC_DIR") {
        return Some(PathBuf::from(dir));
    }
    let lib = lib_dir()?;
    if lib.join("libnvrtc.so.13").is_file() {
        return Some(lib);
    }
    let root = lib.parent()?.parent()?.parent()?.to_path_buf();
    eprintln!(
        "xtask: fetching NVRTC {NVRTC_VERSION} (PyPI's nvidia-cuda-nvrtc wheel, 90 MB) into {}",
        root.display()
    );
    let unpacked = super::wheels::fetch(
        &format!("nvidia-cuda-nvrtc=={NVRTC_VERSION}"),
        "nvidia_cuda_nvrtc",
        &root,
    );
    if unpacked && lib.join("libnvrtc.so.13").is_file() {
        Some(lib)
    } else {
        eprintln!("xtask: could not fetch NVRTC; the CUDA kernel-compile tests skip");
        None
    }
}
