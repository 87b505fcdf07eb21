//! `POST /nodes/{node}/qemu`: the "exists?" check and the config file holding only
//! `lock: create` happen atomically under the cluster lock, before the UPID is
//! returned; disks and the real config are written by the `qmcreate` task.

use super::disks;
use super::update::{self, Planned};
use crate::api::Ctx;
use crate::auth::Identity;
use crate::error::{ApiError, ApiResult};
use crate::sim::SimInner;
use crate::state::{Cluster, Config, Guest, GuestKind};
use crate::tasks;
use crate::util::{now_ms, now_secs, uuid4};
use serde_json::Value;

pub const QEMU_VERSION: &str = "10.0.2";

pub fn create(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    // The node validates the parameters against its release's schema before the handler runs.
    super::versions::refuse_missing(ctx.c, &ctx.node(), &ctx.p)?;
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let pool = ctx.get("pool").map(str::to_string);
    if let Some(p) = &pool {
        crate::pools::check_exists(ctx.c, p)?;
    }
    check_create_access(ctx, vmid, pool.as_deref())?;
    if let Some(archive) = ctx.get("archive").map(str::to_string) {
        return super::backup::restore(ctx, &archive, pool);
    }
    if let Some(existing) = ctx.c.guests.get(&vmid) {
        let what = if existing.kind == GuestKind::Lxc { "CT" } else { "VM" };
        return Err(ApiError::internal(format!(
            "unable to create VM {vmid} - {what} {vmid} already exists on node '{}'",
            existing.node
        )));
    }
    let plan = update::plan(ctx, true)?;
    let start = ctx.flag("start");
    let ha_managed = ctx.flag("ha-managed");
    insert_create_placeholder(ctx.c, vmid, &node);
    let sim = ctx.sim.clone();
    let who = ctx.who.clone();
    let node2 = node.clone();
    let work: tasks::Work = Box::new(move |c, t| {
        if let Some(e) = t.lock_fault() {
            // lock_config_full timed out; the worker removes the config file it made.
            c.guests.remove(&vmid);
            return Err(e);
        }
        let before = c.volumes.len();
        let result = (|| -> Result<(), String> {
            // A fault that leaves volumes behind strikes once the disks are allocated.
            if t.leave.is_none() {
                t.check_fault()?;
            }
            let values = planned_values(c, &mut t.log, &sim, &who, &node2, vmid, plan)?;
            t.check_fault()?;
            if let Some((_, tags)) = values.iter().find(|(k, _)| k == "tags") {
                // Raised as a PVE::Exception inside the worker: its text carries the code.
                super::perms::check_tags(c, &who, vmid, None, Some(tags))
                    .map_err(|e| format!("{} {}", e.status, e.message))?;
            }
            write_new_config(c, vmid, values)?;
            if let Some(p) = &pool {
                crate::pools::add_vm(c, p, vmid);
            }
            Ok(())
        })();
        if let Err(e) = result {
            // Free what this task allocated and remove the config file (unless a fault
            // keeps them).
            let mut placeholder = Config::default();
            placeholder.current.insert("lock".into(), "create".into());
            super::lifecycle::leave_after_failure(c, t, before, vmid, Some(placeholder));
            return Err(format!("unable to create VM {vmid} - {e}"));
        }
        if ha_managed {
            t.log.push("Add as HA resource".into());
            super::ha::add(c, vmid, if start { "started" } else { "stopped" });
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
        "qmcreate",
        &vmid.to_string(),
        ctx.who,
        vec![],
        work,
    )))
}

/// The privileges a create needs beyond its config's: storage space, HA, the start,
/// VM.Allocate (all checked before a restore branches off).
fn check_create_access(ctx: &Ctx<'_>, vmid: u32, pool: Option<&str>) -> ApiResult<()> {
    if let Some(sid) = ctx.get("storage") {
        ctx.require(&format!("/storage/{sid}"), "Datastore.AllocateSpace")?;
    }
    if ctx.flag("ha-managed") {
        ctx.require("/", "Sys.Console")?;
    }
    // The start after create runs inside the task, so its privilege is checked here.
    if ctx.flag("start") {
        super::perms::check_vm_perm(ctx.c, ctx.who, vmid, pool, &["VM.PowerMgmt"], false)?;
    }
    // VM.Allocate on the VM, or on the pool it is created in.
    let on_pool = pool.is_some_and(|p| crate::auth::has(ctx.c, ctx.who, &format!("/pool/{p}"), "VM.Allocate"));
    if !on_pool {
        ctx.require(&format!("/vms/{vmid}"), "VM.Allocate")?;
    }
    Ok(())
}

