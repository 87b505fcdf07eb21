//! Guest agent answers for running VMs with `agent` enabled, after a boot delay.

use super::info::agent_enabled;
use super::vm;
use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::util::now_ms;
use serde_json::{json, Value};

pub fn network_get_interfaces(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let g = vm(ctx.c, &node, vmid)?;
    if !g.conf.current.get("agent").is_some_and(|a| agent_enabled(a)) {
        return Err(ApiError::internal("No QEMU guest agent configured"));
    }
    if !g.running {
        return Err(ApiError::internal(format!("VM {vmid} is not running")));
    }
    if let Some(f) = ctx.sim.faults().agent(vmid) {
        let msg = f.message.clone().unwrap_or_else(|| "QEMU guest agent is not running".into());
        return Err(ApiError::internal(msg));
    }
    let booted = g.started_ms.is_some_and(|s| now_ms().saturating_sub(s) >= ctx.sim.cfg.agent_delay_ms);
    if !booted {
        return Err(ApiError::internal("QEMU guest agent is not running"));
    }
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
    let conf = &g.conf.current;
    for i in 0..32u32 {
        let Some(v) = conf.get(&format!("net{i}")) else { continue };
        let mac = v.split(',').next().and_then(|p| p.split_once('=')).map(|(_, m)| m.to_lowercase()).unwrap_or_default();
        let host = 10 + (vmid % 240);
        let ll: Vec<String> = mac.split(':').map(str::to_string).collect();
        let v6 = if ll.len() == 6 {
            let b0 = u8::from_str_radix(&ll[0], 16).unwrap_or(0) ^ 0x02;
            format!("fe80::{:02x}{}:{}ff:fe{}:{}{}", b0, ll[1], ll[2], ll[3], ll[4], ll[5])
        } else {
            "fe80::1".into()
        };
        out.push(json!({
            "name": format!("ens{}", 18 + i), "hardware-address": mac,
            "ip-addresses": [
                {"ip-address": format!("192.168.{}.{}", 10 + i, host), "ip-address-type": "ipv4", "prefix": 24},
                {"ip-address": v6, "ip-address-type": "ipv6", "prefix": 64}
            ],
            "statistics": stats(1),
        }));
    }
    Ok(json!({"result": out}))
}
