//! Disk operations: resize (task), move_disk (task), unlink (synchronous).

use super::disks::{self, Drive};
use super::update::{self, UpdatePlan};
use super::{check_lock, config, vm};
use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::storage;
use crate::tasks;
use serde_json::Value;
use std::collections::BTreeMap;

static SIZE_RE: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"^(\+)?(\d+(?:\.\d+)?)([KMGT])?$").unwrap());

/// `PUT resize`: every check runs in the `resize` task (PVE >= 8).
pub fn resize(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let disk = ctx.get("disk").unwrap_or("").to_string();
    let size = ctx.get("size").unwrap_or("").to_string();
    let digest = ctx.get("digest").map(str::to_string);
    let skiplock = ctx.flag("skiplock");
    let node2 = node.clone();
    let who = ctx.who.clone();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "resize",
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            let g = vm(c, &node2, vmid).map_err(|e| e.message)?;
            if digest.as_ref().is_some_and(|d| d != &config::digest(&g.conf)) {
                return Err("checksum mismatch (file change by other user?)".into());
            }
            check_lock(g, skiplock)?;
            let Some(val) = g.conf.current.get(&disk).cloned() else {
                return Err(format!("disk '{disk}' does not exist"));
            };
            let mut d = Drive::parse_stored(&val);
            if d.is_cdrom() {
                return Err("you can't resize a cdrom".into());
            }
            let volid = d
                .volid()
                .ok_or_else(|| format!("disk '{disk}' has no volume"))?
                .to_string();
            let sid = volid.split(':').next().unwrap_or("");
            crate::auth::require(c, &who, &format!("/storage/{sid}"), "Datastore.AllocateSpace")
                .map_err(|e| e.message)?;
            let cur = c.find_volume(&volid, &node2).map(|v| v.size).or(d.size()).unwrap_or(0);
            let caps = SIZE_RE
                .captures(&size)
                .ok_or_else(|| format!("unable to parse size '{size}'"))?;
            let mult: u64 = match caps.get(3).map(|m| m.as_str()) {
                Some("K") => 1 << 10,
                Some("M") => 1 << 20,
                Some("G") => 1 << 30,
                Some("T") => 1 << 40,
                _ => 1,
            };
            let amount = (caps[2].parse::<f64>().unwrap_or(0.0) * mult as f64) as u64;
            let new = if caps.get(1).is_some() { cur + amount } else { amount };
            if new < cur {
                return Err("shrinking disks is not supported".into());
            }
            t.check_fault()?;
            if new == cur {
                return Ok(());
            }
            let vn = c.vol_node(volid.split(':').next().unwrap_or(""), &node2);
            if let Some(v) = c.volumes.iter_mut().find(|v| v.volid() == volid && v.node == vn) {
                v.size = new;
            }
            d.opts.insert("size".into(), storage::format_size(new));
            c.guests
                .get_mut(&vmid)
                .ok_or("vanished")?
                .conf
                .current
                .insert(disk.clone(), d.print(None));
            t.log.push("Image resized.".into());
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

pub fn move_disk(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let disk = ctx.get("disk").unwrap_or("").to_string();
    let (storage_p, target_vmid) = (
        ctx.get("storage").map(str::to_string),
        ctx.get("target-vmid").map(str::to_string),
    );
    if storage_p.is_some() == target_vmid.is_some() {
        let msg = if storage_p.is_some() {
            "either set 'storage' or 'target-vmid', but not both"
        } else {
            "both 'storage' and 'target-vmid' missing, either needs to be set"
        };
        let mut e = BTreeMap::new();
        e.insert("storage".to_string(), msg.to_string());
        e.insert("target-vmid".to_string(), msg.to_string());
        return Err(ApiError::params(e));
    }
    let g = vm(ctx.c, &node, vmid)?.clone();
    if let Some(target) = target_vmid {
        return reassign(ctx, &g, &disk, &target);
    }
    check_lock(&g, false).map_err(ApiError::internal)?;
    if ctx.get("digest").is_some_and(|d| d != config::digest(&g.conf)) {
        return Err(ApiError::internal(
            "detected modified configuration - file changed by other user? Try again.",
        ));
    }
    let Some(val) = g.conf.current.get(&disk).cloned() else {
        return Err(ApiError::internal(format!("disk '{disk}' does not exist")));
    };
    let d = Drive::parse_stored(&val);
    if d.is_cdrom() {
        return Err(ApiError::internal("you can't move a cdrom"));
    }
    let volid = d
        .volid()
        .ok_or_else(|| ApiError::internal(format!("disk '{disk}' has no volume")))?
        .to_string();
    let delete = ctx.flag("delete");
    let sid = storage_p.unwrap_or_default();
    let (old_sid, old_name) = volid.split_once(':').unwrap_or(("", ""));
    let old_fmt = storage::format_of(old_name);
    let Some(sd) = ctx.c.storage(&sid).cloned() else {
        return Err(ApiError::internal(format!("storage '{sid}' does not exist")));
    };
    let fmt = ctx.get("format").map(str::to_string).unwrap_or_else(|| {
        if sd.formats().contains(&old_fmt) {
            old_fmt.clone()
        } else {
            sd.default_format()
        }
    });
    if sid == old_sid && fmt == old_fmt {
        return Err(ApiError::internal(
            "you can't move to the same storage with same format",
        ));
    }
    if !sd.has_content("images") || !sd.on_node(&node) {
        return Err(ApiError::internal(format!(
            "storage '{sid}' does not support vm images"
        )));
    }
    ctx.require(&format!("/storage/{sid}"), "Datastore.AllocateSpace")?;
    let node2 = node.clone();
    // clone_disk prints this as the copy starts: a running move already shows it.
    let first = vec![format!("create full clone of drive {disk} ({volid})")];
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmmove",
        &vmid.to_string(),
        ctx.who,
        first,
        Box::new(move |c, t| {
            check_lock(vm(c, &node2, vmid).map_err(|e| e.message)?, false)?;
            let size = c.find_volume(&volid, &node2).map(|v| v.size).or(d.size()).unwrap_or(0);
            t.check_fault()?;
            let newvol = storage::alloc(c, &sid, &node2, vmid, size, Some(&fmt))?;
            t.log.push(format!(
                "transferred {} of {} (100.00%)",
                storage::format_size(size),
                storage::format_size(size)
            ));
            let g = c.guests.get_mut(&vmid).ok_or("vanished")?;
            let mut nd = d.clone();
            nd.file = newvol;
            nd.opts.insert("size".into(), storage::format_size(size));
            g.conf.current.insert(disk.clone(), nd.print(None));
            if delete {
                c.remove_volume(&volid, &node2);
            } else {
                let uk = super::free_unused_key(g);
                g.conf.current.insert(uk, volid.clone());
            }
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

/// Reassign a disk to another VM on the same node. The synchronous checks, their order
/// and texts are qemu-server's load_and_check_reassign_configs (they differ from a
/// storage move's: e.g. a missing disk or a cdrom is worded differently).
fn reassign(ctx: &mut Ctx<'_>, g: &crate::state::Guest, disk: &str, target: &str) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let tid: u32 = target.parse().unwrap_or(0);
    let tdisk = ctx.get("target-disk").unwrap_or(disk).to_string();
    let Some(tnode) = ctx.c.guests.get(&tid).map(|t| t.node.clone()) else {
        return Err(ApiError::internal(format!("could not find target VM {tid}")));
    };
    if tnode != node {
        return Err(ApiError::internal(format!(
            "Both VMs need to be on the same node ({node} != {tnode})"
        )));
    }
    check_lock(g, false).map_err(ApiError::internal)?;
    let tg = vm(ctx.c, &node, tid)?;
    check_lock(tg, false).map_err(ApiError::internal)?;
    if super::is_template(g) || super::is_template(tg) {
        return Err(ApiError::internal("Can't move disks from or to template VMs"));
    }
    let modified = "detected modified configuration - file changed by other user? Try again.";
    if ctx.get("digest").is_some_and(|d| d != config::digest(&g.conf)) {
        return Err(ApiError::internal(format!("VM {vmid}: {modified}")));
    }
    if ctx.get("target-digest").is_some_and(|d| d != config::digest(&tg.conf)) {
        return Err(ApiError::internal(format!("VM {tid}: {modified}")));
    }
    let Some(val) = g.conf.current.get(disk) else {
        return Err(ApiError::internal(format!(
            "Disk '{disk}' for VM '{vmid}' does not exist"
        )));
    };
    if tg.conf.current.contains_key(&tdisk) {
        return Err(ApiError::internal(format!(
            "Target disk key '{tdisk}' is already in use for VM '{tid}'"
        )));
    }
    let d = Drive::parse_stored(val);
    // drive_is_cdrom($drive, 1): a cloud-init drive is not a cdrom here.
    if d.is_cdrom() && !d.file.contains("-cloudinit") {
        return Err(ApiError::internal("CD drive contents can't be moved to another VM"));
    }
    let Some(volid) = d.volid().map(str::to_string) else {
        return Err(ApiError::internal(format!("disk '{disk}' has no associated volume")));
    };
    if g.running && !disks::is_unused_key(disk) {
        return Err(ApiError::internal(
            "Cannot move disk to another VM while the source VM is running - detach first",
        ));
    }
    let (volid, disk, node2) = (volid.to_string(), disk.to_string(), node.clone());
    let id = format!("{vmid}-{disk}>{tid}-{tdisk}");
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmmove",
        &id,
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            t.check_fault()?;
            let (sid, name) = volid.split_once(':').unwrap_or(("", ""));
            let sd = c.storage(sid).cloned().ok_or("storage vanished")?;
            let n = storage::free_disk_index(c, &sd, &node2, tid);
            let newname = storage::disk_volname(&sd, tid, n, &storage::format_of(name), false);
            let vn = c.vol_node(sid, &node2);
            if let Some(v) = c
                .volumes
                .iter_mut()
                .find(|v| v.storage == sid && v.volname == name && v.node == vn)
            {
                v.volname = newname.clone();
                v.vmid = Some(tid);
            }
            let src = c.guests.get_mut(&vmid).ok_or("vanished")?;
            let old = src.conf.current.remove(&disk).unwrap_or_default();
            let mut d = Drive::parse_stored(&old);
            d.file = format!("{sid}:{newname}");
            let tg = c.guests.get_mut(&tid).ok_or("target vanished")?;
            tg.conf.current.insert(tdisk.clone(), d.print(None));
            t.log.push(format!("moved disk '{volid}' to VM {tid} as '{tdisk}'"));
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

/// `PUT unlink`: like `PUT config delete=<idlist>`; unused volumes are freed.
pub fn unlink(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let ids = crate::schema::formats::split_list(ctx.get("idlist").unwrap_or(""));
    let g = vm(ctx.c, &node, vmid)?;
    check_lock(g, false).map_err(ApiError::internal)?;
    for k in &ids {
        ctx.require(&format!("/vms/{vmid}"), "VM.Config.Disk")?;
        if !disks::is_disk_key(k) && !disks::is_unused_key(k) {
            return Err(ApiError::param("idlist", format!("invalid disk key '{k}'")));
        }
    }
    let plan = UpdatePlan {
        sets: vec![],
        raw_sets: vec![],
        deletes: ids,
        revert: vec![],
        force: ctx.flag("force"),
        log_line: String::new(),
    };
    let mut log = Vec::new();
    update::execute(ctx.c, &ctx.sim.schema, ctx.who, &node, vmid, plan, &mut log)?;
    Ok(Value::Null)
}
