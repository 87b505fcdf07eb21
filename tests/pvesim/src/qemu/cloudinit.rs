//! The cloud-init drive's view of a VM, as qemu-server keeps it.
//!
//! Cloud-init keys are written to a running VM's config at once (they never show under
//! `/pending`); what the drive still holds is recorded in the config's
//! `[special:cloudinit]` section: the old value of every key changed since the drive
//! was last generated, and in `added` the keys that did not exist then. Starting the VM
//! (also an API reboot: stop plus start) or `PUT .../cloudinit` regenerates the drive
//! and empties the section; with the `cloudinit` hotplug feature an update of a running
//! VM regenerates it at once. A `cicustom` snippet's content is not tracked.
//!
//! `GET .../cloudinit` answers as qemu-server does: every set `ci*`/`nameserver`/
//! `searchdomain`/`sshkeys` key with its drive value (and its new value when it
//! changed), added keys with their new value, removed keys with `delete: 1`. A changed
//! (not added, not removed) `ipconfigN`, `name` or `netN` does not show there.

use super::disks::{self, Drive};
use super::{check_lock, vm, vm_mut};
use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::state::Guest;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The keys `GET .../cloudinit` always lists when set (qemu-server's `$cloudinitoptions`).
const LISTED: &[&str] = &[
    "cicustom",
    "cipassword",
    "citype",
    "ciupgrade",
    "ciuser",
    "nameserver",
    "searchdomain",
    "sshkeys",
];

/// The record key naming the keys added since the drive was generated.
const ADDED: &str = "added";

/// Whether the drive is built from `key`: the cloud-init options, `ipconfigN`, the
/// hostname (`name`) and the NICs' MACs (`netN`).
pub fn is_tracked(key: &str) -> bool {
    LISTED.contains(&key) || key == "name" || key.starts_with("ipconfig") || disks::is_net_key(key)
}

/// Whether the config has a cloud-init drive.
pub fn has_drive(conf: &BTreeMap<String, String>) -> bool {
    conf.iter()
        .any(|(k, v)| disks::is_disk_key(k) && Drive::parse_stored(v).file.contains("-cloudinit"))
}

fn added(record: &BTreeMap<String, String>) -> BTreeSet<String> {
    record
        .get(ADDED)
        .map(|a| a.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect())
        .unwrap_or_default()
}

/// Records a change of `key` from `old` to `new` (`None`: absent) made to a running VM.
pub fn record_change(g: &mut Guest, key: &str, old: Option<&str>, new: Option<&str>) {
    if !is_tracked(key) || old == new {
        return;
    }
    let record = &mut g.conf.cloudinit;
    let mut added = added(record);
    let recorded = record.get(key).cloned();
    match (old, new) {
        (_, Some(new)) if recorded.as_deref() == Some(new) => {
            // Back to what the drive holds.
            record.remove(key);
            added.remove(key);
        }
        (Some(old), Some(_)) if recorded.is_none() && !added.contains(key) => {
            record.insert(key.to_string(), old.to_string());
        }
        (None, Some(_)) if recorded.is_none() => {
            added.insert(key.to_string());
        }
        (Some(old), None) if recorded.is_none() && !added.remove(key) => {
            record.insert(key.to_string(), old.to_string());
        }
        _ => {}
    }
    if added.is_empty() {
        record.remove(ADDED);
    } else {
        record.insert(ADDED.into(), added.into_iter().collect::<Vec<_>>().join(","));
    }
}

/// The drive is generated from the config as it is now.
pub fn regenerate(g: &mut Guest) {
    g.conf.cloudinit.clear();
}

/// After a write: without a cloud-init drive the section is not kept (qemu-server does
/// not write it), and with the `cloudinit` hotplug feature a running VM's drive is
/// regenerated at once.
pub fn settle(g: &mut Guest) {
    if !has_drive(&g.conf.current) || (g.running && super::update::hotplug_set(g).contains("cloudinit")) {
        regenerate(g);
    }
}

/// The value `key` has on the drive (`None`: not there), for the guest's view.
pub fn drive_value<'a>(g: &'a Guest, key: &str) -> Option<&'a str> {
    if added(&g.conf.cloudinit).contains(key) {
        return None;
    }
    g.conf
        .cloudinit
        .get(key)
        .or_else(|| g.conf.current.get(key))
        .map(String::as_str)
}

const MASK: &str = "**********";

