//! What a conformance run may touch and how it connects, from the environment: the
//! modules' own `PROXMOX_*` variables (so the playbooks and the harness use one
//! connection) plus `FERROX_CONFORMANCE_*`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use ferrox_pve_client::connection::{normalise_fingerprint, ConnectionParams};

pub(super) const DEFAULT_RANGE: (u32, u32) = (990_000, 990_049);
pub(super) const DEFAULT_PREFIX: &str = "ferroxconf-";
pub(super) const DEFAULT_BRIDGE: &str = "vmbr0";

#[derive(Debug, Clone)]
pub(super) struct Settings {
    pub connection: ConnectionParams,
    pub node: String,
    pub storage: String,
    pub bridge: String,
    /// Inclusive.
    pub range: (u32, u32),
    pub prefix: String,
}

impl Settings {
    pub(super) fn from_env() -> Result<Settings> {
        Self::from_lookup(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
    }

    pub(super) fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Settings> {
        let required = |k: &str, what: &str| var(k).with_context(|| format!("{k} is not set: {what}"));
        let host = required("PROXMOX_HOST", "the Proxmox VE node or cluster address to test against")?;
        let user = required("PROXMOX_USER", "the API user, like conformance@pve")?;
        let port = match var("PROXMOX_PORT") {
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0)
                    .with_context(|| format!("PROXMOX_PORT must be a port number, got: {p}"))?,
            ),
            None => None,
        };
        let fingerprint = match var("PROXMOX_CERT_FINGERPRINT") {
            Some(f) => Some(normalise_fingerprint(&f).with_context(|| {
                format!("PROXMOX_CERT_FINGERPRINT must be a SHA-256 fingerprint (AB:CD:... 32 bytes), got: {f}")
            })?),
            None => None,
        };
        let validate_certs = match var("PROXMOX_VALIDATE_CERTS")
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("1" | "true" | "yes" | "on") => true,
            Some("0" | "false" | "no" | "off") => false,
            Some(other) => bail!("PROXMOX_VALIDATE_CERTS must be true or false, got: {other}"),
        };
        let timeout_secs = match var("PROXMOX_API_TIMEOUT") {
            Some(t) => t
                .parse::<u64>()
                .ok()
                .filter(|t| *t > 0)
                .with_context(|| format!("PROXMOX_API_TIMEOUT must be seconds, got: {t}"))?,
            None => 30,
        };
        let connection = ConnectionParams {
            host,
            port,
            user,
            password: var("PROXMOX_PASSWORD"),
            token_id: var("PROXMOX_TOKEN_ID"),
            token_secret: var("PROXMOX_TOKEN_SECRET"),
            otp: var("PROXMOX_OTP"),
            validate_certs,
            ca_path: var("PROXMOX_CA_PATH").map(PathBuf::from),
            cert_fingerprint: fingerprint,
            timeout_secs,
        };
        if connection.password.is_none() && (connection.token_id.is_none() || connection.token_secret.is_none()) {
            bail!("set PROXMOX_TOKEN_ID and PROXMOX_TOKEN_SECRET (an API token, see the guide docs/docsite/rst/guide_conformance.rst) or PROXMOX_PASSWORD");
        }
        let node = required("FERROX_CONFORMANCE_NODE", "the node to create the test VMs on")?;
        let storage = required(
            "FERROX_CONFORMANCE_STORAGE",
            "a storage of that node for VM disks (content images), like local-lvm",
        )?;
        let bridge = var("FERROX_CONFORMANCE_BRIDGE").unwrap_or_else(|| DEFAULT_BRIDGE.into());
        let range = match var("FERROX_CONFORMANCE_VMID_RANGE") {
            Some(r) => parse_range(&r)?,
            None => DEFAULT_RANGE,
        };
        let prefix = var("FERROX_CONFORMANCE_PREFIX").unwrap_or_else(|| DEFAULT_PREFIX.into());
        check_prefix(&prefix)?;
        Ok(Settings {
            connection,
            node,
            storage,
            bridge,
            range,
            prefix,
        })
    }

    pub(super) fn in_range(&self, vmid: u32) -> bool {
        (self.range.0..=self.range.1).contains(&vmid)
    }
}

