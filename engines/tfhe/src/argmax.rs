//! Argmax in TFHE: a tournament of comparisons over radix integers, and
//! radix integers assembled from encrypted bits (as the router's BFV -> TFHE
//! transition reads a signed BFV value bit by bit).
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

use crate as tfhe;
use crate::error::{Error, Result};

/// The narrowest radix width (8..64 bits) that holds `bits` bits.
pub fn radix_width(bits: u32) -> u32 {
    bits.next_power_of_two().clamp(8, 64)
}

/// (message bits per block, message modulus) of the server's set.
fn block_shape(sk: &tfhe::ServerKey) -> Result<(u32, u64)> {
    match sk.parameters().encoding {
        tfhe::Encoding::Integer {
            message_modulus, ..
        } if message_modulus.is_power_of_two() && message_modulus >= 2 => {
            Ok((message_modulus.trailing_zeros(), message_modulus))
        }
        _ => Err(Error::InvalidParameters(
            "an argmax needs an integer TFHE set with a power-of-two message modulus".into(),
        )),
    }
}

/// The constant `value` as a noiseless radix integer of `bits` bits.
fn trivial_radix(sk: &tfhe::ServerKey, value: u64, bits: u32) -> Result<tfhe::RadixCiphertext> {
    let (b, msg) = block_shape(sk)?;
    let blocks = (0..bits / b)
        .map(|j| sk.trivial((value >> (j * b)) & (msg - 1)))
        .collect::<Result<_>>()?;
    sk.radix_from_blocks(blocks, bits)
}

/// Radix integers from the encrypted bits (each 0 or 1, fresh from a
/// bootstrap) of each value, least significant first ([module
/// documentation](self)).
pub fn radix_from_bits(
    sk: &tfhe::ServerKey,
    values: &[Vec<tfhe::Ciphertext>],
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
            sk.radix_from_blocks(blocks, width)
        })
        .collect()
}

/// The index (a radix integer of `index_bits`) of the first largest of
/// `values`: a tree of rounds, each pair's later value winning only when
/// greater (so the first largest wins, as the left half of every pair
/// holds the lower indices), the pairs of a round in parallel. The last
/// round selects the index only.
pub fn tournament(
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
        .ok_or_else(|| Error::OutOfRange("argmax of no values".into()))?;
    Ok(index)
}
