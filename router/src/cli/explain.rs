//! `triskel explain`: the plans of the demo programs, with predicted times
//! from this machine's cost model.

use triskel::{CostModel, Session};

use super::programs;
use super::CliResult;

pub fn run() -> CliResult {
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
        let plan = session.plan(&demo.program)?;
        print!("{}", plan.explain());
    }
    Ok(())
}