/// `990000-990049`: at least 10 ids (the scenarios hold up to 4 VMs at once, and a
/// range shared with stale leftovers needs room), inside PVE's vmid limits.
pub(super) fn parse_range(text: &str) -> Result<(u32, u32)> {
    let bad = || format!("FERROX_CONFORMANCE_VMID_RANGE must be FIRST-LAST (like 990000-990049), got: {text}");
    let (a, b) = text.split_once('-').with_context(bad)?;
    let first: u32 = a.trim().parse().ok().with_context(bad)?;
    let last: u32 = b.trim().parse().ok().with_context(bad)?;
    if first < 100 || last > 999_999_999 || first > last {
        bail!("{}: the ids must lie within 100-999999999, first before last", bad());
    }
    if last - first + 1 < 10 {
        bail!(
            "FERROX_CONFORMANCE_VMID_RANGE {text} holds {} ids; give it at least 10",
            last - first + 1
        );
    }
    Ok((first, last))
}

/// A prefix that is the start of a valid VM name (DNS label characters) and long enough
/// not to match a user's VM by accident.
pub(super) fn check_prefix(prefix: &str) -> Result<()> {
    let valid = prefix.len() >= 4
        && prefix.len() <= 32
        && prefix.starts_with(|c: char| c.is_ascii_alphabetic())
        && prefix.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !valid {
        bail!(
            "FERROX_CONFORMANCE_PREFIX must be 4 to 32 letters, digits or '-', starting with a letter, got: {prefix:?}"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn settings(extra: &[(&str, &str)]) -> Result<Settings> {
        let mut env: HashMap<&str, &str> = [
            ("PROXMOX_HOST", "pve1.example.org"),
            ("PROXMOX_USER", "conformance@pve"),
            ("PROXMOX_TOKEN_ID", "run"),
            ("PROXMOX_TOKEN_SECRET", "s3cret"),
            ("FERROX_CONFORMANCE_NODE", "pve1"),
            ("FERROX_CONFORMANCE_STORAGE", "local-lvm"),
        ]
        .into();
        for (k, v) in extra {
            env.insert(k, v);
        }
        Settings::from_lookup(|k| env.get(k).map(|v| v.to_string()).filter(|v| !v.is_empty()))
    }

    #[test]
    fn defaults_apply() {
        let s = settings(&[]).unwrap();
        assert_eq!(
            (s.range, s.prefix.as_str(), s.bridge.as_str()),
            (DEFAULT_RANGE, DEFAULT_PREFIX, DEFAULT_BRIDGE)
        );
        assert!(s.connection.validate_certs);
        assert!(s.in_range(990_000) && s.in_range(990_049) && !s.in_range(990_050));
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = |extra: &[(&str, &str)]| settings(extra).unwrap_err().to_string();
        assert!(e(&[("FERROX_CONFORMANCE_VMID_RANGE", "990049-990000")]).contains("FERROX_CONFORMANCE_VMID_RANGE"));
        assert!(e(&[("FERROX_CONFORMANCE_VMID_RANGE", "990000-990003")]).contains("at least 10"));
        assert!(e(&[("FERROX_CONFORMANCE_PREFIX", "x")]).contains("FERROX_CONFORMANCE_PREFIX"));
        assert!(e(&[("FERROX_CONFORMANCE_NODE", "")]).contains("FERROX_CONFORMANCE_NODE is not set"));
        assert!(e(&[("PROXMOX_TOKEN_SECRET", "")]).contains("PROXMOX_TOKEN_SECRET"));
        assert!(e(&[("PROXMOX_CERT_FINGERPRINT", "AB:CD")]).contains("SHA-256"));
    }
}
