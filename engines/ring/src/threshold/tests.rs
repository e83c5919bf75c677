use super::*;
use crate::basis::allocate_primes;
use crate::keyswitch::KeySwitchContext;
use crate::keyswitch::KeySwitchKey;
use crate::lwe::{LweCiphertext, LweSecretKey};
use crate::rlwe::RlwePublicKey;
use crate::rlwe::RlweSecret;
use crate::sampling::NoiseDistribution;
use crate::{Error, Smudging};

const N: usize = 1024;

struct Setup {
    q: Arc<RnsBasis>,
    ks: KeySwitchContext,
}

fn setup() -> Setup {
    let primes = allocate_primes(N, &[50, 50, 51]).unwrap();
    let q = RnsBasis::new(N, &primes[..2]).unwrap();
    let p = RnsBasis::new(N, &primes[2..]).unwrap();
    let ks = KeySwitchContext::new(&q, &p, 2, NoiseDistribution::default()).unwrap();
    Setup { q, ks }
}

fn secrets(session: &Session) -> Vec<PartySecret> {
    (1..=session.parties())
        .map(|j| PartySecret::generate(session, j, N).unwrap())
        .collect()
}

/// Every party's decryption share: dealt and routed (t < N) or additive.
fn threshold_shares(secrets: &[PartySecret], basis: &Arc<RnsBasis>) -> Vec<ThresholdShare> {
    let session = secrets[0].session();
    if session.threshold() == session.parties() {
        return secrets
            .iter()
            .map(|s| ThresholdShare::additive(s, basis).unwrap())
            .collect();
    }
    let deals: Vec<Vec<Share>> = secrets.iter().map(|s| s.deal(basis).unwrap()).collect();
    secrets
        .iter()
        .map(|s| {
            let mine: Vec<Share> = deals
                .iter()
                .map(|d| d[s.party() as usize - 1].clone())
                .collect();
            ThresholdShare::from_deals(s, &mine).unwrap()
        })
        .collect()
}

/// The collective secret s = sum s_i (tests only: no party ever holds it).
fn collective(secrets: &[PartySecret]) -> SecretKey {
    let mut sum = vec![0i64; N];
    for s in secrets {
        sum.iter_mut()
            .zip(s.secret().coeffs())
            .for_each(|(a, b)| *a += b);
    }
    SecretKey::from_coeffs(sum, secrets[0].session().key_id()).unwrap()
}

/// The coefficients of a polynomial over the two primes of Q (coefficient
/// form), centered, by the CRT.
fn centered(p: &Poly) -> Vec<i128> {
    let b = p.basis();
    centered_values(b, p.limb(0), p.limb(1))
}

fn centered_values(b: &Arc<RnsBasis>, l0: &[u64], l1: &[u64]) -> Vec<i128> {
    let (q0, q1) = (b.modulus(0), b.modulus(1));
    let inv = q1.inv_mod(q1.reduce(q0.value())).unwrap();
    let big = q0.value() as i128 * q1.value() as i128;
    l0.iter()
        .zip(l1)
        .map(|(&r0, &r1)| {
            let h = q1.mul_mod(q1.sub_mod(r1, q1.reduce(r0)), inv);
            let x = r0 as i128 + q0.value() as i128 * h as i128;
            if x > big / 2 {
                x - big
            } else {
                x
            }
        })
        .collect()
}

fn max_abs(v: &[i128]) -> i128 {
    v.iter().map(|x| x.abs()).max().unwrap_or(0)
}

/// Messages sit at multiples of 2^70; an error below 2^69 decodes.
const SCALE_LOG2: u32 = 70;
const DECODES: i128 = 1 << (SCALE_LOG2 - 1);

/// The k-subsets of 1..=n.
fn subsets(n: u16, k: usize) -> Vec<Vec<u16>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    fn go(start: u16, n: u16, k: usize, cur: &mut Vec<u16>, out: &mut Vec<Vec<u16>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..=n {
            cur.push(i);
            go(i + 1, n, k, cur, out);
            cur.pop();
        }
    }
    go(1, n, k, &mut cur, &mut out);
    out
}

/// The collective public key of `secrets` over `basis`.
fn collective_pk(secrets: &[PartySecret], basis: &Arc<RnsBasis>) -> RlwePublicKey {
    let gen = PublicKeyGen::new(secrets[0].session(), basis, NoiseDistribution::default());
    let shares: Vec<Share> = secrets.iter().map(|s| gen.share(s).unwrap()).collect();
    gen.finish(&gen.aggregate(&shares).unwrap()).unwrap()
}

