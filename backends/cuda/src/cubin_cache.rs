//! Cubins cached on disk, so a program's kernels compile once per machine: a file per
//! (source, SM, NVRTC version) under `QUABLA_CUDA_CACHE`, or the user's cache folder
//! (`$XDG_CACHE_HOME` or `~/.cache`, then `quabla/cuda/cubins`). A file that cannot be read
//! or written only costs a compile; a truncated one is detected by its length header.

use crate::nvrtc::{self, Cubin};
use std::path::PathBuf;

/// FNV-1a, 64 bits: a stable hash of the source across Rust versions and processes (std's
/// hasher promises neither), and enough to name files (the SM and NVRTC version are in the
/// name too, and a collision would only load a wrong cubin for identical-hash sources).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn folder() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("QUABLA_CUDA_CACHE") {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("quabla/cuda/cubins"))
}

/// Where `source`'s cubin for `sm` lives.
fn path(source: &str, name: &str, sm: u32) -> Option<PathBuf> {
    let (major, minor) = nvrtc::version().ok()?;
    let key = fnv1a(format!("{name}\0{source}").as_bytes());
    Some(folder()?.join(format!("{key:016x}-sm{sm}-nvrtc{major}.{minor}.cubin")))
}

/// The cubin of `source` for `sm`: from the cache when there, else compiled and stored.
/// Returns it and whether it came from the cache.
pub fn cubin(source: &str, name: &str, sm: u32) -> Result<(Cubin, bool), String> {
    let file = path(source, name, sm);
    if let Some(bytes) = file.as_ref().and_then(|f| std::fs::read(f).ok()) {
        // 8 bytes of length, then the cubin: a partial write fails the check.
        if bytes.len() >= 8 {
            let (len, body) = bytes.split_at(8);
            let len = u64::from_le_bytes(len.try_into().unwrap_or([0; 8])) as usize;
            if len == body.len() && len > 0 {
                let cubin = Cubin {
                    bytes: body.to_vec(),
                    log: String::new(),
                };
                return Ok((cubin, true));
            }
        }
    }
    let cubin = nvrtc::compile_cubin(source, name, sm)?;
    if let Some(f) = file {
        let mut data = (cubin.bytes.len() as u64).to_le_bytes().to_vec();
        data.extend_from_slice(&cubin.bytes);
        // Written to a temporary name, then renamed: readers never see half a file.
        let tmp = f.with_extension(format!("tmp{}", std::process::id()));
        let stored = f
            .parent()
            .map(std::fs::create_dir_all)
            .transpose()
            .and_then(|_| std::fs::write(&tmp, &data))
            .and_then(|_| std::fs::rename(&tmp, &f));
        if stored.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok((cubin, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_is_the_standard_function() {
        // The published FNV-1a 64 values.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    /// A second compile of one source comes from the cache; a truncated file is compiled
    /// again and rewritten; without NVRTC the test says so.
    #[test]
    fn cubins_are_cached_by_source_sm_and_version() {
        if nvrtc::load().is_err() {
            eprintln!("skipping: no NVRTC");
            return;
        }
        let dir = std::env::temp_dir().join(format!("quabla-cubin-cache-{}", std::process::id()));
        std::env::set_var("QUABLA_CUDA_CACHE", &dir);
        let src = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] += 1.0f; }";
        let (first, hit) = cubin(src, "k", 80).unwrap();
        assert!(!hit);
        let (again, hit) = cubin(src, "k", 80).unwrap();
        assert!(hit);
        assert_eq!(first.bytes, again.bytes);
        let (_, hit) = cubin(src, "k", 90).unwrap();
        assert!(!hit, "another SM is another cubin");
        let file = path(src, "k", 80).unwrap();
        let whole = std::fs::read(&file).unwrap();
        std::fs::write(&file, &whole[..whole.len() / 2]).unwrap();
        let (redone, hit) = cubin(src, "k", 80).unwrap();
        assert!(!hit, "a truncated file is not used");
        assert_eq!(redone.bytes, first.bytes);
        assert_eq!(std::fs::read(&file).unwrap(), whole);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
