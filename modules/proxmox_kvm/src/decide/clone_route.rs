//! A clone to another node when the source's disks are on storage local to its node,
//! decided. PVE refuses `target` then (`can't clone VM to node ... (VM uses local
//! storage)`, or `can't clone to non-shared storage ...` with a local `storage`), so the
//! clone is made on the source's node and migrated offline to the target, its disks onto
//! `storage` there (`targetstorage`), before the rest of the task is applied.
//!
//! Whether a clone needs that route ([`route`]) and the clone call's form for it
//! ([`form`]); pure. The clone's driver ([`crate::clone`]) continues a move a run left
//! undone; the executor's `MoveClone` action makes the migration call.

use ferrox_ansible::protocol::Failure;
use ferrox_cluster::vm::Storage;
use serde_json::{Map, Value};

use crate::converge::{disk::is_disk_key, text_of};
use crate::task::KvmTask;

/// How a clone reaches a node its source's disks cannot be cloned to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    /// The node the clone is made on (the source's).
    pub(crate) via: String,
    /// Where it ends.
    pub(crate) to: String,
    /// `storage` for the clone itself, when that storage is on the source's node too.
    pub(crate) clone_storage: Option<String>,
    /// `targetstorage` of the migration (the task's `storage`; else each disk keeps its storage id).
    pub(crate) targetstorage: Option<String>,
    /// The local storages that force the detour (for messages).
    pub(crate) local: Vec<String>,
}

/// The storages of a config's volumes (disks and cloud-init drives, not other CD-ROMs).
fn volume_storages(config: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = config
        .iter()
        .filter(|(k, _)| is_disk_key(k))
        .filter_map(|(_, v)| {
            let text = text_of(v);
            let volid = text.split(',').next()?.to_string();
            let cdrom = text.split(',').any(|p| p == "media=cdrom");
            let (storage, _) = volid.split_once(':')?;
            (!cdrom || volid.contains("-cloudinit")).then(|| storage.to_string())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether the cluster's listing (`storages`) shows `storage` as local to its nodes (`None`: not listed,
/// so PVE decides).
fn is_local(storages: &[Storage], storage: &str) -> Option<bool> {
    let mut listed = storages.iter().filter(|s| s.storage == storage).peekable();
    listed.peek()?;
    Some(!listed.any(|s| s.shared))
}

/// The detour a clone of `source_config` (on `source_node`) to `target` needs, if PVE
/// would refuse to clone it there directly; a linked clone cannot take it.
pub(crate) fn route(
    task: &KvmTask,
    storages: &[Storage],
    source_vmid: u32,
    source_node: &str,
    target: &str,
    source_config: &Map<String, Value>,
) -> Result<Option<Route>, Failure> {
    if target == source_node {
        return Ok(None);
    }
    let storage = task.storage.as_deref();
    let local: Vec<String> = match storage {
        Some(s) if is_local(storages, s) == Some(true) => vec![s.to_string()],
        Some(_) => Vec::new(),
        None => volume_storages(source_config)
            .into_iter()
            .filter(|s| is_local(storages, s) == Some(true))
            .collect(),
    };
    if local.is_empty() {
        return Ok(None);
    }
    if !task.clone.full {
        return Err(Failure::new(format!(
            "Unable to clone vm {} from vmid {source_vmid}: a linked clone (full: false) cannot be made on node {target}: it stays on the storage of its template's disks ({}), local to {source_node}, and a linked clone cannot be moved. Make a full clone (full: true), or clone on {source_node} (target: {source_node})",
            task.name.as_deref().unwrap_or_default(),
            local.join(", ")
        ))
        .with("vmid", source_vmid));
    }
    let on_source = |s: &str| {
        storages
            .iter()
            .any(|x| x.storage == s && x.node == source_node && x.holds_images())
    };
    Ok(Some(Route {
        via: source_node.to_string(),
        to: target.to_string(),
        clone_storage: storage.filter(|s| on_source(s)).map(str::to_string),
        targetstorage: storage.map(str::to_string),
        local,
    }))
}

/// The clone call's form for the detour: made on the source's node (no `target`), onto
/// the route's clone storage.
pub(crate) fn form(mut form: Vec<(String, String)>, route: &Route) -> Vec<(String, String)> {
    form.retain(|(k, _)| k != "target" && k != "storage");
    if let Some(s) = &route.clone_storage {
        form.push(("storage".into(), s.clone()));
    }
    form
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn volumes_count_disks_and_cloud_init_but_not_isos() {
        let config = json!({
            "scsi0": "local-lvm:base-9000-disk-0,size=3G",
            "ide2": "local-lvm:vm-9000-cloudinit,media=cdrom",
            "ide0": "isos:iso/debian.iso,media=cdrom",
            "virtio1": "vmdata:9000/base-9000-disk-1.qcow2,size=1G",
            "net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0",
        });
        assert_eq!(
            volume_storages(config.as_object().unwrap()),
            vec!["local-lvm", "vmdata"]
        );
    }
}
