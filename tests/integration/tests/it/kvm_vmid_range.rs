//! `vmid_range`: a new VM's vmid derived from its name (FNV-1a of the name into the
//! range, then upward, wrapping), and what happens when the derived id is taken: by a
//! VM of this name that another run just created (converge onto it), by a VM of
//! another name (the next id), or every id (fail naming the range). The cluster listing
//! lags long enough here that the VM made through the API is listed without its name,
//! as a VM created by a racing run moments ago is.
//!
//! The vmids below are the rule's for these names in [5000, 5999]; they are pinned, as
//! a rerun of a play relies on them (see the unit tests in proxmox_kvm's vmid_range.rs).

use ferrox_integration::{Env, PlayOpts};
use serde_json::json;

fn lagging_cluster() -> Env {
    Env::start_with(pvesim::SimConfig {
        resources_lag_ms: 8_000,
        ..Default::default()
    })
}

fn task(name: &str, range: &str, extra: &str) -> String {
    format!(
        "- name: t\n  ferrox.proxmox.proxmox_kvm:\n    node: pve1\n    name: {name}\n    vmid_range: {range}\n    memory: 1024\n    net:\n      net0: virtio,bridge=vmbr0\n{extra}"
    )
}

/// The vmids of QEMU VMs named `name` on pve1 (the node's listing reads the configs).
fn named(env: &Env, name: &str) -> Vec<u64> {
    env.api_get("/nodes/pve1/qemu")
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["name"] == json!(name))
        .map(|g| g["vmid"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_vm_of_this_name_just_created_under_the_derived_vmid_is_converged_onto() {
    let env = lagging_cluster();
    // Another run's create of the same name, moments ago: listed, but not yet by name.
    env.run_task(
        "POST",
        "/nodes/pve1/qemu",
        &[
            ("vmid", "5716"),
            ("name", "raced"),
            ("memory", "1024"),
            ("net0", "virtio,bridge=vmbr0"),
        ],
    );
    let play = env.run(&task("raced", "[5000, 5999]", ""));
    play.assert_ok();
    let t = play.task("t");
    assert!(!t.changed, "the VM was as the task asks: {}", t.result);
    assert_eq!(t.result["vmid"], json!(5716));
    assert_eq!(named(&env, "raced"), vec![5716], "no second VM");

    // Converging onto it changes what differs, and only that.
    let play = env
        .run(&task("raced", "[5000, 5999]", "    memory: 2048\n    update: true\n").replace("    memory: 1024\n", ""));
    play.assert_ok();
    let t = play.task("t");
    assert!(t.changed, "{}", t.result);
    assert_eq!(t.result["changes"], json!(["memory"]));
    assert_eq!(env.api_get("/nodes/pve1/qemu/5716/config")["memory"], json!("2048"));
    assert_eq!(named(&env, "raced"), vec![5716]);
}

#[test]
fn an_id_held_by_another_name_is_skipped_and_a_full_range_fails_naming_it() {
    let env = lagging_cluster();
    env.run_task(
        "POST",
        "/nodes/pve1/qemu",
        &[("vmid", "5864"), ("name", "someone-else")],
    );
    let play = env.run(&task("taken", "[5000, 5999]", ""));
    play.assert_ok();
    assert!(play.task("t").changed);
    assert_eq!(play.task("t").result["vmid"], json!(5865), "the next id upward");
    assert_eq!(named(&env, "taken"), vec![5865]);

    let full = env.run(&task("crowded", "[5864, 5865]", ""));
    let t = full.task("t");
    assert!(t.failed);
    assert!(
        t.msg().contains("no free vmid left in vmid_range [5864, 5865]"),
        "{}",
        t.msg()
    );
    assert!(named(&env, "crowded").is_empty());
}

#[test]
fn a_clone_without_newid_converges_onto_the_clone_another_run_just_made() {
    let env = lagging_cluster();
    env.run_task(
        "POST",
        "/nodes/pve1/qemu/9000/clone",
        &[("newid", "5020"), ("name", "c-raced"), ("full", "1")],
    );
    let play = env.run("- name: t\n  ferrox.proxmox.proxmox_kvm:\n    clone: base-debian13\n    name: c-raced\n    vmid_range: [5000, 5999]\n");
    play.assert_ok();
    let t = play.task("t");
    assert!(!t.changed, "{}", t.result);
    assert_eq!(t.result["vmid"], json!(5020));
    assert_eq!(named(&env, "c-raced"), vec![5020]);
}

#[test]
fn check_mode_predicts_the_derived_vmid_and_respects_the_runs_plan() {
    let env = Env::start();
    let check = PlayOpts {
        check: true,
        ..Default::default()
    };
    let dry = env.run_with(&task("predicted", "[5000, 5999]", ""), &check);
    dry.assert_ok();
    assert_eq!(dry.task("t").result["vmid"], json!(5923));
    let real = env.run(&task("predicted", "[5000, 5999]", ""));
    real.assert_ok();
    assert_eq!(
        real.task("t").result["vmid"],
        json!(5923),
        "the real run takes the predicted id"
    );

    // Within one check-mode run, the id planned for one name is taken for the next.
    let two = format!(
        "{}{}",
        task("p1", "[6000, 6000]", ""),
        task("p2", "[6000, 6000]", "").replace("- name: t\n", "- name: t2\n")
    );
    let dry = env.run_with(&two, &check);
    assert_eq!(dry.task("t").result["vmid"], json!(6000));
    assert!(dry.task("t2").failed);
    assert!(
        dry.task("t2")
            .msg()
            .contains("no free vmid left in vmid_range [6000, 6000]"),
        "{}",
        dry.task("t2").msg()
    );
}
