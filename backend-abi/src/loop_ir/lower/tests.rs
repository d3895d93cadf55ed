//! The lowering on hand-written programs: what lowers to what, and what declines why.
use super::*;
use crate::loop_ir::{lower_program, ArrayDecl, ArrayRole, IndexTerm};
use crate::qir::BinaryOp;

fn lower(src: &str) -> Result<Function, Declined> {
    let p = Program::parse(src).expect("test program parses");
    lower_while(&p.nodes[p.nodes.len() - 1])
}

#[test]
fn a_scalar_counting_loop_lowers_to_one_while_over_its_carries() {
    let f = lower(
        "program(%0: i32[], %1: f32[]) {
           %2, %3 = while(%0, %1) : i32[], f32[] {
             cond(%0: i32[], %1: f32[]) {
               %2 = constant[value=[10]]() : i32[]
               %3 = compare[dir=lt](%0, %2) : bool[]
               return %3
             }
             body(%0: i32[], %1: f32[]) {
               %2 = constant[value=[1]]() : i32[]
               %3 = add(%0, %2) : i32[]
               %4 = reshape(%1) : f32[1]
               %5 = reshape(%4) : f32[]
               return %3, %5
             }
           }
           return %2, %3
         }",
    )
    .unwrap();
    assert_eq!(f.params, vec![Reg(0), Reg(1)]);
    assert_eq!(f.regs[..2], [DType::I32, DType::F32]);
    assert!(f.arrays.is_empty());
    assert_eq!(f.operands, vec![Operand::Scalar, Operand::Scalar]);
    // The parameters are copied into the loop's carries, then the loop runs.
    let [Inst::Copy { .. }, Inst::Copy { .. }, Inst::While {
        carries,
        test,
        next,
        body,
        ..
    }] = &f.body.0[..]
    else {
        panic!("unexpected body {:?}", f.body);
    };
    assert_eq!(carries, &f.results);
    assert_eq!(f.dtype(*test), DType::Bool);
    // The carried f32 passes through two reshapes: copies, so its next value is the
    // second copy's register.
    assert_eq!(body.0.len(), 4);
    assert_eq!(f.dtype(next[1]), DType::F32);
}

/// A `fori_loop` lowered from a scan over `iota`: the index vector stays in memory,
/// read-only, whether the body reads it or not.
#[test]
fn a_vector_carry_stays_in_memory_and_a_one_element_slice_of_it_is_a_load() {
    let src = |body: &str| {
        format!(
            "program(%0: f64[], %1: i32[100]) {{
               %2 = constant[value=[0]]() : i32[]
               %3, %4, %5 = while(%2, %0, %1) : i32[], f64[], i32[100] {{
                 cond(%0: i32[], %1: f64[], %2: i32[100]) {{
                   %3 = constant[value=[100]]() : i32[]
                   %4 = compare[dir=lt](%0, %3) : bool[]
                   return %4
                 }}
                 body(%0: i32[], %1: f64[], %2: i32[100]) {{
                   %3 = constant[value=[1]]() : i32[]
                   %4 = add(%0, %3) : i32[]
                   {body}
                 }}
               }}
               return %4
             }}"
        )
    };
    let f = lower(&src("%5 = exp(%1) : f64[]\n return %4, %5, %2")).unwrap();
    assert_eq!(
        f.operands,
        vec![Operand::Scalar, Operand::Scalar, Operand::Array(ArrayId(0))]
    );
    assert_eq!(
        f.arrays,
        vec![ArrayDecl {
            dtype: DType::I32,
            len: 100,
            written: false,
            role: ArrayRole::Operand
        }]
    );
    assert_eq!(f.params.len(), 2);
    let f = lower(&src("%5 = dynamic_slice[sizes=[1]](%2, %0) : i32[1]
         %6 = reshape(%5) : i32[]
         %7 = convert(%6) : f64[]
         return %4, %7, %2"))
    .unwrap();
    let loads = loads_of(&f.body);
    assert_eq!(loads.len(), 1);
    assert_eq!(loads[0].offset, 0);
    assert_eq!(
        loads[0].terms,
        vec![IndexTerm {
            start: loads[0].terms[0].start,
            max: 99,
            stride: 1
        }]
    );
}

/// The index of every load, in program order, nested blocks included.
fn loads_of(b: &Block) -> Vec<ElementIndex> {
    let mut out = Vec::new();
    for inst in &b.0 {
        match inst {
            Inst::Load { index, .. } => out.push(index.clone()),
            Inst::While { cond, body, .. } => {
                out.extend(loads_of(cond));
                out.extend(loads_of(body));
            }
            Inst::Switch { branches, .. } => branches
                .iter()
                .for_each(|br| out.extend(loads_of(&br.block))),
            _ => {}
        }
    }
    out
}

/// A loop over `%0: i32[]` (counter, 4 trips) and `%1: f32[4,3]` whose body is `body`.
fn over_matrix(body: &str) -> Result<Function, Declined> {
    lower(&format!(
        "program(%0: i32[], %1: f32[4,3]) {{
           %2, %3 = while(%0, %1) : i32[], f32[4,3] {{
             cond(%0: i32[], %1: f32[4,3]) {{
               %2 = constant[value=[4]]() : i32[]
               %3 = compare[dir=lt](%0, %2) : bool[]
               return %3
             }}
             body(%0: i32[], %1: f32[4,3]) {{
               %2 = constant[value=[1]]() : i32[]
               %3 = add(%0, %2) : i32[]
               {body}
             }}
           }}
           return %3
         }}"
    ))
}

