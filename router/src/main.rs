//! The `triskel` program: machine info, benchmarks and the demo.

use clap::{Parser, Subcommand};

mod attest_cli;
mod cli;

#[derive(Parser, Debug)]
#[command(
    name = "triskel",
    version,
    about = "Fully homomorphic encryption on hand-written SIMD kernels"
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// CPU model, SIMD features, compiled and usable kernel backends, the one chosen.
    Info,
    /// Benchmarks: kernels per backend, or end-to-end workloads.
    Bench {
        #[command(subcommand)]
        what: cli::bench::BenchCommand,
    },
    /// The router's plans of the demo programs: engine, parameter set and predicted time per step.
    Explain,
    /// Measures engine primitives on this machine and caches the router's cost model.
    Calibrate,
    /// Runs what triskel can do, checks every result and prints timings.
    Demo,
    /// Post-quantum attestation of results (ML-DSA + Falcon + SLH-DSA).
    Attest {
        #[command(subcommand)]
        what: attest_cli::AttestCommand,
    },
}

fn main() {
    let args = Args::parse();
    let result = match args.command {
        Command::Info => cli::info::run(),
        Command::Bench { what } => cli::bench::run(what),
        Command::Demo => cli::demo::run(),
        Command::Calibrate => cli::calibrate::run(),
        Command::Explain => cli::explain::run(),
        Command::Attest { what } => attest_cli::run(what),
    };
    if let Err(e) = result {
        eprintln!("triskel: error: {e}");
        std::process::exit(1);
    }
}
