//! Without a GPU: every kernel of every conformance program (regions included; every op
//! but the dense factorizations, which are library calls; whole programs and loops run on
//! the device by `device_loop.rs`) is generated and compiled by NVRTC to cubins for sm_80
//! and sm_90, and so are the factorizations' helper kernels; any compile error fails, and
//! ptxas's register and spill counts are reported. NVRTC comes from `cargo xtask cuda` (or
//! `QUABLA_NVRTC_DIR`); without it the test says so and passes, unless
//! `QUABLA_REQUIRE_NVRTC` is set (as `cargo xtask test` does once it has NVRTC).

use quabla_abi::qir::Program;
use quabla_cuda::{fusion, nvrtc, one_block, plan};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn case_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out.sort();
}

fn conformance_programs() -> Vec<(String, Program)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/cases");
    let mut files = Vec::new();
    case_files(&dir, &mut files);
    let mut out = Vec::new();
    for f in files {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let cases = doc
            .get("cases")
            .and_then(|c| c.as_array())
            .cloned()
            .unwrap_or_default();
        for c in cases {
            let (Some(name), Some(src)) = (c["name"].as_str(), c["program"].as_str()) else {
                continue;
            };
            let p = Program::parse(src).unwrap_or_else(|e| panic!("{name}: {e}"));
            out.push((name.to_string(), p));
        }
    }
    out
}

/// Programs whose kernels the suite's small shapes never make: the largest eigh, SVD and QR
/// of the plugin's own, a sort of lines past the rank sort's bound (its merge passes), with
/// two keys and a payload, and scatter-adds of many windows (by sorted keys: an embedding's
/// gradient, and two indexed axes in i32).
fn beyond_the_suite() -> Vec<(String, Program)> {
    let sort = "program(%0: i32[3, 5000], %1: f32[3, 5000], %2: f64[3, 5000]) {
  %3, %4, %5 = sort[axis=1, num_keys=2, descending=true](%0, %1, %2) : i32[3, 5000], f32[3, 5000], f64[3, 5000]
  return %3, %4, %5
}";
    let embedding = "program(%0: f32[1000, 64], %1: i32[5000, 1], %2: f32[5000, 64]) {
  %3 = scatter_add[update_window_dims=[1], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0]](%0, %1, %2) : f32[1000, 64]
  return %3
}";
    let two_axes = "program(%0: i32[9, 13, 4], %1: i32[700, 2], %2: i32[700, 2]) {
  %3 = scatter_add[update_window_dims=[1], inserted_window_dims=[0, 1], scatter_dims_to_operand_dims=[1, 0]](%0, %1, %2) : i32[9, 13, 4]
  return %3
}";
    // The largest eigh, SVD and QR the device's own kernels take, side by side: each keeps
    // up to 35 KiB of shared memory, so they must not be merged into one block's kernel.
    let orthogonal = "program(%0: f64[64, 64], %1: f32[2, 40, 64]) {
  %2, %3 = eigh(%0) : f64[64], f64[64, 64]
  %4, %5, %6 = svd[full_matrices=true, compute_uv=true](%0) : f64[64, 64], f64[64], f64[64, 64]
  %7, %8 = qr[full_matrices=true](%1) : f32[2, 40, 40], f32[2, 40, 64]
  %9, %10, %11 = svd[full_matrices=false, compute_uv=true](%1) : f32[2, 40, 40], f32[2, 40], f32[2, 40, 64]
  return %2, %3, %4, %5, %6, %7, %8, %9, %10, %11
}";
    [
        ("orthogonal/largest", orthogonal),
        ("merge_sort/two_keys", sort),
        ("scatter_by_keys/embedding", embedding),
        ("scatter_by_keys/two_axes_i32", two_axes),
    ]
    .into_iter()
    .map(|(name, text)| (name.to_string(), Program::parse(text).unwrap()))
    .collect()
}

/// One kernel's ptxas report.
struct Compiled {
    regs: u32,
    spill_stores: u32,
    spill_loads: u32,
    origin: String,
    sm: u32,
}

