use super::*;
use crate::loop_ir::lower_while;
use crate::qir::Program;

/// The function of a `while` over one array carry of type `ty` whose body is `body`
/// (its parameter `%0`), before fusion.
fn lowered(ty: &str, body: &str) -> Function {
    let p = Program::parse(&format!(
        "program(%0: {ty}) {{
           %1 = while(%0) : {ty} {{
             cond(%0: {ty}) {{
               %1 = constant[value=[false]]() : bool[]
               return %1
             }}
             body(%0: {ty}) {{
               {body}
             }}
           }}
           return %1
         }}"
    ))
    .unwrap();
    lower_while(&p.nodes[0]).unwrap()
}

/// The nests of the loop's body: each one's trip counts, outermost first.
fn nests(f: &Function) -> Vec<Vec<u64>> {
    let Some(Inst::While { body, .. }) = f.body.0.last() else {
        panic!("no while: {:?}", f.body)
    };
    body.0
        .iter()
        .filter_map(Nest::of)
        .map(|n| n.counts)
        .collect()
}

fn stores(f: &Function) -> Vec<ArrayId> {
    f.body
        .instructions()
        .iter()
        .filter_map(|i| match i {
            Inst::Store { index, .. } => Some(index.array),
            _ => None,
        })
        .collect()
}

fn fused(mut f: Function, accept: &Accept) -> Function {
    fuse(&mut f, accept);
    f.check().unwrap();
    f
}

#[test]
fn a_chain_of_elementwise_ops_is_one_loop_and_its_intermediates_stay_in_registers() {
    let f = lowered(
        "f32[4,3]",
        "%1 = mul(%0, %0) : f32[4,3]
         %2 = constant[value=[2]]() : f32[]
         %3 = broadcast_in_dim[dims=[]](%2) : f32[4,3]
         %4 = add(%1, %3) : f32[4,3]
         %5 = neg(%4) : f32[4,3]
         return %5",
    );
    assert_eq!(nests(&f), [vec![4, 3], vec![4, 3], vec![4, 3]]);
    let f = fused(f, &|_, _, _| true);
    // One contiguous run of 12, the constant hoisted above it.
    assert_eq!(nests(&f), [vec![12]]);
    // Product, sum and negation each went in place into the dying carry: in one loop the
    // sum and the negation take their operand from a register, and only the last store
    // is left.
    assert_eq!(stores(&f), [ArrayId(0)], "{:?}", f.body);
}

#[test]
fn a_loop_reading_what_the_one_before_wrote_at_another_element_is_not_fused() {
    // neg + its own transpose: element (i, j) of the sum needs element (j, i) of the
    // negation, written on another trip.
    let f = lowered(
        "f32[3,3]",
        "%1 = neg(%0) : f32[3,3]
         %2 = transpose[perm=[1,0]](%1) : f32[3,3]
         %3 = add(%1, %2) : f32[3,3]
         return %3",
    );
    let before = nests(&f).len();
    let f = fused(f, &|_, _, _| true);
    assert_eq!(nests(&f).len(), before);
}

#[test]
fn a_fused_body_the_backend_refuses_stays_two_loops() {
    let body = "%1 = add(%0, %0) : f64[16]
                %2 = exp(%1) : f64[16]
                return %2";
    let refuse_exp = |_: &Function, _: Reg, b: &Block| {
        !b.0.iter().any(|i| {
            matches!(
                i,
                Inst::Unary {
                    op: crate::qir::UnaryOp::Exp,
                    ..
                }
            )
        })
    };
    let f = fused(lowered("f64[16]", body), &refuse_exp);
    assert_eq!(nests(&f), [vec![16], vec![16]]);
    let f = fused(lowered("f64[16]", body), &|_, _, _| true);
    assert_eq!(nests(&f), [vec![16]]);
}

#[test]
fn a_strided_nest_keeps_its_levels_and_a_row_major_one_merges_them() {
    // The transpose is read at step 4 down its columns: two levels; the copy of the sum
    // into the carry is row-major on both sides: one level of 16.
    let f = lowered(
        "f32[4,4]",
        "%1 = transpose[perm=[1,0]](%0) : f32[4,4]
         %2 = add(%0, %1) : f32[4,4]
         %3 = constant[value=[0]]() : i32[]
         %4 = dynamic_slice[sizes=[1,1]](%0, %3, %3) : f32[1,1]
         %5 = dynamic_update_slice(%2, %4, %3, %3) : f32[4,4]
         return %5",
    );
    let f = fused(f, &|_, _, _| true);
    let shapes = nests(&f);
    assert!(shapes.contains(&vec![4, 4]), "{shapes:?}");
    assert!(shapes.contains(&vec![16]), "{shapes:?}");
}

