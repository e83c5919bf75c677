//! Encrypted biometric match: inner products of an encrypted probe embedding
//! with enrolled templates, computed by the server without seeing either the
//! probe or the scores, and returning only the scores.
//!
//! - Embeddings are `DIM` = 128 signed 8-bit features in [-127, 127] (the
//!   symmetric int8 quantization), so every score lies in
//!   [-128 * 127^2, 128 * 127^2] and the plaintext modulus
//!   [`match_plain_modulus`] (a prime = 1 mod 2n above twice that bound)
//!   holds it exactly.
//! - The client replicates its probe into every 128-slot block of a
//!   ciphertext and encrypts it with its secret key (symmetric encryption:
//!   smaller noise and a seed-compressed upload). It gives the server
//!   [`MatchKeys`]: Galois keys for the rotations and its public key.
//! - The server packs n / 128 templates per plaintext (64 at n = 8192),
//!   template b in slots 128 b .. 128 b + 127, multiplies (one plaintext
//!   product per group) and sums each block: one hoisted sum of the
//!   rotations by 0, 1, 2, 3 (one ModUp and one ModDown for the three key
//!   switches), then 5 rotate-and-add steps (by 64, 32, ..., 4): slot 128 b
//!   then holds <probe, template b>.
//! - Every other slot then holds a partial window sum that would reveal
//!   differences between neighbouring templates, so the server multiplies by
//!   the 0/1 score mask (a plaintext product: no key switch, about
//!   log2(t sqrt(n / 12)) bits of noise) and re-randomizes with a fresh
//!   encryption of zero under the client's public key. The client decrypts
//!   only zeros outside the score slots ([`decrypt_scores`] checks it).
//! - What the default output still carries is its noise, which depends on the
//!   templates (the probe's noise times the template plaintexts, summed by
//!   the rotations): a client that knows its own secret key can measure it.
//!   [`MatchPrivacy::Flooded`] adds noise flooding with a stated statistical
//!   security, on [`private_match_parameters`], which have room for it.
//!
//! The mask multiplication is why the match needs about 62 bits of noise
//! room after the rotations: the N = 4096 sets (at most 106 bits of QP) cannot
//! give it with t ~ 2^22, so [`match_parameters`] is an N = 8192 set whose
//! primes are all below 2^50 (the IFMA kernels serve every one).

use std::sync::Arc;

use triskel_ring::LweCiphertext;

use crate::ciphertext::Ciphertext;
use crate::context::BfvContext;
use crate::encoding::Plaintext;
use crate::error::{Error, Result};
use crate::keys::{GaloisKeys, PublicKey, SecretKey};
use crate::params::BfvParameters;

/// Features per embedding.
pub const DIM: usize = 128;
/// Largest feature magnitude (int8, symmetric).
pub const MAX_FEATURE: i64 = 127;
/// Statistical security of [`MatchPrivacy::Flooded`] in
/// [`MatchPrivacy::flooded`], in bits.
pub const FLOODING_SECURITY: u32 = 40;

/// One embedding.
pub type Embedding = [i8; DIM];

/// The smallest prime t = 1 mod 2n with t > 2 * 128 * 127^2: every score
/// fits in (-t/2, t/2].
pub fn match_plain_modulus(n: usize) -> Result<u64> {
    let bound = 2 * DIM as u64 * (MAX_FEATURE * MAX_FEATURE) as u64;
    let step = 2 * n as u64;
    let mut t = (bound / step + 1) * step + 1;
    while !triskel_kernels::is_prime(t) {
        t += step;
    }
    Ok(t)
}

/// `base` with [`match_plain_modulus`] as plaintext modulus.
pub fn match_parameters_for(base: BfvParameters) -> Result<BfvParameters> {
    let t = match_plain_modulus(base.n())?;
    Ok(base.with_plain_modulus(t))
}

