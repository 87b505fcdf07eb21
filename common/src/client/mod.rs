//! The PVE REST API client: one keep-alive HTTPS connection per run (ureq + rustls),
//! token or ticket authentication, errors rendered the way community.proxmox 1.6
//! rendered them, bounded retries for reads only.
//!
//! Paths are relative to `/api2/json` (`/nodes/pve1/qemu`). Every call returns the
//! `data` member of PVE's envelope.

mod error;

pub use error::{ApiError, ApiErrorKind};

use serde_json::Value;

use crate::connection::ConnectionParams;

/// Form fields of a POST/PUT body, or query parameters of a GET/DELETE.
pub type Fields<'a> = &'a [(&'a str, String)];

/// A connected, authenticated API client.
pub struct Client {
    _private: (),
}

impl Client {
    /// Builds the TLS configuration and, for password auth, requests a ticket.
    /// Token auth makes no request here: the first real call checks the token.
    pub fn connect(_params: &ConnectionParams) -> Result<Client, ApiError> {
        todo!("client: connect")
    }

    /// GET (retried on connection errors, 5xx, 595/596 with bounded backoff).
    pub fn get(&self, _path: &str, _query: Fields) -> Result<Value, ApiError> {
        todo!("client: get")
    }

    /// POST a form body (never retried: writes are not idempotent).
    pub fn post(&self, _path: &str, _form: Fields) -> Result<Value, ApiError> {
        todo!("client: post")
    }

    /// PUT a form body (never retried).
    pub fn put(&self, _path: &str, _form: Fields) -> Result<Value, ApiError> {
        todo!("client: put")
    }

    /// DELETE with query parameters (never retried).
    pub fn delete(&self, _path: &str, _query: Fields) -> Result<Value, ApiError> {
        todo!("client: delete")
    }

    /// How many HTTP requests this client has sent (for tests and benchmarks).
    pub fn requests_sent(&self) -> u32 {
        0
    }
}
