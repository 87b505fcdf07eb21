//! What the Python shim hands over (stdin, JSON): the plugin's options already parsed
//! and templated by Ansible, checked here for what only the API side knows.

use std::path::PathBuf;

use ferrox_pve_client::connection::{normalise_fingerprint, ConnectionParams};
use serde::Deserialize;

/// The most worker threads (and connections) one inventory run opens.
pub(crate) const MAX_CONCURRENCY: u64 = 64;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    pub url: String,
    pub user: String,
    #[serde(default)]
    pub password: Option<String>,
    #[serde(default)]
    pub token_id: Option<String>,
    #[serde(default)]
    pub token_secret: Option<String>,
    #[serde(default = "yes")]
    pub validate_certs: bool,
    #[serde(default)]
    pub ca_path: Option<String>,
    #[serde(default)]
    pub cert_fingerprint: Option<String>,
    /// Seconds per request; `None`: not in the inventory file.
    #[serde(default)]
    pub timeout: Option<u64>,
    /// community.proxmox main's name for `timeout`.
    #[serde(default)]
    pub api_timeout: Option<u64>,
    /// Per-guest reads at once; `None`: not in the inventory file.
    #[serde(default)]
    pub concurrency: Option<u64>,
    /// community.proxmox main's name for `concurrency`.
    #[serde(default)]
    pub facts_concurrency: Option<u64>,
    #[serde(default)]
    pub want_facts: bool,
    #[serde(default)]
    pub want_proxmox_nodes_ansible_host: bool,
    #[serde(default)]
    pub exclude_nodes: bool,
    #[serde(default = "default_prefix")]
    pub facts_prefix: String,
    /// community.proxmox 1.6's shape: templates are no hosts and no guest has a
    /// `proxmox_template` variable (2.x lists templates, with that variable).
    #[serde(default)]
    pub exclude_templates: bool,
    /// No guests at all (no listing, no pools): the nodes only.
    #[serde(default)]
    pub exclude_vms: bool,
    /// Each guest line carries its `/cluster/resources` row and each node line its
    /// `/cluster/status` row (`resource`): the variables of the hostname templates.
    #[serde(default)]
    pub want_resources: bool,
    /// Only these guests (by vmid), with their facts: the second pass of
    /// `want_post_filter_facts`, for the guests the filters kept.
    #[serde(default)]
    pub facts_for: Option<Vec<u64>>,
}

fn yes() -> bool {
    true
}
/// `timeout` when neither it nor `api_timeout` is given (community.proxmox's 5 is not
/// taken: a limit changes no host, and a busy cluster's listing can take longer).
pub(crate) const DEFAULT_TIMEOUT: u64 = 30;
/// `concurrency` when neither it nor `facts_concurrency` is given (community.proxmox's
/// 1 is not taken: the number changes no host, only how long the inventory takes).
pub(crate) const DEFAULT_CONCURRENCY: u64 = 8;

/// One setting under two names, ferrox's and community.proxmox's: the one given, or
/// `default`; both given with different values is an error naming both. The value is
/// then checked against `range`, naming the option it came from.
pub(crate) fn one_of(
    ours: (&str, Option<u64>),
    theirs: (&str, Option<u64>),
    default: u64,
    range: std::ops::RangeInclusive<u64>,
    unit: &str,
) -> Result<u64, String> {
    let (name, value) = match (ours, theirs) {
        ((o, Some(a)), (t, Some(b))) if a != b => {
            return Err(format!(
                "{o} ({a}) and {t} ({b}) are the same setting, under this plugin's name and community.proxmox's: give only one of them, or the same value to both"
            ))
        }
        ((o, Some(a)), _) => (o, a),
        (_, (t, Some(b))) => (t, b),
        ((o, None), _) => (o, default),
    };
    if !range.contains(&value) {
        return Err(format!(
            "{name} must be from {} to {}{unit}, got: {value}",
            range.start(),
            range.end()
        ));
    }
    Ok(value)
}
fn default_prefix() -> String {
    "proxmox_".into()
}

/// Host and port of an `https://host[:port][/]` URL.
pub(crate) fn parse_url(url: &str) -> Result<(String, Option<u16>), String> {
    let trimmed = url.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/api2/json").unwrap_or(trimmed);
    let rest = match trimmed.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => rest,
        Some((scheme, _)) => {
            return Err(format!(
                "url {url}: the scheme {scheme}:// is not supported; the Proxmox VE API is served over HTTPS only: set url to https://<node>:8006"
            ))
        }
        None => return Err(format!("url {url} is not a URL: set url to https://<node>:8006 (PROXMOX_URL in the environment)")),
    };
    if rest.contains('/') || rest.contains('?') || rest.contains('@') {
        return Err(format!(
            "url {url}: only https://host[:port] is supported (no path, query or user part); set url to https://<node>:8006"
        ));
    }
    if rest.is_empty() {
        return Err(format!("url {url} names no host: set url to https://<node>:8006"));
    }
    // Bracketed IPv6 with a port, or host:port; a bare IPv6 literal has several colons.
    let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
        match inner.split_once(']') {
            Some((h, "")) => (h.to_string(), None),
            Some((h, p)) if p.starts_with(':') => (h.to_string(), Some(&p[1..])),
            _ => return Err(format!("url {url}: the IPv6 address is not closed by ]")),
        }
    } else if rest.matches(':').count() == 1 {
        let (h, p) = rest.split_once(':').unwrap_or((rest, ""));
        (h.to_string(), Some(p))
    } else {
        (rest.to_string(), None)
    };
    let port = match port {
        None => None,
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("url {url}: the port {p} is not a number from 1 to 65535"))?,
        ),
    };
    Ok((host, port))
}

