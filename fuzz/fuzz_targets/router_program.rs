#![no_main]
//! `Program::from_bytes`: an accepted program re-encodes to the same bytes
//! and plans (or is refused) without a panic.

use libfuzzer_sys::fuzz_target;
use triskel::{CostModel, Program};

fuzz_target!(|data: &[u8]| {
    let Ok(program) = Program::from_bytes(data) else {
        return;
    };
    assert_eq!(program.to_bytes(), data, "program encoding is canonical");
    let _ = triskel::plan(&program, &CostModel::builtin());
});