/// A message body with coefficients m_i 2^70, |m_i| <= 15 (coefficient
/// form).
fn body(basis: &Arc<RnsBasis>, seed: u8) -> (Vec<i128>, Poly) {
    let m: Vec<i64> = (0..N)
        .map(|i| (i as i64 * 7 + seed as i64) % 31 - 15)
        .collect();
    let mut p = Poly::from_signed(basis, &m, Representation::Coefficient).unwrap();
    let scale: Vec<u64> = (0..basis.len())
        .map(|i| basis.modulus(i).reduce_u128(1 << SCALE_LOG2))
        .collect();
    p.mul_rns_scalar_assign(&scale).unwrap();
    (m.iter().map(|&v| (v as i128) << SCALE_LOG2).collect(), p)
}

/// Flooding for fresh encryptions under a 5-party key (noise below 2^12).
fn fresh_smudging(decryptions: u64) -> Smudging {
    let mut s = Smudging::new(12.0);
    s.decryptions = decryptions;
    s
}

fn decrypt_with(
    session: &Session,
    shares: &[&ThresholdShare],
    set: &[u16],
    ct: &[Poly; 2],
    released: Option<&[usize]>,
    smudging: Smudging,
) -> Result<ReleasedPhase> {
    let id = CiphertextId::of(ct);
    let dec = Decryption::new(session, set, id, [&ct[0], &ct[1]], released, smudging)?;
    let parts = shares
        .iter()
        .map(|s| dec.share(s))
        .collect::<Result<Vec<_>>>()?;
    dec.finish(&dec.aggregate(&parts)?)
}

#[test]
fn any_t_of_n_shares_combine_to_the_secret_and_t_minus_1_do_not() {
    let Setup { q, .. } = setup();
    let session = Session::new(5, 3).unwrap();
    let secrets = secrets(&session);
    let shares = threshold_shares(&secrets, &q);
    let s = collective(&secrets)
        .to_poly(&q, Representation::Ntt)
        .unwrap();
    for set in subsets(5, 3).into_iter().chain(subsets(5, 4)) {
        let mut sum = Poly::zero(&q, Representation::Ntt);
        for &j in &set {
            sum.add_assign(&shares[j as usize - 1].additive_key(&set, &q).unwrap())
                .unwrap();
        }
        assert_eq!(sum, *s, "set {set:?}");
    }
    // Two shares, combined with their own Lagrange coefficients, give a
    // uniformly random polynomial, not s.
    for set in subsets(5, 2) {
        let mut sum = Poly::zero(&q, Representation::Ntt);
        for &j in &set {
            let mut k = shares[j as usize - 1].share.restrict(&q).unwrap();
            k.mul_rns_scalar_assign(&lagrange_coefficient(&q, &set, j).unwrap())
                .unwrap();
            sum.add_assign(&k).unwrap();
        }
        assert_ne!(sum, *s, "set {set:?}");
    }
    // The API refuses fewer than t.
    let e = shares[0].additive_key(&[1, 2], &q);
    assert!(e.is_ok(), "additive_key alone does not know t");
    let e = session.decryption_set(&[1, 2]).unwrap_err();
    assert!(matches!(e, Error::Protocol(_)), "{e}");
}

#[test]
fn sessions_refuse_bad_thresholds_and_party_sets() {
    for (n, t) in [(5, 6), (5, 0), (1, 1), (MAX_PARTIES + 1, 2)] {
        let e = Session::new(n, t).unwrap_err();
        assert!(matches!(e, Error::Protocol(_)), "{n} {t}: {e}");
    }
    let session = Session::new(5, 3).unwrap();
    assert!(session
        .decryption_set(&[1, 2, 2])
        .unwrap_err()
        .to_string()
        .contains("twice"));
    assert!(session
        .decryption_set(&[1, 2, 6])
        .unwrap_err()
        .to_string()
        .contains("not one of"));
    assert_eq!(session.decryption_set(&[5, 1, 3]).unwrap(), vec![1, 3, 5]);
    let back = Session::from_bytes(&session.to_bytes()).unwrap();
    assert_eq!(back, session);
    assert_eq!(back.key_id(), session.key_id());
    let mut bad = session.to_bytes();
    bad[6 + 16 + 32] = 9; // 9 parties, threshold 3: fine
    Session::from_bytes(&bad).unwrap();
    bad[6 + 16 + 32 + 2] = 10; // threshold 10 > 9 parties
    assert!(Session::from_bytes(&bad).is_err());
    assert!(Session::from_bytes(&bad[..20]).is_err());
}

