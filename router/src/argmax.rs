//! Argmax in TFHE: a tournament of comparisons over radix integers, and the
//! radix integers of signed BFV values read bit by bit through the
//! BFV -> TFHE transition ([`crate::transition::bfv_value_bits`]).
//!
//! A value's bits arrive as blocks holding 0 or 1 (fresh bootstrap
//! outputs, noise level 1). Each 2-bit block of the radix integer is their
//! linear combination b0 + 2 b1 (degree 3, no carry), whose noise level 3
//! is within what the 2_2 set bootstraps (5) but not within what a
//! `select` packs with its condition (4 + 3 > 5): so each two-bit block is
//! refreshed by one identity lookup, and a lone top bit is a block as it
//! is. The blocks above the bits read are trivial zeros, up to the
//! narrowest radix width (8..64 bits) that holds them.

use rayon::prelude::*;
use triskel_bfv as bfv;
use triskel_tfhe as tfhe;

use crate::error::{Error, Result};
use crate::plan::radix_width;
use crate::transition::{bfv_value_bits, EncryptedBit, TransitionKey};

/// (message bits per block, message modulus) of the server's set.
fn block_shape(sk: &tfhe::ServerKey) -> Result<(u32, u64)> {
    match sk.parameters().encoding {
        tfhe::Encoding::Integer {
            message_modulus, ..
        } if message_modulus.is_power_of_two() && message_modulus >= 2 => {
            Ok((message_modulus.trailing_zeros(), message_modulus))
        }
        _ => Err(Error::Input(
            "an argmax needs an integer TFHE set with a power-of-two message modulus".into(),
        )),
    }
}

/// The constant `value` as a noiseless radix integer of `bits` bits.
fn trivial_radix(sk: &tfhe::ServerKey, value: u64, bits: u32) -> Result<tfhe::RadixCiphertext> {
    let (b, msg) = block_shape(sk)?;
    let blocks = (0..bits / b)
        .map(|j| sk.trivial((value >> (j * b)) & (msg - 1)))
        .collect::<std::result::Result<_, _>>()?;
    Ok(sk.radix_from_blocks(blocks, bits)?)
}

/// Radix integers from the bits of each value (least significant first;
/// module documentation).
fn radix_from_bits(
    sk: &tfhe::ServerKey,
    values: &[Vec<EncryptedBit>],
) -> Result<Vec<tfhe::RadixCiphertext>> {
    let (b, msg) = block_shape(sk)?;
    let refresh = sk.lookup_table(|x| x % msg)?;
    let blocks = values
        .par_iter()
        .map(|bits| {
            bits.chunks(b as usize)
                .map(|chunk| {
                    let mut block = chunk[0].clone();
                    for (j, bit) in chunk.iter().enumerate().skip(1) {
                        let scaled = sk.unchecked_scalar_mul(bit, 1 << j)?;
                        block = sk.unchecked_add(&block, &scaled)?;
                    }
                    Ok(if chunk.len() > 1 {
                        sk.apply_lookup_table(&block, &refresh)?
                    } else {
                        block
                    })
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    blocks
        .into_iter()
        .zip(values)
        .map(|(mut blocks, bits)| {
            let width = radix_width(bits.len() as u32);
            while blocks.len() < (width / b) as usize {
                blocks.push(sk.trivial(0)?);
            }
            Ok(sk.radix_from_blocks(blocks, width)?)
        })
        .collect()
}

/// The index (a radix integer of `index_bits`) of the first largest of
/// `values`: a tree of rounds, each pair's later value winning only when
/// greater (so the first largest wins, as the left half of every pair
/// holds the lower indices), the pairs of a round in parallel. The last
/// round selects the index only.
pub(crate) fn tournament(
    sk: &tfhe::ServerKey,
    values: Vec<tfhe::RadixCiphertext>,
    index_bits: u32,
) -> Result<tfhe::RadixCiphertext> {
    let mut round = values
        .into_iter()
        .enumerate()
        .map(|(i, v)| Ok((v, trivial_radix(sk, i as u64, index_bits)?)))
        .collect::<Result<Vec<_>>>()?;
    while round.len() > 1 {
        let last = round.len() == 2;
        round = round
            .par_chunks(2)
            .map(|pair| match pair {
                [(a, ia), (b, ib)] => {
                    let greater = sk.compare(tfhe::Comparison::Gt, b, a)?;
                    let value = if last {
                        a.clone()
                    } else {
                        sk.select(&greater, b, a)?
                    };
                    Ok((value, sk.select(&greater, ib, ia)?))
                }
                _ => Ok(pair[0].clone()),
            })
            .collect::<Result<Vec<_>>>()?;
    }
    let (_, index) = round
        .pop()
        .ok_or_else(|| Error::Input("argmax of no values".into()))?;
    Ok(index)
}

/// The values of an argmax of signed BFV values: where they are read from.
pub(crate) struct Sources<'a> {
    /// Each source ciphertext and the coefficients read from it.
    pub groups: Vec<(&'a bfv::Ciphertext, Vec<usize>)>,
    /// For each value in order, (group, position in the group).
    pub order: Vec<(usize, usize)>,
}

impl<'a> Sources<'a> {
    pub fn new() -> Self {
        Sources {
            groups: Vec::new(),
            order: Vec::new(),
        }
    }

    /// Appends the values at `coefficients` of `ct` (the same ciphertext,
    /// e.g. a match's plaintext product, is read once for all its values).
    pub fn push(&mut self, ct: &'a bfv::Ciphertext, coefficients: impl Iterator<Item = usize>) {
        let g = match self.groups.iter().position(|(c, _)| std::ptr::eq(*c, ct)) {
            Some(g) => g,
            None => {
                self.groups.push((ct, Vec::new()));
                self.groups.len() - 1
            }
        };
        for c in coefficients {
            self.order.push((g, self.groups[g].1.len()));
            self.groups[g].1.push(c);
        }
    }
}

/// The index (`index_bits`) of a largest of the signed values of
/// `sources`, each read to within 2^`tolerance_bits`
/// ([`bfv_value_bits`]), compared in a [`tournament`].
pub(crate) fn signed_argmax(
    sources: &Sources<'_>,
    tolerance_bits: u32,
    index_bits: u32,
    key: &TransitionKey,
    sk: &tfhe::ServerKey,
) -> Result<tfhe::RadixCiphertext> {
    let mut read = sources
        .groups
        .iter()
        .map(|(ct, coefficients)| Ok(bfv_value_bits(ct, coefficients, tolerance_bits, key, sk)?))
        .collect::<Result<Vec<_>>>()?;
    let bits: Vec<Vec<EncryptedBit>> = sources
        .order
        .iter()
        .map(|&(g, v)| std::mem::take(&mut read[g][v]))
        .collect();
    tournament(sk, radix_from_bits(sk, &bits)?, index_bits)
}
