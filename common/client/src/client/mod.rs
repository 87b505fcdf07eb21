//! The PVE REST API client: one keep-alive HTTPS connection per run (ureq + rustls),
//! token or ticket authentication, errors rendered the way community.proxmox 1.6
//! rendered them, jittered retries where repeating is safe, for as long as the task's
//! window allows where PVE provably did not act ([`retry`]), and errors that tell a connection never made from an answer lost.
//!
//! Paths are relative to `/api2/json` (`/nodes/pve1/qemu`). Every call returns the
//! `data` member of PVE's envelope; other top-level keys (`total`, ...) are ignored.
//!
//! The client is generic on purpose: modules build their own paths and parameters.

mod auth;
mod error;
mod fork;
mod list_elements;
pub mod local;
pub mod local_upload;
mod login;
pub mod retry;
mod ticket_reuse;
pub mod tls;
pub mod trace;
mod transport;
pub mod upload;
pub mod url;

pub use error::{python_repr, standard_reason, ApiError, ApiErrorKind};
pub use ticket_reuse::{KeptTicket, NewTicket, RunTickets, SecretSink, TicketReport, TicketSink, DEFAULT_RENEW_AFTER};

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use std::io::Read;
use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{Connector, TcpConnector};

use crate::connection::ConnectionParams;
use auth::Credentials;
use tls::{Observed, Trust};
use transport::{ReasonPhrase, RequestProgress, TlsConnector};
use url::Endpoint;

/// Form fields of a POST/PUT body, or query parameters of a GET/DELETE.
pub type Fields<'a> = &'a [(&'a str, String)];

/// A read of the live API (the client's own `get`), for a [`ReadThrough`] to call.
pub type Fetch<'a> = &'a dyn Fn(&str, Fields) -> Result<Value, ApiError>;

/// What a check-mode client's reads go through: the cluster as a run's dry run leaves
/// it (the dry run implements it; the client knows only that reads pass through).
pub trait ReadThrough: std::any::Any + Send + Sync {
    /// `GET path` as seen through this view; `fetch` reads the live API.
    fn get(&self, path: &str, query: Fields, fetch: Fetch) -> Result<Value, ApiError>;
    /// The view itself, for its owner to downcast.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A kept-alive connection idle longer than this is not reused.
const IDLE_REUSE_LIMIT: Duration = Duration::from_secs(3);

/// Bodies larger than this are refused (PVE's own answers stay far below it).
const MAX_BODY: u64 = 64 * 1024 * 1024;

/// Where a client's lines of progress go (see [`Client::reporting`]).
pub type ProgressSink = Arc<dyn Fn(&str) + Send + Sync>;

/// A connected, authenticated API client.
pub struct Client {
    agent: ureq::Agent,
    endpoint: Endpoint,
    base_url: String,
    /// Replaced once when a ticket an earlier task kept is refused ([`ticket_reuse`]).
    credentials: Mutex<Credentials>,
    /// How to log in again when the kept ticket in use is refused (taken on first use).
    relogin: Mutex<Option<ticket_reuse::Relogin>>,
    /// What the ticket in use says about this endpoint's cluster ([`ticket_reuse`]).
    standing: Mutex<ticket_reuse::Standing>,
    /// Where a ticket this client got goes, for the run to keep.
    ticket_sink: Option<TicketSink>,
    /// Told every ticket and CSRF token this client holds ([`SecretSink`]).
    secret_sink: Option<SecretSink>,
    /// When the ticket in use was made; it is renewed at `renew_after` ([`ticket_reuse`]).
    ticket_clock: Mutex<Option<ticket_reuse::TicketClock>>,
    renew_after: Duration,
    trust: Trust,
    timeout_secs: u64,
    observed: Arc<Observed>,
    reason: Arc<ReasonPhrase>,
    progress: Arc<RequestProgress>,
    sent: AtomicU32,
    /// In a check-mode run with a plan: reads see the cluster as the plan leaves it.
    plan: Option<Arc<dyn ReadThrough>>,
    /// How long one call may be repeated in all: the module's `timeout` when it set one
    /// ([`Client::set_retry_budget`]), else `api_timeout`.
    retry_budget_ms: AtomicU64,
    /// Whether `retry_budget_ms` is the module's `timeout` (for messages).
    window_is_timeout: AtomicBool,
    /// Whether the endpoint has answered this client (any status): a connection refused
    /// after that is a restart, before it perhaps a wrong `api_host` ([`retry::repeatable`]).
    answered: AtomicBool,
    /// Lines of progress (a call repeated because PVE did not act), for `-v`.
    progress_notes: Mutex<Vec<String>>,
    progress_sink: Option<ProgressSink>,
    /// UPIDs this client was answered with, so a task found after a lost answer is
    /// known not to be one it already followed.
    upids: Mutex<Vec<String>>,
    /// Calls repeated after a failure that proved PVE had not acted, for the result.
    repeated: Mutex<Vec<String>>,
    /// Local mode: calls go to pvesh on this node instead of over HTTPS ([`local`]).
    local: Option<local::Pvesh>,
}

/// Shows where and as whom, never a secret.
impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base_url)
            .field("identity", &self.identity())
            .field("trust", &self.trust)
            .field("requests_sent", &self.requests_sent())
            .finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Get,
    Post,
    Put,
    Delete,
}

/// What a call returns: PVE's `data`, or the whole JSON envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Data,
    Envelope,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
    fn has_body(self) -> bool {
        matches!(self, Method::Post | Method::Put)
    }
}

