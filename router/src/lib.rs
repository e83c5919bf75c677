//! triskel: fully homomorphic encryption on hand-written SIMD kernels.
//!
//! This crate is the public face of the project: the kernel layer
//! ([`kernels`]), the engines ([`bfv`], [`ckks`], [`tfhe`]), attestation
//! ([`attest`]) and the router. A caller records encrypted work as a
//! [`Program`] (a DAG of operations on values of a [`Kind`]); the planner
//! ([`plan()`]) picks an engine per operation by capability first and by the
//! [`CostModel`] second, and the smallest secure parameter set of each engine
//! that fits its part; a [`Session`] runs the plan with lazily generated keys
//! and decrypts the outputs for the key holder; [`attest_outputs`] signs each
//! output with the plan and a context. Programs serialize
//! ([`Program::to_bytes`], validated by [`Program::from_bytes`]).
//!
//! A comparison of BFV values runs by the homomorphic BFV -> TFHE transition
//! ([`bridge::run_bfv_to_tfhe`] on [`transition`]), its BFV part on the
//! coefficient encoding. Lookup tables ([`Program::lookup`], [`tfhe::lookup`]) run
//! on u8 values in TFHE and on small signed BFV values through the same
//! transition. Conversions with no homomorphic path ([`Program::to_signed`],
//! [`Program::to_real`]: TFHE -> BFV/CKKS, BFV -> CKKS) are refused unless
//! the caller allows a key-holder round trip ([`PlanOptions`]), which the
//! plan, `explain()` and the attested route then show. A least CKKS scale
//! ([`PlanOptions::ckks_scale_log2`]) picks the sets of scale 2^50, whose
//! outputs keep precision under [`Session::flood_ckks_releases`]. Thresholds on
//! reals ([`Program::threshold_real`]) run CKKS -> TFHE on the coefficient
//! encoding. An argmax of signed BFV values ([`Program::argmax`],
//! [`Program::argmax_within`]) reads every bit of each value through the
//! BFV -> TFHE transition ([`transition::bfv_value_bits`]) and compares
//! them in TFHE.

pub use triskel_attest as attest;
pub use triskel_bfv as bfv;
pub use triskel_ckks as ckks;
pub use triskel_kernels as kernels;
pub use triskel_tfhe as tfhe;

mod argmax;
pub mod bridge;
pub mod calibrate;
mod client;
mod cost;
mod error;
mod exec;
mod measure;
mod party;
mod plan;
mod program;
mod serial;
mod server;
pub mod transition;
pub mod wire;

pub use client::{Client, MAX_CLIENT_STATE_BYTES};
pub use cost::{cache_path, machine, CostModel, Primitive};
pub use error::{Error, Result};
pub use exec::{attest_outputs, output_bytes, route, verify_output, Outputs, PlainValue, Session};
pub use party::{
    Encryptor, Party, PartySession, Round1, BFV_STATISTICAL_SECURITY, MAX_PARTY_STATE_BYTES,
    MIN_CKKS_PRECISION_BITS, THRESHOLD_RELEASES,
};
pub use plan::{
    plan, plan_chosen, plan_with, tfhe_set, BfvEncoding, BfvPart, Engine, Packing, Placement, Plan,
    PlanChoice, PlanOptions, ReleaseMask, ScoreSlot, Step, StepKind, Threshold,
    DEFAULT_MAX_CIPHERTEXT_BYTES, MAX_PARTIES,
};
pub use program::{
    Cmp, Kind, Node, Op, Program, Scalar, Value, MAX_DEGREE, MAX_LEN, MAX_LOOKUP_BOUND, MAX_NODES,
    MAX_SIGNED_BOUND,
};
pub use serial::PROGRAM_FORMAT_VERSION;
pub use server::{EvaluationKeys, Server};
pub use wire::{EncryptedInputs, EncryptedOutput, EncryptedOutputs, Slot};

/// The README's Rust examples run as doctests, so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
