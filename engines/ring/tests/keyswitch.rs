mod common;

use common::*;
use num_bigint::BigInt;
use num_traits::FromPrimitive;
use triskel_ring::sampling::sample_uniform;
use triskel_ring::{
    Addend, DivRound, KeySwitchContext, KeySwitchKey, LazyRlwe, NoiseDistribution, Poly, Prng,
    Representation, RlweSecret, RnsBasis, SecretDistribution, SecretKey,
};

const N: usize = 2048;

fn context(dnum: usize) -> KeySwitchContext {
    let q = RnsBasis::generate(N, 50, 4).unwrap();
    let p = RnsBasis::generate(N, 55, 2).unwrap();
    KeySwitchContext::new(&q, &p, dnum, NoiseDistribution::default()).unwrap()
}

/// Switches a uniform c at the level with `ql` primes and checks
/// ||u0 + u1 s - c s'|| against the stated bound.
fn check_switch(
    ctx: &KeySwitchContext,
    key: &KeySwitchKey,
    sk: &SecretKey,
    s_from: &Poly,
    ql: usize,
    rng: &mut Prng,
) {
    let basis = ctx.q().sub_basis(0..ql).unwrap();
    let c = sample_uniform(&basis, Representation::Coefficient, rng);
    let (u0, u1) = ctx.switch(key, &c).unwrap();
    assert_eq!(u0.representation(), Representation::Ntt);
    let s = sk.to_poly(&basis, Representation::Ntt).unwrap();
    let mut err = u1.mul(&s).unwrap();
    err.add_assign(&u0).unwrap();
    let mut cn = c.clone();
    cn.to_ntt().unwrap();
    let mut sf = s_from.restrict(&basis).unwrap();
    sf.to_ntt().unwrap();
    err.sub_assign(&cn.mul(&sf).unwrap()).unwrap();
    let norm = inf_norm(&reconstruct_centered(&err));
    let bound = ctx.noise_bound(ql, sk.l1_norm());
    assert!(
        norm <= BigInt::from_f64(bound).unwrap(),
        "noise {norm} > bound {bound}"
    );
    assert!(norm > BigInt::from(0), "suspiciously noiseless");
}

#[test]
fn relinearization_and_galois_switches_decrypt_within_bound() {
    let mut rng = Prng::from_seed([11; 32]);
    for dnum in [1, 2, 4] {
        let ctx = context(dnum);
        let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
        let s = sk.to_poly(ctx.qp(), Representation::Ntt).unwrap();
        let rlk = KeySwitchKey::relinearization(&ctx, &sk, &mut rng).unwrap();
        let s2 = s.mul(&s).unwrap();
        for ql in [4, 3, 1] {
            check_switch(&ctx, &rlk, &sk, &s2, ql, &mut rng);
        }
        let gk = KeySwitchKey::galois(&ctx, &sk, 5, &mut rng).unwrap();
        let sg = s.automorphism(5).unwrap();
        check_switch(&ctx, &gk, &sk, &sg, 4, &mut rng);
    }
}

#[test]
fn switch_between_unrelated_secrets_and_hamming_weight() {
    let mut rng = Prng::from_seed([12; 32]);
    let ctx = context(2);
    let from = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let to =
        SecretKey::generate(N, SecretDistribution::TernaryHammingWeight(64), &mut rng).unwrap();
    let sf = from.to_poly(ctx.qp(), Representation::Coefficient).unwrap();
    let key = KeySwitchKey::generate(&ctx, &sf, &to, &mut rng).unwrap();
    check_switch(&ctx, &key, &to, &sf, 4, &mut rng);
}

#[test]
fn results_do_not_depend_on_thread_count() {
    // Large enough that the limb loops go to the rayon pool with 2 threads.
    let n = 8192;
    let q = RnsBasis::generate(n, 50, 4).unwrap();
    let p = RnsBasis::generate(n, 55, 2).unwrap();
    let ctx = KeySwitchContext::new(&q, &p, 2, NoiseDistribution::default()).unwrap();
    assert!(q.len() * n >= triskel_ring::PARALLEL_MIN_VALUES);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut rng = Prng::from_seed([13; 32]);
            let sk = SecretKey::generate(n, SecretDistribution::Ternary, &mut rng).unwrap();
            let rlk = KeySwitchKey::relinearization(&ctx, &sk, &mut rng).unwrap();
            let c = sample_uniform(ctx.q(), Representation::Ntt, &mut rng);
            let out = ctx.switch(&rlk, &c).unwrap();
            (rlk, out)
        })
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn foreign_keys_and_levels_are_errors() {
    let mut rng = Prng::from_seed([14; 32]);
    let ctx = context(2);
    let other = context(4);
    let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let rlk = KeySwitchKey::relinearization(&other, &sk, &mut rng).unwrap();
    let c = sample_uniform(ctx.q(), Representation::Ntt, &mut rng);
    assert!(ctx.switch(&rlk, &c).is_err());
    let good = KeySwitchKey::relinearization(&ctx, &sk, &mut rng).unwrap();
    let wrong = sample_uniform(ctx.p(), Representation::Ntt, &mut rng);
    assert!(ctx.switch(&good, &wrong).is_err());
    assert!(format!("{sk:?}").len() < 40);
}

