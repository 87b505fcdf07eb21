//! When a task names a VM by name and several QEMU VMs carry it (two runs built it at
//! once, say): the failure says what tells them apart — vmid, node, status, creation
//! time (from the config's `meta`), disks — and the exact task that removes the spare.
//! Nothing is ever chosen or removed here: which VM to keep is the user's call.

use serde_json::{json, Map, Value};

use crate::vm::{Guest, GuestType};
use ferrox_pve_client::client::Client;
use ferrox_pve_rules::propstring::is_drive_key;

/// One of the VMs sharing the name, as the failure describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Twin {
    /// Its vmid.
    pub vmid: u32,
    /// The node it is on.
    pub node: String,
    /// Its power status as listed (`running`, `stopped`).
    pub status: String,
    /// Epoch seconds from `meta: ...,ctime=<secs>` (set by PVE at create).
    pub ctime: Option<u64>,
    /// `key=volume` of each disk (CD-ROM drives left out).
    pub disks: Vec<String>,
}

/// The VMs that share a name, as a failure describes them.
#[derive(Debug, Clone, PartialEq)]
pub struct Explained {
    /// The lookup's message, the details of each VM added.
    pub msg: String,
    /// Each VM, for the failure's `duplicates` key.
    pub duplicates: Value,
}

/// The details of every QEMU VM named `name`, added to a by-name lookup's message
/// caused by there being several (`Multiple VMs with name ...`, 1.6's words, kept
/// first); `None` for any other message. Reads each one's config.
pub fn explain(client: &Client, guests: &[Guest], name: Option<&str>, msg: &str) -> Option<Explained> {
    let name = name.filter(|_| msg.starts_with("Multiple VMs with name"))?;
    let same: Vec<&Guest> = guests
        .iter()
        .filter(|g| g.kind == GuestType::Qemu && g.name.as_deref() == Some(name))
        .collect();
    if same.len() < 2 {
        return None;
    }
    let twins: Vec<Twin> = same
        .iter()
        .map(|g| {
            let config = client
                .get(&format!("/nodes/{}/qemu/{}/config", g.node, g.vmid), &[])
                .ok()
                .and_then(|c| c.as_object().cloned())
                .unwrap_or_default();
            twin(g, &config)
        })
        .collect();
    let stop = if msg.ends_with('.') { "" } else { "." };
    Some(Explained {
        msg: format!("{msg}{stop} {}", describe(&twins)),
        duplicates: listing(&twins),
    })
}

/// What the failure tells of one VM, from its listing entry and config.
pub fn twin(guest: &Guest, config: &Map<String, Value>) -> Twin {
    let text = |k: &str| config.get(k).and_then(Value::as_str);
    let ctime = text("meta").and_then(|meta| {
        meta.split(',')
            .find_map(|kv| kv.strip_prefix("ctime="))
            .and_then(|s| s.parse().ok())
    });
    let mut disks: Vec<String> = config
        .iter()
        .filter(|(k, _)| is_drive_key(k))
        .filter_map(|(k, v)| v.as_str().map(|v| (k, v)))
        .filter(|(_, v)| !v.split(',').any(|p| p == "media=cdrom"))
        .map(|(k, v)| format!("{k}={}", v.split(',').next().unwrap_or(v)))
        .collect();
    disks.sort();
    Twin {
        vmid: guest.vmid,
        node: guest.node.to_string(),
        status: guest.status.as_deref().unwrap_or("unknown").to_string(),
        ctime,
        disks,
    }
}

