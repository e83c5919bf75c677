mod common;

use common::*;
use num_bigint::BigInt;
use num_traits::Zero;
use triskel_ring::sampling::sample_uniform;
use triskel_ring::{BaseConverter, DivRound, Poly, Prng, Representation, RnsBasis};

const N: usize = 1024;

/// Round to nearest, ties down, as DivRound promises: round(x / d) = floor((x + (d-1)/2) / d)
/// for odd d, computed with floor division on BigInt.
fn div_round(x: &BigInt, d: &BigInt) -> BigInt {
    let num = x + (d - 1) / 2;
    let (q, r) = (&num / d, &num % d);
    if r < BigInt::zero() {
        q - 1
    } else {
        q
    }
}

fn bases() -> (std::sync::Arc<RnsBasis>, std::sync::Arc<RnsBasis>) {
    let primes = triskel_kernels::ntt_primes(55, N, 7).unwrap();
    (
        RnsBasis::new(N, &primes[..4]).unwrap(),
        RnsBasis::new(N, &primes[4..]).unwrap(),
    )
}

#[test]
fn fast_extension_overflows_by_small_multiples_of_q() {
    let (q, p) = bases();
    let conv = BaseConverter::new(&q, &p).unwrap();
    let mut rng = Prng::from_seed([5; 32]);
    let x = sample_uniform(&q, Representation::Coefficient, &mut rng);
    let y = conv.fast_extend(&x).unwrap();
    let qb = BigInt::from(product(&q));
    let pb = BigInt::from(product(&p));
    let xs: Vec<BigInt> = reconstruct(&x).into_iter().map(BigInt::from).collect();
    let ys: Vec<BigInt> = reconstruct(&y).into_iter().map(BigInt::from).collect();
    for (xv, yv) in xs.iter().zip(&ys) {
        // y = x + v Q mod P with 0 <= v < 4.
        let ok = (0..4).any(|v| ((xv + &qb * v) % &pb) == *yv);
        assert!(ok);
    }
}

#[test]
fn exact_extension_gives_the_centered_representative() {
    let (q, p) = bases();
    let conv = BaseConverter::new(&q, &p).unwrap();
    let back = BaseConverter::new(&p, &q).unwrap();
    let mut rng = Prng::from_seed([6; 32]);
    let x = sample_uniform(&q, Representation::Coefficient, &mut rng);
    let y = conv.exact_extend(&x).unwrap();
    // y = [x_c]_P for the centered x_c of x mod Q.
    let pb = BigInt::from(product(&p));
    let expect: Vec<BigInt> = reconstruct_centered(&x)
        .iter()
        .map(|v| ((v % &pb) + &pb) % &pb)
        .collect();
    let got: Vec<BigInt> = reconstruct(&y).into_iter().map(BigInt::from).collect();
    assert_eq!(got, expect);
    // Values much smaller than P also go back exactly (P -> Q).
    let small: Vec<BigInt> = (0..N as i64)
        .map(|i| BigInt::from(i * 1_000_003 - 400_000_000))
        .collect();
    let sp = from_big(&p, &small, Representation::Coefficient);
    assert_eq!(
        reconstruct_centered(&back.exact_extend(&sp).unwrap()),
        small
    );
    // Coefficient form is required.
    let mut xn = x.clone();
    xn.to_ntt().unwrap();
    assert!(conv.exact_extend(&xn).is_err());
}

#[test]
fn mod_down_rounds_exactly() {
    let (q, p) = bases();
    let qp = q.concat(&p).unwrap();
    let dr = DivRound::new(&q, &p).unwrap();
    let mut rng = Prng::from_seed([7; 32]);
    for repr in [Representation::Coefficient, Representation::Ntt] {
        let x = sample_uniform(&qp, repr, &mut rng);
        let r = dr.apply_joined(&x).unwrap();
        assert_eq!(r.representation(), repr);
        let pb = BigInt::from(product(&p));
        let expect: Vec<BigInt> = reconstruct_centered(&x)
            .iter()
            .map(|v| div_round(v, &pb))
            .collect();
        assert_eq!(reconstruct_centered(&r), expect);
        // The same through the two-part interface.
        let r2 = dr
            .apply(&x.restrict(&q).unwrap(), &x.restrict(&p).unwrap())
            .unwrap();
        assert_eq!(r2, r);
        // And in place on an owned x.
        assert_eq!(dr.apply_joined_owned(x.clone()).unwrap(), r);
        assert!(dr.apply_joined_owned(r.clone()).is_err());
    }
}

#[test]
fn rescale_by_last_prime_rounds_exactly() {
    let (q, _) = bases();
    let dr = DivRound::by_last_prime(&q).unwrap();
    let mut rng = Prng::from_seed([8; 32]);
    let x = sample_uniform(&q, Representation::Ntt, &mut rng);
    let r = dr.apply_joined(&x).unwrap();
    assert_eq!(r.basis().len(), 3);
    let last = BigInt::from(*q.primes().last().unwrap());
    let expect: Vec<BigInt> = reconstruct_centered(&x)
        .iter()
        .map(|v| div_round(v, &last))
        .collect();
    assert_eq!(reconstruct_centered(&r), expect);
    assert!(dr.apply_joined(&r).is_err());
    let _ = Poly::zero(&q, Representation::Ntt);
}

#[test]
fn single_prime_lift_to_smaller_and_larger_primes() {
    for count in [1, 2] {
        lift_between_sizes(count);
    }
}

fn lift_between_sizes(count: usize) {
    let big = triskel_kernels::ntt_primes(60, N, count).unwrap();
    let mut targets = triskel_kernels::ntt_primes(30, N, 2).unwrap();
    targets.extend(triskel_kernels::ntt_primes(59, N, 1).unwrap());
    targets.extend(triskel_kernels::ntt_primes(61, N, 1).unwrap());
    let q = RnsBasis::new(N, &big).unwrap();
    let p = RnsBasis::new(N, &targets).unwrap();
    let conv = BaseConverter::new(&q, &p).unwrap();
    let x = sample_uniform(
        &q,
        Representation::Coefficient,
        &mut Prng::from_seed([10; 32]),
    );
    let pb = BigInt::from(product(&p));
    let expect: Vec<BigInt> = reconstruct_centered(&x)
        .iter()
        .map(|v| ((v % &pb) + &pb) % &pb)
        .collect();
    let got: Vec<BigInt> = reconstruct(&conv.exact_extend(&x).unwrap())
        .into_iter()
        .map(BigInt::from)
        .collect();
    assert_eq!(got, expect);
}
