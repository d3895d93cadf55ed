//! Elementwise groups run as `mx::compile`d functions: each maximal run of consecutive
//! elementwise nodes (two or more) becomes one function that MLX traces once per input
//! shapes and dtypes and fuses into one kernel, instead of one kernel and one intermediate
//! array per node.
//!
//! Whether groups are compiled is `QUABLA_MLX_COMPILE` (`on`, `off`, or unset: on where the
//! plugin runs on a GPU, off on the CPU). Why off on the CPU: MLX's CPU stream compiles each
//! fused kernel with the system C++ compiler the first time it meets it (cached on disk
//! after), which made the first PINN step take 21-24 s instead of 0.2 s, and the steady
//! gain measured here is within this machine's noise (plugin, one thread, three runs each:
//! PINN step f32 105-176 ms eager against 130-160 compiled; a chain of 50 elementwise ops
//! over 10^6 floats 382-396 against 336-386; MLX's own Python API measured `mx.compile`
//! slower than eager on that chain, 582 against 457 ms). On a GPU fusion saves memory
//! traffic and kernel launches, which is what MLX's compile is for there.
//!
//! A group's trace builds its nodes with the same function as the eager graph
//! (`elementwise::apply`), so QIR's exact semantics are the same in both, and the tests
//! below hold the compiled results to the eager bits.

use crate::elementwise;
use crate::shim::{handles, last_error, make_n, Handle, MlxArray};
use quabla_abi::abi::AbiError;
use quabla_abi::qir::{Node, Program, ValueId};
use quabla_abi::TensorType;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CString};
use std::mem::ManuallyDrop;
use std::ops::Range;

#[repr(C)]
struct QmlxCompiled {
    _private: [u8; 0],
}

type TraceFn = extern "C" fn(*mut c_void, *const Handle, usize, *mut Handle, usize) -> c_int;

extern "C" {
    fn qmlx_compile(
        trace: TraceFn,
        payload: *mut c_void,
        nout: usize,
        out: *mut *mut QmlxCompiled,
    ) -> c_int;
    fn qmlx_compiled_call(
        f: *const QmlxCompiled,
        inputs: *const Handle,
        n: usize,
        outputs: *mut Handle,
        nout: usize,
    ) -> c_int;
    fn qmlx_compiled_free(f: *mut QmlxCompiled);
    fn qmlx_set_error(message: *const c_char);
}

/// Whether groups are compiled, from `QUABLA_MLX_COMPILE` and the placement.
pub fn enabled(asked: Option<&str>, on_gpu: bool) -> Result<bool, String> {
    match asked.map(str::trim) {
        None | Some("") | Some("auto") => Ok(on_gpu),
        Some("on") | Some("1") => Ok(true),
        Some("off") | Some("0") => Ok(false),
        Some(other) => Err(format!(
            "QUABLA_MLX_COMPILE={other:?} is not a setting: use on, off or auto"
        )),
    }
}

/// What a group's trace rebuilds: its nodes and the types of what they read.
struct Replay {
    nodes: Vec<Node>,
    operand_types: Vec<Vec<TensorType>>,
    /// The id of the first node's result; node `k`'s result is `first + k`.
    first: u32,
    /// The group's inputs (values defined before it), by id: their position in a call.
    input_position: HashMap<ValueId, usize>,
    outputs: Vec<ValueId>,
}

impl Replay {
    fn run(&self, inputs: &[&MlxArray]) -> Result<Vec<MlxArray>, AbiError> {
        let mut results: Vec<MlxArray> = Vec::with_capacity(self.nodes.len());
        for (node, types) in self.nodes.iter().zip(&self.operand_types) {
            let x = node
                .operands
                .iter()
                .map(|&id| self.lookup(id, inputs, &results))
                .collect::<Result<Vec<_>, _>>()?;
            let ty: Vec<&TensorType> = types.iter().collect();
            let value = elementwise::apply(&node.op, &x, &ty, &node.results[0])?;
            results.push(value);
        }
        // Node `k`'s result is value `first + k`: each output is taken from its slot once.
        let mut slots: Vec<Option<MlxArray>> = results.into_iter().map(Some).collect();
        self.outputs
            .iter()
            .map(|id| {
                id.0.checked_sub(self.first)
                    .and_then(|k| slots.get_mut(k as usize))
                    .and_then(Option::take)
                    .ok_or_else(|| AbiError::internal(format!("group output {id} not built")))
            })
            .collect()
    }