/// The set of the default (masked) match: N = 8192, Q = 2 x 50 bits,
/// P = 50 bits (log QP = 150 of the 214 allowed), one prime per key-switching
/// digit, t = [`match_plain_modulus`].
pub fn match_parameters() -> Result<BfvParameters> {
    let base = BfvParameters::new("bfv-n8192-match", 8192, &[50, 50], &[50], 2).with_dnum(2);
    match_parameters_for(base)
}

/// The set of the flooded match: N = 8192, Q = 3 x 50 bits, P = 50 bits
/// (log QP = 200 of 214): about 40 bits more room, which 40-bit flooding uses.
pub fn private_match_parameters() -> Result<BfvParameters> {
    let base =
        BfvParameters::new("bfv-n8192-match-private", 8192, &[50, 50, 50], &[50], 2).with_dnum(3);
    match_parameters_for(base)
}

/// What the returned ciphertexts may reveal to the key holder besides the
/// scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchPrivacy {
    /// Non-score slots are zero and the ciphertext is re-randomized; its
    /// noise still depends on the templates (module documentation).
    Masked,
    /// Masked, then noise flooding with `statistical_security` bits
    /// ([`Ciphertext::flood`]): the output is statistically independent of
    /// the templates beyond the scores.
    Flooded {
        /// log2 of the inverse statistical distance.
        statistical_security: u32,
    },
}

impl MatchPrivacy {
    /// Flooding at [`FLOODING_SECURITY`] bits.
    pub fn flooded() -> MatchPrivacy {
        MatchPrivacy::Flooded {
            statistical_security: FLOODING_SECURITY,
        }
    }
}

fn check_features(e: &Embedding) -> Result<()> {
    if e.contains(&i8::MIN) {
        return Err(Error::Encoding(format!(
            "features must be in [-{MAX_FEATURE}, {MAX_FEATURE}]; -128 is outside the symmetric int8 range"
        )));
    }
    Ok(())
}

/// Every score, |score| <= 128 x 127^2, must fit in (-t/2, t/2]: with a
/// smaller t the scores would wrap and decrypt wrong without an error.
fn check_score_modulus(ctx: &BfvContext) -> Result<()> {
    let bound = 2 * DIM as u64 * (MAX_FEATURE * MAX_FEATURE) as u64;
    if ctx.plain_modulus() <= bound {
        return Err(Error::InvalidParameters(format!(
            "t = {} is too small for match scores (it must exceed {bound}): \
             use match_parameters_for",
            ctx.plain_modulus()
        )));
    }
    Ok(())
}

fn blocks_per_ciphertext(ctx: &BfvContext) -> Result<usize> {
    check_score_modulus(ctx)?;
    if !(ctx.n() / 2).is_multiple_of(DIM) {
        return Err(Error::InvalidParameters(format!(
            "n = {} is too small for {DIM}-feature blocks",
            ctx.n()
        )));
    }
    Ok(ctx.n() / DIM)
}

/// Rotations summed by one hoisted [`Ciphertext::sum_of_rotations`] (0 up to
/// this, exclusive) before the rotate-and-add tree takes over.
const HOISTED: usize = 4;

/// What the client gives the server: Galois keys for rotations by
/// 1, 2, 3 (the hoisted sum) and 4, 8, ..., 64 (the tree), and its public key
/// (for re-randomization and flooding).
#[derive(Clone, Debug)]
pub struct MatchKeys {
    /// Rotations of the rotate-and-add tree.
    pub galois: GaloisKeys,
    /// Encryptions of zero that re-randomize the output.
    pub public: PublicKey,
}

/// Client: the keys the server needs.
pub fn match_keys(sk: &SecretKey) -> Result<MatchKeys> {
    let hoisted = 1..HOISTED as i64;
    let tree = (HOISTED.trailing_zeros()..DIM.trailing_zeros()).map(|b| 1i64 << b);
    let steps: Vec<i64> = hoisted.chain(tree).collect();
    Ok(MatchKeys {
        galois: sk.galois_keys(&steps, false)?,
        public: sk.public_key()?,
    })
}

