//! `triskel bench engines`: the same operations on every engine that can do
//! them, through the router (one program per row), in one table.
//!
//! Each row: latency of the operation on one value (a vector of length 1;
//! a dot product of k values counts as one value), throughput with the
//! engine's batching (values per second on full vectors: 2048 BFV slots,
//! 4096 CKKS slots; TFHE has no batching, so 1 / latency), ciphertext sizes
//! fresh and after the operation, and the key generation time and size of
//! the evaluation keys the program needed.

use std::collections::BTreeMap;

use serde::Serialize;
use triskel::{CostModel, Engine, Kind, PlainValue, Program, Scalar, Session, StepKind, Value};

use crate::CliResult;

type Error = Box<dyn std::error::Error>;

#[derive(Serialize)]
struct Row {
    engine: &'static str,
    op: String,
    params: String,
    latency_us: f64,
    values_per_second: f64,
    ciphertext_bytes_fresh: usize,
    ciphertext_bytes_after: usize,
    keygen_ms: f64,
    key_bytes: usize,
}

/// The kind of `len` values for `engine` (`bits` for TFHE).
fn kind(engine: Engine, len: usize, bits: u32) -> Kind {
    match engine {
        Engine::Bfv => Kind::Signed { len, bound: 3 },
        Engine::Ckks => Kind::Real { len },
        Engine::Tfhe => Kind::Uint { len, bits },
    }
}

fn scalar(engine: Engine, v: i64) -> Scalar {
    match engine {
        Engine::Ckks => Scalar::Real(v as f64),
        _ => Scalar::Int(v),
    }
}

/// Builds the program of `op` on two inputs of `len` values.
fn program(engine: Engine, op: &str, len: usize, bits: u32) -> Result<Program, Error> {
    let mut p = Program::new();
    let x = p.input("x", kind(engine, len, bits))?;
    let y = p.input("y", kind(engine, len, bits))?;
    let out: Value = match op {
        "add" | "add64" => p.add(x, y)?,
        "mul" => p.mul(x, y)?,
        "cmp8" => p.compare(x, triskel::Cmp::Gt, y)?,
        "poly" => p.polynomial(x, &[7, 5, 2, 3].map(|c| scalar(engine, c)))?,
        op if op.starts_with("dot") => p.dot(x, y)?,
        op if op.starts_with("chain") => {
            let depth: usize = op[5..].parse()?;
            (0..depth).try_fold(x, |v, _| p.mul(v, x))?
        }
        op => return Err(format!("unknown operation {op}").into()),
    };
    p.output("out", out)?;
    Ok(p)
}

fn inputs(engine: Engine, len: usize) -> BTreeMap<String, PlainValue> {
    let value = |seed: usize| match engine {
        Engine::Ckks => PlainValue::Reals(
            (0..len)
                .map(|i| ((i + seed) % 7) as f64 / 7.0 - 0.5)
                .collect(),
        ),
        _ => PlainValue::Ints((0..len).map(|i| ((i + seed) % 4) as i128).collect()),
    };
    BTreeMap::from([("x".to_string(), value(1)), ("y".to_string(), value(2))])
}

/// Runs `op` on `engine`: (op step ns, fresh bytes, after bytes, keygen ns, key bytes, set).
fn measure(
    engine: Engine,
    op: &str,
    len: usize,
    bits: u32,
) -> Result<(f64, usize, usize, f64, usize, String), Error> {
    // TFHE rows: the planner would move u8 additions to BFV coefficients;
    // a table without BFV entries keeps them on TFHE.
    let mut costs = CostModel::load().0;
    if engine == Engine::Tfhe {
        costs.costs.retain(|k, _| !k.starts_with("bfv/"));
    }
    let mut session = Session::with_costs(costs);
    session.record_sizes(true);
    let p = program(engine, op, len, bits)?;
    let mut plan = session.plan(&p)?;
    session.run(&mut plan, &inputs(engine, len))?;
    let mut r = (0.0, 0, 0, 0.0, 0, String::new());
    for s in plan.steps() {
        let (ns, bytes) = (s.measured_ns.unwrap_or(0.0), s.bytes.unwrap_or(0));
        match s.kind {
            StepKind::Keygen(..) => (r.3, r.4) = (r.3 + ns, r.4 + bytes),
            StepKind::Encrypt(_) => r.1 = bytes,
            StepKind::Op(_) => (r.0, r.2, r.5) = (r.0 + ns, bytes, s.params.clone()),
            _ => {}
        }
    }
    if plan
        .steps()
        .iter()
        .any(|s| matches!(s.kind, StepKind::Op(_)) && s.engine != engine)
    {
        return Err(format!("{op} did not run on {}", engine.name()).into());
    }
    Ok(r)
}

