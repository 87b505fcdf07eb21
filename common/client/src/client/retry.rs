//! When a failed request is sent again: only when repeating it is provably safe.
//!
//! - Any method, when Proxmox VE cannot have acted on it: the connection failed before the
//!   request was sent; pveproxy answered 503 (it did not hand the request to a worker);
//!   595 (pveproxy could not even connect to the node it forwards to); a lock timeout
//!   (`can't lock file … got timeout`: PVE takes the per-VM lock before changing anything).
//! - Reads, also on other passing failures (5xx, 596, a connection dropped mid-answer).
//!
//! A write whose answer was lost after it was sent is never repeated here: the caller reads
//! the cluster to learn what happened (see [`crate::recover`]).
//!
//! Attempts are bounded, pauses grow and are jittered so that parallel runs (25 forks)
//! do not retry in lockstep, and no pause is taken that would end past the caller's budget.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::error::{ApiError, ApiErrorKind};

/// Attempts per call, the first included.
pub const MAX_ATTEMPTS: u32 = 4;
/// The pause before the 2nd attempt lies in `[BASE/2, BASE]`; it doubles per attempt.
pub const BASE: Duration = Duration::from_millis(250);
/// No single pause is longer than this.
pub const MAX_PAUSE: Duration = Duration::from_secs(4);

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

/// Whether Proxmox VE provably did not act on the request, so that any method may be sent again.
pub fn not_acted_on(error: &ApiError) -> bool {
    match error.kind {
        ApiErrorKind::Connect => true,
        ApiErrorKind::Http => matches!(error.status, Some(503 | 595)) || error.is_lock_timeout(),
        _ => false,
    }
}

/// Whether the same read might succeed a moment later.
pub fn is_transient(error: &ApiError) -> bool {
    match error.kind {
        ApiErrorKind::Connect | ApiErrorKind::Dropped => true,
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

/// Whether a call of `method` that failed with `error` may be sent again.
pub fn may_repeat(method: &str, error: &ApiError) -> bool {
    not_acted_on(error) || (method == "GET" && is_transient(error))
}

/// The pause before attempt `attempt + 1` (attempts count from 1): exponential, with
/// "equal jitter" (`jitter` in [0, 1) picks a point in the upper half of the step).
pub fn pause(attempt: u32, jitter: f64) -> Duration {
    let step = BASE
        .saturating_mul(1 << attempt.saturating_sub(1).min(16))
        .min(MAX_PAUSE);
    step.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0))
}

/// The pause before the next attempt, or `None` to give up: not repeatable, attempts used
/// up, or the pause would end after `budget` (the time the caller still has, measured from
/// the first attempt's start as `elapsed`).
pub fn next_pause(
    method: &str,
    attempt: u32,
    error: &ApiError,
    elapsed: Duration,
    budget: Duration,
    jitter: f64,
) -> Option<Duration> {
    if attempt >= MAX_ATTEMPTS || !may_repeat(method, error) {
        return None;
    }
    let p = pause(attempt, jitter);
    (elapsed + p <= budget).then_some(p)
}

