//! The run's login tickets: the first task of a run that logs in with `api_password`
//! (and `api_otp`) on a cluster leaves its ticket and CSRF token with the action plugin,
//! which keeps them in the run's temp dir (`plugins/plugin_utils/ticket_store.py`) per
//! user, password and cluster, and learns which cluster each `api_host:api_port`
//! reaches; a later task of the same run and identity gets the ticket in [`TICKET_ARG`]
//! and sends it instead of logging in (the client's side, renewal, the trial of other
//! clusters' tickets at a new endpoint and the fallback to a fresh login:
//! `api::client::ticket_reuse`, which also says why the cluster, not the endpoint).
//!
//! Hand-over: `{"renew_after": seconds, "kept": {"ticket", "csrf", "user", "endpoint",
//! "age", "cluster"} | null, "candidates": [{"ticket", "csrf", "user", "age",
//! "cluster", "certs"}], "leave": bool}` in (`candidates`: the identity's tickets of the
//! clusters the run knows, with their nodes' certificate fingerprints, while it does not
//! know the endpoint's); back in the private result key [`TICKET_KEY`], added after
//! masking and taken out by the action plugin before anything shows the result:
//! `{"ticket", "csrf", "user"}` of a ticket the task got (login or renewal), `"certs"`
//! after a login (its cluster's nodes' certificates), and/or `"cluster"`, the run's name
//! of the cluster PVE showed this endpoint belongs to — unless `leave` is false: an async task's result is read by
//! `async_status`, which would show it. Without [`TICKET_ARG`] (reuse off, a module run
//! by hand) a task logs in itself and hands nothing back.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use ferrox_pve_client::client::url::DEFAULT_PORT;
use ferrox_pve_client::client::{KeptTicket, RunTickets, TicketSink};
use ferrox_pve_client::connection::ConnectionParams;

/// The controller's environment variable that sets after how many seconds a kept ticket
/// is renewed (`0` turns reuse off), read by the action plugin
/// (`plugins/plugin_utils/_wire.py`); its default is the client's `DEFAULT_RENEW_AFTER`.
pub const RENEW_AFTER_ENV: &str = "FERROX_TICKET_RENEW_AFTER";

/// The module argument the action plugin hands the kept ticket in.
pub const TICKET_ARG: &str = "_ferrox_ticket";
/// The result key a ticket the task got goes back in.
pub const TICKET_KEY: &str = "_ferrox_ticket";

/// What the action plugin hands a task: reuse is on, and the tickets it keeps for the
/// task's identity.
#[derive(Deserialize)]
pub struct TicketHandover {
    /// A kept ticket at least this old (seconds) is renewed before use.
    renew_after: f64,
    #[serde(default)]
    kept: Option<Kept>,
    #[serde(default)]
    candidates: Vec<Kept>,
    /// Whether a ticket the task gets goes back in its result (not for async tasks).
    #[serde(default = "leave_by_default")]
    leave: bool,
    #[serde(skip)]
    sink: TicketSink,
}

/// A kept ticket as the action plugin stores it.
#[derive(Deserialize)]
struct Kept {
    ticket: String,
    csrf: String,
    /// `api_user` as the task that got it spelt it.
    user: String,
    /// `host:port` as this task names them (the kept ticket only).
    #[serde(default)]
    endpoint: Option<String>,
    /// Seconds since it was got.
    age: f64,
    /// The run's name for the cluster that made it.
    cluster: String,
    /// The certificate fingerprints of its nodes (candidates: where it may be sent).
    #[serde(default)]
    certs: Vec<String>,
}

fn leave_by_default() -> bool {
    true
}

impl Kept {
    /// As the client takes it, when it is this connection's user's and its age is sane.
    fn for_user(&self, conn: &ConnectionParams) -> Option<KeptTicket> {
        if self.user != conn.user || self.age.is_nan() || self.age < 0.0 {
            return None;
        }
        Some(KeptTicket {
            ticket: self.ticket.clone(),
            csrf: self.csrf.clone(),
            age_secs: self.age,
            cluster: self.cluster.clone(),
            certs: self.certs.clone(),
        })
    }
}

impl TicketHandover {
    /// Reads [`TICKET_ARG`]; `None` when it is unreadable (then the task logs in).
    pub fn from_value(value: &Value) -> Option<TicketHandover> {
        let handover: TicketHandover = serde_json::from_value(value.clone()).ok()?;
        handover.renew_after.is_finite().then_some(handover)
    }

    /// The kept ticket when it is this connection's: password auth, same user and
    /// endpoint (the action plugin chose it by them too; checked again here).
    pub fn kept_for(&self, conn: &ConnectionParams) -> Option<KeptTicket> {
        let kept = self.kept.as_ref()?;
        conn.password.as_ref()?;
        if kept.endpoint.as_deref() != Some(endpoint(conn).as_str()) {
            return None;
        }
        kept.for_user(conn)
    }

    /// The other clusters' tickets of this connection's identity, to try at an endpoint
    /// whose cluster the run does not know yet.
    pub fn candidates_for(&self, conn: &ConnectionParams) -> Vec<KeptTicket> {
        if conn.password.is_none() {
            return vec![];
        }
        self.candidates.iter().filter_map(|c| c.for_user(conn)).collect()
    }

    /// What the task's client gets from the run: the kept ticket when it is this
    /// connection's, the other clusters' to try, the sink, the renewal age.
    pub fn for_connection(&self, conn: &ConnectionParams) -> RunTickets {
        RunTickets {
            kept: self.kept_for(conn),
            candidates: self.candidates_for(conn),
            sink: self.sink(),
            renew_after_secs: self.renew_after,
        }
    }

