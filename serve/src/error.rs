//! The errors of the API: an HTTP status, a stable code and a message,
//! answered as `{"error": {"code": "...", "message": "..."}}`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// An error answered to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    /// A stable machine-readable code (`not_found`, `invalid_keys`, ...).
    pub code: &'static str,
    pub message: String,
    /// Seconds for a `Retry-After` header (queue full, quota of jobs in flight).
    pub retry_after: Option<u64>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }

    pub fn not_found(what: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no such {what}"),
        )
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, code, message)
    }

    pub fn too_many(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            retry_after: Some(1),
            ..ApiError::new(StatusCode::TOO_MANY_REQUESTS, code, message)
        }
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// A store failure: a full disk and an unwritable store refuse the
    /// request with their own codes, anything else is internal.
    pub fn io(context: &str, e: &std::io::Error) -> ApiError {
        use std::io::ErrorKind;
        match e.kind() {
            ErrorKind::StorageFull
            | ErrorKind::PermissionDenied
            | ErrorKind::ReadOnlyFilesystem => ApiError::write_failed(context, e),
            _ => ApiError::internal(format!("{context}: {e}")),
        }
    }

    /// A write to the store that failed: 507 `store_full` on a full disk,
    /// else 503 `store_unwritable`.
    pub fn write_failed(context: &str, e: &std::io::Error) -> ApiError {
        if e.kind() == std::io::ErrorKind::StorageFull {
            return ApiError::new(
                StatusCode::INSUFFICIENT_STORAGE,
                "store_full",
                format!("{context}: the store is full; no new work is taken"),
            );
        }
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unwritable",
            format!("{context}: the store cannot be written ({e}); no new work is taken"),
        )
    }
}

impl From<rusqlite::Error> for ApiError {
    fn from(e: rusqlite::Error) -> ApiError {
        use rusqlite::ErrorCode;
        match e.sqlite_error_code() {
            Some(ErrorCode::DiskFull) => ApiError::new(
                StatusCode::INSUFFICIENT_STORAGE,
                "store_full",
                "the store's database is full; no new work is taken",
            ),
            Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => {
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unwritable",
                    format!("the store's database cannot be written ({e})"),
                )
            }
            _ => ApiError::internal(format!("store: {e}")),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": {"code": self.code, "message": self.message}});
        let mut response = (self.status, crate::json(&body)).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(s) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"triskel\""),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error, ErrorKind};

    #[test]
    fn store_write_failures_refuse_with_their_own_codes() {
        let full = ApiError::write_failed("storing a blob", &Error::from(ErrorKind::StorageFull));
        assert_eq!(
            (full.status, full.code),
            (StatusCode::INSUFFICIENT_STORAGE, "store_full")
        );
        for kind in [
            ErrorKind::PermissionDenied,
            ErrorKind::ReadOnlyFilesystem,
            ErrorKind::NotADirectory,
        ] {
            let e = ApiError::write_failed("storing a blob", &Error::from(kind));
            assert_eq!(
                (e.status, e.code),
                (StatusCode::SERVICE_UNAVAILABLE, "store_unwritable"),
                "{kind:?}"
            );
        }
        // A read that fails on a full disk is refused the same way; other
        // read faults are internal.
        let e = ApiError::io("reading a blob", &Error::from(ErrorKind::StorageFull));
        assert_eq!(e.code, "store_full");
        let e = ApiError::io("reading a blob", &Error::from(ErrorKind::NotFound));
        assert_eq!(e.status, StatusCode::INTERNAL_SERVER_ERROR);
    }
}