/// The config file with only the lock: from here on the vmid is taken.
fn insert_create_placeholder(c: &mut Cluster, vmid: u32, node: &str) {
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

/// The planned config values, with the planned disks allocated (the task's first work).
fn planned_values(
    c: &mut Cluster,
    log: &mut Vec<String>,
    sim: &SimInner,
    who: &Identity,
    node: &str,
    vmid: u32,
    plan: update::UpdatePlan,
) -> Result<Vec<(String, String)>, String> {
    let mut values = Vec::new();
    let mut dc = super::normalize::DiskCtx {
        schema: &sim.schema,
        who,
        node,
        vmid,
        default_storage: None,
        log,
    };
    for (k, p) in plan.sets {
        let v = match p {
            Planned::Value(v) => v,
            Planned::Disk(d) => super::normalize::execute_disk(c, &mut dc, &k, d)?,
        };
        values.push((k, v));
    }
    Ok(values)
}

/// The new VM's config replaces the placeholder, with what PVE adds at create: `boot`,
/// `smbios1`, `vmgenid`, `meta`.
fn write_new_config(c: &mut Cluster, vmid: u32, values: Vec<(String, String)>) -> Result<(), String> {
    let g = c.guests.get_mut(&vmid).ok_or_else(|| format!("VM {vmid} vanished"))?;
    let cur = &mut g.conf.current;
    cur.clear();
    for (k, v) in values {
        cur.insert(k, v);
    }
    if !cur.contains_key("boot") {
        if let Some(order) = default_boot_order(cur) {
            cur.insert("boot".into(), order);
        }
    }
    cur.entry("smbios1".into())
        .or_insert_with(|| format!("uuid={}", uuid4()));
    match cur.get("vmgenid").map(String::as_str) {
        Some("0") => {
            cur.remove("vmgenid");
        }
        None | Some("1") => {
            cur.insert("vmgenid".into(), uuid4());
        }
        _ => {}
    }
    cur.insert(
        "meta".into(),
        format!("creation-qemu={QEMU_VERSION},ctime={}", now_secs()),
    );
    Ok(())
}

/// `order=<first disk>;<first cdrom>;<first net>` as PVE sets it at create.
pub fn default_boot_order(conf: &std::collections::BTreeMap<String, String>) -> Option<String> {
    let order = disks::boot_search_order();
    let is_cd = |k: &String| conf.get(k).is_some_and(|v| disks::Drive::parse_stored(v).is_cdrom());
    let disk = order.iter().find(|k| conf.contains_key(*k) && !is_cd(k));
    // A cloud-init drive (media=cdrom) counts as a cdrom here: qemu-server's
    // resolve_first_disk calls drive_is_cdrom without its exclude_cloudinit flag.
    let cd = order.iter().find(|k| conf.contains_key(*k) && is_cd(k));
    let net = (0..32).map(|i| format!("net{i}")).find(|k| conf.contains_key(k));
    let devs: Vec<String> = [disk.cloned(), cd.cloned(), net].into_iter().flatten().collect();
    (!devs.is_empty()).then(|| format!("order={}", devs.join(";")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_order_at_create() {
        let mut c = std::collections::BTreeMap::new();
        c.insert("scsi0".to_string(), "local-lvm:vm-1-disk-0,size=1G".to_string());
        c.insert("ide2".to_string(), "none,media=cdrom".to_string());
        c.insert("net0".to_string(), "virtio=BC:24:11:00:00:01".to_string());
        c.insert("ide0".to_string(), "local-lvm:vm-1-disk-1,size=1G".to_string());
        assert_eq!(default_boot_order(&c).unwrap(), "order=ide0;ide2;net0");
        assert!(default_boot_order(&Default::default()).is_none());
    }

    #[test]
    fn a_cloud_init_drive_is_the_first_cdrom_when_it_comes_first() {
        let mut c = std::collections::BTreeMap::new();
        c.insert("scsi0".to_string(), "local-lvm:vm-1-disk-0,size=1G".to_string());
        c.insert("ide0".to_string(), "local-lvm:vm-1-cloudinit,media=cdrom".to_string());
        c.insert(
            "ide2".to_string(),
            "isos:iso/virtio-win.iso,media=cdrom,size=708M".to_string(),
        );
        assert_eq!(default_boot_order(&c).unwrap(), "order=scsi0;ide0");
    }
}
