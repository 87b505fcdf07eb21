//! Resource pools (`user.cfg`): `GET /pools` (with PVE 8.1's `?poolid=` form) and the
//! older `GET /pools/{poolid}`, pool membership of guests.

use crate::api::Ctx;
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::state::{Cluster, PoolDef};
use serde_json::{json, Map, Value};

fn missing(poolid: &str) -> ApiError {
    ApiError::internal(format!("pool '{poolid}' does not exist"))
}

/// `check_pool_exist` of PVE's RPC environment (create, clone with `pool`).
pub fn check_exists(c: &Cluster, poolid: &str) -> ApiResult<()> {
    c.pool(poolid).map(|_| ()).ok_or_else(|| missing(poolid))
}

/// `add_vm_to_pool`: a guest is in at most one pool.
pub fn add_vm(c: &mut Cluster, poolid: &str, vmid: u32) {
    remove_vm(c, vmid);
    if let Some(p) = c.pools.iter_mut().find(|p| p.poolid == poolid) {
        p.vms.push(vmid);
        p.vms.sort_unstable();
    }
}

/// A destroyed guest leaves its pool.
pub fn remove_vm(c: &mut Cluster, vmid: u32) {
    for p in &mut c.pools {
        p.vms.retain(|id| *id != vmid);
    }
}

/// Members as `extract_vm_stats` / `extract_storage_stats` report them.
fn members(ctx: &Ctx<'_>, pool: &PoolDef, ty: Option<&str>) -> Vec<Value> {
    let mut out = Vec::new();
    for id in &pool.vms {
        let Some(g) = ctx.c.guests.get(id) else {
            continue;
        };
        let mut v = crate::cluster::guest_resource(ctx, g);
        if ty.is_some_and(|t| v["type"] != t) {
            continue;
        }
        if let Some(m) = v.as_object_mut() {
            for k in ["lock", "tags", "pool", "hastate"] {
                m.remove(k);
            }
        }
        out.push(v);
    }
    if ty.is_none_or(|t| t == "storage") {
        for sid in &pool.storage {
            let Some(sd) = ctx.c.storage(sid) else {
                continue;
            };
            let node = ctx
                .c
                .nodes
                .iter()
                .find(|n| sd.on_node(&n.name))
                .map(|n| n.name.clone())
                .unwrap_or_default();
            out.push(crate::cluster::storage_resource(ctx, sd, &node));
        }
    }
    out
}

fn info(ctx: &Ctx<'_>, pool: &PoolDef, ty: Option<&str>, with_id: bool) -> Value {
    let mut m = Map::new();
    m.insert("members".into(), Value::Array(members(ctx, pool, ty)));
    if let Some(c) = &pool.comment {
        m.insert("comment".into(), json!(c));
    }
    if with_id {
        m.insert("poolid".into(), json!(pool.poolid));
    }
    Value::Object(m)
}

/// `GET /pools`: without `poolid` the pools the user may audit (id and comment);
/// with it, that pool and its members. (PVE checks `Pool.Audit` for the `poolid`
/// form but ignores the result.)
pub fn index(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let ty = ctx.get("type").map(str::to_string);
    if let Some(poolid) = ctx.get("poolid").map(str::to_string) {
        let pool = ctx
            .c
            .pool(&poolid)
            .cloned()
            .ok_or_else(|| missing(&poolid))?;
        return Ok(json!([info(ctx, &pool, ty.as_deref(), true)]));
    }
    let mut out = Vec::new();
    for p in &ctx.c.pools {
        if !auth::has(ctx.c, ctx.who, &format!("/pool/{}", p.poolid), "Pool.Audit") {
            continue;
        }
        let mut m = Map::new();
        m.insert("poolid".into(), json!(p.poolid));
        if let Some(c) = &p.comment {
            m.insert("comment".into(), json!(c));
        }
        out.push(Value::Object(m));
    }
    out.sort_by(|a, b| a["poolid"].as_str().cmp(&b["poolid"].as_str()));
    Ok(Value::Array(out))
}

/// `GET /pools/{poolid}` (deprecated form; `Pool.Audit` checked by the schema).
pub fn read(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let poolid = ctx.get("poolid").unwrap_or("").to_string();
    let ty = ctx.get("type").map(str::to_string);
    let pool = ctx
        .c
        .pool(&poolid)
        .cloned()
        .ok_or_else(|| missing(&poolid))?;
    Ok(info(ctx, &pool, ty.as_deref(), false))
}