/// `GET /nodes/{node}/qemu/{vmid}/cloudinit`.
pub fn pending(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let g = vm(ctx.c, &ctx.node(), ctx.vmid())?;
    let conf = &g.conf.current;
    let record = &g.conf.cloudinit;
    let added = added(record);
    let shown = |k: &str, v: &str| {
        if k == "cipassword" {
            MASK.to_string()
        } else {
            v.to_string()
        }
    };
    let mut out = Vec::new();
    for k in &added {
        let mut item = json!({"key": k});
        if let Some(v) = conf.get(k) {
            item["pending"] = json!(shown(k, v));
        }
        out.push(item);
    }
    for k in LISTED {
        let Some(now) = conf.get(*k).filter(|v| !v.is_empty()) else {
            continue;
        };
        if added.contains(*k) {
            continue;
        }
        out.push(match record.get(*k) {
            Some(old) => json!({"key": k, "value": shown(k, old), "pending": shown(k, now)}),
            None => json!({"key": k, "value": shown(k, now)}),
        });
    }
    for k in record.keys().filter(|k| *k != ADDED && !conf.contains_key(*k)) {
        out.push(json!({"key": k, "delete": 1}));
    }
    Ok(Value::Array(out))
}

/// `PUT /nodes/{node}/qemu/{vmid}/cloudinit`: regenerate the drive (nothing without one).
pub fn update(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let g = vm_mut(ctx.c, &node, vmid)?;
    check_lock(g, false).map_err(ApiError::internal)?;
    if has_drive(&g.conf.current) {
        regenerate(g);
    }
    Ok(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Config, GuestKind};

    fn guest() -> Guest {
        let mut conf = Config::default();
        conf.current
            .insert("ide2".into(), "local-lvm:vm-101-cloudinit,media=cdrom".into());
        conf.current.insert("ciuser".into(), "debian".into());
        conf.current.insert("ipconfig0".into(), "ip=dhcp".into());
        Guest {
            vmid: 101,
            node: "pve1".into(),
            kind: GuestKind::Qemu,
            conf,
            running: true,
            paused: false,
            started_ms: None,
            created_ms: 0,
            power_change: None,
            agent: None,
        }
    }

    fn change(g: &mut Guest, key: &str, new: Option<&str>) {
        let old = g.conf.current.get(key).cloned();
        record_change(g, key, old.as_deref(), new);
        match new {
            Some(v) => g.conf.current.insert(key.into(), v.into()),
            None => g.conf.current.remove(key),
        };
    }

    #[test]
    fn changes_are_recorded_with_the_drive_value_until_reverted() {
        let mut g = guest();
        change(&mut g, "ciuser", Some("admin"));
        change(&mut g, "ciuser", Some("root"));
        assert_eq!(
            g.conf.cloudinit["ciuser"], "debian",
            "the drive value is kept across changes"
        );
        assert_eq!(drive_value(&g, "ciuser"), Some("debian"));
        change(&mut g, "ciuser", Some("debian"));
        assert!(
            g.conf.cloudinit.is_empty(),
            "back to the drive value: nothing to regenerate"
        );
    }

    #[test]
    fn added_and_removed_keys() {
        let mut g = guest();
        change(&mut g, "sshkeys", Some("ssh-ed25519%20AAAA"));
        assert_eq!(g.conf.cloudinit[ADDED], "sshkeys");
        assert_eq!(drive_value(&g, "sshkeys"), None);
        change(&mut g, "sshkeys", None);
        assert!(
            g.conf.cloudinit.is_empty(),
            "added then removed: the drive never had it"
        );
        change(&mut g, "ipconfig0", None);
        assert_eq!(g.conf.cloudinit["ipconfig0"], "ip=dhcp");
        assert_eq!(drive_value(&g, "ipconfig0"), Some("ip=dhcp"));
        change(&mut g, "cores", Some("4"));
        assert!(!g.conf.cloudinit.contains_key("cores"), "not a cloud-init key");
    }

    #[test]
    fn no_drive_no_record() {
        let mut g = guest();
        change(&mut g, "ciuser", Some("admin"));
        g.conf.current.remove("ide2");
        settle(&mut g);
        assert!(g.conf.cloudinit.is_empty());
        let mut g = guest();
        g.conf.current.insert("hotplug".into(), "network,disk,cloudinit".into());
        change(&mut g, "ciuser", Some("admin"));
        settle(&mut g);
        assert!(
            g.conf.cloudinit.is_empty(),
            "the cloudinit hotplug feature regenerates at once"
        );
    }
}