#[test]
fn a_row_view_of_a_matrix_adds_a_term_and_an_update_stores_in_place() {
    let f = over_matrix(
        "%4 = dynamic_slice[sizes=[1,3]](%1, %0, %2) : f32[1,3]
         %5 = reshape(%4) : f32[3]
         %6 = dynamic_slice[sizes=[1]](%5, %3) : f32[1]
         %7 = dynamic_update_slice(%1, %6, %3, %0) : f32[4,3]
         return %3, %7",
    )
    .unwrap();
    assert!(f.arrays[0].written);
    let loads = loads_of(&f.body);
    let strides: Vec<(u64, u64)> = loads[0].terms.iter().map(|t| (t.max, t.stride)).collect();
    // Row start clamped to [0, 3] (stride 3); the column axis is whole; then [0, 2].
    assert_eq!(strides, vec![(3, 3), (2, 1)]);
    let Inst::While { body, .. } = &f.body.0[1] else {
        panic!("{:?}", f.body)
    };
    let Some(Inst::Store { index, .. }) = body.0.last() else {
        panic!("{body:?}")
    };
    let strides: Vec<(u64, u64)> = index.terms.iter().map(|t| (t.max, t.stride)).collect();
    assert_eq!(strides, vec![(3, 3), (2, 1)]);
}

/// The arrays of every load and store, in program order, nested blocks included.
fn accesses(b: &Block) -> Vec<(char, ArrayId)> {
    let mut out = Vec::new();
    for inst in &b.0 {
        match inst {
            Inst::Load { index, .. } => out.push(('L', index.array)),
            Inst::Store { index, .. } => out.push(('S', index.array)),
            Inst::While { cond, body, .. } => {
                out.extend(accesses(cond));
                out.extend(accesses(body));
            }
            Inst::Loop { body, .. } => out.extend(accesses(body)),
            Inst::Switch { branches, .. } => {
                branches.iter().for_each(|b| out.extend(accesses(&b.block)))
            }
            _ => {}
        }
    }
    out
}

/// An update of a value a later node still reads works on a copy: the read sees the old
/// elements, and the copy becomes the carry's next value.
#[test]
fn updating_an_array_that_is_read_afterwards_works_on_a_copy() {
    let f = over_matrix(
        "%4 = convert(%0) : f32[1,1]
         %5 = dynamic_update_slice(%1, %4, %0, %0) : f32[4,3]
         %6 = dynamic_slice[sizes=[1,1]](%1, %3, %0) : f32[1,1]
         %7 = dynamic_update_slice(%5, %6, %3, %3) : f32[4,3]
         return %3, %7",
    )
    .unwrap();
    let (a, copy) = (ArrayId(0), ArrayId(1));
    assert!(f.arrays[1].is_scratch());
    assert_eq!(
        accesses(&f.body),
        // Copy in, store into the copy, read the original, store, copy back.
        [
            ('L', a),
            ('S', copy),
            ('S', copy),
            ('L', a),
            ('S', copy),
            ('L', copy),
            ('S', a)
        ]
    );
}

