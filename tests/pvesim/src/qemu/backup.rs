//! Backups and restores: `POST /nodes/{node}/vzdump` writes a backup archive
//! (`dump/vzdump-qemu-<vmid>-<time>.vma.zst`) holding the VM's config on a storage
//! with `backup` content; `POST /nodes/{node}/qemu` with `archive` restores one as
//! qemu-server's restore_vma_archive does: new disks on `storage` (or each disk's
//! original storage), the archive's config with `lock`/`unusedN`/`parent` dropped, a
//! new `vmgenid`, the same MACs unless `unique`, other create parameters merged in.

use super::disks::{self, Drive};
use super::{free_unused_key, vm};
use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::state::{Cluster, Config, Guest, GuestKind, Volume};
use crate::tasks;
use crate::util::{civil, now_ms, now_secs, uuid4};
use serde_json::Value;
use std::collections::BTreeMap;

/// Archive name of a backup made at epoch `secs` (UTC, PVE's `YYYY_MM_DD-HH_MM_SS`).
pub fn archive_name(vmid: u32, secs: u64) -> String {
    let (y, m, d, h, min, s) = civil(secs);
    format!("dump/vzdump-qemu-{vmid}-{y:04}_{m:02}_{d:02}-{h:02}_{min:02}_{s:02}.vma.zst")
}

/// `POST /nodes/{node}/vzdump` for one VM (`vmid`) to a backup storage.
pub fn vzdump(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let Some(vmid) = ctx.get("vmid").and_then(|v| v.parse::<u32>().ok()) else {
        return Err(ApiError::param("vmid", "pvesim backs up one VM per call: give vmid"));
    };
    ctx.require(&format!("/vms/{vmid}"), "VM.Backup")?;
    let sid = ctx.get("storage").unwrap_or("local").to_string();
    let Some(sd) = ctx.c.storage(&sid).cloned() else {
        return Err(ApiError::internal(format!("storage '{sid}' does not exist")));
    };
    if !sd.has_content("backup") {
        return Err(ApiError::internal(format!("storage '{sid}' does not support backups")));
    }
    ctx.require(&format!("/storage/{sid}"), "Datastore.AllocateSpace")?;
    let mode = ctx.get("mode").unwrap_or("snapshot").to_string();
    let node2 = node.clone();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "vzdump",
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            let g = vm(c, &node2, vmid).map_err(|_| format!("guest {vmid} not found on node '{node2}'"))?;
            if let Some(l) = g.conf.current.get("lock") {
                return Err(format!("VM is locked ({l})"));
            }
            t.log.push(format!("INFO: Starting Backup of VM {vmid} (qemu)"));
            t.log.push(format!("INFO: Backup mode: {mode}"));
            t.check_fault()?;
            let mut conf = g.conf.current.clone();
            conf.remove("lock");
            let size: u64 = conf
                .iter()
                .filter(|(k, _)| disks::is_disk_key(k))
                .filter_map(|(_, v)| {
                    Some(Drive::parse_stored(v))
                        .filter(|d| !d.is_cdrom())
                        .and_then(|d| d.size())
                })
                .sum::<u64>()
                / 10;
            let volname = archive_name(vmid, now_secs());
            t.log.push(format!("INFO: creating vzdump archive '{sid}:{volname}'"));
            let vn = if sd.shared { None } else { Some(node2.clone()) };
            c.volumes.push(Volume {
                storage: sid.clone(),
                node: vn,
                volname,
                size: size.max(1 << 20),
                format: "vma.zst".into(),
                vmid: Some(vmid),
                content: "backup".into(),
                ctime: now_secs(),
                backup_config: Some(conf),
                checksums: Default::default(),
                virtual_size: None,
            });
            t.log.push(format!("INFO: Finished Backup of VM {vmid}"));
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

/// The restore half of `POST /nodes/{node}/qemu` (`archive` given). Pool and
/// permission checks are done by the caller.
pub fn restore(ctx: &mut Ctx<'_>, archive: &str, pool: Option<String>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    reject_disk_params(ctx)?;
    let vol = backup_volume(ctx, archive, &node)?;
    let old = overwritable_guest(ctx, vmid, &node)?;
    // Other config parameters given with the archive override the archive's values.
    let overrides = super::update::plan(ctx, true)?;
    let target = ctx.get("storage").map(str::to_string);
    let unique = ctx.flag("unique");
    let start = ctx.flag("start");
    lock_for_restore(ctx.c, vmid, &node);
    let (sim, who, node2, archive) = (ctx.sim.clone(), ctx.who.clone(), node.clone(), archive.to_string());
    let work: tasks::Work = Box::new(move |c, t| {
        let before = c.volumes.len();
        t.log.push(format!("restore vma archive: zstd -q -d -c /var/lib/vz/{} | vma extract -v -r /var/tmp/vzdumptmp.fifo - /var/tmp/vzdumptmp", archive.split_once(':').map_or("", |x| x.1)));
        let result = restored_config(c, t, &vol, target.as_deref(), &node2, vmid, unique);
        let mut conf = match result {
            Ok(conf) => conf,
            Err(e) => {
                roll_back_restore(c, before, old.as_ref(), vmid);
                return Err(format!("unable to restore VM {vmid} - {e}"));
            }
        };
        {
            let mut dc = super::normalize::DiskCtx {
                schema: &sim.schema,
                who: &who,
                node: &node2,
                vmid,
                default_storage: None,
                log: &mut t.log,
            };
            apply_overrides(c, &mut dc, overrides, &mut conf)?;
        }
        if let Some(o) = &old {
            conf = keep_old_disks(c, o, conf, &vol, &node2, vmid);
        }
        let g = c.guests.get_mut(&vmid).ok_or_else(|| format!("VM {vmid} vanished"))?;
        g.conf = Config {
            current: conf,
            ..Config::default()
        };
        if let Some(p) = &pool {
            crate::pools::add_vm(c, p, vmid);
        }
        if start {
            t.log.push("Execute autostart".into());
            super::power::spawn_start(&sim, c, &node2, vmid, &who, false);
        }
        Ok(())
    });
    Ok(Value::String(tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmrestore",
        &vmid.to_string(),
        ctx.who,
        vec![],
        work,
    )))
}