    /// Where the task's client leaves what it learns.
    pub fn sink(&self) -> TicketSink {
        Arc::clone(&self.sink)
    }

    /// What goes back in [`TICKET_KEY`]: a ticket the task got, and the cluster this
    /// endpoint was shown to belong to; `None`: nothing learnt.
    pub fn got(&self) -> Option<Value> {
        if !self.leave {
            return None;
        }
        let report = self.sink.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut back = Map::new();
        if let Some(got) = report.got {
            back.extend([
                ("ticket".to_string(), json!(got.ticket)),
                ("csrf".to_string(), json!(got.csrf)),
                ("user".to_string(), json!(got.user)),
            ]);
        }
        if let Some(cluster) = report.cluster {
            back.insert("cluster".into(), json!(cluster));
        }
        if !report.certs.is_empty() {
            back.insert("certs".into(), json!(report.certs));
        }
        (!back.is_empty()).then_some(Value::Object(back))
    }
}

/// `host:port` of a connection, as `ticket_store.py` spells it.
pub fn endpoint(conn: &ConnectionParams) -> String {
    format!("{}:{}", conn.host, conn.port.unwrap_or(DEFAULT_PORT))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrox_pve_client::client::{NewTicket, TicketReport};

    fn conn(user: &str, port: Option<u16>, password: bool) -> ConnectionParams {
        ConnectionParams {
            host: "pve.example".into(),
            port,
            user: user.into(),
            password: password.then(|| "pw".to_string()),
            ..Default::default()
        }
    }

    fn handover(age: f64) -> TicketHandover {
        TicketHandover::from_value(&json!({"renew_after": 3600, "kept": {
            "ticket": "PVE:root@pam:6553F100::c2ln", "csrf": "6553F100:x", "user": "root@pam",
            "endpoint": "pve.example:8006", "age": age, "cluster": "pve.example:8006"}}))
        .unwrap()
    }

    #[test]
    fn a_kept_ticket_is_only_for_its_user_endpoint_and_password_auth() {
        let h = handover(12.0);
        let kept = h.kept_for(&conn("root@pam", None, true)).unwrap();
        assert_eq!(kept.age_secs, 12.0);
        assert_eq!(h.for_connection(&conn("root@pam", None, true)).renew_after_secs, 3600.0);
        assert!(
            h.kept_for(&conn("root@pam", Some(8006), true)).is_some(),
            "8006 is the default port"
        );
        assert!(h.kept_for(&conn("ansible@pve", None, true)).is_none(), "another user");
        assert!(h.kept_for(&conn("root@pam", Some(443), true)).is_none(), "another port");
        assert!(h.kept_for(&conn("root@pam", None, false)).is_none(), "token auth");
        assert!(handover(-1.0).kept_for(&conn("root@pam", None, true)).is_none());
    }

    #[test]
    fn a_ticket_got_goes_back_and_nothing_else() {
        let h = TicketHandover::from_value(&json!({"renew_after": 60})).unwrap();
        assert!(h.got().is_none());
        h.sink().lock().unwrap().cluster = Some("c1".into());
        assert_eq!(h.got(), Some(json!({"cluster": "c1"})), "the endpoint's cluster alone");
        *h.sink().lock().unwrap() = TicketReport {
            got: Some(NewTicket {
                ticket: "T".into(),
                csrf: "C".into(),
                user: "u@pve".into(),
            }),
            cluster: None,
            certs: vec!["AA:01".into()],
        };
        assert_eq!(
            h.got(),
            Some(json!({"ticket": "T", "csrf": "C", "user": "u@pve", "certs": ["AA:01"]}))
        );
        assert!(
            TicketHandover::from_value(&json!({"kept": null})).is_none(),
            "renew_after is required"
        );
    }

    #[test]
    fn an_async_task_uses_the_kept_ticket_but_leaves_none() {
        let h = TicketHandover::from_value(&json!({"renew_after": 60, "leave": false, "kept": {
            "ticket": "PVE:root@pam:6553F100::c2ln", "csrf": "6553F100:x", "user": "root@pam",
            "endpoint": "pve.example:8006", "age": 1.0, "cluster": "c1"}}))
        .unwrap();
        assert!(h.kept_for(&conn("root@pam", None, true)).is_some());
        h.sink().lock().unwrap().got = Some(NewTicket {
            ticket: "T".into(),
            csrf: "C".into(),
            user: "root@pam".into(),
        });
        assert!(h.got().is_none(), "async_status would show it");
    }

    #[test]
    fn other_clusters_tickets_are_candidates_for_their_user_and_password_auth_only() {
        let h = TicketHandover::from_value(&json!({"renew_after": 60, "kept": null, "candidates": [
            {"ticket": "PVE:root@pam:6553F100::c2ln", "csrf": "x", "user": "root@pam", "age": 3.0, "cluster": "a:8006", "certs": ["AA:01"]},
            {"ticket": "PVE:root@pam:6553F200::c2ln", "csrf": "y", "user": "root@pam", "age": 1.0, "cluster": "b:8006"},
            {"ticket": "PVE:ansible@pve:6553F200::c2ln", "csrf": "z", "user": "ansible@pve", "age": 1.0, "cluster": "b:8006"}]}))
        .unwrap();
        let run = h.for_connection(&conn("root@pam", None, true));
        assert!(run.kept.is_none());
        let clusters: Vec<_> = run.candidates.iter().map(|c| c.cluster.as_str()).collect();
        assert_eq!(clusters, ["a:8006", "b:8006"]);
        assert_eq!(run.candidates[0].certs, ["AA:01"]);
        assert!(
            h.candidates_for(&conn("root@pam", None, false)).is_empty(),
            "token auth"
        );
    }
}
