//! Noise flooding of released decryptions, shared by the engines: the
//! ledger that counts the floods made under one secret (or one party's
//! share of it) and the uniform smudging of threshold decryption shares.
//!
//! **Ledger.** A security statement about flooded decryptions covers a
//! number alpha of them. A [`FloodLedger`] counts the floods made and keeps
//! the least alpha among them: a flood for a wider alpha is a narrower one
//! plus noise the adversary could add itself, so a holder that has made a
//! flood proven for alpha = 1 makes no more, whatever alpha the next one
//! names (checking only the alpha named now would let a flood made to be
//! the only one be followed by others). The count lives in memory: a
//! holder that stores and reloads its secret carries it across.
//!
//! **Smudging.** A released value v + e, where e is the ciphertext's error
//! (|e| <= B) and v is what a simulator knows, is hidden by a flood U
//! uniform on the 2^(f+1) + 1 integers of [-2^f, 2^f]: the laws of U and
//! e + U are within statistical distance |e| / (2^(f+1) + 1) <= B / 2^(f+1).
//! Over r released coefficients per decryption and alpha decryptions the
//! distance adds up (hybrid argument) to at most alpha r B / 2^(f+1), which
//! [`Smudging::width_log2`] keeps below 2^-s: 2^(f+1) >= alpha r B 2^s.

use std::sync::{Mutex, MutexGuard, PoisonError};

use triskel_kernels::Modulus;
use zeroize::Zeroizing;

use crate::error::{invalid, Error, Result};
use crate::sampling::{
    flooding_values, sample_wide_gaussian, Prng, WIDE_GAUSSIAN_MAX_SIGMA, WIDE_GAUSSIAN_TAIL,
};

/// The statistical security of a flooded release by default, in bits:
/// a statistical distance of at most 2^-40 per release.
pub const DEFAULT_SMUDGING_SECURITY: u32 = 40;

/// The widest flood [`crate::sampling::sample_flooding`] draws: 2^120.
pub const MAX_FLOOD_LOG2: u32 = 120;

/// The floods made under one secret and the least alpha among them (module
/// documentation). Thread-safe; starts at zero.
#[derive(Debug)]
pub struct FloodLedger(Mutex<LedgerState>);

#[derive(Debug)]
struct LedgerState {
    done: u64,
    least_alpha: u64,
}

impl Default for FloodLedger {
    fn default() -> FloodLedger {
        FloodLedger(Mutex::new(LedgerState {
            done: 0,
            least_alpha: u64::MAX,
        }))
    }
}

impl FloodLedger {
    fn state(&self) -> MutexGuard<'_, LedgerState> {
        // Nothing panics while the lock is held: a poisoned ledger is whole.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A ledger that has counted `done` floods, the least of whose alphas
    /// was `least_alpha` (u64::MAX before any): what a stored share
    /// carries. Refused when `done` exceeds `least_alpha`.
    pub fn restored(done: u64, least_alpha: u64) -> Result<FloodLedger> {
        if done > least_alpha || (done > 0 && least_alpha == u64::MAX) {
            return Err(Error::Malformed(format!(
                "a flood ledger of {done} releases for alpha {least_alpha}"
            )));
        }
        Ok(FloodLedger(Mutex::new(LedgerState { done, least_alpha })))
    }

    /// The floods counted and the least alpha (what [`FloodLedger::restored`]
    /// takes).
    pub fn counts(&self) -> (u64, u64) {
        let state = self.state();
        (state.done, state.least_alpha)
    }

    /// The floods counted.
    pub fn done(&self) -> u64 {
        self.state().done
    }

    /// How many more floods for `alpha` the ledger allows: the least alpha
    /// of its floods and of this one, less the floods made.
    pub fn left(&self, alpha: u64) -> u64 {
        let state = self.state();
        state.least_alpha.min(alpha).saturating_sub(state.done)
    }

    /// Counts one flood for `alpha`, or refuses it with
    /// [`Error::FloodingExhausted`] when the total would exceed the least
    /// alpha (nothing is counted then).
    pub fn count(&self, alpha: u64) -> Result<()> {
        let mut state = self.state();
        let least = state.least_alpha.min(alpha);
        if state.done >= least {
            return Err(Error::FloodingExhausted {
                done: state.done,
                alpha: least,
            });
        }
        state.done += 1;
        state.least_alpha = least;
        Ok(())
    }
}

