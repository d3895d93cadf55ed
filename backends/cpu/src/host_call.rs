//! `host_callback` nodes: the call into the host, and the failure it may leave behind.
//!
//! The interpreter has no error channel (a validated program cannot fail to compute), but
//! a host function can fail. The first failure of a run is kept here, per thread (a run
//! interprets on its calling thread), the node yields zeros, loops stop at their next test,
//! and the executable returns the failure instead of results.

use crate::tensor::{Storage, Tensor};
use quabla_abi::abi::AbiError;
use quabla_abi::qir::Node;
use quabla_abi::HostView;
use std::cell::RefCell;

thread_local! {
    static FAILURE: RefCell<Option<AbiError>> = const { RefCell::new(None) };
}

/// Runs a `host_callback` node on its operands.
pub fn call(node: &Node, callback: u64, a: &[&Tensor]) -> Vec<Tensor> {
    let zeros = || {
        node.results
            .iter()
            .map(|t| Tensor::new(t.clone(), Storage::zeros(t.dtype, t.num_elements())))
            .collect()
    };
    if failed() {
        return zeros();
    }
    let bytes: Vec<Vec<u8>> = a.iter().map(|t| t.data.to_bytes()).collect();
    let views: Vec<HostView<'_>> = a
        .iter()
        .zip(&bytes)
        .map(|(t, b)| HostView {
            ty: t.ty.clone(),
            bytes: b,
        })
        .collect();
    match quabla_abi::plugin::call_host(callback, &views, &node.results) {
        Ok(out) => out
            .iter()
            .map(|h| Tensor::new(h.ty.clone(), Storage::from_host(&h.view())))
            .collect(),
        Err(e) => {
            FAILURE.with(|f| *f.borrow_mut() = Some(e));
            zeros()
        }
    }
}

/// Whether a host call of the current run has failed.
pub fn failed() -> bool {
    FAILURE.with(|f| f.borrow().is_some())
}

/// The failure of the run that just ended, if any (and forgets it).
pub fn take_failure() -> Option<AbiError> {
    FAILURE.with(|f| f.borrow_mut().take())
}
