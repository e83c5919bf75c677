//! Radix integers over 2_2 blocks against native u8/u16/u32/u64 arithmetic,
//! on edges (0, max, carries across every block) and seeded random values.

mod common;
use common::keys_2_2;
use triskel_ring::Prng;
use triskel_tfhe::{Bitwise, Comparison, RadixCiphertext};

fn mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// A fresh 200 times constants that put every pair of digit values in the
/// low two and the high two blocks (17 j: both pairs j), constants whose low
/// or high pair is zero (16, 48; 3 and 9, refused before LUT degrees followed
/// their inputs' range) and dense ones: every product against `wrapping_mul`.
/// (All 256 constants passed once; at ~18 bootstraps each they take
/// minutes, too long for CI.)
#[test]
fn scalar_mul_by_u8_constants() {
    let (ck, sk) = keys_2_2();
    let a = ck.encrypt_u8(200).unwrap();
    let constants = (0..16u8).map(|j| 17 * j).chain([3, 9, 16, 48, 37, 201]);
    for c in constants {
        // A fresh block's degree does not reveal its value.
        assert!(a.blocks().iter().all(|b| b.degree() == 3));
        let product = sk
            .scalar_mul(&a, c as u64)
            .unwrap_or_else(|e| panic!("200 * {c}: {e}"));
        assert_eq!(
            ck.decrypt_radix(&product).unwrap(),
            200u8.wrapping_mul(c) as u64,
            "200 * {c}"
        );
    }
}

#[test]
fn u8_everything() {
    let (ck, sk) = keys_2_2();
    let mut rng = Prng::from_seed([8; 32]);
    // Edges (zero, max, carries through every block) and a random pair.
    let pairs = [
        (255u64, 1u64),
        (0x55, 0xaa),
        (0, 255),
        (rng.below(256).unwrap(), rng.below(256).unwrap()),
    ];
    let dec = |c: &RadixCiphertext| ck.decrypt_radix(c).unwrap();
    for (k, (x, y)) in pairs.into_iter().enumerate() {
        let (a, b) = (
            ck.encrypt_u8(x as u8).unwrap(),
            ck.encrypt_u8(y as u8).unwrap(),
        );
        assert_eq!(dec(&a), x);
        assert_eq!(dec(&sk.add(&a, &b).unwrap()), (x + y) & 255, "{x} + {y}");
        assert_eq!(
            dec(&sk.sub(&a, &b).unwrap()),
            x.wrapping_sub(y) & 255,
            "{x} - {y}"
        );
        assert_eq!(dec(&sk.mul(&a, &b).unwrap()), (x * y) & 255, "{x} * {y}");
        let (bw, f): (Bitwise, fn(u64, u64) -> u64) = match k % 3 {
            0 => (Bitwise::And, |x, y| x & y),
            1 => (Bitwise::Or, |x, y| x | y),
            _ => (Bitwise::Xor, |x, y| x ^ y),
        };
        assert_eq!(dec(&sk.bitwise(bw, &a, &b).unwrap()), f(x, y));
        if k < 2 {
            assert_eq!(dec(&sk.neg(&a).unwrap()), x.wrapping_neg() & 255);
            assert_eq!(dec(&sk.scalar_add(&a, 200).unwrap()), (x + 200) & 255);
            assert_eq!(dec(&sk.scalar_sub(&a, 3).unwrap()), x.wrapping_sub(3) & 255);
            assert_eq!(dec(&sk.scalar_mul(&a, 37).unwrap()), (x * 37) & 255);
            assert_eq!(dec(&sk.min(&a, &b).unwrap()), x.min(y));
            assert_eq!(dec(&sk.max(&a, &b).unwrap()), x.max(y));
            assert_eq!(dec(&sk.bitnot(&a).unwrap()), !x & 255);
            let s = [1u32, 6][k];
            assert_eq!(dec(&sk.shl(&a, s).unwrap()), (x << s) & 255, "{x} << {s}");
            assert_eq!(dec(&sk.shr(&a, s + 1).unwrap()), x >> (s + 1), "{x} >> {s}");
            assert_eq!(
                dec(&sk.rotate_left(&a, s + 2).unwrap()),
                (x as u8).rotate_left(s + 2) as u64
            );
            assert_eq!(
                dec(&sk.rotate_right(&a, s).unwrap()),
                (x as u8).rotate_right(s) as u64
            );
        }
    }
    // A comparison result drives select; chained results stay usable.
    let (a, b) = (ck.encrypt_u8(9).unwrap(), ck.encrypt_u8(200).unwrap());
    let gt = sk.compare(Comparison::Gt, &a, &b).unwrap();
    assert_eq!(dec(&sk.select(&gt, &a, &b).unwrap()), 200);
    // A select's blocks (noise level 2) feed bivariate LUTs and arithmetic.
    let m = sk.min(&a, &b).unwrap();
    assert_eq!(dec(&sk.bitwise(Bitwise::Xor, &m, &b).unwrap()), 9 ^ 200);
    assert_eq!(dec(&sk.sub(&m, &m).unwrap()), 0);
    let sum = sk.add(&sk.add(&a, &b).unwrap(), &b).unwrap();
    assert_eq!(dec(&sum), (9 + 400) & 255);
    assert!(ck.encrypt_radix(256, 8).is_err());
    assert!(sk.add(&a, &ck.encrypt_u16(1).unwrap()).is_err());
}

