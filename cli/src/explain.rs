//! `triskel explain`: the plans of the demo programs, with predicted times
//! from this machine's cost model.

use triskel::{CostModel, PlanOptions, Session};

use crate::programs;
use crate::split::{run_split, size};
use crate::CliResult;

/// `ckks_scale_log2`: [`PlanOptions::ckks_scale_log2`].
pub fn run(ckks_scale_log2: Option<u32>) -> CliResult {
    let (costs, cached) = CostModel::load();
    println!(
        "cost model: {} ({} on {})",
        if cached {
            "calibrated on this machine"
        } else {
            "built-in table (run `triskel calibrate`)"
        },
        costs.backend,
        costs.cpu
    );
    let session = Session::with_costs(costs);
    let options = PlanOptions {
        ckks_scale_log2,
        ..Default::default()
    };
    // Every program is planned before anything is printed, so that a refused option
    // prints only the refusal.
    let mut plans = Vec::new();
    for demo in programs::all()? {
        let plan = session.plan_with(&demo.program, options)?;
        plans.push((demo, plan));
    }
    for (demo, plan) in plans {
        println!("\n{}: {} nodes", demo.name, demo.program.nodes().len());
        print!("{}", plan.explain());
        // The sizes of a run split between a client and a server.
        if ckks_scale_log2.is_none() {
            let split = run_split(&demo.program, &demo.inputs, b"triskel explain")?;
            println!(
                "  client -> server: evaluation keys {} ({} B), inputs {} ({} B); server -> client: outputs {} ({} B, {} attestation record(s))",
                size(split.key_bytes),
                split.key_bytes,
                size(split.input_bytes),
                split.input_bytes,
                size(split.output_bytes),
                split.output_bytes,
                split.records
            );
        }
    }
    Ok(())
}
