//! Hashing with domain separation, the commitment, and a bounds-checked byte reader.

use sha3::{Digest, Sha3_256};

use crate::{Error, Result, Route, Suite};

/// A 32-byte SHA3-256 digest.
pub type Digest32 = [u8; 32];

pub(crate) const TAG_RESULT: &str = "triskel-attest/v1/result";
pub(crate) const TAG_ROUTE: &str = "triskel-attest/v1/route";
pub(crate) const TAG_CONTEXT: &str = "triskel-attest/v1/context";
pub(crate) const TAG_PROGRAM: &str = "triskel-attest/v1/program";
pub(crate) const TAG_COMMITMENT: &str = "triskel-attest/v1/commitment";
pub(crate) const TAG_SIGNED: &str = "triskel-attest/v1/signed-commitment";
pub(crate) const TAG_BUNDLE: &str = "triskel-attest/v1/bundle";
pub(crate) const TAG_KEY_ID: &str = "triskel-attest/v1/key-id";
pub(crate) const TAG_KEY_FILE: &str = "triskel-attest/v1/key-file";
pub(crate) const TAG_LEAF: &str = "triskel-attest/v1/merkle-leaf";
pub(crate) const TAG_NODE: &str = "triskel-attest/v1/merkle-node";
pub(crate) const TAG_ROOT: &str = "triskel-attest/v1/merkle-root";
pub(crate) const TAG_ROUTE_V2: &str = "triskel-attest/v2/route";
pub(crate) const TAG_CONTEXT_V2: &str = "triskel-attest/v2/context";
pub(crate) const TAG_COMPUTATION_V2: &str = "triskel-attest/v2/computation";
pub(crate) const TAG_COMMITMENT_V2: &str = "triskel-attest/v2/commitment";

/// SHA3-256 that starts with a length-prefixed domain tag.
pub(crate) struct Hasher(Sha3_256);

impl Hasher {
    /// Starts a hash with `u64le(len(tag)) || tag`.
    pub(crate) fn new(tag: &str) -> Self {
        let mut h = Hasher(Sha3_256::new());
        h.field(tag.as_bytes());
        h
    }

    /// Appends a variable-length field as `u64le(len) || bytes`.
    pub(crate) fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    /// Appends fixed-length bytes as they are.
    pub(crate) fn fixed(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update(bytes);
        self
    }

    pub(crate) fn finish(&mut self) -> Digest32 {
        self.0.finalize_reset().into()
    }
}

/// `H(tag "result", field(result))`: the digest a single-result record commits to.
pub fn result_digest(result: &[u8]) -> Digest32 {
    Hasher::new(TAG_RESULT).field(result).finish()
}

/// `H(tag "route", field(engine), field(params))`.
pub fn route_digest(route: &Route) -> Digest32 {
    Hasher::new(TAG_ROUTE)
        .field(route.engine.as_bytes())
        .field(route.params.as_bytes())
        .finish()
}

/// Version 2: `H(tag "v2/route", nonce || field(engine) || field(params))`.
pub(crate) fn salted_route_digest(nonce: &Digest32, route: &Route) -> Digest32 {
    Hasher::new(TAG_ROUTE_V2)
        .fixed(nonce)
        .field(route.engine.as_bytes())
        .field(route.params.as_bytes())
        .finish()
}

/// Version 2: `H(tag "v2/context", nonce || field(context))`.
pub(crate) fn salted_context_digest(nonce: &Digest32, context: &[u8]) -> Digest32 {
    Hasher::new(TAG_CONTEXT_V2)
        .fixed(nonce)
        .field(context)
        .finish()
}

/// `H(tag "program", field(program))`: the digest a route names the
/// computation by (the router puts it in the route's parameters, so a
/// record binds the operations and constants, not only where they ran).
pub fn program_digest(program: &[u8]) -> Digest32 {
    Hasher::new(TAG_PROGRAM).field(program).finish()
}

/// `H(tag "context", field(context))`.
pub fn context_digest(context: &[u8]) -> Digest32 {
    Hasher::new(TAG_CONTEXT).field(context).finish()
}

/// The message each of the three signature schemes signs:
/// `field(tag "signed-commitment") || commitment` (75 bytes).
pub fn signed_message(commitment: &Digest32) -> Vec<u8> {
    let mut msg = Vec::with_capacity(8 + TAG_SIGNED.len() + 32);
    msg.extend_from_slice(&(TAG_SIGNED.len() as u64).to_le_bytes());
    msg.extend_from_slice(TAG_SIGNED.as_bytes());
    msg.extend_from_slice(commitment);
    msg
}

/// Reads fixed fields off a byte slice, turning every shortfall into [`Error::Malformed`].
pub(crate) struct Reader<'a> {
    item: &'static str,
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(item: &'static str, bytes: &'a [u8]) -> Self {
        Reader { item, bytes }
    }

    /// Fails unless the input is exactly `len` bytes long.
    pub(crate) fn expect_len(&self, len: usize) -> Result<()> {
        if self.bytes.len() == len {
            Ok(())
        } else {
            Err(self.error(format!("expected {len} bytes, got {}", self.bytes.len())))
        }
    }

    pub(crate) fn error(&self, problem: String) -> Error {
        Error::malformed(self.item, problem)
    }

    pub(crate) fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8]> {
        if self.bytes.len() < len {
            return Err(self.error(format!(
                "truncated: {what} needs {len} bytes, {} left",
                self.bytes.len()
            )));
        }
        let (head, tail) = self.bytes.split_at(len);
        self.bytes = tail;
        Ok(head)
    }

    pub(crate) fn array32(&mut self, what: &str) -> Result<Digest32> {
        let mut out = [0u8; 32];
        out.copy_from_slice(self.take(32, what)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    pub(crate) fn u64(&mut self, what: &str) -> Result<u64> {
        let mut out = [0u8; 8];
        out.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(out))
    }

    /// Checks a byte that must hold one expected value.
    pub(crate) fn expect_u8(&mut self, what: &str, expected: u8) -> Result<()> {
        let found = self.u8(what)?;
        if found == expected {
            Ok(())
        } else {
            Err(self.error(format!("unsupported {what} {found} (expected {expected})")))
        }
    }

    /// Reads a suite byte, which must name a known suite.
    pub(crate) fn suite(&mut self) -> Result<Suite> {
        let id = self.u8("suite")?;
        Suite::from_id(id).ok_or_else(|| self.error(format!("unknown suite {id} (known: 1, 2)")))
    }

    /// Checks a magic prefix.
    pub(crate) fn expect_magic(&mut self, magic: &[u8]) -> Result<()> {
        if self.take(magic.len(), "magic")? == magic {
            Ok(())
        } else {
            Err(self.error("bad magic".into()))
        }
    }

    /// Fails if unread bytes remain.
    pub(crate) fn finish(&self) -> Result<()> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(self.error(format!("{} trailing bytes", self.bytes.len())))
        }
    }
}

/// Lower-case hexadecimal of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
