//! When a failed request is sent again, and for how long: only when repeating it is safe.
//!
//! - Any method, when Proxmox VE provably did not act on it: the connection failed before
//!   the request was sent; a 503 (pveproxy has no 503 of its own: what answers it is a proxy
//!   or load balancer in front of pveproxy that forwarded nothing); a 595 (pveproxy could not
//!   connect to the node it forwards to); a lock timeout (`can't lock file … got timeout`:
//!   PVE takes the per-VM lock before changing anything). Such a call is repeated for as long
//!   as the task's window allows (its `timeout`, else `api_timeout`): a front proxy shedding
//!   load or a node restarting pveproxy answers so for longer than a few attempts take.
//!   A connection never made to an endpoint that never answered the client is the exception:
//!   it may be a wrong `api_host`, so it gets the fixed attempts, not a window of minutes.
//! - Reads, also on other passing failures (5xx, 596, a connection dropped mid-answer):
//!   these may have been acted on, so they keep the fixed attempt count.
//!
//! A write whose answer was lost after it was sent is never repeated here: the caller reads
//! the cluster to learn what happened (see [`crate::recover`]).
//!
//! Pauses grow and are jittered so that parallel runs (25 forks) do not retry in lockstep;
//! the last pause is cut to end at the window's end, never past it. The schedule is pure
//! ([`next_pause`]); the client sleeps and keeps the record ([`Episode`]).

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

/// Why a failed call may be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeatable {
    /// Proxmox VE provably did not act: repeated until the window ends.
    NotActedOn,
    /// A read that failed in passing and may have been served, or a first connection that
    /// failed: [`MAX_ATTEMPTS`] at most.
    PassingRead,
}

/// How a failed call of `method` may be repeated, if at all. `answered_before`: whether this
/// endpoint has answered the client before. A connection never made to an endpoint that never
/// answered is as likely a wrong `api_host`/`api_port` as a pveproxy restarting: it gets the
/// attempts of a passing failure, not a whole window (`timeout` may be ten minutes).
pub fn repeatable(method: &str, error: &ApiError, answered_before: bool) -> Option<Repeatable> {
    if error.kind == ApiErrorKind::Connect && !answered_before {
        Some(Repeatable::PassingRead)
    } else if not_acted_on(error) {
        Some(Repeatable::NotActedOn)
    } else if method == "GET" && is_transient(error) {
        Some(Repeatable::PassingRead)
    } else {
        None
    }
}

/// The pause before the next attempt, or `None` to give up: not repeatable, a passing read's
/// attempts used up, or the window (the time the call may take in all, measured from the
/// first attempt's start as `elapsed`) over. The last pause ends at the window's end.
pub fn next_pause(
    method: &str,
    attempt: u32,
    error: &ApiError,
    answered_before: bool,
    elapsed: Duration,
    window: Duration,
    jitter: f64,
) -> Option<Duration> {
    let left = window.checked_sub(elapsed).filter(|left| !left.is_zero())?;
    let p = pause(attempt, jitter);
    match repeatable(method, error, answered_before)? {
        Repeatable::NotActedOn => Some(p.min(left)),
        Repeatable::PassingRead => (attempt < MAX_ATTEMPTS && p <= left).then_some(p),
    }
}

/// One call's run of failed attempts that PVE did not act on, for the progress line and
/// for the error when the window ran out.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    /// `GET /cluster/resources`.
    pub call: String,
    /// What the failed attempts got, short (`503 Service Unavailable`, `a refused connection`).
    pub cause: String,
    /// Attempts that failed so.
    pub failed: u32,
    /// From the first attempt's start to the last one's end.
    pub tried: Duration,
}

impl Episode {
    /// The one line of progress a call repeated this way leaves (`-v`), once it ended.
    pub fn progress_line(&self, answered: bool) -> String {
        format!(
            "{}: {} on {} attempts over {:.1} s, {}",
            self.call,
            self.cause,
            self.failed,
            self.tried.as_secs_f64(),
            if answered { "then answered" } else { "gave up" }
        )
    }

    /// The text added to the last error when the window ended: what was tried, for how
    /// long, that nothing was done, and which option gives more time.
    pub fn gave_up_note(&self, window: Duration, window_option: &str) -> String {
        format!(
            "{} failed with {} on each of {} attempts over {:.1} s, until the task's {window_option} ({}) ran out; Proxmox VE did not act on it. Raise {window_option} to wait longer, or check the node and any proxy in front of it",
            self.call,
            self.cause,
            self.failed,
            self.tried.as_secs_f64(),
            seconds(window)
        )
    }
}

