//! One planned effect on one VM, as a check-mode run records it and the controller
//! keeps it for the rest of the `ansible-playbook` run. The wire form is JSON
//! (`{"kind": "create", "vmid": 101, ...}`): the controller-side shim appends effects to
//! the plan without understanding them, so their meaning lives here only.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a dry run says would happen to a VM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Effect {
    /// A new VM (create, restore or clone): its vmid is reserved for the rest of the run.
    Create {
        /// The new VM's vmid.
        vmid: u32,
        /// The node it is made on.
        node: String,
        /// Its name, if the task gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Its config as PVE would store it; values only PVE decides hold
        /// [`crate::UNKNOWN`].
        config: Map<String, Value>,
        /// The template a clone is made from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clone_of: Option<u32>,
        /// The state of the HA resource the create adds (`ha-managed`): `started` when
        /// the create starts the VM, else `stopped` (qemu-server `create_vm`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ha_state: Option<String>,
    },
    /// Config keys written or deleted (disks, NICs, any option), each described for
    /// people in `what` (`add disk scsi1 (32G on local-lvm)`).
    Config {
        /// The VM configured.
        vmid: u32,
        /// The node it is on.
        node: String,
        /// Keys written, with their new values.
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        set: Map<String, Value>,
        /// Keys deleted.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        delete: Vec<String>,
        /// Keys among `set` and `delete` a running VM keeps pending until it restarts.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pending: Vec<String>,
        /// Pending changes reverted (`revert`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        revert: Vec<String>,
        /// Each change in words.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        what: Vec<String>,
    },
    /// The power state after the call: `running`, `stopped`, `paused` or `hibernated`.
    /// A start or reboot applies what was pending.
    Power {
        /// The VM whose power state changes.
        vmid: u32,
        /// The node it is on.
        node: String,
        /// Its power state after the call.
        status: String,
        /// Whether the call (a start or reboot) applies what was pending.
        #[serde(default)]
        applies_pending: bool,
    },
    /// The VM made a template.
    Template {
        /// The VM made a template.
        vmid: u32,
        /// The node it is on.
        node: String,
    },
    /// The VM migrated to the node `to`.
    Migrate {
        /// The VM migrated.
        vmid: u32,
        /// The node it leaves.
        node: String,
        /// The node it goes to.
        to: String,
    },
    /// The VM destroyed: its vmid stays reserved for the rest of the run.
    Remove {
        /// The VM destroyed.
        vmid: u32,
        /// The node it was on.
        node: String,
    },
    /// Resource pool membership after the call: the VM is in `pool` (and in no other),
    /// or, with no `pool`, it left its pool and is in none.
    Pool {
        /// The VM moved.
        vmid: u32,
        /// The node it is on.
        node: String,
        /// The pool it is in after the call; `None`: it is in no pool.
        #[serde(default)]
        pool: Option<String>,
    },
    /// A task PVE would refuse (`task`: `proxmox_disk scsi1`) for lack of `privilege` on
    /// `path` (`root@pam` and no path for a root-only key). It changes nothing: the run's
    /// later tasks plan as if the refused task had not run.
    Refused {
        /// The VM the refused task concerns.
        vmid: u32,
        /// The node it is on.
        node: String,
        /// The refused task, in words (`proxmox_disk scsi1`).
        task: String,
        /// The privilege lacking (`root@pam` for a root-only key).
        privilege: String,
        /// The ACL path it lacks on (empty for a root-only key).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        path: String,
    },
    /// A snapshot of the VM taken, removed, or rolled back to (`proxmox_snap`); later
    /// tasks see it in the VM's snapshot list. A rollback's stop or start is a
    /// [`Effect::Power`] of its own.
    Snapshot {
        /// The VM.
        vmid: u32,
        /// The node it is on.
        node: String,
        /// The snapshot's name.
        name: String,
        /// What happens to it.
        action: SnapshotAction,
        /// Its description (a snapshot taken).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        description: String,
        /// A snapshot taken with the VM's RAM (`vmstate`, saved only from a running VM):
        /// a rollback to it starts the VM.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        vmstate: bool,
    },
    /// A file on a storage (`proxmox_template`): put there, or removed. No VM's; later
    /// tasks see it in the storage's content listing (a disk's `import_from`, an ISO).
    Volume {
        /// The node the file is put on or removed from.
        node: String,
        /// The storage.
        storage: String,
        /// `storage:content/name`.
        volid: String,
        /// Its content type (`iso`, `vztmpl`, `import`).
        content: String,
        /// Bytes, when known before the file is there (the URL's metadata, the upload).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
        /// A shared storage: every node sees the file.
        #[serde(default)]
        shared: bool,
        /// Whether the file is removed (else put there).
        #[serde(default)]
        removed: bool,
    },
    /// A resource pool made, described or removed (`proxmox_pool`): no VM's; later tasks
    /// read it (`GET /pools?poolid=`, `GET /pools/{poolid}`) as the plan leaves it.
    PoolConfig {
        /// The pool.
        poolid: String,
        /// Its comment, when the task sets one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comment: Option<String>,
        /// Whether the pool is removed (else made or described).
        #[serde(default)]
        removed: bool,
    },
    /// A storage added to a resource pool or taken out of it (`proxmox_pool_member`): no
    /// VM's; later tasks see it among the pool's members.
    PoolStorage {
        /// The pool.
        poolid: String,
        /// The storage.
        storage: String,
        /// Whether the storage leaves the pool (else it joins).
        #[serde(default)]
        removed: bool,
    },
    /// An ACL entry set or removed (`proxmox_access_acl`): no VM's (PVE never looks the
    /// VM of a `/vms/<vmid>` path up); later tasks see it in `GET /access/acl`.
    Acl {
        /// The ACL path.
        path: String,
        /// `user`, `group` or `token`.
        #[serde(rename = "type")]
        kind: String,
        /// The user, group or token.
        ugid: String,
        /// The role.
        roleid: String,
        /// Whether the entry propagates; `None`: the entry is removed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        propagate: Option<bool>,
    },
}

