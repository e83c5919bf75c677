//! GLWE and GGSW ciphertexts over the NTT prime q of a parameter set, the
//! signed gadget decomposition, the external product and the CMux, all on
//! `triskel-kernels` (NTT and element-wise products of the best backend for q).
//!
//! The public types ([`GlweSecretKey`], [`GlweCiphertext`], [`GgswCiphertext`],
//! [`Decomposer`]) are thin owners of buffers; their operations and the
//! bootstrap (`keys.rs`, `multibit.rs`) run on the same buffer functions
//! below. Polynomials live in `Z_q[X]/(X^N + 1)`; a GLWE ciphertext
//! (A_1..A_k, B) under the key (S_1..S_k) has phase B - sum_i A_i S_i.

use std::sync::Arc;

use rayon::prelude::*;
use triskel_kernels::{add_assign, dot, mul_acc, ntt_primes, sub, Modulus, NttPlan};
use triskel_ring::sampling::sample_wide_gaussian;
use triskel_ring::{
    aligned_zeros, huge_page_zeros, AlignedVec, KeyId, LweCiphertext, LweSecretKey, Prng, Seed,
};
use zeroize::Zeroizing;

use crate::compressed::fresh_seed;
use crate::error::{Error, Result};
use crate::params::TfheParameters;

/// Signed gadget decomposition modulo the prime q with base B = 2^base_log
/// and l levels: x ~ sum_j d_j g_j (mod q) with g_j = round(q / B^j), digits
/// d_j in [-B/2, B/2), from y = round(x B^l / q) computed in f64 without
/// division (x times B^l / q, rounded). The error |x - sum_j d_j g_j| is at
/// most q / (2 B^l) from the rounding plus l B / 4 from the rounded gadget
/// (plus one unit at ties).
#[derive(Clone, Debug)]
pub struct Decomposer {
    base_log: u32,
    levels: usize,
    scale: f64,
    q: u64,
    gadget: Vec<u64>,
}

impl Decomposer {
    /// The decomposition of residues mod q (odd, below 2^52) in base
    /// 2^base_log with `levels` levels; base_log levels must leave
    /// g_l = round(q / B^l) at least 2 (so at most 50 bits: the f64 path).
    pub fn new(q: u64, base_log: u32, levels: u32) -> Result<Decomposer> {
        let total = base_log.saturating_mul(levels);
        if q < 3
            || q.is_multiple_of(2)
            || q >= 1 << 52
            || base_log == 0
            || levels == 0
            || total > 50
        {
            return Err(Error::InvalidParameters(format!(
                "decomposition base 2^{base_log}, {levels} levels modulo {q}"
            )));
        }
        if (q >> total) < 2 {
            return Err(Error::InvalidParameters(format!(
                "decomposition of {total} bits modulo a {}-bit q",
                64 - q.leading_zeros()
            )));
        }
        let scale = 2f64.powi((base_log * levels) as i32) / q as f64;
        let gadget = (1..=levels)
            .map(|j| (q + (1u64 << (base_log * j - 1))) >> (base_log * j))
            .collect();
        Ok(Decomposer {
            base_log,
            levels: levels as usize,
            scale,
            q,
            gadget,
        })
    }

    /// log2 of the base B.
    pub fn base_log(&self) -> u32 {
        self.base_log
    }

    /// The number of levels l.
    pub fn levels(&self) -> usize {
        self.levels
    }

    /// The modulus q.
    pub fn modulus(&self) -> u64 {
        self.q
    }

    /// The gadget g_1..g_l, g_j = round(q / B^j).
    pub fn gadget(&self) -> &[u64] {
        &self.gadget
    }

    /// The signed digits d_1..d_l of x in [0, q) (most significant first),
    /// each in [-B/2, B/2): x ~ sum_j d_j g_j mod q within the precision above.
    pub fn signed_digits(&self, x: u64) -> Result<Vec<i64>> {
        if x >= self.q {
            return Err(Error::OutOfRange(format!(
                "{x} is not reduced modulo {}",
                self.q
            )));
        }
        let mut digits = vec![0u64; self.levels];
        self.decompose(&[x], &mut digits);
        let q = self.q;
        Ok(digits
            .iter()
            .map(|&d| {
                if d > q / 2 {
                    d as i64 - q as i64
                } else {
                    d as i64
                }
            })
            .collect())
    }

