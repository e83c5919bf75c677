//! Bearer API tokens: 256 bits from the operating system's CSPRNG, shown
//! once when created and stored only as their SHA-256 digest.

use sha2::{Digest, Sha256};

/// What every token starts with (it tells a leaked token apart).
pub const TOKEN_PREFIX: &str = "tsk_";

/// A new token: the prefix and 64 lowercase hex digits.
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw)?;
    let token = format!("{TOKEN_PREFIX}{}", triskel::attest::hex(&raw));
    raw.iter_mut().for_each(|b| *b = 0);
    Ok(token)
}

/// The stored form of a token.
pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The token of an `Authorization: Bearer <token>` header value, if it has
/// the shape of one.
pub fn bearer(header: &str) -> Option<&str> {
    let (scheme, token) = header.split_once(' ')?;
    let token = token.trim();
    let well_formed = token.len() == TOKEN_PREFIX.len() + 64
        && token.starts_with(TOKEN_PREFIX)
        && token[TOKEN_PREFIX.len()..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit());
    (scheme.eq_ignore_ascii_case("bearer") && well_formed).then_some(token)
}

/// 32 bytes from 64 hex digits.
pub fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    crate::from_hex(hex)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_parse_as_bearer() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_ne!(a, b);
        assert_eq!(bearer(&format!("Bearer {a}")), Some(a.as_str()));
        assert_eq!(bearer(&format!("bearer  {a}")), Some(a.as_str()));
        assert_eq!(bearer(&format!("Basic {a}")), None);
        assert_eq!(bearer("Bearer tsk_1234"), None);
        assert_eq!(bearer(&format!("Bearer {}", &a[..a.len() - 1])), None);
        assert_ne!(token_hash(&a), token_hash(&b));
    }

    #[test]
    fn digests_parse_from_hex() {
        let d = [0xa5u8; 32];
        assert_eq!(parse_digest(&triskel::attest::hex(&d)), Some(d));
        assert_eq!(parse_digest("zz"), None);
        assert_eq!(parse_digest(&"g".repeat(64)), None);
    }
}