/// The addends of `switch_adding` are summed in the ModDown's last pass:
/// the same polynomials as a switch followed by additions, for c in either
/// representation (the coefficient form takes the out-of-place inverse NTT).
#[test]
fn switches_with_addends_equal_switch_then_add() {
    let mut rng = Prng::from_seed([16; 32]);
    let ctx = context(2);
    let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let key = KeySwitchKey::relinearization(&ctx, &sk, &mut rng).unwrap();
    for (ql, repr) in [(4, Representation::Ntt), (2, Representation::Coefficient)] {
        let basis = ctx.q().sub_basis(0..ql).unwrap();
        let c = sample_uniform(&basis, repr, &mut rng);
        let y0 = sample_uniform(&basis, Representation::Ntt, &mut rng);
        let y1 = sample_uniform(&basis, Representation::Ntt, &mut rng);
        let (u0, u1) = ctx.switch(&key, &c).unwrap();
        let both = ctx
            .switch_adding(&key, &c, [Some(Addend::Poly(&y0)), Some(Addend::Poly(&y1))])
            .unwrap();
        assert_eq!(
            both,
            (u0.add(&y0).unwrap(), u1.add(&y1).unwrap()),
            "ql = {ql}"
        );
        // y0(X^g) for g = 5, mapped inside.
        let mapped = Addend::Automorphism(&y0, 5);
        let first = ctx.switch_adding(&key, &c, [Some(mapped), None]).unwrap();
        let y0g = y0.automorphism(5).unwrap();
        assert_eq!(first, (u0.add(&y0g).unwrap(), u1.clone()), "ql = {ql}");
        let even = Addend::Automorphism(&y0, 4);
        assert!(ctx.switch_adding(&key, &c, [None, Some(even)]).is_err());
        assert_eq!(ctx.switch_adding(&key, &c, [None, None]).unwrap(), (u0, u1));
        // An addend of another basis or in coefficient form is refused.
        let mut coef = y0.clone();
        coef.to_coefficient().unwrap();
        assert!(ctx
            .switch_adding(&key, &c, [Some(Addend::Poly(&coef)), None])
            .is_err());
        let other = sample_uniform(ctx.q(), Representation::Ntt, &mut rng);
        if ql != 4 {
            let other = Addend::Automorphism(&other, 5);
            assert!(ctx.switch_adding(&key, &c, [None, Some(other)]).is_err());
        }
    }
}

#[test]
fn hoisted_switches_equal_plain_ones() {
    let mut rng = Prng::from_seed([15; 32]);
    let ctx = context(2);
    let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    for ql in [4, 2] {
        let basis = ctx.q().sub_basis(0..ql).unwrap();
        let c = sample_uniform(&basis, Representation::Ntt, &mut rng);
        let dec = ctx.decompose(&c).unwrap();
        assert_eq!(dec.level_primes(), ql);
        for g in [5usize, 25, 2 * N - 1] {
            let key = KeySwitchKey::galois(&ctx, &sk, g, &mut rng).unwrap();
            let plain = ctx.switch(&key, &c.automorphism(g).unwrap()).unwrap();
            let hoisted = ctx.switch_decomposed(&key, &dec, Some(g)).unwrap();
            assert_eq!(plain, hoisted, "g = {g}, ql = {ql}");
        }
        assert!(ctx
            .switch_decomposed(
                &KeySwitchKey::galois(&ctx, &sk, 5, &mut rng).unwrap(),
                &dec,
                Some(4)
            )
            .is_err());
    }
}