    /// Writes the l digit polynomials of `poly` (coefficients in [0, q)) into
    /// `out` (l N words, digits reduced mod q), most significant first.
    pub(crate) fn decompose(&self, poly: &[u64], out: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512dq") {
                // SAFETY: the CPU supports AVX-512F/DQ (checked just above),
                // the only requirement of the target-feature function.
                unsafe { self.decompose_avx512(poly, out) };
                return;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above), the
                // only requirement of the target-feature function.
                unsafe { self.decompose_avx2(poly, out) };
                return;
            }
        }
        self.decompose_portable(poly, out);
    }

    /// The same loop compiled for AVX-512 (vectorized by the compiler).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn decompose_avx512(&self, poly: &[u64], out: &mut [u64]) {
        self.decompose_portable(poly, out)
    }

    /// The same loop compiled for AVX2 (vectorized by the compiler: 4 lanes).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn decompose_avx2(&self, poly: &[u64], out: &mut [u64]) {
        self.decompose_portable(poly, out)
    }

    #[inline(always)]
    fn decompose_portable(&self, poly: &[u64], out: &mut [u64]) {
        const LANES: usize = 8;
        let n = poly.len();
        let total = self.base_log as usize * self.levels;
        let mask_total = (1u64 << total) - 1;
        let base = 1u64 << self.base_log;
        let (half, q_minus_base) = (base >> 1, self.q - base);
        // Blocks of 8 coefficients: y = floor(x B^l / q + 1/2) in registers,
        // then one digit per level from the least significant up. The
        // product's relative error 2^-53 moves y only at ties, which changes
        // the rounding error by at most one unit of q / B^l.
        for (block, xs) in poly.chunks(LANES).enumerate() {
            let mut y = [0u64; LANES];
            for (y, &x) in y.iter_mut().zip(xs) {
                *y = self.scaled(x) & mask_total;
            }
            for level in (0..self.levels).rev() {
                let start = level * n + block * LANES;
                for (d, y) in out[start..start + xs.len()].iter_mut().zip(y.iter_mut()) {
                    let v = *y & (base - 1);
                    let carry = (v >= half) as u64;
                    *y = (*y >> self.base_log) + carry;
                    // v - B carry, as a residue mod q: v + carry (q - B).
                    *d = v + (q_minus_base & carry.wrapping_neg());
                }
            }
        }
    }

    /// y = floor(x B^l / q + 1/2). x < q < 2^52 and the scaled value lies
    /// in [0, B^l + 1) with B^l <= 2^50: both conversions are exact through
    /// the 2^52 exponent (bit operations and one add, which vectorize on
    /// every x86 level; AVX2 has no 64-bit integer <-> f64 conversion).
    #[inline(always)]
    fn scaled(&self, x: u64) -> u64 {
        floor_small(f64_from_small(x.min(self.q - 1)) * self.scale + 0.5)
    }

    /// For one level (l = 1): the digits of X^shift p - p (p's coefficients
    /// in [0, q), shift in [0, 2N)), the same as `rotate_minus_one` then
    /// `decompose`, in one pass (the difference never goes to memory).
    pub(crate) fn decompose_rotated(&self, p: &[u64], shift: usize, out: &mut [u64]) {
        debug_assert_eq!(self.levels, 1);
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512dq") {
                // SAFETY: the CPU supports AVX-512F/DQ (checked just above),
                // the only requirement of the target-feature function.
                unsafe { self.decompose_rotated_avx512(p, shift, out) };
                return;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above), the
                // only requirement of the target-feature function.
                unsafe { self.decompose_rotated_avx2(p, shift, out) };
                return;
            }
        }
        self.decompose_rotated_portable(p, shift, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn decompose_rotated_avx512(&self, p: &[u64], shift: usize, out: &mut [u64]) {
        self.decompose_rotated_portable(p, shift, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn decompose_rotated_avx2(&self, p: &[u64], shift: usize, out: &mut [u64]) {
        self.decompose_rotated_portable(p, shift, out)
    }

    #[inline(always)]
    fn decompose_rotated_portable(&self, p: &[u64], shift: usize, out: &mut [u64]) {
        let base = 1u64 << self.base_log;
        let (half, q_minus_base) = (base >> 1, self.q - base);
        rotate_minus_one_map(self.q, p, shift, out, |d| {
            let v = self.scaled(d) & (base - 1);
            let carry = (v >= half) as u64;
            v + (q_minus_base & carry.wrapping_neg())
        });
    }
}

/// 2^52 as f64: adding it to a value in [0, 2^52) leaves that value's
/// integer part (rounded) in the low mantissa bits.
const TWO_POW_52: f64 = 4503599627370496.0;

/// x as f64, exactly, for x < 2^52.
#[inline(always)]
fn f64_from_small(x: u64) -> f64 {
    f64::from_bits(x | TWO_POW_52.to_bits()) - TWO_POW_52
}

/// floor(v) for v in [0, 2^51): v rounded to the nearest integer through the
/// 2^52 exponent, minus one where that rounded up.
#[inline(always)]
fn floor_small(v: f64) -> u64 {
    let shifted = v + TWO_POW_52;
    let nearest = shifted.to_bits() - TWO_POW_52.to_bits();
    nearest - ((shifted - TWO_POW_52 > v) as u64)
}

/// The NTT prime and plan, the decomposer, and the shape (k, N) of a GLWE.
#[derive(Debug)]
pub(crate) struct GlweContext {
    /// The name of the parameter set it was made for (serialized objects
    /// carry it in their header).
    pub(crate) set_name: &'static str,
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) modulus: Modulus,
    pub(crate) plan: NttPlan,
    pub(crate) decomposer: Decomposer,
    /// Deviation of fresh GLWE noise (absolute, on q).
    pub(crate) noise_std: f64,
}

impl GlweContext {
    pub(crate) fn new(
        set_name: &'static str,
        k: usize,
        n: usize,
        modulus_bits: u32,
        (base_log, levels): (u32, u32),
        relative_noise_std: f64,
    ) -> Result<GlweContext> {
        let q = *ntt_primes(modulus_bits, n, 1)?
            .first()
            .ok_or_else(|| Error::InvalidParameters("no NTT prime".into()))?;
        let modulus = Modulus::new(q)?;
        let plan = NttPlan::new(n, &modulus)?;
        Ok(GlweContext {
            set_name,
            k,
            n,
            decomposer: Decomposer::new(q, base_log, levels)?,
            noise_std: relative_noise_std * q as f64,
            modulus,
            plan,
        })
    }

    pub(crate) fn q(&self) -> u64 {
        self.modulus.value()
    }

    /// Words in one GLWE ciphertext: (k + 1) N.
    pub(crate) fn glwe_len(&self) -> usize {
        (self.k + 1) * self.n
    }

    /// Rows of a GGSW: (k + 1) l.
    pub(crate) fn ggsw_rows(&self) -> usize {
        (self.k + 1) * self.decomposer.levels()
    }

    /// Reduces a signed integer mod q, without a division or a branch (noise
    /// and key coefficients go through it).
    pub(crate) fn reduce_signed(&self, v: i64) -> u64 {
        self.modulus.reduce_i64(v)
    }

    /// A uniform GLWE mask (k polynomials, NTT form) of row `row` under `seed`.
    pub(crate) fn uniform_mask(&self, seed: Seed, row: u64, out: &mut [u64]) -> Result<()> {
        let mut rng = Prng::from_seed_stream(seed, row);
        let q = self.q();
        for v in out.iter_mut() {
            *v = rng.below(q)?;
        }
        Ok(())
    }
}

/// The shape accessors (k, N, q) and the key identity of a type holding
/// `ctx: Arc<GlweContext>` and `key: KeyId`.
macro_rules! shape_accessors {
    ($($ty:ty),*) => {$(
        impl $ty {
            /// The identity of the secret key it is under (for a key, its
            /// own): operations combine only objects of one identity.
            pub fn key_id(&self) -> KeyId {
                self.key
            }

            /// k, the number of mask polynomials (of each row for a GGSW).
            pub fn glwe_dimension(&self) -> usize {
                self.ctx.k
            }

            /// N, the ring degree.
            pub fn polynomial_size(&self) -> usize {
                self.ctx.n
            }

            /// The NTT prime q.
            pub fn modulus(&self) -> u64 {
                self.ctx.q()
            }
        }
    )*};
}

shape_accessors!(
    GlweSecretKey,
    GlweCiphertext,
    GgswCiphertext,
    CompressedGlweCiphertext,
    CompressedGgswCiphertext
);

/// Errors unless `plaintext` has N coefficients in [0, q).
fn check_plaintext(ctx: &GlweContext, plaintext: &[u64]) -> Result<()> {
    if plaintext.len() != ctx.n || plaintext.iter().any(|&v| v >= ctx.q()) {
        return Err(Error::OutOfRange(format!(
            "a plaintext needs {} coefficients below q",
            ctx.n
        )));
    }
    Ok(())
}

/// Errors unless the GLWE ciphertext `found` has the ring of `ctx` and the
/// key identity `key` (every entry combining GLWE objects calls it first).
fn check_operand(ctx: &GlweContext, key: KeyId, found: &GlweCiphertext) -> Result<()> {
    check_same_ring(ctx, &found.ctx)?;
    Ok(key.check("a GLWE ciphertext", found.key)?)
}

/// Errors unless two operands share k, N and q.
fn check_same_ring(a: &GlweContext, b: &GlweContext) -> Result<()> {
    if (a.k, a.n, a.q()) != (b.k, b.n, b.q()) {
        return Err(Error::Mismatch(format!(
            "GLWE shapes (k, N, q) = ({}, {}, {}) and ({}, {}, {})",
            a.k,
            a.n,
            a.q(),
            b.k,
            b.n,
            b.q()
        )));
    }
    Ok(())
}

/// A GLWE secret key: k binary polynomials S_1..S_k of degree < N, kept as
/// coefficients (the key's LWE view, [`lwe_key`](Self::lwe_key)) and in NTT
/// form mod q. Both are zeroized on drop; never printed.
pub struct GlweSecretKey {
    pub(crate) ctx: Arc<GlweContext>,
    /// Its identity (a client key's GLWE key has the client key's).
    pub(crate) key: KeyId,
    ntt: Zeroizing<Vec<u64>>,
    lwe: LweSecretKey,
}

impl std::fmt::Debug for GlweSecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GlweSecretKey {{ k: {}, N: {}, .. }}",
            self.ctx.k, self.ctx.n
        )
    }
}

