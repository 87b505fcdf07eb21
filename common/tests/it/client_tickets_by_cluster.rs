//! The run's tickets are the cluster's, not the endpoint's, and the user is PVE's: a
//! ticket got through one `api_host` spelling is tried, and accepted, through another
//! spelling of the same cluster (one TOTP code, one login); one of another cluster is
//! refused there and the task logs in with its code, unused on that cluster; a realm set
//! `case-sensitive: 0` logs in `user.cfg`'s spelling and the run's ticket serves
//! `api_user` in any case. Counted by the simulator.
// Test code: an unwrap that fails is the test's report.
#![allow(clippy::unwrap_used, clippy::err_expect)]

use std::sync::{Arc, Mutex};

use ferrox_common::api::client::{Client, KeptTicket, RunTickets, TicketReport, TicketSink};
use ferrox_common::api::connection::ConnectionParams;
use pvesim::{SimConfig, Simulator};
use serde_json::Value;

const MFA_SECRET: &str = "JBSWY3DPEHPK3PXP";

fn params(sim: &Simulator, host: &str, user: &str, password: &str, otp: &str) -> ConnectionParams {
    let ca = std::env::temp_dir().join(format!("ferrox-cluster-ca-{}-{}.pem", std::process::id(), sim.port()));
    sim.write_ca(&ca).unwrap();
    ConnectionParams {
        host: host.into(),
        port: Some(sim.port()),
        user: user.into(),
        password: Some(password.into()),
        otp: Some(otp.into()),
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

/// `[totp_accepted, codes_refused, totp_failures, logins]` from `/_pvesim/requests`.
fn counts(sim: &Simulator) -> [u64; 4] {
    let tls = ureq::tls::TlsConfig::builder().disable_verification(true).build();
    let agent = ureq::Agent::config_builder().tls_config(tls).build().new_agent();
    let url = format!("https://127.0.0.1:{}/_pvesim/requests", sim.port());
    let r: Value = serde_json::from_str(&agent.get(&url).call().unwrap().body_mut().read_to_string().unwrap()).unwrap();
    ["totp_accepted", "codes_refused", "totp_failures", "logins"].map(|k| r[k].as_u64().unwrap_or(0))
}

fn sink() -> TicketSink {
    Arc::new(Mutex::new(TicketReport::default()))
}

fn run(kept: Option<KeptTicket>, candidates: Vec<KeptTicket>, sink: TicketSink) -> RunTickets {
    RunTickets {
        kept,
        candidates,
        sink,
        renew_after_secs: 3600.0,
    }
}

/// The first task's login through `params`: what it left for the run, as the run keeps it.
fn first_login(params: &ConnectionParams, cluster: &str) -> KeptTicket {
    let left = sink();
    let client = Client::connect_keeping(params, Some(run(None, vec![], left.clone())), None).unwrap();
    client.get("/version", &[]).unwrap();
    let report = left.lock().unwrap().clone();
    assert!(report.cluster.is_none(), "a login names no cluster the run knows");
    let got = report.got.expect("the login's ticket goes to the run");
    KeptTicket {
        ticket: got.ticket,
        csrf: got.csrf,
        age_secs: 1.0,
        cluster: cluster.into(),
    }
}

#[test]
fn a_ticket_got_through_one_spelling_serves_another_spelling_of_the_cluster() {
    let sim = Simulator::start(SimConfig::default()).unwrap();
    let code = code_now();
    let kept = first_login(&params(&sim, "127.0.0.1", "mfa@pve", "mfa-pass", &code), "c1");
    let left = sink();
    let by_name = params(&sim, "localhost", "mfa@pve", "mfa-pass", &code);
    let client = Client::connect_keeping(&by_name, Some(run(None, vec![kept], left.clone())), None).unwrap();
    client.get("/cluster/resources", &[]).unwrap();
    assert_eq!(counts(&sim), [1, 0, 0, 1], "one code, one login, nothing refused");
    let report = left.lock().unwrap().clone();
    assert_eq!(report.cluster.as_deref(), Some("c1"), "localhost is c1 for the run");
    assert!(report.got.is_none(), "no new ticket");
}

#[test]
fn another_clusters_ticket_is_refused_and_the_code_logs_in_there_once() {
    let (one, other) = (
        Simulator::start(SimConfig::default()).unwrap(),
        Simulator::start(SimConfig::default()).unwrap(),
    );
    let code = code_now();
    let kept = first_login(&params(&one, "127.0.0.1", "mfa@pve", "mfa-pass", &code), "c1");
    let left = sink();
    let there = params(&other, "127.0.0.1", "mfa@pve", "mfa-pass", &code);
    let client = Client::connect_keeping(&there, Some(run(None, vec![kept], left.clone())), None).unwrap();
    client.get("/version", &[]).unwrap();
    assert_eq!(counts(&other), [1, 0, 0, 1], "the code's first use on this cluster");
    let report = left.lock().unwrap().clone();
    assert!(report.cluster.is_none(), "a cluster the run did not know");
    assert!(report.got.is_some(), "its own ticket goes to the run");
}

/// An AD realm set `case-sensitive: 0`: `Totp@ad` logs in as `totp@ad`, the ticket
/// says so, and the next task (the same `api_user`) uses it: one login, no code resent.
#[test]
fn a_case_insensitive_realm_logs_in_once_whatever_the_case_of_api_user() {
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
    scenario.acls.push(pvesim::state::AclDef {
        path: "/".into(),
        ugid: "totp@ad".into(),
        roles: vec!["PVEAuditor".into()],
        propagate: true,
    });
    let sim = Simulator::start(SimConfig {
        scenario,
        ..Default::default()
    })
    .unwrap();
    let as_typed = params(&sim, "127.0.0.1", "Totp@ad", "ad-pass", &code_now());
    let left = sink();
    let first = Client::connect_keeping(&as_typed, Some(run(None, vec![], left.clone())), None).unwrap();
    first.get("/version", &[]).unwrap();
    assert_eq!(first.identity(), "user totp@ad", "requests run as PVE's spelling");
    let got = left.lock().unwrap().got.clone().unwrap();
    assert_eq!(got.user, "totp@ad");
    let kept = KeptTicket {
        ticket: got.ticket,
        csrf: got.csrf,
        age_secs: 1.0,
        cluster: "c1".into(),
    };
    for _ in 0..4 {
        let next = Client::connect_keeping(&as_typed, Some(run(Some(kept.clone()), vec![], sink())), None).unwrap();
        next.get("/cluster/resources", &[]).unwrap();
    }
    assert_eq!(counts(&sim), [1, 0, 0, 1], "one login, the code sent once");
}
