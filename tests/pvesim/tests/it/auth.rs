//! Authentication, CSRF, privilege separation, 401/403 shapes, TLS identity.

use crate::common::*;
use pvesim::{SimConfig, TlsMode};
use std::time::Instant;

#[test]
fn ticket_login_cookie_and_csrf() {
    let mut api = Api::start(quick());
    api.with_auth(vec![]);
    let r = api.post(
        "/access/ticket",
        &[("username", "root@pam"), ("password", "pvesim-root")],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    let ticket = r.data()["ticket"].as_str().unwrap().to_string();
    let csrf = r.data()["CSRFPreventionToken"].as_str().unwrap().to_string();
    assert!(ticket.starts_with("PVE:root@pam:"), "{ticket}");
    assert_eq!(csrf.len(), 52);
    assert_eq!(r.data()["username"], "root@pam");
    assert_eq!(r.data()["cap"]["vms"]["VM.Allocate"], 1);
    assert_eq!(r.data()["clustername"], "pvesim");

    let cookie = format!("PVEAuthCookie={}", urlencode(&ticket));
    api.with_auth(vec![("Cookie", &cookie)]);
    assert_eq!(api.get("/version").status, 200, "GET needs no CSRF token");
    // A write without CSRF token: 401, reason in the status line, empty body.
    let r = api.put("/nodes/pve1/qemu/100/config", &[("description", "x")]);
    assert_eq!(r.status, 401);
    assert_eq!(r.raw, "");
    let raw = raw_tls(
        &api.sim,
        format!("PUT /api2/json/nodes/pve1/qemu/100/config HTTP/1.1\r\nHost: localhost\r\nCookie: {cookie}\r\nContent-Length: 13\r\nContent-Type: application/x-www-form-urlencoded\r\nConnection: close\r\n\r\ndescription=x").as_bytes(),
    );
    assert_eq!(status_line(&raw), "HTTP/1.1 401 Permission denied - invalid csrf token");
    api.with_auth(vec![("Cookie", &cookie), ("CSRFPreventionToken", &csrf)]);
    let r = api.put("/nodes/pve1/qemu/100/config", &[("description", "x")]);
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.body, serde_json::json!({"data": null}));
    // Root bypasses permission checks and may use root-only options.
    let r = api.put(
        "/nodes/pve1/qemu/100/config",
        &[("description", "y"), ("skiplock", "1")],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    // Renewal: the ticket as password.
    api.with_auth(vec![]);
    let r = api.post("/access/ticket", &[("username", "root@pam"), ("password", &ticket)]);
    assert_eq!(r.status, 200, "{}", r.raw);
}

#[test]
fn login_failures_and_missing_auth() {
    let mut api = Api::start(SimConfig {
        auth_fail_delay_ms: 150,
        ..quick()
    });
    api.with_auth(vec![]);
    let t = Instant::now();
    let r = api.post("/access/ticket", &[("username", "root@pam"), ("password", "wrong")]);
    assert!(t.elapsed().as_millis() >= 150, "401s are delayed");
    assert_eq!(r.status, 401);
    assert_eq!(r.message(), "authentication failure\n");
    let r = api.post("/access/ticket", &[("username", "nobody@pve"), ("password", "x")]);
    assert_eq!((r.status, r.message().as_str()), (401, "authentication failure\n"));
    // No credentials at all.
    let raw = raw_tls(
        &api.sim,
        b"GET /api2/json/version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status_line(&raw), "HTTP/1.1 401 No ticket");
    assert!(raw.ends_with("\r\n\r\n"), "empty body: {raw}");
    // Wrong token secret.
    api.with_auth(vec![(
        "Authorization",
        "PVEAPIToken=ansible@pve!automation=00000000-0000-0000-0000-000000000000",
    )]);
    let r = api.get("/version");
    assert_eq!((r.status, r.raw.as_str()), (401, ""));
    let raw = raw_tls(
        &api.sim,
        b"GET /api2/json/version HTTP/1.1\r\nHost: localhost\r\nAuthorization: PVEAPIToken=ansible@pve!nope=x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status_line(&raw), "HTTP/1.1 401 Authentication failed!");
    // Space separator is accepted too.
    api.with_auth(vec![(
        "Authorization",
        "PVEAPIToken ansible@pve!automation=5f1c9e0a-7d3b-4c2e-9a61-0b8d4e2f7a13",
    )]);
    assert_eq!(api.get("/version").status, 200);
    // Bad ticket.
    api.with_auth(vec![("Cookie", "PVEAuthCookie=PVE:root@pam:00000000::AAAA")]);
    assert_eq!(api.get("/version").status, 401);
}

#[test]
fn privilege_separation_403_and_root_only_options() {
    let mut api = Api::start(quick());
    api.with_auth(vec![("Authorization", READONLY)]);
    assert_eq!(api.get("/nodes/pve1/qemu/100/config").status, 200, "audit is allowed");
    let r = api.post("/nodes/pve1/qemu/100/status/start", &[]);
    assert_eq!(r.status, 403);
    assert_eq!(r.message(), "Permission check failed (/vms/100, VM.PowerMgmt)\n");
    let raw = raw_tls(
        &api.sim,
        format!("POST /api2/json/nodes/pve1/qemu/100/status/start HTTP/1.1\r\nHost: localhost\r\nAuthorization: {READONLY}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    assert_eq!(
        status_line(&raw),
        "HTTP/1.1 403 Permission check failed (/vms/100, VM.PowerMgmt)"
    );
    let r = api.put("/nodes/pve1/qemu/100/config", &[("cores", "4")]);
    assert_eq!(r.status, 403);
    assert!(
        r.message()
            .starts_with("Permission check failed (/vms/100, VM.Config.Disk|VM.Config.CDROM"),
        "{}",
        r.message()
    );
    // Automation token: allowed, but skiplock is root-only.
    api.with_auth(vec![("Authorization", TOKEN)]);
    let r = api.put("/nodes/pve1/qemu/100/config", &[("cores", "4"), ("skiplock", "1")]);
    assert_eq!(r.status, 400);
    assert_eq!(r.error("skiplock"), "Only root may use this option.");
    // Storage allocation needs Datastore.AllocateSpace for the token too.
    let r = api.put("/nodes/pve1/qemu/100/config", &[("cores", "4")]);
    assert_eq!(r.status, 200, "{}", r.raw);
    // Tasks of others need Sys.Audit; the readonly token has it via PVEAuditor.
    let upid = api
        .post("/nodes/pve1/qemu/100/status/start", &[])
        .data()
        .as_str()
        .unwrap()
        .to_string();
    api.with_auth(vec![("Authorization", READONLY)]);
    let st = api.wait_task(&upid);
    assert_eq!(st["user"], "ansible@pve");
    assert_eq!(st["tokenid"], "automation");
}

const MFA_SECRET: &str = "JBSWY3DPEHPK3PXP";

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// mfa@pve's code of the step `offset` steps from the one running now (the window is one
/// step either side); later calls with a higher offset always give a higher counter.
fn code(offset: i64) -> String {
    let at = (unix_now() as i64 + offset * 30) as u64;
    pvesim::auth::totp(MFA_SECRET, at).unwrap()
}

/// The first step of PVE 8/9's login: the password alone; mfa@pve gets `NeedTFA`.
fn half_ticket(api: &Api) -> String {
    let r = api.post("/access/ticket", &[("username", "mfa@pve"), ("password", "mfa-pass")]);
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.data()["NeedTFA"], 1, "{}", r.raw);
    assert!(r.data().get("cap").is_none());
    r.data()["ticket"].as_str().unwrap().to_string()
}

fn answer(api: &Api, half: &str, response: &str) -> Resp {
    api.post(
        "/access/ticket",
        &[("username", "mfa@pve"), ("tfa-challenge", half), ("password", response)],
    )
}

/// `(totp_accepted, codes_refused, totp_failures, logins, renewals)` from the simulator.
fn tfa_counts(api: &Api) -> [u64; 5] {
    let r = api.control("GET", "/_pvesim/requests", None);
    ["totp_accepted", "codes_refused", "totp_failures", "logins", "renewals"].map(|k| r[k].as_u64().unwrap())
}

#[test]
fn totp_login_takes_two_steps_and_the_half_ticket_is_no_login() {
    let mut api = Api::start(quick());
    api.with_auth(vec![]);
    let half = half_ticket(&api);
    assert!(half.starts_with("PVE:!tfa!"), "{half}");
    api.with_auth(vec![("Cookie", &format!("PVEAuthCookie={}", urlencode(&half)))]);
    assert_eq!(api.get("/version").status, 401, "a half ticket is refused by the API");
    assert_eq!(api.get("/cluster/resources").status, 401);
    api.with_auth(vec![]);
    let r = api.post("/access/ticket", &[("username", "mfa@pve"), ("password", &half)]);
    assert_eq!(r.status, 401, "a half ticket renews nothing: {}", r.raw);
    let r = answer(&api, &half, &format!("totp:{}", code(0)));
    assert_eq!(r.status, 200, "{}", r.raw);
    let ticket = r.data()["ticket"].as_str().unwrap().to_string();
    assert!(ticket.starts_with("PVE:mfa@pve:"), "{ticket}");
    assert_eq!(r.data()["cap"]["vms"]["VM.Audit"], 1);
    // Renewal: the full ticket as the password, no second factor asked.
    let r = api.post("/access/ticket", &[("username", "mfa@pve"), ("password", &ticket)]);
    assert_eq!(r.status, 200, "{}", r.raw);
    assert!(r.data().get("NeedTFA").is_none(), "{}", r.raw);
    assert_eq!(tfa_counts(&api), [1, 0, 0, 1, 1]);
    // A recovery key, once.
    let keys = api.control(
        "POST",
        "/_pvesim/recovery-keys",
        Some(serde_json::json!({"userid": "mfa@pve"})),
    );
    let key = format!("recovery:{}", keys["keys"][0].as_str().unwrap());
    let r = answer(&api, &half_ticket(&api), &key);
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = answer(&api, &half_ticket(&api), &key);
    assert_eq!(r.status, 401, "a recovery key is used up");
    // A wrong half ticket, or another user's, answers nothing.
    let r = answer(&api, &half.replace("mfa@pve", "root@pam"), &format!("totp:{}", code(1)));
    assert_eq!(r.status, 401);
}

#[test]
fn otp_in_the_first_step_is_pve8s_typed_answer_never_a_login() {
    let mut api = Api::start(quick());
    api.with_auth(vec![]);
    let first = |otp: &str| {
        api.post(
            "/access/ticket",
            &[("username", "mfa@pve"), ("password", "mfa-pass"), ("otp", otp)],
        )
    };
    // A bare code is an untyped answer: "invalid tfa response".
    let r = first(&code(-1));
    assert_eq!((r.status, r.message().as_str()), (401, "authentication failure\n"));
    assert_eq!(
        tfa_counts(&api),
        [0, 1, 0, 0, 0],
        "refused, not counted as a TOTP failure"
    );
    // A typed code is checked and used up, and the answer is still NeedTFA.
    let used = code(0);
    let r = first(&format!("totp:{used}"));
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.data()["NeedTFA"], 1, "{}", r.raw);
    let half = r.data()["ticket"].as_str().unwrap().to_string();
    assert_eq!(tfa_counts(&api), [1, 1, 0, 0, 0]);
    let r = answer(&api, &half, &format!("totp:{used}"));
    assert_eq!(r.status, 401, "the same code again is refused as reused");
    assert_eq!(tfa_counts(&api), [1, 2, 1, 0, 0]);
    // `otp` beside `tfa-challenge`: refused before anything is checked.
    let r = api.post(
        "/access/ticket",
        &[
            ("username", "mfa@pve"),
            ("tfa-challenge", &half),
            ("password", &format!("totp:{}", code(1))),
            ("otp", &format!("totp:{}", code(1))),
        ],
    );
    assert_eq!(r.status, 401);
    // `otp` for a user without a second factor: "no such challenge".
    let r = api.post(
        "/access/ticket",
        &[
            ("username", "root@pam"),
            ("password", "pvesim-root"),
            ("otp", "totp:123456"),
        ],
    );
    assert_eq!(r.status, 401, "{}", r.raw);
    assert_eq!(tfa_counts(&api), [1, 2, 1, 0, 0]);
    let r = answer(&api, &half_ticket(&api), &format!("totp:{}", code(1)));
    assert_eq!(r.status, 200, "a code of a later step still logs in: {}", r.raw);
}

#[test]
fn eight_refused_codes_lock_totp_until_unlock_tfa() {
    let mut api = Api::start(quick());
    api.with_auth(vec![]);
    let used = code(-1);
    assert_eq!(answer(&api, &half_ticket(&api), &format!("totp:{used}")).status, 200);
    for attempt in 0..8 {
        let wrong = if attempt % 2 == 0 {
            used.clone()
        } else {
            "000000".to_string()
        };
        let r = answer(&api, &half_ticket(&api), &format!("totp:{wrong}"));
        assert_eq!(r.status, 401, "attempt {attempt}");
    }
    assert_eq!(tfa_counts(&api), [1, 8, 8, 1, 0]);
    let fresh = code(0);
    let r = answer(&api, &half_ticket(&api), &format!("totp:{fresh}"));
    assert_eq!(r.status, 401, "locked: a right code is refused too");
    assert_eq!(
        tfa_counts(&api),
        [1, 9, 8, 1, 0],
        "a refusal while locked is no new failure"
    );
    // unlock-tfa: User.Modify on /access/groups (root has it; mfa@pve, an auditor, not).
    let (mfa_ticket, mfa_csrf) = {
        let keys = api.control(
            "POST",
            "/_pvesim/recovery-keys",
            Some(serde_json::json!({"userid": "mfa@pve"})),
        );
        let key = format!("recovery:{}", keys["keys"][0].as_str().unwrap());
        let r = answer(&api, &half_ticket(&api), &key);
        assert_eq!(r.status, 200, "a recovery key still logs in: {}", r.raw);
        let d = r.data();
        (
            d["ticket"].as_str().unwrap().to_string(),
            d["CSRFPreventionToken"].as_str().unwrap().to_string(),
        )
    };
    let cookie = format!("PVEAuthCookie={}", urlencode(&mfa_ticket));
    api.with_auth(vec![("Cookie", &cookie), ("CSRFPreventionToken", &mfa_csrf)]);
    let r = api.put("/access/users/mfa@pve/unlock-tfa", &[]);
    assert_eq!(r.status, 403, "{}", r.raw);
    let (root, root_csrf) = root_ticket(&api);
    let cookie = format!("PVEAuthCookie={}", urlencode(&root));
    api.with_auth(vec![("Cookie", &cookie), ("CSRFPreventionToken", &root_csrf)]);
    let r = api.put("/access/users/mfa@pve/unlock-tfa", &[]);
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(
        r.data(),
        &serde_json::json!(0),
        "the recovery key lifted the lock already"
    );
    api.with_auth(vec![]);
    for _ in 0..8 {
        answer(&api, &half_ticket(&api), "totp:000000");
    }
    assert_eq!(
        answer(&api, &half_ticket(&api), &format!("totp:{}", code(1))).status,
        401
    );
    api.with_auth(vec![("Cookie", &cookie), ("CSRFPreventionToken", &root_csrf)]);
    let r = api.put("/access/users/mfa@pve/unlock-tfa", &[]);
    assert_eq!((r.status, r.data()), (200, &serde_json::json!(1)), "{}", r.raw);
    api.with_auth(vec![]);
    let r = answer(&api, &half_ticket(&api), &format!("totp:{}", code(1)));
    assert_eq!(r.status, 200, "unlocked, a fresh code logs in: {}", r.raw);
}

#[test]
fn tls_fingerprint_and_self_signed_mode() {
    for mode in [TlsMode::Ca, TlsMode::SelfSigned] {
        let api = Api::start(SimConfig { tls: mode, ..quick() });
        assert_eq!(api.get("/version").status, 200, "{mode:?}: client trusts ca_pem");
        let fp = api.sim.fingerprint();
        assert_eq!(fp.len(), 95);
        let nodes = api.get("/nodes");
        assert_eq!(nodes.data()[0]["ssl_fingerprint"], fp.as_str());
        if mode == TlsMode::SelfSigned {
            // The PEM is the server certificate itself: its SHA-256 is the fingerprint.
            use rustls::pki_types::{pem::PemObject, CertificateDer};
            let der = CertificateDer::from_pem_slice(api.sim.ca_pem().as_bytes()).unwrap();
            assert_eq!(pvesim::tls::fingerprint(&der), fp);
        }
        let dir = std::env::temp_dir().join(format!("pvesim-ca-test-{}.pem", api.sim.port()));
        api.sim.write_ca(&dir).unwrap();
        assert!(std::fs::read_to_string(&dir).unwrap().contains("BEGIN CERTIFICATE"));
        let _ = std::fs::remove_file(dir);
    }
}

#[test]
fn create_checks_per_key_config_privileges() {
    let mut scenario = pvesim::Scenario::default_cluster();
    scenario.roles.insert(
        "AllocOnly".into(),
        vec![
            "VM.Allocate".into(),
            "VM.Audit".into(),
            "Datastore.AllocateSpace".into(),
        ],
    );
    let user = scenario.users.iter_mut().find(|u| u.userid == "ansible@pve").unwrap();
    user.tokens.push(pvesim::state::TokenDef {
        id: "alloc".into(),
        secret: "abc".into(),
        privsep: false,
    });
    scenario.acls.retain(|a| a.ugid != "ansible@pve");
    scenario.acls.push(pvesim::state::AclDef {
        path: "/".into(),
        ugid: "ansible@pve".into(),
        roles: vec!["AllocOnly".into()],
        propagate: true,
    });
    let mut api = Api::start(SimConfig { scenario, ..quick() });
    api.with_auth(vec![("Authorization", "PVEAPIToken=ansible@pve!alloc=abc")]);
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "150"), ("cores", "2")]);
    assert_eq!(
        (r.status, r.message().as_str()),
        (403, "Permission check failed (/vms/150, VM.Config.CPU)\n")
    );
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "150"), ("net0", "virtio,bridge=vmbr0")]);
    assert_eq!(r.message(), "Permission check failed (/vms/150, VM.Config.Network)\n");
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "150")]);
    assert_eq!(r.status, 200, "a bare create needs only VM.Allocate: {}", r.raw);
}

