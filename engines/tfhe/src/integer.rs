//! Radix integers: an unsigned integer of `bits` bits as little-endian
//! blocks of log2(message_modulus) bits each (2_2 blocks: 2 bits, 4 blocks
//! per u8, 32 per u64). Every operation returns clean blocks (carries
//! propagated, degree < message_modulus), so results compose. Every entry
//! checks its integers with [`check_radix`]: blocks of the key's set and
//! client key, as
//! many as the set's blocks of that width.
//!
//! Carry propagation: on few threads carries ripple block to block, each
//! carry's bootstrap sharing its key switch with the block's message
//! bootstrap; from 8 threads on, a parallel-prefix scan of carry states
//! (log2 blocks rounds of parallel bootstraps) replaces the ripple.
//! Independent work (per-block LUTs, partial products, comparison trees) runs
//! in parallel across blocks.

use std::ops::Range;

use rayon::prelude::*;
use triskel_ring::LweCiphertext;

use crate::error::{Error, Result};
use crate::keys::{ClientKey, Owner, ServerKey};
use crate::params::TfheParameters;
use crate::shortint::{moduli, Ciphertext, LookupTable};

/// An encrypted unsigned integer of `bits` bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RadixCiphertext {
    pub(crate) blocks: Vec<Ciphertext>,
    pub(crate) bits: u32,
}

impl RadixCiphertext {
    /// Width in bits.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The blocks, least significant first.
    pub fn blocks(&self) -> &[Ciphertext] {
        &self.blocks
    }

    /// The name of its parameter set (its blocks'): only keys of that set
    /// take it.
    pub fn set_name(&self) -> &'static str {
        // Every constructor checks the width's block count, at least 1.
        self.blocks[0].owner.set
    }

    /// The identity of its client key (its blocks'): only that key and its
    /// server key take it.
    pub fn key_id(&self) -> triskel_ring::KeyId {
        self.blocks[0].owner.key
    }
}

/// Message bits per block of message modulus `msg`.
pub(crate) fn block_shape(msg: u64) -> Result<u32> {
    if !msg.is_power_of_two() || msg < 2 {
        return Err(Error::InvalidParameters(format!(
            "radix integers need a power-of-two message modulus, not {msg}"
        )));
    }
    Ok(msg.trailing_zeros())
}

/// Refuses an integer of another set or client key than `owner`'s (each
/// block's) or whose block count is not the one `params` gives its width.
pub(crate) fn check_radix(
    params: &TfheParameters,
    owner: Owner,
    ct: &RadixCiphertext,
) -> Result<()> {
    let what = format!("a {}-bit integer", ct.bits);
    for block in &ct.blocks {
        owner.check(&what, block.owner)?;
    }
    let (msg, _, _) = moduli(params.encoding)?;
    let count = check_width(ct.bits, block_shape(msg)?)?;
    if ct.blocks.len() != count {
        return Err(Error::Mismatch(format!(
            "{what} of {} blocks, where {} has {count}",
            ct.blocks.len(),
            params.name
        )));
    }
    Ok(())
}

pub(crate) fn check_width(bits: u32, block_bits: u32) -> Result<usize> {
    if !matches!(bits, 8 | 16 | 32 | 64) || !bits.is_multiple_of(block_bits) {
        return Err(Error::OutOfRange(format!(
            "{bits}-bit integers over {block_bits}-bit blocks"
        )));
    }
    Ok((bits / block_bits) as usize)
}

