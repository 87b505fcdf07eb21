//! proxmox_kvm edge cases (tests/anchor/kvm_edges.yml): behaviour that depends on exactly
//! what PVE answers — cluster-wide name lookup, sync vs task errors, task logs, migration.

use super::support::shared_run;

#[test]
fn proxmox_kvm_edge_cases() {
    let run = shared_run("kvm_edges.yml");

    // Names are looked up over all guests, containers included.
    run.task("create named like a container")
        .ok()
        .changed(false)
        .msg_is("VM with vmid <200> already exists");
    // Explicit vmids may repeat a name; then a name-only task is ambiguous.
    run.task("create dup 301")
        .ok()
        .changed(true)
        .msg_is("VM dup with vmid 301 deployed");
    run.task("create dup 302")
        .ok()
        .changed(true)
        .msg_is("VM dup with vmid 302 deployed");
    run.task("ambiguous name")
        .failed()
        .msg_is("Multiple VMs with name dup found, provide vmid instead");

    // No create-or-update in 1.6: PVE's missing-config error comes through.
    run.task("update missing vm").failed().msg_is(
        "Unable to update vm ghost with vmid 777: 500 Internal Server Error: Configuration file 'nodes/pve1/qemu-server/777.conf' does not exist",
    );
    run.task("delete settings")
        .ok()
        .changed(true)
        .msg_is("Settings has deleted on VM dup with vmid 301");

    // Migration sends vmid/node again in the body (equal values are accepted by PVE).
    run.task("migrate")
        .ok()
        .changed(true)
        .msg_is("VM 301 has been migrated from pve1 to pve2");
    run.task("migrate again")
        .ok()
        .changed(false)
        .msg_is("VM 301 is already on pve2");
    let config = run.task("config after migrate").ok();
    assert_eq!(config.result["proxmox_vms"][0]["node"], "pve2", "{}", config.result);
    assert!(
        config.config().get("description").is_none(),
        "description deleted: {}",
        config.result
    );

    run.task("convert to template")
        .ok()
        .changed(true)
        .msg_is("VM 302 is converting to template");

    let start = run
        .task("start on new node")
        .ok()
        .changed(true)
        .msg_is("VM 301 started");
    assert_eq!(start.result["status"], "stopped");
    let reset = run
        .task("restart with force")
        .ok()
        .changed(true)
        .msg_is("VM 301 is restarted");
    assert_eq!(reset.result["status"], "running");
    // PVE refuses synchronously to template a running VM.
    run.task("template of running vm").failed().msg_is(
        "conversion of VM 301 to template failed with exception: 500 Internal Server Error: you can't convert a VM to template if VM is running",
    );
    // 1.6 defect: the force path calls a method that does not exist.
    run.task("template of running vm with force (1.6 defect)").failed().msg_is(
        "conversion of VM 301 to template failed with exception: 'ProxmoxKvmAnsible' object has no attribute 'stop_instance'",
    );
    run.task("absent running with force")
        .ok()
        .changed(true)
        .msg_is("VM 301 removed");

    // 1.6 defect: a failed task is only noticed as a timeout, reported with the task log's
    // first line — which for a start refused in the task is PVE's TASK ERROR line.
    run.task("start template fails as timeout (1.6 defect)").failed().msg_is(
        "Reached timeout while waiting for starting VM. Last line in task before timeout: [{'n': 1, 't': \"TASK ERROR: you can't start a vm if it's a template\"}]",
    );

    let denied = run.task("create with audit-only token").failed();
    assert!(
        denied.msg().starts_with(
            "creation of qemu VM ro-vm with vmid 303 failed with exception=403 Forbidden: Permission check failed"
        ),
        "{}",
        denied.result
    );

    // Ticket auth: writes carry the CSRF token; `args` is root-only.
    run.task("create as root with password and args")
        .ok()
        .changed(true)
        .msg_is("VM by-root with vmid 310 deployed");
    assert_eq!(run.task("root config").ok().config()["args"], "-no-reboot");
    run.task("absent as root with password")
        .ok()
        .changed(true)
        .msg_is("VM 310 removed");

    // 1.6 defect: reading the MAC back needs a ',' after it; PVE stores a NIC without
    // options as just "virtio=<MAC>", so a successful create is reported as failed.
    run.task("create with a bare nic (1.6 defect)").failed().msg_is(
        "creation of qemu VM bare-nic with vmid 320 failed with exception='NoneType' object has no attribute 'group'",
    );

    let listing = run.task("listing at the end").ok();
    assert_eq!(
        listing.vmids(),
        vec![100, 302, 320, 9000],
        "the bare-nic VM exists nonetheless"
    );
    let converted = listing.result["proxmox_vms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["vmid"] == 302)
        .unwrap();
    assert_eq!(
        converted["template"], true,
        "the node listing shows the new template at once: {converted}"
    );
}
