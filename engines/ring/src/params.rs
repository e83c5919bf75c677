//! The part of a parameter set that every RLWE engine (BFV, CKKS) shares:
//! name, ring degree, prime sizes of Q and P, key-switching digits, the
//! permission to be insecure; its checks, its key-switching context and its
//! serialized form. An engine's set is this plus the scheme's own field
//! (BFV: the plaintext modulus; CKKS: the scale).

use crate::basis::{allocate_primes, digit_ranges, split_modulus_bits, RnsBasis};
use crate::error::{invalid, Error, Result};
use crate::keyswitch::KeySwitchContext;
use crate::sampling::NoiseDistribution;
use crate::security::{max_log_qp_128, HE_STANDARD_128, MAX_SET_PRIMES};
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

    /// Checks what every RLWE parameter set shares: n one of the degrees of
    /// the 128-bit table (even for a set allowed to be insecure), at least
    /// one ciphertext (Q) and one special (P) prime and at most
    /// [`MAX_SET_PRIMES`] in all, prime sizes in 20..=`max_prime_bits`,
    /// `dnum` in 1..=|Q|, and log2(QP) within the 128-bit limit unless the
    /// set allows being insecure (never set by loaded bytes).
    pub fn check(&self, max_prime_bits: u32) -> Result<()> {
        let (n, q_bits, p_bits, dnum) = (self.n, &self.q_bits, &self.p_bits, self.dnum);
        if max_log_qp_128(n).is_none() {
            let degrees: Vec<String> = HE_STANDARD_128.iter().map(|(d, _)| d.to_string()).collect();
            return invalid(format!(
                "ring degree {n} is not one that the 128-bit security table covers ({})",
                degrees.join(", ")
            ));
        }
        if q_bits.is_empty() || p_bits.is_empty() {
            return invalid("at least one ciphertext prime and one special prime are needed");
        }
        if q_bits.len() + p_bits.len() > MAX_SET_PRIMES {
            return invalid(format!(
                "{} primes in all; a set has at most {MAX_SET_PRIMES}",
                q_bits.len() + p_bits.len()
            ));
        }
        if let Some(b) = q_bits
            .iter()
            .chain(p_bits.iter())
            .find(|b| !(20..=max_prime_bits).contains(*b))
        {
            return invalid(format!(
                "prime size {b} bits is outside 20..={max_prime_bits}"
            ));
        }
        if dnum == 0 || dnum > q_bits.len() {
            return invalid(format!("dnum = {dnum} must be in 1..={}", q_bits.len()));
        }
        let log_qp = self.log_qp();
        match max_log_qp_128(n) {
            Some(max) if log_qp <= max => Ok(()),
            _ if self.allow_insecure => Ok(()),
            max => Err(Error::Insecure {
                n,
                log_qp,
                max_log_qp: max.unwrap_or(0),
            }),
        }
    }

    /// The key-switching context: distinct NTT-friendly primes of the
    /// sizes of Q and P, allocated together, with the set's digits and
    /// `noise` for its keys. Its [`q`](KeySwitchContext::q) is the scheme's
    /// top-level basis.
    pub fn key_switch_context(&self, noise: NoiseDistribution) -> Result<KeySwitchContext> {
        let all_bits: Vec<u32> = self.q_bits.iter().chain(&self.p_bits).copied().collect();
        let primes = allocate_primes(self.n, &all_bits)?;
        let (q_primes, p_primes) = primes.split_at(self.q_bits.len());
        let q = RnsBasis::new(self.n, q_primes)?;
        let p = RnsBasis::new(self.n, p_primes)?;
        KeySwitchContext::new(&q, &p, self.dnum, noise)
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
