//! One party's keys for one collective key set: its secret share, the
//! rounds of the collective public, relinearization and Galois keys, and
//! the threshold share it decrypts with.

use std::sync::Arc;

use triskel_ring::rlwe::threshold::share_basis;
use triskel_ring::rlwe::{self, GaloisKeys, PublicKey, RelinKey, Scheme};
use triskel_ring::threshold::{
    GaloisKeyGen, PartySecret, PublicKeyGen, RelinEphemeral, RelinKeyGen, Session, Share,
    ThresholdShare,
};

use super::{not_yet, WHAT};
use crate::error::{Error, Result};
use crate::wire::{bad, Reader, Writer};

/// One party's state for one collective key set (a BFV part or the CKKS
/// set).
pub(super) struct SetKeys<C: Scheme> {
    pub(super) ctx: Arc<C>,
    pub(super) session: Session,
    /// None for a party loaded after its key generation.
    pub(super) secret: Option<PartySecret>,
    pub(super) relin: bool,
    pub(super) elements: Vec<usize>,
    pub(super) rotations: bool,
    pub(super) ephemeral: Option<RelinEphemeral>,
    pub(super) relin_round1: Option<Share>,
    pub(super) pk: Option<PublicKey<C>>,
    pub(super) rk: Option<RelinKey<C>>,
    pub(super) gk: Option<GaloisKeys<C>>,
    pub(super) share: Option<ThresholdShare>,
}

