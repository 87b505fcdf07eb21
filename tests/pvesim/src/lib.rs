//! pvesim: a Proxmox VE API simulator faithful enough to test API clients against.
//!
//! It serves the subset of the PVE 9.1 REST API that VM automation uses, over HTTPS,
//! with PVE's envelopes, status codes, reason phrases, error texts, schema validation,
//! authentication, privilege checks, asynchronous tasks, locks and config normalisation.
//! It is not a mock: it never agrees with a client just because the client expects it.
//!
//! Use [`Simulator::start`] in tests (it runs on its own thread and tokio runtime), or the
//! `pvesim` binary for rehearsals. Control and measurement endpoints live under
//! `/_pvesim/` (see README).

pub mod access;
pub mod acl;
pub mod acl_tree;
pub mod api;
pub mod auth;
pub mod broadcast;
pub mod cluster;
pub mod content;
pub mod control;
pub mod datacenter;
pub mod error;
pub mod fileserver;
pub mod ha;
pub mod hold;
pub mod import;
pub mod lxc;
pub mod nodes;
pub mod params;
pub mod phased;
pub mod pools;
pub mod propstring;
pub mod pvesh;
pub mod pvesh_upload;
pub mod qemu;
pub mod scenario;
pub mod schema;
pub mod server;
pub mod sim;
pub mod state;
pub mod storage;
pub mod tag_access;
pub mod tasks;
pub mod tfa;
pub mod tls;
pub mod users;
pub mod util;

pub use scenario::Scenario;
pub use tls::TlsMode;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How to run a simulator.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub listen: SocketAddr,
    pub scenario: Scenario,
    /// Persist the cluster here (JSON) and start from it if it exists.
    pub state_file: Option<PathBuf>,
    /// Ignore an existing state file and start from the scenario.
    pub reset: bool,
    pub tls: TlsMode,
    /// Secret of `ansible@pve!automation`.
    pub token_secret: String,
    /// Secret of `ansible@pve!readonly`.
    pub readonly_token_secret: String,
    pub root_password: String,
    /// Base task duration; task types scale it (clone/move x3).
    pub task_ms: u64,
    /// How long a new VM shows only `status: unknown` in `/cluster/resources`.
    pub resources_lag_ms: u64,
    /// How long `/cluster/resources` keeps showing the power state from before a
    /// start/stop (PVE: up to 10 s; default 0 = immediate).
    pub status_lag_ms: u64,
    /// Delay before answering 401s (PVE: 3 s).
    pub auth_fail_delay_ms: u64,
    /// How long after start the guest agent answers (a scenario VM's `agent.delay_ms`
    /// overrides it).
    pub agent_delay_ms: u64,
    /// How long after the agent answers until guests have their usable addresses
    /// (before: link-local only; overridden by a VM's `agent.address_delay_ms`).
    pub address_delay_ms: u64,
    /// Full or subset schema JSON to use instead of the embedded subset.
    pub schema_path: Option<PathBuf>,
    /// How long a ticket is valid (PVE::AccessControl: 2 hours), so tests can see
    /// tickets expire in seconds.
    pub ticket_lifetime_secs: u64,
    /// The TOTP time step (RFC 6238 and PVE: 30 s); a code is accepted within one step
    /// either side.
    pub totp_step_secs: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            scenario: Scenario::default_cluster(),
            state_file: None,
            reset: false,
            tls: TlsMode::Ca,
            token_secret: scenario::DEFAULT_TOKEN_SECRET.into(),
            readonly_token_secret: scenario::DEFAULT_READONLY_SECRET.into(),
            root_password: scenario::DEFAULT_ROOT_PASSWORD.into(),
            task_ms: 150,
            resources_lag_ms: 300,
            status_lag_ms: 0,
            auth_fail_delay_ms: 0,
            agent_delay_ms: 300,
            address_delay_ms: 0,
            schema_path: None,
            ticket_lifetime_secs: auth::TICKET_LIFETIME,
            totp_step_secs: auth::TOTP_STEP,
        }
    }
}

/// A running simulator (own thread + multi-threaded tokio runtime).
pub struct Simulator {
    addr: SocketAddr,
    ca_pem: String,
    fingerprint: String,
    shutdown: tokio::sync::watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
    inner: Arc<sim::SimInner>,
}

impl Simulator {
    /// Start listening; returns once the socket is bound.
    pub fn start(cfg: SimConfig) -> anyhow::Result<Simulator> {
        let schema = match &cfg.schema_path {
            Some(p) => schema::Schema::from_json(&std::fs::read_to_string(p)?)?,
            None => schema::Schema::embedded(),
        };
        let mut scen = cfg
            .scenario
            .clone()
            .with_credentials(&cfg.root_password, &cfg.token_secret);
        for u in &mut scen.users {
            for t in &mut u.tokens {
                if u.userid == "ansible@pve" && t.id == "readonly" {
                    t.secret = cfg.readonly_token_secret.clone();
                }
            }
        }
        let initial = scen.to_cluster()?;
        let current = match &cfg.state_file {
            Some(p) if p.exists() && !cfg.reset => {
                let mut c: state::Cluster = serde_json::from_str(&std::fs::read_to_string(p)?)
                    .map_err(|e| anyhow::anyhow!("reading state {}: {e}", p.display()))?;
                c.settle_tasks();
                c
            }
            _ => initial.clone(),
        };
        let tls = tls::generate(cfg.tls)?;
        let server_cfg = tls::server_config(&tls)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .thread_name("pvesim")
            .build()?;
        let listener = rt.block_on(tokio::net::TcpListener::bind(cfg.listen))?;
        let addr = listener.local_addr()?;
        let inner = Arc::new(sim::SimInner::new(
            cfg,
            schema,
            initial,
            current.clone(),
            tls.fingerprint.clone(),
        ));
        inner.persist(&current);
        let (tx, rx) = tokio::sync::watch::channel(false);
        let inner2 = inner.clone();
        let acceptor = tokio_rustls::TlsAcceptor::from(server_cfg);
        let thread = std::thread::Builder::new()
            .name("pvesim-server".into())
            .spawn(move || {
                rt.block_on(server::serve(listener, acceptor, inner2, rx));
                rt.shutdown_timeout(std::time::Duration::from_millis(500));
            })?;
        Ok(Simulator {
            addr,
            ca_pem: tls.ca_pem,
            fingerprint: tls.fingerprint,
            shutdown: tx,
            thread: Some(thread),
            inner,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
    /// PEM of the CA (or of the self-signed certificate).
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }
    pub fn write_ca(&self, path: &Path) -> anyhow::Result<()> {
        std::fs::write(path, &self.ca_pem)?;
        Ok(())
    }
    /// `AB:CD:...`: SHA-256 of the server certificate.
    pub fn fingerprint(&self) -> String {
        self.fingerprint.clone()
    }
    /// Snapshot of the cluster state (same as `GET /_pvesim/state`).
    pub fn state(&self) -> state::Cluster {
        self.inner.cluster().clone()
    }
    /// Stop serving and wait for the server thread.
    pub fn shutdown(mut self) {
        self.stop();
    }
    fn stop(&mut self) {
        let _ = self.shutdown.send(true);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        self.stop();
    }
}
