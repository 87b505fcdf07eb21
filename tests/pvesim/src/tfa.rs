//! Users' second factors as proxmox-tfa keeps them (PVE 8/9): typed responses
//! (`totp:…`, `recovery:…`), TOTP codes single-use (the last accepted counter), failure
//! counts and the lockouts, and `unlock-tfa`. What `POST /access/ticket` does with them
//! is in [`crate::access`].
//!
//! Where each piece lives decides what a second endpoint of the same cluster sees:
//! `TfaUserData` (the last accepted TOTP counter, `totp_locked`, `tfa_locked_until`, the
//! recovery keys) is `tfa.cfg`, written back with `cfs_write_file('priv/tfa.cfg')` into
//! pmxcfs and so shared by every node; the failure counts (`TfaUserChallenges`'
//! `totp_failures`, `tfa_failures`) are pve-rs's challenge data in
//! `/run/pve-private/tfa-challenges/<user>`, a file of the node that answered. A code
//! used on one node is reused on every other; 8 failures counted on one node lock TOTP
//! for the whole cluster.
//!
//! Sources: proxmox-rs `proxmox-tfa/src/api/mod.rs` (`TfaConfig::verify`,
//! `TfaUserData::verify_totp`, `verify_recovery`, `unlock_and_reset_tfa`, `TfaResponse`'s
//! `FromStr`, `OpenUserChallengeData`'s limits, `TfaUserChallenges`),
//! `proxmox-tfa/src/totp.rs` (`Totp::verify`); proxmox-perl-rs `pve-rs/src/bindings/tfa.rs`
//! (`challenge_data_path`); pve-access-control `AccessControl.pm`
//! (`authenticate_2nd_new_do`: `cfs_write_file('priv/tfa.cfg', …)` when `needs-saving`);
//! pve-cluster `Cluster.pm` (`priv/tfa.cfg` among pmxcfs' files).

use crate::state::UserDef;
use std::collections::{BTreeSet, HashMap};

/// `OpenUserChallengeData::totp_failure_limit`: TOTP failures before TOTP is locked.
pub const TOTP_FAILURE_LIMIT: u32 = 8;
/// `OpenUserChallengeData::tfa_failure_limit`: second-factor failures before the user is
/// locked out of every second factor for [`TFA_LOCK_SECS`].
pub const TFA_FAILURE_LIMIT: u32 = 100;
pub const TFA_LOCK_SECS: u64 = 3600;

/// A second-factor answer as `TfaResponse::from_str` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    Totp(String),
    Recovery(String),
    /// `u2f:…`/`webauthn:…`: typed, but no such factor is simulated (always refused).
    Unsupported,
}

impl Response {
    /// `Err("invalid tfa response")` for an untyped answer such as a bare `123456`.
    pub fn parse(text: &str) -> Result<Response, &'static str> {
        if let Some(code) = text.strip_prefix("totp:") {
            Ok(Response::Totp(code.to_string()))
        } else if let Some(key) = text.strip_prefix("recovery:") {
            Ok(Response::Recovery(key.to_string()))
        } else if text.starts_with("u2f:") || text.starts_with("webauthn:") {
            Ok(Response::Unsupported)
        } else {
            Err("invalid tfa response")
        }
    }
}

/// What proxmox-tfa keeps per user in `tfa.cfg`: the same on every node of the cluster.
#[derive(Debug, Clone, Default)]
struct UserState {
    /// `TotpEntry::last_count`: a code at or below it is refused as reused.
    last_count: u64,
    totp_locked: bool,
    tfa_locked_until: Option<u64>,
    /// Recovery keys not used yet (`TfaUserData::recovery`), as
    /// `POST /_pvesim/recovery-keys` made them (PVE: `POST /access/tfa/{userid}`).
    recovery: BTreeSet<String>,
    has_recovery: bool,
}

/// How one answer went, for the caller's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Accepted {
        totp: bool,
    },
    /// Refused; `totp_failure`: it raised the user's TOTP failure count.
    Refused {
        totp_failure: bool,
    },
}

/// What pve-rs keeps per user in the answering node's `/run/pve-private/tfa-challenges`.
#[derive(Debug, Clone, Copy, Default)]
struct NodeCounts {
    totp_failures: u32,
    tfa_failures: u32,
}

/// Every user's second-factor state; not persisted (like tickets, it lives as long as
/// the simulator).
#[derive(Debug, Default)]
pub struct TfaUsers {
    /// `tfa.cfg`, by user.
    users: HashMap<String, UserState>,
    /// The challenge data, by (answering node, user).
    counts: HashMap<(String, String), NodeCounts>,
}

