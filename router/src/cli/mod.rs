//! Subcommands of the `triskel` program.

pub mod bench;
pub mod bfv_workloads;
pub mod ckks_workloads;
pub mod demo;
pub mod info;
pub mod ring_workloads;
pub mod tfhe_workloads;
pub mod workloads;

/// Errors of the command-line program: printed, then exit status 1.
pub type CliResult = Result<(), Box<dyn std::error::Error>>;
