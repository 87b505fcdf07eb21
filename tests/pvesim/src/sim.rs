//! Shared state of a running simulator: configuration, schema, cluster, faults, log.

use crate::auth::Keys;
use crate::control::{Faults, RequestLog};
use crate::schema::Schema;
use crate::state::Cluster;
use crate::SimConfig;
use std::sync::{Mutex, MutexGuard};

pub struct SimInner {
    pub cfg: SimConfig,
    pub schema: Schema,
    pub state: Mutex<Cluster>,
    /// The scenario's cluster, for `POST /_pvesim/reset`.
    pub initial: Cluster,
    pub keys: Keys,
    pub faults: Mutex<Faults>,
    pub log: Mutex<RequestLog>,
    /// SHA-256 fingerprint of the server certificate (shown in `/nodes`).
    pub fingerprint: String,
    /// Files received by `upload`, by temporary file name, until the API call takes them.
    pub uploads: Mutex<std::collections::HashMap<String, crate::content::transfer::Received>>,
    /// Users' second factors: used TOTP counters, failure counts, locks.
    pub tfa: Mutex<crate::tfa::TfaUsers>,
    /// Requests held back until the test releases them (`/_pvesim/hold`).
    pub hold: crate::hold::Hold,
    /// Serialises writes of the state file.
    persist_lock: Mutex<()>,
}

impl SimInner {
    pub fn new(cfg: SimConfig, schema: Schema, initial: Cluster, current: Cluster, fingerprint: String) -> SimInner {
        SimInner {
            keys: Keys::with_lifetime(cfg.ticket_lifetime_secs),
            cfg,
            schema,
            state: Mutex::new(current),
            initial,
            faults: Mutex::new(Faults::default()),
            log: Mutex::new(RequestLog::default()),
            fingerprint,
            uploads: Mutex::new(Default::default()),
            tfa: Mutex::new(Default::default()),
            hold: Default::default(),
            persist_lock: Mutex::new(()),
        }
    }

    /// Counts a ticket `POST /access/ticket` gave (a login, or a renewal) and keeps it
    /// and its CSRF token for `GET /_pvesim/tickets`.
    pub fn count_ticket(&self, renewal: bool, ticket: &str, csrf: &str) {
        let mut l = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if renewal {
            l.renewals += 1;
        } else {
            l.logins += 1;
        }
        l.issued.extend([ticket.to_string(), csrf.to_string()]);
    }

    /// Counts one second-factor answer `POST /access/ticket` judged.
    pub fn count_second_factor(&self, verdict: crate::tfa::Verdict) {
        use crate::tfa::Verdict;
        let mut l = self.log.lock().unwrap_or_else(|e| e.into_inner());
        match verdict {
            Verdict::Accepted { totp } => l.totp_accepted += u64::from(totp),
            Verdict::Refused { totp_failure } => {
                l.codes_refused += 1;
                l.totp_failures += u64::from(totp_failure);
            }
        }
    }

    pub fn tfa(&self) -> MutexGuard<'_, crate::tfa::TfaUsers> {
        self.tfa.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lock the cluster; a panic elsewhere must not wedge the simulator.
    pub fn cluster(&self) -> MutexGuard<'_, Cluster> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn uploads(&self) -> MutexGuard<'_, std::collections::HashMap<String, crate::content::transfer::Received>> {
        self.uploads.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn faults(&self) -> MutexGuard<'_, Faults> {
        self.faults.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Write the state file (if configured) atomically.
    pub fn persist(&self, cluster: &Cluster) {
        let Some(path) = &self.cfg.state_file else { return };
        let _g = self.persist_lock.lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(text) = serde_json::to_string(cluster) {
            let tmp = path.with_extension("tmp");
            if std::fs::write(&tmp, text).is_ok() {
                let _ = std::fs::rename(&tmp, path);
            }
        }
    }

    /// A node is reachable unless offline in the scenario or by a fault.
    pub fn node_reachable(&self, cluster: &Cluster, node: &str) -> bool {
        cluster.node(node).is_some_and(|n| n.online) && !self.faults().node_unreachable(node)
    }
}
