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

use std::sync::{Arc, Mutex};

use super::auth::{Credentials, Login};
use super::{Answer, ApiError, Client, Method};

/// A ticket kept by the run for this identity, and when to renew it.
#[derive(Clone)]
pub struct KeptTicket {
    pub ticket: String,
    pub csrf: String,
    /// Seconds since PVE made it (as the controller measured).
    pub age_secs: f64,
    /// Renewed before use when at least this old.
    pub renew_after_secs: f64,
}

/// A ticket this client got from PVE, for the run to keep.
#[derive(Clone)]
pub struct NewTicket {
    pub ticket: String,
    pub csrf: String,
    pub user: String,
}

/// Where a client leaves a ticket it got.
pub type TicketSink = Arc<Mutex<Option<NewTicket>>>;

/// Told every secret the client holds or gets (tickets, CSRF tokens) before it is used,
/// so whoever prints (the module protocol) can scrub it from every output; the client
/// itself prints nothing.
pub type SecretSink = Arc<dyn Fn(&str) + Send + Sync>;

/// The task's own credentials, for one fresh login after a kept ticket was refused.
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
        if kept.age_secs >= kept.renew_after_secs {
            return match self.renew(user, &kept.ticket)? {
                Some(renewed) => Ok(renewed),
                None => self.login_and_keep(user, password, otp),
            };
        }
        *self.relogin.lock().unwrap_or_else(|e| e.into_inner()) = Some(Relogin {
            user: user.to_string(),
            password: password.to_string(),
            otp: otp.map(str::to_string),
        });
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
        let fresh = self.login_and_keep(&again.user, &again.password, again.otp.as_deref())?;
        *self.credentials() = fresh;
        Ok(true)
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

    /// A ticket PVE gave: never printed, left for the run, used from now on.
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
        Credentials::Ticket {
            cookie: ticket,
            csrf,
            user: user.to_string(),
        }
    }
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
    use super::ticket_user;

    #[test]
    fn a_ticket_names_its_user_and_a_half_ticket_none() {
        assert_eq!(ticket_user("PVE:root@pam:6553F100::c2ln"), Some("root@pam"));
        assert_eq!(ticket_user("PVE:!tfa!mfa@pve:6553F100::c2ln"), None);
        assert_eq!(ticket_user("PVEVNC:root@pam:6553F100::c2ln"), None);
        assert_eq!(ticket_user("garbage"), None);
    }
}
