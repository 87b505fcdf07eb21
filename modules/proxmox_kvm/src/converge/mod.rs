//! Convergence: compare the task's wanted config with the VM's config and keep only
//! what differs, without ever losing data.
//!
//! The current config is PVE's view with pending changes applied (`GET .../config`),
//! so a change already pending is not sent again. Disks ([`disk`]) and NICs ([`nic`])
//! follow their own safe rules; the other keys compare normalised ([`same_value`]).

pub(crate) mod disk;
pub(crate) mod nic;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use ferrox_cluster::tags::TagCase;
use ferrox_pve_rules::hotplug;
use ferrox_pve_rules::propstring::{self, formats};

use crate::task::config::{url_decode, Config};

/// A disk that only needs to grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grow {
    pub(crate) key: String,
    /// Current size as PVE shows it (`32G`).
    pub(crate) from: String,
    /// New size as PVE's resize takes it (`40G`).
    pub(crate) to: String,
}

/// What an update has to do to an existing VM.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Changes {
    /// Config keys to write, with the value to send.
    pub(crate) set: Config,
    /// The current value of every key in `set` (`None`: the VM has no such key).
    pub(crate) before: BTreeMap<String, Option<String>>,
    /// Disks to grow through PVE's resize.
    pub(crate) grow: Vec<Grow>,
    /// Whether a written key allocates a volume (a new disk, EFI or TPM state).
    pub(crate) allocates: bool,
}

impl Changes {
    pub(crate) fn is_empty(&self) -> bool {
        self.set.is_empty() && self.grow.is_empty()
    }

    /// Every config key that differs, sorted.
    pub(crate) fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.set.keys().cloned().collect();
        keys.extend(self.grow.iter().map(|g| g.key.clone()));
        keys.sort();
        keys.dedup();
        keys
    }
}

impl Changes {
    /// The keys a running VM would keep pending (key -> new value), by PVE's hotplug
    /// rules and the VM's `hotplug` setting: what check mode reports as `pending`.
    pub(crate) fn predicted_pending(&self, current: &Map<String, Value>) -> Map<String, Value> {
        let features = hotplug::features(current.get("hotplug").map(text_of).as_deref());
        self.set
            .iter()
            .filter(|(k, v)| hotplug::stays_pending(k, self.before[*k].as_deref(), Some(v), &features))
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect()
    }
}

/// A config value as text (PVE sends numbers for some keys).
pub(crate) fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The changes that bring `current` to `wanted`; an error when a wanted change would
/// lose data, naming the safe route.
pub(crate) fn changes(
    current: &Map<String, Value>,
    wanted: &Config,
    vmid: u32,
    tag_case: &TagCase,
) -> Result<Changes, String> {
    let mut out = Changes::default();
    let attached = disk::attached_volumes(current);
    for (key, want) in wanted {
        let cur = current.get(key).map(text_of);
        let value = if disk::is_disk_key(key) {
            let step = disk::converge(key, cur.as_deref(), want, &attached, vmid)?;
            if let Some(grow) = step.grow {
                out.grow.push(grow);
            }
            out.allocates |= step.allocates;
            step.set
        } else if nic::is_net_key(key) {
            nic::converge(cur.as_deref(), want)
        } else if key == "cipassword" {
            // PVE never shows the stored password: set it only when there is none.
            cur.is_none().then(|| want.clone())
        } else if key == "tags" {
            match cur.as_deref() {
                Some(c) if tag_case.same(c, want)? => None,
                _ => Some(want.clone()),
            }
        } else if formats::for_config_key(key).is_some() {
            merge_named(key, cur.as_deref(), want)
        } else if cur.as_deref().is_some_and(|c| same_value(key, c, want)) {
            None
        } else {
            Some(want.clone())
        };
        if let Some(v) = value {
            out.before.insert(key.clone(), cur);
            out.set.insert(key.clone(), v);
        }
    }
    Ok(out)
}

/// Whether the VM's value `current` already is what the task wants for `key` (keys
/// that are not property strings).
pub(crate) fn same_value(key: &str, current: &str, wanted: &str) -> bool {
    match key {
        "sshkeys" => key_lines(&url_decode(current)) == key_lines(&url_decode(wanted)),
        "nameserver" | "searchdomain" => words(current) == words(wanted),
        "description" => current.trim_end() == wanted.trim_end(),
        // `1` asks PVE to generate an ID: any ID it generated satisfies it.
        "vmgenid" => current.eq_ignore_ascii_case(wanted) || (wanted == "1" && current != "0"),
        _ => current == wanted || same_number(current, wanted) || same_bool(current, wanted),
    }
}