/// First check of a restore: disks come from the archive, so no disk parameter may be given.
fn reject_disk_params(ctx: &Ctx<'_>) -> ApiResult<()> {
    let mut conflicts = BTreeMap::new();
    for k in ctx.p.keys().filter(|k| disks::is_disk_key(k)) {
        conflicts.insert(k.clone(), "option conflicts with option 'archive'".to_string());
    }
    if !conflicts.is_empty() {
        return Err(ApiError::params(conflicts));
    }
    Ok(())
}

/// The archive volume (a backup) and the target `storage`, checked before the VM is.
fn backup_volume(ctx: &Ctx<'_>, archive: &str, node: &str) -> ApiResult<Volume> {
    let Some((sid, _)) = archive.split_once(':') else {
        return Err(ApiError::internal(format!("unable to parse volume ID '{archive}'")));
    };
    if ctx.c.storage(sid).is_none() {
        return Err(ApiError::internal(format!("storage '{sid}' does not exist")));
    }
    let Some(vol) = ctx.c.find_volume(archive, node).cloned() else {
        return Err(ApiError::internal(format!("volume '{archive}' does not exist")));
    };
    if vol.content != "backup" {
        return Err(ApiError::internal(format!(
            "volume '{archive}' is not a backup archive"
        )));
    }
    if let Some(target) = ctx.get("storage") {
        if ctx.c.storage(target).is_none() {
            return Err(ApiError::internal(format!("storage '{target}' does not exist")));
        }
    }
    Ok(vol)
}

