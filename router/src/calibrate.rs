//! `triskel calibrate`: measures the primitives of every named set the
//! planner can pick (and the NTT of the kernel backend in use) on this
//! machine, for the cost model.
//!
//! # Examples
//!
//! Calibrating takes about ten seconds ([`calibrate`], `triskel
//! calibrate`); the statistic it keeps is cheap to show:
//!
//! ```
//! use triskel::calibrate::median;
//!
//! assert_eq!(median(&mut [5.0, 1.0, 3.0]), 3.0);
//! assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
//! ```

use std::collections::BTreeMap;
use std::time::Instant;

use triskel_bfv as bfv;
use triskel_ckks as ckks;
use triskel_tfhe as tfhe;

use crate::cost::{machine, CostModel, Primitive};
use crate::error::{Error, Result};
use crate::plan::tfhe_set;
use crate::plan::Engine;
use crate::transition::{TransitionKey, MAX_TRANSITION_DIMENSION};

/// The statistic of the cost table, also what `triskel bench` reports: the
/// median of repeated timings.
pub use crate::measure::{median, median_ns};

/// Median wall time of `f` in ns: one run, then four more when it is below
/// 50 ms (slow primitives are timed once: the model needs their order of
/// magnitude, not their third digit).
fn time<T>(what: &str, mut f: impl FnMut() -> Result<T>) -> Result<f64> {
    let mut once = || -> Result<f64> {
        let t = Instant::now();
        std::hint::black_box(f().map_err(|e| Error::Cache(format!("calibrating {what}: {e}")))?);
        Ok(t.elapsed().as_nanos().max(1) as f64)
    };
    let first = once()?;
    if first > 50e6 {
        return Ok(first);
    }
    let mut v = vec![first];
    for _ in 0..4 {
        v.push(once()?);
    }
    Ok(median(&mut v))
}

/// The table being measured: `engine/set/primitive` -> nanoseconds.
#[derive(Default)]
struct Table {
    costs: BTreeMap<String, f64>,
}

impl Table {
    fn put(&mut self, engine: Engine, set: &str, primitive: Primitive, ns: f64) {
        self.costs
            .insert(format!("{}/{set}/{}", engine.name(), primitive.name()), ns);
    }

    /// Times `f` ([`time`]) as `primitive` of `set`.
    fn measure<T>(
        &mut self,
        engine: Engine,
        set: &str,
        primitive: Primitive,
        f: impl FnMut() -> Result<T>,
    ) -> Result<()> {
        let ns = time(primitive.name(), f)?;
        self.put(engine, set, primitive, ns);
        Ok(())
    }
}

/// Measures the cost table; `progress` hears each set's name as it starts.
pub fn calibrate(mut progress: impl FnMut(&str)) -> Result<CostModel> {
    let mut table = Table::default();
    progress("kernels");
    let (cpu, backend) = machine();
    for n in [4096usize, 16384] {
        let q = triskel_kernels::ntt_primes(50, n, 1)?[0];
        let m = triskel_kernels::Modulus::new(q)?;
        let plan = triskel_kernels::NttPlan::new(n, &m)?;
        let mut a: Vec<u64> = (0..n as u64).map(|i| i * 7919 % q).collect();
        let ns = time("ntt_forward", || Ok(plan.forward(&mut a)?))?;
        table
            .costs
            .insert(format!("kernels/{backend}/ntt_forward_{n}"), ns);
    }
    for base in bfv::BfvParameters::named() {
        progress(base.name());
        bfv_costs(&mut table, base)?;
    }
    for base in crate::plan::ckks_sets() {
        progress(base.name());
        ckks_costs(&mut table, base)?;
    }
    let params = tfhe_set();
    progress(params.name);
    tfhe_costs(&mut table, &params)?;
    Ok(CostModel::from_costs(&cpu, &backend, table.costs))
}

