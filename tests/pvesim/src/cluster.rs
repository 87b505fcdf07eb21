//! Cluster-wide endpoints: `/version`, `/cluster/nextid`, `/cluster/status`,
//! `/cluster/resources`, `/nodes`.

use crate::api::Ctx;
use crate::auth;
use crate::broadcast;
use crate::error::{ApiError, ApiResult};
use crate::state::{Cluster, Guest, GuestKind};
use crate::storage;
use crate::util::now_ms;
use serde_json::{json, Map, Value};

pub const PVE_REPOID: &str = "0a1b2c3d4e5f6a7b";

/// `GET /nodes/{node}/version` (pve-manager's `PVE::API2::Nodes` `version`, i.e.
/// `PVE::pvecfg::version_info`): the node's pve-manager version, its release
/// (`major.minor`) and the build's short git id.
pub fn node_version(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    Ok(version_info(ctx.c.node_pve_version(&node)))
}

fn version_info(version: &str) -> Value {
    let release = version.split('.').take(2).collect::<Vec<_>>().join(".");
    json!({"version": version, "release": release, "repoid": PVE_REPOID})
}

/// `GET /version` (pve-manager's `PVE::API2` `version`, not proxied): the version info
/// of the node that answers (the first one, see [`status`]) plus datacenter.cfg's
/// `console` when it is set (the schema marks it optional).
pub fn version(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let answering = ctx.c.nodes.first().map(|n| n.name.clone()).unwrap_or_default();
    let mut out = version_info(ctx.c.node_pve_version(&answering));
    if let Some(console) = ctx.c.datacenter.get("console") {
        out["console"] = json!(console);
    }
    Ok(out)
}

/// `GET /cluster/status` (pve-manager `PVE::API2::Cluster`, `get_status`; `Sys.Audit` on
/// `/`, checked by the schema): the `cluster` entry from pmxcfs's cluster info, then one
/// `node` entry per member. Every scenario is a cluster whose nodes joined once each, so
/// the corosync config version is the node count; the node answering is the first one;
/// a node is online unless the scenario or a node fault says otherwise, and the cluster
/// is quorate with more than half of the votes (one per node) online.
pub fn status(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let names: Vec<String> = ctx.c.nodes.iter().map(|n| n.name.clone()).collect();
    let online: Vec<bool> = names.iter().map(|n| ctx.sim.node_reachable(ctx.c, n)).collect();
    let votes = online.iter().filter(|o| **o).count();
    let mut out = vec![json!({
        "type": "cluster", "id": "cluster", "name": ctx.c.cluster_name, "nodes": names.len(),
        "version": names.len(), "quorate": if votes * 2 > names.len() { 1 } else { 0 },
    })];
    for (i, (name, up)) in names.iter().zip(&online).enumerate() {
        let mut entry = json!({
            "type": "node", "id": format!("node/{name}"), "name": name, "nodeid": i + 1,
            "local": if i == 0 { 1 } else { 0 }, "online": if *up { 1 } else { 0 }, "level": "",
        });
        if let Some(ip) = node_ip(ctx.c, name) {
            entry["ip"] = json!(ip);
        }
        out.push(entry);
    }
    Ok(Value::Array(out))
}

/// The node pveproxy answers on, for every call not proxied elsewhere: the first one
/// (`/cluster/status` marks it `local`).
pub fn answering_node(c: &Cluster) -> String {
    c.nodes.first().map(|n| n.name.clone()).unwrap_or_default()
}

/// The address corosync knows a node by: its first addressed interface (by name), without
/// the prefix length; none when the scenario gives the node no address.
pub fn node_ip(c: &Cluster, name: &str) -> Option<String> {
    let node = c.node(name)?;
    let first = node.addresses.values().next()?;
    Some(first.cidr.split('/').next().unwrap_or(&first.cidr).to_string())
}

/// `GET /cluster/nextid` (pve-manager `PVE::API2::Cluster`, `nextid`): a given `vmid` back
/// if no guest has it (`VM <id> already exists` for containers too), else the lowest free
/// id in datacenter.cfg's `next-id` range (default `lower=100,upper=1000000`, upper
/// exclusive). Nothing is reserved. Returned as a string.
pub fn nextid(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    if let Some(v) = ctx.get("vmid") {
        let id: u32 = v.parse().unwrap_or(0);
        if ctx.c.guests.contains_key(&id) {
            return Err(ApiError::param("vmid", format!("VM {id} already exists")));
        }
        return Ok(json!(id.to_string()));
    }
    let (lower, upper) = next_id_range(ctx.c.datacenter.get("next-id").map(String::as_str));
    (lower..upper)
        .find(|id| !ctx.c.guests.contains_key(id))
        .map(|id| json!(id.to_string()))
        .ok_or_else(|| ApiError::internal(format!("unable to get any free VMID in range [{lower}, {upper}]")))
}

