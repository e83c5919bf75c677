//! The cost model: the measured time of engine primitives on this machine,
//! keyed `engine/set/primitive` in nanoseconds, and the arithmetic that turns
//! a step's primitive counts into a predicted time.
//!
//! `triskel calibrate` measures the table ([`crate::calibrate`]) and caches it
//! as JSON under `$TRISKEL_CACHE_DIR`, else `$XDG_CACHE_HOME/triskel`, else
//! `~/.cache/triskel`, in `cost-model.json`, with the CPU model and kernel
//! backend it was measured on; [`CostModel::load`] uses the cache only when
//! both still match, and otherwise the table built into the crate (measured
//! on the development machine, see `builtin_costs.json`; the entries of the
//! CKKS sets of scale 2^50 are those of the 2^40 set of the same N times
//! ratios measured on another host, router README "The cost model").

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::Engine;

/// Format version of the cache file.
const CACHE_VERSION: u32 = 1;
/// Largest cache file read (a table has a few hundred entries).
const CACHE_LIMIT: u64 = 1 << 20;

/// A primitive of the cost table: the last part of its
/// `engine/set/primitive` keys.
///
/// # Examples
///
/// ```
/// use triskel::{CostModel, Engine, Primitive};
///
/// assert_eq!(Primitive::MulRelin.name(), "mul_relin");
/// let costs = CostModel::builtin();
/// let set = triskel::bfv::BfvParameters::n4096().name().to_string();
/// let add = costs.get(Engine::Bfv, &set, Primitive::Add)?;
/// let mul = costs.get(Engine::Bfv, &set, Primitive::MulRelin)?;
/// assert!(0.0 < add && add < mul);
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// A ciphertext addition.
    Add,
    /// A u8 radix addition.
    Add8,
    /// A u8 radix comparison.
    Compare8,
    /// A decryption.
    Decrypt,
    /// A TFHE block decryption.
    DecryptBlock,
    /// A plaintext encoding.
    Encode,
    /// An encryption.
    Encrypt,
    /// A TFHE block encryption.
    EncryptBlock,
    /// One Galois key.
    GaloisKey,
    /// A TFHE LWE key switch.
    KeySwitch,
    /// Secret, public and relinearization (or client and server) keys.
    Keygen,
    /// A u8 lookup table.
    Lookup8,
    /// A u8 radix multiplication.
    Mul8,
    /// A plaintext product.
    MulPlain,
    /// A ciphertext product with relinearization.
    MulRelin,
    /// A programmable bootstrap.
    Pbs,
    /// A ring switch of one transition window.
    RingSwitch,
    /// A slot rotation.
    Rotate,
    /// A u8 radix addition of a clear scalar.
    ScalarAdd8,
    /// A u8 radix product with a clear scalar.
    ScalarMul8,
    /// A u8 radix select by an encrypted bit.
    Select8,
    /// A transition's sign bootstrap.
    SignBootstrap,
    /// A transition key.
    TransitionKey,
}

impl Primitive {
    /// The name in the table's keys.
    pub fn name(self) -> &'static str {
        match self {
            Primitive::Add => "add",
            Primitive::Add8 => "add8",
            Primitive::Compare8 => "compare8",
            Primitive::Decrypt => "decrypt",
            Primitive::DecryptBlock => "decrypt_block",
            Primitive::Encode => "encode",
            Primitive::Encrypt => "encrypt",
            Primitive::EncryptBlock => "encrypt_block",
            Primitive::GaloisKey => "galois_key",
            Primitive::KeySwitch => "key_switch",
            Primitive::Keygen => "keygen",
            Primitive::Lookup8 => "lookup8",
            Primitive::Mul8 => "mul8",
            Primitive::MulPlain => "mul_plain",
            Primitive::MulRelin => "mul_relin",
            Primitive::Pbs => "pbs",
            Primitive::RingSwitch => "ring_switch",
            Primitive::Rotate => "rotate",
            Primitive::ScalarAdd8 => "scalar_add8",
            Primitive::ScalarMul8 => "scalar_mul8",
            Primitive::Select8 => "select8",
            Primitive::SignBootstrap => "sign_bootstrap",
            Primitive::TransitionKey => "transition_key",
        }
    }
}

