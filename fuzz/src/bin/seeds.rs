//! Writes valid objects made by the library into `<dir>/<target>/seed-<i>`,
//! one directory per fuzz target: `seeds [dir]` (default `corpus`).

use std::path::{Path, PathBuf};

use triskel_bfv::BfvParameters;
use triskel_ring::Representation;

fn write(dir: &Path, target: &str, seeds: &[&[u8]]) -> std::io::Result<()> {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir)?;
    for (i, seed) in seeds.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{i}")), seed)?;
    }
    Ok(())
}

/// `tag` followed by `bytes`: the multi-loader targets pick the loader by their first byte.
fn tagged(tag: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 1);
    out.push(tag);
    out.extend_from_slice(bytes);
    out
}

/// Seeds for `ckks_objects` (tags: 0 parameters, 1 secret key, 2 public key,
/// 5 ciphertext), on the target's own N = 8192 set. Relinearization and Galois
/// keys are left out: at several MiB they would slow every execution.
fn ckks_seeds(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    use triskel_ckks::{CkksContext, CkksParameters, Plaintext, SecretKey};
    let mut seeds: Vec<Vec<u8>> = CkksParameters::named()
        .iter()
        .map(|p| tagged(0, &p.to_bytes()))
        .collect();
    let ctx = CkksContext::new(CkksParameters::n8192())?;
    let sk = SecretKey::generate(&ctx)?;
    let pk = sk.public_key()?;
    let ct = pk.encrypt(&Plaintext::from_real(&ctx, &[0.5, -0.25, 1.0])?)?;
    seeds.push(tagged(1, &sk.to_bytes()));
    seeds.push(tagged(2, &pk.to_bytes()));
    seeds.push(tagged(5, &ct.to_bytes()));
    write(
        dir,
        "ckks_objects",
        &seeds.iter().map(Vec::as_slice).collect::<Vec<_>>(),
    )?;
    Ok(())
}

/// Seeds for `tfhe_objects` (tags: 0 client key, 2 a 2_2 block, 3 a boolean,
/// 4 a u8 of 2_2 blocks, 5 a GLWE key, 6 a 2_2 GLWE, 7 a 2_2 GGSW, 8-12 the
/// compressed block, boolean, u8, GLWE and GGSW).
/// Server keys (tens of MiB) are left out.
fn tfhe_seeds(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let (boolean, shortint) = triskel_fuzz::tfhe_keys();
    let block = shortint.encrypt(3)?;
    let bit = boolean.encrypt_bool(true)?;
    let byte = shortint.encrypt_u8(0xa5)?;
    let glwe_key = shortint.glwe_key();
    let glwe = glwe_key.encrypt(&vec![3; glwe_key.polynomial_size()], 16)?;
    let ggsw = glwe_key.encrypt_ggsw(1)?;
    let seeds = [
        tagged(0, &boolean.to_bytes()),
        tagged(0, &shortint.to_bytes()),
        tagged(2, &block.to_bytes()),
        tagged(3, &bit.to_bytes()),
        tagged(4, &byte.to_bytes()),
        tagged(5, &boolean.glwe_key().to_bytes()),
        tagged(5, &glwe_key.to_bytes()),
        tagged(6, &glwe.to_bytes()),
        tagged(7, &ggsw.to_bytes()),
        tagged(8, &shortint.encrypt_compressed(3)?.to_bytes()),
        tagged(9, &boolean.encrypt_bool_compressed(true)?.to_bytes()),
        tagged(10, &shortint.encrypt_u8_compressed(0xa5)?.to_bytes()),
        tagged(
            11,
            &glwe_key
                .encrypt_compressed(&vec![3; glwe_key.polynomial_size()], 16)?
                .to_bytes(),
        ),
        tagged(12, &glwe_key.encrypt_ggsw_compressed(1)?.to_bytes()),
    ];
    write(
        dir,
        "tfhe_objects",
        &seeds.iter().map(Vec::as_slice).collect::<Vec<_>>(),
    )?;
    Ok(())
}

