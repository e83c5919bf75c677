//! Client and server keys, the programmable bootstrap (key switch, modulus
//! switch to 2N, blind rotation, sample extraction) and lookup tables.

use std::sync::Arc;

use rayon::prelude::*;
use triskel_ring::{
    aligned_zeros, AlignedVec, CompressedLweCiphertext, KeyId, LweCiphertext, LweKeySwitchKey,
    LweSecretKey, Prng, Seed, SwitchedLwe,
};

use crate::error::{Error, Result};
use crate::glwe::{
    cmux_rotate, generate_ggsws, rotate, sample_extract, GlweContext, GlweSecretKey, Scratch,
};
use crate::multibit::{self, pattern_bits, Monomials};
use crate::params::TfheParameters;

const TWO_POW_64: f64 = 18446744073709551616.0;

/// Whose a key or value is: the name of its parameter set and the identity
/// of the client key it belongs to. Keys and values of one set share their
/// shape, so only the identity tells two clients' values apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Owner {
    pub(crate) set: &'static str,
    pub(crate) key: KeyId,
}

impl Owner {
    /// The owner of the keys of `params` of identity `key`.
    fn of(params: &TfheParameters, key: KeyId) -> Owner {
        Owner {
            set: params.name,
            key,
        }
    }

    /// Refuses `what`, owned by `found`, unless it is this owner's: another
    /// set is [`Error::Mismatch`] naming both sets, another key of the same
    /// set [`triskel_ring::Error::KeyMismatch`] naming both identities. Every
    /// entry taking a value calls it before any work.
    pub(crate) fn check(self, what: &str, found: Owner) -> Result<()> {
        crate::params::check_set(what, found.set, self.set)?;
        Ok(self.key.check(what, found.key)?)
    }
}

/// The secret keys: the small LWE key (dimension n) and the GLWE key whose
/// coefficients (its LWE view) are the big LWE key that ciphertexts rest
/// under. Never printed.
pub struct ClientKey {
    pub(crate) params: TfheParameters,
    /// Drawn from the key's generator; carried by its server key and values.
    pub(crate) id: KeyId,
    pub(crate) ctx: Arc<GlweContext>,
    pub(crate) small: LweSecretKey,
    pub(crate) glwe: GlweSecretKey,
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClientKey {{ params: {}, .. }}", self.params.name)
    }
}