/// How [`Client::get_list`] adds one element's JSON text to what it keeps.
pub type ListFold<'a, A> = dyn Fn(&mut A, &[u8]) -> Result<(), serde_json::Error> + 'a;

impl Client {
    /// Builds the TLS configuration and, for password auth, requests a ticket.
    /// Token auth makes no request here: the first real call checks the token.
    pub fn connect(params: &ConnectionParams) -> Result<Client, ApiError> {
        Client::connect_keeping(params, None, None)
    }

    /// [`Client::connect`], with password auth using the run's kept ticket (one an
    /// earlier task of the run got as the same identity) instead of logging in, leaving a
    /// ticket it gets in the run's sink, and renewing at the run's age (see [`ticket_reuse`]);
    /// `secrets` is told every ticket and CSRF token it holds.
    pub fn connect_keeping(
        params: &ConnectionParams,
        run: Option<RunTickets>,
        secrets: Option<SecretSink>,
    ) -> Result<Client, ApiError> {
        if params.host.is_empty() {
            return Client::local(std::path::Path::new(local::PVESH), params.timeout_secs.max(1));
        }
        let endpoint =
            Endpoint::parse(&params.host, params.port).map_err(|m| ApiError::other(ApiErrorKind::Other, m))?;
        let trust = Trust::from_params(params);
        let mut client = Client::unauthenticated(endpoint, trust, params.timeout_secs.max(1))?;
        client.secret_sink = secrets;
        let (kept, candidates) = match run {
            Some(run) => {
                client.ticket_sink = Some(run.sink);
                client.renew_after = Duration::try_from_secs_f64(run.renew_after_secs)
                    .ok()
                    .filter(|age| !age.is_zero())
                    .unwrap_or(ticket_reuse::DEFAULT_RENEW_AFTER);
                (run.kept, run.candidates)
            }
            None => (None, vec![]),
        };
        let credentials = match (&params.password, &params.token_id, &params.token_secret) {
            (Some(password), _, _) => {
                client.password_credentials(&params.user, password, params.otp.as_deref(), kept, candidates)?
            }
            (None, Some(id), Some(secret)) => Credentials::token(&params.user, id, secret)
                .map_err(|m| ApiError::other(ApiErrorKind::Auth, m))?,
            _ => {
                return Err(ApiError::other(
                    ApiErrorKind::Auth,
                    "No valid authentication credentials were supplied: set api_password, or api_token_id and api_token_secret",
                ))
            }
        };
        client.credentials = Mutex::new(credentials);
        client.learn_cluster_certificates();
        Ok(client)
    }

