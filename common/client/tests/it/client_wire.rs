//! The client on the wire, against a small local HTTPS server: TLS modes, headers,
//! encodings, error texts, retries and timeouts.

// Test code: an unwrap that fails is the test's report.
#![allow(clippy::unwrap_used, clippy::err_expect)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{Cert, Reply, TestServer};
use ferrox_pve_client::client::{ApiErrorKind, Client};
use ferrox_pve_client::connection::ConnectionParams;
use serde_json::json;

const SECRET: &str = "5f1c9e0a-7d3b-4c2e-9a61-0b8d4e2f7a13";
const PASSWORD: &str = "pvesim-root";

fn token_params(server: &TestServer) -> ConnectionParams {
    ConnectionParams {
        host: "127.0.0.1".into(),
        port: Some(server.port),
        user: "ansible@pve".into(),
        token_id: Some("automation".into()),
        token_secret: Some(SECRET.into()),
        validate_certs: false,
        timeout_secs: 5,
        ..Default::default()
    }
}

fn password_params(server: &TestServer) -> ConnectionParams {
    ConnectionParams {
        user: "root@pam".into(),
        password: Some(PASSWORD.into()),
        token_id: None,
        token_secret: None,
        ..token_params(server)
    }
}

fn ok_server() -> TestServer {
    TestServer::start(Cert::SignedByCa, |_| {
        Reply::json(json!({"data": {"version": "9.1.2"}, "total": 1}))
    })
}

fn no_secret_in(text: &str) {
    assert!(
        !text.contains(SECRET) && !text.contains(PASSWORD),
        "secret leaked: {text}"
    );
}

#[test]
fn token_auth_sends_the_header_and_makes_no_request_at_connect() {
    let server = ok_server();
    let client = Client::connect(&token_params(&server)).unwrap();
    assert_eq!(client.requests_sent(), 0);
    assert!(server.requests().is_empty());
    let data = client.get("/version", &[]).unwrap();
    assert_eq!(data, json!({"version": "9.1.2"}));
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].target, "/api2/json/version");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("PVEAPIToken=ansible@pve!automation={SECRET}").as_str())
    );
    assert_eq!(client.requests_sent(), 1);
}

#[test]
fn password_auth_uses_ticket_cookie_and_csrf_on_writes() {
    let server = TestServer::start(Cert::SignedByCa, |req| {
        if req.target == "/api2/json/access/ticket" {
            Reply::json(
                json!({"data": {"ticket": "PVE:root@pam:6570A1B2::c2ln+/=", "CSRFPreventionToken": "6570A1B2:Y3NyZg", "username": "root@pam"}}),
            )
        } else {
            Reply::json(json!({"data": null}))
        }
    });
    let client = Client::connect(&password_params(&server)).unwrap();
    assert_eq!(client.requests_sent(), 1, "the ticket request");
    client.get("/cluster/resources", &[("type", "vm".into())]).unwrap();
    client
        .put("/nodes/pve1/qemu/100/config", &[("memory", "2048".into())])
        .unwrap();
    let seen = server.requests();
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].body, "username=root%40pam&password=pvesim-root");
    assert_eq!(seen[0].header("authorization"), None);
    assert_eq!(seen[1].target, "/api2/json/cluster/resources?type=vm");
    assert_eq!(
        seen[1].header("cookie"),
        Some("PVEAuthCookie=PVE:root@pam:6570A1B2::c2ln+/=")
    );
    assert_eq!(seen[1].header("csrfpreventiontoken"), None, "GET needs no CSRF token");
    assert_eq!(seen[2].method, "PUT");
    assert_eq!(seen[2].header("csrfpreventiontoken"), Some("6570A1B2:Y3NyZg"));
    assert_eq!(
        seen[2].header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(seen[2].body, "memory=2048");
}

