//! Snapshots (`/nodes/{node}/qemu/{vmid}/snapshot…`): list, create, delete, a
//! snapshot's config, as pve-guest-common's AbstractConfig does them: the config file
//! gets a `[name]` section with what a snapshot takes of the config of that moment
//! ([`copy_config`]), the current config's `parent` points at the newest one, and the
//! `snapshot`/`snapshot-delete` lock is held while the task runs (written by the
//! worker's first step, [`crate::phased`]), with the snapshot's `snapstate` (`prepare`,
//! `delete`) beside it. Deletes without `force` first take the guest migration lock, so
//! a second one waits for the first. Rollback is [`super::rollback`].

use super::{check_lock, disks, is_template, vm, vm_mut};
use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::phased::{self, Flock, Step};
use crate::state::{Cluster, Snapshot};
use crate::util::now_secs;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// pve-guest-common's `__snapshot_copy_config`: what of a config a snapshot section
/// takes (and a rollback takes back). The VM's notes (`description`) and its unused
/// disks stay with the VM; `parent` is copied (a new snapshot's parent is the VM's).
pub fn copy_config(source: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    const LEFT_OUT: &[&str] = &["snapstate", "snaptime", "vmstate", "lock", "digest", "description"];
    source
        .iter()
        .filter(|(k, _)| !LEFT_OUT.contains(&k.as_str()) && !disks::is_unused_key(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

pub fn list(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let g = vm(ctx.c, &ctx.node(), ctx.vmid())?;
    let mut out: Vec<Value> = g
        .conf
        .snapshots
        .iter()
        .map(|(name, s)| {
            let mut m = Map::new();
            m.insert("name".into(), json!(name));
            m.insert("snaptime".into(), json!(s.snaptime));
            m.insert("vmstate".into(), json!(u8::from(s.vmstate)));
            m.insert("description".into(), json!(s.description));
            if let Some(p) = &s.parent {
                m.insert("parent".into(), json!(p));
            }
            if let Some(state) = &s.snapstate {
                m.insert("snapstate".into(), json!(state));
            }
            Value::Object(m)
        })
        .collect();
    let mut current = json!({"name": "current", "digest": super::config::digest(&g.conf), "running": u8::from(g.running), "description": "You are here!"});
    if let Some(p) = g.conf.current.get("parent") {
        current["parent"] = json!(p);
    }
    out.push(current);
    Ok(Value::Array(out))
}

/// Whether every disk of the config is on storage that can snapshot (thin LVM, ZFS,
/// RBD, or qcow2 files).
fn snapshot_capable(c: &Cluster, conf: &BTreeMap<String, String>) -> bool {
    conf.iter().filter(|(k, _)| disks::is_disk_key(k)).all(|(_, v)| {
        let d = disks::Drive::parse_stored(v);
        let Some(volid) = d.volid() else { return true };
        if d.is_cdrom() {
            return true;
        }
        let Some(sd) = c.storage(volid.split(':').next().unwrap_or("")) else {
            return false;
        };
        match sd.kind.as_str() {
            "lvmthin" | "zfspool" | "rbd" => true,
            _ => sd.is_file() && volid.ends_with(".qcow2"),
        }
    })
}

pub fn create(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let name = ctx.get("snapname").unwrap_or("").to_string();
    if name == "current" {
        return Err(ApiError::internal(
            "unable to use snapshot name 'current' (reserved name)",
        ));
    }
    if name.eq_ignore_ascii_case("pending") {
        return Err(ApiError::internal(
            "unable to use snapshot name 'pending' (reserved name)",
        ));
    }
    vm(ctx.c, &node, vmid)?;
    let vmstate = ctx.flag("vmstate");
    let description = ctx.get("description").unwrap_or("").to_string();
    let (node2, name2) = (node.clone(), name.clone());
    let prepare: Step = Box::new(move |c, _| {
        // AbstractConfig::__snapshot_prepare, in its order.
        let g = vm(c, &node2, vmid).map_err(|e| e.message)?;
        if is_template(g) {
            return Err("you can't take a snapshot if it's a template".into());
        }
        check_lock(g, false)?;
        if g.conf.snapshots.contains_key(&name2) {
            return Err(format!("snapshot name '{name2}' already used"));
        }
        if !snapshot_capable(c, &g.conf.current) {
            return Err("snapshot feature is not available".into());
        }
        let running = g.running;
        let g = vm_mut(c, &node2, vmid).map_err(|e| e.message)?;
        let mut conf = copy_config(&g.conf.current);
        let parent = conf.remove("parent");
        let order = g.conf.snapshots.values().map(|s| s.order + 1).max().unwrap_or(0);
        g.conf.current.insert("lock".into(), "snapshot".into());
        g.conf.snapshots.insert(
            name2,
            Snapshot {
                description,
                snaptime: now_secs(),
                // The RAM is saved only from a running VM.
                vmstate: vmstate && running,
                parent,
                conf,
                snapstate: Some("prepare".into()),
                order,
            },
        );
        Ok(())
    });
    let node3 = node.clone();
    let commit: Step = Box::new(move |c, t| {
        let g = vm_mut(c, &node3, vmid).map_err(|e| e.message)?;
        if let Err(e) = t.check_fault() {
            // snapshot_create's cleanup: snapshot_delete with force under the snapshot lock.
            t.log.push("snapshot create failed: starting cleanup".into());
            g.conf.snapshots.remove(&name);
            g.conf.current.remove("lock");
            return Err(e);
        }
        // __snapshot_commit.
        if let Some(s) = g.conf.snapshots.get_mut(&name) {
            s.snapstate = None;
        }
        g.conf.current.remove("lock");
        g.conf.current.insert("parent".into(), name.clone());
        Ok(())
    });
    let upid = phased::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmsnapshot",
        &vmid.to_string(),
        ctx.who,
        None,
        prepare,
        commit,
    );
    Ok(Value::String(upid))
}

/// The guest migration lock a rollback or snapshot delete takes first: free, or the task
/// holding it (or waiting for it last), which this one waits for.
pub(super) fn migration_lock(c: &mut Cluster, vmid: u32, timeout_error: String) -> Option<Flock> {
    let holder = c
        .migration_locks
        .get(&vmid)
        .filter(|u| c.tasks.get(*u).is_some_and(|t| t.running))?;
    Some(Flock {
        holder: holder.clone(),
        timeout_error,
    })
}

pub fn delete(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let name = ctx.get("snapname").unwrap_or("").to_string();
    // No config is read before the worker: a VM that does not exist fails the task.
    let force = ctx.flag("force");
    // Without `force` the worker takes the guest migration lock first.
    let flock = if force {
        None
    } else {
        migration_lock(
            ctx.c,
            vmid,
            "Failed to obtain guest migration lock - replication running?".into(),
        )
    };
    let (node2, name2) = (node.clone(), name.clone());
    let prepare: Step = Box::new(move |c, _| {
        // AbstractConfig::snapshot_delete: the snapshot, set_lock, then the prepare pass.
        let g = vm(c, &node2, vmid).map_err(|e| e.message)?;
        if !g.conf.snapshots.contains_key(&name2) {
            return Err(format!("snapshot '{name2}' does not exist"));
        }
        check_lock(g, false)?;
        if is_template(g) {
            // set_lock has written the lock already; the error leaves it, as in PVE.
            let g = vm_mut(c, &node2, vmid).map_err(|e| e.message)?;
            g.conf.current.insert("lock".into(), "snapshot-delete".into());
            return Err("you can't delete a snapshot if vm is a template".into());
        }
        let g = vm_mut(c, &node2, vmid).map_err(|e| e.message)?;
        g.conf.current.insert("lock".into(), "snapshot-delete".into());
        if let Some(s) = g.conf.snapshots.get_mut(&name2) {
            s.snapstate = Some("delete".into());
        }
        Ok(())
    });
    let node3 = node.clone();
    let remove: Step = Box::new(move |c, t| {
        let failed = t.check_fault();
        let g = vm_mut(c, &node3, vmid).map_err(|e| e.message)?;
        match failed {
            // A volume that cannot drop its snapshot stops the delete, leaving the lock
            // and `snapstate: delete`; with `force` it is a warning.
            Err(e) if !force => return Err(e),
            Err(e) => t.warn(e),
            Ok(()) => {}
        }
        let Some(snap) = g.conf.snapshots.remove(&name) else {
            return Err(format!("snapshot '{name}' does not exist"));
        };
        // Children (and the current config) now descend from the deleted one's parent.
        for s in g.conf.snapshots.values_mut() {
            if s.parent.as_deref() == Some(name.as_str()) {
                s.parent = snap.parent.clone();
            }
        }
        if g.conf.current.get("parent") == Some(&name) {
            match &snap.parent {
                Some(p) => g.conf.current.insert("parent".into(), p.clone()),
                None => g.conf.current.remove("parent"),
            };
        }
        g.conf.current.remove("lock");
        Ok(())
    });
    let upid = phased::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmdelsnapshot",
        &vmid.to_string(),
        ctx.who,
        flock,
        prepare,
        remove,
    );
    if !force {
        ctx.c.migration_locks.insert(vmid, upid.clone());
    }
    Ok(Value::String(upid))
}

/// `GET config?snapshot=name`: the snapshot's section as it is (AbstractConfig's
/// `load_snapshot_config`): its config, `snaptime`, its own `description` if it has one,
/// `parent`, `snapstate`, and the file's digest.
pub fn config(ctx: &Ctx<'_>, name: &str) -> ApiResult<Value> {
    let g = vm(ctx.c, &ctx.node(), ctx.vmid())?;
    let snap = g
        .conf
        .snapshots
        .get(name)
        .ok_or_else(|| ApiError::internal(format!("snapshot '{name}' does not exist")))?;
    let mut obj = Map::new();
    for (k, v) in &snap.conf {
        obj.insert(k.clone(), super::config::typed(&ctx.sim.schema, k, v));
    }
    obj.insert("snaptime".into(), json!(snap.snaptime));
    if !snap.description.is_empty() {
        obj.insert("description".into(), json!(snap.description));
    }
    if let Some(p) = &snap.parent {
        obj.insert("parent".into(), json!(p));
    }
    if let Some(state) = &snap.snapstate {
        obj.insert("snapstate".into(), json!(state));
    }
    obj.insert("digest".into(), json!(super::config::digest(&g.conf)));
    Ok(Value::Object(obj))
}
