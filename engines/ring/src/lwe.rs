//! LWE ciphertexts and keys over the native torus Z_{2^64}, shared by the TFHE
//! engine and the router's engine transitions.
//!
//! - [`LweSecretKey`]: small integer coefficients (binary for TFHE, ternary
//!   for a key extracted from a BFV/CKKS secret), zeroized on drop.
//! - [`LweCiphertext`]: (a, b) with phase b - <a, s> mod 2^64.
//! - [`CompressedLweCiphertext`]: a fresh encryption kept as the public seed
//!   and stream of its mask plus its body ([`LweSecretKey::encrypt_compressed`]).
//! - [`LweCiphertext::sample_extract`]: one coefficient of an RLWE/GLWE
//!   ciphertext modulo a prime q as an LWE ciphertext, scaled to 2^64.
//! - [`LweCiphertext::switch_modulus`]: rounding to a smaller power of two (the
//!   2N of a blind rotation), optionally correcting the known mean of the
//!   rounding error for binary keys.
//! - [`LweKeySwitchKey`]: key switching with a signed, rounded gadget
//!   decomposition; masks are regenerated from a seed.
//!
//! Arithmetic modulo 2^64 is plain wrapping u64 arithmetic: no reduction in
//! the key-switching loop.
//!
//! Every key and ciphertext carries the [`KeyId`] of the secret it is under
//! (a key extracted from a BFV/CKKS secret or a TFHE GLWE key carries that
//! key's identity), and a key-switching key the identities of both its keys.
//! Every operation that meets a ciphertext with a key, or two ciphertexts,
//! refuses another key's value with [`Error::KeyMismatch`] before any work;
//! key switching produces a value under the output key's identity. Written
//! bodies hold no identity: the container that writes them holds it once and
//! passes it back when reading.

use zeroize::{Zeroize, Zeroizing};

use crate::error::{invalid, Error, Result};
use crate::key_id::KeyId;
use crate::par::{join, several_threads};
use crate::poly::Poly;
use crate::sampling::{sample_wide_gaussian, Prng, Seed};
use crate::serialize::Reader;

/// 2^64 as a float, the scale of relative (torus) noise deviations.
const TWO_POW_64: f64 = 18446744073709551616.0;

/// An LWE secret key: small signed integers, stored as their two's complement
/// (so that wrapping arithmetic computes <a, s> mod 2^64). Never printed.
pub struct LweSecretKey {
    s: Zeroizing<Vec<u64>>,
    id: KeyId,
}

impl std::fmt::Debug for LweSecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LweSecretKey {{ dimension: {}, .. }}", self.s.len())
    }
}

impl Clone for LweSecretKey {
    fn clone(&self) -> Self {
        LweSecretKey {
            s: Zeroizing::new(self.s.to_vec()),
            id: self.id,
        }
    }
}

impl LweSecretKey {
    /// A key of `n` coefficients uniform in {0, 1}, of identity `id` (the
    /// key it belongs to: drawn with [`KeyId::sample`] for a key of its own).
    pub fn binary(n: usize, id: KeyId, rng: &mut Prng) -> LweSecretKey {
        let mut s = Zeroizing::new(vec![0u64; n]);
        let mut word = 0u64;
        for (i, v) in s.iter_mut().enumerate() {
            if i % 64 == 0 {
                word = rng.next_u64();
            }
            *v = word & 1;
            word >>= 1;
        }
        word.zeroize();
        LweSecretKey { s, id }
    }

    /// A key with the given small coefficients, e.g. the concatenated
    /// coefficients of the polynomials of a GLWE or RLWE secret key (the key
    /// of [`LweCiphertext::sample_extract`]'s output), of identity `id`
    /// (that key's).
    pub fn from_coefficients(coeffs: &[i64], id: KeyId) -> LweSecretKey {
        LweSecretKey {
            s: Zeroizing::new(coeffs.iter().map(|&c| c as u64).collect()),
            id,
        }
    }

    /// The identity of the key, carried by its ciphertexts.
    pub fn id(&self) -> KeyId {
        self.id
    }

    /// Number of coefficients.
    pub fn dimension(&self) -> usize {
        self.s.len()
    }

    /// Coefficients in two's complement (secret: callers must not log them).
    pub fn coefficients(&self) -> &[u64] {
        &self.s
    }

    /// A fresh encryption of the torus value `m` (a u64 read as m / 2^64) with
    /// Gaussian noise of relative deviation `sigma` (deviation sigma * 2^64).
    pub fn encrypt(&self, m: u64, sigma: f64, rng: &mut Prng) -> Result<LweCiphertext> {
        let a: Vec<u64> = (0..self.s.len()).map(|_| rng.next_u64()).collect();
        self.encrypt_with_mask(a, m, sigma, rng)
    }

