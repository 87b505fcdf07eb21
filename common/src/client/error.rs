//! API errors, rendered like community.proxmox 1.6 rendered them (so playbooks that
//! match on `msg` keep working), and transport errors that name the option to fix.

use serde_json::{Map, Value};

use crate::protocol::Failure;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiErrorKind {
    /// PVE answered with an HTTP error status.
    Http,
    /// The host could not be reached (DNS, refused, unreachable).
    Connect,
    /// The TLS handshake or certificate verification failed.
    Tls,
    /// A request took longer than `api_timeout`.
    Timeout,
    /// Login failed (password, OTP) or credentials were rejected.
    Auth,
    /// Anything else (a malformed answer).
    Other,
}

/// One failed API call.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub kind: ApiErrorKind,
    /// HTTP status for `Http` errors.
    pub status: Option<u16>,
    /// PVE's message (the body's `message`, else the reason phrase), without trailing newline;
    /// for other kinds, the full human-readable explanation.
    pub message: String,
    /// The body's `errors` object of a 400 (parameter -> problem).
    pub errors: Option<Map<String, Value>>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        todo!("error: display")
    }
}

impl std::error::Error for ApiError {}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Failure {
        Failure::new(e.to_string())
    }
}
