//! One login per run and cluster: password auth with a ticket an earlier task of the run
//! got as the same identity ([`KeptTicket`], handed over by the run layer,
//! `crate::run::ticket`) instead of `POST /access/ticket` with the password (and a TOTP
//! code that may be stale by now).
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
//! failure), and once per *cluster*, not per endpoint: the last accepted step is kept in
//! `tfa.cfg`, which pmxcfs shares between all nodes. So the run knows its tickets by
//! cluster, and which cluster an `api_host` spelling reaches is learnt from PVE, not from
//! the host string (`127.0.0.1`, `localhost`, a node's IP and its name are one node;
//! two nodes' names one cluster):
//!
//! - After a login, the client reads the certificate fingerprints of every node of the
//!   cluster as PVE reports them (`GET /nodes`' `ssl_fingerprint`, the certificate each
//!   node's pveproxy serves; any authenticated user sees them) and leaves them with the
//!   ticket ([`TicketReport::certs`]): one call per cluster and run.
//! - At an endpoint the run has not placed yet, the identity's tickets of the clusters
//!   the run knows ([`RunTickets::candidates`]) are sent only where the endpoint's own
//!   certificate (seen in the TLS handshake of an unauthenticated `GET /access/ticket`,
//!   once per such endpoint and run) is one of that cluster's nodes': a ticket is never
//!   shown to a server that is not a node of the cluster that made it.
//! - A ticket so chosen is on trial until PVE answers a request with it (a ticket is
//!   accepted exactly by the nodes sharing the cluster's auth key, in the same pmxcfs as
//!   `tfa.cfg`); that names the endpoint's cluster for the run
//!   ([`TicketReport::cluster`]). Refused (or no certificate matched): the task logs in,
//!   and its code has not been used on that cluster by this run.
//!
//! The cluster's name in the login answer is not used: PVE gives it only with Sys.Audit
//! on `/` and on a cluster (not a single node), and two clusters may share a name. An
//! endpoint in front of the nodes with a certificate of its own (a reverse proxy) is not
//! recognised: its first task logs in, which with `api_otp` PVE refuses as reused.
//!
//! With `api_otp`, nothing here ever logs in again on a cluster after the run's first
//! login there: a refused ticket of the endpoint's known cluster ends the task with a
//! message saying so.
//!
//! The user is PVE's: a realm set `case-sensitive: 0` logs `Totp@ad` in as `user.cfg`'s
//! `totp@ad`, and the ticket carries that spelling. The run hands a ticket only to the
//! identity (exact `api_user`, password) that got it, so here the ticket's user is
//! trusted when it equals `api_user` ignoring case, and requests, renewals and task
//! owners use the ticket's spelling.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::auth::{Credentials, Login};
use super::{Answer, ApiError, ApiErrorKind, Client, Method};

/// A ticket kept by the run for this identity on one cluster, and when to renew it.
#[derive(Clone)]
pub struct KeptTicket {
    /// The `PVEAuthCookie` ticket.
    pub ticket: String,
    /// The CSRF prevention token that goes with it on writes.
    pub csrf: String,
    /// Seconds since PVE made it (as the controller measured).
    pub age_secs: f64,
    /// The run's name for the cluster that made it ([`TicketReport::cluster`]).
    pub cluster: String,
    /// The certificate fingerprints of that cluster's nodes ([`TicketReport::certs`]).
    pub certs: Vec<String>,
}

/// What the run hands a password client: the ticket it keeps for this identity, where a
/// ticket the client gets goes, and the age at which tickets are renewed.
pub struct RunTickets {
    /// The ticket the run keeps for this identity on this endpoint's cluster, if the run
    /// knows the endpoint's cluster and has one.
    pub kept: Option<KeptTicket>,
    /// While the run does not know this endpoint's cluster: the identity's tickets of the
    /// clusters it knows, tried in turn before any login.
    pub candidates: Vec<KeptTicket>,
    /// Where the client leaves what the run learns from it.
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
    /// The user PVE made it for, in PVE's spelling (`root@pam`).
    pub user: String,
}