/// Primitive costs and where they were measured.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::{CostModel, Engine, Error, Primitive};
///
/// let costs = BTreeMap::from([("bfv/s/add".to_string(), 10.0), ("bfv/s/rotate".into(), 1000.0)]);
/// let model = CostModel::from_costs("cpu", "portable", costs);
/// let counts = [(Primitive::Add, 3.0), (Primitive::Rotate, 2.0)];
/// assert_eq!(model.predict(Engine::Bfv, "s", &counts)?, 2030.0);
/// // A missing entry is an error naming it, not a guess.
/// assert!(matches!(model.get(Engine::Bfv, "s", Primitive::Pbs), Err(Error::Cache(_))));
/// assert!(matches!(CostModel::from_json("{}"), Err(Error::Cache(_))));
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostModel {
    /// Cache format version.
    pub version: u32,
    /// CPU model the table was measured on.
    pub cpu: String,
    /// Kernel backend chosen for 50-bit primes when measured.
    pub backend: String,
    /// `engine/set/primitive` -> nanoseconds.
    pub costs: BTreeMap<String, f64>,
}

/// The machine a table belongs to: CPU model and kernel backend.
pub fn machine() -> (String, String) {
    let backend = triskel_kernels::ntt_primes(50, 4096, 1)
        .ok()
        .and_then(|q| triskel_kernels::select_backend(q[0]).ok())
        .map_or("unknown", |b| b.name());
    (triskel_kernels::cpu_model(), backend.to_string())
}

/// The cache file's path.
pub fn cache_path() -> Result<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = var("TRISKEL_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("triskel")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("triskel")))
        .ok_or_else(|| Error::Cache("no TRISKEL_CACHE_DIR, XDG_CACHE_HOME or HOME".into()))?;
    Ok(dir.join("cost-model.json"))
}

impl CostModel {
    /// A table measured elsewhere (tests, the built-in table).
    pub fn from_costs(cpu: &str, backend: &str, costs: BTreeMap<String, f64>) -> CostModel {
        CostModel {
            version: CACHE_VERSION,
            cpu: cpu.into(),
            backend: backend.into(),
            costs,
        }
    }

    /// The table built into the crate.
    pub fn builtin() -> CostModel {
        serde_json::from_str(include_str!("builtin_costs.json"))
            .expect("the built-in table is valid JSON (a unit test loads it)")
    }

    /// Parses and validates a cache file's text: known version, at most
    /// 10,000 entries, every cost finite and positive.
    pub fn from_json(text: &str) -> Result<CostModel> {
        let m: CostModel =
            serde_json::from_str(text).map_err(|e| Error::Cache(format!("malformed: {e}")))?;
        if m.version != CACHE_VERSION {
            return Err(Error::Cache(format!(
                "version {} is not {CACHE_VERSION}",
                m.version
            )));
        }
        if m.costs.len() > 10_000 || m.costs.values().any(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(Error::Cache(
                "costs must be at most 10,000 finite positive numbers".into(),
            ));
        }
        Ok(m)
    }