/// The primitives of one BFV set.
fn bfv_costs(table: &mut Table, base: bfv::BfvParameters) -> Result<()> {
    let set = base.name().to_string();
    let ctx = bfv::BfvContext::new(base)?;
    let t = Instant::now();
    let sk = bfv::SecretKey::generate(&ctx)?;
    let (pk, rk) = (sk.public_key()?, sk.relin_key()?);
    table.put(
        Engine::Bfv,
        &set,
        Primitive::Keygen,
        t.elapsed().as_nanos() as f64,
    );
    table.measure(Engine::Bfv, &set, Primitive::GaloisKey, || {
        Ok(sk.galois_keys(&[1], false)?)
    })?;
    let gk = sk.galois_keys(&[1], false)?;
    let values: Vec<u64> = (0..ctx.n() as u64).map(|i| i % 1000).collect();
    let pt = bfv::Plaintext::from_slots(&ctx, &values)?;
    let scalar = bfv::Plaintext::from_coeffs(&ctx, &[3])?;
    let x = pk.encrypt(&pt)?;
    table.measure(Engine::Bfv, &set, Primitive::Encode, || {
        Ok(bfv::Plaintext::from_slots(&ctx, &values)?)
    })?;
    table.measure(Engine::Bfv, &set, Primitive::Encrypt, || {
        Ok(sk.encrypt(&pt)?)
    })?;
    table.measure(Engine::Bfv, &set, Primitive::Add, || Ok(x.add(&x)?))?;
    table.measure(Engine::Bfv, &set, Primitive::MulPlain, || {
        Ok(x.mul_plain(&scalar)?)
    })?;
    table.measure(Engine::Bfv, &set, Primitive::MulRelin, || {
        Ok(x.mul(&x)?.relinearize(&rk)?)
    })?;
    table.measure(Engine::Bfv, &set, Primitive::Rotate, || {
        Ok(x.rotate_rows(1, &gk)?)
    })?;
    table.measure(
        Engine::Bfv,
        &set,
        Primitive::Decrypt,
        || Ok(sk.decrypt(&x)?),
    )?;
    Ok(())
}

/// The primitives of one CKKS set.
fn ckks_costs(table: &mut Table, base: ckks::CkksParameters) -> Result<()> {
    let set = base.name().to_string();
    let ctx = ckks::CkksContext::new(base)?;
    let t = Instant::now();
    let sk = ckks::SecretKey::generate(&ctx)?;
    let (pk, rk) = (sk.public_key()?, sk.relin_key()?);
    table.put(
        Engine::Ckks,
        &set,
        Primitive::Keygen,
        t.elapsed().as_nanos() as f64,
    );
    table.measure(Engine::Ckks, &set, Primitive::GaloisKey, || {
        Ok(sk.galois_keys(&[1], false)?)
    })?;
    let gk = sk.galois_keys(&[1], false)?;
    let values: Vec<f64> = (0..ctx.slots()).map(|i| (i as f64 * 0.01).sin()).collect();
    let pt = ckks::Plaintext::from_real(&ctx, &values)?;
    let x = pk.encrypt(&pt)?;
    table.measure(Engine::Ckks, &set, Primitive::Encode, || {
        Ok(ckks::Plaintext::from_real(&ctx, &values)?)
    })?;
    table.measure(Engine::Ckks, &set, Primitive::Encrypt, || {
        Ok(sk.encrypt(&pt)?)
    })?;
    table.measure(Engine::Ckks, &set, Primitive::Add, || Ok(x.add(&x)?))?;
    table.measure(Engine::Ckks, &set, Primitive::MulPlain, || {
        Ok(x.mul_plain(&pt)?.rescale()?)
    })?;
    table.measure(Engine::Ckks, &set, Primitive::MulRelin, || {
        Ok(x.mul_relin_rescale(&x, &rk)?)
    })?;
    table.measure(Engine::Ckks, &set, Primitive::Rotate, || {
        Ok(x.rotate(1, &gk)?)
    })?;
    table.measure(Engine::Ckks, &set, Primitive::Decrypt, || {
        Ok(sk.decrypt_real(&x)?)
    })?;
    Ok(())
}

