//! Boundary cases: hostile programs handed to a plugin's `compile` through the ABI. A plugin
//! passes when it refuses each with an `InvalidArgument` error; an `Internal` error (a panic
//! caught by the kit) fails, and a crash ends the run, which is the failure these guard
//! against. They need no capability: refusing comes before anything is run.

use crate::{CaseResult, Errors, Outcome};
use quabla_abi::abi::ErrorCode;
use quabla_abi::host::Plugin;
use quabla_abi::qir::{self, Program, ValueId, MAX_REGION_DEPTH};
use quabla_abi::testing::nested_cond_program;
use quabla_abi::{DType, TensorType};

/// One hostile program and a phrase its refusal must contain.
struct Hostile {
    name: String,
    bytes: Vec<u8>,
    says: &'static str,
}

fn hostile_programs() -> Vec<Hostile> {
    let mut v: Vec<Hostile> = [MAX_REGION_DEPTH + 1, 100_000, 1_000_000]
        .into_iter()
        .map(|levels| Hostile {
            name: format!("boundary/nested-regions-{levels}"),
            bytes: nested_cond_program(levels),
            says: "deeper than",
        })
        .collect();
    let huge = Program {
        // More than 2^63 elements whatever the width of `usize` (the browser build is 32-bit).
        inputs: vec![TensorType::new(DType::F32, vec![usize::MAX, usize::MAX])],
        nodes: vec![],
        outputs: vec![ValueId(0)],
    };
    if let Ok(bytes) = qir::encode(&huge, qir::QIR_VERSION) {
        v.push(Hostile {
            name: "boundary/more-than-2^63-elements".into(),
            bytes,
            says: "2^63",
        });
    }
    let valid = nested_cond_program(2);
    v.push(Hostile {
        name: "boundary/truncated".into(),
        bytes: valid[..valid.len() - 3].to_vec(),
        says: "malformed",
    });
    v
}

/// Runs every boundary case on `plugin`.
pub fn boundary_results(plugin: &Plugin) -> Vec<CaseResult> {
    hostile_programs()
        .into_iter()
        .map(|h| {
            let r = plugin.compile_bytes(&h.bytes, qir::QIR_VERSION, vec![], vec![]);
            let outcome = match r {
                Ok(_) => Outcome::Failed("compiled a hostile program".into()),
                Err(e)
                    if e.code() == ErrorCode::InvalidArgument && e.message().contains(h.says) =>
                {
                    Outcome::Passed(Errors::default())
                }
                Err(e) => Outcome::Failed(format!(
                    "refused with {e}, expected InvalidArgument saying `{}`",
                    h.says
                )),
            };
            CaseResult {
                name: h.name,
                outcome,
            }
        })
        .collect()
}
