//! The host survives a plugin that lies in every way the ABI allows: each lie of the
//! `lying-plugin` fixture gives a typed error naming the plugin, and the process goes on.
//! Needs the fixture library built (`cargo xtask test` builds it first).

mod common;

use quabla::qir::Program;
use quabla::{Array, HostArray};
use quabla_abi::abi::ErrorCode;
use quabla_abi::host::{LoadError, Plugin};
use std::path::PathBuf;

fn liar_library() -> PathBuf {
    common::built_library("quabla_fixture_lying_plugin")
}

fn set_lie(lie: &str) {
    std::env::set_var("QUABLA_FIXTURE_LIE", lie);
}

const NEG: &str = "program(%0: f32[4,16]) {\n  %1 = neg(%0) : f32[4,16]\n  return %1\n}\n";

fn input() -> HostArray {
    let v: Vec<f32> = (0..64).map(|i| i as f32).collect();
    HostArray::from_slice(vec![4, 16], &v).unwrap()
}

/// Compiles, uploads, runs and downloads `NEG` under the current lie.
fn run_neg(plugin: &Plugin) -> Result<HostArray, quabla_abi::abi::AbiError> {
    let exe = plugin.compile(&Program::parse(NEG).unwrap())?;
    let x = plugin.upload(input().view())?;
    let outs = exe.run(&[&x])?;
    outs[0].to_host()
}

fn assert_broken_contract(lie: &str, plugin: &Plugin, needles: &[&str]) {
    set_lie(lie);
    let e = run_neg(plugin)
        .err()
        .unwrap_or_else(|| panic!("lie `{lie}` went unnoticed"));
    let m = e.message();
    assert_eq!(e.code(), ErrorCode::Internal, "{lie}: {e}");
    assert!(m.contains("plugin `liar`"), "{lie}: {m}");
    assert!(
        m.contains("broke the ABI contract") && m.contains("bug in the plugin"),
        "{lie}: {m}"
    );
    for n in needles {
        assert!(m.contains(n), "{lie}: `{n}` not in: {m}");
    }
}

/// One test, so the lies (an environment variable the fixture reads) run in order.
#[test]
fn every_lie_is_a_typed_error_naming_the_plugin() {
    // Describing itself is done once per process, so this lie comes first.
    set_lie("panic-info");
    match Plugin::load(&liar_library()) {
        Err(LoadError::Info { message, .. }) => assert!(message.contains("panicked"), "{message}"),
        other => panic!("{:?}", other.map(|p| p.name().to_string())),
    }

    set_lie("none");
    let plugin = Plugin::load(&liar_library()).unwrap();
    assert_eq!(plugin.name(), "liar");
    let y = run_neg(&plugin).unwrap().to_f32().unwrap();
    assert_eq!(y[5], -5.0);

    assert_broken_contract(
        "zero-outputs",
        &plugin,
        &[
            "returned 0 outputs for the program's 1",
            "(f32[4,16]) -> (f32[4,16])",
        ],
    );
    assert_broken_contract(
        "extra-output",
        &plugin,
        &["returned 2 outputs for the program's 1"],
    );
    assert_broken_contract(
        "wrong-dtype",
        &plugin,
        &["returned i32[4,16] as output 0, which must be f32[4,16]"],
    );
    assert_broken_contract(
        "wrong-shape",
        &plugin,
        &["returned f32[64] as output 0, which must be f32[4,16]"],
    );
    assert_broken_contract(
        "garbage-handle",
        &plugin,
        &["returned buffer handle 3735928559"],
    );
    assert_broken_contract(
        "short-bytes",
        &plugin,
        &["downloaded malformed bytes", "256 bytes but 255"],
    );

    for (lie, says) in [
        ("event-error", "device lost"),
        ("ready-but-blocks", "lost the data"),
    ] {
        set_lie(lie);
        let e = run_neg(&plugin).unwrap_err();
        assert!(
            e.message().contains("plugin `liar`: ") && e.message().contains(says),
            "{lie}: {e}"
        );
    }

    // An export that disagrees with the buffer's type is refused before anyone reads it.
    set_lie("none");
    let x = plugin.upload(input().view()).unwrap();
    assert!(
        x.export().unwrap().is_none(),
        "the honest liar does not export"
    );
    set_lie("wrong-export");
    let e = x.export().unwrap_err();
    assert_eq!(e.code(), ErrorCode::Internal, "{e}");
    assert!(
        e.message().contains("broke the ABI contract") && e.message().contains("512 bytes"),
        "{e}"
    );

    for step in 0..4 {
        // Compile panics; so would upload, execute and download: reach each in turn.
        set_lie("none");
        let exe = plugin.compile(&Program::parse(NEG).unwrap()).unwrap();
        let x = plugin.upload(input().view()).unwrap();
        let out = exe.run(&[&x]).unwrap().pop().unwrap();
        set_lie("panic");
        let e = match step {
            0 => plugin.compile(&Program::parse(NEG).unwrap()).err().unwrap(),
            1 => plugin.upload(input().view()).err().unwrap(),
            2 => exe.run(&[&x]).err().unwrap(),
            _ => out.download().err().unwrap(),
        };
        assert_eq!(e.code(), ErrorCode::Internal, "{e}");
        assert!(
            e.message().contains("plugin `liar`") && e.message().contains("panicked"),
            "{e}"
        );
    }

    set_lie("never-ready");
    let exe = plugin.compile(&Program::parse(NEG).unwrap()).unwrap();
    let x = plugin.upload(input().view()).unwrap();
    let out = exe.run(&[&x]).unwrap().pop().unwrap();
    let started = std::time::Instant::now();
    let e = out
        .download()
        .unwrap()
        .wait_timeout(std::time::Duration::from_millis(200))
        .unwrap_err();
    assert!(
        started.elapsed().as_secs() < 10,
        "the host blocked in the plugin"
    );
    assert_eq!(e.code(), ErrorCode::ResourceExhausted, "{e}");
    assert!(
        e.message().contains("plugin `liar`") && e.message().contains("not ready after 0.2 s"),
        "{e}"
    );

    // The core's eager path (which used to index the missing output and panic) returns the
    // error too, and the process goes on to use the plugin honestly.
    quabla::runtime::Registry::global().add_search_path(&liar_library());
    let device = quabla::runtime::device("liar").unwrap();
    set_lie("zero-outputs");
    let a = Array::from_host_on(&device, &input()).unwrap();
    match a.neg() {
        Err(e) => assert!(e.to_string().contains("returned 0 outputs"), "{e}"),
        Ok(_) => panic!("zero outputs went unnoticed"),
    }
    set_lie("none");
    let y = a.neg().unwrap().to_host().unwrap().to_f32().unwrap();
    assert_eq!(y[63], -63.0);
}
