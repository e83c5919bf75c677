//! Ring switching, the first step of the router's BFV/CKKS -> TFHE transition:
//! an RLWE key switch, in the source ring modulo its last prime q, from the
//! source secret s to S(X) = u(X^stride), where u is the TFHE set's big LWE
//! key (its GLWE key, one polynomial of degree N' = N / stride). A
//! coefficient of the result is an LWE ciphertext under S's coefficients,
//! zero except every stride-th one: keeping those mask entries gives an LWE
//! ciphertext of dimension N' under u, which the TFHE server's own key
//! switch takes to the small key. The transition's work is then a few NTTs
//! per window, instead of an LWE key switch from dimension N (N l rows of
//! n + 1 words streamed per decision).
//!
//! # Security of the key
//!
//! Each row (b_i, a_i) is an RLWE sample b_i = -a_i S + e_i + B^i s. Split
//! by X^j Y-parts (Y = X^stride), it is stride RLWE samples in
//! Z_q\[Y\]/(Y^N' + 1) under u: the TFHE set's own GLWE ring and key. The
//! noise deviation is the set's GLWE deviation relative to the modulus
//! (glwe_noise_std q), so these samples have the noise-to-modulus ratio of
//! the bootstrapping key's GLWE samples, whose security
//! (the TFHE engine's `TfheParameters::glwe_security_bits`: 135 bits by the lattice
//! estimator's current curves) covers them: lattice estimates depend on the
//! dimension and q / sigma.
//!
//! # Noise
//!
//! The digits d_i of c1 (signed, base B = 2^[`BASE_LOG`], exact: B^l >= 2q)
//! multiply the rows' errors: relative variance N l (B^2 + 2) / 12
//! glwe_noise_std^2 ([`noise_variance`]; 2^-42 of the torus for N = 4096,
//! q < 2^62, l = 3), nothing else. Extraction rounds each word from Z_q to
//! Z_{2^64} (at most 1/2 of 2^-64 per term).

use std::sync::Arc;

use crate::sampling::sample_uniform;
use crate::sampling::sample_wide_gaussian;
use crate::{
    KeyId, LweCiphertext, LweSecretKey, Poly, Prng, Reader, Representation, RnsBasis, Seed,
};
use zeroize::Zeroizing;

/// log2 of the decomposition base.
pub const BASE_LOG: u32 = 21;

/// Levels of the decomposition modulo q: B^l >= 2q, so that every centered
/// value has an exact signed decomposition.
pub fn levels(q: u64) -> u32 {
    (65 - q.leading_zeros()).div_ceil(BASE_LOG)
}

/// Relative (torus) variance the switch adds, for a source ring of degree
/// `n`, last prime `q` and key noise `sigma` (relative to q).
pub fn noise_variance(n: usize, q: u64, sigma: f64) -> f64 {
    let b = 2f64.powi(BASE_LOG as i32);
    n as f64 * levels(q) as f64 * (b * b + 2.0) / 12.0 * sigma * sigma
}

/// The ring switching key (public): rows (b_i, a_i) in NTT form, the masks
/// a_i regenerated from a seed; its LWE outputs carry the identity of the
/// key they are under, `to`'s.
pub struct RingSwitchKey {
    basis: Arc<RnsBasis>,
    stride: usize,
    to_id: KeyId,
    seed: Seed,
    masks: Vec<Poly>,
    bodies: Vec<Poly>,
}

fn masks(basis: &Arc<RnsBasis>, seed: Seed) -> Vec<Poly> {
    let mut rng = Prng::from_seed(seed);
    (0..levels(basis.modulus(0).value()))
        .map(|_| sample_uniform(basis, Representation::Ntt, &mut rng))
        .collect()
}

fn check_shape(basis: &Arc<RnsBasis>, out_dimension: usize) -> crate::Result<usize> {
    let n = basis.n();
    if basis.len() != 1 || out_dimension == 0 || !n.is_multiple_of(out_dimension) {
        return Err(crate::Error::InvalidParameter(format!(
            "a ring switch from degree {n} over {} primes to dimension {out_dimension}",
            basis.len()
        )));
    }
    Ok(n / out_dimension)
}

/// A secret polynomial in NTT form from small coefficients.
fn secret_poly(basis: &Arc<RnsBasis>, coeffs: &[i64]) -> crate::Result<Poly> {
    let mut p = Poly::from_signed(basis, coeffs, Representation::Coefficient)?;
    p.to_ntt()?;
    Ok(p)
}

