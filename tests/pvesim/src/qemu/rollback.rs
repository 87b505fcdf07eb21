//! Snapshot rollback (`POST …/snapshot/{snapname}/rollback`), as qemu-server's API
//! handler and pve-guest-common's `AbstractConfig::snapshot_rollback` run it: no config
//! is read before the worker (a VM that does not exist fails the task); the worker takes
//! the guest migration lock, then checks template, existence, each volume's storage
//! (ZFS rolls back only to a volume's newest snapshot), `snapstate` and the lock, stops
//! a running VM, and holds `lock: rollback` while the volumes roll back. It then writes
//! the snapshot's config with the VM's own notes and unused disks kept, the current
//! disks the snapshot lacks as `unusedN`, a new `vmgenid`; a snapshot with RAM starts
//! the VM within this task, and `start` starts a VM that is not running with a `qmstart`
//! task of its own.

use super::snapshot::{copy_config, migration_lock};
use super::{check_lock, disks, is_template, vm, vm_mut};
use crate::api::Ctx;
use crate::error::ApiResult;
use crate::phased::{self, Step};
use crate::state::{Cluster, Guest, Snapshot};
use crate::tasks::TaskCtx;
use serde_json::Value;
use std::collections::BTreeMap;

pub fn rollback(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let name = ctx.get("snapname").unwrap_or("").to_string();
    let start = ctx.flag("start");
    if start {
        ctx.require(&format!("/vms/{vmid}"), "VM.PowerMgmt")?;
    }
    let flock = migration_lock(
        ctx.c,
        vmid,
        format!("can't lock file '/var/lock/pve-manager/pve-migrate-{vmid}' - got timeout"),
    );
    let (node2, name2) = (node.clone(), name.clone());
    let prepare: Step = Box::new(move |c, _| {
        // AbstractConfig::snapshot_rollback, its first (prepare) pass.
        let g = vm(c, &node2, vmid).map_err(|e| e.message)?;
        if is_template(g) {
            return Err("you can't rollback if vm is a template".into());
        }
        let Some(snap) = g.conf.snapshots.get(&name2) else {
            return Err(format!("snapshot '{name2}' does not exist"));
        };
        rollback_possible(c, g, &name2, snap)?;
        if let Some(state) = &snap.snapstate {
            return Err(format!(
                "unable to rollback to incomplete snapshot (snapstate = {state})"
            ));
        }
        check_lock(g, false)?;
        if g.running {
            // __snapshot_rollback_vm_stop: a hard stop, whatever the snapshot holds.
            super::power::stop_now(c, vmid);
        }
        let g = vm_mut(c, &node2, vmid).map_err(|e| e.message)?;
        g.conf.current.insert("lock".into(), "rollback".into());
        Ok(())
    });
    let (sim, who, node3) = (ctx.sim.clone(), ctx.who.clone(), node.clone());
    let apply: Step = Box::new(move |c, t| {
        // A failed volume rollback leaves the `rollback` lock, as in PVE.
        t.check_fault()?;
        let snap = apply_snapshot(c, &node3, vmid, &name, t)?;
        if snap.vmstate {
            // __snapshot_rollback_vm_start: vm_start in this task, from the saved state.
            super::power::start_in_task(c, &node3, vmid)?;
        }
        let running = vm(c, &node3, vmid).is_ok_and(|g| g.running);
        if start && !running {
            super::power::spawn_start(&sim, c, &node3, vmid, &who, false);
        }
        Ok(())
    });
    let upid = phased::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmrollback",
        &vmid.to_string(),
        ctx.who,
        flock,
        prepare,
        apply,
    );
    ctx.c.migration_locks.insert(vmid, upid.clone());
    Ok(Value::String(upid))
}

/// `__snapshot_rollback_vol_possible` for each volume of the snapshot (CD-ROMs
/// skipped), in qemu-server's drive order: pve-storage's ZFSPoolPlugin refuses a volume
/// with a snapshot taken after this one. LVM-thin, RBD and files (without
/// `snapshot-as-volume-chain`) roll back to any snapshot.
fn rollback_possible(c: &Cluster, g: &Guest, name: &str, snap: &Snapshot) -> Result<(), String> {
    let mut keys: Vec<&String> = snap.conf.keys().filter(|k| disks::is_disk_key(k)).collect();
    keys.sort_by_key(|k| drive_order(k));
    for key in keys {
        let Some(volid) = snapshot_volume(&snap.conf[key.as_str()]) else {
            continue;
        };
        let storage = volid.split(':').next().unwrap_or_default();
        if c.storage(storage).is_none_or(|s| s.kind != "zfspool") {
            continue;
        }
        let later = g
            .conf
            .snapshots
            .values()
            .filter(|s| (s.snaptime, s.order) > (snap.snaptime, snap.order))
            .any(|s| {
                s.conf
                    .iter()
                    .any(|(k, v)| disks::is_disk_key(k) && snapshot_volume(v) == Some(volid))
            });
        if later {
            return Err(format!(
                "can't rollback, '{name}' is not most recent snapshot on '{volid}'"
            ));
        }
    }
    Ok(())
}

