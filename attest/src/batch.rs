//! Batches: many results under one Merkle root, signed once.

use crate::encoding::{Digest32, Hasher, Reader, TAG_LEAF, TAG_NODE, TAG_ROOT};
use crate::record::{check, seal};
use crate::{
    Error, Identity, PublicIdentity, Record, RecordKind, Result, Route, Verified, FORMAT_VERSION,
};

const PROOF_MAGIC: &[u8; 4] = b"TKAP";
const PROOF_HEADER_LEN: usize = 4 + 1 + 8 + 8 + 32;

/// `H(tag "merkle-leaf", field(result))`.
pub fn leaf_digest(result: &[u8]) -> Digest32 {
    Hasher::new(TAG_LEAF).field(result).finish()
}

fn node(left: &Digest32, right: &Digest32) -> Digest32 {
    Hasher::new(TAG_NODE).fixed(left).fixed(right).finish()
}

fn root(count: u64, top: &Digest32) -> Digest32 {
    Hasher::new(TAG_ROOT)
        .fixed(&count.to_le_bytes())
        .fixed(top)
        .finish()
}

/// Number of siblings on the path of leaf `index` in a tree of `count` leaves.
fn path_len(mut index: u64, mut count: u64) -> usize {
    let mut len = 0;
    while count > 1 {
        if index % 2 == 1 || index + 1 < count {
            len += 1;
        }
        index /= 2;
        count = count / 2 + count % 2;
    }
    len
}

/// The proof that one result is leaf `index` of a batch of `count` results.
///
/// Layout: `"TKAP" || version (1) || index (u64 LE) || count (u64 LE) || leaf digest (32)
/// || siblings (32 each, leaf level first)`; the number of siblings is fixed by `index`
/// and `count`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InclusionProof {
    index: u64,
    count: u64,
    leaf: Digest32,
    siblings: Vec<Digest32>,
}

impl InclusionProof {
    /// Position of the result in its batch.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Number of results in the batch.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Serializes the proof.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(PROOF_HEADER_LEN + 32 * self.siblings.len());
        out.extend_from_slice(PROOF_MAGIC);
        out.push(FORMAT_VERSION);
        out.extend_from_slice(&self.index.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.leaf);
        for sibling in &self.siblings {
            out.extend_from_slice(sibling);
        }
        out
    }

    /// Parses a proof, checking magic, version, `index < count` and the exact length.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new("inclusion proof", bytes);
        r.expect_magic(PROOF_MAGIC)?;
        r.expect_u8("version", FORMAT_VERSION)?;
        let index = r.u64("index")?;
        let count = r.u64("count")?;
        let leaf = r.array32("leaf digest")?;
        if index >= count {
            return Err(r.error(format!("index {index} not below count {count}")));
        }
        let len = path_len(index, count);
        r.expect_len(32 * len)?;
        let siblings = (0..len)
            .map(|_| r.array32("sibling"))
            .collect::<Result<_>>()?;
        Ok(InclusionProof {
            index,
            count,
            leaf,
            siblings,
        })
    }

    /// The top node of the tree this proof leads to.
    fn top(&self) -> Result<Digest32> {
        let (mut index, mut count) = (self.index, self.count);
        let mut hash = self.leaf;
        let mut siblings = self.siblings.iter();
        while count > 1 {
            if index % 2 == 1 {
                hash = node(siblings.next().ok_or(Error::ProofMismatch)?, &hash);
            } else if index + 1 < count {
                hash = node(&hash, siblings.next().ok_or(Error::ProofMismatch)?);
            }
            index /= 2;
            count = count / 2 + count % 2;
        }
        Ok(hash)
    }
}

/// The top node of the tree over `leaves` (at least one) and each leaf's proof.
fn tree(leaves: Vec<Digest32>) -> (Digest32, Vec<InclusionProof>) {
    let mut levels = vec![leaves];
    while let Some(last) = levels.last().filter(|l| l.len() > 1) {
        let next = last
            .chunks(2)
            .map(|pair| match pair {
                [left, right] => node(left, right),
                _ => pair[0],
            })
            .collect();
        levels.push(next);
    }
    let leaves = &levels[0];
    let count = leaves.len() as u64;
    let proofs = (0..leaves.len())
        .map(|leaf| {
            let mut index = leaf;
            let mut siblings = Vec::with_capacity(levels.len());
            for level in &levels[..levels.len() - 1] {
                if let Some(sibling) = level.get(index ^ 1) {
                    siblings.push(*sibling);
                }
                index /= 2;
            }
            InclusionProof {
                index: leaf as u64,
                count,
                leaf: leaves[leaf],
                siblings,
            }
        })
        .collect();
    (levels[levels.len() - 1][0], proofs)
}