impl TfaUsers {
    /// `TfaUserData::challenge` is `None` for a user without an enabled second factor
    /// (a TOTP secret, or recovery keys: their state counts even when all are used).
    pub fn has_second_factor(&self, user: &UserDef) -> bool {
        user.totp_secret.is_some() || self.users.get(&user.userid).is_some_and(|s| s.has_recovery)
    }

    /// `Recovery::generate`: ten new keys (`xxxx-xxxx-xxxx-xxxx`, hex), replacing the old ones.
    pub fn generate_recovery(&mut self, userid: &str) -> Vec<String> {
        let keys: Vec<String> = (0..10)
            .map(|_| {
                let b: [u8; 8] = rand::random();
                format!(
                    "{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}",
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
                )
            })
            .collect();
        let state = self.users.entry(userid.to_string()).or_default();
        state.recovery = keys.iter().cloned().collect();
        state.has_recovery = true;
        keys
    }

    /// `TfaConfig::verify` for `user`'s answer at `now` (TOTP step `step` seconds), as
    /// `node` answers it: the cluster's `tfa.cfg`, that node's failure counts.
    pub fn verify(&mut self, node: &str, user: &UserDef, response: &Response, now: u64, step: u64) -> Verdict {
        let state = self.users.entry(user.userid.clone()).or_default();
        let counts = self.counts.entry((node.to_string(), user.userid.clone())).or_default();
        if state.tfa_locked_until.is_some_and(|until| now < until) {
            return Verdict::Refused { totp_failure: false };
        }
        let was_totp = matches!(response, Response::Totp(_));
        if was_totp && state.totp_locked {
            return Verdict::Refused { totp_failure: false };
        }
        let ok = match response {
            Response::Totp(code) => verify_totp(state, counts, user.totp_secret.as_deref(), code, now, step),
            Response::Recovery(key) => verify_recovery(state, counts, key),
            Response::Unsupported => false,
        };
        if ok {
            counts.tfa_failures = 0;
            return Verdict::Accepted { totp: was_totp };
        }
        counts.tfa_failures += 1;
        if was_totp && counts.totp_failures >= TOTP_FAILURE_LIMIT {
            state.totp_locked = true;
        }
        if counts.tfa_failures >= TFA_FAILURE_LIMIT {
            state.tfa_locked_until = Some(now + TFA_LOCK_SECS);
        }
        Verdict::Refused { totp_failure: was_totp }
    }

    /// `unlock_and_reset_tfa` as `node` runs it: that node's failure counts to zero,
    /// both locks off; whether the user was locked. `None`: proxmox-tfa knows no second
    /// factor of this user (`no such user`).
    pub fn unlock(&mut self, node: &str, user: &UserDef, now: u64) -> Option<bool> {
        if !self.has_second_factor(user) {
            return None;
        }
        self.counts.remove(&(node.to_string(), user.userid.clone()));
        let state = self.users.entry(user.userid.clone()).or_default();
        let was_locked = state.totp_locked || state.tfa_locked_until.is_some_and(|until| now < until);
        state.totp_locked = false;
        state.tfa_locked_until = None;
        Some(was_locked)
    }

    /// Forget every user's state (the scenario's users start afresh).
    pub fn reset(&mut self) {
        self.users.clear();
        self.counts.clear();
    }
}

/// `TfaUserData::verify_totp`: a code of the step before, at or after `now` whose
/// counter is above the last accepted one; every refusal raises the TOTP failure count,
/// a success clears it.
fn verify_totp(
    state: &mut UserState,
    counts: &mut NodeCounts,
    secret: Option<&str>,
    code: &str,
    now: u64,
    step: u64,
) -> bool {
    match secret.and_then(|s| crate::auth::totp_counter(s, code, now, step)) {
        Some(counter) if counter > state.last_count => {
            state.last_count = counter;
            counts.totp_failures = 0;
            true
        }
        // "rejecting reused TOTP value", or "totp verification failed".
        _ => {
            counts.totp_failures += 1;
            false
        }
    }
}