#[test]
fn collective_public_key_encrypts_and_any_3_of_5_decrypt() {
    let Setup { q, ks } = setup();
    let session = Session::new(5, 3).unwrap();
    let secrets = secrets(&session);
    let shares = threshold_shares(&secrets, ks.qp());
    let pk = collective_pk(&secrets, &q);
    assert_eq!(pk.id(), session.key_id());
    let (m, pt) = body(&q, 1);
    let ct = pk
        .encrypt(
            pt,
            NoiseDistribution::default(),
            &mut Prng::from_os().unwrap(),
        )
        .unwrap();
    let smudging = fresh_smudging(10);
    for set in subsets(5, 3) {
        let parties: Vec<&ThresholdShare> = set.iter().map(|&j| &shares[j as usize - 1]).collect();
        let phase = decrypt_with(&session, &parties, &set, &ct, None, smudging).unwrap();
        let got = centered(&phase.to_poly().unwrap());
        let err: Vec<i128> = got.iter().zip(&m).map(|(a, b)| a - b).collect();
        let f = smudging.width_log2(N).unwrap();
        // Fresh noise (below 2^12) plus three floods of at most 2^f.
        assert!(max_abs(&err) < (1 << 12) + 3 * (1i128 << f), "{set:?}");
        assert!(max_abs(&err) < DECODES, "the message survives");
    }
    // Two parties with their Lagrange coefficients do not decrypt.
    let set = [1u16, 2];
    let mut x = ct[1].clone();
    let mut key = Poly::zero(&q, Representation::Ntt);
    for &j in &set {
        let mut k = shares[j as usize - 1].share.restrict(&q).unwrap();
        k.mul_rns_scalar_assign(&lagrange_coefficient(&q, &set, j).unwrap())
            .unwrap();
        key.add_assign(&k).unwrap();
    }
    x.mul_assign(&key).unwrap();
    x.add_assign(&ct[0]).unwrap();
    x.to_coefficient().unwrap();
    let wrong = centered(&x)
        .iter()
        .zip(&m)
        .filter(|(a, b)| (**a - **b).abs() < DECODES)
        .count();
    assert!(
        wrong < 10,
        "{wrong} coefficients of the message from 2 shares"
    );
}

#[test]
fn additive_n_of_n_decrypts_only_with_everyone() {
    let Setup { q, .. } = setup();
    let session = Session::new(3, 3).unwrap();
    let secrets = secrets(&session);
    assert!(secrets[0].deal(&q).is_err());
    let shares = threshold_shares(&secrets, &q);
    let pk = collective_pk(&secrets, &q);
    let (m, pt) = body(&q, 2);
    let ct = pk
        .encrypt(
            pt,
            NoiseDistribution::default(),
            &mut Prng::from_os().unwrap(),
        )
        .unwrap();
    let all: Vec<&ThresholdShare> = shares.iter().collect();
    let phase = decrypt_with(&session, &all, &[1, 2, 3], &ct, None, fresh_smudging(1)).unwrap();
    let got = centered(&phase.to_poly().unwrap());
    assert!(got.iter().zip(&m).all(|(a, b)| (a - b).abs() < DECODES));
    assert!(shares[0].additive_key(&[1, 2], &q).is_err());
}

#[test]
fn released_coefficients_only_and_the_ledger_refuses_more_floods() {
    let Setup { q, .. } = setup();
    let session = Session::new(5, 3).unwrap();
    let secrets = secrets(&session);
    let shares = threshold_shares(&secrets, &q);
    let pk = collective_pk(&secrets, &q);
    let (m, pt) = body(&q, 3);
    let ct = pk
        .encrypt(
            pt,
            NoiseDistribution::default(),
            &mut Prng::from_os().unwrap(),
        )
        .unwrap();
    let idx = [3usize, 100, 1023];
    let set = [2u16, 4, 5];
    let parties: Vec<&ThresholdShare> = set.iter().map(|&j| &shares[j as usize - 1]).collect();
    let smudging = fresh_smudging(2);
    let phase = decrypt_with(&session, &parties, &set, &ct, Some(&idx), smudging).unwrap();
    assert_eq!(phase.indices(), &idx);
    let values = centered_values(&q, phase.limb(0), phase.limb(1));
    for (v, &i) in values.iter().zip(&idx) {
        assert!((v - m[i]).abs() < DECODES);
    }
    assert!(phase.to_poly().is_err());
    // alpha = 2: one more release each, then the ledgers refuse.
    decrypt_with(&session, &parties, &set, &ct, Some(&idx), smudging).unwrap();
    let e = decrypt_with(&session, &parties, &set, &ct, Some(&idx), smudging).unwrap_err();
    assert!(
        matches!(e, Error::FloodingExhausted { done: 2, alpha: 2 }),
        "{e}"
    );
    assert!(Released::new(Some(&[5, 5]), N).is_err());
    assert!(Released::new(Some(&[N]), N).is_err());
}

