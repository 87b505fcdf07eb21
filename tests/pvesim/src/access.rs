//! `POST /access/ticket`: password login, ticket renewal, TOTP second factor.

use crate::api::Ctx;
use crate::auth::{self, Identity};
use crate::error::{ApiError, ApiResult};
use crate::util::now_secs;
use serde_json::{json, Map, Value};

fn failure() -> ApiError {
    // Same text for every cause; 401 with a JSON body (not the empty-body 401 of the server).
    ApiError::with_status(401, "authentication failure")
}

/// `cap` object: privileges per area, as the web UI uses it.
fn caps(ctx: &Ctx<'_>, who: &Identity) -> Value {
    let areas: [(&str, &str, &[&str]); 7] = [
        ("vms", "/vms", &["VM.", "Permissions.Modify"]),
        ("storage", "/storage", &["Datastore.", "Permissions.Modify"]),
        ("nodes", "/nodes", &["Sys.", "Permissions.Modify"]),
        (
            "access",
            "/access",
            &["User.Modify", "Group.Allocate", "Permissions.Modify", "Realm."],
        ),
        ("sdn", "/sdn", &["SDN.", "Permissions.Modify"]),
        ("dc", "/", &["Sys.Audit", "Sys.Modify", "SDN.", "Pool."]),
        ("mapping", "/mapping", &["Mapping.", "Permissions.Modify"]),
    ];
    let mut out = Map::new();
    for (name, path, prefixes) in areas {
        let have = auth::privs(ctx.c, who, path);
        let mut m = Map::new();
        for p in have.iter().filter(|p| prefixes.iter().any(|x| p.starts_with(x))) {
            m.insert(p.clone(), json!(1));
        }
        out.insert(name.into(), Value::Object(m));
    }
    Value::Object(out)
}

pub fn login(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let now = now_secs();
    let mut username = ctx.get("username").unwrap_or("").to_string();
    if let Some(realm) = ctx.get("realm") {
        if !username.contains('@') {
            username = format!("{username}@{realm}");
        }
    }
    let password = ctx.get("password").unwrap_or("").to_string();
    let user = ctx.c.user(&username).cloned().ok_or_else(failure)?;
    if !user.enable {
        return Err(failure());
    }
    let keys = &ctx.sim.keys;
    let step = ctx.sim.cfg.totp_step_secs;
    let full = |ctx: &Ctx<'_>, renewal: bool| {
        let who = Identity {
            userid: username.clone(),
            tokenid: None,
        };
        let (ticket, csrf) = (keys.ticket(&username, now, false), keys.csrf(&username, now));
        ctx.sim.count_ticket(renewal, &ticket, &csrf);
        let mut v = json!({
            "username": username,
            "ticket": ticket,
            "CSRFPreventionToken": csrf,
            "cap": caps(ctx, &who),
        });
        if auth::has(ctx.c, &who, "/", "Sys.Audit") {
            v["clustername"] = json!(ctx.c.cluster_name);
        }
        v
    };
    // Second step of TFA: the half ticket plus `totp:<code>` as password.
    if let Some(challenge) = ctx.get("tfa-challenge") {
        let ok_user = keys.verify_ticket(challenge, now, true).is_some_and(|u| u == username);
        let code = password.strip_prefix("totp:").unwrap_or(&password);
        let ok_code = user
            .totp_secret
            .as_deref()
            .is_some_and(|s| auth::verify_totp(s, code, now, step));
        return if ok_user && ok_code {
            Ok(full(ctx, false))
        } else {
            Err(failure())
        };
    }
    // Renewal: a valid ticket as password.
    if password.starts_with("PVE:") {
        return match keys.verify_ticket(&password, now, false) {
            Some(u) if u == username => Ok(full(ctx, true)),
            _ => Err(failure()),
        };
    }
    if user.password.as_deref() != Some(password.as_str()) {
        return Err(failure());
    }
    if let Some(secret) = &user.totp_secret {
        if let Some(otp) = ctx.get("otp") {
            return if auth::verify_totp(secret, otp, now, step) {
                Ok(full(ctx, false))
            } else {
                Err(failure())
            };
        }
        return Ok(json!({
            "username": username,
            "ticket": keys.ticket(&username, now, true),
            "CSRFPreventionToken": keys.csrf(&username, now),
            "NeedTFA": 1,
        }));
    }
    Ok(full(ctx, false))
}

/// `GET /access/permissions`: the caller's own (or an owned token's) privileges; anyone
/// else's needs `Sys.Audit` on `/access`. With `path`: that path only, even when empty.
pub fn permissions(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let asked = ctx
        .get("userid")
        .map(str::to_string)
        .unwrap_or_else(|| ctx.who.upid_user());
    let (user, token) = match asked.split_once('!') {
        Some((u, t)) => (u.to_string(), Some(t.to_string())),
        None => (asked.clone(), None),
    };
    let own = asked == ctx.who.upid_user() || (token.is_some() && user == ctx.who.upid_user());
    if !own {
        ctx.require("/access", "Sys.Audit")?;
    }
    let target = Identity {
        userid: user,
        tokenid: token,
    };
    let flags = |privs: crate::acl::Privs| {
        Value::Object(privs.into_iter().map(|(p, prop)| (p, json!(u8::from(prop)))).collect())
    };
    let mut out = Map::new();
    match ctx.get("path") {
        Some(path) => {
            out.insert(path.to_string(), flags(crate::acl::permissions(ctx.c, &target, path)));
        }
        None => {
            for (path, privs) in crate::acl::effective(ctx.c, &target) {
                out.insert(path, flags(privs));
            }
        }
    }
    Ok(Value::Object(out))
}