/// floor(x / p) for x < 2^64 p by binary long division in constant time
/// (a hardware divide's time may depend on the secret x).
fn constant_time_quotient(x: u128, p: u64) -> u64 {
    let (mut r, mut quotient) = (0u128, 0u128);
    for i in (0..128).rev() {
        r = (r << 1) | ((x >> i) & 1);
        // r < 2p < 2^65: r - p wraps to a set top bit exactly when r < p.
        let ge = ((r.wrapping_sub(p as u128) >> 127) ^ 1) & 1;
        r -= (p as u128) & ge.wrapping_neg();
        quotient |= ge << i;
    }
    quotient as u64
}

impl GlweSecretKey {
    /// A fresh key of the shape of `params` (k, N, its prime q, its
    /// bootstrapping decomposition and fresh GLWE noise; the set is checked),
    /// coefficients uniform in {0, 1} and a new identity from the OS CSPRNG.
    pub fn generate(params: &TfheParameters) -> Result<GlweSecretKey> {
        let ctx = crate::keys::context(params)?;
        let mut rng = Prng::from_os()?;
        let id = KeyId::sample(&mut rng);
        let lwe = LweSecretKey::binary(ctx.k * ctx.n, id, &mut rng);
        GlweSecretKey::from_lwe_key(ctx, lwe)
    }

    /// The GLWE key whose coefficients (two's complement, k N of them) and
    /// identity are those of `lwe`.
    pub(crate) fn from_lwe_key(ctx: Arc<GlweContext>, lwe: LweSecretKey) -> Result<GlweSecretKey> {
        if lwe.dimension() != ctx.k * ctx.n {
            return Err(Error::Mismatch(format!(
                "an LWE key of dimension {} for a GLWE key of k N = {}",
                lwe.dimension(),
                ctx.k * ctx.n
            )));
        }
        let mut ntt = Zeroizing::new(
            lwe.coefficients()
                .iter()
                .map(|&c| ctx.reduce_signed(c as i64))
                .collect::<Vec<_>>(),
        );
        for p in ntt.chunks_mut(ctx.n) {
            ctx.plan.forward(p)?;
        }
        Ok(GlweSecretKey {
            ctx,
            key: lwe.id(),
            ntt,
            lwe,
        })
    }

    /// The decomposition of the GGSWs this key encrypts.
    pub fn decomposer(&self) -> &Decomposer {
        &self.ctx.decomposer
    }

    /// The key's LWE view: the coefficients of S_1..S_k concatenated
    /// (dimension k N) of this key's identity, the key of
    /// [`GlweCiphertext::sample_extract`]'s output.
    pub fn lwe_key(&self) -> &LweSecretKey {
        &self.lwe
    }

    /// GLWE encryption of the plaintext polynomial M (N coefficients mod q):
    /// A_1..A_k uniform, B = sum_i A_i S_i + M + E, E Gaussian with the set's
    /// fresh GLWE deviation.
    pub fn encrypt_plaintext(&self, plaintext: &[u64]) -> Result<GlweCiphertext> {
        self.encrypt_plaintext_seeded(plaintext, fresh_seed()?, &mut Prng::from_os()?)
    }

    /// [`encrypt_plaintext`](Self::encrypt_plaintext) as the public seed of
    /// its mask and its body (N words, coefficient form).
    pub fn encrypt_plaintext_compressed(
        &self,
        plaintext: &[u64],
    ) -> Result<CompressedGlweCiphertext> {
        let seed = fresh_seed()?;
        let ct = self.encrypt_plaintext_seeded(plaintext, seed, &mut Prng::from_os()?)?;
        let body = ct.data[ct.ctx.k * ct.ctx.n..].to_vec();
        Ok(CompressedGlweCiphertext {
            ctx: ct.ctx,
            key: self.key,
            seed,
            body,
        })
    }

    /// The GLWE encryption of a plaintext whose mask is stream 0 of `seed`
    /// (in the NTT domain, as [`CompressedGlweCiphertext::decompress`]
    /// regenerates it), the noise from `noise_rng`.
    fn encrypt_plaintext_seeded(
        &self,
        plaintext: &[u64],
        seed: Seed,
        noise_rng: &mut Prng,
    ) -> Result<GlweCiphertext> {
        let ctx = &self.ctx;
        let (k, n) = (ctx.k, ctx.n);
        check_plaintext(ctx, plaintext)?;
        let mut data = vec![0u64; ctx.glwe_len()];
        self.encrypt_zero_ntt(seed, 0, noise_rng, &mut data)?;
        let mut m = Zeroizing::new(plaintext.to_vec());
        ctx.plan.forward(&mut m)?;
        add_assign(&ctx.modulus, &mut data[k * n..], &m)?;
        for p in data.chunks_mut(n) {
            ctx.plan.inverse(p)?;
        }
        Ok(GlweCiphertext {
            ctx: ctx.clone(),
            key: self.key,
            data,
        })
    }

    /// Encrypts the messages m_i in [0, p) (N of them, p = `message_modulus`
    /// in [2, q)) as the plaintext round(m_i q / p).
    pub fn encrypt(&self, messages: &[u64], message_modulus: u64) -> Result<GlweCiphertext> {
        self.encrypt_plaintext(&self.encode(messages, message_modulus)?)
    }

    /// [`encrypt`](Self::encrypt) as the public seed of its mask and its body.
    pub fn encrypt_compressed(
        &self,
        messages: &[u64],
        message_modulus: u64,
    ) -> Result<CompressedGlweCiphertext> {
        self.encrypt_plaintext_compressed(&self.encode(messages, message_modulus)?)
    }

    /// The plaintext round(m_i q / p) of messages m_i in [0, p), p in [2, q).
    fn encode(&self, messages: &[u64], message_modulus: u64) -> Result<Zeroizing<Vec<u64>>> {
        let (q, p) = (self.ctx.q(), message_modulus);
        if p < 2 || p >= q || messages.iter().any(|&m| m >= p) {
            return Err(Error::OutOfRange(format!(
                "messages modulo {p} (at least 2, below q)"
            )));
        }
        Ok(Zeroizing::new(
            messages
                .iter()
                .map(|&m| constant_time_quotient(m as u128 * q as u128 + p as u128 / 2, p))
                .collect(),
        ))
    }