/// The primitives of the TFHE set, and the transition keys to it from
/// every BFV set a transition can start from.
fn tfhe_costs(table: &mut Table, params: &tfhe::TfheParameters) -> Result<()> {
    let set = params.name;
    let t = Instant::now();
    let ck = tfhe::ClientKey::generate(params)?;
    let sk = ck.server_key()?;
    table.put(
        Engine::Tfhe,
        set,
        Primitive::Keygen,
        t.elapsed().as_nanos() as f64,
    );
    for base in bfv::BfvParameters::named() {
        if base.n() > MAX_TRANSITION_DIMENSION {
            continue;
        }
        transition_costs(table, base, &ck)?;
    }
    table.measure(Engine::Tfhe, set, Primitive::EncryptBlock, || {
        Ok(ck.encrypt(1)?)
    })?;
    let block = ck.encrypt(1)?;
    table.measure(Engine::Tfhe, set, Primitive::DecryptBlock, || {
        Ok(ck.decrypt(&block)?)
    })?;
    let lut = sk.lookup_table(|x| x)?;
    table.measure(Engine::Tfhe, set, Primitive::Pbs, || {
        Ok(sk.apply_lookup_table(&block, &lut)?)
    })?;
    table.measure(Engine::Tfhe, set, Primitive::KeySwitch, || {
        Ok(sk.key_switch(block.lwe())?)
    })?;
    let small = sk.key_switch(block.lwe())?;
    table.measure(Engine::Tfhe, set, Primitive::SignBootstrap, || {
        Ok(sk.sign_block(&small)?)
    })?;
    let (a, b) = (ck.encrypt_u8(200)?, ck.encrypt_u8(77)?);
    let lut8: Vec<u8> = (0..=255u8).map(|v| v.wrapping_mul(37)).collect();
    table.measure(Engine::Tfhe, set, Primitive::Lookup8, || {
        Ok(tfhe::lookup::lookup_u8(&sk, &a, &lut8)?)
    })?;
    table.measure(Engine::Tfhe, set, Primitive::Add8, || Ok(sk.add(&a, &b)?))?;
    table.measure(Engine::Tfhe, set, Primitive::ScalarAdd8, || {
        Ok(sk.scalar_add(&a, 9)?)
    })?;
    table.measure(Engine::Tfhe, set, Primitive::ScalarMul8, || {
        Ok(sk.scalar_mul(&a, 37)?)
    })?;
    table.measure(Engine::Tfhe, set, Primitive::Mul8, || Ok(sk.mul(&a, &b)?))?;
    table.measure(Engine::Tfhe, set, Primitive::Compare8, || {
        Ok(sk.compare(tfhe::Comparison::Gt, &a, &b)?)
    })?;
    let cond = sk.compare(tfhe::Comparison::Gt, &a, &b)?;
    table.measure(Engine::Tfhe, set, Primitive::Select8, || {
        Ok(sk.select(&cond, &a, &b)?)
    })?;
    Ok(())
}

/// A transition key from one BFV set (its secret -> the TFHE set's big
/// key, a ring switch) and one window's ring switch and extraction.
fn transition_costs(
    table: &mut Table,
    base: bfv::BfvParameters,
    ck: &tfhe::ClientKey,
) -> Result<()> {
    let name = base.name().to_string();
    let ctx = bfv::BfvContext::new(base)?;
    let bfv_key = bfv::SecretKey::generate(&ctx)?;
    let t = Instant::now();
    let key = TransitionKey::generate(&bfv_key, ck)?;
    table.put(
        Engine::Bfv,
        &name,
        Primitive::TransitionKey,
        t.elapsed().as_nanos() as f64,
    );
    // One window's ring switch and extraction of a coefficient (what
    // a decision runs per window besides its bootstraps).
    let mut ct = bfv_key.encrypt(&bfv::Plaintext::from_coeffs(&ctx, &[1])?)?;
    while ct.level() > 0 {
        ct = ct.mod_switch_to_next()?;
    }
    let (c0, c1) = (&ct.polys()[0], &ct.polys()[1]);
    table.measure(Engine::Bfv, &name, Primitive::RingSwitch, || {
        Ok(key.extract(c0, c1, 1, &[0])?)
    })?;
    Ok(())
}