#[test]
fn adding_p_y_before_mod_down_adds_y() {
    let mut rng = Prng::from_seed([16; 32]);
    let ctx = context(2);
    let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let rlk = KeySwitchKey::relinearization(&ctx, &sk, &mut rng).unwrap();
    let c = sample_uniform(ctx.q(), Representation::Ntt, &mut rng);
    let y = sample_uniform(ctx.q(), Representation::Ntt, &mut rng);
    let (mut x0, _) = ctx
        .inner_product(&rlk, &ctx.decompose(&c).unwrap(), None)
        .unwrap();
    let plain = ctx.mod_down(&x0).unwrap().add(&y).unwrap();
    ctx.add_scaled_by_p(&mut x0, &y).unwrap();
    assert_eq!(ctx.mod_down(&x0).unwrap(), plain);
    assert!(ctx
        .add_scaled_by_p(
            &mut x0,
            &c.restrict(&ctx.q().sub_basis(0..2).unwrap()).unwrap()
        )
        .is_err());
}

#[test]
fn products_added_in_the_inner_product_equal_p_times_them_added_after() {
    let mut rng = Prng::from_seed([18; 32]);
    let ctx = context(3);
    let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let rlk = KeySwitchKey::relinearization(&ctx, &sk, &mut rng).unwrap();
    for ql in [4, 2] {
        let basis = ctx.q().sub_basis(0..ql).unwrap();
        let draw = |rng: &mut Prng| sample_uniform(&basis, Representation::Ntt, rng);
        let (c, a, b, e, f) = (
            draw(&mut rng),
            draw(&mut rng),
            draw(&mut rng),
            draw(&mut rng),
            draw(&mut rng),
        );
        let (pb, pf) = (ctx.times_p(&b).unwrap(), ctx.times_p(&f).unwrap());
        let (x0, x1) = ctx
            .switch_unreduced_plus(&rlk, &c, [&[(&a, &pb)], &[(&a, &pb), (&e, &pf)]])
            .unwrap();
        // The same divided by q_{l-1} P inside the switch (CKKS's ModDown
        // with rescale) equals the division after it; a division of another
        // basis is refused.
        let keep = ctx.q().sub_basis(0..ql - 1).unwrap();
        let drop = basis
            .sub_basis(ql - 1..ql)
            .unwrap()
            .concat(ctx.p())
            .unwrap();
        let div = DivRound::new(&keep, &drop).unwrap();
        let products: [&[(&Poly, &Poly)]; 2] = [&[(&a, &pb)], &[(&a, &pb), (&e, &pf)]];
        let divided = ctx.switch_divided(&rlk, &c, products, &div).unwrap();
        let after = (
            div.apply_joined_owned(x0.clone()).unwrap(),
            div.apply_joined_owned(x1.clone()).unwrap(),
        );
        assert_eq!(divided, after, "ql = {ql}");
        let wrong = DivRound::new(
            &keep,
            &ctx.p().concat(&drop.sub_basis(0..1).unwrap()).unwrap(),
        )
        .unwrap();
        assert!(ctx.switch_divided(&rlk, &c, products, &wrong).is_err());
        let (mut y0, mut y1) = ctx.switch_unreduced(&rlk, &c).unwrap();
        ctx.add_scaled_by_p(&mut y0, &a.mul(&b).unwrap()).unwrap();
        let mut sum = a.mul(&b).unwrap();
        sum.add_assign(&e.mul(&f).unwrap()).unwrap();
        ctx.add_scaled_by_p(&mut y1, &sum).unwrap();
        assert_eq!((x0, x1), (y0, y1));
        // Products of another level, or in coefficient form, are refused.
        let other = ctx.q().sub_basis(0..ql - 1).unwrap();
        let low = sample_uniform(&other, Representation::Ntt, &mut rng);
        assert!(ctx
            .switch_unreduced_plus(&rlk, &c, [&[(&low, &low)], &[]])
            .is_err());
        let mut coef = a.clone();
        coef.to_coefficient().unwrap();
        assert!(ctx
            .switch_unreduced_plus(&rlk, &c, [&[], &[(&a, &coef)]])
            .is_err());
        assert!(ctx.times_p(&coef).is_err());
    }
}