    /// The phase B - sum_i A_i S_i = M + E (N coefficients in [0, q));
    /// secret (message and noise): zeroized when dropped.
    pub fn phase(&self, ct: &GlweCiphertext) -> Result<Zeroizing<Vec<u64>>> {
        check_operand(&self.ctx, self.key, ct)?;
        self.phase_of(&ct.data)
    }

    /// The messages round(phase_i p / q) mod p, p = `message_modulus` in
    /// [2, q) (in f64, without a division on the secret phase).
    pub fn decrypt(&self, ct: &GlweCiphertext, message_modulus: u64) -> Result<Vec<u64>> {
        let (q, p) = (self.ctx.q(), message_modulus);
        if p < 2 || p >= q {
            return Err(Error::OutOfRange(format!("message modulus {p}")));
        }
        let ratio = p as f64 / q as f64;
        Ok(self
            .phase(ct)?
            .iter()
            .map(|&v| {
                let r = (v as f64 * ratio).round() as u64;
                r * (r != p) as u64
            })
            .collect())
    }

    /// GGSW encryption of the small integer m, |m| < q (NTT form): for each
    /// r in 0..=k and level j, row (r, j) is a GLWE encryption of zero whose
    /// phase is shifted by -m g_j S_r for r < k and by m g_j for r = k.
    pub fn encrypt_ggsw(&self, message: i64) -> Result<GgswCiphertext> {
        Ok(self.encrypt_ggsw_seeded(message)?.1)
    }

    /// [`encrypt_ggsw`](Self::encrypt_ggsw) as the public seed of its masks
    /// and its (k + 1) l row bodies (NTT form).
    pub fn encrypt_ggsw_compressed(&self, message: i64) -> Result<CompressedGgswCiphertext> {
        let (seed, ggsw) = self.encrypt_ggsw_seeded(message)?;
        let (k, n) = (ggsw.ctx.k, ggsw.ctx.n);
        let bodies = (ggsw.data.chunks(ggsw.ctx.glwe_len()))
            .flat_map(|row| &row[k * n..])
            .copied()
            .collect();
        Ok(CompressedGgswCiphertext {
            ctx: ggsw.ctx,
            key: self.key,
            seed,
            bodies,
        })
    }

    /// A fresh GGSW of `message` and the seed of its masks (row i's mask is
    /// stream i of the seed).
    fn encrypt_ggsw_seeded(&self, message: i64) -> Result<(Seed, GgswCiphertext)> {
        let ctx = &self.ctx;
        let q = ctx.q();
        if message.unsigned_abs() >= q {
            return Err(Error::OutOfRange(format!("a GGSW message of {q} or more")));
        }
        // m mod q without a division on the (secret) message.
        let residue = (message as u64).wrapping_add(q & (message >> 63) as u64);
        let mut rng = Prng::from_os()?;
        let mut data = vec![0u64; ctx.ggsw_rows() * ctx.glwe_len()];
        let seed = fresh_seed()?;
        self.encrypt_ggsw_into(residue, seed, 0, &mut rng, &mut data)?;
        Ok((
            seed,
            GgswCiphertext {
                ctx: ctx.clone(),
                key: self.key,
                data,
            },
        ))
    }

    /// A GLWE encryption of zero in NTT form into `out` ((k + 1) N words):
    /// the mask is row `row` of `seed` (so keys compress to their bodies),
    /// B = NTT(E) + sum_i A_i S_i with E from `noise_rng`.
    fn encrypt_zero_ntt(
        &self,
        seed: Seed,
        row: u64,
        noise_rng: &mut Prng,
        out: &mut [u64],
    ) -> Result<()> {
        let ctx = &self.ctx;
        let (k, n) = (ctx.k, ctx.n);
        let (mask, body) = out.split_at_mut(k * n);
        ctx.uniform_mask(seed, row, mask)?;
        let noise = sample_wide_gaussian(n, ctx.noise_std, noise_rng)?;
        for (b, &e) in body.iter_mut().zip(noise.iter()) {
            *b = ctx.reduce_signed(e);
        }
        ctx.plan.forward(body)?;
        for (a, s) in mask.chunks(n).zip(self.ntt.chunks(n)) {
            mul_acc(&ctx.modulus, body, a, s)?;
        }
        Ok(())
    }

    /// The GGSW of `message` (a residue mod q) into `out` (NTT form, rows
    /// (r, j) at r l + j), the masks from rows `first_row ..` of `seed` and
    /// the noise from `noise_rng`: the bootstrapping key's GGSWs and
    /// [`encrypt_ggsw`](Self::encrypt_ggsw)'s.
    pub(crate) fn encrypt_ggsw_into(
        &self,
        message: u64,
        seed: Seed,
        first_row: u64,
        noise_rng: &mut Prng,
        out: &mut [u64],
    ) -> Result<()> {
        let ctx = &self.ctx;
        let (k, n, levels) = (ctx.k, ctx.n, ctx.decomposer.levels());
        let m = &ctx.modulus;
        for (row, chunk) in out.chunks_mut(ctx.glwe_len()).enumerate() {
            let (target, j) = (row / levels, row % levels);
            let value = m.mul_mod(ctx.decomposer.gadget()[j], message);
            self.encrypt_zero_ntt(seed, first_row + row as u64, noise_rng, chunk)?;
            let body = &mut chunk[k * n..];
            if target < k {
                let s = &self.ntt[target * n..(target + 1) * n];
                for (b, &si) in body.iter_mut().zip(s) {
                    *b = m.sub_mod(*b, m.mul_mod(value, si));
                }
            } else {
                body.iter_mut().for_each(|b| *b = m.add_mod(*b, value));
            }
        }
        Ok(())
    }

    /// The phase (coefficient form, N words) of a GLWE ciphertext of this
    /// key's shape in coefficient form. The phase and sum_i A_i S_i (which
    /// gives the phase with B) are wiped when dropped.
    pub(crate) fn phase_of(&self, ct: &[u64]) -> Result<Zeroizing<Vec<u64>>> {
        let ctx = &self.ctx;
        let (k, n) = (ctx.k, ctx.n);
        let mut acc = Zeroizing::new(vec![0u64; n]);
        let mut tmp = vec![0u64; n];
        for i in 0..k {
            tmp.copy_from_slice(&ct[i * n..(i + 1) * n]);
            ctx.plan.forward(&mut tmp)?;
            mul_acc(&ctx.modulus, &mut acc, &tmp, &self.ntt[i * n..(i + 1) * n])?;
        }
        ctx.plan.inverse(&mut acc)?;
        let m = &ctx.modulus;
        Ok(Zeroizing::new(
            ct[k * n..]
                .iter()
                .zip(acc.iter())
                .map(|(&b, &a)| m.sub_mod(b, a))
                .collect(),
        ))
    }
}

/// A GLWE ciphertext (A_1..A_k, B): k + 1 polynomials of N coefficients in
/// [0, q), coefficient form, of phase B - sum_i A_i S_i.
#[derive(Clone)]
pub struct GlweCiphertext {
    pub(crate) ctx: Arc<GlweContext>,
    /// The identity of the key it is under.
    pub(crate) key: KeyId,
    pub(crate) data: Vec<u64>,
}