/// A login of root@pam: (ticket, CSRF token).
fn root_ticket(api: &Api) -> (String, String) {
    let r = api.send(
        "POST",
        "/access/ticket",
        &[("username", "root@pam"), ("password", "pvesim-root")],
    );
    assert_eq!(r.status, 200, "{}", r.raw);
    (
        r.data()["ticket"].as_str().unwrap().to_string(),
        r.data()["CSRFPreventionToken"].as_str().unwrap().to_string(),
    )
}

/// The status line of `METHOD path` with these extra header lines.
fn status_with(api: &Api, method: &str, path: &str, headers: &[String]) -> String {
    let mut req = format!("{method} /api2/json{path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    if method != "GET" {
        req.push_str("Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 13\r\n\r\ndescription=z");
    } else {
        req.push_str("\r\n");
    }
    status_line(&raw_tls(&api.sim, req.as_bytes())).to_string()
}

#[test]
fn a_ticket_hides_the_api_token_as_in_pve_http_server() {
    // pve-http-server (APIServer/AnyEvent.pm) prefers the PVEAuthCookie cookie, then
    // PVEAuthCookie in Authorization, and reads PVEAPIToken only when neither gave a
    // ticket; pve-manager's auth_handler then checks the one it was handed.
    let mut api = Api::start(quick());
    api.with_auth(vec![]);
    let (ticket, csrf) = root_ticket(&api);
    let token = format!("Authorization: {TOKEN}");
    let ok = "HTTP/1.1 200 OK";
    let failed = "HTTP/1.1 401 Authentication failed!";

    // A stale or forged cookie beside a valid token: the cookie is checked, and fails.
    let stale = "Cookie: PVEAuthCookie=PVE:ansible@pve:60000000::AAAA".to_string();
    assert_eq!(
        status_with(&api, "GET", "/version", &[token.clone(), stale.clone()]),
        failed
    );
    assert_eq!(
        status_with(
            &api,
            "GET",
            "/version",
            &[token.clone(), "Cookie: PVEAuthCookie=bogus".into()]
        ),
        failed
    );
    // The same in the Authorization header's own PVEAuthCookie fallback.
    assert_eq!(
        status_with(
            &api,
            "GET",
            "/version",
            &[format!("Authorization: PVEAuthCookie=bogus; {}", TOKEN)]
        ),
        failed
    );

    // An empty cookie value is no ticket (Perl false): the token is used.
    assert_eq!(
        status_with(
            &api,
            "GET",
            "/version",
            &[token.clone(), "Cookie: PVEAuthCookie=".into()]
        ),
        ok
    );
    assert_eq!(
        status_with(
            &api,
            "GET",
            "/version",
            &[token.clone(), "Cookie: PVEAuthCookie=0".into()]
        ),
        ok
    );
    // The cookie is found only at the start of the header or after white space.
    assert_eq!(
        status_with(
            &api,
            "GET",
            "/version",
            &[token.clone(), "Cookie: a=1;PVEAuthCookie=bogus".into()]
        ),
        ok
    );
    assert_eq!(
        status_with(
            &api,
            "GET",
            "/version",
            &[token.clone(), "Cookie: a=1; PVEAuthCookie=bogus".into()]
        ),
        failed
    );
    // Other cookies do not matter.
    assert_eq!(
        status_with(
            &api,
            "GET",
            "/version",
            &[token.clone(), "Cookie: PVELangCookie=en".into()]
        ),
        ok
    );

    // A valid ticket beside a bogus token: the ticket authenticates, the token is not read.
    let cookie = format!("Cookie: PVEAuthCookie={}", urlencode(&ticket));
    let bogus = "Authorization: PVEAPIToken=ansible@pve!automation=00000000-0000-0000-0000-000000000000".to_string();
    assert_eq!(
        status_with(&api, "GET", "/version", &[bogus.clone(), cookie.clone()]),
        ok
    );
    // ... and as root@pam: an option only root may use is accepted.
    let csrf_h = format!("CSRFPreventionToken: {csrf}");
    let skiplock = "/nodes/pve1/qemu/100/config?skiplock=1";
    assert_eq!(
        status_with(&api, "PUT", skiplock, &[bogus.clone(), cookie.clone(), csrf_h.clone()]),
        ok
    );
    // A write with a ticket needs its CSRF token, even beside a valid API token.
    assert_eq!(
        status_with(
            &api,
            "PUT",
            "/nodes/pve1/qemu/100/config",
            &[token.clone(), cookie.clone()]
        ),
        "HTTP/1.1 401 Permission denied - invalid csrf token"
    );
    // A write with the API token alone needs none.
    assert_eq!(status_with(&api, "PUT", "/nodes/pve1/qemu/100/config", &[token]), ok);
    // The token's value is percent-decoded and its id runs to the last `=`.
    let encoded = TOKEN.replace('!', "%21");
    assert_eq!(
        status_with(&api, "GET", "/version", &[format!("Authorization: {encoded}")]),
        ok
    );
}