fn mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl ClientKey {
    /// Encrypts the low `bits` bits of value (bits = 8, 16, 32 or 64).
    pub fn encrypt_radix(&self, value: u64, bits: u32) -> Result<RadixCiphertext> {
        let blocks = self
            .radix_digits(value, bits)?
            .into_iter()
            .map(|d| self.encrypt(d))
            .collect::<Result<_>>()?;
        Ok(RadixCiphertext { blocks, bits })
    }

    /// The block messages of the low `bits` bits of value, least significant
    /// first (bits = 8, 16, 32 or 64).
    pub(crate) fn radix_digits(&self, value: u64, bits: u32) -> Result<Vec<u64>> {
        let (msg, _, _) = moduli(self.params.encoding)?;
        let b = block_shape(msg)?;
        let count = check_width(bits, b)?;
        if value & !mask(bits) != 0 {
            // The value itself is not shown: it is a plaintext.
            return Err(Error::OutOfRange(format!(
                "the value does not fit {bits} bits"
            )));
        }
        Ok((0..count)
            .map(|i| (value >> (i as u32 * b)) & (msg - 1))
            .collect())
    }

    /// Decrypts a radix integer.
    pub fn decrypt_radix(&self, ct: &RadixCiphertext) -> Result<u64> {
        check_radix(&self.params, self.owner(), ct)?;
        let (msg, _, _) = moduli(self.params.encoding)?;
        let b = block_shape(msg)?;
        let mut v = 0u64;
        for (i, block) in ct.blocks.iter().enumerate() {
            v = v.wrapping_add(self.decrypt_with_carry(block)?.wrapping_shl(i as u32 * b));
        }
        Ok(v & mask(ct.bits))
    }

    /// Encrypts a u8.
    pub fn encrypt_u8(&self, v: u8) -> Result<RadixCiphertext> {
        self.encrypt_radix(v as u64, 8)
    }
    /// Encrypts a u16.
    pub fn encrypt_u16(&self, v: u16) -> Result<RadixCiphertext> {
        self.encrypt_radix(v as u64, 16)
    }
    /// Encrypts a u32.
    pub fn encrypt_u32(&self, v: u32) -> Result<RadixCiphertext> {
        self.encrypt_radix(v as u64, 32)
    }
    /// Encrypts a u64.
    pub fn encrypt_u64(&self, v: u64) -> Result<RadixCiphertext> {
        self.encrypt_radix(v, 64)
    }

    /// Decrypts a `bits`-bit integer: another width is an error, never a
    /// truncation or a widening.
    fn decrypt_width(&self, ct: &RadixCiphertext, bits: u32) -> Result<u64> {
        if ct.bits != bits {
            return Err(Error::Mismatch(format!(
                "a {}-bit integer decrypted as u{bits}",
                ct.bits
            )));
        }
        self.decrypt_radix(ct)
    }
    /// Decrypts an 8-bit integer.
    pub fn decrypt_u8(&self, ct: &RadixCiphertext) -> Result<u8> {
        Ok(self.decrypt_width(ct, 8)? as u8)
    }
    /// Decrypts a 16-bit integer.
    pub fn decrypt_u16(&self, ct: &RadixCiphertext) -> Result<u16> {
        Ok(self.decrypt_width(ct, 16)? as u16)
    }
    /// Decrypts a 32-bit integer.
    pub fn decrypt_u32(&self, ct: &RadixCiphertext) -> Result<u32> {
        Ok(self.decrypt_width(ct, 32)? as u32)
    }
    /// Decrypts a 64-bit integer.
    pub fn decrypt_u64(&self, ct: &RadixCiphertext) -> Result<u64> {
        self.decrypt_width(ct, 64)
    }
}

/// Comparison outcome of a block pair, encoded as a block value.
const LESS: u64 = 0;
const EQUAL: u64 = 1;
const GREATER: u64 = 2;

/// Which comparison to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// a == b
    Eq,
    /// a != b
    Ne,
    /// a < b
    Lt,
    /// a <= b
    Le,
    /// a > b
    Gt,
    /// a >= b
    Ge,
}

impl Comparison {
    /// The comparison on plain integers.
    pub fn eval(self, a: u64, b: u64) -> bool {
        match self {
            Comparison::Eq => a == b,
            Comparison::Ne => a != b,
            Comparison::Lt => a < b,
            Comparison::Le => a <= b,
            Comparison::Gt => a > b,
            Comparison::Ge => a >= b,
        }
    }

    fn holds_for(self, order: u64) -> u64 {
        let r = match self {
            Comparison::Eq => order == EQUAL,
            Comparison::Ne => order != EQUAL,
            Comparison::Lt => order == LESS,
            Comparison::Le => order != GREATER,
            Comparison::Gt => order == GREATER,
            Comparison::Ge => order != LESS,
        };
        r as u64
    }
}

/// Bitwise operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bitwise {
    /// a & b
    And,
    /// a | b
    Or,
    /// a ^ b
    Xor,
}

/// A signed value in [-bound, bound] whose sign is the order (less, equal,
/// greater) of a span of blocks, and the squared 2-norm of its noise in
/// bootstrapped outputs.
struct SignedTerm {
    lwe: LweCiphertext,
    bound: u64,
    norm2: u64,
}

/// x_0 - y_0 + msg (x_1 - y_1) for the one or two blocks of x and y.
fn pair_difference(x: &[Ciphertext], y: &[Ciphertext], msg: u64) -> Result<SignedTerm> {
    let mut term = SignedTerm {
        lwe: x[0].lwe.clone(),
        bound: msg - 1,
        norm2: x[0].noise_level.pow(2) + y[0].noise_level.pow(2),
    };
    term.lwe.sub_assign(&y[0].lwe)?;
    if let (Some(xh), Some(yh)) = (x.get(1), y.get(1)) {
        let mut high = xh.lwe.clone();
        high.sub_assign(&yh.lwe)?;
        high.mul_scalar_assign(msg as i64);
        term.lwe.add_assign(&high)?;
        term.bound = msg * msg - 1;
        term.norm2 += msg * msg * (xh.noise_level.pow(2) + yh.noise_level.pow(2));
    }
    Ok(term)
}

/// sum_i w_i t_i with w_0 = 1 and each weight one more than the bound of
/// everything below it: its sign is the most significant nonzero sign.
fn combine(terms: &[SignedTerm]) -> Result<SignedTerm> {
    let mut acc = SignedTerm {
        lwe: terms[0].lwe.clone(),
        bound: terms[0].bound,
        norm2: terms[0].norm2,
    };
    for t in &terms[1..] {
        let weight = acc.bound + 1;
        let mut x = t.lwe.clone();
        x.mul_scalar_assign(weight as i64);
        acc.lwe.add_assign(&x)?;
        acc.bound += weight * t.bound;
        acc.norm2 += weight * weight * t.norm2;
    }
    Ok(acc)
}

impl ServerKey {
    fn msg(&self) -> Result<(u64, u32)> {
        let (msg, _, _) = self.moduli()?;
        Ok((msg, block_shape(msg)?))
    }

