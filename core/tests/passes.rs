//! The program passes keep every result bit for bit, and do what they say.

mod common;

use common::cpu;
use quabla::passes::{canonicalize, cse, dce, fold_constants, optimize};
use quabla::qir::Program;
use quabla::{call_program, Array};

fn edge_inputs() -> Array {
    Array::from_slice_on(
        &cpu(),
        &[-0.0f32, 0.0, f32::NAN, -1.5, f32::INFINITY, 1e-40],
        &[6],
    )
    .unwrap()
}

fn bits(outs: &[Array]) -> Vec<Vec<u32>> {
    outs.iter()
        .map(|o| {
            o.to_vec::<f32>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect()
        })
        .collect()
}

const IDENTITIES: &str = "program(%0: f32[6]) {
  %1 = constant[value=[1.0]]() : f32[]
  %2 = broadcast_in_dim[dims=[]](%1) : f32[6]
  %3 = mul(%0, %2) : f32[6]
  %4 = constant[value=[-0.0]]() : f32[]
  %5 = broadcast_in_dim[dims=[]](%4) : f32[6]
  %6 = add(%3, %5) : f32[6]
  %7 = constant[value=[0.0]]() : f32[]
  %8 = broadcast_in_dim[dims=[]](%7) : f32[6]
  %9 = add(%6, %8) : f32[6]
  %10 = sub(%6, %8) : f32[6]
  %11 = reshape(%10) : f32[2,3]
  %12 = reshape(%11) : f32[3,2]
  %13 = transpose[perm=[1,0]](%12) : f32[2,3]
  %14 = transpose[perm=[1,0]](%13) : f32[3,2]
  %15 = reshape(%14) : f32[6]
  %16 = convert(%15) : f32[6]
  return %9, %16
}
";

#[test]
fn canonicalisation_removes_only_bit_exact_identities() {
    let p = Program::parse(IDENTITIES).unwrap();
    let q = dce(&canonicalize(&p));
    q.validate().unwrap();
    let text = q.to_text();
    // x + 0.0 stays (-0 + 0 is +0); x * 1, x + -0, x - 0, the transpose pair, and the convert go.
    assert!(!text.contains("mul("), "{text}");
    assert!(!text.contains("sub("), "{text}");
    assert!(!text.contains("transpose"), "{text}");
    assert!(!text.contains("convert"), "{text}");
    assert_eq!(text.matches("add(").count(), 1, "{text}");
    let x = edge_inputs();
    assert_eq!(
        bits(&call_program(&p, std::slice::from_ref(&x)).unwrap()),
        bits(&call_program(&q, &[x]).unwrap())
    );
}

#[test]
fn cse_dce_and_folding_keep_results() {
    let p = Program::parse(
        "program(%0: f32[6]) {
  %1 = exp(%0) : f32[6]
  %2 = exp(%0) : f32[6]
  %3 = add(%1, %2) : f32[6]
  %4 = constant[value=[3.0]]() : f32[]
  %5 = constant[value=[0.1]]() : f32[]
  %6 = mul(%4, %5) : f32[]
  %7 = sin(%6) : f32[]
  %8 = broadcast_in_dim[dims=[]](%7) : f32[6]
  %9 = mul(%3, %8) : f32[6]
  %10 = log(%0) : f32[6]
  return %9
}
",
    )
    .unwrap();
    let q = dce(&fold_constants(&optimize(&p), &cpu()));
    q.validate().unwrap();
    let text = q.to_text();
    assert_eq!(text.matches("exp(").count(), 1, "{text}");
    assert!(!text.contains("log("), "{text}");
    assert!(!text.contains("sin("), "folded: {text}");
    // The folded constant carries the device's f32 rounding of sin(3 * 0.1).
    let folded = (3.0f32 * 0.1f32) as f64;
    assert!(
        text.contains(&format!("{:?}", folded.sin() as f32)),
        "{text}"
    );
    let x = edge_inputs();
    assert_eq!(
        bits(&call_program(&p, std::slice::from_ref(&x)).unwrap()),
        bits(&call_program(&q, &[x]).unwrap())
    );
    assert_eq!(cse(&p).nodes.len(), p.nodes.len() - 1);
}

#[test]
fn ir_dumps_are_written_when_asked() {
    let dir = std::env::temp_dir().join(format!("quabla-dump-{}", std::process::id()));
    std::env::set_var("QUABLA_DUMP_IR", &dir);
    let _ = optimize(&Program::parse(IDENTITIES).unwrap());
    std::env::remove_var("QUABLA_DUMP_IR");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n.ends_with("-traced.qir")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.ends_with("-optimized.qir")),
        "{names:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
