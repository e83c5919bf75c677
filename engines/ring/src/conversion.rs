//! RNS base conversion: fast base extension Q -> P (approximate and exact),
//! and division with rounding by part of a basis (ModDown, rescale, modulus
//! switching, and the t/Q scaling of BFV).
//!
//! The per-target-prime sum runs in the kernels' `base_convert` (one pass
//! per target prime, unreduced 128-bit sums, the exact correction inside).

use std::sync::Arc;

use triskel_kernels as k;

use crate::basis::RnsBasis;
use crate::error::{Error, Result};
use crate::par;
use crate::poly::{same_basis, Poly, Representation};
use crate::scratch::Scratch;

/// Precomputed constants to convert residues modulo Q = q_0...q_{k-1} (`from`)
/// into residues modulo each prime p_j of another basis (`to`).
///
/// With y_i = [x_i * (Q/q_i)^-1]_{q_i}, the sum S = sum_i y_i * (Q/q_i)
/// equals x + v * Q for x in [0, Q) and an integer v in [0, k), so
///
/// - fast extension returns \[S\]_{p_j} = \[x + v Q\]_{p_j} (an overflow of v Q
///   that key switching tolerates, HPS/BEHZ "FastBconv");
/// - exact extension removes it (Halevi-Polyakov-Shoup): v' = round(sum_i y_i / q_i)
///   computed in f64 and [S - v' Q]_{p_j} is the residue of the centered
///   representative x_c of x mod Q, x_c in [-Q/2, Q/2). The f64 sum has an
///   absolute error below k * 2^-52, so the result is x_c unless x/Q is within
///   that distance of 1/2 modulo 1, where it may be x_c + Q or x_c - Q instead
///   (still correct modulo Q; off by Q only for |x_c| within k * 2^-52 * Q of Q/2).
pub struct BaseConverter {
    from: Arc<RnsBasis>,
    to: Arc<RnsBasis>,
    /// The kernel's constants, one per target prime p_j.
    targets: Vec<k::BaseConversion>,
}

impl std::fmt::Debug for BaseConverter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BaseConverter")
            .field("from", &self.from)
            .field("to", &self.to)
            .finish_non_exhaustive()
    }
}

impl BaseConverter {
    /// The converter from basis `from` to basis `to` (same ring degree; the
    /// bases may share primes, a shared prime simply gets \[x\]_{p}).
    pub fn new(from: &Arc<RnsBasis>, to: &Arc<RnsBasis>) -> Result<BaseConverter> {
        if from.n() != to.n() {
            return Err(Error::BasisMismatch);
        }
        let primes = from.primes();
        let targets = (0..to.len())
            .map(|j| Ok(k::BaseConversion::new(&primes, to.modulus(j))?))
            .collect::<Result<Vec<_>>>()?;
        Ok(BaseConverter {
            from: from.clone(),
            to: to.clone(),
            targets,
        })
    }

    /// The source basis Q.
    pub fn from(&self) -> &Arc<RnsBasis> {
        &self.from
    }

    /// The target basis P.
    pub fn to(&self) -> &Arc<RnsBasis> {
        &self.to
    }

    /// Fast extension of x (coefficient form, basis Q) to P: [x + v Q]_P with
    /// x in [0, Q), 0 <= v < k (see the type's documentation).
    pub fn fast_extend(&self, x: &Poly) -> Result<Poly> {
        self.extend(x, false)
    }

    /// Exact extension of x (coefficient form, basis Q) to P: the residues of
    /// its centered representative in [-Q/2, Q/2) (see the type's documentation
    /// for the one, negligible, exception at +-Q/2).
    pub fn exact_extend(&self, x: &Poly) -> Result<Poly> {
        self.extend(x, true)
    }

    fn extend(&self, x: &Poly, exact: bool) -> Result<Poly> {
        if !same_basis(x.basis(), &self.from) {
            return Err(Error::BasisMismatch);
        }
        x.expect_representation(Representation::Coefficient)?;
        // Every limb is written by the conversion.
        let mut out = Poly::for_overwrite(&self.to, Representation::Coefficient);
        self.convert_raw(x.data(), out.data_mut(), exact)?;
        Ok(out)
    }

    /// The conversion on raw limb-major slices: `src` holds k_from limbs in
    /// coefficient form, `dst` receives k_to limbs.
    pub(crate) fn convert_raw(&self, src: &[u64], dst: &mut [u64], exact: bool) -> Result<()> {
        debug_assert_eq!(dst.len(), self.to.len() * self.to.n());
        let scaled = self.scale_inputs(src)?;
        let ys = scaled.as_deref().unwrap_or(src);
        par::try_limbs(dst, self.to.n(), |j, out| {
            self.convert_limb(j, ys, out, exact)
        })
    }