/// The sentences appended to the failure: each VM, then the task that removes the
/// newest one (the likely spare of two runs at once), offered, never run.
pub fn describe(twins: &[Twin]) -> String {
    let each: Vec<String> = twins
        .iter()
        .map(|t| {
            let created = t.ctime.map(utc).unwrap_or_else(|| "creation time unknown".into());
            let disks = if t.disks.is_empty() {
                "no disks".to_string()
            } else {
                format!("disks {}", t.disks.join(", "))
            };
            format!(
                "VM {} on node {}, {}, created {created}, {disks}",
                t.vmid, t.node, t.status
            )
        })
        .collect();
    let Some(spare) = newest(twins) else {
        return String::new();
    };
    let force = if spare.status == "running" { ", force: true" } else { "" };
    format!(
        "They are: {}. Nothing was chosen or removed. If VM {} (created last) is a spare, this task removes it with its disks: `ferrox.proxmox.proxmox_kvm: {{vmid: {}, state: absent{force}}}`; to keep them all, rename one or give vmid in the task.",
        each.join("; "),
        spare.vmid,
        spare.vmid
    )
}

/// The VM created last (by `ctime`; the highest vmid when times are equal or unknown).
fn newest(twins: &[Twin]) -> Option<&Twin> {
    twins.iter().max_by_key(|t| (t.ctime.unwrap_or(0), t.vmid))
}

/// The `duplicates` key of the failed result.
fn listing(twins: &[Twin]) -> Value {
    Value::Array(
        twins
            .iter()
            .map(|t| {
                json!({
                    "vmid": t.vmid,
                    "node": t.node,
                    "status": t.status,
                    "ctime": t.ctime,
                    "disks": t.disks,
                })
            })
            .collect(),
    )
}

/// Epoch seconds as `YYYY-MM-DD HH:MM:SS UTC`.
fn utc(secs: u64) -> String {
    let (year, month, day, h, m, s) = ferrox_pve_rules::utc_time::utc_parts(secs);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02} UTC")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guest(vmid: u32, node: &str, status: &str) -> Guest {
        Guest {
            vmid,
            node: node.into(),
            kind: GuestType::Qemu,
            name: Some("dbl01".into()),
            status: Some(status.into()),
            template: false,
            lock: None,
            pool: None,
            hastate: None,
        }
    }

    #[test]
    fn utc_formats_epoch_seconds() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_764_581_401), "2025-12-01 09:30:01 UTC");
    }

    #[test]
    fn a_twin_has_its_creation_time_and_disks_but_no_cdrom() {
        let config = json!({
            "meta": "creation-qemu=10.0.2,ctime=1764581401",
            "scsi0": "local-lvm:vm-103-disk-0,size=4G",
            "ide2": "none,media=cdrom",
            "efidisk0": "local-lvm:vm-103-disk-1,efitype=4m,size=4M",
            "net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0",
        });
        let t = twin(&guest(103, "pve1", "stopped"), config.as_object().unwrap());
        assert_eq!(t.ctime, Some(1_764_581_401));
        assert_eq!(
            t.disks,
            vec!["efidisk0=local-lvm:vm-103-disk-1", "scsi0=local-lvm:vm-103-disk-0"]
        );
    }

    #[test]
    fn the_message_lists_each_and_offers_removing_the_newest() {
        let a = Twin {
            vmid: 103,
            node: "pve1".into(),
            status: "stopped".into(),
            ctime: Some(1_764_581_401),
            disks: vec!["scsi0=local-lvm:vm-103-disk-0".into()],
        };
        let b = Twin {
            vmid: 110,
            node: "pve2".into(),
            status: "running".into(),
            ctime: Some(1_764_581_402),
            disks: vec![],
        };
        assert_eq!(
            describe(&[a.clone(), b.clone()]),
            "They are: VM 103 on node pve1, stopped, created 2025-12-01 09:30:01 UTC, disks scsi0=local-lvm:vm-103-disk-0; VM 110 on node pve2, running, created 2025-12-01 09:30:02 UTC, no disks. Nothing was chosen or removed. If VM 110 (created last) is a spare, this task removes it with its disks: `ferrox.proxmox.proxmox_kvm: {vmid: 110, state: absent, force: true}`; to keep them all, rename one or give vmid in the task."
        );
        let same_time = Twin { ctime: a.ctime, ..b };
        assert_eq!(
            newest(&[same_time.clone(), a.clone()]).unwrap().vmid,
            110,
            "the higher vmid when created the same second"
        );
    }
}