    /// A fresh encryption of `m` like [`LweSecretKey::encrypt`] whose mask is
    /// stream `stream` of the public `seed` (see [`CompressedLweCiphertext`]).
    /// The noise comes from `noise`, a secret generator (the OS CSPRNG), never
    /// from the seed: whoever holds the seed regenerates the mask, not the body.
    ///
    /// **Never use one (seed, stream) twice under one key**: the two
    /// ciphertexts would share their mask, and the difference of their bodies
    /// would be m1 - m2 + e1 - e2, the messages' difference in the clear up to
    /// noise. Take a fresh seed from the OS for each value and number its
    /// pieces by stream, as `triskel-tfhe` does.
    pub fn encrypt_compressed(
        &self,
        m: u64,
        sigma: f64,
        seed: Seed,
        stream: u64,
        noise: &mut Prng,
    ) -> Result<CompressedLweCiphertext> {
        let ct =
            self.encrypt_with_mask(seeded_mask(seed, stream, self.s.len()), m, sigma, noise)?;
        Ok(CompressedLweCiphertext {
            seed,
            stream,
            dimension: ct.a.len(),
            b: ct.b,
            key_id: self.id,
        })
    }

    /// The one encryption routine: b = <a, s> + m + e with e drawn from `noise`.
    fn encrypt_with_mask(
        &self,
        a: Vec<u64>,
        m: u64,
        sigma: f64,
        noise: &mut Prng,
    ) -> Result<LweCiphertext> {
        let e = sample_wide_gaussian(1, sigma * TWO_POW_64, noise)?;
        let b = dot(&a, &self.s).wrapping_add(m).wrapping_add(e[0] as u64);
        Ok(LweCiphertext {
            a,
            b,
            key_id: self.id,
        })
    }

    /// The phase b - <a, s> mod 2^64: message plus noise (a ciphertext of
    /// another key is refused).
    pub fn phase(&self, ct: &LweCiphertext) -> Result<u64> {
        self.id.check("an LWE ciphertext to decrypt", ct.key_id)?;
        if ct.a.len() != self.s.len() {
            return Err(dimension_mismatch(self.s.len(), ct.a.len()));
        }
        Ok(ct.b.wrapping_sub(dot(&ct.a, &self.s)))
    }
}

fn dot(a: &[u64], s: &[u64]) -> u64 {
    a.iter()
        .zip(s)
        .fold(0u64, |acc, (&x, &y)| acc.wrapping_add(x.wrapping_mul(y)))
}

fn dimension_mismatch(expected: usize, got: usize) -> Error {
    Error::InvalidParameter(format!("LWE dimension {got} where {expected} is expected"))
}

/// An LWE ciphertext modulo 2^64: mask `a` and body `b`, phase b - <a, s>,
/// under the key of identity `key_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LweCiphertext {
    /// The mask, one word per key coefficient.
    pub a: Vec<u64>,
    /// The body.
    pub b: u64,
    /// The identity of the key it is under.
    pub key_id: KeyId,
}

/// The mask of a seed-compressed LWE ciphertext: `n` words of stream `stream`
/// under `seed` (ChaCha20: one independent stream per block of an integer).
fn seeded_mask(seed: Seed, stream: u64, n: usize) -> Vec<u64> {
    let mut rng = Prng::from_seed_stream(seed, stream);
    (0..n).map(|_| rng.next_u64()).collect()
}

/// A fresh LWE ciphertext with its mask kept as the public seed and stream
/// it expands from, plus the body: 48 bytes of state whatever the dimension
/// (an [`LweCiphertext`] of dimension n holds 8 (n + 1)).
/// [`CompressedLweCiphertext::decompress`] regenerates the mask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressedLweCiphertext {
    /// The public seed of the mask.
    pub seed: Seed,
    /// The ChaCha20 stream of the mask under `seed`.
    pub stream: u64,
    /// Number of mask words.
    pub dimension: usize,
    /// The body.
    pub b: u64,
    /// The identity of the key it is under.
    pub key_id: KeyId,
}

impl CompressedLweCiphertext {
    /// The full ciphertext: the mask regenerated from the seed, the body.
    pub fn decompress(&self) -> LweCiphertext {
        LweCiphertext {
            a: seeded_mask(self.seed, self.stream, self.dimension),
            b: self.b,
            key_id: self.key_id,
        }
    }
}

/// An LWE ciphertext rounded to modulus 2^log_modulus (values in [0, 2^log_modulus)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchedLwe {
    /// log2 of the modulus.
    pub log_modulus: u32,
    /// The mask.
    pub a: Vec<u64>,
    /// The body.
    pub b: u64,
}

