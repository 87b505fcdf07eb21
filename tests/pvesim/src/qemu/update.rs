//! Config changes (`POST`/`PUT config`, `unlink`): synchronous checks, then values go to
//! `[PENDING]` and are applied at once (stopped VM) or as far as hotplug allows.

use super::disks::{self, Drive};
use super::normalize::{self, DiskCtx, DiskPlan};
use super::perms;
use super::{config, vm, vm_mut};
use crate::api::Ctx;
use crate::auth::Identity;
use crate::error::{ApiError, ApiResult};
use crate::schema::{formats, validate, Schema};
use crate::state::{Cluster, Guest};
use crate::tasks;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Parameters that are not config keys.
pub const NON_CONFIG: &[&str] = &[
    "node",
    "vmid",
    "delete",
    "revert",
    "force",
    "digest",
    "skiplock",
    "background_delay",
    "import-working-storage",
    "storage",
    "pool",
    "start",
    "unique",
    "archive",
    "bwlimit",
    "live-restore",
    "ha-managed",
];

/// A value ready to be stored (or a disk still to be allocated).
pub enum Planned {
    Value(String),
    Disk(DiskPlan),
}

pub struct UpdatePlan {
    pub sets: Vec<(String, Planned)>,
    /// The values as the request gave them (for the checks made under the config lock).
    pub raw_sets: Vec<(String, String)>,
    pub deletes: Vec<String>,
    pub revert: Vec<String>,
    pub force: bool,
    pub log_line: String,
}

/// `cdrom` is an alias of `ide2` (value gets `media=cdrom`).
pub fn config_params(p: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, v) in p {
        if NON_CONFIG.contains(&k.as_str()) {
            continue;
        }
        if k == "cdrom" {
            let v = if v.contains("media=") {
                v.clone()
            } else {
                format!("{v},media=cdrom")
            };
            out.push(("ide2".to_string(), v));
        } else {
            out.push((k.clone(), v.clone()));
        }
    }
    out
}

/// `update VM 100: -cores 4 -delete net1 -name x`.
fn log_line(vmid: u32, p: &BTreeMap<String, String>) -> String {
    let mut parts = vec![];
    for (k, v) in p {
        if k == "node" || k == "vmid" {
            continue;
        }
        let v = if k == "cipassword" {
            "<hidden>".to_string()
        } else {
            v.clone()
        };
        parts.push(format!("-{k} {v}"));
    }
    format!("update VM {vmid}: {}", parts.join(" "))
}

/// Synchronous part shared by POST/PUT config: parameter checks, lock, digest,
/// normalisation of nets and planning of disks.
pub fn plan(ctx: &Ctx<'_>, for_create: bool) -> ApiResult<UpdatePlan> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let sets_raw = config_params(&ctx.p);
    let deletes = checked_deletes(ctx, &sets_raw)?;
    let revert = checked_reverts(ctx, &sets_raw, &deletes)?;
    if !for_create && sets_raw.is_empty() && deletes.is_empty() && revert.is_empty() {
        return Err(ApiError::internal("no options specified"));
    }
    check_config_perms(ctx, vmid, for_create, &sets_raw, &deletes)?;
    let view = config_view(ctx, &node, vmid, for_create, &sets_raw, &deletes)?;
    check_balloon(&sets_raw, &view)?;
    let sets = planned_sets(ctx, &node, vmid, &sets_raw, &view)?;
    Ok(UpdatePlan {
        sets,
        raw_sets: sets_raw,
        deletes,
        revert,
        force: ctx.flag("force"),
        log_line: log_line(vmid, &ctx.p),
    })
}

/// `delete`: known config keys (`cdrom` as `ide2`), none also set.
fn checked_deletes(ctx: &Ctx<'_>, sets_raw: &[(String, String)]) -> ApiResult<Vec<String>> {
    let props = ctx
        .sim
        .schema
        .method("/nodes/{node}/qemu", "POST")
        .and_then(|m| m["parameters"]["properties"].as_object())
        .cloned()
        .unwrap_or_default();
    let mut deletes = Vec::new();
    for k in ctx.get("delete").map(formats::split_list).unwrap_or_default() {
        let k = if k == "cdrom" { "ide2".to_string() } else { k };
        if validate::find_prop(&props, &k).is_none() || NON_CONFIG.contains(&k.as_str()) {
            return Err(ApiError::param("delete", format!("unknown option '{k}'")));
        }
        if sets_raw.iter().any(|(s, _)| s == &k) {
            return Err(ApiError::param(
                "delete",
                format!("you can't use '-{k}' and -delete {k}' at the same time"),
            ));
        }
        deletes.push(k);
    }
    Ok(deletes)
}

