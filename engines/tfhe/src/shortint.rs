//! Small-integer blocks: a message in [0, message_modulus) with carry space
//! above it and a padding bit, m * 2^64 / (2 p) with p = message_modulus *
//! carry_modulus. Each ciphertext tracks its degree (largest value it can
//! hold) and noise level (sum of |coefficients| of bootstrapped outputs it is
//! a combination of); operations that would exceed either return
//! [`Error::Budget`] instead of decrypting wrongly. Each ciphertext carries
//! the name of its parameter set and the identity of its client key: keys of
//! another set refuse it ([`Error::Mismatch`]), keys of another client of the
//! same set too ([`triskel_ring::Error::KeyMismatch`]). A lookup table is
//! public (a function's outputs, no key in it): it carries only its set,
//! whose block space and ring degree it follows.

use rayon::prelude::*;
use triskel_ring::LweCiphertext;

use crate::error::{Error, Result};
use crate::keys::{ClientKey, Owner, ServerKey, TestVector};
use crate::params::Encoding;

/// An encrypted block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ciphertext {
    pub(crate) lwe: LweCiphertext,
    pub(crate) degree: u64,
    pub(crate) noise_level: u64,
    /// The parameter set and client key it was made with.
    pub(crate) owner: Owner,
}

/// (message_modulus, carry_modulus, max_noise_level) of an integer set.
pub(crate) fn moduli(encoding: Encoding) -> Result<(u64, u64, u64)> {
    match encoding {
        Encoding::Integer {
            message_modulus,
            carry_modulus,
            max_noise_level,
        } => Ok((message_modulus, carry_modulus, max_noise_level)),
        Encoding::Boolean => Err(Error::Mismatch(
            "boolean parameters used for integer blocks".into(),
        )),
    }
}

/// The torus step of one unit: 2^64 / (2 p).
fn delta(p: u64) -> u64 {
    (1u64 << 63) / p
}

impl Ciphertext {
    /// The largest value the block can hold.
    pub fn degree(&self) -> u64 {
        self.degree
    }

    /// The noise level (1 after a bootstrap).
    pub fn noise_level(&self) -> u64 {
        self.noise_level
    }

    /// The underlying LWE ciphertext (under the big key).
    pub fn lwe(&self) -> &LweCiphertext {
        &self.lwe
    }

    /// The name of its parameter set: only keys of that set take it.
    pub fn set_name(&self) -> &'static str {
        self.owner.set
    }

    /// The identity of its client key: only that key and its server key
    /// take it.
    pub fn key_id(&self) -> triskel_ring::KeyId {
        self.owner.key
    }
}

impl ClientKey {
    /// Encrypts m < message_modulus.
    pub fn encrypt(&self, m: u64) -> Result<Ciphertext> {
        let (torus, degree) = self.encode_block(m)?;
        Ok(Ciphertext {
            lwe: self.encrypt_torus(torus)?,
            degree,
            noise_level: 1,
            owner: self.owner(),
        })
    }

    /// The torus value of m < message_modulus and the degree of its fresh
    /// encryption.
    pub(crate) fn encode_block(&self, m: u64) -> Result<(u64, u64)> {
        let (msg, carry, _) = moduli(self.params.encoding)?;
        if m >= msg {
            // The message itself is not shown: it is a plaintext.
            return Err(Error::OutOfRange(format!("message outside [0, {msg})")));
        }
        // The degree is public metadata (the server branches on it and
        // serializes it): it must not depend on the message.
        Ok((m * delta(msg * carry), msg - 1))
    }

    /// Decrypts message and carry: the value in [0, message_modulus * carry_modulus).
    pub fn decrypt_with_carry(&self, ct: &Ciphertext) -> Result<u64> {
        self.owner().check("a block", ct.owner)?;
        let (msg, carry, _) = moduli(self.params.encoding)?;
        let p = msg * carry;
        let phase = self.phase(&ct.lwe)?;
        // round(phase / delta) mod 2p, then drop the padding bit; delta is a
        // power of two (p is), so shifts keep the secret phase off a divider.
        let shift = delta(p).trailing_zeros();
        let v = phase.wrapping_add(1 << (shift - 1)) >> shift;
        Ok(v & (p - 1))
    }