#[test]
fn stored_threshold_shares_decrypt_and_keep_their_ledger() {
    let Setup { q, .. } = setup();
    let session = Session::new(5, 3).unwrap();
    let secrets = secrets(&session);
    let shares = threshold_shares(&secrets, &q);
    let pk = collective_pk(&secrets, &q);
    let (m, pt) = body(&q, 5);
    let mut rng = Prng::from_os().unwrap();
    let ct = pk
        .encrypt(pt, NoiseDistribution::default(), &mut rng)
        .unwrap();
    let set = [1u16, 3, 4];
    let smudging = fresh_smudging(2);
    let parties: Vec<&ThresholdShare> = set.iter().map(|&j| &shares[j as usize - 1]).collect();
    decrypt_with(&session, &parties, &set, &ct, None, smudging).unwrap();
    // Stored after one release each, loaded again: they decrypt once more,
    // then their ledgers refuse, as the originals' would.
    let loaded: Vec<ThresholdShare> = parties
        .iter()
        .map(|s| ThresholdShare::from_bytes(&s.to_bytes(), &session, &q).unwrap())
        .collect();
    assert_eq!(loaded[0].ledger().counts(), (1, 2));
    let refs: Vec<&ThresholdShare> = loaded.iter().collect();
    let phase = decrypt_with(&session, &refs, &set, &ct, None, smudging).unwrap();
    let values = centered_values(&q, phase.limb(0), phase.limb(1));
    assert!(values.iter().zip(&m).all(|(v, w)| (v - w).abs() < DECODES));
    let e = decrypt_with(&session, &refs, &set, &ct, None, smudging).unwrap_err();
    assert!(matches!(e, Error::FloodingExhausted { .. }), "{e}");

    let bytes = shares[0].to_bytes();
    let other = Session::new(5, 3).unwrap();
    assert!(ThresholdShare::from_bytes(&bytes, &other, &q).is_err());
    let additive = Session::from_parts(session.id(), [0; 32], 5, 5).unwrap();
    assert!(ThresholdShare::from_bytes(&bytes, &additive, &q).is_err());
    for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
        assert!(ThresholdShare::from_bytes(&bytes[..cut], &session, &q).is_err());
    }
    // A ledger past its alpha, and a count without an alpha.
    let head = 6 + 16 + 2 + 1;
    let mut over = bytes.to_vec();
    over[head..head + 8].copy_from_slice(&3u64.to_le_bytes());
    over[head + 8..head + 16].copy_from_slice(&2u64.to_le_bytes());
    assert!(ThresholdShare::from_bytes(&over, &session, &q).is_err());
    over[head + 8..head + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(ThresholdShare::from_bytes(&over, &session, &q).is_err());
    over[head..head + 8].copy_from_slice(&0u64.to_le_bytes());
    assert!(ThresholdShare::from_bytes(&over, &session, &q).is_ok());
}

