//! The machine's prime width and the splitting of a modulus into primes.

use triskel_ring::{machine_prime_bits, split_modulus_bits, NARROW_PRIME_BITS};

#[test]
fn moduli_split_into_primes_of_at_most_the_width() {
    assert_eq!(split_modulus_bits(72, 31).unwrap(), [24, 24, 24]);
    assert_eq!(split_modulus_bits(174, 31).unwrap(), [29; 6]);
    assert_eq!(split_modulus_bits(100, 31).unwrap(), [25; 4]);
    assert_eq!(split_modulus_bits(95, 31).unwrap(), [24, 24, 24, 23]);
    // 37 bits would make two primes of 18-19 bits: one of 31 instead.
    assert_eq!(split_modulus_bits(37, 31).unwrap(), [31]);
    assert_eq!(split_modulus_bits(62, 62).unwrap(), [62]);
    for total in 20..400 {
        let parts = split_modulus_bits(total, NARROW_PRIME_BITS).unwrap();
        assert!(parts.iter().all(|b| (20..=NARROW_PRIME_BITS).contains(b)));
        assert!(parts.iter().sum::<u32>() <= total, "{total}: {parts:?}");
    }
    assert!(split_modulus_bits(19, 31).is_err());
    assert!(split_modulus_bits(100, 19).is_err());
    assert!(split_modulus_bits(100, 63).is_err());
}

#[test]
fn the_machine_width_follows_the_dispatcher() {
    // x86-64 backends take 31-bit and 62-bit primes alike: wide primes stay.
    // (On AArch64 the answer depends on the core: see machine_prime_bits.)
    #[cfg(target_arch = "x86_64")]
    assert_eq!(machine_prime_bits(50), 50);
    assert!(machine_prime_bits(28) <= 28);
}
