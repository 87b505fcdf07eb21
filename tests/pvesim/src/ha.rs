//! HA resources of the cluster (`/etc/pve/ha/resources.cfg`), as pve-ha-manager's
//! `/cluster/ha/resources` serves them, and the state the HA manager keeps of each
//! (`manager_status`). Whether a resource is HA-managed, and what the HA manager does
//! with a VM (start, stop, migrate on request), is in `qemu/ha.rs`.

use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::state::{Cluster, HaResource};
use serde_json::{json, Map, Value};

/// The requested states a resource may have (pve-ha-manager `src/PVE/HA/Resources.pm`,
/// the `state` option; `enabled` is read as `started`).
pub const STATES: [&str; 5] = ["started", "stopped", "enabled", "disabled", "ignored"];

/// The state the HA manager keeps of `r` (its `service_status`): none for an `ignored`
/// resource (`Manager.pm` drops it: "remove stale or ignored services from manager
/// state"), `freeze` while disarmed with `freeze`, `stopped` for `disabled`, else the
/// requested state (the manager's transient states are not modelled).
pub fn manager_state(c: &Cluster, r: &HaResource) -> Option<&'static str> {
    let requested = match r.state.as_str() {
        "ignored" => return None,
        "started" | "enabled" => "started",
        _ => "stopped",
    };
    match &c.ha_disarm {
        Some(d) if d.mode == "freeze" => Some("freeze"),
        _ => Some(requested),
    }
}

/// `hastate` of a guest in `/cluster/resources` (pve-manager `PVE/API2/Cluster.pm`
/// `resources`): the manager's state of its resource, else the configured state, so
/// every guest with an HA resource entry has one (`ignored` for an ignored resource).
pub fn listed_state(c: &Cluster, vmid: u32) -> Option<String> {
    let r = c.ha_resource(vmid)?;
    Some(manager_state(c, r).map_or_else(|| r.state.clone(), str::to_string))
}

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

/// `POST /cluster/ha/resources` (pve-ha-manager `API2/HA/Resources.pm` `create`):
/// `sid` is `vm:<id>`, `ct:<id>` or a bare guest id (`Config.pm` `parse_sid`), then
/// the type's plugin (`lookup`), `verify_name`, `exists` and the entry's uniqueness.
pub fn create(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let raw = ctx.get("sid").unwrap_or("").to_string();
    let (kind, name) = if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        let kind = match raw.parse::<u32>().ok().and_then(|id| ctx.c.guests.get(&id)) {
            Some(g) if g.kind == crate::state::GuestKind::Lxc => "ct",
            Some(_) => "vm",
            None => {
                return Err(ApiError::internal(format!(
                    "unable to detect SID from VMID - VM/CT {raw} does not exist"
                )))
            }
        };
        (kind.to_string(), raw.clone())
    } else {
        match raw.split_once(':').filter(|(k, n)| !k.is_empty() && !n.is_empty()) {
            Some((k, n)) => (k.to_string(), n.to_string()),
            None => return Err(ApiError::internal(format!("unable to parse service id '{raw}'"))),
        }
    };
    if kind != "vm" && kind != "ct" {
        return Err(ApiError::internal(format!("unknown section type '{kind}'")));
    }
    let vmid: u32 = name
        .parse()
        .ok()
        .filter(|_| name.len() > 1 && !name.starts_with('0'))
        .ok_or_else(|| ApiError::internal("invalid VMID"))?;
    let guest_kind = match ctx.c.guests.get(&vmid) {
        Some(g) => g.kind,
        None => {
            return Err(ApiError::internal(format!(
                "resource '{kind}:{vmid}' does not exist in cluster"
            )))
        }
    };
    match (kind.as_str(), guest_kind == crate::state::GuestKind::Lxc) {
        ("vm", true) => {
            return Err(ApiError::internal(format!(
                "resource 'vm:{vmid}' - guest with ID {vmid} is not a VM"
            )))
        }
        ("ct", false) => {
            return Err(ApiError::internal(format!(
                "resource 'ct:{vmid}' - guest with ID {vmid} is not a container"
            )))
        }
        _ => {}
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

/// `POST /cluster/ha/status/disarm-ha` (pve-ha-manager 5.1.3+, `API2/HA/Status.pm`):
/// queues `disarm-ha <resource-mode>`, which the CRM applies unless the stack is
/// disarmed already (`Manager.pm` `update_crm_commands`). Applied at once here.
pub fn disarm(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let mode = ctx.get("resource-mode").unwrap_or_default().to_string();
    if ctx.c.ha_disarm.is_none() {
        ctx.c.ha_disarm = Some(crate::state::HaDisarm { mode });
    }
    Ok(Value::Null)
}

/// `POST /cluster/ha/status/arm-ha`: queues `arm-ha`, which the CRM applies when the
/// stack is disarmed. Applied at once here.
pub fn arm(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    ctx.c.ha_disarm = None;
    Ok(Value::Null)
}
