//! The README's rehearsal workflow: `pvesim import` of a cluster, then a playbook whose
//! tasks depend on earlier ones (and on what the cluster already holds) run for real
//! against the twin, leaving the cluster itself untouched.

use ferrox_integration::Env;
use pvesim::import::http::{Reader, Trust};
use serde_json::json;

const READONLY_SECRET: &str = "0a6b2d4c-3e8f-4a1b-9c7d-5e2f1a0b3c4d";

#[test]
fn a_playbook_rehearsed_on_an_imported_twin_runs_there_and_leaves_the_cluster_alone() {
    // "The cluster": the default scenario plus a VM made through the API.
    let cluster = Env::start();
    cluster.run_task(
        "POST",
        "/nodes/pve2/qemu",
        &[
            ("vmid", "150"),
            ("name", "db01"),
            ("memory", "1024"),
            ("scsi0", "vmdata:2"),
        ],
    );
    let guests = || -> Vec<u64> {
        cluster
            .api_get("/cluster/resources?type=vm")
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["vmid"].as_u64().unwrap())
            .collect()
    };
    let before = guests();

    let reader = Reader::new(
        &format!("https://127.0.0.1:{}", cluster.sim().port()),
        "ansible@pve!readonly",
        READONLY_SECRET,
        Trust::Fingerprint(cluster.sim().fingerprint()),
    )
    .unwrap();
    let scenario = pvesim::import::import(&reader, None).unwrap();
    let twin = Env::start_with(pvesim::SimConfig {
        scenario,
        ..pvesim::SimConfig::default()
    });

    // Each task needs what the cluster has (the template, db01, storages, bridges) or
    // what an earlier task made.
    let play = twin.play(
        r#"
- name: clone
  ferrox.proxmox.proxmox_kvm: {clone: base-debian13, name: app01, full: true, storage: local-lvm, memory: 2048}
  register: app
- name: disk
  ferrox.proxmox.proxmox_disk: {vmid: "{{ app.vmid }}", disk: scsi1, storage: nvme-pool, size: 8, state: present}
- name: nic
  ferrox.proxmox.proxmox_nic: {vmid: "{{ app.vmid }}", interface: net1, bridge: vmbr1, tag: 30}
- name: db
  ferrox.proxmox.proxmox_vm_info: {name: db01, config: current}
- name: start
  ferrox.proxmox.proxmox_kvm: {vmid: "{{ app.vmid }}", state: started}
"#,
    );
    play.assert_ok();
    assert!(
        play.task("clone").changed
            && play.task("disk").changed
            && play.task("nic").changed
            && play.task("start").changed
    );
    let db = &play.task("db").result["proxmox_vms"][0];
    assert_eq!(
        (db["vmid"].clone(), db["node"].clone()),
        (json!(150), json!("pve2")),
        "the twin holds the cluster's VM"
    );
    assert!(
        db["config"]["scsi0"]
            .as_str()
            .unwrap()
            .starts_with("vmdata:150/vm-150-disk-0"),
        "{db}"
    );
    let app = play.task("clone").result["vmid"].as_u64().unwrap();
    let status = twin.api_get(&format!("/nodes/pve1/qemu/{app}/status/current"));
    assert_eq!(status["status"], "running");

    assert_eq!(guests(), before, "the cluster was only read");
    assert_eq!(before, [100, 150, 200, 9000]);
}