impl LweCiphertext {
    /// The noiseless encryption (0, m) of torus value m, of dimension n,
    /// for the key of identity `key_id` (it decrypts under any key, but
    /// combines only with that key's values).
    pub fn trivial(n: usize, m: u64, key_id: KeyId) -> LweCiphertext {
        LweCiphertext {
            a: vec![0; n],
            b: m,
            key_id,
        }
    }

    /// Number of mask coefficients.
    pub fn dimension(&self) -> usize {
        self.a.len()
    }

    fn check_same(&self, other: &LweCiphertext) -> Result<()> {
        self.key_id.check("an LWE ciphertext", other.key_id)?;
        if self.a.len() != other.a.len() {
            return Err(dimension_mismatch(self.a.len(), other.a.len()));
        }
        Ok(())
    }

    /// self += other.
    pub fn add_assign(&mut self, other: &LweCiphertext) -> Result<()> {
        self.check_same(other)?;
        self.a
            .iter_mut()
            .zip(&other.a)
            .for_each(|(x, &y)| *x = x.wrapping_add(y));
        self.b = self.b.wrapping_add(other.b);
        Ok(())
    }

    /// self -= other.
    pub fn sub_assign(&mut self, other: &LweCiphertext) -> Result<()> {
        self.check_same(other)?;
        self.a
            .iter_mut()
            .zip(&other.a)
            .for_each(|(x, &y)| *x = x.wrapping_sub(y));
        self.b = self.b.wrapping_sub(other.b);
        Ok(())
    }

    /// self = -self.
    pub fn neg_assign(&mut self) {
        self.a.iter_mut().for_each(|x| *x = x.wrapping_neg());
        self.b = self.b.wrapping_neg();
    }

    /// Adds the torus value m to the phase.
    pub fn add_constant(&mut self, m: u64) {
        self.b = self.b.wrapping_add(m);
    }

    /// Multiplies the phase by the integer k (mod 2^64).
    pub fn mul_scalar_assign(&mut self, k: i64) {
        let k = k as u64;
        self.a.iter_mut().for_each(|x| *x = x.wrapping_mul(k));
        self.b = self.b.wrapping_mul(k);
    }

    /// Sample extraction: coefficient `index` of the GLWE ciphertext
    /// (masks A_1..A_k, body B) modulo the odd modulus q, in coefficient form,
    /// whose phase is B - sum A_i S_i in Z_q\[X\]/(X^N + 1), as an LWE
    /// ciphertext modulo 2^64 under the key made of the concatenated
    /// coefficients of S_1..S_k, whose identity `key_id` (the GLWE key's)
    /// the result carries. Each value v is scaled to round(v 2^64 / q):
    /// the phase is scaled with it (plus at most 1/2 per term of rounding).
    ///
    /// An RLWE ciphertext (c0, c1) with phase c0 + c1 s passes mask -c1.
    pub fn sample_extract(
        masks: &[&[u64]],
        body: &[u64],
        q: u64,
        index: usize,
        key_id: KeyId,
    ) -> Result<LweCiphertext> {
        let n = body.len();
        if q < 3 || q.is_multiple_of(2) || n == 0 || index >= n {
            return invalid(format!(
                "sample extraction of coefficient {index} of degree {n} modulo {q}"
            ));
        }
        if masks.iter().any(|m| m.len() != n) {
            return invalid("GLWE polynomials of different degrees");
        }
        if body
            .iter()
            .chain(masks.iter().flat_map(|m| m.iter()))
            .any(|&v| v >= q)
        {
            return invalid("GLWE coefficients not reduced modulo q");
        }
        let scale = |v: u64| ((((v as u128) << 64) + (q as u128 / 2)) / q as u128) as u64;
        let mut a = Vec::with_capacity(masks.len() * n);
        for mask in masks {
            // (A S)[index] = sum_{j <= index} A[index - j] s_j - sum_{j > index} A[N + index - j] s_j.
            for j in 0..n {
                a.push(if j <= index {
                    scale(mask[index - j])
                } else {
                    scale(mask[n + index - j]).wrapping_neg()
                });
            }
        }
        Ok(LweCiphertext {
            a,
            b: scale(body[index]),
            key_id,
        })
    }

    /// Sample extraction of an RLWE ciphertext (c0, c1) with phase
    /// c0 + c1 s over one prime (BFV or CKKS at their last level, in either
    /// representation): coefficients `indices` as LWE ciphertexts under the
    /// coefficients of s, of identity `key_id` (the ciphertext's key's; see
    /// [`LweCiphertext::sample_extract`]).
    pub fn sample_extract_rlwe(
        c0: &Poly,
        c1: &Poly,
        indices: &[usize],
        key_id: KeyId,
    ) -> Result<Vec<LweCiphertext>> {
        if c0.basis().len() != 1 || c1.basis().primes() != c0.basis().primes() {
            return invalid("sample extraction needs both polynomials over the same single prime");
        }
        let n = c0.n();
        if let Some(i) = indices.iter().find(|&&i| i >= n) {
            return invalid(format!("coefficient {i} outside a degree-{n} polynomial"));
        }
        let q = c0.basis().modulus(0).value();
        let mut body = c0.clone();
        body.to_coefficient()?;
        // The phase is c0 + c1 s = B - A s with mask A = -c1.
        let mut mask = c1.neg()?;
        mask.to_coefficient()?;
        indices
            .iter()
            .map(|&i| Self::sample_extract(&[mask.limb(0)], body.limb(0), q, i, key_id))
            .collect()
    }

