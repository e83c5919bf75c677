//! `triskel calibrate`: measures the primitives of every named set the
//! planner can pick (and the NTT of the kernel backend in use) on this
//! machine, for the cost model.

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

/// Measures the cost table; `progress` hears each set's name as it starts.
pub fn calibrate(mut progress: impl FnMut(&str)) -> Result<CostModel> {
    let mut costs = BTreeMap::new();
    progress("kernels");
    let (cpu, backend) = machine();
    for n in [4096usize, 16384] {
        let q = triskel_kernels::ntt_primes(50, n, 1)?[0];
        let m = triskel_kernels::Modulus::new(q)?;
        let plan = triskel_kernels::NttPlan::new(n, &m)?;
        let mut a: Vec<u64> = (0..n as u64).map(|i| i * 7919 % q).collect();
        let ns = time("ntt_forward", || Ok(plan.forward(&mut a)?))?;
        costs.insert(format!("kernels/{backend}/ntt_forward_{n}"), ns);
    }
    let mut put = |engine: Engine, set: &str, primitive: Primitive, ns: f64| {
        costs.insert(format!("{}/{set}/{}", engine.name(), primitive.name()), ns);
    };
    for base in bfv::BfvParameters::named() {
        progress(base.name());
        let set = base.name().to_string();
        let ctx = bfv::BfvContext::new(base)?;
        let t = Instant::now();
        let sk = bfv::SecretKey::generate(&ctx)?;
        let (pk, rk) = (sk.public_key()?, sk.relin_key()?);
        put(
            Engine::Bfv,
            &set,
            Primitive::Keygen,
            t.elapsed().as_nanos() as f64,
        );
        put(
            Engine::Bfv,
            &set,
            Primitive::GaloisKey,
            time("galois_key", || Ok(sk.galois_keys(&[1], false)?))?,
        );
        let gk = sk.galois_keys(&[1], false)?;
        let values: Vec<u64> = (0..ctx.n() as u64).map(|i| i % 1000).collect();
        let pt = bfv::Plaintext::from_slots(&ctx, &values)?;
        let scalar = bfv::Plaintext::from_coeffs(&ctx, &[3])?;
        let x = pk.encrypt(&pt)?;
        put(
            Engine::Bfv,
            &set,
            Primitive::Encode,
            time("encode", || Ok(bfv::Plaintext::from_slots(&ctx, &values)?))?,
        );
        put(
            Engine::Bfv,
            &set,
            Primitive::Encrypt,
            time("encrypt", || Ok(sk.encrypt(&pt)?))?,
        );
        put(
            Engine::Bfv,
            &set,
            Primitive::Add,
            time("add", || Ok(x.add(&x)?))?,
        );
        put(
            Engine::Bfv,
            &set,
            Primitive::MulPlain,
            time("mul_plain", || Ok(x.mul_plain(&scalar)?))?,
        );
        put(
            Engine::Bfv,
            &set,
            Primitive::MulRelin,
            time("mul_relin", || Ok(x.mul(&x)?.relinearize(&rk)?))?,
        );
        put(
            Engine::Bfv,
            &set,
            Primitive::Rotate,
            time("rotate", || Ok(x.rotate_rows(1, &gk)?))?,
        );
        put(
            Engine::Bfv,
            &set,
            Primitive::Decrypt,
            time("decrypt", || Ok(sk.decrypt(&x)?))?,
        );
    }
    for base in crate::plan::ckks_sets() {
        progress(base.name());
        let set = base.name().to_string();
        let ctx = ckks::CkksContext::new(base)?;
        let t = Instant::now();
        let sk = ckks::SecretKey::generate(&ctx)?;
        let (pk, rk) = (sk.public_key()?, sk.relin_key()?);
        put(
            Engine::Ckks,
            &set,
            Primitive::Keygen,
            t.elapsed().as_nanos() as f64,
        );
        put(
            Engine::Ckks,
            &set,
            Primitive::GaloisKey,
            time("galois_key", || Ok(sk.galois_keys(&[1], false)?))?,
        );
        let gk = sk.galois_keys(&[1], false)?;
        let values: Vec<f64> = (0..ctx.slots()).map(|i| (i as f64 * 0.01).sin()).collect();
        let pt = ckks::Plaintext::from_real(&ctx, &values)?;
        let x = pk.encrypt(&pt)?;
        put(
            Engine::Ckks,
            &set,
            Primitive::Encode,
            time("encode", || Ok(ckks::Plaintext::from_real(&ctx, &values)?))?,
        );
        put(
            Engine::Ckks,
            &set,
            Primitive::Encrypt,
            time("encrypt", || Ok(sk.encrypt(&pt)?))?,
        );
        put(
            Engine::Ckks,
            &set,
            Primitive::Add,
            time("add", || Ok(x.add(&x)?))?,
        );
        put(
            Engine::Ckks,
            &set,
            Primitive::MulPlain,
            time("mul_plain", || Ok(x.mul_plain(&pt)?.rescale()?))?,
        );
        put(
            Engine::Ckks,
            &set,
            Primitive::MulRelin,
            time("mul_relin", || Ok(x.mul_relin_rescale(&x, &rk)?))?,
        );
        put(
            Engine::Ckks,
            &set,
            Primitive::Rotate,
            time("rotate", || Ok(x.rotate(1, &gk)?))?,
        );
        put(
            Engine::Ckks,
            &set,
            Primitive::Decrypt,
            time("decrypt", || Ok(sk.decrypt_real(&x)?))?,
        );
    }
    let params = tfhe_set();
    progress(params.name);
    let set = params.name;
    let t = Instant::now();
    let ck = tfhe::ClientKey::generate(&params)?;
    let sk = ck.server_key()?;
    put(
        Engine::Tfhe,
        set,
        Primitive::Keygen,
        t.elapsed().as_nanos() as f64,
    );
    // Transition keys (BFV secret -> this set's big key, a ring switch), per BFV set a
    // transition can start from.
    for base in bfv::BfvParameters::named() {
        if base.n() > MAX_TRANSITION_DIMENSION {
            continue;
        }
        let name = base.name().to_string();
        let ctx = bfv::BfvContext::new(base)?;
        let bfv_key = bfv::SecretKey::generate(&ctx)?;
        let t = Instant::now();
        let key = TransitionKey::generate(&bfv_key, &ck)?;
        put(
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
        put(
            Engine::Bfv,
            &name,
            Primitive::RingSwitch,
            time("ring_switch", || Ok(key.extract(c0, c1, 1, &[0])?))?,
        );
    }
    put(
        Engine::Tfhe,
        set,
        Primitive::EncryptBlock,
        time("encrypt_block", || Ok(ck.encrypt(1)?))?,
    );
    let block = ck.encrypt(1)?;
    put(
        Engine::Tfhe,
        set,
        Primitive::DecryptBlock,
        time("decrypt_block", || Ok(ck.decrypt(&block)?))?,
    );
    let lut = sk.lookup_table(|x| x)?;
    put(
        Engine::Tfhe,
        set,
        Primitive::Pbs,
        time("pbs", || Ok(sk.apply_lookup_table(&block, &lut)?))?,
    );
    put(
        Engine::Tfhe,
        set,
        Primitive::KeySwitch,
        time("key_switch", || Ok(sk.key_switch(block.lwe())?))?,
    );
    let small = sk.key_switch(block.lwe())?;
    put(
        Engine::Tfhe,
        set,
        Primitive::SignBootstrap,
        time("sign_bootstrap", || Ok(sk.sign_block(&small)?))?,
    );
    let (a, b) = (ck.encrypt_u8(200)?, ck.encrypt_u8(77)?);
    let table: Vec<u8> = (0..=255u8).map(|v| v.wrapping_mul(37)).collect();
    put(
        Engine::Tfhe,
        set,
        Primitive::Lookup8,
        time("lookup8", || Ok(tfhe::lookup::lookup_u8(&sk, &a, &table)?))?,
    );
    put(
        Engine::Tfhe,
        set,
        Primitive::Add8,
        time("add8", || Ok(sk.add(&a, &b)?))?,
    );
    put(
        Engine::Tfhe,
        set,
        Primitive::ScalarAdd8,
        time("scalar_add8", || Ok(sk.scalar_add(&a, 9)?))?,
    );
    put(
        Engine::Tfhe,
        set,
        Primitive::ScalarMul8,
        time("scalar_mul8", || Ok(sk.scalar_mul(&a, 37)?))?,
    );
    put(
        Engine::Tfhe,
        set,
        Primitive::Mul8,
        time("mul8", || Ok(sk.mul(&a, &b)?))?,
    );
    put(
        Engine::Tfhe,
        set,
        Primitive::Compare8,
        time("compare8", || {
            Ok(sk.compare(tfhe::Comparison::Gt, &a, &b)?)
        })?,
    );
    let cond = sk.compare(tfhe::Comparison::Gt, &a, &b)?;
    put(
        Engine::Tfhe,
        set,
        Primitive::Select8,
        time("select8", || Ok(sk.select(&cond, &a, &b)?))?,
    );
    Ok(CostModel::from_costs(&cpu, &backend, costs))
}