impl RingSwitchKey {
    /// Made by the key holder: from `from` (the source ring's secret
    /// coefficients, degree basis.n()) to `to` (dimension N' dividing it),
    /// with Gaussian noise of deviation `sigma` q.
    pub fn generate(
        basis: &Arc<RnsBasis>,
        from: &LweSecretKey,
        to: &LweSecretKey,
        sigma: f64,
        rng: &mut Prng,
    ) -> crate::Result<RingSwitchKey> {
        let stride = check_shape(basis, to.dimension())?;
        let n = basis.n();
        if from.dimension() != n {
            return Err(crate::Error::InvalidParameter(format!(
                "a source key of dimension {} for a ring of degree {n}",
                from.dimension()
            )));
        }
        let q = basis.modulus(0).value();
        let from_coeffs: Zeroizing<Vec<i64>> =
            Zeroizing::new(from.coefficients().iter().map(|&c| c as i64).collect());
        // Secret polynomials are wrapped: one dropped on an error path
        // would go back to the shared scratch pool unwiped.
        let s = Zeroizing::new(secret_poly(basis, &from_coeffs)?);
        let mut spread = Zeroizing::new(vec![0i64; n]);
        for (j, &u) in to.coefficients().iter().enumerate() {
            spread[j * stride] = u as i64;
        }
        let target = Zeroizing::new(secret_poly(basis, &spread)?);
        let seed = rng.gen_seed();
        let masks = masks(basis, seed);
        let base = (1u128 << BASE_LOG) % q as u128;
        let mut power = 1u128;
        let mut bodies = Vec::with_capacity(masks.len());
        for a in &masks {
            let e = sample_wide_gaussian(n, sigma * q as f64, rng)?;
            let mut b = Zeroizing::new(secret_poly(basis, &e)?);
            let mut gs = Zeroizing::new((*s).clone());
            gs.mul_rns_scalar_assign(&[power as u64])?;
            b.add_assign(&gs)?;
            b.sub_assign(&Zeroizing::new(a.mul(&target)?))?;
            // Public once a * target is subtracted (an RLWE body).
            bodies.push((*b).clone());
            power = power * base % q as u128;
        }
        Ok(RingSwitchKey {
            basis: basis.clone(),
            stride,
            to_id: to.id(),
            seed,
            masks,
            bodies,
        })
    }

    /// LWE ciphertexts under `to` (dimension N / stride, its identity) of the coefficients
    /// `indices` of `scale` (c0 + c1 s), for an RLWE ciphertext (c0, c1)
    /// over the key's prime (either representation). Scaling before the
    /// switch keeps its noise from being scaled.
    pub fn extract(
        &self,
        c0: &Poly,
        c1: &Poly,
        scale: u64,
        indices: &[usize],
    ) -> crate::Result<Vec<LweCiphertext>> {
        let (n, q) = (self.basis.n(), self.basis.modulus(0).value());
        for c in [c0, c1] {
            if c.n() != n || c.basis().primes() != [q] {
                return Err(crate::Error::InvalidParameter(format!(
                    "a ring switch over degree {n} modulo {q} given a polynomial of degree {} over {:?}",
                    c.n(),
                    c.basis().primes()
                )));
            }
        }
        let scale = [scale % q];
        let mut acc0 = c0.clone();
        acc0.to_ntt()?;
        acc0.mul_rns_scalar_assign(&scale)?;
        let mut d1 = c1.clone();
        d1.to_coefficient()?;
        d1.mul_rns_scalar_assign(&scale)?;
        let mut acc1 = Poly::zero(&self.basis, Representation::Ntt);
        for (i, digits) in decompose(d1.limb(0), q, self.bodies.len())
            .iter()
            .enumerate()
        {
            let mut d = Poly::from_signed(&self.basis, digits, Representation::Coefficient)?;
            d.to_ntt()?;
            acc0.mul_acc(&d, &self.bodies[i])?;
            acc1.mul_acc(&d, &self.masks[i])?;
        }
        Ok(
            LweCiphertext::sample_extract_rlwe(&acc0, &acc1, indices, self.to_id)?
                .into_iter()
                .map(|lwe| LweCiphertext {
                    a: lwe.a.iter().step_by(self.stride).copied().collect(),
                    ..lwe
                })
                .collect(),
        )
    }

    /// Appends the body: seed (32 bytes) | the rows' bodies (ring's `poly`
    /// bodies, NTT form), l of them.
    pub fn write_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.seed);
        for b in &self.bodies {
            b.write_body(out);
        }
    }

    /// Reads [`write_body`](Self::write_body) output for a source ring
    /// `basis` (one prime) and an output key of dimension `out_dimension`
    /// and identity `to_id` (stored by the transition key): the rows' shape
    /// and ranges are checked (ring's `poly` reader).
    pub fn read_body(
        r: &mut Reader<'_>,
        basis: &Arc<RnsBasis>,
        out_dimension: usize,
        to_id: KeyId,
    ) -> crate::Result<RingSwitchKey> {
        let stride = check_shape(basis, out_dimension)?;
        let seed = r.seed()?;
        let masks = masks(basis, seed);
        let bodies = (0..masks.len())
            .map(|_| Poly::read_ntt_body(r, basis))
            .collect::<crate::Result<Vec<_>>>()?;
        Ok(RingSwitchKey {
            basis: basis.clone(),
            stride,
            to_id,
            seed,
            masks,
            bodies,
        })
    }
}

