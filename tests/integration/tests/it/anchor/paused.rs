//! community.proxmox 1.6.0 and a paused VM (tests/anchor/paused.yml).

use super::support::Anchor;

#[test]
fn a_paused_vm() {
    let anchor = Anchor::start();
    let run = anchor.run("paused.yml");

    run.task("start").ok().changed(true);
    // status/current reports a paused VM as running: 1.6 does not resume it.
    let start = run
        .task("start while paused")
        .ok()
        .changed(false)
        .msg_is("VM 100 is already running");
    assert_eq!(start.result["status"], "running");
    run.task("current while paused")
        .ok()
        .msg_is("VM web01 with vmid = 100 is running");
    // PVE refuses a graceful shutdown of a paused VM (1.6 sends forceStop=0) ...
    let stop = run.task("stop while paused").failed();
    stop.msg_is("stopping of VM 100 failed with exception: 500 Internal Server Error: VM is paused - cannot shutdown");
    assert_eq!(stop.result["status"], "running");
    // ... and stops it instead when forced.
    run.task("stop paused with force")
        .ok()
        .changed(true)
        .msg_is("VM 100 is shutting down");
    run.task("current after forced stop")
        .ok()
        .msg_is("VM web01 with vmid = 100 is stopped");
}