/// An existing VM `vmid` may only be overwritten with `force`, on this node, unprotected,
/// stopped and unlocked; returns it (to restore on failure, to keep its other disks).
fn overwritable_guest(ctx: &Ctx<'_>, vmid: u32, node: &str) -> ApiResult<Option<Guest>> {
    let emsg = format!("unable to restore VM {vmid} -");
    let force = ctx.flag("force");
    let old = ctx.c.guests.get(&vmid).cloned();
    if let Some(g) = &old {
        if !force || g.node != node || g.kind != GuestKind::Qemu {
            let what = if g.kind == GuestKind::Lxc { "CT" } else { "VM" };
            return Err(ApiError::internal(format!(
                "{emsg} {what} {vmid} already exists on node '{}'",
                g.node
            )));
        }
        if g.conf.current.get("protection").is_some_and(|p| p == "1") {
            return Err(ApiError::internal(format!("{emsg} protection mode enabled")));
        }
        if g.running {
            return Err(ApiError::internal(format!("{emsg} vm is running")));
        }
        if let Some(l) = g.conf.current.get("lock") {
            return Err(ApiError::internal(format!("{emsg} VM is locked ({l})")));
        }
    }
    Ok(old)
}

/// The API call's side effect before the task: `lock: create` on the VM (a new one if none).
fn lock_for_restore(c: &mut Cluster, vmid: u32, node: &str) {
    match c.guests.get_mut(&vmid) {
        Some(g) => {
            g.conf.current.insert("lock".into(), "create".into());
        }
        None => {
            let mut conf = Config::default();
            conf.current.insert("lock".into(), "create".into());
            c.guests.insert(
                vmid,
                Guest {
                    vmid,
                    node: node.to_string(),
                    kind: GuestKind::Qemu,
                    conf,
                    running: false,
                    paused: false,
                    started_ms: None,
                    created_ms: now_ms(),
                    power_change: None,
                    agent: None,
                },
            );
        }
    }
}

/// The task's fallible part: the archive's config with its disks allocated anew (and new
/// ids when `unique`); on error the caller rolls back.
fn restored_config(
    c: &mut Cluster,
    t: &mut tasks::TaskCtx,
    vol: &Volume,
    target: Option<&str>,
    node: &str,
    vmid: u32,
    unique: bool,
) -> Result<BTreeMap<String, String>, String> {
    t.check_fault()?;
    let backup = vol.backup_config.clone().unwrap_or_default();
    let mut conf = BTreeMap::new();
    for (k, v) in &backup {
        if k == "lock" || k == "parent" || disks::is_unused_key(k) {
            continue;
        }
        if let Some(v) = restored_entry(c, &mut t.log, k, v, target, node, vmid)? {
            conf.insert(k.clone(), v);
        }
    }
    match conf.get("vmgenid").map(String::as_str) {
        Some("0") | None => {}
        Some(_) => {
            conf.insert("vmgenid".into(), uuid4());
        }
    }
    if unique {
        regenerate_ids(c, &mut conf);
    }
    Ok(conf)
}

/// One archive config entry as restored: a disk on a newly allocated volume, `None` for a
/// disk excluded from the backup, any other entry as it is.
fn restored_entry(
    c: &mut Cluster,
    log: &mut Vec<String>,
    k: &str,
    v: &str,
    target: Option<&str>,
    node: &str,
    vmid: u32,
) -> Result<Option<String>, String> {
    if !disks::is_disk_key(k) {
        return Ok(Some(v.to_string()));
    }
    let mut d = Drive::parse_stored(v);
    let Some(volid) = d.volid().map(str::to_string).filter(|_| !d.is_cdrom()) else {
        return Ok(Some(v.to_string()));
    };
    if d.opts.get("backup").is_some_and(|b| b == "0") {
        return Ok(None); // excluded from the backup: not restored
    }
    let sid = target.map_or_else(|| volid.split(':').next().unwrap_or("").to_string(), str::to_string);
    let size = d.size().unwrap_or(4 << 20);
    d.opts.remove("format");
    let new = crate::storage::alloc(c, &sid, node, vmid, size, None)?;
    log.push(format!("map '{k}' to '{new}' (write zeros = 0)"));
    d.file = new;
    Ok(Some(d.print(None)))
}

