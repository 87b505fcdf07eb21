//! Destroy, clone, template, migrate.

use super::disks::{self, Drive};
use super::normalize;
use super::{check_lock, is_template, vm};
use crate::api::Ctx;
use crate::control::Leave;
use crate::error::{ApiError, ApiResult};
use crate::state::{Cluster, Config, Guest, GuestKind};
use crate::storage;
use crate::tasks;
use crate::util::{now_ms, uuid4};
use serde_json::Value;

/// Volumes a VM owns: disks (not cdroms), unused entries, pending disks.
fn owned_volumes(g: &Guest) -> Vec<String> {
    let mut v: Vec<String> = g
        .conf
        .current
        .iter()
        .chain(g.conf.pending.iter())
        .filter(|(k, _)| disks::is_disk_key(k) || disks::is_unused_key(k))
        .filter_map(|(_, val)| {
            let d = Drive::parse_stored(val);
            let owned = d.volid().and_then(|id| storage::owner_of(id.split(':').nth(1)?)) == Some(g.vmid);
            (owned && (!d.is_cdrom() || d.file.contains("-cloudinit"))).then(|| d.file.clone())
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// qemu-server's `destroy_vm` for a VM with an HA resource entry and no `purge`.
fn ha_refusal(vmid: u32) -> String {
    format!("unable to remove VM {vmid} - used in HA resources and purge parameter not set.")
}

/// `DELETE /nodes/{node}/qemu/{vmid}` (qemu-server `destroy_vm`): `$early_checks`
/// (protection, an HA resource entry without `purge`, running) before the task and
/// again in it.
pub fn destroy(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let g = vm(ctx.c, &node, vmid)?;
    if g.conf.current.get("protection").is_some_and(|p| p == "1") {
        return Err(ApiError::internal(format!(
            "can't remove VM {vmid} - protection mode enabled"
        )));
    }
    let purge = ctx.flag("purge");
    // `service_is_configured`: any HA resource entry, `ignored` or not, and whether or
    // not the cluster is disarmed (not `vm_is_ha_managed`).
    if ctx.c.ha_resource(vmid).is_some() && !purge {
        return Err(ApiError::internal(ha_refusal(vmid)));
    }
    if g.running {
        return Err(ApiError::internal(format!("VM {vmid} is running - destroy failed")));
    }
    let skiplock = ctx.flag("skiplock");
    let unreferenced = ctx.flag("destroy-unreferenced-disks");
    let node2 = node.clone();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmdestroy",
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            let g = vm(c, &node2, vmid).map_err(|e| e.message)?;
            // `$early_checks` again under the config lock: the config may have changed.
            if c.ha_resource(vmid).is_some() && !purge {
                return Err(ha_refusal(vmid));
            }
            if g.running {
                return Err(format!("VM {vmid} is running - destroy failed"));
            }
            check_lock(g, skiplock)?;
            let owned = owned_volumes(g);
            if is_template(g) {
                for volid in &owned {
                    let base = volid.split(':').nth(1).unwrap_or("");
                    let used = c.guests.values().filter(|o| o.vmid != vmid).any(|o| {
                        o.conf.current.values().any(|v| {
                            v.split(',').next().is_some_and(|f| {
                                f.contains(&format!("{base}/")) && f.starts_with(volid.split(':').next().unwrap_or(""))
                            })
                        })
                    });
                    if used {
                        return Err(format!("base volume '{volid}' is still in use by linked cloned"));
                    }
                }
            }
            t.check_fault()?;
            for volid in &owned {
                c.remove_volume(volid, &node2);
            }
            if unreferenced {
                c.volumes.retain(|v| {
                    !(v.vmid == Some(vmid) && (v.node.is_none() || v.node.as_deref() == Some(node2.as_str())))
                });
            }
            c.guests.remove(&vmid);
            // remove_vm_access: ACLs and pool membership go with the VM.
            c.acls.retain(|a| a.path != format!("/vms/{vmid}"));
            c.group_acls.retain(|a| a.path != format!("/vms/{vmid}"));
            crate::pools::remove_vm(c, vmid);
            if purge {
                t.log.push(format!("purging VM {vmid} from related configurations.."));
                if c.ha_resource(vmid).is_some() {
                    c.ha_resources.retain(|r| r.vmid() != Some(vmid));
                    t.log
                        .push(format!("NOTE: removed VM {vmid} from HA resource configuration."));
                }
            }
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

pub fn clone(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let newid: u32 = ctx.get("newid").and_then(|v| v.parse().ok()).unwrap_or(0);
    let src = clone_source(ctx, &node, vmid)?;
    let pool = ctx.get("pool").map(str::to_string);
    if let Some(p) = &pool {
        crate::pools::check_exists(ctx.c, p)?;
    }
    if ctx.c.guests.contains_key(&newid) {
        return Err(ApiError::internal(format!(
            "unable to create VM {newid}: config file already exists"
        )));
    }
    let template = is_template(&src);
    let full = ctx.get("full").map(|f| f == "1").unwrap_or(!template);
    let target_storage = ctx.get("storage").map(str::to_string);
    let format = ctx.get("format").map(str::to_string);
    if !full && target_storage.is_some() {
        return Err(ApiError::internal("parameter 'storage' not allowed for linked clones"));
    }
    if !full && format.is_some() {
        return Err(ApiError::internal("parameter 'format' not allowed for linked clones"));
    }
    let target = ctx.get("target").unwrap_or(&node).to_string();
    if ctx.c.node(&target).is_none() {
        return Err(ApiError::internal(format!("no such cluster node '{target}'")));
    }
    check_clone_to_node(ctx, &src, &node, &target, target_storage.as_deref())?;
    check_clone_storage_access(ctx, &src, target_storage.as_deref())?;
    check_clone_device_access(ctx, &src)?;
    insert_clone_placeholder(ctx.c, vmid, newid, &target);
    let name = ctx.get("name").map(str::to_string);
    let description = ctx.get("description").map(str::to_string);
    let node2 = node.clone();
    let schema_sim = ctx.sim.clone();
    // A running clone already shows its first copy line (clients quote it on timeouts).
    let first = first_clone_line(&src, full);
    let first_log: Vec<String> = first.iter().cloned().collect();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmclone",
        &vmid.to_string(),
        ctx.who,
        first_log,
        Box::new(move |c, t| {
            if let Some(e) = t.lock_fault() {
                // PVE writes the clone's config file only once it holds the locks.
                c.guests.remove(&newid);
                return Err(e);
            }
            let before = c.volumes.len();
            let dest = CloneDest {
                newid,
                target: &target,
                full,
                storage: target_storage.as_deref(),
                format: format.as_deref(),
            };
            let res = clone_work(c, &schema_sim.schema, &src, &dest, name, description, t);
            if let Some(i) = first.as_ref().and_then(|line| t.log.iter().position(|l| l == line)) {
                t.log.remove(i); // logged at spawn already
            }
            if let Err(e) = res {
                leave_after_failure(c, t, before, newid, None);
                let _ = node2;
                return Err(format!("clone failed: {e}"));
            }
            if let Some(p) = &pool {
                crate::pools::add_vm(c, p, newid);
            }
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

/// The clone's source: the VM, unlocked, with the config of `snapname` when one is given
/// (the snapshot's section: its config and its own description).
fn clone_source(ctx: &Ctx<'_>, node: &str, vmid: u32) -> ApiResult<Guest> {
    let mut src = vm(ctx.c, node, vmid)?.clone();
    check_lock(&src, false).map_err(ApiError::internal)?;
    if let Some(s) = ctx.get("snapname") {
        // A clone from a snapshot copies the config of that moment.
        let snap = src
            .conf
            .snapshots
            .get(s)
            .ok_or_else(|| ApiError::internal(format!("snapshot '{s}' does not exist")))?;
        src.conf.current = snap.conf.clone();
        // qemu-server `clone_vm` copies the section's keys, and a snapshot's section holds
        // its own description (`__snapshot_prepare`: the comment), not the VM's notes.
        if !snap.description.is_empty() {
            src.conf.current.insert("description".into(), snap.description.clone());
        }
    }
    Ok(src)
}

/// A clone to another node: its target storage must be there and shared, and the
/// source's local disks need a shared target storage.
fn check_clone_to_node(
    ctx: &Ctx<'_>,
    src: &Guest,
    node: &str,
    target: &str,
    target_storage: Option<&str>,
) -> ApiResult<()> {
    if let Some(sid) = target_storage.filter(|_| target != node) {
        // qemu-server clone_vm: a clone to another node needs the storage there, shared.
        let Some(sd) = ctx.c.storage(sid) else {
            return Err(ApiError::internal(format!("storage '{sid}' does not exist")));
        };
        if !sd.on_node(target) {
            return Err(ApiError::internal(format!(
                "storage '{sid}' is not available on node '{target}'"
            )));
        }
        if !sd.shared {
            return Err(ApiError::internal(format!("can't clone to non-shared storage '{sid}'")));
        }
    }
    if target != node {
        let local = src
            .conf
            .current
            .iter()
            .filter(|(k, _)| disks::is_disk_key(k))
            .any(|(_, v)| {
                let d = Drive::parse_stored(v);
                d.volid()
                    .and_then(|id| ctx.c.storage(id.split(':').next().unwrap_or("")))
                    .is_some_and(|s| !s.shared)
            });
        if local && target_storage.is_none_or(|s| ctx.c.storage(s).is_some_and(|sd| !sd.shared)) {
            return Err(ApiError::internal(format!(
                "can't clone VM to node '{target}' (VM uses local storage)"
            )));
        }
    }
    Ok(())
}

/// Space on the target storage (it must hold images), or else on each source disk's storage.
fn check_clone_storage_access(ctx: &Ctx<'_>, src: &Guest, target_storage: Option<&str>) -> ApiResult<()> {
    let disk_keys: Vec<(String, Drive)> = src
        .conf
        .current
        .iter()
        .filter(|(k, _)| disks::is_disk_key(k))
        .map(|(k, v)| (k.clone(), Drive::parse_stored(v)))
        .filter(|(_, d)| d.volid().is_some() && !d.is_cdrom())
        .collect();
    if let Some(sid) = target_storage {
        let Some(sd) = ctx.c.storage(sid) else {
            return Err(ApiError::internal(format!("storage '{sid}' does not exist")));
        };
        if !sd.has_content("images") {
            return Err(ApiError::internal(format!(
                "storage '{sid}' does not support vm images"
            )));
        }
        ctx.require(&format!("/storage/{sid}"), "Datastore.AllocateSpace")?;
    } else {
        for (_, d) in &disk_keys {
            let sid = d.file.split(':').next().unwrap_or("");
            ctx.require(&format!("/storage/{sid}"), "Datastore.AllocateSpace")?;
        }
    }
    Ok(())
}

/// The source's host devices and bridges, checked for the copy as for a new config.
fn check_clone_device_access(ctx: &Ctx<'_>, src: &Guest) -> ApiResult<()> {
    // check_mapping_access: raw host devices of the source are root-only in the copy too.
    if !ctx.who.is_root() {
        for (k, v) in &src.conf.current {
            let host = Drive::parse_stored(v)
                .opts
                .get("host")
                .cloned()
                .or_else(|| (!v.contains('=')).then(|| v.clone()));
            if k.starts_with("hostpci") && !v.contains("mapping=") {
                return Err(ApiError::internal(format!(
                    "only root can set '{k}' config for non-mapped devices"
                )));
            }
            if k.starts_with("usb") && host.is_some_and(|h| !h.eq_ignore_ascii_case("spice")) && !v.contains("mapping=")
            {
                return Err(ApiError::internal(format!(
                    "only root can set '{k}' config for real devices"
                )));
            }
        }
    }
    super::perms::check_bridges(
        ctx.c,
        ctx.who,
        src.conf.current.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    )
}

/// The API call's side effect before the task: the new VM's `lock: clone` config.
fn insert_clone_placeholder(c: &mut Cluster, vmid: u32, newid: u32, target: &str) {
    let mut conf = Config::default();
    conf.current.insert("lock".into(), "clone".into());
    // The same guest system, so the same agent.
    let agent = c.guests.get(&vmid).and_then(|g| g.agent.clone());
    c.guests.insert(
        newid,
        Guest {
            vmid: newid,
            node: target.to_string(),
            kind: GuestKind::Qemu,
            conf,
            running: false,
            paused: false,
            started_ms: None,
            created_ms: now_ms(),
            power_change: None,
            agent,
        },
    );
}

/// The first line of a clone task's log: clone_disk's message for the first drive in
/// sorted key order (cloud-init and TPM state are always copied in full).
fn first_clone_line(src: &Guest, full: bool) -> Option<String> {
    src.conf
        .current
        .iter()
        .filter(|(k, _)| disks::is_disk_key(k))
        .find_map(|(k, v)| {
            let d = Drive::parse_stored(v);
            let cloud_init = d.file.contains("-cloudinit");
            if d.volid().is_none() || (d.is_cdrom() && !cloud_init) {
                return None;
            }
            let kind = if full || cloud_init || k == "tpmstate0" {
                "full"
            } else {
                "linked"
            };
            Some(format!("create {kind} clone of drive {k} ({})", d.file))
        })
}

/// Where and how a clone's disks go: the new VM, its node and the clone parameters.
struct CloneDest<'a> {
    newid: u32,
    target: &'a str,
    full: bool,
    storage: Option<&'a str>,
    format: Option<&'a str>,
}

fn clone_work(
    c: &mut Cluster,
    schema: &crate::schema::Schema,
    src: &Guest,
    dest: &CloneDest<'_>,
    name: Option<String>,
    description: Option<String>,
    t: &mut tasks::TaskCtx,
) -> Result<(), String> {
    let newid = dest.newid;
    let mut new = std::collections::BTreeMap::new();
    for (k, v) in &src.conf.current {
        if disks::is_unused_key(k)
            || matches!(
                k.as_str(),
                "template" | "lock" | "parent" | "snaptime" | "vmstate" | "runningmachine" | "runningcpu" | "meta"
            )
        {
            continue;
        }
        let value = clone_entry(c, schema, src, dest, t, k, v)?;
        new.insert(k.clone(), value);
    }
    renew_clone_ids(c, schema, &mut new)?;
    let src_name = src
        .conf
        .current
        .get("name")
        .cloned()
        .unwrap_or_else(|| src.vmid.to_string());
    new.insert("name".into(), name.unwrap_or_else(|| format!("Copy-of-VM-{src_name}")));
    // `if ($param->{description})`: Perl's truth, so "" and "0" keep the source's.
    if let Some(d) = description.filter(|d| !d.is_empty() && d != "0") {
        new.insert("description".into(), d);
    }
    // Written with its lock after the disks (qemu-server writes it after each disk), then
    // written again without: a failure in between leaves it locked, if not cleaned up.
    new.insert("lock".into(), "clone".into());
    c.guests.get_mut(&newid).ok_or("new VM vanished")?.conf.current = new;
    t.check_fault()?;
    c.guests
        .get_mut(&newid)
        .ok_or("new VM vanished")?
        .conf
        .current
        .remove("lock");
    Ok(())
}

/// One source config entry as the clone has it: a disk copied (full or linked) onto a
/// new volume, anything else as it is.
fn clone_entry(
    c: &mut Cluster,
    schema: &crate::schema::Schema,
    src: &Guest,
    dest: &CloneDest<'_>,
    t: &mut tasks::TaskCtx,
    k: &str,
    v: &str,
) -> Result<String, String> {
    let newid = dest.newid;
    let mut d = Drive::parse_stored(v);
    if !(disks::is_disk_key(k) && d.volid().is_some()) {
        return Ok(v.to_string());
    }
    let volid = d.file.clone();
    let (sid, _) = volid.split_once(':').unwrap_or(("", ""));
    let size = c
        .find_volume(&volid, &src.node)
        .map(|x| x.size)
        .or(d.size())
        .unwrap_or(0);
    if volid.contains("-cloudinit") {
        // qemu-server clone_vm/clone_disk: a cloud-init drive is always copied in
        // full (and logged like one), onto the target storage when one is given.
        t.log.push(format!("create full clone of drive {k} ({volid})"));
        let dest_sid = dest.storage.unwrap_or(sid);
        let sd = c
            .storage(dest_sid)
            .cloned()
            .ok_or_else(|| format!("storage '{dest_sid}' does not exist"))?;
        let vn = if sd.is_file() {
            format!("{newid}/vm-{newid}-cloudinit.qcow2")
        } else {
            format!("vm-{newid}-cloudinit")
        };
        d.file = storage::alloc_named(c, dest_sid, dest.target, &vn, size, newid);
        return Ok(d.print(None));
    }
    if d.is_cdrom() {
        return Ok(v.to_string());
    }
    // TPM state is never linked: clone_vm copies it in full like cloud-init.
    d.file = if dest.full || k == "tpmstate0" {
        full_clone_volume(c, dest, t, k, &volid, size)?
    } else {
        linked_clone_volume(c, src, dest, t, k, &volid, size)?
    };
    d.opts.insert("size".into(), storage::format_size(size));
    Ok(d.print(disks::key_format(schema, k).as_ref()))
}

/// A full copy of `volid` onto the target (or its own) storage, in the asked format or
/// the source's when the storage has it.
fn full_clone_volume(
    c: &mut Cluster,
    dest: &CloneDest<'_>,
    t: &mut tasks::TaskCtx,
    k: &str,
    volid: &str,
    size: u64,
) -> Result<String, String> {
    let (sid, volname) = volid.split_once(':').unwrap_or(("", ""));
    t.log.push(format!("create full clone of drive {k} ({volid})"));
    let dest_sid = dest.storage.unwrap_or(sid);
    let dsd = c
        .storage(dest_sid)
        .cloned()
        .ok_or_else(|| format!("storage '{dest_sid}' does not exist"))?;
    let src_fmt = storage::format_of(volname);
    let fmt = dest.format.map(str::to_string).unwrap_or_else(|| {
        if dsd.formats().contains(&src_fmt) {
            src_fmt
        } else {
            dsd.default_format()
        }
    });
    let file = storage::alloc(c, dest_sid, dest.target, dest.newid, size, Some(&fmt))?;
    t.log.push(format!(
        "transferred {} of {} (100.00%)",
        storage::format_size(size),
        storage::format_size(size)
    ));
    Ok(file)
}

/// A linked clone of the base image `volid`, on its storage (clone_image).
fn linked_clone_volume(
    c: &mut Cluster,
    src: &Guest,
    dest: &CloneDest<'_>,
    t: &mut tasks::TaskCtx,
    k: &str,
    volid: &str,
    size: u64,
) -> Result<String, String> {
    let (sid, volname) = volid.split_once(':').unwrap_or(("", ""));
    let newid = dest.newid;
    t.log.push(format!("create linked clone of drive {k} ({volid})"));
    let sd = c.storage(sid).cloned().ok_or("storage vanished")?;
    let base = volname.rsplit('/').next().unwrap_or(volname);
    if !base.starts_with("base-") {
        return Err("clone_image only works on base images".into());
    }
    let n = storage::free_disk_index(c, &sd, dest.target, newid);
    let fmt = storage::format_of(volname);
    let vn = if sd.is_file() {
        format!("{}/{}/{newid}/vm-{newid}-disk-{n}.{fmt}", src.vmid, base)
    } else if sd.kind == "lvmthin" {
        format!("vm-{newid}-disk-{n}")
    } else {
        format!("{base}/vm-{newid}-disk-{n}")
    };
    Ok(storage::alloc_named(c, sid, dest.target, &vn, size, newid))
}

/// What a clone may not share with its source: MACs, the SMBIOS uuid, the vmgenid.
fn renew_clone_ids(
    c: &Cluster,
    schema: &crate::schema::Schema,
    new: &mut std::collections::BTreeMap<String, String>,
) -> Result<(), String> {
    for (k, v) in new.clone() {
        if disks::is_net_key(&k) {
            new.insert(
                k.clone(),
                normalize::net(schema, c, &k, &v, true).map_err(|e| e.message)?,
            );
        }
    }
    if let Some(s) = new.get("smbios1").cloned() {
        let rest: Vec<&str> = s.split(',').filter(|p| !p.starts_with("uuid=")).collect();
        let mut parts = vec![format!("uuid={}", uuid4())];
        parts.extend(rest.iter().map(|s| s.to_string()));
        new.insert("smbios1".into(), parts.join(","));
    }
    if new.contains_key("vmgenid") {
        new.insert("vmgenid".into(), uuid4());
    }
    Ok(())
}

/// What a failed create or clone leaves of the new VM `vmid` (volumes from index
/// `before` on are the ones it allocated): by default nothing, as PVE's workers free the
/// volumes and remove the config; with a `leave` fault, what stays when that cleanup did
/// not get to run. `placeholder` is the config a create keeps (its `lock: create` file).
pub(super) fn leave_after_failure(
    c: &mut Cluster,
    t: &mut tasks::TaskCtx,
    before: usize,
    vmid: u32,
    placeholder: Option<Config>,
) {
    match t.leave {
        None => {
            c.volumes.truncate(before);
            c.guests.remove(&vmid);
        }
        Some(Leave::Volumes) => {
            // vdisk_free takes the storage's lock as vdisk_alloc does; the worker warns
            // with its error per volume and goes on.
            for v in c.volumes[before.min(c.volumes.len())..].iter().cloned() {
                let shared = c.storage(&v.storage).is_some_and(|s| s.shared);
                t.log.push(if shared {
                    format!("cfs-lock 'storage-{}' error: got lock request timeout", v.storage)
                } else {
                    format!(
                        "can't lock file '/var/lock/pve-manager/pve-storage-{}' - got timeout",
                        v.storage
                    )
                });
            }
            c.guests.remove(&vmid);
        }
        Some(Leave::Config) => {
            if let (Some(conf), Some(g)) = (placeholder, c.guests.get_mut(&vmid)) {
                g.conf = conf;
            }
        }
    }
}

pub fn template(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let g = vm(ctx.c, &node, vmid)?;
    check_lock(g, false).map_err(ApiError::internal)?;
    if !g.conf.snapshots.is_empty() {
        return Err(ApiError::internal(
            "unable to create template, because VM contains snapshots",
        ));
    }
    if is_template(g) {
        return Err(ApiError::internal("you can't convert a template to a template"));
    }
    if g.running {
        return Err(ApiError::internal(
            "you can't convert a VM to template if VM is running",
        ));
    }
    let only = ctx.get("disk").map(str::to_string);
    let node2 = node.clone();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmtemplate",
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            t.check_fault()?;
            let g = vm(c, &node2, vmid).map_err(|e| e.message)?.clone();
            let mut conf = g.conf.current.clone();
            for (k, v) in &g.conf.current {
                if !disks::is_disk_key(k) || only.as_ref().is_some_and(|o| o != k) {
                    continue;
                }
                let mut d = Drive::parse_stored(v);
                if d.is_cdrom() || d.volid().is_none() {
                    continue;
                }
                let volid = d.file.clone();
                let newvolid = volid.replace(&format!("vm-{vmid}-disk-"), &format!("base-{vmid}-disk-"));
                if newvolid != volid {
                    let (sid, newname) = newvolid.split_once(':').unwrap_or(("", ""));
                    let vn = c.vol_node(sid, &node2);
                    if let Some(vol) = c.volumes.iter_mut().find(|x| x.volid() == volid && x.node == vn) {
                        vol.volname = newname.to_string();
                    }
                    d.file = newvolid;
                    conf.insert(k.clone(), d.print(None));
                }
            }
            conf.insert("template".into(), "1".into());
            c.guests.get_mut(&vmid).ok_or("vanished")?.conf.current = conf;
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

pub fn migrate(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let target = ctx.get("target").unwrap_or("").to_string();
    let g = vm(ctx.c, &node, vmid)?;
    if target == node {
        return Err(ApiError::param("target", "target is local node."));
    }
    if ctx.c.node(&target).is_none() {
        return Err(ApiError::internal(format!("no such cluster node '{target}'")));
    }
    if !ctx.sim.node_reachable(ctx.c, &target) {
        return Err(ApiError::internal(format!("target node '{target}' is not online")));
    }
    check_lock(g, false).map_err(ApiError::internal)?;
    let running = g.running;
    if running && !ctx.flag("online") {
        return Err(ApiError::internal("can't migrate running VM without --online"));
    }
    let storage_map = match ctx.get("targetstorage") {
        Some(spec) => Some(target_storage_map(ctx, spec, &target)?),
        None => None,
    };
    let with_local = ctx.flag("with-local-disks");
    // An HA-managed VM is handed to the HA manager (qemu-server's migrate_vm).
    if super::ha::managed(ctx.c, vmid) {
        return super::ha::migrate(ctx, &target);
    }
    let sim = ctx.sim.clone();
    let upid = spawn_migration(
        &sim,
        ctx.c,
        &node,
        vmid,
        &target,
        ctx.who,
        running,
        storage_map,
        with_local,
    );
    Ok(Value::String(upid))
}

/// Locks the VM and starts its `qmigrate` task on `node` (a migration the API was asked
/// for, or one the HA manager runs).
#[allow(clippy::too_many_arguments)]
pub(super) fn spawn_migration(
    sim: &std::sync::Arc<crate::sim::SimInner>,
    c: &mut Cluster,
    node: &str,
    vmid: u32,
    target: &str,
    who: &crate::auth::Identity,
    running: bool,
    storage_map: Option<StorageMap>,
    with_local: bool,
) -> String {
    let (node2, target) = (node.to_string(), target.to_string());
    if let Some(g) = c.guests.get_mut(&vmid) {
        g.conf.current.insert("lock".into(), "migrate".into());
    }
    tasks::spawn(
        sim,
        c,
        node,
        "qmigrate",
        &vmid.to_string(),
        who,
        vec![format!("starting migration of VM {vmid} to node '{target}'")],
        Box::new(move |c, t| {
            let unlock = |c: &mut Cluster| {
                if let Some(g) = c.guests.get_mut(&vmid) {
                    g.conf.current.remove("lock");
                }
            };
            let g = c.guests.get(&vmid).cloned().ok_or("vanished")?;
            let local = local_volumes(c, &g);
            for (_, d) in &local {
                t.log
                    .push(format!("found local disk '{}' (in current VM config)", d.file));
            }
            // Offline, local disks are copied to the target; a live migration copies them
            // only when asked to.
            if running && !local.is_empty() && !with_local {
                unlock(c);
                t.log.push(format!("can't migrate local disk '{}': can't live migrate attached local disks without with-local-disks option", local[0].1.file));
                return Err("Problem found while scanning volumes - can't migrate VM - check log".into());
            }
            if let Err(e) = t.check_fault() {
                unlock(c);
                return Err(format!("migration aborted: {e}"));
            }
            let mut conf = g.conf.current.clone();
            for (key, d) in &local {
                let moved = migrate_local_disk(c, t, storage_map.as_ref(), &node2, &target, vmid, d)?;
                if let Some(moved) = moved {
                    conf.insert(key.clone(), moved);
                }
            }
            if let Some(g) = c.guests.get_mut(&vmid) {
                g.conf.current = conf;
                g.node = target.clone();
            }
            unlock(c);
            t.log
                .push("migration finished successfully (duration 00:00:01)".to_string());
            Ok(())
        }),
    )
}

/// Volumes on local storages, by config key (qemu-server scan_local_volumes): the ones
/// a migration must copy.
fn local_volumes(c: &Cluster, g: &Guest) -> Vec<(String, Drive)> {
    g.conf
        .current
        .iter()
        .filter(|(k, _)| disks::is_disk_key(k) || disks::is_unused_key(k))
        .filter_map(|(k, v)| {
            let d = Drive::parse_stored(v);
            let id = d.volid()?.to_string();
            (!d.is_cdrom() || id.contains("-cloudinit")).then_some(())?;
            c.storage(id.split(':').next()?)
                .is_some_and(|s| !s.shared)
                .then_some((k.clone(), d))
        })
        .collect()
}

/// One local disk copied to the target node: the same volume moved there, or (mapped by
/// `targetstorage`) a new one; `Some` is the drive's new config value.
fn migrate_local_disk(
    c: &mut Cluster,
    t: &mut tasks::TaskCtx,
    storage_map: Option<&StorageMap>,
    node: &str,
    target: &str,
    vmid: u32,
    d: &Drive,
) -> Result<Option<String>, String> {
    let id = d.file.clone();
    let (sid, name) = id.split_once(':').unwrap_or(("", ""));
    let dest = storage_map.and_then(|m| m.dest(sid)).unwrap_or(sid).to_string();
    let pos = c
        .volumes
        .iter()
        .position(|v| v.storage == sid && v.volname == name && v.node.as_deref() == Some(node));
    if dest == sid {
        if let Some(i) = pos {
            c.volumes[i].node = Some(target.to_string());
        }
        t.log.push(format!("copying local disk '{id}' to node '{target}'"));
        return Ok(None);
    }
    let size = pos.map(|i| c.volumes[i].size).unwrap_or(0);
    let dsd = c
        .storage(&dest)
        .cloned()
        .ok_or_else(|| format!("storage '{dest}' does not exist"))?;
    let src_fmt = storage::format_of(name);
    let fmt = if dsd.formats().contains(&src_fmt) {
        src_fmt
    } else {
        dsd.default_format()
    };
    let new_id = if id.contains("-cloudinit") {
        let vn = if dsd.is_file() {
            format!("{vmid}/vm-{vmid}-cloudinit.{fmt}")
        } else {
            format!("vm-{vmid}-cloudinit")
        };
        storage::alloc_named(c, &dest, target, &vn, size, vmid)
    } else {
        storage::alloc(c, &dest, target, vmid, size, Some(&fmt))?
    };
    if let Some(i) = pos {
        c.volumes.remove(i);
    }
    t.log.push(format!("mapped: {id} => {new_id}"));
    t.log
        .push(format!("copying local disk '{id}' to node '{target}' as '{new_id}'"));
    let mut moved = d.clone();
    moved.file = new_id;
    Ok(Some(moved.print(None)))
}

/// `targetstorage` (a storage-pair-list): one storage for all, `1` for each storage to
/// itself, or `source:target` pairs; every target checked as qemu-server's migrate_vm does.
pub(super) struct StorageMap {
    default: Option<String>,
    pairs: Vec<(String, String)>,
}

impl StorageMap {
    fn dest<'a>(&'a self, source: &str) -> Option<&'a str> {
        self.pairs
            .iter()
            .find(|(s, _)| s == source)
            .map(|(_, d)| d.as_str())
            .or(self.default.as_deref())
    }
}

fn target_storage_map(ctx: &Ctx<'_>, spec: &str, target: &str) -> ApiResult<StorageMap> {
    let mut map = StorageMap {
        default: None,
        pairs: Vec::new(),
    };
    for part in spec.split([',', ';', ' ', '\0']).filter(|p| !p.is_empty()) {
        match part.split_once(':') {
            Some((s, d)) => map.pairs.push((s.to_string(), d.to_string())),
            None if part == "1" => {}
            None => map.default = Some(part.to_string()),
        }
    }
    let targets = map.pairs.iter().map(|(_, d)| d.clone()).chain(map.default.clone());
    for sid in targets {
        let Some(sd) = ctx.c.storage(&sid) else {
            return Err(ApiError::internal(format!("storage '{sid}' does not exist")));
        };
        if !sd.on_node(target) {
            return Err(ApiError::internal(format!(
                "storage '{sid}' is not available on node '{target}'"
            )));
        }
        ctx.require(&format!("/storage/{sid}"), "Datastore.AllocateSpace")?;
        if !sd.has_content("images") {
            return Err(ApiError::param(
                "targetstorage",
                format!("storage '{sid}' does not support vm images"),
            ));
        }
    }
    Ok(map)
}