/// The public evaluation keys: the bootstrapping key (n GGSW encryptions of
/// the small key's bits, in NTT form; for a multi-bit set 3 per pair of bits,
/// of the patterns s_i s_j, s_i (1 - s_j), (1 - s_i) s_j) and the
/// key-switching key from the big to the small key.
pub struct ServerKey {
    pub(crate) params: TfheParameters,
    /// The identity of the client key it was made from.
    pub(crate) id: KeyId,
    pub(crate) ctx: Arc<GlweContext>,
    pub(crate) bsk_seed: Seed,
    pub(crate) bsk: AlignedVec,
    pub(crate) ksk: LweKeySwitchKey,
    /// NTT(X^e - 1) for the multi-bit steps (multi-bit sets only).
    monomials: Option<Monomials>,
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
        params.name,
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
        // Both LWE keys carry the client key's identity: ciphertexts under
        // either are its values (the dimension tells the two keys apart).
        let id = KeyId::sample(rng);
        let small = LweSecretKey::binary(params.lwe_dimension, id, rng);
        let big = LweSecretKey::binary(params.glwe_dimension * params.polynomial_size, id, rng);
        let glwe = GlweSecretKey::from_lwe_key(ctx.clone(), big)?;
        Ok(ClientKey {
            params: params.clone(),
            id,
            ctx,
            small,
            glwe,
        })
    }

    /// The parameter set.
    pub fn parameters(&self) -> &TfheParameters {
        &self.params
    }

    /// The identity of the key, carried by its server key and every value
    /// encrypted under it.
    pub fn key_id(&self) -> KeyId {
        self.id
    }

    pub(crate) fn owner(&self) -> Owner {
        Owner::of(&self.params, self.id)
    }

    /// The big LWE key (the GLWE key's coefficients), under which
    /// bootstrapped ciphertexts rest: the key holder builds keys into it
    /// from other engines' secrets. Secret: never log it.
    pub fn big_key(&self) -> &LweSecretKey {
        self.glwe.lwe_key()
    }

    /// The GLWE key the bootstrapping key encrypts (its GLWE and GGSW
    /// encryptions, whose ciphertexts extract under the big key). Secret:
    /// never log it.
    pub fn glwe_key(&self) -> &GlweSecretKey {
        &self.glwe
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
        let bits = if p.grouping == 2 {
            pattern_bits(self.small.coefficients())
        } else {
            zeroize::Zeroizing::new(self.small.coefficients().to_vec())
        };
        let bsk = generate_ggsws(&self.glwe, &bits, bsk_seed, rng)?;
        let ksk = LweKeySwitchKey::generate(
            self.big_key(),
            &self.small,
            p.ks_base_log,
            p.ks_levels,
            p.lwe_noise_std,
            rng,
        )?;
        Ok(ServerKey::new(
            p.clone(),
            self.id,
            self.ctx.clone(),
            bsk_seed,
            bsk,
            ksk,
        ))
    }

    /// A key-switching key from a foreign LWE key (e.g. the coefficients of
    /// a BFV or CKKS secret, under which sample-extracted coefficients sit)
    /// to this client's small key, with the set's small-key noise: the
    /// bootstraps of [`ServerKey::sign_bootstrap`] then take the switched
    /// ciphertexts directly. Generated by the key holder, like every key.
    /// It takes only ciphertexts of `input`'s identity and gives ciphertexts
    /// of this key's.
    pub fn key_switching_key_from(
        &self,
        input: &LweSecretKey,
        base_log: u32,
        levels: u32,
    ) -> Result<LweKeySwitchKey> {
        let mut rng = Prng::from_os()?;
        Ok(LweKeySwitchKey::generate(
            input,
            &self.small,
            base_log,
            levels,
            self.params.lwe_noise_std,
            &mut rng,
        )?)
    }

    /// A fresh encryption of the torus value m under the big key, with the
    /// GLWE noise (the key's own distribution).
    pub(crate) fn encrypt_torus(&self, m: u64) -> Result<LweCiphertext> {
        let mut rng = Prng::from_os()?;
        Ok(self
            .big_key()
            .encrypt(m, self.params.glwe_noise_std, &mut rng)?)
    }

    /// A fresh encryption of the torus value m under the big key whose mask
    /// is stream `stream` of the public `seed`; the noise comes from the OS
    /// CSPRNG, as [`ClientKey::encrypt_torus`]'s does.
    pub(crate) fn encrypt_torus_compressed(
        &self,
        m: u64,
        seed: Seed,
        stream: u64,
    ) -> Result<CompressedLweCiphertext> {
        let mut noise = Prng::from_os()?;
        Ok(self.big_key().encrypt_compressed(
            m,
            self.params.glwe_noise_std,
            seed,
            stream,
            &mut noise,
        )?)
    }

    /// The phase of a ciphertext under the big key (another key's is
    /// refused with [`triskel_ring::Error::KeyMismatch`]).
    pub(crate) fn phase(&self, ct: &LweCiphertext) -> Result<u64> {
        self.big_key().phase(ct).map_err(|e| match e {
            triskel_ring::Error::KeyMismatch { .. } => e.into(),
            _ => Error::Mismatch("ciphertext of another dimension".into()),
        })
    }
}

impl ServerKey {
    /// The key of `params` from its parts (`bsk`: the set's
    /// `bootstrapping_ggsws()` GGSWs).
    pub(crate) fn new(
        params: TfheParameters,
        id: KeyId,
        ctx: Arc<GlweContext>,
        bsk_seed: Seed,
        bsk: AlignedVec,
        ksk: LweKeySwitchKey,
    ) -> ServerKey {
        let monomials = (params.grouping == 2).then(|| Monomials::new(&ctx));
        ServerKey {
            params,
            id,
            ctx,
            bsk_seed,
            bsk,
            ksk,
            monomials,
        }
    }

    /// The parameter set.
    pub fn parameters(&self) -> &TfheParameters {
        &self.params
    }

    /// The identity of the client key it was made from: it takes only
    /// values carrying it.
    pub fn key_id(&self) -> KeyId {
        self.id
    }