#[test]
fn lazy_switches_move_down_to_plain_ones() {
    let mut rng = Prng::from_seed([17; 32]);
    let ctx = context(2);
    let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let key = KeySwitchKey::galois(&ctx, &sk, 5, &mut rng).unwrap();
    for ql in [4, 3] {
        let basis = ctx.q().sub_basis(0..ql).unwrap();
        let c = sample_uniform(&basis, Representation::Ntt, &mut rng);
        let (u0, u1) = ctx.switch(&key, &c).unwrap();
        let (x0, lazy_u1) = ctx.switch_lazy(&key, &c).unwrap();
        assert_eq!(x0.basis().len(), ql + ctx.p().len());
        assert_eq!(lazy_u1, u1);
        // Without any ModDown: both halves in Q_l P.
        let (y0, y1) = ctx.switch_unreduced(&key, &c).unwrap();
        assert_eq!(y0, x0);
        assert_eq!(ctx.mod_down(&y1).unwrap(), u1);
        assert_eq!(ctx.mod_down(&x0).unwrap(), u0);
        assert_eq!(ctx.mod_down_owned(x0.clone()).unwrap(), u0);
        assert!(ctx.mod_down_owned(u0.clone()).is_err());
        // P y moves down to y exactly, also with a switch's half added.
        let y = sample_uniform(&basis, Representation::Ntt, &mut rng);
        let mut scaled = ctx.scale_by_p(&y).unwrap();
        assert_eq!(ctx.mod_down(&scaled).unwrap(), y);
        scaled.add_assign(&x0).unwrap();
        assert_eq!(ctx.mod_down(&scaled).unwrap(), y.add(&u0).unwrap());
    }
    let other_n = RnsBasis::generate(2 * N, 50, 1).unwrap();
    assert!(ctx
        .scale_by_p(&sample_uniform(&other_n, Representation::Ntt, &mut rng))
        .is_err());
}

#[test]
fn a_pending_first_half_is_moved_down_once_at_the_end() {
    let mut rng = Prng::from_seed([19; 32]);
    let ctx = context(2);
    let basis = ctx.q().sub_basis(0..3).unwrap();
    let qlp = ctx.level_qp(3).unwrap().clone();
    let c0 = sample_uniform(&basis, Representation::Ntt, &mut rng);
    let c1 = sample_uniform(&basis, Representation::Ntt, &mut rng);
    let x = sample_uniform(&qlp, Representation::Ntt, &mut rng);
    let lazy = LazyRlwe::with_pending(&ctx, c0.clone(), Some(x.clone()), c1.clone()).unwrap();
    let want = c0.add(&ctx.mod_down(&x).unwrap()).unwrap();
    assert_eq!(lazy.finish(&ctx).unwrap(), (want, c1.clone()));
    let nothing = LazyRlwe::with_pending(&ctx, c0.clone(), None, c1.clone()).unwrap();
    assert_eq!(nothing.finish(&ctx).unwrap(), (c0.clone(), c1.clone()));
    // x in Q_l instead of Q_l P, parts of two levels, or coefficient form: refused.
    assert!(LazyRlwe::with_pending(&ctx, c0.clone(), Some(c1.clone()), c1.clone()).is_err());
    let low = c1.restrict(&ctx.q().sub_basis(0..2).unwrap()).unwrap();
    assert!(LazyRlwe::with_pending(&ctx, c0.clone(), None, low).is_err());
    let mut coef = c1.clone();
    coef.to_coefficient().unwrap();
    assert!(LazyRlwe::with_pending(&ctx, c0, None, coef).is_err());
}

/// Max |phase - m| over the coefficients of an encryption of m.
fn encryption_error(sk: &RlweSecret, polys: &[Poly], m: &Poly) -> BigInt {
    let mut x = sk.phase(polys).unwrap().clone();
    x.sub_assign(m).unwrap();
    x.to_coefficient().unwrap();
    inf_norm(&reconstruct_centered(&x))
}

#[test]
fn encryption_modulo_qp_leaves_only_the_rounding() {
    let mut rng = Prng::from_seed([23; 32]);
    let ctx = context(2);
    let secret = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let sk = RlweSecret::new(secret, ctx.q()).unwrap();
    let noise = NoiseDistribution::default();
    let pk_qp = sk.public_key_mod_qp(&ctx, noise, &mut rng).unwrap();
    let pk_q = sk.public_key(noise, &mut rng).unwrap();
    for ql in [4, 2] {
        let basis = ctx.q().sub_basis(0..ql).unwrap();
        let m = sample_uniform(&basis, Representation::Ntt, &mut rng);
        let c = pk_qp
            .encrypt_mod_qp(m.clone(), &ctx, noise, &mut rng)
            .unwrap();
        assert_eq!(c[0].basis().len(), ql);
        // r0 + r1 s with |r_i| <= 1/2 (and (e0 + e u + e1 s) / P < 1):
        // coefficients within 8 deviations of sqrt((1 + N 2/3) / 12).
        let err = encryption_error(&sk, &c, &m);
        let sd = ((1.0 + N as f64 * 2.0 / 3.0) / 12.0).sqrt();
        assert!(err <= BigInt::from((8.0 * sd) as i64), "error {err}");
        // Modulo Q alone the error is e0 + e u + e1 s, far larger.
        let c = pk_q.encrypt(m.clone(), noise, &mut rng).unwrap();
        assert!(encryption_error(&sk, &c, &m) > BigInt::from((16.0 * sd) as i64));
    }
    // A key modulo Q cannot encrypt modulo Q P.
    let m = sample_uniform(ctx.q(), Representation::Ntt, &mut rng);
    assert!(pk_q.encrypt_mod_qp(m, &ctx, noise, &mut rng).is_err());
    let other = RnsBasis::generate(N, 40, 2).unwrap();
    let m = sample_uniform(&other, Representation::Ntt, &mut rng);
    assert!(pk_qp.encrypt_mod_qp(m, &ctx, noise, &mut rng).is_err());
}

