//! Tags compared as the cluster stores them, against a small HTTPS server answering
//! `/cluster/options` as PVE does: read only when tags differ in case alone, once per
//! run, and a refusal (PVE before 7.3 asked `Sys.Audit` on `/`) taken as PVE's
//! default with a warning naming the privilege.

use crate::support::{token_client, Cert, Reply, TestServer};
use ferrox_cluster::tags::TagCase;
use serde_json::json;

#[test]
fn the_setting_is_read_once_and_only_for_a_difference_in_case() {
    let server = TestServer::start(Cert::SignedByCa, |_| {
        Reply::json(json!({"data": {"tag-style": {"case-sensitive": 1, "shape": "dense"}, "allowed-tags": ["Web"]}}))
    });
    let client = token_client(&server);
    let case = TagCase::of_cluster(&client);
    assert!(case.same("Web;prod", "prod,Web").unwrap());
    assert!(!case.same("Web;prod", "db").unwrap());
    assert!(
        server.requests().is_empty(),
        "no read: the tags match, or differ anyway"
    );

    assert!(
        !case.same("Web;prod", "web;prod").unwrap(),
        "a case-sensitive cluster: a change"
    );
    assert!(!case.clone().same("Db", "db").unwrap());
    let seen = server.requests();
    assert_eq!(
        seen.len(),
        1,
        "read once: {:?}",
        seen.iter().map(|s| &s.target).collect::<Vec<_>>()
    );
    assert_eq!(
        (seen[0].method.as_str(), seen[0].target.as_str()),
        ("GET", "/api2/json/cluster/options")
    );
    assert_eq!(case.warning(), None);
}

#[test]
fn a_refused_read_compares_case_insensitively_and_says_which_privilege_is_missing() {
    let server = TestServer::start(Cert::SignedByCa, |_| {
        Reply::status(403, "Permission check failed (/, Sys.Audit)", r#"{"data":null}"#)
    });
    let client = token_client(&server);
    let case = TagCase::of_cluster(&client);
    assert!(case.same("prod;web", "Web;prod").unwrap());
    let warning = case.warning().expect("a warning");
    assert!(warning.contains("compared case-insensitively"), "{warning}");
    assert!(
        warning.contains("Grant Sys.Audit on / to API token ansible@pve!automation"),
        "{warning}"
    );
    assert!(!warning.contains("5f1c9e0a"), "no secret: {warning}");
}

#[test]
fn another_failure_is_an_error_naming_the_call() {
    let server = TestServer::start(Cert::SignedByCa, |_| {
        Reply::status(400, "Parameter verification failed.", r#"{"data":null}"#)
    });
    let client = token_client(&server);
    let e = TagCase::of_cluster(&client).same("prod;web", "Web;prod").unwrap_err();
    assert!(
        e.starts_with("Unable to read the datacenter's tag-style (GET /cluster/options)"),
        "{e}"
    );
}
