//! Keys newer than the schema, and the rule that decides them by the cluster's release.
//!
//! The collection carries the PVE 9.1 schema, but a cluster may run a newer release with
//! keys the schema lacks: a client-side schema must never be stricter than the cluster
//! it talks to. So a key the schema does not know is sent, with a warning, when the
//! cluster is newer than the schema ([`SCHEMA_PVE`]), and refused only when the cluster
//! is known not to have it: at or below the schema's release, or, for the sub-keys of
//! `newer-keys.json` ([`INTRODUCED`]), older than the release that brought them. The
//! cluster's release is its pve-manager version (`GET /version`), read by the caller at
//! most once per task and only when a task has such a key.

pub use super::formats::{INTRODUCED, SCHEMA_PVE};
use super::keys::SCHEMA_VERSION;
use super::Format;

/// A sub-key a PVE release has and an older one lacks (an entry of `newer-keys.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Introduced {
    /// The config key as the schema names it: `net[n]`, `cpu`, `agent`.
    pub config_key: &'static str,
    /// The sub-key: `host-tunnel`.
    pub key: &'static str,
    /// The first pve-manager release that runs with it.
    pub pve: &'static str,
    /// The qemu-server release that added it.
    pub qemu_server: &'static str,
}

/// Why a key of the task depends on the cluster's release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Needs {
    /// A sub-key of [`INTRODUCED`].
    Release(&'static Introduced),
    /// A key the schema does not know; `hint` says what it knows instead.
    Unknown {
        /// What the schema knows instead (`known keys: ...`).
        hint: String,
    },
}

/// A key or sub-key of the task that only the cluster's release decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    /// Where the task names it, in the task's terms: `net.net0`, `cpu`, `extra_config`.
    pub at: String,
    /// The key or sub-key (`host-tunnel`, `level`).
    pub key: String,
    /// Why the cluster's release decides it.
    pub needs: Needs,
}

/// What to do with a [`Versioned`] key on a cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Sent as given, without a word.
    Send,
    /// Sent, with this warning.
    Warn(String),
    /// Not sent; the task fails with this message.
    Refuse(String),
}

/// `9.1.5` -> (9, 1, 5); a missing part counts as 0, a suffix (`9.2.6-1`) is ignored;
/// `None` when it does not start with a number.
pub fn version_tuple(version: &str) -> Option<(u32, u32, u32)> {
    let mut parts = version.trim().split(['.', '-']).map(|p| p.parse::<u32>().ok());
    let major = parts.next().flatten()?;
    let mut next = || parts.next().flatten().unwrap_or(0);
    Some((major, next(), next()))
}

/// The rule: `cluster` is what `GET /version` says the cluster runs.
pub fn verdict(v: &Versioned, cluster: &str) -> Verdict {
    let Versioned { at, key, needs } = v;
    let Some(runs) = version_tuple(cluster) else {
        return Verdict::Warn(format!(
            "{at}: {key} is not in the PVE {SCHEMA_VERSION} schema this collection knows for this release; sent as given because the cluster's version ('{cluster}') could not be read"
        ));
    };
    match needs {
        Needs::Release(i) if version_tuple(i.pve).is_some_and(|needed| runs >= needed) => Verdict::Send,
        Needs::Release(i) => Verdict::Refuse(format!(
            "{at}: {key} needs PVE {} (qemu-server {}) or later; the cluster runs {cluster}: upgrade the cluster, or leave {key} out",
            i.pve, i.qemu_server
        )),
        Needs::Unknown { .. } if version_tuple(SCHEMA_PVE).is_some_and(|schema| runs > schema) => Verdict::Warn(format!(
            "{at}: {key} is not in the PVE {SCHEMA_VERSION} schema this collection knows; sent as given because the cluster runs {cluster}"
        )),
        Needs::Unknown { hint } => Verdict::Refuse(format!(
            "{at}: unknown key '{key}' ({hint}); the cluster runs {cluster}, which the PVE {SCHEMA_VERSION} schema this collection knows covers (up to {SCHEMA_PVE}): check the spelling"
        )),
    }
}

/// The verdicts of `keys` on a cluster at `cluster`: the warnings, or the first refusal.
pub fn settle(keys: &[Versioned], cluster: &str) -> Result<Vec<String>, String> {
    let mut warnings = Vec::new();
    for v in keys {
        match verdict(v, cluster) {
            Verdict::Send => {}
            Verdict::Warn(w) => warnings.push(w),
            Verdict::Refuse(why) => return Err(why),
        }
    }
    Ok(warnings)
}

