//! `POST /access/ticket`: password login, ticket renewal, second factors (PVE 8/9's
//! two-step login); `unlock-tfa`; `/access/permissions`.

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

/// `POST /access/ticket` as pve-access-control 8/9 has it (`create_ticket`,
/// `create_ticket_do`, `authenticate_user`, `authenticate_2nd_new_do`; the old login API,
/// where `otp` logged in in one step, went with PVE 8.0): a renewal (a valid ticket as the
/// password, no second factor asked), a password login (a user with a second factor gets
/// `NeedTFA` and a half ticket), or the answer to that challenge (`tfa-challenge` and the
/// typed answer as the password). Every failure is the same 401. The login name is first
/// resolved as `lookup_username` does (a case-insensitive realm's `user.cfg` spelling).
pub fn login(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let now = now_secs();
    let mut username = ctx.get("username").unwrap_or("").to_string();
    if let Some(realm) = ctx.get("realm") {
        if !username.contains('@') {
            username = format!("{username}@{realm}");
        }
    }
    // `lookup_username`, before anything is checked: a realm set `case-sensitive: 0` logs
    // in `user.cfg`'s spelling, which the ticket, the CSRF token and the second factor
    // then carry. Its refusal is outside `create_ticket`'s eval: a plain 500, not a 401.
    let username = ctx.c.lookup_username(&username).map_err(ApiError::internal)?;
    let password = ctx.get("password").unwrap_or("").to_string();
    let otp = ctx.get("otp").map(str::to_string);
    let challenge = ctx.get("tfa-challenge").map(str::to_string);
    let user = ctx
        .c
        .user(&username)
        .cloned()
        .filter(|u| u.enable)
        .ok_or_else(failure)?;
    // "TFA response should be in 'password', not 'otp' when 'tfa-challenge' is set"
    if otp.is_some() && challenge.is_some() {
        return Err(failure());
    }
    if challenge.is_none() {
        // A valid ticket of this user (root@pam's may make tickets for anyone).
        if let Some(owner) = ctx.sim.keys.verify_ticket(&password, now, false) {
            if owner == username || owner == "root@pam" {
                return Ok(full_ticket(ctx, &username, now, true));
            }
        }
    }
    match challenge {
        // The half ticket is the proof of the first factor: the password is the answer.
        Some(challenge) => {
            if ctx.sim.keys.verify_ticket(&challenge, now, true).as_deref() != Some(username.as_str()) {
                return Err(failure());
            }
            second_factor(ctx, &user, &password, now)?;
            Ok(full_ticket(ctx, &username, now, false))
        }
        None => {
            if user.password.as_deref() != Some(password.as_str()) {
                return Err(failure());
            }
            if !ctx.sim.tfa().has_second_factor(&user) {
                // `otp` without a challenge to answer: "no such challenge".
                return match otp {
                    Some(_) => Err(failure()),
                    None => Ok(full_ticket(ctx, &username, now, false)),
                };
            }
            // An immediate answer in `otp` is checked (and a TOTP code used up), but the
            // challenge is not cleared on this branch: the answer is still `NeedTFA`.
            if let Some(otp) = otp {
                second_factor(ctx, &user, &otp, now)?;
            }
            Ok(half_ticket(ctx, &username, now))
        }
    }
}

/// A second-factor answer (`totp:<code>`, `recovery:<key>`) judged and counted; an
/// untyped one is "invalid tfa response", refused before proxmox-tfa counts anything.
fn second_factor(ctx: &Ctx<'_>, user: &crate::state::UserDef, answer: &str, now: u64) -> ApiResult<()> {
    let verdict = match crate::tfa::Response::parse(answer) {
        Ok(response) => {
            let node = answering_node(ctx);
            ctx.sim
                .tfa()
                .verify(&node, user, &response, now, ctx.sim.cfg.totp_step_secs)
        }
        Err(_) => crate::tfa::Verdict::Refused { totp_failure: false },
    };
    ctx.sim.count_second_factor(verdict);
    match verdict {
        crate::tfa::Verdict::Accepted { .. } => Ok(()),
        crate::tfa::Verdict::Refused { .. } => Err(failure()),
    }
}

/// The node whose pveproxy answers, whose `/run` holds the failure counts
/// ([`crate::tfa`]): pvesim answers as its first node (`/cluster/status` marks it `local`).
fn answering_node(ctx: &Ctx<'_>) -> String {
    ctx.c.nodes.first().map(|n| n.name.clone()).unwrap_or_default()
}

/// A full ticket, counted as a login or a renewal.
fn full_ticket(ctx: &Ctx<'_>, username: &str, now: u64, renewal: bool) -> Value {
    let who = Identity {
        userid: username.to_string(),
        tokenid: None,
    };
    let keys = &ctx.sim.keys;
    let (ticket, csrf) = (keys.ticket(username, now, false), keys.csrf(username, now));
    ctx.sim.count_ticket(renewal, &ticket, &csrf);
    let mut v = json!({
        "username": username,
        "ticket": ticket,
        "CSRFPreventionToken": csrf,
        "cap": caps(ctx, &who),
    });
    add_clustername(ctx, &who, &mut v);
    v
}

/// `NeedTFA`: a half ticket (`PVE:!tfa!…`, no login) and no `cap`.
fn half_ticket(ctx: &Ctx<'_>, username: &str, now: u64) -> Value {
    let who = Identity {
        userid: username.to_string(),
        tokenid: None,
    };
    let mut v = json!({
        "username": username,
        "ticket": ctx.sim.keys.ticket(username, now, true),
        "CSRFPreventionToken": ctx.sim.keys.csrf(username, now),
        "NeedTFA": 1,
    });
    add_clustername(ctx, &who, &mut v);
    v
}

fn add_clustername(ctx: &Ctx<'_>, who: &Identity, v: &mut Value) {
    if auth::has(ctx.c, who, "/", "Sys.Audit") {
        v["clustername"] = json!(ctx.c.cluster_name);
    }
}

/// `PUT /access/users/{userid}/unlock-tfa` (pve-access-control `API2/User.pm`
/// `unlock_tfa`): permission `['userid-group', ['User.Modify']]` — User.Modify on
/// `/access/groups` or on a group of the user, checked by the schema's test before the
/// handler; answers whether the user was locked.
pub fn unlock_tfa(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let userid = ctx.get("userid").unwrap_or("").to_string();
    let user = crate::users::check_user_exist(ctx.c, &userid)?.clone();
    let node = answering_node(ctx);
    match ctx.sim.tfa().unlock(&node, &user, now_secs()) {
        Some(was_locked) => Ok(json!(u8::from(was_locked))),
        None => Err(ApiError::internal("no such user")),
    }
}

/// `GET /access/permissions`: the caller's own (or an owned token's) privileges; anyone
/// else's needs `Sys.Audit` on `/access`. With `path`: that path only, even when empty.
pub fn permissions(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let asked = ctx
        .get("userid")
        .map(str::to_string)
        .unwrap_or_else(|| ctx.who.authuser());
    let (user, token) = match asked.split_once('!') {
        Some((u, t)) => (u.to_string(), Some(t.to_string())),
        None => (asked.clone(), None),
    };
    let own = asked == ctx.who.authuser() || (token.is_some() && user == ctx.who.authuser());
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
