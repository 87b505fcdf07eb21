//! The client and task waiting against the PVE simulator, in-process: real
//! authentication, privileges, tasks and injected faults.

// Test code: an unwrap that fails is the test's report.
#![allow(clippy::unwrap_used, clippy::err_expect)]

use std::time::{Duration, Instant};

use crate::support::sim::{start, token, Control, AUTOMATION_SECRET, READONLY_SECRET, ROOT_PASSWORD};
use ferrox_pve_client::client::{ApiErrorKind, Client};
use ferrox_pve_client::connection::{normalise_fingerprint, ConnectionParams};
use ferrox_pve_client::tasks::{self, TaskError};
use pvesim::Simulator;
use serde_json::json;

fn password(sim: &Simulator) -> ConnectionParams {
    ConnectionParams {
        user: "root@pam".into(),
        password: Some(ROOT_PASSWORD.into()),
        token_id: None,
        token_secret: None,
        ..token(sim)
    }
}

fn no_secret_in(text: &str) {
    for s in [AUTOMATION_SECRET, READONLY_SECRET, ROOT_PASSWORD] {
        assert!(!text.contains(s), "secret leaked: {text}");
    }
}

#[test]
fn token_auth_reads_with_one_request() {
    let sim = start();
    let client = Client::connect(&token(&sim)).unwrap();
    let version = client.get("/version", &[]).unwrap();
    assert!(version["version"].is_string(), "{version}");
    assert_eq!(
        client.requests_sent(),
        1,
        "no request at connect, none for /version validation"
    );
    assert_eq!(Control::of(&sim).count("GET /api2/json/version"), 1);
}

#[test]
fn password_auth_gets_a_ticket_and_writes_with_the_csrf_token() {
    let sim = start();
    let client = Client::connect(&password(&sim)).unwrap();
    assert_eq!(client.requests_sent(), 1);
    let upid = client.post("/nodes/pve1/qemu/100/status/start", &[]).unwrap();
    let upid = upid.as_str().expect("a UPID");
    let done = tasks::wait(&client, upid, Duration::from_secs(10)).unwrap();
    assert_eq!(done.exitstatus, "OK");
    let control = Control::of(&sim);
    assert_eq!(control.count("POST /api2/json/access/ticket"), 1);
    assert_eq!(control.count("POST /api2/json/nodes/pve1/qemu/100/status/start"), 1);
}

#[test]
fn a_wrong_password_fails_like_1_6() {
    let sim = start();
    let mut params = password(&sim);
    params.password = Some("not-the-password".into());
    let err = Client::connect(&params).err().expect("login fails");
    assert_eq!(
        err.to_string(),
        format!(
            "Couldn't authenticate user: root@pam to https://127.0.0.1:{}/api2/json/access/ticket",
            sim.port()
        )
    );
    assert!(!err.to_string().contains("not-the-password"));
}

#[test]
fn a_wrong_token_secret_is_a_clear_401() {
    let sim = start();
    let mut params = token(&sim);
    params.token_secret = Some("00000000-0000-0000-0000-000000000000".into());
    let client = Client::connect(&params).unwrap();
    let err = client.get("/cluster/resources", &[]).unwrap_err();
    assert!(err.is_status(401), "{err:?}");
    assert_eq!(
        err.to_string(),
        "401 Unauthorized: Authentication failed! - check api_user, api_token_id and api_token_secret (or api_password): the API token ansible@pve!automation was not accepted"
    );
    assert_eq!(client.requests_sent(), 1, "a 401 is not retried");
}

#[test]
fn a_missing_privilege_is_a_403_naming_it_and_the_token() {
    let sim = start();
    let mut params = token(&sim);
    params.token_id = Some("readonly".into());
    params.token_secret = Some(READONLY_SECRET.into());
    let client = Client::connect(&params).unwrap();
    let err = client.post("/nodes/pve1/qemu/100/status/start", &[]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("403 Forbidden: Permission check failed (/vms/100, VM.PowerMgmt)"),
        "{text}"
    );
    assert!(
        text.ends_with(" - API token ansible@pve!readonly lacks this privilege"),
        "{text}"
    );
    no_secret_in(&text);
}