    pub(crate) fn owner(&self) -> Owner {
        Owner::of(&self.params, self.id)
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
        if p == 0 || p > n || !n.is_multiple_of(p) {
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
    pub(crate) fn blind_rotate(&self, sw: &SwitchedLwe, tv: &TestVector) -> Result<AlignedVec> {
        let ctx = &self.ctx;
        let (k, n) = (ctx.k, ctx.n);
        if sw.a.len() != self.params.lwe_dimension || sw.log_modulus != (2 * n).trailing_zeros() {
            return Err(Error::Mismatch("switched ciphertext shape".into()));
        }
        let mut acc = aligned_zeros(ctx.glwe_len());
        let two_n = 2 * n;
        rotate(
            &ctx.modulus,
            &tv.0,
            (two_n - sw.b as usize) % two_n,
            &mut acc[k * n..],
        );
        self.rotate_by_mask(&sw.a, &mut acc, triskel_ring::several_threads())?;
        Ok(acc)
    }

    /// acc <- X^(sum_i a_i s_i) acc: one CMux per bit, or for a multi-bit
    /// set one external product per pair (the next pair's GGSW combined on
    /// a second thread when `parallel`).
    fn rotate_by_mask(&self, a: &[u64], acc: &mut [u64], parallel: bool) -> Result<()> {
        let ctx = &self.ctx;
        if let Some(table) = &self.monomials {
            return multibit::blind_rotate(ctx, table, &self.bsk, a, acc, parallel);
        }
        let per = ctx.ggsw_rows() * ctx.glwe_len();
        let mut scratch = Scratch::new(ctx);
        for (ggsw, &a) in self.bsk.chunks(per).zip(a) {
            if a != 0 {
                cmux_rotate(ctx, ggsw, a as usize, acc, &mut scratch)?;
            }
        }
        Ok(())
    }

    /// Programmable bootstrap of a big-key ciphertext: key switch, modulus
    /// switch, blind rotation of `tv`, sample extraction (back under the big
    /// key). A ciphertext of another client key is refused (by the key
    /// switch, before any work) with [`triskel_ring::Error::KeyMismatch`].
    pub fn bootstrap(&self, ct: &LweCiphertext, tv: &TestVector) -> Result<LweCiphertext> {
        if tv.0.len() != self.ctx.n {
            return Err(Error::Mismatch("test vector of another ring degree".into()));
        }
        // One entry into the pool for the key switch's and the rotation's
        // joins (from a caller outside it; see `triskel_ring::in_pool`).
        triskel_ring::in_pool(|| {
            let sw = self.switch_in(ct)?;
            let acc = self.blind_rotate(&sw, tv)?;
            self.extract(&acc)
        })
    }

    /// The key switch of a bootstrap alone: a big-key ciphertext to the
    /// small key (dimension n). A ciphertext of another client key is
    /// refused with [`triskel_ring::Error::KeyMismatch`].
    pub fn key_switch(&self, ct: &LweCiphertext) -> Result<LweCiphertext> {
        Ok(self.ksk.switch(ct)?)
    }

    /// [`key_switch`](Self::key_switch) of several ciphertexts in one pass
    /// over the key-switching key (the same results; the key is read once).
    pub fn key_switch_many(&self, cts: &[&LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        Ok(self.ksk.switch_many(cts)?)
    }

    /// Sign bootstrap of a ciphertext already under the small key (from
    /// [`key_switch`](Self::key_switch) or a foreign key's
    /// [`ClientKey::key_switching_key_from`]): modulus switch to 2N, blind
    /// rotation of the constant test vector c, sample extraction. The result
    /// (under the big key) has phase +c when the input's phase is in
    /// [0, 1/2) and -c in [1/2, 1), up to the blind rotation's noise; inputs
    /// within the noise of 0 or 1/2 may go either way. A ciphertext of
    /// another client key is refused with [`triskel_ring::Error::KeyMismatch`].
    pub fn sign_bootstrap(&self, small: &LweCiphertext, c: u64) -> Result<LweCiphertext> {
        self.id.check("a small-key ciphertext", small.key_id)?;
        if small.dimension() != self.params.lwe_dimension {
            return Err(Error::Mismatch(format!(
                "a small-key ciphertext has dimension {}, not {}",
                small.dimension(),
                self.params.lwe_dimension
            )));
        }
        let log_2n = (2 * self.ctx.n).trailing_zeros();
        let sw = small.switch_modulus(log_2n, true)?;
        let acc = self.blind_rotate(&sw, &self.constant_test_vector(c))?;
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
        sample_extract(&self.ctx, acc, index, self.id)
    }
}

/// A torus value's f64 image in [-1/2, 1/2) (for noise measurements).
pub(crate) fn centered(x: u64) -> f64 {
    x as i64 as f64 / TWO_POW_64
}

/// One 2_2 key pair for the unit tests of the crate (key generation is a
/// large share of a short test).
#[cfg(test)]
pub(crate) fn test_keys_2_2() -> &'static (ClientKey, ServerKey) {
    static KEYS: std::sync::OnceLock<(ClientKey, ServerKey)> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let mut rng = Prng::from_seed([3; 32]);
        let ck = ClientKey::generate_with(&TfheParameters::message_2_carry_2(), &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng).unwrap();
        (ck, sk)
    })
}