/// How released decryption shares are flooded (module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Smudging {
    /// log2 of B, a bound on the infinity norm of the error of every
    /// ciphertext decrypted (integer units of its modulus); at least 0.
    pub noise_bound_log2: f64,
    /// s: the released shares are within statistical distance 2^-s of
    /// shares computed from the result alone. Default 40.
    pub statistical_security: u32,
    /// alpha: the decryptions per secret share that the statement covers,
    /// enforced by the share's [`FloodLedger`]. Default 1.
    pub decryptions: u64,
}

impl Smudging {
    /// Smudging of errors up to 2^`noise_bound_log2` with s = 40 and
    /// alpha = 1.
    pub fn new(noise_bound_log2: f64) -> Smudging {
        Smudging {
            noise_bound_log2,
            statistical_security: DEFAULT_SMUDGING_SECURITY,
            decryptions: 1,
        }
    }

    /// f, the log2 of each party's flood bound for `released` coefficients
    /// per decryption: the least integer with 2^(f+1) >= alpha r B 2^s. An
    /// error for a bound that is not finite or below 0, s outside 1..=128,
    /// alpha or r = 0, or f above 2^120.
    pub fn width_log2(&self, released: usize) -> Result<u32> {
        let Smudging {
            noise_bound_log2: b,
            statistical_security: s,
            decryptions: alpha,
        } = *self;
        if !(b.is_finite() && b >= 0.0 && (1..=128).contains(&s) && alpha > 0 && released > 0) {
            return invalid(format!(
                "smudging needs a finite noise bound log2 >= 0 (got {b}), statistical security \
                 in 1..=128 (got {s}), at least one decryption (got {alpha}) and one released \
                 coefficient (got {released})"
            ));
        }
        let f = ((alpha as f64).log2() + (released as f64).log2() + b + s as f64 - 1.0).ceil();
        if f > MAX_FLOOD_LOG2 as f64 {
            return invalid(format!(
                "a flood of 2^{f} (B = 2^{b:.1}, s = {s}, alpha = {alpha}, {released} \
                 coefficients) is above the sampler's 2^{MAX_FLOOD_LOG2}"
            ));
        }
        Ok(f.max(0.0) as u32)
    }

    /// The flood for `released` coefficients per decryption: uniform with
    /// [`width_log2`](Self::width_log2).
    pub fn flood(&self, released: usize) -> Result<Flood> {
        Ok(Flood::Uniform {
            log2_bound: self.width_log2(released)?,
        })
    }

    /// log2 of the bound on the combined error of `parties` flooded shares
    /// of `released` coefficients each: B + parties 2^f.
    pub fn combined_bound_log2(&self, released: usize, parties: usize) -> Result<f64> {
        let f = self.width_log2(released)?;
        Ok((self.noise_bound_log2.exp2() + parties as f64 * (f as f64).exp2()).log2())
    }

    /// An error unless the combined error of `parties` shares
    /// ([`combined_bound_log2`](Self::combined_bound_log2)) stays below
    /// 2^`room_log2`, the error a decryption of this modulus tolerates.
    pub fn check_room(&self, released: usize, parties: usize, room_log2: f64) -> Result<()> {
        let needed = self.combined_bound_log2(released, parties)?;
        if needed >= room_log2 {
            return invalid(format!(
                "no modulus room for flooding: {parties} share(s) of {released} coefficient(s) \
                 flooded for 2^-{} ({} decryption(s), B = 2^{:.1}) need an error bound of \
                 2^{needed:.1}, the decryption tolerates 2^{room_log2:.1}: use a larger modulus",
                self.statistical_security, self.decryptions, self.noise_bound_log2
            ));
        }
        Ok(())
    }
}