    /// The cached table when it was measured on this CPU with this kernel
    /// backend and has every entry the built-in one has (a table from an
    /// older `triskel calibrate` lacks newer primitives), else the built-in
    /// one; the flag says whether the cache served.
    pub fn load() -> (CostModel, bool) {
        let cached = cache_path().ok().and_then(|p| {
            let f = std::fs::File::open(p).ok()?;
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::Read::take(f, CACHE_LIMIT), &mut text)
                .ok()?;
            CostModel::from_json(&text).ok()
        });
        let (cpu, backend) = machine();
        let builtin = CostModel::builtin();
        match cached {
            Some(m)
                if m.cpu == cpu
                    && m.backend == backend
                    && builtin.costs.keys().all(|k| m.costs.contains_key(k)) =>
            {
                (m, true)
            }
            _ => (builtin, false),
        }
    }

    /// Writes the table to the cache.
    pub fn save(&self) -> Result<PathBuf> {
        let path = cache_path()?;
        let io = |e: std::io::Error| Error::Cache(format!("{}: {e}", path.display()));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Cache(e.to_string()))?;
        std::fs::write(&path, text).map_err(io)?;
        Ok(path)
    }

    /// The cost of one primitive, or an error naming the missing entry.
    pub fn get(&self, engine: Engine, set: &str, primitive: Primitive) -> Result<f64> {
        let key = format!("{}/{set}/{}", engine.name(), primitive.name());
        self.costs.get(&key).copied().ok_or_else(|| {
            Error::Cache(format!(
                "the cost table has no entry {key} (run `triskel calibrate`)"
            ))
        })
    }

    /// sum count * cost over `counts` of (primitive, count).
    pub fn predict(&self, engine: Engine, set: &str, counts: &[(Primitive, f64)]) -> Result<f64> {
        counts
            .iter()
            .filter(|(_, c)| *c != 0.0)
            .map(|&(p, c)| Ok(c * self.get(engine, set, p)?))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predictions_are_sums_of_counted_primitives() {
        let mut costs = BTreeMap::new();
        costs.insert("bfv/s/add".to_string(), 10.0);
        costs.insert("bfv/s/rotate".to_string(), 1000.0);
        let m = CostModel::from_costs("cpu", "portable", costs);
        assert_eq!(
            m.predict(
                Engine::Bfv,
                "s",
                &[(Primitive::Add, 3.0), (Primitive::Rotate, 2.0)]
            )
            .unwrap(),
            2030.0
        );
        assert_eq!(
            m.predict(Engine::Bfv, "s", &[(Primitive::Pbs, 0.0)])
                .unwrap(),
            0.0
        );
        assert!(m
            .predict(Engine::Bfv, "s", &[(Primitive::Pbs, 1.0)])
            .is_err());
    }

    #[test]
    fn the_builtin_table_loads_and_malformed_caches_are_refused() {
        let b = CostModel::builtin();
        assert!(b.costs.len() > 20);
        let text = serde_json::to_string(&b).unwrap();
        assert_eq!(CostModel::from_json(&text).unwrap(), b);
        let bad = text.replacen("\"version\":1", "\"version\":9", 1);
        assert!(CostModel::from_json(&bad).is_err());
        assert!(CostModel::from_json("{").is_err());
        let mut neg = b.clone();
        neg.costs.insert("x/y/z".into(), -1.0);
        assert!(CostModel::from_json(&serde_json::to_string(&neg).unwrap()).is_err());
    }

    #[test]
    fn the_builtin_table_prices_every_ckks_set_the_planner_may_pick() {
        let b = CostModel::builtin();
        let primitives = |set: &str| -> Vec<String> {
            let prefix = format!("ckks/{set}/");
            b.costs
                .keys()
                .filter_map(|k| k.strip_prefix(&prefix).map(str::to_string))
                .collect()
        };
        let all = primitives("ckks-n8192");
        assert!(all.len() >= 9);
        for set in crate::plan::ckks_sets() {
            assert_eq!(primitives(set.name()), all, "{}", set.name());
        }
    }

    #[test]
    fn the_cache_serves_only_its_machine() {
        let dir = std::env::temp_dir().join(format!("triskel-cost-{}", std::process::id()));
        // Only this test sets the variable in this process.
        std::env::set_var("TRISKEL_CACHE_DIR", &dir);
        let (cpu, backend) = machine();
        let mut m = CostModel::builtin();
        m.costs.insert("bfv/x/add".into(), 12345.0);
        m.cpu = cpu;
        m.backend = backend;
        m.save().unwrap();
        let (loaded, cached) = CostModel::load();
        assert!(cached);
        assert_eq!(loaded, m);
        m.backend = "another".into();
        m.save().unwrap();
        let (loaded, cached) = CostModel::load();
        assert!(!cached);
        assert_eq!(loaded, CostModel::builtin());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
