//! Resource pools as PVE's pool API names and reads them: the path and parameters that
//! address a pool, one pool read into a typed [`Pool`], the pool ids the cluster lists,
//! and a missing pool told from other failures ([`is_missing`]).
//!
//! Which form of the API: a nested pool (`parent/child`) is named by the `poolid`
//! parameter of `/pools` (`GET /pools?poolid=`, `PUT /pools`, `DELETE /pools`); a flat
//! one in the path (`/pools/{poolid}`). pve-manager 8.1.0 made nested pools (commit
//! 4448f8d3, `PVE/API2/Pool.pm`) and with them the parameter form, because an id with a
//! `/` cannot be one path segment; it kept the path form, deprecated, and its commit
//! says "the old API endpoints continue to work for non-nested pools" (still served at
//! 9.2.11). Before 8.1 only the path form exists (`GET /pools` refuses `poolid`, `PUT
//! /pools` is not implemented), and nested ids do not: so the id alone picks a form
//! every release answers, and no task reads `GET /version` to choose.

use std::fmt;

use serde_json::Value;

use ferrox_pve_client::client::{ApiError, Client};

/// Whether `poolid` is nested (`parent/child`), so only the `poolid` parameter names it.
pub fn is_nested(poolid: &str) -> bool {
    poolid.contains('/')
}

/// The path and parameters that address `poolid` for a read, an update or a deletion:
/// `/pools` with `poolid` for a nested pool, else `/pools/{poolid}` alone.
pub fn address(poolid: &str) -> (String, Vec<(&'static str, String)>) {
    if is_nested(poolid) {
        ("/pools".into(), vec![("poolid", poolid.to_string())])
    } else {
        (format!("/pools/{poolid}"), Vec::new())
    }
}

/// One member of a pool.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Member {
    /// A guest (QEMU VM or container), by vmid.
    Vm(u32),
    /// A storage, by id.
    Storage(String),
}

/// As the modules name a member in messages: `VM 100`, `storage local`.
impl fmt::Display for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Member::Vm(vmid) => write!(f, "VM {vmid}"),
            Member::Storage(storage) => write!(f, "storage {storage}"),
        }
    }
}

impl Member {
    /// A member entry of PVE's answer (`{"type": "qemu", "vmid": 100, ...}`, `{"type":
    /// "storage", "storage": "local", ...}`); a vmid is taken as a number or a string.
    /// `None`: an entry that names neither.
    pub fn from_entry(entry: &Value) -> Option<Member> {
        if entry["type"] == "storage" {
            return entry["storage"].as_str().map(|s| Member::Storage(s.to_string()));
        }
        let vmid = &entry["vmid"];
        vmid.as_u64()
            .or_else(|| vmid.as_str().and_then(|s| s.parse().ok()))
            .and_then(|n| u32::try_from(n).ok())
            .map(Member::Vm)
    }
}

/// One pool as PVE shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pool {
    /// Its comment, if it has one.
    pub comment: Option<String>,
    /// Its members, in PVE's order (guests by vmid, then storages).
    pub members: Vec<Member>,
}

impl Pool {
    /// The pool in one answer: the object of `GET /pools/{poolid}`, or the entry for
    /// `poolid` in the list `GET /pools?poolid=` answers.
    pub fn from_answer(answer: &Value, poolid: &str) -> Pool {
        let data = match answer {
            Value::Array(list) => list
                .iter()
                .find(|p| p["poolid"] == poolid)
                .or_else(|| list.first())
                .unwrap_or(&Value::Null),
            other => other,
        };
        Pool {
            comment: data["comment"].as_str().map(str::to_string),
            members: data["members"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Member::from_entry)
                .collect(),
        }
    }

    /// The vmids of its guests.
    pub fn vmids(&self) -> impl Iterator<Item = u32> + '_ {
        self.members.iter().filter_map(|m| match m {
            Member::Vm(vmid) => Some(*vmid),
            Member::Storage(_) => None,
        })
    }
}

/// Whether a pool read or write failed because the pool does not exist (PVE's `pool
/// '<id>' does not exist`).
pub fn is_missing(error: &ApiError) -> bool {
    error.message.contains("pool '") && error.message.contains("' does not exist")
}

/// The pool `poolid` (one read, in the form [`address`] picks); `None` when it does not
/// exist.
pub fn read(client: &Client, poolid: &str) -> Result<Option<Pool>, ApiError> {
    let (path, query) = address(poolid);
    match client.get(&path, &query) {
        Ok(answer) => Ok(Some(Pool::from_answer(&answer, poolid))),
        Err(e) if is_missing(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The ids of the pools the caller may audit (`GET /pools`), in PVE's order.
pub fn ids(client: &Client) -> Result<Vec<String>, ApiError> {
    let listed = client.get("/pools", &[])?;
    Ok(listed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["poolid"].as_str().map(str::to_string))
        .collect())
}

/// The pools directly below `poolid` among `ids` (`prod/web` below `prod`, not
/// `prod/web/a`).
pub fn children<'a>(ids: &'a [String], poolid: &str) -> Vec<&'a str> {
    let prefix = format!("{poolid}/");
    ids.iter()
        .filter_map(|id| {
            id.strip_prefix(&prefix)
                .filter(|rest| !rest.contains('/'))
                .map(|_| id.as_str())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_nested_pool_is_named_by_parameter_a_flat_one_in_the_path() {
        assert_eq!(address("prod"), ("/pools/prod".to_string(), vec![]));
        assert_eq!(
            address("prod/web"),
            ("/pools".to_string(), vec![("poolid", "prod/web".to_string())])
        );
    }

    #[test]
    fn both_answer_forms_read_alike_and_a_vmid_may_be_a_string() {
        let members = json!([
            {"id": "qemu/100", "type": "qemu", "vmid": 100, "node": "pve1"},
            {"id": "lxc/200", "type": "lxc", "vmid": "200", "node": "pve2"},
            {"id": "storage/pve1/local", "type": "storage", "storage": "local", "node": "pve1"},
            {"id": "odd", "type": "qemu"},
        ]);
        let object = Pool::from_answer(&json!({"comment": "Prod", "members": members}), "prod");
        let listed = Pool::from_answer(
            &json!([{"poolid": "prod", "comment": "Prod", "members": members}]),
            "prod",
        );
        assert_eq!(object, listed);
        assert_eq!(
            object.members,
            [Member::Vm(100), Member::Vm(200), Member::Storage("local".into())]
        );
        assert_eq!(object.comment.as_deref(), Some("Prod"));
        assert_eq!(object.vmids().collect::<Vec<_>>(), [100, 200]);
        let words: Vec<String> = object.members.iter().map(Member::to_string).collect();
        assert_eq!(words, ["VM 100", "VM 200", "storage local"]);
    }

    #[test]
    fn only_a_missing_pool_is_missing() {
        assert!(is_missing(&ApiError::http(500, "pool 'prod' does not exist", None)));
        assert!(!is_missing(&ApiError::http(
            500,
            "Configuration file 'nodes/pve1/qemu-server/100.conf' does not exist",
            None
        )));
        assert!(!is_missing(&ApiError::http(
            403,
            "Permission check failed (/pool/prod, Pool.Audit)",
            None
        )));
    }

    #[test]
    fn children_are_one_level_below() {
        let ids: Vec<String> = ["prod", "prod/web", "prod/web/a", "production", "dev/prod"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(children(&ids, "prod"), ["prod/web"]);
        assert_eq!(children(&ids, "prod/web"), ["prod/web/a"]);
        assert_eq!(children(&ids, "dev"), ["dev/prod"]);
        assert!(children(&ids, "production").is_empty());
    }
}