/// The element loops nested from `inst`, outermost first: each one's trip count and the
/// strides its counter steps each load's and store's array by.
fn nest_of(inst: &Inst) -> Vec<(u64, Vec<u64>)> {
    let mut levels = Vec::new();
    let mut inst = inst;
    while let Inst::Loop {
        counter,
        count,
        body,
    } = inst
    {
        let innermost = !matches!(body.0[..], [Inst::Loop { .. }]);
        let mut all = Vec::new();
        let mut pending = vec![body];
        while let Some(b) = pending.pop() {
            for inst in &b.0 {
                match inst {
                    Inst::Load { index, .. } | Inst::Store { index, .. } => all.push(index),
                    Inst::Loop { body, .. } => pending.push(body),
                    _ => {}
                }
            }
        }
        let steps = all
            .iter()
            .map(|i| {
                i.terms
                    .iter()
                    .find(|t| t.start == *counter)
                    .map_or(0, |t| t.stride)
            })
            .collect();
        levels.push((*count, steps));
        if innermost {
            break;
        }
        inst = &body.0[0];
    }
    levels
}

#[test]
fn a_window_that_is_not_contiguous_and_a_transpose_are_read_in_place_at_strides() {
    // Two rows of one column: a load walks the column at the matrix's row stride.
    let f = over_matrix(
        "%4 = dynamic_slice[sizes=[2,1]](%1, %0, %0) : f32[2,1]
         %5 = neg(%4) : f32[2,1]
         %6 = dynamic_update_slice(%1, %5, %3, %3) : f32[4,3]
         return %3, %6",
    )
    .unwrap();
    let body = loop_body(&f);
    let [neg, ..] = &loops_of(body)[..] else {
        panic!("no element loop in {body:?}")
    };
    assert_eq!(neg.1, 2);
    let loads = loads_of(neg.0);
    assert_eq!(loads[0].terms.last().map(|t| t.stride), Some(3));
    // A transpose is a view; its reshape is row-major, so it copies: an outer loop over
    // the transpose's rows (step 1 in the source), an inner one over its columns (step 3).
    let f = over_matrix(
        "%4 = transpose[perm=[1,0]](%1) : f32[3,4]
         %5 = reshape(%4) : f32[4,3]
         return %3, %5",
    )
    .unwrap();
    let body = loop_body(&f);
    let copy = body.0.iter().find(|i| matches!(i, Inst::Loop { .. }));
    assert_eq!(
        nest_of(copy.expect("a copy")),
        [(3, vec![1, 4]), (4, vec![3, 1])]
    );
}

#[test]
fn a_stencil_reads_shifted_slices_of_its_padded_array_where_they_lie() {
    let f = lower(
        "program(%0: f32[4,3]) {
           %1 = while(%0) : f32[4,3] {
             cond(%0: f32[4,3]) {
               %1 = constant[value=[false]]() : bool[]
               return %1
             }
             body(%0: f32[4,3]) {
               %1 = constant[value=[0]]() : f32[]
               %2 = pad[low=[1,1], high=[1,1], interior=[0,0]](%0, %1) : f32[6,5]
               %3 = slice[start=[0,1], limit=[4,4], strides=[1,1]](%2) : f32[4,3]
               %4 = slice[start=[2,1], limit=[6,4], strides=[1,1]](%2) : f32[4,3]
               %5 = add(%3, %4) : f32[4,3]
               return %5
             }
           }
           return %1
         }",
    )
    .unwrap();
    let body = loop_body(&f);
    // The padding value; fill the padded array's border (top and bottom rows, left and
    // right columns); copy the operand into its interior; add
    // two windows of it into new memory (they overlap each other, so neither is written
    // in place); copy that into the carry. Strides are the loads', then the store's.
    let nests: Vec<Vec<(u64, Vec<u64>)>> = body.0.iter().map(nest_of).collect();
    assert_eq!(
        nests,
        [
            vec![],
            vec![(5, vec![1])],
            vec![(5, vec![1])],
            vec![(6, vec![5])],
            vec![(6, vec![5])],
            vec![(4, vec![3, 5]), (3, vec![1, 1])],
            vec![(4, vec![5, 5, 3]), (3, vec![1, 1, 1])],
            vec![(4, vec![3, 3]), (3, vec![1, 1])],
        ]
    );
    let padded = ArrayId(1);
    assert!(f.arrays[padded.index()].is_scratch());
    let add = &body.0[6];
    let Inst::Loop { body: rows, .. } = add else {
        panic!("not a loop: {add:?}")
    };
    let [Inst::Loop { body: row, .. }] = &rows.0[..] else {
        panic!("not a nest: {rows:?}")
    };
    let offsets: Vec<u64> = loads_of(row).iter().map(|i| i.offset).collect();
    // Rows 0 and 2 of the padded 6x5 array, from column 1.
    assert_eq!(offsets, [1, 11]);
}

