//! Snapshots as PVE decides them: which names it takes, which volumes can be
//! snapshotted (a VM can only when all its disks can), and which storages roll back to a
//! volume's newest snapshot only.
//!
//! Names: the API's `pve-snapshot-name` is a `pve-configid` of at most 40 characters
//! (pve-common `JSONSchema.pm`, `$CONFIGID_RE = [a-z][a-z0-9_-]+`, case-insensitive), and
//! qemu-server's `snapshot` call refuses `current` and, in any case, `pending`. Volumes:
//! each storage plugin's `volume_has_feature('snapshot')` (pve-storage): thin LVM, ZFS
//! and RBD always, BTRFS for raw, qcow2 and subvolumes, file storages and LVM for qcow2
//! only, iSCSI never; a base volume (a template's) is not `current`.

/// The keys of a config (the VM's, or a snapshot's section) a clone does not copy
/// (qemu-server `API2/Qemu.pm` `clone_vm`: "do not copy snapshot related info"), besides
/// the `unusedN` disks ([`is_not_cloned`]). Every other key is copied, a snapshot
/// section's `description` (the comment the snapshot was taken with) among them; the
/// clone then gets its own name, MACs, SMBIOS uuid and vmgenid, no `template`, and the
/// call's `description` when one is given.
pub const NOT_CLONED: &[&str] = &[
    "snapshots",
    "parent",
    "snaptime",
    "vmstate",
    "snapstate",
    "runningcpu",
    "runningmachine",
    "running-nets-host-mtu",
];

/// Whether `clone_vm` leaves `key` out of the clone: [`NOT_CLONED`], or an unused disk
/// (`next if $opt =~ m/^unused\d+$/`).
pub fn is_not_cloned(key: &str) -> bool {
    NOT_CLONED.contains(&key) || is_unused_disk(key)
}

/// Whether a snapshot's section leaves `key` of the VM's config out (pve-guest-common
/// `AbstractConfig.pm` `__snapshot_copy_config`): the snapshot bookkeeping, the lock, the
/// digest, the VM's notes (`description`) and its unused disks.
pub fn is_not_snapshotted(key: &str) -> bool {
    matches!(
        key,
        "snapshots" | "snapstate" | "snaptime" | "vmstate" | "lock" | "digest" | "description"
    ) || is_unused_disk(key)
}

/// Whether `key` is an unused disk (`unused0`, `unused1`, ...: `m/^unused\d+$/`).
pub fn is_unused_disk(key: &str) -> bool {
    key.strip_prefix("unused")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// PVE's `maxLength` of a snapshot name.
pub const NAME_MAX: usize = 40;

/// Why PVE refuses `name` as a snapshot name, in its words; `creating`: the name of a
/// new snapshot (the reserved names are refused only there).
pub fn name_refusal(name: &str, creating: bool) -> Option<String> {
    if creating && name == "current" {
        return Some("unable to use snapshot name 'current' (reserved name)".into());
    }
    if creating && name.eq_ignore_ascii_case("pending") {
        return Some("unable to use snapshot name 'pending' (reserved name)".into());
    }
    if name.chars().count() > NAME_MAX {
        return Some(format!("value may only be {NAME_MAX} characters long"));
    }
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest: Vec<char> = chars.collect();
    let rest_ok = !rest.is_empty() && rest.iter().all(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-');
    if !(first_ok && rest_ok) {
        return Some(format!("invalid format - invalid configuration ID '{name}'"));
    }
    None
}

/// Whether a storage of plugin `storage_type` rolls a volume back only to its newest
/// snapshot: pve-storage's `volume_rollback_is_possible` refuses (`can't rollback,
/// '<snap>' is not most recent snapshot on '<volid>'`) on ZFS (`ZFSPoolPlugin.pm`);
/// LVM-thin, RBD, BTRFS and files without `snapshot-as-volume-chain` roll back to any.
pub fn rolls_back_to_newest_only(storage_type: &str) -> bool {
    storage_type == "zfspool"
}

/// Whether a volume `volname` on a storage of plugin `storage_type` can be snapshotted.
/// An unknown plugin type answers `true`: PVE's own refusal then stands.
pub fn volume_can_snapshot(storage_type: &str, volname: &str) -> bool {
    let base = volname.rsplit('/').next().unwrap_or(volname).starts_with("base-");
    let qcow2 = volname.ends_with(".qcow2");
    match storage_type {
        "lvmthin" => !base,
        "zfspool" | "zfs" | "rbd" => true,
        "btrfs" => qcow2 || volname.ends_with(".raw") || volname.contains("subvol-") || !volname.contains('.'),
        "dir" | "nfs" | "cifs" | "glusterfs" | "cephfs" | "lvm" => qcow2,
        "iscsi" | "iscsidirect" | "pbs" | "esxi" => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_clone_and_a_snapshot_leave_out() {
        assert!(is_not_cloned("parent") && is_not_cloned("unused3") && is_not_cloned("runningcpu"));
        assert!(!is_not_cloned("description") && !is_not_cloned("unused") && !is_not_cloned("unusedx"));
        assert!(is_not_snapshotted("description") && is_not_snapshotted("unused0") && is_not_snapshotted("lock"));
        assert!(!is_not_snapshotted("parent") && !is_not_snapshotted("cores"));
    }

    #[test]
    fn names_as_the_api_takes_them() {
        for ok in ["pre-upgrade", "ansible_snap", "A1", "s-2026_01"] {
            assert_eq!(name_refusal(ok, true), None, "{ok}");
        }
        let refused = [
            ("current", true, "unable to use snapshot name 'current' (reserved name)"),
            ("Pending", true, "unable to use snapshot name 'pending' (reserved name)"),
            ("1st", true, "invalid format - invalid configuration ID '1st'"),
            ("a", true, "invalid format - invalid configuration ID 'a'"),
            (
                "pre upgrade",
                false,
                "invalid format - invalid configuration ID 'pre upgrade'",
            ),
            ("a.b", true, "invalid format - invalid configuration ID 'a.b'"),
        ];
        for (name, creating, why) in refused {
            assert_eq!(name_refusal(name, creating).as_deref(), Some(why), "{name}");
        }
        assert_eq!(
            name_refusal("current", false),
            None,
            "only a new snapshot's name is reserved"
        );
        assert_eq!(
            name_refusal(&"s".repeat(41), true).as_deref(),
            Some("value may only be 40 characters long")
        );
    }

    #[test]
    fn volumes_by_storage_plugin() {
        let table = [
            ("lvmthin", "vm-100-disk-0", true),
            ("lvmthin", "base-9000-disk-0", false),
            ("zfspool", "vm-100-disk-0", true),
            ("rbd", "vm-100-disk-0", true),
            ("dir", "100/vm-100-disk-0.qcow2", true),
            ("nfs", "100/vm-100-disk-0.raw", false),
            ("cifs", "100/vm-100-disk-0.vmdk", false),
            ("lvm", "vm-100-disk-0", false),
            ("lvm", "vm-100-disk-0.qcow2", true),
            ("btrfs", "100/vm-100-disk-0/disk.raw", true),
            ("iscsi", "0.0.0.scsi-36001405", false),
        ];
        for (kind, volname, can) in table {
            assert_eq!(volume_can_snapshot(kind, volname), can, "{kind} {volname}");
        }
    }
}
