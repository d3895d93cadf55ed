//! How many launches a program's plan makes on the CUDA plugin: kernels (fused elementwise
//! runs, cuBLAS products, other nodes) and library steps, per region, for a program dumped
//! with `QUABLA_DUMP_IR` (fusion work reads it before and after a change, without a GPU).
//!
//! `cargo run -p quabla-cuda --example plan_stats -- [--list] <program.qir>...` (`--list`:
//! each kernel of the plan too, regions indented, with the nodes it computes).

use quabla_abi::qir::Program;
use quabla_cuda::plan::{plan, Plan, Step};
use quabla_cuda::speculate::device_only;
use std::process::ExitCode;

/// (fused elementwise kernels, matrix products, other kernels (a speculated cond's pick
/// among them), library and host steps, one-block kernels standing for a sequence of
/// small ones, kernels running a whole loop on the device) of `plan`, regions included.
fn count(plan: &Plan) -> [usize; 6] {
    let mut c = [0; 6];
    let mut stack = vec![plan];
    while let Some(q) = stack.pop() {
        for s in &q.steps {
            match s {
                Step::Kernel(k) if k.device_loop => c[5] += 1,
                Step::Kernel(k) if k.single_block => c[4] += 1,
                Step::Kernel(k) if k.gemm.is_some() => c[1] += 1,
                Step::Kernel(k) if k.fused > 0 => c[0] += 1,
                Step::Kernel(_) | Step::Update { .. } => c[2] += 1,
                Step::Linalg { .. } | Step::HostCallback { .. } => c[3] += 1,
                Step::Cond { branches, .. } => stack.extend(branches.iter()),
                Step::Speculate { branches, .. } => {
                    c[2] += 1;
                    stack.extend(branches.iter());
                }
                Step::While { cond, body, .. } => {
                    stack.push(cond);
                    stack.push(body);
                }
                Step::Constant { .. } | Step::Alias { .. } => {}
            }
        }
    }
    c
}

/// The `while` loops of `plan` (regions included), and how many have regions of device
/// work alone (`loop_graph.rs` runs those as a graph per iteration).
fn loops(plan: &Plan) -> (usize, usize) {
    let (mut all, mut graphed) = (0, 0);
    let mut stack = vec![plan];
    while let Some(q) = stack.pop() {
        for s in &q.steps {
            match s {
                Step::While { cond, body, .. } => {
                    all += 1;
                    graphed += usize::from(device_only(cond) && device_only(body));
                    stack.push(cond);
                    stack.push(body);
                }
                Step::Cond { branches, .. } | Step::Speculate { branches, .. } => {
                    stack.extend(branches.iter())
                }
                Step::Constant { .. }
                | Step::Kernel(_)
                | Step::Update { .. }
                | Step::Alias { .. }
                | Step::Linalg { .. }
                | Step::HostCallback { .. } => {}
            }
        }
    }
    (all, graphed)
}

fn main() -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    let list = std::env::args().any(|a| a == "--list");
    for path in std::env::args().skip(1).filter(|a| a != "--list") {
        let result = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| Program::parse(&t).map_err(|e| e.to_string()))
            .and_then(|p| plan(&p, "k").map(|q| (p, q)));
        match result {
            Ok((p, q)) => {
                if list {
                    print_kernels(&p, &q);
                }
                let [ew, mm, other, lib, merged, device] = count(&q);
                let nodes = p.nodes.len();
                let (loops, graphed) = loops(&q);
                if let Some(a) = quabla_cuda::graph_buffers::assign(&q) {
                    let apart: usize = q
                        .steps
                        .iter()
                        .filter_map(|s| match s {
                            Step::Kernel(k) => Some(
                                k.writes
                                    .iter()
                                    .map(|&w| q.types[w].size_bytes())
                                    .sum::<usize>(),
                            ),
                            _ => None,
                        })
                        .sum();
                    let held = quabla_cuda::graph_buffers::check(&q, &a)
                        .map_or_else(|e| format!("WRONG: {e}"), |()| "checked".into());
                    println!(
                        "{path}: a CUDA graph's buffers: {} bytes shared, {apart} bytes one per \
                         value ({held})",
                        a.bytes()
                    );
                }
                println!(
                    "{path}: {nodes} nodes -> {} launches ({device} whole loops on the \
                     device, {merged} one-block kernels of small ones merged, {ew} fused \
                     elementwise, {mm} matrix products, {other} other kernels, {lib} \
                     library/host steps); {loops} host-driven while loops, {graphed} of them \
                     device-only (a CUDA graph per iteration)",
                    device + merged + ew + mm + other + lib
                );
            }
            Err(e) => {
                eprintln!("{path}: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}

/// Each kernel of `plan`, regions included (indented under their `while`, `cond` or
/// speculated `cond`): its name (`k_<first node>`), the op of that node where it is a
/// top-level node, how many nodes it computes, and its element count.
fn print_kernels(p: &Program, plan: &Plan) {
    // Depth-first with an explicit stack (steps pushed in reverse), so the listing reads in
    // plan order and a deep program cannot overflow the call stack.
    enum Item<'a> {
        Step(&'a Step, usize),
        Label(&'static str, usize),
    }
    let mut stack: Vec<Item> = plan.steps.iter().rev().map(|s| Item::Step(s, 0)).collect();
    while let Some(item) = stack.pop() {
        let (s, depth) = match item {
            Item::Label(l, depth) => {
                println!("{:w$}{l}:", "", w = 2 + 2 * depth);
                continue;
            }
            Item::Step(s, depth) => (s, depth),
        };
        let regions: Vec<(&'static str, &Plan)> = match s {
            Step::Kernel(k) | Step::Update { kernel: k, .. } => {
                let op = if depth == 0 {
                    k.name
                        .rsplit('_')
                        .next()
                        .and_then(|n| n.parse::<usize>().ok())
                        .and_then(|n| p.nodes.get(n))
                        .map_or("?".into(), |n| n.op.name().to_string())
                } else {
                    String::new()
                };
                println!(
                    "{:w$}{:<8} {op:<20} {:>3} nodes, {} elements",
                    "",
                    k.name,
                    k.fused,
                    k.elements,
                    w = 2 + 2 * depth
                );
                vec![]
            }
            Step::While { cond, body, .. } => vec![("while cond", cond), ("while body", body)],
            Step::Cond { branches, .. } => branches.iter().map(|b| ("cond branch", b)).collect(),
            Step::Speculate { branches, .. } => {
                branches.iter().map(|b| ("speculated branch", b)).collect()
            }
            Step::Linalg { .. } | Step::HostCallback { .. } => {
                println!("{:w$}(library or host step)", "", w = 2 + 2 * depth);
                vec![]
            }
            Step::Constant { .. } | Step::Alias { .. } => vec![],
        };
        for (label, region) in regions.into_iter().rev() {
            stack.extend(region.steps.iter().rev().map(|s| Item::Step(s, depth + 1)));
            stack.push(Item::Label(label, depth));
        }
    }
}