#[test]
fn a_broadcast_is_read_at_step_zero_and_a_concatenation_writes_windows() {
    let f = lower(
        "program(%0: f64[3], %1: f64[2,3]) {
           %2, %3 = while(%0, %1) : f64[3], f64[2,3] {
             cond(%0: f64[3], %1: f64[2,3]) {
               %2 = constant[value=[false]]() : bool[]
               return %2
             }
             body(%0: f64[3], %1: f64[2,3]) {
               %2 = broadcast_in_dim[dims=[1]](%0) : f64[2,3]
               %3 = mul(%1, %2) : f64[2,3]
               %4 = slice[start=[0,0], limit=[1,3], strides=[1,1]](%3) : f64[1,3]
               %5 = reshape(%4) : f64[3]
               %6 = reduce[kind=sum, axes=[0]](%5) : f64[]
               %7 = reshape(%6) : f64[1]
               %8 = slice[start=[0], limit=[2], strides=[1]](%0) : f64[2]
               %9 = concatenate[dim=0](%7, %8) : f64[3]
               return %9, %3
             }
           }
           return %2, %3
         }",
    )
    .unwrap();
    let body = loop_body(&f);
    // The product in place in the dying matrix (loads, then the store): the broadcast row
    // repeats (step 0).
    assert_eq!(
        nest_of(&body.0[0]),
        [(2, vec![3, 0, 3]), (3, vec![1, 1, 1])]
    );
    // The concatenation: the sum stored at element 0 of new memory, then a loop copying
    // two elements of the vector carry (operand 0) in after it.
    let at = body
        .0
        .iter()
        .position(|i| matches!(i, Inst::Store { index, .. } if index.offset == 0))
        .expect("a store of the sum");
    let Inst::Store { index: sum, .. } = &body.0[at] else {
        unreachable!()
    };
    assert!(f.arrays[sum.array.index()].is_scratch());
    let Inst::Loop {
        count: 2,
        body: copy,
        ..
    } = &body.0[at + 1]
    else {
        panic!("no copy loop after the store: {body:?}")
    };
    let [Inst::Load { index: from, .. }, Inst::Store { index: to, .. }] = &copy.0[..] else {
        panic!("not a copy: {copy:?}")
    };
    assert_eq!((from.array, from.offset), (ArrayId(0), 0));
    assert_eq!((to.array, to.offset), (sum.array, 1));
}

/// The element loops of a block (not nested), with their trip counts.
fn loops_of(b: &Block) -> Vec<(&Block, u64)> {
    b.0.iter()
        .filter_map(|i| match i {
            Inst::Loop { body, count, .. } => Some((body, *count)),
            _ => None,
        })
        .collect()
}

fn loop_body(f: &Function) -> &Block {
    let Some(Inst::While { body, .. }) = f.body.0.last() else {
        panic!("{:?}", f.body)
    };
    body
}

/// `exp` of the whole carry, which dies there: element loops (one per axis) writing in
/// place.
#[test]
fn an_elementwise_op_over_a_dying_array_is_an_element_loop_in_place() {
    let f = over_matrix("%4 = exp(%1) : f32[4,3]\n return %3, %4").unwrap();
    assert_eq!(f.arrays.len(), 1);
    assert!(f.arrays[0].written);
    let body = loop_body(&f);
    let exp = body.0.iter().find(|i| matches!(i, Inst::Loop { .. }));
    assert_eq!(
        nest_of(exp.expect("a loop")),
        [(4, vec![3, 3]), (3, vec![1, 1])]
    );
    let rows = loops_of(body);
    let columns = loops_of(rows[0].0);
    assert!(matches!(
        &columns[0].0 .0[..],
        [Inst::Load { .. }, Inst::Unary { .. }, Inst::Store { .. }]
    ));
}