/// A signed batch: the record over the Merkle root, and one proof per result, in order.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The record signing the batch root (kind [`RecordKind::Batch`]).
    pub record: Record,
    /// `proofs[i]` proves that `results[i]` is in the batch.
    pub proofs: Vec<InclusionProof>,
}

/// Attests many results at once under one Merkle root, signed once; all share `route`
/// and `context`.
///
/// Leaves are [`leaf_digest`] of each result in order; a node is
/// `H(tag "merkle-node", left || right)`. On a level with an odd number of nodes the last
/// one is promoted unchanged to the next level (never duplicated). The signed subject is
/// `H(tag "merkle-root", count (u64 LE) || top node)`, so the count is bound too.
pub fn attest_batch<R: AsRef<[u8]>>(
    identity: &Identity,
    results: &[R],
    route: &Route,
    context: &[u8],
) -> Result<Batch> {
    if results.is_empty() {
        return Err(Error::EmptyBatch);
    }
    let leaves = results.iter().map(|r| leaf_digest(r.as_ref())).collect();
    let (top, proofs) = tree(leaves);
    let count = results.len() as u64;
    let subject = |_: &Digest32| root(count, &top);
    let record = seal(identity, RecordKind::Batch, subject, route, context)?;
    Ok(Batch { record, proofs })
}

/// A batch record whose signatures, route and context have been verified; checking each
/// result against it then costs only hashing.
#[derive(Clone, Debug)]
pub struct VerifiedBatch {
    root: Digest32,
    record: Verified,
}

impl VerifiedBatch {
    /// What the batch record vouches for (suite, signer, time).
    pub fn record(&self) -> &Verified {
        &self.record
    }

    /// Checks that `result` is result number `index` of the batch, as `proof` shows:
    /// [`Error::WrongIndex`] if the proof is for another place,
    /// [`Error::WrongResult`] if the result is not the proof's leaf,
    /// [`Error::ProofMismatch`] if the proof does not lead to the signed root.
    pub fn check(&self, index: u64, result: &[u8], proof: &InclusionProof) -> Result<()> {
        if proof.index != index {
            return Err(Error::WrongIndex {
                expected: index,
                found: proof.index,
            });
        }
        if leaf_digest(result) != proof.leaf {
            return Err(Error::WrongResult);
        }
        if root(proof.count, &proof.top()?) != self.root {
            return Err(Error::ProofMismatch);
        }
        Ok(())
    }
}

/// Verifies a batch record (everything [`crate::verify`] checks, except the result,
/// which each [`VerifiedBatch::check`] does). Only version-1 records can be batch records.
pub fn verify_batch_record(
    public: &PublicIdentity,
    route: &Route,
    context: &[u8],
    record: &Record,
) -> Result<VerifiedBatch> {
    let verified = check(public, RecordKind::Batch, None, route, context, record)?;
    Ok(VerifiedBatch {
        root: *record.bundle.subject(),
        record: verified,
    })
}

/// Verifies that `result` is result number `index` of a batch, from its proof and the
/// batch record; returns what the record vouches for.
pub fn verify_batch_item(
    public: &PublicIdentity,
    index: u64,
    result: &[u8],
    proof: &InclusionProof,
    route: &Route,
    context: &[u8],
    record: &Record,
) -> Result<Verified> {
    let batch = verify_batch_record(public, route, context, record)?;
    batch.check(index, result, proof)?;
    Ok(batch.record)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(count: usize) -> Vec<Digest32> {
        (0..count).map(|i| leaf_digest(&i.to_le_bytes())).collect()
    }

    #[test]
    fn odd_levels_promote_the_last_node() {
        let l = leaves(5);
        let expected = node(&node(&node(&l[0], &l[1]), &node(&l[2], &l[3])), &l[4]);
        assert_eq!(tree(l).0, expected);
        let l = leaves(3);
        assert_eq!(tree(l.clone()).0, node(&node(&l[0], &l[1]), &l[2]));
        assert_eq!(tree(leaves(1)).0, leaves(1)[0]);
    }

    #[test]
    fn every_proof_leads_to_the_top() {
        for count in 1..=40 {
            let (top, proofs) = tree(leaves(count));
            for proof in &proofs {
                assert_eq!(proof.siblings.len(), path_len(proof.index, proof.count));
                assert_eq!(proof.top().ok(), Some(top));
                let parsed = InclusionProof::from_bytes(&proof.to_bytes()).ok();
                assert_eq!(parsed.as_ref(), Some(proof));
            }
        }
    }

    #[test]
    fn path_len_handles_huge_counts() {
        assert_eq!(path_len(u64::MAX - 1, u64::MAX), 63);
        assert_eq!(path_len(0, u64::MAX), 64);
    }
}