#[test]
fn a_lazy_rotation_finishes_to_the_plain_one() {
    let mut rng = Prng::from_seed([29; 32]);
    let ctx = context(2);
    let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let g = 5;
    let key = KeySwitchKey::galois(&ctx, &sk, g, &mut rng).unwrap();
    let basis = ctx.q().sub_basis(0..3).unwrap();
    let c0 = sample_uniform(&basis, Representation::Ntt, &mut rng);
    let c1 = sample_uniform(&basis, Representation::Ntt, &mut rng);
    let (u0, u1) = ctx.switch(&key, &c1.automorphism(g).unwrap()).unwrap();
    let plain0 = c0.automorphism(g).unwrap().add(&u0).unwrap();
    let lazy = LazyRlwe::new(&c0, &c1).unwrap();
    let (l0, l1) = lazy.rotated(&ctx, &key, g).unwrap().finish(&ctx).unwrap();
    assert_eq!((l0, l1), (plain0, u1));
    // Nothing pending: the ciphertext itself; components of two bases: an error.
    let (n0, n1) = LazyRlwe::new(&c0, &c1).unwrap().finish(&ctx).unwrap();
    assert_eq!((&n0, &n1), (&c0, &c1));
    let low = c0.restrict(&ctx.q().sub_basis(0..2).unwrap()).unwrap();
    assert!(LazyRlwe::new(&c0, &low).is_err());
}

#[test]
fn a_lazy_tree_equals_its_first_halves_moved_down_once() {
    // rotate, add, rotate, add, add a plain ciphertext: every pairing of a
    // plain and a pending first component, against the sum of the switches'
    // first halves moved down once (c0 kept apart, in Q_l).
    let mut rng = Prng::from_seed([31; 32]);
    let ctx = context(2);
    let sk = SecretKey::generate(N, SecretDistribution::Ternary, &mut rng).unwrap();
    let (g1, g2) = (5, 25);
    let k1 = KeySwitchKey::galois(&ctx, &sk, g1, &mut rng).unwrap();
    let k2 = KeySwitchKey::galois(&ctx, &sk, g2, &mut rng).unwrap();
    let basis = ctx.q().sub_basis(0..3).unwrap();
    let c0 = sample_uniform(&basis, Representation::Ntt, &mut rng);
    let c1 = sample_uniform(&basis, Representation::Ntt, &mut rng);

    let mut acc = LazyRlwe::new(&c0, &c1).unwrap();
    let r = acc.rotated(&ctx, &k1, g1).unwrap();
    acc.add_assign(&ctx, &r).unwrap();
    let r = acc.rotated(&ctx, &k2, g2).unwrap();
    acc.add_assign(&ctx, &r).unwrap();
    acc.add_assign(&ctx, &LazyRlwe::new(&c0, &c1).unwrap())
        .unwrap();
    let got = acc.finish(&ctx).unwrap();

    let (xa, ua) = ctx.switch_lazy(&k1, &c1.automorphism(g1).unwrap()).unwrap();
    let a0 = c0.add(&c0.automorphism(g1).unwrap()).unwrap();
    let a1 = c1.add(&ua).unwrap();
    let (xb, ub) = ctx.switch_lazy(&k2, &a1.automorphism(g2).unwrap()).unwrap();
    let b0 = a0.add(&a0.automorphism(g2).unwrap()).unwrap();
    let x = xa
        .add(&xa.automorphism(g2).unwrap())
        .unwrap()
        .add(&xb)
        .unwrap();
    let b1 = a1.add(&ub).unwrap();
    let want0 = b0
        .add(&c0)
        .unwrap()
        .add(&ctx.mod_down(&x).unwrap())
        .unwrap();
    assert_eq!(got, (want0, b1.add(&c1).unwrap()));
}