    /// A client that runs `program` (pvesh) on this node for every call, as `root@pam`:
    /// no login, ticket or TLS (see [`local`]).
    fn local(program: &std::path::Path, timeout_secs: u64) -> Result<Client, ApiError> {
        let endpoint = Endpoint::parse("localhost", None).map_err(|m| ApiError::other(ApiErrorKind::Other, m))?;
        let mut client =
            Client::unauthenticated(endpoint, Trust::from_params(&ConnectionParams::default()), timeout_secs)?;
        client.credentials = Mutex::new(Credentials::Local);
        client.base_url = format!("pvesh ({})", program.display());
        client.local = Some(local::Pvesh {
            program: program.to_path_buf(),
        });
        Ok(client)
    }

    /// Whether calls go through pvesh on this node (local mode).
    pub fn is_local(&self) -> bool {
        self.local.is_some()
    }

    /// A client with its own connection (TLS per `trust`, PVE's idle-connection limits)
    /// and no credentials yet: what [`Client::connect`] and [`Client::fork`] both start from.
    fn unauthenticated(endpoint: Endpoint, trust: Trust, timeout_secs: u64) -> Result<Client, ApiError> {
        let observed = Arc::new(Observed::default());
        let reason = Arc::new(ReasonPhrase::default());
        let progress = Arc::new(RequestProgress::default());
        let server_name = rustls::pki_types::ServerName::try_from(endpoint.host.clone()).map_err(|_| {
            ApiError::other(
                ApiErrorKind::Other,
                format!(
                    "api_host {} is neither a valid host name nor an IP address",
                    endpoint.host
                ),
            )
        })?;
        let connector = ().chain(TcpConnector::default()).chain(TlsConnector {
            config: tls::client_config(&trust, observed.clone())?,
            server_name,
            reason: reason.clone(),
            progress: progress.clone(),
        });
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .https_only(true)
            .timeout_global(Some(Duration::from_secs(timeout_secs)))
            .max_redirects(0)
            .user_agent(concat!("ferrox.proxmox/", env!("CARGO_PKG_VERSION")))
            .accept("application/json")
            .max_idle_connections(1)
            .max_idle_connections_per_host(1)
            // PVE's API server closes idle keep-alive connections after a few seconds; a
            // request sent just as it closes one would fail, and a write is not retried.
            // Reconnecting after a pause this long costs one handshake and avoids that race.
            .max_idle_age(IDLE_REUSE_LIMIT)
            .build();
        Ok(Client {
            agent: ureq::Agent::with_parts(config, connector, DefaultResolver::default()),
            base_url: endpoint.base_url(),
            endpoint,
            credentials: Mutex::new(Credentials::None),
            relogin: Mutex::new(None),
            standing: Mutex::new(ticket_reuse::Standing::Own),
            ticket_sink: None,
            secret_sink: None,
            ticket_clock: Mutex::new(None),
            renew_after: ticket_reuse::DEFAULT_RENEW_AFTER,
            trust,
            timeout_secs,
            observed,
            reason,
            progress,
            sent: AtomicU32::new(0),
            plan: None,
            retry_budget_ms: AtomicU64::new(timeout_secs.saturating_mul(1000)),
            window_is_timeout: AtomicBool::new(false),
            answered: AtomicBool::new(false),
            progress_notes: Mutex::new(Vec::new()),
            progress_sink: None,
            upids: Mutex::new(Vec::new()),
            repeated: Mutex::new(Vec::new()),
            local: None,
        })
    }

    /// Reads see the cluster with `plan` applied (check mode with a plan); `None`
    /// leaves the client as it was.
    pub fn seeing(mut self, plan: Option<Arc<dyn ReadThrough>>) -> Client {
        self.plan = plan;
        self
    }

    /// The plan reads go through, if any.
    pub fn read_through(&self) -> Option<&dyn ReadThrough> {
        self.plan.as_deref()
    }

    /// GET (retried on connection errors, dropped answers, 5xx, 595/596 with bounded backoff); with a
    /// plan, the answer is the plan's view of it.
    pub fn get(&self, path: &str, query: Fields) -> Result<Value, ApiError> {
        match &self.plan {
            Some(plan) => plan.get(path, query, &|p, q| self.call(Method::Get, p, q, Answer::Data)),
            None => self.call(Method::Get, path, query, Answer::Data),
        }
    }