    /// Refuses two integers unless both are of this key's set and shape
    /// ([`check_radix`]) and of one width.
    fn same_width(&self, a: &RadixCiphertext, b: &RadixCiphertext) -> Result<()> {
        check_radix(&self.params, self.owner(), a)?;
        check_radix(&self.params, self.owner(), b)?;
        if a.bits != b.bits {
            return Err(Error::Mismatch(format!(
                "{}-bit and {}-bit integers",
                a.bits, b.bits
            )));
        }
        Ok(())
    }

    /// Applies lut_i to block_i for every i, in parallel.
    fn map_blocks(&self, inputs: &[Ciphertext], luts: &[&LookupTable]) -> Result<Vec<Ciphertext>> {
        let refs: Vec<&Ciphertext> = inputs.iter().collect();
        self.apply_lookup_tables(&refs, luts)
    }

    /// Clean blocks (degree < message_modulus, noise level at most 1) from
    /// blocks that may hold carries (degree < p): carries ripple up, message
    /// extractions run in parallel; the carry out of the top block is
    /// dropped (arithmetic mod 2^bits).
    pub(crate) fn propagate(&self, blocks: Vec<Ciphertext>) -> Result<Vec<Ciphertext>> {
        let (msg, _) = self.msg()?;
        // The prefix scan does n log n bootstraps in log n rounds, the ripple
        // about 2n in n rounds: the scan pays from about 8 threads on.
        let single_carries = blocks.iter().all(|b| b.degree <= 2 * msg - 2);
        if single_carries && blocks.len() > 2 && rayon::current_num_threads() >= 8 {
            return self.propagate_prefix(blocks);
        }
        self.propagate_ripple(blocks)
    }

    /// Parallel-prefix carry propagation for blocks of degree <= 2 msg - 2
    /// (every carry is 0 or 1): each block's state (none, generate,
    /// propagate) in one parallel round, a Hillis-Steele scan of the states
    /// (log2 n parallel rounds of bivariate LUTs: the higher state unless it
    /// propagates), then every block plus its incoming carry reduced in one
    /// parallel round. Block 0 is never "propagate", so the scanned states
    /// are the carries themselves (none = 0, generate = 1).
    pub(crate) fn propagate_prefix(&self, blocks: Vec<Ciphertext>) -> Result<Vec<Ciphertext>> {
        const NONE: u64 = 0;
        const GENERATE: u64 = 1;
        const PROPAGATE: u64 = 2;
        let (msg, _) = self.msg()?;
        let n = blocks.len();
        let first = self.lookup_table(|x| if x >= msg { GENERATE } else { NONE })?;
        let state = self.lookup_table(|x| {
            if x >= msg {
                GENERATE
            } else if x == msg - 1 {
                PROPAGATE
            } else {
                NONE
            }
        })?;
        let luts: Vec<&LookupTable> = (0..n)
            .map(|i| if i == 0 { &first } else { &state })
            .collect();
        let mut states = self.map_blocks(&blocks, &luts)?;
        let combine =
            self.bivariate_lookup_table(|hi, lo| if hi == PROPAGATE { lo } else { hi })?;
        let mut step = 1;
        while step < n {
            let packed: Vec<Ciphertext> = (step..n)
                .map(|i| self.pack(&states[i], &states[i - step]))
                .collect::<Result<_>>()?;
            let combined = self.map_blocks(&packed, &vec![&combine; packed.len()])?;
            for (i, c) in (step..n).zip(combined) {
                states[i] = c;
            }
            step *= 2;
        }
        let msg_lut = self.lookup_table(|x| x % msg)?;
        let with_carry: Vec<Ciphertext> = blocks
            .iter()
            .enumerate()
            .map(|(i, b)| match i {
                0 => Ok(b.clone()),
                _ => self.unchecked_add(b, &states[i - 1]),
            })
            .collect::<Result<_>>()?;
        self.map_blocks(&with_carry, &vec![&msg_lut; n])
    }

    /// Carries ripple block to block; each block's message and carry come
    /// from one blind rotation when it holds less than p / 2, else from two
    /// sharing one key switch.
    fn propagate_ripple(&self, mut blocks: Vec<Ciphertext>) -> Result<Vec<Ciphertext>> {
        let (msg, carry_space, _) = self.moduli()?;
        let msg_lut = self.lookup_table(|x| x % msg)?;
        let carry_lut = self.lookup_table(|x| x / msg)?;
        // Blocks below p / 2 (sums of two clean blocks and a carry) get both
        // from one blind rotation.
        let both = self.two_lookup_tables(|x| x % msg, |x| x / msg)?;
        let last = blocks.len().saturating_sub(1);
        let mut to_clean = Vec::with_capacity(blocks.len());
        let mut carry: Option<Ciphertext> = None;
        for (i, block) in blocks.iter_mut().enumerate() {
            if let Some(c) = carry.take() {
                *block = self.unchecked_add(block, &c)?;
            }
            if block.degree < msg && block.noise_level <= 1 {
                to_clean.push(None);
                continue;
            }
            if block.degree >= msg && i < last {
                let block_degree = block.degree;
                let (message, mut c) = if block_degree < msg * carry_space / 2 {
                    self.apply_two_lookup_tables(block, &both)?
                } else {
                    let mut out =
                        self.apply_lookup_tables_shared(block, &[&msg_lut, &carry_lut])?;
                    let c = out.pop().expect("two outputs");
                    (out.pop().expect("two outputs"), c)
                };
                // The carry is at most degree / msg, tighter than the LUT's bound.
                c.degree = block_degree / msg;
                *block = message;
                carry = Some(c);
                to_clean.push(None);
            } else {
                to_clean.push(Some(i));
            }
        }
        let idx: Vec<usize> = to_clean.into_iter().flatten().collect();
        let inputs: Vec<Ciphertext> = idx.iter().map(|&i| blocks[i].clone()).collect();
        let luts = vec![&msg_lut; inputs.len()];
        for (i, c) in idx.into_iter().zip(self.map_blocks(&inputs, &luts)?) {
            blocks[i] = c;
        }
        Ok(blocks)
    }