/// `exp` of a carry read again afterwards: into a new array, which is then copied into
/// the carry's memory at the end of the body.
#[test]
fn an_elementwise_op_over_a_live_array_makes_a_new_one_copied_back_into_the_carry() {
    let f = over_matrix(
        "%4 = exp(%1) : f32[4,3]
         %5 = dynamic_slice[sizes=[1,1]](%1, %0, %0) : f32[1,1]
         %6 = dynamic_update_slice(%4, %5, %0, %0) : f32[4,3]
         return %3, %6",
    )
    .unwrap();
    assert_eq!(f.arrays.len(), 2);
    assert!(f.arrays[1].written && f.arrays[1].is_scratch());
    let (a, new) = (ArrayId(0), ArrayId(1));
    assert_eq!(
        accesses(&f.body),
        [
            ('L', a),
            ('S', new),
            ('L', a),
            ('S', new),
            ('L', new),
            ('S', a)
        ]
    );
    assert_eq!(loops_of(loop_body(&f)).len(), 2);
}

#[test]
fn a_matrix_product_of_row_major_operands_is_a_dot_into_a_new_array() {
    let f = over_matrix(
        "%4 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[0], rhs_contract=[0]](%1, %1) : f32[3,3]
         %5 = broadcast_in_dim[dims=[]](%3) : i32[4,3]
         return %3, %1",
    )
    .unwrap();
    let Some(Inst::While { body, .. }) = f.body.0.last() else {
        panic!("{:?}", f.body)
    };
    let Some(Inst::Dot { shape, .. }) = body.0.iter().find(|i| matches!(i, Inst::Dot { .. }))
    else {
        panic!("{body:?}")
    };
    // lhs contracts its rows: read transposed (row stride 1, column stride 3).
    assert_eq!(
        (
            shape.m,
            shape.k,
            shape.n,
            shape.lhs_strides,
            shape.rhs_strides
        ),
        (3, 4, 3, (1, 3), (3, 1))
    );
    let e = over_matrix(
        "%4 = convert(%1) : i32[4,3]
         %5 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[0], rhs_contract=[0]](%4, %4) : i32[3,3]
         return %3, %1",
    )
    .unwrap_err();
    assert_eq!(
        (e.op, e.reason),
        ("dot_general", "an integer matrix product")
    );
}

#[test]
fn an_inner_loop_updating_an_array_another_carry_shares_works_on_a_copy() {
    let f = over_matrix(
        "%4, %5, %6 = while(%0, %1, %1) : i32[], f32[4,3], f32[4,3] {
           cond(%0: i32[], %1: f32[4,3], %2: f32[4,3]) {
             %3 = constant[value=[4]]() : i32[]
             %4 = compare[dir=lt](%0, %3) : bool[]
             return %4
           }
           body(%0: i32[], %1: f32[4,3], %2: f32[4,3]) {
             %3 = dynamic_slice[sizes=[1,1]](%2, %0, %0) : f32[1,1]
             %4 = dynamic_update_slice(%1, %3, %0, %0) : f32[4,3]
             %5 = constant[value=[1]]() : i32[]
             %6 = add(%0, %5) : i32[]
             return %6, %4, %2
           }
         }
         return %3, %5",
    )
    .unwrap();
    let (a, copy) = (ArrayId(0), ArrayId(1));
    // Copy in; the inner loop reads the shared array and stores into its own copy; the
    // copy is the outer carry's next value, copied back.
    assert_eq!(
        accesses(&f.body),
        [
            ('L', a),
            ('S', copy),
            ('L', a),
            ('S', copy),
            ('L', copy),
            ('S', a)
        ]
    );
}