    /// The first step of a conversion of `src` (k_from limbs, coefficient
    /// form): y_i = [x_i * (Q/q_i)^-1]_{q_i}, or `None` when Q is one prime
    /// (then y = x: pass `src` itself to [`convert_limb`](Self::convert_limb)).
    pub(crate) fn scale_inputs(&self, src: &[u64]) -> Result<Option<Scratch>> {
        let (n, kf) = (self.from.n(), self.from.len());
        debug_assert_eq!(src.len(), kf * n);
        if kf == 1 {
            return Ok(None);
        }
        // Every limb is written.
        let mut y = Scratch::for_overwrite(kf * n);
        par::try_limbs(&mut y, n, |i, limb| {
            let x = &src[i * n..(i + 1) * n];
            Ok(k::mul_scalar(
                self.from.modulus(i),
                limb,
                x,
                self.from.qhat_inv(i),
            )?)
        })?;
        Ok(Some(y))
    }

    /// Target limb j of the conversion, from the y_i of
    /// [`scale_inputs`](Self::scale_inputs) (k_from limbs) into `out` (n values).
    pub(crate) fn convert_limb(
        &self,
        j: usize,
        ys: &[u64],
        out: &mut [u64],
        exact: bool,
    ) -> Result<()> {
        let ys: Vec<&[u64]> = ys.chunks(self.from.n()).collect();
        Ok(self.targets[j].convert(out, &ys, exact)?)
    }
}

/// Division with rounding by D, the product of a `drop` basis, for x given in
/// `keep || drop`: returns round(x / D) in the `keep` basis.
///
/// Formula: x - x_c is divisible by D when x_c is the centered representative
/// of x mod D, and (x - x_c) / D = round(x / D) (ties at x_c = -D/2 round
/// down). So round(x / D) = [(x - x_c) * D^-1]_{keep}, with x_c brought to
/// `keep` by [`BaseConverter::exact_extend`]. Exact, up to the negligible
/// exception of exact extension, which changes the result by 1.
///
/// Instances: ModDown after key switching (keep = Q, drop = P), rescaling and
/// modulus switching (drop = the last prime), BFV's round(t x / Q) in HPS
/// multiplication (keep = P, drop = Q, on t * x).
pub struct DivRound {
    keep: Arc<RnsBasis>,
    drop: Arc<RnsBasis>,
    conv: BaseConverter,
    d_inv: Vec<u64>,
}

impl std::fmt::Debug for DivRound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DivRound")
            .field("keep", &self.keep)
            .field("drop", &self.drop)
            .finish_non_exhaustive()
    }
}