/// What a snapshot effect does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotAction {
    /// Taken (`POST .../snapshot`).
    Take,
    /// Removed (`DELETE .../snapshot/{name}`).
    Remove,
    /// Rolled back to (`POST .../snapshot/{name}/rollback`): the VM's `parent` after it.
    Rollback,
}

impl Effect {
    /// The VM the effect concerns; `None` for a file on a storage, an ACL entry or a
    /// pool's own change.
    pub fn vmid(&self) -> Option<u32> {
        Some(match self {
            Effect::Volume { .. } | Effect::Acl { .. } | Effect::PoolConfig { .. } | Effect::PoolStorage { .. } => {
                return None
            }
            Effect::Create { vmid, .. }
            | Effect::Config { vmid, .. }
            | Effect::Power { vmid, .. }
            | Effect::Template { vmid, .. }
            | Effect::Migrate { vmid, .. }
            | Effect::Remove { vmid, .. }
            | Effect::Pool { vmid, .. }
            | Effect::Snapshot { vmid, .. }
            | Effect::Refused { vmid, .. } => *vmid,
        })
    }

    /// A config change of `vmid` on `node` (fill `set`, `delete`, ... afterwards).
    pub fn config(vmid: u32, node: &str) -> Effect {
        Effect::Config {
            vmid,
            node: node.to_string(),
            set: Map::new(),
            delete: Vec::new(),
            pending: Vec::new(),
            revert: Vec::new(),
            what: Vec::new(),
        }
    }

    /// Whether the effect changes nothing (an empty config change).
    pub fn is_noop(&self) -> bool {
        matches!(self, Effect::Config { set, delete, revert, .. } if set.is_empty() && delete.is_empty() && revert.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_form_is_tagged_and_lean() {
        let e = Effect::Power {
            vmid: 101,
            node: "pve1".into(),
            status: "running".into(),
            applies_pending: true,
        };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"kind": "power", "vmid": 101, "node": "pve1", "status": "running", "applies_pending": true})
        );
        let mut c = Effect::config(101, "pve1");
        if let Effect::Config { set, .. } = &mut c {
            set.insert("net1".into(), json!("virtio=(known after apply),bridge=vmbr0"));
        }
        let wire = serde_json::to_value(&c).unwrap();
        assert_eq!(
            wire,
            json!({"kind": "config", "vmid": 101, "node": "pve1", "set": {"net1": "virtio=(known after apply),bridge=vmbr0"}})
        );
        assert_eq!(serde_json::from_value::<Effect>(wire).unwrap(), c);
        assert!(Effect::config(1, "n").is_noop());
    }
}
