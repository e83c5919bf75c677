//! `triskel calibrate`: measures the cost model's primitives and caches them.

use std::time::Instant;

use crate::CliResult;

pub fn run() -> CliResult {
    let start = Instant::now();
    let model = triskel::calibrate::calibrate(|set| eprintln!("calibrating {set} ..."))?;
    let path = model.save()?;
    println!(
        "cost model: {} primitives measured on {} (kernel backend {}) in {:.1} s, cached in {}",
        model.costs.len(),
        model.cpu,
        model.backend,
        start.elapsed().as_secs_f64(),
        path.display()
    );
    for (key, ns) in &model.costs {
        println!("  {key:<48} {:>14.3} ms", ns / 1e6);
    }
    Ok(())
}