/// `TfaUserData::verify_recovery`: each key once; a success lifts both locks and clears
/// the TOTP failure count.
fn verify_recovery(state: &mut UserState, counts: &mut NodeCounts, key: &str) -> bool {
    if !state.recovery.remove(key) {
        return false;
    }
    state.totp_locked = false;
    state.tfa_locked_until = None;
    counts.totp_failures = 0;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "JBSWY3DPEHPK3PXP";

    fn user() -> UserDef {
        UserDef {
            userid: "mfa@pve".into(),
            password: Some("p".into()),
            enable: true,
            totp_secret: Some(SECRET.into()),
            tokens: vec![],
        }
    }

    fn totp(now: u64) -> Response {
        Response::Totp(crate::auth::totp_with_step(SECRET, now, 30).unwrap())
    }

    #[test]
    fn responses_are_typed() {
        assert_eq!(Response::parse("123456"), Err("invalid tfa response"));
        assert_eq!(Response::parse("totp:123456"), Ok(Response::Totp("123456".into())));
        assert_eq!(Response::parse("recovery:ab"), Ok(Response::Recovery("ab".into())));
        assert_eq!(Response::parse("u2f:{}"), Ok(Response::Unsupported));
    }

    #[test]
    fn a_code_logs_in_once_and_the_next_step_still_works() {
        let (mut tfa, u, now) = (TfaUsers::default(), user(), 1_700_000_000);
        assert_eq!(
            tfa.verify("pve1", &u, &totp(now), now, 30),
            Verdict::Accepted { totp: true }
        );
        assert_eq!(
            tfa.verify("pve1", &u, &totp(now), now + 1, 30),
            Verdict::Refused { totp_failure: true }
        );
        assert_eq!(
            tfa.verify("pve1", &u, &totp(now + 30), now + 30, 30),
            Verdict::Accepted { totp: true }
        );
        assert_eq!(
            tfa.verify("pve1", &u, &totp(now - 30), now + 30, 30),
            Verdict::Refused { totp_failure: true },
            "an older step than the last accepted is refused too"
        );
    }

    #[test]
    fn eight_totp_failures_lock_totp_until_unlocked_or_a_recovery_key() {
        let (mut tfa, u, now) = (TfaUsers::default(), user(), 1_700_000_000);
        for _ in 0..TOTP_FAILURE_LIMIT {
            let wrong = Response::Totp("000000".into());
            assert_eq!(
                tfa.verify("pve1", &u, &wrong, now, 30),
                Verdict::Refused { totp_failure: true }
            );
        }
        assert_eq!(
            tfa.verify("pve1", &u, &totp(now), now, 30),
            Verdict::Refused { totp_failure: false },
            "locked: a right code is refused, and not counted"
        );
        assert_eq!(tfa.unlock("pve1", &u, now), Some(true));
        assert_eq!(tfa.unlock("pve1", &u, now), Some(false));
        assert_eq!(
            tfa.verify("pve1", &u, &totp(now), now, 30),
            Verdict::Accepted { totp: true }
        );
        let key = Response::Recovery(tfa.generate_recovery("mfa@pve").remove(0));
        assert_eq!(tfa.verify("pve1", &u, &key, now, 30), Verdict::Accepted { totp: false });
        assert_eq!(
            tfa.verify("pve1", &u, &key, now, 30),
            Verdict::Refused { totp_failure: false },
            "a recovery key is used up"
        );
        let plain = UserDef {
            userid: "plain@pve".into(),
            totp_secret: None,
            ..user()
        };
        assert_eq!(tfa.unlock("pve1", &plain, now), None);
    }

    /// A code used through one node is reused through every other (`tfa.cfg` is the
    /// cluster's); failures count per node, and 8 on one node lock TOTP everywhere.
    #[test]
    fn the_last_code_is_the_clusters_and_failures_count_per_node() {
        let (mut tfa, u, now) = (TfaUsers::default(), user(), 1_700_000_000);
        assert_eq!(
            tfa.verify("pve1", &u, &totp(now), now, 30),
            Verdict::Accepted { totp: true }
        );
        assert_eq!(
            tfa.verify("pve2", &u, &totp(now), now, 30),
            Verdict::Refused { totp_failure: true },
            "reused, though pve2 never saw it"
        );
        let wrong = Response::Totp("000000".into());
        for _ in 1..TOTP_FAILURE_LIMIT {
            tfa.verify("pve1", &u, &wrong, now, 30);
        }
        assert_eq!(
            tfa.verify("pve1", &u, &totp(now + 30), now + 30, 30),
            Verdict::Accepted { totp: true },
            "pve1 counted 7, pve2's one is its own; a success clears pve1's"
        );
        for _ in 0..TOTP_FAILURE_LIMIT {
            tfa.verify("pve2", &u, &wrong, now + 30, 30);
        }
        assert_eq!(
            tfa.verify("pve1", &u, &totp(now + 60), now + 60, 30),
            Verdict::Refused { totp_failure: false },
            "pve2's eighth failure locked TOTP for the cluster"
        );
        assert_eq!(tfa.unlock("pve1", &u, now + 60), Some(true));
        assert_eq!(
            tfa.verify("pve1", &u, &totp(now + 60), now + 60, 30),
            Verdict::Accepted { totp: true }
        );
    }
}
