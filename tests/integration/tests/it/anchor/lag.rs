//! community.proxmox 1.6.0 with PVE's status lag in `/cluster/resources`
//! (tests/anchor/lag.yml): a VM created a moment ago has no `name` there yet, so 1.6's
//! name lookup misses it — a repeated create makes a duplicate, which later makes the
//! name ambiguous. The default simulator lag is short; this test uses PVE's real one.

use serde_json::json;

use super::support::{Anchor, RunOpts};

/// New VMs show only id/node/status "unknown" this long. PVE's window is up to 10 s; a
/// wider one keeps the first two tasks inside it on a loaded machine (each community
/// module run costs a Python start of a second or more).
const LAG_MS: u64 = 20_000;

#[test]
fn name_lookup_within_the_status_lag() {
    let anchor = Anchor::start_with(pvesim::SimConfig {
        resources_lag_ms: LAG_MS,
        ..Default::default()
    });
    let run = anchor.run_file(
        &super::support::anchor_dir().join("lag.yml"),
        &RunOpts {
            vars: json!({"anchor_lag_seconds": LAG_MS / 1000 + 1}),
            ..Default::default()
        },
    );

    run.task("create by name")
        .ok()
        .changed(true)
        .msg_is("VM lag-web with vmid 101 deployed");
    run.task("create again within the lag")
        .ok()
        .changed(true)
        .msg_is("VM lag-web with vmid 102 deployed");
    run.task("current within the lag")
        .ok()
        .msg_is("VM (unnamed) with vmid = 101 is stopped");
    run.task("create again after the lag")
        .failed()
        .msg_is("Multiple VMs with name lag-web found, provide vmid instead");
    run.task("current after the lag")
        .ok()
        .msg_is("VM lag-web with vmid = 101 is stopped");
}
