//! Before a rollback: whether PVE can roll every disk of the snapshot back. On ZFS a
//! volume rolls back only to its newest snapshot, so a rollback to an older one fails in
//! PVE's task (`can't rollback, '<snap>' is not most recent snapshot on '<volid>'`,
//! pve-storage `ZFSPoolPlugin::volume_rollback_is_possible`). Predicting it fails check
//! mode and the real run alike before any write, naming the later snapshots to remove.
//!
//! Reads only when a snapshot was taken after the one rolled back to: that snapshot's
//! config, the node's storage listing, and the config of each later snapshot (one taken
//! in this check run holds the VM's config as planned). A read that fails leaves the
//! decision to PVE's own refusal.

use serde_json::Value;

use ferrox_pve_client::client::Client;
use ferrox_pve_rules::snapshot::rolls_back_to_newest_only;

use crate::plan::Snapshot;
use crate::storage;

/// The snapshots taken after `target`, oldest first: a later `snaptime`, one only this
/// run's plan takes (its `snaptime` unknown), or the same second and a descendant of
/// `target` (PVE's `snaptime` has seconds only). `None` when `target` itself is only
/// planned: nothing PVE holds can block it.
pub(crate) fn later<'a>(snapshots: &'a [Snapshot], target: &Snapshot) -> Option<Vec<&'a Snapshot>> {
    let at = target.snaptime?;
    let descends = |s: &Snapshot| {
        let mut parent = s.parent.as_deref();
        for _ in 0..snapshots.len() {
            match parent {
                Some(p) if p == target.name => return true,
                Some(p) => parent = snapshots.iter().find(|x| x.name == p).and_then(|x| x.parent.as_deref()),
                None => return false,
            }
        }
        false
    };
    let mut out: Vec<&Snapshot> = snapshots
        .iter()
        .filter(|s| s.name != target.name)
        .filter(|s| match s.snaptime {
            None => true,
            Some(t) => t > at || (t == at && descends(s)),
        })
        .collect();
    out.sort_by_key(|s| s.snaptime.unwrap_or(u64::MAX));
    Some(out)
}

/// A disk PVE would not roll back: its key in the snapshot, volume, storage, and the
/// later snapshots it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Blocked {
    pub(crate) key: String,
    pub(crate) volid: String,
    pub(crate) storage: String,
    pub(crate) later: Vec<String>,
}

/// The disks (key, storage, volid) of `section` (a snapshot's config) on storages of
/// `storages` (the node's listing) that roll back only to their newest snapshot. Pure.
pub(crate) fn newest_only(section: &Value, storages: &Value) -> Vec<(String, String, String)> {
    storage::disks(section)
        .into_iter()
        .filter(|(_, storage, _)| storage::type_of(storages, storage).is_some_and(|k| rolls_back_to_newest_only(&k)))
        .map(|(key, storage, volname)| {
            let volid = format!("{storage}:{volname}");
            (key, storage, volid)
        })
        .collect()
}

/// Of the `disks` ([`newest_only`]), those the `later` snapshots (name, config) also
/// hold, each with their names. Pure.
pub(crate) fn blocked(disks: Vec<(String, String, String)>, later: &[(String, Value)]) -> Vec<Blocked> {
    let volumes = |config: &Value| -> Vec<String> {
        storage::disks(config)
            .into_iter()
            .map(|(_, storage, volname)| format!("{storage}:{volname}"))
            .collect()
    };
    disks
        .into_iter()
        .filter_map(|(key, storage, volid)| {
            let holding: Vec<String> = later
                .iter()
                .filter(|(_, config)| volumes(config).contains(&volid))
                .map(|(name, _)| name.clone())
                .collect();
            (!holding.is_empty()).then_some(Blocked {
                key,
                volid,
                storage,
                later: holding,
            })
        })
        .collect()
}

/// The refusal, in the user's terms.
pub(crate) fn refusal(vmid: u32, name: &str, blocked: &[Blocked]) -> String {
    let first = &blocked[0];
    let mut later: Vec<&str> = blocked
        .iter()
        .flat_map(|b| b.later.iter().map(String::as_str))
        .collect();
    let mut seen = Vec::new();
    later.retain(|n| {
        let new = !seen.contains(n);
        seen.push(*n);
        new
    });
    let disks: Vec<String> = blocked
        .iter()
        .map(|b| format!("{} on '{}'", b.key, b.storage))
        .collect();
    let (them, were) = if later.len() == 1 {
        ("it", "was")
    } else {
        ("them", "were")
    };
    format!(
        "Snapshot {name} of VM {vmid} cannot be rolled back: can't rollback, '{name}' is not most recent snapshot on '{}' (Proxmox VE). ZFS rolls a disk back only to its newest snapshot, and {} {were} taken after {name} on {}; remove {them} first (state: absent) to roll back to {name}",
        first.volid,
        later.join(", "),
        disks.join(", ")
    )
}

