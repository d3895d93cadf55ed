//! The compact binary encoding of QIR that crosses the plugin boundary.
//!
//! Layout: the 4 magic bytes `QIR\0`, the schema version as a little-endian u32, then the
//! program serialised with postcard. Decoding checks all three and validates the program.

use super::Program;

/// The first four bytes of every encoded program.
pub const QIR_MAGIC: [u8; 4] = *b"QIR\0";
/// The schema version this build writes by default.
pub const QIR_VERSION: u32 = 1;
/// The oldest schema version this build reads and writes.
pub const QIR_VERSION_MIN: u32 = 1;

/// Encodes `p` at schema `version` (see [`QIR_VERSION`]).
///
/// ```
/// use quabla_abi::qir::{decode, encode, Program, QIR_VERSION};
/// let p = Program::parse("program(%0: f32[2]) {\n  return %0\n}\n").unwrap();
/// let bytes = encode(&p, QIR_VERSION).unwrap();
/// assert_eq!(decode(&bytes).unwrap(), p);
/// ```
pub fn encode(p: &Program, version: u32) -> Result<Vec<u8>, String> {
    if !(QIR_VERSION_MIN..=QIR_VERSION).contains(&version) {
        return Err(format!(
            "cannot write QIR schema version {version}; this build writes {QIR_VERSION_MIN}..={QIR_VERSION}"
        ));
    }
    let mut out = QIR_MAGIC.to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    let body = postcard::to_allocvec(p).map_err(|e| format!("cannot encode program: {e}"))?;
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decodes and validates an encoded program. Every failure is an error message, never a panic.
pub fn decode(bytes: &[u8]) -> Result<Program, String> {
    if bytes.len() < 8 || bytes[..4] != QIR_MAGIC {
        return Err("not a QIR program: the bytes do not start with the QIR magic `QIR\\0`".into());
    }
    let version = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    if !(QIR_VERSION_MIN..=QIR_VERSION).contains(&version) {
        return Err(format!(
            "QIR schema version {version} is not supported; this build reads {QIR_VERSION_MIN}..={QIR_VERSION}; \
             upgrade the plugin or serialise at an older version"
        ));
    }
    let (p, rest): (Program, &[u8]) =
        postcard::take_from_bytes(&bytes[8..]).map_err(|e| format!("malformed QIR bytes: {e}"))?;
    if !rest.is_empty() {
        return Err(format!(
            "malformed QIR bytes: {} trailing bytes",
            rest.len()
        ));
    }
    p.validate().map_err(|e| e.to_string())?;
    Ok(p)
}
