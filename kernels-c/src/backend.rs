//! Backends and run-time dispatch.

use std::sync::OnceLock;

use crate::bindings as ffi;
use crate::error::{Error, Result};

/// A kernel backend: one implementation of the whole C ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Backend {
    /// Portable C, any CPU, primes below 2^62: the reference.
    Portable,
    /// AVX-512F/DQ assembly, primes below 2^62.
    Avx512,
    /// AVX-512 IFMA (52-bit multiply-add) assembly, primes below 2^50.
    Avx512Ifma,
    /// AArch64 assembly with scalar products (`mul`/`umulh`) and NEON
    /// add/sub/neg, primes below 2^62.
    Aarch64,
    /// AArch64 SVE assembly, 64-bit lanes at any vector length, primes below 2^62.
    Sve,
    /// AArch64 NEON assembly, four 32-bit lanes, primes below 2^31.
    Neon,
    /// AVX2 + FMA assembly (four 64-bit lanes, x86-64 without AVX-512), primes below 2^62.
    Avx2,
}

/// The operations of the kernel ABI, in the order [`Backend::native_ops`] reports them.
pub const OPS: [&str; 14] = [
    "ntt_forward",
    "ntt_inverse",
    "add",
    "sub",
    "neg",
    "mul",
    "mul_scalar",
    "mul_acc",
    "dot",
    "base_convert",
    "automorphism_coeff",
    "automorphism_ntt",
    "ntt_inverse_to",
    "sub_mul_scalar_add",
];

type Binary =
    unsafe extern "C" fn(*mut u64, *const u64, *const u64, usize, *const ffi::triskel_modulus);
type Transform = unsafe extern "C" fn(*const ffi::triskel_ntt_plan, *mut u64);
type Dot = unsafe extern "C" fn(
    *mut u64,
    *const *const u64,
    *const *const u64,
    usize,
    usize,
    *const ffi::triskel_modulus,
);
type BaseConvert = unsafe extern "C" fn(
    *mut u64,
    *const *const u64,
    usize,
    *const ffi::triskel_convert_table,
    *const ffi::triskel_modulus,
);
type AutomorphismCoeff =
    unsafe extern "C" fn(*mut u64, *const u64, u64, usize, *const ffi::triskel_modulus);
type AutomorphismNtt = unsafe extern "C" fn(*mut u64, *const u64, *const u32, usize);
type TransformTo = unsafe extern "C" fn(*const ffi::triskel_ntt_plan, *mut u64, *const u64);
type SubMulScalarAdd = unsafe extern "C" fn(
    *mut u64,
    *const u64,
    *const u64,
    *const u64,
    u64,
    u64,
    usize,
    *const ffi::triskel_modulus,
);

/// The kernels of one backend with every missing one replaced by portable's.
pub(crate) struct Kernels {
    pub ntt_forward: Transform,
    pub ntt_inverse: Transform,
    pub add: Binary,
    pub sub: Binary,
    pub neg: unsafe extern "C" fn(*mut u64, *const u64, usize, *const ffi::triskel_modulus),
    pub mul: Binary,
    pub mul_scalar:
        unsafe extern "C" fn(*mut u64, *const u64, u64, u64, usize, *const ffi::triskel_modulus),
    pub mul_acc: Binary,
    pub dot: Dot,
    pub base_convert: BaseConvert,
    pub automorphism_coeff: AutomorphismCoeff,
    pub automorphism_ntt: AutomorphismNtt,
    pub ntt_inverse_to: TransformTo,
    pub sub_mul_scalar_add: SubMulScalarAdd,
}

impl Backend {
    /// Every backend, in declaration order (not id order: avx2 came later).
    pub const ALL: [Backend; 7] = [
        Backend::Portable,
        Backend::Avx512,
        Backend::Avx512Ifma,
        Backend::Aarch64,
        Backend::Sve,
        Backend::Neon,
        Backend::Avx2,
    ];

