//! Resource pools as the plan leaves them (pure): PVE's answer to a pool read or to the
//! pool listing in, the answer with the plan's last word out. A pool the plan makes or
//! removes appears or is gone, its comment is the plan's; a VM the plan moves in, out
//! (`Effect::Pool`) or destroys, and a storage it adds or takes out
//! (`Effect::PoolStorage`), is or is no longer among the pool's members, so a pool
//! deletion planned after them sees the members the real run would leave
//! (pve-manager `PVE/API2/Pool.pm` `index`: a member is listed only while the guest
//! exists).

use serde_json::{json, Value};

use super::state::PlannedVm;
use super::{Effect, UNKNOWN};
use ferrox_pve_client::client::ApiError;

/// One pool's read (`GET /pools?poolid=` when `listed`, a list of one with `poolid`;
/// else `GET /pools/{poolid}`), `type` (`qemu`, `lxc`, `storage`) as PVE filters it.
pub(crate) fn read(
    real: Result<Value, ApiError>,
    planned: &[Effect],
    vms: &[&PlannedVm],
    poolid: &str,
    listed: bool,
    kind: Option<&str>,
) -> Result<Value, ApiError> {
    let touched = planned.iter().any(|e| match e {
        Effect::PoolConfig { poolid: p, .. } | Effect::PoolStorage { poolid: p, .. } => p == poolid,
        _ => false,
    }) || vms.iter().any(|vm| vm.pool.is_some() || vm.removed);
    if !touched {
        return real;
    }
    let last = planned.iter().rev().find_map(|e| match e {
        Effect::PoolConfig {
            poolid: p,
            comment,
            removed,
        } if p == poolid => Some((comment, *removed)),
        _ => None,
    });
    let missing = || ApiError::http(500, format!("pool '{poolid}' does not exist"), None);
    let mut pool = match (real, last) {
        (_, Some((_, true))) => return Err(missing()),
        (Ok(v), _) if listed => v.get(0).cloned().unwrap_or(Value::Null),
        (Ok(v), _) => v,
        (Err(e), Some(_)) if e.message.contains("does not exist") => json!({"members": []}),
        (Err(e), _) => return Err(e),
    };
    let Some(fields) = pool.as_object_mut() else {
        return Ok(pool);
    };
    if let Some((Some(c), _)) = last {
        fields.insert("comment".into(), Value::String(c.clone()));
    }
    let mut members: Vec<Value> = fields
        .get("members")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    lay_vms(&mut members, vms, poolid, kind);
    lay_storages(&mut members, planned, poolid, kind);
    fields.insert("members".into(), Value::Array(members));
    if listed {
        fields.insert("poolid".into(), Value::String(poolid.to_string()));
        return Ok(Value::Array(vec![pool]));
    }
    Ok(pool)
}

/// A VM the plan puts in `poolid` is a member; one it moves elsewhere, out of every
/// pool, or destroys is not.
fn lay_vms(members: &mut Vec<Value>, vms: &[&PlannedVm], poolid: &str, kind: Option<&str>) {
    for vm in vms {
        let joins = !vm.removed && vm.pool.as_ref().is_some_and(|p| p.as_deref() == Some(poolid));
        if !joins && !vm.removed && vm.pool.is_none() {
            continue;
        }
        members.retain(|m| vmid_of(m) != Some(vm.vmid));
        if joins && kind.is_none_or(|k| k == "qemu") {
            members.push(json!({
                "id": format!("qemu/{}", vm.vmid),
                "type": "qemu",
                "vmid": vm.vmid,
                "node": vm.node,
            }));
        }
    }
}

/// The storages the plan adds to `poolid` or takes out, in order. PVE names the node it
/// reads a storage's usage from; the plan does not know it.
fn lay_storages(members: &mut Vec<Value>, planned: &[Effect], poolid: &str, kind: Option<&str>) {
    for e in planned {
        let Effect::PoolStorage {
            poolid: p,
            storage,
            removed,
        } = e
        else {
            continue;
        };
        if p != poolid {
            continue;
        }
        members.retain(|m| !(m["type"] == "storage" && m["storage"] == *storage));
        if !removed && kind.is_none_or(|k| k == "storage") {
            members.push(json!({
                "id": format!("storage/{UNKNOWN}/{storage}"),
                "type": "storage",
                "storage": storage,
                "node": UNKNOWN,
            }));
        }
    }
}

fn vmid_of(member: &Value) -> Option<u32> {
    if member["type"] == "storage" {
        return None;
    }
    let v = &member["vmid"];
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .and_then(|n| u32::try_from(n).ok())
}

