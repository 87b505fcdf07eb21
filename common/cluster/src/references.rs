//! What a task's drive values point at — a storage to allocate on, an ISO image, an
//! existing volume — checked from the API before anything is written, in check mode and
//! real runs alike: PVE itself would only fail half-way (`volume ... does not exist`),
//! and a dry run would have said yes. Failures name what is missing and what is there.
//!
//! Costs: one storage listing of the node when a task writes a drive on a storage the
//! cluster listing did not show ([`verify_listed`]), plus one content listing per
//! storage holding a volume the task names. Listings the caller may not
//! read (no `Datastore.Audit`) skip the check and leave PVE's own error to answer.

use serde_json::{json, Value};

use crate::assume::Assume;
use crate::vm::Storage;
use ferrox_pve_client::client::Client;
use ferrox_pve_rules::propstring::is_drive_key;
use ferrox_pve_rules::propstring::{self, formats};

/// One thing a drive value needs to exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriveRef {
    /// A new volume is allocated on `storage`, which must hold `images`.
    Allocate {
        /// The drive key (`scsi0`) whose value allocates it.
        key: String,
        /// The storage it is allocated on.
        storage: String,
    },
    /// An existing volume (`storage:volname`) of `content` (`iso`, `images`, `import`).
    Volume {
        /// The drive key (`ide2`) whose value names it.
        key: String,
        /// The volume, `storage:volname`.
        volid: String,
        /// The content type its storage must hold.
        content: &'static str,
    },
}

impl DriveRef {
    /// The drive key (`scsi0`) whose value needs it.
    pub fn key(&self) -> &str {
        match self {
            DriveRef::Allocate { key, .. } | DriveRef::Volume { key, .. } => key,
        }
    }
    fn storage(&self) -> &str {
        match self {
            DriveRef::Allocate { storage, .. } => storage,
            DriveRef::Volume { volid, .. } => volid.split(':').next().unwrap_or_default(),
        }
    }
    fn content(&self) -> &'static str {
        match self {
            DriveRef::Allocate { .. } => "images",
            DriveRef::Volume { content, .. } => content,
        }
    }
}

/// What the drive value `value` of config key `key` references (nothing for other keys,
/// an empty or host CD-ROM, a device path).
pub fn drive_refs(key: &str, value: &str) -> Vec<DriveRef> {
    let Some(f) = formats::for_config_key(key).filter(|_| is_drive_key(key)) else {
        return Vec::new();
    };
    let Ok(props) = propstring::parse(value, f) else {
        return Vec::new();
    };
    let file = props.get("file").unwrap_or_default();
    let Some((storage, volname)) = file.split_once(':').filter(|_| !file.starts_with('/')) else {
        return Vec::new();
    };
    let mut refs = Vec::new();
    if let Some(source) = props
        .get("import-from")
        .filter(|s| s.contains(':') && !s.starts_with('/'))
    {
        refs.push(DriveRef::Volume {
            key: key.into(),
            volid: source.into(),
            content: content_of(source),
        });
    }
    if volname == "cloudinit" || volname.parse::<f64>().is_ok() {
        refs.push(DriveRef::Allocate {
            key: key.into(),
            storage: storage.into(),
        });
    } else if !ferrox_pve_rules::unknown::is_unknown(volname) {
        refs.push(DriveRef::Volume {
            key: key.into(),
            volid: file.into(),
            content: content_of(file),
        });
    }
    refs
}

/// The content type a volume id names (`iso/...`, `import/...`, else a disk image).
fn content_of(volid: &str) -> &'static str {
    let volname = volid.split_once(':').map(|(_, v)| v).unwrap_or(volid);
    match volname.split('/').next() {
        Some("iso") => "iso",
        Some("import") => "import",
        _ => "images",
    }
}

fn content_words(content: &str) -> &str {
    match content {
        "iso" => "ISO images",
        "import" => "import images",
        _ => "disk images",
    }
}

/// `Ok` when `storage` is on the node and holds `content`, from the node's storage
/// listing (`GET /nodes/{node}/storage`).
pub fn check_storage(listing: &Value, node: &str, key: &str, storage: &str, content: &str) -> Result<(), String> {
    let items: Vec<&Value> = listing.as_array().into_iter().flatten().collect();
    let holds = |s: &Value| s["content"].as_str().unwrap_or("").split(',').any(|c| c == content);
    let fitting: Vec<&str> = items
        .iter()
        .filter(|s| holds(s))
        .filter_map(|s| s["storage"].as_str())
        .collect();
    match items.iter().find(|s| s["storage"] == storage) {
        Some(s) if holds(s) => Ok(()),
        Some(s) => Err(format!(
            "{key}: storage {storage} on node {node} does not hold {} (its content: {}); storages for {} there: {}",
            content_words(content),
            s["content"].as_str().unwrap_or(""),
            content_words(content),
            list_or_none(&fitting)
        )),
        None => Err(format!(
            "{key}: storage {storage} does not exist on node {node}; storages for {} there: {}",
            content_words(content),
            list_or_none(&fitting)
        )),
    }
}

/// `Ok` when `volid` is listed in its storage's content listing
/// (`GET /nodes/{node}/storage/{storage}/content`).
pub fn check_volume(listing: &Value, node: &str, key: &str, volid: &str, content: &str) -> Result<(), String> {
    let items: Vec<&Value> = listing.as_array().into_iter().flatten().collect();
    if items.iter().any(|v| v["volid"] == volid) {
        return Ok(());
    }
    let storage = volid.split(':').next().unwrap_or_default();
    let there: Vec<&str> = items
        .iter()
        .filter(|v| v["content"] == content)
        .filter_map(|v| v["volid"].as_str())
        .collect();
    Err(format!(
        "{key}: volume {volid} does not exist on node {node}; {} on storage {storage}: {}",
        content_words(content),
        list_or_none(&there)
    ))
}

