//! What a VM's cloud-init drive holds, next to its config.
//!
//! PVE writes cloud-init keys to a running VM's config at once (they never show under
//! `/pending`), but the guest reads them from the cloud-init drive, which PVE rebuilds
//! only at a start (an API reboot is a stop plus a start), on `PUT .../cloudinit`, or at
//! once with the VM's `cloudinit` hotplug feature. `GET .../cloudinit` lists what the
//! drive lacks; it does not list a changed (not added or removed) `ipconfigN`, so a run
//! that changes one counts it itself. The content of a `cicustom` snippet is not tracked
//! by PVE: editing a snippet is invisible here too.

use serde_json::{Map, Value};

use crate::propstring::is_bus_drive_key as is_drive_key;

/// PVE's mask for the stored password.
pub const PASSWORD_MASK: &str = "**********";

/// The config keys the cloud-init drive is generated from that the task can set.
pub fn is_key(key: &str) -> bool {
    matches!(
        key,
        "ciuser" | "cipassword" | "sshkeys" | "nameserver" | "searchdomain" | "citype" | "ciupgrade" | "cicustom"
    ) || key
        .strip_prefix("ipconfig")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether a config entry is a cloud-init drive (`ide2: local-lvm:vm-101-cloudinit,media=cdrom`,
/// or `local-lvm:cloudinit` as a task asks for one).
pub fn is_drive(value: &str) -> bool {
    let volume = value.split(',').next().unwrap_or_default();
    volume.ends_with(":cloudinit") || volume.contains("-cloudinit")
}

/// Whether a config (key, value) has a cloud-init drive.
pub fn has_drive<'a>(config: impl IntoIterator<Item = (&'a str, &'a str)>) -> bool {
    config.into_iter().any(|(k, v)| is_drive_key(k) && is_drive(v))
}

/// [`has_drive`] of a config as PVE answers it.
pub fn config_has_drive(config: &Map<String, Value>) -> bool {
    has_drive(config.iter().filter_map(|(k, v)| Some((k.as_str(), v.as_str()?))))
}

/// Whether PVE rebuilds the drive of the running VM at once (`hotplug` names `cloudinit`).
pub fn regenerated_at_once(hotplug: Option<&str>) -> bool {
    hotplug.is_some_and(|h| h.split(',').any(|f| f.trim() == "cloudinit"))
}

/// `GET .../cloudinit`: per key, the drive's value (`None`: the key is not on the drive)
/// and what the config has that the drive lacks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DriveState {
    /// Keys the drive lacks -> the config's value (`(delete)`: removed from the config).
    pub waiting: Map<String, Value>,
    /// Keys listed in sync -> the value the drive holds.
    pub in_drive: Map<String, Value>,
}

/// The [`DriveState`] of a `GET .../cloudinit` listing (the shape of `/pending`, read by
/// [`crate::pending::entries`]): `pending` and `delete` entries are what the drive lacks,
/// the rest what it holds.
pub fn parse(listing: &Value) -> DriveState {
    let mut out = DriveState::default();
    for entry in crate::pending::entries(listing) {
        if entry.delete {
            out.waiting.insert(entry.key, Value::String("(delete)".into()));
        } else if let Some(p) = entry.pending {
            out.waiting.insert(entry.key, p);
        } else if let Some(v) = entry.value {
            out.in_drive.insert(entry.key, v);
        }
    }
    out.waiting = sorted(out.waiting);
    out
}

/// In key order, as PVE lists pending changes.
fn sorted(map: Map<String, Value>) -> Map<String, Value> {
    let mut entries: Vec<(String, Value)> = map.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.into_iter().collect()
}

impl DriveState {
    /// What the drive lacks once `written` (key -> new value, as sent) is in the config
    /// of the running VM: the listing's keys plus the written cloud-init keys, except a
    /// key written back to the value the drive holds. Passwords show as PVE masks them.
    pub fn after_writing<'a>(&self, written: impl IntoIterator<Item = (&'a String, &'a String)>) -> Map<String, Value> {
        let mut out = self.waiting.clone();
        for (key, value) in written.into_iter().filter(|(k, _)| is_key(k)) {
            let shown = if key == "cipassword" {
                PASSWORD_MASK.to_string()
            } else {
                value.clone()
            };
            let back_to_drive =
                key != "cipassword" && self.in_drive.get(key).and_then(Value::as_str) == Some(value.as_str());
            if !back_to_drive {
                out.insert(key.clone(), Value::String(shown));
            }
        }
        sorted(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_and_drives() {
        assert!(is_key("ipconfig12") && is_key("sshkeys") && is_key("cicustom"));
        assert!(!is_key("ipconfig") && !is_key("name") && !is_key("net0"));
        assert!(is_drive("local-lvm:vm-101-cloudinit,media=cdrom") && is_drive("local-lvm:cloudinit"));
        assert!(!is_drive("none,media=cdrom") && !is_drive("isos:iso/cloudinit-tools.iso,media=cdrom"));
        let config = json!({"ide2": "vmdata:101/vm-101-cloudinit.qcow2,media=cdrom", "name": "x-cloudinit"});
        assert!(config_has_drive(config.as_object().unwrap()));
        assert!(!config_has_drive(
            json!({"name": "vm-1-cloudinit"}).as_object().unwrap()
        ));
        assert!(has_drive([("ide2", "local-lvm:cloudinit")]));
        assert!(regenerated_at_once(Some("network,disk,cloudinit")) && !regenerated_at_once(Some("1")));
    }

    #[test]
    fn what_the_drive_lacks_after_a_write() {
        let state = parse(&json!([
            {"key": "ciuser", "value": "debian", "pending": "admin"},
            {"key": "cipassword", "value": "**********"},
            {"key": "sshkeys", "value": "ssh-ed25519%20AAAA"},
            {"key": "ipconfig1", "pending": "ip=dhcp"},
            {"key": "nameserver", "delete": 1},
        ]));
        assert_eq!(
            Value::Object(state.waiting.clone()),
            json!({"ciuser": "admin", "ipconfig1": "ip=dhcp", "nameserver": "(delete)"})
        );
        let written: Vec<(String, String)> = [
            ("ipconfig0", "ip=192.0.2.50/24"),
            ("cipassword", "s3cret"),
            ("sshkeys", "ssh-ed25519%20AAAA"),
            ("cores", "4"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(
            Value::Object(state.after_writing(written.iter().map(|(k, v)| (k, v)))),
            json!({"cipassword": "**********", "ciuser": "admin", "ipconfig0": "ip=192.0.2.50/24", "ipconfig1": "ip=dhcp", "nameserver": "(delete)"}),
            "a changed ipconfigN counts though PVE does not list it; sshkeys back to the drive's value do not; no password shown"
        );
    }
}