/// What a client leaves for the run.
#[derive(Clone, Default)]
pub struct TicketReport {
    /// A ticket it got (a login or a renewal).
    pub got: Option<NewTicket>,
    /// The run's cluster this endpoint belongs to, when PVE accepted a ticket of that
    /// cluster here (`None` with `got`: a login on a cluster the run had no name for).
    pub cluster: Option<String>,
    /// After a login: the certificate fingerprints (`AB:CD:…`) of the cluster's nodes, as
    /// `GET /nodes` reports them, and of this endpoint.
    pub certs: Vec<String>,
}

/// Where a client leaves what the run learns from it.
pub type TicketSink = Arc<Mutex<TicketReport>>;

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

/// What the ticket in use says about this endpoint's cluster.
#[derive(Clone, Default)]
pub(super) enum Standing {
    /// Got by this client's own login (or no ticket): the run has no name for the cluster.
    #[default]
    Own,
    /// A ticket of the run's cluster `0`, which PVE accepts here.
    Known(String),
    /// A ticket of the run's `cluster` no answer has shown PVE accepts here yet; `rest`:
    /// the run's other clusters' tickets, to try after a refusal.
    Trial { cluster: String, rest: Vec<KeptTicket> },
}

impl Client {
    /// Ticket credentials for `user`: the kept ticket of the endpoint's cluster (renewed
    /// when due), else the run's other clusters' tickets on trial, else a login.
    pub(super) fn password_credentials(
        &self,
        user: &str,
        password: &str,
        otp: Option<&str>,
        kept: Option<KeptTicket>,
        candidates: Vec<KeptTicket>,
    ) -> Result<Credentials, ApiError> {
        let again = Relogin {
            user: user.to_string(),
            password: password.to_string(),
            otp: otp.map(str::to_string),
        };
        let Some(kept) = kept.filter(|k| names_user(&k.ticket, user)) else {
            let candidates = candidates.into_iter().filter(|k| names_user(&k.ticket, user)).collect();
            return self.try_candidates(again, candidates);
        };
        self.set_standing(Standing::Known(kept.cluster.clone()));
        self.register_secret(&kept.ticket);
        self.register_secret(&kept.csrf);
        let as_user = pve_user(&kept.ticket, user);
        let age = Duration::try_from_secs_f64(kept.age_secs).unwrap_or(Duration::MAX);
        if age >= self.renew_after {
            return match self.renew(&as_user, &kept.ticket)? {
                Some(renewed) => Ok(renewed),
                None => self.login_again(&again, "PVE refused to renew the run's ticket"),
            };
        }
        *self.relogin.lock().unwrap_or_else(|e| e.into_inner()) = Some(again);
        self.set_clock(Instant::now().checked_sub(age));
        Ok(Credentials::Ticket {
            cookie: kept.ticket,
            csrf: kept.csrf,
            user: as_user,
        })
    }

    /// The run's tickets of other clusters, in turn, at an endpoint whose cluster the run
    /// does not know: the first not yet due for renewal goes on trial (the task's next
    /// answer decides), one due is renewed here (PVE renewing it is the proof). None
    /// left: a login, whose code (if any) this run has not used on this cluster.
    fn try_candidates(&self, again: Relogin, candidates: Vec<KeptTicket>) -> Result<Credentials, ApiError> {
        let here = match candidates.is_empty() {
            true => None,
            false => self.endpoint_certificate(),
        };
        let mut left = candidates.into_iter().filter(|c| {
            here.as_ref()
                .is_some_and(|cert| c.certs.iter().any(|k| k.eq_ignore_ascii_case(cert)))
        });
        while let Some(candidate) = left.next() {
            self.register_secret(&candidate.ticket);
            self.register_secret(&candidate.csrf);
            let as_user = pve_user(&candidate.ticket, &again.user);
            self.set_standing(Standing::Trial {
                cluster: candidate.cluster.clone(),
                rest: vec![],
            });
            let age = Duration::try_from_secs_f64(candidate.age_secs).unwrap_or(Duration::MAX);
            if age >= self.renew_after {
                match self.renew(&as_user, &candidate.ticket)? {
                    Some(renewed) => return Ok(renewed),
                    None => continue,
                }
            }
            self.set_standing(Standing::Trial {
                cluster: candidate.cluster,
                rest: left.collect(),
            });
            *self.relogin.lock().unwrap_or_else(|e| e.into_inner()) = Some(again);
            self.set_clock(Instant::now().checked_sub(age));
            return Ok(Credentials::Ticket {
                cookie: candidate.ticket,
                csrf: candidate.csrf,
                user: as_user,
            });
        }
        self.set_standing(Standing::Own);
        self.login_and_keep(&again.user, &again.password, again.otp.as_deref())
    }