impl std::fmt::Debug for GlweCiphertext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GlweCiphertext {{ k: {}, N: {}, .. }}",
            self.ctx.k, self.ctx.n
        )
    }
}

impl GlweCiphertext {
    /// The trivial GLWE (0, .., 0, M) of `params`' shape: no noise, phase M
    /// under every key, so it hides nothing (for public constants such as
    /// test vectors). It is made for the key `key` it will be combined with
    /// (e.g. a GGSW's [`key_id`](Self::key_id)) and carries that identity:
    /// a constant belongs to whichever key uses it, and naming that key
    /// keeps every result's identity its key's (no identity matches all).
    pub fn trivial(
        params: &TfheParameters,
        key: KeyId,
        plaintext: &[u64],
    ) -> Result<GlweCiphertext> {
        let ctx = crate::keys::context(params)?;
        check_plaintext(&ctx, plaintext)?;
        let mut data = vec![0u64; ctx.glwe_len()];
        data[ctx.k * ctx.n..].copy_from_slice(plaintext);
        Ok(GlweCiphertext { ctx, key, data })
    }

    /// A_1..A_k then B, N coefficients each.
    pub fn polynomials(&self) -> &[u64] {
        &self.data
    }

    /// X^e c: every polynomial times the monomial X^e in `Z_q[X]/(X^N + 1)`
    /// (e taken mod 2N; X^N = -1), so the phase becomes X^e (M + E).
    pub fn mul_monomial(&self, e: u64) -> GlweCiphertext {
        let n = self.ctx.n;
        let shift = (e % (2 * n as u64)) as usize;
        let mut data = vec![0u64; self.data.len()];
        for (src, dst) in self.data.chunks(n).zip(data.chunks_mut(n)) {
            rotate(&self.ctx.modulus, src, shift, dst);
        }
        GlweCiphertext {
            ctx: self.ctx.clone(),
            key: self.key,
            data,
        }
    }

    /// c + d (same k, N, q and key): the phases add, (M_c + M_d) + (E_c + E_d).
    pub fn add(&self, other: &GlweCiphertext) -> Result<GlweCiphertext> {
        check_operand(&self.ctx, self.key, other)?;
        let mut data = self.data.clone();
        add_assign(&self.ctx.modulus, &mut data, &other.data)?;
        Ok(GlweCiphertext {
            ctx: self.ctx.clone(),
            key: self.key,
            data,
        })
    }

    /// c - d (same k, N, q and key): the phases subtract, (M_c - M_d) + (E_c - E_d).
    pub fn sub(&self, other: &GlweCiphertext) -> Result<GlweCiphertext> {
        check_operand(&self.ctx, self.key, other)?;
        let mut data = vec![0u64; self.data.len()];
        sub(&self.ctx.modulus, &mut data, &self.data, &other.data)?;
        Ok(GlweCiphertext {
            ctx: self.ctx.clone(),
            key: self.key,
            data,
        })
    }

    /// Sample extraction of coefficient `index`: an LWE ciphertext modulo
    /// 2^64 of dimension k N under [`GlweSecretKey::lwe_key`] (it carries
    /// this ciphertext's key identity), of phase round(phase_index 2^64 / q)
    /// up to k N / 2 units of rounding.
    pub fn sample_extract(&self, index: usize) -> Result<LweCiphertext> {
        sample_extract(&self.ctx, &self.data, index, self.key)
    }
}

/// A fresh GLWE encryption as the public seed of its mask and its body B
/// (N coefficients): N + 4 words where a [`GlweCiphertext`] holds (k + 1) N.
/// Operations take the [`decompress`](Self::decompress)ed ciphertext.
#[derive(Clone)]
pub struct CompressedGlweCiphertext {
    pub(crate) ctx: Arc<GlweContext>,
    pub(crate) key: KeyId,
    pub(crate) seed: Seed,
    pub(crate) body: Vec<u64>,
}

impl CompressedGlweCiphertext {
    /// The ciphertext with its mask regenerated (stream 0 of the seed in
    /// the NTT domain, back to coefficient form).
    pub fn decompress(&self) -> Result<GlweCiphertext> {
        let ctx = &self.ctx;
        let mut data = vec![0u64; ctx.glwe_len()];
        let (mask, body) = data.split_at_mut(ctx.k * ctx.n);
        ctx.uniform_mask(self.seed, 0, mask)?;
        for p in mask.chunks_mut(ctx.n) {
            ctx.plan.inverse(p)?;
        }
        body.copy_from_slice(&self.body);
        Ok(GlweCiphertext {
            ctx: ctx.clone(),
            key: self.key,
            data,
        })
    }
}

/// A fresh GGSW as the public seed of its masks and its (k + 1) l row bodies
/// (NTT form), as the bootstrapping key is stored: (k + 1) l N + 4 words
/// where a [`GgswCiphertext`] holds (k + 1)^2 l N.
#[derive(Clone)]
pub struct CompressedGgswCiphertext {
    pub(crate) ctx: Arc<GlweContext>,
    pub(crate) key: KeyId,
    pub(crate) seed: Seed,
    pub(crate) bodies: Vec<u64>,
}

impl CompressedGgswCiphertext {
    /// The GGSW with every row's mask regenerated (row i: stream i of the seed).
    pub fn decompress(&self) -> Result<GgswCiphertext> {
        let ctx = &self.ctx;
        let (k, n) = (ctx.k, ctx.n);
        let mut data = vec![0u64; ctx.ggsw_rows() * ctx.glwe_len()];
        for (i, (row, body)) in data
            .chunks_mut(ctx.glwe_len())
            .zip(self.bodies.chunks(n))
            .enumerate()
        {
            let (mask, dst) = row.split_at_mut(k * n);
            ctx.uniform_mask(self.seed, i as u64, mask)?;
            dst.copy_from_slice(body);
        }
        Ok(GgswCiphertext {
            ctx: ctx.clone(),
            key: self.key,
            data,
        })
    }
}

/// A GGSW ciphertext of a small integer m: (k + 1) l GLWE rows (row (r, j)
/// at r l + j) in the NTT domain, like the bootstrapping key's.
#[derive(Clone)]
pub struct GgswCiphertext {
    pub(crate) ctx: Arc<GlweContext>,
    /// The identity of the key it is under.
    pub(crate) key: KeyId,
    pub(crate) data: Vec<u64>,
}

impl std::fmt::Debug for GgswCiphertext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GgswCiphertext {{ k: {}, N: {}, levels: {}, .. }}",
            self.ctx.k,
            self.ctx.n,
            self.ctx.decomposer.levels()
        )
    }
}

impl GgswCiphertext {
    /// The gadget decomposition of its rows (and of the external product's input).
    pub fn decomposer(&self) -> &Decomposer {
        &self.ctx.decomposer
    }

