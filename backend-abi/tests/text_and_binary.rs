//! Round trips of the two encodings, property-tested, and hostile input for both decoders.

use proptest::prelude::*;
use quabla_abi::qir::*;
use quabla_abi::{DType, HostArray, SizeError, TensorType};

fn dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(DType::ALL.to_vec())
}

fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..4, 0..3)
}

fn literal(d: DType, shape: Vec<usize>) -> impl Strategy<Value = HostArray> {
    let ty = TensorType::new(d, shape);
    let n = ty.size_bytes();
    prop::collection::vec(any::<u8>(), n).prop_map(move |mut bytes| {
        if d == DType::Bool {
            bytes.iter_mut().for_each(|b| *b &= 1);
        }
        HostArray {
            ty: ty.clone(),
            bytes,
        }
    })
}

/// Random valid programs: constants of every dtype (arbitrary bits: NaN payloads, -0,
/// subnormals), unary/binary chains on floats, reductions, and a while loop region.
fn program() -> impl Strategy<Value = Program> {
    let consts = prop::collection::vec(
        (dtype(), shape()).prop_flat_map(|(d, s)| literal(d, s)),
        1..4,
    );
    let unary_ops = prop::collection::vec(
        prop::sample::select(vec![
            UnaryOp::Exp,
            UnaryOp::Neg,
            UnaryOp::Tanh,
            UnaryOp::Abs,
        ]),
        0..4,
    );
    (consts, unary_ops, shape(), any::<bool>()).prop_map(|(consts, unary, s, with_loop)| {
        let ty = TensorType::new(DType::F32, s.clone());
        let mut p = Program {
            inputs: vec![ty.clone()],
            nodes: vec![],
            outputs: vec![],
        };
        let mut next = 1u32;
        let mut outs = vec![];
        for c in consts {
            let t = c.ty.clone();
            p.nodes.push(Node {
                op: Op::Constant(c),
                operands: vec![],
                results: vec![t],
            });
            outs.push(ValueId(next));
            next += 1;
        }
        let mut cur = ValueId(0);
        for u in unary {
            p.nodes.push(Node {
                op: Op::Unary(u),
                operands: vec![cur],
                results: vec![ty.clone()],
            });
            cur = ValueId(next);
            next += 1;
        }
        p.nodes.push(Node {
            op: Op::Binary(BinaryOp::Add),
            operands: vec![cur, ValueId(0)],
            results: vec![ty.clone()],
        });
        cur = ValueId(next);
        next += 1;
        p.nodes.push(Node {
            op: Op::Reduce {
                kind: ReduceKind::Sum,
                axes: (0..s.len()).collect(),
            },
            operands: vec![cur],
            results: vec![TensorType::scalar(DType::F32)],
        });
        outs.push(ValueId(next));
        next += 1;
        if with_loop {
            let carry = vec![ty.clone()];
            let cond = Program {
                inputs: carry.clone(),
                nodes: vec![Node {
                    op: Op::Constant(HostArray {
                        ty: TensorType::scalar(DType::Bool),
                        bytes: vec![0],
                    }),
                    operands: vec![],
                    results: vec![TensorType::scalar(DType::Bool)],
                }],
                outputs: vec![ValueId(1)],
            };
            let body = Program {
                inputs: carry.clone(),
                nodes: vec![],
                outputs: vec![ValueId(0)],
            };
            p.nodes.push(Node {
                op: Op::While {
                    cond: Box::new(cond),
                    body: Box::new(body),
                },
                operands: vec![cur],
                results: carry,
            });
            outs.push(ValueId(next));
        }
        p.outputs = outs;
        p
    })
}