    /// The fingerprint of the certificate this endpoint serves: seen in this client's
    /// first handshake, made by an unauthenticated `GET /access/ticket` (PVE answers it to
    /// anyone) when there was none yet. Its answer does not matter; a failure to connect
    /// is left for the login to report.
    fn endpoint_certificate(&self) -> Option<String> {
        if let Some(seen) = self.observed.first_accepted() {
            return Some(seen);
        }
        let _ = self.send_value(Method::Get, "/access/ticket", &[], Answer::Data);
        self.observed.first_accepted()
    }

    /// After a login on a cluster the run has no name for: the certificates of its nodes
    /// (`GET /nodes`' `ssl_fingerprint`) and of this endpoint, for the run, so another
    /// spelling of any of them gets this ticket. A failure leaves this endpoint's alone.
    pub(super) fn learn_cluster_certificates(&self) {
        let learns = self.ticket_sink.as_ref().is_some_and(|sink| {
            let report = sink.lock().unwrap_or_else(|e| e.into_inner());
            report.got.is_some() && report.cluster.is_none() && report.certs.is_empty()
        });
        if !learns || !matches!(*self.standing.lock().unwrap_or_else(|e| e.into_inner()), Standing::Own) {
            return;
        }
        let mut certs: Vec<String> = self.observed.first_accepted().into_iter().collect();
        if let Ok(nodes) = self.call(Method::Get, "/nodes", &[], Answer::Data) {
            let reported = nodes.as_array().into_iter().flatten();
            certs.extend(reported.filter_map(|n| n["ssl_fingerprint"].as_str().map(str::to_ascii_uppercase)));
        }
        certs.sort();
        certs.dedup();
        self.report(|r| r.certs = certs);
    }

