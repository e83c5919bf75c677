#![no_main]
//! `CostModel::from_json` (the `triskel calibrate` cache file): an accepted
//! table plans every seed program (or refuses it) without a panic, however
//! extreme its costs, and `explain()` prints the plan.

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use triskel::{CostModel, PlanOptions, Program};

fn programs() -> &'static [Program] {
    static PROGRAMS: OnceLock<Vec<Program>> = OnceLock::new();
    PROGRAMS.get_or_init(|| triskel_fuzz::router_programs().expect("the seed programs are valid"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(costs) = CostModel::from_json(text) else {
        return;
    };
    for program in programs() {
        for allow_round_trips in [false, true] {
            let options = PlanOptions {
                allow_round_trips,
                ckks_scale_log2: allow_round_trips.then_some(50),
                ..Default::default()
            };
            if let Ok(plan) = triskel::plan_with(program, &costs, options) {
                let _ = plan.explain();
            }
        }
    }
});
