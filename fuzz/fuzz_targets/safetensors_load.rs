//! Safetensors loading (`quabla.load`'s reader) on arbitrary bytes: tensors or a typed error;
//! what it accepts writes back to a file that reads to the same tensors.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quabla::tensor_file::{read_safetensors, write_safetensors};

fuzz_target!(|data: &[u8]| {
    let Ok(file) = read_safetensors(data) else {
        return;
    };
    let bytes = write_safetensors(&file.tensors, &file.metadata).expect("read tensors write back");
    let again = read_safetensors(&bytes).expect("written tensors read back");
    assert_eq!(again, file);
});