impl<C: Scheme> SetKeys<C>
where
    Error: From<C::Error>,
{
    /// A party's state for the set; `fresh`: with a new secret share for
    /// the key generation.
    pub(super) fn new(
        ctx: Arc<C>,
        session: Session,
        party: u16,
        relin: bool,
        steps: &[i64],
        fresh: bool,
    ) -> Result<SetKeys<C>> {
        let elements = ctx.galois_elements(C::ROTATION_GENERATOR, steps, false)?;
        let secret = match fresh {
            true => Some(PartySecret::generate(&session, party, ctx.n())?),
            false => None,
        };
        Ok(SetKeys {
            secret,
            ctx,
            session,
            relin,
            elements,
            rotations: !steps.is_empty(),
            ephemeral: None,
            relin_round1: None,
            pk: None,
            rk: None,
            gk: None,
            share: None,
        })
    }

    fn secret(&self) -> Result<&PartySecret> {
        self.secret.as_ref().ok_or_else(|| Error::Refused {
            op: "party".into(),
            msg: "the key generation of a loaded party is over".into(),
        })
    }

    fn pk_gen(&self) -> PublicKeyGen {
        rlwe::threshold::public_key_gen(&*self.ctx, &self.session)
    }

    fn relin_gen(&self) -> RelinKeyGen<'_> {
        rlwe::threshold::relin_key_gen(&*self.ctx, &self.session)
    }

    fn galois_gens(&self) -> Result<Vec<GaloisKeyGen<'_>>> {
        self.elements
            .iter()
            .map(|&g| Ok(GaloisKeyGen::new(&self.session, self.ctx.key_switch(), g)?))
            .collect()
    }

    pub(super) fn round1(&mut self, w: &mut Writer) -> Result<()> {
        w.blob(&self.pk_gen().share(self.secret()?)?.to_bytes());
        let relin = if self.relin {
            let (eph, share) = self.relin_gen().round1(self.secret()?)?;
            self.ephemeral = Some(eph);
            Some(share.to_bytes())
        } else {
            None
        };
        w.opt(relin.as_ref(), |w, b| w.blob(b));
        let gens = self.galois_gens()?;
        w.u32(gens.len());
        for gen in gens {
            w.blob(&gen.share(self.secret()?)?.to_bytes());
        }
        Ok(())
    }

    /// This party's deal for every party (None with k = n).
    pub(super) fn deals(&self) -> Result<Option<Vec<Share>>> {
        if self.session.threshold() == self.session.parties() {
            return Ok(None);
        }
        Ok(Some(self.secret()?.deal(share_basis(&*self.ctx))?))
    }

    /// Reads every party's round-1 part for this set (one reader per party,
    /// in party order) and the deals addressed to this party.
    pub(super) fn finish_round1(
        &mut self,
        readers: &mut [Reader<'_>],
        deals: &[Share],
    ) -> Result<()> {
        let qp = share_basis(&*self.ctx).clone();
        let pk_basis = self.ctx.public_key_basis().clone();
        let mut pk = Vec::with_capacity(readers.len());
        let mut relin = Vec::new();
        let mut galois: Vec<Vec<Share>> = vec![Vec::new(); self.elements.len()];
        for r in readers.iter_mut() {
            pk.push(Share::from_bytes(r.blob()?, &pk_basis)?);
            match (r.flag()?, self.relin) {
                (true, true) => relin.push(Share::from_bytes(r.blob()?, &qp)?),
                (false, false) => {}
                _ => return bad(WHAT, "a relinearization share where none belongs, or none"),
            }
            if r.u32()? != self.elements.len() {
                return bad(WHAT, "another number of Galois key shares than the plan's");
            }
            for g in galois.iter_mut() {
                g.push(Share::from_bytes(r.blob()?, &qp)?);
            }
        }
        let gen = self.pk_gen();
        let key = gen.finish(&gen.aggregate(&pk)?)?;
        self.pk = Some(PublicKey::from_collective(&self.ctx, key)?);
        if self.rotations {
            let keys = self
                .galois_gens()?
                .into_iter()
                .zip(&galois)
                .zip(&self.elements)
                .map(|((gen, shares), &g)| Ok((g, gen.finish(&gen.aggregate(shares)?)?)))
                .collect::<Result<Vec<_>>>()?;
            self.gk = Some(GaloisKeys::from_collective(
                &self.ctx,
                self.session.key_id(),
                keys,
            )?);
        }
        if self.relin {
            let gen = self.relin_gen();
            self.relin_round1 = Some(gen.aggregate_round1(&relin)?);
        }
        self.share = Some(if deals.is_empty() {
            ThresholdShare::additive(self.secret()?, &qp)?
        } else {
            ThresholdShare::from_deals(self.secret()?, deals)?
        });
        Ok(())
    }

    pub(super) fn round2(&self, w: &mut Writer) -> Result<()> {
        let share = match (&self.ephemeral, &self.relin_round1) {
            (Some(eph), Some(agg)) => Some(
                self.relin_gen()
                    .round2(self.secret()?, eph, agg)?
                    .to_bytes(),
            ),
            _ => None,
        };
        w.opt(share.as_ref(), |w, b| w.blob(b));
        Ok(())
    }

    pub(super) fn finish_round2(&mut self, readers: &mut [Reader<'_>]) -> Result<()> {
        let qp = share_basis(&*self.ctx).clone();
        let mut shares = Vec::new();
        for r in readers.iter_mut() {
            match (r.flag()?, self.relin) {
                (true, true) => shares.push(Share::from_bytes(r.blob()?, &qp)?),
                (false, false) => {}
                _ => return bad(WHAT, "a relinearization share where none belongs, or none"),
            }
        }
        if let Some(agg1) = &self.relin_round1 {
            let gen = self.relin_gen();
            let key = gen.finish(agg1, &gen.aggregate_round2(&shares)?)?;
            self.rk = Some(RelinKey::from_collective(&self.ctx, key)?);
            self.ephemeral = None;
        }
        Ok(())
    }

    /// The collective keys: public key, relinearization and Galois keys.
    #[allow(clippy::type_complexity)]
    pub(super) fn eval(
        &self,
    ) -> Result<(
        Arc<PublicKey<C>>,
        Option<Arc<RelinKey<C>>>,
        Option<Arc<GaloisKeys<C>>>,
    )>
    where
        PublicKey<C>: Clone,
        RelinKey<C>: Clone,
        GaloisKeys<C>: Clone,
    {
        let pk = self.pk.clone().ok_or_else(|| not_yet("the keys"))?;
        if self.relin && self.rk.is_none() {
            return Err(not_yet("the relinearization key"));
        }
        Ok((
            Arc::new(pk),
            self.rk.clone().map(Arc::new),
            self.gk.clone().map(Arc::new),
        ))
    }

    pub(super) fn threshold_share(&self) -> Result<&ThresholdShare> {
        self.share.as_ref().ok_or_else(|| not_yet("the key shares"))
    }
}
