//! 64-byte-aligned storage for limbs, so that no kernel call splits cache
//! lines: a limb holds n >= 1024 values (a multiple of 64 bytes), so every
//! limb of an aligned buffer starts on a cache line too.

use std::mem::MaybeUninit;

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

/// [`aligned_zeros`] for a key that is streamed whole from memory (TFHE's
/// bootstrapping key): backed by 2 MB pages where the OS allows, since with
/// 4 KB pages the hardware prefetcher stops at every page boundary
/// (measured: the TFHE blind rotation runs slower on 4 KB pages).
pub fn huge_page_zeros(len: usize) -> AlignedVec {
    let mut v = AlignedVec::with_capacity(CACHE_LINE, len);
    // SAFETY: the first `capacity` values of the allocation are ours; viewed
    // as uninitialized values they are only given as a range to the advice.
    let spare = unsafe {
        std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<MaybeUninit<u64>>(), v.capacity())
    };
    advise_huge_pages(spare);
    v.resize(len, 0);
    v
}

/// Advises the OS to back the whole pages of `spare` (a vector's unwritten
/// capacity: no page of it is mapped yet) with huge pages (Linux
/// `MADV_HUGEPAGE`; elsewhere nothing). Advice only: contents are unchanged
/// and a refusal (no transparent huge pages) is harmless.
pub(crate) fn advise_huge_pages<T>(spare: &mut [MaybeUninit<T>]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = spare.as_mut_ptr() as usize;
        let first = start.div_ceil(PAGE) * PAGE;
        let end = (start + std::mem::size_of_val(spare)) / PAGE * PAGE;
        if end > first {
            // SAFETY: [first, end) is page-aligned and inside `spare`, which
            // the caller owns; MADV_HUGEPAGE changes no contents.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = spare;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_start_on_a_cache_line() {
        use crate::scratch;
        for len in [1, 7, 1024, 4096 * 3, 1 << 20] {
            for zeros in [aligned_zeros(len), huge_page_zeros(len)] {
                assert_eq!(zeros.as_ptr() as usize % 64, 0);
                assert!(zeros.len() == len && zeros.iter().all(|&v| v == 0));
            }
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
