//! One plan per `ansible-playbook --check` run: every check-mode task plans against the
//! cluster as the earlier tasks would leave it, writes nothing, and says what the real
//! run then does, task by task.

use crate::kvm_support::run_playbook;
#[allow(dead_code)] // each test file uses part of it
use ferrox_integration::{repo_root, Env, Play, PlayOpts, TaskOutcome};
use serde_json::{json, Value};

/// The usual build flow: look up, create, disk, NIC, start, look again.
const BUILD: &str = r#"
- name: look up
  ferrox.proxmox.proxmox_vm_info: {name: web1, type: qemu}
  register: existing
- name: create
  ferrox.proxmox.proxmox_kvm: {node: pve1, name: web1, cores: 2, memory: 2048, scsihw: virtio-scsi-single, ostype: l26}
  register: created
  when: existing.proxmox_vms | length == 0
- name: vmid
  ansible.builtin.set_fact:
    vmid: "{{ created.vmid if created is not skipped else existing.proxmox_vms[0].vmid }}"
- name: disk
  ferrox.proxmox.proxmox_disk: {vmid: "{{ vmid }}", disk: scsi0, storage: local-lvm, size: 16, discard: "on", state: present}
  register: disk
- name: nic
  ferrox.proxmox.proxmox_nic: {vmid: "{{ vmid }}", interface: net0, bridge: vmbr0, tag: 10}
  register: nic
- name: start
  ferrox.proxmox.proxmox_kvm: {vmid: "{{ vmid }}", state: started}
- name: look again
  ferrox.proxmox.proxmox_vm_info: {name: web1, type: qemu, config: current}
  register: after
"#;

/// A simulator with no guests at all.
fn empty_cluster() -> Env {
    let mut cfg = pvesim::SimConfig::default();
    cfg.scenario.guests.clear();
    Env::start_with(cfg)
}

fn check_diff() -> PlayOpts {
    PlayOpts {
        check: true,
        diff: true,
        ..Default::default()
    }
}

