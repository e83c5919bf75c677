//! 64-byte-aligned storage for limbs, so that no kernel call splits cache
//! lines: a limb holds n >= 1024 values (a multiple of 64 bytes), so every
//! limb of an aligned buffer starts on a cache line too.

use aligned_vec::{AVec, ConstAlign};

/// Bytes of a cache line (and of a zmm register).
pub const CACHE_LINE: usize = 64;

/// A growable vector of u64 whose data starts on a cache line: the storage
/// of polynomials here, and of the engines' own kernel buffers (TFHE's
/// accumulators, digits and bootstrapping key).
pub type AlignedVec = AVec<u64, ConstAlign<CACHE_LINE>>;

/// An empty vector (allocates nothing).
pub(crate) fn empty() -> AlignedVec {
    AlignedVec::new(CACHE_LINE)
}

/// `len` zeros in a new vector that starts on a cache line.
pub fn aligned_zeros(len: usize) -> AlignedVec {
    let mut v = AlignedVec::with_capacity(CACHE_LINE, len);
    v.resize(len, 0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_start_on_a_cache_line() {
        use crate::scratch;
        for len in [1, 7, 1024, 4096 * 3, 1 << 20] {
            let zeros = aligned_zeros(len);
            assert_eq!(zeros.as_ptr() as usize % CACHE_LINE, 0);
            assert!(zeros.len() == len && zeros.iter().all(|&v| v == 0));
            assert_eq!(scratch::take_zeroed(len).as_ptr() as usize % CACHE_LINE, 0);
            assert_eq!(
                scratch::take_copy(&vec![5; len]).as_ptr() as usize % CACHE_LINE,
                0
            );
        }
    }

    #[test]
    fn every_limb_of_a_polynomial_starts_on_a_cache_line() {
        use crate::{Poly, Representation, RnsBasis};
        let basis = RnsBasis::generate(1024, 30, 3).unwrap();
        let zero = Poly::zero(&basis, Representation::Ntt);
        let given = Poly::from_limbs(&basis, Representation::Ntt, vec![1; 3 * 1024]).unwrap();
        for p in [
            &zero,
            &given,
            &given.clone(),
            &given.automorphism(5).unwrap(),
        ] {
            for i in 0..3 {
                assert_eq!(p.limb(i).as_ptr() as usize % CACHE_LINE, 0);
            }
        }
    }
}