/// `revert`: keys neither set nor deleted.
fn checked_reverts(ctx: &Ctx<'_>, sets_raw: &[(String, String)], deletes: &[String]) -> ApiResult<Vec<String>> {
    let revert: Vec<String> = ctx.get("revert").map(formats::split_list).unwrap_or_default();
    for k in &revert {
        if sets_raw.iter().any(|(s, _)| s == k) {
            return Err(ApiError::param(
                "revert",
                format!("you can't use '-{k}' and '-revert {k}' at the same time"),
            ));
        }
        if deletes.contains(k) {
            return Err(ApiError::param(
                "revert",
                format!("you can't use '-delete {k}' and '-revert {k}' at the same time"),
            ));
        }
    }
    Ok(revert)
}

/// The per-key privilege classes, devices (create) and bridges of the change.
fn check_config_perms(
    ctx: &Ctx<'_>,
    vmid: u32,
    for_create: bool,
    sets_raw: &[(String, String)],
    deletes: &[String],
) -> ApiResult<()> {
    // The per-key classes; a create also counts privileges on the pool it creates in.
    let pool = if for_create { ctx.get("pool") } else { None };
    let set_keys: Vec<&str> = sets_raw.iter().map(|(k, _)| k.as_str()).collect();
    perms::check_modify_config(
        ctx.c,
        ctx.who,
        vmid,
        None,
        &deletes.iter().map(String::as_str).collect::<Vec<_>>(),
    )?;
    perms::check_modify_config(ctx.c, ctx.who, vmid, pool, &set_keys)?;
    if for_create {
        perms::check_create_devices(ctx.c, ctx.who, vmid, pool, sets_raw)?;
    }
    perms::check_bridges(ctx.c, ctx.who, sets_raw.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// The config as it will be (an update checks the lock and the digest first): the
/// current and pending values without the deleted keys, then the new values.
fn config_view(
    ctx: &Ctx<'_>,
    node: &str,
    vmid: u32,
    for_create: bool,
    sets_raw: &[(String, String)],
    deletes: &[String],
) -> ApiResult<Vec<(String, String)>> {
    let mut view: Vec<(String, String)> = Vec::new();
    if !for_create {
        let g = vm(ctx.c, node, vmid)?;
        super::check_lock(g, ctx.flag("skiplock")).map_err(ApiError::internal)?;
        if let Some(d) = ctx.get("digest") {
            if d != config::digest(&g.conf) {
                return Err(ApiError::internal("checksum mismatch (file change by other user?)"));
            }
        }
        view = config::merged(&g.conf).into_iter().collect();
    }
    view.retain(|(k, _)| !deletes.contains(k));
    view.extend(sets_raw.iter().cloned());
    Ok(view)
}

/// A `balloon` set may not exceed the memory the VM will have.
fn check_balloon(sets_raw: &[(String, String)], view: &[(String, String)]) -> ApiResult<()> {
    let mem_of = |v: &str| {
        v.split(',')
            .find_map(|p| p.strip_prefix("current=").or((!p.contains('=')).then_some(p)))
            .and_then(|m| m.parse::<u64>().ok())
    };
    let memory = view
        .iter()
        .rev()
        .find(|(k, _)| k == "memory")
        .and_then(|(_, v)| mem_of(v))
        .unwrap_or(512);
    if let Some((_, b)) = sets_raw.iter().find(|(k, _)| k == "balloon") {
        if b.parse::<u64>().unwrap_or(0) > memory {
            return Err(ApiError::internal(
                "balloon value too large (must be smaller than assigned memory)",
            ));
        }
    }
    Ok(())
}

/// Each new value normalised (nets, tags), checked (boot) or planned (disks), in the
/// order drives are handled.
fn planned_sets(
    ctx: &Ctx<'_>,
    node: &str,
    vmid: u32,
    sets_raw: &[(String, String)],
    view: &[(String, String)],
) -> ApiResult<Vec<(String, Planned)>> {
    let schema = &ctx.sim.schema;
    let mut log = Vec::new();
    let dc = DiskCtx {
        schema,
        who: ctx.who,
        node,
        vmid,
        default_storage: ctx.get("storage"),
        log: &mut log,
    };
    let mut sets = Vec::new();
    for (k, v) in sets_raw {
        let planned = if disks::is_net_key(k) {
            Planned::Value(normalize::net(schema, ctx.c, k, v, false)?)
        } else if disks::is_disk_key(k) {
            Planned::Disk(normalize::plan_disk(ctx.c, &dc, k, v, view)?)
        } else if k == "tags" {
            Planned::Value(normalize::tags(ctx.c, v))
        } else if k == "boot" {
            check_boot(v, view)?;
            Planned::Value(v.clone())
        } else {
            Planned::Value(v.clone())
        };
        sets.push((k.clone(), planned));
    }
    sets.sort_by_key(|(k, _)| disks::drive_rank(k));
    Ok(sets)
}

fn check_boot(v: &str, view: &[(String, String)]) -> ApiResult<()> {
    for part in v.split(',') {
        if let Some(order) = part.strip_prefix("order=") {
            for dev in order.split(';').filter(|d| !d.is_empty()) {
                if !view.iter().any(|(k, _)| k == dev) {
                    return Err(ApiError::param(
                        "boot",
                        format!("invalid bootorder: device '{dev}' does not exist'"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Hotplug features in effect (`network,disk,usb` by default).
pub fn hotplug_set(g: &Guest) -> BTreeSet<String> {
    match g.conf.current.get("hotplug").map(String::as_str) {
        None | Some("1") => ["network", "disk", "usb"].iter().map(|s| s.to_string()).collect(),
        Some("0") => BTreeSet::new(),
        Some(v) => v.split(',').map(str::to_string).collect(),
    }
}

const ALWAYS_LIVE: &[&str] = &[
    "name",
    "description",
    "tags",
    "onboot",
    "protection",
    "startup",
    "hookscript",
    "lock",
    "migrate_downtime",
    "migrate_speed",
    "shares",
    "vmstatestorage",
    "ciuser",
    "cipassword",
    "nameserver",
    "searchdomain",
    "sshkeys",
    "citype",
    "cicustom",
    "ciupgrade",
    "cpulimit",
    "cpuunits",
];
const NET_LIVE_KEYS: &[&str] = &["bridge", "tag", "trunks", "firewall", "rate", "link_down"];
const THROTTLE_PREFIXES: &[&str] = &["mbps", "iops", "bps"];

/// Whether a pending change of `key` can be applied to the running VM.
pub fn live_ok(g: &Guest, key: &str, old: Option<&str>, new: Option<&str>) -> bool {
    let hp = hotplug_set(g);
    if ALWAYS_LIVE.contains(&key) || key.starts_with("ipconfig") || disks::is_unused_key(key) {
        return true;
    }
    if disks::is_net_key(key) {
        return match (old, new) {
            (Some(o), Some(n)) => {
                let (o, n) = (Drive::parse_stored(o), Drive::parse_stored(n));
                let same_hw = o.file == n.file && ["queues", "mtu"].iter().all(|k| o.opts.get(*k) == n.opts.get(*k));
                let others_same = o.opts.keys().chain(n.opts.keys()).all(|k| {
                    NET_LIVE_KEYS.contains(&k.as_str())
                        || ["queues", "mtu"].contains(&k.as_str())
                        || o.opts.get(k) == n.opts.get(k)
                });
                (same_hw && others_same) || hp.contains("network")
            }
            _ => hp.contains("network"),
        };
    }
    if disks::is_disk_key(key) {
        let never = key.starts_with("ide") || key.starts_with("sata") || key == "efidisk0" || key == "tpmstate0";
        return match (old, new) {
            (Some(o), Some(n)) => {
                let (o, n) = (Drive::parse_stored(o), Drive::parse_stored(n));
                if o.is_cdrom() && n.is_cdrom() {
                    return true;
                }
                if o.file != n.file {
                    return !never && hp.contains("disk");
                }
                o.opts.keys().chain(n.opts.keys()).all(|k| {
                    o.opts.get(k) == n.opts.get(k) || k == "size" || THROTTLE_PREFIXES.iter().any(|p| k.starts_with(p))
                })
            }
            _ => !never && hp.contains("disk"),
        };
    }
    match key {
        "vcpus" => hp.contains("cpu"),
        "memory" => hp.contains("memory"),
        "balloon" => old.is_some_and(|o| o != "0") && new.is_some_and(|n| n != "0"),
        "agent" => {
            let strip = |v: Option<&str>| {
                v.map(|s| {
                    s.split(',')
                        .filter(|p| !p.starts_with("fstrim_cloned_disks"))
                        .collect::<Vec<_>>()
                        .join(",")
                })
            };
            strip(old) == strip(new)
        }
        "tablet" => hp.contains("usb"),
        k if k.starts_with("usb") => hp.contains("usb"),
        "hotplug" => {
            let has_cm = |v: Option<&str>| v.is_some_and(|s| s.contains("cpu") || s.contains("memory"));
            !has_cm(old) && !has_cm(new)
        }
        _ => false,
    }
}

/// Apply one pending entry (value or deletion) to the current config.
/// Returns volumes to free. Old disks become `unusedN` unless forced.
pub fn apply_key(g: &mut Guest, key: &str) -> Vec<String> {
    let mut free = Vec::new();
    if let Some(force) = g.conf.delete.remove(key) {
        if let Some(old) = g.conf.current.remove(key) {
            let d = Drive::parse_stored(&old);
            if let Some(volid) = d.volid().map(str::to_string) {
                if disks::is_unused_key(key) || force {
                    if !super::volume_referenced(g, &volid) {
                        free.push(volid);
                    }
                } else if disks::is_disk_key(key)
                    && !d.is_cdrom()
                    && !volid.contains("-cloudinit")
                    && !super::volume_referenced(g, &volid)
                {
                    let uk = super::free_unused_key(g);
                    g.conf.current.insert(uk, volid);
                } else if volid.contains("-cloudinit") {
                    free.push(volid);
                }
            }
            remove_from_boot(g, key);
        }
    }
    if let Some(mut new) = g.conf.pending.remove(key) {
        if key == "efidisk0" {
            if let Some(old) = g.conf.current.get(key) {
                new = efidisk_enroll(old, &new);
            }
        }
        let old = g.conf.current.insert(key.to_string(), new.clone());
        if let (Some(old), true) = (old, disks::is_disk_key(key)) {
            let (o, n) = (Drive::parse_stored(&old), Drive::parse_stored(&new));
            if let Some(volid) = o.volid() {
                if o.file != n.file && !o.is_cdrom() && !super::volume_referenced(g, volid) {
                    let uk = super::free_unused_key(g);
                    g.conf.current.insert(uk, volid.to_string());
                }
            }
        }
    }
    free
}

/// qemu-server's OVMF `drive_change`, run when a pending `efidisk0` is applied: a
/// marker newly set to a 2023 value on the same volume enrolls the 2023 certificates
/// (then reads `2023k`) into a disk with pre-enrolled keys; without them the marker
/// is dropped. Any other change is stored as given.
fn efidisk_enroll(old: &str, new: &str) -> String {
    let (o, mut n) = (Drive::parse_stored(old), Drive::parse_stored(new));
    let cert = n.opts.get("ms-cert").cloned();
    let to_2023 = cert.as_deref().is_some_and(|c| c.starts_with("2023")) && o.opts.get("ms-cert") != cert.as_ref();
    if o.file != n.file || !to_2023 {
        return new.to_string();
    }
    n.opts.remove("ms-cert");
    if n.opts
        .get("pre-enrolled-keys")
        .is_some_and(|v| crate::propstring::parse_bool(v) == Some("1"))
    {
        n.opts.insert("ms-cert".into(), "2023k".into());
    }
    n.print(None)
}

fn remove_from_boot(g: &mut Guest, key: &str) {
    let Some(boot) = g.conf.current.get("boot").cloned() else {
        return;
    };
    let parts: Vec<String> = boot
        .split(',')
        .map(|p| match p.strip_prefix("order=") {
            Some(o) => format!(
                "order={}",
                o.split(';').filter(|d| *d != key).collect::<Vec<_>>().join(";")
            ),
            None => p.to_string(),
        })
        .collect();
    g.conf.current.insert("boot".into(), parts.join(","));
}

/// Apply everything pending (VM stopped, or at stop/start).
pub fn apply_all_pending(c: &mut Cluster, vmid: u32) {
    let Some(g) = c.guests.get_mut(&vmid) else { return };
    let node = g.node.clone();
    let keys: Vec<String> = g.conf.delete.keys().chain(g.conf.pending.keys()).cloned().collect();
    let mut free = Vec::new();
    for k in keys {
        free.extend(apply_key(g, &k));
    }
    for v in free {
        c.remove_volume(&v, &node);
    }
}

/// The work of an update: allocate disks, write pending, apply what can be applied.
/// Hotplug problems are returned as 400-style errors (change stays pending).
pub fn execute(
    c: &mut Cluster,
    schema: &Schema,
    who: &Identity,
    node: &str,
    vmid: u32,
    plan: UpdatePlan,
    log: &mut Vec<String>,
) -> ApiResult<()> {
    locked_checks(c, who, node, vmid, &plan)?;
    let mut values = Vec::new();
    {
        let mut dc = DiskCtx {
            schema,
            who,
            node,
            vmid,
            default_storage: None,
            log,
        };
        for (k, p) in plan.sets {
            let v = match p {
                Planned::Value(v) => v,
                Planned::Disk(d) => normalize::execute_disk(c, &mut dc, &k, d).map_err(ApiError::internal)?,
            };
            values.push((k, v));
        }
    }
    let running = vm(c, node, vmid)?.running;
    let bridges: Vec<String> = c.node(node).map(|n| n.bridges.clone()).unwrap_or_default();
    let g = vm_mut(c, node, vmid)?;
    for k in &plan.revert {
        g.conf.pending.remove(k);
        g.conf.delete.remove(k);
    }
    let mut touched = Vec::new();
    for k in &plan.deletes {
        let in_cur = g.conf.current.contains_key(k);
        if g.conf.pending.remove(k).is_some() && !in_cur {
            continue;
        }
        if !in_cur {
            log.push(format!("cannot delete '{k}' - not set in current configuration!"));
            continue;
        }
        g.conf.delete.insert(k.clone(), plan.force);
        touched.push(k.clone());
    }
    for (k, v) in values {
        g.conf.delete.remove(&k);
        if g.conf.current.get(&k) == Some(&v) {
            g.conf.pending.remove(&k);
            continue;
        }
        g.conf.pending.insert(k.clone(), v);
        touched.push(k);
    }
    let mut free = Vec::new();
    let mut errors = BTreeMap::new();
    // Unused volumes are freed right away, running or not.
    for k in touched.iter().filter(|k| disks::is_unused_key(k)) {
        free.extend(apply_key(g, k));
    }
    for k in &touched {
        if !running {
            free.extend(apply_key(g, k));
            continue;
        }
        let old = g.conf.current.get(k).cloned();
        let new = g.conf.pending.get(k).cloned();
        if !live_ok(g, k, old.as_deref(), new.as_deref()) {
            continue;
        }
        if let Some(n) = new.as_deref().filter(|_| disks::is_net_key(k)) {
            if let Some(b) = Drive::parse_stored(n).opts.get("bridge") {
                if !bridges.contains(b) {
                    errors.insert(k.clone(), format!("hotplug problem - bridge '{b}' does not exist"));
                    continue;
                }
            }
        }
        free.extend(apply_key(g, k));
        super::cloudinit::record_change(g, k, old.as_deref(), g.conf.current.get(k).cloned().as_deref());
    }
    super::cloudinit::settle(g);
    for v in free {
        c.remove_volume(&v, node);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::params(errors))
    }
}

/// The checks qemu-server makes per key under the config lock, against the value being
/// replaced or deleted as well as the new one (a `POST config` fails its task with them).
fn locked_checks(c: &Cluster, who: &Identity, node: &str, vmid: u32, plan: &UpdatePlan) -> ApiResult<()> {
    let g = vm(c, node, vmid)?;
    let old = |k: &str| g.conf.current.get(k).or_else(|| g.conf.pending.get(k)).cloned();
    for k in &plan.deletes {
        let Some(val) = old(k) else { continue };
        if disks::is_unused_key(k) {
            perms::check_vm_perm(c, who, vmid, None, &["VM.Config.Disk"], false)?;
        } else if disks::is_disk_key(k) {
            perms::check_drive(c, who, vmid, &val)?;
        } else if k == "tags" {
            perms::check_tags(c, who, vmid, Some(&val), None)?;
        } else if disks::is_net_key(k) {
            perms::check_bridges(c, who, [(k.as_str(), val.as_str())])?;
        } else {
            perms::check_device(c, who, vmid, None, k, &val, "delete")?;
        }
    }
    for (k, v) in &plan.raw_sets {
        let before = g.conf.current.get(k).cloned();
        if disks::is_disk_key(k) {
            if let Some(o) = &before {
                perms::check_drive(c, who, vmid, o)?;
            }
            perms::check_drive(c, who, vmid, v)?;
        } else if k == "tags" {
            perms::check_tags(c, who, vmid, before.as_deref(), Some(v))?;
        } else if disks::is_net_key(k) {
            if let Some(o) = &before {
                perms::check_bridges(c, who, [(k.as_str(), o.as_str())])?;
            }
        } else if k.starts_with("serial") {
            let socket_only = before.as_deref().is_none_or(|o| o == "socket") && v == "socket";
            perms::check_device(c, who, vmid, None, k, if socket_only { "socket" } else { "" }, "modify")?;
        } else {
            if let Some(o) = &before {
                perms::check_device(c, who, vmid, None, k, o, "set")?;
            }
            perms::check_device(c, who, vmid, None, k, v, "set")?;
        }
    }
    Ok(())
}

/// `POST config`: checks now, the work in a `qmconfig` task.
pub fn post_config(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    super::versions::refuse_missing(ctx.c, &ctx.node(), &ctx.p)?;
    let plan = plan(ctx, false)?;
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let first = vec![plan.log_line.clone()];
    let schema_sim = ctx.sim.clone();
    let who = ctx.who.clone();
    let node2 = node.clone();
    let skiplock = ctx.flag("skiplock");
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmconfig",
        &vmid.to_string(),
        ctx.who,
        first,
        Box::new(move |c, t| {
            t.check_fault()?;
            super::check_lock(vm(c, &node2, vmid).map_err(tasks::task_err)?, skiplock)?;
            execute(c, &schema_sim.schema, &who, &node2, vmid, plan, &mut t.log).map_err(tasks::task_err)
        }),
    );
    if let Some(delay) = ctx.get("background_delay").and_then(|d| d.parse().ok()) {
        ctx.wait_task = Some((upid.clone(), delay));
    }
    Ok(Value::String(upid))
}

/// `PUT config`: everything inside the request.
pub fn put_config(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    super::versions::refuse_missing(ctx.c, &ctx.node(), &ctx.p)?;
    let plan = plan(ctx, false)?;
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let mut log = Vec::new();
    execute(ctx.c, &ctx.sim.schema, ctx.who, &node, vmid, plan, &mut log)?;
    Ok(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Config, GuestKind};

    fn guest(hotplug: Option<&str>) -> Guest {
        let mut conf = Config::default();
        if let Some(h) = hotplug {
            conf.current.insert("hotplug".into(), h.into());
        }
        conf.current
            .insert("scsi0".into(), "local-lvm:vm-1-disk-0,size=1G".into());
        Guest {
            vmid: 1,
            node: "pve1".into(),
            kind: GuestKind::Qemu,
            conf,
            running: true,
            paused: false,
            started_ms: None,
            created_ms: 0,
            power_change: None,
            agent: None,
        }
    }

    #[test]
    fn hotplug_table() {
        let g = guest(None);
        assert!(live_ok(&g, "name", Some("a"), Some("b")));
        assert!(!live_ok(&g, "cores", Some("1"), Some("2")));
        assert!(
            live_ok(&g, "net1", None, Some("virtio=BC:24:11:00:00:01,bridge=vmbr0")),
            "network hotplug by default"
        );
        assert!(live_ok(&g, "scsi1", None, Some("local-lvm:vm-1-disk-1,size=1G")));
        assert!(
            !live_ok(&g, "sata1", None, Some("local-lvm:vm-1-disk-1,size=1G")),
            "sata never"
        );
        assert!(
            !live_ok(&g, "memory", Some("1024"), Some("2048")),
            "memory needs memory hotplug"
        );
        assert!(live_ok(&g, "balloon", Some("512"), Some("1024")));
        assert!(!live_ok(&g, "balloon", Some("0"), Some("1024")));
        let g = guest(Some("0"));
        assert!(!live_ok(
            &g,
            "net1",
            None,
            Some("virtio=BC:24:11:00:00:01,bridge=vmbr0")
        ));
        assert!(
            live_ok(
                &g,
                "net0",
                Some("virtio=BC:24:11:00:00:01,bridge=vmbr0"),
                Some("virtio=BC:24:11:00:00:01,bridge=vmbr1,tag=5")
            ),
            "bridge/tag change needs no hotplug"
        );
        assert!(!live_ok(
            &g,
            "net0",
            Some("virtio=BC:24:11:00:00:01,bridge=vmbr0"),
            Some("e1000=BC:24:11:00:00:01,bridge=vmbr0")
        ));
        assert!(
            live_ok(
                &g,
                "scsi0",
                Some("local-lvm:vm-1-disk-0,size=1G"),
                Some("local-lvm:vm-1-disk-0,mbps_rd=10,size=1G")
            ),
            "throttling is live"
        );
        assert!(!live_ok(
            &g,
            "scsi0",
            Some("local-lvm:vm-1-disk-0,size=1G"),
            Some("local-lvm:vm-1-disk-0,cache=writeback,size=1G")
        ));
        let g = guest(Some("network,disk,cpu,memory"));
        assert!(live_ok(&g, "vcpus", Some("1"), Some("2")));
        assert!(!live_ok(
            &g,
            "hotplug",
            Some("network,disk,cpu,memory"),
            Some("network")
        ));
    }

    #[test]
    fn a_2023_marker_enrolls_into_a_disk_with_pre_enrolled_keys_only() {
        let old = "local-lvm:vm-1-disk-1,efitype=4m,pre-enrolled-keys=1,size=4M";
        assert_eq!(
            efidisk_enroll(
                old,
                "local-lvm:vm-1-disk-1,efitype=4m,ms-cert=2023w,pre-enrolled-keys=1,size=4M"
            ),
            "local-lvm:vm-1-disk-1,efitype=4m,ms-cert=2023k,pre-enrolled-keys=1,size=4M"
        );
        let bare = "local-lvm:vm-1-disk-1,efitype=4m,size=4M";
        assert_eq!(
            efidisk_enroll(bare, "local-lvm:vm-1-disk-1,efitype=4m,ms-cert=2023k,size=4M"),
            bare
        );
        let back = "local-lvm:vm-1-disk-1,efitype=4m,ms-cert=2011,pre-enrolled-keys=1,size=4M";
        assert_eq!(
            efidisk_enroll(old, back),
            back,
            "moving away from 2023 only changes the marker"
        );
    }

    #[test]
    fn replaced_and_deleted_disks_become_unused() {
        let mut g = guest(None);
        g.conf
            .pending
            .insert("scsi0".into(), "local-lvm:vm-1-disk-1,size=2G".into());
        assert!(apply_key(&mut g, "scsi0").is_empty());
        assert_eq!(g.conf.current["unused0"], "local-lvm:vm-1-disk-0");
        g.conf.delete.insert("scsi0".into(), false);
        apply_key(&mut g, "scsi0");
        assert_eq!(g.conf.current["unused1"], "local-lvm:vm-1-disk-1");
        g.conf.delete.insert("unused0".into(), false);
        assert_eq!(
            apply_key(&mut g, "unused0"),
            vec!["local-lvm:vm-1-disk-0".to_string()],
            "deleting unusedN frees it"
        );
    }
}