#[test]
fn fingerprint_pinning_accepts_the_presented_certificate_and_rejects_another() {
    let sim = start();
    let mut params = token(&sim);
    params.ca_path = None;
    params.cert_fingerprint = normalise_fingerprint(&sim.fingerprint());
    Client::connect(&params).unwrap().get("/version", &[]).unwrap();

    let other = "01:".repeat(31) + "01";
    params.cert_fingerprint = normalise_fingerprint(&other);
    let err = Client::connect(&params).unwrap().get("/version", &[]).unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Tls);
    assert!(
        err.to_string()
            .contains(&format!("expected {other}, the server presented {}", sim.fingerprint())),
        "{err}"
    );
}

#[test]
fn validate_certs_without_ca_path_says_how_to_fix_it() {
    let sim = start();
    let mut params = token(&sim);
    params.ca_path = None;
    let err = Client::connect(&params).unwrap().get("/version", &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "TLS certificate of https://127.0.0.1:{} could not be verified (invalid peer certificate: UnknownIssuer). Proxmox VE uses a self-signed certificate by default: set api_cert_fingerprint to its SHA-256 fingerprint (the server presented {}), or ca_path to the CA that signed it (/etc/pve/pve-root-ca.pem on a node), or validate_certs: false to skip verification.",
            sim.port(),
            sim.fingerprint()
        )
    );
}

#[test]
fn a_stopped_simulator_is_connection_refused() {
    let sim = start();
    let params = token(&sim);
    sim.shutdown();
    let err = Client::connect(&params).unwrap().get("/version", &[]).unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Connect, "{err}");
    assert!(
        err.to_string()
            .contains(&format!("api_port ({})", params.port.unwrap())),
        "{err}"
    );
}

#[test]
fn a_slow_api_hits_api_timeout() {
    let sim = start();
    Control::of(&sim).fault(json!({"path_regex": "^/api2/json/version$", "latency_ms": 2500}));
    let mut params = token(&sim);
    params.timeout_secs = 1;
    let started = Instant::now();
    let err = Client::connect(&params).unwrap().get("/version", &[]).unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Timeout, "{err}");
    assert!(err.to_string().contains("api_timeout (1s)"), "{err}");
    assert!(started.elapsed() < Duration::from_millis(2400));
}

