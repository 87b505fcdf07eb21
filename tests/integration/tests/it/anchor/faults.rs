//! community.proxmox 1.6.0 under simulator faults (tests/anchor/faults.yml): how the
//! simulator's task exitstatus, task log, agent errors and slowness look to a real client.

use super::support::Anchor;

#[test]
fn community_proxmox_under_faults() {
    let anchor = Anchor::start();
    let run = anchor.run("faults.yml");

    // 1.6 defect: proxmox_disk accepts only exitstatus OK, so WARNINGS fail the task
    // although PVE created the disk (the next run finds it up to date).
    run.task("disk create ending with warnings (1.6 defect)")
        .failed()
        .msg_is("Error occurred on task execution: WARNINGS: 1");
    run.task("disk after warnings")
        .ok()
        .changed(false)
        .msg_is("Disk scsi1 is up to date in VM 100");

    // 1.6 defect: a failed create task is only seen as a timeout, with the log's first line.
    // PVE prefixes a failed create with "unable to create VM <id> - ".
    run.task("create whose task fails (1.6 defect)").failed().msg_is(
        "Reached timeout while waiting for creating VM. Last line in task before timeout: [{'n': 1, 't': 'TASK ERROR: unable to create VM 120 - simulated storage failure'}]",
    );
    // PVE removes the config of a failed create, so the same vmid can be created again.
    run.task("create after the failure")
        .ok()
        .changed(true)
        .msg_is("VM failing with vmid 120 deployed");

    let mac = run.task("create with agent").ok().result["mac"]["net0"]
        .as_str()
        .unwrap_or_default()
        .to_lowercase();
    // proxmox_kvm, unlike proxmox_disk, counts WARNINGS as success.
    run.task("start with agent").ok().changed(true).msg_is("VM 121 started");
    let network = run
        .results
        .iter()
        .rev()
        .find(|t| t.name == "network through the agent")
        .expect("network task ran")
        .ok();
    let ifaces = network.result["proxmox_vms"][0]["network"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(ifaces.iter().any(|i| i["name"] == "lo"), "{}", network.result);
    assert!(
        ifaces.iter().any(|i| i["hardware-address"] == mac.as_str()),
        "the guest reports its NIC's MAC ({mac}, lower case): {}",
        network.result
    );
    run.task("network with the agent down (1.6 defect)")
        .failed()
        .msg_is("Failed to retrieve QEMU VMs information: 500 Internal Server Error: QEMU guest agent is not running");

    // A clone outliving `timeout`: 1.6 quotes the first line of the running task's log,
    // which PVE writes as the copy of the first drive (sorted keys: the cloud-init ide2).
    run.task("clone slower than timeout").failed().msg_is(
        "Reached timeout while waiting for creating VM. Last line in task before timeout: [{'n': 1, 't': 'create full clone of drive ide2 (vmdata:9000/vm-9000-cloudinit.qcow2)'}]",
    );

    run.task("move slower than timeout").failed().msg_is(
        "Reached timeout while waiting for moving VM disk. Last line in task before timeout: [{'n': 1, 't': 'create full clone of drive scsi1 (local-lvm:vm-100-disk-1)'}]",
    );

    // api_timeout bounds each HTTP call; the slow GET /nodes surfaces as requests' text.
    run.task("api_timeout exceeded").failed().msg_is(&format!(
        "Unable to retrieve Proxmox VE node: HTTPSConnectionPool(host='127.0.0.1', port={}): Read timed out. (read timeout=1)",
        anchor.sim().port()
    ));
}