#[test]
fn shares_of_another_session_key_ciphertext_or_set_are_refused() {
    let Setup { q, .. } = setup();
    let session = Session::new(5, 3).unwrap();
    let secrets = secrets(&session);
    let shares = threshold_shares(&secrets, &q);
    let pk = collective_pk(&secrets, &q);
    let (_, pt) = body(&q, 4);
    let mut rng = Prng::from_os().unwrap();
    let ct = pk
        .encrypt(pt.clone(), NoiseDistribution::default(), &mut rng)
        .unwrap();
    let other_ct = pk
        .encrypt(pt, NoiseDistribution::default(), &mut rng)
        .unwrap();
    let s = fresh_smudging(100);
    let set = [1u16, 2, 3];
    let dec = Decryption::new(
        &session,
        &set,
        CiphertextId::of(&ct),
        [&ct[0], &ct[1]],
        None,
        s,
    )
    .unwrap();
    let good: Vec<Share> = (0..3).map(|j| dec.share(&shares[j]).unwrap()).collect();
    dec.aggregate(&good).unwrap();
    // Another ciphertext.
    let dec2 = Decryption::new(
        &session,
        &set,
        CiphertextId::of(&other_ct),
        [&other_ct[0], &other_ct[1]],
        None,
        s,
    )
    .unwrap();
    let mut mixed = good.clone();
    mixed[2] = dec2.share(&shares[2]).unwrap();
    let e = dec.aggregate(&mixed).unwrap_err().to_string();
    assert!(e.contains("another ciphertext"), "{e}");
    // Another party set.
    let dec3 = Decryption::new(
        &session,
        &[1, 2, 4],
        CiphertextId::of(&ct),
        [&ct[0], &ct[1]],
        None,
        s,
    )
    .unwrap();
    let mut mixed = good.clone();
    mixed[2] = dec3.share(&shares[3]).unwrap();
    let e = dec.aggregate(&mixed).unwrap_err().to_string();
    assert!(e.contains("party set"), "{e}");
    // A party outside the set cannot share.
    assert!(dec.share(&shares[4]).is_err());
    // Duplicates and missing parties.
    let e = dec
        .aggregate(&[good[0].clone(), good[0].clone(), good[1].clone()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("twice"), "{e}");
    let e = dec.aggregate(&good[..2]).unwrap_err().to_string();
    assert!(e.contains("missing") && e.contains('3'), "{e}");
    // Another session (same parties, threshold and key shape).
    let other = Session::new(5, 3).unwrap();
    let other_secrets = self::secrets(&other);
    let other_shares = threshold_shares(&other_secrets, &q);
    assert!(dec.share(&other_shares[0]).is_err());
    let dec_other = Decryption::new(
        &other,
        &set,
        CiphertextId::of(&ct),
        [&ct[0], &ct[1]],
        None,
        s,
    )
    .unwrap();
    let mut mixed = good.clone();
    mixed[0] = dec_other.share(&other_shares[0]).unwrap();
    let e = dec.aggregate(&mixed).unwrap_err().to_string();
    assert!(e.contains("another session"), "{e}");
    // Another protocol's share.
    let gen = PublicKeyGen::new(&session, &q, NoiseDistribution::default());
    let mut mixed = good.clone();
    mixed[1] = gen.share(&secrets[1]).unwrap();
    assert!(dec.aggregate(&mixed).is_err());
    // A party's share in place of the aggregate.
    assert!(dec.finish(&good[0]).is_err());
    // Deals: another recipient, a party twice.
    let deals: Vec<Vec<Share>> = secrets.iter().map(|s| s.deal(&q).unwrap()).collect();
    let mut to_1: Vec<Share> = deals.iter().map(|d| d[0].clone()).collect();
    to_1[4] = deals[4][1].clone();
    let e = ThresholdShare::from_deals(&secrets[0], &to_1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("addressed"), "{e}");
    to_1[4] = deals[3][0].clone();
    assert!(ThresholdShare::from_deals(&secrets[0], &to_1).is_err());
}

#[test]
fn shares_round_trip_and_malformed_bytes_are_refused() {
    let Setup { q, ks } = setup();
    let session = Session::new(4, 2).unwrap();
    let secrets = secrets(&session);
    let shares = threshold_shares(&secrets, &q);
    let pk = collective_pk(&secrets, &q);
    let (_, pt) = body(&q, 5);
    let ct = pk
        .encrypt(
            pt,
            NoiseDistribution::default(),
            &mut Prng::from_os().unwrap(),
        )
        .unwrap();
    let dec = Decryption::new(
        &session,
        &[1, 3],
        CiphertextId::of(&ct),
        [&ct[0], &ct[1]],
        Some(&[0, 5, 9]),
        fresh_smudging(1),
    )
    .unwrap();
    let share = dec.share(&shares[2]).unwrap();
    let bytes = share.to_bytes();
    assert_eq!(Share::from_bytes(&bytes, &q).unwrap(), share);
    let gen = PublicKeyGen::new(&session, ks.qp(), NoiseDistribution::default());
    let keygen = gen.share(&secrets[0]).unwrap();
    assert_eq!(
        Share::from_bytes(&keygen.to_bytes(), ks.qp()).unwrap(),
        keygen
    );
    // Over another basis, truncated, with trailing bytes, a bad protocol byte.
    assert!(Share::from_bytes(&keygen.to_bytes(), &q).is_err());
    for cut in [0, 5, 7, 40, bytes.len() - 1] {
        assert!(Share::from_bytes(&bytes[..cut], &q).is_err(), "{cut}");
    }
    let mut long = bytes.clone();
    long.push(0);
    assert!(Share::from_bytes(&long, &q).is_err());
    let mut bad = bytes.clone();
    bad[6] = 99;
    assert!(Share::from_bytes(&bad, &q).is_err());
    assert!(Share::from_bytes_lwe(&bytes).is_err());
}

#[test]
fn collective_relinearization_and_galois_keys_switch_like_a_dealer_s() {
    let Setup { q, ks } = setup();
    let session = Session::new(3, 2).unwrap();
    let secrets = secrets(&session);
    let s = collective(&secrets);
    let s_qp = s.to_poly(ks.qp(), Representation::Ntt).unwrap();
    // Relinearization, two rounds.
    let gen = RelinKeyGen::new(&session, &ks);
    let (eph, r1): (Vec<_>, Vec<_>) = secrets.iter().map(|s| gen.round1(s).unwrap()).unzip();
    let agg1 = gen.aggregate_round1(&r1).unwrap();
    let r2: Vec<Share> = secrets
        .iter()
        .zip(&eph)
        .map(|(s, e)| gen.round2(s, e, &agg1).unwrap())
        .collect();
    assert!(gen.round2(&secrets[0], &eph[1], &agg1).is_err());
    let rlk = gen
        .finish(&agg1, &gen.aggregate_round2(&r2).unwrap())
        .unwrap();
    assert_eq!(rlk.id(), session.key_id());
    assert!(rlk.seed().is_none());
    let back = KeySwitchKey::from_bytes(&rlk.to_bytes(), &ks).unwrap();
    assert_eq!(back, rlk);
    let s2 = s_qp.mul(&s_qp).unwrap().restrict(&q).unwrap();
    check_switch(&ks, &q, &rlk, &s, &s2);
    // A Galois key.
    let g = 5;
    let ggen = GaloisKeyGen::new(&session, &ks, g).unwrap();
    let shares: Vec<Share> = secrets.iter().map(|s| ggen.share(s).unwrap()).collect();
    let gk = ggen.finish(&ggen.aggregate(&shares).unwrap()).unwrap();
    assert_eq!(KeySwitchKey::from_bytes(&gk.to_bytes(), &ks).unwrap(), gk);
    let sg = s_qp.automorphism(g).unwrap().restrict(&q).unwrap();
    check_switch(&ks, &q, &gk, &s, &sg);
    // Shares of another element are refused.
    let other = GaloisKeyGen::new(&session, &ks, 7).unwrap();
    let mut mixed = shares.clone();
    mixed[0] = other.share(&secrets[0]).unwrap();
    assert!(ggen.aggregate(&mixed).is_err());
    assert!(GaloisKeyGen::new(&session, &ks, 4).is_err());
}

/// switch(key, c) = (u0, u1) with u0 + u1 s - c s' small, for random c.
fn check_switch(
    ks: &KeySwitchContext,
    q: &Arc<RnsBasis>,
    key: &KeySwitchKey,
    s: &SecretKey,
    from: &Poly,
) {
    let c = sample_uniform(q, Representation::Ntt, &mut Prng::from_seed([3; 32]));
    let (u0, mut u1) = ks.switch(key, &c).unwrap();
    let s_q = s.to_poly(q, Representation::Ntt).unwrap();
    u1.mul_assign(&s_q).unwrap();
    u1.add_assign(&u0).unwrap();
    u1.sub_assign(&c.mul(from).unwrap()).unwrap();
    u1.to_coefficient().unwrap();
    let err = max_abs(&centered(&u1));
    // The dealer's bound times the parties' growth of s and of the key
    // errors (s e0 + u e1 + e2 + e3, N^2 at most).
    let bound = ks.noise_bound(q.len(), s.l1_norm()) * 9.0 * N as f64;
    assert!((err as f64) < bound, "switch error {err} above {bound}");
    assert!(err < 1 << 40, "switch error {err}");
}

#[test]
fn public_key_switch_re_encrypts_under_another_key() {
    let Setup { q, .. } = setup();
    let session = Session::new(5, 3).unwrap();
    let secrets = secrets(&session);
    let shares = threshold_shares(&secrets, &q);
    let pk = collective_pk(&secrets, &q);
    let (m, pt) = body(&q, 6);
    let mut rng = Prng::from_os().unwrap();
    let ct = pk
        .encrypt(pt, NoiseDistribution::default(), &mut rng)
        .unwrap();
    let target = RlweSecret::generate(&q).unwrap();
    let target_pk = target
        .public_key(NoiseDistribution::default(), &mut rng)
        .unwrap();
    let set = [1u16, 3, 5];
    let pcks = PublicKeySwitch::new(
        &session,
        &set,
        CiphertextId::of(&ct),
        [&ct[0], &ct[1]],
        &target_pk,
        fresh_smudging(2),
        NoiseDistribution::default(),
    )
    .unwrap();
    let parts: Vec<Share> = set
        .iter()
        .map(|&j| pcks.share(&shares[j as usize - 1]).unwrap())
        .collect();
    let out = pcks.finish(&pcks.aggregate(&parts).unwrap()).unwrap();
    let mut phase = target.phase(&out).unwrap();
    phase.to_coefficient().unwrap();
    let got = centered(&phase);
    assert!(got.iter().zip(&m).all(|(a, b)| (a - b).abs() < DECODES));
    // The collective key no longer decrypts it.
    let dec = decrypt_with(
        &session,
        &[&shares[0], &shares[2], &shares[4]],
        &set,
        &out,
        None,
        fresh_smudging(2),
    )
    .unwrap();
    let wrong = centered(&dec.to_poly().unwrap());
    assert!(
        wrong
            .iter()
            .zip(&m)
            .filter(|(a, b)| (**a - **b).abs() < DECODES)
            .count()
            < 10
    );
}

/// Two-sample Kolmogorov-Smirnov statistic.
fn ks_statistic(mut a: Vec<i128>, mut b: Vec<i128>) -> f64 {
    a.sort_unstable();
    b.sort_unstable();
    let (mut i, mut j, mut d) = (0usize, 0usize, 0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

/// The released error e + sum E_j of a decryption by parties 1..=3 of 5.
fn released_errors(
    session: &Session,
    shares: &[ThresholdShare],
    ct: &[Poly; 2],
    m: &[i128],
    smudging: Smudging,
) -> Vec<i128> {
    let parties: Vec<&ThresholdShare> = shares[..3].iter().collect();
    let phase = decrypt_with(session, &parties, &[1, 2, 3], ct, None, smudging).unwrap();
    centered(&phase.to_poly().unwrap())
        .iter()
        .zip(m)
        .map(|(a, b)| a - b)
        .collect()
}

#[test]
fn a_flooded_release_is_statistically_close_to_that_of_a_fresh_encryption() {
    // A "computed" ciphertext whose error is a fixed 2^20 on every
    // coefficient (what a circuit's noise could reveal) against a fresh
    // encryption of the same message. Flooded for B = 2^21, the released
    // errors of 4 decryptions each (4096 values) must pass a two-sample
    // Kolmogorov-Smirnov test at the 0.1% level (critical distance
    // 1.95 sqrt(2 / 4096) = 0.043); flooded as if B were 1, they must fail
    // it (the test can tell them apart).
    let Setup { q, .. } = setup();
    let session = Session::new(5, 3).unwrap();
    let secrets = secrets(&session);
    let shares = threshold_shares(&secrets, &q);
    let pk = collective_pk(&secrets, &q);
    let (m, pt) = body(&q, 7);
    let mut rng = Prng::from_os().unwrap();
    let shift = Poly::from_signed(&q, &vec![1 << 20; N], Representation::Ntt).unwrap();
    let critical = 1.95 * (2.0f64 / (4 * N) as f64).sqrt();
    for (bound_log2, security, close) in [(21.0, 8, true), (0.0, 1, false)] {
        let mut smudging = Smudging::new(bound_log2);
        smudging.statistical_security = security;
        smudging.decryptions = 16;
        let (mut fresh, mut computed) = (Vec::new(), Vec::new());
        for _ in 0..4 {
            let a = pk
                .encrypt(pt.clone(), NoiseDistribution::default(), &mut rng)
                .unwrap();
            fresh.extend(released_errors(&session, &shares, &a, &m, smudging));
            let [mut c0, c1] = pk
                .encrypt(pt.clone(), NoiseDistribution::default(), &mut rng)
                .unwrap();
            c0.add_assign(&shift).unwrap();
            computed.extend(released_errors(&session, &shares, &[c0, c1], &m, smudging));
        }
        let d = ks_statistic(fresh, computed);
        assert_eq!(
            d < critical,
            close,
            "KS distance {d}, critical {critical}, B = 2^{bound_log2}"
        );
    }
}

#[test]
fn lwe_bits_decrypt_by_any_3_of_5_and_not_by_2() {
    let session = Session::new(5, 3).unwrap();
    let mut rng = Prng::from_os().unwrap();
    let id = KeyId::sample(&mut rng);
    let key = LweSecretKey::binary(630, id, &mut rng);
    let shares = LweKeyShare::deal(&session, &key).unwrap();
    assert_eq!(shares.len(), 5);
    // Bits at 2^62 with noise 2^-55 of the torus: flooding for 2^-40 needs
    // about 2^(64 - 55 + 3.3 + 40 + 6) of the torus' 2^61 of room; a
    // bootstrapped TFHE output (noise near 2^-25) leaves none.
    let bits: Vec<u64> = (0..16).map(|i| (i * 5 % 3 == 0) as u64).collect();
    let cts: Vec<LweCiphertext> = bits
        .iter()
        .map(|&b| key.encrypt(b << 62, 2f64.powi(-55), &mut rng).unwrap())
        .collect();
    let mut bytes = Vec::new();
    cts.iter().for_each(|c| c.write_body(&mut bytes));
    let batch = CiphertextId::of_bytes(&bytes);
    // Noise bound 2^(64-55) * 10.
    let mut smudging = Smudging::new(9.0 + 10f64.log2());
    smudging.decryptions = 10;
    assert!(Smudging::new(39.0 + 10f64.log2())
        .check_room(cts.len(), 3, 61.0)
        .is_err());
    smudging.check_room(cts.len(), 3, 61.0).unwrap();
    for set in subsets(5, 3) {
        let dec = LweDecryption::new(&session, &set, id, batch, &cts, smudging).unwrap();
        let parts: Vec<Share> = set
            .iter()
            .map(|&j| {
                let s = dec.share(&shares[j as usize - 1]).unwrap();
                Share::from_bytes_lwe(&s.to_bytes()).unwrap()
            })
            .collect();
        let phases = dec.finish(&dec.aggregate(&parts).unwrap()).unwrap();
        let got: Vec<u64> = phases
            .iter()
            .map(|&p| (p.wrapping_add(1 << 61) >> 62) & 3)
            .collect();
        assert_eq!(got, bits, "{set:?}");
    }
    // Two parties: refused by the API; with their own Lagrange
    // coefficients forced, the bits are not recovered.
    assert!(LweDecryption::new(&session, &[1, 2], id, batch, &cts, smudging).is_err());
    let ps = lwe_primes_for_test();
    let d = shares[0].dimension();
    let mut words = vec![0u64; 2 * cts.len()];
    for (k, ct) in cts.iter().enumerate() {
        for &j in &[1u16, 2] {
            let lambda = lagrange_coefficient_mod(ps, &[1, 2], j).unwrap();
            for (i, q) in ps.iter().enumerate() {
                let vals = &shares[j as usize - 1].values[i * d..(i + 1) * d];
                let dot =
                    ct.a.iter()
                        .zip(vals)
                        .fold(0u64, |s, (&a, &v)| q.add_mod(s, q.mul_mod(q.reduce(a), v)));
                let w = &mut words[i * cts.len() + k];
                *w = q.add_mod(*w, q.mul_mod(dot, lambda[i]));
            }
        }
    }
    let phases = super::lwe::phases(&words, &cts).unwrap();
    let right = phases
        .iter()
        .zip(&bits)
        .filter(|(&p, &b)| {
            let err = p.wrapping_sub(b << 62) as i64;
            err.unsigned_abs() < 1 << 50
        })
        .count();
    assert!(right <= 1, "{right} of 16 phases right from 2 shares");
    // Another key's ciphertexts and shares of another session are refused.
    let other = LweSecretKey::binary(630, KeyId::sample(&mut rng), &mut rng);
    let foreign = vec![other.encrypt(0, 2f64.powi(-55), &mut rng).unwrap()];
    assert!(LweDecryption::new(&session, &[1, 2, 3], id, batch, &foreign, smudging).is_err());
    let other_session = Session::new(5, 3).unwrap();
    let dec = LweDecryption::new(&other_session, &[1, 2, 3], id, batch, &cts, smudging).unwrap();
    assert!(dec.share(&shares[0]).is_err());
    // Key shares round trip; malformed ones are refused.
    let b = shares[2].to_bytes();
    let back = LweKeyShare::from_bytes(&b, &session).unwrap();
    assert_eq!((back.party(), back.dimension()), (3, 630));
    assert!(LweKeyShare::from_bytes(&b, &other_session).is_err());
    assert!(LweKeyShare::from_bytes(&b[..b.len() - 1], &session).is_err());
}

fn lwe_primes_for_test() -> &'static [Modulus; 2] {
    super::lwe::primes().unwrap()
}
