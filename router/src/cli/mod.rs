//! Subcommands of the `triskel` program.

pub mod bench;
pub mod bench_engines;
pub mod bfv_workloads;
pub mod calibrate;
pub mod ckks_workloads;
pub mod demo;
pub mod explain;
pub mod info;
pub mod programs;
pub mod ring_workloads;
pub mod router_demo;
pub mod split;
pub mod tfhe_workloads;
pub mod threshold_workloads;
pub mod transition_workloads;
pub mod workloads;

/// Errors of the command-line program: printed, then exit status 1.
pub type CliResult = Result<(), Box<dyn std::error::Error>>;