    /// Preference order of automatic selection: fastest first. A backend
    /// with a narrower modulus range comes first, so a prime it accepts
    /// gets it (neon for primes below 2^31).
    const PREFERENCE: [Backend; 7] = [
        Backend::Avx512Ifma,
        Backend::Avx512,
        Backend::Avx2,
        Backend::Neon,
        Backend::Sve,
        Backend::Aarch64,
        Backend::Portable,
    ];

    fn id(self) -> u32 {
        match self {
            Backend::Portable => ffi::TRISKEL_BACKEND_PORTABLE,
            Backend::Avx512 => ffi::TRISKEL_BACKEND_AVX512,
            Backend::Avx512Ifma => ffi::TRISKEL_BACKEND_AVX512IFMA,
            Backend::Aarch64 => ffi::TRISKEL_BACKEND_AARCH64,
            Backend::Sve => ffi::TRISKEL_BACKEND_SVE,
            Backend::Neon => ffi::TRISKEL_BACKEND_NEON,
            Backend::Avx2 => ffi::TRISKEL_BACKEND_AVX2,
        }
    }

    /// The name used by `TRISKEL_KERNELS`, `triskel info` and the bench output.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::Avx512 => "avx512",
            Backend::Avx512Ifma => "avx512ifma",
            Backend::Aarch64 => "aarch64",
            Backend::Sve => "sve",
            Backend::Neon => "neon",
            Backend::Avx2 => "avx2",
        }
    }

    /// Parses a backend name (case-insensitive).
    pub fn from_name(name: &str) -> Result<Backend> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| Error::UnknownBackend(name.to_string()))
    }

    /// The C table of this backend, if it is compiled into this build.
    pub(crate) fn table(self) -> Option<&'static ffi::triskel_backend> {
        // SAFETY: triskel_backend_get returns NULL or a pointer to a static,
        // immutable table that lives for the whole program.
        unsafe { ffi::triskel_backend_get(self.id()).as_ref() }
    }

    /// True when this build contains the backend.
    pub fn is_compiled(self) -> bool {
        self.table().is_some()
    }

    /// True when the CPU has the instructions the backend needs.
    pub fn cpu_supports(self) -> bool {
        match self {
            Backend::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("bmi2")
            }
            // The IFMA kernels also use AVX-512DQ mask moves and BMI2 shifts.
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512Ifma => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512ifma")
                    && std::arch::is_x86_feature_detected!("bmi2")
            }
            // FMA for the double-precision paths (q < 2^50), BMI2 for the
            // shifts of the Barrett setup.
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                    && std::arch::is_x86_feature_detected!("bmi2")
            }
            #[cfg(target_arch = "aarch64")]
            Backend::Aarch64 | Backend::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            // HWCAP_SVE, through the standard library's detection.
            #[cfg(target_arch = "aarch64")]
            Backend::Sve => std::arch::is_aarch64_feature_detected!("sve"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// `Ok` when the backend is compiled in and the CPU can run it; otherwise
    /// an error that says which of the two is missing.
    pub fn check_usable(self) -> Result<()> {
        let reason = if !self.is_compiled() {
            format!(
                "not compiled into this build for {}",
                std::env::consts::ARCH
            )
        } else if !self.cpu_supports() {
            "this CPU lacks the instructions it needs".to_string()
        } else {
            return Ok(());
        };
        Err(Error::BackendUnavailable {
            backend: self.name(),
            reason,
        })
    }

    /// True when compiled in and runnable on this CPU.
    pub fn is_usable(self) -> bool {
        self.check_usable().is_ok()
    }

    /// Moduli must be below 2^max_modulus_bits for this backend.
    pub fn max_modulus_bits(self) -> u32 {
        match self.table() {
            Some(t) => t.max_modulus_bits,
            None if self == Backend::Avx512Ifma => 50,
            None if self == Backend::Neon => 31,
            None => crate::MAX_MODULUS_BITS,
        }
    }

    /// True when q is below this backend's limit.
    pub fn supports_modulus(self, q: u64) -> bool {
        q >> self.max_modulus_bits() == 0
    }

    /// The ABI operations this backend implements itself; the others run on
    /// the portable kernels. Empty when the backend is not compiled in.
    pub fn native_ops(self) -> Vec<&'static str> {
        let Some(t) = self.table() else {
            return Vec::new();
        };
        let present = [
            t.ntt_forward.is_some(),
            t.ntt_inverse.is_some(),
            t.add.is_some(),
            t.sub.is_some(),
            t.neg.is_some(),
            t.mul.is_some(),
            t.mul_scalar.is_some(),
            t.mul_acc.is_some(),
            t.dot.is_some(),
            t.base_convert.is_some(),
            t.automorphism_coeff.is_some(),
            t.automorphism_ntt.is_some(),
            t.ntt_inverse_to.is_some(),
            t.sub_mul_scalar_add.is_some(),
        ];
        OPS.iter()
            .zip(present)
            .filter_map(|(op, p)| p.then_some(*op))
            .collect()
    }

    /// The resolved kernels (missing ones from portable), if compiled in.
    pub(crate) fn kernels(self) -> Option<&'static Kernels> {
        static KERNELS: OnceLock<[Option<Kernels>; Backend::ALL.len()]> = OnceLock::new();
        let index = Backend::ALL.iter().position(|&b| b == self)?;
        KERNELS.get_or_init(|| Backend::ALL.map(resolve))[index].as_ref()
    }
}

