//! What a scheme declares on its own types in the same way for every RLWE
//! scheme: trait impls and inherent methods of a scheme's types, which no
//! generic item of this crate may provide (the types are the scheme's).

/// `Deref` from a scheme's type to the RLWE part it wraps in `field`: a
/// scheme's parameters to their [`RlweSet`](crate::RlweSet), its context
/// to its [`RlweContext`](crate::rlwe::RlweContext), so that the shared
/// accessors answer for the scheme's type.
///
/// ```
/// struct Outer {
///     inner: Vec<u8>,
/// }
/// triskel_ring::rlwe_deref!(Outer => Vec<u8>, inner);
/// assert_eq!(Outer { inner: vec![1, 2] }.len(), 2);
/// ```
#[macro_export]
macro_rules! rlwe_deref {
    ($outer:ty => $inner:ty, $field:ident) => {
        impl ::std::ops::Deref for $outer {
            type Target = $inner;

            fn deref(&self) -> &$inner {
                &self.$field
            }
        }
    };
}

/// The secret-key methods every RLWE scheme has, for a scheme's
/// `SecretKey` (fields `ctx: Arc<$ctx>` and `secret:
/// `[`RlweSecret`](crate::RlweSecret), and a constructor
/// `from_rlwe(&Arc<$ctx>, RlweSecret) -> Result<SecretKey>`): a `Debug`
/// that prints nothing of the key, and its versioned bytes (the format of
/// [`crate::rlwe`]: `header | id | n x i8`).
#[macro_export]
macro_rules! rlwe_secret_key {
    ($key:ident for $ctx:ty) => {
        impl ::std::fmt::Debug for $key {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(concat!(stringify!($key), " { .. }"))
            }
        }

        impl $key {
            /// Versioned bytes of the secret key (keep them secret; wiped
            /// on drop).
            pub fn to_bytes(&self) -> ::zeroize::Zeroizing<Vec<u8>> {
                self.secret.to_bytes(&*self.ctx)
            }

            /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`.
            pub fn from_bytes(
                bytes: &[u8],
                ctx: &::std::sync::Arc<$ctx>,
            ) -> ::std::result::Result<$key, <$ctx as $crate::rlwe::Scheme>::Error> {
                $key::from_rlwe(ctx, $crate::RlweSecret::from_bytes(bytes, &**ctx)?)
            }
        }
    };
}