    fn lookup<'a>(
        &self,
        id: ValueId,
        inputs: &[&'a MlxArray],
        results: &'a [MlxArray],
    ) -> Result<&'a MlxArray, AbiError> {
        let found = match id.0.checked_sub(self.first) {
            Some(k) => results.get(k as usize),
            None => self
                .input_position
                .get(&id)
                .and_then(|&p| inputs.get(p).copied()),
        };
        found.ok_or_else(|| AbiError::internal(format!("{id} is not visible in its group")))
    }
}

/// MLX's trace callback: rebuilds the group from the placeholder inputs MLX hands it.
/// Never unwinds into C++: failures and panics become a status and a message.
extern "C" fn trace(
    payload: *mut c_void,
    inputs: *const Handle,
    n: usize,
    outputs: *mut Handle,
    nout: usize,
) -> c_int {
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `payload` is the group's boxed `Replay`, alive while its compiled function
        // is; `inputs` holds `n` handles MLX lends for this call (not ours to free).
        let replay = unsafe { &*(payload as *const Replay) };
        let borrowed: Vec<ManuallyDrop<MlxArray>> = (0..n)
            .map(|i| ManuallyDrop::new(unsafe { MlxArray::from_handle(*inputs.add(i)) }))
            .collect();
        let refs: Vec<&MlxArray> = borrowed.iter().map(|a| &**a).collect();
        replay.run(&refs)
    }));
    let message = match built {
        Ok(Ok(outs)) if outs.len() == nout => {
            for (i, o) in outs.into_iter().enumerate() {
                // SAFETY: `outputs` has room for `nout` handles; the shim takes ownership.
                unsafe { *outputs.add(i) = o.into_handle() };
            }
            return 0;
        }
        Ok(Ok(outs)) => format!("a group traced {} outputs for {nout}", outs.len()),
        Ok(Err(e)) => e.message().to_string(),
        Err(_) => "a panic while tracing a compiled group".to_string(),
    };
    let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: a NUL-terminated string the shim copies.
    unsafe { qmlx_set_error(c.as_ptr()) };
    1
}

/// A run of elementwise nodes compiled into one MLX function.
pub struct Group {
    /// The node indices it covers.
    pub nodes: Range<usize>,
    inputs: Vec<ValueId>,
    compiled: *mut QmlxCompiled,
    replay: Box<Replay>,
}

// SAFETY: the compiled function is an `std::function` MLX calls only from the caller's
// thread, and every call runs under the plugin's MLX lock; `Replay` is plain data.
unsafe impl Send for Group {}
unsafe impl Sync for Group {}

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: made by `qmlx_compile` and freed once, before `replay` (which it points
        // to) is dropped with the other fields.
        unsafe { qmlx_compiled_free(self.compiled) }
    }
}

