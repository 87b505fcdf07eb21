//! The QEMU guest agent of a running VM, as qemu-server reaches it.
//!
//! qemu-server's checks, in its order (`assert_agent_available`): no `agent` key at all →
//! `No QEMU guest agent configured`; VM stopped → `VM <id> is not running`; no agent
//! socket (`agent` off in the config QEMU started with) or the agent in the guest not
//! answering (not yet started, or a fault) → `QEMU guest agent is not running`. The agent of a new boot
//! answers only `delay_ms` after that boot, so nothing of the boot before is ever read.
//!
//! The guest's addresses: the agent answers `agent_delay_ms` after a start; at first a
//! NIC has only its IPv6 link-local address (and on Windows guests the APIPA
//! 169.254/16 address DHCP falls back to); `address_delay_ms` later it has its usable
//! ones: the static `ip=`/`ip6=` of `ipconfigN` as the cloud-init drive holds it, else
//! a DHCP IPv4 address (unless the scenario turns IPv4 off) and, when the scenario
//! says so, a SLAAC IPv6 address.

use super::info::agent_enabled;
use super::vm;
use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::state::{Guest, GuestAgentSpec};
use crate::util::now_ms;
use serde_json::{json, Value};

/// `POST …/agent/ping`: `{"result": {}}` once the guest's agent answers.
pub fn ping(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    answering(ctx)?;
    Ok(json!({"result": {}}))
}

/// The guest, how its agent behaves and how long it has answered (ms), or PVE's refusal.
fn answering<'c>(ctx: &'c Ctx<'_>) -> ApiResult<(&'c Guest, GuestAgentSpec, u64)> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let g = vm(ctx.c, &node, vmid)?;
    let Some(agent) = g.conf.current.get("agent") else {
        return Err(ApiError::internal("No QEMU guest agent configured"));
    };
    if !g.running {
        return Err(ApiError::internal(format!("VM {vmid} is not running")));
    }
    if let Some(f) = ctx.sim.faults().agent(vmid) {
        let msg = f
            .message
            .clone()
            .unwrap_or_else(|| "QEMU guest agent is not running".into());
        return Err(ApiError::internal(msg));
    }
    let spec = g.agent.clone().unwrap_or_default();
    let up_for = g.started_ms.map(|s| now_ms().saturating_sub(s)).unwrap_or(0);
    let answers_after = spec.delay_ms.unwrap_or(ctx.sim.cfg.agent_delay_ms);
    if !agent_enabled(agent) || up_for < answers_after {
        return Err(ApiError::internal("QEMU guest agent is not running"));
    }
    Ok((g, spec, up_for - answers_after))
}

pub fn network_get_interfaces(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (g, spec, answering_for) = answering(ctx)?;
    let addressed = answering_for >= spec.address_delay_ms.unwrap_or(ctx.sim.cfg.address_delay_ms);
    let up = super::info::uptime(g).max(1);
    let stats = |scale: u64| {
        json!({"rx-bytes": up * 1200 * scale, "rx-packets": up * 9 * scale, "rx-errs": 0, "rx-dropped": 0,
               "tx-bytes": up * 800 * scale, "tx-packets": up * 6 * scale, "tx-errs": 0, "tx-dropped": 0})
    };
    let mut out = vec![json!({
        "name": "lo", "hardware-address": "00:00:00:00:00:00",
        "ip-addresses": [
            {"ip-address": "127.0.0.1", "ip-address-type": "ipv4", "prefix": 8},
            {"ip-address": "::1", "ip-address-type": "ipv6", "prefix": 128}
        ],
        "statistics": stats(0),
    })];
    let windows = g.conf.current.get("ostype").is_some_and(|o| o.starts_with('w'));
    for i in 0..32u32 {
        let Some(v) = g.conf.current.get(&format!("net{i}")) else {
            continue;
        };
        let Some(mac) = mac_of(v) else { continue };
        let name = if windows {
            format!("Ethernet {}", i + 1)
        } else {
            format!("ens{}", 18 + i)
        };
        out.push(json!({
            "name": name, "hardware-address": mac,
            "ip-addresses": addresses(g, &spec, i, &mac, windows, addressed),
            "statistics": stats(1),
        }));
    }
    Ok(json!({"result": out}))
}

