//! Before a snapshot is taken: whether every disk of the VM is on a storage that can
//! snapshot it, so a VM PVE would refuse (`snapshot feature is not available`, in the
//! task, after the lock was taken) fails before any write, naming the disk and its
//! storage. One `GET /nodes/{node}/storage`; a storage the caller may not list is left
//! to PVE's own refusal.

use serde_json::Value;

use ferrox_pve_client::client::Client;
use ferrox_pve_rules::propstring::is_drive_key;
use ferrox_pve_rules::snapshot::volume_can_snapshot;
use ferrox_pve_rules::unknown;

/// The disks (key, storage, volname) of `config` that hold a volume; CD-ROMs and
/// values only the run's plan knows are left out, as PVE's `has_feature` skips CD-ROMs.
pub(crate) fn disks(config: &Value) -> Vec<(String, String, String)> {
    let Some(map) = config.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in map.iter().filter(|(k, _)| is_drive_key(k)) {
        let Some(text) = value.as_str() else { continue };
        if text.split(',').any(|p| p == "media=cdrom") || unknown::is_unknown(text) {
            continue;
        }
        let first = text.split(',').next().unwrap_or_default();
        let volid = first.strip_prefix("file=").unwrap_or(first);
        if let Some((storage, volname)) = volid.split_once(':') {
            out.push((key.clone(), storage.to_string(), volname.to_string()));
        }
    }
    out
}

/// The type (`zfspool`, `lvmthin`, ...) of storage `id` in the node's storage listing.
pub(crate) fn type_of(storages: &Value, id: &str) -> Option<String> {
    storages
        .as_array()?
        .iter()
        .find(|s| s["storage"] == id)
        .and_then(|s| s["type"].as_str())
        .map(str::to_string)
}

/// The disks of `config` on storages (from the node's storage listing) that cannot
/// snapshot them: (key, storage, its type).
pub(crate) fn unable(config: &Value, storages: &Value) -> Vec<(String, String, String)> {
    disks(config)
        .into_iter()
        .filter_map(|(key, storage, volname)| {
            let kind = type_of(storages, &storage)?;
            (!volume_can_snapshot(&kind, &volname)).then_some((key, storage, kind))
        })
        .collect()
}

pub(crate) fn check(client: &Client, node: &str, vmid: u32, config: &Value) -> Result<(), String> {
    if disks(config).is_empty() {
        return Ok(());
    }
    let Ok(storages) = client.get(&format!("/nodes/{node}/storage"), &[]) else {
        return Ok(());
    };
    let refused = unable(config, &storages);
    if refused.is_empty() {
        return Ok(());
    }
    let which: Vec<String> = refused
        .iter()
        .map(|(key, storage, kind)| format!("{key} on '{storage}' ({kind})"))
        .collect();
    Err(format!(
        "VM {vmid}: snapshot feature is not available (Proxmox VE): {} cannot be snapshotted; move the disk to a storage with snapshots (LVM-thin, ZFS, Ceph RBD, or qcow2 on a directory or NFS storage), or back the VM up instead",
        which.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn disks_on_storages_without_snapshots_are_named() {
        let config = json!({
            "scsi0": "local-lvm:vm-100-disk-0,size=32G",
            "scsi1": "vmdata:100/vm-100-disk-1.raw,size=4G",
            "ide2": "isos:iso/debian.iso,media=cdrom",
            "net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0",
            "efidisk0": "vmdata:100/vm-100-disk-2.qcow2,efitype=4m",
        });
        let storages = json!([
            {"storage": "local-lvm", "type": "lvmthin"},
            {"storage": "vmdata", "type": "nfs"},
        ]);
        assert_eq!(disks(&config).len(), 3);
        assert_eq!(
            unable(&config, &storages),
            [("scsi1".to_string(), "vmdata".to_string(), "nfs".to_string())]
        );
        assert!(
            unable(&config, &json!([])).is_empty(),
            "an unlisted storage is left to PVE"
        );
    }
}
