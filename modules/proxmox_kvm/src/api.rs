//! The PVE calls this module makes, each in one place, with paths built once.

use ferrox_pve_client::client::{ApiError, Client};
use ferrox_pve_rules::{pending, snapshot};
use serde_json::{Map, Value};

/// A VM: where it lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vm {
    pub(crate) node: String,
    pub(crate) vmid: u32,
}

impl Vm {
    pub(crate) fn path(&self, rest: &str) -> String {
        format!("/nodes/{}/qemu/{}{rest}", self.node, self.vmid)
    }
}

/// Form fields from owned pairs.
pub(crate) fn fields(pairs: &[(String, String)]) -> Vec<(&str, String)> {
    pairs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect()
}

/// The VM's config with pending changes applied (what it gets at next start).
pub(crate) fn config(client: &Client, vm: &Vm) -> Result<Map<String, Value>, ApiError> {
    Ok(client
        .get(&vm.path("/config"), &[])?
        .as_object()
        .cloned()
        .unwrap_or_default())
}

/// What a clone of `vm` starts from: the section of `snapshot` when one is named
/// (`GET .../config?snapshot=`), else the VM's config; without what a clone does not take
/// of either ([`snapshot::is_not_cloned`]: a snapshot's bookkeeping, unused disks).
pub(crate) fn clone_source_config(
    client: &Client,
    vm: &Vm,
    snapshot: Option<&str>,
) -> Result<Map<String, Value>, ApiError> {
    let mut source = match snapshot {
        Some(name) => client
            .get(&vm.path("/config"), &[("snapshot", name.to_string())])?
            .as_object()
            .cloned()
            .unwrap_or_default(),
        None => config(client, vm)?,
    };
    source.retain(|k, _| !snapshot::is_not_cloned(k));
    Ok(source)
}

/// What `GET .../pending` tells.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pending {
    /// Keys whose change waits for a restart -> pending value (`(delete)` for deletions).
    pub(crate) waiting: Map<String, Value>,
    /// The config with pending changes applied.
    pub(crate) effective: Map<String, Value>,
}

/// Reads the pending-changes listing.
pub(crate) fn pending(client: &Client, vm: &Vm) -> Result<Pending, ApiError> {
    let items = client.get(&vm.path("/pending"), &[])?;
    let mut waiting = Map::new();
    let mut effective = Map::new();
    for entry in pending::entries(&items) {
        if entry.delete {
            waiting.insert(entry.key.clone(), Value::String("(delete)".into()));
        } else if let Some(p) = &entry.pending {
            waiting.insert(entry.key.clone(), p.clone());
        }
        if let Some(v) = entry.at_next_start() {
            effective.insert(entry.key.clone(), v.clone());
        }
    }
    Ok(Pending { waiting, effective })
}

/// Power state as `status/current` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Power {
    /// `running` or `stopped`.
    pub(crate) status: String,
    /// QEMU's view: `paused` for a suspended VM.
    pub(crate) qmpstatus: Option<String>,
    pub(crate) lock: Option<String>,
    /// PVE's `ha.managed`: HA manages the VM (a resource that is not `ignored`, on a
    /// cluster not disarmed with mode `ignore`). An unmanaged VM may still have an HA
    /// resource entry: the listing's `hastate` tells.
    pub(crate) ha_managed: bool,
}

pub(crate) fn power(client: &Client, vm: &Vm) -> Result<Power, ApiError> {
    let data = client.get(&vm.path("/status/current"), &[])?;
    let text = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_string);
    Ok(Power {
        status: text("status").unwrap_or_else(|| "unknown".into()),
        qmpstatus: text("qmpstatus"),
        lock: text("lock"),
        ha_managed: data
            .pointer("/ha/managed")
            .is_some_and(|m| m.as_u64() == Some(1) || m.as_str() == Some("1")),
    })
}

/// The bridges of a node (`GET /nodes/{node}/network?type=any_bridge`).
pub(crate) fn bridges(client: &Client, node: &str) -> Result<Vec<String>, ApiError> {
    let data = client.get(&format!("/nodes/{node}/network"), &[("type", "any_bridge".to_string())])?;
    Ok(data
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.get("iface").and_then(Value::as_str).map(str::to_string))
        .collect())
}

/// A node's storages (`GET /nodes/{node}/storage`): every storage of storage.cfg the
/// caller may see, with `enabled` and `active` as the node finds them.
pub(crate) fn node_storages(client: &Client, node: &str) -> Result<Value, ApiError> {
    client.get(&format!("/nodes/{node}/storage"), &[])
}

/// PVE's next free vmid (sent as a string or a number).
pub(crate) fn next_id(client: &Client) -> Result<u32, ApiError> {
    let data = client.get("/cluster/nextid", &[])?;
    let id = match &data {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        _ => None,
    };
    id.ok_or_else(|| ApiError {
        kind: ferrox_pve_client::client::ApiErrorKind::Other,
        status: None,
        message: format!("PVE answered /cluster/nextid with {data}, not a vmid"),
        errors: None,
    })
}

/// `mac` (every netN -> MAC) and `devices` (every disk key -> volume) of a config.
pub(crate) fn mac_and_devices(config: &Map<String, Value>) -> (Map<String, Value>, Map<String, Value>) {
    use crate::converge::{disk::is_disk_key, nic, text_of};
    let mut mac = Map::new();
    let mut devices = Map::new();
    for (key, value) in config {
        let text = text_of(value);
        if nic::is_net_key(key) {
            if let Some(m) = nic::mac_of(&text) {
                mac.insert(key.clone(), Value::String(m));
            }
        } else if is_disk_key(key) {
            let volume = crate::converge::disk::volume_of(key, &text)
                .unwrap_or_else(|| text.split(',').next().unwrap_or_default().to_string());
            devices.insert(key.clone(), Value::String(volume));
        }
    }
    (mac, devices)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mac_and_devices_cover_every_nic_and_disk() {
        let cfg = json!({
            "net0": "virtio=BC:24:11:2E:7F:01,bridge=vmbr0", "net3": "e1000=BC:24:11:2E:7F:02",
            "scsi0": "local-lvm:vm-101-disk-0,size=32G", "ide2": "none,media=cdrom",
            "efidisk0": "local-lvm:vm-101-disk-1,efitype=4m,size=4M", "unused0": "local-lvm:vm-101-disk-9",
            "name": "x",
        });
        let (mac, devices) = mac_and_devices(cfg.as_object().unwrap());
        assert_eq!(
            Value::Object(mac),
            json!({"net0": "BC:24:11:2E:7F:01", "net3": "BC:24:11:2E:7F:02"})
        );
        assert_eq!(
            Value::Object(devices),
            json!({"scsi0": "local-lvm:vm-101-disk-0", "ide2": "none", "efidisk0": "local-lvm:vm-101-disk-1"})
        );
    }
}