/// The NIC's MAC in the agent's lower-case spelling (`virtio=BC:24:11:…,bridge=…`).
fn mac_of(net: &str) -> Option<String> {
    let (_, mac) = net.split(',').next()?.split_once('=')?;
    (mac.split(':').count() == 6).then(|| mac.to_lowercase())
}

/// What `netN` has, link-local first (as guests list them while they come up).
fn addresses(g: &Guest, spec: &GuestAgentSpec, i: u32, mac: &str, windows: bool, addressed: bool) -> Vec<Value> {
    let entry =
        |ip: String, family: &str, prefix: u32| json!({"ip-address": ip, "ip-address-type": family, "prefix": prefix});
    let bytes: Vec<u8> = mac.split(':').map(|b| u8::from_str_radix(b, 16).unwrap_or(0)).collect();
    let mut out = vec![entry(link_local(&bytes), "ipv6", 64)];
    if !addressed {
        if windows {
            out.push(entry(format!("169.254.{}.{}", bytes[4], bytes[5].max(1)), "ipv4", 16));
        }
        return out;
    }
    let ipconfig = cloud_init_ipconfig(g, i);
    let field = |name: &str| {
        ipconfig
            .as_deref()
            .and_then(|c| {
                c.split(',')
                    .find_map(|p| p.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
            })
            .map(str::to_string)
    };
    let host = 10 + (g.vmid % 240);
    match field("ip").filter(|v| v.contains('/')) {
        Some(cidr) => {
            let (ip, len) = cidr.split_once('/').unwrap_or((&cidr, "24"));
            out.push(entry(ip.to_string(), "ipv4", len.parse().unwrap_or(24)));
        }
        None if spec.ipv4 => out.push(entry(format!("192.168.{}.{host}", 10 + i), "ipv4", 24)),
        None => {}
    }
    match field("ip6").filter(|v| v.contains('/')) {
        Some(cidr) => {
            let (ip, len) = cidr.split_once('/').unwrap_or((&cidr, "64"));
            out.push(entry(ip.to_string(), "ipv6", len.parse().unwrap_or(64)));
        }
        None if spec.ipv6 => out.push(entry(format!("2001:db8:{:x}::{host:x}", 10 + i), "ipv6", 64)),
        None => {}
    }
    out
}

/// `ipconfigN` as the guest got it: from the cloud-init drive (none without a drive).
fn cloud_init_ipconfig(g: &Guest, i: u32) -> Option<String> {
    if !super::cloudinit::has_drive(&g.conf.current) {
        return None;
    }
    super::cloudinit::drive_value(g, &format!("ipconfig{i}")).map(str::to_string)
}

/// The EUI-64 link-local address of a MAC.
pub(crate) fn link_local(b: &[u8]) -> String {
    let group = |hi: u8, lo: u8| (u16::from(hi) << 8) | u16::from(lo);
    format!(
        "fe80::{:x}:{:x}:{:x}:{:x}",
        group(b[0] ^ 0x02, b[1]),
        group(b[2], 0xff),
        group(0xfe, b[3]),
        group(b[4], b[5])
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_local_follows_eui64() {
        assert_eq!(
            link_local(&[0xbc, 0x24, 0x11, 0x90, 0x00, 0x01]),
            "fe80::be24:11ff:fe90:1"
        );
        assert_eq!(
            mac_of("virtio=BC:24:11:90:00:01,bridge=vmbr0").as_deref(),
            Some("bc:24:11:90:00:01")
        );
        assert_eq!(mac_of("virtio,bridge=vmbr0"), None);
    }
}