/// One multi-bit 2_2 key pair for the unit tests of the crate.
#[cfg(test)]
pub(crate) fn test_keys_2_2_multi_bit() -> &'static (ClientKey, ServerKey) {
    static KEYS: std::sync::OnceLock<(ClientKey, ServerKey)> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let mut rng = Prng::from_seed([8; 32]);
        let params = TfheParameters::message_2_carry_2_multi_bit();
        let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng).unwrap();
        (ck, sk)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A big-key ciphertext of a twin client key (same set, another
    /// identity) is refused by bootstrap and bootstrap_many before any work;
    /// the result of a bootstrap carries the server key's identity.
    #[test]
    fn bootstraps_refuse_another_keys_ciphertext() {
        let (ck, sk) = test_keys_2_2();
        let twin =
            ClientKey::generate_with(ck.parameters(), &mut Prng::from_seed([4; 32])).unwrap();
        let tv = sk.constant_test_vector(1 << 60);
        let foreign = twin.encrypt_torus(1 << 61).unwrap();
        let own = ck.encrypt_torus(1 << 61).unwrap();
        for r in [
            sk.bootstrap(&foreign, &tv),
            sk.bootstrap_many(&[&own, &foreign], &[&tv, &tv])
                .map(|mut v| v.remove(0)),
        ] {
            assert!(
                matches!(r, Err(Error::Ring(triskel_ring::Error::KeyMismatch { .. }))),
                "{r:?}"
            );
        }
        assert_eq!(sk.bootstrap(&own, &tv).unwrap().key_id, ck.key_id());
    }

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

    /// Steps of each short rotation of the blind-rotation measurement
    /// (pairs of bits for a multi-bit set).
    const SHORT_ROTATION_STEPS: usize = 4;

    /// Independent samples of the blind rotation's noise: sample `i` rotates
    /// a fresh GLWE encryption of the test vector (uniform masks, as in a
    /// rotation's later steps) by random mask values at
    /// [`SHORT_ROTATION_STEPS`] random positions of the small key (the other
    /// positions 0, which the rotation skips), and reads ONE coefficient, at
    /// a random index. Coefficients of one accumulator are correlated (the
    /// rounding term multiplies the key S, of mean 1/2), samples of
    /// different accumulators are not. Returns the mean squared error
    /// relative to q^2 (the fresh GLWE noise removed) per step, and the
    /// prediction of [`TfheParameters::step_variance_parts`] for the key's
    /// own weights (the fraction of small-key bits, or of pairs, that
    /// multiply the rounding, and |S|^2): the average key's prediction is
    /// off by their deviation, about sqrt(n) / n. Also returns the
    /// measurement's relative standard error, estimated from the samples:
    /// the squared errors are not those of one Gaussian (each sample sums a
    /// different number of key-bit products), so sqrt(2 / samples) would
    /// understate it.
    fn measured_step_variance(
        ck: &ClientKey,
        sk: &ServerKey,
        samples: usize,
        seed: u8,
    ) -> (f64, f64, f64) {
        let params = &ck.params;
        let ctx = &sk.ctx;
        let (k, n, lwe_n) = (ctx.k, ctx.n, params.lwe_dimension);
        let g = params.grouping;
        let two_n = 2 * n as u64;
        let tv = sixteen_levels(sk);
        let small = ck.small.coefficients();
        let (sum, sum_sq) = (0..samples)
            .into_par_iter()
            .map(|i| {
                let mut rng = Prng::from_seed_stream([seed; 32], i as u64);
                let mut a = vec![0u64; lwe_n];
                for _ in 0..SHORT_ROTATION_STEPS {
                    let at = rng.below((lwe_n / g) as u64).unwrap() as usize * g;
                    for v in &mut a[at..at + g] {
                        *v = rng.below(two_n - 1).unwrap() + 1;
                    }
                }
                let fresh = ck.glwe.encrypt_plaintext(&tv.0).unwrap();
                let mut acc = aligned_zeros(ctx.glwe_len());
                acc.copy_from_slice(&fresh.data);
                sk.rotate_by_mask(&a, &mut acc, false).unwrap();
                let e = a.iter().zip(small).map(|(&a, &s)| a * s).sum::<u64>() % two_n;
                let mut want = vec![0u64; n];
                rotate(&ctx.modulus, &tv.0, e as usize, &mut want);
                let j = rng.below(n as u64).unwrap() as usize;
                let phase = ck.glwe.phase_of(&acc).unwrap();
                let sq = rel_mod_q(phase[j], want[j], ctx.q()).powi(2);
                (sq, sq * sq)
            })
            .reduce(|| (0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
        let steps = SHORT_ROTATION_STEPS as f64;
        let mean = sum / samples as f64;
        let spread = (sum_sq / samples as f64 - mean * mean).max(0.0).sqrt();
        let fresh = params.glwe_noise_std.powi(2);
        let measured = (mean - fresh) / steps;
        // The standard error of the mean square, relative to the step variance.
        let standard_error = spread / (samples as f64).sqrt() / (mean - fresh);
        // The key's weights against the average key's.
        let big = ck.big_key().coefficients();
        let ones_big = big.iter().filter(|&&s| s != 0).count() as f64;
        let s_norm = (1.0 + ones_big) / (1.0 + (k * n) as f64 / 2.0);
        let multiplied = if g == 2 {
            let live = small.chunks(2).filter(|p| p[0] != 0 || p[1] != 0).count();
            live as f64 / (lwe_n / 2) as f64 / 0.75
        } else {
            small.iter().filter(|&&s| s != 0).count() as f64 / lwe_n as f64 / 0.5
        };
        let (key_part, rounding_part) = params.step_variance_parts();
        (
            measured,
            key_part + rounding_part * multiplied * s_norm,
            standard_error,
        )
    }

    /// Measured variances against the analysis of the keys' set, each held
    /// to [`within`] (a part with a count of 0 is not
    /// measured): one blind-rotation step over `rotations` independent short
    /// rotations ([`measured_step_variance`]), and the key switch + modulus
    /// switch error over `inputs` inputs (one sample each). The step check
    /// also shows its power: the same measurement against a prediction 10%
    /// too high or too low fails.
    fn check_measured_noise(ck: &ClientKey, sk: &ServerKey, inputs: u64, rotations: usize) {
        let params = &ck.params;
        let analysis = params.noise();
        let n = sk.ctx.n;
        let two_n = 2 * n as u64;

        let report = |what, measured: f64, predicted: f64, samples| {
            eprintln!(
                "{} {what}: measured {measured:.4e} (2^{:.3}), predicted {predicted:.4e} (2^{:.3}), ratio {:.4}, {samples} samples",
                params.name,
                measured.log2(),
                predicted.log2(),
                measured / predicted
            );
        };
        if rotations > 0 {
            let (measured, predicted, standard_error) =
                measured_step_variance(ck, sk, rotations, 7);
            report("blind-rotation step", measured, predicted, rotations);
            eprintln!("  relative standard error {standard_error:.4}");
            // The empirical standard error, and never less than a Gaussian's.
            let standard_error = standard_error.max((2.0 / rotations as f64).sqrt());
            assert!(within(measured, predicted, standard_error));
            for wrong in [1.1, 1.0 / 1.1] {
                assert!(
                    !within(measured, predicted * wrong, standard_error),
                    "a prediction {wrong}x the right one passes"
                );
            }
            // The average key's prediction is the analysis' step.
            let relative = predicted / analysis.external_product - 1.0;
            assert!(relative.abs() < 0.1, "{relative}");
        }
        if inputs > 0 {
            let errors: Vec<f64> = (0..inputs)
                .into_par_iter()
                .map(|i| {
                    let ct = ck.encrypt_torus((i % 16) << 59).unwrap();
                    let sw = sk.switch_in(&ct).unwrap();
                    let switched = switched_phase(ck, &sw);
                    // Input error in units of 1/(2N): switched phase minus the exact one.
                    let exact = ck.phase(&ct).unwrap() as f64 / 2f64.powi(64) * two_n as f64;
                    let mut e = switched as f64 - exact;
                    e -= (e / two_n as f64).round() * two_n as f64;
                    e
                })
                .collect();
            let count = errors.len() as f64;
            let mean = errors.iter().sum::<f64>() / count;
            let variance = errors.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (count - 1.0);
            // The key switch's digits are uniform in [-B/2, B/2): mean -1/2,
            // so the analysis' E[d^2] = (B^2 + 2) / 12 is a variance
            // (B^2 - 1) / 12 plus 1/4 of the rows' noise that is, for one
            // key, a fixed offset -1/2 sum e_row (removed with the mean).
            let scale = (2.0 * n as f64).powi(2);
            let rows = (params.glwe_dimension * n) as f64 * params.ks_levels as f64;
            let row_variance = params.lwe_noise_std.powi(2)
                + (params.lwe_dimension as f64 / 2.0 + 1.0) / 12.0 * 2f64.powi(-64);
            let offset = rows * row_variance / 4.0;
            let fresh = params.glwe_noise_std.powi(2);
            let predicted =
                (analysis.key_switch - offset + fresh) * scale + analysis.modulus_switch;
            report("input", variance, predicted, inputs as usize);
            // One key's rows: sum e_row^2 varies by sqrt(2 / rows) of the
            // key switch's share.
            let share = analysis.key_switch * scale / predicted;
            let per_key = share * (2.0 / rows).sqrt();
            assert!(
                within(
                    variance,
                    predicted,
                    (2.0 / count + per_key * per_key).sqrt()
                ),
                "{}: input variance {variance} against {predicted}",
                params.name
            );
        }
    }

    /// |measured / predicted - 1| within four relative standard errors (a
    /// chance failure about once in 16 000 checks) and 0.5% for the
    /// approximations of the analysis. A set's failure
    /// bound is computed from the analysis, and its exponent scales as
    /// 1 / variance: a variance 10% above the analysis would turn 2^-128
    /// into about 2^-116; the measurements hold the analysis to about 6.5%.
    fn within(measured: f64, predicted: f64, standard_error: f64) -> bool {
        (measured / predicted - 1.0).abs() <= 4.0 * standard_error + 0.005
    }

    /// Short rotations per blind-rotation check: a standard error of at
    /// least 1.29% (that of a Gaussian's sample variance; the samples' own
    /// spread gives about 1.5%), so a tolerance of about 6.5%, within which
    /// a 10% error cannot hide (each check asserts that it does not).
    const ROTATION_SAMPLES: usize = 12_000;

    /// The 2_2 set: 12 000 short rotations, 12 000 inputs.
    #[test]
    fn measured_noise_matches_the_analysis() {
        let (ck, sk) = test_keys_2_2();
        check_measured_noise(ck, sk, 12000, ROTATION_SAMPLES);
    }

    /// The multi-bit 2_2 set (the integer workloads' and the router's).
    #[test]
    fn measured_noise_of_the_multi_bit_2_2_set() {
        let (ck, sk) = test_keys_2_2_multi_bit();
        check_measured_noise(ck, sk, 12000, ROTATION_SAMPLES);
    }

    /// The boolean and 1_1 sets (k = 2, N = 1024); 8 000 inputs, as their
    /// key switch is mostly what their input noise is.
    #[test]
    fn measured_noise_of_the_boolean_set() {
        measured_noise_of(TfheParameters::boolean(), 7, 8000, ROTATION_SAMPLES);
    }

    #[test]
    fn measured_noise_of_the_1_1_set() {
        measured_noise_of(
            TfheParameters::message_1_carry_1(),
            8,
            8000,
            ROTATION_SAMPLES,
        );
    }

    #[test]
    fn measured_noise_of_the_multi_bit_1_1_set() {
        measured_noise_of(
            TfheParameters::message_1_carry_1_multi_bit(),
            10,
            8000,
            ROTATION_SAMPLES,
        );
    }

    /// The multi-bit boolean set (the gate workload's).
    #[test]
    fn measured_noise_of_the_multi_bit_boolean_set() {
        measured_noise_of(
            TfheParameters::boolean_multi_bit(),
            9,
            8000,
            ROTATION_SAMPLES,
        );
    }

    /// The 3_3 sets (N = 8192): the blind rotation only. Their key switch
    /// streams a 200-250 MB key per input (~20 ms): the ~10 000 inputs a
    /// check needs are a one-off run, below, not CI's.
    #[test]
    fn measured_noise_of_the_3_3_set() {
        measured_noise_of(TfheParameters::message_3_carry_3(), 11, 0, ROTATION_SAMPLES);
    }

    #[test]
    fn measured_noise_of_the_3_3_2m64_set() {
        measured_noise_of(
            TfheParameters::message_3_carry_3_2m64(),
            12,
            0,
            ROTATION_SAMPLES,
        );
    }

    /// The 3_3 sets' key switch + modulus switch over 10 000 inputs each
    /// (one set's keys at a time), several minutes of CPU, behind the
    /// `slow-noise` feature (too long for the default tests; ci/test.sh
    /// builds it):
    /// `cargo test --release -p triskel-tfhe --features slow-noise --lib -- 3_3_sets`.
    #[cfg(feature = "slow-noise")]
    #[test]
    fn measured_key_switch_noise_of_the_3_3_sets() {
        measured_noise_of(TfheParameters::message_3_carry_3(), 13, 10000, 0);
        measured_noise_of(TfheParameters::message_3_carry_3_2m64(), 14, 10000, 0);
    }

    fn measured_noise_of(params: TfheParameters, seed: u8, inputs: u64, rotations: usize) {
        let mut rng = Prng::from_seed([seed; 32]);
        let ck = ClientKey::generate_with(&params, &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng).unwrap();
        check_measured_noise(&ck, &sk, inputs, rotations);
    }

    /// The test vector of 16 levels (v 2^59 for v < 16) both noise tests rotate.
    fn sixteen_levels(sk: &ServerKey) -> TestVector {
        sk.test_vector(&(0..16).map(|v| v << 59).collect::<Vec<_>>())
            .unwrap()
    }

    /// b - <a, s> mod 2N of a switched ciphertext, with the small key.
    fn switched_phase(ck: &ClientKey, sw: &SwitchedLwe) -> u64 {
        let two_n = 1u64 << sw.log_modulus;
        let dot =
            sw.a.iter()
                .zip(ck.small.coefficients())
                .map(|(&a, &s)| a * s)
                .sum::<u64>();
        (sw.b + two_n * 1000 - dot % two_n) % two_n
    }

    /// The sum over the accumulator's coefficients of the squared error
    /// (relative to q) of its phase against X^-switched tv.
    fn rotation_error_squares(
        ck: &ClientKey,
        sk: &ServerKey,
        acc: &[u64],
        tv: &TestVector,
        switched: u64,
    ) -> f64 {
        let n = sk.ctx.n;
        let two_n = 2 * n as u64;
        let phase = ck.glwe.phase_of(acc).unwrap();
        let mut want = vec![0u64; n];
        rotate(
            &sk.ctx.modulus,
            &tv.0,
            ((two_n - switched) % two_n) as usize,
            &mut want,
        );
        phase
            .iter()
            .zip(&want)
            .map(|(&got, &w)| rel_mod_q(got, w, sk.ctx.q()).powi(2))
            .sum()
    }

    /// The multi-bit blind rotation: the two-thread pipeline gives the
    /// sequential result bit for bit, and the rotation decrypts to
    /// X^-(b - <a, s>) tv (its noise is measured by
    /// `measured_noise_of_the_multi_bit_2_2_set`).
    #[test]
    fn multi_bit_rotation_is_exact_in_two_threads() {
        let (ck, sk) = test_keys_2_2_multi_bit();
        let n = sk.ctx.n;
        let two_n = 2 * n as u64;
        let tv = sixteen_levels(sk);
        for i in 0..4u64 {
            let ct = ck.encrypt_torus((i % 16) << 59).unwrap();
            let sw = sk.switch_in(&ct).unwrap();
            let switched = switched_phase(ck, &sw);
            let acc = sk.blind_rotate(&sw, &tv).unwrap();
            let mut start = vec![0u64; sk.ctx.glwe_len()];
            rotate(
                &sk.ctx.modulus,
                &tv.0,
                ((two_n - sw.b) % two_n) as usize,
                &mut start[n..],
            );
            for parallel in [false, true] {
                let mut other = start.clone();
                sk.rotate_by_mask(&sw.a, &mut other, parallel).unwrap();
                assert_eq!(other[..], acc[..], "parallel = {parallel}");
            }
            // Noise far below a box (2^-5 of q): a mean square below 2^-20.
            let squares = rotation_error_squares(ck, sk, &acc, &tv, switched);
            assert!(squares / (n as f64) < 2f64.powi(-20), "{squares}");
        }
    }
}
