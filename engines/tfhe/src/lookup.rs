//! Lookup tables on encrypted values: any function of a u8, and a function
//! of a small signed integer given by its threshold decisions (the bits
//! [x >= c], as the router's BFV -> TFHE transition produces them).
//!
//! # u8 in TFHE (blocks of 2 bits, the 2_2 set)
//!
//! x = 16 h + l, with l = pack(b1, b0) and h = 4 b3 + b2 (nibbles of x).
//! 1. Every output block j of table[16 h + l], for each of the 16 values of
//!    h, is a function of l alone: 64 lookup tables on l, which share one key
//!    switch (blind rotations in parallel).
//! 2. b2 selects among the 4 candidates of each (b3, j): pack(b2, v) read by
//!    "v if b2 = c else 0" for c = 0..3, the four terms summed (one of them
//!    is v) and cleaned by one bootstrap: 64 + 16 bootstraps.
//! 3. b3 selects the same way: 16 + 4 bootstraps.
//!
//! In all [`U8_LOOKUP_BOOTSTRAPS`] = 164 bootstraps for any table.
//!
//! # Small signed integers from BFV
//!
//! For x in [-B, B]: table(x) = table(-B) + sum over c in (-B, B] of
//! [x >= c] (table(c) - table(c - 1)) mod 256, each [x >= c] one decision of
//! the transition, each term a u8 whose
//! 2-bit blocks are the bit times the difference's digits (no bootstrap),
//! added by radix additions.

use crate as tfhe;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Bootstraps of one u8 lookup ([module documentation](self)).
pub const U8_LOOKUP_BOOTSTRAPS: usize = 64 + 64 + 16 + 16 + 4;

fn unsupported<T>(server: &tfhe::ServerKey) -> Result<T> {
    Err(Error::InvalidParameters(format!(
        "lookup tables on u8 need 2-bit message blocks with a 2-bit carry, not the set {}",
        server.parameters().name
    )))
}

/// Checks that the server's set has 2-bit blocks and room to pack two.
fn check_set(server: &tfhe::ServerKey) -> Result<()> {
    match server.parameters().encoding {
        tfhe::Encoding::Integer {
            message_modulus: 4,
            carry_modulus: 4,
            ..
        } => Ok(()),
        _ => unsupported(server),
    }
}

/// `sum_c select_c(pack(selector, values[c]))` cleaned: the value of
/// `values[selector]` (a 2-bit block), from `selects` = the four tables
/// "v if s = c else 0".
fn choose(
    server: &tfhe::ServerKey,
    selector: &tfhe::Ciphertext,
    candidates: &[Vec<tfhe::Ciphertext>],
    selects: &[tfhe::LookupTable],
    clean: &tfhe::LookupTable,
) -> Result<Vec<tfhe::Ciphertext>> {
    // candidates[group][c]: for every group, one of four by the selector.
    let packed = candidates
        .iter()
        .flatten()
        .map(|v| server.pack(selector, v))
        .collect::<Result<Vec<_>>>()?;
    let luts: Vec<&tfhe::LookupTable> = (0..packed.len()).map(|k| &selects[k % 4]).collect();
    let terms = server.apply_lookup_tables(&packed.iter().collect::<Vec<_>>(), &luts)?;
    let sums = terms
        .chunks(4)
        .map(|four| {
            four[1..]
                .iter()
                .try_fold(four[0].clone(), |acc, t| server.unchecked_add(&acc, t))
        })
        .collect::<Result<Vec<_>>>()?;
    let cleans: Vec<&tfhe::LookupTable> = vec![clean; sums.len()];
    server.apply_lookup_tables(&sums.iter().collect::<Vec<_>>(), &cleans)
}

/// `table[x]` for an encrypted u8 x (clean radix blocks), as a u8.
pub fn lookup_u8(
    server: &tfhe::ServerKey,
    x: &tfhe::RadixCiphertext,
    table: &[u8],
) -> Result<tfhe::RadixCiphertext> {
    check_set(server)?;
    if x.bits() != 8 || table.len() != 256 {
        return Err(Error::Mismatch(format!(
            "lookup: a table of 256 entries on a u8, not {} entries on u{}",
            table.len(),
            x.bits()
        )));
    }
    let b = x.blocks();
    let low = server.pack(&b[1], &b[0])?;
    // Step 1: block j of table[16 h + l] for every h, as 64 tables on l.
    let tables = (0..64u64)
        .map(|k| {
            let (h, j) = (k / 4, k % 4);
            server.lookup_table(move |l| {
                let entry = table[(16 * h + (l % 16)) as usize] as u64;
                (entry >> (2 * j)) & 3
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let by_high = server.apply_lookup_tables_shared(&low, &tables.iter().collect::<Vec<_>>())?;
    let selects = (0..4u64)
        .map(|c| server.bivariate_lookup_table(move |s, v| if s == c { v } else { 0 }))
        .collect::<Result<Vec<_>>>()?;
    let clean = server.lookup_table(|v| v % 4)?;
    // Step 2: for each (b3 = a, j), choose among h = 4 a + c by b2 = c.
    let level2: Vec<Vec<tfhe::Ciphertext>> = (0..16usize)
        .map(|k| {
            let (a, j) = (k / 4, k % 4);
            (0..4)
                .map(|c| by_high[(4 * a + c) * 4 + j].clone())
                .collect()
        })
        .collect();
    let by_b3 = choose(server, &b[2], &level2, &selects, &clean)?;
    // Step 3: for each j, choose among a by b3.
    let level3: Vec<Vec<tfhe::Ciphertext>> = (0..4usize)
        .map(|j| (0..4).map(|a| by_b3[a * 4 + j].clone()).collect())
        .collect();
    let blocks = choose(server, &b[3], &level3, &selects, &clean)?;
    server.radix_from_blocks(blocks, 8)
}

/// `table[x + B]` for x in [-B, B] from its decisions: `first` is
/// table\[0\] (x = -B) and `at_least[k]` the encrypted bit \[x >= -B + 1 + k\]
/// for k in 0..2B.
pub fn lookup_from_decisions(
    server: &tfhe::ServerKey,
    at_least: &[tfhe::Ciphertext],
    table: &[u8],
) -> Result<tfhe::RadixCiphertext> {
    check_set(server)?;
    if table.len() != at_least.len() + 1 {
        return Err(Error::Mismatch(format!(
            "lookup: {} decisions for a table of {} entries",
            at_least.len(),
            table.len()
        )));
    }
    let digits = |v: u8| (0..4).map(move |j| (v as u64 >> (2 * j)) & 3);
    let constant = digits(table[0])
        .map(|d| server.trivial(d))
        .collect::<Result<Vec<_>>>()?;
    let terms = at_least
        .par_iter()
        .enumerate()
        .filter(|(k, _)| table[k + 1] != table[*k])
        .map(|(k, bit)| {
            let step = table[k + 1].wrapping_sub(table[k]);
            let blocks = digits(step)
                .map(|d| server.unchecked_scalar_mul(bit, d))
                .collect::<Result<Vec<_>>>()?;
            server.radix_from_blocks(blocks, 8)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut acc = server.radix_from_blocks(constant, 8)?;
    for term in &terms {
        acc = server.add(&acc, term)?;
    }
    Ok(acc)
}