#[test]
fn a_failed_task_is_reported_at_once_with_its_error() {
    let sim = start();
    Control::of(&sim)
        .fault(json!({"task_type": "qmstart", "fail": "start failed: QEMU exited with code 1", "times": 1}));
    let client = Client::connect(&token(&sim)).unwrap();
    let upid = client.post("/nodes/pve1/qemu/100/status/start", &[]).unwrap();
    let started = Instant::now();
    let err = tasks::wait(&client, upid.as_str().unwrap(), Duration::from_secs(30)).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    let TaskError::Failed {
        exitstatus, log_tail, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(exitstatus, "start failed: QEMU exited with code 1");
    assert_eq!(
        log_tail.last().map(String::as_str),
        Some("TASK ERROR: start failed: QEMU exited with code 1")
    );
    assert!(err.to_string().starts_with(&format!(
        "task {} failed: start failed: QEMU exited with code 1",
        upid.as_str().unwrap()
    )));
}

#[test]
fn a_long_task_times_out_with_its_last_log_line() {
    let sim = start();
    Control::of(&sim).fault(json!({"task_type": "qmstart", "duration_ms": 5000, "times": 1}));
    let client = Client::connect(&token(&sim)).unwrap();
    let upid = client.post("/nodes/pve1/qemu/100/status/start", &[]).unwrap();
    let err = tasks::wait(&client, upid.as_str().unwrap(), Duration::from_secs(1)).unwrap_err();
    let TaskError::Timeout { waited, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        *waited >= Duration::from_secs(1) && *waited < Duration::from_secs(2),
        "{waited:?}"
    );
    assert!(err.to_string().contains("the task keeps running on the node"), "{err}");
}

#[test]
fn a_user_with_a_second_factor_needs_api_otp() {
    let sim = start();
    let mut params = password(&sim);
    params.user = "mfa@pve".into();
    params.password = Some("mfa-pass".into());
    let err = Client::connect(&params).err().expect("no otp given");
    assert_eq!(
        err.to_string(),
        "Couldn't authenticate user: missing Two Factor Authentication (TFA)"
    );

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    params.otp = pvesim::auth::totp("JBSWY3DPEHPK3PXP", now);
    let client = Client::connect(&params).unwrap();
    client.get("/version", &[]).unwrap();

    params.otp = Some("99999x".into()); // never a valid TOTP code
    let err = Client::connect(&params).err().expect("wrong otp");
    assert_eq!(err.kind, ApiErrorKind::Auth);
    assert!(
        err.to_string()
            .starts_with("Couldn't authenticate user: mfa@pve to https://127.0.0.1:"),
        "{err}"
    );
    assert!(!err.to_string().contains("mfa-pass"));
}

#[test]
fn a_lost_answer_names_the_call_and_is_not_could_not_connect() {
    let sim = start();
    let control = Control::of(&sim);
    control.fault(json!({"method": "PUT", "path_regex": "/qemu/100/config$", "after": true, "times": 1}));
    let client = Client::connect(&token(&sim)).unwrap();
    let err = client
        .put("/nodes/pve1/qemu/100/config", &[("cores", "3".into())])
        .unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Dropped, "{err}");
    assert!(err.answer_lost());
    let text = err.to_string();
    assert!(text.starts_with(&format!("PUT /nodes/pve1/qemu/100/config to https://127.0.0.1:{}: the connection was closed after the request was sent, ", sim.port())), "{text}");
    assert!(
        text.contains("s into the call") && text.contains("whether it was carried out is unknown"),
        "{text}"
    );
    assert!(
        !text.contains("close_notify") && !text.contains("docs.rs"),
        "the cause in one short clause: {text}"
    );
    assert!(
        !text.contains("Could not connect") && !text.contains("api_port"),
        "{text}"
    );
    assert!(!text.contains(AUTOMATION_SECRET), "{text}");
    assert_eq!(
        control.count("PUT /api2/json/nodes/pve1/qemu/100/config"),
        1,
        "a write whose answer was lost is not sent again"
    );
    let config = client.get("/nodes/pve1/qemu/100/config", &[]).unwrap();
    assert_eq!(config["cores"], json!(3), "PVE carried it out");

    // A read whose answer was lost is simply read again.
    control.fault(json!({"method": "GET", "path_regex": "^/api2/json/version$", "after": true, "times": 1}));
    assert!(client.get("/version", &[]).is_ok());
    assert_eq!(control.count("GET /api2/json/version"), 2);
}

#[test]
fn a_late_answer_to_a_sent_write_is_a_timeout_that_may_have_acted() {
    let sim = start();
    Control::of(&sim).fault(
        json!({"method": "PUT", "path_regex": "/qemu/100/config$", "after": true, "latency_ms": 2500, "times": 1}),
    );
    let mut params = token(&sim);
    params.timeout_secs = 1;
    let client = Client::connect(&params).unwrap();
    let err = client
        .put("/nodes/pve1/qemu/100/config", &[("cores", "5".into())])
        .unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Timeout, "{err}");
    assert!(err.answer_lost());
    assert!(
        err.to_string()
            .contains("got no answer within api_timeout (1s); the request was sent"),
        "{err}"
    );
    assert_eq!(
        client.get("/nodes/pve1/qemu/100/config", &[]).unwrap()["cores"],
        json!(5)
    );
}