    /// A `bits`-bit integer from clean blocks (degree below the message
    /// modulus), least significant first: e.g. the outputs of per-block
    /// lookup tables computed by a caller.
    pub fn radix_from_blocks(&self, blocks: Vec<Ciphertext>, bits: u32) -> Result<RadixCiphertext> {
        self.check_blocks(&blocks)?;
        let (msg, _, _) = self.moduli()?;
        let count = check_width(bits, block_shape(msg)?)?;
        if blocks.len() != count {
            return Err(Error::OutOfRange(format!(
                "{} blocks for a {bits}-bit integer of {count}",
                blocks.len()
            )));
        }
        if blocks.iter().any(|b| b.degree >= msg) {
            return Err(Error::Budget(
                "a radix integer needs clean blocks: propagate carries first".into(),
            ));
        }
        Ok(RadixCiphertext { blocks, bits })
    }

    /// a + b mod 2^bits.
    pub fn add(&self, a: &RadixCiphertext, b: &RadixCiphertext) -> Result<RadixCiphertext> {
        self.same_width(a, b)?;
        let sum = a
            .blocks
            .iter()
            .zip(&b.blocks)
            .map(|(x, y)| self.unchecked_add(x, y))
            .collect::<Result<_>>()?;
        Ok(RadixCiphertext {
            blocks: self.propagate(sum)?,
            bits: a.bits,
        })
    }

    /// NOT a per block: (msg - 1) - a_i, no bootstrap (blocks are clean).
    fn complement_blocks(&self, a: &RadixCiphertext) -> Result<Vec<Ciphertext>> {
        let (msg, _) = self.msg()?;
        a.blocks
            .iter()
            .map(|x| self.unchecked_sub_with_offset(&self.trivial(0)?, x, msg - 1))
            .collect()
    }

    /// a - b mod 2^bits, as a + NOT b + 1.
    pub fn sub(&self, a: &RadixCiphertext, b: &RadixCiphertext) -> Result<RadixCiphertext> {
        self.same_width(a, b)?;
        let not_b = self.complement_blocks(b)?;
        let mut sum: Vec<Ciphertext> = a
            .blocks
            .iter()
            .zip(&not_b)
            .map(|(x, y)| self.unchecked_add(x, y))
            .collect::<Result<_>>()?;
        sum[0] = self.unchecked_scalar_add(&sum[0], 1)?;
        Ok(RadixCiphertext {
            blocks: self.propagate(sum)?,
            bits: a.bits,
        })
    }

    /// -a mod 2^bits.
    pub fn neg(&self, a: &RadixCiphertext) -> Result<RadixCiphertext> {
        check_radix(&self.params, self.owner(), a)?;
        let mut blocks = self.complement_blocks(a)?;
        blocks[0] = self.unchecked_scalar_add(&blocks[0], 1)?;
        Ok(RadixCiphertext {
            blocks: self.propagate(blocks)?,
            bits: a.bits,
        })
    }

    /// NOT a (bitwise), free of bootstraps.
    pub fn bitnot(&self, a: &RadixCiphertext) -> Result<RadixCiphertext> {
        check_radix(&self.params, self.owner(), a)?;
        Ok(RadixCiphertext {
            blocks: self.complement_blocks(a)?,
            bits: a.bits,
        })
    }

    fn scalar_digits(&self, c: u64, bits: u32, count: usize) -> Result<Vec<u64>> {
        let (msg, b) = self.msg()?;
        let c = c & mask(bits);
        Ok((0..count)
            .map(|i| (c >> (i as u32 * b)) & (msg - 1))
            .collect())
    }

    /// a + c mod 2^bits.
    pub fn scalar_add(&self, a: &RadixCiphertext, c: u64) -> Result<RadixCiphertext> {
        check_radix(&self.params, self.owner(), a)?;
        let digits = self.scalar_digits(c, a.bits, a.blocks.len())?;
        let sum = a
            .blocks
            .iter()
            .zip(digits)
            .map(|(x, d)| self.unchecked_scalar_add(x, d))
            .collect::<Result<_>>()?;
        Ok(RadixCiphertext {
            blocks: self.propagate(sum)?,
            bits: a.bits,
        })
    }