    /// Modulus switching to 2^log_modulus (1 <= log_modulus < 64): every
    /// value rounded to the nearest multiple of 2^(64 - log_modulus).
    ///
    /// With `binary_key_mean`, for a key uniform in {0, 1}: the rounding
    /// errors e_i of the mask are public and sum e_i s_i has mean (sum e_i) / 2,
    /// which is added to the body before its own rounding. The error left is
    /// e_b - sum e_i (s_i - 1/2), of variance 1/12 + n/48 instead of
    /// 1/12 + n/24 (in units of the new modulus).
    pub fn switch_modulus(&self, log_modulus: u32, binary_key_mean: bool) -> Result<SwitchedLwe> {
        if !(1..64).contains(&log_modulus) {
            return invalid(format!("modulus 2^{log_modulus} for LWE modulus switching"));
        }
        let shift = 64 - log_modulus;
        let mask = (1u64 << log_modulus) - 1;
        // Fixed point with `shift + 1` fractional bits, so half an error is exact.
        let mut mean_correction: i128 = 0;
        let a = self
            .a
            .iter()
            .map(|&x| {
                let rounded = (((x as u128) + (1u128 << (shift - 1))) >> shift) as u64;
                if binary_key_mean {
                    // e = rounded - x / 2^shift, in units of 2^-(shift + 1), halved.
                    let e2 = ((rounded as i128) << (shift + 1)) - ((x as i128) << 1);
                    mean_correction += e2 / 2;
                }
                rounded & mask
            })
            .collect();
        let body_fixed = ((self.b as i128) << 1) + mean_correction;
        // round(body_fixed / 2^(shift + 1)) by floor((x + half) / 2^(shift + 1)).
        let b = ((body_fixed + (1i128 << shift)) >> (shift + 1)) as u64 & mask;
        Ok(SwitchedLwe { log_modulus, a, b })
    }

    /// Appends the serialized body: n: u32 | a: n x u64 | b: u64 (not the
    /// key identity: the container holds it).
    pub fn write_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.a.len() as u32).to_le_bytes());
        for v in &self.a {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.b.to_le_bytes());
    }

    /// Reads a body written by [`LweCiphertext::write_body`] of dimension `n`,
    /// under the key of identity `key_id` (stored by the container).
    pub fn read_body(r: &mut Reader<'_>, n: usize, key_id: KeyId) -> Result<LweCiphertext> {
        let got = r.u32()? as usize;
        if got != n {
            return Err(Error::Malformed(format!(
                "LWE dimension {got}, expected {n}"
            )));
        }
        let raw = r.take(n * 8)?;
        let a = raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk")))
            .collect();
        Ok(LweCiphertext {
            a,
            b: r.u64()?,
            key_id,
        })
    }
}

/// Signed, rounded gadget decomposition modulo 2^64: the closest multiple of
/// 2^(64 - base_log levels) to x, as `levels` digits in [-B/2, B/2] (B =
/// 2^base_log), most significant first, such that
/// sum_j d_j 2^(64 - base_log (j + 1)) = that multiple (mod 2^64).
/// Internal: the caller guarantees 0 < base_log levels < 64 and
/// `digits.len() >= levels` (`check_decomposition` does, for the key switch).
pub(crate) fn decompose_torus(x: u64, base_log: u32, levels: u32, digits: &mut [i64]) {
    let total = base_log * levels;
    let shift = 64 - total;
    let mut r = (x >> shift) + ((x >> (shift - 1)) & 1);
    let base = 1u64 << base_log;
    let half = base >> 1;
    for d in digits[..levels as usize].iter_mut().rev() {
        let v = r & (base - 1);
        r >>= base_log;
        // Branch-free signed digit: v >= B/2 becomes v - B with a carry.
        let c = (v >= half) as u64;
        *d = v as i64 - (c << base_log) as i64;
        r += c;
    }
}

/// acc -= d * row (mod 2^32), with AVX-512 or AVX2 multiplies when the CPU
/// has them (the x86-64 baseline has no 32-bit vector multiply).
fn sub_scaled(acc: &mut [u32], row: &[u32], d: u32) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above), the
            // only requirement of the target-feature function.
            unsafe { sub_scaled_avx512(acc, row, d) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above), the only
            // requirement of the target-feature function.
            unsafe { sub_scaled_avx2(acc, row, d) };
            return;
        }
    }
    sub_scaled_portable(acc, row, d);
}