#[test]
fn wrong_password_fails_like_1_6() {
    let server = TestServer::start(Cert::SignedByCa, |_| {
        Reply::status(
            401,
            "authentication failure",
            "{\"data\":null,\"message\":\"authentication failure\\n\"}",
        )
    });
    let err = Client::connect(&password_params(&server))
        .err()
        .expect("login must fail");
    assert_eq!(err.kind, ApiErrorKind::Auth);
    assert_eq!(
        err.to_string(),
        format!(
            "Couldn't authenticate user: root@pam to https://127.0.0.1:{}/api2/json/access/ticket",
            server.port
        )
    );
    no_secret_in(&err.to_string());
}

#[test]
fn second_factor_is_asked_for_and_answered() {
    let server = TestServer::start(Cert::SignedByCa, |req| {
        if req.body.contains("tfa-challenge=") {
            Reply::json(json!({"data": {"ticket": "PVE:u@pve:1::full", "CSRFPreventionToken": "1:c"}}))
        } else {
            Reply::json(json!({"data": {"ticket": "PVE:!tfa!u@pve:1::half", "NeedTFA": 1, "username": "u@pve"}}))
        }
    });
    let mut params = password_params(&server);
    let err = Client::connect(&params).err().expect("no otp given");
    assert_eq!(
        err.to_string(),
        "Couldn't authenticate user: missing Two Factor Authentication (TFA)"
    );

    params.otp = Some("123456".into());
    let client = Client::connect(&params).unwrap();
    assert_eq!(client.requests_sent(), 2);
    let second = server.requests().last().unwrap().body.clone();
    assert!(
        second.contains("tfa-challenge=PVE%3A%21tfa%21u%40pve%3A1%3A%3Ahalf"),
        "{second}"
    );
    assert!(second.contains("password=totp%3A123456"), "{second}");
}

#[test]
fn form_values_and_query_parameters_are_percent_encoded() {
    let server = TestServer::start(Cert::SignedByCa, |_| {
        Reply::json(json!({"data": "UPID:pve1:0:0:0:resize:100:root@pam:"}))
    });
    let client = Client::connect(&token_params(&server)).unwrap();
    let upid = client
        .put(
            "/nodes/pve1/qemu/100/resize",
            &[("disk", "scsi0".into()), ("size", "+2G".into())],
        )
        .unwrap();
    assert_eq!(upid, json!("UPID:pve1:0:0:0:resize:100:root@pam:"));
    client
        .delete(
            "/nodes/pve1/qemu/100",
            &[("purge", "1".into()), ("destroy-unreferenced-disks", "1".into())],
        )
        .unwrap();
    let seen = server.requests();
    assert_eq!(seen[0].body, "disk=scsi0&size=%2B2G");
    assert_eq!(seen[1].method, "DELETE");
    assert_eq!(
        seen[1].target,
        "/api2/json/nodes/pve1/qemu/100?purge=1&destroy-unreferenced-disks=1"
    );
    assert_eq!(seen[1].body, "");
}

#[test]
fn one_connection_serves_the_whole_run() {
    let server = ok_server();
    let client = Client::connect(&token_params(&server)).unwrap();
    for _ in 0..5 {
        client.get("/version", &[]).unwrap();
    }
    // Keep-alive: one TCP connection (and one TLS handshake) for every request of a run.
    assert_eq!(server.requests().len(), 5);
    assert_eq!(server.connections(), 1);
}

#[test]
fn ipv6_literals_work_with_and_without_brackets() {
    let server = TestServer::start_on("[::1]:0", Cert::SignedByCa, |_| Reply::json(json!({"data": "v6"})));
    let ca = server.write_ca("v6");
    for (host, port) in [
        ("::1".to_string(), Some(server.port)),
        (format!("[::1]:{}", server.port), None),
    ] {
        let params = ConnectionParams {
            host: host.clone(),
            port,
            validate_certs: true,
            ca_path: Some(ca.clone()),
            ..token_params(&server)
        };
        let client = Client::connect(&params).unwrap();
        assert_eq!(client.base_url(), format!("https://[::1]:{}/api2/json", server.port));
        assert_eq!(client.get("/version", &[]).unwrap(), json!("v6"), "{host}");
    }
}

