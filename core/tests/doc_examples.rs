//! Every public function of the core has a doc example (compiled as a doc test), as issue
//! 25 asks: a scan of `core/src` for `pub fn` whose doc comment has no code block. Methods
//! of crate-private types are listed apart (no user can call them).

use std::path::Path;

/// `file:function` pairs of `pub fn`s on crate-private types.
const CRATE_PRIVATE: [&str; 5] = [
    "ad/rules.rs:is_linear",
    "ad/rules.rs:ty",
    "ad/rules.rs:known",
    "batching/mod.rs:batched_arg",
    "batching/mod.rs:result_type",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("core/src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The public functions of `text` before its first `#[cfg(test)]` whose doc comment (the
/// `///` and attribute lines right above) has no code block.
fn without_examples(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.trim() == "#[cfg(test)]")
        .unwrap_or(lines.len());
    let mut missing = Vec::new();
    for (i, line) in lines[..end].iter().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("pub fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        // A macro's methods (`pub fn $name`) carry their example in `#[doc = ...]` lines.
        let doc = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.trim_start().starts_with("///") || l.trim_start().starts_with("#["));
        if !doc.into_iter().any(|l| l.contains("```")) {
            missing.push(name);
        }
    }
    missing
}

#[test]
fn every_public_function_has_a_doc_example() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut missing = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a source file is readable");
        let rel = file
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        for name in without_examples(&text) {
            let key = format!("{rel}:{name}");
            if !CRATE_PRIVATE.contains(&key.as_str()) {
                missing.push(key);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "public functions without a doc example: {missing:?}"
    );
}

#[test]
fn the_scan_sees_a_function_without_an_example() {
    let text = "/// Has one.\n///\n/// ```\n/// f();\n/// ```\npub fn f() {}\n\n/// None.\n#[inline]\npub fn g() {}\n#[cfg(test)]\nmod tests {\n    pub fn h() {}\n}\n";
    assert_eq!(without_examples(text), ["g"]);
}