#[inline(always)]
fn sub_scaled_portable(acc: &mut [u32], row: &[u32], d: u32) {
    acc.iter_mut()
        .zip(row)
        .for_each(|(x, &y)| *x = x.wrapping_sub(y.wrapping_mul(d)));
}

/// The same loop compiled for AVX-512 (vpmulld): the compiler vectorizes it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sub_scaled_avx512(acc: &mut [u32], row: &[u32], d: u32) {
    sub_scaled_portable(acc, row, d)
}

/// The same loop compiled for AVX2 (vpmulld, 8 lanes).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sub_scaled_avx2(acc: &mut [u32], row: &[u32], d: u32) {
    sub_scaled_portable(acc, row, d)
}

/// The switched ciphertext from the top halves of -sum d row (the
/// accumulator) and the input body, whose low bits the key never touches.
fn widen(mut acc: Vec<u32>, b: u64, key_id: KeyId) -> LweCiphertext {
    let body = acc.pop().unwrap_or(0);
    LweCiphertext {
        a: acc.into_iter().map(|w| (w as u64) << 32).collect(),
        b: b.wrapping_add((body as u64) << 32),
        key_id,
    }
}

/// An LWE key-switching key from an input key of dimension n_in to an output
/// key of dimension n_out: for each input coefficient i and level j, an
/// encryption of s_in\[i\] 2^(64 - base_log (j + 1)) under s_out. The masks come
/// from `seed` (serialized keys store only the bodies). It carries the
/// identities of both keys: it takes only ciphertexts of the input key and
/// gives ciphertexts of the output key.
///
/// Every word is kept as its top 32 bits, rounded: the decomposition uses at
/// most 32 bits, so each gadget multiple of a key bit is a multiple of 2^32,
/// and the key switch then streams half the bytes (it is memory bound). The
/// rounding is a public function of a 64-bit key (no security is lost); it
/// adds (n_out / 2 + 1) / 12 units of 2^-64 to the variance of each row's
/// noise relative to 2^64.
pub struct LweKeySwitchKey {
    base_log: u32,
    levels: u32,
    input_dimension: usize,
    output_dimension: usize,
    input_id: KeyId,
    output_id: KeyId,
    seed: Seed,
    /// (n_in x levels) rows of n_out mask words then the body, top halves.
    rows: Vec<u32>,
}

impl std::fmt::Debug for LweKeySwitchKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LweKeySwitchKey {{ {} -> {}, base 2^{} x {} levels }}",
            self.input_dimension, self.output_dimension, self.base_log, self.levels
        )
    }
}

fn check_decomposition(base_log: u32, levels: u32) -> Result<()> {
    if base_log == 0 || levels == 0 || base_log.saturating_mul(levels) > 32 {
        return invalid(format!(
            "decomposition base 2^{base_log} with {levels} levels must use 1..32 bits"
        ));
    }
    Ok(())
}

/// The masks of a seed-compressed key-switching key, row after row.
fn ksk_masks(seed: Seed, rows: usize, n_out: usize) -> impl Iterator<Item = Vec<u64>> {
    let mut rng = Prng::from_seed(seed);
    (0..rows).map(move |_| (0..n_out).map(|_| rng.next_u64()).collect())
}

/// The top 32 bits of x, rounded (mod 2^32).
fn top_half(x: u64) -> u32 {
    (x.wrapping_add(1 << 31) >> 32) as u32
}

impl LweKeySwitchKey {
    /// Generates the key from `input` to `output` with noise of relative
    /// deviation `sigma`.
    pub fn generate(
        input: &LweSecretKey,
        output: &LweSecretKey,
        base_log: u32,
        levels: u32,
        sigma: f64,
        rng: &mut Prng,
    ) -> Result<LweKeySwitchKey> {
        check_decomposition(base_log, levels)?;
        let (n_in, n_out) = (input.dimension(), output.dimension());
        let seed = rng.gen_seed();
        let count = n_in * levels as usize;
        let noise = sample_wide_gaussian(count, sigma * TWO_POW_64, rng)?;
        let mut rows = Vec::with_capacity(count * (n_out + 1));
        // Streamed whole by every switch: on huge pages (see `aligned`).
        crate::aligned::advise_huge_pages(rows.spare_capacity_mut());
        for (r, a) in ksk_masks(seed, count, n_out).enumerate() {
            let (i, j) = (r / levels as usize, r % levels as usize);
            let gadget = 1u64 << (64 - base_log * (j as u32 + 1));
            let m = input.s[i].wrapping_mul(gadget);
            let b = dot(&a, &output.s)
                .wrapping_add(m)
                .wrapping_add(noise[r] as u64);
            rows.extend(a.iter().map(|&w| top_half(w)));
            rows.push(top_half(b));
        }
        Ok(LweKeySwitchKey {
            base_log,
            levels,
            input_dimension: n_in,
            output_dimension: n_out,
            input_id: input.id,
            output_id: output.id,
            seed,
            rows,
        })
    }

