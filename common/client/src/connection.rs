//! How to reach and authenticate to the API, in typed form: what the client is given.
//! (The module options that fill it are declared above, where Ansible meets the client:
//! `run::connection`.)

use std::path::PathBuf;

/// How to reach and authenticate to the API, in typed form.
#[derive(Debug, Clone, Default)]
pub struct ConnectionParams {
    /// Host as given (may hold `:port` or an IPv6 literal). Empty: local mode, the API
    /// reached through `pvesh` on this node as `root@pam` (port, credentials and TLS
    /// options are then unused; see `client::local`).
    pub host: String,
    /// `api_port`, if set (it wins over a port in `host`).
    pub port: Option<u16>,
    /// The user to authenticate as (`root@pam`).
    pub user: String,
    /// The password, for a ticket login.
    pub password: Option<String>,
    /// The API token's id, for token authentication.
    pub token_id: Option<String>,
    /// The API token's secret.
    pub token_secret: Option<String>,
    /// The one-time password (TOTP) for a login with a second factor.
    pub otp: Option<String>,
    /// Whether the server's certificate is verified.
    pub validate_certs: bool,
    /// A CA bundle to verify the server's certificate with.
    pub ca_path: Option<PathBuf>,
    /// Normalised: 64 upper-case hex digits, no colons.
    pub cert_fingerprint: Option<String>,
    /// How long one request may wait for its answer, in seconds.
    pub timeout_secs: u64,
}

/// `AB:cd:...` or `abcd...` to 64 upper-case hex digits; `None` if it is not SHA-256 sized.
pub fn normalise_fingerprint(text: &str) -> Option<String> {
    let hex: String = text.chars().filter(|c| *c != ':' && !c.is_whitespace()).collect();
    (hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit())).then(|| hex.to_ascii_uppercase())
}
