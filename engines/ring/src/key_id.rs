//! [`KeyId`]: the public identity of a secret key.

use std::fmt;

use crate::error::{Error, Result};
use crate::sampling::Prng;
use crate::serialize::Reader;

/// The public identity of a secret key: 16 bytes drawn from the key
/// generator's random stream when the key is made, and carried by every key
/// and ciphertext derived from it. Operations compare identities, so values
/// under two keys of one parameter set are refused with
/// [`Error::KeyMismatch`] instead of being computed or decrypted to garbage.
///
/// The bytes are random output of the generator, not a function of the
/// secret, so they reveal nothing about it. They are not authentication:
/// bytes from outside can carry any identity, and a forged one only turns a
/// clear error back into the garbage it prevents.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId([u8; KeyId::LEN]);

impl KeyId {
    /// Length of the identity in bytes.
    pub const LEN: usize = 16;

    /// A new identity drawn from `rng` (the generator of the key it names).
    pub fn sample(rng: &mut Prng) -> KeyId {
        let mut bytes = [0u8; KeyId::LEN];
        for chunk in bytes.chunks_exact_mut(8) {
            chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        KeyId(bytes)
    }

    /// The identity with these bytes (as written by [`KeyId::write`]).
    pub fn from_bytes(bytes: [u8; KeyId::LEN]) -> KeyId {
        KeyId(bytes)
    }

    /// The identity's bytes.
    pub fn to_bytes(self) -> [u8; KeyId::LEN] {
        self.0
    }

    /// Appends the identity's 16 bytes to `out`.
    pub fn write(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0);
    }

    /// Reads 16 bytes written by [`KeyId::write`].
    pub fn read(r: &mut Reader<'_>) -> Result<KeyId> {
        let mut bytes = [0u8; KeyId::LEN];
        bytes.copy_from_slice(r.take(KeyId::LEN)?);
        Ok(KeyId(bytes))
    }

    /// `Ok` when `found`, the identity carried by `what`, is this one;
    /// else [`Error::KeyMismatch`] naming both.
    pub fn check(self, what: &str, found: KeyId) -> Result<()> {
        if self == found {
            return Ok(());
        }
        Err(Error::KeyMismatch {
            what: what.to_string(),
            expected: self,
            found,
        })
    }
}

/// The first 8 bytes in hex: enough to tell keys apart in messages.
impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0[..8].iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyId(")?;
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))?;
        write!(f, ")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_differ_round_trip_and_mismatches_are_named() {
        let mut rng = Prng::from_seed([7; 32]);
        let (a, b) = (KeyId::sample(&mut rng), KeyId::sample(&mut rng));
        assert_ne!(a, b);
        let mut bytes = Vec::new();
        a.write(&mut bytes);
        assert_eq!(bytes.len(), KeyId::LEN);
        let mut r = Reader::new(&bytes);
        assert_eq!(KeyId::read(&mut r).unwrap(), a);
        r.finish().unwrap();
        assert!(KeyId::read(&mut Reader::new(&bytes[..15])).is_err());
        a.check("ciphertext", a).unwrap();
        let e = a.check("ciphertext", b).unwrap_err();
        assert_eq!(
            e,
            Error::KeyMismatch {
                what: "ciphertext".into(),
                expected: a,
                found: b
            }
        );
        let msg = e.to_string();
        assert!(
            msg.contains(&a.to_string()) && msg.contains(&b.to_string()),
            "{msg}"
        );
    }
}
