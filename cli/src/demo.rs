//! `triskel demo`: runs what triskel can do and checks every result.

use std::time::{Duration, Instant};

use triskel::bfv::{BfvContext, BfvParameters, Plaintext, SecretKey};
use triskel::calibrate::median_ns;
use triskel::kernels::{self, Backend, Modulus, NttPlan};

use crate::bench::sample_residues;
use crate::bfv_workloads;
use crate::ckks_workloads;
use crate::workloads::print_workload;
use crate::CliResult;

pub fn run() -> CliResult {
    println!("triskel demo on {}", kernels::cpu_model());
    println!(
        "usable kernel backends: {}",
        names(&kernels::available_backends())
    );
    println!();
    crate::router_demo::run()?;
    for bits in [50, 60] {
        negacyclic_product(4096, bits)?;
    }
    bfv_demo()?;
    tfhe_demo()
}

/// The TFHE engine: every boolean gate on every input, and an 8-bit
/// comparison of encrypted integers (2_2 blocks), each checked.
fn tfhe_demo() -> CliResult {
    use triskel::tfhe::{ClientKey, Comparison, Gate, TfheParameters};
    println!();
    let params = TfheParameters::boolean();
    let analysis = params.noise();
    println!(
        "TFHE boolean gates on {} (p_fail 2^{:.0} per gate), one key switch + bootstrap each:",
        params.name, analysis.log2_failure
    );
    let t = Instant::now();
    let ck = ClientKey::generate(&params)?;
    let sk = ck.server_key()?;
    println!(
        "  keys: {:.2} s; server key {:.1} MB serialized (seed-compressed), {:.1} MB in memory",
        t.elapsed().as_secs_f64(),
        sk.compressed_size() as f64 / 1e6,
        sk.expanded_size() as f64 / 1e6
    );
    for gate in [Gate::Nand, Gate::And, Gate::Or, Gate::Xor] {
        let mut line = format!("  {:<5}", format!("{gate:?}"));
        let t = Instant::now();
        for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
            let out = sk.gate(gate, &ck.encrypt_bool(a)?, &ck.encrypt_bool(b)?)?;
            let got = ck.decrypt_bool(&out)?;
            if got != gate.eval(a, b) {
                return Err(format!("{gate:?}({a}, {b}) decrypted {got}").into());
            }
            line += &format!(" {}{}->{}", a as u8, b as u8, got as u8);
        }
        println!(
            "{line}  ({:.1} ms per gate, all correct)",
            ms(t.elapsed()) / 4.0
        );
    }
    let params = triskel::tfhe_set();
    println!(
        "TFHE 8-bit comparison on {} (4 blocks of 2 bits, p_fail 2^{:.0} per bootstrap):",
        params.name,
        params.noise().log2_failure
    );
    let ck = ClientKey::generate(&params)?;
    let sk = ck.server_key()?;
    for (x, y) in [(200u8, 13u8), (7, 7), (31, 250)] {
        let t = Instant::now();
        let gt = sk.compare(Comparison::Gt, &ck.encrypt_u8(x)?, &ck.encrypt_u8(y)?)?;
        let got = ck.decrypt(&gt)? == 1;
        println!(
            "  {x:>3} > {y:>3}: {got:<5}  ({:.0} ms, correct: {})",
            ms(t.elapsed()),
            if got == (x > y) { "yes" } else { "NO" }
        );
        if got != (x > y) {
            return Err("the encrypted comparison decrypted wrong".into());
        }
    }
    Ok(())
}

/// The BFV engine: the biometric match on three parameter sets, multiply +
/// relinearize, and what noise costs.
fn bfv_demo() -> CliResult {
    use triskel::bfv::biometric::{self, MatchPrivacy};
    println!("BFV encrypted biometric match: 128 int8 features per embedding, n/128 templates per");
    println!(
        "ciphertext, multiply-plain + one hoisted sum of rotations 1..3 + 5 rotate-and-add + score"
    );
    println!(
        "mask + re-randomization (and 40-bit noise flooding when private); every slot checked"
    );
    println!("against the plaintext");
    for (params, privacy) in [
        (biometric::match_parameters()?, MatchPrivacy::Masked),
        (
            biometric::private_match_parameters()?,
            MatchPrivacy::flooded(),
        ),
        (
            biometric::match_parameters_for(BfvParameters::n16384())?,
            MatchPrivacy::Masked,
        ),
    ] {
        let (report, templates) = bfv_workloads::biometric_match(params, privacy)?;
        print!("  {templates:>4} templates  ");
        print_workload(&report);
        if !report.verified {
            return Err("the biometric match decrypted wrong scores".into());
        }
    }
    println!();
    println!("BFV multiply + relinearize (public-key encryption, all n slots):");
    let report = bfv_workloads::mul_relin(BfvParameters::n8192())?;
    print!("  ");
    print_workload(&report);
    if !report.verified {
        return Err("multiply + relinearize decrypted a wrong product".into());
    }
    println!();
    noise_demo()?;
    println!();
    ckks_demo()
}

