//! Resource pools (`user.cfg`): `GET /pools` (with PVE 8.1's `?poolid=` form) and the
//! older `GET /pools/{poolid}`, pool membership of guests and its update (`PUT`).

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
        let pool = ctx.c.pool(&poolid).cloned().ok_or_else(|| missing(&poolid))?;
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
    let pool = ctx.c.pool(&poolid).cloned().ok_or_else(|| missing(&poolid))?;
    Ok(info(ctx, &pool, ty.as_deref(), false))
}

/// `PUT /pools` (PVE 8.1's form, `poolid` a parameter, nested `parent/child` ids) and
/// the older `PUT /pools/{poolid}`: both run pve-manager's update_pool. Members are
/// added (`delete` removes them); a guest already in another pool moves only with
/// `allow-move`. Errors inside the user.cfg lock read `update pools failed: …` (500).
pub fn update(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let poolid = ctx.get("poolid").unwrap_or("").to_string();
    let failed = |msg: String| ApiError::internal(format!("update pools failed: {msg}"));
    let Some(index) = ctx.c.pools.iter().position(|p| p.poolid == poolid) else {
        return Err(failed(format!("pool '{poolid}' does not exist")));
    };
    let delete = ctx.flag("delete");
    let allow_move = ctx.flag("allow-move");
    let mut pools = ctx.c.pools.clone();
    if let Some(comment) = ctx.get("comment") {
        pools[index].comment = Some(comment.to_string());
    }
    let list = |v: Option<&str>| -> Vec<String> {
        v.unwrap_or("")
            .split([',', ';', ' ', '\0'])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    for vmid in list(ctx.get("vms")) {
        let path = format!("/vms/{vmid}");
        if !["Permissions.Modify", "VM.Allocate"]
            .iter()
            .any(|p| auth::has(ctx.c, ctx.who, &path, p))
        {
            return Err(failed(format!(
                "Permission check failed ({path}, Permissions.Modify|VM.Allocate)"
            )));
        }
        let id: u32 = vmid.parse().map_err(|_| failed(format!("invalid vmid '{vmid}'")))?;
        let member = pools[index].vms.contains(&id);
        if delete {
            if !member {
                return Err(failed(format!("VM {id} is not a pool member")));
            }
            pools[index].vms.retain(|v| *v != id);
            continue;
        }
        if member {
            return Err(failed(format!("VM {id} is already a pool member")));
        }
        if let Some(existing) = pools.iter().find(|p| p.vms.contains(&id)).map(|p| p.poolid.clone()) {
            if !allow_move {
                return Err(failed(format!(
                    "VM {id} belongs already to pool '{existing}' and 'allow-move' is not set"
                )));
            }
            if !auth::has(ctx.c, ctx.who, &format!("/pool/{existing}"), "Pool.Allocate") {
                return Err(failed(format!(
                    "Permission check failed (/pool/{existing}, Pool.Allocate)"
                )));
            }
        }
        for p in &mut pools {
            p.vms.retain(|v| *v != id);
        }
        pools[index].vms.push(id);
        pools[index].vms.sort_unstable();
    }
    for sid in list(ctx.get("storage")) {
        let path = format!("/storage/{sid}");
        if !["Permissions.Modify", "Datastore.Allocate"]
            .iter()
            .any(|p| auth::has(ctx.c, ctx.who, &path, p))
        {
            return Err(failed(format!(
                "Permission check failed ({path}, Permissions.Modify|Datastore.Allocate)"
            )));
        }
        let pool = &mut pools[index];
        let member = pool.storage.contains(&sid);
        match (delete, member) {
            (true, false) => return Err(failed(format!("Storage '{sid}' is not a pool member"))),
            (true, true) => pool.storage.retain(|s| *s != sid),
            (false, true) => return Err(failed(format!("Storage '{sid}' is already a pool member"))),
            (false, false) => pool.storage.push(sid),
        }
    }
    // user.cfg is written once, at the end: a failure changes nothing.
    ctx.c.pools = pools;
    Ok(Value::Null)
}

/// pve-manager 8.1.0 (4448f8d3, nested pools) added `PUT /pools` and `DELETE /pools`
/// with `poolid` as a parameter, and `poolid` to `GET /pools`; before it only the
/// `/pools/{poolid}` forms exist. A cluster older than 8.1 answers as that release:
/// 501 for the methods it lacks (here, before the permission check, as the router does).
pub fn gate_route(c: &Cluster, method: &str, template: &str) -> ApiResult<()> {
    if template == "/pools" && matches!(method, "PUT" | "DELETE") && !c.pve_at_least(8, 1) {
        return Err(ApiError::not_implemented(method, "/pools"));
    }
    Ok(())
}

/// The parameters of `GET /pools` before 8.1.0, which gave it `poolid` and `type`: none
/// (`additionalProperties => 0, properties => {}`), so the schema's validation refuses
/// each parameter sent, all in one answer. `None`: the method's schema holds.
pub fn parameters_before_8_1(c: &Cluster, method: &str, template: &str) -> Option<Value> {
    (method == "GET" && template == "/pools" && !c.pve_at_least(8, 1))
        .then(|| json!({"additionalProperties": 0, "properties": {}}))
}

/// `POST /pools` (`create_pool`): under the `user.cfg` lock the id must be new, a nested
/// id's parent must exist, and (pve-manager 9.0, 7eadbed6) the last part must start with
/// a letter; errors read `create pool failed: …`.
pub fn create(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let poolid = ctx.get("poolid").unwrap_or("").to_string();
    let failed = |msg: String| ApiError::internal(format!("create pool failed: {msg}"));
    if ctx.c.pool(&poolid).is_some() {
        return Err(failed(format!("pool '{poolid}' already exists")));
    }
    let leaf = match poolid.rsplit_once('/') {
        Some((parent, leaf)) => {
            if ctx.c.pool(parent).is_none() {
                return Err(failed(format!("parent '{parent}' of pool '{poolid}' does not exist")));
            }
            leaf
        }
        None => poolid.as_str(),
    };
    if ctx.c.pve_at_least(9, 0) && !leaf.starts_with(|ch: char| ch.is_ascii_alphabetic()) {
        return Err(failed("pool name must start with a letter".into()));
    }
    let comment = ctx.get("comment").filter(|c| !c.is_empty()).map(str::to_string);
    ctx.c.pools.push(PoolDef {
        poolid,
        comment,
        vms: Vec::new(),
        storage: Vec::new(),
    });
    Ok(Value::Null)
}

/// The direct child pools of `poolid` (`a/b` of `a`), sorted.
pub fn children(c: &Cluster, poolid: &str) -> Vec<String> {
    let prefix = format!("{poolid}/");
    let mut out: Vec<String> = c
        .pools
        .iter()
        .filter(|p| p.poolid.strip_prefix(&prefix).is_some_and(|rest| !rest.contains('/')))
        .map(|p| p.poolid.clone())
        .collect();
    out.sort();
    out
}

/// `DELETE /pools?poolid=` and `DELETE /pools/{poolid}` (`delete_pool`): refused while
/// the pool has a child pool, a guest that still exists or a storage still configured
/// (the first in sorted order is named); then [`delete_pool_acl`].
pub fn delete(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let poolid = ctx.get("poolid").unwrap_or("").to_string();
    let failed = |msg: String| ApiError::internal(format!("delete pool failed: {msg}"));
    let Some(pool) = ctx.c.pool(&poolid).cloned() else {
        return Err(failed(format!("pool '{poolid}' does not exist")));
    };
    if let Some(child) = children(ctx.c, &poolid).first() {
        return Err(failed(format!(
            "pool '{poolid}' is not empty (contains pool '{child}')"
        )));
    }
    let mut vms = pool.vms.clone();
    vms.sort_by_key(|v| v.to_string());
    if let Some(vmid) = vms.iter().find(|v| ctx.c.guests.contains_key(v)) {
        return Err(failed(format!("pool '{poolid}' is not empty (contains VM {vmid})")));
    }
    let mut storages = pool.storage.clone();
    storages.sort();
    if let Some(sid) = storages.iter().find(|s| ctx.c.storage(s).is_some()) {
        return Err(failed(format!(
            "pool '{poolid}' is not empty (contains storage '{sid}')"
        )));
    }
    ctx.c.pools.retain(|p| p.poolid != poolid);
    delete_pool_acl(ctx.c, &poolid);
    Ok(Value::Null)
}

/// pve-access-control's `delete_pool_acl`: `delete $acl_root->{children}->{pool}->
/// {children}->{$pool}`. The ACL tree is split at `/` (`find_acl_tree_node`), so for an
/// id `a` the whole subtree `/pool/a`, `/pool/a/…` goes, and a nested id `a/b` names no
/// node there: its entries stay.
fn delete_pool_acl(c: &mut Cluster, poolid: &str) {
    if poolid.contains('/') {
        return;
    }
    let path = format!("/pool/{poolid}");
    let below = format!("{path}/");
    let kept = |a: &crate::state::AclDef| a.path != path && !a.path.starts_with(&below);
    c.acls.retain(kept);
    c.group_acls.retain(kept);
}