/// Client: the probe replicated into every block, as a plaintext.
pub fn encode_probe(ctx: &Arc<BfvContext>, probe: &Embedding) -> Result<Plaintext> {
    check_features(probe)?;
    let blocks = blocks_per_ciphertext(ctx)?;
    let slots: Vec<i64> = (0..blocks)
        .flat_map(|_| probe.iter().map(|&f| f as i64))
        .collect();
    Plaintext::from_signed_slots(ctx, &slots)
}

/// Server: the enrolled templates, n / 128 per plaintext, and the 0/1 mask
/// of the score slots.
pub struct EncodedTemplates {
    groups: Vec<Plaintext>,
    mask: Plaintext,
    count: usize,
}

impl EncodedTemplates {
    /// Number of templates.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when there are no templates.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Number of plaintexts (and of score ciphertexts).
    pub fn groups(&self) -> usize {
        self.groups.len()
    }
}

/// Server: encodes the enrolled templates.
pub fn encode_templates(
    ctx: &Arc<BfvContext>,
    templates: &[Embedding],
) -> Result<EncodedTemplates> {
    let blocks = blocks_per_ciphertext(ctx)?;
    let groups = templates
        .chunks(blocks)
        .map(|group| {
            group.iter().try_for_each(check_features)?;
            let slots: Vec<i64> = group
                .iter()
                .flat_map(|t| t.iter().map(|&f| f as i64))
                .collect();
            Plaintext::from_signed_slots(ctx, &slots)
        })
        .collect::<Result<Vec<_>>>()?;
    let mask: Vec<u64> = (0..ctx.n()).map(|s| (s % DIM == 0) as u64).collect();
    Ok(EncodedTemplates {
        groups,
        mask: Plaintext::from_slots(ctx, &mask)?,
        count: templates.len(),
    })
}

/// Server: one ciphertext of scores per template group: probe * group,
/// the hoisted sum of its rotations by 0..4, rotate-and-add by 64, 32, ...,
/// 4 (slot 128 b holds the inner product with template b), the score mask,
/// then re-randomization or flooding.
pub fn compute_scores(
    probe: &Ciphertext,
    templates: &EncodedTemplates,
    keys: &MatchKeys,
    privacy: MatchPrivacy,
) -> Result<Vec<Ciphertext>> {
    keys.galois.check(probe)?;
    keys.public.check(probe)?;
    templates
        .groups
        .iter()
        .map(|group| {
            let hoisted: Vec<i64> = (0..HOISTED as i64).collect();
            let acc = probe
                .mul_plain(group)?
                .sum_of_rotations(&hoisted, &keys.galois)?;
            // Steps DIM/2, ..., HOISTED, moved down once (lazy ModDown).
            let tree: Vec<i64> = std::iter::successors(Some(DIM / 2), |s| Some(s / 2))
                .take_while(|&s| s >= HOISTED)
                .map(|s| s as i64)
                .collect();
            let acc = acc.rotation_tree_sum(&tree, &keys.galois)?;
            let masked = acc.mul_plain(&templates.mask)?;
            match privacy {
                MatchPrivacy::Masked => masked.rerandomize(&keys.public),
                MatchPrivacy::Flooded {
                    statistical_security,
                } => masked.flood(&keys.public, statistical_security),
            }
        })
        .collect()
}

/// Client: the `count` scores, in template order. Checks that every other
/// slot decrypts to zero (an error otherwise: the server did not mask).
pub fn decrypt_scores(sk: &SecretKey, scores: &[Ciphertext], count: usize) -> Result<Vec<i64>> {
    let blocks = blocks_per_ciphertext(sk.context())?;
    let mut out = Vec::with_capacity(count.min(scores.len() * blocks));
    for ct in scores {
        let slots = sk.decrypt(ct)?.to_signed_slots()?;
        if let Some(s) = (0..slots.len()).find(|&s| s % DIM != 0 && slots[s] != 0) {
            return Err(Error::Encoding(format!(
                "slot {s} is not 0: outside the score slots everything must be 0 (its value is not shown: it is decrypted data)"
            )));
        }
        out.extend((0..blocks).map(|b| slots[b * DIM]));
    }
    if out.len() < count {
        return Err(Error::Encoding(format!(
            "{} scores decrypted, {count} requested",
            out.len()
        )));
    }
    out.truncate(count);
    Ok(out)
}