/// The CKKS engine: encoder precision, the activation approximations, and
/// every CKKS workload with its error against float64.
fn ckks_demo() -> CliResult {
    use triskel::ckks::{ChebyshevPolynomial, CkksContext, CkksParameters, Complex, Plaintext};
    println!("CKKS encoder round trip (all n/2 complex slots, scale 2^40):");
    for params in [CkksParameters::n8192(), CkksParameters::n16384()] {
        let ctx = CkksContext::new(params)?;
        let v: Vec<Complex> = (0..ctx.slots())
            .map(|i| Complex::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()))
            .collect();
        let got = Plaintext::encode(&ctx, &v, 0, ctx.default_scale(), 2.0)?.decode()?;
        let err = got
            .iter()
            .zip(&v)
            .map(|(a, b)| (*a - *b).abs())
            .fold(0.0, f64::max);
        println!(
            "  n = {:>5}: max error {err:.2e} ({:.1} bits)",
            ctx.n(),
            -err.log2()
        );
    }
    println!("CKKS activations (Chebyshev interpolants; error against the function, 10^4 points):");
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    for (name, p, f) in [
        (
            "sigmoid [-8, 8] deg 7 ",
            ChebyshevPolynomial::sigmoid(-8.0, 8.0, 7)?,
            &sigmoid as &dyn Fn(f64) -> f64,
        ),
        (
            "sigmoid [-8, 8] deg 15",
            ChebyshevPolynomial::sigmoid(-8.0, 8.0, 15)?,
            &sigmoid,
        ),
        (
            "tanh    [-4, 4] deg 15",
            ChebyshevPolynomial::tanh(-4.0, 4.0, 15)?,
            &f64::tanh,
        ),
        (
            "relu    [-1, 1] deg 31",
            ChebyshevPolynomial::relu(-1.0, 1.0, 31)?,
            &|x: f64| x.max(0.0),
        ),
    ] {
        println!(
            "  {name}: max error {:.2e}, depth {}",
            p.max_error(f, 10_000),
            p.depth()
        );
    }
    println!(
        "CKKS workloads (error against float64; verified when <= {:.0e}):",
        ckks_workloads::ERROR_BOUND
    );
    for w in crate::workloads::all()
        .iter()
        .filter(|w| w.name.starts_with("ckks."))
    {
        let report = (w.run)()?;
        print!("  ");
        print_workload(&report);
        if !report.verified {
            return Err(format!("{} decrypted a result beyond the error bound", w.name).into());
        }
    }
    flooding_demo()
}

/// One decryption with noise flooding (for shared decryptions, IND-CPA-D):
/// the bound B from a trial run under a separate key pair, then the flooded
/// decryption's error, at scale 2^50 where flooding leaves precision.
fn flooding_demo() -> CliResult {
    use triskel::ckks::{CkksContext, CkksParameters, Complex, Flooding, Plaintext, SecretKey};
    let ctx = CkksContext::new(CkksParameters::for_depth(8192, 1, 50, 10)?)?;
    let v: Vec<f64> = (0..ctx.slots()).map(|i| (i as f64 * 0.37).sin()).collect();
    let pt = Plaintext::from_real(&ctx, &v)?;
    let trial = SecretKey::generate(&ctx)?;
    let expected: Vec<Complex> = v.iter().map(|&x| Complex::from(x)).collect();
    let b = trial.noise_bound_log2(&trial.public_key()?.encrypt(&pt)?, &expected)? + 1.0;
    let sk = SecretKey::generate(&ctx)?;
    let ct = sk.public_key()?.encrypt(&pt)?;
    let flooding = Flooding::new(b);
    let sigma = flooding.sigma(ctx.n())?;
    let max_err = |got: Vec<f64>| {
        got.iter()
            .zip(&v)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    };
    let plain = max_err(sk.decrypt_real(&ct)?);
    let flooded = max_err(sk.decrypt_flooded_real(&ct, &flooding)?);
    // Each slot's real part carries a Gaussian of deviation sqrt(N / 2) sigma.
    let sd = (ctx.n() as f64 / 2.0).sqrt() * sigma / ct.scale();
    println!(
        "CKKS flooded decryption (N = 8192, scale 2^50, s = 30, one decryption; B from a trial \
         run under another key):"
    );
    println!(
        "  B = 2^{b:.1}, sigma = 2^{:.1}: max error {flooded:.2e} (plain decryption {plain:.2e}, \
         slot deviation {sd:.2e})",
        sigma.log2()
    );
    if flooded > 7.0 * sd {
        return Err("the flooded decryption is beyond 7 deviations".into());
    }
    Ok(())
}

