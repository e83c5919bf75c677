//! The `triskel` program: machine info, benchmarks and the demo.

use clap::{Parser, Subcommand};

mod attest_cli;
mod bench;
mod bench_engines;
mod bench_service;
mod bfv_workloads;
mod calibrate;
mod ckks_workloads;
mod demo;
mod explain;
mod info;
mod party;
mod programs;
mod ring_workloads;
mod router_demo;
mod scaling;
mod serve;
mod split;
mod tfhe_workloads;
mod threshold_workloads;
mod transition_workloads;
mod workloads;

/// Errors of the command-line program: printed, then exit status 1.
pub type CliResult = Result<(), Box<dyn std::error::Error>>;

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
        what: bench::BenchCommand,
    },
    /// The router's plans of the demo programs: engine, parameter set and predicted time per step.
    Explain {
        /// The least CKKS scale, log2 (50 for the sets that noise-flooded decryptions need).
        #[arg(long, value_name = "BITS")]
        ckks_scale_log2: Option<u32>,
    },
    /// Measures engine primitives on this machine and caches the router's cost model.
    Calibrate,
    /// Runs what triskel can do, checks every result and prints timings.
    Demo {
        /// Instead: start `triskel serve` on 127.0.0.1 over a temporary store, register a
        /// tenant and run the router's programs through it.
        #[arg(long)]
        remote: bool,
    },
    /// The demo's programs as files; a program run in one process.
    Program {
        #[command(subcommand)]
        what: split::ProgramCommand,
    },
    /// The key holder: keys, encryption, verified decryption.
    Client {
        #[command(subcommand)]
        what: split::ClientCommand,
    },
    /// The evaluator: runs programs on ciphertexts with evaluation keys only.
    Server {
        #[command(subcommand)]
        what: split::ServerCommand,
    },
    /// k-of-n threshold keys: a party's key generation, encryption, decryption shares.
    Party {
        #[command(subcommand)]
        what: party::PartyCommand,
    },
    /// Encrypted computation as a network service (HTTP API, tenants, persistent store).
    Serve(serve::ServeArgs),
    /// The key holder against a running service: upload keys, submit, wait, fetch and verify.
    Remote(serve::RemoteArgs),
    /// Post-quantum attestation of results (ML-DSA + Falcon + SLH-DSA).
    Attest {
        #[command(subcommand)]
        what: attest_cli::AttestCommand,
    },
}

/// glibc's malloc returns a freed heap top beyond 128 KiB to the kernel
/// and serves large blocks by mmap, so every polynomial of a few hundred KB
/// that the engines free and allocate again per operation comes back as
/// fresh pages: page faults were 15-20 % of a CKKS multiply at N = 8192.
/// The program keeps freed memory (up to 64 MiB of heap top) instead.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    use std::ffi::c_int;
    // glibc's malloc.h.
    const M_TRIM_THRESHOLD: c_int = -1;
    const M_MMAP_THRESHOLD: c_int = -3;
    extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }
    // SAFETY: mallopt only sets allocator tunables, is called before any
    // other thread exists, and 32 MiB is glibc's largest mmap threshold on
    // 64-bit targets (a refused value returns 0 and changes nothing).
    unsafe {
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}

fn main() {
    keep_freed_memory();
    let args = Args::parse();
    let result = match args.command {
        Command::Info => info::run(),
        Command::Bench { what } => bench::run(what),
        Command::Demo { remote: false } => demo::run(),
        Command::Demo { remote: true } => serve::demo_remote(),
        Command::Calibrate => calibrate::run(),
        Command::Explain { ckks_scale_log2 } => explain::run(ckks_scale_log2),
        Command::Attest { what } => attest_cli::run(what),
        Command::Program { what } => split::program(what),
        Command::Client { what } => split::client(what),
        Command::Server { what } => split::server(what),
        Command::Party { what } => party::run(what),
        Command::Serve(args) => serve::serve(args),
        Command::Remote(args) => serve::remote(args),
    };
    if let Err(e) = result {
        eprintln!("triskel: error: {e}");
        std::process::exit(1);
    }
}
