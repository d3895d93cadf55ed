//! The compact binary encoding of QIR that crosses the plugin boundary.
//!
//! Layout: the 4 magic bytes `QIR\0`, the schema version as a little-endian u32, then the
//! program serialised with postcard. Decoding checks all three and validates the program.

use super::{depth, Program, ValidationError, MAX_REGION_DEPTH};

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

/// Why bytes are not a program this build accepts.
///
/// ```
/// use quabla_abi::qir::{decode, DecodeError};
/// assert!(matches!(decode(b"nope"), Err(DecodeError::NotQir)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("not a QIR program: the bytes do not start with the QIR magic `QIR\\0`")]
    NotQir,
    #[error(
        "QIR schema version {version} is not supported; this build reads {QIR_VERSION_MIN}..={QIR_VERSION}; \
         upgrade the plugin or serialise at an older version"
    )]
    Version { version: u32 },
    #[error(
        "QIR program refused: regions nest deeper than {limit} levels (the limit); a program \
         this deep is malformed or hostile"
    )]
    TooDeep { limit: usize },
    #[error("malformed QIR bytes: {0}")]
    Malformed(String),
    #[error(transparent)]
    Invalid(#[from] ValidationError),
}

impl From<DecodeError> for String {
    fn from(e: DecodeError) -> String {
        e.to_string()
    }
}

/// Decodes and validates an encoded program. Every failure is a [`DecodeError`], never a
/// panic, and no input can nest deeper than [`MAX_REGION_DEPTH`] (checked while decoding,
/// before the structure exists).
pub fn decode(bytes: &[u8]) -> Result<Program, DecodeError> {
    if bytes.len() < 8 || bytes[..4] != QIR_MAGIC {
        return Err(DecodeError::NotQir);
    }
    let version = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    if !(QIR_VERSION_MIN..=QIR_VERSION).contains(&version) {
        return Err(DecodeError::Version { version });
    }
    let (decoded, too_deep) = depth::decoding(|| postcard::take_from_bytes::<Program>(&bytes[8..]));
    let (p, rest) = decoded.map_err(|e| {
        if too_deep {
            DecodeError::TooDeep {
                limit: MAX_REGION_DEPTH,
            }
        } else {
            DecodeError::Malformed(e.to_string())
        }
    })?;
    if !rest.is_empty() {
        return Err(DecodeError::Malformed(format!(
            "{} trailing bytes",
            rest.len()
        )));
    }
    p.validate()?;
    Ok(p)
}