/// The volume a drive value names that a snapshot covers (CD-ROMs have none).
fn snapshot_volume(value: &str) -> Option<&str> {
    let file = value.split(',').next().unwrap_or_default();
    let file = file.strip_prefix("file=").unwrap_or(file);
    let cdrom = value.split(',').any(|p| p == "media=cdrom");
    (!cdrom && file.contains(':') && !file.starts_with('/')).then_some(file)
}

/// qemu-server's `valid_drive_names` order: ide, scsi, virtio, sata, efidisk0, tpmstate0.
fn drive_order(k: &str) -> (u8, u32) {
    let bus = k.trim_end_matches(|c: char| c.is_ascii_digit());
    let n = k[bus.len()..].parse().unwrap_or(0);
    let rank = ["ide", "scsi", "virtio", "sata", "efidisk", "tpmstate"]
        .iter()
        .position(|b| *b == bus)
        .unwrap_or(6);
    (rank as u8, n)
}

/// The second pass: the lock released, the current disks the snapshot lacks made
/// `unusedN` (a cloud-init disk is freed instead), the snapshot's config applied with the
/// VM's notes and unused disks kept, `parent` set, a new `vmgenid`; pending changes go.
fn apply_snapshot(c: &mut Cluster, node: &str, vmid: u32, name: &str, t: &mut TaskCtx) -> Result<Snapshot, String> {
    let g = vm_mut(c, node, vmid).map_err(|e| e.message)?;
    if g.conf.current.get("lock").map(String::as_str) != Some("rollback") {
        return Err("got wrong lock".into());
    }
    let Some(snap) = g.conf.snapshots.get(name).cloned() else {
        return Err(format!("snapshot '{name}' does not exist"));
    };
    let mut current = g.conf.current.clone();
    current.remove("lock");
    let mut freed = Vec::new();
    for volid in unused_after(&current, &snap.conf) {
        if is_cloudinit(&volid) {
            t.log
                .push(format!("found unused cloudinit disk '{volid}', removing it"));
            freed.push(volid);
        } else {
            add_unused_volume(&mut current, volid)?;
        }
    }
    let mut conf: BTreeMap<String, String> = current
        .into_iter()
        .filter(|(k, _)| disks::is_unused_key(k) || k == "description")
        .collect();
    conf.extend(copy_config(&snap.conf));
    // __snapshot_rollback_hook: the machine and CPU of the saved RAM are the start's.
    for k in ["runningmachine", "runningcpu", "running-nets-host-mtu"] {
        conf.remove(k);
    }
    if conf.contains_key("vmgenid") {
        conf.insert("vmgenid".into(), crate::util::uuid4());
    }
    conf.insert("parent".into(), name.to_string());
    g.conf.current = conf;
    g.conf.pending.clear();
    g.conf.delete.clear();
    for volid in freed {
        c.remove_volume(&volid, node);
    }
    Ok(snap)
}

/// `__snapshot_rollback_get_unused`: volumes of the current config's drives (cloud-init
/// counted, CD-ROMs not) that no drive of the snapshot has.
fn unused_after(current: &BTreeMap<String, String>, snap: &BTreeMap<String, String>) -> Vec<String> {
    let volumes = |conf: &BTreeMap<String, String>| -> Vec<String> {
        let mut keys: Vec<&String> = conf.keys().filter(|k| disks::is_disk_key(k)).collect();
        keys.sort_by_key(|k| drive_order(k));
        keys.into_iter()
            .filter_map(|k| {
                let value = &conf[k.as_str()];
                let file = value.split(',').next().unwrap_or_default();
                let file = file.strip_prefix("file=").unwrap_or(file);
                let cdrom = value.split(',').any(|p| p == "media=cdrom") && !is_cloudinit(file);
                (!cdrom && !file.is_empty() && file != "none").then(|| file.to_string())
            })
            .collect()
    };
    let kept = volumes(snap);
    volumes(current).into_iter().filter(|v| !kept.contains(v)).collect()
}

/// qemu-server's `drive_is_cloudinit`.
fn is_cloudinit(volid: &str) -> bool {
    static CLOUDINIT: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"vm-\d+-cloudinit").expect("a valid pattern"));
    CLOUDINIT.is_match(volid)
}

/// AbstractConfig's `add_unused_volume`: the lowest free `unusedN`, no duplicate.
fn add_unused_volume(conf: &mut BTreeMap<String, String>, volid: String) -> Result<(), String> {
    const MAX_UNUSED_DISKS: usize = 256;
    if (0..MAX_UNUSED_DISKS).any(|n| conf.get(&format!("unused{n}")) == Some(&volid)) {
        return Ok(());
    }
    let key = (0..MAX_UNUSED_DISKS)
        .map(|n| format!("unused{n}"))
        .find(|k| !conf.contains_key(k))
        .ok_or("Too many unused volumes - please delete them first.")?;
    conf.insert(key, volid);
    Ok(())
}