    /// GET returning the whole envelope (`data` plus `total`, ...), for the few calls
    /// whose extra keys matter, such as the line count of a task log. Retried like [`Client::get`].
    pub fn get_envelope(&self, path: &str, query: Fields) -> Result<Value, ApiError> {
        self.call(Method::Get, path, query, Answer::Envelope)
    }

    /// POST a form body (repeated only when PVE provably did not act: see [`retry`]).
    pub fn post(&self, path: &str, form: Fields) -> Result<Value, ApiError> {
        self.call(Method::Post, path, form, Answer::Data)
    }

    /// PUT a form body (repeated only when PVE provably did not act).
    pub fn put(&self, path: &str, form: Fields) -> Result<Value, ApiError> {
        self.call(Method::Put, path, form, Answer::Data)
    }

    /// DELETE with query parameters (repeated only when PVE provably did not act).
    pub fn delete(&self, path: &str, query: Fields) -> Result<Value, ApiError> {
        self.call(Method::Delete, path, query, Answer::Data)
    }

    /// How many HTTP requests this client has sent (for tests and benchmarks).
    pub fn requests_sent(&self) -> u32 {
        self.sent.load(Ordering::Relaxed)
    }

    /// `https://host:port/api2/json`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Who the requests run as (`API token user@realm!id` or `user user@realm`), for messages.
    pub fn identity(&self) -> String {
        self.credentials().who()
    }

    /// The credentials requests carry now.
    fn credentials(&self) -> std::sync::MutexGuard<'_, Credentials> {
        self.credentials.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How long the retries of one call may take in all: the module's `timeout` (without
    /// it, `api_timeout`). A call PVE did not act on is repeated until it ends.
    pub fn set_retry_budget(&self, budget: Duration) {
        self.retry_budget_ms.store(budget.as_millis() as u64, Ordering::Relaxed);
        self.window_is_timeout.store(true, Ordering::Relaxed);
    }

    fn retry_budget(&self) -> Duration {
        Duration::from_millis(self.retry_budget_ms.load(Ordering::Relaxed))
    }

    /// Whether this client was answered with `upid` (a task it started and knows of).
    pub fn knows_upid(&self, upid: &str) -> bool {
        self.upids.lock().map(|u| u.iter().any(|x| x == upid)).unwrap_or(false)
    }

