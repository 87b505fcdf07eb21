//! The order in which PVE refuses a request: authentication (pve-http-server's
//! `auth_handler`), the schema's permissions (`check_api2_permissions` in pve-manager's
//! `rest_handler`), the node proxy, then parameter validation (`RESTHandler::handle`),
//! then the checks inside the handler body.

use crate::common::*;

#[test]
fn a_caller_without_the_privilege_gets_403_not_the_parameter_error() {
    let mut api = Api::start(quick());
    let bad = [("no-such-option", "1"), ("timeout", "abc")];
    let path = "/nodes/pve1/qemu/100/status/start";

    let allowed = api.post(path, &bad);
    assert_eq!(allowed.status, 400, "{}", allowed.raw);
    assert!(
        allowed.error("timeout").starts_with("type check ('integer') failed"),
        "{}",
        allowed.raw
    );

    api.with_auth(vec![("Authorization", READONLY)]);
    let refused = api.post(path, &bad);
    assert_eq!(refused.status, 403, "{}", refused.raw);
    assert_eq!(
        refused.message().trim_end(),
        "Permission check failed (/vms/100, VM.PowerMgmt)"
    );
    assert!(
        refused.body["errors"].is_null(),
        "no parameter errors leak: {}",
        refused.raw
    );
}

#[test]
fn the_permission_template_takes_the_parameters_as_sent() {
    let mut api = Api::start(quick());
    api.with_auth(vec![("Authorization", READONLY)]);
    // `vmid` is not an integer: the check runs on `/vms/web`, before validation would say so.
    let r = api.post("/nodes/pve1/qemu/web/status/start", &[]);
    assert_eq!(r.status, 403, "{}", r.raw);
    assert_eq!(
        r.message().trim_end(),
        "Permission check failed (/vms/web, VM.PowerMgmt)"
    );
}

#[test]
fn the_node_is_resolved_before_the_parameters_are_validated() {
    let api = Api::start(quick());
    let r = api.post("/nodes/pve9/qemu/100/status/start", &[("timeout", "abc")]);
    assert_eq!(r.status, 500, "{}", r.raw);
    assert!(r.message().starts_with("hostname lookup 'pve9' failed"), "{}", r.raw);
}

#[test]
fn checks_in_the_handler_body_come_after_validation() {
    let mut api = Api::start(quick());
    api.with_auth(vec![("Authorization", READONLY)]);
    // Create is `user => 'all'`: its VM.Allocate check is in the handler's code.
    let invalid = api.post("/nodes/pve1/qemu", &[("vmid", "150"), ("cores", "many")]);
    assert_eq!(invalid.status, 400, "{}", invalid.raw);
    assert!(
        invalid.error("cores").contains("type check ('integer') failed"),
        "{}",
        invalid.raw
    );
    let valid = api.post("/nodes/pve1/qemu", &[("vmid", "150"), ("cores", "2")]);
    assert_eq!(valid.status, 403, "{}", valid.raw);
}

#[test]
fn root_only_options_are_refused_after_validation() {
    let api = Api::start(quick());
    let both = api.post(
        "/nodes/pve1/qemu/100/status/start",
        &[("skiplock", "1"), ("timeout", "abc")],
    );
    assert_eq!(both.status, 400, "{}", both.raw);
    assert!(both.error("timeout").contains("type check"), "{}", both.raw);
    assert!(both.error("skiplock").is_empty(), "{}", both.raw);
    let only = api.post("/nodes/pve1/qemu/100/status/start", &[("skiplock", "1")]);
    assert_eq!(only.status, 400, "{}", only.raw);
    assert_eq!(only.error("skiplock"), "Only root may use this option.");
}

#[test]
fn credentials_are_checked_before_the_path_and_the_body() {
    let mut api = Api::start(quick());
    api.with_auth(vec![]);
    let unknown = api.get("/nodes/pve1/qemu/100/no-such-call");
    assert_eq!(unknown.status, 401, "{}", unknown.raw);
    let bad_param = api.post("/nodes/pve1/qemu/100/status/start", &[("timeout", "abc")]);
    assert_eq!(bad_param.status, 401, "{}", bad_param.raw);

    api.with_auth(vec![("Authorization", TOKEN)]);
    let served = api.get("/nodes/pve1/qemu/100/no-such-call");
    assert_eq!(served.status, 501, "{}", served.raw);
    assert_eq!(
        served.message(),
        "Method 'GET /nodes/pve1/qemu/100/no-such-call' not implemented"
    );
}

/// A form body as pve-http-server's `decode_urlencoded` reads it: pairs split at `;` as
/// well as `&`, a value ending at a second raw `=`, an empty value undefined (absent to
/// the schema).
#[test]
fn a_form_body_is_split_as_decode_urlencoded_splits_it() {
    let api = Api::start(quick());
    let body = "description=a=b;name=web9";
    let raw = raw_tls(
        &api.sim,
        format!(
            "PUT /api2/json/nodes/pve1/qemu/100/config HTTP/1.1\r\nHost: localhost\r\nAuthorization: {TOKEN}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    assert_eq!(status_line(&raw), "HTTP/1.1 200 OK", "{raw}");
    let conf = api.config("pve1", 100);
    assert_eq!(conf["description"], "a", "{conf}");
    assert_eq!(conf["name"], "web9", "{conf}");
    // `vmid=` is an undefined vmid: missing, not a type error.
    let r = api.post("/nodes/pve1/qemu", &[("vmid", "")]);
    assert_eq!(r.status, 400, "{}", r.raw);
    assert_eq!(r.error("vmid"), "property is missing and it is not optional");
}