#[test]
fn validate_certs_with_the_ca_in_ca_path_succeeds() {
    let server = ok_server();
    let mut params = token_params(&server);
    params.validate_certs = true;
    params.ca_path = Some(server.write_ca("ca"));
    let client = Client::connect(&params).unwrap();
    client.get("/version", &[]).unwrap();
}

#[test]
fn validate_certs_against_web_pki_explains_every_fix_with_the_presented_fingerprint() {
    let server = ok_server();
    let mut params = token_params(&server);
    params.validate_certs = true;
    let client = Client::connect(&params).unwrap();
    let err = client.get("/version", &[]).unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Tls);
    let fp = ferrox_pve_client::client::tls::fingerprint(&server.leaf_der);
    assert_eq!(
        err.to_string(),
        format!(
            "TLS certificate of https://127.0.0.1:{} could not be verified (invalid peer certificate: UnknownIssuer). Proxmox VE uses a self-signed certificate by default: set api_cert_fingerprint to its SHA-256 fingerprint (the server presented {fp}), or ca_path to the CA that signed it (/etc/pve/pve-root-ca.pem on a node), or validate_certs: false to skip verification.",
            server.port
        )
    );
    assert_eq!(client.requests_sent(), 1, "TLS failures are not retried");
}

#[test]
fn a_different_ca_in_ca_path_is_rejected() {
    let server = ok_server();
    let other = TestServer::start(Cert::SignedByCa, |_| Reply::json(json!({})));
    let mut params = token_params(&server);
    params.validate_certs = true;
    params.ca_path = Some(other.write_ca("other"));
    let err = Client::connect(&params).unwrap().get("/version", &[]).unwrap_err();
    assert!(
        err.to_string().contains("could not be verified against ca_path"),
        "{err}"
    );
}

#[test]
fn fingerprint_pin_accepts_a_self_signed_certificate_and_rejects_a_mismatch() {
    let server = TestServer::start(Cert::SelfSigned, |_| Reply::json(json!({"data": 1})));
    let fp = ferrox_pve_client::client::tls::fingerprint(&server.leaf_der);
    let mut params = token_params(&server);
    params.validate_certs = true;
    params.cert_fingerprint = ferrox_pve_client::connection::normalise_fingerprint(&fp);
    assert_eq!(
        Client::connect(&params).unwrap().get("/version", &[]).unwrap(),
        json!(1)
    );

    let wrong = "AB:".repeat(31) + "AB";
    params.cert_fingerprint = ferrox_pve_client::connection::normalise_fingerprint(&wrong);
    let err = Client::connect(&params).unwrap().get("/version", &[]).unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Tls);
    assert!(
        err.to_string()
            .contains(&format!("expected {wrong}, the server presented {fp}")),
        "{err}"
    );
}

#[test]
fn a_missing_ca_file_names_ca_path() {
    let server = ok_server();
    let mut params = token_params(&server);
    params.validate_certs = true;
    params.ca_path = Some("/nonexistent/pve-root-ca.pem".into());
    let err = Client::connect(&params).err().expect("unreadable ca_path");
    assert!(
        err.to_string()
            .starts_with("ca_path /nonexistent/pve-root-ca.pem could not be read"),
        "{err}"
    );
}

