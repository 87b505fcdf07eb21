//! The run's tickets are the cluster's, not the endpoint's, and the user is PVE's: a
//! login leaves its cluster's nodes' certificates with its ticket; the ticket is sent,
//! and accepted, through another spelling of the same cluster (one TOTP code, one
//! login); a server showing another certificate never sees it, and the task logs in with
//! its code, unused on that cluster; a realm set `case-sensitive: 0` logs in `user.cfg`'s
//! spelling and the run's ticket serves `api_user` in any case. Counted by the simulator.
// Test code: an unwrap that fails is the test's report.
#![allow(clippy::unwrap_used, clippy::err_expect)]

use std::sync::{Arc, Mutex};

use ferrox_pve_client::client::{Client, KeptTicket, RunTickets, TicketReport, TicketSink};
use ferrox_pve_client::connection::ConnectionParams;
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
fn first_login(sim: &Simulator, params: &ConnectionParams, cluster: &str) -> KeptTicket {
    let left = sink();
    let client = Client::connect_keeping(params, Some(run(None, vec![], left.clone())), None).unwrap();
    client.get("/version", &[]).unwrap();
    let report = left.lock().unwrap().clone();
    assert!(report.cluster.is_none(), "a login names no cluster the run knows");
    assert_eq!(
        report.certs,
        [sim.fingerprint()],
        "the nodes' certificates, as GET /nodes lists them"
    );
    let got = report.got.expect("the login's ticket goes to the run");
    KeptTicket {
        ticket: got.ticket,
        csrf: got.csrf,
        age_secs: 1.0,
        cluster: cluster.into(),
        certs: report.certs,
    }
}

/// `(status 401 answers, GET /access/ticket)` from `/_pvesim/requests`' log and counts.
fn refused_and_probes(sim: &Simulator) -> (usize, u64) {
    let tls = ureq::tls::TlsConfig::builder().disable_verification(true).build();
    let agent = ureq::Agent::config_builder().tls_config(tls).build().new_agent();
    let url = format!("https://127.0.0.1:{}/_pvesim/requests", sim.port());
    let r: Value = serde_json::from_str(&agent.get(&url).call().unwrap().body_mut().read_to_string().unwrap()).unwrap();
    let refused = r["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["status"] == 401)
        .count();
    (
        refused,
        r["counts"]["GET /api2/json/access/ticket"].as_u64().unwrap_or(0),
    )
}

#[test]
fn a_ticket_got_through_one_spelling_serves_another_spelling_of_the_cluster() {
    let sim = Simulator::start(SimConfig::default()).unwrap();
    let code = code_now();
    let kept = first_login(&sim, &params(&sim, "127.0.0.1", "mfa@pve", "mfa-pass", &code), "c1");
    let left = sink();
    let by_name = params(&sim, "localhost", "mfa@pve", "mfa-pass", &code);
    let client = Client::connect_keeping(&by_name, Some(run(None, vec![kept], left.clone())), None).unwrap();
    client.get("/cluster/resources", &[]).unwrap();
    assert_eq!(counts(&sim), [1, 0, 0, 1], "one code, one login, nothing refused");
    assert_eq!(refused_and_probes(&sim), (0, 1), "one look at localhost's certificate");
    let report = left.lock().unwrap().clone();
    assert_eq!(report.cluster.as_deref(), Some("c1"), "localhost is c1 for the run");
    assert!(report.got.is_none(), "no new ticket");
}

/// Another cluster's server shows a certificate none of the run's cluster's nodes has:
/// the ticket is never sent to it, and the code logs in there (its first use there).
#[test]
fn another_clusters_server_never_sees_the_ticket_and_the_code_logs_in_there_once() {
    let (one, other) = (
        Simulator::start(SimConfig::default()).unwrap(),
        Simulator::start(SimConfig::default()).unwrap(),
    );
    let code = code_now();
    let kept = first_login(&one, &params(&one, "127.0.0.1", "mfa@pve", "mfa-pass", &code), "c1");
    let left = sink();
    let there = params(&other, "127.0.0.1", "mfa@pve", "mfa-pass", &code);
    let client = Client::connect_keeping(&there, Some(run(None, vec![kept], left.clone())), None).unwrap();
    client.get("/version", &[]).unwrap();
    assert_eq!(counts(&other), [1, 0, 0, 1], "the code's first use on this cluster");
    assert_eq!(refused_and_probes(&other), (0, 1), "the ticket was never sent here");
    let report = left.lock().unwrap().clone();
    assert!(report.cluster.is_none(), "a cluster the run did not know");
    assert!(report.got.is_some(), "its own ticket goes to the run");
    assert_eq!(report.certs, [other.fingerprint()]);
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
        certs: vec![],
    };
    for _ in 0..4 {
        let next = Client::connect_keeping(&as_typed, Some(run(Some(kept.clone()), vec![], sink())), None).unwrap();
        next.get("/cluster/resources", &[]).unwrap();
    }
    assert_eq!(counts(&sim), [1, 0, 0, 1], "one login, the code sent once");
}

/// A ticket sent because the endpoint's certificate is one of its cluster's (a
/// certificate two clusters share) and refused there: the endpoint is not that cluster,
/// so the task logs in with its code, unused there.
#[test]
fn a_ticket_refused_where_its_certificate_matched_ends_in_one_login() {
    let (one, other) = (
        Simulator::start(SimConfig::default()).unwrap(),
        Simulator::start(SimConfig::default()).unwrap(),
    );
    let code = code_now();
    let mut kept = first_login(&one, &params(&one, "127.0.0.1", "mfa@pve", "mfa-pass", &code), "c1");
    kept.certs.push(other.fingerprint());
    let left = sink();
    let there = params(&other, "localhost", "mfa@pve", "mfa-pass", &code);
    let client = Client::connect_keeping(&there, Some(run(None, vec![kept], left.clone())), None).unwrap();
    client.get("/version", &[]).unwrap();
    assert_eq!(counts(&other), [1, 0, 0, 1], "one login with the code, nothing refused");
    assert_eq!(refused_and_probes(&other), (1, 1), "the one ticket refused");
    assert!(left.lock().unwrap().cluster.is_none());
}