    /// The external product GGSW(m) (x) c = sum_{r, j} D_{r, j}(c) row_{r, j},
    /// D the signed decomposition of c's k + 1 polynomials: a GLWE of phase
    /// m phase(c) plus the digits times the rows' noise plus m times the
    /// decomposition's error on the key.
    pub fn external_product(&self, c: &GlweCiphertext) -> Result<GlweCiphertext> {
        check_operand(&self.ctx, self.key, c)?;
        let ctx = &self.ctx;
        let mut s = Scratch::new(ctx);
        decompose_glwe(ctx, &c.data, &mut s.digits);
        let mut out = vec![0u64; ctx.glwe_len()];
        external_product_add(ctx, &self.data, &mut out, &mut s.digits, &mut s.out)?;
        Ok(GlweCiphertext {
            ctx: ctx.clone(),
            key: self.key,
            data: out,
        })
    }

    /// CMux(b; c0, c1) = c0 + GGSW(b) (x) (c1 - c0) for this GGSW of a bit
    /// b: c0 when b = 0, c1 when b = 1 (plus the external product's noise).
    pub fn cmux(&self, c0: &GlweCiphertext, c1: &GlweCiphertext) -> Result<GlweCiphertext> {
        check_operand(&self.ctx, self.key, c0)?;
        check_operand(&self.ctx, self.key, c1)?;
        let ctx = &self.ctx;
        let mut s = Scratch::new(ctx);
        let mut diff = vec![0u64; ctx.glwe_len()];
        sub(&ctx.modulus, &mut diff, &c1.data, &c0.data)?;
        decompose_glwe(ctx, &diff, &mut s.digits);
        let mut out = c0.data.clone();
        external_product_add(ctx, &self.data, &mut out, &mut s.digits, &mut s.out)?;
        Ok(GlweCiphertext {
            ctx: ctx.clone(),
            key: self.key,
            data: out,
        })
    }

    /// The blind rotation's step, in place: acc <- CMux(b; acc, X^e acc) =
    /// acc + GGSW(b) (x) (X^e acc - acc), with the rotation, subtraction and
    /// decomposition in one pass. The same result, bit for bit, as
    /// `cmux(acc, &acc.mul_monomial(e))`.
    pub fn cmux_rotate_assign(&self, acc: &mut GlweCiphertext, e: u64) -> Result<()> {
        check_operand(&self.ctx, self.key, acc)?;
        let shift = (e % (2 * self.ctx.n as u64)) as usize;
        let mut s = Scratch::new(&self.ctx);
        cmux_rotate(&self.ctx, &self.data, shift, &mut acc.data, &mut s)
    }
}

/// Sample extraction of coefficient `index` of the GLWE `glwe` (coefficient
/// form, (k + 1) N words) under the key of identity `key`: see
/// [`GlweCiphertext::sample_extract`].
pub(crate) fn sample_extract(
    ctx: &GlweContext,
    glwe: &[u64],
    index: usize,
    key: KeyId,
) -> Result<LweCiphertext> {
    let (k, n) = (ctx.k, ctx.n);
    if glwe.len() != ctx.glwe_len() {
        return Err(Error::Mismatch("GLWE of another shape".into()));
    }
    let masks: Vec<&[u64]> = glwe[..k * n].chunks(n).collect();
    Ok(LweCiphertext::sample_extract(
        &masks,
        &glwe[k * n..],
        ctx.q(),
        index,
        key,
    )?)
}

/// out = X^shift * p in `Z_q[X]/(X^N + 1)`, for shift in [0, 2N).
pub(crate) fn rotate(m: &Modulus, p: &[u64], shift: usize, out: &mut [u64]) {
    let q = m.value();
    let n = p.len();
    let (shift, negate) = if shift >= n {
        (shift - n, true)
    } else {
        (shift, false)
    };
    // Coefficients that wrap past X^N change sign (once more if shift >= N).
    let neg = |v: u64| if v == 0 { 0 } else { q - v };
    let (low, high) = p.split_at(n - shift);
    let (out_low, out_high) = out.split_at_mut(shift);
    for (o, &v) in out_high.iter_mut().zip(low) {
        *o = if negate { neg(v) } else { v };
    }
    for (o, &v) in out_low.iter_mut().zip(high) {
        *o = if negate { v } else { neg(v) };
    }
}

/// out = X^shift * p - p, for shift in [0, 2N), in one pass (the
/// decomposition reads it next, so every value is reduced to [0, q)).
fn rotate_minus_one(m: &Modulus, p: &[u64], shift: usize, out: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only
        // requirement of the target-feature function.
        unsafe { rotate_minus_one_avx2(m, p, shift, out) };
        return;
    }
    rotate_minus_one_portable(m, p, shift, out);
}

/// The same loops compiled for AVX2 (vectorized by the compiler: 4 lanes).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rotate_minus_one_avx2(m: &Modulus, p: &[u64], shift: usize, out: &mut [u64]) {
    rotate_minus_one_portable(m, p, shift, out)
}

#[inline(always)]
fn rotate_minus_one_portable(m: &Modulus, p: &[u64], shift: usize, out: &mut [u64]) {
    rotate_minus_one_map(m.value(), p, shift, out, |d| d);
}

/// out[i] = f((X^shift p - p)[i]), the difference reduced to [0, q).
#[inline(always)]
fn rotate_minus_one_map(
    q: u64,
    p: &[u64],
    shift: usize,
    out: &mut [u64],
    f: impl Fn(u64) -> u64 + Copy,
) {
    let n = p.len();
    let (shift, negate) = if shift >= n {
        (shift - n, true)
    } else {
        (shift, false)
    };
    // a - b mod q for a, b in [0, q), without a branch.
    #[inline(always)]
    fn sub(q: u64, a: u64, b: u64) -> u64 {
        let d = a.wrapping_sub(b);
        d.wrapping_add(q & 0u64.wrapping_sub(d >> 63))
    }
    // out[i] = f(+-src[i] - cur[i]); the sign test is outside the loops so
    // that each one vectorizes (inlined into the callers' target features).
    #[inline(always)]
    fn signed_diff(
        q: u64,
        out: &mut [u64],
        src: &[u64],
        cur: &[u64],
        negative: bool,
        f: impl Fn(u64) -> u64,
    ) {
        let pairs = out.iter_mut().zip(src.iter().zip(cur));
        if negative {
            pairs.for_each(|(o, (&v, &w))| *o = f(sub(q, sub(q, 0, v), w)));
        } else {
            pairs.for_each(|(o, (&v, &w))| *o = f(sub(q, v, w)));
        }
    }
    // Coefficients that wrap past X^N change sign (once more if shift >= N).
    let (low, high) = p.split_at(n - shift);
    let (cur_low, cur_high) = p.split_at(shift);
    let (out_low, out_high) = out.split_at_mut(shift);
    signed_diff(q, out_high, low, cur_high, negate, f);
    signed_diff(q, out_low, high, cur_low, !negate, f);
}

