//! The guest listing against the PVE simulator, in-process: what `vm::read` and
//! `vm::wait_listed` make of `/cluster/resources`, through a client trusting the
//! simulator's CA, with injected faults and a status broadcast that lags.

// Test code: an unwrap that fails is the test's report.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::support::sim::{start, token, Control};
use ferrox_cluster::vm;
use ferrox_pve_client::client::Client;
use ferrox_pve_client::tasks;
use pvesim::{SimConfig, Simulator};
use serde_json::json;

#[test]
fn the_simulator_ca_in_ca_path_is_trusted() {
    let sim = start();
    let guests = vm::read(&Client::connect(&token(&sim)).unwrap(), &vm::ListingQuery::guests())
        .unwrap()
        .cluster
        .guests;
    let template = vm::by_vmid(&guests, 9000).expect("template 9000");
    assert!(template.template);
    assert_eq!(vm::qemu_by_name(&guests, "base-debian13").unwrap().unwrap().vmid, 9000);
    assert_eq!(vm::by_vmid(&guests, 200).unwrap().kind, vm::GuestType::Lxc);
}

#[test]
fn an_injected_500_is_retried_for_reads_only() {
    let sim = start();
    let control = Control::of(&sim);
    control.fault(json!({"method": "GET", "path_regex": "^/api2/json/cluster/resources$", "status": 500, "message": "cfs-lock timeout", "times": 1}));
    let client = Client::connect(&token(&sim)).unwrap();
    assert!(!vm::read(&client, &vm::ListingQuery::guests())
        .unwrap()
        .cluster
        .guests
        .is_empty());
    assert_eq!(control.count("GET /api2/json/cluster/resources"), 2);

    control.fault(json!({"method": "POST", "path_regex": "status/start$", "status": 500, "message": "cfs-lock timeout", "times": 1}));
    let err = client.post("/nodes/pve1/qemu/100/status/start", &[]).unwrap_err();
    assert_eq!(err.to_string(), "500 Internal Server Error: cfs-lock timeout");
    assert_eq!(control.count("POST /api2/json/nodes/pve1/qemu/100/status/start"), 1);
}

#[test]
fn a_new_vm_becomes_visible_cluster_wide_and_named_before_the_broadcast() {
    // A status broadcast far away: the listing has the VM, not yet its name.
    let sim = Simulator::start(SimConfig {
        resources_lag_ms: 30_000,
        ..SimConfig::default()
    })
    .expect("simulator starts");
    let client = Client::connect(&token(&sim)).unwrap();
    let upid = client
        .post(
            "/nodes/pve2/qemu",
            &[
                ("vmid", "321".into()),
                ("name", "fresh".into()),
                ("memory", "512".into()),
            ],
        )
        .unwrap();
    tasks::wait(&client, upid.as_str().unwrap(), Duration::from_secs(10)).unwrap();
    let mut listing = vm::wait_listed(&client, 321, Duration::from_secs(5)).unwrap();
    assert_eq!(&*vm::by_vmid(&listing.guests, 321).unwrap().node, "pve2");
    assert_eq!(
        vm::by_vmid(&listing.guests, 321).unwrap().name,
        None,
        "not broadcast yet"
    );
    // Within the status-broadcast lag the name is read from the config.
    vm::name_unbroadcast(&client, &mut listing.guests, &listing.nodes);
    assert_eq!(
        vm::by_vmid(&listing.guests, 321).unwrap().name.as_deref(),
        Some("fresh")
    );
}
