//! Users, groups and roles of `user.cfg` as pve-access-control lists them: `GET
//! /access/users` (filtered by what the caller may administer), `GET
//! /access/users/{userid}`, `GET /access/groups`, `GET /access/roles`.

use crate::api::Ctx;
use crate::auth::{self, Identity};
use crate::error::{ApiError, ApiResult};
use crate::state::{Cluster, UserDef};
use serde_json::{json, Map, Value};

const USER_PRIVS: [&str; 2] = ["User.Modify", "Sys.Audit"];

fn any_of(c: &Cluster, who: &Identity, path: &str, privs: &[&str]) -> bool {
    privs.iter().any(|p| auth::has(c, who, path, p))
}

/// `filter_groups`: the groups on whose `/access/groups/<id>` the caller has any of `privs`.
fn groups_with(c: &Cluster, who: &Identity, privs: &[&str]) -> Vec<String> {
    c.groups
        .iter()
        .filter(|g| any_of(c, who, &format!("/access/groups/{}", g.groupid), privs))
        .map(|g| g.groupid.clone())
        .collect()
}

/// Whether the caller may see `userid` (`User.Modify` or `Sys.Audit` on
/// `/access/groups`, or on a group the user is in).
fn may_see(c: &Cluster, who: &Identity, userid: &str) -> bool {
    if any_of(c, who, "/access/groups", &USER_PRIVS) {
        return true;
    }
    let allowed = groups_with(c, who, &USER_PRIVS);
    c.groups_of(userid).iter().any(|g| allowed.contains(g))
}

/// `check_user_exist`: a user id `verify_username` takes (else its `die`, e.g. `user
/// name 'x' is too short`), then one `user.cfg` has (else `no such user ('<id>')`);
/// plain 500s.
pub fn check_user_exist<'c>(c: &'c Cluster, userid: &str) -> ApiResult<&'c UserDef> {
    crate::schema::formats::verify_username(userid).map_err(ApiError::internal)?;
    c.user(userid)
        .ok_or_else(|| ApiError::internal(format!("no such user ('{userid}')")))
}

/// The `userid-group` permission test for an existing user (`['userid-group', privs]`):
/// the user must exist (`check_user_exist`'s plain 500 otherwise, before any privilege
/// is looked at), then any of `privs` on `/access/groups` or on a group of the user,
/// else 403.
pub fn check_userid_group(c: &Cluster, who: &Identity, userid: &str, privs: &[&str]) -> ApiResult<()> {
    check_user_exist(c, userid)?;
    if any_of(c, who, "/access/groups", privs) {
        return Ok(());
    }
    let allowed = groups_with(c, who, privs);
    if c.groups_of(userid).iter().any(|g| allowed.contains(g)) {
        Ok(())
    } else {
        Err(ApiError::forbidden_plain())
    }
}

fn realm_type(c: &Cluster, userid: &str) -> Option<String> {
    let realm = userid.rsplit_once('@')?.1;
    match realm {
        "pam" | "pve" => Some(realm.to_string()),
        _ => c.realms.iter().find(|r| r.realm == realm).map(|r| r.kind.clone()),
    }
}

/// `$extract_user_data`: what `user.cfg` holds of a user (`enable`, `expire`; the
/// optional name, mail and comment fields are not in the scenario), and with `full` its
/// groups and tokens.
fn user_data(c: &Cluster, u: &UserDef, full: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("enable".into(), json!(u8::from(u.enable)));
    m.insert("expire".into(), json!(0));
    if full {
        m.insert("groups".into(), json!(c.groups_of(&u.userid)));
        let tokens = if u.tokens.is_empty() {
            Value::Null
        } else {
            Value::Object(
                u.tokens
                    .iter()
                    .map(|t| (t.id.clone(), json!({"privsep": u8::from(t.privsep), "expire": 0})))
                    .collect(),
            )
        };
        m.insert("tokens".into(), tokens);
    }
    m
}