/// Seeds for the client/server targets, from the fixture's BFV-only and
/// CKKS-only runs (TFHE is left out: its server key is tens of MiB). The
/// plan choices also include those of the programs of every format version.
fn split_seeds(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let split = triskel_fuzz::split();
    let costs = triskel::CostModel::builtin();
    let mut choices: Vec<Vec<u8>> = split.cases.iter().map(|c| c.choice.to_bytes()).collect();
    let round_trips = triskel::PlanOptions {
        allow_round_trips: true,
        ..Default::default()
    };
    for p in triskel_fuzz::router_programs()? {
        choices.push(
            triskel::plan_with(&p, &costs, round_trips)?
                .choice()
                .to_bytes(),
        );
    }
    let each = |f: fn(&triskel_fuzz::SplitCase) -> Vec<u8>| -> Vec<Vec<u8>> {
        split.cases.iter().map(f).collect()
    };
    let keys = each(|c| c.keys_bytes.clone());
    let inputs = each(|c| c.inputs_bytes.clone());
    // First byte: even, the outputs as sent; odd, re-signed after mutation.
    let outputs: Vec<Vec<u8>> = [0u8, 1]
        .iter()
        .flat_map(|&mode| {
            split
                .cases
                .iter()
                .map(move |c| tagged(mode, &c.outputs_bytes))
        })
        .collect();
    let states = each(|c| c.client.to_bytes().to_vec());
    let jobs = each(|c| {
        triskel_serve::job::JobRequest {
            key_set: c.keys.id(),
            program: &c.program.to_bytes(),
            inputs: &c.inputs_bytes,
        }
        .to_bytes()
    });
    let f = triskel_fuzz::parties();
    let tagged_all = |mode: u8, items: &[Vec<u8>]| -> Vec<Vec<u8>> {
        items.iter().map(|b| tagged(mode, b)).collect()
    };
    let mut party = tagged_all(0, &[f.session.to_bytes()]);
    party.extend(tagged_all(1, &[f.parties[1].to_bytes()?.to_vec()]));
    party.extend(tagged_all(2, &[f.share0.clone()]));
    party.extend(tagged_all(3, &[f.round1[1].clone()]));
    for (target, seeds) in [
        ("router_party", &party),
        ("router_plan_choice", &choices),
        ("router_evaluation_keys", &keys),
        ("router_encrypted_inputs", &inputs),
        ("router_encrypted_outputs", &outputs),
        ("router_client_state", &states),
        ("serve_job_request", &jobs),
    ] {
        write(
            dir,
            target,
            &seeds.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        )?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpus".into()));

    let params: Vec<Vec<u8>> = BfvParameters::named()
        .iter()
        .map(BfvParameters::to_bytes)
        .collect();
    write(
        &dir,
        "bfv_params",
        &params.iter().map(Vec::as_slice).collect::<Vec<_>>(),
    )?;

    let b = triskel_fuzz::bfv();
    write(&dir, "bfv_secret_key", &[&b.sk.to_bytes()])?;
    write(&dir, "bfv_public_key", &[&b.pk.to_bytes()])?;
    write(&dir, "bfv_relin_key", &[&b.rk.to_bytes()])?;
    write(&dir, "bfv_galois_keys", &[&b.gk.to_bytes()])?;
    let seeded = b.sk.encrypt(&b.pt)?;
    let lower = b.ct.mod_switch_to_next()?;
    write(
        &dir,
        "bfv_ciphertext",
        &[
            &b.ct.to_bytes(),
            &b.ct3.to_bytes(),
            &seeded.to_bytes(),
            &lower.to_bytes(),
        ],
    )?;

    let r = triskel_fuzz::ring();
    let mut ntt = r.poly.clone();
    ntt.set_representation(Representation::Ntt)?;
    write(&dir, "ring_poly", &[&r.poly.to_bytes(), &ntt.to_bytes()])?;
    write(&dir, "ring_keyswitch_key", &[&r.key.to_bytes()])?;

    let t = triskel_fuzz::threshold();
    let tagged = |tag: u8, bytes: &[u8]| [&[tag][..], bytes].concat();
    let dec = t.decryption();
    let gen = triskel_ring::threshold::PublicKeyGen::new(
        &t.session,
        r.ks.qp(),
        triskel_ring::NoiseDistribution::default(),
    );
    let lwe = t.lwe_decryption();
    let threshold_seeds = [
        tagged(0, &t.session.to_bytes()),
        tagged(1, &dec.share(&t.shares[0])?.to_bytes()),
        tagged(1, &gen.share(&t.secrets[1])?.to_bytes()),
        tagged(2, &lwe.share(&t.lwe_shares[0])?.to_bytes()),
        tagged(3, &t.lwe_shares[2].to_bytes()),
        tagged(4, &t.shares[1].to_bytes()),
    ];
    write(
        &dir,
        "ring_threshold",
        &threshold_seeds
            .iter()
            .map(Vec::as_slice)
            .collect::<Vec<_>>(),
    )?;

    let a = triskel_fuzz::attest();
    let records = [&a.record, &a.batch.record, &a.computation_record];
    let receipts: Vec<_> = records.iter().map(|r| r.receipt.to_bytes()).collect();
    write(
        &dir,
        "attest_receipt",
        &receipts.iter().map(|r| &r[..]).collect::<Vec<_>>(),
    )?;
    let bundles: Vec<_> = records.iter().map(|r| r.bundle.to_bytes()).collect();
    write(
        &dir,
        "attest_bundle",
        &bundles.iter().map(Vec::as_slice).collect::<Vec<_>>(),
    )?;
    let whole: Vec<_> = records.iter().map(|r| r.to_bytes()).collect();
    write(
        &dir,
        "attest_record",
        &whole.iter().map(Vec::as_slice).collect::<Vec<_>>(),
    )?;
    let proofs: Vec<_> = a.batch.proofs.iter().map(|p| p.to_bytes()).collect();
    write(
        &dir,
        "attest_inclusion_proof",
        &proofs.iter().map(Vec::as_slice).collect::<Vec<_>>(),
    )?;
    write(
        &dir,
        "attest_public_identity",
        &[&a.identity.public().to_bytes()],
    )?;
    write(&dir, "attest_secret_identity", &[&a.identity.to_bytes()])?;
    ckks_seeds(&dir)?;
    tfhe_seeds(&dir)?;
    let programs: Vec<_> = triskel_fuzz::router_programs()?
        .iter()
        .map(|p| p.to_bytes())
        .collect();
    write(
        &dir,
        "router_program",
        &programs.iter().map(Vec::as_slice).collect::<Vec<_>>(),
    )?;
    let costs = serde_json::to_string(&triskel::CostModel::builtin())?;
    write(&dir, "cost_cache", &[costs.as_bytes()])?;
    let ctx = triskel_bfv::BfvContext::new(triskel_bfv::biometric::coefficient_match_parameters())?;
    let tfhe_key =
        triskel_tfhe::ClientKey::generate(&triskel_tfhe::TfheParameters::message_2_carry_2())?;
    let bfv_key = triskel_bfv::SecretKey::generate(&ctx)?;
    let transition = triskel::transition::TransitionKey::generate(&bfv_key, &tfhe_key)?;
    let ckks_ctx = triskel_ckks::CkksContext::new(triskel_ckks::CkksParameters::n8192())?;
    let ckks_key = triskel_ckks::SecretKey::generate(&ckks_ctx)?;
    let from_ckks = triskel::transition::TransitionKey::generate_for_ckks(&ckks_key, &tfhe_key)?;
    write(
        &dir,
        "transition_key",
        &[&transition.to_bytes(), &from_ckks.to_bytes()],
    )?;
    // key_mutations: each key unchanged (the accepting path), a byte of its
    // body changed, and the key cut short.
    let mutations: Vec<Vec<u8>> = (0u8..3)
        .flat_map(|which| {
            [
                (0u32, vec![]),
                (200_000, vec![0xff; 8]),
                (0x8000_0000 | 100, vec![]),
            ]
            .map(|(offset, patch)| [&[which][..], &offset.to_le_bytes(), &patch].concat())
        })
        .collect();
    write(
        &dir,
        "key_mutations",
        &mutations.iter().map(Vec::as_slice).collect::<Vec<_>>(),
    )?;
    split_seeds(&dir)?;
    println!("seeds written under {}", dir.display());
    Ok(())
}
