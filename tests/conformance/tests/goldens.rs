//! The goldens against the op-spec table: every op a backend may implement has a case, and
//! every case's program survives the text and binary encodings unchanged.

use quabla_abi::qir::{decode, encode, OpKind, Program, QIR_VERSION};
use quabla_conformance::{default_cases_dir, load_cases};
use std::collections::BTreeSet;

#[test]
fn every_op_in_the_table_has_a_golden() {
    let cases = load_cases(&default_cases_dir()).unwrap();
    let mut used = BTreeSet::new();
    for c in &cases {
        let p = Program::parse(&c.program).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        used.extend(p.op_names());
    }
    let missing: Vec<&str> = OpKind::backend_ops()
        .map(OpKind::name)
        .filter(|n| !used.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "ops without a conformance case: {missing:?}"
    );
}

#[test]
fn every_golden_survives_print_parse_encode_decode() {
    let cases = load_cases(&default_cases_dir()).unwrap();
    for c in &cases {
        let p = Program::parse(&c.program).unwrap();
        let text = p.to_text();
        let reparsed = Program::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(reparsed, p, "{}: print -> parse", c.name);
        let bytes = encode(&reparsed, QIR_VERSION).unwrap();
        let decoded = decode(&bytes).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(decoded, p, "{}: encode -> decode", c.name);
        assert_eq!(decoded.to_text(), text, "{}: printed again", c.name);
    }
}
