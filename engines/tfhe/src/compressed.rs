//! Seed-compressed fresh encryptions, the form in which a client sends its
//! inputs (tfhe-rs's `CompressedCiphertext`, `CompressedFheUint8`, ...): each
//! LWE mask of k N words is replaced by the public 32-byte seed and ChaCha20
//! stream it expands from, and the server calls `decompress()` to get the
//! ciphertext the plain encryption would have given. The noise of every body
//! comes from the OS CSPRNG, never from the seed.
//!
//! On the wire (`to_bytes`, kinds 10-12 of `src/serialize.rs`) a 2_2 block
//! shrinks from 16 463 to 107 bytes and a FheUint64 (32 blocks) from 525 237
//! to 853: see the crate README's "Keys and sizes".

use triskel_ring::{CompressedLweCiphertext, Prng, Seed};

use crate::boolean::BoolCiphertext;
use crate::error::Result;
use crate::integer::RadixCiphertext;
use crate::keys::{ClientKey, Owner};
use crate::shortint::Ciphertext;

/// A fresh block as seed + body: degree and noise level as
/// [`ClientKey::encrypt`] sets them, the mask stream 0 of a fresh seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressedCiphertext {
    pub(crate) lwe: CompressedLweCiphertext,
    pub(crate) degree: u64,
    pub(crate) noise_level: u64,
    /// The parameter set and client key it was made with (the decompressed
    /// block keeps them).
    pub(crate) owner: Owner,
}

/// A fresh boolean as seed + body (the mask stream 0 of a fresh seed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressedBoolCiphertext {
    pub(crate) lwe: CompressedLweCiphertext,
    /// The parameter set and client key it was made with.
    pub(crate) owner: Owner,
}

/// A fresh radix integer as one seed + a body per block: block i's mask is
/// stream i of the integer's seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressedRadixCiphertext {
    pub(crate) seed: Seed,
    pub(crate) bits: u32,
    /// Each block's `lwe.seed` is `seed` and its `lwe.stream` its index.
    pub(crate) blocks: Vec<CompressedCiphertext>,
}

/// A fresh public seed from its own OS-seeded generator (the noise is drawn
/// from another one).
pub(crate) fn fresh_seed() -> Result<Seed> {
    Ok(Prng::from_os()?.gen_seed())
}

impl CompressedCiphertext {
    /// The identity of its client key (the decompressed block's).
    pub fn key_id(&self) -> triskel_ring::KeyId {
        self.owner.key
    }

    /// The block with its mask regenerated: what [`ClientKey::encrypt`] gives.
    pub fn decompress(&self) -> Ciphertext {
        Ciphertext {
            lwe: self.lwe.decompress(),
            degree: self.degree,
            noise_level: self.noise_level,
            owner: self.owner,
        }
    }
}

impl CompressedBoolCiphertext {
    /// The identity of its client key (the decompressed boolean's).
    pub fn key_id(&self) -> triskel_ring::KeyId {
        self.owner.key
    }

    /// The boolean with its mask regenerated: what [`ClientKey::encrypt_bool`] gives.
    pub fn decompress(&self) -> BoolCiphertext {
        BoolCiphertext {
            lwe: self.lwe.decompress(),
            owner: self.owner,
        }
    }
}

impl CompressedRadixCiphertext {
    /// Width in bits.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Its parameter set and client key (its blocks').
    pub(crate) fn owner(&self) -> Owner {
        // Every constructor checks the width's block count, at least 1.
        self.blocks[0].owner
    }

    /// The identity of its client key (the decompressed integer's).
    pub fn key_id(&self) -> triskel_ring::KeyId {
        self.owner().key
    }

    /// The integer with every block's mask regenerated: what
    /// [`ClientKey::encrypt_radix`] gives.
    pub fn decompress(&self) -> RadixCiphertext {
        RadixCiphertext {
            blocks: self
                .blocks
                .iter()
                .map(CompressedCiphertext::decompress)
                .collect(),
            bits: self.bits,
        }
    }
}

impl ClientKey {
    /// Encrypts m < message_modulus as seed + body.
    pub fn encrypt_compressed(&self, m: u64) -> Result<CompressedCiphertext> {
        self.encrypt_block_compressed(m, fresh_seed()?, 0)
    }

    fn encrypt_block_compressed(
        &self,
        m: u64,
        seed: Seed,
        stream: u64,
    ) -> Result<CompressedCiphertext> {
        let (torus, degree) = self.encode_block(m)?;
        Ok(CompressedCiphertext {
            lwe: self.encrypt_torus_compressed(torus, seed, stream)?,
            degree,
            noise_level: 1,
            owner: self.owner(),
        })
    }

    /// Encrypts a boolean as seed + body.
    pub fn encrypt_bool_compressed(&self, b: bool) -> Result<CompressedBoolCiphertext> {
        let m = self.encode_bool(b)?;
        Ok(CompressedBoolCiphertext {
            lwe: self.encrypt_torus_compressed(m, fresh_seed()?, 0)?,
            owner: self.owner(),
        })
    }

    /// Encrypts the low `bits` bits of value (bits = 8, 16, 32 or 64) as one
    /// seed + a body per block.
    pub fn encrypt_radix_compressed(
        &self,
        value: u64,
        bits: u32,
    ) -> Result<CompressedRadixCiphertext> {
        let seed = fresh_seed()?;
        let blocks = (self.radix_digits(value, bits)?.into_iter().enumerate())
            .map(|(i, d)| self.encrypt_block_compressed(d, seed, i as u64))
            .collect::<Result<_>>()?;
        Ok(CompressedRadixCiphertext { seed, bits, blocks })
    }

    /// Encrypts a u8 as a [`CompressedRadixCiphertext`].
    pub fn encrypt_u8_compressed(&self, v: u8) -> Result<CompressedRadixCiphertext> {
        self.encrypt_radix_compressed(v as u64, 8)
    }
    /// Encrypts a u16 as a [`CompressedRadixCiphertext`].
    pub fn encrypt_u16_compressed(&self, v: u16) -> Result<CompressedRadixCiphertext> {
        self.encrypt_radix_compressed(v as u64, 16)
    }
    /// Encrypts a u32 as a [`CompressedRadixCiphertext`].
    pub fn encrypt_u32_compressed(&self, v: u32) -> Result<CompressedRadixCiphertext> {
        self.encrypt_radix_compressed(v as u64, 32)
    }
    /// Encrypts a u64 as a [`CompressedRadixCiphertext`].
    pub fn encrypt_u64_compressed(&self, v: u64) -> Result<CompressedRadixCiphertext> {
        self.encrypt_radix_compressed(v, 64)
    }
}