    /// Writes that were sent again after PVE had provably not acted on them (lock
    /// timeout, 503, connection refused), as `POST /path (503 …)`; for warnings.
    pub fn repeated_writes(&self) -> Vec<String> {
        self.repeated.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// The user and token name tasks started by this client carry (`ansible@pve`,
    /// `Some("automation")`), to recognise its own tasks in a task list.
    pub fn task_owner(&self) -> (String, Option<String>) {
        self.credentials().task_owner()
    }

    /// `api_timeout` in seconds.
    pub fn timeout_secs(&self) -> u64 {
        self.timeout_secs
    }

    /// One API call, retried per [`retry::next_pause`]; its answer as a JSON value.
    fn call(&self, method: Method, path: &str, fields: Fields, answer: Answer) -> Result<Value, ApiError> {
        let data = self.call_decoded(method, path, fields, &mut |body| decode_value(body, answer))?;
        self.note_task(&data);
        Ok(data)
    }

    /// Remembers a task this client started (an answer that is a UPID), so its own tasks
    /// are told from others'.
    fn note_task(&self, data: &Value) {
        if let Some(upid) = data.as_str().filter(|s| s.starts_with("UPID:")) {
            if let Ok(mut u) = self.upids.lock() {
                u.push(upid.to_string());
            }
        }
    }

    /// A write in check mode: a plan is only ever given in check mode, so a write here is
    /// a bug, never sent.
    fn refuse_write_in_check_mode(&self, method: Method, path: &str) -> Result<(), ApiError> {
        if self.plan.is_none() || method == Method::Get {
            return Ok(());
        }
        Err(ApiError::other(
            ApiErrorKind::Other,
            format!("{} {path} refused: this is a check-mode run, which writes nothing. Please report this as a bug of ferrox.proxmox.", method.as_str()),
        ))
    }

    /// GET of a list answer folded one element at a time as the answer arrives: `add`
    /// gets each element's JSON text (decode only the fields needed with
    /// `serde_json::from_slice`), so memory holds what the fold keeps and one element,
    /// never the whole list. A repeated call starts again from `start()`. With a plan
    /// (check mode), the plan's view of the answer is folded instead.
    pub fn get_list<A>(
        &self,
        path: &str,
        query: Fields,
        start: &dyn Fn() -> A,
        add: &ListFold<'_, A>,
    ) -> Result<A, ApiError> {
        if self.plan.is_some() {
            let data = self.get(path, query)?;
            let fold = || -> Result<A, serde_json::Error> {
                let items = data
                    .as_array()
                    .ok_or_else(|| <serde_json::Error as serde::de::Error>::custom("the answer holds no data list"))?;
                let mut acc = start();
                for item in items {
                    add(&mut acc, &serde_json::to_vec(item)?)?;
                }
                Ok(acc)
            };
            return fold().map_err(|e| self.undecodable(Method::Get, path, &e));
        }
        self.call_decoded(Method::Get, path, query, &mut |body| {
            let mut acc = start();
            list_elements::each_element(body, &mut |e| add(&mut acc, e))?;
            Ok(acc)
        })
    }

    /// One API call with its answer decoded by `decode`, retried per [`retry::next_pause`]
    /// within the task's window; a call repeated because PVE did not act on it leaves one
    /// line of progress, and its error, when the window ran out, says for how long it was tried.
    fn call_decoded<R>(&self, method: Method, path: &str, fields: Fields, decode: Decoder<R>) -> Result<R, ApiError> {
        self.refuse_write_in_check_mode(method, path)?;
        let started = Instant::now();
        let window = self.retry_budget();
        let mut attempt = 1;
        let mut episode: Option<retry::Episode> = None;
        loop {
            self.renew_if_due()?;
            let sent = self.send(method, path, fields, decode);
            // Any answer but 401 got past PVE's ticket check first.
            if sent.as_ref().err().is_none_or(|e| e.status.is_some_and(|s| s != 401)) {
                self.ticket_answered();
            }
            let failed = match sent {
                Ok(data) => {
                    if let Some(episode) = &episode {
                        self.note_progress(episode.progress_line(true));
                    }
                    return Ok(data);
                }
                // PVE acted on nothing it refused with 401: sent again with a fresh ticket.
                Err(e) if e.is_status(401) && self.relogin_after_refusal()? => continue,
                Err(e) => e,
            };
            let answered_before = self.answered.load(Ordering::Relaxed);
            let repeat = retry::repeatable(method.as_str(), &failed, answered_before);
            if repeat == Some(retry::Repeatable::NotActedOn) {
                let episode = episode.get_or_insert_with(|| retry::Episode {
                    call: format!("{} {path}", method.as_str()),
                    cause: retry::cause(&failed),
                    failed: 0,
                    tried: Duration::ZERO,
                });
                episode.failed += 1;
                episode.tried = started.elapsed();
            }
            let pause = retry::next_pause(
                method.as_str(),
                attempt,
                &failed,
                answered_before,
                started.elapsed(),
                window,
                retry::jitter(),
            );
            let Some(pause) = pause else {
                return Err(
                    match episode.filter(|_| repeat == Some(retry::Repeatable::NotActedOn)) {
                        Some(episode) => self.window_ran_out(failed, &episode, window),
                        None => failed,
                    },
                );
            };
            if method != Method::Get {
                if let Ok(mut r) = self.repeated.lock() {
                    r.push(format!(
                        "{} {path} ({})",
                        method.as_str(),
                        first_line(&failed.to_string())
                    ));
                }
            }
            std::thread::sleep(pause);
            attempt += 1;
        }
    }

    /// The last error of a call PVE did not act on once the window ended: PVE's own text,
    /// then what was tried, for how long, and the option that gives more time.
    fn window_ran_out(&self, mut error: ApiError, episode: &retry::Episode, window: Duration) -> ApiError {
        self.note_progress(episode.progress_line(false));
        let option = if self.window_is_timeout.load(Ordering::Relaxed) {
            "timeout"
        } else {
            "api_timeout"
        };
        error.message = format!("{} - {}", error.message, episode.gave_up_note(window, option));
        error
    }

    /// One line for the task's `-v` output, through the run's sink when there is one.
    fn note_progress(&self, line: String) {
        if let Some(sink) = &self.progress_sink {
            sink(&line);
        }
        if let Ok(mut notes) = self.progress_notes.lock() {
            notes.push(line);
        }
    }

    /// The lines of progress this client left (calls repeated because PVE did not act on
    /// them), oldest first.
    pub fn progress_notes(&self) -> Vec<String> {
        self.progress_notes.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// Lines of progress also go to `sink` (the run layer's, for `-v`).
    pub fn reporting(mut self, sink: ProgressSink) -> Client {
        self.progress_sink = Some(sink);
        self
    }

    /// One HTTP request (not retried) and its answer as a JSON value.
    fn send_value(&self, method: Method, path: &str, fields: Fields, answer: Answer) -> Result<Value, ApiError> {
        self.send(method, path, fields, &mut |body| decode_value(body, answer))
    }

    /// One HTTP request, its answer decoded by `decode` as the body arrives.
    fn send<R>(&self, method: Method, path: &str, fields: Fields, decode: Decoder<R>) -> Result<R, ApiError> {
        self.sent.fetch_add(1, Ordering::Relaxed);
        self.observed.clear();
        self.progress.clear();
        let started = Instant::now();
        if let Some(pvesh) = &self.local {
            return self.send_local(pvesh, method, path, fields, decode, started);
        }
        let exchanged = self.exchange(method, path, fields);
        trace::record(
            method.as_str(),
            path,
            exchanged.as_ref().ok().map(|r| r.status().as_u16()),
            started.elapsed(),
        );
        let mut response = exchanged.map_err(|e| self.transport_error(method, path, e, started.elapsed()))?;
        self.answered.store(true, Ordering::Relaxed);
        let status = response.status().as_u16();
        let body = response.body_mut().with_config().limit(MAX_BODY);
        if status >= 400 {
            let text = body.read_to_string().unwrap_or_default();
            return Err(self.http_error(status, &text));
        }
        let mut reader = Watched {
            inner: body.reader(),
            error: None,
        };
        let decoded = decode(&mut reader);
        match (decoded, reader.error.take()) {
            (Ok(data), _) => Ok(data),
            (Err(_), Some(io)) => {
                let e = io.downcast::<ureq::Error>().unwrap_or_else(ureq::Error::Io);
                Err(self.transport_error(method, path, e, started.elapsed()))
            }
            (Err(e), None) => Err(self.undecodable(method, path, &e)),
        }
    }

    /// One call through pvesh, its output read as the answer PVE gives over HTTPS.
    fn send_local<R>(
        &self,
        pvesh: &local::Pvesh,
        method: Method,
        path: &str,
        fields: Fields,
        decode: Decoder<R>,
        started: Instant,
    ) -> Result<R, ApiError> {
        let printed = pvesh.run(
            method,
            path,
            fields,
            self.retry_budget().max(Duration::from_secs(self.timeout_secs)),
        );
        let status = match &printed {
            Ok(p) if p.status == Some(0) => Some(200),
            Ok(_) => Some(500),
            Err(_) => None,
        };
        trace::record(method.as_str(), path, status, started.elapsed());
        let printed = printed?;
        self.answered.store(true, Ordering::Relaxed);
        match local::interpret(&printed) {
            local::Answer::Envelope(envelope) => {
                let bytes = serde_json::to_vec(&envelope).unwrap_or_default();
                decode(&mut bytes.as_slice()).map_err(|e| self.undecodable(method, path, &e))
            }
            local::Answer::Error(status, body) => Err(self.http_error(status, &body.to_string())),
            local::Answer::Undecodable(start) => Err(ApiError::other(
                ApiErrorKind::Other,
                format!(
                    "pvesh {} {path}: the output is not the JSON expected: {start}",
                    local::verb(method.as_str())
                ),
            )),
        }
    }

    /// An answer that is not the JSON expected (not JSON at all, or not PVE's shape).
    fn undecodable(&self, method: Method, path: &str, e: &serde_json::Error) -> ApiError {
        ApiError::other(
            ApiErrorKind::Other,
            format!(
                "{} {path} at {}: the answer is not the JSON expected ({e}). Check that api_host and api_port point at the Proxmox VE API.",
                method.as_str(),
                self.endpoint.origin()
            ),
        )
    }

    /// Sends the request; the response's body is left unread.
    fn exchange(
        &self,
        method: Method,
        path: &str,
        fields: Fields,
    ) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        let headers = self.credentials().headers(method != Method::Get);
        if method.has_body() {
            let url = url::request_url(&self.base_url, path, &[]);
            let mut req = match method {
                Method::Put => self.agent.put(&url),
                _ => self.agent.post(&url),
            };
            for (k, v) in &headers {
                req = req.header(*k, v);
            }
            req.content_type("application/x-www-form-urlencoded")
                .send(url::encode_fields(fields))
        } else {
            let url = url::request_url(&self.base_url, path, fields);
            let mut req = match method {
                Method::Delete => self.agent.delete(&url),
                _ => self.agent.get(&url),
            };
            for (k, v) in &headers {
                req = req.header(*k, v);
            }
            req.call()
        }
    }

    /// An HTTP error status as 1.6 rendered it, with PVE's text from the body's
    /// `message`, else the status line's reason phrase.
    fn http_error(&self, status: u16, body: &str) -> ApiError {
        let json: Option<Value> = serde_json::from_str(body).ok();
        let body_message = json
            .as_ref()
            .and_then(|j| j.get("message"))
            .and_then(Value::as_str)
            .map(|m| m.trim_end().to_string())
            .filter(|m| !m.is_empty());
        let errors = json
            .as_ref()
            .and_then(|j| j.get("errors"))
            .and_then(Value::as_object)
            .cloned();
        let reason = self.reason.for_status(status).filter(|r| !r.is_empty());
        let mut message = body_message
            .or(reason)
            .unwrap_or_else(|| standard_reason(status).unwrap_or("error").to_string());
        match status {
            401 => {
                if message == "Unauthorized" {
                    message = "authentication failed".into();
                }
                message = format!("{message} - {}", self.credentials().unauthorized_hint());
            }
            403 if message.starts_with("Permission check failed") => {
                message = format!("{message} - {} lacks this privilege", self.identity());
            }
            _ => {}
        }
        ApiError::http(status, message, errors)
    }

    /// A failure below HTTP: which option to check, never a secret. Whether the request
    /// had been sent decides between "could not connect" (PVE never saw it) and a lost
    /// answer (it may have acted).
    fn transport_error(&self, method: Method, path: &str, e: ureq::Error, after: Duration) -> ApiError {
        let origin = self.endpoint.origin();
        let seen = self.observed.snapshot();
        if seen.rejection.is_some() || is_tls_error(&e) {
            return ApiError::other(
                ApiErrorKind::Tls,
                tls::failure_message(&self.trust, &origin, &seen, &tls_detail(&e)),
            );
        }
        if self.progress.was_sent() {
            return self.lost_answer(method, path, &e, after);
        }
        let connect = |detail: String| {
            ApiError::other(
                ApiErrorKind::Connect,
                format!(
                    "Could not connect to {origin} ({detail}). Check api_host ({}) and api_port ({}): they must name a running Proxmox VE node reachable from here.",
                    self.endpoint.host, self.endpoint.port
                ),
            )
        };
        match e {
            ureq::Error::Timeout(_) => connect(format!("no connection within api_timeout ({}s)", self.timeout_secs)),
            ureq::Error::HostNotFound => connect(format!("host name {} could not be resolved", self.endpoint.host)),
            ureq::Error::ConnectionFailed => connect("connection failed".into()),
            ureq::Error::Io(io) => match io.kind() {
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                    connect(format!("no connection within api_timeout ({}s)", self.timeout_secs))
                }
                std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset => connect(format!(
                    "the server closed the connection before the request was sent: {io}"
                )),
                _ => connect(io.to_string()),
            },
            other => ApiError::other(
                ApiErrorKind::Other,
                format!("{} {path} to {origin} failed: {other}", method.as_str()),
            ),
        }
    }

