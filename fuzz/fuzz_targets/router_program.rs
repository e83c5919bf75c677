#![no_main]
//! `Program::from_bytes`: an accepted program re-encodes to the same bytes
//! and plans (or is refused) without a panic, with and without key-holder
//! round trips allowed, and with a CKKS scale of 2^50 asked.

use libfuzzer_sys::fuzz_target;
use triskel::{CostModel, PlanOptions, Program};

fuzz_target!(|data: &[u8]| {
    let Ok(program) = Program::from_bytes(data) else {
        return;
    };
    assert_eq!(program.to_bytes(), data, "program encoding is canonical");
    let costs = CostModel::builtin();
    let _ = triskel::plan(&program, &costs);
    let allow = PlanOptions {
        allow_round_trips: true,
        ckks_scale_log2: Some(50),
        max_ciphertext_bytes: Some(1 << 20),
        threshold: None,
    };
    let _ = triskel::plan_with(&program, &costs, allow);
    // Threshold keys: planned, or refused by name.
    let _ = triskel::plan_with(&program, &costs, allow.threshold(2, 3));
});
