//! Password logins with a second factor against the simulator as PVE 8/9 answers them:
//! the two-step login (never `otp`), one TOTP code one login, the messages in the
//! user's terms, and tickets renewed before they expire.
// Test code: an unwrap that fails is the test's report.
#![allow(clippy::unwrap_used, clippy::err_expect)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferrox_pve_client::client::{ApiErrorKind, Client, KeptTicket, RunTickets, TicketReport, TicketSink};
use ferrox_pve_client::connection::ConnectionParams;
use pvesim::{SimConfig, Simulator};
use serde_json::Value;

const MFA_SECRET: &str = "JBSWY3DPEHPK3PXP";

fn mfa(sim: &Simulator, otp: Option<String>) -> ConnectionParams {
    let ca = std::env::temp_dir().join(format!("ferrox-tfa-ca-{}-{}.pem", std::process::id(), sim.port()));
    sim.write_ca(&ca).unwrap();
    ConnectionParams {
        host: "127.0.0.1".into(),
        port: Some(sim.port()),
        user: "mfa@pve".into(),
        password: Some("mfa-pass".into()),
        otp,
        validate_certs: true,
        ca_path: Some(ca),
        timeout_secs: 5,
        ..Default::default()
    }
}

fn code_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    pvesim::auth::totp(MFA_SECRET, now).unwrap()
}

/// `/_pvesim/requests`, outside the client on purpose.
fn requests(sim: &Simulator) -> Value {
    let tls = ureq::tls::TlsConfig::builder().disable_verification(true).build();
    let agent = ureq::Agent::config_builder().tls_config(tls).build().new_agent();
    let url = format!("https://127.0.0.1:{}/_pvesim/requests", sim.port());
    serde_json::from_str(&agent.get(&url).call().unwrap().body_mut().read_to_string().unwrap()).unwrap()
}

fn control_post(sim: &Simulator, path: &str) {
    let tls = ureq::tls::TlsConfig::builder().disable_verification(true).build();
    let agent = ureq::Agent::config_builder().tls_config(tls).build().new_agent();
    agent
        .post(&format!("https://127.0.0.1:{}/_pvesim/{path}", sim.port()))
        .send("")
        .unwrap();
}

/// `[totp_accepted, codes_refused, totp_failures, logins, renewals, ticket POSTs]`.
fn counts(sim: &Simulator) -> [u64; 6] {
    let r = requests(sim);
    let n = |k: &str| r[k].as_u64().unwrap_or(0);
    [
        n("totp_accepted"),
        n("codes_refused"),
        n("totp_failures"),
        n("logins"),
        n("renewals"),
        r["counts"]["POST /api2/json/access/ticket"].as_u64().unwrap_or(0),
    ]
}

fn sink() -> TicketSink {
    Arc::new(Mutex::new(TicketReport::default()))
}

#[test]
fn a_totp_login_takes_two_steps_and_uses_its_code_once() {
    let sim = Simulator::start(SimConfig::default()).unwrap();
    let code = code_now();
    let client = Client::connect(&mfa(&sim, Some(code.clone()))).unwrap();
    client.get("/version", &[]).unwrap();
    assert_eq!(counts(&sim), [1, 0, 0, 1, 0, 2], "password first, then the typed code");

    let err = Client::connect(&mfa(&sim, Some(code.clone())))
        .err()
        .expect("the code is used");
    assert_eq!(err.kind, ApiErrorKind::Auth);
    let msg = err.to_string();
    assert!(
        msg.starts_with("Couldn't authenticate user: mfa@pve to https://127.0.0.1:"),
        "{msg}"
    );
    assert!(msg.contains("A TOTP code logs in once"), "{msg}");
    assert!(msg.contains("give a code not used before"), "{msg}");
    assert!(!msg.contains(&code) && !msg.contains("mfa-pass"), "no secret in: {msg}");
    assert_eq!(counts(&sim)[..3], [1, 1, 1], "PVE refused it as reused");
}

#[test]
fn api_otp_without_a_second_factor_and_a_missing_one_are_named() {
    let sim = Simulator::start(SimConfig::default()).unwrap();
    let err = Client::connect(&mfa(&sim, None)).err().expect("no otp given");
    assert_eq!(
        err.to_string(),
        "Couldn't authenticate user: missing Two Factor Authentication (TFA)"
    );
    let root = ConnectionParams {
        user: "root@pam".into(),
        password: Some("pvesim-root".into()),
        ..mfa(&sim, Some("123456".into()))
    };
    let msg = Client::connect(&root)
        .err()
        .expect("a code for a user without TFA")
        .to_string();
    assert!(
        msg.ends_with(": api_otp is set, but root@pam has no second factor (PVE refuses a code for such a user): remove api_otp, or set up TOTP for root@pam"),
        "{msg}"
    );
    assert!(!msg.contains("123456"), "{msg}");
    assert_eq!(counts(&sim)[..3], [0, 0, 0], "no code was ever sent");
}

/// The run's ticket refused (its signing key rotated) while `api_otp` is set: the task
/// ends naming why instead of logging in again with the code the first login used.
#[test]
fn a_refused_run_ticket_with_api_otp_ends_without_sending_the_code_again() {
    let sim = Simulator::start(SimConfig::default()).unwrap();
    let code = code_now();
    let first_sink = sink();
    let run = |kept: Option<KeptTicket>, sink: TicketSink| RunTickets {
        kept,
        candidates: vec![],
        sink,
        renew_after_secs: 3600.0,
    };
    let params = mfa(&sim, Some(code.clone()));
    let first = Client::connect_keeping(&params, Some(run(None, first_sink.clone())), None).unwrap();
    first.get("/version", &[]).unwrap();
    let got = first_sink
        .lock()
        .unwrap()
        .got
        .clone()
        .expect("the login's ticket goes to the run");
    let kept = KeptTicket {
        ticket: got.ticket,
        csrf: got.csrf,
        age_secs: 1.0,
        cluster: "c1".into(),
        certs: vec![],
    };
    let second = Client::connect_keeping(&params, Some(run(Some(kept), sink())), None).unwrap();
    second.get("/version", &[]).unwrap();
    control_post(&sim, "rotate-authkey");
    let msg = second
        .get("/version", &[])
        .err()
        .expect("the ticket is refused")
        .to_string();
    assert!(msg.contains("api_otp cannot log in again"), "{msg}");
    assert!(msg.contains("the run's first login used it"), "{msg}");
    assert!(!msg.contains(&code), "{msg}");
    assert_eq!(counts(&sim), [1, 0, 0, 1, 0, 2], "no second login, no code sent twice");
}

/// A ticket this client got itself is renewed once it is as old as the run's renewal
/// age: a task waiting longer than a ticket lives keeps working.
#[test]
fn a_fresh_login_ticket_is_renewed_before_it_expires() {
    let sim = Simulator::start(SimConfig {
        ticket_lifetime_secs: 3,
        ..Default::default()
    })
    .unwrap();
    let params = ConnectionParams {
        user: "root@pam".into(),
        password: Some("pvesim-root".into()),
        ..mfa(&sim, None)
    };
    let got = sink();
    let run = RunTickets {
        kept: None,
        candidates: vec![],
        sink: got.clone(),
        renew_after_secs: 1.5,
    };
    let client = Client::connect_keeping(&params, Some(run), None).unwrap();
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(2000));
        client.get("/version", &[]).expect("renewed before it expired");
    }
    let [.., logins, renewals, _] = counts(&sim);
    assert_eq!((logins, renewals), (1, 3), "one login, a renewal before each late call");
    assert!(got.lock().unwrap().got.is_some(), "the renewed ticket goes to the run");
}