/// `GET /pools` (every pool, no members) with the pools the plan makes, describes or
/// removes, in PVE's order (sorted by id).
pub(crate) fn listing(real: Value, planned: &[Effect]) -> Value {
    let Value::Array(mut pools) = real else { return real };
    for e in planned {
        let Effect::PoolConfig {
            poolid,
            comment,
            removed,
        } = e
        else {
            continue;
        };
        let at = pools.iter().position(|p| p["poolid"] == *poolid);
        match (at, removed) {
            (Some(i), true) => {
                pools.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => {
                if let (Some(c), Some(m)) = (comment, pools[i].as_object_mut()) {
                    m.insert("comment".into(), Value::String(c.clone()));
                }
            }
            (None, false) => {
                let mut entry = json!({ "poolid": poolid });
                if let Some(c) = comment {
                    entry["comment"] = Value::String(c.clone());
                }
                pools.push(entry);
            }
        }
    }
    pools.sort_by(|a, b| a["poolid"].as_str().cmp(&b["poolid"].as_str()));
    Value::Array(pools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::RunPlan;

    fn plan(effects: Value) -> RunPlan {
        RunPlan::from_value(&json!({ "effects": effects })).unwrap()
    }

    fn member_ids(answer: &Value) -> Vec<String> {
        answer["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn a_planned_pool_reads_as_the_plan_leaves_it() {
        let made = Effect::PoolConfig {
            poolid: "team".into(),
            comment: Some("Team".into()),
            removed: false,
        };
        let missing = || Err(ApiError::http(500, "pool 'team' does not exist", None));
        assert_eq!(
            read(missing(), std::slice::from_ref(&made), &[], "team", true, None).unwrap(),
            json!([{"members": [], "comment": "Team", "poolid": "team"}])
        );
        let removed = Effect::PoolConfig {
            poolid: "team".into(),
            comment: None,
            removed: true,
        };
        let real = Ok(json!({"members": [{"type": "qemu", "vmid": 100}]}));
        let e = read(real, &[made, removed], &[], "team", false, None).unwrap_err();
        assert_eq!(e.message, "pool 'team' does not exist");
        assert!(
            read(missing(), &[], &[], "team", false, None).is_err(),
            "PVE's answer stands"
        );
        let other = Ok(json!({"members": []}));
        assert!(read(other, &[], &[], "prod", false, None).is_ok());
    }

    #[test]
    fn members_moved_in_out_or_destroyed_and_storages_added_or_removed() {
        let p = plan(json!([
            {"kind": "pool", "vmid": 100, "node": "pve1", "pool": null},
            {"kind": "pool", "vmid": 101, "node": "pve2", "pool": "prod"},
            {"kind": "pool", "vmid": 102, "node": "pve1", "pool": "dev"},
            {"kind": "remove", "vmid": 103, "node": "pve1"},
            {"kind": "pool_storage", "poolid": "prod", "storage": "local", "removed": true},
            {"kind": "pool_storage", "poolid": "prod", "storage": "vmdata"},
            {"kind": "pool_storage", "poolid": "dev", "storage": "isos"},
        ]));
        let vms = p.vms();
        let vms: Vec<&PlannedVm> = vms.values().collect();
        let real = json!({"comment": "Prod", "members": [
            {"id": "qemu/100", "type": "qemu", "vmid": 100, "node": "pve1"},
            {"id": "qemu/102", "type": "qemu", "vmid": 102, "node": "pve1"},
            {"id": "lxc/103", "type": "lxc", "vmid": 103, "node": "pve1"},
            {"id": "qemu/104", "type": "qemu", "vmid": 104, "node": "pve1"},
            {"id": "storage/pve1/local", "type": "storage", "storage": "local", "node": "pve1"},
        ]});
        let user_cfg = p.user_cfg();
        let out = read(Ok(real.clone()), &user_cfg, &vms, "prod", false, None).unwrap();
        assert_eq!(
            member_ids(&out),
            ["qemu/104", "qemu/101", "storage/(known after apply)/vmdata"]
        );
        assert_eq!(out["comment"], "Prod");
        let only_vms = read(Ok(real), &user_cfg, &vms, "prod", false, Some("qemu")).unwrap();
        assert_eq!(member_ids(&only_vms), ["qemu/104", "qemu/101"]);
        let listed = read(
            Ok(json!([{"poolid": "dev", "members": []}])),
            &user_cfg,
            &vms,
            "dev",
            true,
            None,
        )
        .unwrap();
        assert_eq!(member_ids(&listed[0]), ["qemu/102", "storage/(known after apply)/isos"]);
    }

    #[test]
    fn the_listing_has_the_pools_the_plan_makes_and_not_those_it_removes() {
        let p = plan(json!([
            {"kind": "pool_config", "poolid": "prod/web", "comment": "Web"},
            {"kind": "pool_config", "poolid": "dev", "removed": true},
            {"kind": "pool_config", "poolid": "prod", "comment": "Production"},
        ]));
        let real = json!([{"poolid": "dev"}, {"poolid": "prod", "comment": "Prod"}, {"poolid": "team"}]);
        assert_eq!(
            listing(real, &p.user_cfg()),
            json!([
                {"poolid": "prod", "comment": "Production"},
                {"poolid": "prod/web", "comment": "Web"},
                {"poolid": "team"}
            ])
        );
    }
}
