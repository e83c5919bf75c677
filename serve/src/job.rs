//! The body of a job submission: the key-set id, the program and the
//! encrypted inputs, as one versioned, self-describing byte string.
//!
//! ```text
//! job = "TRSKJOB" version:u8(1) key_set:digest(32) program:blob inputs:blob
//! blob = len:u32 bytes          (little-endian)
//! ```
//!
//! The program is [`triskel::Program::to_bytes`] output and the inputs
//! [`triskel::EncryptedInputs::to_bytes`] output; both are validated by
//! their own loaders. Trailing bytes are an error.

const MAGIC: &[u8; 7] = b"TRSKJOB";
/// The version of the job format.
pub const JOB_FORMAT_VERSION: u8 = 1;

/// A parsed submission, borrowing the bytes it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRequest<'a> {
    pub key_set: [u8; 32],
    pub program: &'a [u8],
    pub inputs: &'a [u8],
}

impl<'a> JobRequest<'a> {
    /// The bytes of a submission.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + self.program.len() + self.inputs.len());
        out.extend_from_slice(MAGIC);
        out.push(JOB_FORMAT_VERSION);
        out.extend_from_slice(&self.key_set);
        for part in [self.program, self.inputs] {
            out.extend_from_slice(&(part.len() as u32).to_le_bytes());
            out.extend_from_slice(part);
        }
        out
    }

    /// Reads a submission; every length is checked against the bytes left.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<JobRequest<'a>, String> {
        let mut rest = bytes;
        let mut take = |n: usize| -> Result<&'a [u8], String> {
            if rest.len() < n {
                return Err("job: truncated".into());
            }
            let (head, tail) = rest.split_at(n);
            rest = tail;
            Ok(head)
        };
        if take(7)? != MAGIC {
            return Err("job: not a job submission (wrong magic)".into());
        }
        let version = take(1)?[0];
        if version != JOB_FORMAT_VERSION {
            return Err(format!(
                "job: format version {version}; this server reads {JOB_FORMAT_VERSION}"
            ));
        }
        let key_set: [u8; 32] = take(32)?.try_into().expect("32 bytes");
        let mut blob = || -> Result<&'a [u8], String> {
            let n = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
            take(n)
        };
        let program = blob()?;
        let inputs = blob()?;
        if !rest.is_empty() {
            return Err(format!("job: {} trailing bytes", rest.len()));
        }
        Ok(JobRequest {
            key_set,
            program,
            inputs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let job = JobRequest {
            key_set: [7; 32],
            program: b"program",
            inputs: b"inputs!",
        };
        let bytes = job.to_bytes();
        assert_eq!(JobRequest::from_bytes(&bytes).unwrap(), job);
        for cut in 0..bytes.len() {
            assert!(JobRequest::from_bytes(&bytes[..cut]).is_err(), "cut {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(JobRequest::from_bytes(&longer)
            .unwrap_err()
            .contains("trailing"));
        let mut version = bytes.clone();
        version[7] = 2;
        assert!(JobRequest::from_bytes(&version)
            .unwrap_err()
            .contains("version"));
        let mut huge = bytes;
        huge[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(JobRequest::from_bytes(&huge).is_err());
    }
}
