#![no_main]
//! The threshold formats: the first byte picks the parser, the rest is its
//! input. 0: `Session::from_bytes`; 1: `Share::from_bytes` over the ring
//! fixture's Q and Q || P, then a decryption's and a public key's
//! aggregation and finish; 2: `Share::from_bytes_lwe`, then an LWE
//! decryption's; 3: `LweKeyShare::from_bytes`, then a partial decryption;
//! 4: `ThresholdShare::from_bytes` over Q || P, then a decryption share.
//! Accepted bytes round-trip exactly; nothing panics.

use libfuzzer_sys::fuzz_target;
use triskel_ring::threshold::{LweKeyShare, PublicKeyGen, Session, Share, ThresholdShare};
use triskel_ring::NoiseDistribution;

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    let t = triskel_fuzz::threshold();
    let r = triskel_fuzz::ring();
    match which % 5 {
        0 => {
            if let Ok(s) = Session::from_bytes(bytes) {
                assert_eq!(s.to_bytes(), bytes, "session encoding is canonical");
            }
        }
        1 => {
            for basis in [&r.q, r.ks.qp()] {
                let Ok(share) = Share::from_bytes(bytes, basis) else {
                    continue;
                };
                assert_eq!(share.to_bytes(), bytes, "share encoding is canonical");
                let dec = t.decryption();
                if let Ok(agg) = dec.aggregate(&[share.clone(), share.clone()]) {
                    let _ = dec.finish(&agg);
                }
                let _ = dec.finish(&share);
                let gen = PublicKeyGen::new(&t.session, basis, NoiseDistribution::default());
                let _ = gen.finish(&share);
                let _ = gen.aggregate(&[share]);
            }
        }
        2 => {
            if let Ok(share) = Share::from_bytes_lwe(bytes) {
                assert_eq!(share.to_bytes(), bytes, "share encoding is canonical");
                let dec = t.lwe_decryption();
                let _ = dec.finish(&share);
                let _ = dec.aggregate(&[share]);
            }
        }
        4 => {
            if let Ok(share) = ThresholdShare::from_bytes(bytes, &t.session, r.ks.qp()) {
                assert_eq!(
                    &share.to_bytes()[..],
                    bytes,
                    "threshold share encoding is canonical"
                );
                let _ = t.decryption().share(&share);
            }
        }
        _ => {
            if let Ok(key) = LweKeyShare::from_bytes(bytes, &t.session) {
                assert_eq!(
                    &key.to_bytes()[..],
                    bytes,
                    "key share encoding is canonical"
                );
                let _ = t.lwe_decryption().share(&key);
            }
        }
    }
});