/// The law of one party's flood of each released coefficient.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Flood {
    /// Uniform on the integers of [-2^`log2_bound`, 2^`log2_bound`]
    /// (log2_bound <= 120): the statistical smudging of [`Smudging`].
    Uniform {
        /// f.
        log2_bound: u32,
    },
    /// The rounded Gaussian of deviation `sigma` (at most 2^59) of
    /// [`sample_wide_gaussian`]: the flooding of shared CKKS decryptions,
    /// whose deviation the CKKS engine sizes.
    Gaussian {
        /// The standard deviation.
        sigma: f64,
    },
}

impl Flood {
    /// An error for a bound above 2^120 or a deviation outside [0, 2^59].
    pub fn check(&self) -> Result<()> {
        match *self {
            Flood::Uniform { log2_bound } if log2_bound > MAX_FLOOD_LOG2 => invalid(format!(
                "a flood of 2^{log2_bound} is above the sampler's 2^{MAX_FLOOD_LOG2}"
            )),
            Flood::Gaussian { sigma } if !(0.0..=WIDE_GAUSSIAN_MAX_SIGMA).contains(&sigma) => {
                invalid(format!(
                    "a flood deviation of 2^{:.1} is outside the sampler's [0, 2^59]",
                    sigma.log2()
                ))
            }
            _ => Ok(()),
        }
    }

    /// log2 of the largest |x| one flood can take: f, or that of the
    /// Gaussian's tail cut 9.5 sigma + 1.
    pub fn bound_log2(&self) -> f64 {
        match *self {
            Flood::Uniform { log2_bound } => log2_bound as f64,
            Flood::Gaussian { sigma } => (WIDE_GAUSSIAN_TAIL * sigma + 1.0).log2(),
        }
    }

    /// The standard deviation of one flood value.
    pub fn deviation(&self) -> f64 {
        match *self {
            Flood::Uniform { log2_bound } => (log2_bound as f64).exp2() / 3f64.sqrt(),
            Flood::Gaussian { sigma } => sigma,
        }
    }

    /// `count` flood values from `rng`, signed, wiped on drop.
    pub(crate) fn sample(&self, count: usize, rng: &mut Prng) -> Result<Zeroizing<Vec<i128>>> {
        self.check()?;
        Ok(match *self {
            Flood::Uniform { log2_bound } => {
                let bound = 1i128 << log2_bound;
                let raw = flooding_values(count, log2_bound, rng)?;
                Zeroizing::new(raw.iter().map(|&x| x as i128 - bound).collect())
            }
            Flood::Gaussian { sigma } => {
                let raw = sample_wide_gaussian(count, sigma, rng)?;
                Zeroizing::new(raw.iter().map(|&x| x as i128).collect())
            }
        })
    }
}

/// x mod m for a signed x (|x| < 2^127), without a branch on x.
pub(crate) fn reduce_i128(m: &Modulus, x: i128) -> u64 {
    let r = m.reduce_u128(x.unsigned_abs());
    let negative = 0u64.wrapping_sub((x < 0) as u64);
    r ^ ((r ^ m.neg_mod(r)) & negative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_keeps_the_least_alpha() {
        let ledger = FloodLedger::default();
        assert_eq!(ledger.left(3), 3);
        ledger.count(3).unwrap();
        ledger.count(5).unwrap();
        assert_eq!(ledger.left(5), 1);
        ledger.count(1).unwrap_err();
        ledger.count(3).unwrap();
        assert_eq!(
            ledger.count(10).unwrap_err(),
            Error::FloodingExhausted { done: 3, alpha: 3 }
        );
        assert_eq!(ledger.done(), 3);
    }

    #[test]
    fn the_width_meets_the_stated_distance_and_the_room_is_checked() {
        let s = Smudging::new(10.0);
        let f = s.width_log2(32).unwrap();
        // 2^(f+1) >= 32 * 2^10 * 2^40, and f is the least such.
        assert_eq!(f, 5 + 10 + 40 - 1);
        assert!(s.check_room(32, 3, 60.0).is_ok());
        let e = s.check_room(32, 3, 55.0).unwrap_err().to_string();
        assert!(e.contains("no modulus room"), "{e}");
        assert!(Smudging::new(f64::NAN).width_log2(1).is_err());
        assert!(Smudging::new(100.0).width_log2(1).is_err());
        assert!(Smudging::new(1.0).width_log2(0).is_err());
    }
}