impl Group {
    fn new(
        program: &Program,
        types: &[TensorType],
        last_use: &[Option<usize>],
        nodes: Range<usize>,
        first: u32,
    ) -> Result<Group, AbiError> {
        let end_id = first + nodes.len() as u32;
        let mut inputs = Vec::new();
        for node in &program.nodes[nodes.clone()] {
            for &id in &node.operands {
                if id.0 < first && !inputs.contains(&id) {
                    inputs.push(id);
                }
            }
        }
        let outputs: Vec<ValueId> = (first..end_id)
            .map(ValueId)
            .filter(|id| last_use[id.index()].is_some_and(|u| u >= nodes.end))
            .collect();
        let replay = Box::new(Replay {
            nodes: program.nodes[nodes.clone()].to_vec(),
            operand_types: program.nodes[nodes.clone()]
                .iter()
                .map(|n| {
                    n.operands
                        .iter()
                        .map(|id| types[id.index()].clone())
                        .collect()
                })
                .collect(),
            first,
            input_position: inputs.iter().enumerate().map(|(p, &id)| (id, p)).collect(),
            outputs,
        });
        let mut compiled: *mut QmlxCompiled = std::ptr::null_mut();
        let payload = &*replay as *const Replay as *mut c_void;
        // SAFETY: `trace` matches the shim's callback type; `payload` lives in the group,
        // which frees the compiled function before it.
        let status = unsafe { qmlx_compile(trace, payload, replay.outputs.len(), &mut compiled) };
        if status != 0 || compiled.is_null() {
            return Err(last_error("compile"));
        }
        Ok(Group {
            nodes,
            inputs,
            compiled,
            replay,
        })
    }

    /// The result ids the group gives (ascending); its other results are read only inside it.
    pub fn outputs(&self) -> &[ValueId] {
        &self.replay.outputs
    }