/// An AD realm set `case-sensitive: 0` (PVE's `lookup_username`): a login name in
/// another case logs in `user.cfg`'s spelling, which the ticket, the answer's `username`
/// and the second factor carry; the ticket renews under any case of the name; a name
/// matching two users is refused.
#[test]
fn a_case_insensitive_realm_logs_in_the_user_cfg_spelling() {
    let mut scenario = pvesim::Scenario::default_cluster();
    scenario.realms.push(pvesim::state::RealmDef {
        realm: "ad".into(),
        kind: "ad".into(),
        case_sensitive: false,
    });
    scenario.users.push(pvesim::state::UserDef {
        userid: "totp@ad".into(),
        password: Some("ad-pass".into()),
        enable: true,
        totp_secret: Some(MFA_SECRET.into()),
        tokens: vec![],
    });
    let mut api = Api::start(SimConfig { scenario, ..quick() });
    api.with_auth(vec![]);
    let first = api.post("/access/ticket", &[("username", "Totp@AD"), ("password", "ad-pass")]);
    assert_eq!(first.status, 401, "the realm's id is not folded: {}", first.raw);
    let first = api.post("/access/ticket", &[("username", "TOTP@ad"), ("password", "ad-pass")]);
    assert_eq!(
        (first.status, &first.data()["NeedTFA"]),
        (200, &serde_json::json!(1)),
        "{}",
        first.raw
    );
    assert_eq!(first.data()["username"], "totp@ad");
    let half = first.data()["ticket"].as_str().unwrap().to_string();
    let code = format!("totp:{}", code(0));
    let full = api.post(
        "/access/ticket",
        &[("username", "Totp@ad"), ("tfa-challenge", &half), ("password", &code)],
    );
    assert_eq!(full.status, 200, "{}", full.raw);
    assert_eq!(full.data()["username"], "totp@ad");
    let ticket = full.data()["ticket"].as_str().unwrap().to_string();
    assert!(ticket.starts_with("PVE:totp@ad:"), "{ticket}");
    let renewed = api.post("/access/ticket", &[("username", "TOTP@ad"), ("password", &ticket)]);
    assert_eq!(renewed.status, 200, "{}", renewed.raw);
    // The code was used by totp@ad, whatever the case it was typed with.
    let again = api.post("/access/ticket", &[("username", "totp@ad"), ("password", "ad-pass")]);
    let half = again.data()["ticket"].as_str().unwrap().to_string();
    let r = api.post(
        "/access/ticket",
        &[("username", "totp@ad"), ("tfa-challenge", &half), ("password", &code)],
    );
    assert_eq!(r.status, 401, "reused: {}", r.raw);
    assert_eq!(tfa_counts(&api), [1, 1, 1, 1, 1]);
    // A case-sensitive realm keeps the name as given: no such user.
    let r = api.post(
        "/access/ticket",
        &[("username", "Root@pam"), ("password", "pvesim-root")],
    );
    assert_eq!(r.status, 401, "{}", r.raw);
}

