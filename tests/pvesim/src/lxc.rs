//! Containers (`/nodes/{node}/lxc…`), read-only: the listing, config, status,
//! interfaces and snapshots, as pve-container answers them.

use crate::api::Ctx;
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::state::{Cluster, Guest, GuestKind};
use serde_json::{json, Map, Value};

/// The container whose config lives on this node, or `load_config`'s error.
fn ct<'a>(ctx: &'a Ctx<'_>) -> ApiResult<&'a Guest> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    ctx.c
        .guests
        .get(&vmid)
        .filter(|g| g.node == node && g.kind == GuestKind::Lxc)
        .ok_or_else(|| {
            ApiError::internal(format!(
                "Configuration file 'nodes/{node}/lxc/{vmid}.conf' does not exist"
            ))
        })
}

/// A number as Perl hands it to the JSON encoder: integral values as integers.
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

/// pve-container's `vmstatus` entry of one container.
pub fn ct_stats(c: &Cluster, g: &Guest) -> Map<String, Value> {
    let conf = &g.conf.current;
    let num = |k: &str| conf.get(k).and_then(|v| v.parse::<f64>().ok()).filter(|v| *v != 0.0);
    let mib = |k: &str, d: u64| conf.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(d) << 20;
    // No size on the rootfs: vmstatus assumes 4 GiB.
    let maxdisk = conf
        .get("rootfs")
        .and_then(|v| crate::qemu::disks::Drive::parse_stored(v).size())
        .filter(|s| *s > 0)
        .unwrap_or(4 << 30);
    let mut m = Map::new();
    m.insert("vmid".into(), json!(g.vmid));
    m.insert("type".into(), json!("lxc"));
    let name = conf
        .get("hostname")
        .filter(|h| !h.is_empty())
        .cloned()
        .unwrap_or_else(|| format!("CT{}", g.vmid));
    m.insert("name".into(), json!(name.split_whitespace().collect::<String>()));
    m.insert("status".into(), json!(if g.running { "running" } else { "stopped" }));
    // `cores || cpulimit`, else every CPU of the node.
    let node_cpus = c.node(&g.node).map(|n| f64::from(n.maxcpu.max(1))).unwrap_or(1.0);
    m.insert(
        "cpus".into(),
        number(num("cores").or_else(|| num("cpulimit")).unwrap_or(node_cpus)),
    );
    if let Some(t) = conf.get("tags") {
        m.insert("tags".into(), json!(t));
    }
    m.insert("maxdisk".into(), json!(maxdisk));
    m.insert("disk".into(), json!(if g.running { maxdisk / 5 } else { 0 }));
    m.insert("maxmem".into(), json!(mib("memory", 512)));
    m.insert("mem".into(), json!(if g.running { mib("memory", 512) / 4 } else { 0 }));
    // `swap // 0`: a config without `swap` has none.
    m.insert("maxswap".into(), json!(mib("swap", 0)));
    m.insert("swap".into(), json!(0));
    m.insert("uptime".into(), json!(crate::qemu::info::uptime(g)));
    for k in ["cpu", "netin", "netout", "diskread", "diskwrite"] {
        m.insert(k.into(), json!(0));
    }
    if conf.get("template").is_some_and(|t| t == "1") {
        m.insert("template".into(), json!(1));
    }
    if let Some(l) = conf.get("lock") {
        m.insert("lock".into(), json!(l));
    }
    if g.running {
        // The container's init pid and its cgroup's pressure stall averages (PVE 9).
        m.insert("pid".into(), json!(20_000 + g.vmid % 50_000));
        for (k, v) in [
            ("pressurecpusome", 0.08),
            ("pressurecpufull", 0.0),
            ("pressureiosome", 0.02),
            ("pressureiofull", 0.01),
            ("pressurememorysome", 0.0),
            ("pressurememoryfull", 0.0),
        ] {
            m.insert(k.into(), json!(v));
        }
    }
    m
}

/// `GET /nodes/{node}/lxc`: the node's containers the caller may audit.
pub fn list(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let out: Vec<Value> = ctx
        .c
        .guests
        .values()
        .filter(|g| g.node == node && g.kind == GuestKind::Lxc)
        .filter(|g| auth::has(ctx.c, ctx.who, &format!("/vms/{}", g.vmid), "VM.Audit"))
        .map(|g| Value::Object(ct_stats(ctx.c, g)))
        .collect();
    Ok(Value::Array(out))
}

pub fn config(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let g = ct(ctx)?;
    let mut m = Map::new();
    for (k, v) in &g.conf.current {
        let typed = if matches!(
            k.as_str(),
            "cores" | "memory" | "swap" | "onboot" | "unprivileged" | "template" | "cpuunits"
        ) {
            v.parse::<i64>().map(Value::from).unwrap_or_else(|_| json!(v))
        } else {
            json!(v)
        };
        m.insert(k.clone(), typed);
    }
    m.insert("digest".into(), json!(crate::qemu::config::digest(&g.conf)));
    Ok(Value::Object(m))
}

/// `GET …/status/current`: `load_config` first (an unknown CT is an error), then vmstatus
/// plus the HA service status of `ct:<vmid>`.
pub fn status(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let g = ct(ctx)?;
    let mut m = ct_stats(ctx.c, g);
    m.insert("ha".into(), crate::qemu::ha::service_status(ctx.c, g.vmid));
    Ok(Value::Object(m))
}