/// log2 of the plaintext modulus of the coefficient-encoded match: every
/// score (|score| <= 128 * 127^2 < 2^21) and every threshold difference
/// score - threshold with |threshold| <= 2^21 fits in [-2^22, 2^22).
pub const COEFFICIENT_MATCH_LOG_T: u32 = 23;

/// Templates per plaintext of the coefficient-encoded match: n / 128.
fn coefficient_blocks(ctx: &BfvContext) -> Result<usize> {
    check_score_modulus(ctx)?;
    if !ctx.n().is_multiple_of(DIM) {
        return Err(Error::InvalidParameters(format!(
            "n = {} is not a multiple of {DIM}",
            ctx.n()
        )));
    }
    Ok(ctx.n() / DIM)
}

/// The set of the coefficient-encoded match: the shallow N = 4096 set (one
/// 62-bit prime, log QP = 106; depth 0 needs no more) with t = 2^23. A power
/// of two: no batching is needed, and on the torus a score sits at
/// m 2^(64 - 23) exactly, which the TFHE transition relies on.
pub fn coefficient_match_parameters() -> BfvParameters {
    BfvParameters::n4096_shallow().with_plain_modulus(1 << COEFFICIENT_MATCH_LOG_T)
}

/// v mod t for a feature (|v| <= 127 < t), branch- and division-free:
/// features are secret.
fn signed_coefficient(v: i64, t: u64) -> u64 {
    (v as u64).wrapping_add(t & (v >> 63) as u64)
}

/// Client: the probe as x(X) = sum x_i X^i (coefficient encoding).
pub fn encode_probe_coefficients(ctx: &Arc<BfvContext>, probe: &Embedding) -> Result<Plaintext> {
    check_features(probe)?;
    let t = ctx.plain_modulus();
    let coeffs: Vec<u64> = probe
        .iter()
        .map(|&f| signed_coefficient(f as i64, t))
        .collect();
    Plaintext::from_coeffs(ctx, &coeffs)
}

/// Server: n / 128 templates per plaintext, template j reversed at offset
/// 128 j (feature i at coefficient 128 j + 127 - i). Then coefficient
/// 128 j + 127 of probe * plaintext is sum_i x_i T_j\[i\]: no product wraps
/// around X^n (128 j + 127 < n), so no sign flips.
pub fn encode_templates_coefficients(
    ctx: &Arc<BfvContext>,
    templates: &[Embedding],
) -> Result<Vec<Plaintext>> {
    let (blocks, t) = (coefficient_blocks(ctx)?, ctx.plain_modulus());
    templates
        .chunks(blocks)
        .map(|group| {
            let mut coeffs = vec![0u64; ctx.n()];
            for (j, template) in group.iter().enumerate() {
                check_features(template)?;
                for (i, &f) in template.iter().enumerate() {
                    coeffs[DIM * j + DIM - 1 - i] = signed_coefficient(f as i64, t);
                }
            }
            Plaintext::from_coeffs(ctx, &coeffs)
        })
        .collect()
}

/// The coefficients holding the scores of the first `count` templates of
/// one group: 128 j + 127.
pub fn score_coefficients(ctx: &BfvContext, count: usize) -> Result<Vec<usize>> {
    let blocks = coefficient_blocks(ctx)?;
    if count > blocks {
        return Err(Error::Encoding(format!(
            "{count} scores requested from a group of {blocks}"
        )));
    }
    Ok((0..count).map(|j| DIM * j + DIM - 1).collect())
}

