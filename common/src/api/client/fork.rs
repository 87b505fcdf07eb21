//! Another client to the same API as the same identity, with its own connection: for
//! callers that read many things at once (the inventory's per-guest reads, one client
//! per worker thread), without a second login.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{Connector, TcpConnector};

use super::auth::Credentials;
use super::tls::{self, Observed};
use super::transport::{ReasonPhrase, RequestProgress, TlsConnector};
use super::{ApiError, ApiErrorKind, Client, IDLE_REUSE_LIMIT};

impl Client {
    /// A client with the same endpoint, trust, credentials (token, or this client's
    /// ticket), timeout and retry budget, and a connection of its own. Sends nothing.
    /// Reads through a plan are not carried over (the plan is a check run's).
    pub fn fork(&self) -> Result<Client, ApiError> {
        let observed = Arc::new(Observed::default());
        let reason = Arc::new(ReasonPhrase::default());
        let progress = Arc::new(RequestProgress::default());
        let server_name = rustls::pki_types::ServerName::try_from(self.endpoint.host.clone()).map_err(|_| {
            ApiError::other(ApiErrorKind::Other, format!("api_host {} is neither a valid host name nor an IP address", self.endpoint.host))
        })?;
        let connector = ().chain(TcpConnector::default()).chain(TlsConnector {
            config: tls::client_config(&self.trust, observed.clone())?,
            server_name,
            reason: reason.clone(),
            progress: progress.clone(),
        });
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .https_only(true)
            .timeout_global(Some(Duration::from_secs(self.timeout_secs)))
            .max_redirects(0)
            .user_agent(concat!("ferrox.proxmox/", env!("CARGO_PKG_VERSION")))
            .accept("application/json")
            .max_idle_connections(1)
            .max_idle_connections_per_host(1)
            .max_idle_age(IDLE_REUSE_LIMIT)
            .build();
        let credentials = match &self.credentials {
            Credentials::None => Credentials::None,
            Credentials::Token { header, token } => Credentials::Token { header: header.clone(), token: token.clone() },
            Credentials::Ticket { cookie, csrf, user } => {
                Credentials::Ticket { cookie: cookie.clone(), csrf: csrf.clone(), user: user.clone() }
            }
        };
        Ok(Client {
            agent: ureq::Agent::with_parts(config, connector, DefaultResolver::default()),
            endpoint: self.endpoint.clone(),
            base_url: self.base_url.clone(),
            credentials,
            trust: self.trust.clone(),
            timeout_secs: self.timeout_secs,
            observed,
            reason,
            progress,
            sent: AtomicU32::new(0),
            plan: None,
            retry_budget_ms: AtomicU64::new(self.retry_budget_ms.load(Ordering::Relaxed)),
            upids: Mutex::new(Vec::new()),
            repeated: Mutex::new(Vec::new()),
        })
    }
}
