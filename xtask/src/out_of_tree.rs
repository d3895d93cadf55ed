//! `examples/out-of-tree`: a crate outside the workspace that depends on `quabla` by path
//! (the CPU backend linked in) as a user's crate does, built and run with no plugin path or
//! platform set, against the workspace's lock file (copied in; cargo keeps what it uses).
//!
//! It builds in the workspace's `target/` with the workspace's dev profile (passed as
//! `--config`, so the crate's own manifest stays what a user would write), so every
//! crates.io dependency the workspace build compiled is reused: measured on 2 cores, 7
//! crates and 50 s instead of 140 crates and 4 minutes in a folder of its own. Two things
//! differ from the workspace build, because cargo resolves features for this crate alone:
//! the path crates are compiled again (under other hashes, beside the workspace's), and
//! `quabla-cpu`, a cdylib, writes its outputs under names without a hash, over the
//! workspace's. Those few files are moved aside before (so this build makes its own) and
//! put back after, contents and times, so the workspace's next build still finds its own
//! artifacts fresh.

use crate::{cargo, root, target_dir};
use std::fs;
use std::path::PathBuf;
use std::process::exit;
use std::time::SystemTime;

/// The workspace dev profile's settings that decide a unit's hash (see the root
/// `Cargo.toml`): the path crates, members there, get the members' profile here too.
const PROFILE: &[&str] = &[
    "profile.dev.opt-level=1",
    "profile.dev.debug=\"line-tables-only\"",
    "profile.dev.package.\"*\".debug=\"line-tables-only\"",
    "profile.dev.package.quabla.opt-level=1",
    "profile.dev.package.quabla-cpu.opt-level=1",
    "profile.dev.package.quabla-abi.opt-level=1",
    "profile.dev.package.quabla-derive.opt-level=1",
];

/// `quabla-cpu`'s outputs whose names carry no hash: the library and its dep-info, in
/// `target/debug` and `target/debug/deps`.
fn unhashed_outputs() -> Vec<PathBuf> {
    let debug = target_dir().join("debug");
    let so = crate::plugin_file("debug", "quabla_cpu");
    let so_name = so.file_name().map(|n| n.to_owned()).unwrap_or_default();
    let mut files = vec![so];
    for dir in [debug.clone(), debug.join("deps")] {
        files.push(dir.join(&so_name));
        files.push(dir.join("libquabla_cpu.rlib"));
        files.push(dir.join("libquabla_cpu.d"));
        files.push(dir.join("quabla_cpu.d"));
    }
    files.sort();
    files.dedup();
    files.into_iter().filter(|f| f.is_file()).collect()
}

struct Saved {
    path: PathBuf,
    copy: PathBuf,
    modified: SystemTime,
}

fn fail(what: &str, e: std::io::Error) -> ! {
    eprintln!("xtask: {what}: {e}");
    exit(2)
}

fn save(files: &[PathBuf]) -> Vec<Saved> {
    let store = target_dir().join("out-of-tree-saved");
    fs::create_dir_all(&store).unwrap_or_else(|e| fail("cannot create the save folder", e));
    files
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let copy = store.join(format!("{i}"));
            let modified = fs::metadata(path)
                .and_then(|m| m.modified())
                .unwrap_or_else(|e| fail(&format!("cannot read {}", path.display()), e));
            // Moved aside, not copied: left in place, they would pass for this crate's own
            // unit (cargo trusts their times) and link against the workspace's
            // `quabla_abi`, another crate for rustc than this build's.
            fs::copy(path, &copy)
                .and_then(|_| fs::remove_file(path))
                .unwrap_or_else(|e| fail(&format!("cannot save {}", path.display()), e));
            Saved {
                path: path.clone(),
                copy,
                modified,
            }
        })
        .collect()
}

fn restore(saved: &[Saved]) {
    for s in saved {
        // A new file, not a write through this build's: cargo hard-links `target/debug`'s
        // copy to `deps`', and the saved copies must not share those inodes.
        let _ = fs::remove_file(&s.path);
        fs::copy(&s.copy, &s.path)
            .unwrap_or_else(|e| fail(&format!("cannot restore {}", s.path.display()), e));
        fs::File::options()
            .write(true)
            .open(&s.path)
            .and_then(|f| f.set_modified(s.modified))
            .unwrap_or_else(|e| {
                fail(
                    &format!("cannot restore the time of {}", s.path.display()),
                    e,
                )
            });
        let _ = fs::remove_file(&s.copy);
    }
    let _ = fs::remove_dir(target_dir().join("out-of-tree-saved"));
}

/// Builds and runs the crate (see the module documentation).
pub fn build_and_run() {
    let dir = root().join("examples").join("out-of-tree");
    if let Err(e) = fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")) {
        fail(&format!("cannot copy Cargo.lock into {}", dir.display()), e);
    }
    let saved = save(&unhashed_outputs());
    let mut c = cargo();
    c.args(["run", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("QUABLA_PLUGIN_PATH")
        .env_remove("QUABLA_PLATFORMS");
    for setting in PROFILE {
        c.args(["--config", setting]);
    }
    let shim = root().join("bindings/wasm/shims/libloading");
    c.args([
        "--config",
        &format!(
            "patch.crates-io.libloading.path={:?}",
            shim.display().to_string()
        ),
    ]);
    crate::run_then(
        "build and run a crate outside the workspace that depends on quabla",
        &mut c,
        || restore(&saved),
    );
}
