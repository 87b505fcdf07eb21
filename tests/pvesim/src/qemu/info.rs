//! Read-only VM views: node listing, config, pending, status/current.

use super::disks::Drive;
use super::{config, vm};
use crate::api::Ctx;
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::state::{Guest, GuestKind};
use crate::util::now_ms;
use serde_json::{json, Map, Value};

/// Configured memory in bytes (`memory` is a property string with default key `current`).
pub fn memory_bytes(g: &Guest) -> u64 {
    let v = g.conf.current.get("memory").cloned().unwrap_or_else(|| "512".into());
    let mib = v
        .split(',')
        .find_map(|p| p.strip_prefix("current=").or((!p.contains('=')).then_some(p)))
        .and_then(|m| m.parse::<u64>().ok())
        .unwrap_or(512);
    mib << 20
}

pub fn uptime(g: &Guest) -> u64 {
    match (g.running, g.started_ms) {
        (true, Some(s)) => now_ms().saturating_sub(s) / 1000,
        _ => 0,
    }
}

/// Size of the boot disk: first non-cdrom disk of `boot: order=` (or `bootdisk`).
fn maxdisk(g: &Guest) -> u64 {
    let c = &g.conf.current;
    let boot = c.get("boot").cloned().unwrap_or_default();
    let mut candidates: Vec<String> =
        boot.split(',').find_map(|p| p.strip_prefix("order=")).map(|o| o.split(';').map(str::to_string).collect()).unwrap_or_default();
    if let Some(bd) = c.get("bootdisk") {
        candidates.push(bd.clone());
    }
    for k in candidates {
        if let Some(v) = c.get(&k) {
            let d = Drive::parse_stored(v);
            if super::disks::is_disk_key(&k) && !d.is_cdrom() {
                return d.size().unwrap_or(0);
            }
        }
    }
    0
}

/// Fields of the `full=1` listing for one VM.
pub fn stats(_ctx: &Ctx<'_>, g: &Guest) -> Map<String, Value> {
    let c = &g.conf.current;
    let num = |k: &str, d: u64| c.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(d);
    let cpus = c.get("vcpus").and_then(|v| v.parse::<u64>().ok()).unwrap_or(num("sockets", 1) * num("cores", 1));
    let maxmem = memory_bytes(g);
    let running = g.running;
    let up = uptime(g);
    let mut m = Map::new();
    m.insert("vmid".into(), json!(g.vmid));
    m.insert("name".into(), json!(c.get("name").cloned().unwrap_or_else(|| format!("VM {}", g.vmid))));
    m.insert("status".into(), json!(if running { "running" } else { "stopped" }));
    m.insert("cpus".into(), json!(cpus));
    m.insert("maxmem".into(), json!(maxmem));
    m.insert("maxdisk".into(), json!(maxdisk(g)));
    m.insert("disk".into(), json!(0));
    m.insert("uptime".into(), json!(up));
    m.insert("cpu".into(), json!(if running { 0.0123 } else { 0.0 }));
    m.insert("mem".into(), json!(if running { maxmem / 3 } else { 0 }));
    m.insert("memhost".into(), json!(if running { maxmem / 3 + (24 << 20) } else { 0 }));
    for (k, per_s) in [("netin", 1200u64), ("netout", 800), ("diskread", 40_000), ("diskwrite", 20_000)] {
        m.insert(k.into(), json!(if running { up * per_s } else { 0 }));
    }
    if running {
        m.insert("pid".into(), json!(10_000 + g.vmid % 50_000));
    }
    if super::is_template(g) {
        m.insert("template".into(), json!(1));
    }
    if let Some(l) = c.get("lock") {
        m.insert("lock".into(), json!(l));
    }
    if let Some(t) = c.get("tags") {
        m.insert("tags".into(), json!(t));
    }
    m
}

pub fn list(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let full = ctx.flag("full");
    let mut out = Vec::new();
    for g in ctx.c.guests.values().filter(|g| g.node == node && g.kind == GuestKind::Qemu) {
        if !auth::has(ctx.c, ctx.who, &format!("/vms/{}", g.vmid), "VM.Audit") {
            continue;
        }
        let mut m = stats(ctx, g);
        if full && g.running {
            m.insert("qmpstatus".into(), json!(if g.paused { "paused" } else { "running" }));
            m.insert("running-qemu".into(), json!(super::create::QEMU_VERSION));
        }
        out.push(Value::Object(m));
    }
    Ok(Value::Array(out))
}

pub fn config(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    if let Some(snap) = ctx.get("snapshot") {
        if ctx.get("current").is_some() {
            let mut e = std::collections::BTreeMap::new();
            e.insert("snapshot".to_string(), "option conflicts with option 'current'".to_string());
            e.insert("current".to_string(), "option conflicts with option 'snapshot'".to_string());
            return Err(ApiError::params(e));
        }
        vm(ctx.c, &node, vmid)?;
        return Err(ApiError::internal(format!("snapshot '{snap}' does not exist")));
    }
    let g = vm(ctx.c, &node, vmid)?;
    Ok(config::to_json(&ctx.sim.schema, &g.conf, ctx.flag("current")))
}

pub fn pending(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let g = vm(ctx.c, &ctx.node(), ctx.vmid())?;
    Ok(config::pending_list(&ctx.sim.schema, &g.conf))
}

pub fn status_current(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let g = vm(ctx.c, &ctx.node(), ctx.vmid())?;
    let mut m = stats(ctx, g);
    let qmp = if g.running { if g.paused { "paused" } else { "running" } } else { "stopped" };
    m.insert("qmpstatus".into(), json!(qmp));
    m.insert("ha".into(), json!({"managed": 0}));
    let agent_on = g.conf.current.get("agent").is_some_and(|a| agent_enabled(a));
    if agent_on {
        m.insert("agent".into(), json!(1));
    }
    if g.running {
        m.insert("running-machine".into(), json!("pc-i440fx-10.0+pve0"));
        m.insert("running-qemu".into(), json!(super::create::QEMU_VERSION));
    }
    Ok(Value::Object(m))
}

/// `agent: 1` or `enabled=1,...`.
pub fn agent_enabled(v: &str) -> bool {
    v.split(',').any(|p| {
        let val = p.strip_prefix("enabled=").unwrap_or(if p.contains('=') { "" } else { p });
        crate::propstring::parse_bool(val) == Some("1")
    })
}