/// datacenter.cfg's `next-id` property string (`lower=…,upper=…`), each bound defaulted.
fn next_id_range(next_id: Option<&str>) -> (u32, u32) {
    let (mut lower, mut upper) = (100, 1_000_000);
    for part in next_id.unwrap_or("").split(',') {
        match part.split_once('=') {
            Some(("lower", v)) => lower = v.parse().unwrap_or(lower),
            Some(("upper", v)) => upper = v.parse().unwrap_or(upper),
            _ => {}
        }
    }
    (lower, upper)
}

/// The `/cluster/resources` record of a guest, honouring the status-broadcast lag.
pub fn guest_resource(ctx: &Ctx<'_>, g: &Guest) -> Value {
    let kind = if g.kind == GuestKind::Qemu { "qemu" } else { "lxc" };
    let mut m = Map::new();
    m.insert("id".into(), json!(format!("{kind}/{}", g.vmid)));
    m.insert("type".into(), json!(kind));
    m.insert("vmid".into(), json!(g.vmid));
    m.insert("node".into(), json!(g.node));
    let lagging = now_ms().saturating_sub(g.created_ms) < ctx.sim.cfg.resources_lag_ms;
    // A guest's figures are its node's broadcast (its rrd entry), kept for 300 s after
    // the node stops sending; without one the guest is `unknown`.
    let broadcast = broadcast::of(ctx.sim, ctx.c, &g.node).has_data();
    if let Some(lock) = g.conf.current.get("lock") {
        m.insert("lock".into(), json!(lock));
    }
    if let Some(tags) = g.conf.current.get("tags") {
        m.insert("tags".into(), json!(tags));
    }
    // Pool membership (user.cfg) and HA state are not part of the status broadcast.
    if let Some(p) = ctx.c.pool_of(g.vmid) {
        if auth::has(ctx.c, ctx.who, &format!("/pool/{}", p.poolid), "Pool.Audit") {
            m.insert("pool".into(), json!(p.poolid));
        }
    }
    if let Some(state) = crate::ha::listed_state(ctx.c, g.vmid) {
        m.insert("hastate".into(), json!(state));
    }
    if lagging || !broadcast {
        m.insert("status".into(), json!("unknown"));
        return Value::Object(m);
    }
    let s = if g.kind == GuestKind::Lxc {
        crate::lxc::ct_stats(ctx.c, g)
    } else {
        crate::qemu::info::stats(ctx, g)
    };
    for k in [
        "name",
        "status",
        "uptime",
        "cpu",
        "mem",
        "memhost",
        "maxmem",
        "maxdisk",
        "disk",
        "netin",
        "netout",
        "diskread",
        "diskwrite",
    ] {
        if let Some(v) = s.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    if g.paused {
        m.insert("status".into(), json!("paused"));
    }
    // The status daemon has not broadcast the last start/stop yet.
    if let Some(pc) = g
        .power_change
        .filter(|pc| now_ms().saturating_sub(pc.at_ms) < ctx.sim.cfg.status_lag_ms)
    {
        m.insert(
            "status".into(),
            json!(if pc.was_running { "running" } else { "stopped" }),
        );
        if !pc.was_running {
            m.insert("uptime".into(), json!(0));
        }
    }
    m.insert("maxcpu".into(), s.get("cpus").cloned().unwrap_or(json!(1)));
    m.insert(
        "template".into(),
        json!(if g.conf.current.get("template").is_some_and(|t| t == "1") {
            1
        } else {
            0
        }),
    );
    Value::Object(m)
}

/// A node's entry as `extract_node_stats` builds it from the membership and the status
/// broadcast ([`broadcast`]): `level` whenever the broadcast has the node; `maxcpu`,
/// `maxmem`, `maxdisk` too with Sys.Audit on `/nodes/<node>`, even for a node offline less
/// than 300 s; `cpu`, `mem`, `disk`, `uptime` only while it is online.
fn node_record(ctx: &Ctx<'_>, name: &str) -> Map<String, Value> {
    let n = ctx.c.node(name).cloned();
    let online = ctx.sim.node_reachable(ctx.c, name);
    let b = broadcast::of(ctx.sim, ctx.c, name);
    let mut m = Map::new();
    m.insert("id".into(), json!(format!("node/{name}")));
    m.insert("node".into(), json!(name));
    m.insert("type".into(), json!("node"));
    m.insert("status".into(), json!(broadcast::node_status(online, b)));
    let Some(n) = n.filter(|_| b.has_data()) else {
        return m;
    };
    m.insert("level".into(), json!(""));
    if !auth::has(ctx.c, ctx.who, &format!("/nodes/{name}"), "Sys.Audit") {
        return m;
    }
    m.insert("maxcpu".into(), json!(n.maxcpu));
    m.insert("maxmem".into(), json!(n.maxmem));
    m.insert("maxdisk".into(), json!(100u64 << 30));
    if online {
        let used_mem: u64 = ctx
            .c
            .guests
            .values()
            .filter(|g| g.node == name && g.running)
            .map(|g| crate::qemu::info::memory_bytes(g) / 2)
            .sum();
        m.insert("cpu".into(), json!(0.0312));
        m.insert("mem".into(), json!(4_294_967_296u64 + used_mem));
        m.insert("disk".into(), json!(9u64 << 30));
        m.insert("uptime".into(), json!(864_000));
    }
    m
}

/// `GET /nodes` (pve-manager `PVE::API2::Nodes` `index`): each node's
/// `extract_node_stats` entry plus its `ssl_fingerprint`, which `/cluster/resources` does
/// not carry.
pub fn nodes(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let names: Vec<String> = ctx.c.nodes.iter().map(|n| n.name.clone()).collect();
    let entry = |n: &String| {
        let mut m = node_record(ctx, n);
        m.insert("ssl_fingerprint".into(), json!(ctx.sim.fingerprint.clone()));
        Value::Object(m)
    };
    Ok(Value::Array(names.iter().map(entry).collect()))
}

/// A storage's `/cluster/resources` record on one node (pve-manager `API2Tools.pm`,
/// `extract_storage_stats`): `status: unknown` and no sizes unless the node's pvestatd
/// broadcast the storage's status, which it does only for a storage it could activate.
pub fn storage_resource(ctx: &Ctx<'_>, sd: &crate::state::StorageDef, node: &str) -> Value {
    let online = ctx.sim.node_reachable(ctx.c, node);
    let mut entry = json!({
        "id": format!("storage/{node}/{}", sd.id), "type": "storage", "storage": sd.id,
        "node": node, "plugintype": sd.kind, "status": if online { "available" } else { "unknown" },
        "shared": if sd.shared { 1 } else { 0 }, "content": sd.content.join(","),
        "disk": storage::used(ctx.c, sd, node), "maxdisk": sd.total,
    });
    if !sd.active_on(node) {
        entry["status"] = json!("unknown");
        if let Some(m) = entry.as_object_mut() {
            m.remove("disk");
            m.remove("maxdisk");
        }
    }
    entry
}

/// In PVE's order: pools, guests, nodes, storages, then (without a `type` filter
/// only: the schema's enum has no `network`) each node's SDN zone `localnetwork`.
pub fn resources(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let ty = ctx.get("type").map(str::to_string);
    let want = |t: &str| ty.as_deref().is_none_or(|x| x == t);
    let mut out = Vec::new();
    if want("pool") {
        let mut pools: Vec<&String> = ctx.c.pools.iter().map(|p| &p.poolid).collect();
        pools.sort();
        for p in pools {
            if auth::has(ctx.c, ctx.who, &format!("/pool/{p}"), "Pool.Audit") {
                out.push(json!({"id": format!("/pool/{p}"), "pool": p, "type": "pool"}));
            }
        }
    }
    if want("vm") {
        for g in ctx.c.guests.values() {
            if auth::has(ctx.c, ctx.who, &format!("/vms/{}", g.vmid), "VM.Audit") {
                out.push(guest_resource(ctx, g));
            }
        }
    }
    if want("node") {
        for n in ctx.c.nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>() {
            out.push(Value::Object(node_record(ctx, &n)));
        }
    }
    if want("storage") {
        for sd in &ctx.c.storages {
            if !auth::has(ctx.c, ctx.who, &format!("/storage/{}", sd.id), "Datastore.Audit") {
                continue;
            }
            // `storage_check_enabled` per node: a disabled storage is on no node.
            for n in ctx.c.nodes.iter().filter(|n| sd.enabled_on(&n.name)) {
                out.push(storage_resource(ctx, sd, &n.name));
            }
        }
    }
    if ty.is_none() && auth::has(ctx.c, ctx.who, "/sdn/zones/localnetwork", "SDN.Audit") {
        for n in &ctx.c.nodes {
            out.push(json!({
                "id": format!("network/{}/zone/localnetwork", n.name), "type": "network",
                "network-type": "zone", "network": "localnetwork", "node": n.name, "status": "ok",
            }));
        }
    }
    Ok(Value::Array(out))
}