#[test]
fn a_refused_connection_is_retried_even_for_a_create() {
    let sim = start();
    let control = Control::of(&sim);
    control.fault(json!({"refuse_connections": true, "times": 2}));
    let client = Client::connect(&token(&sim)).unwrap();
    let upid = client.post("/nodes/pve1/qemu", &[("vmid", "150".into())]).unwrap();
    assert!(upid.as_str().unwrap().starts_with("UPID:pve1:"), "{upid}");
    assert!(client.knows_upid(upid.as_str().unwrap()));
    assert_eq!(control.count("POST /api2/json/nodes/pve1/qemu"), 1, "PVE saw it once");
    assert_eq!(client.repeated_writes().len(), 2, "{:?}", client.repeated_writes());
    assert!(
        client.repeated_writes()[0].contains("Could not connect"),
        "{:?}",
        client.repeated_writes()
    );
}

#[test]
fn connections_refused_by_an_endpoint_that_answered_before_are_tried_past_four_attempts() {
    let sim = start();
    let control = Control::of(&sim);
    let client = Client::connect(&token(&sim)).unwrap();
    client.get("/version", &[]).unwrap();
    // pveproxy restarting: the next four new connections are closed unanswered.
    control.fault(json!({"refuse_connections": true, "times": 4}));
    let fresh = client.fork().unwrap();
    fresh.set_retry_budget(Duration::from_secs(60));
    fresh.get("/cluster/resources", &[]).unwrap();
    assert_eq!(fresh.requests_sent(), 5, "four refused, the fifth answered");
    let notes = fresh.progress_notes();
    assert!(
        notes.len() == 1 && notes[0].starts_with("GET /cluster/resources: no connection made on 4 attempts over "),
        "{notes:?}"
    );
}

/// 50 MiB of zeros to `isos` as `refused.iso`: far more than the socket buffers hold, so
/// the client is still sending when PVE refuses and closes.
fn upload_50_mib(client: &Client) -> ferrox_pve_client::client::ApiError {
    use ferrox_pve_client::client::upload::FilePart;
    use std::io::Read;
    const LEN: u64 = 50 << 20;
    let mut zeros = std::io::repeat(0).take(LEN);
    let part = FilePart {
        field: "filename",
        name: "refused.iso",
        reader: &mut zeros,
        len: LEN,
    };
    client
        .post_multipart("/nodes/pve1/storage/isos/upload", &[("content", "iso".into())], part)
        .expect_err("the upload is refused")
}

/// The bytes sent before the refusal, from `… after N of 52428800 bytes were sent)`.
fn sent_before_refusal(text: &str) -> u64 {
    text.split(" after ")
        .last()
        .and_then(|rest| rest.strip_suffix(" of 52428800 bytes were sent)"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no byte count in: {text}"))
}

#[test]
fn an_upload_refused_for_a_missing_privilege_names_the_permission_not_the_network() {
    let sim = start();
    let mut params = token(&sim);
    params.token_id = Some("readonly".into());
    params.token_secret = Some(READONLY_SECRET.into());
    let client = Client::connect(&params).unwrap();
    let err = upload_50_mib(&client);
    let text = err.to_string();
    assert!(err.is_status(403), "{text}");
    assert!(
        text.starts_with("403 Forbidden: Permission check failed (/storage/isos, Datastore.AllocateTemplate) - API token ansible@pve!readonly lacks this privilege (Proxmox VE refused the upload before reading the file"),
        "{text}"
    );
    assert!(
        sent_before_refusal(&text) < 50 << 20,
        "the file was not read to its end: {text}"
    );
    assert!(!text.contains("Could not connect"), "{text}");
    no_secret_in(&text);
}

#[test]
fn an_upload_refused_for_its_credentials_names_authentication_not_the_network() {
    let sim = start();
    let mut params = token(&sim);
    params.token_secret = Some("00000000-0000-0000-0000-000000000000".into());
    let client = Client::connect(&params).unwrap();
    let err = upload_50_mib(&client);
    let text = err.to_string();
    assert!(err.is_status(401), "{text}");
    assert!(
        text.starts_with("401 Unauthorized: Authentication failed! - check api_user, api_token_id and api_token_secret (or api_password): the API token ansible@pve!automation was not accepted (Proxmox VE refused the upload before reading the file"),
        "{text}"
    );
    assert!(sent_before_refusal(&text) < 50 << 20, "{text}");
    no_secret_in(&text);
}
