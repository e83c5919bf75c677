//! What a caller allows the planner ([`PlanOptions`], threshold keys) and
//! the decisions of a plan that a server must follow ([`PlanChoice`]).

use super::Engine;

/// What the caller allows the planner beyond homomorphic evaluation.
///
/// # Examples
///
/// ```
/// use triskel::{plan, plan_with, CostModel, Engine, Error, Kind, PlanOptions, Program};
///
/// // u8 values (TFHE) as signed integers (BFV): no homomorphic path.
/// let mut p = Program::new();
/// let u = p.input("u", Kind::Uint { len: 2, bits: 8 })?;
/// let s = p.to_signed(u)?;
/// p.output("s", s)?;
/// let costs = CostModel::builtin();
/// assert!(matches!(plan(&p, &costs), Err(Error::Refused { .. })));
///
/// let options = PlanOptions { allow_round_trips: true, ..PlanOptions::default() };
/// let plan = plan_with(&p, &costs, options)?;
/// assert_eq!(plan.round_trips(), [(s.index(), Engine::Tfhe)]);
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// Conversions with no homomorphic path (TFHE -> BFV/CKKS, BFV ->
    /// CKKS) may take a key-holder round trip: the key holder decrypts the
    /// values and encrypts them again. Off by default: such programs are
    /// refused.
    pub allow_round_trips: bool,
    /// The least CKKS scale, log2 (`None`: no least). Among the sets deep
    /// and wide enough, the planner takes those of the smallest scale that
    /// meets it, then the cheapest; a program no such set holds is refused.
    /// Decryptions with noise flooding need about 2^(log2 B + 31 + p) for p
    /// bits of precision ([`crate::Session::flood_ckks_releases`]): the
    /// sets of scale 2^50 serve them, the default ones (2^40) do not.
    pub ckks_scale_log2: Option<u32>,
    /// The most bytes the program's ciphertexts may take, one per node as a
    /// run holds them ([`Plan::ciphertext_bytes`](crate::Plan::ciphertext_bytes); `None`:
    /// [`DEFAULT_MAX_CIPHERTEXT_BYTES`]). A program above it is refused
    /// before any key exists: a few nodes of long u64 vectors would
    /// otherwise ask for tens of GB.
    pub max_ciphertext_bytes: Option<u64>,
    /// Keys held by parties, any k of n of whom decrypt ([`Threshold`];
    /// `None`: one key holder, a [`Client`](crate::Client)). The parties
    /// ([`Party`](crate::Party)) generate the keys together; a program
    /// whose plan needs keys no collective protocol makes (TFHE, transition
    /// keys, key-holder round trips) is refused.
    pub threshold: Option<Threshold>,
}

/// k-of-n threshold keys ([`PlanOptions::threshold`]): n parties, numbered
/// 0..n, of whom any k decrypt together and fewer learn nothing.
///
/// # Examples
///
/// ```
/// use triskel::{plan_with, CostModel, Error, Kind, PlanOptions, Program, Threshold};
///
/// let options = PlanOptions::default().threshold(2, 3);
/// assert_eq!(options.threshold, Some(Threshold { k: 2, n: 3 }));
///
/// // BFV and CKKS keys have collective protocols; TFHE keys do not.
/// let mut p = Program::new();
/// let u = p.input("u", Kind::Uint { len: 2, bits: 8 })?;
/// let v = p.add(u, u)?;
/// p.output("v", v)?;
/// let refused = plan_with(&p, &CostModel::builtin(), options);
/// assert!(matches!(refused, Err(Error::NotCollective { .. })));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Threshold {
    pub k: u16,
    pub n: u16,
}

impl PlanOptions {
    /// These options with k-of-n threshold keys.
    pub fn threshold(self, k: u16, n: u16) -> PlanOptions {
        PlanOptions {
            threshold: Some(Threshold { k, n }),
            ..self
        }
    }
}

/// The decisions a plan makes where the capability rules leave a choice
/// (engines, parameter sets, and the options they were made under): what a
/// client sends a server with its evaluation keys. Costs differ by machine,
/// so a server does not plan again by its own cost model; it re-derives the
/// plan under these decisions and checks it ([`plan_chosen`](crate::plan_chosen)).
///
/// # Examples
///
/// ```
/// use triskel::{plan, plan_chosen, CostModel, Engine, Error, Kind, Program, Scalar};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 4, bound: 100 })?;
/// let s = p.dot_plain(x, &[1, -2, 3, 4].map(Scalar::Int))?;
/// p.output("s", s)?;
/// let choice = plan(&p, &CostModel::builtin())?.choice();
/// assert_eq!(choice.engines, [Engine::Bfv, Engine::Bfv]);
/// assert!(choice.describe().ends_with("with 2 BFV, 0 CKKS, 0 TFHE nodes"));
///
/// // What a server does: the same plan from the program and the choice,
/// // and a choice the rules do not give is refused.
/// assert_eq!(plan_chosen(&p, &choice)?.choice(), choice);
/// let mut forged = choice.clone();
/// forged.engines[1] = Engine::Ckks;
/// assert!(matches!(plan_chosen(&p, &forged), Err(Error::Refused { .. })));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PlanChoice {
    pub options: PlanOptions,
    /// The engine of every node, in program order.
    pub engines: Vec<Engine>,
    /// The named set of each BFV part, in part order.
    pub bfv: Vec<String>,
    pub ckks: Option<String>,
    pub tfhe: Option<String>,
}

impl PlanChoice {
    /// One line: the sets and how many nodes run on each engine.
    pub fn describe(&self) -> String {
        let count = |e: Engine| self.engines.iter().filter(|&&x| x == e).count();
        let mut sets: Vec<String> = self.bfv.iter().map(|s| format!("bfv {s}")).collect();
        sets.extend(self.ckks.iter().map(|s| format!("ckks {s}")));
        sets.extend(self.tfhe.iter().map(|s| format!("tfhe {s}")));
        format!(
            "[{}] with {} BFV, {} CKKS, {} TFHE nodes",
            sets.join(", "),
            count(Engine::Bfv),
            count(Engine::Ckks),
            count(Engine::Tfhe)
        )
    }
}

/// The default of [`PlanOptions::max_ciphertext_bytes`]: 4 GiB.
pub const DEFAULT_MAX_CIPHERTEXT_BYTES: u64 = 4 << 30;