    /// After a 401: when the credentials are a kept ticket not yet replaced, the next of
    /// the run's tickets on trial, or one fresh login, replaces them (`Ok(true)`: send
    /// again). A login's failure is the task's.
    pub(super) fn relogin_after_refusal(&self) -> Result<bool, ApiError> {
        let Some(again) = self.relogin.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return Ok(false);
        };
        let standing = std::mem::take(&mut *self.standing.lock().unwrap_or_else(|e| e.into_inner()));
        let fresh = match standing {
            // Not this endpoint's cluster: its code, if any, is unused here.
            Standing::Trial { rest, .. } => self.try_candidates(again, rest)?,
            known => {
                self.set_standing(known);
                self.login_again(&again, "PVE refused the run's ticket (expired or revoked)")?
            }
        };
        *self.credentials() = fresh;
        self.learn_cluster_certificates();
        Ok(true)
    }

    /// An answer other than 401 came for the ticket in use: PVE accepts it here, so a
    /// ticket on trial names this endpoint's cluster, for the run.
    pub(super) fn ticket_answered(&self) {
        let mut standing = self.standing.lock().unwrap_or_else(|e| e.into_inner());
        if let Standing::Trial { cluster, .. } = &*standing {
            let cluster = cluster.clone();
            *standing = Standing::Known(cluster.clone());
            drop(standing);
            self.report(|r| r.cluster = Some(cluster));
        }
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
    /// `api_otp`: its code logged in once already on this cluster, and PVE counts a
    /// reused code as a failure towards locking the user's TOTP.
    fn login_again(&self, again: &Relogin, why: &str) -> Result<Credentials, ApiError> {
        if again.otp.is_some() {
            return Err(ApiError::other(ApiErrorKind::Auth, used_code_message(&again.user, why)));
        }
        self.login_and_keep(&again.user, &again.password, None)
    }

    /// `POST /access/ticket` with the ticket as the password; `None` when PVE refuses it.
    /// A renewal is PVE accepting the ticket here: one on trial names the cluster.
    fn renew(&self, user: &str, ticket: &str) -> Result<Option<Credentials>, ApiError> {
        let form = [("username", user.to_string()), ("password", ticket.to_string())];
        match self.send_value(Method::Post, "/access/ticket", &form, Answer::Data) {
            Ok(data) => match super::auth::parse_login(&data) {
                Login::Ticket { ticket, csrf } => {
                    self.ticket_answered();
                    Ok(Some(self.keep(user, ticket, csrf)))
                }
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

    /// A ticket PVE gave: never printed, left for the run (with the cluster it belongs
    /// to, when the run has a name for it), used from now on as the user PVE made it
    /// for, renewed when due.
    fn keep(&self, user: &str, ticket: String, csrf: String) -> Credentials {
        self.register_secret(&ticket);
        self.register_secret(&csrf);
        let user = pve_user(&ticket, user);
        let cluster = match &*self.standing.lock().unwrap_or_else(|e| e.into_inner()) {
            Standing::Known(cluster) => Some(cluster.clone()),
            _ => None,
        };
        let got = NewTicket {
            ticket: ticket.clone(),
            csrf: csrf.clone(),
            user: user.clone(),
        };
        self.report(|r| {
            r.got = Some(got);
            r.cluster = cluster;
        });
        self.set_clock(Some(Instant::now()));
        Credentials::Ticket {
            cookie: ticket,
            csrf,
            user,
        }
    }

    fn report(&self, change: impl FnOnce(&mut TicketReport)) {
        if let Some(sink) = &self.ticket_sink {
            change(&mut sink.lock().unwrap_or_else(|e| e.into_inner()));
        }
    }

    fn set_standing(&self, standing: Standing) {
        *self.standing.lock().unwrap_or_else(|e| e.into_inner()) = standing;
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

/// Whether `ticket` is one of `user`'s as PVE resolved the name: PVE's `lookup_username`
/// folds case only (in a realm set `case-sensitive: 0`), and the run hands a ticket only
/// to the exact identity that got it, so a difference of case alone is PVE's spelling.
fn names_user(ticket: &str, user: &str) -> bool {
    ticket_user(ticket).is_some_and(|owner| owner.to_lowercase() == user.to_lowercase())
}

/// The user requests run as: the one the ticket names (PVE's spelling), else `user`.
fn pve_user(ticket: &str, user: &str) -> String {
    ticket_user(ticket).unwrap_or(user).to_string()
}

#[cfg(test)]
mod tests {
    use super::{names_user, pve_user, ticket_user, used_code_message};

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

    #[test]
    fn a_ticket_is_the_users_whatever_the_case_pve_resolved_it_to() {
        let ticket = "PVE:totp@ad:6553F100::c2ln";
        assert!(names_user(ticket, "Totp@ad"));
        assert!(names_user(ticket, "totp@ad"));
        assert!(!names_user(ticket, "other@ad"));
        assert!(!names_user("PVE:!tfa!totp@ad:6553F100::c2ln", "totp@ad"));
        assert_eq!(pve_user(ticket, "Totp@ad"), "totp@ad", "requests run as PVE's spelling");
        assert_eq!(pve_user("garbage", "Totp@ad"), "Totp@ad");
    }
}
