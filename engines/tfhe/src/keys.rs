//! Client and server keys, the programmable bootstrap (key switch, modulus
//! switch to 2N, blind rotation, sample extraction) and lookup tables.

use std::sync::Arc;

use rayon::prelude::*;
use triskel_ring::{LweCiphertext, LweKeySwitchKey, LweSecretKey, Prng, Seed, SwitchedLwe};

use crate::error::{Error, Result};
use crate::glwe::{cmux_rotate, generate_ggsws, rotate, GlweContext, GlweSecretKey, Scratch};
use crate::params::TfheParameters;

const TWO_POW_64: f64 = 18446744073709551616.0;

/// The secret keys: the small LWE key (dimension n) and the GLWE key whose
/// coefficients are the big LWE key that ciphertexts rest under. Never printed.
pub struct ClientKey {
    pub(crate) params: TfheParameters,
    pub(crate) ctx: Arc<GlweContext>,
    pub(crate) small: LweSecretKey,
    pub(crate) glwe: GlweSecretKey,
    pub(crate) big: LweSecretKey,
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClientKey {{ params: {}, .. }}", self.params.name)
    }
}

/// The public evaluation keys: the bootstrapping key (n GGSW encryptions of
/// the small key's bits, in NTT form) and the key-switching key from the big
/// to the small key.
pub struct ServerKey {
    pub(crate) params: TfheParameters,
    pub(crate) ctx: Arc<GlweContext>,
    pub(crate) bsk_seed: Seed,
    pub(crate) bsk: Vec<u64>,
    pub(crate) ksk: LweKeySwitchKey,
}

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServerKey {{ params: {}, .. }}", self.params.name)
    }
}

/// A lookup table ready for a blind rotation: N coefficients mod q, rotated
/// by half a box so that noise on either side of a message decodes to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestVector(pub(crate) Vec<u64>);

pub(crate) fn context(params: &TfheParameters) -> Result<Arc<GlweContext>> {
    params.check()?;
    Ok(Arc::new(GlweContext::new(
        params.glwe_dimension,
        params.polynomial_size,
        params.modulus_bits,
        (params.pbs_base_log, params.pbs_levels),
        params.glwe_noise_std,
    )?))
}

impl ClientKey {
    /// Fresh keys for a named parameter set (checked), from the OS CSPRNG.
    pub fn generate(params: &TfheParameters) -> Result<ClientKey> {
        let mut rng = Prng::from_os()?;
        Self::generate_with(params, &mut rng)
    }

    /// Keys from the given generator (tests: a seeded one).
    pub fn generate_with(params: &TfheParameters, rng: &mut Prng) -> Result<ClientKey> {
        let ctx = context(params)?;
        let small = LweSecretKey::binary(params.lwe_dimension, rng);
        let big = LweSecretKey::binary(params.glwe_dimension * params.polynomial_size, rng);
        let glwe = GlweSecretKey::from_coefficients(&ctx, big.coefficients())?;
        Ok(ClientKey {
            params: params.clone(),
            ctx,
            small,
            glwe,
            big,
        })
    }

    /// The parameter set.
    pub fn parameters(&self) -> &TfheParameters {
        &self.params
    }

    /// The evaluation keys (parallel over the bootstrapping key's GGSWs).
    pub fn server_key(&self) -> Result<ServerKey> {
        let mut rng = Prng::from_os()?;
        self.server_key_with(&mut rng)
    }

    /// The evaluation keys from the given generator.
    pub fn server_key_with(&self, rng: &mut Prng) -> Result<ServerKey> {
        let p = &self.params;
        let bsk_seed = rng.gen_seed();
        let bsk = generate_ggsws(
            &self.ctx,
            &self.glwe,
            self.small.coefficients(),
            bsk_seed,
            rng,
        )?;
        let ksk = LweKeySwitchKey::generate(
            &self.big,
            &self.small,
            p.ks_base_log,
            p.ks_levels,
            p.lwe_noise_std,
            rng,
        )?;
        Ok(ServerKey {
            params: p.clone(),
            ctx: self.ctx.clone(),
            bsk_seed,
            bsk,
            ksk,
        })
    }

    /// A fresh encryption of the torus value m under the big key, with the
    /// GLWE noise (the key's own distribution).
    pub(crate) fn encrypt_torus(&self, m: u64) -> Result<LweCiphertext> {
        let mut rng = Prng::from_os()?;
        Ok(self.big.encrypt(m, self.params.glwe_noise_std, &mut rng)?)
    }

