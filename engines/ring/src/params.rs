//! The part of a parameter set that every RLWE engine (BFV, CKKS) shares:
//! name, ring degree, prime sizes of Q and P, key-switching digits, the
//! permission to be insecure; its checks, its key-switching context and its
//! serialized form. An engine's set is this plus the scheme's own field
//! (BFV: the plaintext modulus; CKKS: the scale).

use crate::basis::{digit_ranges, split_modulus_bits};
use crate::error::Result;
use crate::keyswitch::KeySwitchContext;
use crate::rlwe::key_switch_context;
use crate::sampling::NoiseDistribution;
use crate::security::check_rlwe_set;
use crate::serialize::Reader;

/// An RLWE parameter set without its scheme's field. The primes are derived
/// deterministically from the bit sizes, so the fields describe it fully.
///
/// Two sets are equal when they describe the same instance: the permission
/// [`allow_insecure`](Self::allow_insecure) is not part of that, and it is
/// never serialized.
#[derive(Clone, Debug)]
pub struct RlweSet {
    name: String,
    n: usize,
    q_bits: Vec<u32>,
    p_bits: Vec<u32>,
    dnum: usize,
    allow_insecure: bool,
}

impl PartialEq for RlweSet {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.n == other.n
            && self.q_bits == other.q_bits
            && self.p_bits == other.p_bits
            && self.dnum == other.dnum
    }
}
impl Eq for RlweSet {}

impl RlweSet {
    /// A set (checked by [`check`](Self::check), not here).
    pub fn new(name: &str, n: usize, q_bits: &[u32], p_bits: &[u32], dnum: usize) -> RlweSet {
        RlweSet {
            name: name.to_string(),
            n,
            q_bits: q_bits.to_vec(),
            p_bits: p_bits.to_vec(),
            dnum,
            allow_insecure: false,
        }
    }

    /// The same set under another name.
    pub fn with_name(mut self, name: String) -> RlweSet {
        self.name = name;
        self
    }

    /// The same set with `dnum` key-switching digits.
    pub fn with_dnum(mut self, dnum: usize) -> RlweSet {
        self.dnum = dnum;
        self
    }

    /// The same set with Q and P each re-split into primes of at most
    /// `max_bits` bits ([`split_modulus_bits`]: log Q and log P never grow)
    /// and dnum raised so that no key-switching digit holds more bits than
    /// before; the name records it. Unchanged when every prime already fits.
    pub fn with_prime_bits(mut self, max_bits: u32) -> Result<RlweSet> {
        if self
            .q_bits
            .iter()
            .chain(&self.p_bits)
            .all(|&b| b <= max_bits)
        {
            return Ok(self);
        }
        let digit_bits = digit_ranges(self.q_bits.len(), self.dnum)?
            .into_iter()
            .map(|r| self.q_bits[r].iter().sum::<u32>())
            .max()
            .unwrap_or(max_bits);
        self.q_bits = split_modulus_bits(self.q_bits.iter().sum(), max_bits)?;
        self.p_bits = split_modulus_bits(self.p_bits.iter().sum(), max_bits)?;
        let alpha = (digit_bits / max_bits).max(1) as usize;
        self.dnum = self.q_bits.len().div_ceil(alpha);
        self.name = format!("{}-p{max_bits}", self.name);
        Ok(self)
    }

    /// Accepts a set above the 128-bit limit, for tests and experiments.
    pub fn allow_insecure(mut self) -> RlweSet {
        self.allow_insecure = true;
        self
    }

    /// True when [`allow_insecure`](Self::allow_insecure) was called.
    pub fn allows_insecure(&self) -> bool {
        self.allow_insecure
    }

    /// The set's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Ring degree n.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Bit sizes of the ciphertext primes q_0..q_L.
    pub fn q_bits(&self) -> &[u32] {
        &self.q_bits
    }

    /// Bit sizes of the special (key-switching) primes.
    pub fn p_bits(&self) -> &[u32] {
        &self.p_bits
    }

    /// Number of key-switching digits.
    pub fn dnum(&self) -> usize {
        self.dnum
    }

    /// The highest level, L = number of Q primes - 1.
    pub fn max_level(&self) -> usize {
        self.q_bits.len().saturating_sub(1)
    }

    /// log2(QP) from the prime sizes (an upper bound of the real figure).
    pub fn log_qp(&self) -> u32 {
        self.q_bits.iter().chain(&self.p_bits).sum()
    }

    /// [`check_rlwe_set`] with primes of at most `max_prime_bits` bits:
    /// 128-bit security included unless the set allows being insecure.
    pub fn check(&self, max_prime_bits: u32) -> Result<()> {
        check_rlwe_set(
            self.n,
            &self.q_bits,
            &self.p_bits,
            self.dnum,
            max_prime_bits,
            self.allow_insecure,
        )
    }

    /// The set's key-switching context ([`key_switch_context`]), whose Q is
    /// the scheme's top-level basis.
    pub fn key_switch_context(&self, noise: NoiseDistribution) -> Result<KeySwitchContext> {
        key_switch_context(self.n, &self.q_bits, &self.p_bits, self.dnum, noise)
    }

    /// Appends `name_len: u16 | name | n: u32 | kq: u8 | kq x bits: u8 |
    /// kp: u8 | kp x bits: u8 | scheme_field | dnum: u32` (names longer than
    /// 2^16 - 1 bytes are cut).
    pub fn write(&self, out: &mut Vec<u8>, scheme_field: &[u8]) {
        let name = &self.name.as_bytes()[..self.name.len().min(u16::MAX as usize)];
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(&(self.n as u32).to_le_bytes());
        for bits in [&self.q_bits, &self.p_bits] {
            out.push(bits.len() as u8);
            out.extend(bits.iter().map(|&b| b as u8));
        }
        out.extend_from_slice(scheme_field);
        out.extend_from_slice(&(self.dnum as u32).to_le_bytes());
    }

    /// Reads [`write`](Self::write) output, the scheme's field with
    /// `scheme_field`. Unchecked and not insecure: the caller checks it.
    pub fn read<T>(
        r: &mut Reader<'_>,
        scheme_field: impl FnOnce(&mut Reader<'_>) -> Result<T>,
    ) -> Result<(RlweSet, T)> {
        let len = u16::from_le_bytes([r.u8()?, r.u8()?]) as usize;
        let name = std::str::from_utf8(r.take(len)?)
            .map_err(|_| crate::Error::Malformed("parameter set name is not UTF-8".into()))?
            .to_string();
        let n = r.u32()? as usize;
        let mut read_bits = || -> Result<Vec<u32>> {
            let k = r.u8()? as usize;
            Ok(r.take(k)?.iter().map(|&b| b as u32).collect())
        };
        let (q_bits, p_bits) = (read_bits()?, read_bits()?);
        let field = scheme_field(r)?;
        let dnum = r.u32()? as usize;
        Ok((RlweSet::new(&name, n, &q_bits, &p_bits, dnum), field))
    }
}