    /// The request went out and no answer came back: say which call, after how long, and
    /// that its effect is unknown. Never the "could not connect" advice: the connection was
    /// made and used.
    fn lost_answer(&self, method: Method, path: &str, e: &ureq::Error, after: Duration) -> ApiError {
        let origin = self.endpoint.origin();
        let call = format!("{} {path} to {origin}", method.as_str());
        let timed_out = matches!(e, ureq::Error::Timeout(_))
            || matches!(e, ureq::Error::Io(io) if matches!(io.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock));
        if timed_out {
            return ApiError::other(
                ApiErrorKind::Timeout,
                format!(
                    "{call} got no answer within api_timeout ({}s); the request was sent, so Proxmox VE may still carry it out. Raise api_timeout if Proxmox VE is slow to answer (large storage operations).",
                    self.timeout_secs
                ),
            );
        }
        ApiError::other(
            ApiErrorKind::Dropped,
            format!(
                "{call}: the connection was closed after the request was sent, {:.1}s into the call, before Proxmox VE answered ({}); whether it was carried out is unknown",
                after.as_secs_f64(),
                lost_cause(e)
            ),
        )
    }
}

/// How an answer was lost, in one short clause for users: never the TLS library's own
/// wording (`peer closed connection without sending TLS close_notify: https://...`).
fn lost_cause(e: &ureq::Error) -> &'static str {
    use std::io::ErrorKind;
    let kind = match e {
        ureq::Error::Io(io) => Some(io.kind()),
        _ => None,
    };
    match kind {
        Some(ErrorKind::UnexpectedEof) => "the server or a proxy on the way ended the connection",
        Some(ErrorKind::ConnectionReset) => "the connection was reset",
        Some(ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe) => "the connection broke",
        _ if is_tls_error(e) => "the TLS session failed",
        _ => "the connection was lost",
    }
}