/// Whether PVE would refuse rolling VM `vmid` back to `name`: `Err` with the refusal.
/// `current`: the VM's config as it is (or as the run's plan leaves it).
pub(crate) fn check(
    client: &Client,
    (node, vmid): (&str, u32),
    name: &str,
    snapshots: &[Snapshot],
    current: &Value,
) -> Result<(), String> {
    let Some(target) = snapshots.iter().find(|s| s.name == name) else {
        return Ok(());
    };
    let later = match later(snapshots, target) {
        Some(later) if !later.is_empty() => later,
        _ => return Ok(()),
    };
    let section_of = |snap: &str| {
        client.get(
            &format!("/nodes/{node}/qemu/{vmid}/config"),
            &[("snapshot", snap.to_string())],
        )
    };
    let Ok(section) = section_of(name) else {
        return Ok(());
    };
    let Ok(storages) = client.get(&format!("/nodes/{node}/storage"), &[]) else {
        return Ok(());
    };
    let disks = newest_only(&section, &storages);
    if disks.is_empty() {
        return Ok(());
    }
    let mut configs = Vec::new();
    for snap in later {
        let config = match snap.snaptime {
            None => current.clone(),
            Some(_) => match section_of(&snap.name) {
                Ok(config) => config,
                Err(_) => return Ok(()),
            },
        };
        configs.push((snap.name.clone(), config));
    }
    let blocked = blocked(disks, &configs);
    if blocked.is_empty() {
        Ok(())
    } else {
        Err(refusal(vmid, name, &blocked))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn snap(name: &str, snaptime: Option<u64>, parent: Option<&str>) -> Snapshot {
        Snapshot {
            name: name.into(),
            snaptime,
            parent: parent.map(str::to_string),
            vmstate: false,
            snapstate: None,
        }
    }

    #[test]
    fn later_snapshots_are_newer_planned_or_same_second_descendants() {
        let list = [
            snap("s1", Some(10), None),
            snap("s2", Some(10), Some("s1")),
            snap("branch", Some(10), None),
            snap("s3", Some(11), Some("s2")),
            snap("planned", None, Some("s3")),
        ];
        let names = |v: Option<Vec<&Snapshot>>| -> Option<Vec<String>> {
            v.map(|v| v.into_iter().map(|s| s.name.clone()).collect())
        };
        assert_eq!(
            names(later(&list, &list[0])),
            Some(vec!["s2".to_string(), "s3".into(), "planned".into()]),
            "a same-second snapshot on another branch is not known to be later"
        );
        assert_eq!(names(later(&list, &list[3])), Some(vec!["planned".to_string()]));
        assert_eq!(names(later(&list, &list[4])), None, "a planned target");
    }

    #[test]
    fn only_zfs_disks_held_by_a_later_snapshot_block() {
        let section = json!({
            "scsi0": "nvme-pool:vm-120-disk-0,size=8G",
            "scsi1": "local-lvm:vm-120-disk-1,size=8G",
            "scsi2": "nvme-pool:vm-120-disk-2,size=8G",
            "ide2": "none,media=cdrom",
        });
        let storages = json!([
            {"storage": "nvme-pool", "type": "zfspool"},
            {"storage": "local-lvm", "type": "lvmthin"},
        ]);
        let later = [
            (
                "s2".to_string(),
                json!({"scsi0": "nvme-pool:vm-120-disk-0,size=8G", "scsi1": "local-lvm:vm-120-disk-1"}),
            ),
            ("s3".to_string(), json!({"scsi0": "nvme-pool:vm-120-disk-0,size=8G"})),
        ];
        let got = blocked(newest_only(&section, &storages), &later);
        assert_eq!(
            got,
            [Blocked {
                key: "scsi0".into(),
                volid: "nvme-pool:vm-120-disk-0".into(),
                storage: "nvme-pool".into(),
                later: vec!["s2".into(), "s3".into()],
            }],
            "scsi2 is in no later snapshot, scsi1 is on LVM-thin"
        );
        assert_eq!(
            refusal(120, "s1", &got),
            "Snapshot s1 of VM 120 cannot be rolled back: can't rollback, 's1' is not most recent snapshot on 'nvme-pool:vm-120-disk-0' (Proxmox VE). ZFS rolls a disk back only to its newest snapshot, and s2, s3 were taken after s1 on scsi0 on 'nvme-pool'; remove them first (state: absent) to roll back to s1"
        );
        assert!(
            newest_only(&section, &json!([])).is_empty(),
            "unlisted storages are left to PVE"
        );
    }
}