fn same_number(a: &str, b: &str) -> bool {
    matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
}

fn same_bool(a: &str, b: &str) -> bool {
    let as_bool = |v: &str| propstring::normalise(propstring::Kind::Bool, v).ok();
    as_bool(a).is_some() && as_bool(a) == as_bool(b)
}

/// Property-string keys (`cpu`, `smbios1`, `ipconfig0`, ...): only the fields the task
/// names are compared (PVE fills in others, like `smbios1`'s uuid); when one differs,
/// the current value is sent with the task's fields replaced.
fn merge_named(key: &str, current: Option<&str>, wanted: &str) -> Option<String> {
    let (Some(current), Some(f)) = (current, formats::for_config_key(key)) else {
        return Some(wanted.to_string());
    };
    let (Ok(cur), Ok(want)) = (
        propstring::parse_keeping_unknown(current, f),
        propstring::parse_keeping_unknown(wanted, f),
    ) else {
        return (current != wanted).then(|| wanted.to_string());
    };
    let differing = propstring::differing_keys(&cur, &want, f);
    if differing.is_empty() {
        return None;
    }
    let mut next = cur;
    for k in differing {
        next.set(&k, want.get(&k).unwrap_or_default());
    }
    Some(next.to_canonical(f))
}

fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

fn key_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cfg(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn wanted(pairs: &[(&str, &str)]) -> Config {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn equal_config_means_no_change() {
        let current = cfg(json!({
            "name": "web01", "cores": 2, "memory": "2048", "onboot": 1, "agent": "enabled=1",
            "tags": "prod;web", "nameserver": "1.1.1.1  9.9.9.9",
            "sshkeys": "ssh-ed25519%20AAAA%2Bb%20me%40host%0A",
            "smbios1": "uuid=7b1e9c8a,manufacturer=ACME",
            "net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1",
            "scsi0": "local-lvm:vm-100-disk-0,discard=on,size=32G",
            "cipassword": "**********", "digest": "abc",
        }));
        let w = wanted(&[
            ("name", "web01"),
            ("cores", "2"),
            ("memory", "2048"),
            ("onboot", "1"),
            ("agent", "1"),
            ("tags", "Web;prod"),
            ("nameserver", "1.1.1.1 9.9.9.9"),
            ("sshkeys", "ssh-ed25519%20AAAA%2Bb%20me%40host"),
            ("smbios1", "manufacturer=ACME"),
            ("net0", "virtio,firewall=1,bridge=vmbr0"),
            ("scsi0", "local-lvm:32,discard=on"),
            ("cipassword", "secret"),
        ]);
        let c = changes(&current, &w, 100, &TagCase::known(false)).unwrap();
        assert!(c.is_empty(), "{c:?}");
    }

    #[test]
    fn only_differing_keys_are_sent() {
        let current = cfg(json!({"name": "web01", "cores": 2, "memory": "2048", "smbios1": "uuid=u1"}));
        let w = wanted(&[
            ("name", "web01"),
            ("cores", "4"),
            ("memory", "2048"),
            ("balloon", "0"),
            ("smbios1", "serial=S"),
        ]);
        let c = changes(&current, &w, 100, &TagCase::known(false)).unwrap();
        assert_eq!(c.keys(), vec!["balloon", "cores", "smbios1"]);
        assert_eq!(c.set["cores"], "4");
        assert_eq!(c.set["smbios1"], "serial=S,uuid=u1");
        assert_eq!(c.before["cores"].as_deref(), Some("2"));
        assert_eq!(c.before["balloon"], None);
        let c = changes(
            &current,
            &wanted(&[("cpu", "host"), ("agent", "enabled=1,fstrim_cloned_disks=1")]),
            100,
            &TagCase::known(false),
        )
        .unwrap();
        assert_eq!(c.set["cpu"], "host");
        assert_eq!(c.set["agent"], "enabled=1,fstrim_cloned_disks=1");
    }

    #[test]
    fn a_case_change_of_tags_is_sent_only_to_a_case_sensitive_cluster() {
        let current = cfg(json!({"tags": "Web;prod"}));
        let w = wanted(&[("tags", "web;prod")]);
        assert!(changes(&current, &w, 100, &TagCase::known(false)).unwrap().is_empty());
        let c = changes(&current, &w, 100, &TagCase::known(true)).unwrap();
        assert_eq!(c.set["tags"], "web;prod");
        assert_eq!(c.before["tags"].as_deref(), Some("Web;prod"));
        let same = wanted(&[("tags", "prod,Web")]);
        assert!(changes(&current, &same, 100, &TagCase::known(true)).unwrap().is_empty());
    }
}