impl DivRound {
    /// Precomputes the division by the product of `drop`, whose primes must
    /// differ from those of `keep`.
    pub fn new(keep: &Arc<RnsBasis>, drop: &Arc<RnsBasis>) -> Result<DivRound> {
        let d_inv = (0..keep.len())
            .map(|i| {
                let m = keep.modulus(i);
                m.inv_mod(drop.product_mod(m)).ok_or_else(|| {
                    Error::InvalidParameter(format!(
                        "prime {} is in both the kept and the dropped basis",
                        m.value()
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(DivRound {
            keep: keep.clone(),
            drop: drop.clone(),
            conv: BaseConverter::new(drop, keep)?,
            d_inv,
        })
    }

    /// The division by the last prime of `basis` (rescale / modulus switching).
    pub fn by_last_prime(basis: &Arc<RnsBasis>) -> Result<DivRound> {
        let k = basis.len();
        DivRound::new(&basis.drop_last()?, &basis.sub_basis(k - 1..k)?)
    }

    /// The kept basis (that of the result).
    pub fn keep(&self) -> &Arc<RnsBasis> {
        &self.keep
    }

    /// The dropped basis D.
    pub fn drop_basis(&self) -> &Arc<RnsBasis> {
        &self.drop
    }

    /// round(x / D) from x's residues in `keep` (`keep_part`, any
    /// representation, which the result keeps) and in `drop` (`drop_part`, any
    /// representation).
    pub fn apply(&self, keep_part: &Poly, drop_part: &Poly) -> Result<Poly> {
        self.apply_owned(keep_part.clone(), drop_part.clone())
    }

    /// [`apply`](Self::apply) on owned parts, in place: `keep_part` becomes
    /// the result, `drop_part` is consumed (no copies).
    pub fn apply_owned(&self, mut keep_part: Poly, mut drop_part: Poly) -> Result<Poly> {
        if !same_basis(keep_part.basis(), &self.keep) || !same_basis(drop_part.basis(), &self.drop)
        {
            return Err(Error::BasisMismatch);
        }
        let keep_ntt = keep_part.representation() == Representation::Ntt;
        let drop_ntt = drop_part.representation() == Representation::Ntt;
        self.apply_raw_in_place(
            keep_part.data_mut(),
            keep_ntt,
            drop_part.data_mut(),
            drop_ntt,
        )?;
        Ok(keep_part)
    }

    /// round(x / D) for x in a basis whose primes are those of `keep` then
    /// those of `drop` (e.g. Q || P, or a level's basis for [`DivRound::by_last_prime`]).
    pub fn apply_joined(&self, x: &Poly) -> Result<Poly> {
        let split = self.keep.len() * self.keep.n();
        let joined: Vec<u64> = self
            .keep
            .primes()
            .into_iter()
            .chain(self.drop.primes())
            .collect();
        if x.basis().primes() != joined || x.n() != self.keep.n() {
            return Err(Error::BasisMismatch);
        }
        let ntt = x.representation() == Representation::Ntt;
        let mut out = Poly::from_raw(&self.keep, x.representation(), &x.data()[..split]);
        self.apply_raw(out.data_mut(), ntt, &x.data()[split..], ntt)?;
        Ok(out)
    }

    /// [`apply_joined`](Self::apply_joined) of an owned x, in place: its
    /// first limbs become the result (no copy).
    pub fn apply_joined_owned(&self, mut x: Poly) -> Result<Poly> {
        let split = self.keep.len() * self.keep.n();
        let joined = self.keep.primes().into_iter().chain(self.drop.primes());
        if !x.basis().primes().into_iter().eq(joined) || x.n() != self.keep.n() {
            return Err(Error::BasisMismatch);
        }
        let ntt = x.representation() == Representation::Ntt;
        let (keep, drop) = x.data_mut().split_at_mut(split);
        self.apply_raw_in_place(keep, ntt, drop, ntt)?;
        Ok(x.truncate_to(&self.keep))
    }

    /// In place on raw limbs: `keep` (k_keep limbs) becomes round(x / D).
    pub(crate) fn apply_raw(
        &self,
        keep: &mut [u64],
        keep_ntt: bool,
        drop: &[u64],
        drop_ntt: bool,
    ) -> Result<()> {
        let mut d = Scratch::copy_of(drop);
        self.apply_raw_in_place(keep, keep_ntt, &mut d, drop_ntt)
    }

    /// Like [`apply_raw`](Self::apply_raw) without copying `drop`, which
    /// is overwritten (brought to coefficient form). Limb by limb, so that
    /// x_c's limb is still in cache when it is subtracted.
    pub(crate) fn apply_raw_in_place(
        &self,
        keep: &mut [u64],
        keep_ntt: bool,
        drop: &mut [u64],
        drop_ntt: bool,
    ) -> Result<()> {
        let scaled = self.prepare_drop(drop, drop_ntt)?;
        let ys = scaled.as_deref().unwrap_or(drop);
        par::try_limbs_with(
            keep,
            self.keep.n(),
            || Scratch::for_overwrite(self.keep.n()),
            |x_c, i, l| self.finish_limb(i, ys, x_c, l, keep_ntt, None),
        )
    }

    /// The first step of a division: `drop` to coefficient form (in place)
    /// and the conversion's scaled inputs (None when `drop` itself is).
    pub(crate) fn prepare_drop(&self, drop: &mut [u64], drop_ntt: bool) -> Result<Option<Scratch>> {
        if drop_ntt {
            par::try_limbs(drop, self.keep.n(), |i, l| {
                Ok(self.drop.plan(i).inverse(l)?)
            })?;
        }
        self.conv.scale_inputs(drop)
    }

    /// The rest of it for limb i of `keep` (`l`, in place), from the
    /// inputs `ys` that [`prepare_drop`](Self::prepare_drop) gave: x_c's
    /// limb (into the limb-sized temporary `x_c`), then (l - x_c) D^-1,
    /// plus `addend` (limb i, in `l`'s representation) when given, in one
    /// pass.
    pub(crate) fn finish_limb(
        &self,
        i: usize,
        ys: &[u64],
        x_c: &mut [u64],
        l: &mut [u64],
        keep_ntt: bool,
        addend: Option<&[u64]>,
    ) -> Result<()> {
        self.conv.convert_limb(i, ys, x_c, true)?;
        if keep_ntt {
            self.keep.plan(i).forward(x_c)?;
        }
        let m = self.keep.modulus(i);
        Ok(k::sub_mul_scalar_add_assign(
            m,
            l,
            x_c,
            self.d_inv[i],
            addend,
        )?)
    }
}