/// `2 s`, `0.5 s`: a window as the user set it.
fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// What a failure that PVE did not act on was, in a few words (for [`Episode::cause`]).
pub fn cause(error: &ApiError) -> String {
    match (error.kind, error.status) {
        (ApiErrorKind::Http, _) if error.is_lock_timeout() => "a lock timeout".into(),
        (ApiErrorKind::Http, Some(status)) => match super::error::standard_reason(status) {
            Some(reason) => format!("{status} {reason}"),
            None => status.to_string(),
        },
        (ApiErrorKind::Connect, _) => "no connection made".into(),
        _ => error.message.lines().next().unwrap_or("").to_string(),
    }
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
    fn a_passing_read_has_four_attempts() {
        let e = http(500, "got timeout");
        assert!(next_pause("GET", 1, &e, true, Duration::ZERO, LONG, 0.5).is_some());
        assert!(next_pause("GET", MAX_ATTEMPTS - 1, &e, true, Duration::ZERO, LONG, 0.5).is_some());
        assert_eq!(
            next_pause("GET", MAX_ATTEMPTS, &e, true, Duration::ZERO, LONG, 0.5),
            None
        );
        assert_eq!(
            next_pause("POST", 1, &e, true, Duration::ZERO, LONG, 0.5),
            None,
            "a write may have been acted on"
        );
    }

    #[test]
    fn what_pve_did_not_act_on_is_repeated_until_the_window_ends_whatever_the_count() {
        let refused = ApiError::other(ApiErrorKind::Connect, "refused");
        for e in [
            http(503, "Service Unavailable"),
            http(595, "Connection refused"),
            http(500, LOCK),
            refused,
        ] {
            for method in ["GET", "POST", "PUT", "DELETE"] {
                assert_eq!(
                    next_pause(method, 40, &e, true, Duration::from_secs(20), LONG, 1.0),
                    Some(MAX_PAUSE),
                    "{method} {e}"
                );
                assert_eq!(
                    next_pause(method, 2, &e, true, LONG, LONG, 0.0),
                    None,
                    "{method} {e}: window over"
                );
            }
        }
    }

    #[test]
    fn the_schedule_of_a_long_503_fills_the_window_and_ends_at_it() {
        let e = http(503, "Service Unavailable");
        let window = Duration::from_secs(30);
        let (mut elapsed, mut attempt, mut pauses) = (Duration::ZERO, 1, Vec::new());
        while let Some(p) = next_pause("GET", attempt, &e, true, elapsed, window, 1.0) {
            pauses.push(p.as_millis());
            elapsed += p;
            attempt += 1;
        }
        assert_eq!(pauses, [250, 500, 1000, 2000, 4000, 4000, 4000, 4000, 4000, 4000, 2250]);
        assert_eq!(elapsed, window, "the last attempt is made as the window ends");
    }

    #[test]
    fn a_first_connection_never_made_gets_four_attempts_then_the_window() {
        let refused = ApiError::other(ApiErrorKind::Connect, "refused");
        assert_eq!(repeatable("POST", &refused, false), Some(Repeatable::PassingRead));
        assert!(next_pause("POST", MAX_ATTEMPTS - 1, &refused, false, Duration::ZERO, LONG, 0.5).is_some());
        assert_eq!(
            next_pause("POST", MAX_ATTEMPTS, &refused, false, Duration::ZERO, LONG, 0.5),
            None,
            "an endpoint that never answered: maybe a wrong api_host or api_port"
        );
        assert_eq!(repeatable("POST", &refused, true), Some(Repeatable::NotActedOn));
        assert_eq!(
            repeatable("POST", &http(503, "Service Unavailable"), false),
            Some(Repeatable::NotActedOn),
            "a 503 is an answer: something is there"
        );
    }

    #[test]
    fn no_pause_ends_past_the_window() {
        let e = http(503, "Service Unavailable");
        let window = Duration::from_secs(1);
        assert_eq!(
            next_pause("POST", 1, &e, true, Duration::from_millis(700), window, 0.0),
            Some(Duration::from_millis(125))
        );
        assert_eq!(
            next_pause("POST", 1, &e, true, Duration::from_millis(900), window, 0.0),
            Some(Duration::from_millis(100)),
            "cut to the window's end"
        );
        assert_eq!(next_pause("POST", 1, &e, true, window, window, 0.0), None);
        let passing = http(500, "got timeout");
        assert_eq!(
            next_pause("GET", 1, &passing, true, Duration::from_millis(900), window, 0.0),
            None,
            "a passing read does not cut its pause"
        );
    }

    #[test]
    fn an_episode_names_the_cause_the_attempts_the_time_and_the_option() {
        let episode = Episode {
            call: "GET /cluster/resources".into(),
            cause: cause(&http(503, "Service Unavailable")),
            failed: 7,
            tried: Duration::from_millis(2040),
        };
        assert_eq!(
            episode.progress_line(true),
            "GET /cluster/resources: 503 Service Unavailable on 7 attempts over 2.0 s, then answered"
        );
        assert_eq!(
            episode.gave_up_note(Duration::from_secs(2), "api_timeout"),
            "GET /cluster/resources failed with 503 Service Unavailable on each of 7 attempts over 2.0 s, until the task's api_timeout (2 s) ran out; Proxmox VE did not act on it. Raise api_timeout to wait longer, or check the node and any proxy in front of it"
        );
        assert_eq!(cause(&http(595, "No route to host")), "595");
        assert_eq!(cause(&http(500, LOCK)), "a lock timeout");
        assert_eq!(
            cause(&ApiError::other(ApiErrorKind::Connect, "Could not connect")),
            "no connection made"
        );
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
