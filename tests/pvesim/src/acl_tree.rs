//! `user.cfg`'s ACL tree through the API: `GET /access/acl` (what the caller may see) and
//! `PUT /access/acl` (add or remove roles of users, groups and tokens on one path), with
//! pve-access-control's order of checks and its texts (`API2/ACL.pm`).

use crate::api::Ctx;
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::schema::formats::split_list;
use crate::state::{AclDef, Cluster};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// `normalize_path`: slashes collapsed, no trailing one, a leading one; `None` for an
/// empty path or one with characters outside `[[:alnum:].-_/]`.
pub fn normalize_path(path: &str) -> Option<String> {
    if path.is_empty() {
        return None;
    }
    let mut p = String::new();
    for ch in path.chars() {
        if !(ch == '/' && p.ends_with('/')) {
            p.push(ch);
        }
    }
    if p.len() > 1 && p.ends_with('/') {
        p.pop();
    }
    if p.is_empty() {
        p = "/".into();
    }
    if !p.starts_with('/') {
        p.insert(0, '/');
    }
    let ok = p
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/'));
    ok.then_some(p)
}

/// `check_path`: the paths an ACL entry may be set on (PVE 9.1's list).
pub fn check_path(path: &str) -> bool {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        let alts = [
            r"/",
            r"/access",
            r"/access/groups",
            r"/access/groups/[[:alnum:]\.\-_]+",
            r"/access/realm",
            r"/access/realm/[[:alnum:]\.\-_]+",
            r"/nodes",
            r"/nodes/[[:alnum:]\.\-_]+",
            r"/pool",
            r"/pool/[A-Za-z0-9\.\-_]+(?:/[A-Za-z0-9\.\-_]+){0,2}",
            r"/sdn",
            r"/sdn/controllers",
            r"/sdn/controllers/[[:alnum:]_\-]+",
            r"/sdn/dns",
            r"/sdn/dns/[[:alnum:]]+",
            r"/sdn/fabrics",
            r"/sdn/fabrics/[[:alnum:]]+",
            r"/sdn/ipams",
            r"/sdn/ipams/[[:alnum:]]+",
            r"/sdn/prefix-lists",
            r"/sdn/prefix-lists/[[:alnum:]]+",
            r"/sdn/route-maps",
            r"/sdn/route-maps/[[:alnum:]]+",
            r"/sdn/zones",
            r"/sdn/zones/[[:alnum:]\.\-_]+",
            r"/sdn/zones/[[:alnum:]\.\-_]+/[[:alnum:]\.\-_]+",
            r"/sdn/zones/[[:alnum:]\.\-_]+/[[:alnum:]\.\-_]+/[1-9][0-9]{0,3}",
            r"/storage",
            r"/storage/[[:alnum:]\.\-_]+",
            r"/vms",
            r"/vms/[1-9][0-9]{2,}",
            r"/mapping",
            r"/mapping/[[:alnum:]\.\-_]+",
            r"/mapping/[[:alnum:]\.\-_]+/[[:alnum:]\.\-_]+",
        ];
        regex::Regex::new(&format!("^(?:{})$", alts.join("|"))).expect("check_path pattern")
    });
    RE.is_match(path)
}

/// `check_perm_modify`: `Permissions.Modify` on the path, or the object's own allocate
/// privilege below `/storage`, `/vms` and `/pool`.
pub fn perm_modify_privs(path: &str) -> Vec<&'static str> {
    let mut privs = vec!["Permissions.Modify"];
    let below = |prefix: &str| path.strip_prefix(prefix).is_some_and(|rest| !rest.is_empty());
    if below("/storage/") {
        privs.push("Datastore.Allocate");
    } else if below("/vms/") {
        privs.push("VM.Allocate");
    } else if below("/pool/") {
        privs.push("Pool.Allocate");
    }
    privs
}

/// Whether the caller may modify permissions on `path` (`check_perm_modify` quietly).
pub fn may_modify(c: &Cluster, who: &auth::Identity, path: &str) -> bool {
    perm_modify_privs(path).iter().any(|p| auth::has(c, who, path, p))
}

