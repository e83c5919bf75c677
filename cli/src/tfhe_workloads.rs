//! The TFHE workloads: a boolean NAND gate, one 2_2 key switch + bootstrap,
//! and radix integer operations on 2_2 blocks, measured stage by stage and
//! checked against the plaintext computation (wall time, or the process's
//! CPU time with `TRISKEL_BENCH_CLOCK=cpu`). They run on the 132-bit
//! multi-bit sets (grouping 2; the engine's README gives each set's security
//! and failure probability); the classic sets stay named options of
//! `TfheParameters`.

use triskel::calibrate::median;
use triskel::tfhe::{ClientKey, Comparison, Gate, RadixCiphertext, ServerKey, TfheParameters};

use crate::workloads::{now_us, us, StageMedians, WorkloadReport};

type Error = Box<dyn std::error::Error>;

fn report(
    name: &'static str,
    params: &str,
    stages: [Vec<f64>; 4],
    errors: usize,
) -> WorkloadReport {
    let [mut enc, mut comp, mut dec, mut total] = stages;
    WorkloadReport {
        name,
        engine: "tfhe",
        params: params.to_string(),
        median_us: StageMedians {
            partial: None,
            combine: None,
            encode: None,
            encrypt: Some(median(&mut enc)),
            compute: median(&mut comp),
            decrypt: Some(median(&mut dec)),
            total: median(&mut total),
        },
        max_abs_error: errors as f64,
        verified: errors == 0,
        matches_per_second: None,
        workloads_per_second: None,
        baseline: None,
    }
}

fn keys(params: TfheParameters) -> Result<(ClientKey, ServerKey), Error> {
    let ck = ClientKey::generate(&params)?;
    let sk = ck.server_key()?;
    Ok((ck, sk))
}

/// NAND of two encrypted booleans (one key switch + multi-bit bootstrap),
/// every input pair.
pub fn gate_nand() -> Result<WorkloadReport, Error> {
    let params = TfheParameters::boolean_multi_bit();
    let (ck, sk) = keys(params.clone())?;
    let mut stages: [Vec<f64>; 4] = Default::default();
    let mut errors = 0;
    for run in 0..8 {
        let (a, b) = (run & 1 == 1, run & 2 == 2);
        let total = now_us();
        let t = now_us();
        let (ca, cb) = (ck.encrypt_bool(a)?, ck.encrypt_bool(b)?);
        stages[0].push(us(t));
        let t = now_us();
        let out = sk.gate(Gate::Nand, &ca, &cb)?;
        stages[1].push(us(t));
        let t = now_us();
        let got = ck.decrypt_bool(&out)?;
        stages[2].push(us(t));
        stages[3].push(us(total));
        errors += (got != Gate::Nand.eval(a, b)) as usize;
    }
    Ok(report("tfhe.gate_nand", params.name, stages, errors))
}

/// The set of the 2_2 workloads: multi-bit 2_2 (grouping 2, 2^-136).
fn set_2_2() -> TfheParameters {
    TfheParameters::message_2_carry_2_multi_bit()
}

/// One key switch + programmable bootstrap of a multi-bit 2_2 block
/// (x -> x^2 + 1 mod 16).
pub fn pbs_2_2() -> Result<WorkloadReport, Error> {
    let params = set_2_2();
    let (ck, sk) = keys(params.clone())?;
    let lut = sk.lookup_table(|x| (x * x + 1) % 16)?;
    let mut stages: [Vec<f64>; 4] = Default::default();
    let mut errors = 0;
    for run in 0..8u64 {
        let m = run % 4;
        let total = now_us();
        let t = now_us();
        let ct = ck.encrypt(m)?;
        stages[0].push(us(t));
        let t = now_us();
        let out = sk.apply_lookup_table(&ct, &lut)?;
        stages[1].push(us(t));
        let t = now_us();
        let got = ck.decrypt_with_carry(&out)?;
        stages[2].push(us(t));
        stages[3].push(us(total));
        errors += (got != (m * m + 1) % 16) as usize;
    }
    Ok(report("tfhe.pbs_2_2", params.name, stages, errors))
}

type TfheResult<T> = Result<T, triskel::tfhe::Error>;

/// How a workload computes on two integers and reads its result back.
struct IntegerOp<T> {
    name: &'static str,
    bits: u32,
    runs: usize,
    op: fn(&ServerKey, &RadixCiphertext, &RadixCiphertext) -> TfheResult<T>,
    decrypt: fn(&ClientKey, &T) -> TfheResult<u64>,
    expected: fn(u64, u64) -> u64,
}

/// A binary operation on two `bits`-bit integers of multi-bit 2_2 blocks,
/// `runs` times on varied values.
fn integer_op<T>(w: IntegerOp<T>) -> Result<WorkloadReport, Error> {
    let IntegerOp {
        name,
        bits,
        runs,
        op,
        decrypt,
        expected,
    } = w;
    let params = set_2_2();
    let (ck, sk) = keys(params.clone())?;
    let m = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    let mut stages: [Vec<f64>; 4] = Default::default();
    let mut errors = 0;
    for run in 0..runs as u64 {
        let x = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(run + 1) & m;
        let y = 0xc2b2_ae3d_27d4_eb4fu64.wrapping_mul(run + 7) & m;
        let total = now_us();
        let t = now_us();
        let (a, b) = (ck.encrypt_radix(x, bits)?, ck.encrypt_radix(y, bits)?);
        stages[0].push(us(t));
        let t = now_us();
        let out = op(&sk, &a, &b)?;
        stages[1].push(us(t));
        let t = now_us();
        let got = decrypt(&ck, &out)?;
        stages[2].push(us(t));
        stages[3].push(us(total));
        errors += (got != expected(x, y) & m) as usize;
    }
    Ok(report(name, params.name, stages, errors))
}

/// a > b on encrypted u8, the result a block holding 0 or 1.
pub fn uint8_gt() -> Result<WorkloadReport, Error> {
    integer_op(IntegerOp {
        name: "tfhe.uint8_gt",
        bits: 8,
        runs: 5,
        op: |sk, a, b| sk.compare(Comparison::Gt, a, b),
        decrypt: |ck, c| ck.decrypt(c),
        expected: |x, y| (x > y) as u64,
    })
}

fn radix(name: &'static str, bits: u32, runs: usize, mul: bool) -> Result<WorkloadReport, Error> {
    integer_op(IntegerOp {
        name,
        bits,
        runs,
        op: if mul {
            |sk, a, b| sk.mul(a, b)
        } else {
            |sk, a, b| sk.add(a, b)
        },
        decrypt: |ck, c| ck.decrypt_radix(c),
        expected: if mul {
            u64::wrapping_mul
        } else {
            u64::wrapping_add
        },
    })
}

/// a + b on encrypted u8.
pub fn uint8_add() -> Result<WorkloadReport, Error> {
    radix("tfhe.uint8_add", 8, 5, false)
}

/// a + b on encrypted u64.
pub fn uint64_add() -> Result<WorkloadReport, Error> {
    radix("tfhe.uint64_add", 64, 3, false)
}

/// a * b on encrypted u64 (one run: thousands of bootstraps).
pub fn uint64_mul() -> Result<WorkloadReport, Error> {
    radix("tfhe.uint64_mul", 64, 1, true)
}
