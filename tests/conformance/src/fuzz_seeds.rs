//! Seed corpora for the fuzz targets in `fuzz/`, made from the suite's own cases: every
//! program as text (`qir_text`) and as QIR binary (`qir_decode`, `cpu_compile`, `cuda_plan`), every
//! case's inputs as a safetensors file (`safetensors_load`), and the boundary programs
//! (nesting at and past the depth limit) as binary. `cargo xtask fuzz` writes them before a
//! run.

use crate::case::Case;
use quabla_abi::qir::{self, Program, MAX_REGION_DEPTH, QIR_VERSION};
use quabla_abi::testing::nested_cond_program;
use quabla_abi::DType;
use safetensors::tensor::{Dtype, TensorView};
use std::path::Path;

/// The fuzz targets that take QIR binary.
const BINARY_TARGETS: [&str; 3] = ["qir_decode", "cpu_compile", "cuda_plan"];

/// Seeds written per target.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SeedCounts {
    pub text: usize,
    pub binary: usize,
    pub safetensors: usize,
}

fn safetensors_dtype(d: DType) -> Dtype {
    match d {
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
        DType::I32 => Dtype::I32,
        DType::U32 => Dtype::U32,
        DType::Bool => Dtype::BOOL,
    }
}

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) -> Result<(), String> {
    let d = dir.join(target);
    std::fs::create_dir_all(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    let f = d.join(name);
    std::fs::write(&f, bytes).map_err(|e| format!("cannot write {}: {e}", f.display()))
}

fn inputs_file(case: &Case) -> Result<Option<Vec<u8>>, String> {
    let hosts = case
        .inputs
        .iter()
        .map(|r| r.to_host())
        .collect::<Result<Vec<_>, _>>()?;
    if hosts.is_empty() {
        return Ok(None);
    }
    let views = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            TensorView::new(safetensors_dtype(h.ty.dtype), h.ty.shape.clone(), &h.bytes)
                .map(|v| (format!("input{i}"), v))
                .map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::tensor::serialize(views, None)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Writes the seeds under `dir/<target>/`, one file per case (named by its index).
pub fn write_fuzz_seeds(cases: &[Case], dir: &Path) -> Result<SeedCounts, String> {
    let mut n = SeedCounts::default();
    for (i, case) in cases.iter().enumerate() {
        let name = format!("case{i:04}");
        write(dir, "qir_text", &name, case.program.as_bytes())?;
        n.text += 1;
        let p = Program::parse(&case.program).map_err(|e| format!("{}: {e}", case.name))?;
        let bytes = qir::encode(&p, QIR_VERSION).map_err(|e| format!("{}: {e}", case.name))?;
        for t in BINARY_TARGETS {
            write(dir, t, &name, &bytes)?;
        }
        n.binary += 1;
        if let Some(st) = inputs_file(case).map_err(|e| format!("{}: {e}", case.name))? {
            write(dir, "safetensors_load", &name, &st)?;
            n.safetensors += 1;
        }
    }
    for levels in [MAX_REGION_DEPTH, MAX_REGION_DEPTH + 1] {
        let bytes = nested_cond_program(levels);
        for t in BINARY_TARGETS {
            write(dir, t, &format!("nested{levels}"), &bytes)?;
        }
        n.binary += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_gives_seeds_that_decode_and_read_back() {
        let cases = crate::embedded_cases().unwrap();
        let dir = std::env::temp_dir().join(format!("quabla-seeds-{}", std::process::id()));
        let n = write_fuzz_seeds(&cases, &dir).unwrap();
        assert_eq!(n.text, cases.len());
        assert_eq!(n.binary, cases.len() + 2);
        assert!(n.safetensors > cases.len() / 2, "{n:?}");
        let bin = std::fs::read(dir.join("qir_decode/case0000")).unwrap();
        assert_eq!(
            qir::decode(&bin).unwrap(),
            Program::parse(&cases[0].program).unwrap()
        );
        let st = std::fs::read(dir.join("safetensors_load/case0000")).unwrap();
        let read = safetensors::SafeTensors::deserialize(&st).unwrap();
        assert_eq!(read.len(), cases[0].inputs.len());
        let deep = std::fs::read(dir.join(format!("qir_decode/nested{}", MAX_REGION_DEPTH + 1)));
        assert!(qir::decode(&deep.unwrap()).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