fn list_or_none(items: &[&str]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// Checks every reference of the `(key, value)` drive entries a task writes on `node`,
/// given the storages the cluster listing (`/cluster/resources`) already showed: the node's own storage listing is asked for only when a referenced storage
/// is not among them (that listing also shows storages the caller may only allocate
/// on), so a task whose storages are listed costs no extra call.
pub fn verify_listed<'a>(
    client: &Client,
    node: &str,
    listed: &[Storage],
    entries: impl Iterator<Item = (&'a str, &'a str)>,
    assume: &Assume,
) -> Result<(), String> {
    let refs: Vec<DriveRef> = entries.flat_map(|(k, v)| drive_refs(k, v)).collect();
    if refs.is_empty() {
        return Ok(());
    }
    let on_node: Vec<&Storage> = listed.iter().filter(|s| s.node == node).collect();
    let storages = if refs.iter().all(|r| on_node.iter().any(|s| s.storage == r.storage())) {
        Ok(Value::Array(
            on_node
                .iter()
                .map(|s| json!({"storage": s.storage, "content": s.content.join(",")}))
                .collect(),
        ))
    } else {
        client.get(&format!("/nodes/{node}/storage"), &[])
    };
    if let Ok(storages) = storages {
        for r in &refs {
            check_storage(&storages, node, r.key(), r.storage(), r.content())?;
        }
    }
    verify_volumes(client, node, &refs, assume)
}

/// Checks only the existing volumes among `refs` (one content listing per storage), for
/// a caller that has checked the storages already; a volume a check run may assume
/// (`check_mode_assume`) is not looked for.
pub fn verify_volumes(client: &Client, node: &str, refs: &[DriveRef], assume: &Assume) -> Result<(), String> {
    let mut listed: Vec<(String, Value)> = Vec::new();
    for r in refs {
        let DriveRef::Volume { key, volid, content } = r else {
            continue;
        };
        if assume.volume(volid) {
            continue;
        }
        let storage = r.storage().to_string();
        if !listed.iter().any(|(s, _)| *s == storage) {
            match client.get(&format!("/nodes/{node}/storage/{storage}/content"), &[]) {
                Ok(l) => listed.push((storage.clone(), l)),
                Err(_) => continue,
            }
        }
        if let Some((_, listing)) = listed.iter().find(|(s, _)| *s == storage) {
            check_volume(listing, node, key, volid, content)
                .map_err(|e| format!("{e}{}", assume.hint("volumes", volid)))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drive_values_name_what_they_need() {
        assert_eq!(
            drive_refs("scsi0", "local-lvm:32,discard=on"),
            [DriveRef::Allocate {
                key: "scsi0".into(),
                storage: "local-lvm".into()
            }]
        );
        assert_eq!(
            drive_refs("sata0", "isos:iso/missing.iso,media=cdrom"),
            [DriveRef::Volume {
                key: "sata0".into(),
                volid: "isos:iso/missing.iso".into(),
                content: "iso"
            }]
        );
        assert_eq!(
            drive_refs("scsi1", "local-lvm:0,import-from=local:import/debian.qcow2"),
            [
                DriveRef::Volume {
                    key: "scsi1".into(),
                    volid: "local:import/debian.qcow2".into(),
                    content: "import"
                },
                DriveRef::Allocate {
                    key: "scsi1".into(),
                    storage: "local-lvm".into()
                },
            ]
        );
        assert!(drive_refs("ide2", "none,media=cdrom").is_empty());
        assert!(drive_refs("ide2", "cdrom,media=cdrom").is_empty());
        assert!(drive_refs("scsi2", "/dev/disk/by-id/ata-X").is_empty());
        assert!(drive_refs("net0", "virtio,bridge=vmbr0").is_empty());
        assert!(drive_refs("scsi0", "local-lvm:(known after apply),size=32G").is_empty());
    }

    #[test]
    fn storages_must_exist_and_hold_the_content() {
        let listing = json!([
            {"storage": "local", "content": "iso,vztmpl,import,backup"},
            {"storage": "local-lvm", "content": "images,rootdir"},
            {"storage": "isos", "content": "iso"},
        ]);
        assert!(check_storage(&listing, "pve1", "scsi0", "local-lvm", "images").is_ok());
        assert_eq!(
            check_storage(&listing, "pve1", "scsi0", "isos", "images").unwrap_err(),
            "scsi0: storage isos on node pve1 does not hold disk images (its content: iso); storages for disk images there: local-lvm"
        );
        assert_eq!(
            check_storage(&listing, "pve1", "ide2", "nas", "iso").unwrap_err(),
            "ide2: storage nas does not exist on node pve1; storages for ISO images there: local, isos"
        );
    }

    #[test]
    fn a_missing_volume_lists_what_is_there() {
        let listing = json!([
            {"volid": "isos:iso/debian-13-netinst.iso", "content": "iso"},
            {"volid": "isos:iso/virtio-win.iso", "content": "iso"},
        ]);
        assert!(check_volume(&listing, "pve1", "ide2", "isos:iso/virtio-win.iso", "iso").is_ok());
        assert_eq!(
            check_volume(&listing, "pve1", "sata0", "isos:iso/missing.iso", "iso").unwrap_err(),
            "sata0: volume isos:iso/missing.iso does not exist on node pve1; ISO images on storage isos: isos:iso/debian-13-netinst.iso, isos:iso/virtio-win.iso"
        );
    }
}