/// A branch updating an operand works on a copy; the branches return different arrays,
/// so the `cond` gets a result array each branch copies its value into.
#[test]
fn a_branch_that_updates_an_array_works_on_a_copy_copied_into_the_result() {
    let f = over_matrix(
        "%4 = cond(%0, %1, %0) : f32[4,3] {
           branch(%0: f32[4,3], %1: i32[]) {
             return %0
           }
           branch(%0: f32[4,3], %1: i32[]) {
             %2 = convert(%1) : f32[1,1]
             %3 = dynamic_update_slice(%0, %2, %1, %1) : f32[4,3]
             return %3
           }
         }
         return %3, %4",
    )
    .unwrap();
    let Some(Inst::Switch { branches, .. }) = loop_body(&f)
        .0
        .iter()
        .find(|i| matches!(i, Inst::Switch { .. }))
    else {
        panic!("{:?}", f.body)
    };
    let (a, copy, result) = (ArrayId(0), ArrayId(1), ArrayId(2));
    assert_eq!(accesses(&branches[0].block), [('L', a), ('S', result)]);
    assert_eq!(
        accesses(&branches[1].block),
        [
            ('L', a),
            ('S', copy),
            ('S', copy),
            ('L', copy),
            ('S', result)
        ]
    );
}

#[test]
fn check_refuses_an_index_past_the_array_and_a_store_to_a_read_only_one() {
    let index = |max| ElementIndex {
        array: ArrayId(0),
        offset: 1,
        terms: vec![IndexTerm {
            start: Reg(0),
            max,
            stride: 2,
        }],
    };
    let f = |inst: Inst, written| Function {
        regs: vec![DType::I32, DType::F32],
        params: vec![Reg(0)],
        arrays: vec![ArrayDecl {
            dtype: DType::F32,
            len: 8,
            written,
            role: ArrayRole::Operand,
        }],
        operands: vec![Operand::Scalar, Operand::Array(ArrayId(0))],
        body: Block(vec![inst]),
        results: vec![Reg(0)],
        outputs: vec![Operand::Scalar, Operand::Array(ArrayId(0))],
    };
    let load = |max| Inst::Load {
        dst: Reg(1),
        index: index(max),
    };
    // 1 + 3 * 2 = 7 is the last element; 1 + 4 * 2 = 9 is past it.
    assert!(f(load(3), false).check().is_ok());
    assert!(f(load(4), false).check().unwrap_err().contains("element 9"));
    let store = Inst::Store {
        index: index(3),
        src: Reg(1),
    };
    assert!(f(store.clone(), true).check().is_ok());
    assert!(f(store, false).check().unwrap_err().contains("read-only"));
    // An output with no result register, an operand array named twice.
    let mut g = f(load(3), false);
    g.outputs.push(Operand::Scalar);
    assert!(g.check().unwrap_err().contains("operands or outputs"));
    let mut g = f(load(3), false);
    g.operands.push(Operand::Array(ArrayId(0)));
    assert!(g.check().unwrap_err().contains("operands or outputs"));
}

#[test]
fn an_op_outside_the_loop_ir_declines_naming_it() {
    let e = lower(
        "program(%0: f64[]) {
           %1 = while(%0) : f64[] {
             cond(%0: f64[]) {
               %1 = constant[value=[false]]() : bool[]
               return %1
             }
             body(%0: f64[]) {
               %1 = constant[value=[1, 2, 3, 4]]() : f64[4]
               %2 = reverse[dims=[0]](%1) : f64[4]
               %3 = reduce[kind=sum, axes=[0]](%2) : f64[]
               return %3
             }
           }
           return %1
         }",
    )
    .unwrap_err();
    assert_eq!(e.op, "reverse");
    let e = lower(
        "program(%0: f64[1]) {
           %1 = while(%0) : f64[1] {
             cond(%0: f64[1]) {
               %1 = constant[value=[false]]() : bool[]
               return %1
             }
             body(%0: f64[1]) {
               %1 = reduce[kind=sum, axes=[0]](%0) : f64[]
               %2 = reshape(%1) : f64[1]
               return %2
             }
           }
           return %1
         }",
    )
    .unwrap();
    // Over one element a reduction is not a copy (a sum of -0 is +0): `+0 + x`.
    let Some(Inst::While { body, .. }) = e.body.0.last() else {
        panic!("{:?}", e.body)
    };
    assert!(matches!(
        &body.0[..],
        [
            Inst::Const { bits: 0, .. },
            Inst::Binary {
                op: BinaryOp::Add,
                ..
            },
            ..
        ]
    ));
}

