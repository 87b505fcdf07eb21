//! The connection options every module accepts (community.proxmox §1.1, with the 2.0
//! behaviour: `validate_certs` defaults to true, `ca_path` is honoured, `api_otp`),
//! plus `api_cert_fingerprint` for pinning PVE's self-signed certificate.
//!
//! Every module of the `group/ferrox.proxmox.proxmox` action group receives all of
//! these through `module_defaults`, so every module declares all of them.
//!
//! Without `api_host` (nor `PROXMOX_HOST`) a module runs in local mode, as on
//! community.proxmox main: it calls the API through `pvesh` on the Proxmox VE node it
//! runs on, as `root@pam`, with no credentials ([`local_mode`] checks that it can, before
//! anything else; the client's `local` transport does the calls). The credential and TLS
//! options do not apply there, and giving one is warned about.

use std::path::PathBuf;

use ferrox_ansible::options::{Opt, Params, Rules};

use crate::local_mode;
pub use ferrox_pve_client::connection::{normalise_fingerprint, ConnectionParams};

/// Of the options a task's reader left unread (`Reader::unread`), those that are not
/// connection options (the run reads those, not the task): what each module's
/// `every_declared_option_of_the_module_is_read` test expects to be empty.
pub fn task_options_unread(unread: Vec<&'static str>) -> Vec<&'static str> {
    let connection: Vec<&str> = options().iter().map(|o| o.name).collect();
    unread.into_iter().filter(|n| !connection.contains(n)).collect()
}

/// The shared connection options, declared once.
pub fn options() -> Vec<Opt> {
    vec![
        Opt::str("api_host")
            .env(&["PROXMOX_HOST"])
            .desc("Host name or IP address of any node of the Proxmox VE cluster. May carry a port (C(pve1:8443)); IPv6 literals are accepted with or without brackets.")
            .desc("If not set, the value of the E(PROXMOX_HOST) environment variable is used.")
            .desc("If neither is set, the module runs in local mode, as community.proxmox's modules do without it: on the Proxmox VE node the task runs on (delegate it to a node with C(delegate_to)), it calls the API through C(pvesh) as C(root@pam), with no password or token. The task must run as root there (C(become: true) for another remote user)."),
        Opt::int("api_port")
            .env(&["PROXMOX_PORT"])
            .desc("Port of the Proxmox VE API. Defaults to C(8006) when neither this option nor O(api_host) gives a port.")
            .desc("If not set, the value of the E(PROXMOX_PORT) environment variable is used.")
            .warn_when(|p| is_local(p) && p.is_set("api_port"), "api_port is ignored without api_host: in local mode the module runs pvesh on the node it runs on, which needs no port. Remove api_port, or set api_host to call the API over HTTPS."),
        Opt::str("api_user")
            .default(LOCAL_USER)
            .env(&["PROXMOX_USER"])
            .desc("User to authenticate as, with its realm, for example C(root@pam). With token authentication, the user owning the token.")
            .desc("Defaults to C(root@pam), as on community.proxmox's main branch; in local mode (no O(api_host)) pvesh always runs as C(root@pam).")
            .desc("If not set, the value of the E(PROXMOX_USER) environment variable is used.")
            .warn_when(|p| is_local(p) && p.str("api_user").is_some_and(|u| u != LOCAL_USER), "api_user is ignored without api_host: in local mode the module runs pvesh on the node, always as root@pam. Remove api_user, or set api_host to call the API over HTTPS as that user."),
        Opt::str("api_password")
            .no_log()
            .env(&["PROXMOX_PASSWORD"])
            .desc("Password of O(api_user). When set, a ticket is requested and the token options are ignored.")
            .desc("If not set, the value of the E(PROXMOX_PASSWORD) environment variable is used.")
            .warn_when(|p| is_local(p) && p.is_set("api_password"), "api_password is ignored without api_host: in local mode the module runs pvesh on the node as root@pam, which needs no password. Remove api_password, or set api_host to log in over HTTPS."),
        Opt::str("api_token_id")
            .env(&["PROXMOX_TOKEN_ID"])
            .desc("Name of the API token of O(api_user), without the user part (C(automation), not C(ansible@pve!automation)).")
            .desc("If not set, the value of the E(PROXMOX_TOKEN_ID) environment variable is used.")
            .warn_when(|p| is_local(p) && p.is_set("api_token_id"), "api_token_id is ignored without api_host: in local mode the module runs pvesh on the node as root@pam, which needs no token. Remove api_token_id, or set api_host to use the token over HTTPS."),
        Opt::str("api_token_secret")
            .no_log()
            .env(&["PROXMOX_TOKEN_SECRET"])
            .desc("Secret (a UUID) of the API token O(api_token_id).")
            .desc("If not set, the value of the E(PROXMOX_TOKEN_SECRET) environment variable is used.")
            .warn_when(|p| is_local(p) && p.is_set("api_token_secret"), "api_token_secret is ignored without api_host: in local mode the module runs pvesh on the node as root@pam, which needs no token. Remove api_token_secret, or set api_host to use the token over HTTPS."),
        Opt::str("api_otp")
            .no_log()
            .env(&["PROXMOX_OTP"])
            .desc("One-time password (TOTP) for users with two-factor authentication; only used with O(api_password).")
            .desc("If not set, the value of the E(PROXMOX_OTP) environment variable is used.")
            .warn_when(|p| is_local(p) && p.is_set("api_otp"), "api_otp is ignored without api_host: in local mode the module runs pvesh on the node as root@pam, which needs no login. Remove api_otp, or set api_host to log in over HTTPS."),
        Opt::bool("validate_certs")
            .default(true)
            .env(&["PROXMOX_VALIDATE_CERTS"])
            .desc("Whether to verify the TLS certificate of the API. Defaults to V(true), as in community.proxmox 2.0 (1.6 defaulted to V(false) with a deprecation warning).")
            .desc("For Proxmox VE's self-signed certificate, prefer O(api_cert_fingerprint) or O(ca_path) to turning verification off.")
            .desc("If not set, the value of the E(PROXMOX_VALIDATE_CERTS) environment variable is used."),
        Opt::path("ca_path")
            .env(&["PROXMOX_CA_PATH"])
            .desc("PEM file with the CA certificate(s) to trust for the API's certificate instead of the built-in web PKI roots. Ignored when O(validate_certs=false).")
            .desc("If not set, the value of the E(PROXMOX_CA_PATH) environment variable is used.")
            .warn_when(|p| is_local(p) && p.is_set("ca_path"), "ca_path is ignored without api_host: in local mode no TLS connection is made. Remove ca_path, or set api_host to call the API over HTTPS."),
        Opt::str("api_cert_fingerprint")
            .env(&["PROXMOX_CERT_FINGERPRINT"])
            .added("0.1.0")
            .desc("SHA-256 fingerprint of the API's TLS certificate (as shown by Proxmox VE under Node > System > Certificates, C(AB:CD:...); colons and case do not matter). When set, the certificate is trusted if and only if its fingerprint matches, whoever signed it: the usual answer for a node's self-signed certificate.")
            .desc("If not set, the value of the E(PROXMOX_CERT_FINGERPRINT) environment variable is used.")
            .warn_when(|p| is_local(p) && p.is_set("api_cert_fingerprint"), "api_cert_fingerprint is ignored without api_host: in local mode no TLS connection is made. Remove api_cert_fingerprint, or set api_host to call the API over HTTPS."),
        Opt::int("api_timeout")
            .default(5)
            .env(&["PROXMOX_API_TIMEOUT"])
            .desc("Timeout in seconds of each HTTP request to the API (connect and read). Waiting for Proxmox VE tasks is governed by the C(timeout) option of the modules that wait for them.")
            .desc("A request Proxmox VE did not act on (a C(503) or C(595) answer, a lock timeout, a connection refused by a node that answered before) is sent again, with growing pauses, for as long as the module's C(timeout) allows, or this long in modules without one.")
            .desc("If not set, the value of the E(PROXMOX_API_TIMEOUT) environment variable is used."),
    ]
}

/// The constraints between the connection options (that `api_host` needs credentials is
/// checked by [`FromOptions::from_params`]: without it none are needed).
pub fn rules() -> Rules {
    Rules::default().required_together(&["api_token_id", "api_token_secret"])
}

/// Who local mode runs as, and `api_user`'s default.
pub const LOCAL_USER: &str = "root@pam";

/// Whether the task runs in local mode: no `api_host` (nor `PROXMOX_HOST`).
pub fn is_local(p: &Params) -> bool {
    p.non_empty("api_host").is_none()
}

/// The longest `api_timeout` accepted: a day per request is already far beyond any
/// answer PVE gives, and larger values overflow the clock arithmetic of the HTTP client.
pub const MAX_API_TIMEOUT_SECS: i64 = 86_400;

/// The connection options read into the client's [`ConnectionParams`] (a trait: the
/// client's type knows nothing of module options).
pub trait FromOptions: Sized {
    /// Reads the connection options from validated module parameters.
    fn from_params(p: &Params) -> Result<Self, String>;
}

impl FromOptions for ConnectionParams {
    fn from_params(p: &Params) -> Result<ConnectionParams, String> {
        if is_local(p) {
            local_mode::ready(&local_mode::Node::probe())?;
        } else if p.non_empty("api_password").is_none() && p.non_empty("api_token_id").is_none() {
            return Err("one of the following is required: api_password, api_token_id".into());
        }
        let fingerprint = match p.non_empty("api_cert_fingerprint") {
            Some(f) => Some(normalise_fingerprint(f).ok_or_else(|| {
                format!("api_cert_fingerprint must be a SHA-256 fingerprint: 32 bytes in hex, optionally colon-separated (like AB:CD:...), got: {f}")
            })?),
            None => None,
        };
        let port = match p.int("api_port") {
            Some(n) if (1..=65535).contains(&n) => Some(n as u16),
            Some(n) => return Err(format!("api_port must be between 1 and 65535, got: {n}")),
            None => None,
        };
        let timeout = p.int("api_timeout").unwrap_or(5);
        if !(1..=MAX_API_TIMEOUT_SECS).contains(&timeout) {
            return Err(format!(
                "api_timeout must be from 1 to {MAX_API_TIMEOUT_SECS} (seconds, per request), got: {timeout}"
            ));
        }
        if is_local(p) {
            return Ok(ConnectionParams {
                user: LOCAL_USER.to_string(),
                timeout_secs: timeout as u64,
                ..ConnectionParams::default()
            });
        }
        Ok(ConnectionParams {
            host: p.str("api_host").unwrap_or_default().to_string(),
            port,
            user: p.str("api_user").unwrap_or_default().to_string(),
            password: p.non_empty("api_password").map(str::to_string),
            token_id: p.non_empty("api_token_id").map(str::to_string),
            token_secret: p.non_empty("api_token_secret").map(str::to_string),
            otp: p.non_empty("api_otp").map(str::to_string),
            validate_certs: p.bool("validate_certs").unwrap_or(true),
            ca_path: p.str("ca_path").map(PathBuf::from),
            cert_fingerprint: fingerprint,
            timeout_secs: timeout as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(extra: serde_json::Value) -> Params {
        let mut map: serde_json::Map<String, serde_json::Value> = options()
            .iter()
            .map(|o| (o.name.to_string(), serde_json::Value::Null))
            .collect();
        map.extend(
            serde_json::json!({"api_host": "pve1", "api_user": "root@pam", "api_password": "x"})
                .as_object()
                .unwrap()
                .clone(),
        );
        map.extend(extra.as_object().unwrap().clone());
        Params::new(map)
    }

    #[test]
    fn api_timeout_is_bounded_so_the_clock_cannot_overflow() {
        assert_eq!(
            ConnectionParams::from_params(&params(serde_json::json!({"api_timeout": 86400})))
                .unwrap()
                .timeout_secs,
            86400
        );
        let e = ConnectionParams::from_params(&params(serde_json::json!({"api_timeout": i64::MAX}))).unwrap_err();
        assert!(e.starts_with("api_timeout must be from 1 to 86400"), "{e}");
        assert!(ConnectionParams::from_params(&params(serde_json::json!({"api_timeout": 0}))).is_err());
    }

    #[test]
    fn api_host_needs_credentials_and_its_absence_none() {
        let none = serde_json::json!({"api_password": null});
        let e = ConnectionParams::from_params(&params(none.clone())).unwrap_err();
        assert_eq!(e, "one of the following is required: api_password, api_token_id");
        // Without api_host: local mode, as root@pam, with nothing of the HTTPS options,
        // when this machine has pvesh and the task is root; else the message says what is missing.
        let local = params(serde_json::json!({"api_host": null, "api_user": "ansible@pve", "api_port": 8006}));
        match local_mode::ready(&local_mode::Node::probe()) {
            Ok(()) => {
                let conn = ConnectionParams::from_params(&local).unwrap();
                assert_eq!(
                    (conn.host.as_str(), conn.user.as_str(), conn.port, conn.password),
                    ("", "root@pam", None, None)
                );
            }
            Err(why) => assert_eq!(ConnectionParams::from_params(&local).unwrap_err(), why),
        }
    }

    #[test]
    fn fingerprints_normalise() {
        let colon = "ab:".repeat(31) + "ab";
        assert_eq!(normalise_fingerprint(&colon), Some("AB".repeat(32)));
        assert_eq!(normalise_fingerprint("abcd"), None);
    }
}