/// Noise budget (measured with the secret key, and the ciphertext's own
/// estimate) along a chain of squarings until the engine refuses.
fn noise_demo() -> CliResult {
    let ctx = BfvContext::new(BfvParameters::n8192())?;
    let sk = SecretKey::generate(&ctx)?;
    let rk = sk.relin_key()?;
    let t = ctx.plain_modulus();
    let mut ct = sk
        .public_key()?
        .encrypt(&Plaintext::from_slots(&ctx, &[3, 5, 7])?)?;
    let mut expected = [3u64, 5, 7];
    println!(
        "BFV noise budget on {} (log2 QP = {:.1}), squaring 3, 5, 7:",
        ctx.params().name(),
        ctx.log2_qp()
    );
    for depth in 0.. {
        let got = sk.decrypt(&ct)?.to_slots()?;
        println!(
            "  depth {depth}: measured {:5.1} bits, estimated {:5.1} bits, slots {:?} (correct: {})",
            sk.noise_budget(&ct)?,
            ct.estimated_noise_budget(),
            &got[..3],
            if got[..3] == expected[..] { "yes" } else { "NO" }
        );
        if got[..3] != expected[..] {
            return Err("a squaring decrypted wrong".into());
        }
        match ct.square().and_then(|c| c.relinearize(&rk)) {
            Ok(next) => ct = next,
            Err(e) => {
                println!("  depth {}: refused: {e}", depth + 1);
                break;
            }
        }
        expected.iter_mut().for_each(|v| *v = *v * *v % t);
    }
    Ok(())
}

fn names(backends: &[Backend]) -> String {
    backends
        .iter()
        .map(|b| b.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Multiplies two random polynomials of Z_q\[X\]/(X^n + 1) through the NTT on
/// every backend, checks each product against the schoolbook product and
/// reports the timings.
fn negacyclic_product(n: usize, bits: u32) -> CliResult {
    let q = kernels::ntt_primes(bits, n, 1)?[0];
    let a = sample_residues(n, q, 11);
    let b = sample_residues(n, q, 12);
    let reference = Modulus::with_backend(q, Backend::Portable)?;

    let start = Instant::now();
    let expected = schoolbook(&reference, &a, &b);
    let schoolbook_time = start.elapsed();
    println!(
        "negacyclic product in Z_q[X]/(X^{n} + 1), q = {q} ({bits} bits); schoolbook: {:.1} ms",
        ms(schoolbook_time)
    );
    for backend in kernels::available_backends() {
        if !backend.supports_modulus(q) {
            println!(
                "  {:<11} skipped: primes below 2^{} only",
                backend.name(),
                backend.max_modulus_bits()
            );
            continue;
        }
        let m = Modulus::with_backend(q, backend)?;
        let plan = NttPlan::new(n, &m)?;
        let product = |out: &mut Vec<u64>| -> kernels::Result<()> {
            let mut fb = b.clone();
            out.copy_from_slice(&a);
            plan.forward(out)?;
            plan.forward(&mut fb)?;
            kernels::mul_assign(&m, out, &fb)?;
            plan.inverse(out)
        };
        let mut c = vec![0u64; n];
        product(&mut c)?;
        let correct = c == expected;
        let ns = median_ns(21, Duration::from_millis(2), || {
            product(&mut c).expect("lengths are n")
        });
        println!(
            "  {:<11} NTT product {:>8.1} us  ({:.0}x faster than schoolbook)  equals schoolbook: {}",
            backend.name(),
            ns / 1e3,
            schoolbook_time.as_nanos() as f64 / ns,
            if correct { "yes" } else { "NO" }
        );
        if !correct {
            return Err(format!("backend {} computed a wrong product", backend.name()).into());
        }
    }
    println!();
    Ok(())
}

fn schoolbook(m: &Modulus, a: &[u64], b: &[u64]) -> Vec<u64> {
    let n = a.len();
    let mut c = vec![0u64; n];
    for (i, &ai) in a.iter().enumerate() {
        for (j, &bj) in b.iter().enumerate() {
            let p = m.mul_mod(ai, bj);
            let k = (i + j) % n;
            c[k] = if i + j < n {
                m.add_mod(c[k], p)
            } else {
                m.sub_mod(c[k], p)
            };
        }
    }
    c
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