/// Scratch space of one external product, on cache lines (N >= 256 words
/// per polynomial, so every polynomial of it starts on one): the NTT kernels
/// run slower on buffers that straddle them.
pub(crate) struct Scratch {
    digits: AlignedVec,
    out: AlignedVec,
    /// X^shift p - p of one polynomial, for decompositions of l > 1 levels.
    diff: AlignedVec,
}

impl Scratch {
    pub(crate) fn new(ctx: &GlweContext) -> Scratch {
        Scratch {
            digits: aligned_zeros(ctx.ggsw_rows() * ctx.n),
            out: aligned_zeros(ctx.glwe_len()),
            diff: aligned_zeros(ctx.n),
        }
    }
}

/// acc += GGSW (x) input, from the (k + 1) l digit polynomials of the input
/// (coefficient form, `digits`): forward NTT them, sum their products with
/// the rows in the NTT domain (one lazy dot product per output polynomial,
/// reduced once), and run only k + 1 inverse transforms for the whole product.
fn external_product_add(
    ctx: &GlweContext,
    ggsw: &[u64],
    acc: &mut [u64],
    digits: &mut [u64],
    out: &mut [u64],
) -> Result<()> {
    let (k, n) = (ctx.k, ctx.n);
    for d in digits.chunks_mut(n) {
        ctx.plan.forward(d)?;
    }
    let rows: Vec<&[u64]> = digits.chunks(n).collect();
    for c in 0..=k {
        add_output(
            ctx,
            ggsw,
            &rows,
            c,
            &mut out[c * n..(c + 1) * n],
            &mut acc[c * n..(c + 1) * n],
        )?;
    }
    Ok(())
}

/// Output polynomial c of an external product: o = INTT(sum over rows of
/// the NTT-domain digit `rows` times the GGSW rows' column c), then acc_c += o.
fn add_output(
    ctx: &GlweContext,
    ggsw: &[u64],
    rows: &[&[u64]],
    c: usize,
    o: &mut [u64],
    acc_c: &mut [u64],
) -> Result<()> {
    let (n, len) = (ctx.n, ctx.glwe_len());
    let key_rows: Vec<&[u64]> = (0..rows.len())
        .map(|row| &ggsw[row * len + c * n..row * len + (c + 1) * n])
        .collect();
    dot(&ctx.modulus, o, rows, &key_rows)?;
    ctx.plan.inverse(o)?;
    add_assign(&ctx.modulus, acc_c, o)?;
    Ok(())
}

/// CMux(ggsw of bit s, acc, X^shift acc) in place: acc += GGSW (x) (X^shift acc - acc).
pub(crate) fn cmux_rotate(
    ctx: &GlweContext,
    ggsw: &[u64],
    shift: usize,
    acc: &mut [u64],
    s: &mut Scratch,
) -> Result<()> {
    let (n, levels) = (ctx.n, ctx.decomposer.levels());
    let m = &ctx.modulus;
    for (src, block) in acc.chunks(n).zip(s.digits.chunks_mut(levels * n)) {
        if levels == 1 {
            ctx.decomposer.decompose_rotated(src, shift, block);
        } else {
            rotate_minus_one(m, src, shift, &mut s.diff);
            ctx.decomposer.decompose(&s.diff, block);
        }
    }
    external_product_add(ctx, ggsw, acc, &mut s.digits, &mut s.out)
}

/// acc += GGSW (x) acc (the multi-bit step: the GGSW's message is
/// X^e - 1, so acc becomes X^e acc): decompose acc, then the external product.
/// With `spread`, the k + 1 input and output polynomials go over the pool:
/// each input's decomposition and forward NTTs, then each output's `dot`,
/// inverse NTT and addition, are independent; an idle worker steals them, a
/// busy one leaves them to the calling thread. The same words either way.
pub(crate) fn add_external_product(
    ctx: &GlweContext,
    ggsw: &[u64],
    acc: &mut [u64],
    s: &mut Scratch,
    spread: bool,
) -> Result<()> {
    if !spread {
        decompose_glwe(ctx, acc, &mut s.digits);
        return external_product_add(ctx, ggsw, acc, &mut s.digits, &mut s.out);
    }
    let n = ctx.n;
    let block = ctx.decomposer.levels() * n;
    acc.par_chunks(n)
        .zip(s.digits.par_chunks_mut(block))
        .try_for_each(|(src, out)| -> Result<()> {
            ctx.decomposer.decompose(src, out);
            for d in out.chunks_mut(n) {
                ctx.plan.forward(d)?;
            }
            Ok(())
        })?;
    let rows: Vec<&[u64]> = s.digits.chunks(n).collect();
    s.out
        .par_chunks_mut(n)
        .zip(acc.par_chunks_mut(n))
        .enumerate()
        .try_for_each(|(c, (o, a))| add_output(ctx, ggsw, &rows, c, o, a))
}

/// The (k + 1) l digit polynomials of a GLWE (coefficient form) into `digits`.
fn decompose_glwe(ctx: &GlweContext, glwe: &[u64], digits: &mut [u64]) {
    let block = ctx.decomposer.levels() * ctx.n;
    for (src, out) in glwe.chunks(ctx.n).zip(digits.chunks_mut(block)) {
        ctx.decomposer.decompose(src, out);
    }
}

/// A zeroed buffer for a bootstrapping key: on a cache line (its rows are
/// the `dot` kernel's operands) and on huge pages where the OS allows (a
/// blind rotation streams the whole key once).
pub(crate) fn key_buffer(len: usize) -> AlignedVec {
    huge_page_zeros(len)
}