/// `GET /access/users` (`index`): sorted by id; a ticket's user always sees itself (a
/// token is not its owner); `enabled`
/// filters; `full` adds `groups` (a comma list) and `tokens` (a list with `tokenid`).
pub fn index(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let full = ctx.flag("full");
    let enabled = ctx.get("enabled").map(|v| v == "1");
    let mut users: Vec<&UserDef> = ctx.c.users.iter().collect();
    users.sort_by(|a, b| a.userid.cmp(&b.userid));
    let mut out = Vec::new();
    for u in users {
        // `$user eq $authuser`: a token is not its owner.
        if u.userid != ctx.who.authuser() && !may_see(ctx.c, ctx.who, &u.userid) {
            continue;
        }
        if enabled.is_some_and(|want| want != u.enable) {
            continue;
        }
        let mut m = user_data(ctx.c, u, full);
        if full {
            let groups = c_groups_text(&m);
            m.insert("groups".into(), json!(groups));
            if let Some(Value::Object(tokens)) = m.get("tokens").cloned() {
                let list: Vec<Value> = tokens
                    .into_iter()
                    .map(|(id, v)| {
                        let mut t = v.as_object().cloned().unwrap_or_default();
                        t.insert("tokenid".into(), json!(id));
                        Value::Object(t)
                    })
                    .collect();
                m.insert("tokens".into(), Value::Array(list));
            }
        }
        if let Some(kind) = realm_type(ctx.c, &u.userid) {
            m.insert("realm-type".into(), json!(kind));
        }
        m.insert("userid".into(), json!(u.userid));
        out.push(Value::Object(m));
    }
    Ok(Value::Array(out))
}

fn c_groups_text(m: &Map<String, Value>) -> String {
    m.get("groups")
        .and_then(Value::as_array)
        .map(|g| g.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(","))
        .unwrap_or_default()
}

/// `GET /access/users/{userid}` (`read_user`), after the schema's `userid-group` test:
/// the user's data with groups (a list) and tokens (an object by token id, or null).
pub fn read(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let userid = ctx.get("userid").unwrap_or("").to_string();
    let u = check_user_exist(ctx.c, &userid)?;
    Ok(Value::Object(user_data(ctx.c, u, true)))
}

/// `GET /access/groups`: the groups with `User.Modify`, `Sys.Audit` or `Group.Allocate`
/// on `/access/groups/<id>`; members as a comma list.
pub fn groups(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let privs = ["User.Modify", "Sys.Audit", "Group.Allocate"];
    let mut out = Vec::new();
    for g in &ctx.c.groups {
        if !any_of(ctx.c, ctx.who, &format!("/access/groups/{}", g.groupid), &privs) {
            continue;
        }
        let mut m = Map::new();
        m.insert("groupid".into(), json!(g.groupid));
        if let Some(c) = &g.comment {
            m.insert("comment".into(), json!(c));
        }
        let mut users = g.users.clone();
        users.sort();
        m.insert("users".into(), json!(users.join(",")));
        out.push(Value::Object(m));
    }
    Ok(Value::Array(out))
}

/// `GET /access/roles` (every user): each role with its privileges as a sorted comma
/// list and `special` 1 for PVE's built-in roles.
pub fn roles(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let mut out: Vec<Value> = crate::acl::builtin_role_names()
        .into_iter()
        .filter(|r| !ctx.c.roles.contains_key(r))
        .map(|r| {
            let privs: Vec<&str> = crate::acl::builtin_role(&r).unwrap_or_default().into_iter().collect();
            json!({"roleid": r, "privs": privs.join(","), "special": 1})
        })
        .collect();
    for (r, privs) in &ctx.c.roles {
        let mut privs = privs.clone();
        privs.sort();
        out.push(json!({"roleid": r, "privs": privs.join(","), "special": 0}));
    }
    Ok(Value::Array(out))
}