impl std::fmt::Debug for RingSwitchKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RingSwitchKey {{ degree: {}, q: {}, stride: {}, levels: {} }}",
            self.basis.n(),
            self.basis.modulus(0).value(),
            self.stride,
            self.bodies.len()
        )
    }
}

/// The signed base-2^BASE_LOG digits of each value of `v` (in [0, q),
/// centered first), `levels` of them, lowest first: sum d_i B^i = v mod q.
/// The values are ciphertext words (public).
fn decompose(v: &[u64], q: u64, levels: usize) -> Vec<Vec<i64>> {
    let (b, half) = (1i64 << BASE_LOG, 1i64 << (BASE_LOG - 1));
    let mut out = vec![vec![0i64; v.len()]; levels];
    for (j, &x) in v.iter().enumerate() {
        let mut x = if x > q / 2 {
            x as i64 - q as i64
        } else {
            x as i64
        };
        for level in out.iter_mut() {
            let d = ((x + half) & (b - 1)) - half;
            level[j] = d;
            x = (x - d) >> BASE_LOG;
        }
        debug_assert_eq!(x, 0, "B^l >= 2q leaves no carry");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::sample_ternary;

    /// An RLWE ciphertext of m under a ternary key, switched: the LWE
    /// ciphertexts carry the big key's identity and decrypt under it to
    /// scale m_j within the key's noise (deviation 2^-21 of the torus here,
    /// bound 2^-16). A loaded key's outputs carry the identity it is read
    /// with.
    #[test]
    fn switched_coefficients_decrypt_under_the_big_key() {
        let mut rng = Prng::from_seed([7; 32]);
        let basis = RnsBasis::generate(4096, 62, 1).unwrap();
        let q = basis.modulus(0).value();
        let from_id = KeyId::sample(&mut rng);
        let from = LweSecretKey::from_coefficients(&sample_ternary(4096, &mut rng), from_id);
        let to_id = KeyId::sample(&mut rng);
        let to = LweSecretKey::binary(2048, to_id, &mut rng);
        let key = RingSwitchKey::generate(&basis, &from, &to, 2f64.powi(-47), &mut rng).unwrap();
        let m: Vec<u64> = (0..4096u64).map(|j| j * (q / 4096) + j % 7).collect();
        let mut s = Poly::from_signed(
            &basis,
            &from
                .coefficients()
                .iter()
                .map(|&c| c as i64)
                .collect::<Vec<_>>(),
            Representation::Coefficient,
        )
        .unwrap();
        s.to_ntt().unwrap();
        let c1 = sample_uniform(&basis, Representation::Ntt, &mut rng);
        let mut c0 = Poly::from_limbs(&basis, Representation::Coefficient, m.clone()).unwrap();
        c0.to_ntt().unwrap();
        c0.sub_assign(&c1.mul(&s).unwrap()).unwrap();
        let indices = [0, 5, 2048, 4095];
        for scale in [1u64, 3, 1 << 20] {
            let lwes = key.extract(&c0, &c1, scale, &indices).unwrap();
            for (lwe, &j) in lwes.iter().zip(&indices) {
                assert_eq!(lwe.dimension(), 2048);
                assert_eq!(lwe.key_id, to_id, "under the output key's identity");
                let want =
                    ((((m[j] as u128 * scale as u128) % q as u128) << 64) / q as u128) as u64;
                let error = to.phase(lwe).unwrap().wrapping_sub(want) as i64;
                assert!(error.unsigned_abs() < 1 << 48, "coefficient {j}: {error}");
            }
        }
        let mut bytes = Vec::new();
        key.write_body(&mut bytes);
        let other = KeyId::sample(&mut rng);
        let loaded =
            RingSwitchKey::read_body(&mut Reader::new(&bytes), &basis, 2048, other).unwrap();
        let lwes = loaded.extract(&c0, &c1, 1, &indices).unwrap();
        assert!(lwes.iter().all(|lwe| lwe.key_id == other));
        assert!(matches!(
            to.phase(&lwes[0]),
            Err(crate::Error::KeyMismatch { .. })
        ));
    }

    #[test]
    fn decomposition_is_exact_at_the_edges() {
        for q in [(1u64 << 61) - 1, 4611686018326724609, 65537] {
            let l = levels(q) as usize;
            let values = [0, 1, q / 2, q / 2 + 1, q - 1, q / 3];
            let digits = decompose(&values, q, l);
            for (j, &v) in values.iter().enumerate() {
                let mut sum = 0i128;
                for i in (0..l).rev() {
                    let d = digits[i][j];
                    assert!((-(1i64 << (BASE_LOG - 1))..(1i64 << (BASE_LOG - 1))).contains(&d));
                    sum = sum * (1i128 << BASE_LOG) + d as i128;
                }
                assert_eq!(sum.rem_euclid(q as i128), v as i128, "q {q} v {v}");
            }
        }
    }
}