    /// a - c mod 2^bits.
    pub fn scalar_sub(&self, a: &RadixCiphertext, c: u64) -> Result<RadixCiphertext> {
        self.scalar_add(a, c.wrapping_neg())
    }

    /// Sum of several integers of one width: groups as large as the carry
    /// and noise budgets allow are added without bootstrap, then propagated
    /// (groups in parallel), until one is left.
    fn sum_many(&self, mut terms: Vec<Vec<Ciphertext>>, bits: u32) -> Result<RadixCiphertext> {
        let (msg, carry, max_noise) = self.moduli()?;
        // Room for the group's blocks and the carry coming from below, and
        // noise for the group plus that carry.
        let top = msg * carry - 1;
        let group = (((top - top / msg) / (msg - 1)) as usize)
            .min(max_noise as usize - 1)
            .max(2);
        while terms.len() > 1 {
            let groups: Vec<Vec<Vec<Ciphertext>>> =
                terms.chunks(group).map(|c| c.to_vec()).collect();
            terms = groups
                .into_par_iter()
                .map(|g| {
                    if g.len() == 1 {
                        return Ok(g.into_iter().next().expect("one term"));
                    }
                    let mut acc = g[0].clone();
                    for t in &g[1..] {
                        for (x, y) in acc.iter_mut().zip(t) {
                            *x = self.unchecked_add(x, y)?;
                        }
                    }
                    self.propagate(acc)
                })
                .collect::<Result<_>>()?;
        }
        let blocks = terms
            .pop()
            .ok_or_else(|| Error::OutOfRange("empty sum".into()))?;
        Ok(RadixCiphertext { blocks, bits })
    }

    /// Partial products of a with the digits of the other operand: for each
    /// digit position j, the low and high halves of a_i * digit_j as two
    /// integers shifted by j (and j + 1) blocks.
    fn partial_products(
        &self,
        a: &RadixCiphertext,
        digit_blocks: &[Option<Ciphertext>],
        digit_values: &[u64],
    ) -> Result<Vec<Vec<Ciphertext>>> {
        let (msg, _) = self.msg()?;
        let n = a.blocks.len();
        let low = self.bivariate_lookup_table(|x, y| (x * y) % msg)?;
        let high = self.bivariate_lookup_table(|x, y| (x * y) / msg)?;
        // One job per block pair (i, j): the halves h with i + j + h < n.
        let mut jobs = Vec::new();
        for j in 0..n {
            // The largest value of digit j: its block's degree or the constant.
            let digit_max = digit_blocks[j]
                .as_ref()
                .map_or(digit_values[j], |b| b.degree);
            for i in 0..n - j {
                // Halves that the blocks' degrees bound to 0 need no bootstrap.
                let product_max = a.blocks[i].degree.saturating_mul(digit_max);
                let halves: Vec<usize> = (0..2)
                    .filter(|&h| {
                        let is_zero = product_max == 0 || (h == 1 && product_max < msg);
                        i + j + h < n && !is_zero
                    })
                    .collect();
                if !halves.is_empty() {
                    jobs.push((i, j, halves));
                }
            }
        }
        let results: Vec<Vec<(usize, usize, usize, Ciphertext)>> = jobs
            .into_par_iter()
            .map(|(i, j, halves)| {
                // The halves of one block product share a key switch.
                let outs = match &digit_blocks[j] {
                    Some(b) => {
                        let luts: Vec<&LookupTable> = halves
                            .iter()
                            .map(|&h| if h == 0 { &low } else { &high })
                            .collect();
                        self.apply_lookup_tables_shared(&self.pack(&a.blocks[i], b)?, &luts)?
                    }
                    // A clean block times 1 is itself.
                    None if halves == [0] && digit_values[j] == 1 && a.blocks[i].degree < msg => {
                        vec![a.blocks[i].clone()]
                    }
                    None => {
                        let v = digit_values[j];
                        let luts = halves
                            .iter()
                            .map(|&h| {
                                self.lookup_table(|x| {
                                    if h == 0 {
                                        (x * v) % msg
                                    } else {
                                        (x * v) / msg
                                    }
                                })
                            })
                            .collect::<Result<Vec<_>>>()?;
                        let luts: Vec<&LookupTable> = luts.iter().collect();
                        self.apply_lookup_tables_shared(&a.blocks[i], &luts)?
                    }
                };
                Ok(halves
                    .into_iter()
                    .zip(outs)
                    .map(|(h, c)| (i, j, h, c))
                    .collect())
            })
            .collect::<Result<_>>()?;
        let results: Vec<_> = results.into_iter().flatten().collect();
        let mut terms: Vec<Vec<Ciphertext>> = Vec::new();
        for j in 0..n {
            for h in 0..2 {
                let mut t: Vec<Ciphertext> =
                    (0..n).map(|_| self.trivial(0)).collect::<Result<_>>()?;
                let mut any = false;
                for (i, jj, hh, c) in &results {
                    if *jj == j && *hh == h {
                        t[i + j + h] = c.clone();
                        any = true;
                    }
                }
                if any {
                    terms.push(t);
                }
            }
        }
        Ok(terms)
    }