#[test]
fn a_cond_inside_the_body_becomes_a_switch_over_its_branches() {
    let f = lower(
        "program(%0: i32[]) {
           %1 = while(%0) : i32[] {
             cond(%0: i32[]) {
               %1 = constant[value=[5]]() : i32[]
               %2 = compare[dir=lt](%0, %1) : bool[]
               return %2
             }
             body(%0: i32[]) {
               %1 = cond(%0, %0) : i32[] {
                 branch(%0: i32[]) {
                   return %0
                 }
                 branch(%0: i32[]) {
                   %1 = constant[value=[2]]() : i32[]
                   %2 = add(%0, %1) : i32[]
                   return %2
                 }
               }
               %2 = constant[value=[1]]() : i32[]
               %3 = add(%1, %2) : i32[]
               return %3
             }
           }
           return %1
         }",
    )
    .unwrap();
    let Some(Inst::While { body, .. }) = f.body.0.last() else {
        panic!("{:?}", f.body)
    };
    let Inst::Switch { branches, .. } = &body.0[0] else {
        panic!("{body:?}")
    };
    assert_eq!(branches.len(), 2);
    assert_eq!(branches[0].block.0.len(), 0);
    assert_eq!(branches[1].block.0.len(), 2);
}

#[test]
fn a_factorisation_is_a_library_call_into_arrays_of_its_own() {
    // LU of the matrix's leading 3x3 block, then solves against its first column.
    let f = over_matrix(
        "%4 = slice[start=[0,0], limit=[3,3], strides=[1,1]](%1) : f32[3,3]
         %5, %6, %7 = lu(%4) : f32[3,3], i32[3], i32[3]
         %8 = slice[start=[0,0], limit=[3,1], strides=[1,1]](%1) : f32[3,1]
         %9 = triangular_solve[left_side=true, lower=false, transpose_a=false, unit_diagonal=false](%5, %8) : f32[3,1]
         return %3, %1",
    )
    .unwrap();
    f.check().unwrap();
    let Some(Inst::While { body, .. }) = f.body.0.last() else {
        panic!("{:?}", f.body)
    };
    let calls: Vec<&Inst> = body
        .0
        .iter()
        .filter(|i| matches!(i, Inst::Linalg { .. }))
        .collect();
    let [Inst::Linalg {
        operands: lu_in,
        results: lu_out,
        ..
    }, Inst::Linalg {
        operands: solve_in,
        results: solve_out,
        ..
    }] = &calls[..]
    else {
        panic!("{body:?}")
    };
    // The leading rows are row-major already: read in place.
    assert_eq!(lu_in[0].start.array, ArrayId(0));
    assert_eq!(lu_in[0].ty.shape, vec![3, 3]);
    assert_eq!(lu_out.len(), 3);
    // The solve reads LU's first result where it lies; the column (stride 3) is copied.
    assert_eq!(solve_in[0].start.array, lu_out[0]);
    assert_ne!(solve_in[1].start.array, ArrayId(0));
    assert_eq!(solve_in[1].ty.shape, vec![3, 1]);
    assert!(f.arrays[solve_out[0].index()].is_scratch());
}

#[test]
fn a_one_element_factorisation_stores_its_operand_and_loads_its_results() {
    let f = lower(
        "program(%0: f64[1,1]) {
           %1 = while(%0) : f64[1,1] {
             cond(%0: f64[1,1]) {
               %1 = constant[value=[false]]() : bool[]
               return %1
             }
             body(%0: f64[1,1]) {
               %1 = cholesky(%0) : f64[1,1]
               return %1
             }
           }
           return %1
         }",
    )
    .unwrap();
    f.check().unwrap();
    let Some(Inst::While { body, .. }) = f.body.0.last() else {
        panic!("{:?}", f.body)
    };
    let kinds: Vec<&str> = body
        .0
        .iter()
        .map(|i| match i {
            Inst::Store { .. } => "store",
            Inst::Linalg { .. } => "linalg",
            Inst::Load { .. } => "load",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["store", "linalg", "load"]);
}

