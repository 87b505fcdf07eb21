//! One login per run: password auth with a ticket an earlier task of the run got as the
//! same identity ([`KeptTicket`], handed over by the run layer, `crate::run::ticket`)
//! instead of `POST /access/ticket` with the password (and a TOTP code that may be stale
//! by now).
//!
//! PVE's rules (PVE::AccessControl): a ticket is valid for two hours; posting a valid
//! ticket as the password of `POST /access/ticket` gives a new one (a renewal, no second
//! factor asked). So a kept ticket older than the run's renewal age is renewed first;
//! a renewal PVE refuses, and a kept ticket any request gets 401 for (expired, the
//! signing key rotated, the user disabled), fall back to one fresh login with the task's
//! own credentials; only that login's failure fails the task. A ticket this client got
//! (login, renewal) goes to its [`TicketSink`] for the run to keep.
//!
//! Every ticket this client holds, kept or got here, is renewed once it is as old as the
//! renewal age: a task that waits longer than that (a long clone, `wait_for_ip`) never
//! holds an expired ticket.
//!
//! A TOTP code logs in once (proxmox-tfa refuses a reused one and counts it as a
//! failure): with `api_otp`, nothing here ever logs in again after the first login of
//! the run; a refused ticket ends the task with a message saying so.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::auth::{Credentials, Login};
use super::{Answer, ApiError, ApiErrorKind, Client, Method};

/// A ticket kept by the run for this identity, and when to renew it.
#[derive(Clone)]
pub struct KeptTicket {
    /// The `PVEAuthCookie` ticket.
    pub ticket: String,
    /// The CSRF prevention token that goes with it on writes.
    pub csrf: String,
    /// Seconds since PVE made it (as the controller measured).
    pub age_secs: f64,
}

/// What the run hands a password client: the ticket it keeps for this identity, where a
/// ticket the client gets goes, and the age at which tickets are renewed.
pub struct RunTickets {
    /// The ticket the run keeps for this identity, if any.
    pub kept: Option<KeptTicket>,
    /// Where a ticket the client gets is left for the run.
    pub sink: TicketSink,
    /// The age in seconds after which a kept ticket is renewed rather than used.
    pub renew_after_secs: f64,
}

/// PVE's tickets live two hours; without the run's setting one is renewed after one.
pub const DEFAULT_RENEW_AFTER: Duration = Duration::from_secs(3600);

/// When the ticket in use was made, and when it is due for renewal.
#[derive(Clone, Copy)]
pub(super) struct TicketClock {
    made: Instant,
    renew_after: Duration,
}

/// A ticket this client got from PVE, for the run to keep.
#[derive(Clone)]
pub struct NewTicket {
    /// The `PVEAuthCookie` ticket.
    pub ticket: String,
    /// The CSRF prevention token that goes with it on writes.
    pub csrf: String,
    /// The user PVE made it for (`root@pam`).
    pub user: String,
}

/// Where a client leaves a ticket it got.
pub type TicketSink = Arc<Mutex<Option<NewTicket>>>;

/// Told every secret the client holds or gets (tickets, CSRF tokens) before it is used,
/// so whoever prints (the module protocol) can scrub it from every output; the client
/// itself prints nothing.
pub type SecretSink = Arc<dyn Fn(&str) + Send + Sync>;

/// The task's own credentials, for one fresh login after a kept ticket was refused.
#[derive(Clone)]
pub(super) struct Relogin {
    user: String,
    password: String,
    otp: Option<String>,
}

impl Client {
    /// Ticket credentials for `user`: the kept ticket (renewed when due), else a login.
    pub(super) fn password_credentials(
        &self,
        user: &str,
        password: &str,
        otp: Option<&str>,
        kept: Option<KeptTicket>,
    ) -> Result<Credentials, ApiError> {
        let Some(kept) = kept.filter(|k| ticket_user(&k.ticket) == Some(user)) else {
            return self.login_and_keep(user, password, otp);
        };
        self.register_secret(&kept.ticket);
        self.register_secret(&kept.csrf);
        let again = Relogin {
            user: user.to_string(),
            password: password.to_string(),
            otp: otp.map(str::to_string),
        };
        let age = Duration::try_from_secs_f64(kept.age_secs).unwrap_or(Duration::MAX);
        if age >= self.renew_after {
            return match self.renew(user, &kept.ticket)? {
                Some(renewed) => Ok(renewed),
                None => self.login_again(&again, "PVE refused to renew the run's ticket"),
            };
        }
        *self.relogin.lock().unwrap_or_else(|e| e.into_inner()) = Some(again);
        self.set_clock(Instant::now().checked_sub(age));
        Ok(Credentials::Ticket {
            cookie: kept.ticket,
            csrf: kept.csrf,
            user: user.to_string(),
        })
    }

