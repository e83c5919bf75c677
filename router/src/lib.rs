//! triskel: fully homomorphic encryption on hand-written SIMD kernels.
//!
//! This crate is the public face of the project. Today it offers the kernel
//! layer ([`kernels`]: NTT and modular vector arithmetic with run-time backend
//! dispatch) and the measurement helpers behind `triskel bench`; the engines
//! (BFV, CKKS, TFHE), the router that picks one per operation and attestation
//! join it as they land.

pub use triskel_kernels as kernels;

pub mod measure;
