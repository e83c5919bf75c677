#![no_main]
//! The threshold parties' formats, by the first byte: 0, a `PartySession`
//! (accepted bytes load again from their own encoding); 1, a party's state
//! with the fixture's keys (an accepted state makes a decryption share or
//! an error); 2, a decryption share beside party 0's real one (combined,
//! or an error); 3, party 1's round-1 message of a key generation whose
//! other messages are real.

use libfuzzer_sys::fuzz_target;
use triskel::{Party, PartySession};

const LIMIT: u64 = 1 << 24;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    let f = triskel_fuzz::parties();
    let server = f.server.identity().public();
    match mode % 4 {
        0 => {
            if let Ok(s) = PartySession::from_bytes(bytes, LIMIT) {
                let again = PartySession::from_bytes(&s.to_bytes(), LIMIT).expect("reload");
                assert_eq!(again.id(), s.id());
                assert_eq!(again.plan().choice(), s.plan().choice());
            }
        }
        1 => {
            let keys = f.parties[0].evaluation_keys().expect("keys");
            if let Ok(p) = Party::from_bytes(bytes, LIMIT, keys) {
                let _ = p.decryption_share(&f.outputs, &f.inputs, server, &[0, p.index().max(1)]);
            }
        }
        2 => {
            let shares = [f.share0.clone(), bytes.to_vec()];
            let _ = f.parties[1].combine(&f.outputs, &f.inputs, server, &[0, 1], &shares);
        }
        _ => {
            let mut round1 = f.round1.clone();
            round1[1] = bytes.to_vec();
            let mut party = f.round2_party.lock().unwrap_or_else(|e| e.into_inner());
            let _ = party.keygen_round2(&round1, &f.deals);
        }
    }
});