pub fn run(json: bool, csv: bool, full: bool) -> CliResult {
    let mut ops: Vec<(Engine, String, u32)> = Vec::new();
    let mut common = vec!["add".to_string(), "mul".to_string(), "poly".to_string()];
    common.extend([4, 8, 16, 32].map(|k| format!("dot{k}")));
    common.extend((1..=5).map(|d| format!("chain{d}")));
    for engine in [Engine::Bfv, Engine::Ckks] {
        ops.extend(common.iter().map(|o| (engine, o.clone(), 8)));
    }
    // TFHE operations take seconds each: the default run keeps the quick ones.
    let tfhe_ops: Vec<String> = if full {
        common.clone()
    } else {
        vec!["add".into(), "mul".into()]
    };
    ops.extend(tfhe_ops.into_iter().map(|o| (Engine::Tfhe, o, 8)));
    ops.push((Engine::Tfhe, "cmp8".into(), 8));
    ops.push((Engine::Tfhe, "add64".into(), 64));
    let batch = |e: Engine| match e {
        Engine::Bfv => 2048,
        Engine::Ckks => 4096,
        Engine::Tfhe => 1,
    };
    let mut rows = Vec::new();
    for (engine, op, bits) in ops {
        let reduction = op.starts_with("dot");
        let len = if reduction { op[3..].parse()? } else { 1 };
        let (ns, fresh, after, keygen, key_bytes, params) = measure(engine, &op, len, bits)?;
        let values_per_second = if reduction || batch(engine) == 1 {
            1e9 / ns
        } else {
            batch(engine) as f64 * 1e9 / measure(engine, &op, batch(engine), bits)?.0
        };
        if !json && !csv {
            eprintln!("{:<5} {op:<7} done", engine.name());
        }
        rows.push(Row {
            engine: engine.name(),
            op,
            params,
            latency_us: ns / 1e3,
            values_per_second,
            ciphertext_bytes_fresh: fresh,
            ciphertext_bytes_after: after,
            keygen_ms: keygen / 1e6,
            key_bytes,
        });
    }
    if json {
        let report = serde_json::json!({ "cpu": triskel::kernels::cpu_model(), "rows": rows });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else if csv {
        println!("engine,op,params,latency_us,values_per_second,ciphertext_bytes_fresh,ciphertext_bytes_after,keygen_ms,key_bytes");
        for r in &rows {
            println!(
                "{},{},{},{:.3},{:.1},{},{},{:.3},{}",
                r.engine,
                r.op,
                r.params,
                r.latency_us,
                r.values_per_second,
                r.ciphertext_bytes_fresh,
                r.ciphertext_bytes_after,
                r.keygen_ms,
                r.key_bytes
            );
        }
    } else {
        println!("engines side by side on {}", triskel::kernels::cpu_model());
        println!(
            "{:<5} {:<7} {:<32} {:>13} {:>13} {:>10} {:>10} {:>10} {:>12}",
            "eng",
            "op",
            "parameter set",
            "latency us",
            "values/s",
            "ct fresh",
            "ct after",
            "keygen ms",
            "key bytes"
        );
        for r in &rows {
            println!(
                "{:<5} {:<7} {:<32} {:>13.1} {:>13.1} {:>10} {:>10} {:>10.1} {:>12}",
                r.engine,
                r.op,
                r.params,
                r.latency_us,
                r.values_per_second,
                r.ciphertext_bytes_fresh,
                r.ciphertext_bytes_after,
                r.keygen_ms,
                r.key_bytes
            );
        }
    }
    Ok(())
}