/// The entries in the order `iterate_acl_tree` walks them: depth first, children sorted,
/// at one node users, groups, tokens (ids and roles sorted: PVE's are hash order).
fn entries(c: &Cluster) -> Vec<(String, &'static str, String, String, bool)> {
    let mut out = Vec::new();
    let token_or_user = |a: &AclDef| if a.ugid.contains('!') { "token" } else { "user" };
    for a in &c.acls {
        for r in &a.roles {
            out.push((a.path.clone(), token_or_user(a), a.ugid.clone(), r.clone(), a.propagate));
        }
    }
    for a in &c.group_acls {
        for r in &a.roles {
            out.push((a.path.clone(), "group", a.ugid.clone(), r.clone(), a.propagate));
        }
    }
    let rank = |t: &str| ["user", "group", "token"].iter().position(|x| *x == t);
    out.sort_by(|a, b| {
        let seg = |p: &str| {
            p.split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        (seg(&a.0), rank(a.1), &a.2, &a.3).cmp(&(seg(&b.0), rank(b.1), &b.2, &b.3))
    });
    out
}

/// `GET /access/acl` (`read_acl`): every entry with `Sys.Audit` on `/access`, else the
/// entries of paths the caller may modify permissions on; `propagate` an integer.
pub fn read(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let audit = auth::has(ctx.c, ctx.who, "/access", "Sys.Audit");
    let out: Vec<Value> = entries(ctx.c)
        .into_iter()
        .filter(|(path, ..)| audit || may_modify(ctx.c, ctx.who, path))
        .map(|(path, ty, ugid, roleid, propagate)| {
            json!({"path": path, "type": ty, "ugid": ugid, "roleid": roleid, "propagate": u8::from(propagate)})
        })
        .collect();
    Ok(Value::Array(out))
}

fn param_exc(key: &str, msg: String) -> ApiError {
    ApiError::param(key, msg)
}

/// A parameter exception raised inside `lock_user_config`: stringified into the lock's
/// `ACL update failed: ` die, so a plain 500.
fn locked_param_exc(key: &str, msg: &str) -> ApiError {
    ApiError::internal(format!(
        "ACL update failed: 400 Parameter verification failed.\n{key}: {msg}"
    ))
}

/// Set or remove `role` of one subject on `path` in `acls`.
fn apply(acls: &mut Vec<AclDef>, path: &str, ugid: &str, role: &str, propagate: bool, delete: bool) {
    let index = acls.iter().position(|a| a.path == path && a.ugid == ugid);
    // One entry per (path, subject) with one propagate flag per role: entries are split
    // by flag so that each role keeps its own.
    for a in acls.iter_mut().filter(|a| a.path == path && a.ugid == ugid) {
        a.roles.retain(|r| r != role);
    }
    acls.retain(|a| !a.roles.is_empty());
    if delete {
        return;
    }
    match acls
        .iter_mut()
        .find(|a| a.path == path && a.ugid == ugid && a.propagate == propagate)
    {
        Some(a) => {
            a.roles.push(role.to_string());
            a.roles.sort();
        }
        None => {
            let entry = AclDef {
                path: path.to_string(),
                ugid: ugid.to_string(),
                roles: vec![role.to_string()],
                propagate,
            };
            match index {
                Some(i) if i <= acls.len() => acls.insert(i, entry),
                _ => acls.push(entry),
            }
        }
    }
}

/// Whether `update_acl` lets a caller with `privs` on the path hand out any role, without
/// the role-subset rule of pve-access-control 46bfd59 (8.0.0): before it (PVE 7), every
/// caller `perm-modify` let through; with it, one holding `Permissions.Modify` there, as
/// `!$auth_user_privs->{'Permissions.Modify'}` until 7d05a23 (8.2.0), so only
/// propagating (the value is the propagate flag), then `defined`, so either. PVE ships
/// pve-access-control 8.0 with 8.0 and 8.2.0 (November 2024) first with pve-manager
/// 8.3.0: the simulated `pve_version` picks the rule.
fn hands_out_any_role(c: &Cluster, privs: &crate::acl::Privs) -> bool {
    if !c.pve_at_least(8, 0) {
        return true;
    }
    match privs.get("Permissions.Modify") {
        Some(propagates) => *propagates || c.pve_at_least(8, 3),
        None => false,
    }
}

/// `PUT /access/acl` (`update_acl`), after the schema's `perm-modify` check and the
/// parameter validation: a subject is required; the path normalised and (unless
/// deleting) one `check_path` knows; then, under the `user.cfg` lock, per role: the role
/// exists, a caller without `Permissions.Modify` hands out only a subset of its own
/// privileges (propagating ones for a propagating entry) and never `NoAccess`; each
/// group, user and token exists. `user.cfg` is written once, at the end: a refusal
/// changes nothing.
pub fn update(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (users, groups, tokens) = (ctx.get("users"), ctx.get("groups"), ctx.get("tokens"));
    // Perl truth (`!($param->{users} || …)`): an empty list or `0` names nobody.
    let names_someone = |v: Option<&str>| v.is_some_and(|v| !v.is_empty() && v != "0");
    if !(names_someone(users) || names_someone(groups) || names_someone(tokens)) {
        let msg = "either 'users', 'groups' or 'tokens' is required.";
        return Err(ApiError::params(
            ["users", "groups", "tokens"]
                .iter()
                .map(|k| (k.to_string(), msg.to_string()))
                .collect(),
        ));
    }
    let raw_path = ctx.get("path").unwrap_or("").to_string();
    let delete = ctx.flag("delete");
    let invalid = || param_exc("path", format!("invalid ACL path '{raw_path}'"));
    let path = normalize_path(&raw_path).ok_or_else(invalid)?;
    if !delete && !check_path(&path) {
        return Err(invalid());
    }
    let propagate = ctx.get("propagate").is_none_or(|v| v == "1");
    let caller_privs = crate::acl::permissions(ctx.c, ctx.who, &path);
    let may_modify_all = ctx.who.is_root() || hands_out_any_role(ctx.c, &caller_privs);
    let (users, groups, tokens) = (
        split_list(users.unwrap_or("")),
        split_list(groups.unwrap_or("")),
        split_list(tokens.unwrap_or("")),
    );
    let mut acls = ctx.c.acls.clone();
    let mut group_acls = ctx.c.group_acls.clone();
    let verb = if delete { "remove" } else { "add" };
    for role in split_list(ctx.get("roles").unwrap_or("")) {
        let Some(role_privs) = crate::acl::role_privileges(ctx.c, &role) else {
            return Err(ApiError::internal(format!(
                "ACL update failed: role '{role}' does not exist"
            )));
        };
        if !may_modify_all {
            for p in &role_privs {
                let Some(theirs) = caller_privs.get(p) else {
                    return Err(locked_param_exc(
                        "role",
                        &format!(
                            "Cannot {verb} role '{role}' - requires 'Permissions.Modify' or superset of privileges."
                        ),
                    ));
                };
                if propagate && !theirs && !delete {
                    return Err(locked_param_exc(
                        "role",
                        &format!("Cannot {verb} role '{role}' with propagation - requires 'Permissions.Modify' or propagated superset of privileges."),
                    ));
                }
            }
            if role == "NoAccess" {
                return Err(locked_param_exc(
                    "role",
                    &format!("Cannot {verb} role '{role}' - requires 'Permissions.Modify'"),
                ));
            }
        }
        for g in &groups {
            if ctx.c.group(g).is_none() {
                return Err(ApiError::internal(format!(
                    "ACL update failed: group '{g}' does not exist"
                )));
            }
            apply(&mut group_acls, &path, g, &role, propagate, delete);
        }
        for u in &users {
            if ctx.c.user(u).is_none() {
                return Err(ApiError::internal(format!(
                    "ACL update failed: user '{u}' does not exist"
                )));
            }
            apply(&mut acls, &path, u, &role, propagate, delete);
        }
        for t in &tokens {
            let Some((user, name)) = t.split_once('!') else {
                return Err(ApiError::internal(format!(
                    "ACL update failed: '{t}' is not a valid token ID - not able to split into user and token parts"
                )));
            };
            let Some(u) = ctx.c.user(user) else {
                return Err(ApiError::internal(format!(
                    "ACL update failed: no such user ('{user}')"
                )));
            };
            if !u.tokens.iter().any(|x| x.id == name) {
                return Err(ApiError::internal(format!(
                    "ACL update failed: no such token '{name}' for user '{user}'"
                )));
            }
            apply(&mut acls, &path, t, &role, propagate, delete);
        }
    }
    ctx.c.acls = acls;
    ctx.c.group_acls = group_acls;
    Ok(Value::Null)
}

/// The ACL entries of one path, as `GET /access/acl` lists them (for tests).
pub fn on_path(c: &Cluster, path: &str) -> BTreeMap<(String, String), bool> {
    entries(c)
        .into_iter()
        .filter(|e| e.0 == path)
        .map(|(_, _, ugid, role, p)| ((ugid, role), p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_and_checked_as_pve_does() {
        assert_eq!(normalize_path("//vms//100/").as_deref(), Some("/vms/100"));
        assert_eq!(normalize_path("vms/100").as_deref(), Some("/vms/100"));
        assert_eq!(normalize_path("/").as_deref(), Some("/"));
        assert_eq!(normalize_path("/vms/1 0"), None);
        assert!(check_path("/vms/100"));
        assert!(!check_path("/vms/99"), "a VM id has at least three digits");
        assert!(!check_path("/vm/100"));
        assert!(check_path("/pool/a/b/c") && !check_path("/pool/a/b/c/d"));
        assert!(check_path("/sdn/zones/localnetwork/vmbr0/100"));
    }

    #[test]
    fn perm_modify_names_the_object_privilege() {
        assert_eq!(perm_modify_privs("/vms/100"), ["Permissions.Modify", "VM.Allocate"]);
        assert_eq!(perm_modify_privs("/vms"), ["Permissions.Modify"]);
        assert_eq!(perm_modify_privs("/pool/prod"), ["Permissions.Modify", "Pool.Allocate"]);
        assert_eq!(
            perm_modify_privs("/storage/local"),
            ["Permissions.Modify", "Datastore.Allocate"]
        );
    }

    #[test]
    fn a_role_keeps_its_own_propagate_flag() {
        let mut acls = Vec::new();
        apply(&mut acls, "/vms/100", "a@pve", "PVEVMUser", true, false);
        apply(&mut acls, "/vms/100", "a@pve", "PVEAuditor", false, false);
        apply(&mut acls, "/vms/100", "a@pve", "PVEVMUser", false, false);
        assert_eq!(acls.len(), 1, "both roles now without propagation: {acls:?}");
        assert_eq!(acls[0].roles, ["PVEAuditor", "PVEVMUser"]);
        apply(&mut acls, "/vms/100", "a@pve", "PVEVMUser", true, true);
        assert_eq!(acls[0].roles, ["PVEAuditor"], "a delete ignores the flag");
    }
}
