//! Lists the case files for `embedded_cases()` (feature `embedded`), so a build with no file
//! system (wasm32 in a browser) carries the whole suite.

use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let cases = root.join("cases");
    println!("cargo:rerun-if-changed={}", cases.display());
    let mut files = Vec::new();
    collect(&cases, &mut files);
    files.sort();
    let mut src = String::from("&[\n");
    for f in &files {
        let group = f
            .strip_prefix(&cases)
            .unwrap_or(f)
            .with_extension("")
            .to_string_lossy()
            .replace('\\', "/");
        src.push_str(&format!(
            "    ({group:?}, include_str!({:?})),\n",
            f.display().to_string()
        ));
    }
    src.push_str("]\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("case_files.rs");
    std::fs::write(out, src).expect("OUT_DIR is writable");
}