    /// Calls the compiled function on `values` (every value defined before the group);
    /// returns the outputs in [`Group::outputs`]' order, lazy.
    pub fn call<V: AsRef<MlxArray>>(&self, values: &[V]) -> Result<Vec<MlxArray>, AbiError> {
        let args = self
            .inputs
            .iter()
            .map(|id| {
                values
                    .get(id.index())
                    .map(|v| v.as_ref())
                    .ok_or_else(|| AbiError::internal(format!("group input {id} not computed")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let h = handles(&args);
        make_n("a compiled group", self.outputs().len(), |out| unsafe {
            // SAFETY: valid handles; `out` has room for every output.
            qmlx_compiled_call(
                self.compiled,
                h.as_ptr(),
                h.len(),
                out.as_mut_ptr(),
                out.len(),
            )
        })
    }
}

/// For each value, the last node index that reads it (`usize::MAX` for a program output).
fn last_uses(program: &Program) -> Vec<Option<usize>> {
    let mut last = vec![None; program.num_values()];
    for (i, node) in program.nodes.iter().enumerate() {
        for id in &node.operands {
            last[id.index()] = Some(i);
        }
    }
    for id in &program.outputs {
        last[id.index()] = Some(usize::MAX);
    }
    last
}

/// The program's groups: maximal runs of two or more consecutive elementwise nodes.
pub fn groups(program: &Program, types: &[TensorType]) -> Result<Vec<Group>, AbiError> {
    let first_ids = program.first_result_ids();
    let last_use = last_uses(program);
    let mut groups = Vec::new();
    let mut start = 0;
    while start < program.nodes.len() {
        let mut end = start;
        while end < program.nodes.len() && elementwise::is_elementwise(&program.nodes[end].op) {
            end += 1;
        }
        if end - start >= 2 {
            groups.push(Group::new(
                program,
                types,
                &last_use,
                start..end,
                first_ids[start].0,
            )?);
        }
        start = end.max(start + 1);
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::Block;
    use quabla_abi::DType;
    use std::sync::Arc;

    #[test]
    fn the_setting_is_parsed_with_a_helpful_refusal() {
        assert_eq!(enabled(None, false), Ok(false));
        assert_eq!(enabled(Some("auto"), true), Ok(true));
        assert_eq!(enabled(Some(" on "), false), Ok(true));
        assert_eq!(enabled(Some("off"), true), Ok(false));
        let err = enabled(Some("yes"), false).unwrap_err();
        assert!(err.contains("on, off or auto"), "{err}");
    }

    /// Runs `src` on `inputs` (dtype and little-endian bytes) eagerly and with its
    /// elementwise runs compiled; returns the outputs' bytes of both and the group count.
    fn both_ways(
        src: &str,
        inputs: &[(DType, Vec<usize>, Vec<u8>)],
    ) -> (Vec<Vec<u8>>, Vec<Vec<u8>>, usize) {
        let _mlx = crate::mlx_lock();
        let program = Program::parse(src).unwrap();
        let types = program.output_types();
        let run = |fuse: bool| {
            let block = Block::new(&program, fuse).unwrap();
            let args = inputs
                .iter()
                .map(|(d, s, b)| Arc::new(MlxArray::from_bytes(*d, s, b).unwrap()))
                .collect();
            let outs = block.run(args).unwrap();
            outs.iter()
                .zip(&types)
                .map(|(o, t)| o.to_bytes(t.size_bytes()).unwrap())
                .collect::<Vec<_>>()
        };
        let groups = groups(&program, &program.value_types()).unwrap().len();
        (run(false), run(true), groups)
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn i32s(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// A compiled group gives the eager graph's bits: IEEE edge values, a C-library
    /// function inside the group, saturating conversion, integer division by zero and
    /// `i32::MIN / -1`, an intermediate read after the group, a program output inside it.
    #[test]
    fn compiled_groups_give_the_eager_graphs_bits() {
        let x: Vec<f32> = (0..64)
            .map(|i| match i {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => -0.0,
                3 => 3e9,
                _ => (i as f32 - 30.0) * 0.37,
            })
            .collect();
        let y: Vec<f32> = (0..64).map(|i| (i as f32 * 0.61).sin() * 4.0).collect();
        let a: Vec<i32> = (0..64)
            .map(|i| if i == 5 { i32::MIN } else { i * 7 - 200 })
            .collect();
        let b: Vec<i32> = (0..64)
            .map(|i| if i == 5 { -1 } else { i % 9 - 4 })
            .collect();
        let src = "program(%0: f32[64], %1: f32[64], %2: i32[64], %3: i32[64]) {
  %4 = mul(%0, %1) : f32[64]
  %5 = tanh(%4) : f32[64]
  %6 = exp(%5) : f32[64]
  %7 = compare[dir=gt](%6, %0) : bool[64]
  %8 = select(%7, %6, %0) : f32[64]
  %9 = convert(%8) : i32[64]
  %10 = div(%2, %3) : i32[64]
  %11 = rem(%2, %3) : i32[64]
  %12 = add(%9, %10) : i32[64]
  %13 = reduce[kind=sum, axes=[0]](%5) : f32[]
  %14 = neg(%13) : f32[]
  return %12, %11, %14, %8
}
";
        let (eager, compiled, groups) = both_ways(
            src,
            &[
                (DType::F32, vec![64], f32s(&x)),
                (DType::F32, vec![64], f32s(&y)),
                (DType::I32, vec![64], i32s(&a)),
                (DType::I32, vec![64], i32s(&b)),
            ],
        );
        assert_eq!(groups, 1, "one run of nine; the lone neg is left eager");
        assert_eq!(eager, compiled);
    }

    /// A loop body's group is compiled once and called every trip, and gives the eager bits.
    #[test]
    fn a_loop_bodys_group_matches_too() {
        let src = "program(%0: f64[32], %1: i32[]) {
  %2, %3 = while(%0, %1) : f64[32], i32[] {
    cond(%0: f64[32], %1: i32[]) {
      %2 = constant[value=[0]]() : i32[]
      %3 = compare[dir=gt](%1, %2) : bool[]
      return %3
    }
    body(%0: f64[32], %1: i32[]) {
      %2 = sin(%0) : f64[32]
      %3 = mul(%2, %0) : f64[32]
      %4 = add(%3, %0) : f64[32]
      %5 = constant[value=[1]]() : i32[]
      %6 = sub(%1, %5) : i32[]
      return %4, %6
    }
    }
  return %2
}
";
        let x: Vec<u8> = (0..32)
            .flat_map(|i| ((i as f64 - 16.0) * 0.113).to_le_bytes())
            .collect();
        let (eager, compiled, _) = both_ways(
            src,
            &[(DType::F64, vec![32], x), (DType::I32, vec![], i32s(&[7]))],
        );
        assert_eq!(eager, compiled);
    }
}
