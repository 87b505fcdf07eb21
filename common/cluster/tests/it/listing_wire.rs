//! The guest listing on the wire, against a small local HTTPS server that answers
//! `/cluster/resources`: one request per read, and polling until a new VM is listed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::{token_client, Cert, Reply, TestServer};
use ferrox_cluster::vm;
use serde_json::json;

#[test]
fn guests_come_from_one_cluster_resources_request() {
    let server = TestServer::start(Cert::SignedByCa, |_| {
        Reply::json(json!({"data": [
            {"id": "qemu/100", "type": "qemu", "vmid": 100, "node": "pve1", "name": "web", "status": "stopped", "template": 0},
            {"id": "lxc/200", "type": "lxc", "vmid": "200", "node": "pve2", "name": "ct", "status": "running"},
        ]}))
    });
    let c = token_client(&server);
    let guests = vm::read(&c, &vm::ListingQuery::guests()).unwrap().cluster.guests;
    assert_eq!(guests.len(), 2);
    assert_eq!(&*vm::by_vmid(&guests, 200).unwrap().node, "pve2");
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].target, "/api2/json/cluster/resources?type=vm");
}

#[test]
fn wait_listed_polls_until_the_vm_is_listed_and_returns_that_listing() {
    let count = Arc::new(AtomicUsize::new(0));
    let server = TestServer::start(Cert::SignedByCa, move |_| {
        let data = if count.fetch_add(1, Ordering::SeqCst) < 2 {
            json!([])
        } else {
            json!([{"id": "qemu/123", "type": "qemu", "vmid": 123, "node": "pve1", "status": "unknown"}])
        };
        Reply::json(json!({"data": data}))
    });
    let c = token_client(&server);
    let listing = vm::wait_listed(&c, 123, Duration::from_secs(5)).unwrap();
    let guest = vm::by_vmid(&listing.guests, 123).unwrap();
    assert_eq!(
        (guest.vmid, guest.name.as_deref()),
        (123, None),
        "listed at once, its name later"
    );
    assert_eq!(server.requests().len(), 3);
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.target == "/api2/json/cluster/resources"),
        "the full listing, nodes included"
    );
    let err = vm::wait_listed(&c, 999, Duration::from_millis(300)).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("VM 999 is not listed in /cluster/resources"),
        "{err}"
    );
}