/// `GET …/snapshot`: every `[snapname]` section (`snaptime` 0 and `description` ""
/// when unset, `parent` and `snapstate` when set; no `vmstate`: containers have none),
/// then `current` with the config's digest, whether the CT runs, and its `parent`.
pub fn snapshots(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let g = ct(ctx)?;
    let mut out: Vec<Value> = g
        .conf
        .snapshots
        .iter()
        .map(|(name, s)| {
            let mut m = Map::new();
            m.insert("name".into(), json!(name));
            m.insert("snaptime".into(), json!(s.snaptime));
            m.insert("description".into(), json!(s.description));
            if let Some(p) = &s.parent {
                m.insert("parent".into(), json!(p));
            }
            if let Some(state) = s.conf.get("snapstate") {
                m.insert("snapstate".into(), json!(state));
            }
            Value::Object(m)
        })
        .collect();
    let mut current = json!({
        "name": "current", "digest": crate::qemu::config::digest(&g.conf),
        "running": u8::from(g.running), "description": "You are here!",
    });
    if let Some(p) = g.conf.current.get("parent") {
        current["parent"] = json!(p);
    }
    out.push(current);
    Ok(Value::Array(out))
}

/// `GET …/interfaces`: pve-container's get_interfaces, `ip --json a` in the container's
/// network namespace. It never reads the config: whatever `lxc-info` finds no pid for (a
/// stopped CT, an unknown vmid, a VM) answers `null`, not an error. Inside: `lo`, then
/// each `netN` by index under its `name`, MAC in lower case, addresses as the kernel lists
/// them (IPv4, global IPv6, link-local); `inet`/`inet6` hold the last of each family.
pub fn interfaces(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let Ok(g) = ct(ctx) else { return Ok(Value::Null) };
    if !g.running {
        return Ok(Value::Null);
    }
    let iface = |name: &str, mac: &str, addrs: &[(&str, String, u32)]| {
        let mut o = json!({"name": name, "hardware-address": mac, "hwaddr": mac});
        for (family, ip, prefix) in addrs {
            o[*family] = json!(format!("{ip}/{prefix}"));
        }
        o["ip-addresses"] = addrs
            .iter()
            .map(|(family, ip, prefix)| json!({"ip-address-type": family, "ip-address": ip, "prefix": prefix}))
            .collect();
        o
    };
    let mut out = vec![iface(
        "lo",
        "00:00:00:00:00:00",
        &[("inet", "127.0.0.1".into(), 8), ("inet6", "::1".into(), 128)],
    )];
    let mut nets: Vec<(u32, &String)> = g
        .conf
        .current
        .iter()
        .filter(|(k, _)| crate::qemu::disks::is_net_key(k))
        .filter_map(|(k, v)| Some((k[3..].parse().ok()?, v)))
        .collect();
    nets.sort();
    for (idx, v) in nets {
        let props: std::collections::BTreeMap<&str, &str> = v.split(',').filter_map(|p| p.split_once('=')).collect();
        let mac = props.get("hwaddr").copied().unwrap_or("").to_ascii_lowercase();
        out.push(iface(
            props.get("name").copied().unwrap_or("eth0"),
            &mac,
            &addresses(g.vmid, idx, &props, &mac),
        ));
    }
    Ok(Value::Array(out))
}

/// The addresses of `netN` inside a running container: `ip=` and `ip6=` as configured
/// (a CIDR as given; `dhcp` a lease `192.168.<10+N>.<10+vmid%240>/24`; `ip6=auto` the SLAAC
/// `2001:db8:<10+N>::<10+vmid%240>/64`, `ip6=dhcp` that address as /128; `manual` or
/// unset: none), then the EUI-64 link-local address every veth gets.
fn addresses(
    vmid: u32,
    idx: u32,
    props: &std::collections::BTreeMap<&str, &str>,
    mac: &str,
) -> Vec<(&'static str, String, u32)> {
    let host = 10 + vmid % 240;
    let cidr = |v: &str, default: u32| {
        let (ip, len) = v.split_once('/').unwrap_or((v, ""));
        (ip.to_string(), len.parse().unwrap_or(default))
    };
    let mut out = Vec::new();
    match props.get("ip").copied() {
        Some("dhcp") => out.push(("inet", format!("192.168.{}.{host}", 10 + idx), 24)),
        Some(v) if v.contains('/') => {
            let (ip, len) = cidr(v, 24);
            out.push(("inet", ip, len));
        }
        _ => {}
    }
    let slaac = format!("2001:db8:{:x}::{host:x}", 10 + idx);
    match props.get("ip6").copied() {
        Some("auto") => out.push(("inet6", slaac, 64)),
        Some("dhcp") => out.push(("inet6", slaac, 128)),
        Some(v) if v.contains('/') => {
            let (ip, len) = cidr(v, 64);
            out.push(("inet6", ip, len));
        }
        _ => {}
    }
    let bytes: Vec<u8> = mac.split(':').filter_map(|b| u8::from_str_radix(b, 16).ok()).collect();
    if bytes.len() == 6 {
        out.push(("inet6", crate::qemu::agent::link_local(&bytes), 64));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_follow_the_net_key() {
        let props = |s: &'static str| {
            s.split(',')
                .filter_map(|p| p.split_once('='))
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        let mac = "bc:24:11:20:00:01";
        let a = addresses(200, 0, &props("name=eth0,ip=192.0.2.50/26,ip6=auto"), mac);
        assert_eq!(a[0], ("inet", "192.0.2.50".to_string(), 26));
        assert_eq!(a[1], ("inet6", "2001:db8:a::d2".to_string(), 64));
        assert_eq!(a[2], ("inet6", "fe80::be24:11ff:fe20:1".to_string(), 64));
        let a = addresses(200, 1, &props("name=eth1,ip=dhcp"), mac);
        assert_eq!(a[0], ("inet", "192.168.11.210".to_string(), 24));
        assert_eq!(a.len(), 2);
        let a = addresses(200, 0, &props("name=eth0,ip=manual"), mac);
        assert_eq!(a.len(), 1, "only the link-local address: {a:?}");
    }
}
