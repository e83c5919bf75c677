//! The key-generation rounds of a party: round 1 (public shares and
//! private deals), round 2 (relinearization), and the finish that
//! assembles the evaluation keys.

use std::collections::BTreeMap;
use std::sync::Arc;

use triskel_ring::rlwe::threshold::share_basis;
use triskel_ring::threshold::Share;
use zeroize::Zeroizing;

use super::set_keys::SetKeys;
use super::state::Party;
use super::{not_yet, KIND_DEAL, KIND_ROUND1, KIND_ROUND2, WHAT};
use crate::error::Result;
use crate::server::{BfvEval, CkksEval, EvaluationKeys};
use crate::wire::bad;

/// What a party sends in the first key-generation round.
///
/// # Examples
///
/// ```
/// use triskel::{Kind, Party, PartySession, PlanOptions, Program};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Modular { len: 4, modulus: 65537 })?;
/// p.output("x", x)?;
///
/// // 2 of 3: Shamir shares, one private deal for every party.
/// let session = PartySession::new(&p, PlanOptions::default().threshold(2, 3))?;
/// let round1 = Party::new(&session, 0)?.keygen_round1()?;
/// assert!(!round1.public.is_empty());
/// assert_eq!(round1.deals.len(), 3);
///
/// // 3 of 3: additive shares, no deals.
/// let session = PartySession::new(&p, PlanOptions::default().threshold(3, 3))?;
/// assert!(Party::new(&session, 0)?.keygen_round1()?.deals.is_empty());
/// # Ok::<(), triskel::Error>(())
/// ```
pub struct Round1 {
    /// For every party (itself included).
    pub public: Vec<u8>,
    /// One deal per party, `deals[j]` for party j, each to be sent over a
    /// private channel (secret). Empty with k = n (additive shares).
    pub deals: Vec<Zeroizing<Vec<u8>>>,
}

impl Party {
    /// Round 1: the public key, Galois key and first relinearization
    /// shares for every party, and a private deal for each (k < n).
    pub fn keygen_round1(&mut self) -> Result<Round1> {
        let mut w = self.writer(KIND_ROUND1);
        for set in &mut self.bfv {
            set.round1(&mut w)?;
        }
        if let Some(set) = &mut self.ckks {
            set.round1(&mut w)?;
        }
        let deals: Vec<Option<Vec<Share>>> = self
            .bfv
            .iter()
            .map(SetKeys::deals)
            .chain(self.ckks.iter().map(SetKeys::deals))
            .collect::<Result<_>>()?;
        let deals = if deals.iter().any(Option::is_none) {
            Vec::new()
        } else {
            (0..self.session.n)
                .map(|to| {
                    let mut w = self.writer(KIND_DEAL);
                    w.bytes(&to.to_le_bytes());
                    for d in deals.iter().flatten() {
                        w.blob(&Zeroizing::new(d[to as usize].to_bytes()));
                    }
                    Zeroizing::new(w.0)
                })
                .collect()
        };
        Ok(Round1 { public: w.0, deals })
    }

    /// Round 2: reads every party's round-1 message (`public[j]` from
    /// party j) and the deals addressed to this party (`deals[j]` from
    /// party j; none with k = n); returns the second relinearization share
    /// for every party.
    pub fn keygen_round2(&mut self, public: &[Vec<u8>], deals: &[Vec<u8>]) -> Result<Vec<u8>> {
        let mut readers = self.readers(public, KIND_ROUND1)?;
        let additive = self.session.k == self.session.n;
        if deals.len() != if additive { 0 } else { self.session.n as usize } {
            return bad(
                WHAT,
                format!(
                    "{} deals for {} of {}",
                    deals.len(),
                    self.session.k,
                    self.session.n
                ),
            );
        }
        let mut deal_readers = Vec::with_capacity(deals.len());
        for (from, d) in deals.iter().enumerate() {
            let mut r = self.reader(d, KIND_DEAL, from as u16)?;
            let b = r.take(2)?;
            if u16::from_le_bytes([b[0], b[1]]) != self.index {
                return bad(WHAT, "a deal addressed to another party");
            }
            deal_readers.push(r);
        }
        let mut deal_shares = |basis: &Arc<triskel_ring::RnsBasis>| -> Result<Vec<Share>> {
            deal_readers
                .iter_mut()
                .map(|r| Ok(Share::from_bytes(r.blob()?, basis)?))
                .collect()
        };
        for set in &mut self.bfv {
            let deals = deal_shares(share_basis(&*set.ctx))?;
            set.finish_round1(&mut readers, &deals)?;
        }
        if let Some(set) = &mut self.ckks {
            let deals = deal_shares(share_basis(&*set.ctx))?;
            set.finish_round1(&mut readers, &deals)?;
        }
        for r in readers.iter().chain(&deal_readers) {
            r.finish()?;
        }
        let mut w = self.writer(KIND_ROUND2);
        for set in &self.bfv {
            set.round2(&mut w)?;
        }
        if let Some(set) = &self.ckks {
            set.round2(&mut w)?;
        }
        Ok(w.0)
    }

    /// Reads every party's round-2 message and assembles the evaluation
    /// keys (the same bundle, and key-set id, at every party).
    pub fn keygen_finish(&mut self, round2: &[Vec<u8>]) -> Result<()> {
        let mut readers = self.readers(round2, KIND_ROUND2)?;
        for set in &mut self.bfv {
            set.finish_round2(&mut readers)?;
        }
        if let Some(set) = &mut self.ckks {
            set.finish_round2(&mut readers)?;
        }
        for r in &readers {
            r.finish()?;
        }
        let plan = &self.session.plan;
        let bfv = self
            .bfv
            .iter()
            .map(|s| {
                let (pk, rk, gk) = s.eval()?;
                Ok(BfvEval {
                    ctx: s.ctx.clone(),
                    pk,
                    rk,
                    gk,
                })
            })
            .collect::<Result<_>>()?;
        let ckks = match &self.ckks {
            Some(s) => {
                let (pk, rk, gk) = s.eval()?;
                Some(CkksEval {
                    ctx: s.ctx.clone(),
                    pk,
                    rk,
                    gk,
                })
            }
            None => None,
        };
        let transforms = std::sync::OnceLock::new();
        if let Some(t) = self.transforms.take() {
            let _ = transforms.set(t);
        }
        self.keys = Some(EvaluationKeys {
            program: triskel_attest::program_digest(&plan.program.to_bytes()),
            choice: plan.choice(),
            bfv,
            ckks,
            tfhe: None,
            transition: BTreeMap::new(),
            id: std::sync::OnceLock::new(),
            transforms,
        });
        Ok(())
    }

    /// The evaluation keys for a server (after the key generation).
    pub fn evaluation_keys(&self) -> Result<&EvaluationKeys> {
        self.keys.as_ref().ok_or_else(|| not_yet("the keys"))
    }
}
