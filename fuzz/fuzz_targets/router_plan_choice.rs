#![no_main]
//! `PlanChoice::from_bytes`: an accepted choice re-encodes to exactly its
//! bytes, and checking it against the fixture programs (`plan_chosen`)
//! returns a plan or an error without a panic.

use libfuzzer_sys::fuzz_target;
use triskel::PlanChoice;

fuzz_target!(|data: &[u8]| {
    let Ok(choice) = PlanChoice::from_bytes(data, 1 << 16) else {
        return;
    };
    assert_eq!(choice.to_bytes(), data, "plan choice encoding is canonical");
    for case in &triskel_fuzz::split().cases {
        let _ = triskel::plan_chosen(&case.program, &choice);
    }
});