#[test]
fn errors_render_like_1_6() {
    let server = TestServer::start(Cert::SignedByCa, |req| {
        match req.target.as_str() {
        t if t.ends_with("/bad") => Reply::status(
            400,
            "Parameter verification failed.",
            "{\"data\":null,\"errors\":{\"vmid\":\"duplicate parameter (already defined in URI)\"},\"message\":\"Parameter verification failed.\\n\"}",
        ),
        t if t.ends_with("/old") => Reply::status(500, "unable to create VM 108 - VM 108 already exists on node 'pve1'", "{\"data\":null}"),
        t if t.ends_with("/denied") => Reply::status(
            403,
            "Permission check failed (/vms/100, VM.Allocate)",
            "{\"data\":null,\"message\":\"Permission check failed (/vms/100, VM.Allocate)\\n\"}",
        ),
        _ => Reply::status(401, "No ticket", ""),
    }
    });
    let client = Client::connect(&token_params(&server)).unwrap();
    let bad = client.post("/bad", &[("vmid", "100".into())]).unwrap_err();
    assert_eq!(
        bad.to_string(),
        "400 Bad Request: Parameter verification failed. - {'vmid': 'duplicate parameter (already defined in URI)'}"
    );
    let old = client.post("/old", &[]).unwrap_err();
    assert_eq!(
        old.to_string(),
        "500 Internal Server Error: unable to create VM 108 - VM 108 already exists on node 'pve1'"
    );
    let denied = client.post("/denied", &[]).unwrap_err();
    assert_eq!(
        denied.to_string(),
        "403 Forbidden: Permission check failed (/vms/100, VM.Allocate) - API token ansible@pve!automation lacks this privilege"
    );
    let unauthorized = client.get("/anything", &[]).unwrap_err();
    assert_eq!(
        unauthorized.to_string(),
        "401 Unauthorized: No ticket - check api_user, api_token_id and api_token_secret (or api_password): the API token ansible@pve!automation was not accepted"
    );
    for e in [bad, old, denied, unauthorized] {
        no_secret_in(&e.to_string());
    }
}

#[test]
fn a_503_is_repeated_for_reads_and_writes_a_500_only_for_reads() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let server = TestServer::start(Cert::SignedByCa, move |_| {
        if counter.fetch_add(1, Ordering::SeqCst) < 2 {
            Reply::status(503, "Service Unavailable", "")
        } else {
            Reply::json(json!({"data": "ok"}))
        }
    });
    let client = Client::connect(&token_params(&server)).unwrap();
    assert_eq!(client.get("/cluster/resources", &[]).unwrap(), json!("ok"));
    assert_eq!(client.requests_sent(), 3);
    let notes = client.progress_notes();
    assert!(
        notes.len() == 1
            && notes[0].starts_with("GET /cluster/resources: 503 Service Unavailable on 2 attempts over ")
            && notes[0].ends_with(", then answered"),
        "{notes:?}"
    );

    // pveproxy's 503: the request never reached a worker, so a write is sent again too.
    calls.store(0, Ordering::SeqCst);
    assert_eq!(client.post("/nodes/pve1/qemu", &[]).unwrap(), json!("ok"));
    assert_eq!(client.requests_sent(), 6);
    assert_eq!(client.repeated_writes().len(), 2, "{:?}", client.repeated_writes());
    assert!(
        client.repeated_writes()[0].starts_with("POST /nodes/pve1/qemu (503"),
        "{:?}",
        client.repeated_writes()
    );
}

#[test]
fn a_500_write_is_sent_once_but_a_lock_timeout_is_repeated() {
    let lock = "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout";
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let server = TestServer::start(Cert::SignedByCa, move |_| {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        match n {
            0 => Reply::status(
                500,
                "VM is locked (backup)",
                "{\"data\":null,\"message\":\"VM is locked (backup)\\n\"}",
            ),
            1 => Reply::status(500, lock, &format!("{{\"data\":null,\"message\":\"{lock}\\n\"}}")),
            _ => Reply::json(json!({"data": null})),
        }
    });
    let client = Client::connect(&token_params(&server)).unwrap();
    let err = client.put("/nodes/pve1/qemu/100/config", &[]).unwrap_err();
    assert_eq!(err.to_string(), "500 Internal Server Error: VM is locked (backup)");
    assert_eq!(client.requests_sent(), 1, "a failed write is sent once");
    assert_eq!(client.put("/nodes/pve1/qemu/100/config", &[]).unwrap(), json!(null));
    assert_eq!(
        client.requests_sent(),
        3,
        "PVE takes the lock before writing: safe to repeat"
    );
}