#[test]
fn check_holds_a_linalg_call_to_its_ops_result_types_and_own_arrays() {
    let t = TensorType::new(DType::F64, vec![2, 2]);
    let decl = |len, written| ArrayDecl {
        dtype: DType::F64,
        len,
        written,
        role: ArrayRole::Scratch,
    };
    let operand = |array, offset| crate::loop_ir::DenseOperand {
        start: ElementIndex {
            array: ArrayId(array),
            offset,
            terms: vec![],
        },
        ty: t.clone(),
    };
    let f = |arrays: Vec<ArrayDecl>, offset, result| Function {
        regs: vec![],
        params: vec![],
        operands: vec![],
        arrays,
        body: Block(vec![Inst::Linalg {
            op: crate::qir::LinalgOp::Cholesky,
            operands: vec![operand(0, offset)],
            results: vec![ArrayId(result)],
        }]),
        results: vec![],
        outputs: vec![],
    };
    assert!(f(vec![decl(4, false), decl(4, true)], 0, 1).check().is_ok());
    // The operand's last element lies past its array.
    let e = f(vec![decl(4, false), decl(4, true)], 1, 1)
        .check()
        .unwrap_err();
    assert!(e.contains("element 4"), "{e}");
    // A result array of another length, one written over its operand, a read-only one.
    let e = f(vec![decl(4, false), decl(6, true)], 0, 1)
        .check()
        .unwrap_err();
    assert!(e.contains("not an array of its own"), "{e}");
    let e = f(vec![decl(4, true)], 0, 0).check().unwrap_err();
    assert!(e.contains("not an array of its own"), "{e}");
    let e = f(vec![decl(4, false), decl(4, false)], 0, 1)
        .check()
        .unwrap_err();
    assert!(e.contains("read-only"), "{e}");
}

#[test]
fn a_whole_programs_results_leave_as_registers_or_whole_arrays() {
    let p = Program::parse(
        "program(%0: f32[4], %1: f32[]) {
           %2 = slice[start=[1], limit=[4], strides=[2]](%0) : f32[2]
           %3 = broadcast_in_dim[dims=[]](%1) : f32[3]
           %4 = constant[value=[1, 2]]() : i32[2]
           %5 = add(%0, %0) : f32[4]
           return %1, %0, %2, %3, %4, %5, %5
         }",
    )
    .unwrap();
    let f = lower_program(&p).unwrap();
    f.check().unwrap();
    assert_eq!(
        f.operands,
        vec![Operand::Array(ArrayId(0)), Operand::Scalar]
    );
    let arrays: Vec<ArrayId> = f
        .outputs
        .iter()
        .filter_map(|o| match o {
            Operand::Array(a) => Some(*a),
            Operand::Scalar => None,
        })
        .collect();
    let [input, slice, splat, constant, sum, same] = arrays[..] else {
        panic!("{:?}", f.outputs)
    };
    assert_eq!(f.outputs[0], Operand::Scalar);
    // The input leaves whole, as it came; the strided slice and the splat get memory of
    // their own of their length; the constant is its own array; one value twice is one array.
    assert_eq!(input, ArrayId(0));
    for (a, len) in [(slice, 2), (splat, 3), (sum, 4)] {
        assert!(f.arrays[a.index()].is_scratch());
        assert_eq!(f.arrays[a.index()].len, len);
    }
    assert!(matches!(
        f.arrays[constant.index()].role,
        ArrayRole::Constant(_)
    ));
    assert_eq!(sum, same);
    assert!(f.is_output(slice) && !f.is_output(ArrayId(99)));
}

#[test]
fn a_whole_program_declines_naming_the_program_or_the_op() {
    let empty = Program::parse(
        "program(%0: f32[0]) {
           return %0
         }",
    )
    .unwrap();
    let e = lower_program(&empty).unwrap_err();
    assert_eq!((e.op, e.reason), ("program", "an empty array"));
    let gather = Program::parse(
        "program(%0: f32[4], %1: i32[2, 1]) {
           %2 = gather[offset_dims=[], collapsed_slice_dims=[0], start_index_map=[0], slice_sizes=[1]](%0, %1) : f32[2]
           return %2
         }",
    )
    .unwrap();
    assert_eq!(lower_program(&gather).unwrap_err().op, "gather");
}
