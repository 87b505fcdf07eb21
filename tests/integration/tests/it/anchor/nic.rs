//! proxmox_nic (tests/anchor/nic.yml) on VM 100: its byte-for-byte comparison with PVE's
//! canonical net string (model=MAC first, other keys sorted) makes add / unchanged /
//! update / delete a sharp test of how the simulator stores `netN`.

use super::support::Anchor;

#[test]
fn proxmox_nic_lifecycle() {
    let anchor = Anchor::start();
    let run = anchor.run("nic.yml");

    // The scenario's net0 is stored canonically, so the module's rebuilt string matches.
    run.task("existing nic unchanged")
        .ok()
        .changed(false)
        .msg_is("Nic net0 unchanged on VM with vmid 100");

    let add = run
        .task("add")
        .ok()
        .changed(true)
        .msg_is("Nic net1 updated on VM with vmid 100");
    assert_eq!(add.result["vmid"], 100);
    // Unchanged results carry no `changed` key at all.
    let again = run
        .task("add again")
        .ok()
        .changed(false)
        .msg_is("Nic net1 unchanged on VM with vmid 100");
    assert!(again.result.get("vmid").is_some(), "{}", again.result);
    let added = run.task("config after add").ok().config()["net1"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mac = added
        .strip_prefix("virtio=")
        .and_then(|rest| rest.strip_suffix(",bridge=vmbr1"))
        .unwrap_or_else(|| panic!("net1 stored as virtio=<MAC>,bridge=vmbr1, got {added:?}"));
    assert!(mac.starts_with("BC:24:11:") && mac.len() == 17, "generated MAC {mac}");

    run.task("update")
        .ok()
        .changed(true)
        .msg_is("Nic net1 updated on VM with vmid 100");
    run.task("update again")
        .ok()
        .changed(false)
        .msg_is("Nic net1 unchanged on VM with vmid 100");
    run.task("explicit mac and model")
        .ok()
        .changed(true)
        .msg_is("Nic net2 updated on VM with vmid 100");
    run.task("explicit mac and model again")
        .ok()
        .changed(false)
        .msg_is("Nic net2 unchanged on VM with vmid 100");
    // Check mode is supported: the predicted change, nothing written.
    run.task("check mode add")
        .ok()
        .changed(true)
        .msg_is("Nic net3 updated on VM with vmid 100");

    let config = run.task("config after updates").ok().config().clone();
    assert_eq!(
        config["net1"],
        format!("virtio={mac},bridge=vmbr1,mtu=1,tag=10,trunks=20;30"),
        "MAC kept: {config}"
    );
    assert_eq!(config["net2"], "e1000=BC:24:11:AB:CD:EF,bridge=vmbr0,rate=12.5");
    assert!(config.get("net3").is_none(), "check mode wrote net3: {config}");

    run.task("delete")
        .ok()
        .changed(true)
        .msg_is("Nic net1 deleted on VM with vmid 100");
    run.task("delete again")
        .ok()
        .changed(false)
        .msg_is("Nic net1 does not exist on VM with vmid 100");
    run.task("missing vm")
        .failed()
        .msg_is("VM with vmid 4242 does not exist in cluster");

    // 1.6 defect: options the task does not mention are dropped from the NIC.
    run.task("tag net0 without repeating firewall (1.6 defect)")
        .ok()
        .changed(true)
        .msg_is("Nic net0 updated on VM with vmid 100");

    let config = run.task("config after delete").ok().config().clone();
    assert!(config.get("net1").is_none(), "{config}");
    assert_eq!(
        config["net0"], "virtio=BC:24:11:10:00:01,bridge=vmbr0,tag=5",
        "firewall=1 is gone, the MAC kept"
    );
}