#[test]
fn a_read_that_keeps_failing_gives_up_after_four_jittered_attempts() {
    let server = TestServer::start(Cert::SignedByCa, |_| {
        Reply::status(500, "got timeout", "{\"data\":null,\"message\":\"got timeout\\n\"}")
    });
    let client = Client::connect(&token_params(&server)).unwrap();
    let started = Instant::now();
    let err = client.get("/cluster/resources", &[]).unwrap_err();
    assert_eq!(err.to_string(), "500 Internal Server Error: got timeout");
    assert_eq!(server.requests().len(), 4);
    // Pauses of [125, 250] + [250, 500] + [500, 1000] ms.
    assert!(
        started.elapsed() >= Duration::from_millis(875),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_503_that_outlasts_the_window_fails_naming_it_and_how_long_it_was_tried() {
    let server = TestServer::start(Cert::SignedByCa, |_| Reply::status(503, "Service Unavailable", ""));
    let client = Client::connect(&token_params(&server)).unwrap();
    client.set_retry_budget(Duration::from_millis(300));
    let err = client.get("/version", &[]).unwrap_err();
    assert!(err.is_status(503), "{err}");
    let text = err.to_string();
    let attempts: usize = text
        .strip_prefix("503 Service Unavailable: Service Unavailable - GET /version failed with 503 Service Unavailable on each of ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(attempts, server.requests().len(), "{text}");
    assert!(
        text.contains(
            "until the task's timeout (0.3 s) ran out; Proxmox VE did not act on it. Raise timeout to wait longer"
        ),
        "{text}"
    );
    let notes = client.progress_notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("GET /version: 503 Service Unavailable on "),
        "{notes:?}"
    );
    assert!(notes[0].ends_with(", gave up"), "{notes:?}");
}

#[test]
fn a_slow_answer_fails_with_api_timeout_named() {
    let server = TestServer::start(Cert::SignedByCa, |_| {
        Reply::json(json!({"data": 1})).after(Duration::from_millis(2500))
    });
    let mut params = token_params(&server);
    params.timeout_secs = 1;
    let client = Client::connect(&params).unwrap();
    let started = Instant::now();
    let err = client.get("/version", &[]).unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Timeout);
    assert!(err.to_string().contains("within api_timeout (1s)"), "{err}");
    assert!(started.elapsed() < Duration::from_millis(2400), "one timeout, no retry");
}

#[test]
fn a_closed_port_names_api_host_and_api_port() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let params = ConnectionParams {
        host: "127.0.0.1".into(),
        port: Some(port),
        user: "ansible@pve".into(),
        token_id: Some("automation".into()),
        token_secret: Some(SECRET.into()),
        timeout_secs: 5,
        ..Default::default()
    };
    let client = Client::connect(&params).unwrap();
    let err = client.get("/version", &[]).unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Connect);
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("Could not connect to https://127.0.0.1:{port} (")),
        "{text}"
    );
    assert!(
        text.contains("api_host (127.0.0.1)") && text.contains(&format!("api_port ({port})")),
        "{text}"
    );
    // An endpoint that never answered may be a wrong api_host or api_port: four attempts,
    // not the whole window.
    assert_eq!(
        client.requests_sent(),
        4,
        "a connection never made is retried, for any method"
    );
    assert!(!text.contains("attempts over"), "{text}");
    no_secret_in(&text);
}

#[test]
fn the_client_can_be_shared_across_threads_and_debug_shows_no_secret() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Client>();
    let server = ok_server();
    let client = Client::connect(&token_params(&server)).unwrap();
    let shown = format!("{client:?}");
    assert!(shown.contains("ansible@pve!automation"), "{shown}");
    no_secret_in(&shown);
}

#[test]
fn a_plain_http_port_is_a_tls_handshake_failure_naming_the_endpoint_options() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let params = ConnectionParams {
        host: "127.0.0.1".into(),
        port: Some(port),
        user: "ansible@pve".into(),
        token_id: Some("automation".into()),
        token_secret: Some(SECRET.into()),
        timeout_secs: 5,
        ..Default::default()
    };
    let err = Client::connect(&params)
        .unwrap()
        .post("/nodes/pve1/qemu", &[])
        .unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Tls, "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("TLS handshake with https://127.0.0.1:{port} failed: ")),
        "{text}"
    );
    assert!(text.contains("api_host and api_port"), "{text}");
}