proptest! {
    #[test]
    fn text_round_trips_exactly(p in program()) {
        p.validate().unwrap();
        let text = p.to_text();
        let back = Program::parse(&text).unwrap();
        prop_assert_eq!(&back, &p);
        prop_assert_eq!(back.to_text(), text);
    }

    #[test]
    fn binary_round_trips_exactly(p in program()) {
        let bytes = encode(&p, QIR_VERSION).unwrap();
        prop_assert_eq!(decode(&bytes).unwrap(), p);
    }

    #[test]
    fn the_text_parser_never_panics(s in "\\PC{0,200}") {
        let _ = Program::parse(&s);
    }

    #[test]
    fn mutated_text_never_panics(p in program(), pos in any::<prop::sample::Index>(), c in any::<char>()) {
        let mut chars: Vec<char> = p.to_text().chars().collect();
        let i = pos.index(chars.len());
        chars[i] = c;
        let s: String = chars.into_iter().collect();
        if let Ok(q) = Program::parse(&s) {
            let _ = q.validate();
        }
    }

    #[test]
    fn the_binary_decoder_never_panics(p in program(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = encode(&p, QIR_VERSION).unwrap();
        for (i, b) in flips {
            let i = i.index(bytes.len());
            bytes[i] ^= b;
        }
        let _ = decode(&bytes);
    }

    #[test]
    fn random_bytes_are_refused(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let mut with_magic = QIR_MAGIC.to_vec();
        with_magic.extend_from_slice(&1u32.to_le_bytes());
        with_magic.extend_from_slice(&bytes);
        let _ = decode(&with_magic);
        prop_assert!(decode(&bytes).is_err() || bytes.starts_with(&QIR_MAGIC));
    }
}

#[test]
fn malformed_text_errors_name_the_place() {
    let e = Program::parse("program(%0: f32[2]) {\n  %1 = exp(%7) : f32[2]\n  return %1\n}\n")
        .unwrap_err();
    assert_eq!((e.line, e.col), (2, 12));
    assert!(e.message.contains("%7"), "{e}");
    let e = Program::parse("program(%0: f33[2]) {\n  return %0\n}").unwrap_err();
    assert!(e.message.contains("unknown dtype"), "{e}");
    let e = Program::parse("program() {\n  %0 = frobnicate() : f32[]\n  return %0\n}").unwrap_err();
    assert!(e.message.contains("unknown op `frobnicate`"), "{e}");
    let deep = "program() {\n".to_string() + &"() = cond() : () {\nbranch() {\n".repeat(100);
    assert!(Program::parse(&deep)
        .unwrap_err()
        .message
        .contains("nest deeper"));
}

#[test]
fn validation_rejects_bad_types_with_the_location() {
    let p = Program::parse(
        "program(%0: f32[2], %1: f32[3]) {\n  %2 = add(%0, %1) : f32[2]\n  return %2\n}\n",
    )
    .unwrap();
    let e = p.validate().unwrap_err();
    assert!(e.location.contains("node 0 (add)"), "{e}");
    assert!(e.message.contains("one type"), "{e}");
    let p =
        Program::parse("program(%0: i32[2]) {\n  %1 = exp(%0) : i32[2]\n  return %1\n}\n").unwrap();
    assert!(p
        .validate()
        .unwrap_err()
        .message
        .contains("does not accept i32"));
    let p =
        Program::parse("program(%0: f32[2]) {\n  %1 = exp(%0) : f32[3]\n  return %1\n}\n").unwrap();
    assert!(p
        .validate()
        .unwrap_err()
        .message
        .contains("declared result type"));
}

#[test]
fn decoding_checks_magic_and_version() {
    assert!(matches!(decode(b"nope"), Err(DecodeError::NotQir)));
    let mut b = QIR_MAGIC.to_vec();
    b.extend_from_slice(&99u32.to_le_bytes());
    assert!(decode(&b).unwrap_err().to_string().contains("version 99"));
    assert!(encode(&Program::default(), 99).is_err());
}

#[test]
fn nesting_is_limited_while_decoding_before_the_structure_exists() {
    use quabla_abi::testing::nested_cond_program;
    let p = decode(&nested_cond_program(MAX_REGION_DEPTH)).unwrap();
    assert_eq!(p.nodes.len(), 2);
    for levels in [MAX_REGION_DEPTH + 1, 100_000, 1_000_000] {
        let e = decode(&nested_cond_program(levels)).unwrap_err();
        assert_eq!(
            e,
            DecodeError::TooDeep {
                limit: MAX_REGION_DEPTH
            },
            "{levels} levels"
        );
        assert!(e.to_string().contains("deeper than 64"), "{e}");
    }
    // The thread's depth count is reset after a refusal: a valid program decodes again.
    assert!(decode(&nested_cond_program(MAX_REGION_DEPTH)).is_ok());
}

#[test]
fn validation_refuses_programs_built_deeper_than_the_limit() {
    let deep = decode(&quabla_abi::testing::nested_cond_program(MAX_REGION_DEPTH)).unwrap();
    let mut deeper = deep.clone();
    if let Op::Cond { branches } = &mut deeper.nodes[1].op {
        branches[0] = deep;
    }
    let e = deeper.validate().unwrap_err();
    assert!(e.message.contains("65 levels deep"), "{e}");
    let text = "program() {\n".to_string() + &"() = cond() : () {\nbranch() {\n".repeat(70);
    assert!(Program::parse(&text)
        .unwrap_err()
        .message
        .contains("deeper than 64"));
}

#[test]
fn sizes_are_checked_arithmetic() {
    let huge = TensorType::new(DType::F32, vec![1 << 32, 1 << 32]);
    assert_eq!(
        huge.num_elements(),
        usize::MAX,
        "saturates, never wraps to 0"
    );
    assert!(huge
        .checked_num_elements()
        .unwrap_err()
        .to_string()
        .contains(
            "[4294967296, 4294967296] of `f32[4294967296,4294967296]` has more than 2^63 elements"
        ));
    let bytes = TensorType::new(DType::F64, vec![1 << 31, 1 << 31]);
    assert_eq!(bytes.checked_num_elements().unwrap(), 1 << 62);
    assert!(matches!(
        bytes.checked_size_bytes(),
        Err(SizeError::TooManyBytes(_))
    ));
    // A wrapped product used to make a zero-byte array of an absurd shape acceptable.
    let wraps = TensorType::new(DType::F32, vec![1 << 32, 1 << 32, 1 << 32]);
    assert!(HostArray::new(wraps.clone(), vec![]).is_err());
    // The text parser refuses such shapes itself; programs built in memory (or decoded)
    // meet the validator.
    assert!(Program::parse("program(%0: f32[4294967296,4294967296]) {\n  return %0\n}\n").is_err());
    let p = Program {
        inputs: vec![huge.clone()],
        nodes: vec![],
        outputs: vec![ValueId(0)],
    };
    let e = p.validate().unwrap_err();
    assert!(
        e.location.contains("input 0") && e.message.contains("2^63"),
        "{e}"
    );
    let p = Program {
        inputs: vec![TensorType::new(DType::F32, vec![1 << 32])],
        nodes: vec![Node {
            op: Op::BroadcastInDim { dims: vec![1] },
            operands: vec![ValueId(0)],
            results: vec![huge],
        }],
        outputs: vec![ValueId(1)],
    };
    assert!(p.validate().unwrap_err().message.contains("2^63"));
}

/// Found by the `cpu_compile` fuzz target (44 bytes): a `pad` of extent 2 with interior
/// 2^64 - 1 overflowed in the shape rule (a panic under debug assertions, a wrapped size
/// otherwise). It must decode to a typed error.
#[test]
fn a_pad_whose_size_overflows_is_refused() {
    let crash: [u8; 44] = [
        0x51, 0x49, 0x52, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x01, 0x02, 0x52, 0x00, 0x01, 0x00,
        0x01, 0x0c, 0x02, 0x01, 0x02, 0x02, 0x02, 0x01, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0x01, 0x00, 0x02, 0x00, 0x01, 0x01, 0x01, 0x02, 0x03, 0x03, 0x01, 0x02,
    ];
    assert!(decode(&crash).is_err());
    let text = |interior: &str, low: &str| {
        format!(
            "program(%0: f32[3], %1: f32[]) {{\n  %2 = pad[low=[{low}], high=[0], \
             interior=[{interior}]](%0, %1) : f32[3]\n  return %2\n}}\n"
        )
    };
    for (interior, low) in [
        ("9223372036854775807", "0"),
        ("9223372036854775807", "9223372036854775807"),
    ] {
        let e = Program::parse(&text(interior, low))
            .map_err(|e| e.to_string())
            .and_then(|p| p.validate().map_err(|e| e.to_string()))
            .unwrap_err();
        assert!(e.contains("overflows") || e.contains("does not fit"), "{e}");
    }
    // Ordinary pads are unchanged: 3 elements, 1 between each, 2 before.
    let p = Program::parse(&text("1", "2").replace(": f32[3]\n  return", ": f32[7]\n  return"))
        .unwrap();
    p.validate().unwrap();
}
