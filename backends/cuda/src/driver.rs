//! The CUDA driver, if any: found without panicking (cudarc's loaders panic when a library is
//! missing, so presence is asked first), and the devices it reports.

use cudarc::driver::{result, sys};

/// One GPU: its name, memory and compute capability.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    pub name: String,
    pub memory_bytes: u64,
    pub compute_capability: (i32, i32),
}

/// The devices, or why there are none (no driver library, or the driver's own error).
pub fn devices() -> Result<Vec<GpuInfo>, String> {
    // SAFETY: tries to open libcuda by its usual names; calls nothing in it.
    if !unsafe { sys::is_culib_present() } {
        return Err(
            "no CUDA driver: libcuda.so.1 is not on this machine (install NVIDIA's \
                    driver; the plugin needs a GPU to run programs)"
                .into(),
        );
    }
    let driver = |e: cudarc::driver::DriverError| format!("the CUDA driver: {e}");
    result::init().map_err(driver)?;
    let count = result::device::get_count().map_err(driver)?;
    let mut out = Vec::new();
    for ordinal in 0..count {
        let dev = result::device::get(ordinal).map_err(driver)?;
        let attr = |a| {
            // SAFETY: `dev` came from cuDeviceGet.
            unsafe { result::device::get_attribute(dev, a) }.map_err(driver)
        };
        out.push(GpuInfo {
            name: result::device::get_name(dev).map_err(driver)?,
            // SAFETY: `dev` came from cuDeviceGet.
            memory_bytes: unsafe { result::device::total_mem(dev) }.map_err(driver)? as u64,
            compute_capability: (
                attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            ),
        });
    }
    Ok(out)
}