/// Every comparison on 8-bit pairs whose first difference is in each block
/// (both orders), on equal pairs and on the extremes; the signs of the
/// packed block pairs and their combination both decide somewhere.
#[test]
fn comparisons_decide_at_every_block() {
    let (ck, sk) = keys_2_2();
    let ops = [
        Comparison::Eq,
        Comparison::Ne,
        Comparison::Lt,
        Comparison::Le,
        Comparison::Gt,
        Comparison::Ge,
    ];
    let base = 0b10_01_11_00u64;
    let mut pairs = vec![(base, base), (0, 255), (255, 0), (0, 0)];
    for block in 0..4 {
        // Raise block `block` of base by one (mod 4), then lower the blocks
        // below it so that only this block decides.
        let shift = 2 * block;
        let digit = (base >> shift) & 3;
        let raised = (base & !(3 << shift)) | ((digit + 1) % 4) << shift;
        let raised = raised & !((1 << shift) - 1);
        pairs.push((base, raised));
        pairs.push((raised, base));
    }
    for (k, (x, y)) in pairs.into_iter().enumerate() {
        let (a, b) = (
            ck.encrypt_u8(x as u8).unwrap(),
            ck.encrypt_u8(y as u8).unwrap(),
        );
        for op in [ops[k % 6], ops[(k + 3) % 6]] {
            let c = sk.compare(op, &a, &b).unwrap();
            assert_eq!(
                ck.decrypt_with_carry(&c).unwrap(),
                op.eval(x, y) as u64,
                "{op:?} {x} {y}"
            );
            assert_eq!((c.degree(), c.noise_level()), (1, 1));
        }
    }
    // A select's blocks (noise level 2) would push a difference past the
    // failure bound: they are refreshed first.
    let (a, b) = (ck.encrypt_u8(9).unwrap(), ck.encrypt_u8(200).unwrap());
    let m = sk.min(&a, &b).unwrap();
    assert!(m.blocks().iter().any(|c| c.noise_level() > 1));
    for (op, want) in [(Comparison::Lt, 1), (Comparison::Eq, 0)] {
        let c = sk.compare(op, &m, &b).unwrap();
        assert_eq!(ck.decrypt_with_carry(&c).unwrap(), want, "{op:?} 9 200");
    }
}