/// The sub-keys written in `text` (a value of config key `config_key` in format `f`)
/// that only the cluster's release decides: those of [`INTRODUCED`] as written (an old
/// alias like `freeze-fs-on-backup` is not one) and those `f` does not know.
pub fn sub_keys(at: &str, text: &str, f: &Format) -> Vec<Versioned> {
    let written = text
        .split(',')
        .filter_map(|part| part.split_once('=').map(|(k, _)| k.trim()));
    written
        .filter_map(|key| {
            let needs = match INTRODUCED.iter().find(|i| i.config_key == f.name && i.key == key) {
                Some(i) => Needs::Release(i),
                None if f.raw_key(key).is_none() => Needs::Unknown {
                    hint: format!(
                        "known keys: {}",
                        f.canonical_keys().map(|k| k.name).collect::<Vec<_>>().join(", ")
                    ),
                },
                None => return None,
            };
            Some(Versioned {
                at: at.to_string(),
                key: key.to_string(),
                needs,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::propstring::formats::{AGENT, CPU, NET};

    fn unknown(key: &str) -> Versioned {
        Versioned {
            at: "extra_config".into(),
            key: key.into(),
            needs: Needs::Unknown { hint: "a hint".into() },
        }
    }

    fn introduced(key: &str) -> Versioned {
        let i = INTRODUCED.iter().find(|i| i.key == key).unwrap();
        Versioned {
            at: "net.net0".into(),
            key: key.into(),
            needs: Needs::Release(i),
        }
    }

    #[test]
    fn the_rule_by_the_clusters_release() {
        let refused = |v: &Versioned, c| matches!(verdict(v, c), Verdict::Refuse(_));
        let warned = |v: &Versioned, c| matches!(verdict(v, c), Verdict::Warn(_));
        // (key, cluster, send silently, warn, refuse)
        let table: &[(Versioned, &str, bool, bool, bool)] = &[
            (introduced("host-tunnel"), "9.2.6", true, false, false),
            (introduced("host-tunnel"), "9.2.4", true, false, false),
            (introduced("host-tunnel"), "9.2.3", false, false, true),
            (introduced("host-tunnel"), "9.1.5", false, false, true),
            (introduced("level"), "9.1.16", true, false, false),
            (introduced("level"), "9.1.15", false, false, true),
            (unknown("newkey"), "9.2.6", false, true, false),
            (unknown("newkey"), "9.1.10", false, true, false),
            (unknown("newkey"), SCHEMA_PVE, false, false, true),
            (unknown("newkey"), "9.1.5", false, false, true),
            (unknown("newkey"), "8.4.14", false, false, true),
            (introduced("host-tunnel"), "", false, true, false),
            (unknown("newkey"), "unknown", false, true, false),
        ];
        for (v, cluster, send, warn, refuse) in table {
            let got = verdict(v, cluster);
            assert_eq!(
                (got == Verdict::Send, warned(v, cluster), refused(v, cluster)),
                (*send, *warn, *refuse),
                "{} on {cluster}: {got:?}",
                v.key
            );
        }
    }

    #[test]
    fn messages_name_the_key_the_versions_and_the_fix() {
        assert_eq!(
            verdict(&introduced("host-tunnel"), "9.1.5"),
            Verdict::Refuse("net.net0: host-tunnel needs PVE 9.2.4 (qemu-server 9.1.18) or later; the cluster runs 9.1.5: upgrade the cluster, or leave host-tunnel out".into())
        );
        assert_eq!(
            verdict(&unknown("newkey"), "9.2.6"),
            Verdict::Warn("extra_config: newkey is not in the PVE 9.1 schema this collection knows; sent as given because the cluster runs 9.2.6".into())
        );
        assert_eq!(
            verdict(&unknown("newkey"), "9.1.5"),
            Verdict::Refuse("extra_config: unknown key 'newkey' (a hint); the cluster runs 9.1.5, which the PVE 9.1 schema this collection knows covers (up to 9.1.9): check the spelling".into())
        );
        assert_eq!(
            settle(&[unknown("a"), introduced("host-tunnel")], "9.2.6")
                .unwrap()
                .len(),
            1
        );
        assert!(settle(&[unknown("a"), introduced("host-tunnel")], "9.1.5")
            .unwrap_err()
            .starts_with("extra_config: unknown key 'a'"));
    }

    #[test]
    fn sub_keys_are_the_introduced_and_the_unknown_ones_as_written() {
        let found = sub_keys("net.net0", "virtio,bridge=vmbr0,host-tunnel=0,speed=10", &NET);
        assert_eq!(
            found.iter().map(|v| v.key.as_str()).collect::<Vec<_>>(),
            ["host-tunnel", "speed"]
        );
        assert!(matches!(found[0].needs, Needs::Release(i) if i.qemu_server == "9.1.18"));
        assert!(matches!(&found[1].needs, Needs::Unknown { hint } if hint.starts_with("known keys: ")));
        assert!(sub_keys("cpu", "host,flags=+aes", &CPU).is_empty());
        assert_eq!(sub_keys("cpu", "host,level=30", &CPU)[0].key, "level");
        assert!(
            sub_keys("agent", "1,freeze-fs-on-backup=0", &AGENT).is_empty(),
            "the old name is not new"
        );
        assert_eq!(sub_keys("agent", "1,freeze-fs=0", &AGENT)[0].key, "freeze-fs");
    }
}