/// `unique`: new MACs on the NICs and a new SMBIOS uuid, as restore does with `--unique`.
fn regenerate_ids(c: &Cluster, conf: &mut BTreeMap<String, String>) {
    let prefix = super::normalize::mac_prefix(c);
    for (_, v) in conf.iter_mut().filter(|(k, _)| disks::is_net_key(k)) {
        let (model_mac, rest) = v.split_once(',').unwrap_or((v.as_str(), ""));
        let model = model_mac.split('=').next().unwrap_or("virtio").to_string();
        let mac = super::normalize::gen_mac(prefix.as_deref());
        *v = if rest.is_empty() {
            format!("{model}={mac}")
        } else {
            format!("{model}={mac},{rest}")
        };
    }
    if let Some(s) = conf.get_mut("smbios1") {
        let rest: Vec<&str> = s.split(',').filter(|p| !p.starts_with("uuid=")).collect();
        *s = std::iter::once(format!("uuid={}", uuid4()))
            .chain(rest.iter().map(|r| r.to_string()))
            .collect::<Vec<_>>()
            .join(",");
    }
}

/// A failed restore frees the volumes it allocated and puts back the VM as it was (or none).
fn roll_back_restore(c: &mut Cluster, before: usize, old: Option<&Guest>, vmid: u32) {
    c.volumes.truncate(before);
    match old {
        Some(o) => {
            c.guests.insert(vmid, o.clone());
        }
        None => {
            c.guests.remove(&vmid);
        }
    }
}

/// The other create parameters, applied over the archive's config (new disks allocated).
fn apply_overrides(
    c: &mut Cluster,
    dc: &mut super::normalize::DiskCtx<'_>,
    overrides: super::update::UpdatePlan,
    conf: &mut BTreeMap<String, String>,
) -> Result<(), String> {
    for (k, p) in overrides.sets {
        let v = match p {
            super::update::Planned::Value(v) => v,
            super::update::Planned::Disk(d) => super::normalize::execute_disk(c, dc, &k, d)?,
        };
        conf.insert(k, v);
    }
    Ok(())
}

/// Overwriting a VM (force): disks the archive restores are replaced and freed,
/// the old VM's other disks are kept as unusedN.
fn keep_old_disks(
    c: &mut Cluster,
    o: &Guest,
    conf: BTreeMap<String, String>,
    vol: &Volume,
    node: &str,
    vmid: u32,
) -> BTreeMap<String, String> {
    let mut g = o.clone();
    g.conf.current = conf;
    for (k, v) in o
        .conf
        .current
        .iter()
        .filter(|(k, _)| disks::is_disk_key(k) || disks::is_unused_key(k))
    {
        let d = Drive::parse_stored(v);
        let Some(volid) = d.volid() else { continue };
        if d.is_cdrom() || crate::storage::owner_of(volid.split(':').nth(1).unwrap_or("")) != Some(vmid) {
            continue;
        }
        if backup_restores(&backup_keys(vol), k) {
            c.remove_volume(volid, node);
        } else if !super::volume_referenced(&g, volid) {
            let key = free_unused_key(&g);
            g.conf.current.insert(key, volid.to_string());
        }
    }
    g.conf.current
}

fn backup_keys(vol: &Volume) -> Vec<String> {
    vol.backup_config
        .as_ref()
        .map(|c| c.keys().cloned().collect())
        .unwrap_or_default()
}

fn backup_restores(keys: &[String], key: &str) -> bool {
    keys.iter().any(|k| k == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_names_use_utc_dates() {
        assert_eq!(archive_name(100, 0), "dump/vzdump-qemu-100-1970_01_01-00_00_00.vma.zst");
        assert_eq!(
            archive_name(101, 1_764_506_096),
            "dump/vzdump-qemu-101-2025_11_30-12_34_56.vma.zst"
        );
    }
}
