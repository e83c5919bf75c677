//! `triskel explain`: the plans of the demo programs, with predicted times
//! from this machine's cost model.

use triskel::{CostModel, PlanOptions, Session};

use super::programs;
use super::CliResult;

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
    for demo in programs::all()? {
        println!("\n{}: {} nodes", demo.name, demo.program.nodes().len());
        let options = PlanOptions {
            ckks_scale_log2,
            ..Default::default()
        };
        let plan = session.plan_with(&demo.program, options)?;
        print!("{}", plan.explain());
    }
    Ok(())
}