    /// a * b mod 2^bits (schoolbook on blocks: bivariate LUTs for the halves
    /// of each block product, then a carry-save style sum). A u64 of 2_2
    /// blocks: 1024 block-product bootstraps (496 pairs share a key switch)
    /// and 667 in the sum, within about 1% of the carry-save bound (two
    /// bootstraps, a group's message and carry, remove at most three blocks);
    /// summing column by column in groups of five would take 690.
    pub fn mul(&self, a: &RadixCiphertext, b: &RadixCiphertext) -> Result<RadixCiphertext> {
        self.same_width(a, b)?;
        let digits: Vec<Option<Ciphertext>> = b.blocks.iter().cloned().map(Some).collect();
        let terms = self.partial_products(a, &digits, &vec![0; b.blocks.len()])?;
        self.sum_many(terms, a.bits)
    }

    /// a * c mod 2^bits for a constant c.
    pub fn scalar_mul(&self, a: &RadixCiphertext, c: u64) -> Result<RadixCiphertext> {
        check_radix(&self.params, self.owner(), a)?;
        let n = a.blocks.len();
        let values = self.scalar_digits(c, a.bits, n)?;
        let digits = vec![None; n];
        let mut terms = self.partial_products(a, &digits, &values)?;
        if terms.is_empty() {
            terms.push((0..n).map(|_| self.trivial(0)).collect::<Result<_>>()?);
        }
        self.sum_many(terms, a.bits)
    }

    /// Bitwise and/or/xor: one bivariate LUT per block, in parallel.
    pub fn bitwise(
        &self,
        op: Bitwise,
        a: &RadixCiphertext,
        b: &RadixCiphertext,
    ) -> Result<RadixCiphertext> {
        self.same_width(a, b)?;
        let lut = self.bivariate_lookup_table(|x, y| match op {
            Bitwise::And => x & y,
            Bitwise::Or => x | y,
            Bitwise::Xor => x ^ y,
        })?;
        let packed: Vec<Ciphertext> = a
            .blocks
            .iter()
            .zip(&b.blocks)
            .map(|(x, y)| self.pack(x, y))
            .collect::<Result<_>>()?;
        Ok(RadixCiphertext {
            blocks: self.map_blocks(&packed, &vec![&lut; packed.len()])?,
            bits: a.bits,
        })
    }

    /// The comparison of a and b as a block holding 0 or 1. Blocks are
    /// packed two by two and subtracted without a bootstrap: each difference
    /// is a value in (-msg^2, msg^2) (negative ones in the padding half of
    /// the torus), bootstrapped to its sign in {-1, 0, 1}. Signs of
    /// consecutive spans combine by weights 1, 2, 4, ... (the most
    /// significant nonzero sign wins) into as few bootstraps per round as the
    /// block space and the failure bound allow; the last bootstrap applies
    /// the predicate. A u8 of 2_2 blocks: 3 bootstraps in 2 rounds.
    pub fn compare(
        &self,
        op: Comparison,
        a: &RadixCiphertext,
        b: &RadixCiphertext,
    ) -> Result<Ciphertext> {
        self.same_width(a, b)?;
        let (msg, carry, _) = self.moduli()?;
        if carry < msg {
            return Err(Error::InvalidParameters(
                "comparisons need carry_modulus >= message_modulus".into(),
            ));
        }
        if a.blocks.iter().chain(&b.blocks).any(|c| c.degree >= msg) {
            return Err(Error::Budget(
                "comparisons need clean blocks: propagate carries first".into(),
            ));
        }
        let p = msg * carry;
        // A difference of two packed pairs has squared noise norm
        // 2 (msg^2 + 1) level^2; noisier blocks are refreshed first.
        let level = a.blocks.iter().chain(&b.blocks).map(|c| c.noise_level);
        let level = level.max().unwrap_or(0);
        let (a, b) = if self.fits_failure_bound(2 * (msg * msg + 1) * level * level) {
            (a.blocks.clone(), b.blocks.clone())
        } else {
            let refresh = self.lookup_table(|x| x % msg)?;
            let both: Vec<Ciphertext> = a.blocks.iter().chain(&b.blocks).cloned().collect();
            let mut both = self.map_blocks(&both, &vec![&refresh; both.len()])?;
            let b = both.split_off(a.blocks.len());
            (both, b)
        };
        let mut terms = a
            .chunks(2)
            .zip(b.chunks(2))
            .map(|(x, y)| pair_difference(x, y, msg))
            .collect::<Result<Vec<_>>>()?;
        let sign = self.signed_test_vector(p - 1, i64::signum)?;
        loop {
            let last = self.group_spans(&terms, p / 2 - 1);
            if let [only] = &last[..] {
                let value = combine(&terms[only.clone()])?;
                if value.bound < p / 2 {
                    let predicate = self.signed_test_vector(p / 2 - 1, |x| {
                        op.holds_for(match x.signum() {
                            -1 => LESS,
                            0 => EQUAL,
                            _ => GREATER,
                        }) as i64
                    })?;
                    return Ok(self.block(self.bootstrap(&value.lwe, &predicate)?, 1, 1));
                }
            }
            let spans = self.group_spans(&terms, p - 1);
            let values: Vec<SignedTerm> = spans
                .iter()
                .map(|s| combine(&terms[s.clone()]))
                .collect::<Result<_>>()?;
            // A lone sign needs no bootstrap; everything else becomes one.
            let todo: Vec<&SignedTerm> = values.iter().filter(|v| v.bound > 1).collect();
            if todo.is_empty() {
                return Err(Error::Budget(
                    "signs do not combine within the failure bound".into(),
                ));
            }
            let lwes: Vec<&LweCiphertext> = todo.iter().map(|v| &v.lwe).collect();
            let mut signs = self
                .bootstrap_many(&lwes, &vec![&sign; lwes.len()])?
                .into_iter();
            terms = values
                .iter()
                .map(|v| SignedTerm {
                    lwe: if v.bound > 1 {
                        signs.next().expect("one sign per bootstrapped span")
                    } else {
                        v.lwe.clone()
                    },
                    bound: 1,
                    norm2: 1,
                })
                .collect();
        }
    }