    /// After a 401: when the credentials are a kept ticket not yet replaced, one fresh
    /// login replaces them (`Ok(true)`: send again). Its failure is the task's.
    pub(super) fn relogin_after_refusal(&self) -> Result<bool, ApiError> {
        let Some(again) = self.relogin.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return Ok(false);
        };
        let fresh = self.login_again(&again, "PVE refused the run's ticket (expired or revoked)")?;
        *self.credentials() = fresh;
        Ok(true)
    }

    /// Before a request: the ticket in use renewed once it is as old as the renewal age
    /// (PVE's two hours would otherwise end under a long task). A renewal PVE refuses
    /// leaves the ticket as it is: the request's 401 takes the usual way.
    pub(super) fn renew_if_due(&self) -> Result<(), ApiError> {
        let due = self.clock().is_some_and(|c| c.made.elapsed() >= c.renew_after);
        if !due {
            return Ok(());
        }
        let (user, ticket) = match &*self.credentials() {
            Credentials::Ticket { cookie, user, .. } => (user.clone(), cookie.clone()),
            _ => return Ok(()),
        };
        // Asked once per ticket: a refused renewal is not asked again before every call.
        *self.ticket_clock.lock().unwrap_or_else(|e| e.into_inner()) = None;
        if let Some(renewed) = self.renew(&user, &ticket)? {
            *self.credentials() = renewed;
        }
        Ok(())
    }

    /// The one fresh login after the run's ticket was refused (`why`) — never with
    /// `api_otp`: its code logged in once already, and PVE counts a reused code as a
    /// failure towards locking the user's TOTP.
    fn login_again(&self, again: &Relogin, why: &str) -> Result<Credentials, ApiError> {
        if again.otp.is_some() {
            return Err(ApiError::other(ApiErrorKind::Auth, used_code_message(&again.user, why)));
        }
        self.login_and_keep(&again.user, &again.password, None)
    }

    /// `POST /access/ticket` with the ticket as the password; `None` when PVE refuses it.
    fn renew(&self, user: &str, ticket: &str) -> Result<Option<Credentials>, ApiError> {
        let form = [("username", user.to_string()), ("password", ticket.to_string())];
        match self.send_value(Method::Post, "/access/ticket", &form, Answer::Data) {
            Ok(data) => match super::auth::parse_login(&data) {
                Login::Ticket { ticket, csrf } => Ok(Some(self.keep(user, ticket, csrf))),
                _ => Ok(None),
            },
            Err(e) if e.is_status(401) || e.is_status(400) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn register_secret(&self, secret: &str) {
        if let Some(sink) = &self.secret_sink {
            sink(secret);
        }
    }

    fn login_and_keep(&self, user: &str, password: &str, otp: Option<&str>) -> Result<Credentials, ApiError> {
        let (ticket, csrf) = self.login(user, password, otp)?;
        Ok(self.keep(user, ticket, csrf))
    }

    /// A ticket PVE gave: never printed, left for the run, used from now on, renewed
    /// when due.
    fn keep(&self, user: &str, ticket: String, csrf: String) -> Credentials {
        self.register_secret(&ticket);
        self.register_secret(&csrf);
        if let Some(sink) = &self.ticket_sink {
            *sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(NewTicket {
                ticket: ticket.clone(),
                csrf: csrf.clone(),
                user: user.to_string(),
            });
        }
        self.set_clock(Some(Instant::now()));
        Credentials::Ticket {
            cookie: ticket,
            csrf,
            user: user.to_string(),
        }
    }

    /// `made`: when PVE made the ticket in use (`None`: too long ago to say: due now).
    fn set_clock(&self, made: Option<Instant>) {
        let renew_after = self.renew_after;
        let made = made.unwrap_or_else(|| Instant::now() - renew_after.min(Duration::from_secs(86_400)));
        *self.ticket_clock.lock().unwrap_or_else(|e| e.into_inner()) = Some(TicketClock { made, renew_after });
    }

    fn clock(&self) -> Option<TicketClock> {
        *self.ticket_clock.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The end of a task whose run's ticket PVE refused (`why`) when `api_otp` is set: its
/// code logged in once already and must not be sent again.
pub(super) fn used_code_message(user: &str, why: &str) -> String {
    format!(
        "Couldn't authenticate user: {user}: {why}, and api_otp cannot log in again: a TOTP code logs in once, and \
         the run's first login used it (PVE refuses it as reused and counts that towards locking the user's TOTP). \
         Run the play again with a fresh code, or use an API token (api_token_id, api_token_secret)"
    )
}

/// The user a ticket names (`PVE:<user>:<HEX>::<signature>`, `:` in the user as `%3A`
/// is not expected of a PVE user id): a kept ticket of another user is never sent.
fn ticket_user(ticket: &str) -> Option<&str> {
    let data = ticket.strip_prefix("PVE:")?.split_once("::")?.0;
    let (user, hex) = data.rsplit_once(':')?;
    (!user.starts_with("!tfa!") && !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit())).then_some(user)
}

#[cfg(test)]
mod tests {
    use super::{ticket_user, used_code_message};

    #[test]
    fn the_used_code_message_says_why_and_what_to_do() {
        let m = used_code_message("mfa@pve", "PVE refused the run's ticket (expired or revoked)");
        assert!(
            m.starts_with("Couldn't authenticate user: mfa@pve: PVE refused the run's ticket"),
            "{m}"
        );
        for said in [
            "a TOTP code logs in once",
            "the run's first login used it",
            "fresh code",
            "API token",
        ] {
            assert!(m.contains(said), "{said}: {m}");
        }
    }

    #[test]
    fn a_ticket_names_its_user_and_a_half_ticket_none() {
        assert_eq!(ticket_user("PVE:root@pam:6553F100::c2ln"), Some("root@pam"));
        assert_eq!(ticket_user("PVE:!tfa!mfa@pve:6553F100::c2ln"), None);
        assert_eq!(ticket_user("PVEVNC:root@pam:6553F100::c2ln"), None);
        assert_eq!(ticket_user("garbage"), None);
    }
}