    /// The identity of the input key, whose ciphertexts it takes.
    pub fn input_id(&self) -> KeyId {
        self.input_id
    }

    /// The identity of the output key, whose ciphertexts it gives.
    pub fn output_id(&self) -> KeyId {
        self.output_id
    }

    /// The input key's dimension.
    pub fn input_dimension(&self) -> usize {
        self.input_dimension
    }

    /// The output key's dimension.
    pub fn output_dimension(&self) -> usize {
        self.output_dimension
    }

    /// (base_log, levels) of the decomposition.
    pub fn decomposition(&self) -> (u32, u32) {
        (self.base_log, self.levels)
    }

    /// Bytes held in memory (expanded masks).
    pub fn expanded_size(&self) -> usize {
        self.rows.len() * 4
    }

    /// Switches `ct` (under the input key) to the output key: the phase is
    /// kept up to the decomposition's rounding and the key's noise. A
    /// ciphertext of another key is refused.
    pub fn switch(&self, ct: &LweCiphertext) -> Result<LweCiphertext> {
        self.check_input(ct)?;
        // The switch streams the whole key from memory: with an idle second
        // thread each half of the input coefficients streams its half of
        // the key into its own sum. Wrapping u32 sums are exact, so the
        // result does not depend on the split.
        let acc = if several_threads() {
            let mid = self.input_dimension / 2;
            let (mut low, high) = join(
                || self.accumulate(&ct.a[..mid], 0),
                || self.accumulate(&ct.a[mid..], mid),
            );
            low.iter_mut()
                .zip(&high)
                .for_each(|(x, &y)| *x = x.wrapping_add(y));
            low
        } else {
            self.accumulate(&ct.a, 0)
        };
        Ok(widen(acc, ct.b, self.output_id))
    }

    /// Refuses a ciphertext of another key or dimension than the input key's.
    fn check_input(&self, ct: &LweCiphertext) -> Result<()> {
        self.input_id
            .check("an LWE ciphertext to key-switch", ct.key_id)?;
        if ct.a.len() != self.input_dimension {
            return Err(dimension_mismatch(self.input_dimension, ct.a.len()));
        }
        Ok(())
    }

    /// -sum d_ij row_ij (mod 2^32) over the mask words `a` of input
    /// coefficients first, first + 1, ...: n_out + 1 words.
    fn accumulate(&self, a: &[u64], first: usize) -> Vec<u32> {
        let width = self.output_dimension + 1;
        let levels = self.levels as usize;
        let mut acc = vec![0u32; width];
        let mut digits = vec![0i64; levels];
        let rows = &self.rows[first * levels * width..(first + a.len()) * levels * width];
        for (&a, block) in a.iter().zip(rows.chunks_exact(levels * width)) {
            decompose_torus(a, self.base_log, self.levels, &mut digits);
            // A zero digit's row is not read at all (the switch is memory
            // bound; the digits come from the public mask).
            for (row, &d) in block.chunks_exact(width).zip(&digits) {
                if d != 0 {
                    sub_scaled(&mut acc, row, d as u32);
                }
            }
        }
        acc
    }

