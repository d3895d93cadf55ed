//! Loading plugins from files: the CPU plugin through the ABI, and every way loading can fail.
//! Needs the plugin libraries built (`cargo xtask test` builds them first).

mod common;

use common::built_library as built;

use quabla::runtime::Registry;
use quabla::Error;
use quabla_abi::host::{LoadError, Plugin};
use std::path::{Path, PathBuf};

/// target/<profile>, found from this test binary (target/<profile>/deps/<test>).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

#[test]
fn the_cpu_plugin_loads_from_its_library_and_runs_a_program() {
    let plugin = Plugin::load(&built("quabla_cpu")).unwrap();
    assert_eq!(plugin.name(), "cpu");
    assert!(plugin.info().capabilities.f64);
    let p = quabla::qir::Program::parse(
        "program(%0: f64[3]) {\n  %1 = sqrt(%0) : f64[3]\n  return %1\n}\n",
    )
    .unwrap();
    let exe = plugin.compile(&p).unwrap();
    let x = plugin
        .upload(
            quabla::HostArray::from_slice(vec![3], &[4.0f64, 2.0, -0.0])
                .unwrap()
                .view(),
        )
        .unwrap();
    let y = exe.run(&[&x]).unwrap()[0]
        .to_host()
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert_eq!(y[0], 2.0);
    assert_eq!(y[1], 2f64.sqrt());
    assert!(y[2] == 0.0 && y[2].is_sign_negative());
}

#[test]
fn block_until_ready_waits_and_leaves_the_buffer_readable() {
    // The CPU plugin answers from its own `block_until_ready` (synchronous: nothing to wait
    // for); the toy plugin keeps the kit's default, a download whose bytes are dropped.
    for lib in ["quabla_cpu", "quabla_toy_backend"] {
        let plugin = Plugin::load(&built(lib)).unwrap();
        let p = quabla::qir::Program::parse(
            "program(%0: f32[2]) {\n  %1 = exp(%0) : f32[2]\n  return %1\n}\n",
        )
        .unwrap();
        let exe = plugin.compile(&p).unwrap();
        let x = plugin
            .upload(quabla::HostArray::from_f32(vec![2], &[0.0, 1.0]).view())
            .unwrap();
        let y = exe.run(&[&x]).unwrap().remove(0);
        y.block_until_ready().unwrap();
        y.block_until_ready().unwrap();
        let v = y.to_host().unwrap().to_vec::<f32>().unwrap();
        assert_eq!(v[0], 1.0, "{lib}");
        assert!(
            (v[1] - std::f32::consts::E).abs() <= f32::EPSILON * 3.0,
            "{lib}: {v:?}"
        );
    }
}

#[test]
fn a_plugin_for_another_abi_major_is_refused_naming_both_versions() {
    let e = Plugin::load(&built("quabla_fixture_abi_major_mismatch"))
        .err()
        .unwrap();
    let msg = e.to_string();
    assert!(
        matches!(
            e,
            LoadError::VersionMismatch {
                plugin_major: 2,
                host_major: 1,
                ..
            }
        ),
        "{msg}"
    );
    assert!(
        msg.contains("ABI 2.3")
            && msg.contains(&format!("ABI 1.{}", quabla_abi::abi::ABI_MINOR))
            && msg.contains("accepting 1.0"),
        "{msg}"
    );
    assert!(msg.contains("rebuild the plugin"), "{msg}");
}

#[test]
fn files_that_are_not_plugins_give_typed_errors() {
    let dir = std::env::temp_dir().join(format!("quabla-load-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let garbage = dir.join("libquabla_garbage.so");
    std::fs::write(&garbage, b"this is not an ELF file").unwrap();
    assert!(matches!(
        Plugin::load(&garbage),
        Err(LoadError::NotALibrary { .. })
    ));
    assert!(matches!(
        Plugin::load(&dir.join("missing.so")),
        Err(LoadError::NotFound { .. })
    ));
    // A real shared library without the plugin symbol.
    let libm = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
    ]
    .iter()
    .map(Path::new)
    .find(|p| p.is_file());
    if let Some(libm) = libm {
        let e = Plugin::load(libm).err().unwrap();
        assert!(matches!(e, LoadError::NotAPlugin { .. }), "{e}");
        assert!(e.to_string().contains("quabla_plugin_abi_version"));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn two_plugin_files_load_as_two_distinct_plugins() {
    // abi_stable's RootModule::load_from_file would hand back the first module twice.
    let dir = std::env::temp_dir().join(format!("quabla-two-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("libquabla_cpu2.so");
    std::fs::copy(built("quabla_cpu"), &copy).unwrap();
    let a = Plugin::load(&built("quabla_cpu")).unwrap();
    let b = Plugin::load(&copy).unwrap();
    assert_eq!(a.path().unwrap(), built("quabla_cpu"));
    assert_eq!(b.path().unwrap(), copy);
    let x = a
        .upload(quabla::HostArray::from_f32(vec![1], &[1.0]).view())
        .unwrap();
    let p = quabla::qir::Program::parse(
        "program(%0: f32[1]) {\n  %1 = neg(%0) : f32[1]\n  return %1\n}\n",
    )
    .unwrap();
    // A buffer of one plugin cannot be passed to an executable of the other.
    let exe_b = b.compile(&p).unwrap();
    assert!(exe_b
        .run(&[&x])
        .err()
        .unwrap()
        .message()
        .contains("transfer it first"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn registry_discovers_plugins_in_search_folders_lazily() {
    let reg = Registry::global();
    reg.add_search_path(&profile_dir());
    let names = reg.platforms();
    assert!(names.iter().any(|n| n == "cpu"), "{names:?}");
    let dev = reg.device("cpu").unwrap();
    assert_eq!(dev.platform(), "cpu");
    match reg.device("no_such_backend") {
        Err(Error::NoBackend(m)) => assert!(m.contains("QUABLA_PLUGIN_PATH"), "{m}"),
        other => panic!("{other:?}"),
    }
    // The mismatched fixture is discovered as platform `fixture_abi_major_mismatch` and
    // refused only when asked for.
    match reg.device("fixture_abi_major_mismatch") {
        Err(Error::Load(LoadError::VersionMismatch { .. })) => {}
        other => panic!("{other:?}"),
    }
}
