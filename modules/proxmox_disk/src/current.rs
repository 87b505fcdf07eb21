//! A VM's configuration as read from PVE, and the drive entries in it.

use serde_json::{Map, Value};

use ferrox_pve_rules::pending;
use ferrox_pve_rules::propstring::{self, Format, PropString};
use ferrox_pve_rules::size;

/// `GET /nodes/{node}/qemu/{vmid}/config` of one VM (pending changes applied, as PVE
/// returns it by default).
#[derive(Debug, Clone)]
pub(crate) struct VmConfig {
    pub vmid: u32,
    pub node: String,
    pub config: Map<String, Value>,
    /// Keys whose value (or deletion) waits for the VM's next restart; known only for
    /// a config built from `GET .../pending` ([`VmConfig::from_pending`]).
    pub pending: Vec<String>,
}

impl VmConfig {
    pub(crate) fn new(vmid: u32, node: impl Into<String>, config: Value) -> VmConfig {
        let config = match config {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        VmConfig {
            vmid,
            node: node.into(),
            config,
            pending: Vec::new(),
        }
    }

    /// From `GET .../pending` (same cost as a config read): the config as the VM gets
    /// it at its next start, and which keys are still pending.
    pub(crate) fn from_pending(vmid: u32, node: impl Into<String>, items: &Value) -> VmConfig {
        let mut config = Map::new();
        let mut pending = Vec::new();
        for entry in pending::entries(items) {
            if entry.waits() {
                pending.push(entry.key.clone());
            }
            if !entry.delete {
                config.insert(entry.key.clone(), entry.at_next_start().cloned().unwrap_or(Value::Null));
            }
        }
        VmConfig {
            vmid,
            node: node.into(),
            config,
            pending,
        }
    }

    /// A config value as text (PVE sends some numbers as JSON numbers).
    pub(crate) fn text(&self, key: &str) -> Option<String> {
        match self.config.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.text(key).is_some()
    }

    pub(crate) fn digest(&self) -> Option<String> {
        self.text("digest")
    }

    /// The drive at `key`, parsed in `format`.
    pub(crate) fn drive(&self, key: &str, format: &'static Format) -> Result<Option<Drive>, String> {
        let Some(text) = self.text(key) else { return Ok(None) };
        let props = propstring::parse(&text, format)
            .map_err(|e| format!("cannot read {key} of VM {} ({text}): {e}", self.vmid))?;
        Ok(Some(Drive { text, props }))
    }

    /// The lowest `unusedN` key that is free (PVE's choice for a volume it keeps).
    pub(crate) fn free_unused(&self) -> Option<String> {
        (0..=255).map(|n| format!("unused{n}")).find(|k| !self.has(k))
    }

    /// The `unusedN` key holding `volume`, if any.
    pub(crate) fn unused_holding(&self, volume: &str) -> Option<String> {
        (0..=255)
            .map(|n| format!("unused{n}"))
            .find(|k| self.text(k).as_deref() == Some(volume))
    }
}

/// One drive entry (`scsi1`, `ide2`, `efidisk0`, `unused0`).
#[derive(Debug, Clone)]
pub(crate) struct Drive {
    pub text: String,
    pub props: PropString,
}

impl Drive {
    /// The `file`: a volume id, `none`, `cdrom` or a device path.
    pub(crate) fn file(&self) -> &str {
        self.props.get("file").unwrap_or("")
    }

    /// A storage volume (`storage:volname`), as opposed to `none`, `cdrom` or a path.
    pub(crate) fn is_volume(&self) -> bool {
        let f = self.file();
        !f.starts_with('/') && f.contains(':')
    }

    /// The storage of a volume.
    pub(crate) fn storage(&self) -> Option<&str> {
        self.is_volume().then(|| self.file().split(':').next().unwrap_or(""))
    }

    pub(crate) fn is_cdrom(&self) -> bool {
        self.props.get("media") == Some("cdrom") || matches!(self.file(), "none" | "cdrom")
    }

    /// A volume the VM owns, which PVE keeps as `unusedN` when the drive is replaced
    /// or detached (not an ISO image, not an empty drive, not a device path).
    pub(crate) fn keeps_volume_when_detached(&self) -> bool {
        self.is_volume() && !self.is_cdrom()
    }

    pub(crate) fn size_bytes(&self) -> Option<u64> {
        self.props.get("size").and_then(|s| size::parse(s).ok())
    }

    /// The data format: the `format` key, else the volume's file extension.
    pub(crate) fn volume_format(&self) -> Option<String> {
        if let Some(f) = self.props.get("format") {
            return Some(f.to_string());
        }
        let name = self.file().rsplit('/').next().unwrap_or("");
        ["qcow2", "raw", "vmdk", "qed", "qcow", "cloop"]
            .into_iter()
            .find(|ext| name.ends_with(&format!(".{ext}")))
            .map(str::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pending_list_becomes_the_next_start_config() {
        let items = json!([
            {"key": "digest", "value": "abc"},
            {"key": "scsi0", "value": "local-lvm:vm-100-disk-0,size=32G"},
            {"key": "scsi1", "value": "local-lvm:vm-100-disk-1,size=8G", "pending": "local-lvm:vm-100-disk-1,cache=none,size=8G"},
            {"key": "scsi2", "value": "local-lvm:vm-100-disk-2,size=1G", "delete": 1},
            {"key": "net1", "pending": "virtio=BC:24:11:00:00:02,bridge=vmbr0"},
        ]);
        let vm = VmConfig::from_pending(100, "pve1", &items);
        assert_eq!(
            vm.text("scsi1").as_deref(),
            Some("local-lvm:vm-100-disk-1,cache=none,size=8G")
        );
        assert!(!vm.has("scsi2"));
        assert!(vm.has("net1"));
        assert_eq!(vm.digest().as_deref(), Some("abc"));
        assert_eq!(vm.pending, vec!["scsi1", "scsi2", "net1"]);
    }
}
