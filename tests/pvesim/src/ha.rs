//! HA resources of the cluster (`/etc/pve/ha/resources.cfg`), as pve-ha-manager's
//! `/cluster/ha/resources` serves them. What the HA manager does with a VM (start,
//! stop, migrate on request) is in `qemu/ha.rs`.

use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::state::HaResource;
use serde_json::{json, Map, Value};

/// The config file's SHA-1, as PVE's section config reports it.
fn digest(resources: &[HaResource]) -> String {
    use sha1::{Digest, Sha1};
    let mut text = String::new();
    for r in resources {
        let (kind, name) = r.sid.split_once(':').unwrap_or(("vm", &r.sid));
        text.push_str(&format!("{kind}: {name}\n\tstate {}\n", r.state));
        if let Some(c) = &r.comment {
            text.push_str(&format!("\tcomment {c}\n"));
        }
        text.push('\n');
    }
    Sha1::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `GET /cluster/ha/resources`: each resource with `sid`, `type`, `digest` and its options.
pub fn index(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let ty = ctx.get("type").map(str::to_string);
    let d = digest(&ctx.c.ha_resources);
    let mut out = Vec::new();
    for r in &ctx.c.ha_resources {
        let kind = r.sid.split(':').next().unwrap_or("");
        if ty.as_deref().is_some_and(|t| t != kind) {
            continue;
        }
        let mut m = Map::new();
        m.insert("sid".into(), json!(r.sid));
        m.insert("type".into(), json!(kind));
        m.insert("state".into(), json!(r.state));
        m.insert("digest".into(), json!(d));
        if let Some(c) = &r.comment {
            m.insert("comment".into(), json!(c));
        }
        out.push(Value::Object(m));
    }
    Ok(Value::Array(out))
}

/// `POST /cluster/ha/resources`: `sid` is `vm:<id>`, `ct:<id>` or a bare guest id.
pub fn create(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let raw = ctx.get("sid").unwrap_or("").to_string();
    let (kind, name) = match raw.split_once(':') {
        Some((k, n)) => (k.to_string(), n.to_string()),
        None => {
            let kind = match raw.parse::<u32>().ok().and_then(|id| ctx.c.guests.get(&id)) {
                Some(g) if g.kind == crate::state::GuestKind::Lxc => "ct",
                Some(_) => "vm",
                None => return Err(ApiError::internal(format!("unable to find VM/CT '{raw}'"))),
            };
            (kind.to_string(), raw.clone())
        }
    };
    if kind != "vm" && kind != "ct" {
        return Err(ApiError::internal(format!("unknown resource type '{kind}'")));
    }
    let vmid: u32 = name
        .parse()
        .ok()
        .filter(|_| name.len() > 1 && !name.starts_with('0'))
        .ok_or_else(|| ApiError::internal("invalid VMID"))?;
    if !ctx.c.guests.contains_key(&vmid) {
        return Err(ApiError::internal(format!(
            "resource '{kind}:{vmid}' does not exists in cluster"
        )));
    }
    let sid = format!("{kind}:{vmid}");
    if ctx.c.ha_resources.iter().any(|r| r.sid == sid) {
        return Err(ApiError::internal(format!("resource ID '{sid}' already defined")));
    }
    let state = match ctx.get("state").unwrap_or("started") {
        "enabled" => "started",
        s => s,
    }
    .to_string();
    let comment = ctx.get("comment").map(str::to_string);
    ctx.c.ha_resources.push(HaResource { sid, state, comment });
    Ok(Value::Null)
}
