//! When a failed request is tried again: reads only, on failures that may pass
//! (connection errors, server errors, PVE's 595/596 for an unreachable node), a few
//! times with growing pauses. A write is never repeated: it may have taken effect.

use std::time::Duration;

use super::error::{ApiError, ApiErrorKind};

/// Pauses before the 2nd and 3rd attempt; their count bounds the retries.
pub const BACKOFF: [Duration; 2] = [Duration::from_millis(200), Duration::from_millis(800)];

/// 500 texts that describe the request, not a passing state: retrying cannot help and
/// would only slow down lookups that expect them (a VM without guest agent, a missing
/// config).
const PERMANENT_500: [&str; 6] = [
    "does not exist",
    "not running",
    "no such",
    "hostname lookup",
    "not implemented",
    "already exists",
];

/// The pause before attempt `attempt + 1` (attempts count from 1), or `None` to give up.
pub fn next_pause(method: &str, attempt: usize, error: &ApiError) -> Option<Duration> {
    if method != "GET" || !is_transient(error) {
        return None;
    }
    BACKOFF.get(attempt.checked_sub(1)?).copied()
}

/// Whether the same read might succeed a moment later.
pub fn is_transient(error: &ApiError) -> bool {
    match error.kind {
        ApiErrorKind::Connect => true,
        ApiErrorKind::Http => match error.status {
            Some(500) => {
                let msg = error.message.to_ascii_lowercase();
                !PERMANENT_500.iter().any(|p| msg.contains(p))
            }
            Some(501) => false,
            Some(s) => (500..600).contains(&s),
            None => false,
        },
        // A timeout already cost api_timeout; TLS and auth failures do not pass by themselves.
        ApiErrorKind::Timeout | ApiErrorKind::Tls | ApiErrorKind::Auth | ApiErrorKind::Other => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, msg: &str) -> ApiError {
        ApiError::http(status, msg, None)
    }

    #[test]
    fn reads_are_retried_twice_with_growing_pauses() {
        let e = http(503, "Service Unavailable");
        assert_eq!(next_pause("GET", 1, &e), Some(Duration::from_millis(200)));
        assert_eq!(next_pause("GET", 2, &e), Some(Duration::from_millis(800)));
        assert_eq!(next_pause("GET", 3, &e), None);
    }

    #[test]
    fn writes_are_never_retried() {
        let e = ApiError::other(ApiErrorKind::Connect, "refused");
        for method in ["POST", "PUT", "DELETE"] {
            assert_eq!(next_pause(method, 1, &e), None, "{method}");
        }
    }

    #[test]
    fn what_counts_as_transient() {
        assert!(is_transient(&http(500, "cfs-lock 'file-replication_cfg' error: got lock request timeout")));
        assert!(is_transient(&http(595, "No route to host")));
        assert!(is_transient(&http(596, "tls_process_server_certificate: certificate verify failed")));
        assert!(is_transient(&ApiError::other(ApiErrorKind::Connect, "refused")));
        assert!(!is_transient(&http(500, "Configuration file 'nodes/pve1/qemu-server/123.conf' does not exist")));
        assert!(!is_transient(&http(500, "QEMU guest agent is not running")));
        assert!(!is_transient(&http(501, "Method 'GET /x' not implemented")));
        assert!(!is_transient(&http(400, "Parameter verification failed.")));
        assert!(!is_transient(&http(403, "Permission check failed")));
        assert!(!is_transient(&ApiError::other(ApiErrorKind::Timeout, "slow")));
        assert!(!is_transient(&ApiError::other(ApiErrorKind::Tls, "bad cert")));
    }
}