/// Server: one plaintext product per group (no rotation, no key switch),
/// then re-randomization with the client's public key. Every coefficient
/// besides the scores holds a partial sum that would reveal template
/// differences, so these ciphertexts never go to the key holder whole: the
/// scores leave them only through [`extract_scores`] (or the TFHE
/// transition, which extracts the same coefficients).
pub fn compute_scores_coefficients(
    probe: &Ciphertext,
    templates: &[Plaintext],
    public: &PublicKey,
) -> Result<Vec<Ciphertext>> {
    public.check(probe)?;
    templates
        .iter()
        .map(|group| probe.mul_plain(group)?.rerandomize(public))
        .collect()
}

/// Server: the scores of the first `count` templates as LWE ciphertexts
/// (sample extraction of the score coefficients only; dimension n, under
/// the client's key). The re-randomization before it matters: the LWE masks
/// are all of c1, and without a fresh encryption of zero c1 would be the
/// probe's c1 (known to the client) times the templates. What the output
/// still carries is its noise, which depends on the templates as in the
/// slot match's default (no flooding here: the 62-bit set has no room).
pub fn extract_scores(scores: &[Ciphertext], count: usize) -> Result<Vec<LweCiphertext>> {
    // Capacity: at most one score per DIM coefficients of each group.
    let most = scores
        .iter()
        .map(|ct| ct.context().n() / DIM)
        .sum::<usize>();
    let mut out = Vec::with_capacity(count.min(most));
    for ct in scores {
        let left = count - out.len();
        let blocks = coefficient_blocks(ct.context())?;
        let indices = score_coefficients(ct.context(), left.min(blocks))?;
        out.extend(ct.sample_extract(&indices)?);
        if out.len() == count {
            return Ok(out);
        }
    }
    Err(Error::Encoding(format!(
        "{count} scores requested from {} groups",
        scores.len()
    )))
}

/// Client: decrypts extracted scores (centered in (-t/2, t/2]).
pub fn decrypt_extracted_scores(sk: &SecretKey, scores: &[LweCiphertext]) -> Result<Vec<i64>> {
    let t = sk.context().plain_modulus();
    scores
        .iter()
        .map(|ct| Ok(centered_score(sk.decrypt_lwe(ct)?, t)))
        .collect()
}

/// A score m mod t centered in (-t/2, t/2].
pub fn centered_score(m: u64, t: u64) -> i64 {
    m as i64 - (m > t / 2) as i64 * t as i64
}

/// The set of the threshold-decrypted coefficient match
/// ([`crate::threshold`]): N = 8192, Q = 3 x 50 bits, P = 50 bits
/// (log QP = 200 of 214; every prime below 2^50, for the IFMA kernels),
/// t = 2^23. Each party of a decryption floods the 64 score coefficients
/// for 2^-40 statistical distance: with the scores' noise bound (about 2^28
/// with the collective-key margin) that is a flood of 2^(73 + log2 alpha)
/// per party for alpha releases per share, below Q / (2t) = 2^126 up to
/// alpha = 2^50. No N = 4096 set has the room: 106 bits of Q P leave at most
/// 2^62 below Q / (2t) where the same flood needs 2^74 at one release (the
/// tests check the refusal).
pub fn threshold_match_parameters() -> BfvParameters {
    BfvParameters::new(
        "bfv-n8192-threshold-match",
        8192,
        &[50, 50, 50],
        &[50],
        1 << COEFFICIENT_MATCH_LOG_T,
    )
    .with_dnum(3)
}

/// `count` deterministic pseudo-random embeddings with features in
/// [-127, 127], for tests, benches and demos (not for anything secret).
pub fn sample_embeddings(count: usize, seed: u64) -> Vec<Embedding> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            std::array::from_fn(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (((state >> 33) % 255) as i64 - 127) as i8
            })
        })
        .collect()
}

/// The scores computed in the clear, for checking.
pub fn plaintext_scores(probe: &Embedding, templates: &[Embedding]) -> Vec<i64> {
    templates
        .iter()
        .map(|t| {
            t.iter()
                .zip(probe)
                .map(|(&a, &b)| a as i64 * b as i64)
                .sum()
        })
        .collect()
}
