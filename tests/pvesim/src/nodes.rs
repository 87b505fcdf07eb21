//! Per-node endpoints other than guests: storages, network, tasks.

use crate::api::Ctx;
use crate::auth;
use crate::error::ApiResult;
use crate::storage;
use serde_json::{json, Value};

/// `GET /nodes/{node}/storage` (pve-storage `API2/Storage/Status.pm` `index`, from
/// `PVE::Storage::storage_info`): a disabled storage is listed with `enabled: 0` (left
/// out with `content` or `enabled=1`), one the node cannot activate with `active: 0`,
/// both without sizes. Not modelled: storages restricted to other nodes (PVE lists them
/// `enabled: 0` too); they are left out.
pub fn storage_list(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let content = ctx.get("content").map(str::to_string);
    let only = ctx.get("storage").map(str::to_string);
    let only_enabled = matches!(ctx.get("enabled"), Some("1" | "true"));
    let mut out = Vec::new();
    for sd in ctx.c.storages.iter().filter(|s| s.on_node(&node)) {
        if only.as_ref().is_some_and(|o| o != &sd.id) {
            continue;
        }
        if sd.disable && (content.is_some() || only_enabled) {
            continue;
        }
        if let Some(c) = &content {
            if !c.split(',').any(|x| sd.has_content(x)) {
                continue;
            }
        }
        let path = format!("/storage/{}", sd.id);
        if !auth::has(ctx.c, ctx.who, &path, "Datastore.Audit")
            && !auth::has(ctx.c, ctx.who, &path, "Datastore.AllocateSpace")
        {
            continue;
        }
        if !sd.active_on(&node) {
            // `storage_info`: sizes stay 0 and `active` 0 when activation fails.
            out.push(json!({
                "storage": sd.id, "type": sd.kind, "content": sd.content.join(","), "active": 0,
                "enabled": if sd.disable { 0 } else { 1 }, "shared": if sd.shared { 1 } else { 0 },
                "total": 0, "used": 0, "avail": 0,
            }));
            continue;
        }
        let used = storage::used(ctx.c, sd, &node);
        out.push(json!({
            "storage": sd.id, "type": sd.kind, "content": sd.content.join(","), "active": 1, "enabled": 1,
            "shared": if sd.shared { 1 } else { 0 }, "total": sd.total, "used": used,
            "avail": sd.total.saturating_sub(used), "used_fraction": used as f64 / sd.total.max(1) as f64,
        }));
    }
    Ok(Value::Array(out))
}

/// `GET /nodes/{node}/network`: the node's bridges (and the NIC each one bridges), so a
/// client can check that a bridge exists before attaching a NIC to it.
pub fn network_list(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let (bridges, addresses) = ctx
        .c
        .node(&node)
        .map(|n| (n.bridges.clone(), n.addresses.clone()))
        .unwrap_or_default();
    let kind = ctx.get("type").unwrap_or("");
    let want_bridges = matches!(kind, "" | "bridge" | "any_bridge" | "any_local_bridge" | "include_sdn");
    let want_eth = matches!(kind, "" | "eth");
    let mut out = Vec::new();
    for (i, bridge) in bridges.iter().enumerate() {
        let port = format!("eno{}", i + 1);
        if want_eth {
            // `altnames`: the kernel's alternative names of the port (`ip link`).
            out.push(json!({
                "iface": port, "type": "eth", "active": 1, "autostart": 0, "exists": 1,
                "altnames": [format!("enp{}s0", i + 1)],
                "families": ["inet"], "method": "manual", "method6": "manual", "priority": i * 2 + 1,
            }));
        }
        // A bridge the caller has no SDN privilege on (nor on a VLAN of it) is left out.
        let visible = ctx.who.is_root()
            || crate::acl::bridge_visible(ctx.c, ctx.who, "localnetwork", bridge, &["SDN.Audit", "SDN.Use"]);
        if want_bridges && visible {
            let mut b = json!({
                "iface": bridge, "type": "bridge", "active": 1, "autostart": 1,
                "bridge_ports": port, "bridge_stp": "off", "bridge_fd": "0",
                "families": ["inet"], "method": "manual", "method6": "manual", "priority": i * 2 + 2,
            });
            // A configured address: `address`/`netmask` split from the CIDR (netmask as
            // prefix length, like pve-common's interfaces parser), `method: static`.
            if let Some(a) = addresses.get(bridge) {
                let (addr, prefix) = a.cidr.split_once('/').unwrap_or((a.cidr.as_str(), "32"));
                b["cidr"] = json!(a.cidr);
                b["address"] = json!(addr);
                b["netmask"] = json!(prefix);
                b["method"] = json!("static");
                if let Some(gw) = &a.gateway {
                    b["gateway"] = json!(gw);
                }
            }
            out.push(b);
        }
    }
    Ok(Value::Array(out))
}

pub fn task_status(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    crate::tasks::status(ctx.c, ctx.who, &node, ctx.get("upid").unwrap_or(""))
}

/// `GET /nodes/{node}/tasks` with PVE's filters; `total` counts every match.
pub fn task_list(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let num = |k: &str| ctx.get(k).and_then(|s| s.parse::<u64>().ok());
    let text = |k: &str| ctx.get(k).filter(|s| !s.is_empty()).map(str::to_string);
    let errors = ctx.flag("errors");
    let statuses = if errors {
        Some(vec!["warning".into(), "error".into(), "unknown".into()])
    } else {
        text("statusfilter").map(|s| {
            s.split([',', ';', ' '])
                .filter(|x| !x.is_empty())
                .map(str::to_lowercase)
                .collect()
        })
    };
    let filter = crate::tasks::ListFilter {
        start: num("start").unwrap_or(0) as usize,
        limit: num("limit").unwrap_or(50) as usize,
        userfilter: text("userfilter"),
        typefilter: text("typefilter"),
        vmid: text("vmid"),
        since: num("since"),
        until: num("until"),
        statuses,
        source: text("source").unwrap_or_else(|| "archive".into()),
    };
    let (data, total) = crate::tasks::list(ctx.c, ctx.who, &node, &filter)?;
    ctx.extra.insert("total".into(), json!(total));
    Ok(data)
}

pub fn task_log(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let start = ctx.get("start").and_then(|s| s.parse().ok()).unwrap_or(0);
    let limit = ctx.get("limit").and_then(|s| s.parse().ok()).unwrap_or(50);
    let (data, total) = crate::tasks::log(ctx.c, ctx.who, &node, ctx.get("upid").unwrap_or(""), start, limit)?;
    ctx.extra.insert("total".into(), json!(total));
    Ok(data)
}
