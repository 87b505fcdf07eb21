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
    let mut candidates: Vec<String> = boot
        .split(',')
        .find_map(|p| p.strip_prefix("order="))
        .map(|o| o.split(';').map(str::to_string).collect())
        .unwrap_or_default();
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

/// vmstatus's `cpus` (qemu-server `QemuServer.pm` `vmstatus`): sockets × cores, capped at
/// the host's CPU count, unless `vcpus` is set (not capped, 0 counts as unset).
pub fn vmstatus_cpus(sockets_x_cores: u64, vcpus: Option<u64>, host_cpus: u64) -> u64 {
    match vcpus.filter(|v| *v > 0) {
        Some(v) => v,
        None => sockets_x_cores.min(host_cpus),
    }
}

/// Fields of the `full=1` listing for one VM.
pub fn stats(ctx: &Ctx<'_>, g: &Guest) -> Map<String, Value> {
    let c = &g.conf.current;
    let num = |k: &str, d: u64| c.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(d);
    let host_cpus = ctx.c.node(&g.node).map_or(1, |n| u64::from(n.maxcpu).max(1));
    let cpus = vmstatus_cpus(
        num("sockets", 1) * num("cores", 1),
        c.get("vcpus").and_then(|v| v.parse::<u64>().ok()),
        host_cpus,
    );
    let maxmem = memory_bytes(g);
    let running = g.running;
    let up = uptime(g);
    let mut m = Map::new();
    m.insert("vmid".into(), json!(g.vmid));
    m.insert(
        "name".into(),
        json!(c.get("name").cloned().unwrap_or_else(|| format!("VM {}", g.vmid))),
    );
    m.insert("status".into(), json!(if running { "running" } else { "stopped" }));
    m.insert("cpus".into(), json!(cpus));
    m.insert("maxmem".into(), json!(maxmem));
    m.insert("maxdisk".into(), json!(maxdisk(g)));
    m.insert("disk".into(), json!(0));
    m.insert("uptime".into(), json!(up));
    m.insert("cpu".into(), json!(if running { 0.0123 } else { 0.0 }));
    m.insert("mem".into(), json!(if running { maxmem / 3 } else { 0 }));
    m.insert(
        "memhost".into(),
        json!(if running { maxmem / 3 + (24 << 20) } else { 0 }),
    );
    for (k, per_s) in [
        ("netin", 1200u64),
        ("netout", 800),
        ("diskread", 40_000),
        ("diskwrite", 20_000),
    ] {
        m.insert(k.into(), json!(if running { up * per_s } else { 0 }));
    }
    if running {
        m.insert("pid".into(), json!(10_000 + g.vmid % 50_000));
        // PVE 9: the VM cgroup's pressure stall averages over 10 s (numbers).
        for (k, v) in [
            ("pressurecpusome", 0.12),
            ("pressurecpufull", 0.0),
            ("pressureiosome", 0.05),
            ("pressureiofull", 0.03),
            ("pressurememorysome", 0.0),
            ("pressurememoryfull", 0.0),
        ] {
            m.insert(k.into(), json!(v));
        }
    }
    if let Some(min) = balloon_mib(g).filter(|b| *b > 0) {
        // Set from the config whenever a balloon target is configured.
        m.insert("balloon_min".into(), json!(min << 20));
        m.insert(
            "shares".into(),
            json!(c.get("shares").and_then(|v| v.parse::<u64>().ok()).unwrap_or(1000)),
        );
    }
    if c.keys().any(|k| {
        k.strip_prefix("serial")
            .is_some_and(|n| n.parse::<u8>().is_ok_and(|n| n < 4))
    }) {
        m.insert("serial".into(), json!(1));
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

/// `balloon` of the config in MiB (0 = no balloon device).
fn balloon_mib(g: &Guest) -> Option<u64> {
    g.conf.current.get("balloon").and_then(|v| v.parse().ok())
}

/// What vmstatus adds with `full` for a running VM: QMP answers (status, machine,
/// version, balloon, block stats, Proxmox support) and per-tap NIC counters.
fn full_stats(g: &Guest, m: &mut Map<String, Value>) {
    if !g.running {
        return;
    }
    let c = &g.conf.current;
    let up = uptime(g);
    m.insert("qmpstatus".into(), json!(if g.paused { "paused" } else { "running" }));
    m.insert("running-machine".into(), json!("pc-i440fx-10.0+pve0"));
    m.insert("running-qemu".into(), json!(super::create::QEMU_VERSION));
    m.insert(
        "proxmox-support".into(),
        json!({
            "backup-fleecing": true, "backup-max-workers": true, "pbs-dirty-bitmap": true,
            "pbs-dirty-bitmap-migration": true, "pbs-dirty-bitmap-savevm": true,
            "pbs-library-version": "1.5.2 (UNKNOWN)", "pbs-masterkey": true, "query-bitmap-info": true,
        }),
    );
    let mut blockstat = Map::new();
    let (mut rd, mut wr) = (0u64, 0u64);
    for (k, v) in c.iter().filter(|(k, _)| super::disks::is_disk_key(k)) {
        let cdrom = Drive::parse_stored(v).is_cdrom();
        let (r, w) = if cdrom { (0, 0) } else { (up * 30_000, up * 15_000) };
        rd += r;
        wr += w;
        blockstat.insert(
            k.clone(),
            json!({
                "rd_bytes": r, "wr_bytes": w, "rd_operations": r / 4096, "wr_operations": w / 4096,
                "flush_operations": w / 65_536, "rd_merged": 0, "wr_merged": 0, "unmap_bytes": 0,
                "unmap_operations": 0, "rd_total_time_ns": r * 10, "wr_total_time_ns": w * 20,
                "flush_total_time_ns": 0, "failed_rd_operations": 0, "failed_wr_operations": 0,
                "invalid_rd_operations": 0, "invalid_wr_operations": 0, "account_failed": true,
                "account_invalid": true, "idle_time_ns": 1_000_000, "timed_stats": [],
            }),
        );
    }
    m.insert("blockstat".into(), Value::Object(blockstat));
    m.insert("diskread".into(), json!(rd));
    m.insert("diskwrite".into(), json!(wr));
    let mut nics = Map::new();
    for k in c.keys().filter(|k| super::disks::is_net_key(k)) {
        nics.insert(
            format!("tap{}i{}", g.vmid, &k[3..]),
            json!({"netin": up * 1200, "netout": up * 800}),
        );
    }
    m.insert("nics".into(), Value::Object(nics));
    if balloon_mib(g) != Some(0) {
        // query-balloon: only with a balloon device (`balloon: 0` has none).
        let max = memory_bytes(g);
        let free = max / 2;
        m.insert("balloon".into(), json!(max));
        m.insert("freemem".into(), json!(free));
        m.insert("mem".into(), json!(max - free));
        m.insert(
            "ballooninfo".into(),
            json!({
                "actual": max, "max_mem": max, "total_mem": max, "free_mem": free,
                "mem_swapped_in": 0, "mem_swapped_out": 0, "major_page_faults": 120,
                "minor_page_faults": 250_000, "last_update": crate::util::now_secs(),
            }),
        );
    }
}

pub fn list(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let full = ctx.flag("full");
    let mut out = Vec::new();
    for g in ctx
        .c
        .guests
        .values()
        .filter(|g| g.node == node && g.kind == GuestKind::Qemu)
    {
        if !auth::has(ctx.c, ctx.who, &format!("/vms/{}", g.vmid), "VM.Audit") {
            continue;
        }
        let mut m = stats(ctx, g);
        if full {
            full_stats(g, &mut m);
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
            e.insert(
                "snapshot".to_string(),
                "option conflicts with option 'current'".to_string(),
            );
            e.insert(
                "current".to_string(),
                "option conflicts with option 'snapshot'".to_string(),
            );
            return Err(ApiError::params(e));
        }
        let snap = snap.to_string();
        return super::snapshot::config(ctx, &snap);
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
    full_stats(g, &mut m);
    if !g.running {
        m.insert("qmpstatus".into(), json!("stopped"));
    }
    m.insert("ha".into(), super::ha::service_status(ctx.c, g.vmid));
    let agent_on = g.conf.current.get("agent").is_some_and(|a| agent_enabled(a));
    if agent_on {
        m.insert("agent".into(), json!(1));
    }
    if let Some(vga) = g.conf.current.get("vga") {
        // SPICE-capable display (qxl*, virtio*), and the clipboard option (null if unset).
        let ty = vga
            .split(',')
            .find_map(|p| p.strip_prefix("type=").or((!p.contains('=')).then_some(p)))
            .unwrap_or("");
        if ty.starts_with("qxl") || ty.starts_with("virtio") {
            m.insert("spice".into(), json!(1));
        }
        let clipboard = vga.split(',').find_map(|p| p.strip_prefix("clipboard="));
        m.insert("clipboard".into(), clipboard.map_or(Value::Null, |c| json!(c)));
    }
    Ok(Value::Object(m))
}

/// `agent: 1` or `enabled=1,...`.
pub fn agent_enabled(v: &str) -> bool {
    v.split(',').any(|p| {
        let val = p
            .strip_prefix("enabled=")
            .unwrap_or(if p.contains('=') { "" } else { p });
        crate::propstring::parse_bool(val) == Some("1")
    })
}

#[cfg(test)]
mod tests {
    use super::vmstatus_cpus;

    #[test]
    fn cpus_are_capped_at_the_hosts_unless_vcpus_is_set() {
        assert_eq!(vmstatus_cpus(4, None, 16), 4);
        assert_eq!(
            vmstatus_cpus(2 * 16, None, 16),
            16,
            "sockets × cores over the host's count"
        );
        assert_eq!(vmstatus_cpus(32, Some(24), 16), 24, "vcpus is not capped");
        assert_eq!(vmstatus_cpus(8, Some(0), 4), 4, "vcpus 0 is unset");
    }
}