    /// Whether a bootstrap of an input with this squared noise norm (in
    /// bootstrapped outputs) stays within the set's failure bound.
    fn fits_failure_bound(&self, norm2: u64) -> bool {
        let analysis = self.params.noise_for_input(norm2 as f64);
        analysis.log2_failure <= self.params.max_log2_failure
    }

    /// Consecutive spans of terms (least significant first), each as long as
    /// its combination stays within [-limit, limit] and the failure bound; a
    /// term that alone exceeds them is a span of its own.
    fn group_spans(&self, terms: &[SignedTerm], limit: u64) -> Vec<Range<usize>> {
        let mut spans: Vec<Range<usize>> = Vec::new();
        let (mut bound, mut norm2) = (0u64, 0u64);
        for (i, t) in terms.iter().enumerate() {
            let weight = bound + 1;
            let wider = (
                bound.saturating_add(weight.saturating_mul(t.bound)),
                norm2.saturating_add(weight.saturating_mul(weight).saturating_mul(t.norm2)),
            );
            match spans.last_mut() {
                Some(span) if wider.0 <= limit && self.fits_failure_bound(wider.1) => {
                    span.end = i + 1;
                    (bound, norm2) = wider;
                }
                _ => {
                    spans.push(i..i + 1);
                    (bound, norm2) = (t.bound, t.norm2);
                }
            }
        }
        spans
    }
    /// if cond (a block holding 0 or 1) then a else b, per block in parallel.
    pub fn select(
        &self,
        cond: &Ciphertext,
        a: &RadixCiphertext,
        b: &RadixCiphertext,
    ) -> Result<RadixCiphertext> {
        self.same_width(a, b)?;
        self.check_blocks([cond])?;
        if cond.degree > 1 {
            return Err(Error::OutOfRange("condition must be a 0/1 block".into()));
        }
        let keep_if = self.bivariate_lookup_table(|c, x| if c == 1 { x } else { 0 })?;
        let keep_unless = self.bivariate_lookup_table(|c, x| if c == 1 { 0 } else { x })?;
        let mut packed = Vec::new();
        let mut luts = Vec::new();
        for (x, y) in a.blocks.iter().zip(&b.blocks) {
            packed.push(self.pack(cond, x)?);
            luts.push(&keep_if);
            packed.push(self.pack(cond, y)?);
            luts.push(&keep_unless);
        }
        let halves = self.map_blocks(&packed, &luts)?;
        let blocks = halves
            .chunks(2)
            .map(|h| {
                // Exactly one half is an encryption of 0: the sum is clean.
                let mut s = self.unchecked_add(&h[0], &h[1])?;
                s.degree = h[0].degree.max(h[1].degree);
                Ok(s)
            })
            .collect::<Result<_>>()?;
        Ok(RadixCiphertext {
            blocks,
            bits: a.bits,
        })
    }

    /// min(a, b).
    pub fn min(&self, a: &RadixCiphertext, b: &RadixCiphertext) -> Result<RadixCiphertext> {
        let lt = self.compare(Comparison::Lt, a, b)?;
        self.select(&lt, a, b)
    }

    /// max(a, b).
    pub fn max(&self, a: &RadixCiphertext, b: &RadixCiphertext) -> Result<RadixCiphertext> {
        let gt = self.compare(Comparison::Gt, a, b)?;
        self.select(&gt, a, b)
    }

    /// Shift or rotation by a constant number of bits: whole blocks move for
    /// free; the remaining bits need one bivariate LUT per block (the block
    /// and its lower neighbour), in parallel.
    fn shift(
        &self,
        a: &RadixCiphertext,
        amount: u32,
        left: bool,
        rotate: bool,
    ) -> Result<RadixCiphertext> {
        check_radix(&self.params, self.owner(), a)?;
        let (msg, b) = self.msg()?;
        let n = a.blocks.len();
        let amount = amount % a.bits;
        if amount == 0 {
            return Ok(a.clone());
        }
        // A right shift by s is a left rotation by bits - s with the wrapped part zeroed.
        let (rot, keep_low, keep_high) = if left {
            (amount, amount, 0)
        } else {
            (a.bits - amount, 0, amount)
        };
        let (block_rot, bit_rot) = ((rot / b) as usize, rot % b);
        // Rotate blocks left by block_rot, then bits by bit_rot across blocks.
        let moved: Vec<Ciphertext> = (0..n)
            .map(|i| a.blocks[(i + n - block_rot) % n].clone())
            .collect();
        let blocks = if bit_rot == 0 {
            moved
        } else {
            let lut = self.bivariate_lookup_table(|hi, lo| {
                ((hi << bit_rot) | (lo >> (b - bit_rot))) & (msg - 1)
            })?;
            let packed: Vec<Ciphertext> = (0..n)
                .map(|i| self.pack(&moved[i], &moved[(i + n - 1) % n]))
                .collect::<Result<_>>()?;
            self.map_blocks(&packed, &vec![&lut; n])?
        };
        let mut out = RadixCiphertext {
            blocks,
            bits: a.bits,
        };
        if !rotate {
            // Zero the bits that wrapped around: the low `keep_low` bits for a
            // left shift, the high `keep_high` for a right shift.
            let zero_mask = if left {
                mask(keep_low)
            } else {
                mask(keep_high) << (a.bits - keep_high)
            };
            out = self.scalar_bitand(&out, !zero_mask & mask(a.bits))?;
        }
        Ok(out)
    }