    /// Decrypts the message (carries dropped).
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<u64> {
        let v = self.decrypt_with_carry(ct)?;
        let (msg, _, _) = moduli(self.params.encoding)?;
        // msg is a power of two: a mask, not a division on the secret value.
        Ok(v & (msg - 1))
    }

    /// The noise of ct's phase around its decrypted value, relative to 2^64.
    pub fn noise(&self, ct: &Ciphertext) -> Result<f64> {
        let v = self.decrypt_with_carry(ct)?;
        let (msg, carry, _) = moduli(self.params.encoding)?;
        let phase = self.phase(&ct.lwe)?;
        Ok(crate::keys::centered(
            phase.wrapping_sub(v * delta(msg * carry)),
        ))
    }
}

impl ServerKey {
    pub(crate) fn moduli(&self) -> Result<(u64, u64, u64)> {
        moduli(self.params.encoding)
    }

    /// Refuses blocks of another parameter set or client key: every
    /// operation on blocks calls it before reading them.
    pub(crate) fn check_blocks<'a>(
        &self,
        blocks: impl IntoIterator<Item = &'a Ciphertext>,
    ) -> Result<()> {
        blocks
            .into_iter()
            .try_for_each(|b| self.owner().check("a block", b.owner))
    }

    /// Refuses lookup tables of another parameter set (their test vectors
    /// follow the set's block space and ring degree; a table holds no key,
    /// so any key of the set takes it).
    fn check_tables<'a>(&self, sets: impl IntoIterator<Item = &'a str>) -> Result<()> {
        sets.into_iter()
            .try_for_each(|set| self.params.check_set("a lookup table", set))
    }

    /// A block of this key's set and client key.
    pub(crate) fn block(&self, lwe: LweCiphertext, degree: u64, noise_level: u64) -> Ciphertext {
        Ciphertext {
            lwe,
            degree,
            noise_level,
            owner: self.owner(),
        }
    }

    /// A block holding 1 when the small-key ciphertext's phase is in
    /// [1/2, 1) and 0 in [0, 1/2) (one [`sign_bootstrap`](Self::sign_bootstrap)):
    /// the top bit of a torus value, e.g. a comparison read from another
    /// engine's coefficients. The input must carry this key's identity (a
    /// ciphertext of another key is refused with
    /// [`triskel_ring::Error::KeyMismatch`]), as the output of
    /// [`key_switch`](Self::key_switch) or of a key-switching key from
    /// [`ClientKey::key_switching_key_from`] does; the block carries it too.
    pub fn sign_block(&self, small: &LweCiphertext) -> Result<Ciphertext> {
        let (msg, carry, _) = self.moduli()?;
        let half = delta(msg * carry) / 2;
        // -(+-half) + half: 0 for [0, 1/2), one unit (2 half) for [1/2, 1).
        let mut lwe = self.sign_bootstrap(small, half)?;
        lwe.neg_assign();
        lwe.add_constant(half);
        Ok(self.block(lwe, 1, 1))
    }

    /// The lookup table of f on the whole block [0, p): f's outputs must be < p.
    pub fn lookup_table(&self, f: impl Fn(u64) -> u64) -> Result<LookupTable> {
        let (msg, carry, _) = self.moduli()?;
        let p = msg * carry;
        let outputs: Vec<u64> = (0..p).map(&f).collect();
        if let Some(bad) = outputs.iter().find(|&&v| v >= p) {
            return Err(Error::OutOfRange(format!(
                "lookup table output {bad} outside [0, {p})"
            )));
        }
        let torus: Vec<u64> = outputs.iter().map(|&v| v * delta(p)).collect();
        Ok(LookupTable {
            tv: self.test_vector(&torus)?,
            outputs,
            set: self.params.name,
        })
    }

    /// The test vector of g on signed values x in [-limit, limit], limit < p,
    /// for the server's own intermediate values: a negative x lies in the
    /// padding half of the torus, where the blind rotation reads the box of
    /// x + p negated, so the box y holds g(y) for y <= limit and -g(y - p)
    /// for y >= p - limit (they must agree where both are reachable). g's
    /// outputs are units in (-p, p).
    pub(crate) fn signed_test_vector(
        &self,
        limit: u64,
        g: impl Fn(i64) -> i64,
    ) -> Result<TestVector> {
        let (msg, carry, _) = self.moduli()?;
        let p = msg * carry;
        if limit >= p {
            return Err(Error::OutOfRange(format!("signed range {limit} for {p}")));
        }
        let mut torus = Vec::with_capacity(p as usize);
        for y in 0..p {
            let from_above = (y <= limit).then(|| g(y as i64));
            let from_below = (y > 0 && p - y <= limit).then(|| -g(y as i64 - p as i64));
            let unit = match (from_above, from_below) {
                (Some(u), Some(v)) if u != v => {
                    return Err(Error::OutOfRange(format!(
                        "signed lookup table: {u} and {v} share box {y}"
                    )))
                }
                (Some(u), _) | (None, Some(u)) => u,
                (None, None) => 0,
            };
            if unit.unsigned_abs() >= p {
                return Err(Error::OutOfRange(format!("lookup table output {unit}")));
            }
            torus.push((unit as u64).wrapping_mul(delta(p)));
        }
        self.test_vector(&torus)
    }

    /// f applied to the block (value and carries) by one bootstrap: the
    /// result has noise level 1 and the largest output of f on the values
    /// the block can hold as its degree.
    pub fn apply_lookup_table(&self, ct: &Ciphertext, lut: &LookupTable) -> Result<Ciphertext> {
        self.check_blocks([ct])?;
        self.check_tables([lut.set])?;
        let lwe = self.bootstrap(&ct.lwe, &lut.tv)?;
        Ok(self.block(lwe, lut.degree_on(ct.degree), 1))
    }

    /// Many LUT applications in parallel (rayon).
    pub fn apply_lookup_tables(
        &self,
        cts: &[&Ciphertext],
        luts: &[&LookupTable],
    ) -> Result<Vec<Ciphertext>> {
        self.check_blocks(cts.iter().copied())?;
        self.check_tables(luts.iter().map(|l| l.set))?;
        let lwes: Vec<&LweCiphertext> = cts.iter().map(|c| &c.lwe).collect();
        let tvs: Vec<&TestVector> = luts.iter().map(|l| &l.tv).collect();
        Ok(self
            .bootstrap_many(&lwes, &tvs)?
            .into_iter()
            .zip(luts.iter().zip(cts))
            .map(|(lwe, (l, c))| self.block(lwe, l.degree_on(c.degree), 1))
            .collect())
    }

    /// Several LUTs of one block: one key switch and modulus switch shared by
    /// all, the blind rotations in parallel.
    pub fn apply_lookup_tables_shared(
        &self,
        ct: &Ciphertext,
        luts: &[&LookupTable],
    ) -> Result<Vec<Ciphertext>> {
        self.check_blocks([ct])?;
        self.check_tables(luts.iter().map(|l| l.set))?;
        let sw = self.switch_in(&ct.lwe)?;
        luts.par_iter()
            .map(|l| {
                let acc = self.blind_rotate(&sw, &l.tv)?;
                Ok(self.block(self.extract(&acc)?, l.degree_on(ct.degree), 1))
            })
            .collect()
    }

    /// Two LUTs in one test vector, for blocks holding less than p / 2: f in
    /// the lower half of the boxes, g in the upper half.
    pub fn two_lookup_tables(
        &self,
        f: impl Fn(u64) -> u64,
        g: impl Fn(u64) -> u64,
    ) -> Result<TwoLookupTables> {
        let (msg, carry, _) = self.moduli()?;
        let p = msg * carry;
        let half = p / 2;
        let outputs: Vec<u64> = (0..p)
            .map(|v| if v < half { f(v) } else { g(v - half) })
            .collect();
        if let Some(bad) = outputs.iter().find(|&&v| v >= p) {
            return Err(Error::OutOfRange(format!(
                "lookup table output {bad} outside [0, {p})"
            )));
        }
        let torus: Vec<u64> = outputs.iter().map(|&v| v * delta(p)).collect();
        let (f_outputs, g_outputs) = outputs.split_at(half as usize);
        Ok(TwoLookupTables {
            tv: self.test_vector(&torus)?,
            f_outputs: f_outputs.to_vec(),
            g_outputs: g_outputs.to_vec(),
            set: self.params.name,
        })
    }

    /// (f(x), g(x)) for a block x < p / 2 from one key switch and one blind
    /// rotation: coefficient 0 of the accumulator reads f(x), coefficient
    /// N / 2 reads the box p / 2 further on, g(x).
    pub fn apply_two_lookup_tables(
        &self,
        ct: &Ciphertext,
        luts: &TwoLookupTables,
    ) -> Result<(Ciphertext, Ciphertext)> {
        self.check_blocks([ct])?;
        self.check_tables([luts.set])?;
        let (msg, carry, _) = self.moduli()?;
        if ct.degree >= msg * carry / 2 {
            return Err(Error::Budget(format!(
                "two LUTs in one bootstrap need a block below {}",
                msg * carry / 2
            )));
        }
        let acc = self.blind_rotate(&self.switch_in(&ct.lwe)?, &luts.tv)?;
        let out = |index: usize, degree: u64| -> Result<Ciphertext> {
            Ok(self.block(self.extract_at(&acc, index)?, degree, 1))
        };
        Ok((
            out(0, max_output(&luts.f_outputs, ct.degree))?,
            out(self.ctx.n / 2, max_output(&luts.g_outputs, ct.degree))?,
        ))
    }

    /// The LUT of f(a, b) for blocks packed as a * message_modulus + b
    /// (a, b < message_modulus; needs carry_modulus >= message_modulus).
    pub fn bivariate_lookup_table(&self, f: impl Fn(u64, u64) -> u64) -> Result<LookupTable> {
        let (msg, carry, _) = self.moduli()?;
        if carry < msg {
            return Err(Error::InvalidParameters(
                "bivariate lookup tables need carry_modulus >= message_modulus".into(),
            ));
        }
        self.lookup_table(|x| f(x / msg, x % msg))
    }

    /// a * message_modulus + b for clean blocks (degree < message_modulus),
    /// the input of a bivariate lookup table. An input whose noise level
    /// would push the packing past the set's maximum is bootstrapped first.
    pub fn pack(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check_blocks([a, b])?;
        let (msg, _, max_noise) = self.moduli()?;
        if a.degree >= msg || b.degree >= msg {
            return Err(Error::Budget(
                "packing needs clean blocks: propagate carries first".into(),
            ));
        }
        let fits = |a: &Ciphertext, b: &Ciphertext| {
            a.noise_level
                .saturating_mul(msg)
                .saturating_add(b.noise_level)
                <= max_noise
        };
        let refresh = |c: &Ciphertext| -> Result<Ciphertext> {
            self.apply_lookup_table(c, &self.lookup_table(|x| x % msg)?)
        };
        let a = if fits(a, b) { a.clone() } else { refresh(a)? };
        let b = if fits(&a, b) { b.clone() } else { refresh(b)? };
        self.unchecked_add(&self.unchecked_scalar_mul(&a, msg)?, &b)
    }

    /// A noiseless encryption of the constant m < p (degree m). Made without
    /// a secret, it carries this server key's identity: it hides nothing, so
    /// the identity only says which keys it is combined with, and it
    /// decrypts under this key's client key like any of its blocks.
    pub fn trivial(&self, m: u64) -> Result<Ciphertext> {
        let (msg, carry, _) = self.moduli()?;
        let p = msg * carry;
        if m >= p {
            return Err(Error::OutOfRange(format!("constant {m} outside [0, {p})")));
        }
        let lwe = LweCiphertext::trivial(self.ctx.k * self.ctx.n, m * delta(p), self.id);
        Ok(self.block(lwe, m, 0))
    }

    /// Refuses operands of another set, then a result of `degree` and
    /// `noise` level beyond the set's budgets.
    fn check_budget(&self, operands: &[&Ciphertext], degree: u64, noise: u64) -> Result<()> {
        self.check_blocks(operands.iter().copied())?;
        let (msg, carry, max_noise) = self.moduli()?;
        if degree >= msg * carry {
            return Err(Error::Budget(format!(
                "degree {degree} would overflow the carry space of {}",
                msg * carry
            )));
        }
        if noise > max_noise {
            return Err(Error::Budget(format!(
                "noise level {noise} above {max_noise}"
            )));
        }
        Ok(())
    }

    /// a + b without a bootstrap (carries accumulate).
    pub fn unchecked_add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let (degree, noise) = (a.degree + b.degree, a.noise_level + b.noise_level);
        self.check_budget(&[a, b], degree, noise)?;
        let mut lwe = a.lwe.clone();
        lwe.add_assign(&b.lwe)?;
        Ok(self.block(lwe, degree, noise))
    }

    /// a + c for a constant c, without a bootstrap.
    pub fn unchecked_scalar_add(&self, a: &Ciphertext, c: u64) -> Result<Ciphertext> {
        let (msg, carry, _) = self.moduli()?;
        let degree = a.degree.saturating_add(c);
        self.check_budget(&[a], degree, a.noise_level)?;
        let mut lwe = a.lwe.clone();
        lwe.add_constant(c * delta(msg * carry));
        Ok(self.block(lwe, degree, a.noise_level))
    }

    /// a * c for a constant c, without a bootstrap.
    pub fn unchecked_scalar_mul(&self, a: &Ciphertext, c: u64) -> Result<Ciphertext> {
        let degree = a.degree.saturating_mul(c);
        let noise = a.noise_level.saturating_mul(c);
        self.check_budget(&[a], degree, noise)?;
        let mut lwe = a.lwe.clone();
        lwe.mul_scalar_assign(c as i64);
        Ok(self.block(lwe, degree, noise))
    }

    /// a - b + k * message_modulus-style correction: computes a - b + c where
    /// c (a constant, a multiple of the message modulus at least b's degree)
    /// keeps the value non-negative, without a bootstrap.
    pub fn unchecked_sub_with_offset(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        offset: u64,
    ) -> Result<Ciphertext> {
        let (msg, carry, _) = self.moduli()?;
        let degree = a.degree.saturating_add(offset);
        let noise = a.noise_level + b.noise_level;
        self.check_budget(&[a, b], degree, noise)?;
        if offset < b.degree {
            return Err(Error::OutOfRange(format!(
                "offset {offset} below the subtrahend's degree {}",
                b.degree
            )));
        }
        let mut lwe = a.lwe.clone();
        lwe.sub_assign(&b.lwe)?;
        lwe.add_constant(offset * delta(msg * carry));
        Ok(self.block(lwe, degree, noise))
    }
}

