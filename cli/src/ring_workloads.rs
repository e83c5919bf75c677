//! The ring-level workload `ring.keyswitch_16384`: one hybrid key switch at
//! N = 16384 with Q = 8 primes of 47 bits, P = 1 prime (log QP = 423), dnum = 8, checked with the secret key.

use triskel::calibrate::median;
use triskel_ring::sampling::sample_uniform;
use triskel_ring::{
    KeySwitchContext, KeySwitchKey, NoiseDistribution, Poly, Prng, Representation, RnsBasis,
    SecretDistribution, SecretKey,
};

use crate::workloads::{now_us, us, StageMedians, WorkloadReport};

type Error = Box<dyn std::error::Error>;

/// Key switches measured.
const RUNS: usize = 15;

/// The largest |E| of E = u0 + u1 s - c s^2 over the coefficients, where
/// (u0, u1) switches c from s^2 to s; `None` unless every limb holds the same
/// small integer (so E is that integer, not just small modulo one prime).
fn switch_error(u0: &Poly, u1: &Poly, c: &Poly, s: &Poly) -> Result<Option<u64>, Error> {
    let mut e = u1.mul(s)?;
    e.add_assign(u0)?;
    e.sub_assign(&c.mul(&s.mul(s)?)?)?;
    e.to_coefficient()?;
    let basis = e.basis().clone();
    let centered = |i: usize, j: usize| {
        let (v, q) = (e.limb(i)[j] as i128, basis.modulus(i).value() as i128);
        if v > q / 2 {
            v - q
        } else {
            v
        }
    };
    let mut max = 0;
    for j in 0..basis.n() {
        let v = centered(0, j);
        if (1..basis.len()).any(|i| centered(i, j) != v) {
            return Ok(None);
        }
        max = max.max(v.unsigned_abs() as u64);
    }
    Ok(Some(max))
}

/// One relinearization-shaped key switch (s^2 -> s) of a uniform c, `RUNS`
/// times; `max_abs_error` is the largest switching error |E| seen, and the
/// run is verified when it stays within the context's noise bound.
pub fn keyswitch_16384() -> Result<WorkloadReport, Error> {
    let (n, kq) = (16384, 8);
    let primes = triskel_kernels::ntt_primes(47, n, kq + 1)?;
    let q = RnsBasis::new(n, &primes[..kq])?;
    let p = RnsBasis::new(n, &primes[kq..])?;
    let ctx = KeySwitchContext::new(&q, &p, kq, NoiseDistribution::default())?;
    let mut rng = Prng::from_os()?;
    let sk = SecretKey::generate(n, SecretDistribution::Ternary, &mut rng)?;
    let key = KeySwitchKey::relinearization(&ctx, &sk, &mut rng)?;
    let s = sk.to_poly(&q, Representation::Ntt)?;
    let bound = ctx.noise_bound(kq, sk.l1_norm());
    let (mut times, mut max_error, mut verified) = (Vec::new(), 0u64, true);
    for _ in 0..RUNS {
        let c = sample_uniform(&q, Representation::Ntt, &mut rng);
        let t = now_us();
        let (u0, u1) = ctx.switch(&key, &c)?;
        times.push(us(t));
        match switch_error(&u0, &u1, &c, &s)? {
            Some(e) => {
                max_error = max_error.max(e);
                verified &= e as f64 <= bound;
            }
            None => verified = false,
        }
    }
    let compute = median(&mut times);
    Ok(WorkloadReport {
        name: "ring.keyswitch_16384",
        engine: "ring",
        params: format!("n16384-q{kq}x47-p1x47-dnum{kq}"),
        median_us: StageMedians {
            partial: None,
            combine: None,
            compute,
            total: compute,
            ..Default::default()
        },
        max_abs_error: max_error as f64,
        verified,
        matches_per_second: None,
        workloads_per_second: None,
        baseline: None,
    })
}