#[test]
fn wider_integers_against_native() {
    let (ck, sk) = keys_2_2();
    let mut rng = Prng::from_seed([9; 32]);
    for bits in [16u32, 32, 64] {
        let m = mask(bits);
        // Carries across every block (max + 1, 0 - max) and a random pair.
        let cases = [(m, 1u64), (rng.next_u64() & m, rng.next_u64() & m)];
        for (x, y) in cases {
            let (a, b) = (
                ck.encrypt_radix(x, bits).unwrap(),
                ck.encrypt_radix(y, bits).unwrap(),
            );
            let dec = |c: &RadixCiphertext| ck.decrypt_radix(c).unwrap();
            assert_eq!(
                dec(&sk.add(&a, &b).unwrap()),
                x.wrapping_add(y) & m,
                "{bits}: {x} + {y}"
            );
            assert_eq!(
                dec(&sk.sub(&b, &a).unwrap()),
                y.wrapping_sub(x) & m,
                "{bits}: {y} - {x}"
            );
            let lt = sk.compare(Comparison::Lt, &a, &b).unwrap();
            assert_eq!(ck.decrypt(&lt).unwrap() == 1, x < y);
            if bits == 16 && x != m {
                assert_eq!(
                    dec(&sk.mul(&a, &b).unwrap()),
                    x.wrapping_mul(y) & m,
                    "{x} * {y}"
                );
            }
        }
    }
}

/// Each width decrypts to its own type; another width is an error, never a
/// truncation (a u16 as u8) or a widening (a u8 as u16).
#[test]
fn typed_decryption_checks_the_width() {
    let (ck, _) = keys_2_2();
    let (a8, a16) = (
        ck.encrypt_u8(0xa5).unwrap(),
        ck.encrypt_u16(0xbeef).unwrap(),
    );
    let (a32, a64) = (
        ck.encrypt_u32(0xdead_beef).unwrap(),
        ck.encrypt_u64(u64::MAX - 1).unwrap(),
    );
    assert_eq!(ck.decrypt_u8(&a8).unwrap(), 0xa5u8);
    assert_eq!(ck.decrypt_u16(&a16).unwrap(), 0xbeefu16);
    assert_eq!(ck.decrypt_u32(&a32).unwrap(), 0xdead_beefu32);
    assert_eq!(ck.decrypt_u64(&a64).unwrap(), u64::MAX - 1);
    for (i, ct) in [&a8, &a16, &a32, &a64].into_iter().enumerate() {
        let accepted = [
            ck.decrypt_u8(ct).is_ok(),
            ck.decrypt_u16(ct).is_ok(),
            ck.decrypt_u32(ct).is_ok(),
            ck.decrypt_u64(ct).is_ok(),
        ];
        let mut only_own = [false; 4];
        only_own[i] = true;
        assert_eq!(accepted, only_own, "{}-bit integer", ct.bits());
    }
}

/// The integers of `bits` bits that put digit pair (i / 4 mod 4, i mod 4)
/// in block i: every pair of 2-bit digits in some block (twice at 64 bits),
/// for the operations that work block by block.
fn every_digit_pair(bits: u32) -> (u64, u64) {
    (0..bits / 2).fold((0, 0), |(u, v), i| {
        let shift = 2 * i as u64;
        (
            u | ((i as u64 / 4) % 4) << shift,
            v | (i as u64 % 4) << shift,
        )
    })
}