/// Two lookup tables on the lower half of a block, evaluated by one bootstrap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TwoLookupTables {
    pub(crate) tv: TestVector,
    /// f(x) and g(x) for every x of the lower half of the block space.
    pub(crate) f_outputs: Vec<u64>,
    pub(crate) g_outputs: Vec<u64>,
    /// The name of the parameter set of the key that built it.
    pub(crate) set: &'static str,
}

/// A lookup table on a whole block, with its outputs in the clear.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LookupTable {
    pub(crate) tv: TestVector,
    /// f(x) for every x of the block space.
    pub(crate) outputs: Vec<u64>,
    /// The name of the parameter set of the key that built it.
    pub(crate) set: &'static str,
}

impl LookupTable {
    /// The degree of f's output on a block of degree `input_degree`.
    pub(crate) fn degree_on(&self, input_degree: u64) -> u64 {
        max_output(&self.outputs, input_degree)
    }
}

/// The largest of `outputs[0..=input_degree]`: a block holds no value above
/// its degree, so the outputs past it are unreachable (a LUT's degree over
/// the whole block space would overstate, e.g., x * 3 / 4 on a clean block).
fn max_output(outputs: &[u64], input_degree: u64) -> u64 {
    let reachable = usize::try_from(input_degree).map_or(usize::MAX, |d| d.saturating_add(1));
    outputs.iter().take(reachable).copied().max().unwrap_or(0)
}
