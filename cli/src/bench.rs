//! `triskel bench kernels`, `workloads`, `engines`, `split` and `service`.

use std::time::Duration;

use clap::Subcommand;
use serde::Serialize;
use triskel::calibrate::median_ns;
use triskel::kernels::{self, Backend, Modulus, NttPlan};

use crate::{workloads, CliResult};

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Median time of forward/inverse NTT, multiply and multiply-accumulate per backend.
    Kernels {
        /// Transform size (power of two, 1024..131072).
        #[arg(long, default_value_t = 4096)]
        n: usize,
        /// Bit size of the prime modulus (the largest NTT-friendly prime of that size is used).
        #[arg(long, default_value_t = 50)]
        bits: u32,
        /// Only this backend (portable, avx512, avx512ifma, aarch64, sve, neon); default: every
        /// usable one, or the one TRISKEL_KERNELS forces.
        #[arg(long)]
        backend: Option<String>,
        /// Print one JSON object (the format of docs/architecture.md, "Bench output").
        #[arg(long)]
        json: bool,
    },
    /// The same operations on every engine that can do them, through the router.
    Engines {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Print CSV.
        #[arg(long, conflicts_with = "json")]
        csv: bool,
        /// Also the slow TFHE rows (dot products, polynomial, chains: minutes).
        #[arg(long)]
        full: bool,
    },
    /// The client/server split against the one-process Session (one thread, interleaved
    /// rounds), and the speed of its formats.
    Split {
        /// Rounds per program.
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// A load test of `triskel serve` on 127.0.0.1: C clients submitting the
    /// biometric match decision for S seconds, each result verified and
    /// checked; throughput, latency and failed or lost jobs.
    Service {
        /// Concurrent clients, each with one job in flight.
        #[arg(long, default_value_t = 32)]
        clients: usize,
        /// How long the clients submit.
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
        /// The server's worker threads (default: one per core).
        #[arg(long)]
        workers: Option<usize>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// How each workload scales: throughput of K copies side by side
    /// against one, the latency of one run spread over K threads, and the
    /// resident set a copy adds (interleaved rounds, medians).
    Scaling {
        /// Only the workload with this name.
        #[arg(long)]
        only: Option<String>,
        /// The thread counts K to compare with one thread.
        #[arg(long, value_delimiter = ',', default_value = "2")]
        threads: Vec<usize>,
        /// Interleaved rounds (each runs every thread count once).
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// End-to-end workloads with per-stage medians and a correctness check.
    Workloads {
        /// Only the workload with this name.
        #[arg(long)]
        only: Option<String>,
        /// Run K copies of each workload at the same time and report
        /// workloads per second (the copies' inner parallel work shares one
        /// pool of K threads, so K threads are busy in all).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// With `--threads K`: run one workload at a time instead, its
        /// inner parallel work (radix integer blocks, multi-bit rotations,
        /// RNS limbs) spread over the K threads: the latency of one
        /// operation on K threads.
        #[arg(long)]
        spread: bool,
        /// Print one JSON object (the format of docs/architecture.md, "Bench output").
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: BenchCommand) -> CliResult {
    match cmd {
        BenchCommand::Kernels {
            n,
            bits,
            backend,
            json,
        } => bench_kernels(n, bits, backend.as_deref(), json),
        BenchCommand::Workloads {
            only,
            json,
            threads,
            spread,
        } => workloads::bench(only.as_deref(), json, threads, spread),
        BenchCommand::Scaling {
            only,
            threads,
            rounds,
            json,
        } => crate::scaling::bench(only.as_deref(), &threads, rounds, json),
        BenchCommand::Engines { json, csv, full } => crate::bench_engines::run(json, csv, full),
        BenchCommand::Split { rounds, json } => crate::split::bench(rounds, json),
        BenchCommand::Service {
            clients,
            seconds,
            workers,
            json,
        } => crate::bench_service::run(clients, seconds, workers, json),
    }
}

#[derive(Serialize)]
struct KernelReport {
    cpu: String,
    features: Vec<&'static str>,
    n: usize,
    modulus: u64,
    bits: u32,
    results: Vec<KernelResult>,
}

#[derive(Serialize)]
struct KernelResult {
    backend: &'static str,
    op: &'static str,
    median_ns: f64,
    /// Only for the transforms: median / ((n/2) log2 n).
    ns_per_butterfly: Option<f64>,
}

/// A `/proc/self/status` field counted in kB (`VmRSS`, `VmHWM`); Linux only.
pub fn status_kb(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// A deterministic, well-spread vector of residues (benchmark data only).
pub fn sample_residues(len: usize, q: u64, seed: u64) -> Vec<u64> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            // splitmix64
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % q
        })
        .collect()
}

fn bench_kernels(n: usize, bits: u32, only: Option<&str>, json: bool) -> CliResult {
    let q = kernels::ntt_primes(bits, n, 1)?[0];
    // TRISKEL_KERNELS (an error when it names a backend this machine cannot
    // run) stands in for --backend when that is not given.
    let forced = kernels::forced_backend()?;
    let backends = match only.or(forced.map(Backend::name)) {
        Some(name) => {
            let b = Backend::from_name(name)?;
            b.check_usable()?;
            if !b.supports_modulus(q) {
                return Err(format!(
                    "backend {} needs primes below 2^{}; use --bits {} or less",
                    b.name(),
                    b.max_modulus_bits(),
                    b.max_modulus_bits()
                )
                .into());
            }
            vec![b]
        }
        None => kernels::available_backends()
            .into_iter()
            .filter(|b| b.supports_modulus(q))
            .collect(),
    };
    let butterflies = (n / 2 * n.trailing_zeros() as usize) as f64;
    let (samples, sample_time) = (31, Duration::from_millis(3));
    let mut results = Vec::new();
    for backend in backends {
        let m = Modulus::with_backend(q, backend)?;
        let plan = NttPlan::new(n, &m)?;
        let a = sample_residues(n, q, 1);
        let b = sample_residues(n, q, 2);
        let mut data = a.clone();
        let mut out = vec![0u64; n];
        let mut record = |op, median_ns: f64, per_butterfly: bool| {
            results.push(KernelResult {
                backend: backend.name(),
                op,
                median_ns,
                ns_per_butterfly: per_butterfly.then(|| median_ns / butterflies),
            })
        };
        // Repeated transforms keep the data in [0, q), so they stay valid inputs.
        let fwd = median_ns(samples, sample_time, || {
            plan.forward(&mut data).expect("length n")
        });
        record("ntt_forward", fwd, true);
        let inv = median_ns(samples, sample_time, || {
            plan.inverse(&mut data).expect("length n")
        });
        record("ntt_inverse", inv, true);
        let mul = median_ns(samples, sample_time, || {
            kernels::mul(&m, &mut out, &a, &b).expect("equal lengths")
        });
        record("mul", mul, false);
        let mul_acc = median_ns(samples, sample_time, || {
            kernels::mul_acc(&m, &mut out, &a, &b).expect("equal lengths")
        });
        record("mul_acc", mul_acc, false);
    }
    let report = KernelReport {
        cpu: kernels::cpu_model(),
        features: kernels::cpu_features(),
        n,
        modulus: q,
        bits,
        results,
    };
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_kernel_table(&report);
    }
    Ok(())
}

fn print_kernel_table(r: &KernelReport) {
    println!("cpu: {}", r.cpu);
    println!("n = {}, q = {} ({} bits)", r.n, r.modulus, r.bits);
    println!(
        "{:<11} {:<12} {:>12} {:>10} {:>11}",
        "backend", "op", "median ns", "ns/bfly", "vs portable"
    );
    for res in &r.results {
        let portable = r
            .results
            .iter()
            .find(|p| p.backend == "portable" && p.op == res.op)
            .map(|p| p.median_ns);
        let per_bfly = res
            .ns_per_butterfly
            .map_or("-".to_string(), |x| format!("{x:.3}"));
        let ratio = portable.map_or("-".to_string(), |p| format!("{:.2}x", p / res.median_ns));
        println!(
            "{:<11} {:<12} {:>12.1} {:>10} {:>11}",
            res.backend, res.op, res.median_ns, per_bfly, ratio
        );
    }
}