    /// a & c for a constant c: blocks whose digit is 0 or all-ones need no bootstrap.
    fn scalar_bitand(&self, a: &RadixCiphertext, c: u64) -> Result<RadixCiphertext> {
        let (msg, _) = self.msg()?;
        let digits = self.scalar_digits(c, a.bits, a.blocks.len())?;
        let mut blocks = a.blocks.clone();
        let mut idx = Vec::new();
        let mut luts = Vec::new();
        for (i, &d) in digits.iter().enumerate() {
            if d == 0 {
                blocks[i] = self.trivial(0)?;
            } else if d != msg - 1 {
                idx.push(i);
                luts.push(self.lookup_table(move |x| x & d)?);
            }
        }
        let inputs: Vec<Ciphertext> = idx.iter().map(|&i| blocks[i].clone()).collect();
        let lut_refs: Vec<&LookupTable> = luts.iter().collect();
        for (i, c) in idx.into_iter().zip(self.map_blocks(&inputs, &lut_refs)?) {
            blocks[i] = c;
        }
        Ok(RadixCiphertext {
            blocks,
            bits: a.bits,
        })
    }

    /// a << (amount mod bits), mod 2^bits.
    pub fn shl(&self, a: &RadixCiphertext, amount: u32) -> Result<RadixCiphertext> {
        self.shift(a, amount, true, false)
    }

    /// a >> (amount mod bits).
    pub fn shr(&self, a: &RadixCiphertext, amount: u32) -> Result<RadixCiphertext> {
        self.shift(a, amount, false, false)
    }

    /// a rotated left by amount bits.
    pub fn rotate_left(&self, a: &RadixCiphertext, amount: u32) -> Result<RadixCiphertext> {
        self.shift(a, amount, true, true)
    }

    /// a rotated right by amount bits.
    pub fn rotate_right(&self, a: &RadixCiphertext, amount: u32) -> Result<RadixCiphertext> {
        self.shift(a, amount, false, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An integer whose block count is not its set's for its width is
    /// refused with both counts (the public constructors never make one).
    #[test]
    fn block_counts_are_checked_against_the_set() {
        let (ck, sk) = crate::keys::test_keys_2_2();
        let a = ck.encrypt_u8(7).unwrap();
        let mut long = a.clone();
        long.blocks.extend(a.blocks.iter().cloned());
        let want = Error::Mismatch(
            "a 8-bit integer of 8 blocks, where TFHE_MESSAGE_2_CARRY_2_2M128_V2 has 4".into(),
        );
        assert_eq!(sk.add(&a, &long).unwrap_err(), want);
        assert_eq!(sk.shl(&long, 2).unwrap_err(), want);
        assert_eq!(ck.decrypt_u8(&long).unwrap_err(), want);
        let mut wide = a.clone();
        wide.bits = 16;
        assert_eq!(
            sk.add(&a, &wide).unwrap_err(),
            Error::Mismatch(
                "a 16-bit integer of 4 blocks, where TFHE_MESSAGE_2_CARRY_2_2M128_V2 has 8".into()
            )
        );
    }

    /// The prefix scan gives the ripple's result, on carries through every
    /// block and on a random sum.
    #[test]
    fn prefix_and_ripple_carries_agree() {
        let (ck, sk) = crate::keys::test_keys_2_2();
        for (x, y) in [(0xffffu64, 1u64), (0x7fff, 0x7fff), (0x1234, 0xedcc)] {
            let (a, b) = (
                ck.encrypt_radix(x, 16).unwrap(),
                ck.encrypt_radix(y, 16).unwrap(),
            );
            let sum: Vec<Ciphertext> = a
                .blocks
                .iter()
                .zip(&b.blocks)
                .map(|(p, q)| sk.unchecked_add(p, q).unwrap())
                .collect();
            let want = (x + y) & 0xffff;
            for blocks in [
                sk.propagate_prefix(sum.clone()).unwrap(),
                sk.propagate_ripple(sum).unwrap(),
            ] {
                assert!(blocks.iter().all(|b| b.degree() < 4));
                let ct = RadixCiphertext { blocks, bits: 16 };
                assert_eq!(ck.decrypt_radix(&ct).unwrap(), want, "{x} + {y}");
            }
        }
    }
}