#[test]
fn two_users_alike_but_for_case_are_an_ambiguous_login() {
    let mut scenario = pvesim::Scenario::default_cluster();
    scenario.realms.push(pvesim::state::RealmDef {
        realm: "ad".into(),
        kind: "ad".into(),
        case_sensitive: false,
    });
    for userid in ["ann@ad", "Ann@ad"] {
        scenario.users.push(pvesim::state::UserDef {
            userid: userid.into(),
            password: Some("p".into()),
            enable: true,
            totp_secret: None,
            tokens: vec![],
        });
    }
    let mut api = Api::start(SimConfig { scenario, ..quick() });
    api.with_auth(vec![]);
    let r = api.post("/access/ticket", &[("username", "ANN@ad"), ("password", "p")]);
    assert_eq!(r.status, 500, "{}", r.raw);
    assert_eq!(
        r.message(),
        "ambiguous case insensitive match of username 'ANN@ad', cannot safely grant access!\n"
    );
}

/// `/_pvesim/hold`: a matching request waits, not yet carried out, until released.
#[test]
fn a_held_login_waits_until_released() {
    let mut api = Api::start(quick());
    api.with_auth(vec![]);
    let held = serde_json::json!({"path_regex": "^/api2/json/access/ticket$", "method": "POST"});
    api.control("POST", "/_pvesim/hold", Some(held));
    assert_eq!(api.get("/access/ticket").status, 200, "another method passes");
    std::thread::scope(|s| {
        let login = s.spawn(|| {
            api.post(
                "/access/ticket",
                &[("username", "root@pam"), ("password", "pvesim-root")],
            )
        });
        while api.control("GET", "/_pvesim/hold", None)["waiting"] != 1 {
            std::thread::yield_now();
        }
        assert_eq!(tfa_counts(&api)[3], 0, "held before it is carried out");
        api.control("DELETE", "/_pvesim/hold", None);
        assert_eq!(login.join().unwrap().status, 200);
    });
    assert_eq!(tfa_counts(&api)[3], 1);
}