    /// The phase of a ciphertext under the big key.
    pub(crate) fn phase(&self, ct: &LweCiphertext) -> Result<u64> {
        self.big
            .phase(ct)
            .map_err(|_| Error::Mismatch("ciphertext of another dimension".into()))
    }
}

impl ServerKey {
    /// The parameter set.
    pub fn parameters(&self) -> &TfheParameters {
        &self.params
    }

    /// Bytes of the bootstrapping and key-switching keys as held in memory
    /// (all masks expanded, NTT form).
    pub fn expanded_size(&self) -> usize {
        self.bsk.len() * 8 + self.ksk.expanded_size()
    }

    /// The LUT with outputs `values[v]` (torus values) for each of the
    /// `values.len()` boxes the half torus [0, 1/2) is cut into (1/2 of the
    /// torus: the padding bit stays 0).
    pub(crate) fn test_vector(&self, values: &[u64]) -> Result<TestVector> {
        let n = self.ctx.n;
        let p = values.len();
        if p == 0 || p > n || n % p != 0 {
            return Err(Error::OutOfRange(format!("{p} LUT entries for N = {n}")));
        }
        let q = self.ctx.q();
        let to_q = |t: u64| (((t as u128 * q as u128) + (1u128 << 63)) >> 64) as u64 % q;
        let boxed: Vec<u64> = (0..n).map(|j| to_q(values[j / (n / p)])).collect();
        // Multiply by X^{-box/2}: X^{2N - box/2}.
        let mut tv = vec![0u64; n];
        rotate(&self.ctx.modulus, &boxed, 2 * n - n / p / 2, &mut tv);
        Ok(TestVector(tv))
    }

    /// The constant test vector: sign bootstrapping (output +t on [0, 1/2),
    /// -t on [1/2, 1)).
    pub(crate) fn constant_test_vector(&self, t: u64) -> TestVector {
        let q = self.ctx.q();
        let v = (((t as u128 * q as u128) + (1u128 << 63)) >> 64) as u64 % q;
        TestVector(vec![v; self.ctx.n])
    }

    /// Key switch to the small key and modulus switch to 2N.
    pub(crate) fn switch_in(&self, ct: &LweCiphertext) -> Result<SwitchedLwe> {
        let small = self.ksk.switch(ct)?;
        let log_2n = (2 * self.ctx.n).trailing_zeros();
        Ok(small.switch_modulus(log_2n, true)?)
    }

    /// Blind rotation of the test vector by the switched ciphertext's phase:
    /// a GLWE (coefficient form) whose constant coefficient is tv[phase].
    pub(crate) fn blind_rotate(&self, sw: &SwitchedLwe, tv: &TestVector) -> Result<Vec<u64>> {
        let ctx = &self.ctx;
        let (k, n) = (ctx.k, ctx.n);
        if sw.a.len() != self.params.lwe_dimension || sw.log_modulus != (2 * n).trailing_zeros() {
            return Err(Error::Mismatch("switched ciphertext shape".into()));
        }
        let mut acc = vec![0u64; ctx.glwe_len()];
        let two_n = 2 * n;
        rotate(
            &ctx.modulus,
            &tv.0,
            (two_n - sw.b as usize) % two_n,
            &mut acc[k * n..],
        );
        let per = ctx.ggsw_rows() * ctx.glwe_len();
        let mut scratch = Scratch::new(ctx);
        for (ggsw, &a) in self.bsk.chunks(per).zip(&sw.a) {
            if a != 0 {
                cmux_rotate(ctx, ggsw, a as usize, &mut acc, &mut scratch)?;
            }
        }
        Ok(acc)
    }

    /// Programmable bootstrap of a big-key ciphertext: key switch, modulus
    /// switch, blind rotation of `tv`, sample extraction (back under the big key).
    pub fn bootstrap(&self, ct: &LweCiphertext, tv: &TestVector) -> Result<LweCiphertext> {
        if tv.0.len() != self.ctx.n {
            return Err(Error::Mismatch("test vector of another ring degree".into()));
        }
        let sw = self.switch_in(ct)?;
        let acc = self.blind_rotate(&sw, tv)?;
        self.extract(&acc)
    }

    /// Bootstraps many ciphertexts in parallel (rayon).
    pub fn bootstrap_many(
        &self,
        cts: &[&LweCiphertext],
        tvs: &[&TestVector],
    ) -> Result<Vec<LweCiphertext>> {
        if cts.len() != tvs.len() {
            return Err(Error::Mismatch(
                "as many test vectors as ciphertexts".into(),
            ));
        }
        cts.par_iter()
            .zip(tvs.par_iter())
            .map(|(c, t)| self.bootstrap(c, t))
            .collect()
    }