/// Generates n GGSW encryptions of the key bits in parallel (rayon); each
/// GGSW's noise comes from its own stream of a secret seed.
pub(crate) fn generate_ggsws(
    key: &GlweSecretKey,
    bits: &[u64],
    seed: Seed,
    rng: &mut Prng,
) -> Result<AlignedVec> {
    let ctx = &key.ctx;
    let per = ctx.ggsw_rows() * ctx.glwe_len();
    let mut out = key_buffer(bits.len() * per);
    let noise_seed = Zeroizing::new(rng.gen_seed());
    out.par_chunks_mut(per)
        .zip(bits.par_iter())
        .enumerate()
        .try_for_each(|(i, (chunk, &bit))| {
            let mut noise_rng = Prng::from_seed_stream(*noise_seed, i as u64);
            let first_row = (i * ctx.ggsw_rows()) as u64;
            key.encrypt_ggsw_into(bit, seed, first_row, &mut noise_rng, chunk)
        })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel buffer of a bootstrap starts on a cache line: the
    /// scratch (digits, NTT outputs, differences), its polynomials, and the
    /// bootstrapping key and its GGSWs, for small and mapped (> 128 KB) sizes.
    #[test]
    fn bootstrap_buffers_start_on_cache_lines() {
        let on_line = |p: &[u64]| (p.as_ptr() as usize).is_multiple_of(64);
        for (k, n, levels) in [(1, 2048, 1), (2, 1024, 1), (1, 8192, 2)] {
            let ctx = GlweContext::new("test", k, n, 50, (15, levels), 1e-14).unwrap();
            let s = Scratch::new(&ctx);
            for buf in [&s.digits, &s.out, &s.diff] {
                assert!(buf.chunks(n).all(on_line), "k {k} N {n}");
            }
            let per = ctx.ggsw_rows() * ctx.glwe_len();
            for ggsws in [1, 3, 100] {
                let key = key_buffer(ggsws * per);
                assert_eq!(key.len(), ggsws * per);
                assert!(key.iter().all(|&v| v == 0));
                assert!(key.chunks(n).all(on_line), "{ggsws} GGSWs, N {n}");
            }
        }
    }

    /// The constant-time quotient equals the hardware one, edges included.
    #[test]
    fn constant_time_quotient_matches_division() {
        let mut rng = Prng::from_seed([9; 32]);
        for p in [2u64, 3, 16, 1 << 40, (1 << 50) - 27, u64::MAX] {
            let mut xs = vec![0u128, 1, p as u128 - 1, p as u128, (p as u128) << 63];
            xs.push(((p as u128) << 64) - 1);
            for _ in 0..200 {
                let x = ((rng.below(u64::MAX).unwrap() as u128) << 64)
                    | rng.below(u64::MAX).unwrap() as u128;
                xs.push(x % ((p as u128) << 64));
            }
            for x in xs {
                assert_eq!(
                    constant_time_quotient(x, p) as u128,
                    x / p as u128,
                    "{x} / {p}"
                );
            }
        }
    }

    /// X^shift p - p against the negacyclic product computed term by term,
    /// for every shift in [0, 2N), with 0 and q - 1 among the coefficients.
    #[test]
    fn rotate_minus_one_is_the_negacyclic_difference() {
        let q = ntt_primes(50, 1024, 1).unwrap()[0];
        let m = Modulus::new(q).unwrap();
        let mut rng = Prng::from_seed([4; 32]);
        let n = 16;
        let mut p: Vec<u64> = (0..n - 3).map(|_| rng.below(q).unwrap()).collect();
        p.extend([0, 1, q - 1]);
        let mut out = vec![0u64; n];
        for shift in 0..2 * n {
            rotate_minus_one(&m, &p, shift, &mut out);
            let mut want: Vec<u64> = p.iter().map(|&v| m.neg_mod(v)).collect();
            for (i, &v) in p.iter().enumerate() {
                // X^shift X^i = (-1)^((i + shift) / N) X^((i + shift) mod N).
                let (j, wraps) = ((i + shift) % n, ((i + shift) / n) % 2 == 1);
                let term = if wraps { m.neg_mod(v) } else { v };
                want[j] = m.add_mod(want[j], term);
            }
            assert_eq!(out, want, "shift {shift}");
        }
    }

    /// The dispatched (AVX-512 or AVX2 where the CPU has it) decomposition
    /// gives, bit for bit, the digits of y = floor(x B^l / q + 1/2) computed
    /// with Rust's own integer <-> f64 conversions, one coefficient at a
    /// time (the fast loop converts through the 2^52 exponent instead).
    #[test]
    fn decomposition_paths_agree() {
        let q = ntt_primes(50, 1024, 1).unwrap()[0];
        let mut rng = Prng::from_seed([9; 32]);
        let mut xs: Vec<u64> = (0..1017).map(|_| rng.below(q).unwrap()).collect();
        // Edges, and values whose scaled form is a tie or next to one.
        xs.extend([0, 1, q - 1, q / 2 - 1, q / 2, q / 2 + 1, q - 2]);
        for (base_log, levels) in [(23u32, 1u32), (15, 2), (2, 10)] {
            let d = Decomposer::new(q, base_log, levels).unwrap();
            let mut fast = vec![0u64; levels as usize * xs.len()];
            d.decompose(&xs, &mut fast);
            let (base, n) = (1u64 << base_log, xs.len());
            let mask = (1u64 << (base_log * levels)) - 1;
            for (i, &x) in xs.iter().enumerate() {
                let mut y = (x as f64 * d.scale + 0.5) as u64 & mask;
                for level in (0..levels as usize).rev() {
                    let v = y & (base - 1);
                    let carry = (v >= base / 2) as u64;
                    y = (y >> base_log) + carry;
                    let want = if carry == 1 { q - (base - v) } else { v };
                    let got = fast[level * n + i];
                    assert_eq!(got, want, "B = 2^{base_log}, l = {levels}, x = {x}");
                }
            }
        }
    }

    /// The fused rotation + decomposition (dispatched, and the portable
    /// loop) against `rotate_minus_one` then `decompose`, for every shift
    /// of a short polynomial with 0, 1, q - 1 and values next to q / 2 (ties
    /// of the rounding), and for random shifts at N = 2048.
    #[test]
    fn decompose_rotated_is_rotation_then_decomposition() {
        let q = ntt_primes(50, 2048, 1).unwrap()[0];
        let m = Modulus::new(q).unwrap();
        let d = Decomposer::new(q, 23, 1).unwrap();
        let mut rng = Prng::from_seed([6; 32]);
        let check = |p: &[u64], shift: usize| {
            let n = p.len();
            let (mut diff, mut want) = (vec![0u64; n], vec![0u64; n]);
            rotate_minus_one(&m, p, shift, &mut diff);
            d.decompose(&diff, &mut want);
            let (mut fused, mut portable) = (vec![0u64; n], vec![0u64; n]);
            d.decompose_rotated(p, shift, &mut fused);
            d.decompose_rotated_portable(p, shift, &mut portable);
            assert_eq!(fused, want, "n = {n}, shift {shift}");
            assert_eq!(portable, want, "n = {n}, shift {shift}");
        };
        let mut p: Vec<u64> = (0..10).map(|_| rng.below(q).unwrap()).collect();
        p.extend([0, 1, q - 1, q / 2 - 1, q / 2, q / 2 + 1]);
        for shift in 0..2 * p.len() {
            check(&p, shift);
        }
        let p: Vec<u64> = (0..2048).map(|_| rng.below(q).unwrap()).collect();
        for _ in 0..20 {
            check(&p, rng.below(4096).unwrap() as usize);
        }
    }

    /// floor_small and f64_from_small against Rust's conversions on edges.
    #[test]
    fn exponent_conversions_are_exact() {
        let mut rng = Prng::from_seed([3; 32]);
        let mut xs: Vec<u64> = (0..1000).map(|_| rng.below(1 << 52).unwrap()).collect();
        xs.extend([0, 1, 2, 3, (1 << 51) - 1, (1 << 52) - 1]);
        for &x in &xs {
            assert_eq!(f64_from_small(x), x as f64);
        }
        for &x in xs.iter().filter(|&&x| x < 1 << 51) {
            let v = x as f64;
            // v, quarters above it, and the doubles just above v and just below v + 1.
            let up = f64::from_bits(v.to_bits() + 1);
            let below_next = f64::from_bits((v + 1.0).to_bits() - 1);
            for w in [v, v + 0.25, v + 0.5, v + 0.75, up, below_next] {
                if w < (1u64 << 51) as f64 {
                    assert_eq!(floor_small(w), w as u64, "floor({w})");
                }
            }
        }
    }
}
