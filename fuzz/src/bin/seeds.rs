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

    let a = triskel_fuzz::attest();
    let records = [&a.record, &a.batch.record];
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
    let ctx = triskel_bfv::BfvContext::new(triskel_bfv::biometric::coefficient_match_parameters())?;
    let tfhe_key =
        triskel_tfhe::ClientKey::generate(&triskel_tfhe::TfheParameters::message_2_carry_2())?;
    let bfv_key = triskel_bfv::SecretKey::generate(&ctx)?;
    let transition = triskel::transition::TransitionKey::generate(&bfv_key, &tfhe_key)?;
    write(&dir, "transition_key", &[&transition.to_bytes()])?;
    println!("seeds written under {}", dir.display());
    Ok(())
}