    pub(crate) fn extract(&self, acc: &[u64]) -> Result<LweCiphertext> {
        self.extract_at(acc, 0)
    }

    /// Coefficient `index` of the accumulator: the test vector read `index`
    /// positions past the phase (a second LUT packed in the same rotation).
    pub(crate) fn extract_at(&self, acc: &[u64], index: usize) -> Result<LweCiphertext> {
        let (k, n) = (self.ctx.k, self.ctx.n);
        let masks: Vec<&[u64]> = acc[..k * n].chunks(n).collect();
        Ok(LweCiphertext::sample_extract(
            &masks,
            &acc[k * n..],
            self.ctx.q(),
            index,
        )?)
    }
}

/// A torus value's f64 image in [-1/2, 1/2) (for noise measurements).
pub(crate) fn centered(x: u64) -> f64 {
    x as i64 as f64 / TWO_POW_64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Signed distance of x from y modulo q, relative to q.
    fn rel_mod_q(x: u64, y: u64, q: u64) -> f64 {
        let d = (x + q - y) % q;
        let d = if d > q / 2 {
            d as f64 - q as f64
        } else {
            d as f64
        };
        d / q as f64
    }

    /// Measured variances against the analysis, for the 2_2 set: the blind
    /// rotation's output over every coefficient of the accumulator of several
    /// bootstraps, and the key switch + modulus switch error over many inputs.
    #[test]
    fn measured_noise_matches_the_analysis() {
        let params = TfheParameters::message_2_carry_2();
        let mut rng = Prng::from_seed([3; 32]);
        let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng).unwrap();
        let analysis = params.noise();
        let (n, q) = (sk.ctx.n, sk.ctx.q());
        let two_n = 2 * n as u64;
        let tv = sk
            .test_vector(&(0..16).map(|v| v << 59).collect::<Vec<_>>())
            .unwrap();
        let small = ck.small.coefficients().to_vec();

        let (mut br_sum, mut br_count) = (0.0, 0usize);
        let (mut in_sum, mut in_count) = (0.0, 0usize);
        for i in 0..480u64 {
            let m = (i % 16) << 59;
            let ct = ck.encrypt_torus(m).unwrap();
            let sw = sk.switch_in(&ct).unwrap();
            let dot = sw.a.iter().zip(&small).map(|(&a, &s)| a * s).sum::<u64>();
            let switched = (sw.b + two_n * 1000 - dot % two_n) % two_n;
            // Input error in units of 1/(2N): switched phase minus the exact one.
            let exact = ck.phase(&ct).unwrap() as f64 / 2f64.powi(64) * two_n as f64;
            let mut e = switched as f64 - exact;
            e -= (e / two_n as f64).round() * two_n as f64;
            in_sum += e * e;
            in_count += 1;
            if i < 12 {
                // Every coefficient of the accumulator: phase vs X^-switched tv.
                let acc = sk.blind_rotate(&sw, &tv).unwrap();
                let phase = ck.glwe.phase(&sk.ctx, &acc).unwrap();
                let mut want = vec![0u64; n];
                rotate(
                    &sk.ctx.modulus,
                    &tv.0,
                    ((two_n - switched) % two_n) as usize,
                    &mut want,
                );
                for (&got, &w) in phase.iter().zip(&want) {
                    br_sum += rel_mod_q(got, w, q).powi(2);
                    br_count += 1;
                }
            }
        }
        let br = br_sum / br_count as f64;
        let input = in_sum / in_count as f64;
        let scale = (2.0 * n as f64).powi(2);
        let fresh = params.glwe_noise_std.powi(2);
        let predicted_input = (analysis.key_switch + fresh) * scale + analysis.modulus_switch;
        eprintln!(
            "blind rotation: measured 2^{:.2}, predicted 2^{:.2}; input: measured {input:.2}, predicted {predicted_input:.2}",
            br.log2(),
            analysis.blind_rotation.log2()
        );
        assert!(
            (br / analysis.blind_rotation - 1.0).abs() < 0.15,
            "{br} vs {}",
            analysis.blind_rotation
        );
        assert!(
            (input / predicted_input - 1.0).abs() < 0.15,
            "{input} vs {predicted_input}"
        );
    }
}