    /// [`switch`](Self::switch) of several ciphertexts in one pass over the
    /// key: the same results, bit for bit, with every key row read once per
    /// call instead of once per ciphertext. The key (n_in l rows of n_out + 1
    /// words) is far larger than the caches, so a single switch streams it
    /// from memory; a few ciphertexts together share that traffic.
    pub fn switch_many(&self, cts: &[&LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        cts.iter().try_for_each(|ct| self.check_input(ct))?;
        if let [ct] = cts {
            return Ok(vec![self.switch(ct)?]);
        }
        let width = self.output_dimension + 1;
        let levels = self.levels as usize;
        let mut accs = vec![vec![0u32; width]; cts.len()];
        let mut digits = vec![0i64; levels * cts.len()];
        for i in 0..self.input_dimension {
            for (ct, d) in cts.iter().zip(digits.chunks_exact_mut(levels)) {
                decompose_torus(ct.a[i], self.base_log, self.levels, d);
            }
            let block = &self.rows[i * levels * width..(i + 1) * levels * width];
            for (j, row) in block.chunks_exact(width).enumerate() {
                for (acc, d) in accs.iter_mut().zip(digits.chunks_exact(levels)) {
                    sub_scaled(acc, row, d[j] as u32);
                }
            }
        }
        Ok(accs
            .into_iter()
            .zip(cts)
            .map(|(acc, ct)| widen(acc, ct.b, self.output_id))
            .collect())
    }

    /// Appends the seed-compressed body: base_log: u32 | levels: u32 | n_in:
    /// u32 | n_out: u32 | seed | n_in x levels bodies (u64, multiples of 2^32).
    pub fn write_body(&self, out: &mut Vec<u8>) {
        for v in [
            self.base_log,
            self.levels,
            self.input_dimension as u32,
            self.output_dimension as u32,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.seed);
        let width = self.output_dimension + 1;
        for row in self.rows.chunks_exact(width) {
            out.extend_from_slice(&((row[width - 1] as u64) << 32).to_le_bytes());
        }
    }

    /// Reads a body written by [`LweKeySwitchKey::write_body`], which must
    /// have exactly the expected shape and bodies that are multiples of 2^32
    /// (so that a loaded key re-encodes to its bytes; keys written before the
    /// 32-bit storage are refused and must be generated again); the masks
    /// are regenerated from the seed. The body holds no identities: `ids`
    /// (input, output), stored by the container, are the loaded key's.
    pub fn read_body(
        r: &mut Reader<'_>,
        base_log: u32,
        levels: u32,
        (n_in, n_out): (usize, usize),
        (input_id, output_id): (KeyId, KeyId),
    ) -> Result<LweKeySwitchKey> {
        let (seed, bodies) = read_ksk_shape(r, base_log, levels, (n_in, n_out))?;
        let count = n_in * levels as usize;
        let mut rows = Vec::with_capacity(count * (n_out + 1));
        // Streamed whole by every switch: on huge pages (see `aligned`).
        crate::aligned::advise_huge_pages(rows.spare_capacity_mut());
        for (a, b) in ksk_masks(seed, count, n_out).zip(bodies.chunks_exact(8)) {
            let body = ksk_body(b)?;
            rows.extend(a.iter().map(|&w| top_half(w)));
            rows.push(body);
        }
        Ok(LweKeySwitchKey {
            base_log,
            levels,
            input_dimension: n_in,
            output_dimension: n_out,
            input_id,
            output_id,
            seed,
            rows,
        })
    }

    /// Checks a body written by [`LweKeySwitchKey::write_body`] as
    /// [`read_body`](Self::read_body) does, without regenerating its masks:
    /// what a loader that expands the key later validates.
    pub fn check_body(
        r: &mut Reader<'_>,
        base_log: u32,
        levels: u32,
        dimensions: (usize, usize),
    ) -> Result<()> {
        let (_, bodies) = read_ksk_shape(r, base_log, levels, dimensions)?;
        bodies
            .chunks_exact(8)
            .try_for_each(|b| ksk_body(b).map(drop))
    }
}

/// The shape, seed and body bytes of a key-switching key's body, checked
/// against the expected shape.
fn read_ksk_shape<'a>(
    r: &mut Reader<'a>,
    base_log: u32,
    levels: u32,
    (n_in, n_out): (usize, usize),
) -> Result<(Seed, &'a [u8])> {
    let got = [r.u32()?, r.u32()?, r.u32()?, r.u32()?];
    if got != [base_log, levels, n_in as u32, n_out as u32] {
        return Err(Error::Malformed(format!(
            "key-switching key shape {got:?}, expected {:?}",
            [base_log, levels, n_in as u32, n_out as u32]
        )));
    }
    check_decomposition(base_log, levels)?;
    let mut seed = [0u8; 32];
    seed.copy_from_slice(r.take(32)?);
    let count = n_in * levels as usize;
    Ok((seed, r.take(count * 8)?))
}

