//! Snapshots (`/nodes/{node}/qemu/{vmid}/snapshot…`): list, create, rollback, delete,
//! as pve-guest-common's AbstractConfig does them: the config file gets a `[name]`
//! section with the config of that moment, the current config's `parent` points at
//! the newest one, and the `snapshot`/`rollback`/`snapshot-delete` lock is held while
//! the task runs.

use super::{check_lock, disks, vm, vm_mut};
use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::state::{Cluster, Snapshot};
use crate::tasks;
use crate::util::now_secs;
use serde_json::{json, Map, Value};

/// Keys of a snapshot section that are not config keys of the VM.
const SNAPSHOT_ONLY: &[&str] = &[
    "snaptime",
    "vmstate",
    "snapstate",
    "parent",
    "description",
    "runningmachine",
    "runningcpu",
];

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
fn snapshot_capable(c: &Cluster, conf: &std::collections::BTreeMap<String, String>) -> bool {
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
    let node2 = node.clone();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmsnapshot",
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            let g = vm(c, &node2, vmid).map_err(|e| e.message)?;
            check_lock(g, false)?;
            if g.conf.snapshots.contains_key(&name) {
                return Err(format!("snapshot name '{name}' already used"));
            }
            if !snapshot_capable(c, &g.conf.current) {
                return Err("snapshot feature is not available".into());
            }
            let running = g.running;
            t.check_fault()?;
            let g = vm_mut(c, &node2, vmid).map_err(|e| e.message)?;
            let mut conf = g.conf.current.clone();
            conf.remove("lock");
            let parent = conf.remove("parent");
            g.conf.snapshots.insert(
                name.clone(),
                Snapshot {
                    description,
                    snaptime: now_secs(),
                    vmstate: vmstate && running,
                    parent,
                    conf,
                },
            );
            g.conf.current.insert("parent".into(), name.clone());
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

pub fn rollback(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let name = ctx.get("snapname").unwrap_or("").to_string();
    vm(ctx.c, &node, vmid)?;
    if ctx.flag("start") {
        ctx.require(&format!("/vms/{vmid}"), "VM.PowerMgmt")?;
    }
    let start = ctx.flag("start");
    let (sim, who, node2) = (ctx.sim.clone(), ctx.who.clone(), node.clone());
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmrollback",
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            let g = vm(c, &node2, vmid).map_err(|e| e.message)?;
            let Some(snap) = g.conf.snapshots.get(&name).cloned() else {
                return Err(format!("snapshot '{name}' does not exist"));
            };
            check_lock(g, false)?;
            t.check_fault()?;
            if g.running {
                // Without saved RAM the VM is stopped first.
                super::power::stop_now(c, vmid);
            }
            let g = vm_mut(c, &node2, vmid).map_err(|e| e.message)?;
            let mut conf: std::collections::BTreeMap<String, String> = snap
                .conf
                .into_iter()
                .filter(|(k, _)| !SNAPSHOT_ONLY.contains(&k.as_str()))
                .collect();
            conf.insert("parent".into(), name.clone());
            g.conf.current = conf;
            g.conf.pending.clear();
            g.conf.delete.clear();
            if start || snap.vmstate {
                super::power::spawn_start(&sim, c, &node2, vmid, &who, false);
            }
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

pub fn delete(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let name = ctx.get("snapname").unwrap_or("").to_string();
    vm(ctx.c, &node, vmid)?;
    let node2 = node.clone();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmdelsnapshot",
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            let g = vm(c, &node2, vmid).map_err(|e| e.message)?;
            let Some(snap) = g.conf.snapshots.get(&name).cloned() else {
                return Err(format!("snapshot '{name}' does not exist"));
            };
            check_lock(g, false)?;
            t.check_fault()?;
            let g = vm_mut(c, &node2, vmid).map_err(|e| e.message)?;
            g.conf.snapshots.remove(&name);
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
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

/// `GET config?snapshot=name`: that snapshot's values (+ digest).
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
    obj.insert("digest".into(), json!(super::config::digest(&g.conf)));
    Ok(Value::Object(obj))
}