/// Negation, scalar add/sub and scalar_mul at every width against native
/// wrapping arithmetic: carries and borrows through every block (-0, max +
/// 1, 0 - 1, -x), seeded random operands, and constants of several nonzero
/// digits (1 | 2^(bits - 1): a copy and a top digit; digits 3, 2 and 2 in
/// the lowest, the middle and the top block: both halves of products
/// through lookup tables; one in every block and a random one at 16 bits)
/// times max (a carry out of every partial product) and random values.
#[test]
fn arithmetic_at_every_width() {
    let (ck, sk) = keys_2_2();
    for (bits, seed) in [(16u32, 16u8), (32, 32), (64, 64)] {
        let mut rng = Prng::from_seed([seed; 32]);
        let m = mask(bits);
        let enc = |v: u64| ck.encrypt_radix(v, bits).unwrap();
        let dec = |c: &RadixCiphertext| ck.decrypt_radix(c).unwrap();
        let (r, s) = (rng.next_u64() & m, rng.next_u64() & m);
        let (zero, max, x) = (enc(0), enc(m), enc(r));
        let top = 1 << (bits - 1);

        assert_eq!(dec(&sk.neg(&zero).unwrap()), 0, "{bits}: -0");
        assert_eq!(
            dec(&sk.neg(&x).unwrap()),
            r.wrapping_neg() & m,
            "{bits}: -{r}"
        );
        assert_eq!(dec(&sk.scalar_add(&max, 1).unwrap()), 0, "{bits}: max + 1");
        assert_eq!(dec(&sk.scalar_sub(&zero, 1).unwrap()), m, "{bits}: 0 - 1");
        let sum = sk.scalar_add(&x, s).unwrap();
        assert_eq!(dec(&sum), r.wrapping_add(s) & m, "{bits}: {r} + {s}");
        let diff = sk.scalar_sub(&x, s).unwrap();
        assert_eq!(dec(&diff), r.wrapping_sub(s) & m, "{bits}: {r} - {s}");

        let digits_3_2_2 = 3 | 2 << (bits / 2) | 2 << (bits - 2);
        let mut products = vec![(m, 1 | top), (r, digits_3_2_2)];
        if bits == 16 {
            products.extend([(m, 0x5555), (r, s)]);
        }
        for (v, c) in products {
            let product = sk.scalar_mul(&enc(v), c).unwrap();
            assert_eq!(dec(&product), v.wrapping_mul(c) & m, "{bits}: {v} * {c}");
        }
    }
}

/// The six comparisons at every width, each true once and false once, on
/// pairs decided in the lowest block (max, max - 1), in the highest (0,
/// 2^(bits - 1)), equal pairs and seeded random ones; select on both
/// outcomes; min and max on random operands (and at 64 bits on the
/// extremes).
#[test]
fn comparisons_at_every_width() {
    let (ck, sk) = keys_2_2();
    for (bits, seed) in [(16u32, 17u8), (32, 33), (64, 65)] {
        let mut rng = Prng::from_seed([seed; 32]);
        let m = mask(bits);
        let enc = |v: u64| ck.encrypt_radix(v, bits).unwrap();
        let dec = |c: &RadixCiphertext| ck.decrypt_radix(c).unwrap();
        let (r, s) = (rng.next_u64() & m, rng.next_u64() & m);
        let top = 1 << (bits - 1);
        let cases = [
            (Comparison::Eq, r, r),
            (Comparison::Eq, m, m - 1),
            (Comparison::Ne, 0, top),
            (Comparison::Ne, m, m),
            (Comparison::Lt, 0, top),
            (Comparison::Lt, m, m - 1),
            (Comparison::Le, m - 1, m),
            (Comparison::Le, top, 0),
            (Comparison::Gt, m, m - 1),
            (Comparison::Gt, r, r),
            (Comparison::Ge, r, s),
            (Comparison::Ge, 0, m),
        ];
        let mut outcomes = Vec::new();
        for (op, u, v) in cases {
            let c = sk.compare(op, &enc(u), &enc(v)).unwrap();
            let want = op.eval(u, v);
            assert_eq!(ck.decrypt(&c).unwrap() == 1, want, "{bits}: {op:?} {u} {v}");
            outcomes.push((c, want));
        }
        let (x, y) = (enc(r), enc(s));
        // A true (Eq r r) and a false (Eq max max - 1) condition.
        for (c, want) in &outcomes[..2] {
            let picked = if *want { r } else { s };
            assert_eq!(
                dec(&sk.select(c, &x, &y).unwrap()),
                picked,
                "{bits}: select"
            );
        }
        assert_eq!(dec(&sk.min(&x, &y).unwrap()), r.min(s), "{bits}: min");
        assert_eq!(dec(&sk.max(&x, &y).unwrap()), r.max(s), "{bits}: max");
        if bits == 64 {
            let (zero, max) = (enc(0), enc(m));
            assert_eq!(dec(&sk.min(&max, &zero).unwrap()), 0, "min(max, 0)");
            assert_eq!(dec(&sk.max(&zero, &max).unwrap()), m, "max(0, max)");
        }
    }
}