fn resolve(backend: Backend) -> Option<Kernels> {
    let t = backend.table()?;
    let p = Backend::Portable
        .table()
        .expect("the portable backend is always compiled");
    Some(Kernels {
        ntt_forward: t.ntt_forward.or(p.ntt_forward)?,
        ntt_inverse: t.ntt_inverse.or(p.ntt_inverse)?,
        add: t.add.or(p.add)?,
        sub: t.sub.or(p.sub)?,
        neg: t.neg.or(p.neg)?,
        mul: t.mul.or(p.mul)?,
        mul_scalar: t.mul_scalar.or(p.mul_scalar)?,
        mul_acc: t.mul_acc.or(p.mul_acc)?,
        dot: t.dot.or(p.dot)?,
        base_convert: t.base_convert.or(p.base_convert)?,
        automorphism_coeff: t.automorphism_coeff.or(p.automorphism_coeff)?,
        automorphism_ntt: t.automorphism_ntt.or(p.automorphism_ntt)?,
        ntt_inverse_to: t.ntt_inverse_to.or(p.ntt_inverse_to)?,
        sub_mul_scalar_add: t.sub_mul_scalar_add.or(p.sub_mul_scalar_add)?,
    })
}

/// The backends compiled into this build that this CPU can run.
pub fn available_backends() -> Vec<Backend> {
    Backend::ALL.into_iter().filter(|b| b.is_usable()).collect()
}

/// The backend forced by `TRISKEL_KERNELS`, read once per process: `None`
/// when unset or empty, an error when it names an unknown backend or one this
/// machine cannot run.
pub fn forced_backend() -> Result<Option<Backend>> {
    static FORCED: OnceLock<Result<Option<Backend>>> = OnceLock::new();
    FORCED
        .get_or_init(|| match std::env::var("TRISKEL_KERNELS") {
            Ok(name) if !name.trim().is_empty() => {
                let b = Backend::from_name(&name)?;
                b.check_usable()?;
                Ok(Some(b))
            }
            _ => Ok(None),
        })
        .clone()
}

/// The backend used for modulus q: the one `TRISKEL_KERNELS` forces (an
/// error if it cannot handle q), otherwise the fastest usable backend whose
/// range contains q.
pub fn select_backend(q: u64) -> Result<Backend> {
    if let Some(b) = forced_backend()? {
        if !b.supports_modulus(q) {
            return Err(Error::ModulusOutOfRange {
                q,
                max_bits: b.max_modulus_bits(),
            });
        }
        return Ok(b);
    }
    Ok(Backend::PREFERENCE
        .into_iter()
        .find(|b| b.is_usable() && b.supports_modulus(q))
        .unwrap_or(Backend::Portable))
}
