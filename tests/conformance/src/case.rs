//! Case files: JSON records with a QIR text program, inputs, expected outputs and tolerances.

use quabla_abi::{DType, HostArray, TensorType};
use serde::Deserialize;
use std::path::Path;

/// How close an output must be.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Tolerance {
    /// At most this many units in the last place; 0 means identical bits (any NaN matches any
    /// NaN, and -0 does not match +0).
    Ulp { ulp: u64 },
    /// `|got - want| <= atol + rtol * |want|`, NaN matching NaN.
    Close { rtol: f64, atol: f64 },
}

#[derive(Clone, Debug, Deserialize)]
pub struct ArrayRecord {
    pub dtype: String,
    pub shape: Vec<usize>,
    /// Element bits in hex (bool: 0/1), space separated.
    pub data: String,
    #[serde(default)]
    pub tol: Option<Tolerance>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Requires {
    pub ops: Vec<String>,
    pub dtypes: Vec<String>,
}

/// One conformance case.
#[derive(Clone, Debug, Deserialize)]
pub struct Case {
    pub name: String,
    #[serde(default)]
    pub note: String,
    pub program: String,
    pub requires: Requires,
    pub inputs: Vec<ArrayRecord>,
    pub expected: Vec<ArrayRecord>,
}

#[derive(Deserialize)]
struct CaseFile {
    cases: Vec<Case>,
}

impl ArrayRecord {
    /// Decodes the record into a host array.
    pub fn to_host(&self) -> Result<HostArray, String> {
        let dtype: DType = self.dtype.parse()?;
        let ty = TensorType::new(dtype, self.shape.clone());
        let words: Vec<&str> = self.data.split_whitespace().collect();
        if words.len() != ty.num_elements() {
            return Err(format!("{} values for type {ty}", words.len()));
        }
        let mut bytes = Vec::with_capacity(ty.size_bytes());
        for w in words {
            let bits = u64::from_str_radix(w, 16).map_err(|e| format!("bad hex `{w}`: {e}"))?;
            bytes.extend_from_slice(&bits.to_le_bytes()[..dtype.size_bytes()]);
        }
        HostArray::new(ty, bytes)
    }
}

/// Loads every case under `dir` (recursively), each named `<group>/<name>` where the group is
/// the file's path relative to `dir` without `.json`.
pub fn load_cases(dir: &Path) -> Result<Vec<Case>, String> {
    let mut files = Vec::new();
    collect(dir, &mut files).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let group = f.strip_prefix(dir).unwrap_or(&f).with_extension("");
        let group = group.to_string_lossy().replace('\\', "/");
        out.extend(parse_cases(&group, &text).map_err(|e| format!("{}: {e}", f.display()))?);
    }
    Ok(out)
}

/// The cases of one case file's text, named `<group>/<name>`.
pub fn parse_cases(group: &str, json: &str) -> Result<Vec<Case>, String> {
    let parsed: CaseFile = serde_json::from_str(json).map_err(|e| e.to_string())?;
    Ok(parsed
        .cases
        .into_iter()
        .map(|mut c| {
            c.name = format!("{group}/{}", c.name);
            c
        })
        .collect())
}

/// Every case, from the files compiled into this build (for targets with no file system,
/// such as wasm32 in a browser), in the order [`load_cases`] gives.
pub fn embedded_cases() -> Result<Vec<Case>, String> {
    const FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/case_files.rs"));
    let mut out = Vec::new();
    for (group, text) in FILES {
        out.extend(parse_cases(group, text).map_err(|e| format!("{group}: {e}"))?);
    }
    Ok(out)
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_compiled_in_cases_are_the_files() {
        let files = super::load_cases(&crate::default_cases_dir()).unwrap();
        let built = super::embedded_cases().unwrap();
        assert!(files.len() > 500);
        let names = |v: &[super::Case]| v.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&files), names(&built));
    }
}