/// The first line of a message (for compact lists).
fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Whether ureq's error came from the TLS layer.
fn is_tls_error(e: &ureq::Error) -> bool {
    match e {
        ureq::Error::Rustls(_) | ureq::Error::Tls(_) => true,
        ureq::Error::Io(io) => io.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()),
        _ => false,
    }
}

/// The TLS error text without ureq's wrapping.
fn tls_detail(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Io(io) => io
            .get_ref()
            .map(|inner| inner.to_string())
            .unwrap_or_else(|| io.to_string()),
        other => other.to_string(),
    }
}

/// Decodes one answer's body; an error reading the body itself is kept by [`Watched`].
type Decoder<'d, R> = &'d mut dyn FnMut(&mut dyn Read) -> Result<R, serde_json::Error>;

/// The whole answer as a JSON value: its `data` (or the envelope); an empty body is null.
fn decode_value(body: &mut dyn Read, answer: Answer) -> Result<Value, serde_json::Error> {
    let mut text = Vec::new();
    body.read_to_end(&mut text).map_err(serde_json::Error::io)?;
    if text.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    let parsed = serde_json::from_slice(&text).map_err(|e| {
        let start: String = String::from_utf8_lossy(&text).chars().take(120).collect();
        <serde_json::Error as serde::de::Error>::custom(format!("{e}: {start}"))
    })?;
    Ok(match (answer, parsed) {
        (Answer::Envelope, envelope) => envelope,
        (Answer::Data, Value::Object(mut map)) => map.remove("data").unwrap_or(Value::Null),
        (Answer::Data, _) => Value::Null,
    })
}

/// A body reader that keeps the first I/O error (a dropped connection, a timeout), so a
/// failure while decoding is told apart from an answer that is not JSON.
struct Watched<R> {
    inner: R,
    error: Option<std::io::Error>,
}

impl<R: Read> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            let kind = e.kind();
            self.error.get_or_insert(e);
            std::io::Error::new(kind, "reading the answer failed")
        })
    }
}