/// The reductions of `f`: each one's source array and whether it reads factors.
fn sums(f: &Function) -> Vec<(ArrayId, bool)> {
    f.body
        .instructions()
        .iter()
        .filter_map(|i| match i {
            Inst::Reduce { src, times, .. } => Some((src.array, times.is_some())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_sum_of_products_reads_the_factors_where_the_loop_leaves_them() {
    // x . 2x: x is read from the carry, which the loop does not write (x is read again
    // after the sum); 2x is stored to scratch by the loop; the products are never stored.
    let f = lowered(
        "f32[4,3]",
        "%1 = add(%0, %0) : f32[4,3]
         %2 = mul(%0, %1) : f32[4,3]
         %3 = reduce[kind=sum, axes=[0,1]](%2) : f32[]
         %4 = broadcast_in_dim[dims=[]](%3) : f32[4,3]
         %5 = add(%0, %1) : f32[4,3]
         %6 = add(%5, %4) : f32[4,3]
         return %6",
    );
    let [(products, false)] = sums(&f)[..] else {
        panic!("one plain sum before fusion: {:?}", f.body)
    };
    let f = fused(f, &|_, _, _| true);
    assert_eq!(sums(&f), [(ArrayId(0), true)], "{:?}", f.body);
    assert!(!stores(&f).contains(&products), "{:?}", f.body);
}

#[test]
fn a_factor_the_loop_overwrites_keeps_the_products_stored() {
    // x . x summed after the same loop negates x in place: x is no longer in memory.
    let f = lowered(
        "f32[4,3]",
        "%1 = mul(%0, %0) : f32[4,3]
         %2 = neg(%0) : f32[4,3]
         %3 = reduce[kind=sum, axes=[0,1]](%1) : f32[]
         %4 = broadcast_in_dim[dims=[]](%3) : f32[4,3]
         %5 = add(%2, %4) : f32[4,3]
         return %5",
    );
    let f = fused(f, &|_, _, _| true);
    assert!(
        stores(&f).contains(&ArrayId(0)),
        "negated in place: {:?}",
        f.body
    );
    assert!(sums(&f).iter().all(|(_, times)| !times), "{:?}", f.body);
    // x . 2x with x dead after the product: the products overwrite x in place.
    let f = lowered(
        "f32[4,3]",
        "%1 = add(%0, %0) : f32[4,3]
         %2 = mul(%0, %1) : f32[4,3]
         %3 = reduce[kind=sum, axes=[0,1]](%2) : f32[]
         %4 = broadcast_in_dim[dims=[]](%3) : f32[4,3]
         %5 = add(%1, %4) : f32[4,3]
         return %5",
    );
    let f = fused(f, &|_, _, _| true);
    assert_eq!(sums(&f), [(ArrayId(0), false)], "{:?}", f.body);
}

#[test]
fn integer_sums_and_float_maxima_of_products_stay_as_they_are() {
    for (ty, kind) in [("i32", "sum"), ("f32", "max")] {
        let f = lowered(
            &format!("{ty}[8]"),
            &format!(
                "%1 = mul(%0, %0) : {ty}[8]
                 %2 = reduce[kind={kind}, axes=[0]](%1) : {ty}[]
                 %3 = broadcast_in_dim[dims=[]](%2) : {ty}[8]
                 %4 = add(%0, %3) : {ty}[8]
                 return %4"
            ),
        );
        let f = fused(f, &|_, _, _| true);
        assert!(
            sums(&f).iter().all(|(_, times)| !times),
            "{ty} {kind}: {:?}",
            f.body
        );
    }
}

/// The body of `f`'s loop: its nests' stored arrays, in order, one list per nest.
fn stores_per_nest(f: &Function) -> Vec<Vec<ArrayId>> {
    let Some(Inst::While { body, .. }) = f.body.0.last() else {
        panic!("no while: {:?}", f.body)
    };
    body.0
        .iter()
        .filter_map(Nest::of)
        .map(|n| {
            n.body
                .0
                .iter()
                .filter_map(|i| match i {
                    Inst::Store { index, .. } => Some(index.array),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// `y = 2x; s = sum(y); x + y * s`: `y * s` goes in place over `y`'s scratch, and nothing
/// reads it there before the next iteration writes all of `y` again.
const OVERWRITTEN_NEXT_ITERATION: &str = "%1 = add(%0, %0) : f32[64]
     %2 = reduce[kind=sum, axes=[0]](%1) : f32[]
     %3 = broadcast_in_dim[dims=[]](%2) : f32[64]
     %4 = mul(%1, %3) : f32[64]
     %5 = add(%0, %4) : f32[64]
     return %5";

#[test]
fn a_store_the_next_iteration_overwrites_unread_goes() {
    let f = fused(
        lowered("f32[64]", OVERWRITTEN_NEXT_ITERATION),
        &|_, _, _| true,
    );
    let nests = stores_per_nest(&f);
    let [first, last] = &nests[..] else {
        panic!("two nests: {nests:?}")
    };
    // The first nest writes y's scratch; the last writes only the carry.
    assert_eq!(last, &[ArrayId(0)], "{:?}", f.body);
    assert!(first.iter().all(|a| *a != ArrayId(0)), "{nests:?}");
    assert_eq!(first.len(), 1, "{nests:?}");
}

#[test]
fn a_store_a_later_iteration_reads_stays() {
    // The same body, but reading y's scratch at its start (before it is overwritten): the
    // previous iteration's `y * s` is seen, so its store stays.
    let mut f = lowered("f32[64]", OVERWRITTEN_NEXT_ITERATION);
    let scratch = f
        .arrays
        .iter()
        .position(|a| a.is_scratch() && a.len == 64)
        .map(|k| ArrayId(k as u32))
        .unwrap();
    let r = Reg(f.regs.len() as u32);
    f.regs.push(crate::DType::F32);
    let Some(Inst::While { body, .. }) = f.body.0.last_mut() else {
        panic!("no while")
    };
    body.0.insert(
        0,
        Inst::Load {
            dst: r,
            index: ElementIndex {
                array: scratch,
                offset: 3,
                terms: Vec::new(),
            },
        },
    );
    let f = fused(f, &|_, _, _| true);
    let nests = stores_per_nest(&f);
    assert!(nests.last().unwrap().contains(&scratch), "{nests:?}");
}

/// A `while` over a 2-element and an 8-element carry whose body is `body`, before fusion.
fn lowered_pair(body: &str) -> Function {
    let p = Program::parse(&format!(
        "program(%0: f32[2], %1: f32[8]) {{
           %2, %3 = while(%0, %1) : f32[2], f32[8] {{
             cond(%0: f32[2], %1: f32[8]) {{
               %2 = constant[value=[false]]() : bool[]
               return %2
             }}
             body(%0: f32[2], %1: f32[8]) {{
               {body}
             }}
           }}
           return %2, %3
         }}"
    ))
    .unwrap();
    lower_while(&p.nodes[0]).unwrap()
}

#[test]
fn alternating_index_spaces_fuse_past_each_other() {
    // A primal chain over 2 elements and a tangent chain over 8, traced op by op as forward
    // mode does: each chain becomes one loop.
    let f = lowered_pair(
        "%2 = mul(%0, %0) : f32[2]
         %3 = mul(%1, %1) : f32[8]
         %4 = add(%2, %0) : f32[2]
         %5 = add(%3, %1) : f32[8]
         %6 = neg(%4) : f32[2]
         %7 = neg(%5) : f32[8]
         return %6, %7",
    );
    assert!(nests(&f).len() >= 6, "one loop per op before fusion");
    let f = fused(f, &|_, _, _| true);
    assert_eq!(nests(&f), [vec![2], vec![8]], "{:?}", f.body);
}

#[test]
fn a_loop_stays_after_the_loop_it_reads() {
    // The second 2-element loop reads what the 8-element loop wrote: it may not move above
    // it, so it cannot join the first.
    let f = lowered_pair(
        "%2 = mul(%0, %0) : f32[2]
         %3 = mul(%1, %1) : f32[8]
         %4 = slice[start=[0], limit=[2], strides=[1]](%3) : f32[2]
         %5 = add(%2, %4) : f32[2]
         return %5, %3",
    );
    let f = fused(f, &|_, _, _| true);
    assert_eq!(nests(&f), [vec![2], vec![8], vec![2]], "{:?}", f.body);
}