/// A number in [0, 1) that differs between processes and calls (no cryptographic use).
pub fn jitter() -> f64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut x =
        nanos ^ (u64::from(std::process::id()) << 32) ^ COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    // splitmix64 finaliser
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, msg: &str) -> ApiError {
        ApiError::http(status, msg, None)
    }

    const LOCK: &str = "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout";
    const LONG: Duration = Duration::from_secs(600);

    #[test]
    fn pauses_double_within_jittered_bounds_and_are_capped() {
        for (attempt, lo, hi) in [
            (1, 125, 250),
            (2, 250, 500),
            (3, 500, 1000),
            (6, 2000, 4000),
            (40, 2000, 4000),
        ] {
            assert_eq!(pause(attempt, 0.0), Duration::from_millis(lo), "attempt {attempt}");
            assert_eq!(pause(attempt, 1.0), Duration::from_millis(hi), "attempt {attempt}");
            let mid = pause(attempt, 0.5);
            assert!(mid > Duration::from_millis(lo) && mid < Duration::from_millis(hi));
        }
    }

    #[test]
    fn jitter_spreads_parallel_callers() {
        let draws: Vec<f64> = (0..200).map(|_| jitter()).collect();
        assert!(draws.iter().all(|j| (0.0..1.0).contains(j)));
        let distinct: std::collections::BTreeSet<u64> = draws.iter().map(|j| (j * 1000.0) as u64).collect();
        assert!(distinct.len() > 150, "jitter values repeat: {}", distinct.len());
    }

    #[test]
    fn attempts_are_bounded() {
        let e = http(503, "Service Unavailable");
        assert!(next_pause("GET", 1, &e, Duration::ZERO, LONG, 0.5).is_some());
        assert!(next_pause("GET", MAX_ATTEMPTS - 1, &e, Duration::ZERO, LONG, 0.5).is_some());
        assert_eq!(next_pause("GET", MAX_ATTEMPTS, &e, Duration::ZERO, LONG, 0.5), None);
    }

    #[test]
    fn no_pause_ends_past_the_budget() {
        let e = http(503, "Service Unavailable");
        let budget = Duration::from_secs(1);
        assert!(next_pause("POST", 1, &e, Duration::from_millis(700), budget, 0.0).is_some());
        assert_eq!(next_pause("POST", 1, &e, Duration::from_millis(900), budget, 0.0), None);
    }

    #[test]
    fn writes_are_repeated_only_when_pve_cannot_have_acted() {
        for method in ["POST", "PUT", "DELETE"] {
            assert!(
                may_repeat(method, &ApiError::other(ApiErrorKind::Connect, "refused")),
                "{method}"
            );
            assert!(may_repeat(method, &http(503, "Service Unavailable")), "{method}");
            assert!(may_repeat(method, &http(595, "Connection refused")), "{method}");
            assert!(may_repeat(method, &http(500, LOCK)), "{method}");
            // The request was sent and the answer lost: the cluster must be read instead.
            assert!(
                !may_repeat(method, &ApiError::other(ApiErrorKind::Dropped, "closed")),
                "{method}"
            );
            assert!(
                !may_repeat(method, &ApiError::other(ApiErrorKind::Timeout, "slow")),
                "{method}"
            );
            // 596 covers request sending and header processing: maybe delivered.
            assert!(!may_repeat(method, &http(596, "Connection timed out")), "{method}");
            assert!(!may_repeat(method, &http(500, "VM is locked (backup)")), "{method}");
            assert!(
                !may_repeat(
                    method,
                    &http(500, "cfs-lock 'file-replication_cfg' error: got lock request timeout")
                ),
                "{method}"
            );
            assert!(!may_repeat(method, &http(502, "Bad Gateway")), "{method}");
        }
    }

    #[test]
    fn what_a_read_repeats() {
        assert!(may_repeat(
            "GET",
            &http(500, "cfs-lock 'file-replication_cfg' error: got lock request timeout")
        ));
        assert!(may_repeat(
            "GET",
            &http(596, "tls_process_server_certificate: certificate verify failed")
        ));
        assert!(may_repeat("GET", &ApiError::other(ApiErrorKind::Dropped, "closed")));
        assert!(!may_repeat(
            "GET",
            &http(
                500,
                "Configuration file 'nodes/pve1/qemu-server/123.conf' does not exist"
            )
        ));
        assert!(!may_repeat("GET", &http(500, "QEMU guest agent is not running")));
        assert!(!may_repeat("GET", &http(501, "Method 'GET /x' not implemented")));
        assert!(!may_repeat("GET", &http(400, "Parameter verification failed.")));
        assert!(!may_repeat("GET", &http(403, "Permission check failed")));
        assert!(!may_repeat("GET", &ApiError::other(ApiErrorKind::Timeout, "slow")));
        assert!(!may_repeat("GET", &ApiError::other(ApiErrorKind::Tls, "bad cert")));
    }

    #[test]
    fn lock_timeouts_are_told_from_config_locks() {
        assert!(http(500, LOCK).is_lock_timeout());
        assert!(!http(500, "VM is locked (create)").is_lock_timeout());
        assert!(!http(400, LOCK).is_lock_timeout());
    }
}
