//! How to reach and authenticate to the API, in typed form: what the client is given.
//! (The module options that fill it are declared above, where Ansible meets the client:
//! `run::connection`.)

use std::path::PathBuf;

/// How to reach and authenticate to the API, in typed form.
#[derive(Debug, Clone, Default)]
pub struct ConnectionParams {
    /// Host as given (may hold `:port` or an IPv6 literal).
    pub host: String,
    pub port: Option<u16>,
    pub user: String,
    pub password: Option<String>,
    pub token_id: Option<String>,
    pub token_secret: Option<String>,
    pub otp: Option<String>,
    pub validate_certs: bool,
    pub ca_path: Option<PathBuf>,
    /// Normalised: 64 upper-case hex digits, no colons.
    pub cert_fingerprint: Option<String>,
    pub timeout_secs: u64,
}

/// `AB:cd:...` or `abcd...` to 64 upper-case hex digits; `None` if it is not SHA-256 sized.
pub fn normalise_fingerprint(text: &str) -> Option<String> {
    let hex: String = text.chars().filter(|c| *c != ':' && !c.is_whitespace()).collect();
    (hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit())).then(|| hex.to_ascii_uppercase())
}
