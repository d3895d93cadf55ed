//! The QIR binary decoder on arbitrary bytes: a program or a typed `DecodeError`, never a
//! panic or a stack overflow; what it accepts is valid and re-encodes to a program that
//! decodes to the same thing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quabla_abi::qir::{self, QIR_VERSION};

fuzz_target!(|data: &[u8]| {
    let Ok(p) = qir::decode(data) else {
        return;
    };
    p.validate().expect("decode returns validated programs");
    let bytes = qir::encode(&p, QIR_VERSION).expect("a decoded program encodes");
    let again = qir::decode(&bytes).expect("an encoded program decodes");
    assert_eq!(again, p);
    let _ = p.to_text();
});
