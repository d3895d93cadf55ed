//! Print -> parse -> encode -> decode of the programs the cases trace, and of their JVP,
//! VJP and vmap programs: every op of the table, with the attributes the generators draw,
//! in the core-level forms (regions, custom rules) the transforms emit.

use super::draw::Case;
use quabla::ad::{jvp, vjp};
use quabla::qir::{decode, encode, Program, QIR_VERSION};
use quabla::{make_program, vmap, Array, Result};

fn round_trip(p: &Program) -> std::result::Result<(), String> {
    p.validate().map_err(|e| format!("invalid: {e}"))?;
    let text = p.to_text();
    let parsed = Program::parse(&text).map_err(|e| format!("does not parse back: {e}"))?;
    if parsed != *p {
        return Err(format!("parses back different:\n{text}"));
    }
    if parsed.to_text() != text {
        return Err(format!("prints back different:\n{text}"));
    }
    let bytes = encode(&parsed, QIR_VERSION)?;
    let decoded = decode(&bytes).map_err(|e| format!("does not decode: {e}"))?;
    if decoded != *p {
        return Err(format!("decodes different:\n{text}"));
    }
    Ok(())
}

/// The programs of `f`, its JVP, its VJP and its vmap over axis 0 of every argument, each
/// where the transform applies to the case.
pub fn check(case: &Case, args: &[Array]) -> Result<()> {
    let f = case.f.clone();
    let mut programs = vec![("f", make_program(|a: &[Array]| f(a), args)?)];
    let g = case.f.clone();
    if let Ok(p) = make_program(|a: &[Array]| Ok(jvp(&*g, a, a)?.1), args) {
        programs.push(("jvp", p));
    }
    let g = case.f.clone();
    let pullback = |a: &[Array]| -> Result<Vec<Array>> {
        let (y, pb) = vjp(&*g, a)?;
        pb.call(&y)
    };
    if let Ok(p) = make_program(pullback, args) {
        programs.push(("vjp", p));
    }
    let g = case.f.clone();
    let stacked: Vec<Array> = args
        .iter()
        .map(|a| a.expand_dims(0))
        .collect::<Result<_>>()?;
    let in_axes = vec![Some(0); args.len()];
    let batched = vmap(move |a: &[Array]| g(a), &in_axes, &[]);
    programs.push(("vmap", make_program(batched, &stacked)?));
    for (what, p) in programs {
        round_trip(&p).map_err(|e| quabla::Error::value(format!("the {what} program {e}")))?;
    }
    Ok(())
}
