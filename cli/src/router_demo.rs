//! The router part of `triskel demo`: the three demo programs through the
//! API, each with its plan, predicted against measured time per step, the
//! check against plaintext, the router's overhead and a verified attestation.

use std::time::Instant;

use triskel::attest::Identity;
use triskel::{attest_outputs, verify_output, Session};

use crate::programs::{self, Demo};
use crate::split::{run_split, size};
use crate::CliResult;

/// Plans and runs `demo`; returns the worst error against plaintext.
fn run_demo(session: &mut Session, identity: &Identity, demo: &Demo) -> CliResult {
    let start = Instant::now();
    let mut plan = session.plan(&demo.program)?;
    let run_start = Instant::now();
    let outputs = session.run(&mut plan, &demo.inputs)?;
    let run_ns = run_start.elapsed().as_nanos() as f64;
    let total_ns = start.elapsed().as_nanos() as f64;
    let steps_ns: f64 = plan.steps().iter().filter_map(|s| s.measured_ns).sum();
    let overhead = plan.planning_ns() + (run_ns - steps_ns).max(0.0);
    print!("{}", plan.explain());
    let error = (demo.check)(&outputs)?;
    println!(
        "  check against plaintext: {} (worst error {error:.2e})",
        if error <= 1e-4 { "correct" } else { "WRONG" }
    );
    println!(
        "  router overhead (planning + dispatch): {:.3} ms = {:.3}% of {:.1} ms",
        overhead / 1e6,
        100.0 * overhead / total_ns,
        total_ns / 1e6
    );
    let context = format!("triskel demo: {}", demo.name);
    let records = attest_outputs(identity, &plan, &outputs, context.as_bytes())?;
    for ((name, value), record) in outputs.values.iter().zip(&records) {
        verify_output(
            identity.public(),
            &plan,
            name,
            value,
            context.as_bytes(),
            record,
        )?;
    }
    println!(
        "  attestation: {} output record(s) (ML-DSA-65 + Falcon-512 + SLH-DSA) bound to the plan, verified",
        records.len()
    );
    if error > 1e-4 {
        return Err(format!("{} decrypted a wrong result", demo.name).into());
    }
    let split = run_split(&demo.program, &demo.inputs, context.as_bytes())?;
    let split_error = (demo.check)(&split.outputs)?;
    println!(
        "  client + server: evaluation keys {}, inputs {}, outputs {} with {} server record(s) \
         binding program, plan, key set, input and output ciphertexts, verified; check: {} \
         (worst error {split_error:.2e})",
        size(split.key_bytes),
        size(split.input_bytes),
        size(split.output_bytes),
        split.records,
        if split_error <= 1e-4 {
            "correct"
        } else {
            "WRONG"
        }
    );
    if split_error > 1e-4 {
        return Err(format!(
            "{} decrypted a wrong result through Client + Server",
            demo.name
        )
        .into());
    }
    Ok(())
}

pub fn run() -> CliResult {
    println!(
        "Router: programs built with triskel::Program, planned and run by triskel::Session, \
         then by a triskel::Client and a triskel::Server that see each other only as bytes"
    );
    let mut session = Session::new();
    let identity = Identity::generate()?;

    let decision = programs::biometric_match()?;
    let (scores, above) = programs::match_plaintext();
    println!(
        "\n(1) {}: {} templates, threshold {} decided within 2^{} (2 bootstraps per score instead of 6)",
        decision.name,
        programs::TEMPLATES,
        programs::THRESHOLD,
        programs::TOLERANCE_BITS
    );
    println!(
        "  planned: BFV coefficient encoding (ONE plaintext product for all scores, no rotation), \
         BFV -> TFHE transition per score (only its coefficient is extracted), `any` on TFHE; \
         only the final bit is decrypted"
    );
    println!(
        "  plaintext: scores {scores:?}, best {} -> {above}",
        scores.iter().max().copied().unwrap_or_default()
    );
    run_demo(&mut session, &identity, &decision)?;
    println!("\n(2) {}", programs::mlp()?.name);
    run_demo(&mut session, &identity, &programs::mlp()?)?;

    println!("\n(3) {}", programs::compare8(200, 13)?.name);
    run_demo(&mut session, &identity, &programs::compare8(200, 13)?)?;
    println!();
    Ok(())
}