impl Config {
    /// The client's connection parameters, with the messages naming this plugin's options.
    pub(crate) fn connection(&self) -> Result<ConnectionParams, String> {
        let (host, port) = parse_url(&self.url)?;
        let non_empty = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let password = non_empty(&self.password);
        let token_id = non_empty(&self.token_id);
        let token_secret = non_empty(&self.token_secret);
        if password.is_none() && (token_id.is_none() || token_secret.is_none()) {
            return Err("You must specify either a password or both token_id and token_secret (options password, token_id, token_secret; or PROXMOX_PASSWORD, PROXMOX_TOKEN_ID, PROXMOX_TOKEN_SECRET in the environment).".into());
        }
        let fingerprint = match non_empty(&self.cert_fingerprint) {
            Some(f) => Some(normalise_fingerprint(&f).ok_or_else(|| {
                format!("cert_fingerprint must be a SHA-256 fingerprint: 32 bytes in hex, optionally colon-separated (like AB:CD:...), got: {f}")
            })?),
            None => None,
        };
        let timeout = self.timeout()?;
        self.concurrency()?;
        Ok(ConnectionParams {
            host,
            port,
            user: self.user.trim().to_string(),
            password,
            token_id,
            token_secret,
            otp: None,
            validate_certs: self.validate_certs,
            ca_path: non_empty(&self.ca_path).map(PathBuf::from),
            cert_fingerprint: fingerprint,
            timeout_secs: timeout,
        })
    }
}

impl Config {
    /// Seconds per request: `timeout` or `api_timeout`.
    pub(crate) fn timeout(&self) -> Result<u64, String> {
        one_of(
            ("timeout", self.timeout),
            ("api_timeout", self.api_timeout),
            DEFAULT_TIMEOUT,
            1..=86_400,
            " (seconds, per request)",
        )
    }

    /// Per-guest reads at once: `concurrency` or `facts_concurrency`.
    pub(crate) fn concurrency(&self) -> Result<u64, String> {
        one_of(
            ("concurrency", self.concurrency),
            ("facts_concurrency", self.facts_concurrency),
            DEFAULT_CONCURRENCY,
            1..=MAX_CONCURRENCY,
            "",
        )
    }
}

/// The client's messages name the modules' options (`api_host`, ...): here they are
/// this plugin's.
pub(crate) fn in_plugin_terms(message: &str) -> String {
    [
        ("api_host and api_port", "url"),
        ("api_host (", "url ("),
        ("api_port (", "port ("),
        ("api_token_secret", "token_secret"),
        ("api_token_id", "token_id"),
        ("api_password", "password"),
        ("api_user", "user"),
        ("api_cert_fingerprint", "cert_fingerprint"),
        ("api_timeout", "timeout"),
        ("api_host", "url"),
        ("api_port", "url"),
    ]
    .iter()
    .fold(message.to_string(), |m, (from, to)| m.replace(from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(parse_url("https://pve1:8006").unwrap(), ("pve1".into(), Some(8006)));
        assert_eq!(parse_url("https://pve1/").unwrap(), ("pve1".into(), None));
        assert_eq!(
            parse_url("https://[2001:db8::1]:8006").unwrap(),
            ("2001:db8::1".into(), Some(8006))
        );
        assert_eq!(
            parse_url("https://pve1:8006/api2/json").unwrap(),
            ("pve1".into(), Some(8006))
        );
        assert!(parse_url("http://pve1:8006").unwrap_err().contains("HTTPS only"));
        assert!(parse_url("pve1").unwrap_err().contains("not a URL"));
        assert!(parse_url("https://pve1:99999").unwrap_err().contains("port"));
        assert!(parse_url("https://proxy/pve").unwrap_err().contains("no path"));
    }

    #[test]
    fn a_setting_under_two_names() {
        let pick = |ours, theirs| one_of(("concurrency", ours), ("facts_concurrency", theirs), 8, 1..=64, "");
        assert_eq!(pick(None, None), Ok(8));
        assert_eq!(pick(Some(4), None), Ok(4));
        assert_eq!(pick(None, Some(1)), Ok(1));
        assert_eq!(pick(Some(16), Some(16)), Ok(16));
        let both = pick(Some(8), Some(4)).unwrap_err();
        assert!(
            both.contains("concurrency (8) and facts_concurrency (4)") && both.contains("only one"),
            "{both}"
        );
        assert_eq!(
            pick(None, Some(0)).unwrap_err(),
            "facts_concurrency must be from 1 to 64, got: 0"
        );
        assert_eq!(
            pick(Some(65), None).unwrap_err(),
            "concurrency must be from 1 to 64, got: 65"
        );
        let timeout = one_of(
            ("timeout", None),
            ("api_timeout", Some(0)),
            30,
            1..=86_400,
            " (seconds)",
        );
        assert_eq!(
            timeout.unwrap_err(),
            "api_timeout must be from 1 to 86400 (seconds), got: 0"
        );
    }

    #[test]
    fn messages_name_the_plugin_options() {
        assert_eq!(
            in_plugin_terms("Check api_host (x) and api_port (8006): ..."),
            "Check url (x) and port (8006): ..."
        );
        assert_eq!(
            in_plugin_terms("check api_user, api_token_id and api_token_secret (or api_password)"),
            "check user, token_id and token_secret (or password)"
        );
    }
}
