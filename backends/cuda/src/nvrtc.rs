//! Compiling kernels with NVRTC to a cubin for one SM (loaded as binary, so a driver older
//! than NVRTC's PTX ISA is never a problem). NVRTC is found through `QUABLA_NVRTC_DIR`, the
//! folder `cargo xtask` unpacks PyPI's `nvidia-cuda-nvrtc` wheel into
//! (`~/.cache/quabla/cuda/nvrtc-<version>/nvidia/cu13/lib`), or the system's library path.
//! The wheel's libraries have no RUNPATH, so they are loaded here by full path first (the
//! builtins library before NVRTC, which opens it by name); cudarc then finds NVRTC loaded.

use cudarc::nvrtc::sys;
use std::ffi::{c_char, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The NVRTC release CI compiles with (PyPI's `nvidia-cuda-nvrtc`).
pub const NVRTC_VERSION: &str = "13.0.88";

/// A kernel compiled for one SM, with NVRTC's log (ptxas's register and spill report).
#[derive(Debug)]
pub struct Cubin {
    pub bytes: Vec<u8>,
    pub log: String,
}

fn candidate_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("QUABLA_NVRTC_DIR") {
        dirs.push(PathBuf::from(d));
    }
    if let Some(h) = std::env::var_os("HOME") {
        dirs.push(
            PathBuf::from(h)
                .join(".cache/quabla/cuda")
                .join(format!("nvrtc-{NVRTC_VERSION}"))
                .join("nvidia/cu13/lib"),
        );
    }
    dirs
}

/// Loads NVRTC once; `Err` says where it was looked for and how to get it.
pub fn load() -> Result<(), String> {
    static LOADED: OnceLock<Result<Vec<libloading::Library>, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            for dir in candidate_dirs() {
                let (builtins, nvrtc) = (
                    dir.join("libnvrtc-builtins.so.13.0"),
                    dir.join("libnvrtc.so.13"),
                );
                if !nvrtc.is_file() {
                    continue;
                }
                let open = |p: &PathBuf| {
                    // SAFETY: NVRTC's initialisers are plain C library set-up.
                    unsafe {
                        libloading::os::unix::Library::open(
                            Some(p),
                            libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL,
                        )
                    }
                    .map(libloading::Library::from)
                    .map_err(|e| format!("loading {}: {e}", p.display()))
                };
                let mut libs = Vec::new();
                if builtins.is_file() {
                    libs.push(open(&builtins)?);
                }
                libs.push(open(&nvrtc)?);
                return Ok(libs);
            }
            // SAFETY: tries to open the library by its usual names; nothing is called.
            if unsafe { sys::is_culib_present() } {
                return Ok(Vec::new());
            }
            Err(format!(
                "no NVRTC: looked in {:?} and on the library path; run `cargo xtask cuda` (PyPI's \
                 nvidia-cuda-nvrtc=={NVRTC_VERSION}) or set QUABLA_NVRTC_DIR to the folder \
                 holding libnvrtc.so.13",
                candidate_dirs()
            ))
        })
        .as_ref()
        .map(|_| ())
        .map_err(Clone::clone)
}

/// NVRTC's version, `(major, minor)`.
pub fn version() -> Result<(i32, i32), String> {
    load()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded; two out-parameters.
    let r = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcVersion failed: {r:?}"));
    }
    Ok((major, minor))
}

/// Owns an NVRTC program and destroys it on every path.
struct ProgramHandle(sys::nvrtcProgram);

impl Drop for ProgramHandle {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram, destroyed once; the result is ignored
        // (nothing to do about a failed free, and no panic in a destructor).
        let _ = unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
    }
}

fn log_of(p: &ProgramHandle) -> String {
    let mut size = 0usize;
    // SAFETY: a live program; out-parameter.
    if unsafe { sys::nvrtcGetProgramLogSize(p.0, &mut size) } != sys::nvrtcResult::NVRTC_SUCCESS {
        return String::new();
    }
    let mut buf = vec![0u8; size.max(1)];
    // SAFETY: `buf` holds `size` bytes as NVRTC asked.
    unsafe { sys::nvrtcGetProgramLog(p.0, buf.as_mut_ptr() as *mut c_char) };
    String::from_utf8_lossy(&buf)
        .trim_end_matches('\0')
        .to_string()
}

/// Compiles `source` to a cubin for `sm` (e.g. 90): IEEE arithmetic (no fast math, no
/// contraction into FMAs: each QIR op rounds once), ptxas's resource report in the log.
pub fn compile_cubin(source: &str, name: &str, sm: u32) -> Result<Cubin, String> {
    load()?;
    let src = CString::new(source).map_err(|_| "a kernel source with a NUL byte".to_string())?;
    let cname = CString::new(name).map_err(|_| "a kernel name with a NUL byte".to_string())?;
    let mut raw: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: valid C strings; no headers.
    let r = unsafe {
        sys::nvrtcCreateProgram(
            &mut raw,
            src.as_ptr(),
            cname.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcCreateProgram failed: {r:?}"));
    }
    let program = ProgramHandle(raw);
    let options = [
        format!("--gpu-architecture=sm_{sm}"),
        "--fmad=false".into(),
        "--std=c++17".into(),
        "--ptxas-options=-v".into(),
    ]
    .into_iter()
    .map(CString::new)
    .collect::<Result<Vec<_>, _>>()
    .map_err(|_| "an NVRTC option with a NUL byte".to_string())?;
    let ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: a live program; `ptrs` points at live C strings.
    let r = unsafe { sys::nvrtcCompileProgram(program.0, ptrs.len() as i32, ptrs.as_ptr()) };
    let log = log_of(&program);
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!(
            "NVRTC could not compile `{name}` for sm_{sm} ({r:?}):\n{log}"
        ));
    }
    let mut size = 0usize;
    // SAFETY: a compiled program; out-parameter.
    let r = unsafe { sys::nvrtcGetCUBINSize(program.0, &mut size) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS || size == 0 {
        return Err(format!("nvrtcGetCUBINSize failed for `{name}`: {r:?}"));
    }
    let mut bytes = vec![0u8; size];
    // SAFETY: `bytes` holds the size NVRTC reported.
    let r = unsafe { sys::nvrtcGetCUBIN(program.0, bytes.as_mut_ptr() as *mut c_char) };
    if r != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcGetCUBIN failed for `{name}`: {r:?}"));
    }
    Ok(Cubin { bytes, log })
}

/// `(registers, spill stores, spill loads)` from ptxas's `-v` report of one kernel.
pub fn resources(log: &str) -> Option<(u32, u32, u32)> {
    let number_before = |line: &str, unit: &str| -> Option<u32> {
        let end = line.find(unit)?;
        line[..end]
            .trim_end()
            .rsplit([' ', ','])
            .next()?
            .parse()
            .ok()
    };
    let regs = log.lines().find_map(|l| number_before(l, "registers"))?;
    let spills = log.lines().find(|l| l.contains("spill stores"));
    let (stores, loads) = match spills {
        Some(l) => (
            number_before(l, "bytes spill stores").unwrap_or(0),
            number_before(l, "bytes spill loads").unwrap_or(0),
        ),
        None => (0, 0),
    };
    Some((regs, stores, loads))
}