/// and/or/xor/not at every width on operands holding every digit pair and on
/// seeded random ones; shifts and rotations by 0, 1, half the width (whole
/// blocks), half + 1 and bits - 1 (right shifts and left rotations by all,
/// left shifts and right rotations by 0 and bits - 1).
#[test]
fn bitwise_and_shifts_at_every_width() {
    let (ck, sk) = keys_2_2();
    for (bits, seed) in [(16u32, 18u8), (32, 34), (64, 66)] {
        let mut rng = Prng::from_seed([seed; 32]);
        let m = mask(bits);
        let enc = |v: u64| ck.encrypt_radix(v, bits).unwrap();
        let dec = |c: &RadixCiphertext| ck.decrypt_radix(c).unwrap();
        let (r, s) = (rng.next_u64() & m, rng.next_u64() & m);
        for (u, v) in [every_digit_pair(bits), (r, s)] {
            let (a, b) = (enc(u), enc(v));
            for (op, want) in [
                (Bitwise::And, u & v),
                (Bitwise::Or, u | v),
                (Bitwise::Xor, u ^ v),
            ] {
                let got = dec(&sk.bitwise(op, &a, &b).unwrap());
                assert_eq!(got, want, "{bits}: {op:?} {u} {v}");
            }
            assert_eq!(dec(&sk.bitnot(&a).unwrap()), !u & m, "{bits}: !{u}");
        }

        let x = enc(r);
        let rotl = |v: u64, k: u32| ((v << k) | (v >> ((bits - k) % bits))) & m;
        let half = bits / 2;
        for k in [0, 1, half, half + 1, bits - 1] {
            let what = format!("{bits}: {r} by {k}");
            assert_eq!(dec(&sk.shr(&x, k).unwrap()), r >> k, "shr {what}");
            assert_eq!(
                dec(&sk.rotate_left(&x, k).unwrap()),
                rotl(r, k),
                "rotl {what}"
            );
            if k == 0 || k == bits - 1 {
                assert_eq!(dec(&sk.shl(&x, k).unwrap()), (r << k) & m, "shl {what}");
                let right = rotl(r, (bits - k) % bits);
                assert_eq!(dec(&sk.rotate_right(&x, k).unwrap()), right, "rotr {what}");
            }
        }
    }
}

/// Products against `wrapping_mul` at `bits` bits, each its own test so
/// that the test threads run them side by side.
fn product_at(bits: u32, x: u64, y: u64) {
    let (ck, sk) = keys_2_2();
    let (a, b) = (
        ck.encrypt_radix(x, bits).unwrap(),
        ck.encrypt_radix(y, bits).unwrap(),
    );
    let product = sk.mul(&a, &b).unwrap();
    assert_eq!(
        ck.decrypt_radix(&product).unwrap(),
        x.wrapping_mul(y) & mask(bits),
        "{bits}: {x} * {y}"
    );
}

/// max * max = 1: every block product 3 * 3, the largest carries into
/// every column (418 bootstraps at 32 bits, 1691 at 64: the blocks'
/// degrees decide the count, so the edge costs what random operands do).
#[test]
fn mul_u32_max_times_max() {
    product_at(32, mask(32), mask(32));
}

#[test]
fn mul_u64_max_times_max() {
    product_at(64, u64::MAX, u64::MAX);
}

/// Two random u64s (1691 bootstraps).
#[test]
fn mul_u64() {
    let mut rng = Prng::from_seed([65; 32]);
    product_at(64, rng.next_u64(), rng.next_u64());
}
