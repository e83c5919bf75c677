//! Encrypted biometric match: inner products of an encrypted probe embedding
//! with enrolled templates, computed by the server without seeing either the
//! probe or the scores.
//!
//! - Embeddings are `DIM` = 128 signed 8-bit features in [-127, 127] (the
//!   symmetric int8 quantization), so every score lies in
//!   [-128 * 127^2, 128 * 127^2] and the plaintext modulus
//!   [`match_plain_modulus`] (a prime = 1 mod 2n above twice that bound)
//!   holds it exactly.
//! - The client replicates its probe into every 128-slot block of a
//!   ciphertext and encrypts it with its secret key (symmetric encryption:
//!   smaller noise and a seed-compressed upload).
//! - The server packs n / 128 templates per plaintext (32 at n = 4096),
//!   template b in slots 128 b .. 128 b + 127, multiplies (one plaintext
//!   product per group) and sums each block with 7 rotate-and-add steps
//!   (by 64, 32, ..., 1): slot 128 b then holds <probe, template b>.
//! - The client decrypts and reads slot 128 b of each group.

use std::sync::Arc;

use crate::ciphertext::Ciphertext;
use crate::context::BfvContext;
use crate::encoding::Plaintext;
use crate::error::{Error, Result};
use crate::keys::{GaloisKeys, SecretKey};
use crate::params::BfvParameters;

/// Features per embedding.
pub const DIM: usize = 128;
/// Largest feature magnitude (int8, symmetric).
pub const MAX_FEATURE: i64 = 127;

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

/// The parameter set of the match: `base` (by default
/// [`BfvParameters::n4096_shallow`]) with [`match_plain_modulus`].
pub fn match_parameters(base: BfvParameters) -> Result<BfvParameters> {
    let t = match_plain_modulus(base.n())?;
    Ok(base.with_plain_modulus(t))
}

fn check_features(e: &Embedding) -> Result<()> {
    if e.contains(&i8::MIN) {
        return Err(Error::Encoding(format!(
            "features must be in [-{MAX_FEATURE}, {MAX_FEATURE}]; -128 is outside the symmetric int8 range"
        )));
    }
    Ok(())
}

fn blocks_per_ciphertext(ctx: &BfvContext) -> Result<usize> {
    if ctx.n() / 2 % DIM != 0 {
        return Err(Error::InvalidParameters(format!(
            "n = {} is too small for {DIM}-feature blocks",
            ctx.n()
        )));
    }
    Ok(ctx.n() / DIM)
}

/// The Galois keys the server needs: rotations by 1, 2, 4, ..., 64.
pub fn match_galois_keys(sk: &SecretKey) -> Result<GaloisKeys> {
    let steps: Vec<i64> = (0..DIM.trailing_zeros()).map(|b| 1i64 << b).collect();
    sk.galois_keys(&steps, false)
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

/// Server: the enrolled templates, n / 128 per plaintext.
pub fn encode_templates(ctx: &Arc<BfvContext>, templates: &[Embedding]) -> Result<Vec<Plaintext>> {
    let blocks = blocks_per_ciphertext(ctx)?;
    templates
        .chunks(blocks)
        .map(|group| {
            group.iter().try_for_each(check_features)?;
            let slots: Vec<i64> = group
                .iter()
                .flat_map(|t| t.iter().map(|&f| f as i64))
                .collect();
            Plaintext::from_signed_slots(ctx, &slots)
        })
        .collect()
}

/// Server: one ciphertext of scores per template group: probe * group,
/// then rotate-and-add by 64, 32, ..., 1 so that slot 128 b holds the inner
/// product with template b.
pub fn compute_scores(
    probe: &Ciphertext,
    groups: &[Plaintext],
    keys: &GaloisKeys,
) -> Result<Vec<Ciphertext>> {
    groups
        .iter()
        .map(|group| {
            let mut acc = probe.mul_plain(group)?;
            let mut step = DIM / 2;
            while step >= 1 {
                acc = acc.rotate_rows(step as i64, keys)?.add_into(&acc)?;
                step /= 2;
            }
            Ok(acc)
        })
        .collect()
}

/// Client: the `count` scores, in template order.
pub fn decrypt_scores(sk: &SecretKey, scores: &[Ciphertext], count: usize) -> Result<Vec<i64>> {
    let blocks = blocks_per_ciphertext(sk.context())?;
    let mut out = Vec::with_capacity(count);
    for ct in scores {
        let slots = sk.decrypt(ct)?.to_signed_slots()?;
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