/// The config keys a task's diff changes.
fn diff_keys(t: &TaskOutcome) -> Vec<String> {
    let mut keys: Vec<String> = ["before", "after"]
        .iter()
        .flat_map(|side| {
            t.result["diff"][side]
                .as_object()
                .map(|m| m.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default()
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Every module task of `real` reports what `dry` said it would: changed, and the same
/// keys in the diff (values PVE decides differ, the keys do not).
fn assert_same_story(dry: &Play, real: &Play) {
    let module_tasks: Vec<&TaskOutcome> = dry
        .results
        .iter()
        .filter(|t| t.result.get("invocation").is_some())
        .collect();
    assert!(!module_tasks.is_empty());
    for d in module_tasks {
        let r = real.task(&d.name);
        assert_eq!(
            d.changed,
            r.changed,
            "task {:?}: check said changed={}, the real run {}\n{}",
            d.name,
            d.changed,
            r.changed,
            real.transcript()
        );
        assert_eq!(
            diff_keys(d),
            diff_keys(r),
            "task {:?}: the diff keys differ\ncheck: {}\nreal: {}",
            d.name,
            d.result["diff"],
            r.result["diff"]
        );
    }
}

#[test]
fn a_build_flow_checks_through_every_task_then_runs_the_same() {
    let env = empty_cluster();
    env.clear_requests();
    let dry = env.play_with(BUILD, &check_diff());
    dry.assert_ok();
    assert!(dry.results.iter().all(|t| !t.failed), "{}", dry.transcript());
    assert_eq!(env.write_counts(), Vec::<String>::new(), "a check run writes nothing");

    let created = dry.task("create");
    assert!(created.changed);
    let vmid = created.result["vmid"].as_u64().unwrap();
    assert_eq!(created.result["mac"], json!({}), "the bare VM has no NIC yet");
    let disk = dry.task("disk");
    assert_eq!(disk.msg(), format!("Disk scsi0 created in VM {vmid}"));
    assert_eq!(disk.result["volume"], Value::Null);
    assert_eq!(disk.result["known_after_apply"], json!(["volume"]));
    assert_eq!(disk.result["size"], json!("16G"));
    assert_eq!(
        disk.result["diff"]["after"]["scsi0"],
        json!("local-lvm:(known after apply),discard=on,size=16G")
    );
    let nic = dry.task("nic");
    assert!(nic.changed);
    assert_eq!(nic.result["mac"], Value::Null);
    assert_eq!(nic.result["known_after_apply"], json!(["mac"]));
    assert_eq!(
        nic.result["diff"]["after"]["net0"],
        json!("virtio=(known after apply),bridge=vmbr0,tag=10")
    );
    assert!(dry.task("start").changed);
    let listed = &dry.task("look again").result["proxmox_vms"];
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["planned"], json!(true));
    assert_eq!(listed[0]["vmid"], json!(vmid));
    assert_eq!(listed[0]["status"], json!("running"));
    assert_eq!(
        listed[0]["config"]["net0"],
        json!("virtio=(known after apply),bridge=vmbr0,tag=10")
    );

    let real = env.play_with(
        BUILD,
        &PlayOpts {
            diff: true,
            ..Default::default()
        },
    );
    real.assert_ok();
    assert_same_story(&dry, &real);
    assert_eq!(
        real.task("create").result["vmid"].as_u64(),
        Some(vmid),
        "the predicted vmid is the one PVE gave"
    );
    assert!(real.task("look again").result["proxmox_vms"][0]
        .get("planned")
        .is_none());

    env.clear_requests();
    let again = env.play_with(BUILD, &check_diff());
    again.assert_ok();
    assert_eq!(again.recap("changed"), Some(0), "{}", again.transcript());
    assert_eq!(env.write_counts(), Vec::<String>::new());
}

#[test]
fn the_plan_summary_ends_a_check_run() {
    let env = empty_cluster();
    let opts = PlayOpts {
        env: vec![(
            "ANSIBLE_CALLBACKS_ENABLED".into(),
            "ferrox_results,ferrox.proxmox.plan".into(),
        )],
        ..check_diff()
    };
    let dry = env.play_with(BUILD, &opts);
    dry.assert_ok();
    let vmid = dry.task("create").result["vmid"].as_u64().unwrap();
    let summary = dry
        .stdout
        .split("FERROX PLAN")
        .nth(1)
        .unwrap_or_else(|| panic!("no plan summary\n{}", dry.stdout));
    assert!(
        summary.contains(&format!(
            "  + VM {vmid} web1 on pve1: create (cores, memory, name, ostype, scsihw); then scsi0, net0; start"
        )),
        "{summary}"
    );
    assert!(
        summary.contains("Plan: 1 to create, 0 to change, 0 to destroy."),
        "{summary}"
    );
    let real = env.play_with(
        BUILD,
        &PlayOpts {
            env: opts.env.clone(),
            ..Default::default()
        },
    );
    assert!(!real.stdout.contains("FERROX PLAN"), "no summary without --check");
}

#[test]
fn the_field_playbooks_check_on_an_empty_cluster_as_they_then_run() {
    let env = empty_cluster();
    let books = repo_root().join("playbooks");
    let inventory = books.join("inventory.yml");
    // create.yml and start.yml in one ansible-playbook run: one plan for both.
    let start = books.join("start.yml").display().to_string();
    env.clear_requests();
    let dry = run_playbook(
        &env,
        &books.join("create.yml"),
        &inventory,
        &[start.as_str(), "--check", "--diff"],
    );
    assert_eq!(dry.rc, 0, "{}", dry.stdout);
    assert!(dry.results.iter().all(|r| r["outcome"] != "failed"), "{}", dry.stdout);
    assert_eq!(env.write_counts(), Vec::<String>::new(), "a check run writes nothing");
    let macs = dry.task("Print the MAC");
    assert_eq!(macs.len(), 3);
    assert!(
        macs.iter().all(|r| r["result"]["msg"]
            .as_str()
            .unwrap()
            .ends_with("net0 (known after apply)")),
        "{}",
        dry.stdout
    );

    let real = run_playbook(&env, &books.join("create.yml"), &inventory, &[start.as_str(), "--diff"]);
    assert_eq!(real.rc, 0, "{}", real.stdout);
    let key = |r: &Value| format!("{} {}", r["name"], r["host"]);
    let modules: Vec<&Value> = dry
        .results
        .iter()
        .filter(|r| r["result"].get("invocation").is_some())
        .collect();
    assert_eq!(
        modules.len(),
        3 * 6,
        "vm_info, create, disk, nic, boot order, start for each host"
    );
    for d in modules {
        let r = real
            .results
            .iter()
            .find(|r| key(r) == key(d))
            .unwrap_or_else(|| panic!("no real result for {}", key(d)));
        assert_eq!(d["changed"], r["changed"], "{}: check vs real\n{}", key(d), real.stdout);
        let keys = |v: &Value| {
            let mut k: Vec<String> = ["before", "after"]
                .iter()
                .flat_map(|s| {
                    v["result"]["diff"][s]
                        .as_object()
                        .map(|m| m.keys().cloned().collect::<Vec<_>>())
                        .unwrap_or_default()
                })
                .collect();
            k.sort();
            k.dedup();
            k
        };
        assert_eq!(keys(d), keys(r), "{}: diff keys", key(d));
    }
    // The real run done, a check run has nothing left to do.
    let again = run_playbook(
        &env,
        &books.join("create.yml"),
        &inventory,
        &[start.as_str(), "--check"],
    );
    assert_eq!(again.rc, 0, "{}", again.stdout);
    assert_eq!(again.recap("changed"), 0, "{}", again.stdout);
}

#[test]
fn twenty_hosts_in_check_mode_predict_twenty_distinct_vmids() {
    let env = empty_cluster();
    let hosts: String = (1..=20).map(|i| format!("        plan{i:02}:\n")).collect();
    let inventory = env.dir().join("plan-inventory.yml");
    std::fs::write(
        &inventory,
        format!("all:\n  children:\n    fleet:\n      hosts:\n{hosts}"),
    )
    .unwrap();
    let book = env.dir().join("plan-parallel.yml");
    std::fs::write(
        &book,
        "- hosts: fleet\n  gather_facts: false\n  tasks:\n    - name: create\n      ferrox.proxmox.proxmox_kvm:\n        node: pve1\n        name: \"{{ inventory_hostname }}\"\n        memory: 512\n      delegate_to: localhost\n",
    )
    .unwrap();
    env.clear_requests();
    let run = run_playbook(&env, &book, &inventory, &["--check", "--forks", "20"]);
    assert_eq!(run.rc, 0, "{}", run.stdout);
    let created = run.task("create");
    assert_eq!(created.len(), 20);
    let mut ids: Vec<u64> = created.iter().map(|r| r["result"]["vmid"].as_u64().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 20, "20 distinct predictions: {ids:?}");
    assert_eq!(ids, (100..120).collect::<Vec<u64>>());
    assert_eq!(env.write_counts(), Vec::<String>::new());
}

#[test]
fn the_plan_summary_names_changes_and_removals() {
    let env = Env::start();
    let opts = PlayOpts {
        env: vec![(
            "ANSIBLE_CALLBACKS_ENABLED".into(),
            "ferrox_results,ferrox.proxmox.plan".into(),
        )],
        check: true,
        ..Default::default()
    };
    let dry = env.play_with(
        r#"
        - name: more memory
          ferrox.proxmox.proxmox_kvm: {name: web01, update: true, memory: 4096}
        - name: another NIC
          ferrox.proxmox.proxmox_nic: {vmid: 100, interface: net1, bridge: vmbr1}
        - name: no more template
          ferrox.proxmox.proxmox_kvm: {name: base-debian13, state: absent}
        - name: the template is gone for the rest of the run
          ferrox.proxmox.proxmox_vm_info: {vmid: 9000}
          register: gone
        "#,
        &opts,
    );
    dry.assert_ok();
    assert_eq!(
        dry.task("the template is gone for the rest of the run").result["proxmox_vms"],
        json!([])
    );
    let summary = dry
        .stdout
        .split("FERROX PLAN")
        .nth(1)
        .unwrap_or_else(|| panic!("no plan summary\n{}", dry.stdout));
    assert!(
        summary.contains("  ~ VM 100 web01 on pve1: memory, net1\n"),
        "{summary}"
    );
    assert!(
        summary.contains("  - VM 9000 base-debian13 on pve1: destroy\n"),
        "{summary}"
    );
    assert!(
        summary.contains("Plan: 0 to create, 1 to change, 1 to destroy."),
        "{summary}"
    );
    assert_eq!(
        env.api_get("/nodes/pve1/qemu/100/config")["memory"],
        json!("2048"),
        "nothing written"
    );
}