#[test]
fn every_kernel_of_the_suite_compiles_for_sm80_and_sm90() {
    if let Err(why) = nvrtc::load() {
        assert!(
            std::env::var_os("QUABLA_REQUIRE_NVRTC").is_none(),
            "{why}, and QUABLA_REQUIRE_NVRTC is set"
        );
        eprintln!("skipping: {why}");
        return;
    }
    let mut programs = conformance_programs();
    assert!(
        programs.len() > 500,
        "only {} conformance programs found",
        programs.len()
    );
    programs.extend(beyond_the_suite());
    // Identical kernels (the same source) compile once per SM.
    let mut unique: BTreeMap<String, (String, usize)> = BTreeMap::new();
    let mut with_kernels = 0;
    // Distinct kernels running a whole loop on the device (`device_loop.rs`).
    let mut device_loops = std::collections::BTreeSet::new();
    for (case, p) in &programs {
        let mut any = false;
        // Each program's kernels, and the one-block kernels its whole plan merges them
        // into (`one_block.rs`; a plan exists where every op has a kernel).
        let merged = plan::plan_with(p, "k", one_block::MAX_ELEMENTS).map_or_else(
            |_| Vec::new(),
            |q| {
                q.kernels()
                    .into_iter()
                    .filter(|k| k.single_block)
                    .cloned()
                    .collect::<Vec<_>>()
            },
        );
        let each = fusion::programs(p).into_iter().flat_map(|(name, q)| {
            plan::kernels(q, &name).unwrap_or_else(|e| panic!("{case}: {e}"))
        });
        // Each top-level loop as a device loop of its own too, as a program the loop IR
        // does not cover whole runs it.
        for k in each.chain(merged).chain(loop_kernels(p)) {
            any = true;
            // The entry point's name is part of the source: key on the body alone.
            let key = k.source.replace(&k.name, "kernel");
            if k.device_loop {
                device_loops.insert(key.clone());
            }
            unique
                .entry(key)
                .or_insert((format!("{case}/{}", k.name), 0))
                .1 += 1;
        }
        with_kernels += any as usize;
    }
    // NVRTC compiles distinct programs on several threads at once.
    let jobs: Vec<(&String, &String, u32)> = unique
        .iter()
        .flat_map(|(src, (origin, _))| [80, 90].map(|sm| (src, origin, sm)))
        .collect();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let reports: Vec<Result<Compiled, String>> = std::thread::scope(|s| {
        let chunks: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(workers))
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(source, origin, sm)| {
                            let cubin = nvrtc::compile_cubin(source, "kernel", *sm)
                                .map_err(|e| format!("{origin}: {e}\n{source}"))?;
                            if cubin.bytes.len() < 100 {
                                return Err(format!("{origin}: an empty cubin"));
                            }
                            let (r, st, ld) = nvrtc::resources(&cubin.log).ok_or_else(|| {
                                format!("{origin}: no ptxas report in {:?}", cubin.log)
                            })?;
                            Ok(Compiled {
                                regs: r,
                                spill_stores: st,
                                spill_loads: ld,
                                origin: origin.to_string(),
                                sm: *sm,
                            })
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let (mut max_regs, mut spills) = (0, Vec::new());
    for r in reports {
        let c = r.unwrap_or_else(|e| panic!("{e}"));
        max_regs = max_regs.max(c.regs);
        if c.spill_stores + c.spill_loads > 0 {
            spills.push(format!(
                "{} sm_{}: {} B stored, {} B loaded",
                c.origin, c.sm, c.spill_stores, c.spill_loads
            ));
        }
    }
    println!(
        "NVRTC {:?}: {} programs, {} with kernels, {} distinct kernels ({} of them device \
         loops) compiled for sm_80 and sm_90; at most {max_regs} registers per thread; \
         spills: {}",
        nvrtc::version().unwrap(),
        programs.len(),
        with_kernels,
        unique.len(),
        device_loops.len(),
        if spills.is_empty() {
            "none".to_string()
        } else {
            spills.join("; ")
        }
    );
    assert!(unique.len() > 100, "only {} distinct kernels", unique.len());
    assert!(
        device_loops.len() >= 20,
        "only {} device loops",
        device_loops.len()
    );
}

/// The factorizations' helper kernels compile, with every entry point the runtime loads.
#[test]
fn the_factorizations_helper_kernels_compile_for_sm80_and_sm90() {
    if nvrtc::load().is_err() {
        eprintln!("skipping: no NVRTC");
        return;
    }
    let source = format!(
        "{}{}",
        quabla_cuda::elementwise::PRELUDE,
        quabla_cuda::linalg::HELPERS
    );
    for sm in [80, 90] {
        let cubin = nvrtc::compile_cubin(&source, "linalg_helpers", sm).unwrap();
        for name in quabla_cuda::linalg::HELPER_NAMES {
            // The entry points' names are in the cubin's symbol table.
            assert!(
                cubin
                    .bytes
                    .windows(name.len())
                    .any(|w| w == name.as_bytes()),
                "sm_{sm}: no `{name}`"
            );
            assert!(
                cubin.log.contains(name),
                "sm_{sm}: no ptxas report for `{name}`"
            );
        }
    }
}

/// A loop's freeze kernel (`in_place.rs`; with kept carries and windows too) and a
/// speculated cond's pick (`speculate.rs`) compile, for either predicate type and values
/// of every dtype (the conformance programs'
/// kernels above are planned region by region, so they include neither).
#[test]
fn the_freeze_and_pick_kernels_compile_for_sm80_and_sm90() {
    use quabla_abi::{DType, TensorType};
    if nvrtc::load().is_err() {
        eprintln!("skipping: no NVRTC");
        return;
    }
    let carry: Vec<TensorType> = DType::ALL
        .iter()
        .map(|&d| TensorType::new(d, vec![3]))
        .chain([TensorType::new(DType::F32, vec![])])
        .collect();
    let results: Vec<usize> = (0..carry.len()).collect();
    // Carries of each kind: written whole, kept, and a window of every dtype.
    use quabla_cuda::in_place::Carried;
    let windows: Vec<TensorType> = DType::ALL
        .iter()
        .map(|&d| TensorType::new(d, vec![4, 3]))
        .collect();
    let mixed: Vec<TensorType> = carry.iter().chain(&windows).cloned().collect();
    let carried: Vec<Carried> = (0..carry.len())
        .map(|j| {
            if j % 2 == 0 {
                Carried::Next
            } else {
                Carried::Kept
            }
        })
        .chain(windows.iter().map(|t| Carried::Window {
            node: 0,
            update: 0,
            starts: vec![1, 2],
            update_type: TensorType::new(t.dtype, vec![1, 3]),
        }))
        .collect();
    for pred in [DType::Bool, DType::I32] {
        let freeze = quabla_cuda::in_place::freeze_kernel("z", pred, &carry, &[]);
        let windowed = quabla_cuda::in_place::freeze_kernel("z", pred, &mixed, &carried);
        let pick = quabla_cuda::speculate::pick_kernel("p", pred, 3, &results, &carry);
        for sm in [80, 90] {
            nvrtc::compile_cubin(&freeze.source, "z", sm).unwrap();
            nvrtc::compile_cubin(&windowed.source, "z", sm).unwrap();
            nvrtc::compile_cubin(&pick.source, "p", sm).unwrap();
        }
    }
}

/// Every conformance program whose top-level plan a CUDA graph can hold shares buffers
/// (`graph_buffers.rs`) without a value overwritten before its last read, and takes fewer
/// bytes than a buffer per value would.
#[test]
fn every_conformance_programs_graph_buffers_hold_their_values() {
    let (mut checked, mut shared) = (0, 0);
    for (case, p) in conformance_programs() {
        // As planned (small kernels merged into one-block kernels), then kernel by kernel,
        // whose many more steps give buffers to share.
        let (Ok(merged), Ok(q)) = (
            plan::plan_with(&p, "k", one_block::MAX_ELEMENTS),
            plan::plan_with(&p, "k", 0),
        ) else {
            continue;
        };
        for q in [&merged, &q] {
            if let Some(a) = quabla_cuda::graph_buffers::assign(q) {
                quabla_cuda::graph_buffers::check(q, &a).unwrap_or_else(|e| panic!("{case}: {e}"));
            }
        }
        let Some(a) = quabla_cuda::graph_buffers::assign(&q) else {
            continue;
        };
        let values: usize = q
            .steps
            .iter()
            .filter_map(|s| match s {
                plan::Step::Kernel(k) => Some(k.writes.len()),
                _ => None,
            })
            .sum();
        checked += 1;
        shared += usize::from(a.sizes.len() < values);
    }
    println!("{checked} programs checked, {shared} of them sharing buffers");
    assert!(
        checked > 400 && shared > 5,
        "{checked} checked, {shared} sharing"
    );
}

/// A compile error is an error value naming the kernel, with NVRTC's log.
#[test]
fn a_bad_kernel_is_an_error_with_the_log() {
    if nvrtc::load().is_err() {
        eprintln!("skipping: no NVRTC");
        return;
    }
    let err = nvrtc::compile_cubin(
        "extern \"C\" __global__ void k() { undeclared = 1; }",
        "k",
        90,
    )
    .unwrap_err();
    assert!(err.contains("`k`") && err.contains("undeclared"), "{err}");
}

/// The ptxas report is read as (registers, spill stores, spill loads).
#[test]
fn resource_report_parsing() {
    let log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
               ptxas info    : Function properties for k\n    \
               16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n\
               ptxas info    : Used 24 registers, used 0 barriers, 368 bytes cmem[0]\n";
    assert_eq!(nvrtc::resources(log), Some((24, 8, 4)));
    assert_eq!(nvrtc::resources("nothing"), None);
}

/// The device-loop kernels of `p`'s top-level `while` loops, and for each loop the
/// reason it stays host-driven where it does.
fn loop_kernels(p: &Program) -> Vec<fusion::Kernel> {
    device_loops(p)
        .into_iter()
        .filter_map(Result::ok)
        .flat_map(|d| d.steps)
        .filter_map(|s| match s {
            plan::Step::Kernel(k) => Some(k),
            _ => None,
        })
        .collect()
}

/// Each top-level `while` of `p` as a device loop, or why not.
fn device_loops(p: &Program) -> Vec<Result<quabla_cuda::device_loop::DeviceLoop, String>> {
    let (types, first) = (p.value_types(), p.first_result_ids());
    p.nodes
        .iter()
        .enumerate()
        .filter(|(_, node)| matches!(node.op, quabla_abi::qir::Op::While { .. }))
        .map(|(k, node)| {
            let operands: Vec<usize> = node.operands.iter().map(|o| o.index()).collect();
            let id = first[k].index();
            let results: Vec<usize> = (id..id + node.results.len()).collect();
            quabla_cuda::device_loop::plan("devloop", node, &operands, &results, types.len())
        })
        .collect()
}

/// Which top-level `while` loops of the suite run on the device (`device_loop.rs`); the
/// others stay host-driven, each for a reason printed here. None is refused for its element
/// loops' iterations meeting (`device_loop::spread`): the shared lowering gives loops whose
/// iterations are independent.
#[test]
fn most_conformance_loops_run_on_the_device() {
    let (mut device, mut declined) = (0, BTreeMap::<String, Vec<String>>::new());
    let (mut loops, mut whole) = (0, 0);
    for (case, p) in conformance_programs() {
        let mut any = false;
        for d in device_loops(&p) {
            any = true;
            match d {
                Ok(_) => device += 1,
                Err(why) => declined.entry(why).or_default().push(case.clone()),
            }
        }
        loops += usize::from(any);
        whole += usize::from(any && quabla_cuda::device_loop::plan_program(&p, "k").is_some());
    }
    println!(
        "{device} top-level loops of the suite run on the device; {whole} of the {loops} \
         programs with loops run whole as one kernel"
    );
    for (why, cases) in &declined {
        println!(
            "{} stay host-driven: {why} ({})",
            cases.len(),
            cases.join(", ")
        );
        assert!(
            !why.contains("element loop"),
            "a loop refused by the spread check: {why}"
        );
    }
    assert!(device >= 30, "only {device} loops on the device");
    assert!(whole >= 25, "only {whole} programs whole on the device");
}

/// What the in-place runs of the suite's top-level loops write of their carries
/// (`in_place::carried`): scans keep their `xs` and fill their `ys` a window at a time, so
/// the suite's host-decided loops (`cuda_emulated_host_loops.rs`) run both paths.
#[test]
fn the_suites_loops_keep_carries_and_write_windows_in_place() {
    use quabla_cuda::in_place::{carried, Carried};
    let (mut next, mut kept, mut windows, mut loops) = (0, 0, 0, 0);
    for (_, p) in conformance_programs() {
        for node in &p.nodes {
            if let quabla_abi::qir::Op::While { body, .. } = &node.op {
                loops += 1;
                for c in carried(body) {
                    match c {
                        Carried::Next => next += 1,
                        Carried::Kept => kept += 1,
                        Carried::Window { .. } => windows += 1,
                    }
                }
            }
        }
    }
    println!(
        "{loops} top-level loops: {next} carries written whole, {kept} kept, {windows} \
         written in a window"
    );
    assert!(
        kept >= 100 && windows >= 40,
        "{kept} kept, {windows} windows"
    );
}