/// A key-switching key body word: its top half, refused unless it is a
/// multiple of 2^32 (so that a loaded key re-encodes to its bytes).
fn ksk_body(b: &[u8]) -> Result<u32> {
    let mut word = [0u8; 8];
    word.copy_from_slice(b);
    let body = u64::from_le_bytes(word);
    if body as u32 != 0 {
        return Err(Error::Malformed(
            "key-switching key body is not a multiple of 2^32 (a key from before \
             the 32-bit storage: generate it again)"
                .into(),
        ));
    }
    Ok((body >> 32) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decomposition_reconstructs_the_rounded_value() {
        let mut r = Prng::from_seed([7; 32]);
        for (base_log, levels) in [(3u32, 5u32), (4, 4), (7, 2), (1, 20)] {
            let total = base_log * levels;
            let mut d = vec![0i64; levels as usize];
            for x in (0..2000)
                .map(|_| r.next_u64())
                .chain([0, u64::MAX, 1 << 63])
            {
                decompose_torus(x, base_log, levels, &mut d);
                let half = 1i64 << (base_log - 1);
                assert!(d.iter().all(|&v| -half <= v && v < half), "{d:?}");
                let back = d.iter().enumerate().fold(0u64, |acc, (j, &v)| {
                    acc.wrapping_add((v as u64).wrapping_mul(1 << (64 - base_log * (j as u32 + 1))))
                });
                assert!(
                    (x.wrapping_sub(back) as i64).unsigned_abs() <= 1 << (63 - total),
                    "{x} {back}"
                );
            }
        }
    }

    /// The dispatched (AVX-512 or AVX2) acc -= d row gives the scalar
    /// loop's words, for lengths that leave a vector remainder and digits
    /// of both signs.
    #[test]
    fn sub_scaled_matches_the_scalar_loop() {
        let mut rng = Prng::from_seed([7; 32]);
        for len in [1usize, 7, 8, 31, 846] {
            let row: Vec<u32> = (0..len).map(|_| rng.next_u64() as u32).collect();
            let start: Vec<u32> = (0..len).map(|_| rng.next_u64() as u32).collect();
            for d in [1i64, -1, 3, -4, 1 << 20, -(1 << 31)] {
                let mut fast = start.clone();
                sub_scaled(&mut fast, &row, d as u32);
                for i in 0..len {
                    let want = (start[i] as i64 - d * row[i] as i64).rem_euclid(1 << 32);
                    assert_eq!(fast[i] as i64, want, "len {len}, d {d}, word {i}");
                }
            }
        }
    }

    /// The key switch split over two threads (each half of the input
    /// coefficients summed apart, then added) gives the one-thread result
    /// bit for bit, for an even and an odd input dimension, and that result
    /// decrypts to the message under the output key.
    #[cfg(feature = "parallel")]
    #[test]
    fn two_thread_key_switch_equals_the_sequential_one() {
        let pool = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
        };
        let (one, two) = (pool(1), pool(2));
        let mut rng = Prng::from_seed([11; 32]);
        for n_in in [2048, 1001] {
            let input = LweSecretKey::binary(n_in, KeyId::sample(&mut rng), &mut rng);
            let output = LweSecretKey::binary(630, KeyId::sample(&mut rng), &mut rng);
            let ksk =
                LweKeySwitchKey::generate(&input, &output, 3, 5, 2f64.powi(-40), &mut rng).unwrap();
            for m in [0u64, 1 << 60, 5 << 59, u64::MAX << 61] {
                let ct = input.encrypt(m, 2f64.powi(-40), &mut rng).unwrap();
                let sequential = one.install(|| ksk.switch(&ct)).unwrap();
                let split = two.install(|| ksk.switch(&ct)).unwrap();
                assert_eq!(split.a, sequential.a, "n_in {n_in}, m {m:#x}");
                assert_eq!(split.b, sequential.b, "n_in {n_in}, m {m:#x}");
                let error = output.phase(&split).unwrap().wrapping_sub(m) as i64;
                assert!(error.unsigned_abs() < 1 << 56, "n_in {n_in}: error {error}");
            }
        }
    }

    /// A compressed encryption decompresses to a ciphertext of the message;
    /// its mask is the seed's stream alone (the same seed and stream give the
    /// same mask, another stream another one) and its body needs the secret
    /// noise generator: the same seed and stream with another noise
    /// generator give another body, so the seed does not determine it.
    #[test]
    fn compressed_encryption_takes_its_mask_from_the_seed_and_its_noise_elsewhere() {
        let mut rng = Prng::from_seed([9; 32]);
        let key = LweSecretKey::binary(630, KeyId::sample(&mut rng), &mut rng);
        let (seed, m, sigma) = ([5; 32], 3u64 << 61, 2f64.powi(-30));
        let mut noise = Prng::from_seed([1; 32]);
        let ct = key
            .encrypt_compressed(m, sigma, seed, 4, &mut noise)
            .unwrap();
        assert_eq!((ct.seed, ct.stream, ct.dimension), (seed, 4, 630));
        let full = ct.decompress();
        let error = key.phase(&full).unwrap().wrapping_sub(m) as i64;
        assert!(error.unsigned_abs() < 1 << 40, "phase error {error}");

        let same_seed = key
            .encrypt_compressed(m, sigma, seed, 4, &mut noise)
            .unwrap();
        assert_eq!(same_seed.decompress().a, full.a);
        assert_ne!(same_seed.b, ct.b, "the body depends on the secret noise");
        let other_stream = key
            .encrypt_compressed(m, sigma, seed, 5, &mut noise)
            .unwrap();
        assert_ne!(other_stream.decompress().a, full.a);
        // The noise generator seeded with the public seed itself is only a
        // test's choice: encrypt() draws the mask and the noise from one
        // generator, encrypt_compressed() only the noise.
        let plain = key
            .encrypt(m, sigma, &mut Prng::from_seed_stream(seed, 4))
            .unwrap();
        assert_eq!(plain.a, full.a);
    }
}
