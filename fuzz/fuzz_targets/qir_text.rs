//! The QIR text parser on arbitrary text: it must return a program or a `ParseError`, and a
//! program it accepts must validate, print, and parse back to the same program.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quabla_abi::qir::Program;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(p) = Program::parse(src) else {
        return;
    };
    if p.validate().is_err() {
        return;
    }
    let text = p.to_text();
    let again = Program::parse(&text).expect("a printed program parses");
    assert_eq!(again, p, "print -> parse changed the program:\n{text}");
});
